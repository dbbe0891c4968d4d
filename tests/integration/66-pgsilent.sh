#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every outside server has a deadline (issue 37): the cluster store.
#  1. A "PostgreSQL" that completes the startup and never answers (pgsilent.py):
#     the exporter is held in its first statement; a job finishes meanwhile;
#     SIGTERM ends ioacctd within 15 s, and the job waits in the outbox.
#  2. The same with cluster_db_statement_timeout = 1: the statement is given
#     up on its own (1 s + the 5 s grace), said, and the exporter connects
#     again; SIGTERM during the next wait ends ioacctd at once.
#  3. ioacctd started again with a real PostgreSQL: the job that waited is
#     exported. Then a session holds the tables locked: the exporter waits in
#     PostgreSQL (seen in pg_stat_activity) with the next job; SIGTERM ends
#     ioacctd within 15 s, the job in the outbox. The lock gone, ioacctd started
#     again: every job is in PostgreSQL exactly once, exact bytes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg

pg_test_setup "bin_width = 0.5"
LOCKER=
cleanup() {
	local rc=$?
	[ -z "${SPID:-}" ] || kill "$SPID" 2>/dev/null
	[ -z "$LOCKER" ] || kill "$LOCKER" 2>/dev/null
	stop_daemon
	pg_stop "$PGD"
	rm -rf "$PGD"
	(exit $rc)
	teardown
}
trap cleanup EXIT
REAL=$(grep '^cluster_db = ' "$CONF")
queued() { sqlite3 "$DB" 'SELECT count(*) FROM export_queue'; }

# wait_for WHAT COMMAND...: until COMMAND succeeds (60 s at most).
wait_for() {
	local what=$1
	shift
	for _ in $(seq 1 600); do "$@" && return 0; sleep 0.1; done
	fail "never: $what"
}

# term_timed LIMIT: SIGTERM to ioacctd, which must be gone within LIMIT s (it is killed at
# LIMIT + 10 s whatever happens); the seconds it took in TOOK.
term_timed() {
	local t0 t1
	t0=$EPOCHREALTIME
	kill -TERM "$DAEMON_PID"
	for _ in $(seq 1 $((($1 + 10) * 20))); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	t1=$EPOCHREALTIME
	if kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -9 "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
		DAEMON_PID=
		fail "ioacctd still ran $(($1 + 10)) s after SIGTERM"
	fi
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	TOOK=$(python3 -c "print('%.2f' % ($t1 - $t0))")
	python3 -c "import sys; sys.exit(0 if $TOOK <= $1 else 1)" ||
		fail "ioacctd took $TOOK s to end after SIGTERM, more than $1 s"
}

# start_silent DIR: a silent server recording into DIR (SILENT), the daemon's cluster store.
start_silent() {
	[ -z "${SPID:-}" ] || kill "$SPID"
	SILENT=$1
	mkdir -p "$SILENT"
	python3 "$(dirname "$0")/pgsilent.py" "$SILENT" &
	SPID=$!
	wait_for "the silent server listens" test -s "$SILENT/port"
	sed -i "s|^cluster_db = .*|cluster_db = host=127.0.0.1 port=$(cat "$SILENT/port") \
dbname=ioacct user=ioacct sslmode=disable gssencmode=disable|" "$CONF"
}
# queries_on CONN: that connection of the silent server has been sent a statement.
queries_on() { grep -qE "^$1 [QPB] " "$SILENT/messages" 2>/dev/null; }

# ---- 1. the silent server: SIGTERM within 15 s, the job in the outbox -------------------
start_silent "$T/silent1"
start_daemon
# At start the exporter connects and sends its first statement, never answered.
wait_for "the exporter's first statement reaches the silent server" queries_on 1
run_job 6601 4096 10
[ "$(queued)" = 1 ] || fail "$(queued) jobs in the outbox, not 1"
term_timed 15
echo "SIGTERM to exit: $TOOK s (the exporter held by a server that never answers)"
[ "$(queued)" = 1 ] || fail "after the stop, $(queued) jobs in the outbox, not 1"
grep -q "export given up at the stop (.*ioacctd is stopping); 1 jobs wait in the outbox" \
	"$T/ioacctd.log" || fail "the log does not say the export was given up at the stop"
ok "a server that never answers: SIGTERM ends ioacctd in $TOOK s, the job waits in the outbox"

# ---- 2. its own deadline: statement timeout 1 s + 5 s of grace ----------------------------
echo "cluster_db_statement_timeout = 1" >> "$CONF"
start_silent "$T/silent2"
start_daemon
wait_for "the exporter's first statement" queries_on 1
wait_for "the statement given up" grep -qE "cluster store unreachable: .*no answer to a statement within 6.0 s; 1 jobs waiting" "$T/ioacctd.log"
wait_for "the exporter connects again" queries_on 2
term_timed 15
# By the silent server's clock: the first statement sent, its connection closed by ioacctd.
took=$(awk '$1 == 1 && $2 ~ /^[QPB]$/ && !q { q = $3 } $1 == 1 && $2 == "closed" { c = $3 }
	END { printf "%.1f", c - q }' "$SILENT/messages")
python3 -c "import sys; sys.exit(0 if 6.0 <= $took <= 16 else 1)" ||
	fail "the statement was given up after $took s, not 6 (1 s + 5 s of grace): $(cat "$SILENT/messages")"
echo "given up after $took s; SIGTERM to exit: $TOOK s"
[ "$(queued)" = 1 ] || fail "$(queued) jobs in the outbox, not 1"
ok "statement timeout 1 s: given up after $took s (1 + 5 s of grace), said, connected again;" \
	"SIGTERM in $TOOK s"
kill "$SPID"
SPID=

# ---- 3. a real server, its tables locked: the exporter waits in PostgreSQL ---------------
sed -i -e "s|^cluster_db = .*|${REAL//&/\\&}|" -e '/^cluster_db_statement_timeout/d' "$CONF"
# The job that waited goes (and the schema is made) first.
start_daemon
wait_exported "$DB" "the first job, on the real server"
stop_daemon
"$PGBIN/psql" -X -q "$PGURL" -c "BEGIN" -c "LOCK TABLE series IN ACCESS EXCLUSIVE MODE" \
	-c "SELECT pg_sleep(600)" > /dev/null 2>&1 &
LOCKER=$!
wait_for "the locker holds the lock" sh -c "[ \"\$(\"$PGBIN/psql\" -X -At '$PGURL' -c \
	\"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
	WHERE c.relname = 'series' AND l.mode = 'AccessExclusiveLock' AND l.granted\")\" = 1 ]"
start_daemon
run_job 6602 8192 5
wait_for "the exporter waits for the lock" sh -c "[ \"\$(\"$PGBIN/psql\" -X -At '$PGURL' -c \
	\"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ioacctd' \
	AND wait_event_type = 'Lock'\")\" = 1 ]"
term_timed 15
echo "SIGTERM to exit: $TOOK s (the exporter waiting in PostgreSQL)"
[ "$(queued)" = 1 ] || fail "$(queued) jobs in the outbox, not 1"
[ "$(pg_copies 6602)" = 0 ] || fail "job 6602 is in PostgreSQL before its export"
ok "a real server holding the exporter (a lock): SIGTERM ends ioacctd in $TOOK s, the job waits"

"$PGBIN/psql" -X -q "$PGURL" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
	WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()" > /dev/null
wait "$LOCKER" 2>/dev/null
LOCKER=
start_daemon
wait_exported "$DB" "after the restart with a real server"
for j in 6601:40960 6602:40960; do
	[ "$(pg_copies "${j%%:*}")" = 1 ] || fail "job ${j%%:*} is $(pg_copies "${j%%:*}") times in PostgreSQL"
	[ "$(pg_write_bytes "${j%%:*}")" = "${j#*:}" ] ||
		fail "job ${j%%:*}: PostgreSQL has $(pg_write_bytes "${j%%:*}") bytes, not ${j#*:}"
done
compare_stores "$DB" "" "the jobs that waited"
ok "restarted on the real server: the jobs that waited exported once, exact"
