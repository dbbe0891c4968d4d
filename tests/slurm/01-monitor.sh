#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The SPANK plugin on a real one-node Slurm cluster (munged, slurmctld,
# slurmd started here), jobs submitted by an unprivileged user:
#  1. sbatch --io-monitor with a batch step and two srun steps writing exact,
#     different byte counts to two mounts: report where the pattern says,
#     owned by the user, exact per-mount and per-step bytes in the store, no
#     permission (nor space, I/O) errors and no errors advice;
#  2. a job without the flag: no report, nothing stored; with default=on in
#     plugstack.conf, monitored anyway;
#  5. two jobs running at once: no byte of one is attributed to the other;
#  6. a job array: one report per task, named with %A_%a.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
slurm_test_setup
start_daemon
start_cluster "required $PLUGIN config=$CONF"

W=$T/work; mkdir -p "$W"; chown "$U" "$W"
SHM=/dev/shm/ioacct-test-$$; mkdir -p "$SHM"; chown "$U" "$SHM"
WMNT=$(mount_of "$W"); SMNT=$(mount_of /dev/shm)
cat > "$W/job.sh" <<JOB
#!/bin/bash
$IOWORK write $W/batch.dat 1048576 3
# --quiet: under load srun says "step creation temporarily disabled, retrying"
# into the job's output file on \$W's mount, which the batch step's exact
# byte count would then include.
srun --quiet -n1 $IOWORK write $SHM/step0.dat 1048576 5
srun --quiet -n1 $IOWORK write $W/step1.dat 1048576 1
JOB
chmod 755 "$W/job.sh"

# 1. Monitored.
J=$(submit_as "$U" --io-monitor --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
R=$W/ioacct-$J.txt
[ -f "$R" ] || { ls -la "$W"; tail "$C/log/slurmd.log"; fail "no report $R"; }
[ "$(stat -c %U "$R")" = "$U" ] || fail "report owned by $(stat -c %U "$R"), not $U"
head -40 "$R"
python3 - "$T/ioacct.db" "$J" "$WMNT" "$SMNT" <<'PY' || fail "stored per-step bytes differ"
import sqlite3, sys
db, job, wmnt, smnt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
key, state = con.execute("select key, state from jobs where job_id=? and cluster='ioacct-test'", (job,)).fetchone()
got = {(s, p): b for s, p, b in con.execute(
    "select t.step_id, m.path, sum(t.bytes) from totals t join mounts m on m.job_key=t.job_key and m.mnt_id=t.mnt_id"
    " where t.job_key=? and t.op=1 group by t.step_id, m.path", (key,))}
want = {(4294967291, wmnt): 3 << 20, (0, smnt): 5 << 20, (1, wmnt): 1 << 20}
steps = sorted(s for (s,) in con.execute("select step_id from steps where job_key=?", (key,)))
print("state", state, "steps", steps, "write bytes per (step, mount):", got)
bad = [f"{k}: {got.get(k)} != {v}" for k, v in want.items() if got.get(k) != v]
# Slurm's own task setup may write to /proc (oom_score_adj) once the task is
# watched: real, but not the job's data; judge only the two data mounts.
bad += [f"unexpected writes {k}: {v}" for k, v in got.items() if k not in want and v and k[1] in (wmnt, smnt)]
if steps != [0, 1, 4294967291]: bad.append(f"steps {steps}")
if state != "COMPLETED": bad.append(f"state {state}")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
[ "$(report_bytes_written "$R" "$SMNT")" = 5242880 ] || fail "report: $SMNT is not 5242880 bytes written"
[ "$(report_bytes_written "$R" "$WMNT")" = 4194304 ] || fail "report: $WMNT is not 4194304 bytes written"
grep -q '^# state: COMPLETED$' "$R" || fail "report: state is not COMPLETED"
# A plain job fails no call for want of permission. Once it did: sbatch
# passed on the submitter's (root's) PATH, and the job's shell, looking for
# srun, stat'ed /root/.cargo/bin/srun and friends: 5 EACCES, a WARN.
! grep -E '^(HIGH|WARN) errors:' "$R" || fail "report: a plain job WARNs of errors"
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select coalesce(sum(t.err_access + t.err_space + t.err_io), -1) from totals t join jobs j on j.key=t.job_key where j.job_id=?", (int(sys.argv[2]),)).fetchone()[0])' "$T/ioacct.db" "$J")
[ "$n" = 0 ] || fail "store: job $J has $n permission, space or I/O errors, expected 0"
ok "monitored job: report by the user, exact bytes per step and mount"

# 2. Not monitored.
J2=$(submit_as "$U" --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
[ "$(wait_job "$J2")" = COMPLETED ] || fail "job $J2 failed"
[ ! -e "$W/ioacct-$J2.txt" ] || fail "a report for an unmonitored job"
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from jobs where job_id=?", (int(sys.argv[2]),)).fetchone()[0])' "$T/ioacct.db" "$J2")
[ "$n" = 0 ] || fail "unmonitored job $J2 is in the store"
ok "unmonitored job: no report, nothing stored"

# 2b. default=on: monitored without the flag.
echo "required $PLUGIN config=$CONF default=on" > "$C/plugstack.conf"
J3=$(submit_as "$U" --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
[ "$(wait_job "$J3")" = COMPLETED ] || fail "job $J3 failed"
[ -f "$W/ioacct-$J3.txt" ] || fail "default=on: no report for job $J3"
ok "default=on: monitored without the flag"
echo "required $PLUGIN config=$CONF" > "$C/plugstack.conf"

# bytes_of JOB: bytes written on the two data mounts by a job, from the store.
bytes_of() {
	python3 - "$T/ioacct.db" "$1" "$WMNT" "$SMNT" <<'PY'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
key = con.execute("select key from jobs where job_id=? and cluster='ioacct-test'", (int(sys.argv[2]),)).fetchone()[0]
print(" ".join(f"{p}={b}" for p, b in con.execute(
    "select m.path, sum(t.bytes) from totals t join mounts m on m.job_key=t.job_key and m.mnt_id=t.mnt_id"
    " where t.job_key=? and t.op=1 and m.path in (?, ?) group by m.path order by m.path",
    (key, sys.argv[3], sys.argv[4]))))
PY
}

# 5. Two jobs at once, on the same mounts, overlapping in time.
printf '#!/bin/bash\n%s write %s/a.dat 1048576 2 , sleep 1.5 , pwrite %s/a.dat 4096 7\n' "$IOWORK" "$W" "$SHM" > "$W/a.sh"
printf '#!/bin/bash\n%s write %s/b.dat 1048576 3 , sleep 1.5 , pwrite %s/b.dat 4096 11\n' "$IOWORK" "$W" "$SHM" > "$W/b.sh"
chmod 755 "$W/a.sh" "$W/b.sh"
JA=$(submit_as "$U" --io-monitor --chdir="$W" -o /dev/null "$W/a.sh")
JB=$(submit_as "$U" --io-monitor --chdir="$W" -o /dev/null "$W/b.sh")
[ "$(wait_job "$JA")" = COMPLETED ] && [ "$(wait_job "$JB")" = COMPLETED ] || fail "concurrent jobs failed"
a=$(bytes_of "$JA"); b=$(bytes_of "$JB")
echo "job $JA: $a; job $JB: $b"
want_a="$SMNT=28672 $WMNT=2097152"; want_b="$SMNT=45056 $WMNT=3145728"
[ "$WMNT" \< "$SMNT" ] && { want_a="$WMNT=2097152 $SMNT=28672"; want_b="$WMNT=3145728 $SMNT=45056"; }
[ "$a" = "$want_a" ] || fail "job $JA: $a, expected $want_a"
[ "$b" = "$want_b" ] || fail "job $JB: $b, expected $want_b"
ok "two jobs at once: each has exactly its own bytes"

# 6. A job array, reports named with %A_%a.
echo "required $PLUGIN config=$CONF report=%w/ioacct-%A_%a.txt" > "$C/plugstack.conf"
printf '#!/bin/bash\n%s write %s/arr-$SLURM_ARRAY_TASK_ID.dat 65536 $SLURM_ARRAY_TASK_ID\n' "$IOWORK" "$W" > "$W/arr.sh"
chmod 755 "$W/arr.sh"
JR=$(submit_as "$U" --io-monitor --array=1-3 --chdir="$W" -o /dev/null "$W/arr.sh")
for i in 1 2 3; do
	[ "$(wait_job "${JR}_$i")" = COMPLETED ] || fail "array task ${JR}_$i failed"
done
for i in 1 2 3; do
	f=$W/ioacct-${JR}_$i.txt
	[ -f "$f" ] || { ls "$W"; fail "no report $f"; }
	[ "$(report_bytes_written "$f" "$WMNT")" = $((65536 * i)) ] || { cat "$f"; fail "$f: not $((65536 * i)) bytes written"; }
	grep -q "^# array: ${JR}_$i\$" "$f" || fail "$f: does not say it is array task ${JR}_$i"
done
echo "required $PLUGIN config=$CONF" > "$C/plugstack.conf"
ok "job array: one exact report per task, named %A_%a"
