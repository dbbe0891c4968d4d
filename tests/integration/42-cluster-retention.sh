#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Retention of the cluster store by ioacctd (issue 28, cluster_retention =
# yes): cluster_db a private PostgreSQL, purge_after = 20s, looked at every
# second. Job 701 ends and is exported; job 702 runs on past the cutoff (a
# running job is never purged). Past purge_after job 701 is gone from the
# node's store and from PostgreSQL (every table, ioacct through the cluster
# store), and the purge is logged; job 702 stays whole in PostgreSQL once it
# ends, with its exact bytes. Before them, 5 runs of two parts made in SQL in the
# month of 100 days ago: purged whole at the next round, told in two lines (the month's
# runs, parts and series rows; its partitions dropped) before the round's summary.
# Who speaks to PostgreSQL (issue 37): while a session of the test holds the table the
# purge reads first, the retention's round waits in PostgreSQL, its connection open, and
# every process connected to the server (but the test's session) is one of the daemon's
# unprivileged "pg" workers (ioacct's uid, CapEff 0), the core none; the retention's worker
# killed there is said, and the rounds after it purge (job 701 below). At the end, a
# SIGTERM while the purge waits so ends it: the daemon and its connections are gone long
# before the statement timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg

pg_test_setup "purge_after = 20s
retention_interval = 1s
cluster_retention = yes"
IOACCT=$abs_top_builddir/tools/ioacct
start_daemon

# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, polling every 0.1 s.
wait_for() {
	local what=$1 n=$(($2 * 10))
	shift 2
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	fail "$what: not within the time allowed"
}
pg_bytes() {
	pg "SELECT coalesce(sum(t.bytes), 0) FROM totals t JOIN jobs j ON j.id = t.job
	    JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	    WHERE j.job_id = $1 AND t.op = 1 AND m.path = '$MNT'"
}

"$IORUN" --job-id 701 -- "$IOWORK" write "$D/a" 4096 5 > /dev/null || fail "iorun job 701 failed"
# Job 702 runs past the cutoff: it waits for a file, then writes.
"$IORUN" --job-id 702 -- bash -c "while [ ! -e '$D/go' ]; do sleep 0.2; done; exec '$IOWORK' write '$D/b' 4096 7" > /dev/null &
J702=$!
schema() { [ "$(pg "SELECT to_regclass('purging') IS NOT NULL" 2> /dev/null)" = t ]; }
wait_for "the cluster store's schema" 60 schema
M="(date_trunc('month', now() - interval '100 days', 'UTC') + interval '1 day')"
m1=$(pg "SELECT to_char($M AT TIME ZONE 'UTC', 'YYYY-MM')")
pg_parts 30001 30005 n1,n2 "$M"
month_gone() { [ "$(pg "SELECT count(*) FROM jobs WHERE job_id BETWEEN 30001 AND 30005")" = 0 ] &&
	grep -q "retention: cluster store: purged 5 runs" "$T/ioacctd.log"; }
wait_for "month $m1 purged whole" 60 month_gone
grep -o "retention: cluster store: \(month\|purged\) .*" "$T/ioacctd.log" | sed 's/ in [0-9]* ms$/ in N ms/' > "$T/month.got"
printf '%s\n' "retention: cluster store: month $m1 purged whole: 5 runs (10 node parts, 10 series rows) in N ms" \
	"retention: cluster store: month $m1: partitions dropped in N ms" \
	"retention: cluster store: purged 5 runs (10 node parts, 10 series rows; 1 months whole, partitions dropped) in N ms" \
	> "$T/month.want"
diff "$T/month.want" "$T/month.got" || fail "the month's purge is not told as it went"
ok "month $m1 purged whole by ioacctd: its runs (5, 10 parts, 10 series rows), its partitions dropped, logged"

# pg_clients [BACKEND]: the pids of the processes connected to the test's PostgreSQL (to
# its backend pid BACKEND only), one a line: the peers of the sockets the server accepted.
pg_clients() {
	local mine='' i args=()
	[ -z "${1:-}" ] || mine=" $(find "/proc/$1/fd" -lname 'socket:*' -printf '%l ' 2> /dev/null |
		sed 's/socket:\[\([0-9]*\)\]/\1/g')"
	for i in $(ss -xH | awk -v s="$PGD/.s.PGSQL.5432" -v m="$mine" \
		'$2 == "ESTAB" && $5 == s && (m == "" || index(m, " " $6 " ")) { print $8 }'); do
		args+=(-o -lname "socket:\[$i\]")
	done
	[ ${#args[@]} -gt 0 ] || return 0
	find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \( "${args[@]:1}" \) -printf '%h\n' 2> /dev/null |
		cut -d/ -f3 | sort -u
}
# pg_worker PID: PID is a "pg" worker of the daemon, as ioacct, with no capability.
pg_worker() {
	local s=/proc/$1/status u
	u=$(id -u ioacct)
	[ "$1" != "$DAEMON_PID" ] || fail "ioacctd's core (pid $1) is connected to PostgreSQL"
	[ "$(awk '{ print $4 }' "/proc/$1/stat")" = "$DAEMON_PID" ] &&
		tr '\0' ' ' < "/proc/$1/cmdline" | grep -q '^ioacctd --worker pg ' ||
		fail "pid $1, connected to PostgreSQL, is not a pg worker of ioacctd: $(tr '\0' ' ' < "/proc/$1/cmdline")"
	grep -qx "Uid:	$u	$u	$u	$u" "$s" || fail "pg worker $1: $(grep ^Uid "$s")"
	grep -qx "CapEff:	0000000000000000" "$s" || fail "pg worker $1: $(grep ^CapEff "$s")"
}
# hold_purging: a session of the test holds the table purging (ACCESS EXCLUSIVE) until
# release_purging; sets LOCKER (its psql) once the purge's first read waits for it, and
# WAITER, the waiting backend's pid.
PURGE_READ="SELECT block FROM purging ORDER BY 1"
hold_purging() {
	"$PGBIN/psql" -X -q -At "$PGURL" -c "SET application_name = 'test-lock'" \
		-c "BEGIN" -c "LOCK TABLE purging IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(600)" \
		> /dev/null 2>&1 &
	LOCKER=$!
	waiting() {
		WAITER=$(pg "SELECT pid FROM pg_stat_activity WHERE query = '$PURGE_READ'
			AND wait_event_type = 'Lock'")
		[ -n "$WAITER" ]
	}
	wait_for "the retention's purge waiting for the test's lock" 60 waiting
}
release_purging() {
	pg "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'test-lock'" \
		> /dev/null
	wait "$LOCKER" 2> /dev/null
}

hold_purging
n=0
for p in $(pg_clients); do
	[ "$p" = "$LOCKER" ] && continue
	pg_worker "$p"
	n=$((n + 1))
done
RW=$(pg_clients "$WAITER")
[ -n "$RW" ] && [ "$RW" != "$LOCKER" ] || fail "no process holds the waiting purge's connection"
pg_worker "$RW"
[ "$n" -ge 2 ] || fail "$n pg workers connected, not the exporter's and the retention's"
ok "while the purge waits in PostgreSQL: $n connected processes, each a pg worker (uid ioacct, CapEff 0), the core none"
kill -KILL "$RW"
dead() { grep -q "worker pg (pid $RW) killed by signal 9" "$T/ioacctd.log" &&
	grep -q "retention: cluster store: purge stopped: worker pg: .*(the rest at the next round)" \
		"$T/ioacctd.log"; }
wait_for "the retention's worker's death said" 60 dead
release_purging
ok "the retention's worker killed mid-purge: said, the round given up until the next"

in_pg() { [ "$(pg_bytes 701)" = 20480 ]; }
wait_for "job 701 exported" 60 in_pg
ok "job 701 in PostgreSQL, 20480 bytes"

purged() { [ "$(pg "SELECT count(*) FROM jobs WHERE job_id = 701")" = 0 ]; }
wait_for "job 701 purged from PostgreSQL past purge_after" 90 purged
for t in steps mounts totals series; do
	[ "$(pg "SELECT count(*) FROM $t c WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job)")" = 0 ] ||
		fail "PostgreSQL's $t keeps rows of a purged job"
done
grep -q "retention: cluster store: purged 1 runs" "$T/ioacctd.log" || fail "the cluster store's purge was not logged"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM jobs WHERE job_id = 701')" = 0 ] || fail "job 701 is still in the node's store"
"$IOACCT" -j 701 -X -n -P -o JobID > "$T/q.out" 2>&1
[ ! -s "$T/q.out" ] || grep -q "no job\|not found" "$T/q.out" || fail "ioacct -j 701 still finds it: $(cat "$T/q.out")"
ok "job 701 past purge_after: gone from PostgreSQL (every table) and the node's store; logged"

kill -0 "$J702" 2> /dev/null || fail "job 702 ended too early"
touch "$D/go"
wait "$J702" || fail "iorun job 702 failed"
in_pg2() { [ "$(pg_bytes 702)" = 28672 ]; }
wait_for "job 702 exported" 60 in_pg2
ok "job 702, running past the cutoff, untouched: 28672 bytes in PostgreSQL once it ended"

hold_purging
kill -TERM "$DAEMON_PID"
# The waiting backend notices its client gone only once it has the lock: ask the sockets.
gone() {
	local st
	st=$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat" 2> /dev/null)
	{ [ -z "$st" ] || [ "$st" = Z ]; } && [ "$(pg_clients)" = "$LOCKER" ]
}
# The statement timeout (cluster_db_statement_timeout) is 5 minutes: a stop that waited for it fails.
wait_for "ioacctd's stop during a purge" 60 gone
wait "$DAEMON_PID"
DAEMON_PID=
release_purging
ok "SIGTERM while the purge waits in PostgreSQL: ioacctd ended, its connections closed"
