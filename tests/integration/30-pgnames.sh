#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile names through SQLite and the cluster store (issue 24): one real ioacctd
# exporting to a private PostgreSQL (scripts/pg.sh).
#  1. An iorun job whose command (the job name), workdir and mount path carry 0xff,
#     control characters and <script>: exported, not retried; PostgreSQL has the names
#     as valid UTF-8 with U+FFFD, the exact bytes of the paths in workdir_raw and
#     path_raw, the bytes written exactly; SQLite has the names byte for byte.
#  2. A job of two nodes whose report was left to a merged one, and whose row
#     PostgreSQL refuses (a check constraint added here): one log line names it, it
#     leaves the outbox and is not tried again, and this node's part of the report
#     is written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
require_root_bpf
require_pg
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip "no cgroup2 mount"

PGD=$(mktemp -d /var/tmp/ioacct-pg.XXXXXX)
chmod 755 "$PGD"
EXTRA_CONF="cluster_db = $(pg_url "$PGD")
node_name = n1"
setup
MNT=
HELD=
cleanup() {
	local rc=$?
	[ -n "$HELD" ] && kill "$HELD" 2>/dev/null
	stop_daemon
	[ -n "$MNT" ] && umount -l "$MNT" 2>/dev/null
	pg_stop "$PGD"
	rm -rf "$PGD"
	(exit $rc)
	teardown
}
trap cleanup EXIT
pg_init "$PGD" || fail "cannot start PostgreSQL in $PGD"
DB=$T/ioacct.db
SOCK=$T/ioacctd.sock
start_daemon

# The hostile names: 0xff (not UTF-8), an escape and a newline, HTML (no slash: one file name).
BAD=$'x\xff\x1b[31m\n<script>alert(1)<script>'
WD=$T/wd-$BAD
MNT=$T/mnt-$BAD
BIN=$T/bin-$BAD
mkdir -p "$WD" "$MNT"
mount -t tmpfs -o size=16m ioacct-test "$MNT" || skip "cannot mount a tmpfs"
cp "$IOWORK" "$BIN" || fail "cannot copy iowork to a hostile name"
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }

# ---- 1. a job with hostile names: exported, names made UTF-8, paths' bytes kept ----
(cd "$WD" && "$IORUN" --job-id 401 --json -o "$T/job-401.json" -- "$BIN" write "$MNT/f" 4096 3) ||
	fail "iorun job 401 failed"
wait_exported "$DB" "a job with hostile names"
grep -q 'stays queued' "$T/ioacctd.log" && fail "the cluster store refused a job: $(grep 'stays queued' "$T/ioacctd.log")"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = 401")" = 1 ] || fail "job 401 is not in PostgreSQL once"
# What PostgreSQL has, in hex: the text columns valid UTF-8 with U+FFFD (ef bf bd) for 0xff.
want_name=$(hex "${BIN//$'\xff'/$'\xef\xbf\xbd'}")
got=$(pg "SELECT encode(convert_to(name, 'UTF8'), 'hex') FROM jobs WHERE job_id = 401")
[ "$got" = "$want_name" ] || fail "job 401's name in PostgreSQL is $got, not $want_name"
got=$(pg "SELECT encode(workdir_raw, 'hex') FROM jobs WHERE job_id = 401")
[ "$got" = "$(hex "$WD")" ] || fail "job 401's workdir_raw is $got, not the workdir's bytes $(hex "$WD")"
got=$(pg "SELECT encode(convert_to(workdir, 'UTF8'), 'hex') FROM jobs WHERE job_id = 401")
[ "$got" = "$(hex "${WD//$'\xff'/$'\xef\xbf\xbd'}")" ] || fail "job 401's workdir in PostgreSQL is $got"
got=$(pg "SELECT coalesce(sum(t.bytes), 0) FROM totals t JOIN jobs j ON j.id = t.job
	  JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	  WHERE j.job_id = 401 AND t.op = 1 AND m.path_raw = decode('$(hex "$MNT")', 'hex')")
[ "$got" = 12288 ] || fail "PostgreSQL has $got bytes written by job 401 on its mount (by path_raw), not 12288"
[ "$(pg "SELECT count(*) FROM mounts WHERE path_raw IS NOT NULL AND path NOT LIKE '%' || chr(65533) || '%'")" = 0 ] ||
	fail "a mount with path_raw has no U+FFFD in its path"
[ "$(pg "SELECT count(*) FROM mounts m JOIN jobs j ON j.id = m.job WHERE j.job_id = 401 AND m.path_raw IS NULL AND m.path LIKE '%mnt-x%'")" = 0 ] ||
	fail "the hostile mount has no path_raw"
# SQLite keeps the bytes as they were (read as bytes: they are not UTF-8).
python3 - "$DB" "$BIN" "$WD" <<'EOF' || fail "SQLite does not have job 401's names byte for byte"
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.text_factory = bytes
name, workdir = db.execute("SELECT name, workdir FROM jobs WHERE job_id = 401").fetchone()
assert name == os.fsencode(sys.argv[2]), (name, sys.argv[2])
assert workdir == os.fsencode(sys.argv[3]), (workdir, sys.argv[3])
EOF
ok "job 401 with hostile names exported: UTF-8 names, exact paths in workdir_raw and path_raw, 12288 bytes"

# ---- 2. a job PostgreSQL refuses: said once, unqueued, its part of the report written ----
pg "ALTER TABLE jobs ADD CONSTRAINT ioacct_test_refuse CHECK (job_id <> 666)" > /dev/null ||
	fail "cannot add the check constraint"
CGP=$CG2/ioacct-test-$$
mkdir -p "$CGP/j666" || skip "cannot create a cgroup under $CG2"
sleep 600 &
HELD=$!
echo "$HELD" > "$CGP/j666/cgroup.procs" || fail "cannot move $HELD into $CGP/j666"
"$IOPOKE" "$SOCK" register 666 0 "$HELD" "$CGP/j666" | grep -q '^status=0' || fail "register 666 failed"
mkdir -p "$T/rep"
out=$("$IOPOKE" "$SOCK" finish-job 666 "$T/rep/r666" "n1,n2")
echo "$out" | grep -q '^status=0' || fail "finish 666 failed: $out"
kill "$HELD"
wait "$HELD" 2>/dev/null
HELD=
wait_exported "$DB" "a job PostgreSQL refuses"
for _ in $(seq 1 100); do
	[ -f "$T/rep/r666.n1.json" ] && break
	sleep 0.1
done
[ -f "$T/rep/r666.n1.json" ] || fail "no per-node report $T/rep/r666.n1.json for the refused job: $(ls "$T/rep")"
json_get "$T/rep/r666.n1.json" "j['job_id']" | grep -qx 666 || fail "the per-node report is not job 666's"
# 10 s more: nothing tries it again.
sleep 10
n=$(grep -c 'job .*666 refused by the cluster store' "$T/ioacctd.log")
[ "$n" = 1 ] || fail "the refusal of job 666 is logged $n times, not once"
grep 'refused by the cluster store' "$T/ioacctd.log" | grep -q 'ioacct_test_refuse' ||
	fail "the refusal does not say why (the constraint's name)"
grep -q 'stays queued\|unreachable' "$T/ioacctd.log" && fail "the exporter retried: $(grep 'stays queued\|unreachable' "$T/ioacctd.log" | head -3)"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = 666")" = 0 ] || fail "job 666 is in PostgreSQL despite the constraint"
ok "job 666 refused by PostgreSQL: logged once, unqueued, not retried in 10 s, this node's report written"
stop_daemon
exit 0
