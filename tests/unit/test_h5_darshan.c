// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HDF5 records of a job (issue 39) in its Darshan log, on a job built
 * in memory as 75-hdf5.sh's program runs it: /scratch/t.h5 with dataset
 * `a` (1,000 doubles, one write) and `b` (256 x 256 ints, 4 writes of 64
 * rows in two steps' processes, one whole read), an unsized write on
 * `/c` of rank 1, and a relative file name:
 *   - the writer: one H5F record per file and rank, one H5D record per
 *     dataset and rank named "FILE:/DATASET", its file's record id in the
 *     H5D record, the records of one name and rank added up;
 *   - our reader reads them back, exact, -1 where ioacct measures nothing
 *     and for the bytes of unsized calls, and the header's module map and
 *     versions as Darshan 3.5 writes them (H5F 3, H5D 4; versions 3, 2);
 *   - older record versions (H5F 1 and 2, H5D 1) converted as darshan-util
 *     converts them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "darshan.h"
#include "jobbuild.h"
#include "model.h"
#include "report.h"

#define SEC JB_SEC
enum { M_SCRATCH = 21 };

static struct ioacct_h5rec *h5(struct jb *b, uint32_t step, int32_t rank, uint32_t kind,
			       const char *name)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_h5rec *h;

	jd->h5 = jb_grow(jd->h5, jd->nh5 + 1, sizeof(*jd->h5));
	h = &jd->h5[jd->nh5++];
	jd->h5_loaded = true;
	memset(h, 0, sizeof(*h));
	h->step_id = step;
	h->rank = rank;
	h->pid = 1000 + (uint32_t)rank + 10 * step;
	h->kind = kind;
	ioacct_strlcpy(h->name, name, sizeof(h->name));
	return h;
}

static struct jb job(void)
{
	struct jb b;
	struct ioacct_h5rec *h;

	jb_init(&b, SEC, 10 * SEC);
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_step(&b, 0, 0, 5 * SEC);
	jb_step(&b, 1, 5 * SEC, 10 * SEC);
	ioacct_strlcpy(b.jd->job.workdir, "/scratch/run", sizeof(b.jd->job.workdir));
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2, 0, 272008, 2000);
	h = h5(&b, 0, 0, IOACCT_H5REC_FILE, "/scratch/t.h5");
	h->opens = 1;
	h->flushes = 1;
	h->meta_ns = 250000;
	h->open_start_ns = 1500000000;
	h->open_end_ns = 1500500000;
	h->close_start_ns = 4000000000;
	h->close_end_ns = 4001000000;
	h = h5(&b, 1, 0, IOACCT_H5REC_FILE, "/scratch/t.h5");
	h->opens = 1;
	h->use_mpiio = 1;
	h->open_start_ns = 6000000000;
	h->open_end_ns = 6000500000;
	h = h5(&b, 0, 0, IOACCT_H5REC_DATASET, "/scratch/t.h5:/a");
	h->opens = 1;
	h->writes = 1;
	h->bytes_written = 8000;
	h->datatype_size = 8;
	h->npoints_max = 1000;
	h->size_written[ioacct_size_bin(8000)] = 1;
	h->write_ns = 1000000;
	h->dataspace_ndims = 1;
	h->dataspace_npoints = 1000;
	/* As stored before schema 24: its write's selection kind not known, nor its chunking. */
	h->unknown_selects = 1;
	/* b: two writes in each step's process, the read in the second. */
	for (uint32_t s = 0; s < 2; s++) {
		h = h5(&b, s, 0, IOACCT_H5REC_DATASET, "/scratch/t.h5:/b");
		h->opens = 1;
		h->writes = 2;
		h->bytes_written = 2 * 65536;
		h->size_written[ioacct_size_bin(65536)] = 2;
		h->datatype_size = 4;
		h->write_ns = 3000000;
		h->write_start_ns = (2 + 5 * s) * SEC;
		h->write_end_ns = h->write_start_ns + SEC / 2;
		/* The slower is step 0's: its size, not step 1's. */
		h->max_write_ns = 2000000 - 1000000 * s;
		h->max_write_size = 65536 + s;
		/* Step 1's open said nothing of its dataspace (rank 0): step 0's stands. */
		h->dataspace_ndims = s ? 0 : 2;
		h->dataspace_npoints = s ? 0 : 65536;
		h->use_mpiio_collective = !s;
		/* Step 0's: 2 regular hyperslabs, chunks of 10 x 20; step 1's: 1 irregular, 1 of points. */
		h->regular_hyperslab_selects = s ? 0 : 2;
		h->irregular_hyperslab_selects = s;
		h->point_selects = s;
		h->chunk_known = !s;
		h->chunk_size_d1 = s ? 0 : 20;
		h->chunk_size_d2 = s ? 0 : 10;
		if (s) {
			h->reads = 1;
			h->bytes_read = 262144;
			h->size_read[ioacct_size_bin(262144)] = 1;
			h->rw_switches = 1;
			h->read_ns = 500000;
			h->read_start_ns = 8 * SEC;
			h->read_end_ns = 8 * SEC + 500000;
			h->max_read_ns = 500000;
			h->max_read_size = 262144;
		}
	}
	h = h5(&b, 0, 1, IOACCT_H5REC_DATASET, "/scratch/t.h5:/c");
	h->writes = 2;
	h->unsized_writes = 1;
	h->bytes_written = 40;
	h->max_write_ns = 7000;
	h->max_write_size = 40;
	h->size_written[ioacct_size_bin(40)] = 1;
	h->regular_hyperslab_selects = 1;
	h->unknown_selects = 1;
	h = h5(&b, 0, 1, IOACCT_H5REC_FILE, "out/r.h5");
	h->opens = 1;
	h = h5(&b, 0, 1, IOACCT_H5REC_DATASET, "out/r.h5:(anonymous)");
	h->writes = 1;
	h->bytes_written = 4;
	return b;
}

static const struct ioacct_darshan_record *find(const struct ioacct_darshan_log *log,
						enum ioacct_darshan_kind kind, const char *name,
						int64_t rank)
{
	for (size_t i = 0; i < log->nrecs[kind]; i++) {
		const struct ioacct_darshan_record *x = &log->recs[kind][i];
		const char *n = ioacct_darshan_name_of(log, x->id);

		if (n && !strcmp(n, name) && x->rank == rank)
			return x;
	}
	fail_msg("no %s record of %s rank %lld", ioacct_darshan_modinfo(kind)->name, name,
		 (long long)rank);
	return NULL;
}

static int64_t counter(const struct ioacct_darshan_record *x, enum ioacct_darshan_kind kind,
		       const char *name)
{
	bool is_float;
	int i = ioacct_darshan_counter_index(kind, name, &is_float);

	if (i < 0 || is_float)
		fail_msg("no counter %s", name);
	return x->counters[i];
}

static double fcounter(const struct ioacct_darshan_record *x, enum ioacct_darshan_kind kind,
		       const char *name)
{
	bool is_float;
	int i = ioacct_darshan_counter_index(kind, name, &is_float);

	if (i < 0 || !is_float)
		fail_msg("no float counter %s", name);
	return x->fcounters[i];
}

#define D(x, n) counter(x, IOACCT_DARSHAN_H5D, n)
#define F(x, n) counter(x, IOACCT_DARSHAN_H5F, n)

static uint64_t hash(const char *s)
{
	return ioacct_darshan_hash(s, strlen(s), 0);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void test_round_trip(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	struct ioacct_darshan_log *log = ioacct_darshan_from_report(r, false), *back;
	const struct ioacct_darshan_record *x;
	const unsigned char *hdr;
	char err[256];
	size_t len;
	void *buf;

	(void)state;
	assert_non_null(log);
	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	/* The header's module map: H5F at 3, H5D at 4, record versions 3 and 2. */
	hdr = buf;
	assert_true(le64(hdr + 48 + 16 * 3) > 0 && le64(hdr + 56 + 16 * 3) > 0);
	assert_true(le64(hdr + 48 + 16 * 4) > 0 && le64(hdr + 56 + 16 * 4) > 0);
	assert_int_equal(le32(hdr + 1072 + 4 * 3), 3);
	assert_int_equal(le32(hdr + 1072 + 4 * 4), 2);
	back = ioacct_darshan_parse(buf, len, 0, err, sizeof(err));
	if (!back)
		fail_msg("our reader: %s", err);
	assert_int_equal(back->regions[IOACCT_DARSHAN_MOD_H5F].version, 3);
	assert_int_equal(back->regions[IOACCT_DARSHAN_MOD_H5D].version, 2);
	assert_true(strstr(back->metadata, IOACCT_DARSHAN_H5_META "\n") != NULL);
	assert_int_equal(back->nrecs[IOACCT_DARSHAN_H5F], 2);
	assert_int_equal(back->nrecs[IOACCT_DARSHAN_H5D], 4);

	/* The file's two steps' records are one. */
	x = find(back, IOACCT_DARSHAN_H5F, "/scratch/t.h5", 0);
	assert_int_equal(F(x, "H5F_OPENS"), 2);
	assert_int_equal(F(x, "H5F_FLUSHES"), 1);
	assert_int_equal(F(x, "H5F_USE_MPIIO"), 1); /* step 1's open */
	assert_true(fcounter(x, IOACCT_DARSHAN_H5F, "H5F_F_META_TIME") == 0.00025);
	/* Timestamps: the first start, the last end, from the job's start. */
	assert_true(fcounter(x, IOACCT_DARSHAN_H5F, "H5F_F_OPEN_START_TIMESTAMP") == 1.5);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5F, "H5F_F_OPEN_END_TIMESTAMP") == 6.0005);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5F, "H5F_F_CLOSE_START_TIMESTAMP") == 4);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5F, "H5F_F_CLOSE_END_TIMESTAMP") == 4.001);
	/* A relative name under the job's directory, as the MPI-IO records have it. */
	x = find(back, IOACCT_DARSHAN_H5F, "/scratch/run/out/r.h5", 1);
	assert_int_equal(F(x, "H5F_OPENS"), 1);
	assert_int_equal(F(x, "H5F_USE_MPIIO"), 0);

	x = find(back, IOACCT_DARSHAN_H5D, "/scratch/t.h5:/a", 0);
	assert_true(x->file_id == hash("/scratch/t.h5"));
	assert_int_equal(D(x, "H5D_OPENS"), 1);
	assert_int_equal(D(x, "H5D_WRITES"), 1);
	assert_int_equal(D(x, "H5D_READS"), 0);
	assert_int_equal(D(x, "H5D_BYTES_WRITTEN"), 8000);
	assert_int_equal(D(x, "H5D_BYTES_READ"), 0);
	assert_int_equal(D(x, "H5D_SIZE_WRITE_AGG_1K_10K"), 1);
	assert_int_equal(D(x, "H5D_DATATYPE_SIZE"), 8);
	assert_int_equal(D(x, "H5D_DATASPACE_NDIMS"), 1);
	assert_int_equal(D(x, "H5D_DATASPACE_NPOINTS"), 1000);
	assert_int_equal(D(x, "H5D_REGULAR_HYPERSLAB_SELECTS"), -1);
	assert_int_equal(D(x, "H5D_CHUNK_SIZE_D1"), -1);
	assert_int_equal(D(x, "H5D_USE_MPIIO_COLLECTIVE"), 0);
	assert_int_equal(D(x, "H5D_ACCESS1_ACCESS"), 0);
	assert_int_equal(D(x, "H5D_FASTEST_RANK_BYTES"), 8000);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_WRITE_TIME") == 0.001);
	/* Times none measured: 0, as Darshan's for a record without such calls. */
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_MAX_WRITE_TIME") == 0);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_OPEN_START_TIMESTAMP") == 0);
	assert_int_equal(D(x, "H5D_MAX_READ_TIME_SIZE"), 0);

	x = find(back, IOACCT_DARSHAN_H5D, "/scratch/t.h5:/b", 0);
	assert_true(x->file_id == hash("/scratch/t.h5"));
	assert_int_equal(D(x, "H5D_OPENS"), 2);
	assert_int_equal(D(x, "H5D_WRITES"), 4);
	assert_int_equal(D(x, "H5D_READS"), 1);
	assert_int_equal(D(x, "H5D_BYTES_WRITTEN"), 262144);
	assert_int_equal(D(x, "H5D_BYTES_READ"), 262144);
	assert_int_equal(D(x, "H5D_RW_SWITCHES"), 1);
	assert_int_equal(D(x, "H5D_SIZE_WRITE_AGG_10K_100K"), 4);
	assert_int_equal(D(x, "H5D_SIZE_READ_AGG_100K_1M"), 1);
	assert_int_equal(D(x, "H5D_DATATYPE_SIZE"), 4);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_READ_TIME") == 0.0005);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_WRITE_TIME") == 0.006);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_WRITE_START_TIMESTAMP") == 2);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_WRITE_END_TIMESTAMP") == 7.5);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_READ_START_TIMESTAMP") == 8);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_READ_END_TIMESTAMP") == 8.0005);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_MAX_WRITE_TIME") == 0.002);
	assert_int_equal(D(x, "H5D_MAX_WRITE_TIME_SIZE"), 65536);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_MAX_READ_TIME") == 0.0005);
	assert_int_equal(D(x, "H5D_MAX_READ_TIME_SIZE"), 262144);
	assert_int_equal(D(x, "H5D_DATASPACE_NDIMS"), 2);
	assert_int_equal(D(x, "H5D_DATASPACE_NPOINTS"), 65536);
	assert_int_equal(D(x, "H5D_USE_MPIIO_COLLECTIVE"), 1); /* step 0's calls */
	/* Both steps' selections summed; the chunk sizes of the open that knew them. */
	assert_int_equal(D(x, "H5D_REGULAR_HYPERSLAB_SELECTS"), 2);
	assert_int_equal(D(x, "H5D_IRREGULAR_HYPERSLAB_SELECTS"), 1);
	assert_int_equal(D(x, "H5D_POINT_SELECTS"), 1);
	assert_int_equal(D(x, "H5D_CHUNK_SIZE_D1"), 20);
	assert_int_equal(D(x, "H5D_CHUNK_SIZE_D2"), 10);
	assert_int_equal(D(x, "H5D_CHUNK_SIZE_D3"), 0);
	assert_int_equal(D(x, "H5D_CHUNK_SIZE_D5"), 0);

	/* Unsized: its bytes not known, -1, never the part that was sized. */
	x = find(back, IOACCT_DARSHAN_H5D, "/scratch/t.h5:/c", 1);
	assert_int_equal(D(x, "H5D_WRITES"), 2);
	assert_int_equal(D(x, "H5D_BYTES_WRITTEN"), -1);
	assert_int_equal(D(x, "H5D_FASTEST_RANK_BYTES"), -1);
	assert_int_equal(D(x, "H5D_DATATYPE_SIZE"), -1);
	/* No create or open seen: its dataspace not known. */
	assert_int_equal(D(x, "H5D_DATASPACE_NDIMS"), -1);
	assert_int_equal(D(x, "H5D_DATASPACE_NPOINTS"), -1);
	/* The slowest write's size: not known when a write was unsized; its time is. */
	assert_int_equal(D(x, "H5D_MAX_WRITE_TIME_SIZE"), -1);
	assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_MAX_WRITE_TIME") == 0.000007);
	/* A write whose selection's kind was not read: the three kinds not known, never 1, 0, 0. */
	assert_int_equal(D(x, "H5D_REGULAR_HYPERSLAB_SELECTS"), -1);
	assert_int_equal(D(x, "H5D_IRREGULAR_HYPERSLAB_SELECTS"), -1);
	assert_int_equal(D(x, "H5D_POINT_SELECTS"), -1);
	assert_int_equal(D(x, "H5D_CHUNK_SIZE_D1"), -1);

	x = find(back, IOACCT_DARSHAN_H5D, "/scratch/run/out/r.h5:(anonymous)", 1);
	assert_true(x->file_id == hash("/scratch/run/out/r.h5"));
	assert_int_equal(D(x, "H5D_BYTES_WRITTEN"), 4);
	free(buf);
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* A file on a mount the Darshan filter leaves out has no record, nor have its datasets. */
static void test_filtered(void **state)
{
	struct jb b = job();
	struct ioacct_report *r;
	struct ioacct_darshan_log *log;

	(void)state;
	jb_mount(&b, 22, "/dev/shm", "tmpfs");
	jb_add(&b, 0, 22, IOACCT_OP_WRITE, 0, 1, 0, 10, 10);
	h5(&b, 0, 0, IOACCT_H5REC_FILE, "/dev/shm/x.h5")->opens = 1;
	h5(&b, 0, 0, IOACCT_H5REC_DATASET, "/dev/shm/x.h5:/d")->writes = 1;
	r = ioacct_report_create(b.jd, NULL, NULL);
	assert_non_null(r);
	log = ioacct_darshan_from_report(r, true);
	assert_non_null(log);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_H5F], 2);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_H5D], 4);
	ioacct_darshan_free(log);
	log = ioacct_darshan_from_report(r, false);
	assert_non_null(log);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_H5F], 3);
	assert_int_equal(log->nrecs[IOACCT_DARSHAN_H5D], 5);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* A job whose records name no rank (a serial program): rank 0, as its POSIX records. */
static void test_unranked(void **state)
{
	struct jb b;
	struct ioacct_report *r;
	struct ioacct_darshan_log *log;

	(void)state;
	jb_init(&b, SEC, 10 * SEC);
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_step(&b, 0, 0, 10 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2, 0, 8000, 2000);
	h5(&b, 0, -1, IOACCT_H5REC_FILE, "/scratch/s.h5")->opens = 1;
	h5(&b, 0, -1, IOACCT_H5REC_DATASET, "/scratch/s.h5:/a")->writes = 1;
	r = ioacct_report_create(b.jd, NULL, NULL);
	assert_non_null(r);
	log = ioacct_darshan_from_report(r, false);
	assert_non_null(log);
	assert_int_equal(log->recs[IOACCT_DARSHAN_H5F][0].rank, 0);
	assert_int_equal(log->recs[IOACCT_DARSHAN_H5D][0].rank, 0);
	assert_int_equal(D(&log->recs[IOACCT_DARSHAN_H5D][0], "H5D_FASTEST_RANK"), 0);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* ---- older record versions, as Darshan 3.1 to 3.4 wrote them ---- */

struct raw {
	unsigned char b[2048];
	size_t n;
};

static void put64(struct raw *o, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		o->b[o->n++] = (unsigned char)(v >> (8 * i));
}

static void putf(struct raw *o, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put64(o, v);
}

/*
 * A format 3.21 log (16 module slots, H5D at slot 4) of one H5F record of
 * version `fver` and one H5D record of version 1, from our writer's log of
 * job() rewritten: its header and job and name regions are kept.
 */
static struct ioacct_darshan_log *old_log(unsigned int fver, uint64_t fid, uint64_t did)
{
	struct raw f = { .n = 0 }, d = { .n = 0 };
	unsigned char *out = calloc(1, 65536), zf[1024], zd[2048];
	uLongf lf = sizeof(zf), ld = sizeof(zd);
	struct ioacct_darshan_log *log;
	char err[256];
	size_t at = 360;

	assert_non_null(out);
	put64(&f, fid);
	put64(&f, 0);
	put64(&f, 7);                                    /* H5F_OPENS */
	putf(&f, 1.5);                                   /* first open */
	if (fver == 2) {
		putf(&f, 2.5);                           /* first close */
		putf(&f, 3.5);                           /* last open */
	}
	putf(&f, 4.5);                                   /* last close */
	put64(&d, did);
	put64(&d, 0);
	for (int i = 0; i < 94; i++)
		put64(&d, (uint64_t)(i + 1));
	for (int i = 0; i < 17; i++)
		putf(&d, i + 0.25);
	assert_int_equal(compress(zf, &lf, f.b, f.n), Z_OK);
	assert_int_equal(compress(zd, &ld, d.b, d.n), Z_OK);

	memcpy(out, "3.21", 4);
	memcpy(out + 8, &(uint64_t){ IOACCT_DARSHAN_MAGIC }, 8);
	out[16] = IOACCT_DARSHAN_ZLIB;
	{
		/* A job region: the job struct of format 3.21, exe "x", no mounts. */
		unsigned char job[5 * 8 + IOACCT_DARSHAN_METADATA_LEN + 2] = { 0 }, zj[512];
		uLongf lj = sizeof(zj);

		job[sizeof(job) - 2] = 'x';
		assert_int_equal(compress(zj, &lj, job, sizeof(job)), Z_OK);
		memcpy(out + at, zj, lj);
		at += lj;
	}
	/* Slots 3 (H5F) and 4 (H5D): offsets and lengths at 40 + 16 * slot, versions at 296. */
	memcpy(out + 40 + 16 * 3, &(uint64_t){ at }, 8);
	memcpy(out + 48 + 16 * 3, &(uint64_t){ lf }, 8);
	memcpy(out + 296 + 4 * 3, &(uint32_t){ fver }, 4);
	memcpy(out + at, zf, lf);
	at += lf;
	memcpy(out + 40 + 16 * 4, &(uint64_t){ at }, 8);
	memcpy(out + 48 + 16 * 4, &(uint64_t){ ld }, 8);
	memcpy(out + 296 + 4 * 4, &(uint32_t){ 1 }, 4);
	memcpy(out + at, zd, ld);
	at += ld;
	log = ioacct_darshan_parse(out, at, 0, err, sizeof(err));
	if (!log)
		fail_msg("our reader: %s", err);
	free(out);
	return log;
}

static void test_old_versions(void **state)
{
	(void)state;
	for (unsigned int fver = 1; fver <= 2; fver++) {
		struct ioacct_darshan_log *log = old_log(fver, 11, 22);
		const struct ioacct_darshan_record *x;

		assert_int_equal(log->nrecs[IOACCT_DARSHAN_H5F], 1);
		assert_int_equal(log->nrecs[IOACCT_DARSHAN_H5D], 1);
		x = &log->recs[IOACCT_DARSHAN_H5F][0];
		assert_true(x->id == 11);
		assert_int_equal(x->counters[0], 7);
		/* FLUSHES, USE_MPIIO, F_META_TIME: not in versions 1 and 2, -1. */
		assert_int_equal(x->counters[1], -1);
		assert_int_equal(x->counters[2], -1);
		assert_true(x->fcounters[0] == 1.5 && x->fcounters[3] == 4.5);
		assert_true(x->fcounters[1] == (fver == 2 ? 2.5 : -1));
		assert_true(x->fcounters[2] == (fver == 2 ? 3.5 : -1));
		assert_true(x->fcounters[4] == -1);
		/* H5D version 1: no file id (0), the counters in place. */
		x = &log->recs[IOACCT_DARSHAN_H5D][0];
		assert_true(x->id == 22 && x->file_id == 0);
		assert_int_equal(D(x, "H5D_OPENS"), 1);
		assert_int_equal(D(x, "H5D_SLOWEST_RANK_BYTES"), 94);
		assert_true(fcounter(x, IOACCT_DARSHAN_H5D, "H5D_F_VARIANCE_RANK_BYTES") == 16.25);
		ioacct_darshan_free(log);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_filtered),
		cmocka_unit_test(test_unranked),
		cmocka_unit_test(test_old_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
