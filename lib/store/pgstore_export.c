/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, writing (see pgstore.h, pgstore_db.h): a
 * finished job, exported from a node's outbox (daemon/export.c), goes in as
 * text: parameters of the job's row, COPY for its children (a job has
 * thousands of series rows; one COPY costs one round trip).
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

/* Flush COPY data to the server in pieces of about this size. */
#define COPY_CHUNK (256 * 1024)

/*
 * A string field of COPY's text format: backslash, tab and line ends
 * escaped, and valid UTF-8 as pg_text_param() makes it (U+FFFD for bytes that
 * are not).
 */
static void buf_text(struct buf *b, const char *s, size_t max, char sep)
{
	size_t n = strnlen(s, max);

	for (size_t i = 0; i < n && !b->failed;) {
		bool valid;
		size_t len = ioacct_utf8_seq((const unsigned char *)s + i, &valid);

		if (len > n - i)
			len = n - i;
		if (!valid)
			pg_buf_add(b, IOACCT_UTF8_REPLACEMENT);
		else if (s[i] == '\\')
			pg_buf_add(b, "\\\\");
		else if (s[i] == '\t')
			pg_buf_add(b, "\\t");
		else if (s[i] == '\n')
			pg_buf_add(b, "\\n");
		else if (s[i] == '\r')
			pg_buf_add(b, "\\r");
		else
			pg_buf_add(b, "%.*s", (int)len, s + i);
		i += len;
	}
	pg_buf_add(b, "%c", sep);
}

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

/* Sends what the buffer holds when it is big enough (or always, with force). */
static int copy_flush(struct ioacct_pgstore *pg, struct buf *b, bool force)
{
	if (b->failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	if (!force && b->len < COPY_CHUNK)
		return 0;
	if (b->len && PQputCopyData(pg->conn, b->p, (int)b->len) != 1)
		return pg_conn_error(pg, NULL, "send rows");
	b->len = 0;
	return 0;
}

static int copy_begin(struct ioacct_pgstore *pg, const char *sql)
{
	PGresult *res = PQexec(pg->conn, sql);
	int err = 0;

	if (PQresultStatus(res) != PGRES_COPY_IN)
		err = pg_conn_error(pg, res, "start COPY");
	PQclear(res);
	return err;
}

static int copy_end(struct ioacct_pgstore *pg, struct buf *b, int err, const char *what)
{
	PGresult *res;

	if (!err)
		err = copy_flush(pg, b, true);
	if (PQputCopyEnd(pg->conn, err ? "ioacctd gave up" : NULL) != 1 && !err)
		err = pg_conn_error(pg, NULL, what);
	while ((res = PQgetResult(pg->conn))) {
		if (!err && PQresultStatus(res) != PGRES_COMMAND_OK)
			err = pg_conn_error(pg, res, what);
		PQclear(res);
	}
	return err;
}

static int put_steps(struct ioacct_pgstore *pg, const char *id, const struct ioacct_jobdata *jd,
		     struct buf *b)
{
	int err = copy_begin(pg, "COPY steps (job, step_id, start_ns, end_ns, state, exit_code, cgroup)"
				 " FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < jd->nsteps && !err; i++) {
		const struct ioacct_step *s = &jd->steps[i];

		pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRId64 "\t", id, s->step_id, s->start_ns);
		buf_end(b, s->end_ns);
		buf_text(b, s->state, sizeof(s->state), '\t');
		pg_buf_add(b, "%" PRId32 "\t", s->exit_code);
		buf_text(b, s->cgroup, sizeof(s->cgroup), '\n');
		err = copy_flush(pg, b, false);
	}
	return copy_end(pg, b, err, "store the steps");
}

static int put_mounts(struct ioacct_pgstore *pg, const char *id,
		      const struct ioacct_jobdata *jd, struct buf *b)
{
	int err = copy_begin(pg, "COPY mounts (job, mnt_id, path, fstype, source, path_raw)"
				 " FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < jd->nmounts && !err; i++) {
		const struct ioacct_mount *m = &jd->mounts[i];

		pg_buf_add(b, "%s\t%" PRIu32 "\t", id, m->mnt_id);
		buf_text(b, m->path, sizeof(m->path), '\t');
		buf_text(b, m->fstype, sizeof(m->fstype), '\t');
		buf_text(b, m->source, sizeof(m->source), '\t');
		buf_raw(b, m->path, '\n');
		err = copy_flush(pg, b, false);
	}
	return copy_end(pg, b, err, "store the mounts");
}

static int put_totals(struct ioacct_pgstore *pg, const char *id, const struct ioacct_sample *s,
		      size_t n, struct buf *b)
{
	int err = copy_begin(pg, "COPY totals (job, step_id, mnt_id, op, "
				 IOACCT_STORE_COUNTER_COLS ") FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", id, s[i].step_id,
			   s[i].mnt_id, s[i].op);
		buf_counters(b, &s[i].c);
		err = copy_flush(pg, b, false);
	}
	return copy_end(pg, b, err, "store the totals");
}

static int series_cmp(const void *pa, const void *pb)
{
	const struct ioacct_sample *a = pa, *b = pb;

	if (a->step_id != b->step_id)
		return a->step_id < b->step_id ? -1 : 1;
	if (a->mnt_id != b->mnt_id)
		return a->mnt_id < b->mnt_id ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	return a->bin < b->bin ? -1 : a->bin > b->bin;
}

static bool same_series(const struct ioacct_sample *a, const struct ioacct_sample *b)
{
	return a->step_id == b->step_id && a->mnt_id == b->mnt_id && a->op == b->op;
}

/*
 * One series row (schema 6): the samples s[0..n) of one (step, mount, op),
 * by bin; v has room for their counters, n rows of IOACCT_STORE_NR_COUNTERS.
 */
static void buf_series_row(struct buf *b, const char *id, const struct ioacct_sample *s,
			   size_t n, uint64_t (*v)[IOACCT_STORE_NR_COUNTERS])
{
	size_t ncols = 0;

	pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t{", id, s[0].step_id,
		   s[0].mnt_id, s[0].op);
	for (size_t i = 0; i < n; i++) {
		ncols = ioacct_store_counter_values(&s[i].c, v[i]);
		pg_buf_add(b, "%s%" PRIu32, i ? "," : "", s[i].bin);
	}
	for (size_t k = 0; k < ncols; k++) {
		pg_buf_add(b, "}\t{");
		for (size_t i = 0; i < n; i++)
			pg_buf_add(b, "%s%" PRIu64, i ? "," : "", v[i][k]);
	}
	pg_buf_add(b, "}\n");
}

/*
 * The series, one row per (step, mount, op) with its bins and counters as
 * arrays (schema 6): sorted here, whatever order the store gave them in.
 */
static int put_series(struct ioacct_pgstore *pg, const char *id, const struct ioacct_sample *s,
		      size_t n, struct buf *b)
{
	uint64_t (*v)[IOACCT_STORE_NR_COUNTERS];
	struct ioacct_sample *sorted;
	int err;

	if (!n)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	v = malloc(n * sizeof(*v));
	if (!sorted || !v) {
		err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	memcpy(sorted, s, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), series_cmp);
	err = copy_begin(pg, "COPY series (job, step_id, mnt_id, op, bins, "
			     IOACCT_STORE_COUNTER_COLS ") FROM STDIN");
	if (err)
		goto out;
	for (size_t i = 0; i < n && !err;) {
		size_t j = i + 1;

		while (j < n && same_series(&sorted[i], &sorted[j]))
			j++;
		buf_series_row(b, id, sorted + i, j - i, v);
		err = copy_flush(pg, b, false);
		i = j;
	}
	err = copy_end(pg, b, err, "store the series");
out:
	free(sorted);
	free(v);
	return err;
}

/* The job's names as text parameters (pg_text_param()), in the order of the job's row. */
enum { T_CLUSTER, T_NODE, T_SOURCE, T_USER, T_NAME, T_WORKDIR, T_STATE, T_PROBE, NR_T };

static int job_texts(struct ioacct_pgstore *pg, const struct ioacct_job *j, const char **t,
		     char **owned)
{
	const char *const src[NR_T] = { j->cluster, j->node, j->source, j->user, j->name,
					j->workdir, j->state, j->probe_mode };

	for (int i = 0; i < NR_T; i++) {
		t[i] = pg_text_param(src[i], &owned[i]);
		if (!t[i])
			return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	return 0;
}

static int put_job_row(struct ioacct_pgstore *pg, const struct ioacct_job *j, char *id,
		       size_t idlen)
{
	char job_id[24], uid[16], gid[16], ajob[16], atask[16], start[24], end[24], ec[16], bw[24],
		de[24], db[24], restart[16];
	const char *params[21], *t[NR_T];
	char *owned[NR_T] = { 0 }, *workdir_raw = NULL;
	bool nomem = false;
	PGresult *res;
	int err;

	err = job_texts(pg, j, t, owned);
	if (!err) {
		workdir_raw = pg_raw_param(j->workdir, &nomem);
		if (nomem)
			err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	if (err)
		goto out;
	snprintf(job_id, sizeof(job_id), "%" PRIu64, j->job_id);
	snprintf(start, sizeof(start), "%" PRId64, j->start_ns);
	params[0] = t[T_CLUSTER];
	params[1] = job_id;
	params[2] = t[T_NODE];
	params[3] = start;
	/* That node's earlier copy of this job, with its rows (ON DELETE CASCADE). */
	res = PQexecParams(pg->conn,
			   "DELETE FROM jobs WHERE cluster = $1 AND job_id = $2 AND node = $3"
			   " AND start_ns = $4",
			   4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = pg_conn_error(pg, res, "replace the job");
	PQclear(res);
	if (err)
		goto out;

	snprintf(uid, sizeof(uid), "%" PRIu32, j->uid);
	snprintf(gid, sizeof(gid), "%" PRIu32, j->gid);
	snprintf(ajob, sizeof(ajob), "%" PRIu32, j->array_job_id);
	snprintf(atask, sizeof(atask), "%" PRIu32, j->array_task_id);
	snprintf(end, sizeof(end), "%" PRId64, j->end_ns);
	snprintf(ec, sizeof(ec), "%" PRId32, j->exit_code);
	snprintf(bw, sizeof(bw), "%" PRIu64, j->bin_width_ns);
	snprintf(de, sizeof(de), "%" PRIu64, j->dropped_events);
	snprintf(db, sizeof(db), "%" PRIu64, j->dropped_bytes);
	params[4] = t[T_SOURCE];
	params[5] = uid;
	params[6] = gid;
	params[7] = t[T_USER];
	params[8] = t[T_NAME];
	params[9] = t[T_WORKDIR];
	params[10] = j->has_array ? ajob : NULL;
	params[11] = j->has_array ? atask : NULL;
	params[12] = j->end_ns ? end : NULL;
	params[13] = t[T_STATE];
	params[14] = ec;
	params[15] = t[T_PROBE];
	params[16] = bw;
	params[17] = de;
	params[18] = db;
	params[19] = workdir_raw;
	snprintf(restart, sizeof(restart), "%" PRIu32, j->restart);
	params[20] = restart;
	res = PQexecParams(pg->conn,
			   "INSERT INTO jobs (cluster, job_id, node, start_ns, source, uid, gid, \"user\","
			   " name, workdir, array_job_id, array_task_id, end_ns, state, exit_code,"
			   " probe_mode, bin_width_ns, dropped_events, dropped_bytes, workdir_raw,"
			   " restart)"
			   " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,"
			   " $16, $17, $18, $19, $20, $21) RETURNING id",
			   21, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		err = pg_conn_error(pg, res, "store the job");
	else
		snprintf(id, idlen, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
out:
	for (int i = 0; i < NR_T; i++)
		free(owned[i]);
	free(workdir_raw);
	return err;
}

int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	struct buf b = { 0 };
	char id[32];
	int err;

	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	err = pg_exec(pg, "BEGIN", "begin a transaction");
	if (err)
		return err;
	err = put_job_row(pg, &jd->job, id, sizeof(id));
	if (!err)
		err = put_steps(pg, id, jd, &b);
	if (!err)
		err = put_mounts(pg, id, jd, &b);
	if (!err)
		err = put_totals(pg, id, jd->totals, jd->ntotals, &b);
	if (!err)
		err = put_series(pg, id, jd->series, jd->nseries, &b);
	if (!err)
		err = pg_exec(pg, "COMMIT", "commit");
	if (err)
		pg_rollback_quiet(pg);
	free(b.p);
	if (!err)
		return 0;
	/* Name the job: the message goes to the log of a node with many. */
	{
		char msg[sizeof(pg->errmsg)], cluster[sizeof(jd->job.cluster) * 4];

		snprintf(msg, sizeof(msg), "%s", pg->errmsg);
		pg_error(pg, err, "%s (job %" PRIu64 " of cluster %s)", msg, jd->job.job_id,
			 ioacct_text_clean(cluster, sizeof(cluster), jd->job.cluster));
	}
	return err;
}

#endif /* HAVE_LIBPQ */
