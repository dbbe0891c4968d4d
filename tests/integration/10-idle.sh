#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# detach_when_idle (the default): no program is attached while nothing is
# watched, they are attached before a job's first call and detached after its
# end; a restart while detached keeps the maps; links adopted from a killed
# daemon are detached when its job ends; with detach_when_idle = no they stay.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup
SHM=$(mount_of /dev/shm)
shm_bytes() { json_get "$1" 'sum(m["write_bytes"] for m in j["mounts"] if m["mount"] == "'"$SHM"'")'; }
nlinks() { find "$PIN" -name 'link_*' 2>/dev/null | wc -l; }
detail() { "$IOPOKE" "$T/ioacctd.sock" status | sed -n 's/.*detail=probes: [a-z]*, \([a-z]*\).*/\1/p'; }
expect_detached() {
	[ "$(nlinks)" = 0 ] || fail "$1: $(nlinks) links pinned while nothing is watched"
	[ "$(detail)" = detached ] || fail "$1: status says '$(detail)', not detached"
}

start_daemon
expect_detached "after start"
ls -d "$PIN"/abi*/mode_* > /dev/null 2>&1 || fail "no mode marker in $PIN"
ok "started detached, mode marker pinned"

# During the job the links are there (counted by the job itself, on a pipe).
F=/dev/shm/ioacct-test-$$.dat
"$IORUN" --json -o "$T/a.json" -- sh -c \
	"find '$PIN' -name 'link_*' | wc -l; '$IOWORK' write '$F' 1048576 3" > "$T/a.links" ||
	fail "iorun failed"
[ "$(cat "$T/a.links")" -gt 0 ] || fail "no link pinned while the job ran"
got=$(shm_bytes "$T/a.json")
[ "$got" = 3145728 ] || fail "job 1 wrote 3145728 bytes, the report says $got"
expect_detached "after job 1"
ok "attached for job 1 only ($(cat "$T/a.links") links), 3 MiB exact"

# A restart while detached keeps the maps (and so anything not yet stored).
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
start_daemon
grep -q "reused the maps" "$T/ioacctd.log" || fail "the maps were not reused after a restart while detached"
expect_detached "after restart"
"$IORUN" --json -o "$T/b.json" -- "$IOWORK" write "$F" 1048576 2 || fail "iorun failed"
got=$(shm_bytes "$T/b.json")
[ "$got" = 2097152 ] || fail "job 2 wrote 2097152 bytes, the report says $got"
expect_detached "after job 2"
ok "restart while detached: maps reused, 2 MiB exact"

# kill -9 mid-job: the new daemon adopts the pinned links, detaches them at the end.
mkfifo "$T/ctl"
( "$IORUN" --json -o "$T/c.json" -- "$IOWORK" write "$F" 1048576 4 , wait , write "$F" 1048576 1 \
	< "$T/ctl" > "$T/c.out" 2>&1; echo $? > "$T/c.rc" ) &
JOB=$!
exec 3> "$T/ctl"
for _ in $(seq 1 2400); do
	"$IOPOKE" "$T/ioacctd.sock" status | grep -q 'jobs=1 ' && break
	sleep 0.05
done
[ "$(nlinks)" -gt 0 ] || fail "job 3 registered, but no link is pinned"
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
start_daemon
[ "$(nlinks)" -gt 0 ] || fail "the links were not kept for the running job"
printf x >&3
exec 3>&-
wait "$JOB"
[ "$(cat "$T/c.rc")" = 0 ] || { cat "$T/c.out"; fail "iorun failed"; }
got=$(shm_bytes "$T/c.json")
[ "$got" = 5242880 ] || fail "job 3 wrote 5242880 bytes, the report says $got"
expect_detached "after job 3"
ok "links adopted across kill -9 mid-job and detached at its end, 5 MiB exact"
stop_daemon

# detach_when_idle = no: attached from the start, and after a job.
echo "detach_when_idle = no" >> "$CONF"
start_daemon
[ "$(nlinks)" -gt 0 ] || fail "detach_when_idle = no: nothing attached at start"
[ "$(detail)" = attached ] || fail "detach_when_idle = no: status says '$(detail)'"
"$IORUN" -o /dev/null -- true || fail "iorun failed"
[ "$(nlinks)" -gt 0 ] || fail "detach_when_idle = no: detached after a job"
ok "detach_when_idle = no keeps the probes attached"
