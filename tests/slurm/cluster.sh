# SPDX-License-Identifier: GPL-2.0-or-later
# A private one-node Slurm cluster for the plugin's tests: its own munged,
# slurmctld and slurmd, every file in $C. Sourced after tests/integration/lib.sh.
#
#   start_cluster PLUGSTACK_LINE     starts munge + slurmctld + slurmd, waits for idle
#   stop_cluster
#   submit_as USER ARGS...           sbatch as USER, prints the job id
#   wait_job JOBID [TIMEOUT]         polls until the job has left PENDING/RUNNING/...
#   job_state JOBID
#
# Facts from ../shared/docs/machine.md: Debian's Slurm 22.05 runs as a one-node
# cluster; cgroup/v2 is refused on this hybrid host, so cgroup/v1; never use
# `sbatch --wait` (slow polling).

SLURM_USER_NAME=${SLURM_USER_NAME:-ioacct-test}
PLUGIN=$abs_top_builddir/spank/.libs/spank_ioacct.so

# What every plugin test starts with: skip where it cannot run, a private
# daemon configuration, the unprivileged user $U, teardown of it all.
slurm_test_setup() {
	require_root_bpf
	require_slurm
	[ -f "$PLUGIN" ] || skip "the SPANK plugin was not built (no slurm/spank.h at configure time)"
	setup
	trap 'stop_cluster; teardown' EXIT
	make_user
	U=$SLURM_USER_NAME
}

require_slurm() {
	for b in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
		command -v "$b" >/dev/null || skip "$b not installed (Debian: slurm-wlm munge)"
	done
	[ -x "$IOWORK" ] && [ -x "$IOPOKE" ] || fail "build tests/integration first (make check does)"
}

start_cluster() {
	local plugstack_line=$1 node
	C=$T/slurm
	node=$(hostname -s)
	mkdir -p "$C/state" "$C/spool" "$C/log"
	chmod 755 "$T" "$C"
	mungekey --create --keyfile="$C/munge.key" 2>/dev/null || mungekey -c -k "$C/munge.key"
	chmod 600 "$C/munge.key"
	munged --key-file="$C/munge.key" -S "$C/munge.sock" --pid-file="$C/munged.pid" \
		--log-file="$C/log/munged.log" --seed-file="$C/munge.seed" --force ||
		fail "munged did not start: $(tail -3 "$C/log/munged.log" 2>/dev/null)"
	echo "$plugstack_line" > "$C/plugstack.conf"
	cat > "$C/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainRAMSpace=no
CONF
	cat > "$C/slurm.conf" <<CONF
ClusterName=ioacct-test
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$C/munge.sock
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/log/slurmctld.log
SlurmdLogFile=$C/log/slurmd.log
SlurmctldPort=$((17000 + $$ % 1000))
SlurmdPort=$((18000 + $$ % 1000))
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
PlugStackConfig=$C/plugstack.conf
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$C/slurm.conf
	slurmctld -D -f "$C/slurm.conf" > "$C/log/slurmctld.out" 2>&1 &
	SLURMCTLD_PID=$!
	slurmd -D -f "$C/slurm.conf" > "$C/log/slurmd.out" 2>&1 &
	SLURMD_PID=$!
	for _ in $(seq 1 200); do
		[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
		sleep 0.1
	done
	tail -5 "$C/log/slurmctld.log" "$C/log/slurmd.log"
	fail "the Slurm node did not become idle"
}

stop_cluster() {
	local rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -f "${C:-/nonexistent}/log/slurmd.log" ]; then
		echo "---- slurmd log, ioacct lines ----"
		grep -i ioacct "$C/log/slurmd.log" | tail -n 20
	fi
	[ -n "${SLURMD_PID:-}" ] && kill "$SLURMD_PID" 2>/dev/null
	[ -n "${SLURMCTLD_PID:-}" ] && kill "$SLURMCTLD_PID" 2>/dev/null
	[ -f "${C:-/nonexistent}/munged.pid" ] && kill "$(cat "$C/munged.pid")" 2>/dev/null
	wait "${SLURMD_PID:-}" "${SLURMCTLD_PID:-}" 2>/dev/null
	SLURMD_PID= SLURMCTLD_PID=
	# Job cgroups left behind by killed daemons.
	find /sys/fs/cgroup/*/slurm_"$(hostname -s)" -depth -type d -exec rmdir {} + 2>/dev/null
	return "$rc"
}

make_user() {
	id "$SLURM_USER_NAME" >/dev/null 2>&1 || useradd -m -s /bin/bash "$SLURM_USER_NAME" ||
		skip "cannot create user $SLURM_USER_NAME"
}

submit_as() {
	local user=$1 out
	shift
	out=$(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable "$@") ||
		fail "sbatch $* failed: $out"
	echo "${out%%;*}"
}

job_state() {
	scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# Waits until the job is over (and its epilog done), at most TIMEOUT seconds.
wait_job() {
	local j=$1 limit=${2:-60} s
	for _ in $(seq 1 $((limit * 10))); do
		s=$(job_state "$j")
		case "$s" in
		PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|"") ;;
		*)
			# The epilog runs while the job is COMPLETING; the state above is final.
			echo "$s"
			return 0 ;;
		esac
		sleep 0.1
	done
	fail "job $j still $(job_state "$j") after ${limit}s"
}

# report_bytes_written REPORT MOUNT: the mount's total_POSIX_BYTES_WRITTEN in a text report.
report_bytes_written() {
	awk -v m="# mount: $2" -F'\t' '$1 == m { s = 1; next } /^# mount: / { s = 0 }
		s && /^total_POSIX_BYTES_WRITTEN: / { sub(/^[^:]*: /, ""); print; exit }' "$1"
}
