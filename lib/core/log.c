/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "util.h"

#include <stdio.h>
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

void ioacct_vlog(enum ioacct_log_level level, const char *fmt, va_list ap)
{
	char msg[2048];
	size_t n;

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Sinks add their own line end. */
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_sink(level, msg, log_ctx);
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
