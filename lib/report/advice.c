// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The advice items' helpers (report_internal.h): shared by the per-mount
 * rules (report.c) and the per-file ones (files.c), which use nothing of
 * each other but through here and report.c's call of files.c.
 */
#include "report_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ioacct_advice *ioacct_advice_new(struct advice_ctx *ctx, enum ioacct_advice_level level,
					const char *rule, const struct ioacct_report_mount *m,
					int dir)
{
	struct ioacct_report *r = ctx->r;
	struct ioacct_advice *a;

	if (ctx->err)
		return NULL;
	if (r->nadvice == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 8;
		struct ioacct_advice *v = realloc(r->advice, cap * sizeof(*v));

		if (!v) {
			ctx->err = -ENOMEM;
			return NULL;
		}
		r->advice = v;
		ctx->cap = cap;
	}
	a = &r->advice[r->nadvice++];
	memset(a, 0, sizeof(*a));
	a->level = level;
	a->rule = rule;
	a->mount = m;
	a->dir = dir;
	return a;
}

void ioacct_advice_say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void ioacct_advice_value_u(struct ioacct_advice_value *v, size_t *n, const char *name, uint64_t u)
{
	if (*n < IOACCT_ADVICE_VALUES)
		v[(*n)++] = (struct ioacct_advice_value){ .name = name, .is_int = true, .u = u,
							  .d = (double)u };
}

void ioacct_advice_value_d(struct ioacct_advice_value *v, size_t *n, const char *name, double d)
{
	if (*n < IOACCT_ADVICE_VALUES)
		v[(*n)++] = (struct ioacct_advice_value){ .name = name, .d = d };
}
