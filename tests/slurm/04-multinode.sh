#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cluster store across nodes (issue 13), on scripts/minicluster (3 nodes
# mc1..mc3 on this host, one ioacctd each, one private PostgreSQL): sbatch -N 3
# --io-monitor, one srun on each node writing a different exact number of bytes.
# Each node's rows in PostgreSQL equal that node's SQLite store, under its Slurm
# node name, with the exact bytes of its step; ioacct -j on any node shows the
# whole job, every step exact, and --nodes each node's. Run under the Slurm lock:
#   flock /tmp/ioacct-slurm.lock make -C build/tests/slurm check TESTS=04-multinode.sh
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/../integration/pgcompare.sh"
require_minicluster

T=$(mktemp -d /var/tmp/ioacct-mc.XXXXXX)
chmod 755 "$T"
MC=$T/mc
trap 'rc=$?; "$MINICLUSTER" down --dir "$MC" > /dev/null 2>&1; rm -rf "$T"; exit $rc' EXIT
"$MINICLUSTER" up --nodes 3 --dir "$MC" --build "$abs_top_builddir" > "$T/up.out" 2> "$T/up.err" ||
	{ cat "$T/up.err"; fail "scripts/minicluster up --nodes 3 failed"; }
# shellcheck source=/dev/null
. "$MC/minicluster.state"
[ -n "${MC_PGURL:-}" ] || fail "minicluster started no PostgreSQL"
PGURL=$MC_PGURL
export SLURM_CONF=$MC/slurm.conf
dump_log() { tail -n 15 "$MC"/log/ioacctd-mc*.log 2>/dev/null; }

W=$T/work
mkdir -p "$W"
WMNT=$(mount_of "$W")
# Step k runs on node mc(k+1) and writes SIZE x COUNT bytes.
cat > "$W/job.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a.dat 1000 7
srun -N1 -n1 -w mc2 $IOWORK write $W/b.dat 2000 11
srun -N1 -n1 -w mc3 $IOWORK write $W/c.dat 3000 13
JOB
chmod 755 "$W/job.sh"
J=$(submit_as root -N 3 --io-monitor --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
state=$(wait_job "$J" 120)
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }

for k in 1 2 3; do
	wait_exported "$MC/mc$k/ioacct.db" "mc$k"
done

# Per node: its job row under its Slurm name, its step's exact bytes on $WMNT.
want=(x 7000 22000 39000)
for k in 1 2 3; do
	[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = $J AND node = 'mc$k'")" = 1 ] ||
		fail "job $J is not once in PostgreSQL under node mc$k"
	step=$((k - 1))
	got=$(pg "SELECT coalesce(sum(t.bytes), 0) FROM totals t JOIN jobs j ON j.id = t.job
		  JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
		  WHERE j.job_id = $J AND j.node = 'mc$k' AND t.step_id = $step AND t.op = 1
		  AND m.path = '$WMNT'")
	[ "$got" = "${want[$k]}" ] || fail "mc$k: step $step wrote $got bytes in PostgreSQL, not ${want[$k]}"
	compare_stores "$MC/mc$k/ioacct.db" "mc$k" "node mc$k"
done
# Nothing but those three nodes' rows.
[ "$(pg "SELECT count(*) FROM jobs WHERE node NOT IN ('mc1', 'mc2', 'mc3')")" = 0 ] ||
	fail "PostgreSQL has jobs of nodes other than mc1..mc3"
[ "$(pg "SELECT string_agg(DISTINCT node, ',' ORDER BY node) FROM jobs WHERE job_id = $J")" = mc1,mc2,mc3 ] ||
	fail "job $J is not on nodes mc1,mc2,mc3 in PostgreSQL"
ok "3 nodes: PostgreSQL equals the 3 SQLite stores, node names mc1..mc3, exact bytes per node"

# ioacct -j on any node: the whole job, from the cluster store (cluster-wide queries).
IOACCT=$abs_top_builddir/tools/ioacct
all=$(pg "SELECT coalesce(sum(t.bytes), 0) FROM totals t JOIN jobs j ON j.id = t.job
	  JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	  WHERE j.job_id = $J AND t.op = 1 AND m.path = '$WMNT'")
for k in 1 2 3; do
	sock=$MC/mc$k/run/ioacctd.sock
	"$IOACCT" -c "$MC/mc$k/run/ioacct.conf" --socket "$sock" -j "$J" -n -P \
		-o JobID,NodeList,Mount,WriteBytes --mounts > "$T/q.out" || fail "ioacct -j $J on mc$k failed"
	grep -F "|$WMNT|" "$T/q.out" | grep -E "^$J(\.[0-2])?\|" > "$T/q.rows" || :
	printf '%s\n' "$J|mc1,mc2,mc3|$WMNT|$all" "$J.0|mc1,mc2,mc3|$WMNT|7000" \
		"$J.1|mc1,mc2,mc3|$WMNT|22000" "$J.2|mc1,mc2,mc3|$WMNT|39000" > "$T/q.want"
	diff -u "$T/q.want" "$T/q.rows" || { cat "$T/q.out"; fail "ioacct -j $J on mc$k: not the whole job"; }
	"$IOACCT" -c "$MC/mc$k/run/ioacct.conf" --socket "$sock" -j "$J.1" --nodes -n -P \
		-o JobID,Node,Mount,WriteBytes --mounts > "$T/q.out" || fail "ioacct -j $J.1 --nodes on mc$k failed"
	grep -F "$J.1|mc2|$WMNT|22000" "$T/q.out" > /dev/null ||
		{ cat "$T/q.out"; fail "ioacct -j $J.1 --nodes on mc$k: no exact row of mc2"; }
done
ok "ioacct -j $J on each node: the whole job ($all bytes on $WMNT), each step's exact bytes, --nodes"
exit 0
