#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cluster store's purge as it goes and its dry run (issue 28: "progress and counts
# logged", "ioacct --purge --dry-run"), on a private PostgreSQL (scripts/pg.sh), no daemon.
# Months of parts made in SQL: M (100 days ago), M2 before it, M3 before that:
#   30001-30040 two parts ended in M           -> M whole
#   30041       two parts in M, its merged report waiting -> kept (moved out of M)
#   30101       a part in M, a part in M2      -> M2 (purged first), with its part in M
#   30102       two parts in M2                -> M2
#   30103       a part in M2, a part ended now -> kept (moved out of M2)
#   30201-30205 two parts in M3, a purge killed after the commit that took their small rows
#               (M3 in purging) -> the next purge drops M3 first
#   30211       a part of M3 written then (the running block) -> the rest, row by row
#   30301       a part ended now               -> kept
# Checked: the dry run's steps (tests/integration/pgpurge, PGPURGE_STEPS) and ioacct --purge
# --dry-run --cluster-store say per month exactly what the purge right after deletes and tells
# (a line per month, one when its partitions are dropped, one per batch of the rest), and
# change nothing (read-only: a store of another schema is refused, not migrated); ioacct
# --purge --cluster-store without --dry-run is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
[ "$(id -u)" = 0 ] || skip "needs root (runs PostgreSQL as postgres)"
require_pg
IOACCT=$abs_top_builddir/tools/ioacct
PGPURGE=$abs_top_builddir/tests/integration/pgpurge
[ -x "$PGPURGE" ] || fail "$PGPURGE not built (make -C tests/integration pgpurge)"
pg_test_setup
PGURL=$(pg_url "$PGD")
"$PGPURGE" "$PGURL" purge 0 dry > /dev/null || fail "pgpurge cannot make the cluster store"

M="(date_trunc('month', now() - interval '100 days', 'UTC') + interval '1 day')"
M2="($M - interval '1 month')"
M3="($M - interval '2 months')"
NOW="date_trunc('second', now())"
pg_parts 30001 30041 n1 "$M"
pg_parts 30001 30041 n2 "$M"
pg_parts 30101 30101 n1 "$M" "$M2"
pg_parts 30101 30102 n2 "$M2"
pg_parts 30102 30103 n1 "$M2"
pg_parts 30103 30103 n2 "$NOW" "$M2"
pg_parts 30201 30205 n1 "$M3"
pg_parts 30201 30205 n2 "$M3"
pg_parts 30301 30301 n1 "$NOW"
pg "INSERT INTO job_reports (cluster, job_id, expected, path, formats, uid, gid, copy_dir,
      merge_timeout_s, deadline, restart, run_start) SELECT 'c', 30041, '{n1,n2}', '/nonexistent', 1,
      0, 0, '', 60, now(), 0, max(run_start) FROM jobs WHERE cluster = 'c' AND job_id = 30041" \
	> /dev/null || fail "cannot make the report row of 30041"
name() { pg "SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM')"; }
m1=$(name "$M") m2=$(name "$M2") m3=$(name "$M3")
b3=$(pg "SELECT ioacct_block(extract(epoch FROM $M3)::bigint * 1000000000)")
pg "BEGIN; INSERT INTO purging VALUES ($b3); DELETE FROM jobs WHERE job_id BETWEEN 30201 AND 30205; COMMIT" \
	> /dev/null || fail "cannot make the purge of $m3 killed midway"
pg_parts 30211 30211 n1 "$M3"
[ "$(pg "SELECT id >> 33 FROM jobs WHERE job_id = 30211")" = 1023 ] ||
	fail "a part of $m3 written while $m3 is purged did not go to the running block"
CUT=$(($(date +%s) - 30 * 86400))

# ---- the dry run, through the library and through ioacct -----------------------------------
snap() { pg "SELECT (SELECT count(*) FROM jobs) || ' ' || (SELECT count(*) FROM series) || ' '
	|| (SELECT count(*) FROM pg_inherits) || ' ' || (SELECT count(*) FROM purging)"; }
before=$(snap)
got=$(PGPURGE_STEPS=1 "$PGPURGE" "$PGURL" purge "$CUT" dry 2> "$T/dry.steps") ||
	fail "pgpurge purge dry failed"
[ "$got" = "runs=43 parts=85 series=85 months=3" ] ||
	fail "dry run: '$got', not 'runs=43 parts=85 series=85 months=3'"
printf '%s\n' "month $m3 runs=0 parts=0 series=0" "month $m2 runs=2 parts=4 series=4" \
	"month $m1 runs=40 parts=80 series=80" "rest runs=1 parts=1 series=1" > "$T/dry.want"
diff "$T/dry.want" "$T/dry.steps" || fail "the dry run's months are not as made"
"$IOACCT" --purge --dry-run --cluster-store --before "$(date -d @"$CUT" +%Y-%m-%dT%H:%M:%S)" > "$T/ioacct.out" ||
	fail "ioacct --purge --dry-run --cluster-store failed"
grep -v '^would purge\|^(exact when counted' "$T/ioacct.out" > "$T/ioacct.got"
printf '%s\n' "  month $m3, whole (its partitions dropped): 0 runs, 0 node parts, 0 series rows" \
	"  month $m2, whole (its partitions dropped): 2 runs, 4 node parts, 4 series rows" \
	"  month $m1, whole (its partitions dropped): 40 runs, 80 node parts, 80 series rows" \
	"  the rest, row by row: 1 runs, 1 node parts, 1 series rows" \
	"total: 43 runs, 85 node parts, 85 series rows; 3 months whole" > "$T/ioacct.want"
diff "$T/ioacct.want" "$T/ioacct.got" ||
	fail "ioacct --purge --dry-run --cluster-store: not the months made"
grep -q "^would purge from the cluster store the runs of jobs ended before $(date -u -d @"$CUT" +%Y-%m-%dT%H:%M:%SZ) " \
	"$T/ioacct.out" || fail "ioacct's dry run does not say its cutoff: $(head -1 "$T/ioacct.out")"
[ "$(snap)" = "$before" ] || fail "a dry run changed the store"
"$IOACCT" --purge --cluster-store --before 30days > "$T/refused.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "only with --dry-run: the cluster store (PostgreSQL) is purged by ioacctd" "$T/refused.out" ||
	fail "ioacct --purge --cluster-store without --dry-run: exit $rc, '$(cat "$T/refused.out")'"
[ "$(snap)" = "$before" ] || fail "a refused purge changed the store"
# A store of another schema: the dry run (read-only) says so and leaves it, not migrated.
v=$(pg "SELECT max(version) FROM ioacct_schema")
pg "DELETE FROM ioacct_schema WHERE version = $v" > /dev/null || fail "cannot lower the schema"
"$IOACCT" --purge --dry-run --cluster-store --before 30days > "$T/old.out" 2>&1 &&
	fail "a dry run on schema $((v - 1)) did not fail: $(cat "$T/old.out")"
grep -q "cluster store has schema $((v - 1)), this ioacct knows $v" "$T/old.out" ||
	fail "a dry run on schema $((v - 1)): '$(cat "$T/old.out")'"
[ "$(pg "SELECT max(version) FROM ioacct_schema")" = $((v - 1)) ] ||
	fail "the dry run migrated the store"
pg "INSERT INTO ioacct_schema VALUES ($v)" > /dev/null || fail "cannot restore the schema"
[ "$(snap)" = "$before" ] || fail "a dry run on another schema changed the store"
ok "dry run: $m3 (in purging), $m2 2 runs, $m1 40 runs whole, 1 run row by row; ioacct says the same; nothing changed"

# ---- the purge right after: the same figures, told as it goes -------------------------------
got=$(PGPURGE_STEPS=1 "$PGPURGE" "$PGURL" purge "$CUT" 2> "$T/purge.steps") ||
	fail "pgpurge purge failed"
[ "$got" = "runs=43 parts=85 series=85 months=3" ] ||
	fail "purge: '$got', not 'runs=43 parts=85 series=85 months=3'"
printf '%s\n' "dropped $m3" "month $m2 runs=2 parts=4 series=4" "dropped $m2" \
	"month $m1 runs=40 parts=80 series=80" "dropped $m1" "batch runs=1 parts=1 series=1" > "$T/purge.want"
diff "$T/purge.want" "$T/purge.steps" || fail "the purge's steps are not the dry run's"
[ "$(pg "SELECT string_agg(DISTINCT job_id::text, ' ' ORDER BY job_id::text) FROM jobs WHERE job_id >= 30001")" = \
	"30041 30103 30301" ] || fail "the runs left are not 30041, 30103 and 30301"
[ "$(pg "SELECT count(*) FROM series")" = 5 ] || fail "series rows left: not the 5 of the runs kept"
got=$("$PGPURGE" "$PGURL" purge "$CUT" dry) || fail "pgpurge purge dry failed"
[ "$got" = "runs=0 parts=0 series=0" ] || fail "a dry run after the purge: '$got', not nothing"
ok "purge: each month told (runs, parts, series rows, then its partitions dropped), the rest per batch: the dry run's figures"
exit 0
