#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# iotrace (issue 16): a known sequence of calls is printed exactly, in order,
# with the right fields; -p formats; every filter and assertion form; a
# process outside the traced cgroup never appears; --pid; events lost to a
# full ring buffer are counted and printed; --job: the cgroup of a running
# iorun job, from ioacctd, of a cgroup2 job and of a cgroup v1 job.
. "$(dirname "$0")/lib.sh"
IOTRACE=$abs_top_builddir/tools/iotrace
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
[ -x "$IOTRACE" ] || fail "$IOTRACE not built"
setup
MNT=$(mount_of "$T")

# ---- the known sequence, as JSON lines ----
"$IOTRACE" --json -- "$IOSEQ" "$T/f" "$T/missing" > "$T/seq.json" 2> "$T/seq.err" ||
	fail "iotrace of the known sequence: exit $? ($(cat "$T/seq.err"))"
[ ! -s "$T/seq.err" ] || fail "iotrace said something: $(cat "$T/seq.err")"
python3 - "$T" "$MNT" <<'PY' || fail "the known sequence"
import json, sys
T, mnt = sys.argv[1], sys.argv[2]
ev = [json.loads(l) for l in open(T + "/seq.json")]
got = [(e["op"], e["path"], e["offset"], e["size"], e["errno"]) for e in ev]
want = [("open", T + "/f", None, 0, None),
        ("write", T + "/f", 0, 100, None),
        ("write", T + "/f", 100, 2000, None),
        ("write", T + "/f", 2100, 30000, None),
        ("fsync", T + "/f", None, 0, None),
        ("close", T + "/f", None, 0, None),
        ("open", T + "/missing", None, 0, "ENOENT")]
assert got == want, "events:\n%s\nwanted:\n%s" % ("\n".join(map(str, got)), "\n".join(map(str, want)))
fd = ev[0]["result"]
assert fd >= 3, "open returned %d" % fd
assert [e["result"] for e in ev] == [fd, 100, 2000, 30000, 0, 0, -2], [e["result"] for e in ev]
assert len({e["pid"] for e in ev}) == 1 and all(e["tid"] == e["pid"] for e in ev), "one process, one thread"
assert all(e["comm"] == "ioseq" for e in ev), [e["comm"] for e in ev]
assert all(e["mount"] == mnt for e in ev), "mounts %s, wanted %s" % ([e["mount"] for e in ev], mnt)
ids = {int(l.split()[0]): l.split()[4] for l in open("/proc/self/mountinfo")}
assert all(ids.get(e["mnt_id"]) == mnt for e in ev), "mount ids %s, wanted that of %s" % ([e["mnt_id"] for e in ev], mnt)
starts = [e["start_ns"] for e in ev]
assert starts == sorted(starts), "not in order: %s" % starts
assert all(e["duration_ns"] > 0 for e in ev), [e["duration_ns"] for e in ev]
PY
ok "known sequence: open, 3 writes, fsync, close, failed open, exactly, with the right fields"

# ---- threads: the tid of the thread that made the call; pwrite's offset argument ----
"$IOTRACE" -p '%c %p %t %o %s %f' -- "$IOSEQ" -t "$T/thr" > "$T/thr.out" || fail "iotrace of a thread: exit $?"
python3 - "$T" <<'PY' || fail "threads: $(cat "$T/thr.out")"
import sys
T = sys.argv[1]
ev = [l.split() for l in open(T + "/thr.out")]
assert [e[0] for e in ev] == ["open", "write", "close"], ev
(_, p0, t0, _, _, f0), (_, p1, t1, o1, s1, f1), (_, p2, t2, _, _, _) = ev
assert p0 == p1 == p2 == t0 == t2 and t1 != p1, "pids %s, tids %s" % ((p0, p1, p2), (t0, t1, t2))
assert (o1, s1, f1) == ("100", "10", T + "/thr"), ev[1]
PY
ok "threads: the pwrite of a second thread, with its tid, offset 100, 10 bytes"

# ---- mounts: a tmpfs of its own, named for every call, the failed open too ----
mkdir "$T/mnt"
mount -t tmpfs -o size=1m tmpfs "$T/mnt" || skip "cannot mount a tmpfs"
"$IOTRACE" -p '%c %m' -- "$IOSEQ" "$T/mnt/f" "$T/mnt/missing" > "$T/mnt.out"; rc=$?
umount "$T/mnt"
[ $rc = 0 ] || fail "iotrace on a tmpfs: exit $rc"
printf '%s\n' open write write write fsync close open | sed "s|\$| $T/mnt|" | diff - "$T/mnt.out" ||
	fail "calls on a tmpfs are not named by its mount point"
ok "mounts: the tmpfs of the calls, for fd calls, opens and a failed open"

# ---- -p FORMAT: widths and alignment ----
"$IOTRACE" -p '%-6c|%5s|%o|%r|%m|%f|%%' -- "$IOSEQ" "$T/f" "$T/missing" > "$T/fmt.out" ||
	fail "iotrace -p: exit $?"
fd=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["result"])' "$T/seq.json")
cat > "$T/fmt.want" <<WANT
open  |    0|-|$fd|$MNT|$T/f|%
write |  100|0|100|$MNT|$T/f|%
write | 2000|100|2000|$MNT|$T/f|%
write |30000|2100|30000|$MNT|$T/f|%
fsync |    0|-|0|$MNT|$T/f|%
close |    0|-|0|$MNT|$T/f|%
open  |    0|-|ENOENT|$MNT|$T/missing|%
WANT
diff "$T/fmt.want" "$T/fmt.out" || fail "-p output differs"
out=$("$IOTRACE" -p '%c %q' -- true 2>&1); rc=$?
[ $rc = 2 ] || fail "-p with %q: exit $rc, wanted 2"
echo "$out" | grep -q "^iotrace: -p: '%q' at column 4: unknown directive" || fail "-p %q: $out"
ok "-p: directives, widths, alignment; a bad directive is pointed at"

# ---- filters ----
count() { "$IOTRACE" -p '%c %f' "$@" -- "$IOSEQ" "$T/f" "$T/missing" | wc -l; }
[ "$(count --filter op=write)" = 3 ] || fail "--filter op=write"
[ "$(count --filter 'op=write|fsync')" = 4 ] || fail "--filter op=write|fsync"
[ "$(count --filter 'op=write,size>=1K')" = 2 ] || fail "--filter op=write,size>=1K"
[ "$(count --filter 'size<2000' --filter op=write)" = 1 ] || fail "two --filter add up"
[ "$(count --filter errno=ENOENT)" = 1 ] || fail "--filter errno=ENOENT"
[ "$(count --filter errno=0)" = 6 ] || fail "--filter errno=0"
[ "$(count --filter 'path~*/missing')" = 1 ] || fail "--filter path~*/missing"
[ "$(count --filter 'path!~*/missing')" = 6 ] || fail "--filter path!~*/missing"
[ "$(count --filter "mount=$MNT")" = 7 ] || fail "--filter mount=$MNT"
[ "$(count --filter 'mount=/nonexistent')" = 0 ] || fail "--filter mount=/nonexistent"
[ "$(count --filter 'offset>=100')" = 2 ] || fail "--filter offset>=100"
[ "$(count --filter 'op!=write,comm=ioseq')" = 4 ] || fail "--filter op!=write,comm=ioseq"
[ "$(count --filter 'dur>=0us,result>=0')" = 6 ] || fail "--filter dur>=0us,result>=0"
out=$("$IOTRACE" --filter 'mount=/x,op=wrte' -- true 2>&1); rc=$?
[ $rc = 2 ] || fail "--filter op=wrte: exit $rc, wanted 2"
echo "$out" | grep -q "^iotrace: --filter: op=wrte: unknown operation 'wrte' (read, write, open," ||
	fail "--filter op=wrte: $out"
out=$("$IOTRACE" --filter 'size>=1Q' -- true 2>&1)
echo "$out" | grep -q "^iotrace: --filter: size>=1Q: '1Q' is not a size" || fail "--filter size>=1Q: $out"
out=$("$IOTRACE" --filter 'op<write' -- true 2>&1)
echo "$out" | grep -q "^iotrace: --filter: op<write: op compares with = != " || fail "--filter op<write: $out"
ok "filters: op, size, errno, path globs, mount, offset, comm, dur, result; bad tokens pointed at"

# --rpc where the kernel has no sunrpc (this host, usually): one line, exit 125,
# the command not run. Where sunrpc is there, the QEMU matrix's NFS check
# (tests/vm/nfs/iotrace-rpc.sh) traces its RPCs.
if [ -e /sys/module/sunrpc ]; then
	echo "note: sunrpc is loaded here: --rpc's refusal without it is not checked"
else
	out=$("$IOTRACE" --rpc -- touch "$T/rpc-ran" 2>&1); rc=$?
	[ $rc = 125 ] || fail "--rpc without sunrpc: exit $rc, wanted 125: $out"
	[ "$out" = "iotrace: --rpc: the sunrpc module is not loaded (nothing is mounted over NFS): no RPC to trace" ] ||
		fail "--rpc without sunrpc said: $out"
	[ ! -e "$T/rpc-ran" ] || fail "--rpc without sunrpc ran the command"
	# Its programs are not loaded without --rpc: iotrace works as before (the sequence above).
	ok "--rpc without sunrpc: one line, exit 125, the command not run"
fi
out=$("$IOTRACE" --rpc=all -- true 2>&1); rc=$?
[ $rc = 2 ] && [ "$out" = "iotrace: --rpc: 'all': give --rpc or --rpc=only" ] || fail "--rpc=all: exit $rc: $out"
out=$("$IOTRACE" --filter 'rpc<WRITE' -- true 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "^iotrace: --filter: rpc<WRITE: rpc compares with = != ~ !~" ||
	fail "--filter rpc<WRITE: exit $rc: $out"

# ---- assertions ----
"$IOTRACE" -p '%c' --assert 'count(op=write)==3' --assert 'bytes(op=write)==32100' \
	--assert 'count(op=open,path~*.py)<=100' --assert 'count()==7' \
	-- "$IOSEQ" "$T/f" "$T/missing" > /dev/null 2> "$T/as.err" || fail "assertions that hold: exit $? ($(cat "$T/as.err"))"
[ "$(grep -c '^iotrace: assertion holds: ' "$T/as.err")" = 4 ] || fail "assertions that hold: $(cat "$T/as.err")"
grep -q '^iotrace: assertion holds: bytes(op=write)==32100 (seen 32100)$' "$T/as.err" || fail "$(cat "$T/as.err")"
"$IOTRACE" -p '%c' --assert 'count(op=write)<3' --assert 'bytes(op=write)>=1M' \
	-- "$IOSEQ" "$T/f" "$T/missing" > /dev/null 2> "$T/as.err"; rc=$?
[ $rc = 1 ] || fail "failing assertions: exit $rc, wanted 1 ($(cat "$T/as.err"))"
grep -q '^iotrace: assertion FAILED: count(op=write)<3 (seen 3)$' "$T/as.err" || fail "$(cat "$T/as.err")"
grep -q '^iotrace: assertion FAILED: bytes(op=write)>=1M (seen 32100)$' "$T/as.err" || fail "$(cat "$T/as.err")"
out=$("$IOTRACE" --assert 'cnt(op=write)==3' -- true 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "^iotrace: --assert: cnt(op=write)==3: expected count(FILTER) or bytes(FILTER)" ||
	fail "--assert cnt(): exit $rc: $out"
out=$("$IOTRACE" --assert 'count(op=wrte)==3' -- true 2>&1)
echo "$out" | grep -q "^iotrace: --assert: count(op=wrte)==3: op=wrte: unknown operation 'wrte'" || fail "$out"
ok "assertions: count and bytes hold -> 0, fail -> 1 with what was seen; bad ones pointed at"

# ---- the command's failure is its own, and said ----
"$IOTRACE" -- sh -c 'exit 3' > /dev/null 2> "$T/cmd.err"; rc=$?
[ $rc = 3 ] || fail "a command exiting 3: exit $rc"
grep -q '^iotrace: the command failed with exit status 3$' "$T/cmd.err" || fail "$(cat "$T/cmd.err")"
ok "a failing command: its status, and said so"

# ---- a process outside the traced cgroup never appears ----
( while [ ! -e "$T/stop" ]; do "$IOSEQ" -n 200 "$T/outside"; done ) &
noise=$!
"$IOTRACE" --json -- sh -c "for i in 1 2 3 4 5; do $IOSEQ $T/f $T/missing || exit 1; done" > "$T/in.json" ||
	fail "iotrace with noise outside: exit $?"
touch "$T/stop"
wait $noise
python3 - "$T" <<'PY' || fail "outside process"
import json, sys
T = sys.argv[1]
ev = [json.loads(l) for l in open(T + "/in.json")]
bad = [e for e in ev if "outside" in (e["path"] or "")]
assert not bad, "outside events traced: %s" % bad[:3]
seq = [e for e in ev if e["comm"] == "ioseq"]
assert len(seq) == 35, "%d ioseq events, wanted 5 x 7" % len(seq)
PY
ok "a process outside the cgroup doing I/O at the same time never appears"

# ---- --pid: only that process, until it exits ----
mkfifo "$T/fifo"
"$IOWORK" wait , write "$T/bypid" 4096 2 < "$T/fifo" &
wpid=$!
exec 4> "$T/fifo"
"$IOTRACE" -p '%p %c %s %f' --pid $wpid > "$T/pid.out" 2> "$T/pid.err" &
tpid=$!
for _ in $(seq 1 2400); do grep -q '^iotrace: tracing pid' "$T/pid.err" && break; sleep 0.05; done
grep -q '^iotrace: tracing pid' "$T/pid.err" || fail "iotrace --pid did not start: $(cat "$T/pid.err")"
# The test's own shell is in the same cgroup: its I/O must not be printed.
echo noise > "$T/shell-noise"
echo x >&4
exec 4>&-
wait $wpid || fail "iowork failed"
timeout 30 tail --pid=$tpid -f /dev/null || fail "iotrace --pid did not end with its process"
wait $tpid || fail "iotrace --pid: exit $?"
grep -q shell-noise "$T/pid.out" && fail "--pid printed another process's calls"
printf '%s\n' "$wpid write 4096 $T/bypid" "$wpid write 4096 $T/bypid" > "$T/pid.want"
grep ' write ' "$T/pid.out" | diff "$T/pid.want" - || fail "--pid writes"
grep -q "^$wpid open 0 $T/bypid\$" "$T/pid.out" || fail "--pid open: $(cat "$T/pid.out")"
ok "--pid: that process's calls only, until it exits"

# ---- a full ring buffer: lost events counted and printed ----
# The tracer stops itself while the command makes 2000 calls: a 4 KiB
# buffer holds about a dozen events, the rest must be counted.
cmd="kill -STOP \$PPID; $IOSEQ -n 2000 $T/chatty; kill -CONT \$PPID"
"$IOTRACE" -p '%c' -- sh -c "true; $IOSEQ -n 2000 $T/chatty; true" > "$T/all.out" || fail "unconstrained run"
total=$(wc -l < "$T/all.out")
[ "$total" -ge 2002 ] || fail "unconstrained run: $total events, wanted >= 2002"
"$IOTRACE" -p '%c' --buffer-size 4096 --assert 'count(op=write)==2000' -- sh -c "$cmd" > "$T/ovf.out" 2> "$T/ovf.err"; rc=$?
lost=$(sed -n 's/^iotrace: \([0-9]*\) events lost (ring buffer full.*/\1/p' "$T/ovf.err")
[ -n "$lost" ] || fail "no lost events printed: $(cat "$T/ovf.err")"
printed=$(wc -l < "$T/ovf.out")
[ $((printed + lost)) = "$total" ] || fail "printed $printed + lost $lost != $total"
[ "$lost" -ge 1900 ] || fail "only $lost lost with a 4 KiB buffer"
[ $rc = 1 ] || fail "an assertion over a trace that lost events: exit $rc, wanted 1"
grep -q "with events lost" "$T/ovf.err" || fail "the assertion does not say events were lost"
out=$("$IOTRACE" --buffer-size 5000 -- true 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "^iotrace: --buffer-size: '5000' is not a power of 2" || fail "--buffer-size 5000: $out"
ok "ring buffer full: $lost of $total events lost, counted and printed; assertions fail then"

# ---- --job: the cgroup of a running iorun job, named by the local ioacctd ----
start_daemon
# job_wait ID: until ioacctd has job ID of cluster iorun running.
job_wait() {
	for _ in $(seq 1 400); do
		"$IOPOKE" "$T/ioacctd.sock" snapshot "$1" iorun 2>/dev/null | grep -q '^status=0' && return 0
		sleep 0.05
	done
	fail "iorun job $1 did not start"
}
mkfifo "$T/jfifo"
"$IORUN" --job-id 4242 -o "$T/job.report" -- "$IOWORK" wait , write "$T/byjob" 4096 3 < "$T/jfifo" &
jpid=$!
exec 4> "$T/jfifo"
job_wait 4242
"$IOTRACE" -p '%c %s %f' --job 4242 -M iorun > "$T/job.out" 2> "$T/job.err" &
tpid=$!
for _ in $(seq 1 2400); do grep -q '^iotrace: tracing job' "$T/job.err" && break; sleep 0.05; done
grep -q "^iotrace: tracing job 4242 in /sys/fs/cgroup.*/ioacct-test-$$/" "$T/job.err" ||
	fail "iotrace --job did not start: $(cat "$T/job.err")"
# Not in the job: never printed.
echo noise > "$T/job-noise"
echo x >&4
exec 4>&-
wait $jpid || fail "iorun job 4242 failed"
timeout 30 tail --pid=$tpid -f /dev/null || fail "iotrace --job did not end with the job"
wait $tpid || fail "iotrace --job: exit $? ($(cat "$T/job.err"))"
grep -q job-noise "$T/job.out" && fail "--job printed calls from outside the job"
printf 'write 4096 %s\n' "$T/byjob" "$T/byjob" "$T/byjob" > "$T/job.want"
grep '^write ' "$T/job.out" | diff "$T/job.want" - || fail "--job writes: $(cat "$T/job.out")"
grep -q "^open 0 $T/byjob\$" "$T/job.out" || fail "--job open: $(cat "$T/job.out")"
ok "--job: the job's cgroup from ioacctd, its 3 writes of 4096 bytes exactly, until it ends"

# Errors: no such job, a step it does not have, a v1-only job, bad arguments.
out=$("$IOTRACE" --job 4243 -M iorun 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "^iotrace: --job 4243: job 4243 of cluster iorun is not running under ioacct" ||
	fail "--job of no job: exit $rc: $out"
# A cgroup v1 job (Slurm's cgroup/v1): its cgroup in the v1 hierarchy ioacctd attributes by.
mkfifo "$T/v1fifo"
"$IORUN" --cgroup-mode v1 --job-id 4244 -o /dev/null -- "$IOWORK" wait , write "$T/byv1" 512 2 < "$T/v1fifo" &
jpid=$!
exec 4> "$T/v1fifo"
job_wait 4244
out=$("$IOTRACE" --job 4244 -M iorun --step 7 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "^iotrace: --job 4244 has no running step 7 on this node" ||
	fail "--job --step 7: exit $rc: $out"
"$IOTRACE" -p '%c %s %f' --job 4244 -M iorun > "$T/v1.out" 2> "$T/v1.err" &
tpid=$!
for _ in $(seq 1 2400); do grep -q '^iotrace: tracing job' "$T/v1.err" && break; sleep 0.05; done
v1dir=$(sed -n 's/^iotrace: tracing job 4244 in \(.*\) until it is empty.*/\1/p' "$T/v1.err")
case $v1dir in
/sys/fs/cgroup/unified/*|"") fail "iotrace --job of a v1 job did not trace its v1 cgroup: $(cat "$T/v1.err")";;
esac
# Outside the job: the test's shell, in another cgroup of the same v1 hierarchy.
echo noise > "$T/v1-noise"
echo x >&4
exec 4>&-
wait $jpid || fail "iorun job 4244 failed"
timeout 30 tail --pid=$tpid -f /dev/null || fail "iotrace --job (v1) did not end with the job"
wait $tpid || fail "iotrace --job (v1): exit $? ($(cat "$T/v1.err"))"
grep -q v1-noise "$T/v1.out" && fail "--job (v1) printed calls from outside the job"
printf 'write 512 %s\n' "$T/byv1" "$T/byv1" > "$T/v1.want"
grep '^write ' "$T/v1.out" | diff "$T/v1.want" - || fail "--job (v1) writes: $(cat "$T/v1.out")"
grep -q "^open 0 $T/byv1\$" "$T/v1.out" || fail "--job (v1) open: $(cat "$T/v1.out")"
ok "--job of a cgroup v1 job ($v1dir): its 2 writes of 512 bytes exactly, nothing from outside"
out=$("$IOTRACE" --job x 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "^iotrace: --job: 'x' is not a job id" || fail "--job x: $out"
out=$("$IOTRACE" --step 1 -- true 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "^iotrace: --step and -M go with --job" || fail "--step alone: $out"
ok "--job: no such job, no such step, bad arguments"
