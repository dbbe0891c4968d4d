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
# load (before, only once ld.so's open of it had reached the daemon). Then
# h5sel.c: the reads' and writes' file selection kinds (regular and
# irregular hyperslabs, points, H5S_ALL) and a chunked dataset's chunk
# sizes at its create and open, in the store, the JSON and the Darshan log.
# 75-hdf5-prefix.sh runs it against an upstream HDF5 of IOACCT_HDF5_PREFIX.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/h5check.sh"
require_root_bpf
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
CC=${CC:-cc}
H5_HOW="a freshly built HDF5, e.g. 1.14.6: configure --prefix=DIR --enable-shared"
H5_HOW+=" --disable-fortran --disable-cxx --disable-tests; make install"
if [ -n "${H5_PREFIX_TEST:-}" ]; then
	H5_PREFIX=${IOACCT_HDF5_PREFIX:-}
	[ -n "$H5_PREFIX" ] || skip "opt-in: IOACCT_HDF5_PREFIX=DIR names $H5_HOW"
	[ -f "$H5_PREFIX/include/hdf5.h" ] && compgen -G "$H5_PREFIX/lib/libhdf5.so.*" > /dev/null ||
		skip "IOACCT_HDF5_PREFIX=$H5_PREFIX holds no shared HDF5; it names $H5_HOW"
	H5_FLAGS="-I$H5_PREFIX/include -L$H5_PREFIX/lib -Wl,-rpath,$H5_PREFIX/lib -lhdf5"
	H5_LIB=$H5_PREFIX/lib/libhdf5.so
	H5_NAME=${H5_LIB##*/}
	# A serial build lacks H5CX_get_io_xfer_mode, as Debian's; its code is not 1.10's: its
	# sizes from the three functions (not H5D__read, H5D__write), neither H5F_has_feature
	# nor H5F_open (no MPI-IO driver): 22 of 23, and 1.14's H5Dread_multi and
	# H5Dwrite_multi where it has them (24 of 25).
	! nm -D "$H5_LIB" | grep -q " H5CX_get_io_xfer_mode$" ||
		skip "$H5_LIB is a parallel HDF5: h5prog is serial"
	H5_MULTI=$(nm -D "$H5_LIB" | grep -c " T H5D\(read\|write\)_multi$")
	H5_FUNCS="$((22 + H5_MULTI)) of $((23 + H5_MULTI))"
	H5_SIZES="sizes from H5S_get_select_npoints, H5T_path_find, H5T_get_size (not 1.10's code)"
	H5_NOT=" H5F_has_feature H5D__read H5D__write H5F_open"
	# Kept attached between the two runs below (and not waited for to detach).
	H5_DETACH=10min
else
	pkg-config --exists hdf5-serial 2>/dev/null || skip "HDF5 not installed (Debian: libhdf5-dev)"
	H5_FLAGS=$(pkg-config --cflags --libs hdf5-serial)
	H5_LIB=/libhdf5_serial.so
	H5_NAME=libhdf5_serial.so
	# 1.10.8's sizes read at H5D__read's and H5D__write's entries: the three mov-first
	# functions that say them not probed, nor H5F_has_feature (no MPI-IO driver), each a
	# single-stepped trap a call, nor H5F_open (that driver's flag asked in MPI builds only);
	# H5CX_get_io_xfer_mode absent (serial): 21 of 22.
	H5_FUNCS="21 of 22"
	H5_SIZES="sizes read at H5D__read and H5D__write"
	H5_NOT=" H5S_get_select_npoints H5T_path_find H5T_get_size H5F_has_feature H5F_open"
	# Uprobes removed a second after their last step ends.
	H5_DETACH=1s
fi
EXTRA_CONF="${EXTRA_CONF:-}
mpi_detach_after = $H5_DETACH"
setup
start_daemon
require_mpi_uprobes
wait_parsed_ahead

D=$(realpath "$T")/h5
mkdir -p "$D"
# shellcheck disable=SC2086 # the flags are words
"$CC" -Wall -o "$T/h5prog" "$(dirname "$0")/h5prog.c" $H5_FLAGS ||
	fail "cannot build h5prog.c against $H5_NAME"
ldd "$T/h5prog" | grep -q "$H5_LIB" || skip "h5prog is not linked to $H5_NAME"

if [ -n "${H5_PREFIX:-}" ]; then
	# Outside the system's directories, the library is not parsed ahead: it is
	# attached at its first open, which a first run races ("The race left",
	# design.md). A run to have it attached, then the run checked.
	"$IORUN" -- "$T/h5prog" "$D/warm.h5" > "$T/warm.out" 2>&1 ||
		{ cat "$T/warm.out"; fail "iorun h5prog (to attach) failed"; }
	for _ in $(seq 1 1200); do
		grep -q "HDF5: attached to $H5_LIB" "$T/ioacctd.log" && break
		sleep 0.1
	done
fi
"$IORUN" --json -o "$T/c.json" -- "$T/h5prog" "$D/c.h5" > "$T/c.out" 2>&1 ||
	{ cat "$T/c.out"; fail "iorun h5prog failed"; }
JOB=$(json_get "$T/c.json" 'j["job_id"]')
[ "$(grep -c "HDF5: attached to .*$H5_LIB.*(HDF5; $H5_FUNCS functions" "$T/ioacctd.log")" = 1 ] ||
	fail "$H5_NAME not attached once with $H5_FUNCS functions: $(grep "HDF5:" "$T/ioacctd.log")"
! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "calls lost"
# Which way its sizes are read, and which functions it has are not probed: a cheap path
# fallen back silently fails here.
grep -q "HDF5: .*$H5_LIB.*: selection kinds .*; $H5_SIZES; not probed:$H5_NOT\$" "$T/ioacctd.log" ||
	fail "$H5_NAME's sizes not read as expected ($H5_SIZES; not probed:$H5_NOT): $(grep "HDF5:" "$T/ioacctd.log")"
ok "$H5_NAME attached once ($H5_FUNCS functions; $H5_SIZES; not probed:$H5_NOT)"
# At the registration, before the daemon's answer (its "watching" line, then the
# answer): iorun runs h5prog only then. Not for a prefix's library, not parsed ahead.
if [ -z "${H5_PREFIX:-}" ]; then
	ATT=$(grep -n "HDF5: attached to .*/libhdf5_serial.so.* at a step's registration (HDF5; $H5_FUNCS" \
		"$T/ioacctd.log" | head -1 | cut -d: -f1)
	REG=$(grep -n "job [^ ]*/$JOB step [0-9]*: watching" "$T/ioacctd.log" | head -1 | cut -d: -f1)
	[ -n "$ATT" ] && [ -n "$REG" ] && [ "$ATT" -lt "$REG" ] ||
		fail "libhdf5_serial not attached at the registration (line ${ATT:-none}, job's ${REG:-none}): $(grep -e "HDF5:" -e "watching" "$T/ioacctd.log")"
	ok "attached at the job's registration, before the answer that lets h5prog run"
fi

h5prog_check "$JOB" "$T/c.json" "$D/c.h5"

# The selections' kinds and the chunk sizes, as Darshan counts them (h5sel.c): the
# library's layouts read from its code at the parse, then each read's and write's
# file selection at its return and a chunked dataset's dims at its create and open.
# 1.14.6's too (its code's own sequences, the same offsets as 1.10.8's).
grep -q "HDF5: .*$H5_NAME.*: selection kinds read, chunk sizes read" "$T/ioacctd.log" ||
	fail "$H5_NAME's layouts not read: $(grep "HDF5: .*selection kinds" "$T/ioacctd.log")"
# h5_run PROG TAG COLS: PROG.c built against the library, run under iorun on
# $D/TAG.h5 (its JSON report $T/TAG.json), its job's HDF5 records' COLS into
# $T/TAG.got; RJOB its job.
h5_run() {
	# shellcheck disable=SC2086 # the flags are words
	"$CC" -Wall -o "$T/$1" "$(dirname "$0")/$1.c" $H5_FLAGS || fail "cannot build $1.c against $H5_NAME"
	"$IORUN" --json -o "$T/$2.json" -- "$T/$1" "$D/$2.h5" > "$T/$2.out" 2>&1 ||
		{ cat "$T/$2.out"; fail "iorun $1 failed"; }
	RJOB=$(json_get "$T/$2.json" 'j["job_id"]')
	sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $3 FROM hdf5_records h JOIN jobs j
		ON j.key = h.job_key WHERE j.job_id = $RJOB ORDER BY kind, h.name" > "$T/$2.got"
}
SCOLS="kind, h.name, opens, reads, writes, bytes_read, bytes_written, regular_hyperslab_selects,"
SCOLS+=" irregular_hyperslab_selects, point_selects, unknown_selects, chunk_known, chunk_size_d1,"
SCOLS+=" chunk_size_d2, chunk_size_d3, chunk_size_d4, chunk_size_d5"
h5_run h5sel s "$SCOLS"
SJOB=$RJOB
S=$D/s.h5
cat > "$T/sel.want" <<WANT
0 $S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0
1 $S:/c 2 1 1 4000 40000 1 0 0 0 1 20 10 0 0 0
1 $S:/s 1 2 5 40012 52212 2 1 2 0 1 0 0 0 0 0
WANT
diff "$T/sel.want" "$T/s.got" || fail "h5sel's selection kinds and chunk sizes are not exact (want, then got)"
ok "s: 2 regular hyperslabs (one of two row blocks OR'ed), 1 irregular, 2 point selections, none for H5S_ALL; c: chunks 20 x 10 (D1, D2) at its create and open"
/usr/bin/python3 - "$T/s.json" "$S" <<'PY' || fail "the JSON report's selection kinds and chunk sizes"
import json, sys
j, f = json.load(open(sys.argv[1])), sys.argv[2]
r = {x["name"]: x for x in j["hdf5"]["records"]}
keys = ("regular_hyperslab_selects", "irregular_hyperslab_selects", "point_selects",
        "unknown_selects", "chunk_known", "chunk_size_d1", "chunk_size_d2", "chunk_size_d3")
got = {n[len(f) + 2:]: tuple(r[n][k] for k in keys) for n in r if n != f}
assert got == {"s": (2, 1, 2, 0, 1, 0, 0, 0), "c": (1, 0, 0, 0, 1, 20, 10, 0)}, got
PY
ok "the JSON report says the same"
"$abs_top_builddir/tools/ioreport" --db "$T/ioacct.db" --format darshan -o "$T/s.darshan" "$SJOB" ||
	fail "ioreport --format darshan failed"
"$abs_top_builddir/tests/integration/dxtdump" --h5d "$T/s.darshan" > "$T/s.h5d" ||
	fail "our reader: dxtdump --h5d failed"
/usr/bin/python3 - "$T/s.h5d" "$S" <<'PY' || fail "the Darshan log's selection kinds and chunk sizes"
import json, sys
d = {r["name"]: r["c"] for r in map(json.loads, list(open(sys.argv[1]))[1:])}
f = sys.argv[2]
keys = ["H5D_REGULAR_HYPERSLAB_SELECTS", "H5D_IRREGULAR_HYPERSLAB_SELECTS", "H5D_POINT_SELECTS"]
keys += ["H5D_CHUNK_SIZE_D%d" % i for i in range(1, 6)]
got = {n: [d[n][k] for k in keys] for n in d}
assert got == {f + ":/s": [2, 1, 2, 0, 0, 0, 0, 0], f + ":/c": [1, 0, 0, 20, 10, 0, 0, 0]}, got
PY
ok "the Darshan log, read back by our reader: the same selection kinds and chunk sizes"

if [ -n "${H5_PREFIX:-}" ]; then
	# 1.14's multi-dataset calls (h5multi.c): each dataset of an H5Dwrite_multi or
	# H5Dread_multi counted as one write or read of it, unsized (its size probes
	# not asked there), a selection's kind not known unless H5S_ALL. Darshan 3.5 (to
	# its main of 2026) wraps neither: it counts none of them.
	[ "$H5_MULTI" = 2 ] || { ok "no H5Dwrite_multi in $H5_NAME: the multi-dataset calls not checked"; exit 0; }
	MCOLS="kind, h.name, opens, reads, writes, bytes_read, bytes_written, unsized_reads,"
	MCOLS+=" unsized_writes, rw_switches, regular_hyperslab_selects, irregular_hyperslab_selects,"
	MCOLS+=" point_selects, unknown_selects"
	h5_run h5multi m "$MCOLS"
	M=$D/m.h5
	cat > "$T/multi.want" <<WANT
0 $M 1 0 0 0 0 0 0 0 0 0 0 0
1 $M:/x 1 1 1 0 0 1 1 1 0 0 0 0
1 $M:/y 1 1 2 0 2000 1 1 2 0 0 0 1
WANT
	diff "$T/multi.want" "$T/m.got" ||
		fail "h5multi's records are not exact (want, then got)"
	ok "H5Dwrite_multi and H5Dread_multi: x and y 1 write and 1 read each, unsized (y's hyperslab: kind not known); y's H5Dwrite 2,000 B"
	# Its step over, a prefix's uprobes are kept (H5_DETACH): not waited for.
	exit 0
fi
# Its step over, the library's uprobes go.
for _ in $(seq 1 1200); do
	grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" && break
	sleep 0.1
done
grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" || fail "libhdf5_serial not detached"
ok "the uprobes detached with the step"
