// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cluster job loader (see jobload.h). A few slots, each one job: QUEUED,
 * LOADING while the one thread reads it, then READY (kept KEEP_MS after its
 * last use), ABSENT or FAILED (kept until the next call sees it). A READY copy
 * serves the first page of one client, the one whose asking loaded it, and
 * the next pages of any: a client beginning anew gets the job read anew, as
 * up to date as before there was a loader. One thread at a time, with its own
 * connection, whose statements may take LOAD_STATEMENT_MS: a client asking for
 * another job meanwhile is told to ask again, and its load starts when this
 * one is done.
 */
#include "jobload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pgremote.h"
#include "util.h"

#define NSLOTS 4
/* The next pages and clients use a copy this long. */
#define KEEP_MS 60000
#define LOAD_STATEMENT_MS 60000

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_LOADING, SLOT_READY, SLOT_ABSENT, SLOT_FAILED };

struct slot {
	enum slot_state state;
	char cluster[IOACCT_NAME_MAX];
	uint64_t job_id;
	uint32_t run;                 /* the run's place among the id's runs + 1; 0: the last */
	uint32_t restart;             /* with run_start not 0: that run exactly */
	int64_t run_start;
	struct ioacct_jobdata *jd;
	uint64_t done_ms;             /* monotonic, when it left LOADING */
	uint64_t used_ms;             /* monotonic, last asked for */
	bool claimed;                 /* READY: a first page was served from it */
	int ret;                      /* FAILED: why, as -errno */
	char err[1024];
};

struct ioacct_jobload {
	pthread_mutex_t lock;         /* the slots' state, jd and err, and busy */
	struct slot slots[NSLOTS];
	pthread_t thread;
	bool busy;                    /* a thread was started and not yet joined */
	bool running;                 /* under lock: it has not finished */
	struct ioacct_pgremote *pg;   /* the threads': an unprivileged process's connection */
};

static uint64_t now_ms(void)
{
	return ioacct_mono_ns() / 1000000;
}

static void slot_clear(struct slot *s)
{
	ioacct_jobdata_free(s->jd);
	memset(s, 0, sizeof(*s));
}

static void *load_main(void *arg)
{
	struct ioacct_jobload *jl = arg;
	struct slot *s = NULL;
	struct ioacct_jobdata *jd = NULL;
	char cluster[IOACCT_NAME_MAX], err[1024] = "";
	uint64_t job_id = 0;
	uint32_t run = 0, restart = 0;
	int64_t run_start = 0;
	int ret = 0;

	pthread_mutex_lock(&jl->lock);
	for (size_t i = 0; i < NSLOTS && !s; i++)
		if (jl->slots[i].state == SLOT_LOADING)
			s = &jl->slots[i];
	if (s) {
		ioacct_strlcpy(cluster, s->cluster, sizeof(cluster));
		job_id = s->job_id;
		run = s->run;
		restart = s->restart;
		run_start = s->run_start;
	}
	pthread_mutex_unlock(&jl->lock);
	if (!s)
		goto done;
	if (!ioacct_pgremote_connected(jl->pg)) {
		ret = ioacct_pgremote_connect(jl->pg);
		if (ret)
			ioacct_seterr(err, sizeof(err), ret, "cluster store (cluster_db) unavailable: %s; "
				      "ioreport --local reads this node's part alone",
				      ioacct_pgremote_errmsg(jl->pg));
	}
	if (!ret) {
		uint64_t t0 = now_ms();

		ret = ioacct_pgremote_job_load(jl->pg, cluster, job_id, run, restart, run_start, &jd);
		if (ret && ret != -ENOENT)
			snprintf(err, sizeof(err), "%s%s%s",
				 ioacct_pgremote_connected(jl->pg) ? "" : "cluster store (cluster_db) unavailable: ",
				 ioacct_pgremote_errmsg(jl->pg),
				 ioacct_pgremote_connected(jl->pg) ? "" : "; ioreport --local reads this node's part alone");
		if (!ret)
			log_debug("cluster store: job %" PRIu64 " of %zu nodes read in %" PRIu64 " ms",
				  job_id, jd->nnodes ? jd->nnodes : 1, now_ms() - t0);
	}
	pthread_mutex_lock(&jl->lock);
	s->jd = jd;
	s->state = !ret ? SLOT_READY : ret == -ENOENT ? SLOT_ABSENT : SLOT_FAILED;
	s->ret = ret;
	ioacct_strlcpy(s->err, err, sizeof(s->err));
	s->done_ms = now_ms();
	pthread_mutex_unlock(&jl->lock);
done:
	pthread_mutex_lock(&jl->lock);
	jl->running = false;
	pthread_mutex_unlock(&jl->lock);
	return NULL;
}

struct ioacct_jobload *ioacct_jobload_new(const struct ioacct_config *cfg)
{
	struct ioacct_jobload *jl = calloc(1, sizeof(*jl));
	int e;

	if (!jl)
		return NULL;
	/* Started here, in the event loop's thread: only it forks workers (worker.h). */
	jl->pg = ioacct_pgremote_new(cfg, LOAD_STATEMENT_MS);
	if (!jl->pg) {
		e = errno;
		free(jl);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&jl->lock, NULL);
	return jl;
}

/* Joins a finished thread; starts the oldest queued load. Under lock. */
static void schedule(struct ioacct_jobload *jl)
{
	struct slot *next = NULL;
	int ret;

	if (jl->busy && jl->running)
		return;
	if (jl->busy) {
		pthread_mutex_unlock(&jl->lock);
		pthread_join(jl->thread, NULL);
		pthread_mutex_lock(&jl->lock);
		jl->busy = false;
	}
	for (size_t i = 0; i < NSLOTS; i++)
		if (jl->slots[i].state == SLOT_QUEUED &&
		    (!next || jl->slots[i].used_ms < next->used_ms))
			next = &jl->slots[i];
	if (!next)
		return;
	next->state = SLOT_LOADING;
	jl->running = true;
	ret = pthread_create(&jl->thread, NULL, load_main, jl);
	if (ret) {
		jl->running = false;
		next->state = SLOT_FAILED;
		next->done_ms = now_ms();
		next->ret = -ret;
		snprintf(next->err, sizeof(next->err), "cannot start a thread to read it: %s",
			 strerror(ret));
		return;
	}
	jl->busy = true;
}

/*
 * Whether slot s is the job asked for: a run named exactly is any copy of
 * it (however it was asked for), else the one being read for it; by place
 * (run), the one asked so.
 */
static bool same_job(const struct slot *s, const char *cluster, uint64_t job_id, uint32_t run,
		     uint32_t restart, int64_t run_start)
{
	const char *c = cluster ? cluster : "";

	if (s->state == SLOT_FREE || s->job_id != job_id)
		return false;
	if (!run_start)
		return !s->run_start && s->run == run && strcmp(s->cluster, c) == 0;
	if (s->state == SLOT_READY)
		return s->jd->job.restart == restart && s->jd->job.run_start == run_start &&
		       strcmp(s->jd->job.cluster, c) == 0;
	return s->run_start == run_start && s->restart == restart && strcmp(s->cluster, c) == 0;
}

int ioacct_jobload_get(struct ioacct_jobload *jl, const char *cluster, uint64_t job_id,
		       uint32_t run, uint32_t restart, int64_t run_start, bool fresh,
		       const struct ioacct_jobdata **jd, char *err, size_t errlen)
{
	uint64_t now = now_ms();
	struct slot *s = NULL, *victim = NULL;
	int ret = -EINPROGRESS;

	*jd = NULL;
	pthread_mutex_lock(&jl->lock);
	schedule(jl);
	for (size_t i = 0; i < NSLOTS; i++) {
		struct slot *c = &jl->slots[i];

		/* Copies nobody asked for in a while go. */
		if (c->state == SLOT_READY && now - c->used_ms > KEEP_MS)
			slot_clear(c);
		if (same_job(c, cluster, job_id, run, restart, run_start))
			s = c;
	}
	/* A first page gets a copy read for it: a copy another client began with is read again. */
	if (s && s->state == SLOT_READY && fresh && s->claimed) {
		slot_clear(s);
		s = NULL;
	}
	if (!s) {
		/* A free slot, else the least recently used one not being read. */
		for (size_t i = 0; i < NSLOTS; i++) {
			struct slot *c = &jl->slots[i];

			if (c->state == SLOT_LOADING)
				continue;
			if (c->state == SLOT_FREE) {
				victim = c;
				break;
			}
			if (!victim || c->used_ms < victim->used_ms)
				victim = c;
		}
		if (!victim) {
			pthread_mutex_unlock(&jl->lock);
			return ioacct_seterr(err, errlen, -EAGAIN, "the cluster store is busy: ask again");
		}
		slot_clear(victim);
		s = victim;
		ioacct_strlcpy(s->cluster, cluster ? cluster : "", sizeof(s->cluster));
		s->job_id = job_id;
		s->run = run;
		s->restart = restart;
		s->run_start = run_start;
		s->state = SLOT_QUEUED;
		s->used_ms = now;
		schedule(jl);
	}
	s->used_ms = now;
	switch (s->state) {
	case SLOT_READY:
		*jd = s->jd;
		s->claimed = s->claimed || fresh;
		ret = 0;
		break;
	case SLOT_ABSENT:
		slot_clear(s);
		ret = -ENOENT;
		break;
	case SLOT_FAILED:
		ret = ioacct_seterr(err, errlen, s->ret ? s->ret : -EIO, "%s", s->err);
		slot_clear(s);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&jl->lock);
	return ret;
}

void ioacct_jobload_free(struct ioacct_jobload *jl)
{
	if (!jl)
		return;
	if (jl->busy)
		pthread_join(jl->thread, NULL);
	for (size_t i = 0; i < NSLOTS; i++)
		slot_clear(&jl->slots[i]);
	ioacct_pgremote_free(jl->pg);
	pthread_mutex_destroy(&jl->lock);
	free(jl);
}
