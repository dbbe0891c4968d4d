#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A job id run twice on one node with a cluster store (issue 36, jobs): one real
# ioacctd exporting to a private PostgreSQL (scripts/pg.sh) runs `iorun --job-id 900`
# twice, the first writing 3 x 4096 bytes to file a, the second 5 x 4096 to the same file.
# Before, the cluster store summed them into one run (ioacct -j: 32768 bytes, the
# first run's state, the elapsed time spanning both) and ioreport 900 failed for
# everyone ("file records of another job, out of order or not read": the file's record
# twice, once per run). Now each run is (cluster, job id, restart, start) everywhere:
#  1. SQLite: two rows, 12288 and 20480 bytes; PostgreSQL: two parts, each a run of its
#     own (run_start its own start).
#  2. ioacct -j 900, through ioacctd (the cluster store), --local and --db: the last run
#     alone (20480 bytes); -D (--duplicates) each run with its own bytes, oldest first.
#  3. ioreport 900 (through ioacctd, as the user too; and --local, --db): the last run,
#     its bytes and its own record of file a (20480 bytes); --run 0 the first run (its
#     record of a: 12288 bytes), --run 1 the second, --run 2 none, named.
#  4. PostgreSQL: each part a run of its own, named by its own start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOACCT" ] && [ -x "$IOREPORT" ] || fail "ioacct or ioreport not built"
command -v runuser > /dev/null || skip "runuser is needed to run ioreport as a user"

pg_test_setup
start_daemon
chmod 755 "$T"
U=ioacct-test
id "$U" > /dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"

# ---- 1. two runs of job 900 on this node ---------------------------------------------
"$IORUN" --job-id 900 -o /dev/null -- "$IOWORK" write "$D/a" 4096 3 || fail "iorun job 900 (first) failed"
"$IORUN" --job-id 900 -o /dev/null -- "$IOWORK" write "$D/a" 4096 5 || fail "iorun job 900 (second) failed"
wait_exported "$DB" "job 900's two runs"
# Job 900 becomes the user's, as if Slurm had run it for them (private_data is off:
# the user reads it through ioacctd like anyone).
pg "UPDATE jobs SET uid = $(id -u "$U"), \"user\" = '$U' WHERE job_id = 900" > /dev/null ||
	fail "cannot give job 900 to $U"

wbytes_sqlite() {
	sqlite3 "$DB" "SELECT coalesce((SELECT sum(t.bytes) FROM totals t JOIN mounts m
		ON m.job_key = t.job_key AND m.mnt_id = t.mnt_id
		WHERE t.job_key = j.key AND t.op = 1 AND m.path = '$MNT'), 0)
		FROM jobs j WHERE j.job_id = 900 ORDER BY j.start_ns" | paste -sd' '
}
got=$(wbytes_sqlite)
[ "$got" = "12288 20480" ] || fail "SQLite holds job 900's runs as '$got', not '12288 20480'"
ok "job 900 run twice: two rows in SQLite (12288 and 20480 bytes)"

# ---- 2. ioacct: the last run; -D each --------------------------------------------------
# q ARGS...: ioacct's rows of job 900 on $MNT.
q() {
	"$IOACCT" -j 900 -X -n -P --mounts -o JobID,State,Mount,WriteBytes,Writes "$@" > "$T/q.out" 2>&1 ||
		{ cat "$T/q.out"; fail "ioacct -j 900 $* failed"; }
	awk -F'|' -v m="$MNT" '$3 == m' "$T/q.out" | paste -sd' '
}
for how in "" "--local" "--db $DB"; do
	# shellcheck disable=SC2086
	got=$(q $how)
	[ "$got" = "900|COMPLETED|$MNT|20480|5" ] ||
		fail "ioacct -j 900 $how: '$got', not the last run alone (20480 bytes, 5 writes)"
	# shellcheck disable=SC2086
	got=$(q -D $how)
	[ "$got" = "900|COMPLETED|$MNT|12288|3 900|COMPLETED|$MNT|20480|5" ] ||
		fail "ioacct -j 900 -D $how: '$got', not each run with its own bytes, oldest first"
done
# Without -j, as sacct without --jobs: each job once, its last run; -D every run.
"$IOACCT" -S now-1hours -X -n -P --mounts -o JobID,Mount,WriteBytes > "$T/all.out" ||
	fail "ioacct -S now-1hours failed"
got=$(awk -F'|' -v m="$MNT" '$1 == 900 && $2 == m' "$T/all.out" | paste -sd' ')
[ "$got" = "900|$MNT|20480" ] || fail "ioacct -S now-1hours lists job 900 as '$got', not its last run once"
ok "ioacct -j 900 (cluster store, --local, --db): the last run (20480 bytes); -D both runs, each exact"

# ---- 3. ioreport: the last run; --run N each ------------------------------------------
# jbytes FILE: the JSON report's bytes written on $MNT, then its records of files in $D,
# each name:bytes written.
jbytes() {
	python3 -c 'import json, os, sys
d = json.load(open(sys.argv[1]))
w = sum(m["write_bytes"] for m in d["mounts"] if m["mount"] == sys.argv[2])
f = sorted("%s:%d" % (os.path.basename(x["path"]), x["bytes_written"]) for x in d.get("files") or []
           if (x.get("path") or "").startswith(sys.argv[3]))
print(w, ",".join(f))' "$1" "$MNT" "$D/"
}
# rep NAME ARGS...: ioreport ARGS 900 as JSON into $T/NAME.json, its bytes and files.
rep() {
	local name=$1
	shift
	"$IOREPORT" --format json "$@" 900 > "$T/$name.json" 2> "$T/$name.err" ||
		{ cat "$T/$name.err"; fail "ioreport $* 900 failed"; }
	jbytes "$T/$name.json"
}
for how in "" "--local" "--db $DB"; do
	# shellcheck disable=SC2086
	got=$(rep last $how)
	[ "$got" = "20480 a:20480" ] || fail "ioreport $how 900: '$got', not the last run (20480 bytes, its record of a)"
	# shellcheck disable=SC2086
	got=$(rep run0 --run 0 $how)
	[ "$got" = "12288 a:12288" ] || fail "ioreport --run 0 $how 900: '$got', not the first run (12288 bytes, its record of a)"
	# shellcheck disable=SC2086
	got=$(rep run1 --run 1 $how)
	[ "$got" = "20480 a:20480" ] || fail "ioreport --run 1 $how 900: '$got', not the second run"
	# shellcheck disable=SC2086
	"$IOREPORT" --run 2 $how 900 > /dev/null 2> "$T/run2.err" &&
		fail "ioreport --run 2 $how 900 found a run that never was"
	grep -q "run 2 of job 900" "$T/run2.err" ||
		fail "ioreport --run 2 $how 900: '$(cat "$T/run2.err")' does not name the run"
done
# The user, through ioacctd, as text: the last run's bytes.
runuser -u "$U" -- "$IOREPORT" -c "$CONF" 900 > "$T/user.txt" 2> "$T/user.err" ||
	{ cat "$T/user.err"; fail "ioreport 900 as $U failed"; }
awk -v m="# mount: $MNT" -F'\t' '$1 == m { s = 1; next } /^# mount: / { s = 0 }
	s && /^total_POSIX_BYTES_WRITTEN: / { sub(/^[^:]*: /, ""); print; exit }' "$T/user.txt" > "$T/user.bytes"
[ "$(cat "$T/user.bytes")" = 20480 ] || fail "ioreport 900 as $U: '$(cat "$T/user.bytes")' bytes written, not 20480"
ok "ioreport 900 (cluster store, --local, --db, as the user): the last run; --run 0 and 1 each run, --run 2 none"
# ---- 4. PostgreSQL: each part a run of its own ---------------------------------------
runs_pg() {
	pg "SELECT (j.run_start = j.start_ns)::text || ' ' || coalesce((SELECT sum(t.bytes) FROM totals t
		JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
		WHERE t.job = j.id AND t.op = 1 AND m.path = '$MNT'), 0)
		FROM jobs j WHERE j.job_id = 900 ORDER BY j.start_ns" | paste -sd'|'
}
got=$(runs_pg) || fail "cannot read job 900's runs in PostgreSQL"
[ "$got" = "true 12288|true 20480" ] ||
	fail "PostgreSQL holds job 900 as '$got', not two runs each of its own start (12288, 20480)"
[ "$(pg "SELECT count(DISTINCT (restart, run_start)) FROM jobs WHERE job_id = 900")" = 2 ] ||
	fail "PostgreSQL names job 900's two parts as one run"
ok "PostgreSQL: job 900's parts are two runs, each named by its own start (12288, 20480 bytes)"
exit 0
