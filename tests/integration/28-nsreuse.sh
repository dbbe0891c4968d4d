#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mount names never cross jobs or users (issue 24): hundreds of short
# container jobs of two users (runuser + unshare -Urm), many at a time, each
# mounting 1-3 tmpfs at directories named after the job and writing a known
# number of bytes. The kernel reuses the inode numbers of freed mount
# namespaces and the ids of unmounted mounts at once, so a table of an earlier
# job's namespace, cached under its inode number, names a later job's mounts
# with the earlier job's directories. Every job must report its own
# directories only, with exact bytes. Some mount points have a space, a tab,
# a newline and a backslash in their names, which mountinfo escapes as
# \040 \011 \012 \134: they are reported with their real bytes.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
command -v useradd >/dev/null || skip "useradd is needed to create unprivileged users"
command -v runuser >/dev/null || skip "runuser is needed to run jobs as users"
unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"

NJOBS=${NSREUSE_JOBS:-240}
PAR=${NSREUSE_PAR:-12}
JOB0=28000
USERS="ioacct-ns1 ioacct-ns2"
CREATED=
cleanup_users() {
	local u
	for u in $CREATED; do
		userdel "$u" 2>/dev/null
	done
}

setup
trap 'rc=$?; [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null; cleanup_users; (exit $rc); teardown' EXIT
for u in $USERS; do
	if ! id "$u" >/dev/null 2>&1; then
		useradd -M -s /bin/sh "$u" || skip "cannot create user $u"
		CREATED="$CREATED $u"
	fi
done
runuser -u ioacct-ns1 -- unshare -Urm true 2>/dev/null ||
	skip "a user cannot create a user and mount namespace here (unshare -Urm)"
start_daemon

# The users must reach the mount points and the go-files.
chmod 755 "$T"
B=$T/m
GO=$T/go
OUT=$T/out
mkdir -p "$B" "$GO" "$OUT"
chmod 755 "$B" "$GO"

# mounts_of J: the job's mount points, one a line, NUL-free but not newline-free,
# so printed NUL-separated. Every 7th job has an awkward name among them.
mounts_of() {
	local j=$1 k=$(($1 % 3 + 1)) i
	for i in $(seq 1 $k); do
		if [ $((j % 7)) = 0 ] && [ "$i" = 1 ]; then
			printf '%s\0' "$B/$j-sp ace"$'\t'"tab"$'\n'"nl\\bs"
		else
			printf '%s\0' "$B/$j-$i"
		fi
	done
}
# Bytes written to mount i of job j: whole 4 KiB blocks, a different count per mount.
blocks_of() { echo $((($1 % 5) + $2)); }

# expected.json: job id -> {mount point: write bytes}, for the watcher and the check.
for j in $(seq $JOB0 $((JOB0 + NJOBS - 1))); do
	i=0
	while IFS= read -r -d '' m; do
		i=$((i + 1))
		mkdir -p "$m"
		printf '%s\0%s\0%s\0' "$j" "$m" $(($(blocks_of $j $i) * 4096))
	done < <(mounts_of $j)
done > "$T/expected.nul"
python3 - "$T/expected.nul" "$T/expected.json" <<'PY'
import json, sys
f = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
exp = {}
for j, m, b in zip(f[0::3], f[1::3], f[2::3]):
    exp.setdefault(j.decode(), {})[m.decode("utf-8", "surrogateescape")] = int(b)
json.dump(exp, open(sys.argv[2], "w"))
PY

# The watcher lets a job end (creates $GO/J) once the store holds all its
# writes: its mounts were named in that same drain, while the namespace lived.
python3 "$(dirname "$0")/watch_stored.py" "$T/ioacct.db" "$T/expected.json" "$GO" 300 &
WATCH_PID=$!

# One job: as the user of its parity, in its own user and mount namespace,
# mounts its tmpfs, writes, and lives until its bytes are stored (or the
# watcher gives up).
cat > "$T/job.sh" <<'SH'
j=$1
[ $((j % 2)) = 0 ] && u=ioacct-ns1 || u=ioacct-ns2
mounts_of $j | xargs -0 "$IORUN" --job-id $j --bin-width 0.2 --json -o "$OUT/$j.json" -- \
	runuser -u $u -- unshare -Urm sh -c '
		j=$1; go=$2; watch=$3; shift 3; i=0
		for m in "$@"; do
			i=$((i + 1))
			mount -t tmpfs -o size=1m "ioacct-$j" "$m" || exit 1
			dd if=/dev/zero of="$m/f" bs=4096 count=$((j % 5 + i)) status=none || exit 1
		done
		while [ ! -e "$go/$j" ] && [ -d /proc/$watch ]; do sleep 0.05; done' sh $j "$GO" "$WATCH_PID" \
	> "$OUT/$j.log" 2>&1 ||
	{ echo "job $j failed:"; cat "$OUT/$j.log"; }
SH
export -f mounts_of
export B GO OUT IORUN IOACCT_CONF WATCH_PID
seq $JOB0 $((JOB0 + NJOBS - 1)) | xargs -P "$PAR" -I{} bash "$T/job.sh" {} > "$T/jobs.log" 2>&1
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
WATCH_PID=
[ -s "$T/jobs.log" ] && { head -n 40 "$T/jobs.log"; fail "some jobs failed"; }

# Every job names its own directories only, each with its exact bytes; a
# directory of $B in a job's report that is not its own is another job's.
python3 - "$T/expected.json" "$OUT" "$B" <<'PY' || fail "mounts named from other jobs, or bytes misfiled"
import json, os, re, sys
exp, out, base = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
bad = []
crossed = 0
for j, mounts in sorted(exp.items()):
    try:
        got = json.load(open(os.path.join(out, j + ".json")))
    except OSError as e:
        # iorun exits with the job's status when it gets no report (monitoring
        # never fails a job): what it said is in the job's log.
        log = open(os.path.join(out, j + ".log"), errors="replace").read()
        bad.append(f"job {j}: no report ({e.strerror}); its log: {log[-600:]!r}")
        continue
    named = {m["mount"]: m["write_bytes"] for m in got["mounts"] if m["write_bytes"]}
    for m, b in sorted(named.items()):
        if m.startswith(base + "/") and m not in mounts:
            crossed += 1
            bad.append(f"job {j}: {m!r} ({b} bytes) is not its own")
    for m, b in sorted(mounts.items()):
        if named.get(m) != b:
            bad.append(f"job {j}: {m!r}: {named.get(m)} bytes, expected {b}")
    # unshare -U writes the id maps, through the container's copy of /proc;
    # any other name is a mount of another namespace than the job's.
    others = {m: b for m, b in named.items()
              if not m.startswith(base + "/") and not re.fullmatch(r"/proc( \(mount namespace \d+\))?", m)}
    if others:
        bad.append(f"job {j}: bytes on mounts not its own: {others}")
for line in bad[:30]:
    print(line)
print(f"{len(exp)} jobs, {sum(len(m) for m in exp.values())} mounts: {len(bad)} problems, "
      f"{crossed} mounts named from another job")
sys.exit(1 if bad else 0)
PY
ok "$NJOBS container jobs of two users, $PAR at a time: every mount named from its own job, bytes exact"
ok "mount points with a space, tab, newline and backslash are named by their real bytes"
