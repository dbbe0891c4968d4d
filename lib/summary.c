// SPDX-License-Identifier: GPL-2.0-or-later
#include "summary.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int ioacct_summary_mounts(const struct ioacct_jobdata *jd, struct ioacct_mount_sum **out, size_t *n)
{
	struct ioacct_mount_sum *s = calloc(jd->nmounts ? jd->nmounts : 1, sizeof(*s));
	size_t cnt = 0;

	if (!s)
		return -ENOMEM;
	for (size_t m = 0; m < jd->nmounts; m++) {
		struct ioacct_mount_sum *ms = &s[cnt];
		bool any = false;

		ms->mount = &jd->mounts[m];
		for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++) {
			ioacct_samples_sum(jd->totals, jd->ntotals, UINT32_MAX, jd->mounts[m].mnt_id, op,
					   &ms->op[op]);
			ms->errors += ms->op[op].errors;
			ms->ns += ms->op[op].ns;
			any |= ms->op[op].calls != 0;
		}
		if (any)
			cnt++;
	}
	*out = s;
	*n = cnt;
	return 0;
}

static const char *const json_names[IOACCT_OP_COUNT] = {
	"reads", "writes", "opens", "creates", "mkdirs", "unlinks", "rmdirs", "fsyncs", "renames", "stats",
};

int ioacct_summary_print_text(FILE *f, const struct ioacct_jobdata *jd)
{
	struct ioacct_mount_sum *s;
	size_t n;
	int ret = ioacct_summary_mounts(jd, &s, &n);
	double run = jd->job.end_ns > jd->job.start_ns ? (double)(jd->job.end_ns - jd->job.start_ns) / 1e9 : 0;

	if (ret)
		return ret;
	fprintf(f, "ioacct: job %" PRIu64 " on %s (%s), %s, %.3f s, probe mode %s, dropped events %" PRIu64 "\n",
		jd->job.job_id, jd->job.node, jd->job.cluster, jd->job.state, run, jd->job.probe_mode,
		jd->job.dropped_events);
	fprintf(f, "%-24s %-10s %14s %14s %9s %9s %7s %7s %6s %7s %6s %6s %7s %7s %6s %10s\n", "MOUNT",
		"FSTYPE", "READ_BYTES", "WRITE_BYTES", "READS", "WRITES", "OPENS", "CREATES", "MKDIRS",
		"UNLINKS", "RMDIRS", "FSYNCS", "RENAMES", "STATS", "ERRORS", "TIME_S");
	for (size_t i = 0; i < n; i++) {
		const struct ioacct_counters *op = s[i].op;

		fprintf(f,
			"%-24s %-10s %14" PRIu64 " %14" PRIu64 " %9" PRIu64 " %9" PRIu64 " %7" PRIu64
			" %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64 " %6" PRIu64 " %7" PRIu64
			" %7" PRIu64 " %6" PRIu64 " %10.6f\n",
			s[i].mount->path, s[i].mount->fstype, op[IOACCT_OP_READ].bytes,
			op[IOACCT_OP_WRITE].bytes, op[IOACCT_OP_READ].calls, op[IOACCT_OP_WRITE].calls,
			op[IOACCT_OP_OPEN].calls, op[IOACCT_OP_CREATE].calls, op[IOACCT_OP_MKDIR].calls,
			op[IOACCT_OP_UNLINK].calls, op[IOACCT_OP_RMDIR].calls, op[IOACCT_OP_FSYNC].calls,
			op[IOACCT_OP_RENAME].calls, op[IOACCT_OP_STAT].calls, s[i].errors,
			(double)s[i].ns / 1e9);
	}
	if (n == 0)
		fprintf(f, "(no file-system I/O was counted)\n");
	free(s);
	return 0;
}

void ioacct_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void json_hist(FILE *f, const char *name, const struct ioacct_counters *c)
{
	fprintf(f, ", \"%s\": {", name);
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		fprintf(f, "%s\"%s\": %" PRIu64, b ? ", " : "", ioacct_size_bin_name(b), c->size_hist[b]);
	fputc('}', f);
}

int ioacct_summary_print_json(FILE *f, const struct ioacct_jobdata *jd)
{
	struct ioacct_mount_sum *s;
	size_t n;
	int ret = ioacct_summary_mounts(jd, &s, &n);

	if (ret)
		return ret;
	fprintf(f, "{\"job_id\": %" PRIu64 ", \"cluster\": ", jd->job.job_id);
	ioacct_json_string(f, jd->job.cluster);
	fprintf(f, ", \"node\": ");
	ioacct_json_string(f, jd->job.node);
	fprintf(f, ", \"state\": ");
	ioacct_json_string(f, jd->job.state);
	fprintf(f, ", \"exit_code\": %d, \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
		", \"bin_width_ns\": %" PRIu64 ", \"probe_mode\": ",
		jd->job.exit_code, jd->job.start_ns, jd->job.end_ns, jd->job.bin_width_ns);
	ioacct_json_string(f, jd->job.probe_mode);
	if (jd->start_mono_ns)
		fprintf(f, ", \"start_mono_ns\": %" PRIu64, jd->start_mono_ns);
	fprintf(f, ", \"dropped\": %" PRIu64 ", \"dropped_bytes\": %" PRIu64 ", \"mounts\": [",
		jd->job.dropped_events, jd->job.dropped_bytes);
	for (size_t i = 0; i < n; i++) {
		const struct ioacct_counters *op = s[i].op;

		fprintf(f, "%s\n  {\"mount\": ", i ? "," : "");
		ioacct_json_string(f, s[i].mount->path);
		fprintf(f, ", \"fs_type\": ");
		ioacct_json_string(f, s[i].mount->fstype);
		fprintf(f, ", \"read_bytes\": %" PRIu64 ", \"write_bytes\": %" PRIu64,
			op[IOACCT_OP_READ].bytes, op[IOACCT_OP_WRITE].bytes);
		for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
			fprintf(f, ", \"%s\": %" PRIu64, json_names[k], op[k].calls);
		fprintf(f, ", \"errors\": %" PRIu64 ", \"time_ns\": %" PRIu64, s[i].errors, s[i].ns);
		fprintf(f, ", \"op_errors\": {");
		for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", json_names[k], op[k].errors);
		fputc('}', f);
		json_hist(f, "read_sizes", &op[IOACCT_OP_READ]);
		json_hist(f, "write_sizes", &op[IOACCT_OP_WRITE]);
		fputc('}', f);
	}
	fprintf(f, "%s]}\n", n ? "\n" : "");
	free(s);
	return 0;
}
