# SPDX-License-Identifier: GPL-2.0-or-later
# The plugin's tests on a private one-node Slurm cluster. Sourced after
# tests/integration/lib.sh. The cluster itself (start_cluster, stop_cluster,
# submit_as, wait_job, job_state; one at a time under /tmp/ioacct-slurm.lock)
# is scripts/lib/slurm-cluster.sh, shared with scripts/demo.

. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/slurm-cluster.sh"

SLURM_USER_NAME=${SLURM_USER_NAME:-ioacct-test}
PLUGIN=$abs_top_builddir/spank/.libs/spank_ioacct.so

# What every plugin test starts with: skip where it cannot run, a private
# daemon configuration, the unprivileged user $U, teardown of it all.
slurm_test_setup() {
	[ "${IOACCT_DISTCHECK:-}" != 1 ] || skip "IOACCT_DISTCHECK=1 (make distcheck): the Slurm tests run in make check"
	require_root_bpf
	require_slurm
	[ -f "$PLUGIN" ] || skip "the SPANK plugin was not built (no slurm/spank.h at configure time)"
	setup
	trap 'stop_cluster; teardown' EXIT
	make_user "$SLURM_USER_NAME" || skip "cannot create user $SLURM_USER_NAME"
	U=$SLURM_USER_NAME
}

require_slurm() {
	for b in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
		command -v "$b" >/dev/null || skip "$b not installed (Debian: slurm-wlm munge)"
	done
	[ -x "$IOWORK" ] && [ -x "$IOPOKE" ] || fail "build tests/integration first (make check does)"
}

# report_bytes_written REPORT MOUNT: the mount's total_POSIX_BYTES_WRITTEN in a text report.
report_bytes_written() {
	awk -v m="# mount: $2" -F'\t' '$1 == m { s = 1; next } /^# mount: / { s = 0 }
		s && /^total_POSIX_BYTES_WRITTEN: / { sub(/^[^:]*: /, ""); print; exit }' "$1"
}

# require_minicluster: skips unless scripts/minicluster can run here with a
# private PostgreSQL (the tests of several nodes); MINICLUSTER its path.
require_minicluster() {
	[ "${IOACCT_DISTCHECK:-}" != 1 ] || skip "IOACCT_DISTCHECK=1 (make distcheck): the Slurm tests run in make check"
	require_root_bpf
	require_slurm
	command -v unshare > /dev/null || skip "unshare not installed (util-linux)"
	[ -f "$PLUGIN" ] || skip "the SPANK plugin was not built (no slurm/spank.h at configure time)"
	pg_find_bin || skip "PostgreSQL server not installed (Debian: postgresql)"
	command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the stores"
	command -v python3 > /dev/null || skip "python3 is needed to read the JSON reports"
	grep -q '^#define HAVE_LIBPQ 1' "$abs_top_builddir/ioacct-config.h" ||
		skip "ioacctd was built without libpq (Debian: libpq-dev, then rebuild)"
	MINICLUSTER=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)/minicluster
}

# minicluster_up NODES MERGE_TIMEOUT: T (a directory of the test's), the
# user U, scripts/minicluster's NODES nodes (mc1, ...) up with PGURL its
# PostgreSQL, SLURM_CONF; W a directory of U's on mount WMNT; all torn down
# at exit. Sourced by tests that need nothing else torn down.
minicluster_up() {
	T=$(mktemp -d /var/tmp/ioacct-mc.XXXXXX)
	chmod 755 "$T"
	MC=$T/mc
	trap 'rc=$?; "$MINICLUSTER" down --dir "$MC" > /dev/null 2>&1; rm -rf "$T"; exit $rc' EXIT
	make_user "$SLURM_USER_NAME" || skip "cannot create user $SLURM_USER_NAME"
	U=$SLURM_USER_NAME
	"$MINICLUSTER" up --nodes "$1" --dir "$MC" --build "$abs_top_builddir" --merge-timeout "$2" \
		> "$T/up.out" 2> "$T/up.err" ||
		{ cat "$T/up.err"; fail "scripts/minicluster up --nodes $1 failed"; }
	# shellcheck source=/dev/null
	. "$MC/minicluster.state"
	[ -n "${MC_PGURL:-}" ] || fail "minicluster started no PostgreSQL"
	PGURL=$MC_PGURL
	export SLURM_CONF=$MC/slurm.conf
	IOACCT=$abs_top_builddir/tools/ioacct
	W=$T/work
	mkdir -p "$W"
	chown "$U" "$W"
	WMNT=$(mount_of "$W")
}
