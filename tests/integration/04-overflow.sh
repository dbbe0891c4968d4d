#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A full kernel map loses no event silently: with room for 4 entries, what
# does not fit is counted as dropped, and stored + dropped = what happened.
. "$(dirname "$0")/lib.sh"
require_root_bpf
EXTRA_CONF="max_entries = 4"
setup
start_daemon

D=$T/d; mkdir -p "$D/dirs"
SHM=/dev/shm/ioacct-test-$$
# 30 events: write (1 open, 1 create, 10 writes), pwrite (1 open, 1 create,
# 10 writes), 3 mkdirs, 3 rmdirs; 81920 bytes.
"$IORUN" --json -o "$T/out.json" -- "$IOWORK" write "$D/a" 4096 10 , pwrite "$SHM" 4096 10 , \
	mkdir "$D/dirs" 3 , rmdir "$D/dirs" 3 | cat || fail "iorun failed"
read -r calls bytes dropped dbytes < <(json_get "$T/out.json" \
	'" ".join(map(str, [sum(m[k] for m in j["mounts"] for k in ("reads","writes","opens","creates","mkdirs","unlinks","rmdirs","fsyncs","renames","stats")), sum(m["write_bytes"] for m in j["mounts"]), j["dropped"], j["dropped_bytes"]]))')
echo "stored $calls events ($bytes bytes), dropped $dropped ($dbytes bytes)"
[ "$dropped" -gt 0 ] || fail "nothing dropped with a 4-entry map"
[ $((calls + dropped)) = 30 ] || fail "stored $calls + dropped $dropped != 30 events"
[ $((bytes + dbytes)) = 81920 ] || fail "stored $bytes + dropped $dbytes != 81920 bytes"
"$IOPOKE" "$T/ioacctd.sock" status | grep -q '^status=0' || fail "daemon not serving after overflow"
ok "overflow counted as dropped, nothing lost silently"
