#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HDF5 through uprobes (issue 39): the C program h5prog.c, linked to Debian's
# libhdf5_serial, in a monitored job (iorun): dataset "a" of 1,000 doubles
# in one H5Dwrite, dataset "b" of 256 x 256 ints in 4 hyperslabs of 64 rows
# and read back whole, a flush of the file. The library is found by the MPI
# libraries' watch, parsed by the same ELF worker and probed once; the
# store's hdf5_records hold Darshan's H5F and H5D counters of the file and
# of each dataset, exact (bytes = the selection's elements x the dataset's
# datatype size, as Darshan counts them), named as Darshan names them; the
# job's Darshan log (ioreport --format darshan) holds them as H5F and H5D
# records, read back by our reader (dxtdump --h5f / --h5d). The library,
# parsed ahead at the daemon's start, is attached at the job's registration,
# before ioacctd answers it: h5prog's first calls are counted whatever the
# load (before, only once ld.so's open of it had reached the daemon).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/h5check.sh"
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
wait_parsed_ahead

D=$(realpath "$T")/h5
mkdir -p "$D"
# shellcheck disable=SC2046 # pkg-config's flags are words
"$CC" -Wall -o "$T/h5prog" "$(dirname "$0")/h5prog.c" $(pkg-config --cflags --libs hdf5-serial) ||
	fail "cannot build h5prog.c against libhdf5_serial"
ldd "$T/h5prog" | grep -q "libhdf5_serial.so" || skip "h5prog is not linked to libhdf5_serial.so"

"$IORUN" --json -o "$T/c.json" -- "$T/h5prog" "$D/c.h5" > "$T/c.out" 2>&1 ||
	{ cat "$T/c.out"; fail "iorun h5prog failed"; }
JOB=$(json_get "$T/c.json" 'j["job_id"]')
[ "$(grep -c "HDF5: attached to .*/libhdf5_serial.so.*(HDF5; 22 of 23 functions" "$T/ioacctd.log")" = 1 ] ||
	fail "libhdf5_serial not attached once with its 22 functions: $(grep "HDF5:" "$T/ioacctd.log")"
! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "calls lost"
ok "libhdf5_serial attached once"
# At the registration, before the daemon's answer (its "watching" line, then the
# answer): iorun runs h5prog only then.
ATT=$(grep -n "HDF5: attached to .*/libhdf5_serial.so.* at a step's registration (HDF5; 22 of 23" \
	"$T/ioacctd.log" | head -1 | cut -d: -f1)
REG=$(grep -n "job [^ ]*/$JOB step [0-9]*: watching" "$T/ioacctd.log" | head -1 | cut -d: -f1)
[ -n "$ATT" ] && [ -n "$REG" ] && [ "$ATT" -lt "$REG" ] ||
	fail "libhdf5_serial not attached at the registration (line ${ATT:-none}, job's ${REG:-none}): $(grep -e "HDF5:" -e "watching" "$T/ioacctd.log")"
ok "attached at the job's registration, before the answer that lets h5prog run"

h5prog_check "$JOB" "$T/c.json" "$D/c.h5"

# Its step over, the library's uprobes go.
for _ in $(seq 1 1200); do
	grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" && break
	sleep 0.1
done
grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" || fail "libhdf5_serial not detached"
ok "the uprobes detached with the step"
