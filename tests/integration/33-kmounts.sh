#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel-internal mounts (issue 29): a job's fstats of a pipe, a socket and an
# eventfd are counted on mounts no mountinfo lists (pipefs, sockfs,
# anon_inodefs). The report names them as /proc/PID/fd does ("pipe:",
# "socket:", "anon_inode:") with their file systems, exactly counted, as
# pseudo file systems; no mount of the job is "mnt:N unknown".
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup
start_daemon

"$IORUN" --json -o "$T/r.json" -- python3 -c '
import os, socket
r, w = os.pipe()
for _ in range(7):
    os.fstat(r)
s = socket.socket(socket.AF_UNIX)
for _ in range(5):
    os.fstat(s.fileno())
e = os.eventfd(0)
for _ in range(3):
    os.fstat(e)
' > "$T/r.out" 2>&1 || { cat "$T/r.out"; fail "iorun failed"; }

python3 - "$T/r.json" <<'PY' || fail "internal mounts misnamed or miscounted"
import json, sys
j = json.load(open(sys.argv[1]))
by = {m["mount"]: m for m in j["mounts"]}
bad = [m for m in by if m.startswith("mnt:") or by[m]["fs_type"] == "unknown"]
if bad:
    sys.exit("unnamed mounts: %s" % bad)
for path, fs, n in (("pipe:", "pipefs", 7), ("socket:", "sockfs", 5), ("anon_inode:", "anon_inodefs", 3)):
    m = by.get(path)
    if m is None:
        sys.exit("no mount %s in %s" % (path, sorted(by)))
    if m["fs_type"] != fs or m["kind"] != "pseudo" or m["source"] != "kernel-internal":
        sys.exit("%s: %s %s %s" % (path, m["fs_type"], m["kind"], m["source"]))
    stats = m["ops"]["stat"]["calls"]
    print("  %s (%s): %d stats" % (path, fs, stats))
    # Python's start-up fstats its standard streams, which may be pipes.
    if stats != n and not (path == "pipe:" and stats > n):
        sys.exit("%s: %d stats, want %d" % (path, stats, n))
PY
ok "pipes, sockets and eventfds are named by their kernel-internal mounts"
