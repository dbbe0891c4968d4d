#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The socket faces every local user: only root may register or finish,
# anyone may ask for status, a user sees only their own job's snapshot, and
# garbage, truncated, oversized or silent clients get an error (or are
# dropped) while the daemon keeps serving everyone else.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v useradd >/dev/null || skip "useradd is needed to create an unprivileged user"
setup
start_daemon
SOCK=$T/ioacctd.sock
U=ioacct-test
id "$U" >/dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"
chmod 755 "$T"
as_user() { runuser -u "$U" -- "$@"; }

out=$(as_user "$IOPOKE" "$SOCK" register 77 0 $$)
echo "$out" | grep -q '^status=-1 error=only root may register' || fail "non-root register: $out"
out=$(as_user "$IOPOKE" "$SOCK" finish-job 77)
echo "$out" | grep -q '^status=-1 error=only root may finish' || fail "non-root finish: $out"
out=$(as_user "$IOPOKE" "$SOCK" status)
echo "$out" | grep -q '^status=0' || fail "non-root status: $out"
ok "non-root: register and finish refused, status served"

for kind in random truncated oversized badmagic badversion badtype shortattr; do
	out=$("$IOPOKE" "$SOCK" garbage $kind)
	echo "$out" | grep -Eq '^status=-[0-9]+ error=.+' || fail "garbage $kind: $out"
	"$IOPOKE" "$SOCK" status | grep -q '^status=0' || fail "daemon not serving after $kind"
	echo "  $kind -> ${out#status=}"
done
ok "malformed messages answered with errors, daemon still serving"

# A client that connects and says nothing must not hold anyone up.
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(3)' "$SOCK" &
SILENT=$!
sleep 0.3
timeout 2 "$IOPOKE" "$SOCK" status | grep -q '^status=0' || fail "a silent client blocks the daemon"
wait $SILENT
ok "silent client does not block others"

# Snapshot: a running job of root's is not shown to another user, is to root.
mkfifo "$T/ctl"
"$IORUN" --job-id 4242 -o /dev/null -- "$IOWORK" write "$T/snap" 4096 25 , wait < "$T/ctl" &
IORUN_PID=$!
exec 3> "$T/ctl"
for _ in $(seq 1 100); do
	"$IOPOKE" "$SOCK" snapshot 4242 iorun | grep -q 'op=1 bytes=102400 calls=25' && break
	sleep 0.1
done
"$IOPOKE" "$SOCK" snapshot 4242 iorun | grep -q 'op=1 bytes=102400 calls=25' ||
	fail "root's snapshot does not show the 25 writes: $("$IOPOKE" "$SOCK" snapshot 4242 iorun)"
out=$(as_user "$IOPOKE" "$SOCK" snapshot 4242 iorun)
echo "$out" | grep -q '^status=-1 error=job 4242 belongs to another user' || fail "other user's snapshot: $out"
printf x >&3; exec 3>&-
wait "$IORUN_PID" || fail "iorun failed"
ok "live snapshot: exact for the owner, refused to others"
