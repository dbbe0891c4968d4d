# SPDX-License-Identifier: GPL-2.0-or-later
# NFS check (sourced by init.sh's run_nfs in a subshell): a job's stats on the
# NFS mount (issue 40: 102 of them counted on "mnt:0", type unknown). The job
# creates 100 files in a directory of $NFS, stats each by its path with stat()
# (newfstatat), statx() and fstatat() from the directory's fd, opens each and
# stats it by its fd as glibc 2.33 to 2.38 make fstat() (newfstatat and statx
# of the empty path, AT_EMPTY_PATH), lists the directory, then busybox's stat
# stats each file by path (lstat) and fstats its standard output: every call on
# the NFS mount counted there, named /mnt/nfs (nfs4), exactly; no mount unnamed
# (mnt:N) or of an unknown type in the report. In the default NFS modes
# (fentry, tracepoint): the fix is in path_mnt(), which every backend shares;
# kprobe and syscall-tp passed it too when it landed (IOACCT_VM_NFS_MODES).
W=$R/nfs-stat
D=$NFS/stat
mkdir -p "$W"
rm -rf "$D"
mkdir "$D"
# The files' paths, for busybox: one sh -c word each.
files=$(i=0; while [ $i -lt 100 ]; do printf '%s ' "$D/f$i"; i=$((i + 1)); done)
{
	iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/out.json" -- sh -c "iowork \
		create $D 100 , stats $D 100 , statx $D 100 , fstatat $D 100 , fstat $D 100 , \
		list $D 100 && busybox stat -c %s $files" > /dev/null 2> "$W/err"
	echo $? > "$W/rc"
} | cat
# Opens: the 100 creates, the directory's for fstatat, the files' for fstat,
# the directory's for the listing. Stats: 100 each of stat, statx, fstatat and
# busybox's lstat, 200 by fd.
cat > "$W/expect" <<EXP
$NFS opens=202 creates=100 stats=600
@ _others_allowed=1
EXP
rm -rf "$D"
if [ "$(cat "$W/rc")" != 0 ]; then
	nresult stat "fail reason=iorun exited with $(cat "$W/rc"): $(tail -n 2 "$W/err" | oneline)"
elif grep -q '"mount": *"mnt:\|"fs_type": *"unknown"' "$W/out.json"; then
	nresult stat "fail reason=a mount unnamed: $(nfs_mounts "$W/out.json" | oneline)"
elif ! check_summary "$W/out.json" "$W/expect" > "$W/check" 2>&1; then
	nresult stat "fail reason=$(grep '^MISMATCH' "$W/check" | head -n 4 | sed 's/^MISMATCH: //' | oneline); mounts: $(nfs_mounts "$W/out.json" | oneline)"
elif ! grep -q '"fs_type": *"nfs4"' "$W/out.json"; then
	nresult stat "fail reason=the mount is not named nfs4: $(nfs_mounts "$W/out.json" | oneline)"
else
	nresult stat "pass $(sed -n 's/^OK probe_mode=[^ ]* //p' "$W/check")"
fi
