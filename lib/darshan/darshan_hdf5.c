/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job's HDF5 records (issue 39) as Darshan H5F records (module 3, record
 * version 3) and H5D records (module 4, version 2): one per file or dataset
 * and rank, the records of one name and rank (several steps or processes)
 * added up; rank 0 in a job whose records name no rank, as its POSIX records. A file is named by its path as the MPI-IO record of the same
 * file is (relative ones under the job's working directory), a dataset
 * "FILE:/DATASET" with that path, and its file's record id in the H5D
 * record's file id, as Darshan 3.5's runtime writes them.
 *
 * Timestamps are seconds from the job's start, 0 for none (Darshan's 0);
 * the slowest read's (write's) size is -1 when a read (write) of the
 * record was unsized; the dataspace -1 when not known (a scalar or null
 * one has no dims to say which). What the probes do not measure is -1, as
 * darshan-util sets the counters an older record version lacks:
 * H5D_USE_DEPRECATED; so are the three selection kinds of a record with a
 * call whose kind could not be read (unknown_selects), and the chunk sizes
 * of a dataset whose chunking is not known. The bytes of a rank that
 * made calls whose selection size the probes could not read (unsized) are
 * -1 too; those calls are in no size bin. The common accesses are none
 * (0), as in the MPIIO records.
 */
#include "darshan.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* H5F counters of record version 3, H5D of version 2 (darshan.c's names). */
enum { F_OPENS, F_FLUSHES, F_USE_MPIIO, F_NCOUNTERS };
enum {
	FF_OPEN_START, FF_CLOSE_START, FF_OPEN_END, FF_CLOSE_END, FF_META_TIME, FF_NCOUNTERS
};
enum {
	D_OPENS, D_READS, D_WRITES, D_FLUSHES, D_BYTES_READ, D_BYTES_WRITTEN, D_RW_SWITCHES,
	D_REGULAR_HYPERSLAB_SELECTS, D_IRREGULAR_HYPERSLAB_SELECTS, D_POINT_SELECTS,
	D_MAX_READ_TIME_SIZE, D_MAX_WRITE_TIME_SIZE,
	D_SIZE_READ_AGG_0_100,
	D_SIZE_WRITE_AGG_0_100 = D_SIZE_READ_AGG_0_100 + IOACCT_NR_SIZE_BINS,
	D_ACCESS1_ACCESS = D_SIZE_WRITE_AGG_0_100 + IOACCT_NR_SIZE_BINS,
	D_DATASPACE_NDIMS = D_ACCESS1_ACCESS + 4 * 11 + 4,
	D_DATASPACE_NPOINTS, D_DATATYPE_SIZE, D_CHUNK_SIZE_D1,
	D_USE_MPIIO_COLLECTIVE = D_CHUNK_SIZE_D1 + 5,
	D_FASTEST_RANK = D_USE_MPIIO_COLLECTIVE + 2,
	D_FASTEST_RANK_BYTES, D_SLOWEST_RANK, D_SLOWEST_RANK_BYTES, D_NCOUNTERS
};
enum {
	DF_OPEN_START, DF_READ_START, DF_WRITE_START, DF_CLOSE_START,
	DF_OPEN_END, DF_READ_END, DF_WRITE_END, DF_CLOSE_END, DF_READ_TIME, DF_WRITE_TIME, DF_META_TIME, DF_MAX_READ_TIME, DF_MAX_WRITE_TIME,
	DF_FASTEST_RANK_TIME, DF_SLOWEST_RANK_TIME, DF_VARIANCE_RANK_TIME, DF_VARIANCE_RANK_BYTES,
	DF_NCOUNTERS
};
_Static_assert(F_NCOUNTERS == 3 && FF_NCOUNTERS == 5, "darshan.c's H5F tables");
_Static_assert(D_NCOUNTERS == 94 && DF_NCOUNTERS == 17, "darshan.c's H5D tables");
_Static_assert(D_MAX_READ_TIME_SIZE == 10, "darshan.c's H5D tables");

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void h5f_record(const struct ioacct_h5rec *h, struct ioacct_darshan_record *r)
{
	double *f = r->fcounters;

	r->counters[F_OPENS] = (int64_t)h->opens;
	r->counters[F_FLUSHES] = (int64_t)h->flushes;
	r->counters[F_USE_MPIIO] = (int64_t)h->use_mpiio;
	f[FF_OPEN_START] = secs(h->open_start_ns);
	f[FF_OPEN_END] = secs(h->open_end_ns);
	f[FF_CLOSE_START] = secs(h->close_start_ns);
	f[FF_CLOSE_END] = secs(h->close_end_ns);
	f[FF_META_TIME] = secs(h->meta_ns);
}

/* H5D's timestamps and slowest calls (their sizes unknown, -1, when a call was unsized). */
static void h5d_times(const struct ioacct_h5rec *h, struct ioacct_darshan_record *r)
{
	double *f = r->fcounters;

	f[DF_OPEN_START] = secs(h->open_start_ns);
	f[DF_OPEN_END] = secs(h->open_end_ns);
	f[DF_READ_START] = secs(h->read_start_ns);
	f[DF_READ_END] = secs(h->read_end_ns);
	f[DF_WRITE_START] = secs(h->write_start_ns);
	f[DF_WRITE_END] = secs(h->write_end_ns);
	f[DF_CLOSE_START] = secs(h->close_start_ns);
	f[DF_CLOSE_END] = secs(h->close_end_ns);
	f[DF_MAX_READ_TIME] = secs(h->max_read_ns);
	f[DF_MAX_WRITE_TIME] = secs(h->max_write_ns);
	r->counters[D_MAX_READ_TIME_SIZE] = h->unsized_reads ? -1 : (int64_t)h->max_read_size;
	r->counters[D_MAX_WRITE_TIME_SIZE] = h->unsized_writes ? -1 : (int64_t)h->max_write_size;
}

/* The selections' kinds (not known when a call's was not read) and the chunk sizes (when known). */
static void h5d_layout(const struct ioacct_h5rec *h, int64_t *c)
{
	const uint64_t chunk[] = { h->chunk_size_d1, h->chunk_size_d2, h->chunk_size_d3,
				   h->chunk_size_d4, h->chunk_size_d5 };

	if (!h->unknown_selects) {
		c[D_REGULAR_HYPERSLAB_SELECTS] = (int64_t)h->regular_hyperslab_selects;
		c[D_IRREGULAR_HYPERSLAB_SELECTS] = (int64_t)h->irregular_hyperslab_selects;
		c[D_POINT_SELECTS] = (int64_t)h->point_selects;
	}
	for (size_t i = 0; h->chunk_known && i < ARRAY_SIZE(chunk); i++)
		c[D_CHUNK_SIZE_D1 + i] = (int64_t)chunk[i];
}

static void h5d_record(const struct ioacct_h5rec *h, struct ioacct_darshan_record *r)
{
	int64_t *c = r->counters;
	double *f = r->fcounters;
	bool unsized = h->unsized_reads || h->unsized_writes;

	c[D_OPENS] = (int64_t)h->opens;
	c[D_READS] = (int64_t)h->reads;
	c[D_WRITES] = (int64_t)h->writes;
	c[D_FLUSHES] = (int64_t)h->flushes;
	/* An unsized call moved bytes nobody counted: the sum is not known. */
	c[D_BYTES_READ] = h->unsized_reads ? -1 : (int64_t)h->bytes_read;
	c[D_BYTES_WRITTEN] = h->unsized_writes ? -1 : (int64_t)h->bytes_written;
	c[D_RW_SWITCHES] = (int64_t)h->rw_switches;
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		c[D_SIZE_READ_AGG_0_100 + b] = (int64_t)h->size_read[b];
		c[D_SIZE_WRITE_AGG_0_100 + b] = (int64_t)h->size_written[b];
	}
	for (int i = D_ACCESS1_ACCESS; i < D_DATASPACE_NDIMS; i++)
		c[i] = 0;
	c[D_USE_MPIIO_COLLECTIVE] = (int64_t)h->use_mpiio_collective;
	h5d_layout(h, c);
	/* Rank 0: not known (no create or open seen, or a scalar or null dataspace). */
	c[D_DATASPACE_NDIMS] = h->dataspace_ndims ? (int64_t)h->dataspace_ndims : -1;
	c[D_DATASPACE_NPOINTS] = h->dataspace_ndims ? (int64_t)h->dataspace_npoints : -1;
	/* 0: no read or write said it (a dataset only opened, or unsized calls). */
	c[D_DATATYPE_SIZE] = h->datatype_size ? (int64_t)h->datatype_size : -1;
	f[DF_READ_TIME] = secs(h->read_ns);
	f[DF_WRITE_TIME] = secs(h->write_ns);
	f[DF_META_TIME] = secs(h->meta_ns);
	h5d_times(h, r);
	/* A record of one rank is its own fastest and slowest, as Darshan's runtime sets them. */
	c[D_FASTEST_RANK] = c[D_SLOWEST_RANK] = h->rank >= 0 ? h->rank : 0;
	c[D_FASTEST_RANK_BYTES] = c[D_SLOWEST_RANK_BYTES] =
		unsized ? -1 : (int64_t)(h->bytes_read + h->bytes_written);
	f[DF_FASTEST_RANK_TIME] = f[DF_SLOWEST_RANK_TIME] =
		f[DF_READ_TIME] + f[DF_WRITE_TIME] + f[DF_META_TIME];
	f[DF_VARIANCE_RANK_TIME] = f[DF_VARIANCE_RANK_BYTES] = 0;
}

void ioacct_darshan_h5_record(const struct ioacct_h5rec *h, uint64_t id, uint64_t file_id,
			      struct ioacct_darshan_record *r)
{
	bool dataset = h->kind == IOACCT_H5REC_DATASET;
	const struct ioacct_darshan_modinfo *mi =
		ioacct_darshan_modinfo(dataset ? IOACCT_DARSHAN_H5D : IOACCT_DARSHAN_H5F);

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->rank = h->rank;
	r->file_id = dataset ? file_id : 0;
	for (size_t i = 0; i < mi->ncounters; i++)
		r->counters[i] = -1;
	for (size_t i = 0; i < mi->nfcounters; i++)
		r->fcounters[i] = -1;
	if (dataset)
		h5d_record(h, r);
	else
		h5f_record(h, r);
}

/*
 * Where the file's part of a dataset's name ("FILE:/path" or, never
 * linked, "FILE:(anonymous)") ends: its last ":/" or ":(" before the
 * dataset's path, which starts with the first such mark.
 */
static size_t file_part(const char *name)
{
	for (const char *p = name; (p = strchr(p, ':')); p++)
		if (p[1] == '/' || p[1] == '(')
			return (size_t)(p - name);
	return strlen(name);
}

struct hentry {
	char *name;                       /* the record's name */
	char *file;                       /* its file's path */
	const struct ioacct_h5rec *h;
};

static int hentry_cmp(const void *a, const void *b)
{
	const struct hentry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->h->rank < y->h->rank ? -1 : x->h->rank > y->h->rank;
}

/* e's name and file from h's name: the file's path made whole as the MPI-IO records' are. */
static int hentry_set(struct hentry *e, const struct ioacct_h5rec *h, const char *workdir)
{
	size_t fl = h->kind == IOACCT_H5REC_DATASET ? file_part(h->name) : strlen(h->name);
	char *file = strndup(h->name, fl);

	e->h = h;
	e->file = file ? ioacct_darshan_mpiio_name(file, workdir) : NULL;
	free(file);
	if (!e->file)
		return -ENOMEM;
	if (asprintf(&e->name, "%s%s", e->file, h->name + fl) < 0) {
		e->name = NULL;
		return -ENOMEM;
	}
	return 0;
}

int ioacct_darshan_h5_records(const struct ioacct_report *r, const bool *keep,
			      enum ioacct_darshan_kind kind, struct ioacct_darshan_frec **out,
			      size_t *n)
{
	const struct ioacct_jobdata *jd = r->jd;
	uint32_t want = kind == IOACCT_DARSHAN_H5D ? IOACCT_H5REC_DATASET : IOACCT_H5REC_FILE;
	struct hentry *e = calloc(jd->nh5 ? jd->nh5 : 1, sizeof(*e));
	struct ioacct_darshan_frec *fr = calloc(jd->nh5 ? jd->nh5 : 1, sizeof(*fr));
	struct ioacct_h5rec acc;
	size_t ne = 0, k = 0;
	bool ranked = false;
	int ret = 0;

	*out = NULL;
	*n = 0;
	if (!e || !fr) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < jd->nh5 && !ret; i++) {
		if (jd->h5[i].kind != want)
			continue;
		ret = hentry_set(&e[ne], &jd->h5[i], jd->job.workdir);
		if (ret || ioacct_darshan_mount_skipped(r, keep, e[ne].file)) {
			free(e[ne].name);
			free(e[ne].file);
			e[ne].name = e[ne].file = NULL;
			continue;
		}
		ne++;
	}
	if (ret)
		goto out;
	if (ne)
		qsort(e, ne, sizeof(*e), hentry_cmp);
	for (size_t i = 0; i < ne; i++)
		ranked |= e[i].h->rank >= 0;
	for (size_t i = 0, j; i < ne; i = j) {
		acc = *e[i].h;
		/*
		 * A job whose records name no rank: its processes' own, rank 0, as
		 * the POSIX records (and Darshan's non-MPI runtime); -1 would be a
		 * record shared by every rank of an MPI job.
		 */
		if (!ranked)
			acc.rank = 0;
		for (j = i + 1; j < ne && !hentry_cmp(&e[i], &e[j]); j++)
			ioacct_h5rec_add(&acc, e[j].h);
		fr[k].name = e[i].name;
		e[i].name = NULL;
		ioacct_darshan_h5_record(&acc, ioacct_darshan_hash(fr[k].name, strlen(fr[k].name), 0),
					 ioacct_darshan_hash(e[i].file, strlen(e[i].file), 0),
					 &fr[k].rec);
		k++;
	}
out:
	for (size_t i = 0; e && i < ne; i++) {
		free(e[i].name);
		free(e[i].file);
	}
	free(e);
	if (ret || !k) {
		ioacct_darshan_frecs_free(fr, k);
		return ret;
	}
	*out = fr;
	*n = k;
	return 0;
}
