/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Darshan log reader (see darshan.h): header, job region, name table,
 * POSIX / MPI-IO / STDIO / H5F / H5D / HEATMAP / DXT_POSIX records, each region bounded
 * and inflated within the log's memory budget. Layouts and conversions
 * follow darshan-log-format.h and darshan-util's per-module readers;
 * docs/darshan.md lists them.
 */
#include "darshan.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Header sizes: 16 module slots up to format 3.21, 64 from 3.41 on. */
#define HEADER_SIZE_OLD 360
#define HEADER_SIZE_341 1328
/* The job struct before the exe: 5 (7 from 3.41) 64-bit fields and the metadata. */
#define JOB_SIZE_OLD (5 * 8 + IOACCT_DARSHAN_METADATA_LEN)
#define JOB_SIZE_341 (7 * 8 + IOACCT_DARSHAN_METADATA_LEN)
/* A HEATMAP record before its bins: id, rank, width, nbins and two pointers. */
#define HEATMAP_HEAD 48
/* deflate cannot compress better than about 1032:1. */
#define INFLATE_RATIO 1032

/* ---- parsing context: bounds, memory budget, the first error ---- */

struct pctx {
	const unsigned char *buf;
	size_t len;
	size_t budget;        /* bytes the log may still allocate */
	bool swap;
	enum ioacct_darshan_comp comp;
	char *err;
	size_t errlen;
};

static int fail(struct pctx *c, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct pctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ioacct_vseterr(c->err, c->errlen, -err, fmt, ap);
	va_end(ap);
	return -err;
}

/* calloc within the budget; NULL means the caller reports the error (ENOMEM or EFBIG). */
static void *budget_alloc(struct pctx *c, size_t n, size_t size, int *why)
{
	void *p;

	if (size && n > SIZE_MAX / size) {
		*why = EFBIG;
		return NULL;
	}
	if (n * size > c->budget) {
		*why = EFBIG;
		return NULL;
	}
	p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		*why = ENOMEM;
		return NULL;
	}
	c->budget -= n * size;
	return p;
}

static void budget_free(struct pctx *c, void *p, size_t bytes)
{
	free(p);
	c->budget += bytes;
}

static int alloc_failed(struct pctx *c, int why, const char *what, size_t bytes)
{
	if (why == EFBIG)
		return fail(c, EFBIG, "%s needs %zu bytes, more than the memory limit allows", what,
			    bytes);
	return fail(c, ENOMEM, "%s: out of memory (%zu bytes)", what, bytes);
}

static uint64_t bswap64(uint64_t v)
{
	return __builtin_bswap64(v);
}

/* A 64-bit word of the log at p (host order of the writer). */
static uint64_t word64(const struct pctx *c, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return c->swap ? bswap64(v) : v;
}

static uint32_t word32(const struct pctx *c, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return c->swap ? __builtin_bswap32(v) : v;
}

static double as_double(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* ---- header ---- */

/* "3.21" -> 3, 21; -1 unless the 8 bytes are digits, a dot, digits and NULs. */
static int parse_version(const unsigned char *v, unsigned int *major, unsigned int *minor)
{
	size_t i = 0;
	unsigned int a = 0, b = 0, nb = 0;

	if (v[0] < '0' || v[0] > '9')
		return -1;
	while (i < 8 && v[i] >= '0' && v[i] <= '9')
		a = a * 10 + (unsigned int)(v[i++] - '0');
	if (i >= 8 || v[i++] != '.')
		return -1;
	while (i < 8 && v[i] >= '0' && v[i] <= '9') {
		b = b * 10 + (unsigned int)(v[i++] - '0');
		nb++;
	}
	if (!nb)
		return -1;
	while (i < 8)
		if (v[i++] != '\0')
			return -1;
	*major = a;
	*minor = b;
	return 0;
}

/*
 * Module id of a header slot: format 3.20 added H5D as id 4 and 3.41
 * PNETCDF_VAR as id 6, shifting the ids above them.
 */
static unsigned int mod_id_of_slot(unsigned int minor, unsigned int slot)
{
	unsigned int id = slot;

	if (minor < 20 && id >= IOACCT_DARSHAN_MOD_H5D)
		id++;
	if (minor < 41 && id >= IOACCT_DARSHAN_MOD_PNETCDF_VAR)
		id++;
	return id;
}

static const char *region_name(unsigned int mod_id, char *buf, size_t len)
{
	const char *n = ioacct_darshan_mod_name(mod_id);

	if (n)
		snprintf(buf, len, "%s module", n);
	else
		snprintf(buf, len, "module %u", mod_id);
	return buf;
}

static int check_region(struct pctx *c, const char *what, const struct ioacct_darshan_region *r,
			size_t header_size)
{
	if (r->len == 0)
		return 0;
	if (r->off < header_size || r->off > c->len || r->len > c->len - r->off)
		return fail(c, EINVAL,
			    "truncated or corrupt: the %s region (offset %" PRIu64 ", %" PRIu64
			    " bytes) does not lie within the file (%zu bytes)",
			    what, r->off, r->len, c->len);
	return 0;
}

static int parse_header(struct pctx *c, struct ioacct_darshan_log *log, size_t *header_size)
{
	unsigned int major, minor, nslots;
	size_t hs, name_at, map_at, ver_at;
	uint64_t magic, partial;
	char what[48];
	int ret;

	if (c->len < 8 || parse_version(c->buf, &major, &minor))
		return fail(c, EINVAL, "not a Darshan log: it does not start with a log format "
			    "version such as \"3.21\"");
	memcpy(log->version, c->buf, 8);
	log->version[7] = '\0';
	if (major > 3 || (major == 3 && minor > 41))
		return fail(c, ENOTSUP, "Darshan log format %s is newer than this reader knows "
			    "(3.10 to 3.41)", log->version);
	if (major < 3 || (minor != 10 && minor != 20 && minor != 21 && minor != 41))
		return fail(c, ENOTSUP, "unsupported Darshan log format version %s: this reader "
			    "reads 3.10 to 3.41 (Darshan 3.1 and later); darshan-convert from a "
			    "Darshan 3 release rewrites a 3.00 log in the newest format",
			    log->version);
	log->minor = minor;
	hs = minor >= 41 ? HEADER_SIZE_341 : HEADER_SIZE_OLD;
	if (c->len < hs)
		return fail(c, EINVAL, "truncated: a format %s header is %zu bytes, the file has %zu",
			    log->version, hs, c->len);
	memcpy(&magic, c->buf + 8, sizeof(magic));
	if (magic == IOACCT_DARSHAN_MAGIC)
		c->swap = false;
	else if (bswap64(magic) == IOACCT_DARSHAN_MAGIC)
		c->swap = true;
	else
		return fail(c, EINVAL, "not a Darshan log: bad magic number %" PRIu64 " (expected %d)",
			    magic, IOACCT_DARSHAN_MAGIC);
	log->swapped = c->swap;
	log->comp = (enum ioacct_darshan_comp)c->buf[16];
	c->comp = log->comp;
	if (minor >= 41) {
		partial = word64(c, c->buf + 24);
		name_at = 32, map_at = 48, ver_at = 1072, nslots = IOACCT_DARSHAN_MAX_MODS;
	} else {
		partial = word32(c, c->buf + 20);
		name_at = 24, map_at = 40, ver_at = 296, nslots = 16;
	}
	log->name_region.off = word64(c, c->buf + name_at);
	log->name_region.len = word64(c, c->buf + name_at + 8);
	for (unsigned int s = 0; s < nslots; s++) {
		unsigned int id = mod_id_of_slot(minor, s);

		if (id >= IOACCT_DARSHAN_MAX_MODS)
			continue;
		log->regions[id].off = word64(c, c->buf + map_at + 16 * s);
		log->regions[id].len = word64(c, c->buf + map_at + 16 * s + 8);
		log->regions[id].version = word32(c, c->buf + ver_at + 4 * s);
		if (partial & (1ULL << s))
			log->partial |= 1ULL << id;
	}

	if (log->comp == IOACCT_DARSHAN_BZIP2)
		return fail(c, ENOTSUP, "this log is bzip2-compressed, which this reader does not "
			    "read: rewrite it with zlib first (darshan-convert IN OUT)");
	if (log->comp != IOACCT_DARSHAN_ZLIB && log->comp != IOACCT_DARSHAN_NOCOMP)
		return fail(c, EINVAL, "corrupt header: unknown compression type %u", c->buf[16]);

	ret = check_region(c, "name table", &log->name_region, hs);
	for (unsigned int id = 0; !ret && id < IOACCT_DARSHAN_MAX_MODS; id++)
		ret = check_region(c, region_name(id, what, sizeof(what)), &log->regions[id], hs);
	if (ret)
		return ret;

	/* The job region has no map: it runs from the header to the next region. */
	log->job_region.off = hs;
	if (log->name_region.off) {
		log->job_region.len = log->name_region.off - hs;
	} else {
		for (unsigned int id = 0; id < IOACCT_DARSHAN_MAX_MODS; id++)
			if (log->regions[id].off) {
				if (log->regions[id].off < hs)
					return fail(c, EINVAL, "corrupt header: a region starts "
						    "inside the header");
				log->job_region.len = log->regions[id].off - hs;
				break;
			}
		if (!log->job_region.len)
			log->job_region.len = c->len - hs;
	}
	if (log->name_region.off && log->name_region.off < hs)
		return fail(c, EINVAL, "corrupt header: the name table starts inside the header");
	if (log->job_region.len == 0)
		return fail(c, EINVAL, "truncated or corrupt: the log has no job region");
	*header_size = hs;
	return check_region(c, "job", &log->job_region, hs);
}

/* ---- regions ---- */

static void *budget_grow(struct pctx *c, void *p, size_t old, size_t size, int *why)
{
	void *q;

	if (size - old > c->budget) {
		*why = EFBIG;
		return NULL;
	}
	q = realloc(p, size);
	if (!q) {
		*why = ENOMEM;
		return NULL;
	}
	c->budget -= size - old;
	return q;
}

/* An uncompressed region: copied, cut at `max` with `cut`, else refused past it. */
static int copy_region(struct pctx *c, const char *what, const struct ioacct_darshan_region *r,
		       size_t max, bool cut, unsigned char **out, size_t *outlen)
{
	size_t n = r->len;
	unsigned char *buf;
	int why = 0;

	if (n > max) {
		if (!cut)
			return fail(c, EFBIG, "the %s region is %zu bytes, more than the "
				    "memory limit allows", what, n);
		n = max;
	}
	buf = budget_alloc(c, n, 1, &why);
	if (!buf)
		return alloc_failed(c, why, what, n);
	memcpy(buf, c->buf + r->off, n);
	*out = buf;
	*outlen = n;
	return 0;
}

/*
 * Inflates the region's zlib streams into *buf (*cap bytes, grown up to
 * `max`), *n of them filled; see load_region(). 0 or fail()'s error.
 */
static int inflate_region(struct pctx *c, const char *what, const struct ioacct_darshan_region *r,
			  size_t max, bool cut, z_stream *zs, unsigned char **buf, size_t *cap,
			  size_t *n)
{
	const unsigned char *in = c->buf + r->off;
	uint64_t in_left = r->len;
	int why = 0, zret;

	for (;;) {
		size_t room;

		if (zs->avail_in == 0 && in_left) {
			uInt chunk = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;

			zs->next_in = (Bytef *)(uintptr_t)(in + (r->len - in_left));
			zs->avail_in = chunk;
			in_left -= chunk;
		}
		if (*n == *cap) {
			size_t ncap;
			unsigned char *nbuf;

			if (*cap == max) {
				if (cut)
					return 0;
				return fail(c, EFBIG, "the %s region inflates to more than %zu bytes "
					    "(the memory limit, or 1032 times its compressed size)",
					    what, max);
			}
			ncap = *cap > max / 2 ? max : *cap * 2;
			nbuf = budget_grow(c, *buf, *cap, ncap, &why);
			if (!nbuf)
				return alloc_failed(c, why, what, ncap);
			*buf = nbuf;
			*cap = ncap;
		}
		room = *cap - *n > UINT32_MAX ? UINT32_MAX : *cap - *n;
		zs->next_out = *buf + *n;
		zs->avail_out = (uInt)room;
		zret = inflate(zs, Z_NO_FLUSH);
		*n += room - zs->avail_out;
		if (zret == Z_STREAM_END) {
			if (zs->avail_in == 0 && in_left == 0)
				return 0;
			/* Another stream follows (another process's data). */
			inflateReset(zs);
			continue;
		}
		if (zret == Z_OK)
			continue;
		if (zret == Z_BUF_ERROR && zs->avail_out > 0 && zs->avail_in == 0 && in_left == 0)
			return fail(c, EINVAL, "truncated or corrupt: the compressed data of the %s "
				    "region ends before its end-of-stream mark", what);
		if (zret == Z_BUF_ERROR)
			continue;
		return fail(c, EINVAL, "corrupt: the %s region does not decompress (zlib: %s)", what,
			    zs->msg ? zs->msg : "error");
	}
}

/*
 * Decompresses a region into a new buffer of at most `max` bytes; the
 * caller frees it with budget_free(c, *out, *outlen). A region may hold
 * several zlib streams one after the other (one per process that wrote
 * it). With `cut`, data past `max` is ignored (the job region, of which
 * Darshan reads 4096 bytes); otherwise it is an error.
 */
static int load_region(struct pctx *c, const char *what, const struct ioacct_darshan_region *r,
		       size_t max, bool cut, unsigned char **out, size_t *outlen)
{
	unsigned char *buf, *shrunk;
	size_t cap, n = 0;
	z_stream zs;
	int why = 0, ret;

	*out = NULL;
	*outlen = 0;
	if (r->len == 0)
		return 0;
	if (c->comp == IOACCT_DARSHAN_NOCOMP)
		return copy_region(c, what, r, max, cut, out, outlen);

	if (r->len < (SIZE_MAX - 1024) / INFLATE_RATIO && max > r->len * INFLATE_RATIO + 1024)
		max = r->len * INFLATE_RATIO + 1024;
	cap = r->len < max / 4 ? r->len * 4 : max;
	if (cap < 4096)
		cap = max < 4096 ? max : 4096;
	buf = budget_alloc(c, cap, 1, &why);
	if (!buf)
		return alloc_failed(c, why, what, cap);
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		budget_free(c, buf, cap);
		return fail(c, ENOMEM, "%s: cannot start zlib", what);
	}
	ret = inflate_region(c, what, r, max, cut, &zs, &buf, &cap, &n);
	inflateEnd(&zs);
	if (ret) {
		budget_free(c, buf, cap);
		return ret;
	}
	shrunk = realloc(buf, n ? n : 1);
	if (shrunk)
		buf = shrunk;
	c->budget += cap - n;
	*out = buf;
	*outlen = n;
	return 0;
}

static char *budget_strndup(struct pctx *c, const char *s, size_t n, int *why)
{
	char *d = budget_alloc(c, n + 1, 1, why);

	if (d)
		memcpy(d, s, n);
	return d;
}

/* ---- job region: job record, exe, mount table ---- */

static int parse_mounts(struct pctx *c, struct ioacct_darshan_log *log, const char *s, size_t len)
{
	const char *end = s + len, *p;
	size_t count = 0, line = 0;
	int why = 0;

	for (p = s; p < end; p++)
		count += *p == '\n';
	if (!count)
		return 0;
	log->mounts = budget_alloc(c, count, sizeof(*log->mounts), &why);
	if (!log->mounts)
		return alloc_failed(c, why, "the mount table", count * sizeof(*log->mounts));
	p = memchr(s, '\n', len);
	while (p && p < end) {
		const char *b = p + 1, *e = memchr(b, '\n', (size_t)(end - b)), *tab;
		struct ioacct_darshan_mount *m;

		if (!e)
			e = end;
		line++;
		p = e;
		if (e == b)
			continue;
		tab = memchr(b, '\t', (size_t)(e - b));
		if (!tab)
			return fail(c, EINVAL, "corrupt job region: mount table line %zu has no tab "
				    "between file-system type and mount point", line);
		m = &log->mounts[log->nmounts];
		m->fstype = budget_strndup(c, b, (size_t)(tab - b), &why);
		m->path = m->fstype ? budget_strndup(c, tab + 1, (size_t)(e - tab - 1), &why) : NULL;
		if (!m->path) {
			if (m->fstype)
				log->nmounts++;
			return alloc_failed(c, why, "the mount table", (size_t)(e - b));
		}
		log->nmounts++;
	}
	return 0;
}

static int parse_job(struct pctx *c, struct ioacct_darshan_log *log)
{
	size_t jsz = log->minor >= 41 ? JOB_SIZE_341 : JOB_SIZE_OLD, n, tlen, elen;
	const unsigned char *p;
	const char *trail, *nl;
	unsigned char *buf;
	int why = 0, ret;

	ret = load_region(c, "job", &log->job_region, IOACCT_DARSHAN_JOB_REGION_MAX, true, &buf,
			  &n);
	if (ret)
		return ret;
	if (n < jsz) {
		budget_free(c, buf, n);
		return fail(c, EINVAL, "truncated or corrupt: the job region holds %zu bytes, a "
			    "format %s job record needs %zu", n, log->version, jsz);
	}
	p = buf;
	log->uid = (int64_t)word64(c, p);
	log->start_sec = (int64_t)word64(c, p + 8);
	p += 16;
	if (log->minor >= 41) {
		log->start_nsec = (int64_t)word64(c, p);
		p += 8;
	}
	log->end_sec = (int64_t)word64(c, p);
	p += 8;
	if (log->minor >= 41) {
		log->end_nsec = (int64_t)word64(c, p);
		p += 8;
	}
	log->nprocs = (int64_t)word64(c, p);
	log->jobid = (int64_t)word64(c, p + 8);
	memcpy(log->metadata, p + 16, IOACCT_DARSHAN_METADATA_LEN);
	log->metadata[IOACCT_DARSHAN_METADATA_LEN - 1] = '\0';

	/* The exe, then "\n<fs type>\t<mount point>" per mount, NUL-terminated. */
	trail = (const char *)buf + jsz;
	tlen = strnlen(trail, n - jsz);
	nl = memchr(trail, '\n', tlen);
	elen = nl ? (size_t)(nl - trail) : tlen;
	log->exe = budget_strndup(c, trail, elen, &why);
	ret = log->exe ? parse_mounts(c, log, trail, tlen) : alloc_failed(c, why, "the exe", elen);
	budget_free(c, buf, n);
	return ret;
}

/* ---- name table ---- */

struct rawname {
	uint64_t id;
	size_t idx;
	const char *name;
	size_t len;
};

static int rawname_cmp(const void *a, const void *b)
{
	const struct rawname *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * A name table (`region`: the log's, or ioacct's own names) into
 * log->names, kept sorted by id; an id already there keeps its name.
 */
static int parse_names(struct pctx *c, struct ioacct_darshan_log *log, const char *what,
		       const struct ioacct_darshan_region *region)
{
	struct ioacct_darshan_name *old = log->names;
	size_t nold = log->nnames, io = 0;
	unsigned char *buf;
	const unsigned char *p, *end;
	struct rawname *raw = NULL;
	size_t n, count = 0, k = 0;
	int why = 0, ret;

	ret = load_region(c, what, region, c->budget, false, &buf, &n);
	if (ret || !n)
		return ret;
	end = buf + n;
	for (p = buf; p < end; count++) {
		const unsigned char *nul;

		if ((size_t)(end - p) < 9) {
			ret = fail(c, EINVAL, "corrupt %s: %zu stray bytes at its end", what,
				   (size_t)(end - p));
			goto out;
		}
		nul = memchr(p + 8, '\0', (size_t)(end - p - 8));
		if (!nul) {
			ret = fail(c, EINVAL, "truncated or corrupt %s: its last name has no end",
				   what);
			goto out;
		}
		p = nul + 1;
	}
	raw = budget_alloc(c, count, sizeof(*raw), &why);
	if (!raw) {
		ret = alloc_failed(c, why, what, count * sizeof(*raw));
		goto out;
	}
	for (p = buf; p < end; k++) {
		raw[k].id = word64(c, p);
		raw[k].idx = k;
		raw[k].name = (const char *)p + 8;
		raw[k].len = strlen(raw[k].name);
		p += 8 + raw[k].len + 1;
	}
	/* Darshan keeps the first name of an id, or the first non-empty one. */
	qsort(raw, count, sizeof(*raw), rawname_cmp);
	log->names = budget_alloc(c, nold + count, sizeof(*log->names), &why);
	if (!log->names) {
		log->names = old;
		ret = alloc_failed(c, why, what, (nold + count) * sizeof(*log->names));
		goto out;
	}
	log->nnames = 0;
	for (size_t i = 0; i < count;) {
		size_t j = i, pick = i;

		while (j < count && raw[j].id == raw[i].id) {
			if (raw[pick].len == 0 && raw[j].len > 0)
				pick = j;
			j++;
		}
		/* The names read before, merged in by id; theirs win. */
		while (io < nold && old[io].id < raw[i].id)
			log->names[log->nnames++] = old[io++];
		i = j;
		if (io < nold && old[io].id == raw[pick].id)
			continue;
		log->names[log->nnames].id = raw[pick].id;
		log->names[log->nnames].name = budget_strndup(c, raw[pick].name, raw[pick].len, &why);
		if (!log->names[log->nnames].name) {
			ret = alloc_failed(c, why, what, raw[pick].len);
			break;
		}
		log->nnames++;
	}
	while (io < nold)
		log->names[log->nnames++] = old[io++];
	budget_free(c, old, nold * sizeof(*old));
out:
	if (raw)
		budget_free(c, raw, count * sizeof(*raw));
	budget_free(c, buf, n);
	return ret;
}

/* ---- POSIX, MPI-IO, STDIO, H5F, H5D records ---- */

/* On-disk size of a record of `kind` in version `ver`; 0 for a version not known. */
static size_t record_size(enum ioacct_darshan_kind kind, uint32_t ver)
{
	static const size_t posix[] = { 0, 680, 648, 664, 704 };
	static const size_t mpiio[] = { 0, 544, 544, 560 };
	static const size_t stdio_[] = { 0, 240, 248 };
	static const size_t h5f[] = { 0, 40, 56, 80 };
	static const size_t h5d[] = { 0, 904, 912 };

	switch (kind) {
	case IOACCT_DARSHAN_POSIX:
		return ver < ARRAY_SIZE(posix) ? posix[ver] : 0;
	case IOACCT_DARSHAN_MPIIO:
		return ver < ARRAY_SIZE(mpiio) ? mpiio[ver] : 0;
	case IOACCT_DARSHAN_STDIO:
		return ver < ARRAY_SIZE(stdio_) ? stdio_[ver] : 0;
	case IOACCT_DARSHAN_H5F:
		return ver < ARRAY_SIZE(h5f) ? h5f[ver] : 0;
	case IOACCT_DARSHAN_H5D:
		return ver < ARRAY_SIZE(h5d) ? h5d[ver] : 0;
	default:
		return 0;
	}
}

/*
 * The floats of a version without F_CLOSE_START / F_OPEN_END (POSIX 1-2,
 * MPI-IO 1-2): those two come after the first three and are -1, unknown.
 */
static void floats_add_close_open(const uint64_t *w, double *f)
{
	for (size_t i = 0; i < 3; i++)
		f[i] = as_double(w[i]);
	f[3] = f[4] = -1;
	for (size_t i = 3; i < 15; i++)
		f[i + 2] = as_double(w[i]);
}

/* An H5F or H5D record (after id and rank), converted to the newest version as darshan-util does. */
static void convert_h5(enum ioacct_darshan_kind kind, uint32_t ver, const uint64_t *w,
		       struct ioacct_darshan_record *r)
{
	if (kind == IOACCT_DARSHAN_H5D) {
		/* Version 2 added the file's record id after the rank; 0 in version 1's. */
		if (ver == 2)
			r->file_id = *w++;
		for (size_t i = 0; i < 94; i++)
			r->counters[i] = (int64_t)w[i];
		for (size_t i = 0; i < 17; i++)
			r->fcounters[i] = as_double(w[94 + i]);
		return;
	}
	/*
	 * Version 3 added FLUSHES and USE_MPIIO after OPENS and F_META_TIME
	 * last, version 2 F_CLOSE_START and F_OPEN_END between version 1's
	 * two timestamps: all -1, unknown, as darshan-util sets them.
	 */
	r->counters[0] = (int64_t)w[0];
	if (ver == 3) {
		r->counters[1] = (int64_t)w[1];
		r->counters[2] = (int64_t)w[2];
		for (size_t i = 0; i < 5; i++)
			r->fcounters[i] = as_double(w[3 + i]);
		return;
	}
	r->counters[1] = r->counters[2] = -1;
	r->fcounters[4] = -1;
	if (ver == 2) {
		for (size_t i = 0; i < 4; i++)
			r->fcounters[i] = as_double(w[1 + i]);
		return;
	}
	r->fcounters[0] = as_double(w[1]);
	r->fcounters[1] = r->fcounters[2] = -1;
	r->fcounters[3] = as_double(w[2]);
}

/*
 * One record, converted to the newest version the way darshan-util does.
 * Returns false for a record it drops (POSIX 1 records with stdio counters).
 */
static bool convert_record(enum ioacct_darshan_kind kind, uint32_t ver, const uint64_t *w,
			   struct ioacct_darshan_record *r)
{
	int64_t v3[64];

	r->id = w[0];
	r->rank = (int64_t)w[1];
	w += 2;
	switch (kind) {
	case IOACCT_DARSHAN_POSIX:
		if (ver == 4) {
			for (size_t i = 0; i < 69; i++)
				r->counters[i] = (int64_t)w[i];
			for (size_t i = 0; i < 17; i++)
				r->fcounters[i] = as_double(w[69 + i]);
			return true;
		}
		if (ver == 1) {
			/* Version 1 had four stdio counters after the first six. */
			if ((int64_t)w[6] > 0)
				return false;
			for (size_t i = 0; i < 6; i++)
				v3[i] = (int64_t)w[i];
			for (size_t i = 10; i < 68; i++)
				v3[i - 4] = (int64_t)w[i];
			floats_add_close_open(w + 68, r->fcounters);
		} else {
			for (size_t i = 0; i < 64; i++)
				v3[i] = (int64_t)w[i];
			if (ver == 2)
				floats_add_close_open(w + 64, r->fcounters);
			else
				for (size_t i = 0; i < 17; i++)
					r->fcounters[i] = as_double(w[64 + i]);
		}
		/*
		 * darshan-util's conversion of versions 2 and 3 loses the floats past
		 * the length it moves: they come out 0 (F_FASTEST_RANK_TIME and
		 * F_SLOWEST_RANK_TIME from version 2, the two variances from 2 and 3).
		 */
		for (size_t i = ver == 2 ? 13 : ver == 3 ? 15 : 17; i < 17; i++)
			r->fcounters[i] = 0;
		/* Version 4 added FILENOS, DUPS (after OPENS) and the rename counters. */
		r->counters[0] = v3[0];
		r->counters[1] = r->counters[2] = -1;
		for (size_t i = 1; i < 8; i++)
			r->counters[i + 2] = v3[i];
		r->counters[10] = r->counters[11] = -1;
		r->counters[12] = 0;
		for (size_t i = 8; i < 64; i++)
			r->counters[i + 5] = v3[i];
		return true;
	case IOACCT_DARSHAN_MPIIO:
		for (size_t i = 0; i < 51; i++)
			r->counters[i] = (int64_t)w[i];
		if (ver == 3)
			for (size_t i = 0; i < 17; i++)
				r->fcounters[i] = as_double(w[51 + i]);
		else
			floats_add_close_open(w + 51, r->fcounters);
		return true;
	case IOACCT_DARSHAN_STDIO:
		if (ver == 2) {
			for (size_t i = 0; i < 14; i++)
				r->counters[i] = (int64_t)w[i];
			for (size_t i = 0; i < 15; i++)
				r->fcounters[i] = as_double(w[14 + i]);
			return true;
		}
		/* Version 2 added FDOPENS after OPENS. */
		r->counters[0] = (int64_t)w[0];
		r->counters[1] = -1;
		for (size_t i = 1; i < 13; i++)
			r->counters[i + 1] = (int64_t)w[i];
		for (size_t i = 0; i < 15; i++)
			r->fcounters[i] = as_double(w[13 + i]);
		return true;
	case IOACCT_DARSHAN_H5F:
	case IOACCT_DARSHAN_H5D:
		convert_h5(kind, ver, w, r);
		return true;
	default:
		return false;
	}
}

/* The records of `kind` in region r into *out (*nout of them). */
static int read_records(struct pctx *c, enum ioacct_darshan_kind kind, const char *what,
			const struct ioacct_darshan_region *r, struct ioacct_darshan_record **out,
			size_t *nout)
{
	const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kind);
	size_t rsz = record_size(kind, r->version), n, count;
	/* id, rank, an H5D record's file id, the counters. */
	uint64_t w[3 + IOACCT_DARSHAN_MAX_COUNTERS + IOACCT_DARSHAN_MAX_FCOUNTERS];
	unsigned char *buf;
	int why = 0, ret;

	if (r->len == 0)
		return 0;
	if (!rsz)
		return fail(c, r->version > mi->version ? ENOTSUP : EINVAL,
			    "the %s records are version %u; this reader knows versions 1 to %u",
			    mi->name, r->version, mi->version);
	ret = load_region(c, what, r, c->budget, false, &buf, &n);
	if (ret)
		return ret;
	if (n % rsz) {
		ret = fail(c, EINVAL, "truncated or corrupt: the %s region holds %zu bytes, not a "
			   "whole number of %zu-byte version %u records", what, n, rsz,
			   r->version);
		goto out;
	}
	count = n / rsz;
	*out = budget_alloc(c, count, sizeof(struct ioacct_darshan_record), &why);
	if (!*out) {
		ret = alloc_failed(c, why, what, count * sizeof(struct ioacct_darshan_record));
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		for (size_t k = 0; k < rsz / 8; k++)
			w[k] = word64(c, buf + i * rsz + 8 * k);
		if (convert_record(kind, r->version, w, &(*out)[*nout]))
			(*nout)++;
	}
out:
	budget_free(c, buf, n);
	return ret;
}

static int parse_records(struct pctx *c, struct ioacct_darshan_log *log,
			 enum ioacct_darshan_kind kind)
{
	const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kind);
	char what[48];

	snprintf(what, sizeof(what), "%s module", mi->name);
	return read_records(c, kind, what, &log->regions[mi->mod_id], &log->recs[kind],
			    &log->nrecs[kind]);
}

/*
 * ioacct's own records (darshan.h): found by the trailer at the end of the
 * file, which a log of Darshan's never has; their regions lie between the
 * header and the trailer, their records are POSIX ones.
 */
/* The number of ioacct's own records the metadata says the log has; 0 when it says none. */
static unsigned long long own_said(const struct ioacct_darshan_log *log)
{
	size_t len = strnlen(log->metadata, sizeof(log->metadata)), klen;
	const char *k = IOACCT_DARSHAN_OWN_META;
	char num[24];

	klen = strlen(k);
	for (size_t i = 0, n; i < len; i += n) {
		const char *l = log->metadata + i, *nl = memchr(l, '\n', len - i);

		n = nl ? (size_t)(nl - l) + 1 : len - i;
		if (n > klen && !strncmp(l, k, klen)) {
			snprintf(num, sizeof(num), "%.*s", (int)(n - klen), l + klen);
			return strtoull(num, NULL, 10);
		}
	}
	return 0;
}

static int parse_own(struct pctx *c, struct ioacct_darshan_log *log, size_t header_size)
{
	const unsigned char *t = c->buf + c->len - IOACCT_DARSHAN_OWN_TRAILER;
	unsigned long long said = own_said(log);
	struct ioacct_darshan_region names, recs;
	size_t len = c->len;
	uint64_t ver;
	int ret;

	if (c->len < header_size + IOACCT_DARSHAN_OWN_TRAILER ||
	    memcmp(t, IOACCT_DARSHAN_OWN_MAGIC, 8) != 0) {
		if (said)
			return fail(c, EINVAL, "truncated or corrupt: the log says it has %llu records "
				    "of ioacct's own, and the trailer that finds them is not at its "
				    "end", said);
		return 0;
	}
	names = (struct ioacct_darshan_region){ .off = word64(c, t + 8), .len = word64(c, t + 16) };
	recs = (struct ioacct_darshan_region){ .off = word64(c, t + 24), .len = word64(c, t + 32) };
	ver = word64(c, t + 40);
	recs.version = ver <= UINT32_MAX ? (uint32_t)ver : 0;
	/* Nothing of theirs lies in the trailer. */
	c->len -= IOACCT_DARSHAN_OWN_TRAILER;
	ret = check_region(c, "ioacct names", &names, header_size);
	if (!ret)
		ret = check_region(c, "ioacct records", &recs, header_size);
	if (!ret && recs.len && !record_size(IOACCT_DARSHAN_POSIX, recs.version))
		ret = fail(c, EINVAL, "corrupt: ioacct's own records are of POSIX record version "
			   "%" PRIu64 ", not one this reader knows", ver);
	if (!ret)
		ret = parse_names(c, log, "ioacct names", &names);
	if (!ret)
		ret = read_records(c, IOACCT_DARSHAN_POSIX, "ioacct records", &recs, &log->own,
				   &log->nown);
	if (!ret && said && log->nown != said)
		ret = fail(c, EINVAL, "corrupt: the log says it has %llu records of ioacct's own, "
			   "and holds %zu", said, log->nown);
	c->len = len;
	return ret;
}

/* ---- HEATMAP records ---- */

static int parse_heatmaps(struct pctx *c, struct ioacct_darshan_log *log)
{
	const struct ioacct_darshan_region *r = &log->regions[IOACCT_DARSHAN_MOD_HEATMAP];
	unsigned char *buf;
	size_t n, off, count = 0;
	int64_t first_nbins = 0;
	double first_width = 0;
	int why = 0, ret;

	if (r->len == 0)
		return 0;
	if (r->version != 1)
		return fail(c, r->version > 1 ? ENOTSUP : EINVAL, "the HEATMAP records are version "
			    "%u; this reader knows version 1", r->version);
	ret = load_region(c, "HEATMAP module", r, c->budget, false, &buf, &n);
	if (ret)
		return ret;
	for (off = 0; off < n; count++) {
		int64_t nbins;
		double width;

		if (n - off < HEATMAP_HEAD) {
			ret = fail(c, EINVAL, "truncated or corrupt: HEATMAP record %zu is cut short "
				   "(%zu bytes left, its head alone is %d)", count + 1, n - off,
				   HEATMAP_HEAD);
			goto out;
		}
		width = as_double(word64(c, buf + off + 16));
		nbins = (int64_t)word64(c, buf + off + 24);
		if (nbins < 0 || (uint64_t)nbins > (n - off - HEATMAP_HEAD) / 16) {
			ret = fail(c, EINVAL, "truncated or corrupt: HEATMAP record %zu claims %" PRId64
				   " bins, more than the %zu bytes left hold", count + 1, nbins,
				   n - off - HEATMAP_HEAD);
			goto out;
		}
		if (!isfinite(width) || width <= 0) {
			ret = fail(c, EINVAL, "corrupt: HEATMAP record %zu has a bin width of %g s",
				   count + 1, width);
			goto out;
		}
		off += HEATMAP_HEAD + 16 * (size_t)nbins;
	}
	log->heatmaps = budget_alloc(c, count, sizeof(*log->heatmaps), &why);
	if (!log->heatmaps) {
		ret = alloc_failed(c, why, "the HEATMAP records", count * sizeof(*log->heatmaps));
		goto out;
	}
	for (off = 0; off < n; log->nheatmaps++) {
		struct ioacct_darshan_heatmap *h = &log->heatmaps[log->nheatmaps];
		const unsigned char *p = buf + off;
		size_t nb = (size_t)word64(c, p + 24), keep = nb;

		h->id = word64(c, p);
		h->rank = (int64_t)word64(c, p + 8);
		h->bin_width = as_double(word64(c, p + 16));
		off += HEATMAP_HEAD + 16 * nb;
		if (!first_nbins)
			first_nbins = (int64_t)nb;
		if (first_width == 0)
			first_width = h->bin_width;
		/*
		 * darshan-util evens out records one bin longer or shorter than
		 * the first (clock skew in Darshan 3.4.0 to 3.4.3).
		 */
		if (h->bin_width == first_width && (int64_t)nb == first_nbins + 1)
			keep = nb - 1;
		else if (h->bin_width == first_width && (int64_t)nb == first_nbins - 1)
			keep = nb + 1;
		h->nbins = keep;
		h->write_bins = budget_alloc(c, keep, sizeof(int64_t), &why);
		h->read_bins = h->write_bins ? budget_alloc(c, keep, sizeof(int64_t), &why) : NULL;
		if (!h->read_bins) {
			log->nheatmaps++;
			ret = alloc_failed(c, why, "the HEATMAP bins", 2 * keep * sizeof(int64_t));
			goto out;
		}
		for (size_t i = 0; i < nb && i < keep; i++) {
			h->write_bins[i] = (int64_t)word64(c, p + HEATMAP_HEAD + 8 * i);
			h->read_bins[i] = (int64_t)word64(c, p + HEATMAP_HEAD + 8 * (nb + i));
		}
	}
out:
	budget_free(c, buf, n);
	return ret;
}

/* ---- DXT_POSIX records (darshan-dxt-log-format.h) ---- */

static void read_segs(const struct pctx *c, const unsigned char *p, uint64_t n,
		      struct ioacct_darshan_dxt_seg *out)
{
	for (uint64_t i = 0; i < n; i++, p += IOACCT_DARSHAN_DXT_SEG) {
		out[i].offset = (int64_t)word64(c, p);
		out[i].length = (int64_t)word64(c, p + 8);
		out[i].start = as_double(word64(c, p + 16));
		out[i].end = as_double(word64(c, p + 24));
	}
}

static int parse_dxt(struct pctx *c, struct ioacct_darshan_log *log)
{
	const struct ioacct_darshan_region *r = &log->regions[IOACCT_DARSHAN_MOD_DXT_POSIX];
	unsigned char *buf;
	size_t n, off, count = 0;
	int why = 0, ret;

	if (r->len == 0)
		return 0;
	if (r->version != 1)
		return fail(c, r->version > 1 ? ENOTSUP : EINVAL, "the DXT_POSIX records are "
			    "version %u; this reader knows version 1", r->version);
	ret = load_region(c, "DXT_POSIX module", r, c->budget, false, &buf, &n);
	if (ret)
		return ret;
	/* First pass: check every record's counts against the bytes left. */
	for (off = 0; off < n; count++) {
		const unsigned char *p = buf + off;
		uint64_t nw, nr, left;

		if (n - off < IOACCT_DARSHAN_DXT_HEAD) {
			ret = fail(c, EINVAL, "truncated or corrupt: DXT_POSIX record %zu is cut "
				   "short (%zu bytes left, its head alone is %d)", count + 1,
				   n - off, IOACCT_DARSHAN_DXT_HEAD);
			goto out;
		}
		nw = word64(c, p + IOACCT_DARSHAN_DXT_HEAD - 16);
		nr = word64(c, p + IOACCT_DARSHAN_DXT_HEAD - 8);
		left = (n - off - IOACCT_DARSHAN_DXT_HEAD) / IOACCT_DARSHAN_DXT_SEG;
		if (nw > left || nr > left - nw) {
			ret = fail(c, EINVAL, "truncated or corrupt: DXT_POSIX record %zu claims %"
				   PRId64 " write and %" PRId64 " read segments, more than the %zu "
				   "bytes left hold", count + 1, (int64_t)nw, (int64_t)nr,
				   n - off - IOACCT_DARSHAN_DXT_HEAD);
			goto out;
		}
		off += IOACCT_DARSHAN_DXT_HEAD + IOACCT_DARSHAN_DXT_SEG * (size_t)(nw + nr);
	}
	log->dxt = budget_alloc(c, count, sizeof(*log->dxt), &why);
	if (!log->dxt) {
		ret = alloc_failed(c, why, "the DXT_POSIX records", count * sizeof(*log->dxt));
		goto out;
	}
	for (off = 0; off < n; log->ndxt++) {
		struct ioacct_darshan_dxt *d = &log->dxt[log->ndxt];
		const unsigned char *p = buf + off;

		d->id = word64(c, p);
		d->rank = (int64_t)word64(c, p + 8);
		d->shared_record = (int64_t)word64(c, p + 16);
		memcpy(d->hostname, p + 24, sizeof(d->hostname));
		d->hostname[sizeof(d->hostname) - 1] = '\0';
		d->nwrites = word64(c, p + IOACCT_DARSHAN_DXT_HEAD - 16);
		d->nreads = word64(c, p + IOACCT_DARSHAN_DXT_HEAD - 8);
		off += IOACCT_DARSHAN_DXT_HEAD + IOACCT_DARSHAN_DXT_SEG * (size_t)(d->nwrites +
									    d->nreads);
		d->writes = budget_alloc(c, d->nwrites, sizeof(*d->writes), &why);
		d->reads = d->writes ? budget_alloc(c, d->nreads, sizeof(*d->reads), &why) : NULL;
		if (!d->reads) {
			log->ndxt++;
			ret = alloc_failed(c, why, "the DXT_POSIX segments",
					   (size_t)(d->nwrites + d->nreads) * sizeof(*d->writes));
			goto out;
		}
		read_segs(c, p + IOACCT_DARSHAN_DXT_HEAD, d->nwrites, d->writes);
		read_segs(c, p + IOACCT_DARSHAN_DXT_HEAD + IOACCT_DARSHAN_DXT_SEG * d->nwrites,
			  d->nreads, d->reads);
	}
out:
	budget_free(c, buf, n);
	return ret;
}

/* ---- the whole log ---- */

struct ioacct_darshan_log *ioacct_darshan_parse(const void *buf, size_t len, size_t max_mem,
						char *err, size_t errlen)
{
	struct pctx c = {
		.buf = buf,
		.len = len,
		.budget = max_mem ? max_mem : IOACCT_DARSHAN_MEM_MAX,
		.err = err,
		.errlen = errlen,
	};
	struct ioacct_darshan_log *log = calloc(1, sizeof(*log));
	size_t hs = 0;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!log) {
		fail(&c, ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ret = parse_header(&c, log, &hs);
	if (!ret)
		ret = parse_job(&c, log);
	if (!ret)
		ret = parse_names(&c, log, "name table", &log->name_region);
	for (int k = 0; !ret && k < IOACCT_DARSHAN_NKINDS; k++)
		ret = parse_records(&c, log, (enum ioacct_darshan_kind)k);
	if (!ret)
		ret = parse_heatmaps(&c, log);
	if (!ret)
		ret = parse_dxt(&c, log);
	if (!ret)
		ret = parse_own(&c, log, hs);
	if (ret) {
		ioacct_darshan_free(log);
		errno = -ret;
		return NULL;
	}
	return log;
}

struct ioacct_darshan_log *ioacct_darshan_read(const char *path, char *err, size_t errlen)
{
	struct ioacct_darshan_log *log = NULL;
	unsigned char *buf = NULL;
	char msg[512];
	struct stat st;
	size_t got = 0;
	int fd, e = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		snprintf(err, errlen, "%s is not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > IOACCT_DARSHAN_MEM_MAX / 2) {
		e = EFBIG;
		snprintf(err, errlen, "%s: %lld bytes, too big a Darshan log for this reader",
			 path, (long long)st.st_size);
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		e = ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			snprintf(err, errlen, "cannot read %s: %s", path,
				 n < 0 ? strerror(e) : "file shrank while read");
			goto out;
		}
		got += (size_t)n;
	}
	log = ioacct_darshan_parse(buf, got, IOACCT_DARSHAN_MEM_MAX - got, msg, sizeof(msg));
	if (!log) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, msg);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	if (!log)
		errno = e;
	return log;
}

void ioacct_darshan_free(struct ioacct_darshan_log *log)
{
	if (!log)
		return;
	free(log->exe);
	for (size_t i = 0; i < log->nmounts; i++) {
		free(log->mounts[i].path);
		free(log->mounts[i].fstype);
	}
	free(log->mounts);
	for (size_t i = 0; i < log->nnames; i++)
		free(log->names[i].name);
	free(log->names);
	for (int k = 0; k < IOACCT_DARSHAN_NKINDS; k++)
		free(log->recs[k]);
	free(log->own);
	for (size_t i = 0; i < log->nheatmaps; i++) {
		free(log->heatmaps[i].read_bins);
		free(log->heatmaps[i].write_bins);
	}
	free(log->heatmaps);
	for (size_t i = 0; i < log->ndxt; i++) {
		free(log->dxt[i].writes);
		free(log->dxt[i].reads);
	}
	free(log->dxt);
	free(log);
}
