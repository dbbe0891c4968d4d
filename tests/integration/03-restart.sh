#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kill -9 of the daemon while a job writes loses nothing: the probes stay
# pinned and keep counting, the registry is in the store, a new daemon picks
# both up and the job's totals are exact.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup
start_daemon

F=$T/restart.dat
mkfifo "$T/ctl"
# The workload's output goes through a pipe: writes to a file would count.
( "$IORUN" --json -o "$T/out.json" -- "$IOWORK" \
	tick "$F" 1048576 10 , wait , tick "$F" 1048576 20 , wait , write "$F.3" 1048576 5 \
	< "$T/ctl" 2> "$T/iorun.err" | cat > "$T/ticks"; echo "${PIPESTATUS[0]}" > "$T/iorun.rc" ) &
IORUN_PID=$!
exec 3> "$T/ctl"
wait_lines() {
	for _ in $(seq 1 2400); do
		[ "$(wc -l < "$T/ticks")" -ge "$1" ] && return 0
		sleep 0.05
	done
	fail "the workload did not get to $1 writes"
}
wait_lines 10
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
ok "daemon killed after 10 MiB"
printf x >&3           # 20 MiB while no daemon runs
wait_lines 30
start_daemon
grep -q "restored" "$T/ioacctd.log" || fail "the new daemon did not restore the job"
printf x >&3           # 5 MiB with the new daemon
exec 3>&-
wait "$IORUN_PID"
[ "$(cat "$T/iorun.rc")" = 0 ] || { cat "$T/iorun.err"; fail "iorun failed"; }
got=$(json_get "$T/out.json" 'sum(m["write_bytes"] for m in j["mounts"])')
[ "$got" = 36700160 ] || { cat "$T/out.json"; fail "wrote 36700160 bytes, the store says $got"; }
writes=$(json_get "$T/out.json" 'sum(m["writes"] for m in j["mounts"])')
[ "$writes" = 35 ] || fail "35 writes made, the store says $writes"
ok "35 MiB exact across kill -9 and restart"
