# SPDX-License-Identifier: GPL-2.0-or-later
# NFS check (sourced by init.sh's run_nfs in a subshell): the RPCs per job
# (issue 40) against /proc/self/mountstats, which nothing else changes here.
# 1. A job writes 8 MiB with conv=fsync, drops the caches and reads it back
#    cold, makes a directory of 100 small files, stats them cold and lists
#    them: for every procedure whose count changed over the job, its calls,
#    bytes sent and received on the NFS mount (the JSON's rpc object) plus
#    those no job sent (rpc_unattributed) are the change; the procedures
#    the job itself causes are its own, none unattributed (nfs.sh's
#    rpc_issue_job, which rpcload.sh runs too).
# 2. Two jobs at once (one writes, one stats, the second inside the first's
#    life): each has its own procedures, and the first's unattributed RPCs
#    (its life holds the second's) with both jobs' own make mountstats'.
W=$R/nfs-rpc
mkdir -p "$W"
rm -rf $NFS/rpc
mkdir -p $NFS/rpc

rpc_fail() {
	echo "INFO rpc daemon: $(grep 'RPC' "$R/ioacctd.log" | oneline)"
	nresult rpc "fail reason=$*"
	exit 0
}

# 1. The issue's job.
rpc_issue_job $NFS/rpc "$W" one
ok=$?
grep -q "RPC: sunrpc's tracepoints attached" "$R/ioacctd.log" ||
	rpc_fail "the RPC probes are not attached"
[ $ok = 0 ] || rpc_fail "one job: $rpc_why"
one=$rpc_ok

# 2. Two jobs at once: the writer lives until the statter has finished.
rm -f "$W/go" "$W/done"
rpc_ms "$W/ms2"
iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/wr.json" -- sh -c "
	touch $W/go && dd if=/dev/zero of=$NFS/rpc/w bs=64k count=64 conv=fsync 2> /dev/null &&
	while [ ! -e $W/done ]; do usleep 20000; done" > /dev/null 2> "$W/err.wr" &
wpid=$!
t=0
until [ -e "$W/go" ]; do
	t=$((t + 1))
	[ $t -lt 3000 ] || rpc_fail "the writing job did not start in 60 s"
	usleep 20000
done
iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/st.json" -- sh -c "
	echo 3 > /proc/sys/vm/drop_caches && i=0 &&
	while [ \$i -lt 100 ]; do stat $NFS/rpc/d/f\$i > /dev/null; i=\$((i + 1)); done" \
	> /dev/null 2> "$W/err.st"
src=$?
touch "$W/done"
wait $wpid
wrc=$?
rpc_ms "$W/ms3"
[ $src = 0 ] && [ $wrc = 0 ] || rpc_fail "iorun exited with $wrc (writer), $src (stats)"
rpc_job "$W/wr.json" "$W/wr.rpc" || rpc_fail "writer: no mount $NFS in the summary"
rpc_job "$W/st.json" "$W/st.rpc" || rpc_fail "stats: no mount $NFS in the summary"
# The statter's unattributed RPCs are also the writer's (its life is inside the writer's).
grep -v '^rpc_unattributed ' "$W/st.rpc" > "$W/st.own"
rpc_compare "$W/ms2" "$W/ms3" "WRITE COMMIT LOOKUP GETATTR" "$W/wr.rpc" "$W/st.own" > "$W/cmp2"
if grep -q '^MISMATCH' "$W/cmp2"; then
	echo "INFO rpc writer: $(oneline < "$W/wr.rpc")"
	echo "INFO rpc stats: $(oneline < "$W/st.rpc")"
	rpc_fail "two jobs: $(grep '^MISMATCH' "$W/cmp2" | head -n 4 | sed 's/^MISMATCH: //' | oneline)"
fi
[ "$(own "$W/wr.rpc" WRITE)" -gt 0 ] && [ "$(own "$W/st.rpc" WRITE)" = 0 ] ||
	rpc_fail "two jobs: the writes are not the writer's alone: $(grep WRITE "$W/wr.rpc" "$W/st.rpc" | oneline)"
stats=$(( $(own "$W/st.rpc" LOOKUP) + $(own "$W/st.rpc" GETATTR) ))
wstats=$(( $(own "$W/wr.rpc" LOOKUP) + $(own "$W/wr.rpc" GETATTR) ))
[ $stats -ge 100 ] && [ $wstats -lt 100 ] ||
	rpc_fail "two jobs: the stats' LOOKUP and GETATTR are not the statter's: $stats theirs, $wstats the writer's"
rm -rf $NFS/rpc
nresult rpc "pass one=$one two=$(sed -n 's/^OK //p' "$W/cmp2")"
