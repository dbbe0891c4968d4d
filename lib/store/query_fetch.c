/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacct's two sources of jobs, and the daemon's page server (see
 * query_fetch.h).
 */
#include "query_fetch.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* The one error helper (util.h), under this file's own name. */
#define fetch_err(...) ioacct_seterr(__VA_ARGS__)

/* A job's data and, when asked, its peaks computed from its series. */
static int load_job(struct ioacct_store *st, int64_t key, bool want_peaks,
		    struct ioacct_jobdata **jd, struct ioacct_qpeak **peaks, size_t *npeaks)
{
	struct ioacct_sample *series = NULL;
	size_t nseries = 0;
	int ret;

	*peaks = NULL;
	*npeaks = 0;
	ret = ioacct_store_job_load_totals(st, key, jd);
	if (ret || !want_peaks)
		return ret;
	ret = ioacct_store_job_series(st, key, &series, &nseries);
	if (!ret)
		ret = ioacct_query_peaks(series, nseries, peaks, npeaks);
	free(series);
	if (ret) {
		ioacct_jobdata_free(*jd);
		*jd = NULL;
	}
	return ret;
}

/* ---- the store, directly ---- */

/* Each job selected, loaded and handed to fn (ioacct_query_fetch_store, store_select). */
struct store_ctx {
	bool peaks;
	ioacct_query_fetch_fn fn;
	void *arg;
	bool fn_failed;               /* fn failed, not the store: its message stands */
};

static int store_job(struct ioacct_store *st, const struct ioacct_job *job, void *arg)
{
	struct store_ctx *c = arg;
	struct ioacct_jobdata *jd;
	struct ioacct_qpeak *peaks;
	size_t npeaks;
	int ret;

	ret = load_job(st, job->key, c->peaks, &jd, &peaks, &npeaks);
	if (ret)
		return ret;
	ret = c->fn(jd, peaks, npeaks, c->arg);
	c->fn_failed = ret != 0;
	free(peaks);
	ioacct_jobdata_free(jd);
	return ret;
}

int ioacct_query_fetch_store(struct ioacct_store *st, const struct ioacct_store_filter *f,
			     bool peaks, ioacct_query_fetch_fn fn, void *arg, char *err,
			     size_t errlen)
{
	struct store_ctx c = { .peaks = peaks, .fn = fn, .arg = arg };
	struct ioacct_store_filter part = *f;
	size_t done = 0;
	int ret;

	do {
		part.job_ids = f->job_ids ? f->job_ids + done : NULL;
		part.njob_ids = MIN(f->njob_ids - done, (size_t)IOACCT_STORE_FILTER_MAX);
		ret = ioacct_store_jobs_select(st, &part, store_job, &c);
		if (ret) {
			if (!c.fn_failed)
				fetch_err(err, errlen, ret, "%s", ioacct_store_errmsg(st));
			return ret;
		}
		done += part.njob_ids;
	} while (done < f->njob_ids);
	return 0;
}

/* ---- the daemon's side ---- */

struct page {
	struct ioacct_reply *rep;
	bool peaks;
	size_t bytes;
	uint64_t deadline_ns;   /* CLOCK_MONOTONIC */
	size_t cap_jobs, cap_steps, cap_mounts, cap_totals, cap_peaks, cap_rpc;
	bool rpc_missing;       /* a job of the page has no RPC rows read: the page sends none */
	char err[512];
};

/* Row a, the key of b but its bin: their RPCs in one row of totals. */
static bool same_but_bin(const struct ioacct_rpc *a, const struct ioacct_rpc *b)
{
	struct ioacct_rpc x = *b;

	x.bin = a->bin;
	return ioacct_rpc_key_cmp(a, &x) == 0;
}

/*
 * How many rows the job's own RPC rows make summed over their bins: a job
 * of a day in 1 s bins has 86,400 a procedure, its totals one. jd->rpc is in
 * key order, the bin last: a key's rows are together.
 */
static size_t rpc_total_rows(const struct ioacct_jobdata *jd)
{
	const struct ioacct_rpc *last = NULL;
	size_t n = 0;

	for (size_t i = 0; i < jd->nrpc; i++) {
		if (jd->rpc[i].flags & IOACCT_RPC_UNATTRIBUTED)
			continue;
		if (!last || !same_but_bin(last, &jd->rpc[i]))
			n++;
		last = &jd->rpc[i];
	}
	return n;
}

/*
 * The job's own RPC rows summed over the bins (bin 0), what ioacct's fields
 * need of them, appended to rep->qrpc, which has room (issue 40).
 */
static void page_rpc(struct ioacct_reply *rep, const struct ioacct_jobdata *jd)
{
	struct ioacct_qrpc_row *last = NULL;

	for (size_t i = 0; i < jd->nrpc; i++) {
		if (jd->rpc[i].flags & IOACCT_RPC_UNATTRIBUTED)
			continue;
		if (last && same_but_bin(&last->r, &jd->rpc[i])) {
			ioacct_rpc_add(&last->r, &jd->rpc[i]);
			continue;
		}
		last = &rep->qrpc[rep->nqrpc++];
		last->job_key = jd->job.key;
		last->r = jd->rpc[i];
		last->r.bin = 0;
	}
}

/* Makes room for `more` elements after *n in *array of capacity *cap. */
static int grow(void **array, size_t *cap, size_t n, size_t more, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (n + more <= *cap)
		return 0;
	while (ncap < n + more)
		ncap *= 2;
	p = reallocarray(*array, ncap, size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = ncap;
	return 0;
}

static int page_add(struct page *pg, const struct ioacct_jobdata *jd,
		    const struct ioacct_qpeak *peaks, size_t npeaks, size_t nrpc)
{
	struct ioacct_reply *rep = pg->rep;
	void *p;

	p = rep->jobs;
	if (grow(&p, &pg->cap_jobs, rep->njobs, 1, sizeof(*rep->jobs)))
		return -ENOMEM;
	rep->jobs = p;
	p = rep->qsteps;
	if (grow(&p, &pg->cap_steps, rep->nqsteps, jd->nsteps, sizeof(*rep->qsteps)))
		return -ENOMEM;
	rep->qsteps = p;
	p = rep->qmounts;
	if (grow(&p, &pg->cap_mounts, rep->nqmounts, jd->nmounts, sizeof(*rep->qmounts)))
		return -ENOMEM;
	rep->qmounts = p;
	p = rep->qtotals;
	if (grow(&p, &pg->cap_totals, rep->nqtotals, jd->ntotals, sizeof(*rep->qtotals)))
		return -ENOMEM;
	rep->qtotals = p;
	p = rep->qpeaks;
	if (grow(&p, &pg->cap_peaks, rep->nqpeaks, npeaks, sizeof(*rep->qpeaks)))
		return -ENOMEM;
	rep->qpeaks = p;
	p = rep->qrpc;
	if (grow(&p, &pg->cap_rpc, rep->nqrpc, nrpc, sizeof(*rep->qrpc)))
		return -ENOMEM;
	rep->qrpc = p;

	rep->jobs[rep->njobs++] = jd->job;
	for (size_t i = 0; i < jd->nsteps; i++) {
		struct ioacct_qstep_row *row = &rep->qsteps[rep->nqsteps++];

		row->job_key = jd->job.key;
		row->step = jd->steps[i];
		/* Not sent, and may be as long as the encoder allows strings to be. */
		row->step.cgroup[0] = '\0';
	}
	for (size_t i = 0; i < jd->nmounts; i++) {
		rep->qmounts[rep->nqmounts].job_key = jd->job.key;
		rep->qmounts[rep->nqmounts++].mount = jd->mounts[i];
	}
	for (size_t i = 0; i < jd->ntotals; i++) {
		rep->qtotals[rep->nqtotals].job_key = jd->job.key;
		rep->qtotals[rep->nqtotals++].s = jd->totals[i];
	}
	for (size_t i = 0; i < npeaks; i++)
		rep->qpeaks[rep->nqpeaks++] = (struct ioacct_qpeak_row){
			.job_key = jd->job.key,
			.step_id = peaks[i].step_id,
			.mnt_id = peaks[i].mnt_id,
			.read_bytes = peaks[i].read_bytes,
			.write_bytes = peaks[i].write_bytes,
		};
	page_rpc(rep, jd);
	pg->rpc_missing |= !jd->rpc_loaded;
	rep->job_key = jd->job.key;
	return 0;
}

/* Returned by page_job when the page is full: not an error. */
#define PAGE_FULL 1

/* One job onto the page, or PAGE_FULL when it does not fit (the next page starts with it). */
static int page_job(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		    size_t npeaks, void *arg)
{
	struct page *pg = arg;
	size_t size, nrpc = rpc_total_rows(jd);
	int ret;

	/* Long jobs' series can take a while to read: leave the rest to the next page. */
	if (pg->rep->njobs && ioacct_mono_ns() > pg->deadline_ns)
		return PAGE_FULL;
	size = ioacct_proto_query_job_size(&jd->job, jd->nsteps, jd->mounts, jd->nmounts,
					   jd->ntotals, npeaks) +
	       nrpc * ioacct_proto_rpc_row_size();
	if (pg->rep->njobs && (pg->bytes + size > IOACCT_QUERY_PAGE_BYTES ||
			       pg->rep->nqsteps + jd->nsteps > IOACCT_QUERY_PAGE_ROWS ||
			       pg->rep->nqmounts + jd->nmounts > IOACCT_QUERY_PAGE_ROWS ||
			       pg->rep->nqrpc + nrpc > IOACCT_QUERY_PAGE_ROWS)) {
		ret = PAGE_FULL;
	} else if (size > IOACCT_PROTO_MAX_MSG - 4096 || jd->nsteps > IOACCT_PROTO_MAX_QROWS ||
		   jd->nmounts > IOACCT_PROTO_MAX_QROWS || nrpc > IOACCT_PROTO_MAX_QROWS) {
		snprintf(pg->err, sizeof(pg->err),
			 "job %" PRIu64 " of cluster %s is too large for a reply of ioacctd (%zu steps, %zu totals); root can list it",
			 jd->job.job_id, jd->job.cluster, jd->nsteps, jd->ntotals);
		ret = -EMSGSIZE;
	} else {
		ret = page_add(pg, jd, peaks, npeaks, nrpc);
		if (ret)
			snprintf(pg->err, sizeof(pg->err), "out of memory");
		pg->bytes += size;
	}
	return ret;
}

/* ioacct_query_select_fn over a store file. */
static int store_select(void *src, const struct ioacct_store_filter *f, bool peaks,
			ioacct_query_fetch_fn fn, void *arg, char *err, size_t errlen)
{
	struct store_ctx c = { .peaks = peaks, .fn = fn, .arg = arg };
	struct ioacct_store *st = src;
	int ret = ioacct_store_jobs_select(st, f, store_job, &c);

	if (ret < 0)
		snprintf(err, errlen, "%s", ioacct_store_errmsg(st));
	return ret;
}

#define serve_error(...) ioacct_reply_error(__VA_ARGS__)

static unsigned int page_ms = IOACCT_QUERY_PAGE_MS;

void ioacct_query_page_ms_set(unsigned int ms)
{
	page_ms = ms;
}

unsigned int ioacct_query_page_ms(void)
{
	return page_ms;
}

void ioacct_query_serve_page_from(ioacct_query_select_fn select, void *src,
				  const struct ioacct_req_select *req, uint32_t peer_uid,
				  bool private_data, struct ioacct_reply *rep)
{
	struct page pg = { .rep = rep, .peaks = req->peaks != 0,
			   .deadline_ns = ioacct_mono_ns() + page_ms * NSEC_PER_MSEC };
	struct ioacct_store_filter f = {
		.start_ns = req->start_ns,
		.end_ns = req->end_ns,
		.after_key = req->after_key,
		.limit = IOACCT_QUERY_PAGE_JOBS,
		.by_node = req->by_node != 0,
		.local = req->local != 0,
		.duplicates = req->duplicates != 0,
	};
	uint64_t *ids = NULL, *uids64 = NULL;
	uint32_t *uids = NULL;
	char **clusters = NULL;
	size_t nids = 0, nuids = 0, nclusters = 0;
	char serr[512] = "";
	int ret;

	if (ioacct_query_u64_list(req->job_ids, &ids, &nids) ||
	    ioacct_query_u64_list(req->uids, &uids64, &nuids) ||
	    ioacct_query_list_split(req->clusters, &clusters, &nclusters)) {
		serve_error(rep, -EINVAL, "query: bad job id, uid or cluster list");
		goto out;
	}
	uids = calloc(nuids ? nuids : 1, sizeof(*uids));
	if (!uids) {
		serve_error(rep, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nuids; i++) {
		if (uids64[i] > UINT32_MAX) {
			serve_error(rep, -EINVAL, "query: uid %" PRIu64 " out of range", uids64[i]);
			goto out;
		}
		uids[i] = (uint32_t)uids64[i];
	}
	/*
	 * The daemon answers for the file's permissions: a user's own jobs, of
	 * those asked for. Other users' are not an error, just not there.
	 */
	if (private_data && peer_uid != 0) {
		bool asked = nuids == 0;

		for (size_t i = 0; i < nuids; i++)
			asked |= uids[i] == peer_uid;
		if (!asked)
			goto out;
		uids[0] = peer_uid;
		nuids = 1;
	}
	f.job_ids = ids;
	f.njob_ids = nids;
	f.uids = uids;
	f.nuids = nuids;
	f.clusters = (const char *const *)clusters;
	f.nclusters = nclusters;
	ret = select(src, &f, pg.peaks, page_job, &pg, serr, sizeof(serr));
	if (ret < 0) {
		serve_error(rep, ret, "query: %s", pg.err[0] ? pg.err : serr);
		goto out;
	}
	rep->more = ret == PAGE_FULL || rep->njobs == IOACCT_QUERY_PAGE_JOBS;
	/* The RPC totals (issue 40) of every job of the page, or of none: not read, not none. */
	rep->rpc_read = rep->njobs && !pg.rpc_missing;
	if (!rep->rpc_read)
		rep->nqrpc = 0;
out:
	free(ids);
	free(uids64);
	free(uids);
	ioacct_query_list_free(clusters, nclusters);
}

void ioacct_query_serve_page(struct ioacct_store *st, const struct ioacct_req_select *req,
			     uint32_t peer_uid, bool private_data, struct ioacct_reply *rep)
{
	ioacct_query_serve_page_from(store_select, st, req, peer_uid, private_data, rep);
}

/* ---- through the daemon ---- */

/* Comma-separated numbers into buf; -E2BIG when they do not fit. */
static int join_u64(char *buf, size_t len, const uint64_t *v, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + off, len - off, "%s%" PRIu64, i ? "," : "", v[i]);

		if (w < 0 || (size_t)w >= len - off)
			return -E2BIG;
		off += (size_t)w;
	}
	return 0;
}

/* As many job ids from `from` as fit in the request; how many in *taken. */
static void fill_ids(struct ioacct_req_select *sel, const uint64_t *ids, size_t n, size_t *taken)
{
	size_t k = MIN(n, (size_t)IOACCT_STORE_FILTER_MAX);

	while (join_u64(sel->job_ids, sizeof(sel->job_ids), ids, k) && k > 1)
		k /= 2;
	*taken = k;
}

/* The rows of job `key` out of a reply, as a jobdata. */
static int reply_job(const struct ioacct_reply *rep, const struct ioacct_job *job,
		     struct ioacct_jobdata **out, struct ioacct_qpeak **peaks, size_t *npeaks)
{
	struct ioacct_jobdata *jd = calloc(1, sizeof(*jd));
	size_t ns = 0, nm = 0, nt = 0, np = 0, nr = 0;

	*peaks = NULL;
	if (!jd)
		return -ENOMEM;
	jd->job = *job;
	jd->job.has_array = job->array_job_id != 0;
	for (size_t i = 0; i < rep->nqsteps; i++)
		ns += rep->qsteps[i].job_key == job->key;
	for (size_t i = 0; i < rep->nqmounts; i++)
		nm += rep->qmounts[i].job_key == job->key;
	for (size_t i = 0; i < rep->nqtotals; i++)
		nt += rep->qtotals[i].job_key == job->key;
	for (size_t i = 0; i < rep->nqpeaks; i++)
		np += rep->qpeaks[i].job_key == job->key;
	for (size_t i = 0; i < rep->nqrpc; i++)
		nr += rep->qrpc[i].job_key == job->key;
	jd->rpc = calloc(nr ? nr : 1, sizeof(*jd->rpc));
	jd->steps = calloc(ns ? ns : 1, sizeof(*jd->steps));
	jd->mounts = calloc(nm ? nm : 1, sizeof(*jd->mounts));
	jd->totals = calloc(nt ? nt : 1, sizeof(*jd->totals));
	*peaks = calloc(np ? np : 1, sizeof(**peaks));
	if (!jd->steps || !jd->mounts || !jd->totals || !*peaks || !jd->rpc) {
		ioacct_jobdata_free(jd);
		free(*peaks);
		*peaks = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < rep->nqsteps; i++)
		if (rep->qsteps[i].job_key == job->key)
			jd->steps[jd->nsteps++] = rep->qsteps[i].step;
	for (size_t i = 0; i < rep->nqmounts; i++)
		if (rep->qmounts[i].job_key == job->key)
			jd->mounts[jd->nmounts++] = rep->qmounts[i].mount;
	for (size_t i = 0; i < rep->nqtotals; i++) {
		if (rep->qtotals[i].job_key != job->key)
			continue;
		/* The daemon is a peer: nothing indexes by op unchecked. */
		if (rep->qtotals[i].s.op >= IOACCT_OP_COUNT) {
			ioacct_jobdata_free(jd);
			free(*peaks);
			*peaks = NULL;
			return -EPROTO;
		}
		jd->totals[jd->ntotals++] = rep->qtotals[i].s;
	}
	/* The job's RPC rows summed over its bins (bin 0): what ioacct's fields read. */
	for (size_t i = 0; i < rep->nqrpc; i++)
		if (rep->qrpc[i].job_key == job->key)
			jd->rpc[jd->nrpc++] = rep->qrpc[i].r;
	jd->rpc_loaded = rep->rpc_read != 0;
	*npeaks = 0;
	for (size_t i = 0; i < rep->nqpeaks; i++)
		if (rep->qpeaks[i].job_key == job->key)
			(*peaks)[(*npeaks)++] = (struct ioacct_qpeak){
				.step_id = rep->qpeaks[i].step_id,
				.mnt_id = rep->qpeaks[i].mnt_id,
				.read_bytes = rep->qpeaks[i].read_bytes,
				.write_bytes = rep->qpeaks[i].write_bytes,
			};
	*out = jd;
	return 0;
}

static int reply_jobs(const struct ioacct_reply *rep, const char *from, bool want_peaks,
		      ioacct_query_fetch_fn fn, void *arg, char *err, size_t errlen)
{
	for (size_t i = 0; i < rep->njobs; i++) {
		struct ioacct_jobdata *jd;
		struct ioacct_qpeak *peaks;
		size_t npeaks;
		int ret;

		ret = reply_job(rep, &rep->jobs[i], &jd, &peaks, &npeaks);
		if (ret)
			return fetch_err(err, errlen, ret, "bad reply from %s: %s", from,
					 ret == -EPROTO ? "an operation out of range" : strerror(-ret));
		ret = fn(jd, want_peaks ? peaks : NULL, want_peaks ? npeaks : 0, arg);
		free(peaks);
		ioacct_jobdata_free(jd);
		if (ret)
			return ret;
	}
	return 0;
}

/* ioacctd's socket as a caller: its failures said as they are. */
struct socket_caller {
	const char *path;
	int timeout_ms;
};

static int socket_call(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep,
		       char *err, size_t errlen)
{
	const struct socket_caller *s = ctx;

	return ioacct_client_call(s->path, req, rep, s->timeout_ms, err, errlen);
}

int ioacct_query_fetch_daemon(const char *socket_path, const struct ioacct_store_filter *f,
			      bool peaks, int timeout_ms, ioacct_query_fetch_fn fn, void *arg,
			      char *err, size_t errlen)
{
	struct socket_caller s = { socket_path, timeout_ms };
	struct ioacct_caller c = { .call = socket_call, .ctx = &s, .name = "ioacctd" };

	return ioacct_query_fetch_via(&c, f, peaks, fn, arg, err, errlen);
}

int ioacct_query_fetch_via(const struct ioacct_caller *c, const struct ioacct_store_filter *f,
			   bool peaks, ioacct_query_fetch_fn fn, void *arg, char *err,
			   size_t errlen)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	uint64_t *uids = NULL;
	size_t done = 0, taken = 0;
	int ret = 0;

	memset(&req, 0, sizeof(req));
	req.type = IOACCT_MSG_QUERY;
	req.u.select.start_ns = f->start_ns;
	req.u.select.end_ns = f->end_ns;
	req.u.select.peaks = peaks;
	req.u.select.by_node = f->by_node;
	req.u.select.local = f->local;
	req.u.select.duplicates = f->duplicates;
	if (f->nuids) {
		uids = calloc(f->nuids, sizeof(*uids));
		if (!uids)
			return fetch_err(err, errlen, -ENOMEM, "out of memory");
		for (size_t i = 0; i < f->nuids; i++)
			uids[i] = f->uids[i];
	}
	if (join_u64(req.u.select.uids, sizeof(req.u.select.uids), uids, f->nuids)) {
		free(uids);
		return fetch_err(err, errlen, -E2BIG, "too many users for one request to ioacctd");
	}
	free(uids);
	for (size_t i = 0, off = 0; i < f->nclusters; i++) {
		int w = snprintf(req.u.select.clusters + off, sizeof(req.u.select.clusters) - off,
				 "%s%s", i ? "," : "", f->clusters[i]);

		if (w < 0 || (size_t)w >= sizeof(req.u.select.clusters) - off)
			return fetch_err(err, errlen, -E2BIG,
					 "too many clusters for one request to ioacctd");
		off += (size_t)w;
	}
	do {
		fill_ids(&req.u.select, f->job_ids + done, f->njob_ids - done, &taken);
		req.u.select.after_key = f->after_key;
		do {
			ret = c->call(c->ctx, &req, &rep, err, errlen);
			if (ret)
				return ret;
			if (rep.status) {
				ret = fetch_err(err, errlen, rep.status, "%s: %s", c->name, rep.error);
				ioacct_reply_free(&rep);
				return ret;
			}
			ret = reply_jobs(&rep, c->name, peaks, fn, arg, err, errlen);
			/* Each page must move on, or a confused daemon would keep us here. */
			if (!ret && rep.more && (rep.njobs == 0 || rep.job_key <= req.u.select.after_key))
				ret = fetch_err(err, errlen, -EPROTO,
						"bad reply from %s: more to come, but no new job",
						c->name);
			req.u.select.after_key = rep.job_key;
			if (ret || !rep.more) {
				ioacct_reply_free(&rep);
				break;
			}
			ioacct_reply_free(&rep);
		} while (1);
		if (ret)
			return ret;
		done += taken;
	} while (done < f->njob_ids);
	return 0;
}
