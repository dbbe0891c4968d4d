#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every client asks ioacctd (issue 12): the daemon on non-default paths
# (socket, store, pins in the test's directory) and no configuration file
# for the clients, which are given only --socket: iorun prints its report,
# ioreport gives text, JSON, HTML, a Darshan log and a comparison with it,
# ioacct lists the job, all with the exact bytes written; both encode an odd
# job name to the same JSON bytes. Then private_data
# = yes and a user who is not root: their own job in every format, exactly;
# another user's job refused with a clear message. The daemon stopped: one
# line saying so, exit 1; --db still reads the store, offline.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
IOACCT=$abs_top_builddir/tools/ioacct
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$IOACCT" ] || fail "$IOACCT not built"
command -v useradd >/dev/null || skip "useradd is needed to create an unprivileged user"
command -v runuser >/dev/null || skip "runuser is needed to run the clients as another user"
setup
# The daemon alone reads $CONF: nothing tells the clients where the store is.
unset IOACCT_CONF
SOCK=$T/ioacctd.sock
[ ! -e "${SYSCONFDIR:-/etc}/ioacct/ioacct.conf" ] || echo "note: a system ioacct.conf exists; --socket overrides it"
start_daemon

U=ioacct-test
id "$U" >/dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"
UID_U=$(id -u "$U")
chmod 755 "$T"
UD=$T/user
mkdir -p "$UD" && chown "$U" "$UD"
as_user() { runuser -u "$U" -- env -u IOACCT_CONF "$@"; }

D=$T/root-fs
mkdir -p "$D"
ROOTMNT=$(mount_of "$D")

# check_error WHAT STATUS NEEDLE CMD...: exit STATUS, NEEDLE in a one-line message.
check_error() {
	local what=$1 status=$2 needle=$3 rc=0
	shift 3
	"$@" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" = "$status" ] || { cat "$T/err"; fail "$what: exit $rc, expected $status"; }
	grep -Fq -- "$needle" "$T/err" || { cat "$T/err"; fail "$what: no '$needle' in the message"; }
	[ "$(wc -l < "$T/err")" = 1 ] || { cat "$T/err"; fail "$what: the message is not one line"; }
	echo "  $what -> $(cat "$T/err")" | cut -c1-160
}

# text_bytes FILE MOUNT COUNTER: the counter of the mount's block in a text report.
text_bytes() {
	awk -v m="$2" -v c="total_$3:" '
		/^# mount: / { inblock = ($3 == m) }
		inblock && $1 == c { print $2; exit }' "$1"
}

# check_formats WHO JOB BYTES_W BYTES_R RUN...: every format of ioreport, through RUN
# (nothing, or as_user), says the job wrote and read exactly these bytes on $ROOTMNT.
check_formats() {
	local who=$1 job=$2 w=$3 r=$4 dir
	shift 4
	dir=$([ "$who" = root ] && echo "$T" || echo "$UD")
	"$@" "$IOREPORT" --socket "$SOCK" $job > "$dir/r.txt" || fail "$who: ioreport (text) failed"
	[ "$(text_bytes "$dir/r.txt" "$ROOTMNT" POSIX_BYTES_WRITTEN)" = "$w" ] ||
		{ cat "$dir/r.txt"; fail "$who: text report: not $w bytes written on $ROOTMNT"; }
	[ "$(text_bytes "$dir/r.txt" "$ROOTMNT" POSIX_BYTES_READ)" = "$r" ] ||
		fail "$who: text report: not $r bytes read on $ROOTMNT"
	"$@" "$IOREPORT" --socket "$SOCK" --format json -o "$dir/r.json" $job ||
		fail "$who: ioreport (json) failed"
	[ "$(json_get "$dir/r.json" '[(m["write_bytes"], m["read_bytes"]) for m in j["mounts"] if m["mount"] == "'"$ROOTMNT"'"]')" = "[($w, $r)]" ] ||
		fail "$who: JSON report: not ($w, $r) bytes on $ROOTMNT"
	# The series came in pages: its bins must add up to the totals.
	[ "$(json_get "$dir/r.json" '[sum(m["write_bytes"]) for m in j["series"]["mounts"] if m["mount"] == "'"$ROOTMNT"'"]')" = "[$w]" ] ||
		fail "$who: JSON report: the series does not add up to $w"
	"$@" "$IOREPORT" --socket "$SOCK" --format html -o "$dir/r.html" $job ||
		fail "$who: ioreport (html) failed"
	grep -q "$ROOTMNT" "$dir/r.html" && grep -q ">$w[ <]" "$dir/r.html" ||
		fail "$who: HTML report: no $w bytes on $ROOTMNT"
	"$@" "$IOREPORT" --socket "$SOCK" --format darshan -o "$dir/r.darshan" $job ||
		fail "$who: ioreport --format darshan failed"
	"$@" "$IOREPORT" --socket "$SOCK" --compare "$dir/r.darshan" --mount "$ROOTMNT" $job \
		> "$dir/cmp.txt" || fail "$who: ioreport --compare failed"
	grep -Eq "^POSIX_BYTES_WRITTEN +$w +$w +1\.000000\$" "$dir/cmp.txt" ||
		{ cat "$dir/cmp.txt"; fail "$who: the Darshan log does not hold $w bytes written"; }
	grep -Eq "^POSIX_BYTES_READ +$r +$r +1\.000000\$" "$dir/cmp.txt" ||
		fail "$who: the Darshan log does not hold $r bytes read"
}

# ---- clients given only the socket ----
# 3 x 65536 written, then read back: 196608 bytes each way on the file's mount.
"$IORUN" --socket "$SOCK" --job-id 6101 -o "$T/iorun.txt" -- \
	"$IOWORK" write "$D/f" 65536 3 , read "$D/f" 65536 3 | cat || fail "iorun failed"
grep -q '^# jobid: 6101$' "$T/iorun.txt" || { cat "$T/iorun.txt"; fail "iorun did not read its job back"; }
[ "$(text_bytes "$T/iorun.txt" "$ROOTMNT" POSIX_BYTES_WRITTEN)" = 196608 ] ||
	{ cat "$T/iorun.txt"; fail "iorun's report: not 196608 bytes written"; }
ok "iorun --socket only: the report, 196608 bytes written on $ROOTMNT"

check_formats root 6101 196608 196608
cmp -s "$T/r.txt" "$T/iorun.txt" || { diff "$T/iorun.txt" "$T/r.txt"; fail "iorun and ioreport disagree"; }
ok "ioreport --socket only: text, JSON, HTML, Darshan and --compare, exact"

"$IOACCT" --socket "$SOCK" -j 6101 -X -n -P -o JobID,Mount,WriteBytes,ReadBytes > "$T/out" ||
	fail "ioacct --socket failed"
grep -Fxq "6101|$ROOTMNT|196608|196608" "$T/out" || { cat "$T/out"; fail "ioacct: not 196608 both ways"; }
ok "ioacct --socket only: 6101|$ROOTMNT|196608|196608"

# One JSON string encoder: a job name (the command's path) with a quote, a
# backslash, control characters, bytes that are not UTF-8 and a truncated
# sequence comes out of ioacct --json and ioreport --format json as the same
# bytes, and as Python encodes it (maximal subparts to U+FFFD, kept as \ufffd).
ODD=$T/$'q"b\\s\x01t\tx\xff\xe2\x82-caf\xc3\xa9\xc0\xaf'
ln -s "$IOWORK" "$ODD"
"$IORUN" --socket "$SOCK" --job-id 6103 -o /dev/null -- "$ODD" write "$D/odd" 4096 1 | cat ||
	fail "iorun with an odd command name failed"
"$IOACCT" --socket "$SOCK" -j 6103 -X --json -o JobID,JobName > "$T/odd-ioacct.json" || fail "ioacct --json failed"
"$IOREPORT" --socket "$SOCK" --format json 6103 > "$T/odd-ioreport.json" || fail "ioreport --format json failed"
python3 - "$ODD" "$T/odd-ioacct.json" "$T/odd-ioreport.json" <<'PY' || fail "the job name is not encoded the same way"
import json, os, sys
name = os.fsencode(sys.argv[1])
want = json.dumps(name.decode("utf-8", "replace"), ensure_ascii=False)
want = want.replace("\ufffd", "\\ufffd").encode()
def literal(path, key):
    data = open(path, "rb").read()
    i = data.index(b'"%s": "' % key) + len(key) + 4
    j = i + 1
    while data[j:j + 1] != b'"':
        j += 2 if data[j:j + 1] == b"\\" else 1
    json.loads(data)  # and the whole output is JSON
    return data[i:j + 1]
got = literal(sys.argv[2], b"JobName"), literal(sys.argv[3], b"name")
for g in got:
    if g != want:
        sys.exit("got %r, want %r" % (g, want))
print("job name:", want.decode())
PY
ok "ioacct --json and ioreport --format json encode an odd job name to the same bytes"

# A second job that becomes the user's, as if Slurm had run it for them: 5 x 4096.
"$IORUN" --socket "$SOCK" --job-id 6102 -o /dev/null -- \
	"$IOWORK" write "$D/g" 4096 5 , read "$D/g" 4096 5 | cat || fail "iorun 6102 failed"
python3 - "$T/ioacct.db" "$UID_U" "$U" <<'PY' || fail "cannot give job 6102 to $U"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
db.execute("UPDATE jobs SET uid = ?, user = ? WHERE cluster = 'iorun' AND job_id = 6102",
           (int(sys.argv[2]), sys.argv[3]))
db.commit()
PY

# Without private_data the store is everyone's: so is the daemon's answer.
as_user "$IOREPORT" --socket "$SOCK" 6101 > "$UD/any.txt" || fail "user: ioreport of root's job failed"
ok "private_data = no: a user reads any job through ioacctd"

# ---- private_data = yes: a user's own job only ----
stop_daemon
echo "private_data = yes" >> "$CONF"
start_daemon
[ "$(stat -c %a "$T/ioacct.db")" = 600 ] || fail "the store is not 0600 with private_data"
check_formats "$U" 6102 20480 20480 as_user
as_user "$IOACCT" --socket "$SOCK" -S now-1hours -X -n -P -o JobID,WriteBytes > "$UD/out" ||
	fail "user: ioacct failed"
[ "$(cat "$UD/out")" = "6102|20480" ] || { cat "$UD/out"; fail "user: ioacct is not their one job"; }
ok "private_data = yes: the user's own job in text, JSON, HTML, Darshan and ioacct, exact"

check_error "another user's job" 1 "job 6101 belongs to another user" \
	as_user "$IOREPORT" --socket "$SOCK" 6101
check_error "another user's Darshan log" 1 "job 6101 belongs to another user" \
	as_user "$IOREPORT" --socket "$SOCK" --format darshan -o "$UD/x.darshan" 6101
[ ! -e "$UD/x.darshan" ] || fail "a refused job left a Darshan log"
check_error "no such job" 1 "no job 999999 in ioacctd's store" "$IOREPORT" --socket "$SOCK" 999999
check_error "the user reads the file" 1 "Permission denied; with private_data = yes" as_user "$IOREPORT" --db "$T/ioacct.db" 6102
ok "another user's job refused, clearly"

# ---- the daemon stopped ----
stop_daemon
for tool in "$IOREPORT 6102" "$IOACCT -j 6102"; do
	check_error "${tool%% *}: no daemon" 1 \
		"cannot reach ioacctd at $SOCK: No such file or directory (is it running? or use --db FILE as root)" \
		as_user $tool --socket "$SOCK"
done
check_error "iorun: no daemon" 0 "I/O monitoring unavailable: cannot connect to $SOCK" \
	"$IORUN" --socket "$SOCK" -- true
# Offline, as root: the store file itself.
"$IOREPORT" --db "$T/ioacct.db" 6101 > "$T/offline.txt" || fail "ioreport --db failed"
cmp -s "$T/offline.txt" "$T/iorun.txt" || { diff "$T/iorun.txt" "$T/offline.txt"; fail "--db and the daemon disagree"; }
"$IOACCT" --db "$T/ioacct.db" -j 6101 -X -n -P -o JobID,WriteBytes > "$T/out" || fail "ioacct --db failed"
[ "$(cat "$T/out")" = "6101|196608" ] || { cat "$T/out"; fail "ioacct --db: not 196608"; }
ok "daemon down: one line, exit 1; --db reads the store offline"
