#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Containers: a job whose work runs in its own mount namespace (unshare -m),
# with a tmpfs and a bind mount made inside it, while the registered task
# stays in the host's namespace, in a v2 then a v1 cgroup. Counted exactly per
# mount, and named in the reports (text and JSON) by their paths as seen
# inside the container and their file systems, not as `mnt:N unknown`. Then
# a namespace whose tasks are all gone before the drain: its bytes are still
# exact and its mounts named by their paths, from what the probes noted.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"
setup
start_daemon

JOB=1600
MX=$T/mx
MY=$T/my
SRC=$T/bind-src
mkdir -p "$MX" "$MY" "$SRC"
unshare -m --propagation private mount -t tmpfs ioacct-test "$MX" 2>/dev/null ||
	skip "cannot mount a tmpfs in a new mount namespace here"
# The bind mount's file system is the one $SRC lives on, as mountinfo names it.
SRCMNT=$(mount_of "$SRC")
BINDFS=$(awk -v m="$SRCMNT" '{ for (i = 7; $i != "-"; i++); if ($5 == m) fs = $(i + 1) } END { print fs }' \
	/proc/self/mountinfo)
[ -n "$BINDFS" ] || fail "no file system type for $SRCMNT in /proc/self/mountinfo"

cat > "$T/expect.json" <<JSON
{
  "_others_allowed": true,
  "$MX": {"write_bytes": 6553600, "writes": 100, "read_bytes": 3276800, "reads": 50,
          "opens": 2, "creates": 1,
          "write_sizes": {"10K_100K": 100}, "read_sizes": {"10K_100K": 50}},
  "$MY": {"write_bytes": 1228800, "writes": 300, "opens": 1, "creates": 1,
          "write_sizes": {"1K_10K": 300}}
}
JSON

# Prints once the store holds every byte written (6553600 + 1228800), i.e.
# the bins were drained while the container still lived; iowork's `wait`
# keeps it alive until then.
drained() {
	python3 - "$T/ioacct.db" "$1" "$2" <<'PY'
import sqlite3, sys, time
db, job, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(1200):
    try:
        con = sqlite3.connect(db, timeout=10)
        got = con.execute("select coalesce(sum(s.bytes), 0) from series s join jobs j"
                          " on s.job_key = j.key where j.job_id = ? and s.op = 1",
                          (job,)).fetchone()[0]
        con.close()
        if got >= want:
            print("go")
            sys.exit(0)
    except sqlite3.Error:
        pass
    time.sleep(0.1)
print("the store never held the job's writes", file=sys.stderr)
sys.exit(1)
PY
}

fstype_of() { json_get "$1" "[m['fs_type'] for m in j['mounts'] if m['mount'] == '$2']"; }

for mode in v2 v1; do
	JOB=$((JOB + 1))
	rm -f "$SRC/g"
	# The registered task is the outer sh, in the host's namespace; the work is in
	# the container's, which the tmpfs and the bind mount exist in only.
	drained $JOB 7782400 | "$IORUN" --cgroup-mode $mode --job-id $JOB --bin-width 0.2 --json -o "$T/out.json" -- \
		sh -c "unshare -m --propagation private sh -c '
			mount -t tmpfs -o size=16m ioacct-test \"$MX\" &&
			mount --bind \"$SRC\" \"$MY\" &&
			exec \"$IOWORK\" write \"$MX/f\" 65536 100 , read \"$MX/f\" 65536 50 , \
				write \"$MY/g\" 4096 300 , wait'" | cat || fail "iorun failed"
	[ -s "$SRC/g" ] && [ "$(stat -c %s "$SRC/g")" = 1228800 ] || fail "the bind mount was not written through"
	[ -e "$MX/f" ] && fail "the tmpfs leaked out of the container's namespace"
	python3 "$(dirname "$0")/check_mounts.py" "$T/out.json" "$T/expect.json" ||
		{ cat "$T/out.json"; fail "counters of the container's mounts differ"; }
	ok "cgroup $mode: container mounts: exact per mount"

	[ "$(fstype_of "$T/out.json" "$MX")" = "['tmpfs']" ] || { cat "$T/out.json"; fail "$MX is not named tmpfs"; }
	[ "$(fstype_of "$T/out.json" "$MY")" = "['$BINDFS']" ] || { cat "$T/out.json"; fail "$MY is not named $BINDFS"; }
	unknown=$(json_get "$T/out.json" "[m['mount'] for m in j['mounts'] if m['mount'].startswith('mnt:') or m['fs_type'] in ('', 'unknown')]")
	[ "$unknown" = "[]" ] || { cat "$T/out.json"; fail "mounts left unnamed: $unknown"; }
	ok "cgroup $mode: iorun --json names $MX (tmpfs) and $MY ($BINDFS), and no mount is unknown"

	"$IOREPORT" $JOB > "$T/report.txt" || fail "ioreport (text) failed"
	"$IOREPORT" --format json -o "$T/report.json" $JOB || fail "ioreport (json) failed"
	grep -Pq "^# mount: \Q$MX\E\ttmpfs\t" "$T/report.txt" || { cat "$T/report.txt"; fail "text report: no tmpfs $MX"; }
	grep -Pq "^# mount: \Q$MY\E\t\Q$BINDFS\E\t" "$T/report.txt" || { cat "$T/report.txt"; fail "text report: no $BINDFS $MY"; }
	grep -q '^# mount: mnt:' "$T/report.txt" && { cat "$T/report.txt"; fail "text report: unnamed mounts"; }
	[ "$(fstype_of "$T/report.json" "$MX")" = "['tmpfs']" ] || fail "JSON report: $MX is not named tmpfs"
	[ "$(fstype_of "$T/report.json" "$MY")" = "['$BINDFS']" ] || fail "JSON report: $MY is not named $BINDFS"
	python3 "$(dirname "$0")/check_report.py" "$T/ioacct.db" iorun $JOB "$T/report.txt" "$T/report.json" ||
		{ cat "$T/report.txt"; fail "report counters differ from the store"; }
	ok "cgroup $mode: ioreport (text and JSON) names the container's mounts; counters equal the store's"
done

# A namespace gone before the drain (the step ends with it, as a container's
# step of a second does): no mountinfo lists its mounts any more, but no byte
# is lost, and the tmpfs is named by its full path in its namespace, which
# the probes walked when the job first wrote to it (issue 29: mnt:N before),
# with the namespace it lived in. The same for a mount point two levels
# below a mount of the namespace's own (a tmpfs on a tmpfs).
"$IORUN" --job-id $((JOB + 1)) --json -o "$T/gone.json" -- \
	sh -c "unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=16m ioacct-test \"$MX\" &&
		mkdir -p \"$MX/a b/c\" && mount -t tmpfs -o size=16m ioacct-test2 \"$MX/a b/c\" &&
		\"$IOWORK\" write \"$MX/f\" 4096 25 && exec \"$IOWORK\" write \"$MX/a b/c/g\" 4096 5'" | cat ||
	fail "iorun (short-lived namespace) failed"
got=$(json_get "$T/gone.json" "sorted((m['mount'], m['fs_type'], m['write_bytes'], m['writes']) for m in j['mounts'] if m['write_bytes'])")
want="[('$MX', 'tmpfs', 102400, 25), ('$MX/a b/c', 'tmpfs', 20480, 5)]"
[ "$got" = "$want" ] ||
	{ cat "$T/gone.json"; fail "short-lived namespace: got $got, expected $want"; }
src=$(json_get "$T/gone.json" "[m['source'] for m in j['mounts'] if m['write_bytes']][0]")
case $src in
"mount namespace "[0-9]*", gone before the drain (named by the probes)") ;;
*) cat "$T/gone.json"; fail "short-lived namespace: source is '$src'" ;;
esac
ok "short-lived namespace: 102400 and 20480 bytes, exact, on tmpfs mounts named by their paths ($src)"
