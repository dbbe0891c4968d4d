#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A requeued job (issue 24), on a real one-node cluster, unprivileged user: its
# first run writes 8192 bytes and is requeued while running (scontrol requeue);
# its second run writes 12288 bytes and completes. The store has two records of
# the job: the first run REQUEUED (as sacct says it), with its 8192 bytes, the
# second COMPLETED with its 12288, each exact. Issue 28: the runs are kept
# apart everywhere: restart counts 0 and 1 in the store; ioacct -j the last
# run alone, -D (--duplicates) both, through ioacctd and from the file;
# ioreport the last run, --run 0 the first; two report files, the second
# run's named .r1, each with its own run's bytes.
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

[ "$(sqlite3 "$DB" "SELECT group_concat(restart, ' ') FROM (SELECT restart FROM jobs
	WHERE job_id = $J ORDER BY start_ns)")" = "0 1" ] || fail "job $J's runs do not have restart counts 0 and 1"

IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport
# ioacct as the user, through ioacctd; and as root from the store file.
q() {
	su -s /bin/sh "$U" -c "'$IOACCT' -c '$CONF' -j $J -X -n -P --mounts -o JobID,State,Restarts,Mount,WriteBytes $*" |
		awk -F'|' -v m="$WMNT" '$4 == m' | tr '\n' ' '
}
got=$(q)
[ "$got" = "$J|COMPLETED|1|$WMNT|12288 " ] || fail "ioacct -j $J gives '$got', not the last run alone with its 12288 bytes"
got=$(q -D)
[ "$got" = "$J|REQUEUED|0|$WMNT|8192 $J|COMPLETED|1|$WMNT|12288 " ] ||
	fail "ioacct -j $J -D gives '$got', not both runs with their own bytes"
got=$(q --duplicates --db "$DB" 2>&1)
[ "$got" = "$J|REQUEUED|0|$WMNT|8192 $J|COMPLETED|1|$WMNT|12288 " ] ||
	fail "ioacct -j $J --duplicates --db gives '$got', not both runs"
ok "ioacct -j $J: the last run (12288 bytes); -D, through ioacctd and from the file: both runs, exact"

# ioreport: the last run, or the one asked for; never the two summed.
"$IOREPORT" -c "$CONF" "$J" > "$T/last.txt" || fail "ioreport $J failed"
"$IOREPORT" -c "$CONF" --run 0 "$J" > "$T/run0.txt" || fail "ioreport --run 0 $J failed"
"$IOREPORT" -c "$CONF" --run 1 --db "$DB" "$J" > "$T/run1.txt" || fail "ioreport --run 1 --db $J failed"
[ "$(report_bytes_written "$T/last.txt" "$WMNT")" = 12288 ] || fail "ioreport $J: not the last run's 12288 bytes"
[ "$(report_bytes_written "$T/run0.txt" "$WMNT")" = 8192 ] || fail "ioreport --run 0 $J: not the first run's 8192 bytes"
[ "$(report_bytes_written "$T/run1.txt" "$WMNT")" = 12288 ] || fail "ioreport --run 1 $J: not 12288 bytes"
"$IOREPORT" -c "$CONF" --run 2 "$J" > /dev/null 2> "$T/run2.err" && fail "ioreport --run 2 $J found a run that never was"
grep -q "run 2 of job $J" "$T/run2.err" || fail "ioreport --run 2: '$(cat "$T/run2.err")' does not name the run"
grep -q "^State .*, run 1 (requeued 1 time before)$" "$T/last.txt" || fail "ioreport $J: the State line does not name run 1"
grep -q "^State .*, run" "$T/run0.txt" && fail "ioreport --run 0 $J: the State line names a run"
ok "ioreport $J: the last run; --run 0 and --run 1 each run's own bytes; --run 2 none"

# The epilog's report of each run: the second does not overwrite the first.
for _ in $(seq 1 100); do
	[ -f "$W/ioacct-$J.r1.txt" ] && break
	sleep 0.1
done
files=$(cd "$W" && ls ioacct-"$J"* | tr '\n' ' ')
[ "$files" = "ioacct-$J.r1.txt ioacct-$J.txt " ] || fail "job $J: report files '$files', not one per run"
[ "$(report_bytes_written "$W/ioacct-$J.txt" "$WMNT")" = 8192 ] || fail "job $J: the first run's report is not its 8192 bytes"
[ "$(report_bytes_written "$W/ioacct-$J.r1.txt" "$WMNT")" = 12288 ] || fail "job $J: the second run's report is not its 12288 bytes"
ok "job $J: one report per run, ioacct-$J.txt (8192 bytes) and ioacct-$J.r1.txt (12288)"
exit 0
