/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A worker's side of its channel (worker.h): what every kind of worker
 * (wmain.c's table) is given, and the calls it may make of the core.
 *
 * A kind of worker is:
 *  - init: after w_init, with ws->cfg the core's configuration and the
 *    message's other descriptors in fds (-1 for those it takes: the rest
 *    are closed after): checks its settings and starts what it serves. 0,
 *    or -errno with err (the core says why it cannot start). Before the
 *    filter: it may open, start threads, and so on;
 *  - serve: a request of the core with its descriptors (the same rule),
 *    answered into rep (its status and error on failure); 1 for a message
 *    answered with nothing (w_page);
 *  - fini: at the channel's end;
 *  - groups: its filter (sandbox.h);
 *  - files: what it reads by name once it serves, beyond the system's
 *    trees (sandbox.h's Landlock rules).
 */
#ifndef IOACCT_WSIDE_H
#define IOACCT_WSIDE_H

#include <stddef.h>

#include "config.h"
#include "log.h"
#include "proto.h"
#include "wchan.h"

struct ioacct_wside {
	const char *name;
	unsigned int start;          /* 1 for the first, counting the restarts */
	struct ioacct_config cfg;    /* the core's */
	struct ioacct_wchan ch;      /* descriptor 3 */
	void *state;                 /* the kind's */
};

struct ioacct_sb_files;

struct ioacct_worker_kind {
	const char *name;
	int (*init)(struct ioacct_wside *ws, int *fds, size_t nfds, char *err, size_t errlen);
	int (*serve)(struct ioacct_wside *ws, const struct ioacct_request *req, int *fds,
		     size_t nfds, struct ioacct_reply *rep);
	void (*fini)(struct ioacct_wside *ws);
	unsigned int groups;
	/*
	 * With IOACCT_SB_READ_FILES: the files it reads beyond the system's
	 * trees (sandbox.h, Landlock), added to f. NULL: none. 0 or -errno.
	 */
	int (*files)(const struct ioacct_wside *ws, struct ioacct_sb_files *f);
};

/* The kinds wmain.c knows, each in its own file. */
extern const struct ioacct_worker_kind ioacct_worker_metrics;
extern const struct ioacct_worker_kind ioacct_worker_pg;
extern const struct ioacct_worker_kind ioacct_worker_otlp;
extern const struct ioacct_worker_kind ioacct_worker_elf;

/* The log's sink in a worker: a w_log message to the core (ctx: the ioacct_wside). */
void ioacct_wside_log_sink(enum ioacct_log_level level, const char *msg, void *ctx);

/*
 * A request of the worker to the core during the request it serves (JOB:
 * an outbox job's pages), waiting for the reply. 0 with *rep, or -errno
 * with err.
 */
int ioacct_wside_call(struct ioacct_wside *ws, struct ioacct_request *req,
		      struct ioacct_reply *rep, char *err, size_t errlen);

/*
 * Reads exactly `len` bytes of a memfd the core sent (w_page, w_post) into
 * a new buffer (NUL-terminated after them). 0 or -errno: -EPROTO when the
 * memfd is not exactly that long.
 */
int ioacct_wside_read_memfd(int fd, size_t len, char **out);

#endif /* IOACCT_WSIDE_H */
