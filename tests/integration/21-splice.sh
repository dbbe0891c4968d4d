#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sendfile, splice and copy_file_range (issue 14): the bytes each call moves
# are a read on the source's mount and a write on the destination's, to the
# byte and to the call, with their size bins; a pipe or socket end counts
# nothing; a failed call is a failed read and a failed write. The same on
# every backend the kernel allows, while a process outside the job does the
# same on the same mounts.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup

D=$T/root-fs
SHM=/dev/shm/ioacct-test-$$
mkdir -p "$D" "$SHM"
ROOTMNT=$(mount_of "$D")
SHMMNT=$(mount_of "$SHM")
[ "$ROOTMNT" != "$SHMMNT" ] || skip "$D and /dev/shm are on the same mount"
# Two mounts of one tmpfs: copy_file_range copies between mounts of one file
# system only (across file systems it fails with EXDEV, tested below).
TA=$T/ta
TB=$T/tb
mkdir -p "$TA" "$TB"
MOUNTED=
trap 'rc=$?; for m in $MOUNTED; do umount -l "$m" 2>/dev/null; done; (exit $rc); teardown' EXIT
mount -t tmpfs -o size=16m ioacct-test-splice "$TA" || skip "cannot mount a tmpfs on $TA"
MOUNTED=$TA
mkdir "$TA/sub"
mount --bind "$TA/sub" "$TB" || skip "cannot bind-mount $TA/sub on $TB"
MOUNTED="$TB $TA"

# The sources, written before any job.
head -c 1048576 /dev/zero > "$D/src"
head -c 65536 /dev/zero > "$SHM/src"
head -c 65536 /dev/zero > "$TB/src"

# ROOT: 16 sendfile + 8 splice reads of 64 KiB, 3 failed copies; SHM: their
# writes, 10 sendfile reads of 4 KiB into a socket (which counts nothing);
# TB -> TA: 5 copies of 4 KiB. Opens: one per file, creates: each destination.
cat > "$T/expect.json" <<JSON
{
  "$ROOTMNT": {"reads": 27, "read_bytes": 1572864, "read_sizes": {"10K_100K": 24},
               "opens": 3, "errors": 3, "op_errors": {"reads": 3}},
  "$SHMMNT": {"writes": 27, "write_bytes": 1572864, "write_sizes": {"10K_100K": 24},
              "reads": 10, "read_bytes": 40960, "read_sizes": {"1K_10K": 10},
              "opens": 4, "creates": 3, "errors": 3, "op_errors": {"writes": 3}},
  "$TB": {"reads": 5, "read_bytes": 20480, "read_sizes": {"1K_10K": 5}, "opens": 1},
  "$TA": {"writes": 5, "write_bytes": 20480, "write_sizes": {"1K_10K": 5}, "opens": 1,
          "creates": 1}
}
JSON

ran=0
for mode in tracepoint fentry kprobe syscall-tp; do
	if ! start_mode $mode; then
		echo "  $mode: $(grep -o 'not available on this kernel.*' "$T/ioacctd.log" | head -1)"
		continue
	fi
	rm -f "$SHM/sf" "$SHM/sp" "$SHM/x" "$TA/dst" "$SHM"/out-*
	# The same calls from outside the job, on the same mounts, all along.
	( while :; do
		"$IOWORK" sendfile "$D/src" "$SHM/out-sf" 65536 4 , splice "$D/src" "$SHM/out-sp" 65536 4 , \
			copy "$TB/src" "$TA/out-cp" 4096 4 , sendfile "$SHM/src" socket 4096 4
	done ) &
	NOISE=$!
	"$IORUN" --json -o "$T/out-$mode.json" -- "$IOWORK" \
		sendfile "$D/src" "$SHM/sf" 65536 16 , \
		sendfile "$SHM/src" socket 4096 10 , \
		splice "$D/src" "$SHM/sp" 65536 8 , \
		copy "$TB/src" "$TA/dst" 4096 5 , \
		xcopy "$D/src" "$SHM/x" 4096 3 | cat || fail "$mode: iorun failed"
	kill $NOISE; wait $NOISE 2>/dev/null
	[ "$(json_get "$T/out-$mode.json" 'j["probe_mode"]')" = $mode ] || fail "$mode: not the job's probe mode"
	python3 "$(dirname "$0")/check_mounts.py" "$T/out-$mode.json" "$T/expect.json" ||
		{ cat "$T/out-$mode.json"; fail "$mode: counters differ"; }
	ok "$mode: sendfile, splice, copy_file_range exact on each end's mount"
	ran=$((ran + 1))
done
[ $ran -gt 0 ] || fail "no backend could run"
