/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing Darshan logs (see darshan.h): a log held in memory, serialised as
 * format 3.41 with every region zlib-compressed, and the log of a job built
 * from its report. The byte layout is the one darshan-util reads:
 *
 *   0     version string "3.41", NUL-padded to 8 bytes
 *   8     magic number 6567223 (int64)
 *   16    compression type (1 byte; 0 zlib), 7 bytes of padding
 *   24    partial flag (uint64, a bit per module id)
 *   32    name table: offset, length (uint64 each)
 *   48    64 module regions: offset, length
 *   1072  64 module record versions (uint32)
 *   1328  the job region, then the name table, then the module regions in
 *         module-id order, each one zlib stream
 */
#include "darshan.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER_SIZE 1328
#define JOB_SIZE (7 * 8 + IOACCT_DARSHAN_METADATA_LEN)

/* ---- a growing output buffer ---- */

struct obuf {
	unsigned char *p;
	size_t len, cap;
	bool failed;
};

static void put(struct obuf *o, const void *src, size_t n)
{
	if (o->failed)
		return;
	if (o->cap - o->len < n) {
		size_t cap = o->cap ? o->cap : 4096;
		unsigned char *q;

		while (cap - o->len < n)
			cap *= 2;
		q = realloc(o->p, cap);
		if (!q) {
			o->failed = true;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->len, src, n);
	o->len += n;
}

static void put64(struct obuf *o, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(o, b, sizeof(b));
}

static void putf(struct obuf *o, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	put64(o, bits);
}

static void set64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void set32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The one error helper (util.h), under this file's own name. */
#define errf(...) ioacct_seterr(__VA_ARGS__)

/* ---- regions ---- */

static int job_region(const struct ioacct_darshan_log *log, struct obuf *o, char *err, size_t errlen)
{
	char meta[IOACCT_DARSHAN_METADATA_LEN] = { 0 };
	size_t mlen = strnlen(log->metadata, sizeof(log->metadata) - 1);
	const char *nul = "";

	put64(o, (uint64_t)log->uid);
	put64(o, (uint64_t)log->start_sec);
	put64(o, (uint64_t)log->start_nsec);
	put64(o, (uint64_t)log->end_sec);
	put64(o, (uint64_t)log->end_nsec);
	put64(o, (uint64_t)log->nprocs);
	put64(o, (uint64_t)log->jobid);
	/* darshan-util ends the metadata with a newline. */
	memcpy(meta, log->metadata, mlen);
	if (mlen && meta[mlen - 1] != '\n' && mlen + 1 < sizeof(meta))
		meta[mlen] = '\n';
	put(o, meta, sizeof(meta));
	put(o, log->exe ? log->exe : "", log->exe ? strlen(log->exe) : 0);
	for (size_t i = 0; i < log->nmounts; i++) {
		put(o, "\n", 1);
		put(o, log->mounts[i].fstype, strlen(log->mounts[i].fstype));
		put(o, "\t", 1);
		put(o, log->mounts[i].path, strlen(log->mounts[i].path));
	}
	put(o, nul, 1);
	if (!o->failed && o->len > IOACCT_DARSHAN_JOB_REGION_MAX)
		return errf(err, errlen, -EINVAL, "the exe and mount table take %zu bytes, more than "
			    "the %d a Darshan job region holds", o->len - JOB_SIZE,
			    IOACCT_DARSHAN_JOB_REGION_MAX - JOB_SIZE);
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ids of ioacct's own records, sorted, for telling their names apart; NULL: ENOMEM. */
static uint64_t *own_ids(const struct ioacct_darshan_log *log)
{
	uint64_t *ids = malloc((log->nown ? log->nown : 1) * sizeof(*ids));

	if (!ids)
		return NULL;
	for (size_t i = 0; i < log->nown; i++)
		ids[i] = log->own[i].id;
	qsort(ids, log->nown, sizeof(*ids), id_cmp);
	return ids;
}

/* The names of the records (own: of ioacct's own records alone, else of the others). */
static void name_region(const struct ioacct_darshan_log *log, const uint64_t *ids, bool own,
			struct obuf *o)
{
	for (size_t i = 0; i < log->nnames; i++) {
		bool is_own = bsearch(&log->names[i].id, ids, log->nown, sizeof(*ids), id_cmp);

		if (is_own != own)
			continue;
		put64(o, log->names[i].id);
		put(o, log->names[i].name, strlen(log->names[i].name) + 1);
	}
}

static void put_record(struct obuf *o, const struct ioacct_darshan_modinfo *mi,
		       const struct ioacct_darshan_record *r)
{
	put64(o, r->id);
	put64(o, (uint64_t)r->rank);
	if (mi->file_id)
		put64(o, r->file_id);
	for (size_t k = 0; k < mi->ncounters; k++)
		put64(o, (uint64_t)r->counters[k]);
	for (size_t k = 0; k < mi->nfcounters; k++)
		putf(o, r->fcounters[k]);
}

static void record_region(const struct ioacct_darshan_log *log, enum ioacct_darshan_kind kind,
			  struct obuf *o)
{
	const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kind);

	for (size_t i = 0; i < log->nrecs[kind]; i++)
		put_record(o, mi, &log->recs[kind][i]);
}

static int heatmap_region(const struct ioacct_darshan_log *log, struct obuf *o, char *err,
			  size_t errlen)
{
	for (size_t i = 0; i < log->nheatmaps; i++) {
		const struct ioacct_darshan_heatmap *h = &log->heatmaps[i];

		if (h->nbins > IOACCT_DARSHAN_HEATMAP_MAX_BINS)
			return errf(err, errlen, -EINVAL, "a HEATMAP record of %" PRIu64 " bins is "
				    "more than darshan-parser reads (%d)", h->nbins,
				    IOACCT_DARSHAN_HEATMAP_MAX_BINS);
		put64(o, h->id);
		put64(o, (uint64_t)h->rank);
		putf(o, h->bin_width);
		put64(o, h->nbins);
		/* Two pointers in Darshan's struct, meaningless in a file. */
		put64(o, 0);
		put64(o, 0);
		for (uint64_t b = 0; b < h->nbins; b++)
			put64(o, (uint64_t)h->write_bins[b]);
		for (uint64_t b = 0; b < h->nbins; b++)
			put64(o, (uint64_t)h->read_bins[b]);
	}
	return 0;
}

/* DXT_POSIX records as darshan-dxt-log-format.h lays them out: head, writes, reads. */
static void put_segs(struct obuf *o, const struct ioacct_darshan_dxt_seg *s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		put64(o, (uint64_t)s[i].offset);
		put64(o, (uint64_t)s[i].length);
		putf(o, s[i].start);
		putf(o, s[i].end);
	}
}

static void dxt_region(const struct ioacct_darshan_log *log, struct obuf *o)
{
	for (size_t i = 0; i < log->ndxt; i++) {
		const struct ioacct_darshan_dxt *d = &log->dxt[i];
		char host[IOACCT_DARSHAN_DXT_HOSTNAME] = { 0 };

		put64(o, d->id);
		put64(o, (uint64_t)d->rank);
		put64(o, (uint64_t)d->shared_record);
		memcpy(host, d->hostname, strnlen(d->hostname, sizeof(host) - 1));
		put(o, host, sizeof(host));
		put64(o, d->nwrites);
		put64(o, d->nreads);
		put_segs(o, d->writes, d->nwrites);
		put_segs(o, d->reads, d->nreads);
	}
}

/* Adds (id, name) to a log's name table, kept sorted by id; 0 or -ENOMEM. */
static int insert_name(struct ioacct_darshan_log *log, uint64_t id, const char *name)
{
	struct ioacct_darshan_name *names;
	size_t lo = 0, hi = log->nnames;
	char *copy;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->names[mid].id == id)
			return 0;
		if (log->names[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	copy = strdup(name);
	names = copy ? realloc(log->names, (log->nnames + 1) * sizeof(*names)) : NULL;
	if (!names) {
		free(copy);
		return -ENOMEM;
	}
	log->names = names;
	memmove(&names[lo + 1], &names[lo], (log->nnames - lo) * sizeof(*names));
	names[lo].id = id;
	names[lo].name = copy;
	log->nnames++;
	return 0;
}

int ioacct_darshan_dxt_add(struct ioacct_darshan_log *log, const char *path, int64_t rank,
			   const char *hostname, bool write, const struct ioacct_darshan_dxt_seg *seg)
{
	uint64_t id = ioacct_darshan_hash(path, strlen(path), 0);
	struct ioacct_darshan_dxt *d = NULL;
	struct ioacct_darshan_dxt_seg **segs, *grown;
	uint64_t *n;

	/* The last record first: a job's operations on one file tend to come in runs. */
	for (size_t i = log->ndxt; i-- > 0;) {
		if (log->dxt[i].id == id && log->dxt[i].rank == rank) {
			d = &log->dxt[i];
			break;
		}
	}
	if (!d) {
		struct ioacct_darshan_dxt *recs;

		if (insert_name(log, id, path))
			return -ENOMEM;
		recs = realloc(log->dxt, (log->ndxt + 1) * sizeof(*recs));
		if (!recs)
			return -ENOMEM;
		log->dxt = recs;
		d = &log->dxt[log->ndxt++];
		memset(d, 0, sizeof(*d));
		d->id = id;
		d->rank = rank;
		d->shared_record = -1;
		snprintf(d->hostname, sizeof(d->hostname), "%s", hostname ? hostname : "");
	}
	segs = write ? &d->writes : &d->reads;
	n = write ? &d->nwrites : &d->nreads;
	/* Doubling at powers of two keeps a long trace's appends amortised O(1). */
	if ((*n & (*n - 1)) == 0) {
		grown = realloc(*segs, (*n ? 2 * *n : 1) * sizeof(**segs));
		if (!grown)
			return -ENOMEM;
		*segs = grown;
	}
	(*segs)[(*n)++] = *seg;
	return 0;
}

int ioacct_darshan_dxt_move(struct ioacct_darshan_log *to, struct ioacct_darshan_log *from)
{
	struct ioacct_darshan_dxt *recs;

	if (!from->ndxt)
		return 0;
	recs = realloc(to->dxt, (to->ndxt + from->ndxt) * sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	to->dxt = recs;
	/* Names first: an insert that fails leaves extra names at worst, never a record without one. */
	for (size_t i = 0; i < from->ndxt; i++) {
		const char *name = ioacct_darshan_name_of(from, from->dxt[i].id);

		if (name && insert_name(to, from->dxt[i].id, name))
			return -ENOMEM;
	}
	memcpy(&to->dxt[to->ndxt], from->dxt, from->ndxt * sizeof(*recs));
	to->ndxt += from->ndxt;
	free(from->dxt);
	from->dxt = NULL;
	from->ndxt = 0;
	return 0;
}

/* Appends `raw` to the file as one zlib stream; the region's offset and length in *reg. */
static int deflate_region(struct obuf *file, const struct obuf *raw, uint64_t *off, uint64_t *len)
{
	uLongf n;
	unsigned char *z;

	*off = *len = 0;
	if (raw->len == 0)
		return 0;
	n = compressBound((uLong)raw->len);
	z = malloc(n);
	if (!z)
		return -ENOMEM;
	if (compress2(z, &n, raw->p, (uLong)raw->len, Z_DEFAULT_COMPRESSION) != Z_OK) {
		free(z);
		return -ENOMEM;
	}
	*off = file->len;
	*len = n;
	put(file, z, n);
	free(z);
	return file->failed ? -ENOMEM : 0;
}

/*
 * ioacct's own records after the modules' regions: their names, their
 * records, then the trailer that finds them (darshan.h).
 */
static int own_regions(const struct ioacct_darshan_log *log, const uint64_t *ids,
		       struct obuf *file, struct obuf *raw)
{
	uint64_t off[2], len[2];
	int ret;

	if (!log->nown)
		return 0;
	raw->len = 0;
	name_region(log, ids, true, raw);
	ret = raw->failed ? -ENOMEM : deflate_region(file, raw, &off[0], &len[0]);
	if (ret)
		return ret;
	raw->len = 0;
	for (size_t i = 0; i < log->nown; i++)
		put_record(raw, ioacct_darshan_modinfo(IOACCT_DARSHAN_POSIX), &log->own[i]);
	ret = raw->failed ? -ENOMEM : deflate_region(file, raw, &off[1], &len[1]);
	if (ret)
		return ret;
	put(file, IOACCT_DARSHAN_OWN_MAGIC, 8);
	put64(file, off[0]);
	put64(file, len[0]);
	put64(file, off[1]);
	put64(file, len[1]);
	put64(file, ioacct_darshan_modinfo(IOACCT_DARSHAN_POSIX)->version);
	return file->failed ? -ENOMEM : 0;
}

/*
 * A module's region, in `raw`, deflated after what the file holds; its
 * offset, length and record version (0 when empty) go into the header.
 */
static int module_region(struct obuf *file, struct obuf *raw, unsigned char *header,
			 unsigned int mod_id, uint32_t version)
{
	uint64_t off, rlen;
	int ret = raw->failed ? -ENOMEM : deflate_region(file, raw, &off, &rlen);

	if (ret)
		return ret;
	set64(header + 48 + 16 * mod_id, off);
	set64(header + 56 + 16 * mod_id, rlen);
	set32(header + 1072 + 4 * mod_id, rlen ? version : 0);
	return 0;
}

int ioacct_darshan_write(const struct ioacct_darshan_log *log, void **buf, size_t *len, char *err,
			 size_t errlen)
{
	static const enum ioacct_darshan_kind kinds[] = {
		IOACCT_DARSHAN_POSIX, IOACCT_DARSHAN_MPIIO, IOACCT_DARSHAN_H5F, IOACCT_DARSHAN_H5D,
		IOACCT_DARSHAN_STDIO,
	};
	struct obuf file = { 0 }, raw = { 0 };
	unsigned char header[HEADER_SIZE] = { 0 };
	uint64_t off, rlen, *ids = own_ids(log);
	int ret = ids ? 0 : -ENOMEM;

	*buf = NULL;
	*len = 0;
	if (err && errlen)
		err[0] = '\0';
	if (ret)
		goto out;
	put(&file, header, sizeof(header));

	ret = job_region(log, &raw, err, errlen);
	if (!ret)
		ret = deflate_region(&file, &raw, &off, &rlen);
	if (ret)
		goto out;

	raw.len = 0;
	name_region(log, ids, false, &raw);
	ret = raw.failed ? -ENOMEM : deflate_region(&file, &raw, &off, &rlen);
	if (ret)
		goto out;
	set64(header + 32, off);
	set64(header + 40, rlen);

	/*
	 * Module regions in module-id order: POSIX 1, MPI-IO 2, H5F 3, H5D 4,
	 * STDIO 9, DXT_POSIX 10, HEATMAP 15.
	 */
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kinds[k]);

		raw.len = 0;
		record_region(log, kinds[k], &raw);
		ret = module_region(&file, &raw, header, mi->mod_id, mi->version);
		if (ret)
			goto out;
	}
	raw.len = 0;
	dxt_region(log, &raw);
	ret = module_region(&file, &raw, header, IOACCT_DARSHAN_MOD_DXT_POSIX, 1);
	if (ret)
		goto out;
	raw.len = 0;
	ret = heatmap_region(log, &raw, err, errlen);
	if (!ret)
		ret = module_region(&file, &raw, header, IOACCT_DARSHAN_MOD_HEATMAP, 1);
	if (!ret)
		ret = own_regions(log, ids, &file, &raw);
	if (ret)
		goto out;

	memcpy(header, "3.41", 4);
	set64(header + 8, IOACCT_DARSHAN_MAGIC);
	header[16] = IOACCT_DARSHAN_ZLIB;
	set64(header + 24, log->partial);
	if (file.failed) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(file.p, header, sizeof(header));
	*buf = file.p;
	*len = file.len;
	file.p = NULL;
out:
	if (ret == -ENOMEM && err && errlen && !err[0])
		errf(err, errlen, ret, "out of memory");
	free(file.p);
	free(raw.p);
	free(ids);
	return ret;
}

int ioacct_darshan_write_file(const struct ioacct_darshan_log *log, const char *path, char *err,
			      size_t errlen)
{
	char tmp[4096];
	void *buf;
	size_t len, done = 0;
	int fd, ret;

	ret = ioacct_darshan_write(log, &buf, &len, err, errlen);
	if (ret)
		return ret;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		free(buf);
		return errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		free(buf);
		return errf(err, errlen, ret, "cannot create %s: %s", tmp, strerror(-ret));
	}
	while (done < len) {
		ssize_t n = write(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		done += (size_t)n;
	}
	free(buf);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return errf(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	return 0;
}

/* ---- the log of a job ---- */

/* Copies s without newlines (which would end a metadata line or the exe). */
static void oneline(char *dst, size_t cap, const char *s)
{
	size_t i = 0;

	for (; s[i] && i + 1 < cap; i++)
		dst[i] = s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
	dst[i] = '\0';
}

static uint64_t ok_calls(const struct ioacct_counters *c)
{
	return c->calls >= c->errors ? c->calls - c->errors : 0;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The POSIX counter of each operation's successful calls (IOACCT_OPS), or NONE. */
#define OP(NAME, num, name, kind, darshan, ...) [num] = IOACCT_DARSHAN_POSIX_##darshan,
static const int op_counter[IOACCT_OP_COUNT] = { IOACCT_OPS(OP) };
#undef OP

/* The POSIX record of one mount: what ioacct measures, -1 for what it does not. */
static void posix_record(const struct ioacct_report_mount *m, uint64_t id,
			 struct ioacct_darshan_record *r)
{
	const struct ioacct_counters *op = m->op;
	int64_t *c = r->counters;
	double *f = r->fcounters;
	uint64_t bytes = op[IOACCT_OP_READ].bytes + op[IOACCT_OP_WRITE].bytes;
	double io_time = secs(op[IOACCT_OP_READ].ns) + secs(op[IOACCT_OP_WRITE].ns) + secs(m->meta_ns);

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->rank = -1;
	for (size_t i = 0; i < IOACCT_DARSHAN_POSIX_NCOUNTERS; i++)
		c[i] = -1;
	for (size_t i = 0; i < IOACCT_DARSHAN_POSIX_NFCOUNTERS; i++)
		f[i] = -1;
	/* Successful calls of the operations Darshan counts (IOACCT_OPS); fsync has fdatasync. */
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		if (op_counter[k] != IOACCT_DARSHAN_POSIX_NONE)
			c[op_counter[k]] = (int64_t)ok_calls(&op[k]);
	c[12] = 0; /* RENAMED_FROM: a record id, 0 for none */
	c[IOACCT_DARSHAN_POSIX_BYTES_READ] = (int64_t)op[IOACCT_OP_READ].bytes;
	c[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN] = (int64_t)op[IOACCT_OP_WRITE].bytes;
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		c[IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 + b] = (int64_t)op[IOACCT_OP_READ].size_hist[b];
		c[IOACCT_DARSHAN_POSIX_SIZE_WRITE_0_100 + b] = (int64_t)op[IOACCT_OP_WRITE].size_hist[b];
	}
	/* The common strides and access sizes: none recorded (values and counts 0). */
	for (size_t i = 49; i < 65; i++)
		c[i] = 0;
	/* One shared record for the whole job: its own fastest and slowest "rank". */
	c[IOACCT_DARSHAN_POSIX_FASTEST_RANK] = c[IOACCT_DARSHAN_POSIX_SLOWEST_RANK] = 0;
	c[IOACCT_DARSHAN_POSIX_FASTEST_RANK_BYTES] = (int64_t)bytes;
	c[IOACCT_DARSHAN_POSIX_SLOWEST_RANK_BYTES] = (int64_t)bytes;
	f[IOACCT_DARSHAN_POSIX_F_READ_TIME] = secs(op[IOACCT_OP_READ].ns);
	/* Darshan counts fsync and fdatasync time as write time (ioacct_report_counters()). */
	f[IOACCT_DARSHAN_POSIX_F_WRITE_TIME] = secs(op[IOACCT_OP_WRITE].ns + op[IOACCT_OP_FSYNC].ns);
	f[IOACCT_DARSHAN_POSIX_F_META_TIME] = secs(m->meta_ns - op[IOACCT_OP_FSYNC].ns);
	f[IOACCT_DARSHAN_POSIX_F_FASTEST_RANK_TIME] = io_time;
	f[IOACCT_DARSHAN_POSIX_F_SLOWEST_RANK_TIME] = io_time;
	f[15] = f[16] = 0; /* variances */
}

/* The job region: times, ids, the metadata lines, the "exe" (the job's command line). */
static int fill_job(struct ioacct_darshan_log *log, const struct ioacct_report *r)
{
	const struct ioacct_job *j = &r->jd->job;
	int64_t end_ns = j->end_ns > 0 ? j->end_ns : j->start_ns + (int64_t)r->span_ns;
	/*
	 * The page-cache views (issue 14) have no Darshan counter (POSIX_MMAPS
	 * counts mmap() calls, which ioacct does not): the job's totals here,
	 * under ioacct's names.
	 */
	const struct ioacct_counters *op = r->all.op;
	const char *views = ioacct_probe_views(j->probe_mode);
	char exe[IOACCT_CMDLINE_MAX], v[3][IOACCT_NAME_MAX];

	memcpy(log->version, "3.41", 5);
	log->minor = 41;
	log->comp = IOACCT_DARSHAN_ZLIB;
	log->uid = j->uid;
	log->start_sec = j->start_ns / (int64_t)NSEC_PER_SEC;
	log->start_nsec = j->start_ns % (int64_t)NSEC_PER_SEC;
	log->end_sec = end_ns / (int64_t)NSEC_PER_SEC;
	log->end_nsec = end_ns % (int64_t)NSEC_PER_SEC;
	/* ioacct sees a job, not its processes: one "process". */
	log->nprocs = 1;
	log->jobid = (int64_t)j->job_id;
	oneline(v[0], sizeof(v[0]), j->cluster);
	oneline(v[1], sizeof(v[1]), j->node);
	oneline(v[2], sizeof(v[2]), j->source);
	/*
	 * lib_ver first, as Darshan's runtime writes it (PyDarshan's summary
	 * shows it as the "Runtime Library Version"): here, what wrote the log.
	 */
	snprintf(log->metadata, sizeof(log->metadata),
		 "lib_ver=ioacct-%s\ncluster=%s\nnode=%s\nsource=%s\nbin_width_ns=%" PRIu64 "\n"
		 "ioacct_views=%s\nioacct_mmap_faults=%" PRIu64 "\nioacct_mmap_read_bytes=%" PRId64
		 "\nioacct_cache_miss_bytes=%" PRIu64 "\nioacct_readahead_bytes=%" PRIu64
		 "\nioacct_fadvises=%" PRIu64 "\nioacct_madvises=%" PRIu64 "\n",
		 PACKAGE_VERSION, v[0], v[1], v[2], r->bin_width_ns, views ? views : "unknown",
		 op[IOACCT_OP_MMAP_FAULT].calls,
		 /* -1, Darshan's "not known", where the kernel had no exact hook. */
		 r->all.mmap_unmeasured ? (int64_t)-1 : (int64_t)op[IOACCT_OP_MMAP_FAULT].bytes,
		 op[IOACCT_OP_CACHE_FILL].bytes, op[IOACCT_OP_READAHEAD].bytes,
		 op[IOACCT_OP_FADVISE].calls, op[IOACCT_OP_MADVISE].calls);
	/* Its POSIX records are per mount because no per-file ones were kept (file_records = no). */
	if (ioacct_probe_files_off(j->probe_mode)) {
		size_t mlen = strnlen(log->metadata, sizeof(log->metadata));

		snprintf(log->metadata + mlen, sizeof(log->metadata) - mlen,
			 "ioacct_file_records=off\n");
	}
	/* The command line, as Darshan's exe; a job stored before it was kept: its name. */
	oneline(exe, sizeof(exe), j->cmdline[0] ? j->cmdline : j->name[0] ? j->name : "(unknown)");
	log->exe = strdup(exe);
	return log->exe ? 0 : -ENOMEM;
}

/*
 * A mount of the report: a row of the mount table while the job region has
 * `*room` bytes for it and, with `as_file` (a job without per-file
 * records), the mount as a "file": its name and its POSIX record.
 */
static int fill_mount(struct ioacct_darshan_log *log, const struct ioacct_report_mount *m,
		      size_t *room, bool as_file)
{
	char *path;
	uint64_t id;
	size_t need;
	bool listed = false;
	int ret;

	path = ioacct_darshan_mount_name(m->path);
	if (!path)
		return -ENOMEM;
	id = ioacct_darshan_hash(path, strlen(path), 0);
	for (size_t k = 0; k < log->nmounts; k++)
		listed |= strcmp(log->mounts[k].path, path) == 0;
	/* Like Darshan, the mount table keeps what fits. */
	need = strlen(m->fstype) + strlen(path) + 2;
	if (!listed && need <= *room) {
		struct ioacct_darshan_mount *dm = &log->mounts[log->nmounts];

		dm->path = strdup(path);
		dm->fstype = ioacct_darshan_mount_name(m->fstype);
		if (!dm->path || !dm->fstype) {
			free(dm->path);
			free(dm->fstype);
			free(path);
			return -ENOMEM;
		}
		log->nmounts++;
		*room -= need;
	}
	ret = as_file ? insert_name(log, id, path) : 0;
	free(path);
	if (ret || !as_file)
		return ret;
	posix_record(m, id, &log->recs[IOACCT_DARSHAN_POSIX][log->nrecs[IOACCT_DARSHAN_POSIX]++]);
	return 0;
}

/*
 * The job's per-file records as POSIX records (ioacct_darshan_file_records),
 * named; the pseudo-records among them (a mount's rest, its "other files")
 * as ioacct's own records, which Darshan's tools do not count as files;
 * "other files" make the POSIX module partial, as Darshan marks a module
 * that could not keep every record. *nfiles: 0 for a job without per-file
 * records, which keeps a record per mount.
 */
static int fill_files(struct ioacct_darshan_log *log, const struct ioacct_report *r,
		      const bool *keep, bool darshan_filter, size_t *nfiles)
{
	struct ioacct_darshan_frec *fr;
	struct ioacct_darshan_record *recs, *own;
	size_t n, mlen, nrecs = 0, nown = 0;
	bool partial, ranked = false;
	int ret = ioacct_darshan_file_records(r, keep, darshan_filter, &fr, &n, &partial);

	*nfiles = n;
	if (ret || !n)
		return ret;
	recs = realloc(log->recs[IOACCT_DARSHAN_POSIX], n * sizeof(*recs));
	if (recs)
		log->recs[IOACCT_DARSHAN_POSIX] = recs;
	own = recs ? calloc(n, sizeof(*own)) : NULL;
	if (!own) {
		ret = -ENOMEM;
		goto out;
	}
	log->own = own;
	for (size_t i = 0; i < n && !ret; i++) {
		if (fr[i].pseudo)
			own[nown++] = fr[i].rec;
		else
			recs[nrecs++] = fr[i].rec;
		ret = insert_name(log, fr[i].rec.id, fr[i].name);
		/* Darshan's tools take a record's rank to be below nprocs. */
		if (fr[i].rec.rank >= log->nprocs)
			log->nprocs = fr[i].rec.rank + 1;
		ranked |= !fr[i].pseudo && fr[i].rec.rank >= 0;
	}
	/*
	 * Files of a job that names no rank are its processes' own, rank 0, as
	 * Darshan's non-MPI runtime writes them: -1 is a file shared by every
	 * rank of an MPI job, and Drishti reports such records as shared files.
	 */
	for (size_t i = 0; i < nrecs && !ranked; i++)
		recs[i].rank = 0;
	log->nrecs[IOACCT_DARSHAN_POSIX] = ret ? 0 : nrecs;
	log->nown = ret ? 0 : nown;
	if (partial)
		log->partial |= 1ULL << IOACCT_DARSHAN_MOD_POSIX;
	/* Says where fsync's time is, for ioreport --compare and for people. */
	mlen = strnlen(log->metadata, sizeof(log->metadata));
	snprintf(log->metadata + mlen, sizeof(log->metadata) - mlen, "%s\n",
		 IOACCT_DARSHAN_FSYNC_META);
	if (log->nown) {
		mlen = strnlen(log->metadata, sizeof(log->metadata));
		snprintf(log->metadata + mlen, sizeof(log->metadata) - mlen, "%s%zu\n",
			 IOACCT_DARSHAN_OWN_META, log->nown);
	}
out:
	ioacct_darshan_frecs_free(fr, n);
	return ret;
}

/*
 * Records of `kind` (fr, n of them: MPI-IO's or HDF5's) as the log's,
 * named; the metadata line `meta` says what -1 means in them.
 */
static int fill_module(struct ioacct_darshan_log *log, enum ioacct_darshan_kind kind,
		       const struct ioacct_darshan_frec *fr, size_t n, const char *meta)
{
	struct ioacct_darshan_record *recs;
	size_t mlen;
	int ret = 0;

	if (!n)
		return 0;
	recs = calloc(n, sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	free(log->recs[kind]);
	log->recs[kind] = recs;
	for (size_t i = 0; i < n && !ret; i++) {
		recs[i] = fr[i].rec;
		ret = insert_name(log, fr[i].rec.id, fr[i].name);
		if (fr[i].rec.rank >= log->nprocs)
			log->nprocs = fr[i].rec.rank + 1;
	}
	log->nrecs[kind] = ret ? 0 : n;
	mlen = strnlen(log->metadata, sizeof(log->metadata));
	if (!strstr(log->metadata, meta))
		snprintf(log->metadata + mlen, sizeof(log->metadata) - mlen, "%s\n", meta);
	return ret;
}

/* The job's MPI-IO records (ioacct_darshan_mpiio_records) and HDF5 records (_h5_records). */
static int fill_layers(struct ioacct_darshan_log *log, const struct ioacct_report *r,
		       const bool *keep)
{
	static const enum ioacct_darshan_kind h5[] = { IOACCT_DARSHAN_H5F, IOACCT_DARSHAN_H5D };
	struct ioacct_darshan_frec *fr;
	size_t n;
	int ret = ioacct_darshan_mpiio_records(r, keep, &fr, &n);

	if (ret)
		return ret;
	ret = fill_module(log, IOACCT_DARSHAN_MPIIO, fr, n, IOACCT_DARSHAN_MPIIO_META);
	ioacct_darshan_frecs_free(fr, n);
	for (size_t k = 0; k < ARRAY_SIZE(h5) && !ret; k++) {
		ret = ioacct_darshan_h5_records(r, keep, h5[k], &fr, &n);
		if (ret)
			break;
		ret = fill_module(log, h5[k], fr, n, IOACCT_DARSHAN_H5_META);
		ioacct_darshan_frecs_free(fr, n);
	}
	return ret;
}

/* The HEATMAP records (ioacct_darshan_heatmaps), named; the metadata says how ranks were split. */
static int fill_heatmaps(struct ioacct_darshan_log *log, const struct ioacct_report *r,
			 const bool *keep)
{
	static const char hm_name[] = "heatmap:POSIX";
	bool estimated;
	size_t mlen;
	int ret = ioacct_darshan_heatmaps(r, keep, &log->heatmaps, &log->nheatmaps, &estimated);

	if (ret || !log->nheatmaps)
		return ret;
	if (estimated) {
		mlen = strnlen(log->metadata, sizeof(log->metadata));
		snprintf(log->metadata + mlen, sizeof(log->metadata) - mlen, "%s\n",
			 IOACCT_DARSHAN_HEATMAP_META);
	}
	return insert_name(log, log->heatmaps[0].id, hm_name);
}

static int fill_from_report(struct ioacct_darshan_log *log, const struct ioacct_report *r,
			    const bool *keep, bool darshan_filter)
{
	size_t room = IOACCT_DARSHAN_JOB_REGION_MAX - JOB_SIZE - 1, nfiles = 0;
	int ret;

	ret = fill_job(log, r);
	log->mounts = calloc(r->nmounts ? r->nmounts : 1, sizeof(*log->mounts));
	log->names = calloc(r->nmounts + 1, sizeof(*log->names));
	log->recs[IOACCT_DARSHAN_POSIX] = calloc(r->nmounts ? r->nmounts : 1,
						 sizeof(struct ioacct_darshan_record));
	if (ret || !log->mounts || !log->names || !log->recs[IOACCT_DARSHAN_POSIX])
		return -ENOMEM;
	room -= strlen(log->exe);

	ret = fill_files(log, r, keep, darshan_filter, &nfiles);
	if (!ret)
		ret = fill_layers(log, r, keep);
	if (ret)
		return ret;
	for (size_t i = 0; i < r->nmounts; i++) {
		if (!keep[i])
			continue;
		ret = fill_mount(log, &r->mounts[i], &room, nfiles == 0);
		if (ret)
			return ret;
	}

	return fill_heatmaps(log, r, keep);
}

struct ioacct_darshan_log *ioacct_darshan_from_report(const struct ioacct_report *r,
						      bool darshan_filter)
{
	struct ioacct_darshan_log *log = calloc(1, sizeof(*log));
	bool *keep = calloc(r->nmounts ? r->nmounts : 1, sizeof(*keep));
	int ret = -ENOMEM;

	if (log && keep) {
		for (size_t i = 0; i < r->nmounts; i++)
			keep[i] = !darshan_filter ||
				  !ioacct_darshan_skips_mount(r->mounts[i].path, r->mounts[i].fstype);
		ret = fill_from_report(log, r, keep, darshan_filter);
	}
	free(keep);
	if (ret) {
		ioacct_darshan_free(log);
		errno = -ret;
		return NULL;
	}
	return log;
}

int ioacct_darshan_trace_merge(struct ioacct_darshan_log *to, struct ioacct_darshan_log *trace)
{
	size_t mlen = strnlen(to->metadata, sizeof(to->metadata));
	size_t tlen = strnlen(trace->metadata, sizeof(trace->metadata));
	int ret = ioacct_darshan_dxt_move(to, trace);

	if (ret)
		return ret;
	for (size_t i = 0, n; i < tlen; i += n) {
		const char *l = trace->metadata + i, *nl = memchr(l, '\n', tlen - i);

		n = nl ? (size_t)(nl - l) + 1 : tlen - i;
		if (!strncmp(l, "trace_", 6) && mlen + n < sizeof(to->metadata)) {
			memcpy(to->metadata + mlen, l, n);
			mlen += n;
			to->metadata[mlen] = '\0';
		}
	}
	return 0;
}

int ioacct_darshan_spool_dir(const char *db_path, char *out, size_t len)
{
	const char *slash = strrchr(db_path, '/');
	int dirlen = slash ? (int)(slash - db_path) : 1;
	int n = snprintf(out, len, "%.*s/trace", dirlen, slash ? db_path : ".");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ioacct_darshan_spool_path(const char *db_path, const char *cluster, uint64_t job_id, char *out,
			      size_t len)
{
	size_t o;
	int n;

	if (!cluster[0] || strchr(cluster, '/') || cluster[0] == '.')
		return -EINVAL;
	if (ioacct_darshan_spool_dir(db_path, out, len))
		return -ENAMETOOLONG;
	o = strlen(out);
	n = snprintf(out + o, len - o, "/%s-%" PRIu64 ".darshan", cluster, job_id);
	return n < 0 || (size_t)n >= len - o ? -ENAMETOOLONG : 0;
}

int ioacct_darshan_dxt_add_call(struct ioacct_darshan_log *log, const char *path, const char *cwd,
				int64_t rank, const char *hostname, bool write, int64_t offset,
				int64_t bytes, uint64_t start_ns, uint64_t dur_ns)
{
	struct ioacct_darshan_dxt_seg seg = {
		.offset = offset, .length = bytes, .start = (double)start_ns / 1e9,
		.end = (double)(start_ns + dur_ns) / 1e9,
	};
	char full[2 * PATH_MAX];

	if (path[0] != '/') {
		snprintf(full, sizeof(full), "%s/%s", cwd, path);
		path = full;
	}
	return ioacct_darshan_dxt_add(log, path, rank, hostname, write, &seg);
}
