// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the Darshan log reader (lib/darshan/darshan.c), built with
 * clang -fsanitize=fuzzer,address,undefined by run-fuzz.sh. Every input is
 * parsed under a 256 MiB memory limit; a log that parses is aggregated,
 * looked up, compared with a fixed job as `ioreport --compare` would
 * (reports/compare.c), written again as format 3.41 and read back, which
 * must give the same records. Anything else is a bug: a crash, a leak, an
 * error without a message, or a round trip that differs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "darshan.h"
#include "filebuild.h"
#include "jobbuild.h"
#include "report.h"

static struct ioacct_report *report;
static FILE *devnull;

/* A small job on /, /scratch and /dev/shm, with per-file records, to compare every log with. */
static void setup(void)
{
	static struct jb b;
	struct ioacct_file *f;

	jb_init(&b, JB_SEC, 10 * JB_SEC);
	jb_mount(&b, 1, "/", "ext4");
	jb_mount(&b, 2, "/scratch", "lustre");
	jb_mount(&b, 3, "/dev/shm", "tmpfs");
	jb_step(&b, 0, 0, 10 * JB_SEC);
	jb_add(&b, 0, 2, IOACCT_OP_WRITE, 3, 8, 1, 8 * JB_MIB, 1000);
	jb_add(&b, 0, 1, IOACCT_OP_READ, 0, 2, 0, 2000, 10);
	jb_add(&b, 0, 3, IOACCT_OP_OPEN, 9, 1, 0, 0, 10);
	f = jb_file(&b, 0, 0, 2, 8 << 20 | 1, 5, "/scratch/out");
	jb_file_rw(f, false, 4, JB_MIB, 500, 3 * JB_SEC, 4 * JB_SEC);
	f = jb_file(&b, 0, -1, 2, 0, 0, "");
	jb_file_rw(f, false, 3, JB_MIB, 400, 3 * JB_SEC, 4 * JB_SEC);
	f = jb_file(&b, 0, -1, 1, 8 << 20 | 2, 6, "/etc/hosts");
	jb_file_rw(f, true, 2, 1000, 10, 0, JB_SEC);
	report = ioacct_report_create(b.jd, NULL, NULL);
	devnull = fopen("/dev/null", "w");
	if (!report || !devnull)
		abort();
}

static void check_same(const struct ioacct_darshan_log *a, const struct ioacct_darshan_log *b)
{
	if (a->nnames != b->nnames || a->nmounts != b->nmounts || a->nheatmaps != b->nheatmaps ||
	    a->uid != b->uid || a->jobid != b->jobid || strcmp(a->exe, b->exe) != 0)
		abort();
	for (int k = 0; k < IOACCT_DARSHAN_NKINDS; k++)
		if (a->nrecs[k] != b->nrecs[k] ||
		    (a->nrecs[k] && memcmp(a->recs[k], b->recs[k], a->nrecs[k] * sizeof(*a->recs[k]))))
			abort();
	for (size_t i = 0; i < a->nheatmaps; i++)
		if (a->heatmaps[i].nbins != b->heatmaps[i].nbins ||
		    memcmp(a->heatmaps[i].read_bins, b->heatmaps[i].read_bins,
			   a->heatmaps[i].nbins * sizeof(int64_t)) ||
		    memcmp(a->heatmaps[i].write_bins, b->heatmaps[i].write_bins,
			   a->heatmaps[i].nbins * sizeof(int64_t)))
			abort();
	if (a->ndxt != b->ndxt)
		abort();
	for (size_t i = 0; i < a->ndxt; i++) {
		const struct ioacct_darshan_dxt *x = &a->dxt[i], *y = &b->dxt[i];

		/* Bytes after the hostname's NUL are not written again: strcmp, not memcmp. */
		if (x->id != y->id || x->rank != y->rank || x->shared_record != y->shared_record ||
		    strcmp(x->hostname, y->hostname) || x->nwrites != y->nwrites ||
		    x->nreads != y->nreads ||
		    (x->nwrites && memcmp(x->writes, y->writes, x->nwrites * sizeof(*x->writes))) ||
		    (x->nreads && memcmp(x->reads, y->reads, x->nreads * sizeof(*x->reads))))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ioacct_darshan_log *log, *back;
	struct ioacct_darshan_record tot;
	struct ioacct_compare *c;
	char err[512];
	void *buf;
	size_t len;

	if (!report)
		setup();
	err[0] = '\0';
	log = ioacct_darshan_parse(data, size, 256 << 20, err, sizeof(err));
	if (!log) {
		if (!err[0])
			abort();
		return 0;
	}
	for (int k = 0; k < IOACCT_DARSHAN_NKINDS; k++) {
		ioacct_darshan_total(log, (enum ioacct_darshan_kind)k, &tot);
		for (size_t i = 0; i < log->nrecs[k]; i++) {
			const char *name = ioacct_darshan_name_of(log, log->recs[k][i].id);

			if (name)
				ioacct_darshan_mount_of(log, name);
		}
	}
	c = ioacct_compare_create(report, log, size & 1, size & 2 ? "/scratch" : NULL);
	if (c)
		ioacct_compare_render_text(devnull, c, "fuzz.darshan");
	ioacct_compare_destroy(c);

	/* Written again, read back: the same records (logs too big for 3.41 aside). */
	if (ioacct_darshan_write(log, &buf, &len, err, sizeof(err)) == 0) {
		back = ioacct_darshan_parse(buf, len, 0, err, sizeof(err));
		if (!back)
			abort();
		check_same(log, back);
		ioacct_darshan_free(back);
		free(buf);
	}
	ioacct_darshan_free(log);
	return 0;
}
