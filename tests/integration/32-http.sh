#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# /metrics under attack (issue 24), every client on loopback: while a job
# writes 10 MiB, 64 slowloris connections (a header line every 2 s) and then
# 1,000 idle connections do not keep scrapes out (>= 90 % succeed, from
# metrics_priority's address and, under slowloris, from another one); the
# job's bytes stay exact. Garbage requests for 10 s cost the log a few lines.
# SIGTERM under load ends the daemon in seconds. Wrong passwords at full speed
# for 10 s cost little CPU, the right one keeps working from the priority
# address, and from the attacker's once its throttle ends. Refused at start:
# a hash of unbounded cost (sha512crypt rounds=999999999), a FIFO as
# metrics_tls_cert (no hang), private_data = yes without metrics_auth_file.
# Accepted: metrics_listen = [::ffff:127.0.0.1]:PORT.
. "$(dirname "$0")/lib.sh"
require_root_bpf
for p in curl openssl timeout; do
	command -v $p >/dev/null || skip "$p is not installed (Debian: apt-get install curl openssl)"
done
# The clients bind 127.0.0.2 .. 127.0.1.50: all of 127/8 is loopback on Linux.
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.1.50", 0))' 2>/dev/null ||
	skip "cannot bind 127.0.1.50 (127.0.0.0/8 is not all loopback here)"

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
MPORT=$(free_port)
EXTRA_CONF="metrics_listen = 127.0.0.1:$MPORT
metrics_priority = 127.0.0.1
metrics_linger = 300"
setup
BG=()
cleanup() {
	local rc=$?
	for p in "${BG[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$PIN-other" 2>/dev/null
	(exit $rc)
	teardown
}
trap cleanup EXIT
M=http://127.0.0.1:$MPORT/metrics

# The clients. Every loop ends by its deadline; every socket has a timeout.
cat > "$T/client.py" <<'PY'
import base64, resource, socket, sys, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
mode, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
args = sys.argv[4:]
end = time.monotonic() + secs

def conn(src, timeout=3.0):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s

def get(src, auth=None, timeout=3.0):
    """One GET /metrics on a new connection: the status, 0 when it failed."""
    try:
        s = conn(src, timeout)
        h = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        if auth:
            h += "Authorization: Basic " + base64.b64encode(auth.encode()).decode() + "\r\n"
        s.sendall((h + "\r\n").encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        status = int(data.split(b" ", 2)[1])
        if status == 200 and b"\nioacct_up 1\n" not in data:
            return 0
        return status
    except (OSError, ValueError, IndexError):
        return 0

def srcs(spec):
    # "127.0.0.2-5" or "127.0.1.1-50": the last byte ranges
    base, _, rng = spec.rpartition(".")
    lo, _, hi = rng.partition("-")
    return [f"{base}.{i}" for i in range(int(lo), int(hi or lo) + 1)]

if mode == "scrape":          # SRC INTERVAL [USER:PASS]: "ok N of M"
    src, interval = args[0], float(args[1])
    auth = args[2] if len(args) > 2 else None
    ok = n = 0
    while time.monotonic() < end:
        t = time.monotonic()
        n += 1
        ok += get(src, auth) == 200
        time.sleep(max(0, interval - (time.monotonic() - t)))
    print(f"ok {ok} of {n}")
elif mode in ("slowloris", "idle"):   # SRCS N: holds N connections, reopens closed ones
    addrs, want = srcs(args[0]), int(args[1])
    socks = [None] * want
    opened = line = 0
    while time.monotonic() < end:
        for i in range(want):
            if time.monotonic() >= end:
                break
            if socks[i] is None:
                try:
                    socks[i] = conn(addrs[i % len(addrs)], 1.0)
                    opened += 1
                    if mode == "slowloris":
                        socks[i].sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                except OSError:
                    socks[i] = None
            elif mode == "slowloris":
                try:
                    socks[i].sendall(b"X-Slow-%d: x\r\n" % line)
                except OSError:
                    socks[i].close()
                    socks[i] = None
        line += 1
        time.sleep(min(2.0 if mode == "slowloris" else 1.0, max(0, end - time.monotonic())))
        # Closed by the server: noticed here, reopened on the next pass.
        for i in range(want):
            if socks[i] is not None:
                try:
                    socks[i].setblocking(False)
                    if socks[i].recv(4096) == b"":
                        raise OSError
                except BlockingIOError:
                    socks[i].settimeout(1.0)
                    continue
                except OSError:
                    pass
                socks[i].close()
                socks[i] = None
    print(f"opened {opened}")
elif mode == "garbage":       # SRC: bad requests as fast as it can
    n = 0
    junk = [b"\x00\xff garbage\r\n\r\n", b"GET\r\n\r\n", b"GET /metrics HTTP/9.9\r\n\r\n",
            b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * 70000 + b"\r\n\r\n",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64]
    while time.monotonic() < end:
        # Every other one hangs up without waiting for the answer.
        try:
            s = conn(args[0], 1.0)
            s.sendall(junk[n % len(junk)])
            if n % 2:
                s.settimeout(0.2)
                s.recv(4096)
            s.close()
        except OSError:
            pass
        n += 1
    print(f"sent {n}")
elif mode == "brute":         # SRC USER:PASS: wrong passwords, keep-alive, as fast as it can
    src, auth = args[0], args[1]
    h = ("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " +
         base64.b64encode(auth.encode()).decode() + "\r\n\r\n").encode()
    codes = {}
    s = None
    while time.monotonic() < end:
        try:
            if s is None:
                s = conn(src, 3.0)
                f = s.makefile("rb")
            s.sendall(h)
            status = int(f.readline().split(b" ", 2)[1])
            length = 0
            while True:
                l = f.readline()
                if l in (b"\r\n", b""):
                    break
                if l.lower().startswith(b"content-length:"):
                    length = int(l.split(b":")[1])
                if l.lower().startswith(b"connection: close"):
                    length = -1
            if length > 0:
                f.read(length)
            codes[status] = codes.get(status, 0) + 1
            if length < 0:
                raise OSError
        except (OSError, ValueError, IndexError):
            if s is not None:
                s.close()
            s = None
    print(" ".join(f"{k}:{v}" for k, v in sorted(codes.items())))
elif mode == "get":           # SRC [USER:PASS]: one status
    print(get(args[0], args[1] if len(args) > 1 else None))
PY
client() { python3 "$T/client.py" "$1" "$MPORT" "${@:2}"; }

wait_metrics() {
	for _ in $(seq 1 100); do
		curl -sf "$M" -o /dev/null && return 0
		sleep 0.1
	done
	fail "no /metrics on 127.0.0.1:$MPORT"
}
# percent_ok FILE WHAT: fails below 90 % of "ok N of M".
percent_ok() {
	local ok n
	read -r _ ok _ n < "$1"
	[ "${n:-0}" -ge 10 ] || fail "$2: only ${n:-0} scrapes made"
	[ $((ok * 100)) -ge $((n * 90)) ] || fail "$2: $ok of $n scrapes succeeded (< 90 %)"
	echo "$ok of $n"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

start_daemon
wait_metrics

# ---- slowloris while a job writes 10 MiB ----
D=$T/data
mkdir -p "$D"
MNT=$(mount_of "$D")
WORK=()
for i in $(seq 1 10); do
	WORK+=(write "$D/w$i" 1048576 1 , sleep 1 ,)
done
unset 'WORK[${#WORK[@]}-1]'
( "$IORUN" --json -o "$T/out.json" -- "$IOWORK" "${WORK[@]}" > "$T/iorun.out" 2>&1
  echo $? > "$T/iorun.rc" ) &
IORUN_JOB=$!
BG+=("$IORUN_JOB")
client slowloris 24 127.0.0.2-5 64 > "$T/slow.out" 2>&1 &
BG+=($!)
sleep 1  # the attackers hold their connections before the first scrape
client scrape 20 127.0.0.1 0.5 > "$T/scrape-prio.out" &
P1=$!
client scrape 20 127.0.0.6 0.5 > "$T/scrape-other.out" &
P2=$!
wait "$P1" "$P2"
cat "$T/scrape-prio.out" "$T/scrape-other.out"
r1=$(percent_ok "$T/scrape-prio.out" "slowloris, metrics_priority's address")
r2=$(percent_ok "$T/scrape-other.out" "slowloris, another address")
wait "$IORUN_JOB"
[ "$(cat "$T/iorun.rc")" = 0 ] || { cat "$T/iorun.out"; fail "iorun failed"; }
stored=$(json_get "$T/out.json" "[m['write_bytes'] for m in j['mounts'] if m['mount'] == '$MNT'][0]")
[ "$stored" = 10485760 ] || fail "the job wrote 10485760 bytes, the store says $stored"
for _ in $(seq 1 50); do
	curl -sf "$M" -o "$T/after.prom"
	grep -q '^ioacct_job_running{cluster="iorun".*} 0$' "$T/after.prom" && break
	sleep 0.1
done
served=$(grep -F 'mount="'"$MNT"'"' "$T/after.prom" | sed -n 's/^ioacct_write_bytes_total{cluster="iorun",.*} \([0-9]*\)$/\1/p')
[ "$served" = 10485760 ] || fail "/metrics says $served bytes written, the job wrote 10485760"
ok "slowloris (64 connections, a header line every 2 s): scrapes $r1 (priority), $r2 (other); the job's 10 MiB exact in the store and /metrics"

# ---- 1,000 idle connections from 50 addresses ----
client idle 15 127.0.1.1-50 1000 > "$T/idle.out" 2>&1 &
IDLE=$!
BG+=("$IDLE")
sleep 2
client scrape 12 127.0.0.1 0.5 > "$T/scrape-idle.out"
wait "$IDLE"
r=$(percent_ok "$T/scrape-idle.out" "1,000 idle connections, metrics_priority's address")
ok "1,000 idle connections: scrapes from metrics_priority's address $r"

# ---- a log flood ----
before=$(wc -l < "$T/ioacctd.log")
client garbage 10 127.0.0.7 > "$T/garbage.out" 2>&1
sleep 1
grown=$(( $(wc -l < "$T/ioacctd.log") - before ))
[ "$grown" -le 100 ] || { tail -n 5 "$T/ioacctd.log"; fail "bad requests for 10 s ($(cat "$T/garbage.out")): the log grew by $grown lines"; }
ok "bad requests for 10 s ($(cat "$T/garbage.out")): the log grew by $grown lines"

# ---- SIGTERM under load ----
client slowloris 20 127.0.0.2-5 64 > /dev/null 2>&1 &
BG+=($!)
client idle 20 127.0.1.1-50 500 > /dev/null 2>&1 &
BG+=($!)
sleep 3
t0=$(date +%s%N)
kill -TERM "$DAEMON_PID"
for _ in $(seq 1 100); do
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.05
done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "ioacctd still runs 5 s after SIGTERM under load"
wait "$DAEMON_PID"
DAEMON_PID=
ok "SIGTERM under load: ioacctd ended in $(( ($(date +%s%N) - t0) / 1000000 )) ms"

# ---- guessing passwords ----
printf 'scraper:%s\n' "$(openssl passwd -6 's3cret')" > "$T/metrics.passwd"
echo "metrics_auth_file = $T/metrics.passwd" >> "$CONF"
start_daemon
for _ in $(seq 1 100); do
	[ "$(client get 1 127.0.0.1 scraper:s3cret)" = 200 ] && break
	sleep 0.1
done
[ "$(client get 1 127.0.0.1 scraper:s3cret)" = 200 ] || fail "the right password: not 200"
[ "$(client get 1 127.0.0.1 scraper:wrong)" = 401 ] || fail "a wrong password: not 401"
c0=$(cpu_ticks "$DAEMON_PID")
t0=$(date +%s%N)
client brute 10 127.0.0.2 scraper:guess > "$T/brute.out" 2>&1 &
B=$!
client scrape 10 127.0.0.1 0.5 scraper:s3cret > "$T/scrape-auth.out"
wait "$B"
wall=$(( ($(date +%s%N) - t0) / 10000000 ))   # in ticks of 10 ms
cpu=$(( $(cpu_ticks "$DAEMON_PID") - c0 ))
r=$(percent_ok "$T/scrape-auth.out" "scrapes with the password during the guessing")
grep -q '^[0-9]' "$T/brute.out" || fail "the guessing client got no answer: $(cat "$T/brute.out")"
# What a guess costs is a password check: how many were made is the measure
# that holds on a loaded machine (5 before the first block, then one after
# each block of 1, 2, 4... s ends: under 20 in 10 s); the CPU time is shown,
# and measured against a guess's cost in the benchmark's way, not asserted.
checked=$(tr ' ' '\n' < "$T/brute.out" | sed -n 's/^401://p')
[ "${checked:-0}" -le 20 ] ||
	fail "guessing ($(cat "$T/brute.out")): $checked passwords checked in 10 s (> 20)"
ok "10 s of guesses (status:count $(cat "$T/brute.out")): $checked passwords checked; ioacctd used $cpu of $wall CPU ticks; priority scrapes $r"
for _ in $(seq 1 140); do
	code=$(client get 1 127.0.0.2 scraper:s3cret)
	[ "$code" = 200 ] && break
	# While throttled: 429, or the connection closed at once (0).
	[ "$code" = 429 ] || [ "$code" = 0 ] ||
		fail "the right password from the guessing address: HTTP $code, not 429 or 200"
	sleep 0.5
done
[ "$code" = 200 ] || fail "the guessing address is still refused 70 s later"
ok "the right password from the guessing address works once its throttle ends"
stop_daemon

# ---- refused at start, without hanging ----
other_conf() {
	cat "$CONF" > "$T/other.conf"
	sed -i "s|^socket = .*|socket = $T/other.sock|; s|^pidfile = .*|pidfile = $T/other.pid|; s|^db = .*|db = $T/other.db|; s|^bpf_pin_dir = .*|bpf_pin_dir = $PIN-other|; /^metrics_/d" "$T/other.conf"
	printf '%s\n' "$@" >> "$T/other.conf"
}
# refused WHAT MESSAGE CONF-LINES...: ioacctd exits at once, saying MESSAGE.
refused() {
	local what=$1 msg=$2 rc=0
	shift 2
	other_conf "$@"
	timeout 20 "$IOACCTD" -f -c "$T/other.conf" > "$T/other.log" 2>&1 || rc=$?
	[ "$rc" = 124 ] && fail "$what: ioacctd still ran (or hung) 20 s later"
	[ "$rc" != 0 ] || fail "$what: ioacctd started"
	grep -q -- "$msg" "$T/other.log" || { cat "$T/other.log"; fail "$what: no \"$msg\""; }
	ok "$what: refused at start ($(grep -o -- "$msg.*" "$T/other.log" | head -n 1 | cut -c1-100))"
}
printf 'scraper:$6$rounds=999999999$saltsalt$%s\n' "$(printf 'x%.0s' $(seq 1 86))" > "$T/slow.passwd"
refused "an auth file with rounds=999999999" "SHA-512 rounds above" \
	"metrics_listen = 127.0.0.1:$(free_port)" "metrics_auth_file = $T/slow.passwd"
printf 'scraper:$1$saltsalt$qjNnZhIrQUIrQArX9U1e2/\n' > "$T/md5.passwd"
refused "an auth file with an MD5 hash" "the hash is refused" \
	"metrics_listen = 127.0.0.1:$(free_port)" "metrics_auth_file = $T/md5.passwd"
mkfifo "$T/cert.fifo"
refused "a FIFO as metrics_tls_cert" "not a regular file" \
	"metrics_listen = 127.0.0.1:$(free_port)" "metrics_tls_cert = $T/cert.fifo" \
	"metrics_tls_key = $T/cert.fifo"
refused "private_data = yes without metrics_auth_file" "private_data = yes, but /metrics" \
	"metrics_listen = 127.0.0.1:$(free_port)" "private_data = yes"

# ---- [::ffff:127.0.0.1]:PORT ----
P4=$(free_port)
other_conf "metrics_listen = [::ffff:127.0.0.1]:$P4"
"$IOACCTD" -f -c "$T/other.conf" > "$T/other.log" 2>&1 &
OTHER=$!
BG+=("$OTHER")
for _ in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$P4/metrics" -o /dev/null && break
	kill -0 "$OTHER" 2>/dev/null || { cat "$T/other.log"; fail "metrics_listen = [::ffff:127.0.0.1]:$P4: ioacctd exited"; }
	sleep 0.1
done
curl -sf "http://127.0.0.1:$P4/metrics" -o /dev/null || fail "nothing served on [::ffff:127.0.0.1]:$P4"
kill -TERM "$OTHER"
wait "$OTHER"
ok "metrics_listen = [::ffff:127.0.0.1]:PORT serves on 127.0.0.1"
