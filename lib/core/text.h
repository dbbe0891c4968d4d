/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names users control (job names, workdirs, mount paths, fs types) are bytes,
 * anyone's bytes. Every text that leaves ioacct is UTF-8 and never carries a
 * control character that could forge a line or drive a terminal: these are
 * the one way to make such a name fit to print, store or export. JSON has
 * its own encoder (json.h) built on the same decoder.
 */
#ifndef IOACCT_TEXT_H
#define IOACCT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
#define IOACCT_UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * The length of the UTF-8 sequence at p, with *valid; when it is not valid,
 * the length of its maximal subpart: the longest start of a well-formed
 * sequence (Unicode table 3-7), at least one byte. The NUL that ends a
 * string is never a continuation byte, so this never reads past it.
 */
size_t ioacct_utf8_seq(const unsigned char *p, bool *valid);

/* True when s is valid UTF-8 (an empty string is). */
bool ioacct_utf8_valid(const char *s);

/*
 * Copies s into dst (of size len, NUL-terminated, len > 0) as valid UTF-8:
 * each maximal invalid subpart becomes U+FFFD; control characters are kept.
 * Never cuts a sequence in two. Returns the length written; *cut (may be
 * NULL) says whether s did not fit whole.
 */
size_t ioacct_utf8_copy(char *dst, size_t len, const char *s, bool *cut);

/* A malloc'd valid-UTF-8 copy of s as ioacct_utf8_copy() makes it; NULL and errno ENOMEM. */
char *ioacct_utf8_dup(const char *s);

/*
 * Writes s for a line of text meant for people and for grep: valid UTF-8
 * (U+FFFD for invalid bytes), with every control character (C0, DEL and the
 * C1 range U+0080-U+009F) and the backslash written as an escape: \n \r \t
 * \\ and \xNN for the others. No byte of s can end a line or start a
 * terminal sequence.
 */
void ioacct_text_put(FILE *f, const char *s);

/* The same into a buffer (truncated, NUL-terminated, len > 0); returns dst. */
char *ioacct_text_clean(char *dst, size_t len, const char *s);

/*
 * Writes s for HTML text or a double-quoted attribute value: valid UTF-8,
 * & < > " ' as character references, control characters but \t and \n as
 * U+FFFD.
 */
void ioacct_html_put(FILE *f, const char *s);

#endif /* IOACCT_TEXT_H */
