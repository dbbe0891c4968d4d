#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sbatch --io-monitor=spans (issue 27) on a real one-node Slurm cluster:
#  1. a job whose batch step runs a known sequence (open, writes of 100, 2000
#     and 30000 bytes, fsync, close, a failed open) and whose srun -n2 step
#     runs it once per rank: the spans ioacctd sent, decoded with the
#     OpenTelemetry project's own schema (npm @opentelemetry/otlp-transformer),
#     have exactly those calls per step, rank and file, each a child of its
#     step's span (step J.batch, step J.0), both children of the job's span,
#     all in one trace;
#  2. a node without otlp_url: the job completes, without spans, and its
#     output says why in one line.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/../integration/otlp.sh"
IOSEQ=$abs_top_builddir/tests/integration/ioseq
slurm_test_setup
[ -x "$IOSEQ" ] || fail "build tests/integration first (make check does)"
otlp_require
otlp_schema
trap 'rc=$?; stop_collector; (exit $rc); stop_cluster; teardown' EXIT
start_collector ok "$T/c1"
echo "otlp_url = http://127.0.0.1:$PORT" >> "$CONF"
start_daemon
start_cluster "required $PLUGIN config=$CONF"

W=$T/work; mkdir -p "$W"; chown "$U" "$W"
cat > "$W/job.sh" <<JOB
#!/bin/bash
$IOSEQ $W/seq.dat $W/missing
srun --quiet -n2 bash -c 'exec $IOSEQ $W/rank\$SLURM_PROCID.dat $W/missing'
JOB
chmod 755 "$W/job.sh"

# ---- 1. the known sequence per step and rank, under its step, under the job ----
J=$(submit_as "$U" --io-monitor=spans --chdir="$W" -o "$W/out-%j.txt" -n2 "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
[ ! -s "$W/out-$J.txt" ] || fail "the job's output: $(cat "$W/out-$J.txt")"
for _ in $(seq 1 600); do
	grep -qE "job ioacct-test/$J: spans: [0-9]+ spans sent" "$T/ioacctd.log" && break
	sleep 0.05
done
grep -qE "job ioacct-test/$J: spans: [0-9]+ spans sent, 0 dropped$" "$T/ioacctd.log" ||
	fail "ioacctd's spans line: $(grep "spans" "$T/ioacctd.log")"
stop_collector
decode "$T"/c1/post-*.bin > "$T/spans" ||
	fail "decoding with the OpenTelemetry schema"
python3 - "$T/spans" "$W" "$J" "$(hostname -s)" <<'PY' || fail "job $J's spans"
import collections, json, sys
f, W, J, node = sys.argv[1:]
sp = [json.loads(l) for l in open(f)]
by_name = collections.defaultdict(list)
for s in sp:
    by_name[s["name"]].append(s)
job, = by_name["job " + J]
batch, = by_name["step %s.batch" % J]
step0, = by_name["step %s.0" % J]
assert job["parent"] == "" and batch["parent"] == step0["parent"] == job["spanId"]
assert step0["attributes"] == {"ioacct.job": J, "ioacct.step": "0", "ioacct.node": node}
assert batch["attributes"]["ioacct.step"] == "4294967291", batch["attributes"]
assert len({s["traceId"] for s in sp}) == 1, "one trace"
assert len({s["spanId"] for s in sp}) == len(sp), "span ids unique"
parents = {"4294967291": batch["spanId"], "0": step0["spanId"]}
calls = [s for s in sp if s not in (job, batch, step0)]
for s in calls:
    a = s["attributes"]
    assert a["ioacct.job"] == J and a["ioacct.node"] == node, a
    assert s["parent"] == parents[a["ioacct.step"]], (s["name"], a, s["parent"])
    assert a["ioacct.rank"] in ("0", "1"), a
mine = collections.defaultdict(list)
for s in sorted(calls, key=lambda s: int(s["start"])):
    a = s["attributes"]
    p = a.get("file.path", "")
    if p.startswith(W + "/"):
        mine[(a["ioacct.step"], a["ioacct.rank"], a["process.pid"])].append(
            (s["name"], p[len(W) + 1:], a.get("ioacct.offset"), a["ioacct.bytes"],
             a["ioacct.result"] if s["name"] != "open" else None))
def seq(f):
    return [("open", f, None, "0", None), ("write", f, "0", "100", "100"),
            ("write", f, "100", "2000", "2000"), ("write", f, "2100", "30000", "30000"),
            ("fsync", f, None, "0", "0"), ("close", f, None, "0", "0"),
            ("open", "missing", None, "0", None)]
got = sorted((k[0], k[1], v) for k, v in mine.items())
want = [("0", "0", seq("rank0.dat")), ("0", "1", seq("rank1.dat")),
        ("4294967291", "0", seq("seq.dat"))]
assert got == want, "got:\n%s\nwanted:\n%s" % ("\n".join(map(str, got)),
                                                "\n".join(map(str, want)))
st = lambda s: int(s["start"])
en = lambda s: int(s["end"])
assert st(job) <= st(batch) and en(batch) <= en(job) and st(job) <= st(step0), "inside the job"
print("%d spans: job, 2 steps, %d calls (%d on the job's files)" % (
    len(sp), len(calls), sum(len(v) for v in mine.values())))
PY
ok "job $J: its calls per step and rank, exact, under step and job spans, one trace"

# ---- 2. no otlp_url on the node: the job runs, one line says why ----
stop_daemon
sed -i '/^otlp_url = /d' "$CONF"
start_daemon
J=$(submit_as "$U" --io-monitor=spans --chdir="$W" -o "$W/out-%j.txt" -n2 "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
n=$(grep -c "ioacct: job $J step [0-9]*: no spans: otlp_url is not set in ioacct.conf on node" \
	"$W/out-$J.txt")
[ "$n" -ge 1 ] || fail "job $J's output: $(cat "$W/out-$J.txt")"
grep -q "job ioacct-test/$J: tracing" "$T/ioacctd.log" && fail "a tracer ran for job $J"
ok "no otlp_url: job $J completes without spans, its output says why"
