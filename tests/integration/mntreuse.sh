# SPDX-License-Identifier: GPL-2.0-or-later
# The workload of 54-mntreuse.sh and 74-mntreuse-legacy.sh, sourced after
# lib.sh: short container jobs of two users (runuser + unshare -Urm), many at
# a time, each with a tmpfs and a bind mount of a directory of its own,
# writing a known number of bytes to each. Half of them exit right after
# writing, so their namespace, and their mounts, are gone before the daemon
# names them, and the kernel gives the freed mount ids to the next jobs'
# mounts at once; the other half (j % 4 >= 2) live until the store holds
# their bytes. MNTREUSE_JOBS (96), MNTREUSE_PAR (12) and MNTREUSE_ROUNDS (1;
# more run new jobs again beside the same daemon, which is given the ids the
# earlier rounds freed) size it: a round takes 1 to 3 minutes on the 2-core
# test machine at load 20 to 35, most of it the kernel making and tearing
# down the namespaces. The test defines check_round R, which judges round R's
# reports ($OUT/J.json) against $T/expected.json ({job: {mount point: bytes}}).

NJOBS=${MNTREUSE_JOBS:-96}
PAR=${MNTREUSE_PAR:-12}
ROUNDS=${MNTREUSE_ROUNDS:-1}
MNTREUSE_USERS="ioacct-mr1 ioacct-mr2"

# Before setup: what the workload needs of the machine.
mntreuse_require() {
	require_root_bpf
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	command -v useradd >/dev/null || skip "useradd is needed to create unprivileged users"
	command -v runuser >/dev/null || skip "runuser is needed to run jobs as users"
	unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"
}

# After setup, before the daemon starts: the two users, made idempotently.
mntreuse_users() {
	local u
	for u in $MNTREUSE_USERS; do
		id "$u" >/dev/null 2>&1 || useradd -M -s /bin/sh "$u" 2>/dev/null || id "$u" >/dev/null 2>&1 ||
			skip "cannot create user $u"
	done
	runuser -u ioacct-mr1 -- unshare -Urm true 2>/dev/null ||
		skip "a user cannot create a user and mount namespace here (unshare -Urm)"
}

# After the daemon started: the directories, the bind mounts' file system
# ($BINDFS) and the job script.
mntreuse_prepare() {
	# The users must reach the mount points, their sources and the go-files.
	chmod 755 "$T"
	B=$T/m
	GO=$T/go
	OUT=$T/out
	mkdir -p "$B" "$GO" "$OUT"
	chmod 755 "$B" "$GO"
	# The bind mounts' file system is the one $B lives on, as mountinfo names it.
	BMNT=$(mount_of "$B")
	BINDFS=$(awk -v m="$BMNT" '{ for (i = 7; $i != "-"; i++); if ($5 == m) fs = $(i + 1) } END { print fs }' \
		/proc/self/mountinfo)
	[ -n "$BINDFS" ] || fail "no file system type for $BMNT in /proc/self/mountinfo"

	# One job: as the user of its parity, in its own user and mount namespace,
	# mounts its tmpfs and its bind mount, writes to both; jobs with j % 4 < 2
	# exit at once, the others live until their bytes are stored (or the watcher
	# gives up).
	cat > "$T/job.sh" <<'SH'
j=$1
[ $((j % 2)) = 0 ] && u=ioacct-mr1 || u=ioacct-mr2
[ $((j % 4)) -lt 2 ] && wait=0 || wait=1
"$IORUN" --job-id $j --bin-width 0.2 --json -o "$OUT/$j.json" -- \
	runuser -u $u -- unshare -Urm sh -c '
		j=$1 b=$2 go=$3 watch=$4 wait=$5 t=$6 n=$7
		mount -t tmpfs -o size=1m "ioacct-$j" "$b/$j-t" || exit 1
		mount --bind "$b/$j-src" "$b/$j-b" || exit 1
		dd if=/dev/zero of="$b/$j-t/f" bs=4096 count=$t status=none || exit 1
		dd if=/dev/zero of="$b/$j-b/f" bs=4096 count=$n status=none || exit 1
		[ $wait = 1 ] || exit 0
		while [ ! -e "$go/$j" ] && [ -d /proc/$watch ]; do sleep 0.05; done' sh \
		$j "$B" "$GO" "$WATCH_PID" $wait $((j % 7 + 1)) $((j % 5 + 2)) \
	> "$OUT/$j.log" 2>&1 ||
	{ echo "job $j failed:"; cat "$OUT/$j.log"; }
SH
	export B GO OUT IORUN IOACCT_CONF
}

# Job j's blocks of 4 KiB: a different count per mount and job.
mntreuse_tblocks() { echo $(($1 % 7 + 1)); }
mntreuse_bblocks() { echo $(($1 % 5 + 2)); }

# Round r (jobs JOB0 + r * 1000 on): writes $T/expected.json, runs the jobs,
# then check_round r.
mntreuse_round() {
	local r=$1 first=$((JOB0 + $1 * 1000)) j u
	rm -f "$GO"/* "$OUT"/*
	for j in $(seq $first $((first + NJOBS - 1))); do
		[ $((j % 2)) = 0 ] && u=ioacct-mr1 || u=ioacct-mr2
		mkdir -p "$B/$j-t" "$B/$j-b" "$B/$j-src"
		chown "$u" "$B/$j-src"
		printf '"%s": {"%s": %s, "%s": %s},\n' $j "$B/$j-t" $(($(mntreuse_tblocks $j) * 4096)) \
			"$B/$j-b" $(($(mntreuse_bblocks $j) * 4096))
	done | sed '$ s/,$//' | { echo '{'; cat; echo '}'; } > "$T/expected.json"

	# The watcher lets a waiting job end (creates $GO/J) once the store holds all
	# its writes: its mounts were named in that same drain, while the namespace
	# lived. The other half do not wait: their mounts are gone before any drain.
	python3 "$(dirname "$0")/watch_stored.py" "$T/ioacct.db" "$T/expected.json" "$GO" 240 4:2 &
	WATCH_PID=$!
	export WATCH_PID
	seq $first $((first + NJOBS - 1)) | xargs -P "$PAR" -I{} bash "$T/job.sh" {} > "$T/jobs.log" 2>&1
	kill "$WATCH_PID" 2>/dev/null
	wait "$WATCH_PID" 2>/dev/null
	WATCH_PID=
	[ -s "$T/jobs.log" ] && { head -n 40 "$T/jobs.log"; fail "round $r: some jobs failed"; }
	check_round "$r"
}
