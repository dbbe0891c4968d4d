/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, writing (see pgstore.h, pgstore_db.h):
 * finished jobs, exported from a node's outbox (daemon/export.c), go in by
 * batches, one transaction each, as COPY text: the batch's rows of jobs
 * into a staging table, then one COPY per table of children for the whole
 * batch (the per-file and MPI-IO records by pgstore_files.c). A batch costs
 * thirteen round trips however many jobs it holds, two more
 * with records, one more per month whose partitions it makes (a job alone
 * cost a dozen before batches; see docs/performance.md).
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"
#include "text.h"

/* A path's exact bytes (bytea, pg_raw_param()) when it is not valid UTF-8, else NULL. */
static void buf_raw(struct buf *b, const char *s, char sep)
{
	bool nomem = false;
	char *raw = pg_raw_param(s, &nomem);

	if (nomem)
		b->failed = true;
	else if (raw)
		pg_buf_add(b, "\\%s%c", raw, sep); /* COPY's text format: the backslash escaped */
	else
		pg_buf_add(b, "\\N%c", sep);
	free(raw);
}

/* 0 (not ended) is NULL, as in SQLite. */
static void buf_end(struct buf *b, int64_t end_ns)
{
	if (end_ns)
		pg_buf_add(b, "%" PRId64 "\t", end_ns);
	else
		pg_buf_add(b, "\\N\t");
}

static void buf_counters(struct buf *b, const struct ioacct_counters *c)
{
	uint64_t v[IOACCT_STORE_NR_COUNTERS];
	size_t n = ioacct_store_counter_values(c, v);

	for (size_t i = 0; i < n; i++)
		pg_buf_add(b, "%" PRIu64 "%c", v[i], i + 1 < n ? '\t' : '\n');
}

/* The jobs' rows in COPY order: the staging table's and the table's columns alike. */
#define JOB_COLS                                                                           \
	"cluster, job_id, node, start_ns, source, uid, gid, \"user\", name, workdir,"      \
	" array_job_id, array_task_id, end_ns, state, exit_code, probe_mode, bin_width_ns," \
	" dropped_events, dropped_bytes, workdir_raw, restart, cmdline, lib_opens_missed"

static void buf_job(struct buf *b, const char *id, const struct ioacct_job *j)
{
	pg_buf_add(b, "%s\t", id);
	pg_buf_copy_text(b, j->cluster, sizeof(j->cluster), '\t');
	pg_buf_add(b, "%" PRIu64 "\t", j->job_id);
	pg_buf_copy_text(b, j->node, sizeof(j->node), '\t');
	pg_buf_add(b, "%" PRId64 "\t", j->start_ns);
	pg_buf_copy_text(b, j->source, sizeof(j->source), '\t');
	pg_buf_add(b, "%" PRIu32 "\t%" PRIu32 "\t", j->uid, j->gid);
	pg_buf_copy_text(b, j->user, sizeof(j->user), '\t');
	pg_buf_copy_text(b, j->name, sizeof(j->name), '\t');
	pg_buf_copy_text(b, j->workdir, sizeof(j->workdir), '\t');
	if (j->has_array)
		pg_buf_add(b, "%" PRIu32 "\t%" PRIu32 "\t", j->array_job_id, j->array_task_id);
	else
		pg_buf_add(b, "\\N\t\\N\t");
	buf_end(b, j->end_ns);
	pg_buf_copy_text(b, j->state, sizeof(j->state), '\t');
	pg_buf_add(b, "%" PRId32 "\t", j->exit_code);
	pg_buf_copy_text(b, j->probe_mode, sizeof(j->probe_mode), '\t');
	pg_buf_add(b, "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t", j->bin_width_ns, j->dropped_events,
		   j->dropped_bytes);
	buf_raw(b, j->workdir, '\t');
	pg_buf_add(b, "%" PRIu32 "\t", j->restart);
	pg_buf_copy_text(b, j->cmdline, sizeof(j->cmdline), '\t');
	pg_buf_add(b, "%" PRIu64 "\n", j->lib_opens_missed);
}

static void buf_job_of(struct buf *b, const char *id, const struct ioacct_jobdata *jd)
{
	buf_job(b, id, &jd->job);
}

static void buf_steps(struct buf *b, const char *id, const struct ioacct_jobdata *jd)
{
	for (size_t i = 0; i < jd->nsteps; i++) {
		const struct ioacct_step *s = &jd->steps[i];

		pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRId64 "\t", id, s->step_id, s->start_ns);
		buf_end(b, s->end_ns);
		pg_buf_copy_text(b, s->state, sizeof(s->state), '\t');
		pg_buf_add(b, "%" PRId32 "\t", s->exit_code);
		pg_buf_copy_text(b, s->cgroup, sizeof(s->cgroup), '\n');
	}
}

static void buf_mounts(struct buf *b, const char *id, const struct ioacct_jobdata *jd)
{
	for (size_t i = 0; i < jd->nmounts; i++) {
		const struct ioacct_mount *m = &jd->mounts[i];

		pg_buf_add(b, "%s\t%" PRIu64 "\t", id, m->mnt_id);
		pg_buf_copy_text(b, m->path, sizeof(m->path), '\t');
		pg_buf_copy_text(b, m->fstype, sizeof(m->fstype), '\t');
		pg_buf_copy_text(b, m->source, sizeof(m->source), '\t');
		buf_raw(b, m->path, '\n');
	}
}

static void buf_totals(struct buf *b, const char *id, const struct ioacct_jobdata *jd)
{
	for (size_t i = 0; i < jd->ntotals; i++) {
		const struct ioacct_sample *s = &jd->totals[i];

		pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu32 "\t", id, s->step_id,
			   s->mnt_id, s->op);
		buf_counters(b, &s->c);
	}
}

/* A batch: its parts, and the ids their rows of jobs get. */
struct batch {
	const struct ioacct_jobdata *const *jds;
	size_t n;
	char (*ids)[24];
};

/* One COPY of every part's rows of one table, made by fn: one round trip for the batch. */
static int put_rows(struct ioacct_pgstore *pg, const struct batch *bt, const char *sql,
		    void (*fn)(struct buf *, const char *, const struct ioacct_jobdata *),
		    struct buf *b, const char *what)
{
	int err = pg_copy_begin(pg, sql);

	if (err)
		return err;
	for (size_t i = 0; i < bt->n && !err; i++) {
		fn(b, bt->ids[i], bt->jds[i]);
		err = pg_copy_flush(pg, b, false);
	}
	return pg_copy_end(pg, b, err, what);
}

static int put_series(struct ioacct_pgstore *pg, const struct batch *bt, struct buf *b)
{
	size_t i;
	int err;

	for (i = 0; i < bt->n && !bt->jds[i]->nseries; i++)
		;
	if (i == bt->n)
		return 0;
	err = pg_copy_begin(pg, "COPY series (job, step_id, mnt_id, op, bins, "
			    IOACCT_STORE_COUNTER_COLS ") FROM STDIN");
	for (i = 0; i < bt->n && !err; i++)
		err = pg_buf_series(pg, bt->ids[i], bt->jds[i]->series, bt->jds[i]->nseries, b);
	return pg_copy_end(pg, b, err, "store the series");
}

/*
 * The session's staging table for the batch's rows of jobs, made once per
 * connection outside any transaction (a rollback would take it back).
 */
static int staging_table(struct ioacct_pgstore *pg)
{
	int err;

	if (pg->export_batch)
		return 0;
	err = pg_exec(pg, "CREATE TEMP TABLE export_batch (LIKE jobs INCLUDING DEFAULTS)"
		      " ON COMMIT DELETE ROWS", "make the export's staging table");
	if (!err)
		pg->export_batch = true;
	return err;
}

/*
 * The months missing a partition that the batch's parts go to (not those
 * being purged: their parts go to the running block), as block numbers.
 */
#define BLOCKS_MISSING_SQL                                                                  \
	"SELECT b FROM (SELECT DISTINCT ioacct_block(e) AS b FROM unnest($1::bigint[]) e) x"  \
	" WHERE NOT EXISTS (SELECT 1 FROM purging p WHERE p.block = x.b)"                     \
	" AND EXISTS (SELECT 1 FROM unnest(ARRAY['series', 'totals', 'files', 'mpiio_files',"  \
	" 'steps', 'mounts', 'hdf5_records', 'rpc']) t"                                                       \
	" WHERE to_regclass(quote_ident(t || '_' || ioacct_block_name(x.b))) IS NULL) ORDER BY b"

/*
 * The partitions of the months the batch's parts go to, made before its
 * transaction, each month in a transaction of its own. Made by the trigger
 * inside the batch's transaction (as before), after the batch's rows had
 * locked some of the partitioned tables, it deadlocked with another node
 * writing or making the same: three nodes' first parts of a month
 * deadlocked again each time they retried (tests/integration/52-pgmonths.sh).
 * The trigger still makes one that a purge dropped meanwhile.
 */
static int blocks_ready(struct ioacct_pgstore *pg, const struct batch *bt)
{
	struct buf a = { 0 };
	const char *params[1];
	PGresult *res;
	int err = 0;

	pg_buf_add(&a, "{");
	for (size_t i = 0; i < bt->n; i++) {
		int64_t end_ns = bt->jds[i]->job.end_ns;

		if (end_ns)
			pg_buf_add(&a, "%s%" PRId64, i ? "," : "", end_ns);
		else
			pg_buf_add(&a, "%sNULL", i ? "," : "");
	}
	pg_buf_add(&a, "}");
	if (a.failed) {
		free(a.p);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	params[0] = a.p;
	res = pg_exec_prepared(pg, PG_STMT_blocks_missing, BLOCKS_MISSING_SQL, 1, params);
	free(a.p);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "see the months' partitions");
	for (int r = 0; !err && r < PQntuples(res); r++) {
		PGresult *made;

		params[0] = PQgetvalue(res, r, 0);
		made = pg_exec_prepared(pg, PG_STMT_block_parts,
					"SELECT ioacct_block_parts($1::integer)", 1, params);
		if (PQresultStatus(made) != PGRES_TUPLES_OK)
			err = pg_conn_error(pg, made, "make a month's partitions");
		PQclear(made);
	}
	PQclear(res);
	return err;
}

/*
 * Begins the transaction. The staged rows carry their place in the batch
 * as their id: the jobs' own ids are given by the table's trigger as they
 * go in (schema 8: the block of the month the part ended, then the
 * sequence), and read back by ids_placed().
 */
static int begin_ids(struct ioacct_pgstore *pg, const struct batch *bt)
{
	for (size_t i = 0; i < bt->n; i++)
		snprintf(bt->ids[i], sizeof(bt->ids[i]), "%zu", i + 1);
	return pg_exec(pg, "BEGIN", "begin a transaction");
}

/*
 * The partitioned tables locked first, in the order a month's partitions
 * are made (PG_BLOCK_TABLES): the batch's transaction waits for a node
 * making some, or that one for it, never both.
 */
static int lock_parents(struct ioacct_pgstore *pg)
{
	return pg_exec(pg, PG_BLOCK_LOCK_SQL, "lock the partitioned tables");
}

/*
 * The staged rows go in; each part's id, as the trigger made it, replaces
 * its place in bt->ids (a part is one (cluster, job_id, node, start_ns)).
 * A part written before keeps its run (run_start, carried by RUNS_SQL);
 * the trigger gives the others theirs, in the batch's order.
 */
#define PLACE_SQL                                                                           \
	"WITH ins AS (INSERT INTO jobs (" JOB_COLS ", run_start) SELECT " JOB_COLS           \
	", run_start FROM export_batch ORDER BY id RETURNING id, cluster, job_id, node,"    \
	" start_ns) SELECT b.id, ins.id FROM ins JOIN export_batch b ON b.cluster = ins.cluster" \
	" AND b.job_id = ins.job_id AND b.node = ins.node AND b.start_ns = ins.start_ns"

static int ids_placed(struct ioacct_pgstore *pg, const struct batch *bt)
{
	PGresult *res = pg_exec_prepared(pg, PG_STMT_place, PLACE_SQL, 0, NULL);
	size_t placed = 0;
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "store the jobs");
	for (int r = 0; !err && r < PQntuples(res); r++) {
		unsigned long long ord = strtoull(PQgetvalue(res, r, 0), NULL, 10);

		if (ord < 1 || ord > bt->n)
			continue;
		snprintf(bt->ids[ord - 1], sizeof(bt->ids[ord - 1]), "%s", PQgetvalue(res, r, 1));
		placed++;
	}
	if (!err && placed != bt->n)
		err = pg_error(pg, -EPROTO, "cluster store: %zu of a batch of %zu jobs stored",
			       placed, bt->n);
	PQclear(res);
	return err;
}

/*
 * The batch's runs locked, in order (pgstore_db.h: a run's parts are given
 * their run one at a time, by the trigger; taken here first, a batch never
 * waits for another batch that waits for it), and each part's earlier copy's
 * run kept for it: a part written again (a step's export, then its end's;
 * an export retried) stays in its run.
 */
#define RUNS_SQL                                                                            \
	"SELECT pg_advisory_xact_lock(" PG_RUN_LOCK ", k) FROM (SELECT DISTINCT "            \
	PG_RUN_BUCKET("") " AS k FROM export_batch ORDER BY 1 OFFSET 0) l;"                  \
	"UPDATE export_batch b SET run_start = (SELECT x.run_start FROM jobs x"              \
	" WHERE x.cluster = b.cluster AND x.job_id = b.job_id AND x.node = b.node"           \
	" AND x.start_ns = b.start_ns AND x.restart = b.restart);"

/*
 * The parts' earlier copies go (their rows with them: ON DELETE CASCADE);
 * the staged rows go in after (ids_placed). The planner knows nothing of
 * the staging table (never analysed: it guesses 180 rows) and would join
 * it to a whole table by hash: each earlier copy is found by its unique
 * key in a scalar subquery (an index probe).
 */
#define REPLACE_SQL                                                                         \
	"DELETE FROM jobs WHERE id = ANY (ARRAY(SELECT (SELECT x.id FROM jobs x"            \
	" WHERE x.cluster = b.cluster AND x.job_id = b.job_id AND x.node = b.node"           \
	" AND x.start_ns = b.start_ns) FROM export_batch b));"

/*
 * Once placed, each staged row learns its run, and the runs' merged series,
 * made without the parts as they are now, go (found through their key's
 * index with the batch's clusters and job ids as arrays).
 */
#define FORGET_MERGED_SQL                                                                   \
	"UPDATE export_batch b SET run_start = (SELECT x.run_start FROM jobs x"              \
	" WHERE x.cluster = b.cluster AND x.job_id = b.job_id AND x.node = b.node"           \
	" AND x.start_ns = b.start_ns);"                                                    \
	"DELETE FROM merged_jobs m WHERE m.cluster = ANY (ARRAY(SELECT cluster"             \
	" FROM export_batch)) AND m.job_id = ANY (ARRAY(SELECT job_id FROM export_batch))"  \
	" AND EXISTS (SELECT 1 FROM export_batch b WHERE b.cluster = m.cluster"             \
	" AND b.job_id = m.job_id AND b.restart = m.restart AND b.run_start = m.run_start);"

static int put_batch(struct ioacct_pgstore *pg, const struct batch *bt, struct buf *b)
{
	int err = begin_ids(pg, bt);

	if (!err)
		err = lock_parents(pg);
	if (!err)
		err = put_rows(pg, bt, "COPY export_batch (id, " JOB_COLS ") FROM STDIN",
			       buf_job_of, b, "stage the jobs");
	if (!err)
		err = pg_exec(pg, RUNS_SQL REPLACE_SQL, "replace the jobs' earlier copies");
	if (!err)
		err = ids_placed(pg, bt);
	if (!err)
		err = pg_exec(pg, FORGET_MERGED_SQL, "forget the runs' merged series");
	if (!err)
		err = put_rows(pg, bt, "COPY steps (job, step_id, start_ns, end_ns, state,"
			       " exit_code, cgroup) FROM STDIN", buf_steps, b, "store the steps");
	if (!err)
		err = put_rows(pg, bt, "COPY mounts (job, mnt_id, path, fstype, source, path_raw)"
			       " FROM STDIN", buf_mounts, b, "store the mounts");
	if (!err)
		err = put_rows(pg, bt, "COPY totals (job, step_id, mnt_id, op, "
			       IOACCT_STORE_COUNTER_COLS ") FROM STDIN", buf_totals, b,
			       "store the totals");
	if (!err)
		err = put_series(pg, bt, b);
	if (!err)
		err = pg_records_put(pg, bt->jds, bt->ids, bt->n, b);
	if (!err)
		err = pg_rpc_put(pg, bt->jds, bt->ids, bt->n, b);
	if (!err)
		err = pg_merged_complete(pg);
	if (!err)
		err = pg_exec(pg, "COMMIT", "commit");
	return err;
}

int ioacct_pgstore_jobs_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
			    size_t n)
{
	struct buf b = { 0 };
	struct batch bt = { .jds = jds, .n = n };
	int err;

	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	if (!n)
		return 0;
	bt.ids = calloc(n, sizeof(*bt.ids));
	if (!bt.ids)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	err = staging_table(pg);
	if (!err)
		err = blocks_ready(pg, &bt);
	if (!err) {
		err = put_batch(pg, &bt, &b);
		if (err)
			pg_rollback_quiet(pg);
	}
	free(b.p);
	free(bt.ids);
	if (!err)
		return 0;
	/* Name the job (or the batch): the message goes to the log of a node with many. */
	{
		char msg[sizeof(pg->errmsg)], cluster[sizeof(jds[0]->job.cluster) * 4];

		snprintf(msg, sizeof(msg), "%s", pg->errmsg);
		ioacct_text_clean(cluster, sizeof(cluster), jds[0]->job.cluster);
		if (n == 1)
			pg_error(pg, err, "%s (job %" PRIu64 " of cluster %s)", msg,
				 jds[0]->job.job_id, cluster);
		else
			pg_error(pg, err, "%s (a batch of %zu jobs, the first %" PRIu64
				 " of cluster %s)", msg, n, jds[0]->job.job_id, cluster);
	}
	return err;
}

int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	return ioacct_pgstore_jobs_put(pg, &jd, 1);
}

#endif /* HAVE_LIBPQ */
