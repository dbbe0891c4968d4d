#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 54-mntreuse.sh's container jobs with ioacctd keying mounts as on a kernel
# before 6.8 (IOACCT_MNT_IDS=legacy): by the 32-bit ids the kernel hands to
# the next mount as soon as one is freed, a mount named only from what the
# daemon can prove (the probes' note of the slot's own mount, the job's own
# table since before its counters). What that fallback promises, exactly:
# - no job's report names another job's mount, and no bytes are under a
#   name that is not the job's own mount (its /proc aside: unshare writes
#   the id maps there);
# - each job's bytes are all there: on its own named mounts plus the mounts
#   the daemon could not prove, reported unnamed (mnt:KEY, file system
#   "unknown"), they sum to exactly what it wrote;
# - the jobs that wait until their bytes are stored (j % 4 >= 2, their
#   namespace alive at the drain) name both their mounts exactly, as in 54.
# The host's kernel has the unique ids (6.8+); the switch makes the daemon,
# its BPF programs included, take the older kernels' way (docs/design.md,
# "Which identity keys what").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mntreuse.sh"
mntreuse_require
JOB0=74000

setup
trap 'rc=$?; [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null; (exit $rc); teardown' EXIT
mntreuse_users
IOACCT_MNT_IDS=legacy start_daemon
grep -q "IOACCT_MNT_IDS=legacy" "$T/ioacctd.log" ||
	fail "ioacctd did not say that IOACCT_MNT_IDS=legacy is on"
mntreuse_prepare

check_round() {
	local r=$1
	python3 - "$T/expected.json" "$OUT" "$B" "$BINDFS" "$T/ioacct.db" <<'PY' ||
import json, os, re, sqlite3, sys
exp, out, base, bindfs = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
PROC = re.compile(r"/proc( \(mount namespace \d+\))?")
UNNAMED = re.compile(r"mnt:\d+")
bad, reports = [], {}
# The switch took: every mount stored under a 32-bit id (IOACCT_MNT_UNIQUE_MIN is 2^31).
db = sqlite3.connect(sys.argv[5])
n, top = db.execute("select count(*), max(mnt_id) from mounts").fetchone()
if not n or top >= 1 << 31:
    bad.append(f"{n} mounts stored, the highest key {top}: not keyed by 32-bit ids")
# The hard case happened: the kernel gave one 32-bit id to the mounts of two
# jobs or more (it hands out the lowest free one); else the round proves nothing.
reused = db.execute("select count(*) from (select mnt_id from mounts where path like ?"
                    " group by mnt_id having count(distinct job_key) > 1)", (base + "/%",)).fetchone()[0]
if not reused:
    bad.append("no 32-bit mount id went to two jobs' mounts: the kernel reused none, nothing was proven")
crossed = unnamed = unnamed_jobs = 0
# What unshare writes to the id maps in /proc: the same for each job of a
# user, learnt from the jobs whose /proc was named (it may be unnamed too).
proc = {}
for j in exp:
    got = json.load(open(os.path.join(out, j + ".json")))
    reports[j] = {m["mount"]: (m["write_bytes"], m["fs_type"]) for m in got["mounts"] if m["write_bytes"]}
    for m, (b, fs) in reports[j].items():
        if PROC.fullmatch(m):
            proc.setdefault(int(j) % 2, set()).add(b)
for user, sizes in proc.items():
    if len(sizes) != 1:
        bad.append(f"user {user}: /proc bytes differ between jobs: {sorted(sizes)}")
proc = {u: min(s) for u, s in proc.items()}
for j, mounts in sorted(exp.items()):
    named, lost, unproven, proc_named = reports[j], 0, 0, False
    for m, (b, fs) in sorted(named.items()):
        if UNNAMED.fullmatch(m):
            unnamed += 1
            unproven += b
            if fs != "unknown":
                bad.append(f"job {j}: unnamed {m!r} has a file system: {fs}")
        elif m in mounts:
            want = (mounts[m], "tmpfs" if m.endswith("-t") else bindfs)
            if (b, fs) != want:
                bad.append(f"job {j}: {m!r}: {(b, fs)}, expected {want}")
        elif PROC.fullmatch(m):
            proc_named = True
        else:
            # Another job's directory, or any other name: not the job's own.
            if m.startswith(base + "/"):
                crossed += 1
            bad.append(f"job {j}: {m!r} ({b} bytes, {fs}) is not its own mount")
    for m, b in mounts.items():
        if m not in named:
            lost += b
            if int(j) % 4 >= 2:
                bad.append(f"job {j}: {m!r} not named, though the job waited until it was stored")
    if unproven:
        unnamed_jobs += 1
    # The bytes of its mounts not named are all on its unnamed ones (with /proc's, if that is too).
    want = lost + (0 if proc_named or not unproven else proc.get(int(j) % 2, 0))
    if unproven != want:
        bad.append(f"job {j}: {unproven} bytes on unnamed mounts, {lost} of its own mounts' missing"
                   f" (/proc {'named' if proc_named else 'not named'}): {named}")
for line in bad[:30]:
    print(line)
print(f"{len(exp)} jobs, {2 * len(exp)} mounts: {len(bad)} problems, {crossed} mounts named from"
      f" another job, {unnamed} mounts unnamed in {unnamed_jobs} jobs, {reused} ids given to"
      f" the mounts of several jobs")
sys.exit(1 if bad else 0)
PY
		fail "round $r: a mount named from another job, bytes misfiled or lost"
	ok "round $r: $NJOBS container jobs of two users, $PAR at a time, half gone at once, 32-bit mount ids: none named another's mount, no byte lost, the waiting jobs named both"
}

for r in $(seq 1 "$ROUNDS"); do
	mntreuse_round "$r"
done
