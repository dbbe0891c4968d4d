# SPDX-License-Identifier: GPL-2.0-or-later
# nfs-modes: tracepoint
# (One mode: v3 is keyed and named by the RPC object, which no backend changes;
# stat.sh checks the stats on NFS in each mode.)
# NFS check (sourced by init.sh's run_nfs in a subshell): the RPCs per job
# (issue 40) over NFSv3, on $NFS3 (the export of $NFS mounted with vers=3,
# beside it: tests/vm/nfs.sh). The issue's job (rpc_issue_run, as rpc.sh runs
# it on the v4.2 mount): for every procedure whose count changed in
# mountstats over the job, its calls, bytes sent and received on the mount
# (the JSON's rpc object) plus those no job sent are the change; the v3
# procedures the job causes itself are its own, none unattributed, keyed by
# program 100003 version 3 and named as the kernel names them; its GETACLs
# (NFSACL, which mountstats does not count) are its own on the mount too;
# and the job's stats on the mount are counted there (no mount unnamed,
# type nfs).
W=$R/nfs-rpc3
mkdir -p "$W"

rpc3_fail() {
	echo "INFO rpc3 daemon: $(grep 'RPC' "$R/ioacctd.log" | oneline)"
	nresult rpc3 "fail reason=$*"
	exit 0
}
case $NFS3_SETUP in
ok) ;;
absent)
	nresult rpc3 "skip reason=no rpcbind, rpc.mountd, exportfs or rpcinfo in the initramfs (get-kernels --nfs-tools)"
	exit 0 ;;
*) rpc3_fail "the NFSv3 mount on $NFS3 could not be made (boot log: NFSv3)" ;;
esac

# The readers of nfs.sh read the mount of $NFS: the v3 one here (a subshell).
NFS=$NFS3
rm -rf $NFS/rpc3
mkdir -p $NFS/rpc3
rpc_issue_run $NFS/rpc3 "$W/one"
[ "$(cat "$W/one.rc")" = 0 ] || rpc3_fail "iorun exited with $(cat "$W/one.rc"): $(tail -n 2 "$W/one.err" | oneline)"
grep -q "RPC: sunrpc's tracepoints attached" "$R/ioacctd.log" || rpc3_fail "the RPC probes are not attached"
echo "INFO rpc3 mountstats over the job: $(rpc_compare "$W/one.ms0" "$W/one.ms1" "" /dev/null |
	sed -n 's/^MISMATCH: \([^:]*\): mountstats \([0-9]*\) calls.*/\1=\2/p' | tr '\n' ' ')"
rpc_job "$W/one.json" "$W/one.rpc" || rpc3_fail "no mount $NFS in the summary"
# NFSACL's GETACL (program 100227: a create's or mkdir's posix_acl_create()
# asks for the directory's default ACL) goes through the mount's ACL client,
# which mountstats does not print: the job's own on the mount, apart.
awk '$6 == 100227' "$W/one.rpc" > "$W/acl.rpc"
awk '$6 != 100227' "$W/one.rpc" > "$W/nfs.rpc"
OWN="WRITE READ COMMIT LOOKUP ACCESS GETATTR SETATTR CREATE MKDIR READDIR READDIRPLUS"
rpc_compare "$W/one.ms0" "$W/one.ms1" "$OWN" "$W/nfs.rpc" > "$W/cmp"
if grep -q '^MISMATCH' "$W/cmp"; then
	echo "INFO rpc3 job: $(oneline < "$W/one.rpc")"
	rpc3_fail "$(grep '^MISMATCH' "$W/cmp" | head -n 4 | sed 's/^MISMATCH: //' | oneline)"
fi
for p in WRITE READ CREATE MKDIR LOOKUP; do
	[ "$(own "$W/one.rpc" $p)" -gt 0 ] || rpc3_fail "no $p of its own: $(oneline < "$W/one.rpc")"
done
notv3=$(awk '$7 != 3 || ($6 != 100003 && $6 != 100227) { printf "%s %s=%s/%s; ", $1, $2, $6, $7 }' "$W/one.rpc")
[ -z "$notv3" ] || rpc3_fail "procedures not of NFS (100003) or NFSACL (100227) version 3: $notv3"
acl=$(awk '$1 == "rpc" && $2 == "GETACL" { n += $3 } END { print n + 0 }' "$W/acl.rpc")
[ "$acl" -ge 1 ] && [ "$(wc -l < "$W/acl.rpc")" = "$(grep -c '^rpc GETACL ' "$W/acl.rpc")" ] ||
	rpc3_fail "NFSACL: not the job's GETACLs on $NFS alone: $(oneline < "$W/acl.rpc")"
# Its stats on the mount, named nfs: the 100 files' by busybox's stat (an
# lstat each; its fstat of standard output is on /dev), and busybox's ls:
# a stat of the directory, glibc's opendir() fstat of it, an lstat of each
# of its 100 files.
mine=$(nfs_mounts "$W/one.json" | grep "^$NFS ")
if grep -q '"mount": *"mnt:\|"fs_type": *"unknown"' "$W/one.json"; then
	rpc3_fail "a mount unnamed: $(nfs_mounts "$W/one.json" | oneline)"
elif [ "$mine" != "$NFS nfs stats=202" ]; then
	rpc3_fail "stats: $mine, expected $NFS nfs stats=202; mounts: $(nfs_mounts "$W/one.json" | oneline)"
fi
rm -rf $NFS/rpc3
nresult rpc3 "pass $(sed -n 's/^OK //p' "$W/cmp") GETACL=$acl stats=202"
