#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# MPI-IO of a real Slurm job (issue 27): sbatch --io-monitor -n4, mpirun of
# OpenMPI inside the allocation (its 4 ranks in the batch step's cgroup,
# launched by mpirun from the allocation Slurm gave it), the program of
# tests/integration/37-mpiio.sh: every rank's MPI-IO counters of every file
# exact in the node's store, the rank being the MPI rank; then the same with
# MPICH's mpiexec (hydra, its processes started by fork inside the step)
# where installed.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
slurm_test_setup
start_daemon
require_mpi_uprobes
start_cluster "required $PLUGIN config=$CONF"

W=$T/work
mkdir -p "$W"
chown -R "$U" "$W"
COLS="rank, path, indep_opens, coll_opens, indep_reads, indep_writes, coll_reads, coll_writes,"
COLS+=" split_reads, split_writes, nb_reads, nb_writes, syncs, views, bytes_read,"
COLS+=" bytes_written, unsized_reads, unsized_writes, size_read, size_written"

# mpi_sbatch NAME CC LAUNCHER...: the program built with CC, run by the batch
# script as LAUNCHER -np 4 PROGRAM DIR in a monitored job of 4 tasks; its
# MPI-IO rows in $T/got, the files in $W/NAME.
mpi_sbatch() {
	local name=$1 cc=$2
	shift 2
	"$cc" -Wall -o "$W/mpiio-$name" "$(dirname "$0")/../integration/mpiio.c" || fail "$cc failed"
	mkdir -p "$W/$name" && chown "$U" "$W/$name"
	# -O: the node may have fewer CPUs than tasks; mpirun gets its 4 slots from the allocation.
	printf '#!/bin/bash\nexec %s -np 4 %s %s\n' "$*" "$W/mpiio-$name" "$W/$name" > "$W/$name.sh"
	chmod 755 "$W/$name.sh" "$W/mpiio-$name"
	J=$(submit_as "$U" --io-monitor -O -n4 --chdir="$W" -o "$W/out-$name.txt" "$W/$name.sh")
	state=$(wait_job "$J")
	[ "$state" = COMPLETED ] || { cat "$W/out-$name.txt"; fail "$name: job $J ended $state"; }
	! grep -q "MPI-IO calls not counted" "$T/ioacctd.log" || fail "$name: MPI-IO calls lost"
	sqlite3 -separator ' ' "$T/ioacct.db" "SELECT $COLS FROM mpiio_files f JOIN jobs j
		ON j.key = f.job_key WHERE j.job_id = $J ORDER BY rank, path" > "$T/got"
}

# want DIR SHARED-COUNTERS: the rows 37-mpiio.sh expects, own.R then shared per rank.
want() {
	: > "$T/want"
	for r in 0 1 2 3; do
		echo "$r $1/own.$r 1 0 0 3 0 0 0 0 0 0 0 0 0 60 0 0 0,0,0,0,0,0,0,0,0,0 3,0,0,0,0,0,0,0,0,0" >> "$T/want"
		echo "$r $1/shared 0 1 1 1 1 1 1 1 1 1 1 1 $2" >> "$T/want"
	done
}

mpi_sbatch openmpi "$OMPICC" "$OMPIRUN" --oversubscribe
want "$W/openmpi" "2175 2175 0 0 2,1,1,0,0,0,0,0,0,0 2,1,1,0,0,0,0,0,0,0"
diff "$T/want" "$T/got" || fail "OpenMPI under sbatch: MPI-IO counters differ (- expected, + stored)"
ok "sbatch --io-monitor, mpirun of 4 OpenMPI ranks: every rank's MPI-IO counters of every file exact"

if MPICHCC=$(command -v mpicc.mpich) && MPICHRUN=$(command -v mpiexec.mpich); then
	mpi_sbatch mpich "$MPICHCC" "$MPICHRUN" -launcher fork
	want "$W/mpich" "2175 2175 0 0 2,1,1,0,0,0,0,0,0,0 2,1,1,0,0,0,0,0,0,0"
	diff "$T/want" "$T/got" || fail "MPICH under sbatch: MPI-IO counters differ (- expected, + stored)"
	ok "sbatch --io-monitor, mpiexec of 4 MPICH ranks: MPI-IO counters exact, derived types too"
else
	echo "note: MPICH not installed (Debian: libmpich-dev mpich): its part not run"
fi
