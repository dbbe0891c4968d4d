#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Retention with the real daemon (issue 28). 1000 jobs that ended 40 days ago
# are purged at the daemon's start while its socket answers and a job runs.
# bin_width = 0.2, downsample_after
# = 3s to 1 s bins, purge_after = 20s, looked at every second. A job writes
# 20 x 4 KiB in two bursts 1.2 s apart (after that purge, and another job
# runs during it): it is downsampled (1 s bins, its first
# width kept, the same bytes in ioacct and in its reports), then purged (ioacct
# -j finds nothing, ioreport says there is no such job), with both logged.
# ioacct --purge --dry-run says what would go and changes nothing; ioacct
# --purge deletes it; a running job is never purged. Last, ioacct --purge of a
# synthetic store of 1000 jobs killed with SIGKILL in its fifth batch leaves
# every job whole or gone (retain_store.py checks every table).
. "$(dirname "$0")/lib.sh"
require_root_bpf
EXTRA_CONF="bin_width = 0.2
downsample_after = 3s
downsample_width = 1s
purge_after = 20s
retention_interval = 1s"
setup
IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport
DB=$T/ioacct.db
D=$T/data
mkdir -p "$D"

# sql QUERY: one value from the store (or from $SQLDB), read-only beside the daemon.
sql() {
	python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
r = db.execute(sys.argv[2]).fetchone()
print("" if r is None or r[0] is None else r[0])' "${SQLDB:-$DB}" "$1"
}

# snapshot COPY: a consistent copy of the store (SQLite's online backup).
snapshot() {
	python3 -c 'import sqlite3, sys
src = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
dst = sqlite3.connect(sys.argv[2])
src.backup(dst)
dst.close()' "$DB" "$1"
}

# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, polling every 0.1 s.
wait_for() {
	local what=$1 n=$(($2 * 10))
	shift 2
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	fail "$what: not within the time allowed"
}

# write_bytes JOB [OPTION...]
write_bytes() {
	"$IOACCT" -j "$1" -X -n -P -o WriteBytes "${@:2}"
}

# 1000 jobs that ended 40 days ago (800 series rows each) in the store before
# the daemon starts: its first round purges them while its socket answers and
# a job runs, exactly counted.
"$IOACCT" --purge --db "$DB" --before 1day > /dev/null || fail "ioacct --purge could not make $DB"
python3 "$(dirname "$0")/retain_store.py" fill "$DB" 1000 100 40 > /dev/null || fail "cannot fill $DB"
start_daemon
# The job that runs during the purge: it writes, waits for a byte on its
# standard input (sent once the purge is over), writes again.
mkfifo "$T/go"
"$IORUN" --json -o "$T/r.json" -- "$IOWORK" write "$D/r1" 4096 3 , wait , write "$D/r2" 4096 2 \
	< "$T/go" > /dev/null &
JOBPID=$!
exec 7> "$T/go"
# The socket answers while the purge goes on: statuses answered before the
# daemon logged the purge's end (its retention thread starts the purge at
# once). Not told by counting the jobs left: one read of the store took as
# long as the whole purge here (4.7 s).
# No bound on the time: this test runs beside the whole suite; the figure is said.
purge_logged() { grep -q "retention: purged 1000 jobs" "$T/ioacctd.log"; }
MAXMS=0 MID=0
for _ in $(seq 1 6000); do
	purge_logged && break
	t0=$(date +%s%N)
	"$IOPOKE" "$T/ioacctd.sock" status | grep -q '^status=0' || fail "status failed during the purge"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -le "$MAXMS" ] || MAXMS=$ms
	purge_logged || MID=$((MID + 1))
	sleep 0.02
done
[ "$(sql "SELECT count(*) FROM jobs WHERE job_id >= 900000")" = 0 ] || fail "the 1000 old jobs were not purged"
echo >&7
exec 7>&-
wait "$JOBPID" || fail "iorun failed"
[ "$(json_get "$T/r.json" 'sum(m["write_bytes"] for m in j["mounts"])')" = 20480 ] ||
	fail "the job that ran during the purge: its report does not say 20480 bytes written"
grep -q "retention: purged 1000 jobs ended more than 20s ago (800000 series rows" "$T/ioacctd.log" ||
	fail "the purge of the 1000 old jobs was not logged"
[ "$MID" -gt 0 ] || fail "no status was answered while the purge went on"
ok "1000 old jobs purged at start, $MID statuses answered meanwhile (the slowest in $MAXMS ms), a job running exact"
# The job downsampled and purged below starts after that purge: purge_after
# (20 s) counts from its end, and the big purge took longer than that beside
# the whole suite (job 1 was gone before it was looked at).
"$IORUN" --json -o "$T/a.json" -- "$IOWORK" write "$D/a" 4096 10 , sleep 1.2 , \
	write "$D/b" 4096 10 > /dev/null || fail "iorun failed"
JOB=$(json_get "$T/a.json" 'j["job_id"]')
KEY=$(sql "SELECT key FROM jobs WHERE job_id = $JOB AND cluster = 'iorun'")
[ -n "$KEY" ] || fail "job $JOB not in the store"
[ "$(write_bytes "$JOB")" = 81920 ] || fail "job $JOB: $(write_bytes "$JOB") bytes written, not 81920"
# Where its last write fell, in ns from its start (its bin's start): 1.2 s or
# more (the sleep), and more beside a busy suite. Read with the bin width in one
# query: the downsample may have come already.
LASTNS=$(sql "SELECT max(s.bin) * j.bin_width_ns FROM series s JOIN jobs j ON j.key = s.job_key
	WHERE s.job_key = $KEY AND s.op = 1")
[ -n "$LASTNS" ] && [ "$LASTNS" -ge 1000000000 ] || fail "job $JOB: its last write bin starts at ${LASTNS:-?} ns, before 1 s"
ok "job $JOB wrote 81920 bytes in 0.2 s bins"

# Downsampled: 1 s bins, the first width kept, every byte still there. Looked
# at in a copy of the store taken once the daemon downsampled the job: it
# purges the job 20 s after its end, and beside the whole suite these checks
# took longer than the 17 s left (CI: "the series no longer sum to 81920 bytes").
downsampled() { [ "$(sql "SELECT orig_bin_width_ns FROM jobs WHERE key = $KEY")" = 200000000 ]; }
wait_for "downsample of job $JOB" 30 downsampled
SNAP=$T/downsampled.db
snapshot "$SNAP" || fail "cannot copy $DB"
SQLDB=$SNAP
downsampled || fail "job $JOB was purged before its downsampled store could be copied"
[ "$(sql "SELECT bin_width_ns FROM jobs WHERE key = $KEY")" = 1000000000 ] ||
	fail "job $JOB: bin width not 1 s after downsampling"
MAXBIN=$(sql "SELECT max(bin) FROM series WHERE job_key = $KEY AND op = 1")
[ "$MAXBIN" = $((LASTNS / 1000000000)) ] ||
	fail "job $JOB: write bins up to $MAXBIN in 1 s bins, not $((LASTNS / 1000000000)) (its last write at $LASTNS ns)"
[ "$(sql "SELECT sum(bytes) FROM series WHERE job_key = $KEY AND op = 1")" = 81920 ] ||
	fail "job $JOB: the series no longer sum to 81920 bytes"
[ "$(write_bytes "$JOB" --db "$SNAP")" = 81920 ] ||
	fail "job $JOB: ioacct says $(write_bytes "$JOB" --db "$SNAP") bytes after downsampling"
"$IOREPORT" --db "$SNAP" --cluster iorun -f json -o "$T/ds.json" "$JOB" || fail "ioreport of the downsampled job failed"
[ "$(json_get "$T/ds.json" 'j["bin_width_ns"]')" = 1000000000 ] ||
	fail "the report's bin width is not 1 s"
[ "$(json_get "$T/ds.json" 'j["downsampled_from_ns"]')" = 200000000 ] ||
	fail "the report does not say it was downsampled from 0.2 s bins"
[ "$(json_get "$T/ds.json" 'j["totals"]["ops"]["write"]["bytes"]')" = 81920 ] ||
	fail "the report's write bytes are not 81920"
"$IOREPORT" --db "$SNAP" --cluster iorun -o "$T/ds.txt" "$JOB" || fail "the text report of the downsampled job failed"
grep -Eq "^# bin width: 1(\.0+)?$" "$T/ds.txt" || fail "the text report does not say 1 s bins"
grep -Eq "^# downsampled from: 0\.20* " "$T/ds.txt" || fail "the text report does not say 0.2 s first"
NBINS=$(json_get "$T/ds.json" 'j["nbins"]')
[ "$NBINS" -gt "$MAXBIN" ] || fail "the report has $NBINS bins, its last write is in bin $MAXBIN"
grep -q "^## Bandwidth and IOPS per bin: $NBINS bins of 1.000 s" "$T/ds.txt" ||
	fail "the text report's bins are not $NBINS of 1 s"
grep -q "downsampled .*job" "$T/ioacctd.log" || fail "the daemon did not log the downsample"
ok "downsampled to 1 s bins, 81920 bytes in ioacct and the reports"
SQLDB=

# Purged by the daemon once it ended 20 s ago: in no query, no report.
purged() { [ "$(sql "SELECT count(*) FROM jobs WHERE key = $KEY")" = 0 ]; }
wait_for "purge of job $JOB" 60 purged
[ -z "$(write_bytes "$JOB")" ] || fail "ioacct -j $JOB still lists the purged job"
for t in steps mounts series totals files export_queue; do
	[ "$(sql "SELECT count(*) FROM $t WHERE job_key = $KEY")" = 0 ] || fail "purged job $JOB left rows in $t"
done
if "$IOREPORT" --cluster iorun -o "$T/gone.txt" "$JOB" 2> "$T/gone.err"; then
	fail "ioreport made a report of the purged job $JOB"
fi
cat "$T/gone.err"
grep -q "retention: purged 1 jobs ended more than 20s ago" "$T/ioacctd.log" ||
	fail "the daemon did not log the purge"
ok "job $JOB purged 20 s after its end: gone from ioacct, ioreport and every table, logged"

# By hand: a running job (iowork waits on its stdin) and a finished one.
mkfifo "$T/hold"
"$IORUN" -- "$IOWORK" write "$D/r" 1000 1 , wait < "$T/hold" > /dev/null 2>&1 &
RUNPID=$!
exec 7> "$T/hold"
running() { [ "$(sql "SELECT count(*) FROM jobs WHERE state = 'RUNNING'")" = 1 ]; }
wait_for "the running job's registration" 30 running
"$IORUN" -- "$IOWORK" write "$D/c" 1000 3 > /dev/null || fail "iorun (2) failed"
JOB2=$(sql "SELECT job_id FROM jobs WHERE cluster = 'iorun' AND state != 'RUNNING' ORDER BY key DESC LIMIT 1")
[ "$(write_bytes "$JOB2")" = 3000 ] || fail "job $JOB2: not 3000 bytes"

"$IOACCT" --purge --dry-run --before now+1hours > "$T/dry" || fail "ioacct --purge --dry-run failed"
cat "$T/dry"
grep -q "^would purge 1 jobs ended before" "$T/dry" || fail "the dry run does not say 1 job"
grep -q "^  user root (uid 0): 1 jobs" "$T/dry" || fail "the dry run has no per-user count"
[ "$(write_bytes "$JOB2")" = 3000 ] || fail "the dry run deleted job $JOB2"
"$IOACCT" --purge --before 1day > "$T/none" || fail "ioacct --purge --before 1day failed"
grep -q "^purged 0 jobs" "$T/none" || fail "a purge of jobs older than a day took some"
"$IOACCT" --purge --before now+1hours > "$T/purge" || fail "ioacct --purge failed"
cat "$T/purge"
grep -q "^purged 1 jobs" "$T/purge" || fail "ioacct --purge did not purge job $JOB2"
[ -z "$(write_bytes "$JOB2")" ] || fail "job $JOB2 is still listed after the purge"
running || fail "the running job was purged"
echo go >&7
exec 7>&-
wait "$RUNPID" || fail "the held job failed"
ok "ioacct --purge: the dry run changed nothing, the purge took the finished job, never the running one"

# kill -9 in the middle of a purge of a synthetic store of 1000 jobs of 800
# series rows: a batch ends at 25,000 rows, 32 jobs. ioacct --purge kills
# itself in its fifth batch (IOACCT_RETAIN_KILL_AT, tests only): the four
# batches before are gone, every other job whole, no row orphaned.
BIG=$T/big.db
"$IOACCT" --purge --db "$BIG" --before 1day > /dev/null || fail "ioacct --purge could not make $BIG"
ROWS=$(python3 "$(dirname "$0")/retain_store.py" fill "$BIG" 1000 100 40) || fail "cannot fill $BIG"
rc=0
IOACCT_RETAIN_KILL_AT=5 "$IOACCT" --purge --db "$BIG" --before 1day > /dev/null 2>&1 || rc=$?
[ "$rc" = 137 ] || fail "the purge set to be killed exited $rc, not 137 (SIGKILL)"
LEFT=$(python3 "$(dirname "$0")/retain_store.py" check "$BIG" "$ROWS") || fail "the store after kill -9: $LEFT"
[ "$LEFT" = $((1000 - 4 * 32)) ] || fail "$LEFT jobs left after kill -9 in batch 5, not $((1000 - 4 * 32))"
"$IOACCT" --purge --db "$BIG" --before 1day > "$T/rest" || fail "the purge after kill -9 failed"
grep -q "^purged $LEFT jobs ended before .* ($((LEFT * 800)) series rows" "$T/rest" ||
	fail "the purge after kill -9: $(cat "$T/rest")"
LEFT=$(python3 "$(dirname "$0")/retain_store.py" check "$BIG" "$ROWS") || fail "after the purge: $LEFT"
[ "$LEFT" = 0 ] || fail "$LEFT jobs left after the second purge"
ok "ioacct --purge killed with SIGKILL in batch 5: 872 jobs whole, none half there; then every one purged"
