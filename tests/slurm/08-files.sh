#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-file records of a real Slurm job (issue 26): sbatch --io-monitor, one
# srun step of 3 tasks, task N writing its own file: a record per file and
# rank, the rank being each task's SLURM_PROCID (read by the probes from the
# task's environment), every counter exact.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
slurm_test_setup
start_daemon
start_cluster "required $PLUGIN config=$CONF"

W=$T/work
mkdir -p "$W/ranks"
chown -R "$U" "$W"
# Task N: N + 2 writes of 1000 x (N + 1) bytes to ranks/tN.dat.
cat > "$W/task.sh" <<TASK
#!/bin/bash
exec $IOWORK write $W/ranks/t\$SLURM_PROCID.dat \$((1000 * (SLURM_PROCID + 1))) \$((SLURM_PROCID + 2))
TASK
# -O: the node may have fewer CPUs than tasks.
printf '#!/bin/bash\nsrun --quiet -O -n3 %s\n' "$W/task.sh" > "$W/job.sh"
chmod 755 "$W/task.sh" "$W/job.sh"

J=$(submit_as "$U" --io-monitor -O -n3 --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
R=$W/ranks
# Only the tasks' files: the shells and Slurm's own reads are the job's too.
cat > "$T/expect.json" <<JSON
{"job": $J, "only": ["$R"],
 "files": {
  "$R/t0.dat@0": {"opens": 1, "writes": 2, "bytes_written": 2000, "max_byte_written": 1999,
                  "seq_writes": 1, "consec_writes": 1, "size_written": "0,2,0,0,0,0,0,0,0,0"},
  "$R/t1.dat@1": {"opens": 1, "writes": 3, "bytes_written": 6000, "max_byte_written": 5999,
                  "seq_writes": 2, "consec_writes": 2, "size_written": "0,0,3,0,0,0,0,0,0,0"},
  "$R/t2.dat@2": {"opens": 1, "writes": 4, "bytes_written": 12000, "max_byte_written": 11999,
                  "seq_writes": 3, "consec_writes": 3, "size_written": "0,0,4,0,0,0,0,0,0,0"}},
 "other": {}, "sums": []}
JSON
echo '{"mounts": []}' > "$T/none.json"
python3 "$(dirname "$0")/../integration/check_files.py" "$T/ioacct.db" "$T/none.json" "$T/expect.json" ||
	fail "per-file records of the ranks differ"
ok "sbatch --io-monitor, 3 tasks: a record per file and rank (SLURM_PROCID), exact"
