// SPDX-License-Identifier: GPL-2.0-or-later
#include "util.h"

#include <stdio.h>
#include <time.h>

uint64_t ioacct_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t ioacct_mono_ms(void)
{
	return ioacct_mono_ns() / NSEC_PER_MSEC;
}

int64_t ioacct_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int ioacct_vseterr(char *err, size_t errlen, int code, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	return code;
}

int ioacct_seterr(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ioacct_vseterr(err, errlen, code, fmt, ap);
	va_end(ap);
	return code;
}
