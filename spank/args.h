/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the SPANK plugin is told: its plugstack.conf arguments, the user's
 * --io-monitor options, and report path patterns. No spank.h here, so the
 * parsers are unit-tested without Slurm.
 */
#ifndef IOACCT_SPANK_ARGS_H
#define IOACCT_SPANK_ARGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "render.h"

/* plugstack.conf: `required /path/spank_ioacct.so key=value ...` */
struct ioacct_spank_conf {
	char config[PATH_MAX];          /* config=: ioacct.conf to read (socket, db) */
	char socket[PATH_MAX];          /* socket=: overrides the config's */
	char report[PATH_MAX];          /* report=: path pattern, "" = next to the job's output */
	char report_copy_dir[PATH_MAX]; /* report_copy_dir=: a copy for admins, "" = none */
	bool default_on;                /* default=on: monitor every job */
	bool strict;                    /* strict=1: fail the job when monitoring is unavailable */
};

/*
 * Parses the arguments. Every bad one is described in err (one line each,
 * "; "-separated) and skipped: a typo there must not break jobs. Returns the
 * number of bad arguments.
 */
int ioacct_spank_conf_parse(struct ioacct_spank_conf *c, int argc, char **argv, char *err,
			    size_t errlen);

/* trace_max unless told: bytes of DXT segments (32 each) kept per node. */
#define IOACCT_TRACE_MAX_DEFAULT (64ULL << 20)
#define IOACCT_TRACE_MAX_MIN 4096

struct ioacct_monitor_opts {
	unsigned int formats;          /* IOACCT_FMT(...) | ...; 0 = the default (text) */
	uint64_t bin_width_ns;         /* 0 = the site's default */
	uint64_t trace_max;            /* trace: bytes of DXT segments per node; 0 = no trace */
	uint32_t spans;                /* spans: IOACCT_SPANS_* (proto.h); 0 = none */
};

/*
 * --io-monitor[=OPTIONS]: comma-separated `format=F[,F...]`, `bin=SECONDS`,
 * `trace` (DXT traces in the .darshan report; implies format darshan) and
 * `trace_max=SIZE` (K, M, G; implies trace), `spans` (the calls as OTLP
 * spans to the node's otlp_url); a word without '=' continues the list of
 * the key before it ("format=text,html,bin=5"), except `trace` and `spans`.
 * NULL or "" means the defaults. -EINVAL with err.
 */
int ioacct_monitor_opts_parse(const char *arg, struct ioacct_monitor_opts *o, char *err,
			      size_t errlen);

/* A trace of at most trace_max bytes, and the Darshan report it goes in. */
void ioacct_monitor_opts_trace(struct ioacct_monitor_opts *o, uint64_t trace_max);

/*
 * The n-th host (from 0) of a Slurm host list such as "mc[1-3],gpu[01-02]x,login":
 * which node a step's task runs on, from SLURM_STEP_NODELIST and its node id.
 * -ENOENT past the end, -EINVAL for a form not handled (several brackets).
 */
int ioacct_hostlist_nth(const char *list, unsigned int n, char *out, size_t len);

/*
 * Every host of a Slurm host list, comma-separated ("mc[1-3]" gives
 * "mc1,mc2,mc3"): a job's nodes for its merged report. -EINVAL for a form
 * ioacct_hostlist_nth() does not handle, -ENAMETOOLONG when out is short.
 */
int ioacct_hostlist_expand(const char *list, char *out, size_t len);

#endif /* IOACCT_SPANK_ARGS_H */
