// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cluster store's worker (worker.h, pgremote.h; issue 37): one
 * PostgreSQL connection (libpq, pgstore.h) in a process without privileges,
 * serving one thread of the core. What the server sends back is parsed
 * here; what reaches the core is the protocol's messages, checked as any
 * client's. A job to write is read from the core (JOB pages, by key); a
 * job read from the cluster store (a merged report's, a whole job) is held
 * here for the core to read its pages. The retention's purge and downsample
 * (cluster_retention) run here too, their progress in the core's log.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_fetch.h"
#include "pgstore.h"
#include "query_fetch.h"
#include "sandbox.h"
#include "util.h"
#include "wside.h"

struct pgw {
	struct ioacct_wside *ws;
	struct ioacct_pgstore *pg;
	struct ioacct_jobdata *held;  /* the job whose pages the core reads */
};

static int pg_init(struct ioacct_wside *ws, int *fds, size_t nfds, char *err, size_t errlen)
{
	struct pgw *x = calloc(1, sizeof(*x));

	(void)fds;
	(void)nfds;
	if (!x)
		return ioacct_seterr(err, errlen, -ENOMEM, "out of memory");
	x->ws = ws;
	ws->state = x;
	/* The pages it serves have the budget of ioacctd's own (query_page_time). */
	ioacct_query_page_ms_set((unsigned int)ws->cfg.query_page_ms);
	if (!ioacct_pgstore_available())
		return ioacct_seterr(err, errlen, -ENOTSUP, "this ioacctd was built without libpq");
	return 0;
}

static bool connected(const struct pgw *x)
{
	return x->pg && ioacct_pgstore_connected(x->pg);
}

/* A failed call's reply: -ENOTCONN when the connection is down after it (pgremote.h). */
/* A cut of s at n moved back to a character's first byte (UTF-8). */
static size_t char_start(const char *s, size_t n)
{
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/*
 * A reply's error has less room than PostgreSQL's messages (a check
 * constraint's DETAIL holds the whole row), and pgstore names the job or
 * the batch at the end: a message too long keeps its start and its end,
 * the middle left out.
 */
#define FAIL_TAIL 200
static void fail(const struct pgw *x, int ret, struct ioacct_reply *rep)
{
	const char *msg = x->pg ? ioacct_pgstore_errmsg(x->pg) : "cluster store: not connected";
	static const char gap[] = " [...] ";
	size_t len = strlen(msg), head, tail;

	if (!msg[0])
		msg = strerror(-ret);
	ret = connected(x) ? ret : -ENOTCONN;
	if (len < sizeof(rep->error)) {
		ioacct_reply_error(rep, ret, "%s", msg);
		return;
	}
	tail = len - FAIL_TAIL;
	while (((unsigned char)msg[tail] & 0xc0) == 0x80)
		tail++;
	head = char_start(msg, sizeof(rep->error) - 1 - (sizeof(gap) - 1) - (len - tail));
	ioacct_reply_error(rep, ret, "%.*s%s%s", (int)head, msg, gap, msg + tail);
}

static void hold(struct pgw *x, struct ioacct_jobdata *jd)
{
	ioacct_jobdata_free(x->held);
	x->held = jd;
}

static void pg_connect(struct pgw *x, uint32_t statement_ms, struct ioacct_reply *rep)
{
	struct ioacct_pgstore_opts o;
	char err[1024];

	if (connected(x))
		return;
	ioacct_pgstore_close(x->pg);
	hold(x, NULL);
	/*
	 * The deadlines of ioacct.conf. The core stops a call by closing the
	 * channel, and sends nothing else while it waits for a reply: the
	 * channel readable during a call is the stop, and a wait for the server
	 * (a long purge's) gives up at once, its transaction rolled back.
	 */
	ioacct_pgstore_opts_config(&o, &x->ws->cfg, x->ws->ch.fd);
	x->pg = statement_ms ?
		ioacct_pgstore_open_query(x->ws->cfg.cluster_db, (int)statement_ms, &o, err,
					  sizeof(err)) :
		ioacct_pgstore_open(x->ws->cfg.cluster_db, &o, err, sizeof(err));
	if (!x->pg)
		ioacct_reply_error(rep, -ENOTCONN, "%s", err);
}

/* The core's channel as a caller of JOB pages (an outbox job, by key). */
static int core_call(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep, char *err,
		     size_t errlen)
{
	return ioacct_wside_call(ctx, req, rep, err, errlen);
}

/* The jobs of `keys` read from the core, then written in one transaction. */
static void pg_put(struct pgw *x, const char *keys, struct ioacct_reply *rep)
{
	struct ioacct_caller c = { .call = core_call, .ctx = x->ws, .name = "ioacctd" };
	struct ioacct_jobdata *jds[IOACCT_PGSTORE_BATCH_JOBS];
	const char *p = keys;
	char err[1024];
	size_t n = 0;
	int ret = 0;

	while (*p && !ret) {
		char *end;
		long long key = strtoll(p, &end, 10);

		if (end == p || (*end && *end != ',') || n == IOACCT_PGSTORE_BATCH_JOBS) {
			ret = ioacct_seterr(err, sizeof(err), -EPROTO, "bad keys \"%s\"", keys);
			break;
		}
		p = *end ? end + 1 : end;
		ret = ioacct_job_fetch_via(&c, NULL, 0, key, 0, false, &jds[n], err, sizeof(err));
		if (!ret)
			n++;
	}
	if (ret) {
		ioacct_reply_error(rep, -EIO, "cannot read a job to export from ioacctd: %s", err);
	} else if (!connected(x)) {
		fail(x, -ENOTCONN, rep);
	} else {
		ret = n == 1 ? ioacct_pgstore_job_put(x->pg, jds[0]) :
			       ioacct_pgstore_jobs_put(x->pg, (const struct ioacct_jobdata *const *)jds, n);
		if (ret)
			fail(x, ret, rep);
	}
	for (size_t i = 0; i < n; i++)
		ioacct_jobdata_free(jds[i]);
}

/* This node's part of a run, as the core named it (pgremote.c). */
static struct ioacct_job part_of(const struct ioacct_req_worker *w)
{
	struct ioacct_job job = { .job_id = w->job_id, .restart = w->restart,
				  .start_ns = w->start_ns, .uid = w->uid, .gid = w->gid };

	ioacct_strlcpy(job.cluster, w->cluster, sizeof(job.cluster));
	ioacct_strlcpy(job.node, w->node, sizeof(job.node));
	return job;
}

static void pg_offer(struct pgw *x, const struct ioacct_req_worker *w, struct ioacct_reply *rep)
{
	struct ioacct_job job = part_of(w);
	int ret;

	ret = connected(x) ? ioacct_pgstore_report_offer(x->pg, &job, &w->report,
							  x->ws->cfg.merge_timeout_s) : -ENOTCONN;
	if (ret)
		fail(x, ret, rep);
}

static void pg_claim(struct pgw *x, const struct ioacct_req_worker *w, struct ioacct_reply *rep)
{
	struct ioacct_job part = part_of(w);
	struct ioacct_pgstore_report r;
	struct ioacct_jobdata *jd = NULL;
	int ret;

	hold(x, NULL);
	ret = connected(x) ? ioacct_pgstore_report_claim(x->pg, &part, w->code != 0, &r, &jd) :
			     -ENOTCONN;
	if (ret) {
		fail(x, ret, rep);
		return;
	}
	hold(x, jd);
	rep->w.report = r.spec;
	rep->w.uid = r.uid;
	rep->w.gid = r.gid;
	rep->job_key = jd->job.key;
	ioacct_strlcpy(rep->w.missing, jd->missing_nodes, sizeof(rep->w.missing));
	rep->w.code = jd->missing_after_s;
}

static void pg_written(struct pgw *x, const struct ioacct_req_worker *w, struct ioacct_reply *rep)
{
	struct ioacct_job part = part_of(w);
	int ret = connected(x) ? ioacct_pgstore_report_written(x->pg, &part, w->missing) : -ENOTCONN;

	hold(x, NULL);
	if (ret)
		fail(x, ret, rep);
}

/* A long purge says how far it is this often (a month, its partitions: each). */
#define PROGRESS_LOG_MS 10000

/*
 * The purge as it goes, in the core's log: a line per month purged whole
 * and per month's partitions dropped, the rest's batches every
 * PROGRESS_LOG_MS. The stop is the channel's (pg_connect).
 */
static int purge_progress(const struct ioacct_pgstore_purge_progress *p, void *arg)
{
	uint64_t *logged_ms = arg, now = ioacct_mono_ms();

	switch (p->step) {
	case IOACCT_PG_PURGE_MONTH:
		log_info("retention: cluster store: month %s purged whole: %llu runs (%llu node parts,"
			 " %llu series rows) in %llu ms", p->month, (unsigned long long)p->counts.runs,
			 (unsigned long long)p->counts.parts, (unsigned long long)p->counts.series,
			 (unsigned long long)p->ms);
		break;
	case IOACCT_PG_PURGE_DROPPED:
		log_info("retention: cluster store: month %s: partitions dropped in %llu ms",
			 p->month, (unsigned long long)p->ms);
		break;
	default:
		if (now - *logged_ms < PROGRESS_LOG_MS)
			break;
		log_info("retention: cluster store: purge in progress: %llu runs (%llu node parts,"
			 " %llu series rows) row by row so far (%llu s)",
			 (unsigned long long)p->counts.runs, (unsigned long long)p->counts.parts,
			 (unsigned long long)p->counts.series, (unsigned long long)(p->ms / 1000));
		*logged_ms = now;
	}
	return 0;
}

/*
 * cluster_retention's purge, or downsample to w->bin_width_ns, of the runs
 * ended before w->cutoff; what it did in the reply, failed or not (each
 * run goes in a transaction: what is counted is committed); code 1: the
 * round's last, the connection closed after it.
 */
static void pg_retain(struct pgw *x, const struct ioacct_req_worker *w, bool downsample,
		      struct ioacct_reply *rep)
{
	struct ioacct_pgstore_purge_counts c = { 0 };
	uint64_t logged_ms = ioacct_mono_ms();
	int ret = -ENOTCONN;

	if (connected(x) && downsample)
		ret = ioacct_pgstore_downsample(x->pg, w->cutoff, w->bin_width_ns, false, &c);
	else if (connected(x))
		ret = ioacct_pgstore_purge(x->pg, w->cutoff, false, purge_progress, &logged_ms, &c);
	if (ret)
		fail(x, ret, rep);
	rep->w.purged.runs = c.runs;
	rep->w.purged.parts = c.parts;
	rep->w.purged.series = c.series;
	rep->w.purged.months = c.months;
	if (w->code) {
		ioacct_pgstore_close(x->pg);
		x->pg = NULL;
	}
}

/* ioacct_query_select_fn over the cluster store, without this node's running parts (clusterq.c). */
static int pg_select(void *src, const struct ioacct_store_filter *f, bool peaks,
		     ioacct_query_fetch_fn fn, void *arg, char *err, size_t errlen)
{
	struct pgw *x = src;
	struct ioacct_store_filter pf = *f;
	int ret;

	if (!connected(x))
		return ioacct_seterr(err, errlen, -ENOTCONN, "cluster store: not connected");
	pf.running_here = x->ws->cfg.node;
	ret = ioacct_pgstore_jobs_select(x->pg, &pf, peaks, fn, arg);
	if (ret < 0)
		snprintf(err, errlen, "%s", ioacct_pgstore_errmsg(x->pg));
	return ret;
}

/*
 * A JOB page: of the job held (by key), or of one read now (by job id: a
 * run by its place, or exactly by its name, restart and run_start).
 */
static void pg_job(struct pgw *x, const struct ioacct_req_job *req, struct ioacct_reply *rep)
{
	struct ioacct_jobdata *jd = NULL;
	int ret = -ENOTCONN;

	if (!req->job_key && req->job_id) {
		hold(x, NULL);
		if (connected(x) && req->run_start)
			ret = ioacct_pgstore_run_load(x->pg, req->cluster, req->job_id, req->restart,
						      req->run_start, &jd);
		else if (connected(x))
			ret = ioacct_pgstore_job_load(x->pg, req->cluster, req->job_id, req->run, &jd);
		if (ret == -ENOENT) {
			ioacct_reply_error(rep, ret, "job %" PRIu64 " is not in the cluster store",
					   req->job_id);
			return;
		}
		if (ret) {
			fail(x, ret, rep);
			return;
		}
		hold(x, jd);
	}
	if (!x->held || (req->job_key && x->held->job.key != req->job_key)) {
		ioacct_reply_error(rep, -ENOENT, "no job with key %" PRId64 " read here", req->job_key);
		return;
	}
	ioacct_job_serve_page_jd(x->held, req, rep);
}

static int pg_serve(struct ioacct_wside *ws, const struct ioacct_request *req, int *fds,
		    size_t nfds, struct ioacct_reply *rep)
{
	struct pgw *x = ws->state;

	(void)fds;
	(void)nfds;
	switch (req->type) {
	case IOACCT_MSG_W_PG_CONNECT:
		pg_connect(x, req->u.worker.code, rep);
		break;
	case IOACCT_MSG_W_PG_PUT:
		pg_put(x, req->u.worker.keys, rep);
		break;
	case IOACCT_MSG_W_PG_OFFER:
		pg_offer(x, &req->u.worker, rep);
		break;
	case IOACCT_MSG_W_PG_CLAIM:
		pg_claim(x, &req->u.worker, rep);
		break;
	case IOACCT_MSG_W_PG_WRITTEN:
		pg_written(x, &req->u.worker, rep);
		break;
	case IOACCT_MSG_W_PG_PURGE:
	case IOACCT_MSG_W_PG_DOWNSAMPLE:
		pg_retain(x, &req->u.worker, req->type == IOACCT_MSG_W_PG_DOWNSAMPLE, rep);
		break;
	case IOACCT_MSG_QUERY:
		/* The core has applied private_data: it asks as root. */
		ioacct_query_serve_page_from(pg_select, x, &req->u.select, 0, false, rep);
		if (rep->status && !connected(x))
			rep->status = -ENOTCONN;
		break;
	case IOACCT_MSG_JOB:
		pg_job(x, &req->u.job, rep);
		break;
	default:
		ioacct_reply_error(rep, -EOPNOTSUPP, "the cluster store's worker does not serve %s",
				   ioacct_msg_type_name(req->type));
	}
	return 0;
}

static void pg_fini(struct ioacct_wside *ws)
{
	struct pgw *x = ws->state;

	if (!x)
		return;
	hold(x, NULL);
	ioacct_pgstore_close(x->pg);
	free(x);
}

static int add_file(void *ctx, const char *path)
{
	return ioacct_sb_files_add(ctx, path);
}

/* What libpq may read for cluster_db beyond /etc and /usr: never the store, though it is ours. */
static int pg_files(const struct ioacct_wside *ws, struct ioacct_sb_files *f)
{
	return ioacct_pgstore_conninfo_files(ws->cfg.cluster_db, add_file, f);
}

/* libpq reads its settings (~/.pgpass, certificates, the resolver's) and opens sockets. */
const struct ioacct_worker_kind ioacct_worker_pg = {
	.name = "pg",
	.init = pg_init,
	.serve = pg_serve,
	.fini = pg_fini,
	.groups = IOACCT_SB_BASE | IOACCT_SB_CLIENT | IOACCT_SB_READ_FILES,
	.files = pg_files,
};
