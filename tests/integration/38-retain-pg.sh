#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Retention beside a cluster store (issue 28): ioacctd with cluster_db set to a
# private PostgreSQL, purge_after = 3s, looked at every second. PostgreSQL is
# stopped before a job runs: the job ends and waits in the outbox, and the
# daemon keeps it past purge_after (it says so: "1 kept until exported"),
# every byte still in the node's store. PostgreSQL back: the job is exported,
# and only then purged from the node's store, PostgreSQL keeping it exactly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg

# The postgres user must reach its directory: not inside the private $T.
pg_test_setup "purge_after = 3s
retention_interval = 1s"
IOACCT=$abs_top_builddir/tools/ioacct
start_daemon

sqlv() { sqlite3 "$DB" "$1"; }

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

pg_stop "$PGD"
"$IORUN" --job-id 501 -- "$IOWORK" write "$D/f" 4096 9 > /dev/null || fail "iorun job 501 failed"
[ "$(sqlv 'SELECT count(*) FROM export_queue')" = 1 ] || fail "job 501 is not in the outbox"
kept() { grep -q "retention: purged 0 jobs .* 1 kept until exported" "$T/ioacctd.log"; }
wait_for "a retention round past purge_after keeping job 501" 60 kept
[ "$(sqlv 'SELECT count(*) FROM jobs WHERE job_id = 501')" = 1 ] || fail "job 501 was purged before its export"
[ "$("$IOACCT" --db "$DB" -j 501 -X -n -P -o WriteBytes)" = 36864 ] ||
	fail "job 501 is not whole in the node's store while it waits"
ok "job 501 kept past purge_after while PostgreSQL is down, 36864 bytes"

pg_start "$PGD" || fail "cannot start PostgreSQL again"
gone() { [ "$(sqlv 'SELECT count(*) FROM jobs WHERE job_id = 501')" = 0 ]; }
wait_for "job 501 exported, then purged" 120 gone
[ "$(sqlv 'SELECT count(*) FROM export_queue')" = 0 ] || fail "the outbox is not empty"
[ "$(pg "SELECT coalesce(sum(t.bytes), 0) FROM totals t JOIN jobs j ON j.id = t.job
	JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	WHERE j.job_id = 501 AND t.op = 1 AND m.path = '$MNT'")" = 36864 ] ||
	fail "PostgreSQL does not have job 501's 36864 bytes"
grep -q "retention: purged 1 jobs ended more than 3s ago" "$T/ioacctd.log" || fail "the purge was not logged"
ok "job 501 exported when PostgreSQL came back, then purged from the node; PostgreSQL has its 36864 bytes"
