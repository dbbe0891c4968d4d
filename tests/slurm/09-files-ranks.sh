#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-file records per rank (issue 26), on a real one-node cluster, as an
# unprivileged user: sbatch --io-monitor with one srun step of 3 tasks; task r
# (SLURM_PROCID r) writes (r + 1) x 4096 bytes to its own file rank<r>.dat and
# preads 1000 bytes at 0 and 3000 of one shared file. The node's store holds,
# for the step: one record per rank for its own file (exact writes and bytes)
# and one record per rank for the shared file (2 reads, 2000 bytes, largest
# offset read 3999), nothing of another rank in any of them.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
slurm_test_setup
start_daemon
start_cluster "required $PLUGIN config=$CONF"
W=$T/work; mkdir -p "$W"; chown "$U" "$W"
DB=$T/ioacct.db
head -c 8192 /dev/zero > "$W/shared.dat"
chown "$U" "$W/shared.dat"

cat > "$W/job.sh" <<JOB
#!/bin/bash
srun --quiet -n3 --overcommit bash -c 'exec $IOWORK write $W/rank\$SLURM_PROCID.dat 4096 \$((SLURM_PROCID + 1)) , pread $W/shared.dat 1000 2 3000'
JOB
chmod 755 "$W/job.sh"
J=$(submit_as "$U" -n3 --overcommit --io-monitor --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }

# The records of the work directory's files, once the job is stored.
recs() {
	sqlite3 -separator ' ' "$DB" "SELECT f.step_id, f.rank, replace(f.path, '$W/', ''), f.writes,
		f.bytes_written, f.reads, f.bytes_read, f.max_byte_read FROM files f
		JOIN jobs j ON j.key = f.job_key WHERE j.job_id = $J AND f.path LIKE '$W/%'
		AND f.path NOT LIKE '%/out-%' ORDER BY f.path, f.rank"
}
for _ in $(seq 1 300); do
	[ "$(sqlite3 "$DB" "SELECT state FROM jobs WHERE job_id = $J")" = COMPLETED ] && break
	sleep 0.1
done
recs > "$T/got"
cat > "$T/want" <<EOF
0 0 rank0.dat 1 4096 0 0 0
0 1 rank1.dat 2 8192 0 0 0
0 2 rank2.dat 3 12288 0 0 0
0 0 shared.dat 0 0 2 2000 3999
0 1 shared.dat 0 0 2 2000 3999
0 2 shared.dat 0 0 2 2000 3999
EOF
diff -u "$T/want" "$T/got" || fail "job $J: the per-file records per rank are not exact"
ok "job $J, 3 tasks: per rank, its own file (4096, 8192, 12288 bytes) and the shared file (2 reads, 2000 bytes), exact"
exit 0
