#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# HDF5 linked into the executable under Slurm (issue 39): h5prog.c built
# with h5cc (libhdf5.a in the program), never run before, started by srun in
# a monitored batch job. The plugin's task_init, in the task as the job's
# user, sends the program to ioacctd (probe_exe) and waits for its uprobes
# before Slurm executes it: its FIRST run gives 75-hdf5.sh's exact records.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/h5check.sh"
. "$(dirname "$0")/cluster.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the store"
command -v h5cc >/dev/null || skip "h5cc not installed (Debian: libhdf5-dev)"
h5cc -show | grep -q 'libhdf5\.a' || skip "h5cc does not link libhdf5.a (h5cc -show: $(h5cc -show))"
slurm_test_setup
start_daemon
require_mpi_uprobes
start_cluster "required $PLUGIN config=$CONF"

W=$T/work
mkdir -p "$W/h5"
h5cc -o "$W/h5prog" "$(dirname "$0")/../integration/h5prog.c" || fail "cannot build h5prog.c with h5cc"
printf '#!/bin/bash\nsrun %s %s\n' "$W/h5prog" "$W/h5/first.h5" > "$W/job.sh"
chmod 755 "$W/job.sh" "$W/h5prog"
chown -R "$U" "$W"
J=$(submit_as "$U" --io-monitor -n1 --chdir="$W" -o "$W/out.txt" "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out.txt"; fail "job $J ended $state"; }
! grep -q "not probed before it runs" "$W/out.txt" || fail "h5prog not probed: $(cat "$W/out.txt")"
h5prog_store_check "$J" "$W/h5/first.h5"
grep -q "uid $(id -u "$U"): probe_exe" "$T/ioacctd.log" || fail "no probe_exe of uid $U in the log"
[ "$(grep -c "HDF5: attached to $W/h5prog (HDF5; 18 of 22 functions" "$T/ioacctd.log")" = 1 ] ||
	fail "h5prog not attached once: $(grep "HDF5:" "$T/ioacctd.log")"
ok "srun of h5prog (libhdf5.a linked in) in a monitored job: its first run counted exactly"
