#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Nodes exporting at once into a fresh cluster store never deadlock (issue 28): the
# partitions of a month are made before an export's transaction, each month in its own,
# and a connection takes no lock that waits for the exports in flight. In a private
# PostgreSQL (scripts/pg.sh), parts exported as ioacctd's exporter does
# (tests/integration/pgparts, one connection each, as nodes coming and going):
#  1. four "nodes" at once, each exporting its part of a job in each of 13 months, every
#     part twice (the second replaces the first, as a job's export after its running one):
#     each of the 104 exports succeeds, PostgreSQL logs no deadlock, the 13 months have
#     their 7 partitions each, and the rows are exactly those of the same exports made one
#     by one into a second database.
#     (Before: three nodes' first jobs of a month deadlocked on making its partitions,
#     again each time they retried, and a merged report went out without them.)
#  2. a transaction holding the partitioned tables as an export does (ROW EXCLUSIVE)
#     while a new connection exports a part: it is not held up (before, every connection
#     took an ACCESS EXCLUSIVE lock on series and totals to add counter columns that were
#     there, waiting for each export in flight and stopping each read).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
[ "$(id -u)" = 0 ] || skip "needs root (PostgreSQL runs as postgres, the store's role is root)"
require_pg
PGPARTS=$abs_top_builddir/tests/integration/pgparts
[ -x "$PGPARTS" ] || fail "$PGPARTS not built (make -C tests/integration pgparts)"

T=$(mktemp -d /var/tmp/ioacct-pgmonths.XXXXXX)
chmod 755 "$T"
PGD=$T/pg
trap 'rc=$?; pg_stop "$PGD"; rm -rf "$T"; exit $rc' EXIT
pg_init "$PGD" || fail "cannot start PostgreSQL in $PGD"
runuser -u postgres -- "$PGBIN/createdb" -h "$PGD" -O root ioacct_seq ||
	fail "cannot create the second database"
SEQURL="postgresql:///ioacct_seq?host=$PGD"

MONTH=2678400000000000 # 31 days in ns: each part a month after the one before
NODES="1 2 3 4"
MONTHS=13
# export URL NODE M GEN: node NODE's part of job 1000+M, in month M (from 2025-01), values GEN.
export_part() {
	"$PGPARTS" "$1" $((1000 + $3)) 4 1000000000 "n$2:$(($3 * MONTH + $2 * 1000000000)):abc:$4"
}

# ---- 1. four nodes at once, first parts of 13 months ---------------------------------------
for n in $NODES; do
	(
		for m in $(seq 0 $((MONTHS - 1))); do
			for g in 1 2; do
				export_part "$PGURL" "$n" "$m" "$g" > /dev/null 2>> "$T/err.$n" ||
					echo "node $n month $m gen $g" >> "$T/failed"
			done
		done
	) &
done
wait
[ ! -s "$T/failed" ] || { cat "$T"/err.*; fail "$(wc -l < "$T/failed") of 104 exports failed"; }
! grep -q 'deadlock detected' "$PGD/postgresql.log" ||
	fail "PostgreSQL logged a deadlock: $(grep -m1 -A1 'deadlock detected' "$PGD/postgresql.log")"
nparts=$(pg "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	     WHERE c.relname ~ '^(series|totals|files|mpiio_files|steps|mounts|hdf5_records)_2026_0[1-2]$'
	     OR c.relname ~ '^(series|totals|files|mpiio_files|steps|mounts|hdf5_records)_2025_(0[1-9]|1[0-2])$'")
[ "$nparts" = $((MONTHS * 7)) ] || fail "$nparts partitions for $MONTHS months, not $((MONTHS * 7))"
for n in $NODES; do
	for m in $(seq 0 $((MONTHS - 1))); do
		for g in 1 2; do
			export_part "$SEQURL" "$n" "$m" "$g" > /dev/null || fail "the one-by-one export failed"
		done
	done
done
# rows URL: every part, its block, and its rows summed.
rows() {
	"$PGBIN/psql" -X -q -At -F '|' "$1" -c "
	    SELECT j.job_id, j.node, j.id >> 33, count(DISTINCT j.id),
	        (SELECT sum(t.calls) || '/' || sum(t.bytes) FROM totals t WHERE t.job = j.id),
	        (SELECT count(*) || '/' || sum(s.calls) || '/' || sum(s.bytes) FROM series_bins s
	         WHERE s.job = j.id),
	        (SELECT count(*) FROM mounts m WHERE m.job = j.id),
	        (SELECT count(*) FROM steps s WHERE s.job = j.id)
	    FROM jobs j GROUP BY j.job_id, j.node, j.id ORDER BY 1, 2"
}
rows "$PGURL" > "$T/at-once"
rows "$SEQURL" > "$T/one-by-one"
[ "$(wc -l < "$T/at-once")" = $((MONTHS * 4)) ] ||
	fail "$(wc -l < "$T/at-once") parts in PostgreSQL, not $((MONTHS * 4))"
diff -u "$T/one-by-one" "$T/at-once" || fail "the parts exported at once differ from the ones exported one by one"
ok "4 nodes x $MONTHS months x 2 exports at once: no deadlock, $nparts partitions, $((MONTHS * 4)) parts exactly as exported one by one"

# ---- 2. a connection while an export holds the partitioned tables -----------------------
mkfifo "$T/hold"
(
	echo "BEGIN; LOCK TABLE ONLY series, ONLY totals IN ROW EXCLUSIVE MODE; SELECT 'held';"
	# Held until the other export is done (or the test gives up on it).
	while [ ! -e "$T/done" ]; do sleep 0.2; done
	echo "COMMIT;"
) | "$PGBIN/psql" -X -q -At "$PGURL" > "$T/hold.out" 2>&1 &
holder=$!
for _ in $(seq 1 600); do grep -q held "$T/hold.out" 2> /dev/null && break; sleep 0.1; done
grep -q held "$T/hold.out" || fail "the holding transaction did not start: $(cat "$T/hold.out")"
timeout 120 "$PGPARTS" "$PGURL" 2000 4 1000000000 n9:0 > /dev/null 2> "$T/err.held"
rc=$?
touch "$T/done"
wait "$holder"
[ "$rc" = 0 ] || fail "an export while another held the tables: exit $rc (124: held up 120 s) $(cat "$T/err.held")"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = 2000")" = 1 ] || fail "job 2000 not in PostgreSQL"
ok "a new connection exports while another transaction holds series and totals"
exit 0
