/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, retention (see pgstore.h; issue 28):
 * runs of jobs that ended before a cutoff deleted whole, or their series
 * re-binned coarser. A run goes only whole, every part of it ended before
 * the cutoff and its merged report, if it has one, written: a run some node
 * has not exported yet, or whose report waits for a node, stays. Batches
 * of PURGE_BATCH runs, a transaction each: exports and queries go on
 * between them, and an interrupted purge leaves whole runs, gone or there.
 */
#include "pgstore.h"

#include <errno.h>
#include <string.h>

#ifndef HAVE_LIBPQ

int ioacct_pgstore_purge(struct ioacct_pgstore *pg, int64_t cutoff_unix, bool dry_run,
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

#define PURGE_BATCH 500

/*
 * The runs to act on, at most %d ($1: the cutoff in ns; extra: a condition
 * on a part o): every part ended before the cutoff, no report waiting.
 */
#define OLD_RUNS                                                                           \
	"r AS (SELECT DISTINCT o.cluster, o.job_id, o.restart FROM jobs o"                   \
	" WHERE o.end_ns < $1::bigint %s"                                                    \
	" AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.cluster = o.cluster"                  \
	"  AND k.job_id = o.job_id AND k.restart = o.restart"                                \
	"  AND (k.end_ns IS NULL OR k.end_ns >= $1::bigint))"                                \
	" AND NOT EXISTS (SELECT 1 FROM job_reports x WHERE x.cluster = o.cluster"           \
	"  AND x.job_id = o.job_id AND x.restart = o.restart AND x.written_at IS NULL)"      \
	" LIMIT %d),"                                                                        \
	" p AS (SELECT j.id, j.bin_width_ns FROM jobs j JOIN r USING (cluster, job_id, restart))"

/* Runs one statement of three counts (runs, parts, series rows), added to counts. */
static int run_counts(struct ioacct_pgstore *pg, const char *sql, int nparams,
		      const char *const *params, const char *what,
		      struct ioacct_pgstore_purge_counts *counts, uint64_t *runs)
{
	PGresult *res = PQexecParams(pg->conn, sql, nparams, NULL, params, NULL, NULL, 0);
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

/* Batches of sql, a transaction each, until one finds no run; dry_run: once, counting. */
static int batches(struct ioacct_pgstore *pg, const char *sql, int nparams,
		   const char *const *params, bool dry_run, const char *what,
		   struct ioacct_pgstore_purge_counts *counts)
{
	uint64_t runs = 0;
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
	} while (!dry_run && runs > 0);
	return 0;
}

int ioacct_pgstore_purge(struct ioacct_pgstore *pg, int64_t cutoff_unix, bool dry_run,
			 struct ioacct_pgstore_purge_counts *counts)
{
	char sql[2048], cutoff[32];
	const char *params[1] = { cutoff };
	int n;

	memset(counts, 0, sizeof(*counts));
	snprintf(cutoff, sizeof(cutoff), "%" PRId64, cutoff_unix * INT64_C(1000000000));
	if (dry_run)
		n = snprintf(sql, sizeof(sql),
			     "WITH " OLD_RUNS " SELECT (SELECT count(*) FROM r),"
			     " (SELECT count(*) FROM p),"
			     " (SELECT count(*) FROM series WHERE job IN (SELECT id FROM p))",
			     "", INT32_MAX);
	else
		n = snprintf(sql, sizeof(sql),
			     "WITH " OLD_RUNS ","
			     " s AS (SELECT count(*) AS n FROM series WHERE job IN (SELECT id FROM p)),"
			     " m AS (DELETE FROM merged_jobs x USING r WHERE x.cluster = r.cluster"
			     "  AND x.job_id = r.job_id AND x.restart = r.restart RETURNING 1),"
			     " rep AS (DELETE FROM job_reports x USING r WHERE x.cluster = r.cluster"
			     "  AND x.job_id = r.job_id AND x.restart = r.restart RETURNING 1),"
			     " d AS (DELETE FROM jobs j USING p WHERE j.id = p.id RETURNING 1)"
			     " SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM d), (SELECT n FROM s)"
			     " FROM (SELECT count(*) FROM m) a, (SELECT count(*) FROM rep) b",
			     "", PURGE_BATCH);
	if (n < 0 || (size_t)n >= sizeof(sql))
		return pg_error(pg, -EINVAL, "cluster store: purge statement too long");
	return batches(pg, sql, 1, params, dry_run, "purge", counts);
}

/*
 * The re-binning of a batch ($2: the new width): each series' bins
 * divided by the width's factor, the samples of a new bin summed, the
 * arrays made again; the parts' width set; the runs' merged series forgotten.
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
		   " AND s.mnt_id = a.mnt_id AND s.op = a.op RETURNING 1),"
		   " w AS (UPDATE jobs j SET bin_width_ns = $2::bigint FROM p WHERE j.id = p.id"
		   " AND p.bin_width_ns < $2::bigint AND $2::bigint %% p.bin_width_ns = 0 RETURNING 1),"
		   " m AS (DELETE FROM merged_jobs x USING r WHERE x.cluster = r.cluster"
		   " AND x.job_id = r.job_id AND x.restart = r.restart RETURNING 1)"
		   " SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM w),"
		   " (SELECT count(*) FROM up) FROM (SELECT count(*) FROM m) z");
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
		err = batches(pg, sql, 2, params, dry_run, "downsample", counts);
	free(sql);
	return err;
}

#endif /* HAVE_LIBPQ */
