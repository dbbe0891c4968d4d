/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HEATMAP records of a job's log (darshan.h, ioacct_darshan_heatmaps):
 * Darshan's heatmap module keeps, per API and rank, the bytes read and
 * written per time bin (darshan-heatmap-log-format.h). ioacct's kernel
 * counts bytes per step, mount and time bin, exactly, but not per rank; the
 * per-file records know each rank's bytes and when its first and last read
 * and write were. So:
 *
 *   - each bin's bytes are the job's, exact (the kept mounts' bins, merged
 *     pairwise while there are more than 200, as Darshan's runtime does);
 *   - a job whose files name one rank at most has one record, rank 0, and
 *     that is all it is;
 *   - a job of several ranks has one record per rank, each bin's bytes
 *     split over the ranks in proportion to what each rank's files would
 *     put in that bin if the rank read (wrote) at an even rate between its
 *     first and last read (write) of each file: Darshan's own rule for one
 *     operation over several bins, applied to a file's run of calls. The
 *     split is an estimate, the bins' sums are not; the log's metadata says
 *     so (IOACCT_DARSHAN_HEATMAP_META).
 */
#include "darshan.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Darshan keeps at most 200 heatmap bins, merging pairs of them as a job runs long. */
#define HEATMAP_BINS 200

struct grid {
	uint64_t nbins;
	unsigned int shift;               /* a grid bin is 1 << shift job bins */
	uint64_t width_ns;                /* of a grid bin */
	uint64_t *bytes[IOACCT_DIR_COUNT]; /* the job's, per grid bin */
};

/* The report mount of a file when kept; r->nmounts when not. */
static size_t kept_mount(const struct ioacct_report *r, const bool *keep, uint64_t mnt_id)
{
	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].mnt_id == mnt_id)
			return keep[i] ? i : r->nmounts;
	return r->nmounts;
}

/* The job's bytes per grid bin over the kept mounts; false when none moved. */
static int grid_of(const struct ioacct_report *r, const bool *keep, struct grid *g, bool *any)
{
	uint64_t nbins = r->nbins ? r->nbins : 1;

	*any = false;
	g->shift = 0;
	while (((nbins - 1) >> g->shift) + 1 > HEATMAP_BINS)
		g->shift++;
	g->nbins = ((nbins - 1) >> g->shift) + 1;
	g->width_ns = r->bin_width_ns << g->shift;
	for (int d = 0; d < IOACCT_DIR_COUNT; d++) {
		g->bytes[d] = calloc(g->nbins, sizeof(uint64_t));
		if (!g->bytes[d])
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		if (!keep[i])
			continue;
		for (size_t b = 0; b < m->nbins; b++) {
			uint64_t t = m->bins[b].bin >> g->shift;

			if (t >= g->nbins)
				continue;
			for (int d = 0; d < IOACCT_DIR_COUNT; d++) {
				g->bytes[d][t] += m->bins[b].bytes[d];
				*any |= m->bins[b].bytes[d] != 0;
			}
		}
	}
	*any &= r->bin_width_ns > 0;
	return 0;
}

/* The distinct ranks (>= 0) of the kept files that moved bytes, sorted; their count. */
static size_t ranks_of(const struct ioacct_report *r, const bool *keep, int64_t *ranks)
{
	size_t n = 0;

	for (size_t i = 0; i < r->jd->nfiles; i++) {
		const struct ioacct_file *f = &r->jd->files[i];
		size_t k;

		if (f->rank < 0 || !(f->bytes_read || f->bytes_written) ||
		    kept_mount(r, keep, f->mnt_id) == r->nmounts)
			continue;
		for (k = 0; k < n && ranks[k] != f->rank; k++)
			;
		if (k == n)
			ranks[n++] = f->rank;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ranks[j - 1] > ranks[j]; j--) {
			int64_t t = ranks[j];

			ranks[j] = ranks[j - 1];
			ranks[j - 1] = t;
		}
	return n;
}

/* bytes spread evenly over [a, b] ns from the job's start, into est[] of the grid. */
static void spread(const struct grid *g, double *est, uint64_t bytes, int64_t a, int64_t b)
{
	uint64_t first, last;

	if (b < a)
		b = a;
	first = (uint64_t)a / g->width_ns;
	last = (uint64_t)b / g->width_ns;
	if (first >= g->nbins)
		first = g->nbins - 1;
	if (last >= g->nbins)
		last = g->nbins - 1;
	if (first == last) {
		est[first] += (double)bytes;
		return;
	}
	for (uint64_t t = first; t <= last; t++) {
		double lo = t == first ? (double)a : (double)(t * g->width_ns);
		double hi = t == last ? (double)b : (double)((t + 1) * g->width_ns);

		est[t] += (double)bytes * (hi - lo) / (double)(b - a);
	}
}

/*
 * est[k * nbins + t]: what rank ranks[k]'s files would put in grid bin t
 * in direction d at an even rate between their first and last access.
 */
static void estimate(const struct ioacct_report *r, const bool *keep, const struct grid *g,
		     const int64_t *ranks, size_t nr, int d, double *est)
{
	for (size_t i = 0; i < r->jd->nfiles; i++) {
		const struct ioacct_file *f = &r->jd->files[i];
		bool w = d == IOACCT_DIR_WRITE;
		uint64_t bytes = w ? f->bytes_written : f->bytes_read;
		int64_t a = w ? f->first_write_ns : f->first_read_ns;
		int64_t b = w ? f->last_write_ns : f->last_read_ns;
		size_t k;

		if (!bytes || a < 0 || f->rank < 0 || kept_mount(r, keep, f->mnt_id) == r->nmounts)
			continue;
		for (k = 0; k < nr && ranks[k] != f->rank; k++)
			;
		if (k < nr)
			spread(g, est + k * g->nbins, bytes, a, b);
	}
}

/* A share's remainder after its floor, and which share. */
struct rest {
	double frac;
	size_t k;
};

/* Largest remainder first, lower rank first on ties. */
static int rest_cmp(const void *a, const void *b)
{
	const struct rest *x = a, *y = b;

	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/*
 * Splits `total` over nr shares in proportion to w[k * stride]: whole bytes
 * that add up to total exactly, each share its floor and the bytes left to
 * the largest remainders (evenly when no share has any weight).
 */
static void split(uint64_t total, const double *w, size_t stride, size_t nr, uint64_t *out,
		  struct rest *rest)
{
	double sum = 0;
	uint64_t given = 0, left;

	for (size_t k = 0; k < nr; k++)
		sum += w[k * stride];
	for (size_t k = 0; k < nr; k++) {
		double q = sum > 0 ? (double)total * (w[k * stride] / sum) : (double)total / (double)nr;
		double fl = floor(q);

		out[k] = fl < (double)(total - given) ? (uint64_t)fl : total - given;
		rest[k] = (struct rest){ .frac = q - fl, .k = k };
		given += out[k];
	}
	left = total - given;
	for (size_t k = 0; k < nr; k++)
		out[k] += left / nr;
	left %= nr;
	qsort(rest, nr, sizeof(*rest), rest_cmp);
	for (size_t k = 0; k < left; k++)
		out[rest[k].k]++;
}

static void grid_free(struct grid *g)
{
	for (int d = 0; d < IOACCT_DIR_COUNT; d++)
		free(g->bytes[d]);
}

static int heatmap_new(struct ioacct_darshan_heatmap *h, const struct grid *g, uint64_t id,
		       int64_t rank)
{
	memset(h, 0, sizeof(*h));
	h->id = id;
	h->rank = rank;
	h->nbins = g->nbins;
	h->bin_width = (double)g->width_ns / 1e9;
	h->read_bins = calloc(g->nbins, sizeof(int64_t));
	h->write_bins = calloc(g->nbins, sizeof(int64_t));
	return h->read_bins && h->write_bins ? 0 : -ENOMEM;
}

void ioacct_darshan_heatmaps_free(struct ioacct_darshan_heatmap *h, size_t n)
{
	for (size_t i = 0; h && i < n; i++) {
		free(h[i].read_bins);
		free(h[i].write_bins);
	}
	free(h);
}

/* One record per rank of ranks[], each bin of the grid split over them as above. */
static int per_rank(const struct ioacct_report *r, const bool *keep, const struct grid *g,
		    const int64_t *ranks, size_t nr, uint64_t id, struct ioacct_darshan_heatmap *h)
{
	double *est = calloc(nr * g->nbins, sizeof(double));
	double *tot = calloc(nr, sizeof(double));
	uint64_t *share = calloc(nr, sizeof(uint64_t));
	struct rest *rest = calloc(nr, sizeof(*rest));
	int ret = est && tot && share && rest ? 0 : -ENOMEM;

	for (size_t k = 0; !ret && k < nr; k++)
		ret = heatmap_new(&h[k], g, id, ranks[k]);
	for (int d = 0; !ret && d < IOACCT_DIR_COUNT; d++) {
		memset(est, 0, nr * g->nbins * sizeof(double));
		estimate(r, keep, g, ranks, nr, d, est);
		for (size_t k = 0; k < nr; k++) {
			tot[k] = 0;
			for (uint64_t t = 0; t < g->nbins; t++)
				tot[k] += est[k * g->nbins + t];
		}
		for (uint64_t t = 0; t < g->nbins; t++) {
			double here = 0;

			if (!g->bytes[d][t])
				continue;
			for (size_t k = 0; k < nr; k++)
				here += est[k * g->nbins + t];
			/* A bin no window reaches: the ranks' shares of the whole job. */
			if (here > 0)
				split(g->bytes[d][t], est + t, g->nbins, nr, share, rest);
			else
				split(g->bytes[d][t], tot, 1, nr, share, rest);
			for (size_t k = 0; k < nr; k++)
				(d == IOACCT_DIR_WRITE ? h[k].write_bins : h[k].read_bins)[t] =
					(int64_t)share[k];
		}
	}
	free(est);
	free(tot);
	free(share);
	free(rest);
	return ret;
}

int ioacct_darshan_heatmaps(const struct ioacct_report *r, const bool *keep,
			    struct ioacct_darshan_heatmap **out, size_t *n, bool *estimated)
{
	static const char name[] = "heatmap:POSIX";
	uint64_t id = ioacct_darshan_hash(name, strlen(name), 0);
	struct grid g = { 0 };
	struct ioacct_darshan_heatmap *h = NULL;
	int64_t *ranks = calloc(r->jd->nfiles + 1, sizeof(*ranks));
	size_t nr = 0;
	bool any;
	int ret = ranks ? grid_of(r, keep, &g, &any) : -ENOMEM;

	*out = NULL;
	*n = 0;
	*estimated = false;
	if (ret || !any)
		goto out;
	nr = ranks_of(r, keep, ranks);
	h = calloc(nr > 1 ? nr : 1, sizeof(*h));
	if (!h) {
		ret = -ENOMEM;
		goto out;
	}
	if (nr <= 1) {
		/* One rank at most: the job's bins are that rank's (rank 0: Darshan's one process). */
		nr = 1;
		ret = heatmap_new(&h[0], &g, id, 0);
		for (uint64_t t = 0; !ret && t < g.nbins; t++) {
			h[0].read_bins[t] = (int64_t)g.bytes[IOACCT_DIR_READ][t];
			h[0].write_bins[t] = (int64_t)g.bytes[IOACCT_DIR_WRITE][t];
		}
	} else {
		ret = per_rank(r, keep, &g, ranks, nr, id, h);
		*estimated = true;
	}
	if (ret) {
		ioacct_darshan_heatmaps_free(h, nr);
		goto out;
	}
	*out = h;
	*n = nr;
out:
	grid_free(&g);
	free(ranks);
	return ret;
}
