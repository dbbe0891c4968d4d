#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# io_uring (issue 14): a job moving exact bytes through io_uring's WRITE,
# WRITEV, WRITE_FIXED, FSYNC, READ, READV and READ_FIXED (tests/integration/
# iouring.c, one request at a time) has them counted as 3 writes and 3 reads
# of exactly 3 x N bytes, 1 fsync and 7 io_uring requests on the file's mount,
# with their size bins, and nothing twice (io_uring_enter is no read); while a
# process outside the job does the same on the same mount all along. Where
# the kernel lacks the tracepoints the view is off, ioacctd says so and the
# test skips.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOURING=$abs_top_builddir/tests/integration/iouring
[ -x "$IOURING" ] || skip "tests/integration/iouring not built (liburing-dev missing at configure time)"
setup
start_daemon

"$IOPOKE" "$T/ioacctd.sock" status > "$T/status" || fail "status failed"
grep -q 'views: [a-z,]*uring' "$T/status" ||
	{ cat "$T/status"; skip "this kernel has no io_uring_submit_req (or _sqe) and io_uring_complete tracepoints in a form ioacct knows: the io_uring view is off"; }

SHM=/dev/shm/ioacct-test-$$
mkdir -p "$SHM"
SHMMNT=$(mount_of "$SHM")
N=65536
cat > "$T/expect.json" <<JSON
{
  "_others_allowed": true,
  "$SHMMNT": {"reads": 3, "read_bytes": $((3 * N)), "read_sizes": {"10K_100K": 3},
              "writes": 3, "write_bytes": $((3 * N)), "write_sizes": {"10K_100K": 3},
              "fsyncs": 1, "opens": 1, "creates": 1}
}
JSON
"$IOURING" "$SHM/probe" 4096 > /dev/null 2>&1 || { rc=$?; [ $rc = 77 ] && skip "io_uring is not allowed here (io_uring_queue_init failed)"; fail "iouring failed outside any job"; }

# The same requests from outside the job, on the same mount, all along.
( while :; do "$IOURING" "$SHM/outside" $N || break; done ) &
NOISE=$!
"$IORUN" --json -o "$T/out.json" -- "$IOURING" "$SHM/job" $N > /dev/null || fail "iorun iouring failed"
kill $NOISE; wait $NOISE 2>/dev/null
python3 "$(dirname "$0")/check_mounts.py" "$T/out.json" "$T/expect.json" ||
	{ cat "$T/out.json"; fail "io_uring's reads, writes and fsyncs are not exact"; }
got=$(json_get "$T/out.json" '[m.get("io_uring_ops", 0) for m in j["mounts"] if m["mount"] == "'"$SHMMNT"'"][0]')
[ "$got" = 7 ] || fail "io_uring_ops on $SHMMNT: $got, not 7"
views=$(json_get "$T/out.json" 'j.get("views", "")')
case ",$views," in *,uring,*) ;; *) fail "the job's views ($views) do not say uring" ;; esac
ok "io_uring: 3 writes and 3 reads of exactly $((3 * N)) bytes, 1 fsync, 7 requests on $SHMMNT, nothing twice, nothing from outside"
exit 0
