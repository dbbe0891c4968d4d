#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# io_uring (issue 14): a job moving exact bytes through io_uring's WRITE,
# WRITEV, WRITE_FIXED, FSYNC, READ, READV and READ_FIXED, and WRITEV_FIXED
# and READV_FIXED where the kernel has them (tests/integration/iouring.c, one
# request at a time) has them counted as 3 (4) writes and 3 (4) reads of
# exactly 3 (4) x N bytes, 1 fsync and 7 (9) io_uring requests on the file's
# mount, with their size bins, and nothing twice (io_uring_enter is no read); while a
# process outside the job does the same on the same mount all along.
# Then io_uring's metadata requests (iouring --meta: OPENAT with O_CREAT,
# OPENAT2, STATX, MKDIRAT, RENAMEAT, UNLINKAT with and without AT_REMOVEDIR,
# CLOSE, an open into a direct descriptor, an open of a missing file) on two
# mounts, /dev/shm by absolute paths and a tmpfs of the test's by paths
# relative to a directory fd and to the cwd: the same opens, creates, stats,
# mkdirs, renames, unlinks, rmdirs and errors (not found) as their system
# calls, on the right mount, exactly, the outside process again doing the
# same all along. Where the kernel lacks the tracepoints the view is off,
# ioacctd says so and the test skips.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOURING=$abs_top_builddir/tests/integration/iouring
[ -x "$IOURING" ] || skip "tests/integration/iouring not built (liburing-dev missing at configure time)"
setup
start_daemon

"$IOPOKE" "$T/ioacctd.sock" status > "$T/status" || fail "status failed"
grep -q 'views: [a-z,-]*uring' "$T/status" ||
	{ cat "$T/status"; skip "this kernel has no io_uring_submit_req (or _sqe) and io_uring_complete tracepoints in a form ioacct knows: the io_uring view is off"; }

SHM=/dev/shm/ioacct-test-$$
mkdir -p "$SHM"
SHMMNT=$(mount_of "$SHM")
N=65536
"$IOURING" "$SHM/probe" 4096 > "$T/probe.out" 2>&1 || { rc=$?; [ $rc = 77 ] && skip "io_uring is not allowed here (io_uring_queue_init failed)"; fail "iouring failed outside any job"; }
# K reads and K writes of N bytes: 4 where the kernel has READV_FIXED and WRITEV_FIXED.
K=3 REQS=7
grep -qx vfixed "$T/probe.out" && K=4 REQS=9
cat > "$T/expect.json" <<JSON
{
  "_others_allowed": true,
  "$SHMMNT": {"reads": $K, "read_bytes": $((K * N)), "read_sizes": {"10K_100K": $K},
              "writes": $K, "write_bytes": $((K * N)), "write_sizes": {"10K_100K": $K},
              "fsyncs": 1, "opens": 1, "creates": 1, "io_uring_ops": $REQS}
}
JSON

# The same requests from outside the job, on the same mount, all along.
( while :; do "$IOURING" "$SHM/outside" $N > /dev/null || break; done ) &
NOISE=$!
"$IORUN" --json -o "$T/out.json" -- "$IOURING" "$SHM/job" $N > "$T/job.out" || fail "iorun iouring failed"
kill $NOISE; wait $NOISE 2>/dev/null
[ "$(cat "$T/job.out")" = "$(cat "$T/probe.out")" ] || fail "the job's iouring did not do what the probe did"
python3 "$(dirname "$0")/check_mounts.py" "$T/out.json" "$T/expect.json" ||
	{ cat "$T/out.json"; fail "io_uring's reads, writes and fsyncs are not exact"; }
views=$(json_get "$T/out.json" 'j.get("views", "")')
case ",$views," in *,uring,*) ;; *) fail "the job's views ($views) do not say uring" ;; esac
ok "io_uring: $K writes and $K reads of exactly $((K * N)) bytes ($(grep -qx vfixed "$T/probe.out" && echo "READV_FIXED and WRITEV_FIXED included" || echo "no READV_FIXED, WRITEV_FIXED in this kernel")), 1 fsync, $REQS requests on $SHMMNT, nothing twice, nothing from outside"

# The metadata requests: /dev/shm by absolute paths, a tmpfs of our own
# (another mount than /dev/shm and than / where the loader opens its
# libraries) by relative ones.
REL=$T/rel
mkdir -p "$REL" "$SHM/meta-job" "$SHM/meta-out"
mount -t tmpfs -o size=1m ioacct-test-uring "$REL" || skip "cannot mount a tmpfs on $REL"
trap 'rc=$?; umount "$REL" 2>/dev/null; (exit $rc); teardown' EXIT
mkdir -p "$REL/job" "$REL/out"
[ "$(mount_of "$REL/job")" = "$REL" ] || fail "$REL/job is not on the tmpfs mounted on $REL"
cat > "$T/expect-meta.json" <<JSON
{
  "_others_allowed": true,
  "$SHMMNT": {"opens": 2, "creates": 1, "stats": 1, "mkdirs": 1, "renames": 1, "unlinks": 1,
              "rmdirs": 1, "errors": 1, "op_errors": {"opens": 1},
              "error_classes": {"notfound": 1, "access": 0, "space": 0, "io": 0, "other": 0},
              "io_uring_ops": 8},
  "$REL": {"opens": 4, "creates": 1, "stats": 1, "mkdirs": 1, "renames": 1, "unlinks": 1,
           "rmdirs": 1, "errors": 1, "op_errors": {"opens": 1},
           "error_classes": {"notfound": 1, "access": 0, "space": 0, "io": 0, "other": 0},
           "io_uring_ops": 11}
}
JSON
( while :; do "$IOURING" --meta "$SHM/meta-out" "$REL/out" || break; done ) &
NOISE=$!
"$IORUN" --json -o "$T/meta.json" -- "$IOURING" --meta "$SHM/meta-job" "$REL/job" > /dev/null ||
	fail "iorun iouring --meta failed"
kill $NOISE; wait $NOISE 2>/dev/null
python3 "$(dirname "$0")/check_mounts.py" "$T/meta.json" "$T/expect-meta.json" ||
	{ cat "$T/meta.json"; fail "io_uring's metadata requests are not exact"; }
ok "io_uring metadata: $SHMMNT (absolute paths) and $REL (relative to a dfd, to the cwd): opens, creates, stats, mkdirs, renames, unlinks, rmdirs, a not-found open and every request exact, nothing from outside"

# The page-cache view of an io_uring read: a cold 1 MiB file read by one READ
# request (completed by an io-wq worker, which has no read call of its own)
# misses exactly its pages, none read ahead, on a file system with a page
# cache (the test directory's; not a tmpfs). Something on this machine may
# read a page back in between the eviction and the job: up to 3 attempts.
D=$T/disk
mkdir -p "$D"
DMNT=$(mount_of "$D")
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	echo "  $D is on a tmpfs: the cold io_uring read is not checked"
elif ! grep -q 'views: [a-z,-]*cache' "$T/status"; then
	echo "  the cache view is off here: the cold io_uring read is not checked"
else
	SIZE=1048576
	head -c $SIZE /dev/urandom > "$D/cold"
	# iouring is dynamic: the loader's reads of its libraries are on / too.
	cold_read "$D/cold" "[(m['read_bytes'] >= $SIZE, m['cache_miss_bytes'], m['readahead_bytes']) for m in j['mounts'] if m['mount'] == '$DMNT'][0]" \
		"(True, $SIZE, 0)" "$IOURING" --read "$D/cold"
	ok "cold io_uring read: $SIZE bytes missed of $SIZE read, none read ahead (attempt $TRY)"
	# Buffered io_uring writes to a new file create its pages: no miss, nothing
	# read ahead (issue 29: 64 MiB of both for fio's io_uring writes before),
	# and the reads that follow find them in the cache. The loader's reads of
	# iouring's libraries are on / too: cached, as iouring just ran.
	for TRY in 1 2 3; do
		rm -f "$D/new"
		"$IORUN" --json -o "$T/new.json" -- "$IOURING" "$D/new" $SIZE > "$T/new.out" 2>&1 ||
			{ cat "$T/new.out"; fail "iouring on a new file failed"; }
		# iouring's "vfixed" line goes to $T too: >= 3 MiB written.
		got=$(json_get "$T/new.json" "[(m['write_bytes'] >= 3 * $SIZE, m['cache_miss_bytes'], m['readahead_bytes']) for m in j['mounts'] if m['mount'] == '$DMNT'][0]")
		[ "$got" = "(True, 0, 0)" ] && break
		echo "  attempt $TRY: (>= 3 MiB written, cache_miss_bytes, readahead_bytes) = $got"
		[ $TRY = 3 ] && fail "io_uring writes to a new file counted as misses or read ahead: $got"
	done
	ok "io_uring writes to a new file: none of their pages missed or read ahead"
fi
exit 0
