// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the report model (lib/report/report.c): sums over steps, the time
 * series merged per mount, bandwidth and IOPS min / max / mean, the
 * Darshan-named counters, and every advice rule, once firing and once not,
 * with its thresholds read from the configuration file.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "jobbuild.h"
#include "report.h"

#define SEC JB_SEC
#define MIB JB_MIB
#define KIB 1024ULL

enum { M_SCRATCH = 21, M_TMP = 22, M_PROC = 40 };

/* A 100 s job, 1 s bins, with a shared, a local and a pseudo mount. */
static void base(struct jb *b)
{
	jb_init(b, SEC, 100 * SEC);
	jb_mount(b, M_SCRATCH, "/scratch", "lustre");
	jb_mount(b, M_TMP, "/tmp", "ext4");
	jb_mount(b, M_PROC, "/proc", "proc");
	jb_step(b, 0, 0, 100 * SEC);
}

static struct ioacct_report *build(struct jb *b, const struct ioacct_advice_limits *lim)
{
	struct ioacct_report *r = ioacct_report_create(b->jd, lim, NULL);

	assert_non_null(r);
	return r;
}

static void done(struct jb *b, struct ioacct_report *r)
{
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b->jd);
}

/* The advice item of `rule`, on `mount` (NULL: any), or NULL. */
static const struct ioacct_advice *find(const struct ioacct_report *r, const char *rule,
					const char *mount)
{
	for (size_t i = 0; i < r->nadvice; i++) {
		const struct ioacct_advice *a = &r->advice[i];

		if (strcmp(a->rule, rule) != 0)
			continue;
		if (mount && (!a->mount || strcmp(a->mount->path, mount) != 0))
			continue;
		return a;
	}
	return NULL;
}

/* Runs the report on b and checks whether `rule` fired (at `level`) on `mount`. */
static void expect_rule(struct jb *b, const struct ioacct_advice_limits *lim, const char *rule,
			const char *mount, bool fires, enum ioacct_advice_level level)
{
	struct ioacct_report *r = build(b, lim);
	const struct ioacct_advice *a = find(r, rule, mount);

	if (fires) {
		if (!a)
			fail_msg("rule %s did not fire on %s", rule, mount ? mount : "the job");
		assert_int_equal(a->level, level);
		assert_true(strlen(a->message) > 10);
		assert_true(strlen(a->suggestion) > 10);
		assert_true(a->nvalues > 0 || level == IOACCT_ADVICE_OK);
	} else if (a) {
		fail_msg("rule %s fired: %s", rule, a->message);
	}
	done(b, r);
}

/* ---- the model ---- */

static void test_sums_and_merge(void **state)
{
	struct jb b;
	struct ioacct_report *r;
	const struct ioacct_report_mount *m;

	(void)state;
	jb_init(&b, SEC, 3500000000ULL); /* 3.5 s: 4 bins, the last one 0.5 s wide */
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_step(&b, 0, 0, 3 * SEC);
	jb_step(&b, 1, 0, 3 * SEC);
	/* Two steps and two ops land in the same bins: the merge sums them. */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 10, 0, 10 * MIB, 1000);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 2, 20, 0, 20 * MIB, 2000);
	jb_add(&b, 1, M_SCRATCH, IOACCT_OP_READ, 2, 10, 0, 10 * MIB, 3000);
	jb_add(&b, 1, M_SCRATCH, IOACCT_OP_READ, 3, 5, 0, 5 * MIB, 4000);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 2, 7, 2, 0, 500);
	jb_add(&b, 1, M_SCRATCH, IOACCT_OP_OPEN, 3, 4, 1, 0, 600);
	jb_add(&b, 1, M_SCRATCH, IOACCT_OP_CREATE, 3, 3, 0, 0, 0);
	r = build(&b, NULL);
	assert_int_equal(r->nbins, 4);
	assert_int_equal(r->last_width_ns, 500000000ULL);
	assert_int_equal(r->span_ns, 3500000000ULL);
	assert_int_equal(r->nmounts, 1);
	m = &r->mounts[0];
	assert_int_equal(m->op[IOACCT_OP_READ].bytes, 45 * MIB);
	assert_int_equal(m->op[IOACCT_OP_READ].calls, 45);
	assert_int_equal(m->calls, 45 + 7 + 4 + 3);
	assert_int_equal(m->errors, 3);
	assert_int_equal(m->meta_calls, 7 + 4); /* creates are opens, not counted twice */
	assert_int_equal(m->meta_ns, 500 + 600);
	assert_int_equal(m->ns, 1000 + 2000 + 3000 + 4000 + 500 + 600);
	/* Bins 0, 2, 3 have calls; bin 2 merges two steps and a stat. */
	assert_int_equal(m->nbins, 3);
	assert_int_equal(m->bins[0].bin, 0);
	assert_int_equal(m->bins[1].bin, 2);
	assert_int_equal(m->bins[1].bytes[IOACCT_DIR_READ], 30 * MIB);
	assert_int_equal(m->bins[1].calls[IOACCT_DIR_READ], 30);
	assert_int_equal(m->bins[1].meta, 7);
	assert_int_equal(m->bins[2].meta, 4);
	/* Rates: 10, 0, 30 MiB/s and 5 MiB in the last half second = 10 MiB/s. */
	assert_true(m->dir[IOACCT_DIR_READ].bw.min == 0);
	assert_true(m->dir[IOACCT_DIR_READ].bw.max == 30.0 * MIB);
	assert_int_equal(m->dir[IOACCT_DIR_READ].bw.max_bin, 2);
	assert_true(m->dir[IOACCT_DIR_READ].bw.mean == 45.0 * MIB / 3.5);
	assert_true(m->dir[IOACCT_DIR_READ].iops.max == 30.0);
	assert_true(m->dir[IOACCT_DIR_READ].iops.mean == 45 / 3.5);
	assert_true(m->dir[IOACCT_DIR_WRITE].bw.max == 0);
	assert_int_equal(m->dir[IOACCT_DIR_READ].bytes, 45 * MIB);
	/* Steps. */
	assert_int_equal(r->nsteps, 2);
	assert_int_equal(r->steps[0].op[IOACCT_OP_READ].bytes, 30 * MIB);
	assert_int_equal(r->steps[1].op[IOACCT_OP_READ].bytes, 15 * MIB);
	assert_int_equal(r->steps[1].meta_calls, 4);
	/* One mount: "all" is that mount. */
	assert_int_equal(r->all.op[IOACCT_OP_READ].bytes, 45 * MIB);
	assert_int_equal(r->all.nbins, 3);
	done(&b, r);
}

/* Every bin busy: min is the smallest bin, not 0. */
static void test_min_without_idle_bins(void **state)
{
	struct jb b;
	struct ioacct_report *r;

	(void)state;
	jb_init(&b, SEC, 2 * SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 0, 4, 0, 4 * MIB, 10);
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 1, 2, 0, 2 * MIB, 10);
	r = build(&b, NULL);
	assert_int_equal(r->nbins, 2);
	assert_int_equal(r->last_width_ns, SEC);
	assert_true(r->mounts[0].dir[IOACCT_DIR_WRITE].bw.min == 2.0 * MIB);
	assert_true(r->mounts[0].dir[IOACCT_DIR_WRITE].bw.max == 4.0 * MIB);
	assert_true(r->mounts[0].dir[IOACCT_DIR_WRITE].iops.min == 2.0);
	done(&b, r);
}

/* Bins past the recorded end (clocks) and a running job keep full-width bins. */
static void test_bins_past_end_and_running(void **state)
{
	struct jb b;
	struct ioacct_report *r;

	(void)state;
	jb_init(&b, 5 * SEC, 7 * SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 3, 1, 0, 100, 10);
	r = build(&b, NULL);
	assert_int_equal(r->nbins, 4);
	assert_int_equal(r->last_width_ns, 5 * SEC);
	assert_int_equal(r->span_ns, 20 * SEC);
	done(&b, r);

	jb_init(&b, 5 * SEC, 0);
	b.jd->job.end_ns = 0;
	ioacct_strlcpy(b.jd->job.state, "RUNNING", sizeof(b.jd->job.state));
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 1, 1, 0, 100, 10);
	r = build(&b, NULL);
	assert_int_equal(r->nbins, 2);
	assert_int_equal(r->span_ns, 10 * SEC);
	done(&b, r);
}

/* Series in any order: runs are split where bins go down, and still merge right. */
static void test_unordered_series(void **state)
{
	struct jb b;
	struct ioacct_report *r;

	(void)state;
	jb_init(&b, SEC, 10 * SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 5, 1, 0, 10, 1);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 1, 1, 0, 20, 1);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 9, 1, 0, 30, 1);
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 5, 1, 0, 40, 1);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 1, 1, 0, 50, 1);
	r = build(&b, NULL);
	assert_int_equal(r->mounts[0].nbins, 3);
	assert_int_equal(r->mounts[0].bins[0].bin, 1);
	assert_int_equal(r->mounts[0].bins[0].bytes[IOACCT_DIR_READ], 70);
	assert_int_equal(r->mounts[0].bins[1].bin, 5);
	assert_int_equal(r->mounts[0].bins[1].bytes[IOACCT_DIR_WRITE], 40);
	assert_int_equal(r->mounts[0].bins[2].bin, 9);
	done(&b, r);
}

static void test_mounts(void **state)
{
	struct jb b;
	struct ioacct_report *r;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1, 0, 10, 1);
	jb_add(&b, 0, 99, IOACCT_OP_STAT, 0, 2, 0, 0, 1);   /* not in the mount table */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 1, 3, 0, 30, 1);
	r = build(&b, NULL);
	/* /proc had no calls: left out; mnt 99 named mnt:99; mount-id order. */
	assert_int_equal(r->nmounts, 3);
	assert_string_equal(r->mounts[0].path, "/scratch");
	assert_int_equal(r->mounts[0].kind, IOACCT_FS_SHARED);
	assert_string_equal(r->mounts[1].path, "/tmp");
	assert_int_equal(r->mounts[1].kind, IOACCT_FS_LOCAL);
	assert_string_equal(r->mounts[2].path, "mnt:99");
	assert_string_equal(r->mounts[2].fstype, "unknown");
	assert_int_equal(r->mounts[2].kind, IOACCT_FS_UNKNOWN);
	assert_int_equal(r->mounts[2].nbins, 1);
	assert_int_equal(r->all.calls, 6);
	done(&b, r);

	/* Only one mount. */
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1, 0, 10, 1);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 1, 3, 0, 30, 1);
	r = ioacct_report_create(b.jd, NULL, "/tmp");
	assert_non_null(r);
	assert_int_equal(r->nmounts, 1);
	assert_string_equal(r->mounts[0].path, "/tmp");
	assert_int_equal(r->all.calls, 1);
	assert_int_equal(r->all.op[IOACCT_OP_WRITE].bytes, 0);
	assert_int_equal(r->steps[0].calls, 1);
	done(&b, r);

	assert_int_equal(ioacct_fs_kind_of("nfs4"), IOACCT_FS_SHARED);
	assert_int_equal(ioacct_fs_kind_of("tmpfs"), IOACCT_FS_LOCAL);
	assert_int_equal(ioacct_fs_kind_of("devtmpfs"), IOACCT_FS_PSEUDO);
	assert_int_equal(ioacct_fs_kind_of("weird"), IOACCT_FS_UNKNOWN);
}

static uint64_t counter(const struct ioacct_named_counter *c, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return c[i].value;
	fail_msg("no counter %s", name);
	return 0;
}

static void test_named_counters(void **state)
{
	struct ioacct_named_counter c[IOACCT_NAMED_COUNTERS];
	struct jb b;
	struct ioacct_report *r;
	size_t n, ndarshan = 0;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_OPEN, 0, 12, 2, 0, 100);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 9, 1, 8 * 4096, 200);
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 1, 3, 0, 3 * 2 * MIB, 300);
	jb_add(&b, 0, M_TMP, IOACCT_OP_STAT, 1, 5, 4, 0, 400);
	jb_add(&b, 0, M_TMP, IOACCT_OP_FSYNC, 1, 2, 0, 0, 500);
	jb_add(&b, 0, M_TMP, IOACCT_OP_RENAME, 1, 1, 1, 0, 600);
	r = build(&b, NULL);
	n = ioacct_report_counters(&r->mounts[0], c);
	assert_true(n <= IOACCT_NAMED_COUNTERS);
	for (size_t i = 0; i < n; i++)
		ndarshan += c[i].darshan;
	assert_int_equal(ndarshan, 8 + 20 + 3);
	/* Darshan counts successful calls. */
	assert_int_equal(counter(c, n, "POSIX_OPENS"), 10);
	assert_int_equal(counter(c, n, "POSIX_READS"), 8);
	assert_int_equal(counter(c, n, "POSIX_WRITES"), 3);
	assert_int_equal(counter(c, n, "POSIX_STATS"), 1);
	assert_int_equal(counter(c, n, "POSIX_FSYNCS"), 2);
	assert_int_equal(counter(c, n, "POSIX_BYTES_READ"), 8 * 4096);
	assert_int_equal(counter(c, n, "POSIX_BYTES_WRITTEN"), 6 * MIB);
	assert_int_equal(counter(c, n, "POSIX_SIZE_READ_1K_10K"), 8);
	assert_int_equal(counter(c, n, "POSIX_SIZE_WRITE_1M_4M"), 3);
	assert_int_equal(counter(c, n, "POSIX_SIZE_WRITE_1G_PLUS"), 0);
	assert_int_equal(counter(c, n, "POSIX_F_READ_TIME"), 200);
	/* Darshan's write time holds fsync's (500); META: open + stat + rename. */
	assert_int_equal(counter(c, n, "POSIX_F_WRITE_TIME"), 300 + 500);
	assert_int_equal(counter(c, n, "POSIX_F_META_TIME"), 100 + 400 + 600);
	assert_int_equal(counter(c, n, "IOACCT_RENAMES"), 0);
	assert_int_equal(counter(c, n, "IOACCT_RENAME_ERRORS"), 1);
	assert_int_equal(counter(c, n, "IOACCT_ERRORS"), 2 + 1 + 4 + 1);
	assert_int_equal(counter(c, n, "IOACCT_STAT_TIME_NS"), 400);
	/* The order reports print them in: Darshan's for its counters, then the operations'. */
	/* + 6 view, hint and io_uring counts, + 3 byte counters, + their 12 errors and times (issue 14) */
	/* + seeks: POSIX_SEEKS, its errors and its time (issue 26) */
	assert_int_equal(n, 61 + 6 + 3 + 12 + 3);
	assert_string_equal(c[0].name, "POSIX_OPENS");
	assert_string_equal(c[1].name, "POSIX_READS");
	assert_string_equal(c[2].name, "POSIX_WRITES");
	assert_string_equal(c[3].name, "POSIX_SEEKS");
	assert_string_equal(c[4].name, "POSIX_STATS");
	assert_string_equal(c[5].name, "POSIX_FSYNCS");
	assert_string_equal(c[6].name, "POSIX_BYTES_READ");
	assert_string_equal(c[30].name, "POSIX_F_META_TIME");
	assert_string_equal(c[31].name, "IOACCT_CREATES");
	assert_string_equal(c[32].name, "IOACCT_MKDIRS");
	assert_string_equal(c[33].name, "IOACCT_UNLINKS");
	assert_string_equal(c[34].name, "IOACCT_RMDIRS");
	assert_string_equal(c[35].name, "IOACCT_RENAMES");
	assert_string_equal(c[36].name, "IOACCT_MMAP_FAULTS");
	assert_string_equal(c[40].name, "IOACCT_MADVISES");
	assert_string_equal(c[41].name, "IOACCT_IO_URING_OPS");
	assert_string_equal(c[42].name, "IOACCT_MMAP_READ_BYTES");
	assert_string_equal(c[44].name, "IOACCT_READAHEAD_BYTES");
	assert_string_equal(c[45].name, "IOACCT_ERRORS");
	assert_string_equal(c[51].name, "IOACCT_READ_ERRORS");
	assert_string_equal(c[60].name, "IOACCT_STAT_ERRORS");
	assert_string_equal(c[68].name, "IOACCT_READ_TIME_NS");
	assert_string_equal(c[77].name, "IOACCT_STAT_TIME_NS");
	done(&b, r);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ioacct_size_bin_label(0), "0-100");
	assert_string_equal(ioacct_size_bin_label(1), "101-1K");
	assert_string_equal(ioacct_size_bin_label(9), "1G+");
	assert_null(ioacct_size_bin_label(10));
	assert_string_equal(ioacct_advice_level_name(IOACCT_ADVICE_HIGH), "HIGH");
	assert_string_equal(ioacct_advice_level_name(IOACCT_ADVICE_OK), "OK");
	assert_true(ioacct_op_is_meta(IOACCT_OP_FSYNC));
	assert_false(ioacct_op_is_meta(IOACCT_OP_CREATE));
	assert_false(ioacct_op_is_meta(IOACCT_OP_WRITE));
}

/* ---- advice rules: each fires once and once does not ---- */

static void test_small_requests(void **state)
{
	struct jb b;

	(void)state;
	base(&b); /* 2000 writes of 4 KiB */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2000, 0, 2000 * 4 * KIB, 10);
	expect_rule(&b, NULL, "small-requests", "/scratch", true, IOACCT_ADVICE_HIGH);

	base(&b); /* 1000 small ones: not more than 1000 */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 1000, 0, 1000 * 4 * KIB, 10);
	expect_rule(&b, NULL, "small-requests", NULL, false, 0);

	base(&b); /* 2000 of 4 MiB */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 2000, 0, 2000 * 4 * MIB, 10);
	expect_rule(&b, NULL, "small-requests", NULL, false, 0);

	base(&b); /* 20000 large and 1500 small: 7% */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 20000, 0, 20000 * 4 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 1, 1500, 0, 1500 * 4 * KIB, 10);
	expect_rule(&b, NULL, "small-requests", NULL, false, 0);
}

static void test_rw_intensive(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 100, 0, 100 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 10, 0, 10 * MIB, 10);
	expect_rule(&b, NULL, "read-intensive", NULL, true, IOACCT_ADVICE_INFO);

	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	expect_rule(&b, NULL, "write-intensive", NULL, true, IOACCT_ADVICE_INFO);

	base(&b); /* 52 / 48: 4% apart */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 52, 0, 52 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 48, 0, 48 * MIB, 10);
	expect_rule(&b, NULL, "read-intensive", NULL, false, 0);
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 52, 0, 52 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 48, 0, 48 * MIB, 10);
	expect_rule(&b, NULL, "write-intensive", NULL, false, 0);
}

static void test_meta_time(void **state)
{
	struct jb b;

	(void)state;
	base(&b); /* 2 s of stats, 1 s of reads: 67% */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 100, 0, 0, 2 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 100, 0, 100 * MIB, 1 * SEC);
	expect_rule(&b, NULL, "metadata-time", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* 31 s: HIGH whatever the share */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 100, 0, 0, 31 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 100, 0, 100 * MIB, 300 * SEC);
	expect_rule(&b, NULL, "metadata-time", "/scratch", true, IOACCT_ADVICE_HIGH);

	base(&b); /* a large share of little time */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 100, 0, 0, SEC / 2);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 100, 0, 100 * MIB, SEC / 10);
	expect_rule(&b, NULL, "metadata-time", NULL, false, 0);

	base(&b); /* 2 s of 12 s */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 100, 0, 0, 2 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 100, 0, 100 * MIB, 10 * SEC);
	expect_rule(&b, NULL, "metadata-time", NULL, false, 0);
}

static void test_meta_ops(void **state)
{
	struct jb b;

	(void)state;
	base(&b); /* 5000 opens and stats for 1 MiB */
	jb_add(&b, 0, M_TMP, IOACCT_OP_STAT, 0, 3000, 0, 0, 10);
	jb_add(&b, 0, M_TMP, IOACCT_OP_OPEN, 0, 2000, 0, 0, 10);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1, 0, MIB, 10);
	expect_rule(&b, NULL, "metadata-ops", "/tmp", true, IOACCT_ADVICE_WARN);

	base(&b); /* the same for 1 GiB: 4.9 per MiB */
	jb_add(&b, 0, M_TMP, IOACCT_OP_STAT, 0, 3000, 0, 0, 10);
	jb_add(&b, 0, M_TMP, IOACCT_OP_OPEN, 0, 2000, 0, 0, 10);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	expect_rule(&b, NULL, "metadata-ops", NULL, false, 0);

	base(&b); /* few: 999 with no data */
	jb_add(&b, 0, M_TMP, IOACCT_OP_STAT, 0, 999, 0, 0, 10);
	expect_rule(&b, NULL, "metadata-ops", NULL, false, 0);

	base(&b); /* pseudo file systems are not advised on */
	jb_add(&b, 0, M_PROC, IOACCT_OP_STAT, 0, 50000, 0, 0, 10);
	expect_rule(&b, NULL, "metadata-ops", NULL, false, 0);
}

static void test_fsync(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 200, 0, 200 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_FSYNC, 0, 200, 0, 0, 10);
	expect_rule(&b, NULL, "fsync-storm", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* 2% of the writes */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 10000, 0, 10000 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_FSYNC, 0, 200, 0, 0, 10);
	expect_rule(&b, NULL, "fsync-storm", NULL, false, 0);

	base(&b); /* few */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 50, 0, 50 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_FSYNC, 0, 50, 0, 0, 10);
	expect_rule(&b, NULL, "fsync-storm", NULL, false, 0);
}

static void test_tiny_files(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 2000, 0, 0, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_CREATE, 0, 2000, 0, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2000, 0, 2000 * 4 * KIB, 10);
	expect_rule(&b, NULL, "tiny-files", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* 1 MiB each */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_CREATE, 0, 2000, 0, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2000, 0, 2000 * MIB, 10);
	expect_rule(&b, NULL, "tiny-files", NULL, false, 0);

	base(&b); /* few */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_CREATE, 0, 999, 0, 0, 0);
	expect_rule(&b, NULL, "tiny-files", NULL, false, 0);
}

static void test_bursts(void **state)
{
	struct jb b;

	(void)state;
	base(&b); /* 1 GiB in one second of 100 */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 1, 0, 10 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 50, 256, 0, 1024 * MIB, 10);
	expect_rule(&b, NULL, "bursts", "/scratch", true, IOACCT_ADVICE_INFO);

	base(&b); /* steady */
	for (uint32_t i = 0; i < 100; i++)
		jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, i, 256, 0, 1024 * MIB, 10);
	expect_rule(&b, NULL, "bursts", NULL, false, 0);

	base(&b); /* a burst, but a slow one: peak 50 MiB/s */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 50, 50, 0, 50 * MIB, 10);
	expect_rule(&b, NULL, "bursts", NULL, false, 0);
}

static void test_shared_metadata(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 20000, 0, 0, 10);
	expect_rule(&b, NULL, "shared-metadata", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* the same on a local file system */
	jb_add(&b, 0, M_TMP, IOACCT_OP_STAT, 0, 20000, 0, 0, 10);
	expect_rule(&b, NULL, "shared-metadata", NULL, false, 0);

	base(&b); /* few */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 9999, 0, 0, 10);
	expect_rule(&b, NULL, "shared-metadata", NULL, false, 0);
}

static void test_node_local(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 10, 0, 10 * MIB, 10);
	expect_rule(&b, NULL, "node-local", NULL, true, IOACCT_ADVICE_INFO);

	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 0, 10, 0, 10 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	expect_rule(&b, NULL, "node-local", NULL, false, 0);
}

static void test_step_imbalance(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_step(&b, 1, 0, 100 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	jb_add(&b, 1, M_SCRATCH, IOACCT_OP_WRITE, 0, 10, 0, 10 * MIB, 10);
	expect_rule(&b, NULL, "step-imbalance", NULL, true, IOACCT_ADVICE_INFO);

	base(&b); /* 5% apart */
	jb_step(&b, 1, 0, 100 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	jb_add(&b, 1, M_SCRATCH, IOACCT_OP_WRITE, 0, 95, 0, 95 * MIB, 10);
	expect_rule(&b, NULL, "step-imbalance", NULL, false, 0);

	base(&b); /* the batch script is not a step like the others */
	jb_step(&b, IOACCT_STEP_BATCH, 0, 100 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	jb_add(&b, IOACCT_STEP_BATCH, M_SCRATCH, IOACCT_OP_WRITE, 0, 1, 0, MIB, 10);
	expect_rule(&b, NULL, "step-imbalance", NULL, false, 0);
}

/* A synthetic 3-node job from the cluster store: NS1..NS3 seconds in I/O on n1..n3. */
static void three_nodes(struct jb *b, uint64_t ns1, uint64_t ns2, uint64_t ns3)
{
	const uint64_t ns[3] = { ns1, ns2, ns3 };

	base(b);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 30, 0, 30 * MIB, ns1 + ns2 + ns3);
	b->jd->nodes = calloc(3, sizeof(*b->jd->nodes));
	assert_non_null(b->jd->nodes);
	b->jd->nnodes = 3;
	for (size_t i = 0; i < 3; i++) {
		snprintf(b->jd->nodes[i].node, sizeof(b->jd->nodes[i].node), "n%zu", i + 1);
		b->jd->nodes[i].start_ns = b->jd->job.start_ns + (int64_t)i;
		b->jd->nodes[i].write_bytes = 10 * MIB;
		b->jd->nodes[i].writes = 10;
		b->jd->nodes[i].ns = ns[i];
	}
}

static void test_node_imbalance(void **state)
{
	struct ioacct_advice_limits lim;
	struct ioacct_report *r;
	const struct ioacct_advice *a;
	struct jb b;

	(void)state;
	/* Mean 40 s, n3 60 s: 50% over, above the default 25%; named. */
	three_nodes(&b, 30 * SEC, 30 * SEC, 60 * SEC);
	r = build(&b, NULL);
	a = find(r, "node-imbalance", NULL);
	assert_non_null(a);
	assert_int_equal(a->level, IOACCT_ADVICE_WARN);
	assert_non_null(strstr(a->message, "Node n3 spent 60.000 s"));
	assert_non_null(strstr(a->message, "50.0% more than the mean of the job's 3 nodes (40.000 s)"));
	done(&b, r);
	/* Exactly 25% over the mean (max 50, mean 40): not above. */
	three_nodes(&b, 35 * SEC, 35 * SEC, 50 * SEC);
	expect_rule(&b, NULL, "node-imbalance", NULL, false, 0);
	/* One nanosecond more: above. */
	three_nodes(&b, 35 * SEC, 35 * SEC - 2, 50 * SEC + 2);
	expect_rule(&b, NULL, "node-imbalance", NULL, true, IOACCT_ADVICE_WARN);
	/* The threshold from the configuration. */
	ioacct_advice_limits_defaults(&lim);
	lim.node_imbalance = 60;
	three_nodes(&b, 30 * SEC, 30 * SEC, 60 * SEC);
	expect_rule(&b, &lim, "node-imbalance", NULL, false, 0);
	/* One node (no node parts), or no I/O time: nothing to compare. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 30, 0, 30 * MIB, 10);
	expect_rule(&b, NULL, "node-imbalance", NULL, false, 0);
	three_nodes(&b, 0, 0, 0);
	expect_rule(&b, NULL, "node-imbalance", NULL, false, 0);
}

static void test_dropped(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	b.jd->job.dropped_events = 5;
	b.jd->job.dropped_bytes = 4096;
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "dropped-events", NULL, true, IOACCT_ADVICE_HIGH);

	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "dropped-events", NULL, false, 0);
}

/* The last sample jb_add() stored (and its total) gets failed calls per class. */
static void classify(struct jb *b, uint64_t notfound, uint64_t access, uint64_t space, uint64_t io,
		     uint64_t other)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_sample *s = &jd->series[jd->nseries - 1];
	const uint64_t cls[IOACCT_NR_ERR_CLASSES] = { notfound, access, space, io, other };

	for (size_t i = 0; i < jd->ntotals; i++) {
		struct ioacct_sample *t = &jd->totals[i];

		if (t->step_id != s->step_id || t->mnt_id != s->mnt_id || t->op != s->op)
			continue;
		for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++) {
			assert_true(s->c.errclass[k] == 0);
			t->c.errclass[k] += cls[k];
		}
	}
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
		s->c.errclass[k] = cls[k];
}

/* Real errors are flagged by what they mean; lookups that found nothing never are. */
static void test_errors(void **state)
{
	struct ioacct_report *r;
	const struct ioacct_advice *a;
	struct jb b;

	(void)state;
	/* 5000 ENOENT opens and stats: not errors, and below advice_notfound_min. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 3000, 3000, 0, 10);
	classify(&b, 3000, 0, 0, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 2000, 2000, 0, 10);
	classify(&b, 2000, 0, 0, 0, 0);
	r = build(&b, NULL);
	assert_null(find(r, "errors", NULL));
	assert_null(find(r, "notfound-lookups", NULL));
	assert_int_equal(r->all.errors, 5000);
	assert_int_equal(r->all.errclass[IOACCT_ERR_NOTFOUND], 5000);
	assert_int_equal(ioacct_report_real_errors(r->all.errors, r->all.errclass), 0);
	assert_int_equal(r->all.unclassified, 0);
	done(&b, r);

	/* 12000 of them: an INFO note, still no error. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 14000, 12000, 0, 10);
	classify(&b, 12000, 0, 0, 0, 0);
	r = build(&b, NULL);
	assert_null(find(r, "errors", NULL));
	a = find(r, "notfound-lookups", "/scratch");
	assert_non_null(a);
	assert_int_equal(a->level, IOACCT_ADVICE_INFO);
	assert_string_equal(a->values[0].name, "notfound");
	assert_int_equal(a->values[0].u, 12000);
	assert_int_equal(a->values[1].u, 14000);
	assert_int_equal(a->thresholds[0].u, 10000);
	done(&b, r);

	/* No space and I/O errors: HIGH, with every class counted. */
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 0, 10, 4, 6 * 4096, 10);
	classify(&b, 0, 0, 3, 1, 0);
	jb_add(&b, 0, M_TMP, IOACCT_OP_OPEN, 0, 10, 7, 0, 10);
	classify(&b, 5, 2, 0, 0, 0);
	r = build(&b, NULL);
	a = find(r, "errors", "/tmp");
	assert_non_null(a);
	assert_int_equal(a->level, IOACCT_ADVICE_HIGH);
	assert_int_equal(a->values[0].u, 6); /* real errors */
	assert_int_equal(a->values[1].u, 3); /* space */
	assert_int_equal(a->values[2].u, 1); /* io */
	assert_int_equal(a->values[3].u, 2); /* access */
	assert_int_equal(a->values[4].u, 0); /* other */
	assert_non_null(strstr(a->message, "/tmp: 6 calls failed with real errors: 3 out of space"));
	assert_null(strstr(a->message, "5 lookups"));
	done(&b, r);

	/* Permission denied: WARN. Other failures alone (EEXIST ...): INFO. */
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_OPEN, 0, 10, 2, 0, 10);
	classify(&b, 0, 2, 0, 0, 0);
	expect_rule(&b, NULL, "errors", "/tmp", true, IOACCT_ADVICE_WARN);
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_MKDIR, 0, 10, 2, 0, 10);
	classify(&b, 0, 0, 0, 0, 2);
	expect_rule(&b, NULL, "errors", "/tmp", true, IOACCT_ADVICE_INFO);

	/* A job stored before errors were classified: its failures are unclassified, WARN. */
	base(&b);
	jb_add(&b, 0, M_TMP, IOACCT_OP_OPEN, 0, 10, 3, 0, 10);
	r = build(&b, NULL);
	assert_int_equal(r->all.unclassified, 3);
	assert_int_equal(ioacct_report_real_errors(r->all.errors, r->all.errclass), 3);
	a = find(r, "errors", "/tmp");
	assert_non_null(a);
	assert_int_equal(a->level, IOACCT_ADVICE_WARN);
	assert_non_null(strstr(a->message, "not classified"));
	assert_non_null(strstr(a->suggestion, "before ioacct classified errors"));
	done(&b, r);

	/* Pseudo file systems are left alone. */
	base(&b);
	jb_add(&b, 0, M_PROC, IOACCT_OP_OPEN, 0, 10, 2, 0, 10);
	classify(&b, 0, 2, 0, 0, 0);
	expect_rule(&b, NULL, "errors", NULL, false, 0);
}

static void test_ok_and_order(void **state)
{
	struct jb b;
	struct ioacct_report *r;

	(void)state;
	/* A quiet job: one OK item, which is also the only one. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_STAT, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "ok", NULL, true, IOACCT_ADVICE_OK);

	/* An INFO alone still gets the OK. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 100, 0, 100 * MIB, 10);
	expect_rule(&b, NULL, "ok", NULL, true, IOACCT_ADVICE_OK);

	/* A WARN and a HIGH: no OK, most severe first. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 200, 0, 200 * MIB, 10);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_FSYNC, 0, 200, 0, 0, 10);
	b.jd->job.dropped_events = 1;
	r = build(&b, NULL);
	assert_null(find(r, "ok", NULL));
	assert_true(r->nadvice >= 3);
	for (size_t i = 1; i < r->nadvice; i++)
		assert_true(r->advice[i - 1].level >= r->advice[i].level);
	assert_string_equal(r->advice[0].rule, "dropped-events");
	done(&b, r);
}

/* ---- thresholds from the configuration file ---- */

static void load(struct ioacct_config *cfg, const char *text, int expect, const char *msg)
{
	char path[] = "/tmp/test_report.XXXXXX", err[2048];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ioacct_config_defaults(cfg);
	assert_int_equal(ioacct_config_load(cfg, path, err, sizeof(err)), expect);
	if (msg && !strstr(err, msg))
		fail_msg("message \"%s\" lacks \"%s\"", err, msg);
	unlink(path);
}


/* ---- the page-cache and mmap views (issue 14) ---- */

static void test_hit_ratio(void **state)
{
	(void)state;
	assert_true(ioacct_hit_ratio(0, 0) < 0);
	assert_true(ioacct_hit_ratio(100, 0) == 1.0);
	assert_true(ioacct_hit_ratio(100, 25) == 0.75);
	assert_true(ioacct_hit_ratio(100, 400) == 0.0);
	assert_string_equal(ioacct_hint_name(IOACCT_HINT_SEQUENTIAL), "sequential");
	assert_string_equal(ioacct_hint_name(IOACCT_HINT_OTHER), "other");
	assert_null(ioacct_hint_name(IOACCT_NR_HINTS));
	assert_true(ioacct_probe_has_view("tracepoint views=cache,mmap,readahead", "cache"));
	assert_true(ioacct_probe_has_view("tracepoint views=cache,mmap,readahead", "readahead"));
	assert_true(ioacct_probe_has_view("fentry views=mmap", "mmap"));
	assert_false(ioacct_probe_has_view("fentry views=mmap", "cache"));
	assert_false(ioacct_probe_has_view("tracepoint views=none", "cache"));
	assert_false(ioacct_probe_has_view("tracepoint views=cachex", "cache"));
	assert_false(ioacct_probe_has_view("tracepoint", "cache"));
	/* The RPC word (issue 40) is written before the views; a word after them is no view. */
	assert_true(ioacct_probe_has_view("fentry files=off rpc=sunrpc views=cache,uring", "uring"));
	assert_true(ioacct_probe_files_off("fentry files=off rpc=sunrpc views=cache,uring"));
	assert_true(ioacct_probe_has_view("fentry views=cache,uring rpc=sunrpc", "uring"));
	assert_false(ioacct_probe_has_view("fentry views=cache,uring rpc=sunrpc", "rpc=sunrpc"));
	assert_false(ioacct_probe_has_view("fentry views=cache rpc=off:no-sunrpc", "no-sunrpc"));
	assert_null(ioacct_probe_views("tracepoint"));
	{
		char b[32];

		assert_string_equal(ioacct_probe_rpc("fentry rpc=sunrpc views=cache", b, sizeof(b)), "sunrpc");
		assert_string_equal(ioacct_probe_rpc("fentry views=cache rpc=off:no-sunrpc", b, sizeof(b)),
				    "off:no-sunrpc");
		assert_string_equal(ioacct_probe_rpc("rpc=off:load-failed", b, sizeof(b)), "off:load-failed");
		assert_null(ioacct_probe_rpc("tracepoint views=cache,mmap", b, sizeof(b)));
		assert_null(ioacct_probe_rpc("tracepoint xrpc=sunrpc", b, sizeof(b)));
	}
	/* mmap bytes measured (issue 29): with "mmap", or by a job older than the views. */
	assert_null(ioacct_probe_mmap_unmeasured("fentry views=cache,mmap,readahead"));
	assert_null(ioacct_probe_mmap_unmeasured("tracepoint"));
	assert_non_null(strstr(ioacct_probe_mmap_unmeasured("tracepoint views=cache,mmap-nohook"),
			       "no fentry nor kprobe"));
	assert_false(ioacct_probe_has_view("tracepoint views=cache,mmap-nohook", "mmap"));
	assert_non_null(strstr(ioacct_probe_mmap_unmeasured("tracepoint views=none"), "view was off"));
}

static void test_low_hit_sequential(void **state)
{
	struct jb b;

	(void)state;
	/* 1 GiB read sequentially, 900 MiB of it from storage. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 900 * 256, 900 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 50, 800 * MIB, 1, 49);
	expect_rule(&b, NULL, "low-hit-ratio-sequential", "/scratch", true, IOACCT_ADVICE_INFO);

	base(&b); /* the program said so already */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 900 * 256, 900 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 50, 800 * MIB, 1, 49);
	jb_view(&b, M_SCRATCH, IOACCT_OP_FADVISE, 1, 0, IOACCT_HINT_SEQUENTIAL, 1);
	expect_rule(&b, NULL, "low-hit-ratio-sequential", NULL, false, 0);

	base(&b); /* not sequential: no asynchronous readahead */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 900 * 256, 900 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 50, 0, 0, 50);
	expect_rule(&b, NULL, "low-hit-ratio-sequential", NULL, false, 0);

	base(&b); /* from the cache: 90% hits */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 100 * 256, 100 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 50, 80 * MIB, 1, 49);
	expect_rule(&b, NULL, "low-hit-ratio-sequential", NULL, false, 0);

	base(&b); /* too little to matter: 32 MiB */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 32, 0, 32 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 32 * 256, 32 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 5, 30 * MIB, 1, 4);
	expect_rule(&b, NULL, "low-hit-ratio-sequential", NULL, false, 0);
}

static void test_readahead_unused(void **state)
{
	struct jb b;

	(void)state;
	/* 100 MiB read, 400 MiB brought in: 300 MiB of readahead never read. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 25600, 0, 100 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 400 * 256, 400 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 25000, 350 * MIB, 0, 25000);
	expect_rule(&b, NULL, "readahead-unused", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* 110 MiB brought in for 100 MiB read: 9% */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 25600, 0, 100 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 110 * 256, 110 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_READAHEAD, 100, 60 * MIB, 0, 100);
	expect_rule(&b, NULL, "readahead-unused", NULL, false, 0);

	base(&b); /* no readahead at all (O_DIRECT-like misses): not readahead's fault */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 25600, 0, 100 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 400 * 256, 400 * MIB, 0, 0);
	expect_rule(&b, NULL, "readahead-unused", NULL, false, 0);
}

static void test_random_mmap(void **state)
{
	struct jb b;

	(void)state;
	/* 100000 faults of one page each, 390 MiB from storage. */
	base(&b);
	jb_view(&b, M_SCRATCH, IOACCT_OP_MMAP_FAULT, 100000, 100000 * 4 * KIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 100000, 100000 * 4 * KIB, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "random-mmap-faults", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* sequential: fault-around maps 16 pages a fault */
	jb_view(&b, M_SCRATCH, IOACCT_OP_MMAP_FAULT, 100000, 100000 * 64 * KIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 100000, 100000 * 4 * KIB, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "random-mmap-faults", NULL, false, 0);

	base(&b); /* random, but the program said so */
	jb_view(&b, M_SCRATCH, IOACCT_OP_MMAP_FAULT, 100000, 100000 * 4 * KIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 100000, 100000 * 4 * KIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_MADVISE, 1, 0, IOACCT_HINT_RANDOM, 1);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "random-mmap-faults", NULL, false, 0);

	base(&b); /* random, but the bytes mapped were not measured (issue 29): silent */
	ioacct_strlcpy(b.jd->job.probe_mode, "tracepoint views=cache,mmap-nohook", sizeof(b.jd->job.probe_mode));
	jb_view(&b, M_SCRATCH, IOACCT_OP_MMAP_FAULT, 100000, 0, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 100000, 100000 * 4 * KIB, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "random-mmap-faults", NULL, false, 0);

	base(&b); /* the same, measured: it fires */
	ioacct_strlcpy(b.jd->job.probe_mode, "fentry views=cache,mmap", sizeof(b.jd->job.probe_mode));
	jb_view(&b, M_SCRATCH, IOACCT_OP_MMAP_FAULT, 100000, 100000 * 4 * KIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 100000, 100000 * 4 * KIB, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "random-mmap-faults", "/scratch", true, IOACCT_ADVICE_WARN);

	base(&b); /* random, all from the cache */
	jb_view(&b, M_SCRATCH, IOACCT_OP_MMAP_FAULT, 100000, 100000 * 4 * KIB, 0, 0);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 1, 0, 0, 10);
	expect_rule(&b, NULL, "random-mmap-faults", NULL, false, 0);
}

static void test_reread(void **state)
{
	struct jb b;

	(void)state;
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 1024 * 256, 1024 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_FADVISE, 4, 0, IOACCT_HINT_DONTNEED, 4);
	expect_rule(&b, NULL, "reread-from-storage", "/scratch", true, IOACCT_ADVICE_INFO);

	base(&b); /* no page dropped */
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 1024, 0, 1024 * MIB, 10);
	jb_view(&b, M_SCRATCH, IOACCT_OP_CACHE_FILL, 1024 * 256, 1024 * MIB, 0, 0);
	jb_view(&b, M_SCRATCH, IOACCT_OP_FADVISE, 4, 0, IOACCT_HINT_WILLNEED, 4);
	expect_rule(&b, NULL, "reread-from-storage", NULL, false, 0);
}

static void test_config_keys(void **state)
{
	struct ioacct_advice_limits def;
	struct ioacct_config cfg;
	struct jb b;

	(void)state;
	ioacct_advice_limits_defaults(&def);
	ioacct_config_defaults(&cfg);
	assert_memory_equal(&cfg.advice, &def, sizeof(def));
	load(&cfg,
	     "advice_small_requests_share = 50\n"
	     "advice_small_requests_min = 5000\n"
	     "advice_rw_intensive_share = 20\n"
	     "advice_meta_time_share = 40\n"
	     "advice_meta_time_min = 0.5\n"
	     "advice_meta_time_high = 60\n"
	     "advice_meta_ops_per_mib = 10\n"
	     "advice_meta_ops_min = 100\n"
	     "advice_fsync_min = 10\n"
	     "advice_fsync_write_share = 50\n"
	     "advice_tiny_files_min = 10\n"
	     "advice_tiny_file_size = 4096\n"
	     "advice_burst_ratio = 5\n"
	     "advice_burst_min_bandwidth = 10\n"
	     "advice_shared_meta_ops = 500\n"
	     "advice_local_share = 90\n"
	     "advice_step_imbalance = 30\n"
	     "advice_notfound_min = 50\n",
	     0, NULL);
	assert_int_equal(cfg.advice.small_share, 50);
	assert_int_equal(cfg.advice.small_min, 5000);
	assert_int_equal(cfg.advice.rw_share, 20);
	assert_int_equal(cfg.advice.meta_share, 40);
	assert_int_equal(cfg.advice.meta_min_ns, SEC / 2);
	assert_int_equal(cfg.advice.meta_high_ns, 60 * SEC);
	assert_int_equal(cfg.advice.meta_per_mib, 10);
	assert_int_equal(cfg.advice.meta_ops_min, 100);
	assert_int_equal(cfg.advice.fsync_min, 10);
	assert_int_equal(cfg.advice.fsync_share, 50);
	assert_int_equal(cfg.advice.tiny_files_min, 10);
	assert_int_equal(cfg.advice.tiny_file_size, 4096);
	assert_int_equal(cfg.advice.burst_ratio, 5);
	assert_int_equal(cfg.advice.burst_min_mibps, 10);
	assert_int_equal(cfg.advice.shared_meta_ops, 500);
	assert_int_equal(cfg.advice.local_share, 90);
	assert_int_equal(cfg.advice.step_imbalance, 30);
	assert_int_equal(cfg.advice.notfound_min, 50);

	/* The rules use them: 2000 small writes are fewer than 5000. */
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2000, 0, 2000 * 4 * KIB, 10);
	expect_rule(&b, &cfg.advice, "small-requests", NULL, false, 0);
	base(&b);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 6000, 0, 6000 * 4 * KIB, 10);
	expect_rule(&b, &cfg.advice, "small-requests", "/scratch", true, IOACCT_ADVICE_HIGH);

	load(&cfg, "advice_small_requests_share = 101\n", -EINVAL,
	     "advice_small_requests_share: \"101\" is out of range (0 .. 100)");
	load(&cfg, "advice_burst_ratio = 1\n", -EINVAL,
	     "advice_burst_ratio: \"1\" is out of range (2 .. 1000000)");
	load(&cfg, "advice_meta_time_high = 1h\n", -EINVAL,
	     "advice_meta_time_high: \"1h\" is not a number of seconds");
	load(&cfg, "advice_tiny_file_size = -1\n", -EINVAL,
	     "advice_tiny_file_size: \"-1\" is not a decimal whole number");
}

/* The shipped etc/ioacct.conf and ioacct.conf(5) name every advice key. */
static void test_keys_documented(void **state)
{
	static const char *const keys[] = {
		"advice_small_requests_share", "advice_small_requests_min", "advice_rw_intensive_share",
		"advice_meta_time_share", "advice_meta_time_min", "advice_meta_time_high",
		"advice_meta_ops_per_mib", "advice_meta_ops_min", "advice_fsync_min",
		"advice_fsync_write_share", "advice_tiny_files_min", "advice_tiny_file_size",
		"advice_burst_ratio", "advice_burst_min_bandwidth", "advice_shared_meta_ops",
		"advice_local_share", "advice_step_imbalance", "advice_notfound_min",
		"advice_node_imbalance", "advice_pcache_min", "advice_hit_ratio",
		"advice_readahead_waste", "advice_mmap_faults_min", "advice_file_writes_min",
		"advice_file_small_write", "advice_file_reread", "advice_file_reread_min",
		"advice_file_reads_min", "advice_file_random_share", "advice_file_random_size",
		"advice_rpc_attr_min", "advice_rpc_writes_min", "advice_rpc_small_write",
	};
	static const char *const files[] = { "/../../etc/ioacct.conf", "/../../docs/man/ioacct.conf.5" };
	struct ioacct_config cfg;

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		char path[PATH_MAX], *text;
		FILE *fp;
		long n;

		snprintf(path, sizeof(path), "%s%s", TEST_SRCDIR, files[f]);
		fp = fopen(path, "re");
		assert_non_null(fp);
		assert_int_equal(fseek(fp, 0, SEEK_END), 0);
		n = ftell(fp);
		rewind(fp);
		text = calloc(1, (size_t)n + 1);
		assert_non_null(text);
		assert_int_equal(fread(text, 1, (size_t)n, fp), (size_t)n);
		fclose(fp);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			char want[96];

			/* conf: "#key = default"; man page: ".BI \"key = \" ..." */
			snprintf(want, sizeof(want), f == 0 ? "#%s = " : "%s = ", keys[k]);
			if (!strstr(text, want))
				fail_msg("%s lacks %s", path, want);
			ioacct_config_defaults(&cfg);
			assert_int_not_equal(ioacct_config_set(&cfg, keys[k], "1", NULL, 0), -ENOENT);
		}
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums_and_merge),
		cmocka_unit_test(test_min_without_idle_bins),
		cmocka_unit_test(test_bins_past_end_and_running),
		cmocka_unit_test(test_unordered_series),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_named_counters),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_small_requests),
		cmocka_unit_test(test_rw_intensive),
		cmocka_unit_test(test_meta_time),
		cmocka_unit_test(test_meta_ops),
		cmocka_unit_test(test_fsync),
		cmocka_unit_test(test_hit_ratio),
		cmocka_unit_test(test_low_hit_sequential),
		cmocka_unit_test(test_readahead_unused),
		cmocka_unit_test(test_random_mmap),
		cmocka_unit_test(test_reread),
		cmocka_unit_test(test_tiny_files),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_shared_metadata),
		cmocka_unit_test(test_node_local),
		cmocka_unit_test(test_step_imbalance),
		cmocka_unit_test(test_node_imbalance),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_ok_and_order),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_keys_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
