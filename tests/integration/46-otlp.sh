#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# iotrace --otlp (issue 27): the calls of a known sequence sent as OTLP/HTTP
# spans to a collector started here, decoded with the OpenTelemetry
# project's own generated schema (npm @opentelemetry/otlp-transformer,
# installed here), exact in count, names, parent and attributes; 2000
# writes in batches, every span exactly once; a collector that never answers
# or is not there slows the traced command by nothing, and the dropped spans
# are counted and said.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/otlp.sh"
IOTRACE=$abs_top_builddir/tools/iotrace
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
[ -x "$IOTRACE" ] || fail "$IOTRACE not built"
otlp_require
setup
MNT=$(mount_of "$T")
otlp_schema

trap 'rc=$?; stop_collector; (exit $rc); teardown' EXIT

# ---- the known sequence: 7 calls and the root span ----
start_collector ok "$T/c1"
"$IOTRACE" --otlp "http://127.0.0.1:$PORT" -- "$IOSEQ" "$T/f" "$T/missing" \
	> "$T/seq.out" 2> "$T/seq.err" ||
	fail "iotrace --otlp: exit $? ($(cat "$T/seq.err"))"
stop_collector
[ ! -s "$T/seq.out" ] || fail "iotrace --otlp printed lines: $(cat "$T/seq.out")"
grep -qx "iotrace: 8 spans sent, 0 dropped" "$T/seq.err" || fail "iotrace said: $(cat "$T/seq.err")"
grep -q "^/v1/traces application/x-protobuf " "$T/c1/posts.log" ||
	fail "posts: $(cat "$T/c1/posts.log")"
decode "$T"/c1/post-*.bin > "$T/seq.spans" || fail "decoding with the OpenTelemetry schema"
python3 - "$T" "$MNT" "$(uname -n)" "$IOSEQ" <<'PY' || fail "the known sequence as spans"
import json, sys
T, mnt, host, ioseq = sys.argv[1:]
sp = [json.loads(l) for l in open(T + "/seq.spans")]
assert len(sp) == 8, "%d spans" % len(sp)
roots = [s for s in sp if not s["parent"]]
assert len(roots) == 1, roots
root = roots[0]
assert root["name"] == "%s %s/f %s/missing" % (ioseq, T, T), root["name"]
calls = sorted((s for s in sp if s["parent"]), key=lambda s: int(s["start"]))
assert all(s["parent"] == root["spanId"] for s in calls), "every call's parent is the root"
assert len({s["traceId"] for s in sp}) == 1 and len(root["traceId"]) == 32, "one trace"
assert len({s["spanId"] for s in sp}) == 8 and all(len(s["spanId"]) == 16 for s in sp)
res = {"service.name": "ioacct", "host.name": host}
assert all(s["resource"] == res for s in sp), sp[0]["resource"]
assert all(s["scope"]["name"] == "iotrace" and s["kind"] == 1 for s in sp), sp[0]
got = [(s["name"], s["attributes"].get("file.path"), s["attributes"].get("ioacct.offset"),
        s["attributes"]["ioacct.bytes"], s["attributes"].get("error.type")) for s in calls]
want = [("open", T + "/f", None, "0", None),
        ("write", T + "/f", "0", "100", None),
        ("write", T + "/f", "100", "2000", None),
        ("write", T + "/f", "2100", "30000", None),
        ("fsync", T + "/f", None, "0", None),
        ("close", T + "/f", None, "0", None),
        ("open", T + "/missing", None, "0", "ENOENT")]
assert got == want, "spans:\n%s\nwanted:\n%s" % ("\n".join(map(str, got)),
                                                  "\n".join(map(str, want)))
fd = int(calls[0]["attributes"]["ioacct.result"])
assert fd >= 3 and [int(s["attributes"]["ioacct.result"]) for s in calls] == \
    [fd, 100, 2000, 30000, 0, 0, -2], calls
pid = calls[0]["attributes"]["process.pid"]
assert all(s["attributes"]["process.pid"] == s["attributes"]["thread.id"] == pid for s in calls)
assert all(s["attributes"]["process.command"] == "ioseq" for s in calls)
assert all(s["attributes"]["ioacct.mount"] == mnt for s in calls)
assert [s["status"] for s in calls[:6]] == [None] * 6, "no status but on the failed call"
assert calls[6]["status"] == {"message": "ENOENT", "code": 2}, calls[6]["status"]
st = lambda s: int(s["start"])
en = lambda s: int(s["end"])
assert all(st(root) <= st(s) < en(s) <= en(root) for s in calls), "calls inside the root span"
import time
assert abs(st(root) / 1e9 - time.time()) < 600, "unix nanoseconds"
PY
ok "known sequence: 8 spans (root + 7 calls) decoded by the OpenTelemetry schema, exact"

# ---- 2000 writes: batches, every span once ----
start_collector ok "$T/c2"
"$IOTRACE" --otlp "http://127.0.0.1:$PORT/custom/path" -- "$IOSEQ" -n 2000 "$T/g" \
	2> "$T/many.err" ||
	fail "iotrace --otlp of 2000 writes: exit $? ($(cat "$T/many.err"))"
stop_collector
grep -qx "iotrace: 2003 spans sent, 0 dropped" "$T/many.err" ||
	fail "iotrace said: $(cat "$T/many.err")"
! grep -qv "^/custom/path " "$T/c2/posts.log" || fail "posted to: $(cat "$T/c2/posts.log")"
decode "$T"/c2/post-*.bin > "$T/many.spans" || fail "decoding"
python3 - "$T" <<'PY' || fail "2000 writes as spans"
import json, sys
T = sys.argv[1]
sp = [json.loads(l) for l in open(T + "/many.spans")]
writes = [s for s in sp if s["name"] == "write"]
assert len(sp) == 2003 and len(writes) == 2000, (len(sp), len(writes))
assert sorted(int(s["attributes"]["ioacct.offset"]) for s in writes) == list(range(2000))
assert all(s["attributes"]["ioacct.bytes"] == "1" for s in writes)
assert len({s["spanId"] for s in sp}) == 2003, "span ids unique"
print("ok: %d POSTs" % len({s["post"] for s in sp}))
PY
ok "2000 writes: 2003 spans, each once, offsets 0..1999, to the URL's own path"

# ---- a collector that never answers, one that is not there ----
# The command times itself; the bound is generous but tied to the run without a collector.
cat > "$T/timed.sh" <<EOF
s=\$EPOCHREALTIME; "$IOSEQ" -n 20000 "$T/h"; e=\$EPOCHREALTIME; echo "\$s \$e" > "\$1"
EOF
"$IOTRACE" -p '%c' -- bash "$T/timed.sh" "$T/t0" > /dev/null || fail "iotrace without a collector"
start_collector hang "$T/c3"
"$IOTRACE" --json --otlp "http://127.0.0.1:$PORT" --otlp-queue 64K --otlp-timeout 2 \
	-- bash "$T/timed.sh" "$T/t1" > "$T/hang.json" 2> "$T/hang.err" ||
	fail "iotrace, collector hanging: exit $?"
stop_collector
python3 - "$T" <<'PY' || fail "a collector that never answers: $(cat "$T/hang.err")"
import re, sys
T = sys.argv[1]
d0, d1 = [(lambda s, e: e - s)(*map(float, open(T + f).read().split())) for f in ("/t0", "/t1")]
print("command: %.3f s without a collector, %.3f s with one that never answers" % (d0, d1))
assert d1 <= 3 * d0 + 2, "the command was slowed: %.3f s against %.3f s" % (d1, d0)
err = open(T + "/hang.err").read()
n = sum(1 for _ in open(T + "/hang.json"))
# The last POST given up at the end, or (the queue empty by then) before it.
m = re.search(r"iotrace: 0 spans sent, (\d+) dropped \(collector 127.0.0.1:\d+: no answer"
              r"( within 2000 ms at the end|: Connection timed out); queue of 65536 bytes "
              r"full for (\d+) spans\)", err)
assert m, err
assert int(m.group(1)) == n + 1 and 0 < int(m.group(3)) < n, (m.groups(), n)
assert n > 20000, "%d calls traced" % n
PY
ok "a collector that never answers: the command not slowed, every span dropped and counted"

"$IOTRACE" --otlp "http://127.0.0.1:$PORT" -- "$IOSEQ" "$T/f" "$T/missing" 2> "$T/down.err" ||
	fail "iotrace, no collector: exit $? ($(cat "$T/down.err"))"
grep -qx "iotrace: 0 spans sent, 8 dropped (collector 127.0.0.1:$PORT: connecting:\
 Connection refused)" \
	"$T/down.err" || fail "no collector: $(cat "$T/down.err")"
ok "no collector: the command runs, 8 spans dropped, said why"

# ---- bad usage ----
for bad in ftp://localhost:4318 localhost:4318 http://:4318 http://h:99999 http://h:x \
	'http://[::1' http://u:pw@h:1; do
	"$IOTRACE" --otlp "$bad" -- true 2> "$T/bad.err"; rc=$?
	[ $rc = 2 ] && [[ "$(cat "$T/bad.err")" == "iotrace: --otlp: '$bad': "* ]] ||
		fail "--otlp $bad: exit $rc, $(cat "$T/bad.err")"
done
"$IOTRACE" --otlp http://h:1 --otlp-queue 1K -- true 2> "$T/bad.err"; rc=$?
[ $rc = 2 ] || fail "--otlp-queue 1K: exit $rc"
ok "bad URLs and sizes: a clear error"
