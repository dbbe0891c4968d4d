/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store as the core's threads see it (issue 37): pgstore.h's
 * calls, made by an unprivileged worker (worker.h, "pg"; pgworker.c) that
 * holds the PostgreSQL connection. The exporter, the cluster queries, the
 * job loader and the retention each have their own, as they had their own
 * connection.
 * Each call waits for the worker (its thread, never the event loop); a
 * worker that dies fails the call, and is started again.
 *
 * Jobs cross over as the protocol's JOB pages, read by whoever needs them
 * as a client of ioacctd reads a job (job_fetch.h): the worker reads the
 * outbox's jobs from the exporter's thread, which serves them from memory;
 * the core reads a whole job, or a merged report's, from the worker. Query
 * pages are QUERY replies.
 *
 * The errors are pgstore.h's, and -ENOTCONN when the connection (or the
 * worker) is down: ioacct_pgremote_connected() false, errmsg says why.
 */
#ifndef IOACCT_PGREMOTE_H
#define IOACCT_PGREMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "model.h"
#include "pgstore.h"
#include "query.h"
#include "query_fetch.h"
#include "store.h"

struct ioacct_pgremote;

/*
 * A worker for one thread's connection: statement_ms 0 for the exporter's
 * and the retention's (which migrate the schema; their calls take what they
 * take), else a query connection's statement timeout. From the event
 * loop's thread or main (it forks). NULL with errno.
 */
struct ioacct_pgremote *ioacct_pgremote_new(const struct ioacct_config *cfg, int statement_ms);
/* Stops the worker and frees; NULL is fine. */
void ioacct_pgremote_free(struct ioacct_pgremote *r);

/* Connects when not connected (ioacct_pgstore_open or _open_query). 0 or -errno. */
int ioacct_pgremote_connect(struct ioacct_pgremote *r);
bool ioacct_pgremote_connected(const struct ioacct_pgremote *r);
const char *ioacct_pgremote_errmsg(const struct ioacct_pgremote *r);

/* ioacct_pgstore_jobs_put() (n == 1: _job_put()). */
int ioacct_pgremote_jobs_put(struct ioacct_pgremote *r, const struct ioacct_jobdata *const *jds,
			     size_t n);
int ioacct_pgremote_report_offer(struct ioacct_pgremote *r, const struct ioacct_job *job,
				 const struct ioacct_report_spec *spec);
/* ioacct_pgstore_report_claim() of this node's part; *jd read from the worker. */
int ioacct_pgremote_report_claim(struct ioacct_pgremote *r, const struct ioacct_job *part,
				 bool skip_locked, struct ioacct_pgstore_report *rep,
				 struct ioacct_jobdata **jd);
int ioacct_pgremote_report_written(struct ioacct_pgremote *r, const struct ioacct_job *part,
				   const char *missing);
/* ioacct_pgstore_jobs_select() with running_here this node's name, page by page. */
int ioacct_pgremote_jobs_select(struct ioacct_pgremote *r, const struct ioacct_store_filter *f,
				bool peaks, ioacct_query_fetch_fn fn, void *arg);
/*
 * cluster_retention's ioacct_pgstore_purge() (its progress logged by the
 * worker), and ioacct_pgstore_downsample() to bin_width_ns, of the runs
 * ended before cutoff_unix; last: the round's last call, the connection
 * closed after it (connected again at the next round's connect). *c: what
 * the worker said it did, failed or not (zero when it did not answer).
 */
int ioacct_pgremote_purge(struct ioacct_pgremote *r, int64_t cutoff_unix, bool last,
			  struct ioacct_pgstore_purge_counts *c);
int ioacct_pgremote_downsample(struct ioacct_pgremote *r, int64_t cutoff_unix,
			       uint64_t bin_width_ns, bool last,
			       struct ioacct_pgstore_purge_counts *c);
/*
 * ioacct_pgstore_job_load(), or with run_start not 0 ioacct_pgstore_run_load()
 * of the run (cluster, job_id, restart, run_start) exactly.
 */
int ioacct_pgremote_job_load(struct ioacct_pgremote *r, const char *cluster, uint64_t job_id,
			     uint32_t run, uint32_t restart, int64_t run_start,
			     struct ioacct_jobdata **out);

#endif /* IOACCT_PGREMOTE_H */
