#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --io-monitor=spans=mpiio (issue 27), through iorun --spans=mpiio: the
# MPI-IO calls of 37-mpiio.sh's program (mpiio.c), 4 OpenMPI ranks under
# mpirun, each a span named after its MPI function, decoded with the
# OpenTelemetry project's schema as 48-spans.sh does: exact in count per
# function and rank, in bytes (count x datatype size, as the counters) and
# offsets, every one a child of the step's span, the step's of the job's,
# one trace; no POSIX span (not asked for). Then MPICH's, where installed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/otlp.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
require_root_bpf
otlp_require
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
EXTRA_CONF="${EXTRA_CONF:-}
mpi_detach_after = 1s"
setup
otlp_schema

trap 'rc=$?; stop_collector; (exit $rc); teardown' EXIT

# OpenMPI's session directory on a tmpfs of this test's (see 37-mpiio.sh).
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
	fail "cannot mount a tmpfs for OpenMPI's session directory"
D=$(realpath "$T")/mpi

# mpi_spans NAME JOBID CC RUN [RUN OPTIONS]: mpiio.c on 4 ranks under RUN in
# job JOBID with MPI-IO spans; the spans, decoded, in $T/NAME.spans.
mpi_spans() {
	local name=$1 job=$2 cc=$3 run=$4
	shift 4
	rm -rf "$D" && mkdir -p "$D"
	"$cc" -Wall -o "$T/mpiio-$name" "$HERE/mpiio.c" || fail "$cc failed"
	start_collector ok "$T/c-$name"
	sed -i "/^otlp_url = /d" "$CONF"
	echo "otlp_url = http://127.0.0.1:$PORT" >> "$CONF"
	start_daemon
	require_mpi_uprobes
	"$IORUN" --spans=mpiio --job-id "$job" -o /dev/null -- "$run" "$@" -np 4 \
		"$T/mpiio-$name" "$D" > "$T/$name.out" 2> "$T/$name.err" ||
		{ cat "$T/$name.out" "$T/$name.err"; fail "iorun --spans=mpiio $run failed"; }
	grep -q "^iorun:" "$T/$name.err" && fail "iorun said: $(grep "^iorun:" "$T/$name.err")"
	wait_log "job iorun/$job: spans: [0-9]+ spans sent, 0 dropped"
	stop_collector
	stop_daemon
	! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "$name: MPI-IO calls lost"
	decode "$T/c-$name"/post-*.bin > "$T/$name.spans" ||
		fail "decoding with the OpenTelemetry schema"
}

# check NAME JOBID: every rank's 19 MPI-IO calls exact (mpiio.c: base = rank x 8192;
# its vector type is 2 x 3 ints: 24 bytes).
check() {
	python3 - "$T/$1.spans" "$2" "$D" "$(uname -n | cut -d. -f1)" <<'PY'
import json, sys
path, job, D, node = sys.argv[1:]
sp = [json.loads(l) for l in open(path)]
jobs = [s for s in sp if s["name"] == "job " + job]
steps = [s for s in sp if s["name"] == "step %s.0" % job]
assert len(jobs) == 1 and len(steps) == 1, [s["name"] for s in sp if not s["name"].startswith("MPI_")]
job_s, step = jobs[0], steps[0]
assert step["parent"] == job_s["spanId"] and job_s["parent"] == ""
calls = [s for s in sp if s not in (job_s, step)]
bad = [s["name"] for s in calls if not s["name"].startswith("MPI_File_")]
assert not bad, "spans not of MPI-IO calls (POSIX not asked for): %s" % sorted(set(bad))
assert all(s["parent"] == step["spanId"] for s in calls), "every call's parent is the step"
assert len({s["traceId"] for s in sp}) == 1, "one trace"
assert len({s["spanId"] for s in sp}) == len(sp), "span ids unique"
def want(r):
    b, sh, own = r * 8192, D + "/shared", "%s/own.%d" % (D, r)
    w = []
    for rw in ("write", "read"):
        w += [("MPI_File_%s_at" % rw, sh, b, 2000, "false"),
              ("MPI_File_%s_at_all" % rw, sh, b + 2000, 120, "true"),
              ("MPI_File_i%s_at" % rw, sh, b + 2200, 48, "false"),
              ("MPI_File_%s_at_all_begin" % rw, sh, b + 2300, 7, "true"),
              ("MPI_File_%s_at_all_end" % rw, sh, None, None, "true")]
        if rw == "write":
            w.append(("MPI_File_sync", sh, None, None, "true"))
    w = [("MPI_File_open", sh, None, None, "true")] + w + [
        ("MPI_File_set_view", sh, None, None, "true"), ("MPI_File_close", sh, None, None, "true"),
        ("MPI_File_open", own, None, None, "true")] + \
        [("MPI_File_write", own, None, 20, "false")] * 3 + [("MPI_File_close", own, None, None, "true")]
    return w
pids = set()
for r in range(4):
    mine = sorted((s for s in calls if s["attributes"].get("ioacct.rank") == str(r)),
                  key=lambda s: int(s["start"]))
    a = lambda s, k: s["attributes"].get(k)
    num = lambda v: None if v is None else int(v)
    got = [(s["name"], a(s, "file.path"), num(a(s, "ioacct.offset")), num(a(s, "ioacct.bytes")),
            a(s, "mpi.collective")) for s in mine]
    assert got == want(r), "rank %d:\n%s\nwanted:\n%s" % (r, "\n".join(map(str, got)),
                                                          "\n".join(map(str, want(r))))
    for s in mine:
        at = s["attributes"]
        assert (at["ioacct.job"], at["ioacct.step"], at["ioacct.node"], at["ioacct.result"]) == \
            (job, "0", node, "0"), at
        assert int(step["start"]) <= int(s["start"]) <= int(s["end"]) <= int(step["end"]), s
    assert len({a(s, "process.pid") for s in mine}) == 1, "one process per rank"
    pids.add(a(mine[0], "process.pid"))
assert len(pids) == 4 and len(calls) == 76, (len(pids), len(calls))
print("ok: 76 MPI-IO spans of 4 ranks, %d spans in all" % len(sp))
PY
}

mpi_spans openmpi 4901 "$OMPICC" "$OMPIRUN" --allow-run-as-root --oversubscribe
check openmpi 4901 || fail "OpenMPI: the MPI-IO spans"
ok "OpenMPI: 4 ranks' MPI-IO calls as spans, exact in count, function, rank, file, offset" \
	"and bytes, children of the step's span; no POSIX span"

if MPICHCC=$(command -v mpicc.mpich) && MPICHRUN=$(command -v mpiexec.mpich); then
	mpi_spans mpich 4902 "$MPICHCC" "$MPICHRUN"
	check mpich 4902 || fail "MPICH: the MPI-IO spans"
	ok "MPICH: the same spans, its derived datatype's size noted"
else
	echo "note: MPICH not installed (Debian: libmpich-dev mpich): its part not run"
fi
