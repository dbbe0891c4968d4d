/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Retention of the SQLite store (see retain.h): purge and downsample, a
 * batch of jobs per transaction.
 *
 * A purge deletes a job's rows from every table that has a job_key column,
 * found in the schema at run time, and then the job: a table added later is
 * purged too without a word here, and nothing relies on PRAGMA foreign_keys
 * being on. The unit of consistency is the transaction: every job of a batch
 * goes, or none.
 */
#include "retain.h"
#include "store.h"
#include "store_db.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * The jobs a purge or a downsample may take, past cutoff ?1; ?4: whether
 * the outbox of the cluster store holds jobs back (there is one).
 */
#define CANDIDATES                                                                       \
	" FROM jobs WHERE end_ns IS NOT NULL AND end_ns < ?1 AND state != 'RUNNING'"     \
	" AND (?4 = 0 OR key NOT IN (SELECT job_key FROM export_queue))"                 \
	" AND key NOT IN (SELECT job_key FROM report_specs)"

/* Past the cutoff ?1, but kept for the cluster store (?2) or a merged report. */
#define KEPT_SQL                                                                         \
	"SELECT count(*) FROM jobs WHERE end_ns IS NOT NULL AND end_ns < ?1"             \
	" AND ((?2 != 0 AND key IN (SELECT job_key FROM export_queue))"                  \
	" OR key IN (SELECT job_key FROM report_specs))"

#define MAX_JOB_TABLES 32
/*
 * A batch also ends once it has this many series rows: a job of a day in
 * 1 s bins on a few mounts has 10^5 or more, and a transaction holds the
 * daemon's drains for as long as it runs. Measured on a store of 220 MB
 * (2,000 jobs, 4.8 million series rows) on a loaded 2-core machine:
 * 25,000-row batches purge 150,000 to 280,000 rows a second (about 0.1 s
 * a batch), whole 64-job batches 120,000 (1.3 s a batch).
 */
#define BATCH_MAX_ROWS 25000

struct job_tables {
	char name[MAX_JOB_TABLES][64];
	size_t n;
	bool sized;             /* bytes_per_row known: counted once there is a job to take */
	double bytes_per_row;   /* the file's size over its rows: the bytes estimate */
};

/* ---- statements of their own: prepared per call, a purge is rare ---- */

static int prep(struct ioacct_store *st, const char *sql, sqlite3_stmt **s)
{
	int rc = sqlite3_prepare_v2(st->db, sql, -1, s, NULL);

	if (rc != SQLITE_OK)
		return store_sql_error(st, rc, "retention: prepare \"%.60s\"", sql);
	return 0;
}

/* One integer of `sql` with ?1 = a; the statement is finalized. */
static int query_int(struct ioacct_store *st, const char *sql, int64_t a, int64_t *v)
{
	sqlite3_stmt *s = NULL;
	int err = prep(st, sql, &s);

	if (!err)
		err = store_stmt_int(st, s, bind_i64(s, 1, a), (sqlite3_int64 *)v, "retention");
	sqlite3_finalize(s);
	return err;
}

/* Runs `sql` with ?1 = a, ?2 = b; *changes: the rows it changed. */
static int exec2(struct ioacct_store *st, const char *sql, int64_t a, int64_t b, int64_t *changes)
{
	sqlite3_stmt *s = NULL;
	int err = prep(st, sql, &s);

	if (err)
		return err;
	if (sqlite3_bind_parameter_count(s) >= 1)
		err = bind_i64(s, 1, a);
	if (!err && sqlite3_bind_parameter_count(s) >= 2)
		err = bind_i64(s, 2, b);
	err = store_stmt_run(st, s, err, "retention: \"%.60s\"", sql);
	if (!err && changes)
		*changes = sqlite3_changes(st->db);
	sqlite3_finalize(s);
	return err;
}

/*
 * The estimate of a row's bytes: the pages in use (the file's less its free
 * list, which a purge grows) over the rows. It reads every table whole, so
 * only once there is something to take.
 */
static int job_tables_size(struct ioacct_store *st, struct job_tables *t)
{
	int64_t pages = 0, free_pages = 0, page_size = 0, rows = 0, n;
	char sql[160];
	int err;

	if (t->sized)
		return 0;
	err = query_int(st, "SELECT count(*) FROM jobs WHERE ?1 = ?1", 0, &rows);
	for (size_t i = 0; !err && i < t->n; i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\" WHERE ?1 = ?1", t->name[i]);
		err = query_int(st, sql, 0, &n);
		rows += n;
	}
	if (!err)
		err = query_int(st, "SELECT page_count FROM pragma_page_count() WHERE ?1 = ?1", 0,
				&pages);
	if (!err)
		err = query_int(st, "SELECT freelist_count FROM pragma_freelist_count() WHERE ?1 = ?1",
				0, &free_pages);
	if (!err)
		err = query_int(st, "SELECT page_size FROM pragma_page_size() WHERE ?1 = ?1", 0,
				&page_size);
	if (free_pages > pages)
		free_pages = pages;
	t->bytes_per_row = rows ? (double)(pages - free_pages) * (double)page_size / (double)rows : 0;
	t->sized = !err;
	return err;
}

/* The tables with a job_key column. */
static int job_tables_load(struct ioacct_store *st, struct job_tables *t)
{
	sqlite3_stmt *s = NULL;
	int rc, err;

	memset(t, 0, sizeof(*t));
	err = prep(st,
		   "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) p"
		   " WHERE m.type = 'table' AND p.name = 'job_key' ORDER BY m.name",
		   &s);
	if (err)
		return err;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && t->n < MAX_JOB_TABLES) {
		col_str(s, 0, t->name[t->n], sizeof(t->name[0]));
		/* Our own names only: one that needs quoting is not a table of ours. */
		if (strspn(t->name[t->n], "abcdefghijklmnopqrstuvwxyz_0123456789") ==
		    strlen(t->name[t->n]))
			t->n++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_sql_error(st, rc, "retention: list the tables of jobs");
	if (rc == SQLITE_ROW)
		return store_error(st, -EIO, "retention: more than %d tables of jobs", MAX_JOB_TABLES);
	return 0;
}

/* The rows a job has in every table of jobs (its own row included). */
static int job_rows(struct ioacct_store *st, const struct job_tables *t, int64_t key,
		    int64_t *series, int64_t *all)
{
	char sql[160];
	int64_t n;
	int err = 0;

	*series = 0;
	*all = 1;
	for (size_t i = 0; !err && i < t->n; i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\" WHERE job_key = ?1",
			 t->name[i]);
		err = query_int(st, sql, key, &n);
		*all += n;
		if (!err && !strcmp(t->name[i], "series"))
			*series = n;
	}
	return err;
}

/*
 * Tests only: IOACCT_RETAIN_KILL_AT=N kills the process with SIGKILL in the
 * middle of its N-th batch (its first job done, the others not, nothing
 * committed), so that a test can show what a kill -9 leaves.
 */
static void kill_point(uint64_t batch, size_t i, size_t n)
{
	const char *at = getenv("IOACCT_RETAIN_KILL_AT");

	if (at && strtoull(at, NULL, 10) == batch && i == (n > 1 ? 1 : 0)) {
		fprintf(stderr, "IOACCT_RETAIN_KILL_AT=%s: killed in the middle of batch %" PRIu64
				" (tests only)\n", at, batch);
		raise(SIGKILL);
	}
}

/* Up to `max` keys (and widths) of `sql`'s rows, ?1 = cutoff, ?2 = arg. */
static int take_keys(struct ioacct_store *st, const char *sql, int64_t cutoff, int64_t arg,
		     bool keep, int64_t *keys, uint64_t *widths, size_t max, size_t *n)
{
	sqlite3_stmt *s = NULL;
	int rc = SQLITE_DONE, err = prep(st, sql, &s);

	*n = 0;
	if (err)
		return err;
	err = bind_i64(s, 1, cutoff) || bind_i64(s, 2, arg) || bind_i64(s, 3, (int64_t)max) ||
	      bind_i64(s, 4, keep);
	if (err) {
		sqlite3_finalize(s);
		return store_sql_error(st, sqlite3_errcode(st->db), "retention: bind");
	}
	while (*n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		keys[*n] = sqlite3_column_int64(s, 0);
		widths[*n] = col_u64(s, 1);
		(*n)++;
	}
	if (*n < max && rc != SQLITE_DONE)
		err = store_sql_error(st, rc, "retention: select the jobs");
	sqlite3_finalize(s);
	return err;
}

static int kept_count(struct ioacct_store *st, int64_t cutoff_ns, bool keep,
		      struct ioacct_retain_result *res)
{
	int64_t n = 0;
	sqlite3_stmt *s = NULL;
	int err = prep(st, KEPT_SQL, &s);

	if (!err)
		err = store_stmt_int(st, s, bind_i64(s, 1, cutoff_ns) || bind_i64(s, 2, keep),
				     (sqlite3_int64 *)&n, "retention: count the jobs kept");
	sqlite3_finalize(s);
	res->kept_unexported = (uint64_t)n;
	return err;
}

/* ---- purge ---- */

static int purge_job(struct ioacct_store *st, const struct job_tables *t, int64_t key,
		     struct ioacct_retain_result *res)
{
	int64_t series = 0, all = 0, n = 0;
	char sql[160];
	int err = 0;

	for (size_t i = 0; !err && i < t->n; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM \"%s\" WHERE job_key = ?1", t->name[i]);
		err = exec2(st, sql, key, 0, &n);
		all += n;
		if (!strcmp(t->name[i], "series"))
			series = n;
	}
	if (!err)
		err = exec2(st, "DELETE FROM jobs WHERE key = ?1", key, 0, &n);
	if (err)
		return err;
	all += n;
	res->jobs++;
	res->rows += (uint64_t)series;
	res->bytes += (uint64_t)((double)all * t->bytes_per_row);
	return 0;
}

/* One batch in one transaction; *n: the jobs it took (0: none left). */
static int purge_batch(struct ioacct_store *st, struct job_tables *t, int64_t cutoff_ns,
		       bool keep, struct ioacct_retain_result *res, size_t *n)
{
	int64_t keys[IOACCT_PURGE_BATCH];
	uint64_t widths[IOACCT_PURGE_BATCH];
	struct ioacct_retain_result before = *res;
	bool outer;
	int err;

	err = store_unit_begin(st, true, &outer);
	if (err)
		return err;
	err = take_keys(st, "SELECT key, 0" CANDIDATES " AND ?2 = ?2 ORDER BY key LIMIT ?3",
			cutoff_ns, 0, keep, keys, widths, IOACCT_PURGE_BATCH, n);
	if (!err && *n)
		err = job_tables_size(st, t);
	for (size_t i = 0; !err && i < *n; i++) {
		kill_point(res->batches + 1, i, *n);
		err = purge_job(st, t, keys[i], res);
		if (res->rows - before.rows >= BATCH_MAX_ROWS)
			*n = i + 1; /* the rest in the next batch */
	}
	err = store_unit_end(st, outer, err);
	if (err)
		*res = before; /* rolled back: nothing of it happened */
	else if (*n)
		res->batches++;
	return err;
}

/* A dry run: what would go, per user, in one read transaction. */
static int purge_count(struct ioacct_store *st, struct job_tables *t, int64_t cutoff_ns,
		       bool keep, struct ioacct_retain_result *res)
{
	sqlite3_stmt *s = NULL;
	struct ioacct_purge_user *u;
	int64_t series = 0, all = 0;
	int rc = SQLITE_DONE, err;

	err = prep(st, "SELECT key, uid, user" CANDIDATES " ORDER BY uid, key", &s);
	if (err)
		return err;
	if (bind_i64(s, 1, cutoff_ns) || bind_i64(s, 4, keep))
		err = store_sql_error(st, sqlite3_errcode(st->db), "retention: bind");
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint32_t uid = (uint32_t)col_u64(s, 1);

		if (!res->nusers || res->users[res->nusers - 1].uid != uid) {
			u = realloc(res->users, (res->nusers + 1) * sizeof(*u));
			if (!u) {
				err = store_error(st, -ENOMEM, "retention: out of memory");
				break;
			}
			res->users = u;
			u = &res->users[res->nusers++];
			memset(u, 0, sizeof(*u));
			u->uid = uid;
			col_str(s, 2, u->user, sizeof(u->user));
		}
		res->users[res->nusers - 1].jobs++;
		err = job_tables_size(st, t);
		if (!err)
			err = job_rows(st, t, sqlite3_column_int64(s, 0), &series, &all);
		res->jobs++;
		res->rows += (uint64_t)series;
		res->bytes += (uint64_t)((double)all * t->bytes_per_row);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_sql_error(st, rc, "retention: select the jobs");
	sqlite3_finalize(s);
	return err;
}

int ioacct_store_purge(struct ioacct_store *st, int64_t cutoff_ns, bool keep_unexported,
		       bool dry_run, ioacct_retain_progress_fn progress, void *arg,
		       struct ioacct_retain_result *res)
{
	struct job_tables t;
	size_t n = 1;
	bool outer;
	int err;

	memset(res, 0, sizeof(*res));
	if (!sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL, "purge: a transaction is open (a purge makes its own)");
	if (dry_run || st->mode != IOACCT_STORE_RDWR) {
		if (!dry_run)
			return store_error(st, -EROFS, "purge: the store is open read-only");
		err = store_unit_begin(st, false, &outer);
		if (err)
			return err;
		err = job_tables_load(st, &t);
		if (!err)
			err = purge_count(st, &t, cutoff_ns, keep_unexported, res);
		if (!err)
			err = kept_count(st, cutoff_ns, keep_unexported, res);
		return store_unit_end(st, outer, err);
	}
	err = job_tables_load(st, &t);
	while (!err && n) {
		err = purge_batch(st, &t, cutoff_ns, keep_unexported, res, &n);
		if (!err && n && progress && progress(res, arg))
			break;
	}
	if (!err)
		err = kept_count(st, cutoff_ns, keep_unexported, res);
	return err;
}

/* ---- downsample ---- */

/*
 * A job's RPC rows (issue 40) summed into the same wider bins; rows of RPCs
 * sent by no job are in bin 0, which stays 0. *rows: the rows read.
 */
#define RPC_SUM(name) "ioacct_u64sum(" #name "), "
static int rebin_rpc(struct ioacct_store *st, int64_t key, uint64_t factor, int64_t *rows)
{
	int err;

	err = exec2(st, "DELETE FROM temp.ioacct_rpc_rebin WHERE ?1 = ?1", 0, 0, NULL);
	if (!err)
		err = exec2(st,
			    "INSERT INTO temp.ioacct_rpc_rebin SELECT step_id, mnt_id, prog, vers, proc,"
			    " flags, bin / ?2, " IOACCT_RPC_COUNTERS(RPC_SUM) "max(name) FROM rpc"
			    " WHERE job_key = ?1 GROUP BY step_id, mnt_id, prog, vers, proc, flags,"
			    " bin / ?2",
			    key, (int64_t)factor, NULL);
	if (!err)
		err = exec2(st, "DELETE FROM rpc WHERE job_key = ?1", key, 0, rows);
	if (!err)
		err = exec2(st,
			    "INSERT INTO rpc (job_key, " RPC_KEY_COLS ", " RPC_COLS ")"
			    " SELECT ?1, * FROM temp.ioacct_rpc_rebin WHERE ?2 = ?2",
			    key, 0, NULL);
	return err;
}
#undef RPC_SUM

/* A job's series summed into bins `factor` times wider, in place. */
static int rebin_job(struct ioacct_store *st, int64_t key, uint64_t width, uint64_t factor,
		     struct ioacct_retain_result *res, int64_t *touched)
{
	int64_t before = 0, after = 0, rpc = 0;
	int err;

	err = exec2(st, "DELETE FROM temp.ioacct_rebin WHERE ?1 = ?1", 0, 0, NULL);
	if (!err)
		err = exec2(st,
			    "INSERT INTO temp.ioacct_rebin SELECT step_id, mnt_id, op, bin / ?2, "
			    COUNTER_SUMS " FROM series WHERE job_key = ?1"
			    " GROUP BY step_id, mnt_id, op, bin / ?2",
			    key, (int64_t)factor, NULL);
	if (!err)
		err = exec2(st, "DELETE FROM series WHERE job_key = ?1", key, 0, &before);
	if (!err)
		err = exec2(st,
			    "INSERT INTO series (job_key, step_id, mnt_id, op, bin, "
			    IOACCT_STORE_COUNTER_COLS ") SELECT ?1, * FROM temp.ioacct_rebin"
			    " WHERE ?2 = ?2",
			    key, 0, &after);
	if (!err)
		err = rebin_rpc(st, key, factor, &rpc);
	if (!err)
		err = exec2(st,
			    "UPDATE jobs SET orig_bin_width_ns = coalesce(orig_bin_width_ns,"
			    " bin_width_ns), bin_width_ns = ?2 WHERE key = ?1",
			    key, (int64_t)width, NULL);
	if (err)
		return err;
	res->jobs++;
	res->rows += (uint64_t)(before - after);
	*touched += before + rpc;
	return 0;
}

static int downsample_batch(struct ioacct_store *st, int64_t cutoff_ns, uint64_t width_ns,
			    bool keep, struct ioacct_retain_result *res, size_t *n)
{
	int64_t keys[IOACCT_DOWNSAMPLE_BATCH];
	uint64_t widths[IOACCT_DOWNSAMPLE_BATCH];
	struct ioacct_retain_result before = *res;
	int64_t touched = 0;
	bool outer;
	int err;

	err = store_unit_begin(st, true, &outer);
	if (err)
		return err;
	err = take_keys(st,
			"SELECT key, bin_width_ns" CANDIDATES
			" AND bin_width_ns > 0 AND bin_width_ns < ?2 ORDER BY key LIMIT ?3",
			cutoff_ns, (int64_t)width_ns, keep, keys, widths, IOACCT_DOWNSAMPLE_BATCH, n);
	for (size_t i = 0; !err && i < *n; i++) {
		/* Whole old bins in each new one: the smallest multiple at least width_ns. */
		uint64_t factor = (width_ns + widths[i] - 1) / widths[i];

		kill_point(res->batches + 1, i, *n);
		err = rebin_job(st, keys[i], factor * widths[i], factor, res, &touched);
		if (touched >= BATCH_MAX_ROWS)
			*n = i + 1;
	}
	err = store_unit_end(st, outer, err);
	if (err)
		*res = before;
	else if (*n)
		res->batches++;
	return err;
}

int ioacct_store_downsample(struct ioacct_store *st, int64_t cutoff_ns, uint64_t width_ns,
			    bool keep_unexported, ioacct_retain_progress_fn progress, void *arg,
			    struct ioacct_retain_result *res)
{
	size_t n = 1;
	int err;

	memset(res, 0, sizeof(*res));
	if (st->mode != IOACCT_STORE_RDWR)
		return store_error(st, -EROFS, "downsample: the store is open read-only");
	if (!sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL, "downsample: a transaction is open (it makes its own)");
	if (width_ns == 0 || width_ns > INT64_MAX)
		return store_error(st, -EINVAL, "downsample: bad width %" PRIu64 " ns", width_ns);
	/* The connection's scratch table: never in the file, gone at close. */
	err = exec2(st,
		    "CREATE TEMP TABLE IF NOT EXISTS ioacct_rebin (step_id, mnt_id, op, bin, "
		    IOACCT_STORE_COUNTER_COLS ")",
		    0, 0, NULL);
	if (!err)
		err = exec2(st,
			    "CREATE TEMP TABLE IF NOT EXISTS ioacct_rpc_rebin (" RPC_KEY_COLS ", "
			    RPC_COLS ")",
			    0, 0, NULL);
	while (!err && n) {
		err = downsample_batch(st, cutoff_ns, width_ns, keep_unexported, res, &n);
		if (!err && n && progress && progress(res, arg))
			break;
	}
	if (!err)
		err = kept_count(st, cutoff_ns, keep_unexported, res);
	return err;
}

void ioacct_retain_result_free(struct ioacct_retain_result *res)
{
	if (!res)
		return;
	free(res->users);
	res->users = NULL;
	res->nusers = 0;
}
