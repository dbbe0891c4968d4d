#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The RPCs per job (issue 40), what this host can show of them: the job's
# probe mode says whether they were counted (rpc=sunrpc) or why not
# (rpc=off:no-sunrpc without the module), the daemon says it once, and a
# kernel without sunrpc changes nothing else (the job's bytes exact). The
# counting itself is checked against mountstats over a real NFS mount in
# the kernel matrix (tests/vm/nfs/rpc.sh): NFS cannot be mounted here.
# With rpc_probes = no (ioacct.conf) a restarted daemon never loads them
# and its jobs say rpc=off:config, whether the kernel has sunrpc or not.
. "$(dirname "$0")/lib.sh"
require_root_bpf
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

# rpc_probes = no: never loaded, said once, the job's mode says why.
stop_daemon
echo "rpc_probes = no" >> "$CONF"
start_daemon
"$IORUN" --job-id 8203 --json -o "$T/out-8203.json" -- "$IOWORK" write "$D/f" 4096 3 > /dev/null ||
	fail "iorun 8203 failed"
case " $(mode_of 8203) " in
*" rpc=off:config "*) ;;
*) fail "job 8203 (rpc_probes = no): probe mode '$(mode_of 8203)' has no 'rpc=off:config'" ;;
esac
[ "$(json_get "$T/out-8203.json" 'j["rpc_probes"]')" = off:config ] ||
	fail "JSON rpc_probes is '$(json_get "$T/out-8203.json" 'j.get("rpc_probes")')', not 'off:config'"
[ "$(grep -c "RPC: rpc_probes = no: the jobs' RPCs are not counted" "$T/ioacctd.log")" = 1 ] ||
	fail "the daemon did not say once that rpc_probes = no: $(grep 'RPC' "$T/ioacctd.log")"
[ "$(grep -c "$said" "$T/ioacctd.log")" = 1 ] ||
	fail "with rpc_probes = no the daemon tried the probes: $(grep 'RPC' "$T/ioacctd.log")"
ok "rpc_probes = no: rpc=off:config, JSON off:config, said once, nothing loaded"
