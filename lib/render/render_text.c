/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The text report, for a person first: a short summary (job, state, time,
 * data per mount, peak bandwidth, time in I/O, errors, the top advice), then
 * every heading starting with "## ": tables of exact counts, bandwidth and
 * IOPS over the job, the time split, steps, the time series and the advice.
 * Last, in darshan-parser's shape, a header of "# key: value" lines and per
 * mount the counters as `darshan-parser --total` prints them
 * ("total_POSIX_OPENS: 102"), so that a diff against Darshan is meaningful.
 */
#include "render.h"
#include "render_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>

/* The time series table: at most about this many rows per mount. */
#define SERIES_ROWS 100
/* Advice text is wrapped to this width. */
#define WRAP 100
/* The summary shows this many advice items at most. */
#define SUMMARY_ADVICE 3
/* Width of the summary's labels. */
#define LABEL 13
/* The "Top files" table: this many files at most (every record: ioreport --files, JSON). */
#define TOP_FILES 20

struct cols {
	int mount;   /* width of the mount column */
};

/* "# key: value" with a name in it. */
static void name_line(FILE *f, const char *key, const char *value)
{
	fprintf(f, "# %s: ", key);
	r_text(f, value);
	fputc('\n', f);
}

static void header(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_job *j = &r->jd->job;
	char buf[64];

	fprintf(f, "\n## Darshan-named counters, for comparison with `darshan-parser --total` "
		   "(grep '^total_POSIX' for its lines)\n");
	fprintf(f, "# jobid: %" PRIu64 "\n", j->job_id);
	if (j->has_array)
		fprintf(f, "# array: %" PRIu32 "_%" PRIu32 "\n", j->array_job_id, j->array_task_id);
	name_line(f, "cluster", j->cluster);
	fprintf(f, "# uid: %" PRIu32 "\n", j->uid);
	fprintf(f, "# gid: %" PRIu32 "\n", j->gid);
	name_line(f, "user", j->user);
	name_line(f, "job name", j->name);
	name_line(f, "workdir", j->workdir);
	name_line(f, "nodes", j->node);
	if (r->jd->missing_nodes[0])
		name_line(f, "missing nodes", r->jd->missing_nodes);
	name_line(f, "source", j->source);
	name_line(f, "state", j->state);
	fprintf(f, "# exit code: %" PRId32 "\n", j->exit_code);
	fprintf(f, "# start_time: %" PRId64 "\n", (int64_t)(j->start_ns / 1000000000LL));
	fprintf(f, "# start_time_asci: %s\n", r_ctime(j->start_ns, buf, sizeof(buf)));
	if (j->end_ns) {
		fprintf(f, "# end_time: %" PRId64 "\n", (int64_t)(j->end_ns / 1000000000LL));
		fprintf(f, "# end_time_asci: %s\n", r_ctime(j->end_ns, buf, sizeof(buf)));
		fprintf(f, "# run time: %s\n",
			r_secs(j->end_ns > j->start_ns ? (uint64_t)(j->end_ns - j->start_ns) : 0, 4,
			       buf, sizeof(buf)));
	} else {
		fprintf(f, "# end_time: 0\n# end_time_asci: (running)\n# run time: (running)\n");
	}
	name_line(f, "probe mode", j->probe_mode);
	fprintf(f, "# bin width: %s\n", r_secs(r->bin_width_ns, 3, buf, sizeof(buf)));
	if (j->orig_bin_width_ns)
		fprintf(f, "# downsampled from: %s (the store re-binned the series, totals exact)\n",
			r_secs(j->orig_bin_width_ns, 3, buf, sizeof(buf)));
	fprintf(f, "# bins: %" PRIu32 "\n", r->nbins);
	if (j->skew_ns)
		fprintf(f, "# node skew: %s (the nodes' bins aligned on the first node's start, to the bin)\n",
			r_secs(j->skew_ns, 3, buf, sizeof(buf)));
	fprintf(f, "# dropped events: %" PRIu64 "\n", j->dropped_events);
	fprintf(f, "# dropped bytes: %" PRIu64 "\n", j->dropped_bytes);
	for (size_t i = 0; i < r->nmounts; i++) {
		fputs("# mount entry:\t", f);
		r_text(f, r->mounts[i].path);
		fputc('\t', f);
		r_text(f, r->mounts[i].fstype);
		fputc('\n', f);
	}
}

/* "N bytes (H)": exact, then readable. */
static const char *bytes_text(uint64_t v, char *buf, size_t len)
{
	char h[32];

	if (v < 1024)
		snprintf(buf, len, "%" PRIu64 " bytes", v);
	else
		snprintf(buf, len, "%" PRIu64 " bytes (%s)", v, r_human_bytes((double)v, h, sizeof(h)));
	return buf;
}

static void errors_line(FILE *f, const struct ioacct_report_mount *m)
{
	const uint64_t *e = m->errclass;
	uint64_t real = ioacct_report_real_errors(m->errors, e);

	fprintf(f, "%-*s%" PRIu64 " real error%s", LABEL, "Errors", real, real == 1 ? "" : "s");
	if (real)
		fprintf(f, ": %" PRIu64 " out of space or quota, %" PRIu64 " I/O, %" PRIu64
			   " permission denied, %" PRIu64 " other",
			e[IOACCT_ERR_SPACE], e[IOACCT_ERR_IO], e[IOACCT_ERR_ACCESS], e[IOACCT_ERR_OTHER]);
	fputc('\n', f);
	if (m->unclassified)
		fprintf(f, "%-*s%" PRIu64 " of them not classified: stored before ioacct classified "
			   "errors\n", LABEL, "", m->unclassified);
	fprintf(f, "%-*s%" PRIu64 " lookup%s found nothing (ENOENT, ENOTDIR): not errors\n", LABEL, "",
		e[IOACCT_ERR_NOTFOUND], e[IOACCT_ERR_NOTFOUND] == 1 ? "" : "s");
}

static void wrapped_at(FILE *f, const char *first, int lead, const char *text);

/* Events the kernel dropped, library opens the MPI-IO watch missed (issue 39): when some were. */
static void lost_lines(FILE *f, const struct ioacct_job *j)
{
	char lead[LABEL + 1], text[192];

	if (j->dropped_events)
		fprintf(f, "%-*s%" PRIu64 " events (%" PRIu64 " bytes) not recorded: every count is "
			   "too low\n", LABEL, "Dropped", j->dropped_events, j->dropped_bytes);
	if (!j->lib_opens_missed)
		return;
	snprintf(lead, sizeof(lead), "%-*s", LABEL, "Missed");
	snprintf(text, sizeof(text), "%" PRIu64 " library opens not seen (the daemon was behind): "
		 "an MPI library they loaded may have had no probes, its MPI-IO calls not counted",
		 j->lib_opens_missed);
	wrapped_at(f, lead, LABEL, text);
}

static void summary(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_job *j = &r->jd->job;
	const struct ioacct_report_mount *all = &r->all;
	char a[64], b[64], c[64], t[64];
	size_t ndata = 0, nadvice = 0;

	fprintf(f, "# ioacct report version: %d\n", IOACCT_REPORT_VERSION);
	fprintf(f, "\n## Summary\n");
	fprintf(f, "%-*s%" PRIu64, LABEL, "Job", j->job_id);
	if (j->has_array)
		fprintf(f, " (array %" PRIu32 "_%" PRIu32 ")", j->array_job_id, j->array_task_id);
	fputs(" \"", f);
	r_text(f, j->name);
	fputs("\", user ", f);
	r_text(f, j->user);
	fprintf(f, " (uid %" PRIu32 "), cluster ", j->uid);
	r_text(f, j->cluster);
	fputs(", node ", f);
	r_text(f, j->node);
	fprintf(f, "\n%-*s", LABEL, "State");
	r_text(f, j->state);
	fprintf(f, ", exit code %" PRId32, j->exit_code);
	/* A requeued job's run (its others: ioreport --run N). */
	if (j->restart)
		fprintf(f, ", run %" PRIu32 " (requeued %" PRIu32 " time%s before)", j->restart, j->restart,
			j->restart == 1 ? "" : "s");
	fputc('\n', f);
	/* A merged report written without some nodes: say so before any figure. */
	if (r->jd->missing_nodes[0]) {
		fprintf(f, "%-*smissing nodes: ", LABEL, "Nodes");
		r_text(f, r->jd->missing_nodes);
		fprintf(f, " (no data within %" PRIu32 " s of the first node)\n",
			r->jd->missing_after_s);
	}
	fprintf(f, "%-*s%s", LABEL, "Time", r_ctime(j->start_ns, a, sizeof(a)));
	if (j->end_ns)
		fprintf(f, " to %s, %s s\n", r_ctime(j->end_ns, a, sizeof(a)),
			r_secs(j->end_ns > j->start_ns ? (uint64_t)(j->end_ns - j->start_ns) : 0, 4, b,
			       sizeof(b)));
	else
		fprintf(f, " to (running)\n");
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		if (m->op[IOACCT_OP_READ].bytes == 0 && m->op[IOACCT_OP_WRITE].bytes == 0)
			continue;
		fprintf(f, "%-*s", LABEL, ndata++ ? "" : "Data");
		r_text(f, m->path);
		fputs(" (", f);
		r_text(f, m->fstype);
		fprintf(f, "): read %s, written %s\n",
			bytes_text(m->op[IOACCT_OP_READ].bytes, a, sizeof(a)),
			bytes_text(m->op[IOACCT_OP_WRITE].bytes, b, sizeof(b)));
	}
	if (ndata < r->nmounts)
		fprintf(f, "%-*s%s%zu mount%s with calls but no data read or written\n", LABEL,
			ndata ? "" : "Data", ndata ? "and " : "", r->nmounts - ndata,
			r->nmounts - ndata == 1 ? "" : "s");
	fprintf(f, "%-*s", LABEL, "Peak");
	for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
		const struct ioacct_report_dir *x = &all->dir[d];

		fprintf(f, "%s%s ", d ? ", " : "", ioacct_dir_name(d));
		if (x->bytes)
			fprintf(f, "%.3f MiB/s at %s s", x->bw.max / MIB_D,
				r_secs((uint64_t)x->bw.max_bin * r->bin_width_ns, 1, a, sizeof(a)));
		else
			fprintf(f, "-");
	}
	fprintf(f, " (every mount, per %s s bin)\n", r_secs(r->bin_width_ns, 3, a, sizeof(a)));
	fprintf(f, "%-*s%s s: read %s, write %s, metadata %s\n", LABEL, "Time in I/O",
		r_secs(all->ns, 6, a, sizeof(a)), r_secs(all->op[IOACCT_OP_READ].ns, 6, b, sizeof(b)),
		r_secs(all->op[IOACCT_OP_WRITE].ns, 6, c, sizeof(c)),
		r_secs(all->meta_ns, 6, t, sizeof(t)));
	errors_line(f, all);
	lost_lines(f, j);
	if (r->files_partial)
		fprintf(f, "%-*spartial: max_files was reached; %" PRIu64 " calls (%" PRIu64
			   " bytes) on files past it are counted as \"other files\"\n",
			LABEL, "Files", r->other_calls, r->other_bytes);
	else if (ioacct_probe_files_off(j->probe_mode))
		fprintf(f, "%-*s%s\n", LABEL, "Files", IOACCT_FILES_OFF_NOTE);
	for (size_t i = 0; i < r->nadvice && nadvice < SUMMARY_ADVICE; i++) {
		const struct ioacct_advice *x = &r->advice[i];
		char lead[96];

		/* INFO items only when nothing is more severe: the summary is for problems. */
		if (nadvice && x->level < IOACCT_ADVICE_WARN)
			break;
		snprintf(lead, sizeof(lead), "%-*s%-4s %s: ", LABEL, nadvice ? "" : "Advice",
			 ioacct_advice_level_name(x->level), x->rule);
		wrapped_at(f, lead, LABEL + 5, x->message);
		nadvice++;
	}
	if (r->nadvice > nadvice)
		fprintf(f, "%-*s(%zu more item%s under \"## Advice\")\n", LABEL, "",
			r->nadvice - nadvice, r->nadvice - nadvice == 1 ? "" : "s");
}

static void counters(FILE *f, const struct ioacct_report_mount *m)
{
	struct ioacct_named_counter c[IOACCT_NAMED_COUNTERS];
	size_t n = ioacct_report_counters(m, c);
	char buf[32];

	fputs("\n# mount: ", f);
	r_text(f, m->path);
	fputc('\t', f);
	r_text(f, m->fstype);
	fprintf(f, "\t%s\n", ioacct_fs_kind_name(m->kind));
	for (size_t i = 0; i < n; i++) {
		if (c[i].kind == IOACCT_CK_TIME_NS)
			fprintf(f, "total_%s: %s\n", c[i].name, r_secs(c[i].value, 6, buf, sizeof(buf)));
		else
			fprintf(f, "total_%s: %" PRIu64 "\n", c[i].name, c[i].value);
	}
}

static void mounts_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	char t[32];

	fprintf(f, "\n## I/O per mount (calls include failed ones; META_OPS: every call but reads, "
		   "writes and creates; ERRORS: real errors; NOTFOUND: lookups that found nothing)\n");
	fprintf(f, "%-*s %-10s %-7s %14s %14s %10s %10s %10s %8s %8s %12s\n", w->mount, "MOUNT",
		"FSTYPE", "KIND", "BYTES_READ", "BYTES_WRITTEN", "READS", "WRITES", "META_OPS", "ERRORS",
		"NOTFOUND", "IO_TIME_S");
	for (size_t i = 0; r_mount_row(r, i); i++) {
		const struct ioacct_report_mount *m = r_mount_row(r, i);

		r_text_pad(f, w->mount, m->path);
		fputc(' ', f);
		r_text_pad(f, 10, i < r->nmounts ? m->fstype : "-");
		fprintf(f,
			" %-7s %14" PRIu64 " %14" PRIu64 " %10" PRIu64 " %10" PRIu64
			" %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %12s\n",
			i < r->nmounts ? ioacct_fs_kind_name(m->kind) : "-", m->op[IOACCT_OP_READ].bytes,
			m->op[IOACCT_OP_WRITE].bytes, m->op[IOACCT_OP_READ].calls,
			m->op[IOACCT_OP_WRITE].calls, m->meta_calls,
			ioacct_report_real_errors(m->errors, m->errclass),
			m->errclass[IOACCT_ERR_NOTFOUND], r_secs(m->ns, 6, t, sizeof(t)));
	}
	if (r->nmounts == 0)
		fprintf(f, "(no file-system I/O was counted)\n");
}

static void rates_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	char bw[32];

	fprintf(f, "\n## Bandwidth and IOPS per bin: %" PRIu32 " bin%s of %s s "
		   "(min / max / mean; mean = total / run time)\n",
		r->nbins, r->nbins == 1 ? "" : "s", r_secs(r->bin_width_ns, 3, bw, sizeof(bw)));
	fprintf(f, "%-*s %-5s %12s %12s %12s %10s %10s %10s %10s\n", w->mount, "MOUNT", "DIR",
		"MIB/S_MIN", "MIB/S_MAX", "MIB/S_MEAN", "PEAK_AT_S", "IOPS_MIN", "IOPS_MAX",
		"IOPS_MEAN");
	for (size_t i = 0; r_mount_row(r, i); i++) {
		const struct ioacct_report_mount *m = r_mount_row(r, i);

		for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
			const struct ioacct_report_dir *x = &m->dir[d];

			/* A mount shows the directions it used; "all" shows both. */
			if (x->calls == 0 && i < r->nmounts)
				continue;
			r_text_pad(f, w->mount, m->path);
			fprintf(f, " %-5s %12.3f %12.3f %12.3f %10s %10.1f %10.1f %10.1f\n",
				ioacct_dir_name(d), x->bw.min / MIB_D, x->bw.max / MIB_D,
				x->bw.mean / MIB_D,
				x->bytes ? r_secs((uint64_t)x->bw.max_bin * r->bin_width_ns, 1, bw,
						  sizeof(bw))
					 : "-",
				x->iops.min, x->iops.max, x->iops.mean);
		}
	}
}

static void time_split(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	char a[32], b[32], c[32];

	fprintf(f, "\n## Time in I/O calls (seconds; metadata: every call but reads and writes)\n");
	fprintf(f, "%-*s %12s %12s %12s %7s %7s %7s\n", w->mount, "MOUNT", "READ_S", "WRITE_S",
		"META_S", "READ%", "WRITE%", "META%");
	for (size_t i = 0; r_mount_row(r, i); i++) {
		const struct ioacct_report_mount *m = r_mount_row(r, i);
		uint64_t rd = m->op[IOACCT_OP_READ].ns, wr = m->op[IOACCT_OP_WRITE].ns;
		double all = (double)(rd + wr + m->meta_ns);

		if (all == 0)
			all = 1;
		r_text_pad(f, w->mount, m->path);
		fprintf(f, " %12s %12s %12s %7.1f %7.1f %7.1f\n", r_secs(rd, 6, a, sizeof(a)), r_secs(wr, 6, b, sizeof(b)),
			r_secs(m->meta_ns, 6, c, sizeof(c)), 100.0 * (double)rd / all,
			100.0 * (double)wr / all, 100.0 * (double)m->meta_ns / all);
	}
}

static void ops_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	char t[32];

	fprintf(f, "\n## Operations (calls include failed ones; ERRORS: real errors; NOTFOUND: "
		   "lookups that found nothing)\n");
	fprintf(f, "%-*s %-7s %12s %10s %10s %14s %12s\n", w->mount, "MOUNT", "OP", "CALLS", "ERRORS",
		"NOTFOUND", "BYTES", "TIME_S");
	for (struct r_cell it = { 0 }; r_next_op(r, &it, R_CELL_CALLS);) {
		const struct ioacct_counters *c = it.c;

		r_text_pad(f, w->mount, it.m->path);
		fprintf(f, " %-7s %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %12s\n",
			ioacct_op_name(it.k), c->calls, ioacct_counters_real_errors(c),
			c->errclass[IOACCT_ERR_NOTFOUND], c->bytes, r_secs(c->ns, 6, t, sizeof(t)));
	}
}

/* Failed calls per class, per mount and operation: only rows with any. */
static void errors_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	bool any = false;

	fprintf(f, "\n## Failed calls by class (NOTFOUND: ENOENT, ENOTDIR; ACCESS: EACCES, EPERM, "
		   "EROFS; SPACE: ENOSPC, EDQUOT, EFBIG; IO: EIO, ESTALE, ETIMEDOUT, ...; OTHER: the "
		   "rest; UNCLASSIFIED: stored before ioacct classified errors)\n");
	fprintf(f, "%-*s %-7s %10s %10s %10s %10s %10s %10s %12s\n", w->mount, "MOUNT", "OP",
		"FAILED", "NOTFOUND", "ACCESS", "SPACE", "IO", "OTHER", "UNCLASSIFIED");
	for (struct r_cell it = { 0 }; r_next_op(r, &it, R_CELL_ERRORS);) {
		any = true;
		r_text_pad(f, w->mount, it.m->path);
		fprintf(f, " %-7s %10" PRIu64, ioacct_op_name(it.k), it.c->errors);
		for (unsigned int e = 0; e < IOACCT_NR_ERR_CLASSES; e++)
			fprintf(f, " %10" PRIu64, it.c->errclass[e]);
		fprintf(f, " %12" PRIu64 "\n", ioacct_counters_unclassified(it.c));
	}
	if (!any)
		fprintf(f, "(no call failed)\n");
}

static void sizes_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	fprintf(f, "\n## Access sizes (requests per Darshan size bin, in bytes)\n");
	fprintf(f, "%-*s %-5s", w->mount, "MOUNT", "DIR");
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		fprintf(f, " %9s", ioacct_size_bin_label(b));
	fputc('\n', f);
	for (struct r_cell it = { 0 }; r_next_dir(r, &it);) {
		r_text_pad(f, w->mount, it.m->path);
		fprintf(f, " %-5s", ioacct_dir_name(it.k));
		for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
			fprintf(f, " %9" PRIu64, it.c->size_hist[b]);
		fputc('\n', f);
	}
}

/* A hit ratio as a percentage, "-" when nothing was read. */
static const char *hit_pct(uint64_t read, uint64_t miss, char *buf, size_t len)
{
	double h = ioacct_hit_ratio(read, miss);

	if (h < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100 * h);
	return buf;
}

/* The page-cache and mmap views and the access hints (issue 14), when there is any. */
static void pcache_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	static const unsigned int view_ops[] = { IOACCT_OP_MMAP_FAULT, IOACCT_OP_CACHE_FILL,
						 IOACCT_OP_READAHEAD, IOACCT_OP_FADVISE,
						 IOACCT_OP_MADVISE };
	const char *unmeasured = ioacct_probe_mmap_unmeasured(r->jd->job.probe_mode);
	const struct ioacct_report_mount *all = &r->all;
	bool any = false;
	char t[16], mm[24];

	for (size_t k = 0; k < ARRAY_SIZE(view_ops); k++)
		any |= all->op[view_ops[k]].calls || all->op[view_ops[k]].bytes;
	if (!any)
		return;
	fprintf(f, "\n## Page cache and mmap (MISS: bytes the job's reads and faults brought in "
		   "from storage; RA: of those, read ahead of the request; HIT: 1 - MISS / "
		   "(READ + MMAP))\n");
	fprintf(f, "%-*s %14s %14s %10s %14s %14s %7s\n", w->mount, "MOUNT", "READ", "MMAP",
		"FAULTS", "MISS", "RA", "HIT");
	for (size_t i = 0; i <= r->nmounts; i++) {
		const struct ioacct_report_mount *m = i < r->nmounts ? &r->mounts[i] : all;
		const struct ioacct_counters *op = m->op;
		uint64_t rd = ioacct_report_read_all(op);

		if (i < r->nmounts && !rd && !op[IOACCT_OP_CACHE_FILL].bytes &&
		    !(unmeasured && op[IOACCT_OP_MMAP_FAULT].calls))
			continue;
		r_text_pad(f, w->mount, m->path);
		/* mmap bytes not measured: "-", not a number (issue 29; the line below says why). */
		if (unmeasured)
			snprintf(mm, sizeof(mm), "-");
		else
			snprintf(mm, sizeof(mm), "%" PRIu64, op[IOACCT_OP_MMAP_FAULT].bytes);
		fprintf(f, " %14" PRIu64 " %14s %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %7s\n",
			op[IOACCT_OP_READ].bytes, mm,
			op[IOACCT_OP_MMAP_FAULT].calls, op[IOACCT_OP_CACHE_FILL].bytes,
			op[IOACCT_OP_READAHEAD].bytes,
			hit_pct(rd, op[IOACCT_OP_CACHE_FILL].bytes, t, sizeof(t)));
	}
	if (unmeasured)
		fprintf(f, "mmap bytes: not measured here (%s)\n", unmeasured);
	for (unsigned int k = IOACCT_OP_FADVISE; k <= IOACCT_OP_MADVISE; k++) {
		const struct ioacct_counters *c = &all->op[k];
		bool first = true;

		if (!c->calls)
			continue;
		fprintf(f, "%s calls by advice:", ioacct_op_name(k));
		for (unsigned int h = 0; h < IOACCT_NR_HINTS; h++)
			if (c->size_hist[h]) {
				fprintf(f, "%s %s %" PRIu64, first ? "" : ",", ioacct_hint_name(h),
					c->size_hist[h]);
				first = false;
			}
		fputc('\n', f);
	}
}

static void steps_table(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_job *j = &r->jd->job;
	char name[24], s0[32], s1[32], t[32];

	fprintf(f, "\n## Steps (START_S and END_S from the job's start)\n");
	fprintf(f, "%-11s %-11s %5s %10s %10s %14s %14s %10s %10s %10s %8s %8s %12s\n", "STEP",
		"STATE", "EXIT", "START_S", "END_S", "BYTES_READ", "BYTES_WRITTEN", "READS", "WRITES",
		"META_OPS", "ERRORS", "NOTFOUND", "IO_TIME_S");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct ioacct_report_step *s = &r->steps[i];
		const struct ioacct_step *st = s->step;

		snprintf(s0, sizeof(s0), "-");
		snprintf(s1, sizeof(s1), "-");
		if (st && st->start_ns >= j->start_ns)
			r_secs((uint64_t)(st->start_ns - j->start_ns), 3, s0, sizeof(s0));
		if (st && st->end_ns >= j->start_ns && st->end_ns)
			r_secs((uint64_t)(st->end_ns - j->start_ns), 3, s1, sizeof(s1));
		fprintf(f, "%-11s ", ioacct_step_name(s->step_id, name, sizeof(name)));
		r_text_pad(f, 11, st ? st->state : "-");
		fprintf(f,
			" %5" PRId32 " %10s %10s %14" PRIu64 " %14" PRIu64 " %10" PRIu64
			" %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %12s\n",
			st ? st->exit_code : 0, s0, s1, s->op[IOACCT_OP_READ].bytes,
			s->op[IOACCT_OP_WRITE].bytes, s->op[IOACCT_OP_READ].calls,
			s->op[IOACCT_OP_WRITE].calls, s->meta_calls,
			ioacct_report_real_errors(s->errors, s->errclass),
			s->errclass[IOACCT_ERR_NOTFOUND], r_secs(s->ns, 6, t, sizeof(t)));
	}
	if (r->nsteps == 0)
		fprintf(f, "(no steps)\n");
}

/* A file's path, or what stands for it. */
static const char *file_path(const struct ioacct_file *f)
{
	if (ioacct_file_is_other(f))
		return "(other files)";
	return f->path[0] ? f->path : "(path unknown)";
}

/* The files that moved most (issue 26), when the job has per-file records. */
static void files_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	size_t n = r->nfiles < TOP_FILES ? r->nfiles : TOP_FILES;
	char a[32], b[32], c[32], rank[16], mm[24];

	/* No records because none were kept: not a job that used no file. */
	if (ioacct_probe_files_off(r->jd->job.probe_mode)) {
		fprintf(f, "\n## Top files\n%s\n", IOACCT_FILES_OFF_NOTE);
		return;
	}
	if (r->nrecords == 0)
		return;
	fprintf(f, "\n## Top files: %zu of %zu, by bytes moved, then time (RANK: the rank that "
		   "moved most, of RANKS; every record: ioreport --files)\n", n, r->nfiles);
	fprintf(f, "%14s %14s %14s %10s %10s %8s %8s %8s %8s %12s %12s %12s %6s %5s %-*s %s\n",
		"BYTES_READ", "BYTES_WRITTEN", "MMAP_BYTES", "READS", "WRITES", "OPENS", "STATS",
		"FSYNCS", "SEEKS", "READ_S", "WRITE_S", "META_S", "RANK", "RANKS", w->mount,
		"MOUNT", "PATH");
	for (size_t i = 0; i < n; i++) {
		const struct ioacct_report_file *x = &r->files[i];
		const struct ioacct_file *s = &x->sum;

		if (x->top_rank < 0)
			snprintf(rank, sizeof(rank), "-");
		else
			snprintf(rank, sizeof(rank), "%" PRId32, x->top_rank);
		/* Not measured (no exact mmap hook, no mmap view): "-", not 0. */
		if (r->files_mmap)
			snprintf(mm, sizeof(mm), "%" PRIu64, s->mmap_bytes);
		else
			snprintf(mm, sizeof(mm), "-");
		fprintf(f,
			"%14" PRIu64 " %14" PRIu64 " %14s %10" PRIu64 " %10" PRIu64 " %8" PRIu64
			" %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %12s %12s %12s %6s %5" PRIu32 " ",
			s->bytes_read, s->bytes_written, mm, s->reads, s->writes, s->opens,
			s->stats, s->fsyncs, s->seeks, r_secs(s->read_ns, 6, a, sizeof(a)),
			r_secs(s->write_ns, 6, b, sizeof(b)), r_secs(s->meta_ns, 6, c, sizeof(c)), rank,
			x->nranks);
		r_text_pad(f, w->mount, x->mount ? x->mount->path : "-");
		fputc(' ', f);
		r_text(f, file_path(s));
		fputc('\n', f);
	}
	if (r->files_partial)
		fprintf(f, "partial: max_files was reached; %" PRIu64 " calls (%" PRIu64 " bytes) on "
			   "files past it are counted as \"other files\"\n",
			r->other_calls, r->other_bytes);
}


/* MPI-IO bytes: ">=N" when unsized calls moved bytes not counted. */
static const char *mpiio_bytes(uint64_t bytes, uint64_t unsized, char *buf, size_t len)
{
	snprintf(buf, len, "%s%" PRIu64, unsized ? ">=" : "", bytes);
	return buf;
}

/* One row of the MPI-IO table: a file's sum (rank "all") or one record. */
static void mpiio_row(FILE *f, const struct ioacct_mpiio *m, const char *rank, const char *posix,
		      const char *ratio)
{
	char br[32], bw[32], a[32], b[32], c[32], op[48], rd[96], wr[96], un[48];

	snprintf(op, sizeof(op), "%" PRIu64 "/%" PRIu64, m->indep_opens, m->coll_opens);
	snprintf(rd, sizeof(rd), "%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64, m->indep_reads,
		 m->coll_reads, m->split_reads, m->nb_reads);
	snprintf(wr, sizeof(wr), "%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64, m->indep_writes,
		 m->coll_writes, m->split_writes, m->nb_writes);
	snprintf(un, sizeof(un), "%" PRIu64 "/%" PRIu64, m->unsized_reads, m->unsized_writes);
	fprintf(f,
		"%5s %7s %21s %21s %5" PRIu64 " %5" PRIu64 " %14s %14s %9s %10s %10s %10s %14s %6s ",
		rank, op, rd, wr, m->syncs, m->views,
		mpiio_bytes(m->bytes_read, m->unsized_reads, br, sizeof(br)),
		mpiio_bytes(m->bytes_written, m->unsized_writes, bw, sizeof(bw)), un,
		r_secs(m->read_ns, 6, a, sizeof(a)), r_secs(m->write_ns, 6, b, sizeof(b)),
		r_secs(m->meta_ns, 6, c, sizeof(c)), posix, ratio);
	r_text(f, m->path);
	fputc('\n', f);
}

/* POSIX bytes of a file and the ratio, or "-" when the job has no POSIX record of it. */
static void mpiio_posix(const struct ioacct_report_mpiio_file *x, char *posix, char *ratio,
			size_t len)
{
	double q = ioacct_report_mpiio_ratio(x);

	if (x->posix_found)
		snprintf(posix, len, "%" PRIu64, x->posix_read + x->posix_written);
	else
		snprintf(posix, len, "-");
	if (q < 0)
		snprintf(ratio, len, "-");
	else
		snprintf(ratio, len, "%s%.2f",
			 x->sum.unsized_reads + x->sum.unsized_writes ? ">=" : "", q);
}

/* The MPI-IO section (issue 27): per file, then per rank, beside the POSIX bytes. */
static void mpiio_table(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_report_mpiio_file *all = &r->mpiio_all;
	const struct ioacct_jobdata *jd = r->jd;
	char posix[40], ratio[40], rank[16];

	if (!jd->mpiio_loaded || !jd->nmpiio)
		return;
	mpiio_posix(all, posix, ratio, sizeof(posix));
	fprintf(f, "\n## MPI-IO: %zu files, %zu records (process and file); %" PRIu64
		   " bytes read, %" PRIu64 " written through MPI-IO; POSIX bytes of the same files: "
		   "%" PRIu64 " read, %" PRIu64 " written; MPI-IO / POSIX bytes: %s\n",
		r->nmpiio_files, jd->nmpiio, all->sum.bytes_read, all->sum.bytes_written,
		all->posix_read, all->posix_written, ratio);
	fprintf(f, "(OPENS indep/coll, READS and WRITES indep/coll/split/nonblocking, UNSIZED "
		   "reads/writes; per file (RANK all), then per record: POSIX_BYTES and RATIO per "
		   "file; under 1: the POSIX calls moved more than MPI-IO asked (data sieving, "
		   "read-modify-write), over 1: less)\n");
	if (all->sum.unsized_reads || all->sum.unsized_writes)
		fprintf(f, "unsized: %" PRIu64 " reads and %" PRIu64 " writes had a datatype whose "
			   "size the probes could not read: their bytes are unknown, not in BYTES "
			   "(\">=\")\n", all->sum.unsized_reads, all->sum.unsized_writes);
	fprintf(f, "%5s %7s %21s %21s %5s %5s %14s %14s %9s %10s %10s %10s %14s %6s %s\n", "RANK",
		"OPENS", "READS", "WRITES", "SYNCS", "VIEWS", "BYTES_READ", "BYTES_WRITTEN",
		"UNSIZED", "READ_S", "WRITE_S", "META_S", "POSIX_BYTES", "RATIO", "PATH");
	for (size_t i = 0; i < r->nmpiio_files; i++) {
		const struct ioacct_report_mpiio_file *x = &r->mpiio_files[i];

		mpiio_posix(x, posix, ratio, sizeof(posix));
		mpiio_row(f, &x->sum, "all", posix, ratio);
	}
	if (jd->nmpiio > MPIIO_RANK_ROWS) {
		fprintf(f, "(%zu records: per rank in the JSON report)\n", jd->nmpiio);
		return;
	}
	for (size_t i = 0; i < jd->nmpiio; i++) {
		snprintf(rank, sizeof(rank), "%" PRId32, jd->mpiio[i].rank);
		mpiio_row(f, &jd->mpiio[i], rank, "-", "-");
	}
}

/* The HDF5 section (issue 39): per file beside its POSIX bytes, then every record. */
static void hdf5_table(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	char br[32], bw[32], a[32], b[32], c[32], pr[32], pw[32], rank[16];

	if (!jd->h5_loaded || !jd->nh5)
		return;
	fprintf(f, "\n## HDF5: %zu files, %zu records (Darshan's H5F per file, H5D per dataset; per "
		   "process)\n", r->nh5_files, jd->nh5);
	fprintf(f, "(per file: the bytes its datasets' reads and writes asked for, beside the "
		   "POSIX bytes of the file: chunking, compression and metadata; \">=\": calls "
		   "whose size the probes could not read)\n");
	fprintf(f, "%14s %14s %14s %14s %s\n", "H5D_READ", "H5D_WRITTEN", "POSIX_READ",
		"POSIX_WRITTEN", "FILE");
	for (size_t i = 0; i < r->nh5_files; i++) {
		const struct ioacct_report_h5_file *x = &r->h5_files[i];

		if (x->posix_found) {
			snprintf(pr, sizeof(pr), "%" PRIu64, x->posix_read);
			snprintf(pw, sizeof(pw), "%" PRIu64, x->posix_written);
		} else {
			snprintf(pr, sizeof(pr), "-");
			snprintf(pw, sizeof(pw), "-");
		}
		fprintf(f, "%14s %14s %14s %14s ",
			mpiio_bytes(x->bytes_read, x->unsized_reads, br, sizeof(br)),
			mpiio_bytes(x->bytes_written, x->unsized_writes, bw, sizeof(bw)), pr, pw);
		r_text(f, x->name);
		fputc('\n', f);
	}
	if (jd->nh5 > MPIIO_RANK_ROWS) {
		fprintf(f, "(%zu records: in the JSON report)\n", jd->nh5);
		return;
	}
	fprintf(f, "%5s %3s %5s %7s %7s %7s %14s %14s %8s %10s %10s %10s %s\n", "RANK", "MOD",
		"OPENS", "FLUSHES", "READS", "WRITES", "BYTES_READ", "BYTES_WRITTEN", "SWITCHES",
		"READ_S", "WRITE_S", "META_S", "NAME");
	for (size_t i = 0; i < jd->nh5; i++) {
		const struct ioacct_h5rec *h = &jd->h5[i];

		snprintf(rank, sizeof(rank), "%" PRId32, h->rank);
		fprintf(f, "%5s %3s %5" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %14s %14s %8"
			PRIu64 " %10s %10s %10s ", rank, h->kind == IOACCT_H5REC_DATASET ? "H5D" : "H5F",
			h->opens, h->flushes, h->reads, h->writes,
			mpiio_bytes(h->bytes_read, h->unsized_reads, br, sizeof(br)),
			mpiio_bytes(h->bytes_written, h->unsized_writes, bw, sizeof(bw)),
			h->rw_switches, r_secs(h->read_ns, 6, a, sizeof(a)),
			r_secs(h->write_ns, 6, b, sizeof(b)), r_secs(h->meta_ns, 6, c, sizeof(c)));
		r_text(f, h->name);
		fputc('\n', f);
	}
}

/*
 * "Server calls" (issue 40), per mount with RPC rows: the job's own per
 * procedure (most calls first; times are means per call), then the RPCs on
 * the mount during the job that no job sent.
 */
static void rpc_tables(FILE *f, const struct ioacct_report *r)
{
	char q[32], t[32], e[32];

	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		if (!m->nrpc && !m->nrpc_unattr)
			continue;
		fputs("\n## Server calls: ", f);
		r_text(f, m->path);
		fputs(" (", f);
		r_text(f, m->fstype);
		fputs("), the RPCs the job sent, per procedure (QUEUE_S, RTT_S, EXECUTE_S: mean per "
		      "call)\n", f);
		fprintf(f, "%-24s %7s %4s %10s %14s %14s %10s %10s %10s %8s %8s\n", "PROCEDURE",
			"PROG", "VERS", "CALLS", "BYTES_SENT", "BYTES_RECV", "QUEUE_S", "RTT_S",
			"EXECUTE_S", "ERRORS", "RETRANS");
		for (size_t k = 0; k < m->nrpc; k++) {
			const struct ioacct_rpc *s = &m->rpc[k].sum;

			r_text_pad(f, 24, m->rpc[k].key);
			fprintf(f, " %7" PRIu32 " %4" PRIu32 " %10" PRIu64 " %14" PRIu64 " %14" PRIu64
				" %10s %10s %10s %8" PRIu64 " %8" PRIu64 "\n", s->prog, s->vers, s->calls,
				s->bytes_sent, s->bytes_recv,
				r_secs(ioacct_rpc_mean(s->queue_ns, s->calls), 6, q, sizeof(q)),
				r_secs(ioacct_rpc_mean(s->rtt_ns, s->calls), 6, t, sizeof(t)),
				r_secs(ioacct_rpc_mean(s->execute_ns, s->calls), 6, e, sizeof(e)),
				s->errors, s->retrans);
		}
		if (!m->nrpc)
			fputs("(none: the job sent no RPC on this mount)\n", f);
		if (m->nrpc_unattr) {
			r_rpc_unattributed(f, m, r_text);
			fputc('\n', f);
		}
	}
}

/* A job of several nodes from the cluster store: each node's own totals. */
static void nodes_table(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	char s0[32], t[32];

	if (jd->nnodes == 0)
		return;
	fprintf(f, "\n## Nodes (START_S from the job's start, the earliest node's)\n");
	fprintf(f, "%-20s %10s %14s %14s %10s %10s %12s\n", "NODE", "START_S", "BYTES_READ",
		"BYTES_WRITTEN", "READS", "WRITES", "IO_TIME_S");
	for (size_t i = 0; i < jd->nnodes; i++) {
		const struct ioacct_node_part *p = &jd->nodes[i];

		snprintf(s0, sizeof(s0), "-");
		if (p->start_ns >= jd->job.start_ns)
			r_secs((uint64_t)(p->start_ns - jd->job.start_ns), 3, s0, sizeof(s0));
		r_text_pad(f, 20, p->node);
		fprintf(f, " %10s %14" PRIu64 " %14" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12s\n", s0,
			p->read_bytes, p->write_bytes, p->reads, p->writes,
			r_secs(p->ns, 6, t, sizeof(t)));
	}
}

/* One row of the series: bins [b0, b1] of one mount, summed. */
static void series_row(FILE *f, const struct ioacct_report *r, const struct cols *w,
		       const struct ioacct_report_mount *m, uint32_t b0, uint32_t b1,
		       const struct ioacct_report_bin *sum)
{
	char bins[32], t[32];

	if (b1 >= r->nbins)
		b1 = r->nbins - 1;
	if (b0 >= b1)
		snprintf(bins, sizeof(bins), "%" PRIu32, b0);
	else
		snprintf(bins, sizeof(bins), "%" PRIu32 "-%" PRIu32, b0, b1);
	fprintf(f, "%-13s %12s ", bins, r_secs((uint64_t)b0 * r->bin_width_ns, 3, t, sizeof(t)));
	r_text_pad(f, w->mount, m->path);
	fprintf(f, " %14" PRIu64 " %14" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
		sum->bytes[IOACCT_DIR_READ], sum->bytes[IOACCT_DIR_WRITE], sum->calls[IOACCT_DIR_READ],
		sum->calls[IOACCT_DIR_WRITE], sum->meta);
}

static uint32_t group_end(uint32_t g, uint32_t group)
{
	uint64_t end = (uint64_t)g * group + group - 1;

	return end > UINT32_MAX ? UINT32_MAX : (uint32_t)end;
}

static void series_table(FILE *f, const struct ioacct_report *r, const struct cols *w)
{
	uint32_t group = 1;
	size_t maxbins = 0;
	char t[32];

	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].nbins > maxbins)
			maxbins = r->mounts[i].nbins;
	/* Long jobs: sum SERIES_ROWS-th parts of the job; the counts stay exact. */
	if (maxbins > 2 * SERIES_ROWS)
		group = (r->nbins + SERIES_ROWS - 1) / SERIES_ROWS;
	if (group > 1)
		fprintf(f, "\n## Time series: %" PRIu32 " bins of %s s, shown in groups of %" PRIu32
			   " bins (rows without calls left out)\n",
			r->nbins, r_secs(r->bin_width_ns, 3, t, sizeof(t)), group);
	else
		fprintf(f, "\n## Time series: %" PRIu32 " bin%s of %s s (rows without calls left out)\n",
			r->nbins, r->nbins == 1 ? "" : "s", r_secs(r->bin_width_ns, 3, t, sizeof(t)));
	fprintf(f, "%-13s %12s %-*s %14s %14s %10s %10s %10s\n", group > 1 ? "BINS" : "BIN", "START_S",
		w->mount, "MOUNT", "BYTES_READ", "BYTES_WRITTEN", "READS", "WRITES", "META_OPS");
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];
		struct ioacct_report_bin sum = { 0 };
		uint32_t cur = 0;
		bool open = false;

		for (size_t k = 0; k < m->nbins; k++) {
			const struct ioacct_report_bin *b = &m->bins[k];
			uint32_t g = b->bin / group;

			if (open && g != cur) {
				series_row(f, r, w, m, cur * group, group_end(cur, group), &sum);
				memset(&sum, 0, sizeof(sum));
			}
			cur = g;
			open = true;
			for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
				sum.bytes[d] += b->bytes[d];
				sum.calls[d] += b->calls[d];
			}
			sum.meta += b->meta;
		}
		if (open)
			series_row(f, r, w, m, cur * group, group_end(cur, group), &sum);
	}
}

/*
 * Writes `first`, then `text` wrapped at WRAP columns, continued after `lead`
 * spaces. The text is advice, which quotes mount paths: cleaned whole first,
 * so that no name can break a line where the wrapping did not.
 */
static void wrapped_at(FILE *f, const char *first, int lead, const char *text)
{
	char clean[4 * IOACCT_ADVICE_TEXT + 1];
	int col = (int)strlen(first);
	bool start = true;

	fputs(first, f);
	for (const char *p = ioacct_text_clean(clean, sizeof(clean), text); *p;) {
		size_t n;

		p += strspn(p, " ");
		if (!*p)
			break;
		n = strcspn(p, " ");
		if (!start && col + 1 + (int)n > WRAP) {
			fprintf(f, "\n%*s", lead, "");
			col = lead;
		} else if (!start) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, n, f);
		col += (int)n;
		p += n;
		start = false;
	}
	fputc('\n', f);
}

/* Writes `first` after `indent` spaces, then `text` wrapped at WRAP columns below it. */
static void wrapped(FILE *f, int indent, const char *first, const char *text)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%*s%s", indent, "", first);
	wrapped_at(f, buf, indent + (int)strlen(first), text);
}

static void advice(FILE *f, const struct ioacct_report *r)
{
	char lead[64];

	fprintf(f, "\n## Advice (HIGH, WARN, INFO, OK; thresholds from ioacct.conf)\n");
	for (size_t i = 0; i < r->nadvice; i++) {
		const struct ioacct_advice *a = &r->advice[i];

		snprintf(lead, sizeof(lead), "%-4s %s: ", ioacct_advice_level_name(a->level), a->rule);
		wrapped(f, 0, lead, a->message);
		wrapped(f, 5, "-> ", a->suggestion);
	}
}

int ioacct_render_text(FILE *f, const struct ioacct_report *r)
{
	struct cols w = { .mount = 5 };

	for (size_t i = 0; i < r->nmounts; i++) {
		char clean[4 * PATH_MAX + 1];
		int n = (int)strlen(ioacct_text_clean(clean, sizeof(clean), r->mounts[i].path));

		if (n > w.mount)
			w.mount = n > 40 ? 40 : n;
	}
	summary(f, r);
	mounts_table(f, r, &w);
	rates_table(f, r, &w);
	time_split(f, r, &w);
	ops_table(f, r, &w);
	errors_table(f, r, &w);
	rpc_tables(f, r);
	sizes_table(f, r, &w);
	pcache_table(f, r, &w);
	steps_table(f, r);
	files_table(f, r, &w);
	mpiio_table(f, r);
	hdf5_table(f, r);
	nodes_table(f, r);
	series_table(f, r, &w);
	advice(f, r);
	header(f, r);
	for (size_t i = 0; i < r->nmounts; i++)
		counters(f, &r->mounts[i]);
	return r_finish(f);
}

/* The common access sizes, "SIZE:COUNT,..." most common first, "-" for none; the line's end. */
static void access_sizes(FILE *f, const struct ioacct_file *x)
{
	for (unsigned int i = 0; i < IOACCT_FILE_ACCESSES && x->access_count[i]; i++)
		fprintf(f, "%s%" PRIu64 ":%" PRIu64, i ? "," : "", x->access[i], x->access_count[i]);
	fputs(x->access_count[0] ? "\n" : "-\n", f);
}

int ioacct_render_files_text(FILE *f, const struct ioacct_report *r)
{
	char step[24];

	fputs("STEP\tRANK\tMOUNT\tDEV\tINO\tOPENS\tREADS\tWRITES\tSTATS\tFSYNCS\tSEEKS\t"
	      "BYTES_READ\tBYTES_WRITTEN\tREAD_NS\tWRITE_NS\tMETA_NS\tMAX_BYTE_READ\t"
	      "MAX_BYTE_WRITTEN\tSEQ_READS\tSEQ_WRITES\tCONSEC_READS\tCONSEC_WRITES\tMMAP_BYTES\t"
	      "CACHE_MISS_BYTES\tPATH\tGEN\tRW_SWITCHES\tACCESS_SIZES\n", f);
	if (ioacct_probe_files_off(r->jd->job.probe_mode))
		fprintf(f, "# %s\n", IOACCT_FILES_OFF_NOTE);
	for (size_t i = 0; i < r->nrecords; i++) {
		const struct ioacct_file *x = r->records[i];
		const struct ioacct_report_mount *m = ioacct_report_file_mount(r, x->mnt_id);

		fprintf(f, "%s\t%" PRId32 "\t", ioacct_step_name(x->step_id, step, sizeof(step)),
			x->rank);
		r_text(f, m ? m->path : "-");
		fprintf(f,
			"\t%" PRIu32 ":%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			"\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			"\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRIu64 "\t%" PRIu64
			"\t%" PRIu64 "\t%" PRIu64 "\t",
			x->dev >> 20, x->dev & 0xfffff, x->ino, x->opens, x->reads, x->writes, x->stats,
			x->fsyncs, x->seeks, x->bytes_read, x->bytes_written, x->read_ns, x->write_ns,
			x->meta_ns,
			x->max_byte_read, x->max_byte_written, x->seq_reads, x->seq_writes,
			x->consec_reads, x->consec_writes);
		/* Not measured: "-", not 0. */
		if (r->files_mmap)
			fprintf(f, "%" PRIu64 "\t", x->mmap_bytes);
		else
			fputs("-\t", f);
		if (r->files_miss)
			fprintf(f, "%" PRIu64 "\t", x->cache_miss_bytes);
		else
			fputs("-\t", f);
		r_text(f, file_path(x));
		fprintf(f, "\t%" PRIu32 "\t%" PRIu64 "\t", x->gen, x->rw_switches);
		access_sizes(f, x);
	}
	if (r->files_partial)
		fprintf(f, "# partial: max_files was reached; %" PRIu64 " calls (%" PRIu64 " bytes) on "
			   "files past it are counted as \"other files\"\n",
			r->other_calls, r->other_bytes);
	return r_finish(f);
}
