/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The outbox of the cluster store (see store.h, store_db.h), read by
 * daemon/export.c: finished jobs queued for PostgreSQL in the transaction
 * that finishes them, and the specs of their merged reports, kept with the
 * finished job until this node has seen its report written.
 */
#include "store.h"
#include "store_db.h"

#include <errno.h>
#include <inttypes.h>

int ioacct_store_export_next(struct ioacct_store *st, int64_t after_key, int64_t *job_key,
			     int64_t *gen)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v;
	int rc, err;

	err = store_stmt_get(st, ST_EXPORT_NEXT, &s);
	if (err)
		return err;
	rc = bind_i64(s, 1, after_key) ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		v = sqlite3_column_int64(s, 0);
		*job_key = v;
		*gen = sqlite3_column_int64(s, 1);
	} else if (rc == SQLITE_DONE) {
		err = store_error(st, -ENOENT, "no job waits for the cluster store");
	} else {
		err = store_sql_error(st, rc, "read the export queue");
	}
	stmt_done(s);
	return err;
}

int ioacct_store_export_done(struct ioacct_store *st, int64_t job_key, int64_t gen)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_EXPORT_DONE, &s);
	if (err)
		return err;
	return store_stmt_run(st, s, bind_i64(s, 1, job_key) || bind_i64(s, 2, gen),
			      "unqueue job %" PRId64 " from the cluster store", job_key);
}

int ioacct_store_export_queue(struct ioacct_store *st, int64_t job_key)
{
	return store_run_key(st, ST_EXPORT_QUEUE, job_key, "queue for the cluster store");
}

int ioacct_store_export_count(struct ioacct_store *st, uint64_t *n)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v = 0;
	int err;

	err = store_stmt_get(st, ST_EXPORT_COUNT, &s);
	if (!err)
		err = store_stmt_int(st, s, 0, &v, "count the export queue");
	if (!err)
		*n = (uint64_t)v;
	return err;
}

int ioacct_store_report_spec_get(struct ioacct_store *st, int64_t job_key,
				 struct ioacct_report_spec *spec)
{
	sqlite3_stmt *s = NULL;
	int rc, err;

	memset(spec, 0, sizeof(*spec));
	err = store_stmt_get(st, ST_SPEC_GET, &s);
	if (err)
		return err;
	rc = bind_i64(s, 1, job_key) ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		col_str(s, 0, spec->path, sizeof(spec->path));
		spec->formats = (uint32_t)sqlite3_column_int64(s, 1);
		col_str(s, 2, spec->nodes, sizeof(spec->nodes));
		col_str(s, 3, spec->copy_dir, sizeof(spec->copy_dir));
	} else if (rc == SQLITE_DONE) {
		err = store_error(st, -ENOENT, "job %" PRId64 " has no merged report", job_key);
	} else {
		err = store_sql_error(st, rc, "read the merged report of job %" PRId64, job_key);
	}
	stmt_done(s);
	return err;
}

int ioacct_store_report_spec_next(struct ioacct_store *st, int64_t after_key, int64_t *job_key)
{
	sqlite3_stmt *s = NULL;
	int rc, err;

	err = store_stmt_get(st, ST_SPEC_NEXT, &s);
	if (err)
		return err;
	rc = bind_i64(s, 1, after_key) ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*job_key = sqlite3_column_int64(s, 0);
	else if (rc == SQLITE_DONE)
		err = store_error(st, -ENOENT, "no merged report waits");
	else
		err = store_sql_error(st, rc, "read the merged reports");
	stmt_done(s);
	return err;
}

int ioacct_store_report_spec_done(struct ioacct_store *st, int64_t job_key)
{
	return store_run_key(st, ST_SPEC_DONE, job_key, "drop the merged report");
}
