// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exporter (see export.h). One thread: connect, take the oldest queued
 * jobs (up to a batch: a backlog goes in one transaction, pgstore.h), write
 * them to PostgreSQL, unqueue them in SQLite, next. When PostgreSQL
 * cannot be reached it retries after 1 s, doubling to 60 s, and logs only
 * when the state changes ("unreachable ...; N jobs waiting", "back"). Every
 * wait for PostgreSQL has its deadline (cluster_db_*_timeout, pgstore.h)
 * and ends at once at the stop: what was not committed stays queued.
 *
 * A job of several nodes whose epilog asked for a merged report has its
 * spec in SQLite (report_specs, with the finish). After its part is
 * committed the exporter offers the report in PostgreSQL (job_reports)
 * and claims it under the row's lock: the node that sees every expected
 * part there writes it, as the user, and marks it written; the others see
 * it written, or not yet complete. With an empty outbox it looks again at
 * the specs it keeps: written elsewhere (drop), or past the deadline
 * (merge_timeout) with nodes missing, then written without them (FOR
 * UPDATE SKIP LOCKED: one node does). The job never waits for any of it.
 *
 * A running job is queued at each step's end (registry.c): what its
 * finished steps (and its running ones, so far) counted reaches the
 * cluster store before it ends, as a row without an end that each export
 * replaces; the merged report waits for the parts that have one.
 *
 * A job whose data PostgreSQL refuses (a constraint, a value out of range)
 * is said once and unqueued, never retried; its merged report, if it had
 * one, becomes this node's part, written here (issue 24).
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "log.h"
#include "pgremote.h"
#include "pgstore.h"
#include "render.h"
#include "store.h"
#include "text.h"
#include "worker.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000
/* With an empty outbox, look again this often even without a poke. */
#define IDLE_POLL_MS 2000

struct ioacct_export {
	const struct ioacct_config *cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;                   /* under lock */
	bool poked;                  /* under lock */
	/* The thread's own: */
	struct ioacct_store *store;
	/* The cluster store's connection, in an unprivileged process (pgremote.h). */
	struct ioacct_pgremote *pg;
	bool down;                   /* "unreachable" was logged, "back" was not yet */
	int64_t after;               /* jobs refused this round: take the ones after them */
	uint64_t backoff_ms;
};

/* Waits up to ms, or until poked or stopped; returns whether to stop. */
static bool wait_ms(struct ioacct_export *ex, uint64_t ms)
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
	pthread_mutex_lock(&ex->lock);
	while (!ex->stop && !ex->poked)
		if (pthread_cond_timedwait(&ex->cond, &ex->lock, &ts) == ETIMEDOUT)
			break;
	ex->poked = false;
	stop = ex->stop;
	pthread_mutex_unlock(&ex->lock);
	return stop;
}

/* Stopping: told so, or the daemon's workers' calls cancelled first (ioacctd.c's stop). */
static bool stopping(struct ioacct_export *ex)
{
	bool stop;

	pthread_mutex_lock(&ex->lock);
	stop = ex->stop;
	pthread_mutex_unlock(&ex->lock);
	return stop || ioacct_workers_stopping();
}

static uint64_t waiting(struct ioacct_export *ex)
{
	uint64_t n = 0;

	if (ioacct_store_export_count(ex->store, &n))
		return 0;
	return n;
}

/* A failure of the cluster store: log it once, back off. */
static void went_down(struct ioacct_export *ex, const char *why)
{
	if (stopping(ex)) {
		/* Nothing is lost: unqueued only after PostgreSQL's commit, the rest waits. */
		log_info("cluster store: export given up at the stop (%s); %" PRIu64
			 " jobs wait in the outbox for the next start", why, waiting(ex));
		ex->down = true;
		return;
	}
	if (!ex->down)
		log_warn("cluster store unreachable: %s; %" PRIu64 " jobs waiting (retrying, up to every %d s)",
			 why, waiting(ex), BACKOFF_MAX_MS / 1000);
	else
		log_debug("cluster store still unreachable: %s", why);
	ex->down = true;
	ex->after = 0;
	ex->backoff_ms = ex->backoff_ms ? ex->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (ex->backoff_ms > BACKOFF_MAX_MS)
		ex->backoff_ms = BACKOFF_MAX_MS;
}

static int connect_pg(struct ioacct_export *ex)
{
	int ret;

	if (ioacct_pgremote_connected(ex->pg))
		return 0;
	ret = ioacct_pgremote_connect(ex->pg);
	if (ret)
		went_down(ex, ioacct_pgremote_errmsg(ex->pg));
	return ret;
}

/*
 * The merged report of job key (cluster/job_id), if this node keeps one:
 * offer it, then claim it (skip_locked: the idle poll) and write it when
 * this node is the one. The spec is dropped once the report is written,
 * here or by another node; kept while it waits, or PostgreSQL failed.
 */
static void merge_report(struct ioacct_export *ex, int64_t key, const struct ioacct_job *job,
			 bool skip_locked)
{
	struct ioacct_report_spec *spec;
	struct ioacct_pgstore_report rep;
	struct ioacct_jobdata *jd = NULL;
	unsigned int failed;
	int err;

	spec = malloc(sizeof(*spec));
	if (!spec)
		return;
	err = ioacct_store_report_spec_get(ex->store, key, spec);
	if (err) {
		if (err != -ENOENT)
			log_warn("cluster store: %s", ioacct_store_errmsg(ex->store));
		free(spec);
		return;
	}
	err = ioacct_pgremote_report_offer(ex->pg, job, spec);
	free(spec);
	if (!err)
		err = ioacct_pgremote_report_claim(ex->pg, job, skip_locked, &rep, &jd);
	if (err == -EAGAIN)
		return;
	if (err == -EALREADY) {
		log_debug("job %s/%" PRIu64 ": merged report written by another node", job->cluster,
			  job->job_id);
		ioacct_store_report_spec_done(ex->store, key);
		return;
	}
	if (err) {
		log_warn("job %s/%" PRIu64 ": merged report: %s", job->cluster, job->job_id,
			 ioacct_pgremote_errmsg(ex->pg));
		return;
	}
	failed = ioacct_report_write_files(jd, rep.spec.path, rep.spec.formats, NULL, rep.uid,
					   rep.gid, rep.spec.copy_dir, &ex->cfg->advice, NULL);
	/* Written or not, it is done: a file that cannot be written now will not be later. */
	err = ioacct_pgremote_report_written(ex->pg, job, jd->missing_nodes);
	if (err) {
		log_warn("job %s/%" PRIu64 ": merged report written, not marked (it may be written again): %s",
			 job->cluster, job->job_id, ioacct_pgremote_errmsg(ex->pg));
	} else {
		ioacct_store_report_spec_done(ex->store, key);
		if (jd->missing_nodes[0])
			log_warn("job %s/%" PRIu64 ": merged report %s written without nodes %s (nothing from them within %" PRIu32 " s)",
				 job->cluster, job->job_id, rep.spec.path, jd->missing_nodes,
				 jd->missing_after_s);
		else
			log_info("job %s/%" PRIu64 ": merged report of nodes %s written%s", job->cluster,
				 job->job_id, rep.spec.nodes, failed ? " (some files failed, see above)" : "");
	}
	ioacct_jobdata_free(jd);
}

/*
 * With an empty outbox: every merged report this node keeps, once. Those
 * written elsewhere are dropped, overdue ones written without the missing.
 */
static void merge_poll(struct ioacct_export *ex)
{
	struct ioacct_job job;
	int64_t key = 0;

	if (connect_pg(ex))
		return;
	while (!stopping(ex) && ioacct_store_report_spec_next(ex->store, key, &key) == 0) {
		if (ioacct_store_job_get(ex->store, key, &job) == 0)
			merge_report(ex, key, &job, true);
		if (!ioacct_pgremote_connected(ex->pg))
			break;
	}
}

/*
 * PostgreSQL refused the job's data (pgstore.h: -EINVAL), which it would
 * refuse again: said once, unqueued (the job stays in this node's store),
 * and when the epilog left its report to a merged one, this node's part
 * written here instead, as the epilog would have written it.
 */
static void refused(struct ioacct_export *ex, int64_t key, const struct ioacct_jobdata *jd)
{
	struct ioacct_report_spec *spec;
	char cluster[sizeof(jd->job.cluster) * 4];
	int err;

	ioacct_text_clean(cluster, sizeof(cluster), jd->job.cluster);
	log_err("job %s/%" PRIu64 " refused by the cluster store, not exported (it stays in %s): %s",
		cluster, jd->job.job_id, ex->cfg->db_path, ioacct_pgremote_errmsg(ex->pg));
	err = ioacct_store_export_done(ex->store, key, -1);
	if (err)
		log_warn("cluster store: job %" PRIu64 " refused but not unqueued: %s", jd->job.job_id,
			 ioacct_store_errmsg(ex->store));
	spec = malloc(sizeof(*spec));
	if (!spec)
		return;
	err = ioacct_store_report_spec_get(ex->store, key, spec);
	if (!err) {
		unsigned int failed = ioacct_report_write_files(jd, spec->path, spec->formats,
								 jd->job.node, jd->job.uid,
								 jd->job.gid, spec->copy_dir,
								 &ex->cfg->advice, NULL);

		log_info("job %s/%" PRIu64 ": no merged report; this node's part written%s", cluster,
			 jd->job.job_id, failed ? " in part (see above)" : "");
		ioacct_store_report_spec_done(ex->store, key);
	} else if (err != -ENOENT) {
		log_warn("cluster store: %s", ioacct_store_errmsg(ex->store));
	}
	free(spec);
}

/* A queued job: its key and generation in the outbox, and its data. */
struct part {
	int64_t key, gen;
	struct ioacct_jobdata *jd;
};

/*
 * The next jobs of the outbox, after ex->after, loaded: up to a batch
 * (pgstore.h's limits). 0 with *n > 0; -ENOENT when the outbox is empty,
 * -EAGAIN at the end of a round with jobs that failed, another -errno when
 * the outbox cannot be read.
 */
static int next_batch(struct ioacct_export *ex, struct part *p, size_t *n)
{
	int64_t after = ex->after;
	size_t samples = 0;
	int err = 0;

	*n = 0;
	while (*n < IOACCT_PGSTORE_BATCH_JOBS && samples < IOACCT_PGSTORE_BATCH_SAMPLES) {
		struct part *q = &p[*n];

		err = ioacct_store_export_next(ex->store, after, &q->key, &q->gen);
		if (err) {
			if (err != -ENOENT)
				log_warn("cluster store: cannot read the outbox: %s",
					 ioacct_store_errmsg(ex->store));
			break;
		}
		after = q->key;
		q->jd = NULL;
		err = ioacct_store_job_load(ex->store, q->key, &q->jd);
		if (err == -ENOENT) {
			/* Deleted from the store since (ON DELETE CASCADE should have unqueued). */
			ioacct_store_export_done(ex->store, q->key, -1);
			continue;
		}
		if (err) {
			log_warn("cluster store: cannot load job %" PRId64 " from %s: %s", q->key,
				 ex->cfg->db_path, ioacct_store_errmsg(ex->store));
			break;
		}
		/* Records (schema 9) weigh as the samples of the same memory: ~8 a file. */
		samples += q->jd->nseries + q->jd->ntotals +
			   (q->jd->nfiles * sizeof(*q->jd->files) +
			    q->jd->nmpiio * sizeof(*q->jd->mpiio) + q->jd->nh5 * sizeof(*q->jd->h5)) /
			   sizeof(*q->jd->series);
		(*n)++;
	}
	if (*n)
		return 0;
	if (err == -ENOENT && ex->after) {
		/* The end of a round with jobs that failed: try them again after the backoff. */
		ex->after = 0;
		return -EAGAIN;
	}
	return err;
}

/* PostgreSQL answered: the end of an outage, if there was one. */
static void back(struct ioacct_export *ex)
{
	if (ex->down) {
		log_info("cluster store back; %" PRIu64 " jobs waiting", waiting(ex));
		ex->down = false;
	}
	ex->backoff_ms = 0;
}

/* PostgreSQL has committed the job: unqueued, and maybe the last part of a merged report. */
static void exported(struct ioacct_export *ex, const struct part *p)
{
	/* Queued again meanwhile (a step ended, the job finished): it stays, for the next round. */
	int err = ioacct_store_export_done(ex->store, p->key, p->gen);

	if (err)
		log_warn("cluster store: job %" PRIu64 " exported but not unqueued (it will be written again): %s",
			 p->jd->job.job_id, ioacct_store_errmsg(ex->store));
	else
		log_debug("cluster store: job %" PRIu64 " of cluster %s exported", p->jd->job.job_id,
			  p->jd->job.cluster);
	merge_report(ex, p->key, &p->jd->job, false);
}

/*
 * Exports one job in its own transaction: 0 when done (or refused), another
 * -errno when it failed and the exporter must back off.
 */
static int export_part(struct ioacct_export *ex, const struct part *p)
{
	const struct ioacct_jobdata *jd = p->jd;
	int err = connect_pg(ex);

	/* Not connected: connect_pg() said so. */
	if (err)
		return err;
	err = ioacct_pgremote_jobs_put(ex->pg, &jd, 1);
	if (err == -EINVAL && ioacct_pgremote_connected(ex->pg)) {
		refused(ex, p->key, p->jd);
		return 0;
	}
	if (err) {
		if (ioacct_pgremote_connected(ex->pg)) {
			/* Connected, and failed (not for its data): say which job, try it again later. */
			log_warn("%s; it stays queued", ioacct_pgremote_errmsg(ex->pg));
			ex->after = p->key;
			ex->backoff_ms = ex->backoff_ms ? ex->backoff_ms * 2 : BACKOFF_MIN_MS;
			if (ex->backoff_ms > BACKOFF_MAX_MS)
				ex->backoff_ms = BACKOFF_MAX_MS;
		} else {
			went_down(ex, ioacct_pgremote_errmsg(ex->pg));
		}
	}
	if (err)
		return err;
	back(ex);
	/* PostgreSQL has committed: a crash from here re-exports the job, harmlessly. */
	ioacct_crash_point("export-after-pg-commit");
	exported(ex, p);
	return 0;
}

/*
 * Exports the next jobs of the outbox: a backlog in one transaction (one
 * commit, a dozen round trips, for up to a batch of jobs), unqueued only
 * once it is committed. When the batch fails with PostgreSQL still there,
 * its jobs go again one a transaction, so that the one at fault is said
 * (and refused, or kept) alone and the others go in. 0 when done, -ENOENT
 * when the outbox is empty, another -errno when the exporter must back off.
 */
static int export_batch(struct ioacct_export *ex)
{
	struct part p[IOACCT_PGSTORE_BATCH_JOBS];
	const struct ioacct_jobdata *jds[IOACCT_PGSTORE_BATCH_JOBS];
	size_t n;
	int err, ret = 0;

	err = next_batch(ex, p, &n);
	if (err)
		return err;
	if (n > 1) {
		for (size_t i = 0; i < n; i++)
			jds[i] = p[i].jd;
		ret = connect_pg(ex);
		if (ret)
			goto out; /* said */
		err = ioacct_pgremote_jobs_put(ex->pg, jds, n);
		if (!err) {
			back(ex);
			ioacct_crash_point("export-after-pg-commit");
			for (size_t i = 0; i < n; i++)
				exported(ex, &p[i]);
			goto out;
		}
		if (!ioacct_pgremote_connected(ex->pg)) {
			went_down(ex, ioacct_pgremote_errmsg(ex->pg));
			ret = err;
			goto out;
		}
		log_info("%s; its jobs go again one a transaction", ioacct_pgremote_errmsg(ex->pg));
	}
	for (size_t i = 0; i < n; i++) {
		err = export_part(ex, &p[i]);
		if (!err)
			continue;
		ret = err;
		if (!ioacct_pgremote_connected(ex->pg))
			break;
	}
out:
	for (size_t i = 0; i < n; i++)
		ioacct_jobdata_free(p[i].jd);
	return ret;
}

static void *export_main(void *arg)
{
	struct ioacct_export *ex = arg;
	int err;

	while (!stopping(ex)) {
		err = export_batch(ex);
		/* Nothing left to export, or only jobs PostgreSQL refused: the kept reports. */
		if (err == -ENOENT || err == -EAGAIN)
			merge_poll(ex);
		if (err == -ENOENT) {
			if (wait_ms(ex, IDLE_POLL_MS))
				break;
		} else if (err && !ex->after) {
			if (wait_ms(ex, ex->backoff_ms ? ex->backoff_ms : BACKOFF_MIN_MS))
				break;
		}
	}
	return NULL;
}

int ioacct_export_start(const struct ioacct_config *cfg, struct ioacct_export **out)
{
	struct ioacct_export *ex;
	pthread_condattr_t ca;
	char err[1024];
	int ret;

	*out = NULL;
	if (!cfg->cluster_db[0])
		return 0;
	if (!ioacct_pgstore_available()) {
		log_err("cluster_db is set, but this ioacctd was built without libpq: jobs are not exported (install libpq-dev and rebuild)");
		return -ENOTSUP;
	}
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	ex->cfg = cfg;
	/* Its own connection: SQLite connections are not to be shared between threads. */
	ex->store = ioacct_store_open(cfg->db_path, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!ex->store) {
		ret = -errno;
		log_err("cluster store: cannot open the outbox: %s", err);
		free(ex);
		return ret;
	}
	/* PostgreSQL is spoken to by an unprivileged process, started here (the event loop's thread). */
	ex->pg = ioacct_pgremote_new(cfg, 0);
	if (!ex->pg) {
		ret = -errno;
		log_err("cluster store: cannot start its worker: %s", strerror(errno));
		ioacct_store_close(ex->store);
		free(ex);
		return ret;
	}
	pthread_mutex_init(&ex->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ex->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&ex->thread, NULL, export_main, ex);
	if (ret) {
		log_err("cluster store: cannot start the exporter thread: %s", strerror(ret));
		ioacct_pgremote_free(ex->pg);
		ioacct_store_close(ex->store);
		pthread_cond_destroy(&ex->cond);
		pthread_mutex_destroy(&ex->lock);
		free(ex);
		return -ret;
	}
	log_info("exporting finished jobs to the cluster store (cluster_db)");
	*out = ex;
	return 0;
}

/* Sets one of the flags the thread waits on (poked, stop) and wakes it. */
static void wake(struct ioacct_export *ex, bool *flag)
{
	pthread_mutex_lock(&ex->lock);
	*flag = true;
	pthread_cond_signal(&ex->cond);
	pthread_mutex_unlock(&ex->lock);
}

void ioacct_export_poke(struct ioacct_export *ex)
{
	if (ex)
		wake(ex, &ex->poked);
}

void ioacct_export_stop(struct ioacct_export *ex)
{
	if (!ex)
		return;
	wake(ex, &ex->stop);
	/* A call to the worker in progress ends at once: ioacct_workers_cancel(). */
	pthread_join(ex->thread, NULL);
	ioacct_pgremote_free(ex->pg);
	ioacct_store_close(ex->store);
	pthread_cond_destroy(&ex->cond);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}
