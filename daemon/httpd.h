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
 * Makes ready to serve `page` on cfg->metrics_listen (the page must outlive
 * the server): the settings and files read, the address bound, as root,
 * before anything else starts. NULL with `err` when it cannot (a setting
 * refused, the address taken, or ioacctd built without libmicrohttpd).
 */
struct ioacct_httpd *ioacct_httpd_start(const struct ioacct_config *cfg, struct ioacct_page *page,
					char *err, size_t errlen);
/*
 * Starts serving: libmicrohttpd's threads, once ioacctd runs as its own
 * account (privs.h: no thread before). 0 or -errno with `err`.
 */
int ioacct_httpd_serve(struct ioacct_httpd *h, char *err, size_t errlen);
/* Stops the server after the request it is answering; NULL is fine. */
void ioacct_httpd_stop(struct ioacct_httpd *h);

#endif /* IOACCT_HTTPD_H */
