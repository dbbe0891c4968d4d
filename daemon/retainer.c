// SPDX-License-Identifier: GPL-2.0-or-later
/* Retention in ioacctd: the thread (see retainer.h). */
#include "retainer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "log.h"
#include "pgremote.h"
#include "retain.h"
#include "store.h"
#include "util.h"

/* Between two batches: the main loop's transactions get the lock. */
#define BATCH_PAUSE_MS 20
/* A long purge says how far it is this often. */
#define PROGRESS_LOG_MS 10000

struct ioacct_retainer {
	const struct ioacct_config *cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;                    /* under lock */
	/* The thread's own: */
	struct ioacct_store *store;
	struct ioacct_pgremote *pg;   /* cluster_retention's worker, else NULL */
	const char *what;             /* "purge", "downsample": for the progress lines */
	uint64_t t0_ms, logged_ms;
};

/* Waits up to ms or until stopped; returns whether to stop. */
static bool wait_ms(struct ioacct_retainer *r, uint64_t ms)
{
	struct timespec ts;
	bool stop;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	while (!r->stop)
		if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
			break;
	stop = r->stop;
	pthread_mutex_unlock(&r->lock);
	return stop;
}

/* After each batch: say how far, let the main loop in, stop when asked. */
static int progress(const struct ioacct_retain_result *so_far, void *arg)
{
	struct ioacct_retainer *r = arg;
	uint64_t now = ioacct_mono_ms();

	if (now - r->logged_ms >= PROGRESS_LOG_MS) {
		log_info("retention: %s in progress: %llu jobs, %llu series rows so far (%llu s)",
			 r->what, (unsigned long long)so_far->jobs, (unsigned long long)so_far->rows,
			 (unsigned long long)((now - r->t0_ms) / 1000));
		r->logged_ms = now;
	}
	return wait_ms(r, BATCH_PAUSE_MS);
}

static void run_purge(struct ioacct_retainer *r)
{
	struct ioacct_retain_result res;
	char d[32];
	int64_t cutoff = ioacct_wall_ns() - (int64_t)(r->cfg->purge_after_s * NSEC_PER_SEC);
	int err;

	r->what = "purge";
	r->t0_ms = r->logged_ms = ioacct_mono_ms();
	err = ioacct_store_purge(r->store, cutoff, r->cfg->cluster_db[0] != '\0', false, progress, r,
				 &res);
	if (err)
		log_err("retention: purge stopped after %llu jobs: %s (the rest at the next round)",
			(unsigned long long)res.jobs, ioacct_store_errmsg(r->store));
	else if (res.jobs || res.kept_unexported)
		log_info("retention: purged %llu jobs ended more than %s ago (%llu series rows, about %llu bytes) in %llu batches, %llu ms; %llu kept until exported",
			 (unsigned long long)res.jobs,
			 ioacct_duration_format(r->cfg->purge_after_s, d, sizeof(d)),
			 (unsigned long long)res.rows, (unsigned long long)res.bytes,
			 (unsigned long long)res.batches,
			 (unsigned long long)(ioacct_mono_ms() - r->t0_ms),
			 (unsigned long long)res.kept_unexported);
	ioacct_retain_result_free(&res);
}

static void run_downsample(struct ioacct_retainer *r)
{
	struct ioacct_retain_result res;
	char d[32], w[32];
	int64_t cutoff = ioacct_wall_ns() - (int64_t)(r->cfg->downsample_after_s * NSEC_PER_SEC);
	int err;

	r->what = "downsample";
	r->t0_ms = r->logged_ms = ioacct_mono_ms();
	err = ioacct_store_downsample(r->store, cutoff, r->cfg->downsample_width_s * NSEC_PER_SEC,
				      r->cfg->cluster_db[0] != '\0', progress, r, &res);
	if (err)
		log_err("retention: downsample stopped after %llu jobs: %s (the rest at the next round)",
			(unsigned long long)res.jobs, ioacct_store_errmsg(r->store));
	else if (res.jobs)
		log_info("retention: downsampled %llu jobs ended more than %s ago to %s bins (%llu series rows fewer) in %llu ms",
			 (unsigned long long)res.jobs,
			 ioacct_duration_format(r->cfg->downsample_after_s, d, sizeof(d)),
			 ioacct_duration_format(r->cfg->downsample_width_s, w, sizeof(w)),
			 (unsigned long long)res.rows,
			 (unsigned long long)(ioacct_mono_ms() - r->t0_ms));
	ioacct_retain_result_free(&res);
}

/* A cluster round's call that failed; the runs done only when some were (a dead worker says none). */
static void stopped(struct ioacct_retainer *r, const char *what,
		    const struct ioacct_pgstore_purge_counts *c)
{
	char done[64] = "";

	if (c->runs)
		snprintf(done, sizeof(done), " after %llu runs", (unsigned long long)c->runs);
	log_err("retention: cluster store: %s stopped%s: %s (the rest at the next round)", what, done,
		ioacct_pgremote_errmsg(r->pg));
}

/*
 * cluster_retention: the same cutoffs on the cluster store, whole runs
 * (pgstore.h), through the retention's own worker (pgremote.h: no process
 * with privileges speaks to PostgreSQL), connected for the round. The
 * worker logs the purge as it goes; a stop ends its call at once
 * (ioacct_workers_cancel()); a worker that dies is said (worker.c) and the
 * round done again at the next.
 */
static void run_cluster(struct ioacct_retainer *r)
{
	struct ioacct_pgstore_purge_counts c;
	const struct ioacct_config *cfg = r->cfg;
	int64_t now = ioacct_wall_ns() / (int64_t)NSEC_PER_SEC;
	bool downsample = cfg->downsample_after_s != 0;
	uint64_t t0 = ioacct_mono_ms();
	int ret;

	if (ioacct_pgremote_connect(r->pg)) {
		log_warn("retention: %s; the cluster store's purge waits for the next round",
			 ioacct_pgremote_errmsg(r->pg));
		return;
	}
	if (cfg->purge_after_s) {
		ret = ioacct_pgremote_purge(r->pg, ioacct_pgstore_purge_cutoff(now, cfg->purge_after_s),
					    !downsample, &c);
		if (ret)
			stopped(r, "purge", &c);
		else if (c.runs)
			log_info("retention: cluster store: purged %llu runs (%llu node parts,"
				 " %llu series rows; %llu months whole, partitions dropped) in %llu ms",
				 (unsigned long long)c.runs, (unsigned long long)c.parts,
				 (unsigned long long)c.series, (unsigned long long)c.months,
				 (unsigned long long)(ioacct_mono_ms() - t0));
	}
	/* Not on a connection (or a worker) lost: the next round connects again. */
	if (downsample && ioacct_pgremote_connected(r->pg) && !wait_ms(r, 0)) {
		t0 = ioacct_mono_ms();
		ret = ioacct_pgremote_downsample(r->pg, now - (int64_t)cfg->downsample_after_s,
						 cfg->downsample_width_s * NSEC_PER_SEC, true, &c);
		if (ret)
			stopped(r, "downsample", &c);
		else if (c.runs)
			log_info("retention: cluster store: downsampled %llu runs (%llu node parts) in %llu ms",
				 (unsigned long long)c.runs, (unsigned long long)c.parts,
				 (unsigned long long)(ioacct_mono_ms() - t0));
	}
}

static void *retain_main(void *arg)
{
	struct ioacct_retainer *r = arg;

	do {
		/* Purge first: no point re-binning what is about to go. */
		if (r->cfg->purge_after_s)
			run_purge(r);
		if (r->cfg->downsample_after_s)
			run_downsample(r);
		if (r->cfg->cluster_retention && r->cfg->cluster_db[0])
			run_cluster(r);
	} while (!wait_ms(r, r->cfg->retention_interval_s * 1000));
	return NULL;
}

int ioacct_retainer_start(const struct ioacct_config *cfg, struct ioacct_retainer **out)
{
	struct ioacct_retainer *r;
	pthread_condattr_t ca;
	char err[1024], p[32], d[32], w[32], i[32];
	int ret;

	*out = NULL;
	if (!cfg->purge_after_s && !cfg->downsample_after_s)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = cfg;
	/* Its own connection: SQLite connections are not to be shared between threads. */
	r->store = ioacct_store_open(cfg->db_path, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!r->store) {
		ret = -errno;
		log_err("retention: cannot open the store: %s; nothing is purged", err);
		goto fail;
	}
	/* Started here, from main (it forks: worker.h), called by the thread. */
	if (cfg->cluster_retention && cfg->cluster_db[0]) {
		r->pg = ioacct_pgremote_new(cfg, 0);
		if (!r->pg) {
			ret = -errno;
			log_err("retention: cannot start the cluster store's worker: %s; nothing is purged",
				strerror(errno));
			goto fail;
		}
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&r->thread, NULL, retain_main, r);
	if (ret) {
		log_err("retention: cannot start its thread: %s; nothing is purged", strerror(ret));
		ret = -ret;
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		goto fail;
	}
	log_info("retention: purge_after %s, downsample_after %s (to %s bins), every %s",
		 cfg->purge_after_s ? ioacct_duration_format(cfg->purge_after_s, p, sizeof(p)) : "off",
		 cfg->downsample_after_s ?
			 ioacct_duration_format(cfg->downsample_after_s, d, sizeof(d)) : "off",
		 ioacct_duration_format(cfg->downsample_width_s, w, sizeof(w)),
		 ioacct_duration_format(cfg->retention_interval_s, i, sizeof(i)));
	*out = r;
	return 0;
fail:
	ioacct_pgremote_free(r->pg);
	ioacct_store_close(r->store);
	free(r);
	return ret;
}

void ioacct_retainer_stop(struct ioacct_retainer *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	/*
	 * A cluster purge's call in progress has ended (ioacct_workers_cancel(),
	 * before): its statement in flight rolled back, done again at the next start.
	 */
	pthread_join(r->thread, NULL);
	ioacct_pgremote_free(r->pg);
	ioacct_store_close(r->store);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
