# SPDX-License-Identifier: GPL-2.0-or-later
# NFS over loopback in a test VM (busybox sh; sourced by init.sh and
# bench-init.sh, which define say()): an NFSv4.2 server (kernel nfsd)
# exporting a tmpfs, mounted over TCP to 127.0.0.1, and where the initramfs
# has rpcbind, rpc.mountd and exportfs (mkinitramfs -n) and a third argument
# asks for it, the same export mounted with NFSv3 too. Without those
# daemons the export cache is filled by hand through /proc/net/rpc (NFSv4
# needs no rpcbind nor mountd); with them mountd fills it, as on a server,
# and answers the v3 client's MOUNT call. Needs the modules nfsd and nfsv4
# (mkinitramfs -m "nfsd nfsv4"), and nfsv3 for the v3 mount.
#
#   nfs_setup DIR SIZE [DIR3]
#                        the server up and its export mounted on DIR (SIZE: the
#                        exported tmpfs's size, "600m"), and with DIR3 and the
#                        daemons, with vers=3 on DIR3 (NFS3_SETUP: ok, absent
#                        or fail; NFS3_COST: the seconds that took); 1 when the
#                        v4.2 mount cannot be made
#   nfs_ready DIR        waits (60 s at most) until a file can be made on DIR:
#                        NFSv4's grace period (10 s here) must end first, so
#                        set up early and wait late
#   nfs_mounts           a job's mounts, their types and stats
#   nfs_teardown DIR [DIR3]
#                        nfs_setup undone but for the exported tmpfs: DIR
#                        (and DIR3) unmounted, the server stopped (rpcbind
#                        and rpc.mountd too), /proc/fs/nfsd
#                        unmounted; the export cache may hold /srv/nfs until
#                        nfsd's module goes (seen on 6.1)
#   rpc_ms, rpc_job, rpc_compare, own, rpc_issue_run, rpc_issue_job
#                        the RPC checks' readers of mountstats and of a job's
#                        RPCs, and the issue's job checked with them
#                        (tests/vm/nfs/rpc*.sh, issue 40), below

NFS3_SETUP=absent
nfs_setup() {
	grep -qw nfsd /proc/filesystems || { say "no nfsd file system (module not loaded)"; return 1; }
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
	mkdir -p /srv/nfs /proc/fs/nfsd "$1"
	mount -t tmpfs -o "size=$2" nfsexport /srv/nfs || return 1
	mount -t nfsd nfsd /proc/fs/nfsd || return 1
	# A short grace period: the server has no client records to recover.
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	if [ -n "${3:-}" ] && command -v rpcbind > /dev/null && command -v rpc.mountd > /dev/null &&
		command -v exportfs > /dev/null && command -v rpcinfo > /dev/null; then
		nfs3_t0=$(nfs_uptime)
		nfs3_serve || { NFS3_SETUP=fail; nfs_export_by_hand || return 1; }
		nfs3_t1=$(nfs_uptime)
	else
		[ -z "${3:-}" ] || say "NFSv3: no rpcbind, rpc.mountd, exportfs or rpcinfo in the initramfs (mkinitramfs -n)"
		nfs_export_by_hand || return 1
	fi
	echo 4 > /proc/fs/nfsd/threads || { nfs_why "nfsd's threads did not start"; return 1; }
	# mountd answers the export cache's upcalls: started once nfsd runs.
	if [ $NFS3_SETUP = serving ]; then
		nfs3_t2=$(nfs_uptime) # then mountd's seconds
		rpc.mountd -F -d auth -d call > /run/rpc.mountd.log 2>&1 &
		NFS3_PIDS="$NFS3_PIDS $!"
		nfs3_wait_mountd || { NFS3_SETUP=fail; nfs_why "NFSv3: rpc.mountd did not register"; }
		nfs3_t2=$(awk -v a="$nfs3_t2" -v b="$(nfs_uptime)" 'BEGIN { print b - a }')
	fi
	mount -t nfs4 -o vers=4.2,addr=127.0.0.1,clientaddr=127.0.0.1 127.0.0.1:/ "$1" ||
		{ nfs_why "the NFSv4.2 mount on $1 failed"; return 1; }
	if [ $NFS3_SETUP = serving ]; then
		nfs3_t3=$(nfs_uptime)
		mkdir -p "$3"
		# nolock: no lockd nor statd on the client's side (no locks are taken).
		if mount -t nfs -o vers=3,proto=tcp,nolock,addr=127.0.0.1,mountaddr=127.0.0.1 127.0.0.1:/srv/nfs "$3"; then
			NFS3_SETUP=ok
		else
			NFS3_SETUP=fail
			nfs_why "NFSv3: the mount on $3 failed"
		fi
		# What v3 added: its daemons' start and its mount.
		NFS3_COST=$(awk -v a="$nfs3_t0" -v b="$nfs3_t1" -v m="$nfs3_t2" -v d="$nfs3_t3" -v e="$(nfs_uptime)" \
			'BEGIN { printf "%.1fs", b - a + m + e - d }')
	fi
	return 0
}

nfs_uptime() { read -r up _ < /proc/uptime; echo "$up"; }

# nfs_why WHAT: says what failed, with the kernel's and the daemons' last words.
nfs_why() {
	say "$1; dmesg: $(dmesg | tail -n 4 | tr '\n' '|')"
	for l in /run/rpcbind.log /run/exportfs.log /run/rpc.mountd.log; do
		[ -s $l ] && say "$l: $(tail -n 4 $l | tr '\n' '|')"
	done
	return 0
}

# What mountd would answer, written into the export cache: 127.0.0.1 is in
# "localdomain", which may use /srv/nfs (fsid 0, the NFSv4 root) read-write,
# no root squash, async, no subtree check, insecure ports: flags 0x2412.
nfs_export_by_hand() {
	echo "-3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions || return 1
	exp=2147483647
	printf '%s\n' "nfsd 127.0.0.1 $exp localdomain" > /proc/net/rpc/auth.unix.ip/channel || return 1
	printf '%s\n' "localdomain 1 \\x00000000 $exp /srv/nfs" > /proc/net/rpc/nfsd.fh/channel || return 1
	printf '%s\n' "localdomain /srv/nfs $exp 9234 0 0 0" > /proc/net/rpc/nfsd.export/channel || return 1
}

# nfs3_serve: rpcbind up (nfsd registers NFSv3 and lockd with it when its
# threads start, and fails to without it), NFSv3 on, the export in
# /etc/exports with the same options as by hand, in mountd's etab.
# NFS3_SETUP=serving when done.
nfs3_serve() {
	mkdir -p /run/rpcbind /var/lib/nfs
	chown _rpc /run/rpcbind
	: > /var/lib/nfs/etab
	: > /var/lib/nfs/rmtab
	rpcbind -f > /run/rpcbind.log 2>&1 &
	NFS3_PIDS=$!
	t=0
	# Its socket, then its TCP port 111 listening (0x6F, state 0A).
	until [ -S /run/rpcbind.sock ] && grep -q ':006F 00000000:0000 0A' /proc/net/tcp; do
		t=$((t + 1))
		[ $t -lt 100 ] || { nfs_why "NFSv3: rpcbind did not start"; return 1; }
		usleep 100000
	done
	echo "+3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions || return 1
	echo "/srv/nfs 127.0.0.1(rw,fsid=0,insecure,no_root_squash,async,no_subtree_check,no_wdelay)" > /etc/exports
	exportfs -r > /run/exportfs.log 2>&1 || { nfs_why "NFSv3: exportfs -r failed"; return 1; }
	NFS3_SETUP=serving
}

# nfs3_wait_mountd: until mountd answers MOUNT v3 over TCP, found through rpcbind (10 s at most).
nfs3_wait_mountd() {
	t=0
	until rpcinfo -T tcp 127.0.0.1 100005 3 > /dev/null 2>&1; do
		t=$((t + 1))
		[ $t -lt 100 ] || return 1
		usleep 100000
	done
}

nfs_teardown() {
	if [ -n "${2:-}" ] && grep -q " $2 " /proc/mounts; then umount "$2" || return 1; fi
	umount "$1" || return 1
	echo 0 > /proc/fs/nfsd/threads
	# mountd holds sunrpc's cache channels open (the module could not go); both
	# daemons end, nfs_setup with DIR3 starts them again.
	for p in ${NFS3_PIDS:-}; do kill "$p" 2> /dev/null; done
	for p in ${NFS3_PIDS:-}; do
		t=0
		while [ -e /proc/"$p" ] && [ $t -lt 100 ]; do t=$((t + 1)); usleep 100000; done
	done
	NFS3_PIDS=''
	rm -f /run/rpcbind.sock
	umount /proc/fs/nfsd
}

nfs_ready() {
	t=0
	until echo x > "$1/.probe" 2>/dev/null; do
		t=$((t + 1))
		[ $t -lt 60 ] || return 1
		sleep 1
	done
	rm -f "$1/.probe"
	say "NFS: $(grep " $1 " /proc/mounts)"
}

# rpc_issue_run DIR P: the issue's job under iorun on DIR, a directory on the
# mount $NFS that nothing else uses: writes 8 MiB with conv=fsync, drops the
# caches and reads it back cold, makes a directory of 100 small files, stats
# them cold and lists them. Its summary in P.json, its status in P.rc, its
# errors in P.err, mountstats before and after in P.ms0 and P.ms1; sunrpc's
# events traced meanwhile (rpc_trace, for rpc_submitters).
rpc_issue_run() {
	sync
	rpc_ms "$2.ms0"
	rpc_trace on
	{
		iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$2.json" -- sh -c "
			dd if=/dev/zero of=$1/big bs=1M count=8 conv=fsync 2> /dev/null &&
			echo 3 > /proc/sys/vm/drop_caches && cat $1/big > /dev/null &&
			mkdir $1/d && i=0 &&
			while [ \$i -lt 100 ]; do echo x > $1/d/f\$i; i=\$((i + 1)); done &&
			echo 3 > /proc/sys/vm/drop_caches && i=0 &&
			while [ \$i -lt 100 ]; do stat $1/d/f\$i > /dev/null; i=\$((i + 1)); done &&
			ls $1/d > /dev/null" > /dev/null 2> "$2.err"
		echo $? > "$2.rc"
	} | cat
	rpc_ms "$2.ms1"
	rpc_trace off
}

# nfs_mounts JSON: a summary's mounts, "path type stats=N" each (the per-file
# records after them left out).
nfs_mounts() {
	awk '/"files": *\[/ { exit }
	     /"mount": *"/ { sub(/.*"mount": *"/, ""); sub(/".*/, ""); p = $0 }
	     p != "" && /"fs_type": *"/ { sub(/.*"fs_type": *"/, ""); sub(/".*/, ""); t = $0 }
	     p != "" && /"stats": *[0-9]/ { sub(/.*"stats": */, ""); sub(/[^0-9].*/, "");
		print p " " t " stats=" $0; p = "" }' "$1"
}

# rpc_ms OUT: the NFS mount's per-procedure "NAME ops bytes_sent bytes_recv" of mountstats.
rpc_ms() {
	awk -v m="$NFS" '$1 == "device" { on = $5 == m; ops = 0; next }
		on && /per-op statistics/ { ops = 1; next }
		on && ops && NF >= 9 && $1 ~ /:$/ { sub(/:$/, "", $1); print $1, $2, $5, $6 }' \
		/proc/self/mountstats > "$1"
}

# rpc_job JSON OUT: the NFS mount's "KIND NAME calls bytes_sent bytes_recv
# program version" of a job's summary, KIND rpc (its own) or
# rpc_unattributed. A JSON reader by lines (the summary's strings never span
# one), for busybox awk.
rpc_job() {
	awk -v m="$NFS" '
	function emit(val,   i, p) {
		p = key[1]
		for (i = 2; i <= d; i++)
			p = p "." key[i]
		v[p] = val
	}
	{
		line = $0; n = length(line); p = 1
		while (p <= n) {
			c = substr(line, p, 1)
			if (c == "{" || c == "[") {
				d++; arr[d] = c == "["; key[d] = arr[d] ? 0 : ""; want[d] = 1; p++
			} else if (c == "}" || c == "]") {
				d--; p++
			} else if (c == ",") {
				if (arr[d]) key[d]++; else want[d] = 1
				p++
			} else if (c == "\"") {
				s = ""; p++
				while (p <= n && (c = substr(line, p, 1)) != "\"") {
					if (c == "\\") { s = s substr(line, p, 2); p += 2; continue }
					s = s c; p++
				}
				p++
				if (!arr[d] && want[d]) { key[d] = s; want[d] = 0 } else emit(s)
			} else if (index(" \t\r:", c)) {
				p++
			} else {
				s = ""
				while (p <= n && !index(" \t\r,}]", c = substr(line, p, 1))) { s = s c; p++ }
				emit(s)
			}
		}
	}
	END {
		for (k in v)
			if (k ~ /^mounts\.[0-9]+\.mount$/ && v[k] == m) { split(k, a, "."); i = a[2] }
		if (i == "") {
			exit 1 # (braced: busybox awk takes no statement after exit alone under an if)
		}
		for (k in v) {
			if (split(k, a, ".") != 5 || a[1] != "mounts" || a[2] != i || a[5] != "calls")
				continue
			if (a[3] != "rpc" && a[3] != "rpc_unattributed")
				continue
			b = "mounts." i "." a[3] "." a[4] "."
			print a[3], a[4], v[k], v[b "bytes_sent"] + 0, v[b "bytes_recv"] + 0, v[b "program"] + 0, v[b "version"] + 0
		}
	}' "$1" > "$2"
}

# rpc_compare BEFORE AFTER OWN JOBS...: every procedure's change in mountstats
# is the jobs' RPCs (each file of rpc_job) on the mount; procedures of OWN
# (a space-separated list) are never unattributed. The client's lease
# renewals (RPC_LEASE, default SEQUENCE and RENEW: its state manager's, every
# lease period, no job's doing) may also fall between reading mountstats and
# a job's registration or after its end, where no job's life holds them:
# for those the jobs' RPCs may be fewer, never more, and what no life held
# is said as "+outside:NAME=calls". Prints MISMATCH lines, then "OK
# NAME=calls,..." of the procedures that changed.
rpc_compare() {
	b=$1 a=$2 own=$3
	shift 3
	awk -v own=" $own " -v lease=" ${RPC_LEASE-SEQUENCE RENEW} " '
	FILENAME == ARGV[1] { o0[$1] = $2; s0[$1] = $3; r0[$1] = $4; next }
	FILENAME == ARGV[2] { o1[$1] = $2; s1[$1] = $3; r1[$1] = $4; names[$1] = 1; next }
	{
		c[$2] += $3; s[$2] += $4; r[$2] += $5; names[$2] = 1
		if ($1 == "rpc_unattributed" && index(own, " " $2 " "))
			print "MISMATCH: " $2 ": " $3 " unattributed (" FILENAME ")"
	}
	END {
		for (p in names) {
			dc = o1[p] - o0[p]; ds = s1[p] - s0[p]; dr = r1[p] - r0[p]
			if (index(lease, " " p " ") && c[p] + 0 <= dc && s[p] + 0 <= ds && r[p] + 0 <= dr &&
			    (c[p] + 0 < dc || s[p] + 0 < ds || r[p] + 0 < dr)) {
				out = out " +outside:" p "=" dc - c[p]
				if (c[p] + 0)
					ok = ok (ok ? "," : "") p "=" c[p]
			} else if (dc != c[p] + 0 || ds != s[p] + 0 || dr != r[p] + 0)
				print "MISMATCH: " p ": mountstats " dc " calls " ds " sent " dr \
					" received, the jobs " c[p] + 0 " " s[p] + 0 " " r[p] + 0
			else if (dc)
				ok = ok (ok ? "," : "") p "=" dc
		}
		print "OK " ok out
	}' "$b" "$a" "$@"
}

# own JOB NAME: the calls of procedure NAME the job sent itself.
own() { awk -v p="$2" '$1 == "rpc" && $2 == p { n += $3 } END { print n + 0 }' "$1"; }

# rpc_trace on|off: sunrpc's rpc_task_begin and rpc_request events into the
# trace buffer (emptied at on), for rpc_submitters; nothing without them.
rpc_trace() {
	tr=/sys/kernel/tracing
	[ -d $tr/events/sunrpc/rpc_task_begin ] || return 0
	[ "$1" = on ] && echo > $tr/trace
	for e in rpc_task_begin rpc_request; do
		echo $([ "$1" = on ] && echo 1 || echo 0) > $tr/events/sunrpc/$e/enable
	done
}

# rpc_submitters "PROC...": who submitted those procedures' RPCs in the trace
# (rpc_task_begin runs in the submitter): "PROC@comm-pid=N ...".
rpc_submitters() {
	awk -v want=" $1 " '
	{ id = ""; if (match($0, /task:[0-9a-f]+@[0-9a-f]+/)) id = substr($0, RSTART, RLENGTH) }
	/ rpc_task_begin: / { who[id] = $1 }
	/ rpc_request: / {
		n = split($0, f, " ")
		for (i = 2; i <= n; i++)
			if (f[i] ~ /^\(a?sync\)$/)
				p = f[i - 1]
		if (index(want, " " p " "))
			c[p "@" who[id]]++
	}
	END { for (k in c) printf "%s=%d ", k, c[k] }' /sys/kernel/tracing/trace 2> /dev/null
}

# rpc_issue_job DIR W NAME: issue 40's job (rpc_issue_run, W/NAME) under iorun (needs $R, $NFS and
# init.sh's oneline): writes 8 MiB with conv=fsync into DIR (empty, on $NFS),
# drops the caches and reads it back cold, makes 100 small files in DIR/d,
# stats them cold and lists them. For every procedure whose count changed over
# the job, its calls, bytes sent and received on the mount (the JSON's rpc
# object) plus those no job sent (rpc_unattributed) are mountstats' change;
# the procedures the job causes are its own, none unattributed, and it has
# WRITEs, OPENs, CLOSEs and LOOKUPs. Files W/NAME.*. Returns 0 with rpc_ok
# the procedures that changed ("WRITE=164,..."), else 1 with rpc_why.
rpc_issue_job() {
	rj_w=$2/$3
	rpc_issue_run "$1" "$rj_w"
	if [ "$(cat "$rj_w.rc")" != 0 ]; then
		rpc_why="iorun exited with $(cat "$rj_w.rc"): $(tail -n 2 "$rj_w.err" | oneline)"
		return 1
	fi
	echo "INFO $3 mountstats over the job: $(rpc_compare "$rj_w.ms0" "$rj_w.ms1" "" /dev/null |
		sed -n 's/^MISMATCH: \([^:]*\): mountstats \([0-9]*\) calls.*/\1=\2/p' | tr '\n' ' ')"
	rpc_job "$rj_w.json" "$rj_w.rpc" || { rpc_why="no mount $NFS in the summary"; return 1; }
	rpc_compare "$rj_w.ms0" "$rj_w.ms1" "WRITE READ READ_PLUS COMMIT OPEN CLOSE LOOKUP ACCESS GETATTR READDIR CREATE" \
		"$rj_w.rpc" > "$rj_w.cmp"
	if grep -q '^MISMATCH' "$rj_w.cmp"; then
		echo "INFO $3 job: $(oneline < "$rj_w.rpc")"
		echo "INFO $3 submitters: $(rpc_submitters "$(awk '$1 == "rpc_unattributed" { print $2 }' "$rj_w.rpc" | tr '\n' ' ')")"
		rpc_why=$(grep '^MISMATCH' "$rj_w.cmp" | head -n 4 | sed 's/^MISMATCH: //' | oneline)
		return 1
	fi
	for rj_p in WRITE OPEN CLOSE LOOKUP; do
		[ "$(own "$rj_w.rpc" $rj_p)" -gt 0 ] || { rpc_why="no $rj_p of its own: $(oneline < "$rj_w.rpc")"; return 1; }
	done
	rpc_ok=$(sed -n 's/^OK //p' "$rj_w.cmp")
}
