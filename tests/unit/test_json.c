// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/core/json.c: the one JSON string encoder (RFC 8259, U+FFFD for what is not UTF-8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"

#define FFFD "\\ufffd"

static char *json(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ioacct_json_string(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void check(const char *const cases[][2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *got = json(cases[i][0]);

		if (strcmp(got, cases[i][1]))
			fail_msg("case %zu: got %s, want %s", i, got, cases[i][1]);
		free(got);
	}
}

static void test_ascii(void **state)
{
	static const char *const cases[][2] = {
		{ "", "\"\"" },
		{ "plain /path", "\"plain /path\"" },
		{ "a\"b\\c/d", "\"a\\\"b\\\\c/d\"" },
		/* RFC 8259's short escapes, \u00XX for the other control characters. */
		{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
		{ "\x01\x1b[31m\x1f", "\"\\u0001\\u001b[31m\\u001f\"" },
		{ "del\x7f", "\"del\\u007f\"" },
		{ "\"", "\"\\\"\"" },
	};

	(void)state;
	check(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_utf8_kept(void **state)
{
	static const char *const cases[][2] = {
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "\xc2\x80 \xdf\xbf", "\"\xc2\x80 \xdf\xbf\"" },
		{ "\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbd",
		  "\"\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbd\"" },
		{ "\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
		  "\"\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"" },
	};

	(void)state;
	check(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Each maximal subpart of an ill-formed sequence is one U+FFFD (Unicode 15, section 3.9). */
static void test_invalid_replaced(void **state)
{
	static const char *const cases[][2] = {
		/* Stray bytes: a lone continuation byte, Latin-1, bytes never in UTF-8. */
		{ "\x80", "\"" FFFD "\"" },
		{ "caf\xe9", "\"caf" FFFD "\"" },
		{ "\xff\xfe", "\"" FFFD FFFD "\"" },
		{ "\xc0\xaf", "\"" FFFD FFFD "\"" },           /* overlong '/': C0 is never a lead */
		{ "\xc1\xbf", "\"" FFFD FFFD "\"" },
		{ "\xf5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"" },
		/* Overlong, surrogate and past U+10FFFF: the second byte is out of range. */
		{ "\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"" },
		{ "\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"" },
		{ "\xf0\x8f\xbf\xbf", "\"" FFFD FFFD FFFD FFFD "\"" },
		{ "\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"" },
		/* Truncated: the start of a valid sequence is one U+FFFD, whatever follows. */
		{ "x\xc3", "\"x" FFFD "\"" },
		{ "\xc3(", "\"" FFFD "(\"" },
		{ "\xe2\x82", "\"" FFFD "\"" },
		{ "\xe2\x82" "a", "\"" FFFD "a\"" },
		{ "\xf0\x9f\x98", "\"" FFFD "\"" },
		{ "\xf0\x9f\x98\xf0\x9f\x98\x80", "\"" FFFD "\xf0\x9f\x98\x80\"" },
		{ "\xe2\x82\n", "\"" FFFD "\\n\"" },
		{ "\xe2\x82\"", "\"" FFFD "\\\"\"" },
		/* Everything together. */
		{ "a\"b\\c\nd\x01" "e\xff\xc3\xa9", "\"a\\\"b\\\\c\\nd\\u0001e" FFFD "\xc3\xa9\"" },
	};

	(void)state;
	check(cases, sizeof(cases) / sizeof(cases[0]));
}

/* A long plain string goes out whole, and a write error stays in the stream. */
static void test_long_and_errors(void **state)
{
	char in[5000], want[5003];
	char *got;
	FILE *full;

	(void)state;
	memset(in, 'x', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	snprintf(want, sizeof(want), "\"%s\"", in);
	got = json(in);
	assert_string_equal(got, want);
	free(got);
	full = fopen("/dev/full", "we");
	if (!full)
		skip();
	setvbuf(full, NULL, _IONBF, 0);
	ioacct_json_string(full, "a\xff");
	assert_true(ferror(full));
	fclose(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii),
		cmocka_unit_test(test_utf8_kept),
		cmocka_unit_test(test_invalid_replaced),
		cmocka_unit_test(test_long_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
