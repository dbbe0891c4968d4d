#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One merged report per multi-node job (issue 13), on scripts/minicluster (3
# nodes mc1..mc3, one ioacctd each, one private PostgreSQL, merge_timeout 15 s):
#  1. sbatch -N 3 as an unprivileged user, one srun per node, each writing a
#     different exact number of bytes to two mounts (the work directory and a
#     tmpfs): exactly one report file per format for the job, owned by the user,
#     exact per node and in total (text and JSON); PostgreSQL equals the three
#     SQLite stores; ioacct -j on each node the whole job, --nodes per node; the
#     JSON's per-file records every node's, exact, each with its step and rank.
#  2. kill -9 of mc2's ioacctd in the middle of its step, started again before
#     the step goes on: totals still exact, no duplicate rows.
#  2b. a job of 3 nodes with steps on 2: the third node's empty part, so the
#     report comes at once and names no node missing.
#  2c. PostgreSQL stopped before the job ends and started 30 s later: the job
#     completes, the report is written after, every byte reaches PostgreSQL once.
#  3. mc3's ioacctd down through the job and past merge_timeout: the job
#     completes at once, the report appears after the timeout, names mc3 as
#     missing and has exactly mc1's and mc2's bytes.
# Run under the Slurm lock:
#   flock /tmp/ioacct-slurm.lock make -C build/tests/slurm check TESTS=05-merged.sh
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/../integration/pgcompare.sh"
require_minicluster
TIMEOUT=15

T=$(mktemp -d /var/tmp/ioacct-mc.XXXXXX)
chmod 755 "$T"
MC=$T/mc
# The second mount, before the nodes' mount namespaces are made: they all see it.
F=$T/fast
mkdir -p "$F"
mount -t tmpfs -o size=64m,mode=1777 ioacct-merged "$F" || skip "cannot mount a tmpfs on $F"
trap 'rc=$?; "$MINICLUSTER" down --dir "$MC" > /dev/null 2>&1; umount "$F"; rm -rf "$T"; exit $rc' EXIT
make_user "$SLURM_USER_NAME" || skip "cannot create user $SLURM_USER_NAME"
U=$SLURM_USER_NAME
"$MINICLUSTER" up --nodes 3 --dir "$MC" --build "$abs_top_builddir" --merge-timeout "$TIMEOUT" \
	> "$T/up.out" 2> "$T/up.err" || { cat "$T/up.err"; fail "scripts/minicluster up --nodes 3 failed"; }
# shellcheck source=/dev/null
. "$MC/minicluster.state"
[ -n "${MC_PGURL:-}" ] || fail "minicluster started no PostgreSQL"
PGURL=$MC_PGURL
export SLURM_CONF=$MC/slurm.conf
dump_log() { tail -n 15 "$MC"/log/ioacctd-mc*.log 2>/dev/null; }
IOACCT=$abs_top_builddir/tools/ioacct

W=$T/work
mkdir -p "$W"
chown "$U" "$W"
WMNT=$(mount_of "$W")
[ "$WMNT" != "$F" ] || fail "the work directory is on the tmpfs"

# json_nodes FILE: "node write_bytes" lines; json_mount FILE PATH: that mount's write_bytes.
json_nodes() { python3 -c 'import json,sys; [print(n["node"], n["write_bytes"]) for n in json.load(open(sys.argv[1]))["nodes"]]' "$1"; }
json_mount() { python3 -c 'import json,sys; print(sum(m["write_bytes"] for m in json.load(open(sys.argv[1]))["mounts"] if m["mount"] == sys.argv[2]))' "$1" "$2"; }
json_key() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get(sys.argv[2])))' "$1" "$2"; }
# text_nodes FILE: "node bytes_written" lines of the text report's node table.
text_nodes() { awk '/^## Nodes/ { s = 1; getline; next } /^$|^#/ { s = 0 } s { print $1, $4 }' "$1"; }

# pg_bytes JOB: every node's bytes written per mount and step in PostgreSQL, to show a difference.
pg_bytes() {
	pg "SELECT j.node, t.step_id, m.path, m.fstype, t.bytes FROM totals t JOIN jobs j ON j.id = t.job
	    JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	    WHERE j.job_id = $1 AND t.op = 1 AND t.bytes > 0 ORDER BY 1, 2, 3"
}

# pg_nodes JOB: "node bytes_written" per node in PostgreSQL, every mount and step (the
# reports' per-node figures; a task's launch may write a byte to /proc, so not a constant).
pg_nodes() {
	pg "SELECT j.node || ' ' || sum(t.bytes) FROM totals t JOIN jobs j ON j.id = t.job
	    WHERE j.job_id = $1 AND t.op = 1 GROUP BY j.node ORDER BY j.node"
}
# pg_node_mounts JOB: "node mount bytes_written" on the work dir and the tmpfs: exact constants.
pg_node_mounts() {
	pg "SELECT j.node || ' ' || m.path || ' ' || sum(t.bytes) FROM totals t JOIN jobs j ON j.id = t.job
	    JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	    WHERE j.job_id = $1 AND t.op = 1 AND m.path IN ('$WMNT', '$F')
	    GROUP BY j.node, m.path HAVING sum(t.bytes) > 0 ORDER BY j.node, m.path"
}
# check_nodes JOB REPORT.json [REPORT.txt] WANT...: each node's exact bytes on the two mounts
# ("node mount bytes" lines, WANT) in PostgreSQL, and the reports' per-node rows equal to it.
check_nodes() {
	local j=$1 json=$2 txt=$3
	shift 3
	printf '%s\n' "$@" | sort > "$T/mounts.want"
	pg_node_mounts "$j" | sort > "$T/mounts.pg"
	diff -u "$T/mounts.want" "$T/mounts.pg" || { pg_bytes "$j"; fail "job $j: bytes per node and mount in PostgreSQL"; }
	pg_nodes "$j" > "$T/nodes.pg"
	json_nodes "$json" > "$T/nodes.json"
	diff -u "$T/nodes.pg" "$T/nodes.json" || { pg_bytes "$j"; fail "job $j: JSON per-node bytes written"; }
	[ -z "$txt" ] && return 0
	text_nodes "$txt" > "$T/nodes.txt"
	diff -u "$T/nodes.pg" "$T/nodes.txt" || { cat "$txt"; fail "job $j: text per-node bytes written"; }
}

# wait_file PATH SECONDS
wait_file() {
	for _ in $(seq 1 $(($2 * 10))); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- 1. the merged report --------------------------------------------------------------
# Node k writes 1000k x (7, 11, 13) bytes to the work dir, 100(k+4) x (3, 5, 7) to the tmpfs.
cat > "$W/job1.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a.dat 1000 7 , write $F/a.dat 500 3
srun -N1 -n1 -w mc2 $IOWORK write $W/b.dat 2000 11 , write $F/b.dat 700 5
srun -N1 -n1 -w mc3 $IOWORK write $W/c.dat 3000 13 , write $F/c.dat 900 7
JOB
chmod 755 "$W/job1.sh"
J=$(submit_as "$U" -N 3 --io-monitor=format=text,json --chdir="$W" -o "$W/out-%j.txt" "$W/job1.sh")
state=$(wait_job "$J" 120)
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
wait_file "$W/ioacct-$J.json" 60 && wait_file "$W/ioacct-$J.txt" 5 ||
	{ ls -l "$W"; fail "job $J: no merged report in 60 s"; }
sleep 3 # any per-node file would come with the epilogs, long done: make sure none does
files=$(cd "$W" && ls ioacct-"$J"* | sort | tr '\n' ' ')
[ "$files" = "ioacct-$J.json ioacct-$J.txt " ] || fail "job $J: report files '$files', not one per format"
for f in "$W/ioacct-$J.txt" "$W/ioacct-$J.json"; do
	[ "$(stat -c %U "$f")" = "$U" ] || fail "$f is owned by $(stat -c %U "$f"), not $U"
done
[ "$(pg "SELECT written_by IS NOT NULL AND missing IS NULL FROM job_reports WHERE job_id = $J")" = t ] ||
	fail "job $J: job_reports does not say written, none missing"
check_nodes "$J" "$W/ioacct-$J.json" "$W/ioacct-$J.txt" "mc1 $WMNT 7000" "mc1 $F 1500" \
	"mc2 $WMNT 22000" "mc2 $F 3500" "mc3 $WMNT 39000" "mc3 $F 6300"
[ "$(json_mount "$W/ioacct-$J.json" "$WMNT")" = 68000 ] || fail "job $J: JSON $WMNT not 68000 bytes"
[ "$(json_mount "$W/ioacct-$J.json" "$F")" = 11300 ] || fail "job $J: JSON $F not 11300 bytes"
total=$(pg "SELECT sum(bytes) FROM totals t JOIN jobs j ON j.id = t.job WHERE j.job_id = $J AND t.op = 1")
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["write_bytes"])' "$W/ioacct-$J.json")" = "$total" ] ||
	fail "job $J: JSON total written not PostgreSQL's $total"
[ "$(report_bytes_written "$W/ioacct-$J.txt" "$WMNT")" = 68000 ] || fail "job $J: text $WMNT not 68000 bytes"
[ "$(report_bytes_written "$W/ioacct-$J.txt" "$F")" = 11300 ] || fail "job $J: text $F not 11300 bytes"
[ "$(json_key "$W/ioacct-$J.json" missing_nodes)" = null ] || fail "job $J: JSON names missing nodes"
ok "job $J on 3 nodes: one report per format, owned by $U, exact per node and mount (7000+1500, 22000+3500, 39000+6300), per mount (68000, 11300)"
# Every node's per-file records (PostgreSQL schema 9), each with its step (one a node) and rank.
python3 - "$W/ioacct-$J.json" "$W" "$F" > "$T/files.got" <<'PY' || fail "job $J: cannot read the JSON's files"
import json, sys
j = json.load(open(sys.argv[1]))
print(j["file_records"], j["files_partial"])
for f in sorted(j["files"] or [], key=lambda f: f["path"] or ""):
    if f["path"] and f["path"].startswith((sys.argv[2] + "/", sys.argv[3] + "/")) and f["bytes_written"]:
        print(f["path"], f["step_id"], f["rank"], f["writes"], f["bytes_written"])
PY
cat > "$T/files.want" <<WANT
True False
$F/a.dat 0 0 3 1500
$F/b.dat 1 0 5 3500
$F/c.dat 2 0 7 6300
$W/a.dat 0 0 7 7000
$W/b.dat 1 0 11 22000
$W/c.dat 2 0 13 39000
WANT
diff -u "$T/files.want" "$T/files.got" || fail "job $J: the merged report's per-file records"
ok "job $J: the merged report has every node's file records, exact, each with its step and rank"

for k in 1 2 3; do
	wait_exported "$MC/mc$k/ioacct.db" "mc$k"
	compare_stores "$MC/mc$k/ioacct.db" "mc$k" "node mc$k"
done
for k in 1 2 3; do
	sock=$MC/mc$k/run/ioacctd.sock
	"$IOACCT" -c "$MC/mc$k/run/ioacct.conf" --socket "$sock" -j "$J" -n -P \
		-o JobID,NodeList,WriteBytes > "$T/q.out" || fail "ioacct -j $J on mc$k failed"
	grep -qxF "$J|mc1,mc2,mc3|$total" "$T/q.out" ||
		{ cat "$T/q.out"; fail "ioacct -j $J on mc$k: not the whole job"; }
	"$IOACCT" -c "$MC/mc$k/run/ioacct.conf" --socket "$sock" -j "$J" --nodes -n -P \
		-o JobID,Node,WriteBytes > "$T/q.out" || fail "ioacct -j $J --nodes on mc$k failed"
	while read -r node bytes; do
		grep -qxF "$J|$node|$bytes" "$T/q.out" || { cat "$T/q.out"; fail "ioacct -j $J --nodes on mc$k: no row $J|$node|$bytes"; }
	done < "$T/nodes.pg"
done
ok "PostgreSQL equals the 3 SQLite stores; ioacct -j $J on each node: the whole job, --nodes per node"

# ---- 2. kill -9 of mc2's ioacctd in the middle of its step --------------------------------
cat > "$W/job2.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a2.dat 1000 3
srun -N1 -n1 -w mc2 bash -c '$IOWORK write $W/b2.dat 2000 5 && : > $W/mc2-mid && while [ ! -e $W/go ]; do sleep 0.2; done && $IOWORK write $F/b2.dat 4000 2'
srun -N1 -n1 -w mc3 $IOWORK write $W/c2.dat 3000 1
JOB
chmod 755 "$W/job2.sh"
J2=$(submit_as "$U" -N 3 --io-monitor=format=json --chdir="$W" -o "$W/out-%j.txt" "$W/job2.sh")
for _ in $(seq 1 600); do [ -e "$W/mc2-mid" ] && break; sleep 0.1; done
[ -e "$W/mc2-mid" ] || fail "job $J2: mc2's step did not reach its middle in 60 s"
sleep 2.5 # one drain interval: some of mc2's bins reach SQLite, the rest stay in the maps
kill -9 "$(cat "$MC/mc2/ioacctd.pid")" || fail "cannot kill mc2's ioacctd"
sleep 1
sh "$MC/mc2/ioacctd.start"
for _ in $(seq 1 100); do
	"$IOPOKE" "$MC/mc2/run/ioacctd.sock" status 2> /dev/null | grep -q '^status=0' && break
	sleep 0.1
done
"$IOPOKE" "$MC/mc2/run/ioacctd.sock" status 2> /dev/null | grep -q '^status=0' || fail "mc2's ioacctd did not come back"
touch "$W/go"
state=$(wait_job "$J2" 120)
[ "$state" = COMPLETED ] || { cat "$W/out-$J2.txt"; fail "job $J2 ended $state"; }
wait_file "$W/ioacct-$J2.json" 60 || { ls -l "$W"; tail -n 30 "$MC/log/ioacctd-mc2.log"; fail "job $J2: no merged report in 60 s"; }
check_nodes "$J2" "$W/ioacct-$J2.json" "" "mc1 $WMNT 3000" "mc2 $WMNT 10000" "mc2 $F 8000" "mc3 $WMNT 3000"
[ "$(json_mount "$W/ioacct-$J2.json" "$F")" = 8000 ] || fail "job $J2: $F not 8000 bytes after the restart"
[ "$(pg "SELECT count(*) FROM jobs WHERE job_id = $J2")" = 3 ] || fail "job $J2: not 3 rows in PostgreSQL"
for k in 1 2 3; do compare_stores "$MC/mc$k/ioacct.db" "mc$k" "node mc$k"; done
ok "job $J2: mc2's ioacctd killed -9 mid-step and restarted: exact (3000, 10000+8000, 3000), no duplicate rows"

# ---- 2b. a node where no step runs: its empty part, no waiting ---------------------------
cat > "$W/job4.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a4.dat 1000 4
srun -N1 -n1 -w mc2 $IOWORK write $W/b4.dat 2000 4
JOB
chmod 755 "$W/job4.sh"
J4=$(submit_as "$U" -N 3 --io-monitor=format=json --chdir="$W" -o "$W/out-%j.txt" "$W/job4.sh")
state=$(wait_job "$J4" 60)
[ "$state" = COMPLETED ] || { cat "$W/out-$J4.txt"; fail "job $J4 ended $state"; }
t0=$(date +%s)
wait_file "$W/ioacct-$J4.json" $((TIMEOUT - 5)) ||
	{ ls -l "$W"; fail "job $J4: no report within $((TIMEOUT - 5)) s: it waited for mc3, which ran nothing"; }
[ "$(json_key "$W/ioacct-$J4.json" missing_nodes)" = null ] || fail "job $J4: names mc3 missing, which only ran no step"
[ "$(python3 -c 'import json,sys; print(",".join(n["node"] for n in json.load(open(sys.argv[1]))["nodes"]))' "$W/ioacct-$J4.json")" = mc1,mc2,mc3 ] ||
	fail "job $J4: the report's nodes are not mc1,mc2,mc3"
[ "$(json_mount "$W/ioacct-$J4.json" "$WMNT")" = 12000 ] || fail "job $J4: not exactly 12000 bytes on $WMNT"
ok "job $J4 on 3 nodes, steps on 2: report in $(($(date +%s) - t0)) s, mc3 an empty part, not missing; exactly 12000 bytes"

# ---- 2c. PostgreSQL stopped before the job ends, started 30 s later ------------------------
cat > "$W/job5.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a5.dat 1000 5
srun -N1 -n1 -w mc2 $IOWORK write $W/b5.dat 2000 5
srun -N1 -n1 -w mc3 $IOWORK write $F/c5.dat 3000 5
while [ ! -e $W/go5 ]; do sleep 0.2; done
JOB
chmod 755 "$W/job5.sh"
J5=$(submit_as "$U" -N 3 --io-monitor=format=json --chdir="$W" -o "$W/out-%j.txt" "$W/job5.sh")
for _ in $(seq 1 600); do [ -e "$W/c5.dat" ] || [ -e "$F/c5.dat" ] && break; sleep 0.1; done
pg_stop "$MC/pg"
touch "$W/go5"
state=$(wait_job "$J5" 60)
[ "$state" = COMPLETED ] || { cat "$W/out-$J5.txt"; fail "job $J5 ended $state with PostgreSQL down"; }
sleep 30
[ ! -e "$W/ioacct-$J5.json" ] || fail "job $J5: a report while PostgreSQL was down"
pg_start "$MC/pg" || fail "PostgreSQL did not start again"
tpg=$(date +%s)
wait_file "$W/ioacct-$J5.json" 120 || { ls -l "$W"; dump_log; fail "job $J5: no report 120 s after PostgreSQL came back"; }
[ "$(json_key "$W/ioacct-$J5.json" missing_nodes)" = null ] || fail "job $J5: names missing nodes after PostgreSQL's return"
check_nodes "$J5" "$W/ioacct-$J5.json" "" "mc1 $WMNT 5000" "mc2 $WMNT 10000" "mc3 $F 15000"
for k in 1 2 3; do
	wait_exported "$MC/mc$k/ioacct.db" "mc$k"
	compare_stores "$MC/mc$k/ioacct.db" "mc$k" "node mc$k"
done
files=$(cd "$W" && ls ioacct-"$J5"* | sort | tr '\n' ' ')
[ "$files" = "ioacct-$J5.json " ] || fail "job $J5: report files '$files'"
ok "job $J5: PostgreSQL down 30 s from before the job's end: one report $(($(date +%s) - tpg)) s after its return, every byte once (5000, 10000, 15000)"

# ---- 3. mc3's ioacctd down past merge_timeout ----------------------------------------------
kill -9 "$(cat "$MC/mc3/ioacctd.pid")" || fail "cannot kill mc3's ioacctd"
cat > "$W/job3.sh" <<JOB
#!/bin/bash
srun -N1 -n1 -w mc1 $IOWORK write $W/a3.dat 1000 2
srun -N1 -n1 -w mc2 $IOWORK write $W/b3.dat 2000 2
srun -N1 -n1 -w mc3 $IOWORK write $W/c3.dat 3000 2
JOB
chmod 755 "$W/job3.sh"
t0=$(date +%s)
# Output to /dev/null: mc3's task says on stderr that it is not monitored, which srun on mc1 would
# write to the work dir. The report goes to the working directory then (%w).
J3=$(submit_as "$U" -N 3 --io-monitor=format=text,json --chdir="$W" -o /dev/null "$W/job3.sh")
state=$(wait_job "$J3" 60)
t1=$(date +%s)
[ "$state" = COMPLETED ] || fail "job $J3 ended $state"
[ $((t1 - t0)) -lt "$TIMEOUT" ] || fail "job $J3 took $((t1 - t0)) s: held up by the missing node"
[ ! -e "$W/ioacct-$J3.json" ] || fail "job $J3: report written before merge_timeout"
wait_file "$W/ioacct-$J3.json" $((TIMEOUT + 30)) && wait_file "$W/ioacct-$J3.txt" 5 ||
	{ ls -l "$W"; fail "job $J3: no report $((TIMEOUT + 30)) s after the job"; }
t2=$(date +%s)
[ $((t2 - t0)) -ge "$TIMEOUT" ] || fail "job $J3: report after $((t2 - t0)) s, before merge_timeout"
[ "$(json_key "$W/ioacct-$J3.json" missing_nodes)" = '["mc3"]' ] || fail "job $J3: JSON missing_nodes not [\"mc3\"]"
grep -qF "missing nodes: mc3 (no data within $TIMEOUT s of the first node)" "$W/ioacct-$J3.txt" ||
	{ cat "$W/ioacct-$J3.txt"; fail "job $J3: the text report does not name mc3 as missing"; }
check_nodes "$J3" "$W/ioacct-$J3.json" "$W/ioacct-$J3.txt" "mc1 $WMNT 2000" "mc2 $WMNT 4000"
[ "$(json_mount "$W/ioacct-$J3.json" "$WMNT")" = 6000 ] || fail "job $J3: not exactly mc1's and mc2's 6000 bytes"
[ "$(pg "SELECT array_to_string(missing, ',') FROM job_reports WHERE job_id = $J3")" = mc3 ] ||
	fail "job $J3: job_reports does not record mc3 missing"
files=$(cd "$W" && ls ioacct-"$J3"* | sort | tr '\n' ' ')
[ "$files" = "ioacct-$J3.json ioacct-$J3.txt " ] || fail "job $J3: report files '$files'"
ok "job $J3: mc3 down; COMPLETED in $((t1 - t0)) s, report after $((t2 - t0)) s naming mc3 missing, exactly 6000 bytes"
exit 0
