// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report's HDF5 part (issue 39): per HDF5 file (its H5F records' name),
 * the bytes its datasets' reads and writes asked for, summed over ranks and
 * steps, beside the POSIX bytes of the same file (its per-file records of
 * that path): what reached the file system for what the library was asked,
 * chunking, compression and metadata included.
 */
#include "report_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct ioacct_report_h5_file *file_named(struct ioacct_report *r, const char *name)
{
	for (size_t i = 0; i < r->nh5_files; i++)
		if (!strcmp(r->h5_files[i].name, name))
			return &r->h5_files[i];
	return NULL;
}

/* The file of a dataset record "FILE:/path" (or "FILE:(anonymous)"): the longest FILE known. */
static struct ioacct_report_h5_file *file_of(struct ioacct_report *r, const char *dset)
{
	struct ioacct_report_h5_file *best = NULL;
	size_t blen = 0;

	for (size_t i = 0; i < r->nh5_files; i++) {
		size_t len = strlen(r->h5_files[i].name);

		if (len > blen && !strncmp(dset, r->h5_files[i].name, len) && dset[len] == ':') {
			best = &r->h5_files[i];
			blen = len;
		}
	}
	return best;
}

int ioacct_report_h5_collect(struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	struct ioacct_report_h5_file *x;

	r->h5_files = NULL;
	r->nh5_files = 0;
	if (!jd->h5_loaded)
		return 0;
	/* The files first (one entry per name, whatever the ranks), then their datasets. */
	for (size_t i = 0; i < jd->nh5; i++) {
		const struct ioacct_h5rec *h = &jd->h5[i];

		if (h->kind != IOACCT_H5REC_FILE || file_named(r, h->name))
			continue;
		x = realloc(r->h5_files, (r->nh5_files + 1) * sizeof(*x));
		if (!x)
			return -ENOMEM;
		r->h5_files = x;
		x = &r->h5_files[r->nh5_files++];
		*x = (struct ioacct_report_h5_file){ .name = h->name };
		for (size_t k = 0; k < r->nrecords; k++) {
			const struct ioacct_file *f = r->records[k];

			if (ioacct_file_is_other(f) || strcmp(f->path, h->name))
				continue;
			x->posix_found = true;
			x->posix_read += f->bytes_read;
			x->posix_written += f->bytes_written;
		}
	}
	for (size_t i = 0; i < jd->nh5; i++) {
		const struct ioacct_h5rec *h = &jd->h5[i];

		if (h->kind != IOACCT_H5REC_DATASET || !(x = file_of(r, h->name)))
			continue;
		x->ndatasets++;
		x->bytes_read += h->bytes_read;
		x->bytes_written += h->bytes_written;
		x->unsized_reads += h->unsized_reads;
		x->unsized_writes += h->unsized_writes;
	}
	return 0;
}
