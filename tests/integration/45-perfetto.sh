#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# iotrace --perfetto (issue 27): the known sequence of calls as a Chrome
# trace-event JSON document, read back by python3's json module: exactly one
# "X" event per call with its name, times and args, "M" events naming the
# process and its thread; -p perfetto writes it to standard output; a trace
# interrupted (SIGINT, --pid) is still a whole document.
. "$(dirname "$0")/lib.sh"
IOTRACE=$abs_top_builddir/tools/iotrace
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
[ -x "$IOTRACE" ] || fail "$IOTRACE not built"
setup
MNT=$(mount_of "$T")

"$IOTRACE" --perfetto "$T/seq.json" -- "$IOSEQ" "$T/f" "$T/missing" \
	> "$T/seq.out" 2> "$T/seq.err" ||
	fail "iotrace --perfetto: exit $? ($(cat "$T/seq.err"))"
[ ! -s "$T/seq.out" ] && [ ! -s "$T/seq.err" ] ||
	fail "iotrace --perfetto printed something: $(cat "$T/seq.out" "$T/seq.err")"
"$IOTRACE" -p perfetto -- "$IOSEQ" "$T/f" "$T/missing" > "$T/stdout.json" ||
	fail "iotrace -p perfetto: exit $?"
python3 - "$T" "$MNT" <<'PY' || fail "the known sequence as trace events"
import json, sys
T, mnt = sys.argv[1], sys.argv[2]
for name in ("seq.json", "stdout.json"):
    doc = json.load(open(T + "/" + name))
    ev = doc["traceEvents"]
    meta = [e for e in ev if e["ph"] == "M"]
    calls = [e for e in ev if e["ph"] == "X"]
    assert len(meta) + len(calls) == len(ev), "only M and X events: %s" % ev
    pid = calls[0]["pid"]
    assert sorted((m["name"], m["pid"], m["tid"], m["args"]["name"]) for m in meta) == \
        [("process_name", pid, pid, "ioseq"), ("thread_name", pid, pid, "ioseq")], meta
    assert ev.index(meta[-1]) < ev.index(calls[0]), "a process is named before its calls"
    got = [(e["name"], e["args"]["file"], e["args"].get("offset"), e["args"]["bytes"],
            e["args"].get("errno")) for e in calls]
    want = [("open", T + "/f", None, 0, None),
            ("write", T + "/f", 0, 100, None),
            ("write", T + "/f", 100, 2000, None),
            ("write", T + "/f", 2100, 30000, None),
            ("fsync", T + "/f", None, 0, None),
            ("close", T + "/f", None, 0, None),
            ("open", T + "/missing", None, 0, "ENOENT")]
    assert got == want, "%s: events:\n%s\nwanted:\n%s" % (name, "\n".join(map(str, got)),
                                                          "\n".join(map(str, want)))
    fd = calls[0]["args"]["result"]
    res = [e["args"]["result"] for e in calls]
    assert fd >= 3 and res == [fd, 100, 2000, 30000, 0, 0, -2], calls
    assert all(e["pid"] == e["tid"] == pid and e["cat"] == "posix" for e in calls), calls
    assert all(e["args"]["mount"] == mnt for e in calls), calls
    ts = [e["ts"] for e in calls]
    assert ts == sorted(ts) and all(isinstance(t, float) for t in ts), ts
    assert all(e["dur"] > 0 for e in calls), [e["dur"] for e in calls]
    assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(calls, calls[1:])), "calls overlap"
PY
ok "known sequence: 7 X events exact (name, file, offset, bytes, result, errno), M events," \
	"to a file and to stdout"

# ---- interrupted: --pid of a writer, SIGINT once its writes are traced ----
: > "$T/w"
python3 -c '
import sys, time
while True:
    with open(sys.argv[1], "ab", buffering=0) as f:
        f.write(b"x\n")
    time.sleep(0.01)' "$T/w" &
W=$!
"$IOTRACE" --perfetto "$T/int.json" --pid $W 2> "$T/int.err" &
TR=$!
for _ in $(seq 1 600); do grep -q "tracing pid" "$T/int.err" && break; sleep 0.05; done
grep -q "tracing pid" "$T/int.err" || fail "iotrace --pid did not start: $(cat "$T/int.err")"
# Traced from here: wait until the writer appended 20 more lines.
n0=$(wc -l < "$T/w")
for _ in $(seq 1 600); do [ $(($(wc -l < "$T/w") - n0)) -ge 20 ] && break; sleep 0.05; done
kill -INT $TR
wait $TR; rc=$?
kill $W; wait $W 2>/dev/null
[ $rc = 0 ] || fail "iotrace --pid interrupted: exit $rc ($(cat "$T/int.err"))"
python3 - "$T" <<'PY' || fail "the interrupted trace"
import json, sys
T = sys.argv[1]
ev = json.load(open(T + "/int.json"))["traceEvents"]
writes = [e for e in ev
          if e["ph"] == "X" and e["name"] == "write" and e["args"]["file"] == T + "/w"]
assert len(writes) >= 20, "%d writes of the file traced" % len(writes)
assert all(e["args"]["bytes"] == 2 for e in writes), writes
PY
ok "interrupted (SIGINT): a whole JSON document, with the writes traced until then"

# ---- bad usage ----
"$IOTRACE" -p perfetto --json -- true 2> "$T/bad.err"; rc=$?
[ $rc = 2 ] && grep -q "would share standard output" "$T/bad.err" ||
	fail "-p perfetto with --json: exit $rc, $(cat "$T/bad.err")"
"$IOTRACE" --perfetto "$T/no/such/dir/x.json" -- true 2> "$T/bad.err"; rc=$?
[ $rc = 125 ] && grep -q "perfetto $T/no/such/dir/x.json: No such file" "$T/bad.err" ||
	fail "--perfetto in a missing directory: exit $rc, $(cat "$T/bad.err")"
ok "bad usage: a clear error"
