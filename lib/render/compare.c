// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioreport --compare: a job beside a Darshan log of it (see compare.h).
 *
 * Time bins are lined up in nanoseconds since our start: Darshan's HEATMAP
 * bins start at its own start time (sec + nsec in the job record), so they
 * are shifted by the difference. Both series are then spread over one grid
 * whose width is the wider of the two (doubled while there would be more
 * than 2000 bins); a bin that overlaps two grid bins gives each a share of
 * its bytes in proportion to the overlap, as Darshan itself spreads an
 * operation over its bins. A bin that falls inside one grid bin adds its
 * bytes unchanged, so identical series stay identical.
 */
#include "compare.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render_internal.h"
#include "text.h"

#define MAX_GRID_BINS 2000
/* Logs further apart than this are not lined up in time, only at their starts. */
#define MAX_OFFSET_NS (7LL * 86400 * NSEC_PER_SEC)
/* Darshan's widest plausible bin: 0.1 s doubled until 200 bins span a decade. */
#define MAX_DARSHAN_WIDTH_NS (1000000LL * NSEC_PER_SEC)

static const char UNKNOWN[] = "UNKNOWN";
static const char HEATMAP_POSIX[] = "heatmap:POSIX";

static double ratio_of(double ours, double darshan, bool known)
{
	if (!known)
		return NAN;
	if (darshan == 0)
		return ours == 0 ? NAN : INFINITY;
	return ours / darshan;
}

/* ---- per mount ---- */

/* The mount of that path, added when new; NULL when --mount leaves it out. */
static struct ioacct_compare_mount *mount_get(struct ioacct_compare *c, const char *path,
					      const char *fstype)
{
	struct ioacct_compare_mount *m;

	if (c->only_mount && strcmp(path, c->only_mount) != 0)
		return NULL;
	for (size_t i = 0; i < c->nmounts; i++)
		if (strcmp(c->mounts[i].path, path) == 0)
			return &c->mounts[i];
	m = &c->mounts[c->nmounts++];
	memset(m, 0, sizeof(*m));
	m->path = path;
	m->fstype = fstype;
	return m;
}

/* The mount of a Darshan record: its path's mount in the log's table, or UNKNOWN. */
static const struct ioacct_darshan_mount *record_mount(const struct ioacct_darshan_log *log,
						       uint64_t id)
{
	const char *name = ioacct_darshan_name_of(log, id);

	return name ? ioacct_darshan_mount_of(log, name) : NULL;
}

static void init_rows(struct ioacct_compare_mount *m, const struct ioacct_named_counter *nc,
		      size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < IOACCT_COMPARE_ROWS; i++) {
		if (!nc[i].darshan)
			continue;
		ioacct_strlcpy(m->rows[k].name, nc[i].name, sizeof(m->rows[k].name));
		m->rows[k].is_time = nc[i].kind == IOACCT_CK_TIME_NS;
		m->rows[k].darshan_known = true;
		k++;
	}
}

static void add_ours(struct ioacct_compare_mount *m, const struct ioacct_named_counter *nc, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < IOACCT_COMPARE_ROWS; i++) {
		if (!nc[i].darshan)
			continue;
		m->rows[k].ours += nc[i].kind == IOACCT_CK_TIME_NS ? (double)nc[i].value / 1e9
								     : (double)nc[i].value;
		k++;
	}
}

static void add_darshan(struct ioacct_compare_mount *m, const struct ioacct_darshan_record *rec)
{
	for (size_t k = 0; k < IOACCT_COMPARE_ROWS; k++) {
		struct ioacct_compare_row *row = &m->rows[k];
		bool is_float = false;
		int idx = ioacct_darshan_counter_index(IOACCT_DARSHAN_POSIX, row->name, &is_float);

		if (idx < 0)
			continue;
		if (is_float) {
			if (rec->fcounters[idx] < 0)
				row->darshan_known = false;
			else
				row->darshan += rec->fcounters[idx];
			continue;
		}
		if (rec->counters[idx] < 0) {
			row->darshan_known = false;
			continue;
		}
		row->darshan += (double)rec->counters[idx];
		/* ioacct's fsyncs include fdatasync, Darshan counts those apart. */
		if (idx == IOACCT_DARSHAN_POSIX_FSYNCS && rec->counters[IOACCT_DARSHAN_POSIX_FDSYNCS] > 0)
			row->darshan += (double)rec->counters[IOACCT_DARSHAN_POSIX_FDSYNCS];
	}
}

/* Whether the log's metadata has the line `line`. */
static bool has_meta_line(const struct ioacct_darshan_log *log, const char *line)
{
	size_t l = strlen(line), mlen = strnlen(log->metadata, sizeof(log->metadata));

	for (size_t i = 0; i + l <= mlen;) {
		const char *p = log->metadata + i, *nl = memchr(p, '\n', mlen - i);
		size_t n = nl ? (size_t)(nl - p) : mlen - i;

		if (n == l && !memcmp(p, line, l))
			return true;
		i += n + 1;
	}
	return false;
}

/*
 * A log with per-file records has fsync's time in F_META_TIME, as the
 * kernel keeps it per file (darshan.h): ours moves it there too, in
 * nanoseconds, so that a job and its own log are the same doubles.
 */
static void fsync_time_as_meta(struct ioacct_named_counter *nc, size_t n, uint64_t fsync_ns)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(nc[i].name, "POSIX_F_WRITE_TIME"))
			nc[i].value -= fsync_ns;
		else if (!strcmp(nc[i].name, "POSIX_F_META_TIME"))
			nc[i].value += fsync_ns;
	}
}

/* The log's POSIX record i, then past them its own records (darshan.h). */
static const struct ioacct_darshan_record *posix_or_own(const struct ioacct_darshan_log *log,
							size_t i)
{
	size_t n = log->nrecs[IOACCT_DARSHAN_POSIX];

	return i < n ? &log->recs[IOACCT_DARSHAN_POSIX][i] : &log->own[i - n];
}

static int compare_mounts(struct ioacct_compare *c)
{
	const struct ioacct_report *r = c->report;
	const struct ioacct_darshan_log *log = c->log;
	struct ioacct_named_counter nc[IOACCT_NAMED_COUNTERS];
	size_t cap = r->nmounts + log->nrecs[IOACCT_DARSHAN_POSIX] + log->nown +
		     log->nrecs[IOACCT_DARSHAN_STDIO] + log->nrecs[IOACCT_DARSHAN_MPIIO] + 1;
	size_t n;

	c->mounts = calloc(cap, sizeof(*c->mounts));
	c->filtered = calloc(r->nmounts + 1, sizeof(*c->filtered));
	if (!c->mounts || !c->filtered)
		return -ENOMEM;
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *rm = &r->mounts[i];
		struct ioacct_compare_mount *m;

		if (c->darshan_filter && ioacct_darshan_skips_mount(rm->path, rm->fstype)) {
			c->filtered[c->nfiltered++] = rm;
			continue;
		}
		n = ioacct_report_counters(rm, nc);
		if (c->fsync_meta)
			fsync_time_as_meta(nc, n, rm->op[IOACCT_OP_FSYNC].ns);
		m = mount_get(c, rm->path, rm->fstype);
		if (!m)
			continue;
		if (!m->in_ours)
			init_rows(m, nc, n);
		m->in_ours = true;
		add_ours(m, nc, n);
	}
	n = ioacct_report_counters(&r->all, nc);
	/* ioacct's own records (a log of ioacct's) count on their mounts as POSIX records do. */
	for (size_t i = 0; i < log->nrecs[IOACCT_DARSHAN_POSIX] + log->nown; i++) {
		const struct ioacct_darshan_record *rec = posix_or_own(log, i);
		const struct ioacct_darshan_mount *dm = record_mount(log, rec->id);
		struct ioacct_compare_mount *m = mount_get(c, dm ? dm->path : UNKNOWN,
							   dm ? dm->fstype : UNKNOWN);

		if (!m)
			continue;
		if (!m->in_ours && !m->posix_records && !m->stdio_records && !m->mpiio_records)
			init_rows(m, nc, n);
		m->posix_records++;
		add_darshan(m, rec);
	}
	for (int k = IOACCT_DARSHAN_MPIIO; k <= IOACCT_DARSHAN_STDIO; k++) {
		bool stdio = k == IOACCT_DARSHAN_STDIO;
		int rd = stdio ? 7 : 14, wr = stdio ? 6 : 15;

		for (size_t i = 0; i < log->nrecs[k]; i++) {
			const struct ioacct_darshan_record *rec = &log->recs[k][i];
			const struct ioacct_darshan_mount *dm = record_mount(log, rec->id);
			struct ioacct_compare_mount *m = mount_get(c, dm ? dm->path : UNKNOWN,
								   dm ? dm->fstype : UNKNOWN);
			double *bytes;

			if (!m)
				continue;
			bytes = stdio ? m->stdio_bytes : m->mpiio_bytes;
			if (!m->in_ours && !m->posix_records && !m->stdio_records && !m->mpiio_records)
				init_rows(m, nc, n);
			*(stdio ? &m->stdio_records : &m->mpiio_records) += 1;
			if (rec->counters[rd] > 0)
				bytes[0] += (double)rec->counters[rd];
			if (rec->counters[wr] > 0)
				bytes[1] += (double)rec->counters[wr];
		}
	}
	for (size_t i = 0; i < c->nmounts; i++)
		for (size_t k = 0; k < IOACCT_COMPARE_ROWS; k++) {
			struct ioacct_compare_row *row = &c->mounts[i].rows[k];

			row->ratio = ratio_of(row->ours, row->darshan, row->darshan_known);
		}
	return 0;
}

/* ---- per file ---- */

const char *const ioacct_compare_file_counters[IOACCT_COMPARE_FILE_COUNTERS] = {
	"POSIX_OPENS", "POSIX_READS", "POSIX_WRITES", "POSIX_SEEKS", "POSIX_STATS", "POSIX_FSYNCS",
	"POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN",
};
static const int file_counter_idx[IOACCT_COMPARE_FILE_COUNTERS] = {
	IOACCT_DARSHAN_POSIX_OPENS, IOACCT_DARSHAN_POSIX_READS, IOACCT_DARSHAN_POSIX_WRITES,
	IOACCT_DARSHAN_POSIX_SEEKS, IOACCT_DARSHAN_POSIX_STATS, IOACCT_DARSHAN_POSIX_FSYNCS,
	IOACCT_DARSHAN_POSIX_BYTES_READ, IOACCT_DARSHAN_POSIX_BYTES_WRITTEN,
};

/* One record of either side, to be matched by name. */
struct side_rec {
	const char *name;
	bool darshan;
	const struct ioacct_darshan_record *rec;
};

static int side_cmp(const void *a, const void *b)
{
	const struct side_rec *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Adds a record's counters to one side of a file; Darshan's fsyncs with its fdatasyncs. */
static void file_add_rec(struct ioacct_compare_file *cf, const struct side_rec *s)
{
	const int64_t *c = s->rec->counters;

	for (int k = 0; k < IOACCT_COMPARE_FILE_COUNTERS; k++) {
		int64_t v = c[file_counter_idx[k]];

		if (file_counter_idx[k] == IOACCT_DARSHAN_POSIX_FSYNCS && s->darshan &&
		    c[IOACCT_DARSHAN_POSIX_FDSYNCS] > 0)
			v += v < 0 ? 0 : c[IOACCT_DARSHAN_POSIX_FDSYNCS];
		if (!s->darshan)
			cf->ours[k] += (double)(v > 0 ? v : 0);
		else if (v < 0)
			cf->darshan_known[k] = false;
		else
			cf->darshan[k] += (double)v;
	}
	*(s->darshan ? &cf->darshan_records : &cf->ours_records) += 1;
}

/* Whether a log record names a file: not a mount point of the log (ioacct's per-mount records). */
static bool names_file(const struct ioacct_darshan_log *log, const char *name)
{
	const struct ioacct_darshan_mount *dm = ioacct_darshan_mount_of(log, name);

	return !dm || strcmp(dm->path, name) != 0;
}

/* The log's POSIX records (on the compared mount) after ours in s; their count. */
static size_t darshan_sides(const struct ioacct_compare *c, struct side_rec *s, bool *files)
{
	const struct ioacct_darshan_log *log = c->log;
	size_t n = 0;

	for (size_t i = 0; i < log->nrecs[IOACCT_DARSHAN_POSIX] + log->nown; i++) {
		const struct ioacct_darshan_record *rec = posix_or_own(log, i);
		const char *name = ioacct_darshan_name_of(log, rec->id);
		const struct ioacct_darshan_mount *dm = name ? ioacct_darshan_mount_of(log, name) : NULL;

		if (c->only_mount && (!dm || strcmp(dm->path, c->only_mount) != 0))
			continue;
		s[n].name = name ? name : UNKNOWN;
		s[n].darshan = true;
		s[n].rec = rec;
		*files |= name && names_file(log, name);
		n++;
	}
	return n;
}

/* The sorted records of both sides, one file per name. */
static int files_of(struct ioacct_compare_files *cf, const struct side_rec *s, size_t n)
{
	cf->files = calloc(n ? n : 1, sizeof(*cf->files));
	if (!cf->files)
		return -ENOMEM;
	for (size_t i = 0, j; i < n; i = j) {
		struct ioacct_compare_file *f = &cf->files[cf->nfiles];

		f->name = strdup(s[i].name);
		if (!f->name)
			return -ENOMEM;
		cf->nfiles++;
		for (int k = 0; k < IOACCT_COMPARE_FILE_COUNTERS; k++)
			f->darshan_known[k] = true;
		for (j = i; j < n && !side_cmp(&s[i], &s[j]); j++)
			file_add_rec(f, &s[j]);
		if (f->ours_records && f->darshan_records) {
			cf->both++;
			f->same = true;
			for (int k = 0; k < IOACCT_COMPARE_FILE_COUNTERS; k++)
				f->same &= f->darshan_known[k] && f->ours[k] == f->darshan[k];
			cf->same += f->same;
		} else {
			*(f->ours_records ? &cf->ours_only : &cf->darshan_only) += 1;
		}
	}
	return 0;
}

static int compare_files(struct ioacct_compare *c)
{
	const struct ioacct_report *r = c->report;
	struct ioacct_compare_files *cf = &c->files;
	struct ioacct_darshan_frec *fr = NULL;
	struct side_rec *s = NULL;
	bool *keep = calloc(r->nmounts + 1, sizeof(*keep)), partial;
	size_t n = 0, nd;
	int ret = keep ? 0 : -ENOMEM;

	for (size_t i = 0; keep && i < r->nmounts; i++)
		keep[i] = !c->darshan_filter ||
			  !ioacct_darshan_skips_mount(r->mounts[i].path, r->mounts[i].fstype);
	if (!ret)
		ret = ioacct_darshan_file_records(r, keep, c->darshan_filter, &fr, &n, &partial);
	cf->ours = n > 0;
	if (!ret && n) {
		s = calloc(n + c->log->nrecs[IOACCT_DARSHAN_POSIX] + c->log->nown + 1, sizeof(*s));
		ret = s ? 0 : -ENOMEM;
	}
	if (!ret && n) {
		for (size_t i = 0; i < n; i++)
			s[i] = (struct side_rec){ .name = fr[i].name, .rec = &fr[i].rec };
		nd = darshan_sides(c, s + n, &cf->darshan);
		qsort(s, n + nd, sizeof(*s), side_cmp);
		if (cf->darshan)
			ret = files_of(cf, s, n + nd);
	}
	free(s);
	ioacct_darshan_frecs_free(fr, n);
	free(keep);
	return ret;
}

/* ---- time series ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Adds `bytes`, spread over [a, b) (ns since our start), to the grid. */
static void spread(const struct ioacct_compare_series *s, double *dst, int64_t a, int64_t b,
		   double bytes)
{
	int64_t w = (int64_t)s->width_ns, first, last;

	if (b <= a || bytes == 0)
		return;
	first = floor_div(a - s->origin_ns, w);
	last = floor_div(b - 1 - s->origin_ns, w);
	if (first < 0)
		first = 0;
	if (last >= (int64_t)s->nbins)
		last = (int64_t)s->nbins - 1;
	for (int64_t t = first; t <= last; t++) {
		int64_t ts = s->origin_ns + t * w, te = ts + w;
		int64_t ov = (b < te ? b : te) - (a > ts ? a : ts);

		if (ov <= 0)
			continue;
		dst[t] += ov == b - a ? bytes : bytes * (double)ov / (double)(b - a);
	}
}

/* The log's heatmap:POSIX records that can be placed in time, and their width. */
static bool heatmap_usable(const struct ioacct_darshan_log *log,
			   const struct ioacct_darshan_heatmap *h, int64_t *width, int64_t *span)
{
	const char *name = ioacct_darshan_name_of(log, h->id);
	double w = h->bin_width * 1e9;

	if (!name || strcmp(name, HEATMAP_POSIX) != 0)
		return false;
	if (!(w >= 1 && w <= (double)MAX_DARSHAN_WIDTH_NS))
		return false;
	*width = llround(w);
	return !__builtin_mul_overflow(*width, (int64_t)h->nbins, span) &&
	       *span <= MAX_OFFSET_NS * 1000;
}

static int64_t darshan_offset(const struct ioacct_compare *c)
{
	const struct ioacct_darshan_log *log = c->log;
	int64_t d, off;

	if (__builtin_mul_overflow(log->start_sec, NSEC_PER_SEC, &d) ||
	    __builtin_add_overflow(d, log->start_nsec, &d) ||
	    __builtin_sub_overflow(d, c->report->jd->job.start_ns, &off) ||
	    off > MAX_OFFSET_NS || off < -MAX_OFFSET_NS)
		return INT64_MIN;
	return off;
}

static int compare_series(struct ioacct_compare *c)
{
	struct ioacct_compare_series *s = &c->series;
	const struct ioacct_report *r = c->report;
	const struct ioacct_darshan_log *log = c->log;
	int64_t lo, hi, width = 0, span;

	s->ours_width_ns = r->bin_width_ns ? r->bin_width_ns : 1;
	for (size_t i = 0; i < log->nheatmaps; i++)
		if (heatmap_usable(log, &log->heatmaps[i], &width, &span)) {
			s->records++;
			if ((uint64_t)width > s->darshan_width_ns)
				s->darshan_width_ns = (uint64_t)width;
		}
	s->present = s->records > 0;
	if (!s->present)
		return 0;
	s->offset_ns = darshan_offset(c);
	if (s->offset_ns == INT64_MIN)
		s->offset_ns = 0;
	lo = s->offset_ns < 0 ? s->offset_ns : 0;
	hi = (int64_t)r->span_ns;
	for (size_t i = 0; i < log->nheatmaps; i++)
		if (heatmap_usable(log, &log->heatmaps[i], &width, &span) && s->offset_ns + span > hi)
			hi = s->offset_ns + span;
	s->width_ns = s->ours_width_ns > s->darshan_width_ns ? s->ours_width_ns : s->darshan_width_ns;
	for (;;) {
		s->origin_ns = floor_div(lo, (int64_t)s->width_ns) * (int64_t)s->width_ns;
		s->nbins = (size_t)((hi - s->origin_ns + (int64_t)s->width_ns - 1) / (int64_t)s->width_ns);
		if (s->nbins == 0)
			s->nbins = 1;
		if (s->nbins <= MAX_GRID_BINS)
			break;
		s->width_ns *= 2;
	}
	for (int d = 0; d < 2; d++) {
		s->ours[d] = calloc(s->nbins, sizeof(double));
		s->darshan[d] = calloc(s->nbins, sizeof(double));
		if (!s->ours[d] || !s->darshan[d])
			return -ENOMEM;
	}

	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		if (c->darshan_filter && ioacct_darshan_skips_mount(m->path, m->fstype))
			continue;
		for (size_t b = 0; b < m->nbins; b++) {
			int64_t a = (int64_t)m->bins[b].bin * (int64_t)s->ours_width_ns;
			int64_t e = a + (int64_t)ioacct_report_bin_width(r, m->bins[b].bin);

			for (int d = 0; d < 2; d++)
				spread(s, s->ours[d], a, e, (double)m->bins[b].bytes[d]);
		}
	}
	for (size_t i = 0; i < log->nheatmaps; i++) {
		const struct ioacct_darshan_heatmap *h = &log->heatmaps[i];

		if (!heatmap_usable(log, h, &width, &span))
			continue;
		for (uint64_t b = 0; b < h->nbins; b++) {
			int64_t a = s->offset_ns + (int64_t)b * width;

			spread(s, s->darshan[IOACCT_DIR_READ], a, a + width, (double)h->read_bins[b]);
			spread(s, s->darshan[IOACCT_DIR_WRITE], a, a + width, (double)h->write_bins[b]);
		}
	}
	for (int d = 0; d < 2; d++) {
		double so = 0, sd = 0, t = (double)s->nbins * (double)s->width_ns / 1e9;

		for (size_t b = 0; b < s->nbins; b++) {
			so += s->ours[d][b];
			sd += s->darshan[d][b];
		}
		s->mean_ours[d] = so / t;
		s->mean_darshan[d] = sd / t;
		if (sd == 0)
			s->rel_error[d] = so == 0 ? 0 : NAN;
		else
			s->rel_error[d] = (s->mean_ours[d] - s->mean_darshan[d]) / s->mean_darshan[d];
	}
	return 0;
}

struct ioacct_compare *ioacct_compare_create(const struct ioacct_report *r,
					     const struct ioacct_darshan_log *log,
					     bool darshan_filter, const char *only_mount)
{
	struct ioacct_compare *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return NULL;
	c->report = r;
	c->log = log;
	c->darshan_filter = darshan_filter;
	c->only_mount = only_mount;
	c->fsync_meta = has_meta_line(log, IOACCT_DARSHAN_FSYNC_META);
	ret = compare_mounts(c);
	if (!ret)
		ret = compare_files(c);
	if (!ret)
		ret = compare_series(c);
	if (ret) {
		ioacct_compare_destroy(c);
		errno = -ret;
		return NULL;
	}
	return c;
}

void ioacct_compare_destroy(struct ioacct_compare *c)
{
	if (!c)
		return;
	for (int d = 0; d < 2; d++) {
		free(c->series.ours[d]);
		free(c->series.darshan[d]);
	}
	for (size_t i = 0; i < c->files.nfiles; i++)
		free(c->files.files[i].name);
	free(c->files.files);
	free(c->mounts);
	free(c->filtered);
	free(c);
}

/* ---- text ---- */

static void print_value(FILE *f, bool is_time, bool known, double v)
{
	if (!known)
		fprintf(f, " %18s", "n/a");
	else if (is_time)
		fprintf(f, " %18.6f", v);
	else
		fprintf(f, " %18.0f", v);
}

/* "1.000000", "inf", or "-" when undefined. */
static const char *ratio_str(double ratio, char *buf, size_t len)
{
	if (isnan(ratio))
		return "-";
	if (isinf(ratio))
		return "inf";
	snprintf(buf, len, "%.6f", ratio);
	return buf;
}

static double darshan_run_time(const struct ioacct_darshan_log *log)
{
	if (log->minor >= 41)
		return ((double)log->end_sec + (double)log->end_nsec / 1e9) -
		       ((double)log->start_sec + (double)log->start_nsec / 1e9);
	return (double)log->end_sec - (double)log->start_sec + 1;
}

static void render_header(FILE *f, const struct ioacct_compare *c, const char *log_path)
{
	const struct ioacct_darshan_log *log = c->log;
	const struct ioacct_job *j = &c->report->jd->job;
	char run[32], width[32], tb[64];
	time_t t = (time_t)log->start_sec;
	struct tm tm;
	bool partial = false;

	fprintf(f, "# ioacct report version: %d\n", IOACCT_REPORT_VERSION);
	fprintf(f, "# comparison: ioacct job %" PRIu64 " on ", j->job_id);
	ioacct_text_put(f, j->cluster);
	fputs(" vs the Darshan log ", f);
	ioacct_text_put(f, log_path);
	fputc('\n', f);
	fprintf(f, "# ioacct start: %s (%s s run time, bin width %s s)\n",
		r_ctime(j->start_ns, tb, sizeof(tb)), r_secs(c->report->span_ns, 4, run, sizeof(run)),
		r_secs(c->report->bin_width_ns, 3, width, sizeof(width)));
	fputs("# darshan log version: ", f);
	ioacct_text_put(f, log->version);
	fputs("\n# darshan exe: ", f);
	ioacct_text_put(f, log->exe ? log->exe : "");
	fputc('\n', f);
	fprintf(f, "# darshan uid: %" PRId64 "\n", log->uid);
	fprintf(f, "# darshan jobid: %" PRId64 "\n", log->jobid);
	if (localtime_r(&t, &tm) && strftime(tb, sizeof(tb), "%a %b %e %H:%M:%S %Y", &tm))
		fprintf(f, "# darshan start_time: %" PRId64 " (%s)\n", log->start_sec, tb);
	fprintf(f, "# darshan nprocs: %" PRId64 "\n", log->nprocs);
	fprintf(f, "# darshan run time: %.4f\n", darshan_run_time(log));
	fprintf(f, "# darshan modules:");
	for (unsigned int id = 0; id < IOACCT_DARSHAN_MAX_MODS; id++) {
		const char *name = ioacct_darshan_mod_name(id);
		bool read = id == IOACCT_DARSHAN_MOD_POSIX || id == IOACCT_DARSHAN_MOD_MPIIO ||
			    id == IOACCT_DARSHAN_MOD_STDIO || id == IOACCT_DARSHAN_MOD_HEATMAP;

		if (!log->regions[id].len)
			continue;
		if (name)
			fprintf(f, " %s (ver %u%s)", name, log->regions[id].version, read ? "" : ", not read");
		else
			fprintf(f, " id %u (unknown, not read)", id);
		partial |= (log->partial >> id) & 1;
	}
	fprintf(f, "\n");
	if (partial) {
		fprintf(f, "# WARNING: the log is partial (Darshan ran out of memory, or ioacct kept files past "
			"max_files as \"<ioacct: %s>\"), in:", IOACCT_DARSHAN_OTHER_FILES);
		for (unsigned int id = 0; id < IOACCT_DARSHAN_MAX_MODS; id++)
			if ((log->partial >> id) & 1)
				fprintf(f, " %s", ioacct_darshan_mod_name(id) ? ioacct_darshan_mod_name(id) : "?");
		fprintf(f, "\n");
	}
	if (!c->darshan_filter) {
		fprintf(f, "# filter: none; ours counts every mount the job touched "
			"(--darshan-filter leaves out what Darshan skips)\n");
	} else {
		fprintf(f, "# filter: --darshan-filter; ours leaves out mounts Darshan does not record:");
		for (size_t i = 0; i < c->nfiltered; i++) {
			fputc(' ', f);
			ioacct_text_put(f, c->filtered[i]->path);
			fputs(" (", f);
			ioacct_text_put(f, c->filtered[i]->fstype);
			fputc(')', f);
		}
		fprintf(f, "%s\n", c->nfiltered ? "" : " none here");
	}
	if (c->only_mount) {
		fputs("# only mount ", f);
		ioacct_text_put(f, c->only_mount);
		fputs(" (--mount); Darshan's heatmap still covers every mount\n", f);
	}
}

static void render_blind_spots(FILE *f)
{
	fprintf(f,
		"\n## What each side cannot see\n"
		"# Darshan: paths under /etc /dev /usr /bin /boot /lib /opt /sbin /sys /proc /var;\n"
		"#   tmpfs, proc, sysfs, devpts, cgroup and other pseudo mounts; only the calls of the\n"
		"#   libraries it wraps (POSIX, STDIO, MPI-IO, ...) in dynamically linked programs that\n"
		"#   load it: nothing a static binary does, nor calls made inside libc (stdio's own\n"
		"#   reads and writes appear under STDIO, not POSIX).\n"
		"#   Nor the page cache: IOACCT_CACHE_MISS_BYTES (bytes brought in from storage),\n"
		"#   IOACCT_READAHEAD_BYTES, IOACCT_MMAP_FAULTS and IOACCT_MMAP_READ_BYTES (file pages\n"
		"#   faulted into mappings; Darshan's POSIX_MMAPS counts mmap() calls, not faults),\n"
		"#   IOACCT_FADVISES and IOACCT_MADVISES are ioacct's alone (where the kernel has the\n"
		"#   tracepoints; the job's views say which).\n"
		"# ioacct: no writes through shared mappings or vmsplice; it sees every read\n"
		"#   and write system call,\n"
		"#   page-cache hits included, of every process of the job, static binaries too, and\n"
		"#   counts per job and mount, not per process and file. sendfile, splice and\n"
		"#   copy_file_range count as reads of their source file and writes of their destination\n"
		"#   file: Darshan's POSIX module does not wrap them, so ours may exceed Darshan's there.\n"
		"#   So do io_uring's reads, writes and fsyncs (IOACCT_IO_URING_OPS requests; the uring\n"
		"#   view), which Darshan cannot see at all, and Linux AIO's (libaio's io_submit\n"
		"#   iocbs, reaped by io_getevents), which Darshan's POSIX module does not wrap.\n"
		"# Both count successful calls. ioacct's POSIX_FSYNCS includes fdatasync; Darshan's\n"
		"#   side here is POSIX_FSYNCS + POSIX_FDSYNCS. Both add fsync and fdatasync time to\n"
		"#   POSIX_F_WRITE_TIME, not POSIX_F_META_TIME, as Darshan's wrappers do (ioacct's\n"
		"#   own tables count it in metadata time).\n"
		"#   Darshan's counters of -1 (not measured)\n"
		"#   show as n/a; a mount's files in excluded directories cannot be told apart by ioacct.\n");
}

/* 0 on both sides: nothing to compare, left out unless --all-counters. */
static bool row_is_zero(const struct ioacct_compare_row *row)
{
	return row->ours == 0 && row->darshan_known && row->darshan == 0;
}

static void render_mount(FILE *f, const struct ioacct_compare_mount *m, bool all_counters)
{
	size_t omitted = 0;
	char buf[64];

	/* Names are anyone's bytes: no newline in one may forge a line of the comparison. */
	fputs("\n# mount: ", f);
	ioacct_text_put(f, m->path);
	fputc('\t', f);
	ioacct_text_put(f, m->fstype);
	fprintf(f, "\tours: %s\tDarshan: %zu POSIX record%s\n", m->in_ours ? "yes" : "no I/O",
		m->posix_records, m->posix_records == 1 ? "" : "s");
	/* A mount of Darshan's STDIO or MPI-IO records alone has nothing to compare. */
	if (m->in_ours || m->posix_records)
		fprintf(f, "%-30s %18s %18s %12s\n", "COUNTER", "OURS", "DARSHAN", "RATIO");
	for (size_t k = 0; k < IOACCT_COMPARE_ROWS && (m->in_ours || m->posix_records); k++) {
		const struct ioacct_compare_row *row = &m->rows[k];

		if (!row->name[0])
			continue;
		if (!all_counters && row_is_zero(row)) {
			omitted++;
			continue;
		}
		fprintf(f, "%-30s", row->name);
		print_value(f, row->is_time, true, row->ours);
		print_value(f, row->is_time, row->darshan_known, row->darshan);
		fprintf(f, " %12s\n", ratio_str(row->ratio, buf, sizeof(buf)));
	}
	if (omitted)
		fprintf(f, "# %zu counter%s 0 on both sides left out (--all-counters shows them)\n",
			omitted, omitted == 1 ? "" : "s");
	if (m->stdio_records)
		fprintf(f, "# Darshan STDIO here: %zu record%s, %.0f bytes read, %.0f"
			" written (buffered by libc; ioacct counts what reaches a file as reads and writes)\n",
			m->stdio_records, m->stdio_records == 1 ? "" : "s", m->stdio_bytes[0],
			m->stdio_bytes[1]);
	if (m->mpiio_records)
		fprintf(f, "# Darshan MPI-IO here: %zu record%s, %.0f bytes read, %.0f"
			" written (carried out by POSIX calls, already counted above)\n",
			m->mpiio_records, m->mpiio_records == 1 ? "" : "s", m->mpiio_bytes[0],
			m->mpiio_bytes[1]);
}

/* One row of a file: a counter, both sides, ours - Darshan's; "-" for a side without the file. */
static void file_row(FILE *f, const struct ioacct_compare_file *cf, int k)
{
	fputs(ioacct_compare_file_counters[k], f);
	if (cf->ours_records)
		fprintf(f, "\t%.0f", cf->ours[k]);
	else
		fputs("\t-", f);
	if (!cf->darshan_records)
		fputs("\t-", f);
	else if (!cf->darshan_known[k])
		fputs("\tn/a", f);
	else
		fprintf(f, "\t%.0f", cf->darshan[k]);
	if (cf->ours_records && cf->darshan_records && cf->darshan_known[k])
		fprintf(f, "\t%+.0f\n", cf->ours[k] - cf->darshan[k]);
	else
		fputs("\t-\n", f);
}

static void render_file(FILE *f, const struct ioacct_compare_file *cf, bool all_counters)
{
	bool both = cf->ours_records && cf->darshan_records;

	if (cf->same && !all_counters)
		return;
	for (int k = 0; k < IOACCT_COMPARE_FILE_COUNTERS; k++) {
		bool differs = both ? !cf->darshan_known[k] || cf->ours[k] != cf->darshan[k]
				    : cf->ours[k] != 0 || cf->darshan[k] != 0;

		if (!all_counters && !differs)
			continue;
		/* A name is anyone's bytes: escaped, so that it cannot forge a row. */
		ioacct_text_put(f, cf->name);
		fputc('\t', f);
		file_row(f, cf, k);
	}
}

static void render_files(FILE *f, const struct ioacct_compare *c)
{
	const struct ioacct_compare_files *cf = &c->files;

	if (!cf->ours)
		return;
	fprintf(f, "\n## Per file: ours vs Darshan's POSIX records of the same name, ranks added up\n");
	if (!cf->darshan) {
		fprintf(f, "# the Darshan log has no records of files (only of mounts): "
			"nothing to compare file by file\n");
		return;
	}
	fprintf(f, "# files: %zu on both sides (%zu the same in every counter below), %zu ours only, "
		"%zu Darshan's only\n", cf->both, cf->same, cf->ours_only, cf->darshan_only);
	fprintf(f, "# rows: the counters that differ%s; DIFF = ours - Darshan; tab-separated\n",
		c->all_counters ? " (--all-counters: every counter of every file)" : "");
	fprintf(f, "FILE\tCOUNTER\tOURS\tDARSHAN\tDIFF\n");
	for (size_t i = 0; i < cf->nfiles; i++)
		render_file(f, &cf->files[i], c->all_counters);
}

static void print_rel_error(FILE *f, const char *dir, const struct ioacct_compare_series *s, int d)
{
	char buf[64];

	fprintf(f, "# mean %s bandwidth: ours %.6f MiB/s, Darshan %.6f MiB/s, relative error "
		"(ours - Darshan) / Darshan: ", dir, s->mean_ours[d] / MIB_D, s->mean_darshan[d] / MIB_D);
	if (isnan(s->rel_error[d]))
		fprintf(f, "n/a (Darshan saw no bytes)");
	else
		fprintf(f, "%+.4f%%", 100 * s->rel_error[d]);
	fprintf(f, ", ratio %s\n",
		ratio_str(ratio_of(s->mean_ours[d], s->mean_darshan[d], true), buf, sizeof(buf)));
}

static void render_series(FILE *f, const struct ioacct_compare *c)
{
	const struct ioacct_compare_series *s = &c->series;
	char a[32], b[32], w[32], o[32];
	double wsec = (double)s->width_ns / 1e9;

	fprintf(f, "\n## Time series: bandwidth per bin, ours vs Darshan's HEATMAP (heatmap:POSIX)\n");
	if (!s->present) {
		fprintf(f, "# the Darshan log has no heatmap:POSIX records (Darshan 3.4 and later write "
			"them): no time series to compare\n");
		return;
	}
	fprintf(f, "# common bin width: %s s (ours %s s, Darshan %s s); %zu heatmap record%s summed\n",
		r_secs(s->width_ns, 3, w, sizeof(w)), r_secs(s->ours_width_ns, 3, a, sizeof(a)),
		r_secs(s->darshan_width_ns, 3, b, sizeof(b)), s->records, s->records == 1 ? "" : "s");
	if (darshan_offset(c) == INT64_MIN)
		fprintf(f, "# the two start times are more than 7 days apart: lined up at their starts\n");
	else
		fprintf(f, "# Darshan's start is %s s %s ours%s\n",
			r_secs((uint64_t)llabs(s->offset_ns), 3, o, sizeof(o)),
			s->offset_ns < 0 ? "before" : "after",
			c->log->minor < 41 ? " (its start time has 1 s resolution before format 3.41)" : "");
	print_rel_error(f, "read", s, IOACCT_DIR_READ);
	print_rel_error(f, "write", s, IOACCT_DIR_WRITE);
	fprintf(f, "%6s %12s %18s %18s %18s %18s\n", "BIN", "START_S", "OURS_READ_MIB_S",
		"DARSHAN_READ_MIB_S", "OURS_WRITE_MIB_S", "DARSHAN_WRITE_MIB_S");
	for (size_t t = 0; t < s->nbins; t++) {
		double start = (double)(s->origin_ns + (int64_t)t * (int64_t)s->width_ns) / 1e9;

		if (!s->ours[0][t] && !s->ours[1][t] && !s->darshan[0][t] && !s->darshan[1][t])
			continue;
		fprintf(f, "%6zu %12.3f %18.6f %18.6f %18.6f %18.6f\n", t, start,
			s->ours[0][t] / wsec / MIB_D, s->darshan[0][t] / wsec / MIB_D,
			s->ours[1][t] / wsec / MIB_D, s->darshan[1][t] / wsec / MIB_D);
	}
}

int ioacct_compare_render_text(FILE *f, const struct ioacct_compare *c, const char *log_path)
{
	render_header(f, c, log_path);
	render_blind_spots(f);
	fprintf(f, "\n## Per mount: ours vs the sum of Darshan's POSIX records on it "
		"(ratio = ours / Darshan; - where both are 0 or Darshan's is n/a)\n");
	for (size_t i = 0; i < c->nmounts; i++)
		render_mount(f, &c->mounts[i], c->all_counters);
	if (!c->nmounts)
		fprintf(f, "# no mount: neither side saw any I/O\n");
	render_files(f, c);
	render_series(f, c);
	return r_finish(f);
}
