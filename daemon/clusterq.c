// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Cluster-wide queries off the event loop (see clusterq.h). One worker
 * thread: PostgreSQL serves one statement per connection at a time anyway,
 * and a second connection would only share the same server's wait.
 *
 * A request is in one list under the lock: queued (oldest first), then
 * being served (the worker's `cur`), then done (answers for the loop).
 * A cancelled request is dropped from the queue at once, and its answer
 * when the worker is done with it.
 */
#include "clusterq.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pgremote.h"
#include "query.h"
#include "query_fetch.h"
#include "store.h"
#include "util.h"

/* The longest a statement may take, and (at least 2 s, libpq's least) to connect. */
#define STATEMENT_MS 2000

/*
 * Keys of this node's running jobs in the pages of a cluster query: above
 * every cluster store key (ids, times 2^20 per node), so that they come last.
 */
#define RUNNING_KEY_BASE (INT64_C(1) << 62)

struct creq {
	struct ioacct_req_select sel;
	uint32_t seq;
	uid_t peer;
	void *tag;
	bool cancelled;
	uint64_t queued_ms;
	struct ioacct_reply rep;
	struct creq *next;
};

struct ioacct_clusterq {
	const struct ioacct_config *cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int efd;
	/* Under lock: */
	bool stop;
	struct creq *queue, **queue_tail;
	struct creq *cur;
	uid_t last_uid;               /* the uid of the request served last */
	struct creq *done, **done_tail;
	unsigned int nqueued;
	/* The worker's own (the PostgreSQL connection: an unprivileged process's, pgremote.h): */
	struct ioacct_pgremote *pg;
	struct ioacct_store *store;
	uint64_t down_at_ms;          /* when connecting last failed (0: it did not) */
	char down_why[1024];
};

/* The state of one page: counting what the cluster store gave, then this node's running jobs. */
struct cluster_src {
	struct ioacct_clusterq *q;
	uint64_t queued_ms;
	bool peaks;
	ioacct_query_fetch_fn fn;
	void *arg;
	size_t given, limit;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int count_job(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		     size_t npeaks, void *arg)
{
	struct cluster_src *c = arg;
	int ret;

	/* The page is full: 1 is the page server's PAGE_FULL (the worker's pages run on). */
	if (c->limit && c->given >= c->limit)
		return 1;
	ret = c->fn(jd, peaks, npeaks, c->arg);

	c->given += ret == 0;
	return ret;
}

/* A running job of this node's store, keyed above the cluster store's. */
static int running_job(struct ioacct_store *st, const struct ioacct_job *job, void *arg)
{
	struct cluster_src *c = arg;
	struct ioacct_jobdata *jd = NULL, moved;
	struct ioacct_sample *series = NULL;
	struct ioacct_qpeak *peaks = NULL;
	size_t nseries = 0, npeaks = 0;
	int ret;

	/* Finished jobs are the cluster store's (or soon will be: the outbox drains in seconds). */
	if (job->end_ns)
		return 0;
	/* The page is full: 1 is the page server's PAGE_FULL (query_fetch.c). */
	if (c->limit && c->given >= c->limit)
		return 1;
	ret = ioacct_store_job_load_totals(st, job->key, &jd);
	if (!ret && c->peaks)
		ret = ioacct_store_job_series(st, job->key, &series, &nseries);
	if (!ret && c->peaks)
		ret = ioacct_query_peaks(series, nseries, &peaks, &npeaks);
	if (!ret) {
		moved = *jd;
		moved.job.key += RUNNING_KEY_BASE;
		ret = count_job(&moved, peaks, npeaks, c);
	}
	free(series);
	free(peaks);
	ioacct_jobdata_free(jd);
	return ret;
}

#define UNAVAILABLE "cluster store (cluster_db) unavailable: %s; ioacct --local reads this node's part alone"

/*
 * The worker's connections, (re)made when needed. A request that was queued
 * before connecting last failed gets that failure at once: it waited through
 * that attempt already, and a silent server would make each wait its own.
 */
static int cluster_connect(struct ioacct_clusterq *q, uint64_t queued_ms, char *err,
			   size_t errlen)
{
	char why[1024];
	int ret;

	if (!q->store) {
		q->store = ioacct_store_open(q->cfg->db_path, IOACCT_STORE_RDONLY, why, sizeof(why));
		if (!q->store) {
			ret = errno ? -errno : -EIO;
			snprintf(err, errlen, "cannot read this node's store: %s", why);
			return ret;
		}
	}
	if (ioacct_pgremote_connected(q->pg))
		return 0;
	if (queued_ms < q->down_at_ms) {
		snprintf(err, errlen, UNAVAILABLE, q->down_why);
		return -ECONNREFUSED;
	}
	ret = ioacct_pgremote_connect(q->pg);
	if (!ret)
		return 0;
	q->down_at_ms = now_ms();
	snprintf(q->down_why, sizeof(q->down_why), "%s", ioacct_pgremote_errmsg(q->pg));
	snprintf(err, errlen, UNAVAILABLE, q->down_why);
	return ret;
}

/* ioacct_query_select_fn over the cluster store, then this node's running jobs. */
static int cluster_select(void *src, const struct ioacct_store_filter *f, bool peaks,
			  ioacct_query_fetch_fn fn, void *arg, char *err, size_t errlen)
{
	struct cluster_src *c = src;
	struct ioacct_clusterq *q = c->q;
	struct ioacct_store_filter local;
	int ret;

	c->peaks = peaks;
	c->fn = fn;
	c->arg = arg;
	c->limit = f->limit;
	ret = cluster_connect(q, c->queued_ms, err, errlen);
	if (ret)
		return ret;
	if (f->after_key < RUNNING_KEY_BASE) {
		/* This node's running parts come from its own store, below (the worker leaves them out). */
		ret = ioacct_pgremote_jobs_select(q->pg, f, peaks, count_job, c);
		if (ret < 0) {
			if (ioacct_pgremote_connected(q->pg))
				snprintf(err, errlen, "%s", ioacct_pgremote_errmsg(q->pg));
			else
				snprintf(err, errlen, UNAVAILABLE, ioacct_pgremote_errmsg(q->pg));
		}
		if (ret || (f->limit && c->given >= f->limit))
			return ret;
	}
	/*
	 * Then this node's running jobs, which the cluster store has not yet
	 * (or has as its last step's export, left out above): this node's part
	 * of them (per node, as --local would list them).
	 */
	local = *f;
	local.after_key = f->after_key > RUNNING_KEY_BASE ? f->after_key - RUNNING_KEY_BASE : 0;
	local.limit = 0;
	ret = ioacct_store_jobs_select(q->store, &local, running_job, c);
	if (ret < 0)
		snprintf(err, errlen, "%s", ioacct_store_errmsg(q->store));
	return ret;
}

static void wake_loop(struct ioacct_clusterq *q)
{
	uint64_t one = 1;

	/* Fails only when the counter is full: the loop is woken anyway. */
	if (write(q->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("cluster queries: cannot wake the event loop: %s", strerror(errno));
}

static void serve(struct ioacct_clusterq *q, struct creq *cr)
{
	struct cluster_src src = { .q = q, .queued_ms = cr->queued_ms };

	memset(&cr->rep, 0, sizeof(cr->rep));
	cr->rep.seq = cr->seq;
	if (now_ms() - cr->queued_ms > IOACCT_CLUSTERQ_WAIT_MS) {
		ioacct_reply_error(&cr->rep, -EBUSY,
				   "cluster store busy: this query waited %d s for the queries before it; ask again",
				   IOACCT_CLUSTERQ_WAIT_MS / 1000);
		return;
	}
	ioacct_query_serve_page_from(cluster_select, &src, &cr->sel, (uint32_t)cr->peer,
				     q->cfg->private_data, &cr->rep);
}

/*
 * Takes the next request out of the queue, under lock: the oldest of a uid
 * other than the one served last, when there is one, so that one user's
 * many queries take turns with everyone else's rather than go first.
 */
static struct creq *next_request(struct ioacct_clusterq *q)
{
	struct creq **pp = &q->queue, *cr;

	for (struct creq **it = &q->queue; *it; it = &(*it)->next) {
		if ((*it)->peer != q->last_uid) {
			pp = it;
			break;
		}
	}
	cr = *pp;
	*pp = cr->next;
	if (q->queue_tail == &cr->next)
		q->queue_tail = pp;
	return cr;
}

static void *worker(void *arg)
{
	struct ioacct_clusterq *q = arg;
	struct creq *cr;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stop && !q->queue)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->stop)
			break;
		cr = next_request(q);
		q->last_uid = cr->peer;
		q->cur = cr;
		pthread_mutex_unlock(&q->lock);

		serve(q, cr);

		pthread_mutex_lock(&q->lock);
		q->cur = NULL;
		q->nqueued--;
		if (cr->cancelled) {
			ioacct_reply_free(&cr->rep);
			free(cr);
			continue;
		}
		cr->next = NULL;
		*q->done_tail = cr;
		q->done_tail = &cr->next;
		wake_loop(q);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct ioacct_clusterq *ioacct_clusterq_new(const struct ioacct_config *cfg)
{
	struct ioacct_clusterq *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return NULL;
	q->cfg = cfg;
	q->queue_tail = &q->queue;
	q->done_tail = &q->done;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0) {
		ret = errno;
		free(q);
		errno = ret;
		return NULL;
	}
	/* Started here, in the event loop's thread: only it forks workers (worker.h). */
	q->pg = ioacct_pgremote_new(cfg, STATEMENT_MS);
	if (!q->pg) {
		ret = errno;
		close(q->efd);
		free(q);
		errno = ret;
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	ret = pthread_create(&q->thread, NULL, worker, q);
	if (ret) {
		ioacct_pgremote_free(q->pg);
		pthread_cond_destroy(&q->cond);
		pthread_mutex_destroy(&q->lock);
		close(q->efd);
		free(q);
		errno = ret;
		return NULL;
	}
	return q;
}

static void free_list(struct creq *cr)
{
	while (cr) {
		struct creq *next = cr->next;

		ioacct_reply_free(&cr->rep);
		free(cr);
		cr = next;
	}
}

void ioacct_clusterq_free(struct ioacct_clusterq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	free_list(q->queue);
	free_list(q->done);
	ioacct_pgremote_free(q->pg);
	ioacct_store_close(q->store);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	close(q->efd);
	free(q);
}

int ioacct_clusterq_fd(const struct ioacct_clusterq *q)
{
	return q->efd;
}

/* How many requests of `uid` wait or are served; under lock. */
static unsigned int uid_queued(const struct ioacct_clusterq *q, uid_t uid)
{
	unsigned int n = q->cur && !q->cur->cancelled && q->cur->peer == uid;

	for (const struct creq *cr = q->queue; cr; cr = cr->next)
		n += cr->peer == uid;
	return n;
}

int ioacct_clusterq_submit(struct ioacct_clusterq *q, const struct ioacct_request *req,
			   uid_t peer, void *tag, struct ioacct_reply *rep)
{
	struct creq *cr = calloc(1, sizeof(*cr));
	int ret = 0;

	if (!cr)
		return -ENOMEM;
	cr->sel = req->u.select;
	cr->seq = req->seq;
	cr->peer = peer;
	cr->tag = tag;
	cr->queued_ms = now_ms();
	pthread_mutex_lock(&q->lock);
	if (q->nqueued >= IOACCT_CLUSTERQ_MAX) {
		ioacct_reply_error(rep, -EBUSY,
				   "cluster store busy: %u queries wait for it already; ask again",
				   q->nqueued);
		ret = -EBUSY;
	} else if (peer != 0 && uid_queued(q, peer) >= IOACCT_CLUSTERQ_PER_UID) {
		ioacct_reply_error(rep, -EBUSY,
				   "cluster store busy: uid %u has %d queries waiting for it already (the most a user may); ask again",
				   (unsigned int)peer, IOACCT_CLUSTERQ_PER_UID);
		ret = -EBUSY;
	} else {
		*q->queue_tail = cr;
		q->queue_tail = &cr->next;
		q->nqueued++;
		pthread_cond_signal(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	if (ret)
		free(cr);
	return ret;
}

bool ioacct_clusterq_take(struct ioacct_clusterq *q, void **tag, struct ioacct_reply *rep)
{
	struct creq *cr;
	uint64_t count;

	pthread_mutex_lock(&q->lock);
	cr = q->done;
	if (cr) {
		q->done = cr->next;
		if (!q->done)
			q->done_tail = &q->done;
	} else {
		/* All taken: the next answer wakes the loop again. */
		if (read(q->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
			log_warn("cluster queries: cannot read the eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&q->lock);
	if (!cr)
		return false;
	*tag = cr->tag;
	*rep = cr->rep;
	free(cr);
	return true;
}

void ioacct_clusterq_cancel(struct ioacct_clusterq *q, void *tag)
{
	struct creq **pp, *cr;

	pthread_mutex_lock(&q->lock);
	for (pp = &q->queue; (cr = *pp);) {
		if (cr->tag == tag) {
			*pp = cr->next;
			q->nqueued--;
			free(cr);
		} else {
			pp = &cr->next;
		}
	}
	q->queue_tail = &q->queue;
	while (*q->queue_tail)
		q->queue_tail = &(*q->queue_tail)->next;
	if (q->cur && q->cur->tag == tag)
		q->cur->cancelled = true;
	for (pp = &q->done; (cr = *pp);) {
		if (cr->tag == tag) {
			*pp = cr->next;
			ioacct_reply_free(&cr->rep);
			free(cr);
		} else {
			pp = &cr->next;
		}
	}
	q->done_tail = &q->done;
	while (*q->done_tail)
		q->done_tail = &(*q->done_tail)->next;
	pthread_mutex_unlock(&q->lock);
}
