// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/core/util.c: clocks and the one error-message helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "proto.h"
#include "util.h"

static void test_seterr(void **state)
{
	char err[16] = "untouched";
	static const int small[] = { 1, 2, 3 };

	(void)state;
	assert_int_equal(ARRAY_SIZE(small), 3);
	assert_true(NSEC_PER_SEC == 1000 * NSEC_PER_MSEC);
	assert_int_equal(ioacct_seterr(err, sizeof(err), -EINVAL, "bad %s: %d", "key", 42), -EINVAL);
	assert_string_equal(err, "bad key: 42");
	/* Truncated, still a string. */
	assert_int_equal(ioacct_seterr(err, sizeof(err), -ENOENT, "%s", "a message far too long"), -ENOENT);
	assert_string_equal(err, "a message far t");
	/* No buffer: the code alone, nothing written. */
	assert_int_equal(ioacct_seterr(NULL, 0, -EIO, "x"), -EIO);
	strcpy(err, "same");
	assert_int_equal(ioacct_seterr(err, 0, -EIO, "x"), -EIO);
	assert_string_equal(err, "same");
}

static void test_reply_error(void **state)
{
	struct ioacct_reply rep;

	(void)state;
	memset(&rep, 0, sizeof(rep));
	ioacct_reply_error(&rep, -ENOENT, "no job %d", 7);
	assert_int_equal(rep.status, -ENOENT);
	assert_string_equal(rep.error, "no job 7");
	ioacct_reply_free(&rep);
}

/* CLOCK_REALTIME's seconds; not time(), which reads the coarse clock and may lag a tick. */
static time_t wall_s(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts), 0);
	return ts.tv_sec;
}

static void test_clocks(void **state)
{
	time_t before = wall_s(), after;
	uint64_t m1 = ioacct_mono_ns(), m2, ms;
	int64_t w = ioacct_wall_ns();

	(void)state;
	after = wall_s();
	m2 = ioacct_mono_ns();
	ms = ioacct_mono_ms();
	assert_true(m1 > 0 && m2 >= m1);
	assert_true(ms >= m2 / NSEC_PER_MSEC);
	/* The wall clock in ns agrees with the system's: the same second or between the two reads. */
	assert_true(w / NSEC_PER_SEC >= before && w / NSEC_PER_SEC <= after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seterr),
		cmocka_unit_test(test_reply_error),
		cmocka_unit_test(test_clocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
