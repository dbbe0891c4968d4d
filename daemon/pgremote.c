// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cluster store through its worker: see pgremote.h. Each call is one
 * W_PG_* request, or QUERY/JOB pages read with the clients' own code
 * (query_fetch.h, job_fetch.h) over the worker's channel.
 */
#include "pgremote.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_fetch.h"
#include "util.h"
#include "worker.h"

/*
 * How long a call may take before the worker is taken for stuck: the
 * exporter's writes have no bound of their own here (a backlog's batch on
 * a loaded server), the queries' connections have their statement timeout.
 */
#define QUERY_MARGIN_MS 30000

struct ioacct_pgremote {
	const struct ioacct_config *cfg;
	struct ioacct_worker *w;
	int statement_ms;
	bool connected;
	char errmsg[1024];
	/* During a put: the jobs the worker reads (JOB by key). */
	const struct ioacct_jobdata *const *jds;
	size_t njds;
};

struct ioacct_pgremote *ioacct_pgremote_new(const struct ioacct_config *cfg, int statement_ms)
{
	struct ioacct_pgremote *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return NULL;
	r->cfg = cfg;
	r->statement_ms = statement_ms;
	r->w = ioacct_worker_new("pg", NULL, 0, NULL, NULL);
	ret = r->w ? ioacct_worker_start(r->w, 0, r->errmsg, sizeof(r->errmsg)) : -errno;
	if (ret) {
		ioacct_pgremote_free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

void ioacct_pgremote_free(struct ioacct_pgremote *r)
{
	if (!r)
		return;
	ioacct_worker_free(r->w);
	free(r);
}

bool ioacct_pgremote_connected(const struct ioacct_pgremote *r)
{
	return r && r->connected;
}

const char *ioacct_pgremote_errmsg(const struct ioacct_pgremote *r)
{
	return r->errmsg;
}

/* How long a call may wait for the worker; 0: as long as it takes (the exporter's). */
static int call_ms(const struct ioacct_pgremote *r)
{
	return r->statement_ms ? 2 * r->statement_ms + QUERY_MARGIN_MS : 0;
}

/* A call's outcome: the connection's state and its message kept, as pgstore keeps them. */
static int outcome(struct ioacct_pgremote *r, int ret, const struct ioacct_reply *rep)
{
	if (ret) {
		/* The worker failed (r->errmsg says how): as a lost connection. */
		r->connected = false;
		return -ENOTCONN;
	}
	r->connected = rep->status != -ENOTCONN;
	if (rep->status)
		ioacct_strlcpy(r->errmsg, rep->error, sizeof(r->errmsg));
	return rep->status;
}

/* The worker reads a job of the put: its pages, from memory. */
static void serve_put(void *ctx, const struct ioacct_request *req, struct ioacct_reply *rep)
{
	const struct ioacct_pgremote *r = ctx;

	if (req->type == IOACCT_MSG_JOB)
		for (size_t i = 0; i < r->njds; i++) {
			const struct ioacct_jobdata *jd = r->jds[i];

			if (jd->job.key != req->u.job.job_key)
				continue;
			ioacct_job_serve_page_jd(jd, &req->u.job, rep);
			/* The cluster store keeps the steps' cgroups, which clients are not sent. */
			for (size_t k = 0; k < rep->nqsteps && k < jd->nsteps; k++)
				memcpy(rep->qsteps[k].step.cgroup, jd->steps[k].cgroup,
				       sizeof(jd->steps[k].cgroup));
			return;
		}
	ioacct_reply_error(rep, -ENOENT, "no job with key %" PRId64 " in this put",
			   req->u.job.job_key);
}

/* One request, its reply's status (0 with *rep kept when keep is not NULL). */
static int simple(struct ioacct_pgremote *r, struct ioacct_request *req,
		  ioacct_worker_serve_fn serve, struct ioacct_reply *keep)
{
	struct ioacct_reply rep;
	int ret;

	ret = ioacct_worker_call(r->w, req, NULL, 0, &rep, serve, r, call_ms(r), r->errmsg,
				 sizeof(r->errmsg));
	ret = outcome(r, ret, &rep);
	if (!ret && keep)
		*keep = rep;
	else
		ioacct_reply_free(&rep);
	return ret;
}

int ioacct_pgremote_connect(struct ioacct_pgremote *r)
{
	struct ioacct_request req = { .type = IOACCT_MSG_W_PG_CONNECT };

	req.u.worker.code = (uint32_t)r->statement_ms;
	return simple(r, &req, NULL, NULL);
}

int ioacct_pgremote_jobs_put(struct ioacct_pgremote *r, const struct ioacct_jobdata *const *jds,
			     size_t n)
{
	struct ioacct_request *req = calloc(1, sizeof(*req));
	struct ioacct_req_worker *w;
	size_t off = 0;
	int ret;

	if (!req)
		return -ENOMEM;
	req->type = IOACCT_MSG_W_PG_PUT;
	w = &req->u.worker;
	for (size_t i = 0; i < n; i++) {
		int k = snprintf(w->keys + off, sizeof(w->keys) - off, "%s%" PRId64, i ? "," : "",
				 jds[i]->job.key);

		if (k < 0 || (size_t)k >= sizeof(w->keys) - off) {
			free(req);
			snprintf(r->errmsg, sizeof(r->errmsg), "cluster store: too many jobs in a batch");
			return -E2BIG;
		}
		off += (size_t)k;
	}
	r->jds = jds;
	r->njds = n;
	ret = simple(r, req, serve_put, NULL);
	r->jds = NULL;
	r->njds = 0;
	free(req);
	return ret;
}

/* This node's part of a run as a worker request names it (pgstore.h's report calls). */
static void part_put(struct ioacct_req_worker *w, const struct ioacct_job *part)
{
	w->job_id = part->job_id;
	ioacct_strlcpy(w->cluster, part->cluster, sizeof(w->cluster));
	ioacct_strlcpy(w->node, part->node, sizeof(w->node));
	w->restart = part->restart;
	w->start_ns = part->start_ns;
	w->uid = part->uid;
	w->gid = part->gid;
}

int ioacct_pgremote_report_offer(struct ioacct_pgremote *r, const struct ioacct_job *job,
				 const struct ioacct_report_spec *spec)
{
	struct ioacct_request *req = calloc(1, sizeof(*req));
	int ret;

	if (!req)
		return -ENOMEM;
	req->type = IOACCT_MSG_W_PG_OFFER;
	part_put(&req->u.worker, job);
	req->u.worker.report = *spec;
	ret = simple(r, req, NULL, NULL);
	free(req);
	return ret;
}

/* The worker's channel as a caller of the protocol (job_fetch.h), for the jobs it holds. */
static int worker_call(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep, char *err,
		       size_t errlen)
{
	struct ioacct_pgremote *r = ctx;

	return ioacct_worker_call(r->w, req, NULL, 0, rep, NULL, NULL, call_ms(r), err, errlen);
}

static const char worker_name[] = "the cluster store's worker";

int ioacct_pgremote_report_claim(struct ioacct_pgremote *r, const struct ioacct_job *part,
				 bool skip_locked, struct ioacct_pgstore_report *out,
				 struct ioacct_jobdata **jd)
{
	struct ioacct_caller c = { .call = worker_call, .ctx = r, .name = worker_name };
	struct ioacct_request *req = calloc(1, sizeof(*req));
	struct ioacct_reply rep;
	int64_t key;
	int ret;

	if (!req)
		return -ENOMEM;
	req->type = IOACCT_MSG_W_PG_CLAIM;
	part_put(&req->u.worker, part);
	req->u.worker.code = skip_locked;
	ret = simple(r, req, NULL, &rep);
	free(req);
	if (ret)
		return ret;
	out->spec = rep.w.report;
	out->uid = rep.w.uid;
	out->gid = rep.w.gid;
	key = rep.job_key;
	/* The whole job the worker read under the claim's lock, page by page. */
	ret = ioacct_job_fetch_via(&c, NULL, 0, key, 0, false, jd, r->errmsg, sizeof(r->errmsg));
	if (!ret) {
		ioacct_strlcpy((*jd)->missing_nodes, rep.w.missing, sizeof((*jd)->missing_nodes));
		(*jd)->missing_after_s = rep.w.code;
	} else {
		r->connected = false;
		ret = -ENOTCONN;
	}
	ioacct_reply_free(&rep);
	return ret;
}

int ioacct_pgremote_report_written(struct ioacct_pgremote *r, const struct ioacct_job *part,
				   const char *missing)
{
	struct ioacct_request *req = calloc(1, sizeof(*req));
	int ret;

	if (!req)
		return -ENOMEM;
	req->type = IOACCT_MSG_W_PG_WRITTEN;
	part_put(&req->u.worker, part);
	ioacct_strlcpy(req->u.worker.missing, missing, sizeof(req->u.worker.missing));
	ret = simple(r, req, NULL, NULL);
	free(req);
	return ret;
}

/*
 * The worker's channel as a caller of QUERY and JOB pages, with the
 * connection's state and message kept from the replies.
 */
static int page_call(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep, char *err,
		     size_t errlen)
{
	struct ioacct_pgremote *r = ctx;
	int ret = worker_call(ctx, req, rep, err, errlen);

	if (ret) {
		ioacct_strlcpy(r->errmsg, err, sizeof(r->errmsg));
		r->connected = false;
		return ret;
	}
	r->connected = rep->status != -ENOTCONN;
	if (rep->status)
		ioacct_strlcpy(r->errmsg, rep->error, sizeof(r->errmsg));
	return 0;
}

int ioacct_pgremote_jobs_select(struct ioacct_pgremote *r, const struct ioacct_store_filter *f,
				bool peaks, ioacct_query_fetch_fn fn, void *arg)
{
	struct ioacct_caller c = { .call = page_call, .ctx = r, .name = worker_name };
	char err[1024];
	int ret;

	r->errmsg[0] = '\0';
	ret = ioacct_query_fetch_via(&c, f, peaks, fn, arg, err, sizeof(err));
	/* The worker's message, else the pages' own (a bad reply). */
	if (ret < 0 && !r->errmsg[0])
		ioacct_strlcpy(r->errmsg, err, sizeof(r->errmsg));
	return ret;
}

int ioacct_pgremote_job_load(struct ioacct_pgremote *r, const char *cluster, uint64_t job_id,
			     uint32_t run, uint32_t restart, int64_t run_start,
			     struct ioacct_jobdata **out)
{
	struct ioacct_caller c = { .call = page_call, .ctx = r, .name = worker_name };
	char err[1024];
	int ret;

	r->errmsg[0] = '\0';
	ret = run_start ? ioacct_job_fetch_run_via(&c, cluster, job_id, restart, run_start, out, err,
						   sizeof(err)) :
			  ioacct_job_fetch_via(&c, cluster, job_id, 0, run, false, out, err, sizeof(err));
	if (ret < 0 && !r->errmsg[0])
		ioacct_strlcpy(r->errmsg, err, sizeof(r->errmsg));
	return ret;
}

/* A retention call: the counts from the reply, whatever its status. */
static int retain(struct ioacct_pgremote *r, struct ioacct_request *req, bool last,
		  struct ioacct_pgstore_purge_counts *c)
{
	struct ioacct_reply rep;
	int ret;

	req->u.worker.code = last;
	ret = ioacct_worker_call(r->w, req, NULL, 0, &rep, NULL, NULL, call_ms(r), r->errmsg,
				 sizeof(r->errmsg));
	if (!ret) {
		c->runs = rep.w.purged.runs;
		c->parts = rep.w.purged.parts;
		c->series = rep.w.purged.series;
		c->months = rep.w.purged.months;
	}
	ret = outcome(r, ret, &rep);
	ioacct_reply_free(&rep);
	return ret;
}

int ioacct_pgremote_purge(struct ioacct_pgremote *r, int64_t cutoff_unix, bool last,
			  struct ioacct_pgstore_purge_counts *c)
{
	struct ioacct_request *req = calloc(1, sizeof(*req));
	int ret;

	memset(c, 0, sizeof(*c));
	if (!req)
		return -ENOMEM;
	req->type = IOACCT_MSG_W_PG_PURGE;
	req->u.worker.cutoff = cutoff_unix;
	ret = retain(r, req, last, c);
	free(req);
	return ret;
}

int ioacct_pgremote_downsample(struct ioacct_pgremote *r, int64_t cutoff_unix,
			       uint64_t bin_width_ns, bool last,
			       struct ioacct_pgstore_purge_counts *c)
{
	struct ioacct_request *req = calloc(1, sizeof(*req));
	int ret;

	memset(c, 0, sizeof(*c));
	if (!req)
		return -ENOMEM;
	req->type = IOACCT_MSG_W_PG_DOWNSAMPLE;
	req->u.worker.cutoff = cutoff_unix;
	req->u.worker.bin_width_ns = bin_width_ns;
	ret = retain(r, req, last, c);
	free(req);
	return ret;
}
