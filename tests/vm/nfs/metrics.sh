# SPDX-License-Identifier: GPL-2.0-or-later
# nfs-modes: tracepoint
# NFS check (sourced by init.sh's run_nfs in a subshell): the RPCs per job in
# /metrics (issue 40), live, against /proc/self/mountstats, which nothing
# else changes here. One mode: the page and the RPC object do not depend on
# the syscall backend. A job with 1 s bins writes 1 MiB with conv=fsync and
# reads it back cold, then waits on a FIFO (no system call ends meanwhile):
# 1. scraped while it runs, its RPC series on the NFS mount (its own and
#    those no job sent) are mountstats' change since the job began, per
#    procedure, calls and bytes sent and received;
# 2. once its bins are drained into the store (the kernel's counter map
#    empty), its own series are what they were: nothing lost or counted
#    twice across the drain;
# 3. released, it makes 20 files and stats them cold: its series again equal
#    mountstats' change, none below what they were.
W=$R/nfs-metrics
mkdir -p "$W"
rm -rf $NFS/metrics "$W"/*
mkdir -p $NFS/metrics
sync
M=http://127.0.0.1:9464/metrics
JOB=9040

# Lets the job go (a FIFO nobody reads any more is given up after 5 s).
m_fail() {
	for f in $fifos; do timeout 5 sh -c "echo > $W/$f"; done
	[ -n "$ipid" ] && wait "$ipid"
	nresult metrics "fail reason=$*"
	exit 0
}

grep -q '^metrics_listen' "$R/ioacct.conf" || {
	nresult metrics "skip ioacctd built without libmicrohttpd: no /metrics"
	exit 0
}

# scrape OUT: the job's RPC series on the NFS mount as rpc_job writes them
# ("rpc NAME calls sent recv", "rpc_unattributed NAME ..."); 1 when no page.
scrape() {
	wget -qO "$W/page" "$M" 2>/dev/null || return 1
	awk -v job="job_id=\"$JOB\"" -v mnt="mount=\"$NFS\"" '
	function label(k,   s) {
		if (!match($0, k "=\"[^\"]*\"")) return ""
		s = substr($0, RSTART + length(k) + 2, RLENGTH - length(k) - 3)
		return s
	}
	index($0, "ioacct_rpc_") == 1 && index($0, job) && index($0, mnt) {
		name = $1; sub(/\{.*/, "", name)
		kind = name ~ /^ioacct_rpc_unattributed_/ ? "rpc_unattributed" : "rpc"
		sub(/^ioacct_rpc_(unattributed_)?/, "", name)
		k = kind " " label("procedure")
		if (name == "calls_total") c[k] = $NF
		else if (name == "sent_bytes_total") s[k] = $NF
		else if (name == "received_bytes_total") r[k] = $NF
	}
	END { for (k in c) print k, c[k], s[k] + 0, r[k] + 0 }' "$W/page" | sort > "$1"
}

# until_equal MS0 WHAT: scrapes until the job's series are mountstats' change
# since MS0 (read again each time: the lease's SEQUENCEs go on), 30 s at most.
until_equal() {
	t=0
	while :; do
		rpc_ms "$W/ms"
		scrape "$W/now" && rpc_compare "$1" "$W/ms" "" "$W/now" > "$W/cmp" &&
			! grep -q '^MISMATCH' "$W/cmp" && return 0
		t=$((t + 1))
		[ $t -lt 150 ] || m_fail "$2: $(grep '^MISMATCH' "$W/cmp" | head -n 4 | sed 's/^MISMATCH: //' | oneline)"
		usleep 200000
	done
}

# own_ge NEW OLD: no own series of OLD went down, or missing, in NEW.
own_ge() {
	awk 'FILENAME == ARGV[1] { n[$1 " " $2] = $3 " " $4 " " $5; next }
	$1 == "rpc" {
		split(n[$1 " " $2], v, " ")
		if (!(($1 " " $2) in n) || v[1] < $3 || v[2] < $4 || v[3] < $5)
			print $2 ": " $3 " " $4 " " $5 " then " n[$1 " " $2]
	}' "$1" "$2"
}

fifos="fifo1 fifo2"
mkfifo "$W/fifo1" "$W/fifo2" || m_fail "mkfifo"
rpc_ms "$W/ms0"
iorun -c "$R/ioacct.conf" --cgroup-mode v2 --job-id $JOB --bin-width 1 -- sh -c "
	dd if=/dev/zero of=$NFS/metrics/big bs=64k count=16 conv=fsync 2> /dev/null &&
	echo 3 > /proc/sys/vm/drop_caches && cat $NFS/metrics/big > /dev/null &&
	touch $W/p1 && read x < $W/fifo1 &&
	mkdir $NFS/metrics/d && i=0 &&
	while [ \$i -lt 20 ]; do echo x > $NFS/metrics/d/f\$i; i=\$((i + 1)); done &&
	echo 3 > /proc/sys/vm/drop_caches && i=0 &&
	while [ \$i -lt 20 ]; do stat $NFS/metrics/d/f\$i > /dev/null; i=\$((i + 1)); done &&
	touch $W/p2 && read x < $W/fifo2" > /dev/null 2> "$W/err" &
ipid=$!
t=0
until [ -e "$W/p1" ]; do
	t=$((t + 1))
	[ $t -lt 3000 ] || m_fail "the job did not write in 60 s: $(oneline < "$W/err")"
	kill -0 $ipid 2>/dev/null || m_fail "iorun exited: $(oneline < "$W/err")"
	usleep 20000
done

# 1. Live.
until_equal "$W/ms0" "live"
cp "$W/now" "$W/a"
cp "$W/cmp" "$W/cmp1"
for p in WRITE OPEN LOOKUP; do
	[ "$(own "$W/a" $p)" -gt 0 ] || m_fail "live: no $p of the job's own: $(oneline < "$W/a")"
done

# 2. Drained: the kernel's counter map empties once the job's bins are stored.
t=0
until wget -qO- "$M" 2>/dev/null | grep -q '^ioacct_kernel_entries 0$'; do
	t=$((t + 1))
	[ $t -lt 150 ] || m_fail "the job's bins were not drained in 30 s"
	usleep 200000
done
scrape "$W/b" || m_fail "no page after the drain"
grep '^rpc ' "$W/a" > "$W/a.own"
grep '^rpc ' "$W/b" > "$W/b.own"
cmp -s "$W/a.own" "$W/b.own" ||
	m_fail "drained: own series changed: $(diff "$W/a.own" "$W/b.own" | grep '^[-+][a-z]' | oneline)"

# 3. More RPCs after the drain.
echo > "$W/fifo1"
fifos=fifo2
t=0
until [ -e "$W/p2" ]; do
	t=$((t + 1))
	[ $t -lt 3000 ] || m_fail "the job's second part did not end in 60 s: $(oneline < "$W/err")"
	usleep 20000
done
until_equal "$W/ms0" "after the drain"
cp "$W/now" "$W/c"
down=$(own_ge "$W/c" "$W/b")
[ -z "$down" ] || m_fail "went down across the drain: $(echo "$down" | oneline)"
[ "$(own "$W/c" LOOKUP)" -gt "$(own "$W/b" LOOKUP)" ] ||
	m_fail "no LOOKUPs of the job's own after the drain: $(oneline < "$W/c")"
echo > "$W/fifo2"
fifos=
wait $ipid
rc=$?
[ $rc = 0 ] || m_fail "iorun exited with $rc: $(oneline < "$W/err")"
rm -rf $NFS/metrics
nresult metrics "pass live=$(sed -n 's/^OK //p' "$W/cmp1") after-drain=$(sed -n 's/^OK //p' "$W/cmp")"
