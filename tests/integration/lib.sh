# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the integration tests: each test starts its own ioacctd with every
# path (socket, store, pidfile, BPF pins) in a private temporary directory.
# Sourced; expects $abs_top_builddir (set by the test harness, or guessed).

set -u
: "${abs_top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
IOACCTD=$abs_top_builddir/tools/ioacctd
IORUN=$abs_top_builddir/tools/iorun
IOWORK=$abs_top_builddir/tests/integration/iowork
IOPOKE=$abs_top_builddir/tests/integration/iopoke

# IOACCT_UNIT_EXEC=UNIT: start_daemon and start_mode run ioacctd in the
# sandbox of the systemd unit UNIT, as systemd would start it (unitexec.py;
# 61-privs.sh does, and any test can be run so).
UNITEXEC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/unitexec.py
DAEMON_PREFIX=()
if [ -n "${IOACCT_UNIT_EXEC:-}" ]; then
	DAEMON_PREFIX=(/usr/bin/python3 "$UNITEXEC" "$IOACCT_UNIT_EXEC" --)
fi

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; dump_log; exit 1; }
ok() { echo "ok: $*"; }

# make distcheck (IOACCT_DISTCHECK=1) runs one of these, the exactness test:
# the tarball's daemon loads its probes and counts exactly. The others ran in
# make check on the same sources; that the tarball holds every file they need
# is checked file by file by tests/pkg.
if [ "${IOACCT_DISTCHECK:-}" = 1 ] && [ "$(basename "$0")" != 01-exact.sh ]; then
	skip "IOACCT_DISTCHECK=1 (make distcheck): the integration tests run in make check"
fi

dump_log() {
	if [ -n "${T:-}" ] && [ -f "$T/ioacctd.log" ]; then
		echo "---- ioacctd log (last 30 lines) ----"
		tail -n 30 "$T/ioacctd.log"
		# IOACCT_TEST_SAVE=DIR keeps the whole log of a failed test there.
		if [ -n "${IOACCT_TEST_SAVE:-}" ] && mkdir -p "$IOACCT_TEST_SAVE"; then
			cp "$T/ioacctd.log" "$IOACCT_TEST_SAVE/$(basename "$0" .sh).ioacctd.log" &&
				echo "(the whole log: $IOACCT_TEST_SAVE/$(basename "$0" .sh).ioacctd.log)"
		fi
	fi
}

# Skips unless this machine can run the real thing.
require_root_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root (loads BPF programs, creates cgroups)"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
	[ -x "$IOACCTD" ] || fail "$IOACCTD not built"
	command -v python3 >/dev/null || skip "python3 is needed to check the results"
}

# ioacctd's account, made when missing (daemon_user, IOACCT_USER).
# shellcheck source=../../scripts/lib/daemon-user.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/daemon-user.sh"

setup() {
	T=$(mktemp -d /var/tmp/ioacct-test.XXXXXX)
	# The daemon's state directory, its account's as the packages make /var/lib/ioacct.
	if [ "$(id -u)" = 0 ]; then
		daemon_user || fail "cannot create the user $IOACCT_USER"
		chown "$IOACCT_USER:" "$T"
		# Searchable (not readable) by others, as a home directory: the report
		# files ioacctd writes as a job's user (root's too: root without
		# capabilities) go to directories under it.
		chmod 711 "$T"
	fi
	PIN=/sys/fs/bpf/ioacct-test-$$
	CONF=$T/ioacct.conf
	cat > "$CONF" <<CONF
socket = $T/ioacctd.sock
db = $T/ioacct.db
pidfile = $T/ioacctd.pid
bpf_pin_dir = $PIN
cgroup_parent = ioacct-test-$$
drain_interval = 0.2
${EXTRA_CONF:-}
CONF
	export IOACCT_CONF=$CONF
	trap teardown EXIT
}

start_daemon() {
	# Without iopoke every wait below would fail, and read as a daemon that never answered.
	[ -x "$IOPOKE" ] || fail "$IOPOKE not built (make -C tests/integration iopoke, or make check)"
	"${DAEMON_PREFIX[@]}" "$IOACCTD" -f -c "$CONF" -v "$@" >> "$T/ioacctd.log" 2>&1 &
	DAEMON_PID=$!
	# Ready means answering: a socket file may be a stale one left by kill -9.
	for _ in $(seq 1 2400); do
		"$IOPOKE" "$T/ioacctd.sock" status 2>/dev/null | grep -q '^status=0' && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID"; fail "ioacctd exited at start"; }
		sleep 0.05
	done
	fail "ioacctd did not answer in 120 s"
}

# mpi_uprobes_here: after start_daemon, whether the daemon can probe MPI
# libraries loaded after its start. Not on a kernel without uprobe_multi
# links (before 6.6), whose perf uprobes need CAP_SYS_ADMIN, which the daemon
# gives up (ioacctd(8), PRIVILEGES; it says so at start).
mpi_uprobes_here() { ! grep -q 'MPI-IO: this kernel has no uprobe_multi links' "$T/ioacctd.log"; }
require_mpi_uprobes() {
	mpi_uprobes_here || skip "this kernel ($(uname -r)) has no uprobe_multi links (6.6): ioacctd, running as $IOACCT_USER, probes no MPI library loaded after its start"
}

# wait_parsed_ahead: after start_daemon, until ioacctd has parsed the host's MPI
# and HDF5 libraries (at start, ahead), which it attaches at each step's
# registration from then on: a job started before would race its library's open.
wait_parsed_ahead() {
	for _ in $(seq 1 2400); do
		grep -q "MPI-IO: every library parsed ahead is parsed" "$T/ioacctd.log" && return 0
		sleep 0.05
	done
	fail "the libraries parsed ahead were not in 120 s: $(grep "MPI-IO" "$T/ioacctd.log" | tail -5)"
}

# wait_libraries_detached: until every library attached so far is detached
# (mpi_detach_after after its last step): the next step's registration attaches
# the libraries parsed ahead again.
wait_libraries_detached() {
	for _ in $(seq 1 1200); do
		[ "$(grep -c ": attached to " "$T/ioacctd.log")" = \
			"$(grep -c "MPI-IO: detached from the library" "$T/ioacctd.log")" ] && return 0
		sleep 0.1
	done
	fail "libraries still attached after 120 s: $(grep -e "attached to" -e "detached from" "$T/ioacctd.log")"
}

stop_daemon() {
	[ -n "${DAEMON_PID:-}" ] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# umount_under DIR: whatever is still mounted under DIR (a loop device, a
# tmpfs; a test that failed before its own umount, or whose umount found the
# mount busy) is detached, deepest first, lazily if busy: no test leaves a
# mount or a loop device behind, whatever way it ended.
umount_under() {
	local m
	[ -n "$1" ] || return 0
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while IFS= read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
}

teardown() {
	local rc=$?
	stop_daemon
	# Whatever the daemon left pinned (a test that kills it) is removed here.
	rm -rf "$PIN" 2>/dev/null
	for d in /sys/fs/cgroup/unified/ioacct-test-$$ /sys/fs/cgroup/*/ioacct-test-$$; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf /dev/shm/ioacct-test-$$*
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then dump_log; fi
	umount_under "$T"
	rm -rf "$T"
	exit $rc
}

# json_get FILE PYTHON-EXPR: evaluates an expression over the parsed JSON `j`.
json_get() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# The mount point a path lives on, as the kernel sees it.
mount_of() { stat -c %m "$1"; }

# start_mode MODE: (re)starts the daemon with probe backend MODE, its log
# emptied; returns 1 when this kernel does not allow MODE (the log says why).
start_mode() {
	[ -x "$IOPOKE" ] || fail "$IOPOKE not built (make -C tests/integration iopoke, or make check)"
	stop_daemon
	rm -rf "$PIN"
	: > "$T/ioacctd.log"
	"${DAEMON_PREFIX[@]}" "$IOACCTD" -f -c "$CONF" -v --probe-mode "$1" >> "$T/ioacctd.log" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 2400); do
		"$IOPOKE" "$T/ioacctd.sock" status 2>/dev/null | grep -q '^status=0' && return 0
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			wait "$DAEMON_PID"
			DAEMON_PID=
			grep -q "probe mode $1 is not available on this kernel" "$T/ioacctd.log" && return 1
			fail "ioacctd --probe-mode $1 exited at start"
		fi
		sleep 0.05
	done
	fail "ioacctd --probe-mode $1 did not answer in 120 s"
}

# cold_read FILE EXPR WANT CMD...: evicts FILE from the page cache and runs
# CMD under iorun ($T/cold.json) until json_get's EXPR prints WANT. Something
# on the machine may read a page back in between: up to 3 attempts, each
# exact or not; then it fails with what it got. TRY: the attempt that matched.
cold_read() {
	local file=$1 expr=$2 want=$3 got=''
	shift 3
	for TRY in 1 2 3; do
		"$IOWORK" evict "$file" > /dev/null || fail "iowork evict $file"
		"$IORUN" --json -o "$T/cold.json" -- "$@" > /dev/null || fail "iorun $* failed"
		got=$(json_get "$T/cold.json" "$expr")
		[ "$got" = "$want" ] && return 0
		echo "  attempt $TRY: $got, not $want"
	done
	fail "a cold read by $*: $got, not $want"
}

# start_prometheus MPORT PPORT: a real Prometheus on 127.0.0.1:PPORT scraping
# ioacctd's /metrics on 127.0.0.1:MPORT every second, its files in $T; sets
# PROM_PID (the caller stops it) and waits until it is ready (2 minutes).
start_prometheus() {
	mkdir -p "$T/prom"
	cat > "$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: ioacct
    static_configs:
      - targets: ['127.0.0.1:$1']
YML
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom" \
		--web.listen-address="127.0.0.1:$2" > "$T/prometheus.log" 2>&1 &
	PROM_PID=$!
	for _ in $(seq 1 600); do
		curl -sf "http://127.0.0.1:$2/-/ready" > /dev/null && return 0
		kill -0 "$PROM_PID" 2>/dev/null || fail "prometheus exited at start"
		sleep 0.2
	done
	fail "prometheus not ready in 2 minutes"
}

# stop_prometheus RC: stops what start_prometheus started; when the test
# failed (RC not 0 or 77), shows the end of its log.
stop_prometheus() {
	if [ -n "${PROM_PID:-}" ]; then
		kill "$PROM_PID" 2>/dev/null
		wait "$PROM_PID" 2>/dev/null
		PROM_PID=
	fi
	if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -f "$T/prometheus.log" ]; then
		echo "---- prometheus log (last 10 lines) ----"
		tail -n 10 "$T/prometheus.log"
	fi
}
