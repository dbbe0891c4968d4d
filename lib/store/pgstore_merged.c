/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, the merged series of a job of several
 * nodes (see pgstore_db.h; schema 7, issue 28): the nodes' bins aligned on
 * the job's axis and summed, made once when the job is read whole for its
 * merged report, and read instead of summing every node's bins again. A
 * 64-node job of an hour of 1 s bins is 2.8 million bins to sum; its merged
 * series are 43 thousand to read.
 *
 * They stand for the exact set of parts they were made of, named by node
 * and start (jobs is unique on them): a part that arrives later, or a node
 * written again, makes them unusable (and put_job_row forgets them), and
 * the reader sums the nodes as before.
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A text[] literal of "node@start_ns" of each part, sorted: the parts' names. */
static int members_literal(struct buf *out, const char *const *node, const int64_t *start,
			   size_t n)
{
	char **e = calloc(n ? n : 1, sizeof(*e));
	int err = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++)
		if (asprintf(&e[i], "%s@%" PRId64, node[i], start[i]) < 0) {
			e[i] = NULL;
			err = -ENOMEM;
		}
	if (!err) {
		qsort(e, n, sizeof(*e), str_cmp);
		pg_buf_add(out, "{");
		for (size_t i = 0; i < n; i++) {
			pg_buf_add(out, "%s\"", i ? "," : "");
			for (const char *c = e[i]; *c; c++)
				pg_buf_add(out, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
			pg_buf_add(out, "\"");
		}
		pg_buf_add(out, "}");
		if (out->failed)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		free(e[i]);
	free(e);
	return err;
}

/* The run's key as text parameters: cluster (*owned to free), job id, restart. */
static int run_params(const struct ioacct_job *j, const char **params, char **owned,
		      char *job_id, size_t jlen, char *restart, size_t rlen)
{
	params[0] = pg_text_param(j->cluster, owned);
	if (!params[0])
		return -ENOMEM;
	snprintf(job_id, jlen, "%" PRIu64, j->job_id);
	snprintf(restart, rlen, "%" PRIu32, j->restart);
	params[1] = job_id;
	params[2] = restart;
	return 0;
}

static int exec_params(struct ioacct_pgstore *pg, const char *sql, int n, const char *const *params,
		       const char *what)
{
	PGresult *res = PQexecParams(pg->conn, sql, n, NULL, params, NULL, NULL, 0);
	int err = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, what);
	PQclear(res);
	return err;
}

int pg_merged_forget(struct ioacct_pgstore *pg, const char *const params[3])
{
	return exec_params(pg, "DELETE FROM merged_jobs WHERE cluster = $1 AND job_id = $2"
			   " AND restart = $3", 3, params, "forget the merged series");
}

/* Writes them; the caller's savepoint takes them back on failure. */
static int merged_write(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd,
			const char **params, struct buf *key, struct buf *b)
{
	int err = pg_merged_forget(pg, params);

	if (!err)
		err = exec_params(pg, "INSERT INTO merged_jobs (cluster, job_id, restart, members)"
				  " VALUES ($1, $2, $3, $4::text[])", 4, params,
				  "store the merged series");
	if (err)
		return err;
	pg_buf_copy_text(key, jd->job.cluster, sizeof(jd->job.cluster), '\t');
	pg_buf_add(key, "%s\t%s", params[1], params[2]);
	if (key->failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	return pg_put_series(pg, "COPY merged_series (cluster, job_id, restart, step_id, mnt_id, op,"
			     " bins, " IOACCT_STORE_COUNTER_COLS ") FROM STDIN", key->p, jd->series,
			     jd->nseries, b);
}

int pg_merged_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	const char **node = calloc(jd->nnodes ? jd->nnodes : 1, sizeof(*node));
	int64_t *start = calloc(jd->nnodes ? jd->nnodes : 1, sizeof(*start));
	struct buf members = { 0 }, key = { 0 }, b = { 0 };
	char job_id[24], restart[16], *owned = NULL;
	const char *params[4];
	int err = 0;

	if (jd->nnodes < 2)
		goto out;
	if (!node || !start) {
		err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	for (size_t i = 0; i < jd->nnodes; i++) {
		node[i] = jd->nodes[i].node;
		start[i] = jd->nodes[i].start_ns;
	}
	err = members_literal(&members, node, start, jd->nnodes);
	if (!err)
		err = run_params(&jd->job, params, &owned, job_id, sizeof(job_id), restart,
				 sizeof(restart));
	if (err) {
		err = pg_error(pg, err, "cluster store: out of memory");
		goto out;
	}
	params[3] = members.p;
	err = pg_exec(pg, "SAVEPOINT merged", "store the merged series");
	if (err)
		goto out;
	err = merged_write(pg, jd, params, &key, &b);
	if (err) {
		char msg[sizeof(pg->errmsg)];

		/* The message is the failure's, not the rollback's. */
		snprintf(msg, sizeof(msg), "%s", pg->errmsg);
		if (!pg_exec(pg, "ROLLBACK TO SAVEPOINT merged", "give the merged series up"))
			pg_exec(pg, "RELEASE SAVEPOINT merged", "give the merged series up");
		pg_error(pg, err, "%s", msg);
	} else {
		err = pg_exec(pg, "RELEASE SAVEPOINT merged", "store the merged series");
	}
out:
	free(node);
	free(start);
	free(owned);
	free(members.p);
	free(key.p);
	free(b.p);
	return err;
}

/* Whether the run of m has merged series made of exactly the parts m[0..n). */
static int merged_usable(struct ioacct_pgstore *pg, const char **params)
{
	PGresult *res = PQexecParams(pg->conn,
				     "SELECT count(*) FROM merged_jobs WHERE cluster = $1"
				     " AND job_id = $2 AND restart = $3 AND members = $4::text[]",
				     4, NULL, params, NULL, NULL, 0);
	int ret;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		ret = pg_conn_error(pg, res, "look for the merged series");
	else
		ret = atoi(PQgetvalue(res, 0, 0)) > 0;
	PQclear(res);
	return ret;
}

static int merged_rows(struct ioacct_pgstore *pg, const char **params, struct ioacct_jobdata *jd,
		       size_t *cap)
{
	PGresult *res = PQexecParams(pg->conn,
		"SELECT ms.step_id, ms.mnt_id, ms.op, u.* FROM merged_series ms,"
		" unnest(bins, " IOACCT_STORE_COUNTER_COLS ") AS u(bin, "
		IOACCT_STORE_COUNTER_COLS ")"
		" WHERE ms.cluster = $1 AND ms.job_id = $2 AND ms.restart = $3"
		" ORDER BY 1, 2, 3, 4", 3, NULL, params, NULL, NULL, 0);
	int ret = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = pg_conn_error(pg, res, "select the merged series");
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		struct ioacct_sample s = {
			.step_id = (uint32_t)val_u64(res, r, 0),
			.mnt_id = (uint32_t)val_u64(res, r, 1),
			.op = (uint32_t)val_u64(res, r, 2),
			.bin = (uint32_t)val_u64(res, r, 3),
		};

		if (pg_sample_add(&jd->series, &jd->nseries, cap, true, &s, res, r, 4)) {
			ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
			goto out;
		}
	}
out:
	PQclear(res);
	return ret;
}

int pg_merged_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
		  struct ioacct_jobdata *jd, size_t *cap)
{
	const char **node = calloc(n ? n : 1, sizeof(*node));
	int64_t *start = calloc(n ? n : 1, sizeof(*start));
	char job_id[24], restart[16], *owned = NULL;
	struct buf members = { 0 };
	const char *params[4];
	int ret;

	if (!node || !start) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		node[i] = m[i].job.node;
		start[i] = m[i].job.start_ns;
	}
	ret = members_literal(&members, node, start, n);
	if (!ret)
		ret = run_params(&m[0].job, params, &owned, job_id, sizeof(job_id), restart,
				 sizeof(restart));
	if (ret) {
		ret = pg_error(pg, ret, "cluster store: out of memory");
		goto out;
	}
	params[3] = members.p;
	ret = merged_usable(pg, params);
	if (ret > 0) {
		ret = merged_rows(pg, params, jd, cap);
		if (!ret)
			ret = 1;
	}
out:
	free(node);
	free(start);
	free(owned);
	free(members.p);
	return ret;
}

#endif /* HAVE_LIBPQ */
