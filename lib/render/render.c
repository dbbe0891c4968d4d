/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one table of report formats and the dispatch over it: the renderers
 * (render_*.c) use render_util.c's helpers and never this file, so that the
 * room has no circle.
 */
#include "render.h"
#include "render_internal.h"

#include <errno.h>
#include <stdio.h>
#include <strings.h>

const struct ioacct_render_format_info ioacct_render_formats[IOACCT_RENDER_NFORMATS] = {
	[IOACCT_RENDER_TEXT] = { "text", ".txt", ioacct_render_text, false },
	[IOACCT_RENDER_JSON] = { "json", ".json", ioacct_render_json, false },
	[IOACCT_RENDER_HTML] = { "html", ".html", ioacct_render_html, false },
	[IOACCT_RENDER_DARSHAN] = { "darshan", ".darshan", ioacct_render_darshan, true },
};

int ioacct_render_format_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(ioacct_render_formats); i++)
		if (strcasecmp(name, ioacct_render_formats[i].name) == 0)
			return (int)i;
	return -1;
}

const char *ioacct_render_format_name(enum ioacct_render_format fmt)
{
	return (unsigned int)fmt < ARRAY_SIZE(ioacct_render_formats) ? ioacct_render_formats[fmt].name : "?";
}

const char *ioacct_render_format_names(void)
{
	static char names[128];

	if (!names[0]) {
		size_t n = 0;

		for (size_t i = 0; i < ARRAY_SIZE(ioacct_render_formats); i++)
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
					      i == 0 ? "" : i + 1 < ARRAY_SIZE(ioacct_render_formats) ? ", " : " or ",
					      ioacct_render_formats[i].name);
	}
	return names;
}

int ioacct_render_format_arg(const char *name, const char *output, char *err, size_t errlen)
{
	int fmt = name ? ioacct_render_format_from_name(name) : IOACCT_RENDER_TEXT;

	if (fmt < 0) {
		snprintf(err, errlen, "--format: '%s' is not %s", name, ioacct_render_format_names());
		return -1;
	}
	if (ioacct_render_formats[fmt].darshan && !output) {
		snprintf(err, errlen, "--format %s writes a binary log: name it with -o FILE",
			 ioacct_render_formats[fmt].name);
		return -1;
	}
	return fmt;
}

int ioacct_render(FILE *f, enum ioacct_render_format fmt, const struct ioacct_report *r)
{
	if ((unsigned int)fmt >= ARRAY_SIZE(ioacct_render_formats))
		return -EINVAL;
	return ioacct_render_formats[fmt].render(f, r);
}

int ioacct_render_job(FILE *f, enum ioacct_render_format fmt, const struct ioacct_jobdata *jd,
		      const struct ioacct_advice_limits *limits, const char *only_mount)
{
	struct ioacct_report *r = ioacct_report_create(jd, limits, only_mount);
	int ret;

	if (!r)
		return -errno;
	ret = ioacct_render(f, fmt, r);
	ioacct_report_destroy(r);
	return ret;
}
