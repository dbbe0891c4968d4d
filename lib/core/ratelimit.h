/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A per-key rate limiter for log lines: at most `burst` events per key in
 * each window of `window_ms`; the rest are counted, and when the window ends
 * the count is handed back once, so that one line can say how many were
 * suppressed. Keys are peer uids for ioacctd's socket: a user who sends
 * 10,000 bad requests costs the log a few lines, not 10,000.
 *
 * Pure logic on a caller-supplied clock, so that it is unit-tested without
 * waiting. At most `max_keys` keys are tracked; events of further keys share
 * one entry, IOACCT_RATELIMIT_OTHER, so memory stays bounded whatever the
 * peers do.
 */
#ifndef IOACCT_RATELIMIT_H
#define IOACCT_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IOACCT_RATELIMIT_OTHER UINT32_MAX

struct ioacct_ratelimit_entry {
	uint32_t key;
	uint32_t count;      /* events in the current window, logged or not */
	uint64_t start_ms;   /* when the current window began */
	uint64_t suppressed; /* events not logged in the current window */
};

struct ioacct_ratelimit {
	uint32_t burst;
	uint64_t window_ms;
	size_t max_keys;
	struct ioacct_ratelimit_entry *e;
	size_t n;
	size_t cap;
};

/* Called by _flush() for each key whose window ended with events suppressed. */
typedef void (*ioacct_ratelimit_report_fn)(uint32_t key, uint64_t suppressed,
					   uint64_t window_ms, void *ctx);

void ioacct_ratelimit_init(struct ioacct_ratelimit *rl, uint32_t burst, uint64_t window_ms,
			   size_t max_keys);
void ioacct_ratelimit_free(struct ioacct_ratelimit *rl);

/*
 * One event of `key` at `now_ms`: true when it may be logged. A key whose
 * previous window ended is reported first (through `report`, may be NULL)
 * and starts a new window. Never fails: out of memory, the event is
 * accounted to IOACCT_RATELIMIT_OTHER's entry, or simply allowed.
 */
bool ioacct_ratelimit_allow(struct ioacct_ratelimit *rl, uint32_t key, uint64_t now_ms,
			    ioacct_ratelimit_report_fn report, void *ctx);

/*
 * Reports every key whose window has ended with events suppressed, and
 * forgets keys whose window has ended: call it now and then (the daemon does
 * every loop), so that the "suppressed" line comes even when the flood stops.
 */
void ioacct_ratelimit_flush(struct ioacct_ratelimit *rl, uint64_t now_ms,
			    ioacct_ratelimit_report_fn report, void *ctx);

#endif /* IOACCT_RATELIMIT_H */
