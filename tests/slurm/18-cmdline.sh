#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The job's command line as its Darshan report's exe (issue 38), on a real
# one-node Slurm cluster:
#  1. sbatch --io-monitor=format=darshan of a script with two arguments,
#     whose batch step writes and whose srun step runs a program: the exe is
#     the script as submitted with its arguments (not slurmd's spooled copy),
#     the same in the store (ioreport's JSON "cmdline");
#  2. srun --io-monitor=format=darshan of a program outside any batch job:
#     the exe is the program's command line as srun ran it.
# Both read from the report's bytes as darshan-parser prints them
# (darshan_parser.py), with lib_ver first in the metadata.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
IOSEQ=$abs_top_builddir/tests/integration/ioseq
IOREPORT=$abs_top_builddir/tools/ioreport
PARSER=$(cd "$(dirname "$0")/../integration" && pwd)/darshan_parser.py
slurm_test_setup
[ -x "$IOSEQ" ] || fail "build tests/integration first (make check does)"
start_daemon
start_cluster "required $PLUGIN config=$CONF"

W=$T/work; mkdir -p "$W"; chown "$U" "$W"

# exe_of LOG: the exe and the first metadata key of a .darshan report, as darshan-parser prints them.
exe_of() {
	python3 "$PARSER" "$1" > "$T/parsed" || fail "darshan_parser.py cannot read $1"
	sed -n 's/^# exe: //p' "$T/parsed"
	grep -m1 '^# metadata: ' "$T/parsed" | grep -q '^# metadata: lib_ver = ioacct-' ||
		fail "$1: lib_ver is not the first metadata key"
}

# ---- 1. a batch script with arguments ----
cat > "$W/job.sh" <<JOB
#!/bin/bash
dd if=/dev/zero of=$W/\$1.dat bs=64k count=4 status=none
srun --quiet -n1 $IOSEQ $W/\$2.dat $W/missing
JOB
chmod 755 "$W/job.sh"
J=$(submit_as "$U" --io-monitor=format=darshan --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh" first second)
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
[ -s "$W/first.dat" ] && [ -s "$W/second.dat" ] || fail "job $J did not write its files"
D=$W/ioacct-$J.darshan
[ -f "$D" ] || { ls -la "$W"; grep -i ioacct "$C/log/slurmd.log" | tail; fail "no Darshan report $D"; }
exe=$(exe_of "$D")
[ "$exe" = "$W/job.sh first second" ] || fail "job $J: exe '$exe', not '$W/job.sh first second'"
"$IOREPORT" --db "$T/ioacct.db" --format json -o "$T/j.json" "$J" || fail "ioreport json of job $J"
[ "$(json_get "$T/j.json" 'j["cmdline"]')" = "$W/job.sh first second" ] ||
	fail "job $J: the store's cmdline is '$(json_get "$T/j.json" 'j["cmdline"]')'"
ok "sbatch of a script with arguments: exe '$exe', the store's cmdline too"

# ---- 2. srun outside a batch job ----
before=$(ls "$W"/ioacct-*.darshan | sort)
runuser -u "$U" -- env SLURM_CONF="$SLURM_CONF" srun --quiet --io-monitor=format=darshan \
	--chdir="$W" -n1 "$IOSEQ" "$W/alone.dat" "$W/missing" > "$T/srun.out" 2>&1 ||
	{ cat "$T/srun.out"; fail "srun --io-monitor failed"; }
# The epilog writes the report after srun returned: wait for it.
for _ in $(seq 1 600); do
	D2=$(ls "$W"/ioacct-*.darshan | sort | comm -13 <(echo "$before") - | head -1)
	[ -n "$D2" ] && [ -s "$D2" ] && break
	sleep 0.1
done
[ -n "$D2" ] || { ls -la "$W"; grep -i ioacct "$C/log/slurmd.log" | tail; fail "srun's job left no Darshan report"; }
# The report is written to a temporary file and renamed: whole once it is there.
exe=$(exe_of "$D2")
[ "$exe" = "$IOSEQ $W/alone.dat $W/missing" ] ||
	fail "srun's job: exe '$exe', not '$IOSEQ $W/alone.dat $W/missing'"
ok "srun outside a batch job: exe '$exe'"
