#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# MPI-IO through uprobes (issue 27), exact: first a job that loads no MPI
# library (only the libraries parsed ahead attached, at its registration),
# then 4 OpenMPI ranks under mpirun inside a
# monitored job (iorun), each doing independent, collective, nonblocking
# and split writes and reads of MPI_BYTE, MPI_INT and a derived datatype,
# a sync, a set_view, on a file opened on MPI_COMM_WORLD, then 3 writes to
# its own file opened on MPI_COMM_SELF (mpiio.c). Every rank's counters of
# every file are exact in the store's mpiio_files, the library was attached
# once for the 4 ranks, at the job's registration, and the POSIX records of the same files are there.
# Then the same program built with MPICH, where installed: exact too, its
# derived datatype's size noted when MPI_Type_vector made it.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
# Debian's names of each library's wrappers; mpicc and mpirun may be either.
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
# Uprobes removed a second after their last step ends (the default keeps
# them 10 minutes): what the checks of detaching below see. A long
# mpi_detach_after's own check is at the end.
EXTRA_CONF="${EXTRA_CONF:-}
mpi_detach_after = 1s"
setup
start_daemon
require_mpi_uprobes
wait_parsed_ahead
# OpenMPI's session directory (/tmp/ompi.HOST.UID) is shared by every
# mpirun of a user: two at once (make -j2 check) race on it. This test's own,
# on a file system of its own: its files, made and deleted in the job, would
# otherwise leave their inode numbers to the job's files (per-file records
# are by device and inode). Unmounted by teardown.
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
	fail "cannot mount a tmpfs for OpenMPI's session directory"

D=$(realpath "$T")/mpi
mkdir -p "$D"

# A job of plain I/O: the libraries parsed ahead are attached at its
# registration (its program has not run: the daemon cannot know it loads
# none); none at an open.
"$IORUN" -- "$IOWORK" write "$D/plain" 4096 4 > /dev/null 2>&1 || fail "iorun (plain) failed"
! grep "MPI-IO: attached" "$T/ioacctd.log" | grep -v "at a step's registration" ||
	fail "a job without MPI got uprobes at an open"
ok "a job that loads no MPI library: only the libraries parsed ahead, at its registration"

# A library so named that is not the administrator's (a user's copy, or
# root's but writable by others) is neither parsed nor probed.
REAL=$(ldconfig -p | awk '/libmpi\.so\.[0-9]+ .*x86-64/ { print $NF; exit }')
[ -n "$REAL" ] || REAL=/lib/x86_64-linux-gnu/libmpi.so.40
cp "$REAL" "$D/libmpi.so.users" && chown nobody "$D/libmpi.so.users"
cp "$REAL" "$D/libmpi.so.open" && chmod 666 "$D/libmpi.so.open"
# The daemon looks at a library through /proc/PID/root as it reads its ring
# buffer, so the task that opened it stays until both refusals are logged
# (a task gone by then leaves nothing to look at: a debug line says so).
refusals() {
	grep -c "MPI-IO: .*/libmpi.so.\(users\|open\) not attached: not a regular file of root's" \
		"$T/ioacctd.log"
}
export -f refusals
T="$T" "$IORUN" -- bash -c 'exec 3< "$1" 4< "$2"
	for _ in $(seq 1 300); do [ "$(refusals)" = 2 ] && exit 0; sleep 0.1; done
	exit 1' _ "$D/libmpi.so.users" "$D/libmpi.so.open" > /dev/null 2>&1 ||
	fail "the refusals were not logged: $(grep "MPI-IO" "$T/ioacctd.log")"
! grep -q "MPI-IO: attached to .*/libmpi.so.\(users\|open\)" "$T/ioacctd.log" ||
	fail "a user's library got uprobes"
ok "a library of a user's, or writable by others, is neither parsed nor probed"

COLS="rank, path, indep_opens, coll_opens, indep_reads, indep_writes, coll_reads, coll_writes,"
COLS+=" split_reads, split_writes, nb_reads, nb_writes, syncs, views, bytes_read,"
COLS+=" bytes_written, unsized_reads, unsized_writes, size_read, size_written"

# mpi_job NAME LIB FLAVOUR CC RUN [RUN OPTIONS]: mpiio.c built with CC, 4 ranks
# under RUN in a job, which attaches LIB once, at its registration; its rows in $T/got.
mpi_job() {
	local name=$1 lib=$2 flavour=$3 cc=$4 run=$5 from
	shift 5
	# The libraries of the jobs before detached first (mpi_detach_after): this one's
	# registration attaches them again.
	wait_libraries_detached
	from=$(($(wc -l < "$T/ioacctd.log") + 1))
	# since: the log's lines since the job began.
	since() { tail -n +"$from" "$T/ioacctd.log"; }
	rm -rf "$D" && mkdir -p "$D"
	"$cc" -Wall -o "$T/mpiio-$name" "$(dirname "$0")/mpiio.c" || fail "$cc failed"
	"$IORUN" --json -o "$T/$name.json" -- "$run" "$@" -np 4 "$T/mpiio-$name" "$D" \
		> "$T/$name.out" 2>&1 || { cat "$T/$name.out"; fail "iorun $run failed"; }
	JOB=$(json_get "$T/$name.json" 'j["job_id"]')
	[ "$(since | grep -c "MPI-IO: attached to .*/$lib.* at a step's registration ($flavour;")" = 1 ] ||
		fail "$lib not attached exactly once, at the registration: $(since | grep MPI-IO)"
	! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "$name: MPI-IO calls lost"
	ok "$name: $lib attached once, for the 4 ranks, no call lost"
	# Its step over, no watched step loads it: its uprobes go, in a thread of
	# their own (the kernel takes seconds to remove them: not in the job's
	# FINISH, whose client gives up after 10 s).
	detached() { since | grep -c "MPI-IO: detached from the library .*/$lib"; }
	for _ in $(seq 1 1200); do
		[ "$(detached)" -ge 1 ] && break
		sleep 0.1
	done
	[ "$(detached)" = 1 ] || fail "$name: $lib not detached once after the job"
	if command -v bpftool > /dev/null; then
		! bpftool perf list | grep "^pid $DAEMON_PID .*uprobe" ||
			fail "$name: ioacctd still has uprobes after the job"
	fi
	ok "$name: the uprobes detached with the step"
	grep "MPI-IO: \(attached\|detached\)" "$T/ioacctd.log" | tail -2 | sed 's/^/  /'
	sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM mpiio_files f JOIN jobs j
		ON j.key = f.job_key WHERE j.job_id = $JOB ORDER BY rank, path" > "$T/got"
	[ "$(sqlite3 "$T/ioacct.db" "SELECT count(DISTINCT pid) FROM mpiio_files f JOIN jobs j
		ON j.key = f.job_key WHERE j.job_id = $JOB")" = 4 ] || fail "$name: not 4 processes"
}

# want SHARED-COUNTERS: the expected rows, own.R then shared per rank.
want() {
	: > "$T/want"
	for r in 0 1 2 3; do
		echo "$r $D/own.$r 1 0 0 3 0 0 0 0 0 0 0 0 0 60 0 0 0,0,0,0,0,0,0,0,0,0 3,0,0,0,0,0,0,0,0,0" >> "$T/want"
		echo "$r $D/shared 0 1 1 1 1 1 1 1 1 1 1 1 $1" >> "$T/want"
	done
}

mpi_job openmpi libmpi.so OpenMPI "$OMPICC" "$OMPIRUN" --allow-run-as-root --oversubscribe
# shared: 2000 B (bin 2), 30 x 4 B (bin 1), 2 x 24 B and 7 B (bin 0), each way.
want "2175 2175 0 0 2,1,1,0,0,0,0,0,0,0 2,1,1,0,0,0,0,0,0,0"
diff "$T/want" "$T/got" || fail "OpenMPI: MPI-IO counters differ (- expected, + stored)"
ok "OpenMPI: every rank's MPI-IO counters of every file exact"

# The time is the calls': every row with calls has some.
[ "$(sqlite3 "$T/ioacct.db" "SELECT count(*) FROM mpiio_files f JOIN jobs j ON j.key = f.job_key
	WHERE j.job_id = $JOB AND (write_ns = 0 OR meta_ns = 0)")" = 0 ] || fail "a row without time"
# The same files' POSIX records (by inode: issue 26 leaves the path of some
# of OMPIO's opens empty), with the bytes the MPI-IO calls asked for.
INOS=$(stat -c %i "$D/shared" "$D"/own.? | paste -sd, -)
[ "$(sqlite3 "$T/ioacct.db" "SELECT count(DISTINCT ino) FROM files f JOIN jobs j ON j.key = f.job_key
	WHERE j.job_id = $JOB AND ino IN ($INOS) AND bytes_written > 0")" = 5 ] ||
	fail "POSIX records of the MPI-IO files missing"
ok "write, read and metadata time counted; POSIX records of the same files present"

# MPICH: the derived datatype's handle says nothing of its size; the size
# noted when MPI_Type_vector made it makes the same bytes as OpenMPI's.
if MPICHCC=$(command -v mpicc.mpich) && MPICHRUN=$(command -v mpiexec.mpich); then
	mpi_job mpich libmpich.so MPICH "$MPICHCC" "$MPICHRUN"
	want "2175 2175 0 0 2,1,1,0,0,0,0,0,0,0 2,1,1,0,0,0,0,0,0,0"
	diff "$T/want" "$T/got" || fail "MPICH: MPI-IO counters differ (- expected, + stored)"
	ok "MPICH: every rank's MPI-IO counters of every file exact, derived datatypes too"
else
	echo "note: MPICH not installed (Debian: libmpich-dev mpich): its part not run"
fi

# mpi_detach_after = 1hour: a finished job's library keeps its uprobes, and
# the next job finds them in place (no second attach, counters exact).
stop_daemon
sed -i 's/^mpi_detach_after = .*/mpi_detach_after = 1hour/' "$CONF"
: > "$T/ioacctd.log"
start_daemon
wait_parsed_ahead
for run in 1 2; do
	rm -rf "$D" && mkdir -p "$D"
	"$IORUN" --json -o "$T/keep$run.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
		"$T/mpiio-openmpi" "$D" > "$T/keep$run.out" 2>&1 ||
		{ cat "$T/keep$run.out"; fail "iorun (kept uprobes, run $run) failed"; }
	JOB=$(json_get "$T/keep$run.json" 'j["job_id"]')
	sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM mpiio_files f JOIN jobs j
		ON j.key = f.job_key WHERE j.job_id = $JOB ORDER BY rank, path" > "$T/got"
	want "2175 2175 0 0 2,1,1,0,0,0,0,0,0,0 2,1,1,0,0,0,0,0,0,0"
	diff "$T/want" "$T/got" || fail "kept uprobes, run $run: MPI-IO counters differ"
done
[ "$(grep -c "MPI-IO: attached to .*/libmpi\.so.*(OpenMPI;" "$T/ioacctd.log")" = 1 ] ||
	fail "the library was attached again"
! grep -q "MPI-IO: detached" "$T/ioacctd.log" || fail "the library was detached within the hour"
ok "mpi_detach_after = 1hour: two jobs, one attach, both exact"
