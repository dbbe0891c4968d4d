// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics worker (worker.h; issue 37): httpd.c's server in a process
 * of its own, on the socket and files the core opened (mserver.c), serving
 * the page the core last sent (w_page). Its filter has no socket(), no
 * open(), no thread creation: libmicrohttpd's threads are started before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "httpd.h"
#include "sandbox.h"
#include "util.h"
#include "wside.h"

struct mstate {
	struct ioacct_page page;
	struct ioacct_httpd *httpd;
};

static int metrics_init(struct ioacct_wside *ws, int *fds, size_t nfds, char *err, size_t errlen)
{
	struct ioacct_httpd_fds hf = { -1, -1, -1, -1 };
	struct mstate *st = calloc(1, sizeof(*st));
	size_t i = 0;

	if (!st)
		return ioacct_seterr(err, errlen, -ENOMEM, "metrics: out of memory");
	pthread_mutex_init(&st->page.lock, NULL);
	ws->state = st;
	/* In mserver.c's order: the socket, then each file the settings name. */
	if (i < nfds)
		hf.listen = fds[i], fds[i++] = -1;
	if (ws->cfg.metrics_tls_cert[0] && i < nfds)
		hf.tls_cert = fds[i], fds[i++] = -1;
	if (ws->cfg.metrics_tls_key[0] && i < nfds)
		hf.tls_key = fds[i], fds[i++] = -1;
	if (ws->cfg.metrics_auth_file[0] && i < nfds)
		hf.auth = fds[i], fds[i++] = -1;
	st->httpd = ioacct_httpd_start(&ws->cfg, &st->page, &hf, err, errlen);
	/* What it did not take (a start that failed) is closed here. */
	for (size_t k = 0; k < 4; k++) {
		int fd = k == 0 ? hf.listen : k == 1 ? hf.tls_cert : k == 2 ? hf.tls_key : hf.auth;

		if (fd >= 0)
			close(fd);
	}
	return st->httpd ? 0 : -EINVAL;
}

/* A new page: read from its memfd, then swapped in under the lock the server copies under. */
static int metrics_serve(struct ioacct_wside *ws, const struct ioacct_request *req, int *fds,
			 size_t nfds, struct ioacct_reply *rep)
{
	struct mstate *st = ws->state;
	char *text = NULL, *old;
	int ret;

	if (req->type != IOACCT_MSG_W_PAGE) {
		ioacct_reply_error(rep, -EOPNOTSUPP, "the metrics worker serves pages only");
		return 0;
	}
	ret = nfds == 1 ? ioacct_wside_read_memfd(fds[0], req->u.worker.size, &text) : -EPROTO;
	if (ret) {
		log_warn("metrics: a page that did not come whole: %s", strerror(-ret));
		return 1;
	}
	pthread_mutex_lock(&st->page.lock);
	old = st->page.text;
	st->page.text = text;
	st->page.len = req->u.worker.size;
	pthread_mutex_unlock(&st->page.lock);
	free(old);
	return 1;
}

static void metrics_fini(struct ioacct_wside *ws)
{
	struct mstate *st = ws->state;

	if (!st)
		return;
	/* The server first: it reads the page. */
	ioacct_httpd_stop(st->httpd);
	pthread_mutex_destroy(&st->page.lock);
	free(st->page.text);
	free(st);
}

const struct ioacct_worker_kind ioacct_worker_metrics = {
	.name = "metrics",
	.init = metrics_init,
	.serve = metrics_serve,
	.fini = metrics_fini,
	.groups = IOACCT_SB_BASE | IOACCT_SB_SERVER,
};
