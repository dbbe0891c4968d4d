#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The RPCs per job (issue 40), what this host can show of them: the job's
# probe mode says whether they were counted (rpc=sunrpc) or why not
# (rpc=off:no-sunrpc without the module), the daemon says it once, and a
# kernel without sunrpc changes nothing else (the job's bytes exact), nor
# does /metrics: the jobs' series, and no RPC series without RPCs. The
# counting itself is checked against mountstats over a real NFS mount in
# the kernel matrix (tests/vm/nfs/rpc.sh, nfs/metrics.sh for /metrics): NFS
# cannot be mounted here.
# With rpc_probes = no (ioacct.conf) a restarted daemon never loads them
# and its jobs say rpc=off:config, whether the kernel has sunrpc or not.
. "$(dirname "$0")/lib.sh"
require_root_bpf
MPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
EXTRA_CONF="metrics_listen = 127.0.0.1:$MPORT
metrics_linger = 300"
setup

D=$T/root-fs
mkdir -p "$D"
start_daemon
mode_of() { # JOB_ID: the job's stored probe mode
	sqlite3 "$T/ioacct.db" "SELECT probe_mode FROM jobs WHERE job_id = $1"
}
for id in 8201 8202; do
	"$IORUN" --job-id $id --json -o "$T/out-$id.json" -- "$IOWORK" write "$D/f" 4096 3 > /dev/null ||
		fail "iorun $id failed"
	[ "$(json_get "$T/out-$id.json" "sum(m['write_bytes'] for m in j['mounts'] if m['mount'] == '$(mount_of "$D")')")" = 12288 ] ||
		fail "job $id: not 12288 bytes written"
done
if [ -e /sys/module/sunrpc ]; then
	want="rpc=sunrpc"
	said="RPC: sunrpc's tracepoints attached"
else
	want="rpc=off:no-sunrpc"
	said="RPC: no sunrpc module in the kernel"
fi
for id in 8201 8202; do
	m=$(mode_of $id)
	case " $m " in
	*" $want "*) ;;
	*) fail "job $id: probe mode '$m' has no '$want'" ;;
	esac
	# Before the views, where older readers of the store do not look for them.
	case "$m" in
	*" views="*" rpc="*) fail "job $id: the rpc word after the views: '$m'" ;;
	esac
done
ok "both jobs' probe mode says $want ($(mode_of 8201))"
# The JSON report says it apart from the backend (rpc_probes).
[ "$(json_get "$T/out-8201.json" 'j["rpc_probes"]')" = "${want#rpc=}" ] ||
	fail "JSON rpc_probes is '$(json_get "$T/out-8201.json" 'j.get("rpc_probes")')', not '${want#rpc=}'"
ok "JSON rpc_probes: ${want#rpc=}"
[ "$(grep -c "$said" "$T/ioacctd.log")" = 1 ] ||
	fail "the daemon did not say once '$said': $(grep 'RPC' "$T/ioacctd.log")"
ok "said once in the log: $said"

# /metrics, scraped while a job runs (a job shorter than a drain interval
# may never be seen running): its bytes, and no RPC series.
scrape() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
		"http://127.0.0.1:$MPORT/metrics" > "$T/page" 2>/dev/null
}
written() { # the job 8203's bytes written on $D's mount, on the page
	awk -v id="job_id=\"8203\"" -v m="mount=\"$(mount_of "$D")\"" \
		'index($0, "ioacct_write_bytes_total{") == 1 && index($0, id) && index($0, m) { n += $NF }
		END { print n + 0 }' "$T/page"
}
"$IORUN" --job-id 8203 -- sh -c "'$IOWORK' write '$D/g' 4096 3 && while [ ! -e '$T/go' ]; do sleep 0.05; done" \
	> /dev/null 2> "$T/err-8203" &
IPID=$!
for _ in $(seq 1 100); do
	scrape && [ "$(written)" = 12288 ] && break
	sleep 0.1
done
touch "$T/go"
wait $IPID || fail "iorun 8203 failed: $(cat "$T/err-8203")"
[ "$(written)" = 12288 ] ||
	fail "/metrics: job 8203 wrote $(written) bytes on $(mount_of "$D"), not 12288: $(grep '^ioacct_write_bytes_total{' "$T/page" | head -n 4)"
grep -q '^# TYPE ioacct_rpc_calls_total counter$' "$T/page" || fail "/metrics: no ioacct_rpc_calls_total family"
if grep -q '^ioacct_rpc_' "$T/page"; then
	fail "/metrics: RPC series without RPCs: $(grep '^ioacct_rpc_' "$T/page" | head -n 3)"
fi
ok "/metrics: the running job's 12288 bytes, no RPC series"

# rpc_probes = no: never loaded, said once, the job's mode says why.
stop_daemon
echo "rpc_probes = no" >> "$CONF"
start_daemon
"$IORUN" --job-id 8204 --json -o "$T/out-8204.json" -- "$IOWORK" write "$D/f" 4096 3 > /dev/null ||
	fail "iorun 8204 failed"
case " $(mode_of 8204) " in
*" rpc=off:config "*) ;;
*) fail "job 8204 (rpc_probes = no): probe mode '$(mode_of 8204)' has no 'rpc=off:config'" ;;
esac
[ "$(json_get "$T/out-8204.json" 'j["rpc_probes"]')" = off:config ] ||
	fail "JSON rpc_probes is '$(json_get "$T/out-8204.json" 'j.get("rpc_probes")')', not 'off:config'"
[ "$(grep -c "RPC: rpc_probes = no: the jobs' RPCs are not counted" "$T/ioacctd.log")" = 1 ] ||
	fail "the daemon did not say once that rpc_probes = no: $(grep 'RPC' "$T/ioacctd.log")"
[ "$(grep -c "$said" "$T/ioacctd.log")" = 1 ] ||
	fail "with rpc_probes = no the daemon tried the probes: $(grep 'RPC' "$T/ioacctd.log")"
ok "rpc_probes = no: rpc=off:config, JSON off:config, said once, nothing loaded"
