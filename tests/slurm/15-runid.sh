#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A job id's runs on scripts/minicluster (issue 36, jobs): nodes mc1 and mc2, one
# ioacctd each, one private PostgreSQL. Job J of two nodes is requeued once (runs 0 and
# 1, as 08-requeue-multinode.sh); then slurmctld is started again with its state lost
# (StateSaveLocation emptied, -c), Slurm's job ids start again, and a new
# job of two nodes gets id J again, with restart count 0 again. Run n writes (n + 1) x 2 x
# 4096 bytes on mc1 and (n + 1) x 3 x 4096 on mc2 (the third run, n = 2, in another
# directory). Before, the third run was summed with the first in the cluster store (both
# restart 0): ioacct -j J said mc1,mc2 with both runs' bytes, and the third run's merged
# report could be written from the first run's parts. Now each run is (cluster, job id,
# restart, start):
#  - each node's SQLite: three rows of J, restart 0, 1, 0, each its own bytes;
#  - PostgreSQL: three runs of mc1 and mc2, each its own bytes;
#  - ioacct -j J on each node: the last run (restart 0, 61440 bytes); -D the three;
#  - ioreport J: the last run; --run 0, 1, 2 each run;
#  - one merged report per run: ioacct-J.json and ioacct-J.r1.json in the first
#    directory, ioacct-J.json in the second, each its own run's bytes per node.
# Run under the Slurm lock:
#   flock /tmp/ioacct-slurm.lock make -C build/tests/slurm check TESTS=15-runid.sh
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/../integration/pgcompare.sh"
require_minicluster
minicluster_up 2 30
IOREPORT=$abs_top_builddir/tools/ioreport
W2=$T/work2
mkdir -p "$W2"
chown "$U" "$W2"

# Run n (SLURM_RESTART_COUNT, absent at first; RUN in the environment for the third)
# writes on both nodes, then (run 0 only) waits for the requeue.
cat > "$W/rq.sh" <<JOB
#!/bin/bash
n=\${RUN:-\${SLURM_RESTART_COUNT:-0}}
srun -N1 -n1 -w mc1 $IOWORK write \$PWD/a\$n.dat 4096 \$((2 * (n + 1)))
srun -N1 -n1 -w mc2 $IOWORK write \$PWD/b\$n.dat 4096 \$((3 * (n + 1)))
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
for f in "ioacct-$J.json" "ioacct-$J.r1.json"; do
	for _ in $(seq 1 600); do
		[ -s "$W/$f" ] && break
		sleep 0.1
	done
	[ -s "$W/$f" ] || { ls -l "$W"; fail "job $J: no merged report $f in 60 s"; }
done

# slurmctld again, its state lost (StateSaveLocation emptied; -c alone keeps the last job
# id, so as not to hand it out again): job ids start again (from 1, as J did).
pid=$(cat "$MC/slurmctld.pid") || fail "no slurmctld pid file in $MC"
kill "$pid" || fail "cannot stop slurmctld ($pid)"
for _ in $(seq 1 300); do
	case $(ps -o stat= -p "$pid" 2>/dev/null) in '' | Z*) break ;; esac
	sleep 0.1
done
case $(ps -o stat= -p "$pid" 2>/dev/null) in '' | Z*) ;; *) fail "slurmctld ($pid) did not stop in 30 s" ;; esac
find "$MC/state" -mindepth 1 -delete || fail "cannot empty slurmctld's StateSaveLocation $MC/state"
setsid slurmctld -D -c -f "$SLURM_CONF" >> "$MC/log/slurmctld.out" 2>&1 < /dev/null &
for _ in $(seq 1 600); do
	[ "$(sinfo -N -h -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)" -ge 2 ] && break
	sleep 0.1
done
[ "$(sinfo -N -h -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)" -ge 2 ] ||
	fail "mc1 and mc2 not idle within 60 s of slurmctld started again"
J2=$(submit_as "$U" -N 2 --export=ALL,RUN=2 --io-monitor=format=json --chdir="$W2" -o /dev/null "$W/rq.sh")
[ "$J2" = "$J" ] || fail "slurmctld without its state handed out job id $J2, not $J again"
state=$(wait_job "$J" 180)
[ "$state" = COMPLETED ] || fail "job $J (its id used again) ended $state, not COMPLETED"
[ "$(stat -c %s "$W2/b2.dat" 2>/dev/null)" = 36864 ] || fail "job $J (its id used again) did not write on mc2"
ok "job $J requeued (runs 0 and 1), then its id handed out again by slurmctld without its state (restart 0 again)"

for k in 1 2; do wait_exported "$MC/mc$k/ioacct.db" "mc$k"; done
# Each node's store: three rows of J, by start: restart and bytes on the work mount.
for k in 1 2; do
	want=$([ $k = 1 ] && echo "0:8192 1:16384 0:24576" || echo "0:12288 1:24576 0:36864")
	got=$(sqlite3 "$MC/mc$k/ioacct.db" "SELECT j.restart || ':' || coalesce((SELECT sum(t.bytes)
		FROM totals t JOIN mounts m ON m.job_key = t.job_key AND m.mnt_id = t.mnt_id
		WHERE t.job_key = j.key AND t.op = 1 AND m.path = '$WMNT'), 0)
		FROM jobs j WHERE j.job_id = $J ORDER BY j.start_ns" | paste -sd' ')
	[ "$got" = "$want" ] || fail "mc$k's store holds job $J as '$got', not '$want'"
done
ok "job $J: three rows in each node's store, each its own bytes on mc1 and mc2"

for k in 1 2; do
	q() {
		"$IOACCT" -c "$MC/mc$k/run/ioacct.conf" --socket "$MC/mc$k/run/ioacctd.sock" -j "$J" -X -n -P \
			--mounts -o JobID,State,Restarts,NodeList,Mount,WriteBytes "$@" |
			awk -F'|' -v m="$WMNT" '$5 == m' | paste -sd' '
	}
	got=$(q) || fail "ioacct -j $J on mc$k failed"
	[ "$got" = "$J|COMPLETED|0|mc1,mc2|$WMNT|61440" ] ||
		fail "ioacct -j $J on mc$k: '$got', not the last run alone on mc1,mc2 with 61440 bytes"
	got=$(q -D) || fail "ioacct -j $J -D on mc$k failed"
	[ "$got" = "$J|REQUEUED|0|mc1,mc2|$WMNT|20480 $J|COMPLETED|1|mc1,mc2|$WMNT|40960 $J|COMPLETED|0|mc1,mc2|$WMNT|61440" ] ||
		fail "ioacct -j $J -D on mc$k: '$got', not the three runs with their own bytes"
done
ok "ioacct -j $J on mc1 and mc2: the last run (61440 bytes); -D the three runs (20480, 40960, 61440)"

# ioreport through mc1: the last run, or run N; JSON: restart, nodes, bytes on the work mount.
nodes() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
m = sum(x["write_bytes"] for x in d["mounts"] if x["mount"] == sys.argv[2])
print(d["restart"], " ".join(n["node"] for n in d["nodes"]), m)' "$1" "$WMNT"
}
rep() {
	"$IOREPORT" -c "$MC/mc1/run/ioacct.conf" --socket "$MC/mc1/run/ioacctd.sock" --format json "$@" "$J" \
		> "$T/rep.json" 2> "$T/rep.err" || { cat "$T/rep.err"; fail "ioreport $* $J failed"; }
	nodes "$T/rep.json"
}
[ "$(rep)" = "0 mc1 mc2 61440" ] || fail "ioreport $J: '$(rep)', not the last run (mc1 mc2, 61440 bytes)"
[ "$(rep --run 0)" = "0 mc1 mc2 20480" ] || fail "ioreport --run 0 $J: '$(rep --run 0)', not the first run"
[ "$(rep --run 1)" = "1 mc1 mc2 40960" ] || fail "ioreport --run 1 $J: '$(rep --run 1)', not the requeued run"
[ "$(rep --run 2)" = "0 mc1 mc2 61440" ] || fail "ioreport --run 2 $J: '$(rep --run 2)', not the id's third run"
ok "ioreport $J: the last run; --run 0, 1 and 2 each run's own bytes"

# One merged report per run, each its own run's bytes.
for _ in $(seq 1 600); do
	[ -s "$W2/ioacct-$J.json" ] && break
	sleep 0.1
done
[ -s "$W2/ioacct-$J.json" ] || { ls -l "$W2"; fail "job $J (its id used again): no merged report in 60 s"; }
got=$(nodes "$W/ioacct-$J.json") || fail "cannot read $W/ioacct-$J.json"
[ "$got" = "0 mc1 mc2 20480" ] || fail "the first run's merged report says '$got', not 20480 bytes on mc1 mc2"
got=$(nodes "$W/ioacct-$J.r1.json") || fail "cannot read $W/ioacct-$J.r1.json"
[ "$got" = "1 mc1 mc2 40960" ] || fail "the requeued run's merged report says '$got', not 40960 bytes"
got=$(nodes "$W2/ioacct-$J.json") || fail "cannot read $W2/ioacct-$J.json"
[ "$got" = "0 mc1 mc2 61440" ] || fail "the third run's merged report says '$got', not 61440 bytes on mc1 mc2"
[ "$(pg "SELECT count(*) FROM job_reports WHERE job_id = $J AND written_at IS NOT NULL")" = 3 ] ||
	fail "job $J has not three merged reports written in PostgreSQL"
ok "job $J: one merged report per run (20480, 40960 and 61440 bytes), none of another run"
# PostgreSQL: each run's parts, by node, with their bytes.
runs_pg() {
	pg "SELECT j.restart || ' ' || string_agg(j.node || ':' || coalesce((SELECT sum(t.bytes) FROM totals t
		JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
		WHERE t.job = j.id AND t.op = 1 AND m.path = '$WMNT'), 0), ',' ORDER BY j.node)
	    FROM jobs j WHERE j.job_id = $J GROUP BY j.restart, j.run_start ORDER BY min(j.start_ns)" | paste -sd'|'
}
want="0 mc1:8192,mc2:12288|1 mc1:16384,mc2:24576|0 mc1:24576,mc2:36864"
for _ in $(seq 1 300); do
	[ "$(runs_pg)" = "$want" ] && break
	sleep 0.1
done
got=$(runs_pg)
[ "$got" = "$want" ] || fail "job $J in PostgreSQL: '$got', not '$want'"
ok "job $J in PostgreSQL: three runs of mc1 and mc2, each its own bytes"
exit 0
