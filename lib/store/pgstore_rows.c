/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, rows in and out (see pgstore_db.h): COPY
 * text and its sending, the compact series as COPY rows (schema 6), and
 * counters and samples read from results, for the writers
 * (pgstore_export.c, pgstore_merged.c) and the readers (pgstore_merge.c,
 * pgstore_merged.c) alike.
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
void pg_buf_copy_text(struct buf *b, const char *s, size_t max, char sep)
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

/* Sends what the buffer holds when it is big enough (or always, with force). */
int pg_copy_flush(struct ioacct_pgstore *pg, struct buf *b, bool force)
{
	if (b->failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	if (!force && b->len < COPY_CHUNK)
		return 0;
	if (b->len && pg_put_copy(pg, b->p, b->len))
		return pg_conn_error(pg, NULL, "send rows");
	b->len = 0;
	return 0;
}

int pg_copy_begin(struct ioacct_pgstore *pg, const char *sql)
{
	PGresult *res = pg_run(pg, sql);
	int err = 0;

	if (PQresultStatus(res) != PGRES_COPY_IN)
		err = pg_conn_error(pg, res, "start COPY");
	PQclear(res);
	return err;
}

int pg_copy_end(struct ioacct_pgstore *pg, struct buf *b, int err, const char *what)
{
	PGresult *res;

	if (!err)
		err = pg_copy_flush(pg, b, true);
	if (pg_put_copy_end(pg, err ? "ioacctd gave up" : NULL) && !err)
		err = pg_conn_error(pg, NULL, what);
	while ((res = pg_result(pg))) {
		ExecStatusType st = PQresultStatus(res);

		if (!err && st != PGRES_COMMAND_OK)
			err = pg_conn_error(pg, res, what);
		PQclear(res);
		/* Still in the COPY: its end never went (the connection is gone). */
		if (st == PGRES_COPY_IN)
			break;
	}
	return err;
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

	pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu32 "\t{", id, s[0].step_id,
		   s[0].mnt_id, s[0].op);
	for (size_t i = 0; i < n; i++) {
		ncols = ioacct_store_counter_values(&s[i].c, v[i]);
		pg_buf_add(b, "%s%" PRIu32, i ? "," : "", s[i].bin);
	}
	pg_buf_add(b, "}");
	for (size_t k = 0; k < ncols; k++) {
		size_t i;

		/*
		 * A counter 0 in every bin is NULL, read as 0: most are (the
		 * size classes and error classes of most operations), and
		 * each array costs its unnest on every read that sums.
		 */
		for (i = 0; i < n && !v[i][k]; i++)
			;
		if (i == n) {
			pg_buf_add(b, "\t\\N");
			continue;
		}
		pg_buf_add(b, "\t{");
		for (i = 0; i < n; i++)
			pg_buf_add(b, "%s%" PRIu64, i ? "," : "", v[i][k]);
		pg_buf_add(b, "}");
	}
	pg_buf_add(b, "\n");
}

int pg_buf_series(struct ioacct_pgstore *pg, const char *key, const struct ioacct_sample *s,
		  size_t n, struct buf *b)
{
	uint64_t (*v)[IOACCT_STORE_NR_COUNTERS];
	struct ioacct_sample *sorted;
	int err = 0;

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
	for (size_t i = 0; i < n && !err;) {
		size_t j = i + 1;

		while (j < n && same_series(&sorted[i], &sorted[j]))
			j++;
		buf_series_row(b, key, sorted + i, j - i, v);
		err = pg_copy_flush(pg, b, false);
		i = j;
	}
out:
	free(sorted);
	free(v);
	return err;
}

int pg_put_series(struct ioacct_pgstore *pg, const char *copy_sql, const char *key,
		  const struct ioacct_sample *s, size_t n, struct buf *b)
{
	int err;

	if (!n)
		return 0;
	err = pg_copy_begin(pg, copy_sql);
	if (err)
		return err;
	err = pg_buf_series(pg, key, s, n, b);
	return pg_copy_end(pg, b, err, "store the series");
}

/* The counters in columns first.. in IOACCT_STORE_COUNTER_COLS order, added to c. */
void pg_counters_add(struct ioacct_counters *c, const PGresult *res, int row, int first)
{
	int k = first;

	c->bytes += val_u64(res, row, k++);
	c->calls += val_u64(res, row, k++);
	c->errors += val_u64(res, row, k++);
	c->ns += val_u64(res, row, k++);
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		c->size_hist[i] += val_u64(res, row, k++);
	for (int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		c->errclass[i] += val_u64(res, row, k++);
}

/* Adds a sample to an array, summed into the one of the same (step, mount, op[, bin]). */
int pg_sample_add(struct ioacct_sample **a, size_t *n, size_t *cap, bool with_bin,
		  const struct ioacct_sample *s, const PGresult *res, int row, int first)
{
	size_t i;

	/* Per job there are a few per node: a scan is enough for totals. */
	for (i = 0; !with_bin && i < *n; i++)
		if ((*a)[i].step_id == s->step_id && (*a)[i].mnt_id == s->mnt_id &&
		    (*a)[i].op == s->op)
			break;
	if (with_bin || i == *n) {
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			void *p = reallocarray(*a, ncap, sizeof(**a));

			if (!p)
				return -ENOMEM;
			*a = p;
			*cap = ncap;
		}
		i = (*n)++;
		(*a)[i] = *s;
	}
	pg_counters_add(&(*a)[i].c, res, row, first);
	return 0;
}

#endif /* HAVE_LIBPQ */
