#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sbatch --io-monitor=trace (issue 16) on a real one-node Slurm cluster
# (cgroup/v1 on this host: the tracer follows the job's v1 cgroup; ioacctd
# holds its programs while the job runs, never after):
#  1. a job whose batch step runs a known sequence (open, writes of 100,
#     2000 and 30000 bytes, fsync, close, a failed open) and whose srun -n2
#     step runs it once per rank: the job's .darshan report has DXT_POSIX
#     records with exactly those writes (offsets, lengths) per rank and file,
#     read back by our reader (dxtdump) and by the layout of
#     darshan-dxt-log-format.h (dxt.py, zlib and struct alone; Debian has no
#     darshan-util); a file written outside the job meanwhile never appears;
#     the spooled trace is gone once the report is written; a job whose
#     srun step alone asked for the trace gets its .darshan report too;
#  2. trace_max=4K: exactly 128 segments (4096 / 32 bytes) kept, the rest
#     dropped and counted (trace_dropped in the report's metadata, and the
#     epilog's log line says trace_max was reached): kept + dropped are the
#     reads and writes ioacct's counters saw, less the failed ones and those
#     on fds opened before the trace;
#  3. a trace ioacctd cannot keep (its spool directory cannot be made):
#     the job completes and gets its report, without DXT records, and one
#     line says why;
#  4. traces off on the node (max_traced_jobs = 0): the job runs monitored,
#     untraced, and its output says so in one line; max_trace_size cuts a
#     larger trace_max;
#  5. bad trace_max refused by sbatch.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
IOSEQ=$abs_top_builddir/tests/integration/ioseq
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
slurm_test_setup
[ -x "$IOSEQ" ] && [ -x "$DXTDUMP" ] || fail "build tests/integration first (make check does)"
start_daemon
start_cluster "required $PLUGIN config=$CONF"
cp "$(dirname "$0")/../integration/dxt.py" "$T/dxt.py"

# The names of the BPF programs ioacctd holds (its fds of programs and links), one a line.
daemon_progs() {
	local f id
	for f in /proc/"$DAEMON_PID"/fdinfo/*; do sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null; done |
		sort -u | while read -r id; do
			bpftool -j prog show id "$id" 2>/dev/null |
				python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])' 2>/dev/null
		done | sort -u
}
command -v bpftool > /dev/null || skip "bpftool not installed (Debian: bpftool)"
[ -z "$(daemon_progs | grep '^iotrace_')" ] || fail "ioacctd holds tracer programs before any traced job"

W=$T/work; mkdir -p "$W"; chown "$U" "$W"
cat > "$W/job.sh" <<JOB
#!/bin/bash
$IOSEQ $W/seq.dat $W/missing
srun --quiet -n2 bash -c 'exec $IOSEQ $W/rank\$SLURM_PROCID.dat $W/missing'
while [ ! -e $W/go ]; do sleep 0.1; done
JOB
chmod 755 "$W/job.sh"

# ---- 1. the known sequence, per rank and file ----
J=$(submit_as "$U" --io-monitor=trace,format=text --chdir="$W" -o "$W/out-%j.txt" -n2 "$W/job.sh")
for _ in $(seq 1 300); do [ -s "$W/rank1.dat" ] && [ -s "$W/rank0.dat" ] && break; sleep 0.1; done
# While the job runs, ioacctd holds the tracer's programs; never once it is over.
progs=$(daemon_progs | grep '^iotrace_' | tr '\n' ' ')
[ "$progs" = "iotrace_sys_enter iotrace_sys_exit " ] || fail "while job $J runs, ioacctd's tracer programs: '$progs'"
# Outside the job, while it is traced: never in its trace.
echo noise > "$W/noise.dat"
cat "$W/noise.dat" > /dev/null
touch "$W/go"
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
D=$W/ioacct-$J.darshan
[ -f "$D" ] || { ls -la "$W"; grep -i ioacct "$C/log/slurmd.log" | tail; fail "no Darshan report $D"; }
[ -f "$W/ioacct-$J.txt" ] || fail "format=text asked too: no text report"
[ "$(stat -c %U "$D")" = "$U" ] || fail "report owned by $(stat -c %U "$D"), not $U"
grep -q "ioacct: job $J: trace: .* DXT records; 0 events lost (ring buffer full), 0 dropped$" \
	"$C/log/slurmd.log" || { grep ioacct "$C/log/slurmd.log" | tail; fail "the epilog's trace line"; }
grep -q "job ioacct-test/$J: tracing /sys/fs/cgroup/freezer/.*/job_$J (cgroup v1" "$T/ioacctd.log" ||
	{ grep -i trac "$T/ioacctd.log"; fail "ioacctd did not trace job $J's v1 cgroup"; }
[ -z "$(ls -A "$T/trace" 2>/dev/null)" ] || fail "the spooled trace was left: $(ls "$T/trace")"
[ -z "$(daemon_progs | grep '^iotrace_')" ] || fail "ioacctd still holds the tracer after job $J: $(daemon_progs)"
"$DXTDUMP" "$D" > "$T/dump" || fail "our reader: dxtdump $D failed"
python3 - "$T/dump" "$W" "$(hostname -s)" <<'PY' || fail "the DXT records, read by our reader"
import sys
dump, W, host = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(dump).read().splitlines()
# key=value metadata (a value may have spaces: the job's command line), else
# one DXT segment a line.
import re
is_meta = re.compile(r"^[A-Za-z0-9_]+=").match
meta = dict(l.split("=", 1) for l in lines if is_meta(l))
segs = [l.split() for l in lines if not is_meta(l)]
mine = {}
for path, rank, h, op, off, length, start, end in segs:
    assert h == host, "hostname %s, wanted %s" % (h, host)
    assert float(end) >= float(start) >= 0, (start, end)
    if path.startswith(W + "/"):
        mine.setdefault((path[len(W) + 1:], int(rank), op), []).append((int(off), int(length)))
seq = [(0, 100), (100, 2000), (2100, 30000)]
want = {("seq.dat", 0, "write"): seq, ("rank0.dat", 0, "write"): seq, ("rank1.dat", 1, "write"): seq}
print("trace metadata:", meta, "\njob files:", mine)
import collections
print("segments per (file, rank, op):", dict(collections.Counter((s[0], s[1], s[3]) for s in segs)))
assert mine == want, "the job's files: %s\nwanted %s" % (mine, want)
assert meta["trace_dropped"] == "0" and meta["trace_lost"] == "0", meta
assert meta["trace_max"] == str(64 << 20), meta
PY
python3 - "$T" "$D" "$W" <<'PY' || fail "the DXT records, by darshan-dxt-log-format.h's layout"
import sys
sys.path.insert(0, sys.argv[1]); from dxt import log
D, W = sys.argv[2], sys.argv[3]
recs, run, meta, regions = log(D)
assert 1 in regions and 10 in regions, "regions %s: wanted POSIX and DXT_POSIX" % regions
got = {(r["path"][len(W) + 1:], r["rank"]): [(w[0], w[1]) for w in r["w"]] for r in recs
       if r["path"].startswith(W + "/")}
seq = [(0, 100), (100, 2000), (2100, 30000)]
assert got == {("seq.dat", 0): seq, ("rank0.dat", 0): seq, ("rank1.dat", 1): seq}, got
for r in recs:
    assert r["shared"] == -1, r
    times = [t for w in r["w"] for t in w[2:]]
    assert all(0 <= t <= run + 1 for t in times), "segments outside the job's %g s: %s" % (run, r)
assert meta.get("trace_dropped") == "0", meta
PY
ok "job $J: the tracer attached while it ran, detached after; DXT_POSIX records of exactly the 3 writes (0+100, 100+2000, 2100+30000) per rank and file (seq.dat rank 0, rank0.dat rank 0, rank1.dat rank 1), nothing from outside; our reader and the format's layout agree"

# ---- 1b. one srun step traced in a job that was not: the trace still reaches a report ----
cat > "$W/step.sh" <<JOB
#!/bin/bash
srun --quiet -n1 --io-monitor=trace $IOSEQ $W/step.dat $W/missing
JOB
chmod 755 "$W/step.sh"
J1=$(submit_as "$U" --io-monitor=format=text --chdir="$W" -o "$W/out-%j.txt" "$W/step.sh")
[ "$(wait_job "$J1")" = COMPLETED ] || { cat "$W/out-$J1.txt"; fail "job $J1 failed"; }
[ -f "$W/ioacct-$J1.txt" ] || fail "job $J1: no text report"
[ -f "$W/ioacct-$J1.darshan" ] || fail "job $J1: its srun step was traced, but no Darshan report"
"$DXTDUMP" "$W/ioacct-$J1.darshan" | grep " write " | grep "^$W/step.dat " | awk '{ print $2, $5, $6 }' > "$T/step.got"
printf '0 0 100\n0 100 2000\n0 2100 30000\n' | diff - "$T/step.got" || fail "job $J1: the traced step's writes"
[ -z "$(ls -A "$T/trace" 2>/dev/null)" ] || fail "job $J1: its spooled trace was left: $(ls "$T/trace")"
ok "srun --io-monitor=trace in a job without it: the step's 3 writes in the job's .darshan report, spool removed"

# ---- 2. trace_max: the cap, and what it dropped ----
# Every read and write the counters saw (the report's POSIX records) is a
# segment kept, dropped past the cap, failed, or on an fd opened before the
# trace (stdout): nothing is lost without being counted.
cat > "$W/cap.sh" <<JOB
#!/bin/bash
exec $IOWORK write $W/cap.dat 1 1000
JOB
chmod 755 "$W/cap.sh"
J2=$(submit_as "$U" --io-monitor=trace_max=4K --chdir="$W" -o "$W/out-%j.txt" "$W/cap.sh")
[ "$(wait_job "$J2")" = COMPLETED ] || fail "job $J2 failed"
"$DXTDUMP" "$W/ioacct-$J2.darshan" > "$T/capped" || fail "dxtdump of job $J2"
read -r kept dropped calls < <(python3 - "$T/capped" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
import re
is_meta = re.compile(r"^[A-Za-z0-9_]+=").match
m = dict(l.split("=", 1) for l in lines if is_meta(l))
kept = sum(1 for l in lines if not is_meta(l))
print(kept, m["trace_dropped"], int(m["posix_reads"]) + int(m["posix_writes"]) - int(m["trace_nopath"]) -
      int(m["trace_failed"]))
PY
)
echo "trace_max=4K job $J2: $kept segments kept, $dropped dropped, $calls reads and writes the trace could keep"
[ "$kept" = 128 ] || fail "trace_max=4K kept $kept segments, wanted 128 (4096 / 32)"
[ "$dropped" = $((calls - 128)) ] || fail "trace_max=4K dropped $dropped, wanted $((calls - 128)) ($calls - 128)"
[ "$calls" -ge 1000 ] || fail "the counters saw $calls reads and writes, fewer than the 1000 writes of cap.dat"
grep -q "ioacct: job $J2: trace: .* $dropped dropped (trace_max was reached)$" "$C/log/slurmd.log" ||
	fail "the epilog's line does not say trace_max was reached"
grep -q "^trace_max=4096$" "$T/capped" || fail "trace_max=4096 not in the report's metadata"
ok "trace_max=4K: 128 segments kept, $dropped of $calls dropped and counted, in the report and said"

# ---- 3. a trace that cannot be kept: the job runs, its report is written, one line says why ----
# The spool directory cannot be made (a file is in its way): a real failure of ioacctd's.
rmdir "$T/trace" && : > "$T/trace" || fail "cannot put a file where the trace spool is"
J3=$(submit_as "$U" --io-monitor=trace --chdir="$W" -o "$W/out-%j.txt" "$W/cap.sh")
[ "$(wait_job "$J3")" = COMPLETED ] || fail "job $J3 failed: a trace that cannot be spooled broke it"
[ "$(stat -c %s "$W/cap.dat")" = 1000 ] || fail "job $J3 did not write its 1000 bytes"
"$DXTDUMP" "$W/ioacct-$J3.darshan" > "$T/nospool" || fail "job $J3: no readable Darshan report"
! grep -q ' ' "$T/nospool" || fail "job $J3: DXT records from nowhere: $(head -3 "$T/nospool")"
grep -q "job ioacct-test/$J3: cannot spool its trace: cannot create $T/trace/" "$T/ioacctd.log" ||
	fail "ioacctd did not say why job $J3's trace was not kept"
[ "$(grep -c "ioacct: job $J3: no trace: " "$C/log/slurmd.log")" = 1 ] ||
	fail "the epilog did not say in one line that job $J3 has no trace"
rm -f "$T/trace"
ok "a trace that cannot be spooled: the job completed, its report without DXT records, one line each from ioacctd and the epilog"

# ---- 4. traces off on this node (max_traced_jobs = 0): the job runs, one line says so ----
echo "max_traced_jobs = 0" >> "$CONF"
stop_daemon
start_daemon
J4=$(submit_as "$U" --io-monitor=trace --chdir="$W" -o "$W/out-%j.txt" "$W/cap.sh")
[ "$(wait_job "$J4")" = COMPLETED ] || fail "job $J4 failed: a refused trace broke it"
[ "$(stat -c %s "$W/cap.dat")" = 1000 ] || fail "job $J4 did not write its 1000 bytes"
[ "$(grep -c 'ioacct: ' "$W/out-$J4.txt")" = 1 ] &&
	grep -q "ioacct: job $J4 step 4294967291: not traced: traces are off on this node (max_traced_jobs = 0)\$" \
		"$W/out-$J4.txt" || { cat "$W/out-$J4.txt"; fail "job $J4's output does not say once why it is not traced"; }
[ -f "$W/ioacct-$J4.txt" ] || fail "job $J4: an untraced job lost its text report"
"$DXTDUMP" "$W/ioacct-$J4.darshan" > "$T/off" || fail "job $J4: no readable Darshan report"
! grep -q ' ' "$T/off" || fail "job $J4: DXT records with traces off"
[ -z "$(daemon_progs | grep '^iotrace_')" ] || fail "traces off, yet ioacctd loaded the tracer"
ok "max_traced_jobs = 0: the job completed, monitored, its output saying once it is not traced"

# The site's cap on a job's trace: a larger trace_max is cut to max_trace_size.
sed -i 's/^max_traced_jobs = 0$/max_traced_jobs = 1\nmax_trace_size = 1/' "$CONF"
stop_daemon
start_daemon
J5=$(submit_as "$U" --io-monitor=trace_max=2M --chdir="$W" -o "$W/out-%j.txt" "$W/cap.sh")
[ "$(wait_job "$J5")" = COMPLETED ] || fail "job $J5 failed"
"$DXTDUMP" "$W/ioacct-$J5.darshan" | grep -qx 'trace_max=1048576' ||
	fail "job $J5: trace_max=2M was not cut to max_trace_size = 1 (MiB)"
grep -q "job ioacct-test/$J5: tracing .* at most 1048576 bytes of DXT segments" "$T/ioacctd.log" ||
	fail "ioacctd did not trace job $J5 with the site's cap"
ok "max_trace_size = 1: a job's trace_max=2M cut to 1 MiB"

# ---- 5. bad values refused at submission ----
for bad in trace_max=0 trace_max=1X trace_max=100 trace_max; do
	out=$(runuser -u "$U" -- env SLURM_CONF="$SLURM_CONF" sbatch --io-monitor=$bad "$W/cap.sh" 2>&1) &&
		fail "sbatch --io-monitor=$bad was accepted: $out"
	echo "$out" | grep -q "ioacct: --io-monitor: .*trace_max" || fail "--io-monitor=$bad: $out"
done
ok "bad trace_max values refused by sbatch with the reason"
