# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the tests of h5prog.c (issue 39), after lib.sh: the program's
# HDF5 records exact, whichever way HDF5 came to it (75-hdf5.sh: linked to
# libhdf5_serial.so; 79-h5static.sh: libhdf5.a linked into it by h5cc).

# h5prog_store_check JOB FILE: the store's part of h5prog_check (a job not run by
# iorun: Slurm's), its HDF5 records and the file's POSIX bytes; POSIX set to those.
h5prog_store_check() {
	local job=$1 h5f=$2 tag=h5check.$1 COLS Z
	COLS="kind, h.name, opens, flushes, reads, writes, bytes_read, bytes_written, unsized_reads,"
	COLS+=" unsized_writes, rw_switches, npoints_max, datatype_size, size_read, size_written,"
	COLS+=" dataspace_ndims, dataspace_npoints, use_mpiio, use_mpiio_collective,"
	COLS+=" regular_hyperslab_selects, irregular_hyperslab_selects, point_selects, unknown_selects,"
	COLS+=" chunk_known, chunk_size_d1"
	sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM hdf5_records h JOIN jobs j
		ON j.key = h.job_key WHERE j.job_id = $job ORDER BY kind, h.name" > "$T/$tag.got"
	Z=0,0,0,0,0,0,0,0,0,0
	# a written through H5S_ALL (no kind), b's 4 regular hyperslabs, neither chunked.
	local sa="0 0 0 0 1 0" sb="4 0 0 0 1 0"
	cat > "$T/$tag.want" <<WANT
0 $h5f 1 1 0 0 0 0 0 0 0 0 0 $Z $Z 0 0 0 0 0 0 0 0 0 0
1 $h5f:/a 1 0 0 1 0 8000 0 0 0 1000 8 $Z 0,0,1,0,0,0,0,0,0,0 1 1000 0 0 $sa
1 $h5f:/b 1 0 1 4 262144 262144 0 0 1 65536 4 0,0,0,0,1,0,0,0,0,0 0,0,0,4,0,0,0,0,0,0 2 65536 0 0 $sb
WANT
	diff "$T/$tag.want" "$T/$tag.got" || fail "the HDF5 records are not exact (want, then got)"
	[ "$(sqlite3 "$T/ioacct.db" "SELECT count(DISTINCT pid) FROM hdf5_records h JOIN jobs j
		ON j.key = h.job_key WHERE j.job_id = $job")" = 1 ] || fail "not one process"
	ok "H5F: 1 open, 1 flush; H5D a: 1 write of 8,000 B; b: 4 writes of 65,536 B (4 regular hyperslabs), 1 read of 262,144 B, 1 switch"

	# The same file's POSIX bytes, beside: the library wrote at least what the datasets hold.
	POSIX=$(sqlite3 "$T/ioacct.db" "SELECT sum(bytes_written) FROM files f JOIN jobs j
		ON j.key = f.job_key WHERE j.job_id = $job AND f.path = '$h5f'")
	[ "${POSIX:-0}" -ge $((8000 + 262144)) ] || fail "POSIX bytes written to $h5f: ${POSIX:-none}"
	ok "POSIX: $POSIX B written to ${h5f##*/} for the datasets' 270,144 B"
}

# h5prog_check JOB JSON FILE: job JOB ran `h5prog FILE` once, JSON is its
# iorun --json report. Its HDF5 records, in the store (hdf5_records), the
# JSON, text and HTML reports and its Darshan log (read back by our reader),
# are Darshan's H5F and H5D counters of the file and of each dataset, exact
# (bytes = the selection's elements x the dataset's datatype size, as
# Darshan counts them), named as Darshan names them.
h5prog_check() {
	local job=$1 json=$2 h5f=$3 tag POSIX IOREPORT DXTDUMP
	tag=h5check.$job
	h5prog_store_check "$job" "$h5f"

	# The JSON report (iorun's, through ioacctd's socket: the JOB reply's pages of
	# HDF5 records) and the text report (ioreport from the store) say the same.
	IOREPORT=$abs_top_builddir/tools/ioreport
	/usr/bin/python3 - "$json" "$h5f" "$POSIX" <<'PY' || fail "the JSON report's HDF5 part is not exact"
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
	/usr/bin/python3 - "$json" "$h5f" <<'PY' || fail "the JSON report's HDF5 times are not in h5prog's order"
import json, sys
j = json.load(open(sys.argv[1]))
f = sys.argv[2]
r = {x["name"]: x for x in j["hdf5"]["records"]}
F, a, b = r[f], r[f + ":/a"], r[f + ":/b"]
def span(x, k):
    return [x[k + "_start_ns"], x[k + "_end_ns"]]
# h5prog: H5Fcreate, a created and written, b created, 4 writes, H5Fflush, the read,
# H5Dclose a and b, H5Fclose: each call's start and end in that order, none 0.
order = (span(F, "open") + span(a, "open") + span(a, "write") + span(b, "open") +
         span(b, "write") + span(b, "read") + span(a, "close") + span(b, "close") +
         span(F, "close"))
assert 0 < order[0] and order == sorted(order), order
assert span(F, "read") + span(F, "write") + span(a, "read") == [0] * 6, (F, a)
assert (F["max_read_ns"], F["max_write_ns"], F["max_read_size"], F["max_write_size"]) == (0, 0, 0, 0), F
# The slowest call: a's one write, b's one read, one of b's 4 writes of 65,536 B.
assert (a["max_write_ns"], a["max_write_size"], a["max_read_ns"], a["max_read_size"]) == \
    (a["write_ns"], 8000, 0, 0), a
assert (b["max_read_ns"], b["max_read_size"], b["max_write_size"]) == (b["read_ns"], 262144, 65536), b
assert 4 * b["max_write_ns"] >= b["write_ns"] > b["max_write_ns"] > 0, b
PY
	ok "the JSON report's HDF5 times: opens, writes, the read and closes in h5prog's order; the slowest calls' sizes"
	"$IOREPORT" --db "$T/ioacct.db" -o "$T/$tag.txt" "$job" || fail "ioreport (text) failed"
	grep -q "^## HDF5: 1 files, 3 records" "$T/$tag.txt" || fail "no HDF5 section: $(cat "$T/$tag.txt")"
	grep -q "^ *262144 *270144 *[0-9-]* *$POSIX $h5f\$" "$T/$tag.txt" ||
		fail "the text report's HDF5 file line: $(grep -A3 "^## HDF5" "$T/$tag.txt")"
	grep -q "^ *-\?[0-9]* H5D *1 *0 *1 *4 *262144 *262144 *1 .* $h5f:/b\$" "$T/$tag.txt" ||
		fail "the text report's record of b: $(grep -A8 "^## HDF5" "$T/$tag.txt")"
	ok "the text report's HDF5 section"
	"$IOREPORT" --db "$T/ioacct.db" --format html -o "$T/$tag.html" "$job" || fail "ioreport (HTML) failed"
	/usr/bin/python3 - "$T/$tag.html" "$h5f" <<'PY' || fail "the HTML report's HDF5 section"
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
	"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/$tag.darshan" "$job" ||
		fail "ioreport --format darshan failed"
	"$DXTDUMP" --h5f "$T/$tag.darshan" > "$T/$tag.h5f" || fail "our reader: dxtdump --h5f failed"
	"$DXTDUMP" --h5d "$T/$tag.darshan" > "$T/$tag.h5d" || fail "our reader: dxtdump --h5d failed"
	/usr/bin/python3 - "$T/$tag.h5f" "$T/$tag.h5d" "$h5f" "$json" <<'PY' || fail "the Darshan log's H5F/H5D records"
import json, sys
def recs(path):
    lines = [json.loads(l) for l in open(path)]
    assert "ioacct_hdf5=uprobes" in lines[0]["metadata"], lines[0]
    return {r["name"]: r for r in lines[1:]}
f, d, name = recs(sys.argv[1]), recs(sys.argv[2]), sys.argv[3]
js = {x["name"]: x for x in json.load(open(sys.argv[4]))["hdf5"]["records"]}
# Each time of the log is the JSON report's, in seconds (as the POSIX records' timestamps).
def same_times(r, x, mod, kinds):
    for k in kinds:
        for e in ("START", "END"):
            got = r["f"]["%s_F_%s_%s_TIMESTAMP" % (mod, k.upper(), e)]
            assert abs(got - x["%s_%s_ns" % (k, e.lower())] / 1e9) < 1e-9, (mod, k, e, got, x)
assert list(f) == [name], list(f)
c = f[name]["c"]
assert (c["H5F_OPENS"], c["H5F_FLUSHES"], c["H5F_USE_MPIIO"]) == (1, 1, 0), c
same_times(f[name], js[name], "H5F", ("open", "close"))
# A serial program's records: rank 0, as Darshan's non-MPI runtime and our POSIX records.
assert f[name]["rank"] == 0, f[name]
assert sorted(d) == [name + ":/a", name + ":/b"], list(d)
want = {"a": dict(H5D_OPENS=1, H5D_READS=0, H5D_WRITES=1, H5D_BYTES_READ=0,
                  H5D_BYTES_WRITTEN=8000, H5D_RW_SWITCHES=0, H5D_DATATYPE_SIZE=8,
                  H5D_SIZE_WRITE_AGG_1K_10K=1, H5D_REGULAR_HYPERSLAB_SELECTS=0,
                  H5D_POINT_SELECTS=0, H5D_CHUNK_SIZE_D1=0,
                  H5D_DATASPACE_NDIMS=1, H5D_DATASPACE_NPOINTS=1000),
        "b": dict(H5D_OPENS=1, H5D_READS=1, H5D_WRITES=4, H5D_BYTES_READ=262144,
                  H5D_BYTES_WRITTEN=262144, H5D_RW_SWITCHES=1, H5D_DATATYPE_SIZE=4,
                  H5D_SIZE_WRITE_AGG_10K_100K=4, H5D_SIZE_READ_AGG_100K_1M=1,
                  H5D_REGULAR_HYPERSLAB_SELECTS=4, H5D_IRREGULAR_HYPERSLAB_SELECTS=0,
                  H5D_CHUNK_SIZE_D1=0, H5D_DATASPACE_NDIMS=2, H5D_DATASPACE_NPOINTS=65536,
                  H5D_USE_MPIIO_COLLECTIVE=0)}
for ds, w in want.items():
    r = d[name + ":/" + ds]
    got = {k: r["c"][k] for k in w}
    assert got == w, (ds, got)
    assert r["file"] == name and r["rank"] == f[name]["rank"], r
    assert r["f"]["H5D_F_WRITE_TIME"] > 0 and r["f"]["H5D_F_OPEN_START_TIMESTAMP"] > 0, r["f"]
    x = js[name + ":/" + ds]
    same_times(r, x, "H5D", ("open", "read", "write", "close"))
    assert (r["c"]["H5D_MAX_READ_TIME_SIZE"], r["c"]["H5D_MAX_WRITE_TIME_SIZE"]) == \
        (x["max_read_size"], x["max_write_size"]), (ds, r["c"])
    assert abs(r["f"]["H5D_F_MAX_WRITE_TIME"] - x["max_write_ns"] / 1e9) < 1e-9, (ds, r["f"])
    assert abs(r["f"]["H5D_F_MAX_READ_TIME"] - x["max_read_ns"] / 1e9) < 1e-9, (ds, r["f"])
PY
	ok "the Darshan log: H5F ${h5f##*/} (1 open, 1 flush); H5D a (1 write, 8,000 B), b (4 writes, 1 read, 262,144 B each way)"
}
