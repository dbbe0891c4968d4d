/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report tests' two checks: a report rendered into memory, and a piece
 * of it that must be there, exactly. Include after cmocka.h and render.h.
 */
#ifndef IOACCT_TEST_RENDERCHECK_H
#define IOACCT_TEST_RENDERCHECK_H

#include <stdio.h>
#include <string.h>

/*
 * r rendered by fn into memory; the caller frees. Not inlined: GCC then
 * takes the result for a pointer to the local open_memstream() filled.
 */
__attribute__((noinline, unused))
static char *render(const struct ioacct_report *r, int (*fn)(FILE *, const struct ioacct_report *))
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mf = open_memstream(&buf, &n);

	assert_non_null(mf);
	assert_int_equal(fn(mf, r), 0);
	assert_int_equal(fclose(mf), 0);
	return buf;
}

static inline void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing: %s", want);
}

#endif /* IOACCT_TEST_RENDERCHECK_H */
