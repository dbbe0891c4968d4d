/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /metrics' server as the core sees it (issue 37): an unprivileged worker
 * (worker.h, "metrics") runs httpd.c; the core binds metrics_listen (so a
 * taken address, or a port below 1024, is the core's business at start),
 * opens metrics_tls_cert, metrics_tls_key and metrics_auth_file (files
 * only root may read, often) and hands the worker the descriptors; each
 * page metrics.c builds goes to it as a sealed memfd. A worker that dies
 * is started again with the same socket (connections wait in its backlog)
 * and the last page.
 */
#ifndef IOACCT_MSERVER_H
#define IOACCT_MSERVER_H

#include <stddef.h>

#include "config.h"

struct ioacct_mserver;

/*
 * Binds cfg->metrics_listen and opens the files the settings name, at
 * start (as root: a port below 1024, files only root may read). NULL with
 * err (the address taken, a file that cannot be read).
 */
struct ioacct_mserver *ioacct_mserver_open(const struct ioacct_config *cfg, char *err,
					   size_t errlen);
/*
 * Starts the worker, once the daemon runs as its account, and waits for it
 * to be ready: a setting it refuses (metrics_auth_file's hashes, TLS)
 * fails here. 0 or -errno with err.
 */
int ioacct_mserver_serve(struct ioacct_mserver *s, char *err, size_t errlen);
/*
 * The page to serve from now: s takes text (malloc'd). From the event
 * loop; never waits for the worker.
 */
void ioacct_mserver_page(struct ioacct_mserver *s, char *text, size_t len);
/* Stops the worker, closes the socket; NULL is fine. */
void ioacct_mserver_stop(struct ioacct_mserver *s);

#endif /* IOACCT_MSERVER_H */
