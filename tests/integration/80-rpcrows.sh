#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# RPC rows (issue 40) through a real ioacctd's JOB reply. No NFS here: a
# finished job's rows are written into the store by hand (2,500 WRITE rows of
# its own on the mount it wrote to, more than two of the reply's pages, and
# 124 WRITEs no job sent), then read back by ioreport through the daemon's
# socket and from the store file: the JSON's rpc, rpc_unattributed and
# rpc_series and the text's "Server calls" equal the rows exactly, and the
# two ways agree byte for byte; so do ioacct's RPCCalls, RPCBytesSent and
# RPCBytesRecv (the job's own RPCs, through the QUERY reply). Then /metrics:
# rows written for a running job are on the page, live, exactly (summed over
# bins, seconds from ns, no series for a procedure without calls), and the
# same once it finished (it lingers).
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
IOACCT=$abs_top_builddir/tools/ioacct
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
[ -x "$IOACCT" ] || fail "$IOACCT not built"
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to write the rows into the store"
MPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
EXTRA_CONF="metrics_listen = 127.0.0.1:$MPORT
metrics_linger = 300"
setup
start_daemon

JOB=8040
"$IORUN" --job-id $JOB -o "$T/iorun.txt" -- "$IOWORK" write "$T/f" 4096 10 > /dev/null ||
	fail "iorun failed"
! grep -q 'Server calls' "$T/iorun.txt" || fail "a job without RPC rows has a Server calls section"
KEY=$(sqlite3 "$T/ioacct.db" "SELECT key FROM jobs WHERE job_id = $JOB")
MNT=$(sqlite3 "$T/ioacct.db" "SELECT mnt_id FROM totals WHERE job_key = $KEY AND op = 1")
{ [ -n "$KEY" ] && [ -n "$MNT" ]; } || fail "job $JOB or its write mount not in the store"
MPATH=$(sqlite3 "$T/ioacct.db" "SELECT path FROM mounts WHERE job_key = $KEY AND mnt_id = $MNT")

# Bin i: i + 1 calls of 1,000 bytes sent each, 100 received; rtt 10 us a call.
sqlite3 -cmd ".timeout 20000" "$T/ioacct.db" "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL
	SELECT i + 1 FROM n WHERE i < 2499) INSERT INTO rpc (job_key, step_id, mnt_id, prog, vers,
	proc, flags, bin, calls, bytes_sent, bytes_recv, queue_ns, rtt_ns, execute_ns, errors,
	retrans, name) SELECT $KEY, 0, $MNT, 100003, 4, 38, 0, i, i + 1, 1000 * (i + 1),
	100 * (i + 1), 0, 10000 * (i + 1), 12000 * (i + 1), 0, 0, 'WRITE' FROM n;
	INSERT INTO rpc VALUES ($KEY, 0, $MNT, 100003, 4, 38, 1, 0, 124, 7936000, 14880, 0, 0, 0,
	0, 0, 'WRITE')" || fail "cannot write the rows"

"$IOREPORT" --format json -o "$T/daemon.json" $JOB || fail "ioreport through ioacctd failed"
"$IOREPORT" --db "$T/ioacct.db" --format json -o "$T/db.json" $JOB || fail "ioreport --db failed"
cmp -s "$T/daemon.json" "$T/db.json" || { diff "$T/db.json" "$T/daemon.json" | head; fail "daemon and store disagree"; }
python3 - "$T/daemon.json" "$MPATH" <<'PY' || fail "the JSON's RPC rows are not the store's"
import json, sys
j = json.load(open(sys.argv[1]))
m = [x for x in j["mounts"] if x["mount"] == sys.argv[2]][0]
n = 2500 * 2501 // 2
want = {"calls": n, "bytes_sent": 1000 * n, "bytes_recv": 100 * n, "queue_ns": 0,
        "rtt_ns": 10000 * n, "execute_ns": 12000 * n, "errors": 0, "retrans": 0,
        "program": 100003, "version": 4}
assert m["rpc"] == {"WRITE": want}, m["rpc"]
assert m["rpc_unattributed"]["WRITE"]["calls"] == 124, m["rpc_unattributed"]
s = j["rpc_series"]
assert [r["bin"] for r in s] == list(range(2500)), len(s)
assert all(r["calls"] == r["bin"] + 1 and r["bytes_sent"] == 1000 * r["calls"] and
           r["proc"] == "WRITE" and r["step"] == "0" for r in s)
PY
ok "ioreport's JSON through ioacctd: 2,500 RPC rows in pages, summed exactly, as the store's"

"$IOREPORT" $JOB > "$T/report.txt" || fail "ioreport (text) failed"
grep -A3 '^## Server calls' "$T/report.txt"
grep -q "^WRITE                     100003    4    3126250     3126250000      312625000   0.000000   0.000010   0.000012        0        0\$" \
	"$T/report.txt" || fail "the text's Server calls row is wrong"
grep -q '^on this mount, 124 RPCs during the job were sent by no job: 124 WRITE$' "$T/report.txt" ||
	fail "the text's unattributed line is wrong"
ok "the text's Server calls and the RPCs no job sent"

F=JobID,RPCCalls,RPCBytesSent,RPCBytesRecv
"$IOACCT" -M iorun -j $JOB -X -P -o $F > "$T/q-daemon" || fail "ioacct through ioacctd failed"
"$IOACCT" --db "$T/ioacct.db" -M iorun -j $JOB -X -P -o $F > "$T/q-db" || fail "ioacct --db failed"
cat "$T/q-daemon"
[ "$(tail -1 "$T/q-daemon")" = "$JOB|3126250|3126250000|312625000" ] || fail "ioacct's RPC fields are wrong"
cmp -s "$T/q-daemon" "$T/q-db" || { diff "$T/q-db" "$T/q-daemon"; fail "ioacct through ioacctd and --db disagree"; }
ok "ioacct's RPCCalls, RPCBytesSent, RPCBytesRecv: the job's own 3,126,250 RPCs, through ioacctd as in the store"

# /metrics: a running job's rows in the store (the kernel has none here).
JOB2=8041
"$IORUN" --job-id $JOB2 --bin-width 1 -- sh -c "'$IOWORK' write '$T/g' 4096 1 && while [ ! -e '$T/go' ]; do sleep 0.05; done" \
	> /dev/null 2> "$T/err-$JOB2" &
IPID=$!
KEY2=''
for _ in $(seq 1 200); do
	KEY2=$(sqlite3 -cmd ".timeout 20000" "$T/ioacct.db" "SELECT job_key FROM mounts WHERE mnt_id = $MNT AND
		job_key = (SELECT key FROM jobs WHERE job_id = $JOB2)")
	[ -n "$KEY2" ] && break
	sleep 0.05
done
[ -n "$KEY2" ] || { touch "$T/go"; fail "job $JOB2's mount not stored in 10 s"; }
# WRITE in bins 0..2: 6 calls; a GETATTR without calls (no series); 3 WRITEs no job sent.
sqlite3 -cmd ".timeout 20000" "$T/ioacct.db" "INSERT INTO rpc (job_key, step_id, mnt_id, prog,
	vers, proc, flags, bin, calls, bytes_sent, bytes_recv, queue_ns, rtt_ns, execute_ns, errors,
	retrans, name) VALUES ($KEY2, 0, $MNT, 100003, 4, 38, 0, 0, 1, 1000, 100, 5, 1500000000, 7, 0, 0, 'WRITE'),
	($KEY2, 0, $MNT, 100003, 4, 38, 0, 1, 2, 2000, 200, 5, 1000000000, 7, 1, 0, 'WRITE'),
	($KEY2, 0, $MNT, 100003, 4, 38, 0, 2, 3, 3000, 300, 5, 2, 7, 0, 4, 'WRITE'),
	($KEY2, 0, $MNT, 100003, 4, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'GETATTR'),
	($KEY2, 0, $MNT, 100003, 4, 38, 1, 0, 3, 300, 30, 0, 0, 0, 0, 0, 'WRITE')" ||
	{ touch "$T/go"; fail "cannot write job $JOB2's rows"; }
page() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
		"http://127.0.0.1:$MPORT/metrics" 2>/dev/null
}
scrape() { page | grep "^ioacct_rpc_.*job_id=\"$JOB2\"" | sort > "$T/$1"; }
FSTYPE=$(sqlite3 "$T/ioacct.db" "SELECT fstype FROM mounts WHERE job_key = $KEY2 AND mnt_id = $MNT")
L="cluster=\"iorun\",job_id=\"$JOB2\",user=\"$(id -un)\",step=\"0\",mount=\"$MPATH\",fstype=\"$FSTYPE\",procedure=\"WRITE\",program=\"100003\",version=\"4\""
for f in calls:6 sent_bytes:6000 received_bytes:600 queue_seconds:0.000000015 \
	rtt_seconds:2.500000002 execute_seconds:0.000000021 errors:1 retransmissions:4 \
	unattributed_calls:3 unattributed_sent_bytes:300 unattributed_received_bytes:30; do
	echo "ioacct_rpc_${f%%:*}_total{$L} ${f#*:}"
done | sort > "$T/want"
for _ in $(seq 1 100); do
	scrape live
	cmp -s "$T/live" "$T/want" && break
	sleep 0.1
done
touch "$T/go"
wait $IPID || fail "iorun $JOB2 failed: $(cat "$T/err-$JOB2")"
cmp -s "$T/live" "$T/want" || { diff "$T/want" "$T/live"; fail "/metrics: the running job's RPC series are not its rows"; }
ok "/metrics: a running job's RPC rows, summed over bins, exact; none for a procedure without calls"
for _ in $(seq 1 100); do
	page | grep -q "^ioacct_job_running{.*job_id=\"$JOB2\".*} 0$" && break
	sleep 0.1
done
scrape gone
cmp -s "$T/gone" "$T/want" || { diff "$T/want" "$T/gone"; fail "/metrics: the finished job's RPC series changed"; }
ok "/metrics: the same once the job finished (lingering)"
