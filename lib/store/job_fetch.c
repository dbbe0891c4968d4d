/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One job from the daemon or from a store file, and the daemon's pages of
 * it (see job_fetch.h).
 */
#include "job_fetch.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query_fetch.h"
#include "util.h"

/* The one error helper (util.h), under this file's own name. */
#define job_err(...) ioacct_seterr(__VA_ARGS__)

/* "job 12" or "job 12 of cluster c", for messages. */
static void job_name(char *buf, size_t len, const char *cluster, uint64_t job_id, int64_t key)
{
	if (!job_id)
		snprintf(buf, len, "job with store key %" PRId64, key);
	else if (cluster && *cluster)
		snprintf(buf, len, "job %" PRIu64 " of cluster %s", job_id, cluster);
	else
		snprintf(buf, len, "job %" PRIu64, job_id);
}

/* The same with the run asked (run: restart count + 1, 0 = the last): "run 1 of job 7". */
static void run_name(char *buf, size_t len, const char *cluster, uint64_t job_id, int64_t key,
		     uint32_t run)
{
	char job[IOACCT_SHORT_MAX + 64];

	job_name(job, sizeof(job), cluster, job_id, key);
	if (run && job_id && !key)
		snprintf(buf, len, "run %u of %s", run - 1, job);
	else
		snprintf(buf, len, "%s", job);
}

/* ---- the daemon's side ---- */

#define serve_error(...) ioacct_reply_error(__VA_ARGS__)

/* The first page's part from jd: the job's steps, mounts and totals. Its encoded size in *bytes. */
static int fill_children(const struct ioacct_jobdata *jd, int64_t key, struct ioacct_reply *rep,
			 size_t *bytes, const char *how)
{
	*bytes = ioacct_proto_query_job_size(&jd->job, jd->nsteps, jd->mounts, jd->nmounts,
					     jd->ntotals, 0) +
		 jd->nnodes * ioacct_proto_node_row_size();
	if (*bytes > IOACCT_QUERY_PAGE_BYTES || jd->nsteps > IOACCT_PROTO_MAX_QROWS ||
	    jd->nmounts > IOACCT_PROTO_MAX_QROWS || jd->nnodes > IOACCT_PROTO_MAX_QROWS) {
		serve_error(rep, -EMSGSIZE,
			    "job %" PRIu64 " of cluster %s is too large for a reply of ioacctd (%zu steps, %zu mounts, %zu totals); %s",
			    jd->job.job_id, jd->job.cluster, jd->nsteps, jd->nmounts, jd->ntotals, how);
		return -EMSGSIZE;
	}
	rep->qsteps = calloc(jd->nsteps ? jd->nsteps : 1, sizeof(*rep->qsteps));
	rep->qmounts = calloc(jd->nmounts ? jd->nmounts : 1, sizeof(*rep->qmounts));
	rep->qtotals = calloc(jd->ntotals ? jd->ntotals : 1, sizeof(*rep->qtotals));
	rep->qnodes = calloc(jd->nnodes ? jd->nnodes : 1, sizeof(*rep->qnodes));
	if (!rep->qsteps || !rep->qmounts || !rep->qtotals || !rep->qnodes) {
		serve_error(rep, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < jd->nsteps; i++) {
		rep->qsteps[i].job_key = key;
		rep->qsteps[i].step = jd->steps[i];
		/* Not sent, and may be as long as the encoder allows strings to be. */
		rep->qsteps[i].step.cgroup[0] = '\0';
	}
	rep->nqsteps = jd->nsteps;
	for (size_t i = 0; i < jd->nmounts; i++) {
		rep->qmounts[i].job_key = key;
		rep->qmounts[i].mount = jd->mounts[i];
	}
	rep->nqmounts = jd->nmounts;
	for (size_t i = 0; i < jd->ntotals; i++) {
		rep->qtotals[i].job_key = key;
		rep->qtotals[i].s = jd->totals[i];
		rep->qtotals[i].s.bin = 0;
	}
	rep->nqtotals = jd->ntotals;
	for (size_t i = 0; i < jd->nnodes; i++) {
		rep->qnodes[i].job_key = key;
		rep->qnodes[i].p = jd->nodes[i];
	}
	rep->nqnodes = jd->nnodes;
	return 0;
}

/* The first page's part, from the store. */
static int serve_children(struct ioacct_store *st, const struct ioacct_job *job,
			  struct ioacct_reply *rep, size_t *bytes)
{
	struct ioacct_jobdata *jd = NULL;
	int ret;

	ret = ioacct_store_job_load_totals(st, job->key, &jd);
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return ret;
	}
	ret = fill_children(jd, job->key, rep, bytes, "root can read it with --db");
	ioacct_jobdata_free(jd);
	return ret;
}

/* a < b in the series' order. */
static bool sample_before(const struct ioacct_sample *a, const struct ioacct_sample *b)
{
	if (a->step_id != b->step_id)
		return a->step_id < b->step_id;
	if (a->mnt_id != b->mnt_id)
		return a->mnt_id < b->mnt_id;
	if (a->op != b->op)
		return a->op < b->op;
	return a->bin < b->bin;
}

/* The job itself, first in the reply; -1 (the reply says why) when out of memory. */
static int reply_job(struct ioacct_reply *rep, const struct ioacct_job *job)
{
	rep->jobs = calloc(1, sizeof(*rep->jobs));
	if (!rep->jobs) {
		serve_error(rep, -ENOMEM, "out of memory");
		return -1;
	}
	rep->jobs[0] = *job;
	rep->njobs = 1;
	rep->job_key = job->key;
	return 0;
}

/* The series rows a page has room for after `bytes` of other rows: at least one. */
static size_t series_limit(size_t bytes)
{
	size_t limit = (IOACCT_QUERY_PAGE_BYTES - bytes) / ioacct_proto_series_row_size();

	if (limit > IOACCT_JOB_PAGE_SERIES)
		limit = IOACCT_JOB_PAGE_SERIES;
	return limit ? limit : 1;
}

/*
 * Key order of the per-file records, the daemon's pages' (ST_LOAD_FILES_PAGE),
 * as SQLite's, with the node part last (a job of several nodes'; 0 else);
 * without it (`node` false), the key a peer older than the part knows.
 */
static int file_key_cmp_by(const struct ioacct_file *a, const struct ioacct_file *b, bool node)
{
	int64_t x[] = { a->step_id, a->rank, (int64_t)a->mnt_id, a->dev, (int64_t)a->ino, a->gen,
			node ? a->part : 0 };
	int64_t y[] = { b->step_id, b->rank, (int64_t)b->mnt_id, b->dev, (int64_t)b->ino, b->gen,
			node ? b->part : 0 };

	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static int file_key_cmp(const struct ioacct_file *a, const struct ioacct_file *b)
{
	return file_key_cmp_by(a, b, true);
}

/* The page cursor of a request for files: the last file the client has. */
static struct ioacct_file files_after(const struct ioacct_req_job *req)
{
	return (struct ioacct_file){
		.step_id = req->after_step, .rank = req->after_rank, .mnt_id = req->after_mnt,
		.dev = req->after_dev, .ino = req->after_ino, .gen = req->after_gen,
		.part = req->after_part,
	};
}

/* The file rows a page has room for beside its job row: at least one. */
static size_t files_limit(const struct ioacct_job *job)
{
	size_t bytes = ioacct_proto_query_job_size(job, 0, NULL, 0, 0, 0);
	size_t limit = (IOACCT_QUERY_PAGE_BYTES - bytes) / ioacct_proto_file_row_size();

	if (limit > IOACCT_JOB_PAGE_FILES)
		limit = IOACCT_JOB_PAGE_FILES;
	return limit ? limit : 1;
}

/* n records, in key order, as a page of at most limit: one more says there is more. */
static void reply_files(struct ioacct_reply *rep, int64_t key,
			const struct ioacct_file *const *files, size_t n, size_t limit)
{
	rep->more = n > limit;
	if (rep->more)
		n = limit;
	rep->qfiles = calloc(n ? n : 1, sizeof(*rep->qfiles));
	if (!rep->qfiles) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rep->qfiles[i].job_key = key;
		rep->qfiles[i].f = *files[i];
	}
	rep->nqfiles = n;
	rep->files_read = 1;
}

static int file_ptr_cmp(const void *a, const void *b)
{
	return file_key_cmp(*(const struct ioacct_file *const *)a,
			    *(const struct ioacct_file *const *)b);
}

/*
 * Where a page of n records in key order, at most limit, ends without
 * splitting a run of records of the same key but their node part: a job
 * loaded whole from the cluster store has one per node that counted the
 * same file (a shared file system's, by the same rank), and the next page's
 * cursor of a client older than the part is the key without it. Before the
 * run; after it when it fills the page (a run is as long as the nodes).
 */
static size_t files_cut(const struct ioacct_file *const *pick, size_t n, size_t limit)
{
	size_t r = limit;

	if (n <= limit || file_key_cmp_by(pick[limit - 1], pick[limit], false))
		return limit;
	while (r > 0 && !file_key_cmp_by(pick[r - 1], pick[r], false))
		r--;
	if (r > 0)
		return r;
	for (r = limit; r < n && !file_key_cmp_by(pick[r - 1], pick[r], false); r++)
		;
	return r;
}

/*
 * A page of the per-file records of a job loaded whole: those after the
 * cursor, in key order. None (files_read 0) when the job's were not read,
 * as a cluster store part written before schema 9.
 */
static void serve_files_jd(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
			   struct ioacct_reply *rep)
{
	struct ioacct_file after = files_after(req);
	const struct ioacct_file **pick;
	size_t n = 0;

	if (!jd->files_loaded)
		return;
	pick = calloc(jd->nfiles ? jd->nfiles : 1, sizeof(*pick));
	if (!pick) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < jd->nfiles; i++)
		if (!req->after || file_key_cmp(&after, &jd->files[i]) < 0)
			pick[n++] = &jd->files[i];
	qsort(pick, n, sizeof(*pick), file_ptr_cmp);
	reply_files(rep, jd->job.key, pick, n, files_cut(pick, n, files_limit(&jd->job)));
	free(pick);
}

/*
 * The same from the store: one index range of it, the records of store key
 * `key`, sent as those of `job` (its key: another store's, for a cluster
 * store's job that is this node's part alone).
 */
static void serve_files(struct ioacct_store *st, int64_t key, const struct ioacct_job *job,
			const struct ioacct_req_job *req, struct ioacct_reply *rep)
{
	struct ioacct_file after = files_after(req), *files = NULL;
	const struct ioacct_file **pick;
	size_t n = 0, limit = files_limit(job);
	int ret;

	ret = ioacct_store_job_files_page(st, key, req->after ? &after : NULL, limit + 1,
					  &files, &n);
	if (ret == -EOPNOTSUPP)
		return; /* a store older than them: files_read 0 */
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return;
	}
	pick = calloc(n ? n : 1, sizeof(*pick));
	if (!pick) {
		free(files);
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		pick[i] = &files[i];
	reply_files(rep, job->key, pick, n, limit);
	free(pick);
	free(files);
}

/* The rows of row_size bytes a page has room for beside its job row: at least one. */
static size_t rows_limit(const struct ioacct_job *job, size_t row_size)
{
	size_t bytes = ioacct_proto_query_job_size(job, 0, NULL, 0, 0, 0);
	size_t limit = (IOACCT_QUERY_PAGE_BYTES - bytes) / row_size;

	if (limit > IOACCT_JOB_PAGE_FILES)
		limit = IOACCT_JOB_PAGE_FILES;
	return limit ? limit : 1;
}

static size_t mpiio_limit(const struct ioacct_job *job)
{
	return rows_limit(job, ioacct_proto_mpiio_row_size());
}

/*
 * A page of the MPI-IO records of store key `key` after the request's
 * cursor, sent as those of `job`; none (mpiio_read 0) from a store older
 * than them.
 */
static void serve_mpiio(struct ioacct_store *st, int64_t key, const struct ioacct_job *job,
			const struct ioacct_req_job *req, struct ioacct_reply *rep)
{
	struct ioacct_mpiio after = {
		.step_id = req->after_step, .rank = req->after_rank, .pid = (uint32_t)req->after_pid,
		.part = req->after_part,
	};
	struct ioacct_mpiio *m = NULL;
	size_t n = 0, limit = mpiio_limit(job);
	int ret;

	ioacct_strlcpy(after.path, req->after_path, sizeof(after.path));
	ret = ioacct_store_job_mpiio_page(st, key, req->after ? &after : NULL, limit + 1, &m, &n);
	if (ret == -EOPNOTSUPP)
		return;
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return;
	}
	rep->more = n > limit;
	if (rep->more)
		n = limit;
	rep->qmpiio = calloc(n ? n : 1, sizeof(*rep->qmpiio));
	if (!rep->qmpiio) {
		free(m);
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rep->qmpiio[i].job_key = job->key;
		rep->qmpiio[i].m = m[i];
	}
	rep->nqmpiio = n;
	rep->mpiio_read = 1;
	free(m);
}

/*
 * The same from a job loaded whole (the cluster store's, schema 9): those
 * after the cursor, in key order; none (mpiio_read 0) when not read.
 */
static void serve_mpiio_jd(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
			   struct ioacct_reply *rep)
{
	struct ioacct_mpiio after = {
		.step_id = req->after_step, .rank = req->after_rank, .pid = (uint32_t)req->after_pid,
		.part = req->after_part,
	};
	size_t first = 0, n, limit = mpiio_limit(&jd->job);

	if (!jd->mpiio_loaded)
		return;
	ioacct_strlcpy(after.path, req->after_path, sizeof(after.path));
	/* jd->mpiio is in key order (ioacct_jobdata): the page starts after the cursor. */
	if (req->after)
		while (first < jd->nmpiio && ioacct_mpiio_key_cmp(&after, &jd->mpiio[first]) >= 0)
			first++;
	n = jd->nmpiio - first;
	rep->more = n > limit;
	if (rep->more)
		n = limit;
	rep->qmpiio = calloc(n ? n : 1, sizeof(*rep->qmpiio));
	if (!rep->qmpiio) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rep->qmpiio[i].job_key = jd->job.key;
		rep->qmpiio[i].m = jd->mpiio[first + i];
	}
	rep->nqmpiio = n;
	rep->mpiio_read = 1;
}

static size_t h5_limit(const struct ioacct_job *job)
{
	return rows_limit(job, ioacct_proto_h5_row_size());
}

/* Rows [0, n) of h as the reply's page of HDF5 records of job key; -ENOMEM said. */
static void reply_h5(struct ioacct_reply *rep, int64_t key, const struct ioacct_h5rec *h, size_t n)
{
	rep->qh5 = calloc(n ? n : 1, sizeof(*rep->qh5));
	if (!rep->qh5) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rep->qh5[i].job_key = key;
		rep->qh5[i].h = h[i];
	}
	rep->nqh5 = n;
	rep->hdf5_read = 1;
}

/* The request's cursor of HDF5 records. */
static void h5_after(const struct ioacct_req_job *req, struct ioacct_h5rec *after)
{
	memset(after, 0, sizeof(*after));
	after->step_id = req->after_step;
	after->rank = req->after_rank;
	after->pid = (uint32_t)req->after_pid;
	after->kind = req->after_kind;
	after->part = req->after_part;
	ioacct_strlcpy(after->name, req->after_path, sizeof(after->name));
}

/*
 * A page of the HDF5 records (issue 39) of store key `key` after the
 * request's cursor, sent as those of `job`; none (hdf5_read 0) from a
 * store older than them.
 */
static void serve_h5(struct ioacct_store *st, int64_t key, const struct ioacct_job *job,
		     const struct ioacct_req_job *req, struct ioacct_reply *rep)
{
	struct ioacct_h5rec *after = malloc(sizeof(*after)), *h = NULL;
	size_t n = 0, limit = h5_limit(job);
	int ret = after ? 0 : -ENOMEM;

	if (after) {
		h5_after(req, after);
		ret = ioacct_store_job_h5_page(st, key, req->after ? after : NULL, limit + 1, &h, &n);
	}
	free(after);
	if (ret == -EOPNOTSUPP)
		return;
	if (ret) {
		serve_error(rep, ret, "job: %s", ret == -ENOMEM ? "out of memory" :
			    ioacct_store_errmsg(st));
		return;
	}
	rep->more = n > limit;
	reply_h5(rep, job->key, h, rep->more ? limit : n);
	free(h);
}

/* The same from a job loaded whole: those after the cursor, in key order; none when not read. */
static void serve_h5_jd(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
			struct ioacct_reply *rep)
{
	struct ioacct_h5rec *after;
	size_t first = 0, n, limit = h5_limit(&jd->job);

	if (!jd->h5_loaded)
		return;
	after = malloc(sizeof(*after));
	if (!after) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	h5_after(req, after);
	if (req->after)
		while (first < jd->nh5 && ioacct_h5rec_key_cmp(after, &jd->h5[first]) >= 0)
			first++;
	free(after);
	n = jd->nh5 - first;
	rep->more = n > limit;
	reply_h5(rep, jd->job.key, jd->h5 + first, rep->more ? limit : n);
}

/* Rows [0, n) of r as the reply's page of RPC rows of job key; -ENOMEM said. */
static void reply_rpc(struct ioacct_reply *rep, int64_t key, const struct ioacct_rpc *r, size_t n)
{
	rep->qrpc = calloc(n ? n : 1, sizeof(*rep->qrpc));
	if (!rep->qrpc) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rep->qrpc[i].job_key = key;
		rep->qrpc[i].r = r[i];
	}
	rep->nqrpc = n;
	rep->rpc_read = 1;
}

/* The request's cursor of RPC rows. */
static struct ioacct_rpc rpc_after(const struct ioacct_req_job *req)
{
	return (struct ioacct_rpc){
		.step_id = req->after_step, .mnt_id = req->after_mnt, .prog = req->after_prog,
		.vers = req->after_vers, .proc = req->after_proc, .flags = req->after_flags,
		.bin = req->after_bin,
	};
}

/*
 * A page of the RPC rows (issue 40) of store key `key` after the request's
 * cursor, sent as those of `job`; none (rpc_read 0) from a store older
 * than them.
 */
static void serve_rpc(struct ioacct_store *st, int64_t key, const struct ioacct_job *job,
		      const struct ioacct_req_job *req, struct ioacct_reply *rep)
{
	struct ioacct_rpc after = rpc_after(req), *r = NULL;
	size_t n = 0, limit = rows_limit(job, ioacct_proto_rpc_row_size());
	int ret;

	ret = ioacct_store_job_rpc_page(st, key, req->after ? &after : NULL, limit + 1, &r, &n);
	if (ret == -EOPNOTSUPP)
		return;
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return;
	}
	rep->more = n > limit;
	reply_rpc(rep, job->key, r, rep->more ? limit : n);
	free(r);
}

/* The same from a job loaded whole: those after the cursor, in key order; none when not read. */
static void serve_rpc_jd(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
			 struct ioacct_reply *rep)
{
	struct ioacct_rpc after = rpc_after(req);
	size_t first = 0, n, limit = rows_limit(&jd->job, ioacct_proto_rpc_row_size());

	if (!jd->rpc_loaded)
		return;
	if (req->after)
		while (first < jd->nrpc && ioacct_rpc_key_cmp(&after, &jd->rpc[first]) >= 0)
			first++;
	n = jd->nrpc - first;
	rep->more = n > limit;
	reply_rpc(rep, jd->job.key, jd->rpc + first, rep->more ? limit : n);
}

void ioacct_job_serve_files_own(struct ioacct_store *st, const struct ioacct_jobdata *jd,
				const struct ioacct_req_job *req, struct ioacct_reply *rep)
{
	struct ioacct_job own;
	int ret;

	if (reply_job(rep, &jd->job))
		return;
	/* The same run, not another use of the same id: this node's part, by its start. */
	ret = ioacct_store_job_find_exact(st, jd->job.cluster, jd->job.job_id, jd->job.restart,
					  jd->job.start_ns, &own);
	if (ret == -ENOENT)
		return; /* purged here since: not read */
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return;
	}
	if (req->rpc)
		serve_rpc(st, own.key, &jd->job, req, rep);
	else if (req->hdf5)
		serve_h5(st, own.key, &jd->job, req, rep);
	else if (req->mpiio)
		serve_mpiio(st, own.key, &jd->job, req, rep);
	else
		serve_files(st, own.key, &jd->job, req, rep);
}

void ioacct_job_serve_page_jd(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
			      struct ioacct_reply *rep)
{
	struct ioacct_sample after = {
		.step_id = req->after_step, .mnt_id = req->after_mnt,
		.op = req->after_op, .bin = req->after_bin,
	};
	size_t bytes = 0, first = 0, limit, n;

	if (reply_job(rep, &jd->job))
		return;
	if (req->rpc) {
		serve_rpc_jd(jd, req, rep);
		return;
	}
	if (req->hdf5) {
		serve_h5_jd(jd, req, rep);
		return;
	}
	if (req->mpiio) {
		serve_mpiio_jd(jd, req, rep);
		return;
	}
	if (req->files) {
		serve_files_jd(jd, req, rep);
		return;
	}
	if (!req->after && fill_children(jd, jd->job.key, rep, &bytes,
					 "ioacct lists it, root reads each node's store with --db"))
		return;
	limit = series_limit(bytes);
	/* The series is in order: the page starts after the cursor. */
	if (req->after)
		while (first < jd->nseries && !sample_before(&after, &jd->series[first]))
			first++;
	n = jd->nseries - first;
	rep->more = n > limit;
	if (rep->more)
		n = limit;
	rep->qseries = calloc(n ? n : 1, sizeof(*rep->qseries));
	if (!rep->qseries) {
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rep->qseries[i].job_key = jd->job.key;
		rep->qseries[i].s = jd->series[first + i];
	}
	rep->nqseries = n;
}

void ioacct_job_serve_page(struct ioacct_store *st, const struct ioacct_req_job *req,
			   uint32_t peer_uid, bool private_data, struct ioacct_reply *rep)
{
	struct ioacct_sample after = {
		.step_id = req->after_step, .mnt_id = req->after_mnt,
		.op = req->after_op, .bin = req->after_bin,
	};
	struct ioacct_sample *series = NULL;
	size_t bytes = 0, nseries = 0, limit;
	struct ioacct_job job;
	char name[IOACCT_SHORT_MAX + 96];
	int ret;

	run_name(name, sizeof(name), req->cluster, req->job_id, req->job_key, req->run);
	if (!req->job_key && !req->job_id) {
		serve_error(rep, -EINVAL, "job: neither a job id nor a store key given");
		return;
	}
	if (req->job_key)
		ret = ioacct_store_job_get(st, req->job_key, &job);
	else if (req->run_start && req->cluster[0])
		ret = ioacct_store_job_find_exact(st, req->cluster, req->job_id, req->restart,
						  req->run_start, &job);
	else
		ret = ioacct_store_job_find_run(st, req->cluster[0] ? req->cluster : NULL,
						req->job_id, (int64_t)req->run - 1, &job);
	if (ret == -ENOENT) {
		serve_error(rep, ret, "no %s in ioacctd's store", name);
		return;
	}
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return;
	}
	/* As sacct with PrivateData=jobs: the file is root's, and the daemon answers for it. */
	if (private_data && peer_uid != 0 && job.uid != peer_uid) {
		job_name(name, sizeof(name), NULL, job.job_id, job.key);
		serve_error(rep, -EPERM, "%s belongs to another user (private_data = yes)", name);
		return;
	}
	if (reply_job(rep, &job))
		return;
	if (req->rpc) {
		serve_rpc(st, job.key, &job, req, rep);
		return;
	}
	if (req->hdf5) {
		serve_h5(st, job.key, &job, req, rep);
		return;
	}
	if (req->mpiio) {
		serve_mpiio(st, job.key, &job, req, rep);
		return;
	}
	if (req->files) {
		serve_files(st, job.key, &job, req, rep);
		return;
	}
	if (!req->after && serve_children(st, &job, rep, &bytes))
		return;

	/* The rest of the page's bytes for the series; one more row says whether there is more. */
	limit = series_limit(bytes);
	ret = ioacct_store_job_series_page(st, job.key, req->after ? &after : NULL, limit + 1,
					   &series, &nseries);
	if (ret) {
		serve_error(rep, ret, "job: %s", ioacct_store_errmsg(st));
		return;
	}
	rep->more = nseries > limit;
	if (rep->more)
		nseries = limit;
	rep->qseries = calloc(nseries ? nseries : 1, sizeof(*rep->qseries));
	if (!rep->qseries) {
		free(series);
		serve_error(rep, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < nseries; i++) {
		rep->qseries[i].job_key = job.key;
		rep->qseries[i].s = series[i];
	}
	rep->nqseries = nseries;
	free(series);
}

/* ---- through the daemon ---- */

void ioacct_source_unreachable(const char *socket_path, int ret, const char *why, char *err,
			       size_t errlen)
{
	/* A connect() failure is the daemon not being there; say that, and the way around it. */
	if (ret == -ENOENT || ret == -ECONNREFUSED || ret == -ENOTSOCK || ret == -EACCES ||
	    ret == -ENAMETOOLONG)
		job_err(err, errlen, ret,
			"cannot reach ioacctd at %s: %s (is it running? or use --db FILE as root)",
			socket_path, strerror(-ret));
	else
		job_err(err, errlen, ret, "cannot reach ioacctd at %s: %s", socket_path, why);
}

/* Whether the daemon is a peer to trust with indexes: every op within range. */
static bool rows_sane(const struct ioacct_qtotal_row *rows, size_t n, int64_t key)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].job_key != key || rows[i].s.op >= IOACCT_OP_COUNT)
			return false;
	return true;
}

/* The first page: the job, its steps, mounts and totals. */
static int take_first(const struct ioacct_reply *rep, struct ioacct_jobdata *jd)
{
	const int64_t key = rep->jobs[0].key;

	jd->job = rep->jobs[0];
	jd->job.has_array = jd->job.array_job_id != 0;
	if (!rows_sane(rep->qtotals, rep->nqtotals, key))
		return -EPROTO;
	for (size_t i = 0; i < rep->nqsteps; i++)
		if (rep->qsteps[i].job_key != key)
			return -EPROTO;
	for (size_t i = 0; i < rep->nqmounts; i++)
		if (rep->qmounts[i].job_key != key)
			return -EPROTO;
	for (size_t i = 0; i < rep->nqnodes; i++)
		if (rep->qnodes[i].job_key != key)
			return -EPROTO;
	if (rep->nqnodes) {
		jd->nodes = calloc(rep->nqnodes, sizeof(*jd->nodes));
		if (!jd->nodes)
			return -ENOMEM;
		for (size_t i = 0; i < rep->nqnodes; i++)
			jd->nodes[i] = rep->qnodes[i].p;
		jd->nnodes = rep->nqnodes;
	}
	jd->steps = calloc(rep->nqsteps ? rep->nqsteps : 1, sizeof(*jd->steps));
	jd->mounts = calloc(rep->nqmounts ? rep->nqmounts : 1, sizeof(*jd->mounts));
	jd->totals = calloc(rep->nqtotals ? rep->nqtotals : 1, sizeof(*jd->totals));
	if (!jd->steps || !jd->mounts || !jd->totals)
		return -ENOMEM;
	for (size_t i = 0; i < rep->nqsteps; i++)
		jd->steps[i] = rep->qsteps[i].step;
	jd->nsteps = rep->nqsteps;
	for (size_t i = 0; i < rep->nqmounts; i++)
		jd->mounts[i] = rep->qmounts[i].mount;
	jd->nmounts = rep->nqmounts;
	for (size_t i = 0; i < rep->nqtotals; i++)
		jd->totals[i] = rep->qtotals[i].s;
	jd->ntotals = rep->nqtotals;
	return 0;
}

/* Appends a page of series, each row after the one before: a page never goes back. */
static int take_series(const struct ioacct_reply *rep, struct ioacct_jobdata *jd, size_t *cap)
{
	struct ioacct_sample *p;
	size_t ncap = *cap ? *cap : 64;

	if (!rows_sane(rep->qseries, rep->nqseries, jd->job.key))
		return -EPROTO;
	if (jd->nseries + rep->nqseries > *cap) {
		while (ncap < jd->nseries + rep->nqseries)
			ncap *= 2;
		p = reallocarray(jd->series, ncap, sizeof(*p));
		if (!p)
			return -ENOMEM;
		jd->series = p;
		*cap = ncap;
	}
	for (size_t i = 0; i < rep->nqseries; i++) {
		if (jd->nseries && !sample_before(&jd->series[jd->nseries - 1], &rep->qseries[i].s))
			return -EPROTO;
		jd->series[jd->nseries++] = rep->qseries[i].s;
	}
	return 0;
}

/* The store's order of the files (ST_LOAD_FILES): bytes moved, largest first, then the key. */
static int file_store_cmp(const void *pa, const void *pb)
{
	const struct ioacct_file *a = pa, *b = pb;
	int64_t x = (int64_t)(a->bytes_read + a->bytes_written);
	int64_t y = (int64_t)(b->bytes_read + b->bytes_written);

	if (x != y)
		return x > y ? -1 : 1;
	return file_key_cmp(a, b);
}

/* A record's node part names one of the job's nodes (none: a job of one node, part 0). */
static bool part_known(const struct ioacct_jobdata *jd, uint32_t part)
{
	return part < (jd->nnodes ? jd->nnodes : 1);
}

/*
 * Whether a page of n rows of one kind may be taken (`read`: the daemon
 * read them), and room for them after the `have` rows of *rows (*cap
 * elements of `size` bytes): 1 when the daemon did not read them (only a
 * first page without rows may say so); -EPROTO for a page that says there
 * is more but brings none (a confused daemon would keep us asking).
 */
static int page_room(const struct ioacct_reply *rep, uint32_t read, size_t n, bool first,
		     void **rows, size_t have, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (!read)
		return first && !n ? 1 : -EPROTO;
	if (rep->more && !n)
		return -EPROTO;
	if (have + n <= *cap)
		return 0;
	while (ncap < have + n)
		ncap *= 2;
	p = reallocarray(*rows, ncap, size);
	if (!p)
		return -ENOMEM;
	*rows = p;
	*cap = ncap;
	return 0;
}

/*
 * Appends a page of file records, each after the one before, or of the
 * same key within a page (the nodes' records of one file from a daemon
 * older than their node part, files_cut()); 1 when the reply has none
 * because the daemon did not read them (it predates them, or its store
 * keeps none).
 */
static int take_files(const struct ioacct_reply *rep, struct ioacct_jobdata *jd, size_t *cap,
		      bool first)
{
	void *rows = jd->files;
	int ret = page_room(rep, rep->files_read, rep->nqfiles, first, &rows, jd->nfiles, cap,
			    sizeof(*jd->files));

	jd->files = rows;
	if (ret)
		return ret;
	for (size_t i = 0; i < rep->nqfiles; i++) {
		const struct ioacct_file *f = &rep->qfiles[i].f;
		int order = jd->nfiles ? file_key_cmp(&jd->files[jd->nfiles - 1], f) : -1;

		/* A page moves on: its first record is after the last one of the page before. */
		if (rep->qfiles[i].job_key != jd->job.key || !part_known(jd, f->part) || order > 0 ||
		    (order == 0 && i == 0))
			return -EPROTO;
		jd->files[jd->nfiles++] = *f;
	}
	return 0;
}

/*
 * A later page's request is for the run the first page gave, exactly: its
 * key and its name (cluster, job id, restart, run_start), so that a run of
 * the same id stored meanwhile is never taken for it (issue 36).
 */
static void same_run(struct ioacct_req_job *r, const struct ioacct_jobdata *jd)
{
	r->job_key = jd->job.key;
	r->restart = jd->job.restart;
	r->run_start = jd->job.run_start;
	ioacct_strlcpy(r->cluster, jd->job.cluster, sizeof(r->cluster));
}

/*
 * A later page's request of one kind of rows: the run of the first page,
 * no kind and no cursor yet (the kind's next() sets its own).
 */
static void page_req(struct ioacct_req_job *r, const struct ioacct_jobdata *jd)
{
	same_run(r, jd);
	r->files = r->mpiio = r->hdf5 = r->rpc = 0;
	r->after = 0;
	r->after_step = r->after_op = r->after_bin = r->after_dev = r->after_gen = 0;
	r->after_kind = r->after_part = r->after_prog = r->after_vers = r->after_proc = 0;
	r->after_flags = 0;
	r->after_rank = r->after_pid = 0;
	r->after_mnt = r->after_ino = 0;
	memset(r->after_path, 0, sizeof(r->after_path));
}

/* The request for the page of files after the last one received (none: the first). */
static void files_next(struct ioacct_req_job *r, const struct ioacct_jobdata *jd)
{
	const struct ioacct_file *last = jd->nfiles ? &jd->files[jd->nfiles - 1] : NULL;

	page_req(r, jd);
	r->files = 1;
	if (!last)
		return;
	r->after = 1;
	r->after_step = last->step_id;
	r->after_rank = last->rank;
	r->after_mnt = last->mnt_id;
	r->after_dev = last->dev;
	r->after_ino = last->ino;
	r->after_gen = last->gen;
	r->after_part = last->part;
}

/*
 * A kind of rows a job's pages carry after its series: the request for the
 * page after the rows received, and the function that checks and appends
 * a page's rows (1: the daemon did not read them; a page that says there
 * is more must bring rows, or a confused daemon would keep us asking).
 */
struct page_kind {
	void (*next)(struct ioacct_req_job *r, const struct ioacct_jobdata *jd);
	int (*take)(const struct ioacct_reply *rep, struct ioacct_jobdata *jd, size_t *cap,
		    bool first);
	const char *bad;                  /* what a bad reply is, for the message */
};

/* Every page of one kind; 1 when the daemon did not read them (not read, not none). */
static int fetch_pages(const struct ioacct_caller *c, struct ioacct_request *req,
		       struct ioacct_jobdata *jd, const struct page_kind *k, char *err,
		       size_t errlen)
{
	struct ioacct_reply rep;
	size_t cap = 0;
	bool first = true;
	uint32_t more;
	int ret;

	do {
		k->next(&req->u.job, jd);
		ret = c->call(c->ctx, req, &rep, err, errlen);
		if (ret)
			return ret;
		if (rep.status) {
			ret = job_err(err, errlen, rep.status, "%s", rep.error);
			ioacct_reply_free(&rep);
			return ret;
		}
		ret = rep.njobs != 1 || rep.jobs[0].key != jd->job.key ? -EPROTO : 0;
		if (!ret)
			ret = k->take(&rep, jd, &cap, first);
		more = rep.more;
		ioacct_reply_free(&rep);
		if (ret == 1)
			return 1;
		if (ret)
			return job_err(err, errlen, ret, "bad reply from %s: %s", c->name,
				       ret == -EPROTO ? k->bad : strerror(-ret));
		first = false;
	} while (more);
	return 0;
}

/*
 * The job's per-file records, page by page after its series, in the store's
 * order at the end. A daemon without them leaves jd->files_loaded false:
 * not read, which the reports tell from none.
 */
static int fetch_files(const struct ioacct_caller *c, struct ioacct_request *req,
		       struct ioacct_jobdata *jd, char *err, size_t errlen)
{
	static const struct page_kind files = {
		files_next, take_files, "file records of another job, out of order or not read",
	};
	int ret = fetch_pages(c, req, jd, &files, err, errlen);

	if (ret)
		return ret == 1 ? 0 : ret;
	/* qsort's base may not be NULL, even for no element (a job without records). */
	if (jd->nfiles)
		qsort(jd->files, jd->nfiles, sizeof(*jd->files), file_store_cmp);
	jd->files_loaded = true;
	return 0;
}

/*
 * Appends a page of MPI-IO records, each after the one before; 1 when the
 * daemon did not read them (it predates them, or its store keeps none).
 */
static int take_mpiio(const struct ioacct_reply *rep, struct ioacct_jobdata *jd, size_t *cap,
		      bool first)
{
	void *rows = jd->mpiio;
	int ret = page_room(rep, rep->mpiio_read, rep->nqmpiio, first, &rows, jd->nmpiio, cap,
			    sizeof(*jd->mpiio));

	jd->mpiio = rows;
	if (ret)
		return ret;
	for (size_t i = 0; i < rep->nqmpiio; i++) {
		const struct ioacct_mpiio *m = &rep->qmpiio[i].m;

		if (rep->qmpiio[i].job_key != jd->job.key || !part_known(jd, m->part) ||
		    (jd->nmpiio && ioacct_mpiio_key_cmp(&jd->mpiio[jd->nmpiio - 1], m) >= 0))
			return -EPROTO;
		jd->mpiio[jd->nmpiio++] = *m;
	}
	return 0;
}

/* The request for the page of MPI-IO records after the last one received. */
static void mpiio_next(struct ioacct_req_job *r, const struct ioacct_jobdata *jd)
{
	const struct ioacct_mpiio *last = jd->nmpiio ? &jd->mpiio[jd->nmpiio - 1] : NULL;

	page_req(r, jd);
	r->mpiio = 1;
	if (!last)
		return;
	r->after = 1;
	r->after_step = last->step_id;
	r->after_rank = last->rank;
	r->after_pid = (int32_t)last->pid;
	r->after_part = last->part;
	ioacct_strlcpy(r->after_path, last->path, sizeof(r->after_path));
}

/*
 * The job's MPI-IO records, page by page after its files. A daemon without
 * them leaves jd->mpiio_loaded false: not read, which reports tell from none.
 */
static int fetch_mpiio(const struct ioacct_caller *c, struct ioacct_request *req,
		       struct ioacct_jobdata *jd, char *err, size_t errlen)
{
	static const struct page_kind mpiio = {
		mpiio_next, take_mpiio, "MPI-IO records of another job, out of order or not read",
	};
	int ret = fetch_pages(c, req, jd, &mpiio, err, errlen);

	if (ret)
		return ret == 1 ? 0 : ret;
	jd->mpiio_loaded = true;
	return 0;
}

/*
 * Appends a page of HDF5 records, each after the one before; 1 when the
 * daemon did not read them (it predates them, or its store keeps none).
 */
static int take_h5(const struct ioacct_reply *rep, struct ioacct_jobdata *jd, size_t *cap,
		   bool first)
{
	void *rows = jd->h5;
	int ret = page_room(rep, rep->hdf5_read, rep->nqh5, first, &rows, jd->nh5, cap,
			    sizeof(*jd->h5));

	jd->h5 = rows;
	if (ret)
		return ret;
	for (size_t i = 0; i < rep->nqh5; i++) {
		const struct ioacct_h5rec *h = &rep->qh5[i].h;

		if (rep->qh5[i].job_key != jd->job.key || h->kind > IOACCT_H5REC_DATASET ||
		    !part_known(jd, h->part) ||
		    (jd->nh5 && ioacct_h5rec_key_cmp(&jd->h5[jd->nh5 - 1], h) >= 0))
			return -EPROTO;
		jd->h5[jd->nh5++] = *h;
	}
	return 0;
}

/* The request for the page of HDF5 records after the last one received. */
static void h5_next(struct ioacct_req_job *r, const struct ioacct_jobdata *jd)
{
	const struct ioacct_h5rec *last = jd->nh5 ? &jd->h5[jd->nh5 - 1] : NULL;

	page_req(r, jd);
	r->hdf5 = 1;
	if (!last)
		return;
	r->after = 1;
	r->after_step = last->step_id;
	r->after_rank = last->rank;
	r->after_pid = (int32_t)last->pid;
	r->after_kind = last->kind;
	r->after_part = last->part;
	ioacct_strlcpy(r->after_path, last->name, sizeof(r->after_path));
}

/* The job's HDF5 records, page by page after its MPI-IO records; not read: h5_loaded false. */
static int fetch_h5(const struct ioacct_caller *c, struct ioacct_request *req,
		    struct ioacct_jobdata *jd, char *err, size_t errlen)
{
	static const struct page_kind h5 = {
		h5_next, take_h5, "HDF5 records of another job, out of order or not read",
	};
	int ret = fetch_pages(c, req, jd, &h5, err, errlen);

	if (ret)
		return ret == 1 ? 0 : ret;
	jd->h5_loaded = true;
	return 0;
}

/*
 * Appends a page of RPC rows, each after the one before; 1 when the daemon
 * did not read them (it predates them, or its store keeps none).
 */
static int take_rpc(const struct ioacct_reply *rep, struct ioacct_jobdata *jd, size_t *cap,
		    bool first)
{
	void *rows = jd->rpc;
	int ret = page_room(rep, rep->rpc_read, rep->nqrpc, first, &rows, jd->nrpc, cap,
			    sizeof(*jd->rpc));

	jd->rpc = rows;
	if (ret)
		return ret;
	for (size_t i = 0; i < rep->nqrpc; i++) {
		const struct ioacct_rpc *r = &rep->qrpc[i].r;

		if (rep->qrpc[i].job_key != jd->job.key ||
		    (jd->nrpc && ioacct_rpc_key_cmp(&jd->rpc[jd->nrpc - 1], r) >= 0))
			return -EPROTO;
		jd->rpc[jd->nrpc++] = *r;
	}
	return 0;
}

/* The request for the page of RPC rows after the last one received. */
static void rpc_next(struct ioacct_req_job *r, const struct ioacct_jobdata *jd)
{
	const struct ioacct_rpc *last = jd->nrpc ? &jd->rpc[jd->nrpc - 1] : NULL;

	page_req(r, jd);
	r->rpc = 1;
	if (!last)
		return;
	r->after = 1;
	r->after_step = last->step_id;
	r->after_mnt = last->mnt_id;
	r->after_prog = last->prog;
	r->after_vers = last->vers;
	r->after_proc = last->proc;
	r->after_flags = last->flags;
	r->after_bin = last->bin;
}

/* The job's RPC rows (issue 40), page by page after its HDF5 records; not read: rpc_loaded false. */
static int fetch_rpc(const struct ioacct_caller *c, struct ioacct_request *req,
		     struct ioacct_jobdata *jd, char *err, size_t errlen)
{
	static const struct page_kind rpc = {
		rpc_next, take_rpc, "RPC rows of another job, out of order or not read",
	};
	int ret = fetch_pages(c, req, jd, &rpc, err, errlen);

	if (ret)
		return ret == 1 ? 0 : ret;
	jd->rpc_loaded = true;
	return 0;
}

/* How long a client waits for the daemon to read a job from the cluster store. */
#define LOAD_WAIT_MS 120000

/* The pages of the job the first request req names. */
static int fetch_req(const struct ioacct_caller *c, struct ioacct_request *req,
		     struct ioacct_jobdata **out, char *err, size_t errlen)
{
	struct ioacct_req_job *r = &req->u.job;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_reply rep;
	size_t cap = 0;
	bool first = true;
	unsigned int delay_ms = 10, waited_ms = 0;
	int ret;

	jd = calloc(1, sizeof(*jd));
	if (!jd)
		return job_err(err, errlen, -ENOMEM, "out of memory");
	for (;;) {
		ret = c->call(c->ctx, req, &rep, err, errlen);
		if (ret)
			goto out;
		/* A big job from the cluster store: the daemon reads it meanwhile. */
		if (rep.status == -EINPROGRESS && waited_ms < LOAD_WAIT_MS) {
			ioacct_reply_free(&rep);
			usleep(delay_ms * 1000);
			waited_ms += delay_ms;
			delay_ms = delay_ms * 2 > 250 ? 250 : delay_ms * 2;
			continue;
		}
		if (rep.status) {
			ret = job_err(err, errlen, rep.status, "%s", rep.error);
			ioacct_reply_free(&rep);
			goto out;
		}
		ret = rep.njobs != 1 || (!first && rep.jobs[0].key != jd->job.key) ? -EPROTO : 0;
		if (!ret && first)
			ret = take_first(&rep, jd);
		if (!ret)
			ret = take_series(&rep, jd, &cap);
		/* Each page must move on, or a confused daemon would keep us here. */
		if (!ret && rep.more && !rep.nqseries)
			ret = -EPROTO;
		if (ret) {
			job_err(err, errlen, ret, "bad reply from %s: %s", c->name,
				ret == -EPROTO ? "rows of another job, out of order or out of range" :
						 strerror(-ret));
			ioacct_reply_free(&rep);
			goto out;
		}
		first = false;
		if (!rep.more) {
			ioacct_reply_free(&rep);
			break;
		}
		/* The next page: this job exactly, after the last row received. */
		same_run(r, jd);
		r->after = 1;
		r->after_step = jd->series[jd->nseries - 1].step_id;
		r->after_mnt = jd->series[jd->nseries - 1].mnt_id;
		r->after_op = jd->series[jd->nseries - 1].op;
		r->after_bin = jd->series[jd->nseries - 1].bin;
		ioacct_reply_free(&rep);
	}
	ret = fetch_files(c, req, jd, err, errlen);
	if (!ret)
		ret = fetch_mpiio(c, req, jd, err, errlen);
	if (!ret)
		ret = fetch_h5(c, req, jd, err, errlen);
	if (!ret)
		ret = fetch_rpc(c, req, jd, err, errlen);
out:
	if (ret) {
		ioacct_jobdata_free(jd);
		return ret;
	}
	*out = jd;
	return 0;
}

int ioacct_job_fetch_via(const struct ioacct_caller *c, const char *cluster, uint64_t job_id,
			 int64_t job_key, uint32_t run, bool local, struct ioacct_jobdata **out,
			 char *err, size_t errlen)
{
	struct ioacct_request req = { .type = IOACCT_MSG_JOB };

	req.u.job.job_id = job_id;
	req.u.job.job_key = job_key;
	req.u.job.local = local;
	req.u.job.run = run;
	if (cluster && ioacct_strlcpy(req.u.job.cluster, cluster, sizeof(req.u.job.cluster)))
		return job_err(err, errlen, -ENAMETOOLONG, "cluster name too long: %s", cluster);
	return fetch_req(c, &req, out, err, errlen);
}

int ioacct_job_fetch_run_via(const struct ioacct_caller *c, const char *cluster, uint64_t job_id,
			     uint32_t restart, int64_t run_start, struct ioacct_jobdata **out,
			     char *err, size_t errlen)
{
	struct ioacct_request req = { .type = IOACCT_MSG_JOB };

	req.u.job.job_id = job_id;
	req.u.job.restart = restart;
	req.u.job.run_start = run_start;
	if (ioacct_strlcpy(req.u.job.cluster, cluster ? cluster : "", sizeof(req.u.job.cluster)))
		return job_err(err, errlen, -ENAMETOOLONG, "cluster name too long: %s", cluster);
	return fetch_req(c, &req, out, err, errlen);
}

/* ioacctd's socket as a caller: a call that fails says how to do without the daemon. */
struct socket_caller {
	struct ioacct_caller c;
	const char *path;
	int timeout_ms;
	char name[PATH_MAX + 16];
};

static int socket_call(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep,
		       char *err, size_t errlen)
{
	const struct socket_caller *s = ctx;
	char why[1024];
	int ret = ioacct_client_call(s->path, req, rep, s->timeout_ms, why, sizeof(why));

	if (ret)
		ioacct_source_unreachable(s->path, ret, why, err, errlen);
	return ret;
}

static void socket_caller(struct socket_caller *s, const char *path, int timeout_ms)
{
	s->path = path;
	s->timeout_ms = timeout_ms;
	snprintf(s->name, sizeof(s->name), "ioacctd on %s", path);
	s->c = (struct ioacct_caller){ .call = socket_call, .ctx = s, .name = s->name };
}

int ioacct_job_fetch_daemon(const char *socket_path, const char *cluster, uint64_t job_id,
			    int64_t job_key, int timeout_ms, struct ioacct_jobdata **out, char *err,
			    size_t errlen)
{
	struct socket_caller s;

	socket_caller(&s, socket_path, timeout_ms);
	return ioacct_job_fetch_via(&s.c, cluster, job_id, job_key, 0, false, out, err, errlen);
}

/* ---- a store file ---- */

static int load_store(const char *db_path, const char *cluster, uint64_t job_id, int64_t job_key,
		      uint32_t run, struct ioacct_jobdata **out, char *err, size_t errlen)
{
	struct ioacct_store *st;
	struct ioacct_job job;
	char name[IOACCT_SHORT_MAX + 96];
	int ret;

	st = ioacct_store_open(db_path, IOACCT_STORE_RDONLY, err, errlen);
	if (!st) {
		ret = -errno;
		/* With private_data the file is root's: the daemon is the way in. */
		if (ret == -EACCES || ret == -EPERM) {
			char why[PATH_MAX + 256];

			snprintf(why, sizeof(why), "%s", err);
			job_err(err, errlen, ret,
				"%s: %s; with private_data = yes only root reads the store, users ask ioacctd (without --db)",
				why, strerror(-ret));
		}
		return ret;
	}
	if (job_key)
		ret = ioacct_store_job_get(st, job_key, &job);
	else
		ret = ioacct_store_job_find_run(st, cluster && *cluster ? cluster : NULL, job_id,
						(int64_t)run - 1, &job);
	if (ret == -ENOENT) {
		run_name(name, sizeof(name), cluster, job_id, job_key, run);
		job_err(err, errlen, ret, "no %s in %s", name, db_path);
		goto out;
	}
	if (!ret)
		ret = ioacct_store_job_load(st, job.key, out);
	if (ret)
		job_err(err, errlen, ret, "%s", ioacct_store_errmsg(st));
out:
	ioacct_store_close(st);
	return ret;
}

int ioacct_source_load_job(const struct ioacct_source *src, const char *cluster, uint64_t job_id,
			   int64_t job_key, struct ioacct_jobdata **out, char *err, size_t errlen)
{
	struct socket_caller s;

	*out = NULL;
	if (src->db_path)
		return load_store(src->db_path, cluster, job_id, job_key, src->run, out, err,
				  errlen);
	socket_caller(&s, src->socket_path, src->timeout_ms);
	return ioacct_job_fetch_via(&s.c, cluster, job_id, job_key, src->run, src->local, out, err,
				    errlen);
}
