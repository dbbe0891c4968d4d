#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The merged series of a run of several nodes are made once, when the export of its last
# expected part commits (issue 28): parts exported through ioacct_pgstore_job_put and their
# merged report offered (expected nodes), as ioacctd's exporter does
# (tests/integration/pgparts -e), into a private PostgreSQL (scripts/pg.sh), in awkward
# orders. Before the last part no run has merged series; right after it, before any read,
# the run has them, named after exactly its parts, equal to an independent SQL sum of the
# parts' bins (the readers' rules: the earliest start's axis, each part shifted by whole
# bins, mount ids numbered by path in node order, a sum past uint64 saturated as a read
# gives it). The cases:
#   801 three nodes, the earliest last
#   802 four nodes, starts that move the axis unevenly, mounts that differ
#   803 three nodes with bytes near UINT64_MAX (the sum saturates, as the read's)
#   804 one node (none)
#   805 three expected, two exported (merge_timeout): none; the read sums and stores them
#   806 parts with no merged report (no expected nodes): none at export
#   807 every part exported before the report's first offer: made once, at that offer
#   801 again as run 1 (requeued, PGPARTS_RESTART) of two nodes: a run apart
# Then parts exported again (an export retried, a running job's next step): 801's n3 with
# other values, twice, then with fewer bins; 802's n4 with another mount: made again, no
# double count, exact. Then ioreport (through a real ioacctd) of each job reads the merged
# series as made (made_at unchanged) and says the same, byte for byte in JSON, as when they
# are dropped and the nodes summed again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOREPORT=$abs_top_builddir/tools/ioreport
PGPARTS=$abs_top_builddir/tests/integration/pgparts
[ -x "$PGPARTS" ] || fail "$PGPARTS not built (make -C tests/integration pgparts)"

PGD=$(mktemp -d /var/tmp/ioacct-pg.XXXXXX)
chmod 755 "$PGD"
EXTRA_CONF="cluster_db = $(pg_url "$PGD")"
setup
trap 'rc=$?; stop_daemon; pg_stop "$PGD"; rm -rf "$PGD"; (exit $rc); teardown' EXIT
pg_init "$PGD" || fail "cannot start PostgreSQL in $PGD"
start_daemon

ALL="$COUNTERS, err_notfound, err_access, err_space, err_io, err_other"
SUMS=$(echo "$ALL" | sed -E 's/([a-z0-9_]+)/least(coalesce(sum(\1), 0), 18446744073709551615)/g')
ZEROS=$(echo "$ALL" | sed -E 's/([a-z0-9_]+)/coalesce(u.\1, 0)/g')
# expected JOB [RESTART]: the run's parts summed as the readers sum them, from their own rows.
expected() {
	pg "WITH p AS (SELECT id, node, start_ns, bin_width_ns, min(start_ns) OVER () AS o,
		first_value(bin_width_ns) OVER (ORDER BY node, start_ns) AS w
		FROM jobs WHERE cluster = 'bench' AND job_id = $1 AND restart = ${2:-0}),
	    r AS (SELECT m.job, m.mnt_id, m.path, row_number() OVER (ORDER BY p.node, p.start_ns, m.mnt_id) AS r
		FROM mounts m JOIN p ON p.id = m.job),
	    n AS (SELECT path, row_number() OVER (ORDER BY min(r)) AS merged_id FROM r GROUP BY path),
	    b AS (SELECT s.step_id, n.merged_id AS mnt_id, s.op,
		s.bin + CASE WHEN p.bin_width_ns = p.w THEN (p.start_ns - p.o) / p.w ELSE 0 END AS bin,
		$(echo "$ALL" | sed -E 's/([a-z0-9_]+)/s.\1/g')
		FROM series_bins s JOIN p ON p.id = s.job
		JOIN r ON r.job = s.job AND r.mnt_id = s.mnt_id JOIN n ON n.path = r.path)
	    SELECT step_id, mnt_id, op, bin, $SUMS FROM b GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
}
# merged JOB [RESTART]: the run's merged series, one line per bin.
merged() {
	pg "SELECT ms.step_id, ms.mnt_id, ms.op, u.bin, $ZEROS FROM merged_series ms,
	    unnest(ms.bins, $(echo "$ALL" | sed -E 's/([a-z0-9_]+)/ms.\1/g')) AS u(bin, $ALL)
	    WHERE ms.cluster = 'bench' AND ms.job_id = $1 AND ms.restart = ${2:-0} ORDER BY 1, 2, 3, 4"
}
nmerged() { pg "SELECT count(*) FROM merged_jobs WHERE job_id = $1 AND restart = ${2:-0}"; }
# check LABEL JOB [RESTART]: its merged series stand for exactly its parts, their exact sum.
check() {
	local want got label=$1
	shift
	want=$(pg "SELECT array_agg(node || '@' || start_ns ORDER BY (node || '@' || start_ns) COLLATE \"C\")
		   FROM jobs WHERE cluster = 'bench' AND job_id = $1 AND restart = ${2:-0}")
	got=$(pg "SELECT members FROM merged_jobs WHERE cluster = 'bench' AND job_id = $1
		  AND restart = ${2:-0}")
	[ "$got" = "$want" ] || fail "$label: the merged series stand for '$got', not the parts '$want'"
	expected "$@" > "$T/$1.want"
	merged "$@" > "$T/$1.got"
	[ -s "$T/$1.want" ] || fail "$label: nothing to compare"
	cmp -s "$T/$1.want" "$T/$1.got" ||
		fail "$label: merged series differ from the parts' sum: $(diff "$T/$1.want" "$T/$1.got" | head -5)"
}
parts() { "$PGPARTS" "$@" > "$T/parts.out" || fail "pgparts $* failed"; }

# 801: the earliest node last; nothing until the last expected part.
parts -e n1,n2,n3 "$PGURL" 801 30 1000000000 n2:1500000000 n3:2700000000:abd
[ "$(nmerged 801)" = 0 ] || fail "801: merged series before the last part"
parts -e n1,n2,n3 "$PGURL" 801 30 1000000000 n1:0:dab
check "801 (right after the last part)" 801
parts -e n1,n2,n3,n4 "$PGURL" 802 20 1000000000 n3:1500000000:abc n1:2200000000:ab n4:2700000000:cd \
	n2:800000000:abc
check "802 (the axis moved unevenly)" 802
parts -e n1,n2,n3 "$PGURL" 803 10 1000000000 n1:0:a:big n2:100000000:a:big n3:200000000:a:big
check "803 (sums past uint64)" 803
parts -e n1 "$PGURL" 804 10 1000000000 n1:0
[ "$(nmerged 804)" = 0 ] || fail "804: one part has merged series"
parts -e n1,n2,n3 "$PGURL" 805 10 1000000000 n1:0 n2:300000000
[ "$(nmerged 805)" = 0 ] || fail "805: merged series with a part missing"
parts "$PGURL" 806 10 1000000000 n1:0 n2:300000000
[ "$(nmerged 806)" = 0 ] || fail "806: merged series without a merged report"
# 807: every part in before any offer (each node offers after its own export): the first
# offer that finds them all makes them.
parts "$PGURL" 807 10 1000000000 n1:0 n2:300000000:ab n3:600000000:b
[ "$(nmerged 807)" = 0 ] || fail "807: merged series without a merged report"
PGPARTS_OFFER_ONLY=1 parts -e n1,n2,n3 "$PGURL" 807 10 1000000000 n2:300000000:ab
check "807 (made at the offer)" 807
made=$(pg "SELECT made_at FROM merged_jobs WHERE job_id = 807")
PGPARTS_OFFER_ONLY=1 parts -e n1,n2,n3 "$PGURL" 807 10 1000000000 n1:0 n3:600000000:b
[ "$(pg "SELECT made_at FROM merged_jobs WHERE job_id = 807")" = "$made" ] ||
	fail "807: the later offers made them again"
PGPARTS_RESTART=1 parts -e n1,n2 "$PGURL" 801 10 1000000000 n2:100100000000:ab n1:100000000000:b
check "801 run 1 (requeued)" 801 1
check "801 run 0 beside run 1" 801 0

# Parts exported again, their earlier bins taken out: made again, no double count.
parts -e n1,n2,n3 "$PGURL" 801 30 1000000000 n3:2700000000:abd:2
check "801 after n3 again" 801
parts -e n1,n2,n3 "$PGURL" 801 30 1000000000 n3:2700000000:abd:3
check "801 after n3 a third time" 801
parts -e n1,n2,n3,n4 "$PGURL" 802 20 1000000000 n4:2700000000:cde:2
check "802 after n4 again, with a mount more" 802
parts -e n1,n2,n3 "$PGURL" 801 20 1000000000 n3:2700000000:abd:4
check "801 after n3 with fewer bins" 801
[ "$(pg "SELECT sum(bytes) FROM totals t JOIN jobs j ON j.id = t.job WHERE j.job_id = 801
	AND j.restart = 0")" = \
	"$(pg "SELECT sum(b) FROM merged_series, unnest(bytes) b WHERE job_id = 801 AND restart = 0")" ] ||
	fail "801: the merged series' bytes are not the parts' totals"

# Reads: the merged series as made, the same report as the nodes summed again. 805 (a part
# never came): the read sums the nodes and stores them (sum at the first read, as before).
for j in 801 802 803 805; do
	made=$(pg "SELECT made_at FROM merged_jobs WHERE job_id = $j AND restart = 0")
	"$IOREPORT" --cluster bench --run 0 --format json -o "$T/$j-merged.json" "$j" ||
		fail "ioreport $j failed"
	if [ "$j" = 805 ]; then
		[ "$(nmerged 805)" = 1 ] || fail "805: the read did not store the merged series"
		check "805 (made by the read)" 805
		continue
	fi
	[ "$(pg "SELECT made_at FROM merged_jobs WHERE job_id = $j AND restart = 0")" = "$made" ] ||
		fail "$j: the read made the merged series again"
done
for j in 802 803; do
	pg "DELETE FROM merged_jobs WHERE job_id = $j" > /dev/null
	"$IOREPORT" --cluster bench --run 0 --format json -o "$T/$j-summed.json" "$j" || fail "ioreport $j failed"
	cmp -s "$T/$j-merged.json" "$T/$j-summed.json" ||
		fail "$j: the report from the merged series differs from the nodes summed"
	grep -q '"n1"' "$T/$j-merged.json" || fail "$j: the report names no node n1"
done
echo "PASS: merged series made once at the last part's export, exact, no double count, read as made"
