#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HDF5 through uprobes (issue 39): the C program h5prog.c, linked to Debian's
# libhdf5_serial, in a monitored job (iorun): dataset "a" of 1,000 doubles
# in one H5Dwrite, dataset "b" of 256 x 256 ints in 4 hyperslabs of 64 rows
# and read back whole, a flush of the file. The library is found by the MPI
# libraries' watch, parsed by the same ELF worker and probed once; the
# store's hdf5_records hold Darshan's H5F and H5D counters of the file and
# of each dataset, exact (bytes = the selection's elements x the dataset's
# datatype size, as Darshan counts them), named as Darshan names them.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
pkg-config --exists hdf5-serial 2>/dev/null || skip "HDF5 not installed (Debian: libhdf5-dev)"
CC=${CC:-cc}
# Uprobes removed a second after their last step ends.
EXTRA_CONF="${EXTRA_CONF:-}
mpi_detach_after = 1s"
setup
start_daemon
require_mpi_uprobes

D=$(realpath "$T")/h5
mkdir -p "$D"
# shellcheck disable=SC2046 # pkg-config's flags are words
"$CC" -Wall -o "$T/h5prog" "$(dirname "$0")/h5prog.c" $(pkg-config --cflags --libs hdf5-serial) ||
	fail "cannot build h5prog.c against libhdf5_serial"
ldd "$T/h5prog" | grep -q "libhdf5_serial.so" || skip "h5prog is not linked to libhdf5_serial.so"

"$IORUN" --json -o "$T/c.json" -- "$T/h5prog" "$D/c.h5" > "$T/c.out" 2>&1 ||
	{ cat "$T/c.out"; fail "iorun h5prog failed"; }
JOB=$(json_get "$T/c.json" 'j["job_id"]')
[ "$(grep -c "HDF5: attached to .*/libhdf5_serial.so.*(HDF5; 20 of 20 functions" "$T/ioacctd.log")" = 1 ] ||
	fail "libhdf5_serial not attached once with its 20 functions: $(grep "HDF5:" "$T/ioacctd.log")"
! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "calls lost"
ok "libhdf5_serial attached once, by the MPI libraries' watch"

COLS="kind, h.name, opens, flushes, reads, writes, bytes_read, bytes_written, unsized_reads,"
COLS+=" unsized_writes, rw_switches, npoints_max, datatype_size, size_read, size_written"
sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM hdf5_records h JOIN jobs j
	ON j.key = h.job_key WHERE j.job_id = $JOB ORDER BY kind, h.name" > "$T/got"
Z=0,0,0,0,0,0,0,0,0,0
cat > "$T/want" <<WANT
0 $D/c.h5 1 1 0 0 0 0 0 0 0 0 0 $Z $Z
1 $D/c.h5:/a 1 0 0 1 0 8000 0 0 0 1000 8 $Z 0,0,1,0,0,0,0,0,0,0
1 $D/c.h5:/b 1 0 1 4 262144 262144 0 0 1 65536 4 0,0,0,0,1,0,0,0,0,0 0,0,0,4,0,0,0,0,0,0
WANT
diff "$T/want" "$T/got" || fail "the HDF5 records are not exact (want, then got)"
[ "$(sqlite3 "$T/ioacct.db" "SELECT count(DISTINCT pid) FROM hdf5_records h JOIN jobs j
	ON j.key = h.job_key WHERE j.job_id = $JOB")" = 1 ] || fail "not one process"
ok "H5F: 1 open, 1 flush; H5D a: 1 write of 8,000 B; b: 4 writes of 65,536 B, 1 read of 262,144 B, 1 switch"

# The same file's POSIX bytes, beside: the library wrote at least what the datasets hold.
POSIX=$(sqlite3 "$T/ioacct.db" "SELECT sum(bytes_written) FROM files f JOIN jobs j
	ON j.key = f.job_key WHERE j.job_id = $JOB AND f.path = '$D/c.h5'")
[ "${POSIX:-0}" -ge $((8000 + 262144)) ] || fail "POSIX bytes written to c.h5: ${POSIX:-none}"
ok "POSIX: $POSIX B written to c.h5 for the datasets' 270,144 B"

# Its step over, the library's uprobes go.
for _ in $(seq 1 1200); do
	grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" && break
	sleep 0.1
done
grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" || fail "libhdf5_serial not detached"
ok "the uprobes detached with the step"
