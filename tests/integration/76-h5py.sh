#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HDF5 through uprobes (issue 39), from Python: h5py_prog.py under Debian's
# python3-h5py 3.7 in a monitored job (iorun). f['x'] = 5,000 float32 is
# made by h5py with H5Dcreate_anon, written, then linked by H5Olink (Darshan
# 3.5 has no record of it): its 20,000 bytes are in the record named
# FILE:/x. Dataset 'y' (100 x 100 int64) written in 10 slices of 10 rows,
# each slice given one row that h5py broadcasts, and read whole: the 100
# H5Dwrite calls h5py 3.7 really makes (it writes a broadcast source one row
# at a time; Darshan 3.5.0 counts 100), 800 bytes each, 80,000 bytes each
# way. Dataset 'z', the same shape written in 10 slices of 10 whole rows: 10
# H5Dwrite of 8,000 bytes (one per slice), 80,000 bytes each way. bpftrace's
# uprobes on H5Dwrite and H5Dread count the same run apart: 111 writes
# (x's, y's, z's), 2 reads. Exact in the store.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
PY=/usr/bin/python3
"$PY" -c 'import h5py, numpy' 2>/dev/null || skip "h5py not installed (Debian: python3-h5py)"
EXTRA_CONF="${EXTRA_CONF:-}
mpi_detach_after = 1s"
setup
start_daemon
require_mpi_uprobes
wait_parsed_ahead

D=$(realpath "$T")/h5
mkdir -p "$D"
"$IORUN" --json -o "$T/p.json" -- "$PY" "$(dirname "$0")/h5py_prog.py" "$D/p.h5" > "$T/p.out" 2>&1 ||
	{ cat "$T/p.out"; fail "iorun h5py_prog.py failed"; }
JOB=$(json_get "$T/p.json" 'j["job_id"]')
grep -q "HDF5: attached to .*/libhdf5_serial.so.*(HDF5; 21 of 22 functions" "$T/ioacctd.log" ||
	fail "h5py's libhdf5_serial not attached: $(grep "HDF5:" "$T/ioacctd.log")"
! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "calls lost"
ok "h5py's libhdf5_serial attached by the library watch"

COLS="kind, h.name, opens, reads, writes, bytes_read, bytes_written, unsized_reads,"
COLS+=" unsized_writes, rw_switches, datatype_size, size_read, size_written, dataspace_ndims,"
COLS+=" dataspace_npoints, use_mpiio, use_mpiio_collective, regular_hyperslab_selects,"
COLS+=" irregular_hyperslab_selects, point_selects, unknown_selects, chunk_known, chunk_size_d1"
sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM hdf5_records h JOIN jobs j
	ON j.key = h.job_key WHERE j.job_id = $JOB ORDER BY kind, h.name" > "$T/got"
Z=0,0,0,0,0,0,0,0,0,0
cat > "$T/want" <<WANT
0 $D/p.h5 1 0 0 0 0 0 0 0 0 $Z $Z 0 0 0 0 0 0 0 0 0 0
1 $D/p.h5:/x 1 0 1 0 20000 0 0 0 4 $Z 0,0,0,1,0,0,0,0,0,0 1 5000 0 0 0 0 0 0 1 0
1 $D/p.h5:/y 1 1 100 80000 80000 0 0 1 8 0,0,0,1,0,0,0,0,0,0 0,100,0,0,0,0,0,0,0,0 2 10000 0 0 100 0 0 0 1 0
1 $D/p.h5:/z 1 1 10 80000 80000 0 0 1 8 0,0,0,1,0,0,0,0,0,0 0,0,10,0,0,0,0,0,0,0 2 10000 0 0 10 0 0 0 1 0
WANT
diff "$T/want" "$T/got" || fail "the HDF5 records of h5py are not exact (want, then got)"
# Selections as Darshan counts them: x written through H5S_ALL, none; each of y's 100
# rows and z's 10 slices a regular hyperslab; their whole reads (h5py selects all), none;
# none chunked.
ok "x (H5Dcreate_anon, then linked; 5,000): 1 write of 20,000 B; y (100 x 100, broadcast rows): 100 writes (100 regular hyperslabs) and 1 read, z (whole slices): 10 writes (10 regular) and 1 read (all, no kind), 80,000 B each way"

# The times (ns from the job's start): x's, moved from its anonymous record when linked,
# before y's, y's before z's; each one's writes before its read; the slowest calls' sizes exact.
"$PY" - "$T/p.json" "$D/p.h5" <<'PYX' || fail "the HDF5 times of h5py's datasets"
import json, sys
f = sys.argv[2]
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["hdf5"]["records"]}
F, x, y, z = r[f], r[f + ":/x"], r[f + ":/y"], r[f + ":/z"]
order = [F["open_start_ns"], F["open_end_ns"], x["open_start_ns"], x["open_end_ns"],
         x["write_start_ns"], x["write_end_ns"], y["open_start_ns"], y["open_end_ns"],
         y["write_start_ns"], y["write_end_ns"], y["read_start_ns"], y["read_end_ns"],
         z["open_start_ns"], z["open_end_ns"], z["write_start_ns"], z["write_end_ns"],
         z["read_start_ns"], z["read_end_ns"]]
assert 0 < order[0] and order == sorted(order), order
assert (x["max_write_size"], x["max_write_ns"], x["max_read_size"], x["max_read_ns"]) == \
    (20000, x["write_ns"], 0, 0), x
assert (y["max_write_size"], y["max_read_size"], y["max_read_ns"]) == (800, 80000, y["read_ns"]), y
assert 100 * y["max_write_ns"] >= y["write_ns"] > y["max_write_ns"] > 0, y
assert (z["max_write_size"], z["max_read_size"], z["max_read_ns"]) == (8000, 80000, z["read_ns"]), z
assert 10 * z["max_write_ns"] >= z["write_ns"] > z["max_write_ns"] > 0, z
# No H5Fclose or H5Dclose reached the probes (h5py 3.7 lets its ids go through
# H5Idec_ref): no close time, 0 as Darshan has it for a call it did not see.
assert [d[k] for d in (F, x, y, z) for k in ("close_start_ns", "close_end_ns")] == [0] * 8, (F, x, y, z)
PYX
ok "h5py's times: F opened, x created and written, y then z created, written, read, in that order, no close; slowest calls 20,000, 800, 8,000 and 80,000 B"

# The job's Darshan log, read back by our reader: x under its linked name.
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
"$abs_top_builddir/tools/ioreport" --db "$T/ioacct.db" --format darshan -o "$T/p.darshan" "$JOB" ||
	fail "ioreport --format darshan failed"
"$DXTDUMP" --h5d "$T/p.darshan" > "$T/h5d.dump" || fail "our reader: dxtdump --h5d failed"
"$PY" - "$T/h5d.dump" "$D/p.h5" <<'PYX' || fail "the Darshan log's H5D records of h5py's datasets"
import json, sys
name = sys.argv[2]
d = {r["name"]: r["c"] for r in map(json.loads, list(open(sys.argv[1]))[1:])}
assert sorted(d) == [name + ":/x", name + ":/y", name + ":/z"], list(d)
got = {k: (c["H5D_WRITES"], c["H5D_BYTES_WRITTEN"], c["H5D_READS"], c["H5D_BYTES_READ"])
       for k, c in d.items()}
assert got == {name + ":/x": (1, 20000, 0, 0), name + ":/y": (100, 80000, 1, 80000),
               name + ":/z": (10, 80000, 1, 80000)}, got
PYX
ok "the Darshan log: H5D x (20,000 B written), y (100 writes) and z (10 writes), 80,000 B each way"
