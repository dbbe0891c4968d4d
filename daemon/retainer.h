/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Retention in ioacctd (purge_after, downsample_after; lib/store/retain.h):
 * a thread of its own, with its own SQLite connection, runs a purge and a
 * downsample at start and then every retention_interval. Each batch of jobs
 * is one short transaction, and the thread pauses between batches, so that
 * the main loop's drains and the socket's queries never wait long; readers
 * never wait at all (WAL). With cluster_retention, the same on the cluster
 * store through an unprivileged worker of its own (pgremote.h).
 */
#ifndef IOACCT_RETAINER_H
#define IOACCT_RETAINER_H

#include "config.h"

struct ioacct_retainer;

/*
 * Starts the thread (and the cluster store's worker: from main, since it
 * forks) when purge_after or downsample_after is set; *out stays NULL when
 * neither is. 0 or -errno (logged).
 */
int ioacct_retainer_start(const struct ioacct_config *cfg, struct ioacct_retainer **out);
/*
 * Stops the thread after its current batch, after ioacct_workers_cancel()
 * (which ends a cluster purge's call at once); NULL is fine.
 */
void ioacct_retainer_stop(struct ioacct_retainer *r);

#endif /* IOACCT_RETAINER_H */
