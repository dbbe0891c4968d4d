/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unprivileged worker processes (issue 37). What faces the network (the
 * /metrics server, the cluster store's connections, the OTLP sender) and
 * what parses a file a job named (an MPI library's ELF symbols) runs in a
 * process of its own, not a thread of the core: ioacctd itself executed
 * again (/proc/self/exe --worker NAME), as the `user` account of
 * ioacct.conf, with no capability (effective, permitted, inheritable,
 * ambient, and the bounding set empty when the core may empty it),
 * NoNewPrivs, no descriptor of the core's but its channel and what it is
 * given, not dumpable, and a seccomp filter of its own (sandbox.h), loaded
 * before it reads anything from outside. A crash or an exploit there
 * reaches neither the BPF objects nor the SQLite store.
 *
 * The core talks to a worker over a socketpair in the wire protocol
 * (wchan.h, proto.h's W_* messages): the worker's log lines come back to
 * the core's log with its name. A worker that dies (a crash, kill -9, a
 * system call outside its filter) is said in the log with its exit status
 * and started again, after 1 s, doubling to 60 s while it keeps dying, back
 * to 1 s after it ran a minute. Only the event loop forks workers
 * (ioacct_workers_tick()): a worker dies with the thread that forked it
 * (PR_SET_PDEATHSIG), and the loop lives as long as the daemon.
 *
 * Two kinds of use:
 *  - the event loop's workers (ops given: /metrics, ELF) are never waited
 *    for: ioacct_worker_send() queues a request, and their replies are read
 *    by ioacct_workers_tick() when ioacct_workers_fd() woke the loop;
 *  - a thread's workers (ops NULL: the exporter, the cluster queries, the
 *    job loader, the OTLP sender) are called, one call at a time, by
 *    ioacct_worker_call(), which waits for the reply (serving the worker's
 *    own requests meanwhile) until its timeout or ioacct_workers_cancel().
 */
#ifndef IOACCT_WORKER_H
#define IOACCT_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "proto.h"

/* Restarts: the first after BACKOFF_MIN_MS, doubling to MAX; back to MIN after STABLE_MS up. */
#define IOACCT_WORKER_BACKOFF_MIN_MS 1000
#define IOACCT_WORKER_BACKOFF_MAX_MS 60000
#define IOACCT_WORKER_STABLE_MS 60000
/* A worker that does not end on its channel's close within this is killed (SIGKILL). */
#define IOACCT_WORKER_STOP_MS 2000
/* The command-line word that makes ioacctd a worker (tools/ioacctd.c). */
#define IOACCT_WORKER_ARG "--worker"

struct ioacct_worker;

/* The event loop's side of one of its workers. */
struct ioacct_worker_ops {
	/* A reply to a request of ioacct_worker_send() (its seq in rep->seq). */
	void (*reply)(void *ctx, const struct ioacct_reply *rep);
	/* Started (again) and ready: what it must know is sent again (the last page). */
	void (*ready)(void *ctx);
	/* Gone: the requests sent and not answered never will be. */
	void (*down)(void *ctx);
};

/* A request of the worker during a call (QUERY, JOB), answered into rep. */
typedef void (*ioacct_worker_serve_fn)(void *ctx, const struct ioacct_request *req,
				       struct ioacct_reply *rep);

/*
 * The daemon's workers: before the first (from main, with the configuration
 * that lives as long as they do), and after the last is freed.
 */
int ioacct_workers_init(const struct ioacct_config *cfg);
void ioacct_workers_fini(void);
/* Readable when an event-loop worker has something for ioacct_workers_tick(). */
int ioacct_workers_fd(void);
/*
 * The event loop's round: reads its workers' messages, sends what waits,
 * reaps the dead (saying how they ended) and starts again those due.
 */
void ioacct_workers_tick(void);
/* Stopping: every call in progress, and every one after, ends with -ECANCELED. */
void ioacct_workers_cancel(void);
/* Whether ioacct_workers_cancel() was called: a call that failed then failed for the stop. */
bool ioacct_workers_stopping(void);

/*
 * A worker named `name` (the table of sandbox.h/wmain.c), given the
 * descriptors fds at each start (duplicated here; the caller keeps its
 * own). ops NULL: a thread's. Not started: ioacct_worker_start(). NULL
 * with errno when out of memory.
 */
struct ioacct_worker *ioacct_worker_new(const char *name, const int *fds, size_t nfds,
					const struct ioacct_worker_ops *ops, void *ctx);
/*
 * Starts it; from the event loop (or main before it). wait_ms > 0: waits
 * that long for it to be ready, so that a setting it refuses stops the
 * daemon's start with its reason in err. 0 or -errno with err; a worker
 * whose start failed is not started again.
 */
int ioacct_worker_start(struct ioacct_worker *w, int wait_ms, char *err, size_t errlen);
/* Stops it (its channel closed; killed after IOACCT_WORKER_STOP_MS) and frees it; NULL is fine. */
void ioacct_worker_free(struct ioacct_worker *w);
/* Its process, 0 while there is none (for tests: /proc/PID/status). */
pid_t ioacct_worker_pid(const struct ioacct_worker *w);

/*
 * The event loop's send of a request (its seq, for ops->reply, in *seq)
 * with descriptors (kept by the caller). 0; -ENOTCONN while the worker is
 * not running or not ready; -EAGAIN when it does not read.
 */
int ioacct_worker_send(struct ioacct_worker *w, struct ioacct_request *req, const int *fds,
		       size_t nfds, uint32_t *seq);

/*
 * A thread's call: sends req with fds and waits for the reply at most
 * timeout_ms (0: as long as it takes), serving the worker's requests with
 * serve (NULL: it may make none). 0 with *rep (free it); -ENOTCONN when
 * the worker is not running; -ETIMEDOUT, -ECANCELED or another -errno,
 * err filled, after which the worker is stopped and started again.
 */
int ioacct_worker_call(struct ioacct_worker *w, struct ioacct_request *req, const int *fds,
		       size_t nfds, struct ioacct_reply *rep, ioacct_worker_serve_fn serve,
		       void *ctx, int timeout_ms, char *err, size_t errlen);

/* A sealed memfd holding len bytes of data, for a worker to read (w_page, w_post). -errno. */
int ioacct_worker_memfd(const char *name, const void *data, size_t len);

#endif /* IOACCT_WORKER_H */
