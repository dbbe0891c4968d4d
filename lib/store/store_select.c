/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacct's job queries on the SQLite store (see store.h, store_db.h): the
 * SQL built for a filter (job ids, users, clusters, a time window), run in
 * one read transaction, each job handed to the caller's function.
 */
#include "store.h"
#include "store_db.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct sql_buf {
	char *p;
	size_t len;
	size_t cap;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void sql_add(struct sql_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len)
			break;
		char *tmp = realloc(b->p, 2 * b->cap + (size_t)n);

		if (!tmp) {
			b->failed = true;
			return;
		}
		b->p = tmp;
		b->cap = 2 * b->cap + (size_t)n;
	}
	b->len += (size_t)n;
}

/* Parameter numbers: the lists first, then these, after them. */
enum { P_AFTER = 1, P_START, P_END, P_LOW, P_LIMIT, P_LISTS };

/* " AND col IN (?a,?b,...)" numbered from *next. */
static void sql_in(struct sql_buf *b, const char *col, size_t n, int *next)
{
	if (n == 0)
		return;
	sql_add(b, " AND %s IN (", col);
	for (size_t i = 0; i < n; i++)
		sql_add(b, "%s?%d", i ? "," : "", (*next)++);
	sql_add(b, ")");
}

static void sql_common(struct sql_buf *b, const struct ioacct_store_filter *f)
{
	int next = P_LISTS;

	sql_add(b, " key > ?%d", P_AFTER);
	sql_in(b, "job_id", f->njob_ids, &next);
	sql_in(b, "uid", f->nuids, &next);
	sql_in(b, "cluster", f->nclusters, &next);
	/*
	 * An earlier run of a job id (requeued, or the id used again) gives way
	 * to its later ones, as in sacct without -D: a row here is a run.
	 */
	if (!f->duplicates)
		sql_add(b, " AND NOT EXISTS (SELECT 1 FROM jobs l WHERE l.cluster = jobs.cluster"
			   " AND l.job_id = jobs.job_id AND (l.start_ns > jobs.start_ns"
			   " OR (l.start_ns = jobs.start_ns AND l.key > jobs.key)))");
}

/*
 * A window [S, E] matches the jobs started by E and not ended before S.
 * Finished ones started at most the longest duration (the jobs_duration
 * index gives it at once) before S, so their scan is bounded by time;
 * running ones come from the small partial index jobs_running.
 */
static char *select_sql(const struct ioacct_store_filter *f)
{
	struct sql_buf b = { .p = malloc(1024), .cap = 1024 };

	if (!b.p)
		return NULL;
	b.p[0] = '\0';
	sql_add(&b, "SELECT " JOB_COLS " FROM jobs WHERE");
	sql_common(&b, f);
	if (f->start_ns) {
		sql_add(&b, " AND start_ns >= ?%d AND start_ns <= ?%d AND (end_ns IS NULL OR end_ns >= ?%d)",
			P_LOW, P_END, P_START);
		sql_add(&b, " UNION ALL SELECT " JOB_COLS " FROM jobs INDEXED BY jobs_running WHERE");
		sql_common(&b, f);
		sql_add(&b, " AND end_ns IS NULL AND start_ns < ?%d AND start_ns <= ?%d ORDER BY 1", P_LOW,
			P_END);
	} else {
		if (f->end_ns)
			sql_add(&b, " AND start_ns <= ?%d", P_END);
		sql_add(&b, " ORDER BY key");
	}
	sql_add(&b, " LIMIT ?%d", P_LIMIT);
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static int select_bind(sqlite3_stmt *s, const struct ioacct_store_filter *f, int64_t low)
{
	int next = P_LISTS, rc;

	rc = bind_i64(s, P_AFTER, f->after_key) || bind_i64(s, P_START, f->start_ns) ||
	     bind_i64(s, P_END, f->end_ns ? f->end_ns : INT64_MAX) || bind_i64(s, P_LOW, low) ||
	     bind_i64(s, P_LIMIT, f->limit ? (int64_t)f->limit : -1);
	for (size_t i = 0; !rc && i < f->njob_ids; i++)
		rc = bind_u64(s, next++, f->job_ids[i]);
	for (size_t i = 0; !rc && i < f->nuids; i++)
		rc = bind_u64(s, next++, f->uids[i]);
	for (size_t i = 0; !rc && i < f->nclusters; i++)
		rc = sqlite3_bind_text(s, next++, f->clusters[i], -1, SQLITE_STATIC);
	return rc;
}

/* The earliest start of a finished job that can still overlap a window starting at start_ns. */
static int window_low(struct ioacct_store *st, int64_t start_ns, int64_t *low)
{
	sqlite3_stmt *s = NULL;
	int rc, err = 0;

	*low = start_ns;
	rc = sqlite3_prepare_v2(st->db, "SELECT max(end_ns - start_ns) FROM jobs", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return store_sql_error(st, rc, "longest job");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		int64_t d = sqlite3_column_int64(s, 0);

		if (d > 0)
			*low = start_ns > INT64_MIN + d ? start_ns - d : INT64_MIN;
	} else {
		err = store_sql_error(st, rc, "longest job");
	}
	sqlite3_finalize(s);
	return err;
}

static int select_run(struct ioacct_store *st, const struct ioacct_store_filter *f,
		      ioacct_store_job_fn fn, void *arg)
{
	struct ioacct_job job;
	sqlite3_stmt *s = NULL;
	int64_t low = 0;
	char *sql;
	int rc, err;

	if (f->start_ns) {
		err = window_low(st, f->start_ns, &low);
		if (err)
			return err;
	}
	sql = select_sql(f);
	if (!sql)
		return store_error(st, -ENOMEM, "select jobs: out of memory");
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return store_sql_error(st, rc,
				       "select jobs: unexpected database contents (damaged?)");
	if (select_bind(s, f, low)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "select jobs");
		goto out;
	}
	err = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_read_job(s, &job);
		err = fn(st, &job, arg);
		if (err)
			goto out;
	}
	if (rc != SQLITE_DONE)
		err = store_sql_error(st, rc, "select jobs");
out:
	sqlite3_finalize(s);
	return err;
}

int ioacct_store_jobs_select(struct ioacct_store *st, const struct ioacct_store_filter *f,
			     ioacct_store_job_fn fn, void *arg)
{
	bool outer;
	int err;

	if (f->njob_ids > IOACCT_STORE_FILTER_MAX || f->nuids > IOACCT_STORE_FILTER_MAX ||
	    f->nclusters > IOACCT_STORE_FILTER_MAX)
		return store_error(st, -EINVAL, "select jobs: more than %d job ids, users or clusters",
				   IOACCT_STORE_FILTER_MAX);
	err = store_unit_begin(st, false, &outer);
	if (err)
		return err;
	return store_unit_end(st, outer, select_run(st, f, fn, arg));
}
