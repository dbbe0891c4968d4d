/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /metrics' HTTP server (libmicrohttpd's thread): serves the page the main
 * loop last built (metrics.c), never more, behind the limits metrics.h
 * describes: connections per address with slots kept for metrics_priority,
 * a budget of time per request, basic authentication (metrics_auth_file)
 * with failed logins throttled before any hash, HTTPS (metrics_tls_cert),
 * rate-limited messages.
 */
#ifndef IOACCT_HTTPD_H
#define IOACCT_HTTPD_H

#include <pthread.h>
#include <stddef.h>

#include "config.h"

/* The page served: written by the main loop, copied by the server thread, both under lock. */
struct ioacct_page {
	pthread_mutex_t lock;
	char *text;                  /* NULL until the first build: scrapes get 503 */
	size_t len;
};

struct ioacct_httpd;

/*
 * What the core opened for the server (mserver.c): the socket bound to
 * metrics_listen, and the files metrics_tls_cert, metrics_tls_key and
 * metrics_auth_file name (-1 when unset). The server takes those it uses
 * (-1 then): the listening socket once started, the files once read.
 */
struct ioacct_httpd_fds {
	int listen;
	int tls_cert, tls_key, auth;
};

/*
 * Serves `page` on fds->listen (cfg->metrics_listen); the page must
 * outlive the server. In the metrics worker (metricsw.c). NULL with `err`
 * when it cannot (a setting refused, or ioacctd built without
 * libmicrohttpd).
 */
struct ioacct_httpd *ioacct_httpd_start(const struct ioacct_config *cfg, struct ioacct_page *page,
					struct ioacct_httpd_fds *fds, char *err, size_t errlen);
/* Stops the server after the request it is answering; NULL is fine. */
void ioacct_httpd_stop(struct ioacct_httpd *h);

#endif /* IOACCT_HTTPD_H */
