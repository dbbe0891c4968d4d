/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "text.h"
#include "util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

static ioacct_log_sink_fn log_sink = ioacct_log_sink_stderr;
static void *log_ctx;
static enum ioacct_log_level log_level = IOACCT_LOG_INFO;
static char log_ident[64] = "ioacct";
static int syslog_opened;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void ioacct_log_set_sink(ioacct_log_sink_fn fn, void *ctx)
{
	log_sink = fn ? fn : ioacct_log_sink_stderr;
	log_ctx = fn ? ctx : NULL;
}

void ioacct_log_set_level(enum ioacct_log_level level)
{
	log_level = level;
}

enum ioacct_log_level ioacct_log_get_level(void)
{
	return log_level;
}

void ioacct_log_set_ident(const char *ident)
{
	snprintf(log_ident, sizeof(log_ident), "%s", ident);
}

int ioacct_log_level_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcasecmp(name, level_names[i]) == 0)
			return (int)i;
	if (strcasecmp(name, "err") == 0)
		return IOACCT_LOG_ERR;
	if (strcasecmp(name, "warn") == 0)
		return IOACCT_LOG_WARN;
	return -1;
}

const char *ioacct_log_level_name(enum ioacct_log_level level)
{
	if ((unsigned int)level >= ARRAY_SIZE(level_names))
		return "?";
	return level_names[level];
}

/*
 * One line of a message, fit for a log that people and grep read: a
 * control character (a job's name, a mount path: anyone's bytes) as \xNN,
 * bytes that are not UTF-8 as U+FFFD. out holds 4 bytes per byte of line.
 */
static void log_clean(char *out, const char *line, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)line, *end = p + len;
	size_t o = 0;

	while (p < end) {
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);

		if (n > (size_t)(end - p))
			n = (size_t)(end - p), valid = false;
		if (!valid) {
			memcpy(out + o, IOACCT_UTF8_REPLACEMENT, 3);
			o += 3;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f) && *p != '\t') {
			out[o++] = '\\', out[o++] = 'x';
			out[o++] = hex[*p >> 4], out[o++] = hex[*p & 0xf];
		} else {
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = '\0';
}

/* A line of a message as logged, at most; and of a long message, the bytes of its end kept. */
#define LOG_LINE_MAX 2047
#define LOG_TAIL_MAX 3072

/* One line of a message to the sink: the first as it is, the later ones marked "  | ". */
static void log_line(enum ioacct_log_level level, bool first, const char *p, size_t n)
{
	char line[4 * LOG_LINE_MAX + 8];

	if (n > LOG_LINE_MAX)
		n = LOG_LINE_MAX;
	if (first) {
		log_clean(line, p, n);
	} else {
		memcpy(line, "  | ", 4);
		log_clean(line + 4, p, n);
	}
	log_sink(level, line, log_ctx);
}

void ioacct_vlog(enum ioacct_log_level level, const char *fmt, va_list ap)
{
	char small[LOG_LINE_MAX + 1], *msg = small, *big = NULL, gap[64];
	const char *p, *nl, *tail = NULL;
	va_list aq;
	size_t n;
	int len;

	if (level > log_level)
		return;
	va_copy(aq, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	/* A message longer than a line's room (libbpf's verifier log) is kept whole, to keep its end. */
	if (len >= (int)sizeof(small) && (big = malloc((size_t)len + 1))) {
		vsnprintf(big, (size_t)len + 1, fmt, aq);
		msg = big;
	}
	va_end(aq);
	/* Sinks add their own line end. */
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/*
	 * Of a long message, the first line and the lines of its last
	 * LOG_TAIL_MAX bytes: a verifier log says why it refused a program at
	 * its end, after thousands of lines of the program's states.
	 */
	if (n > LOG_TAIL_MAX) {
		nl = strchr(msg, '\n');
		tail = strchr(msg + n - LOG_TAIL_MAX, '\n');
		if (!nl || !tail || tail <= nl)
			tail = NULL;
	}
	/*
	 * A message of several lines (libbpf's verifier log) goes out a line at
	 * a time, the later ones marked as its continuation: a newline in a
	 * user's name cannot start what looks like a message of the daemon's.
	 */
	for (p = msg;; p = nl + 1) {
		nl = strchr(p, '\n');
		log_line(level, p == msg, p, nl ? (size_t)(nl - p) : strlen(p));
		if (!nl)
			break;
		if (p == msg && tail) {
			snprintf(gap, sizeof(gap), "[... %zu bytes left out ...]", (size_t)(tail - nl));
			log_line(level, false, gap, strlen(gap));
			nl = tail;
		}
	}
	free(big);
}

void ioacct_log(enum ioacct_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ioacct_vlog(level, fmt, ap);
	va_end(ap);
}

void ioacct_log_sink_stderr(enum ioacct_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == IOACCT_LOG_INFO)
		fprintf(stderr, "%s: %s\n", log_ident, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", log_ident, ioacct_log_level_name(level), msg);
}

void ioacct_log_sink_syslog(enum ioacct_log_level level, const char *msg, void *ctx)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

	(void)ctx;
	if (!syslog_opened) {
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
		syslog_opened = 1;
	}
	syslog(prio[level <= IOACCT_LOG_DEBUG ? level : IOACCT_LOG_DEBUG], "%s", msg);
}
