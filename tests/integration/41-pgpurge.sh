#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Retention in the cluster store (issue 28): ioacct_pgstore_purge() and _downsample()
# (through tests/integration/pgpurge until the CLI has them) on a private PostgreSQL
# (scripts/pg.sh) fed by one real ioacctd. Two iorun jobs of several 0.5 s bins are
# exported; parts copied from them in SQL make runs of other ids, nodes and ages:
#   701 two nodes, ended 40 days ago        -> purged whole (a dry run first: counted, kept)
#   702 one node, ended 40 days ago, its merged report still waiting -> kept
#   703 two nodes, ended 10 days ago        -> kept by the purge, downsampled to 2 s
#   704 two nodes, ended now                -> untouched
# Checked: the counts; every row of 701 gone (jobs, steps, mounts, totals, series, files, merged
# series, report row) and ioacct -j 701 finds nothing; the merged report of 704 and the
# totals of every job left byte for byte the same; 703's series re-binned (width 2 s,
# bin b -> b / 4) with every counter's sum exact, its ioacct -j the same; a second
# purge and downsample find nothing. Then 5,000 old runs of 2 parts: a purge killed
# (kill -9) once its first batches are committed leaves every run whole or gone, the
# rest exact, and the next purge takes exactly what is left. Then months purged whole
# (schema 8): a month's partitions are dropped, the parts of a run not over moved out
# first, a purge killed after its commit is finished by the next.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport
PGPURGE=$abs_top_builddir/tests/integration/pgpurge
[ -x "$PGPURGE" ] || fail "$PGPURGE not built (make -C tests/integration pgpurge)"

pg_test_setup "bin_width = 0.5"
start_daemon

"$IORUN" --job-id 601 -- "$IOWORK" write "$D/a" 4096 3 , sleep 0.6 , write "$D/b" 65536 5 , \
	sleep 0.6 , read "$D/b" 65536 5 , stat "$D/a" 4 > /dev/null || fail "iorun job 601 failed"
"$IORUN" --job-id 602 -- "$IOWORK" write "$D/c" 1000 7 , sleep 0.7 , write "$D/c" 3 11 \
	> /dev/null || fail "iorun job 602 failed"
wait_exported "$DB" "two jobs"

ALL="$COUNTERS, err_notfound, err_access, err_space, err_io, err_other"
# clone SRC NEW NODE SHIFT_NS AGE_DAYS: job SRC's part as job NEW's part on NODE, started
# SHIFT_NS later and AGE_DAYS days earlier, with every child.
clone() {
	local age=$(($5 * 86400 * 1000000000))
	# The month's partitions first: not made by the statement that fills them.
	pg "SELECT ioacct_block_parts(ioacct_block(end_ns + $4 - $age)) FROM jobs WHERE job_id = $1;
	    WITH o AS (SELECT * FROM jobs WHERE job_id = $1),
	     n AS (INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir,
		start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes, restart)
	       SELECT cluster, $2, '$3', source, uid, gid, \"user\", name, workdir, start_ns + $4 - $age,
		end_ns + $4 - $age, state, exit_code, probe_mode, bin_width_ns, 0, 0, 0 FROM o RETURNING id),
	     s AS (INSERT INTO steps SELECT n.id, x.step_id, x.start_ns + $4 - $age, x.end_ns + $4 - $age,
		x.state, x.exit_code, x.cgroup FROM steps x, o, n WHERE x.job = o.id RETURNING 1),
	     m AS (INSERT INTO mounts SELECT n.id, mnt_id, path, fstype, mounts.source, path_raw
		FROM mounts, o, n WHERE mounts.job = o.id RETURNING 1),
	     t AS (INSERT INTO totals SELECT n.id, step_id, mnt_id, op, $ALL FROM totals, o, n
		WHERE totals.job = o.id RETURNING 1),
	     f AS (INSERT INTO files SELECT (jsonb_populate_record(x, jsonb_build_object('job', n.id))).*
		FROM files x, o, n WHERE x.job = o.id RETURNING 1)
	     INSERT INTO series SELECT n.id, step_id, mnt_id, op, bins, $ALL FROM series, o, n
		WHERE series.job = o.id" > /dev/null || fail "cannot make job $2's part on $3"
}
clone 601 701 n1 0 40
clone 602 701 n2 700000000 40
clone 602 702 n1 0 40
clone 601 703 n1 0 10
clone 601 703 n2 300000000 10
clone 601 704 n1 0 0
clone 602 704 n2 700000000 0
pg "INSERT INTO job_reports (cluster, job_id, expected, path, formats, uid, gid, copy_dir,
      merge_timeout_s, deadline, restart, run_start) SELECT 'iorun', j, '{n1,n2}', '/nonexistent', 1, 0,
      0, '', 60, now(), 0, (SELECT max(run_start) FROM jobs x WHERE x.job_id = j)
      FROM (VALUES (701), (702)) v(j);
    UPDATE job_reports SET written_at = now(), written_by = 'n1' WHERE job_id = 701" > /dev/null ||
	fail "cannot make the report rows of 701 and 702"
"$IOREPORT" --format json -o "$T/704-before.json" 704 || fail "ioreport 704 failed"
"$IOREPORT" --format json -o "$T/701-before.json" 701 || fail "ioreport 701 failed"
[ "$(pg "SELECT count(*) FROM merged_jobs WHERE job_id IN (701, 704)")" = 2 ] ||
	fail "the merged series of 701 and 704 were not made"
# totals_of: every job's totals, summed per job, mount path and op, all counters.
totals_of() {
	pg "SELECT j.job_id, m.path, t.op, $(echo "$ALL" | sed -E 's/([a-z0-9_]+)/sum(t.\1)/g')
	    FROM totals t JOIN jobs j ON j.id = t.job JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	    WHERE j.job_id <> 701 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
}
# sums_of JOB: the job's series summed per part, step, mount and op over their bins, all counters.
sums_of() {
	pg "SELECT j.node, s.step_id, s.mnt_id, s.op, $(echo "$ALL" | sed -E 's/([a-z0-9_]+)/coalesce(sum(s.\1), 0)/g')
	    FROM series_bins s JOIN jobs j ON j.id = s.job WHERE j.job_id = $1 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
}
totals_of > "$T/totals-before"
sums_of 703 > "$T/703-sums-before"
sums_of 704 > "$T/704-sums-before"
pg "SELECT j.node, s.step_id, s.mnt_id, s.op, array_to_string(ARRAY(SELECT DISTINCT b / 4 FROM unnest(s.bins) b ORDER BY 1), ',')
    FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 703 ORDER BY 1, 2, 3, 4" > "$T/703-bins-want"
"$IOACCT" -M iorun -j 703 -P > "$T/703-ioacct-before" || fail "ioacct -j 703 failed"
grep -q . "$T/totals-before" || fail "no totals to compare"
series701=$(pg "SELECT count(*) FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 701")
rows_before=$(pg "SELECT (SELECT count(*) FROM jobs) || ' ' || (SELECT count(*) FROM series)")
CUT=$(($(date +%s) - 30 * 86400))
[ "$(pg "SELECT count(*) FROM files f JOIN jobs j ON j.id = f.job WHERE j.job_id = 701")" -gt 0 ] ||
	fail "job 701 has no file records to purge"

# ---- purge: dry, then real ---------------------------------------------------------------
# (When the month of 40 days ago ended before the cutoff, it goes whole: months=1.)
got=$("$PGPURGE" "$PGURL" purge "$CUT" dry) || fail "pgpurge purge dry failed"
got=${got% months=1}
[ "$got" = "runs=1 parts=2 series=$series701" ] || fail "dry purge: '$got', not 'runs=1 parts=2 series=$series701'"
[ "$(pg "SELECT (SELECT count(*) FROM jobs) || ' ' || (SELECT count(*) FROM series)")" = "$rows_before" ] ||
	fail "a dry purge changed the store"
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge failed"
got=${got% months=1}
[ "$got" = "runs=1 parts=2 series=$series701" ] || fail "purge: '$got', not 'runs=1 parts=2 series=$series701'"
for t in jobs merged_jobs merged_series job_reports; do
	[ "$(pg "SELECT count(*) FROM $t WHERE job_id = 701")" = 0 ] || fail "job 701 is still in $t"
done
for t in steps mounts totals series files; do
	[ "$(pg "SELECT count(*) FROM $t WHERE job NOT IN (SELECT id FROM jobs)")" = 0 ] || fail "$t has rows of no job"
done
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = 702")" = 1 ] || fail "job 702 (its report waiting) was purged"
"$IOACCT" -M iorun -j 701 -P -n > "$T/701-ioacct" 2>&1
grep -q '701' "$T/701-ioacct" && fail "ioacct -j 701 still shows the purged job: $(cat "$T/701-ioacct")"
"$IOREPORT" --format json -o "$T/701-after.json" 701 2> "$T/701-err" && fail "ioreport 701 still made a report of the purged job"
totals_of > "$T/totals-after"
cmp -s "$T/totals-before" "$T/totals-after" || fail "the totals of the jobs left changed in the purge"
"$IOREPORT" --format json -o "$T/704-after.json" 704 || fail "ioreport 704 failed"
cmp -s "$T/704-before.json" "$T/704-after.json" || fail "the merged report of 704 changed in the purge"
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge failed"
[ "$got" = "runs=0 parts=0 series=0" ] || fail "a second purge: '$got', not nothing"
ok "purge: job 701 (2 parts, $series701 series rows) gone whole, dry run first; 702 (report waiting) kept; the rest exact"

# ---- downsample --------------------------------------------------------------------------
CUT=$(($(date +%s) - 5 * 86400))
series703=$(pg "SELECT count(*) FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 703")
got=$("$PGPURGE" "$PGURL" downsample "$CUT" 2000000000 dry) || fail "pgpurge downsample dry failed"
[ "$got" = "runs=1 parts=2 series=$series703" ] || fail "dry downsample: '$got', not 'runs=1 parts=2 series=$series703'"
got=$("$PGPURGE" "$PGURL" downsample "$CUT" 2000000000) || fail "pgpurge downsample failed"
[ "$got" = "runs=1 parts=2 series=$series703" ] || fail "downsample: '$got', not 'runs=1 parts=2 series=$series703'"
[ "$(pg "SELECT string_agg(DISTINCT bin_width_ns::text, ',') FROM jobs WHERE job_id = 703")" = 2000000000 ] ||
	fail "job 703's parts are not 2 s wide"
[ "$(pg "SELECT string_agg(DISTINCT bin_width_ns::text, ',') FROM jobs WHERE job_id IN (702, 704)")" = 500000000 ] ||
	fail "jobs 702 and 704 were downsampled too"
sums_of 703 > "$T/703-sums-after"
cmp -s "$T/703-sums-before" "$T/703-sums-after" || { diff "$T/703-sums-before" "$T/703-sums-after" | head; fail "job 703's series sums changed in the downsample"; }
pg "SELECT j.node, s.step_id, s.mnt_id, s.op, array_to_string(s.bins, ',')
    FROM series s JOIN jobs j ON j.id = s.job WHERE j.job_id = 703 ORDER BY 1, 2, 3, 4" > "$T/703-bins-got"
cmp -s "$T/703-bins-want" "$T/703-bins-got" || { diff "$T/703-bins-want" "$T/703-bins-got" | head; fail "job 703's bins are not b / 4"; }
[ "$(pg "SELECT count(*) FROM merged_jobs WHERE job_id = 703")" = 0 ] || fail "job 703 kept merged series of its old width"
sums_of 704 > "$T/704-sums-after"
cmp -s "$T/704-sums-before" "$T/704-sums-after" || fail "job 704's series changed in the downsample"
"$IOACCT" -M iorun -j 703 -P > "$T/703-ioacct-after" || fail "ioacct -j 703 failed"
cmp -s "$T/703-ioacct-before" "$T/703-ioacct-after" || fail "ioacct -j 703 changed in the downsample"
totals_of > "$T/totals-after"
cmp -s "$T/totals-before" "$T/totals-after" || fail "the totals changed in the downsample"
got=$("$PGPURGE" "$PGURL" downsample "$CUT" 2000000000) || fail "pgpurge downsample failed"
[ "$got" = "runs=0 parts=0 series=0" ] || fail "a second downsample: '$got', not nothing"
ok "downsample: job 703 re-binned 0.5 s -> 2 s (bin / 4), every sum exact; 702 and 704 untouched"

# ---- a purge killed midway ---------------------------------------------------------------
# Ended an hour before the cutoff, in its month (a month not over at the cutoff is purged
# row by row: batches to kill between).
CUT=$(($(date +%s) - 30 * 86400))
OLD=$(pg "SELECT (extract(epoch FROM greatest(date_trunc('month', to_timestamp($CUT), 'UTC'),
	  to_timestamp($CUT) - interval '1 hour')) * 1000000000)::bigint")
pg "INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns, end_ns,
	state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
    SELECT 'iorun', 10000 + k, 'n' || p, 'slurm', 0, 0, 'root', 'x', '/', $OLD - 3600000000000 + k,
	$OLD + k, 'COMPLETED', 0, 'fentry', 5000000000, 0, 0
    FROM generate_series(1, 5000) k, generate_series(1, 2) p;
    INSERT INTO steps SELECT id, 0, start_ns, end_ns, 'COMPLETED', 0, '' FROM jobs WHERE job_id > 10000;
    INSERT INTO mounts SELECT id, 1, '/', 'ext4', 'sda' FROM jobs WHERE job_id > 10000;
    INSERT INTO totals (job, step_id, mnt_id, op, bytes, calls) SELECT id, 0, 1, 1, 4096 * 3, 3 FROM jobs WHERE job_id > 10000;
    INSERT INTO series (job, step_id, mnt_id, op, bins, bytes, calls) SELECT id, 0, 1, 1, '{0,7,9}', '{4096,4096,4096}',
	'{1,1,1}' FROM jobs WHERE job_id > 10000" > /dev/null || fail "cannot make 5,000 old runs"
"$PGPURGE" "$PGURL" purge "$CUT" > "$T/killed.out" 2>&1 &
PURGE_PID=$!
for _ in $(seq 1 2000); do
	n=$(pg "SELECT count(*) FROM jobs WHERE job_id > 10000")
	[ "$n" -lt 10000 ] && break
	kill -0 "$PURGE_PID" 2>/dev/null || break
	sleep 0.01
done
kill -9 "$PURGE_PID" 2>/dev/null || fail "the purge of 5,000 runs ended before it could be killed ($(cat "$T/killed.out"))"
wait "$PURGE_PID" 2>/dev/null
# Its server process may still finish its statement: it rolls back, having no COMMIT.
for _ in $(seq 1 600); do
	[ "$(pg "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ioacctd' AND state <> 'idle'")" = 0 ] && break
	sleep 0.1
done
left=$(pg "SELECT count(DISTINCT job_id) FROM jobs WHERE job_id > 10000")
[ "$left" -gt 0 ] && [ "$left" -lt 5000 ] || fail "the killed purge left $left of 5,000 runs, not some"
[ "$(pg "SELECT count(*) FROM (SELECT job_id FROM jobs WHERE job_id > 10000 GROUP BY job_id HAVING count(*) <> 2) h")" = 0 ] ||
	fail "the killed purge left runs with one part of two"
for t in steps mounts totals series; do
	[ "$(pg "SELECT count(*) FROM $t WHERE job IN (SELECT id FROM jobs WHERE job_id > 10000)")" = $((2 * left)) ] ||
		fail "the killed purge left $t not one row per part of the $left runs left"
done
[ "$(pg "SELECT sum(bytes) FROM series_bins s JOIN jobs j ON j.id = s.job WHERE j.job_id > 10000")" = $((2 * left * 12288)) ] ||
	fail "the series of the runs left after the killed purge are not exact"
totals_of | grep -v '^1[0-9][0-9][0-9][0-9]|' > "$T/totals-after"
cmp -s "$T/totals-before" "$T/totals-after" || fail "the killed purge touched other jobs' totals"
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge after the kill failed"
[ "$got" = "runs=$left parts=$((2 * left)) series=$((2 * left))" ] || fail "the purge after the kill: '$got', not the $left runs left"
ok "a purge killed after $((5000 - left)) of 5,000 runs: the $left left whole and exact, the next purge took them"

# ---- months purged whole: their partitions dropped -------------------------------------
# M: the month of 100 days ago, M2 the one before, M3 the one before that (schema 8; steps
# and mounts partitioned too from schema 10).
#   20001-20300 two parts ended in M           -> gone with M's partitions
#   20301       a part in M, a part in M2      -> gone whole (its M2 part row by row)
#   20302       two parts in M2                -> gone row by row
#   20303       a part in M2, a part ended now -> kept whole: its M2 part moved to the running
#               block (a new id, every row with it), M2's partitions dropped
#   20401-20410 two parts in M3, a purge killed after the commit that took their small rows
#               (M3 in purging, the partitions there) -> the next purge drops them first
#   20411       a part of M3 written then       -> in the running block, gone row by row
# parts FIRST LAST NODE MONTH [FROM]: parts of runs FIRST..LAST on NODE, ended a day and k
# seconds after MONTH (an SQL timestamp: a month's start in UTC), started an hour before (or
# FROM's day and k seconds: a run's part that spans months, so that it meets its other
# node's, issue 36), each with a step, a mount, a totals and a series row of 3 x 4096, a
# file and an MPI-IO record (schema 9).
parts() {
	pg "SELECT ioacct_block_parts(ioacct_block((extract(epoch FROM $4)::bigint + 86401) * 1000000000));
	    INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns, end_ns,
		state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
	    SELECT 'iorun', k, '$3', 'slurm', 0, 0, 'root', 'x', '/', s, e, 'COMPLETED', 0,
		'fentry', 5000000000, 0, 0
	    FROM generate_series($1, $2) k, LATERAL (SELECT (extract(epoch FROM $4)::bigint + 86401 + k % 1000)
		* 1000000000 AS e, (extract(epoch FROM ${5:-$4})::bigint + 86401 + k % 1000)
		* 1000000000 - 3600000000000 AS s) x;
	    INSERT INTO steps SELECT id, 0, start_ns, end_ns, 'COMPLETED', 0, '' FROM jobs
		WHERE job_id BETWEEN $1 AND $2 AND node = '$3';
	    INSERT INTO mounts SELECT id, 1, '/', 'ext4', 'sda' FROM jobs WHERE job_id BETWEEN $1 AND $2 AND node = '$3';
	    INSERT INTO totals (job, step_id, mnt_id, op, bytes, calls) SELECT id, 0, 1, 1, 12288, 3 FROM jobs
		WHERE job_id BETWEEN $1 AND $2 AND node = '$3';
	    INSERT INTO series (job, step_id, mnt_id, op, bins, bytes, calls) SELECT id, 0, 1, 1, '{0,7,9}',
		'{4096,4096,4096}', '{1,1,1}' FROM jobs WHERE job_id BETWEEN $1 AND $2 AND node = '$3';
	    INSERT INTO files SELECT id, 0, 0, 1, 2049, 7, '/x', NULL, 1, 0, 3, 0, 0, 0, 12288, 0, 0, 0,
		0, 2, 0, 2, -1, 12287, -1, -1, 0, 5, '{0,0,0,0,0,0,0,0,0,0}', '{0,0,3,0,0,0,0,0,0,0}', 0, 0
		FROM jobs WHERE job_id BETWEEN $1 AND $2 AND node = '$3';
	    INSERT INTO mpiio_files SELECT id, 0, 0, 42, '/x', NULL, 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		12288, 0, 0, 0, 0, 0, '{0,0,0,0,0,0,0,0,0,0}', '{0,0,3,0,0,0,0,0,0,0}'
		FROM jobs WHERE job_id BETWEEN $1 AND $2 AND node = '$3'" > /dev/null ||
		fail "cannot make the parts of runs $1-$2 on $3"
}
M="date_trunc('month', now() - interval '100 days', 'UTC')"
M2="($M - interval '1 month')"
M3="($M - interval '2 months')"
parts 20001 20300 n1 "$M"
parts 20001 20300 n2 "$M"
parts 20301 20301 n1 "$M" "$M2"
parts 20301 20302 n2 "$M2"
parts 20302 20303 n1 "$M2"
parts 20401 20410 n1 "$M3"
parts 20401 20410 n2 "$M3"
pg "INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns, end_ns, state,
      exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
    VALUES ('iorun', 20303, 'n2', 'slurm', 0, 0, 'root', 'x', '/', 1, $(date +%s)000000000, 'COMPLETED', 0,
      'fentry', 5000000000, 0, 0)" > /dev/null || fail "cannot make job 20303's recent part"
name() { pg "SELECT to_char(($1 + interval '1 day') AT TIME ZONE 'UTC', 'YYYY_MM')"; }
m1=$(name "$M") m2=$(name "$M2") m3=$(name "$M3")
b3=$(pg "SELECT ioacct_block((extract(epoch FROM $M3)::bigint + 86401) * 1000000000)")
[ "$(pg "SELECT count(*) FROM series_$m1")" = 601 ] || fail "series_$m1 does not hold the 601 parts of month $m1"
# A purge killed after its first commit for M3: the block in purging, its runs' small rows gone.
pg "BEGIN; INSERT INTO purging VALUES ($b3); DELETE FROM jobs WHERE job_id BETWEEN 20401 AND 20410; COMMIT" > /dev/null ||
	fail "cannot make the purge of $m3 killed midway"
for t in series totals steps mounts; do
	[ "$(pg "SELECT count(*) FROM ${t}_$m3")" = 20 ] || fail "the killed purge's rows are not left in ${t}_$m3"
done
# A part of M3 written meanwhile goes to the running block, not to the partition being dropped.
parts 20411 20411 n1 "$M3"
[ "$(pg "SELECT id >> 33 FROM jobs WHERE job_id = 20411")" = 1023 ] ||
	fail "a part of $m3 written while $m3 is purged did not go to the running block"
CUT=$(($(date +%s) - 30 * 86400))
rows_before=$(pg "SELECT (SELECT count(*) FROM jobs) || ' ' || (SELECT count(*) FROM series)")
got=$("$PGPURGE" "$PGURL" purge "$CUT" dry) || fail "pgpurge purge dry failed"
[ "$got" = "runs=303 parts=605 series=605 months=3" ] || fail "dry purge of the months: '$got', not 'runs=303 parts=605 series=605 months=3'"
[ "$(pg "SELECT (SELECT count(*) FROM jobs) || ' ' || (SELECT count(*) FROM series)")" = "$rows_before" ] ||
	fail "a dry purge changed the store"
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge failed"
[ "$got" = "runs=303 parts=605 series=605 months=3" ] || fail "purge of the months: '$got', not 'runs=303 parts=605 series=605 months=3'"
for t in series totals files mpiio_files steps mounts; do
	for m in $m1 $m2 $m3; do
		[ "$(pg "SELECT to_regclass('${t}_$m') IS NULL")" = t ] || fail "${t}_$m was not dropped"
	done
	[ "$(pg "SELECT count(*) FROM $t WHERE job NOT IN (SELECT id FROM jobs)")" = 0 ] || fail "$t has rows of no job"
	[ "$(pg "SELECT count(*) FROM $t x JOIN jobs j ON j.id = x.job WHERE j.job_id >= 20001")" = 1 ] ||
		fail "$t does not hold exactly the row of the part left (20303 on n1)"
done
[ "$(pg "SELECT count(*) FROM purging")" = 0 ] || fail "a month is still in purging"
[ "$(pg "SELECT id >> 33 FROM jobs WHERE job_id = 20303 AND node = 'n1'")" = 1023 ] ||
	fail "job 20303's part of $m2 was not moved to the running block"
[ "$(pg "SELECT s.bytes[1] + s.bytes[2] + s.bytes[3] || ' ' || t.bytes || ' ' || f.bytes_written || ' '
	|| x.bytes_written FROM jobs j JOIN series s ON s.job = j.id
	JOIN totals t ON t.job = j.id JOIN steps st ON st.job = j.id JOIN mounts m ON m.job = j.id
	JOIN files f ON f.job = j.id JOIN mpiio_files x ON x.job = j.id
	WHERE j.job_id = 20303 AND j.node = 'n1'")" = "12288 12288 12288 12288" ] ||
	fail "job 20303's part of $m2 lost rows in its move to the running block"
[ "$(pg "SELECT string_agg(job_id || node, ' ' ORDER BY job_id, node) FROM jobs WHERE job_id >= 20001")" = \
	"20303n1 20303n2" ] || fail "the run left is not 20303 (both parts)"
"$IOACCT" -M iorun -j 20001 -P -n > "$T/20001-ioacct" 2>&1
grep -q '20001' "$T/20001-ioacct" && fail "ioacct -j 20001 still shows the purged job"
totals_of | grep -v '^2[0-9][0-9][0-9][0-9]|' > "$T/totals-after"
cmp -s "$T/totals-before" "$T/totals-after" || fail "the purge of the months touched other jobs' totals"
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge failed"
[ "$got" = "runs=0 parts=0 series=0" ] || fail "a second purge: '$got', not nothing"
ok "months: $m1 and $m2 purged whole (partitions dropped; a part of a run not over moved out, whole), $m3's killed purge finished; the rest row by row, counts exact"
exit 0
