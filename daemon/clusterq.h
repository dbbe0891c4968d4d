/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cluster-wide queries (QUERY pages over cluster_db) off the event loop
 * (issue 24). A query of PostgreSQL takes what PostgreSQL takes: up to its
 * statement timeout, or a connect timeout when the server is silent. In the
 * event loop that was everyone's wait: registrations, finishes, drains and
 * root's iorun stood behind one user's loop of queries. Here the event loop
 * only queues the request; a worker thread, with its own connection to
 * PostgreSQL and its own read-only SQLite connection (this node's running
 * jobs), answers it, and the loop is woken (ioacct_clusterq_fd()) to send
 * the answer.
 *
 * Bounds: IOACCT_CLUSTERQ_MAX requests wait at most, a uid other than root
 * IOACCT_CLUSTERQ_PER_UID of them (as many as its connections); beyond,
 * -EBUSY at once. They wait rather than being refused sooner: a refused
 * client asks again at once, and 32 loops of them would take the CPU that
 * root's requests need. The uids take turns (one user's loops cannot starve
 * the others' queries). A request that waited
 * IOACCT_CLUSTERQ_WAIT_MS is answered -EBUSY rather than served late. When
 * PostgreSQL could not be reached, the requests that waited through that
 * attempt are answered with its error at once, rather than each waiting
 * for its own connect timeout; the next request tries again.
 *
 * Event-loop calls only, but for the worker's own work.
 */
#ifndef IOACCT_CLUSTERQ_H
#define IOACCT_CLUSTERQ_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "proto.h"

#define IOACCT_CLUSTERQ_MAX 256
#define IOACCT_CLUSTERQ_PER_UID 32
#define IOACCT_CLUSTERQ_WAIT_MS 10000

struct ioacct_clusterq;

/* Starts the worker. NULL with errno set (ENOMEM, or pthread_create's). */
struct ioacct_clusterq *ioacct_clusterq_new(const struct ioacct_config *cfg);
/* Stops the worker after its query; answers not taken are dropped. NULL is fine. */
void ioacct_clusterq_free(struct ioacct_clusterq *q);

/* Readable (an eventfd) when answers are ready: then ioacct_clusterq_take() them. */
int ioacct_clusterq_fd(const struct ioacct_clusterq *q);

/*
 * Queues a QUERY of `peer` for the client `tag`. 0; -EBUSY with rep filled
 * (the queue, or the uid's share of it, is full: ask again); -ENOMEM.
 */
int ioacct_clusterq_submit(struct ioacct_clusterq *q, const struct ioacct_request *req,
			   uid_t peer, void *tag, struct ioacct_reply *rep);

/*
 * One answer ready: true with the client's tag and the reply (the caller's
 * to free with ioacct_reply_free()); false when there is none.
 */
bool ioacct_clusterq_take(struct ioacct_clusterq *q, void **tag, struct ioacct_reply *rep);

/* The client `tag` went away: its request is dropped, its answer too when it comes. */
void ioacct_clusterq_cancel(struct ioacct_clusterq *q, void *tag);

#endif /* IOACCT_CLUSTERQ_H */
