/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report renderers (librender): text in darshan-parser's style, JSON
 * (docs/report-format.md), one self-contained HTML page with inline SVG
 * plots, and a Darshan log (lib/darshan/darshan.h). ioreport, iorun and the Slurm
 * plugin all render through here and pick formats from one table, so a
 * report looks the same however it was made, and a new format is a line in
 * that table plus its renderer.
 *
 * Each function writes the whole report to `f` and returns 0, or -errno
 * when writing failed (-EIO when the stream does not say why).
 */
#ifndef IOACCT_RENDER_H
#define IOACCT_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

/* Indexes into ioacct_render_formats[]. */
enum ioacct_render_format {
	IOACCT_RENDER_TEXT = 0,
	IOACCT_RENDER_JSON,
	IOACCT_RENDER_HTML,
	IOACCT_RENDER_DARSHAN,
	IOACCT_RENDER_NFORMATS,
};

struct ioacct_render_format_info {
	const char *name;       /* ioreport/iorun --format, --io-monitor=format= */
	const char *ext;        /* the file name extension of the plugin's reports */
	int (*render)(FILE *f, const struct ioacct_report *r);
	/*
	 * A Darshan log: binary, so never to a terminal (tools want -o), and
	 * made by lib/libdarshan (zlib), which whoever links librender links too.
	 */
	bool darshan;
};

/* The one list of formats, indexed by enum ioacct_render_format. */
extern const struct ioacct_render_format_info ioacct_render_formats[IOACCT_RENDER_NFORMATS];

/* "text", "json", "html", "darshan" (any case); -1 when unknown. */
int ioacct_render_format_from_name(const char *name);
const char *ioacct_render_format_name(enum ioacct_render_format fmt);
/* "text, json, html or darshan": the names, for usage and error messages. */
const char *ioacct_render_format_names(void);
/*
 * A tool's --format NAME (NULL: text) for a report to `output` (NULL: the
 * standard output or error): the format, or -1 with `err` saying why in
 * one line: not a format's name, or a binary Darshan log without -o FILE.
 */
int ioacct_render_format_arg(const char *name, const char *output, char *err, size_t errlen);

int ioacct_render_text(FILE *f, const struct ioacct_report *r);
int ioacct_render_json(FILE *f, const struct ioacct_report *r);
int ioacct_render_html(FILE *f, const struct ioacct_report *r);
/*
 * The report as a Darshan log (format 3.41, lib/darshan/darshan.h), every mount;
 * ioacct_render_darshan_log() with darshan_filter leaves out the mounts
 * Darshan does not record. A log that cannot be written (-EINVAL) is
 * explained through log.h.
 */
int ioacct_render_darshan(FILE *f, const struct ioacct_report *r);
int ioacct_render_darshan_log(FILE *f, const struct ioacct_report *r, bool darshan_filter);
int ioacct_render(FILE *f, enum ioacct_render_format fmt, const struct ioacct_report *r);

/*
 * ioreport --files: every per-file record of the report (issue 26). Text:
 * a header line, then one tab-separated line per record; JSON: an object
 * with the job's id and the report's "files_partial", "other_files_calls",
 * "other_files_bytes" and "files", the same as in the JSON report.
 */
int ioacct_render_files_text(FILE *f, const struct ioacct_report *r);
int ioacct_render_files_json(FILE *f, const struct ioacct_report *r);

/*
 * Builds the report of a loaded job (NULL limits: the defaults; NULL
 * only_mount: every mount) and renders it.
 */
int ioacct_render_job(FILE *f, enum ioacct_render_format fmt, const struct ioacct_jobdata *jd,
		      const struct ioacct_advice_limits *limits, const char *only_mount);

/* Values the % codes of a report pattern stand for. */
struct ioacct_report_vars {
	uint64_t job_id;
	bool has_array;
	uint32_t array_job_id;
	uint32_t array_task_id;
	const char *user;
	const char *job_name;
	const char *workdir;
	const char *node;              /* this node's name, for %N */
	uint32_t restart;              /* Slurm's restart count, for %r */
};

/*
 * Expands %j (job id), %A (array master job id, else the job id), %a (array
 * task id, else 4294967294 as Slurm prints), %u, %x, %w, %N (node), %r (the
 * run: Slurm's restart count, 0 for the first) and %%. A name (%u, %x)
 * containing '/' is refused: it would reach another directory. A requeued
 * job's later run (restart > 0) whose pattern has no %r gets ".rN" before
 * the extension, so that it does not overwrite the report of an earlier
 * run (a name without an extension ends in ".rN.": the empty extension
 * ioacct_report_path_for() replaces). -EINVAL/-ENAMETOOLONG with err.
 */
int ioacct_report_path_expand(const char *pattern, const struct ioacct_report_vars *v, char *out,
			      size_t len, char *err, size_t errlen);

/*
 * The default pattern: next to the job's standard output, or in its working
 * directory when the output goes to a device or its path is unknown.
 */
void ioacct_report_default_pattern(const char *stdout_path, char *out, size_t len);

/* A set of report formats: bit 1 << enum ioacct_render_format. */
#define IOACCT_FMT(fmt) (1U << (fmt))

/*
 * The path of one format's report: the expanded pattern with its extension
 * replaced by the format's (.txt, .json, .html, .darshan), and ".NODE"
 * before it when node is not NULL (a job on several nodes without a
 * merged report: each node's epilog writes its own part, which must not
 * overwrite another's).
 */
int ioacct_report_path_for(const char *expanded, enum ioacct_render_format fmt, const char *node,
			   char *out, size_t len);

/*
 * Writes a job's report files (report_files.c): each format of `formats`
 * (IOACCT_FMT bits) rendered and written at ioacct_report_path_for(expanded,
 * fmt, part) as uid:gid (lib/report/userfile.h), and when copy_dir is not
 * "" a copy there as root named CLUSTER-FILE. The plugin's epilog and
 * ioacctd's merged reports both write through here. render_darshan, when
 * not NULL, renders the Darshan format instead (the plugin's traced jobs,
 * with their DXT records). Each failure is logged (log.h); returns how many
 * files were not written.
 */
typedef int (*ioacct_report_render_fn)(const struct ioacct_jobdata *jd, char **buf, size_t *len);
unsigned int ioacct_report_write_files(const struct ioacct_jobdata *jd, const char *expanded,
				       unsigned int formats, const char *part, uint32_t uid,
				       uint32_t gid, const char *copy_dir,
				       const struct ioacct_advice_limits *limits,
				       ioacct_report_render_fn render_darshan);

#endif /* IOACCT_RENDER_H */
