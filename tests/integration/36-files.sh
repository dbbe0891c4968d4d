#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-file records (issue 26), exact: a job writes and reads several files of
# known sizes on two mounts (the test directory's and /dev/shm), sequentially,
# strided and two files in turn, stats, fsyncs and seeks them, by absolute and
# relative paths, while a process outside the job reads, stats and writes the
# same files. Every file's record is exact (calls, bytes, largest offsets,
# sequential and consecutive accesses, opens, stats, fsyncs, seeks, size bins), no
# record has the outside process's calls, and the records' sums are the
# mounts' counts. Processes of ranks 0..5 (SLURM_PROCID, OMPI_COMM_WORLD_RANK,
# PMI_RANK) write their own files and one shared: a record per file and rank.
# Then max_files = 2: the files past it are one "other files"
# record, exactly.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup

D=$(realpath "$T")/root-fs
mkdir -p "$D"
SHM=/dev/shm/ioacct-files-$$
ROOTMNT=$(mount_of "$D")
SHMMNT=$(mount_of /dev/shm)
[ "$ROOTMNT" != "$SHMMNT" ] || skip "$D and /dev/shm are on the same mount"
trap 'rc=$?; rm -f "$SHM".*; (exit $rc); teardown' EXIT
start_daemon

( while :; do
	cat "$D/a" > /dev/null 2>&1; stat "$D/a" "$SHM.x" > /dev/null 2>&1
	dd if=/dev/zero of="$SHM.x" bs=1000 count=1 conv=notrunc 2>/dev/null
	dd if=/dev/zero of="$D/outside" bs=4k count=4 2>/dev/null
done ) &
NOISE=$!
"$IORUN" --json -o "$T/out.json" -- "$IOWORK" \
	write "$D/a" 4096 8 , \
	pread "$D/a" 1000 4 3000 , \
	read "$D/a" 4096 8 , \
	pwrite "$SHM.x" 1000 5 , \
	copyrw "$D/a" "$SHM.y" 4096 8 , \
	stat "$D/a" 3 , \
	fsync "$D/b" 2 , \
	seek "$D/s" 7 , seek "$SHM.s" 4 , \
	cd "$D" , write rel 100000 3 | cat || fail "iorun failed"
kill $NOISE; wait $NOISE 2>/dev/null
JOB=$(json_get "$T/out.json" 'j["job_id"]')

# a: write 8 x 4 KiB from 0 (7 sequential and consecutive: Darshan's first
# access at 0 is neither); pread 1000 at 0, 3000, 6000, 9000 (3 sequential,
# none consecutive); read 8 x 4 KiB from 0 (after 9999: 7 and 7); read 8 x 4
# KiB from 0 again by copyrw (after 32767: 7 and 7).
cat > "$T/expect.json" <<JSON
{"job": $JOB,
 "files": {
  "$D/a": {"opens": 4, "writes": 8, "bytes_written": 32768, "max_byte_written": 32767,
           "seq_writes": 7, "consec_writes": 7, "reads": 20, "bytes_read": 69536,
           "max_byte_read": 32767, "seq_reads": 17, "consec_reads": 14, "stats": 3,
           "size_read": "0,4,16,0,0,0,0,0,0,0", "size_written": "0,0,8,0,0,0,0,0,0,0",
           "rw_switches": 1, "access1": 4096, "access1_count": 24},
  "$D/b": {"opens": 1, "fsyncs": 2},
  "$D/s": {"opens": 1, "seeks": 7},
  "$SHM.s": {"opens": 1, "seeks": 4},
  "$D/rel": {"opens": 1, "writes": 3, "bytes_written": 300000, "max_byte_written": 299999,
             "seq_writes": 2, "consec_writes": 2, "size_written": "0,0,0,3,0,0,0,0,0,0"},
  "$SHM.x": {"opens": 1, "writes": 5, "bytes_written": 5000, "max_byte_written": 4999,
             "seq_writes": 4, "consec_writes": 4, "size_written": "0,5,0,0,0,0,0,0,0,0"},
  "$SHM.y": {"opens": 1, "writes": 8, "bytes_written": 32768, "max_byte_written": 32767,
             "seq_writes": 7, "consec_writes": 7, "size_written": "0,0,8,0,0,0,0,0,0,0"}},
 "other": {},
 "sums": ["$ROOTMNT", "$SHMMNT"]}
JSON
python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/out.json" "$T/expect.json" ||
	fail "per-file records differ"
ok "every file's record exact, none of the outside process, sums equal the mounts'"
# Seeks per mount: s's 7 and SHM.s's 4 lseeks, and a failing one on each (EINVAL).
python3 - "$T/out.json" "$ROOTMNT" "$SHMMNT" <<'PY' || fail "the mounts' seeks are not exact"
import json, sys
j = json.load(open(sys.argv[1]))
m = {x["mount"]: x for x in j["mounts"]}
bad = 0
for mp, calls in ((sys.argv[2], 8), (sys.argv[3], 5)):
    got = (m[mp]["seeks"], m[mp]["op_errors"]["seeks"], m[mp]["ops"]["seek"]["errors"])
    if got != (calls, 1, 1):
        print("%s: seeks, their errors: %s, expected %s" % (mp, got, (calls, 1, 1)))
        bad = 1
sys.exit(bad)
PY
ok "seeks per mount exact: SEEK_SET, SEEK_CUR, SEEK_END and a failed one"

# Copies: copy_file_range (at f_pos, and at explicit offsets, last block
# first), sendfile into a file and into a socket, splice through a pipe: a
# read of the source's record and a write of the destination's, at the
# offsets they moved (Darshan's sequential and consecutive counts follow).
"$IORUN" --json -o "$T/copy.json" -- "$IOWORK" \
	write "$D/c.src" 4096 4 , copy "$D/c.src" "$D/c.cp" 4096 4 , \
	rcopy "$D/c.src" "$D/c.rc" 4096 4 , sendfile "$D/c.src" "$SHM.sf" 4096 4 , \
	splice "$D/c.src" "$D/c.sp" 4096 2 , sendfile "$D/c.src" socket 1000 3 | cat ||
	fail "iorun (copies) failed"
JOB=$(json_get "$T/copy.json" 'j["job_id"]')
# c.src reads: copy 0..12288 (3 sequential and consecutive), rcopy 12288..0
# (none), sendfile 0..12288 (after 4095: 3 and 3), splice 0, 4096 (1 and 1),
# sendfile 1000 x 3 from 0 (2 and 2). c.rc's writes from 12288 down: the
# first is sequential (after 0), none consecutive.
cat > "$T/expect.json" <<JSON
{"job": $JOB,
 "files": {
  "$D/c.src": {"opens": 6, "writes": 4, "bytes_written": 16384, "max_byte_written": 16383,
               "seq_writes": 3, "consec_writes": 3, "reads": 17, "bytes_read": 60344,
               "max_byte_read": 16383, "seq_reads": 9, "consec_reads": 9,
               "size_read": "0,3,14,0,0,0,0,0,0,0", "size_written": "0,0,4,0,0,0,0,0,0,0"},
  "$D/c.cp": {"opens": 1, "writes": 4, "bytes_written": 16384, "max_byte_written": 16383,
              "seq_writes": 3, "consec_writes": 3, "size_written": "0,0,4,0,0,0,0,0,0,0"},
  "$D/c.rc": {"opens": 1, "writes": 4, "bytes_written": 16384, "max_byte_written": 16383,
              "seq_writes": 1, "size_written": "0,0,4,0,0,0,0,0,0,0"},
  "$SHM.sf": {"opens": 1, "writes": 4, "bytes_written": 16384, "max_byte_written": 16383,
              "seq_writes": 3, "consec_writes": 3, "size_written": "0,0,4,0,0,0,0,0,0,0"},
  "$D/c.sp": {"opens": 1, "writes": 2, "bytes_written": 8192, "max_byte_written": 8191,
              "seq_writes": 1, "consec_writes": 1, "size_written": "0,0,2,0,0,0,0,0,0,0"}},
 "other": {},
 "sums": ["$ROOTMNT", "$SHMMNT"]}
JSON
python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/copy.json" "$T/expect.json" ||
	fail "copies: records differ"
ok "copies: copy_file_range, sendfile, splice in their files' records, exact"

# io_uring and AIO: each request in its file's record at its completion,
# at its offset, whoever completes or reaps it. iouring FILE N: WRITE N at
# 0, WRITEV N at N, WRITE_FIXED N at 2N (WRITEV_FIXED N at 3N where the
# kernel has it: "vfixed"), FSYNC, the same reads, after one open. ioaio N
# F1 F2, on each file: writes of N at 0, N, ..., 7N in order, reads of N at
# 0, N, 0, N, one fsync, two opens, and a read that fails (not counted).
IOURING=$abs_top_builddir/tests/integration/iouring
IOAIO=$abs_top_builddir/tests/integration/ioaio
N=4096
# Outside the jobs, reads and stats of their files meanwhile.
( while :; do cat "$D/u" "$D/a2" "$SHM.a" > /dev/null 2>&1; stat "$D/u" > /dev/null 2>&1; done ) &
NOISE=$!
if [ -x "$IOURING" ] && "$IOURING" "$SHM.probe" $N > /dev/null 2>&1; then
	# Its output through a pipe (no file's record); it loads liburing: "only".
	OUT=$("$IORUN" --json -o "$T/uring.json" -- "$IOURING" "$D/u" $N) ||
		fail "iorun (io_uring) failed"
	K=3
	case $OUT in *vfixed*) K=4 ;; esac
	JOB=$(json_get "$T/uring.json" 'j["job_id"]')
	cat > "$T/expect.json" <<JSON
{"job": $JOB, "only": ["$D"],
 "files": {
  "$D/u": {"opens": 1, "fsyncs": 1,
           "writes": $K, "bytes_written": $((K * N)), "max_byte_written": $((K * N - 1)),
           "seq_writes": $((K - 1)), "consec_writes": $((K - 1)),
           "reads": $K, "bytes_read": $((K * N)), "max_byte_read": $((K * N - 1)),
           "seq_reads": $((K - 1)), "consec_reads": $((K - 1)),
           "size_read": "0,0,$K,0,0,0,0,0,0,0", "size_written": "0,0,$K,0,0,0,0,0,0,0"}},
 "other": {},
 "sums": ["$ROOTMNT"]}
JSON
	python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/uring.json" "$T/expect.json" ||
		fail "io_uring: records differ"
	ok "io_uring: requests in their file's record, exact"
else
	echo "io_uring records not checked: iouring not built or io_uring not allowed here"
fi
if [ -x "$IOAIO" ] && "$IOAIO" $N "$SHM.probe" "$D/aprobe" > /dev/null 2>&1; then
	"$IORUN" --json -o "$T/aio.json" -- "$IOAIO" $N "$SHM.a" "$D/a2" > /dev/null ||
		fail "iorun (AIO) failed"
	JOB=$(json_get "$T/aio.json" 'j["job_id"]')
	A='"opens": 2, "fsyncs": 1, "writes": 8, "bytes_written": 32768, "max_byte_written": 32767,
	   "seq_writes": 7, "consec_writes": 7, "reads": 4, "bytes_read": 16384,
	   "max_byte_read": 8191, "seq_reads": 2, "consec_reads": 2,
	   "size_read": "0,0,4,0,0,0,0,0,0,0", "size_written": "0,0,8,0,0,0,0,0,0,0"'
	# No sums: the mounts count the failed reads, the records successful calls only.
	cat > "$T/expect.json" <<JSON
{"job": $JOB, "files": {"$SHM.a": {$A}, "$D/a2": {$A}}, "other": {}, "sums": []}
JSON
	python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/aio.json" "$T/expect.json" ||
		fail "AIO: records differ"
	ok "AIO: iocbs in their file's record, exact"
else
	echo "AIO records not checked: ioaio not built, AIO not allowed or no O_DIRECT here"
fi
kill $NOISE; wait $NOISE 2>/dev/null

# Ranks: a record per file and rank, the rank from each process's
# environment (an MPI rank over the Slurm task), read again after an exec.
# Two ranks write the same file: two records, each of its rank's calls.
mkdir "$D/rank"
"$IORUN" --json -o "$T/rank.json" -- bash -c '
	SLURM_PROCID=0 "$1" write "$2/r0" 1000 3 , write "$2/shared" 1000 2 &
	SLURM_PROCID=1 "$1" write "$2/r1" 2000 2 , write "$2/shared" 1000 3 &
	SLURM_PROCID=3 OMPI_COMM_WORLD_RANK=5 "$1" write "$2/r5" 500 4 &
	PMI_RANK=4 "$1" write "$2/r4" 100 1 &
	wait
	export SLURM_PROCID=2
	exec "$1" write "$2/r2" 3000 1' rank "$IOWORK" "$D/rank" | cat || fail "iorun (ranks) failed"
JOB=$(json_get "$T/rank.json" 'j["job_id"]')
R=$D/rank
cat > "$T/expect.json" <<JSON
{"job": $JOB, "only": ["$R"],
 "files": {
  "$R/r0@0": {"opens": 1, "writes": 3, "bytes_written": 3000, "max_byte_written": 2999,
              "seq_writes": 2, "consec_writes": 2, "size_written": "0,3,0,0,0,0,0,0,0,0"},
  "$R/shared@0": {"opens": 1, "writes": 2, "bytes_written": 2000, "max_byte_written": 1999,
                  "seq_writes": 1, "consec_writes": 1, "size_written": "0,2,0,0,0,0,0,0,0,0"},
  "$R/r1@1": {"opens": 1, "writes": 2, "bytes_written": 4000, "max_byte_written": 3999,
              "seq_writes": 1, "consec_writes": 1, "size_written": "0,0,2,0,0,0,0,0,0,0"},
  "$R/shared@1": {"opens": 1, "writes": 3, "bytes_written": 3000, "max_byte_written": 2999,
                  "seq_writes": 2, "consec_writes": 2, "size_written": "0,3,0,0,0,0,0,0,0,0"},
  "$R/r2@2": {"opens": 1, "writes": 1, "bytes_written": 3000, "max_byte_written": 2999,
              "size_written": "0,0,1,0,0,0,0,0,0,0"},
  "$R/r4@4": {"opens": 1, "writes": 1, "bytes_written": 100, "max_byte_written": 99,
              "size_written": "1,0,0,0,0,0,0,0,0,0"},
  "$R/r5@5": {"opens": 1, "writes": 4, "bytes_written": 2000, "max_byte_written": 1999,
              "seq_writes": 3, "consec_writes": 3, "size_written": "0,4,0,0,0,0,0,0,0,0"}},
 "other": {},
 "sums": []}
JSON
# No sums: bash opens directories and stats what is not a regular file, which
# its mount counts and no file's record does.
python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/rank.json" "$T/expect.json" ||
	fail "ranks: records differ"
ok "ranks: a record per file and rank, from SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK"

# max_files = 2: f0 and f1 have records, f2..f4 are the mount's "other files" (f1 too
# when the binary's exec made a record first: many_expect.py).
stop_daemon
echo "max_files = 2" >> "$CONF"
start_daemon
mkdir "$D/many"
"$IORUN" --json -o "$T/many.json" -- "$IOWORK" \
	write "$D/many/f0" 1000 1 , write "$D/many/f1" 1000 2 , write "$D/many/f2" 1000 3 , \
	write "$D/many/f3" 2000 4 , write "$D/many/f4" 1000 5 | cat || fail "iorun (many) failed"
JOB=$(json_get "$T/many.json" 'j["job_id"]')
python3 "$(dirname "$0")/many_expect.py" "$T/ioacct.db" $JOB "$D/many" "$ROOTMNT" > "$T/expect.json" ||
	fail "many_expect.py failed"
python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/many.json" "$T/expect.json" ||
	fail "max_files: records differ"
ok "max_files: the bound holds, \"other files\" has the rest exactly"
