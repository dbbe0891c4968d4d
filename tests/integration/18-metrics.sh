#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# /metrics with a real Prometheus: a job writes 20 MiB over ~20 s while
# Prometheus scrapes ioacctd every second, and ioacctd is restarted in the
# middle. The last value Prometheus holds equals the bytes written and the
# store's total, the counter never went back (resets() is 0), and it was live
# (values in between). promtool accepts the exposition; the Grafana dashboard
# is valid JSON whose queries name only exported metrics and parse in PromQL.
# Then HTTPS with basic authentication.
. "$(dirname "$0")/lib.sh"
require_root_bpf
for p in prometheus promtool curl openssl; do
	command -v $p >/dev/null || skip "$p is not installed (Debian: apt-get install prometheus curl openssl)"
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DASH=$SRC/etc/grafana/ioacct-job.json
[ -f "$DASH" ] || fail "$DASH is missing"

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
MPORT=$(free_port)
PPORT=$(free_port)
[ "$MPORT" != "$PPORT" ] || PPORT=$(free_port)
EXTRA_CONF="metrics_listen = 127.0.0.1:$MPORT
metrics_linger = 300"
setup
cleanup() {
	local rc=$?
	stop_prometheus $rc
	rm -rf "$PIN-other" 2>/dev/null
	(exit $rc)
	teardown
}
trap cleanup EXIT
start_daemon
M=http://127.0.0.1:$MPORT/metrics
P=http://127.0.0.1:$PPORT

wait_metrics() {
	for _ in $(seq 1 100); do
		curl -sf "$M" -o "$1" && return 0
		sleep 0.1
	done
	fail "no /metrics on 127.0.0.1:$MPORT"
}
wait_metrics "$T/idle.prom"
grep -q '^ioacct_up 1$' "$T/idle.prom" || fail "ioacct_up 1 missing"
grep -q '^ioacct_jobs_watched 0$' "$T/idle.prom" || fail "ioacct_jobs_watched 0 missing"
grep -q '^ioacct_write_bytes_total{' "$T/idle.prom" && fail "series with no job running"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/other")
[ "$code" = 404 ] || fail "GET /other: HTTP $code, expected 404"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$M")
[ "$code" = 405 ] || fail "POST /metrics: HTTP $code, expected 405"
ok "/metrics served, no job series when idle, 404 and 405 elsewhere"

# A second daemon on the same address says why it cannot start.
cat "$CONF" > "$T/other.conf"
sed -i "s|^socket = .*|socket = $T/other.sock|; s|^pidfile = .*|pidfile = $T/other.pid|; s|^db = .*|db = $T/other.db|; s|^bpf_pin_dir = .*|bpf_pin_dir = $PIN-other|" "$T/other.conf"
if "$IOACCTD" -f -c "$T/other.conf" > "$T/other.log" 2>&1; then
	fail "a second ioacctd started on the same metrics_listen"
fi
grep -q "cannot serve /metrics on 127.0.0.1:$MPORT" "$T/other.log" ||
	{ cat "$T/other.log"; fail "no clear message for a metrics address in use"; }
ok "an address in use is refused with a clear message"

start_prometheus "$MPORT" "$PPORT"

# promql QUERY: the result vector as JSON on stdout.
promql() {
	curl -sf "$P/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["status"]=="success", r; print(json.dumps(r["data"]["result"]))'
}
# scalar QUERY: the single value of a one-element result, or "none".
scalar() {
	promql "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["value"][1] if len(r)==1 else "none")'
}

D=$T/data
mkdir -p "$D"
MNT=$(mount_of "$D")
WORK=()
for i in $(seq 1 20); do
	WORK+=(write "$D/w$i" 1048576 1 , sleep 1 ,)
done
# Then it waits for a byte on $T/go: the job does not end before the daemon is back,
# however long its restart takes on a loaded machine.
WORK+=(wait)
mkfifo "$T/go"
( "$IORUN" --json -o "$T/out.json" -- "$IOWORK" "${WORK[@]}" < "$T/go" > "$T/iorun.out" 2>&1
  echo $? > "$T/iorun.rc" ) &
IORUN_JOB=$!
exec {GO}> "$T/go"

# While it runs: the job's series appear, and promtool accepts them.
for _ in $(seq 1 100); do
	curl -sf "$M" -o "$T/live.prom"
	grep -q '^ioacct_write_bytes_total{.*mount="'"$MNT"'"' "$T/live.prom" && break
	sleep 0.1
done
grep -q '^ioacct_jobs_watched 1$' "$T/live.prom" || fail "ioacct_jobs_watched is not 1 during the job"
promtool check metrics < "$T/live.prom" > "$T/promtool.out" 2>&1 ||
	{ cat "$T/promtool.out"; fail "promtool check metrics refuses the exposition"; }
ok "promtool check metrics accepts the exposition of a running job"
JOB=$(sed -n 's/^ioacct_job_running{.*job_id="\([0-9]*\)".*} 1$/\1/p' "$T/live.prom" | head -n 1)
[ -n "$JOB" ] || fail "no ioacct_job_running 1 for the job"

# Halfway: restart the daemon; counting goes on in the kernel meanwhile.
sleep 8
stop_daemon
sleep 2
start_daemon
wait_metrics "$T/restarted.prom"
ok "daemon restarted during the job"
printf x >&"$GO"
exec {GO}>&-
wait "$IORUN_JOB"
[ "$(cat "$T/iorun.rc")" = 0 ] || { cat "$T/iorun.out"; fail "iorun failed"; }

SEL="cluster=\"iorun\",job_id=\"$JOB\",mount=\"$MNT\""
# Prometheus has the final counts once it scraped the job as ended.
for _ in $(seq 1 300); do
	[ "$(scalar "max_over_time(ioacct_job_running{cluster=\"iorun\",job_id=\"$JOB\"}[10m]) - ioacct_job_running{cluster=\"iorun\",job_id=\"$JOB\"}")" = 1 ] && break
	sleep 0.1
done
[ "$(scalar "ioacct_job_running{cluster=\"iorun\",job_id=\"$JOB\"}")" = 0 ] ||
	fail "Prometheus never scraped the job as ended (linger)"

stored=$(json_get "$T/out.json" "[m['write_bytes'] for m in j['mounts'] if m['mount'] == '$MNT'][0]")
[ "$stored" = 20971520 ] || { cat "$T/out.json"; fail "the store says $stored bytes written, not 20971520"; }
last=$(scalar "last_over_time(ioacct_write_bytes_total{$SEL}[10m])")
[ "$last" = 20971520 ] || fail "Prometheus' last ioacct_write_bytes_total is $last, wrote 20971520 (store: $stored)"
ok "Prometheus' last value = bytes written = the store's: $last"
resets=$(scalar "resets(ioacct_write_bytes_total{$SEL}[10m])")
[ "$resets" = 0 ] || fail "the counter went back $resets times (daemon restart)"
between=$(curl -sf "$P/api/v1/query" --data-urlencode "query=ioacct_write_bytes_total{$SEL}[10m]" |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; v={int(x[1]) for x in r[0]["values"]}; print(len([x for x in v if 0 < x < 20971520]))')
[ "$between" -ge 2 ] || fail "only $between values between 0 and the total: not live"
ok "monotonic across the restart, $between live values on the way"
calls=$(scalar "ioacct_calls_total{$SEL,op=\"write\"}")
[ "$calls" = 20 ] || fail "ioacct_calls_total for write is $calls, made 20"
b1=$(scalar "ioacct_request_size_bytes_bucket{$SEL,op=\"write\",le=\"1048576\"}")
b0=$(scalar "ioacct_request_size_bytes_bucket{$SEL,op=\"write\",le=\"102400\"}")
sum=$(scalar "ioacct_request_size_bytes_sum{$SEL,op=\"write\"}")
[ "$b1" = 20 ] && [ "$b0" = 0 ] && [ "$sum" = 20971520 ] ||
	fail "size histogram: le=1048576 $b1 (want 20), le=102400 $b0 (want 0), sum $sum"
ok "calls and size histogram exact"
curl -sf "$M" -o "$T/ended.prom"
promtool check metrics < "$T/ended.prom" > "$T/promtool.out" 2>&1 ||
	{ cat "$T/promtool.out"; fail "promtool check metrics refuses the exposition after the job"; }

# The dashboard: valid JSON, every query names exported metrics only and parses.
python3 - "$DASH" "$T/ended.prom" "$P" <<'PY' || fail "the Grafana dashboard does not match /metrics"
import json, re, sys, urllib.parse, urllib.request
dash = json.load(open(sys.argv[1]))
exported = set()
for line in open(sys.argv[2]):
    m = re.match(r"# TYPE (\S+) (\S+)", line)
    if m:
        exported.add(m.group(1))
        if m.group(2) == "histogram":
            exported |= {m.group(1) + s for s in ("_bucket", "_sum", "_count")}
exprs = []
def walk(o):
    if isinstance(o, dict):
        if o.get("type") == "datasource":
            return
        for k, v in o.items():
            if k in ("expr", "query", "definition") and isinstance(v, str) and v:
                exprs.append(v)
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(dash)
bad = []
if len(exprs) < 5:
    bad.append(f"only {len(exprs)} queries")
for e in set(exprs):
    names = set(re.findall(r"\bioacct_[a-z0-9_]+", e))
    if not names:
        bad.append(f"names no ioacct metric: {e}")
    for n in names - exported:
        bad.append(f"{n} is not exported (in {e})")
    if e.startswith("label_values("):
        continue
    q = re.sub(r"\$__(rate_)?interval|\$__range", "1m", e)
    q = re.sub(r"\$\{?[a-z_]+(:[a-z]+)?\}?", ".*", q)
    url = sys.argv[3] + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        r = json.load(urllib.request.urlopen(url))
    except Exception as ex:
        bad.append(f"PromQL refused ({ex}): {q}")
        continue
    if r.get("status") != "success":
        bad.append(f"PromQL refused: {q}")
for b in bad:
    print("dashboard:", b)
print(f"{len(set(exprs))} queries checked against {len(exported)} exported names")
sys.exit(1 if bad else 0)
PY
ok "Grafana dashboard: valid JSON, queries name exported metrics and parse"

# HTTPS and basic authentication (metrics_tls_cert, metrics_tls_key, metrics_auth_file).
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 > "$T/openssl.log" 2>&1 ||
	{ cat "$T/openssl.log"; fail "openssl could not make a test certificate"; }
printf '# scrapers\n\nscraper:%s\n' "$(openssl passwd -6 's3cret pass')" > "$T/metrics.passwd"
# A malformed auth file is refused, with its line.
printf 'scraper:plaintext\n' > "$T/bad.passwd"
cat "$T/other.conf" > "$T/bad.conf"
echo "metrics_auth_file = $T/bad.passwd" >> "$T/bad.conf"
sed -i "s|^metrics_listen = .*|metrics_listen = 127.0.0.1:$(free_port)|" "$T/bad.conf"
"$IOACCTD" -f -c "$T/bad.conf" > "$T/bad.log" 2>&1 && fail "ioacctd started with a bad metrics_auth_file"
grep -q "bad.passwd:1: not \"user:hash\"" "$T/bad.log" || { cat "$T/bad.log"; fail "no clear message for a bad metrics_auth_file"; }
ok "a malformed metrics_auth_file is refused with its line"

stop_daemon
cat >> "$CONF" <<CONF
metrics_tls_cert = $T/cert.pem
metrics_tls_key = $T/key.pem
metrics_auth_file = $T/metrics.passwd
CONF
start_daemon
S=https://127.0.0.1:$MPORT/metrics
status() { curl -s --cacert "$T/cert.pem" -o "$T/tls.out" -w '%{http_code}' "$@"; }
for _ in $(seq 1 100); do
	[ "$(status -u 'scraper:s3cret pass' "$S")" = 200 ] && break
	sleep 0.1
done
[ "$(status -u 'scraper:s3cret pass' "$S")" = 200 ] || fail "HTTPS with the right password: not 200"
grep -q '^ioacct_up 1$' "$T/tls.out" || fail "ioacct_up 1 missing over HTTPS"
promtool check metrics < "$T/tls.out" > "$T/promtool.out" 2>&1 ||
	{ cat "$T/promtool.out"; fail "promtool check metrics refuses the HTTPS exposition"; }
for cred in "" "scraper:wrong" "other:s3cret pass" "scraper:"; do
	if [ -n "$cred" ]; then code=$(status -u "$cred" "$S"); else code=$(status "$S"); fi
	[ "$code" = 401 ] || fail "HTTPS with credentials '$cred': HTTP $code, expected 401"
	grep -q '^ioacct_' "$T/tls.out" && fail "counters given with credentials '$cred'"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics")
[ "$code" = 200 ] && fail "plain HTTP answered while metrics_tls_cert is set"
ok "HTTPS with basic authentication: 200 with the password, 401 without or with a wrong one"
