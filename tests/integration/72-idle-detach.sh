#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An idle daemon attaches no BPF program (issue 39): with no monitored job,
# none of the programs this ioacctd loaded (the main object's and the MPI-IO
# object's, the sys_enter_openat library watch included) is attached, by
# the kernel's own lists (bpftool link list and perf list) filtered by the
# program ids the daemon holds (/proc/PID/fdinfo): other tests' daemons run
# beside it. The task iterator is left out: it runs only when the daemon
# reads it, never on an event. Then two jobs at once, each opening the
# OpenMPI library: the watch is attached while either runs, and the
# libraries parsed ahead (OpenMPI's among them) are probed at the first's
# registration; the first ends and the second, still watched, keeps them;
# after the second ends each is detached once, and nothing of it is
# attached again.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v bpftool > /dev/null || skip "bpftool is needed to list attached programs (Debian: bpftool)"
LIB=$(ldconfig -p | awk '/libmpi\.so\.[0-9]+ .*x86-64/ { print $NF; exit }')
[ -n "$LIB" ] && [ -f "$LIB" ] || skip "no OpenMPI library (libmpi.so.40) to open (Debian: libopenmpi3)"
# The library's uprobes go a second after its last step (the default keeps them 10 minutes).
EXTRA_CONF="mpi_detach_after = 1s
log_level = debug"
setup
A=
B=
cleanup() {
	local rc=$?
	touch "$T/go.a" "$T/open.b" "$T/go.b"
	for p in $A $B; do wait "$p" 2>/dev/null; done
	(exit $rc)
	teardown
}
trap cleanup EXIT
start_daemon
require_mpi_uprobes
wait_parsed_ahead

# attached: one line per program of this daemon's that is attached now, "KIND TYPE NAME".
attached() {
	bpftool -j prog show > "$T/progs.json" 2>/dev/null &&
		bpftool -j link list > "$T/links.json" 2>/dev/null &&
		bpftool -j perf list > "$T/perf.json" 2>/dev/null ||
		fail "bpftool cannot list programs"
	/usr/bin/python3 - "$DAEMON_PID" "$T" <<'PY'
import glob, json, sys
pid, t = sys.argv[1:]
ids = set()
for f in glob.glob("/proc/%s/fdinfo/*" % pid):
    try:
        for l in open(f):
            if l.startswith("prog_id:"):
                ids.add(int(l.split()[1]))
    except OSError:
        pass
load = lambda n: json.load(open("%s/%s.json" % (t, n))) or []
name = {p["id"]: p.get("name", "?") for p in load("progs")}
for l in load("links"):
    if l.get("prog_id") in ids and l.get("type") != "iter":
        print("link", l.get("type"), name.get(l["prog_id"], "?"))
for p in load("perf"):
    if p.get("prog_id") in ids:
        print("perf", p.get("fd_type"), name.get(p["prog_id"], "?"))
PY
}
# until_attached WHAT REGEX [NOT]: waits up to 60 s for a line of attached matching REGEX (NOT: none).
until_attached() {
	for _ in $(seq 1 600); do
		attached > "$T/attached"
		if [ "${3:-}" = not ]; then ! grep -q "$2" "$T/attached" && return 0
		else grep -q "$2" "$T/attached" && return 0; fi
		sleep 0.1
	done
	fail "$1: attached now: $(paste -sd, "$T/attached")"
}
opened() { grep -c "MPI-IO: attached to .*libmpi.* at a step's registration" "$T/ioacctd.log"; }
nattached() { grep -c ": attached to " "$T/ioacctd.log"; }
until_log() {
	for _ in $(seq 1 600); do [ "$($2)" -ge "$3" ] && return 0; sleep 0.1; done
	fail "$1: $(grep MPI-IO "$T/ioacctd.log" | tail -5)"
}

# The programs are the daemon's: the check below can see them.
attached > /dev/null
/usr/bin/python3 - "$DAEMON_PID" "$T/progs.json" <<'PY' || fail "the daemon's programs are not where the checks look"
import glob, json, sys
ids = set()
for f in glob.glob("/proc/%s/fdinfo/*" % sys.argv[1]):
    ids.update(int(l.split()[1]) for l in open(f) if l.startswith("prog_id:"))
names = {p.get("name") for p in json.load(open(sys.argv[2])) if p["id"] in ids}
assert "ioacct_mpi_lib_" in {n[:15] for n in names if n}, names
assert len(names) > 10, names
print("  %d programs of ioacctd's" % len(ids))
PY
until_attached "idle after start: programs attached" . not
ok "idle: none of ioacctd's programs attached"

# Job A opens the library at once and waits; job B waits to be told to open it.
"$IORUN" --job-id 7201 -o /dev/null -- bash -c 'exec 3< "$1"; until [ -e "$2" ]; do sleep 0.05; done' _ \
	"$LIB" "$T/go.a" > "$T/a.out" 2>&1 &
A=$!
until_log "job A's registration: the MPI libraries parsed ahead not attached" opened 1
until_attached "job A runs: the library watch not attached" "ioacct_mpi_lib_"
grep -q "^link .*ioacct_mpi_ret" "$T/attached" || grep -q "^perf .*ioacct_mpi_ret" "$T/attached" ||
	fail "job A: the library's uprobes not attached: $(paste -sd, "$T/attached")"
ok "job A: the library watch attached, the library probed at its registration"
NATT=$(nattached)
"$IORUN" --job-id 7202 -o /dev/null -- bash -c 'touch "$3"; until [ -e "$1" ]; do sleep 0.05; done
	exec 3< "$4"; until [ -e "$2" ]; do sleep 0.05; done' _ \
	"$T/open.b" "$T/go.b" "$T/b.started" "$LIB" > "$T/b.out" 2>&1 &
B=$!
for _ in $(seq 1 600); do [ -e "$T/b.started" ] && break; sleep 0.1; done
[ -e "$T/b.started" ] || fail "job B did not start: $(cat "$T/b.out")"

# A ends while B runs: the watch and the libraries' uprobes stay, B's registration holds them.
touch "$T/go.a"
wait "$A" || fail "job A failed: $(cat "$T/a.out")"
A=
attached > "$T/attached"
grep -q "ioacct_mpi_lib_" "$T/attached" ||
	fail "job B still runs, the library watch is gone: $(paste -sd, "$T/attached")"
grep -q "ioacct_mpi_ret" "$T/attached" ||
	fail "job B still runs, the library's uprobes are gone: $(paste -sd, "$T/attached")"
touch "$T/open.b"
ok "job A ended, job B still watched: the watch and the library's uprobes stay"

touch "$T/go.b"
wait "$B" || fail "job B failed: $(cat "$T/b.out")"
B=
detached() { grep -c "MPI-IO: detached from the library" "$T/ioacctd.log"; }
until_log "job B's libraries not detached" detached "$NATT"
[ "$(nattached)" = "$NATT" ] && [ "$(detached)" = "$NATT" ] ||
	fail "$NATT libraries attached at A's registration; now $(nattached) attached, $(detached) detached"
# All of them after B's step ended (none with A's: B held them).
FIN=$(grep -n "job [^ ]*/7202 step [0-9]* finished" "$T/ioacctd.log" | head -1 | cut -d: -f1)
DET=$(grep -n "MPI-IO: detached from the library" "$T/ioacctd.log" | head -1 | cut -d: -f1)
[ -n "$FIN" ] && [ "$DET" -gt "$FIN" ] || fail "a library detached before job B ended (line $DET, B's end ${FIN:-none})"
ok "each of the $NATT libraries detached once, after job B ended"
until_attached "idle after the jobs: programs attached" . not
ok "idle after the jobs: none of ioacctd's programs attached"
