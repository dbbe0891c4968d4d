/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live view: /metrics over HTTP for Prometheus (metrics_listen).
 *
 * The exposition text is built in the daemon's main loop after each drain,
 * from the same counts as a SNAPSHOT request (the store's plus the kernel's),
 * and served by an unprivileged worker process (mserver.h, issue 37), which
 * is sent each page: a scrape never touches the registry, the store or the
 * maps, and a slow or hostile client never holds up the loop. A job finished since stays in the
 * text, with its final counts, for metrics_linger.
 *
 * Nor does one keep the others out: connections are limited per address,
 * with slots kept for metrics_priority; a request has a budget of time in
 * all, not only between bytes; failed logins throttle their address before
 * any hash is computed; the server's messages are rate-limited. The page is
 * built here (metrics.c); the server is httpd.c, in the worker (metricsw.c).
 */
#ifndef IOACCT_METRICS_H
#define IOACCT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "jobs.h"

struct ioacct_metrics;

/*
 * Binds cfg->metrics_listen and reads the server's files, as root at start.
 * NULL with `err` when it cannot (the address is taken, or ioacctd was
 * built without libmicrohttpd).
 */
struct ioacct_metrics *ioacct_metrics_start(const struct ioacct_config *cfg, char *err,
					    size_t errlen);
/*
 * Starts serving it (its worker), once ioacctd runs as its own account; a
 * setting the server refuses fails here. 0 or -errno with `err`.
 */
int ioacct_metrics_serve(struct ioacct_metrics *m, char *err, size_t errlen);

/*
 * Rebuilds the exposition from the registry; from the main loop, after a
 * drain that took drain_ns (0 when this call does not follow one). Nothing
 * changes on failure: scrapes get the previous page.
 */
void ioacct_metrics_update(struct ioacct_metrics *m, struct ioacct_registry *r, uint64_t drain_ns);

/* Stops the server and frees everything; NULL is fine. */
void ioacct_metrics_stop(struct ioacct_metrics *m);

#endif /* IOACCT_METRICS_H */
