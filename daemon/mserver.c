// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /metrics' server, the core's side: see mserver.h. The worker's side is
 * httpd.c with metricsw.c.
 */
#include "mserver.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "worker.h"

/* How long the daemon's start waits for the server to be ready. */
#define READY_MS 30000
/* The listening socket's backlog: Prometheus and a few curls, and what waits while the worker restarts. */
#define BACKLOG 128

struct ioacct_mserver {
	struct ioacct_worker *w;
	char *text;                  /* the last page, sent again to a worker started again */
	size_t len;
};

/* metrics_listen, bound and listening. -errno with err. */
static int listen_open(const struct ioacct_config *cfg, int *out, char *err, size_t errlen)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in a4;
		struct sockaddr_in6 a6;
	} la;
	unsigned char addr[sizeof(struct in6_addr)];
	socklen_t len;
	uint16_t port;
	int family, fd, one = 1, ret;

	if (ioacct_listen_parse(cfg->metrics_listen, &family, addr, &port))
		return ioacct_seterr(err, errlen, -EINVAL, "metrics_listen: \"%s\" is not ADDRESS:PORT",
				     cfg->metrics_listen);
	memset(&la, 0, sizeof(la));
	if (family == AF_INET6) {
		la.a6.sin6_family = AF_INET6;
		memcpy(&la.a6.sin6_addr, addr, sizeof(la.a6.sin6_addr));
		la.a6.sin6_port = htons(port);
		len = sizeof(la.a6);
	} else {
		la.a4.sin_family = AF_INET;
		memcpy(&la.a4.sin_addr, addr, sizeof(la.a4.sin_addr));
		la.a4.sin_port = htons(port);
		len = sizeof(la.a4);
	}
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ioacct_seterr(err, errlen, -errno, "metrics: socket: %s", strerror(errno));
	/* As libmicrohttpd did: a restart binds again at once; IPv6 means IPv6 only. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, &la.sa, len) || listen(fd, BACKLOG)) {
		ret = ioacct_seterr(err, errlen, -errno, "cannot serve /metrics on %s: %s; is another "
				    "program listening there? Change metrics_listen or remove it",
				    cfg->metrics_listen, strerror(errno));
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

/*
 * A file of the settings, opened for the worker to read (it may not open
 * it: often root's alone). Not waiting on a FIFO; a regular file only.
 */
static int file_open(const char *key, const char *path, int *out, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return ioacct_seterr(err, errlen, -errno, "%s %s: %s", key, path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return ioacct_seterr(err, errlen, -ESPIPE, "%s %s: not a regular file", key, path);
	}
	*out = fd;
	return 0;
}

/* The last page to the worker, in a sealed memfd; never waiting for it. */
static void page_send(struct ioacct_mserver *s)
{
	struct ioacct_request req = { .type = IOACCT_MSG_W_PAGE };
	int fd, ret;

	fd = ioacct_worker_memfd("ioacct-metrics", s->text, s->len);
	if (fd < 0) {
		log_warn("metrics: cannot hand the page to its server: %s", strerror(-fd));
		return;
	}
	req.u.worker.size = s->len;
	ret = ioacct_worker_send(s->w, &req, &fd, 1, NULL);
	/* Not running (it is started again, with the last page) or busy: the next page goes. */
	if (ret && ret != -ENOTCONN && ret != -EAGAIN)
		log_warn("metrics: cannot hand the page to its server: %s", strerror(-ret));
	close(fd);
}

/* The worker is (again) ready: it serves the last page. */
static void ready(void *ctx)
{
	struct ioacct_mserver *s = ctx;

	if (s->text)
		page_send(s);
}

static const struct ioacct_worker_ops ops = { .ready = ready };

struct ioacct_mserver *ioacct_mserver_open(const struct ioacct_config *cfg, char *err,
					   size_t errlen)
{
	struct ioacct_mserver *s = calloc(1, sizeof(*s));
	int fds[4] = { -1, -1, -1, -1 };
	size_t n = 1;
	int ret;

	if (!s) {
		ioacct_seterr(err, errlen, -ENOMEM, "metrics: out of memory");
		return NULL;
	}
	/* The worker checks that they go together; here each named one is opened. */
	ret = listen_open(cfg, &fds[0], err, errlen);
	if (!ret && cfg->metrics_tls_cert[0])
		ret = file_open("metrics_tls_cert", cfg->metrics_tls_cert, &fds[n++], err, errlen);
	if (!ret && cfg->metrics_tls_key[0])
		ret = file_open("metrics_tls_key", cfg->metrics_tls_key, &fds[n++], err, errlen);
	if (!ret && cfg->metrics_auth_file[0])
		ret = file_open("metrics_auth_file", cfg->metrics_auth_file, &fds[n++], err, errlen);
	if (!ret) {
		s->w = ioacct_worker_new("metrics", fds, n, &ops, s);
		if (!s->w)
			ret = ioacct_seterr(err, errlen, -errno, "metrics: %s", strerror(errno));
	}
	for (size_t i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret) {
		ioacct_mserver_stop(s);
		return NULL;
	}
	return s;
}

int ioacct_mserver_serve(struct ioacct_mserver *s, char *err, size_t errlen)
{
	return ioacct_worker_start(s->w, READY_MS, err, errlen);
}

void ioacct_mserver_page(struct ioacct_mserver *s, char *text, size_t len)
{
	free(s->text);
	s->text = text;
	s->len = len;
	page_send(s);
}

void ioacct_mserver_stop(struct ioacct_mserver *s)
{
	if (!s)
		return;
	ioacct_worker_free(s->w);
	free(s->text);
	free(s);
}
