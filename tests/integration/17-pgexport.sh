#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cluster store (issue 13): one real ioacctd with cluster_db set to a private
# PostgreSQL (scripts/pg.sh, as scripts/minicluster starts it):
#  1. iorun jobs with exact bytes reach PostgreSQL; its rows equal the SQLite store's;
#  2. PostgreSQL stopped: a job runs and finishes, its report is exact, it waits in
#     the outbox; PostgreSQL started 30 s later: it arrives, exactly once;
#  3. kill -9 after PostgreSQL's commit and before SQLite's unqueue
#     (IOACCT_CRASH_AT=export-after-pg-commit), restart: no duplicate rows;
#  4. schema 4 with data migrated to 7 (issue 28): two rows of one job id on the
#     node become its runs 0 and 1, its report row the last run's; ioacct -j
#     through ioacctd gives the last run, -D both, each with its own bytes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg

# The postgres user must reach its directory: not inside the private $T.
pg_test_setup "bin_width = 0.5"
start_daemon

queued() { sqlite3 "$DB" 'SELECT count(*) FROM export_queue'; }

# wait_drained: until the outbox is empty (generous: the machine is shared).
wait_drained() {
	for _ in $(seq 1 600); do
		[ "$(queued)" = 0 ] && return 0
		sleep 0.1
	done
	fail "$(queued) jobs still wait for the cluster store after 60 s"
}

# ---- 1. jobs reach PostgreSQL, equal to SQLite -------------------------------------
run_job 101 1048576 3
run_job 102 4096 25
run_job 103 1 12345
wait_drained
[ "$(pg_write_bytes 101)" = 3145728 ] || fail "job 101: PostgreSQL has $(pg_write_bytes 101) bytes, not 3145728"
[ "$(pg_write_bytes 102)" = 102400 ] || fail "job 102: PostgreSQL has $(pg_write_bytes 102) bytes, not 102400"
[ "$(pg_write_bytes 103)" = 12345 ] || fail "job 103: PostgreSQL has $(pg_write_bytes 103) bytes, not 12345"
[ "$(pg "SELECT count(*) FROM jobs WHERE node = '$(hostname -s)'")" = 3 ] ||
	fail "the jobs are not stored under node $(hostname -s)"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] || fail "PostgreSQL schema version is not $PG_SCHEMA"
compare_stores "$DB" "" "three jobs"

# ---- 2. PostgreSQL down while a job finishes, back 30 s later ----------------------
pg_stop "$PGD"
run_job 201 65536 7
grep -q 'cluster store unreachable: .*jobs waiting' "$T/ioacctd.log" ||
	{ sleep 3; grep -q 'cluster store unreachable' "$T/ioacctd.log"; } ||
	fail "no 'cluster store unreachable' in the log"
[ "$(grep -c 'cluster store unreachable' "$T/ioacctd.log")" = 1 ] ||
	fail "'cluster store unreachable' logged more than once for one outage"
[ "$(queued)" = 1 ] || fail "$(queued) jobs in the outbox while PostgreSQL is down, not 1"
sleep 30
[ "$(queued)" = 1 ] || fail "the job left the outbox while PostgreSQL was down"
pg_start "$PGD" || fail "cannot start PostgreSQL again"
wait_drained
grep -q 'cluster store back' "$T/ioacctd.log" || fail "no 'cluster store back' in the log"
[ "$(pg_copies 201)" = 1 ] || fail "job 201 is $(pg_copies 201) times in PostgreSQL, not once"
[ "$(pg_write_bytes 201)" = 458752 ] || fail "job 201: PostgreSQL has $(pg_write_bytes 201) bytes, not 458752"
compare_stores "$DB" "" "after a 30 s outage"

# ---- 3. kill -9 between PostgreSQL's commit and SQLite's unqueue ----------------------
stop_daemon
IOACCT_CRASH_AT=export-after-pg-commit start_daemon
run_job 301 8192 9
for _ in $(seq 1 300); do
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "ioacctd did not reach export-after-pg-commit"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
grep -q 'IOACCT_CRASH_AT=export-after-pg-commit: killing myself' "$T/ioacctd.log" ||
	fail "ioacctd died, but not at export-after-pg-commit"
[ "$(queued)" = 1 ] || fail "after the crash $(queued) jobs are queued, not job 301 alone"
[ "$(pg_copies 301)" = 1 ] || fail "PostgreSQL had not committed job 301 before the crash"
start_daemon
wait_drained
[ "$(pg_copies 301)" = 1 ] || fail "job 301 is $(pg_copies 301) times in PostgreSQL after the re-export"
[ "$(pg_write_bytes 301)" = 73728 ] || fail "job 301: PostgreSQL has $(pg_write_bytes 301) bytes, not 73728"
compare_stores "$DB" "" "after kill -9 mid-export"
stop_daemon

# ---- 4. schema 4 with a requeued job's two runs, migrated ------------------------------
# Schema 4 as it was: no restart columns (their index goes with them), the report keyed
# by (cluster, job_id), the index by job id. Jobs 101 and 102 become runs of slurm job
# 900 (101 started first), as schema 4 stored them; their series one row per bin.
pg_back_to_schema5 || fail "cannot put PostgreSQL back to schema 5"
pg "ALTER TABLE jobs DROP COLUMN restart;
    CREATE INDEX jobs_cluster_job_id ON jobs (cluster, job_id);
    ALTER TABLE job_reports DROP CONSTRAINT job_reports_pkey; ALTER TABLE job_reports DROP COLUMN restart;
    ALTER TABLE job_reports ADD PRIMARY KEY (cluster, job_id);
    DELETE FROM ioacct_schema WHERE version = 5;
    UPDATE jobs SET job_id = 900, source = 'slurm' WHERE job_id IN (101, 102);
    INSERT INTO job_reports (cluster, job_id, expected, path, formats, uid, gid, copy_dir,
      merge_timeout_s, deadline) VALUES ('iorun', 900, '{a,b}', '/x', 1, 0, 0, '', 1, now())" > /dev/null ||
	fail "cannot put PostgreSQL back to schema 4"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = 900 AND start_ns = (SELECT min(start_ns) FROM jobs WHERE job_id = 900)
	AND id IN (SELECT job FROM totals WHERE bytes = 3145728)")" = 1 ] || fail "job 101 is not the first of job 900's rows"
start_daemon
IOACCT=$abs_top_builddir/tools/ioacct
for _ in $(seq 1 100); do
	[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] && break
	sleep 0.1
done
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] || fail "PostgreSQL was not migrated to schema $PG_SCHEMA"
got=$(pg "SELECT string_agg(j.restart || ':' || t.bytes, ' ' ORDER BY j.restart) FROM jobs j
	JOIN totals t ON t.job = j.id JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	WHERE j.job_id = 900 AND t.op = 1 AND m.path = '$MNT'")
[ "$got" = "0:3145728 1:102400" ] || fail "job 900's runs after the migration: '$got', not '0:3145728 1:102400'"
[ "$(pg "SELECT restart FROM job_reports WHERE job_id = 900")" = 1 ] || fail "job 900's report row is not its last run's"
q() {
	"$IOACCT" -c "$CONF" -M iorun -j 900 -X -n -P --mounts -o JobID,Restarts,Mount,WriteBytes "$@" |
		awk -F'|' -v m="$MNT" '$3 == m' | tr '\n' ' '
}
got=$(q)
[ "$got" = "900|1|$MNT|102400 " ] || fail "ioacct -j 900 from the cluster store: '$got', not the last run alone"
got=$(q -D)
[ "$got" = "900|0|$MNT|3145728 900|1|$MNT|102400 " ] || fail "ioacct -j 900 -D from the cluster store: '$got', not both runs"
ok "PostgreSQL schema 4 with two runs of a job migrated: runs 0 and 1, ioacct -j the last, -D both, exact"
stop_daemon
exit 0
