// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A job's report files, where the user asked for them and as that user:
 * the epilog's per-node report and ioacctd's merged report of a job of
 * several nodes (daemon/export.c) go through the same loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "render.h"
#include "userfile.h"
#include "util.h"

static int append(char *out, size_t len, size_t *n, const char *s)
{
	size_t l = strlen(s);

	if (*n + l >= len)
		return -ENAMETOOLONG;
	memcpy(out + *n, s, l + 1);
	*n += l;
	return 0;
}

/* A later run's ".rN" before the extension of the expanded path out[0..*n). */
static int run_suffix(char *out, size_t len, size_t *n, uint32_t restart)
{
	char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
	char sfx[24];
	size_t l;

	if (!dot || (slash && dot < slash)) {
		snprintf(sfx, sizeof(sfx), ".r%u.", restart);
		return append(out, len, n, sfx);
	}
	l = (size_t)snprintf(sfx, sizeof(sfx), ".r%u", restart);
	if (*n + l >= len)
		return -ENAMETOOLONG;
	memmove(dot + l, dot, strlen(dot) + 1);
	memcpy(dot, sfx, l);
	*n += l;
	return 0;
}

int ioacct_report_path_expand(const char *pattern, const struct ioacct_report_vars *v, char *out,
			      size_t len, char *err, size_t errlen)
{
	bool has_run = false;
	size_t n = 0;
	char num[32];

	if (!len)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (const char *p = pattern; *p; p++) {
		const char *s = num;
		char lit[2] = { *p, '\0' };

		if (*p != '%') {
			s = lit;
		} else {
			switch (*++p) {
			case 'j':
				snprintf(num, sizeof(num), "%llu", (unsigned long long)v->job_id);
				break;
			case 'A':
				snprintf(num, sizeof(num), "%llu", v->has_array ?
					 (unsigned long long)v->array_job_id : (unsigned long long)v->job_id);
				break;
			case 'a':
				snprintf(num, sizeof(num), "%u", v->has_array ? v->array_task_id : 4294967294U);
				break;
			case 'u':
			case 'x':
			case 'N':
				s = *p == 'u' ? v->user : *p == 'x' ? v->job_name : v->node;
				if (!s || !*s)
					s = *p == 'u' ? "unknown" : *p == 'x' ? "job" : "node";
				if (strchr(s, '/') || strcmp(s, "..") == 0) {
					snprintf(err, errlen, "%%%c is '%s', which is not a file name", *p, s);
					return -EINVAL;
				}
				break;
			case 'w':
				s = v->workdir;
				if (!s || s[0] != '/') {
					snprintf(err, errlen, "%%w: the job's working directory is unknown");
					return -EINVAL;
				}
				break;
			case 'r':
				snprintf(num, sizeof(num), "%u", v->restart);
				has_run = true;
				break;
			case '%':
				s = "%";
				break;
			default:
				snprintf(err, errlen, "unknown %%%c in report pattern '%s' (%%j %%A %%a %%u %%x %%w %%N %%r %%%%)",
					 *p ? *p : ' ', pattern);
				return -EINVAL;
			}
		}
		if (append(out, len, &n, s)) {
			snprintf(err, errlen, "report path from '%s' is too long", pattern);
			return -ENAMETOOLONG;
		}
	}
	if (v->restart && !has_run && run_suffix(out, len, &n, v->restart)) {
		snprintf(err, errlen, "report path from '%s' is too long", pattern);
		return -ENAMETOOLONG;
	}
	if (out[0] != '/') {
		snprintf(err, errlen, "report path '%s' is not absolute", out);
		return -EINVAL;
	}
	return 0;
}

void ioacct_report_default_pattern(const char *stdout_path, char *out, size_t len)
{
	const char *slash = stdout_path ? strrchr(stdout_path, '/') : NULL;

	/* Output sent to a device (/dev/null) has no directory to be next to. */
	if (stdout_path && stdout_path[0] == '/' && strncmp(stdout_path, "/dev/", 5) != 0 && slash &&
	    (size_t)(slash - stdout_path) + 20 < len)
		snprintf(out, len, "%.*s/ioacct-%%j.txt", (int)(slash - stdout_path), stdout_path);
	else
		snprintf(out, len, "%%w/ioacct-%%j.txt");
}

int ioacct_report_path_for(const char *expanded, enum ioacct_render_format fmt, const char *node,
			   char *out, size_t len)
{
	const char *slash = strrchr(expanded, '/'), *dot = strrchr(expanded, '.');
	const char *ext;
	size_t base;

	if ((unsigned int)fmt >= IOACCT_RENDER_NFORMATS)
		return -EINVAL;
	ext = ioacct_render_formats[fmt].ext;
	base = dot && (!slash || dot > slash) ? (size_t)(dot - expanded) : strlen(expanded);
	if ((size_t)snprintf(out, len, "%.*s%s%s%s", (int)base, expanded, node ? "." : "",
			     node ? node : "", ext) >= len)
		return -ENAMETOOLONG;
	if (node && strchr(node, '/'))
		return -EINVAL;
	return 0;
}

/* Into memory: the same renderers as ioreport and iorun, so a report looks the same whichever made it. */
static int render_mem(const struct ioacct_jobdata *jd, enum ioacct_render_format fmt,
		      const struct ioacct_advice_limits *limits, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int ret;

	if (!f)
		return -errno;
	ret = ioacct_render_job(f, fmt, jd, limits, NULL);
	if (fclose(f) && !ret)
		ret = -EIO;
	return ret;
}

unsigned int ioacct_report_write_files(const struct ioacct_jobdata *jd, const char *expanded,
				       unsigned int formats, const char *part, uint32_t uid,
				       uint32_t gid, const char *copy_dir,
				       const struct ioacct_advice_limits *limits,
				       ioacct_report_render_fn render_darshan)
{
	const struct ioacct_job *job = &jd->job;
	char path[PATH_MAX], err[512];
	unsigned int failed = 0;

	for (enum ioacct_render_format fmt = 0; fmt < IOACCT_RENDER_NFORMATS; fmt++) {
		char *buf = NULL;
		size_t len = 0;
		int ret;

		if (!(formats & IOACCT_FMT(fmt)))
			continue;
		ret = fmt == IOACCT_RENDER_DARSHAN && render_darshan ? render_darshan(jd, &buf, &len) :
								      render_mem(jd, fmt, limits, &buf, &len);
		if (ret || (ret = ioacct_report_path_for(expanded, fmt, part, path, sizeof(path)))) {
			log_err("job %llu: cannot render its %s report: %s",
				(unsigned long long)job->job_id, ioacct_render_format_name(fmt), strerror(-ret));
			free(buf);
			failed++;
			continue;
		}
		if (ioacct_write_as_user(path, uid, gid, buf, len, err, sizeof(err))) {
			log_err("job %llu: report not written: %s", (unsigned long long)job->job_id, err);
			failed++;
		}
		if (copy_dir && copy_dir[0]) {
			char name[NAME_MAX];
			const char *base = strrchr(path, '/');

			snprintf(name, sizeof(name), "%s-%s", job->cluster, base ? base + 1 : path);
			if (ioacct_write_as_root(copy_dir, name, buf, len, err, sizeof(err))) {
				log_err("job %llu: admin copy not written: %s",
					(unsigned long long)job->job_id, err);
				failed++;
			}
		}
		free(buf);
	}
	return failed;
}
