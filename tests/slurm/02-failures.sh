#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Monitoring never harms a job (real one-node cluster, unprivileged user):
#  3. ioacctd stopped: the job completes, its output has the one warning
#     line, the node stays idle (not drained), with the plugin `required`;
#  4. scancel during I/O: the data up to the cancel is stored, the report
#     says CANCELLED;
#  7. a report pattern pointing at a symlink into a root-owned file: nothing
#     is written there, the job completes.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
slurm_test_setup
start_cluster "required $PLUGIN config=$CONF"
W=$T/work; mkdir -p "$W"; chown "$U" "$W"
WMNT=$(mount_of "$W")

# 3. No daemon at all.
printf '#!/bin/bash\n%s write %s/x.dat 4096 3\nsrun -n1 true\necho job-done\n' "$IOWORK" "$W" > "$W/job.sh"
chmod 755 "$W/job.sh"
J=$(submit_as "$U" --io-monitor --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
[ "$(wait_job "$J")" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J did not complete without the daemon"; }
cat "$W/out-$J.txt"
grep -q '^job-done$' "$W/out-$J.txt" || fail "the job did not run to its end"
grep -q '^ioacct: I/O monitoring unavailable: cannot connect to ' "$W/out-$J.txt" ||
	fail "no warning line in the job's output"
# One line for each of the two steps (batch, srun), nothing else of ours.
[ "$(grep -c 'ioacct' "$W/out-$J.txt")" = 2 ] || fail "expected exactly 2 ioacct lines (one per step)"
[ "$(grep -c '^ioacct: I/O monitoring unavailable: cannot connect' "$W/out-$J.txt")" = 2 ] ||
	fail "the ioacct lines are not the warning"
[ ! -e "$W/ioacct-$J.txt" ] || fail "a report without a daemon?"
state=$(sinfo -h -o %T)
[ "$state" = idle ] || fail "node is $state after a job without the daemon"
ok "daemon down: job completed, one warning line per step, node idle"

# 4. scancel while the job is writing.
start_daemon
printf '#!/bin/bash\n%s write %s/c.dat 1048576 6 , sleep 300\n' "$IOWORK" "$W" > "$W/cancel.sh"
chmod 755 "$W/cancel.sh"
J=$(submit_as "$U" --io-monitor --chdir="$W" -o /dev/null "$W/cancel.sh")
for _ in $(seq 1 100); do
	[ "$(stat -c %s "$W/c.dat" 2>/dev/null)" = 6291456 ] && break
	sleep 0.1
done
scancel "$J"
state=$(wait_job "$J")
[ "$state" = CANCELLED ] || fail "job $J ended $state, not CANCELLED"
R=$W/ioacct-$J.txt
for _ in $(seq 1 50); do [ -f "$R" ] && break; sleep 0.1; done
[ -f "$R" ] || fail "no report for the cancelled job"
head -30 "$R"
grep -q '^# state: CANCELLED$' "$R" || fail "the report does not say CANCELLED"
[ "$(report_bytes_written "$R" "$WMNT")" = 6291456 ] || fail "the report lacks the 6291456 bytes written before the cancel"
ok "scancel: data up to the cancel stored, report says CANCELLED"

# 7. The report path is a symlink the user planted, pointing at a root-owned file.
echo "required $PLUGIN config=$CONF report=%w/evil.txt" > "$C/plugstack.conf"
echo precious > "$T/rootfile"; chmod 644 "$T/rootfile"
ln -s "$T/rootfile" "$W/evil.txt"; chown -h "$U" "$W/evil.txt"
J=$(submit_as "$U" --io-monitor --chdir="$W" -o /dev/null "$W/job.sh")
[ "$(wait_job "$J")" = COMPLETED ] || fail "job $J failed"
[ "$(cat "$T/rootfile")" = precious ] || fail "the root-owned file behind the link was written"
[ -L "$W/evil.txt" ] || fail "the link was replaced"
grep -q "report not written" "$C/log/slurmd.log" || fail "slurmd log does not say why no report"
ok "symlinked report path: nothing written through it, job completed"
