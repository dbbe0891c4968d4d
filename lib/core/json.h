/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON strings, encoded one way for every tool (ioacct --json, the JSON
 * report of ioreport, iorun and the Slurm plugin), so that the same job
 * name gives the same bytes wherever it is printed.
 */
#ifndef IOACCT_JSON_H
#define IOACCT_JSON_H

#include <stdio.h>

/*
 * Writes s as a JSON string literal (RFC 8259), quotes included: '"' and
 * '\' escaped, \b \f \n \r \t in their short forms, the other control
 * characters and DEL as \u00XX, valid UTF-8 as it is. Paths and job names
 * are bytes, JSON text is UTF-8: every maximal piece of s that is not UTF-8
 * (a stray byte, a truncated, overlong or surrogate sequence, a code point
 * past U+10FFFF) becomes one \ufffd, U+FFFD as Unicode recommends
 * ("substitution of maximal subparts", as browsers and Python decode).
 * Write errors are left in the stream's error flag.
 */
void ioacct_json_string(FILE *f, const char *s);

#endif /* IOACCT_JSON_H */
