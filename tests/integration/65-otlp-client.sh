#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The OTLP client (issue 37), libcurl under iotrace --otlp and ioacctd's spans,
# against collectors started here (otlp_collector.py), every body decoded with
# the OpenTelemetry project's own schema, strictly (a string that is not UTF-8
# fails, as the OpenTelemetry Collector refuses it):
#  - a collector answering 503 (Retry-After: 1) and then 200: the batch arrives
#    once, sent again no sooner than the Retry-After; one answering 429 to
#    everything: given up after 5 tries, said;
#  - keep-alive: the POSTs of 2,000 writes over one connection;
#  - HTTPS to a collector whose certificate a test CA made here signs: sent with
#    --otlp-ca, refused for the certificate without it;
#  - the proxy of http_proxy: the POST goes through it;
#  - a file name with the byte 0xff: valid UTF-8 at the collector (U+FFFD), its
#    exact bytes in ioacct.file.path_raw; from iotrace, and from ioacctd's
#    spans of a job (iorun --spans) over HTTPS with otlp_ca_file;
#  - ioacctd refuses a bad otlp_url at start in one line naming the file, the
#    line and the key, and repeats no password.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/otlp.sh"
IOTRACE=$abs_top_builddir/tools/iotrace
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
[ -x "$IOTRACE" ] && [ -x "$IOSEQ" ] && [ -x "$IORUN" ] || fail "iotrace, ioseq or iorun not built"
command -v openssl > /dev/null || skip "openssl is needed to make a test CA (Debian: openssl)"
otlp_require
setup
otlp_schema

trap 'rc=$?; stop_collector; (exit $rc); teardown' EXIT
# The environment's proxies must not take the collector's POSTs here (but in the proxy case).
unset http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

# ---- 503, then 200: the batch once, after the Retry-After ----
start_collector flaky "$T/c1"
"$IOTRACE" --otlp "http://127.0.0.1:$PORT" -- "$IOSEQ" "$T/f" "$T/missing" 2> "$T/flaky.err" ||
	fail "iotrace, collector answering 503 first: exit $? ($(cat "$T/flaky.err"))"
stop_collector
grep -qx "iotrace: 8 spans sent, 0 dropped" "$T/flaky.err" || fail "iotrace said: $(cat "$T/flaky.err")"
decode "$T"/c1/post-*.bin > "$T/flaky.spans" || fail "decoding with the OpenTelemetry schema"
python3 - "$T" <<'PY' || fail "503 then 200: $(cat "$T/c1/posts.log")"
import json, sys
T = sys.argv[1]
posts = [l.split() for l in open(T + "/c1/posts.log")]
assert [p[3] for p in posts] == ["503", "200"], posts
assert float(posts[1][5]) - float(posts[0][5]) >= 0.95, "sent again before its Retry-After"
assert open(T + "/c1/refused-0.bin", "rb").read() == open(T + "/c1/post-0.bin", "rb").read()
sp = [json.loads(l) for l in open(T + "/flaky.spans")]
assert len(sp) == 8 and len({s["spanId"] for s in sp}) == 8, len(sp)
print("retried after %.2f s" % (float(posts[1][5]) - float(posts[0][5])))
PY
ok "503 (Retry-After: 1), then 200: the batch arrives once, sent again after its Retry-After"

start_collector busy "$T/c2"
"$IOTRACE" --otlp "http://127.0.0.1:$PORT" --otlp-timeout 30 -- "$IOSEQ" "$T/f" "$T/missing" \
	2> "$T/busy.err" || fail "iotrace, collector answering 429: exit $? ($(cat "$T/busy.err"))"
stop_collector
grep -qx "iotrace: 0 spans sent, 8 dropped (collector 127.0.0.1:$PORT: answered HTTP 429 5 times)" \
	"$T/busy.err" || fail "iotrace said: $(cat "$T/busy.err")"
[ "$(grep -c ' 429 ' "$T/c2/posts.log")" = 5 ] && [ "$(wc -l < "$T/c2/posts.log")" = 5 ] ||
	fail "POSTs: $(cat "$T/c2/posts.log")"
ok "429 to everything: 5 tries, then the batch is dropped and said"

# ---- keep-alive: every POST of a long trace over one connection ----
start_collector ok "$T/c3"
"$IOTRACE" --otlp "http://127.0.0.1:$PORT" -- "$IOSEQ" -n 2000 "$T/g" 2> "$T/many.err" ||
	fail "iotrace of 2000 writes: exit $? ($(cat "$T/many.err"))"
stop_collector
grep -qx "iotrace: 2003 spans sent, 0 dropped" "$T/many.err" || fail "iotrace said: $(cat "$T/many.err")"
python3 - "$T" <<'PY' || fail "keep-alive: $(cat "$T/c3/posts.log")"
import sys
posts = [l.split() for l in open(sys.argv[1] + "/c3/posts.log")]
assert len(posts) >= 2, "%d POSTs for 2003 spans" % len(posts)
assert len({p[4] for p in posts}) == 1, "connections (client ports): %s" % {p[4] for p in posts}
print("%d POSTs, one connection" % len(posts))
PY
ok "keep-alive: the POSTs of 2003 spans over one connection"

# ---- HTTPS, a test CA ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj "/CN=ioacct test CA" -addext "basicConstraints=critical,CA:TRUE" \
	-addext "keyUsage=critical,keyCertSign" -keyout "$T/ca.key" -out "$T/ca.pem" \
	> "$T/openssl.log" 2>&1 &&
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
	-keyout "$T/srv.key" -out "$T/srv.csr" >> "$T/openssl.log" 2>&1 &&
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$T/srv.ext" &&
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
	-extfile "$T/srv.ext" -out "$T/srv.pem" >> "$T/openssl.log" 2>&1 ||
	fail "openssl could not make the test CA: $(cat "$T/openssl.log")"
start_collector ok "$T/c4" "$T/srv.pem" "$T/srv.key"
"$IOTRACE" --otlp "https://127.0.0.1:$PORT" --otlp-ca "$T/ca.pem" -- "$IOSEQ" "$T/f" "$T/missing" \
	2> "$T/tls.err" || fail "iotrace over HTTPS: exit $? ($(cat "$T/tls.err"))"
grep -qx "iotrace: 8 spans sent, 0 dropped" "$T/tls.err" || fail "over HTTPS: $(cat "$T/tls.err")"
decode "$T"/c4/post-*.bin > "$T/tls.spans" || fail "decoding"
[ "$(wc -l < "$T/tls.spans")" = 8 ] || fail "$(wc -l < "$T/tls.spans") spans over HTTPS"
"$IOTRACE" --otlp "https://127.0.0.1:$PORT" -- "$IOSEQ" "$T/f" "$T/missing" 2> "$T/notls.err" ||
	fail "iotrace, an unknown CA: exit $?"
stop_collector
grep -qE "^iotrace: 0 spans sent, 8 dropped \(collector 127.0.0.1:$PORT: TLS: .*certificate" \
	"$T/notls.err" || fail "without the CA: $(cat "$T/notls.err")"
[ "$(wc -l < "$T/c4/posts.log")" = 1 ] || fail "a POST went without the CA: $(cat "$T/c4/posts.log")"
ok "HTTPS: 8 spans with the test CA; without it the certificate is refused, nothing sent, said"

# ---- the proxy of http_proxy ----
start_collector ok "$T/c5"
http_proxy=http://127.0.0.1:$PORT "$IOTRACE" --otlp http://otlp.invalid:4318 -- "$IOSEQ" "$T/f" \
	"$T/missing" 2> "$T/proxy.err" || fail "iotrace through a proxy: exit $? ($(cat "$T/proxy.err"))"
stop_collector
grep -qx "iotrace: 8 spans sent, 0 dropped" "$T/proxy.err" || fail "proxy: $(cat "$T/proxy.err")"
grep -q "^http://otlp.invalid:4318/v1/traces application/x-protobuf " "$T/c5/posts.log" ||
	fail "the proxy got: $(cat "$T/c5/posts.log")"
ok "http_proxy: the POST goes through the proxy"

# ---- a name that is not UTF-8: from iotrace ----
BAD=$(printf '%s/bad\377name' "$T")
start_collector ok "$T/c6"
"$IOTRACE" --otlp "http://127.0.0.1:$PORT" -- "$IOSEQ" "$BAD" "$T/missing" 2> "$T/utf8.err" ||
	fail "iotrace, a file name with 0xff: exit $? ($(cat "$T/utf8.err"))"
stop_collector
grep -qx "iotrace: 8 spans sent, 0 dropped" "$T/utf8.err" || fail "iotrace said: $(cat "$T/utf8.err")"
decode "$T"/c6/post-*.bin > "$T/utf8.spans" ||
	fail "the spans of a file named with 0xff do not decode strictly (not UTF-8)"
python3 - "$T" "$BAD" <<'PY' || fail "a file name with 0xff"
import json, os, sys
T, bad = sys.argv[1], os.fsencode(sys.argv[2])
sp = [json.loads(l) for l in open(T + "/utf8.spans")]
f = [s for s in sp if s["attributes"].get("file.path", "").startswith(T + "/bad")]
assert len(f) == 6, [s["attributes"].get("file.path") for s in sp]
for s in f:
    assert s["attributes"]["file.path"] == bad.decode("utf-8", "replace"), s["attributes"]
    assert s["attributes"]["ioacct.file.path_raw"] == {"bytes": bad.hex()}, s["attributes"]
m = [s for s in sp if s["attributes"].get("file.path") == T + "/missing"]
assert len(m) == 1 and "ioacct.file.path_raw" not in m[0]["attributes"], m
PY
ok "iotrace: a file name with 0xff as valid UTF-8 (U+FFFD), its bytes in ioacct.file.path_raw"

# ---- ... and from ioacctd's spans of a job, over HTTPS with otlp_ca_file ----
start_collector ok "$T/c7" "$T/srv.pem" "$T/srv.key"
printf 'otlp_url = https://127.0.0.1:%s\notlp_ca_file = %s\n' "$PORT" "$T/ca.pem" >> "$CONF"
start_daemon
"$IORUN" --spans --job-id 6501 -o /dev/null -- "$IOSEQ" "$BAD" "$T/missing" 2> "$T/job.err" ||
	fail "iorun --spans: exit $? ($(cat "$T/job.err"))"
wait_log "job iorun/6501: spans: [0-9]+ spans sent, 0 dropped"
stop_collector
decode "$T"/c7/post-*.bin > "$T/job.spans" || fail "the job's spans do not decode strictly"
python3 - "$T" "$BAD" <<'PY' || fail "the job's spans of a file named with 0xff"
import json, os, sys
T, bad = sys.argv[1], os.fsencode(sys.argv[2])
sp = [json.loads(l) for l in open(T + "/job.spans")]
f = [s for s in sp if s["attributes"].get("file.path", "").startswith(T + "/bad")]
assert len(f) == 6, [(s["name"], s["attributes"].get("file.path")) for s in sp]
assert all(s["attributes"]["ioacct.file.path_raw"] == {"bytes": bad.hex()} for s in f), f[0]
assert all(s["attributes"]["file.path"] == bad.decode("utf-8", "replace") for s in f), f[0]
assert all(s["attributes"]["ioacct.job"] == "6501" for s in f)
PY
stop_daemon
ok "ioacctd: a job's spans over HTTPS (otlp_ca_file), the 0xff name as valid UTF-8 and raw bytes"

# ---- otlp_url refused at start: the file, the line, the key ----
for bad in 'http://127.0.0.1:99999|port 99999 is out of range (1 .. 65535)' \
	"http://[::1|no ']' after the IPv6 address" \
	'https://ioacct:s3cret@otel.example:4318|a user or password in the URL is not allowed'; do
	url=${bad%%|*}
	printf '# a comment\notlp_url = %s\n' "$url" > "$T/bad.conf"
	"$IOACCTD" -f -c "$T/bad.conf" > "$T/bad.out" 2>&1; rc=$?
	[ $rc = 2 ] && [ "$(wc -l < "$T/bad.out")" = 1 ] &&
		[[ "$(cat "$T/bad.out")" == "ioacctd: $T/bad.conf:2: otlp_url: not a valid URL: ${bad#*|}"* ]] ||
		fail "otlp_url = $url: exit $rc, said: $(cat "$T/bad.out")"
	! grep -q s3cret "$T/bad.out" || fail "the password was repeated: $(cat "$T/bad.out")"
done
ok "ioacctd refuses a bad otlp_url at start: one line with the file, line and key"
