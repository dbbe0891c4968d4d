// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report's per-file part (issue 26): the job's per-file records (one
 * per step, rank, mount and file) summed per file, the rank that moved
 * most, the "other files" of max_files, and the advice rules that name a
 * file. A file is its mount, device, inode and the inode's life (issue 36):
 * a record per rank and step of one file is one row; each mount's "other
 * files" is one row too.
 */
#include "report_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct ioacct_report_mount *ioacct_report_file_mount(const struct ioacct_report *r,
							   uint64_t mnt_id)
{
	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].mnt_id == mnt_id)
			return &r->mounts[i];
	return NULL;
}

uint64_t ioacct_file_calls(const struct ioacct_file *f)
{
	return f->opens + f->reads + f->writes + f->stats + f->fsyncs + f->seeks;
}

static uint64_t file_ns(const struct ioacct_file *f)
{
	return f->read_ns + f->write_ns + f->meta_ns;
}

/* The file's records together, then per rank: mount, other, dev, ino, gen, rank. */
static int cmp_key(const void *a, const void *b)
{
	const struct ioacct_file *x = *(const struct ioacct_file *const *)a;
	const struct ioacct_file *y = *(const struct ioacct_file *const *)b;

	if (x->mnt_id != y->mnt_id)
		return x->mnt_id < y->mnt_id ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return 0;
}

static bool same_file(const struct ioacct_file *x, const struct ioacct_file *y)
{
	return x->mnt_id == y->mnt_id && x->dev == y->dev && x->ino == y->ino && x->gen == y->gen;
}

/* Adds record `f` into the row's sum, named by the first record with a path. */
static void file_add(struct ioacct_file *s, const struct ioacct_file *f)
{
	ioacct_file_add(s, f);
	if (!s->path[0] && f->path[0])
		memcpy(s->path, f->path, sizeof(s->path));
}

/*
 * One row from the records [k, end) of one file, ordered by rank: the sum,
 * and the rank whose records moved most bytes (then took most time; the
 * lower rank on a tie).
 */
static void file_row(struct ioacct_report *r, struct ioacct_report_file *row,
		     const struct ioacct_file **rec, size_t k, size_t end)
{
	uint64_t best_bytes = 0, best_ns = 0;

	memset(row, 0, sizeof(*row));
	row->sum = *rec[k];
	row->sum.path[0] = '\0';
	memset(&row->sum.opens, 0, sizeof(row->sum) - offsetof(struct ioacct_file, opens));
	row->sum.max_byte_read = row->sum.max_byte_written = 0;
	row->sum.first_read_ns = row->sum.first_write_ns = -1;
	row->sum.last_read_ns = row->sum.last_write_ns = -1;
	row->mount = ioacct_report_file_mount(r, rec[k]->mnt_id);
	row->other = ioacct_file_is_other(rec[k]);
	row->top_rank = rec[k]->rank;
	while (k < end) {
		size_t e = k;
		uint64_t bytes = 0, ns = 0;

		for (; e < end && rec[e]->rank == rec[k]->rank; e++) {
			file_add(&row->sum, rec[e]);
			bytes += rec[e]->bytes_read + rec[e]->bytes_written;
			ns += file_ns(rec[e]);
		}
		if (row->nranks == 0 || bytes > best_bytes || (bytes == best_bytes && ns > best_ns)) {
			best_bytes = bytes;
			best_ns = ns;
			row->top_rank = rec[k]->rank;
		}
		row->nranks++;
		k = e;
	}
	row->sum.rank = row->top_rank;
	row->calls = ioacct_file_calls(&row->sum);
	row->ns = file_ns(&row->sum);
}

/* Most bytes moved first, then most time, then the mount's and the path's order. */
static int cmp_rows(const void *a, const void *b)
{
	const struct ioacct_report_file *x = a, *y = b;
	uint64_t bx = x->sum.bytes_read + x->sum.bytes_written;
	uint64_t by = y->sum.bytes_read + y->sum.bytes_written;

	if (bx != by)
		return bx > by ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->sum.mnt_id != y->sum.mnt_id)
		return x->sum.mnt_id < y->sum.mnt_id ? -1 : 1;
	return strcmp(x->sum.path, y->sum.path);
}

/* The records of the mounts the report keeps (all of them without only_mount). */
static int keep_records(struct ioacct_report *r, const char *only_mount)
{
	const struct ioacct_jobdata *jd = r->jd;

	r->records = calloc(jd->nfiles ? jd->nfiles : 1, sizeof(*r->records));
	if (!r->records)
		return -ENOMEM;
	for (size_t i = 0; i < jd->nfiles; i++) {
		const struct ioacct_file *f = &jd->files[i];

		if (only_mount && !ioacct_report_file_mount(r, f->mnt_id))
			continue;
		r->records[r->nrecords++] = f;
		if (ioacct_file_is_other(f)) {
			r->files_partial = true;
			r->other_calls += ioacct_file_calls(f);
			r->other_bytes += f->bytes_read + f->bytes_written;
		}
	}
	return 0;
}

int ioacct_report_files_collect(struct ioacct_report *r, const char *only_mount)
{
	const struct ioacct_file **rec;
	int ret = keep_records(r, only_mount);

	if (ret)
		return ret;
	/* Not measured is not 0: a job without the view (or the exact hooks) has no number. */
	r->files_mmap = ioacct_probe_has_view(r->jd->job.probe_mode, "mmap");
	r->files_miss = ioacct_probe_has_view(r->jd->job.probe_mode, "cache");
	r->files = calloc(r->nrecords ? r->nrecords : 1, sizeof(*r->files));
	rec = malloc((r->nrecords ? r->nrecords : 1) * sizeof(*rec));
	if (!r->files || !rec) {
		free(rec);
		return -ENOMEM;
	}
	if (r->nrecords)
		memcpy(rec, r->records, r->nrecords * sizeof(*rec));
	qsort(rec, r->nrecords, sizeof(*rec), cmp_key);
	for (size_t k = 0, end; k < r->nrecords; k = end) {
		for (end = k + 1; end < r->nrecords && same_file(rec[k], rec[end]); end++)
			;
		file_row(r, &r->files[r->nfiles++], rec, k, end);
	}
	qsort(r->files, r->nfiles, sizeof(*r->files), cmp_rows);
	free(rec);
	return 0;
}

void ioacct_report_files_free(struct ioacct_report *r)
{
	free(r->records);
	free(r->files);
}

/* ---- advice that names the file ---- */

/* The bytes of the file the job saw: past its largest byte read or written. */
static int64_t max_i64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static uint64_t file_extent(const struct ioacct_file *f)
{
	return (uint64_t)max_i64(max_i64(f->max_byte_read, f->max_byte_written), -1) + 1;
}

/* Writes of several ranks to one file, small on average. */
static bool small_shared_writes(const struct ioacct_advice_limits *l,
				const struct ioacct_report_file *x)
{
	const struct ioacct_file *f = &x->sum;

	return x->nranks >= 2 && f->writes && f->writes >= l->file_writes_min &&
	       f->bytes_written < f->writes * (uint64_t)l->file_small_write;
}

/* Read more than `file_reread` times over: bytes read > k x (largest byte read + 1). */
static bool reread(const struct ioacct_advice_limits *l, const struct ioacct_report_file *x)
{
	const struct ioacct_file *f = &x->sum;
	uint64_t span = (uint64_t)max_i64(f->max_byte_read, 0) + 1;

	return f->reads && f->bytes_read >= (uint64_t)l->file_reread_min_mib * MIB &&
	       (unsigned __int128)f->bytes_read > (unsigned __int128)span * l->file_reread;
}

/* Many reads of a large file, few of them sequential. */
static bool random_reads(const struct ioacct_advice_limits *l, const struct ioacct_report_file *x)
{
	const struct ioacct_file *f = &x->sum;

	return f->reads && f->reads >= l->file_reads_min &&
	       file_extent(f) > (uint64_t)l->file_random_min_mib * MIB &&
	       (unsigned __int128)f->seq_reads * 100 <
		       (unsigned __int128)f->reads * l->file_random_share;
}

typedef bool (*file_test)(const struct ioacct_advice_limits *l, const struct ioacct_report_file *x);
typedef uint64_t (*file_weight)(const struct ioacct_report_file *x);

static uint64_t w_writes(const struct ioacct_report_file *x)
{
	return x->sum.writes;
}

static uint64_t w_read(const struct ioacct_report_file *x)
{
	return x->sum.bytes_read;
}

static uint64_t w_reads(const struct ioacct_report_file *x)
{
	return x->sum.reads;
}

/*
 * The file the rule fires on with the largest weight (NULL: none), and
 * how many files it fires on. "other files" rows are never named.
 */
static const struct ioacct_report_file *worst(const struct ioacct_report *r, file_test test,
					      file_weight weight, size_t *n)
{
	const struct ioacct_report_file *w = NULL;

	*n = 0;
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct ioacct_report_file *x = &r->files[i];

		if (x->other || (x->mount && x->mount->kind == IOACCT_FS_PSEUDO) ||
		    !test(&r->limits, x))
			continue;
		(*n)++;
		if (!w || weight(x) > weight(w))
			w = x;
	}
	return w;
}

/* " (and N other files)" when the rule fired on more than the one named. */
static const char *others(size_t n, char *buf, size_t len)
{
	if (n > 1)
		snprintf(buf, len, " (and %zu other file%s)", n - 1, n == 2 ? "" : "s");
	else
		buf[0] = '\0';
	return buf;
}

static void rule_shared_small_writes(struct advice_ctx *ctx)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	size_t n;
	const struct ioacct_report_file *x = worst(ctx->r, small_shared_writes, w_writes, &n);
	const struct ioacct_file *f = x ? &x->sum : NULL;
	struct ioacct_advice *a;
	char more[48];

	if (!x || !(a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "shared-file-small-writes",
					  x->mount, IOACCT_DIR_WRITE)))
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
			  "%s: %" PRIu32 " ranks wrote %" PRIu64 " times, %" PRIu64
			  " bytes per write on average%s",
			  f->path[0] ? f->path : "(path unknown)", x->nranks, f->writes,
			  f->bytes_written / f->writes, others(n, more, sizeof(more)));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
			  "Gather the ranks' small writes into large ones (collective MPI-IO, "
			  "or one writer per node) or give each rank its own file.");
	VAL_U(a, "ranks", x->nranks);
	VAL_U(a, "writes", f->writes);
	VAL_U(a, "bytes_written", f->bytes_written);
	VAL_U(a, "files", n);
	THR_U(a, "advice_file_writes_min", l->file_writes_min);
	THR_U(a, "advice_file_small_write", l->file_small_write);
}

static void rule_reread(struct advice_ctx *ctx)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	size_t n;
	const struct ioacct_report_file *x = worst(ctx->r, reread, w_read, &n);
	const struct ioacct_file *f = x ? &x->sum : NULL;
	struct ioacct_advice *a;
	char more[48];

	if (!x || !(a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "file-reread", x->mount,
					  IOACCT_DIR_READ)))
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
			  "%s: %" PRIu64 " bytes read from its first %" PRIu64 " bytes, %.1f times "
			  "over%s",
			  f->path[0] ? f->path : "(path unknown)", f->bytes_read,
			  (uint64_t)f->max_byte_read + 1,
			  (double)f->bytes_read / (double)((uint64_t)f->max_byte_read + 1),
			  others(n, more, sizeof(more)));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
			  "Read the file once and keep what is needed in memory, or copy it to "
			  "node-local storage first.");
	VAL_U(a, "bytes_read", f->bytes_read);
	VAL_U(a, "max_byte_read", (uint64_t)f->max_byte_read);
	VAL_U(a, "files", n);
	THR_U(a, "advice_file_reread", l->file_reread);
	THR_U(a, "advice_file_reread_min", l->file_reread_min_mib);
}

static void rule_random_reads(struct advice_ctx *ctx)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	size_t n;
	const struct ioacct_report_file *x = worst(ctx->r, random_reads, w_reads, &n);
	const struct ioacct_file *f = x ? &x->sum : NULL;
	struct ioacct_advice *a;
	char more[48];

	if (!x || !(a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "random-file-reads", x->mount,
					  IOACCT_DIR_READ)))
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
			  "%s: %" PRIu64 " of %" PRIu64 " reads (%.1f%%) sequential, in a file of at "
			  "least %" PRIu64 " bytes%s",
			  f->path[0] ? f->path : "(path unknown)", f->seq_reads, f->reads,
			  pct(f->seq_reads, f->reads), file_extent(f), others(n, more, sizeof(more)));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
			  "Sort the reads by offset, or read larger pieces; tell the kernel with "
			  "POSIX_FADV_RANDOM when the order cannot change.");
	VAL_U(a, "reads", f->reads);
	VAL_U(a, "seq_reads", f->seq_reads);
	VAL_U(a, "file_bytes", file_extent(f));
	VAL_U(a, "files", n);
	THR_U(a, "advice_file_reads_min", l->file_reads_min);
	THR_U(a, "advice_file_random_share", l->file_random_share);
	THR_U(a, "advice_file_random_size", l->file_random_min_mib);
}

void ioacct_report_files_advise(struct advice_ctx *ctx)
{
	rule_shared_small_writes(ctx);
	rule_reread(ctx);
	rule_random_reads(ctx);
}
