#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every job ends, exactly once (issue 17), with the real daemon, probes and cgroups:
#  1. a job whose finish never comes is reaped after reap_grace: ENDED, exact bytes, slot freed
#     (but not one whose steps finished normally: it waits for its own finish);
#  2. kill -9 (IOACCT_CRASH_AT) during register, finish and drain commits, then a restart:
#     every job reaches a final state with exact bytes, no slot leaks, its id registers again;
#  3. a full disk then freed: the job's mounts are named (no "mnt:N unknown"), bytes exact;
#  4. a REGISTER whose client hung up before the reply leaves no job behind;
#  5. the same REGISTER twice gives the same job and slot.
. "$(dirname "$0")/lib.sh"
require_root_bpf
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip "no cgroup2 file system mounted"
# Two slots: a leaked slot makes the next registrations fail.
EXTRA_CONF="reap_grace = 1
bin_width = 0.2
max_jobs = 2"
setup
DBFS=$T/dbfs
mkdir -p "$DBFS"
mount -t tmpfs -o size=8m ioacct-test "$DBFS" || skip "cannot mount a tmpfs for the full-disk case"
trap 'rc=$?; stop_daemon; umount -l "$DBFS" 2>/dev/null; (exit $rc); teardown' EXIT
sed -i "s|^db = .*|db = $DBFS/ioacct.db|" "$CONF"
DB=$DBFS/ioacct.db
SOCK=$T/ioacctd.sock
CGP=$CG2/ioacct-test-$$
mkdir -p "$CGP" || skip "cannot create a cgroup under $CG2"
D=$T/d
mkdir -p "$D"
SHM=/dev/shm/ioacct-test-$$
start_daemon

# held NAME IOWORK-ARGS...: starts iowork blocked on its first "wait", in a new
# cgroup ${HELD_IN:-$CGP}/NAME (moved there by this shell, so the move is not the
# job's I/O). Sets HELD_PID; release NAME lets it run (release NAME keep: up to
# its next "wait").
held() {
	local name=$1 cg=${HELD_IN:-$CGP}/$1
	shift
	mkdir -p "$cg"
	mkfifo "$T/ctl-$name"
	"$IOWORK" wait , "$@" < "$T/ctl-$name" > >(cat > /dev/null) &
	HELD_PID=$!
	eval "exec {fd_$name}> \"\$T/ctl-$name\""
	echo "$HELD_PID" > "$cg/cgroup.procs" || fail "cannot move $HELD_PID into $cg"
}
release() {
	local fd
	eval "fd=\$fd_$1"
	printf x >&"$fd"
	[ "${2:-}" = keep ] || eval "exec $fd>&-"
}

# register JOB NAME PID: registers step 0 of JOB on cgroup NAME; prints iopoke's reply.
register() { "$IOPOKE" "$SOCK" register "$1" 0 "$3" "$CGP/$2"; }

status_jobs() { "$IOPOKE" "$SOCK" status | sed -n 's/^jobs=\([0-9]*\) cgroups=\([0-9]*\).*/\1 \2/p'; }

# wait_jobs N: until the daemon has N running jobs (the reaper, generous timeout).
wait_jobs() {
	local got
	for _ in $(seq 1 300); do
		got=$(status_jobs)
		[ "${got%% *}" = "$1" ] && return 0
		sleep 0.1
	done
	fail "the daemon has '$got' jobs and cgroups running, not $1 jobs"
}

# check_job JOB STATE STEP_STATE BYTES WRITES: the job's last row in the store.
check_job() {
	python3 - "$DB" "$@" <<'PY' || fail "job $1 is not as expected"
import sqlite3, sys
db, job, state, step_state, nbytes, writes = sys.argv[1], int(sys.argv[2]), *sys.argv[3:5], int(sys.argv[5]), int(sys.argv[6])
c = sqlite3.connect(db, timeout=10)
visible = {int(l.split()[0]) for l in open("/proc/self/mountinfo")}
row = c.execute("SELECT key, state, exit_code, end_ns FROM jobs WHERE job_id = ? ORDER BY key DESC LIMIT 1", (job,)).fetchone()
assert row, f"job {job} not in the store"
key, got_state, exit_code, end = row
bad = []
if got_state != state: bad.append(f"state {got_state}, not {state}")
if end is None: bad.append("no end time")
if state == "ENDED" and exit_code != -1: bad.append(f"exit code {exit_code}, not -1 (unknown)")
steps = c.execute("SELECT step_id, state, end_ns FROM steps WHERE job_key = ?", (key,)).fetchall()
if [s[1] for s in steps] != [step_state]: bad.append(f"steps {steps}, not one {step_state}")
if any(s[2] is None for s in steps): bad.append("a step has no end")
b, w = c.execute("SELECT coalesce(sum(bytes),0), coalesce(sum(calls),0) FROM totals WHERE job_key = ? AND op = 1", (key,)).fetchone()
if (b, w) != (nbytes, writes): bad.append(f"{b} bytes in {w} writes, not {nbytes} in {writes}")
s = c.execute("SELECT coalesce(sum(bytes),0) FROM series WHERE job_key = ? AND op = 1", (key,)).fetchone()[0]
if s != nbytes: bad.append(f"series say {s} bytes written")
for mnt, path, fstype, op, calls in c.execute("SELECT t.mnt_id, m.path, m.fstype, t.op, t.calls FROM totals t LEFT JOIN mounts m USING (job_key, mnt_id) WHERE t.job_key = ?", (key,)):
    # A kernel-internal mount (pipefs: iowork's fstat of its stdout) has no name to give.
    if mnt not in visible:
        continue
    if path is None or path.startswith("mnt:") or fstype in (None, "unknown"):
        bad.append(f"mount {mnt} is not named: {path} {fstype} (op {op}, {calls} calls)")
n = c.execute("SELECT count(*) FROM watches WHERE job_key = ?", (key,)).fetchone()[0]
if n: bad.append(f"{n} watches left")
if bad:
    print(f"job {job}: " + "; ".join(bad))
    sys.exit(1)
PY
}

# ---- 1. a job whose finish never comes ----
held j1 write "$D/f1" 1048576 3
register 101 j1 "$HELD_PID" | grep -q '^status=0' || fail "register 101 failed"
release j1
wait "$HELD_PID" || fail "iowork of job 101 failed"
# The cgroup is empty now; nobody sends a finish. One of the two slots is taken.
wait_jobs 0
check_job 101 ENDED ENDED 3145728 3
grep -q "job local/101 step 0: its cgroups emptied and no finish came" "$T/ioacctd.log" ||
	fail "the reaper did not say why it ended job 101"
ok "1. job 101 without a finish: reaped, ENDED, exit code unknown, 3145728 bytes, slot freed"

# The same on cgroup v1, which has no "populated": a task in a cgroup below the
# step's keeps it alive (Slurm's task_<n> cgroups), until it is gone too.
V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)freezer(,|$)/ { print $2; exit }' /proc/self/mounts)
if [ -n "$V1" ]; then
	V1P=$V1/ioacct-test-$$
	HELD_IN=$V1P held j102 write "$D/f102" 1048576 2
	P102=$HELD_PID
	HELD_IN=$V1P/j102 held task_0 write "$D/g102" 4096 1
	P102T=$HELD_PID
	"$IOPOKE" "$SOCK" register 102 0 "$P102" "$V1P/j102" | grep -q '^status=0' ||
		fail "register 102 (cgroup v1) failed"
	release j102
	wait "$P102" || fail "iowork of job 102 failed"
	# Three graces: a task is left below, so the step must not end.
	sleep 3
	[ "$(status_jobs)" = "1 1" ] || fail "job 102 was reaped while a task was left in $V1P/j102/task_0"
	release task_0
	wait "$P102T" || fail "iowork of job 102's task_0 failed"
	wait_jobs 0
	# The task below is the job's too: its 4096 bytes count.
	check_job 102 ENDED ENDED 2101248 3
	ok "1. job 102 on cgroup v1: kept while a sub-cgroup had a task, then reaped, 2101248 bytes"
	rmdir "$V1P/j102/task_0" "$V1P/j102" "$V1P" 2>/dev/null
else
	echo "no cgroup v1 freezer hierarchy: the v1 reaper case is not run"
fi

# ---- 5. the same REGISTER twice ----
held j5 write "$D/f5" 65536 4
a=$(register 105 j5 "$HELD_PID") || fail "register 105 failed"
b=$(register 105 j5 "$HELD_PID") || fail "register 105 again failed"
echo "$a" | grep -q '^status=0' || fail "register 105: $a"
[ "$(echo "$a" | grep '^job=')" = "$(echo "$b" | grep '^job=')" ] ||
	fail "the same REGISTER twice gave '$a' and '$b'"
[ "$(status_jobs)" = "1 1" ] || fail "two REGISTERs of one step made '$(status_jobs)' jobs, cgroups"
release j5
wait "$HELD_PID" || fail "iowork of job 105 failed"
"$IOPOKE" "$SOCK" finish-job 105 | grep -q '^status=0' || fail "finish 105 failed"
check_job 105 COMPLETED COMPLETED 262144 4
ok "5. the same REGISTER twice: same job and slot ($(echo "$a" | grep '^job='))"

# A job whose steps all finished normally waits for its own finish (an salloc
# between two sruns): it is not ended, however long that takes.
held j6 write "$D/f6" 8192 2
register 106 j6 "$HELD_PID" | grep -q '^status=0' || fail "register 106 failed"
release j6
wait "$HELD_PID" || fail "iowork of job 106 failed"
"$IOPOKE" "$SOCK" finish-step 106 0 | grep -q '^status=0' || fail "finish-step 106 0 failed"
sleep 3 # three graces
[ "$(status_jobs)" = "1 0" ] || fail "job 106, its step finished, was not left waiting: $(status_jobs)"
"$IOPOKE" "$SOCK" finish-job 106 | grep -q '^status=0' || fail "finish 106 failed"
check_job 106 COMPLETED COMPLETED 16384 2
ok "1. job 106 with its step finished normally: waited for its finish, not reaped"

# ---- 4. a REGISTER whose client hung up ----
held j4 write "$D/f4" 4096 1
# Stopped, the daemon reads the request only after its client has closed the socket.
kill -STOP "$DAEMON_PID"
"$IOPOKE" "$SOCK" register-hangup 104 0 "$HELD_PID" "$CGP/j4" | grep -q "hung up" ||
	{ kill -CONT "$DAEMON_PID"; fail "iopoke register-hangup failed"; }
kill -CONT "$DAEMON_PID"
# Either it sees the hang-up first, or the reply fails and the registration is undone.
gone="REGISTER of job 104 step 0 ignored: its client has gone away|job local/104 step 0: its client went away before the reply; registration undone"
for _ in $(seq 1 100); do
	grep -Eq "$gone" "$T/ioacctd.log" && break
	sleep 0.1
done
grep -Eq "$gone" "$T/ioacctd.log" || fail "the hung-up REGISTER was not seen"
[ "$(status_jobs)" = "0 0" ] || fail "a REGISTER nobody waited for left '$(status_jobs)' jobs, cgroups"
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM jobs WHERE job_id = 104").fetchone()[0])' "$DB")
[ "$n" = 0 ] || fail "job 104 is in the store although its client never heard of it"
register 104 j4 "$HELD_PID" | grep -q '^status=0' || fail "job 104 cannot be registered after all"
release j4
wait "$HELD_PID" || fail "iowork of job 104 failed"
"$IOPOKE" "$SOCK" finish-job 104 | grep -q '^status=0' || fail "finish 104 failed"
check_job 104 COMPLETED COMPLETED 4096 1
ok "4. a REGISTER whose client hung up left no job; registered again, exact"

# ---- 2. kill -9 at each crash point, then a restart ----
# crash_daemon POINT: restarts the daemon so that it kills itself at POINT.
crash_daemon() {
	stop_daemon
	IOACCT_CRASH_AT=$1 start_daemon
}
# died: the daemon killed itself; a new one (no fault injection) takes over.
died() {
	for _ in $(seq 1 300); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$DAEMON_PID" 2>/dev/null && fail "ioacctd did not reach crash point $1"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	grep -q "IOACCT_CRASH_AT=$1: killing myself" "$T/ioacctd.log" || fail "no crash at $1"
	start_daemon
}
job=200
for point in register-before-commit register-after-commit; do
	job=$((job + 1))
	held "c$job" write "$D/c$job" 1048576 2
	crash_daemon "$point"
	register "$job" "c$job" "$HELD_PID" > "$T/out" && grep -q '^status=0' "$T/out" &&
		fail "register $job answered although the daemon was to die at $point"
	died "$point"
	# The plugin retries: the same REGISTER succeeds, whatever the crash left.
	register "$job" "c$job" "$HELD_PID" > "$T/out"
	grep -q '^status=0' "$T/out" || { cat "$T/out"; fail "job $job cannot register after $point"; }
	release "c$job"
	wait "$HELD_PID" || fail "iowork of job $job failed"
	"$IOPOKE" "$SOCK" finish-job "$job" | grep -q '^status=0' || fail "finish $job failed"
	check_job "$job" COMPLETED COMPLETED 2097152 2
	wait_jobs 0
	ok "2. kill -9 at $point: registered again, COMPLETED, 2097152 bytes, no slot left"
done
for point in finish-before-commit finish-after-commit; do
	job=$((job + 1))
	crash_daemon "$point"
	held "c$job" write "$D/c$job" 1048576 2
	register "$job" "c$job" "$HELD_PID" | grep -q '^status=0' || fail "register $job failed"
	release "c$job"
	wait "$HELD_PID" || fail "iowork of job $job failed"
	"$IOPOKE" "$SOCK" finish-job "$job" > "$T/out" && grep -q '^status=0' "$T/out" &&
		fail "finish $job answered although the daemon was to die at $point"
	died "$point"
	# No finish comes again: the reaper must end what the crash left.
	wait_jobs 0
	if [ "$point" = finish-before-commit ]; then
		check_job "$job" ENDED ENDED 2097152 2
	else
		check_job "$job" ENDED COMPLETED 2097152 2
	fi
	# The id can be used again.
	held "r$job" write "$D/r$job" 4096 3
	register "$job" "r$job" "$HELD_PID" | grep -q '^status=0' || fail "job $job cannot be registered again"
	release "r$job"
	wait "$HELD_PID" || fail "iowork of job $job (again) failed"
	"$IOPOKE" "$SOCK" finish-job "$job" | grep -q '^status=0' || fail "finish $job (again) failed"
	check_job "$job" COMPLETED COMPLETED 12288 3
	ok "2. kill -9 at $point: ended by the new daemon, 2097152 bytes; the id registers again"
done
for point in drain-before-commit drain-after-commit; do
	job=$((job + 1))
	crash_daemon "$point"
	# Its task waits in the cgroup until the finish is sent: an empty cgroup would be
	# reaped reap_grace after the new daemon starts, before the finish on a loaded machine.
	held "c$job" write "$D/c$job" 1048576 2 , wait
	register "$job" "c$job" "$HELD_PID" | grep -q '^status=0' || fail "register $job failed"
	release "c$job" keep
	# The first drain of its closed bins kills the daemon.
	died "$point"
	"$IOPOKE" "$SOCK" finish-job "$job" | grep -q '^status=0' || fail "finish $job failed"
	release "c$job"
	wait "$HELD_PID" || fail "iowork of job $job failed"
	check_job "$job" COMPLETED COMPLETED 2097152 2
	ok "2. kill -9 at $point: COMPLETED, 2097152 bytes (stored once)"
done
wait_jobs 0
[ "$(status_jobs)" = "0 0" ] || fail "slots or cgroups left: $(status_jobs)"
ok "2. after every crash point: no job, cgroup or slot left"

# ---- 3. a full disk, then freed ----
held j3 write "$D/f3" 1048576 4 , pwrite "$SHM" 4096 10 , stat "$SHM" 3 , wait
register 103 j3 "$HELD_PID" | grep -q '^status=0' || fail "register 103 failed"
# Fill the store's file system: the drains of what the job does next cannot commit.
dd if=/dev/zero of="$DBFS/fill" bs=64k 2>/dev/null
release j3 keep
fails=$(grep -c "drain: .*the counters stay in the kernel" "$T/ioacctd.log")
for _ in $(seq 1 300); do
	[ "$(grep -c "drain: .*the counters stay in the kernel" "$T/ioacctd.log")" -gt "$((fails + 1))" ] && break
	sleep 0.1
done
[ "$(grep -c "drain: .*the counters stay in the kernel" "$T/ioacctd.log")" -gt "$((fails + 1))" ] ||
	fail "the drains did not fail on a full disk"
rm -f "$DBFS/fill"
ok "3. drains failed while the disk was full"
# Its last wait: then it exits, and the finish stores the rest.
release j3
wait "$HELD_PID" || fail "iowork of job 103 failed"
"$IOPOKE" "$SOCK" finish-job 103 | grep -q '^status=0' || fail "finish 103 failed"
check_job 103 COMPLETED COMPLETED $((4194304 + 40960)) 14
# The visible /dev/shm's key, as the daemon keys mounts: the kernel's unique
# mount id where statx gives it (6.8+), else the 32-bit id of mountinfo.
top=$(python3 - <<'PY'
import ctypes, os
STATX_MNT_ID, STATX_MNT_ID_UNIQUE, SYS_statx, AT_FDCWD = 0x1000, 0x4000, 332, -100
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
if libc.syscall(SYS_statx, AT_FDCWD, b"/dev/shm", 0, STATX_MNT_ID | STATX_MNT_ID_UNIQUE, buf):
    raise OSError(ctypes.get_errno(), "statx /dev/shm")
mask = int.from_bytes(buf.raw[0:4], "little")
assert mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE), "statx gave no mount id"
print(int.from_bytes(buf.raw[0x90:0x98], "little"))  # stx_mnt_id
PY
) || fail "cannot read the mount id of /dev/shm"
python3 - "$DB" "$top" <<'PY' || fail "the /dev/shm mounts of job 103 are wrong"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
key = c.execute("SELECT max(key) FROM jobs WHERE job_id = 103").fetchone()[0]
rows = c.execute("SELECT mnt_id FROM mounts WHERE job_key = ? AND path = '/dev/shm'", (key,)).fetchall()
assert rows == [(int(sys.argv[2]),)], f"/dev/shm rows {rows}, not one of mount {sys.argv[2]} (the visible one)"
PY
ok "3. disk full then freed: every mount named, $((4194304 + 40960)) bytes, one /dev/shm row"
