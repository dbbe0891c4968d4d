#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Linux AIO (libaio, issue 14): a job moving exact bytes through io_submit's
# PWRITE, PWRITEV, FSYNC, PREAD and PREADV iocbs, one at a time, in a batch
# of 4 reaped by one io_getevents, and 4 reaped by another thread
# (tests/integration/ioaio.c), has them counted as 8 writes of 8 x N bytes,
# 4 reads of 4 x N bytes and 1 fsync on each file's mount (tmpfs and the
# test directory's), with their size bins; nothing twice (io_submit and
# io_getevents are no reads), nothing for the iocbs of a pipe; an iocb
# io_submit refuses (EBADF) and one whose event says EINVAL are failed
# reads. While a process outside the job does the same on the same mounts
# all along. On the tracepoint backend and every other one this kernel allows.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOAIO=$abs_top_builddir/tests/integration/ioaio
[ -x "$IOAIO" ] || skip "tests/integration/ioaio not built (libaio-dev missing at configure time)"
setup

D=$T/disk
SHM=/dev/shm/ioacct-test-$$
mkdir -p "$D" "$SHM"
DMNT=$(mount_of "$D")
SHMMNT=$(mount_of "$SHM")
[ "$DMNT" != "$SHMMNT" ] || skip "$D and /dev/shm are on the same mount"
# The EINVAL of a misaligned O_DIRECT read needs a block file system: tmpfs takes it.
[ "$(stat -f -c %T "$D")" != tmpfs ] || skip "$D is on a tmpfs, whose O_DIRECT takes misaligned reads"
N=65536
"$IOAIO" $N "$SHM/probe" "$D/probe" || { rc=$?; [ $rc = 77 ] && skip "Linux AIO is not allowed here (io_setup failed), or $D's file system has no O_DIRECT"; fail "ioaio failed outside any job"; }

# Per mount: 8 writes of 8N bytes, 4 reads of 4N bytes, 1 fsync, 1 failed read; 2 opens, 1 create.
# The reads read what the writes just left in the page cache, and the pages the
# writes create are no misses (as for write(2)): nothing missed on the disk.
cat > "$T/expect.json" <<JSON
{
  "$SHMMNT": {"reads": 5, "read_bytes": $((4 * N)), "read_sizes": {"10K_100K": 4},
              "writes": 8, "write_bytes": $((8 * N)), "write_sizes": {"10K_100K": 8},
              "fsyncs": 1, "opens": 2, "creates": 1, "errors": 1, "op_errors": {"reads": 1}},
  "$DMNT": {"reads": 5, "read_bytes": $((4 * N)), "read_sizes": {"10K_100K": 4},
            "writes": 8, "write_bytes": $((8 * N)), "write_sizes": {"10K_100K": 8},
            "fsyncs": 1, "opens": 2, "creates": 1, "errors": 1, "op_errors": {"reads": 1},
            "cache_miss_bytes": 0}
}
JSON

ran=0
for mode in tracepoint fentry kprobe syscall-tp; do
	if ! start_mode $mode; then
		echo "  $mode: $(grep -o 'not available on this kernel.*' "$T/ioacctd.log" | head -1)"
		continue
	fi
	rm -f "$SHM/job" "$D/job"
	# The same iocbs from outside the job, on the same mounts, all along.
	( while :; do "$IOAIO" $N "$SHM/outside" "$D/outside" || break; done ) &
	NOISE=$!
	"$IORUN" --json -o "$T/out-$mode.json" -- "$IOAIO" $N "$SHM/job" "$D/job" > /dev/null ||
		fail "$mode: iorun ioaio failed"
	kill $NOISE; wait $NOISE 2>/dev/null
	[ "$(json_get "$T/out-$mode.json" 'j["probe_mode"]')" = $mode ] || fail "$mode: not the job's probe mode"
	python3 "$(dirname "$0")/check_mounts.py" "$T/out-$mode.json" "$T/expect.json" ||
		{ cat "$T/out-$mode.json"; fail "$mode: Linux AIO's reads, writes and fsyncs are not exact"; }
	ok "$mode: AIO: 8 writes of exactly $((8 * N)) bytes, 4 reads of $((4 * N)), 1 fsync, 1 failed read on $SHMMNT and on $DMNT, nothing twice, nothing from outside"
	ran=$((ran + 1))
done
[ $ran -gt 0 ] || fail "no backend could run"

# The page-cache view of an AIO read (tracepoint backend, the last daemon
# stopped): the whole of a cold 1 MiB file in one PREAD iocb misses exactly
# its pages, none read ahead. Something on this machine may read a page back
# in between the eviction and the job: up to 3 attempts, each exact or not.
start_mode tracepoint || fail "the tracepoint backend does not start"
if "$IOPOKE" "$T/ioacctd.sock" status | grep -q 'views: [a-z,-]*cache'; then
	SIZE=1048576
	head -c $SIZE /dev/urandom > "$D/cold"
	cold_read "$D/cold" "[(m['reads'], m['read_bytes'], m['cache_miss_bytes'], m['readahead_bytes']) for m in j['mounts'] if m['mount'] == '$DMNT'][0]" \
		"(1, $SIZE, $SIZE, 0)" "$IOAIO" --read "$D/cold"
	ok "cold AIO read: $SIZE bytes missed of $SIZE read, none read ahead (attempt $TRY)"
else
	echo "  the cache view is off here: the cold AIO read is not checked"
fi
exit 0
