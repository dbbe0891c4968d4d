#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A job id's runs across nodes in the cluster store (issue 36, jobs; PostgreSQL schema
# 13): two real ioacctds, node_name n1 and n2, each with its own socket, store and pins,
# both exporting to one private PostgreSQL (scripts/pg.sh).
#  1. Job 910 runs on both nodes at once, writing 2 x 4096 bytes on n1 and 3 x 4096 on n2;
#     then the same id runs again on both, 4 and 5 x 4096. Two runs of two nodes each,
#     never mixed: ioacct -j 910 through either daemon the last run (n1,n2, 36864 bytes),
#     -D both (20480, 36864), --nodes the last run's nodes; ioreport 910 the last run (its
#     nodes, bytes and files), --run 0 the first.
#  2. The rule that gives a part its run, part by part (parts made in SQL, as an exporter
#     writes them, in this order): a node's second part of an id opens a run of its own; a
#     part of another node joins the newest run it meets in time, not one an hour away,
#     nor the one its node already has a part in.
#  3. Two nodes' first parts of a run written at once, the second while the first's
#     transaction is open: one run (the run's lock), not two.
#  4. Migration 13 from schema 11 with this data (the store put back as schema 11 kept
#     it): every part in the same run as before, a report row of job 910 made the last
#     run's, and ioacct and ioreport answer byte for byte as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOACCT" ] && [ -x "$IOREPORT" ] || fail "ioacct or ioreport not built"

pg_test_setup "node_name = n1"
node2_setup n2
trap 'rc=$?; stop_daemon; stop_node2; node2_remove; pg_stop "$PGD"; rm -rf "$PGD"; (exit $rc); teardown' EXIT
start_daemon
start_node2

# ---- 1. job 910 on both nodes at once, twice ---------------------------------------------
# run_both RUN N1 N2: job 910 on n1 writing N1 x 4096 bytes and on n2 N2 x 4096, each
# waiting for the other to have written before it ends (a byte on its fifo).
run_both() {
	local r=$1 p1 p2
	mkfifo "$T/go1-$r" "$T/go2-$r"
	IOACCT_CONF=$CONF "$IORUN" --job-id 910 -o /dev/null -- \
		"$IOWORK" write "$D/a$r" 4096 "$2" , wait < "$T/go1-$r" &
	p1=$!
	IOACCT_CONF=$CONF2 "$IORUN" --job-id 910 -o /dev/null -- \
		"$IOWORK" write "$D/b$r" 4096 "$3" , wait < "$T/go2-$r" &
	p2=$!
	exec 8> "$T/go1-$r" 9> "$T/go2-$r"
	for _ in $(seq 1 600); do
		[ "$(stat -c %s "$D/a$r" 2>/dev/null)" = $((4096 * $2)) ] &&
			[ "$(stat -c %s "$D/b$r" 2>/dev/null)" = $((4096 * $3)) ] && break
		sleep 0.1
	done
	echo x >&8
	echo x >&9
	exec 8>&- 9>&-
	wait "$p1" || fail "iorun job 910 (run $r) on n1 failed"
	wait "$p2" || fail "iorun job 910 (run $r) on n2 failed"
}
run_both 0 2 3
run_both 1 4 5
wait_exported "$DB" "n1's parts of job 910"
wait_exported "$N2/ioacct.db" "n2's parts of job 910"

# q CONF ARGS...: ioacct's rows of job 910 on $MNT through that node's daemon.
q() {
	local conf=$1
	shift
	IOACCT_CONF=$conf "$IOACCT" -j 910 -X -n -P --mounts "$@" > "$T/q.out" 2>&1 ||
		{ cat "$T/q.out"; fail "ioacct -j 910 $* failed"; }
	grep -F "|$MNT|" "$T/q.out" | paste -sd' '
}
for c in "$CONF" "$CONF2"; do
	got=$(q "$c" -o JobID,NodeList,Mount,WriteBytes)
	[ "$got" = "910|n1,n2|$MNT|36864" ] || fail "ioacct -j 910 via $c: '$got', not the last run (n1,n2, 36864)"
	got=$(q "$c" -D -o JobID,NodeList,Mount,WriteBytes)
	[ "$got" = "910|n1,n2|$MNT|20480 910|n1,n2|$MNT|36864" ] ||
		fail "ioacct -j 910 -D via $c: '$got', not both runs, each of n1 and n2"
	got=$(q "$c" --nodes -o JobID,NodeList,Mount,WriteBytes)
	[ "$got" = "910|n1|$MNT|16384 910|n2|$MNT|20480" ] ||
		fail "ioacct -j 910 --nodes via $c: '$got', not the last run's nodes"
done
# rep NAME ARGS...: ioreport ARGS 910 as JSON: its nodes, bytes written on $MNT, files.
rep() {
	local name=$1
	shift
	"$IOREPORT" --format json "$@" 910 > "$T/$name.json" 2> "$T/$name.err" ||
		{ cat "$T/$name.err"; fail "ioreport $* 910 failed"; }
	python3 -c 'import json, os, sys
d = json.load(open(sys.argv[1]))
n = ",".join(x["node"] for x in d.get("nodes") or [])
w = sum(m["write_bytes"] for m in d["mounts"] if m["mount"] == sys.argv[2])
f = ",".join(sorted({os.path.basename(x["path"]) for x in d.get("files") or []
                     if (x.get("path") or "").startswith(sys.argv[3])}))
print(n, w, f)' "$T/$name.json" "$MNT" "$D/"
}
got=$(rep last)
[ "$got" = "n1,n2 36864 a1,b1" ] || fail "ioreport 910: '$got', not the last run (n1,n2, 36864 bytes, files a1 b1)"
got=$(rep run0 --run 0)
[ "$got" = "n1,n2 20480 a0,b0" ] || fail "ioreport --run 0 910: '$got', not the first run (20480 bytes, a0 b0)"
# parts JOB: each run of the job in PostgreSQL, its parts by node with their bytes on $MNT.
parts() {
	pg "SELECT string_agg(j.node || ':' || coalesce((SELECT sum(t.bytes) FROM totals t
		JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
		WHERE t.job = j.id AND t.op = 1 AND m.path = '$MNT'), 0), ',' ORDER BY j.node)
	    FROM jobs j WHERE j.job_id = $1 GROUP BY j.restart, j.run_start ORDER BY min(j.start_ns)" |
		paste -sd' '
}
got=$(parts 910)
[ "$got" = "n1:8192,n2:12288 n1:16384,n2:20480" ] ||
	fail "PostgreSQL holds job 910's runs as '$got', not two runs of n1 and n2 each"
ok "job 910 on n1 and n2, twice: two runs of two nodes, never mixed (ioacct -j, -D, --nodes; ioreport, --run 0)"

# ---- 2. the rule, part by part -------------------------------------------------------------
# part NODE START END: a part of job 930 on NODE, START..END seconds after T0, written as an
# exporter writes one (its run given by the trigger).
T0=1700000000
part() {
	pg "INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns,
	      end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
	    VALUES ('iorun', 930, '$1', 'iorun', 0, 0, 'root', 'x', '/', ($T0 + $2) * 1000000000::bigint,
	      ($T0 + $3) * 1000000000::bigint, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0)" > /dev/null ||
		fail "cannot write a part of job 930 on $1"
}
part n1 0 10       # opens run 0
part n2 5 12       # joins run 0
part n2 20 30      # n2 has a part in run 0: opens run 20
part n3 25 31      # joins run 20 (the newest it meets)
part n4 3600 3610  # an hour after: opens run 3600
part n1 21 29      # late: joins run 20 (meets it; n1 is in run 0; run 3600 is an hour away)
got=$(pg "SELECT node || '@' || (start_ns / 1000000000 - $T0) || ':' || (run_start / 1000000000 - $T0)
	  FROM jobs WHERE job_id = 930 ORDER BY id" | paste -sd' ')
[ "$got" = "n1@0:0 n2@5:0 n2@20:20 n3@25:20 n4@3600:3600 n1@21:20" ] ||
	fail "job 930's parts were given the runs '$got', not 'n1@0:0 n2@5:0 n2@20:20 n3@25:20 n4@3600:3600 n1@21:20'"
"$IOACCT" -j 930 -D -X -n -P -o JobID,NodeList > "$T/930.out" || fail "ioacct -j 930 -D failed"
got=$(paste -sd' ' "$T/930.out")
[ "$got" = "930|n1,n2 930|n1,n2,n3 930|n4" ] || fail "ioacct -j 930 -D: '$got', not three runs"
ok "a part's run: a node's second part opens one, another node's part joins the newest run it meets"

# ---- 3. two nodes' first parts at once -----------------------------------------------------
# part940 NODE START: a part of job 940 as INSERT text (the month of job 930's, whose
# partitions are made: no lock but the run's is waited for).
part940() {
	echo "INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns,
	      end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
	    VALUES ('iorun', 940, '$1', 'iorun', 0, 0, 'root', 'x', '/', ($T0 + $2) * 1000000000::bigint,
	      ($T0 + 100) * 1000000000::bigint, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0)"
}
# A run's lock is (730804914, its bucket) (lib/store/pgstore_db.h: PG_RUN_LOCK).
RUNLOCK="SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 730804914"
# The first part's transaction stays open until the second waits for the run's lock.
pg "BEGIN; $(part940 n1 0);
    DO \$\$BEGIN FOR i IN 1..6000 LOOP
      EXIT WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
        AND classid = 730804914 AND NOT granted);
      PERFORM pg_sleep(0.1);
    END LOOP; END\$\$;
    COMMIT" > "$T/first.out" 2>&1 &
FIRST=$!
for _ in $(seq 1 600); do
	[ "$(pg "$RUNLOCK AND granted")" -gt 0 ] && break
	sleep 0.1
done
[ "$(pg "$RUNLOCK AND granted")" -gt 0 ] || fail "the first part of job 940 holds no run lock"
pg "$(part940 n2 1)" > "$T/second.out" 2>&1 &
SECOND=$!
wait "$FIRST" || { cat "$T/first.out"; fail "the first part of job 940 was not written"; }
wait "$SECOND" || { cat "$T/second.out"; fail "the second part of job 940 was not written"; }
got=$(pg "SELECT count(*), count(DISTINCT run_start) FROM jobs WHERE job_id = 940")
[ "$got" = "2|1" ] || fail "job 940's two parts written at once: '$got' (parts|runs), not one run"
ok "two nodes' first parts of a run written at once (the second waiting for the first's lock): one run"

# ---- 4. migration 13 from schema 11 with this data -------------------------------------
# A merged report row of job 910's last run, as the epilog's offer makes it.
pg "INSERT INTO job_reports (cluster, job_id, expected, path, formats, uid, gid, copy_dir,
      merge_timeout_s, deadline, restart, run_start)
    SELECT 'iorun', 910, '{n1,n2}', '/nonexistent', 1, 0, 0, '', 60, now(), 0, max(run_start)
    FROM jobs WHERE job_id = 910" > /dev/null || fail "cannot make job 910's report row"
# runs: each run of each job as its parts, node@start, sorted.
runs() {
	pg "SELECT job_id || ' ' || string_agg(node || '@' || start_ns, ',' ORDER BY node, start_ns)
	    FROM jobs GROUP BY job_id, restart, run_start ORDER BY 1"
}
# answers DIR: what ioacct and ioreport say of jobs 910, 930 and 940.
answers() {
	mkdir -p "$1"
	runs > "$1/runs" || fail "cannot read the runs"
	"$IOACCT" -j 910,930,940 -D -n -P --mounts -o JobID,NodeList,Start,End,State,Mount,WriteBytes \
		> "$1/ioacct" || fail "ioacct -j 910,930,940 -D failed"
	"$IOACCT" -j 910 --nodes -n -P -o JobID,Node,Start,WriteBytes > "$1/nodes" ||
		fail "ioacct -j 910 --nodes failed"
	for r in 0 1; do
		"$IOREPORT" --format json --run $r 910 > "$1/report-$r.json" || fail "ioreport --run $r 910 failed"
	done
}
# Schema 11 keeps no command line (schema 14), nor a file's life and common access sizes
# (schema 12), nor HDF5 records (schema 18), nor RPC rows (schema 20): the answers before
# are without them.
pg "UPDATE jobs SET cmdline = '', h5_kept = false, rpc_kept = false; UPDATE files SET gen = 0, rw_switches = 0, access1 = 0,
    access2 = 0, access3 = 0, access4 = 0, access1_count = 0, access2_count = 0,
    access3_count = 0, access4_count = 0" > /dev/null
answers "$T/before"
stop_daemon
stop_node2
pg_back_to_schema11 || fail "cannot put PostgreSQL back to schema 11"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 11 ] || fail "the store is not at schema 11"
[ "$(pg "SELECT count(*) FROM information_schema.columns WHERE table_name = 'jobs'
	AND column_name = 'run_start'")" = 0 ] || fail "schema 11 has jobs.run_start"
start_daemon
start_node2
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] || fail "PostgreSQL was not migrated to schema $PG_SCHEMA"
answers "$T/after"
for f in "$T/before"/*; do
	cmp -s "$f" "$T/after/${f##*/}" ||
		{ diff "$f" "$T/after/${f##*/}" | head -20; fail "${f##*/} differs after migration 13"; }
done
[ "$(pg "SELECT count(*) FROM job_reports r WHERE job_id = 910 AND run_start = (SELECT max(run_start)
	FROM jobs WHERE job_id = 910)")" = 1 ] || fail "job 910's report row is not its last run's after migration 13"
[ "$(pg "SELECT count(*) FROM jobs WHERE run_start IS NULL")" = 0 ] || fail "a part has no run after migration 13"
ok "schema 11 migrated to 13 with data: every part in its run as before, the report row the last run's, $(ls "$T/after" | wc -l) answers byte for byte the same"
exit 0
