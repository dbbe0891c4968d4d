#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Cluster-wide queries (issue 13): two real ioacctds on this machine, node_name n1
# and n2, each with its own socket, store and pins, both exporting to one private
# PostgreSQL (scripts/pg.sh). Each runs an iorun job with the same job id writing
# different exact bytes; once both are exported:
#  1. ioacct -j through either daemon shows one job, the bytes summed exactly, its
#     NodeList both nodes; --nodes (or the Node field) one exact row per node;
#  2. private_data = yes (n2): a user sees their own job, summed over the nodes, and
#     nothing of root's;
#  3. PostgreSQL down: ioacct fails with a message saying so and how to read this
#     node's store (--local), which gives this node's part exactly; PostgreSQL back:
#     the whole job again, without restarting ioacctd.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
IOACCT=$abs_top_builddir/tools/ioacct
[ -x "$IOACCT" ] || fail "$IOACCT not built"
pg_find_bin || skip "PostgreSQL server not installed (Debian: postgresql)"
id postgres > /dev/null 2>&1 || skip "no postgres user (Debian: postgresql)"
command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
command -v runuser > /dev/null || skip "runuser is needed to run PostgreSQL and ioacct as other users"
command -v useradd > /dev/null || skip "useradd is needed to create an unprivileged user"
grep -q '^#define HAVE_LIBPQ 1' "$abs_top_builddir/ioacct-config.h" ||
	skip "ioacctd was built without libpq (Debian: libpq-dev, then rebuild)"

PGD=$(mktemp -d /var/tmp/ioacct-pg.XXXXXX)
chmod 755 "$PGD"
EXTRA_CONF="cluster_db = $(pg_url "$PGD")
node_name = n1"
setup
cleanup() {
	local rc=$?
	stop_daemon
	stop_node2
	node2_remove
	pg_stop "$PGD"
	rm -rf "$PGD" 2>/dev/null
	(exit $rc)
	teardown
}
trap cleanup EXIT
pg_init "$PGD" || fail "cannot start PostgreSQL in $PGD"

U=ioacct-test
id "$U" > /dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"
UID_U=$(id -u "$U")

# n2: the same cluster store, its own everything else, and private_data.
node2_setup n2 "private_data = yes"
# The user must reach the configurations and the sockets.
chmod 755 "$T" "$N2"

start_daemon
start_node2

D=$T/files
mkdir -p "$D"
MNT=$(mount_of "$D")

# run_on CONF JOB SIZE COUNT: an iorun job through that daemon writing COUNT x SIZE bytes.
run_on() {
	IOACCT_CONF=$1 "$IORUN" --job-id "$2" -o /dev/null -- "$IOWORK" write "$D/f-$2-$RANDOM" "$3" "$4" ||
		fail "iorun job $2 on $1 failed"
}
# wait_drained DB: until that node's outbox is empty.
wait_drained() {
	for _ in $(seq 1 600); do
		[ "$(sqlite3 "$1" 'SELECT count(*) FROM export_queue')" = 0 ] && return 0
		sleep 0.1
	done
	fail "jobs of $1 still wait for the cluster store after 60 s"
}
pg() { runuser -u postgres -- "$PGBIN/psql" -h "$PGD" -d ioacct -tAq -c "$1"; }

# expect_lines WHAT FILE LINE...: FILE holds exactly these lines, in this order.
expect_lines() {
	local what=$1 file=$2
	shift 2
	if [ $# -eq 0 ]; then : > "$T/expected"; else printf '%s\n' "$@" > "$T/expected"; fi
	diff -u "$T/expected" "$file" > "$T/diff" || { cat "$T/diff"; fail "$what"; }
}
# q CONF ARGS...: ioacct through that node's daemon; the rows on $MNT, job rows only.
q() {
	local conf=$1
	shift
	IOACCT_CONF=$conf "$IOACCT" -X -n -P "$@" > "$T/raw" || { cat "$T/raw"; fail "ioacct $* failed"; }
	grep -F "|$MNT|" "$T/raw" > "$T/out" || :
}

# Job 7001 on both nodes (root's), job 7002 on both nodes (the user's, below).
run_on "$CONF" 7001 1048576 3
run_on "$CONF2" 7001 4096 5
run_on "$CONF" 7002 65536 2
run_on "$CONF2" 7002 1000 7
wait_drained "$T/ioacct.db"
wait_drained "$N2/ioacct.db"
[ "$(pg 'SELECT count(*) FROM jobs WHERE job_id IN (7001, 7002)')" = 4 ] ||
	fail "PostgreSQL has $(pg 'SELECT count(*) FROM jobs WHERE job_id IN (7001, 7002)') rows of jobs 7001 and 7002, not 4"
# Job 7002 becomes the user's, on both nodes, as if Slurm had run it for them.
pg "UPDATE jobs SET uid = $UID_U, \"user\" = '$U' WHERE job_id = 7002" > /dev/null ||
	fail "cannot give job 7002 to $U"

# ---- 1. whole jobs through either daemon; per node on demand -------------------------
for c in "$CONF" "$CONF2"; do
	q "$c" -j 7001 -o JobID,NodeList,Mount,WriteBytes --mounts
	expect_lines "ioacct -j 7001 through $c: one job, summed" "$T/out" "7001|n1,n2|$MNT|3166208"
	q "$c" -j 7001 -o JobID,Node,Mount,WriteBytes --mounts
	expect_lines "ioacct -j 7001 -o Node through $c: one row per node" "$T/out" \
		"7001|n1|$MNT|3145728" "7001|n2|$MNT|20480"
	q "$c" -j 7001 --nodes -o JobID,NodeList,Mount,WriteBytes,Writes --mounts
	expect_lines "ioacct -j 7001 --nodes through $c" "$T/out" \
		"7001|n1|$MNT|3145728|3" "7001|n2|$MNT|20480|5"
done
# Without a job id: every job of the window, each once.
q "$CONF" -S now-1hours -o JobID,NodeList,Mount,WriteBytes --mounts
expect_lines "ioacct -S now-1hours: each job once, summed" "$T/out" \
	"7001|n1,n2|$MNT|3166208" "7002|n1,n2|$MNT|138072"
ok "ioacct -j through either node: the whole job, exact; --nodes and Node: one exact row per node"

# A running job is in no cluster store yet: its node lists it (its part), after the others.
mkfifo "$T/go"
IOACCT_CONF=$CONF "$IORUN" --job-id 7004 -o /dev/null -- "$IOWORK" write "$D/r" 4096 2 , wait < "$T/go" &
RUNNING=$!
exec 9> "$T/go"
for _ in $(seq 1 300); do
	q "$CONF" -S now-1hours -o JobID,NodeList,Mount,WriteBytes,State --mounts
	grep -q "^7004|n1|$MNT|8192|RUNNING$" "$T/out" && break
	sleep 0.1
done
expect_lines "a running job after the cluster's" "$T/out" \
	"7001|n1,n2|$MNT|3166208|COMPLETED" "7002|n1,n2|$MNT|138072|COMPLETED" "7004|n1|$MNT|8192|RUNNING"
q "$CONF2" -S now-1hours -o JobID,Mount,WriteBytes --mounts
expect_lines "n2 does not run job 7004" "$T/out" "7001|$MNT|3166208" "7002|$MNT|138072"
echo go >&9
exec 9>&-
wait $RUNNING || fail "iorun 7004 failed"
wait_drained "$T/ioacct.db"
q "$CONF" -j 7004 -o JobID,NodeList,Mount,WriteBytes,State --mounts
expect_lines "job 7004 finished: from the cluster store" "$T/out" "7004|n1|$MNT|8192|COMPLETED"
ok "a running job: listed by its node (its part) after the cluster store's, then from the cluster store"

# ---- 2. private_data = yes: a user sees their own jobs, cluster-wide -----------------
as_user() { runuser -u "$U" -- env IOACCT_CONF="$CONF2" "$@"; }
as_user "$IOACCT" -S now-1hours -X -n -P -o JobID,User,NodeList,Mount,WriteBytes --mounts > "$T/raw" ||
	{ cat "$T/raw"; fail "user ioacct (private) failed"; }
grep -F "|$MNT|" "$T/raw" > "$T/out" || :
expect_lines "private: the user's own job, summed over the nodes" "$T/out" "7002|$U|n1,n2|$MNT|138072"
as_user "$IOACCT" -j 7001 -X -n -P -o JobID > "$T/out" || fail "user ioacct -j 7001 failed"
expect_lines "private: root's job is not there for the user" "$T/out"
as_user "$IOACCT" -u root -S now-1hours -X -n -P -o JobID > "$T/out" || fail "user ioacct -u root failed"
expect_lines "private: -u root gives the user nothing" "$T/out"
as_user "$IOACCT" -j 7002 --nodes -X -n -P -o JobID,Node,Mount,WriteBytes --mounts > "$T/raw" ||
	fail "user ioacct --nodes failed"
grep -F "|$MNT|" "$T/raw" > "$T/out" || :
expect_lines "private: the user's job per node" "$T/out" "7002|n1|$MNT|131072" "7002|n2|$MNT|7000"
q "$CONF2" -S now-1hours -o JobID,Mount,WriteBytes --mounts
expect_lines "private: root sees every job" "$T/out" "7001|$MNT|3166208" "7002|$MNT|138072" \
	"7004|$MNT|8192"
ok "private_data = yes: a user sees only their own jobs, whole, cluster-wide"

# ---- ioreport: the whole job, its series the nodes' summed bin by bin -----------------
IOREPORT=$abs_top_builddir/tools/ioreport
# report_bytes JSON: "WRITE-BYTES SERIES-SUM WRITES SERIES-WRITES" on $MNT.
report_bytes() {
	python3 - "$1" "$MNT" << 'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = [m for m in j["mounts"] if m["mount"] == sys.argv[2]][0]
s = [s for s in j["series"]["mounts"] if s["mount"] == sys.argv[2]][0]
print(m["write_bytes"], sum(s["write_bytes"]), m["writes"], sum(s["writes"]))
PY
}
for c in "$CONF" "$CONF2"; do
	IOACCT_CONF=$c "$IOREPORT" --format json -o "$T/r.json" 7001 || fail "ioreport 7001 through $c failed"
	[ "$(report_bytes "$T/r.json")" = "3166208 3166208 8 8" ] ||
		fail "ioreport 7001 through $c: $(report_bytes "$T/r.json"), not 3166208 bytes in 8 writes, series too"
done
IOACCT_CONF=$CONF "$IOREPORT" --local --format json -o "$T/r.json" 7001 || fail "ioreport --local failed"
[ "$(report_bytes "$T/r.json")" = "3145728 3145728 3 3" ] ||
	fail "ioreport --local 7001 on n1: $(report_bytes "$T/r.json"), not n1's 3145728 bytes in 3 writes"
runuser -u "$U" -- env IOACCT_CONF="$CONF2" "$IOREPORT" --format json 7002 > "$T/r.json" ||
	fail "user ioreport 7002 (private) failed"
[ "$(report_bytes "$T/r.json")" = "138072 138072 9 9" ] ||
	fail "user ioreport 7002: $(report_bytes "$T/r.json"), not 138072 bytes in 9 writes"
rc=0
runuser -u "$U" -- env IOACCT_CONF="$CONF2" "$IOREPORT" 7001 > /dev/null 2> "$T/err" || rc=$?
[ $rc = 1 ] && grep -q 'belongs to another user' "$T/err" ||
	{ cat "$T/err"; fail "user ioreport of root's job 7001: exit $rc, not refused"; }
ok "ioreport through either node: the whole job, exact, series summed; --local: the node's; private"

# ---- a job of one node from the cluster store: its per-file records from that node's store
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
run_on "$CONF" 7005 4096 6
wait_drained "$T/ioacct.db"
[ "$(pg 'SELECT count(*) FROM jobs WHERE job_id = 7005')" = 1 ] || fail "job 7005 not in PostgreSQL"
IOACCT_CONF=$CONF "$IOREPORT" --format darshan -o "$T/c.darshan" 7005 ||
	fail "ioreport --format darshan 7005 (cluster store) failed"
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/l.darshan" 7005 ||
	fail "ioreport --db --format darshan 7005 failed"
"$DXTDUMP" --posix "$T/c.darshan" | tail -n +2 > "$T/c.dump" || fail "dxtdump --posix failed"
"$DXTDUMP" --posix "$T/l.darshan" | tail -n +2 > "$T/l.dump" || fail "dxtdump --posix failed"
cmp "$T/c.dump" "$T/l.dump" || fail "job 7005 from the cluster store: POSIX records not the node's store's"
python3 - "$T/c.dump" <<'PY' || fail "job 7005 from the cluster store: no exact record of its file"
import json, sys
r = [json.loads(x) for x in open(sys.argv[1])]
f = [x for x in r if "/f-7005-" in x["name"]]
assert len(f) == 1 and f[0]["c"]["POSIX_BYTES_WRITTEN"] == 24576 and f[0]["c"]["POSIX_WRITES"] == 6, f
PY
ok "a job of one node from the cluster store: its per-file records, the node's store's, exact"

# ---- ioreport: the nodes' bins aligned on the earliest node's start ------------------
# Each node counts bins from its own start. Move n2's part of job 7001 to 2.5 bins after
# n1's: its bin b must land on bin b + 2 of the whole job, the 0.5 bin of rest said as skew.
# series_of JSON [SHIFT]: "bin:writes:write_bytes" on $MNT, one line per bin with writes,
# every bin moved by SHIFT.
series_of() {
	python3 - "$1" "$MNT" "${2:-0}" << 'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = [s for s in j["series"]["mounts"] if s["mount"] == sys.argv[2]][0]
for b, w, wb in zip(s["bin"], s["writes"], s["write_bytes"]):
    if w:
        print("%d:%d:%d" % (b + int(sys.argv[3]), w, wb))
PY
}
# skew_of JSON: the report's skew_ns, "None" without.
skew_of() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("skew_ns"))' "$1"
}
W=$(pg "SELECT bin_width_ns FROM jobs WHERE job_id = 7001 AND node = 'n1'")
[ "$(pg "SELECT count(DISTINCT bin_width_ns) FROM jobs WHERE job_id = 7001")" = 1 ] ||
	fail "the parts of job 7001 have different bin widths"
pg "UPDATE jobs SET start_ns = (SELECT start_ns FROM jobs WHERE job_id = 7001 AND node = 'n1')
	+ 5 * $W / 2 WHERE job_id = 7001 AND node = 'n2'" > /dev/null || fail "cannot move n2's part of 7001"
IOACCT_CONF=$CONF "$IOREPORT" --local --format json -o "$T/r1.json" 7001 || fail "ioreport --local on n1 failed"
IOACCT_CONF=$CONF2 "$IOREPORT" --local --format json -o "$T/r2.json" 7001 || fail "ioreport --local on n2 failed"
[ "$(skew_of "$T/r1.json")" = None ] || fail "ioreport --local of one node reports a skew"
{ series_of "$T/r1.json"; series_of "$T/r2.json" 2; } | python3 -c '
import sys
t = {}
for l in sys.stdin:
    b, w, wb = map(int, l.split(":"))
    o = t.get(b, (0, 0))
    t[b] = (o[0] + w, o[1] + wb)
for b in sorted(t):
    print("%d:%d:%d" % (b, t[b][0], t[b][1]))' > "$T/expected-series"
grep -q . "$T/expected-series" || fail "the nodes' reports of 7001 have no write in their series"
for c in "$CONF" "$CONF2"; do
	IOACCT_CONF=$c "$IOREPORT" --format json -o "$T/r.json" 7001 || fail "ioreport 7001 through $c failed"
	series_of "$T/r.json" > "$T/series"
	diff -u "$T/expected-series" "$T/series" ||
		fail "ioreport 7001 through $c: n2's bins not moved by 2 onto n1's start"
	[ "$(report_bytes "$T/r.json")" = "3166208 3166208 8 8" ] ||
		fail "ioreport 7001 through $c, aligned: $(report_bytes "$T/r.json")"
	[ "$(skew_of "$T/r.json")" = $((W / 2)) ] ||
		fail "ioreport 7001 through $c: skew_ns $(skew_of "$T/r.json"), not $((W / 2))"
done
IOACCT_CONF=$CONF "$IOREPORT" 7001 > "$T/r.txt" || fail "ioreport 7001 (text) failed"
grep -q '^# node skew: ' "$T/r.txt" || { head -30 "$T/r.txt"; fail "the text report does not say the skew"; }
ok "ioreport: the nodes' bins aligned on the earliest node's start, exact; the skew said"

# ---- ioreport: one row per node, exact, each its node's own report's totals -----------
# nodes_of JSON...: "node:read_bytes:write_bytes:reads:writes:time_ns" of each node row,
# or of the totals of each single-node report given.
nodes_of() {
	python3 - "$@" << 'PY'
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f))
    for n in j.get("nodes") or [dict(j["totals"], node=j["node"])]:
        print("%s:%d:%d:%d:%d:%d" % (n["node"], n["read_bytes"], n["write_bytes"], n["reads"],
                                     n["writes"], n["time_ns"]))
PY
}
nodes_of "$T/r1.json" "$T/r2.json" > "$T/expected-nodes"
grep -q '^n1:[0-9]*:3145728:[0-9]*:3:' "$T/expected-nodes" && grep -q '^n2:[0-9]*:20480:[0-9]*:5:' "$T/expected-nodes" ||
	{ cat "$T/expected-nodes"; fail "the nodes' own reports of 7001 are not 3145728 and 20480 bytes written"; }
for c in "$CONF" "$CONF2"; do
	IOACCT_CONF=$c "$IOREPORT" --format json -o "$T/r.json" 7001 || fail "ioreport 7001 through $c failed"
	nodes_of "$T/r.json" > "$T/nodes"
	diff -u "$T/expected-nodes" "$T/nodes" || fail "ioreport 7001 through $c: the node rows are not each node's own"
done
IOACCT_CONF=$CONF "$IOREPORT" 7001 > "$T/r.txt" || fail "ioreport 7001 (text) failed"
S2=$(python3 -c "print('%.3f' % ($W * 5 / 2 / 1e9))")
grep -q '^## Nodes' "$T/r.txt" && grep -Eq "^n2 +${S2//./\\.} " "$T/r.txt" ||
	{ sed -n '/^## Nodes/,/^$/p' "$T/r.txt"; fail "the text report has no node rows, or n2 not 2.5 bins after n1"; }
# One node alone: no node rows.
python3 -c 'import json, sys; sys.exit("nodes" in json.load(open(sys.argv[1])))' "$T/r1.json" ||
	fail "ioreport --local of one node has node rows"
# The HTML report: the same rows in its Nodes table (bytes exact, time to the microsecond),
# the slowest node marked, the skew said.
IOACCT_CONF=$CONF "$IOREPORT" --format html -o "$T/r.html" 7001 || fail "ioreport --format html 7001 failed"
python3 - "$T/r.html" > "$T/html-nodes" << 'PY' || fail "the HTML report has no Nodes table"
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.on, self.row, self.cell, self.th = [], False, None, None, None
        self.slow, self.skew, self.cls = None, False, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "table":
            self.on = a.get("id") == "nodes-table"
        elif self.on and tag == "tr":
            self.row, self.cls = [], a.get("class")
        elif self.on and tag == "td" and self.row is not None:
            self.cell = ""
        elif tag == "th":
            self.th = ""
    def handle_endtag(self, tag):
        if tag == "table":
            self.on = False
        elif self.on and tag == "td" and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif self.on and tag == "tr" and self.row:
            self.rows.append(self.row)
            if self.cls == "slowest":
                self.slow = self.row[0]
            self.row = None
        elif tag == "th" and self.th is not None:
            self.skew = self.skew or self.th.strip() == "Node skew"
            self.th = None
    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d
        if self.th is not None:
            self.th += d
p = P()
p.feed(open(sys.argv[1]).read())
if not p.rows:
    sys.exit(1)
for r in p.rows:
    print("%s:%d:%d:%d:%d:%d" % (r[0], int(r[2].split()[0]), int(r[3].split()[0]), int(r[4]),
                                 int(r[5]), round(float(r[6]) * 1e6)))
print("slowest:%s" % p.slow)
print("skew:%s" % p.skew)
PY
python3 - "$T/expected-nodes" > "$T/expected-html" << 'PY'
import sys
rows = [l.strip().split(":") for l in open(sys.argv[1]) if l.strip()]
for r in rows:
    print("%s:%s:%s:%s:%s:%d" % (r[0], r[1], r[2], r[3], r[4], (int(r[5]) + 500) // 1000))
print("slowest:%s" % max(rows, key=lambda r: int(r[5]))[0])
print("skew:True")
PY
diff -u "$T/expected-html" "$T/html-nodes" ||
	fail "the HTML report's Nodes table is not each node's own totals, or the slowest node or the skew is wrong"
ok "ioreport: one exact row per node, each its node's own totals (text, JSON, HTML)"

# ---- ioreport --compare on the whole job: ours summed over the nodes -------------------
# Against n1's part as a Darshan log (what a log of only n1's ranks would say): ours is the
# whole job (3166208 bytes in 8 writes), Darshan's n1's 3145728 in 3; against the whole job's
# own log every figure is equal.
IOACCT_CONF=$CONF "$IOREPORT" --local --format darshan -o "$T/n1.darshan" 7001 ||
	fail "ioreport --local --format darshan 7001 failed"
IOACCT_CONF=$CONF "$IOREPORT" --format darshan -o "$T/all.darshan" 7001 ||
	fail "ioreport --format darshan 7001 (whole job) failed"
IOACCT_CONF=$CONF2 "$IOREPORT" --compare "$T/n1.darshan" 7001 > "$T/cmp.txt" ||
	fail "ioreport --compare 7001 through n2 failed"
grep -Eq '^POSIX_BYTES_WRITTEN +3166208 +3145728 ' "$T/cmp.txt" &&
	grep -Eq '^POSIX_WRITES +8 +3 ' "$T/cmp.txt" ||
	{ grep -E '^POSIX_(BYTES_WRITTEN|WRITES) ' "$T/cmp.txt"; fail "--compare of the whole job with n1's log: ours is not the whole job"; }
IOACCT_CONF=$CONF2 "$IOREPORT" --compare "$T/all.darshan" 7001 > "$T/cmp.txt" ||
	fail "ioreport --compare 7001 with its own log failed"
grep -Eq '^POSIX_BYTES_WRITTEN +3166208 +3166208 +1\.000000$' "$T/cmp.txt" &&
	grep -Eq '^POSIX_WRITES +8 +8 +1\.000000$' "$T/cmp.txt" ||
	{ grep -E '^POSIX_(BYTES_WRITTEN|WRITES) ' "$T/cmp.txt"; fail "--compare of the whole job with its own log is not equal"; }
ok "ioreport --compare on a multi-node job: ours is the whole job, exact"

# ---- 3. PostgreSQL down: an error saying so; --local; back again ---------------------
pg_stop "$PGD"
for attempt in 1 2; do
	if IOACCT_CONF=$CONF "$IOACCT" -j 7001 -X -n -P > "$T/out" 2> "$T/err"; then
		fail "ioacct -j 7001 succeeded with PostgreSQL down (attempt $attempt): $(cat "$T/out")"
	fi
	[ "$(wc -l < "$T/err")" = 1 ] || { cat "$T/err"; fail "PostgreSQL down: not one line of error"; }
	grep -q 'cluster store (cluster_db) unavailable: .*ioacct --local' "$T/err" ||
		{ cat "$T/err"; fail "PostgreSQL down: the error does not say so (attempt $attempt)"; }
done
q "$CONF" --local -j 7001 -o JobID,NodeList,Mount,WriteBytes --mounts
expect_lines "--local with PostgreSQL down: this node's part" "$T/out" "7001|n1|$MNT|3145728"
rc=0
IOACCT_CONF=$CONF "$IOREPORT" 7001 > /dev/null 2> "$T/err" || rc=$?
[ $rc = 1 ] && grep -q 'cluster store (cluster_db) unavailable: .*ioreport --local' "$T/err" ||
	{ cat "$T/err"; fail "ioreport with PostgreSQL down: exit $rc, or the error does not say so"; }
IOACCT_CONF=$CONF "$IOREPORT" --local --format json -o "$T/r.json" 7001 ||
	fail "ioreport --local with PostgreSQL down failed"
[ "$(report_bytes "$T/r.json")" = "3145728 3145728 3 3" ] ||
	fail "ioreport --local 7001 with PostgreSQL down: $(report_bytes "$T/r.json")"
# A job run now still gets its exact report from iorun (this node's store, by key).
IOACCT_CONF=$CONF "$IORUN" --job-id 7003 --json -o "$T/r.json" -- "$IOWORK" write "$D/g" 4096 3 ||
	fail "iorun with PostgreSQL down failed"
[ "$(report_bytes "$T/r.json")" = "12288 12288 3 3" ] ||
	fail "iorun's report with PostgreSQL down: $(report_bytes "$T/r.json"), not 12288 bytes in 3 writes"
q "$CONF2" --local -j 7001 -o JobID,NodeList,Mount,WriteBytes --mounts
expect_lines "--local on n2: n2's part" "$T/out" "7001|n2|$MNT|20480"
pg_start "$PGD" || fail "cannot start PostgreSQL again"
q "$CONF" -j 7001 -o JobID,NodeList,Mount,WriteBytes --mounts
expect_lines "PostgreSQL back: the whole job again" "$T/out" "7001|n1,n2|$MNT|3166208"
ok "PostgreSQL down: a one-line error naming the way out (--local, exact); back: whole jobs again"
exit 0
