#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ioacct top over the real daemon's running jobs: two root jobs and one of an
# unprivileged user writing at a known pace, and one root job that wrote an
# exact amount and waits. Batch output: every job listed, the totals exact,
# each rate its exact counter delta over the daemon's interval, the deltas
# within what the pace allows; with private_data = yes the user sees only
# their own job (and SNAPSHOT does not tell them others exist). Then the real
# thing in a real terminal (tmux): the screen lists the jobs, keys change the
# order, q quits, SIGTERM quits, and the terminal is as it was.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOACCT=$abs_top_builddir/tools/ioacct
[ -x "$IOACCT" ] || fail "$IOACCT not built"
command -v useradd >/dev/null || skip "useradd is needed to create an unprivileged user"
command -v runuser >/dev/null || skip "runuser is needed to run ioacct top as another user"
command -v setpriv >/dev/null || skip "setpriv is needed to register a job of another user"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip "no cgroup v2 mount for the user's job"
EXTRA_CONF="private_data = yes"
setup
CGP=$CG2/ioacct-test-$$
mkdir -p "$CGP" || skip "cannot create a cgroup under $CG2"
SOCK=$T/ioacctd.sock
U=ioacct-test
id "$U" >/dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"
UID_U=$(id -u "$U")
GID_U=$(id -g "$U")
chmod 755 "$T"
as_user() { runuser -u "$U" -- env IOACCT_CONF="$CONF" "$@"; }
start_daemon

D=$T/d
mkdir -p "$D" "$D/u"
chown "$U" "$D/u"
MIB=1048576
CHUNK_U=262144
PERIOD=0.25
# paced PATH SIZE N: N times, write SIZE bytes to PATH then sleep PERIOD.
paced() {
	local i args=()
	for ((i = 0; i < $3; i++)); do args+=(write "$1" "$2" 1 , sleep "$PERIOD" ,); done
	printf '%s\n' "${args[@]}" | head -n -1
}
PIDS=()
cleanup_jobs() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "${FD_HOLD:-}" ] && exec {FD_HOLD}>&-
	[ -n "${FD_GO3:-}" ] && exec {FD_GO3}>&-
	[ -n "${TM:-}" ] && $TM kill-server 2>/dev/null
	wait "${PIDS[@]}" 2>/dev/null
}
trap 'rc=$?; cleanup_jobs; (exit $rc); teardown' EXIT

# 7001, root: 1 MiB every 0.25 s for two minutes at most (killed at the end).
mapfile -t ARGS < <(paced "$D/a" $MIB 480)
"$IORUN" --job-id 7001 -o /dev/null -- "$IOWORK" "${ARGS[@]}" > /dev/null 2>&1 &
PIDS+=($!)
# 7002, root: exactly 5 x 64 KiB, then waits on its standard input.
mkfifo "$T/hold"
"$IORUN" --job-id 7002 -o /dev/null -- "$IOWORK" write "$D/b" 65536 5 , wait < "$T/hold" \
	> /dev/null 2>&1 &
PIDS+=($!)
# Read-write: opening never blocks, whatever became of the reader.
exec {FD_HOLD}<> "$T/hold"
# 7003, the user's: 256 KiB every 0.25 s, as the user, in a cgroup of ours; registered by
# root (effective uid 0 for the daemon) with the user's real uid, which iopoke sends.
mkfifo "$T/go3"
mkdir -p "$CGP/j7003"
setpriv --reuid="$UID_U" --regid="$GID_U" --clear-groups -- \
	"$IOWORK" wait , $(paced "$D/u/c" $CHUNK_U 480) < "$T/go3" > /dev/null 2>&1 &
P3=$!
PIDS+=($!)
# Kept open to the end: what is written waits in the pipe until iowork reads it.
exec {FD_GO3}<> "$T/go3"
# Registered once setpriv has become iowork (static: nothing read before its "wait").
for _ in $(seq 1 2400); do
	[ "$(readlink "/proc/$P3/exe")" = "$(readlink -f "$IOWORK")" ] && break
	sleep 0.05
done
[ "$(readlink "/proc/$P3/exe")" = "$(readlink -f "$IOWORK")" ] || fail "setpriv did not start iowork"
echo "$P3" > "$CGP/j7003/cgroup.procs" || fail "cannot move $P3 into $CGP/j7003"
setpriv --ruid="$UID_U" --rgid="$GID_U" --keep-groups -- "$IOPOKE" "$SOCK" register 7003 0 "$P3" \
	"$CGP/j7003" > "$T/out" || fail "iopoke register 7003: no reply"
grep -q '^status=0' "$T/out" || { cat "$T/out"; fail "register 7003 refused"; }
printf x >&"$FD_GO3"

# Until all three are running and 7002 has written its 5 x 64 KiB.
for _ in $(seq 1 600); do
	"$IOACCT" top --once -d 0.2 > "$T/top" 2> "$T/err" || { cat "$T/err"; fail "ioacct top --once failed"; }
	awk '$1 == 7002 && $10 == 327680 { f = 1 } END { exit !f }' "$T/top" &&
		grep -q '^7001 ' "$T/top" && grep -q '^7003 ' "$T/top" && break
	sleep 0.1
done
grep -q '^7001 ' "$T/top" && grep -q '^7003 ' "$T/top" || { cat "$T/top"; fail "the jobs never showed"; }
ok "ioacct top --once lists the three running jobs"

# ---- batch: totals exact, rates = delta / interval, deltas within the pace ----
"$IOACCT" top -b -n 2 -d 1.5 -s w > "$T/top" 2> "$T/err" || { cat "$T/err"; fail "ioacct top -b -n 2 failed"; }
cat "$T/top"
python3 - "$T/top" "$MIB" "$CHUNK_U" "$PERIOD" <<'PY' || fail "batch output"
import sys
text = open(sys.argv[1]).read()
mib, chunk_u, period = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
blocks = [b for b in text.split("\n\n") if b.strip()]
assert len(blocks) == 2, f"{len(blocks)} blocks, expected 2 (-n 2)"
units = {"K": 1024, "M": 1024**2, "G": 1024**3}
def val(s):
    return float(s[:-1]) * units[s[-1]] if s[-1] in units else float(s)
parsed = []
for b in blocks:
    lines = b.splitlines()
    assert lines[0].startswith("ioacct top - node "), lines[0]
    assert "3 jobs" in lines[0] and "sort write" in lines[0], lines[0]
    interval = int(lines[1].split()[1])
    assert lines[2].split()[:8] == ["JOBID", "USER", "STEPS", "READ/s", "WRITE/s", "IOPS",
                                    "IO-TIME%", "TOP-MOUNT"], lines[2]
    rows = {}
    order = []
    for l in lines[3:]:
        f = l.split()
        rows[f[0]] = f
        order.append(f[0])
    assert sorted(order) == ["7001", "7002", "7003"], order
    parsed.append((interval, rows, order))
for n, (interval, rows, order) in enumerate(parsed):
    assert 0.5e9 < interval < 30e9, interval
    # Sorted by write rate: 4 MiB/s, 1 MiB/s, nothing.
    assert order == ["7001", "7003", "7002"], order
    for job, f in rows.items():
        rbytes, wbytes, dread, dwrite, dops = map(int, f[8:13])
        # The rate shown is the exact delta over the daemon's interval (3 digits shown).
        rate = dwrite * 1e9 / interval
        shown = val(f[4])
        assert abs(shown - rate) <= max(0.006 * rate, 1), (job, f[4], rate)
        assert dread == 0 and val(f[3]) == 0, (job, "reads")
    # 7002 wrote exactly 5 x 64 KiB, then nothing.
    f = rows["7002"]
    assert f[9] == "327680" and f[11] == "0" and f[4] == "0", f
    # The paced jobs: whole writes, no more than the pace allows, and some progress.
    for job, chunk in (("7001", mib), ("7003", chunk_u)):
        f = rows[job]
        wbytes, dwrite, dops = int(f[9]), int(f[11]), int(f[12])
        assert wbytes % chunk == 0 and dwrite % chunk == 0, (job, wbytes, dwrite)
        assert dops == dwrite // chunk, (job, "one write per chunk", dops, dwrite)
        most = (int(interval / 1e9 / period) + 2) * chunk
        assert 0 < dwrite <= most, (job, dwrite, most)
        assert f[2] == "1" and f[1] in ("root", "ioacct-test"), f
    assert rows["7003"][1] == "ioacct-test" and rows["7001"][1] == "root"
# The second block's delta is exactly the difference of the two blocks' totals.
for job in ("7001", "7002", "7003"):
    a, b = parsed[0][1][job], parsed[1][1][job]
    assert int(b[9]) - int(a[9]) == int(b[11]), (job, a[9], b[9], b[11])
print("batch output checked")
PY
ok "totals exact, rates = counter delta / interval, deltas within the pace, sorted by write"

# ---- private_data = yes: the user sees their own job only ----
as_user "$IOACCT" top --once -d 0.5 > "$T/top" 2> "$T/err" || { cat "$T/err"; fail "user's ioacct top failed"; }
cat "$T/top"
awk 'NR > 3 && NF { print $1 }' "$T/top" > "$T/ids"
[ "$(cat "$T/ids")" = 7003 ] || { cat "$T/top"; fail "the user sees other jobs than 7003"; }
grep -q ', 1 jobs,' "$T/top" || fail "the user's header counts other users' jobs"
as_user "$IOPOKE" "$SOCK" snapshot 7001 iorun > "$T/out"
grep -q '^status=-2 error=job 7001 of cluster iorun is not running under ioacct' "$T/out" ||
	{ cat "$T/out"; fail "SNAPSHOT tells the user that root's job 7001 exists"; }
as_user "$IOPOKE" "$SOCK" snapshot 7003 > "$T/out"
grep -q '^status=0' "$T/out" || { cat "$T/out"; fail "the user cannot snapshot their own job"; }
ok "private_data = yes: the user sees only job 7003; SNAPSHOT hides root's jobs"

# ---- usage errors ----
for bad in "-d 0" "-d x" "-n 0" "--sort z" "extra"; do
	"$IOACCT" top $bad > "$T/out" 2>&1 && fail "ioacct top $bad accepted"
	[ $? -eq 2 ] || fail "ioacct top $bad: exit status not 2"
	grep -q "^ioacct top: .*see ioacct top --help" "$T/out" || { cat "$T/out"; fail "message for $bad"; }
done
"$IOACCT" top --once --socket "$T/nowhere.sock" > "$T/out" 2>&1 && fail "a missing socket accepted"
grep -q "cannot connect to $T/nowhere.sock.*is ioacctd running" "$T/out" || { cat "$T/out"; fail "missing socket message"; }
ok "bad options and a missing daemon: one clear line each"

# ---- a real terminal ----
command -v tmux >/dev/null || skip "tmux is needed for the terminal part (batch parts passed)"
TM="tmux -S $T/tmux.sock -f /dev/null"
# screen: the visible pane, its trailing blank lines dropped.
screen() { $TM capture-pane -p -t top | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
# wait_screen REGEX: until the pane shows a line matching it.
wait_screen() {
	for _ in $(seq 1 300); do
		screen > "$T/screen" 2>/dev/null
		grep -Eq "$1" "$T/screen" && return 0
		sleep 0.1
	done
	cat "$T/screen"
	fail "the terminal never showed /$1/"
}
# job_order: the job ids in screen order.
job_order() { screen | awk '$1 ~ /^700[0-9]$/ { printf "%s ", $1 }'; }

# An interactive shell with job control, as a user has: top runs in its own process group.
$TM new-session -d -s top -x 120 -y 30 "env -i PATH=$PATH TERM=screen PS1='$ ' bash --norc --noprofile -i" ||
	skip "tmux cannot start a session here"
$TM send-keys -t top "stty -g > $T/stty.before; IOACCT_CONF=$CONF $IOACCT top -d 0.5" Enter
wait_screen '^ioacct top - node .*3 jobs'
wait_screen '^7001 .*root'
screen
SHPID=$($TM display -p -t top '#{pane_pid}')
TOPPID=$(pgrep -P "$SHPID" -x ioacct)
[ -n "$TOPPID" ] || fail "cannot find ioacct top's pid under the shell $SHPID"
TTY=$($TM display -p -t top '#{pane_tty}')
[ "$($TM display -p -t top '#{alternate_on}')" = 1 ] || fail "top does not use the alternate screen"
for id in 7001 7002 7003; do grep -q "^$id " "$T/screen" || fail "job $id not on the screen"; done
ok "tmux: the three jobs on the screen"
$TM send-keys -t top w
wait_screen 'sort write'
for _ in $(seq 1 50); do [ "$(job_order)" = "7001 7003 7002 " ] && break; sleep 0.1; done
[ "$(job_order)" = "7001 7003 7002 " ] || { screen; fail "w: order $(job_order)"; }
$TM send-keys -t top r
wait_screen 'sort read'
for _ in $(seq 1 50); do [ "$(job_order)" = "7001 7002 7003 " ] && break; sleep 0.1; done
[ "$(job_order)" = "7001 7002 7003 " ] || { screen; fail "r: order $(job_order)"; }
ok "tmux: the jobs on screen; w sorts by write rate, r by read rate (ties by job id)"
$TM resize-window -t top -x 70 -y 12 2>/dev/null &&
	{ sleep 1; wait_screen '^ioacct top - node'; screen | awk 'length > 70 { exit 1 }' ||
	  fail "lines wider than the resized window"; ok "SIGWINCH: redrawn at 70 columns"; }
$TM resize-window -t top -x 200 -y 30 2>/dev/null
# Ctrl-Z: the shell's screen back while stopped; fg: the view again.
$TM send-keys -t top C-z
stopped() { ps -o stat= -p "$TOPPID" | grep -q '^T'; }
for _ in $(seq 1 100); do stopped && break; sleep 0.1; done
stopped || fail "Ctrl-Z did not stop top"
wait_screen 'Stopped'
[ "$($TM display -p -t top '#{alternate_on}')" = 0 ] || fail "Ctrl-Z: still on the alternate screen"
[ "$($TM display -p -t top '#{cursor_flag}')" = 1 ] || fail "Ctrl-Z: the cursor is hidden"
$TM send-keys -t top fg Enter
wait_screen '^ioacct top - node'
[ "$($TM display -p -t top '#{alternate_on}')" = 1 ] || fail "fg: the view did not come back"
ok "Ctrl-Z: the shell's screen while stopped; fg: the view back"
# The daemon going away: said on the screen, and the view carries on when it is back.
stop_daemon
wait_screen '^cannot connect to '
kill -0 "$TOPPID" || fail "top ended when the daemon stopped"
start_daemon
wait_screen '^keys: b r w i t sort, q quit$'
wait_screen '^7001 +root +1 +0 +[0-9.]+[KM] '
ok "daemon stopped and started again: top says so, then shows rates again"
$TM send-keys -t top q
for _ in $(seq 1 100); do kill -0 "$TOPPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$TOPPID" 2>/dev/null && fail "q did not end top"
# fg made top a command of its own: its status is $? now.
$TM send-keys -t top "echo TOP-EXITED \$?; stty -g > $T/stty.after" Enter
wait_screen '^TOP-EXITED 0'
screen
grep -q '^ioacct top - node' "$T/screen" && fail "the top screen is still shown after q"
[ "$($TM display -p -t top '#{alternate_on}')" = 0 ] || fail "still on the alternate screen after q"
[ "$($TM display -p -t top '#{cursor_flag}')" = 1 ] || fail "the cursor is hidden after q"
cmp -s "$T/stty.before" "$T/stty.after" || fail "terminal modes not restored after q"
$TM kill-session -t top
ok "q quits with 0; screen, cursor and terminal modes restored"

CMD="stty -g > $T/stty.before; IOACCT_CONF=$CONF $IOACCT top -d 0.5 < /dev/tty & echo \$! > $T/top.pid; wait; echo TOP-EXITED \$?; stty -g > $T/stty.after; sleep 600"
$TM new-session -d -s top -x 120 -y 30 "$CMD"
wait_screen '^7001 '
kill -TERM "$(cat "$T/top.pid")"
wait_screen '^TOP-EXITED 0'
[ "$($TM display -p -t top '#{alternate_on}')" = 0 ] || fail "still on the alternate screen after SIGTERM"
cmp -s "$T/stty.before" "$T/stty.after" || fail "terminal modes not restored after SIGTERM"
$TM kill-server
ok "SIGTERM: top ends, terminal restored"
exit 0
