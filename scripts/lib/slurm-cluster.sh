# SPDX-License-Identifier: GPL-2.0-or-later
# A private one-node Slurm cluster: its own munged, slurmctld and slurmd,
# every file in $T/slurm. Sourced by tests/slurm (through cluster.sh) and by
# scripts/demo; the caller defines fail() (one line, then exit non-zero) and $T.
#
#   start_cluster PLUGSTACK_LINE     takes the lock, starts munge + slurmctld + slurmd,
#                                    waits until the node is idle
#   stop_cluster                     stops them, removes their job cgroups, drops the lock
#   make_user USER                   creates an unprivileged user if missing
#   submit_as USER ARGS...           sbatch as USER, prints the job id
#   wait_job JOBID [TIMEOUT]         polls until the job has left PENDING/RUNNING/...
#   job_state JOBID
#
# SLURM_CLUSTER_NAME (default ioacct-test) names the cluster in slurm.conf.
#
# Facts from ../shared/docs/machine.md: Debian's Slurm 22.05 runs as a one-node
# cluster; cgroup/v2 is refused on this hybrid host, so cgroup/v1; never use
# `sbatch --wait` (slow polling). Two clusters on one node share the
# slurm_<node> cgroup tree and their job ids (1, 2, ...) meet there: one
# cluster at a time, under $SLURM_CLUSTER_LOCK.

SLURM_CLUSTER_LOCK=${SLURM_CLUSTER_LOCK:-/tmp/ioacct-slurm.lock}
SLURM_CLUSTER_NAME=${SLURM_CLUSTER_NAME:-ioacct-test}
SLURM_LOCK_FD=

# The holder of the flock on $1, from /proc/locks, or nothing.
lock_holder() {
	local ino
	ino=$(stat -c %i "$1" 2>/dev/null) || return 0
	awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, a, ":"); if (a[n] == ino) { print $5; exit } }' \
		/proc/locks
}

# Is pid $1 this shell or one of its ancestors?
is_ancestor() {
	local p=$$
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		[ "$p" = "$1" ] && return 0
		p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
	done
	return 1
}

# Takes the lock for the cluster's lifetime (released by stop_cluster). A
# caller already running under `flock $SLURM_CLUSTER_LOCK make check` holds
# it through an ancestor: waiting would be a deadlock.
lock_cluster() {
	local holder
	exec {SLURM_LOCK_FD}>> "$SLURM_CLUSTER_LOCK" || fail "cannot open the lock $SLURM_CLUSTER_LOCK"
	flock -n "$SLURM_LOCK_FD" && return 0
	holder=$(lock_holder "$SLURM_CLUSTER_LOCK")
	if [ -n "$holder" ] && is_ancestor "$holder"; then
		exec {SLURM_LOCK_FD}>&-
		SLURM_LOCK_FD=
		return 0
	fi
	echo "Waiting for $SLURM_CLUSTER_LOCK: another private Slurm cluster runs on this machine (pid ${holder:-?})"
	flock -w 1800 "$SLURM_LOCK_FD" ||
		fail "$SLURM_CLUSTER_LOCK still held after 30 minutes by pid ${holder:-?}: is a Slurm test or demo stuck?"
}

unlock_cluster() {
	[ -n "${SLURM_LOCK_FD:-}" ] || return 0
	exec {SLURM_LOCK_FD}>&-
	SLURM_LOCK_FD=
}

start_cluster() {
	local plugstack_line=$1 node
	lock_cluster
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
ClusterName=$SLURM_CLUSTER_NAME
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
	fail "the Slurm node did not become idle in 20 s (logs above, in $C/log)"
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
	unlock_cluster
	return "$rc"
}

make_user() {
	id "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1"
}

# sbatch passes on the submitter's environment (--export=ALL), and runuser
# keeps ours: root's PATH, with directories like /root/.cargo/bin that the
# user cannot search. The job's shell then fails a stat with EACCES in each
# of them for every command it looks up (5 for a `dd`), which the job's
# report rightly counts as permission errors and WARNs of. A user submits
# with a PATH of their own, so the job gets ours without the directories
# the user cannot search.
submit_as() {
	local user=$1 out path
	shift
	path=$(runuser -u "$user" -- bash -c 'IFS=:; p=; for d in $PATH; do
		[ -d "$d" ] && [ -x "$d" ] && p=${p:+$p:}$d; done; echo "$p"') ||
		fail "runuser -u $user failed: cannot submit as $user"
	out=$(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" PATH="$path" sbatch --parsable "$@") ||
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
