# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the benchmark scripts (overhead, sidebyside, aio-cost, trace-bench,
# mpiio-cost, h5-cost): a private ioacctd with every path in a temporary
# directory, and one holding job so that the probes are live for everyone.
# Sourced; expects $B (the build directory) and a die() function.
#
#   bench_setup NAME      T (temp dir), PIN, CGP and $T/conf
#   daemon_on [MODE [idle]] ioacctd in probe mode MODE (default auto) + the holding job
#                         (idle: without it, hold_on starts it); returns 1 (daemon
#                         stopped) when the kernel refuses MODE
#   hold_on               the holding job, after daemon_on MODE idle
#   daemon_off
#   bench_cleanup         stops the daemon, removes pins, cgroups and $T; puts
#                         kernel.bpf_stats_enabled back after bpf_stats_on
#
# Cases off, unwatched and watched of a library's uprobes (mpiio-cost, h5-cost):
#   holder_on PATTERN CMD...  a watched job of CMD (which runs until $T/hold is gone),
#                         once ioacctd's log says PATTERN since its start (an awk
#                         regex: its library attached), so that the uprobes stay in
#   holder_off
#   bench_rotate ROUNDS RUN HOLDER  ROUNDS rounds of `RUN CASE ROUND` for the cases
#                         off, unwatched, watched, the order rotated every round;
#                         ioacctd off for off, else on with its holding job and
#                         HOLDER's (a function that calls holder_on)
#   median_table FILE UNIT [DECIMALS]  per case, the medians of the runs'
#                         "ROUND CASE X..." lines and the differences to off
#   bpf_stats_on; bpf_snap FILE; bpf_delta A B; bpf_table FILE [N]  the daemon's
#                         programs' runs and run time (kernel.bpf_stats_enabled)

bench_setup() {
	T=$(mktemp -d "/var/tmp/ioacct-$1.XXXXXX")
	PIN=/sys/fs/bpf/ioacct-$1-$$
	CGP=ioacct-$1-$$
	cat > "$T/conf" <<CONF
socket = $T/sock
db = $T/db
pidfile = $T/pid
bpf_pin_dir = $PIN
cgroup_parent = $CGP
CONF
	: > "$T/ioacctd.log"
	DPID='' HOLD='' HOLDER='' LOG0=0 BPF_STATS0=''
}

daemon_on() {
	local mode=${1:-auto}
	LOG0=$(wc -l < "$T/ioacctd.log")
	"$B/tools/ioacctd" -f -c "$T/conf" --probe-mode "$mode" >> "$T/ioacctd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 200); do
		"$B/tests/integration/iopoke" "$T/sock" status 2>/dev/null | grep -q '^status=0' && break
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID" 2>/dev/null || true
			DPID=''
			[ "$mode" = auto ] && { tail "$T/ioacctd.log" >&2; die "ioacctd exited at start"; }
			return 1
		fi
		sleep 0.05
	done
	[ "${2:-}" = idle ] || hold_on
}

hold_on() {
	# One watched job, so that the probes are live for everyone.
	"$B/tools/iorun" -c "$T/conf" -o /dev/null -- sleep 1000000 &
	HOLD=$!
	for _ in $(seq 100); do
		"$B/tests/integration/iopoke" "$T/sock" status | grep -q 'jobs=1 ' && return 0
		sleep 0.05
	done
	die "the holding job did not register"
}

daemon_off() {
	if [ -n "$HOLD" ]; then
		pkill -P "$HOLD" sleep 2>/dev/null || true
		wait "$HOLD" 2>/dev/null || true
		HOLD=''
	fi
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
		DPID=''
	fi
	return 0
}

bench_cleanup() {
	holder_off
	daemon_off
	[ -z "$BPF_STATS0" ] || sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS0"
	rm -rf "$T" "$PIN"
	for d in /sys/fs/cgroup/unified/$CGP /sys/fs/cgroup/$CGP /sys/fs/cgroup/*/$CGP; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

holder_on() {
	local pat=$1
	shift
	: > "$T/hold"
	"$B/tools/iorun" -c "$T/conf" -o /dev/null -- "$@" &
	HOLDER=$!
	for _ in $(seq 600); do
		awk -v n="$LOG0" -v p="$pat" 'NR > n && $0 ~ p { f = 1 } END { exit !f }' \
			"$T/ioacctd.log" && return 0
		sleep 0.1
	done
	die "the holding job ($*) did not get its library attached: no \"$pat\" in $T/ioacctd.log"
}

holder_off() {
	rm -f "$T/hold"
	[ -z "$HOLDER" ] || wait "$HOLDER" 2>/dev/null || true
	HOLDER=''
}

bench_rotate() {
	local r i c cases=(off unwatched watched)
	for r in $(seq 1 "$1"); do
		for i in 0 1 2; do
			c=${cases[$(((i + r) % 3))]}
			if [ "$c" = off ]; then
				holder_off
				daemon_off
			elif [ -z "$DPID" ]; then
				daemon_on || die "ioacctd does not start"
				"$3"
			fi
			"$2" "$c" "$r"
		done
		holder_off
		daemon_off
	done
}

# median(LIST): the median of the numbers in a string, and lo and hi its extremes.
AWK_MEDIAN='
function median(s,   n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
	lo = a[1]; hi = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'
# median_table FILE UNIT [DECIMALS]: medians per case of columns 3.., difference to off
# and, with DECIMALS, the median of the per-round ratios to off, in %, and their
# spread over the rounds [min, max].
median_table() {
	awk -v unit="$2" -v dec="${3:-1}" -v spread="${3:+1}" "$AWK_MEDIAN"'
	{ for (k = 3; k <= NF; k++) v[$1, $2, k] = $k; if ($1 > n) n = $1; nf = NF; seen[$2] = 1 }
	END {
		split("off unwatched watched", cs, " ")
		for (c = 1; c <= 3; c++) {
			if (!seen[cs[c]]) continue
			line = sprintf("%-10s", cs[c])
			for (k = 3; k <= nf; k++) {
				s = ""; d = ""; pc = ""; base = 1
				for (r = 1; r <= n; r++) {
					s = s " " v[r, cs[c], k]
					d = d " " (v[r, cs[c], k] - v[r, "off", k])
					if (v[r, "off", k] == 0)
						base = 0
					else
						pc = pc " " 100 * (v[r, cs[c], k] / v[r, "off", k] - 1)
				}
				line = line sprintf(" %10.*f%s (%+.*f", dec, median(s), unit, dec, median(d))
				if (spread && base && cs[c] != "off")
					line = line sprintf(", %+.1f %% [%+.1f, %+.1f]", median(pc), lo, hi)
				line = line ")"
			}
			print line
		}
	}' "$1"
}

# bpf_stats for the programs' own time; bench_cleanup puts it back as found.
bpf_stats_on() {
	[ -n "$BPF_STATS0" ] || BPF_STATS0=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
}
# bpf_snap FILE: run_cnt and run_time_ns of the daemon's programs (by name; the
# programs it holds a descriptor of, from its fdinfo's prog_id).
bpf_snap() {
	# (a descriptor closed meanwhile makes cat fail: not an error)
	{ cat /proc/"$DPID"/fdinfo/* 2>/dev/null || true; } | awk '$1 == "prog_id:" { print $2 }' |
		sort -u > "$T/progids"
	bpftool prog show -j | python3 -c '
import json, sys
ids = {int(x) for x in open(sys.argv[1]).read().split()}; out = {}
for p in json.load(sys.stdin):
	if p["id"] in ids:
		c = out.setdefault(p.get("name", "?"), [0, 0])
		c[0] += p.get("run_cnt", 0); c[1] += p.get("run_time_ns", 0)
json.dump(out, open(sys.argv[2], "w"))' "$T/progids" "$1"
}
# bpf_delta A B: "NAME RUNS NS" of each program that ran between the snaps A and B.
bpf_delta() {
	python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for n in sorted(b):
	c = b[n][0] - a.get(n, [0, 0])[0]; t = b[n][1] - a.get(n, [0, 0])[1]
	if c: print(n, c, t)' "$1" "$2"
}
# bpf_table FILE [N]: per program of bpf_delta's lines, the median runs, ns per run and
# their product; with N (the calls a run made), also runs and ns per call.
bpf_table() {
	awk -v per="${2:-0}" "$AWK_MEDIAN"'
	{ c[$1] = c[$1] " " $2; t[$1] = t[$1] " " ($3 / $2) }
	END { for (n in c) {
		line = sprintf("  %-24s %12d runs %8.1f ns/run %10.3f ms", n, median(c[n]),
			median(t[n]), median(c[n]) * median(t[n]) / 1e6)
		if (per)
			line = line sprintf(" %8.2f runs/call %8.1f ns/call", median(c[n]) / per,
				median(c[n]) * median(t[n]) / per)
		print line
	} }' "$1" | sort -k2,2nr
}
