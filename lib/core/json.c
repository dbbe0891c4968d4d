// SPDX-License-Identifier: GPL-2.0-or-later
#include "json.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * The length of the UTF-8 sequence at p, with *valid; when it is not valid,
 * the length of its maximal subpart: the longest start of a well-formed
 * sequence (Unicode table 3-7), at least one byte. The NUL that ends the
 * string is never a continuation byte, so this never reads past it.
 */
static size_t utf8_seq(const unsigned char *p, bool *valid)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	*valid = false;
	if (p[0] < 0x80) {
		*valid = true;
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 1;
	/* The second byte's range rules out overlong forms, surrogates and > U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi)
			return i;
		lo = 0x80;
		hi = 0xbf;
	}
	*valid = true;
	return n;
}

void ioacct_json_string(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;

	putc_unlocked('"', f);
	while (*p) {
		const char *esc = NULL;
		char u[7];
		bool valid;
		size_t n = utf8_seq(p, &valid);

		if (valid && n > 1) {
			p += n;
			continue;
		}
		if (!valid) {
			esc = "\\ufffd";
		} else {
			switch (*p) {
			case '"':
				esc = "\\\"";
				break;
			case '\\':
				esc = "\\\\";
				break;
			case '\b':
				esc = "\\b";
				break;
			case '\f':
				esc = "\\f";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			case '\t':
				esc = "\\t";
				break;
			default:
				if (*p < 0x20 || *p == 0x7f) {
					u[0] = '\\', u[1] = 'u', u[2] = '0', u[3] = '0';
					u[4] = hex[*p >> 4], u[5] = hex[*p & 0xf], u[6] = '\0';
					esc = u;
				}
			}
		}
		if (!esc) {
			p++;
			continue;
		}
		/* Plain bytes go out in runs: report paths and names are mostly plain. */
		fwrite_unlocked(run, 1, (size_t)(p - run), f);
		fputs_unlocked(esc, f);
		p += n;
		run = p;
	}
	fwrite_unlocked(run, 1, (size_t)(p - run), f);
	putc_unlocked('"', f);
}
