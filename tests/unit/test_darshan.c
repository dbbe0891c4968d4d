// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the Darshan log reader (lib/darshan/darshan.c) on logs built here
 * byte by byte: every supported format version and record version with
 * darshan-util's conversions, both byte orders, zlib (several streams per
 * region) and uncompressed regions; and bad logs: not a log, bad magic,
 * unsupported versions, bzip2, every truncation, every flipped byte,
 * lengths past the end, a zlib bomb under a memory limit. Also the record
 * id hash, name and mount lookups, and the totals' aggregation rules.
 * tests/unit/test_darshan_logs.c checks real logs against darshan-parser.
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
#include <zlib.h>

#include <cmocka.h>

#include "darshan.h"

/* ---- building logs ---- */

struct bb {
	unsigned char *p;
	size_t len;
	bool be;                          /* write big-endian words */
};

static void bb_put(struct bb *b, const void *src, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	assert_non_null(b->p);
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void bb_u64(struct bb *b, uint64_t v)
{
	unsigned char x[8];

	for (int i = 0; i < 8; i++)
		x[b->be ? 7 - i : i] = (unsigned char)(v >> (8 * i));
	bb_put(b, x, 8);
}

static void bb_u32(struct bb *b, uint32_t v)
{
	unsigned char x[4];

	for (int i = 0; i < 4; i++)
		x[b->be ? 3 - i : i] = (unsigned char)(v >> (8 * i));
	bb_put(b, x, 4);
}

static void bb_f64(struct bb *b, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	bb_u64(b, v);
}

static void bb_zero(struct bb *b, size_t n)
{
	while (n--)
		bb_put(b, "", 1);
}

/* A job region: the job struct of the version, then exe and mount table. */
static struct bb job_region(unsigned int minor, bool be, const char *exe_mounts)
{
	struct bb b = { .be = be };
	char meta[IOACCT_DARSHAN_METADATA_LEN] = "lib_ver=3.2.1\nh=romio_no_indep_rw=true\n";

	bb_u64(&b, 1000);             /* uid */
	bb_u64(&b, 1700000000);       /* start */
	if (minor >= 41)
		bb_u64(&b, 250000000);
	bb_u64(&b, 1700000010);       /* end */
	if (minor >= 41)
		bb_u64(&b, 500000000);
	bb_u64(&b, 4);                /* nprocs */
	bb_u64(&b, 4242);             /* jobid */
	bb_put(&b, meta, sizeof(meta));
	bb_put(&b, exe_mounts, strlen(exe_mounts) + 1);
	return b;
}

static void name_rec(struct bb *b, const char *name)
{
	bb_u64(b, ioacct_darshan_hash(name, strlen(name), 0));
	bb_put(b, name, strlen(name) + 1);
}

struct region {
	unsigned int slot;                /* header slot, as the version numbers modules */
	uint32_t version;
	struct bb data;
	int streams;                      /* zlib: 1 (default) or 2 streams */
};

struct craft {
	char version[8];
	unsigned int minor;
	unsigned char comp;
	bool be;
	struct bb job, names;
	struct region mods[4];
	size_t nmods;
};

static void deflate_to(struct bb *file, const struct bb *raw, int streams, uint64_t *off,
		       uint64_t *len)
{
	size_t part = streams == 2 ? raw->len / 2 : raw->len;

	*off = file->len;
	for (int s = 0; s < (streams == 2 ? 2 : 1); s++) {
		const unsigned char *src = raw->p + (s ? part : 0);
		size_t n = s ? raw->len - part : part;
		uLongf zn = compressBound((uLong)n);
		unsigned char *z = malloc(zn);

		assert_non_null(z);
		assert_int_equal(compress2(z, &zn, src, (uLong)n, 6), Z_OK);
		bb_put(file, z, zn);
		free(z);
	}
	*len = file->len - *off;
}

static void place(struct bb *file, const struct craft *c, const struct bb *raw, int streams,
		  uint64_t *off, uint64_t *len)
{
	if (raw->len == 0) {
		*off = *len = 0;
	} else if (c->comp == IOACCT_DARSHAN_ZLIB) {
		deflate_to(file, raw, streams, off, len);
	} else {
		*off = file->len;
		*len = raw->len;
		bb_put(file, raw->p, raw->len);
	}
}

/* The whole file: header, job, names, modules; every region compressed as c->comp says. */
static struct bb craft_log(const struct craft *c)
{
	bool v41 = c->minor >= 41;
	size_t hs = v41 ? 1328 : 360, nslots = v41 ? 64 : 16;
	uint64_t map[64][2] = { { 0 } }, name[2], job[2];
	uint32_t ver[64] = { 0 };
	struct bb file = { .be = c->be }, head = { .be = c->be };

	bb_zero(&file, hs);
	place(&file, c, &c->job, 1, &job[0], &job[1]);
	place(&file, c, &c->names, 1, &name[0], &name[1]);
	for (size_t i = 0; i < c->nmods; i++) {
		place(&file, c, &c->mods[i].data, c->mods[i].streams, &map[c->mods[i].slot][0],
		      &map[c->mods[i].slot][1]);
		ver[c->mods[i].slot] = c->mods[i].version;
	}
	bb_put(&head, c->version, 8);
	bb_u64(&head, IOACCT_DARSHAN_MAGIC);
	bb_put(&head, &c->comp, 1);
	if (v41) {
		bb_zero(&head, 7);
		bb_u64(&head, 0);
	} else {
		bb_zero(&head, 3);
		bb_u32(&head, 0);
	}
	bb_u64(&head, name[0]);
	bb_u64(&head, name[1]);
	for (size_t s = 0; s < nslots; s++) {
		bb_u64(&head, map[s][0]);
		bb_u64(&head, map[s][1]);
	}
	for (size_t s = 0; s < nslots; s++)
		bb_u32(&head, ver[s]);
	assert_int_equal(head.len, hs);
	memcpy(file.p, head.p, hs);
	free(head.p);
	return file;
}

static void craft_free(struct craft *c)
{
	free(c->job.p);
	free(c->names.p);
	for (size_t i = 0; i < c->nmods; i++)
		free(c->mods[i].data.p);
}

/* A POSIX v4 record: counter i = base + i, float i = base + i / 8. */
static void posix4(struct bb *b, const char *name, int64_t rank, int64_t base)
{
	bb_u64(b, ioacct_darshan_hash(name, strlen(name), 0));
	bb_u64(b, (uint64_t)rank);
	for (int i = 0; i < 69; i++)
		bb_u64(b, (uint64_t)(base + i));
	for (int i = 0; i < 17; i++)
		bb_f64(b, (double)base + i / 8.0);
}

/* Words of an older record: `nint` counters base + i, `nflt` floats base + i / 8. */
static void words(struct bb *b, const char *name, int64_t rank, int nint, int nflt, int64_t base)
{
	bb_u64(b, ioacct_darshan_hash(name, strlen(name), 0));
	bb_u64(b, (uint64_t)rank);
	for (int i = 0; i < nint; i++)
		bb_u64(b, (uint64_t)(base + i));
	for (int i = 0; i < nflt; i++)
		bb_f64(b, (double)base + i / 8.0);
}

static void heatmap(struct bb *b, const char *name, int64_t rank, double width, int64_t nbins)
{
	bb_u64(b, ioacct_darshan_hash(name, strlen(name), 0));
	bb_u64(b, (uint64_t)rank);
	bb_f64(b, width);
	bb_u64(b, (uint64_t)nbins);
	bb_u64(b, 0xdeadbeef);
	bb_u64(b, 0xfeedface);
	for (int64_t i = 0; i < nbins; i++)
		bb_u64(b, (uint64_t)(100 + i));   /* write bins */
	for (int64_t i = 0; i < nbins; i++)
		bb_u64(b, (uint64_t)(200 + i));   /* read bins */
}

static const char MOUNTS[] = "/apps/bin/sim -n 4\nlustre\t/scratch\next4\t/\nnfs\t/home";

/* A 3.41 log: POSIX (2 records), STDIO (1), HEATMAP (2 records). */
static void craft_341(struct craft *c, unsigned char comp, bool be)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->version, "3.41", 5);
	c->minor = 41;
	c->comp = comp;
	c->be = be;
	c->job = job_region(41, be, MOUNTS);
	c->names.be = be;
	name_rec(&c->names, "/scratch/a");
	name_rec(&c->names, "/home/u/b");
	name_rec(&c->names, "heatmap:POSIX");
	c->mods[0] = (struct region){ .slot = 1, .version = 4, .data = { .be = be } };
	posix4(&c->mods[0].data, "/scratch/a", -1, 10);
	posix4(&c->mods[0].data, "/home/u/b", 3, 1000);
	c->mods[1] = (struct region){ .slot = 9, .version = 2, .data = { .be = be } };
	words(&c->mods[1].data, "/home/u/b", 0, 14, 15, 7);
	c->mods[2] = (struct region){ .slot = 15, .version = 1, .data = { .be = be } };
	heatmap(&c->mods[2].data, "heatmap:POSIX", 0, 0.1, 3);
	heatmap(&c->mods[2].data, "heatmap:POSIX", 1, 0.1, 3);
	c->nmods = 3;
}

static struct ioacct_darshan_log *parse_ok(const struct bb *f)
{
	char err[512] = "";
	struct ioacct_darshan_log *log = ioacct_darshan_parse(f->p, f->len, 0, err, sizeof(err));

	if (!log)
		fail_msg("parse failed: %s", err);
	return log;
}

/* Parsing must fail with errno `e` and a message containing `what`. */
static void parse_fails(const void *p, size_t len, size_t max_mem, int e, const char *what)
{
	char err[512] = "";
	struct ioacct_darshan_log *log = ioacct_darshan_parse(p, len, max_mem, err, sizeof(err));

	if (log) {
		ioacct_darshan_free(log);
		fail_msg("parse succeeded, expected an error about '%s'", what);
	}
	if (e)
		assert_int_equal(errno, e);
	if (!strstr(err, what))
		fail_msg("message '%s' lacks '%s'", err, what);
}

static void check_341(const struct ioacct_darshan_log *log, bool be)
{
	const struct ioacct_darshan_record *p;

	assert_string_equal(log->version, "3.41");
	assert_int_equal(log->minor, 41);
	assert_int_equal(log->swapped, be);
	assert_int_equal(log->uid, 1000);
	assert_int_equal(log->start_sec, 1700000000);
	assert_int_equal(log->start_nsec, 250000000);
	assert_int_equal(log->end_sec, 1700000010);
	assert_int_equal(log->end_nsec, 500000000);
	assert_int_equal(log->nprocs, 4);
	assert_int_equal(log->jobid, 4242);
	assert_string_equal(log->metadata, "lib_ver=3.2.1\nh=romio_no_indep_rw=true\n");
	assert_string_equal(log->exe, "/apps/bin/sim -n 4");
	assert_int_equal(log->nmounts, 3);
	assert_string_equal(log->mounts[0].path, "/scratch");
	assert_string_equal(log->mounts[0].fstype, "lustre");
	assert_string_equal(log->mounts[2].path, "/home");
	assert_int_equal(log->nnames, 3);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 2);
	p = &log->recs[IOACCT_DARSHAN_POSIX][1];
	assert_int_equal(p->rank, 3);
	assert_string_equal(ioacct_darshan_name_of(log, p->id), "/home/u/b");
	for (int i = 0; i < 69; i++)
		assert_int_equal(p->counters[i], 1000 + i);
	for (int i = 0; i < 17; i++)
		assert_true(p->fcounters[i] == 1000 + i / 8.0);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_STDIO], 1);
	assert_int_equal(log->recs[IOACCT_DARSHAN_STDIO][0].counters[13], 7 + 13);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_MPIIO], 0);
	assert_int_equal(log->nheatmaps, 2);
	assert_int_equal(log->heatmaps[1].rank, 1);
	assert_int_equal(log->heatmaps[1].nbins, 3);
	assert_true(log->heatmaps[1].bin_width == 0.1);
	assert_int_equal(log->heatmaps[1].write_bins[2], 102);
	assert_int_equal(log->heatmaps[1].read_bins[0], 200);
	assert_int_equal(log->regions[IOACCT_DARSHAN_MOD_POSIX].version, 4);
	assert_int_equal(log->regions[IOACCT_DARSHAN_MOD_STDIO].version, 2);
}

static void test_341_zlib(void **state)
{
	struct craft c;
	struct bb f;
	struct ioacct_darshan_log *log;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	c.mods[0].streams = 2;   /* one region written by two processes */
	f = craft_log(&c);
	log = parse_ok(&f);
	check_341(log, false);
	assert_int_equal(log->comp, IOACCT_DARSHAN_ZLIB);
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

static void test_341_nocomp_bigendian(void **state)
{
	struct craft c;
	struct bb f;
	struct ioacct_darshan_log *log;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_NOCOMP, true);
	f = craft_log(&c);
	log = parse_ok(&f);
	check_341(log, true);
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

/* Format 3.10: 16 slots, STDIO in slot 7, old record versions converted. */
static void test_310_conversions(void **state)
{
	struct craft c = { .version = "3.10", .minor = 10, .comp = IOACCT_DARSHAN_ZLIB };
	struct ioacct_darshan_log *log;
	const struct ioacct_darshan_record *r;
	struct bb f;

	(void)state;
	c.job = job_region(10, false, "a.out\next4\t/");
	name_rec(&c.names, "/data/x");
	c.mods[0] = (struct region){ .slot = 1, .version = 3 };
	words(&c.mods[0].data, "/data/x", -1, 64, 17, 100);
	c.mods[1] = (struct region){ .slot = 2, .version = 2 };
	words(&c.mods[1].data, "/data/x", -1, 51, 15, 300);
	c.mods[2] = (struct region){ .slot = 7, .version = 1 };
	words(&c.mods[2].data, "/data/x", 5, 13, 15, 500);
	c.nmods = 3;
	f = craft_log(&c);
	log = parse_ok(&f);
	assert_int_equal(log->start_nsec, 0);
	assert_int_equal(log->end_sec, 1700000010);
	assert_int_equal(log->jobid, 4242);
	assert_string_equal(log->exe, "a.out");

	/* POSIX 3 -> 4: FILENOS, DUPS, RENAME_* inserted (-1), RENAMED_FROM 0. */
	r = &log->recs[IOACCT_DARSHAN_POSIX][0];
	assert_int_equal(r->counters[0], 100);
	assert_int_equal(r->counters[1], -1);
	assert_int_equal(r->counters[2], -1);
	assert_int_equal(r->counters[3], 101);          /* READS */
	assert_int_equal(r->counters[9], 107);          /* FDSYNCS */
	assert_int_equal(r->counters[10], -1);
	assert_int_equal(r->counters[11], -1);
	assert_int_equal(r->counters[12], 0);
	assert_int_equal(r->counters[13], 108);         /* MODE */
	assert_int_equal(r->counters[68], 163);
	assert_true(r->fcounters[14] == 100 + 14 / 8.0);
	/* As darshan-util converts version 3: the variances come out 0. */
	assert_true(r->fcounters[15] == 0 && r->fcounters[16] == 0);

	/* MPI-IO 2 -> 3: F_CLOSE_START and F_OPEN_END inserted (-1). */
	r = &log->recs[IOACCT_DARSHAN_MPIIO][0];
	assert_int_equal(r->counters[50], 350);
	assert_true(r->fcounters[2] == 300 + 2 / 8.0);
	assert_true(r->fcounters[3] == -1 && r->fcounters[4] == -1);
	assert_true(r->fcounters[5] == 300 + 3 / 8.0);
	assert_true(r->fcounters[16] == 300 + 14 / 8.0);

	/* STDIO 1 -> 2: FDOPENS inserted (-1). */
	r = &log->recs[IOACCT_DARSHAN_STDIO][0];
	assert_int_equal(r->rank, 5);
	assert_int_equal(r->counters[0], 500);
	assert_int_equal(r->counters[1], -1);
	assert_int_equal(r->counters[2], 501);
	assert_int_equal(r->counters[13], 512);
	assert_true(r->fcounters[14] == 500 + 14 / 8.0);
	assert_int_equal(log->regions[IOACCT_DARSHAN_MOD_STDIO].version, 1);
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

/* Format 3.21: STDIO in slot 8, HEATMAP in slot 14; POSIX 1 and 2. */
static void test_321_posix_v1_v2(void **state)
{
	struct craft c = { .version = "3.21", .minor = 21, .comp = IOACCT_DARSHAN_NOCOMP };
	struct ioacct_darshan_log *log;
	const struct ioacct_darshan_record *r;
	struct bb f, rec = { 0 };

	(void)state;
	c.job = job_region(21, false, "b.out");
	name_rec(&c.names, "/data/y");
	name_rec(&c.names, "heatmap:POSIX");
	/* POSIX 1: the second record has stdio counters (FOPENS > 0) and is dropped. */
	c.mods[0] = (struct region){ .slot = 1, .version = 1 };
	words(&c.mods[0].data, "/data/y", 0, 68, 15, 0);
	memset(c.mods[0].data.p + 16 + 6 * 8, 0, 8);    /* FOPENS = 0 */
	words(&rec, "/data/y", 1, 68, 15, 1);            /* FOPENS = 7 */
	bb_put(&c.mods[0].data, rec.p, rec.len);
	free(rec.p);
	c.mods[1] = (struct region){ .slot = 8, .version = 2 };
	words(&c.mods[1].data, "/data/y", 0, 14, 15, 7);
	c.mods[2] = (struct region){ .slot = 14, .version = 1 };
	heatmap(&c.mods[2].data, "heatmap:POSIX", 0, 0.2, 2);
	c.nmods = 3;
	f = craft_log(&c);
	log = parse_ok(&f);
	assert_int_equal(log->exe[0], 'b');
	assert_int_equal(log->nmounts, 0);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 1);
	r = &log->recs[IOACCT_DARSHAN_POSIX][0];
	/* v1 -> v2 drops counters 6..9; v2 -> v3 inserts two floats; v3 -> v4. */
	assert_int_equal(r->counters[0], 0);
	assert_int_equal(r->counters[3], 1);            /* READS */
	assert_int_equal(r->counters[7], 5);            /* MMAPS */
	assert_int_equal(r->counters[8], 10);           /* FSYNCS: v1 counter 10 */
	assert_int_equal(r->counters[68], 67);
	assert_true(r->fcounters[3] == -1 && r->fcounters[4] == -1);
	assert_true(r->fcounters[16] == 14 / 8.0);   /* version 1: every float kept */
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_STDIO], 1);
	assert_int_equal(log->nheatmaps, 1);
	assert_string_equal(ioacct_darshan_name_of(log, log->heatmaps[0].id), "heatmap:POSIX");
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

/* Format 3.20, POSIX 2: two floats inserted; darshan-util's conversion zeroes the last four. */
static void test_320_posix_v2(void **state)
{
	struct craft c = { .version = "3.20", .minor = 20, .comp = IOACCT_DARSHAN_ZLIB };
	struct ioacct_darshan_log *log;
	const struct ioacct_darshan_record *r;
	struct bb f;

	(void)state;
	c.job = job_region(20, false, "c.out\nxfs\t/data");
	name_rec(&c.names, "/data/z");
	c.mods[0] = (struct region){ .slot = 1, .version = 2 };
	words(&c.mods[0].data, "/data/z", 2, 64, 15, 40);
	c.nmods = 1;
	f = craft_log(&c);
	log = parse_ok(&f);
	r = &log->recs[IOACCT_DARSHAN_POSIX][0];
	assert_string_equal(ioacct_darshan_mount_of(log, "/data/z")->fstype, "xfs");
	assert_int_equal(r->counters[14], 40 + 9);       /* BYTES_READ: v3 counter 9 */
	assert_true(r->fcounters[2] == 40 + 2 / 8.0);
	assert_true(r->fcounters[3] == -1 && r->fcounters[4] == -1);
	assert_true(r->fcounters[12] == 40 + 10 / 8.0);
	for (int i = 13; i < 17; i++)
		assert_true(r->fcounters[i] == 0);
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

/* darshan-util evens out heatmaps one bin longer or shorter than the first. */
static void test_heatmap_off_by_one(void **state)
{
	struct craft c;
	struct ioacct_darshan_log *log;
	struct bb f;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	c.mods[2].data.len = 0;
	heatmap(&c.mods[2].data, "heatmap:POSIX", 0, 0.1, 3);
	heatmap(&c.mods[2].data, "heatmap:POSIX", 1, 0.1, 4);
	heatmap(&c.mods[2].data, "heatmap:POSIX", 2, 0.1, 2);
	f = craft_log(&c);
	log = parse_ok(&f);
	assert_int_equal(log->nheatmaps, 3);
	assert_int_equal(log->heatmaps[1].nbins, 3);
	assert_int_equal(log->heatmaps[1].read_bins[2], 202);
	assert_int_equal(log->heatmaps[2].nbins, 3);
	assert_int_equal(log->heatmaps[2].write_bins[1], 101);
	assert_int_equal(log->heatmaps[2].write_bins[2], 0);
	assert_int_equal(log->heatmaps[2].read_bins[2], 0);
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

static void test_not_a_log(void **state)
{
	static const char text[] = "#!/bin/sh\necho this is not a Darshan log\n";
	struct craft c;
	struct bb f;

	(void)state;
	parse_fails("", 0, 0, EINVAL, "not a Darshan log");
	parse_fails(text, sizeof(text), 0, EINVAL, "not a Darshan log");
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	f = craft_log(&c);
	f.p[9] ^= 0x40;
	parse_fails(f.p, f.len, 0, EINVAL, "bad magic number");
	f.p[9] ^= 0x40;
	parse_fails(f.p, 1000, 0, EINVAL, "truncated: a format 3.41 header is 1328 bytes");
	free(f.p);
	craft_free(&c);
}

static void test_versions(void **state)
{
	static const char *const old[] = { "2.06", "3.00", "3.30", "1.24" };
	static const char *const newer[] = { "3.42", "4.00" };
	struct craft c;
	struct bb f;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	f = craft_log(&c);
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		memcpy(f.p, old[i], 5);
		parse_fails(f.p, f.len, 0, ENOTSUP, "unsupported Darshan log format version");
	}
	for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++) {
		memcpy(f.p, newer[i], 5);
		parse_fails(f.p, f.len, 0, ENOTSUP, "newer than this reader knows");
	}
	memcpy(f.p, "3.41", 5);
	f.p[16] = IOACCT_DARSHAN_BZIP2;
	parse_fails(f.p, f.len, 0, ENOTSUP, "bzip2");
	f.p[16] = 7;
	parse_fails(f.p, f.len, 0, EINVAL, "unknown compression");
	free(f.p);
	craft_free(&c);
}

/* Every proper prefix of a log is an error with a message, never a crash. */
static void test_every_truncation(void **state)
{
	struct craft c;
	struct bb f;
	char err[512];

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	f = craft_log(&c);
	for (size_t n = 0; n < f.len; n++) {
		struct ioacct_darshan_log *log = ioacct_darshan_parse(f.p, n, 0, err, sizeof(err));

		if (log)
			fail_msg("a log cut at %zu of %zu bytes parsed", n, f.len);
		assert_true(err[0] != '\0');
	}
	free(f.p);
	craft_free(&c);
}

/* Any byte flipped: a log or an error with a message (zlib's checksum catches most). */
static void test_every_flipped_byte(void **state)
{
	struct craft c;
	struct bb f;
	char err[512];
	size_t errors = 0;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	f = craft_log(&c);
	for (size_t i = 0; i < f.len; i++) {
		struct ioacct_darshan_log *log;

		f.p[i] ^= 0xff;
		err[0] = '\0';
		log = ioacct_darshan_parse(f.p, f.len, 64 << 20, err, sizeof(err));
		if (!log) {
			assert_true(err[0] != '\0');
			errors++;
		}
		ioacct_darshan_free(log);
		f.p[i] ^= 0xff;
	}
	/* Bytes of the compressed regions are all guarded; unused header slots are not. */
	assert_true(errors > f.len - 1328);
	free(f.p);
	craft_free(&c);
}

static void set_word(struct bb *f, size_t off, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		f->p[off + i] = (unsigned char)(v >> (8 * i));
}

static void test_bad_lengths(void **state)
{
	struct craft c;
	struct bb f, keep;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_NOCOMP, false);
	f = craft_log(&c);
	keep.p = malloc(f.len);
	assert_non_null(keep.p);
	memcpy(keep.p, f.p, f.len);
	keep.len = f.len;

	/* Name table and POSIX region lengths past the end. */
	set_word(&f, 40, UINT64_MAX - 10);
	parse_fails(f.p, f.len, 0, EINVAL, "name table region");
	memcpy(f.p, keep.p, f.len);
	set_word(&f, 48 + 16 + 8, 1ULL << 62);
	parse_fails(f.p, f.len, 0, EINVAL, "POSIX module region");
	memcpy(f.p, keep.p, f.len);
	set_word(&f, 48 + 16, 12);
	parse_fails(f.p, f.len, 0, EINVAL, "does not lie within the file");
	memcpy(f.p, keep.p, f.len);

	/* A POSIX region that is not whole records. */
	set_word(&f, 48 + 16 + 8, 704 + 100);
	parse_fails(f.p, f.len, 0, EINVAL, "not a whole number of 704-byte version 4 records");
	memcpy(f.p, keep.p, f.len);

	/* A module record version this reader does not know. */
	f.p[1072 + 4] = 9;
	parse_fails(f.p, f.len, 0, ENOTSUP, "the POSIX records are version 9");
	memcpy(f.p, keep.p, f.len);
	free(f.p);
	free(keep.p);
	craft_free(&c);
}

static void test_bad_regions(void **state)
{
	struct craft c;
	struct bb f;

	(void)state;
	/* A heatmap that claims 2^60 bins. */
	craft_341(&c, IOACCT_DARSHAN_NOCOMP, false);
	c.mods[2].data.len = 0;
	heatmap(&c.mods[2].data, "heatmap:POSIX", 0, 0.1, 2);
	set_word(&c.mods[2].data, 24, 1ULL << 60);
	f = craft_log(&c);
	parse_fails(f.p, f.len, 0, EINVAL, "claims 1152921504606846976 bins");
	free(f.p);
	/* A zero bin width. */
	set_word(&c.mods[2].data, 24, 2);
	set_word(&c.mods[2].data, 16, 0);
	f = craft_log(&c);
	parse_fails(f.p, f.len, 0, EINVAL, "bin width of 0 s");
	free(f.p);
	craft_free(&c);

	/* A name without its NUL; stray bytes after the last name. */
	craft_341(&c, IOACCT_DARSHAN_NOCOMP, false);
	c.names.len--;
	f = craft_log(&c);
	parse_fails(f.p, f.len, 0, EINVAL, "its last name has no end");
	free(f.p);
	c.names.len = 0;
	name_rec(&c.names, "/x");
	bb_put(&c.names, "abc", 3);
	f = craft_log(&c);
	parse_fails(f.p, f.len, 0, EINVAL, "3 stray bytes");
	free(f.p);
	craft_free(&c);

	/* A job region too short, a mount line without a tab. */
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	c.job.len = 500;
	f = craft_log(&c);
	parse_fails(f.p, f.len, 0, EINVAL, "job region holds 500 bytes");
	free(f.p);
	free(c.job.p);
	c.job = job_region(41, false, "exe\next4 /");
	f = craft_log(&c);
	parse_fails(f.p, f.len, 0, EINVAL, "mount table line 1 has no tab");
	free(f.p);
	craft_free(&c);
}

/* zlib: a stream cut short, garbage after a stream, garbage instead of a stream. */
static void test_bad_zlib(void **state)
{
	struct craft c;
	struct bb f;
	uint64_t off, len;

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	f = craft_log(&c);
	off = 0, len = 0;
	for (int i = 0; i < 8; i++) {
		off |= (uint64_t)f.p[48 + 16 + i] << (8 * i);
		len |= (uint64_t)f.p[56 + 16 + i] << (8 * i);
	}
	/* Shorter region: the stream ends early. */
	set_word(&f, 56 + 16, len - 5);
	parse_fails(f.p, f.len, 0, EINVAL, "POSIX module");
	set_word(&f, 56 + 16, len);
	/* Garbage where the region starts. */
	memset(f.p + off, 0x55, 4);
	parse_fails(f.p, f.len, 0, EINVAL, "does not decompress");
	free(f.p);
	craft_free(&c);
}

/* A region that inflates a thousandfold is refused under a memory limit, not allocated. */
static void test_zlib_bomb(void **state)
{
	struct craft c;
	struct bb f;
	size_t n = 704 * 40000;   /* 28 MB of zero records, about 28 KB compressed */

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	c.mods[0].data.p = realloc(c.mods[0].data.p, n);
	assert_non_null(c.mods[0].data.p);
	memset(c.mods[0].data.p, 0, n);
	c.mods[0].data.len = n;
	f = craft_log(&c);
	assert_true(f.len < n / 100);
	parse_fails(f.p, f.len, 8 << 20, EFBIG, "inflates to more than");
	free(f.p);
	craft_free(&c);
}

static void test_hash(void **state)
{
	/* Record ids from darshan-parser's output of the sample logs. */
	static const struct {
		const char *name;
		uint64_t id;
	} v[] = {
		{ "/tmp/test/macsio-timings.log", 326674217917622578ULL },
		{ "/tmp/test/macsio_hdf5_000.h5", 8409215679985794245ULL },
		{ "/global/cscratch1/sd/ssnyder/test123.h5", 10384774853006289996ULL },
		{ "<STDOUT>", 15920181672442173319ULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_true(ioacct_darshan_hash(v[i].name, strlen(v[i].name), 0) == v[i].id);
	assert_true(ioacct_darshan_hash("x", 1, 0) != ioacct_darshan_hash("x", 1, 1));
}

static void test_lookups(void **state)
{
	struct ioacct_darshan_mount m[] = {
		{ (char *)"/", (char *)"ext4" }, { (char *)"/home", (char *)"nfs" },
		{ (char *)"/home/big", (char *)"lustre" }, { (char *)"/scratch/", (char *)"gpfs" },
	};
	struct ioacct_darshan_log log = { .mounts = m, .nmounts = 4 };

	(void)state;
	assert_string_equal(ioacct_darshan_mount_of(&log, "/home/u/f")->path, "/home");
	assert_string_equal(ioacct_darshan_mount_of(&log, "/home2/u/f")->path, "/");
	assert_string_equal(ioacct_darshan_mount_of(&log, "/home/big")->path, "/home/big");
	assert_string_equal(ioacct_darshan_mount_of(&log, "/home/bigger")->path, "/home");
	assert_string_equal(ioacct_darshan_mount_of(&log, "/scratch/x")->path, "/scratch/");
	assert_null(ioacct_darshan_mount_of(&log, "<STDOUT>"));

	assert_true(ioacct_darshan_skips_mount("/dev/shm", "tmpfs"));
	assert_true(ioacct_darshan_skips_mount("/tmp", "tmpfs"));
	assert_true(ioacct_darshan_skips_mount("/var/tmp", "ext4"));
	assert_true(ioacct_darshan_skips_mount("/proc", "proc"));
	assert_true(ioacct_darshan_skips_mount("/sys/fs/cgroup", "cgroup2"));
	assert_false(ioacct_darshan_skips_mount("/", "ext4"));
	assert_false(ioacct_darshan_skips_mount("/variable", "xfs"));
	assert_false(ioacct_darshan_skips_mount("/var/opt/cray/dws/mounts/j1", "lustre"));
	assert_false(ioacct_darshan_skips_mount("/scratch", "lustre"));
}

/* Duplicate ids: the first non-empty name wins, as in darshan-util. */
static void test_duplicate_names(void **state)
{
	struct craft c;
	struct bb f;
	struct ioacct_darshan_log *log;
	uint64_t id = ioacct_darshan_hash("/scratch/a", 10, 0);

	(void)state;
	craft_341(&c, IOACCT_DARSHAN_ZLIB, false);
	c.names.len = 0;
	bb_u64(&c.names, id);
	bb_put(&c.names, "", 1);
	bb_u64(&c.names, id);
	bb_put(&c.names, "/scratch/a", 11);
	bb_u64(&c.names, id);
	bb_put(&c.names, "/other", 7);
	f = craft_log(&c);
	log = parse_ok(&f);
	assert_int_equal(log->nnames, 1);
	assert_string_equal(ioacct_darshan_name_of(log, id), "/scratch/a");
	assert_null(ioacct_darshan_name_of(log, id + 1));
	ioacct_darshan_free(log);
	free(f.p);
	craft_free(&c);
}

/* Totals: sums, maxima, earliest non-zero start, common sizes, fastest and slowest rank. */
static void test_totals_rules(void **state)
{
	struct ioacct_darshan_record recs[2], t;
	struct ioacct_darshan_log log = { .nrecs = { [IOACCT_DARSHAN_POSIX] = 2 } };

	(void)state;
	memset(recs, 0, sizeof(recs));
	log.recs[IOACCT_DARSHAN_POSIX] = recs;
	for (int r = 0; r < 2; r++) {
		recs[r].id = 77;
		recs[r].rank = r;
		recs[r].counters[0] = 3;                       /* OPENS */
		recs[r].counters[1] = -1;                      /* FILENOS unknown */
		recs[r].counters[14] = 100 * (r + 1);          /* BYTES_READ */
		recs[r].counters[16] = 1000 * (r + 1);         /* MAX_BYTE_READ */
		recs[r].fcounters[1] = r ? 0.5 : 0;            /* READ_START: min non-zero */
		recs[r].fcounters[8] = 1.0 + r;                /* READ_TIME */
	}
	/* ACCESS tables: {4096 x 10, 512 x 2} and {512 x 9}. */
	recs[0].counters[57] = 4096, recs[0].counters[61] = 10;
	recs[0].counters[58] = 512, recs[0].counters[62] = 2;
	recs[1].counters[57] = 512, recs[1].counters[61] = 9;
	assert_int_equal(ioacct_darshan_total(&log, IOACCT_DARSHAN_POSIX, &t), 2);
	assert_int_equal(t.counters[0], 6);
	assert_int_equal(t.counters[1], -1);
	assert_int_equal(t.counters[14], 300);
	assert_int_equal(t.counters[16], 2000);
	assert_true(t.fcounters[1] == 0.5);
	assert_true(t.fcounters[8] == 3.0);
	assert_int_equal(t.rank, -1);
	assert_true(t.id == 77);
	/* darshan-util adds to a value already in the table without sorting again. */
	assert_int_equal(t.counters[57], 4096);
	assert_int_equal(t.counters[61], 10);
	assert_int_equal(t.counters[58], 512);
	assert_int_equal(t.counters[62], 11);
	/* Fastest: rank 0 (1 s), slowest: rank 1 (2 s), with their bytes. */
	assert_int_equal(t.counters[65], 0);
	assert_int_equal(t.counters[66], 100);
	assert_int_equal(t.counters[67], 1);
	assert_int_equal(t.counters[68], 200);
	assert_true(t.fcounters[13] == 1.0 && t.fcounters[14] == 2.0);
	/* Different files: no fastest or slowest rank. */
	recs[1].id = 78;
	ioacct_darshan_total(&log, IOACCT_DARSHAN_POSIX, &t);
	assert_true(t.id == 0);
	assert_int_equal(t.counters[65], -1);
	assert_true(t.fcounters[14] == 0);
}

static void test_counter_index(void **state)
{
	bool f;

	(void)state;
	assert_int_equal(ioacct_darshan_counter_index(IOACCT_DARSHAN_POSIX, "POSIX_BYTES_READ", &f),
			 IOACCT_DARSHAN_POSIX_BYTES_READ);
	assert_false(f);
	assert_int_equal(ioacct_darshan_counter_index(IOACCT_DARSHAN_POSIX, "POSIX_F_META_TIME", &f),
			 IOACCT_DARSHAN_POSIX_F_META_TIME);
	assert_true(f);
	assert_int_equal(ioacct_darshan_counter_index(IOACCT_DARSHAN_STDIO, "STDIO_F_READ_TIME", &f), 2);
	assert_int_equal(ioacct_darshan_counter_index(IOACCT_DARSHAN_MPIIO, "POSIX_OPENS", &f), -1);
	assert_string_equal(ioacct_darshan_mod_name(IOACCT_DARSHAN_MOD_HEATMAP), "HEATMAP");
	assert_null(ioacct_darshan_mod_name(40));
}

static void test_read_file_errors(void **state)
{
	char err[512];

	(void)state;
	assert_null(ioacct_darshan_read("/nonexistent/x.darshan", err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err, "cannot read /nonexistent/x.darshan"));
	assert_null(ioacct_darshan_read("/", err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_341_zlib),
		cmocka_unit_test(test_341_nocomp_bigendian),
		cmocka_unit_test(test_310_conversions),
		cmocka_unit_test(test_321_posix_v1_v2),
		cmocka_unit_test(test_320_posix_v2),
		cmocka_unit_test(test_heatmap_off_by_one),
		cmocka_unit_test(test_not_a_log),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_every_flipped_byte),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_bad_regions),
		cmocka_unit_test(test_bad_zlib),
		cmocka_unit_test(test_zlib_bomb),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_duplicate_names),
		cmocka_unit_test(test_totals_rules),
		cmocka_unit_test(test_counter_index),
		cmocka_unit_test(test_read_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
