#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile names through every output (issue 24). A job whose name (iorun's
# command), working directory and mount paths carry a newline followed by a
# forged "total_POSIX_BYTES_WRITTEN" line, CR, a terminal escape, BEL, markup
# that would set the page's title, quotes and a byte that is not UTF-8, and a
# FUSE mount (bindfs) whose fs type is fuse.<svg/onload=...>. While it runs,
# promtool accepts /metrics and a real Prometheus scrapes the node as up with
# the names as label values with U+FFFD for the bytes that are not UTF-8 and
# for control characters (no CR, ESC or BEL on the page). After it: the text reports
# (iorun's, ioreport's) have no control byte and no forged line, the JSON
# parses and holds the names U+FFFD-substituted, and the HTML report opened in
# headless Chromium has no element, handler or title from a name.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
for p in prometheus promtool curl chromium bindfs fusermount unshare; do
	command -v $p >/dev/null ||
		skip "$p is not installed (Debian: apt-get install prometheus curl chromium bindfs fuse util-linux)"
done
[ -c /dev/fuse ] || skip "no /dev/fuse: the hostile fs type needs a FUSE mount"
unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
MPORT=$(free_port)
PPORT=$(free_port)
[ "$MPORT" != "$PPORT" ] || PPORT=$(free_port)
EXTRA_CONF="metrics_listen = 127.0.0.1:$MPORT"
setup
cleanup() {
	local rc=$?
	exec 3>&-
	[ -n "${IORUN_JOB:-}" ] && wait "$IORUN_JOB" 2>/dev/null
	stop_prometheus $rc
	(exit $rc)
	teardown
}
trap cleanup EXIT
start_daemon
M=http://127.0.0.1:$MPORT/metrics
P=http://127.0.0.1:$PPORT

# The hostile bytes (their '/' makes directories in a path), and a fs type.
H=$(printf "x\ntotal_POSIX_BYTES_WRITTEN: 999999999999\n# y\r\033[31m\a<script>document.title='PWNED'</script><img src=x onerror=document.title='PWNED'>\"'&\377")
ST=$(printf "x<svg/onload=document.title='PWNED'>\377")
# The working directory: the bytes, then an <svg/onload=...> across two of its components.
W="$T/w$H/<svg/onload=document.title='PWNED'>"
mkdir -p "$W/m" "$W/f" "$T/fsrc"
# The job's name is iorun's command as given: ./sh under a hostile name.
mkdir -p "$(dirname "$W/sh$H")"
ln -s /bin/sh "$W/sh$H"
cat > "$T/job.sh" <<'SH'
set -e
mount -t tmpfs -o size=16m ioacct-test "$1/m"
bindfs -o "subtype=$2" "$3" "$1/f"
trap 'fusermount -u "$1/f"' EXIT
"$4" write "$1/m/data" 65536 10 , write "$1/f/data" 4096 10 , wait
SH
export H ST W
JOB=2900
mkfifo "$T/go"
# The registered task, that shell, stays in the host's mount namespace (as in 16-mntns.sh).
( cd "$W" && "$IORUN" --job-id $JOB --bin-width 0.5 -- "./sh$H" -c \
	'unshare -m --propagation private /bin/sh "$0" "$@"; exit $?' \
	"$T/job.sh" "$W" "$ST" "$T/fsrc" "$IOWORK" < "$T/go" > "$T/iorun.out" 2> "$T/iorun.txt"
  echo $? > "$T/iorun.rc" ) &
IORUN_JOB=$!
# The job waits (iowork's wait) until a byte arrives here.
exec 3> "$T/go"

# python3 -c over the environment: the names as bytes, and what U+FFFD substitution makes of them.
PYNAMES='import json, os, sys
H = os.environb[b"H"]; ST = os.environb[b"ST"]; W = os.environb[b"W"]
u = lambda b: b.decode("utf-8", "replace")'

# /metrics while the job runs: both mounts' writes, whole. (A label value
# may hold a CR: lines are split at \n only, as the format does.)
seen=
for _ in $(seq 1 600); do
	curl -sf "$M" -o "$T/live.prom" && python3 -c "$PYNAMES"'
p = open(sys.argv[1], "rb").read().decode("utf-8", "replace").split("\n")
f = [l for l in p if l.startswith("ioacct_write_bytes_total{") and "fstype=\"fuse." in l]
m = [l for l in p if l.startswith("ioacct_write_bytes_total{") and "fstype=\"tmpfs\"" in l]
sys.exit(0 if f and f[0].endswith(" 40960") and m and m[0].endswith(" 655360") else 1)' "$T/live.prom" &&
		seen=1 && break
	[ -f "$T/iorun.rc" ] && { cat "$T/iorun.txt"; fail "the job ended before it was seen"; }
	sleep 0.2
done
[ -n "$seen" ] || { grep -a '^ioacct_write_bytes' "$T/live.prom"; fail "/metrics never had the job's writes on both mounts"; }
python3 -c "$PYNAMES"'
p = open(sys.argv[1], "rb").read()
p.decode("utf-8")  # raises: the page must be UTF-8 whole
import re
bad = re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", p)
assert not bad, "control characters in the page: %r" % bad[:5]
# C0 (but the newline, which the format escapes), DEL and C1 are U+FFFD in label values.
ctl = lambda t: "".join("\ufffd" if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0
                        else c for c in t)
fuse = ctl(u(b"fuse." + ST)).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")
path = ctl(u(W + b"/f")).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")
s = p.decode()
assert ("fstype=\"%s\"" % fuse) in s, "no fstype label %r" % fuse
assert ("mount=\"%s\"" % path) in s, "no mount label %r" % path
' "$T/live.prom" || { grep -a '^ioacct_write_bytes' "$T/live.prom"; fail "/metrics lacks the job's mounts or is not UTF-8"; }
ok "/metrics: the job's mounts labelled, U+FFFD for the bytes that are not UTF-8 and for" \
	"control characters (no CR, ESC or BEL in the page)"
promtool check metrics < "$T/live.prom" > "$T/promtool.out" 2>&1 ||
	{ cat "$T/promtool.out"; fail "promtool check metrics refuses the exposition"; }
ok "promtool check metrics accepts it"

start_prometheus "$MPORT" "$PPORT"
# Three scrapes while the job runs: each must find the node up.
for _ in $(seq 1 600); do
	n=$(curl -sf "$P/api/v1/query" --data-urlencode "query=count_over_time(up[1m])" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
	[ "${n:-0}" -ge 3 ] && break
	sleep 0.2
done
[ "${n:-0}" -ge 3 ] || fail "Prometheus made no 3 scrapes in 2 minutes"
curl -sf "$P/api/v1/targets" -o "$T/targets.json" || fail "no /api/v1/targets"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["data"]["activeTargets"]
assert len(t) == 1 and t[0]["health"] == "up" and not t[0]["lastError"], t
' "$T/targets.json" || fail "Prometheus: the target is not up: $(cat "$T/targets.json")"
down=$(curl -sf "$P/api/v1/query" --data-urlencode "query=min_over_time(up[1m])" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
[ "$down" = 1 ] || fail "Prometheus found the node down in some scrape (min of up: $down)"
curl -sf "$P/api/v1/query" --data-urlencode "query=ioacct_write_bytes_total{job_id=\"$JOB\"}" \
	-o "$T/query.json" || fail "query of the job's series failed"
python3 -c "$PYNAMES"'
r = json.load(open(sys.argv[1]))["data"]["result"]
got = {(x["metric"]["mount"], x["metric"]["fstype"]): x["value"][1] for x in r}
ctl = lambda t: "".join("\ufffd" if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0
                        else c for c in t)
want = {(ctl(u(W + b"/f")), ctl(u(b"fuse." + ST))): "40960", (ctl(u(W + b"/m")), "tmpfs"): "655360"}
for k, v in want.items():
    assert got.get(k) == v, "%r: %r, not %r (have %r)" % (k, got.get(k), v, got)
' "$T/query.json" || fail "Prometheus lacks the job's series with its names"
ok "Prometheus scraped the node up throughout, with the hostile names as label values"

echo go >&3
exec 3>&-
wait "$IORUN_JOB"
IORUN_JOB=
[ "$(cat "$T/iorun.rc")" = 0 ] || { cat "$T/iorun.txt"; fail "iorun failed ($(cat "$T/iorun.rc"))"; }

for fmt in text json html; do
	"$IOREPORT" --format $fmt -o "$T/report.$fmt" $JOB || fail "ioreport --format $fmt $JOB failed"
done

# A text report: only \n and \t of the control characters, UTF-8, the
# names there escaped, no forged line, one total_POSIX_BYTES_WRITTEN per mount.
check_text() {
	python3 -c "$PYNAMES"'
t = open(sys.argv[1], "rb").read()
bad = [(i, c) for i, c in enumerate(t) if (c < 0x20 and c not in b"\n\t") or c == 0x7f]
assert not bad, "control bytes at %r" % bad[:5]
s = t.decode("utf-8")
assert not any(0x80 <= ord(c) < 0xa0 for c in s), "a C1 control character"
lines = s.split("\n")
assert "# y" not in lines, "a forged \"# y\" line"
assert not [l for l in lines if l.startswith("total_POSIX_BYTES_WRITTEN: 999999999999")], "a forged total line"
mounts = [l for l in lines if l.startswith("# mount: ")]
totals = [l for l in lines if l.startswith("total_POSIX_BYTES_WRITTEN:")]
assert len(mounts) >= 2 and len(totals) == len(mounts), (mounts, totals)
esc = "x\\ntotal_POSIX_BYTES_WRITTEN: 999999999999\\n# y\\r\\x1b[31m\\x07<script>"
assert ("./sh" + esc) in s, "the job name is not there, escaped"
assert ("\tfuse." + u(ST) + "\t") in s, "the fs type is not there"
assert s.count(esc) >= 4, "the names are not there, escaped"
' "$1" || fail "$1: a name forged or broke the text"
}
check_text "$T/iorun.txt"
check_text "$T/report.text"
ok "text reports of iorun and ioreport: no control byte, no forged line, the names escaped"

python3 -c "$PYNAMES"'
j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert j["name"] == u(b"./sh" + H), (j["name"], u(b"./sh" + H))
assert j["workdir"] == u(W), j["workdir"]
got = {m["mount"]: m["fs_type"] for m in j["mounts"]}
assert got.get(u(W + b"/m")) == "tmpfs" and got.get(u(W + b"/f")) == u(b"fuse." + ST), got
' "$T/report.json" || fail "the JSON report does not hold the names"
ok "JSON parses and holds the names, U+FFFD for the bytes that are not UTF-8"

# The HTML page in a real browser: the DOM after its scripts (if any) ran.
timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
	--virtual-time-budget=3000 --dump-dom "file://$T/report.html" > "$T/dom.html" 2> "$T/chromium.log" ||
	{ tail -n 20 "$T/chromium.log"; fail "chromium could not open the report"; }
python3 -c "$PYNAMES"'
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.bad, self.tags, self.title, self.text, self.where = [], set(), None, [], []
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.where.append(tag)
        if tag in ("script", "img", "iframe", "object", "embed"):
            self.bad.append(tag)
        self.bad += ["%s %s" % (tag, a) for a, v in attrs if a.startswith("on")]
    def handle_endtag(self, tag):
        if self.where and self.where[-1] == tag:
            self.where.pop()
    def handle_data(self, d):
        if self.where and self.where[-1] == "title" and self.title is None:
            self.title = d
        self.text.append(d)
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
assert "table" in p.tags and "svg" in p.tags, "the page did not render: %r" % p.tags
assert not p.bad, "elements or handlers from a name: %r" % p.bad
assert p.title and p.title.startswith("I/O report: job 2900 "), "the title is %r" % p.title
text = "".join(p.text)
assert "<svg/onload=document.title=" in text and "fuse.x<svg/onload=" in text, "the names are not shown as text"
' "$T/dom.html" || fail "the HTML report, as Chromium built it, has markup from a name"
ok "HTML in headless Chromium: no element, handler or title from a name; the names shown as text"
