/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging with levels and a swappable sink: stderr in the foreground,
 * syslog for the daemon, slurm_* inside the SPANK plugin, a capture buffer
 * in unit tests.
 */
#ifndef IOACCT_LOG_H
#define IOACCT_LOG_H

#include <stdarg.h>

enum ioacct_log_level {
	IOACCT_LOG_ERR = 0,
	IOACCT_LOG_WARN = 1,
	IOACCT_LOG_INFO = 2,
	IOACCT_LOG_DEBUG = 3,
};

typedef void (*ioacct_log_sink_fn)(enum ioacct_log_level level, const char *msg, void *ctx);

/* NULL restores the default sink (stderr). */
void ioacct_log_set_sink(ioacct_log_sink_fn fn, void *ctx);
void ioacct_log_set_level(enum ioacct_log_level level);
enum ioacct_log_level ioacct_log_get_level(void);
/* Name used as prefix by the stderr sink and as syslog ident. */
void ioacct_log_set_ident(const char *ident);
/* "error", "warning", "info", "debug" <-> level; -1 when unknown. */
int ioacct_log_level_from_name(const char *name);
const char *ioacct_log_level_name(enum ioacct_log_level level);

void ioacct_log(enum ioacct_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ioacct_vlog(enum ioacct_log_level level, const char *fmt, va_list ap);

void ioacct_log_sink_stderr(enum ioacct_log_level level, const char *msg, void *ctx);
/* Opens syslog on first use with the ident set above, LOG_DAEMON. */
void ioacct_log_sink_syslog(enum ioacct_log_level level, const char *msg, void *ctx);

#define log_err(...) ioacct_log(IOACCT_LOG_ERR, __VA_ARGS__)
#define log_warn(...) ioacct_log(IOACCT_LOG_WARN, __VA_ARGS__)
#define log_info(...) ioacct_log(IOACCT_LOG_INFO, __VA_ARGS__)
#define log_debug(...) ioacct_log(IOACCT_LOG_DEBUG, __VA_ARGS__)

#endif /* IOACCT_LOG_H */
