# SPDX-License-Identifier: GPL-2.0-or-later
# NFS over loopback in a test VM (busybox sh; sourced by init.sh and
# bench-init.sh, which define say()): an NFSv4.2 server (kernel nfsd, no
# rpcbind, no mountd: the export cache is filled by hand through
# /proc/net/rpc) exporting a tmpfs, mounted over TCP to 127.0.0.1. Needs the
# modules nfsd and nfsv4 (mkinitramfs -m "nfsd nfsv4").
#
#   nfs_setup DIR SIZE   the server up and its export mounted on DIR (SIZE: the
#                        exported tmpfs's size, "600m"); 1 when it cannot be
#   nfs_ready DIR        waits (60 s at most) until a file can be made on DIR:
#                        NFSv4's grace period (10 s here) must end first, so
#                        set up early and wait late
#   nfs_teardown DIR     nfs_setup undone but for the exported tmpfs: DIR
#                        unmounted, the server stopped, /proc/fs/nfsd
#                        unmounted; the export cache may hold /srv/nfs until
#                        nfsd's module goes (seen on 6.1)
#   rpc_ms, rpc_job, rpc_compare, own, rpc_issue_job
#                        the RPC checks' readers of mountstats and of a job's
#                        RPCs, and the issue's job checked with them
#                        (tests/vm/nfs/rpc*.sh, issue 40), below

nfs_setup() {
	grep -qw nfsd /proc/filesystems || { say "no nfsd file system (module not loaded)"; return 1; }
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
	mkdir -p /srv/nfs /proc/fs/nfsd "$1"
	mount -t tmpfs -o "size=$2" nfsexport /srv/nfs || return 1
	mount -t nfsd nfsd /proc/fs/nfsd || return 1
	# A short grace period: the server has no client records to recover.
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	echo "-3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions || return 1
	# What mountd would answer: 127.0.0.1 is in "localdomain", which may use
	# /srv/nfs (fsid 0, the NFSv4 root) read-write, no root squash, async,
	# no subtree check, insecure ports: flags 0x2412.
	exp=2147483647
	printf '%s\n' "nfsd 127.0.0.1 $exp localdomain" > /proc/net/rpc/auth.unix.ip/channel || return 1
	printf '%s\n' "localdomain 1 \\x00000000 $exp /srv/nfs" > /proc/net/rpc/nfsd.fh/channel || return 1
	printf '%s\n' "localdomain /srv/nfs $exp 9234 0 0 0" > /proc/net/rpc/nfsd.export/channel || return 1
	echo 4 > /proc/fs/nfsd/threads || return 1
	mount -t nfs4 -o vers=4.2,addr=127.0.0.1,clientaddr=127.0.0.1 127.0.0.1:/ "$1" || return 1
}

nfs_teardown() {
	umount "$1" || return 1
	echo 0 > /proc/fs/nfsd/threads
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

# rpc_ms OUT: the NFS mount's per-procedure "NAME ops bytes_sent bytes_recv" of mountstats.
rpc_ms() {
	awk -v m="$NFS" '$1 == "device" { on = $5 == m; ops = 0; next }
		on && /per-op statistics/ { ops = 1; next }
		on && ops && NF >= 9 && $1 ~ /:$/ { sub(/:$/, "", $1); print $1, $2, $5, $6 }' \
		/proc/self/mountstats > "$1"
}

# rpc_job JSON OUT: the NFS mount's "KIND NAME calls bytes_sent bytes_recv" of a
# job's summary, KIND rpc (its own) or rpc_unattributed. A JSON reader by
# lines (the summary's strings never span one), for busybox awk.
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
			print a[3], a[4], v[k], v[b "bytes_sent"] + 0, v[b "bytes_recv"] + 0
		}
	}' "$1" > "$2"
}

# rpc_compare BEFORE AFTER OWN JOBS...: every procedure's change in mountstats
# is the jobs' RPCs (each file of rpc_job) on the mount; procedures of OWN
# (a space-separated list) are never unattributed. Prints MISMATCH lines,
# then "OK NAME=calls,..." of the procedures that changed.
rpc_compare() {
	b=$1 a=$2 own=$3
	shift 3
	awk -v own=" $own " '
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
			if (dc != c[p] + 0 || ds != s[p] + 0 || dr != r[p] + 0)
				print "MISMATCH: " p ": mountstats " dc " calls " ds " sent " dr \
					" received, the jobs " c[p] + 0 " " s[p] + 0 " " r[p] + 0
			else if (dc)
				ok = ok (ok ? "," : "") p "=" dc
		}
		print "OK " ok
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

# rpc_issue_job DIR W NAME: issue 40's job under iorun (needs $R, $NFS and
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
	rpc_ms "$rj_w.ms0"
	rpc_trace on
	{
		iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$rj_w.json" -- sh -c "
			dd if=/dev/zero of=$1/big bs=1M count=8 conv=fsync 2> /dev/null &&
			echo 3 > /proc/sys/vm/drop_caches && cat $1/big > /dev/null &&
			mkdir $1/d && i=0 &&
			while [ \$i -lt 100 ]; do echo x > $1/d/f\$i; i=\$((i + 1)); done &&
			echo 3 > /proc/sys/vm/drop_caches && i=0 &&
			while [ \$i -lt 100 ]; do stat $1/d/f\$i > /dev/null; i=\$((i + 1)); done &&
			ls $1/d > /dev/null" > /dev/null 2> "$rj_w.err"
		echo $? > "$rj_w.rc"
	} | cat
	rpc_ms "$rj_w.ms1"
	rpc_trace off
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
