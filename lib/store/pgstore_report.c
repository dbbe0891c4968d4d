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
	char job_id[24], formats[16], uid[16], gid[16], timeout[16], start[24], restart[16];
	const char *params[13];
	char *owned[4] = { 0 }, *path_raw = NULL, *copy_dir_raw = NULL;
	bool nomem = false;
	PGresult *res;
	int err = 0;

	params[0] = pg_text_param(job->cluster, &owned[0]);
	params[2] = pg_text_param(spec->nodes, &owned[1]);
	params[3] = pg_text_param(spec->path, &owned[2]);
	params[7] = pg_text_param(spec->copy_dir, &owned[3]);
	path_raw = pg_raw_param(spec->path, &nomem);
	copy_dir_raw = pg_raw_param(spec->copy_dir, &nomem);
	if (!params[0] || !params[2] || !params[3] || !params[7] || nomem) {
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
	snprintf(restart, sizeof(restart), "%" PRIu32, job->restart);
	params[12] = restart;
	/*
	 * The first node's offer stands: its deadline counts from the first part.
	 * A row of this run made before this node's part started is a job of
	 * the same id before Slurm's ids started again: this one starts afresh.
	 */
	res = pg_exec_prepared(pg, PG_STMT_report_offer,
			   "INSERT INTO job_reports (cluster, job_id, expected, path, formats, uid, gid,"
			   " copy_dir, merge_timeout_s, deadline, path_raw, copy_dir_raw, restart)"
			   " VALUES ($1, $2, string_to_array($3, ','), $4, $5, $6, $7, $8, $9,"
			   " now() + make_interval(secs => $9::integer), $11, $12, $13)"
			   " ON CONFLICT (cluster, job_id, restart) DO UPDATE SET expected = EXCLUDED.expected,"
			   " path = EXCLUDED.path, formats = EXCLUDED.formats, uid = EXCLUDED.uid,"
			   " gid = EXCLUDED.gid, copy_dir = EXCLUDED.copy_dir,"
			   " path_raw = EXCLUDED.path_raw, copy_dir_raw = EXCLUDED.copy_dir_raw,"
			   " merge_timeout_s = EXCLUDED.merge_timeout_s, first_at = now(),"
			   " deadline = EXCLUDED.deadline, written_at = NULL, written_by = NULL,"
			   " missing = NULL"
			   " WHERE job_reports.first_at < to_timestamp($10::bigint / 1e9)",
			   13, params);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = pg_conn_error(pg, res, "offer the merged report");
	PQclear(res);
	/* Its last part may have gone in before the report's row: merged now, once. */
	if (!err)
		err = pg_merged_offered(pg, job);
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

int ioacct_pgstore_report_claim(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
				uint32_t restart, bool skip_locked, struct ioacct_pgstore_report *rep,
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
		"  AND j.job_id = r.job_id AND j.restart = r.restart AND j.node = n"
		"  AND j.end_ns IS NOT NULL)), ''),"
		" r.merge_timeout_s, r.path_raw, r.copy_dir_raw"
		" FROM job_reports r WHERE r.cluster = $1 AND r.job_id = $2 AND r.restart = $3"
		" FOR UPDATE";
	char job_id_s[24], restart_s[16], q[sizeof(sql) + 16];
	const char *params[3] = { NULL, job_id_s, restart_s };
	char *owned = NULL, missing[sizeof((*jd)->missing_nodes)];
	uint32_t timeout = 0;
	bool written = false, overdue = false;
	PGresult *res;
	int err;

	*jd = NULL;
	memset(rep, 0, sizeof(*rep));
	snprintf(job_id_s, sizeof(job_id_s), "%" PRIu64, job_id);
	snprintf(restart_s, sizeof(restart_s), "%" PRIu32, restart);
	snprintf(q, sizeof(q), "%s%s", sql, skip_locked ? " SKIP LOCKED" : "");
	params[0] = pg_text_param(cluster, &owned);
	if (!params[0])
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	err = pg_exec(pg, "BEGIN", "begin a transaction");
	if (err) {
		free(owned);
		return err;
	}
	res = pg_exec_prepared(pg, skip_locked ? PG_STMT_report_claim_skip : PG_STMT_report_claim,
			       q, 3, params);
	free(owned);
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
	}
	PQclear(res);
	if (!err && written)
		err = -EALREADY;
	else if (!err && missing[0] && !overdue)
		err = -EAGAIN;
	if (!err) {
		err = ioacct_pgstore_job_load(pg, cluster, job_id, restart + 1, jd);
		if (err == -ENOENT)
			pg_error(pg, err, "cluster store: job %" PRIu64 " has a report but no part", job_id);
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

int ioacct_pgstore_report_written(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
				  uint32_t restart, const char *node, const char *missing)
{
	char job_id_s[24], restart_s[16], *owned[3] = { 0 };
	const char *params[5] = { pg_text_param(cluster, &owned[0]), job_id_s,
				  pg_text_param(node, &owned[1]),
				  pg_text_param(missing, &owned[2]), restart_s };
	PGresult *res;
	int err = 0;

	if (!params[0] || !params[2] || !params[3]) {
		for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
			free(owned[i]);
		pg_rollback_quiet(pg);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	snprintf(job_id_s, sizeof(job_id_s), "%" PRIu64, job_id);
	snprintf(restart_s, sizeof(restart_s), "%" PRIu32, restart);
	res = pg_exec_prepared(pg, PG_STMT_report_written,
			   "UPDATE job_reports SET written_at = now(), written_by = $3,"
			   " missing = CASE WHEN $4 = '' THEN NULL ELSE string_to_array($4, ',') END"
			   " WHERE cluster = $1 AND job_id = $2 AND restart = $5",
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
