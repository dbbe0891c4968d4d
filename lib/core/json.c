// SPDX-License-Identifier: GPL-2.0-or-later
#include "json.h"

#include <stdbool.h>
#include <stddef.h>

#include "text.h"

void ioacct_json_string(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;

	putc_unlocked('"', f);
	while (*p) {
		const char *esc = NULL;
		char u[7];
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);

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
