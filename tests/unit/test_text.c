// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/core/text.c: names users control, made fit for text, HTML and UTF-8 stores. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "log.h"
#include "text.h"

#define R IOACCT_UTF8_REPLACEMENT

static char *put(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void check(void (*fn)(FILE *, const char *), const char *const cases[][2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *got = put(fn, cases[i][0]);

		if (strcmp(got, cases[i][1]))
			fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i][1]);
		free(got);
	}
}

static void test_valid(void **state)
{
	(void)state;
	assert_true(ioacct_utf8_valid(""));
	assert_true(ioacct_utf8_valid("/scratch/\xc3\xa9t\xc3\xa9/\xf0\x9f\x98\x80"));
	assert_false(ioacct_utf8_valid("a\xff"));
	assert_false(ioacct_utf8_valid("\xc0\xaf"));         /* overlong */
	assert_false(ioacct_utf8_valid("\xed\xa0\x80"));     /* surrogate */
	assert_false(ioacct_utf8_valid("\xf4\x90\x80\x80")); /* > U+10FFFF */
	assert_false(ioacct_utf8_valid("\xe2\x82"));         /* truncated */
}

static void test_copy(void **state)
{
	char buf[16];
	bool cut;
	char *d;

	(void)state;
	assert_int_equal(ioacct_utf8_copy(buf, sizeof(buf), "a\xff" "b", &cut), 5);
	assert_string_equal(buf, "a" R "b");
	assert_false(cut);
	/* Maximal subparts: a truncated 3-byte sequence is one U+FFFD. */
	ioacct_utf8_copy(buf, sizeof(buf), "\xe2\x82x", &cut);
	assert_string_equal(buf, R "x");
	/* Never cut in the middle of a sequence. */
	ioacct_utf8_copy(buf, 5, "ab\xc3\xa9\xc3\xa9", &cut);
	assert_string_equal(buf, "ab\xc3\xa9");
	assert_true(cut);
	d = ioacct_utf8_dup("\xff\xff\xff");
	assert_non_null(d);
	assert_string_equal(d, R R R);
	assert_true(ioacct_utf8_valid(d));
	free(d);
}

static void test_text(void **state)
{
	static const char *const cases[][2] = {
		{ "plain /path", "plain /path" },
		{ "x\ntotal_POSIX_BYTES_WRITTEN: 9\n# y", "x\\ntotal_POSIX_BYTES_WRITTEN: 9\\n# y" },
		{ "a\rb\tc\\d", "a\\rb\\tc\\\\d" },
		{ "\x1b[31mred\x07", "\\x1b[31mred\\x07" },
		{ "del\x7f", "del\\x7f" },
		{ "c1\xc2\x9b" "2J", "c1\\x9b2J" }, /* U+009B, the 8-bit CSI */
		{ "bad\xff", "bad" R },
		{ "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9" },
	};
	char buf[12];

	(void)state;
	check(ioacct_text_put, cases, sizeof(cases) / sizeof(cases[0]));
	assert_string_equal(ioacct_text_clean(buf, sizeof(buf), "a\nb\xff"), "a\\nb" R);
	/* Truncation never leaves half an escape. */
	assert_string_equal(ioacct_text_clean(buf, 4, "ab\ncd"), "ab");
}

static void test_html(void **state)
{
	static const char *const cases[][2] = {
		{ "<svg/onload=alert(1)>", "&lt;svg/onload=alert(1)&gt;" },
		{ "a\"b'c&d", "a&quot;b&#39;c&amp;d" },
		{ "x\x01y\xff", "x" R "y" R },
		{ "tab\tnl\n", "tab\tnl\n" },
	};

	(void)state;
	check(ioacct_html_put, cases, sizeof(cases) / sizeof(cases[0]));
}

static char logged[8][256], last[256];
static size_t nlogged, nlines;

static void capture(enum ioacct_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	if (nlogged < 8)
		snprintf(logged[nlogged++], sizeof(logged[0]), "%s", msg);
	snprintf(last, sizeof(last), "%s", msg);
	nlines++;
}

/* The daemon's log: a mount path cannot forge a line of it. */
static void test_log(void **state)
{
	(void)state;
	ioacct_log_set_sink(capture, NULL);
	log_info("mount 5 is %s (%s)", "/x\nioacctd: job 7 finished\r\x1b[2J\xff", "tmpfs");
	ioacct_log_set_sink(NULL, NULL);
	assert_int_equal(nlogged, 2);
	assert_string_equal(logged[0], "mount 5 is /x");
	assert_string_equal(logged[1], "  | ioacctd: job 7 finished\\x0d\\x1b[2J" R " (tmpfs)");
}

/* A verifier's log (20 KiB) says why at its end: its first line and its end are logged. */
static void test_log_long(void **state)
{
	size_t len = 0, cap = 32768;
	char *msg = malloc(cap);

	(void)state;
	assert_non_null(msg);
	len += (size_t)snprintf(msg + len, cap - len, "prog 'p': -- BEGIN PROG LOAD LOG --\n");
	for (int i = 0; i < 2000; i++)
		len += (size_t)snprintf(msg + len, cap - len, "%04d: r1 = r2\n", i);
	snprintf(msg + len, cap - len, "failed to resolve CO-RE relocation\n");
	nlogged = nlines = 0;
	ioacct_log_set_sink(capture, NULL);
	log_warn("%s", msg);
	ioacct_log_set_sink(NULL, NULL);
	assert_string_equal(logged[0], "prog 'p': -- BEGIN PROG LOAD LOG --");
	assert_non_null(strstr(logged[1], "  | [... "));
	assert_non_null(strstr(logged[1], " bytes left out ...]"));
	assert_string_equal(last, "  | failed to resolve CO-RE relocation");
	/* The last 3 KiB: about 200 of the 2,000 lines of 14 bytes, each whole. */
	assert_true(nlines > 150 && nlines < 250);
	assert_true(strlen(logged[2]) == 4 + 13);
	free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_log_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
