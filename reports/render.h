/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report renderers (librender): text in darshan-parser's style, JSON
 * (docs/report-format.md) and one self-contained HTML page with inline SVG
 * plots. ioreport, iorun and the Slurm plugin all render through here, so a
 * report looks the same however it was made.
 *
 * Each function writes the whole report to `f` and returns 0, or -errno
 * when writing failed (-EIO when the stream does not say why).
 */
#ifndef IOACCT_RENDER_H
#define IOACCT_RENDER_H

#include <stdio.h>

#include "report.h"

enum ioacct_render_format {
	IOACCT_RENDER_TEXT = 0,
	IOACCT_RENDER_JSON,
	IOACCT_RENDER_HTML,
};

/* "text", "json", "html"; -1 when unknown. */
int ioacct_render_format_from_name(const char *name);
const char *ioacct_render_format_name(enum ioacct_render_format fmt);

int ioacct_render_text(FILE *f, const struct ioacct_report *r);
int ioacct_render_json(FILE *f, const struct ioacct_report *r);
int ioacct_render_html(FILE *f, const struct ioacct_report *r);
int ioacct_render(FILE *f, enum ioacct_render_format fmt, const struct ioacct_report *r);

/*
 * Builds the report of a loaded job (NULL limits: the defaults; NULL
 * only_mount: every mount) and renders it.
 */
int ioacct_render_job(FILE *f, enum ioacct_render_format fmt, const struct ioacct_jobdata *jd,
		      const struct ioacct_advice_limits *limits, const char *only_mount);

#endif /* IOACCT_RENDER_H */
