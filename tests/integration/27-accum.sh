#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The per-task accumulator (issue 18) loses no call: a job finished while its
# writer still lives (the calls only in the writer's task storage) gets them
# all; bins drained while a writer holds calls of them, some of the bin's
# calls already in the kernel's table, are exact; and the writer's exit
# flushes what it holds.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup
start_daemon

S=/dev/shm/ioacct-test-$$.acc
SHMMNT=$(mount_of /dev/shm)

writes_of() { # JSON -> "writes write_bytes" on /dev/shm
	json_get "$1" "' '.join(str(sum(m.get(k, 0) for m in j['mounts'] if m['mount'] == '$SHMMNT')) for k in ('writes', 'write_bytes'))"
}

# The job ends (its command, sh, exits) while iowork sleeps after its writes.
"$IORUN" --json -o "$T/alive.json" -- sh -c \
	"'$IOWORK' pwrite '$S.a' 4096 1000 , sleep 3 > /dev/null & sleep 1" || fail "iorun (alive) failed"
got=$(writes_of "$T/alive.json")
[ "$got" = "1000 4096000" ] || { json_get "$T/alive.json" "[(m['mount'], m.get('writes'), m.get('opens')) for m in j['mounts']]"; fail "finished while the writer lives: $got, want 1000 4096000"; }
ok "a job finished while its writer lives gets every call"
sleep 2.5

# 0.1 s bins, drained every 0.2 s: runs of calls more than 50 ms apart in one
# bin (the first run flushed by age, the second held), then a pause of ten
# bins during which the held bins are drained, then more calls.
for i in 1 2 3; do
	"$IORUN" --bin-width 0.1 --json -o "$T/bins$i.json" -- "$IOWORK" \
		pwrite "$S.b" 4096 300 , sleep 0.06 , pwrite "$S.c" 4096 300 , sleep 1 , \
		pwrite "$S.d" 4096 300 > /dev/null || fail "iorun (bins $i) failed"
	got=$(writes_of "$T/bins$i.json")
	[ "$got" = "900 3686400" ] || { cat "$T/bins$i.json"; fail "run $i: drained while held: $got, want 900 3686400"; }
done
ok "bins drained while a writer holds calls of them are exact"
