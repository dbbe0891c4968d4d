#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A backlog exported in batches (issue 28): one real ioacctd with cluster_db set to a
# private PostgreSQL (scripts/pg.sh) that is down while jobs finish.
#  1. Six jobs wait in the outbox; PostgreSQL starts: they go in one transaction (the
#     same exported_at, PostgreSQL's transaction time), each exact, exactly once, the
#     rows equal SQLite's.
#  2. Down again, five jobs wait: one PostgreSQL refuses (a check constraint: its
#     data) and one it fails (a trigger raises: not its data). The batch fails and
#     goes again one job a transaction: the three good ones land, exact; the refused
#     one is said once and unqueued; the failed one stays queued and lands once the
#     trigger is gone.
#  3. The exporter's session, with its prepared statements, ended by the server
#     (pg_terminate_backend, as a restart does) between two exports: the exporter
#     connects again, prepares them again, and the next job lands exactly once.
#  4. tests/integration/pgprep, on a connection of its own: a statement whose prepare
#     failed in an aborted transaction, or that is gone from the session, is prepared
#     again at its next call; a rollback does not take one back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg

pg_test_setup
start_daemon

queued() { sqlite3 "$DB" 'SELECT count(*) FROM export_queue'; }
# expect_exact ID SIZE COUNT: the job is in PostgreSQL once, with its bytes.
expect_exact() {
	[ "$(pg_copies "$1")" = 1 ] ||
		fail "job $1 is $(pg_copies "$1") times in PostgreSQL, not once"
	[ "$(pg_write_bytes "$1")" = $(($2 * $3)) ] ||
		fail "job $1: PostgreSQL has $(pg_write_bytes "$1") bytes, not $(($2 * $3))"
}

# wait_queued N: N jobs wait in the outbox (PostgreSQL is down while they finish).
wait_queued() {
	for _ in $(seq 1 300); do
		[ "$(queued)" = "$1" ] && return 0
		sleep 0.1
	done
	fail "$(queued) jobs in the outbox while PostgreSQL is down, not $1"
}

# ---- 1. a backlog of six jobs in one transaction ------------------------------------
pg_stop "$PGD"
for i in 1 2 3 4 5 6; do
	run_job $((500 + i)) $((4096 * i)) $((10 + i))
done
wait_queued 6
pg_start "$PGD" || fail "cannot start PostgreSQL again"
wait_exported "$DB" "a backlog of six jobs"
for i in 1 2 3 4 5 6; do
	expect_exact $((500 + i)) $((4096 * i)) $((10 + i))
done
txns() { pg "SELECT count(DISTINCT exported_at) FROM jobs WHERE job_id BETWEEN $1 AND $2"; }
[ "$(txns 501 506)" = 1 ] || fail "the backlog's six jobs went in $(txns 501 506) transactions, not one"
compare_stores "$DB" "" "a backlog exported in one batch"
ok "a backlog of six jobs exported in one transaction, each exact, rows equal to SQLite's"

# ---- 2. a batch with a refused job and a failing one --------------------------------
pg "ALTER TABLE jobs ADD CONSTRAINT test_no_666 CHECK (job_id <> 666);
    CREATE FUNCTION test_fail_667() RETURNS trigger LANGUAGE plpgsql AS
      \$\$BEGIN IF NEW.job_id = 667 THEN RAISE EXCEPTION 'test: job 667 fails'; END IF;
      RETURN NEW; END\$\$;
    CREATE TRIGGER test_fail_667 BEFORE INSERT ON jobs FOR EACH ROW
      EXECUTE FUNCTION test_fail_667()" > /dev/null || fail "cannot add the constraint and trigger"
pg_stop "$PGD"
run_job 601 8192 3
run_job 666 4096 1
run_job 602 8192 5
run_job 667 4096 2
run_job 603 8192 7
wait_queued 5
pg_start "$PGD" || fail "cannot start PostgreSQL again"
for _ in $(seq 1 600); do
	[ "$(queued)" = 1 ] && [ "$(pg_copies 603)" = 1 ] && break
	sleep 0.1
done
expect_exact 601 8192 3
expect_exact 602 8192 5
expect_exact 603 8192 7
[ "$(txns 601 603)" = 3 ] ||
	fail "the good jobs of the failed batch did not go one a transaction"
grep -q 'a batch of 5 jobs.*its jobs go again one a transaction' "$T/ioacctd.log" ||
	fail "no log line of the failed batch: $(grep -i batch "$T/ioacctd.log")"
[ "$(grep -c 'job .*/666 refused by the cluster store' "$T/ioacctd.log")" = 1 ] ||
	fail "job 666's refusal is not said once: $(grep 666 "$T/ioacctd.log")"
[ "$(pg_copies 666)" = 0 ] || fail "the refused job 666 is in PostgreSQL"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM export_queue q JOIN jobs j ON j.key = q.job_key
	WHERE j.job_id = 667")" = 1 ] || fail "the failed job 667 is not the one left in the outbox"
grep -q 'test: job 667 fails.*job 667 .*it stays queued' "$T/ioacctd.log" ||
	fail "job 667's failure is not said: $(grep 667 "$T/ioacctd.log")"
[ "$(pg_copies 667)" = 0 ] || fail "the failed job 667 is in PostgreSQL"
pg "DROP TRIGGER test_fail_667 ON jobs" > /dev/null || fail "cannot drop the trigger"
# It is tried again after the backoff (up to 60 s).
for _ in $(seq 1 900); do
	[ "$(queued)" = 0 ] && break
	sleep 0.1
done
[ "$(queued)" = 0 ] || fail "job 667 still waits 90 s after its trigger was dropped"
expect_exact 667 4096 2
ok "a failed batch went one job a transaction: 3 jobs exact, 666 refused once," \
	"667 kept and exported later"

# ---- 3. the exporter's session ended between two exports ----------------------------
# Its statements were prepared by the batches above; every session of ioacctd ends.
before=$(pg "SELECT now()")
[ "$(pg "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	WHERE application_name = 'ioacctd'")" -ge 1 ] || fail "no session of ioacctd to end"
run_job 701 16384 4
wait_exported "$DB" "after the exporter's session ended"
expect_exact 701 16384 4
[ "$(pg "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ioacctd'
	AND backend_start > '$before'")" -ge 1 ] || fail "job 701 did not go through a new session"
ok "the exporter's session ended between two exports: job 701 exact, once, in a new session"

# ---- 4. a failed prepare, a rollback, a statement gone ------------------------------
PGPREP=$abs_top_builddir/tests/integration/pgprep
[ -x "$PGPREP" ] || fail "$PGPREP not built (make -C tests/integration pgprep)"
"$PGPREP" "$PGURL" || fail "pgprep: the prepared statements' failures not handled"
stop_daemon
exit 0
