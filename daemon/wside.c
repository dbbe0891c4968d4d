// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A worker's side of its channel: see wside.h.
 */
#include "wside.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* How long a log line may wait for the core to read: past that, it is lost. */
#define LOG_SEND_MS 5000

void ioacct_wside_log_sink(enum ioacct_log_level level, const char *msg, void *ctx)
{
	struct ioacct_wside *ws = ctx;
	struct ioacct_request *req = malloc(sizeof(*req));
	struct ioacct_buf b = { 0 };

	if (!req)
		return;
	memset(req, 0, sizeof(*req));
	req->type = IOACCT_MSG_W_LOG;
	req->u.worker.code = (uint32_t)level;
	/* Cut, not refused: a line too long for the message still says most of what it says. */
	ioacct_strlcpy(req->u.worker.text, msg, sizeof(req->u.worker.text));
	/* Log lines are not calls: no sequence of this end's is used up. */
	if (!ioacct_proto_encode_request(&b, req))
		ioacct_wchan_send(&ws->ch, &b, NULL, 0, ioacct_wchan_now_ms() + LOG_SEND_MS, -1);
	ioacct_buf_free(&b);
	free(req);
}

int ioacct_wside_call(struct ioacct_wside *ws, struct ioacct_request *req,
		      struct ioacct_reply *rep, char *err, size_t errlen)
{
	/* The core answers at once from memory: a minute is a core gone wrong. */
	return ioacct_wchan_call(&ws->ch, req, NULL, 0, rep, NULL, NULL, NULL, NULL,
				 ioacct_wchan_now_ms() + 60000, -1, err, errlen);
}

int ioacct_wside_read_memfd(int fd, size_t len, char **out)
{
	struct stat st;
	size_t done = 0;
	char *buf;

	if (fstat(fd, &st) || st.st_size < 0 || (uint64_t)st.st_size != len)
		return -EPROTO;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)done);

		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EPROTO;
		}
		done += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}
