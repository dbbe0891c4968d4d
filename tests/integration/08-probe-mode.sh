#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Backend selection: auto says what it picked and why the others were
# refused; a forced mode the kernel refuses is a clear error, not a crash;
# the chosen mode is in the daemon's status and stored with every job.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup

# forced MODE: the daemon's output until it runs in MODE or exits (120 s at most),
# then "exit=N". A loaded machine may take seconds to load the object.
forced() {
	local log=$T/forced-$1.log pid
	: > "$log"
	"$IOACCTD" -f -c "$CONF" --probe-mode "$1" > "$log" 2>&1 &
	pid=$!
	for _ in $(seq 1 1200); do
		grep -q "probe mode $1:" "$log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid"
	echo "exit=$?" >> "$log"
	cat "$log"
}

for mode in fentry kprobe syscall-tp; do
	out=$(forced $mode)
	if echo "$out" | grep -q "probe mode $mode is not available on this kernel: "; then
		echo "$out" | grep -q '^exit=1$' || fail "--probe-mode=$mode refused but exit status is not 1: $out"
		ok "--probe-mode=$mode: $(echo "$out" | grep -o 'not available.*' | head -1)"
	else
		# This kernel allows it: the daemon must run with it.
		echo "$out" | grep -q "probe mode $mode:" || fail "--probe-mode=$mode: neither refused nor running: $out"
		ok "--probe-mode=$mode: available on this kernel"
	fi
	rm -rf "$PIN"
done

start_daemon
line=$(grep 'probe mode ' "$T/ioacctd.log" | head -1)
echo "$line"
chosen=$(echo "$line" | sed -n 's/.*probe mode \([a-z-]*\): .*/\1/p')
[ -n "$chosen" ] || fail "auto did not say which backend it chose"
for b in fentry kprobe tracepoint; do
	echo "$line" | grep -q "$b: " || fail "auto did not say what became of $b"
done
"$IOPOKE" "$T/ioacctd.sock" status | grep -q "mode=$chosen " || fail "status does not show mode $chosen"
"$IORUN" --json -o "$T/out.json" -- "$IOWORK" write "$T/f" 4096 1 | cat
[ "$(json_get "$T/out.json" 'j["probe_mode"]')" = "$chosen" ] || fail "the job does not record mode $chosen"
ok "auto chose $chosen, said why, status and job record it"
