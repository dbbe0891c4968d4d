/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole jobs read from the cluster store off the event loop. A job of many
 * nodes takes seconds to read (tests/bench/merged-bench: 64 nodes, an hour of
 * 1 s bins); the event loop must not wait for it, since registrations would.
 * A JOB request for such a job starts a loader thread and is answered
 * -EINPROGRESS; the client asks again (lib/store/job_fetch.c) and gets its
 * pages from the loaded copy, which is kept a while for the next pages and
 * the next client. Event-loop calls only, but for the thread's own work.
 */
#ifndef IOACCT_JOBLOAD_H
#define IOACCT_JOBLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "model.h"

struct ioacct_jobload;

/*
 * NULL with errno set (out of memory, the cluster store's worker not
 * started). cfg: cluster_db's, living as long. From the event loop.
 */
struct ioacct_jobload *ioacct_jobload_new(const struct ioacct_config *cfg);
/* Waits for a running load; NULL is fine. */
void ioacct_jobload_free(struct ioacct_jobload *jl);

/*
 * Job job_id of cluster (NULL or "": the newest cluster's) whole, of run
 * `run` (its place among the id's runs + 1; 0: the last), as
 * ioacct_pgstore_job_load() gives it; run_start not 0: the run (cluster,
 * job_id, restart, run_start) exactly, as a client's later pages name it
 * (ioacct_pgstore_run_load()), a copy however it was asked for serving
 * them. `fresh` (a client's first page): only
 * a copy no first page was served from yet will do, else it is read again;
 * else (the next pages) any kept copy serves. 0 with *jd (the loader's, valid until the next call), -EINPROGRESS
 * while it is being read (ask again), -ENOENT when the cluster store does not
 * have it, another -errno with err filled when reading it failed (said once:
 * the next call reads it again).
 */
int ioacct_jobload_get(struct ioacct_jobload *jl, const char *cluster, uint64_t job_id,
		       uint32_t run, uint32_t restart, int64_t run_start, bool fresh,
		       const struct ioacct_jobdata **jd, char *err, size_t errlen);

#endif /* IOACCT_JOBLOAD_H */
