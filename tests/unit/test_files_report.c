// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The per-file part of the report (issue 26) on a job built in memory:
 *   - the model: records summed per file, the rank that moved most, the
 *     order (bytes moved, then time), "other files" and the partial flag,
 *     a report of one mount keeping that mount's files alone;
 *   - each advice rule that names a file, fired and held back at its
 *     thresholds, exactly, with the limits the configuration gives;
 *   - the renderers: the text's Top files rows, JSON's records, the HTML's
 *     tables and ioreport --files, with their exact numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobbuild.h"
#include "model.h"
#include "render.h"
#include "rendercheck.h"
#include "report.h"

#define SEC JB_SEC
#define MIB JB_MIB
#define GIB (1024 * MIB)
enum { M_SCRATCH = 21, M_TMP = 22 };
#define DEV_SDA1 ((8u << 20) | 1u)
#define DEV_NVME ((259u << 20) | 2u)

/* Writes of `n` calls of `size` bytes from offset 0, each after the last. */
static void writes(struct ioacct_file *f, uint64_t n, uint64_t size)
{
	f->opens = 1;
	f->writes = n;
	f->bytes_written = n * size;
	f->max_byte_written = (int64_t)(n * size) - 1;
	f->seq_writes = f->consec_writes = n - 1;
	f->size_written[ioacct_size_bin(size)] = n;
	f->write_ns = n * 1000;
	f->first_write_ns = 1000;
	f->last_write_ns = (int64_t)n * 1000;
}

/* `n` reads of `size` bytes, `seq` of them sequential, the largest byte at `max`. */
static void reads(struct ioacct_file *f, uint64_t n, uint64_t size, uint64_t seq, int64_t max)
{
	f->opens = 1;
	f->reads = n;
	f->bytes_read = n * size;
	f->max_byte_read = max;
	f->seq_reads = seq;
	f->consec_reads = seq;
	f->size_read[ioacct_size_bin(size)] = n;
	f->read_ns = n * 500;
	f->first_read_ns = 2000;
	f->last_read_ns = 2000 + (int64_t)n;
}

/*
 * Two ranks writing one shared file in 4 KiB pieces, one file re-read 8
 * times over, a large file read at random, and /scratch's "other files".
 */
static struct jb job(void)
{
	struct jb b;

	jb_init(&b, SEC, 10 * SEC);
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_step(&b, 0, 0, 10 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 1106, 0, 1100 * 4096 + 6000, 1106000);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 512, 0, 512 * MIB, 256000);
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 2000, 0, 2000 * 4096, 1000000);
	writes(jb_file(&b, 0, 0, M_SCRATCH, DEV_SDA1, 100, "/scratch/out.dat"), 600, 4096);
	writes(jb_file(&b, 0, 1, M_SCRATCH, DEV_SDA1, 100, "/scratch/out.dat"), 500, 4096);
	reads(jb_file(&b, 0, 0, M_SCRATCH, DEV_SDA1, 200, "/scratch/input.nc"), 512, MIB, 448,
	      (int64_t)(64 * MIB) - 1);
	reads(jb_file(&b, 0, -1, M_TMP, DEV_NVME, 300, "/tmp/big.idx"), 2000, 4096, 100,
	      (int64_t)GIB - 1);
	writes(jb_file(&b, 0, 0, M_SCRATCH, 0, 0, ""), 6, 1000);
	b.jd->files[b.jd->nfiles - 1].opens = 3;
	return b;
}

static struct ioacct_report *report(struct jb *b, const struct ioacct_advice_limits *l,
				    const char *only)
{
	struct ioacct_report *r = ioacct_report_create(b->jd, l, only);

	assert_non_null(r);
	return r;
}

static const struct ioacct_advice *find_rule(const struct ioacct_report *r, const char *rule)
{
	for (size_t i = 0; i < r->nadvice; i++)
		if (strcmp(r->advice[i].rule, rule) == 0)
			return &r->advice[i];
	return NULL;
}

static void test_model(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = report(&b, NULL, NULL);
	const struct ioacct_report_file *x;

	(void)state;
	assert_int_equal(r->nrecords, 5);
	assert_int_equal(r->nfiles, 4);
	/* By bytes moved: 512 MiB, 8192000, 4505600, 6000. */
	assert_string_equal(r->files[0].sum.path, "/scratch/input.nc");
	assert_string_equal(r->files[1].sum.path, "/tmp/big.idx");
	assert_string_equal(r->files[2].sum.path, "/scratch/out.dat");
	assert_true(r->files[3].other);
	x = &r->files[2];
	assert_int_equal(x->nranks, 2);
	assert_int_equal(x->top_rank, 0);
	assert_int_equal(x->sum.writes, 1100);
	assert_int_equal(x->sum.bytes_written, 1100 * 4096);
	assert_int_equal(x->sum.max_byte_written, 600 * 4096 - 1);
	assert_int_equal(x->sum.seq_writes, 599 + 499);
	assert_int_equal(x->sum.opens, 2);
	assert_int_equal(x->calls, 1102);
	assert_int_equal(x->ns, 1100 * 1000);
	assert_int_equal(x->sum.first_write_ns, 1000);
	assert_int_equal(x->sum.last_write_ns, 600000);
	assert_int_equal(x->sum.size_written[ioacct_size_bin(4096)], 1100);
	assert_ptr_equal(x->mount, &r->mounts[0]);
	assert_int_equal(r->files[1].top_rank, -1);
	assert_int_equal(r->files[1].nranks, 1);
	assert_ptr_equal(r->files[1].mount, &r->mounts[1]);
	assert_true(r->files_partial);
	assert_int_equal(r->other_calls, 9);
	assert_int_equal(r->other_bytes, 6000);
	ioacct_report_destroy(r);

	/* One mount: its files alone, and /scratch's "other files" is not /tmp's. */
	r = report(&b, NULL, "/tmp");
	assert_int_equal(r->nrecords, 1);
	assert_int_equal(r->nfiles, 1);
	assert_string_equal(r->files[0].sum.path, "/tmp/big.idx");
	assert_false(r->files_partial);
	assert_int_equal(r->other_calls, 0);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* A tie in bytes moved between ranks: the one that took more time moved most. */
static void test_top_rank_tie(void **state)
{
	struct jb b;
	struct ioacct_report *r;

	(void)state;
	jb_init(&b, SEC, SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 0, 30, 0, 30 * 100, 1);
	writes(jb_file(&b, 0, 2, M_TMP, DEV_NVME, 7, "/tmp/f"), 10, 100);
	writes(jb_file(&b, 0, 5, M_TMP, DEV_NVME, 7, "/tmp/f"), 10, 100);
	b.jd->files[1].write_ns += 1;
	writes(jb_file(&b, 1, 2, M_TMP, DEV_NVME, 7, "/tmp/f"), 10, 100);
	r = report(&b, NULL, NULL);
	/* Rank 2 moved 2000 bytes over two steps, rank 5 1000: rank 2. */
	assert_int_equal(r->nfiles, 1);
	assert_int_equal(r->files[0].top_rank, 2);
	assert_int_equal(r->files[0].nranks, 2);
	ioacct_report_destroy(r);
	b.jd->nfiles = 2;
	r = report(&b, NULL, NULL);
	assert_int_equal(r->files[0].top_rank, 5);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_rules_fire(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = report(&b, NULL, NULL);
	const struct ioacct_advice *a;

	(void)state;
	a = find_rule(r, "shared-file-small-writes");
	assert_non_null(a);
	assert_int_equal(a->level, IOACCT_ADVICE_WARN);
	assert_int_equal(a->dir, IOACCT_DIR_WRITE);
	assert_string_equal(a->mount->path, "/scratch");
	assert_string_equal(a->message, "/scratch/out.dat: 2 ranks wrote 1100 times, 4096 bytes per "
					 "write on average");
	assert_string_equal(a->values[0].name, "ranks");
	assert_int_equal(a->values[0].u, 2);
	assert_string_equal(a->thresholds[1].name, "advice_file_small_write");
	assert_int_equal(a->thresholds[1].u, 65536);

	a = find_rule(r, "file-reread");
	assert_non_null(a);
	assert_string_equal(a->message, "/scratch/input.nc: 536870912 bytes read from its first "
					 "67108864 bytes, 8.0 times over");
	assert_int_equal(a->dir, IOACCT_DIR_READ);

	a = find_rule(r, "random-file-reads");
	assert_non_null(a);
	assert_string_equal(a->mount->path, "/tmp");
	assert_string_equal(a->message, "/tmp/big.idx: 100 of 2000 reads (5.0%) sequential, in a "
					 "file of at least 1073741824 bytes");
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* Each rule at its threshold does not fire; one past it does. */
static void test_rules_thresholds(void **state)
{
	struct ioacct_advice_limits l;
	struct jb b = job();
	struct ioacct_file *out0 = &b.jd->files[0], *in = &b.jd->files[2];
	struct ioacct_report *r;

	(void)state;
	ioacct_advice_limits_defaults(&l);
	/* 1100 writes: advice_file_writes_min 1101 holds the rule back, 1100 does not. */
	l.file_writes_min = 1101;
	/* 8 times over: advice_file_reread 8 holds it back (more than k times). */
	l.file_reread = 8;
	/* 100 of 2000 sequential is 5%: a share of 5 holds it back (fewer than). */
	l.file_random_share = 5;
	r = report(&b, &l, NULL);
	assert_null(find_rule(r, "shared-file-small-writes"));
	assert_null(find_rule(r, "file-reread"));
	assert_null(find_rule(r, "random-file-reads"));
	ioacct_report_destroy(r);

	l.file_writes_min = 1100;
	l.file_reread = 7;
	l.file_random_share = 6;
	r = report(&b, &l, NULL);
	assert_non_null(find_rule(r, "shared-file-small-writes"));
	assert_non_null(find_rule(r, "file-reread"));
	assert_non_null(find_rule(r, "random-file-reads"));
	ioacct_report_destroy(r);

	/* A mean write of exactly advice_file_small_write is not small. */
	ioacct_advice_limits_defaults(&l);
	l.file_small_write = 4096;
	/* 64 MiB read at least: 512 MiB read is not enough at 513. */
	l.file_reread_min_mib = 513;
	/* A file of exactly advice_file_random_size is not large. */
	l.file_random_min_mib = 1024;
	r = report(&b, &l, NULL);
	assert_null(find_rule(r, "shared-file-small-writes"));
	assert_null(find_rule(r, "file-reread"));
	assert_null(find_rule(r, "random-file-reads"));
	ioacct_report_destroy(r);

	/* One rank alone is no shared file; no reads, no re-reads; 2000 reads under 2001. */
	ioacct_advice_limits_defaults(&l);
	l.file_reads_min = 2001;
	out0->rank = 1;
	in->reads = 0;
	r = report(&b, &l, NULL);
	assert_null(find_rule(r, "shared-file-small-writes"));
	assert_null(find_rule(r, "file-reread"));
	assert_null(find_rule(r, "random-file-reads"));
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* The rule names the worst file and counts the others. */
static void test_rule_names_worst(void **state)
{
	struct jb b;
	struct ioacct_report *r;
	const struct ioacct_advice *a;

	(void)state;
	jb_init(&b, SEC, SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1, 0, 1, 1);
	for (int i = 0; i < 3; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/tmp/in%d", i);
		reads(jb_file(&b, 0, -1, M_TMP, DEV_NVME, 10 + (uint64_t)i, path), 100, MIB, 90,
		      (int64_t)((10 + (uint64_t)i) * MIB) - 1);
	}
	r = report(&b, NULL, NULL);
	a = find_rule(r, "file-reread");
	assert_non_null(a);
	/* Each read 100 MiB; the same bytes read: the first in report order is named. */
	assert_string_equal(a->message, "/tmp/in0: 104857600 bytes read from its first 10485760 "
					 "bytes, 10.0 times over (and 2 other files)");
	assert_int_equal(a->values[2].u, 3);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_text(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = report(&b, NULL, NULL);
	char *t = render(r, ioacct_render_text);

	(void)state;
	has(t, "\nFiles        partial: max_files was reached; 9 calls (6000 bytes) on files past it "
	       "are counted as \"other files\"\n");
	has(t, "\n## Top files: 4 of 4, by bytes moved, then time");
	/* MMAP_BYTES "-": the job has no mmap view (not measured, not 0). */
	has(t, "\n     536870912              0              -        512          0        1        0"
	       "        0        0     0.000256     0.000000     0.000000      0     1 /scratch "
	       "/scratch/input.nc\n"
	       "       8192000              0              -       2000          0        1        0"
	       "        0        0     0.001000     0.000000     0.000000      -     1 /tmp     "
	       "/tmp/big.idx\n"
	       "             0        4505600              -          0       1100        2        0"
	       "        0        0     0.000000     0.001100     0.000000      0     2 /scratch "
	       "/scratch/out.dat\n"
	       "             0           6000              -          0          6        3        0"
	       "        0        0     0.000000     0.000006     0.000000      0     1 /scratch "
	       "(other files)\n"
	       "partial: max_files was reached; 9 calls (6000 bytes) on files past it are counted "
	       "as \"other files\"\n");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_json(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = report(&b, NULL, NULL);
	char *t = render(r, ioacct_render_json), *l;

	(void)state;
	has(t, "\n  \"file_records\": true,\n  \"files_partial\": true,\n"
	       "  \"other_files_calls\": 9,\n  \"other_files_bytes\": 6000,\n  \"files\": [\n");
	has(t, "\"step\": \"0\",\n      \"step_id\": 0,\n      \"rank\": 1,\n      \"mount\": \"/scratch\",\n"
	       "      \"mnt_id\": 21,\n      \"dev\": 8388609,\n      \"ino\": 100,\n"
	       "      \"gen\": 0,\n      \"path\": \"/scratch/out.dat\",\n      \"other_files\": false,\n"
	       "      \"opens\": 1,\n      \"reads\": 0,\n      \"writes\": 500,\n      \"stats\": 0,\n"
	       "      \"fsyncs\": 0,\n      \"seeks\": 0,\n      \"bytes_read\": 0,\n"
	       "      \"bytes_written\": 2048000,\n"
	       "      \"read_time_ns\": 0,\n      \"write_time_ns\": 500000,\n"
	       "      \"meta_time_ns\": 0,\n      \"max_byte_read\": 0,\n"
	       "      \"max_byte_written\": 2047999,\n      \"seq_reads\": 0,\n"
	       "      \"seq_writes\": 499,\n      \"consec_reads\": 0,\n      \"consec_writes\": 499,\n"
	       "      \"first_read_ns\": -1,\n      \"last_read_ns\": -1,\n"
	       "      \"first_write_ns\": 1000,\n      \"last_write_ns\": 500000,\n"
	       "      \"read_sizes\": {\"0_100\": 0, \"100_1K\": 0, \"1K_10K\": 0, \"10K_100K\": 0, "
	       "\"100K_1M\": 0, \"1M_4M\": 0, \"4M_10M\": 0, \"10M_100M\": 0, \"100M_1G\": 0, "
	       "\"1G_PLUS\": 0},\n"
	       "      \"write_sizes\": {\"0_100\": 0, \"100_1K\": 0, \"1K_10K\": 500, ");
	has(t, "\"rank\": -1,\n      \"mount\": \"/tmp\",\n      \"mnt_id\": 22,\n"
	       "      \"dev\": 271581186,\n      \"ino\": 300,\n      \"gen\": 0,\n"
	       "      \"path\": \"/tmp/big.idx\",");
	has(t, "\"dev\": 0,\n      \"ino\": 0,\n      \"gen\": 0,\n      \"path\": null,\n"
	       "      \"other_files\": true,\n"
	       "      \"opens\": 3,\n      \"reads\": 0,\n      \"writes\": 6,");
	/* No views: a file's views' bytes are not known, not 0. */
	has(t, "\"mmap_bytes\": null,\n      \"cache_miss_bytes\": null,\n"
	       "      \"rw_switches\": 0,\n      \"access_sizes\": []\n    }");
	/* Every record, in the store's order. */
	l = strstr(t, "\"files\": [");
	assert_non_null(l);
	assert_true(strstr(l, "/scratch/out.dat") < strstr(l, "/scratch/input.nc"));
	free(t);
	t = render(r, ioacct_render_files_json);
	has(t, "{\n  \"schema_version\": 3,\n  \"job_id\": 77,\n  \"cluster\": \"test\",\n"
	       "  \"file_records\": true,\n  \"files_partial\": true,\n  \"other_files_calls\": 9,\n");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_files_list(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = report(&b, NULL, NULL);
	char *t = render(r, ioacct_render_files_text);

	(void)state;
	assert_memory_equal(t, "STEP\tRANK\tMOUNT\tDEV\tINO\t", 24);
	assert_non_null(strstr(t, "\tCONSEC_WRITES\tMMAP_BYTES\tCACHE_MISS_BYTES\tPATH\tGEN\tRW_SWITCHES\tACCESS_SIZES\n"));
	/* The views' bytes "-": not measured (no mmap nor cache view), not 0. */
	has(t, "\n0\t1\t/scratch\t8:1\t100\t1\t0\t500\t0\t0\t0\t0\t2048000\t0\t500000\t0\t0"
	       "\t2047999\t0\t499\t0\t499\t-\t-\t/scratch/out.dat\t0\t0\t-\n");
	has(t, "\n0\t-1\t/tmp\t259:2\t300\t1\t2000\t0\t0\t0\t0\t8192000\t0\t1000000\t0\t0"
	       "\t1073741823\t0\t100\t0\t100\t0\t-\t-\t/tmp/big.idx\t0\t0\t-\n");
	has(t, "\n0\t0\t/scratch\t0:0\t0\t3\t0\t6\t0\t0\t0\t0\t6000\t0\t6000\t0\t0\t5999\t0\t5"
	       "\t0\t5\t-\t-\t(other files)\t0\t0\t-\n# partial: max_files was reached; 9 calls (6000 bytes) "
	       "on files "
	       "past it are counted as \"other files\"\n");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* The first row of the HTML table `id`. */
static void html_first_row(const char *html, const char *id, const char *want)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "<table id=\"%s\"", id);
	p = strstr(html, key);
	assert_non_null(p);
	p = strstr(p, "<tbody><tr><td>");
	assert_non_null(p);
	if (strncmp(p + 15, want, strlen(want)) != 0)
		fail_msg("%s: first row %.60s, not %s", id, p + 15, want);
}

static void test_html(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = report(&b, NULL, NULL);
	char *t = render(r, ioacct_render_html);

	(void)state;
	assert_null(strstr(t, "<script"));
	has(t, "<section id=\"files\"><h2>Top files</h2>");
	has(t, "<p class=\"partial\" id=\"files-partial\">Partial: max_files was reached; 9 calls "
	       "(6000 bytes) on files past it are counted as &quot;other files&quot;.</p>");
	has(t, "<tr><th>Files</th><td>partial: max_files was reached; 9 calls (6000 bytes)");
	has(t, "<input type=\"radio\" name=\"fsort\" class=\"fsort\" id=\"fs-0\" checked>");
	html_first_row(t, "files-table", "/scratch/input.nc</td><td>/scratch</td><td class=\"n\">0"
					  "</td><td class=\"n\">536870912 ");
	html_first_row(t, "files-by-path", "(other files)");
	html_first_row(t, "files-by-mount", "/scratch/input.nc");
	html_first_row(t, "files-by-rank", "/tmp/big.idx</td><td>/tmp</td><td class=\"n\">-</td>");
	html_first_row(t, "files-by-read", "/scratch/input.nc");
	html_first_row(t, "files-by-written", "/scratch/out.dat</td><td>/scratch</td><td class=\"n\">0 "
					       "<small>of 2</small></td>");
	html_first_row(t, "files-by-calls", "/tmp/big.idx");
	html_first_row(t, "files-by-read-time", "/tmp/big.idx");
	html_first_row(t, "files-by-write-time", "/scratch/out.dat");
	html_first_row(t, "files-by-meta-time", "/scratch/input.nc");
	/* No mmap view: "-", not 0; and ties in the mmap column keep the report's order. */
	html_first_row(t, "files-by-mmap", "/scratch/input.nc");
	has(t, "<td class=\"n\">0.000000</td><td class=\"n\">-</td></tr>");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * The page-cache and mmap views' bytes of each file (issue 26): summed per
 * file over its ranks, in every format, where the job's views measured
 * them; null (JSON) and "-" (text) where they did not (test_text, ...).
 */
static void test_views_bytes(void **state)
{
	struct jb b = job();
	struct ioacct_report *r;
	char *t;

	(void)state;
	ioacct_strlcpy(b.jd->job.probe_mode, "fentry views=cache,mmap,readahead",
		       sizeof(b.jd->job.probe_mode));
	b.jd->files[0].mmap_bytes = 4096;     /* out.dat, rank 0 */
	b.jd->files[1].mmap_bytes = 8192;     /* out.dat, rank 1 */
	b.jd->files[3].mmap_bytes = 3 * 4096; /* big.idx */
	b.jd->files[3].cache_miss_bytes = 8192;
	r = report(&b, NULL, NULL);
	assert_true(r->files_mmap);
	assert_true(r->files_miss);
	assert_string_equal(r->files[2].sum.path, "/scratch/out.dat");
	assert_int_equal(r->files[2].sum.mmap_bytes, 12288);
	t = render(r, ioacct_render_text);
	has(t, "\n       8192000              0          12288       2000");
	has(t, "\n             0        4505600          12288          0");
	has(t, "\n     536870912              0              0        512");
	free(t);
	t = render(r, ioacct_render_json);
	has(t, "\"path\": \"/tmp/big.idx\",");
	/* Version 3's name, the mount's, then version 2's, for one more version. */
	has(t, "\"1G_PLUS\": 0},\n      \"mmap_read_bytes\": 12288,\n"
	       "      \"mmap_bytes\": 12288,\n      \"cache_miss_bytes\": 8192");
	has(t, "\"mmap_read_bytes\": 8192,\n      \"mmap_bytes\": 8192,\n"
	       "      \"cache_miss_bytes\": 0");
	free(t);
	t = render(r, ioacct_render_files_text);
	has(t, "\t0\t100\t0\t100\t0\t12288\t8192\t/tmp/big.idx\t0\t0\t-\n");
	free(t);
	t = render(r, ioacct_render_html);
	html_first_row(t, "files-by-mmap", "/tmp/big.idx");
	has(t, "<td class=\"n\">0.000000</td><td class=\"n\">12288 ");
	free(t);
	ioacct_report_destroy(r);

	/* The mmap view without its exact hooks: the misses are known, the mmap bytes not. */
	ioacct_strlcpy(b.jd->job.probe_mode, "tracepoint views=cache,mmap-nohook",
		       sizeof(b.jd->job.probe_mode));
	r = report(&b, NULL, NULL);
	t = render(r, ioacct_render_json);
	has(t, "\"mmap_read_bytes\": null,\n      \"mmap_bytes\": null,\n"
	       "      \"cache_miss_bytes\": 8192");
	free(t);
	t = render(r, ioacct_render_files_text);
	has(t, "\t0\t100\t0\t100\t0\t-\t8192\t/tmp/big.idx\t0\t0\t-\n");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * No records: no section, JSON's files empty, not partial; records not read
 * at all (through ioacctd's socket, an old store): JSON says null, not none.
 */
static void test_no_files(void **state)
{
	struct jb b;
	struct ioacct_report *r;
	char *t;

	(void)state;
	jb_init(&b, SEC, SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1, 0, 1, 1);
	r = report(&b, NULL, NULL);
	t = render(r, ioacct_render_json);
	has(t, "\"files_partial\": null,\n  \"other_files_calls\": null,\n"
	       "  \"other_files_bytes\": null,\n  \"files\": null,\n");
	free(t);
	ioacct_report_destroy(r);
	b.jd->files_loaded = true;
	r = report(&b, NULL, NULL);
	t = render(r, ioacct_render_text);
	assert_null(strstr(t, "Top files"));
	assert_null(strstr(t, "partial"));
	free(t);
	t = render(r, ioacct_render_json);
	has(t, "\"files_partial\": false,\n  \"other_files_calls\": 0,\n  \"other_files_bytes\": 0,\n"
	       "  \"files\": [],\n");
	free(t);
	t = render(r, ioacct_render_html);
	assert_null(strstr(t, "id=\"files\""));
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * A job recorded with file_records = no has no records because none were
 * kept: every output says so where its files would be, none says "no files".
 */
static void test_files_off(void **state)
{
	char mode[sizeof(((struct ioacct_job *)0)->probe_mode)];
	struct jb b;
	struct ioacct_report *r;
	char *t;

	(void)state;
	assert_true(ioacct_probe_files_off("tracepoint files=off views=cache,mmap"));
	assert_true(ioacct_probe_files_off("fentry files=off"));
	assert_false(ioacct_probe_files_off("tracepoint views=cache,mmap"));
	assert_false(ioacct_probe_files_off("tracepoint files=offx views=none"));
	assert_false(ioacct_probe_files_off("tracepoint"));
	assert_string_equal(ioacct_probe_backend("syscall-tp files=off views=none", mode,
						 sizeof(mode)), "syscall-tp");
	assert_string_equal(ioacct_probe_views("tracepoint files=off views=cache"), "cache");

	jb_init(&b, SEC, SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_READ, 0, 1, 0, 1, 1);
	b.jd->files_loaded = true;
	snprintf(b.jd->job.probe_mode, sizeof(b.jd->job.probe_mode),
		 "tracepoint files=off views=cache");
	r = report(&b, NULL, NULL);
	t = render(r, ioacct_render_text);
	has(t, "\nFiles        per-file records: off (file_records = no)\n");
	has(t, "\n## Top files\nper-file records: off (file_records = no)\n");
	free(t);
	t = render(r, ioacct_render_json);
	has(t, "\"probe_mode\": \"tracepoint\",\n  \"views\": \"cache\",");
	has(t, "\"file_records\": false,\n  \"files_note\": \"per-file records: off "
	       "(file_records = no)\",\n  \"files_partial\": null,");
	free(t);
	t = render(r, ioacct_render_files_text);
	has(t, "\n# per-file records: off (file_records = no)\n");
	free(t);
	t = render(r, ioacct_render_html);
	has(t, "<p id=\"files-off\">per-file records: off (file_records = no).</p>");
	has(t, "<tr><th>Files</th><td>per-file records: off (file_records = no)");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* A file's path is anyone's bytes: escaped in every output, no line or element forged. */
static void test_hostile_path(void **state)
{
	struct jb b;
	struct ioacct_report *r;
	char *t;

	(void)state;
	jb_init(&b, SEC, SEC);
	jb_mount(&b, M_TMP, "/tmp", "ext4");
	jb_add(&b, 0, M_TMP, IOACCT_OP_WRITE, 0, 1, 0, 10, 1);
	writes(jb_file(&b, 0, 0, M_TMP, DEV_NVME, 9, "/tmp/x\ntotal_POSIX_OPENS: 9\t<script>\xff"),
	       1, 10);
	r = report(&b, NULL, NULL);
	t = render(r, ioacct_render_text);
	has(t, " /tmp/x\\ntotal_POSIX_OPENS: 9\\t<script>\xef\xbf\xbd\n");
	assert_null(strstr(t, "\ntotal_POSIX_OPENS: 9"));
	free(t);
	t = render(r, ioacct_render_files_text);
	has(t, "\t/tmp/x\\ntotal_POSIX_OPENS: 9\\t<script>\xef\xbf\xbd\t0\t0\t-\n");
	free(t);
	t = render(r, ioacct_render_html);
	has(t, "<td>/tmp/x\ntotal_POSIX_OPENS: 9\t&lt;script&gt;\xef\xbf\xbd</td>");
	assert_null(strstr(t, "<script"));
	free(t);
	t = render(r, ioacct_render_json);
	has(t, "\"path\": \"/tmp/x\\ntotal_POSIX_OPENS: 9\\t<script>\\ufffd\"");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_top_rank_tie),
		cmocka_unit_test(test_rules_fire),
		cmocka_unit_test(test_rules_thresholds),
		cmocka_unit_test(test_rule_names_worst),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_files_list),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_views_bytes),
		cmocka_unit_test(test_no_files),
		cmocka_unit_test(test_files_off),
		cmocka_unit_test(test_hostile_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
