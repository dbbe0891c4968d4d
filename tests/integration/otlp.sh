# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# An OTLP/HTTP collector for the tests of spans (46-otlp, 48-spans, 49-mpispans, slurm
# 12-spans), sourced after lib.sh: otlp_collector.py records what it is sent, and the
# OpenTelemetry project's own generated schema (npm @opentelemetry/otlp-transformer)
# decodes it (otlp_decode.js), so that nothing is checked against a schema of ours.
#
#   otlp_require          skips without node and npm
#   otlp_schema           installs the schema into $T/npm (after setup); skips when npm cannot
#   start_collector MODE DIR [CERT KEY]   starts otlp_collector.py MODE (ok, flaky, busy,
#                         hang: see it) recording into DIR, HTTPS with CERT and KEY; sets PORT
#                         and COLL (its pid)
#   stop_collector        stops it (harmless when none runs); call it from the EXIT trap
#   decode FILE...        the recorded requests as spans, one line each (otlp_decode.js);
#                         fails on a string that is not UTF-8, as a strict receiver does
#   wait_log PATTERN      until ioacctd's log has a line matching PATTERN (grep -E; 60 s)
OTLP_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OTLP_SCHEMA=@opentelemetry/otlp-transformer@0.52.1
COLL=

otlp_require() {
	command -v node > /dev/null && command -v npm > /dev/null ||
		skip "node and npm are needed to decode with the OpenTelemetry schema (Debian: nodejs npm)"
}

otlp_schema() {
	npm install --prefix "$T/npm" --no-audit --no-fund --ignore-scripts "$OTLP_SCHEMA" \
		> "$T/npm.log" 2>&1 ||
		skip "npm install $OTLP_SCHEMA failed (no network?): $(tail -n 3 "$T/npm.log")"
}

start_collector() {
	mkdir -p "$2"
	python3 "$OTLP_HERE/otlp_collector.py" "$@" &
	COLL=$!
	for _ in $(seq 1 600); do [ -s "$2/port" ] && break; sleep 0.05; done
	[ -s "$2/port" ] || fail "the collector did not start"
	PORT=$(cat "$2/port")
}

stop_collector() { [ -z "$COLL" ] || { kill "$COLL"; wait "$COLL" 2> /dev/null; COLL=; }; }

decode() { node "$OTLP_HERE/otlp_decode.js" "$T/npm" "$@"; }

wait_log() {
	for _ in $(seq 1 1200); do grep -qE "$1" "$T/ioacctd.log" && return 0; sleep 0.05; done
	fail "ioacctd never logged /$1/"
}
