#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A file's record is a file's life, not an inode number (issue 36): five
# files created, written (1,000 to 5,000 bytes) and unlinked in turn by one
# process of one job, on ext4, xfs and tmpfs (ext4 and xfs on loop devices,
# as 35-mmap-exact.sh makes them), where the kernel gives a freed inode
# number to the next file: five records, each named by its own path, with
# its own open, write and bytes exactly, and the records of the mount sum to
# its counts. The same five files written by one process each on ext4. Then an MPI-IO collective write and read of
# one shared file by 4 OpenMPI ranks (ompio, whose MPI_File_open makes and
# unlinks DATA.locktest.RANK first, the data file then getting one of their
# inode numbers): the data file's POSIX records sum to exactly the bytes
# written and read, and each lock file has a record of its own.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
setup
start_daemon

# lives_expect JOB DIR: the five records iowork lives (and the shell's) leave under DIR.
lives_expect() {
	local files="" i sep=""
	for i in 1 2 3 4 5; do
		files+="$sep\"$2/life$i\": {\"opens\": 1, \"writes\": 1, \"bytes_written\": $((i * 1000)),"
		files+=" \"max_byte_written\": $((i * 1000 - 1)), \"rw_switches\": 0,"
		files+=" \"access1\": $((i * 1000)), \"access1_count\": 1,"
		files+=" \"size_written\": \"0,$([ $i = 1 ] && echo 1,0 || echo 0,1),0,0,0,0,0,0,0\"}"
		sep=","
	done
	echo "{\"job\": $1, \"only\": [\"$2\"], \"files\": {$files}, \"other\": {}, \"sums\": [\"$2\"]}"
}

# same_inode DIR: how many distinct inode numbers the job's records under DIR have.
inodes() {
	sqlite3 "$T/ioacct.db" "SELECT count(DISTINCT ino) FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $1 AND f.path LIKE '$2/%'"
}

for fs in ext4 xfs tmpfs; do
	D=$T/$fs
	mkdir -p "$D"
	case $fs in
	tmpfs) mount -t tmpfs -o size=64m "ioacct-lives-$$" "$D" || fail "cannot mount a tmpfs" ;;
	*)
		command -v "mkfs.$fs" > /dev/null ||
			fail "mkfs.$fs missing (scripts/deps installs e2fsprogs and xfsprogs)"
		truncate -s 300M "$T/$fs.img"
		if [ $fs = ext4 ]; then
			mkfs.ext4 -q -F "$T/$fs.img" > "$T/mkfs.log" 2>&1
		else
			mkfs.xfs -f "$T/$fs.img" > "$T/mkfs.log" 2>&1
		fi || { cat "$T/mkfs.log"; fail "mkfs.$fs failed"; }
		mount -o loop "$T/$fs.img" "$D" || fail "cannot mount $fs on a loop device"
		;;
	esac
	"$IORUN" --json -o "$T/$fs.json" -- "$IOWORK" lives "$D" 5 | cat ||
		fail "$fs: iorun iowork lives failed"
	JOB=$(json_get "$T/$fs.json" 'j["job_id"]')
	lives_expect "$JOB" "$D" > "$T/expect.json"
	python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/$fs.json" "$T/expect.json" ||
		fail "$fs: the five files' records are not five, each its own, exactly"
	echo "  $fs: 5 records, on $(inodes "$JOB" "$D") inode number(s)"
	ok "$fs: five files written and unlinked in turn, five records, each named and exact"
	if [ $fs = ext4 ]; then
		# One process per file: the records are made by five tasks.
		"$IORUN" --json -o "$T/sh.json" -- bash -c 'for i in 1 2 3 4 5; do
			"$1" life "$2/life$i" $((i * 1000)) || exit 1; done' _ "$IOWORK" "$D" | cat ||
			fail "$fs: iorun bash failed"
		JOB=$(json_get "$T/sh.json" 'j["job_id"]')
		lives_expect "$JOB" "$D" > "$T/expect.json"
		python3 "$(dirname "$0")/check_files.py" "$T/ioacct.db" "$T/sh.json" "$T/expect.json" ||
			fail "$fs: one process per file: not five records, each its own, exactly"
		echo "  $fs, a process per file: 5 records, on $(inodes "$JOB" "$D") inode number(s)"
		ok "$fs: five files of five processes, five records"
	fi
	umount "$D" || fail "cannot unmount $D"
	rm -f "$T/$fs.img"
done

# ---- MPI-IO: ompio's lock files and the data file ----
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
"$OMPICC" -Wall -o "$T/mpifile" "$(dirname "$0")/mpifile.c" || fail "$OMPICC mpifile.c failed"
# OpenMPI's session directory on the same file system as the data (not a
# tmpfs of its own, as 37-mpiio.sh has): its files' inode numbers are
# reused too, and must not count for the data file.
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base" "$T/mpi"
SIZE=65536
COUNT=8
"$IORUN" --json -o "$T/mpi.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe \
	--mca io ompio -np 4 "$T/mpifile" "$T/mpi" coll $SIZE $COUNT > "$T/mpi.out" 2>&1 ||
	{ cat "$T/mpi.out"; fail "iorun mpirun mpifile failed"; }
JOB=$(json_get "$T/mpi.json" 'j["job_id"]')
q() {
	sqlite3 "$T/ioacct.db" "SELECT $1 FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $JOB AND f.path $2"
}
ALL=$((4 * SIZE * COUNT))
got=$(q "sum(bytes_written) || ' ' || sum(bytes_read)" "= '$T/mpi/data'")
[ "$got" = "$ALL $ALL" ] ||
	{ q "rank, gen, opens, reads, writes, bytes_read, bytes_written, path" "LIKE '$T/mpi/%'"
	  fail "the data file's POSIX records sum to $got bytes written and read, not $ALL $ALL"; }
ok "MPI-IO collective: the data file's POSIX records sum to $ALL bytes written and $ALL read"
for r in 0 1 2 3; do
	[ "$(q "count(*) || ' ' || sum(opens) || ' ' || sum(bytes_read + bytes_written) || ' ' ||
		min(rank)" "= '$T/mpi/data.locktest.$r'")" = "1 1 0 $r" ] ||
		{ q "rank, gen, opens, reads, writes, path" "LIKE '$T/mpi/%'"
		  fail "data.locktest.$r has not one record of its own, of its open, rank $r"; }
done
[ "$(q "count(DISTINCT rank)" "= '$T/mpi/data'")" = 4 ] || fail "the data file has not a record per rank"
ok "MPI-IO collective: each rank's lock file its own record, apart from the data file"
