#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A file's counters and rank as Darshan has them (issue 38), exact:
#  1. POSIX AIO beside plain calls (iowork paio: two pwrites, an aio_write
#     at the next offset, done by glibc's AIO thread, a pwrite after it; the
#     same reads, the last one a block further): sequential and consecutive
#     judged against the file's last access by any thread of the process,
#     POSIX_CONSEC_WRITES 3 and POSIX_CONSEC_READS 2, POSIX_SEQ_* 3, one
#     read/write switch, in the store and in the job's Darshan log read back.
#  2. The four most common access sizes of a file of five sizes, as
#     Darshan's common-value counters rank them (the most common, then the
#     larger on a tie; the fifth left out), and 4 OpenMPI ranks' MPI-IO of
#     64 KiB transfers (the project's mpifile): POSIX_ACCESS1_ACCESS 65536
#     on every rank's record of the data file, in the store, in JSON and in
#     the Darshan log.
#  3. Rank never lost: 4 OpenMPI ranks (mpirank) each create, write and stat
#     500 files, 10 times, beside a CPU hog (a busy loop), the program's
#     binary evicted from the page cache before each run (its exec then
#     faults its .bss page in before the new environment's bounds are set,
#     which lost a whole process's rank before): every record of every file
#     has its rank. The hog keeps a CPU busy for the 10 runs (~2 minutes at
#     load 35 on 2 cores; a run is mostly OpenMPI's start and end).
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
IOREPORT=$abs_top_builddir/tools/ioreport
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
setup
start_daemon
W=$(realpath "$T")/w
mkdir -p "$W"

# rec NAME PATH COLUMNS: the store's COLUMNS of the record(s) of PATH in job NAME, by rank.
rec() {
	sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $3 FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $(json_get "$T/$1.json" 'j["job_id"]') AND path = '$2' ORDER BY rank"
}

# darshan NAME PATH COUNTERS...: the job's .darshan log read back, the COUNTERS
# (POSIX_ less) of the POSIX records of PATH, by rank: "rank: value value ...".
darshan() {
	local name=$1 path=$2
	shift 2
	[ -f "$T/$name.darshan" ] || "$IOREPORT" --db "$T/ioacct.db" -f darshan -o "$T/$name.darshan" \
		"$(json_get "$T/$name.json" 'j["job_id"]')" || fail "$name: ioreport -f darshan failed"
	"$DXTDUMP" --posix "$T/$name.darshan" | python3 -c '
import json, sys
path, names = sys.argv[1], sys.argv[2:]
recs = [json.loads(l) for l in sys.stdin if l.startswith("{")]
for r in sorted((r for r in recs if r.get("name") == path and "c" in r), key=lambda r: r["rank"]):
    print("%d: %s" % (r["rank"], " ".join(str(r["c"]["POSIX_" + n]) for n in names)))
' "$path" "$@"
}

# ---- 1. consecutive across threads ----
"$IORUN" --json -o "$T/aio.json" -- "$IOWORK" paio "$W/aio" 4096 | cat || fail "iorun iowork paio failed"
got=$(rec aio "$W/aio" "writes, reads, consec_writes, consec_reads, seq_writes, seq_reads, rw_switches,
	access1, access1_count, access2_count")
[ "$got" = "4 4 3 2 3 3 1 4096 8 0" ] ||
	fail "AIO: writes, reads, consec, seq, switches, access sizes: $got, not 4 4 3 2 3 3 1 4096 8 0"
got=$(darshan aio "$W/aio" CONSEC_WRITES CONSEC_READS SEQ_WRITES SEQ_READS RW_SWITCHES \
	ACCESS1_ACCESS ACCESS1_COUNT)
# A job without MPI ranks: its files rank 0 in the log, as Darshan's non-MPI logs (issue 38).
[ "$got" = "0: 3 2 3 3 1 4096 8" ] || fail "AIO: the Darshan log's record: $got"
ok "AIO's thread: POSIX_CONSEC_WRITES 3, POSIX_CONSEC_READS 2, one switch, in the store and the log"

# ---- 2. common access sizes ----
# 4096 x 5, then 200 x 3 and 100 x 3 (a tie: the larger first), 1000 x 2, 50 x 1 (fifth: out).
"$IORUN" --json -o "$T/sizes.json" -- "$IOWORK" pwrite "$W/sizes" 4096 5 , \
	pread "$W/sizes" 100 3 100 , pread "$W/sizes" 50 1 0 , pread "$W/sizes" 1000 2 1000 , \
	pread "$W/sizes" 200 3 200 | cat || fail "iorun iowork (sizes) failed"
got=$(rec sizes "$W/sizes" "access1, access1_count, access2, access2_count, access3, access3_count,
	access4, access4_count, rw_switches")
[ "$got" = "4096 5 200 3 100 3 1000 2 1" ] ||
	fail "common access sizes and counts: $got, not 4096 5 200 3 100 3 1000 2 1"
got=$(darshan sizes "$W/sizes" ACCESS1_ACCESS ACCESS2_ACCESS ACCESS3_ACCESS ACCESS4_ACCESS \
	ACCESS1_COUNT ACCESS2_COUNT ACCESS3_COUNT ACCESS4_COUNT)
[ "$got" = "0: 4096 200 100 1000 5 3 3 2" ] || fail "common access sizes in the Darshan log: $got"
ok "the four most common access sizes, ranked as Darshan ranks them, in the store and the log"

OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base" "$W/mpi"
"$OMPICC" -Wall -o "$T/mpifile" "$(dirname "$0")/mpifile.c" || fail "$OMPICC mpifile.c failed"
"$IORUN" --json -o "$T/mpi.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
	"$T/mpifile" "$W/mpi" indep 65536 8 > "$T/mpi.out" 2>&1 ||
	{ cat "$T/mpi.out"; fail "iorun mpirun mpifile failed"; }
want=$(printf '%s\n' "0 65536 16" "1 65536 16" "2 65536 16" "3 65536 16")
got=$(rec mpi "$W/mpi/data" "rank, access1, access1_count")
[ "$got" = "$want" ] || fail "MPI-IO 64 KiB: the data file's records: $(echo $got)"
got=$(darshan mpi "$W/mpi/data" ACCESS1_ACCESS ACCESS1_COUNT ACCESS2_COUNT)
[ "$got" = "$(printf '%s\n' "0: 65536 16 0" "1: 65536 16 0" "2: 65536 16 0" "3: 65536 16 0")" ] ||
	fail "MPI-IO 64 KiB: the Darshan log's data records: $(echo $got)"
"$IOREPORT" --db "$T/ioacct.db" -f json -o "$T/mpi.rep" "$(json_get "$T/mpi.json" 'j["job_id"]')" ||
	fail "ioreport -f json failed"
[ "$(json_get "$T/mpi.rep" "sorted(set(str(f['access_sizes']) for f in j['files'] if f['path'] == '$W/mpi/data'))")" = \
	"[\"[{'size': 65536, 'count': 16}]\"]" ] || fail "JSON: the data file's access_sizes"
ok "MPI-IO of 4 ranks, 64 KiB transfers: POSIX_ACCESS1_ACCESS 65536 on each rank's record"

# ---- 3. rank under load ----
"$OMPICC" -Wall -o "$T/mpirank" "$(dirname "$0")/mpirank.c" || fail "$OMPICC mpirank.c failed"
( while :; do :; done ) &
HOG=$!
trap 'rc=$?; kill $HOG 2> /dev/null; (exit $rc); teardown' EXIT
START=$(date +%s)
for run in $(seq 1 10); do
	mkdir -p "$W/r$run"
	"$IOWORK" evict "$T/mpirank" > /dev/null || fail "iowork evict failed"
	"$IORUN" --json -o "$T/rank.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
		"$T/mpirank" "$W/r$run" 500 > "$T/rank.out" 2>&1 ||
		{ cat "$T/rank.out"; fail "run $run: iorun mpirun mpirank failed"; }
	# Every record of a file r<R>.<i> is of rank R: 500 files, each with its open, write, stat.
	got=$(sqlite3 "$T/ioacct.db" "SELECT rank || ':' || count(*) || ':' || sum(opens) || ':' ||
		sum(writes) || ':' || sum(stats) FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $(json_get "$T/rank.json" 'j["job_id"]') AND path LIKE '$W/r$run/%'
		GROUP BY rank, substr(path, length('$W/r$run/') + 2, 1) ORDER BY 1")
	want=$(printf '%s\n' "0:500:500:500:500" "1:500:500:500:500" "2:500:500:500:500" \
		"3:500:500:500:500")
	[ "$got" = "$want" ] || fail "run $run: records by rank and file name's rank: $(echo $got)"
	[ "$(sqlite3 "$T/ioacct.db" "SELECT count(*) FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $(json_get "$T/rank.json" 'j["job_id"]') AND path LIKE '$W/r$run/r%'
		AND substr(path, length('$W/r$run/') + 2, 1) <> CAST(rank AS TEXT)")" = 0 ] ||
		fail "run $run: a file of one rank in another rank's record"
done
kill $HOG 2> /dev/null
echo "  10 runs of 4 x 500 files beside a CPU hog: $(($(date +%s) - START)) s"
ok "rank under load, the binary cold at each exec: every record of 20,000 files has its rank"
