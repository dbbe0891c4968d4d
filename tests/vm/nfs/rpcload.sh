# SPDX-License-Identifier: GPL-2.0-or-later
# nfs-modes: tracepoint
# nfs-daemon: own
# NFS check (sourced by init.sh's run_nfs in a subshell, the mode's daemon
# stopped for it): the RPC probes loaded after the daemon's start (issue 40),
# as on a node whose first NFS mount comes after ioacctd.
# 1. NFS down (client unmounted, nfsd stopped), every module that uses
#    sunrpc removed and sunrpc with them (skipped where sunrpc is built in);
#    a daemon started then: two jobs say rpc=off:no-sunrpc, the log says it
#    once.
# 2. The modules loaded again and NFS set up as at boot (nfs_setup, same
#    path and size): the next job (a dd with conv=fsync) loads the probes at
#    its registration and says rpc=sunrpc, and the procedures it causes are
#    mountstats' change over it; then issue 40's job (rpc_issue_job, as
#    rpc.sh's): its RPCs, per procedure, are mountstats' change over it.
# Leaves NFS mounted on $NFS as the next checks expect, and no daemon of its
# own: run_nfs starts the mode's again.
W=$R/nfs-rpcload
mkdir -p "$W"
: > "$W/ioacctd.log"
MODS=/lib/modules/$KVER

# mod_rm MOD: removes MOD after the modules that use it (/proc/modules'
# fourth field), each waited for (30 s at most) until its users let go.
mod_rm() {
	for u in $(awk -v m="$1" '$1 == m && $4 != "-" { gsub(",", " ", $4); print $4 }' /proc/modules); do
		mod_rm "$u" || return 1
	done
	grep -q "^$1 " /proc/modules || return 0
	t=0
	until rmmod "$1" 2> "$W/rmmod.err"; do
		t=$((t + 1))
		[ $t -lt 300 ] || { echo "$1: $(oneline < "$W/rmmod.err") (refcnt $(cat /sys/module/$1/refcnt))"; return 1; }
		usleep 100000
	done
	echo "$1" >> "$W/removed"
}

# mods_load: the modules of the initramfs that are not loaded, in its order (mkinitramfs numbers them).
mods_load() {
	for ko in "$MODS"/*.ko; do
		[ -e "$ko" ] || continue
		m=$(basename "$ko" .ko | sed 's/^[0-9]*-//' | tr - _)
		[ -e /sys/module/$m ] || insmod "$ko" || return 1
	done
}

# rl_up: NFS as the next checks expect it (mounted on $NFS, ready), whatever state it was left in.
rl_up() {
	grep -q " $NFS " /proc/mounts && return 0
	[ -e /proc/fs/nfsd/threads ] && echo 0 > /proc/fs/nfsd/threads
	umount /proc/fs/nfsd 2> /dev/null
	umount /srv/nfs 2> /dev/null
	mods_load && nfs_setup $NFS $NFS_SIZE $NFS3 && nfs_ready $NFS > /dev/null
}

rl_fail() {
	echo "INFO rpcload daemon: $(grep 'RPC' "$W/ioacctd.log" | oneline)"
	daemon_stop
	rl_up || echo "VM: rpcload: NFS could not be set up again: the next checks will fail"
	nresult rpcload "fail reason=$*"
	exit 0
}

# mode_word JSON: the job's rpc_probes (its probe mode's RPC word).
mode_word() { sed -n 's/.*"rpc_probes": *"\([^"]*\)".*/\1/p' "$1" | head -n 1; }

grep -q '^sunrpc ' /proc/modules || {
	nresult rpcload "skip sunrpc is not a module of $KVER (built in: never absent)"
	exit 0
}

# 1. No sunrpc at the daemon's start.
sync
nfs_teardown $NFS $NFS3 || rl_fail "cannot take NFS down: $(grep " $NFS \|nfsd" /proc/mounts | oneline)"
: > "$W/removed"
why=$(mod_rm sunrpc) || rl_fail "cannot remove the sunrpc modules: $why"
[ ! -e /sys/module/sunrpc ] || rl_fail "sunrpc still loaded after rmmod"
umount /srv/nfs || rl_fail "cannot unmount the export /srv/nfs with nfsd gone"
echo "INFO rpcload removed: $(tr '\n' ' ' < "$W/removed")"
daemon_start "$W/ioacctd.log" || rl_fail "ioacctd did not start: $why"
for j in 1 2; do
	iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/pre$j.json" -- \
		sh -c "echo x > /tmp/rpcload$j" > /dev/null 2> "$W/pre$j.err" ||
		rl_fail "iorun (job $j, no sunrpc) failed: $(tail -n 2 "$W/pre$j.err" | oneline)"
	[ "$(mode_word "$W/pre$j.json")" = off:no-sunrpc ] ||
		rl_fail "job $j without sunrpc: rpc_probes '$(mode_word "$W/pre$j.json")', not off:no-sunrpc"
done
n=$(grep -c 'RPC: no sunrpc module in the kernel' "$W/ioacctd.log")
[ "$n" = 1 ] || rl_fail "'no sunrpc module' said $n times, not once: $(grep 'RPC' "$W/ioacctd.log" | oneline)"

# 2. NFS again, the same way as at boot; the next job's registration loads the probes.
mods_load || rl_fail "cannot load the modules again"
nfs_setup $NFS $NFS_SIZE $NFS3 || rl_fail "cannot set NFS up again"
nfs_ready $NFS > /dev/null || rl_fail "NFS set up again: no file can be made on $NFS after 60 s"
mkdir -p $NFS/rpcload
# The first job loads them at its registration. What no job sent between
# mountstats' first read and that load (the lease's SEQUENCE, seen on 6.1)
# is in mountstats only: its own procedures are compared, every procedure of
# the issue's job after it (rpc_issue_job, as rpc.sh).
rpc_ms "$W/first.ms0"
iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/first.json" -- \
	dd if=/dev/zero of=$NFS/rpcload/first bs=64k count=4 conv=fsync > /dev/null 2> "$W/first.err" ||
	rl_fail "iorun (the first job after NFS came) failed: $(tail -n 2 "$W/first.err" | oneline)"
rpc_ms "$W/first.ms1"
grep -q "RPC: sunrpc's tracepoints attached" "$W/ioacctd.log" ||
	rl_fail "the RPC probes were not attached at the registration after sunrpc came: $(grep 'RPC' "$W/ioacctd.log" | oneline)"
[ "$(mode_word "$W/first.json")" = sunrpc ] ||
	rl_fail "the first job after NFS came: rpc_probes '$(mode_word "$W/first.json")', not sunrpc"
rpc_job "$W/first.json" "$W/first.rpc" || rl_fail "the first job after NFS came: no mount $NFS in its summary"
OWN="WRITE COMMIT OPEN CLOSE LOOKUP ACCESS GETATTR CREATE"
rpc_compare "$W/first.ms0" "$W/first.ms1" "$OWN" "$W/first.rpc" > "$W/first.cmp"
bad=$(awk -v own=" $OWN " '/^MISMATCH: / { p = $2; sub(/:$/, "", p); if (index(own, " " p " ")) print }' "$W/first.cmp")
[ -z "$bad" ] || rl_fail "the first job after NFS came: $(echo "$bad" | head -n 4 | sed 's/^MISMATCH: //' | oneline)"
[ "$(own "$W/first.rpc" WRITE)" -gt 0 ] || rl_fail "the first job after NFS came: no WRITE of its own: $(oneline < "$W/first.rpc")"
first=$(awk '$1 == "rpc" { printf "%s%s=%s", n++ ? "," : "", $2, $3 }' "$W/first.rpc")
rpc_issue_job $NFS/rpcload "$W" job || rl_fail "the issue's job after NFS came: $rpc_why"
[ "$(mode_word "$W/job.json")" = sunrpc ] ||
	rl_fail "the issue's job after NFS came: rpc_probes '$(mode_word "$W/job.json")', not sunrpc"
n=$(grep -c 'RPC: no sunrpc module in the kernel' "$W/ioacctd.log")
[ "$n" = 1 ] || rl_fail "'no sunrpc module' said $n times in all, not once"
load=$(sed -n "s/.*RPC: sunrpc's tracepoints attached: .*(\(.*\))$/\1/p" "$W/ioacctd.log")
rm -rf $NFS/rpcload
daemon_stop
[ $drc = 0 ] || rl_fail "its ioacctd exited with $drc when stopped"
nresult rpcload "pass removed=$(tr '\n' ',' < "$W/removed" | sed 's/,$//') loaded_at_registration=($load) first=$first issue_job=$rpc_ok"
