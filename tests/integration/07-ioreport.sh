#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reports of a real job: iorun prints the text report; ioreport renders the
# stored job as text and JSON whose counters equal the store's totals exactly
# (check_report.py), and as HTML that headless Chromium renders with every
# plot and table. The screenshot is kept for CI as
# tests/integration/ioreport-screenshot.png in the build tree.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
setup
start_daemon

D=$T/root-fs
SHM=/dev/shm/ioacct-test-$$
mkdir -p "$D/files" "$D/dirs"
JOB=4711

"$IORUN" --job-id $JOB --bin-width 0.5 -o "$T/iorun.txt" -- "$IOWORK" \
	write "$D/big" 4096 2000 , \
	fsync "$D/big" 300 , \
	read "$D/big" 65536 100 , \
	stat "$D/big" 500 , \
	create "$D/files" 50 , \
	rename "$D/files" 50 , \
	mkdir "$D/dirs" 5 , \
	rmdir "$D/dirs" 5 , \
	missing "$D" 3 , \
	sleep 1.2 , \
	pwrite "$SHM" 65536 200 | cat || fail "iorun failed"
[ "$(head -1 "$T/iorun.txt")" = '# ioacct report version: 3' ] || { cat "$T/iorun.txt"; fail "iorun did not print the report"; }
# A person reads the summary first; the Darshan-named counters come last.
[ "$(sed -n 3p "$T/iorun.txt")" = '## Summary' ] || fail "the report does not start with its summary"
sect=$(grep '^## ' "$T/iorun.txt" | tail -1)
case $sect in "## Darshan-named counters, for comparison with \`darshan-parser --total\`"*) ;;
*) fail "the last section is not the Darshan-named counters: $sect" ;; esac
[ "$(grep -n '^total_POSIX_OPENS' "$T/iorun.txt" | head -1 | cut -d: -f1)" -gt \
  "$(grep -n '^## Advice' "$T/iorun.txt" | cut -d: -f1)" ] || fail "Darshan counters before the advice"
grep -q "^# jobid: $JOB\$" "$T/iorun.txt" || fail "iorun's report lacks the job id"
grep -q '^## Advice' "$T/iorun.txt" || fail "iorun's report lacks the advice"
ok "iorun prints the text report"

"$IOREPORT" $JOB > "$T/report.txt" || fail "ioreport (text) failed"
cmp -s "$T/report.txt" "$T/iorun.txt" || { diff "$T/iorun.txt" "$T/report.txt"; fail "iorun and ioreport disagree"; }
"$IOREPORT" --format json -o "$T/report.json" $JOB || fail "ioreport (json) failed"
python3 "$(dirname "$0")/check_report.py" "$T/ioacct.db" iorun $JOB "$T/report.txt" "$T/report.json" ||
	{ cat "$T/report.txt"; fail "report counters differ from the store"; }
ok "text and JSON counters equal the stored totals"

ROOTMNT=$(mount_of "$D")
grep -A3 '^## Advice' "$T/report.txt"
grep -Eq "^HIGH small-requests: $ROOTMNT: 2000 of 2000 write requests" "$T/report.txt" ||
	fail "small writes not advised on"
grep -Eq "^WARN fsync-storm: $ROOTMNT: 300 fsync calls for 2000 write calls" "$T/report.txt" ||
	fail "fsync storm not advised on"
ok "advice on small writes and fsyncs"

"$IOREPORT" --mount "$ROOTMNT" $JOB > "$T/one.txt" || fail "ioreport --mount failed"
[ "$(grep -c '^# mount: ' "$T/one.txt")" = 1 ] || fail "--mount kept other mounts"
grep -q "^total_POSIX_WRITES: 2000\$" "$T/one.txt" || fail "--mount: wrong counters"
ok "--mount keeps one mount, ready to diff with darshan-parser --total"

# Usage errors and missing jobs.
rc=0; "$IOREPORT" 999999 2> "$T/err" || rc=$?
[ $rc = 1 ] && grep -q "no job 999999" "$T/err" || fail "missing job: exit $rc, $(cat "$T/err")"
rc=0; "$IOREPORT" --format pdf $JOB 2> "$T/err" || rc=$?
[ $rc = 2 ] || fail "bad format: exit $rc"
rc=0; "$IOREPORT" --mount /nowhere $JOB 2> "$T/err" || rc=$?
[ $rc = 1 ] && grep -q "did no I/O on /nowhere" "$T/err" || fail "unknown mount: exit $rc"
ok "errors: missing job 1, bad usage 2"

"$IOREPORT" --format html -o "$T/report.html" $JOB || fail "ioreport (html) failed"
grep -q '<script' "$T/report.html" && fail "the page has a script"
grep -Eq '(src|href)=' "$T/report.html" && fail "the page loads something"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium not installed (apt-get install chromium): HTML not rendered; text and JSON checks passed"
SHOT=$abs_top_builddir/tests/integration/ioreport-screenshot.png
rm -f "$SHOT"
chrome() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@" "file://$T/report.html"
}
chrome --dump-dom > "$T/dom.html" 2> "$T/chrome.log" || { tail "$T/chrome.log"; fail "chromium --dump-dom failed"; }
for id in summary job-table advice mounts-table rates-table bw-0 bw-1 iops-0 iops-1 sizes-chart \
	sizes-table ops-chart ops-table errors-table errors-card time-chart time-table steps-table series-table \
	counters; do
	grep -q "id=\"$id\"" "$T/dom.html" || fail "the rendered page lacks #$id"
done
[ "$(grep -o '<path d="M' "$T/dom.html" | wc -l)" -ge 4 ] || fail "the plots have no lines"
grep -q 'time since job start (s)' "$T/dom.html" || fail "time axis without its unit"
ok "chromium renders every plot and table"
chrome --screenshot="$SHOT" --window-size=1366,900 >> "$T/chrome.log" 2>&1 ||
	{ tail "$T/chrome.log"; fail "chromium --screenshot failed"; }
python3 - "$SHOT" <<'PY' || fail "bad screenshot $SHOT"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR", "not a PNG"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (1366, 900), f"{w}x{h}"
assert len(d) > 20000, f"{len(d)} bytes: a blank page?"
PY
ok "screenshot kept: $SHOT"
