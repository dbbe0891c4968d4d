#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A requeued job (issue 24), on a real one-node cluster, unprivileged user: its
# first run writes 8192 bytes and is requeued while running (scontrol requeue);
# its second run writes 12288 bytes and completes. The store has two records of
# the job: the first run REQUEUED (as sacct says it), with its 8192 bytes, the
# second COMPLETED with its 12288, each exact.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
slurm_test_setup
start_cluster "required $PLUGIN config=$CONF"
start_daemon
W=$T/work; mkdir -p "$W"; chown "$U" "$W"
WMNT=$(mount_of "$W")
DB=$T/ioacct.db

# Run n (SLURM_RESTART_COUNT, absent at first) writes (n + 2) x 4096 bytes; the first waits.
cat > "$W/rq.sh" <<EOF
#!/bin/bash
n=\${SLURM_RESTART_COUNT:-0}
$IOWORK write $W/r\$n.dat 4096 \$((n + 2))
[ "\$n" = 0 ] && sleep 300
echo run-\$n-done
EOF
chmod 755 "$W/rq.sh"
J=$(submit_as "$U" --io-monitor --requeue --chdir="$W" -o /dev/null "$W/rq.sh")
for _ in $(seq 1 300); do
	[ "$(stat -c %s "$W/r0.dat" 2>/dev/null)" = 8192 ] && break
	sleep 0.1
done
[ "$(stat -c %s "$W/r0.dat" 2>/dev/null)" = 8192 ] || fail "the first run did not write its 8192 bytes"
scontrol requeue "$J" || fail "scontrol requeue $J failed"
# Requeued jobs wait (BeginTime) before they run again: now.
for _ in $(seq 1 100); do
	[ "$(job_state "$J")" = PENDING ] && break
	sleep 0.1
done
scontrol update JobId="$J" StartTime=now || fail "cannot start job $J again now"
state=$(wait_job "$J" 120)
[ "$state" = COMPLETED ] || fail "job $J ended $state after its requeue, not COMPLETED"
[ "$(stat -c %s "$W/r1.dat" 2>/dev/null)" = 12288 ] || fail "the second run did not write its 12288 bytes"

# The two runs, by start: state, exit code, bytes written on the work mount.
runs() {
	sqlite3 "$DB" "SELECT j.state, j.exit_code, coalesce((SELECT sum(t.bytes) FROM totals t
		JOIN mounts m ON m.job_key = t.job_key AND m.mnt_id = t.mnt_id
		WHERE t.job_key = j.key AND t.op = 1 AND m.path = '$WMNT'), 0)
		FROM jobs j WHERE j.job_id = $J ORDER BY j.start_ns"
}
for _ in $(seq 1 100); do
	[ "$(runs | wc -l)" = 2 ] && [ "$(runs | tail -1 | cut -d'|' -f1)" != RUNNING ] && break
	sleep 0.1
done
got=$(runs | tr '\n' ' ')
echo "job $J in the store, run by run: $got"
[ "$got" = "REQUEUED|0|8192 COMPLETED|0|12288 " ] ||
	fail "job $J's runs are stored as '$got', not 'REQUEUED|0|8192 COMPLETED|0|12288'"
ok "requeued job: the first run stored REQUEUED with its 8192 bytes, the second COMPLETED with its 12288"
exit 0
