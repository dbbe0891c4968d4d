/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, retention (see pgstore.h; issue 28):
 * runs of jobs that ended before a cutoff deleted whole, or their series
 * re-binned coarser. A run goes only whole, every part of it ended before
 * the cutoff and its merged report, if it has one, written: a run some node
 * has not exported yet, or whose report waits for a node, stays.
 *
 * First the months (schema 8): a month's block whose month ended before the
 * cutoff and whose parts' runs all go is purged whole. One transaction puts
 * the block in purging and deletes the runs' jobs rows, reports and merged
 * series: from its commit the runs are gone from every query, and their
 * other rows (series, totals, files, MPI-IO records: schema 9; steps, mounts:
 * schema 10) are left in the
 * block's partitions, which are then detached CONCURRENTLY (no lock that
 * stops exports or queries) and dropped. A purge killed after that commit leaves
 * the block in purging: the next purge detaches and drops it first.
 * Then the rest row by row, in batches of PURGE_BATCH runs, a transaction
 * each: exports and queries go on between them, and an interrupted purge
 * leaves whole runs, gone or there.
 */
#include "pgstore.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int64_t ioacct_pgstore_purge_cutoff(int64_t now, uint64_t purge_after_s)
{
	time_t t = (time_t)(now - (int64_t)purge_after_s);
	struct tm tm;

	if (purge_after_s < 28 * 86400 || !gmtime_r(&t, &tm))
		return (int64_t)t;
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	return (int64_t)timegm(&tm);
}

#ifndef HAVE_LIBPQ

int ioacct_pgstore_purge(struct ioacct_pgstore *pg, int64_t cutoff_unix, bool dry_run,
			 ioacct_pgstore_purge_fn progress, void *arg,
			 struct ioacct_pgstore_purge_counts *counts)
{
	memset(counts, 0, sizeof(*counts));
	return -ENOTSUP;
}

int ioacct_pgstore_downsample(struct ioacct_pgstore *pg, int64_t cutoff_unix,
			      uint64_t bin_width_ns, bool dry_run,
			      struct ioacct_pgstore_purge_counts *counts)
{
	memset(counts, 0, sizeof(*counts));
	return -ENOTSUP;
}

#else /* HAVE_LIBPQ */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pgstore_db.h"
#include "util.h"

#define PURGE_BATCH 500

/*
 * The runs to act on, at most %d ($1: the cutoff in ns; extra: a condition
 * on a part o): every part ended before the cutoff, no report waiting.
 */
#define OLD_RUNS                                                                           \
	"r AS (SELECT DISTINCT o.cluster, o.job_id, o.restart, o.run_start FROM jobs o"      \
	" WHERE o.end_ns < $1::bigint %s"                                                    \
	" AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.cluster = o.cluster"                  \
	"  AND k.job_id = o.job_id AND k.restart = o.restart AND k.run_start = o.run_start"  \
	"  AND (k.end_ns IS NULL OR k.end_ns >= $1::bigint))"                                \
	" AND NOT EXISTS (SELECT 1 FROM job_reports x WHERE x.cluster = o.cluster"           \
	"  AND x.job_id = o.job_id AND x.restart = o.restart AND x.run_start = o.run_start"  \
	"  AND x.written_at IS NULL)"                                                        \
	" LIMIT %d),"                                                                        \
	" p AS (SELECT j.id, j.bin_width_ns FROM jobs j"                                     \
	"  JOIN r USING (cluster, job_id, restart, run_start))"

/*
 * The rest's condition on a part (o): not in a month that ended before the
 * cutoff ($1) and has its partitions, and is not being purged. blocks_purge()
 * listed the old months before; a part committed into one of them since (an
 * export that ran meanwhile) waits for the next round, which purges its month
 * whole, instead of going row by row and leaving its month's partitions.
 */
_Static_assert(PG_BLOCK_RUNNING == 1023, "OUTSIDE_OLD_MONTHS spells PG_BLOCK_RUNNING");
#define OUTSIDE_OLD_MONTHS                                                                 \
	"AND NOT (" BLK("o.id") " < 1023"                                                    \
	" AND extract(epoch FROM make_timestamptz(2000 + " BLK("o.id") " / 12,"               \
	"  " BLK("o.id") " % 12 + 1, 1, 0, 0, 0, 'UTC'))::bigint * 1000000000 <= $1::bigint"  \
	" AND to_regclass(quote_ident('series_' || ioacct_block_name(" BLK("o.id") ")))"     \
	"  IS NOT NULL AND " BLK("o.id") " NOT IN (SELECT block FROM purging))"

/* Runs one statement of three counts (runs, parts, series rows), added to counts. */
static int run_counts(struct ioacct_pgstore *pg, const char *sql, int nparams,
		      const char *const *params, const char *what,
		      struct ioacct_pgstore_purge_counts *counts, uint64_t *runs)
{
	PGresult *res = pg_run_params(pg, sql, nparams, params);
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		err = pg_conn_error(pg, res, what);
	} else {
		*runs = val_u64(res, 0, 0);
		counts->runs += *runs;
		counts->parts += val_u64(res, 0, 1);
		counts->series += val_u64(res, 0, 2);
	}
	PQclear(res);
	return err;
}

/* Tells progress (if any) of step p; -ECANCELED (said) when it says stop. */
static int tell(struct ioacct_pgstore *pg, ioacct_pgstore_purge_fn progress, void *arg,
		struct ioacct_pgstore_purge_progress *p)
{
	if (progress && progress(p, arg))
		return pg_error(pg, -ECANCELED, "cluster store: purge stopped");
	return 0;
}

/*
 * Batches of sql, a transaction each, until one finds no run, progress told
 * after each (counts: the batches' so far); dry_run: once, counting.
 */
static int batches(struct ioacct_pgstore *pg, const char *sql, int nparams,
		   const char *const *params, bool dry_run, const char *what,
		   ioacct_pgstore_purge_fn progress, void *arg,
		   struct ioacct_pgstore_purge_counts *counts)
{
	struct ioacct_pgstore_purge_progress p = { .step = IOACCT_PG_PURGE_BATCH };
	uint64_t runs = 0, t0 = ioacct_mono_ms();
	int err;

	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	do {
		err = pg_exec(pg, "BEGIN", what);
		if (!err)
			err = run_counts(pg, sql, nparams, params, what, counts, &runs);
		if (!err)
			err = pg_exec(pg, "COMMIT", what);
		if (err) {
			pg_rollback_quiet(pg);
			return err;
		}
		if (!dry_run && runs > 0) {
			p.counts = *counts;
			p.ms = ioacct_mono_ms() - t0;
			err = tell(pg, progress, arg, &p);
			if (err)
				return err;
		}
	} while (!dry_run && runs > 0);
	return 0;
}

/* Runs sql (nparams text parameters) for its one row of one column: a number. */
static int one_value(struct ioacct_pgstore *pg, const char *sql, int nparams,
		     const char *const *params, const char *what, int64_t *v)
{
	PGresult *res = pg_run_params(pg, sql, nparams, params);
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		err = pg_conn_error(pg, res, what);
	else
		*v = PQgetisnull(res, 0, 0) ? -1 : val_i64(res, 0, 0);
	PQclear(res);
	return err;
}

/* Block b's partition of table t: t_YYYY_MM (ioacct_block_name()). */
static void block_name(char *buf, size_t len, const char *t, int b)
{
	snprintf(buf, len, "%s_%04d_%02d", t, 2000 + (b - 1) / 12, (b - 1) % 12 + 1);
}

/* Block b's month, "YYYY-MM", into p's. */
static void block_month(struct ioacct_pgstore_purge_progress *p, int b)
{
	snprintf(p->month, sizeof(p->month), "%04d-%02d", (2000 + (b - 1) / 12) % 10000,
		 (b - 1) % 12 + 1);
}

/*
 * Block b, in purging, its runs' small rows gone: its partitions detached
 * (finished, if a killed purge left one half detached) and dropped, the
 * block out of purging.
 */
static int block_drop(struct ioacct_pgstore *pg, int b)
{
	static const char *const tables[] = { PG_BLOCK_TABLES };
	char name[64], sql[256], blk[16];
	const char *params[1] = { name };
	int err = 0;

	for (size_t i = 0; i < ARRAY_SIZE(tables) && !err; i++) {
		int64_t pending = -1;

		block_name(name, sizeof(name), tables[i], b);
		err = one_value(pg, "SELECT (SELECT inhdetachpending::integer FROM pg_inherits"
				" WHERE inhrelid = to_regclass($1))", 1, params,
				"see a month's partition", &pending);
		if (!err && pending >= 0) {
			snprintf(sql, sizeof(sql), "ALTER TABLE %s DETACH PARTITION %s %s",
				 tables[i], name, pending ? "FINALIZE" : "CONCURRENTLY");
			err = pg_exec(pg, sql, "detach a month's partition");
		}
		if (!err) {
			snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name);
			err = pg_exec(pg, sql, "drop a month's partition");
		}
	}
	snprintf(blk, sizeof(blk), "%d", b);
	params[0] = blk;
	if (!err) {
		PGresult *res = pg_run_params(pg, "DELETE FROM purging WHERE block = $1", 1,
					      params);

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			err = pg_conn_error(pg, res, "forget a month purged");
		PQclear(res);
	}
	return err;
}

/* The block's parts ($2 <= id < $3) whose run stays ($1: the cutoff in ns). */
#define HELD_PARTS                                                                         \
	"SELECT o.id FROM jobs o WHERE o.id >= $2::bigint AND o.id < $3::bigint"             \
	" AND (o.end_ns IS NULL OR o.end_ns >= $1::bigint"                                   \
	"  OR EXISTS (SELECT 1 FROM jobs k WHERE k.cluster = o.cluster"                      \
	"   AND k.job_id = o.job_id AND k.restart = o.restart AND k.run_start = o.run_start" \
	"   AND (k.end_ns IS NULL OR k.end_ns >= $1::bigint))"                               \
	"  OR EXISTS (SELECT 1 FROM job_reports x WHERE x.cluster = o.cluster"               \
	"   AND x.job_id = o.job_id AND x.restart = o.restart AND x.run_start = o.run_start" \
	"   AND x.written_at IS NULL))"

/*
 * The block's parts whose run stays (a node's part of it not ended, or after
 * the cutoff; its report waiting: rare, at a month's edge) moved to the
 * running block: new ids, their series, totals, files, MPI-IO, steps, mounts, HDF5 and RPC rows moved
 * there (copied, the old ones deleted: schema 10 has no foreign key to
 * follow, and the block's partitions then hold only rows that go, counted
 * whole). The month then goes whole.
 */
static int held_move(struct ioacct_pgstore *pg, const char *const *params)
{
	struct buf b = { 0 };
	PGresult *res;
	int err = 0;

	pg_buf_add(&b, "WITH n AS MATERIALIZED (SELECT id AS old, (%d::bigint << %d)"
		   " + nextval('jobs_id_seq') AS new FROM (" HELD_PARTS ") h),"
		   " s AS (INSERT INTO series (job, step_id, mnt_id, op, bins, "
		   IOACCT_STORE_COUNTER_COLS ") SELECT n.new, step_id, mnt_id, op, bins, "
		   IOACCT_STORE_COUNTER_COLS " FROM series x JOIN n ON x.job = n.old RETURNING 1),"
		   " t AS (INSERT INTO totals (job, step_id, mnt_id, op, "
		   IOACCT_STORE_COUNTER_COLS ") SELECT n.new, step_id, mnt_id, op, "
		   IOACCT_STORE_COUNTER_COLS " FROM totals x JOIN n ON x.job = n.old RETURNING 1),"
		   " st AS (INSERT INTO steps (job, step_id, start_ns, end_ns, state, exit_code,"
		   " cgroup) SELECT n.new, step_id, start_ns, end_ns, state, exit_code, cgroup"
		   " FROM steps x JOIN n ON x.job = n.old RETURNING 1),"
		   " mt AS (INSERT INTO mounts (job, mnt_id, path, fstype, source, path_raw)"
		   " SELECT n.new, mnt_id, path, fstype, source, path_raw"
		   " FROM mounts x JOIN n ON x.job = n.old RETURNING 1),"
		   " fi AS (INSERT INTO files (job, " PG_FILE_COLS ") SELECT n.new, " PG_FILE_COLS
		   " FROM files x JOIN n ON x.job = n.old RETURNING 1),"
		   " mp AS (INSERT INTO mpiio_files (job, " PG_MPIIO_COLS ") SELECT n.new, "
		   PG_MPIIO_COLS " FROM mpiio_files x JOIN n ON x.job = n.old RETURNING 1),"
		   " h5 AS (INSERT INTO hdf5_records (job, " PG_H5_COLS ") SELECT n.new, "
		   PG_H5_COLS " FROM hdf5_records x JOIN n ON x.job = n.old RETURNING 1),"
		   " rp AS (INSERT INTO rpc (job, " PG_RPC_COLS ") SELECT n.new, " PG_RPC_COLS
		   " FROM rpc x JOIN n ON x.job = n.old RETURNING 1),"
		   " u AS (UPDATE jobs j SET id = n.new FROM n WHERE j.id = n.old RETURNING 1),"
		   " ds AS (DELETE FROM series x USING n WHERE x.job = n.old RETURNING 1),"
		   " dt AS (DELETE FROM totals x USING n WHERE x.job = n.old RETURNING 1),"
		   " dst AS (DELETE FROM steps x USING n WHERE x.job = n.old RETURNING 1),"
		   " dmt AS (DELETE FROM mounts x USING n WHERE x.job = n.old RETURNING 1),"
		   " df AS (DELETE FROM files x USING n WHERE x.job = n.old RETURNING 1),"
		   " dm AS (DELETE FROM mpiio_files x USING n WHERE x.job = n.old RETURNING 1),"
		   " dh AS (DELETE FROM hdf5_records x USING n WHERE x.job = n.old RETURNING 1),"
		   " dr AS (DELETE FROM rpc x USING n WHERE x.job = n.old RETURNING 1)"
		   " SELECT (SELECT count(*) FROM u) FROM (SELECT count(*) FROM s) a,"
		   " (SELECT count(*) FROM t) c, (SELECT count(*) FROM st) d,"
		   " (SELECT count(*) FROM mt) e, (SELECT count(*) FROM ds) f,"
		   " (SELECT count(*) FROM dt) g, (SELECT count(*) FROM dst) h,"
		   " (SELECT count(*) FROM dmt) i, (SELECT count(*) FROM fi) j,"
		   " (SELECT count(*) FROM mp) k, (SELECT count(*) FROM df) l,"
		   " (SELECT count(*) FROM dm) o, (SELECT count(*) FROM h5) p,"
		   " (SELECT count(*) FROM dh) q, (SELECT count(*) FROM rp) v,"
		   " (SELECT count(*) FROM dr) w", PG_BLOCK_RUNNING, PG_BLOCK_SHIFT);
	if (b.failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	res = pg_run_params(pg, b.p, 3, params);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "move a month's parts that stay");
	PQclear(res);
	free(b.p);
	return err;
}

/*
 * The block's ($1 <= id < $2) runs, their parts in other blocks, and the
 * parts' series rows (the held parts moved out, every part left in the
 * block goes: its rows are deleted by range, not found one by one).
 */
#define BLOCK_RUNS                                                                         \
	"r AS (SELECT DISTINCT cluster, job_id, restart, run_start FROM jobs"                \
	" WHERE id >= $1::bigint AND id < $2::bigint),"                                      \
	" p AS (SELECT j.id FROM jobs j JOIN r USING (cluster, job_id, restart, run_start)"  \
	"  WHERE j.id < $1::bigint OR j.id >= $2::bigint),"                                  \
	" s AS (SELECT (SELECT count(*) FROM series"                                         \
	"  WHERE job >= $1::bigint AND job < $2::bigint)"                                    \
	"  + (SELECT count(*) FROM series WHERE job IN (SELECT id FROM p)) AS n)"

/*
 * Purges block b's runs whole, its parts whose run stays moved to the
 * running block first, and puts it in purging: block_drop() then drops its
 * partitions.
 */
static int block_purge(struct ioacct_pgstore *pg, int b, const char *cutoff,
		       struct ioacct_pgstore_purge_counts *counts)
{
	char lo[24], hi[24], blk[16], sql[256];
	const char *params[4] = { cutoff, lo, hi, blk };
	uint64_t runs;
	int err;

	snprintf(lo, sizeof(lo), "%" PRId64, (int64_t)b << PG_BLOCK_SHIFT);
	snprintf(hi, sizeof(hi), "%" PRId64, (int64_t)(b + 1) << PG_BLOCK_SHIFT);
	snprintf(blk, sizeof(blk), "%d", b);
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(" PG_BLOCK_LOCK ", %d)", b);
	err = pg_exec(pg, "BEGIN", "purge a month");
	/* Parts of the block being written are waited for; the next go to the running block. */
	if (!err)
		err = pg_exec(pg, sql, "lock a month");
	if (!err) {
		PGresult *res = pg_run_params(pg, "INSERT INTO purging VALUES ($1::integer)"
					      " ON CONFLICT DO NOTHING", 1, params + 3);

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			err = pg_conn_error(pg, res, "purge a month");
		PQclear(res);
	}
	if (!err)
		err = held_move(pg, params);
	/* The block's jobs rows go without their trigger: their partitions go whole. */
	snprintf(sql, sizeof(sql), "SET LOCAL ioacct.purging = '%d'", b);
	if (!err)
		err = pg_exec(pg, sql, "purge a month");
	if (!err)
		err = run_counts(pg, "WITH " BLOCK_RUNS ","
				 " m AS (DELETE FROM merged_jobs x USING r"
				 "  WHERE x.cluster = r.cluster AND x.job_id = r.job_id"
				 "  AND x.restart = r.restart AND x.run_start = r.run_start RETURNING 1),"
				 " rep AS (DELETE FROM job_reports x USING r"
				 "  WHERE x.cluster = r.cluster AND x.job_id = r.job_id"
				 "  AND x.restart = r.restart AND x.run_start = r.run_start RETURNING 1),"
				 " d AS (DELETE FROM jobs WHERE id >= $1::bigint"
				 "  AND id < $2::bigint RETURNING 1),"
				 " e AS (DELETE FROM jobs j USING p WHERE j.id = p.id RETURNING 1)"
				 " SELECT (SELECT count(*) FROM r),"
				 " (SELECT count(*) FROM d) + (SELECT count(*) FROM e),"
				 " (SELECT n FROM s) FROM (SELECT count(*) FROM m) a,"
				 " (SELECT count(*) FROM rep) c", 2, params + 1, "purge a month",
				 counts, &runs);
	if (!err)
		err = pg_exec(pg, "COMMIT", "purge a month");
	if (err)
		pg_rollback_quiet(pg);
	return err;
}

/* The blocks whose month ended before the cutoff ($1), not in purging, in order. */
static PGresult *old_months(struct ioacct_pgstore *pg, const char *const *params)
{
	PGresult *res = pg_run_params(pg,
			   "SELECT b FROM (SELECT (substr(c.relname, 8, 4)::integer - 2000) * 12"
			   " + substr(c.relname, 13, 2)::integer AS b FROM pg_inherits i"
			   " JOIN pg_class c ON c.oid = i.inhrelid"
			   " WHERE i.inhparent = 'series'::regclass"
			   " AND c.relname ~ '^series_[0-9]{4}_[0-9]{2}$') x"
			   " WHERE extract(epoch FROM make_timestamptz(2000 + b / 12,"
			   " b % 12 + 1, 1, 0, 0, 0, 'UTC'))::bigint * 1000000000 <= $1::bigint"
			   " AND b NOT IN (SELECT block FROM purging) ORDER BY b",
			   1, params);

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		pg_conn_error(pg, res, "see the months");
		PQclear(res);
		return NULL;
	}
	return res;
}

/* Block b's partitions dropped (block_drop), told; counted a month purged whole. */
static int drop_told(struct ioacct_pgstore *pg, int b, ioacct_pgstore_purge_fn progress,
		     void *arg, struct ioacct_pgstore_purge_counts *counts)
{
	struct ioacct_pgstore_purge_progress p = { .step = IOACCT_PG_PURGE_DROPPED };
	uint64_t t0 = ioacct_mono_ms();
	int err = block_drop(pg, b);

	if (err)
		return err;
	counts->months++;
	block_month(&p, b);
	p.ms = ioacct_mono_ms() - t0;
	return tell(pg, progress, arg, &p);
}

/*
 * The months: blocks a purge left in purging finished, then every block
 * whose month ended before the cutoff purged whole where its runs all go,
 * each told when its runs are gone and when its partitions are.
 */
static int blocks_purge(struct ioacct_pgstore *pg, const char *cutoff,
			ioacct_pgstore_purge_fn progress, void *arg,
			struct ioacct_pgstore_purge_counts *counts)
{
	const char *params[1] = { cutoff };
	PGresult *res;
	int err = 0;

	res = pg_run(pg, "SELECT block FROM purging ORDER BY 1");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "see the months being purged");
	for (int r = 0; !err && r < PQntuples(res); r++)
		err = drop_told(pg, (int)val_i64(res, r, 0), progress, arg, counts);
	PQclear(res);
	if (err)
		return err;
	res = old_months(pg, params);
	if (!res)
		return -EIO;
	for (int r = 0; !err && r < PQntuples(res); r++) {
		struct ioacct_pgstore_purge_progress p = { .step = IOACCT_PG_PURGE_MONTH };
		int b = (int)val_i64(res, r, 0);
		uint64_t t0 = ioacct_mono_ms();

		err = block_purge(pg, b, cutoff, &p.counts);
		if (err)
			break;
		counts->runs += p.counts.runs;
		counts->parts += p.counts.parts;
		counts->series += p.counts.series;
		block_month(&p, b);
		p.ms = ioacct_mono_ms() - t0;
		err = tell(pg, progress, arg, &p);
		if (!err)
			err = drop_told(pg, b, progress, arg, counts);
	}
	PQclear(res);
	return err;
}

/*
 * The dry run in one statement ($1: the cutoff in ns, $2: the old months'
 * blocks), one row per month and one (b NULL) for the rest: runs, parts,
 * series rows. Each part's run, its parts all ended before the cutoff and
 * no report waiting, goes with the first old month it has a part in (as
 * the months are purged in order), or with the rest. A month's series rows
 * are counted by its id range, less those of the range's parts that do not
 * go with it (a run that stays, a run of an earlier month), plus those of
 * its runs' parts elsewhere: only these few are looked up one by one.
 */
_Static_assert(PG_BLOCK_SHIFT == 33, "dry_sql's shifts are PG_BLOCK_SHIFT");
#define BLK(x) "(" x " >> 33)::integer"
#define LO(b) "(" b "::bigint << 33)"
#define HI(b) "((" b " + 1)::bigint << 33)"
static const char dry_sql[] =
	"WITH a AS MATERIALIZED (SELECT id, cluster, job_id, restart, run_start, end_ns,"
	"  CASE WHEN " BLK("id") " = ANY($2::integer[]) THEN " BLK("id") " END AS blk FROM jobs),"
	" k AS (SELECT cluster, job_id, restart, run_start FROM a"
	"  WHERE end_ns IS NULL OR end_ns >= $1::bigint"
	"  UNION SELECT cluster, job_id, restart, run_start FROM job_reports"
	"  WHERE written_at IS NULL),"
	" g AS MATERIALIZED (SELECT cluster, job_id, restart, run_start, min(blk) AS m FROM a"
	"  WHERE end_ns < $1::bigint AND NOT EXISTS (SELECT 1 FROM k WHERE k.cluster = a.cluster"
	"  AND k.job_id = a.job_id AND k.restart = a.restart AND k.run_start = a.run_start)"
	"  GROUP BY 1, 2, 3, 4),"
	" q AS MATERIALIZED (SELECT a.id, a.blk, g.m, g.job_id IS NOT NULL AS go FROM a"
	"  LEFT JOIN g USING (cluster, job_id, restart, run_start)"
	"  WHERE a.blk IS NOT NULL OR g.job_id IS NOT NULL),"
	" gn AS MATERIALIZED (SELECT m, count(*) AS n FROM g GROUP BY m),"
	" qn AS MATERIALIZED (SELECT m, count(*) AS n FROM q WHERE go GROUP BY m)"
	" SELECT b, coalesce((SELECT n FROM gn WHERE gn.m IS NOT DISTINCT FROM b), 0),"
	" coalesce((SELECT n FROM qn WHERE qn.m IS NOT DISTINCT FROM b), 0),"
	" CASE WHEN b IS NULL THEN"
	"  (SELECT count(*) FROM series WHERE job IN (SELECT id FROM q WHERE go AND m IS NULL))"
	" ELSE (SELECT count(*) FROM series WHERE job >= " LO("b") " AND job < " HI("b") ")"
	"  - (SELECT count(*) FROM series WHERE job IN (SELECT id FROM q"
	"   WHERE q.blk = b AND (NOT go OR q.m <> b)))"
	"  + (SELECT count(*) FROM series WHERE job IN (SELECT id FROM q"
	"   WHERE go AND q.m = b AND q.blk IS DISTINCT FROM b)) END"
	" FROM unnest($2::integer[] || NULL::integer) b ORDER BY b NULLS LAST";

/* The dry run: each month's figures and the rest's told, their sum in counts. */
static int purge_dry(struct ioacct_pgstore *pg, const char *cutoff,
		     ioacct_pgstore_purge_fn progress, void *arg,
		     struct ioacct_pgstore_purge_counts *counts)
{
	struct buf blocks = { 0 };
	const char *params[2] = { cutoff, NULL };
	PGresult *res;
	uint64_t t0 = ioacct_mono_ms();
	int err = pg_exec(pg, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY",
			  "count what a purge would delete");

	/* Its hash tables in memory: the store's jobs rows, some 100 bytes each. */
	if (!err)
		err = pg_exec(pg, "SET LOCAL work_mem = '256MB'", "count what a purge would delete");
	if (err) {
		pg_rollback_quiet(pg);
		return err;
	}
	/* Months left in purging: their runs are gone, their partitions would be dropped. */
	res = pg_run(pg, "SELECT block FROM purging ORDER BY 1");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "see the months being purged");
	for (int r = 0; !err && r < PQntuples(res); r++) {
		struct ioacct_pgstore_purge_progress p = { .step = IOACCT_PG_PURGE_MONTH };

		block_month(&p, (int)val_i64(res, r, 0));
		counts->months++;
		err = tell(pg, progress, arg, &p);
	}
	PQclear(res);
	res = err ? NULL : old_months(pg, params);
	if (!res) {
		pg_rollback_quiet(pg);
		return err ? err : -EIO;
	}
	pg_buf_add(&blocks, "{");
	for (int r = 0; r < PQntuples(res); r++)
		pg_buf_add(&blocks, "%s%s", r ? "," : "", PQgetvalue(res, r, 0));
	pg_buf_add(&blocks, "}");
	PQclear(res);
	if (blocks.failed) {
		free(blocks.p);
		pg_rollback_quiet(pg);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	params[1] = blocks.p;
	res = pg_run_params(pg, dry_sql, 2, params);
	free(blocks.p);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "count what a purge would delete");
	for (int r = 0; !err && r < PQntuples(res); r++) {
		struct ioacct_pgstore_purge_progress p = { .step = IOACCT_PG_PURGE_MONTH };

		if (PQgetisnull(res, r, 0)) {
			p.step = IOACCT_PG_PURGE_REST;
		} else {
			block_month(&p, (int)val_i64(res, r, 0));
			counts->months++;
		}
		p.counts.runs = val_u64(res, r, 1);
		p.counts.parts = val_u64(res, r, 2);
		p.counts.series = val_u64(res, r, 3);
		p.ms = ioacct_mono_ms() - t0;
		counts->runs += p.counts.runs;
		counts->parts += p.counts.parts;
		counts->series += p.counts.series;
		err = tell(pg, progress, arg, &p);
	}
	PQclear(res);
	pg_rollback_quiet(pg);
	return err;
}

int ioacct_pgstore_purge(struct ioacct_pgstore *pg, int64_t cutoff_unix, bool dry_run,
			 ioacct_pgstore_purge_fn progress, void *arg,
			 struct ioacct_pgstore_purge_counts *counts)
{
	struct ioacct_pgstore_purge_counts rest = { 0 };
	char sql[4096], cutoff[32];
	const char *params[1] = { cutoff };
	int n, err;

	memset(counts, 0, sizeof(*counts));
	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	snprintf(cutoff, sizeof(cutoff), "%" PRId64, cutoff_unix * INT64_C(1000000000));
	if (dry_run)
		return purge_dry(pg, cutoff, progress, arg, counts);
	err = blocks_purge(pg, cutoff, progress, arg, counts);
	if (err)
		return err;
	n = snprintf(sql, sizeof(sql),
		     "WITH " OLD_RUNS ","
		     " s AS (SELECT count(*) AS n FROM series WHERE job IN (SELECT id FROM p)),"
		     " m AS (DELETE FROM merged_jobs x USING r WHERE x.cluster = r.cluster"
		     "  AND x.job_id = r.job_id AND x.restart = r.restart"
		     "  AND x.run_start = r.run_start RETURNING 1),"
		     " rep AS (DELETE FROM job_reports x USING r WHERE x.cluster = r.cluster"
		     "  AND x.job_id = r.job_id AND x.restart = r.restart"
		     "  AND x.run_start = r.run_start RETURNING 1),"
		     " d AS (DELETE FROM jobs j USING p WHERE j.id = p.id RETURNING 1)"
		     " SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM d), (SELECT n FROM s)"
		     " FROM (SELECT count(*) FROM m) a, (SELECT count(*) FROM rep) b",
		     OUTSIDE_OLD_MONTHS, PURGE_BATCH);
	if (n < 0 || (size_t)n >= sizeof(sql))
		return pg_error(pg, -EINVAL, "cluster store: purge statement too long");
	err = batches(pg, sql, 1, params, false, "purge", progress, arg, &rest);
	counts->runs += rest.runs;
	counts->parts += rest.parts;
	counts->series += rest.series;
	return err;
}

/* The parts of a batch a downsample re-bins: narrower, a divisor of the new width ($2). */
#define REBINNED(p) p ".bin_width_ns < $2::bigint AND $2::bigint %% " p ".bin_width_ns = 0"

/*
 * Their RPC rows (issue 40) on the same bins, the rows of a new bin summed
 * (bin 0, the RPCs no job sent, stays 0): deleted and inserted again in the
 * statement (rpc has no unique key: both see the rows before it).
 */
#define RPC_SUM(name) ", sum(x." #name ")"
#define RPC_REBIN                                                                          \
	" rv AS (SELECT x.job, x.step_id, x.mnt_id, x.prog, x.vers, x.proc, x.flags,"        \
	" x.bin / ($2::bigint / p.bin_width_ns), max(x.name), (array_agg(x.name_raw))[1]"    \
	IOACCT_RPC_COUNTERS(RPC_SUM) " FROM rpc x JOIN p ON p.id = x.job AND " REBINNED("p") \
	" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8),"                                                 \
	" rd AS (DELETE FROM rpc x USING p WHERE x.job = p.id AND " REBINNED("p")            \
	" RETURNING 1),"                                                                     \
	" ri AS (INSERT INTO rpc (job, " PG_RPC_COLS ") SELECT * FROM rv RETURNING 1),"

/*
 * The re-binning of a batch ($2: the new width): each series' bins
 * divided by the width's factor, the samples of a new bin summed, the
 * arrays made again; the parts' RPC rows too; the parts' width set; the
 * runs' merged series forgotten.
 */
static int downsample_sql(char *sql, size_t len, bool dry_run)
{
	static const char cols[] = IOACCT_STORE_COUNTER_COLS;
	struct buf b = { 0 };
	const char *c;
	int n;

	if (dry_run) {
		n = snprintf(sql, len,
			     "WITH " OLD_RUNS " SELECT (SELECT count(*) FROM r),"
			     " (SELECT count(*) FROM p WHERE bin_width_ns < $2::bigint"
			     "  AND $2::bigint %% bin_width_ns = 0),"
			     " (SELECT count(*) FROM series WHERE job IN (SELECT id FROM p"
			     "  WHERE bin_width_ns < $2::bigint AND $2::bigint %% bin_width_ns = 0))",
			     "AND o.bin_width_ns < $2::bigint AND $2::bigint % o.bin_width_ns = 0",
			     INT32_MAX);
		return n < 0 || (size_t)n >= len ? -EINVAL : 0;
	}
	pg_buf_add(&b, " u AS (SELECT s.job, s.step_id, s.mnt_id, s.op,"
		   " (x.bin / ($2::bigint / p.bin_width_ns))::integer AS nb");
	for (c = cols; *c; c += strspn(c, ", ")) {
		size_t l = strcspn(c, ", ");

		pg_buf_add(&b, ", sum(x.%.*s) AS %.*s", (int)l, c, (int)l, c);
		c += l;
	}
	pg_buf_add(&b, " FROM series s JOIN p ON p.id = s.job"
		   " AND p.bin_width_ns < $2::bigint AND $2::bigint %% p.bin_width_ns = 0,"
		   " unnest(s.bins, " IOACCT_STORE_COUNTER_COLS ") AS x(bin, "
		   IOACCT_STORE_COUNTER_COLS ") GROUP BY 1, 2, 3, 4, 5),"
		   " a AS (SELECT job, step_id, mnt_id, op, array_agg(nb ORDER BY nb) AS bins");
	for (c = cols; *c; c += strspn(c, ", ")) {
		size_t l = strcspn(c, ", ");

		pg_buf_add(&b, ", CASE WHEN count(%.*s) = 0 THEN NULL ELSE array_agg(%.*s ORDER BY nb)"
			   " END AS %.*s", (int)l, c, (int)l, c, (int)l, c);
		c += l;
	}
	pg_buf_add(&b, " FROM u GROUP BY 1, 2, 3, 4),"
		   " up AS (UPDATE series s SET bins = a.bins");
	for (c = cols; *c; c += strspn(c, ", ")) {
		size_t l = strcspn(c, ", ");

		pg_buf_add(&b, ", %.*s = a.%.*s", (int)l, c, (int)l, c);
		c += l;
	}
	pg_buf_add(&b, " FROM a WHERE s.job = a.job AND s.step_id = a.step_id"
		   " AND s.mnt_id = a.mnt_id AND s.op = a.op RETURNING 1)," RPC_REBIN
		   " w AS (UPDATE jobs j SET bin_width_ns = $2::bigint FROM p WHERE j.id = p.id"
		   " AND p.bin_width_ns < $2::bigint AND $2::bigint %% p.bin_width_ns = 0 RETURNING 1),"
		   " m AS (DELETE FROM merged_jobs x USING r WHERE x.cluster = r.cluster"
		   " AND x.job_id = r.job_id AND x.restart = r.restart"
		   " AND x.run_start = r.run_start RETURNING 1)"
		   " SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM w),"
		   " (SELECT count(*) FROM up) FROM (SELECT count(*) FROM m) z,"
		   " (SELECT count(*) FROM rd) y, (SELECT count(*) FROM ri) x");
	if (b.failed) {
		free(b.p);
		return -ENOMEM;
	}
	n = snprintf(sql, len, "WITH " OLD_RUNS ", %s",
		     "AND o.bin_width_ns < $2::bigint AND $2::bigint % o.bin_width_ns = 0",
		     PURGE_BATCH, b.p);
	free(b.p);
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

int ioacct_pgstore_downsample(struct ioacct_pgstore *pg, int64_t cutoff_unix,
			      uint64_t bin_width_ns, bool dry_run,
			      struct ioacct_pgstore_purge_counts *counts)
{
	char *sql, cutoff[32], width[32];
	const char *params[2] = { cutoff, width };
	size_t len = 16384;
	int err;

	memset(counts, 0, sizeof(*counts));
	if (!bin_width_ns || bin_width_ns > INT64_MAX)
		return pg_error(pg, -EINVAL, "cluster store: downsample: bad bin width %" PRIu64,
				bin_width_ns);
	sql = malloc(len);
	if (!sql)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	snprintf(cutoff, sizeof(cutoff), "%" PRId64, cutoff_unix * INT64_C(1000000000));
	snprintf(width, sizeof(width), "%" PRIu64, bin_width_ns);
	err = downsample_sql(sql, len, dry_run);
	if (err)
		err = pg_error(pg, err, "cluster store: cannot make the downsample statement");
	else
		err = batches(pg, sql, 2, params, dry_run, "downsample", NULL, NULL, counts);
	free(sql);
	return err;
}

#endif /* HAVE_LIBPQ */
