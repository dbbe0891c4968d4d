// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of ioreport --compare (reports/compare.c): a job compared with
 * its own Darshan log (every ratio exactly 1, identical time series, a
 * relative error of 0); a log whose counters differ (the ratios say by how
 * much); Darshan's heatmap at another bin width and start time, resampled
 * with its bytes kept; the Darshan filter; mounts on one side only; the
 * text, with what each side cannot see.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "compare.h"
#include "darshan.h"
#include "filebuild.h"
#include "jobbuild.h"
#include "report.h"

#define SEC JB_SEC
#define MIB JB_MIB

enum { M_ROOT = 1, M_SCRATCH = 3, M_SHM = 7 };

struct fixture {
	struct jb b;
	struct ioacct_report *r;
	struct ioacct_darshan_log *log;
	struct ioacct_compare *c;
};

/* A 20 s job, 2 s bins, on /, /scratch and /dev/shm. */
static void job(struct fixture *fx)
{
	struct jb *b = &fx->b;

	memset(fx, 0, sizeof(*fx));
	jb_init(b, 2 * SEC, 20 * SEC + SEC / 2);
	jb_mount(b, M_ROOT, "/", "ext4");
	jb_mount(b, M_SCRATCH, "/scratch", "lustre");
	jb_mount(b, M_SHM, "/dev/shm", "tmpfs");
	jb_step(b, 0, 0, 20 * SEC);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 4, 1, 0, 4000);
	for (uint32_t bin = 0; bin < 10; bin++)
		jb_add(b, 0, M_SCRATCH, IOACCT_OP_WRITE, bin, 8, 0, 8 * MIB, 1000000 + bin);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_READ, 10, 16, 0, 16 * 65536, 777777);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_FSYNC, 9, 2, 0, 0, 300000);
	jb_add(b, 0, M_ROOT, IOACCT_OP_STAT, 0, 30, 3, 0, 999);
	jb_add(b, 0, M_ROOT, IOACCT_OP_READ, 0, 3, 0, 3 * 4096, 12345);
	jb_add(b, 0, M_SHM, IOACCT_OP_WRITE, 5, 100, 0, 100 * 1000, 5555);
	fx->r = ioacct_report_create(b->jd, NULL, NULL);
	assert_non_null(fx->r);
}

/* The job's own log, written and read back as a file would be. */
static void own_log(struct fixture *fx, bool filter)
{
	struct ioacct_darshan_log *log = ioacct_darshan_from_report(fx->r, filter);
	char err[256];
	void *buf;
	size_t len;

	assert_non_null(log);
	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	fx->log = ioacct_darshan_parse(buf, len, 0, err, sizeof(err));
	assert_non_null(fx->log);
	free(buf);
	ioacct_darshan_free(log);
}

static void done(struct fixture *fx)
{
	ioacct_compare_destroy(fx->c);
	ioacct_darshan_free(fx->log);
	ioacct_report_destroy(fx->r);
	ioacct_jobdata_free(fx->b.jd);
}

static const struct ioacct_compare_mount *mount(const struct ioacct_compare *c, const char *path)
{
	for (size_t i = 0; i < c->nmounts; i++)
		if (strcmp(c->mounts[i].path, path) == 0)
			return &c->mounts[i];
	fail_msg("no mount %s in the comparison", path);
	return NULL;
}

static const struct ioacct_compare_row *row(const struct ioacct_compare_mount *m, const char *name)
{
	for (size_t k = 0; k < IOACCT_COMPARE_ROWS; k++)
		if (strcmp(m->rows[k].name, name) == 0)
			return &m->rows[k];
	fail_msg("no row %s", name);
	return NULL;
}

static char *render(const struct ioacct_compare *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(ioacct_compare_render_text(f, c, "job.darshan"), 0);
	fclose(f);
	return text;
}

/* A job against its own log: every ratio exactly 1 where a side is not 0. */
static void test_self(void **state)
{
	struct fixture fx;
	const struct ioacct_compare_series *s;
	size_t ones = 0;
	char *text;

	(void)state;
	job(&fx);
	own_log(&fx, false);
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_int_equal(fx.c->nmounts, 3);
	for (size_t i = 0; i < fx.c->nmounts; i++) {
		const struct ioacct_compare_mount *m = &fx.c->mounts[i];

		assert_true(m->in_ours);
		assert_int_equal(m->posix_records, 1);
		for (size_t k = 0; k < IOACCT_COMPARE_ROWS; k++) {
			const struct ioacct_compare_row *rw = &m->rows[k];

			assert_true(rw->name[0]);
			assert_true(rw->darshan_known);
			assert_true(rw->ours == rw->darshan);
			if (rw->ours == 0) {
				assert_true(isnan(rw->ratio));
			} else {
				assert_true(rw->ratio == 1.0);
				ones++;
			}
		}
	}
	assert_true(ones >= 15);
	assert_true(row(mount(fx.c, "/scratch"), "POSIX_BYTES_WRITTEN")->ours == 80.0 * MIB);
	assert_true(row(mount(fx.c, "/scratch"), "POSIX_OPENS")->ours == 3);

	s = &fx.c->series;
	assert_true(s->present);
	assert_int_equal(s->records, 1);
	assert_int_equal(s->width_ns, 2 * SEC);
	assert_int_equal(s->offset_ns, 0);
	assert_int_equal(s->nbins, 11);
	for (int d = 0; d < 2; d++) {
		for (size_t t = 0; t < s->nbins; t++)
			assert_true(s->ours[d][t] == s->darshan[d][t]);
		assert_true(s->mean_ours[d] == s->mean_darshan[d]);
		assert_true(s->rel_error[d] == 0);
	}
	assert_true(s->ours[IOACCT_DIR_WRITE][5] == 8 * MIB + 100000);

	text = render(fx.c);
	assert_non_null(strstr(text, "# mount: /scratch\tlustre\tours: yes\tDarshan: 1 POSIX record\n"));
	assert_non_null(strstr(text, "## What each side cannot see"));
	assert_non_null(strstr(text, "relative error (ours - Darshan) / Darshan: +0.0000%, ratio 1.000000\n"));
	assert_non_null(strstr(text, "POSIX_BYTES_WRITTEN"));
	assert_null(strstr(text, "inf"));
	/* Rows that are 0 on both sides are left out, and counted. */
	{
		const struct ioacct_compare_mount *m = mount(fx.c, "/scratch");
		size_t zero = 0;
		char line[96];

		for (size_t k = 0; k < IOACCT_COMPARE_ROWS; k++)
			zero += m->rows[k].ours == 0 && m->rows[k].darshan == 0;
		assert_true(zero > 0);
		assert_true(row(m, "POSIX_SIZE_READ_1G_PLUS")->ours == 0);
		snprintf(line, sizeof(line), "\n# %zu counter%s 0 on both sides left out "
			 "(--all-counters shows them)\n", zero, zero == 1 ? "" : "s");
		assert_non_null(strstr(text, line));
		assert_null(strstr(text, "POSIX_SIZE_READ_1G_PLUS"));
		free(text);
		fx.c->all_counters = true;
		text = render(fx.c);
		assert_non_null(strstr(text, "POSIX_SIZE_READ_1G_PLUS"));
		assert_null(strstr(text, "left out (--all-counters"));
	}
	free(text);
	done(&fx);
}

/* Darshan saw half the bytes written and no fsync; a counter it did not measure. */
static void test_differences(void **state)
{
	struct fixture fx;
	struct ioacct_darshan_record *rec;
	const struct ioacct_compare_mount *m;
	char *text;

	(void)state;
	job(&fx);
	own_log(&fx, false);
	for (size_t i = 0; i < fx.log->nrecs[IOACCT_DARSHAN_POSIX]; i++) {
		rec = &fx.log->recs[IOACCT_DARSHAN_POSIX][i];
		if (strcmp(ioacct_darshan_name_of(fx.log, rec->id), "/scratch") != 0)
			continue;
		rec->counters[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN] *= 2;
		rec->counters[IOACCT_DARSHAN_POSIX_FSYNCS] = 1;
		rec->counters[IOACCT_DARSHAN_POSIX_FDSYNCS] = 1;   /* added to FSYNCS */
		rec->counters[IOACCT_DARSHAN_POSIX_STATS] = -1;    /* not measured */
		rec->fcounters[IOACCT_DARSHAN_POSIX_F_READ_TIME] = 0;
	}
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	m = mount(fx.c, "/scratch");
	assert_true(row(m, "POSIX_BYTES_WRITTEN")->ratio == 0.5);
	assert_true(row(m, "POSIX_FSYNCS")->ratio == 1.0);
	assert_false(row(m, "POSIX_STATS")->darshan_known);
	assert_true(isnan(row(m, "POSIX_STATS")->ratio));
	assert_true(isinf(row(m, "POSIX_F_READ_TIME")->ratio));
	text = render(fx.c);
	assert_non_null(strstr(text, "0.500000"));
	assert_non_null(strstr(text, "n/a"));
	assert_non_null(strstr(text, "inf"));
	free(text);
	done(&fx);
}

/* The Darshan filter leaves /dev/shm out of ours; Darshan's own log has no such mount. */
static void test_filter(void **state)
{
	struct fixture fx;
	char *text;

	(void)state;
	job(&fx);
	own_log(&fx, true);
	fx.c = ioacct_compare_create(fx.r, fx.log, true, NULL);
	assert_non_null(fx.c);
	assert_int_equal(fx.c->nfiltered, 1);
	assert_string_equal(fx.c->filtered[0]->path, "/dev/shm");
	assert_int_equal(fx.c->nmounts, 2);
	for (int d = 0; d < 2; d++)
		assert_true(fx.c->series.rel_error[d] == 0);
	text = render(fx.c);
	assert_non_null(strstr(text, "--darshan-filter; ours leaves out mounts Darshan does not "
				     "record: /dev/shm (tmpfs)"));
	free(text);
	ioacct_compare_destroy(fx.c);

	/* Unfiltered against a filtered log: /dev/shm is ours only, its bytes an error. */
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_int_equal(fx.c->nmounts, 3);
	assert_int_equal(mount(fx.c, "/dev/shm")->posix_records, 0);
	assert_true(isinf(row(mount(fx.c, "/dev/shm"), "POSIX_WRITES")->ratio));
	assert_true(fx.c->series.rel_error[IOACCT_DIR_WRITE] > 0);
	done(&fx);
}

static void add_heatmap(struct ioacct_darshan_log *log, int64_t rank, double width, uint64_t nbins,
			int64_t bytes_per_bin)
{
	struct ioacct_darshan_heatmap *h;

	log->heatmaps = realloc(log->heatmaps, (log->nheatmaps + 1) * sizeof(*log->heatmaps));
	assert_non_null(log->heatmaps);
	h = &log->heatmaps[log->nheatmaps++];
	memset(h, 0, sizeof(*h));
	h->id = ioacct_darshan_hash("heatmap:POSIX", 13, 0);
	h->rank = rank;
	h->bin_width = width;
	h->nbins = nbins;
	h->read_bins = calloc(nbins, sizeof(int64_t));
	h->write_bins = calloc(nbins, sizeof(int64_t));
	assert_non_null(h->read_bins);
	assert_non_null(h->write_bins);
	for (uint64_t i = 0; i < nbins; i++)
		h->write_bins[i] = bytes_per_bin;
}

/*
 * Darshan: two ranks of 0.8 s bins starting 0.5 s after us; ours: 2 s bins.
 * Common width 2 s; every byte lands in the grid; bins that straddle two
 * grid bins are split by their overlap.
 */
static void test_resampling(void **state)
{
	struct fixture fx;
	const struct ioacct_compare_series *s;
	double total = 0;

	(void)state;
	job(&fx);
	own_log(&fx, false);
	for (size_t i = 0; i < fx.log->nheatmaps; i++) {
		free(fx.log->heatmaps[i].read_bins);
		free(fx.log->heatmaps[i].write_bins);
	}
	fx.log->nheatmaps = 0;
	add_heatmap(fx.log, 0, 0.8, 25, 1000);
	add_heatmap(fx.log, 1, 0.8, 25, 3000);
	fx.log->start_nsec += 500000000;
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	s = &fx.c->series;
	assert_int_equal(s->records, 2);
	assert_int_equal(s->darshan_width_ns, 800000000);
	assert_int_equal(s->width_ns, 2 * SEC);
	assert_int_equal(s->offset_ns, 500000000);
	assert_int_equal(s->origin_ns, 0);
	assert_int_equal(s->nbins, 11);   /* up to 0.5 + 25 * 0.8 = 20.5 s */
	for (size_t t = 0; t < s->nbins; t++)
		total += s->darshan[IOACCT_DIR_WRITE][t];
	assert_true(fabs(total - 25 * 4000) < 1e-6);
	/* Grid bin 0, [0, 2): Darshan bins [0.5, 1.3) and [1.3, 2.1), that one 0.7 / 0.8 of it. */
	assert_true(fabs(s->darshan[IOACCT_DIR_WRITE][0] - (4000 + 4000 * 0.7 / 0.8)) < 1e-6);
	assert_true(s->rel_error[IOACCT_DIR_READ] != s->rel_error[IOACCT_DIR_READ]); /* NaN */
	done(&fx);
}

/* --mount: both sides keep one mount; the heatmap stays whole. */
static void test_only_mount(void **state)
{
	struct fixture fx;
	char *text;

	(void)state;
	job(&fx);
	own_log(&fx, false);
	fx.c = ioacct_compare_create(fx.r, fx.log, false, "/scratch");
	assert_non_null(fx.c);
	assert_int_equal(fx.c->nmounts, 1);
	assert_true(row(mount(fx.c, "/scratch"), "POSIX_WRITES")->ratio == 1.0);
	text = render(fx.c);
	assert_non_null(strstr(text, "# only mount /scratch (--mount)"));
	free(text);
	done(&fx);
}

/* A log of another job: mounts of Darshan only, records of no known mount, no heatmap. */
static void test_other_log(void **state)
{
	struct fixture fx;
	struct ioacct_darshan_record *rec;
	char *text;

	(void)state;
	job(&fx);
	own_log(&fx, false);
	free(fx.log->mounts[1].path);
	fx.log->mounts[1].path = strdup("/gpfs");
	rec = &fx.log->recs[IOACCT_DARSHAN_POSIX][0];
	rec->id = 12345;   /* no name */
	for (size_t i = 0; i < fx.log->nheatmaps; i++) {
		free(fx.log->heatmaps[i].read_bins);
		free(fx.log->heatmaps[i].write_bins);
	}
	fx.log->nheatmaps = 0;
	fx.log->start_sec -= 30 * 86400;
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_false(fx.c->series.present);
	assert_false(mount(fx.c, "UNKNOWN")->in_ours);
	assert_int_equal(mount(fx.c, "UNKNOWN")->posix_records, 1);
	text = render(fx.c);
	assert_non_null(strstr(text, "no heatmap:POSIX records"));
	assert_non_null(strstr(text, "# mount: UNKNOWN\tUNKNOWN\tours: no I/O"));
	free(text);
	done(&fx);
}

/* Names are anyone's bytes: a mount path cannot forge a line of the comparison. */
static void test_hostile_names(void **state)
{
	struct fixture fx;
	struct jb *b = &fx.b;
	char *text;

	(void)state;
	memset(&fx, 0, sizeof(fx));
	jb_init(b, 2 * SEC, 4 * SEC);
	jb_mount(b, M_SCRATCH, "/x\ntotal_POSIX_BYTES_WRITTEN: 999999999999\n# y\xff", "t\x1b[31m\a");
	jb_step(b, 0, 0, 4 * SEC);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 1, 0, 4096, 1000);
	fx.r = ioacct_report_create(b->jd, NULL, NULL);
	assert_non_null(fx.r);
	own_log(&fx, false);
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	text = render(fx.c);
	assert_null(strstr(text, "\ntotal_POSIX_BYTES_WRITTEN: 999999999999"));
	assert_non_null(strstr(text, "# mount: /x\\ntotal_POSIX_BYTES_WRITTEN: 999999999999\\n# y\xef\xbf\xbd\t"
				     "t\\x1b[31m\\x07\t"));
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		assert_true(*p >= 0x20 || *p == '\n' || *p == '\t');
	free(text);
	done(&fx);
}

/* ---- per file (issue 26) ---- */

/* job()'s job with per-file records: /scratch/out of ranks 0 and 1, /scratch/in, /etc/passwd, /dev/shm/x. */
static void files_job(struct fixture *fx)
{
	struct jb *b = &fx->b;
	struct ioacct_file *f;

	job(fx);
	ioacct_report_destroy(fx->r);
	f = jb_file(b, 0, 0, M_SCRATCH, 8 << 20 | 1, 10, "/scratch/out");
	f->opens = 1;
	f->fsyncs = 2;
	f->meta_ns = 300100;
	jb_file_rw(f, false, 50, MIB, 5000, 0, 19 * (int64_t)SEC);
	f = jb_file(b, 0, 1, M_SCRATCH, 8 << 20 | 1, 10, "/scratch/out");
	f->opens = 1;
	jb_file_rw(f, false, 30, MIB, 3000, 0, 19 * (int64_t)SEC);
	f = jb_file(b, 0, -1, M_SCRATCH, 8 << 20 | 1, 11, "/scratch/in");
	f->opens = 1;
	jb_file_rw(f, true, 16, 65536, 777777, 20 * (int64_t)SEC, 21 * (int64_t)SEC);
	f = jb_file(b, 0, -1, M_ROOT, 8 << 20 | 2, 12, "/etc/passwd");
	f->stats = 20;
	f->meta_ns = 500;
	jb_file_rw(f, true, 3, 4096, 12345, 0, SEC);
	f = jb_file(b, 0, -1, M_SHM, 40, 13, "/dev/shm/x");
	jb_file_rw(f, false, 100, 1000, 5555, 10 * (int64_t)SEC, 12 * (int64_t)SEC);
	fx->r = ioacct_report_create(b->jd, NULL, NULL);
	assert_non_null(fx->r);
}

static const struct ioacct_compare_file *cfile(const struct ioacct_compare *c, const char *name)
{
	for (size_t i = 0; i < c->files.nfiles; i++)
		if (strcmp(c->files.files[i].name, name) == 0)
			return &c->files.files[i];
	fail_msg("no file %s in the comparison", name);
	return NULL;
}

/* A job with per-file records against its own log: every mount's row and every file the same. */
static void test_files_self(void **state)
{
	const struct ioacct_compare_file *cf;
	struct fixture fx;
	char *text;

	(void)state;
	files_job(&fx);
	own_log(&fx, false);
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_true(fx.c->fsync_meta);
	for (size_t i = 0; i < fx.c->nmounts; i++)
		for (size_t k = 0; k < IOACCT_COMPARE_ROWS; k++) {
			const struct ioacct_compare_row *rw = &fx.c->mounts[i].rows[k];

			assert_true(rw->darshan_known);
			/* Times are sums of the files' doubles: equal to the last bits. */
			if (rw->is_time)
				assert_true(fabs(rw->ours - rw->darshan) <= 1e-15 * rw->ours);
			else
				assert_true(rw->ours == rw->darshan);
		}
	/* fsync's time is metadata time on both sides. */
	assert_true(fabs(row(mount(fx.c, "/scratch"), "POSIX_F_META_TIME")->ours - 304000e-9) < 1e-18);
	assert_int_equal(mount(fx.c, "/scratch")->posix_records, 4);
	assert_true(fx.c->files.ours && fx.c->files.darshan);
	/* 4 files of ours, /etc/passwd's, and the rest of / and of /scratch. */
	assert_int_equal(fx.c->files.nfiles, 6);
	assert_int_equal(fx.c->files.both, 6);
	assert_int_equal(fx.c->files.same, 6);
	assert_int_equal(fx.c->files.ours_only + fx.c->files.darshan_only, 0);
	cf = cfile(fx.c, "/scratch/out");
	assert_int_equal(cf->ours_records, 2);
	assert_int_equal(cf->darshan_records, 2);
	assert_true(cf->ours[2] == 80 && cf->darshan[2] == 80);
	assert_true(cf->ours[7] == 80.0 * MIB && cf->ours[5] == 2);    /* BYTES_WRITTEN, FSYNCS */
	cf = cfile(fx.c, "/<ioacct: not per file>");
	assert_true(cf->ours[4] == 7 && cf->darshan[4] == 7);          /* STATS */
	text = render(fx.c);
	assert_non_null(strstr(text, "\n## Per file: ours vs Darshan's POSIX records of the same name"));
	assert_non_null(strstr(text, "\n# files: 6 on both sides (6 the same in every counter below), "
				     "0 ours only, 0 Darshan's only\n"));
	assert_null(strstr(text, "\n/scratch/out\t"));
	free(text);
	fx.c->all_counters = true;
	text = render(fx.c);
	assert_non_null(strstr(text, "\n/scratch/out\tPOSIX_WRITES\t80\t80\t+0\n"));
	free(text);
	done(&fx);
}

/* Darshan missed writes of one rank, and a record whose name it lost; a log of mounts alone. */
static void test_files_differences(void **state)
{
	struct ioacct_darshan_record *rec;
	struct fixture fx;
	char *text;

	(void)state;
	files_job(&fx);
	own_log(&fx, false);
	for (size_t i = 0; i < fx.log->nrecs[IOACCT_DARSHAN_POSIX]; i++) {
		rec = &fx.log->recs[IOACCT_DARSHAN_POSIX][i];
		if (!strcmp(ioacct_darshan_name_of(fx.log, rec->id), "/scratch/out") && rec->rank == 1)
			rec->counters[IOACCT_DARSHAN_POSIX_WRITES] = 20;
		else if (!strcmp(ioacct_darshan_name_of(fx.log, rec->id), "/scratch/in"))
			rec->id = 12345; /* in no name record */
	}
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_int_equal(fx.c->files.both, 5);
	assert_int_equal(fx.c->files.same, 4);
	assert_int_equal(fx.c->files.ours_only, 1);
	assert_int_equal(fx.c->files.darshan_only, 1);
	assert_false(cfile(fx.c, "/scratch/out")->same);
	assert_int_equal(cfile(fx.c, "/scratch/in")->darshan_records, 0);
	assert_int_equal(cfile(fx.c, "UNKNOWN")->ours_records, 0);
	text = render(fx.c);
	assert_non_null(strstr(text, "\n# files: 5 on both sides (4 the same in every counter below), "
				     "1 ours only, 1 Darshan's only\n"));
	assert_non_null(strstr(text, "\n/scratch/out\tPOSIX_WRITES\t80\t70\t+10\n"));
	assert_null(strstr(text, "\n/scratch/out\tPOSIX_OPENS"));
	assert_non_null(strstr(text, "\n/scratch/in\tPOSIX_READS\t16\t-\t-\n"));
	assert_non_null(strstr(text, "\nUNKNOWN\tPOSIX_BYTES_READ\t-\t1048576\t-\n"));
	free(text);
	ioacct_compare_destroy(fx.c);
	ioacct_darshan_free(fx.log);

	/* A log of the job's mounts alone (written before per-file records): nothing per file. */
	{
		struct ioacct_report *r;
		size_t nfiles = fx.b.jd->nfiles;

		fx.b.jd->nfiles = 0;
		r = fx.r;
		fx.r = ioacct_report_create(fx.b.jd, NULL, NULL);
		own_log(&fx, false);
		ioacct_report_destroy(fx.r);
		fx.r = r;
		fx.b.jd->nfiles = nfiles;
	}
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_false(fx.c->fsync_meta);
	assert_true(fx.c->files.ours);
	assert_false(fx.c->files.darshan);
	text = render(fx.c);
	assert_non_null(strstr(text, "# the Darshan log has no records of files (only of mounts)"));
	free(text);
	done(&fx);
}

/* A real Darshan log (Darshan 3.2, when ../shared is there): its files are Darshan's only. */
static void test_files_real_log(void **state)
{
	const char *env = getenv("IOACCT_DARSHAN_LOGS");
	char path[4096], err[512];
	struct ioacct_darshan_record total;
	struct fixture fx;
	double bytes = 0, reads = 0;
	size_t named = 0;
	char *text;

	(void)state;
	snprintf(path, sizeof(path), "%s/sample-dxt-simple.darshan",
		 env && *env ? env : DARSHAN_LOGS_DIR);
	if (access(path, R_OK) != 0)
		skip();
	files_job(&fx);
	fx.log = ioacct_darshan_read(path, err, sizeof(err));
	assert_non_null(fx.log);
	fx.c = ioacct_compare_create(fx.r, fx.log, false, NULL);
	assert_non_null(fx.c);
	assert_false(fx.c->fsync_meta);
	assert_true(fx.c->files.darshan);
	assert_int_equal(fx.c->files.both, 0);
	assert_int_equal(fx.c->files.ours_only, 6);
	for (size_t i = 0; i < fx.c->files.nfiles; i++) {
		const struct ioacct_compare_file *cf = &fx.c->files.files[i];

		named += cf->darshan_records;
		bytes += cf->darshan[7];
		reads += cf->darshan[1];
	}
	/* Every record is in one file, and the files add up to darshan-parser --total. */
	assert_int_equal(named, fx.log->nrecs[IOACCT_DARSHAN_POSIX]);
	ioacct_darshan_total(fx.log, IOACCT_DARSHAN_POSIX, &total);
	assert_true(bytes == (double)total.counters[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN]);
	assert_true(reads == (double)total.counters[IOACCT_DARSHAN_POSIX_READS]);
	assert_true(bytes == 4040);
	text = render(fx.c);
	assert_non_null(strstr(text, "0 on both sides (0 the same in every counter below), 6 ours only"));
	free(text);
	done(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_differences),
		cmocka_unit_test(test_files_self),
		cmocka_unit_test(test_files_differences),
		cmocka_unit_test(test_files_real_log),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_resampling),
		cmocka_unit_test(test_only_mount),
		cmocka_unit_test(test_other_log),
		cmocka_unit_test(test_hostile_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
