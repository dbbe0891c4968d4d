/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Calls added to a per-file record (struct ioacct_file, issue 26) made with
 * jobbuild.h's jb_file(), as ioacct_store_job_load() returns them. Aborts on out of
 * memory (tests only).
 */
#ifndef IOACCT_TEST_FILEBUILD_H
#define IOACCT_TEST_FILEBUILD_H

#include "jobbuild.h"

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
