// SPDX-License-Identifier: GPL-2.0-or-later
#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "proto.h"
#include "util.h"

static void add_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
	size_t n = strlen(err);

	if (n + 3 >= errlen)
		return;
	if (n)
		n += (size_t)snprintf(err + n, errlen - n, "; ");
	snprintf(err + n, errlen - n, fmt, a, b);
}

static int set_path(char *dst, size_t len, const char *key, const char *v, bool absolute, char *err,
		    size_t errlen)
{
	if (absolute && v[0] != '/') {
		add_err(err, errlen, "%s=%s: not an absolute path", key, v);
		return -1;
	}
	if (ioacct_strlcpy(dst, v, len)) {
		add_err(err, errlen, "%s=%s: too long", key, v);
		return -1;
	}
	return 0;
}

static int set_bool(bool *dst, const char *key, const char *v, const char *on, const char *off,
		    char *err, size_t errlen)
{
	if (strcmp(v, on) == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "on") == 0)
		*dst = true;
	else if (strcmp(v, off) == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0 || strcmp(v, "off") == 0)
		*dst = false;
	else {
		add_err(err, errlen, "%s=%s: expected on or off", key, v);
		return -1;
	}
	return 0;
}

int ioacct_spank_conf_parse(struct ioacct_spank_conf *c, int argc, char **argv, char *err,
			    size_t errlen)
{
	int bad = 0;

	memset(c, 0, sizeof(*c));
	err[0] = '\0';
	for (int i = 0; i < argc; i++) {
		char key[64];
		const char *eq = strchr(argv[i], '='), *v;
		size_t kl;

		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(key)) {
			add_err(err, errlen, "%s%s: expected key=value", argv[i], "");
			bad++;
			continue;
		}
		kl = (size_t)(eq - argv[i]);
		memcpy(key, argv[i], kl);
		key[kl] = '\0';
		v = eq + 1;
		if (strcmp(key, "config") == 0)
			bad += set_path(c->config, sizeof(c->config), key, v, true, err, errlen) != 0;
		else if (strcmp(key, "socket") == 0)
			bad += set_path(c->socket, sizeof(c->socket), key, v, true, err, errlen) != 0;
		else if (strcmp(key, "report") == 0)
			bad += set_path(c->report, sizeof(c->report), key, v, false, err, errlen) != 0;
		else if (strcmp(key, "report_copy_dir") == 0)
			bad += set_path(c->report_copy_dir, sizeof(c->report_copy_dir), key, v, true, err,
					errlen) != 0;
		else if (strcmp(key, "default") == 0)
			bad += set_bool(&c->default_on, key, v, "on", "off", err, errlen) != 0;
		else if (strcmp(key, "strict") == 0)
			bad += set_bool(&c->strict, key, v, "1", "0", err, errlen) != 0;
		else {
			add_err(err, errlen,
				"%s: unknown key (valid: config, socket, report, report_copy_dir, default, strict)%s",
				key, "");
			bad++;
		}
	}
	return bad;
}

void ioacct_monitor_opts_trace(struct ioacct_monitor_opts *o, uint64_t trace_max)
{
	o->trace_max = trace_max;
	/* A trace is written into the Darshan report: there is one, besides the default text. */
	o->formats |= IOACCT_FMT(IOACCT_RENDER_DARSHAN) |
		      (o->formats ? 0 : IOACCT_FMT(IOACCT_RENDER_TEXT));
}

int ioacct_monitor_opts_parse(const char *arg, struct ioacct_monitor_opts *o, char *err,
			      size_t errlen)
{
	char buf[512], *save = NULL, *tok;
	const char *key = NULL;

	memset(o, 0, sizeof(*o));
	/* Slurm hands an absent optional argument on to srun steps as "(null)". */
	if (!arg || !*arg || strcmp(arg, "(null)") == 0)
		return 0;
	if (ioacct_strlcpy(buf, arg, sizeof(buf))) {
		snprintf(err, errlen, "options too long");
		return -EINVAL;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *val = tok;

		if (!eq && strcmp(tok, "trace") == 0) {
			o->trace_max = o->trace_max ? o->trace_max : IOACCT_TRACE_MAX_DEFAULT;
			key = NULL;
			continue;
		}
		if (!eq && strcmp(tok, "spans") == 0) {
			o->spans = IOACCT_SPANS_ALL;
			key = NULL;
			continue;
		}
		if (eq) {
			*eq = '\0';
			key = tok;
			val = eq + 1;
		} else if (!key) {
			snprintf(err, errlen, "'%s': expected format=..., bin=SECONDS, trace or spans",
				 tok);
			return -EINVAL;
		}
		if (strcmp(key, "format") == 0) {
			int fmt = ioacct_render_format_from_name(val);

			if (fmt < 0) {
				snprintf(err, errlen, "format '%s' unknown (%s)", val, ioacct_render_format_names());
				return -EINVAL;
			}
			o->formats |= IOACCT_FMT(fmt);
		} else if (strcmp(key, "bin") == 0) {
			if (!eq) {
				snprintf(err, errlen, "bin takes one value");
				return -EINVAL;
			}
			if (ioacct_parse_seconds(val, NSEC_PER_SEC / 10, 86400 * NSEC_PER_SEC,
						 &o->bin_width_ns)) {
				snprintf(err, errlen, "bin=%s: a number of seconds from 0.1 to 86400", val);
				return -EINVAL;
			}
		} else if (strcmp(key, "trace_max") == 0) {
			int r = eq ? ioacct_parse_size(val, &o->trace_max) : -EINVAL;

			if (r == -ERANGE) {
				snprintf(err, errlen, "trace_max=%s: too large for 64 bits (each node caps "
					 "a trace at its max_trace_size anyway)", val);
				return -EINVAL;
			}
			if (r || o->trace_max < IOACCT_TRACE_MAX_MIN) {
				snprintf(err, errlen, "trace_max=%s: a size of at least 4K (K, M, G: "
					 "powers of 1024)", val);
				return -EINVAL;
			}
		} else if (strcmp(key, "spans") == 0) {
			if (!eq || ioacct_spans_parse(val, &o->spans)) {
				snprintf(err, errlen, "spans=%s: posix, mpiio or all", val);
				return -EINVAL;
			}
			key = NULL; /* one value */
		} else {
			snprintf(err, errlen, "'%s' unknown (format=FORMAT[,FORMAT...], bin=SECONDS, "
				 "trace, trace_max=SIZE, spans or spans=posix|mpiio|all)", key);
			return -EINVAL;
		}
	}
	if (o->trace_max)
		ioacct_monitor_opts_trace(o, o->trace_max);
	return 0;
}

/*
 * One range list "1-3,07,9-10" of a bracket: the n-th number, with the
 * zero padding of its range's start. *n is decreased by the count skipped.
 */
static int range_nth(const char *r, size_t rlen, unsigned int *n, char *num, size_t numlen)
{
	const char *p = r, *end = r + rlen;

	while (p < end) {
		char *q;
		unsigned long lo, hi;
		int width;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		width = (int)strspn(p, "0123456789");
		lo = strtoul(p, &q, 10);
		hi = lo;
		if (q < end && *q == '-') {
			if (q[1] < '0' || q[1] > '9')
				return -EINVAL;
			hi = strtoul(q + 1, &q, 10);
		}
		if (hi < lo || (q < end && *q != ',') || q > end)
			return -EINVAL;
		if (*n <= hi - lo) {
			snprintf(num, numlen, "%0*lu", width, lo + *n);
			return 0;
		}
		*n -= (unsigned int)(hi - lo + 1);
		p = q < end ? q + 1 : end;
	}
	return -ENOENT;
}

int ioacct_hostlist_nth(const char *list, unsigned int n, char *out, size_t len)
{
	const char *p = list;

	while (*p) {
		/* One item: up to the next comma outside brackets. */
		const char *open = NULL, *close = NULL, *e = p;
		char num[32];
		int ret;

		for (; *e && (*e != ',' || (open && !close)); e++) {
			if (*e == '[') {
				if (open)
					return -EINVAL; /* several brackets: not handled */
				open = e;
			} else if (*e == ']') {
				if (!open || close)
					return -EINVAL;
				close = e;
			}
		}
		if (e == p || (open && !close))
			return -EINVAL;
		if (!open) {
			if (n == 0)
				return (size_t)snprintf(out, len, "%.*s", (int)(e - p), p) < len ?
					       0 : -ENAMETOOLONG;
			n--;
		} else {
			ret = range_nth(open + 1, (size_t)(close - open - 1), &n, num, sizeof(num));
			if (ret == 0)
				return (size_t)snprintf(out, len, "%.*s%s%.*s", (int)(open - p), p, num,
							(int)(e - close - 1), close + 1) < len ?
					       0 : -ENAMETOOLONG;
			if (ret != -ENOENT)
				return ret;
		}
		p = *e ? e + 1 : e;
	}
	return -ENOENT;
}

int ioacct_hostlist_expand(const char *list, char *out, size_t len)
{
	char host[256];
	size_t n = 0;
	int ret;

	if (!len)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (unsigned int i = 0;; i++) {
		ret = ioacct_hostlist_nth(list, i, host, sizeof(host));
		if (ret == -ENOENT)
			return i ? 0 : -EINVAL;
		if (ret)
			return ret;
		ret = snprintf(out + n, len - n, "%s%s", i ? "," : "", host);
		if (ret < 0 || (size_t)ret >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)ret;
	}
}
