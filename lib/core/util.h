/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small things every part of ioacct needs, in one place: array sizes, time
 * units, clocks, and the one way to write an error message into a caller's
 * buffer.
 */
#ifndef IOACCT_UTIL_H
#define IOACCT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Signed 64-bit, as the kernel's: they mix with both int64_t times and uint64_t widths. */
#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL

/* CLOCK_MONOTONIC in ns (job time bases, deadlines) and in ms (poll timeouts). */
uint64_t ioacct_mono_ns(void);
uint64_t ioacct_mono_ms(void);
/* CLOCK_REALTIME in ns since the epoch (job start and end times). */
int64_t ioacct_wall_ns(void);

/*
 * Writes the message into err, truncated to errlen, and returns code, so
 * that `return ioacct_seterr(err, errlen, -EINVAL, "...", ...);` reports and
 * fails in one line. err may be NULL (or errlen 0): the caller wants the
 * code alone.
 */
int ioacct_seterr(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int ioacct_vseterr(char *err, size_t errlen, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif /* IOACCT_UTIL_H */
