#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --io-monitor=spans (issue 27), through iorun --spans: ioacctd sends a
# job's calls as OTLP/HTTP spans to ioacct.conf's otlp_url, decoded here with
# the OpenTelemetry project's own generated schema (npm
# @opentelemetry/otlp-transformer, installed here): exact in count, names
# and attributes (job, step, rank, node, file, offset, bytes, result), each
# call a child of its step's span, the step's of the job's, one trace whose
# id comes from cluster, job and restart. A collector that never answers
# slows the job by nothing; its spans are counted as dropped in the log.
# max_spans caps a job's call spans on a node; the calls past it are counted.
# Without otlp_url the job runs, untraced, and one line says why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/otlp.sh"
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
[ -x "$IORUN" ] && [ -x "$IOSEQ" ] || fail "iorun or ioseq not built"
otlp_require
setup
otlp_schema

trap 'rc=$?; stop_collector; (exit $rc); teardown' EXIT

# ---- no otlp_url: the job runs, untraced, and says why ----
start_daemon
"$IORUN" --spans --job-id 4240 -o "$T/r0.txt" -- "$IOSEQ" "$T/f0" "$T/m0" 2> "$T/nourl.err" ||
	fail "iorun --spans without otlp_url: exit $? ($(cat "$T/nourl.err"))"
grep -qx "iorun: no spans: otlp_url is not set in ioacct.conf on node $(uname -n | cut -d. -f1)" \
	"$T/nourl.err" || fail "without otlp_url iorun said: $(cat "$T/nourl.err")"
[ "$(wc -l < "$T/nourl.err")" = 1 ] || fail "more than one line: $(cat "$T/nourl.err")"
grep -q "job iorun/4240: tracing" "$T/ioacctd.log" && fail "a tracer ran without otlp_url"
stop_daemon
ok "no otlp_url: the job runs without spans, one line says why"

# ---- the known sequence, as a job: 7 calls under step 0 under the job ----
start_collector ok "$T/c1"
echo "otlp_url = http://127.0.0.1:$PORT" >> "$CONF"
start_daemon
"$IORUN" --spans --job-id 4242 -o "$T/r1.txt" -- "$IOSEQ" "$T/f" "$T/missing" \
	2> "$T/seq.err" || fail "iorun --spans: exit $? ($(cat "$T/seq.err"))"
[ ! -s "$T/seq.err" ] || fail "iorun --spans said: $(cat "$T/seq.err")"
wait_log "job iorun/4242: spans: [0-9]+ spans sent, 0 dropped"
stop_collector
decode "$T"/c1/post-*.bin > "$T/seq.spans" || fail "decoding with the OpenTelemetry schema"
python3 - "$T" "$(uname -n | cut -d. -f1)" "$(id -u)" <<'PY' || fail "the job's spans"
import json, sys
T, node, uid = sys.argv[1:]
sp = [json.loads(l) for l in open(T + "/seq.spans")]
jobs = [s for s in sp if s["name"] == "job 4242"]
steps = [s for s in sp if s["name"] == "step 4242.0"]
assert len(jobs) == 1 and len(steps) == 1, [s["name"] for s in sp]
job, step = jobs[0], steps[0]
assert job["parent"] == "" and step["parent"] == job["spanId"], (job, step)
assert job["attributes"] == {"ioacct.job": "4242", "ioacct.node": node}, job["attributes"]
assert step["attributes"] == {"ioacct.job": "4242", "ioacct.step": "0", "ioacct.node": node}
calls = sorted((s for s in sp if s not in (job, step)), key=lambda s: int(s["start"]))
assert all(s["parent"] == step["spanId"] for s in calls), "every call's parent is the step"
assert len({s["traceId"] for s in sp}) == 1 and len(job["traceId"]) == 32, "one trace"
assert len({s["spanId"] for s in sp}) == len(sp), "span ids unique"
assert all(s["resource"] == {"service.name": "ioacct", "host.name": node} for s in sp)
assert len(sp) == 9, [(s["name"], s["attributes"].get("file.path")) for s in sp]
mine = calls
got = [(s["name"], s["attributes"]["file.path"], s["attributes"].get("ioacct.offset"),
        s["attributes"]["ioacct.bytes"], s["attributes"].get("error.type")) for s in mine]
want = [("open", T + "/f", None, "0", None),
        ("write", T + "/f", "0", "100", None),
        ("write", T + "/f", "100", "2000", None),
        ("write", T + "/f", "2100", "30000", None),
        ("fsync", T + "/f", None, "0", None),
        ("close", T + "/f", None, "0", None),
        ("open", T + "/missing", None, "0", "ENOENT")]
assert got == want, "spans:\n%s\nwanted:\n%s" % ("\n".join(map(str, got)),
                                                  "\n".join(map(str, want)))
fd = int(mine[0]["attributes"]["ioacct.result"])
assert fd >= 3 and [int(s["attributes"]["ioacct.result"]) for s in mine] == \
    [fd, 100, 2000, 30000, 0, 0, -2], mine
for s in calls:
    a = s["attributes"]
    assert (a["ioacct.job"], a["ioacct.step"], a["ioacct.rank"], a["ioacct.node"]) == \
        ("4242", "0", "0", node), a
assert all(s["attributes"]["process.command"] == "ioseq" for s in mine)
assert mine[6]["status"] == {"message": "ENOENT", "code": 2}, mine[6]["status"]
st = lambda s: int(s["start"])
en = lambda s: int(s["end"])
assert st(job) <= st(step) and en(step) <= en(job), "the step inside the job"
assert all(st(step) <= st(s) < en(s) <= en(step) for s in mine), "calls inside the step"
import time
assert abs(st(job) / 1e9 - time.time()) < 600, "unix nanoseconds"
open(T + "/trace1", "w").write(job["traceId"] + " " + job["spanId"] + "\n")
PY
ok "known sequence: job and step spans, 7 calls with job, step, rank, node, file, offset," \
	"bytes and result, decoded by the OpenTelemetry schema"

# ---- 3000 writes: batches, every span once; another job: another trace ----
start_collector ok "$T/c2"
sed -i "s|^otlp_url = .*|otlp_url = http://127.0.0.1:$PORT/custom/path|" "$CONF"
stop_daemon
start_daemon
"$IORUN" --spans --job-id 4243 -o "$T/r2.txt" -- "$IOSEQ" -n 3000 "$T/g" 2> "$T/many.err" ||
	fail "iorun --spans, 3000 writes: exit $? ($(cat "$T/many.err"))"
wait_log "job iorun/4243: spans: [0-9]+ spans sent, 0 dropped"
stop_collector
! grep -qv "^/custom/path " "$T/c2/posts.log" || fail "posted to: $(cat "$T/c2/posts.log")"
decode "$T"/c2/post-*.bin > "$T/many.spans" || fail "decoding"
python3 - "$T" <<'PY' || fail "3000 writes as spans"
import json, sys
T = sys.argv[1]
sp = [json.loads(l) for l in open(T + "/many.spans")]
writes = [s for s in sp if s["name"] == "write" and
          s["attributes"].get("file.path") == T + "/g"]
assert len(writes) == 3000, len(writes)
assert sorted(int(s["attributes"]["ioacct.offset"]) for s in writes) == list(range(3000))
assert all(s["attributes"]["ioacct.bytes"] == "1" for s in writes)
assert len({s["spanId"] for s in sp}) == len(sp), "span ids unique"
names = sorted(s["name"] for s in sp if s not in writes)
assert len(sp) == 3004 and names == ["close", "job 4243", "open", "step 4243.0"], names
t1 = open(T + "/trace1").read().split()
assert len({s["traceId"] for s in sp}) == 1 and sp[0]["traceId"] != t1[0], "a trace per job"
print("ok: %d spans in %d POSTs" % (len(sp), len({s["post"] for s in sp})))
PY
ok "3000 writes: 3004 spans, each once, to the URL's own path"

# ---- max_spans: the cap of a job's call spans on a node, the rest counted in the log ----
start_collector ok "$T/c4"
sed -i "s|^otlp_url = .*|otlp_url = http://127.0.0.1:$PORT|" "$CONF"
echo "max_spans = 1000" >> "$CONF"
stop_daemon
start_daemon
"$IORUN" --spans --job-id 4246 -o /dev/null -- "$IOSEQ" -n 3000 "$T/k" 2> "$T/cap.err" ||
	fail "iorun --spans, max_spans = 1000: exit $? ($(cat "$T/cap.err"))"
# 3,002 calls (open, 3,000 writes, close): 1,000 sent, 2,002 past the cap.
wait_log "job iorun/4246: spans: 2002 calls past max_spans \(1000\) not sent"
wait_log "job iorun/4246: spans: 1002 spans sent, 0 dropped"
stop_collector
decode "$T"/c4/post-*.bin > "$T/cap.spans" || fail "decoding"
python3 - "$T" <<'PY' || fail "max_spans = 1000"
import json, sys
T = sys.argv[1]
sp = [json.loads(l) for l in open(T + "/cap.spans")]
calls = [s for s in sp if s["attributes"].get("file.path") == T + "/k"]
names = sorted(s["name"] for s in sp if s not in calls)
assert len(sp) == 1002 and len(calls) == 1000, (len(sp), len(calls))
assert names == ["job 4246", "step 4246.0"], names
PY
sed -i "/^max_spans = /d" "$CONF"
ok "max_spans = 1000: 1000 call spans and the job's and step's sent, 2002 calls counted in the log"

# ---- a collector that never answers: the job is not slowed, the spans dropped and said ----
"$IORUN" --job-id 4244 -o /dev/null -- bash -c \
	's=$EPOCHREALTIME; "$1" -n 20000 "$2"; e=$EPOCHREALTIME; echo "$s $e" > "$3"' \
	- "$IOSEQ" "$T/h0" "$T/t0" || fail "iorun without spans"
start_collector hang "$T/c3"
sed -i -e "s|^otlp_url = .*|otlp_url = http://127.0.0.1:$PORT|" "$CONF"
echo "otlp_queue = 64" >> "$CONF"
stop_daemon
start_daemon
"$IORUN" --spans --job-id 4245 -o /dev/null -- bash -c \
	's=$EPOCHREALTIME; "$1" -n 20000 "$2"; e=$EPOCHREALTIME; echo "$s $e" > "$3"' \
	- "$IOSEQ" "$T/h1" "$T/t1" 2> "$T/hang.err" ||
	fail "iorun --spans, collector hanging: exit $? ($(cat "$T/hang.err"))"
"$IOPOKE" "$T/ioacctd.sock" status | grep -q '^status=0' || fail "ioacctd stopped answering"
wait_log "job iorun/4245: spans: 0 spans sent, [0-9]+ dropped \(collector 127.0.0.1:$PORT: "
stop_collector
python3 - "$T" <<'PY' || fail "a collector that never answers"
import re, sys
T = sys.argv[1]
d0, d1 = [(lambda s, e: e - s)(*map(float, open(T + f).read().split())) for f in ("/t0", "/t1")]
print("command: %.3f s without spans, %.3f s with a collector that never answers" % (d0, d1))
assert d1 <= 3 * d0 + 2, "the command was slowed: %.3f s against %.3f s" % (d1, d0)
log = open(T + "/ioacctd.log").read()
m = re.search(r"job iorun/4245: spans: 0 spans sent, (\d+) dropped \(collector [^)]*queue of "
              r"65536 bytes full for (\d+) spans\)", log)
assert m, [l for l in log.splitlines() if "spans:" in l]
assert int(m.group(1)) > 20000 and 0 < int(m.group(2)) < int(m.group(1)), m.groups()
PY
ok "a collector that never answers: the job not slowed, every span dropped, counted, logged"
