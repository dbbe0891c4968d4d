#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-file and MPI-IO records in the cluster store (issues 26 and 27; PostgreSQL
# schema 9): one real ioacctd exports to a private PostgreSQL (scripts/pg.sh), with
# max_files = 6.
#  1. Job 4801 reads and writes nine files on one mount, one named with bytes that are
#     not UTF-8: six records, the rest one "other files" record (partial). Job 4802
#     (when OpenMPI is here) is 37-mpiio's: 4 ranks under mpirun, MPI-IO records per
#     rank and file. PostgreSQL holds every record of both, the path's exact bytes in
#     path_raw, the rows in the partition of the month the jobs ended.
#  2. A job exported again (as after a crash before its unqueue) leaves one copy of
#     its records.
#  3. Each job's report read from the cluster store (ioreport JOBID through ioacctd,
#     after the node's SQLite lost its records, so that nothing comes from there) is the
#     node store's (ioreport --db): the JSON files, partial flag, other files and mpiio
#     parts equal, the text's Top files and MPI-IO sections equal, the .darshan logs
#     byte for byte (and their POSIX and MPIIO records, dxtdump, record by record).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOREPORT=$abs_top_builddir/tools/ioreport
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"

pg_test_setup "max_files = 6"
start_daemon

# ---- 1. two jobs exported with their records ------------------------------------------
BAD=$D/$'bad\xffname'
"$IORUN" --job-id 4801 --json -o "$T/4801.json" -- "$IOWORK" \
	write "$D/a" 4096 8 , pread "$D/a" 1000 4 3000 , read "$D/a" 4096 8 , \
	write "$BAD" 1000 3 , stat "$D/a" 3 , fsync "$D/b" 2 , write "$D/c" 100000 3 , \
	write "$D/d" 10 1 , write "$D/e" 20 2 , write "$D/f" 30 3 , write "$D/g" 40 4 \
	| cat || fail "iorun job 4801 failed"
JOBS=4801
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) || OMPICC=
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || OMPIRUN=
if [ -n "$OMPICC" ] && [ -n "$OMPIRUN" ] && "$OMPIRUN" --version 2>&1 | grep -q open-mpi.org; then
	# OpenMPI's session directory on a tmpfs of its own (see 37-mpiio-report.sh).
	export OMPI_MCA_orte_tmpdir_base=$T/ompi
	mkdir -p "$OMPI_MCA_orte_tmpdir_base"
	mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
		fail "cannot mount a tmpfs for OpenMPI's session directory"
	mkdir -p "$D/mpi"
	"$OMPICC" -Wall -o "$T/mpiio" "$(dirname "$0")/mpiio.c" || fail "$OMPICC failed"
	"$IORUN" --job-id 4802 --json -o "$T/4802.json" -- "$OMPIRUN" --allow-run-as-root \
		--oversubscribe -np 4 "$T/mpiio" "$D/mpi" > "$T/mpi.out" 2>&1 ||
		{ cat "$T/mpi.out"; fail "iorun $OMPIRUN failed"; }
	JOBS="4801 4802"
else
	echo "note: no OpenMPI (Debian: libopenmpi-dev openmpi-bin): per-file records only"
fi
wait_exported "$DB" "jobs $JOBS"

# rows TABLE JOB: the job's rows of TABLE in SQLite and in PostgreSQL.
sqlite_rows() {
	sqlite3 "$DB" "SELECT count(*) FROM $1 x JOIN jobs j ON j.key = x.job_key WHERE j.job_id = $2"
}
pg_rows() { pg "SELECT count(*) FROM $1 x JOIN jobs j ON j.id = x.job WHERE j.job_id = $2"; }
for j in $JOBS; do
	for t in files mpiio_files; do
		want=$(sqlite_rows $t "$j")
		got=$(pg_rows $t "$j")
		[ "$got" = "$want" ] || fail "job $j: PostgreSQL has $got rows of $t, SQLite $want"
	done
done
[ "$(sqlite_rows files 4801)" = 7 ] ||
	fail "job 4801 has $(sqlite_rows files 4801) file records, not 6 and other files"
[ "$(pg "SELECT count(*) FROM files f JOIN jobs j ON j.id = f.job
	WHERE j.job_id = 4801 AND dev = 0 AND ino = 0")" = 1 ] ||
	fail "PostgreSQL has no \"other files\" record of job 4801"
if [ "$JOBS" != 4801 ]; then
	[ "$(sqlite_rows mpiio_files 4802)" = 8 ] ||
		fail "job 4802 has $(sqlite_rows mpiio_files 4802) MPI-IO records, not 8"
fi
# The name with a byte that is not UTF-8: U+FFFD in the text, the exact bytes in path_raw.
got=$(pg "SELECT encode(path_raw, 'escape') FROM files WHERE path_raw IS NOT NULL")
[ "$got" = "$(printf '%s' "$BAD" | sed 's/\xff/\\377/')" ] ||
	fail "path_raw is '$got', not $BAD's bytes"
[ "$(pg "SELECT count(*) FROM files WHERE path = '$D/bad' || chr(65533) || 'name'")" = 1 ] ||
	fail "the text path of $BAD has no U+FFFD for its byte"
month=$(pg "SELECT ioacct_block_name((id >> 33)::integer) FROM jobs WHERE job_id = 4801")
[ "$(pg "SELECT count(*) FROM files_$month")" = "$(pg "SELECT count(*) FROM files")" ] ||
	fail "the file records are not in the partition of their month ($month)"
ok "PostgreSQL holds every per-file and MPI-IO record of jobs $JOBS, exact paths, in files_$month"

# ---- 2. exported again: one copy -----------------------------------------------------
before=$(pg "SELECT count(*) FROM files")
sqlite3 "$DB" "INSERT INTO export_queue (job_key) SELECT key FROM jobs WHERE job_id = 4801" ||
	fail "cannot queue job 4801 again"
wait_exported "$DB" "job 4801 again"
[ "$(pg_copies 4801)" = 1 ] || fail "job 4801 is $(pg_copies 4801) times in PostgreSQL"
[ "$(pg_rows files 4801)" = 7 ] && [ "$(pg "SELECT count(*) FROM files")" = "$before" ] ||
	fail "job 4801 written again: $(pg_rows files 4801) records, not 7"
ok "a job written again replaces its records"
# ---- 3. the cluster store's reports are the node store's -------------------------------
for j in $JOBS; do
	"$IOREPORT" --db "$DB" --format json -o "$T/db-$j.json" "$j" || fail "ioreport --db $j failed"
	"$IOREPORT" --db "$DB" -o "$T/db-$j.txt" "$j" || fail "ioreport --db $j (text) failed"
	"$IOREPORT" --db "$DB" --format darshan -o "$T/db-$j.darshan" "$j" ||
		fail "ioreport --db $j (darshan) failed"
done
# Nothing of them left in SQLite: what follows is PostgreSQL's.
sqlite3 "$DB" "DELETE FROM files; DELETE FROM mpiio_files" || fail "cannot empty SQLite's records"
# part JSON: the parts of a report that are the records.
part() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({k: j.get(k) for k in ("file_records", "files_partial", "other_files_calls",
      "other_files_bytes", "files", "mpiio")}, sort_keys=True, indent=1))' "$1"
}
# section TEXT: the text report's Top files and MPI-IO sections.
section() { sed -n '/^## Top files/,/^$/p; /^## MPI-IO/,/^$/p' "$1"; }
for j in $JOBS; do
	"$IOREPORT" --format json -o "$T/pg-$j.json" "$j" || fail "ioreport $j failed"
	"$IOREPORT" -o "$T/pg-$j.txt" "$j" || fail "ioreport $j (text) failed"
	"$IOREPORT" --format darshan -o "$T/pg-$j.darshan" "$j" || fail "ioreport $j (darshan) failed"
	part "$T/db-$j.json" > "$T/db-$j.part"
	part "$T/pg-$j.json" > "$T/pg-$j.part"
	grep -q '"path"' "$T/db-$j.part" || fail "job $j: the node store's report has no records"
	cmp -s "$T/db-$j.part" "$T/pg-$j.part" ||
		{ diff "$T/db-$j.part" "$T/pg-$j.part" | head -20
		  fail "job $j: the cluster store's records differ"; }
	section "$T/db-$j.txt" > "$T/db-$j.sec"
	section "$T/pg-$j.txt" > "$T/pg-$j.sec"
	[ -s "$T/db-$j.sec" ] || fail "job $j: the text report has no Top files section"
	cmp -s "$T/db-$j.sec" "$T/pg-$j.sec" ||
		{ diff "$T/db-$j.sec" "$T/pg-$j.sec" | head; fail "job $j: the text's sections differ"; }
	cmp "$T/db-$j.darshan" "$T/pg-$j.darshan" ||
		fail "job $j: the .darshan log from the cluster store differs from the node store's"
	for m in posix mpiio; do
		"$DXTDUMP" --$m "$T/db-$j.darshan" > "$T/db-$j.$m" || fail "dxtdump --$m failed"
		"$DXTDUMP" --$m "$T/pg-$j.darshan" > "$T/pg-$j.$m" || fail "dxtdump --$m failed"
		cmp -s "$T/db-$j.$m" "$T/pg-$j.$m" ||
			{ diff "$T/db-$j.$m" "$T/pg-$j.$m" | head; fail "job $j: the log's $m records differ"; }
	done
done
python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
sys.exit(not (j["files_partial"] and any(f["other_files"] for f in j["files"])))' \
	"$T/pg-4801.json" ||
	fail "job 4801 from the cluster store is not partial with an \"other files\" record"
ok "the cluster store's records of jobs $JOBS: JSON, text sections, .darshan logs byte for byte" \
	"the node store's"

# ---- 4. schema 11's file rows migrated to 12 (issues 36, 38) -------------------------
# The store put back to schema 11 as it stored the files (no gen in the key, no switches
# nor access sizes), its rows kept; the daemon's next connection migrates it: every row
# kept, gen 0 (one life each), the new counters 0; another life of a file a row of its own.
stop_daemon
nrows=$(pg "SELECT count(*) FROM files")
nbytes=$(pg "SELECT sum(bytes_read + bytes_written) FROM files")
pg_back_to_schema11 || fail "cannot put PostgreSQL back to schema 11"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = 11 ] || fail "the store is not at schema 11"
start_daemon
"$IOREPORT" --format json -o "$T/m.json" 4801 || fail "ioreport 4801 (after schema 11) failed"
[ "$(pg 'SELECT max(version) FROM ioacct_schema')" = "$PG_SCHEMA" ] || fail "PostgreSQL was not migrated to $PG_SCHEMA"
[ "$(pg "SELECT count(*) || ' ' || sum(bytes_read + bytes_written) || ' ' || max(gen) || ' ' ||
	max(rw_switches + access1 + access4_count) FROM files")" = "$nrows $nbytes 0 0" ] ||
	fail "schema 11's $nrows file rows ($nbytes bytes) not kept, gen 0, as they were"
[ "$(pg "BEGIN; INSERT INTO files SELECT job, step_id, rank, mnt_id, dev, ino, path, path_raw,
	opens, reads, writes, stats, fsyncs, bytes_read, bytes_written, read_ns, write_ns, meta_ns,
	seq_reads, seq_writes, consec_reads, consec_writes, max_byte_read, max_byte_written,
	first_read_ns, last_read_ns, first_write_ns, last_write_ns, size_read, size_written,
	mmap_bytes, cache_miss_bytes, seeks, 7 FROM files WHERE dev <> 0 LIMIT 1;
	SELECT count(*) FROM files; ROLLBACK" | grep -v '^$' | tail -1)" = $((nrows + 1)) ] ||
	fail "schema 12's key does not take another life (gen) of a file beside its row"
ok "schema 11's $nrows file rows migrated to 12: kept, gen 0; another life a row of its own"

exit 0
