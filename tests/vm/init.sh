#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the ioacct test VM (busybox sh; put there by tests/vm/mkinitramfs).
#
# Mounts what a node has (proc, sysfs, devtmpfs, tmpfs on /run /tmp /dev/shm,
# pure cgroup2 on /sys/fs/cgroup, bpffs), then for each probe mode in $MODES
# starts ioacctd --probe-mode MODE and runs the exactness workload of
# tests/integration/01-exact.sh under iorun on two fresh tmpfs mounts, first in
# a cgroup v2 cgroup, then (a v1 freezer hierarchy mounted for it) in a v1
# cgroup, while a process outside the cgroup does I/O to the same mounts; and
# in the same job the calls of tests/integration/21-splice.sh (sendfile,
# splice, copy_file_range: a read of the source, a write of the destination).
# Prints one line per (mode, cgroup):
#   RESULT kernel=K mode=M cgroup=C pass chosen=M2 time=S totals=...
#   RESULT kernel=K mode=M cgroup=C fail reason=...
#   RESULT kernel=K mode=M cgroup=C unavailable reason=<ioacctd's message>
# In the modes of $VIEW_MODES it then checks the views (issue 14) the daemon
# says are on: io_uring on a tmpfs, Linux AIO on a tmpfs and the ext4 disk
# run-matrix attaches (/dev/vda), on which also cold and warm reads, mmap
# reads and readahead; one line for
# what status says and one per view:
#   VIEWS kernel=K mode=M views=cache,mmap,uring detail=<status's views>
#   VRESULT kernel=K mode=M view=V pass|fail|off <what was seen>
# In the modes of $FS_MODES, exact mmap reads on the ext4 disk and on the
# disks of $FS_DISKS (xfs, btrfs), one line per file system (view=mmap-FS).
# With an NFSv4.2 mount over loopback ($NFS, kernel nfsd in this VM, set up at
# boot: tests/vm/nfs.sh; and the same export with NFSv3 on $NFS3 where the
# initramfs has rpcbind and rpc.mountd) when NFS_MODES is not empty, each check of
# tests/vm/nfs/*.sh in the modes of its "# nfs-modes:" line, else in those of
# $NFS_MODES (with "# nfs-daemon: own", the mode's daemon stopped around it:
# run_nfs), one line each:
#   NRESULT kernel=K mode=M check=NAME pass|fail|skip <detail>
# and "DONE kernel=K", then powers the VM off. Settings: /etc/vmtest.conf.
PATH=/usr/bin:/bin:/usr/sbin:/sbin
export PATH
umask 022

mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1

MODES="auto fentry kprobe tracepoint syscall-tp"
# START_TIMEOUT: ioacctd loads ~250 programs on fentry and kprobe; under TCG that took
# 62-70 s on a quiet host and 190 s beside six builds (docs/kernels.md), and
# more than 600 s niced beside the whole suite (a tenth of a CPU): the guest's
# clock is the host's, so this waits long; the host's run-matrix budgets the
# VM in CPU seconds and ends a VM that hangs.
NW=100 NR=50 NPW=10000 NCREATE=100 NMKDIR=10 NMISS=5 NEXIST=3 NPAIR=10 NSEEK=7 WRONG=0 START_TIMEOUT=1800
VIEW_MODES="fentry kprobe tracepoint"
FS_DISKS='' FS_MODES='' NFS_MODES=''
# shellcheck disable=SC1091 # written by mkinitramfs
. /etc/vmtest.conf

KVER=$(uname -r)
CHECK=/usr/share/ioacct-vm/check.awk
SLIM=/usr/share/ioacct-vm/slim.awk
A=/mnt/a
B=/mnt/b
U=/mnt/u # a fresh tmpfs: io_uring
U2=/mnt/u2 # another: io_uring's requests by relative paths
E=/mnt/e # the ext4 disk (a snapshot: writes are lost at power-off): the page cache, AIO
NFS=/mnt/nfs NFS_SIZE=256m # NFSv4.2 over loopback (its export's size), in the modes of NFS_MODES
NFS3=/mnt/nfs3 # the same export with NFSv3, where the initramfs has its daemons (NFS3_SETUP)
FREEZER=/run/cgroup-v1/freezer

say() { echo "VM: $*"; }
# check_summary SUMMARY EXPECT: check.awk's verdict on the summary slimmed to what it
# reads (slim.awk: a third of the parse under TCG).
check_summary() {
	awk -v keep="$(sed -n 's/^file:[^ ]* //p' "$2" | tr ' ' '\n' | sed 's/[<>]*=.*//' | tr '\n' '|')" \
		-f $SLIM "$1" > "$1.slim" && awk -f $CHECK "$1.slim" "$2"
}
result() { echo "RESULT kernel=$KVER mode=$1 cgroup=$2 $3"; }
now() { read -r up _ < /proc/uptime; echo "$up"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# One line, the last field of a RESULT line: lines joined with " | ".
oneline() { tr '\t' ' ' | sed 's/  */ /g' | awk 'NF { printf "%s%s", n++ ? " | " : "", $0 }' | cut -c1-400; }
# The end of a log on the console, trimmed.
show_log() {
	echo "---- $1 (last ${3:-25} lines) ----"
	tail -n "${3:-25}" "$2" | cut -c1-300 | sed 's/^/  | /'
	echo "----"
}
bye() {
	echo "DONE kernel=$KVER"
	sync
	poweroff -f
	sleep 5
	exit 1 # panics: with panic=-1 and -no-reboot, QEMU exits
}

setup_fail=
need_mount() { # TYPE DIR [OPTIONS]
	mkdir -p "$2"
	mount -t "$1" ${3:+-o "$3"} "$1" "$2" || setup_fail="$setup_fail mount-$1-$2"
}
need_mount proc /proc
need_mount sysfs /sys
need_mount tmpfs /run mode=0755
need_mount tmpfs /tmp mode=1777
need_mount tmpfs /dev/shm mode=1777
need_mount cgroup2 /sys/fs/cgroup
need_mount bpf /sys/fs/bpf mode=0700
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname vm

# Modules the kernel package has as modules but the test needs (mkinitramfs --modules).
for ko in /lib/modules/"$KVER"/*.ko; do
	[ -e "$ko" ] || continue
	if insmod "$ko"; then say "loaded module $(basename "$ko")"; else setup_fail="$setup_fail insmod-$(basename "$ko")"; fi
done

# The disks run-matrix attached: the ext4 one of the page-cache views, the
# others (xfs, btrfs) of the mmap checks, each known by its serial, its
# file system's name, and mounted on fs_dir.
fs_dir() { if [ "$1" = ext4 ]; then echo $E; else echo "/mnt/$1"; fi; }
disk_dev() { # FS: the /dev/vdX whose serial is FS
	for s in /sys/block/vd*/serial; do
		if [ ! -r "$s" ] || [ "$(cat "$s")" != "$1" ]; then continue; fi
		s=${s%/serial}
		[ -b "/dev/${s##*/}" ] && echo "/dev/${s##*/}" && return 0
	done
	return 1
}
if [ "${DISK:-0}" = 1 ]; then
	for fs in ext4 $FS_DISKS; do
		dev=''
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			dev=$(disk_dev "$fs") && break
			sleep 0.5
		done
		mkdir -p "$(fs_dir "$fs")"
		if [ -z "$dev" ]; then
			say "no disk with the serial $fs"
		elif ! mount -t "$fs" "$dev" "$(fs_dir "$fs")"; then
			say "cannot mount the $fs disk $dev on $(fs_dir "$fs")"
		fi
	done
fi

# NFS over loopback, set up now: its grace period passes while the first
# modes run (nfs_ready waits for it in run_nfs).
NFS_SETUP=none
if [ -n "$NFS_MODES" ]; then
	. /usr/share/ioacct-vm/nfs.sh
	tn=$(now)
	if nfs_setup $NFS $NFS_SIZE $NFS3; then NFS_SETUP=ok; else NFS_SETUP=fail; say "NFS over loopback could not be set up"; fi
	echo "INFO kernel=$KVER nfs setup took=$(elapsed "$tn")s nfsv3=$NFS3_SETUP${NFS3_COST:+ (of which v3 ${NFS3_COST})}"
fi

# What the test needs from the kernel, reported once.
missing=
for fs in tmpfs cgroup2 cgroup bpf devtmpfs; do
	grep -qw "$fs" /proc/filesystems || missing="$missing fs:$fs"
done
grep -qw '^freezer' /proc/cgroups || missing="$missing cgroup-v1:freezer"
[ -r /sys/kernel/btf/vmlinux ] || missing="$missing btf"
echo "INFO kernel=$KVER cpus=$(nproc) mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo) missing=${missing:-none}"
# Where a VM's time goes (issue 35): the boot (modules and disks included) here,
# then a line per mode (run_mode).
echo "INFO kernel=$KVER booted=$(now)s"
if [ -n "$setup_fail" ]; then
	for mode in $MODES; do
		for cg in v2 v1; do result "$mode" "$cg" "fail reason=VM setup failed:$setup_fail"; done
	done
	bye
fi

# The expectation of 01-exact.sh's workload with this VM's sizes.
write_expect() { # FILE MODE
	wb=$((NW * 1048576))
	[ "$WRONG" = 1 ] && wb=$((wb + 1))
	# The NPAIR calls of each kind: A is the source of sendfile and splice
	# (64 KiB each, to B), of copy (4 KiB, to A) and of xcopy (fails with
	# EXDEV, to B: a failed read on A, a failed write on B); B the source of
	# sendfile into a socket (4 KiB, nothing written on a file). Opens: each
	# call's files; creates: its destinations. Seeks: NSEEK on A/sk and 4 on
	# B/sk (each created by its open), and a failed one (EINVAL) on each.
	{
		echo "$A write_bytes=$((wb + NPAIR * 4096)) writes=$((NW + NPAIR))" \
			"read_bytes=$((NR * 1048576 + NPAIR * (2 * 65536 + 4096))) reads=$((NR + 4 * NPAIR))" \
			"opens=$((2 + NCREATE + NMISS + NEXIST + 5 + 1)) creates=$((1 + NCREATE + 1 + 1))" \
			"mkdirs=$NMKDIR unlinks=$NCREATE rmdirs=$NMKDIR errors=$((NMISS + NEXIST + NPAIR + 1))" \
			"real_errors=$((NEXIST + NPAIR + 1)) op_errors.opens=$((NMISS + NEXIST))" \
			"op_errors.reads=$NPAIR error_classes.notfound=$NMISS" \
			"error_classes.other=$((NEXIST + NPAIR + 1)) seeks=$((NSEEK + 1)) op_errors.seeks=1" \
			"write_sizes.100K_1M=$NW write_sizes.1K_10K=$NPAIR read_sizes.100K_1M=$NR" \
			"read_sizes.10K_100K=$((2 * NPAIR)) read_sizes.1K_10K=$NPAIR"
		echo "$B write_bytes=$((NPW * 4096 + NPAIR * 2 * 65536)) writes=$((NPW + 3 * NPAIR))" \
			"read_bytes=$((NPAIR * 4096)) reads=$NPAIR opens=$((6 + 4 + 1)) creates=$((4 + 3 + 1))" \
			"unlinks=3 errors=$((2 + NPAIR + 1)) real_errors=$((NPAIR + 1)) op_errors.opens=2" \
			"op_errors.writes=$NPAIR error_classes.notfound=2 error_classes.other=$((NPAIR + 1))" \
			"seeks=5 op_errors.seeks=1" \
			"write_sizes.1K_10K=$NPW write_sizes.10K_100K=$((2 * NPAIR)) read_sizes.1K_10K=$NPAIR"
		echo "file:$A/sk opens=1 seeks=$NSEEK"
		echo "file:$B/sk opens=1 seeks=4"
		[ "$2" = auto ] || echo "@ probe_mode=$2"
	} > "$1"
}

# run_work MODE CGROUP: one exactness run under the running daemon.
run_work() {
	mode=$1 cg=$2 W=$R/$2 tw0=$(now)
	mkdir -p "$W"
	for m in $A $B; do
		mkdir -p "$m"
		mount -t tmpfs -o size=600m tmpfs "$m" || { result "$mode" "$cg" "fail reason=cannot mount tmpfs on $m"; mode_failed=1; return; }
	done
	mkdir -p $A/files $A/dirs $B/d
	# Noise from outside the cgroup, on both mounts, for the whole run.
	(
		while :; do
			dd if=/dev/zero of=$A/outside bs=64k count=4 2>/dev/null
			dd if=/dev/zero of=$B/outside bs=4k count=4 2>/dev/null
			cat $A/outside > /dev/null
			ls $A > /dev/null
			usleep 20000
		done
	) &
	noise=$!
	t0=$(now)
	# Standard output must be a pipe, not a file: see iowork.c.
	{
		iorun -c "$R/ioacct.conf" --cgroup-mode "$cg" --json -o "$W/out.json" -- iowork \
			write $A/big 1048576 "$NW" , \
			pwrite $B/shm 4096 "$NPW" , \
			read $A/big 1048576 "$NR" , \
			sendfile $A/big $B/sf 65536 "$NPAIR" , \
			sendfile $B/shm socket 4096 "$NPAIR" , \
			splice $A/big $B/sp 65536 "$NPAIR" , \
			copy $A/big $A/cp 4096 "$NPAIR" , \
			xcopy $A/big $B/x 4096 "$NPAIR" , \
			create $A/files "$NCREATE" , \
			mkdir $A/dirs "$NMKDIR" , \
			unlink $A/files "$NCREATE" , \
			rmdir $A/dirs "$NMKDIR" , \
			missing $A "$NMISS" , \
			exists $A/big "$NEXIST" , \
			seek $A/sk "$NSEEK" , seek $B/sk 4 , \
			cd $B/d , create . 3 , unlink . 3 , missing . 2 2> "$W/iorun.err"
		echo $? > "$W/rc"
	} | cat
	took=$(elapsed "$t0")
	kill $noise
	wait $noise 2>/dev/null
	rc=$(cat "$W/rc")
	tw1=$(now)
	write_expect "$W/expect" "$mode"
	tw2=$(now)
	if [ "$rc" != 0 ]; then
		result "$mode" "$cg" "fail reason=iorun exited with $rc: $(tail -n 3 "$W/iorun.err" | oneline)"
		show_log "iorun stderr, mode $mode, cgroup $cg" "$W/iorun.err" 10
		mode_failed=1
	elif [ ! -s "$W/out.json" ]; then
		# iorun exits with the job's status when it gets no report.
		result "$mode" "$cg" "fail reason=no report: $(tail -n 3 "$W/iorun.err" | oneline)"
		show_log "iorun stderr, mode $mode, cgroup $cg" "$W/iorun.err" 10
		mode_failed=1
	elif check_summary "$W/out.json" "$W/expect" > "$W/check" 2>&1; then
		result "$mode" "$cg" "pass chosen=$(sed -n 's/^OK probe_mode=\([^ ]*\).*/\1/p' "$W/check") time=$took $(sed -n 's/^OK probe_mode=[^ ]* //p' "$W/check")"
	else
		result "$mode" "$cg" "fail reason=counters differ: $(head -n 4 "$W/check" | sed 's/^MISMATCH: //' | oneline)"
		show_log "check, mode $mode, cgroup $cg" "$W/check" 30
		mode_failed=1
	fi
	tw3=$(now)
	for m in $A $B; do umount "$m"; done
	echo "INFO kernel=$KVER mode=$mode cgroup=$cg took=$(elapsed "$tw0")s (before iorun $(awk -v a="$tw0" -v b="$t0" 'BEGIN { printf "%.1f", b - a }')s, iorun ${took}s, expectation $(awk -v a="$tw1" -v b="$tw2" 'BEGIN { printf "%.1f", b - a }')s, check $(awk -v a="$tw2" -v b="$tw3" 'BEGIN { printf "%.1f", b - a }')s)"
}

# ---- The views (issue 14) ----
PCF=$E/data             # 1 MiB of random bytes, made by run-matrix
PCSIZE=1048576
URING_N=65536
vresult() { echo "VRESULT kernel=$KVER mode=$1 view=$2 $3"; }

# vjob NAME EXPECT_LINE -- CMD...: runs CMD as a job and checks its summary
# (mounts not named allowed; the job records the views status names); adds
# to $vbad what differs and to $vseen what the views counted.
vjob() {
	vname=$1
	printf '%s\n@ _others_allowed=1 views=%s\n' "$2" "$views" > "$VW/$vname.expect"
	shift 3
	{
		iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$VW/$vname.json" -- "$@" > /dev/null 2> "$VW/$vname.err"
		echo $? > "$VW/$vname.rc"
	} | cat
	if [ "$(cat "$VW/$vname.rc")" != 0 ]; then
		vbad="$vbad $vname: iorun exited with $(cat "$VW/$vname.rc"): $(tail -n 2 "$VW/$vname.err" | oneline);"
		return
	fi
	check_summary "$VW/$vname.json" "$VW/$vname.expect" > "$VW/$vname.check" 2>&1 ||
		vbad="$vbad $vname: $(grep '^MISMATCH' "$VW/$vname.check" | head -n 4 | sed 's/^MISMATCH: //' | oneline);"
	vseen="$vseen $vname:$(sed -n 's/^SEEN //p' "$VW/$vname.check")"
}

# vdone MODE VIEW: the VRESULT of a view whose jobs ran.
vdone() {
	if [ -n "$vbad" ]; then
		vresult "$1" "$2" "fail reason=$(echo "$vbad" | cut -c1-400)"
	else
		vresult "$1" "$2" "pass seen=$(echo "$vseen" | sed 's/^ //; s/ /;/g')"
	fi
}

# run_views MODE: under the running daemon, the checks of every view it says is on.
run_views() {
	VW=$R/views
	mkdir -p "$VW"
	st=$(iopoke "$R/ioacctd.sock" status 2>&1)
	views=$(echo "$st" | sed -n 's/.* views=\([a-z,-]*\).*/\1/p' | head -n 1)
	echo "VIEWS kernel=$KVER mode=$1 views=${views:-none} reads=$(echo "$st" | sed -n 's/.*kernel reads: \([^;]*\);.*/\1/p' | head -n 1) detail=$(echo "$st" | sed -n 's/.*page-cache views: \([^;]*\);.*/\1/p' | head -n 1)"
	on() { case ",$views," in *,$1,*) return 0 ;; esac; return 1; }

	if ! on uring; then
		vresult "$1" uring off
	elif ! command -v iouring > /dev/null; then
		vresult "$1" uring "fail reason=no iouring in the initramfs (liburing-dev missing at configure time)"
	else
		vbad='' vseen=''
		mkdir -p $U
		mount -t tmpfs -o size=16m tmpfs $U
		vjob uring "$U reads=3 read_bytes=$((3 * URING_N)) read_sizes.10K_100K=3 writes=3 write_bytes=$((3 * URING_N)) write_sizes.10K_100K=3 fsyncs=1 opens=1 creates=1 io_uring_ops=7" -- \
			iouring $U/job $URING_N
		# The metadata requests (tests/integration/25-uring.sh): by absolute
		# paths on $U, relative ones on a second tmpfs.
		mkdir -p $U/abs $U2
		mount -t tmpfs -o size=1m tmpfs $U2
		mkdir -p $U2/rel
		meta="opens=2 creates=1 stats=1 mkdirs=1 renames=1 unlinks=1 rmdirs=1 errors=1 op_errors.opens=1 error_classes.notfound=1"
		vjob umeta "$(printf '%s\n%s' "$U $meta io_uring_ops=8" "$U2 ${meta#opens=2 } opens=4 io_uring_ops=11")" -- \
			iouring --meta $U/abs $U2/rel
		umount $U2
		umount $U
		vdone "$1" uring
	fi

	# Linux AIO (tests/integration/26-aio.sh): each backend counts it, checked
	# here with the views; its O_DIRECT read needs the ext4 disk.
	if ! command -v ioaio > /dev/null; then
		vresult "$1" aio "off reason=no ioaio in the initramfs (libaio-dev missing at configure time)"
	elif ! grep -q " $E ext4 " /proc/mounts; then
		vresult "$1" aio "fail reason=no ext4 disk at $E (virtio_blk, /dev/vda)"
	else
		vbad='' vseen=''
		mkdir -p $U $E/aio
		mount -t tmpfs -o size=16m tmpfs $U
		rm -f $E/aio/job
		aio="reads=5 read_bytes=$((4 * URING_N)) read_sizes.10K_100K=4 writes=8 write_bytes=$((8 * URING_N)) write_sizes.10K_100K=8 fsyncs=1 opens=2 creates=1 errors=1 real_errors=1 error_classes.other=1 op_errors.reads=1"
		# What the reads read, the writes just left in the page cache; a page a write creates is no miss.
		vjob aio "$(printf '%s\n%s' "$U $aio" "$E $aio $(on cache && echo cache_miss_bytes=0)")" -- ioaio $URING_N $U/job $E/aio/job
		umount $U
		vdone "$1" aio
	fi

	if ! grep -q " $E ext4 " /proc/mounts; then
		for v in cache mmap readahead; do
			if on $v; then vresult "$1" $v "fail reason=no ext4 disk at $E (virtio_blk, /dev/vda)"; else vresult "$1" $v off; fi
		done
		case " $FS_MODES " in *" $1 "*) run_mmap_fs "$1" ;; esac
		return
	fi
	# Cold: evicted from outside the job first; warm: read from outside first.
	if on cache; then
		vbad='' vseen=''
		iowork evict $PCF > /dev/null
		vjob cold "$E read_bytes=$PCSIZE reads=1 opens=1 read_sizes.100K_1M=1 cache_miss_bytes=$PCSIZE readahead_bytes=0" -- \
			iowork read $PCF $PCSIZE 1
		iowork read $PCF $PCSIZE 1 > /dev/null
		vjob warm "$E read_bytes=$PCSIZE reads=1 opens=1 read_sizes.100K_1M=1 cache_miss_bytes=0 cache_fills=0 readahead_bytes=0" -- \
			iowork read $PCF $PCSIZE 1
		vdone "$1" cache
	else
		vresult "$1" cache off
	fi
	# The programs fstat() the file to learn its size (stats=1: glibc 2.33 to 2.38
	# make it newfstatat(fd, "", AT_EMPTY_PATH), counted on the file's mount
	# since issue 40's fix of the empty path, as a newer glibc's fstat is).
	# mmap_read_bytes exact (issue 29): every page of the file touched once maps
	# each page once, whatever fault-around or a huge page maps with it; on
	# tmpfs huge=never and huge=always (PMD maps) too, iommap's cases of
	# tests/integration/35-mmap-exact.sh, in fewer combinations.
	if on mmap; then
		vbad='' vseen=''
		iowork evict $PCF > /dev/null
		# The file's record (issue 26) has the same bytes (check.awk's "file:" lines).
		vjob mcold "$(printf '%s\n%s' "$E opens=1 stats=1 $(on cache && echo cache_miss_bytes=$PCSIZE) mmap_faults>=1 mmap_read_bytes=$PCSIZE" \
			"file:$PCF opens=1 $(on cache && echo cache_miss_bytes=$PCSIZE) mmap_bytes=$PCSIZE")" -- \
			iowork mmapread $PCF
		iowork read $PCF $PCSIZE 1 , mmapread $PCF > /dev/null
		vjob mwarm "$(printf '%s\n%s' "$E opens=1 stats=1 $(on cache && echo cache_miss_bytes=0) mmap_faults>=1 mmap_read_bytes=$PCSIZE" \
			"file:$PCF opens=1 $(on cache && echo cache_miss_bytes=0) mmap_bytes=$PCSIZE")" -- \
			iowork mmapread $PCF
		if command -v iommap > /dev/null; then
			for huge in never always; do
				mkdir -p $U
				if ! mount -t tmpfs -o size=16m,huge=$huge tmpfs $U; then
					vbad="$vbad tmpfs huge=$huge: cannot mount;"
					continue
				fi
				dd if=/dev/urandom of=$U/big bs=1048576 count=4 2> /dev/null
				dd if=/dev/urandom of=$U/small bs=100000 count=1 2> /dev/null
				vjob "mmap-$huge-big" "$(printf '%s\n%s' "$U opens=1 stats=1 mmap_read_bytes=4194304" \
					"file:$U/big opens=1 mmap_bytes=4194304")" -- iommap $U/big seq shared
				vjob "mmap-$huge-bigr" "$(printf '%s\n%s' "$U opens=1 stats=1 mmap_read_bytes=4194304" \
					"file:$U/big opens=1 mmap_bytes=4194304")" -- iommap $U/big rand private
				sw=$(((100000 + 4095) / 4096 * 4096))
				vjob "mmap-$huge-small" "$(printf '%s\n%s' "$U opens=1 stats=1 mmap_read_bytes=$sw" \
					"file:$U/small opens=1 mmap_bytes=$sw")" -- iommap $U/small rand shared
				umount $U
			done
		else
			vbad="$vbad no iommap in the initramfs;"
		fi
		vdone "$1" mmap
	elif on mmap-nohook; then
		vresult "$1" mmap "off reason=mmap-nohook: no fentry nor kprobe on set_pte_range/do_set_pmd here"
	else
		vresult "$1" mmap off
	fi
	if on readahead; then
		vbad='' vseen=''
		iowork evict $PCF > /dev/null
		vjob chunks "$E read_bytes=$PCSIZE reads=$((PCSIZE / 16384)) opens=1 read_sizes.10K_100K=$((PCSIZE / 16384)) $(on cache && echo cache_miss_bytes=$PCSIZE) readahead_bytes>=1 readahead_bytes<=$PCSIZE readahead_sync>=1" -- \
			iowork read $PCF 16384 $((PCSIZE / 16384))
		vdone "$1" readahead
	else
		vresult "$1" readahead off
	fi
	case " $FS_MODES " in *" $1 "*) run_mmap_fs "$1" ;; esac
}

# ---- Exact mmap reads on the disk file systems (issue 29) ----
# run_mmap_fs MODE (from run_views): on the ext4 disk and on each of
# $FS_DISKS, a 16 MiB file (large folios on xfs since 5.18, up to PMD-sized
# ones) and one of 100000 bytes (a partial last page), written here, each
# read whole through a mapping (iommap) in file order and shuffled,
# MAP_SHARED and MAP_PRIVATE, cold (evicted first): mmap_read_bytes is
# exactly the file's size in pages, and so is cache_miss_bytes where the
# page-cache view is on, as 35-mmap-exact.sh checks on the host; and so
# are the file's record's (issue 26) mmap_bytes and cache_miss_bytes.
MMBIG=16777216
MMSMALL=100000
run_mmap_fs() {
	dd if=/dev/urandom of=/tmp/mm-big bs=1048576 count=$((MMBIG / 1048576)) 2> /dev/null
	dd if=/dev/urandom of=/tmp/mm-small bs=$MMSMALL count=1 2> /dev/null
	for fs in ext4 $FS_DISKS; do
		d=$(fs_dir "$fs")
		if ! on mmap; then
			vresult "$1" "mmap-$fs" off
			continue
		elif ! grep -q " $d $fs " /proc/mounts; then
			vresult "$1" "mmap-$fs" "fail reason=no $fs disk at $d (module $fs, virtio_blk)"
			continue
		elif ! command -v iommap > /dev/null; then
			vresult "$1" "mmap-$fs" "fail reason=no iommap in the initramfs"
			continue
		fi
		vbad='' vseen='' t0=$(now)
		mkdir -p "$d/mm"
		{ cp /tmp/mm-big "$d/mm/big" && cp /tmp/mm-small "$d/mm/small"; } ||
			vbad="$vbad cannot write the files on $d;"
		sync
		echo 3 > /proc/sys/vm/drop_caches
		for f in big small; do
			want=$((($(wc -c < "$d/mm/$f") + 4095) / 4096 * 4096))
			for order in seq rand; do
				for map in shared private; do
					iowork evict "$d/mm/$f" > /dev/null
					vjob "$fs-$f-$order-$map" "$(printf '%s\n%s' \
						"$d opens=1 stats=1 $(on cache && echo cache_miss_bytes=$want) mmap_read_bytes=$want" \
						"file:$d/mm/$f opens=1 $(on cache && echo cache_miss_bytes=$want) mmap_bytes=$want")" -- \
						iommap "$d/mm/$f" $order $map
				done
			done
		done
		rm -rf "$d/mm"
		echo "INFO kernel=$KVER mode=$1 mmap-$fs took=$(elapsed "$t0")s"
		vdone "$1" "mmap-$fs"
	done
	rm -f /tmp/mm-big /tmp/mm-small
}

# ---- NFS (the checks of tests/vm/nfs/*.sh) ----
nresult() { echo "NRESULT kernel=$KVER mode=$mode check=$1 $2"; }

# nfs_check_modes CHECK: the modes a check runs in: those of its "# nfs-modes:"
# line, else NFS_MODES (tests/vm/run-matrix reads the same line).
nfs_check_modes() {
	m=$(sed -n 's/^# nfs-modes: *//p' "$1" | head -n 1)
	echo "${m:-$NFS_MODES}"
}

# run_nfs MODE: under the running daemon, each NFS check of this mode in a
# subshell of its own (it sees this file's functions and $R, $NFS, $mode; it
# prints its NRESULT line with nresult NAME "pass|fail|skip ...").
# A check with a "# nfs-daemon: own" line runs with the mode's daemon
# stopped (it starts its own with daemon_start and stops it, and leaves
# NFS mounted on $NFS), which starts again after it.
run_nfs() {
	nodaemon=''
	for c in /usr/share/ioacct-vm/nfs/*.sh; do
		[ -e "$c" ] || continue
		case " $(nfs_check_modes "$c") " in *" $1 "*) ;; *) continue ;; esac
		name=$(basename "$c" .sh)
		if [ $NFS_SETUP != ok ]; then
			nresult "$name" "fail reason=NFS over loopback could not be set up"
			continue
		fi
		if [ -n "$nodaemon" ]; then
			nresult "$name" "fail reason=$nodaemon"
			continue
		fi
		if ! nfs_ready $NFS; then
			nresult "$name" "fail reason=NFS over loopback: no file can be made on $NFS after 60 s"
			continue
		fi
		own=$(sed -n 's/^# nfs-daemon: *//p' "$c" | head -n 1)
		tc=$(now)
		if [ "$own" = own ]; then
			daemon_stop
			[ $drc = 0 ] || echo "VM: ioacctd (mode $1) exited with status $drc when stopped for check $name"
		fi
		(. "$c")
		if [ "$own" = own ] && ! daemon_start "$R/ioacctd.log"; then
			nodaemon="ioacctd did not start again after check $name: $why"
			echo "VM: $nodaemon"
		fi
		echo "INFO kernel=$KVER mode=$1 nfs check $name took=$(elapsed "$tc")s"
	done
}

# daemon_start LOG: ioacctd forced to $mode with $R/ioacct.conf, its output
# added to LOG; 0 once it answers (dpid), else 1 with why and verdict
# (unavailable: this kernel does not allow the mode; fail) and no daemon.
daemon_start() {
	ds0=$(now)
	ioacctd -f -c "$R/ioacct.conf" --probe-mode "$mode" >> "$1" 2>&1 &
	dpid=$!
	while [ "$(awk -v a="$ds0" -v b="$(now)" 'BEGIN { print (b - a < '"$START_TIMEOUT"') }')" = 1 ]; do
		iopoke "$R/ioacctd.sock" status 2>/dev/null | grep -q '^status=0' && return 0
		kill -0 $dpid 2>/dev/null || break
		usleep 100000
	done
	if kill -0 $dpid 2>/dev/null; then
		why="ioacctd not answering after ${START_TIMEOUT} s"
		kill -TERM $dpid
	else
		why=$(sed -n 's/^ioacctd: error: //p' "$1" | tail -n 1)
		[ -n "$why" ] || why="ioacctd exited at start: $(tail -n 1 "$1")"
	fi
	wait $dpid 2>/dev/null
	dpid=''
	case $why in
	*"is not available on this kernel"* | "no probe backend works"*) verdict=unavailable ;;
	*) verdict=fail ;;
	esac
	return 1
}

# daemon_stop: stops daemon_start's daemon; drc: its exit status (1 when none ran).
daemon_stop() {
	drc=1
	[ -n "$dpid" ] || return 0
	kill -TERM $dpid
	wait $dpid
	drc=$?
	dpid=''
}

# run_mode MODE: a daemon forced to MODE, the v2 run, the v1 run.
run_mode() {
	mode=$1 R=/run/ioacct-$1 mode_failed=0 tmode=$(now)
	mkdir -p "$R"
	# ioacctd's state directory, its account's (the packages give it /var/lib/ioacct).
	chown 998:998 "$R"
	cat > "$R/ioacct.conf" <<CONF
socket = $R/ioacctd.sock
db = $R/ioacct.db
pidfile = $R/ioacctd.pid
bpf_pin_dir = /sys/fs/bpf/$mode
cgroup_parent = ioacct-vm-$mode
cgroup_mode = v2
drain_interval = 0.2
CONF
	# Every mode but tracepoint runs with the default detach_when_idle (auto:
	# fentry and kprobe stay attached). Forced to yes, fentry and kprobe
	# detach and attach correctly on both kernels (run by hand), but attaching
	# 64 programs under single-threaded TCG outlasts iorun's registration
	# timeout. The tracepoint run stays attached (auto would detach): its patch
	# site, syscall_trace_enter, is the one every syscall runs, where TCG was
	# seen to oops; tests/integration/10-idle tests that detaching on the host.
	# So does syscall-tp: the per-syscall tracepoints patch the same site.
	case $mode in tracepoint | syscall-tp) echo "detach_when_idle = no" >> "$R/ioacct.conf" ;; esac
	# /metrics for the NFS checks (nfs/metrics.sh), when ioacctd has it (libmicrohttpd).
	[ -n "$NFS_MODES" ] && grep -q libmicrohttpd /usr/bin/ioacctd &&
		echo "metrics_listen = 127.0.0.1:9464" >> "$R/ioacct.conf"

	t0=$(now)
	: > "$R/ioacctd.log"
	if ! daemon_start "$R/ioacctd.log"; then
		for cg in v2 v1; do result "$mode" "$cg" "$verdict reason=$(echo "$why" | oneline)"; done
		[ $verdict = fail ] && show_log "ioacctd, mode $mode" "$R/ioacctd.log"
		return
	fi
	echo "INFO kernel=$KVER mode=$mode started=$(elapsed "$t0")s $(sed -n 's/^ioacctd: probe mode /probe_mode=/p' "$R/ioacctd.log" | head -n 1)"
	sed -n 's/^ioacctd: warning: /INFO kernel='"$KVER"' mode='"$mode"' ioacctd warning: /p' "$R/ioacctd.log" | head -n 5
	# What its start cost (the verifier under TCG, mostly).
	sed -n -e 's/^ioacctd: \(probes: .*\)/INFO kernel='"$KVER"' mode='"$mode"' \1/p' \
		-e 's/^ioacctd: MPI-IO: .*(\(its probes loaded in .*\))$/INFO kernel='"$KVER"' mode='"$mode"' MPI-IO and HDF5 probes: \1/p' \
		-e 's/^ioacctd: RPC: sunrpc.s tracepoints attached: .*(\(.*\))$/INFO kernel='"$KVER"' mode='"$mode"' RPC probes: \1/p' \
		-e 's/^ioacctd: \(FMODE_CREATED .*\)/INFO kernel='"$KVER"' mode='"$mode"' \1/p' "$R/ioacctd.log"
	# Why the verifier refused a program (a view: the daemon starts without
	# them): the end of its log, which ioacctd keeps (lib/core/log.c).
	grep -aB12 'END PROG LOAD LOG' "$R/ioacctd.log" | head -n 40 | cut -c1-300 |
		sed 's/^/INFO kernel='"$KVER"' mode='"$mode"' refused: /'

	dmode=$mode
	run_cgroups "$mode"
	# The daemon of auto serves the mode it chose when that mode is to run too
	# (issue 35): that mode's own daemon would load the same programs again (the
	# verifier under TCG: 75 to 300 s of a VM's time for fentry). Its rows come
	# from their own runs under this daemon, forced modes other than that one
	# keep theirs.
	chosen=$(sed -n 's/^OK probe_mode=\([a-z-]*\).*/\1/p' "$R/v2/check" 2>/dev/null)
	if [ "$mode" = auto ] && [ -n "$chosen" ] && [ "$chosen" != auto ] &&
		case " $MODES " in *" $chosen "*) true ;; *) false ;; esac; then
		SERVED="$SERVED $chosen"
		echo "INFO kernel=$KVER mode=$chosen served by the daemon of mode auto (it chose $chosen)"
		mode=$chosen
		run_cgroups "$mode"
	fi
	twork=$(now)
	case " $VIEW_MODES " in *" $mode "*) run_views "$mode" ;; esac
	[ -n "$NFS_MODES" ] && run_nfs "$mode"
	tviews=$(elapsed "$twork")

	t0=$(now)
	daemon_stop
	echo "INFO kernel=$KVER mode=$mode stopped=$(elapsed "$t0")s exit=$drc took=$(elapsed "$tmode")s (views, file systems and NFS: ${tviews}s)"
	[ $drc = 0 ] || echo "VM: ioacctd (mode $mode) exited with status $drc when stopped"
	# The daemon's own account of a mode that failed.
	if [ $drc != 0 ] || [ $mode_failed = 1 ]; then
		show_log "ioacctd, mode $mode" "$R/ioacctd.log"
	fi
	rmdir /sys/fs/cgroup/ioacct-vm-"$dmode" 2>/dev/null
}

# run_cgroups MODE: under the running daemon, the v2 run and the v1 run.
run_cgroups() {
	run_work "$1" v2
	mkdir -p $FREEZER
	if mount -t cgroup -o freezer freezer $FREEZER; then
		run_work "$1" v1
		rmdir $FREEZER/ioacct-vm-"$dmode" 2>/dev/null
		umount $FREEZER
	else
		result "$1" v1 "fail reason=cannot mount the cgroup v1 freezer hierarchy"
		mode_failed=1
	fi
}

SERVED=''
for m in $MODES; do
	case " $SERVED " in *" $m "*) continue ;; esac
	run_mode "$m"
done
bye
