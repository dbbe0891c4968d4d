/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL (see pgstore.h for the contract): the
 * connection (opened, the schema migrated, closed), errors, parameters and
 * SQL text, which every part uses (pgstore_db.h lists the parts). Without
 * libpq this file only says so.
 */
#include "pgstore.h"

#include <errno.h>
#include <stdio.h>

#ifndef HAVE_LIBPQ

bool ioacct_pgstore_available(void)
{
	return false;
}

void ioacct_pgstore_opts_config(struct ioacct_pgstore_opts *o, const struct ioacct_config *cfg,
				int stop_fd)
{
	*o = (struct ioacct_pgstore_opts)IOACCT_PGSTORE_OPTS_DEFAULT;
	o->stop_fd = stop_fd;
}

struct ioacct_pgstore *ioacct_pgstore_open(const char *conninfo,
					   const struct ioacct_pgstore_opts *opts, char *err,
					   size_t errlen)
{
	snprintf(err, errlen,
		 "cluster store: this ioacctd was built without libpq (Debian: libpq-dev; then rebuild): cluster_db is ignored");
	errno = ENOTSUP;
	return NULL;
}

void ioacct_pgstore_close(struct ioacct_pgstore *pg)
{
}

int ioacct_pgstore_conninfo_files(const char *conninfo, int (*add)(void *ctx, const char *path),
				  void *ctx)
{
	return 0;
}

const char *ioacct_pgstore_errmsg(const struct ioacct_pgstore *pg)
{
	return "built without libpq";
}

bool ioacct_pgstore_connected(const struct ioacct_pgstore *pg)
{
	return false;
}

int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	return -ENOTSUP;
}

int ioacct_pgstore_jobs_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
			    size_t n)
{
	return -ENOTSUP;
}

struct ioacct_pgstore *ioacct_pgstore_open_query(const char *conninfo, int timeout_ms,
						 const struct ioacct_pgstore_opts *opts, char *err,
						 size_t errlen)
{
	return ioacct_pgstore_open(conninfo, opts, err, errlen);
}

struct ioacct_pgstore *ioacct_pgstore_open_readonly(const char *conninfo,
						    const struct ioacct_pgstore_opts *opts,
						    char *err, size_t errlen)
{
	return ioacct_pgstore_open(conninfo, opts, err, errlen);
}

int ioacct_pgstore_jobs_select(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
			       bool peaks, ioacct_pgstore_job_fn fn, void *arg)
{
	return -ENOTSUP;
}

int ioacct_pgstore_job_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    uint32_t run, struct ioacct_jobdata **out)
{
	*out = NULL;
	return -ENOTSUP;
}

int ioacct_pgstore_report_offer(struct ioacct_pgstore *pg, const struct ioacct_job *job,
				const struct ioacct_report_spec *spec, uint32_t merge_timeout_s)
{
	return -ENOTSUP;
}

int ioacct_pgstore_run_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    uint32_t restart, int64_t run_start, struct ioacct_jobdata **out)
{
	*out = NULL;
	return -ENOTSUP;
}

int ioacct_pgstore_report_claim(struct ioacct_pgstore *pg, const struct ioacct_job *part,
				bool skip_locked, struct ioacct_pgstore_report *rep,
				struct ioacct_jobdata **jd)
{
	*jd = NULL;
	return -ENOTSUP;
}

int ioacct_pgstore_report_written(struct ioacct_pgstore *pg, const struct ioacct_job *part,
				  const char *missing)
{
	return -ENOTSUP;
}

void ioacct_pgstore_report_abort(struct ioacct_pgstore *pg)
{
}

#else /* HAVE_LIBPQ */

#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgstore_db.h"
#include "text.h"

/*
 * 13: a run is (cluster, job_id, restart, run_start) (issue 36): a job id
 * used again (iorun --job-id, Slurm's ids started again) is a new run,
 * never summed with the earlier one. A part's run_start is given as it goes
 * in (pgstore_db.h: ioacct_run_of under the run's lock in ioacct_job_place);
 * the parts stored before get theirs by the same rule: a job id's parts on
 * distinct nodes that all meet in time, the rule's one run, at once (the
 * earliest start names it); the others (an id used again, a node's second
 * part) part by part, oldest first. A report row becomes its job's last
 * run's; the merged series, made again at the next whole read, are
 * dropped and keyed by the run too.
 */
#define PG_MIGRATION_RUN_START                                                              \
	"ALTER TABLE jobs ADD COLUMN run_start bigint;"                                     \
	"CREATE FUNCTION ioacct_run_of(c text, j bigint, r integer, n text, s bigint,"      \
	" e bigint) RETURNS bigint LANGUAGE sql VOLATILE AS $$"                             \
	" SELECT coalesce((SELECT x.run_start FROM jobs x WHERE x.cluster = c"              \
	"  AND x.job_id = j AND x.restart = r AND x.run_start IS NOT NULL"                  \
	"  GROUP BY x.run_start HAVING bool_and(x.node <> n)"                              \
	"  AND min(x.start_ns) - " PG_RUN_SLACK_NS " <= coalesce(e, 9223372036854775807)"   \
	"  AND (bool_or(x.end_ns IS NULL) OR max(x.end_ns) + " PG_RUN_SLACK_NS " >= s)"     \
	"  ORDER BY x.run_start DESC LIMIT 1), s)$$;"                                       \
	"CREATE OR REPLACE FUNCTION ioacct_job_place() RETURNS trigger LANGUAGE plpgsql AS $$" \
	"DECLARE b integer := ioacct_block(NEW.end_ns); BEGIN"                              \
	" PERFORM pg_advisory_xact_lock_shared(" PG_BLOCK_LOCK ", b);"                       \
	" IF EXISTS (SELECT 1 FROM purging p WHERE p.block = b) THEN b := 1023; END IF;"     \
	" PERFORM ioacct_block_parts(b);"                                                   \
	" NEW.id := (b::bigint << 33) + nextval('jobs_id_seq');"                             \
	" IF NEW.run_start IS NULL THEN"                                                    \
	"  PERFORM pg_advisory_xact_lock(" PG_RUN_LOCK ", " PG_RUN_BUCKET("NEW.") ");"        \
	"  NEW.run_start := ioacct_run_of(NEW.cluster, NEW.job_id, NEW.restart, NEW.node,"   \
	"   NEW.start_ns, NEW.end_ns);"                                                     \
	" END IF;"                                                                          \
	" RETURN NEW;"                                                                      \
	"END$$;"                                                                            \
	/* At once: a job id's parts on distinct nodes that all meet in time are one run. */ \
	"UPDATE jobs j SET run_start = g.s FROM (SELECT cluster, job_id, restart,"           \
	" min(start_ns) AS s FROM jobs GROUP BY cluster, job_id, restart"                   \
	" HAVING count(*) = count(DISTINCT node) AND max(start_ns) - " PG_RUN_SLACK_NS       \
	" <= min(coalesce(end_ns, 9223372036854775807 - " PG_RUN_SLACK_NS "))) g"          \
	" WHERE j.cluster = g.cluster AND j.job_id = g.job_id AND j.restart = g.restart;"    \
	/* The rest (a node's second part of an id, parts apart in time) part by part. */   \
	"DO $$DECLARE p record; BEGIN"                                                      \
	" FOR p IN SELECT id, cluster, job_id, restart, node, start_ns, end_ns FROM jobs"    \
	"  WHERE run_start IS NULL ORDER BY cluster, job_id, restart, start_ns, id LOOP"     \
	"  UPDATE jobs SET run_start = ioacct_run_of(p.cluster, p.job_id, p.restart, p.node," \
	"   p.start_ns, p.end_ns) WHERE id = p.id;"                                         \
	" END LOOP;"                                                                        \
	"END$$;"                                                                            \
	/* A CHECK, not NOT NULL: the exporter's staging table (LIKE jobs) has it NULL. */  \
	"ALTER TABLE jobs ADD CONSTRAINT jobs_run_start CHECK (run_start IS NOT NULL);"      \
	"DROP INDEX jobs_cluster_job_id_run;"                                               \
	"CREATE INDEX jobs_run ON jobs (cluster, job_id, restart, run_start);"               \
	"ALTER TABLE job_reports ADD COLUMN run_start bigint;"                              \
	"UPDATE job_reports r SET run_start = coalesce((SELECT max(j.run_start) FROM jobs j"  \
	" WHERE j.cluster = r.cluster AND j.job_id = r.job_id AND j.restart = r.restart), 0);" \
	"ALTER TABLE job_reports ALTER COLUMN run_start SET NOT NULL;"                      \
	"ALTER TABLE job_reports DROP CONSTRAINT job_reports_pkey;"                         \
	"ALTER TABLE job_reports ADD PRIMARY KEY (cluster, job_id, restart, run_start);"    \
	"DROP TABLE merged_series;"                                                         \
	"DROP TABLE merged_jobs;"                                                           \
	"CREATE TABLE merged_jobs ("                                                        \
	" cluster text NOT NULL,"                                                           \
	" job_id bigint NOT NULL,"                                                          \
	" restart integer NOT NULL,"                                                        \
	" run_start bigint NOT NULL,"                                                       \
	" members text[] NOT NULL,"                                                         \
	" made_at timestamptz NOT NULL DEFAULT now(),"                                      \
	" PRIMARY KEY (cluster, job_id, restart, run_start));"                              \
	"CREATE TABLE merged_series ("                                                      \
	" cluster text NOT NULL,"                                                           \
	" job_id bigint NOT NULL,"                                                          \
	" restart integer NOT NULL,"                                                        \
	" run_start bigint NOT NULL,"                                                       \
	" step_id bigint NOT NULL,"                                                         \
	" mnt_id bigint NOT NULL,"                                                          \
	" op smallint NOT NULL,"                                                            \
	" bins integer[] NOT NULL,"                                                         \
	" PRIMARY KEY (cluster, job_id, restart, run_start, step_id, mnt_id, op),"          \
	" FOREIGN KEY (cluster, job_id, restart, run_start) REFERENCES merged_jobs"         \
	" ON DELETE CASCADE);"                                                              \
	"ALTER TABLE merged_series SET (toast_tuple_target = 128);"

/*
 * Migration step k brings schema k-1 to k; never edit a released one. The
 * counter columns of totals and series are not here: they are added from
 * IOACCT_STORE_COUNTER_COLS on every connect (sync_counter_cols).
 */
/*
 * 14 (issue 38; SQLite schema 15): a job's command line, Darshan's exe; ''
 * in the parts written before.
 */
#define MIGRATION_CMDLINE "ALTER TABLE jobs ADD COLUMN cmdline text NOT NULL DEFAULT '';"
/*
 * 12: a file's record is one life of its inode (issue 36; SQLite schema
 * 16): gen joins the key (the parts written before: 0, one life each);
 * Darshan's read/write switches and most common access sizes (issue 38),
 * 0 in the parts written before. The key of the partitioned table and of
 * its partitions changes at once.
 */
#define MIGRATION_FILE_LIVES                                                            \
	"ALTER TABLE files ADD COLUMN gen bigint NOT NULL DEFAULT 0,"                   \
	" ADD COLUMN rw_switches numeric(20,0) NOT NULL DEFAULT 0,"                     \
	" ADD COLUMN access1 numeric(20,0) NOT NULL DEFAULT 0,"                         \
	" ADD COLUMN access2 numeric(20,0) NOT NULL DEFAULT 0,"                         \
	" ADD COLUMN access3 numeric(20,0) NOT NULL DEFAULT 0,"                         \
	" ADD COLUMN access4 numeric(20,0) NOT NULL DEFAULT 0,"                         \
	" ADD COLUMN access1_count numeric(20,0) NOT NULL DEFAULT 0,"                   \
	" ADD COLUMN access2_count numeric(20,0) NOT NULL DEFAULT 0,"                   \
	" ADD COLUMN access3_count numeric(20,0) NOT NULL DEFAULT 0,"                   \
	" ADD COLUMN access4_count numeric(20,0) NOT NULL DEFAULT 0;"                   \
	"ALTER TABLE files DROP CONSTRAINT files_pkey;"                                 \
	"ALTER TABLE files ADD PRIMARY KEY (job, step_id, rank, mnt_id, dev, ino, gen);"

/*
 * 17 (issue 39; SQLite schema 20): library opens the MPI-IO library watch
 * missed, per part; 0 in the parts written before.
 */
#define MIGRATION_LIB_MISSED                                                            \
	"ALTER TABLE jobs ADD COLUMN lib_opens_missed numeric(20,0) NOT NULL DEFAULT 0;"

/*
 * ioacct_block_parts(), which makes a month's partitions of the partitioned
 * tables (those of migration 10 and MORE, a SQL list starting with a
 * comma), and ioacct_job_gone(), which deletes a part's rows from them
 * (DELETES, PG_GONE of each of MORE's), then every block's partitions: made
 * again by each migration that adds a partitioned table (18, 20).
 */
#define PG_GONE(t) "  DELETE FROM " t " WHERE job = OLD.id;"
#define PG_BLOCK_FUNCTIONS(MORE, DELETES)                                               \
	"CREATE OR REPLACE FUNCTION ioacct_block_parts(b integer) RETURNS void"         \
	" LANGUAGE plpgsql AS $$"                                                       \
	"DECLARE t text; n text; BEGIN"                                                 \
	" FOREACH t IN ARRAY ARRAY['series', 'totals', 'files', 'mpiio_files', 'steps'," \
	"  'mounts'" MORE "] LOOP"                                                      \
	"  n := t || '_' || ioacct_block_name(b);"                                      \
	"  CONTINUE WHEN to_regclass(quote_ident(n)) IS NOT NULL;"                      \
	"  PERFORM pg_advisory_xact_lock(" PG_BLOCK_LOCK ", b);"                         \
	"  BEGIN"                                                                       \
	"   EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I"              \
	" FOR VALUES FROM (%s) TO (%s)',"                                               \
	"    n, t, b::bigint << 33, (b + 1)::bigint << 33);"                            \
	"  EXCEPTION WHEN duplicate_table OR invalid_object_definition THEN NULL;"      \
	"  END;"                                                                        \
	"  IF t = 'series' THEN"                                                        \
	"   EXECUTE format('ALTER TABLE %I SET (toast_tuple_target = 128)', n);"        \
	"  END IF;"                                                                     \
	" END LOOP;"                                                                    \
	"END$$;"                                                                        \
	"CREATE OR REPLACE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN" \
	" IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN" \
	PG_GONE("series") PG_GONE("totals") PG_GONE("files") PG_GONE("mpiio_files")     \
	PG_GONE("steps") PG_GONE("mounts") DELETES                                      \
	" END IF;"                                                                      \
	" RETURN NULL;"                                                                 \
	"END$$;"                                                                        \
	"SELECT ioacct_block_parts(b) FROM (SELECT 1023 AS b UNION"                     \
	" SELECT (id >> 33)::integer FROM jobs) x;"

#define PG_H5_NUMERIC(name) " " #name " numeric(20,0) NOT NULL,"
/*
 * 18 (issue 39; SQLite schema 21): the HDF5 records of a part, as the
 * node's SQLite hdf5_records has them: per step, rank, process, kind (0 a
 * file, Darshan's H5F; 1 a dataset, H5D) and name ("FILE:/DATASET"; text
 * with U+FFFD, the exact bytes in name_raw when they are not UTF-8),
 * partitioned as files and mpiio_files, one partition a block (the blocks
 * there are get theirs now), gone with their part (ioacct_job_gone, held
 * parts moved by pgstore_purge.c). jobs.h5_kept: the part's HDF5 records
 * are here; false for the parts written before (their reports say "not
 * read", not none), true by default for those written from now on (the
 * exporter sets it false for a part whose records it did not have).
 */
#define MIGRATION_HDF5                                                                  \
	"CREATE TABLE hdf5_records ("                                                   \
	" job bigint NOT NULL,"                                                         \
	" step_id bigint NOT NULL,"                                                     \
	" rank integer NOT NULL,"                                                       \
	" pid bigint NOT NULL,"                                                         \
	" kind smallint NOT NULL,"                                                      \
	" name text NOT NULL,"                                                          \
	" name_raw bytea,"                                                              \
	IOACCT_H5_COUNTS(PG_H5_NUMERIC)                                                 \
	" size_read numeric(20,0)[] NOT NULL,"                                          \
	" size_written numeric(20,0)[] NOT NULL) PARTITION BY RANGE (job);"             \
	"CREATE INDEX hdf5_records_job ON hdf5_records (job, step_id, rank, pid);"      \
	"ALTER TABLE jobs ADD COLUMN h5_kept boolean NOT NULL DEFAULT false;"           \
	"ALTER TABLE jobs ALTER COLUMN h5_kept SET DEFAULT true;"                       \
	PG_BLOCK_FUNCTIONS(", 'hdf5_records'", PG_GONE("hdf5_records"))
/*
 * 19 (issue 39; SQLite schema 22): the HDF5 records' timestamps and
 * slowest calls (IOACCT_H5_TIMES), dataspaces and MPI-IO flags (IOACCT_H5_SHAPE), 0
 * (none, not known) in the parts written before.
 */
#define PG_H5_TIME_COL(name)                                                            \
	"ALTER TABLE hdf5_records ADD COLUMN " #name " numeric(20,0) NOT NULL DEFAULT 0;"
#define MIGRATION_H5_TIMES IOACCT_H5_TIMES(PG_H5_TIME_COL) IOACCT_H5_SHAPE(PG_H5_TIME_COL)

/*
 * 20 (issue 40; SQLite schema 23): a part's RPC rows, as the node's SQLite
 * rpc has them: per step, mount, RPC program, version, procedure (its
 * mountstats index), flags (1: sent by no job during the part) and bin, the
 * procedure's name (text with U+FFFD, its exact bytes in name_raw when they
 * are not UTF-8) and mountstats' counters; partitioned as files, one
 * partition a block (the blocks there are get theirs now), gone with their
 * part (ioacct_job_gone; held parts moved by pgstore_purge.c). Indexed, not
 * unique (a downsample deletes and inserts a part's rows in one statement).
 * jobs.rpc_kept: the part's RPC rows are here; false for the parts written
 * before (their reports say "not read", not none).
 */
#define MIGRATION_RPC                                                                   \
	"CREATE TABLE rpc ("                                                            \
	" job bigint NOT NULL,"                                                         \
	" step_id bigint NOT NULL,"                                                     \
	" mnt_id bigint NOT NULL,"                                                      \
	" prog bigint NOT NULL,"                                                        \
	" vers bigint NOT NULL,"                                                        \
	" proc bigint NOT NULL,"                                                        \
	" flags bigint NOT NULL,"                                                       \
	" bin bigint NOT NULL,"                                                         \
	" name text NOT NULL,"                                                          \
	IOACCT_RPC_COUNTERS(PG_H5_NUMERIC)                                              \
	" name_raw bytea) PARTITION BY RANGE (job);"                                    \
	"CREATE INDEX rpc_job ON rpc (job, step_id, mnt_id);"                           \
	"ALTER TABLE jobs ADD COLUMN rpc_kept boolean NOT NULL DEFAULT false;"          \
	"ALTER TABLE jobs ALTER COLUMN rpc_kept SET DEFAULT true;"                      \
	PG_BLOCK_FUNCTIONS(", 'hdf5_records', 'rpc'", PG_GONE("hdf5_records") PG_GONE("rpc"))

/*
 * 21 (issue 39; SQLite schema 24): a dataset's reads and writes by their
 * file selection's kind and its chunk dims (IOACCT_H5_SELECT); the parts
 * written before had every call's kind and their chunking not known.
 */
#define MIGRATION_H5_SELECT                                                             \
	IOACCT_H5_SELECT(PG_H5_TIME_COL)                                                \
	"UPDATE hdf5_records SET unknown_selects = reads + writes;"

static const char *const migrations[] = {
	/* 1: jobs and their rows, indexes for sacct-like queries. */
	"CREATE TABLE jobs ("
	" id bigserial PRIMARY KEY,"
	" cluster text NOT NULL,"
	" job_id bigint NOT NULL,"
	" node text NOT NULL,"
	" source text NOT NULL,"
	" uid bigint NOT NULL,"
	" gid bigint NOT NULL,"
	" \"user\" text NOT NULL,"
	" name text NOT NULL,"
	" workdir text NOT NULL,"
	" array_job_id bigint,"
	" array_task_id bigint,"
	" start_ns bigint NOT NULL,"
	" end_ns bigint,"
	" state text NOT NULL,"
	" exit_code integer NOT NULL,"
	" probe_mode text NOT NULL,"
	" bin_width_ns bigint NOT NULL,"
	" dropped_events numeric(20,0) NOT NULL,"
	" dropped_bytes numeric(20,0) NOT NULL,"
	" exported_at timestamptz NOT NULL DEFAULT now(),"
	" UNIQUE (cluster, job_id, node, start_ns));"
	"CREATE TABLE steps ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" start_ns bigint NOT NULL,"
	" end_ns bigint,"
	" state text NOT NULL,"
	" exit_code integer NOT NULL,"
	" cgroup text NOT NULL,"
	" PRIMARY KEY (job, step_id));"
	"CREATE TABLE mounts ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" mnt_id bigint NOT NULL,"
	" path text NOT NULL,"
	" fstype text NOT NULL,"
	" source text NOT NULL,"
	" PRIMARY KEY (job, mnt_id));"
	"CREATE TABLE totals ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" op smallint NOT NULL,"
	" PRIMARY KEY (job, step_id, mnt_id, op));"
	"CREATE TABLE series ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" op smallint NOT NULL,"
	" bin integer NOT NULL,"
	" PRIMARY KEY (job, step_id, mnt_id, op, bin));"
	"CREATE TABLE ops (op smallint PRIMARY KEY, name text NOT NULL);"
	"INSERT INTO ops VALUES (0, 'read'), (1, 'write'), (2, 'open'), (3, 'create'),"
	" (4, 'mkdir'), (5, 'unlink'), (6, 'rmdir'), (7, 'fsync'), (8, 'rename'), (9, 'stat');"
	"CREATE INDEX jobs_cluster_job_id ON jobs (cluster, job_id);"
	"CREATE INDEX jobs_job_id ON jobs (job_id);"
	"CREATE INDEX jobs_uid_start ON jobs (uid, start_ns);"
	"CREATE INDEX jobs_start ON jobs (start_ns);"
	"CREATE INDEX jobs_end ON jobs (end_ns);",
	/*
	 * 2: cluster-wide queries. A window [S, E] scans the jobs started in
	 * [S - the longest duration, E]: this index gives that duration at once.
	 */
	"CREATE INDEX jobs_duration ON jobs ((end_ns - start_ns));",
	/*
	 * 3: the merged report of a job of several nodes (issue 13): one row
	 * per job, made by the first node to export its part; the node that
	 * writes the report sets written_at under the row's lock.
	 */
	"CREATE TABLE job_reports ("
	" cluster text NOT NULL,"
	" job_id bigint NOT NULL,"
	" expected text[] NOT NULL,"
	" path text NOT NULL,"
	" formats integer NOT NULL,"
	" uid bigint NOT NULL,"
	" gid bigint NOT NULL,"
	" copy_dir text NOT NULL,"
	" merge_timeout_s integer NOT NULL,"
	" first_at timestamptz NOT NULL DEFAULT now(),"
	" deadline timestamptz NOT NULL,"
	" written_at timestamptz,"
	" written_by text,"
	" missing text[],"
	" PRIMARY KEY (cluster, job_id));"
	"CREATE INDEX job_reports_waiting ON job_reports (deadline) WHERE written_at IS NULL;",
	/*
	 * 4: names are bytes, text is UTF-8 (issue 24). A path that is not valid
	 * UTF-8 is stored with U+FFFD in its text column, for people and
	 * queries, and its exact bytes here beside it (NULL when the text is
	 * exact): a report is written, a directory found, at the real path.
	 */
	"ALTER TABLE jobs ADD COLUMN workdir_raw bytea;"
	"ALTER TABLE mounts ADD COLUMN path_raw bytea;"
	"ALTER TABLE job_reports ADD COLUMN path_raw bytea;"
	"ALTER TABLE job_reports ADD COLUMN copy_dir_raw bytea;",
	/*
	 * 5: a requeued job's runs apart (issue 28): the run (Slurm's restart
	 * count) is part of a job's name, its report's too. A node's earlier
	 * rows of a job id, by start, were its earlier runs: numbered so. A
	 * report row was made anew for each run: it is the job's last run's.
	 */
	"ALTER TABLE jobs ADD COLUMN restart integer NOT NULL DEFAULT 0;"
	"UPDATE jobs j SET restart = r.n FROM (SELECT id, row_number() OVER"
	" (PARTITION BY cluster, job_id, node ORDER BY start_ns, id) - 1 AS n"
	" FROM jobs WHERE source = 'slurm') r WHERE j.id = r.id AND r.n > 0;"
	"DROP INDEX jobs_cluster_job_id;"
	"CREATE INDEX jobs_cluster_job_id_run ON jobs (cluster, job_id, restart);"
	"ALTER TABLE job_reports ADD COLUMN restart integer NOT NULL DEFAULT 0;"
	"UPDATE job_reports r SET restart = m.restart FROM (SELECT cluster, job_id,"
	" max(restart) AS restart FROM jobs GROUP BY cluster, job_id) m"
	" WHERE m.cluster = r.cluster AND m.job_id = r.job_id;"
	"ALTER TABLE job_reports DROP CONSTRAINT job_reports_pkey;"
	"ALTER TABLE job_reports ADD PRIMARY KEY (cluster, job_id, restart);",
	/*
	 * 6: compact series (issue 28): one row per (job, step, mount, op)
	 * instead of one per bin, the bins that have a sample and each
	 * counter as arrays (TOAST compresses them; a row of 211 bytes a bin
	 * was most of the store). Still numeric: exact for the whole uint64
	 * range, in sums too. The counter columns are whatever schema 5 had
	 * (sync_counter_cols adds the rest); every array in the order of bins,
	 * NULL for a counter 0 in every bin (read as 0, and not unnested).
	 * series_bins shows them one row a bin, as before.
	 */
	"CREATE TABLE series_packed ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" op smallint NOT NULL,"
	" bins integer[] NOT NULL,"
	" PRIMARY KEY (job, step_id, mnt_id, op));"
	"DO $$DECLARE c text; cols text := ''; aggs text := ''; BEGIN"
	" FOR c IN SELECT column_name FROM information_schema.columns"
	"  WHERE table_schema = current_schema() AND table_name = 'series'"
	"  AND column_name NOT IN ('job', 'step_id', 'mnt_id', 'op', 'bin')"
	"  ORDER BY ordinal_position LOOP"
	"  EXECUTE format('ALTER TABLE series_packed ADD COLUMN %I " PG_SERIES_COUNTER_TYPE "', c);"
	"  cols := cols || format(', %I', c);"
	"  aggs := aggs || format(', CASE WHEN bool_and(%I = 0) THEN NULL"
	"   ELSE array_agg(%I ORDER BY bin) END', c, c);"
	" END LOOP;"
	" EXECUTE 'INSERT INTO series_packed (job, step_id, mnt_id, op, bins' || cols || ')"
	" SELECT job, step_id, mnt_id, op, array_agg(bin ORDER BY bin)' || aggs ||"
	" ' FROM series GROUP BY job, step_id, mnt_id, op';"
	"END$$;"
	"DROP TABLE series;"
	"ALTER TABLE series_packed RENAME TO series;"
	"ALTER TABLE series RENAME CONSTRAINT series_packed_pkey TO series_pkey;"
	"ALTER TABLE series RENAME CONSTRAINT series_packed_job_fkey TO series_job_fkey;"
	"ALTER TABLE series SET (toast_tuple_target = 128);"
	/* series_bins: the series one row a bin, for people and scripts; remade when a column comes. */
	"CREATE FUNCTION ioacct_series_view() RETURNS void LANGUAGE plpgsql AS $$"
	"DECLARE c text; a text := ''; n text := ''; BEGIN"
	" FOR c IN SELECT column_name FROM information_schema.columns"
	"  WHERE table_schema = current_schema() AND table_name = 'series'"
	"  AND column_name NOT IN ('job', 'step_id', 'mnt_id', 'op', 'bins')"
	"  ORDER BY ordinal_position LOOP"
	"  a := a || format(', s.%I', c);"
	"  n := n || format(', %I', c);"
	" END LOOP;"
	" DROP VIEW IF EXISTS series_bins;"
	" EXECUTE 'CREATE VIEW series_bins AS SELECT s.job, s.step_id, s.mnt_id, s.op, u.*"
	" FROM series s, unnest(s.bins' || a || ') AS u(bin' || n || ')';"
	"END$$;"
	"SELECT ioacct_series_view();",
	/*
	 * 7: the merged series of a job of several nodes, made once (issue 28):
	 * its nodes' series aligned and summed, for the parts named in
	 * members ("node@start_ns", sorted); a reader with other parts sums them.
	 */
	"CREATE TABLE merged_jobs ("
	" cluster text NOT NULL,"
	" job_id bigint NOT NULL,"
	" restart integer NOT NULL,"
	" members text[] NOT NULL,"
	" made_at timestamptz NOT NULL DEFAULT now(),"
	" PRIMARY KEY (cluster, job_id, restart));"
	"CREATE TABLE merged_series ("
	" cluster text NOT NULL,"
	" job_id bigint NOT NULL,"
	" restart integer NOT NULL,"
	" step_id bigint NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" op smallint NOT NULL,"
	" bins integer[] NOT NULL,"
	" PRIMARY KEY (cluster, job_id, restart, step_id, mnt_id, op),"
	" FOREIGN KEY (cluster, job_id, restart) REFERENCES merged_jobs ON DELETE CASCADE);"
	"ALTER TABLE merged_series SET (toast_tuple_target = 128);",
	/*
	 * 8: the bulk rows partitioned by the month their job's part ended (issue
	 * 28): a part's id is its block (ioacct_block(): 1 for January 2000 and
	 * before, one more a month, 1023 for a part not ended) shifted by 33 bits,
	 * plus the sequence; series and totals are partitioned by ranges of job,
	 * one partition a block (series_2026_11, totals_running), made when its
	 * first part comes (ioacct_job_place). A lookup by job id reads one
	 * partition; a month's parts purged, its partitions are dropped whole.
	 * No foreign key to jobs: a part deleted takes its bulk rows with it
	 * (ioacct_job_gone) unless its block is in purging, whose partitions go
	 * whole. A part is written again when its job ends (pgstore_export.c):
	 * that moves it from the running block to its month.
	 */
	"CREATE TABLE purging (block integer PRIMARY KEY);"
	"CREATE FUNCTION ioacct_block(end_ns bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS $$"
	" SELECT CASE WHEN end_ns IS NULL THEN 1023 ELSE"
	"  least(greatest((extract(year FROM t)::integer - 2000) * 12"
	"  + extract(month FROM t)::integer, 1), 1022) END"
	" FROM (SELECT to_timestamp(end_ns / 1000000000) AT TIME ZONE 'UTC' AS t) x$$;"
	"CREATE FUNCTION ioacct_block_name(b integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$"
	" SELECT CASE WHEN b = 1023 THEN 'running'"
	"  ELSE format('%s_%s', 2000 + (b - 1) / 12, lpad(((b - 1) % 12 + 1)::text, 2, '0')) END$$;"
	"CREATE FUNCTION ioacct_block_parts(b integer) RETURNS void LANGUAGE plpgsql AS $$"
	"DECLARE t text; n text; BEGIN"
	" FOREACH t IN ARRAY ARRAY['series', 'totals'] LOOP"
	"  n := t || '_' || ioacct_block_name(b);"
	"  CONTINUE WHEN to_regclass(quote_ident(n)) IS NOT NULL;"
	"  PERFORM pg_advisory_xact_lock(" PG_BLOCK_LOCK ", b);"
	"  BEGIN"
	"   EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I"
	" FOR VALUES FROM (%s) TO (%s)',"
	"    n, t, b::bigint << 33, (b + 1)::bigint << 33);"
	"  EXCEPTION WHEN duplicate_table OR invalid_object_definition THEN NULL;"
	"  END;"
	"  IF t = 'series' THEN"
	"   EXECUTE format('ALTER TABLE %I SET (toast_tuple_target = 128)', n);"
	"  END IF;"
	" END LOOP;"
	"END$$;"
	"CREATE FUNCTION ioacct_job_place() RETURNS trigger LANGUAGE plpgsql AS $$"
	"DECLARE b integer := ioacct_block(NEW.end_ns); BEGIN"
	" PERFORM pg_advisory_xact_lock_shared(" PG_BLOCK_LOCK ", b);"
	" IF EXISTS (SELECT 1 FROM purging p WHERE p.block = b) THEN b := 1023; END IF;"
	" PERFORM ioacct_block_parts(b);"
	" NEW.id := (b::bigint << 33) + nextval('jobs_id_seq');"
	" RETURN NEW;"
	"END$$;"
	"CREATE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	" IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN"
	"  DELETE FROM series WHERE job = OLD.id;"
	"  DELETE FROM totals WHERE job = OLD.id;"
	" END IF;"
	" RETURN NULL;"
	"END$$;"
	/* The rows there: ids renumbered into their blocks, their bulk rows moved. */
	"DROP VIEW series_bins;"
	"ALTER TABLE series DROP CONSTRAINT series_job_fkey;"
	"ALTER TABLE totals DROP CONSTRAINT totals_job_fkey;"
	"ALTER TABLE series RENAME TO series_old;"
	"ALTER TABLE totals RENAME TO totals_old;"
	"ALTER TABLE series_old RENAME CONSTRAINT series_pkey TO series_old_pkey;"
	"ALTER TABLE totals_old RENAME CONSTRAINT totals_pkey TO totals_old_pkey;"
	"CREATE TABLE series (LIKE series_old INCLUDING DEFAULTS) PARTITION BY RANGE (job);"
	"CREATE TABLE totals (LIKE totals_old INCLUDING DEFAULTS) PARTITION BY RANGE (job);"
	"ALTER TABLE series ADD PRIMARY KEY (job, step_id, mnt_id, op);"
	"ALTER TABLE totals ADD PRIMARY KEY (job, step_id, mnt_id, op);"
	"ALTER TABLE steps DROP CONSTRAINT steps_job_fkey, ADD CONSTRAINT steps_job_fkey"
	" FOREIGN KEY (job) REFERENCES jobs(id) ON DELETE CASCADE ON UPDATE CASCADE;"
	"ALTER TABLE mounts DROP CONSTRAINT mounts_job_fkey, ADD CONSTRAINT mounts_job_fkey"
	" FOREIGN KEY (job) REFERENCES jobs(id) ON DELETE CASCADE ON UPDATE CASCADE;"
	"SELECT ioacct_block_parts(b) FROM (SELECT 1023 AS b UNION"
	" SELECT ioacct_block(end_ns) FROM jobs) x;"
	"CREATE TEMP TABLE ioacct_renum ON COMMIT DROP AS SELECT id AS old,"
	" (ioacct_block(end_ns)::bigint << 33) + (id & 8589934591) AS new FROM jobs;"
	"UPDATE jobs j SET id = r.new FROM ioacct_renum r WHERE j.id = r.old AND r.new <> r.old;"
	"DO $$DECLARE t text; c text; cols text; BEGIN"
	" FOREACH t IN ARRAY ARRAY['series', 'totals'] LOOP"
	"  cols := '';"
	"  FOR c IN SELECT column_name FROM information_schema.columns"
	"   WHERE table_schema = current_schema() AND table_name = t AND column_name <> 'job'"
	"   ORDER BY ordinal_position LOOP"
	"   cols := cols || format(', o.%I', c);"
	"  END LOOP;"
	"  EXECUTE format('INSERT INTO %I SELECT r.new%s FROM %I o"
	" JOIN ioacct_renum r ON r.old = o.job',"
	"   t, cols, t || '_old');"
	" END LOOP;"
	"END$$;"
	"DROP TABLE series_old, totals_old;"
	"ALTER TABLE jobs ALTER COLUMN id DROP DEFAULT;"
	"CREATE TRIGGER jobs_place BEFORE INSERT ON jobs FOR EACH ROW"
	" EXECUTE FUNCTION ioacct_job_place();"
	"CREATE TRIGGER jobs_gone AFTER DELETE ON jobs FOR EACH ROW"
	" EXECUTE FUNCTION ioacct_job_gone();"
	"SELECT ioacct_series_view();",
	/*
	 * 9: the per-file records (issue 26) and MPI-IO records (issue 27) of a
	 * part, as the node's SQLite has them (files, mpiio_files): partitioned
	 * as series and totals, one partition a block, gone with their part.
	 * Paths as mounts.path: text with U+FFFD, the exact bytes in path_raw
	 * when they are not UTF-8. jobs.files_kept: the part's records are here
	 * (false for the parts written before: the reader says "not read").
	 * Its default is true for the parts written from now on (the exporter
	 * sets it false for a part whose records it did not have).
	 */
	"CREATE TABLE files ("
	" job bigint NOT NULL,"
	" step_id bigint NOT NULL,"
	" rank integer NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" dev bigint NOT NULL,"
	" ino numeric(20,0) NOT NULL,"
	" path text NOT NULL,"
	" path_raw bytea,"
	" opens numeric(20,0) NOT NULL, reads numeric(20,0) NOT NULL, writes numeric(20,0) NOT NULL,"
	" stats numeric(20,0) NOT NULL, fsyncs numeric(20,0) NOT NULL,"
	" bytes_read numeric(20,0) NOT NULL, bytes_written numeric(20,0) NOT NULL,"
	" read_ns numeric(20,0) NOT NULL, write_ns numeric(20,0) NOT NULL,"
	" meta_ns numeric(20,0) NOT NULL, seq_reads numeric(20,0) NOT NULL,"
	" seq_writes numeric(20,0) NOT NULL, consec_reads numeric(20,0) NOT NULL,"
	" consec_writes numeric(20,0) NOT NULL,"
	" max_byte_read bigint NOT NULL, max_byte_written bigint NOT NULL,"
	" first_read_ns bigint NOT NULL, last_read_ns bigint NOT NULL, first_write_ns bigint NOT NULL,"
	" last_write_ns bigint NOT NULL,"
	" size_read numeric(20,0)[] NOT NULL, size_written numeric(20,0)[] NOT NULL,"
	" mmap_bytes numeric(20,0) NOT NULL, cache_miss_bytes numeric(20,0) NOT NULL,"
	" PRIMARY KEY (job, step_id, rank, mnt_id, dev, ino)) PARTITION BY RANGE (job);"
	"CREATE TABLE mpiio_files ("
	" job bigint NOT NULL,"
	" step_id bigint NOT NULL,"
	" rank integer NOT NULL,"
	" pid bigint NOT NULL,"
	" path text NOT NULL,"
	" path_raw bytea,"
	" indep_opens numeric(20,0) NOT NULL, coll_opens numeric(20,0) NOT NULL,"
	" indep_reads numeric(20,0) NOT NULL, indep_writes numeric(20,0) NOT NULL,"
	" coll_reads numeric(20,0) NOT NULL, coll_writes numeric(20,0) NOT NULL,"
	" split_reads numeric(20,0) NOT NULL, split_writes numeric(20,0) NOT NULL,"
	" nb_reads numeric(20,0) NOT NULL, nb_writes numeric(20,0) NOT NULL,"
	" syncs numeric(20,0) NOT NULL, views numeric(20,0) NOT NULL,"
	" bytes_read numeric(20,0) NOT NULL, bytes_written numeric(20,0) NOT NULL,"
	" unsized_reads numeric(20,0) NOT NULL, unsized_writes numeric(20,0) NOT NULL,"
	" read_ns numeric(20,0) NOT NULL, write_ns numeric(20,0) NOT NULL,"
	" meta_ns numeric(20,0) NOT NULL,"
	" size_read numeric(20,0)[] NOT NULL,"
	" size_written numeric(20,0)[] NOT NULL) PARTITION BY RANGE (job);"
	"CREATE INDEX mpiio_files_job ON mpiio_files (job, step_id, rank, pid);"
	"ALTER TABLE jobs ADD COLUMN files_kept boolean NOT NULL DEFAULT false;"
	"ALTER TABLE jobs ALTER COLUMN files_kept SET DEFAULT true;"
	"CREATE OR REPLACE FUNCTION ioacct_block_parts(b integer) RETURNS void"
	" LANGUAGE plpgsql AS $$"
	"DECLARE t text; n text; BEGIN"
	" FOREACH t IN ARRAY ARRAY['series', 'totals', 'files', 'mpiio_files'] LOOP"
	"  n := t || '_' || ioacct_block_name(b);"
	"  CONTINUE WHEN to_regclass(quote_ident(n)) IS NOT NULL;"
	"  PERFORM pg_advisory_xact_lock(" PG_BLOCK_LOCK ", b);"
	"  BEGIN"
	"   EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I"
	" FOR VALUES FROM (%s) TO (%s)',"
	"    n, t, b::bigint << 33, (b + 1)::bigint << 33);"
	"  EXCEPTION WHEN duplicate_table OR invalid_object_definition THEN NULL;"
	"  END;"
	"  IF t = 'series' THEN"
	"   EXECUTE format('ALTER TABLE %I SET (toast_tuple_target = 128)', n);"
	"  END IF;"
	" END LOOP;"
	"END$$;"
	"CREATE OR REPLACE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN"
	" IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN"
	"  DELETE FROM series WHERE job = OLD.id;"
	"  DELETE FROM totals WHERE job = OLD.id;"
	"  DELETE FROM files WHERE job = OLD.id;"
	"  DELETE FROM mpiio_files WHERE job = OLD.id;"
	" END IF;"
	" RETURN NULL;"
	"END$$;"
	"SELECT ioacct_block_parts(b) FROM (SELECT 1023 AS b UNION"
	" SELECT DISTINCT (id >> 33)::integer FROM jobs) x;",
	/*
	 * 10: the per-part small rows partitioned too (issue 28): steps and
	 * mounts by range of job, one partition a block like series and totals
	 * (steps_2026_11), no foreign key to jobs: a part deleted takes them
	 * with it (ioacct_job_gone). A month purged whole then deletes only its
	 * jobs rows, setting ioacct.purging to its block for its transaction so
	 * that their trigger is not even called (its partitions go whole).
	 */
	"CREATE OR REPLACE FUNCTION ioacct_block_parts(b integer) RETURNS void"
	" LANGUAGE plpgsql AS $$"
	"DECLARE t text; n text; BEGIN"
	" FOREACH t IN ARRAY ARRAY['series', 'totals', 'files', 'mpiio_files', 'steps', 'mounts'] LOOP"
	"  n := t || '_' || ioacct_block_name(b);"
	"  CONTINUE WHEN to_regclass(quote_ident(n)) IS NOT NULL;"
	"  PERFORM pg_advisory_xact_lock(" PG_BLOCK_LOCK ", b);"
	"  BEGIN"
	"   EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I"
	" FOR VALUES FROM (%s) TO (%s)',"
	"    n, t, b::bigint << 33, (b + 1)::bigint << 33);"
	"  EXCEPTION WHEN duplicate_table OR invalid_object_definition THEN NULL;"
	"  END;"
	"  IF t = 'series' THEN"
	"   EXECUTE format('ALTER TABLE %I SET (toast_tuple_target = 128)', n);"
	"  END IF;"
	" END LOOP;"
	"END$$;"
	"CREATE OR REPLACE FUNCTION ioacct_job_gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	" IF NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = (OLD.id >> 33)::integer) THEN"
	"  DELETE FROM series WHERE job = OLD.id;"
	"  DELETE FROM totals WHERE job = OLD.id;"
	"  DELETE FROM files WHERE job = OLD.id;"
	"  DELETE FROM mpiio_files WHERE job = OLD.id;"
	"  DELETE FROM steps WHERE job = OLD.id;"
	"  DELETE FROM mounts WHERE job = OLD.id;"
	" END IF;"
	" RETURN NULL;"
	"END$$;"
	"DROP TRIGGER jobs_gone ON jobs;"
	"CREATE TRIGGER jobs_gone AFTER DELETE ON jobs FOR EACH ROW"
	" WHEN ((OLD.id >> 33)::text IS DISTINCT FROM current_setting('ioacct.purging', true))"
	" EXECUTE FUNCTION ioacct_job_gone();"
	"ALTER TABLE steps DROP CONSTRAINT steps_job_fkey;"
	"ALTER TABLE mounts DROP CONSTRAINT mounts_job_fkey;"
	"ALTER TABLE steps RENAME TO steps_old;"
	"ALTER TABLE mounts RENAME TO mounts_old;"
	"ALTER TABLE steps_old RENAME CONSTRAINT steps_pkey TO steps_old_pkey;"
	"ALTER TABLE mounts_old RENAME CONSTRAINT mounts_pkey TO mounts_old_pkey;"
	"CREATE TABLE steps (LIKE steps_old INCLUDING DEFAULTS) PARTITION BY RANGE (job);"
	"CREATE TABLE mounts (LIKE mounts_old INCLUDING DEFAULTS) PARTITION BY RANGE (job);"
	"ALTER TABLE steps ADD PRIMARY KEY (job, step_id);"
	"ALTER TABLE mounts ADD PRIMARY KEY (job, mnt_id);"
	"SELECT ioacct_block_parts(b) FROM (SELECT 1023 AS b UNION"
	" SELECT (id >> 33)::integer FROM jobs) x;"
	"INSERT INTO steps SELECT * FROM steps_old;"
	"INSERT INTO mounts SELECT * FROM mounts_old;"
	"DROP TABLE steps_old, mounts_old;",
	/* 11: a file's seeks (issue 26; SQLite schema 14), 0 in the parts written before. */
	"ALTER TABLE files ADD COLUMN seeks numeric(20,0) NOT NULL DEFAULT 0;",
	MIGRATION_FILE_LIVES,
	PG_MIGRATION_RUN_START,
	/* 14: a job's command line (issue 38; SQLite schema 15). */
	MIGRATION_CMDLINE,
	/* 15..16: other branches' steps, merged beside this one (placeholders until then). */
	"SELECT 1",
	"SELECT 1",
	MIGRATION_LIB_MISSED,
	MIGRATION_HDF5,
	MIGRATION_H5_TIMES,
	MIGRATION_RPC,
	MIGRATION_H5_SELECT,
};

_Static_assert(ARRAY_SIZE(migrations) == IOACCT_PGSTORE_SCHEMA_VERSION,
	       "one migration step per schema version");


/* Any 64-bit number: ioacctds of every node migrate one at a time under it. */
#define MIGRATE_LOCK "7308049115212693097"

/* ---- errors ---- */

int pg_error(struct ioacct_pgstore *pg, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pg->errmsg, sizeof(pg->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* libpq's messages end with a newline and may have several lines: keep one. */
static const char *one_line(const char *msg, char *buf, size_t len)
{
	size_t i, o = 0;

	for (i = 0; msg[i] && o + 1 < len; i++) {
		char c = msg[i] == '\n' || msg[i] == '\r' || msg[i] == '\t' ? ' ' : msg[i];

		if (c == ' ' && (o == 0 || buf[o - 1] == ' '))
			continue;
		buf[o++] = c;
	}
	while (o && buf[o - 1] == ' ')
		o--;
	buf[o] = '\0';
	return buf;
}

/*
 * Whether PostgreSQL refused the data itself: SQLSTATE class 22 (data
 * exception: a bad byte, a number out of range) or 23 (a constraint).
 * Sending the same rows again fails the same way; anything else (a lost
 * connection, no space, a lock, a permission) may pass later.
 */
static bool data_refused(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return state && (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0);
}

int pg_conn_error(struct ioacct_pgstore *pg, const PGresult *res, const char *what)
{
	const char *msg = res && PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res) :
								PQerrorMessage(pg->conn);
	char line[768];

	one_line(msg, line, sizeof(line));
	/* Given up by a deadline or the stop (pgstore_wait.c): that is the reason, not libpq's. */
	if (pg->cut[0])
		return pg_error(pg, -ECONNRESET, "cluster store: %s: %s", what, pg->cut);
	if (PQstatus(pg->conn) != CONNECTION_OK)
		return pg_error(pg, -ECONNRESET, "cluster store: %s: connection lost: %s", what, line);
	return pg_error(pg, data_refused(res) ? -EINVAL : -EIO, "cluster store: %s: %s", what,
			line);
}

const char *pg_text_param(const char *s, char **owned)
{
	*owned = NULL;
	if (ioacct_utf8_valid(s))
		return s;
	*owned = ioacct_utf8_dup(s);
	return *owned;
}

char *pg_raw_param(const char *s, bool *nomem)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s);
	char *out, *o;

	if (ioacct_utf8_valid(s))
		return NULL;
	out = malloc(2 + 2 * n + 1);
	if (!out) {
		*nomem = true;
		return NULL;
	}
	o = out;
	*o++ = '\\';
	*o++ = 'x';
	for (size_t i = 0; i < n; i++) {
		*o++ = hex[(unsigned char)s[i] >> 4];
		*o++ = hex[(unsigned char)s[i] & 15];
	}
	*o = '\0';
	return out;
}

int pg_exec(struct ioacct_pgstore *pg, const char *sql, const char *what)
{
	PGresult *res = pg_run(pg, sql);
	ExecStatusType st = PQresultStatus(res);
	int err = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, what);
	PQclear(res);
	return err;
}

#define PG_STMT_NAME(name) #name,
static const char *const stmt_names[] = { PG_STMTS(PG_STMT_NAME) };
_Static_assert(PG_NR_STMTS <= 32, "one bit of ioacct_pgstore.prepared a statement");

/* Whether stmt is prepared (now, if it was not); else *failed: the preparation's result. */
static bool prepared(struct ioacct_pgstore *pg, enum pg_stmt stmt, const char *sql, int nparams,
		     char name[32], PGresult **failed)
{
	uint32_t bit = UINT32_C(1) << stmt;
	PGresult *res;

	snprintf(name, 32, "ioacct_%s", stmt_names[stmt]);
	if (pg->prepared & bit)
		return true;
	res = pg_run_prepare(pg, name, sql, nparams);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		*failed = res;
		return false;
	}
	PQclear(res);
	/* A prepared statement is the session's: a rollback does not take it back. */
	pg->prepared |= bit;
	return true;
}

int pg_prepare(struct ioacct_pgstore *pg, enum pg_stmt stmt, const char *sql, int nparams,
	       char name[32], const char *what)
{
	PGresult *failed = NULL;
	int err;

	if (prepared(pg, stmt, sql, nparams, name, &failed))
		return 0;
	err = pg_conn_error(pg, failed, what);
	PQclear(failed);
	return err;
}

PGresult *pg_exec_prepared(struct ioacct_pgstore *pg, enum pg_stmt stmt, const char *sql,
			   int nparams, const char *const *params)
{
	PGresult *res = NULL;
	const char *state;
	char name[32];

	if (!prepared(pg, stmt, sql, nparams, name, &res))
		return res;
	res = pg_run_prepared(pg, name, nparams, params);
	/* Gone (DEALLOCATE ALL by someone, a pooler's new session): prepared again next time. */
	state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	if (state && !strcmp(state, "26000"))
		pg->prepared &= ~(UINT32_C(1) << stmt);
	return res;
}

void pg_rollback_quiet(struct ioacct_pgstore *pg)
{
	if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE && !pg->cut[0])
		PQclear(pg_run(pg, "ROLLBACK"));
}

void pg_buf_add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap * 2 + (size_t)n + 4096;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* ---- open, migrate ---- */

/* PostgreSQL's notices ("column ... already exists, skipping") are no news for the log. */
static void notice_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static int schema_version(struct ioacct_pgstore *pg, int *version)
{
	PGresult *res = pg_run(pg, "SELECT coalesce(max(version), 0) FROM ioacct_schema");
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		err = pg_conn_error(pg, res, "read the schema version");
	else
		*version = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return err;
}

/*
 * Every column of the counter list, in totals and series: new ones come
 * from newer ioacctds (and older rows read 0 there, which they were).
 * *cols: the columns the three tables have, as "table.column" lines.
 */
static int counter_cols(struct ioacct_pgstore *pg, struct buf *cols)
{
	PGresult *res = pg_run(pg, "SELECT table_name || '.' || column_name"
				 " FROM information_schema.columns"
				 " WHERE table_schema = current_schema()"
				 " AND table_name IN ('series', 'totals', 'merged_series')");
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "read the counter columns");
	for (int r = 0; !err && r < PQntuples(res); r++)
		pg_buf_add(cols, "\n%s\n", PQgetvalue(res, r, 0));
	PQclear(res);
	if (!err && cols->failed)
		err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
	return err;
}

/*
 * The columns added only where missing: ALTER TABLE takes an ACCESS
 * EXCLUSIVE lock even when the column is there, and every connection of
 * every node comes here (it waited for each export in flight, and stopped
 * each read). In the order of PG_BLOCK_TABLES, as a month's partitions are made.
 */
static int sync_counter_cols(struct ioacct_pgstore *pg)
{
	static const char *const tables[] = { "series", "totals", "merged_series" };
	static const char *const types[] = { PG_SERIES_COUNTER_TYPE,
					     "numeric(20,0) NOT NULL DEFAULT 0",
					     PG_SERIES_COUNTER_TYPE };
	struct buf cols = { 0 };
	char sql[256], key[128];
	bool series_added = false;
	int err = counter_cols(pg, &cols);

	for (size_t t = 0; t < ARRAY_SIZE(tables) && !err; t++) {
		const char *p = IOACCT_STORE_COUNTER_COLS;

		while (*p && !err) {
			size_t n = strcspn(p, ", ");

			if (n == 0 || n >= 64) {
				err = pg_error(pg, -EINVAL, "cluster store: bad counter column list");
				break;
			}
			snprintf(key, sizeof(key), "\n%s.%.*s\n", tables[t], (int)n, p);
			if (!strstr(cols.p ? cols.p : "", key)) {
				snprintf(sql, sizeof(sql),
					 "ALTER TABLE %s ADD COLUMN IF NOT EXISTS %.*s %s",
					 tables[t], (int)n, p, types[t]);
				err = pg_exec(pg, sql, "add a counter column");
				series_added |= t == 0;
			}
			p += n;
			p += strspn(p, ", ");
		}
	}
	free(cols.p);
	/* A column older rows lack reads NULL there: unnest pads, readers take it as 0. */
	if (!err && series_added)
		err = pg_exec(pg, "SELECT ioacct_series_view()", "remake the view series_bins");
	return err;
}

/*
 * The ops table's rows, from IOACCT_OPS, like the SQLite store's: operations
 * newer than the schema (the page-cache views, issue 14) get their names.
 */
#define OP_ROW(NAME, num, name, ...) "(" #num ", '" #name "'),"
static const char pg_ops_rows[] = "INSERT INTO ops VALUES " IOACCT_OPS(OP_ROW);
#undef OP_ROW

static int sync_ops(struct ioacct_pgstore *pg)
{
	char sql[sizeof(pg_ops_rows) + 32];

	/* The list ends with a comma: replace it with the conflict clause. */
	snprintf(sql, sizeof(sql), "%.*s ON CONFLICT (op) DO NOTHING", (int)sizeof(pg_ops_rows) - 2,
		 pg_ops_rows);
	return pg_exec(pg, sql, "name the operations");
}

static int migrate(struct ioacct_pgstore *pg)
{
	char sql[64];
	int err, v = 0;

	uint32_t silence_ms = pg->silence_ms;

	err = pg_exec(pg, "BEGIN", "begin the migration");
	/*
	 * A migration takes as long as it takes (a big store's rows moved),
	 * and waits for another node's: no statement timeout, no deadline of
	 * silence; only the owner's stop ends it (rolled back).
	 */
	if (!err)
		err = pg_exec(pg, "SET LOCAL statement_timeout = 0", "begin the migration");
	if (err)
		return err;
	pg->silence_ms = 0;
	/* Every node connects at once after an upgrade: one migrates, the others wait. */
	err = pg_exec(pg, "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ")", "lock the schema");
	if (!err)
		err = pg_exec(pg,
			      "CREATE TABLE IF NOT EXISTS ioacct_schema (version integer NOT NULL)",
			      "create the schema version table");
	if (!err)
		err = schema_version(pg, &v);
	if (!err && v > IOACCT_PGSTORE_SCHEMA_VERSION)
		err = pg_error(pg, -ENOTSUP,
			       "cluster store has schema %d, newer than this ioacctd's %d: upgrade ioacct on this node",
			       v, IOACCT_PGSTORE_SCHEMA_VERSION);
	for (; !err && v < IOACCT_PGSTORE_SCHEMA_VERSION; v++) {
		err = pg_exec(pg, migrations[v], "migrate the schema");
		snprintf(sql, sizeof(sql), "INSERT INTO ioacct_schema VALUES (%d)", v + 1);
		if (!err)
			err = pg_exec(pg, sql, "record the schema version");
	}
	if (!err)
		err = sync_counter_cols(pg);
	if (!err)
		err = sync_ops(pg);
	if (!err)
		err = pg_exec(pg, "COMMIT", "commit the migration");
	pg->silence_ms = silence_ms;
	if (err)
		pg_rollback_quiet(pg);
	return err;
}

bool ioacct_pgstore_available(void)
{
	return true;
}

/*
 * For a connection that only reads (ioacct_pgstore_open_readonly): the
 * schema this build knows, not migrated to it. A store with none yet, or
 * an older or newer one, is said as such: its ioacctds migrate it.
 */
static int schema_same(struct ioacct_pgstore *pg)
{
	PGresult *res = pg_run(pg, "SELECT to_regclass('ioacct_schema') IS NOT NULL");
	bool there = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		     PQgetvalue(res, 0, 0)[0] == 't';
	int err = 0, v = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "read the schema version");
	PQclear(res);
	if (err)
		return err;
	if (!there)
		return pg_error(pg, -ENOENT, "cluster store has no ioacct schema yet: no ioacctd has exported to it");
	err = schema_version(pg, &v);
	if (!err && v != IOACCT_PGSTORE_SCHEMA_VERSION)
		err = pg_error(pg, -ENOTSUP,
			       "cluster store has schema %d, this ioacct knows %d: %s", v,
			       IOACCT_PGSTORE_SCHEMA_VERSION,
			       v > IOACCT_PGSTORE_SCHEMA_VERSION ?
				       "upgrade ioacct here" :
				       "its ioacctds migrate it when they are upgraded and connect");
	return err;
}

void ioacct_pgstore_opts_config(struct ioacct_pgstore_opts *o, const struct ioacct_config *cfg,
				int stop_fd)
{
	o->connect_ms = (uint32_t)cfg->pg_connect_timeout_ms;
	o->statement_ms = (uint32_t)cfg->pg_statement_timeout_ms;
	o->idle_ms = (uint32_t)cfg->pg_idle_timeout_ms;
	o->stop_fd = stop_fd;
}

/*
 * opts: the deadlines (NULL: the defaults, no stop fd); options: the
 * server's settings ("-c name=value") besides statement_timeout; migrate:
 * the schema made this build's (else only checked to be it:
 * schema_same()).
 */
static struct ioacct_pgstore *pg_open(const char *conninfo, const struct ioacct_pgstore_opts *opts,
				      const char *options, bool migrate_it, char *err,
				      size_t errlen)
{
	struct ioacct_pgstore_opts o = IOACCT_PGSTORE_OPTS_DEFAULT;
	char ka_idle[16], ka_intvl[16], user_to[16], all[256];
	/*
	 * Ours first: what the connection string says overrides them. A
	 * server's host gone silent is seen within idle_ms: keepalives on an
	 * idle connection, a user timeout for data not acknowledged (neither
	 * on a Unix socket; a server alive and silent is pgstore_wait.c's).
	 */
	const char *const keys[] = { "application_name", "keepalives_idle", "keepalives_interval",
				     "keepalives_count", "tcp_user_timeout", "client_encoding",
				     "options", "dbname", NULL };
	/* UTF8: what every text ioacctd sends is (pg_text_param()), whatever the locale says. */
	const char *const values[] = { "ioacctd", ka_idle, ka_intvl, "3", user_to, "UTF8", all,
				       conninfo, NULL };
	struct ioacct_pgstore *pg = calloc(1, sizeof(*pg));
	char line[768];
	int ret;

	if (!pg) {
		snprintf(err, errlen, "cluster store: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		o = *opts;
	snprintf(ka_idle, sizeof(ka_idle), "%u", o.idle_ms / 2000 ? o.idle_ms / 2000 : 1);
	snprintf(ka_intvl, sizeof(ka_intvl), "%u", o.idle_ms / 6000 ? o.idle_ms / 6000 : 1);
	snprintf(user_to, sizeof(user_to), "%u", o.idle_ms);
	snprintf(all, sizeof(all), "-c statement_timeout=%u %s", o.statement_ms, options);
	pg->stop_fd = o.stop_fd;
	pg->connect_ms = o.connect_ms;
	/* The server cancels its own statement first; past this it is taken for gone. */
	pg->silence_ms = o.statement_ms + IOACCT_PGSTORE_GRACE_MS;
	ret = pg_connect(pg, keys, values);
	if (ret) {
		snprintf(err, errlen, "cannot connect: %s",
			 pg->cut[0] ? pg->cut :
			 pg->conn ? one_line(PQerrorMessage(pg->conn), line, sizeof(line)) :
				    "out of memory");
		ioacct_pgstore_close(pg);
		errno = -ret;
		return NULL;
	}
	PQsetNoticeProcessor(pg->conn, notice_quiet, NULL);
	ret = migrate_it ? migrate(pg) : schema_same(pg);
	if (ret) {
		snprintf(err, errlen, "%s", pg->errmsg);
		ioacct_pgstore_close(pg);
		errno = -ret;
		return NULL;
	}
	return pg;
}

struct ioacct_pgstore *ioacct_pgstore_open(const char *conninfo,
					   const struct ioacct_pgstore_opts *opts, char *err,
					   size_t errlen)
{
	/* JIT: seconds of compiling for the merged read of a big job (merged-bench), for nothing. */
	return pg_open(conninfo, opts, "-c jit=off", true, err, errlen);
}

struct ioacct_pgstore *ioacct_pgstore_open_readonly(const char *conninfo,
						    const struct ioacct_pgstore_opts *opts,
						    char *err, size_t errlen)
{
	return pg_open(conninfo, opts, "-c jit=off -c default_transaction_read_only=on", false,
		       err, errlen);
}

struct ioacct_pgstore *ioacct_pgstore_open_query(const char *conninfo, int timeout_ms,
						 const struct ioacct_pgstore_opts *opts, char *err,
						 size_t errlen)
{
	struct ioacct_pgstore_opts o = IOACCT_PGSTORE_OPTS_DEFAULT;

	if (opts)
		o = *opts;
	o.statement_ms = (uint32_t)timeout_ms;
	/* An absent server is said within 5 s, and given 2 at least (libpq's least, as before). */
	o.connect_ms = o.statement_ms < 2000 ? 2000 : o.statement_ms > 5000 ? 5000 : o.statement_ms;
	return pg_open(conninfo, &o, "-c jit=off", true, err, errlen);
}

void ioacct_pgstore_close(struct ioacct_pgstore *pg)
{
	if (!pg)
		return;
	if (pg->conn)
		PQfinish(pg->conn);
	free(pg);
}

const char *ioacct_pgstore_errmsg(const struct ioacct_pgstore *pg)
{
	return pg->errmsg;
}

bool ioacct_pgstore_connected(const struct ioacct_pgstore *pg)
{
	return pg && pg->conn && !pg->cut[0] && PQstatus(pg->conn) == CONNECTION_OK;
}

/* $HOME's, then the account's: the files of libpq's in a home. */
static int home_files(const char *home, int (*add)(void *ctx, const char *path), void *ctx)
{
	static const char *const names[] = { ".pgpass", ".pg_service.conf", ".postgresql" };
	char path[PATH_MAX];
	int ret = 0;

	for (size_t i = 0; home && home[0] && i < ARRAY_SIZE(names) && !ret; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", home, names[i]) < sizeof(path))
			ret = add(ctx, path);
	return ret;
}

int ioacct_pgstore_conninfo_files(const char *conninfo, int (*add)(void *ctx, const char *path),
				  void *ctx)
{
	static const char *const options[] = {
		"passfile", "sslcert", "sslkey", "sslrootcert", "sslcrl", "sslcrldir",
	};
	static const char *const vars[] = {
		"PGPASSFILE", "PGSERVICEFILE", "PGSYSCONFDIR", "PGSSLCERT", "PGSSLKEY",
		"PGSSLROOTCERT", "PGSSLCRL", "PGSSLCRLDIR",
	};
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	struct passwd *pw = getpwuid(geteuid());
	int ret = 0;

	if (!opts)
		return -EINVAL;
	for (PQconninfoOption *o = opts; o->keyword && !ret; o++)
		for (size_t i = 0; i < ARRAY_SIZE(options) && !ret; i++)
			if (o->val && !strcmp(o->keyword, options[i]))
				ret = add(ctx, o->val);
	PQconninfoFree(opts);
	for (size_t i = 0; i < ARRAY_SIZE(vars) && !ret; i++)
		ret = getenv(vars[i]) ? add(ctx, getenv(vars[i])) : 0;
	if (!ret)
		ret = home_files(getenv("HOME"), add, ctx);
	if (!ret && pw)
		ret = home_files(pw->pw_dir, add, ctx);
	return ret;
}

#endif /* HAVE_LIBPQ */
