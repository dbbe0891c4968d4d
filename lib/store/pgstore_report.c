/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, the merged report of a job of several
 * nodes (see pgstore.h, pgstore_db.h): offered by every node at its part's
 * end, claimed under a row lock by the one that writes it, marked written.
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"

/* A bytea column's value (text output, \x...), unescaped into dst; false when NULL. */
static bool raw_value(const PGresult *res, int row, int col, char *dst, size_t len)
{
	unsigned char *bytes;
	size_t n;

	if (PQgetisnull(res, row, col))
		return false;
	bytes = PQunescapeBytea((const unsigned char *)PQgetvalue(res, row, col), &n);
	if (!bytes)
		return false;
	if (n >= len)
		n = len - 1;
	memcpy(dst, bytes, n);
	dst[n] = '\0';
	PQfreemem(bytes);
	return true;
}

int ioacct_pgstore_report_offer(struct ioacct_pgstore *pg, const struct ioacct_job *job,
				const struct ioacct_report_spec *spec, uint32_t merge_timeout_s)
{
	char job_id[24], formats[16], uid[16], gid[16], timeout[16], start[24];
	const char *params[13];
	char *owned[5] = { 0 }, *path_raw = NULL, *copy_dir_raw = NULL;
	struct ioacct_job run = { 0 };
	bool nomem = false;
	PGresult *res;
	int err = 0;

	params[0] = pg_text_param(job->cluster, &owned[0]);
	params[2] = pg_text_param(spec->nodes, &owned[1]);
	params[3] = pg_text_param(spec->path, &owned[2]);
	params[7] = pg_text_param(spec->copy_dir, &owned[3]);
	params[12] = pg_text_param(job->node, &owned[4]);
	path_raw = pg_raw_param(spec->path, &nomem);
	copy_dir_raw = pg_raw_param(spec->copy_dir, &nomem);
	if (!params[0] || !params[2] || !params[3] || !params[7] || !params[12] || nomem) {
		err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	snprintf(job_id, sizeof(job_id), "%" PRIu64, job->job_id);
	snprintf(formats, sizeof(formats), "%" PRIu32, spec->formats);
	snprintf(uid, sizeof(uid), "%" PRIu32, job->uid);
	snprintf(gid, sizeof(gid), "%" PRIu32, job->gid);
	snprintf(timeout, sizeof(timeout), "%" PRIu32, merge_timeout_s);
	params[1] = job_id;
	params[4] = formats;
	params[5] = uid;
	params[6] = gid;
	params[8] = timeout;
	snprintf(start, sizeof(start), "%" PRId64, job->start_ns);
	params[9] = start;
	params[10] = path_raw;
	params[11] = copy_dir_raw;
	/*
	 * The report is the run's that this node's part is in (this node's row:
	 * $1, $2, $13, $10), given as the part went in. The first node's offer
	 * stands: its deadline counts from the first part.
	 */
	res = pg_exec_prepared(pg, PG_STMT_report_offer,
			   "WITH p AS (SELECT restart, run_start FROM jobs WHERE cluster = $1"
			   " AND job_id = $2 AND node = $13 AND start_ns = $10::bigint),"
			   " i AS (INSERT INTO job_reports (cluster, job_id, expected, path, formats,"
			   " uid, gid, copy_dir, merge_timeout_s, deadline, path_raw, copy_dir_raw,"
			   " restart, run_start)"
			   " SELECT $1, $2, string_to_array($3, ','), $4, $5, $6, $7, $8, $9,"
			   " now() + make_interval(secs => $9::integer), $11, $12, p.restart,"
			   " p.run_start FROM p ON CONFLICT (cluster, job_id, restart, run_start)"
			   " DO NOTHING RETURNING 1)"
			   " SELECT restart, run_start, (SELECT count(*) FROM i) FROM p",
			   13, params);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, "offer the merged report");
	else if (PQntuples(res) != 1)
		err = pg_error(pg, -ENOENT, "cluster store: job %" PRIu64 " has no part of node %s"
			       " started at %" PRId64 " to offer its report for", job->job_id,
			       job->node, job->start_ns);
	if (!err) {
		run = *job;
		run.restart = (uint32_t)val_u64(res, 0, 0);
		run.run_start = val_i64(res, 0, 1);
	}
	PQclear(res);
	/* Its last part may have gone in before the report's row: merged now, once. */
	if (!err)
		err = pg_merged_offered(pg, &run);
out:
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
		free(owned[i]);
	free(path_raw);
	free(copy_dir_raw);
	return err;
}

void ioacct_pgstore_report_abort(struct ioacct_pgstore *pg)
{
	pg_rollback_quiet(pg);
}

/* The run of this node's part: $1 cluster, $2 job id, $3 node, $4 its start. */
#define PART_RUN_SQL                                                                        \
	" JOIN jobs p ON p.cluster = r.cluster AND p.job_id = r.job_id"                      \
	" AND p.restart = r.restart AND p.run_start = r.run_start"                          \
	" WHERE p.cluster = $1 AND p.job_id = $2 AND p.node = $3 AND p.start_ns = $4::bigint"

/* The part's key as text parameters: cluster and node (*owned to free), job id, start. */
static int part_params(const struct ioacct_job *part, const char **params, char **owned,
		       char *job_id, size_t jlen, char *start, size_t slen)
{
	params[0] = pg_text_param(part->cluster, &owned[0]);
	params[2] = pg_text_param(part->node, &owned[1]);
	snprintf(job_id, jlen, "%" PRIu64, part->job_id);
	snprintf(start, slen, "%" PRId64, part->start_ns);
	params[1] = job_id;
	params[3] = start;
	return params[0] && params[2] ? 0 : -ENOMEM;
}

int ioacct_pgstore_report_claim(struct ioacct_pgstore *pg, const struct ioacct_job *part,
				bool skip_locked, struct ioacct_pgstore_report *rep,
				struct ioacct_jobdata **jd)
{
	/*
	 * Missing: expected nodes with no finished part of this run in jobs yet,
	 * by name (a running part is a step's export, export.c).
	 */
	static const char sql[] =
		"SELECT r.path, r.formats, r.uid, r.gid, r.copy_dir,"
		" array_to_string(r.expected, ','), r.written_at IS NOT NULL, now() >= r.deadline,"
		" coalesce((SELECT string_agg(n, ',' ORDER BY n) FROM unnest(r.expected) n"
		"  WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.cluster = r.cluster"
		"  AND j.job_id = r.job_id AND j.restart = r.restart AND j.run_start = r.run_start"
		"  AND j.node = n AND j.end_ns IS NOT NULL)), ''),"
		" r.merge_timeout_s, r.path_raw, r.copy_dir_raw, r.restart, r.run_start"
		" FROM job_reports r" PART_RUN_SQL " FOR UPDATE OF r";
	char job_id_s[24], start_s[24], q[sizeof(sql) + 16];
	const char *params[4];
	char *owned[2] = { 0 }, missing[sizeof((*jd)->missing_nodes)];
	uint32_t timeout = 0, restart = 0;
	int64_t run_start = 0;
	bool written = false, overdue = false;
	PGresult *res;
	int err;

	*jd = NULL;
	memset(rep, 0, sizeof(*rep));
	snprintf(q, sizeof(q), "%s%s", sql, skip_locked ? " SKIP LOCKED" : "");
	err = part_params(part, params, owned, job_id_s, sizeof(job_id_s), start_s, sizeof(start_s));
	if (!err)
		err = pg_exec(pg, "BEGIN", "begin a transaction");
	else
		err = pg_error(pg, err, "cluster store: out of memory");
	if (err) {
		free(owned[0]);
		free(owned[1]);
		return err;
	}
	res = pg_exec_prepared(pg, skip_locked ? PG_STMT_report_claim_skip : PG_STMT_report_claim,
			       q, 4, params);
	free(owned[0]);
	free(owned[1]);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		err = pg_conn_error(pg, res, "lock the merged report");
	} else if (PQntuples(res) != 1) {
		/* None, or another node holds it (SKIP LOCKED). */
		err = skip_locked ? -EAGAIN : -ENOENT;
	} else {
		ioacct_strlcpy(rep->spec.path, PQgetvalue(res, 0, 0), sizeof(rep->spec.path));
		rep->spec.formats = (uint32_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
		rep->uid = (uint32_t)strtoul(PQgetvalue(res, 0, 2), NULL, 10);
		rep->gid = (uint32_t)strtoul(PQgetvalue(res, 0, 3), NULL, 10);
		ioacct_strlcpy(rep->spec.copy_dir, PQgetvalue(res, 0, 4), sizeof(rep->spec.copy_dir));
		ioacct_strlcpy(rep->spec.nodes, PQgetvalue(res, 0, 5), sizeof(rep->spec.nodes));
		written = PQgetvalue(res, 0, 6)[0] == 't';
		overdue = PQgetvalue(res, 0, 7)[0] == 't';
		ioacct_strlcpy(missing, PQgetvalue(res, 0, 8), sizeof(missing));
		timeout = (uint32_t)strtoul(PQgetvalue(res, 0, 9), NULL, 10);
		/* The exact paths, where the text has U+FFFD for bytes that were not UTF-8. */
		raw_value(res, 0, 10, rep->spec.path, sizeof(rep->spec.path));
		raw_value(res, 0, 11, rep->spec.copy_dir, sizeof(rep->spec.copy_dir));
		restart = (uint32_t)val_u64(res, 0, 12);
		run_start = val_i64(res, 0, 13);
	}
	PQclear(res);
	if (!err && written)
		err = -EALREADY;
	else if (!err && missing[0] && !overdue)
		err = -EAGAIN;
	if (!err) {
		err = ioacct_pgstore_run_load(pg, part->cluster, part->job_id, restart, run_start, jd);
		if (err == -ENOENT)
			pg_error(pg, err, "cluster store: job %" PRIu64 " has a report but no part",
				 part->job_id);
	}
	if (err) {
		pg_rollback_quiet(pg);
		return err;
	}
	/*
	 * Read whole: its merged series are made now, once, for every later
	 * read. A failure costs only them (a reader sums the nodes then).
	 */
	if (pg->merged_missing)
		pg_merged_put(pg, *jd);
	ioacct_strlcpy((*jd)->missing_nodes, missing, sizeof((*jd)->missing_nodes));
	(*jd)->missing_after_s = missing[0] ? timeout : 0;
	return 0;
}

int ioacct_pgstore_report_written(struct ioacct_pgstore *pg, const struct ioacct_job *part,
				  const char *missing)
{
	char job_id_s[24], start_s[24], *owned[3] = { 0 };
	const char *params[5];
	PGresult *res;
	int err = 0;

	params[4] = pg_text_param(missing, &owned[2]);
	if (part_params(part, params, owned, job_id_s, sizeof(job_id_s), start_s,
			sizeof(start_s)) || !params[4]) {
		for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
			free(owned[i]);
		pg_rollback_quiet(pg);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	res = pg_exec_prepared(pg, PG_STMT_report_written,
			   "UPDATE job_reports r SET written_at = now(), written_by = $3,"
			   " missing = CASE WHEN $5 = '' THEN NULL ELSE string_to_array($5, ',') END"
			   " FROM jobs p WHERE p.cluster = r.cluster AND p.job_id = r.job_id"
			   " AND p.restart = r.restart AND p.run_start = r.run_start"
			   " AND p.cluster = $1 AND p.job_id = $2 AND p.node = $3"
			   " AND p.start_ns = $4::bigint",
			   5, params);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = pg_conn_error(pg, res, "mark the merged report written");
	PQclear(res);
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
		free(owned[i]);
	if (!err)
		err = pg_exec(pg, "COMMIT", "commit the merged report");
	if (err)
		pg_rollback_quiet(pg);
	return err;
}

#endif /* HAVE_LIBPQ */
