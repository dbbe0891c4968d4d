#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Missed library opens are counted and said (issue 39). The MPI-IO library
# watch tells the daemon of each library a watched task opens through a ring
# buffer; when the daemon falls behind, opens find it full and are lost, and
# a library they loaded may never be probed. A job whose 4 threads open the
# OpenMPI library 200,000 times floods it: its report (JSON, through the
# daemon and from the store, and text) and the daemon's log say how many
# opens were missed, more than 0. A job that opens the library once first:
# the library probed, 0 missed in its JSON report, no "Missed" line in its
# text report, nothing in the log.
. "$(dirname "$0")/lib.sh"
require_root_bpf
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is needed to flood the watch"
LIB=$(ldconfig -p | awk '/libmpi\.so\.[0-9]+ .*x86-64/ { print $NF; exit }')
[ -n "$LIB" ] && [ -f "$LIB" ] || skip "no OpenMPI library (libmpi.so.40) to open (Debian: libopenmpi3)"
IOREPORT=$abs_top_builddir/tools/ioreport
EXTRA_CONF="mpi_detach_after = 1s"
setup
start_daemon
require_mpi_uprobes

# One open: the library probed, nothing missed. The task stays until it is
# (the daemon looks at the library through its /proc/PID/root).
"$IORUN" --json -o "$T/calm.json" -- bash -c 'exec 3< "$1"
	for _ in $(seq 1 600); do grep -q "MPI-IO: attached to .*libmpi" "$2" && exit 0; sleep 0.1; done
	exit 1' _ "$LIB" "$T/ioacctd.log" > "$T/calm.out" 2>&1 ||
	fail "the calm job's library was not probed: $(grep MPI-IO "$T/ioacctd.log")"
[ "$(json_get "$T/calm.json" 'j["lib_opens_missed"]')" = 0 ] ||
	fail "the calm job: $(json_get "$T/calm.json" 'j["lib_opens_missed"]') library opens missed, not 0"
CALM=$(json_get "$T/calm.json" 'j["job_id"]')
"$IOREPORT" --db "$T/ioacct.db" -o "$T/calm.txt" "$CALM" || fail "ioreport (calm, text) failed"
! grep -q "^Missed" "$T/calm.txt" || fail "the calm job's text report says: $(grep -A1 "^Missed" "$T/calm.txt")"
! grep -q "library opens not seen" "$T/ioacctd.log" || fail "the log says opens were missed for the calm job"
ok "one open of the library: probed, 0 missed, nothing said"

# The flood: 4 threads, 50,000 opens each, as fast as they go.
"$IORUN" --json -o "$T/flood.json" -- /usr/bin/python3 -c '
import os, sys, threading
def flood():
    for _ in range(50000):
        os.close(os.open(sys.argv[1], os.O_RDONLY))
ts = [threading.Thread(target=flood) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
' "$LIB" > "$T/flood.out" 2>&1 || fail "iorun (flood) failed: $(cat "$T/flood.out")"
FLOOD=$(json_get "$T/flood.json" 'j["job_id"]')
N=$(json_get "$T/flood.json" 'j["lib_opens_missed"]')
[ "$N" -gt 0 ] || fail "200,000 library opens and none missed: the report says $N"
[ "$N" -lt 200000 ] || fail "$N of 200,000 opens missed: the daemon saw none"
echo "  $N of 200,000 library opens missed"
grep -q "job .*/$FLOOD step .*: $N library opens not seen" "$T/ioacctd.log" ||
	fail "the log does not say $N opens missed: $(grep "library opens" "$T/ioacctd.log")"
"$IOREPORT" --format json -o "$T/sock.json" "$FLOOD" || fail "ioreport (through ioacctd) failed"
[ "$(json_get "$T/sock.json" 'j["lib_opens_missed"]')" = "$N" ] ||
	fail "ioreport through ioacctd says $(json_get "$T/sock.json" 'j["lib_opens_missed"]'), not $N"
"$IOREPORT" --db "$T/ioacct.db" -o "$T/flood.txt" "$FLOOD" || fail "ioreport (flood, text) failed"
grep -q "^Missed *$N library opens not seen" "$T/flood.txt" ||
	fail "the text report does not say $N opens missed: $(grep -A1 "^Missed" "$T/flood.txt")"
ok "a flood of library opens: $N missed, in the JSON and text reports and the log"
