#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# RPC rows in the cluster store (issue 40; PostgreSQL schema 20). No NFS here: a real
# ioacctd exports to a private PostgreSQL (scripts/pg.sh) iorun jobs (1 s bins) whose
# RPC rows are written into the node's SQLite store by hand, the daemon stopped, and the
# job queued again: step 0's WRITEs in bins 0, 1, 2 (1, 2, 3 calls), 5 LOOKUPs in bin 0,
# 2 calls of a procedure whose name is not UTF-8 ("WR\xff"), 124 WRITEs no job sent.
#  1. Job 8101: PostgreSQL's rpc rows are the node's SQLite rows, every column (the
#     name's bytes too), in the partition of the job's month; rpc_kept true.
#  2. The store put back to schema 19 (no rpc, no jobs.rpc_kept): the daemon's next
#     connection migrates it to 20; 8101, written before, has none kept there and its
#     report, read through the cluster store, takes them from this node's store.
#  3. Job 8102, exported at schema 20, its rows gone from SQLite: its report read from the
#     cluster store has the node store's rpc, rpc_unattributed and rpc_series (JSON) and
#     Server calls (text), exact; ioacct's RPC fields from the cluster store too (8101's,
#     not kept there, blank).
#  4. Its part copied in SQL as its run's part on a node n2 that started 2 s (2 bins)
#     later, with other mount ids (mounts matched by path): the merged report sums both
#     parts' rows per procedure, n2's bins 2 later, the unattributed in bin 0; so does
#     ioacct's listing.
#  5. A downsample to 2 s bins re-bins each part's rows exactly (bin 0 keeps the
#     unattributed); a purge takes the rows with their jobs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOREPORT=$abs_top_builddir/tools/ioreport
IOACCT=$abs_top_builddir/tools/ioacct
PGPURGE=$abs_top_builddir/tests/integration/pgpurge
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$PGPURGE" ] || fail "$PGPURGE not built (make -C tests/integration pgpurge)"

pg_test_setup
start_daemon

# rpcjob ID: job ID writes a file under $D, exported; then its RPC rows put into the
# node's store (the daemon stopped) and the job queued again, exported again with them.
rpcjob() {
	local key mnt
	"$IORUN" --job-id "$1" --bin-width 1 -- "$IOWORK" write "$D/$1" 4096 10 > "$T/$1.out" 2>&1 ||
		{ cat "$T/$1.out"; fail "iorun (job $1) failed"; }
	wait_exported "$DB" "job $1"
	stop_daemon
	key=$(sqlite3 "$DB" "SELECT key FROM jobs WHERE job_id = $1")
	mnt=$(sqlite3 "$DB" "SELECT mnt_id FROM totals WHERE job_key = $key AND op = 1")
	[ -n "$mnt" ] || fail "job $1 wrote on no mount"
	sqlite3 "$DB" "INSERT INTO rpc (job_key, step_id, mnt_id, prog, vers, proc, flags, bin, calls,
		bytes_sent, bytes_recv, queue_ns, rtt_ns, execute_ns, errors, retrans, name) VALUES
		($key, 0, $mnt, 100003, 4, 38, 0, 0, 1, 1000, 100, 10, 20000, 30000, 0, 0, 'WRITE'),
		($key, 0, $mnt, 100003, 4, 38, 0, 1, 2, 2000, 200, 20, 40000, 60000, 1, 1, 'WRITE'),
		($key, 0, $mnt, 100003, 4, 38, 0, 2, 3, 3000, 300, 30, 60000, 90000, 0, 2, 'WRITE'),
		($key, 0, $mnt, 100003, 4, 16, 0, 0, 5, 500, 600, 0, 5000, 6000, 5, 0, 'LOOKUP'),
		($key, 0, $mnt, 100003, 4, 99, 0, 1, 2, 7, 8, 0, 0, 0, 0, 0, CAST(X'5752FF' AS TEXT)),
		($key, 0, $mnt, 100003, 4, 38, 1, 0, 124, 7936000, 14880, 0, 0, 0, 0, 0, 'WRITE');
		INSERT INTO export_queue (job_key) VALUES ($key)" || fail "cannot write job $1's RPC rows"
	start_daemon
	wait_exported "$DB" "job $1 again"
}
COLS="r.step_id, r.prog, r.vers, r.proc, r.flags, r.bin, r.calls, r.bytes_sent, r.bytes_recv,"
COLS+=" r.queue_ns, r.rtt_ns, r.execute_ns, r.errors, r.retrans"
# sqlite_rpc JOB, pg_rpc JOB: the job's RPC rows, every column (the mount by its path, the
# name's bytes in hex), one line each, sorted.
sqlite_rpc() {
	sqlite3 -separator '|' "$DB" "SELECT $COLS, m.path, lower(hex(r.name)) FROM rpc r
		JOIN jobs j ON j.key = r.job_key JOIN mounts m ON m.job_key = r.job_key
		AND m.mnt_id = r.mnt_id WHERE j.job_id = $1" | LC_ALL=C sort
}
pg_rpc() {
	pg "SELECT $COLS, m.path, encode(coalesce(r.name_raw, convert_to(r.name, 'UTF8')), 'hex')
	    FROM rpc r JOIN jobs j ON j.id = r.job JOIN mounts m ON m.job = r.job
	    AND m.mnt_id = r.mnt_id WHERE j.job_id = $1" | LC_ALL=C sort
}
# rpc_part JSON: the report's RPC part (every mount's rpc and rpc_unattributed, rpc_series).
rpc_part() {
	/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({"mounts": {m["mount"]: [m["rpc"], m["rpc_unattributed"]] for m in j["mounts"]},
                  "series": j["rpc_series"]}, sort_keys=True, indent=1))' "$1"
}
# check_json JSON K: the report's RPC rows of the job's mount, exact, K nodes' summed.
check_json() {
	/usr/bin/python3 - "$1" "$2" "$MNT" <<'PY' || fail "$1: the report's RPC rows are not exact"
import json, sys
j = json.load(open(sys.argv[1]))
k = int(sys.argv[2])
m = [x for x in j["mounts"] if x["mount"] == sys.argv[3]]
assert len(m) == 1, [x["mount"] for x in j["mounts"]]
m = m[0]
w = {"calls": 6, "bytes_sent": 6000, "bytes_recv": 600, "queue_ns": 60, "rtt_ns": 120000,
     "execute_ns": 180000, "errors": 1, "retrans": 3, "program": 100003, "version": 4}
l = {"calls": 5, "bytes_sent": 500, "bytes_recv": 600, "queue_ns": 0, "rtt_ns": 5000,
     "execute_ns": 6000, "errors": 5, "retrans": 0, "program": 100003, "version": 4}
x = {"calls": 2, "bytes_sent": 7, "bytes_recv": 8, "queue_ns": 0, "rtt_ns": 0,
     "execute_ns": 0, "errors": 0, "retrans": 0, "program": 100003, "version": 4}
times = lambda d: {a: b * k if a not in ("program", "version") else b for a, b in d.items()}
assert m["rpc"] == {"WRITE": times(w), "LOOKUP": times(l), "WR\ufffd": times(x)}, m["rpc"]
assert list(m["rpc"]) == ["WRITE", "LOOKUP", "WR\ufffd"], list(m["rpc"])
assert m["rpc_unattributed"]["WRITE"]["calls"] == 124 * k, m["rpc_unattributed"]
PY
}

# ---- 1. exported with its RPC rows ----------------------------------------------------
rpcjob 8101
sqlite_rpc 8101 > "$T/sqlite-8101"
pg_rpc 8101 > "$T/pg-8101"
[ "$(wc -l < "$T/sqlite-8101")" = 6 ] || fail "the node's store has not 6 RPC rows of job 8101"
diff "$T/sqlite-8101" "$T/pg-8101" ||
	fail "job 8101: PostgreSQL's RPC rows differ from the node's (SQLite, then PostgreSQL)"
grep -q '|5752ff$' "$T/pg-8101" || fail "the name's bytes that are not UTF-8 were not kept"
month=$(pg "SELECT ioacct_block_name((id >> 33)::integer) FROM jobs WHERE job_id = 8101")
[ "$(pg "SELECT count(*) FROM rpc_$month")" = 6 ] ||
	fail "the RPC rows are not in the partition of their month ($month)"
[ "$(pg "SELECT rpc_kept FROM jobs WHERE job_id = 8101")" = t ] || fail "job 8101: rpc_kept is not true"
ok "PostgreSQL holds job 8101's 6 RPC rows as SQLite does (a name's bytes too), in rpc_$month"

# ---- 2. schema 19's store migrated, its part read from the node ----------------------
stop_daemon
pg_back_to_schema19 || fail "cannot put PostgreSQL back to schema 19"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 19 ] || fail "the store is not at schema 19"
[ "$(pg "SELECT to_regclass('rpc') IS NULL")" = t ] || fail "rpc still there"
nparts=$(pg "SELECT count(*) FROM jobs")
start_daemon
"$IOREPORT" --format json -o "$T/m-8101.json" 8101 || fail "ioreport 8101 (after schema 19) failed"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] ||
	fail "PostgreSQL was not migrated to $PG_SCHEMA"
[ "$(pg "SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT rpc_kept) FROM jobs")" = "$nparts $nparts" ] ||
	fail "schema 19's $nparts parts not kept, or said to have their RPC rows"
[ "$(pg "SELECT count(*) FROM rpc")" = 0 ] || fail "rpc not empty after the migration"
[ "$(pg "SELECT count(*) FROM rpc_$month")" = 0 ] ||
	fail "the migration made no partition of rpc for $month"
check_json "$T/m-8101.json" 1
ok "schema 19 migrated to $PG_SCHEMA: $nparts parts kept, none with RPC rows there;" \
	"job 8101's report takes them from this node's store, exact"

# ---- 3. the cluster store's report is the node store's --------------------------------
rpcjob 8102
diff <(sqlite_rpc 8102) <(pg_rpc 8102) || fail "job 8102: PostgreSQL's RPC rows differ from SQLite's"
"$IOREPORT" --db "$DB" --format json -o "$T/db-8102.json" 8102 || fail "ioreport --db 8102 failed"
"$IOREPORT" --db "$DB" -o "$T/db-8102.txt" 8102 || fail "ioreport --db 8102 (text) failed"
# Nothing of them left in SQLite: what follows is PostgreSQL's.
sqlite3 "$DB" "DELETE FROM rpc" || fail "cannot empty SQLite's RPC rows"
"$IOREPORT" --format json -o "$T/pg-8102.json" 8102 || fail "ioreport 8102 failed"
"$IOREPORT" -o "$T/pg-8102.txt" 8102 || fail "ioreport 8102 (text) failed"
check_json "$T/pg-8102.json" 1
cmp -s <(rpc_part "$T/db-8102.json") <(rpc_part "$T/pg-8102.json") ||
	{ diff <(rpc_part "$T/db-8102.json") <(rpc_part "$T/pg-8102.json") | head -20
	  fail "job 8102: the cluster store's RPC part differs from the node store's"; }
section() { sed -n '/^## Server calls/,/^$/p' "$1"; }
grep -q "^## Server calls: " "$T/pg-8102.txt" || fail "no Server calls in the cluster store's text report"
cmp -s <(section "$T/db-8102.txt") <(section "$T/pg-8102.txt") ||
	{ diff <(section "$T/db-8102.txt") <(section "$T/pg-8102.txt"); fail "job 8102: the text's Server calls differ"; }
# ioacct's listing from the cluster store: the job's own RPCs (124 no job sent left out).
F=JobID,RPCCalls,RPCBytesSent,RPCBytesRecv
[ "$("$IOACCT" -j 8102 -X -n -P -o $F)" = "8102|13|6507|1208" ] ||
	fail "ioacct's RPC fields of 8102 from the cluster store: $("$IOACCT" -j 8102 -X -n -P -o $F)"
[ "$("$IOACCT" -j 8101 -X -n -P -o $F)" = "8101|||" ] ||
	fail "ioacct's RPC fields of 8101 (not kept) are not blank: $("$IOACCT" -j 8101 -X -n -P -o $F)"
ok "job 8102's report from the cluster store: the node store's RPC part (JSON) and Server calls (text)," \
	"exact; ioacct's RPCCalls, RPCBytesSent, RPCBytesRecv 13, 6507, 1208 (8101's blank: not kept)"

# ---- 4. a job of two nodes: both parts' rows on one time axis -------------------------
# Job 8102's part copied in SQL as its run's part on node n2, started 2 s (2 bins) later,
# its mounts numbered 1,000 higher (the same paths): matched by path in the whole job.
pg "BEGIN;
    CREATE TEMP TABLE m AS SELECT id AS old, 0::bigint AS new FROM jobs WHERE job_id = 8102;
    WITH n AS (INSERT INTO jobs SELECT (jsonb_populate_record(j, jsonb_build_object('node', 'n2',
	'start_ns', j.start_ns + 2000000000, 'end_ns', j.end_ns + 2000000000))).* FROM jobs j
	WHERE job_id = 8102 RETURNING id)
    UPDATE m SET new = (SELECT id FROM n);
    DO \$\$DECLARE t text; BEGIN
     FOREACH t IN ARRAY ARRAY['steps'] LOOP
      EXECUTE format('INSERT INTO %I SELECT (jsonb_populate_record(x,
	jsonb_build_object(''job'', m.new))).* FROM %I x, m WHERE x.job = m.old', t, t);
     END LOOP;
     FOREACH t IN ARRAY ARRAY['mounts', 'totals', 'series', 'files', 'rpc'] LOOP
      EXECUTE format('INSERT INTO %I SELECT (jsonb_populate_record(x,
	jsonb_build_object(''job'', m.new, ''mnt_id'', x.mnt_id + 1000))).* FROM %I x, m
	WHERE x.job = m.old', t, t);
     END LOOP;
    END\$\$;
    COMMIT" > /dev/null || fail "cannot copy job 8102's part to node n2"
"$IOREPORT" --format json -o "$T/pg2-8102.json" 8102 || fail "ioreport 8102 (two nodes) failed"
check_json "$T/pg2-8102.json" 2
/usr/bin/python3 - "$T/pg2-8102.json" "$MNT" <<'PY' || fail "the merged report's rpc_series"
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["nodes"]) == 2, j["nodes"]
got = {(r["proc"], r["bin"]): r["calls"] for r in j["rpc_series"] if r["mount"] == sys.argv[2]}
# n1's WRITEs 1, 2, 3 in bins 0, 1, 2; n2's two bins later; LOOKUP and WR\xff likewise.
want = {("WRITE", 0): 1, ("WRITE", 1): 2, ("WRITE", 2): 3 + 1, ("WRITE", 3): 2, ("WRITE", 4): 3,
        ("LOOKUP", 0): 5, ("LOOKUP", 2): 5, ("WR\ufffd", 1): 2, ("WR\ufffd", 3): 2}
assert got == want, got
PY
[ "$("$IOACCT" -j 8102 -X -n -P -o $F)" = "8102|26|13014|2416" ] ||
	fail "ioacct's RPC fields of 8102 of two nodes: $("$IOACCT" -j 8102 -X -n -P -o $F)"
ok "job 8102 of two nodes: both parts' RPC rows summed per procedure, n2's two bins later," \
	"the RPCs no job sent in bin 0 (248); in ioacct's listing too"

# ---- 5. downsampled, then purged with their jobs --------------------------------------
CUT=$(($(date +%s) + 2))
got=$("$PGPURGE" "$PGURL" downsample "$CUT" 2000000000) || fail "pgpurge downsample failed"
case $got in "runs=2 parts=3 "*) ;; *) fail "downsample: '$got', not 2 runs of 3 parts" ;; esac
pg "SELECT j.node = 'n2', r.name, r.flags, r.bin, r.calls FROM rpc r JOIN jobs j ON j.id = r.job
    WHERE j.job_id = 8102 AND r.name = 'WRITE' ORDER BY 1, 3, 4" > "$T/ds-8102"
printf '%s\n' "f|WRITE|0|0|3" "f|WRITE|0|1|3" "f|WRITE|1|0|124" \
	"t|WRITE|0|0|3" "t|WRITE|0|1|3" "t|WRITE|1|0|124" > "$T/want-ds"
diff "$T/want-ds" "$T/ds-8102" || fail "job 8102's WRITE rows not re-binned to 2 s (want, then got)"
[ "$(pg "SELECT sum(calls) FROM rpc r JOIN jobs j ON j.id = r.job WHERE j.job_id = 8102")" = $((2 * 137)) ] ||
	fail "job 8102's RPC calls changed in the downsample"
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge failed"
[ "${got%% *}" = "runs=2" ] || fail "purge: '$got', not 2 runs"
[ "$(pg "SELECT count(*) FROM rpc")" = 0 ] ||
	fail "the purge left $(pg "SELECT count(*) FROM rpc") RPC rows of jobs gone"
ok "a downsample to 2 s re-bins the RPC rows exactly; a purge takes them with their jobs"

exit 0
