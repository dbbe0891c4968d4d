#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 38: our log of an MPI-IO run, as Darshan's own tools read it. An
# OpenMPI job of 4 ranks under iorun, bins of 0.1 s (mpiio.c DIR 16: each
# rank writes 16 blocks of 64 KiB to one shared file, then reads them back).
# Its .darshan log, through darshan_parser.py (darshan-parser's output of
# the log, made from its bytes alone, not our reader) and through our reader
# (dxtdump), has:
# - the job record PyDarshan's summary reads: iorun's command line as the
#   exe, lib_ver first in the metadata and every line key=value, nprocs 4,
#   the job's run time;
# - one HEATMAP record per rank, one bin width, whose bins add up bin by bin
#   to the job's series and in all to the job's bytes read and written;
# - the MPI-IO records of the data file, one per rank, 1 MiB each way, and
#   the POSIX records of the files under DIR, 4 MiB each way in all; no
#   pseudo-record among the POSIX records darshan-parser prints, yet our
#   reader has them as ioacct's own records, and the log compared with its
#   job has every ratio 1.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
PARSER=$(dirname "$0")/darshan_parser.py
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
EXTRA_CONF="bin_width = 0.1"
setup
# OpenMPI's session directory, this test's own (as 37-mpiio-report.sh's).
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
	fail "cannot mount a tmpfs for OpenMPI's session directory"
start_daemon

D=$(realpath "$T")/mpi
mkdir -p "$D"
"$OMPICC" -Wall -o "$T/mpiio" "$(dirname "$0")/mpiio.c" || fail "$OMPICC failed"
CMD=("$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 "$T/mpiio" "$D" 16)
"$IORUN" --json -o "$T/run.json" -- "${CMD[@]}" > "$T/run.out" 2>&1 ||
	{ cat "$T/run.out"; fail "iorun $OMPIRUN failed"; }
JOB=$(json_get "$T/run.json" 'j["job_id"]')
"$IOREPORT" --db "$T/ioacct.db" --format json -o "$T/report.json" "$JOB" || fail "ioreport json failed"
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/job.darshan" "$JOB" ||
	fail "ioreport --format darshan failed"
python3 "$PARSER" "$T/job.darshan" > "$T/parser.txt" || fail "darshan_parser.py cannot read the log"
"$DXTDUMP" --job "$T/job.darshan" > "$T/job.json" || fail "dxtdump --job failed"
"$DXTDUMP" --heatmap "$T/job.darshan" > "$T/heatmap.json" || fail "dxtdump --heatmap failed"
"$DXTDUMP" --posix "$T/job.darshan" > "$T/posix.json" || fail "dxtdump --posix failed"
printf '%s\n' "${CMD[*]}" > "$T/cmd"

python3 - "$T" "$D" <<'PY' || fail "the log is not what Darshan's tools should read"
import json, sys
T, D = sys.argv[1:3]
rep = json.load(open(T + "/report.json"))
job = json.loads(open(T + "/job.json").read())
cmd = open(T + "/cmd").read().rstrip("\n")
bad = []
head, meta, recs = {}, [], []
for line in open(T + "/parser.txt"):
    line = line.rstrip("\n")
    if line.startswith("# metadata: "):
        meta.append(line[len("# metadata: "):])
    elif line.startswith("# ") and ": " in line:
        k, _, v = line[2:].partition(": ")
        head.setdefault(k, v)
    elif not line.startswith("#"):
        recs.append(line.split("\t"))

# The job record, as darshan-parser and PyDarshan's summary read it.
run = (rep["end_ns"] - rep["start_ns"]) / 1e9
for name, have in (("darshan-parser", head), ("our reader", job)):
    if have["exe"] != cmd:
        bad.append("%s: exe %r, not the command line %r" % (name, have["exe"], cmd))
    if int(have["nprocs"]) != 4:
        bad.append("%s: nprocs %s" % (name, have["nprocs"]))
if abs(float(head["run time"]) - run) > 0.0001 or abs(job["run_time"] - run) > 1e-6:
    bad.append("run time %s / %f, the job's %f" % (head["run time"], job["run_time"], run))
if not meta or not meta[0].startswith("lib_ver = ioacct-") or "lib_ver" not in job["metadata"]:
    bad.append("lib_ver is not the metadata's first key: %r" % meta[:1])
if any(" = " not in m for m in meta):
    bad.append("a metadata line without '=': %r" % meta)
if rep["cmdline"] != cmd:
    bad.append("the report's cmdline %r" % rep["cmdline"])

# HEATMAP: one record per rank, one grid, bins adding up to the job's series.
hm = [json.loads(l) for l in open(T + "/heatmap.json")]
ranks = sorted(h["rank"] for h in hm)
if ranks != [0, 1, 2, 3]:
    bad.append("heatmap records of ranks %s, not 0..3" % ranks)
if len({(h["nbins"], h["bin_width"]) for h in hm}) != 1:
    bad.append("heatmap records of several grids")
width = hm[0]["bin_width"] if hm else 0
shift = 0
while round(rep["bin_width_ns"] * 2 ** shift) < round(width * 1e9):
    shift += 1
want = {"read": {}, "write": {}}
for m in rep["series"]["mounts"]:
    for b, r, w in zip(m["bin"], m["bytes_read"], m["bytes_written"]):
        want["read"][b >> shift] = want["read"].get(b >> shift, 0) + r
        want["write"][b >> shift] = want["write"].get(b >> shift, 0) + w
for d in ("read", "write"):
    for t in range(hm[0]["nbins"] if hm else 0):
        have = sum(h[d][t] for h in hm)
        if have != want[d].get(t, 0):
            bad.append("heatmap %s bin %d: %d, the job's %d" % (d, t, have, want[d].get(t, 0)))
    if sum(want[d].values()) != rep["totals"]["bytes_" + ("read" if d == "read" else "written")]:
        bad.append("the series' %s bytes are not the job's" % d)
total = sum(sum(h["read"]) + sum(h["write"]) for h in hm)
if total != rep["totals"]["bytes_read"] + rep["totals"]["bytes_written"]:
    bad.append("heatmap bytes %d, the job's %d" % (total, rep["totals"]["bytes_read"] +
                                                     rep["totals"]["bytes_written"]))
if any(sum(h["read"]) + sum(h["write"]) == 0 for h in hm):
    bad.append("a rank's heatmap is empty")
# darshan-parser's lines of the heatmaps are the same numbers.
pbins = {}
for r in recs:
    if r[0] == "HEATMAP" and r[3].startswith(("HEATMAP_READ_BIN_", "HEATMAP_WRITE_BIN_")):
        pbins[(int(r[1]), r[3])] = int(r[4])
for h in hm:
    for d in ("read", "write"):
        for t, v in enumerate(h[d]):
            if pbins.get((h["rank"], "HEATMAP_%s_BIN_%d" % (d.upper(), t))) != v:
                bad.append("darshan-parser's rank %d %s bin %d differs" % (h["rank"], d, t))

# MPI-IO: the data file, each rank 1 MiB each way; POSIX: 4 MiB each way under D.
mpi = {}
for r in recs:
    if r[0] == "MPI-IO" and r[5] == D + "/data" and r[3] in ("MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN"):
        mpi[(int(r[1]), r[3])] = int(r[4])
if mpi != {(k, c): 1 << 20 for k in range(4) for c in ("MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN")}:
    bad.append("MPI-IO records of the data file: %s" % mpi)
for c in ("POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN"):
    s = sum(int(r[4]) for r in recs if r[0] == "POSIX" and r[3] == c and r[5].startswith(D + "/"))
    if s != 4 << 20:
        bad.append("%s under %s: %d, not 4 MiB" % (c, D, s))
# No pseudo-record where darshan-parser looks; our reader has them apart.
pseudo = {r[5] for r in recs if r[0] == "POSIX" and ("<ioacct: not per file>" in r[5] or
                                                    "<ioacct: other files>" in r[5])}
if pseudo:
    bad.append("pseudo-records among the POSIX records: %s" % sorted(pseudo))
own = [json.loads(l) for l in open(T + "/posix.json")][1:]
if not any(r["own"] and r["name"].endswith("<ioacct: not per file>") for r in own):
    bad.append("our reader has no ioacct record of a mount's rest")
if any(r["own"] != r["name"].endswith(">") and "<ioacct: dev" not in r["name"] for r in own):
    bad.append("a file among ioacct's own records, or a pseudo-record among the files")
for b in bad:
    print("68-darshan-tools: " + b)
print("68-darshan-tools: exe %r, %d heatmap records of %d bins (%.1f s), %d bytes, %s" %
      (head.get("exe"), len(hm), hm[0]["nbins"] if hm else 0, width, total,
       "bad" if bad else "exact"))
sys.exit(1 if bad else 0)
PY
ok "the log's exe, lib_ver, nprocs, run time; heatmaps per rank summing to the job's bins"

# Our own comparison of the job with its log: the own records count, every ratio 1.
"$IOREPORT" --db "$T/ioacct.db" --compare "$T/job.darshan" "$JOB" > "$T/compare.txt" ||
	fail "ioreport --compare failed"
python3 - "$T/compare.txt" <<'PY' || { cat "$T/compare.txt"; fail "--compare of the job with its own log"; }
# Every counter row of every mount: ours = Darshan's, ratio 1 (or - where both are 0);
# every time bin the same on both sides: the heatmaps of all ranks add up to the job's bins.
import sys
bad, ones, bins, table, series = [], 0, 0, False, False
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("COUNTER "):
        table = True
        continue
    if line.startswith("# ") or not f:
        table = False
    if f and f[0] == "BIN":
        series = True
        continue
    if table:
        ones += f[3] == "1.000000"
        if f[1] != f[2] or f[3] not in ("1.000000", "-"):
            bad.append(line.rstrip())
    elif series and len(f) == 6 and f[0].isdigit():
        bins += 1
        if f[2] != f[3] or f[4] != f[5]:
            bad.append(line.rstrip())
print("--compare: %d ratios of 1, %d time bins; not equal: %s" % (ones, bins, bad))
sys.exit(1 if bad or ones < 10 or bins < 2 else 0)
PY
grep -q '^# files: [0-9]* on both sides ([0-9]* the same in every counter below), 0 ours only, 0 Darshan.s only' \
	"$T/compare.txt" || { cat "$T/compare.txt"; fail "--compare: the files are not the same"; }
ok "ioreport --compare with its own log: every ratio 1, every file the same"
