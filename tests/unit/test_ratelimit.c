// SPDX-License-Identifier: GPL-2.0-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ratelimit.h"

struct reports {
	unsigned int n;
	uint32_t key[8];
	uint64_t suppressed[8];
	uint64_t window_ms;
};

static void record(uint32_t key, uint64_t suppressed, uint64_t window_ms, void *ctx)
{
	struct reports *r = ctx;

	assert_true(r->n < 8);
	r->key[r->n] = key;
	r->suppressed[r->n] = suppressed;
	r->window_ms = window_ms;
	r->n++;
}

/* `burst` events pass, the rest are counted, and the count comes back once when the window ends. */
static void test_burst_then_count(void **state)
{
	struct ioacct_ratelimit rl;
	struct reports r = { 0 };
	unsigned int allowed = 0;

	(void)state;
	ioacct_ratelimit_init(&rl, 10, 60000, 16);
	for (unsigned int i = 0; i < 10000; i++)
		allowed += ioacct_ratelimit_allow(&rl, 1000, 1000 + i, record, &r);
	assert_int_equal(allowed, 10);
	assert_int_equal(r.n, 0);
	/* Not yet: the window of 60 s started at 1000. */
	ioacct_ratelimit_flush(&rl, 60999, record, &r);
	assert_int_equal(r.n, 0);
	ioacct_ratelimit_flush(&rl, 61000, record, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.key[0], 1000);
	assert_int_equal(r.suppressed[0], 9990);
	assert_int_equal(r.window_ms, 60000);
	/* Reported once, and the key is forgotten: a new window, a full burst again. */
	ioacct_ratelimit_flush(&rl, 200000, record, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(rl.n, 0);
	for (unsigned int i = 0; i < 10; i++)
		assert_true(ioacct_ratelimit_allow(&rl, 1000, 200000, record, &r));
	assert_false(ioacct_ratelimit_allow(&rl, 1000, 200000, record, &r));
	ioacct_ratelimit_free(&rl);
}

/* A new event after the window reports the old window's count before it is counted itself. */
static void test_report_on_next_event(void **state)
{
	struct ioacct_ratelimit rl;
	struct reports r = { 0 };

	(void)state;
	ioacct_ratelimit_init(&rl, 1, 1000, 16);
	assert_true(ioacct_ratelimit_allow(&rl, 7, 0, record, &r));
	assert_false(ioacct_ratelimit_allow(&rl, 7, 10, record, &r));
	assert_false(ioacct_ratelimit_allow(&rl, 7, 999, record, &r));
	assert_true(ioacct_ratelimit_allow(&rl, 7, 1000, record, &r));
	assert_int_equal(r.n, 1);
	assert_int_equal(r.suppressed[0], 2);
	/* Nothing suppressed in a window: nothing to report. */
	ioacct_ratelimit_flush(&rl, 5000, record, &r);
	assert_int_equal(r.n, 1);
	ioacct_ratelimit_free(&rl);
}

/* Each key has its own budget: one flooding peer does not silence another. */
static void test_keys_apart(void **state)
{
	struct ioacct_ratelimit rl;
	struct reports r = { 0 };

	(void)state;
	ioacct_ratelimit_init(&rl, 2, 1000, 16);
	for (unsigned int i = 0; i < 100; i++)
		ioacct_ratelimit_allow(&rl, 1, 0, record, &r);
	assert_true(ioacct_ratelimit_allow(&rl, 2, 0, record, &r));
	assert_true(ioacct_ratelimit_allow(&rl, 2, 0, record, &r));
	assert_false(ioacct_ratelimit_allow(&rl, 2, 0, record, &r));
	ioacct_ratelimit_flush(&rl, 1000, record, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.suppressed[0] + r.suppressed[1], 98 + 1);
	ioacct_ratelimit_free(&rl);
}

/* Beyond max_keys, keys share IOACCT_RATELIMIT_OTHER's entry: memory stays bounded. */
static void test_max_keys(void **state)
{
	struct ioacct_ratelimit rl;
	struct reports r = { 0 };
	unsigned int allowed = 0;

	(void)state;
	ioacct_ratelimit_init(&rl, 1, 1000, 4);
	for (uint32_t k = 0; k < 1000; k++)
		allowed += ioacct_ratelimit_allow(&rl, k, 0, record, &r);
	/* 4 keys of their own, one event of all the others. */
	assert_int_equal(allowed, 5);
	assert_int_equal(rl.n, 5);
	ioacct_ratelimit_flush(&rl, 1000, record, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.key[0], IOACCT_RATELIMIT_OTHER);
	assert_int_equal(r.suppressed[0], 995);
	assert_int_equal(rl.n, 0);
	ioacct_ratelimit_free(&rl);
	ioacct_ratelimit_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_count),
		cmocka_unit_test(test_report_on_next_event),
		cmocka_unit_test(test_keys_apart),
		cmocka_unit_test(test_max_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
