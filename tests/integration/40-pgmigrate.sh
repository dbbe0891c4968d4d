#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Compact series, PostgreSQL schema 6 (issue 28): one real ioacctd exports iorun jobs
# whose series span several 0.5 s bins to a private PostgreSQL (scripts/pg.sh).
#  1. PostgreSQL holds one series row per (job, step, mount, op), bins and counters as
#     arrays, equal bin by bin to the SQLite store (through the view series_bins).
#  2. Job 501 made a job of two nodes (its row copied as node n2, started 0.7 s later,
#     with every child) and job 503 one with counters of 2^64 - 2 and 2^64 - 1; the
#     answers taken (ioacct -j, --nodes, the MaxWriteBW peak, ioreport text and JSON,
#     the merged report of 501 among them); the store put back to schema 5 as schema 5
#     stored series (one row per bin); ioacctd restarted migrates it to the current
#     schema ($V) with its data: every bin of every job reads back the same, the huge
#     ones exactly, and every
#     answer is byte for byte what it was (the parts marked as exported before schema
#     9, without per-file and MPI-IO records: read as none read, before and after).
#  2b. Job 503 moved to January 2020, the store put back to schema 7 (series and totals
#     one table each, job ids a plain sequence), ioacctd restarted migrates it to $V:
#     every answer byte for byte the same, each part's bulk rows in its end month's partition
#     (series_2020_01 for 503), a lookup by job id reading one partition (EXPLAIN);
#     files and mpiio_files (schema 9) partitioned alike, the old parts without records.
#  2c. The store put back to schema 8 (steps and mounts one table each, with their foreign
#     keys), ioacctd restarted migrates it to $V: every answer byte for byte the same,
#     every part's steps and mounts rows in its end month's partition (steps_2020_01 for
#     503), a part deleted takes them with it.
#  3. Merged series made once (schema 7): the first whole read of job 501 sums its nodes
#     and makes them (merged_jobs names both parts); the next reads use them (a mark put
#     in them shows in the report's series, not in its totals) and give every byte the
#     same; a third part arriving later (node n3) makes them unusable: the next read
#     sums the three nodes, exactly, and makes them anew for three.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport

pg_test_setup "bin_width = 0.5"
start_daemon
# The schema this ioacctd migrates to (lib/store/pgstore.h).
V=$PG_SCHEMA

# ---- 1. jobs of several bins, exported compact, equal to SQLite ---------------------
# Writes, a pause of more than a bin (the series has a hole), reads and stats.
"$IORUN" --job-id 501 -- "$IOWORK" write "$D/a" 4096 3 , sleep 0.6 , write "$D/b" 65536 5 , \
	sleep 0.6 , read "$D/b" 65536 5 , stat "$D/a" 4 > /dev/null || fail "iorun job 501 failed"
"$IORUN" --job-id 502 -- "$IOWORK" write "$D/c" 1000 7 , sleep 0.7 , write "$D/c" 3 11 \
	> /dev/null || fail "iorun job 502 failed"
wait_exported "$DB" "two jobs"
compare_stores "$DB" "" "two jobs of several bins"
got=$(pg "SELECT count(*) FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 501")
want=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT step_id, mnt_id, op FROM series s
	JOIN jobs j ON j.key = s.job_key WHERE j.job_id = 501)")
[ "$got" = "$want" ] || fail "job 501 has $got series rows in PostgreSQL, not one per (step, mount, op): $want"
[ "$(pg "SELECT max(cardinality(bins)) FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 501")" -ge 3 ] ||
	fail "no series row of job 501 holds 3 bins or more"
ok "PostgreSQL holds job 501 in $got series rows, one per (step, mount, op)"

# ---- 2. schema 5 with data, migrated -------------------------------------------------
pg "BEGIN;
    CREATE TEMP TABLE m (old bigint, new bigint);
    WITH o AS (SELECT * FROM jobs WHERE job_id = 501),
	 n AS (INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir,
		array_job_id, array_task_id, start_ns, end_ns, state, exit_code, probe_mode,
		bin_width_ns, dropped_events, dropped_bytes, workdir_raw, restart)
	       SELECT cluster, job_id, 'n2', source, uid, gid, \"user\", name, workdir, array_job_id,
		array_task_id, start_ns + 700000000, end_ns + 700000000, state, exit_code, probe_mode,
		bin_width_ns, dropped_events, dropped_bytes, workdir_raw, restart FROM o RETURNING id)
    INSERT INTO m SELECT o.id, n.id FROM o, n;
    INSERT INTO steps SELECT m.new, step_id, start_ns + 700000000, end_ns + 700000000, state,
	exit_code, cgroup FROM steps, m WHERE job = m.old;
    INSERT INTO mounts SELECT m.new, mnt_id, path, fstype, source, path_raw FROM mounts, m WHERE job = m.old;
    INSERT INTO totals SELECT m.new, step_id, mnt_id, op, $COUNTERS, err_notfound, err_access,
	err_space, err_io, err_other FROM totals, m WHERE job = m.old;
    INSERT INTO series SELECT m.new, step_id, mnt_id, op, bins, $COUNTERS, err_notfound, err_access,
	err_space, err_io, err_other FROM series, m WHERE job = m.old;
    WITH n AS (INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir,
		start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
	       SELECT cluster, 503, node, source, uid, gid, \"user\", name, workdir, start_ns, end_ns,
		state, exit_code, probe_mode, bin_width_ns, 0, 0 FROM jobs WHERE job_id = 502 RETURNING id, start_ns)
    INSERT INTO m SELECT 0, id FROM n;
    INSERT INTO steps SELECT m.new, 0, j.start_ns, j.end_ns, 'COMPLETED', 0, '' FROM m JOIN jobs j ON j.id = m.new WHERE m.old = 0;
    INSERT INTO mounts SELECT m.new, 7, '$D', 'tmpfs', 'none', NULL FROM m WHERE m.old = 0;
    INSERT INTO totals (job, step_id, mnt_id, op, bytes, calls) SELECT m.new, 0, 7, 1,
	18446744073709551615, 18446744073709551614 FROM m WHERE m.old = 0;
    -- Only two of the counters: the others read NULL, as a column newer than a row.
    INSERT INTO series (job, step_id, mnt_id, op, bins, bytes, calls) SELECT m.new, 0, 7, 1, '{0,5}',
	'{18446744073709551614,1}', '{1,18446744073709551613}' FROM m WHERE m.old = 0;
    -- Parts as exported before schema 9: without their per-file, MPI-IO, HDF5 and RPC records.
    UPDATE jobs SET files_kept = false, h5_kept = false, rpc_kept = false;
    COMMIT" > /dev/null || fail "cannot make job 501 one of two nodes and job 503"

# answers DIR: every answer about jobs 501, 502 and 503, one file each.
answers() {
	mkdir -p "$1"
	for j in 501 502 503; do
		"$IOACCT" -M iorun -j $j -P > "$1/ioacct-$j" || fail "ioacct -j $j failed"
		"$IOACCT" -M iorun -j $j -P --nodes --mounts -o JobID,Node,Mount,ReadBytes,WriteBytes,MaxReadBW,MaxWriteBW,Reads,Writes \
			> "$1/nodes-$j" || fail "ioacct -j $j --nodes failed"
		"$IOREPORT" --format json -o "$1/report-$j.json" $j || fail "ioreport --format json $j failed"
		"$IOREPORT" $j > "$1/report-$j.txt" || fail "ioreport $j failed"
	done
	pg "SELECT j.job_id, j.node, s.step_id, mt.path, s.op, s.bin,
	    $(echo "$COUNTERS, err_notfound, err_access, err_space, err_io, err_other" | sed -E 's/([a-z0-9_]+)/coalesce(s.\1, 0)/g')
	    FROM series_bins s JOIN jobs j ON j.id = s.job JOIN mounts mt ON mt.job = s.job AND mt.mnt_id = s.mnt_id
	    ORDER BY 1, 2, 3, 4, 5, 6" > "$1/bins" || fail "cannot read the series bin by bin"
}
# A store of schema 13 or older keeps no command line (schema 14, issue 38): put back to
# schema 5 the jobs lose theirs, so the answers to compare are those of jobs without one.
pg "UPDATE jobs SET cmdline = ''" > /dev/null
answers "$T/before"
grep -q '"cmdline": null' "$T/before/report-502.json" || fail "a job without a command line does not say null"
grep -q 'n2' "$T/before/nodes-501" || fail "job 501 has no node n2: $(cat "$T/before/nodes-501")"
grep -q '"nodes"' "$T/before/report-501.json" || fail "ioreport 501 is not a merged report of two nodes"
got=$(json_get "$T/before/report-501.json" "'%d %d' % (j['totals']['write_bytes'], j['totals']['read_bytes'])")
[ "$got" = "679936 655360" ] || fail "the merged report of job 501 says '$got' bytes written and read, not '679936 655360'"
got=$(json_get "$T/before/report-503.json" "j['totals']['write_bytes']")
[ "$got" = 18446744073709551615 ] || fail "the report of job 503 says $got bytes written, not 18446744073709551615"
got=$(pg "SELECT bin || ':' || bytes || ':' || calls FROM series_bins s JOIN jobs j ON j.id = s.job
	  WHERE j.job_id = 503 ORDER BY bin" | tr '\n' ' ')
[ "$got" = "0:18446744073709551614:1 5:1:18446744073709551613 " ] ||
	fail "job 503's bins read back as '$got', not exactly as written"

stop_daemon
pg_back_to_schema5 || fail "cannot put PostgreSQL back to schema 5"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 5 ] || fail "the store is not at schema 5"
[ "$(pg "SELECT count(*) FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 501")" = \
	"$(grep -c '^501|' "$T/before/bins")" ] || fail "schema 5 does not hold job 501 one row per bin"
start_daemon
answers "$T/after"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = $V ] || fail "PostgreSQL was not migrated to schema $V"
[ "$(pg "SELECT count(*) FROM information_schema.columns WHERE table_name = 'series' AND column_name = 'bins'")" = 1 ] ||
	fail "the migrated series have no bins column"
for f in "$T/before"/*; do
	cmp -s "$f" "$T/after/${f##*/}" ||
		{ diff "$f" "$T/after/${f##*/}" | head -20; fail "${f##*/} differs after the migration from schema 5"; }
done
ok "schema 5 migrated to $V with data: $(wc -l < "$T/after/bins") bins, $(ls "$T/after" | wc -l) answers byte for byte the same"

# ---- 2b. schema 7 with data, migrated to 9: partitions by end month -------------------
# Job 503 ended in another month (January 2020): its part goes to that month's partitions.
pg "UPDATE jobs SET start_ns = 1578000000000000000, end_ns = 1578000001000000000 WHERE job_id = 503;
    UPDATE steps SET start_ns = 1578000000000000000, end_ns = 1578000001000000000
      WHERE job IN (SELECT id FROM jobs WHERE job_id = 503)" > /dev/null || fail "cannot move job 503 to 2020"
answers "$T/before7"
stop_daemon
pg_back_to_schema7 || fail "cannot put PostgreSQL back to schema 7"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 7 ] || fail "the store is not at schema 7"
[ "$(pg "SELECT max(id) < 8589934592 FROM jobs")" = t ] || fail "schema 7's job ids are not a plain sequence"
start_daemon
answers "$T/after8"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = $V ] || fail "PostgreSQL was not migrated to schema $V"
for f in "$T/before7"/*; do
	cmp -s "$f" "$T/after8/${f##*/}" ||
		{ diff "$f" "$T/after8/${f##*/}" | head -20; fail "${f##*/} differs after the migration from schema 7"; }
done
# Schema 9: the records' tables partitioned as the series, a partition for every month
# that has parts, the parts exported before without records (read as "not read").
for t in files mpiio_files; do
	[ "$(pg "SELECT relkind FROM pg_class WHERE relname = '$t'")" = p ] || fail "$t is not partitioned"
	[ "$(pg "SELECT to_regclass('${t}_2020_01') IS NOT NULL")" = t ] ||
		fail "no partition ${t}_2020_01 for job 503's month"
done
[ "$(pg "SELECT count(*) FROM jobs WHERE files_kept OR h5_kept OR rpc_kept")" = 0 ] ||
	fail "parts exported before schema 9 are marked as having their records"
[ "$(pg "SELECT relkind FROM pg_class WHERE relname = 'series'")" = p ] || fail "series is not partitioned"
[ "$(pg "SELECT count(*) FROM series_2020_01 s JOIN jobs j ON j.id = s.job WHERE j.job_id = 503")" = 1 ] ||
	fail "job 503's series row is not in the partition of January 2020"
[ "$(pg "SELECT count(*) FROM totals_2020_01")" = "$(pg "SELECT count(*) FROM totals t JOIN jobs j ON j.id = t.job
	WHERE j.job_id = 503")" ] || fail "job 503's totals are not in the partition of January 2020"
month=$(pg "SELECT to_char(to_timestamp(end_ns / 1000000000) AT TIME ZONE 'UTC', 'YYYY_MM') FROM jobs WHERE job_id = 502")
[ "$(pg "SELECT count(*) FROM series_$month s JOIN jobs j ON j.id = s.job WHERE j.job_id = 502")" = \
	"$(pg "SELECT count(*) FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 502")" ] ||
	fail "job 502's series rows are not all in the partition of its month ($month)"
# A lookup by job id reads one partition.
pg "EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM series WHERE job = (SELECT min(id) FROM jobs
    WHERE job_id = 502)" > "$T/explain"
grep -Eq 'never executed|Subplans Removed' "$T/explain" ||
	{ cat "$T/explain"; fail "a lookup of job 502's series by id read every month's partition"; }
ok "schema 7 migrated to $V with data: parts in their month's partitions, $(ls "$T/after8" | wc -l) answers byte for byte the same, a lookup by id pruned"

# ---- 2c. schema 8 with data, migrated to 10: steps and mounts by end month ------------
stop_daemon
pg_back_to_schema8 || fail "cannot put PostgreSQL back to schema 8"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 8 ] || fail "the store is not at schema 8"
[ "$(pg "SELECT relkind FROM pg_class WHERE relname = 'steps'")" = r ] || fail "schema 8's steps are partitioned"
nsteps=$(pg "SELECT count(*) FROM steps") nmounts=$(pg "SELECT count(*) FROM mounts")
start_daemon
answers "$T/after10"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = $V ] || fail "PostgreSQL was not migrated to schema $V"
for f in "$T/before7"/*; do
	cmp -s "$f" "$T/after10/${f##*/}" ||
		{ diff "$f" "$T/after10/${f##*/}" | head -20; fail "${f##*/} differs after the migration from schema 8"; }
done
for t in steps mounts; do
	[ "$(pg "SELECT relkind FROM pg_class WHERE relname = '$t'")" = p ] || fail "$t is not partitioned"
	[ "$(pg "SELECT count(*) FROM ${t}_2020_01")" = "$(pg "SELECT count(*) FROM $t x JOIN jobs j ON j.id = x.job
		WHERE j.job_id = 503")" ] || fail "job 503's $t rows are not in the partition of January 2020"
	[ "$(pg "SELECT count(*) FROM ${t}_2020_01")" -gt 0 ] || fail "job 503 has no $t rows"
	[ "$(pg "SELECT count(*) FROM ${t}_$month x JOIN jobs j ON j.id = x.job WHERE j.job_id = 502")" = \
		"$(pg "SELECT count(*) FROM $t x JOIN jobs j ON j.id = x.job WHERE j.job_id = 502")" ] ||
		fail "job 502's $t rows are not all in the partition of its month ($month)"
done
[ "$(pg "SELECT count(*) FROM steps")/$(pg "SELECT count(*) FROM mounts")" = "$nsteps/$nmounts" ] ||
	fail "the migration to $V kept $(pg "SELECT count(*) FROM steps") steps, $(pg "SELECT count(*) FROM mounts") mounts, not $nsteps, $nmounts"
# A part deleted (as a node's export replaces its copy) takes its steps and mounts with it.
id503=$(pg "SELECT id FROM jobs WHERE job_id = 503")
[ "$(pg "BEGIN; DELETE FROM jobs WHERE id = $id503; SELECT (SELECT count(*) FROM steps WHERE job = $id503)
	+ (SELECT count(*) FROM mounts WHERE job = $id503) + (SELECT count(*) FROM totals WHERE job = $id503);
	ROLLBACK" | grep -v '^$' | tail -1)" = 0 ] || fail "job 503 deleted left rows of steps, mounts or totals"
ok "schema 8 migrated to $V with data: $nsteps steps and $nmounts mounts rows in their month's partitions, $(ls "$T/after10" | wc -l) answers byte for byte the same"

# ---- 3. merged series made once --------------------------------------------------------
pg "DELETE FROM merged_jobs" > /dev/null
"$IOREPORT" --format json -o "$T/m1.json" 501 || fail "ioreport 501 failed"
got=$(pg "SELECT cardinality(members) FROM merged_jobs WHERE job_id = 501")
[ "$got" = 2 ] || fail "the first whole read of job 501 made no merged series of its 2 parts ('$got')"
"$IOREPORT" --format json -o "$T/m2.json" 501 || fail "ioreport 501 failed"
cmp -s "$T/m1.json" "$T/m2.json" || { diff "$T/m1.json" "$T/m2.json" | head; fail "job 501 read from its merged series differs from its nodes summed"; }
cmp -s "$T/m1.json" "$T/after/report-501.json" || fail "job 501's merged report differs from the one before"
# series_w JSON: the report's bytes written, bin by bin, over every mount.
series_w() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(sum(sum(m["write_bytes"]) for m in j["series"]["mounts"]), j["totals"]["write_bytes"])' "$1"
}
series_w "$T/m1.json" > /dev/null 2>&1 || fail "cannot read the series of the report: $(series_w "$T/m1.json" 2>&1 | tail -1)"
read -r sw tw < <(series_w "$T/m1.json")
[ "$sw" = 679936 ] && [ "$tw" = 679936 ] || fail "job 501's report: $sw bytes written in its series, $tw in its totals, not 679936"
pg "UPDATE merged_series SET bytes[1] = bytes[1] + 1000000 WHERE job_id = 501 AND op = 1 AND mnt_id = 1" > /dev/null
"$IOREPORT" --format json -o "$T/m3.json" 501 || fail "ioreport 501 failed"
read -r sw tw < <(series_w "$T/m3.json")
[ "$sw" = 1679936 ] && [ "$tw" = 679936 ] || fail "a mark in job 501's merged series: $sw bytes in the series, $tw in the totals, not 1679936 and 679936: the read did not use them"
pg "UPDATE merged_series SET bytes[1] = bytes[1] - 1000000 WHERE job_id = 501 AND op = 1 AND mnt_id = 1" > /dev/null
# A third part, as a node whose export came late.
pg "INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns, end_ns,
	state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes, restart)
    SELECT cluster, job_id, 'n3', source, uid, gid, \"user\", name, workdir, start_ns + 300000000,
	end_ns + 300000000, state, exit_code, probe_mode, bin_width_ns, 0, 0, restart FROM jobs
    WHERE job_id = 501 AND node = 'n2';
    INSERT INTO steps SELECT n.id, s.step_id, s.start_ns, s.end_ns, s.state, s.exit_code, s.cgroup
	FROM steps s, jobs o, jobs n WHERE o.job_id = 501 AND o.node = 'n2' AND s.job = o.id AND n.job_id = 501 AND n.node = 'n3';
    INSERT INTO mounts SELECT n.id, m.mnt_id, m.path, m.fstype, m.source, m.path_raw
	FROM mounts m, jobs o, jobs n WHERE o.job_id = 501 AND o.node = 'n2' AND m.job = o.id AND n.job_id = 501 AND n.node = 'n3';
    INSERT INTO totals SELECT n.id, t.step_id, t.mnt_id, t.op, $COUNTERS, err_notfound, err_access, err_space, err_io, err_other
	FROM totals t, jobs o, jobs n WHERE o.job_id = 501 AND o.node = 'n2' AND t.job = o.id AND n.job_id = 501 AND n.node = 'n3';
    INSERT INTO series SELECT n.id, t.step_id, t.mnt_id, t.op, bins, $COUNTERS, err_notfound, err_access, err_space, err_io, err_other
	FROM series t, jobs o, jobs n WHERE o.job_id = 501 AND o.node = 'n2' AND t.job = o.id AND n.job_id = 501 AND n.node = 'n3'" > /dev/null ||
	fail "cannot add a third part to job 501"
"$IOREPORT" --format json -o "$T/m4.json" 501 || fail "ioreport 501 failed"
read -r sw tw < <(series_w "$T/m4.json")
[ "$sw" = 1019904 ] && [ "$tw" = 1019904 ] || fail "job 501 of three nodes: $sw bytes in its series, $tw in its totals, not 1019904"
[ "$(pg "SELECT cardinality(members) FROM merged_jobs WHERE job_id = 501")" = 3 ] ||
	fail "job 501's merged series were not made anew for its three parts"
"$IOREPORT" --format json -o "$T/m5.json" 501 || fail "ioreport 501 failed"
cmp -s "$T/m4.json" "$T/m5.json" || fail "job 501 of three nodes read from its merged series differs from its nodes summed"
ok "merged series: made at the first whole read, used after (byte for byte the same), made anew when a part came late"
exit 0
