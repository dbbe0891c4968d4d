/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacctd's socket server: accepts, reads one request per connection,
 * hands it to the registry, writes the reply, closes. A request the
 * registry answers off the event loop (a query of the cluster store,
 * ioacct_registry_defer()) parks its client until the answer is ready. Everything is
 * non-blocking and driven by epoll, so that no client, however slow or
 * hostile, holds the event loop: the daemon keeps draining bins on schedule
 * and root's requests (register, finish: slurmstepd, the epilog, iorun) are
 * served within the clients' timeouts.
 *
 * Limits (constants below; ioacctd(8) says what a client sees):
 * - at most IOACCT_SERVER_MAX_CLIENTS connections, fewer when RLIMIT_NOFILE
 *   is lower (its soft limit is raised to the hard one at start);
 * - a non-root uid holds at most IOACCT_SERVER_PER_UID of them, and all
 *   non-root uids together leave IOACCT_SERVER_ROOT_RESERVE for root; when
 *   every slot is taken, root's connection evicts the oldest non-root one;
 * - a whole request must arrive within IOACCT_SERVER_REQUEST_MS of accept,
 *   and a whole reply be taken within IOACCT_SERVER_REPLY_MS of being
 *   ready; a client that does not is dropped and its buffers freed;
 * - a non-root request is at most IOACCT_SERVER_USER_MAX_REQUEST bytes, and
 *   a non-root uid with IOACCT_SERVER_USER_MAX_PENDING bytes of replies not
 *   yet read gets -EAGAIN instead of more;
 * - warnings about a non-root peer (bad requests, refusals, timeouts) are
 *   rate-limited per uid: IOACCT_SERVER_LOG_BURST per minute, then one line
 *   with the count of those suppressed. Root's are never suppressed.
 * The listen backlog is SOMAXCONN: a burst of connections is queued by the
 * kernel, not refused, and the accept loop empties it each round.
 */
#ifndef IOACCT_SERVER_H
#define IOACCT_SERVER_H

#include <sys/types.h>

#include "jobs.h"
#include "proto.h"

#define IOACCT_SERVER_MAX_CLIENTS 4096
#define IOACCT_SERVER_ROOT_RESERVE 64
#define IOACCT_SERVER_PER_UID 32
#define IOACCT_SERVER_REQUEST_MS 5000
#define IOACCT_SERVER_REPLY_MS 5000
#define IOACCT_SERVER_USER_MAX_REQUEST (64U << 10)
#define IOACCT_SERVER_USER_MAX_PENDING (16U << 20)
#define IOACCT_SERVER_LOG_BURST 10
#define IOACCT_SERVER_LOG_WINDOW_MS 60000

struct ioacct_server;

/*
 * "The reply to this request could not be delivered": called for a request
 * of root's (the only ones that change state: register, finish) whose reply
 * the client did not take in full, because it closed the connection or did
 * not read within IOACCT_SERVER_REPLY_MS. The registry has already acted on
 * `req` and answered `rep` (look at rep->status); the hook may undo what the
 * client will never know happened (a registration whose job id never reached
 * iorun or slurmstepd). Bytes written into the socket count as delivered:
 * a client killed after that is not seen. Called from the event loop, before
 * the client's memory is freed; `req` and `rep` are valid only during the
 * call.
 */
typedef void (*ioacct_server_undelivered_fn)(void *ctx, uid_t uid,
					     const struct ioacct_request *req,
					     const struct ioacct_reply *rep);

/*
 * Serves the listening socket `lfd` (non-blocking) with `reg`'s handlers.
 * Raises RLIMIT_NOFILE's soft limit to the hard one and logs the client
 * limit it allows. NULL with errno on failure.
 */
struct ioacct_server *ioacct_server_create(int lfd, struct ioacct_registry *reg);
/*
 * Also wakes ioacct_server_run() when fd is readable, and does nothing
 * else with it: the caller reads it after the run returns. 0 or -errno.
 */
int ioacct_server_wake_fd(struct ioacct_server *s, int fd);
void ioacct_server_set_undelivered(struct ioacct_server *s, ioacct_server_undelivered_fn fn,
				   void *ctx);

/*
 * Waits at most timeout_ms for clients, then serves what is ready: accepts,
 * reads, handles, writes, and drops clients past their deadline. Returns
 * within about timeout_ms whatever the clients do. 0, or -errno when
 * epoll fails (not on EINTR).
 */
int ioacct_server_run(struct ioacct_server *s, int timeout_ms);

/* Closes every client (replies not delivered are reported); not lfd. */
void ioacct_server_destroy(struct ioacct_server *s);

#endif /* IOACCT_SERVER_H */
