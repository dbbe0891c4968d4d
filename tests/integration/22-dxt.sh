#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# iorun --trace (issue 16): the known sequence's three writes land in the
# .darshan log as one DXT_POSIX record of exactly those offsets and lengths,
# checked against darshan-dxt-log-format.h's layout with Python's zlib (no
# darshan-dxt-parser is packaged for Debian); the log's counters are iorun's
# --format darshan ones and `ioreport --compare` still reads it, every ratio
# 1; relative paths are named from the command's directory;
# --trace-max-events drops and says so, in the log's metadata too; lost and
# dropped events are always printed; bad usage is refused; without a daemon
# the command runs untraced, its exit status kept.
. "$(dirname "$0")/lib.sh"
IOREPORT=$abs_top_builddir/tools/ioreport
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
grep -q cgroup2 /proc/filesystems || skip "the tracer needs cgroup2"
# iorun's job cgroups are cgroup2 ones unless told (--cgroup-mode v1 below).
EXTRA_CONF="cgroup_mode = v2" setup
start_daemon
MNT=$(mount_of "$T")

# The checker (dxt.py) parses the log with zlib and struct alone, not our reader.
cp "$(dirname "$0")/dxt.py" "$T/dxt.py"

# ---- the known sequence: 3 writes of 100, 2000 and 30000 bytes ----
"$IORUN" --job-id 4922 --trace "$T/seq.darshan" -- "$IOSEQ" "$T/f" "$T/missing" > "$T/seq.out" 2> "$T/seq.err" ||
	fail "iorun --trace: exit $? ($(cat "$T/seq.err"))"
grep -q "^iorun: trace in $T/seq.darshan: 3 writes and 0 reads on 1 files; 0 events lost (ring buffer full), 0 dropped (past --trace-max-events 1000000)$" "$T/seq.err" ||
	fail "the trace's summary line: $(cat "$T/seq.err")"
python3 - "$T" <<'PY' || fail "the DXT records of the known sequence"
import socket, sys
sys.path.insert(0, sys.argv[1]); from dxt import log
T = sys.argv[1]
recs, run, meta, regions = log(T + "/seq.darshan")
assert regions == [1, 10, 15], "regions %s: wanted POSIX, DXT_POSIX, HEATMAP" % regions
assert len(recs) == 1, recs
d = recs[0]
assert d["path"] == T + "/f" and d["rank"] == 0 and d["shared"] == -1, d
assert d["host"] == socket.gethostname()[:63], d["host"]
assert [(w[0], w[1]) for w in d["w"]] == [(0, 100), (100, 2000), (2100, 30000)], d["w"]
assert d["r"] == [], d["r"]
times = [t for w in d["w"] for t in w[2:]]
assert times == sorted(times), "segments not in time order: %s" % d["w"]
assert 0 <= times[0] and times[-1] <= run, "segments %s outside the job's %g s" % (d["w"], run)
assert all(w[3] > w[2] for w in d["w"]), d["w"]
assert (meta["trace_lost"], meta["trace_dropped"], meta["trace_max_events"]) == ("0", "0", "1000000"), meta
assert int(meta["trace_events"]) >= 7, meta
PY
ok "known sequence: one DXT_POSIX record, exactly the 3 writes (offsets 0, 100, 2100; 100, 2000, 30000 bytes), in time order"

# The counters in the log are those of --format darshan; --compare reads the log.
"$IOREPORT" --format darshan -o "$T/job.darshan" 4922 || fail "ioreport --format darshan failed"
python3 - "$T" <<'PY' || fail "the counters of the traced log differ from ioreport's log"
import sys
d1, d2 = open(sys.argv[1] + "/seq.darshan", "rb").read(), open(sys.argv[1] + "/job.darshan", "rb").read()
import struct, zlib
def region(d, i):
    off, ln = struct.unpack_from("<QQ", d, 48 + 16 * i)
    return zlib.decompress(d[off:off + ln]) if ln else b""
assert region(d1, 1) == region(d2, 1), "POSIX records differ"
assert region(d1, 15) == region(d2, 15), "HEATMAP records differ"
PY
"$IOREPORT" --compare "$T/seq.darshan" 4922 > "$T/cmp.txt" || fail "ioreport --compare of the traced log failed"
grep -Eq '^POSIX_WRITES +3 +3 +1\.000000$' "$T/cmp.txt" || { cat "$T/cmp.txt"; fail "--compare: POSIX_WRITES is not 3 on both sides"; }
grep -Eq '^POSIX_BYTES_WRITTEN +32100 +32100 +1\.000000$' "$T/cmp.txt" || fail "--compare: POSIX_BYTES_WRITTEN is not 32100"
ok "the log's counters are --format darshan's; ioreport --compare reads it, ratios 1"

# ---- --trace-max-events: the rest dropped, said, and in the metadata; relative paths ----
(cd "$T" && "$IORUN" --trace "$T/cap.darshan" --trace-max-events 2 -- "$IOSEQ" g missing) > /dev/null 2> "$T/cap.err" ||
	fail "iorun --trace-max-events 2: exit $? ($(cat "$T/cap.err"))"
grep -q "^iorun: trace in $T/cap.darshan: 2 writes and 0 reads on 1 files; 0 events lost (ring buffer full), 1 dropped (past --trace-max-events 2)$" "$T/cap.err" ||
	fail "the capped trace's summary line: $(cat "$T/cap.err")"
python3 - "$T" <<'PY' || fail "the capped trace"
import sys
sys.path.insert(0, sys.argv[1]); from dxt import log
T = sys.argv[1]
recs, run, meta, regions = log(T + "/cap.darshan")
assert [r["path"] for r in recs] == [T + "/g"], [r["path"] for r in recs]
assert [(w[0], w[1]) for w in recs[0]["w"]] == [(0, 100), (100, 2000)], recs[0]["w"]
assert (meta["trace_dropped"], meta["trace_max_events"]) == ("1", "2"), meta
PY
ok "--trace-max-events 2: the first 2 writes kept, 1 dropped and said; a relative path named from the cwd"

# ---- a cgroup v1 job cgroup (--cgroup-mode v1): the tracer follows it there too ----
"$IORUN" --cgroup-mode v1 --job-id 4925 --trace "$T/v1.darshan" -- "$IOSEQ" "$T/v1f" "$T/missing" \
	> /dev/null 2> "$T/v1.err" || fail "iorun --cgroup-mode v1 --trace: exit $? ($(cat "$T/v1.err"))"
grep -q "^iorun: trace in $T/v1.darshan: 3 writes and 0 reads on 1 files; 0 events lost" "$T/v1.err" ||
	fail "iorun --cgroup-mode v1 --trace: $(cat "$T/v1.err")"
python3 - "$T" <<'PY' || fail "the DXT records of a v1 job"
import sys
sys.path.insert(0, sys.argv[1]); from dxt import log
T = sys.argv[1]
recs, run, meta, regions = log(T + "/v1.darshan")
assert [(r["path"], [(w[0], w[1]) for w in r["w"]]) for r in recs] == \
    [(T + "/v1f", [(0, 100), (100, 2000), (2100, 30000)])], recs
PY
ok "iorun --cgroup-mode v1 --trace: the job's v1 cgroup traced, its 3 writes exactly"

# ---- a chatty command: every write a segment at its offset ----
"$IORUN" --trace "$T/n.darshan" -- "$IOSEQ" -n 5000 "$T/n" > /dev/null 2> "$T/n.err" || fail "iorun of 5000 writes: exit $?"
python3 - "$T" "$(grep -o '[0-9]* events lost' "$T/n.err" | cut -d' ' -f1)" <<'PY' || fail "5000 writes: $(cat "$T/n.err")"
import sys
sys.path.insert(0, sys.argv[1]); from dxt import log
T, lost = sys.argv[1], int(sys.argv[2])
recs, run, meta, regions = log(T + "/n.darshan")
w = [s for r in recs if r["path"] == T + "/n" for s in r["w"]]
assert int(meta["trace_lost"]) == lost
# Without loss, every write; with loss (a busy machine), the count says how many are missing.
assert len(w) + lost >= 5000 and len(w) <= 5000, (len(w), lost)
if not lost:
    assert [s[0] for s in w] == list(range(5000)) and all(s[1] == 1 for s in w)
PY
ok "5000 one-byte writes: $(grep -o '[0-9]* events lost' "$T/n.err") and the rest, each at its offset"

# ---- an fd inherited from the parent process: no path known, no record, and said ----
"$IORUN" --trace "$T/inh.darshan" -- sh -c 'exec 3> "$0"; sh -c "echo hello >&3"' "$T/inh" > /dev/null 2> "$T/inh.err" ||
	fail "iorun --trace of an inherited fd: exit $? ($(cat "$T/inh.err"))"
grep -q '^iorun: trace: 1 reads and writes on fds whose open the process did not make under the trace (stdin, inherited fds) have no file, so no DXT record$' "$T/inh.err" ||
	fail "the write on an inherited fd is not said: $(cat "$T/inh.err")"
[ "$(cat "$T/inh")" = hello ] || fail "the command did not write"
ok "a write on an fd inherited from the parent: no DXT record, counted and said"

# ---- bad usage ----
for bad in 0 -1 x 1.5; do
	rc=0; "$IORUN" --trace "$T/x.darshan" --trace-max-events "$bad" -- true 2> "$T/err" || rc=$?
	[ $rc = 125 ] && grep -q "^iorun: --trace-max-events: '$bad' is not a positive integer$" "$T/err" ||
		fail "--trace-max-events $bad: exit $rc, $(cat "$T/err")"
done
[ ! -e "$T/x.darshan" ] || fail "a log written after bad usage"
rc=0; "$IORUN" --trace /nonexistent/dir/t.darshan -- true 2> "$T/err" || rc=$?
[ $rc = 0 ] || fail "an unwritable trace failed the command: exit $rc"
grep -q "^iorun: --trace: cannot .*/nonexistent/dir/t.darshan" "$T/err" || fail "an unwritable trace: $(cat "$T/err")"
ok "bad --trace-max-events refused (125); an unwritable log said, the command's status kept"

# ---- monitoring never breaks a job: no daemon, no trace, the command runs ----
rc=0; "$IORUN" --socket "$T/none.sock" --trace "$T/none.darshan" -- sh -c 'echo ran > "$0"; exit 3' "$T/ran" 2> "$T/err" || rc=$?
[ $rc = 3 ] && [ "$(cat "$T/ran")" = ran ] || fail "without a daemon: exit $rc, $(cat "$T/err")"
grep -q "^iorun: --trace: not tracing, the job is not monitored" "$T/err" || fail "without a daemon: $(cat "$T/err")"
[ ! -e "$T/none.darshan" ] || fail "a trace log without a job"
ok "no daemon: not tracing, said; the command ran with its own exit status"
