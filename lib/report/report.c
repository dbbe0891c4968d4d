/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report model (see report.h). The time series is merged per mount with
 * a k-way merge of the stored runs (a run: consecutive samples of one mount
 * in bin order, i.e. one step and one operation as the store orders them),
 * so the cost is linear in the samples whatever the bin numbers are, and
 * memory is bounded by the bins that hold data, not by the job's length.
 */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darshan_counters.h"
#include "report_internal.h"
#include "util.h"

/* Size bins 0 .. SMALL_BINS-1 hold requests of at most 1 MiB (Darshan's 100K_1M included). */
#define SMALL_BINS 5

uint64_t ioacct_report_read_all(const struct ioacct_counters *op)
{
	return op[IOACCT_OP_READ].bytes + op[IOACCT_OP_MMAP_FAULT].bytes;
}

const char *ioacct_hint_name(unsigned int hint)
{
	static const char *const names[IOACCT_NR_HINTS] = {
		"normal", "random", "sequential", "willneed", "dontneed",
		"noreuse", "free", "cold", "hugepage", "other",
	};

	return hint < IOACCT_NR_HINTS ? names[hint] : NULL;
}

bool ioacct_op_is_meta(unsigned int op)
{
	return op < IOACCT_OP_COUNT && ioacct_op_kind(op) == IOACCT_OPK_META;
}

const char *ioacct_dir_name(unsigned int dir)
{
	return dir == IOACCT_DIR_READ ? "read" : dir == IOACCT_DIR_WRITE ? "write" : "?";
}

const char *ioacct_advice_level_name(enum ioacct_advice_level level)
{
	static const char *const names[] = { "OK", "INFO", "WARN", "HIGH" };

	return (unsigned int)level < ARRAY_SIZE(names) ? names[level] : "?";
}

const char *ioacct_fs_kind_name(enum ioacct_fs_kind kind)
{
	static const char *const names[] = { "shared", "local", "pseudo", "unknown" };

	return (unsigned int)kind < ARRAY_SIZE(names) ? names[kind] : "?";
}

enum ioacct_fs_kind ioacct_fs_kind_of(const char *fstype)
{
	static const char *const shared[] = {
		"lustre", "gpfs", "nfs", "nfs4", "beegfs", "ceph", "cephfs", "fuse.cephfs",
		"glusterfs", "fuse.glusterfs", "pvfs2", "orangefs", "panfs", "wekafs", "cifs",
		"smb3", "afs", "fuse.sshfs", "9p", "virtiofs", "gfs2", "ocfs2", "daos", "fuse.dfuse",
	};
	static const char *const local[] = {
		"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "ramfs",
		"overlay", "vfat", "exfat", "reiserfs", "jfs", "squashfs", "iso9660",
	};
	static const char *const pseudo[] = {
		"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
		"bpf", "securityfs", "mqueue", "hugetlbfs", "configfs", "fusectl", "pstore",
		"efivarfs", "autofs", "binfmt_misc", "nsfs", "pipefs", "sockfs", "rpc_pipefs",
		"anon_inodefs", "pidfs",
	};

	for (size_t i = 0; i < ARRAY_SIZE(shared); i++)
		if (strcmp(fstype, shared[i]) == 0)
			return IOACCT_FS_SHARED;
	for (size_t i = 0; i < ARRAY_SIZE(local); i++)
		if (strcmp(fstype, local[i]) == 0)
			return IOACCT_FS_LOCAL;
	for (size_t i = 0; i < ARRAY_SIZE(pseudo); i++)
		if (strcmp(fstype, pseudo[i]) == 0)
			return IOACCT_FS_PSEUDO;
	return IOACCT_FS_UNKNOWN;
}

const char *ioacct_size_bin_label(unsigned int bin)
{
	static const char *const labels[IOACCT_NR_SIZE_BINS] = {
		"0-100", "101-1K", "1K-10K", "10K-100K", "100K-1M",
		"1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+",
	};

	return bin < IOACCT_NR_SIZE_BINS ? labels[bin] : NULL;
}

uint64_t ioacct_report_real_errors(uint64_t errors, const uint64_t *errclass)
{
	return errors >= errclass[IOACCT_ERR_NOTFOUND] ? errors - errclass[IOACCT_ERR_NOTFOUND] : 0;
}

const char *ioacct_err_class_text(unsigned int cls)
{
	static const char *const text[IOACCT_NR_ERR_CLASSES] = {
		[IOACCT_ERR_NOTFOUND] = "lookups that found nothing (ENOENT, ENOTDIR)",
		[IOACCT_ERR_ACCESS] = "permission denied (EACCES, EPERM, EROFS)",
		[IOACCT_ERR_SPACE] = "out of space or quota (ENOSPC, EDQUOT, EFBIG)",
		[IOACCT_ERR_IO] = "I/O errors (EIO, ESTALE, ETIMEDOUT, ...)",
		[IOACCT_ERR_OTHER] = "other failures (EEXIST, EINVAL, EBADF, EINTR, ...)",
	};

	return cls < IOACCT_NR_ERR_CLASSES ? text[cls] : NULL;
}

uint64_t ioacct_report_bin_width(const struct ioacct_report *r, uint32_t bin)
{
	return bin + 1 == r->nbins ? r->last_width_ns : r->bin_width_ns;
}

/* ---- named counters ---- */

static void named(struct ioacct_named_counter *out, size_t *n, bool darshan,
		  enum ioacct_counter_kind kind, uint64_t value, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void named(struct ioacct_named_counter *out, size_t *n, bool darshan,
		  enum ioacct_counter_kind kind, uint64_t value, const char *fmt, ...)
{
	va_list ap;

	if (*n >= IOACCT_NAMED_COUNTERS)
		return;
	va_start(ap, fmt);
	vsnprintf(out[*n].name, sizeof(out[*n].name), fmt, ap);
	va_end(ap);
	out[*n].kind = kind;
	out[*n].darshan = darshan;
	out[*n].value = value;
	(*n)++;
}

static uint64_t ok_calls(const struct ioacct_counters *c)
{
	return c->calls >= c->errors ? c->calls - c->errors : 0;
}

/*
 * The counter each operation's successful calls are reported as (column
 * report of IOACCT_OPS): Darshan's, with its index (IOACCT_DARSHAN_POSIX_*),
 * or ioacct's own (index -1).
 */
#define COUNTER_POSIX(NAME, darshan) { IOACCT_DARSHAN_POSIX_##darshan, "POSIX_" #darshan }
#define COUNTER_IOACCT(NAME, darshan) { -1, "IOACCT_" #NAME "S" }
#define OP(NAME, num, name, kind, darshan, report, ...) [num] = COUNTER_##report(NAME, darshan),
static const struct {
	int darshan;
	const char *name;
} op_counters[IOACCT_OP_COUNT] = { IOACCT_OPS(OP) };
#undef OP
#undef COUNTER_POSIX
#undef COUNTER_IOACCT

size_t ioacct_report_counters(const struct ioacct_report_mount *m, struct ioacct_named_counter *out)
{
	static const char *const cls_upper[IOACCT_NR_ERR_CLASSES] = {
		"NOTFOUND", "ACCESS", "SPACE", "IO", "OTHER",
	};
	const struct ioacct_counters *op = m->op;
	size_t n = 0;

	/* Darshan's order (darshan-posix-log-format.h): the operations by counter index. */
	for (int idx = 0; idx < IOACCT_DARSHAN_POSIX_NCOUNTERS; idx++)
		for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
			if (op_counters[k].darshan == idx)
				named(out, &n, true, IOACCT_CK_COUNT, ok_calls(&op[k]), "%s",
				      op_counters[k].name);
	named(out, &n, true, IOACCT_CK_COUNT, op[IOACCT_OP_READ].bytes, "POSIX_BYTES_READ");
	named(out, &n, true, IOACCT_CK_COUNT, op[IOACCT_OP_WRITE].bytes, "POSIX_BYTES_WRITTEN");
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		named(out, &n, true, IOACCT_CK_COUNT, op[IOACCT_OP_READ].size_hist[b],
		      "POSIX_SIZE_READ_%s", ioacct_size_bin_name(b));
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		named(out, &n, true, IOACCT_CK_COUNT, op[IOACCT_OP_WRITE].size_hist[b],
		      "POSIX_SIZE_WRITE_%s", ioacct_size_bin_name(b));
	named(out, &n, true, IOACCT_CK_TIME_NS, op[IOACCT_OP_READ].ns, "POSIX_F_READ_TIME");
	/*
	 * Darshan's fsync and fdatasync wrappers add their time to the write
	 * time (darshan-posix.c); the POSIX_ names mean what Darshan means, so
	 * that a report lines up with a Darshan log of the same run. ioacct's
	 * own tables keep fsync in metadata time.
	 */
	named(out, &n, true, IOACCT_CK_TIME_NS, op[IOACCT_OP_WRITE].ns + op[IOACCT_OP_FSYNC].ns,
	      "POSIX_F_WRITE_TIME");
	named(out, &n, true, IOACCT_CK_TIME_NS, m->meta_ns - op[IOACCT_OP_FSYNC].ns,
	      "POSIX_F_META_TIME");

	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		if (op_counters[k].darshan < 0)
			named(out, &n, false, IOACCT_CK_COUNT, ok_calls(&op[k]), "%s",
			      op_counters[k].name);
	/* The page-cache and mmap views' bytes (their calls are with the operations'). */
	/* Not a number where the kernel had no exact hook: the reports say why instead. */
	if (!m->mmap_unmeasured)
		named(out, &n, false, IOACCT_CK_COUNT, op[IOACCT_OP_MMAP_FAULT].bytes,
		      "IOACCT_MMAP_READ_BYTES");
	named(out, &n, false, IOACCT_CK_COUNT, op[IOACCT_OP_CACHE_FILL].bytes, "IOACCT_CACHE_MISS_BYTES");
	named(out, &n, false, IOACCT_CK_COUNT, op[IOACCT_OP_READAHEAD].bytes, "IOACCT_READAHEAD_BYTES");
	named(out, &n, false, IOACCT_CK_COUNT, m->errors, "IOACCT_ERRORS");
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
		named(out, &n, false, IOACCT_CK_COUNT, m->errclass[k], "IOACCT_ERRORS_%s",
		      cls_upper[k]);
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		named(out, &n, false, IOACCT_CK_COUNT, op[k].errors, "IOACCT_%s_ERRORS",
		      ioacct_op_upper(k));
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		named(out, &n, false, IOACCT_CK_COUNT, op[k].ns, "IOACCT_%s_TIME_NS",
		      ioacct_op_upper(k));
	return n;
}

/* ---- merging the time series ---- */

struct run {
	size_t i, end;   /* cursor and end in jd->series */
};

struct binvec {
	struct ioacct_report_bin *v;
	size_t n, cap;
};

static int binvec_push(struct binvec *bv, uint32_t bin)
{
	if (bv->n == bv->cap) {
		size_t cap = bv->cap ? bv->cap * 2 : 64;
		struct ioacct_report_bin *v = realloc(bv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		bv->v = v;
		bv->cap = cap;
	}
	memset(&bv->v[bv->n], 0, sizeof(bv->v[0]));
	bv->v[bv->n++].bin = bin;
	return 0;
}

static void bin_add(struct ioacct_report_bin *b, const struct ioacct_sample *s)
{
	if (s->op == IOACCT_OP_READ || s->op == IOACCT_OP_WRITE) {
		unsigned int d = s->op == IOACCT_OP_READ ? IOACCT_DIR_READ : IOACCT_DIR_WRITE;

		b->bytes[d] += s->c.bytes;
		b->calls[d] += s->c.calls;
	} else if (ioacct_op_is_meta(s->op)) {
		b->meta += s->c.calls;
	} else if (s->op == IOACCT_OP_CACHE_FILL) {
		b->miss_bytes += s->c.bytes;
	} else if (s->op == IOACCT_OP_MMAP_FAULT) {
		b->mmap_bytes += s->c.bytes;
	}
}

static uint32_t run_bin(const struct ioacct_sample *series, const struct run *r)
{
	return series[r->i].bin;
}

static void sift_down(const struct ioacct_sample *series, struct run *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct run t;

		if (l < n && run_bin(series, &heap[l]) < run_bin(series, &heap[m]))
			m = l;
		if (r < n && run_bin(series, &heap[r]) < run_bin(series, &heap[m]))
			m = r;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* Merges sorted runs (consumed) into bins in bin order. */
static int merge_runs(const struct ioacct_sample *series, struct run *heap, size_t n,
		      struct ioacct_report_bin **out, size_t *nout)
{
	struct binvec bv = { 0 };

	for (size_t i = n; i-- > 0;)
		sift_down(series, heap, n, i);
	while (n > 0) {
		const struct ioacct_sample *s = &series[heap[0].i];

		if ((bv.n == 0 || bv.v[bv.n - 1].bin != s->bin) && binvec_push(&bv, s->bin)) {
			free(bv.v);
			return -ENOMEM;
		}
		bin_add(&bv.v[bv.n - 1], s);
		if (++heap[0].i == heap[0].end)
			heap[0] = heap[--n];
		sift_down(series, heap, n, 0);
	}
	*out = bv.v;
	*nout = bv.n;
	return 0;
}

/* Adds the bins of `m` to those of `all` (both in bin order). */
static int merge_bins(struct ioacct_report_mount *all, const struct ioacct_report_mount *m)
{
	struct ioacct_report_bin *v;
	size_t i = 0, k = 0, n = 0;

	if (m->nbins == 0)
		return 0;
	v = malloc((all->nbins + m->nbins) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (i < all->nbins || k < m->nbins) {
		if (k == m->nbins || (i < all->nbins && all->bins[i].bin < m->bins[k].bin)) {
			v[n++] = all->bins[i++];
		} else if (i == all->nbins || m->bins[k].bin < all->bins[i].bin) {
			v[n++] = m->bins[k++];
		} else {
			struct ioacct_report_bin b = all->bins[i++];
			const struct ioacct_report_bin *o = &m->bins[k++];

			for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
				b.bytes[d] += o->bytes[d];
				b.calls[d] += o->calls[d];
			}
			b.meta += o->meta;
			b.miss_bytes += o->miss_bytes;
			b.mmap_bytes += o->mmap_bytes;
			v[n++] = b;
		}
	}
	free(all->bins);
	all->bins = v;
	all->nbins = n;
	return 0;
}

/* ---- building ---- */

static struct ioacct_report_mount *find_mount(struct ioacct_report *r, uint64_t mnt_id)
{
	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].mnt_id == mnt_id)
			return &r->mounts[i];
	return NULL;
}

static void mount_add(struct ioacct_report_mount *m, const struct ioacct_sample *t)
{
	ioacct_counters_add(&m->op[t->op], &t->c);
	/* The page-cache and mmap views are not calls: not in the mount's calls or time. */
	if (ioacct_op_kind(t->op) == IOACCT_OPK_VIEW)
		return;
	m->calls += t->c.calls;
	m->errors += t->c.errors;
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
		m->errclass[k] += t->c.errclass[k];
	m->unclassified += ioacct_counters_unclassified(&t->c);
	m->ns += t->c.ns;
	if (!ioacct_op_is_data(t->op))
		m->meta_ns += t->c.ns;
	if (ioacct_op_is_meta(t->op))
		m->meta_calls += t->c.calls;
}

/* A mount the data names that the job's table lacks: "mnt:ID", type unknown. */
static void unknown_mount(struct ioacct_report_mount *m, uint64_t mnt_id)
{
	m->mnt_id = mnt_id;
	snprintf(m->idname, sizeof(m->idname), "mnt:%" PRIu64, mnt_id);
	m->path = m->idname;
	m->fstype = "unknown";
	m->source = "";
}

/* Every mount of the table, plus any the data names that the table lacks. */
static int collect_mounts(struct ioacct_report *r, const char *only_mount)
{
	const struct ioacct_jobdata *jd = r->jd;
	size_t cap = jd->nmounts + jd->ntotals + jd->nrpc + 1;

	r->mounts = calloc(cap, sizeof(*r->mounts));
	if (!r->mounts)
		return -ENOMEM;
	for (size_t i = 0; i < jd->nmounts; i++) {
		struct ioacct_report_mount *m = &r->mounts[r->nmounts++];

		m->mnt_id = jd->mounts[i].mnt_id;
		m->path = jd->mounts[i].path;
		m->fstype = jd->mounts[i].fstype;
		m->source = jd->mounts[i].source;
	}
	for (size_t i = 0; i < jd->ntotals; i++) {
		const struct ioacct_sample *t = &jd->totals[i];
		struct ioacct_report_mount *m = find_mount(r, t->mnt_id);

		if (t->op >= IOACCT_OP_COUNT)
			continue;
		if (!m) {
			m = &r->mounts[r->nmounts++];
			unknown_mount(m, t->mnt_id);
		}
		mount_add(m, t);
		mount_add(&r->all, t);
	}
	/* A mount the job's RPCs went through is one it used, system calls or not (issue 40). */
	for (size_t i = 0; i < jd->nrpc; i++)
		if (!find_mount(r, jd->rpc[i].mnt_id) && ioacct_report_rpc_used(jd, jd->rpc[i].mnt_id))
			unknown_mount(&r->mounts[r->nmounts++], jd->rpc[i].mnt_id);
	/* Keep mounts with calls or RPCs, in mount-id order. */
	{
		size_t k = 0;

		for (size_t i = 0; i < r->nmounts; i++) {
			if (r->mounts[i].calls == 0 && !ioacct_report_rpc_used(jd, r->mounts[i].mnt_id))
				continue;
			if (only_mount && strcmp(r->mounts[i].path, only_mount) != 0)
				continue;
			r->mounts[k++] = r->mounts[i];
		}
		r->nmounts = k;
	}
	for (size_t i = 1; i < r->nmounts; i++) {
		struct ioacct_report_mount t = r->mounts[i];
		size_t j = i;

		for (; j > 0 && r->mounts[j - 1].mnt_id > t.mnt_id; j--)
			r->mounts[j] = r->mounts[j - 1];
		r->mounts[j] = t;
	}
	for (size_t i = 0; i < r->nmounts; i++) {
		struct ioacct_report_mount *m = &r->mounts[i];

		/* Copied structs: the path of a synthetic mount points into its own copy. */
		if (m->idname[0])
			m->path = m->idname;
		m->kind = ioacct_fs_kind_of(m->fstype);
	}
	if (only_mount) {
		memset(&r->all, 0, sizeof(r->all));
		for (size_t i = 0; i < r->nmounts; i++)
			for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++) {
				struct ioacct_sample t = { .op = k, .c = r->mounts[i].op[k] };

				mount_add(&r->all, &t);
			}
	}
	r->all.path = "all";
	r->all.fstype = "";
	r->all.source = "";
	r->all.kind = IOACCT_FS_UNKNOWN;
	return 0;
}

static int collect_steps(struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;

	r->steps = calloc(jd->nsteps + jd->ntotals + 1, sizeof(*r->steps));
	if (!r->steps)
		return -ENOMEM;
	for (size_t i = 0; i < jd->nsteps; i++) {
		r->steps[r->nsteps].step_id = jd->steps[i].step_id;
		r->steps[r->nsteps++].step = &jd->steps[i];
	}
	for (size_t i = 0; i < jd->ntotals; i++) {
		const struct ioacct_sample *t = &jd->totals[i];
		struct ioacct_report_step *s = NULL;

		if (t->op >= IOACCT_OP_COUNT || !find_mount(r, t->mnt_id))
			continue;
		for (size_t k = 0; k < r->nsteps && !s; k++)
			if (r->steps[k].step_id == t->step_id)
				s = &r->steps[k];
		if (!s) {
			s = &r->steps[r->nsteps++];
			s->step_id = t->step_id;
		}
		ioacct_counters_add(&s->op[t->op], &t->c);
		if (ioacct_op_kind(t->op) == IOACCT_OPK_VIEW)
			continue;
		s->calls += t->c.calls;
		s->errors += t->c.errors;
		for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
			s->errclass[k] += t->c.errclass[k];
		s->unclassified += ioacct_counters_unclassified(&t->c);
		s->ns += t->c.ns;
		if (!ioacct_op_is_data(t->op))
			s->meta_ns += t->c.ns;
		if (ioacct_op_is_meta(t->op))
			s->meta_calls += t->c.calls;
	}
	return 0;
}

/* The bins the job spans, and the width of the last one (cut at the job's end). */
static void size_bins(struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	uint64_t w = jd->job.bin_width_ns ? jd->job.bin_width_ns : NSEC_PER_SEC;
	uint64_t nrun = 0, run = 0, maxbin = 0, nbins;
	bool any = false;

	uint64_t last_id = 0;
	bool last_kept = false;

	for (size_t i = 0; i < jd->nseries; i++) {
		/* Samples come in runs of one mount: look each run's mount up once. */
		if (i == 0 || jd->series[i].mnt_id != last_id) {
			last_id = jd->series[i].mnt_id;
			last_kept = find_mount(r, last_id) != NULL;
		}
		if (!last_kept)
			continue;
		if (!any || jd->series[i].bin > maxbin)
			maxbin = jd->series[i].bin;
		any = true;
	}
	r->bin_width_ns = w;
	if (jd->job.end_ns > jd->job.start_ns) {
		run = (uint64_t)(jd->job.end_ns - jd->job.start_ns);
		nrun = (run + w - 1) / w;
	}
	nbins = nrun > maxbin + 1 ? nrun : maxbin + 1;
	r->nbins = nbins > UINT32_MAX ? UINT32_MAX : (uint32_t)nbins;
	/* A bin past the recorded end (clocks disagree, or a running job) keeps its width. */
	r->last_width_ns = nrun == r->nbins ? run - (nrun - 1) * w : w;
	r->span_ns = (uint64_t)(r->nbins - 1) * w + r->last_width_ns;
}

static void rates(struct ioacct_report *r, struct ioacct_report_mount *m)
{
	for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
		struct ioacct_report_dir *dir = &m->dir[d];
		size_t nbytes = 0, ncalls = 0;
		double span = (double)r->span_ns / 1e9;

		memset(dir, 0, sizeof(*dir));
		dir->bw.min = dir->iops.min = -1;
		for (size_t i = 0; i < m->nbins; i++) {
			const struct ioacct_report_bin *b = &m->bins[i];
			double w = (double)ioacct_report_bin_width(r, b->bin) / 1e9;
			double bw = (double)b->bytes[d] / w, iops = (double)b->calls[d] / w;

			dir->bytes += b->bytes[d];
			dir->calls += b->calls[d];
			if (b->bytes[d]) {
				nbytes++;
				if (bw > dir->bw.max) {
					dir->bw.max = bw;
					dir->bw.max_bin = b->bin;
				}
				if (dir->bw.min < 0 || bw < dir->bw.min)
					dir->bw.min = bw;
			}
			if (b->calls[d]) {
				ncalls++;
				if (iops > dir->iops.max) {
					dir->iops.max = iops;
					dir->iops.max_bin = b->bin;
				}
				if (dir->iops.min < 0 || iops < dir->iops.min)
					dir->iops.min = iops;
			}
		}
		if (nbytes < r->nbins)
			dir->bw.min = 0;
		if (ncalls < r->nbins)
			dir->iops.min = 0;
		dir->bw.mean = (double)dir->bytes / span;
		dir->iops.mean = (double)dir->calls / span;
	}
}

static int merge_series(struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	struct run *runs, *heap;
	size_t nruns = 0;
	int *owner;
	int ret = 0;

	runs = calloc(jd->nseries + 1, sizeof(*runs));
	heap = calloc(jd->nseries + 1, sizeof(*heap));
	owner = calloc(jd->nseries + 1, sizeof(*owner));
	if (!runs || !heap || !owner) {
		ret = -ENOMEM;
		goto out;
	}
	/* Runs: same mount, bins not decreasing. */
	for (size_t i = 0; i < jd->nseries;) {
		const struct ioacct_sample *s = &jd->series[i];
		struct ioacct_report_mount *m = find_mount(r, s->mnt_id);
		size_t j = i + 1;

		while (j < jd->nseries && jd->series[j].mnt_id == s->mnt_id &&
		       jd->series[j].bin >= jd->series[j - 1].bin)
			j++;
		if (m) {
			runs[nruns] = (struct run){ i, j };
			owner[nruns++] = (int)(m - r->mounts);
		}
		i = j;
	}
	for (size_t k = 0; k < r->nmounts && !ret; k++) {
		size_t n = 0;

		for (size_t i = 0; i < nruns; i++)
			if (owner[i] == (int)k)
				heap[n++] = runs[i];
		ret = merge_runs(jd->series, heap, n, &r->mounts[k].bins, &r->mounts[k].nbins);
	}
	for (size_t k = 0; k < r->nmounts && !ret; k++)
		ret = merge_bins(&r->all, &r->mounts[k]);
out:
	free(runs);
	free(heap);
	free(owner);
	return ret;
}

/* ---- advice (helpers in advice.c) ---- */

static void rule_small_requests(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;

	for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
		const struct ioacct_counters *c = &m->op[d == IOACCT_DIR_READ ? IOACCT_OP_READ : IOACCT_OP_WRITE];
		uint64_t small = 0, all = 0;
		struct ioacct_advice *a;

		for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
			all += c->size_hist[b];
			if (b < SMALL_BINS)
				small += c->size_hist[b];
		}
		if (!share_above(small, all, l->small_share) || small <= l->small_min)
			continue;
		a = ioacct_advice_new(ctx, IOACCT_ADVICE_HIGH, "small-requests", m, (int)d);
		if (!a)
			return;
		ioacct_advice_say(a->message, sizeof(a->message),
		    "%s: %" PRIu64 " of %" PRIu64 " %s requests (%.1f%%) were 1 MiB or smaller, "
		    "%.1f KiB on average",
		    m->path, small, all, ioacct_dir_name(d), pct(small, all),
		    all ? (double)c->bytes / (double)all / 1024.0 : 0.0);
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "Make %s requests larger: buffer in memory and %s blocks of several MiB "
		    "(a larger stdio buffer with setvbuf(), HDF5 chunks, MPI-IO collective "
		    "buffering); on a striped file system align them to the stripe size.",
		    ioacct_dir_name(d), d == IOACCT_DIR_READ ? "read whole" : "write whole");
		VAL_U(a, "small_requests", small);
		VAL_U(a, "requests", all);
		VAL_D(a, "small_share_pct", pct(small, all));
		THR_U(a, "advice_small_requests_share", l->small_share);
		THR_U(a, "advice_small_requests_min", l->small_min);
	}
}

static void rule_rw_intensive(struct advice_ctx *ctx)
{
	const struct ioacct_report *r = ctx->r;
	uint64_t rd = r->all.op[IOACCT_OP_READ].bytes, wr = r->all.op[IOACCT_OP_WRITE].bytes;
	uint64_t diff = rd > wr ? rd - wr : wr - rd;
	bool reads = rd > wr;
	struct ioacct_advice *a;

	if (rd + wr == 0 || !share_above(diff, rd + wr, r->limits.rw_share))
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, reads ? "read-intensive" : "write-intensive", NULL,
		       reads ? IOACCT_DIR_READ : IOACCT_DIR_WRITE);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "The job is %s-intensive: %" PRIu64 " bytes read, %" PRIu64 " bytes written "
	    "(%.1f%% of the volume is the difference)",
	    reads ? "read" : "write", rd, wr, pct(diff, rd + wr));
	if (reads)
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "If the same input is read more than once, or by many tasks, read it once and "
		    "share it, or stage it to node-local storage; keep input compressed if it is "
		    "read sequentially.");
	else
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "Check that everything written is needed: checkpoint less often, drop debug "
		    "output, compress results, and write them to the file system meant for output.");
	VAL_U(a, "bytes_read", rd);
	VAL_U(a, "bytes_written", wr);
	VAL_D(a, "difference_pct", pct(diff, rd + wr));
	THR_U(a, "advice_rw_intensive_share", r->limits.rw_share);
}

static void rule_meta_time(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	uint64_t io = m->op[IOACCT_OP_READ].ns + m->op[IOACCT_OP_WRITE].ns + m->meta_ns;
	enum ioacct_advice_level level;
	struct ioacct_advice *a;

	if (m->meta_ns >= l->meta_high_ns)
		level = IOACCT_ADVICE_HIGH;
	else if (m->meta_ns >= l->meta_min_ns && share_above(m->meta_ns, io, l->meta_share))
		level = IOACCT_ADVICE_WARN;
	else
		return;
	a = ioacct_advice_new(ctx, level, "metadata-time", m, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %.3f s in metadata calls (open, stat, mkdir, unlink, rename, fsync...), "
	    "%.1f%% of the %.3f s spent in I/O calls",
	    m->path, secs(m->meta_ns), pct(m->meta_ns, io), secs(io));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Open files once and keep them open, avoid repeated stat() (ls -l, find, "
	    "os.path.exists loops, Python imports from a shared file system), and create fewer "
	    "files: put many small ones into one archive or container file.");
	VAL_U(a, "meta_time_ns", m->meta_ns);
	VAL_U(a, "io_time_ns", io);
	VAL_D(a, "meta_share_pct", pct(m->meta_ns, io));
	THR_U(a, "advice_meta_time_share", l->meta_share);
	THR_D(a, "advice_meta_time_min", secs(l->meta_min_ns));
	THR_D(a, "advice_meta_time_high", secs(l->meta_high_ns));
}

static void rule_meta_ops(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	uint64_t ops = m->op[IOACCT_OP_OPEN].calls + m->op[IOACCT_OP_STAT].calls;
	uint64_t bytes = m->op[IOACCT_OP_READ].bytes + m->op[IOACCT_OP_WRITE].bytes;
	struct ioacct_advice *a;

	if (ops < l->meta_ops_min ||
	    (unsigned __int128)ops * MIB <= (unsigned __int128)bytes * l->meta_per_mib)
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "metadata-ops", m, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %" PRIu64 " opens and stats for %.1f MiB of data read and written "
	    "(%.0f per MiB)",
	    m->path, ops, mib(bytes), bytes ? (double)ops / mib(bytes) : (double)ops);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Each open and stat costs a round trip to the file system's metadata service while "
	    "moving little data: cache what stat() returns, keep files open, and read or write "
	    "more per open.");
	VAL_U(a, "opens_and_stats", ops);
	VAL_U(a, "bytes", bytes);
	THR_U(a, "advice_meta_ops_per_mib", l->meta_per_mib);
	THR_U(a, "advice_meta_ops_min", l->meta_ops_min);
}

static void rule_fsync(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	uint64_t fs = m->op[IOACCT_OP_FSYNC].calls, wr = m->op[IOACCT_OP_WRITE].calls;
	struct ioacct_advice *a;

	if (fs < l->fsync_min || !share_above(fs, wr, l->fsync_share))
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "fsync-storm", m, IOACCT_DIR_WRITE);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %" PRIu64 " fsync calls for %" PRIu64 " write calls (%.1f%%), %.3f s spent "
	    "in fsync",
	    m->path, fs, wr, pct(fs, wr), secs(m->op[IOACCT_OP_FSYNC].ns));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Sync once at the end of a phase or of a checkpoint, not after every write: each "
	    "fsync waits for the storage (on a shared file system, for its servers).");
	VAL_U(a, "fsyncs", fs);
	VAL_U(a, "writes", wr);
	VAL_U(a, "fsync_time_ns", m->op[IOACCT_OP_FSYNC].ns);
	THR_U(a, "advice_fsync_min", l->fsync_min);
	THR_U(a, "advice_fsync_write_share", l->fsync_share);
}

static void rule_tiny_files(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	uint64_t files = m->op[IOACCT_OP_CREATE].calls, bytes = m->op[IOACCT_OP_WRITE].bytes;
	struct ioacct_advice *a;

	if (files == 0 || files < l->tiny_files_min ||
	    (unsigned __int128)bytes >= (unsigned __int128)files * l->tiny_file_size)
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "tiny-files", m, IOACCT_DIR_WRITE);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %" PRIu64 " files created, %.1f KiB written per file on average",
	    m->path, files, (double)bytes / (double)files / 1024.0);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Write fewer, larger files: gather per-task or per-step output into one file per "
	    "process or into a container format (HDF5, NetCDF, a tar or zip archive), or create "
	    "them in node-local storage and pack them at the end.");
	VAL_U(a, "files_created", files);
	VAL_U(a, "bytes_written", bytes);
	THR_U(a, "advice_tiny_files_min", l->tiny_files_min);
	THR_U(a, "advice_tiny_file_size", l->tiny_file_size);
}

static void rule_bursts(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_report *r = ctx->r;
	const struct ioacct_advice_limits *l = &r->limits;

	for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
		const struct ioacct_rate *bw = &m->dir[d].bw;
		struct ioacct_advice *a;

		if (r->nbins < 2 || bw->mean <= 0 || bw->max < bw->mean * l->burst_ratio ||
		    bw->max < (double)l->burst_min_mibps * MIB)
			continue;
		a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, "bursts", m, (int)d);
		if (!a)
			return;
		ioacct_advice_say(a->message, sizeof(a->message),
		    "%s: %s bandwidth peaks at %.1f MiB/s (bin %" PRIu32 ", %.0f s into the job), "
		    "%.0f times its mean of %.2f MiB/s",
		    m->path, ioacct_dir_name(d), bw->max / MIB, bw->max_bin,
		    (double)bw->max_bin * secs(r->bin_width_ns), bw->max / bw->mean, bw->mean / MIB);
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "I/O comes in bursts (checkpoints, input at start): the storage idles most of "
		    "the job and is saturated during bursts, slowing other jobs too. Spread it out "
		    "(asynchronous or background I/O) or stage through node-local storage or a burst "
		    "buffer.");
		VAL_D(a, "peak_bytes_per_s", bw->max);
		VAL_D(a, "mean_bytes_per_s", bw->mean);
		VAL_U(a, "peak_bin", bw->max_bin);
		THR_U(a, "advice_burst_ratio", l->burst_ratio);
		THR_U(a, "advice_burst_min_bandwidth", l->burst_min_mibps);
	}
}

static void rule_shared_meta(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	struct ioacct_advice *a;

	if (m->kind != IOACCT_FS_SHARED || m->meta_calls < l->shared_meta_ops)
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "shared-metadata", m, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s (%s, shared): %" PRIu64 " metadata calls; each one goes to metadata servers "
	    "that every job on the cluster shares",
	    m->path, m->fstype, m->meta_calls);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Do many-small-file work in node-local storage ($TMPDIR, /tmp or a local SSD): copy "
	    "one archive in at the start, unpack it there, and copy one archive of the results "
	    "back at the end.");
	VAL_U(a, "meta_calls", m->meta_calls);
	THR_U(a, "advice_shared_meta_ops", l->shared_meta_ops);
}

static void rule_local_data(struct advice_ctx *ctx)
{
	const struct ioacct_report *r = ctx->r;
	uint64_t local = 0, all = 0;
	char names[256] = "";
	size_t o = 0;
	struct ioacct_advice *a;

	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];
		uint64_t b = m->op[IOACCT_OP_READ].bytes + m->op[IOACCT_OP_WRITE].bytes;

		all += b;
		if (m->kind != IOACCT_FS_LOCAL || b == 0)
			continue;
		local += b;
		if (o < sizeof(names))
			o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s %s", o ? ", " : "",
					      m->path, m->fstype);
	}
	if (local == 0 || !share_above(local, all, r->limits.local_share))
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, "node-local", NULL, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%.1f%% of the data (%" PRIu64 " of %" PRIu64 " bytes) was read or written on "
	    "node-local file systems (%s)",
	    pct(local, all), local, all, names);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Node-local storage is fast and spares the shared file systems, but other nodes cannot "
	    "see it and it is usually wiped when the job ends: copy the results you need to "
	    "shared storage before the job ends.");
	VAL_U(a, "local_bytes", local);
	VAL_U(a, "bytes", all);
	VAL_D(a, "local_share_pct", pct(local, all));
	THR_U(a, "advice_local_share", r->limits.local_share);
}

static void rule_step_imbalance(struct advice_ctx *ctx)
{
	const struct ioacct_report *r = ctx->r;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint32_t lo_id = 0, hi_id = 0;
	size_t n = 0;
	struct ioacct_advice *a;

	/* Only srun steps: the batch script and the extern step do other work by design. */
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct ioacct_report_step *s = &r->steps[i];
		uint64_t b = s->op[IOACCT_OP_READ].bytes + s->op[IOACCT_OP_WRITE].bytes;

		if (s->step_id >= IOACCT_STEP_BATCH)
			continue;
		n++;
		if (b < lo) {
			lo = b;
			lo_id = s->step_id;
		}
		if (b > hi) {
			hi = b;
			hi_id = s->step_id;
		}
	}
	if (n < 2 || hi == 0 || !share_above(hi - lo, hi, r->limits.step_imbalance))
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, "step-imbalance", NULL, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "Steps moved unequal amounts of data: step %" PRIu32 " %" PRIu64 " bytes, step %" PRIu32
	    " %" PRIu64 " bytes (%.1f%% less)",
	    hi_id, hi, lo_id, lo, pct(hi - lo, hi));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "If the steps do the same work, check how the data is divided between them: the "
	    "step with the most I/O sets the pace. If they do different work, this is expected.");
	VAL_U(a, "max_step_bytes", hi);
	VAL_U(a, "min_step_bytes", lo);
	VAL_D(a, "imbalance_pct", pct(hi - lo, hi));
	THR_U(a, "advice_step_imbalance", r->limits.step_imbalance);
}

/*
 * A job of several nodes (from the cluster store): the slowest node, the one
 * with the most time in I/O calls, sets the pace when the nodes wait for
 * each other. Compared with the nodes' mean, exactly: max * n vs sum.
 */
static void rule_node_imbalance(struct advice_ctx *ctx)
{
	const struct ioacct_jobdata *jd = ctx->r->jd;
	const struct ioacct_node_part *slow = NULL;
	unsigned __int128 sum = 0;
	struct ioacct_advice *a;
	double mean;

	if (jd->nnodes < 2)
		return;
	for (size_t i = 0; i < jd->nnodes; i++) {
		sum += jd->nodes[i].ns;
		if (!slow || jd->nodes[i].ns > slow->ns)
			slow = &jd->nodes[i];
	}
	/* (max - mean) / mean > share: (max * n - sum) * 100 > sum * share. */
	if (sum == 0 ||
	    ((unsigned __int128)slow->ns * jd->nnodes - sum) * 100 <=
		    sum * ctx->r->limits.node_imbalance)
		return;
	mean = (double)sum / (double)jd->nnodes;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "node-imbalance", NULL, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "Node %s spent %.3f s in I/O calls, %.1f%% more than the mean of the job's %zu nodes (%.3f s)",
	    slow->node, secs(slow->ns), ((double)slow->ns - mean) * 100.0 / mean, jd->nnodes,
	    mean / 1e9);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "When the nodes wait for each other, the slowest one sets the pace: divide the I/O "
	    "evenly, or check node %s's file systems and network.", slow->node);
	VAL_U(a, "max_node_time_ns", slow->ns);
	VAL_D(a, "mean_node_time_ns", mean);
	VAL_D(a, "imbalance_pct", ((double)slow->ns - mean) * 100.0 / mean);
	THR_U(a, "advice_node_imbalance", ctx->r->limits.node_imbalance);
}


/* ---- the page-cache and mmap views (issue 14) ---- */

/*
 * Whether the mount's reads through mappings are unknown: its job's mmap
 * bytes were not measured (issue 29) and it had faults on file mappings.
 * The rules that weigh what was read keep silent then.
 */
static bool mmap_unknown(const struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	return m->op[IOACCT_OP_MMAP_FAULT].calls &&
	       ioacct_probe_mmap_unmeasured(ctx->r->jd->job.probe_mode);
}

/* Bytes on a mount worth looking at: read (calls and mappings) or missed. */
static bool pcache_big(const struct ioacct_advice_limits *l, const struct ioacct_counters *op)
{
	uint64_t big = (uint64_t)l->pcache_min_mib * MIB;
	uint64_t rd = ioacct_report_read_all(op);

	return rd >= big || op[IOACCT_OP_CACHE_FILL].bytes >= big;
}

/*
 * Sequential reads (the kernel's asynchronous readahead followed them) that
 * mostly came from storage anyway: the readahead window was too small, or
 * the program did not say it reads sequentially.
 */
static void rule_low_hit_sequential(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	const struct ioacct_counters *op = m->op;
	uint64_t rd = ioacct_report_read_all(op), miss = op[IOACCT_OP_CACHE_FILL].bytes;
	uint64_t async = op[IOACCT_OP_READAHEAD].size_hist[1];
	double hit = ioacct_hit_ratio(rd, miss);
	struct ioacct_advice *a;

	if (!pcache_big(l, op) || mmap_unknown(ctx, m) || hit < 0 || hit * 100 >= l->hit_ratio ||
	    !async || op[IOACCT_OP_FADVISE].size_hist[IOACCT_HINT_SEQUENTIAL])
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, "low-hit-ratio-sequential", m, IOACCT_DIR_READ);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %.1f%% of %.1f MiB read came from the page cache; %.1f MiB came from storage, "
	    "in a sequential stream (%" PRIu64 " asynchronous readahead decisions)",
	    m->path, 100 * hit, mib(rd), mib(miss), async);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Data read once comes from storage anyway, but a sequential reader can have it "
	    "arrive before it asks: posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL) doubles the "
	    "readahead window; larger reads, or a larger read_ahead_kb on the device (an "
	    "administrator's setting), do more.");
	VAL_U(a, "bytes_read", rd);
	VAL_U(a, "cache_miss_bytes", miss);
	VAL_D(a, "hit_ratio", hit);
	VAL_U(a, "readahead_async", async);
	THR_U(a, "advice_pcache_min", l->pcache_min_mib);
	THR_U(a, "advice_hit_ratio", l->hit_ratio);
}

/* More came in from storage than the job read at all: readahead nobody used. */
static void rule_readahead_waste(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	const struct ioacct_counters *op = m->op;
	uint64_t rd = ioacct_report_read_all(op), miss = op[IOACCT_OP_CACHE_FILL].bytes;
	uint64_t ra = op[IOACCT_OP_READAHEAD].bytes, waste = miss > rd ? miss - rd : 0;
	struct ioacct_advice *a;

	if (!pcache_big(l, op) || mmap_unknown(ctx, m) || !ra ||
	    !share_above(waste, miss, l->ra_waste))
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "readahead-unused", m, IOACCT_DIR_READ);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %.1f MiB came in from storage for %.1f MiB read: at least %.1f MiB (%.1f%%) "
	    "of what was read ahead was never used",
	    m->path, mib(miss), mib(rd), mib(waste), pct(waste, miss));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Random access defeats readahead: tell the kernel with "
	    "posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) (files read with read()) or "
	    "madvise(addr, len, MADV_RANDOM) (mappings), so that it reads only what is asked.");
	VAL_U(a, "cache_miss_bytes", miss);
	VAL_U(a, "bytes_read", rd);
	VAL_U(a, "readahead_bytes", ra);
	VAL_U(a, "unused_bytes", waste);
	THR_U(a, "advice_pcache_min", l->pcache_min_mib);
	THR_U(a, "advice_readahead_waste", l->ra_waste);
}

/*
 * Many faults on file mappings, each mapping little (fault-around found no
 * neighbouring pages in the cache): random access through mmap, each fault
 * waiting for storage.
 */
static void rule_random_mmap(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	const struct ioacct_counters *f = &m->op[IOACCT_OP_MMAP_FAULT];
	uint64_t miss = m->op[IOACCT_OP_CACHE_FILL].bytes;
	struct ioacct_advice *a;

	/* Under 4 pages of 4 KiB per fault: fault-around (16 pages) rarely found any. */
	if (f->calls < l->mmap_faults_min || mmap_unknown(ctx, m) || f->bytes >= f->calls * 16384 ||
	    !miss || m->op[IOACCT_OP_MADVISE].size_hist[IOACCT_HINT_RANDOM])
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_WARN, "random-mmap-faults", m, IOACCT_DIR_READ);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %" PRIu64 " page faults on file mappings, %.1f KiB mapped per fault, %.1f MiB "
	    "brought in from storage: random access through mmap",
	    m->path, f->calls, (double)f->bytes / (double)f->calls / 1024.0, mib(miss));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "madvise(addr, len, MADV_RANDOM) stops the kernel reading around each fault; when "
	    "the data fits in memory, madvise(MADV_WILLNEED) or MAP_POPULATE (or a read of the "
	    "file first) brings it in at once, in large requests.");
	VAL_U(a, "mmap_faults", f->calls);
	VAL_U(a, "mmap_read_bytes", f->bytes);
	VAL_U(a, "cache_miss_bytes", miss);
	THR_U(a, "advice_mmap_faults_min", l->mmap_faults_min);
}

/*
 * The job dropped pages from the cache (DONTNEED) and brought as much in
 * again: it read the same data from storage more than once. ioacct has no
 * per-page state, so only eviction the job asked for is seen; pages the
 * kernel evicted under memory pressure and read again are not told apart.
 */
static void rule_reread(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	const struct ioacct_counters *op = m->op;
	uint64_t drops = op[IOACCT_OP_FADVISE].size_hist[IOACCT_HINT_DONTNEED] +
			 ctx->r->all.op[IOACCT_OP_MADVISE].size_hist[IOACCT_HINT_DONTNEED];
	uint64_t miss = op[IOACCT_OP_CACHE_FILL].bytes;
	struct ioacct_advice *a;

	if (!pcache_big(l, op) || !drops || !miss)
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, "reread-from-storage", m, IOACCT_DIR_READ);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: the job dropped cached pages %" PRIu64 " times (POSIX_FADV_DONTNEED, "
	    "MADV_DONTNEED) and brought %.1f MiB in from storage",
	    m->path, drops, mib(miss));
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Data dropped from the page cache and read again comes from storage again: drop "
	    "only what will not be read again, or keep what is reused in memory.");
	VAL_U(a, "dontneed_calls", drops);
	VAL_U(a, "cache_miss_bytes", miss);
	THR_U(a, "advice_pcache_min", l->pcache_min_mib);
}

static void rule_dropped(struct advice_ctx *ctx)
{
	const struct ioacct_job *j = &ctx->r->jd->job;
	struct ioacct_advice *a;

	if (j->dropped_events == 0)
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_HIGH, "dropped-events", NULL, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%" PRIu64 " events (%" PRIu64 " bytes) were not recorded: the kernel's counter map "
	    "was full; every count in this report is too low",
	    j->dropped_events, j->dropped_bytes);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "Ask the administrators to raise max_entries in ioacct.conf (or to shorten "
	    "drain_interval) and restart ioacctd; a wider bin_width also needs fewer entries.");
	VAL_U(a, "dropped_events", j->dropped_events);
	VAL_U(a, "dropped_bytes", j->dropped_bytes);
}

/*
 * Real errors: every failed call but the lookups that found nothing. Lost
 * data (no space, I/O errors) is HIGH; permission denied, and errors stored
 * before ioacct classified them, WARN; the rest (EEXIST from mkdir -p,
 * EAGAIN, EINTR, ...) is usually handled by the program: INFO.
 */
static void rule_errors(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const uint64_t *e = m->errclass;
	uint64_t real = ioacct_report_real_errors(m->errors, e);
	static const unsigned int order[] = { IOACCT_ERR_SPACE, IOACCT_ERR_IO, IOACCT_ERR_ACCESS,
					      IOACCT_ERR_OTHER };
	enum ioacct_advice_level level = IOACCT_ADVICE_INFO;
	struct ioacct_advice *a;
	char what[400];
	size_t len = 0;

	if (real == 0)
		return;
	if (e[IOACCT_ERR_SPACE] || e[IOACCT_ERR_IO])
		level = IOACCT_ADVICE_HIGH;
	else if (e[IOACCT_ERR_ACCESS] || m->unclassified)
		level = IOACCT_ADVICE_WARN;
	a = ioacct_advice_new(ctx, level, "errors", m, -1);
	if (!a)
		return;
	/* The classes that occurred, most serious first. */
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (e[order[i]])
			len += (size_t)snprintf(what + len, len < sizeof(what) ? sizeof(what) - len : 0,
						"%s%" PRIu64 " %s", len ? ", " : "", e[order[i]],
						ioacct_err_class_text(order[i]));
	if (m->unclassified && len < sizeof(what))
		snprintf(what + len, sizeof(what) - len,
			 "%s%" PRIu64 " not classified (stored before ioacct classified errors)",
			 len ? ", " : "", m->unclassified);
	ioacct_advice_say(a->message, sizeof(a->message), "%s: %" PRIu64 " call%s failed with real errors: %s",
	    m->path, real, real == 1 ? "" : "s", what);
	if (level == IOACCT_ADVICE_HIGH)
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "Output may be missing or incomplete: check the job's output and error files. "
		    "Out of space or quota: free space or ask for more (quota -s, lfs quota); "
		    "I/O errors: tell the administrators the mount and the time.");
	else if (level == IOACCT_ADVICE_WARN && !e[IOACCT_ERR_ACCESS])
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "This job was stored before ioacct classified errors, so its failed calls "
		    "include lookups that found nothing, which are harmless; check the job's error "
		    "file if it did not finish its work.");
	else if (level == IOACCT_ADVICE_WARN)
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "Check the permissions of the files and directories the job uses (ls -l) and "
		    "that it does not write into read-only places; check the job's error file.");
	else
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
		    "Usually harmless (EEXIST from mkdir -p, EAGAIN or EINTR the program retries); "
		    "check the job's error file if it did not finish its work.");
	VAL_U(a, "real_errors", real);
	VAL_U(a, "space", e[IOACCT_ERR_SPACE]);
	VAL_U(a, "io", e[IOACCT_ERR_IO]);
	VAL_U(a, "access", e[IOACCT_ERR_ACCESS]);
	VAL_U(a, "other", e[IOACCT_ERR_OTHER]);
	VAL_U(a, "unclassified", m->unclassified);
}

/* Lookups that found nothing are not errors; very many of them cost time on a shared file system. */
static void rule_notfound(struct advice_ctx *ctx, const struct ioacct_report_mount *m)
{
	const struct ioacct_advice_limits *l = &ctx->r->limits;
	uint64_t nf = m->errclass[IOACCT_ERR_NOTFOUND];
	uint64_t lookups = m->op[IOACCT_OP_OPEN].calls + m->op[IOACCT_OP_STAT].calls;
	struct ioacct_advice *a;

	if (nf == 0 || nf < l->notfound_min)
		return;
	a = ioacct_advice_new(ctx, IOACCT_ADVICE_INFO, "notfound-lookups", m, -1);
	if (!a)
		return;
	ioacct_advice_say(a->message, sizeof(a->message),
	    "%s: %" PRIu64 " lookups found nothing (ENOENT, ENOTDIR), %.1f%% of %" PRIu64
	    " opens and stats; these are not errors (shells, loaders and Python search their "
	    "paths this way), but each one is a metadata request",
	    m->path, nf, pct(nf, lookups), lookups);
	ioacct_advice_say(a->suggestion, sizeof(a->suggestion),
	    "If the job starts slowly, shorten its search paths (PATH, LD_LIBRARY_PATH, "
	    "PYTHONPATH) or install its software on local disk or in a container image.");
	VAL_U(a, "notfound", nf);
	VAL_U(a, "opens_and_stats", lookups);
	THR_U(a, "advice_notfound_min", l->notfound_min);
}

static int advise(struct ioacct_report *r)
{
	struct advice_ctx ctx = { .r = r };
	bool problem = false;

	rule_dropped(&ctx);
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		if (m->kind == IOACCT_FS_PSEUDO)
			continue;
		rule_small_requests(&ctx, m);
		rule_meta_time(&ctx, m);
		rule_meta_ops(&ctx, m);
		rule_fsync(&ctx, m);
		rule_tiny_files(&ctx, m);
		rule_shared_meta(&ctx, m);
		rule_bursts(&ctx, m);
		rule_errors(&ctx, m);
		rule_notfound(&ctx, m);
		rule_low_hit_sequential(&ctx, m);
		rule_readahead_waste(&ctx, m);
		rule_random_mmap(&ctx, m);
		rule_reread(&ctx, m);
	}
	rule_rw_intensive(&ctx);
	rule_local_data(&ctx);
	rule_step_imbalance(&ctx);
	rule_node_imbalance(&ctx);
	ioacct_report_files_advise(&ctx);
	if (ctx.err)
		return ctx.err;
	/* Most severe first; an insertion sort keeps the rules' order within a level. */
	for (size_t i = 1; i < r->nadvice; i++) {
		struct ioacct_advice t = r->advice[i];
		size_t k = i;

		for (; k > 0 && r->advice[k - 1].level < t.level; k--)
			r->advice[k] = r->advice[k - 1];
		r->advice[k] = t;
	}
	for (size_t i = 0; i < r->nadvice; i++)
		problem |= r->advice[i].level >= IOACCT_ADVICE_WARN;
	if (!problem) {
		struct ioacct_advice *a = ioacct_advice_new(&ctx, IOACCT_ADVICE_OK, "ok", NULL, -1);

		if (!a)
			return ctx.err;
		ioacct_advice_say(a->message, sizeof(a->message),
		    "No rule found a problem worth a warning in this job's I/O");
		ioacct_advice_say(a->suggestion, sizeof(a->suggestion), "Nothing to change.");
	}
	return 0;
}

struct ioacct_report *ioacct_report_create(const struct ioacct_jobdata *jd,
					   const struct ioacct_advice_limits *limits,
					   const char *only_mount)
{
	struct ioacct_report *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return NULL;
	r->jd = jd;
	if (limits)
		r->limits = *limits;
	else
		ioacct_advice_limits_defaults(&r->limits);
	ret = collect_mounts(r, only_mount);
	if (!ret)
		ret = collect_steps(r);
	if (!ret) {
		size_bins(r);
		ret = merge_series(r);
	}
	if (!ret)
		ret = ioacct_report_files_collect(r, only_mount);
	if (!ret)
		ret = ioacct_report_mpiio_collect(r);
	if (!ret)
		ret = ioacct_report_h5_collect(r);
	if (!ret)
		ret = ioacct_report_rpc_collect(r);
	if (!ret) {
		bool unmeasured = ioacct_probe_mmap_unmeasured(jd->job.probe_mode) != NULL;

		for (size_t i = 0; i < r->nmounts; i++) {
			r->mounts[i].mmap_unmeasured = unmeasured;
			rates(r, &r->mounts[i]);
		}
		r->all.mmap_unmeasured = unmeasured;
		rates(r, &r->all);
		ret = advise(r);
	}
	if (ret) {
		ioacct_report_destroy(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

void ioacct_report_destroy(struct ioacct_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nmounts; i++)
		free(r->mounts[i].bins);
	ioacct_report_rpc_free(r);
	free(r->all.bins);
	free(r->mounts);
	free(r->steps);
	free(r->advice);
	ioacct_report_files_free(r);
	ioacct_report_mpiio_free(r);
	free(r->h5_files);
	free(r);
}
