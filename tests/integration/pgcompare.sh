# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# For the tests of the cluster store: reading PostgreSQL, and comparing it with
# a node's SQLite store row by row. Sourced after lib.sh and scripts/pg.sh;
# needs $PGBIN and $PGURL (pg_init) and sqlite3.

# The cluster store's schema version this tree migrates to (lib/store/pgstore.h).
PG_SCHEMA=$(sed -n 's/^#define IOACCT_PGSTORE_SCHEMA_VERSION \([0-9]*\)$/\1/p' \
	"$(dirname "${BASH_SOURCE[0]}")/../../lib/store/pgstore.h")

# require_pg: skips unless a private PostgreSQL can run here and ioacctd
# exports to it (the server, its user, sqlite3, runuser, a build with libpq).
require_pg() {
	pg_find_bin || skip "PostgreSQL server not installed (Debian: postgresql)"
	id postgres > /dev/null 2>&1 || skip "no postgres user (Debian: postgresql)"
	command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
	command -v runuser > /dev/null || skip "runuser is needed to run PostgreSQL as postgres"
	grep -q '^#define HAVE_LIBPQ 1' "$abs_top_builddir/ioacct-config.h" ||
		skip "ioacctd was built without libpq (Debian: libpq-dev, then rebuild)"
}

# pg_test_setup [CONF LINES]: a private PostgreSQL in $PGD as the cluster
# store of the test's daemon (CONF LINES added to its configuration), setup,
# both torn down at exit; DB the node's store, D a directory for the jobs'
# files on mount MNT. The daemon is not started.
pg_test_setup() {
	PGD=$(mktemp -d /var/tmp/ioacct-pg.XXXXXX)
	chmod 755 "$PGD"
	EXTRA_CONF="cluster_db = $(pg_url "$PGD")${1:+
$1}"
	setup
	trap 'rc=$?; stop_daemon; pg_stop "$PGD"; rm -rf "$PGD"; (exit $rc); teardown' EXIT
	pg_init "$PGD" || fail "cannot start PostgreSQL in $PGD"
	DB=$T/ioacct.db
	D=$T/files
	mkdir -p "$D"
	MNT=$(mount_of "$D")
}

# node2_setup NAME [CONF LINES]: a second node's ioacctd on this machine, node_name NAME,
# with the cluster store of $PGD and everything else its own, in N2 ($T/NAME: its socket,
# store, pidfile, log), PIN2 and CG2 (CONF LINES added to CONF2, its configuration). Not
# started: start_node2, stop_node2; node2_remove removes its pins and cgroups (for the
# caller's EXIT trap, after stop_node2).
node2_setup() {
	N2=$T/$1
	PIN2=$PIN-$1
	CG2=ioacct-test-$$-$1
	D2_PID=
	mkdir -p "$N2"
	CONF2=$N2/ioacct.conf
	cat > "$CONF2" << CONF
socket = $N2/ioacctd.sock
db = $N2/ioacct.db
pidfile = $N2/ioacctd.pid
bpf_pin_dir = $PIN2
cgroup_parent = $CG2
drain_interval = 0.2
cluster_db = $(pg_url "$PGD")
node_name = $1
${2:-}
CONF
}
start_node2() {
	"$IOACCTD" -f -c "$CONF2" -v >> "$N2/ioacctd.log" 2>&1 &
	D2_PID=$!
	for _ in $(seq 1 2400); do
		"$IOPOKE" "$N2/ioacctd.sock" status 2> /dev/null | grep -q '^status=0' && return 0
		kill -0 "$D2_PID" 2> /dev/null || { tail "$N2/ioacctd.log"; fail "ioacctd $N2 exited at start"; }
		sleep 0.05
	done
	fail "ioacctd $N2 did not answer in 120 s"
}
stop_node2() {
	[ -n "${D2_PID:-}" ] || return 0
	kill -TERM "$D2_PID" 2>/dev/null
	wait "$D2_PID" 2>/dev/null
	D2_PID=
}
node2_remove() {
	[ -n "${PIN2:-}" ] || return 0
	rm -rf "$PIN2" 2>/dev/null
	for d in /sys/fs/cgroup/unified/$CG2 /sys/fs/cgroup/*/$CG2; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# pg SQL: the rows of a query, fields separated by '|', no headers.
pg() { "$PGBIN/psql" -X -q -At -F '|' "$PGURL" -c "$1"; }

# wait_exported DB LABEL: the SQLite store DB's outbox empties within 60 s.
wait_exported() {
	local n
	for _ in $(seq 1 600); do
		n=$(sqlite3 "$1" 'SELECT count(*) FROM export_queue')
		[ "$n" = 0 ] && return 0
		sleep 0.1
	done
	fail "$2: $n jobs still wait for the cluster store after 60 s"
}

# The counter columns, as IOACCT_STORE_COUNTER_COLS has them.
COUNTERS="bytes, calls, errors, ns, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9"

# compare_stores DB NODE LABEL: every finished job of the SQLite store DB, with
# its steps, mounts, totals and series, is in PostgreSQL exactly once, and
# PostgreSQL has nothing else for NODE (for every node when NODE is empty).
# Both sides are printed in one canonical text form and must be equal.
compare_stores() {
	local db=$1 node=$2 label=$3 what cols from_sqlite from_pg
	local head="j.cluster, j.job_id, j.node, j.start_ns"
	for what in jobs steps mounts totals series; do
		case $what in
		jobs) cols="j.end_ns, j.state, j.exit_code, j.uid, j.gid, j.USER_COL, j.name, j.workdir, j.source, j.probe_mode, j.bin_width_ns, j.dropped_events, j.dropped_bytes, j.array_job_id, j.array_task_id" ;;
		steps) cols="c.step_id, c.start_ns, c.end_ns, c.state, c.exit_code, c.cgroup" ;;
		mounts) cols="c.mnt_id, c.path, c.fstype, c.source" ;;
		totals) cols="c.step_id, c.mnt_id, c.op, $COUNTERS" ;;
		series) cols="c.step_id, c.mnt_id, c.op, c.bin, $COUNTERS" ;;
		esac
		if [ $what = jobs ]; then
			from_sqlite="FROM jobs j"
			from_pg="FROM jobs j"
		else
			from_sqlite="FROM $what c JOIN jobs j ON j.key = c.job_key"
			# The series are arrays, one row per (job, step, mount, op): unnested by the view.
			from_pg="FROM ${what/series/series_bins} c JOIN jobs j ON j.id = c.job"
		fi
		# user is a reserved word in PostgreSQL only. LC_ALL=C: both sides sorted alike.
		sqlite3 -separator '|' "$db" \
			"SELECT $head, ${cols/USER_COL/user} $from_sqlite WHERE j.end_ns IS NOT NULL" \
			> "$T/sqlite-$what.raw" || fail "$label: sqlite3 cannot read the $what of $db"
		# A series counter 0 in every bin is NULL in PostgreSQL (schema 6).
		[ $what = series ] && cols="c.step_id, c.mnt_id, c.op, c.bin, $(echo "$COUNTERS" | sed -E 's/([a-z0-9_]+)/coalesce(\1, 0)/g')"
		pg "SELECT $head, ${cols/USER_COL/\"user\"} $from_pg ${node:+WHERE j.node = '$node'}" \
			> "$T/pg-$what.raw" || fail "$label: psql cannot read the $what"
		LC_ALL=C sort "$T/sqlite-$what.raw" > "$T/sqlite-$what"
		LC_ALL=C sort "$T/pg-$what.raw" > "$T/pg-$what"
		[ -s "$T/sqlite-$what" ] || fail "$label: no $what in the SQLite store $db"
		diff "$T/sqlite-$what" "$T/pg-$what" > "$T/diff-$what" ||
			{ head -n 20 "$T/diff-$what"; fail "$label: PostgreSQL's $what${node:+ of node $node} differ from $db"; }
	done
	ok "$label: PostgreSQL${node:+ (node $node)} holds exactly $db: $(wc -l < "$T/sqlite-jobs") jobs, $(wc -l < "$T/sqlite-series") series rows"
}

# pg_back_to_schema20: puts a cluster store of schema $PG_SCHEMA back to schema 20 with its
# data, as schema 20 stored it: HDF5 records without their selection kinds and chunk sizes
# (schema 21), every later version forgotten.
pg_back_to_schema20() {
	pg "BEGIN;
	    ALTER TABLE hdf5_records DROP COLUMN regular_hyperslab_selects,
	      DROP COLUMN irregular_hyperslab_selects, DROP COLUMN point_selects,
	      DROP COLUMN unknown_selects, DROP COLUMN chunk_known, DROP COLUMN chunk_size_d1,
	      DROP COLUMN chunk_size_d2, DROP COLUMN chunk_size_d3, DROP COLUMN chunk_size_d4,
	      DROP COLUMN chunk_size_d5;
	    DELETE FROM ioacct_schema WHERE version > 20;
	    COMMIT" > /dev/null
}

# pg_back_to_schema19: puts a cluster store of schema $PG_SCHEMA back to schema 19 with its
# data, as schema 19 stored it: no RPC rows (schema 20: rpc and jobs.rpc_kept gone), the
# functions ioacct_block_parts and ioacct_job_gone of schema 18, every later version forgotten.
pg_back_to_schema19() {
	pg_back_to_schema20 || return 1
	pg "BEGIN;
	    $(block_parts_sql "'series', 'totals', 'files', 'mpiio_files', 'steps', 'mounts', 'hdf5_records'")
	    CREATE OR REPLACE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
	     IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN
	      DELETE FROM series WHERE job = OLD.id; DELETE FROM totals WHERE job = OLD.id;
	      DELETE FROM files WHERE job = OLD.id; DELETE FROM mpiio_files WHERE job = OLD.id;
	      DELETE FROM steps WHERE job = OLD.id; DELETE FROM mounts WHERE job = OLD.id;
	      DELETE FROM hdf5_records WHERE job = OLD.id;
	     END IF; RETURN NULL; END\$\$;
	    DROP TABLE rpc;
	    ALTER TABLE jobs DROP COLUMN rpc_kept;
	    DELETE FROM ioacct_schema WHERE version > 19;
	    COMMIT" > /dev/null
}

# pg_back_to_schema18: puts a cluster store of schema $PG_SCHEMA back to schema 18 with its
# data, as schema 18 stored it: HDF5 records without their times and dataspaces (schema 19), every later
# version forgotten.
pg_back_to_schema18() {
	pg_back_to_schema19 || return 1
	pg "BEGIN;
	    ALTER TABLE hdf5_records DROP COLUMN open_start_ns, DROP COLUMN open_end_ns,
	      DROP COLUMN read_start_ns, DROP COLUMN read_end_ns, DROP COLUMN write_start_ns,
	      DROP COLUMN write_end_ns, DROP COLUMN close_start_ns, DROP COLUMN close_end_ns,
	      DROP COLUMN max_read_ns, DROP COLUMN max_read_size, DROP COLUMN max_write_ns,
	      DROP COLUMN max_write_size, DROP COLUMN dataspace_ndims, DROP COLUMN dataspace_npoints,
	      DROP COLUMN use_mpiio, DROP COLUMN use_mpiio_collective;
	    DELETE FROM ioacct_schema WHERE version > 18;
	    COMMIT" > /dev/null
}

# pg_back_to_schema17: puts a cluster store of schema $PG_SCHEMA back to schema 17 with its
# data, as schema 17 stored it: no HDF5 records (schema 18: hdf5_records and jobs.h5_kept
# gone), the functions ioacct_block_parts and ioacct_job_gone of schema 10, every later
# version forgotten.
# block_parts_sql TABLES: ioacct_block_parts() as an older schema had it, making
# the monthly partitions of TABLES (a SQL list of quoted names).
block_parts_sql() {
	cat <<SQL
CREATE OR REPLACE FUNCTION ioacct_block_parts(b integer) RETURNS void LANGUAGE plpgsql AS \$\$
	    DECLARE t text; n text; BEGIN
	     FOREACH t IN ARRAY ARRAY[$1] LOOP
	      n := t || '_' || ioacct_block_name(b);
	      CONTINUE WHEN to_regclass(quote_ident(n)) IS NOT NULL;
	      PERFORM pg_advisory_xact_lock(730804912, b);
	      BEGIN
	       EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)',
		n, t, b::bigint << 33, (b + 1)::bigint << 33);
	      EXCEPTION WHEN duplicate_table OR invalid_object_definition THEN NULL;
	      END;
	      IF t = 'series' THEN
	       EXECUTE format('ALTER TABLE %I SET (toast_tuple_target = 128)', n);
	      END IF;
	     END LOOP;
	    END\$\$;
SQL
}

pg_back_to_schema17() {
	pg_back_to_schema19 || return 1
	pg "BEGIN;
	    $(block_parts_sql "'series', 'totals', 'files', 'mpiio_files', 'steps', 'mounts'")
	    CREATE OR REPLACE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
	     IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN
	      DELETE FROM series WHERE job = OLD.id; DELETE FROM totals WHERE job = OLD.id;
	      DELETE FROM files WHERE job = OLD.id; DELETE FROM mpiio_files WHERE job = OLD.id;
	      DELETE FROM steps WHERE job = OLD.id; DELETE FROM mounts WHERE job = OLD.id;
	     END IF; RETURN NULL; END\$\$;
	    DROP TABLE hdf5_records;
	    ALTER TABLE jobs DROP COLUMN h5_kept;
	    DELETE FROM ioacct_schema WHERE version > 17;
	    COMMIT" > /dev/null
}

# pg_back_to_schema11: puts a cluster store of schema $PG_SCHEMA back to schema 11 with its
# data, as schema 11 stored it: no run_start (schema 13), cmdline (schema 14) nor
# lib_opens_missed (schema 17) in jobs,
# job_reports (the last run's row of a job id kept), files' lives and counters (schema 12) and the merged series (dropped: made again at the next whole read), the
# trigger of schema 8, every later version forgotten.
pg_back_to_schema11() {
	pg_back_to_schema17 || return 1
	pg "BEGIN;
	    DROP TABLE merged_series; DROP TABLE merged_jobs;
	    CREATE TABLE merged_jobs (cluster text NOT NULL, job_id bigint NOT NULL,
	      restart integer NOT NULL, members text[] NOT NULL, made_at timestamptz NOT NULL DEFAULT now(),
	      PRIMARY KEY (cluster, job_id, restart));
	    CREATE TABLE merged_series (cluster text NOT NULL, job_id bigint NOT NULL,
	      restart integer NOT NULL, step_id bigint NOT NULL, mnt_id bigint NOT NULL, op smallint NOT NULL,
	      bins integer[] NOT NULL, PRIMARY KEY (cluster, job_id, restart, step_id, mnt_id, op),
	      FOREIGN KEY (cluster, job_id, restart) REFERENCES merged_jobs ON DELETE CASCADE);
	    ALTER TABLE merged_series SET (toast_tuple_target = 128);
	    DELETE FROM job_reports r WHERE EXISTS (SELECT 1 FROM job_reports o WHERE o.cluster = r.cluster
	      AND o.job_id = r.job_id AND o.restart = r.restart AND o.run_start > r.run_start);
	    ALTER TABLE job_reports DROP CONSTRAINT job_reports_pkey;
	    ALTER TABLE job_reports DROP COLUMN run_start;
	    ALTER TABLE job_reports ADD PRIMARY KEY (cluster, job_id, restart);
	    CREATE OR REPLACE FUNCTION ioacct_job_place() RETURNS trigger LANGUAGE plpgsql AS \$\$
	    DECLARE b integer := ioacct_block(NEW.end_ns); BEGIN
	     PERFORM pg_advisory_xact_lock_shared(730804912, b);
	     IF EXISTS (SELECT 1 FROM purging p WHERE p.block = b) THEN b := 1023; END IF;
	     PERFORM ioacct_block_parts(b);
	     NEW.id := (b::bigint << 33) + nextval('jobs_id_seq');
	     RETURN NEW;
	    END\$\$;
	    DROP FUNCTION ioacct_run_of(text, bigint, integer, text, bigint, bigint);
	    DROP INDEX jobs_run;
	    ALTER TABLE jobs DROP COLUMN run_start;
	    ALTER TABLE jobs DROP COLUMN cmdline;
	    ALTER TABLE jobs DROP COLUMN lib_opens_missed;
	    CREATE INDEX jobs_cluster_job_id_run ON jobs (cluster, job_id, restart);
	    ALTER TABLE files DROP CONSTRAINT files_pkey;
	    ALTER TABLE files DROP COLUMN gen, DROP COLUMN rw_switches, DROP COLUMN access1,
	      DROP COLUMN access2, DROP COLUMN access3, DROP COLUMN access4, DROP COLUMN access1_count,
	      DROP COLUMN access2_count, DROP COLUMN access3_count, DROP COLUMN access4_count;
	    ALTER TABLE files ADD PRIMARY KEY (job, step_id, rank, mnt_id, dev, ino);
	    DELETE FROM ioacct_schema WHERE version > 11;
	    COMMIT" > /dev/null
}

# pg_back_to_schema8: puts a cluster store of schema $PG_SCHEMA back to schema 8 with its data, as
# schema 8 stored it: no per-file or MPI-IO records (schema 9: their tables and
# jobs.files_kept gone), steps and mounts one table each (not partitioned by month: schema
# 10) with their foreign keys, the trigger and functions of schema 8, versions 9 to 12
# forgotten.
pg_back_to_schema8() {
	pg_back_to_schema11 || return 1
	pg "BEGIN;
	    DROP TABLE files, mpiio_files;
	    ALTER TABLE jobs DROP COLUMN files_kept;
	    CREATE TABLE steps8 (LIKE steps INCLUDING DEFAULTS); INSERT INTO steps8 SELECT * FROM steps;
	    CREATE TABLE mounts8 (LIKE mounts INCLUDING DEFAULTS); INSERT INTO mounts8 SELECT * FROM mounts;
	    DROP TABLE steps, mounts;
	    ALTER TABLE steps8 RENAME TO steps; ALTER TABLE mounts8 RENAME TO mounts;
	    ALTER TABLE steps ADD CONSTRAINT steps_pkey PRIMARY KEY (job, step_id),
	      ADD CONSTRAINT steps_job_fkey FOREIGN KEY (job) REFERENCES jobs(id)
	      ON DELETE CASCADE ON UPDATE CASCADE;
	    ALTER TABLE mounts ADD CONSTRAINT mounts_pkey PRIMARY KEY (job, mnt_id),
	      ADD CONSTRAINT mounts_job_fkey FOREIGN KEY (job) REFERENCES jobs(id)
	      ON DELETE CASCADE ON UPDATE CASCADE;
	    CREATE OR REPLACE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
	      IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN
	       DELETE FROM series WHERE job = OLD.id; DELETE FROM totals WHERE job = OLD.id;
	      END IF; RETURN NULL; END\$\$;
	    DROP TRIGGER jobs_gone ON jobs;
	    CREATE TRIGGER jobs_gone AFTER DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION ioacct_job_gone();
	    $(block_parts_sql "'series', 'totals'")
	    DELETE FROM ioacct_schema WHERE version > 8;
	    COMMIT" > /dev/null
}

# pg_back_to_schema7: puts a schema-12 cluster store back to schema 7 with its data, as
# schema 7 stored it: series and totals one table each (not partitioned by month) with
# their foreign keys, job ids a plain sequence again (the block bits off), no triggers,
# version 8 forgotten. The next ioacctd to connect migrates it again.
pg_back_to_schema7() {
	pg_back_to_schema8 || return 1
	pg "BEGIN;
	    DROP TRIGGER jobs_place ON jobs; DROP TRIGGER jobs_gone ON jobs; DROP VIEW series_bins;
	    CREATE TABLE series7 (LIKE series INCLUDING DEFAULTS); INSERT INTO series7 SELECT * FROM series;
	    CREATE TABLE totals7 (LIKE totals INCLUDING DEFAULTS); INSERT INTO totals7 SELECT * FROM totals;
	    DROP TABLE series, totals;
	    UPDATE jobs SET id = id & 8589934591;
	    UPDATE series7 SET job = job & 8589934591; UPDATE totals7 SET job = job & 8589934591;
	    ALTER TABLE series7 RENAME TO series; ALTER TABLE totals7 RENAME TO totals;
	    ALTER TABLE series ADD CONSTRAINT series_pkey PRIMARY KEY (job, step_id, mnt_id, op),
	      ADD CONSTRAINT series_job_fkey FOREIGN KEY (job) REFERENCES jobs(id) ON DELETE CASCADE,
	      SET (toast_tuple_target = 128);
	    ALTER TABLE totals ADD CONSTRAINT totals_pkey PRIMARY KEY (job, step_id, mnt_id, op),
	      ADD CONSTRAINT totals_job_fkey FOREIGN KEY (job) REFERENCES jobs(id) ON DELETE CASCADE;
	    ALTER TABLE steps DROP CONSTRAINT steps_job_fkey, ADD CONSTRAINT steps_job_fkey
	      FOREIGN KEY (job) REFERENCES jobs(id) ON DELETE CASCADE;
	    ALTER TABLE mounts DROP CONSTRAINT mounts_job_fkey, ADD CONSTRAINT mounts_job_fkey
	      FOREIGN KEY (job) REFERENCES jobs(id) ON DELETE CASCADE;
	    ALTER TABLE jobs ALTER COLUMN id SET DEFAULT nextval('jobs_id_seq');
	    DROP TABLE purging;
	    DROP FUNCTION ioacct_job_place(), ioacct_job_gone(), ioacct_block_parts(integer),
	      ioacct_block_name(integer), ioacct_block(bigint);
	    SELECT ioacct_series_view();
	    DELETE FROM ioacct_schema WHERE version = 8;
	    COMMIT" > /dev/null
}

# pg_back_to_schema5: puts a schema-10 cluster store back to schema 5 with its data, as
# schema 5 stored it: the series one row per bin (numeric counters, 0 for none), the
# arrays, their view and its function gone, the merged series (schema 7) too, versions 6
# and 7 forgotten. The next ioacctd to
# connect migrates it again.
pg_back_to_schema5() {
	local cols
	pg_back_to_schema7 || return 1
	cols=$(pg "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns
		   WHERE table_schema = current_schema() AND table_name = 'series'
		   AND column_name NOT IN ('job', 'step_id', 'mnt_id', 'op', 'bins')") || return 1
	pg "CREATE TABLE series5 (job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	      step_id bigint NOT NULL, mnt_id bigint NOT NULL, op smallint NOT NULL, bin integer NOT NULL,
	      PRIMARY KEY (job, step_id, mnt_id, op, bin));
	    DO \$\$DECLARE c text; BEGIN FOR c IN SELECT unnest(string_to_array('$cols', ', ')) LOOP
	      EXECUTE format('ALTER TABLE series5 ADD COLUMN %I numeric(20,0) NOT NULL DEFAULT 0', c);
	    END LOOP; END\$\$;
	    INSERT INTO series5 (job, step_id, mnt_id, op, bin, $cols)
	      SELECT job, step_id, mnt_id, op, bin, $(echo "$cols" | sed -E 's/([a-z0-9_]+)/coalesce(\1, 0)/g') FROM series_bins;
	    DROP VIEW series_bins; DROP FUNCTION ioacct_series_view(); DROP TABLE series;
	    DROP TABLE merged_series; DROP TABLE merged_jobs;
	    ALTER TABLE series5 RENAME TO series;
	    ALTER TABLE series RENAME CONSTRAINT series5_pkey TO series_pkey;
	    ALTER TABLE series RENAME CONSTRAINT series5_job_fkey TO series_job_fkey;
	    DELETE FROM ioacct_schema WHERE version IN (6, 7)" > /dev/null
}

# Jobs of iorun writing to $D (on mount $MNT), for the tests of exports:
# pg_write_bytes JOB: what PostgreSQL has the job write on $MNT, over all its copies.
pg_write_bytes() {
	pg "SELECT coalesce(sum(t.bytes), 0) FROM totals t JOIN jobs j ON j.id = t.job
	    JOIN mounts m ON m.job = t.job AND m.mnt_id = t.mnt_id
	    WHERE j.job_id = $1 AND t.op = 1 AND m.path = '$MNT'"
}
# pg_copies JOB: how many rows of jobs PostgreSQL has of the job id.
pg_copies() { pg "SELECT count(*) FROM jobs WHERE job_id = $1"; }

# run_job ID SIZE COUNT: an iorun job writing COUNT x SIZE bytes to $D; its report must be exact.
run_job() {
	"$IORUN" --job-id "$1" --json -o "$T/job-$1.json" -- "$IOWORK" write "$D/f$1" "$2" "$3" ||
		fail "iorun job $1 failed"
	local got
	got=$(json_get "$T/job-$1.json" "[m['write_bytes'] for m in j['mounts'] if m['mount'] == '$MNT'][0]")
	[ "$got" = $(($2 * $3)) ] || fail "job $1: the report says $got bytes written, not $(($2 * $3))"
}

# pg_parts FIRST LAST NODES END [FROM]: parts of runs FIRST..LAST of cluster c on each of NODES
# (n1 or n1,n2: one transaction, which a daemon's purge sees whole or not at all) ended at
# END + k seconds (an SQL timestamp), started an hour before (or an hour before FROM + k
# seconds: a run's part that spans months, so that it meets its other node's, issue 36), each
# with a step, a mount, a totals and a series row (3 x 4096 bytes), made in SQL; their
# month's partitions made first.
pg_parts() {
	pg "SELECT ioacct_block_parts(ioacct_block((extract(epoch FROM $4)::bigint + $2 % 1000) * 1000000000));
	    INSERT INTO jobs (cluster, job_id, node, source, uid, gid, \"user\", name, workdir, start_ns, end_ns,
		state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)
	    SELECT 'c', k, n, 'slurm', 0, 0, 'root', 'x', '/', s, e, 'COMPLETED', 0,
		'fentry', 5000000000, 0, 0
	    FROM generate_series($1, $2) k, unnest(string_to_array('$3', ',')) n,
		LATERAL (SELECT (extract(epoch FROM $4)::bigint + k % 1000) * 1000000000 AS e,
		(extract(epoch FROM ${5:-$4})::bigint + k % 1000) * 1000000000 - 3600000000000 AS s) x;
	    INSERT INTO steps SELECT id, 0, start_ns, end_ns, 'COMPLETED', 0, '' FROM jobs
		WHERE job_id BETWEEN $1 AND $2 AND node = ANY (string_to_array('$3', ','));
	    INSERT INTO mounts SELECT id, 1, '/', 'ext4', 'sda' FROM jobs
		WHERE job_id BETWEEN $1 AND $2 AND node = ANY (string_to_array('$3', ','));
	    INSERT INTO totals (job, step_id, mnt_id, op, bytes, calls) SELECT id, 0, 1, 1, 12288, 3 FROM jobs
		WHERE job_id BETWEEN $1 AND $2 AND node = ANY (string_to_array('$3', ','));
	    INSERT INTO series (job, step_id, mnt_id, op, bins, bytes, calls) SELECT id, 0, 1, 1, '{0,7,9}',
		'{4096,4096,4096}', '{1,1,1}' FROM jobs WHERE job_id BETWEEN $1 AND $2 AND node = ANY (string_to_array('$3', ','))" > /dev/null ||
		fail "cannot make the parts of runs $1-$2 on $3"
}
