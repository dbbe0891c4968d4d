#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ioacct over jobs the real daemon stored: exact bytes per mount, sacct's
# selection and formats, clear errors for bad fields, bad times and a
# missing, locked or corrupt store; and privacy: with private_data = yes the
# store is root's alone and a user sees only their own jobs, through ioacctd.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOACCT=$abs_top_builddir/tools/ioacct
[ -x "$IOACCT" ] || fail "$IOACCT not built"
command -v useradd >/dev/null || skip "useradd is needed to create an unprivileged user"
command -v runuser >/dev/null || skip "runuser is needed to run ioacct as another user"
setup
start_daemon

U=ioacct-test
id "$U" >/dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"
UID_U=$(id -u "$U")
# The user must reach the configuration, the socket and (without private_data) the store.
chmod 755 "$T"
as_user() { runuser -u "$U" -- env IOACCT_CONF="$CONF" "$@"; }

D=$T/root-fs
mkdir -p "$D"
SHM=/dev/shm/ioacct-test-$$
ROOTMNT=$(mount_of "$D")
SHMMNT=$(mount_of /dev/shm)
[ "$ROOTMNT" != "$SHMMNT" ] || skip "$D and /dev/shm are on the same mount"

# expect_lines WHAT FILE LINE...: FILE holds exactly these lines, in this order.
expect_lines() {
	local what=$1 file=$2
	shift 2
	if [ $# -eq 0 ]; then : > "$T/expected"; else printf '%s\n' "$@" > "$T/expected"; fi
	diff -u "$T/expected" "$file" > "$T/diff" || { cat "$T/diff"; fail "$what"; }
}

# ---- jobs from the daemon ----
"$IORUN" --job-id 5101 -o /dev/null -- "$IOWORK" write "$D/f" 1048576 7 , pwrite "$SHM" 4096 10 |
	cat || fail "iorun 5101 failed"
"$IORUN" --job-id 5102 -o /dev/null -- "$IOWORK" write "$D/g" 65536 3 , read "$D/g" 65536 3 |
	cat || fail "iorun 5102 failed"
"$IORUN" --job-id 5103 -o /dev/null -- "$IOWORK" stat "$D/g" 4 | cat || fail "iorun 5103 failed"
# Job 5102 becomes the user's, as if Slurm had run it for them.
python3 - "$T/ioacct.db" "$UID_U" "$U" <<'PY' || fail "cannot give job 5102 to $U"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
db.execute("UPDATE jobs SET uid = ?, user = ? WHERE cluster = 'iorun' AND job_id = 5102",
           (int(sys.argv[2]), sys.argv[3]))
db.commit()
PY

# ---- the acceptance line: exact bytes of the file's mount ----
"$IOACCT" -j 5101 -P -o JobID,Mount,WriteBytes > "$T/out" || fail "ioacct -j 5101 failed"
grep -Fxq "5101|$ROOTMNT|7340032" "$T/out" || { cat "$T/out"; fail "no 5101|$ROOTMNT|7340032"; }
expect_lines "ioacct -j 5101 -P -o JobID,Mount,WriteBytes" "$T/out" \
	"JobID|Mount|WriteBytes" \
	"$(printf '%s\n' "5101|$ROOTMNT|7340032" "5101|$SHMMNT|40960" | LC_ALL=C sort -t'|' -k2,2)" \
	"$(printf '%s\n' "5101.0|$ROOTMNT|7340032" "5101.0|$SHMMNT|40960" | LC_ALL=C sort -t'|' -k2,2)"
ok "ioacct -j 5101 -P -o JobID,Mount,WriteBytes: 7340032 on $ROOTMNT"

"$IOACCT" -j 5101 -X -n -P -o JobID,Cluster,User,UID,State,ExitCode,Writes,WriteBytes,ProbeMode \
	> "$T/out" || fail "ioacct -X failed"
expect_lines "job row" "$T/out" "5101|iorun|root|0|COMPLETED|0|17|7380992|tracepoint"
"$IOACCT" -j 5101.0 -n -p --delimiter=, -o JobID,Step,Writes > "$T/out" || fail "-j 5101.0 failed"
expect_lines "-j 5101.0" "$T/out" "5101.0,0,17,"
"$IOACCT" -j 5101 --json -X -o JobID,WriteBytes,End,MaxWriteBW > "$T/out.json" || fail "--json failed"
[ "$(json_get "$T/out.json" '[(r["JobID"], r["WriteBytes"], r["End"] is not None, r["MaxWriteBW"] > 0) for r in j["rows"]]')" = "[('5101', 7380992, True, True)]" ] ||
	{ cat "$T/out.json"; fail "--json"; }
"$IOACCT" -j 5101 -X -n -o WriteBytes%6 --units=M > "$T/out" || fail "--units failed"
expect_lines "--units=M with %6" "$T/out" " 7.04M"
"$IOACCT" -j 5101 -X -n -o Mount%-4,Writes%3 > "$T/out" || fail "truncation failed"
cut4() { if [ ${#1} -gt 4 ]; then printf '%s+' "${1:0:3}"; else printf '%-4s' "$1"; fi; }
expect_lines "Mount%-4 cut with +" "$T/out" \
	"$(printf '%s\n' "$(cut4 "$ROOTMNT")   7" "$(cut4 "$SHMMNT")  10" | LC_ALL=C sort)"
IOACCT_FORMAT=JobID,Reads "$IOACCT" -j 5102 -X -n -P > "$T/out" || fail "IOACCT_FORMAT failed"
expect_lines "IOACCT_FORMAT" "$T/out" "5102|3"
ok "steps, -X, -p/-P, --delimiter, --json, --units, widths, IOACCT_FORMAT"

# Windows, users, clusters.
"$IOACCT" -S now-1hours -X -n -P -o JobID > "$T/out" || fail "-S now-1hours failed"
expect_lines "root sees every job" "$T/out" 5101 5102 5103
"$IOACCT" -S now-1hours -E now -u "$U" -X -n -P -o JobID,User > "$T/out" || fail "-u failed"
expect_lines "-u $U" "$T/out" "5102|$U"
"$IOACCT" -S now+1hours -E now+2hours -X -n -P -o JobID > "$T/out" || fail "a later window failed"
expect_lines "nothing in the future" "$T/out"
"$IOACCT" -M hpc -S now-1hours -X -n -P -o JobID > "$T/out" || fail "-M hpc failed"
expect_lines "-M hpc" "$T/out"
"$IOACCT" -M iorun -j 5103 -X -n -P -o JobID,Cluster,Stats > "$T/out" || fail "-M iorun failed"
expect_lines "-M iorun" "$T/out" "5103|iorun|4"
ok "-S/-E, -u, -M"

# Without private_data a user reads the store directly: their own jobs unless -a.
as_user "$IOACCT" -S now-1hours -X -n -P -o JobID > "$T/out" || fail "user ioacct failed"
expect_lines "a user's default" "$T/out" 5102
as_user "$IOACCT" -a -S now-1hours -X -n -P -o JobID > "$T/out" || fail "user ioacct -a failed"
expect_lines "a user's -a" "$T/out" 5101 5102 5103
ok "private_data = no: own jobs by default, all with -a"

# ---- bad input ----
check_error() { # WHAT STATUS NEEDLE CMD...
	local what=$1 status=$2 needle=$3 rc=0
	shift 3
	"$@" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" = "$status" ] || { cat "$T/err"; fail "$what: exit $rc, expected $status"; }
	grep -Fq -- "$needle" "$T/err" || { cat "$T/err"; fail "$what: no '$needle' in the message"; }
	[ "$(wc -l < "$T/err")" = 1 ] || { cat "$T/err"; fail "$what: the message is not one line"; }
	echo "  $what -> $(cat "$T/err")" | cut -c1-150
}
check_error "unknown field" 2 "valid fields: JobID, JobIDRaw, Cluster" "$IOACCT" -o JobID,Bogus
grep -Fq "MaxWriteBW" "$T/err" || fail "the valid fields are not all named"
check_error "bad time" 2 "accepted forms: HH:MM[:SS], MMDD[YY], MM/DD[/YY]" "$IOACCT" -S yesterday
check_error "bad end time" 2 "invalid time '2024-02-30'" "$IOACCT" -E 2024-02-30
check_error "start after end" 2 "after the end time" "$IOACCT" -S now -E now-1days
check_error "bad units" 2 "not one of K, M, G, T, P" "$IOACCT" --units=X
check_error "bad job" 2 "bad job id 'x'" "$IOACCT" -j x
check_error "missing store" 1 "no ioacct database at $T/none.db" "$IOACCT" --db "$T/none.db"
head -c 8192 /dev/urandom > "$T/garbage.db"
check_error "corrupt store" 1 "$T/garbage.db" "$IOACCT" --db "$T/garbage.db"
# Truncated: a whole copy cut in half, so that the pages of its tables are missing.
python3 - "$T/ioacct.db" "$T/cut.db" <<'PY' || fail "cannot copy the store"
import os, sqlite3, sys
dst = sqlite3.connect(sys.argv[2])
sqlite3.connect(sys.argv[1]).backup(dst)
dst.execute("PRAGMA journal_mode = DELETE")
dst.close()
os.truncate(sys.argv[2], os.path.getsize(sys.argv[2]) // 2)
PY
check_error "truncated store" 1 "$T/cut.db" "$IOACCT" --db "$T/cut.db" -a -S 2000-01-01 -o ALL
# Locked: a copy in rollback-journal mode, held by an exclusive transaction.
python3 - "$T/ioacct.db" "$T/locked.db" <<'PY' &
import sqlite3, sys, time
src = sqlite3.connect(sys.argv[1])
dst = sqlite3.connect(sys.argv[2], isolation_level=None)
src.backup(dst)
dst.execute("PRAGMA journal_mode = DELETE")
dst.execute("BEGIN EXCLUSIVE")
dst.execute("UPDATE jobs SET state = state")
open(sys.argv[2] + ".held", "w").close()
time.sleep(8)
PY
LOCKER=$!
for _ in $(seq 100); do [ -e "$T/locked.db.held" ] && break; sleep 0.05; done
check_error "locked store" 1 "database is locked" "$IOACCT" --db "$T/locked.db" -j 5101
kill $LOCKER 2>/dev/null; wait $LOCKER 2>/dev/null
ok "bad field, bad time, missing, corrupt and locked stores: one line, exit 1 or 2"

# ---- private_data = yes ----
stop_daemon
echo "private_data = yes" >> "$CONF"
start_daemon
[ "$(stat -c %a "$T/ioacct.db")" = 600 ] || fail "the store is not 0600 with private_data"
as_user cat "$T/ioacct.db" > /dev/null 2>&1 && fail "the user can read the store file"
check_error "user reads the file" 1 "Permission denied; with private_data = yes" as_user "$IOACCT" --db "$T/ioacct.db" -j 5102
as_user "$IOACCT" -S now-1hours -X -n -P -o JobID,User > "$T/out" || fail "user ioacct (private) failed"
expect_lines "private: own jobs" "$T/out" "5102|$U"
as_user "$IOACCT" -a -S now-1hours -X -n -P -o JobID > "$T/out" || fail "user ioacct -a (private) failed"
expect_lines "private: -a is still their own" "$T/out" 5102
as_user "$IOACCT" -u root -j 5101,5103 -n -P -o JobID > "$T/out" || fail "user ioacct -u root failed"
expect_lines "private: another user's jobs by name or id" "$T/out"
as_user "$IOACCT" -j 5102 -P -o JobID,Mount,WriteBytes,ReadBytes,MaxWriteBW --json > "$T/user.json" ||
	fail "user ioacct --json (private) failed"
# Root reads the file itself (--db): the daemon's answer must be the store's.
"$IOACCT" --db "$T/ioacct.db" -j 5102 -P -o JobID,Mount,WriteBytes,ReadBytes,MaxWriteBW --json > "$T/root.json" ||
	fail "root ioacct --db --json failed"
cmp -s "$T/user.json" "$T/root.json" || { diff "$T/root.json" "$T/user.json"; fail "the daemon's answer differs from the store's"; }
[ "$(json_get "$T/user.json" '[r["WriteBytes"] for r in j["rows"] if r["JobID"] == "5102" and r["Mount"] == "'"$ROOTMNT"'"]')" = "[196608]" ] ||
	{ cat "$T/user.json"; fail "private: the user's bytes"; }
"$IOACCT" -S now-1hours -X -n -P -o JobID > "$T/out" || fail "root ioacct (private) failed"
expect_lines "private: root sees all" "$T/out" 5101 5102 5103
stop_daemon
check_error "private, no daemon" 1 "cannot reach ioacctd at $T/ioacctd.sock" as_user "$IOACCT" -j 5102
ok "private_data = yes: store 0600, a user sees their own jobs through ioacctd, exactly"
