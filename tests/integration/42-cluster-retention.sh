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
