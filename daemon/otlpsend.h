/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spans' way out (issue 37): every job's OTLP exporter (lib/trace/otlp.c,
 * jobtrace.c) encodes its batches in the core and hands each to one
 * unprivileged worker (worker.h, "otlp"; otlpw.c) that POSTs it to
 * otlp_url and says the collector's HTTP status. The jobs' sender threads
 * call it one at a time (a single collector; each POST bounded by its
 * timeout). A worker down means the batch is dropped and counted, as a
 * collector that does not answer.
 */
#ifndef IOACCT_OTLPSEND_H
#define IOACCT_OTLPSEND_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Starts the worker when otlp_url is set; from the event loop's thread. 0 or -errno (logged). */
int ioacct_otlpsend_start(const struct ioacct_config *cfg);
/* Stops it; a sender still running after this gets -ESHUTDOWN. */
void ioacct_otlpsend_stop(void);
/* An ioacct_otlp_post_fn (otlp.h): the batch to the worker, its answer back. */
int ioacct_otlpsend_post(void *ctx, const void *body, size_t len, int timeout_ms,
			 int64_t *retry_after_ms, char *err, size_t errlen);

#endif /* IOACCT_OTLPSEND_H */
