// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacctd's socket server; see server.h for the limits and why.
 *
 * A client is in one of two states, each with its own list ordered by
 * deadline: reading (deadline = accept + IOACCT_SERVER_REQUEST_MS) and
 * writing (deadline = reply ready + IOACCT_SERVER_REPLY_MS). Both deadlines
 * are "now + a constant" when a client enters the list, so appending keeps
 * each list sorted and expiry only ever looks at the heads.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ratelimit.h"
#include "server.h"

/* Open files kept for everything but clients: store, BPF objects, pins, logs. */
#define FD_MARGIN 256
/* Connections taken from the backlog per round before serving the others. */
#define ACCEPT_BATCH 1024
#define EVENT_BATCH 256
/* After EMFILE and the like, the listening socket rests this long instead of spinning. */
#define ACCEPT_PAUSE_MS 100
/* Uids with their own log budget; the rest share one. */
#define LOG_MAX_UIDS 1024

/*
 * PARKED: its request is answered off the event loop (a query of the cluster
 * store, ioacct_registry_defer()); it waits for the answer, watched only for
 * hanging up. Its wait is bounded by the answerer (clusterq.h), not here.
 */
enum client_state { CLIENT_READING, CLIENT_PARKED, CLIENT_WRITING, CLIENT_DEAD };

struct client {
	int fd;
	uid_t uid;
	enum client_state state;
	uint64_t deadline_ms;
	struct ioacct_buf in;
	struct ioacct_buf out;
	size_t out_off;
	int rfd;   /* a descriptor that came with the request (probe_exe's program), or -1 */
	/* Root's request and reply, kept for the undelivered hook until the reply is taken. */
	struct ioacct_request *req;
	struct ioacct_reply *rep;
	struct client *prev, *next;
};

struct client_list {
	struct client *head, *tail;
};

/* What a uid holds: connections, and bytes of replies not yet taken. */
struct peer {
	uid_t uid;
	unsigned int nconn;
	size_t pending;
};

struct ioacct_server {
	int lfd;
	int epfd;
	struct ioacct_registry *reg;
	unsigned int max_clients;
	unsigned int nclients;
	unsigned int nuser; /* of them, not root's */
	struct client_list reading, parked, writing, dead;
	/* The registry's answers fd (-1: none); its epoll events carry &answers. */
	int afd;
	char answers;
	/* An fd that only wakes the loop: its caller reads it after each run (wake_fd). */
	char wake;
	struct peer *peers;
	size_t npeers, peers_cap;
	uint64_t accept_paused_until;
	struct ioacct_ratelimit rl;       /* warnings and info about non-root peers */
	struct ioacct_ratelimit rl_debug; /* debug lines about them (-v) */
	ioacct_server_undelivered_fn undelivered;
	void *undelivered_ctx;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void list_append(struct client_list *l, struct client *c)
{
	c->next = NULL;
	c->prev = l->tail;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

static void list_remove(struct client_list *l, struct client *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
}

static struct client_list *list_of(struct ioacct_server *s, struct client *c)
{
	switch (c->state) {
	case CLIENT_READING:
		return &s->reading;
	case CLIENT_PARKED:
		return &s->parked;
	case CLIENT_WRITING:
		return &s->writing;
	default:
		return &s->dead;
	}
}

static void report_suppressed(uint32_t key, uint64_t n, uint64_t window_ms, void *ctx)
{
	const char *what = ctx;

	if (key == IOACCT_RATELIMIT_OTHER)
		log_warn("other uids: %" PRIu64 " more %s suppressed in the last %" PRIu64 " s", n,
			 what, window_ms / 1000);
	else
		log_warn("uid %u: %" PRIu64 " more %s suppressed in the last %" PRIu64 " s",
			 (unsigned int)key, n, what, window_ms / 1000);
}

/*
 * Logs a line about a peer: root's always, a user's within its budget, so
 * that nobody can flood the log (or syslog's disk) with bad requests.
 */
static void peer_log(struct ioacct_server *s, enum ioacct_log_level level, uid_t uid,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void peer_log(struct ioacct_server *s, enum ioacct_log_level level, uid_t uid,
		     const char *fmt, ...)
{
	va_list ap;

	if (level > ioacct_log_get_level())
		return;
	if (uid != 0) {
		bool debug = level == IOACCT_LOG_DEBUG;

		if (!ioacct_ratelimit_allow(debug ? &s->rl_debug : &s->rl, (uint32_t)uid,
					    now_ms(), report_suppressed,
					    debug ? "debug lines" : "bad requests and refusals"))
			return;
	}
	va_start(ap, fmt);
	ioacct_vlog(level, fmt, ap);
	va_end(ap);
}

static struct peer *peer_find(struct ioacct_server *s, uid_t uid)
{
	for (size_t i = 0; i < s->npeers; i++)
		if (s->peers[i].uid == uid)
			return &s->peers[i];
	return NULL;
}

static struct peer *peer_get(struct ioacct_server *s, uid_t uid)
{
	struct peer *p = peer_find(s, uid);

	if (p)
		return p;
	if (s->npeers == s->peers_cap) {
		size_t cap = s->peers_cap ? s->peers_cap * 2 : 16;
		struct peer *np = realloc(s->peers, cap * sizeof(*np));

		if (!np)
			return NULL;
		s->peers = np;
		s->peers_cap = cap;
	}
	p = &s->peers[s->npeers++];
	*p = (struct peer){ .uid = uid };
	return p;
}

/* Forgets a uid that holds nothing, so that the table is as small as the peers connected. */
static void peer_put(struct ioacct_server *s, struct peer *p)
{
	if (p->nconn == 0 && p->pending == 0)
		*p = s->peers[--s->npeers];
}

static void client_free(struct client *c)
{
	if (c->rfd >= 0)
		close(c->rfd);
	ioacct_buf_free(&c->in);
	ioacct_buf_free(&c->out);
	if (c->rep)
		ioacct_reply_free(c->rep);
	free(c->rep);
	free(c->req);
	free(c);
}

/*
 * Closes a client now; its memory goes at the end of the round, as events
 * of this round may still point to it. `delivered`: its reply was taken.
 */
static void client_close(struct ioacct_server *s, struct client *c, bool delivered)
{
	struct peer *p = peer_find(s, c->uid);

	if (c->state == CLIENT_DEAD)
		return;
	if (!delivered && c->req && s->undelivered)
		s->undelivered(s->undelivered_ctx, c->uid, c->req, c->rep);
	if (c->state == CLIENT_PARKED)
		ioacct_registry_forget_client(s->reg, c);
	list_remove(list_of(s, c), c);
	/*
	 * Out of the epoll set before the close: a close drops the registration
	 * only with the socket's last descriptor, and a child forked meanwhile
	 * (the trace spooler, daemon/jobtrace.c) may hold a copy. Its events
	 * would then come with this client's memory, freed at the end of the
	 * round and soon another client's (a client closed without its reply).
	 */
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	if (p) {
		p->nconn--;
		if (c->state == CLIENT_WRITING)
			p->pending -= c->out.len;
		peer_put(s, p);
	}
	s->nclients--;
	if (c->uid != 0)
		s->nuser--;
	c->state = CLIENT_DEAD;
	list_append(&s->dead, c);
}

static void free_dead(struct ioacct_server *s)
{
	while (s->dead.head) {
		struct client *c = s->dead.head;

		list_remove(&s->dead, c);
		client_free(c);
	}
}

/* Writes what the socket takes now; closes the client once the reply is all out. */
static void client_write(struct ioacct_server *s, struct client *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			peer_log(s, IOACCT_LOG_WARN, c->uid,
				 "client uid %u went away after %zu of %zu bytes of its reply",
				 (unsigned int)c->uid, c->out_off, c->out.len);
			client_close(s, c, false);
			return;
		}
		c->out_off += (size_t)n;
	}
	client_close(s, c, true);
}

/*
 * Takes over `out` as the client's reply and starts writing it; the rest
 * is written when the socket can take it (EPOLLOUT), until the deadline.
 */
static void client_reply(struct ioacct_server *s, struct client *c, struct ioacct_buf *out)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };
	struct peer *p = peer_find(s, c->uid);

	list_remove(list_of(s, c), c);
	ioacct_buf_free(&c->in);
	c->out = *out;
	*out = (struct ioacct_buf){ 0 };
	c->out_off = 0;
	c->state = CLIENT_WRITING;
	c->deadline_ms = now_ms() + IOACCT_SERVER_REPLY_MS;
	list_append(&s->writing, c);
	if (p)
		p->pending += c->out.len;
	client_write(s, c);
	if (c->state == CLIENT_WRITING && epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev)) {
		log_err("epoll_ctl on a client of uid %u: %s; dropped", (unsigned int)c->uid,
			strerror(errno));
		client_close(s, c, false);
	}
}

static void reply_error(struct ioacct_server *s, struct client *c, uint32_t seq, int status,
			const char *msg)
{
	struct ioacct_reply rep = { .seq = seq, .status = status };
	struct ioacct_buf out = { 0 };

	ioacct_strlcpy(rep.error, msg, sizeof(rep.error));
	if (ioacct_proto_encode_reply(&out, &rep) == 0) {
		client_reply(s, c, &out);
	} else {
		ioacct_buf_free(&out);
		client_close(s, c, false);
	}
}

/*
 * Whether the peer has closed its socket: a REGISTER that arrives after its
 * client gave up (timeout) must not leave a job nobody will finish.
 * POLLHUP, not a read of 0 bytes: a client may shut down only its sending side.
 */
static bool peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* Its answer comes later (ioacct_registry_answer()): meanwhile only a hang-up is news. */
static void client_park(struct ioacct_server *s, struct client *c)
{
	struct epoll_event ev = { .events = 0, .data.ptr = c };

	list_remove(&s->reading, c);
	ioacct_buf_free(&c->in);
	c->state = CLIENT_PARKED;
	list_append(&s->parked, c);
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev)) {
		log_err("epoll_ctl on a client of uid %u: %s; dropped", (unsigned int)c->uid,
			strerror(errno));
		client_close(s, c, true);
	}
}

/*
 * Encodes the reply (taken over) and starts writing it; root's request and
 * reply are kept for the undelivered hook.
 */
static void client_answer(struct ioacct_server *s, struct client *c,
			  const struct ioacct_request *req, struct ioacct_reply *rep)
{
	struct ioacct_buf out = { 0 };
	int ret;

	if (rep->status)
		peer_log(s, IOACCT_LOG_INFO, c->uid, "uid %u: %s refused: %s", (unsigned int)c->uid,
			 ioacct_msg_type_name(req->type), rep->error);
	ret = ioacct_proto_encode_reply(&out, rep);
	if (ret) {
		ioacct_buf_free(&out);
		ioacct_reply_free(rep);
		reply_error(s, c, req->seq, ret, "reply too large to encode");
		return;
	}
	/* Root's requests are the ones that change state: keep them for the undelivered hook. */
	if (c->uid == 0 && s->undelivered) {
		c->req = malloc(sizeof(*c->req));
		c->rep = malloc(sizeof(*c->rep));
		if (c->req && c->rep) {
			*c->req = *req;
			*c->rep = *rep;
			memset(rep, 0, sizeof(*rep));
		} else {
			free(c->req);
			free(c->rep);
			c->req = NULL;
			c->rep = NULL;
			log_warn("out of memory: if the reply to root's %s is not delivered, "
				 "nobody will know", ioacct_msg_type_name(req->type));
		}
	}
	ioacct_reply_free(rep);
	client_reply(s, c, &out);
}

/*
 * Serves a whole request: the handler is synchronous (and quick), only the
 * I/O is not; a query of the cluster store is answered off the loop.
 */
static void client_handle(struct ioacct_server *s, struct client *c)
{
	char err[512];
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct peer *p;
	int ret;

	ret = ioacct_proto_decode_request(c->in.data, c->in.len, &req, err, sizeof(err));
	if (ret) {
		peer_log(s, IOACCT_LOG_WARN, c->uid, "client uid %u: bad request: %s",
			 (unsigned int)c->uid, err);
		reply_error(s, c, 0, ret, err);
		return;
	}
	p = peer_find(s, c->uid);
	if (c->uid != 0 && p && p->pending >= IOACCT_SERVER_USER_MAX_PENDING) {
		snprintf(err, sizeof(err),
			 "uid %u has %zu bytes of replies not yet read; read them, then ask again",
			 (unsigned int)c->uid, p->pending);
		peer_log(s, IOACCT_LOG_WARN, c->uid, "client uid %u: %s refused: %s",
			 (unsigned int)c->uid, ioacct_msg_type_name(req.type), err);
		reply_error(s, c, req.seq, -EAGAIN, err);
		return;
	}
	peer_log(s, IOACCT_LOG_DEBUG, c->uid, "uid %u: %s", (unsigned int)c->uid,
		 ioacct_msg_type_name(req.type));
	if (req.type == IOACCT_MSG_REGISTER && peer_gone(c->fd)) {
		peer_log(s, IOACCT_LOG_WARN, c->uid,
			 "uid %u: REGISTER of job %llu step %u ignored: its client has gone away",
			 (unsigned int)c->uid, (unsigned long long)req.u.reg.job_id,
			 req.u.reg.step_id);
		client_close(s, c, false);
		return;
	}
	if (req.type == IOACCT_MSG_PROBE_EXE) {
		ret = ioacct_registry_probe_exe(s->reg, &req, c->uid, c->rfd, c, &rep);
		c->rfd = -1;
	} else {
		ret = ioacct_registry_defer(s->reg, &req, c->uid, c, &rep);
	}
	if (ret == 1) {
		client_park(s, c);
		return;
	}
	if (ret == 0 && req.type != IOACCT_MSG_PROBE_EXE)
		ioacct_registry_handle(s->reg, &req, c->uid, &rep);
	client_answer(s, c, &req, &rep);
}

/* The answers the registry has ready for parked clients. */
static void answers_take(struct ioacct_server *s)
{
	struct ioacct_request req = { .type = IOACCT_MSG_QUERY };
	struct ioacct_reply rep;
	void *tag;

	while (ioacct_registry_answer(s->reg, &tag, &req.type, &rep)) {
		struct client *c = tag;

		req.seq = rep.seq;
		client_answer(s, c, &req, &rep);
	}
}

/*
 * One read of the client's request; a descriptor that comes with it is
 * kept (the first: one request carries at most one), others closed.
 */
static ssize_t client_recv(struct client *c, size_t want)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = { .iov_base = c->in.data + c->in.len, .iov_len = want - c->in.len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	for (struct cmsghdr *h = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; h; h = CMSG_NXTHDR(&mh, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
			if (c->rfd < 0)
				c->rfd = fd;
			else
				close(fd);
		}
	}
	return n;
}

/* Reads what the client sent; once a whole request is there, serves it. */
static void client_read(struct ioacct_server *s, struct client *c)
{
	char err[512];
	size_t want = IOACCT_PROTO_HDR_LEN;
	int ret;

	for (;;) {
		ssize_t n;

		if (c->in.len >= IOACCT_PROTO_HDR_LEN) {
			ret = ioacct_proto_header_check(c->in.data, &want, err, sizeof(err));
			if (ret == 0 && c->uid != 0 && want > IOACCT_SERVER_USER_MAX_REQUEST) {
				snprintf(err, sizeof(err),
					 "request of %zu bytes is larger than the %u bytes allowed "
					 "to users", want, IOACCT_SERVER_USER_MAX_REQUEST);
				ret = -EMSGSIZE;
			}
			if (ret) {
				peer_log(s, IOACCT_LOG_WARN, c->uid, "client uid %u: %s",
					 (unsigned int)c->uid, err);
				reply_error(s, c, 0, ret, err);
				return;
			}
			if (c->in.len >= want)
				break;
		}
		if (c->in.cap < want) {
			uint8_t *nd = realloc(c->in.data, want);

			if (!nd) {
				log_err("out of memory for a request of %zu bytes of uid %u; dropped",
					want, (unsigned int)c->uid);
				client_close(s, c, false);
				return;
			}
			c->in.data = nd;
			c->in.cap = want;
		}
		n = client_recv(c, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			if (c->in.len) {
				/* The peer may have shut down only its sending side: tell it why. */
				snprintf(err, sizeof(err), "request truncated: %zu of %zu bytes arrived",
					 c->in.len, want);
				peer_log(s, IOACCT_LOG_WARN, c->uid, "client uid %u: %s",
					 (unsigned int)c->uid, err);
				reply_error(s, c, 0, -EPROTO, err);
			} else {
				client_close(s, c, true);
			}
			return;
		}
		c->in.len += (size_t)n;
	}
	client_handle(s, c);
}

/* The oldest connection of a user, to make room for root. */
static struct client *oldest_user_client(struct ioacct_server *s)
{
	struct client_list *lists[] = { &s->reading, &s->parked, &s->writing };

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		for (struct client *c = lists[i]->head; c; c = c->next)
			if (c->uid != 0)
				return c;
	return NULL;
}

/* Whether a new connection of `uid` may have a slot; may evict a user's for root. */
static bool admit(struct ioacct_server *s, uid_t uid)
{
	struct peer *p = peer_find(s, uid);

	if (uid != 0) {
		if (p && p->nconn >= IOACCT_SERVER_PER_UID) {
			peer_log(s, IOACCT_LOG_WARN, uid,
				 "uid %u already has %u connections (the limit per user); refused",
				 (unsigned int)uid, p->nconn);
			return false;
		}
		if (s->nuser + IOACCT_SERVER_ROOT_RESERVE >= s->max_clients) {
			peer_log(s, IOACCT_LOG_WARN, uid,
				 "%u connections of users (the limit, %u more are root's); "
				 "refused uid %u", s->nuser, IOACCT_SERVER_ROOT_RESERVE,
				 (unsigned int)uid);
			return false;
		}
		return true;
	}
	if (s->nclients < s->max_clients)
		return true;
	{
		struct client *victim = oldest_user_client(s);

		if (!victim) {
			log_warn("%u connections of root's already (the limit); refused root",
				 s->nclients);
			return false;
		}
		peer_log(s, IOACCT_LOG_WARN, victim->uid,
			 "all %u connections taken: closed uid %u's oldest to serve root",
			 s->max_clients, (unsigned int)victim->uid);
		client_close(s, victim, false);
		return true;
	}
}

static void accept_pause(struct ioacct_server *s, int err)
{
	struct epoll_event ev = { .events = 0, .data.ptr = NULL };

	log_warn("cannot accept connections on the socket: %s; retrying in %d ms",
		 strerror(err), ACCEPT_PAUSE_MS);
	s->accept_paused_until = now_ms() + ACCEPT_PAUSE_MS;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &ev);
}

static void accept_resume(struct ioacct_server *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	if (!s->accept_paused_until || now_ms() < s->accept_paused_until)
		return;
	s->accept_paused_until = 0;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &ev);
}

/* Takes what the backlog offers, up to a batch, so that a burst cannot starve the clients. */
static void accept_clients(struct ioacct_server *s)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct epoll_event ev = { .events = EPOLLIN };
		struct client *c;
		struct peer *p;
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				accept_pause(s, errno);
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			close(fd);
			continue;
		}
		if (!admit(s, cred.uid)) {
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		p = peer_get(s, cred.uid);
		if (!c || !p) {
			log_err("out of memory for a client of uid %u; refused", (unsigned int)cred.uid);
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->rfd = -1;
		c->uid = cred.uid;
		c->state = CLIENT_READING;
		c->deadline_ms = now_ms() + IOACCT_SERVER_REQUEST_MS;
		ev.data.ptr = c;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			log_err("epoll_ctl on a client of uid %u: %s; refused", (unsigned int)cred.uid,
				strerror(errno));
			peer_put(s, p);
			free(c);
			close(fd);
			continue;
		}
		p->nconn++;
		s->nclients++;
		if (c->uid != 0)
			s->nuser++;
		list_append(&s->reading, c);
	}
}

static void expire(struct ioacct_server *s)
{
	uint64_t now = now_ms();

	while (s->reading.head && s->reading.head->deadline_ms <= now) {
		struct client *c = s->reading.head;

		peer_log(s, IOACCT_LOG_WARN, c->uid,
			 "client uid %u sent no whole request in %d ms (%zu bytes); dropped",
			 (unsigned int)c->uid, IOACCT_SERVER_REQUEST_MS, c->in.len);
		client_close(s, c, true);
	}
	while (s->writing.head && s->writing.head->deadline_ms <= now) {
		struct client *c = s->writing.head;

		peer_log(s, IOACCT_LOG_WARN, c->uid,
			 "client uid %u took %zu of %zu bytes of its reply in %d ms; dropped",
			 (unsigned int)c->uid, c->out_off, c->out.len, IOACCT_SERVER_REPLY_MS);
		client_close(s, c, false);
	}
}

/* Raises the soft limit on open files to the hard one: the clients are open files. */
static unsigned int nofile_clients(void)
{
	struct rlimit rl;
	rlim_t old;
	unsigned int max = IOACCT_SERVER_MAX_CLIENTS;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		log_warn("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return 1024 - FD_MARGIN;
	}
	old = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			log_info("open files (RLIMIT_NOFILE): soft limit raised from %llu to %llu",
				 (unsigned long long)old, (unsigned long long)rl.rlim_cur);
		else
			rl.rlim_cur = old;
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max + FD_MARGIN)
		max = rl.rlim_cur > 2 * FD_MARGIN ? (unsigned int)(rl.rlim_cur - FD_MARGIN)
						  : (unsigned int)(rl.rlim_cur / 2);
	if (max <= IOACCT_SERVER_ROOT_RESERVE)
		max = IOACCT_SERVER_ROOT_RESERVE + 1;
	return max;
}

struct ioacct_server *ioacct_server_create(int lfd, struct ioacct_registry *reg)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct ioacct_server *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->lfd = lfd;
	s->reg = reg;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, lfd, &ev)) {
		err = errno;
		if (s->epfd >= 0)
			close(s->epfd);
		free(s);
		errno = err;
		return NULL;
	}
	ioacct_ratelimit_init(&s->rl, IOACCT_SERVER_LOG_BURST, IOACCT_SERVER_LOG_WINDOW_MS,
			      LOG_MAX_UIDS);
	ioacct_ratelimit_init(&s->rl_debug, IOACCT_SERVER_LOG_BURST, IOACCT_SERVER_LOG_WINDOW_MS,
			      LOG_MAX_UIDS);
	s->afd = ioacct_registry_answers_fd(reg);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &s->answers };
	if (s->afd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->afd, &ev)) {
		err = errno;
		close(s->epfd);
		free(s);
		errno = err;
		return NULL;
	}
	s->max_clients = nofile_clients();
	log_info("at most %u clients (%u per user, %u kept for root), %d ms to send a request, "
		 "%d ms to read the reply", s->max_clients, IOACCT_SERVER_PER_UID,
		 IOACCT_SERVER_ROOT_RESERVE, IOACCT_SERVER_REQUEST_MS, IOACCT_SERVER_REPLY_MS);
	return s;
}

int ioacct_server_wake_fd(struct ioacct_server *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->wake };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void ioacct_server_set_undelivered(struct ioacct_server *s, ioacct_server_undelivered_fn fn,
				   void *ctx)
{
	s->undelivered = fn;
	s->undelivered_ctx = ctx;
}

static int next_timeout(const struct ioacct_server *s, int timeout_ms)
{
	uint64_t now = now_ms(), next = now + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);

	if (s->reading.head && s->reading.head->deadline_ms < next)
		next = s->reading.head->deadline_ms;
	if (s->writing.head && s->writing.head->deadline_ms < next)
		next = s->writing.head->deadline_ms;
	if (s->accept_paused_until && s->accept_paused_until < next)
		next = s->accept_paused_until;
	return next > now ? (int)(next - now) : 0;
}

int ioacct_server_run(struct ioacct_server *s, int timeout_ms)
{
	struct epoll_event ev[EVENT_BATCH];
	uint64_t until = now_ms() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
	int n;

	/* Answers made between rounds (probe_exe's, by the ELF worker's reply): sent before waiting. */
	answers_take(s);
	free_dead(s);
	n = epoll_wait(s->epfd, ev, EVENT_BATCH, next_timeout(s, timeout_ms));

	if (n < 0 && errno != EINTR) {
		log_err("epoll_wait: %s", strerror(errno));
		return -errno;
	}
	/*
	 * Root's clients and the backlog first, then the users': root's requests
	 * never wait behind a user's QUERY pages. Once time is up (handlers took
	 * it: a QUERY page takes up to 100 ms) the caller has a drain to do;
	 * epoll is level-triggered, so what is left is reported again next round.
	 * At least one user's event is served each round, so that users are
	 * never starved by drains that take all the time.
	 */
	for (int pass = 0, served = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;
			struct client *c = p == &s->answers ? NULL : p;

			if (p == &s->wake)
				continue;
			if ((pass == 0) != (!c || c->uid == 0))
				continue;
			if (pass == 1 && served++ > 0 && now_ms() > until)
				break;
			if (p == &s->answers)
				answers_take(s);
			else if (!c)
				accept_clients(s);
			else if (c->state == CLIENT_READING)
				client_read(s, c);
			else if (c->state == CLIENT_PARKED && peer_gone(c->fd))
				client_close(s, c, true);
			else if (c->state == CLIENT_WRITING)
				client_write(s, c);
		}
	}
	free_dead(s);
	expire(s);
	free_dead(s);
	accept_resume(s);
	ioacct_ratelimit_flush(&s->rl, now_ms(), report_suppressed, "bad requests and refusals");
	ioacct_ratelimit_flush(&s->rl_debug, now_ms(), report_suppressed, "debug lines");
	return 0;
}

void ioacct_server_destroy(struct ioacct_server *s)
{
	if (!s)
		return;
	while (s->reading.head)
		client_close(s, s->reading.head, true);
	while (s->parked.head)
		client_close(s, s->parked.head, true);
	while (s->writing.head)
		client_close(s, s->writing.head, false);
	free_dead(s);
	/* Say what was suppressed last, rather than nothing. */
	ioacct_ratelimit_flush(&s->rl, UINT64_MAX, report_suppressed, "bad requests and refusals");
	ioacct_ratelimit_flush(&s->rl_debug, UINT64_MAX, report_suppressed, "debug lines");
	ioacct_ratelimit_free(&s->rl);
	ioacct_ratelimit_free(&s->rl_debug);
	free(s->peers);
	close(s->epfd);
	free(s);
}
