#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-file records in the job's Darshan log (issue 26), with the real daemon:
# 36-files.sh's job (files of known sizes on two mounts, sequential, strided,
# two files in turn, stats, fsyncs, relative paths, an outside process on
# the same files) written with `ioreport --format darshan` and read back by
# our reader (dxtdump --posix): one POSIX record per file, named by its
# path, each counter exact (calls, bytes, largest offsets, sequential and
# consecutive accesses, size bins), -1 where ioacct keeps nothing per file;
# the stats of a directory in "<mount>/<ioacct: not per file>", and per
# mount the records add up to the mount's counts. `ioreport
# --compare` of the job with its own log: every file the same on both
# sides, every mount's ratio 1. The same log through ioacctd's socket (plain
# `ioreport JOBID`), byte for byte; iorun's own (--format darshan), file by
# file exact and record for record the store's. Then max_files = 2: the files past it are
# "<mount>/<ioacct: other files>", exactly, and the log is partial.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
IOACCT=$abs_top_builddir/tools/ioacct
DXTDUMP=$abs_top_builddir/tests/integration/dxtdump
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$DXTDUMP" ] || fail "$DXTDUMP not built (make -C tests/integration dxtdump)"
CHECK=$(dirname "$0")/check_darshan_files.py
setup

D=$(realpath "$T")/root-fs
mkdir -p "$D"
SHM=/dev/shm/ioacct-fdar-$$
ROOTMNT=$(mount_of "$D")
SHMMNT=$(mount_of /dev/shm)
[ "$ROOTMNT" != "$SHMMNT" ] || skip "$D and /dev/shm are on the same mount"
trap 'rc=$?; rm -f "$SHM".*; (exit $rc); teardown' EXIT
start_daemon

( while :; do
	cat "$D/a" > /dev/null 2>&1; stat "$D/a" "$SHM.x" > /dev/null 2>&1
	dd if=/dev/zero of="$SHM.x" bs=1000 count=1 conv=notrunc 2>/dev/null
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
	stat "$D" 2 , mkdir "$D" 2 , \
	cd "$D" , write rel 100000 3 | cat || fail "iorun failed"
kill $NOISE; wait $NOISE 2>/dev/null
JOB=$(json_get "$T/out.json" 'j["job_id"]')

# The store read directly (--db), then through ioacctd's socket (plain ioreport): the same log.
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/job.darshan" $JOB ||
	fail "ioreport --format darshan failed"
"$IOREPORT" --format darshan -o "$T/sock.darshan" $JOB ||
	fail "ioreport --format darshan (through ioacctd) failed"
cmp "$T/job.darshan" "$T/sock.darshan" ||
	fail "the log through ioacctd's socket differs from the one read from the store"
ok "the log through ioacctd's socket is the store's, byte for byte"
"$DXTDUMP" --posix "$T/job.darshan" > "$T/dump" || fail "our reader: dxtdump --posix failed"
# The same numbers as 36-files.sh's store rows (its comments say why each is what it is).
cat > "$T/expect.json" <<JSON
{"files": {
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
 "rest": {"$ROOTMNT": {"stats": 2, "opens": 0, "reads": 0, "writes": 0}},
 "sums": ["$ROOTMNT", "$SHMMNT"]}
JSON
python3 "$CHECK" "$T/dump" "$T/out.json" "$T/expect.json" || fail "the log's POSIX records differ"
ok "the log's POSIX records: every file's counters exact, none of the outside process, sums equal the mounts'"

"$IOREPORT" --db "$T/ioacct.db" --compare "$T/job.darshan" $JOB > "$T/self.txt" ||
	fail "ioreport --compare failed"
grep -Eq '^# files: ([0-9]+) on both sides \(\1 the same in every counter below\), 0 ours only, 0 Darshan.s only$' \
	"$T/self.txt" || { cat "$T/self.txt"; fail "the job against its own log: files differ"; }
grep -q "^$D/a	" "$T/self.txt" && fail "a file that is the same on both sides has rows"
awk '/^COUNTER / { t = 1; next } /^# / || /^$/ { t = 0 }
	t && ($2 != $3 || ($4 != "1.000000" && $4 != "-")) { print "differs: " $0; bad++ }
	END { exit bad > 0 }' "$T/self.txt" || { cat "$T/self.txt"; fail "a mount's ratio is not 1"; }
"$IOREPORT" --db "$T/ioacct.db" --compare "$T/job.darshan" --all-counters $JOB > "$T/all.txt" ||
	fail "ioreport --compare --all-counters failed"
grep -q "^$D/a	POSIX_READS	20	20	+0$" "$T/all.txt" || fail "--all-counters: no row of $D/a's reads"
ok "--compare with its own log: $(grep '^# files:' "$T/self.txt" | cut -c3-)"

# iorun's own Darshan log, through the socket: the records of the files it wrote and read.
"$IORUN" --format darshan -o "$T/iorun.darshan" -- "$IOWORK" \
	write "$D/c" 4096 5 , read "$D/c" 4096 5 , pwrite "$SHM.z" 100 2 | cat || fail "iorun -f darshan failed"
"$DXTDUMP" --posix "$T/iorun.darshan" > "$T/dump" || fail "dxtdump --posix (iorun) failed"
# iorun's jobs are numbered in order: its job is the last one.
JOB=$("$IOACCT" --db "$T/ioacct.db" -X -n -P -o JobID -S 1970-01-01 | sort -n | tail -1)
"$IOREPORT" --db "$T/ioacct.db" --format json -o "$T/iorun.json" $JOB ||
	fail "ioreport --format json (iorun's job) failed"
cat > "$T/expect.json" <<JSON
{"files": {
  "$D/c": {"opens": 2, "writes": 5, "bytes_written": 20480, "max_byte_written": 20479,
           "seq_writes": 4, "consec_writes": 4, "size_written": "0,0,5,0,0,0,0,0,0,0",
           "reads": 5, "bytes_read": 20480, "max_byte_read": 20479, "seq_reads": 4,
           "consec_reads": 4, "size_read": "0,0,5,0,0,0,0,0,0,0"},
  "$SHM.z": {"opens": 1, "writes": 2, "bytes_written": 200, "max_byte_written": 199,
             "seq_writes": 1, "consec_writes": 1, "size_written": "2,0,0,0,0,0,0,0,0,0"}},
 "other": {},
 "sums": ["$ROOTMNT", "$SHMMNT"]}
JSON
python3 "$CHECK" "$T/dump" "$T/iorun.json" "$T/expect.json" || fail "iorun's log: the POSIX records differ"
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/iorun-db.darshan" $JOB ||
	fail "ioreport --format darshan (iorun's job) failed"
"$DXTDUMP" --posix "$T/iorun-db.darshan" | tail -n +2 > "$T/dump-db" || fail "dxtdump --posix failed"
tail -n +2 "$T/dump" | cmp - "$T/dump-db" || fail "iorun's log's records differ from the store's"
ok "iorun --format darshan: every file's record exact, record for record the store's"

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
"$IOREPORT" --db "$T/ioacct.db" --format darshan -o "$T/many.darshan" $JOB ||
	fail "ioreport --format darshan (many) failed"
"$DXTDUMP" --posix "$T/many.darshan" > "$T/dump" || fail "dxtdump --posix (many) failed"
python3 "$(dirname "$0")/many_expect.py" --darshan "$T/ioacct.db" $JOB "$D/many" "$ROOTMNT" \
	> "$T/expect.json" || fail "many_expect.py failed"
python3 "$CHECK" "$T/dump" "$T/many.json" "$T/expect.json" || fail "max_files: the log's records differ"
"$IOREPORT" --db "$T/ioacct.db" --compare "$T/many.darshan" $JOB > "$T/many.txt" ||
	fail "ioreport --compare (many) failed"
grep -q '^# WARNING: the log is partial .* in: POSIX$' "$T/many.txt" ||
	{ cat "$T/many.txt"; fail "--compare does not say the log is partial"; }
ok "max_files: \"<ioacct: other files>\" exact, the log's POSIX module partial"
