// SPDX-License-Identifier: GPL-2.0-or-later
#include "ratelimit.h"

#include <stdlib.h>
#include <string.h>

void ioacct_ratelimit_init(struct ioacct_ratelimit *rl, uint32_t burst, uint64_t window_ms,
			   size_t max_keys)
{
	memset(rl, 0, sizeof(*rl));
	rl->burst = burst;
	rl->window_ms = window_ms ? window_ms : 1;
	/* One more for IOACCT_RATELIMIT_OTHER. */
	rl->max_keys = max_keys ? max_keys : 1;
}

void ioacct_ratelimit_free(struct ioacct_ratelimit *rl)
{
	if (!rl)
		return;
	free(rl->e);
	rl->e = NULL;
	rl->n = rl->cap = 0;
}

static struct ioacct_ratelimit_entry *entry_add(struct ioacct_ratelimit *rl, uint32_t key,
						uint64_t now_ms)
{
	struct ioacct_ratelimit_entry *e;

	if (rl->n == rl->cap) {
		size_t cap = rl->cap ? rl->cap * 2 : 16;
		struct ioacct_ratelimit_entry *ne = realloc(rl->e, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		rl->e = ne;
		rl->cap = cap;
	}
	e = &rl->e[rl->n++];
	*e = (struct ioacct_ratelimit_entry){ .key = key, .start_ms = now_ms };
	return e;
}

static struct ioacct_ratelimit_entry *entry_find(struct ioacct_ratelimit *rl, uint32_t key)
{
	for (size_t i = 0; i < rl->n; i++)
		if (rl->e[i].key == key)
			return &rl->e[i];
	return NULL;
}

static bool window_ended(const struct ioacct_ratelimit *rl,
			 const struct ioacct_ratelimit_entry *e, uint64_t now_ms)
{
	return now_ms - e->start_ms >= rl->window_ms;
}

bool ioacct_ratelimit_allow(struct ioacct_ratelimit *rl, uint32_t key, uint64_t now_ms,
			    ioacct_ratelimit_report_fn report, void *ctx)
{
	struct ioacct_ratelimit_entry *e = entry_find(rl, key);

	if (!e) {
		/* Keys beyond max_keys (other than OTHER itself) share OTHER's entry. */
		size_t keys = rl->n - (entry_find(rl, IOACCT_RATELIMIT_OTHER) ? 1 : 0);

		if (key != IOACCT_RATELIMIT_OTHER && keys >= rl->max_keys)
			return ioacct_ratelimit_allow(rl, IOACCT_RATELIMIT_OTHER, now_ms, report,
						      ctx);
		e = entry_add(rl, key, now_ms);
		if (!e)
			return true;
	}
	if (window_ended(rl, e, now_ms)) {
		if (e->suppressed && report)
			report(e->key, e->suppressed, rl->window_ms, ctx);
		e->start_ms = now_ms;
		e->count = 0;
		e->suppressed = 0;
	}
	if (e->count < rl->burst) {
		e->count++;
		return true;
	}
	e->suppressed++;
	return false;
}

void ioacct_ratelimit_flush(struct ioacct_ratelimit *rl, uint64_t now_ms,
			    ioacct_ratelimit_report_fn report, void *ctx)
{
	size_t i = 0;

	while (i < rl->n) {
		struct ioacct_ratelimit_entry *e = &rl->e[i];

		if (!window_ended(rl, e, now_ms)) {
			i++;
			continue;
		}
		if (e->suppressed && report)
			report(e->key, e->suppressed, rl->window_ms, ctx);
		/* Forgotten: its next event opens a fresh window. Order does not matter. */
		rl->e[i] = rl->e[--rl->n];
	}
}
