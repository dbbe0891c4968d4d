// SPDX-License-Identifier: GPL-2.0-or-later
/* Retention in ioacctd: the thread (see retainer.h). */
#include "retainer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "pgstore.h"
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
	int stop_fd;                  /* readable once stopping: PostgreSQL's waits give up */
	/* The thread's own: */
	struct ioacct_store *store;
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

/*
 * The cluster store's purge as it goes: a line per month purged whole and
 * per month's partitions dropped, the rest's batches every PROGRESS_LOG_MS.
 */
static int cluster_progress(const struct ioacct_pgstore_purge_progress *p, void *arg)
{
	struct ioacct_retainer *r = arg;
	uint64_t now = ioacct_mono_ms();

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
		if (now - r->logged_ms < PROGRESS_LOG_MS)
			break;
		log_info("retention: cluster store: purge in progress: %llu runs (%llu node parts,"
			 " %llu series rows) row by row so far (%llu s)",
			 (unsigned long long)p->counts.runs, (unsigned long long)p->counts.parts,
			 (unsigned long long)p->counts.series, (unsigned long long)(p->ms / 1000));
		r->logged_ms = now;
	}
	return wait_ms(r, 0);
}

/*
 * cluster_retention: the same cutoffs on the cluster store, whole runs
 * (pgstore.h), with a connection of its own for the round.
 */
static void run_cluster(struct ioacct_retainer *r)
{
	struct ioacct_pgstore_purge_counts c;
	const struct ioacct_config *cfg = r->cfg;
	int64_t now = ioacct_wall_ns() / (int64_t)NSEC_PER_SEC;
	struct ioacct_pgstore_opts o;
	struct ioacct_pgstore *pg;
	uint64_t t0 = ioacct_mono_ms();
	char err[1024];
	int ret;

	ioacct_pgstore_opts_config(&o, cfg, r->stop_fd);
	pg = ioacct_pgstore_open(cfg->cluster_db, &o, err, sizeof(err));
	if (!pg) {
		log_warn("retention: %s; the cluster store's purge waits for the next round", err);
		return;
	}
	if (cfg->purge_after_s) {
		memset(&c, 0, sizeof(c));
		r->logged_ms = t0;
		ret = ioacct_pgstore_purge(pg, ioacct_pgstore_purge_cutoff(now, cfg->purge_after_s),
					   false, cluster_progress, r, &c);
		if (ret)
			log_err("retention: cluster store: purge stopped after %llu runs: %s",
				(unsigned long long)c.runs, ioacct_pgstore_errmsg(pg));
		else if (c.runs)
			log_info("retention: cluster store: purged %llu runs (%llu node parts,"
				 " %llu series rows; %llu months whole, partitions dropped) in %llu ms",
				 (unsigned long long)c.runs, (unsigned long long)c.parts,
				 (unsigned long long)c.series, (unsigned long long)c.months,
				 (unsigned long long)(ioacct_mono_ms() - t0));
	}
	if (cfg->downsample_after_s && !wait_ms(r, 0)) {
		memset(&c, 0, sizeof(c));
		t0 = ioacct_mono_ms();
		ret = ioacct_pgstore_downsample(pg, now - (int64_t)cfg->downsample_after_s,
						cfg->downsample_width_s * NSEC_PER_SEC, false, &c);
		if (ret)
			log_err("retention: cluster store: downsample stopped after %llu runs: %s",
				(unsigned long long)c.runs, ioacct_pgstore_errmsg(pg));
		else if (c.runs)
			log_info("retention: cluster store: downsampled %llu runs (%llu node parts) in %llu ms",
				 (unsigned long long)c.runs, (unsigned long long)c.parts,
				 (unsigned long long)(ioacct_mono_ms() - t0));
	}
	ioacct_pgstore_close(pg);
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
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->stop_fd < 0) {
		ret = -errno;
		log_err("retention: cannot start: %s; nothing is purged", strerror(errno));
		free(r);
		return ret;
	}
	/* Its own connection: SQLite connections are not to be shared between threads. */
	r->store = ioacct_store_open(cfg->db_path, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!r->store) {
		ret = -errno;
		log_err("retention: cannot open the store: %s; nothing is purged", err);
		close(r->stop_fd);
		free(r);
		return ret;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&r->thread, NULL, retain_main, r);
	if (ret) {
		log_err("retention: cannot start its thread: %s; nothing is purged", strerror(ret));
		ioacct_store_close(r->store);
		close(r->stop_fd);
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return -ret;
	}
	log_info("retention: purge_after %s, downsample_after %s (to %s bins), every %s",
		 cfg->purge_after_s ? ioacct_duration_format(cfg->purge_after_s, p, sizeof(p)) : "off",
		 cfg->downsample_after_s ?
			 ioacct_duration_format(cfg->downsample_after_s, d, sizeof(d)) : "off",
		 ioacct_duration_format(cfg->downsample_width_s, w, sizeof(w)),
		 ioacct_duration_format(cfg->retention_interval_s, i, sizeof(i)));
	*out = r;
	return 0;
}

void ioacct_retainer_stop(struct ioacct_retainer *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	/* A purge's statement in flight is given up: rolled back, done again at the next start. */
	eventfd_write(r->stop_fd, 1);
	pthread_join(r->thread, NULL);
	ioacct_store_close(r->store);
	close(r->stop_fd);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
