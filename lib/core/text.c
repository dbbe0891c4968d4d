// SPDX-License-Identifier: GPL-2.0-or-later
#include "text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t ioacct_utf8_seq(const unsigned char *p, bool *valid)
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

bool ioacct_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool valid;

	while (*p) {
		p += ioacct_utf8_seq(p, &valid);
		if (!valid)
			return false;
	}
	return true;
}

size_t ioacct_utf8_copy(char *dst, size_t len, const char *s, bool *cut)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (cut)
		*cut = false;
	while (*p) {
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);
		const char *src = valid ? (const char *)p : IOACCT_UTF8_REPLACEMENT;
		size_t m = valid ? n : sizeof(IOACCT_UTF8_REPLACEMENT) - 1;

		if (o + m >= len) {
			if (cut)
				*cut = true;
			break;
		}
		memcpy(dst + o, src, m);
		o += m;
		p += n;
	}
	dst[o] = '\0';
	return o;
}

char *ioacct_utf8_dup(const char *s)
{
	/* U+FFFD takes 3 bytes for each invalid byte at most. */
	size_t len = strlen(s) * 3 + 1;
	char *d = malloc(len);

	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	ioacct_utf8_copy(d, len, s, NULL);
	return d;
}

/*
 * The escape for the character of n bytes at p in a line of text, into
 * e[5]; NULL when it goes out as it is. p is valid UTF-8.
 */
static const char *text_escape(const unsigned char *p, size_t n, char e[5])
{
	static const char hex[] = "0123456789abcdef";
	unsigned c = p[0];

	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		c = p[1]; /* C1 control, U+0080-U+009F */
	else if (n > 1)
		return NULL;
	switch (c) {
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '\\':
		return "\\\\";
	default:
		if (c >= 0x20 && c != 0x7f && c < 0x80)
			return NULL;
		e[0] = '\\', e[1] = 'x', e[2] = hex[c >> 4], e[3] = hex[c & 0xf], e[4] = '\0';
		return e;
	}
}

void ioacct_text_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);
		char e[5];
		const char *esc = valid ? text_escape(p, n, e) : IOACCT_UTF8_REPLACEMENT;

		if (esc)
			fputs(esc, f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

char *ioacct_text_clean(char *dst, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p) {
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);
		char e[5];
		const char *esc = valid ? text_escape(p, n, e) : IOACCT_UTF8_REPLACEMENT;
		const char *src = esc ? esc : (const char *)p;
		size_t m = esc ? strlen(esc) : n;

		if (o + m >= len)
			break;
		memcpy(dst + o, src, m);
		o += m;
		p += n;
	}
	dst[o] = '\0';
	return dst;
}

void ioacct_html_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);
		const char *esc = NULL;

		if (!valid) {
			esc = IOACCT_UTF8_REPLACEMENT;
		} else if (n == 1) {
			switch (*p) {
			case '&':
				esc = "&amp;";
				break;
			case '<':
				esc = "&lt;";
				break;
			case '>':
				esc = "&gt;";
				break;
			case '"':
				esc = "&quot;";
				break;
			case '\'':
				esc = "&#39;";
				break;
			default:
				if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
					esc = IOACCT_UTF8_REPLACEMENT;
			}
		} else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			esc = IOACCT_UTF8_REPLACEMENT;
		}
		if (esc)
			fputs(esc, f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}
