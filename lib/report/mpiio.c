// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report's MPI-IO part (issue 27): the job's MPI-IO records (one per
 * step, process and file) summed per file, beside the POSIX bytes of the
 * same files. Their ratio makes collective buffering (aggregators move
 * other ranks' bytes) and data sieving (whole blocks read for holes)
 * visible. A file is its path as named to MPI_File_open; its POSIX records
 * are those with that path, and every record of the same inodes (some of
 * OMPIO's opens leave a record's path empty).
 */
#include "report_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The path without a ROMIO file-system prefix ("ufs:/scratch/f" is "/scratch/f"). */
static const char *plain_path(const char *p)
{
	size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	return n && p[n] == ':' && p[n + 1] == '/' ? p + n + 1 : p;
}

double ioacct_report_mpiio_ratio(const struct ioacct_report_mpiio_file *x)
{
	uint64_t posix = x->posix_read + x->posix_written;

	if (!posix)
		return -1;
	return (double)(x->sum.bytes_read + x->sum.bytes_written) / (double)posix;
}

/*
 * The POSIX bytes of the file at `path`: its records', and every one of the
 * same inode (a file is one inode; found by path, it is seldom more than
 * a few, kept in `ids`, room for n). Two passes over the records.
 */
static int posix_of(const struct ioacct_report *r, const char *path,
		    struct ioacct_report_mpiio_file *x)
{
	const struct ioacct_file **ids = NULL, **grown;
	size_t nids = 0;

	for (size_t i = 0; i < r->nrecords; i++) {
		const struct ioacct_file *f = r->records[i];
		bool known = false;

		if (ioacct_file_is_other(f) || strcmp(f->path, path) != 0)
			continue;
		for (size_t k = 0; k < nids && !known; k++)
			known = ids[k]->dev == f->dev && ids[k]->ino == f->ino &&
				ids[k]->mnt_id == f->mnt_id;
		if (known)
			continue;
		grown = realloc(ids, (nids + 1) * sizeof(*ids));
		if (!grown) {
			free(ids);
			return -ENOMEM;
		}
		ids = grown;
		ids[nids++] = f;
	}
	for (size_t i = 0; i < r->nrecords && nids; i++) {
		const struct ioacct_file *f = r->records[i];
		bool same = false;

		for (size_t k = 0; k < nids && !same; k++)
			same = ids[k]->dev == f->dev && ids[k]->ino == f->ino &&
			       ids[k]->mnt_id == f->mnt_id;
		if (!same || ioacct_file_is_other(f))
			continue;
		x->posix_found = true;
		x->posix_read += f->bytes_read;
		x->posix_written += f->bytes_written;
	}
	free(ids);
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	const struct ioacct_report_mpiio_file *x = a, *y = b;

	return strcmp(x->sum.path, y->sum.path);
}

int ioacct_report_mpiio_collect(struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	struct ioacct_report_mpiio_file *files, *x;
	size_t n = 0;

	if (!jd->mpiio_loaded || !jd->nmpiio)
		return 0;
	files = calloc(jd->nmpiio, sizeof(*files));
	if (!files)
		return -ENOMEM;
	for (size_t i = 0; i < jd->nmpiio; i++) {
		const struct ioacct_mpiio *m = &jd->mpiio[i];
		const char *path = plain_path(m->path);

		x = NULL;
		for (size_t k = 0; k < n && !x; k++)
			if (strcmp(files[k].sum.path, path) == 0)
				x = &files[k];
		if (!x) {
			x = &files[n++];
			ioacct_strlcpy(x->sum.path, path, sizeof(x->sum.path));
			x->sum.rank = m->rank;
			x->sum.step_id = m->step_id;
		}
		ioacct_mpiio_add(&x->sum, m);
		x->nranks++;
		ioacct_mpiio_add(&r->mpiio_all.sum, m);
	}
	qsort(files, n, sizeof(*files), cmp_path);
	for (size_t k = 0; k < n; k++) {
		x = &files[k];
		/* One record: its rank; several: -1, "all". */
		if (x->nranks > 1)
			x->sum.rank = -1;
		if (posix_of(r, x->sum.path, x)) {
			free(files);
			return -ENOMEM;
		}
		r->mpiio_all.posix_found |= x->posix_found;
		r->mpiio_all.posix_read += x->posix_read;
		r->mpiio_all.posix_written += x->posix_written;
	}
	r->mpiio_all.nranks = (uint32_t)jd->nmpiio;
	r->mpiio_all.sum.rank = -1;
	r->mpiio_files = files;
	r->nmpiio_files = n;
	return 0;
}

void ioacct_report_mpiio_free(struct ioacct_report *r)
{
	free(r->mpiio_files);
	r->mpiio_files = NULL;
	r->nmpiio_files = 0;
}
