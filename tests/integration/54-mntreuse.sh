#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mount ids the kernel hands out again never put one job's I/O under another
# job's name (issue 36): mntreuse.sh's container jobs of two users, half of
# them gone before the daemon names their mounts, the kernel giving the freed
# mount ids to the next jobs' mounts at once. Every job must name exactly its
# own two mounts, by their paths and file systems, with exact bytes; no other
# job's directory, and no bytes on a mount not its own. 74-mntreuse-legacy.sh
# runs the same with the daemon keying mounts as before 6.8.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mntreuse.sh"
mntreuse_require
JOB0=54000

setup
trap 'rc=$?; [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null; (exit $rc); teardown' EXIT
mntreuse_users
start_daemon
mntreuse_prepare

check_round() {
	local r=$1
	# Every job names its own two mounts and nothing of another job's; bytes exact.
	python3 - "$T/expected.json" "$OUT" "$B" "$BINDFS" <<'PY' ||
import json, os, re, sys
exp, out, base, bindfs = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
bad = []
crossed = 0
for j, mounts in sorted(exp.items()):
    got = json.load(open(os.path.join(out, j + ".json")))
    named = {}
    for m in got["mounts"]:
        if m["write_bytes"]:
            named[m["mount"]] = (m["write_bytes"], m["fs_type"])
    for m, (b, fs) in sorted(named.items()):
        if m.startswith(base + "/") and m not in mounts:
            crossed += 1
            bad.append(f"job {j}: {m!r} ({b} bytes, {fs}) is not its own")
    for m, b in sorted(mounts.items()):
        want = (b, "tmpfs" if m.endswith("-t") else bindfs)
        if named.get(m) != want:
            bad.append(f"job {j}: {m!r}: {named.get(m)}, expected {want}")
    # unshare -U writes the id maps, through the container's copy of /proc;
    # any other name is a mount that is not the job's.
    others = {m: b for m, b in named.items()
              if not m.startswith(base + "/") and not re.fullmatch(r"/proc( \(mount namespace \d+\))?", m)}
    if others:
        bad.append(f"job {j}: bytes on mounts not its own: {others}")
for line in bad[:30]:
    print(line)
print(f"{len(exp)} jobs, {2 * len(exp)} mounts: {len(bad)} problems, {crossed} mounts named from another job")
sys.exit(1 if bad else 0)
PY
		fail "round $r: mounts named from other jobs, or bytes misfiled"
	ok "round $r: $NJOBS container jobs of two users, $PAR at a time, half gone at once: each named its own tmpfs and bind mount, bytes exact"
}

for r in $(seq 1 "$ROUNDS"); do
	mntreuse_round "$r"
done
