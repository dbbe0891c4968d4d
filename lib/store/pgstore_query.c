/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, queries (see pgstore.h, pgstore_db.h):
 * a page of jobs selected by a filter, their nodes' rows and children
 * fetched in one query per table, each whole job made by pgstore_merge.c;
 * one job loaded.
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"

#define JOB_SEL_COLS                                                                   \
	"j.id, j.cluster, j.job_id, j.node, j.source, j.uid, j.gid, j.\"user\", j.name,"  \
	" j.workdir, j.array_job_id, j.array_task_id, j.start_ns, j.end_ns, j.state,"      \
	" j.exit_code, j.probe_mode, j.bin_width_ns, j.dropped_events, j.dropped_bytes,"   \
	" j.restart, j.run_start, j.cmdline, j.lib_opens_missed"

/*
 * Per node (by_node), a job's row n (from 1, by node name) is keyed
 * key * NODE_RANKS + n: as many nodes, and ids up to 2^63 / NODE_RANKS.
 */
#define NODE_RANKS (1 << 20)

static void job_from_row(const PGresult *res, int row, struct ioacct_job *j)
{
	memset(j, 0, sizeof(*j));
	j->key = val_i64(res, row, 1);
	val_str(res, row, 2, j->cluster, sizeof(j->cluster));
	j->job_id = val_u64(res, row, 3);
	val_str(res, row, 4, j->node, sizeof(j->node));
	val_str(res, row, 5, j->source, sizeof(j->source));
	j->uid = (uint32_t)val_u64(res, row, 6);
	j->gid = (uint32_t)val_u64(res, row, 7);
	val_str(res, row, 8, j->user, sizeof(j->user));
	val_str(res, row, 9, j->name, sizeof(j->name));
	val_str(res, row, 10, j->workdir, sizeof(j->workdir));
	j->has_array = !PQgetisnull(res, row, 11);
	j->array_job_id = (uint32_t)val_u64(res, row, 11);
	j->array_task_id = (uint32_t)val_u64(res, row, 12);
	j->start_ns = val_i64(res, row, 13);
	j->end_ns = val_i64(res, row, 14);
	val_str(res, row, 15, j->state, sizeof(j->state));
	j->exit_code = (int32_t)val_i64(res, row, 16);
	val_str(res, row, 17, j->probe_mode, sizeof(j->probe_mode));
	j->bin_width_ns = val_u64(res, row, 18);
	j->dropped_events = val_u64(res, row, 19);
	j->dropped_bytes = val_u64(res, row, 20);
	j->restart = (uint32_t)val_u64(res, row, 21);
	j->run_start = val_i64(res, row, 22);
	val_str(res, row, 23, j->cmdline, sizeof(j->cmdline));
	j->lib_opens_missed = val_u64(res, row, 24);
}

static int child_query(struct ioacct_pgstore *pg, const char *sql, const char *ids,
		       struct children *c, const char *what)
{
	const char *params[1] = { ids };

	c->res = pg_run_params(pg, sql, 1, params);
	if (PQresultStatus(c->res) != PGRES_TUPLES_OK)
		return pg_conn_error(pg, c->res, what);
	c->n = PQntuples(c->res);
	c->job = calloc(c->n ? (size_t)c->n : 1, sizeof(*c->job));
	if (!c->job)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	for (int i = 0; i < c->n; i++)
		c->job[i] = val_i64(c->res, i, 0);
	return 0;
}

static void children_free(struct children *c)
{
	PQclear(c->res);
	free(c->job);
}

/*
 * Which runs a selection keeps (issue 36): a run is (cluster, job_id,
 * restart, run_start). run_start not 0: that run exactly; else nth >= 0:
 * the run nth earlier runs of the job id started before (a page of one);
 * else every run (f->duplicates) or each job id's last.
 */
struct run_pick {
	int64_t nth;
	uint32_t restart;
	int64_t run_start;
};

/* The WHERE of the jobs selected: numbers inline, cluster names escaped. */
static int where_sql(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
		     const struct run_pick *pick, struct buf *b)
{
	pg_buf_add(b, " WHERE true");
	if (pick->run_start)
		pg_buf_add(b, " AND j.restart = %" PRIu32 " AND j.run_start = %" PRId64,
			   pick->restart, pick->run_start);
	/*
	 * An earlier run of a job id (requeued, or the id used again) gives way
	 * to its later ones, as sacct returns the most recent job of a number.
	 */
	else if (pick->nth < 0 && !f->duplicates)
		pg_buf_add(b, " AND NOT EXISTS (SELECT 1 FROM jobs l WHERE l.cluster = j.cluster"
			   " AND l.job_id = j.job_id AND l.run_start > j.run_start)");
	if (f->running_here) {
		char *owned, *lit = NULL;
		const char *name = pg_text_param(f->running_here, &owned);

		if (name)
			lit = PQescapeLiteral(pg->conn, name, strlen(name));
		free(owned);
		if (!lit)
			return pg_conn_error(pg, NULL, "quote a node name");
		pg_buf_add(b, " AND NOT (j.end_ns IS NULL AND j.node = %s)", lit);
		PQfreemem(lit);
	}
	if (f->njob_ids) {
		pg_buf_add(b, " AND j.job_id IN (");
		for (size_t i = 0; i < f->njob_ids; i++)
			pg_buf_add(b, "%s%" PRIu64, i ? "," : "", f->job_ids[i]);
		pg_buf_add(b, ")");
	}
	if (f->nuids) {
		pg_buf_add(b, " AND j.uid IN (");
		for (size_t i = 0; i < f->nuids; i++)
			pg_buf_add(b, "%s%" PRIu32, i ? "," : "", f->uids[i]);
		pg_buf_add(b, ")");
	}
	if (f->nclusters) {
		pg_buf_add(b, " AND j.cluster IN (");
		for (size_t i = 0; i < f->nclusters; i++) {
			char *owned, *lit = NULL;
			const char *name = pg_text_param(f->clusters[i], &owned);

			if (name)
				lit = PQescapeLiteral(pg->conn, name, strlen(name));
			free(owned);
			if (!lit)
				return pg_conn_error(pg, NULL, "quote a cluster name");
			pg_buf_add(b, "%s%s", i ? "," : "", lit);
			PQfreemem(lit);
		}
		pg_buf_add(b, ")");
	}
	if (f->start_ns)
		pg_buf_add(b, " AND j.start_ns >= %" PRId64 " - (SELECT"
			   " coalesce(max(end_ns - start_ns), 0) FROM jobs) AND coalesce(j.end_ns, 9223372036854775807) >= %" PRId64,
			   f->start_ns, f->start_ns);
	if (f->end_ns)
		pg_buf_add(b, " AND j.start_ns <= %" PRId64, f->end_ns);
	return b->failed ? pg_error(pg, -ENOMEM, "cluster store: out of memory") : 0;
}

/*
 * The page's jobs (keys), then each with its nodes' rows, in key order. A
 * job is one run: the rows of the same cluster, job id, restart count and
 * run_start.
 */
static int page_sql(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
		    const struct run_pick *pick, struct buf *b)
{
	int ret;

	pg_buf_add(b, "WITH sel AS (SELECT " JOB_SEL_COLS " FROM jobs j");
	ret = where_sql(pg, f, pick, b);
	if (ret)
		return ret;
	/*
	 * Per node, a job's rows come together, by node: each is keyed by its
	 * job's key and its rank among the job's nodes, which pages go by.
	 */
	if (f->by_node)
		pg_buf_add(b, "), g AS (SELECT id, min(id) OVER w * %d + row_number() OVER"
			   " (w ORDER BY node, start_ns, id) AS key FROM sel"
			   " WINDOW w AS (PARTITION BY cluster, job_id, restart, run_start)),"
			   " k AS (SELECT id, key FROM g WHERE key > %" PRId64
			   " ORDER BY key LIMIT %zu)"
			   " SELECT k.key, sel.* FROM k JOIN sel ON sel.id = k.id ORDER BY k.key",
			   NODE_RANKS, f->after_key, f->limit ? f->limit : (size_t)INT64_MAX);
	else if (pick->nth >= 0)
		pg_buf_add(b, "), k AS (SELECT min(id) AS key, cluster, job_id, restart, run_start"
			   " FROM sel GROUP BY cluster, job_id, restart, run_start"
			   " ORDER BY min(start_ns), 1 OFFSET %" PRId64 " LIMIT 1)"
			   " SELECT k.key, sel.* FROM k JOIN sel USING (cluster, job_id, restart, run_start)"
			   " ORDER BY k.key, sel.node, sel.start_ns", pick->nth);
	else
		pg_buf_add(b, "), k AS (SELECT min(id) AS key, cluster, job_id, restart, run_start"
			   " FROM sel GROUP BY cluster, job_id, restart, run_start HAVING min(id) > %"
			   PRId64 " ORDER BY 1 LIMIT %zu)"
			   " SELECT k.key, sel.* FROM k JOIN sel USING (cluster, job_id, restart, run_start)"
			   " ORDER BY k.key, sel.node, sel.start_ns",
			   f->after_key, f->limit ? f->limit : (size_t)INT64_MAX);
	return b->failed ? pg_error(pg, -ENOMEM, "cluster store: out of memory") : 0;
}

/* The children of a page's members, one result per table. */
struct page {
	struct children steps, mounts, totals, series, rpc;
};

/*
 * The children of the page's members m[0..nm) (`ids`, their ids as an
 * array): steps, mounts, totals, and with_series their series, raw only
 * for jobs of one node: PostgreSQL sums the others' (series_summed); with
 * rpc_totals, a listing's, their RPC rows summed over their bins (issue 40).
 */
static int page_children(struct ioacct_pgstore *pg, const struct member *m, size_t nm,
			 const char *ids, bool with_series, bool rpc_totals, struct page *pc)
{
	struct buf ids1 = { 0 };
	int ret;

	ret = child_query(pg, "SELECT job, step_id, start_ns, end_ns, state, exit_code FROM steps"
			  " WHERE job = ANY($1::bigint[]) ORDER BY job, step_id", ids, &pc->steps,
			  "select steps");
	if (!ret)
		ret = child_query(pg, "SELECT job, mnt_id, path, fstype, source FROM mounts"
				  " WHERE job = ANY($1::bigint[]) ORDER BY job, mnt_id", ids,
				  &pc->mounts, "select mounts");
	if (!ret)
		ret = child_query(pg, "SELECT job, step_id, mnt_id, op, " IOACCT_STORE_COUNTER_COLS
				  " FROM totals WHERE job = ANY($1::bigint[]) ORDER BY job", ids,
				  &pc->totals, "select totals");
	if (!ret && rpc_totals)
		ret = child_query(pg, PG_RPC_TOTALS_SQL, ids, &pc->rpc, "select RPC totals");
	pg_buf_add(&ids1, "{");
	for (size_t i = 0, k = 0; i < nm; i++)
		if ((i == 0 || m[i - 1].key != m[i].key) && (i + 1 == nm || m[i + 1].key != m[i].key))
			pg_buf_add(&ids1, "%s%" PRId64, k++ ? "," : "", m[i].id);
	pg_buf_add(&ids1, "}");
	if (!ret && ids1.failed)
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
	if (!ret && with_series)
		ret = child_query(pg, "SELECT job, step_id, mnt_id, op, bin, "
				  IOACCT_STORE_COUNTER_COLS " FROM " PG_SERIES_ROWS " s"
				  " WHERE job = ANY($1::bigint[]) ORDER BY job", ids1.p, &pc->series,
				  "select series");
	free(ids1.p);
	return ret;
}

static int select_jobs(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
		       const struct run_pick *pick, bool peaks, bool keep_series,
		       ioacct_pgstore_job_fn fn, void *arg)
{
	struct page pc = { 0 };
	struct buf b = { 0 }, ids = { 0 };
	struct member *m = NULL;
	PGresult *res = NULL;
	size_t nm = 0;
	int ret;

	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	pg->merged_missing = false;
	ret = page_sql(pg, f, pick, &b);
	if (ret)
		goto out;
	res = pg_run(pg, b.p);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = pg_conn_error(pg, res, "select jobs");
		goto out;
	}
	nm = (size_t)PQntuples(res);
	m = calloc(nm ? nm : 1, sizeof(*m));
	if (!m) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	pg_buf_add(&ids, "{");
	for (size_t i = 0; i < nm; i++) {
		m[i].key = val_i64(res, (int)i, 0);
		m[i].id = val_i64(res, (int)i, 1);
		job_from_row(res, (int)i, &m[i].job);
		m[i].job.key = m[i].id;
		pg_buf_add(&ids, "%s%" PRId64, i ? "," : "", m[i].id);
	}
	pg_buf_add(&ids, "}");
	if (ids.failed) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	if (!nm)
		goto out;
	ret = page_children(pg, m, nm, ids.p, peaks || keep_series, !keep_series, &pc);
	for (size_t i = 0; !ret && i < nm;) {
		size_t j = i + 1;

		while (j < nm && m[j].key == m[i].key)
			j++;
		ret = pg_group_emit(pg, m + i, j - i, &pc.steps, &pc.mounts, &pc.totals, &pc.series,
				    keep_series ? NULL : &pc.rpc, peaks, keep_series, fn, arg);
		i = j;
	}
out:
	for (size_t i = 0; i < nm; i++) {
		free(m[i].mnt_from);
		free(m[i].mnt_to);
	}
	free(m);
	PQclear(res);
	children_free(&pc.steps);
	children_free(&pc.mounts);
	children_free(&pc.totals);
	children_free(&pc.series);
	children_free(&pc.rpc);
	free(b.p);
	free(ids.p);
	return ret;
}

int ioacct_pgstore_jobs_select(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
			       bool peaks, ioacct_pgstore_job_fn fn, void *arg)
{
	const struct run_pick every = { .nth = -1 };

	return select_jobs(pg, f, &every, peaks, false, fn, arg);
}

/* Keeps a copy of the job with the highest key (the newest cluster's, with -M none). */
static int keep_newest(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		       size_t npeaks, void *arg)
{
	struct ioacct_jobdata **out = arg, *c;

	(void)peaks;
	(void)npeaks;
	if (*out && (*out)->job.key > jd->job.key)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *jd;
	c->steps = malloc((jd->nsteps ? jd->nsteps : 1) * sizeof(*c->steps));
	c->mounts = malloc((jd->nmounts ? jd->nmounts : 1) * sizeof(*c->mounts));
	c->totals = malloc((jd->ntotals ? jd->ntotals : 1) * sizeof(*c->totals));
	c->series = malloc((jd->nseries ? jd->nseries : 1) * sizeof(*c->series));
	c->nodes = malloc((jd->nnodes ? jd->nnodes : 1) * sizeof(*c->nodes));
	c->files = malloc((jd->nfiles ? jd->nfiles : 1) * sizeof(*c->files));
	c->mpiio = malloc((jd->nmpiio ? jd->nmpiio : 1) * sizeof(*c->mpiio));
	c->h5 = malloc((jd->nh5 ? jd->nh5 : 1) * sizeof(*c->h5));
	c->rpc = malloc((jd->nrpc ? jd->nrpc : 1) * sizeof(*c->rpc));
	if (!c->steps || !c->mounts || !c->totals || !c->series || !c->nodes || !c->files ||
	    !c->mpiio || !c->h5 || !c->rpc) {
		ioacct_jobdata_free(c);
		return -ENOMEM;
	}
	memcpy(c->steps, jd->steps, jd->nsteps * sizeof(*c->steps));
	memcpy(c->mounts, jd->mounts, jd->nmounts * sizeof(*c->mounts));
	memcpy(c->totals, jd->totals, jd->ntotals * sizeof(*c->totals));
	memcpy(c->series, jd->series, jd->nseries * sizeof(*c->series));
	memcpy(c->nodes, jd->nodes, jd->nnodes * sizeof(*c->nodes));
	memcpy(c->files, jd->files, jd->nfiles * sizeof(*c->files));
	memcpy(c->mpiio, jd->mpiio, jd->nmpiio * sizeof(*c->mpiio));
	memcpy(c->h5, jd->h5, jd->nh5 * sizeof(*c->h5));
	memcpy(c->rpc, jd->rpc, jd->nrpc * sizeof(*c->rpc));
	ioacct_jobdata_free(*out);
	*out = c;
	return 0;
}

/* One run of job_id of cluster (NULL or "": any) whole, as pick says. */
static int load_run(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
		    const struct run_pick *pick, struct ioacct_jobdata **out)
{
	const char *clusters[1] = { cluster };
	struct ioacct_store_filter f = {
		.job_ids = &job_id,
		.njob_ids = 1,
		.clusters = clusters,
		.nclusters = cluster && *cluster ? 1 : 0,
	};
	int ret;

	*out = NULL;
	ret = select_jobs(pg, &f, pick, false, true, keep_newest, out);
	if (ret == -ENOMEM)
		pg_error(pg, ret, "cluster store: out of memory");
	if (ret) {
		ioacct_jobdata_free(*out);
		*out = NULL;
		return ret;
	}
	if (!*out)
		return -ENOENT;
	/*
	 * Summed now: made once for the next reads, outside any transaction of
	 * the caller's (a report claim makes them in its own). Whoever cannot
	 * write (a read-only role) reads as before.
	 */
	if (pg->merged_missing && PQtransactionStatus(pg->conn) == PQTRANS_IDLE &&
	    !pg_exec(pg, "BEGIN", "begin a transaction")) {
		if (pg_merged_put(pg, *out) || pg_exec(pg, "COMMIT", "store the merged series"))
			pg_rollback_quiet(pg);
	}
	return 0;
}

int ioacct_pgstore_job_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    uint32_t run, struct ioacct_jobdata **out)
{
	const struct run_pick pick = { .nth = (int64_t)run - 1 };

	return load_run(pg, cluster, job_id, &pick, out);
}

int ioacct_pgstore_run_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    uint32_t restart, int64_t run_start, struct ioacct_jobdata **out)
{
	const struct run_pick pick = { .nth = -1, .restart = restart, .run_start = run_start };

	*out = NULL;
	if (!run_start)
		return pg_error(pg, -EINVAL, "cluster store: no run named");
	return load_run(pg, cluster, job_id, &pick, out);
}

#endif /* HAVE_LIBPQ */
