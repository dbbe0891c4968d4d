#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The store cannot be hijacked or silently wrong (issue 17), with the real
# daemon:
#  1. db is a symbolic link a user planted in a sticky world-writable
#     directory: refused, nothing written through it;
#  2. db is a symbolic link in root's own directory: refused (O_NOFOLLOW);
#  3. db in a world-writable directory without the sticky bit: refused;
#     with the sticky bit and a file of root's (the daemon's account's once it runs): accepted;
#  4. a corrupt store: refused with a message naming the file and what to
#     do, exit status 1; moved aside, a new store starts;
#  5. the store removed under the running daemon while an iorun job writes,
#     its directory read-only for a while: the daemon says so, survives,
#     puts the store back once it can, and the job's bytes are exact;
#  6. its -shm (the WAL index SQLite maps) truncated under the daemon while a
#     job runs: a SIGBUS before; now logged, the daemon survives, bytes exact.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup
id nobody >/dev/null 2>&1 || skip "no user nobody to plant links as"

# conf_with DB: a copy of the test's configuration with another db.
conf_with() {
	sed "s|^db = .*|db = $1|" "$CONF" > "$T/alt.conf"
	echo "$T/alt.conf"
}

# refused CONF PATTERN WHAT: ioacctd must exit 1 at start, saying PATTERN.
refused() {
	local rc=0
	timeout 60 "$IOACCTD" -f -c "$1" > "$T/refused.log" 2>&1 || rc=$?
	cat "$T/refused.log"
	[ "$rc" = 1 ] || fail "$3: ioacctd exited $rc, not 1"
	grep -q -- "$2" "$T/refused.log" || fail "$3: the log does not say '$2'"
	[ ! -S "$T/ioacctd.sock" ] || fail "$3: ioacctd created its socket"
}

chmod 755 "$T"

# 1. A link planted by nobody in a sticky, world-writable directory.
mkdir -m 1777 "$T/pub"
echo precious > "$T/victim"
ln -s "$T/victim" "$T/pub/ioacct.db"
chown -h nobody "$T/pub/ioacct.db"
refused "$(conf_with "$T/pub/ioacct.db")" "symbolic link" "planted link"
[ "$(cat "$T/victim")" = precious ] || fail "the file behind the planted link was changed"
[ ! -e "$T/victim-wal" ] && [ ! -e "$T/pub/ioacct.db-wal" ] || fail "a WAL file was created"
ok "planted db symlink refused, its target untouched"

# 2. A link even in root's directory: SQLite would follow it.
mkdir -m 755 "$T/own"
ln -s "$T/victim" "$T/own/ioacct.db"
refused "$(conf_with "$T/own/ioacct.db")" "symbolic link" "link in root's directory"
[ "$(cat "$T/victim")" = precious ] || fail "the file behind the link was changed"
ok "db symlink in root's directory refused"

# 3. World-writable without the sticky bit: anyone may replace the file.
mkdir -m 777 "$T/ww"
chmod 777 "$T/ww"
refused "$(conf_with "$T/ww/ioacct.db")" "writable by others" "world-writable directory"
[ ! -e "$T/ww/ioacct.db" ] || fail "the db was created in the world-writable directory"
# A directory on the way writable by others is as bad.
mkdir -m 755 "$T/ww/sub"
refused "$(conf_with "$T/ww/sub/ioacct.db")" "writable by others" "world-writable parent"
ok "db in a world-writable directory refused"
# Sticky and root's file: nobody else can replace it.
DB=$T/pub/store.db
sed -i "s|^db = .*|db = $DB|" "$CONF"
start_daemon
stop_daemon
# The daemon gives its store to its account (ioacctd(8), PRIVILEGES).
[ "$(stat -c %U "$DB")" = "$IOACCT_USER" ] || fail "$DB is not $IOACCT_USER's"
ok "db in a sticky world-writable directory, the file the daemon's account's: accepted"
# The same place, the file someone else's: refused.
chown nobody "$DB"
refused "$CONF" "not root's" "nobody's file in a sticky directory"
chown root "$DB"
rm -f "$DB" "$DB-wal" "$DB-shm"
ok "nobody's db file in a sticky directory refused"

# 4. A corrupt store: a job of 5000 bytes, then the page of its totals zeroed.
DB=$T/ioacct.db
sed -i "s|^db = .*|db = $DB|" "$CONF"
start_daemon
"$IORUN" --json -o "$T/out.json" -- "$IOWORK" write "$T/w.dat" 5000 1 > /dev/null ||
	fail "iorun failed"
[ "$(json_get "$T/out.json" 'sum(m["write_bytes"] for m in j["mounts"])')" = 5000 ] ||
	fail "the job's 5000 bytes are not in its report"
stop_daemon
python3 - "$DB" <<'PY' || fail "cannot corrupt the test store"
import sqlite3, sys
db = sys.argv[1]
con = sqlite3.connect(db)
con.execute("pragma wal_checkpoint(truncate)")
page_size = con.execute("pragma page_size").fetchone()[0]
root = con.execute("select rootpage from sqlite_master where name = 'totals'").fetchone()[0]
con.close()
with open(db, "r+b") as f:
    f.seek((root - 1) * page_size)
    f.write(b"\xff" * page_size)
print(f"zeroed page {root} of {db} (table totals)")
PY
refused "$CONF" "is corrupt" "corrupt store"
grep -q "$DB is corrupt.*move it aside" "$T/refused.log" || fail "the message does not name the file and what to do"
ok "corrupt store refused: $(grep -o 'is corrupt.*' "$T/refused.log" | head -c 80)..."
mv "$DB" "$DB.corrupt"
rm -f "$DB-wal" "$DB-shm"
start_daemon
ok "moved aside, a new store starts"

# 5. Removed under the daemon while a job runs; the directory read-only a while.
stop_daemon
S=$T/store
mkdir -m 755 "$S"
sed -i "s|^db = .*|db = $S/ioacct.db|" "$CONF"
echo "bin_width = 0.2" >> "$CONF"
start_daemon
mkfifo "$T/ctl"
( "$IORUN" --json -o "$T/out5.json" -- "$IOWORK" \
	tick "$T/v1" 1048576 3 , wait , tick "$T/v2" 1048576 4 , wait , write "$T/v3" 1048576 5 \
	< "$T/ctl" 2> "$T/iorun5.err" | cat > "$T/ticks"; echo "${PIPESTATUS[0]}" > "$T/iorun5.rc" ) &
IORUN_PID=$!
exec 3> "$T/ctl"
# wait_for WHAT SECONDS COMMAND...: polls COMMAND.
wait_for() {
	local what=$1 limit=$2
	shift 2
	for _ in $(seq 1 $((limit * 10))); do
		"$@" && return 0
		sleep 0.1
	done
	fail "$what not within ${limit}s"
}
lines_at_least() { [ "$(wc -l < "$T/ticks")" -ge "$1" ]; }
wait_for "the first 3 MiB" 30 lines_at_least 3
# Drained into the store before it goes (bins of 0.2 s, drain every 0.2 s).
sleep 2
rm -f "$S/ioacct.db" "$S/ioacct.db-wal" "$S/ioacct.db-shm"
RO=0
if mount --bind "$S" "$S" && mount -o remount,bind,ro "$S"; then
	RO=1
	trap 'rc=$?; umount "$S" 2>/dev/null; (exit $rc); teardown' EXIT
else
	umount "$S" 2>/dev/null
	echo "note: cannot make $S read-only with a bind mount; only the removal is tested"
fi
printf x >&3
wait_for "the next 4 MiB" 30 lines_at_least 7
wait_for "a log line saying the store was removed" 30 grep -q "ioacct.db was removed under ioacctd" "$T/ioacctd.log"
if [ "$RO" = 1 ]; then
	wait_for "a log line saying the store is not back" 30 grep -q "ioacct.db not back yet: .*Read-only" "$T/ioacctd.log"
	[ ! -e "$S/ioacct.db" ] || fail "a store appeared in the read-only directory"
	kill -0 "$DAEMON_PID" || fail "ioacctd died with its store gone"
	umount "$S"
	trap teardown EXIT
fi
wait_for "a log line saying the store is back" 90 grep -q "ioacct.db is back" "$T/ioacctd.log"
[ -f "$S/ioacct.db" ] || fail "the store is not back at $S/ioacct.db"
printf x >&3
exec 3>&-
wait "$IORUN_PID"
[ "$(cat "$T/iorun5.rc")" = 0 ] || { cat "$T/iorun5.err"; fail "iorun failed"; }
kill -0 "$DAEMON_PID" || fail "ioacctd did not survive"
got=$(json_get "$T/out5.json" 'sum(m["write_bytes"] for m in j["mounts"])')
[ "$got" = 12582912 ] || { cat "$T/out5.json"; fail "the job wrote 12582912 bytes, the store says $got"; }
writes=$(json_get "$T/out5.json" 'sum(m["writes"] for m in j["mounts"])')
[ "$writes" = 12 ] || fail "12 writes made, the store says $writes"
grep -E "store|ioacct.db" "$T/ioacctd.log" | grep -v debug
ok "store removed (and read-only: $RO) under the daemon: logged, survived, put back, 12 MiB exact"

# 6. The WAL index truncated under the daemon (it used to die of SIGBUS, silently).
( "$IORUN" --json -o "$T/out6.json" -- "$IOWORK" write "$T/w6a" 1048576 3 , sleep 3 , write "$T/w6b" 1048576 4 \
	> /dev/null 2> "$T/iorun6.err"; echo $? > "$T/iorun6.rc" ) &
IORUN_PID=$!
wait_for "the first 3 MiB" 30 test -s "$T/w6a"
[ -s "$S/ioacct.db-shm" ] || fail "no $S/ioacct.db-shm to truncate"
truncate -s 0 "$S/ioacct.db-shm"
wait "$IORUN_PID"
kill -0 "$DAEMON_PID" || { wait "$DAEMON_PID"; fail "ioacctd died (status $?) after its -shm was truncated"; }
[ "$(cat "$T/iorun6.rc")" = 0 ] || { cat "$T/iorun6.err"; fail "iorun failed"; }
grep -q "ioacct.db-shm was truncated under ioacctd" "$T/ioacctd.log" || fail "no log line about the truncated -shm"
got=$(json_get "$T/out6.json" 'sum(m["write_bytes"] for m in j["mounts"])')
[ "$got" = 7340032 ] || { cat "$T/out6.json"; fail "the job wrote 7340032 bytes, the store says $got"; }
ok "-shm truncated under the daemon: logged, survived, 7 MiB exact"
