#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Parallel HDF5 through uprobes (issue 39): h5pmpi.c, built with Debian's
# h5pcc (libhdf5_openmpi), 4 OpenMPI ranks in a monitored job (iorun), each
# writing its 1,024 doubles of one dataset in one collective H5Dwrite and
# reading them back. The same watch finds libhdf5_openmpi and libmpi; every
# rank's H5F and H5D records are exact, and the MPI-IO calls HDF5 made are
# counted beside them (the two layers' calls are pending apart).
# H5F_USE_MPIIO (the fapl's MPI-IO driver) and H5D_USE_MPIIO_COLLECTIVE (the
# collective write; the read is independent) are 1 on every rank.
# H5PMPI_LINK=static (77-h5mpi-static.sh): h5pmpi built by h5pcc's default,
# libhdf5_openmpi.a linked into the program (libmpi stays shared): mpirun's
# 4 ranks run the program's own HDF5 functions, probed on the program's file
# when the first rank's exec is seen (no rank is the job's own program: the
# exec path, not probe_exe), the same records exact.
# H5PMPI_LINK=prefix (77-h5mpi-prefix.sh): built with the h5pcc of a parallel
# HDF5 under IOACCT_HDF5_MPI_PREFIX (opt-in), linked to its libhdf5.so: not
# parsed ahead, attached at its first open, before the ranks' first HDF5
# calls after MPI_Init, as the static build's.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
LINK=${H5PMPI_LINK:-shared}
H5PCC=h5pcc
if [ "$LINK" = prefix ]; then
	H5PCC=${IOACCT_HDF5_MPI_PREFIX:-}/bin/h5pcc
	[ -n "${IOACCT_HDF5_MPI_PREFIX:-}" ] || skip "opt-in: IOACCT_HDF5_MPI_PREFIX=DIR names a parallel HDF5 built with OpenMPI's mpicc, e.g. 1.14.6: CC=mpicc configure --prefix=DIR --enable-parallel --enable-shared --disable-fortran --disable-cxx --disable-tests; make install"
	[ -x "$H5PCC" ] || skip "IOACCT_HDF5_MPI_PREFIX=$IOACCT_HDF5_MPI_PREFIX has no bin/h5pcc (a parallel HDF5)"
fi
command -v "$H5PCC" >/dev/null || skip "h5pcc not found (Debian: libhdf5-openmpi-dev)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
EXTRA_CONF="${EXTRA_CONF:-}
mpi_detach_after = 1s"
setup
start_daemon
require_mpi_uprobes
wait_parsed_ahead
# OpenMPI's session directory, this test's own (as 37-mpiio.sh).
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
	fail "cannot mount a tmpfs for OpenMPI's session directory"

D=$(realpath "$T")/h5
mkdir -p "$D"
if [ "$LINK" = prefix ]; then
	"$H5PCC" -shlib -o "$T/h5pmpi" "$(dirname "$0")/h5pmpi.c" || fail "$H5PCC failed"
	ldd "$T/h5pmpi" | grep -q "$IOACCT_HDF5_MPI_PREFIX/lib/libhdf5.so" ||
		fail "h5pmpi is not linked to $IOACCT_HDF5_MPI_PREFIX/lib/libhdf5.so: $(ldd "$T/h5pmpi")"
	H5WHERE=".*$IOACCT_HDF5_MPI_PREFIX/lib/libhdf5.so.*"
elif [ "$LINK" = static ]; then
	h5pcc -show | grep -q 'openmpi/libhdf5\.a' ||
		skip "h5pcc does not link openmpi/libhdf5.a (h5pcc -show: $(h5pcc -show))"
	h5pcc -o "$T/h5pmpi" "$(dirname "$0")/h5pmpi.c" || fail "h5pcc failed"
	! ldd "$T/h5pmpi" | grep -q "libhdf5" || fail "h5pcc's h5pmpi loads a shared libhdf5: $(ldd "$T/h5pmpi")"
	H5WHERE="$T/h5pmpi"
else
	h5pcc -shlib -o "$T/h5pmpi" "$(dirname "$0")/h5pmpi.c" || fail "h5pcc failed"
	ldd "$T/h5pmpi" | grep -q "libhdf5_openmpi.so" || skip "h5pmpi is not linked to libhdf5_openmpi.so"
	H5WHERE=".*/libhdf5_openmpi.so.*"
fi
"$IORUN" --json -o "$T/p.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
	"$T/h5pmpi" "$D/p.h5" > "$T/p.out" 2>&1 || { cat "$T/p.out"; fail "iorun mpirun h5pmpi failed"; }
JOB=$(json_get "$T/p.json" 'j["job_id"]')
[ "$(grep -c "HDF5: attached to $H5WHERE (HDF5; [0-9]* of [0-9]* functions" "$T/ioacctd.log")" = 1 ] ||
	fail "HDF5 ($LINK) not attached once: $(grep "HDF5:" "$T/ioacctd.log")"
grep -q "MPI-IO: attached to .*/libmpi.so.*(OpenMPI;" "$T/ioacctd.log" ||
	fail "libmpi not attached: $(grep "MPI-IO:" "$T/ioacctd.log")"
! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "calls lost"
ok "HDF5 ($LINK: $(grep -o "HDF5: attached to $H5WHERE (HDF5; [0-9]* of [0-9]*" "$T/ioacctd.log" | sed 's/.*(//')) and libmpi attached once each, for the 4 ranks"

COLS="rank, kind, h.name, opens, reads, writes, bytes_read, bytes_written, unsized_reads,"
COLS+=" unsized_writes, rw_switches, datatype_size, size_read, size_written, dataspace_ndims,"
COLS+=" dataspace_npoints, use_mpiio, use_mpiio_collective, regular_hyperslab_selects,"
COLS+=" irregular_hyperslab_selects, point_selects, unknown_selects, chunk_known, chunk_size_d1"
sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM hdf5_records h JOIN jobs j
	ON j.key = h.job_key WHERE j.job_id = $JOB ORDER BY rank, kind, h.name" > "$T/got"
Z=0,0,0,0,0,0,0,0,0,0
B=0,0,1,0,0,0,0,0,0,0
# Selections: the write's and the read's regular hyperslabs, p unchunked (an upstream
# 1.14.6's layouts read from its own code too).
SEL="2 0 0 0 1 0"
# 1.10.8's sizes read at H5D__read's and H5D__write's entries (the shared and the static
# library alike); the MPI-IO driver is in: a file's driver asked at H5F_open's return in
# its create or open, not of H5F_has_feature (mov-first, in every read and write). On the
# upstream 1.14 (prefix) the other way: its H5F_open returns no file (an herr_t), so
# H5F_has_feature is probed, and the three size functions.
NOT="H5S_get_select_npoints H5T_path_find H5T_get_size H5F_has_feature"
WAY="selection kinds read, chunk sizes read; sizes read at H5D__read and H5D__write"
if [ "$LINK" = prefix ]; then
	NOT="H5D__read H5D__write H5F_open"
	WAY="selection kinds read, chunk sizes read; sizes from H5S_get_select_npoints, H5T_path_find, H5T_get_size (not 1.10's code)"
fi
grep -q "HDF5: $H5WHERE: $WAY; not probed: $NOT$" "$T/ioacctd.log" ||
	fail "HDF5 ($LINK): not probed as expected ($WAY; not probed: $NOT): $(grep "HDF5:" "$T/ioacctd.log")"
: > "$T/want"
for r in 0 1 2 3; do
	echo "$r 0 $D/p.h5 1 0 0 0 0 0 0 0 0 $Z $Z 0 0 1 0 0 0 0 0 0 0" >> "$T/want"
	echo "$r 1 $D/p.h5:/p 1 1 1 8192 8192 0 0 1 8 $B $B 1 4096 0 1 $SEL" >> "$T/want"
done
diff "$T/want" "$T/got" || fail "the ranks' HDF5 records are not exact (want, then got)"
ok "every rank: 1 collective write and 1 read of its 8,192 B of p (4,096 doubles), under its rank; the file opened with MPI-IO, p used collectively; both calls through a regular hyperslab, p not chunked"

# Every rank's times (ns from the job's start), in h5pmpi's order: H5Fcreate, H5Dcreate2,
# the write, the read, H5Dclose, H5Fclose; its slowest calls, its one write and read.
sqlite3 -separator ' ' "$T/ioacct.db" "SELECT f.rank, 0 < f.open_start_ns
	AND f.open_start_ns <= f.open_end_ns AND f.open_end_ns <= d.open_start_ns
	AND d.open_start_ns <= d.open_end_ns AND d.open_end_ns <= d.write_start_ns
	AND d.write_start_ns <= d.write_end_ns AND d.write_end_ns <= d.read_start_ns
	AND d.read_start_ns <= d.read_end_ns AND d.read_end_ns <= d.close_start_ns
	AND d.close_start_ns <= d.close_end_ns AND d.close_end_ns <= f.close_start_ns
	AND f.close_start_ns <= f.close_end_ns, d.max_write_size, d.max_read_size,
	d.max_write_ns = d.write_ns AND d.max_read_ns = d.read_ns AND d.read_ns > 0
	FROM hdf5_records f JOIN hdf5_records d ON d.job_key = f.job_key AND d.pid = f.pid
	AND d.kind = 1 AND f.kind = 0 JOIN jobs j ON j.key = f.job_key WHERE j.job_id = $JOB
	ORDER BY f.rank" > "$T/got-times"
printf '%s 1 8192 8192 1\n' 0 1 2 3 > "$T/want-times"
diff "$T/want-times" "$T/got-times" || fail "the ranks' HDF5 times (order; slowest sizes; want, then got)"
ok "every rank's HDF5 times in h5pmpi's order, its slowest write and read of 8,192 B"

# The MPI-IO calls HDF5 made for them, counted too, on the same file.
MPIW=$(sqlite3 "$T/ioacct.db" "SELECT count(DISTINCT rank) || ' ' || sum(bytes_written >= 8192)
	FROM mpiio_files m JOIN jobs j ON j.key = m.job_key WHERE j.job_id = $JOB
	AND m.path = '$D/p.h5'")
[ "$MPIW" = "4 4" ] || fail "MPI-IO records of p.h5 (ranks, ranks writing >= 8,192 B): $MPIW"
ok "the MPI-IO layer under it: every rank wrote its 8,192 B or more through MPI-IO"

# The job's Darshan log, read back by our reader: per rank, an H5F record of
# the file (the record id of its MPIIO records: one name, one id) and an H5D
# record of p, exact.
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
"$abs_top_builddir/tools/ioreport" --db "$T/ioacct.db" --format darshan -o "$T/p.darshan" "$JOB" ||
	fail "ioreport --format darshan failed"
for m in h5f h5d mpiio; do
	"$DXTDUMP" --$m "$T/p.darshan" > "$T/$m.dump" || fail "our reader: dxtdump --$m failed"
done
/usr/bin/python3 - "$T" "$D/p.h5" <<'PY' || fail "the Darshan log's per-rank H5F/H5D records"
import json, sys
t, name = sys.argv[1], sys.argv[2]
def recs(m):
    return [json.loads(l) for l in open("%s/%s.dump" % (t, m))][1:]
f = {r["rank"]: r for r in recs("h5f") if r["name"] == name}
d = {r["rank"]: r for r in recs("h5d") if r["name"] == name + ":/p"}
m = {r["rank"] for r in recs("mpiio") if r["name"] == name}
assert sorted(f) == sorted(d) == [0, 1, 2, 3] and m == set(f), (sorted(f), sorted(d), m)
for r in range(4):
    assert f[r]["c"]["H5F_OPENS"] == 1, f[r]
    c = d[r]["c"]
    got = (c["H5D_OPENS"], c["H5D_READS"], c["H5D_WRITES"], c["H5D_BYTES_READ"],
           c["H5D_BYTES_WRITTEN"], c["H5D_DATATYPE_SIZE"], c["H5D_SIZE_WRITE_AGG_1K_10K"])
    assert got == (1, 1, 1, 8192, 8192, 8, 1), (r, got)
    assert (c["H5D_MAX_WRITE_TIME_SIZE"], c["H5D_MAX_READ_TIME_SIZE"]) == (8192, 8192), (r, c)
    assert (f[r]["c"]["H5F_USE_MPIIO"], c["H5D_USE_MPIIO_COLLECTIVE"]) == (1, 1), (r, f[r], c)
    t = d[r]["f"]
    assert 0 < f[r]["f"]["H5F_F_OPEN_START_TIMESTAMP"] <= t["H5D_F_OPEN_START_TIMESTAMP"] <= \
        t["H5D_F_WRITE_START_TIMESTAMP"] <= t["H5D_F_READ_END_TIMESTAMP"] <= \
        t["H5D_F_CLOSE_END_TIMESTAMP"] <= f[r]["f"]["H5F_F_CLOSE_START_TIMESTAMP"], (r, t, f[r])
    assert t["H5D_F_MAX_WRITE_TIME"] == t["H5D_F_WRITE_TIME"] > 0, (r, t)
    assert d[r]["file"] == name, d[r]
PY
ok "the Darshan log: every rank's H5F and H5D records of p.h5, exact, beside its MPIIO record"
