/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job's MPI-IO records (issue 27) as Darshan MPIIO records (module 2,
 * version 3): one per file and rank, the records of one path and rank
 * (several steps or processes) added up, named by the path as the POSIX
 * record of the same file is, so that both carry one record id.
 *
 * What ioacct does not count is -1: hints, the open mode, read/write
 * switches, the slowest call's size and time, the common access sizes
 * and the timestamps. The bytes of a rank that made calls with a datatype
 * whose size the probes could not read (unsized) are -1 too, as they are
 * not known; those calls are in no size bin (the log's metadata says so).
 */
#include "darshan.h"
#include "util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPIIO counters of record version 3 (darshan-mpiio-log-format.h; darshan.c's names). */
enum {
	M_INDEP_OPENS, M_COLL_OPENS, M_INDEP_READS, M_INDEP_WRITES, M_COLL_READS, M_COLL_WRITES,
	M_SPLIT_READS, M_SPLIT_WRITES, M_NB_READS, M_NB_WRITES, M_SYNCS, M_HINTS, M_VIEWS, M_MODE,
	M_BYTES_READ, M_BYTES_WRITTEN, M_RW_SWITCHES, M_MAX_READ_TIME_SIZE, M_MAX_WRITE_TIME_SIZE,
	M_SIZE_READ_AGG_0_100,
	M_SIZE_WRITE_AGG_0_100 = M_SIZE_READ_AGG_0_100 + IOACCT_NR_SIZE_BINS,
	M_ACCESS1_ACCESS = M_SIZE_WRITE_AGG_0_100 + IOACCT_NR_SIZE_BINS,
	M_FASTEST_RANK = M_ACCESS1_ACCESS + 8,
	M_FASTEST_RANK_BYTES, M_SLOWEST_RANK, M_SLOWEST_RANK_BYTES, M_NCOUNTERS
};
enum {
	MF_READ_TIME = 8, MF_WRITE_TIME, MF_META_TIME, MF_MAX_READ_TIME, MF_MAX_WRITE_TIME,
	MF_FASTEST_RANK_TIME, MF_SLOWEST_RANK_TIME, MF_VARIANCE_RANK_TIME, MF_VARIANCE_RANK_BYTES,
	MF_NCOUNTERS
};
_Static_assert(M_NCOUNTERS == 51 && MF_NCOUNTERS == 17, "darshan.c's MPI-IO tables");

char *ioacct_darshan_mpiio_name(const char *path, const char *workdir)
{
	size_t n = strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	char *s = NULL;

	/* ROMIO's file-system prefix ("ufs:/scratch/f") is not part of the file's name. */
	if (n && path[n] == ':' && path[n + 1] == '/')
		path += n + 1;
	if (path[0] == '/' || !workdir || !workdir[0])
		return strdup(path);
	if (asprintf(&s, "%s%s%s", workdir, workdir[strlen(workdir) - 1] == '/' ? "" : "/",
		     path) < 0)
		return NULL;
	return s;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

void ioacct_darshan_mpiio_record(const struct ioacct_mpiio *m, uint64_t id,
				 struct ioacct_darshan_record *r)
{
	int64_t *c = r->counters;
	double *f = r->fcounters;
	int64_t bytes;

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->rank = m->rank;
	for (size_t i = 0; i < M_NCOUNTERS; i++)
		c[i] = -1;
	for (size_t i = 0; i < MF_NCOUNTERS; i++)
		f[i] = -1;
	c[M_INDEP_OPENS] = (int64_t)m->indep_opens;
	c[M_COLL_OPENS] = (int64_t)m->coll_opens;
	c[M_INDEP_READS] = (int64_t)m->indep_reads;
	c[M_INDEP_WRITES] = (int64_t)m->indep_writes;
	c[M_COLL_READS] = (int64_t)m->coll_reads;
	c[M_COLL_WRITES] = (int64_t)m->coll_writes;
	c[M_SPLIT_READS] = (int64_t)m->split_reads;
	c[M_SPLIT_WRITES] = (int64_t)m->split_writes;
	c[M_NB_READS] = (int64_t)m->nb_reads;
	c[M_NB_WRITES] = (int64_t)m->nb_writes;
	c[M_SYNCS] = (int64_t)m->syncs;
	c[M_VIEWS] = (int64_t)m->views;
	/* An unsized call moved bytes nobody counted: the sum is not known. */
	c[M_BYTES_READ] = m->unsized_reads ? -1 : (int64_t)m->bytes_read;
	c[M_BYTES_WRITTEN] = m->unsized_writes ? -1 : (int64_t)m->bytes_written;
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		c[M_SIZE_READ_AGG_0_100 + b] = (int64_t)m->size_read[b];
		c[M_SIZE_WRITE_AGG_0_100 + b] = (int64_t)m->size_written[b];
	}
	/* The common access sizes: none recorded (values and counts 0), as in the POSIX records. */
	for (int i = M_ACCESS1_ACCESS; i < M_FASTEST_RANK; i++)
		c[i] = 0;
	f[MF_READ_TIME] = secs(m->read_ns);
	f[MF_WRITE_TIME] = secs(m->write_ns);
	f[MF_META_TIME] = secs(m->meta_ns);
	/* A record of one rank is its own fastest and slowest, as Darshan's runtime sets them. */
	bytes = (int64_t)(m->bytes_read + m->bytes_written);
	c[M_FASTEST_RANK] = c[M_SLOWEST_RANK] = m->rank >= 0 ? m->rank : 0;
	c[M_FASTEST_RANK_BYTES] = c[M_SLOWEST_RANK_BYTES] =
		m->unsized_reads || m->unsized_writes ? -1 : bytes;
	f[MF_FASTEST_RANK_TIME] = f[MF_SLOWEST_RANK_TIME] =
		f[MF_READ_TIME] + f[MF_WRITE_TIME] + f[MF_META_TIME];
	f[MF_VARIANCE_RANK_TIME] = f[MF_VARIANCE_RANK_BYTES] = 0;
}

struct mentry {
	char *name;
	const struct ioacct_mpiio *m;
};

static int mentry_cmp(const void *a, const void *b)
{
	const struct mentry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->m->rank < y->m->rank ? -1 : x->m->rank > y->m->rank;
}

bool ioacct_darshan_mount_skipped(const struct ioacct_report *r, const bool *keep,
				  const char *name)
{
	size_t best = 0, at = r->nmounts;

	for (size_t i = 0; i < r->nmounts; i++) {
		const char *mp = r->mounts[i].path;
		size_t l = strlen(mp);

		if (!strncmp(name, mp, l) && (name[l] == '/' || (l && mp[l - 1] == '/')) &&
		    (at == r->nmounts || l > best)) {
			best = l;
			at = i;
		}
	}
	return keep && at < r->nmounts && !keep[at];
}

int ioacct_darshan_mpiio_records(const struct ioacct_report *r, const bool *keep,
				 struct ioacct_darshan_frec **out, size_t *n)
{
	const struct ioacct_jobdata *jd = r->jd;
	struct mentry *e = calloc(jd->nmpiio ? jd->nmpiio : 1, sizeof(*e));
	struct ioacct_darshan_frec *fr = calloc(jd->nmpiio ? jd->nmpiio : 1, sizeof(*fr));
	struct ioacct_mpiio acc;
	size_t ne = 0, k = 0;
	int ret = 0;

	*out = NULL;
	*n = 0;
	if (!e || !fr) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < jd->nmpiio; i++) {
		char *name = ioacct_darshan_mpiio_name(jd->mpiio[i].path, jd->job.workdir);

		if (!name) {
			ret = -ENOMEM;
			goto out;
		}
		if (ioacct_darshan_mount_skipped(r, keep, name)) {
			free(name);
			continue;
		}
		e[ne].name = name;
		e[ne++].m = &jd->mpiio[i];
	}
	if (ne)
		qsort(e, ne, sizeof(*e), mentry_cmp);
	for (size_t i = 0, j; i < ne; i = j) {
		acc = *e[i].m;
		for (j = i + 1; j < ne && !mentry_cmp(&e[i], &e[j]); j++)
			ioacct_mpiio_add(&acc, e[j].m);
		fr[k].name = e[i].name;
		e[i].name = NULL;
		ioacct_darshan_mpiio_record(&acc, ioacct_darshan_hash(fr[k].name, strlen(fr[k].name),
								     0), &fr[k].rec);
		k++;
	}
out:
	for (size_t i = 0; e && i < ne; i++)
		free(e[i].name);
	free(e);
	if (ret || !k) {
		ioacct_darshan_frecs_free(fr, k);
		return ret;
	}
	*out = fr;
	*n = k;
	return 0;
}
