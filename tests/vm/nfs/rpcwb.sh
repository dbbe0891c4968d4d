# SPDX-License-Identifier: GPL-2.0-or-later
# NFS check (sourced by init.sh's run_nfs in a subshell): background
# writeback's RPCs (issue 40). With dirty_background_bytes at 1 MiB, a job
# writes 64 MiB without fsync: the flusher writes most of it back while the
# job runs, the job's close the rest. Its WRITEs are its own (the flusher's
# attributed to the job that dirtied the pages; none unattributed), and its
# own and unattributed RPCs are mountstats' change for every procedure.
W=$R/nfs-rpcwb
mkdir -p "$W"
rm -f $NFS/wb

wb_fail() {
	echo "INFO rpcwb daemon: $(grep 'RPC' "$R/ioacctd.log" | oneline)"
	echo "$old" > /proc/sys/vm/dirty_background_bytes
	nresult rpcwb "fail reason=$*"
	exit 0
}

old=$(cat /proc/sys/vm/dirty_background_bytes)
echo 1048576 > /proc/sys/vm/dirty_background_bytes
sync
rpc_ms "$W/ms0"
{
	iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/wb.json" -- \
		dd if=/dev/zero of=$NFS/wb bs=1M count=64 > /dev/null 2> "$W/err"
	echo $? > "$W/rc"
} | cat
rpc_ms "$W/ms1"
echo "$old" > /proc/sys/vm/dirty_background_bytes
[ "$(cat "$W/rc")" = 0 ] || wb_fail "iorun exited with $(cat "$W/rc"): $(tail -n 2 "$W/err" | oneline)"
rpc_job "$W/wb.json" "$W/wb.rpc" || wb_fail "no mount $NFS in the summary"
# Without the writeback's programs (said in the log), the flusher's WRITEs may be unattributed.
own_list="WRITE COMMIT"
grep -q 'writeback of the jobs. pages is not attributed' "$R/ioacctd.log" && own_list=
rpc_compare "$W/ms0" "$W/ms1" "$own_list" "$W/wb.rpc" > "$W/cmp"
if grep -q '^MISMATCH' "$W/cmp"; then
	echo "INFO rpcwb job: $(oneline < "$W/wb.rpc")"
	wb_fail "$(grep '^MISMATCH' "$W/cmp" | head -n 4 | sed 's/^MISMATCH: //' | oneline)"
fi
[ "$(own "$W/wb.rpc" WRITE)" -gt 0 ] || wb_fail "no WRITE of the job's own: $(oneline < "$W/wb.rpc")"
rm -f $NFS/wb
nresult rpcwb "pass $(sed -n 's/^OK //p' "$W/cmp")${own_list:+ (all WRITEs the job's)}"
