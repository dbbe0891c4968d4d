// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The OTLP worker (worker.h, otlpsend.h; issue 37): POSTs the batches the
 * core encoded to otlp_url through libcurl (lib/trace/http.c: https with
 * otlp_ca_file, keep-alive, the site's proxy) and says what the collector
 * answered, its Retry-After too (the core decides whether to send again).
 * What parses the collector's answer, and TLS, run here, without
 * privileges; its filter lets it open sockets and read files (the CA
 * certificates, the resolver's) and nothing else.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.h"
#include "sandbox.h"
#include "url.h"
#include "util.h"
#include "wside.h"

static int otlp_init(struct ioacct_wside *ws, int *fds, size_t nfds, char *err, size_t errlen)
{
	struct ioacct_url u;
	int ret;

	(void)fds;
	(void)nfds;
	ret = ioacct_url_parse(ws->cfg.otlp_url, "/v1/traces", &u, err, errlen);
	if (ret)
		return ret;
	/* One client for every job's batches: its connection is kept between them. */
	ws->state = ioacct_http_new(&u, "application/x-protobuf", ws->cfg.otlp_ca_file, err, errlen);
	return ws->state ? 0 : -errno;
}

static int otlp_serve(struct ioacct_wside *ws, const struct ioacct_request *req, int *fds,
		      size_t nfds, struct ioacct_reply *rep)
{
	char *body = NULL, err[256] = "";
	int64_t after = -1;
	int status;

	if (req->type != IOACCT_MSG_W_POST || nfds != 1) {
		ioacct_reply_error(rep, -EOPNOTSUPP, "the OTLP worker POSTs batches only");
		return 0;
	}
	status = ioacct_wside_read_memfd(fds[0], req->u.worker.size, &body);
	if (!status)
		status = ioacct_http_post(ws->state, body, req->u.worker.size,
					  IOACCT_OTLP_TIMEOUT_MS, &after, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "the batch did not come whole");
	free(body);
	if (status < 0) {
		ioacct_reply_error(rep, status, "%s", err);
	} else {
		rep->w.code = (uint32_t)status;
		rep->w.retry_after_ms = after;
	}
	return 0;
}

static void otlp_fini(struct ioacct_wside *ws)
{
	ioacct_http_free(ws->state);
}

/* The CA file of otlp_ca_file, and OpenSSL's own variables' (the system's are in /etc and /usr). */
static int otlp_files(const struct ioacct_wside *ws, struct ioacct_sb_files *f)
{
	int ret = ioacct_sb_files_add(f, ws->cfg.otlp_ca_file);

	if (!ret)
		ret = ioacct_sb_files_add(f, getenv("SSL_CERT_FILE"));
	if (!ret)
		ret = ioacct_sb_files_add(f, getenv("SSL_CERT_DIR"));
	return ret;
}

const struct ioacct_worker_kind ioacct_worker_otlp = {
	.name = "otlp",
	.init = otlp_init,
	.serve = otlp_serve,
	.fini = otlp_fini,
	.groups = IOACCT_SB_BASE | IOACCT_SB_CLIENT | IOACCT_SB_READ_FILES | IOACCT_SB_THREADS,
	.files = otlp_files,
};
