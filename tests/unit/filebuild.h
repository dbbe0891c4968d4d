/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-file records (struct ioacct_file, issue 26) added to a job built with
 * jobbuild.h, as ioacct_store_job_load() returns them. Aborts on out of
 * memory (tests only).
 */
#ifndef IOACCT_TEST_FILEBUILD_H
#define IOACCT_TEST_FILEBUILD_H

#include "jobbuild.h"

/* A file's record with no calls yet: times -1 ("none"), as the daemon stores them. */
static inline struct ioacct_file *jb_file(struct jb *b, uint32_t step, int32_t rank, uint32_t mnt,
					  uint32_t dev, uint64_t ino, const char *path)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_file *f;

	jd->files = jb_grow(jd->files, jd->nfiles + 1, sizeof(*jd->files));
	f = &jd->files[jd->nfiles++];
	memset(f, 0, sizeof(*f));
	f->step_id = step;
	f->rank = rank;
	f->mnt_id = mnt;
	f->dev = dev;
	f->ino = ino;
	ioacct_strlcpy(f->path, path, sizeof(f->path));
	f->first_read_ns = f->last_read_ns = f->first_write_ns = f->last_write_ns = -1;
	return f;
}

/* n reads (rd) or writes of `size` bytes each from offset 0, one after the other, over [t0, t1]. */
static inline void jb_file_rw(struct ioacct_file *f, bool rd, uint64_t n, uint64_t size,
			      uint64_t ns, int64_t t0, int64_t t1)
{
	if (rd) {
		f->reads += n;
		f->bytes_read += n * size;
		f->read_ns += ns;
		f->max_byte_read = (int64_t)(n * size) - 1;
		f->seq_reads += n - 1;
		f->consec_reads += n - 1;
		f->size_read[ioacct_size_bin(size)] += n;
		f->first_read_ns = t0;
		f->last_read_ns = t1;
	} else {
		f->writes += n;
		f->bytes_written += n * size;
		f->write_ns += ns;
		f->max_byte_written = (int64_t)(n * size) - 1;
		f->seq_writes += n - 1;
		f->consec_writes += n - 1;
		f->size_written[ioacct_size_bin(size)] += n;
		f->first_write_ns = t0;
		f->last_write_ns = t1;
	}
}

#endif /* IOACCT_TEST_FILEBUILD_H */
