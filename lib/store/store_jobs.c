/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Jobs in the SQLite store (see store.h, store_db.h): a job inserted,
 * finished (its totals computed, queued for the cluster store in the same
 * transaction), found and deleted; its steps, mounts, series and watches
 * written; and all of it loaded back, in one read transaction per job.
 */
#include "store.h"
#include "store_db.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- jobs ---- */

void store_read_job(sqlite3_stmt *s, struct ioacct_job *j)
{
	memset(j, 0, sizeof(*j));
	j->key = sqlite3_column_int64(s, 0);
	col_str(s, 1, j->cluster, sizeof(j->cluster));
	j->job_id = col_u64(s, 2);
	col_str(s, 3, j->node, sizeof(j->node));
	col_str(s, 4, j->source, sizeof(j->source));
	j->uid = (uint32_t)col_u64(s, 5);
	j->gid = (uint32_t)col_u64(s, 6);
	col_str(s, 7, j->user, sizeof(j->user));
	col_str(s, 8, j->name, sizeof(j->name));
	col_str(s, 9, j->workdir, sizeof(j->workdir));
	j->has_array = sqlite3_column_type(s, 10) != SQLITE_NULL;
	j->array_job_id = (uint32_t)col_u64(s, 10);
	j->array_task_id = (uint32_t)col_u64(s, 11);
	j->start_ns = sqlite3_column_int64(s, 12);
	j->end_ns = sqlite3_column_int64(s, 13); /* NULL reads as 0: running */
	col_str(s, 14, j->state, sizeof(j->state));
	j->exit_code = (int32_t)sqlite3_column_int64(s, 15);
	col_str(s, 16, j->probe_mode, sizeof(j->probe_mode));
	j->bin_width_ns = col_u64(s, 17);
	j->dropped_events = col_u64(s, 18);
	j->dropped_bytes = col_u64(s, 19);
	j->restart = (uint32_t)col_u64(s, 20);
	j->orig_bin_width_ns = col_u64(s, 21); /* NULL reads as 0: never downsampled */
	/* A node holds one part of a run: its start names it. */
	j->run_start = j->start_ns;
	col_str(s, 22, j->cmdline, sizeof(j->cmdline));
	j->lib_opens_missed = col_u64(s, 23);
}

/* Runs a bound job query; -ENOENT without a message when no row matches. */
static int job_fetch(struct ioacct_store *st, sqlite3_stmt *s, int bound, struct ioacct_job *job)
{
	int rc, err = 0;

	rc = bound ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW)
		store_read_job(s, job);
	else if (rc == SQLITE_DONE)
		err = -ENOENT;
	else
		err = store_sql_error(st, rc, "read job");
	stmt_done(s);
	return err;
}

/* A new job is RUNNING: its end and state are not taken from `job`. */
int ioacct_store_job_insert(struct ioacct_store *st, struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = store_stmt_get(st, ST_JOB_INSERT, &s);
	if (err)
		return err;
	bound = BIND_BUF(s, 1, job->cluster) || bind_u64(s, 2, job->job_id) ||
		BIND_BUF(s, 3, job->node) || BIND_BUF(s, 4, job->source) ||
		bind_u64(s, 5, job->uid) || bind_u64(s, 6, job->gid) ||
		BIND_BUF(s, 7, job->user) || BIND_BUF(s, 8, job->name) ||
		BIND_BUF(s, 9, job->workdir) ||
		(job->has_array ? bind_u64(s, 10, job->array_job_id) || bind_u64(s, 11, job->array_task_id)
				: sqlite3_bind_null(s, 10) || sqlite3_bind_null(s, 11)) ||
		bind_i64(s, 12, job->start_ns) || sqlite3_bind_int(s, 13, job->exit_code) ||
		BIND_BUF(s, 14, job->probe_mode) || bind_u64(s, 15, job->bin_width_ns) ||
		bind_u64(s, 16, job->dropped_events) || bind_u64(s, 17, job->dropped_bytes) ||
		bind_u64(s, 18, job->restart) || BIND_BUF(s, 19, job->cmdline);
	err = store_stmt_run(st, s, bound, "insert job %.*s/%" PRIu64, (int)sizeof(job->cluster),
			     job->cluster, job->job_id);
	if (err)
		return err;
	if (sqlite3_changes(st->db) == 0)
		return store_error(st, -EEXIST, "insert job %.*s/%" PRIu64 ": it is running already",
				   (int)sizeof(job->cluster), job->cluster, job->job_id);
	job->key = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int ioacct_store_job_find_running(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				  struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_JOB_FIND_RUNNING, &s);
	if (err)
		return err;
	err = job_fetch(st, s,
			bind_u64(s, 1, job_id) || sqlite3_bind_text(s, 2, cluster, -1, SQLITE_STATIC),
			job);
	if (err == -ENOENT)
		store_error(st, err, "no running job %s/%" PRIu64, cluster ? cluster : "", job_id);
	return err;
}

int ioacct_store_job_max_id(struct ioacct_store *st, const char *cluster, uint64_t *job_id)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v;
	int err;

	err = store_stmt_get(st, ST_JOB_MAX_ID, &s);
	if (err)
		return err;
	/* MAX() of no rows is NULL, which reads as 0. */
	err = store_stmt_int(st, s, sqlite3_bind_text(s, 1, cluster, -1, SQLITE_STATIC), &v,
			     "largest job id");
	if (!err)
		*job_id = u64_from_db(v);
	return err;
}

int ioacct_store_job_add_dropped(struct ioacct_store *st, int64_t job_key, uint64_t events,
				 uint64_t bytes)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_JOB_ADD_DROPPED, &s);
	if (err)
		return err;
	err = store_stmt_run(st, s,
			     bind_i64(s, 1, job_key) || bind_u64(s, 2, events) || bind_u64(s, 3, bytes),
			     "add dropped events to job %" PRId64, job_key);
	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "add dropped events: no job with key %" PRId64, job_key);
	return err;
}

int ioacct_store_job_add_lib_missed(struct ioacct_store *st, int64_t job_key, uint64_t opens)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_JOB_ADD_LIB_MISSED, &s);
	if (err)
		return err;
	err = store_stmt_run(st, s, bind_i64(s, 1, job_key) || bind_u64(s, 2, opens),
			     "add missed library opens to job %" PRId64, job_key);
	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "add missed library opens: no job with key %" PRId64,
				  job_key);
	return err;
}

static int finish_in_unit(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
			  const char *state, int32_t exit_code)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_JOB_FINISH, &s);
	if (err)
		return err;
	err = store_stmt_run(st, s,
			     bind_i64(s, 1, job_key) || bind_i64(s, 2, end_ns) ||
				     sqlite3_bind_text(s, 3, state, -1, SQLITE_STATIC) ||
				     sqlite3_bind_int(s, 4, exit_code),
			     "finish job %" PRId64, job_key);
	if (err)
		return err;
	if (sqlite3_changes(st->db) == 0)
		return store_error(st, -ENOENT, "finish job: no job with key %" PRId64, job_key);
	err = store_stmt_get(st, ST_STEPS_END, &s);
	if (err)
		return err;
	err = store_stmt_run(st, s,
			     bind_i64(s, 1, job_key) || bind_i64(s, 2, end_ns) ||
				     sqlite3_bind_text(s, 3, state, -1, SQLITE_STATIC),
			     "end the open steps of job %" PRId64, job_key);
	if (!err)
		err = store_run_key(st, ST_TOTALS_DELETE, job_key, "delete the totals");
	if (!err)
		err = store_run_key(st, ST_TOTALS_COMPUTE, job_key, "compute the totals");
	if (!err)
		err = store_run_key(st, ST_WATCHES_DELETE_JOB, job_key, "delete the watches");
	/* In the same transaction: a finished job is never missing from the outbox. */
	if (!err)
		err = store_run_key(st, ST_EXPORT_QUEUE, job_key, "queue for the cluster store");
	return err;
}

static int spec_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_report_spec *spec)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_SPEC_PUT, &s);
	if (err)
		return err;
	return store_stmt_run(st, s,
			      bind_i64(s, 1, job_key) || BIND_BUF(s, 2, spec->path) ||
				      sqlite3_bind_int64(s, 3, spec->formats) ||
				      BIND_BUF(s, 4, spec->nodes) || BIND_BUF(s, 5, spec->copy_dir),
			      "keep the merged report of job %" PRId64, job_key);
}

/*
 * Works inside an explicit transaction too, as a savepoint: the finish is
 * then committed (or lost) with the caller's transaction.
 */
int ioacct_store_job_finish_report(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
				   const char *state, int32_t exit_code,
				   const struct ioacct_report_spec *spec)
{
	bool outer;
	int err;

	if (end_ns <= 0 || !state || !*state || strcmp(state, "RUNNING") == 0)
		return store_error(st, -EINVAL,
				   "finish job %" PRId64 ": needs an end time and a final state",
				   job_key);
	err = store_unit_begin(st, true, &outer);
	if (err)
		return err;
	err = finish_in_unit(st, job_key, end_ns, state, exit_code);
	/* With the finish and its outbox row: the exporter never sees one without the other. */
	if (!err && spec)
		err = spec_put(st, job_key, spec);
	return store_unit_end(st, outer, err);
}

int ioacct_store_job_finish(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
			    const char *state, int32_t exit_code)
{
	return ioacct_store_job_finish_report(st, job_key, end_ns, state, exit_code, NULL);
}

int ioacct_store_job_get(struct ioacct_store *st, int64_t job_key, struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_JOB_GET, &s);
	if (err)
		return err;
	err = job_fetch(st, s, bind_i64(s, 1, job_key), job);
	if (err == -ENOENT)
		store_error(st, err, "no job with key %" PRId64, job_key);
	return err;
}

int ioacct_store_job_find_run(struct ioacct_store *st, const char *cluster, uint64_t job_id,
			      int64_t nth, struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	char run[32] = "";
	int err;

	if (nth < 0)
		err = store_stmt_get(st, cluster ? ST_JOB_FIND : ST_JOB_FIND_ANY, &s);
	else
		err = store_stmt_get(st, cluster ? ST_JOB_FIND_NTH : ST_JOB_FIND_NTH_ANY, &s);
	if (err)
		return err;
	err = job_fetch(st, s,
			bind_u64(s, 1, job_id) ||
				(cluster && sqlite3_bind_text(s, 2, cluster, -1, SQLITE_STATIC)) ||
				(nth >= 0 && bind_i64(s, 3, nth)),
			job);
	if (err == -ENOENT) {
		if (nth >= 0)
			snprintf(run, sizeof(run), " run %" PRId64, nth);
		store_error(st, err, "no job %" PRIu64 "%s%s%s", job_id, run,
			    cluster ? " on cluster " : "", cluster ? cluster : "");
	}
	return err;
}

int ioacct_store_job_find_exact(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				uint32_t restart, int64_t run_start, struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_JOB_FIND_EXACT, &s);
	if (err)
		return err;
	err = job_fetch(st, s,
			bind_u64(s, 1, job_id) ||
				sqlite3_bind_text(s, 2, cluster, -1, SQLITE_STATIC) ||
				bind_u64(s, 3, restart) || bind_i64(s, 4, run_start),
			job);
	if (err == -ENOENT)
		store_error(st, err, "no run of job %" PRIu64 " on cluster %s started at %" PRId64,
			    job_id, cluster, run_start);
	return err;
}

int ioacct_store_job_find(struct ioacct_store *st, const char *cluster, uint64_t job_id,
			  struct ioacct_job *job)
{
	return ioacct_store_job_find_run(st, cluster, job_id, -1, job);
}

/* ---- steps, mounts, series, watches ---- */

int ioacct_store_step_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_step *step)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = store_stmt_get(st, ST_STEP_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, job_key) || bind_u64(s, 2, step->step_id) ||
		bind_i64(s, 3, step->start_ns) || bind_end(s, 4, step->end_ns) ||
		BIND_BUF(s, 5, step->state) || sqlite3_bind_int(s, 6, step->exit_code) ||
		BIND_BUF(s, 7, step->cgroup);
	return store_stmt_run(st, s, bound, "store step %" PRIu32 " of job %" PRId64,
			      step->step_id, job_key);
}

int ioacct_store_mount_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_mount *m)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = store_stmt_get(st, ST_MOUNT_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, job_key) || bind_u64(s, 2, m->mnt_id) || BIND_BUF(s, 3, m->path) ||
		BIND_BUF(s, 4, m->fstype) || BIND_BUF(s, 5, m->source);
	return store_stmt_run(st, s, bound, "store mount %" PRIu64 " of job %" PRId64,
			      m->mnt_id, job_key);
}

int ioacct_store_series_put(struct ioacct_store *st, int64_t job_key,
			    const struct ioacct_sample *smp)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	if (smp->op >= IOACCT_OP_COUNT)
		return store_error(st, -EINVAL, "store a bin of job %" PRId64 ": no operation %" PRIu32,
				   job_key, smp->op);
	err = store_stmt_get(st, ST_SERIES_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, job_key) || bind_u64(s, 2, smp->step_id) ||
		bind_u64(s, 3, smp->mnt_id) || bind_u64(s, 4, smp->op) || bind_u64(s, 5, smp->bin) ||
		store_bind_counters(s, 6, &smp->c);
	return store_stmt_run(st, s, bound, "store bin %" PRIu32 " of job %" PRId64, smp->bin,
			      job_key);
}

int ioacct_store_watch_put(struct ioacct_store *st, const struct ioacct_watch *w)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = store_stmt_get(st, ST_WATCH_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, w->job_key) || bind_u64(s, 2, w->step_id) ||
		bind_u64(s, 3, w->slot) || bind_u64(s, 4, w->cgroup_id) || bind_u64(s, 5, w->hier) ||
		bind_i64(s, 6, w->pid) || bind_u64(s, 7, w->mntns) ||
		bind_u64(s, 8, w->start_mono_ns) || bind_u64(s, 9, w->bin_width_ns) ||
		BIND_BUF(s, 10, w->cgroup);
	return store_stmt_run(st, s, bound, "store the watch of step %" PRIu32 " of job %" PRId64,
			      w->step_id, w->job_key);
}

int ioacct_store_watch_delete(struct ioacct_store *st, int64_t job_key, uint32_t step_id)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, ST_WATCH_DELETE, &s);
	if (err)
		return err;
	err = store_stmt_run(st, s, bind_i64(s, 1, job_key) || bind_u64(s, 2, step_id),
			     "delete the watch of step %" PRIu32 " of job %" PRId64, step_id, job_key);
	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "no watch of step %" PRIu32 " of job %" PRId64,
				  step_id, job_key);
	return err;
}

/* A file's counters in FILE_COLS order, the size bins apart (file_bins). */
#define FILE_U64S(f)                                                                      \
	{ (f)->opens, (f)->reads, (f)->writes, (f)->stats, (f)->fsyncs, (f)->bytes_read,    \
	  (f)->bytes_written, (f)->read_ns, (f)->write_ns, (f)->meta_ns }
#define FILE_I64S(f)                                                                      \
	{ (f)->max_byte_read, (f)->max_byte_written, (int64_t)(f)->seq_reads,                \
	  (int64_t)(f)->seq_writes, (int64_t)(f)->consec_reads, (int64_t)(f)->consec_writes, \
	  (f)->first_read_ns, (f)->last_read_ns, (f)->first_write_ns, (f)->last_write_ns }
/* The columns after the size bins. */
#define FILE_VIEW_U64S(f)                                                                 \
	{ (f)->mmap_bytes, (f)->cache_miss_bytes, (f)->seeks, (f)->rw_switches,              \
	  (f)->access[0], (f)->access[1], (f)->access[2], (f)->access[3],                    \
	  (f)->access_count[0], (f)->access_count[1], (f)->access_count[2],                  \
	  (f)->access_count[3] }

/* The access-size bins as text, "n0,n1,...,n9": two columns, not twenty. */
static void file_bins(const uint64_t *b, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRIu64, i ? "," : "", b[i]);
}

static int file_bins_parse(const char *s, uint64_t *b)
{
	char *end;

	for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS; i++) {
		if (!s || (i && *s++ != ','))
			return -EIO;
		errno = 0;
		b[i] = strtoull(s, &end, 10);
		if (errno || end == s)
			return -EIO;
		s = end;
	}
	return *s ? -EIO : 0;
}

int ioacct_store_file_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_file *f)
{
	const uint64_t u[] = FILE_U64S(f);
	const int64_t v[] = FILE_I64S(f);
	const uint64_t x[] = FILE_VIEW_U64S(f);
	char rb[256], wb[256];
	sqlite3_stmt *s = NULL;
	int err, bound, i = 1;

	_Static_assert(ARRAY_SIZE(u) + ARRAY_SIZE(v) + 2 + ARRAY_SIZE(x) == FILE_NR_COLS,
		       "FILE_COLS");
	err = store_stmt_get(st, ST_FILE_PUT, &s);
	if (err)
		return err;
	file_bins(f->size_read, rb, sizeof(rb));
	file_bins(f->size_written, wb, sizeof(wb));
	bound = bind_i64(s, i++, job_key) || bind_u64(s, i++, f->step_id) ||
		bind_i64(s, i++, f->rank) || bind_u64(s, i++, f->mnt_id) || bind_u64(s, i++, f->dev) ||
		bind_u64(s, i++, f->ino) || bind_u64(s, i++, f->gen) || BIND_BUF(s, i++, f->path);
	for (size_t k = 0; k < ARRAY_SIZE(u) && !bound; k++)
		bound = bind_u64(s, i++, u[k]);
	for (size_t k = 0; k < ARRAY_SIZE(v) && !bound; k++)
		bound = bind_i64(s, i++, v[k]);
	if (!bound)
		bound = sqlite3_bind_text(s, i++, rb, -1, SQLITE_TRANSIENT) ||
			sqlite3_bind_text(s, i++, wb, -1, SQLITE_TRANSIENT);
	for (size_t k = 0; k < ARRAY_SIZE(x) && !bound; k++)
		bound = bind_u64(s, i++, x[k]);
	return store_stmt_run(st, s, bound, "store a file of job %" PRId64 " step %" PRIu32, job_key,
			      f->step_id);
}

int ioacct_store_mpiio_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_mpiio *m)
{
#define MPIIO_VAL(name) m->name,
	const uint64_t u[] = { IOACCT_MPIIO_COUNTERS(MPIIO_VAL) };
#undef MPIIO_VAL
	char rb[256], wb[256];
	sqlite3_stmt *s = NULL;
	int err, bound, i = 1;

	_Static_assert(ARRAY_SIZE(u) + 2 == MPIIO_NR_COLS, "MPIIO_COLS");
	err = store_stmt_get(st, ST_MPIIO_PUT, &s);
	if (err)
		return err;
	file_bins(m->size_read, rb, sizeof(rb));
	file_bins(m->size_written, wb, sizeof(wb));
	bound = bind_i64(s, i++, job_key) || bind_u64(s, i++, m->step_id) ||
		bind_i64(s, i++, m->rank) || bind_u64(s, i++, m->pid) || BIND_BUF(s, i++, m->path);
	for (size_t k = 0; k < ARRAY_SIZE(u) && !bound; k++)
		bound = bind_u64(s, i++, u[k]);
	if (!bound)
		bound = sqlite3_bind_text(s, i++, rb, -1, SQLITE_TRANSIENT) ||
			sqlite3_bind_text(s, i++, wb, -1, SQLITE_TRANSIENT);
	return store_stmt_run(st, s, bound, "store the MPI-IO counters of job %" PRId64 " step %" PRIu32,
			      job_key, m->step_id);
}

int ioacct_store_h5_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_h5rec *h)
{
#define H5_VAL(name) h->name,
	const uint64_t u[] = { IOACCT_H5_COUNTERS(H5_VAL) };
#undef H5_VAL
	char rb[256], wb[256];
	sqlite3_stmt *s = NULL;
	int err, bound, i = 1;

	_Static_assert(ARRAY_SIZE(u) + 2 == H5_NR_COLS, "H5_COLS");
	err = store_stmt_get(st, ST_H5_PUT, &s);
	if (err)
		return err;
	file_bins(h->size_read, rb, sizeof(rb));
	file_bins(h->size_written, wb, sizeof(wb));
	bound = bind_i64(s, i++, job_key) || bind_u64(s, i++, h->step_id) ||
		bind_i64(s, i++, h->rank) || bind_u64(s, i++, h->pid) || bind_u64(s, i++, h->kind) ||
		BIND_BUF(s, i++, h->name);
	for (size_t k = 0; k < ARRAY_SIZE(u) && !bound; k++)
		bound = bind_u64(s, i++, u[k]);
	if (!bound)
		bound = sqlite3_bind_text(s, i++, rb, -1, SQLITE_TRANSIENT) ||
			sqlite3_bind_text(s, i++, wb, -1, SQLITE_TRANSIENT);
	return store_stmt_run(st, s, bound, "store the HDF5 counters of job %" PRId64 " step %" PRIu32,
			      job_key, h->step_id);
}

int ioacct_store_rpc_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_rpc *r)
{
#define RPC_VAL(name) r->name,
	const uint64_t u[] = { r->step_id, r->mnt_id, r->prog, r->vers, r->proc, r->flags, r->bin,
			       IOACCT_RPC_COUNTERS(RPC_VAL) };
#undef RPC_VAL
	sqlite3_stmt *s = NULL;
	int err, bound, i = 1;

	err = store_stmt_get(st, ST_RPC_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, i++, job_key);
	for (size_t k = 0; k < ARRAY_SIZE(u) && !bound; k++)
		bound = bind_u64(s, i++, u[k]);
	if (!bound)
		bound = BIND_BUF(s, i++, r->name);
	return store_stmt_run(st, s, bound, "store the RPC counters of job %" PRId64 " step %" PRIu32,
			      job_key, r->step_id);
}

/* ---- loading rows ---- */

/* Fills one array element from a row; -EIO when the row cannot be valid. */
typedef int (*row_fn)(sqlite3_stmt *s, void *elem);

static int row_step(sqlite3_stmt *s, void *elem)
{
	struct ioacct_step *step = elem;

	step->step_id = (uint32_t)col_u64(s, 0);
	step->start_ns = sqlite3_column_int64(s, 1);
	step->end_ns = sqlite3_column_int64(s, 2);
	col_str(s, 3, step->state, sizeof(step->state));
	step->exit_code = (int32_t)sqlite3_column_int64(s, 4);
	col_str(s, 5, step->cgroup, sizeof(step->cgroup));
	return 0;
}

static int row_mount(sqlite3_stmt *s, void *elem)
{
	struct ioacct_mount *m = elem;

	m->mnt_id = col_u64(s, 0);
	col_str(s, 1, m->path, sizeof(m->path));
	col_str(s, 2, m->fstype, sizeof(m->fstype));
	col_str(s, 3, m->source, sizeof(m->source));
	return 0;
}

static int row_sample(sqlite3_stmt *s, void *elem)
{
	struct ioacct_sample *smp = elem;
	uint64_t op = col_u64(s, 2);

	/* Readers index tables by op: one out of range must not get past here. */
	if (op >= IOACCT_OP_COUNT)
		return -EIO;
	smp->step_id = (uint32_t)col_u64(s, 0);
	smp->mnt_id = col_u64(s, 1);
	smp->op = (uint32_t)op;
	smp->bin = (uint32_t)col_u64(s, 3);
	store_col_counters(s, 4, &smp->c);
	return 0;
}

static int row_file(sqlite3_stmt *s, void *elem)
{
	struct ioacct_file *f = elem;
	uint64_t *u[] = { &f->opens, &f->reads, &f->writes, &f->stats, &f->fsyncs, &f->bytes_read,
			  &f->bytes_written, &f->read_ns, &f->write_ns, &f->meta_ns };
	int64_t *v[] = { &f->max_byte_read, &f->max_byte_written, (int64_t *)&f->seq_reads,
			 (int64_t *)&f->seq_writes, (int64_t *)&f->consec_reads,
			 (int64_t *)&f->consec_writes, &f->first_read_ns, &f->last_read_ns,
			 &f->first_write_ns, &f->last_write_ns };
	uint64_t *x[] = { &f->mmap_bytes, &f->cache_miss_bytes, &f->seeks, &f->rw_switches,
			  &f->access[0], &f->access[1], &f->access[2], &f->access[3],
			  &f->access_count[0], &f->access_count[1], &f->access_count[2],
			  &f->access_count[3] };
	int c = 7;

	f->step_id = (uint32_t)col_u64(s, 0);
	f->rank = (int32_t)sqlite3_column_int64(s, 1);
	f->mnt_id = col_u64(s, 2);
	f->dev = (uint32_t)col_u64(s, 3);
	f->ino = col_u64(s, 4);
	f->gen = (uint32_t)col_u64(s, 5);
	col_str(s, 6, f->path, sizeof(f->path));
	for (size_t k = 0; k < ARRAY_SIZE(u); k++)
		*u[k] = col_u64(s, c++);
	for (size_t k = 0; k < ARRAY_SIZE(v); k++)
		*v[k] = sqlite3_column_int64(s, c++);
	if (file_bins_parse((const char *)sqlite3_column_text(s, c), f->size_read) ||
	    file_bins_parse((const char *)sqlite3_column_text(s, c + 1), f->size_written))
		return -EIO;
	c += 2;
	for (size_t k = 0; k < ARRAY_SIZE(x); k++)
		*x[k] = col_u64(s, c++);
	return 0;
}

static int row_mpiio(sqlite3_stmt *s, void *elem)
{
	struct ioacct_mpiio *m = elem;
#define MPIIO_PTR(name) &m->name,
	uint64_t *u[] = { IOACCT_MPIIO_COUNTERS(MPIIO_PTR) };
#undef MPIIO_PTR
	int c = 4;

	m->step_id = (uint32_t)col_u64(s, 0);
	m->rank = (int32_t)sqlite3_column_int64(s, 1);
	m->pid = (uint32_t)col_u64(s, 2);
	col_str(s, 3, m->path, sizeof(m->path));
	for (size_t k = 0; k < ARRAY_SIZE(u); k++)
		*u[k] = col_u64(s, c++);
	if (file_bins_parse((const char *)sqlite3_column_text(s, c), m->size_read) ||
	    file_bins_parse((const char *)sqlite3_column_text(s, c + 1), m->size_written))
		return -EIO;
	return 0;
}

static int row_h5(sqlite3_stmt *s, void *elem)
{
	struct ioacct_h5rec *h = elem;
#define H5_PTR(name) &h->name,
	uint64_t *u[] = { IOACCT_H5_COUNTERS(H5_PTR) };
#undef H5_PTR
	int c = 5;

	h->step_id = (uint32_t)col_u64(s, 0);
	h->rank = (int32_t)sqlite3_column_int64(s, 1);
	h->pid = (uint32_t)col_u64(s, 2);
	h->kind = (uint32_t)col_u64(s, 3);
	if (h->kind > IOACCT_H5REC_DATASET)
		return -EIO;
	col_str(s, 4, h->name, sizeof(h->name));
	for (size_t k = 0; k < ARRAY_SIZE(u); k++)
		*u[k] = col_u64(s, c++);
	if (file_bins_parse((const char *)sqlite3_column_text(s, c), h->size_read) ||
	    file_bins_parse((const char *)sqlite3_column_text(s, c + 1), h->size_written))
		return -EIO;
	return 0;
}

static int row_rpc(sqlite3_stmt *s, void *elem)
{
	struct ioacct_rpc *r = elem;
#define RPC_PTR(name) &r->name,
	uint64_t *u[] = { IOACCT_RPC_COUNTERS(RPC_PTR) };
#undef RPC_PTR
	int c = 7;

	r->step_id = (uint32_t)col_u64(s, 0);
	r->mnt_id = col_u64(s, 1);
	r->prog = (uint32_t)col_u64(s, 2);
	r->vers = (uint32_t)col_u64(s, 3);
	r->proc = (uint32_t)col_u64(s, 4);
	r->flags = (uint32_t)col_u64(s, 5);
	r->bin = (uint32_t)col_u64(s, 6);
	for (size_t k = 0; k < ARRAY_SIZE(u); k++)
		*u[k] = col_u64(s, c++);
	col_str(s, c, r->name, sizeof(r->name));
	return 0;
}

static int row_watch(sqlite3_stmt *s, void *elem)
{
	struct ioacct_watch *w = elem;

	w->job_key = sqlite3_column_int64(s, 0);
	w->step_id = (uint32_t)col_u64(s, 1);
	w->slot = (uint32_t)col_u64(s, 2);
	w->cgroup_id = col_u64(s, 3);
	w->hier = (uint32_t)col_u64(s, 4);
	w->pid = (int32_t)sqlite3_column_int64(s, 5);
	w->mntns = (uint32_t)col_u64(s, 6);
	w->start_mono_ns = col_u64(s, 7);
	w->bin_width_ns = col_u64(s, 8);
	col_str(s, 9, w->cgroup, sizeof(w->cgroup));
	return 0;
}

/*
 * Every row of a query (of one job when job_key is given) into a malloc'd
 * array of elements of `size` bytes, zeroed first; NULL when there is none.
 */
static int load_rows(struct ioacct_store *st, enum stmt_id id, const int64_t *job_key,
		     size_t size, row_fn fn, void **out, size_t *n, const char *what)
{
	sqlite3_stmt *s = NULL;
	char *rows = NULL, *tmp;
	size_t cap = 0, count = 0;
	int rc, err;

	err = store_stmt_get(st, id, &s);
	if (err)
		return err;
	if (job_key && bind_i64(s, 1, *job_key)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "read %s", what);
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (count == cap) {
			cap = cap ? 2 * cap : 16;
			tmp = reallocarray(rows, cap, size);
			if (!tmp) {
				err = store_error(st, -ENOMEM, "read %s: out of memory", what);
				goto out;
			}
			rows = tmp;
		}
		memset(rows + count * size, 0, size);
		err = fn(s, rows + count * size);
		if (err) {
			store_error(st, err, "read %s: row %zu is out of range, the database is damaged",
				    what, count + 1);
			goto out;
		}
		count++;
	}
	if (rc != SQLITE_DONE)
		err = store_sql_error(st, rc, "read %s", what);
out:
	stmt_done(s);
	if (err) {
		free(rows);
		return err;
	}
	*out = rows;
	*n = count;
	return 0;
}

int ioacct_store_watch_list(struct ioacct_store *st, struct ioacct_watch **out, size_t *n)
{
	void *rows;
	int err;

	err = load_rows(st, ST_WATCH_LIST, NULL, sizeof(**out), row_watch, &rows, n, "watches");
	if (!err)
		*out = rows;
	return err;
}

static int row_job(sqlite3_stmt *s, void *elem)
{
	store_read_job(s, elem);
	return 0;
}

int ioacct_store_jobs_running(struct ioacct_store *st, struct ioacct_job **out, size_t *n)
{
	void *rows;
	int err;

	err = load_rows(st, ST_JOBS_RUNNING, NULL, sizeof(**out), row_job, &rows, n,
			"running jobs");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_delete(struct ioacct_store *st, int64_t job_key)
{
	int err = store_run_key(st, ST_JOB_DELETE, job_key, "delete");

	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "delete job: no job with key %" PRId64, job_key);
	return err;
}

/*
 * The rows of a job below jd->job: its steps, mounts and totals, and its
 * series unless only the totals are wanted.
 */
static int load_children(struct ioacct_store *st, struct ioacct_jobdata *jd, bool series)
{
	const int64_t key = jd->job.key;
	bool running = strcmp(jd->job.state, "RUNNING") == 0;
	void *rows;
	int err;

	err = load_rows(st, ST_LOAD_STEPS, &key, sizeof(*jd->steps), row_step, &rows, &jd->nsteps,
			"steps");
	if (err)
		return err;
	jd->steps = rows;
	err = load_rows(st, ST_LOAD_MOUNTS, &key, sizeof(*jd->mounts), row_mount, &rows,
			&jd->nmounts, "mounts");
	if (err)
		return err;
	jd->mounts = rows;
	/* The totals table is written at finish; a running job's are summed now. */
	err = load_rows(st, running ? ST_LOAD_TOTALS_RUNNING : ST_LOAD_TOTALS, &key,
			sizeof(*jd->totals), row_sample, &rows, &jd->ntotals, "totals");
	if (err)
		return err;
	jd->totals = rows;
	/* Per-file records since schema 8 (a reader may open an older file as it is). */
	if (st->version >= 8) {
		err = load_rows(st, ST_LOAD_FILES, &key, sizeof(*jd->files), row_file, &rows,
				&jd->nfiles, "files");
		if (err)
			return err;
		jd->files = rows;
		jd->files_loaded = true;
	}
	/* MPI-IO records since schema 10. */
	if (st->version >= 10) {
		err = ioacct_store_job_mpiio_page(st, key, NULL, 0, &jd->mpiio, &jd->nmpiio);
		if (err)
			return err;
		jd->mpiio_loaded = true;
	}
	/* HDF5 records since schema 21 (issue 39). */
	if (st->version >= 21) {
		err = ioacct_store_job_h5_page(st, key, NULL, 0, &jd->h5, &jd->nh5);
		if (err)
			return err;
		jd->h5_loaded = true;
	}
	/* RPC rows since schema 23 (issue 40). */
	if (st->version >= 23) {
		err = ioacct_store_job_rpc_page(st, key, NULL, 0, &jd->rpc, &jd->nrpc);
		if (err)
			return err;
		jd->rpc_loaded = true;
	}
	if (!series)
		return 0;
	err = load_rows(st, ST_LOAD_SERIES, &key, sizeof(*jd->series), row_sample, &rows,
			&jd->nseries, "series");
	if (err)
		return err;
	jd->series = rows;
	return 0;
}

/* ioacct_store_job_load() and, without the series, ioacct_store_job_load_totals(). */
static int job_load(struct ioacct_store *st, int64_t job_key, bool series,
		    struct ioacct_jobdata **out)
{
	struct ioacct_jobdata *jd;
	bool outer;
	int err;

	jd = calloc(1, sizeof(*jd));
	if (!jd)
		return store_error(st, -ENOMEM, "load job %" PRId64 ": out of memory", job_key);
	/* One read transaction: the job as of one commit of the daemon. */
	err = store_unit_begin(st, false, &outer);
	if (err)
		goto out;
	err = ioacct_store_job_get(st, job_key, &jd->job);
	if (!err)
		err = load_children(st, jd, series);
	err = store_unit_end(st, outer, err);
out:
	if (err) {
		ioacct_jobdata_free(jd);
		return err;
	}
	*out = jd;
	return 0;
}

int ioacct_store_job_load(struct ioacct_store *st, int64_t job_key, struct ioacct_jobdata **out)
{
	return job_load(st, job_key, true, out);
}

int ioacct_store_job_load_totals(struct ioacct_store *st, int64_t job_key,
				 struct ioacct_jobdata **out)
{
	return job_load(st, job_key, false, out);
}

int ioacct_store_job_series(struct ioacct_store *st, int64_t job_key, struct ioacct_sample **out,
			    size_t *n)
{
	void *rows;
	int err;

	err = load_rows(st, ST_LOAD_SERIES, &job_key, sizeof(**out), row_sample, &rows, n, "series");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_series_page(struct ioacct_store *st, int64_t job_key,
				 const struct ioacct_sample *after, size_t limit,
				 struct ioacct_sample **out, size_t *n)
{
	sqlite3_stmt *s = NULL;
	void *rows;
	int err;

	/* load_rows binds ?1 on the same prepared statement and resets it. */
	err = store_stmt_get(st, ST_LOAD_SERIES_PAGE, &s);
	if (err)
		return err;
	if ((after && (bind_i64(s, 2, after->step_id) || bind_u64(s, 3, after->mnt_id) ||
		       bind_i64(s, 4, after->op) || bind_i64(s, 5, after->bin))) ||
	    bind_i64(s, 6, limit > INT64_MAX ? INT64_MAX : (int64_t)limit)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "read series");
		stmt_done(s);
		return err;
	}
	err = load_rows(st, ST_LOAD_SERIES_PAGE, &job_key, sizeof(**out), row_sample, &rows, n,
			"series");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_files_page(struct ioacct_store *st, int64_t job_key,
				const struct ioacct_file *after, size_t limit,
				struct ioacct_file **out, size_t *n)
{
	sqlite3_stmt *s = NULL;
	void *rows;
	int err;

	*out = NULL;
	*n = 0;
	if (st->version < 8)
		return store_error(st, -EOPNOTSUPP, "read files: store of schema %d has none",
				   st->version);
	/* load_rows binds ?1 on the same prepared statement and resets it. */
	err = store_stmt_get(st, ST_LOAD_FILES_PAGE, &s);
	if (err)
		return err;
	if ((after && (bind_i64(s, 2, after->step_id) || bind_i64(s, 3, after->rank) ||
		       bind_u64(s, 4, after->mnt_id) || bind_i64(s, 5, after->dev) ||
		       bind_i64(s, 6, (int64_t)after->ino) || bind_i64(s, 8, after->gen))) ||
	    bind_i64(s, 7, limit > INT64_MAX ? INT64_MAX : (int64_t)limit)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "read files");
		stmt_done(s);
		return err;
	}
	err = load_rows(st, ST_LOAD_FILES_PAGE, &job_key, sizeof(**out), row_file, &rows, n,
			"files");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_mpiio_page(struct ioacct_store *st, int64_t job_key,
				const struct ioacct_mpiio *after, size_t limit,
				struct ioacct_mpiio **out, size_t *n)
{
	sqlite3_stmt *s = NULL;
	void *rows;
	int err;

	*out = NULL;
	*n = 0;
	if (st->version < 10)
		return store_error(st, -EOPNOTSUPP, "read MPI-IO records: store of schema %d has none",
				   st->version);
	/* load_rows binds ?1 on the same prepared statement and resets it. */
	err = store_stmt_get(st, ST_LOAD_MPIIO_PAGE, &s);
	if (err)
		return err;
	if ((after && (bind_i64(s, 2, after->step_id) || bind_i64(s, 3, after->rank) ||
		       bind_i64(s, 4, after->pid) || BIND_BUF(s, 5, after->path))) ||
	    bind_i64(s, 6, !limit || limit > INT64_MAX ? -1 : (int64_t)limit)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "read MPI-IO records");
		stmt_done(s);
		return err;
	}
	err = load_rows(st, ST_LOAD_MPIIO_PAGE, &job_key, sizeof(**out), row_mpiio, &rows, n,
			"MPI-IO records");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_h5_page(struct ioacct_store *st, int64_t job_key,
			     const struct ioacct_h5rec *after, size_t limit, struct ioacct_h5rec **out,
			     size_t *n)
{
	sqlite3_stmt *s = NULL;
	void *rows;
	int err;

	*out = NULL;
	*n = 0;
	if (st->version < 21)
		return store_error(st, -EOPNOTSUPP, "read HDF5 records: store of schema %d has none",
				   st->version);
	/* load_rows binds ?1 on the same prepared statement and resets it. */
	err = store_stmt_get(st, ST_LOAD_H5, &s);
	if (err)
		return err;
	if ((after && (bind_i64(s, 2, after->step_id) || bind_i64(s, 3, after->rank) ||
		       bind_i64(s, 4, after->pid) || bind_i64(s, 5, after->kind) ||
		       BIND_BUF(s, 6, after->name))) ||
	    bind_i64(s, 7, !limit || limit > INT64_MAX ? -1 : (int64_t)limit)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "read HDF5 records");
		stmt_done(s);
		return err;
	}
	err = load_rows(st, ST_LOAD_H5, &job_key, sizeof(**out), row_h5, &rows, n, "HDF5 records");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_rpc_page(struct ioacct_store *st, int64_t job_key,
			      const struct ioacct_rpc *after, size_t limit, struct ioacct_rpc **out,
			      size_t *n)
{
	sqlite3_stmt *s = NULL;
	void *rows;
	int err, bound = 0, i = 2;

	*out = NULL;
	*n = 0;
	if (st->version < 23)
		return store_error(st, -EOPNOTSUPP, "read RPC rows: store of schema %d has none",
				   st->version);
	/* load_rows binds ?1 on the same prepared statement and resets it. */
	err = store_stmt_get(st, ST_LOAD_RPC, &s);
	if (err)
		return err;
	if (after) {
		const uint64_t k[] = { after->step_id, after->mnt_id, after->prog, after->vers,
				       after->proc,    after->flags,  after->bin };

		for (size_t j = 0; j < ARRAY_SIZE(k) && !bound; j++)
			bound = bind_u64(s, i++, k[j]);
	}
	if (bound || bind_i64(s, 9, !limit || limit > INT64_MAX ? -1 : (int64_t)limit)) {
		err = store_sql_error(st, sqlite3_errcode(st->db), "read RPC rows");
		stmt_done(s);
		return err;
	}
	err = load_rows(st, ST_LOAD_RPC, &job_key, sizeof(**out), row_rpc, &rows, n, "RPC rows");
	if (!err)
		*out = rows;
	return err;
}
