# SPDX-License-Identifier: GPL-2.0-or-later
# NFS check (sourced by init.sh's run_nfs in a subshell): a job's reads,
# writes and fsync on the NFS mount, counted on that mount, exactly, with the
# mount named as what it is (nfs4).
W=$R/nfs-syscalls
mkdir -p "$W"
rm -f $NFS/sc
{
	iorun -c "$R/ioacct.conf" --cgroup-mode v2 --json -o "$W/out.json" -- iowork \
		write $NFS/sc 1048576 8 , fsync $NFS/sc 1 , read $NFS/sc 1048576 8 > /dev/null 2> "$W/err"
	echo $? > "$W/rc"
} | cat
# fsync FILE N opens the file once more (opens 3: the write's create, the
# fsync's, the read's).
cat > "$W/expect" <<EXP
$NFS write_bytes=8388608 writes=8 read_bytes=8388608 reads=8 opens=3 creates=1 fsyncs=1 write_sizes.100K_1M=8 read_sizes.100K_1M=8
@ _others_allowed=1
EXP
rm -f $NFS/sc
if [ "$(cat "$W/rc")" != 0 ]; then
	nresult syscalls "fail reason=iorun exited with $(cat "$W/rc"): $(tail -n 2 "$W/err" | oneline)"
elif ! check_summary "$W/out.json" "$W/expect" > "$W/check" 2>&1; then
	nresult syscalls "fail reason=$(grep '^MISMATCH' "$W/check" | head -n 4 | sed 's/^MISMATCH: //' | oneline)"
elif ! grep -q '"fs_type": *"nfs4"' "$W/out.json"; then
	nresult syscalls "fail reason=the mount is not named nfs4: $(grep -o '"fs_type": *"[^"]*"' "$W/out.json" | sort -u | oneline)"
else
	nresult syscalls "pass $(sed -n 's/^OK probe_mode=[^ ]* //p' "$W/check")"
fi
