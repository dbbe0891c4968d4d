#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A requeued job of two nodes (issue 28), on scripts/minicluster (nodes mc1 and
# mc2, one ioacctd each, one private PostgreSQL): run n (Slurm's restart count)
# writes (n + 1) x 2 x 4096 bytes on mc1 and (n + 1) x 3 x 4096 on mc2; the
# first run is requeued while it runs (scontrol requeue), the second completes.
# Before the runs were kept apart the cluster store summed them: "8 MiB" and
# "node mc1,mc1" for two runs of 4 MiB. Now:
#  - PostgreSQL holds each node's part of each run once, restart 0 and 1, the
#    first run REQUEUED on both nodes, each with its own exact bytes;
#  - ioacct -j on either node: the last run alone (nodes mc1,mc2, its bytes);
#    -D both runs, each with its own bytes;
#  - one merged report per run (ioacct-J.json, then ioacct-J.r1.json), each
#    with its run's bytes per node and nothing of the other run.
# Run under the Slurm lock:
#   flock /tmp/ioacct-slurm.lock make -C build/tests/slurm check TESTS=08-requeue-multinode.sh
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/../integration/pgcompare.sh"
require_minicluster
minicluster_up 2 30

# Run n writes on both nodes, then (run 0 only) waits for the requeue.
cat > "$W/rq.sh" <<JOB
#!/bin/bash
n=\${SLURM_RESTART_COUNT:-0}
srun -N1 -n1 -w mc1 $IOWORK write $W/a\$n.dat 4096 \$((2 * (n + 1)))
srun -N1 -n1 -w mc2 $IOWORK write $W/b\$n.dat 4096 \$((3 * (n + 1)))
[ "\$n" = 0 ] && sleep 300
echo run-\$n-done
JOB
chmod 755 "$W/rq.sh"
J=$(submit_as "$U" -N 2 --requeue --io-monitor=format=json --chdir="$W" -o /dev/null "$W/rq.sh")
for _ in $(seq 1 600); do
	[ "$(stat -c %s "$W/b0.dat" 2>/dev/null)" = 12288 ] && break
	sleep 0.1
done
[ "$(stat -c %s "$W/b0.dat" 2>/dev/null)" = 12288 ] || fail "job $J: the first run did not write on mc2"
scontrol requeue "$J" || fail "scontrol requeue $J failed"
for _ in $(seq 1 300); do
	[ "$(job_state "$J")" = PENDING ] && break
	sleep 0.1
done
scontrol update JobId="$J" StartTime=now || fail "cannot start job $J again now"
state=$(wait_job "$J" 180)
[ "$state" = COMPLETED ] || fail "job $J ended $state after its requeue, not COMPLETED"
[ "$(stat -c %s "$W/b1.dat" 2>/dev/null)" = 24576 ] || fail "job $J: the second run did not write on mc2"

for k in 1 2; do wait_exported "$MC/mc$k/ioacct.db" "mc$k"; done
# PostgreSQL: one row per node and run, each run's own bytes on the work mount.
pg_runs() {
	pg "SELECT j.restart || ' ' || j.node || ' ' || j.state || ' ' ||
	    coalesce((SELECT sum(t.bytes) FROM totals t JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	              WHERE t.job = j.id AND t.op = 1 AND m.path = '$WMNT'), 0)
	    FROM jobs j WHERE j.job_id = $J ORDER BY j.restart, j.node"
}
want="0 mc1 REQUEUED 8192|0 mc2 REQUEUED 12288|1 mc1 COMPLETED 16384|1 mc2 COMPLETED 24576"
for _ in $(seq 1 300); do
	[ "$(pg_runs | paste -sd'|')" = "$want" ] && break
	sleep 0.1
done
got=$(pg_runs | paste -sd'|')
[ "$got" = "$want" ] || fail "job $J in PostgreSQL: '$got', not '$want'"
ok "job $J in PostgreSQL: each node's part of each run once, run 0 REQUEUED (8192 + 12288), run 1 COMPLETED (16384 + 24576)"

# ioacct through each node's ioacctd (the cluster store): the last run; -D each run.
for k in 1 2; do
	q() {
		"$IOACCT" -c "$MC/mc$k/run/ioacct.conf" --socket "$MC/mc$k/run/ioacctd.sock" -j "$J" -X -n -P \
			--mounts -o JobID,State,Restarts,NodeList,Mount,WriteBytes "$@" |
			awk -F'|' -v m="$WMNT" '$5 == m' | paste -sd' '
	}
	got=$(q) || fail "ioacct -j $J on mc$k failed"
	[ "$got" = "$J|COMPLETED|1|mc1,mc2|$WMNT|40960" ] ||
		fail "ioacct -j $J on mc$k: '$got', not the last run alone on mc1,mc2 with 40960 bytes"
	got=$(q -D) || fail "ioacct -j $J -D on mc$k failed"
	[ "$got" = "$J|REQUEUED|0|mc1,mc2|$WMNT|20480 $J|COMPLETED|1|mc1,mc2|$WMNT|40960" ] ||
		fail "ioacct -j $J -D on mc$k: '$got', not both runs with their own bytes"
done
ok "ioacct -j $J on mc1 and mc2: the last run (mc1,mc2, 40960 bytes); -D both runs (20480, 40960)"

# One merged report per run, each its own run's bytes per node.
for f in "ioacct-$J.json" "ioacct-$J.r1.json"; do
	for _ in $(seq 1 600); do
		[ -s "$W/$f" ] && break
		sleep 0.1
	done
	[ -s "$W/$f" ] || { ls -l "$W"; fail "job $J: no merged report $f in 60 s"; }
done
nodes() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
m = sum(x["write_bytes"] for x in d["mounts"] if x["mount"] == sys.argv[2])
print(d["restart"], " ".join(n["node"] for n in d["nodes"]), m)' "$1" "$WMNT"
}
got=$(nodes "$W/ioacct-$J.json") || fail "cannot read $W/ioacct-$J.json"
[ "$got" = "0 mc1 mc2 20480" ] || fail "job $J: the first run's merged report says '$got', not run 0 on mc1 mc2 with 20480 bytes"
got=$(nodes "$W/ioacct-$J.r1.json") || fail "cannot read $W/ioacct-$J.r1.json"
[ "$got" = "1 mc1 mc2 40960" ] || fail "job $J: the second run's merged report says '$got', not run 1 on mc1 mc2 with 40960 bytes"
ok "job $J: one merged report per run, ioacct-$J.json (20480 bytes) and ioacct-$J.r1.json (40960), nodes mc1 mc2 each"
exit 0
