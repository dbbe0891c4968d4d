// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The wire protocol's transport (proto.h): whole messages read and written
 * on a stream socket within a timeout, and the client's call. The format
 * itself is proto.c's.
 */
#include "proto.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* The one error helper (util.h), under proto.c's name for it. */
#define fail(...) ioacct_seterr(__VA_ARGS__)

/* ---- transport ---- */

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* Reads exactly n bytes; *done says how many arrived, for error messages. */
static int read_full(int fd, uint8_t *p, size_t n, int timeout_ms, size_t *done)
{
	ssize_t r;
	int ret;

	*done = 0;
	while (*done < n) {
		ret = wait_fd(fd, POLLIN, timeout_ms);
		if (ret)
			return ret;
		r = read(fd, p + *done, n - *done);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ECONNRESET;
		*done += (size_t)r;
	}
	return 0;
}

static int recv_fail(int ret, size_t done, size_t want, const char *what, int timeout_ms,
		     char *err, size_t errlen)
{
	if (ret == -ECONNRESET)
		return fail(err, errlen, ret, "connection closed after %zu of %zu bytes of the %s",
			    done, want, what);
	if (ret == -ETIMEDOUT)
		return fail(err, errlen, ret, "nothing received for %d ms, after %zu of %zu bytes of the %s",
			    timeout_ms, done, want, what);
	return fail(err, errlen, ret, "cannot read the %s: %s", what, strerror(-ret));
}

int ioacct_proto_recv(int fd, struct ioacct_buf *in, int timeout_ms, char *err, size_t errlen)
{
	size_t total, done;
	int ret;

	ioacct_buf_reset(in);
	ret = ioacct_buf_reserve(in, IOACCT_PROTO_HDR_LEN);
	if (ret)
		return fail(err, errlen, ret, "no memory for a message");
	ret = read_full(fd, in->data, IOACCT_PROTO_HDR_LEN, timeout_ms, &done);
	if (ret)
		return recv_fail(ret, done, IOACCT_PROTO_HDR_LEN, "header", timeout_ms, err, errlen);
	in->len = IOACCT_PROTO_HDR_LEN;
	ret = ioacct_proto_header_check(in->data, &total, err, errlen);
	if (ret)
		return ret;
	ret = ioacct_buf_reserve(in, total - IOACCT_PROTO_HDR_LEN);
	if (ret)
		return fail(err, errlen, ret, "no memory for a message of %zu bytes", total);
	ret = read_full(fd, in->data + IOACCT_PROTO_HDR_LEN, total - IOACCT_PROTO_HDR_LEN,
			timeout_ms, &done);
	if (ret)
		return recv_fail(ret, IOACCT_PROTO_HDR_LEN + done, total, "message", timeout_ms, err,
				 errlen);
	in->len = total;
	return 0;
}

int ioacct_proto_send(int fd, const struct ioacct_buf *b, int timeout_ms)
{
	bool is_socket = true;
	size_t done = 0;
	ssize_t n;
	int ret;

	while (done < b->len) {
		/* MSG_NOSIGNAL: a client gone away is an error to report, not a SIGPIPE. */
		if (is_socket)
			n = send(fd, b->data + done, b->len - done, MSG_NOSIGNAL);
		else
			n = write(fd, b->data + done, b->len - done);
		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == ENOTSOCK && is_socket) {
			is_socket = false;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = wait_fd(fd, POLLOUT, timeout_ms);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A blocking connect() to a Unix socket waits while the daemon's backlog is
 * full; the send timeout bounds that wait too.
 */
static int set_send_timeout(int fd, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = timeout_ms % 1000 * 1000 };

	if (timeout_ms <= 0)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

/*
 * The message's first byte with pass_fd beside it (SCM_RIGHTS), then the
 * rest: the daemon reads the descriptor with the bytes it came with.
 */
static int send_with_fd(int fd, const struct ioacct_buf *b, int pass_fd, int timeout_ms)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = b->data, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	struct ioacct_buf rest = { .data = b->data + 1, .len = b->len - 1 };
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	return ioacct_proto_send(fd, &rest, timeout_ms);
}

int ioacct_client_call(const char *socket_path, const struct ioacct_request *req,
		       struct ioacct_reply *rep, int timeout_ms, char *err, size_t errlen)
{
	return ioacct_client_call_fd(socket_path, req, -1, rep, timeout_ms, err, errlen);
}

int ioacct_client_call_fd(const char *socket_path, const struct ioacct_request *req, int pass_fd,
			  struct ioacct_reply *rep, int timeout_ms, char *err, size_t errlen)
{
	static uint32_t last_seq;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ioacct_buf buf = { 0 };
	size_t path_len = strlen(socket_path);
	char why[512];
	uint32_t seq;
	int fd = -1;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (path_len >= sizeof(addr.sun_path)) {
		ret = fail(err, errlen, -ENAMETOOLONG,
			   "cannot connect to %s: the path is longer than %zu bytes", socket_path,
			   sizeof(addr.sun_path) - 1);
		goto out;
	}
	memcpy(addr.sun_path, socket_path, path_len + 1);

	/* req->seq is ignored: a counter tells this call's reply from a stale one. */
	seq = __atomic_add_fetch(&last_seq, 1, __ATOMIC_RELAXED);
	ret = ioacct_proto_encode_request_seq(&buf, req, seq);
	if (ret) {
		fail(err, errlen, ret, "cannot encode a %s request: %s", ioacct_msg_type_name(req->type),
		     strerror(-ret));
		goto out;
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		fail(err, errlen, ret, "cannot create a socket: %s", strerror(-ret));
		goto out;
	}
	ret = set_send_timeout(fd, timeout_ms);
	if (ret) {
		fail(err, errlen, ret, "cannot set a timeout on a socket: %s", strerror(-ret));
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
		fail(err, errlen, ret, "cannot connect to %s: %s", socket_path, strerror(-ret));
		goto out;
	}
	ret = pass_fd >= 0 ? send_with_fd(fd, &buf, pass_fd, timeout_ms) :
			     ioacct_proto_send(fd, &buf, timeout_ms);
	if (ret) {
		fail(err, errlen, ret, "cannot send to ioacctd on %s: %s", socket_path, strerror(-ret));
		goto out;
	}
	ret = ioacct_proto_recv(fd, &buf, timeout_ms, why, sizeof(why));
	if (ret) {
		fail(err, errlen, ret, "no reply from ioacctd on %s: %s", socket_path, why);
		goto out;
	}
	ret = ioacct_proto_decode_reply(buf.data, buf.len, rep, why, sizeof(why));
	if (ret) {
		fail(err, errlen, ret, "bad reply from ioacctd on %s: %s", socket_path, why);
		goto out;
	}
	if (rep->seq != seq) {
		ioacct_reply_free(rep);
		ret = fail(err, errlen, -EPROTO,
			   "bad reply from ioacctd on %s: sequence number %u, expected %u",
			   socket_path, rep->seq, seq);
	}
out:
	if (fd >= 0)
		close(fd);
	ioacct_buf_free(&buf);
	return ret;
}
