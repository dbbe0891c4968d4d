/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The channel between ioacctd's core and one of its workers (worker.h): a
 * Unix stream socket carrying the wire protocol's messages (proto.h), with
 * file descriptors beside a message (SCM_RIGHTS on the sendmsg() that
 * writes its first byte). Both ends use this file.
 *
 * Reads are exact: the header, then the rest of the message, never a byte
 * of the next one, so that the descriptors the kernel hands over with the
 * bytes they came with are always those of the message being read (a read
 * of a Unix stream socket stops after the bytes that carry descriptors).
 * Whatever a peer sends is checked as a client's would be: the header by
 * ioacct_proto_header_check(), at most WCHAN_MAX_FDS descriptors a message,
 * the rest closed.
 *
 * Blocking use (a thread of the core, a worker): ioacct_wchan_send() and
 * ioacct_wchan_recv() wait with poll() until a deadline or until `cancel`
 * (an eventfd, -1: none) is readable. Non-blocking use (the core's event
 * loop): ioacct_wchan_queue() sends what it can and keeps the rest, whole
 * messages with their descriptors, for ioacct_wchan_flush(); reads with a
 * 0 ms wait take what is there and keep the message's state for the next.
 */
#ifndef IOACCT_WCHAN_H
#define IOACCT_WCHAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define WCHAN_MAX_FDS 8
/* Messages the event loop may queue for a worker that does not read: beyond, it drops. */
#define WCHAN_MAX_QUEUED 64

struct wchan_out;

struct ioacct_wchan {
	int fd;                      /* -1: closed */
	/* Sends by several threads (a worker's log lines) are whole messages each. */
	pthread_mutex_t send_lock;
	/* The message being read: its bytes so far, and the descriptors that came with them. */
	struct ioacct_buf in;
	size_t want;                 /* its length as far as known: the header's, then the whole */
	bool sized;                  /* the header was read and checked */
	int fds[WCHAN_MAX_FDS];
	size_t nfds;
	/* The event loop's queue of messages not sent yet. */
	struct wchan_out *out, **out_tail;
	size_t nout;
	size_t out_off;              /* bytes of the first sent already */
	uint32_t seq;                /* the last sequence number this end used */
};

/* An end of a channel on fd (made non-blocking: every wait is poll()'s). 0 or -errno. */
int ioacct_wchan_init(struct ioacct_wchan *ch, int fd);
/* Closes the socket, the descriptors received and queued; the struct may be initialised again. */
void ioacct_wchan_close(struct ioacct_wchan *ch);

/* The next sequence number of this end (never 0). */
uint32_t ioacct_wchan_next_seq(struct ioacct_wchan *ch);

/*
 * Sends one whole encoded message and nfds descriptors (kept by the caller)
 * before deadline_ms (CLOCK_MONOTONIC ms; 0: none). 0; -ETIMEDOUT,
 * -ECANCELED (cancel readable), -EPIPE or another -errno, after which the
 * channel is broken (part of a message may be sent).
 */
int ioacct_wchan_send(struct ioacct_wchan *ch, const struct ioacct_buf *msg, const int *fds,
		      size_t nfds, uint64_t deadline_ms, int cancel);

/*
 * The event loop's send: as much as the socket takes now, the rest (whole
 * messages, the descriptors duplicated) queued for ioacct_wchan_flush().
 * 0; -EAGAIN when WCHAN_MAX_QUEUED messages wait already (nothing queued);
 * another -errno when the channel is broken.
 */
int ioacct_wchan_queue(struct ioacct_wchan *ch, const struct ioacct_buf *msg, const int *fds,
		       size_t nfds);
/* Sends what the queue holds, as far as the socket takes it. 0 or -errno (broken). */
int ioacct_wchan_flush(struct ioacct_wchan *ch);
/* Whether messages wait in the queue (the loop then waits for the socket to take them). */
bool ioacct_wchan_queued(const struct ioacct_wchan *ch);

/*
 * Reads until a whole message is in ch->in (ch->fds: its descriptors) or
 * deadline_ms passes (0: do not wait at all). 1 with a message, 0 when
 * none is whole yet and the deadline passed (the part read is kept),
 * -ECONNRESET at the peer's end, -ECANCELED, -EPROTO/-EMSGSIZE with err
 * for a bad header, another -errno. After a message, ioacct_wchan_done().
 */
int ioacct_wchan_recv(struct ioacct_wchan *ch, uint64_t deadline_ms, int cancel, char *err,
		      size_t errlen);
/* The message read is handled: its descriptors not taken are closed, the next may be read. */
void ioacct_wchan_done(struct ioacct_wchan *ch);
/* Takes descriptor i of the message read (-1 when it has none): the caller closes it. */
int ioacct_wchan_take_fd(struct ioacct_wchan *ch, size_t i);

/* The message read's type and sequence number (after a 1 from ioacct_wchan_recv). */
uint16_t ioacct_wchan_type(const struct ioacct_wchan *ch);
uint32_t ioacct_wchan_seq(const struct ioacct_wchan *ch);

/* The peer's request during a call (QUERY, JOB), answered into rep (status set on failure). */
typedef void (*ioacct_wchan_serve_fn)(void *ctx, const struct ioacct_request *req,
				      struct ioacct_reply *rep);
/* A log line of the peer (w_log: level in code, the line in text). */
typedef void (*ioacct_wchan_log_fn)(void *ctx, const struct ioacct_req_worker *line);

/*
 * A call: sends req (its seq set here) with nfds descriptors, then reads
 * until its reply, logging the peer's lines with on_log and answering its
 * requests with serve (NULL: it may make none) meanwhile. 0 with *rep (the
 * caller frees it); -ETIMEDOUT at deadline_ms (0: none), -ECANCELED,
 * -EPROTO for a message out of place, another -errno; err says what
 * failed. Anything but 0 leaves the channel unusable (a reply may come
 * late, or half a message was sent).
 */
int ioacct_wchan_call(struct ioacct_wchan *ch, struct ioacct_request *req, const int *fds,
		      size_t nfds, struct ioacct_reply *rep, ioacct_wchan_serve_fn serve,
		      void *sctx, ioacct_wchan_log_fn on_log, void *lctx, uint64_t deadline_ms,
		      int cancel, char *err, size_t errlen);

/* Encodes and sends a reply (blocking, until deadline_ms or cancel). 0 or -errno. */
int ioacct_wchan_reply(struct ioacct_wchan *ch, const struct ioacct_reply *rep,
		       uint64_t deadline_ms, int cancel);

/* CLOCK_MONOTONIC in ms, the deadlines' clock. */
uint64_t ioacct_wchan_now_ms(void);

#endif /* IOACCT_WCHAN_H */
