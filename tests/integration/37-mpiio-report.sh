#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# MPI-IO in reports and Darshan logs (issue 27): 37-mpiio.sh's OpenMPI job
# (4 ranks under mpirun in iorun, mpiio.c), then its report read from the
# store (--db) and through ioacctd's socket (the MPI-IO records' pages of
# the JOB reply): the text report's MPI-IO section and the JSON `mpiio`
# part exact per rank and file, the POSIX bytes of the same files beside
# them; its .darshan log, read back by our reader (dxtdump --mpiio), has one
# MPIIO record per file and rank, named as the POSIX record of the file,
# every counter exact, -1 where ioacct counts nothing.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
setup
# OpenMPI's session directory (/tmp/ompi.HOST.UID) is shared by every
# mpirun of a user: two at once (make -j2 check) race on it. This test's own,
# on a file system of its own: its files, made and deleted in the job, would
# otherwise leave their inode numbers to the job's files (per-file records
# are by device and inode). Unmounted by teardown.
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
	fail "cannot mount a tmpfs for OpenMPI's session directory"
start_daemon
require_mpi_uprobes

D=$(realpath "$T")/mpi
mkdir -p "$D"
"$OMPICC" -Wall -o "$T/mpiio" "$(dirname "$0")/mpiio.c" || fail "$OMPICC failed"
"$IORUN" --json -o "$T/run.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
	"$T/mpiio" "$D" > "$T/run.out" 2>&1 || { cat "$T/run.out"; fail "iorun $OMPIRUN failed"; }
JOB=$(json_get "$T/run.json" 'j["job_id"]')

# The expected counters (37-mpiio.sh's): per rank, its own file written 3 x
# 20 B independently, and the shared file with one call of each kind;
# shared: 2000 B (bin 2), 30 x 4 B (bin 1), 2 x 24 B and 7 B (bin 0), each way.
cat > "$T/expect.json" <<JSON
{"own": {"indep_opens": 1, "coll_opens": 0, "indep_reads": 0, "indep_writes": 3,
         "coll_reads": 0, "coll_writes": 0, "split_reads": 0, "split_writes": 0,
         "nb_reads": 0, "nb_writes": 0, "syncs": 0, "views": 0, "bytes_read": 0,
         "bytes_written": 60, "unsized_reads": 0, "unsized_writes": 0,
         "size_read": [0,0,0,0,0,0,0,0,0,0], "size_written": [3,0,0,0,0,0,0,0,0,0]},
 "shared": {"indep_opens": 0, "coll_opens": 1, "indep_reads": 1, "indep_writes": 1,
         "coll_reads": 1, "coll_writes": 1, "split_reads": 1, "split_writes": 1,
         "nb_reads": 1, "nb_writes": 1, "syncs": 1, "views": 1, "bytes_read": 2175,
         "bytes_written": 2175, "unsized_reads": 0, "unsized_writes": 0,
         "size_read": [2,1,1,0,0,0,0,0,0,0], "size_written": [2,1,1,0,0,0,0,0,0,0]},
 "dir": "$D"}
JSON
CHECK=$(dirname "$0")/check_mpiio_report.py

# JSON, from the store and through the socket: the same MPI-IO part, exact.
"$IOREPORT" --db "$T/ioacct.db" --format json -o "$T/db.json" "$JOB" || fail "ioreport --db failed"
"$IOREPORT" --format json -o "$T/sock.json" "$JOB" || fail "ioreport (through ioacctd) failed"
python3 "$CHECK" json "$T/db.json" "$T/expect.json" || fail "JSON (--db): MPI-IO part differs"
python3 "$CHECK" json "$T/sock.json" "$T/expect.json" || fail "JSON (socket): MPI-IO part differs"
python3 -c 'import json,sys; a, b = (json.load(open(f))["mpiio"] for f in sys.argv[1:]);
sys.exit(a != b)' "$T/db.json" "$T/sock.json" || fail "the MPI-IO part through the socket differs"
ok "JSON: every rank's MPI-IO record of every file exact, the same through ioacctd's socket"

# Text: the section, per file and per record.
"$IOREPORT" --db "$T/ioacct.db" -o "$T/report.txt" "$JOB" || fail "ioreport (text) failed"
python3 "$CHECK" text "$T/report.txt" "$T/expect.json" || fail "text: MPI-IO section differs"
ok "text: the MPI-IO section exact per file and rank, POSIX bytes of the same files beside"

# HTML: the section is there.
"$IOREPORT" --db "$T/ioacct.db" --format html -o "$T/report.html" "$JOB" || fail "ioreport html failed"
grep -q '<section id="mpiio"><h2>MPI-IO</h2>' "$T/report.html" || fail "html: no MPI-IO section"
[ "$(grep -o "<tr[^>]*><td>$D/[a-z.0-9]*</td><td>[0-9]</td>" "$T/report.html" | wc -l)" = 8 ] ||
	fail "html: not 8 per-rank rows"
ok "html: the MPI-IO section, 8 per-rank rows"

# Darshan: MPIIO records read back by our reader, exact; the same through the socket.
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/job.darshan" "$JOB" ||
	fail "ioreport --format darshan failed"
"$IOREPORT" --format darshan -o "$T/sock.darshan" "$JOB" || fail "ioreport darshan (socket) failed"
cmp "$T/job.darshan" "$T/sock.darshan" || fail "the log through the socket differs from the store's"
"$DXTDUMP" --mpiio "$T/job.darshan" > "$T/mpiio.dump" || fail "dxtdump --mpiio failed"
"$DXTDUMP" --posix "$T/job.darshan" > "$T/posix.dump" || fail "dxtdump --posix failed"
python3 "$CHECK" darshan "$T/mpiio.dump" "$T/expect.json" "$T/posix.dump" ||
	fail "the log's MPIIO records differ"
ok "Darshan: one MPIIO record per file and rank, every counter exact, named as the POSIX record"
