// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A channel between the core and a worker: see wchan.h.
 */
#include "wchan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* A message the event loop could not send at once, with its own copies of the descriptors. */
struct wchan_out {
	struct ioacct_buf msg;
	int fds[WCHAN_MAX_FDS];
	size_t nfds;
	struct wchan_out *next;
};

uint64_t ioacct_wchan_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int ioacct_wchan_init(struct ioacct_wchan *ch, int fd)
{
	int fl = fcntl(fd, F_GETFL);

	memset(ch, 0, sizeof(*ch));
	ch->fd = -1;
	ch->out_tail = &ch->out;
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	pthread_mutex_init(&ch->send_lock, NULL);
	ch->fd = fd;
	return 0;
}

static void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void out_free(struct wchan_out *o)
{
	ioacct_buf_free(&o->msg);
	close_fds(o->fds, o->nfds);
	free(o);
}

void ioacct_wchan_close(struct ioacct_wchan *ch)
{
	if (ch->fd < 0)
		return;
	close(ch->fd);
	ch->fd = -1;
	close_fds(ch->fds, ch->nfds);
	ch->nfds = 0;
	ioacct_buf_free(&ch->in);
	while (ch->out) {
		struct wchan_out *o = ch->out;

		ch->out = o->next;
		out_free(o);
	}
	ch->out_tail = &ch->out;
	ch->nout = 0;
	pthread_mutex_destroy(&ch->send_lock);
}

uint32_t ioacct_wchan_next_seq(struct ioacct_wchan *ch)
{
	if (++ch->seq == 0)
		ch->seq = 1;
	return ch->seq;
}

/*
 * Waits for `events` on the channel, or cancel, until deadline_ms (0: no
 * deadline). 0 when ready, -ETIMEDOUT, -ECANCELED, -errno.
 */
static int wait_for(const struct ioacct_wchan *ch, short events, uint64_t deadline_ms, int cancel)
{
	struct pollfd p[2] = { { .fd = ch->fd, .events = events }, { .fd = cancel, .events = POLLIN } };
	uint64_t now;
	int n;

	for (;;) {
		now = ioacct_wchan_now_ms();
		if (deadline_ms && now >= deadline_ms)
			return -ETIMEDOUT;
		n = poll(p, cancel >= 0 ? 2 : 1,
			 !deadline_ms ? -1 : deadline_ms - now > 60000 ? 60000 : (int)(deadline_ms - now));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (cancel >= 0 && p[1].revents)
			return -ECANCELED;
		if (p[0].revents)
			return 0;
	}
}

/* One sendmsg() of len bytes at data, with the descriptors when nfds; the bytes sent or -errno. */
static ssize_t send_some(int fd, const uint8_t *data, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * WCHAN_MAX_FDS)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int ioacct_wchan_send(struct ioacct_wchan *ch, const struct ioacct_buf *msg, const int *fds,
		      size_t nfds, uint64_t deadline_ms, int cancel)
{
	size_t done = 0;
	int ret = 0;

	if (nfds > WCHAN_MAX_FDS)
		return -EINVAL;
	pthread_mutex_lock(&ch->send_lock);
	if (ch->fd < 0)
		ret = -EPIPE;
	while (!ret && done < msg->len) {
		/* The descriptors ride on the first byte of the message: see wchan.h. */
		ssize_t n = send_some(ch->fd, msg->data + done, msg->len - done, fds,
				      done ? 0 : nfds);

		if (n >= 0)
			done += (size_t)n;
		else if (n == -EAGAIN)
			ret = wait_for(ch, POLLOUT, deadline_ms, cancel);
		else
			ret = (int)n;
	}
	pthread_mutex_unlock(&ch->send_lock);
	return ret;
}

/* The queue's first message, as far as the socket takes it: 0 when sent, -EAGAIN, -errno. */
static int flush_one(struct ioacct_wchan *ch)
{
	struct wchan_out *o = ch->out;

	while (ch->out_off < o->msg.len) {
		ssize_t n = send_some(ch->fd, o->msg.data + ch->out_off, o->msg.len - ch->out_off,
				      o->fds, ch->out_off ? 0 : o->nfds);

		if (n < 0)
			return (int)n;
		ch->out_off += (size_t)n;
	}
	ch->out = o->next;
	if (!ch->out)
		ch->out_tail = &ch->out;
	ch->nout--;
	ch->out_off = 0;
	out_free(o);
	return 0;
}

int ioacct_wchan_flush(struct ioacct_wchan *ch)
{
	int ret = 0;

	if (ch->fd < 0)
		return -EPIPE;
	while (ch->out && !(ret = flush_one(ch)))
		;
	return ret == -EAGAIN ? 0 : ret;
}

bool ioacct_wchan_queued(const struct ioacct_wchan *ch)
{
	return ch->out != NULL;
}

int ioacct_wchan_queue(struct ioacct_wchan *ch, const struct ioacct_buf *msg, const int *fds,
		       size_t nfds)
{
	struct wchan_out *o;
	int ret;

	if (ch->fd < 0)
		return -EPIPE;
	if (nfds > WCHAN_MAX_FDS)
		return -EINVAL;
	if (ch->nout >= WCHAN_MAX_QUEUED)
		return -EAGAIN;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->msg.data = malloc(msg->len);
	if (!o->msg.data) {
		free(o);
		return -ENOMEM;
	}
	memcpy(o->msg.data, msg->data, msg->len);
	o->msg.len = o->msg.cap = msg->len;
	/* Copies: the caller closes its own, the queue keeps these until sent. */
	for (; o->nfds < nfds; o->nfds++) {
		o->fds[o->nfds] = fcntl(fds[o->nfds], F_DUPFD_CLOEXEC, 3);
		if (o->fds[o->nfds] < 0) {
			ret = -errno;
			out_free(o);
			return ret;
		}
	}
	*ch->out_tail = o;
	ch->out_tail = &o->next;
	ch->nout++;
	return ioacct_wchan_flush(ch);
}

/*
 * One recvmsg() of at most len bytes into data; descriptors that came are
 * added to the message's (beyond WCHAN_MAX_FDS, or cut by the kernel:
 * -EPROTO). The bytes read, 0 at the end, -errno.
 */
static ssize_t recv_some(struct ioacct_wchan *ch, uint8_t *data, size_t len)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * WCHAN_MAX_FDS)];
	} ctl;
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	bool bad = false;
	ssize_t n;

	do
		n = recvmsg(ch->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (ch->nfds < WCHAN_MAX_FDS) {
				ch->fds[ch->nfds++] = fd;
			} else {
				close(fd);
				bad = true;
			}
		}
	}
	return bad || (mh.msg_flags & MSG_CTRUNC) ? -EPROTO : n;
}

int ioacct_wchan_recv(struct ioacct_wchan *ch, uint64_t deadline_ms, int cancel, char *err,
		      size_t errlen)
{
	size_t total;
	ssize_t n;
	int ret;

	if (ch->fd < 0)
		return ioacct_seterr(err, errlen, -ECONNRESET, "the channel is closed");
	if (!ch->want) {
		ioacct_buf_reset(&ch->in);
		ch->want = IOACCT_PROTO_HDR_LEN;
		ch->sized = false;
	}
	for (;;) {
		if (!ch->sized && ch->in.len == IOACCT_PROTO_HDR_LEN) {
			ret = ioacct_proto_header_check(ch->in.data, &total, err, errlen);
			if (ret)
				return ret;
			ch->want = total;
			ch->sized = true;
		}
		if (ch->in.len == ch->want)
			return 1;
		if (ch->in.cap < ch->want) {
			uint8_t *p = realloc(ch->in.data, ch->want);

			if (!p)
				return ioacct_seterr(err, errlen, -ENOMEM, "no memory for a message of %zu bytes",
						     ch->want);
			ch->in.data = p;
			ch->in.cap = ch->want;
		}
		n = recv_some(ch, ch->in.data + ch->in.len, ch->want - ch->in.len);
		if (n > 0) {
			ch->in.len += (size_t)n;
			continue;
		}
		if (n == 0)
			return ioacct_seterr(err, errlen, -ECONNRESET, "the other end closed the channel");
		if (n != -EAGAIN)
			return ioacct_seterr(err, errlen, (int)n, "cannot read the channel: %s",
					     strerror((int)-n));
		if (!deadline_ms)
			return 0;
		ret = wait_for(ch, POLLIN, deadline_ms, cancel);
		if (ret == -ETIMEDOUT)
			return 0;
		if (ret)
			return ioacct_seterr(err, errlen, ret, "%s", ret == -ECANCELED ? "cancelled" :
					     strerror(-ret));
	}
}

void ioacct_wchan_done(struct ioacct_wchan *ch)
{
	close_fds(ch->fds, ch->nfds);
	ch->nfds = 0;
	ch->want = 0;
	ioacct_buf_reset(&ch->in);
}

int ioacct_wchan_take_fd(struct ioacct_wchan *ch, size_t i)
{
	int fd;

	if (i >= ch->nfds)
		return -1;
	fd = ch->fds[i];
	ch->fds[i] = -1;
	return fd;
}

uint16_t ioacct_wchan_type(const struct ioacct_wchan *ch)
{
	return (uint16_t)(ch->in.data[6] | ch->in.data[7] << 8);
}

uint32_t ioacct_wchan_seq(const struct ioacct_wchan *ch)
{
	const uint8_t *p = ch->in.data + 12;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ioacct_wchan_reply(struct ioacct_wchan *ch, const struct ioacct_reply *rep,
		       uint64_t deadline_ms, int cancel)
{
	struct ioacct_buf b = { 0 };
	int ret = ioacct_proto_encode_reply(&b, rep);

	if (ret == -EMSGSIZE || ret == -EINVAL) {
		/* Say so rather than leave the peer waiting for an answer that cannot be. */
		struct ioacct_reply e = { .seq = rep->seq };

		ioacct_reply_error(&e, ret, "the reply cannot be encoded: %s", strerror(-ret));
		ret = ioacct_proto_encode_reply(&b, &e);
	}
	if (!ret)
		ret = ioacct_wchan_send(ch, &b, NULL, 0, deadline_ms, cancel);
	ioacct_buf_free(&b);
	return ret;
}

/* A request of the peer during a call: its log line, or one to answer with serve. */
static int call_request(struct ioacct_wchan *ch, struct ioacct_request *in,
			ioacct_wchan_serve_fn serve, void *sctx, ioacct_wchan_log_fn on_log,
			void *lctx, uint64_t deadline_ms, int cancel, char *err, size_t errlen)
{
	struct ioacct_reply sub;
	char why[256];
	int ret;

	ret = ioacct_proto_decode_request(ch->in.data, ch->in.len, in, why, sizeof(why));
	if (ret)
		return ioacct_seterr(err, errlen, ret, "bad message: %s", why);
	if (in->type == IOACCT_MSG_W_LOG) {
		if (on_log)
			on_log(lctx, &in->u.worker);
		return 0;
	}
	if (!serve || (in->type != IOACCT_MSG_QUERY && in->type != IOACCT_MSG_JOB))
		return ioacct_seterr(err, errlen, -EPROTO, "a %s request where none may come",
				     ioacct_msg_type_name(in->type));
	memset(&sub, 0, sizeof(sub));
	serve(sctx, in, &sub);
	sub.seq = in->seq;
	ret = ioacct_wchan_reply(ch, &sub, deadline_ms, cancel);
	ioacct_reply_free(&sub);
	if (ret)
		return ioacct_seterr(err, errlen, ret, "cannot answer its %s request: %s",
				     ioacct_msg_type_name(in->type), strerror(-ret));
	return 0;
}

int ioacct_wchan_call(struct ioacct_wchan *ch, struct ioacct_request *req, const int *fds,
		      size_t nfds, struct ioacct_reply *rep, ioacct_wchan_serve_fn serve,
		      void *sctx, ioacct_wchan_log_fn on_log, void *lctx, uint64_t deadline_ms,
		      int cancel, char *err, size_t errlen)
{
	struct ioacct_request *in = NULL;
	struct ioacct_buf b = { 0 };
	char why[256];
	int ret;

	memset(rep, 0, sizeof(*rep));
	req->seq = ioacct_wchan_next_seq(ch);
	ret = ioacct_proto_encode_request(&b, req);
	if (ret) {
		ioacct_seterr(err, errlen, ret, "cannot encode a %s request: %s",
			      ioacct_msg_type_name(req->type), strerror(-ret));
		goto out;
	}
	ret = ioacct_wchan_send(ch, &b, fds, nfds, deadline_ms, cancel);
	if (ret) {
		ioacct_seterr(err, errlen, ret, "cannot send: %s",
			      ret == -ECANCELED ? "cancelled" : strerror(-ret));
		goto out;
	}
	in = malloc(sizeof(*in));
	if (!in) {
		ret = ioacct_seterr(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ret = ioacct_wchan_recv(ch, deadline_ms, cancel, why, sizeof(why));
		if (ret == 0)
			ret = ioacct_seterr(err, errlen, -ETIMEDOUT, "no reply in time");
		else if (ret < 0)
			ioacct_seterr(err, errlen, ret, "%s", why);
		if (ret <= 0)
			break;
		if (ioacct_wchan_type(ch) != IOACCT_MSG_REPLY) {
			ret = call_request(ch, in, serve, sctx, on_log, lctx, deadline_ms, cancel, err,
					   errlen);
			ioacct_wchan_done(ch);
			if (ret)
				break;
			continue;
		}
		ret = ioacct_proto_decode_reply(ch->in.data, ch->in.len, rep, why, sizeof(why));
		ioacct_wchan_done(ch);
		if (ret) {
			ioacct_seterr(err, errlen, ret, "bad reply: %s", why);
		} else if (rep->seq != req->seq) {
			ioacct_reply_free(rep);
			ret = ioacct_seterr(err, errlen, -EPROTO, "reply %u to request %u", rep->seq,
					    req->seq);
		}
		break;
	}
out:
	free(in);
	ioacct_buf_free(&b);
	return ret;
}
