/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job's per-file records (issue 26) as Darshan POSIX records (darshan.h,
 * ioacct_darshan_file_records): what the writer puts in a job's log and
 * what ioreport --compare holds against a log's records, file by file.
 *
 * One record per file name and rank: ioacct keeps a record per step, mount
 * and life of an inode, Darshan one per path and rank, so records of one
 * path (a file replaced under its name, a file of several steps) are added
 * up (their common access sizes merged as Darshan merges ranks'), as
 * Darshan's runtime would have counted them under one record id. A mount's
 * calls that no file's record holds (directories, pipes, renames, the paths
 * the kernel side does not count per file yet) are one more record of that
 * mount, so that the records of a mount still add up to its counters.
 */
#include "darshan.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* POSIX counters the writer sets that darshan_counters.h does not name. */
enum {
	C_RENAMED_FROM = 12,
	C_MODE = 13,
	C_MAX_BYTE_READ = 16,
	C_MAX_BYTE_WRITTEN = 17,
	C_CONSEC_READS = 18,
	C_CONSEC_WRITES = 19,
	C_SEQ_READS = 20,
	C_SEQ_WRITES = 21,
	C_RW_SWITCHES = 22,
	C_MEM_NOT_ALIGNED = 23,
	C_FILE_NOT_ALIGNED = 25,
	C_MAX_READ_TIME_SIZE = 27,
	C_MAX_WRITE_TIME_SIZE = 28,
	C_STRIDE1_STRIDE = 49,  /* to ACCESS4_COUNT (64): the common-value tables */
	C_ACCESS1_ACCESS = 57,
	C_ACCESS1_COUNT = 61,
	F_OPEN_START = 0,
	F_READ_START = 1,
	F_WRITE_START = 2,
	F_CLOSE_START = 3,
	F_OPEN_END = 4,
	F_READ_END = 5,
	F_WRITE_END = 6,
	F_CLOSE_END = 7,
	F_MAX_READ_TIME = 11,
	F_MAX_WRITE_TIME = 12,
	F_VARIANCE_TIME = 15,
	F_VARIANCE_BYTES = 16,
};

char *ioacct_darshan_mount_name(const char *path)
{
	size_t n = 0;
	char *s, *d;

	for (const char *p = path; *p; p++)
		n += *p == '\t' || *p == '\n' ? 4 : 1;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	d = s;
	for (const char *p = path; *p; p++) {
		if (*p == '\t' || *p == '\n')
			d += sprintf(d, "\\%03o", (unsigned char)*p);
		else
			*d++ = *p;
	}
	*d = '\0';
	return s;
}

/* "<mount>/<ioacct: what>", no doubled slash under "/". */
static char *pseudo_name(const char *mount, const char *what)
{
	char *mn = ioacct_darshan_mount_name(mount), *s = NULL;
	size_t l;

	if (!mn)
		return NULL;
	l = strlen(mn);
	if (asprintf(&s, "%s%s<ioacct: %s>", mn, l && mn[l - 1] == '/' ? "" : "/", what) < 0)
		s = NULL;
	free(mn);
	return s;
}

static bool under_mount(const char *path, const char *mount)
{
	size_t l = strlen(mount);

	if (path[0] != '/')
		return false;
	if (l && mount[l - 1] == '/')
		return strncmp(path, mount, l) == 0;
	return strncmp(path, mount, l) == 0 && path[l] == '/';
}

char *ioacct_darshan_file_name(const char *mount, const struct ioacct_file *f)
{
	char what[IOACCT_FILE_PATH_MAX + 64];

	if (ioacct_file_is_other(f))
		return pseudo_name(mount, IOACCT_DARSHAN_OTHER_FILES);
	if (f->path[0] && under_mount(f->path, mount))
		return strdup(f->path);
	/* No path, or one cut short by the kernel ("...a/b"): named by its inode, on its mount. */
	snprintf(what, sizeof(what), "dev %u:%u ino %" PRIu64 "%s%s", f->dev >> 20, f->dev & 0xfffff,
		 f->ino, f->path[0] ? " " : "", f->path);
	return pseudo_name(mount, what);
}

/* ---- one record per name and rank ---- */

struct entry {
	char *name;
	size_t mount;                     /* index into the report's mounts */
	const struct ioacct_file *f;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->f->rank < y->f->rank ? -1 : x->f->rank > y->f->rank;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* A time from the job's start in seconds; Darshan's 0 where there was no such access. */
static double stamp(int64_t ns)
{
	return ns < 0 ? 0 : (double)ns / 1e9;
}

/* Every counter "not measured" (-1) but those that mean "none" at 0. */
static void record_init(struct ioacct_darshan_record *r, uint64_t id, int64_t rank)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->rank = rank;
	for (size_t i = 0; i < IOACCT_DARSHAN_POSIX_NCOUNTERS; i++)
		r->counters[i] = -1;
	for (size_t i = 0; i < IOACCT_DARSHAN_POSIX_NFCOUNTERS; i++)
		r->fcounters[i] = -1;
	r->counters[C_RENAMED_FROM] = 0;
	/* The common strides and access sizes: none recorded (values and counts 0). */
	for (size_t i = C_STRIDE1_STRIDE; i < IOACCT_DARSHAN_POSIX_FASTEST_RANK; i++)
		r->counters[i] = 0;
	r->fcounters[F_VARIANCE_TIME] = r->fcounters[F_VARIANCE_BYTES] = 0;
}

/* A record of one rank is its own fastest and slowest rank, as Darshan's runtime sets them. */
static void record_rank_times(struct ioacct_darshan_record *r)
{
	int64_t *c = r->counters;
	double *f = r->fcounters;
	int64_t bytes = c[IOACCT_DARSHAN_POSIX_BYTES_READ] + c[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN];
	double t = f[IOACCT_DARSHAN_POSIX_F_READ_TIME] + f[IOACCT_DARSHAN_POSIX_F_WRITE_TIME] +
		   f[IOACCT_DARSHAN_POSIX_F_META_TIME];

	c[IOACCT_DARSHAN_POSIX_FASTEST_RANK] = c[IOACCT_DARSHAN_POSIX_SLOWEST_RANK] =
		r->rank >= 0 ? r->rank : 0;
	c[IOACCT_DARSHAN_POSIX_FASTEST_RANK_BYTES] = c[IOACCT_DARSHAN_POSIX_SLOWEST_RANK_BYTES] = bytes;
	f[IOACCT_DARSHAN_POSIX_F_FASTEST_RANK_TIME] = f[IOACCT_DARSHAN_POSIX_F_SLOWEST_RANK_TIME] = t;
}

/*
 * Counters the kernel does not keep per file but a file's counts pin down,
 * as Darshan would have them (else they stay -1, not measured): none of a
 * kind of call, none of what it measures (no open: no open or close time
 * and no mode; no fsync: no fdatasync; no read or write: nothing
 * misaligned); one read (write): it is the slowest, with its size and time.
 */
static void known_by_count(const struct ioacct_file *fl, struct ioacct_darshan_record *r)
{
	int64_t *c = r->counters;
	double *f = r->fcounters;

	if (fl->opens == 0) {
		c[C_MODE] = 0;
		f[F_OPEN_START] = f[F_OPEN_END] = f[F_CLOSE_START] = f[F_CLOSE_END] = 0;
	}
	if (fl->fsyncs == 0)
		c[IOACCT_DARSHAN_POSIX_FDSYNCS] = 0;
	if (fl->reads == 0 && fl->writes == 0)
		c[C_MEM_NOT_ALIGNED] = c[C_FILE_NOT_ALIGNED] = 0;
	if (fl->reads <= 1) {
		c[C_MAX_READ_TIME_SIZE] = fl->reads ? (int64_t)fl->bytes_read : 0;
		f[F_MAX_READ_TIME] = fl->reads ? secs(fl->read_ns) : 0;
	}
	if (fl->writes <= 1) {
		c[C_MAX_WRITE_TIME_SIZE] = fl->writes ? (int64_t)fl->bytes_written : 0;
		f[F_MAX_WRITE_TIME] = fl->writes ? secs(fl->write_ns) : 0;
	}
}

void ioacct_darshan_file_record(const struct ioacct_file *fl, uint64_t id,
				struct ioacct_darshan_record *r)
{
	int64_t *c = r->counters;
	double *f = r->fcounters;

	record_init(r, id, fl->rank);
	c[IOACCT_DARSHAN_POSIX_OPENS] = (int64_t)fl->opens;
	c[IOACCT_DARSHAN_POSIX_READS] = (int64_t)fl->reads;
	c[IOACCT_DARSHAN_POSIX_WRITES] = (int64_t)fl->writes;
	c[IOACCT_DARSHAN_POSIX_STATS] = (int64_t)fl->stats;
	/* fdatasync is counted with fsync (FDSYNCS stays -1), as in the mounts' counters. */
	c[IOACCT_DARSHAN_POSIX_FSYNCS] = (int64_t)fl->fsyncs;
	c[IOACCT_DARSHAN_POSIX_SEEKS] = (int64_t)fl->seeks;
	c[IOACCT_DARSHAN_POSIX_BYTES_READ] = (int64_t)fl->bytes_read;
	c[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN] = (int64_t)fl->bytes_written;
	/* Offsets and access patterns of "other files" mix files: not a file's, so unknown. */
	if (!ioacct_file_is_other(fl)) {
		c[C_MAX_BYTE_READ] = fl->max_byte_read;
		c[C_MAX_BYTE_WRITTEN] = fl->max_byte_written;
		c[C_CONSEC_READS] = (int64_t)fl->consec_reads;
		c[C_CONSEC_WRITES] = (int64_t)fl->consec_writes;
		c[C_SEQ_READS] = (int64_t)fl->seq_reads;
		c[C_SEQ_WRITES] = (int64_t)fl->seq_writes;
		c[C_RW_SWITCHES] = (int64_t)fl->rw_switches;
		for (unsigned int i = 0; i < IOACCT_FILE_ACCESSES; i++) {
			c[C_ACCESS1_ACCESS + i] = (int64_t)fl->access[i];
			c[C_ACCESS1_COUNT + i] = (int64_t)fl->access_count[i];
		}
	}
	/* ioacct's size bins have Darshan's edges exactly (model.c, darshan.md). */
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		c[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 + b] = (int64_t)fl->size_read[b];
		c[IOACCT_DARSHAN_POSIX_SIZE_WRITE_0_100 + b] = (int64_t)fl->size_written[b];
	}
	f[F_READ_START] = stamp(fl->first_read_ns);
	f[F_READ_END] = stamp(fl->last_read_ns);
	f[F_WRITE_START] = stamp(fl->first_write_ns);
	f[F_WRITE_END] = stamp(fl->last_write_ns);
	f[IOACCT_DARSHAN_POSIX_F_READ_TIME] = secs(fl->read_ns);
	/* The kernel keeps one metadata time per file: fsync's is in it (ioacct_fsync_time=meta). */
	f[IOACCT_DARSHAN_POSIX_F_WRITE_TIME] = secs(fl->write_ns);
	f[IOACCT_DARSHAN_POSIX_F_META_TIME] = secs(fl->meta_ns);
	if (!ioacct_file_is_other(fl))
		known_by_count(fl, r);
	record_rank_times(r);
}

/* a - b, never below 0 (the kernel may have dropped a file's update, never a mount's). */
static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t ok_calls(const struct ioacct_counters *c)
{
	return c->calls >= c->errors ? c->calls - c->errors : 0;
}

/*
 * The calls of mount m that no file's record holds: its counters less the
 * sum of its files' (in *sum). False when there are none.
 */
static bool rest_of_mount(const struct ioacct_report_mount *m, const struct ioacct_file *sum,
			  struct ioacct_darshan_record *r)
{
	const struct ioacct_counters *op = m->op;
	int64_t *c = r->counters;
	double *f = r->fcounters;
	uint64_t any = 0, v;

	c[IOACCT_DARSHAN_POSIX_OPENS] = (int64_t)less(ok_calls(&op[IOACCT_OP_OPEN]), sum->opens);
	c[IOACCT_DARSHAN_POSIX_READS] = (int64_t)less(ok_calls(&op[IOACCT_OP_READ]), sum->reads);
	c[IOACCT_DARSHAN_POSIX_WRITES] = (int64_t)less(ok_calls(&op[IOACCT_OP_WRITE]), sum->writes);
	c[IOACCT_DARSHAN_POSIX_STATS] = (int64_t)less(ok_calls(&op[IOACCT_OP_STAT]), sum->stats);
	c[IOACCT_DARSHAN_POSIX_FSYNCS] = (int64_t)less(ok_calls(&op[IOACCT_OP_FSYNC]), sum->fsyncs);
	c[IOACCT_DARSHAN_POSIX_SEEKS] = (int64_t)less(ok_calls(&op[IOACCT_OP_SEEK]), sum->seeks);
	c[IOACCT_DARSHAN_POSIX_RENAME_SOURCES] = (int64_t)ok_calls(&op[IOACCT_OP_RENAME]);
	c[IOACCT_DARSHAN_POSIX_BYTES_READ] = (int64_t)less(op[IOACCT_OP_READ].bytes, sum->bytes_read);
	c[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN] = (int64_t)less(op[IOACCT_OP_WRITE].bytes,
							      sum->bytes_written);
	for (int i = IOACCT_DARSHAN_POSIX_OPENS; i <= IOACCT_DARSHAN_POSIX_BYTES_WRITTEN; i++)
		any |= c[i] > 0 ? (uint64_t)c[i] : 0;
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		v = less(op[IOACCT_OP_READ].size_hist[b], sum->size_read[b]);
		c[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 + b] = (int64_t)v;
		any |= v;
		v = less(op[IOACCT_OP_WRITE].size_hist[b], sum->size_written[b]);
		c[IOACCT_DARSHAN_POSIX_SIZE_WRITE_0_100 + b] = (int64_t)v;
		any |= v;
	}
	v = less(op[IOACCT_OP_READ].ns, sum->read_ns);
	f[IOACCT_DARSHAN_POSIX_F_READ_TIME] = secs(v);
	any |= v;
	v = less(op[IOACCT_OP_WRITE].ns, sum->write_ns);
	f[IOACCT_DARSHAN_POSIX_F_WRITE_TIME] = secs(v);
	any |= v;
	v = less(m->meta_ns, sum->meta_ns);
	f[IOACCT_DARSHAN_POSIX_F_META_TIME] = secs(v);
	any |= v;
	record_rank_times(r);
	return any != 0;
}

void ioacct_darshan_frecs_free(struct ioacct_darshan_frec *fr, size_t n)
{
	if (!fr)
		return;
	for (size_t i = 0; i < n; i++)
		free(fr[i].name);
	free(fr);
}

/* The report mount of a file, when kept; r->nmounts when not. */
static size_t mount_index(const struct ioacct_report *r, const bool *keep, uint64_t mnt_id)
{
	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].mnt_id == mnt_id)
			return !keep || keep[i] ? i : r->nmounts;
	return r->nmounts;
}

/*
 * The files of kept mounts, named, sorted by name and rank; their sums per
 * mount. With darshan_filter, not those Darshan leaves out by path.
 */
static int entries_of(const struct ioacct_report *r, const bool *keep, bool darshan_filter,
		      struct entry **out, size_t *n, struct ioacct_file *sums)
{
	const struct ioacct_jobdata *jd = r->jd;
	struct entry *e = calloc(jd->nfiles ? jd->nfiles : 1, sizeof(*e));

	*out = e;
	*n = 0;
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < jd->nfiles; i++) {
		const struct ioacct_file *f = &jd->files[i];
		size_t mi = mount_index(r, keep, f->mnt_id);

		if (mi == r->nmounts || (darshan_filter && ioacct_darshan_skips_path(f->path)))
			continue;
		e[*n].name = ioacct_darshan_file_name(r->mounts[mi].path, f);
		if (!e[*n].name)
			return -ENOMEM;
		e[*n].mount = mi;
		e[*n].f = f;
		(*n)++;
		ioacct_file_add(&sums[mi], f);
	}
	qsort(e, *n, sizeof(*e), entry_cmp);
	return 0;
}

/* The records of the sorted entries, one per name and rank, into fr; their count. */
static size_t records_of(struct entry *e, size_t n, struct ioacct_darshan_frec *fr, bool *partial)
{
	struct ioacct_file *acc = malloc(sizeof(*acc));
	size_t k = 0;

	if (!acc)
		return SIZE_MAX;
	for (size_t i = 0, j; i < n; i = j) {
		*acc = *e[i].f;
		for (j = i + 1; j < n && !entry_cmp(&e[i], &e[j]); j++)
			ioacct_file_add(acc, e[j].f);
		*partial |= ioacct_file_is_other(acc);
		fr[k].pseudo = ioacct_file_is_other(acc);
		fr[k].name = e[i].name;
		e[i].name = NULL;
		fr[k].mount = e[i].mount;
		ioacct_darshan_file_record(acc, ioacct_darshan_hash(fr[k].name, strlen(fr[k].name), 0),
					   &fr[k].rec);
		k++;
	}
	free(acc);
	return k;
}

/* Adds the rest b to the rest a of a mount of the same path (two mount ids, one mount point). */
static void rest_add(struct ioacct_darshan_record *a, const struct ioacct_darshan_record *b)
{
	for (int i = IOACCT_DARSHAN_POSIX_OPENS; i <= IOACCT_DARSHAN_POSIX_BYTES_WRITTEN; i++)
		if (a->counters[i] >= 0 && b->counters[i] >= 0)
			a->counters[i] += b->counters[i];
	for (int i = 0; i < 2 * IOACCT_NR_SIZE_BINS; i++)
		a->counters[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 + i] +=
			b->counters[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 + i];
	for (int i = IOACCT_DARSHAN_POSIX_F_READ_TIME; i <= IOACCT_DARSHAN_POSIX_F_META_TIME; i++)
		a->fcounters[i] += b->fcounters[i];
	record_rank_times(a);
}

/* The rest of each kept mount's calls, after the files' records: one record per mount point. */
static int rests_of(const struct ioacct_report *r, const bool *keep, const struct ioacct_file *sums,
		    struct ioacct_darshan_frec *fr, size_t *k)
{
	size_t first = *k;

	for (size_t i = 0; i < r->nmounts; i++) {
		struct ioacct_darshan_frec *x = &fr[*k], *same = NULL;

		if (keep && !keep[i])
			continue;
		x->name = pseudo_name(r->mounts[i].path, IOACCT_DARSHAN_NOT_PER_FILE);
		if (!x->name)
			return -ENOMEM;
		record_init(&x->rec, ioacct_darshan_hash(x->name, strlen(x->name), 0), -1);
		x->mount = i;
		x->pseudo = true;
		for (size_t j = first; j < *k && !same; j++)
			same = !strcmp(fr[j].name, x->name) ? &fr[j] : NULL;
		if (rest_of_mount(&r->mounts[i], &sums[i], &x->rec) && !same) {
			(*k)++;
			continue;
		}
		if (same)
			rest_add(&same->rec, &x->rec);
		free(x->name);
		x->name = NULL;
	}
	return 0;
}

int ioacct_darshan_file_records(const struct ioacct_report *r, const bool *keep,
				bool darshan_filter, struct ioacct_darshan_frec **out, size_t *n,
				bool *partial)
{
	struct ioacct_file *sums = NULL;
	struct ioacct_darshan_frec *fr = NULL;
	struct entry *e = NULL;
	size_t ne = 0, k = 0;
	int ret = 0;

	*out = NULL;
	*n = 0;
	*partial = false;
	if (!r->jd->nfiles)
		return 0;
	sums = calloc(r->nmounts ? r->nmounts : 1, sizeof(*sums));
	ret = sums ? entries_of(r, keep, darshan_filter, &e, &ne, sums) : -ENOMEM;
	if (!ret) {
		fr = calloc(ne + r->nmounts + 1, sizeof(*fr));
		ret = fr ? 0 : -ENOMEM;
	}
	if (!ret) {
		k = records_of(e, ne, fr, partial);
		ret = k == SIZE_MAX ? -ENOMEM : 0;
	}
	if (!ret)
		ret = rests_of(r, keep, sums, fr, &k);
	for (size_t i = 0; e && i < ne; i++)
		free(e[i].name);
	free(e);
	free(sums);
	if (ret) {
		ioacct_darshan_frecs_free(fr, k == SIZE_MAX ? 0 : k);
		return ret;
	}
	*out = fr;
	*n = k;
	return 0;
}
