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
