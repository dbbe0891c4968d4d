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
[ "$(grep -c "HDF5: attached to .*/libhdf5_serial.so.*(HDF5; 20 of 20 functions" "$T/ioacctd.log")" = 1 ] ||
	fail "libhdf5_serial not attached once with its 20 functions: $(grep "HDF5:" "$T/ioacctd.log")"
! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "calls lost"
ok "libhdf5_serial attached once"
# At the registration, before the daemon's answer (its "watching" line, then the
# answer): iorun runs h5prog only then.
ATT=$(grep -n "HDF5: attached to .*/libhdf5_serial.so.* at a step's registration (HDF5; 20 of 20" \
	"$T/ioacctd.log" | head -1 | cut -d: -f1)
REG=$(grep -n "job [^ ]*/$JOB step [0-9]*: watching" "$T/ioacctd.log" | head -1 | cut -d: -f1)
[ -n "$ATT" ] && [ -n "$REG" ] && [ "$ATT" -lt "$REG" ] ||
	fail "libhdf5_serial not attached at the registration (line ${ATT:-none}, job's ${REG:-none}): $(grep -e "HDF5:" -e "watching" "$T/ioacctd.log")"
ok "attached at the job's registration, before the answer that lets h5prog run"

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

# The JSON report (iorun's, through ioacctd's socket: the JOB reply's pages of
# HDF5 records) and the text report (ioreport from the store) say the same.
IOREPORT=$abs_top_builddir/tools/ioreport
/usr/bin/python3 - "$T/c.json" "$D/c.h5" "$POSIX" <<'PY' || fail "the JSON report's HDF5 part is not exact"
import json, sys
j = json.load(open(sys.argv[1]))
f, posix = sys.argv[2], int(sys.argv[3])
h = j["hdf5"]
got = {(r["module"], r["name"]): (r["opens"], r["reads"], r["writes"], r["bytes_read"],
                                  r["bytes_written"], r["flushes"]) for r in h["records"]}
want = {("H5F", f): (1, 0, 0, 0, 0, 1), ("H5D", f + ":/a"): (1, 0, 1, 0, 8000, 0),
        ("H5D", f + ":/b"): (1, 1, 4, 262144, 262144, 0)}
assert h["nrecords"] == 3 and got == want, (h["nrecords"], got)
assert all(r["bytes_read_exact"] and r["bytes_written_exact"] for r in h["records"])
[x] = h["files"]
assert (x["name"], x["dataset_records"], x["bytes_read"], x["bytes_written"], x["posix_records"],
        x["posix_bytes_written"]) == (f, 2, 262144, 270144, True, posix), x
PY
ok "the JSON report: the 3 records, the file's 270,144 B asked for beside its $POSIX POSIX bytes"
"$IOREPORT" --db "$T/ioacct.db" -o "$T/c.txt" "$JOB" || fail "ioreport (text) failed"
grep -q "^## HDF5: 1 files, 3 records" "$T/c.txt" || fail "no HDF5 section: $(cat "$T/c.txt")"
grep -q "^ *262144 *270144 *[0-9-]* *$POSIX $D/c.h5\$" "$T/c.txt" ||
	fail "the text report's HDF5 file line: $(grep -A3 "^## HDF5" "$T/c.txt")"
grep -q "^ *-\?[0-9]* H5D *1 *0 *1 *4 *262144 *262144 *1 .* $D/c.h5:/b\$" "$T/c.txt" ||
	fail "the text report's record of b: $(grep -A8 "^## HDF5" "$T/c.txt")"
ok "the text report's HDF5 section"
"$IOREPORT" --db "$T/ioacct.db" --format html -o "$T/c.html" "$JOB" || fail "ioreport (HTML) failed"
/usr/bin/python3 - "$T/c.html" "$D/c.h5" <<'PY' || fail "the HTML report's HDF5 section"
import re, sys
h, f = open(sys.argv[1]).read(), sys.argv[2]
sec = h[h.index('<section id="hdf5">'):]
sec = sec[:sec.index("</section>")]
rows = re.findall(r"<tr><td[^>]*>([^<]*)</td>((?:<td[^>]*>[^<]*</td>)*)</tr>", sec)
cells = {name: re.findall(r">([^<]*)</td>", rest) for name, rest in rows}
assert cells[f][:3] == ["2", "262,144", "270,144"] or cells[f][:3] == ["2", "262144", "270144"], cells[f]
b = cells[f + ":/b"]
assert [c.replace(",", "") for c in b[:6]] == ["1", "1", "4", "262144", "262144", "1"], b
names = [n for n, _ in rows]
assert names.index(f + ":/b") < names.index(f + ":/a"), names  # most bytes first
PY
ok "the HTML report's HDF5 section: the file, then b before a"

# The Darshan log: H5F and H5D modules (format 3.41, H5F record version 3, H5D
# version 2), as our reader reads them back: the counters the store holds, -1
# for those not measured, each dataset's record pointing at its file's.
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/c.darshan" "$JOB" ||
	fail "ioreport --format darshan failed"
"$DXTDUMP" --h5f "$T/c.darshan" > "$T/h5f.dump" || fail "our reader: dxtdump --h5f failed"
"$DXTDUMP" --h5d "$T/c.darshan" > "$T/h5d.dump" || fail "our reader: dxtdump --h5d failed"
/usr/bin/python3 - "$T/h5f.dump" "$T/h5d.dump" "$D/c.h5" <<'PY' || fail "the Darshan log's H5F/H5D records"
import json, sys
def recs(path):
    lines = [json.loads(l) for l in open(path)]
    assert "ioacct_hdf5=uprobes" in lines[0]["metadata"], lines[0]
    return {r["name"]: r for r in lines[1:]}
f, d, name = recs(sys.argv[1]), recs(sys.argv[2]), sys.argv[3]
assert list(f) == [name], list(f)
c = f[name]["c"]
assert (c["H5F_OPENS"], c["H5F_FLUSHES"], c["H5F_USE_MPIIO"]) == (1, 1, -1), c
# A serial program's records: rank 0, as Darshan's non-MPI runtime and our POSIX records.
assert f[name]["rank"] == 0, f[name]
assert sorted(d) == [name + ":/a", name + ":/b"], list(d)
want = {"a": dict(H5D_OPENS=1, H5D_READS=0, H5D_WRITES=1, H5D_BYTES_READ=0,
                  H5D_BYTES_WRITTEN=8000, H5D_RW_SWITCHES=0, H5D_DATATYPE_SIZE=8,
                  H5D_SIZE_WRITE_AGG_1K_10K=1, H5D_REGULAR_HYPERSLAB_SELECTS=-1),
        "b": dict(H5D_OPENS=1, H5D_READS=1, H5D_WRITES=4, H5D_BYTES_READ=262144,
                  H5D_BYTES_WRITTEN=262144, H5D_RW_SWITCHES=1, H5D_DATATYPE_SIZE=4,
                  H5D_SIZE_WRITE_AGG_10K_100K=4, H5D_SIZE_READ_AGG_100K_1M=1,
                  H5D_CHUNK_SIZE_D1=-1)}
for ds, w in want.items():
    r = d[name + ":/" + ds]
    got = {k: r["c"][k] for k in w}
    assert got == w, (ds, got)
    assert r["file"] == name and r["rank"] == f[name]["rank"], r
    assert r["f"]["H5D_F_WRITE_TIME"] > 0 and r["f"]["H5D_F_OPEN_START_TIMESTAMP"] == -1, r["f"]
PY
ok "the Darshan log: H5F c.h5 (1 open, 1 flush); H5D a (1 write, 8,000 B), b (4 writes, 1 read, 262,144 B each way)"

# Its step over, the library's uprobes go.
for _ in $(seq 1 1200); do
	grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" && break
	sleep 0.1
done
grep -q "MPI-IO: detached from the library" "$T/ioacctd.log" || fail "libhdf5_serial not detached"
ok "the uprobes detached with the step"
