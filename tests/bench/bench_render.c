// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_render: how long the report of a long job takes to build and render.
 *
 *   bench_render [HOURS [OUTDIR]]
 *
 * Builds in memory a job of HOURS hours (24 by default) with 1 s bins, three
 * mounts and every operation in every bin (86400 x 3 x 10 samples for a
 * day), then times the report model and each renderer, best of three runs.
 * With OUTDIR the reports are written there (report.txt, .json, .html) to be
 * looked at; otherwise to /dev/null. Run by hand: timings are not asserted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobbuild.h"
#include "render.h"
#include "report.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A checkpointing simulation: steady reads, writes in bursts every hour, metadata noise. */
static void build(struct jb *b, uint32_t hours)
{
	static const struct {
		uint32_t id;
		const char *path, *fstype;
	} mounts[] = { { 21, "/scratch", "lustre" }, { 22, "/tmp", "ext4" }, { 23, "/home", "nfs4" } };
	uint32_t nbins = hours * 3600;

	jb_init(b, JB_SEC, (uint64_t)nbins * JB_SEC);
	for (size_t m = 0; m < 3; m++)
		jb_mount(b, mounts[m].id, mounts[m].path, mounts[m].fstype);
	jb_step(b, 0, 0, (uint64_t)nbins * JB_SEC);
	for (size_t m = 0; m < 3; m++) {
		for (uint32_t op = 0; op < IOACCT_OP_COUNT; op++) {
			for (uint32_t bin = 0; bin < nbins; bin++) {
				double wave = 1.0 + sin((double)bin / 900.0);
				uint64_t calls = 1 + (uint64_t)(20 * wave) + (m == 0 && bin % 3600 < 60 ? 400 : 0);
				uint64_t bytes = op == IOACCT_OP_READ ? calls * 1048576
					       : op == IOACCT_OP_WRITE ? calls * 4096 * (bin % 3600 < 60 ? 64 : 1)
								       : 0;

				jb_add(b, 0, mounts[m].id, op, bin, calls, op == IOACCT_OP_STAT ? 1 : 0, bytes,
				       calls * 1000);
			}
		}
	}
}

static FILE *out(const char *dir, const char *name)
{
	char path[4096];

	if (!dir)
		return fopen("/dev/null", "we");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "we");
}

int main(int argc, char **argv)
{
	static const char *const files[] = { "report.txt", "report.json", "report.html" };
	uint32_t hours = argc > 1 ? (uint32_t)atoi(argv[1]) : 24;
	const char *dir = argc > 2 ? argv[2] : NULL;
	double best[4] = { 1e18, 1e18, 1e18, 1e18 };
	struct jb b;

	if (hours == 0 || hours > 24 * 30) {
		fprintf(stderr, "usage: bench_render [HOURS (1..720) [OUTDIR]]\n");
		return 2;
	}
	build(&b, hours);
	printf("job: %u h in 1 s bins, %zu mounts, %zu samples\n", hours, b.jd->nmounts, b.jd->nseries);
	for (int run = 0; run < 3; run++) {
		double t0 = now_ms(), t1;
		struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);

		if (!r) {
			perror("bench_render: report");
			return 1;
		}
		t1 = now_ms();
		if (t1 - t0 < best[0])
			best[0] = t1 - t0;
		for (int fmt = 0; fmt < 3; fmt++) {
			FILE *f = out(dir, files[fmt]);

			if (!f) {
				perror("bench_render: output");
				return 1;
			}
			t0 = now_ms();
			if (ioacct_render(f, (enum ioacct_render_format)fmt, r)) {
				fprintf(stderr, "bench_render: render %s failed\n", files[fmt]);
				return 1;
			}
			fclose(f);
			t1 = now_ms();
			if (t1 - t0 < best[fmt + 1])
				best[fmt + 1] = t1 - t0;
		}
		ioacct_report_destroy(r);
	}
	printf("report model %8.1f ms\ntext         %8.1f ms\njson         %8.1f ms\nhtml         %8.1f ms\n",
	       best[0], best[1], best[2], best[3]);
	ioacct_jobdata_free(b.jd);
	return 0;
}
