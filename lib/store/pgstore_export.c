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

static int put_steps(struct ioacct_pgstore *pg, const char *id, const struct ioacct_jobdata *jd,
		     struct buf *b)
{
	int err = pg_copy_begin(pg, "COPY steps (job, step_id, start_ns, end_ns, state, exit_code, cgroup)"
				 " FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < jd->nsteps && !err; i++) {
		const struct ioacct_step *s = &jd->steps[i];

		pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRId64 "\t", id, s->step_id, s->start_ns);
		buf_end(b, s->end_ns);
		pg_buf_copy_text(b, s->state, sizeof(s->state), '\t');
		pg_buf_add(b, "%" PRId32 "\t", s->exit_code);
		pg_buf_copy_text(b, s->cgroup, sizeof(s->cgroup), '\n');
		err = pg_copy_flush(pg, b, false);
	}
	return pg_copy_end(pg, b, err, "store the steps");
}

static int put_mounts(struct ioacct_pgstore *pg, const char *id,
		      const struct ioacct_jobdata *jd, struct buf *b)
{
	int err = pg_copy_begin(pg, "COPY mounts (job, mnt_id, path, fstype, source, path_raw)"
				 " FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < jd->nmounts && !err; i++) {
		const struct ioacct_mount *m = &jd->mounts[i];

		pg_buf_add(b, "%s\t%" PRIu32 "\t", id, m->mnt_id);
		pg_buf_copy_text(b, m->path, sizeof(m->path), '\t');
		pg_buf_copy_text(b, m->fstype, sizeof(m->fstype), '\t');
		pg_buf_copy_text(b, m->source, sizeof(m->source), '\t');
		buf_raw(b, m->path, '\n');
		err = pg_copy_flush(pg, b, false);
	}
	return pg_copy_end(pg, b, err, "store the mounts");
}

static int put_totals(struct ioacct_pgstore *pg, const char *id, const struct ioacct_sample *s,
		      size_t n, struct buf *b)
{
	int err = pg_copy_begin(pg, "COPY totals (job, step_id, mnt_id, op, "
				 IOACCT_STORE_COUNTER_COLS ") FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", id, s[i].step_id,
			   s[i].mnt_id, s[i].op);
		buf_counters(b, &s[i].c);
		err = pg_copy_flush(pg, b, false);
	}
	return pg_copy_end(pg, b, err, "store the totals");
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
	snprintf(restart, sizeof(restart), "%" PRIu32, j->restart);
	/* The run's merged series were made without this part as it is now. */
	if (!err) {
		const char *run[3] = { t[T_CLUSTER], job_id, restart };

		err = pg_merged_forget(pg, run);
	}
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
		err = pg_put_series(pg, "COPY series (job, step_id, mnt_id, op, bins, "
				    IOACCT_STORE_COUNTER_COLS ") FROM STDIN", id, jd->series,
				    jd->nseries, &b);
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
