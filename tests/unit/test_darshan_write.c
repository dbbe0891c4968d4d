// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the Darshan log writer (lib/darshan/darshan_write.c):
 * - the byte layout of a written log, checked at the offsets that
 *   darshan-log-format.h, darshan-posix-log-format.h and
 *   darshan-heatmap-log-format.h give (header fields, the job struct, the
 *   exe and mount table, name records, 704-byte POSIX records, HEATMAP
 *   and DXT_POSIX records), decompressing the regions with zlib directly, not the reader;
 * - the round trip: a job written as a log and read back has the same
 *   counters, bins and job fields; the sample logs (when ../shared is there)
 *   written again as format 3.41 read back record for record;
 * - heatmap bins merged pairwise past 200, split over ranks (issue 38), a
 *   mount table that does not fit, the Darshan filter, writing a file;
 * - the job record PyDarshan's summary reads (issue 38): lib_ver, every
 *   metadata line key=value, the command line as the exe, nprocs, times;
 * - ioacct's own records (a mount's rest, "other files") after the modules,
 *   found by the trailer, named apart from Darshan's name table.
 * No darshan-parser or PyDarshan is packaged for Debian; these checks are
 * what stands for them (docs/darshan.md).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "darshan.h"
#include "filebuild.h"
#include "jobbuild.h"
#include "report.h"

#define SEC JB_SEC
#define MIB JB_MIB

enum { M_SCRATCH = 3, M_ROOT = 1, M_SHM = 7, M_PROC = 9 };

static struct jb job(uint64_t width, uint64_t run)
{
	struct jb b;

	jb_init(&b, width, run);
	b.jd->job.start_ns += 123456789; /* nanoseconds, kept by format 3.41 */
	b.jd->job.end_ns += 123456789;
	b.jd->job.uid = 1001;
	ioacct_strlcpy(b.jd->job.name, "ior -w -t 1m", sizeof(b.jd->job.name));
	jb_mount(&b, M_ROOT, "/", "ext4");
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_mount(&b, M_SHM, "/dev/shm", "tmpfs");
	jb_mount(&b, M_PROC, "/proc", "proc");
	jb_step(&b, 0, 0, run);
	return b;
}

/* Reads and writes on /scratch and /, small I/O on /dev/shm, a stat on /proc. */
static void workload(struct jb *b)
{
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_OPEN, 0, 12, 2, 0, 120000);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 64, 0, 64 * MIB, 900000000);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_WRITE, 3, 10, 1, 9 * 4096, 1234567);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_READ, 7, 100, 0, 100 * 65536, 22222222);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_FSYNC, 7, 3, 0, 0, 3000001);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_STAT, 8, 40, 4, 0, 80001);
	jb_add(b, 0, M_SCRATCH, IOACCT_OP_RENAME, 8, 2, 0, 0, 5000);
	jb_add(b, 0, M_ROOT, IOACCT_OP_READ, 1, 30, 0, 30 * 512, 300);
	jb_add(b, 0, M_ROOT, IOACCT_OP_OPEN, 1, 5, 5, 0, 1);
	jb_add(b, 0, M_SHM, IOACCT_OP_WRITE, 2, 7, 0, 7 * 100, 77);
	jb_add(b, 0, M_PROC, IOACCT_OP_STAT, 0, 1, 0, 0, 10);
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double rdf(const unsigned char *p)
{
	uint64_t v = rd64(p);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/* A region of the file, inflated with zlib alone. */
static unsigned char *inflate_at(const unsigned char *file, uint64_t off, uint64_t len,
				 size_t *out)
{
	uLongf n = 1 << 20;
	unsigned char *buf = malloc(n);

	assert_non_null(buf);
	assert_int_equal(uncompress(buf, &n, file + off, (uLong)len), Z_OK);
	*out = n;
	return buf;
}

static struct ioacct_darshan_log *log_of(struct jb *b, struct ioacct_report **r, bool filter)
{
	struct ioacct_darshan_log *log;

	*r = ioacct_report_create(b->jd, NULL, NULL);
	assert_non_null(*r);
	log = ioacct_darshan_from_report(*r, filter);
	assert_non_null(log);
	return log;
}

static void test_byte_layout(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log;
	unsigned char *f, *job_raw, *names, *posix, *hm;
	size_t len, jn, nn, pn, hn;
	void *buf;
	char err[256];
	const char *trail;

	(void)state;
	workload(&b);
	log = log_of(&b, &r, false);
	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	f = buf;

	/* Header: darshan_header of format 3.41, 1328 bytes. */
	assert_memory_equal(f, "3.41\0\0\0\0", 8);
	assert_true(rd64(f + 8) == IOACCT_DARSHAN_MAGIC);
	assert_int_equal(f[16], 0);                          /* zlib */
	assert_true(rd64(f + 24) == 0);                      /* partial flag */
	assert_true(rd64(f + 32) > 1328);                    /* name table after the job */
	assert_int_equal(rd32(f + 1072 + 4 * 1), 4);         /* POSIX record version */
	assert_int_equal(rd32(f + 1072 + 4 * 15), 1);        /* HEATMAP */
	for (unsigned int id = 0; id < 64; id++)
		if (id != 1 && id != 15) {
			assert_true(rd64(f + 48 + 16 * id + 8) == 0);
			assert_int_equal(rd32(f + 1072 + 4 * id), 0);
		}
	/* Regions in order: job at 1328, names, POSIX, HEATMAP, to the end of the file. */
	assert_true(rd64(f + 48 + 16) == rd64(f + 32) + rd64(f + 40));
	assert_true(rd64(f + 48 + 16 * 15) == rd64(f + 48 + 16) + rd64(f + 56 + 16));
	assert_true(rd64(f + 48 + 16 * 15) + rd64(f + 56 + 16 * 15) == len);

	/* Job region: 7 int64, 1024 bytes of metadata, exe, "\n<type>\t<path>" per mount. */
	job_raw = inflate_at(f, 1328, rd64(f + 32) - 1328, &jn);
	assert_true(rd64(job_raw) == 1001);
	assert_true(rd64(job_raw + 8) == 1700000000);
	assert_true(rd64(job_raw + 16) == 123456789);
	assert_true(rd64(job_raw + 24) == 1700000010);
	assert_true(rd64(job_raw + 32) == 123456789);
	assert_true(rd64(job_raw + 40) == 1);
	assert_true(rd64(job_raw + 48) == 77);
	assert_non_null(strstr((char *)job_raw + 56, "cluster=test\n"));
	assert_non_null(strstr((char *)job_raw + 56, "bin_width_ns=1000000000\n"));
	trail = (const char *)job_raw + 56 + 1024;
	assert_string_equal(trail, "ior -w -t 1m\next4\t/\nlustre\t/scratch\ntmpfs\t/dev/shm\nproc\t/proc");
	assert_int_equal(jn, 1080 + strlen(trail) + 1);

	/* Name table: id, NUL-terminated name; ids are Darshan's hash of the name. */
	names = inflate_at(f, rd64(f + 32), rd64(f + 40), &nn);
	for (size_t p = 0, k = 0; p < nn; k++) {
		const char *name = (const char *)names + p + 8;

		assert_true(rd64(names + p) == ioacct_darshan_hash(name, strlen(name), 0));
		p += 8 + strlen(name) + 1;
		assert_true(k < 5);
	}

	/* POSIX: 4 records of 704 bytes (16 + 69 * 8 + 17 * 8), rank -1. */
	posix = inflate_at(f, rd64(f + 48 + 16), rd64(f + 56 + 16), &pn);
	assert_int_equal(pn, 4 * 704);
	{
		const unsigned char *s = posix + 704;   /* /scratch, the job's second mount */
		const unsigned char *c = s + 16, *fl = s + 16 + 69 * 8;

		assert_true(rd64(s) == ioacct_darshan_hash("/scratch", 8, 0));
		assert_true((int64_t)rd64(s + 8) == -1);
		assert_true(rd64(c + 0 * 8) == 10);                   /* OPENS: 12 - 2 failed */
		assert_true((int64_t)rd64(c + 1 * 8) == -1);          /* FILENOS: not measured */
		assert_true(rd64(c + 3 * 8) == 100);                  /* READS */
		assert_true(rd64(c + 4 * 8) == 73);                   /* WRITES: 64 + 9 */
		assert_true(rd64(c + 5 * 8) == 0);                    /* SEEKS: none */
		assert_true(rd64(c + 6 * 8) == 36);                   /* STATS */
		assert_true(rd64(c + 8 * 8) == 3);                    /* FSYNCS */
		assert_true(rd64(c + 10 * 8) == 2);                   /* RENAME_SOURCES */
		assert_true(rd64(c + 14 * 8) == 100 * 65536);         /* BYTES_READ */
		assert_true(rd64(c + 15 * 8) == 64 * MIB + 9 * 4096); /* BYTES_WRITTEN */
		assert_true(rd64(c + (29 + 3) * 8) == 100);           /* SIZE_READ_10K_100K */
		assert_true(rd64(c + (39 + 4) * 8) == 64);            /* SIZE_WRITE_100K_1M: 1 MiB */
		assert_true(rd64(c + (39 + 2) * 8) == 9);             /* SIZE_WRITE_1K_10K */
		assert_true(rdf(fl + 8 * 8) == 22222222 / 1e9);       /* F_READ_TIME */
		/* F_WRITE_TIME holds the fsyncs' time, as Darshan's does; F_META_TIME not. */
		assert_true(rdf(fl + 9 * 8) == (901234567 + 3000001) / 1e9);
		assert_true(rdf(fl + 10 * 8) == (120000 + 80001 + 5000) / 1e9);
		assert_true(rdf(fl + 0 * 8) == -1);                   /* timestamps: not measured */
	}

	/* HEATMAP: id, rank, width (double), nbins, 2 pointers, write bins, read bins. */
	hm = inflate_at(f, rd64(f + 48 + 16 * 15), rd64(f + 56 + 16 * 15), &hn);
	assert_true(rd64(hm) == ioacct_darshan_hash("heatmap:POSIX", 13, 0));
	assert_true(rd64(hm + 8) == 0);
	assert_true(rdf(hm + 16) == 1.0);
	assert_true(rd64(hm + 24) == 10);
	assert_int_equal(hn, 48 + 2 * 10 * 8);
	assert_true(rd64(hm + 48 + 0 * 8) == 64 * MIB);           /* write bin 0 */
	assert_true(rd64(hm + 48 + 2 * 8) == 700);                /* write bin 2: /dev/shm */
	assert_true(rd64(hm + 48 + 10 * 8 + 7 * 8) == 100 * 65536); /* read bin 7 */
	assert_true(rd64(hm + 48 + 10 * 8 + 1 * 8) == 30 * 512);  /* read bin 1: / */

	free(job_raw);
	free(names);
	free(posix);
	free(hm);
	free(buf);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void assert_logs_equal(const struct ioacct_darshan_log *a, const struct ioacct_darshan_log *b)
{
	assert_true(a->uid == b->uid && a->jobid == b->jobid && a->nprocs == b->nprocs);
	assert_true(a->start_sec == b->start_sec && a->start_nsec == b->start_nsec);
	assert_true(a->end_sec == b->end_sec && a->end_nsec == b->end_nsec);
	assert_string_equal(a->exe, b->exe);
	assert_int_equal(a->nmounts, b->nmounts);
	for (size_t i = 0; i < a->nmounts; i++) {
		assert_string_equal(a->mounts[i].path, b->mounts[i].path);
		assert_string_equal(a->mounts[i].fstype, b->mounts[i].fstype);
	}
	assert_int_equal(a->nnames, b->nnames);
	for (size_t i = 0; i < a->nnames; i++) {
		assert_true(a->names[i].id == b->names[i].id);
		assert_string_equal(a->names[i].name, b->names[i].name);
	}
	for (int k = 0; k < IOACCT_DARSHAN_NKINDS; k++) {
		assert_int_equal(a->nrecs[k], b->nrecs[k]);
		if (a->nrecs[k])
			assert_memory_equal(a->recs[k], b->recs[k],
					    a->nrecs[k] * sizeof(struct ioacct_darshan_record));
	}
	assert_int_equal(a->nown, b->nown);
	if (a->nown)
		assert_memory_equal(a->own, b->own, a->nown * sizeof(struct ioacct_darshan_record));
	assert_int_equal(a->nheatmaps, b->nheatmaps);
	for (size_t i = 0; i < a->nheatmaps; i++) {
		const struct ioacct_darshan_heatmap *x = &a->heatmaps[i], *y = &b->heatmaps[i];

		assert_true(x->id == y->id && x->rank == y->rank && x->nbins == y->nbins);
		assert_true(x->bin_width == y->bin_width);
		assert_memory_equal(x->read_bins, y->read_bins, x->nbins * sizeof(int64_t));
		assert_memory_equal(x->write_bins, y->write_bins, x->nbins * sizeof(int64_t));
	}
	assert_int_equal(a->ndxt, b->ndxt);
	for (size_t i = 0; i < a->ndxt; i++) {
		const struct ioacct_darshan_dxt *x = &a->dxt[i], *y = &b->dxt[i];

		assert_true(x->id == y->id && x->rank == y->rank);
		assert_true(x->shared_record == y->shared_record);
		assert_string_equal(x->hostname, y->hostname);
		assert_int_equal(x->nwrites, y->nwrites);
		assert_int_equal(x->nreads, y->nreads);
		if (x->nwrites)
			assert_memory_equal(x->writes, y->writes, x->nwrites * sizeof(*x->writes));
		if (x->nreads)
			assert_memory_equal(x->reads, y->reads, x->nreads * sizeof(*x->reads));
	}
}

static struct ioacct_darshan_log *round_trip(const struct ioacct_darshan_log *log)
{
	struct ioacct_darshan_log *back;
	char err[512];
	void *buf;
	size_t len;

	if (ioacct_darshan_write(log, &buf, &len, err, sizeof(err)))
		fail_msg("write: %s", err);
	back = ioacct_darshan_parse(buf, len, 0, err, sizeof(err));
	if (!back)
		fail_msg("read back: %s", err);
	free(buf);
	return back;
}

/* Written by us, read by our reader: the same counters as the job's report. */
static void test_round_trip_job(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log, *back;
	struct ioacct_named_counter nc[IOACCT_NAMED_COUNTERS];

	(void)state;
	workload(&b);
	log = log_of(&b, &r, false);
	back = round_trip(log);
	assert_logs_equal(log, back);
	assert_string_equal(back->version, "3.41");
	assert_int_equal(back->nrecs[IOACCT_DARSHAN_POSIX], r->nmounts);
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_darshan_record *rec = &back->recs[IOACCT_DARSHAN_POSIX][i];
		size_t n = ioacct_report_counters(&r->mounts[i], nc);

		assert_string_equal(ioacct_darshan_name_of(back, rec->id), r->mounts[i].path);
		assert_string_equal(ioacct_darshan_mount_of(back, r->mounts[i].path)->fstype,
				    r->mounts[i].fstype);
		for (size_t k = 0; k < n; k++) {
			bool is_float;
			int idx;

			if (!nc[k].darshan)
				continue;
			idx = ioacct_darshan_counter_index(IOACCT_DARSHAN_POSIX, nc[k].name, &is_float);
			assert_true(idx >= 0);
			if (is_float)
				assert_true(rec->fcounters[idx] == (double)nc[k].value / 1e9);
			else
				assert_true(rec->counters[idx] == (int64_t)nc[k].value);
		}
	}
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * DXT_POSIX: three writes and a read on one file, a write on another, added
 * to a job's log; the region checked byte by byte at darshan-dxt-log-format.h's
 * offsets (104-byte head: id, rank, shared_record, hostname[64], write_count,
 * read_count; then 32-byte segments, writes before reads), then read back.
 */
static void test_dxt(void **state)
{
	static const char *const fa = "/scratch/u/a.dat", *const fb = "/scratch/u/b.dat";
	const struct ioacct_darshan_dxt_seg w[3] = {
		{ 0, 4096, 0.5, 0.625 }, { 4096, 100, 1.25, 1.5 }, { 1 << 20, 7, 2, 2.5 },
	}, rd = { 8, 16, 3, 3.25 }, wb = { 0, 1, 4, 4.5 };
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log, *back;
	unsigned char *file, *raw;
	const unsigned char *p;
	size_t len, n, names;
	char err[256];
	void *buf;

	(void)state;
	workload(&b);
	log = log_of(&b, &r, false);
	names = log->nnames;
	for (int i = 0; i < 3; i++)
		assert_int_equal(ioacct_darshan_dxt_add(log, fa, 0, "node7", true, &w[i]), 0);
	assert_int_equal(ioacct_darshan_dxt_add(log, fa, 0, "node7", false, &rd), 0);
	assert_int_equal(ioacct_darshan_dxt_add(log, fb, 0, "node7", true, &wb), 0);
	assert_int_equal(log->ndxt, 2);
	assert_int_equal(log->nnames, names + 2);
	for (size_t i = 1; i < log->nnames; i++)
		assert_true(log->names[i - 1].id < log->names[i].id);
	assert_string_equal(ioacct_darshan_name_of(log, log->dxt[0].id), fa);

	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	file = buf;
	assert_int_equal(rd32(file + 1072 + 4 * 10), 1);
	raw = inflate_at(file, rd64(file + 48 + 16 * 10), rd64(file + 56 + 16 * 10), &n);
	assert_int_equal(n, 2 * 104 + 5 * 32);
	p = raw;
	assert_true(rd64(p) == ioacct_darshan_hash(fa, strlen(fa), 0));
	assert_true(rd64(p + 8) == 0);
	assert_true((int64_t)rd64(p + 16) == -1);
	assert_string_equal((const char *)p + 24, "node7");
	assert_true(rd64(p + 88) == 3 && rd64(p + 96) == 1);
	for (int i = 0; i < 3; i++) {
		const unsigned char *s = p + 104 + 32 * i;

		assert_true((int64_t)rd64(s) == w[i].offset && (int64_t)rd64(s + 8) == w[i].length);
		assert_true(rdf(s + 16) == w[i].start && rdf(s + 24) == w[i].end);
	}
	assert_true(rd64(p + 104 + 96) == 8 && rd64(p + 104 + 104) == 16);
	p += 104 + 4 * 32;
	assert_true(rd64(p) == ioacct_darshan_hash(fb, strlen(fb), 0));
	assert_true(rd64(p + 88) == 1 && rd64(p + 96) == 0);
	free(raw);
	free(buf);

	back = round_trip(log);
	assert_logs_equal(log, back);
	assert_string_equal(ioacct_darshan_name_of(back, back->dxt[1].id), fb);
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * A trace gathered apart moved into a job's log (iorun --trace): records
 * appended, names merged in id order; then a corrupt DXT region (a write
 * count past the region's end) refused with a message, not a crash.
 */
static void test_dxt_move_and_corrupt(void **state)
{
	const struct ioacct_darshan_dxt_seg seg = { 0, 10, 0.25, 0.5 };
	struct ioacct_darshan_log *log = calloc(1, sizeof(*log)), *trace = calloc(1, sizeof(*trace));
	struct ioacct_darshan_log *back;
	unsigned char *file, *raw, *z;
	uint64_t off, zlen;
	uLongf zn;
	size_t len, n, names;
	char err[256];
	void *buf;

	(void)state;
	assert_non_null(log);
	assert_non_null(trace);
	log->exe = strdup("job");
	assert_int_equal(ioacct_darshan_dxt_add(log, "/a", 0, "h", true, &seg), 0);
	for (int i = 0; i < 50; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/f%d", i);
		assert_int_equal(ioacct_darshan_dxt_add(trace, path, 0, "h", i % 2, &seg), 0);
	}
	names = log->nnames + trace->nnames;
	assert_int_equal(ioacct_darshan_dxt_move(log, trace), 0);
	assert_int_equal(trace->ndxt, 0);
	assert_int_equal(log->ndxt, 51);
	assert_int_equal(log->nnames, names);
	for (size_t i = 1; i < log->nnames; i++)
		assert_true(log->names[i - 1].id < log->names[i].id);
	for (size_t i = 0; i < log->ndxt; i++)
		assert_non_null(ioacct_darshan_name_of(log, log->dxt[i].id));
	assert_string_equal(ioacct_darshan_name_of(log, log->dxt[50].id), "/f49");
	back = round_trip(log);
	assert_logs_equal(log, back);
	ioacct_darshan_free(back);

	/* No POSIX or HEATMAP records: the DXT region is the file's last; rewrite it corrupt. */
	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	file = buf;
	off = rd64(file + 48 + 16 * 10);
	zlen = rd64(file + 56 + 16 * 10);
	assert_true(off + zlen == len);
	raw = inflate_at(file, off, zlen, &n);
	raw[88 + 7] = 0x01; /* write_count of the first record: 2^56 + 1 */
	zn = compressBound((uLong)n);
	z = malloc(zn);
	assert_non_null(z);
	assert_int_equal(compress2(z, &zn, raw, (uLong)n, Z_DEFAULT_COMPRESSION), Z_OK);
	file = realloc(file, off + zn);
	assert_non_null(file);
	memcpy(file + off, z, zn);
	for (int i = 0; i < 8; i++)
		file[56 + 16 * 10 + i] = (unsigned char)((uint64_t)zn >> (8 * i));
	back = ioacct_darshan_parse(file, off + zn, 0, err, sizeof(err));
	assert_null(back);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "DXT_POSIX record 1 claims"));
	/* Cut short: the last record's segment half gone. */
	raw[88 + 7] = 0;
	zn = compressBound((uLong)n);
	assert_int_equal(compress2(z, &zn, raw, (uLong)n - 16, Z_DEFAULT_COMPRESSION), Z_OK);
	memcpy(file + off, z, zn);
	for (int i = 0; i < 8; i++)
		file[56 + 16 * 10 + i] = (unsigned char)((uint64_t)zn >> (8 * i));
	back = ioacct_darshan_parse(file, off + zn, 0, err, sizeof(err));
	assert_null(back);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "DXT_POSIX record 51 claims 1 write"));
	free(z);
	free(raw);
	free(file);
	ioacct_darshan_free(trace);
	ioacct_darshan_free(log);
}

/*
 * sbatch --io-monitor=trace: a trace spooled as a log of its own (DXT records
 * and trace_* metadata alone, as ioacctd writes it) read back and merged
 * into the job's log: records and names moved, trace_* lines appended and
 * nothing else of its metadata; where the spool is.
 */
static void test_trace_spool_merge(void **state)
{
	const struct ioacct_darshan_dxt_seg seg = { 100, 2000, 0.25, 0.5 };
	struct ioacct_darshan_log *log = calloc(1, sizeof(*log)), *trace = calloc(1, sizeof(*trace));
	struct ioacct_darshan_log *spooled, *back;
	char path[64];

	(void)state;
	assert_non_null(log);
	assert_non_null(trace);
	log->exe = strdup("job");
	snprintf(log->metadata, sizeof(log->metadata), "lib_ver=3.4.1\n");
	assert_int_equal(ioacct_darshan_dxt_add(trace, "/w/seq.dat", 1, "vm", true, &seg), 0);
	snprintf(trace->metadata, sizeof(trace->metadata),
		 "h=romio_no_indep_rw=true\ntrace_events=7\ntrace_dropped=3\ntrace_max=4096");
	spooled = round_trip(trace);
	assert_int_equal(ioacct_darshan_trace_merge(log, spooled), 0);
	assert_int_equal(spooled->ndxt, 0);
	assert_int_equal(log->ndxt, 1);
	assert_true(log->dxt[0].rank == 1 && log->dxt[0].nwrites == 1);
	assert_string_equal(ioacct_darshan_name_of(log, log->dxt[0].id), "/w/seq.dat");
	assert_string_equal(log->metadata,
			    "lib_ver=3.4.1\ntrace_events=7\ntrace_dropped=3\ntrace_max=4096\n");
	back = round_trip(log);
	assert_logs_equal(log, back);
	ioacct_darshan_free(back);
	ioacct_darshan_free(spooled);
	ioacct_darshan_free(trace);
	ioacct_darshan_free(log);

	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "c1", 42, path,
						   sizeof(path)), 0);
	assert_string_equal(path, "/var/lib/ioacct/trace/c1-42.darshan");
	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "../x", 42, path,
						   sizeof(path)), -EINVAL);
	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "a/b", 42, path,
						   sizeof(path)), -EINVAL);
	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "", 42, path,
						   sizeof(path)), -EINVAL);
	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "cluster-name-long",
						   42, path, 20), -ENAMETOOLONG);
	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "c", 42, path,
						   sizeof("/var/lib/ioacct/trace/c-42.darshan")), 0);
	assert_int_equal(ioacct_darshan_spool_path("/var/lib/ioacct/ioacct.db", "c", 42, path,
						   sizeof("/var/lib/ioacct/trace/c-42.darshan") - 1),
			 -ENAMETOOLONG);
	assert_int_equal(ioacct_darshan_spool_dir("/var/lib/ioacct/ioacct.db", path, sizeof(path)), 0);
	assert_string_equal(path, "/var/lib/ioacct/trace");
	assert_int_equal(ioacct_darshan_spool_dir("/ioacct.db", path, sizeof(path)), 0);
	assert_string_equal(path, "/trace");
}

/*
 * The job record as PyDarshan's summary reads it (issue 38): the metadata
 * lines split on '\n' (the last one empty) and each on its first '=', with
 * lib_ver among the keys, first, as Darshan's runtime writes it; the command
 * line as the exe before the mount table; nprocs one more than the highest
 * rank; the run time darshan-util computes for format 3.41 from the seconds
 * and nanoseconds.
 */
static void test_job_header(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log, *back;
	unsigned char *f, *job_raw;
	char err[256], *meta, *line, *save = NULL;
	const char *trail;
	size_t len, jn, nlines = 0;
	double run;
	void *buf;

	(void)state;
	workload(&b);
	ioacct_strlcpy(b.jd->job.cmdline, "mpirun -np 4 ./mpiio /scratch/f", sizeof(b.jd->job.cmdline));
	for (int32_t rank = 0; rank < 4; rank++) {
		struct ioacct_file *fl = jb_file(&b, 0, rank, M_SCRATCH, 8 << 20 | 1, 40, "/scratch/f");

		fl->opens = 1;
		jb_file_rw(fl, false, 16, 65536, 100, 100000000, 900000000);
	}
	log = log_of(&b, &r, false);
	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	f = buf;
	job_raw = inflate_at(f, 1328, rd64(f + 32) - 1328, &jn);
	assert_true(rd64(job_raw + 40) == 4);                 /* nprocs: ranks 0..3 */
	run = ((double)rd64(job_raw + 24) + (double)rd64(job_raw + 32) / 1e9) -
	      ((double)rd64(job_raw + 8) + (double)rd64(job_raw + 16) / 1e9);
	assert_true(run == 10.0);
	meta = strndup((const char *)job_raw + 56, 1024);
	assert_non_null(meta);
	assert_true(strlen(meta) > 0 && meta[strlen(meta) - 1] == '\n');
	assert_true(!strncmp(meta, "lib_ver=ioacct-" PACKAGE_VERSION "\n",
			     strlen("lib_ver=ioacct-" PACKAGE_VERSION "\n")));
	for (line = strtok_r(meta, "\n", &save); line; line = strtok_r(NULL, "\n", &save), nlines++)
		assert_non_null(strchr(line, '='));
	assert_true(nlines >= 5);
	trail = (const char *)job_raw + 56 + 1024;
	assert_string_equal(trail, "mpirun -np 4 ./mpiio /scratch/f\next4\t/\nlustre\t/scratch\n"
				   "tmpfs\t/dev/shm\nproc\t/proc");
	free(meta);
	free(job_raw);
	free(buf);

	/* Our reader: the same fields; PyDarshan's metadata dict has lib_ver. */
	back = round_trip(log);
	assert_string_equal(back->exe, "mpirun -np 4 ./mpiio /scratch/f");
	assert_int_equal(back->nprocs, 4);
	assert_true(!strncmp(back->metadata, "lib_ver=ioacct-", 15));
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);

	/* A job stored before its command line was kept: its name, on one line. */
	b.jd->job.cmdline[0] = '\0';
	ioacct_strlcpy(b.jd->job.name, "two\nlines", sizeof(b.jd->job.name));
	log = log_of(&b, &r, false);
	assert_string_equal(log->exe, "two lines");
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* 1000 bins of 1 s: merged pairwise three times, 125 bins of 8 s, bytes kept. */
static void test_heatmap_merging(void **state)
{
	struct jb b = job(SEC, 1000 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log;
	int64_t sum = 0;

	(void)state;
	for (uint32_t bin = 0; bin < 1000; bin += 37)
		jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, bin, 1, 0, 1000 + bin, 1);
	log = log_of(&b, &r, false);
	assert_int_equal(log->nheatmaps, 1);
	assert_int_equal(log->heatmaps[0].nbins, 125);
	assert_true(log->heatmaps[0].bin_width == 8.0);
	for (uint64_t i = 0; i < 125; i++)
		sum += log->heatmaps[0].write_bins[i];
	assert_true(sum == (int64_t)r->all.op[IOACCT_OP_WRITE].bytes);
	assert_true(log->heatmaps[0].write_bins[37 / 8] == 1037);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* --darshan-filter: /dev/shm (tmpfs) and /proc are left out. */
static void test_filter(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log;

	(void)state;
	workload(&b);
	log = log_of(&b, &r, true);
	assert_int_equal(log->nmounts, 2);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 2);
	assert_int_equal(log->heatmaps[0].write_bins[2], 0);
	assert_null(ioacct_darshan_name_of(log, ioacct_darshan_hash("/dev/shm", 8, 0)));
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* More mounts than a job region holds: the table keeps what fits, records stay. */
static void test_mount_table_full(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log, *back;
	char path[300];

	(void)state;
	for (uint32_t i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "/lustre/project/%0120u", i);
		jb_mount(&b, 100 + i, path, "lustre");
		jb_add(&b, 0, 100 + i, IOACCT_OP_READ, 0, 1, 0, 10, 1);
	}
	log = log_of(&b, &r, false);
	assert_true(log->nmounts < 40);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 40);
	back = round_trip(log);
	assert_logs_equal(log, back);
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_write_errors(void **state)
{
	struct ioacct_darshan_log log = { .exe = NULL };
	struct ioacct_darshan_heatmap h = { .nbins = 6000 };
	char *exe = malloc(5000), err[256];
	void *buf;
	size_t len;

	(void)state;
	assert_non_null(exe);
	memset(exe, 'x', 4999);
	exe[4999] = '\0';
	log.exe = exe;
	assert_int_equal(ioacct_darshan_write(&log, &buf, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than the 3016 a Darshan job region holds"));
	exe[10] = '\0';
	log.heatmaps = &h;
	log.nheatmaps = 1;
	assert_int_equal(ioacct_darshan_write(&log, &buf, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "6000 bins"));
	free(exe);
	assert_int_equal(ioacct_darshan_write_file(&(struct ioacct_darshan_log){ .exe = NULL },
						   "/nonexistent/dir/x.darshan", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dir/x.darshan"));
}

static void test_write_file(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_report *r;
	struct ioacct_darshan_log *log, *back;
	char dir[] = "/tmp/test_darshan_write.XXXXXX", path[64], err[512];

	(void)state;
	workload(&b);
	log = log_of(&b, &r, false);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/job.darshan", dir);
	assert_int_equal(ioacct_darshan_write_file(log, path, err, sizeof(err)), 0);
	back = ioacct_darshan_read(path, err, sizeof(err));
	assert_non_null(back);
	assert_logs_equal(log, back);
	unlink(path);
	rmdir(dir);
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* Real logs of every version, written again as 3.41: the same records and totals. */
static void test_round_trip_samples(void **state)
{
	const char *env = getenv("IOACCT_DARSHAN_LOGS");
	const char *dir = env && *env ? env : DARSHAN_LOGS_DIR;
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	(void)state;
	if (!d)
		skip();
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[4400], err[1024];
		struct ioacct_darshan_log *log, *back;
		struct ioacct_darshan_record t1, t2;

		if (len < 9 || strcmp(e->d_name + len - 8, ".darshan") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		log = ioacct_darshan_read(path, err, sizeof(err));
		if (!log)
			fail_msg("%s", err);
		back = round_trip(log);
		/* Before 3.41 start and end have no nanoseconds: the same, 0. */
		assert_logs_equal(log, back);
		for (int k = 0; k < IOACCT_DARSHAN_NKINDS; k++) {
			ioacct_darshan_total(log, (enum ioacct_darshan_kind)k, &t1);
			ioacct_darshan_total(back, (enum ioacct_darshan_kind)k, &t2);
			assert_memory_equal(&t1, &t2, sizeof(t1));
		}
		ioacct_darshan_free(back);
		ioacct_darshan_free(log);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
}

/* ---- per-file records (issue 26) ---- */

/*
 * workload()'s job with per-file records: /scratch/a of two inodes (a
 * file replaced under its name, in two steps), /scratch/b of ranks 0 and 1,
 * "other files" on /scratch, a file without a path on /, one whose path the
 * kernel cut short on /dev/shm.
 */
static void files_workload(struct jb *b)
{
	struct ioacct_file *f;

	workload(b);
	f = jb_file(b, 0, -1, M_SCRATCH, 8 << 20 | 1, 11, "/scratch/a");
	f->opens = 2;
	f->stats = 5;
	f->fsyncs = 1;
	f->seeks = 4;
	f->meta_ns = 300;
	jb_file_rw(f, true, 40, 65536, 1000, 1500000000, 2500000000);
	jb_file_rw(f, false, 20, MIB, 2000, 100000000, 900000000);
	f->rw_switches = 2;
	ioacct_file_access_add(f, 65536, 40);
	ioacct_file_access_add(f, MIB, 20);
	/* Another life of another inode under the same name: one Darshan record with it. */
	f = jb_file(b, 1, -1, M_SCRATCH, 8 << 20 | 1, 12, "/scratch/a");
	f->opens = 1;
	jb_file_rw(f, true, 10, 65536, 500, 1000000000, 3000000000);
	f->max_byte_read = 100 * 65536 - 1;
	f->rw_switches = 1;
	ioacct_file_access_add(f, 65536, 10);
	ioacct_file_access_add(f, 4096, 1);
	f = jb_file(b, 0, 0, M_SCRATCH, 8 << 20 | 1, 13, "/scratch/b");
	f->opens = 1;
	jb_file_rw(f, false, 30, MIB, 3000, 200000000, 800000000);
	f = jb_file(b, 0, 1, M_SCRATCH, 8 << 20 | 1, 13, "/scratch/b");
	f->opens = 1;
	jb_file_rw(f, false, 14, MIB, 1400, 300000000, 700000000);
	f = jb_file(b, 0, -1, M_SCRATCH, 0, 0, "");
	f->opens = 3;
	jb_file_rw(f, true, 20, 65536, 700, 2000000000, 2200000000);
	f = jb_file(b, 0, -1, M_ROOT, 8 << 20 | 2, 99, "");
	jb_file_rw(f, true, 30, 512, 300, 500000000, 600000000);
	f = jb_file(b, 0, -1, M_SHM, 40, 7, "...deep/f");
	jb_file_rw(f, false, 7, 100, 77, 10000000, 20000000);
}

/* What every record of ioacct's has where ioacct keeps nothing: -1, and Darshan's zeros. */
static void expect_init(struct ioacct_darshan_record *e, int64_t rank)
{
	memset(e, 0, sizeof(*e));
	e->rank = rank;
	for (int i = 0; i < 69; i++)
		e->counters[i] = i == 12 || (i >= 49 && i <= 64) ? 0 : -1;
	for (int i = 0; i < 17; i++)
		e->fcounters[i] = i >= 15 ? 0 : -1;
}

/* Counts, bytes, max offsets, seq and consec; rank and its own bytes as fastest and slowest. */
static void expect_counts(struct ioacct_darshan_record *e, const int64_t v[13])
{
	static const int idx[13] = { 0, 3, 4, 6, 8, 14, 15, 16, 17, 18, 19, 20, 21 };

	for (int i = 0; i < 13; i++)
		e->counters[idx[i]] = v[i];
	e->counters[5] = 0; /* SEEKS */
	/* Every size bin is a count, 0 where no access had that size. */
	for (int i = 29; i < 49; i++)
		e->counters[i] = 0;
	/* A file's read/write switches (none but where said); a mix of files has none known. */
	if (v[7] >= 0)
		e->counters[22] = 0;
	e->counters[65] = e->counters[67] = e->rank >= 0 ? e->rank : 0;
	e->counters[66] = e->counters[68] = v[5] + v[6];
}

/* Timestamps (read start, read end, write start, write end) and the three times. */
static void expect_times(struct ioacct_darshan_record *e, const double t[4], double rd, double wr,
			 double meta)
{
	e->fcounters[1] = t[0];
	e->fcounters[5] = t[1];
	e->fcounters[2] = t[2];
	e->fcounters[6] = t[3];
	e->fcounters[8] = rd;
	e->fcounters[9] = wr;
	e->fcounters[10] = meta;
	e->fcounters[13] = e->fcounters[14] = rd + wr + meta;
}

/* A record of the log: a file's among the POSIX ones, a pseudo-record among ioacct's own. */
static const struct ioacct_darshan_record *find_rec(const struct ioacct_darshan_log *log,
						     const char *name, int64_t rank)
{
	uint64_t id = ioacct_darshan_hash(name, strlen(name), 0);
	bool pseudo = strstr(name, "<ioacct: other files>") || strstr(name, "<ioacct: not per file>");
	const struct ioacct_darshan_record *recs = pseudo ? log->own : log->recs[IOACCT_DARSHAN_POSIX];
	size_t n = pseudo ? log->nown : log->nrecs[IOACCT_DARSHAN_POSIX];

	for (size_t i = 0; i < n; i++) {
		const struct ioacct_darshan_record *r = &recs[i];

		if (r->id == id && r->rank == rank) {
			assert_string_equal(ioacct_darshan_name_of(log, id), name);
			return r;
		}
	}
	fail_msg("no %s record %s of rank %lld", pseudo ? "ioacct" : "POSIX", name, (long long)rank);
	return NULL;
}

/*
 * What a file's counts pin down where the kernel keeps nothing per file
 * (Darshan's zeros): no open, no mode nor open or close time; no fsync, no
 * fdatasync; no read or write, no slowest one (and v[] its size and time
 * for a file of one).
 */
static void expect_none_of(struct ioacct_darshan_record *e, bool opens, bool fsyncs, int reads,
			   int writes, const double one[4])
{
	if (!opens) {
		e->counters[13] = 0;
		e->fcounters[0] = e->fcounters[3] = e->fcounters[4] = e->fcounters[7] = 0;
	}
	if (!fsyncs)
		e->counters[9] = 0;
	if (!reads && !writes)
		e->counters[23] = e->counters[25] = 0;
	if (reads <= 1) {
		e->counters[27] = (int64_t)one[0];
		e->fcounters[11] = one[1];
	}
	if (writes <= 1) {
		e->counters[28] = (int64_t)one[2];
		e->fcounters[12] = one[3];
	}
}

static void assert_rec(const struct ioacct_darshan_log *log, const char *name,
		       struct ioacct_darshan_record *e)
{
	const struct ioacct_darshan_record *r = find_rec(log, name, e->rank);

	for (int i = 0; i < 69; i++)
		if (r->counters[i] != e->counters[i])
			fail_msg("%s: counter %d is %lld, not %lld", name, i,
				 (long long)r->counters[i], (long long)e->counters[i]);
	for (int i = 0; i < 17; i++)
		if (r->fcounters[i] != e->fcounters[i])
			fail_msg("%s: fcounter %d is %.9f, not %.9f", name, i, r->fcounters[i],
				 e->fcounters[i]);
}

static const struct ioacct_report_mount *report_mount(const struct ioacct_report *r, uint32_t id)
{
	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].mnt_id == id)
			return &r->mounts[i];
	fail_msg("no mount %u", id);
	return NULL;
}

/* The job's bytes in bin `bin` of a direction, over every mount of the report. */
static uint64_t job_bin(const struct ioacct_report *r, unsigned int dir, uint32_t bin)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < r->nmounts; i++)
		for (size_t b = 0; b < r->mounts[i].nbins; b++)
			if (r->mounts[i].bins[b].bin == bin)
				sum += r->mounts[i].bins[b].bytes[dir];
	return sum;
}

/*
 * files_workload()'s heatmaps: /scratch/b's writers, ranks 0 and 1 (30 and
 * 14 MiB within bin 0), one record each; every bin's sum the job's; bin 0's
 * writes split 30:14; bins their windows do not reach (2, 3) by their whole
 * shares, 30:14; reads, which no rank's file made, evenly.
 */
static void assert_files_heatmaps(const struct ioacct_darshan_log *log, const struct ioacct_report *r)
{
	static const int64_t want[2][2][10] = {
		/* rank 0: reads, writes */
		{ { 0, 7680, 0, 0, 0, 0, 0, 3276800, 0, 0 },
		  { 45756044, 0, 477, 25135, 0, 0, 0, 0, 0, 0 } },
		{ { 0, 7680, 0, 0, 0, 0, 0, 3276800, 0, 0 },
		  { 21352820, 0, 223, 11729, 0, 0, 0, 0, 0, 0 } },
	};

	assert_int_equal(log->nheatmaps, 2);
	assert_non_null(strstr(log->metadata, "\n" IOACCT_DARSHAN_HEATMAP_META "\n"));
	for (size_t k = 0; k < 2; k++) {
		const struct ioacct_darshan_heatmap *h = &log->heatmaps[k];

		assert_true(h->id == ioacct_darshan_hash("heatmap:POSIX", 13, 0));
		assert_int_equal(h->rank, (int64_t)k);
		assert_int_equal(h->nbins, 10);
		assert_true(h->bin_width == 1.0);
		assert_memory_equal(h->read_bins, want[k][0], sizeof(want[k][0]));
		assert_memory_equal(h->write_bins, want[k][1], sizeof(want[k][1]));
	}
	for (uint32_t t = 0; t < 10; t++) {
		assert_true(log->heatmaps[0].read_bins[t] + log->heatmaps[1].read_bins[t] ==
			    (int64_t)job_bin(r, IOACCT_DIR_READ, t));
		assert_true(log->heatmaps[0].write_bins[t] + log->heatmaps[1].write_bins[t] ==
			    (int64_t)job_bin(r, IOACCT_DIR_WRITE, t));
	}
}

/*
 * ioacct's own records in the bytes of the file: the trailer (magic, names'
 * and records' offsets and lengths, record version 4) at the very end, its
 * two regions after the modules' and nowhere in the header's maps, each
 * one zlib stream; the pseudo-records' names there, not in the name table.
 */
static void assert_own_layout(const struct ioacct_darshan_log *log)
{
	unsigned char *f, *names, *own, *recs;
	size_t len, nn, on, rn, nown = 0;
	const unsigned char *t;
	uint64_t end = 0;
	char err[256];
	void *buf;

	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	f = buf;
	t = f + len - IOACCT_DARSHAN_OWN_TRAILER;
	assert_memory_equal(t, IOACCT_DARSHAN_OWN_MAGIC, 8);
	assert_true(rd64(t + 40) == 4);
	for (unsigned int id = 0; id < 64; id++) {
		uint64_t e = rd64(f + 48 + 16 * id) + rd64(f + 56 + 16 * id);

		end = e > end ? e : end;
	}
	assert_true(rd64(t + 8) == end);                       /* names after the last module */
	assert_true(rd64(t + 24) == rd64(t + 8) + rd64(t + 16)); /* then the records */
	assert_true(rd64(t + 24) + rd64(t + 32) == len - IOACCT_DARSHAN_OWN_TRAILER);

	own = inflate_at(f, rd64(t + 8), rd64(t + 16), &on);
	for (size_t p = 0; p < on; nown++) {
		const char *name = (const char *)own + p + 8;

		assert_non_null(strstr(name, "<ioacct: "));
		assert_true(rd64(own + p) == ioacct_darshan_hash(name, strlen(name), 0));
		p += 8 + strlen(name) + 1;
	}
	assert_int_equal(nown, log->nown);
	recs = inflate_at(f, rd64(t + 24), rd64(t + 32), &rn);
	assert_int_equal(rn, log->nown * 704);
	for (size_t i = 0; i < log->nown; i++)
		assert_true(rd64(recs + i * 704) == log->own[i].id);
	names = inflate_at(f, rd64(f + 32), rd64(f + 40), &nn);
	for (size_t p = 0; p < nn;) {
		const char *name = (const char *)names + p + 8;

		assert_null(strstr(name, "<ioacct: other files>"));
		assert_null(strstr(name, "<ioacct: not per file>"));
		p += 8 + strlen(name) + 1;
	}
	/* Cut short, it has lost its trailer: truncated, not a log without them. */
	assert_non_null(strstr(log->metadata, "\n" IOACCT_DARSHAN_OWN_META));
	assert_null(ioacct_darshan_parse(f, len - 7, 0, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "truncated or corrupt: the log says it has"));
	/* A trailer that points past the file: said, as any region out of bounds. */
	f[len - IOACCT_DARSHAN_OWN_TRAILER + 16] = 0xff;
	assert_null(ioacct_darshan_parse(f, len, 0, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "the ioacct names region"));
	free(names);
	free(own);
	free(recs);
	free(buf);
}

/* The files' records written and read back: every counter of every record, exactly. */
static void test_files_round_trip(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_darshan_record e;
	struct ioacct_darshan_log *log, *back;
	const struct ioacct_report_mount *m;
	struct ioacct_report *r;

	(void)state;
	files_workload(&b);
	log = log_of(&b, &r, false);
	back = round_trip(log);
	/*
	 * 5 files' records (/scratch/b twice) among the POSIX ones; ioacct's own:
	 * the other files and the rest of /scratch, / and /proc.
	 */
	assert_int_equal(back->nrecs[IOACCT_DARSHAN_POSIX], 5);
	assert_int_equal(back->nown, 4);
	assert_int_equal(back->partial, 1ULL << IOACCT_DARSHAN_MOD_POSIX);
	/* Ranks 0 and 1: two processes as Darshan counts them. */
	assert_int_equal(back->nprocs, 2);
	assert_non_null(strstr(back->metadata, "\nioacct_fsync_time=meta\n"));

	expect_init(&e, -1);
	expect_counts(&e, (const int64_t[13]){ 3, 50, 20, 5, 1, 50 * 65536, 20 * MIB,
					       100 * 65536 - 1, 20 * MIB - 1, 48, 19, 48, 19 });
	e.counters[5] = 4; /* SEEKS */
	e.counters[29 + 3] = 50;
	e.counters[39 + 4] = 20;
	/* RW_SWITCHES, ACCESS1..3_ACCESS and _COUNT of the two lives, merged as Darshan's ranks. */
	e.counters[22] = 3;
	e.counters[57] = 65536;
	e.counters[61] = 50;
	e.counters[58] = MIB;
	e.counters[62] = 20;
	e.counters[59] = 4096;
	e.counters[63] = 1;
	expect_times(&e, (const double[4]){ 1.0, 3.0, 0.1, 0.9 }, 1500e-9, 2000e-9, 300e-9);
	assert_rec(back, "/scratch/a", &e);

	expect_init(&e, 0);
	expect_counts(&e, (const int64_t[13]){ 1, 0, 30, 0, 0, 0, 30 * MIB, 0, 30 * MIB - 1,
					       0, 29, 0, 29 });
	e.counters[39 + 4] = 30;
	expect_times(&e, (const double[4]){ 0, 0, 0.2, 0.8 }, 0, 3000e-9, 0);
	expect_none_of(&e, true, false, 0, 30, (const double[4]){ 0, 0, -1, -1 });
	assert_rec(back, "/scratch/b", &e);
	expect_init(&e, 1);
	expect_counts(&e, (const int64_t[13]){ 1, 0, 14, 0, 0, 0, 14 * MIB, 0, 14 * MIB - 1,
					       0, 13, 0, 13 });
	e.counters[39 + 4] = 14;
	expect_times(&e, (const double[4]){ 0, 0, 0.3, 0.7 }, 0, 1400e-9, 0);
	expect_none_of(&e, true, false, 0, 14, (const double[4]){ 0, 0, -1, -1 });
	assert_rec(back, "/scratch/b", &e);

	/* Other files: no offsets nor patterns, which would mix files. */
	expect_init(&e, -1);
	expect_counts(&e, (const int64_t[13]){ 3, 20, 0, 0, 0, 20 * 65536, 0, -1, -1, -1, -1, -1,
					       -1 });
	e.counters[29 + 3] = 20;
	expect_times(&e, (const double[4]){ 2.0, 2.2, 0, 0 }, 700e-9, 0, 0);
	assert_rec(back, "/scratch/<ioacct: other files>", &e);

	expect_init(&e, -1);
	expect_counts(&e, (const int64_t[13]){ 0, 30, 0, 0, 0, 30 * 512, 0, 30 * 512 - 1, 0, 29, 0,
					       29, 0 });
	e.counters[29 + 1] = 30;
	expect_times(&e, (const double[4]){ 0.5, 0.6, 0, 0 }, 300e-9, 0, 0);
	expect_none_of(&e, false, false, 30, 0, (const double[4]){ -1, -1, 0, 0 });
	assert_rec(back, "/<ioacct: dev 8:2 ino 99>", &e);

	expect_init(&e, -1);
	expect_counts(&e, (const int64_t[13]){ 0, 0, 7, 0, 0, 0, 700, 0, 699, 0, 6, 0, 6 });
	e.counters[39 + 0] = 7;
	expect_times(&e, (const double[4]){ 0, 0, 0.01, 0.02 }, 0, 77e-9, 0);
	expect_none_of(&e, false, false, 0, 7, (const double[4]){ 0, 0, -1, -1 });
	assert_rec(back, "/dev/shm/<ioacct: dev 0:40 ino 7 ...deep/f>", &e);

	/* The rest of /scratch: its counters less its files'; nothing per file is known. */
	m = report_mount(r, M_SCRATCH);
	expect_init(&e, -1);
	expect_counts(&e, (const int64_t[13]){ 10 - 8, 100 - 70, 73 - 64, 36 - 5, 3 - 1,
					       30 * 65536, 9 * 4096, -1, -1, -1, -1, -1, -1 });
	e.counters[10] = 2; /* RENAME_SOURCES */
	e.counters[29 + 3] = 30;
	e.counters[39 + 2] = 9;
	expect_times(&e, (const double[4]){ -1, -1, -1, -1 }, (22222222 - 2200) / 1e9,
		     (901234567 - 6400) / 1e9, (double)(m->meta_ns - 300) / 1e9);
	assert_rec(back, "/scratch/<ioacct: not per file>", &e);
	/* /proc: its one stat; /: the time of its failed opens. */
	expect_init(&e, -1);
	expect_counts(&e, (const int64_t[13]){ 0, 0, 0, 1, 0, 0, 0, -1, -1, -1, -1, -1, -1 });
	e.counters[10] = 0;
	expect_times(&e, (const double[4]){ -1, -1, -1, -1 }, 0, 0, 10e-9);
	assert_rec(back, "/proc/<ioacct: not per file>", &e);
	m = report_mount(r, M_ROOT);
	assert_int_equal(m->meta_ns, 1);
	find_rec(back, "/<ioacct: not per file>", -1);
	/* /dev/shm's calls are all its file's: no rest. */
	for (size_t i = 0; i < back->nown; i++)
		assert_string_not_equal(ioacct_darshan_name_of(back, back->own[i].id),
					"/dev/shm/<ioacct: not per file>");
	/* The mount table is the job's, as without files. */
	assert_int_equal(back->nmounts, 4);
	assert_files_heatmaps(back, r);
	assert_own_layout(log);

	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* The filter and --mount keep their mounts' files alone; no "other files": not partial. */
static void test_files_filter(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_darshan_log *log;
	struct ioacct_report *r;

	(void)state;
	files_workload(&b);
	b.jd->nfiles--; /* the /dev/shm file */
	log = log_of(&b, &r, true);
	/* /dev/shm and /proc left out: 4 files, and the other files, the rest of / and /scratch. */
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 4);
	assert_int_equal(log->nown, 3);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);

	b.jd->nfiles -= 2; /* the file on /, and the other files */
	r = ioacct_report_create(b.jd, NULL, "/scratch");
	assert_non_null(r);
	log = ioacct_darshan_from_report(r, false);
	assert_non_null(log);
	/* /scratch/a, /scratch/b of two ranks; the rest of /scratch. */
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 3);
	assert_int_equal(log->nown, 1);
	assert_int_equal(log->partial, 0);
	find_rec(log, "/scratch/<ioacct: not per file>", -1);
	assert_int_equal(log->nprocs, 2);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * --darshan-filter and paths Darshan's runtime leaves out (/usr, /etc, ...):
 * a library read on / is no POSIX record, its reads are in the rest of /;
 * without the filter it is a file as any other.
 */
static void test_files_filter_paths(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	const struct ioacct_darshan_record *rest;
	struct ioacct_darshan_log *log;
	struct ioacct_report *r;
	struct ioacct_file *f;

	(void)state;
	workload(&b);
	f = jb_file(&b, 0, 0, M_ROOT, 8 << 20 | 2, 5, "/usr/lib/libx.so");
	f->opens = 1;
	jb_file_rw(f, true, 20, 512, 200, 100000000, 200000000);
	f = jb_file(&b, 0, 0, M_ROOT, 8 << 20 | 2, 6, "/home/u/in.dat");
	jb_file_rw(f, true, 10, 512, 100, 300000000, 400000000);
	log = log_of(&b, &r, true);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 1);
	find_rec(log, "/home/u/in.dat", 0);
	assert_null(ioacct_darshan_name_of(log, ioacct_darshan_hash("/usr/lib/libx.so", 16, 0)));
	/* /: 30 reads of 512 B, 10 of them in.dat's; 5 failed opens, 1 of libx.so's. */
	rest = find_rec(log, "/<ioacct: not per file>", -1);
	assert_int_equal(rest->counters[IOACCT_DARSHAN_POSIX_READS], 20);
	assert_int_equal(rest->counters[IOACCT_DARSHAN_POSIX_BYTES_READ], 20 * 512);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);

	log = log_of(&b, &r, false);
	find_rec(log, "/usr/lib/libx.so", 0);
	find_rec(log, "/home/u/in.dat", 0);
	rest = find_rec(log, "/<ioacct: not per file>", -1);
	assert_int_equal(rest->counters[IOACCT_DARSHAN_POSIX_READS], 0);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/*
 * A job whose files name no rank (no MPI): its files are rank 0, as in
 * Darshan's non-MPI logs, not -1, which Drishti counts as shared files; the
 * mounts' rests (ioacct's own records) stay -1. (files_workload, with ranks,
 * keeps -1 for its files of no known rank: test_files_round_trip.)
 */
static void test_files_unranked(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	struct ioacct_darshan_log *log;
	struct ioacct_report *r;
	struct ioacct_file *f;

	(void)state;
	workload(&b);
	f = jb_file(&b, 0, -1, M_ROOT, 8 << 20 | 2, 6, "/home/u/in.dat");
	jb_file_rw(f, true, 10, 512, 100, 300000000, 400000000);
	f = jb_file(&b, 0, -1, M_ROOT, 8 << 20 | 2, 7, "/home/u/in2.dat");
	jb_file_rw(f, true, 5, 512, 50, 500000000, 600000000);
	log = log_of(&b, &r, false);
	assert_int_equal(log->nprocs, 1);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_POSIX], 2);
	assert_int_equal(find_rec(log, "/home/u/in.dat", 0)->counters[IOACCT_DARSHAN_POSIX_READS], 10);
	assert_int_equal(find_rec(log, "/home/u/in2.dat", 0)->counters[IOACCT_DARSHAN_POSIX_READS], 5);
	find_rec(log, "/<ioacct: not per file>", -1);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* Two mount ids of one mount point (a remount): one rest record, the sum of both. */
static void test_files_one_mount_point(void **state)
{
	struct jb b = job(SEC, 10 * SEC);
	const struct ioacct_darshan_record *rec;
	struct ioacct_darshan_log *log;
	struct ioacct_report *r;
	size_t n = 0;

	(void)state;
	files_workload(&b);
	jb_mount(&b, 11, "/scratch", "lustre");
	jb_add(&b, 0, 11, IOACCT_OP_STAT, 0, 6, 0, 0, 60);
	jb_add(&b, 0, 11, IOACCT_OP_READ, 0, 2, 0, 200, 20); /* 100 bytes each: bin 0_100 */
	log = log_of(&b, &r, false);
	for (size_t i = 0; i < log->nown; i++)
		n += !strcmp(ioacct_darshan_name_of(log, log->own[i].id),
			     "/scratch/<ioacct: not per file>");
	assert_int_equal(n, 1);
	rec = find_rec(log, "/scratch/<ioacct: not per file>", -1);
	assert_int_equal(rec->counters[IOACCT_DARSHAN_POSIX_STATS], 31 + 6);
	assert_int_equal(rec->counters[IOACCT_DARSHAN_POSIX_READS], 30 + 2);
	assert_int_equal(rec->counters[IOACCT_DARSHAN_POSIX_BYTES_READ], 30 * 65536 + 200);
	assert_int_equal(rec->counters[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100], 2);
	assert_int_equal(rec->counters[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 + 3], 30);
	assert_int_equal(rec->counters[IOACCT_DARSHAN_POSIX_FASTEST_RANK_BYTES], 30 * 65536 + 200 + 9 * 4096);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_byte_layout),
		cmocka_unit_test(test_round_trip_job),
		cmocka_unit_test(test_files_round_trip),
		cmocka_unit_test(test_files_filter),
		cmocka_unit_test(test_files_one_mount_point),
		cmocka_unit_test(test_files_filter_paths),
		cmocka_unit_test(test_files_unranked),
		cmocka_unit_test(test_job_header),
		cmocka_unit_test(test_heatmap_merging),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_mount_table_full),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_round_trip_samples),
		cmocka_unit_test(test_dxt),
		cmocka_unit_test(test_dxt_move_and_corrupt),
		cmocka_unit_test(test_trace_spool_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
