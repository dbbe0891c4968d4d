#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the ioacct benchmark VM (busybox sh; put there by tests/bench/vm-bench
# over the initramfs of tests/vm/mkinitramfs).
#
# Mounts what init.sh mounts, loads the kernel modules given to mkinitramfs,
# then, as /etc/vmbench.conf says:
#   - NFS over loopback: an NFSv4.2 server (nfsd, no rpcbind, no mountd: the
#     export caches are filled by hand through /proc/net/rpc/*/channel)
#     exporting a tmpfs, mounted on /mnt/nfs over TCP to 127.0.0.1;
#   - EVENT lines: the per-event cost of each probe mode in $MODES, as
#     tests/bench/event-cost measures it (bpfstat around iobench);
#   - the overhead sweep of tests/bench/overhead on each file system of
#     $FSLIST (nfs, tmpfs), fio's and iorun's JSON printed between
#     "FILE-BEGIN name" and "FILE-END" lines for the host to read;
#   - RPCCOST and RPCSTAT lines: what the RPC probes (issue 40) cost a
#     watched 4 KiB write on NFS, $RPC_ROUNDS rounds (rpc_cost below).
# Then "DONE kernel=K" and power off.
PATH=/usr/bin:/bin:/usr/sbin:/sbin
export PATH
umask 022

mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1

MODES="fentry kprobe tracepoint" ROUNDS=3 NCALLS=20000
FSLIST="nfs tmpfs" SIZES="4k 1m 16m" REPS=4 RUNTIME_MS=1500 FILESIZE=128m
RPC_ROUNDS=0 RPC_MODE=fentry RPC_WRITES=20000 RPC_SYNCS=300
# shellcheck disable=SC1091 # written by tests/bench/vm-bench
. /etc/vmbench.conf

KVER=$(uname -r)
say() { echo "VM: $*"; }
bye() {
	echo "DONE kernel=$KVER"
	sync
	poweroff -f
	sleep 5
	exit 1
}
for d in proc:/proc sysfs:/sys tmpfs:/run tmpfs:/tmp tmpfs:/dev/shm cgroup2:/sys/fs/cgroup bpf:/sys/fs/bpf; do
	mkdir -p "${d#*:}"
	mount -t "${d%%:*}" "${d%%:*}" "${d#*:}" || say "cannot mount ${d%%:*} on ${d#*:}"
done
ln -sf /proc/self/fd /dev/fd 2>/dev/null
# Kernel messages would land in the middle of the files printed below.
dmesg -n 1
hostname vm
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
for ko in /lib/modules/"$KVER"/*.ko; do
	[ -e "$ko" ] || continue
	insmod "$ko" || say "cannot load $(basename "$ko")"
done
echo "INFO kernel=$KVER cpus=$(nproc) mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"

# ---- NFS over loopback (nfs_setup, nfs_ready) ----
. /usr/share/ioacct-vm/nfs.sh
NFS=ok
if case " $FSLIST " in *" nfs "*) true ;; *) false ;; esac; then
	{ nfs_setup /mnt/nfs 600m && nfs_ready /mnt/nfs; } || { NFS=fail; say "NFS over loopback could not be set up"; }
	echo "INFO kernel=$KVER nfs=$NFS"
	dmesg | grep -i -E 'nfsd|nfs:|rpc' | tail -n 5 | sed 's/^/VM: dmesg: /'
fi

# ---- the daemon ----
R=/run/ioacct
mkdir -p $R
# ioacctd's state directory, its account's (mkinitramfs makes the account).
chown 998:998 $R
cat > $R/ioacct.conf <<CONF
socket = $R/ioacctd.sock
db = $R/ioacct.db
pidfile = $R/ioacctd.pid
bpf_pin_dir = /sys/fs/bpf/ioacct
cgroup_parent = ioacct-bench
cgroup_mode = v2
CONF
DPID='' HOLD=''
daemon_on() { # [MODE [CONF]] -> 0 when it answers
	ioacctd -f -c "${2:-$R/ioacct.conf}" ${1:+--probe-mode "$1"} > $R/ioacctd.log 2>&1 &
	DPID=$!
	t=0
	until iopoke $R/ioacctd.sock status 2>/dev/null | grep -q '^status=0'; do
		kill -0 $DPID 2>/dev/null || { DPID=''; return 1; }
		t=$((t + 1))
		[ $t -lt 1200 ] || return 1
		usleep 100000
	done
	rm -f $R/hold.pid
	iorun -c $R/ioacct.conf -o /dev/null -- sh -c "echo \$\$ > $R/hold.pid; exec sleep 1000000" &
	HOLD=$!
	until iopoke $R/ioacctd.sock status | grep -q 'jobs=1 '; do usleep 50000; done
}
daemon_off() {
	if [ -n "$HOLD" ]; then
		until [ -s $R/hold.pid ]; do usleep 50000; done
		kill "$(cat $R/hold.pid)"
		wait "$HOLD" 2>/dev/null
		HOLD=''
	fi
	if [ -n "$DPID" ]; then
		kill $DPID
		wait $DPID 2>/dev/null
		DPID=''
	fi
}

# ---- per-event cost: "EVENT round mode caller program runs time_ns" ----
snap() { bpfstat list $2 | sort -n > "$1"; }
delta() { # BEFORE AFTER ROUND MODE CALLER
	awk -v r="$3" -v m="$4" -v w="$5" 'NR == FNR { c[$1] = $3; t[$1] = $4; next }
		($1 in c) && $3 > c[$1] { print "EVENT", r, m, w, $5, $3 - c[$1], $4 - t[$1] }' "$1" "$2"
}
event_cost() {
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	f=/dev/shm/event-cost
	r=1
	while [ $r -le "$ROUNDS" ]; do
		mkfifo /tmp/hold
		bpfstat empty sys_enter sys_exit < /tmp/hold > /tmp/empty.out &
		epid=$!
		exec 7> /tmp/hold
		until grep -q ready /tmp/empty.out; do usleep 50000; done
		snap /tmp/e0
		iobench pwrite $f 4096 "$NCALLS" > /dev/null
		snap /tmp/e1
		exec 7>&-
		wait $epid
		rm -f /tmp/hold
		delta /tmp/e0 /tmp/e1 $r stats - | grep ' empty_'
		for mode in $MODES; do
			if ! daemon_on "$mode"; then
				echo "EVENT-UNAVAILABLE $mode $(grep -o 'probe mode.*' $R/ioacctd.log | head -n 1)"
				continue
			fi
			snap /tmp/d0 $DPID
			iobench pwrite $f 4096 "$NCALLS" > /dev/null
			snap /tmp/d1 $DPID
			delta /tmp/d0 /tmp/d1 $r "$mode" unwatched
			snap /tmp/d0 $DPID
			iorun -c $R/ioacct.conf -o /dev/null -- iobench pwrite $f 4096 "$NCALLS" > /dev/null
			snap /tmp/d1 $DPID
			delta /tmp/d0 /tmp/d1 $r "$mode" watched
			daemon_off
		done
		r=$((r + 1))
	done
	echo 0 > /proc/sys/kernel/bpf_stats_enabled
	rm -f $f
}
[ -n "$MODES" ] && [ "$ROUNDS" -gt 0 ] && event_cost

# ---- the RPC probes' cost (issue 40) ----
# rpc_cost: RPC_ROUNDS rounds, each a daemon in RPC_MODE with the RPC probes
# (rpc_probes = yes: "on") and one without (no: "off"), in alternating order,
# each running two watched jobs on NFS: RPC_WRITES buffered 4 KiB pwrites
# ("buffered": no RPC but a flush's) and RPC_SYNCS 4 KiB pwrites each
# followed by an fsync ("fsync": a WRITE and a COMMIT each). Prints
#   RPCCOST round on|off buffered|fsync ns_per_call rpc_probes_of_the_job
# then one run of each with bpf_stats on, a line per RPC program that ran:
#   RPCSTAT buffered|fsync calls program run_cnt run_time_ns
# and the watched write's own time in that run (RPCSTAT ... calls - - ns).
rpc_job() { # ON|OFF ROUND WORKLOAD
	case $3 in
	buffered) set -- "$1" "$2" "$3" pwrite "$RPC_WRITES" ;;
	fsync) set -- "$1" "$2" "$3" pwsync "$RPC_SYNCS" ;;
	esac
	ns=$(iorun -c $R/ioacct.conf --json -o /tmp/rpcjob.json -- iobench "$4" /mnt/nfs/rpccost 4096 "$5") || ns=failed
	echo "RPCCOST $2 $1 $3 $ns $(sed -n 's/.*"rpc_probes": *"\([^"]*\)".*/\1/p' /tmp/rpcjob.json | head -n 1)"
}
rpc_cost() {
	[ $NFS = ok ] || { say "no NFS: no RPC cost"; return; }
	cp $R/ioacct.conf $R/rpc-on.conf
	{ cat $R/ioacct.conf; echo "rpc_probes = no"; } > $R/rpc-off.conf
	r=1
	while [ $r -le "$RPC_ROUNDS" ]; do
		order="on off"
		[ $((r % 2)) = 0 ] && order="off on"
		for v in $order; do
			daemon_on "$RPC_MODE" $R/rpc-$v.conf || { say "ioacctd did not start"; cat $R/ioacctd.log; return; }
			for w in buffered fsync; do rpc_job $v $r $w; done
			daemon_off
		done
		say "RPC cost: round $r/$RPC_ROUNDS done"
		r=$((r + 1))
	done
	daemon_on "$RPC_MODE" $R/rpc-on.conf || { say "ioacctd did not start"; return; }
	grep 'RPC: ' $R/ioacctd.log | sed 's/^/INFO /'
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	for w in buffered fsync; do
		calls=$((RPC_WRITES + 1000))
		[ $w = fsync ] && calls=$((RPC_SYNCS + 20))
		snap /tmp/r0 $DPID
		out=$(rpc_job on stats $w)
		snap /tmp/r1 $DPID
		delta /tmp/r0 /tmp/r1 $w $calls - | awk '$5 ~ /^ioacct_rpc/ { print "RPCSTAT", $2, $3, $5, $6, $7 }'
		echo "RPCSTAT $w $calls - - $(echo "$out" | awk '{ print $5 }')"
	done
	echo 0 > /proc/sys/kernel/bpf_stats_enabled
	daemon_off
	rm -f /mnt/nfs/rpccost
}
[ "$RPC_ROUNDS" -gt 0 ] && rpc_cost

# ---- the overhead sweep ----
emit() { # NAME FILE
	echo "FILE-BEGIN $1"
	cat "$2"
	echo
	echo "FILE-END"
}
overhead() {
	for fs in $FSLIST; do
		case $fs in
		nfs) [ $NFS = ok ] || continue ;;
		tmpfs) mkdir -p /mnt/tmpfs && mount -t tmpfs -o size=400m bench /mnt/tmpfs ;;
		esac
		echo "MOUNT $fs /mnt/$fs"
		fio --eta=never --name=layout --filename=/mnt/$fs/bench.dat --rw=write --bs=1m --size=$FILESIZE \
			--ioengine=psync --output=/dev/null
	done
	rep=1
	while [ $rep -le "$REPS" ]; do
		for fs in $FSLIST; do
			[ $fs = nfs ] && [ $NFS != ok ] && continue
			for size in $SIZES; do
				cat > /tmp/job.fio <<JOB
[global]
filename=/mnt/$fs/bench.dat
size=$FILESIZE
bs=$size
ioengine=psync
time_based=1
runtime=${RUNTIME_MS}ms
invalidate=0
[write]
rw=write
[read]
stonewall
rw=read
JOB
				order="watched unwatched"
				[ $((rep % 2)) = 0 ] && order="unwatched watched"
				fio --eta=never /tmp/job.fio --output-format=json --output=/tmp/fio.json
				emit "$fs $size $rep off fio" /tmp/fio.json
				daemon_on || { say "ioacctd did not start"; cat $R/ioacctd.log; bye; }
				for c in $order; do
					if [ $c = watched ]; then
						iorun -c $R/ioacct.conf --json -o /tmp/job.json --bin-width 0.1 -- \
							fio --eta=never /tmp/job.fio --output-format=json --output=/tmp/fio.json
						emit "$fs $size $rep $c fio" /tmp/fio.json
						emit "$fs $size $rep $c job" /tmp/job.json
					else
						fio --eta=never /tmp/job.fio --output-format=json --output=/tmp/fio.json
						emit "$fs $size $rep $c fio" /tmp/fio.json
					fi
				done
				daemon_off
			done
		done
		say "repetition $rep/$REPS done"
		rep=$((rep + 1))
	done
	grep -o 'probe mode [a-z]*' $R/ioacctd.log | head -n 1 | sed 's/^/INFO /'
}
[ "$REPS" -gt 0 ] && overhead
bye
