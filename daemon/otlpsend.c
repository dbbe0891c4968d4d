// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The spans' way out: see otlpsend.h.
 */
#include "otlpsend.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "worker.h"

/* How much longer than the POST's own timeout the core waits for the worker's answer. */
#define MARGIN_MS 5000

/*
 * The daemon's one OTLP worker. Static, and never freed: the jobs' sender
 * threads are detached and may post after the job traces are gone (they
 * find no worker then).
 */
static struct {
	pthread_mutex_t lock;
	struct ioacct_worker *w;
} send = { .lock = PTHREAD_MUTEX_INITIALIZER };

int ioacct_otlpsend_start(const struct ioacct_config *cfg)
{
	struct ioacct_worker *w;
	char err[512];
	int ret;

	if (!cfg->otlp_url[0])
		return 0;
	w = ioacct_worker_new("otlp", NULL, 0, NULL, NULL);
	if (!w) {
		log_err("spans: cannot make the OTLP worker: %s", strerror(errno));
		return -errno;
	}
	ret = ioacct_worker_start(w, 0, err, sizeof(err));
	if (ret) {
		log_err("spans: %s; no spans will be sent", err);
		ioacct_worker_free(w);
		return ret;
	}
	pthread_mutex_lock(&send.lock);
	send.w = w;
	pthread_mutex_unlock(&send.lock);
	return 0;
}

void ioacct_otlpsend_stop(void)
{
	struct ioacct_worker *w;

	pthread_mutex_lock(&send.lock);
	w = send.w;
	send.w = NULL;
	pthread_mutex_unlock(&send.lock);
	ioacct_worker_free(w);
}

int ioacct_otlpsend_post(void *ctx, const void *body, size_t len, int timeout_ms,
			 int64_t *retry_after_ms, char *err, size_t errlen)
{
	struct ioacct_request req = { .type = IOACCT_MSG_W_POST };
	struct ioacct_reply rep;
	int fd, ret;

	(void)ctx; /* the worker POSTs to otlp_url, which the caller's URL is parsed from */
	*retry_after_ms = -1;
	fd = ioacct_worker_memfd("ioacct-otlp", body, len);
	if (fd < 0)
		return ioacct_seterr(err, errlen, fd, "cannot hand the batch over: %s", strerror(-fd));
	req.u.worker.size = len;
	pthread_mutex_lock(&send.lock);
	ret = send.w ? ioacct_worker_call(send.w, &req, &fd, 1, &rep, NULL, NULL,
					  timeout_ms + MARGIN_MS, err, errlen) :
		       ioacct_seterr(err, errlen, -ESHUTDOWN, "ioacctd is stopping");
	pthread_mutex_unlock(&send.lock);
	close(fd);
	if (ret)
		return ret;
	if (rep.status)
		ret = ioacct_seterr(err, errlen, rep.status, "%s", rep.error);
	else if (rep.w.code > 0 && rep.w.code < 1000)
		ret = (int)rep.w.code;
	else
		ret = ioacct_seterr(err, errlen, -EPROTO, "the OTLP worker said HTTP status %u",
				    rep.w.code);
	/* What the worker says: otlp.c gives a batch up rather than wait beyond its limit. */
	if (ret > 0)
		*retry_after_ms = rep.w.retry_after_ms < -1 ? -1 : rep.w.retry_after_ms;
	ioacct_reply_free(&rep);
	return ret;
}
