#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exactness: a known workload in a watched cgroup (v2, then v1) is counted to
# the byte and to the call, per mount and per access-size bin, while a process
# outside the cgroup does I/O to the same file systems at the same time.
# Then the same with the object that reads kernel memory by helper calls
# (kernels before 6.2), and with the per-syscall tracepoint backend forced:
# every object and backend counts the same.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup

D=$T/root-fs
mkdir -p "$D/files" "$D/dirs"
SHM=/dev/shm/ioacct-test-$$
ROOTMNT=$(mount_of "$D")
SHMMNT=$(mount_of /dev/shm)
[ "$ROOTMNT" != "$SHMMNT" ] || skip "$D and /dev/shm are on the same mount"

cat > "$T/expect.json" <<JSON
{
  "$ROOTMNT": {"write_bytes": 104857600, "writes": 100, "read_bytes": 52428800, "reads": 50,
               "opens": 107, "creates": 101, "mkdirs": 10, "unlinks": 100, "rmdirs": 10,
               "errors": 5, "op_errors": {"opens": 5},
               "write_sizes": {"100K_1M": 100}, "read_sizes": {"100K_1M": 50}},
  "$SHMMNT": {"write_bytes": 40960000, "writes": 10000, "opens": 6, "creates": 4,
              "unlinks": 3, "errors": 2, "op_errors": {"opens": 2},
              "write_sizes": {"1K_10K": 10000}}
}
JSON

exact_runs() { # PROBE_MODE
for mode in v2 v1; do
	rm -rf "$D/big" "$SHM" "$D/outside" "$SHM.d"
	mkdir "$SHM.d"
	# Noise from outside the cgroup, on both mounts, for the whole run.
	( while :; do
		dd if=/dev/zero of="$D/outside" bs=64k count=16 2>/dev/null
		dd if=/dev/zero of="$SHM.outside" bs=4k count=16 2>/dev/null
		cat "$D/outside" > /dev/null; ls "$D" > /dev/null
	done ) &
	NOISE=$!
	"$IORUN" --cgroup-mode $mode --json -o "$T/out-$mode.json" -- "$IOWORK" \
		write "$D/big" 1048576 100 , \
		pwrite "$SHM" 4096 10000 , \
		read "$D/big" 1048576 50 , \
		create "$D/files" 100 , \
		mkdir "$D/dirs" 10 , \
		unlink "$D/files" 100 , \
		rmdir "$D/dirs" 10 , \
		missing "$D" 5 , \
		cd "$SHM.d" , create . 3 , unlink . 3 , missing . 2 | cat || fail "iorun ($mode) failed"
	kill $NOISE; wait $NOISE 2>/dev/null
	grep -q "\"probe_mode\": \"$1\"" "$T/out-$mode.json" || fail "$mode: probe mode $1 not recorded"
	python3 "$(dirname "$0")/check_mounts.py" "$T/out-$mode.json" "$T/expect.json" ||
		{ cat "$T/out-$mode.json"; fail "$1, cgroup $mode: counters differ"; }
	ok "$1, cgroup $mode: exact"
done
}

# The daemon reads kernel memory by plain loads where the kernel has
# bpf_rdonly_cast (6.2+), else by bpf_probe_read_kernel (its second object);
# IOACCT_BPF_COMPAT=1 makes it take the second here, so both count alike.
if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "FUNC 'bpf_rdonly_cast'"; then
	reads=direct
else
	reads=probe-read
fi
views() { "$IOPOKE" "$T/ioacctd.sock" status | sed -n 's/.* views=\([a-z,-]*\).*/\1/p' | head -n 1; }
# The kernel matrix checks its summaries slimmed (tests/vm/slim.awk): check.awk's
# verdict and every line it prints must be those of the whole summary, when it
# passes and when it finds a difference (busybox awk, as in the VM, when here).
slim_equiv() { # SUMMARY
	local awk=awk vm=$(dirname "$0")/../vm e keep
	busybox awk 'BEGIN { exit 0 }' 2>/dev/null && awk="busybox awk"
	python3 "$(dirname "$0")/slim_equiv.py" "$1" "$T/right.expect" "$T/wrong.expect" ||
		fail "slim_equiv.py failed on $1"
	for e in right wrong; do
		keep=$(sed -n 's/^file:[^ ]* //p' "$T/$e.expect" | tr ' ' '\n' | sed 's/[<>]*=.*//' | tr '\n' '|')
		$awk -v keep="$keep" -f "$vm/slim.awk" "$1" > "$T/slim.json" || fail "slim.awk failed"
		[ "$(wc -c < "$T/slim.json")" -lt "$(wc -c < "$1")" ] || fail "slim.awk left the summary whole"
		$awk -f "$vm/check.awk" "$1" "$T/$e.expect" > "$T/$e.whole" 2>&1
		echo "exit $?" >> "$T/$e.whole"
		$awk -f "$vm/check.awk" "$T/slim.json" "$T/$e.expect" > "$T/$e.slim" 2>&1
		echo "exit $?" >> "$T/$e.slim"
		cmp -s "$T/$e.whole" "$T/$e.slim" ||
			fail "check.awk ($e expectations): the slimmed summary's verdict differs: $(diff "$T/$e.whole" "$T/$e.slim" | head -n 6)"
	done
	grep -q '^OK ' "$T/right.whole" || fail "check.awk did not pass the right expectations: $(head -n 4 "$T/right.whole")"
	[ "$(grep -c '^MISMATCH' "$T/wrong.whole")" = 2 ] ||
		fail "check.awk did not find the two wrong counts: $(head -n 4 "$T/wrong.whole")"
	ok "the kernel matrix's slimmed summary: check.awk says the same ($awk)"
}

start_daemon
"$IOPOKE" "$T/ioacctd.sock" status | grep -q "kernel reads: $reads;" ||
	fail "status does not say kernel reads: $reads"
views_direct=$(views)
exact_runs tracepoint
slim_equiv "$T/out-v2.json"
stop_daemon
IOACCT_BPF_COMPAT=1 start_daemon
"$IOPOKE" "$T/ioacctd.sock" status | grep -q "kernel reads: probe-read;" ||
	fail "IOACCT_BPF_COMPAT=1: status does not say kernel reads: probe-read"
# The same views from the second object: a view its verifier refuses starts
# the daemon without any (a warning), which only 6.1's kernel matrix saw.
[ "$(views)" = "$views_direct" ] ||
	fail "IOACCT_BPF_COMPAT=1: views '$(views)', not '$views_direct' as with plain loads (the daemon's log says which program was refused)"
ok "IOACCT_BPF_COMPAT=1: the same views as with plain loads: $views_direct"
exact_runs tracepoint
stop_daemon
start_daemon --probe-mode syscall-tp
exact_runs syscall-tp

# A dynamically linked program through a shell: every call is put on a real
# mount (relative paths, AT_FDCWD, AT_EMPTY_PATH, paths in pages not yet
# faulted in at sys_enter).
"$IORUN" --json -o "$T/sh.json" -- sh -c "cd $D && ls . > /dev/null && cat /etc/hostname > /dev/null" ||
	fail "iorun sh failed"
unresolved=$(json_get "$T/sh.json" '[m["mount"] for m in j["mounts"] if m["mount"].startswith("mnt:")]')
[ "$unresolved" = "[]" ] || { cat "$T/sh.json"; fail "calls on unresolved mounts: $unresolved"; }
ok "shell run: every call on a known mount"
