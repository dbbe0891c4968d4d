#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ioacctd's rights (issue 37), the real daemon started by root as the
# packages start it:
#  1. once it serves, every process and thread of it runs as its account
#     (ioacct.conf's user), never uid 0, with exactly the kept capabilities
#     (CAP_SETUID and CAP_SETGID permitted only, with cluster_db), none of
#     the forbidden ones, at most 8, nothing inheritable or ambient, the
#     bounding set empty, no_new_privs (its workers: none at all); a job is
#     exact, while it runs too (the probes attached and pinned as the account);
#  2. a restart with a job running: the pins it made as its account are
#     taken again, the job exact across both daemons;
#  3. an upgrade: the state of a daemon that ran as root (user = root: as
#     ioacctd did before issue 37) with a job running, its directories,
#     store and pins root's; the new daemon gives them to its account and
#     the job is exact;
#  4. what a kept capability is for: without CAP_DAC_READ_SEARCH
#     (IOACCT_CAPS_DROP) the probes cannot be pinned at a job's attach;
#  5. the unit file: `systemd-analyze security --offline=true` rates it at
#     most 5.0, and the daemon runs in its sandbox (unitexec.py) with the
#     same rights, a job exact.
. "$(dirname "$0")/lib.sh"
require_root_bpf
SRC=$(cd "$(dirname "$0")/../.." && pwd)
UNIT=$abs_top_builddir/etc/systemd/ioacctd.service
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# The exporter's and the retainer's threads, /metrics' server: every kind of
# thread the daemon has. The cluster store is not there: the outbox waits.
EXTRA_CONF="metrics_listen = 127.0.0.1:$(free_port)
cluster_db = host=/nonexistent-ioacct-test dbname=none connect_timeout=1
purge_after = 12months"
setup
# The upgrade's state, in a directory of root's as /var/lib and /run are
# (a daemon running as root trusts no other), made by the daemon below it.
UP=$(mktemp -d /var/tmp/ioacct-test-up.XXXXXX)
chmod 755 "$UP"
cleanup() {
	local rc=$?
	stop_daemon
	rm -rf "$PIN-up" "$UP" 2>/dev/null
	(exit $rc)
	teardown
}
trap cleanup EXIT
U=$IOACCT_USER
UID_U=$(id -u "$U")
GID_U=$(id -g "$U")

# The capability masks expected: CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN on
# a kernel without them; CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH; CAP_SETUID and
# CAP_SETGID permitted only when setid is 1.
masks() {
	python3 - "$1" "$(cat /proc/sys/kernel/cap_last_cap)" <<'PY'
import sys
setid, last = int(sys.argv[1]), int(sys.argv[2])
eff = 1 << 19 | 1 << 2  # SYS_PTRACE, DAC_READ_SEARCH
eff |= (1 << 39 | 1 << 38) if last >= 39 else 1 << 21  # BPF, PERFMON or SYS_ADMIN
prm = eff | ((1 << 7 | 1 << 6) if setid else 0)  # SETUID, SETGID
print(f"{eff:016x} {prm:016x}")
PY
}

# check_procs PID SETID WHAT: every process of the daemon (PID and its
# children) and every thread of each, as /proc/PID/task/TID/status says.
check_procs() {
	read -r EFF PRM <<< "$(masks "$2")"
	python3 - "$UID_U" "$GID_U" "$EFF" "$PRM" "$1" <<'PY' || fail "$3: see above"
import glob, os, sys
uid, gid, eff, prm = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
# The daemon and its descendants (a report's or a spool's child).
parent = {}
for st in glob.glob("/proc/[0-9]*/stat"):
    try:
        parent[st.split("/")[2]] = open(st).read().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        pass
pids = {sys.argv[5]}
while True:
    more = {p for p, pp in parent.items() if pp in pids} - pids
    if not more:
        break
    pids |= more
forbidden = {21: "SYS_ADMIN", 16: "SYS_MODULE", 17: "SYS_RAWIO", 12: "NET_ADMIN",
             13: "NET_RAW", 22: "SYS_BOOT", 25: "SYS_TIME", 27: "MKNOD"}
with open("/proc/sys/kernel/cap_last_cap") as f:
    if int(f.read()) < 39:
        del forbidden[21]  # the kernel has no CAP_BPF: the one way to load BPF
bad, ntasks, workers = [], 0, {}
for pid in pids:
    try:
        workers[pid] = open(f"/proc/{pid}/cmdline").read().split("\0")[1:2] == ["--worker"]
    except OSError:
        pass
for pid in sorted(pids):
    for st in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            s = dict(l.split(":", 1) for l in open(st).read().splitlines() if ":" in l)
        except OSError:
            continue  # gone meanwhile (a spooling child)
        s = {k: v.split() for k, v in s.items()}
        who = f"{st.split('/')[2]}/{st.split('/')[4]} {s['Name'][0]}"
        ntasks += 1
        # Its unprivileged workers (63-privnet.sh): the account, no capability at all.
        worker = workers.get(pid, False)
        groups = s.get("Groups", [])
        if set(s["Uid"]) != {uid} or set(s["Gid"]) != {gid} or \
           groups not in ([gid], [] if worker else [gid]):
            bad.append(f"{who}: Uid {s['Uid']} Gid {s['Gid']} Groups {s.get('Groups')}")
        caps = {k: int(s[k][0], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
        want = {"CapInh": 0, "CapPrm": 0 if worker else prm, "CapEff": 0 if worker else eff,
                "CapBnd": 0, "CapAmb": 0}
        for k, v in caps.items():
            if v != want[k]:
                bad.append(f"{who}: {k} {v:016x}, not {want[k]:016x}")
            held = [n for b, n in forbidden.items() if v >> b & 1]
            if held:
                bad.append(f"{who}: {k} holds CAP_{', CAP_'.join(held)}")
            if bin(v).count("1") > 8:
                bad.append(f"{who}: {k} holds {bin(v).count('1')} capabilities")
        if s["NoNewPrivs"] != ["1"]:
            bad.append(f"{who}: NoNewPrivs {s['NoNewPrivs']}")
print("\n".join(bad) if bad else f"{len(pids)} processes, {ntasks} threads checked")
sys.exit(1 if bad else 0)
PY
}

# owned_by WHO PATH...: each path (and what is under a directory) is WHO's.
owned_by() {
	local who=$1 p others
	shift
	for p in "$@"; do
		[ -e "$p" ] || fail "$p does not exist"
		others=$(find "$p" ! -user "$who" | head -n 3)
		[ -z "$others" ] || fail "not $who's: $others"
	done
}

# held_job CONF NAME: an iorun job under CONF that writes 1 MiB ticks, held
# on $T/NAME.ctl (one byte: the next step), its output in $T/NAME.*.
held_job() {
	mkfifo "$T/$2.ctl"
	( IOACCT_CONF=$1 "$IORUN" --json -o "$T/$2.json" -- "$IOWORK" \
		tick "$T/$2.dat" 1048576 3 , wait , tick "$T/$2.dat" 1048576 4 , wait , \
		write "$T/$2.end" 1048576 5 < "$T/$2.ctl" 2> "$T/$2.err" | cat > "$T/$2.ticks"
	  echo "${PIPESTATUS[0]}" > "$T/$2.rc" ) &
	HELD_PID=$!
	exec 3> "$T/$2.ctl"
}
wait_ticks() {
	for _ in $(seq 1 2400); do
		[ "$(wc -l < "$T/$1.ticks")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "job $1 did not get to $2 writes: $(cat "$T/$1.err")"
}
# job_done NAME: the held job goes on to its end; 12 MiB in 12 writes.
job_done() {
	printf x >&3
	wait_ticks "$1" 7
	printf x >&3
	exec 3>&-
	wait "$HELD_PID"
	[ "$(cat "$T/$1.rc")" = 0 ] || fail "iorun $1 failed: $(cat "$T/$1.err")"
	local got
	got=$(json_get "$T/$1.json" 'sum(m["write_bytes"] for m in j["mounts"])')
	[ "$got" = 12582912 ] || fail "job $1 wrote 12582912 bytes, its report says $got"
	got=$(json_get "$T/$1.json" 'sum(m["writes"] for m in j["mounts"])')
	[ "$got" = 12 ] || fail "job $1 made 12 writes, its report says $got"
}

# ---- 1. the daemon's processes and threads, idle and with a job --------------
start_daemon
grep -q "running as $U (uid $UID_U, gid $GID_U)" "$T/ioacctd.log" ||
	fail "the daemon does not say it runs as $U"
check_procs "$DAEMON_PID" 1 "idle"
held_job "$CONF" a
wait_ticks a 3
owned_by "$U" "$PIN" "$T/ioacct.db" "$T/ioacct.db-wal" "$T/ioacct.db-shm"
find "$PIN" -name 'link_*' | grep -q . || fail "no link pinned while a job runs"
check_procs "$DAEMON_PID" 1 "a job running"
ok "every process and thread of ioacctd: uid $UID_U ($U), the kept capabilities only, idle and with a job"

# ---- 2. a restart with the job running ----------------------------------------
stop_daemon
find "$PIN" -name 'link_*' | grep -q . || fail "the links are gone with a job running"
start_daemon
grep -q "restored" "$T/ioacctd.log" || fail "the new daemon did not restore the job"
check_procs "$DAEMON_PID" 1 "after a restart"
job_done a
stop_daemon
[ ! -e "$T/ioacctd.sock" ] && [ ! -e "$T/ioacctd.pid" ] ||
	fail "the stopped daemon left its socket or pidfile in its directory"
ok "a restart with a job running: 12 MiB in 12 writes exact; socket and pidfile removed at stop"

# ---- 3. the upgrade: a daemon of root's state, a job running -------------------
# A layout as the packages': store and socket in directories of their own,
# made by the daemon. user = root: the daemon keeps root's rights, as ioacctd
# did before issue 37, and leaves everything root's.
sed -e "s|^socket = .*|socket = $UP/run/ioacctd.sock|" -e "s|^pidfile = .*|pidfile = $UP/run/ioacctd.pid|" \
	-e "s|^db = .*|db = $UP/lib/ioacct.db|" -e "s|^bpf_pin_dir = .*|bpf_pin_dir = $PIN-up|" \
	-e '/^cluster_db/d' "$CONF" > "$T/up.conf"
{ cat "$T/up.conf"; echo "user = root"; } > "$T/up-root.conf"
# start_up CONF: a daemon on $UP's socket, as start_daemon starts one on $T's.
start_up() {
	"${DAEMON_PREFIX[@]}" "$IOACCTD" -f -c "$1" -v >> "$T/ioacctd.log" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 2400); do
		"$IOPOKE" "$UP/run/ioacctd.sock" status 2>/dev/null | grep -q '^status=0' && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID"; fail "ioacctd -c $1 exited at start"; }
		sleep 0.05
	done
	fail "ioacctd -c $1 did not answer in 120 s"
}
start_up "$T/up-root.conf"
[ "$(awk '/^Uid:/ { print $2 }' "/proc/$DAEMON_PID/status")" = 0 ] || fail "user = root does not run as root"
held_job "$T/up.conf" b
wait_ticks b 3
owned_by root "$UP/lib" "$UP/run" "$PIN-up"
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
printf x >&3 # 4 MiB while no daemon runs
wait_ticks b 7
start_up "$T/up.conf"
grep -q "restored" "$T/ioacctd.log" || fail "the new daemon did not restore the job of the old one"
for d in lib run; do
	grep -q "$UP/$d given to $U" "$T/ioacctd.log" || fail "$UP/$d was not given to $U"
done
owned_by "$U" "$UP/lib" "$PIN-up"
[ "$(stat -c %U "$UP/run")" = "$U" ] || fail "$UP/run is not $U's"
check_procs "$DAEMON_PID" 0 "after the upgrade"
printf x >&3
exec 3>&-
wait "$HELD_PID"
[ "$(cat "$T/b.rc")" = 0 ] || fail "iorun b failed: $(cat "$T/b.err")"
got=$(json_get "$T/b.json" 'sum(m["write_bytes"] for m in j["mounts"])')
[ "$got" = 12582912 ] || fail "job b: 12582912 bytes written, its report says $got"
stop_daemon
[ -z "$(ls -A "$UP/run")" ] || fail "the stopped daemon left $(ls -A "$UP/run") in $UP/run"
ok "upgrade from root's store, pins and directories with a job running: given to $U, 12 MiB exact"

# ---- 4. what CAP_DAC_READ_SEARCH is for ------------------------------------------
: > "$T/ioacctd.log"
IOACCT_CAPS_DROP=cap_dac_read_search start_daemon
if "$IOPOKE" "$T/ioacctd.sock" status | grep -q 'detail=probes: [a-z-]*, detached'; then
	"$IORUN" -o /dev/null -- true 2> "$T/nodac.err" || true
	grep -q "Permission denied" "$T/nodac.err" ||
		fail "without CAP_DAC_READ_SEARCH a job was registered: $(cat "$T/nodac.err")"
	grep -q "cannot pin link" "$T/ioacctd.log" || fail "no pin refused in the log"
	ok "without CAP_DAC_READ_SEARCH no link can be pinned under /sys/fs/bpf: $(grep -o 'cannot pin link.*' "$T/ioacctd.log" | head -n 1)"
else
	echo "the probes stay attached with this backend: no attach to refuse (check 4 not run)"
fi
stop_daemon

# ---- 5. the unit file ---------------------------------------------------------------
[ -f "$UNIT" ] || fail "$UNIT not built"
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	exposure=$(systemd-analyze security --offline=true "$UNIT" 2>&1 |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
	[ -n "$exposure" ] || fail "systemd-analyze security gave no exposure level"
	awk -v e="$exposure" 'BEGIN { exit !(e <= 5.0) }' || fail "the unit's exposure is $exposure, over 5.0"
	ok "systemd-analyze security --offline=true: exposure $exposure"
else
	echo "systemd-analyze has no --offline (systemd before 250): the unit is not rated here"
fi
/usr/bin/python3 -c 'import seccomp' 2>/dev/null ||
	skip "no python3-seccomp for /usr/bin/python3: the unit's sandbox is not run (Debian: apt-get install python3-seccomp)"
: > "$T/ioacctd.log"
DAEMON_PREFIX=(/usr/bin/python3 "$UNITEXEC" "$UNIT" --)
start_daemon
grep -q "^Seccomp:[[:space:]]*2" "/proc/$DAEMON_PID/status" || fail "the daemon has no seccomp filter"
check_procs "$DAEMON_PID" 1 "in the unit's sandbox"
"$IORUN" --json -o "$T/c.json" -- "$IOWORK" write "$T/c.dat" 1048576 3 > /dev/null ||
	fail "iorun in the unit's sandbox failed"
got=$(json_get "$T/c.json" 'sum(m["write_bytes"] for m in j["mounts"])')
[ "$got" = 3145728 ] || fail "in the unit's sandbox: 3145728 bytes written, the report says $got"
stop_daemon
# Its workers confine themselves with Landlock inside the unit's filter too (landlock_* allowed).
LANDLOCK=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
if [ "$LANDLOCK" -ge 1 ] && grep -q "Landlock is" "$T/ioacctd.log"; then
	fail "in the unit's sandbox: $(grep -m1 "Landlock is" "$T/ioacctd.log")"
fi
ok "ioacctd in its unit's sandbox (bounding set, seccomp, no_new_privs, workers' Landlock): a job of 3 MiB exact"
