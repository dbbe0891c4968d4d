# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the benchmark scripts (overhead, sidebyside): a private ioacctd
# with every path in a temporary directory, and one holding job so that the
# probes are live for everyone. Sourced; expects $B (the build directory) and
# a die() function.
#
#   bench_setup NAME      T (temp dir), PIN, CGP and $T/conf
#   daemon_on [MODE [idle]] ioacctd in probe mode MODE (default auto) + the holding job
#                         (idle: without it, hold_on starts it); returns 1 (daemon
#                         stopped) when the kernel refuses MODE
#   hold_on               the holding job, after daemon_on MODE idle
#   daemon_off
#   bench_cleanup         stops the daemon, removes pins, cgroups and $T

bench_setup() {
	T=$(mktemp -d "/var/tmp/ioacct-$1.XXXXXX")
	PIN=/sys/fs/bpf/ioacct-$1-$$
	CGP=ioacct-$1-$$
	cat > "$T/conf" <<CONF
socket = $T/sock
db = $T/db
pidfile = $T/pid
bpf_pin_dir = $PIN
cgroup_parent = $CGP
CONF
	DPID='' HOLD=''
}

daemon_on() {
	local mode=${1:-auto}
	"$B/tools/ioacctd" -f -c "$T/conf" --probe-mode "$mode" >> "$T/ioacctd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 200); do
		"$B/tests/integration/iopoke" "$T/sock" status 2>/dev/null | grep -q '^status=0' && break
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID" 2>/dev/null || true
			DPID=''
			[ "$mode" = auto ] && { tail "$T/ioacctd.log" >&2; die "ioacctd exited at start"; }
			return 1
		fi
		sleep 0.05
	done
	[ "${2:-}" = idle ] || hold_on
}

hold_on() {
	# One watched job, so that the probes are live for everyone.
	"$B/tools/iorun" -c "$T/conf" -o /dev/null -- sleep 1000000 &
	HOLD=$!
	for _ in $(seq 100); do
		"$B/tests/integration/iopoke" "$T/sock" status | grep -q 'jobs=1 ' && return 0
		sleep 0.05
	done
	die "the holding job did not register"
}

daemon_off() {
	if [ -n "$HOLD" ]; then
		pkill -P "$HOLD" sleep 2>/dev/null || true
		wait "$HOLD" 2>/dev/null || true
		HOLD=''
	fi
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
		DPID=''
	fi
	return 0
}

bench_cleanup() {
	daemon_off
	rm -rf "$T" "$PIN"
	for d in /sys/fs/cgroup/unified/$CGP /sys/fs/cgroup/$CGP /sys/fs/cgroup/*/$CGP; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}
