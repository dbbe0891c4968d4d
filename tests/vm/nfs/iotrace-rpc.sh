# SPDX-License-Identifier: GPL-2.0-or-later
# nfs-modes: tracepoint
# (One mode: iotrace loads its own object, whatever the daemon's backend.)
# NFS check (sourced by init.sh's run_nfs in a subshell): iotrace --rpc on a
# dd with conv=fsync alone on the mount. Issue 40's acceptance: the assertion
# count(rpc=COMMIT)>=1 holds (exit 0), count(rpc=COMMIT)==0 fails (exit 1);
# one line per RPC: its WRITE and COMMIT lines are as many as mountstats'
# deltas over the run; the WRITEs name the file (its inode number) and sum
# to what dd wrote; --perfetto has a slice for each. The second run,
# --rpc=only in the default format, prints RPC lines alone, the WRITEs and
# COMMIT on the mount (of the fsync's fd or the file's writer; no path:
# busybox dd writes to the fd 1 it dup2'd the file to); its first WRITE and
# its COMMIT go to the console.
W=$R/nfs-iotrace-rpc
mkdir -p "$W"
rm -f $NFS/rt

# mountstats' calls of procedure $1 on $NFS.
rpc_calls() {
	awk -v m="$NFS" -v p="$1:" '$1 == "device" { on = $5 == m } on && $1 == p { print $2; exit }' \
		/proc/self/mountstats
}

# traced_dd NAME OPTION...: iotrace OPTION... on dd; its lines in $W/NAME.out,
# its exit status in $W/NAME.rc.
traced_dd() {
	n=$1
	shift
	iotrace -c "$R/ioacct.conf" "$@" -- \
		sh -c "dd if=/dev/zero of=$NFS/rt bs=1M count=4 conv=fsync 2>/dev/null" \
		> "$W/$n.out" 2> "$W/$n.err"
	echo $? > "$W/$n.rc"
}

w0=$(rpc_calls WRITE) c0=$(rpc_calls COMMIT)
traced_dd holds --rpc --assert 'count(rpc=COMMIT)>=1' -p '%c %C %i %s %o' --perfetto "$W/holds.json"
w1=$(rpc_calls WRITE) c1=$(rpc_calls COMMIT)
ino=$(stat -c %i $NFS/rt 2>/dev/null)
traced_dd fails --rpc=only --assert 'count(rpc=COMMIT)==0'
w2=$(rpc_calls WRITE) c2=$(rpc_calls COMMIT)
rm -f $NFS/rt
echo "INFO iotrace-rpc: mountstats WRITE +$((w1 - w0)) COMMIT +$((c1 - c0)), then +$((w2 - w1)) +$((c2 - c1)); lines $(awk '{ print $1 }' "$W/holds.out" | sort | uniq -c | oneline); then $(awk '{ print $2 }' "$W/fails.out" | sort | uniq -c | oneline)"
awk '$2 == "COMMIT" || ($2 == "WRITE" && !w++) { print "INFO iotrace-rpc line: " $0 }' "$W/fails.out"

nw=$(awk '$1 == "WRITE"' "$W/holds.out" | wc -l)
nc=$(awk '$1 == "COMMIT"' "$W/holds.out" | wc -l)
wbytes=$(awk '$1 == "WRITE" { s += $4 } END { print s + 0 }' "$W/holds.out")
wfiles=$(awk '$1 == "WRITE" { print $3 }' "$W/holds.out" | sort -u | oneline)
# --perfetto: each RPC an async slice, a "b" and an "e" event.
pb=$(grep -c '^{"ph":"b","cat":"rpc","name":"WRITE"' "$W/holds.json")
pe=$(grep -c '^{"ph":"e","cat":"rpc","name":"WRITE"' "$W/holds.json")
if [ -z "$w0" ] || [ -z "$c0" ]; then
	nresult iotrace-rpc "fail reason=no WRITE or COMMIT line for $NFS in /proc/self/mountstats"
elif [ "$(cat "$W/holds.rc")" != 0 ]; then
	nresult iotrace-rpc "fail reason=count(rpc=COMMIT)>=1: iotrace exited with $(cat "$W/holds.rc"): $(tail -n 3 "$W/holds.err" | oneline)"
	show_log "iotrace --rpc stderr" "$W/holds.err" 60
elif [ "$(cat "$W/fails.rc")" != 1 ]; then
	nresult iotrace-rpc "fail reason=count(rpc=COMMIT)==0: iotrace exited with $(cat "$W/fails.rc"), not 1: $(tail -n 3 "$W/fails.err" | oneline)"
elif [ "$nw" != $((w1 - w0)) ] || [ "$nc" != $((c1 - c0)) ]; then
	nresult iotrace-rpc "fail reason=lines WRITE $nw COMMIT $nc, mountstats WRITE +$((w1 - w0)) COMMIT +$((c1 - c0)): $(awk '$1 ~ /^[A-Z]/' "$W/holds.out" | sort | uniq -c | oneline)"
elif grep -v ' xid=0x' "$W/fails.out" | grep -q .; then
	nresult iotrace-rpc "fail reason=--rpc=only printed lines of calls: $(grep -v ' xid=0x' "$W/fails.out" | head -n 3 | oneline)"
elif awk -v m="$NFS" '($2 == "WRITE" || $2 == "COMMIT") && $5 != m' "$W/fails.out" | grep -q .; then
	nresult iotrace-rpc "fail reason=--rpc=only: WRITE or COMMIT lines not on $NFS: $(awk -v m="$NFS" '($2 == "WRITE" || $2 == "COMMIT") && $5 != m' "$W/fails.out" | head -n 2 | oneline)"
elif [ "$pb" != "$nw" ] || [ "$pe" != "$nw" ] || [ "$(tail -n 1 "$W/holds.json")" != ']}' ]; then
	nresult iotrace-rpc "fail reason=--perfetto: $pb WRITE slices begun, $pe ended, for $nw lines; its end: $(tail -n 1 "$W/holds.json" | cut -c1-80)"
elif [ "$wfiles" != "$ino" ] || [ "$wbytes" != 4194304 ]; then
	nresult iotrace-rpc "fail reason=WRITE lines name file ids '$wfiles' (the file is $ino) and sum to $wbytes bytes, not 4194304"
else
	nresult iotrace-rpc "pass WRITE=$nw COMMIT=$nc calls=$(awk '$1 ~ /^[A-Z]/ { print $2 }' "$W/holds.out" | sort | uniq -c | oneline) $(grep 'assertion' "$W/fails.err" | oneline)"
fi
