#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Export per finished step (issue 28), on scripts/minicluster (nodes mc1 and
# mc2, one ioacctd each, one private PostgreSQL): a job of two nodes whose
# first step (on mc1) writes 12288 bytes and whose second (on mc2) waits for
# the test. While the job runs, its first step is in PostgreSQL, exact, as a
# part without an end; no merged report is written for it. Then the job ends:
# each node's part once, COMPLETED, exact, and one merged report with both.
# Run under the Slurm lock:
#   flock /tmp/ioacct-slurm.lock make -C build/tests/slurm check TESTS=10-step-export.sh
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/../integration/pgcompare.sh"
require_minicluster
minicluster_up 2 30

cat > "$W/job.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a.dat 4096 3
srun -N1 -n1 -w mc2 bash -c 'while [ ! -e $W/go ]; do sleep 0.2; done; exec $IOWORK write $W/b.dat 4096 5'
JOB
chmod 755 "$W/job.sh"
J=$(submit_as "$U" -N 2 --io-monitor=format=json --chdir="$W" -o /dev/null "$W/job.sh")

# parts: "node ended? bytes written on the work mount per step" for job J in PostgreSQL.
parts() {
	pg "SELECT j.node || ' ' || (j.end_ns IS NOT NULL) || ' ' || coalesce((SELECT string_agg(s, ',')
	    FROM (SELECT t.step_id || '=' || sum(t.bytes) AS s FROM totals t
	          JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	          WHERE t.job = j.id AND t.op = 1 AND m.path = '$WMNT' AND t.bytes > 0
	          GROUP BY t.step_id ORDER BY t.step_id) x), '-')
	    FROM jobs j WHERE j.job_id = $J ORDER BY j.node"
}
for _ in $(seq 1 600); do
	parts | grep -qx "mc1 false 0=12288" && break
	sleep 0.1
done
got=$(parts | paste -sd'|')
case $got in
"mc1 false 0=12288" | "mc1 false 0=12288|mc2 false -") ;;
*) fail "job $J running: PostgreSQL has '$got', not mc1's finished step 0 with 12288 bytes and no end" ;;
esac
[ "$(job_state "$J")" = RUNNING ] || fail "job $J is $(job_state "$J"), not RUNNING, while its step waits"
[ ! -e "$W/ioacct-$J.json" ] || fail "job $J: a report was written while it runs"
# ioacct on mc2 (the cluster store, then mc2's running part): mc1's part as exported.
"$IOACCT" -c "$MC/mc2/run/ioacct.conf" --socket "$MC/mc2/run/ioacctd.sock" -j "$J" -X --nodes --mounts \
	-n -P -o JobID,Node,State,Mount,WriteBytes > "$T/q.out" || fail "ioacct -j $J on mc2 failed"
grep -qxF "$J|mc1|RUNNING|$WMNT|12288" "$T/q.out" ||
	{ cat "$T/q.out"; fail "ioacct -j $J --nodes on mc2: no row of mc1's exported part with 12288 bytes"; }
# Once each of its mounts: not again from another source. The step may touch other
# mounts too (a Slurm helper's write to /proc was seen): those are its own rows.
[ -z "$(grep "^$J|mc1|" "$T/q.out" | cut -d'|' -f2,4 | sort | uniq -d)" ] &&
	[ "$(grep -c "^$J|mc1|RUNNING|$WMNT|" "$T/q.out")" = 1 ] || { cat "$T/q.out"; fail "ioacct -j $J on mc2: mc1's part listed twice"; }
# And on mc1: its own running part once (from its store, not also the exported one).
"$IOACCT" -c "$MC/mc1/run/ioacct.conf" --socket "$MC/mc1/run/ioacctd.sock" -j "$J" -X --nodes --mounts \
	-n -P -o JobID,Node,State,Mount,WriteBytes > "$T/q1.out" || fail "ioacct -j $J on mc1 failed"
[ "$(grep -c "^$J|mc1|RUNNING|$WMNT|12288$" "$T/q1.out")" = 1 ] ||
	{ cat "$T/q1.out"; fail "ioacct -j $J --nodes on mc1: mc1's running part not listed exactly once"; }
ok "job $J running: its finished step 0 is in PostgreSQL already, exact (12288 bytes), without an end; ioacct on mc2 shows it, on mc1 once"

touch "$W/go"
state=$(wait_job "$J" 120)
[ "$state" = COMPLETED ] || fail "job $J ended $state"
for k in 1 2; do wait_exported "$MC/mc$k/ioacct.db" "mc$k"; done
for _ in $(seq 1 600); do
	[ -s "$W/ioacct-$J.json" ] && break
	sleep 0.1
done
[ -s "$W/ioacct-$J.json" ] || { ls -l "$W"; fail "job $J: no merged report in 60 s"; }
got=$(parts | paste -sd'|')
[ "$got" = "mc1 true 0=12288|mc2 true 1=20480" ] ||
	fail "job $J ended: PostgreSQL has '$got', not 'mc1 true 0=12288|mc2 true 1=20480'"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = $J")" = 2 ] || fail "job $J: not one row per node"
got=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(" ".join(n["node"] for n in d["nodes"]), sum(x["write_bytes"] for x in d["mounts"] if x["mount"] == sys.argv[2]), json.dumps(d.get("missing_nodes")))' "$W/ioacct-$J.json" "$WMNT")
[ "$got" = "mc1 mc2 32768 null" ] || fail "job $J: the merged report says '$got', not 'mc1 mc2 32768 null'"
for k in 1 2; do compare_stores "$MC/mc$k/ioacct.db" "mc$k" "node mc$k"; done
ok "job $J ended: one part per node, COMPLETED, exact (12288, 20480), one merged report with both; PostgreSQL equals the stores"
exit 0
