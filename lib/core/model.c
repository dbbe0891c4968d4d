/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "model.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
	const char *name, *plural, *upper;
	enum ioacct_op_kind kind;
} ops[IOACCT_OP_COUNT] = {
#define OP(NAME, num, name, kind, ...) \
	[num] = { #name, #name "s", #NAME, IOACCT_OPK_##kind },
	IOACCT_OPS(OP)
#undef OP
};

/* Numbers 0 .. IOACCT_OP_COUNT - 1, each once: a gap would leave a row empty. */
#define OP_CHECK(NAME, num, ...) +(1 << (num))
_Static_assert((0 IOACCT_OPS(OP_CHECK)) == (1 << IOACCT_OP_COUNT) - 1,
	       "IOACCT_OPS numbers its operations 0, 1, 2, ... without a gap or a repeat");
#undef OP_CHECK

static const uint64_t size_limits[IOACCT_NR_SIZE_BINS] = {
	IOACCT_SIZE_LIMIT_0, IOACCT_SIZE_LIMIT_1, IOACCT_SIZE_LIMIT_2, IOACCT_SIZE_LIMIT_3,
	IOACCT_SIZE_LIMIT_4, IOACCT_SIZE_LIMIT_5, IOACCT_SIZE_LIMIT_6, IOACCT_SIZE_LIMIT_7,
	IOACCT_SIZE_LIMIT_8, UINT64_MAX,
};

static const char *const size_names[IOACCT_NR_SIZE_BINS] = {
	"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M",
	"1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS",
};

static const char *const err_class_names[IOACCT_NR_ERR_CLASSES] = {
	[IOACCT_ERR_NOTFOUND] = "notfound", [IOACCT_ERR_ACCESS] = "access",
	[IOACCT_ERR_SPACE] = "space",       [IOACCT_ERR_IO] = "io",
	[IOACCT_ERR_OTHER] = "other",
};

const char *ioacct_err_class_name(unsigned int cls)
{
	return cls < IOACCT_NR_ERR_CLASSES ? err_class_names[cls] : NULL;
}

uint64_t ioacct_counters_real_errors(const struct ioacct_counters *c)
{
	uint64_t nf = c->errclass[IOACCT_ERR_NOTFOUND];

	return c->errors >= nf ? c->errors - nf : 0;
}

uint64_t ioacct_counters_unclassified(const struct ioacct_counters *c)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		sum += c->errclass[i];
	return c->errors >= sum ? c->errors - sum : 0;
}

const char *ioacct_op_name(unsigned int op)
{
	return op < IOACCT_OP_COUNT ? ops[op].name : NULL;
}

const char *ioacct_op_plural(unsigned int op)
{
	return op < IOACCT_OP_COUNT ? ops[op].plural : NULL;
}

const char *ioacct_op_upper(unsigned int op)
{
	return op < IOACCT_OP_COUNT ? ops[op].upper : NULL;
}

int ioacct_op_from_name(const char *name)
{
	for (unsigned int i = 0; i < IOACCT_OP_COUNT; i++)
		if (strcmp(name, ops[i].name) == 0)
			return (int)i;
	return -1;
}

enum ioacct_op_kind ioacct_op_kind(unsigned int op)
{
	return op < IOACCT_OP_COUNT ? ops[op].kind : IOACCT_OPK_MARK;
}

bool ioacct_op_is_data(unsigned int op)
{
	return op < IOACCT_OP_COUNT && ops[op].kind == IOACCT_OPK_DATA;
}

unsigned int ioacct_size_bin(uint64_t size)
{
	unsigned int i = 0;

	while (i < IOACCT_NR_SIZE_BINS - 1 && size > size_limits[i])
		i++;
	return i;
}

const char *ioacct_size_bin_name(unsigned int bin)
{
	return bin < IOACCT_NR_SIZE_BINS ? size_names[bin] : NULL;
}

uint64_t ioacct_size_bin_limit(unsigned int bin)
{
	return bin < IOACCT_NR_SIZE_BINS ? size_limits[bin] : 0;
}

uint32_t ioacct_bin_shift(int64_t start_ns, int64_t origin_ns, uint64_t width_ns, uint64_t *skew_ns)
{
	uint64_t d, shift;

	if (start_ns <= origin_ns) {
		*skew_ns = start_ns < origin_ns ? (uint64_t)origin_ns - (uint64_t)start_ns : 0;
		return 0;
	}
	/* Unsigned: the distance between any two int64_t fits. */
	d = (uint64_t)start_ns - (uint64_t)origin_ns;
	shift = width_ns ? d / width_ns : 0;
	if (!width_ns || shift > IOACCT_BIN_SHIFT_MAX) {
		*skew_ns = d;
		return 0;
	}
	*skew_ns = d % width_ns;
	return (uint32_t)shift;
}

void ioacct_counters_add(struct ioacct_counters *dst, const struct ioacct_counters *src)
{
	dst->bytes += src->bytes;
	dst->calls += src->calls;
	dst->errors += src->errors;
	dst->ns += src->ns;
	for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		dst->size_hist[i] += src->size_hist[i];
	for (unsigned int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		dst->errclass[i] += src->errclass[i];
}

bool ioacct_counters_is_zero(const struct ioacct_counters *c)
{
	static const struct ioacct_counters zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
}

uint32_t ioacct_bin_of(uint64_t start_ns, uint64_t width_ns, uint64_t t_ns)
{
	uint64_t b;

	if (t_ns <= start_ns || width_ns == 0)
		return 0;
	b = (t_ns - start_ns) / width_ns;
	return b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
}

const char *ioacct_step_name(uint32_t step_id, char *buf, size_t len)
{
	switch (step_id) {
	case IOACCT_STEP_BATCH:
		snprintf(buf, len, "batch");
		break;
	case IOACCT_STEP_EXTERN:
		snprintf(buf, len, "extern");
		break;
	case IOACCT_STEP_INTERACTIVE:
		snprintf(buf, len, "interactive");
		break;
	default:
		snprintf(buf, len, "%u", step_id);
	}
	return buf;
}

int ioacct_step_parse(const char *s, uint32_t *step_id)
{
	char *end;
	unsigned long v;

	if (strcmp(s, "batch") == 0) {
		*step_id = IOACCT_STEP_BATCH;
		return 0;
	}
	if (strcmp(s, "extern") == 0) {
		*step_id = IOACCT_STEP_EXTERN;
		return 0;
	}
	if (strcmp(s, "interactive") == 0) {
		*step_id = IOACCT_STEP_INTERACTIVE;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*step_id = (uint32_t)v;
	return 0;
}

void ioacct_samples_sum(const struct ioacct_sample *s, size_t n, uint32_t step_id,
			uint64_t mnt_id, uint32_t op, struct ioacct_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (step_id != UINT32_MAX && s[i].step_id != step_id)
			continue;
		if (mnt_id != IOACCT_MNT_ANY && s[i].mnt_id != mnt_id)
			continue;
		if (op != UINT32_MAX && s[i].op != op)
			continue;
		ioacct_counters_add(out, &s[i].c);
	}
}

double ioacct_hit_ratio(uint64_t read_bytes, uint64_t miss_bytes)
{
	if (!read_bytes)
		return -1;
	if (miss_bytes >= read_bytes)
		return 0;
	return 1.0 - (double)miss_bytes / (double)read_bytes;
}

const char *ioacct_probe_views(const char *probe_mode)
{
	const char *v = strstr(probe_mode, " views=");

	return v ? v + 7 : NULL;
}

bool ioacct_probe_has_view(const char *probe_mode, const char *view)
{
	const char *v = ioacct_probe_views(probe_mode);
	size_t n = strlen(view);

	/* The list ends at the string's end or at a space: a later word (rpc=, issue 40) is not a view. */
	for (; v && *v && *v != ' '; v += strcspn(v, ", ") + (v[strcspn(v, ", ")] == ',')) {
		if (!strncmp(v, view, n) && (v[n] == ',' || v[n] == ' ' || v[n] == '\0'))
			return true;
	}
	return false;
}

const char *ioacct_probe_mmap_unmeasured(const char *probe_mode)
{
	if (!ioacct_probe_views(probe_mode) || ioacct_probe_has_view(probe_mode, "mmap"))
		return NULL;
	if (ioacct_probe_has_view(probe_mode, "mmap-nohook"))
		return "no fentry nor kprobe reached set_pte_range, do_set_pte or do_set_pmd on this kernel";
	return "the mmap view was off: views = in ioacct.conf, or the kernel refused it";
}

const char *ioacct_probe_rpc(const char *probe_mode, char *buf, size_t len)
{
	const char *w = strncmp(probe_mode, "rpc=", 4) ? strstr(probe_mode, " rpc=") : probe_mode - 1;

	if (!w || !len)
		return NULL;
	w += 5;
	snprintf(buf, len, "%.*s", (int)strcspn(w, " "), w);
	return buf;
}

const char *ioacct_probe_backend(const char *probe_mode, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(probe_mode, " "), probe_mode);
	return buf;
}

bool ioacct_probe_files_off(const char *probe_mode)
{
	size_t n = strcspn(probe_mode, " ");

	return !strncmp(probe_mode + n, " " IOACCT_PROBE_FILES_OFF,
			sizeof(IOACCT_PROBE_FILES_OFF)) &&
	       (probe_mode[n + sizeof(IOACCT_PROBE_FILES_OFF)] == ' ' ||
		probe_mode[n + sizeof(IOACCT_PROBE_FILES_OFF)] == '\0');
}

void ioacct_cmdline_join(char *dst, size_t len, int argc, char *const argv[])
{
	size_t n = 0, cut = sizeof(IOACCT_CMDLINE_CUT); /* with its NUL */
	bool short_of_room = false;

	if (len == 0)
		return;
	for (int i = 0; (argc < 0 || i < argc) && argv[i] && !short_of_room; i++) {
		const unsigned char *p = (const unsigned char *)argv[i];

		if (i && n + 1 < len)
			dst[n++] = ' ';
		else if (i)
			short_of_room = true;
		while (*p && !short_of_room) {
			bool valid;
			size_t k = ioacct_utf8_seq(p, &valid);
			const char *put = valid ? (const char *)p : IOACCT_UTF8_REPLACEMENT;
			size_t m = valid ? k : sizeof(IOACCT_UTF8_REPLACEMENT) - 1;

			/* A control character would end the exe's line: a space. */
			if (valid && k == 1 && (*p < 0x20 || *p == 0x7f))
				put = " ";
			short_of_room = n + m >= len;
			if (!short_of_room) {
				memcpy(dst + n, put, m);
				n += m;
				p += k;
			}
		}
	}
	dst[n] = '\0';
	/* Cut short: said at the end, as Darshan says it, when there is room for it. */
	if (short_of_room && len >= 2 * cut) {
		n = len - cut;
		/* Not in the middle of a character. */
		while (n > 0 && ((unsigned char)dst[n] & 0xc0) == 0x80)
			n--;
		memcpy(dst + n, IOACCT_CMDLINE_CUT, cut);
	}
}

int ioacct_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n;

	if (len == 0)
		return -ENAMETOOLONG;
	n = strnlen(src, len);
	if (n == len) {
		memcpy(dst, src, len - 1);
		dst[len - 1] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

void ioacct_file_access_add(struct ioacct_file *f, uint64_t size, uint64_t count)
{
	uint64_t sz[IOACCT_FILE_ACCESSES + 1], cnt[IOACCT_FILE_ACCESSES + 1];
	size_t n = 0, i;

	if (!size || !count)
		return;
	for (i = 0; i < IOACCT_FILE_ACCESSES && f->access_count[i]; i++) {
		if (f->access[i] == size)
			count += f->access_count[i];
		else {
			sz[n] = f->access[i];
			cnt[n++] = f->access_count[i];
		}
	}
	/* The others are in order already: the new one goes before the first it beats. */
	for (i = 0; i < n && (cnt[i] > count || (cnt[i] == count && sz[i] > size)); i++)
		;
	memmove(&sz[i + 1], &sz[i], (n - i) * sizeof(sz[0]));
	memmove(&cnt[i + 1], &cnt[i], (n - i) * sizeof(cnt[0]));
	sz[i] = size;
	cnt[i] = count;
	n++;
	for (i = 0; i < IOACCT_FILE_ACCESSES; i++) {
		f->access[i] = i < n ? sz[i] : 0;
		f->access_count[i] = i < n ? cnt[i] : 0;
	}
}

/* Earliest of two times from the job's start, -1 meaning none. */
static int64_t time_first(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	return b < 0 || a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

void ioacct_file_add(struct ioacct_file *dst, const struct ioacct_file *src)
{
	dst->opens += src->opens;
	dst->reads += src->reads;
	dst->writes += src->writes;
	dst->stats += src->stats;
	dst->fsyncs += src->fsyncs;
	dst->seeks += src->seeks;
	dst->bytes_read += src->bytes_read;
	dst->bytes_written += src->bytes_written;
	dst->read_ns += src->read_ns;
	dst->write_ns += src->write_ns;
	dst->meta_ns += src->meta_ns;
	dst->max_byte_read = max64(dst->max_byte_read, src->max_byte_read);
	dst->max_byte_written = max64(dst->max_byte_written, src->max_byte_written);
	dst->seq_reads += src->seq_reads;
	dst->seq_writes += src->seq_writes;
	dst->consec_reads += src->consec_reads;
	dst->consec_writes += src->consec_writes;
	dst->rw_switches += src->rw_switches;
	dst->first_read_ns = time_first(dst->first_read_ns, src->first_read_ns);
	dst->first_write_ns = time_first(dst->first_write_ns, src->first_write_ns);
	dst->last_read_ns = max64(dst->last_read_ns, src->last_read_ns);
	dst->last_write_ns = max64(dst->last_write_ns, src->last_write_ns);
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		dst->size_read[b] += src->size_read[b];
		dst->size_written[b] += src->size_written[b];
	}
	dst->mmap_bytes += src->mmap_bytes;
	dst->cache_miss_bytes += src->cache_miss_bytes;
	for (unsigned int i = 0; i < IOACCT_FILE_ACCESSES; i++)
		ioacct_file_access_add(dst, src->access[i], src->access_count[i]);
}

void ioacct_mpiio_add(struct ioacct_mpiio *dst, const struct ioacct_mpiio *src)
{
#define MPIIO_ADD(name) dst->name += src->name;
	IOACCT_MPIIO_COUNTERS(MPIIO_ADD)
#undef MPIIO_ADD
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		dst->size_read[b] += src->size_read[b];
		dst->size_written[b] += src->size_written[b];
	}
}

/*
 * The node part last: the order before it stays the order a client older
 * than it checks, and a job of one node (part 0 alone) is as before.
 */
static int part_cmp(uint32_t a, uint32_t b)
{
	return a == b ? 0 : a < b ? -1 : 1;
}

int ioacct_mpiio_key_cmp(const struct ioacct_mpiio *a, const struct ioacct_mpiio *b)
{
	int64_t x[] = { a->step_id, a->rank, a->pid };
	int64_t y[] = { b->step_id, b->rank, b->pid };
	int c;

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	c = strcmp(a->path, b->path);
	return c ? c : part_cmp(a->part, b->part);
}

/* A span of calls (first start, last end; 0 none) widened by another's. */
static void h5_span(uint64_t *start, uint64_t *end, uint64_t s, uint64_t e)
{
	if (s && (!*start || s < *start))
		*start = s;
	if (e > *end)
		*end = e;
}

void ioacct_h5rec_add(struct ioacct_h5rec *dst, const struct ioacct_h5rec *src)
{
	uint64_t npoints = dst->npoints_max > src->npoints_max ? dst->npoints_max : src->npoints_max;
	uint64_t dtsize = dst->datatype_size ? dst->datatype_size : src->datatype_size;

#define H5_ADD(name) dst->name += src->name;
	IOACCT_H5_COUNTS(H5_ADD)
#undef H5_ADD
	dst->npoints_max = npoints;
	dst->datatype_size = dtsize;
	h5_span(&dst->open_start_ns, &dst->open_end_ns, src->open_start_ns, src->open_end_ns);
	h5_span(&dst->read_start_ns, &dst->read_end_ns, src->read_start_ns, src->read_end_ns);
	h5_span(&dst->write_start_ns, &dst->write_end_ns, src->write_start_ns, src->write_end_ns);
	h5_span(&dst->close_start_ns, &dst->close_end_ns, src->close_start_ns, src->close_end_ns);
	if (src->max_read_ns > dst->max_read_ns) {
		dst->max_read_ns = src->max_read_ns;
		dst->max_read_size = src->max_read_size;
	}
	if (src->max_write_ns > dst->max_write_ns) {
		dst->max_write_ns = src->max_write_ns;
		dst->max_write_size = src->max_write_size;
	}
	if (src->dataspace_ndims) {
		dst->dataspace_ndims = src->dataspace_ndims;
		dst->dataspace_npoints = src->dataspace_npoints;
	}
	dst->use_mpiio |= src->use_mpiio;
	dst->use_mpiio_collective |= src->use_mpiio_collective;
	dst->regular_hyperslab_selects += src->regular_hyperslab_selects;
	dst->irregular_hyperslab_selects += src->irregular_hyperslab_selects;
	dst->point_selects += src->point_selects;
	dst->unknown_selects += src->unknown_selects;
	if (src->chunk_known) {
		dst->chunk_known = 1;
		dst->chunk_size_d1 = src->chunk_size_d1;
		dst->chunk_size_d2 = src->chunk_size_d2;
		dst->chunk_size_d3 = src->chunk_size_d3;
		dst->chunk_size_d4 = src->chunk_size_d4;
		dst->chunk_size_d5 = src->chunk_size_d5;
	}
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		dst->size_read[b] += src->size_read[b];
		dst->size_written[b] += src->size_written[b];
	}
}

int ioacct_h5rec_key_cmp(const struct ioacct_h5rec *a, const struct ioacct_h5rec *b)
{
	int64_t x[] = { a->step_id, a->rank, a->pid, a->kind };
	int64_t y[] = { b->step_id, b->rank, b->pid, b->kind };
	int c;

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	c = strcmp(a->name, b->name);
	return c ? c : part_cmp(a->part, b->part);
}

void ioacct_rpc_add(struct ioacct_rpc *dst, const struct ioacct_rpc *src)
{
#define RPC_ADD(name) dst->name += src->name;
	IOACCT_RPC_COUNTERS(RPC_ADD)
#undef RPC_ADD
}

/* The mount key as SQLite orders it (the int64 of the same bits), as the files' order does. */
int ioacct_rpc_key_cmp(const struct ioacct_rpc *a, const struct ioacct_rpc *b)
{
	int64_t x[] = { a->step_id, (int64_t)a->mnt_id, a->prog, a->vers, a->proc, a->flags, a->bin };
	int64_t y[] = { b->step_id, (int64_t)b->mnt_id, b->prog, b->vers, b->proc, b->flags, b->bin };

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

void ioacct_jobdata_free(struct ioacct_jobdata *jd)
{
	if (!jd)
		return;
	free(jd->steps);
	free(jd->mounts);
	free(jd->totals);
	free(jd->series);
	free(jd->files);
	free(jd->mpiio);
	free(jd->h5);
	free(jd->rpc);
	free(jd->nodes);
	free(jd);
}

int ioacct_mkdir_p(const char *path, unsigned int mode, bool parent_only)
{
	char buf[PATH_MAX];
	char *end;

	if (ioacct_strlcpy(buf, path, sizeof(buf)))
		return -ENAMETOOLONG;
	if (parent_only) {
		end = strrchr(buf, '/');
		if (!end || end == buf)
			return 0;
		*end = '\0';
	}
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, (mode_t)mode) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, (mode_t)mode) && errno != EEXIST)
		return -errno;
	return 0;
}
