#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HDF5 records in the cluster store (issue 39; PostgreSQL schemas 18, 19, 21): one real
# ioacctd exports to a private PostgreSQL (scripts/pg.sh) the jobs of 75-hdf5's
# C program h5prog.c (serial libhdf5: dataset "a" of 1,000 doubles in one
# H5Dwrite, "b" of 256 x 256 ints in 4 hyperslabs of 64 rows, read back whole).
#  1. Job 7801: PostgreSQL's hdf5_records are the node's SQLite rows, every
#     column, in the partition of the job's month; a: 1 write of 8,000 B; b: 4
#     writes and 1 read of 262,144 B each way.
#  1a. The store put back to schema 20 (no selection kinds): migrated to 21,
#     7801's rows kept, exact, every call's kind and the chunking not known.
#  1b. The store put back to schema 18 (no times): migrated to 19, 7801's rows
#     kept, exact, their times 0 (none).
#  2. The store put back to schema 17 with its data (no hdf5_records, no
#     jobs.h5_kept): the daemon's next connection migrates it to 18 and 19; 7801, written
#     before, has none kept there (h5_kept false) and its report, read through
#     the cluster store, takes them from this node's store, exact.
#  3. Job 7802, exported at schema 19: its report read from the cluster store
#     (ioreport through ioacctd, the node's SQLite emptied of its HDF5 records)
#     has the HDF5 part and text section of the node store's (ioreport --db), and
#     a and b exact. Its part copied in SQL as its run's part on a node n2, its
#     process's records there of the same step, rank and pid (pids are a node's
#     numbers), with 600 more MPI-IO and HDF5 records of one rank and pid on each
#     node (one more on the first: a twin split by a page's end): the merged report
#     has both parts' records, each exact and with its node, across the JOB reply's
#     pages of 1,024; and both parts' file records, one key on both nodes.
#  4. A purge of the cluster store (ioacct_pgstore_purge through pgpurge) takes
#     both jobs' HDF5 rows with them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
pkg-config --exists hdf5-serial 2>/dev/null || skip "HDF5 not installed (Debian: libhdf5-dev)"
IOREPORT=$abs_top_builddir/tools/ioreport
PGPURGE=$abs_top_builddir/tests/integration/pgpurge
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$PGPURGE" ] || fail "$PGPURGE not built (make -C tests/integration pgpurge)"
CC=${CC:-cc}

pg_test_setup
start_daemon
require_mpi_uprobes
wait_parsed_ahead
D=$(realpath "$D")
# shellcheck disable=SC2046 # pkg-config's flags are words
"$CC" -Wall -o "$T/h5prog" "$(dirname "$0")/h5prog.c" $(pkg-config --cflags --libs hdf5-serial) ||
	fail "cannot build h5prog.c against libhdf5_serial"
ldd "$T/h5prog" | grep -q "libhdf5_serial.so" || skip "h5prog is not linked to libhdf5_serial.so"

# h5job ID: job ID runs h5prog on $D/ID.h5, exported.
h5job() {
	"$IORUN" --job-id "$1" -- "$T/h5prog" "$D/$1.h5" > "$T/$1.out" 2>&1 ||
		{ cat "$T/$1.out"; fail "iorun h5prog (job $1) failed"; }
	wait_exported "$DB" "job $1"
}
COLS="h.step_id, h.rank, h.pid, h.kind, h.name, h.opens, h.flushes, h.reads, h.writes,"
COLS+=" h.bytes_read, h.bytes_written, h.unsized_reads, h.unsized_writes, h.rw_switches,"
COLS+=" h.npoints_max, h.datatype_size, h.read_ns, h.write_ns, h.meta_ns, h.open_start_ns,"
COLS+=" h.open_end_ns, h.read_start_ns, h.read_end_ns, h.write_start_ns, h.write_end_ns,"
COLS+=" h.close_start_ns, h.close_end_ns, h.max_read_ns, h.max_read_size, h.max_write_ns,"
COLS+=" h.max_write_size, h.dataspace_ndims, h.dataspace_npoints, h.use_mpiio,"
COLS+=" h.use_mpiio_collective, h.regular_hyperslab_selects, h.irregular_hyperslab_selects,"
COLS+=" h.point_selects, h.unknown_selects, h.chunk_known, h.chunk_size_d1, h.chunk_size_d2,"
COLS+=" h.chunk_size_d3, h.chunk_size_d4, h.chunk_size_d5"
# sqlite_h5 JOB, pg_h5 JOB: the job's HDF5 records, every column, one line each, sorted.
sqlite_h5() {
	sqlite3 -separator '|' "$DB" "SELECT $COLS, h.size_read, h.size_written FROM hdf5_records h
		JOIN jobs j ON j.key = h.job_key WHERE j.job_id = $1" | LC_ALL=C sort
}
pg_h5() {
	pg "SELECT $COLS, array_to_string(h.size_read, ','), array_to_string(h.size_written, ',')
	    FROM hdf5_records h JOIN jobs j ON j.id = h.job WHERE j.job_id = $1" | LC_ALL=C sort
}
# check_exact JOB: PostgreSQL's H5D records of a and b of the job, exact.
check_exact() {
	pg "SELECT h.name, reads, writes, bytes_read, bytes_written, unsized_reads + unsized_writes
	    FROM hdf5_records h JOIN jobs j ON j.id = h.job WHERE j.job_id = $1 AND kind = 1
	    ORDER BY h.name" > "$T/got-$1"
	printf '%s\n' "$D/$1.h5:/a|0|1|0|8000|0" "$D/$1.h5:/b|1|4|262144|262144|0" > "$T/want-$1"
	diff "$T/want-$1" "$T/got-$1" || fail "job $1: PostgreSQL's H5D records of a and b (want, then got)"
}
# migrated_from N: the daemon stopped, PostgreSQL put back to schema N
# (pg_back_to_schemaN) with job 7801's rows in it, the daemon started again, a
# report of 7801 (in $T/mN-7801.json) migrating it to $PG_SCHEMA, its H5D rows exact.
migrated_from() {
	stop_daemon
	"pg_back_to_schema$1" || fail "cannot put PostgreSQL back to schema $1"
	[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$1" ] || fail "the store is not at schema $1"
	start_daemon
	"$IOREPORT" --format json -o "$T/m$1-7801.json" 7801 || fail "ioreport 7801 (after schema $1) failed"
	[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] ||
		fail "PostgreSQL was not migrated from $1 to $PG_SCHEMA"
	check_exact 7801
}
# check_json JSON H5FILE: the report's HDF5 records of H5FILE's file and datasets a and b, exact.
check_json() {
	/usr/bin/python3 - "$1" "$2" <<'PY' || fail "$1: the HDF5 part of the report is not exact"
import json, sys
j = json.load(open(sys.argv[1]))
f = sys.argv[2]
h = j["hdf5"]
assert h is not None, "hdf5: null (not read)"
got = {(r["module"], r["name"]): (r["opens"], r["reads"], r["writes"], r["bytes_read"],
                                  r["bytes_written"], r["flushes"]) for r in h["records"]}
want = {("H5F", f): (1, 0, 0, 0, 0, 1), ("H5D", f + ":/a"): (1, 0, 1, 0, 8000, 0),
        ("H5D", f + ":/b"): (1, 1, 4, 262144, 262144, 0)}
assert h["nrecords"] == 3 and got == want, (h["nrecords"], got)
assert all(r["bytes_read_exact"] and r["bytes_written_exact"] for r in h["records"])
PY
}

# ---- 1. exported with its records --------------------------------------------------
h5job 7801
sqlite_h5 7801 > "$T/sqlite-7801"
pg_h5 7801 > "$T/pg-7801"
[ "$(wc -l < "$T/sqlite-7801")" = 3 ] || fail "the node's store has not 3 HDF5 records of job 7801"
diff "$T/sqlite-7801" "$T/pg-7801" ||
	fail "job 7801: PostgreSQL's HDF5 records differ from the node's (SQLite, then PostgreSQL)"
check_exact 7801
month=$(pg "SELECT ioacct_block_name((id >> 33)::integer) FROM jobs WHERE job_id = 7801")
[ "$(pg "SELECT count(*) FROM hdf5_records_$month")" = 3 ] ||
	fail "the HDF5 records are not in the partition of their month ($month)"
[ "$(pg "SELECT h5_kept FROM jobs WHERE job_id = 7801")" = t ] || fail "job 7801: h5_kept is not true"
ok "PostgreSQL holds job 7801's 3 HDF5 records as SQLite does, in hdf5_records_$month;" \
	"a: 1 write of 8,000 B; b: 4 writes, 1 read, 262,144 B each way"

# ---- 1a. schema 20's store migrated to 21: its rows kept, their kinds not known -------
# b's 4 hyperslabs regular in schema 21's rows (their chunking known: none); back to 20,
# every read and write's kind not known after the migration, and the chunking.
[ "$(pg "SELECT string_agg(regular_hyperslab_selects || ' ' || unknown_selects || ' ' || chunk_known,
	',' ORDER BY h.name) FROM hdf5_records h JOIN jobs j ON j.id = h.job
	WHERE j.job_id = 7801 AND kind = 1")" = "0 0 1,4 0 1" ] || fail "job 7801: b's 4 regular hyperslabs"
migrated_from 20
[ "$(pg "SELECT string_agg(kind || ' ' || regular_hyperslab_selects || ' ' || irregular_hyperslab_selects
	|| ' ' || point_selects || ' ' || unknown_selects || ' ' || chunk_known || ' ' || chunk_size_d1,
	',' ORDER BY kind, h.name) FROM hdf5_records h JOIN jobs j ON j.id = h.job
	WHERE j.job_id = 7801")" = "0 0 0 0 0 0 0,1 0 0 0 1 0 0,1 0 0 0 5 0 0" ] ||
	fail "job 7801's rows of schema 20 do not say their selections' kinds and chunking not known"
ok "schema 20 migrated to $PG_SCHEMA: job 7801's 3 HDF5 rows kept, exact, a's 1 and b's 5 calls' kinds not known"

# ---- 1b. schema 18's store migrated to 19: its rows kept, without times -------------
# The store put back to schema 18 (hdf5_records without the times), 7801's rows in it.
migrated_from 18
[ "$(pg "SELECT count(*) FILTER (WHERE open_start_ns = 0 AND open_end_ns = 0 AND read_start_ns = 0
	AND read_end_ns = 0 AND write_start_ns = 0 AND write_end_ns = 0 AND close_start_ns = 0
	AND close_end_ns = 0 AND max_read_ns = 0 AND max_read_size = 0 AND max_write_ns = 0
	AND max_write_size = 0 AND dataspace_ndims = 0 AND dataspace_npoints = 0 AND use_mpiio = 0
	AND use_mpiio_collective = 0)
	FROM hdf5_records h JOIN jobs j ON j.id = h.job
	WHERE j.job_id = 7801")" = 3 ] || fail "job 7801's rows of schema 18 do not read 0 (none) for the times"
ok "schema 18 migrated to $PG_SCHEMA: job 7801's 3 HDF5 rows kept, exact, their times 0 (none)"

# ---- 2. schema 17's store migrated, its part read from the node ----------------------
stop_daemon
pg_back_to_schema17 || fail "cannot put PostgreSQL back to schema 17"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 17 ] || fail "the store is not at schema 17"
[ "$(pg "SELECT to_regclass('hdf5_records') IS NULL")" = t ] || fail "hdf5_records still there"
nparts=$(pg "SELECT count(*) FROM jobs")
start_daemon
"$IOREPORT" --format json -o "$T/m-7801.json" 7801 || fail "ioreport 7801 (after schema 17) failed"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] ||
	fail "PostgreSQL was not migrated to $PG_SCHEMA"
[ "$(pg "SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT h5_kept) FROM jobs")" = "$nparts $nparts" ] ||
	fail "schema 17's $nparts parts not kept, or said to have their HDF5 records"
[ "$(pg "SELECT count(*) FROM hdf5_records")" = 0 ] || fail "hdf5_records not empty after the migration"
[ "$(pg "SELECT count(*) FROM hdf5_records_$month")" = 0 ] ||
	fail "the migration made no partition of hdf5_records for $month"
check_json "$T/m-7801.json" "$D/7801.h5"
ok "schema 17 migrated to $PG_SCHEMA: $nparts parts kept, none with HDF5 records there;" \
	"job 7801's report takes them from this node's store, exact"

# ---- 3. the cluster store's report is the node store's --------------------------------
h5job 7802
diff <(sqlite_h5 7802) <(pg_h5 7802) || fail "job 7802: PostgreSQL's HDF5 records differ from SQLite's"
check_exact 7802
"$IOREPORT" --db "$DB" --format json -o "$T/db-7802.json" 7802 || fail "ioreport --db 7802 failed"
"$IOREPORT" --db "$DB" -o "$T/db-7802.txt" 7802 || fail "ioreport --db 7802 (text) failed"
# Nothing of them left in SQLite: what follows is PostgreSQL's.
sqlite3 "$DB" "DELETE FROM hdf5_records" || fail "cannot empty SQLite's HDF5 records"
"$IOREPORT" --format json -o "$T/pg-7802.json" 7802 || fail "ioreport 7802 failed"
"$IOREPORT" -o "$T/pg-7802.txt" 7802 || fail "ioreport 7802 (text) failed"
check_json "$T/pg-7802.json" "$D/7802.h5"
part() { /usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["hdf5"],
	sort_keys=True, indent=1))' "$1"; }
cmp -s <(part "$T/db-7802.json") <(part "$T/pg-7802.json") ||
	{ diff <(part "$T/db-7802.json") <(part "$T/pg-7802.json") | head -20
	  fail "job 7802: the cluster store's HDF5 part differs from the node store's"; }
section() { sed -n '/^## HDF5/,/^$/p' "$1"; }
grep -q "^## HDF5: 1 files, 3 records" "$T/pg-7802.txt" ||
	fail "no HDF5 section in the cluster store's text report: $(cat "$T/pg-7802.txt")"
cmp -s <(section "$T/db-7802.txt") <(section "$T/pg-7802.txt") ||
	{ diff <(section "$T/db-7802.txt") <(section "$T/pg-7802.txt"); fail "job 7802: the text's HDF5 sections differ"; }
ok "job 7802's report from the cluster store: the node store's HDF5 part (JSON) and section (text), exact"

# ---- 3b. a job of two nodes: its merged report has both parts' records ----------------
# Job 7802's part copied in SQL as its run's part on node n2, every row of it (the same
# run_start: one run), its HDF5 records too, of the same step, rank and pid: a pid is a
# node's number, the two processes' records differ by their node alone.
pg "BEGIN;
    CREATE TEMP TABLE m AS SELECT id AS old, 0::bigint AS new FROM jobs WHERE job_id = 7802;
    WITH n AS (INSERT INTO jobs SELECT (jsonb_populate_record(j, jsonb_build_object('node', 'n2',
	'start_ns', j.start_ns + 1000000, 'end_ns', j.end_ns + 1000000))).* FROM jobs j
	WHERE job_id = 7802 RETURNING id)
    UPDATE m SET new = (SELECT id FROM n);
    DO \$\$DECLARE t text; BEGIN
     FOREACH t IN ARRAY ARRAY['steps', 'mounts', 'totals', 'series', 'files', 'mpiio_files',
      'hdf5_records'] LOOP
      EXECUTE format('INSERT INTO %I SELECT (jsonb_populate_record(x,
	jsonb_build_object(''job'', m.new))).* FROM %I x, m WHERE x.job = m.old', t, t);
     END LOOP;
    END\$\$;
    COMMIT" > /dev/null || fail "cannot copy job 7802's part to node n2"
# On each node, rank -1 (a serial program's) and pid 4242 wrote 600 files through MPI-IO
# (/shared/mNNN) and HDF5 (dataset d of /shared/hNNN.h5), bytes_written 10 x NNN (+1 on
# n2); the first node one more of each, /shared/a and a.h5:/d, which puts the pages'
# end (1,024) between the two nodes' records of one file.
Z="'{0,0,0,0,0,0,0,0,0,0}'"
pg "INSERT INTO mpiio_files SELECT j.id, 0, -1, 4242, '/shared/m' || lpad(i::text, 3, '0'), NULL,
	0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10 * i + (j.node = 'n2')::int, 0, 0, 0, 0, 0, $Z, $Z
	FROM jobs j, generate_series(0, 599) i WHERE j.job_id = 7802;
    INSERT INTO hdf5_records SELECT j.id, 0, -1, 4242, 1, '/shared/h' || lpad(i::text, 3, '0')
	|| '.h5:/d', NULL, 0, 0, 0, 1, 0, 10 * i + (j.node = 'n2')::int, 0, 0, 0, 0, 0, 0, 0, 0,
	$Z, $Z FROM jobs j, generate_series(0, 599) i WHERE j.job_id = 7802;
    INSERT INTO mpiio_files SELECT id, 0, -1, 4242, '/shared/a', NULL, 0, 0, 0, 1, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, $Z, $Z FROM jobs WHERE job_id = 7802 AND node <> 'n2';
    INSERT INTO hdf5_records SELECT id, 0, -1, 4242, 1, '/shared/a.h5:/d', NULL, 0, 0, 0, 1, 0,
	7, 0, 0, 0, 0, 0, 0, 0, 0, $Z, $Z FROM jobs WHERE job_id = 7802 AND node <> 'n2'" > /dev/null ||
	fail "cannot add job 7802's records of rank -1 and pid 4242"
[ "$(pg "SELECT count(*) FROM hdf5_records h JOIN jobs j ON j.id = h.job WHERE j.job_id = 7802")" = 1207 ] ||
	fail "job 7802's two parts have not 1,207 HDF5 records"
"$IOREPORT" --format json -o "$T/pg2-7802.json" 7802 || fail "ioreport 7802 (two nodes) failed"
/usr/bin/python3 - "$T/pg2-7802.json" "$D/7802.h5" <<'PY' || fail "the merged report's HDF5 part"
import json, sys
j = json.load(open(sys.argv[1]))
f = sys.argv[2]
nodes = sorted(n["node"] for n in j["nodes"])
assert len(nodes) == 2 and "n2" in nodes, nodes
first = [n for n in nodes if n != "n2"][0]
h = j["hdf5"]
assert h["nrecords"] == 1207 == len(h["records"]), h["nrecords"]
b = [r for r in h["records"] if r["name"] == f + ":/b"]
assert sorted(r["node"] for r in b) == nodes and len({r["pid"] for r in b}) == 1, b
assert all((r["reads"], r["writes"], r["bytes_read"], r["bytes_written"])
           == (1, 4, 262144, 262144) for r in b), b
[x] = [x for x in h["files"] if x["name"] == f]
assert (x["bytes_read"], x["bytes_written"]) == (2 * 262144, 2 * 270144), x
# rank -1, pid 4242: every file's record once per node, its own bytes.
def mine(records, key, prefix, suffix):
    got = {}
    for r in records:
        if r[key].startswith("/shared/"):
            assert (r["step_id"], r["rank"], r["pid"]) == (0, -1, 4242), r
            assert (r[key], r["node"]) not in got, ("twice", r)
            got[(r[key], r["node"])] = r["bytes_written"]
    want = {(prefix + "%03d" % i + suffix, n): 10 * i + (n == "n2") for i in range(600)
            for n in nodes}
    want[("/shared/a" + suffix, first)] = 7
    assert got == want, sorted(set(got.items()) ^ set(want.items()))[:6]
mine(h["records"], "name", "/shared/h", ".h5:/d")
m = j["mpiio"]
assert m["nrecords"] == 1201 == len(m["records"]), m["nrecords"]
mine(m["records"], "path", "/shared/m", "")
# The file records, copied: one key (step, rank, mount, dev, inode, life) on both nodes.
files = {}
for x in j["files"]:
    k = (x["step_id"], x["rank"], x["mnt_id"], x["dev"], x["ino"], x["gen"])
    assert (k, x["node"]) not in files, ("twice", x)
    files[(k, x["node"])] = (x["path"], x["opens"], x["bytes_read"], x["bytes_written"])
one = {k: v for (k, n), v in files.items() if n == first}
assert one and one == {k: v for (k, n), v in files.items() if n == "n2"}, files
assert any(v[0] == f for v in one.values()), one
PY
ok "job 7802 of two nodes: its merged report has both parts' records, of the same rank and pid:" \
	"1,207 HDF5 (b's exact on each), 1,201 MPI-IO and every file's, each once, exact, with its node"

# ---- 4. purged with their jobs --------------------------------------------------------
# The cutoff past both jobs' ends: their runs go (this month's partitions stay).
CUT=$(($(date +%s) + 2))
got=$("$PGPURGE" "$PGURL" purge "$CUT") || fail "pgpurge purge failed"
[ "${got%% *}" = "runs=2" ] || fail "purge: '$got', not 2 runs"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id IN (7801, 7802)")" = 0 ] || fail "the jobs were not purged"
[ "$(pg "SELECT count(*) FROM hdf5_records")" = 0 ] ||
	fail "the purge left $(pg "SELECT count(*) FROM hdf5_records") HDF5 rows of jobs gone"
ok "a purge of the cluster store takes the jobs' HDF5 records with them"

exit 0
