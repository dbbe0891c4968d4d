/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HTML report: one self-contained page, inline CSS and SVG, no script
 * and nothing fetched. Sections (their ids are what tests look for): job
 * summary (#summary, #job-table), advice (#advice), I/O per mount
 * (#mounts-table, #rates-table), bandwidth over time per mount (#bw-N),
 * operations per second over time (#iops-N), access sizes (#sizes-chart,
 * #sizes-table), operation counts (#ops-chart, #ops-table), time split
 * (#time-chart, #time-table), steps (#steps-table), the time series
 * (#series-table), the Darshan-named counters (#counters), MPI-IO (#mpiio,
 * render_html_mpiio.c) and HDF5 (#hdf5, render_html_hdf5.c).
 *
 * Plots are downsampled to at most PLOT_POINTS steps per line (a long job
 * with 1 s bins has 86400): each point is the mean rate over its group of
 * bins, with the highest bin of the group drawn as a light band above it.
 * Tables keep the exact numbers.
 */
#include "render.h"
#include "render_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_POINTS 600
#define SERIES_ROWS 100

/* Chart geometry, in SVG user units (the SVG scales to its box). */
#define CW 640
#define CH 250
#define ML 70
#define MR 18
#define MT 30
#define MB 46
#define PX0 ML
#define PX1 (CW - MR)
#define PY0 MT
#define PY1 (CH - MB)

#define C_READ "#2563eb"
#define C_WRITE "#ea580c"
#define C_META "#16a34a"
#define C_ERR "#dc2626"

static const char css[] =
	"*{box-sizing:border-box}"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',"
	"sans-serif;color:#1f2937;background:#f3f4f6}"
	"header{background:#1e293b;color:#f8fafc;padding:14px 28px}"
	"header h1{margin:0;font-size:21px;font-weight:600}"
	"header p{margin:2px 0 0;color:#cbd5e1}"
	"main{max-width:1320px;margin:0 auto;padding:16px 20px 28px}"
	"section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:12px 16px;"
	"margin:0 0 14px}"
	"h2{font-size:16px;margin:0 0 8px;color:#111827}"
	"h3{font-size:14px;margin:4px 0;color:#374151;font-weight:600}"
	".grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:10px 18px}"
	".narrow{max-width:660px}"
	".top{display:grid;grid-template-columns:minmax(360px,1fr) 2fr;gap:18px;align-items:start}"
	".cards{display:grid;grid-template-columns:repeat(3,1fr);gap:10px}"
	".card{border:1px solid #e5e7eb;border-radius:6px;padding:8px 10px;background:#f9fafb}"
	".card b{display:block;font-size:19px;font-weight:600;color:#111827}"
	".card span{color:#6b7280;font-size:12px}"
	".card.wide{grid-column:1/-1}"
	"table{border-collapse:collapse;font-size:13px;width:100%}"
	"th,td{padding:3px 8px;border-bottom:1px solid #eef0f3;text-align:left;white-space:nowrap}"
	"th{background:#f9fafb;color:#374151;font-weight:600}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
	"td small{color:#6b7280}"
	"#job-table th{width:9em;background:none}"
	".scroll{overflow-x:auto}"
	"figure{margin:0}"
	"figcaption{font-size:13px;color:#374151;margin:2px 0 0 4px}"
	"svg{width:100%;height:auto;display:block}"
	"svg text{font-family:inherit}"
	".advice{list-style:none;margin:0;padding:0}"
	".advice li{border-left:5px solid #9ca3af;background:#f9fafb;padding:6px 10px;"
	"margin:0 0 6px;border-radius:0 6px 6px 0}"
	".advice li.HIGH{border-color:#dc2626;background:#fef2f2}"
	".advice li.WARN{border-color:#d97706;background:#fffbeb}"
	".advice li.INFO{border-color:#2563eb;background:#eff6ff}"
	".advice li.OK{border-color:#16a34a;background:#f0fdf4}"
	".badge{display:inline-block;min-width:44px;text-align:center;font-size:11px;font-weight:700;"
	"color:#fff;border-radius:4px;padding:1px 5px;margin-right:6px;background:#6b7280}"
	".HIGH .badge{background:#dc2626}.WARN .badge{background:#d97706}"
	".INFO .badge{background:#2563eb}.OK .badge{background:#16a34a}"
	".sugg{color:#374151;margin-top:2px}"
	".nums{color:#6b7280;font-size:12px}"
	"details{margin:4px 0}summary{cursor:pointer;color:#1f2937}"
	"td.bar{width:30%}td.bar span{display:block;height:10px;background:#60a5fa;border-radius:2px}"
	"tr.slowest td{background:#fffbeb}tr.slowest td.bar span{background:#d97706}"
	/* Top files: one table per sort order, shown by its radio button (no script). */
	".fsort,.ftab{display:none}th label{cursor:pointer;text-decoration:underline dotted}"
	"#fs-0:checked~.scroll .fs-0,#fs-1:checked~.scroll .fs-1,#fs-2:checked~.scroll .fs-2,"
	"#fs-3:checked~.scroll .fs-3,#fs-4:checked~.scroll .fs-4,#fs-5:checked~.scroll .fs-5,"
	"#fs-6:checked~.scroll .fs-6,#fs-7:checked~.scroll .fs-7,#fs-8:checked~.scroll .fs-8,"
	"#fs-9:checked~.scroll .fs-9,#fs-10:checked~.scroll .fs-10{display:table}"
	".partial{color:#b45309;font-weight:600}"
	"footer{color:#6b7280;font-size:12px;text-align:center;padding:0 0 16px}";

/* ---- axes ---- */

struct axis {
	double max;      /* top of the axis, in scaled units */
	double step;
	int nticks;
	double div;      /* data / div = scaled */
	const char *unit;
};

static void nice_axis(double max, struct axis *a)
{
	double raw, mag, n, step;

	if (!(max > 0))
		max = 1;
	raw = max / 5;
	mag = pow(10, floor(log10(raw)));
	n = raw / mag;
	step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * mag;
	a->step = step;
	a->nticks = (int)ceil(max / step - 1e-9);
	if (a->nticks < 1)
		a->nticks = 1;
	a->max = a->nticks * step;
}

enum unit_kind { U_BYTES_PER_S, U_PER_S, U_COUNT, U_SECONDS };

/* Picks a unit so that numbers on the axis stay short, then nice ticks. */
static void scale_axis(double max, enum unit_kind kind, struct axis *a)
{
	static const char *const bw[] = { "B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s" };
	unsigned int u = 0;

	a->div = 1;
	switch (kind) {
	case U_BYTES_PER_S:
		while (max / a->div >= 1024 && u + 1 < ARRAY_SIZE(bw)) {
			a->div *= 1024;
			u++;
		}
		a->unit = bw[u];
		break;
	case U_PER_S:
		a->unit = "operations/s";
		if (max >= 1e6) {
			a->div = 1e6;
			a->unit = "million operations/s";
		} else if (max >= 1e4) {
			a->div = 1e3;
			a->unit = "thousand operations/s";
		}
		break;
	case U_COUNT:
		a->unit = "requests";
		break;
	case U_SECONDS:
		a->unit = "s";
		break;
	}
	nice_axis(max / a->div, a);
}

/* Short numbers for axes and bar labels: 2500000 -> "2.5M". */
static void tick_label(char *buf, size_t len, double v)
{
	static const struct {
		double scale;
		const char *suffix;
	} si[] = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e4, "k" } };

	for (size_t i = 0; i < ARRAY_SIZE(si); i++) {
		if (fabs(v) >= si[i].scale) {
			snprintf(buf, len, "%.3g%s", v / (si[i].scale == 1e4 ? 1e3 : si[i].scale),
				 si[i].suffix);
			return;
		}
	}
	if (v != 0 && fabs(v) < 0.01)
		snprintf(buf, len, "%.2g", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* Time axis of a job: seconds, minutes or hours. */
static void time_axis(double span_s, struct axis *a)
{
	a->div = 1;
	a->unit = "s";
	if (span_s > 5 * 3600) {
		a->div = 3600;
		a->unit = "h";
	} else if (span_s > 600) {
		a->div = 60;
		a->unit = "min";
	}
	nice_axis(span_s / a->div, a);
}

static double sx(double t, const struct axis *x)
{
	return PX0 + (PX1 - PX0) * (t / x->div) / x->max;
}

static double sy(double v, const struct axis *y)
{
	double s = v / y->div / y->max;

	return PY1 - (PY1 - PY0) * (s > 1 ? 1 : s);
}

static void axes(FILE *f, const struct axis *x, const struct axis *y, const char *ylabel,
		 const char *xlabel)
{
	char t[32];

	for (int i = 0; i <= y->nticks; i++) {
		double v = i * y->step, py = PY1 - (PY1 - PY0) * v / y->max;

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", PX0, PX1,
			py, py, i ? "#eceef1" : "#9ca3af");
		tick_label(t, sizeof(t), v);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
			   "fill=\"#4b5563\">%s</text>",
			PX0 - 6, py + 4, t);
	}
	for (int i = 0; i <= x->nticks; i++) {
		double v = i * x->step, px = PX0 + (PX1 - PX0) * v / x->max;

		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#9ca3af\"/>", px,
			px, PY1, PY1 + 4);
		tick_label(t, sizeof(t), v);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" "
			   "fill=\"#4b5563\">%s</text>",
			px, PY1 + 16, t);
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#9ca3af\"/>", PX0, PX0, PY0,
		PY1);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" fill=\"#374151\" "
		   "transform=\"rotate(-90 %d %d)\">",
		16, (PY0 + PY1) / 2, 16, (PY0 + PY1) / 2);
	r_html(f, ylabel);
	fprintf(f, "</text><text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
		   "fill=\"#374151\">",
		(PX0 + PX1) / 2, CH - 8);
	r_html(f, xlabel);
	fputs("</text>", f);
}

static void legend(FILE *f, int x, const char *const *names, const char *const *colors, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<rect x=\"%d\" y=\"9\" width=\"12\" height=\"12\" rx=\"2\" fill=\"%s\"/>"
			   "<text x=\"%d\" y=\"19\" font-size=\"12\" fill=\"#374151\">",
			x, colors[i], x + 16);
		r_html(f, names[i]);
		fputs("</text>", f);
		x += 28 + 7 * (int)strlen(names[i]);
	}
}

static void svg_open(FILE *f, const char *id, const char *title)
{
	fprintf(f, "<svg id=\"%s\" viewBox=\"0 0 %d %d\" role=\"img\" "
		   "xmlns=\"http://www.w3.org/2000/svg\"><title>",
		id, CW, CH);
	r_html(f, title);
	fputs("</title>", f);
}

/* ---- time-series plots ---- */

enum { S_RB, S_WB, S_RC, S_WC, S_META, S_MISS, S_MMAP, S_COUNT };

struct plot {
	size_t npts;
	uint32_t group;          /* bins per point */
	double *edge;            /* npts + 1 times, seconds */
	double *mean[S_COUNT];   /* per second, over the point's bins */
	double *max[S_COUNT];    /* the highest bin of the point, per second */
	double *buf;
};

static void plot_free(struct plot *p)
{
	free(p->buf);
}

static int plot_make(const struct ioacct_report *r, const struct ioacct_report_mount *m,
		     struct plot *p)
{
	double w = (double)r->bin_width_ns / 1e9;

	memset(p, 0, sizeof(*p));
	p->group = (r->nbins + PLOT_POINTS - 1) / PLOT_POINTS;
	if (p->group == 0)
		p->group = 1;
	p->npts = (r->nbins + p->group - 1) / p->group;
	p->buf = calloc((p->npts + 1) + 2 * S_COUNT * p->npts, sizeof(double));
	if (!p->buf)
		return -ENOMEM;
	p->edge = p->buf;
	for (int s = 0; s < S_COUNT; s++) {
		p->mean[s] = p->buf + (p->npts + 1) + (size_t)s * p->npts;
		p->max[s] = p->buf + (p->npts + 1) + (size_t)(S_COUNT + s) * p->npts;
	}
	for (size_t j = 0; j <= p->npts; j++)
		p->edge[j] = (double)j * p->group * w;
	p->edge[p->npts] = (double)r->span_ns / 1e9;
	for (size_t i = 0; i < m->nbins; i++) {
		const struct ioacct_report_bin *b = &m->bins[i];
		size_t j = b->bin / p->group;
		double bw = (double)ioacct_report_bin_width(r, b->bin) / 1e9;
		uint64_t v[S_COUNT] = { b->bytes[IOACCT_DIR_READ], b->bytes[IOACCT_DIR_WRITE],
					b->calls[IOACCT_DIR_READ], b->calls[IOACCT_DIR_WRITE], b->meta,
					b->miss_bytes, b->mmap_bytes };

		if (j >= p->npts)
			continue;
		for (int s = 0; s < S_COUNT; s++) {
			double rate = (double)v[s] / bw;

			/* A sum for now, divided by the point's width below. */
			p->mean[s][j] += (double)v[s];
			if (rate > p->max[s][j])
				p->max[s][j] = rate;
		}
	}
	for (size_t j = 0; j < p->npts; j++) {
		double width = p->edge[j + 1] - p->edge[j];

		for (int s = 0; s < S_COUNT; s++)
			p->mean[s][j] = width > 0 ? p->mean[s][j] / width : 0;
	}
	return 0;
}

/* A staircase: one horizontal step per point. */
static void step_path(FILE *f, const struct plot *p, const double *v, const struct axis *x,
		      const struct axis *y, bool area)
{
	fprintf(f, "M%.1f %.1f", sx(p->edge[0], x), area ? (double)PY1 : sy(v[0], y));
	for (size_t j = 0; j < p->npts; j++) {
		double py = sy(v[j], y);

		fprintf(f, "V%.1fH%.1f", py, sx(p->edge[j + 1], x));
	}
	if (area)
		fprintf(f, "V%dZ", PY1);
}

struct line {
	const char *name;
	const char *color;
	int s;
};

static void time_chart(FILE *f, const struct ioacct_report *r, const struct plot *p,
		       const char *id, const char *title, enum unit_kind kind,
		       const struct line *lines, size_t nlines)
{
	const char *names[4], *colors[4];
	struct axis x, y;
	double top = 0;
	char ylabel[64];

	for (size_t l = 0; l < nlines; l++)
		for (size_t j = 0; j < p->npts; j++) {
			double v = p->group > 1 ? p->max[lines[l].s][j] : p->mean[lines[l].s][j];

			if (v > top)
				top = v;
		}
	time_axis((double)r->span_ns / 1e9, &x);
	scale_axis(top, kind, &y);
	svg_open(f, id, title);
	snprintf(ylabel, sizeof(ylabel), "%s", y.unit);
	{
		char xlabel[64];

		snprintf(xlabel, sizeof(xlabel), "time since job start (%s)", x.unit);
		axes(f, &x, &y, ylabel, xlabel);
	}
	for (size_t l = 0; l < nlines; l++) {
		const double *v = p->mean[lines[l].s];

		if (p->group > 1) {
			fprintf(f, "<path d=\"");
			step_path(f, p, p->max[lines[l].s], &x, &y, true);
			fprintf(f, "\" fill=\"%s\" fill-opacity=\"0.13\" stroke=\"none\"/>", lines[l].color);
		}
		fprintf(f, "<path d=\"");
		step_path(f, p, v, &x, &y, true);
		fprintf(f, "\" fill=\"%s\" fill-opacity=\"0.10\" stroke=\"none\"/>", lines[l].color);
		fprintf(f, "<path d=\"");
		step_path(f, p, v, &x, &y, false);
		fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"/>", lines[l].color);
		names[l] = lines[l].name;
		colors[l] = lines[l].color;
	}
	if (top == 0)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" "
			   "fill=\"#6b7280\">no calls</text>",
			(PX0 + PX1) / 2, (PY0 + PY1) / 2);
	legend(f, PX0 + 4, names, colors, nlines);
	if (p->group > 1) {
		fprintf(f, "<text x=\"%d\" y=\"19\" font-size=\"11\" text-anchor=\"end\" fill=\"#6b7280\">"
			   "mean of %" PRIu32 " bins; band: highest bin</text>",
			PX1, p->group);
	}
	fputs("</svg>", f);
}

static int time_charts(FILE *f, const struct ioacct_report *r)
{
	static const struct line bw[] = {
		{ "read", C_READ, S_RB },
		{ "write", C_WRITE, S_WB },
	};
	static const struct line ops[] = {
		{ "reads", C_READ, S_RC },
		{ "writes", C_WRITE, S_WC },
		{ "metadata", C_META, S_META },
	};
	char id[32], title[PATH_MAX + 64], w[32];
	size_t nodata = 0, nocalls = 0;

	fprintf(f, "<section id=\"bandwidth\"><h2>Bandwidth over time</h2><div class=\"grid\">");
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];
		struct plot p;

		/* An empty plot says nothing the table does not: left out, and counted below. */
		if (m->op[IOACCT_OP_READ].bytes + m->op[IOACCT_OP_WRITE].bytes == 0) {
			nodata++;
			continue;
		}
		if (plot_make(r, m, &p))
			return -ENOMEM;
		snprintf(id, sizeof(id), "bw-%zu", i);
		snprintf(title, sizeof(title), "Read and write bandwidth on %s", m->path);
		fputs("<figure>", f);
		time_chart(f, r, &p, id, title, U_BYTES_PER_S, bw, ARRAY_SIZE(bw));
		fputs("<figcaption>", f);
		r_html(f, title);
		fputs(" (", f);
		r_html(f, m->fstype);
		fprintf(f, ", %s); %" PRIu32 " bin%s of %s s</figcaption></figure>",
			ioacct_fs_kind_name(m->kind), r->nbins, r->nbins == 1 ? "" : "s",
			r_secs(r->bin_width_ns, 3, w, sizeof(w)));
		plot_free(&p);
	}
	if (r->nmounts == 0)
		fputs("<p>No file-system I/O was counted.</p>", f);
	fputs("</div>", f);
	if (nodata && nodata < r->nmounts)
		fprintf(f, "<p>%zu mount%s with calls but no byte read or written %s left out (the "
			   "tables list %s).</p>", nodata, nodata == 1 ? "" : "s",
			nodata == 1 ? "is" : "are", nodata == 1 ? "it" : "them");
	else if (nodata)
		fputs("<p>No byte was read or written: the tables list the calls.</p>", f);
	fprintf(f, "</section>\n<section id=\"iops\"><h2>Operations per second over time</h2>"
		   "<div class=\"grid\">");
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];
		struct plot p;

		if (m->calls == 0) {
			nocalls++;
			continue;
		}
		if (plot_make(r, m, &p))
			return -ENOMEM;
		snprintf(id, sizeof(id), "iops-%zu", i);
		snprintf(title, sizeof(title), "Reads, writes and metadata calls per second on %s",
			 m->path);
		fputs("<figure>", f);
		time_chart(f, r, &p, id, title, U_PER_S, ops, ARRAY_SIZE(ops));
		fputs("<figcaption>", f);
		r_html(f, title);
		fputs("</figcaption></figure>", f);
		plot_free(&p);
	}
	fputs("</div>", f);
	if (nocalls)
		fprintf(f, "<p>%zu mount%s with no call (only the page-cache views saw %s) left "
			   "out.</p>", nocalls, nocalls == 1 ? "" : "s", nocalls == 1 ? "it" : "them");
	fputs("</section>\n", f);
	return 0;
}

/*
 * The page-cache hit ratio over time (issue 14): 1 - misses / bytes read
 * (read calls and mmap faults) per point, in %; no line where nothing was
 * read.
 */
static void hit_chart(FILE *f, const struct ioacct_report *r, const struct plot *p, const char *id,
		      const char *title)
{
	struct axis x, y;
	bool open = false;
	char xlabel[64];

	time_axis((double)r->span_ns / 1e9, &x);
	y.div = 1;
	y.unit = "%";
	nice_axis(100, &y);
	svg_open(f, id, title);
	snprintf(xlabel, sizeof(xlabel), "time since job start (%s)", x.unit);
	axes(f, &x, &y, "hit ratio (%)", xlabel);
	fprintf(f, "<path d=\"");
	for (size_t j = 0; j < p->npts; j++) {
		double rd = p->mean[S_RB][j] + p->mean[S_MMAP][j], miss = p->mean[S_MISS][j];
		double h = rd > 0 ? 100 * (1 - (miss < rd ? miss / rd : 1)) : -1;

		if (h < 0) {
			open = false;
			continue;
		}
		if (!open)
			fprintf(f, "M%.1f %.1f", sx(p->edge[j], &x), sy(h, &y));
		fprintf(f, "V%.1fH%.1f", sy(h, &y), sx(p->edge[j + 1], &x));
		open = true;
	}
	fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"/>", C_READ);
	fputs("</svg>", f);
}

static int hit_charts(FILE *f, const struct ioacct_report *r)
{
	char id[32], title[PATH_MAX + 64];
	bool any = false;

	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];
		struct plot p;

		if (!m->op[IOACCT_OP_CACHE_FILL].bytes && !m->op[IOACCT_OP_MMAP_FAULT].bytes)
			continue;
		if (!any)
			fputs("<section id=\"hit-ratio\"><h2>Page-cache hit ratio over time</h2>"
			      "<div class=\"grid\">", f);
		any = true;
		if (plot_make(r, m, &p))
			return -ENOMEM;
		snprintf(id, sizeof(id), "hit-%zu", i);
		snprintf(title, sizeof(title), "Page-cache hit ratio of reads and mmap faults on %s",
			 m->path);
		fputs("<figure>", f);
		hit_chart(f, r, &p, id, title);
		fputs("<figcaption>", f);
		r_html(f, title);
		fputs(": 1 - bytes brought in from storage / bytes read</figcaption></figure>", f);
		plot_free(&p);
	}
	if (any)
		fputs("</div></section>\n", f);
	return 0;
}

/* ---- bar charts ---- */

static void sizes_chart(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_counters *rd = &r->all.op[IOACCT_OP_READ], *wr = &r->all.op[IOACCT_OP_WRITE];
	static const char *const names[] = { "reads", "writes" };
	static const char *const colors[] = { C_READ, C_WRITE };
	double top = 0, slot = (double)(PX1 - PX0) / IOACCT_NR_SIZE_BINS, bw = slot * 0.36;
	struct axis y;
	char t[32];

	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		if ((double)rd->size_hist[b] > top)
			top = (double)rd->size_hist[b];
		if ((double)wr->size_hist[b] > top)
			top = (double)wr->size_hist[b];
	}
	scale_axis(top, U_COUNT, &y);
	svg_open(f, "sizes-chart", "Access sizes: requests per Darshan size bin, all mounts");
	for (int i = 0; i <= y.nticks; i++) {
		double v = i * y.step, py = PY1 - (PY1 - PY0) * v / y.max;

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", PX0, PX1,
			py, py, i ? "#eceef1" : "#9ca3af");
		tick_label(t, sizeof(t), v);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
			   "fill=\"#4b5563\">%s</text>",
			PX0 - 6, py + 4, t);
	}
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		double x = PX0 + slot * b + slot * 0.14;
		uint64_t v[2] = { rd->size_hist[b], wr->size_hist[b] };

		for (int d = 0; d < 2; d++) {
			double py = sy((double)v[d], &y);

			if (v[d] == 0)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
				   "<title>%s %s: %" PRIu64 "</title></rect>",
				x + d * bw, py, bw, PY1 - py, colors[d], names[d],
				ioacct_size_bin_label(b), v[d]);
			tick_label(t, sizeof(t), (double)v[d]);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" "
				   "fill=\"#374151\">%s</text>",
				x + d * bw + bw / 2, py - 3, t);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" "
			   "fill=\"#4b5563\">%s</text>",
			PX0 + slot * (b + 0.5), PY1 + 16, ioacct_size_bin_label(b));
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" fill=\"#374151\" "
		   "transform=\"rotate(-90 16 %d)\">requests</text>",
		16, (PY0 + PY1) / 2, (PY0 + PY1) / 2);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" fill=\"#374151\">"
		   "request size (bytes)</text>",
		(PX0 + PX1) / 2, CH - 8);
	legend(f, PX0 + 4, names, colors, 2);
	fputs("</svg>", f);
}

static void ops_chart(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_counters *op = r->all.op;
	static const char *const names[] = { "calls", "failed" };
	static const char *const colors[] = { "#64748b", C_ERR };
	const int left = 90, row = (PY1 - PY0) / IOACCT_OP_COUNT;
	double top = 0;
	struct axis x;
	char t[32];

	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		if ((double)op[k].calls > top)
			top = (double)op[k].calls;
	scale_axis(top, U_COUNT, &x);
	svg_open(f, "ops-chart", "Operation counts, all mounts");
	for (int i = 0; i <= x.nticks; i++) {
		double v = i * x.step, px = left + (PX1 - 130 - left) * v / x.max;

		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\"/>", px, px,
			PY0, PY1, i ? "#eceef1" : "#9ca3af");
		tick_label(t, sizeof(t), v);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" "
			   "fill=\"#4b5563\">%s</text>",
			px, PY1 + 16, t);
	}
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++) {
		double y0 = PY0 + row * k + 3, h = row - 6;
		double wc = (PX1 - 130 - left) * (double)op[k].calls / x.max;
		double we = (PX1 - 130 - left) * (double)op[k].errors / x.max;

		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\" "
			   "fill=\"#374151\">%s</text>",
			left - 6, y0 + h / 2 + 4, ioacct_op_name(k));
		fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", left,
			y0, wc, h, colors[0]);
		if (op[k].errors)
			fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				   "fill=\"%s\"/>",
				left, y0, we < 1 ? 1 : we, h, colors[1]);
		tick_label(t, sizeof(t), (double)op[k].calls);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#374151\">%s",
			left + wc + 4, y0 + h / 2 + 4, t);
		if (op[k].errors) {
			tick_label(t, sizeof(t), (double)op[k].errors);
			fprintf(f, " (%s failed)", t);
		}
		fputs("</text>", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" fill=\"#374151\">"
		   "calls</text>",
		(left + PX1 - 130) / 2, CH - 8);
	legend(f, left, names, colors, 2);
	fputs("</svg>", f);
}

static void time_chart_split(FILE *f, const struct ioacct_report *r)
{
	static const char *const names[] = { "read", "write", "metadata" };
	static const char *const colors[] = { C_READ, C_WRITE, C_META };
	size_t rows = r->nmounts + (r->nmounts > 1);
	const int left = 150, right = PX1 - 110;
	int h = 26, height = MT + (int)rows * (h + 10) + 20;
	char t[32];

	fprintf(f, "<svg id=\"time-chart\" viewBox=\"0 0 %d %d\" role=\"img\" "
		   "xmlns=\"http://www.w3.org/2000/svg\"><title>Time split between read, write and "
		   "metadata calls</title>",
		CW, height);
	for (size_t i = 0; i < rows; i++) {
		const struct ioacct_report_mount *m = i < r->nmounts ? &r->mounts[i] : &r->all;
		uint64_t v[3] = { m->op[IOACCT_OP_READ].ns, m->op[IOACCT_OP_WRITE].ns, m->meta_ns };
		double all = (double)(v[0] + v[1] + v[2]), x = left;
		int y = MT + (int)i * (h + 10);

		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\" "
			   "fill=\"#374151\">",
			left - 6, y + h / 2 + 4);
		r_html(f, m->path);
		fputs("</text>", f);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f3f4f6\"/>", left,
			y, right - left, h);
		for (int k = 0; k < 3 && all > 0; k++) {
			double wk = (right - left) * (double)v[k] / all;

			if (v[k] == 0)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
				   "<title>%s: %s s</title></rect>",
				x, y, wk, h, colors[k], names[k], r_secs(v[k], 6, t, sizeof(t)));
			if (wk > 44)
				fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" "
					   "fill=\"#fff\">%.0f%%</text>",
					x + wk / 2, y + h / 2 + 4, 100.0 * (double)v[k] / all);
			x += wk;
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#374151\">%s s</text>",
			right + 8, y + h / 2 + 4, r_secs(v[0] + v[1] + v[2], 3, t, sizeof(t)));
	}
	legend(f, left, names, colors, 3);
	fputs("</svg>", f);
}

/* ---- tables ---- */

static void td_bytes(FILE *f, uint64_t v)
{
	char h[32];

	fputs("<td class=\"n\">", f);
	r_u64(f, v);
	if (v >= 1024)
		fprintf(f, " <small>%s</small>", r_human_bytes((double)v, h, sizeof(h)));
	fputs("</td>", f);
}

/*
 * The end of a mount's or a step's row: bytes and calls read and written,
 * metadata calls, real errors, not found, time in calls; closes the row.
 */
static void td_totals(FILE *f, const struct ioacct_counters *op, uint64_t meta_calls,
		      uint64_t errors, const uint64_t *errclass, uint64_t ns)
{
	char t[32];

	td_bytes(f, op[IOACCT_OP_READ].bytes);
	td_bytes(f, op[IOACCT_OP_WRITE].bytes);
	r_td_u64(f, op[IOACCT_OP_READ].calls);
	r_td_u64(f, op[IOACCT_OP_WRITE].calls);
	r_td_u64(f, meta_calls);
	r_td_u64(f, ioacct_report_real_errors(errors, errclass));
	r_td_u64(f, errclass[IOACCT_ERR_NOTFOUND]);
	fprintf(f, "<td class=\"n\">%s</td></tr>", r_secs(ns, 6, t, sizeof(t)));
}

static void job_row(FILE *f, const char *key, const char *value)
{
	fprintf(f, "<tr><th>%s</th><td>", key);
	r_html(f, value);
	fputs("</td></tr>", f);
}

/* Library opens the MPI-IO watch missed (issue 39), when there were some. */
static void missed_row(FILE *f, const struct ioacct_job *j)
{
	char b[160];

	if (!j->lib_opens_missed)
		return;
	snprintf(b, sizeof(b), "%" PRIu64 " library opens not seen (the daemon was behind): an MPI "
		 "library they loaded may have had no probes, its MPI-IO calls not counted",
		 j->lib_opens_missed);
	job_row(f, "Missed", b);
}

static void summary(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_job *j = &r->jd->job;
	char b[PATH_MAX + 64], t[64];
	size_t nwarn = 0;

	fprintf(f, "<section id=\"summary\"><h2>Job</h2><div class=\"top\"><table id=\"job-table\">");
	snprintf(b, sizeof(b), "%" PRIu64, j->job_id);
	if (j->has_array)
		snprintf(b, sizeof(b), "%" PRIu64 " (array %" PRIu32 "_%" PRIu32 ")", j->job_id,
			 j->array_job_id, j->array_task_id);
	job_row(f, "Job id", b);
	job_row(f, "Name", j->name);
	snprintf(b, sizeof(b), "%s (uid %" PRIu32 ", gid %" PRIu32 ")", j->user, j->uid, j->gid);
	job_row(f, "User", b);
	snprintf(b, sizeof(b), "%s on cluster %s (%s)", j->node, j->cluster, j->source);
	job_row(f, "Node", b);
	if (r->jd->missing_nodes[0]) {
		snprintf(b, sizeof(b), "%s (no data within %" PRIu32 " s of the first node)",
			 r->jd->missing_nodes, r->jd->missing_after_s);
		job_row(f, "Missing nodes", b);
	}
	snprintf(b, sizeof(b), "%s, exit code %" PRId32, j->state, j->exit_code);
	if (j->restart)
		snprintf(b + strlen(b), sizeof(b) - strlen(b), ", run %" PRIu32 " (requeued %" PRIu32 " time%s before)",
			 j->restart, j->restart, j->restart == 1 ? "" : "s");
	job_row(f, "State", b);
	job_row(f, "Started", r_iso_time(j->start_ns, t, sizeof(t)));
	job_row(f, "Ended", j->end_ns ? r_iso_time(j->end_ns, t, sizeof(t)) : "(running)");
	if (j->end_ns > j->start_ns)
		snprintf(b, sizeof(b), "%s s", r_secs((uint64_t)(j->end_ns - j->start_ns), 3, t, sizeof(t)));
	else
		snprintf(b, sizeof(b), "(running)");
	job_row(f, "Run time", b);
	job_row(f, "Work dir", j->workdir);
	snprintf(b, sizeof(b), "%s, bins of %s s (%" PRIu32 ")", j->probe_mode,
		 r_secs(r->bin_width_ns, 3, t, sizeof(t)), r->nbins);
	job_row(f, "Probes", b);
	if (ioacct_probe_mmap_unmeasured(j->probe_mode)) {
		snprintf(b, sizeof(b), "not measured here (%s)", ioacct_probe_mmap_unmeasured(j->probe_mode));
		job_row(f, "mmap bytes", b);
	}
	if (j->skew_ns) {
		snprintf(b, sizeof(b), "%s s (the nodes' bins aligned on the first node's start, to the bin)",
			 r_secs(j->skew_ns, 3, t, sizeof(t)));
		job_row(f, "Node skew", b);
	}
	snprintf(b, sizeof(b), "%" PRIu64 " events, %" PRIu64 " bytes", j->dropped_events,
		 j->dropped_bytes);
	job_row(f, "Dropped", b);
	missed_row(f, j);
	if (r->files_partial) {
		snprintf(b, sizeof(b), "partial: max_files was reached; %" PRIu64 " calls (%" PRIu64
			 " bytes) on files past it are counted as \"other files\"",
			 r->other_calls, r->other_bytes);
		job_row(f, "Files", b);
	} else if (ioacct_probe_files_off(j->probe_mode)) {
		job_row(f, "Files", IOACCT_FILES_OFF_NOTE);
	}
	fputs("</table><div class=\"cards\">", f);
	{
		const struct ioacct_report_mount *a = &r->all;
		char h1[32], h2[32];

		fprintf(f, "<div class=\"card\"><span>Data read</span><b>%s</b><span>%" PRIu64
			   " reads</span></div>",
			r_human_bytes((double)a->op[IOACCT_OP_READ].bytes, h1, sizeof(h1)),
			a->op[IOACCT_OP_READ].calls);
		fprintf(f, "<div class=\"card\"><span>Data written</span><b>%s</b><span>%" PRIu64
			   " writes</span></div>",
			r_human_bytes((double)a->op[IOACCT_OP_WRITE].bytes, h1, sizeof(h1)),
			a->op[IOACCT_OP_WRITE].calls);
		fprintf(f, "<div class=\"card\"><span>Time in I/O calls</span><b>%s s</b><span>%.0f%% "
			   "metadata</span></div>",
			r_secs(a->ns, 3, t, sizeof(t)),
			a->ns ? 100.0 * (double)a->meta_ns / (double)a->ns : 0.0);
		fprintf(f, "<div class=\"card\"><span>Peak read bandwidth</span><b>%s/s</b><span>mean "
			   "%s/s</span></div>",
			r_human_bytes(a->dir[IOACCT_DIR_READ].bw.max, h1, sizeof(h1)),
			r_human_bytes(a->dir[IOACCT_DIR_READ].bw.mean, h2, sizeof(h2)));
		fprintf(f, "<div class=\"card\"><span>Peak write bandwidth</span><b>%s/s</b><span>mean "
			   "%s/s</span></div>",
			r_human_bytes(a->dir[IOACCT_DIR_WRITE].bw.max, h1, sizeof(h1)),
			r_human_bytes(a->dir[IOACCT_DIR_WRITE].bw.mean, h2, sizeof(h2)));
		for (size_t i = 0; i < r->nadvice; i++)
			nwarn += r->advice[i].level >= IOACCT_ADVICE_WARN;
		fprintf(f, "<div class=\"card\"><span>Metadata calls</span><b>%" PRIu64 "</b><span>%zu "
			   "mount%s, %zu warning%s</span></div>",
			a->meta_calls, r->nmounts, r->nmounts == 1 ? "" : "s", nwarn,
			nwarn == 1 ? "" : "s");
		/* Lookups that found nothing are set apart: every shell and loader makes them. */
		fprintf(f, "<div class=\"card wide\" id=\"errors-card\"><span>Real errors</span><b>%" PRIu64
			   "</b><span>%" PRIu64 " out of space, %" PRIu64 " I/O, %" PRIu64 " denied, %" PRIu64
			   " other; %" PRIu64 " lookups found nothing (not errors)</span></div>",
			ioacct_report_real_errors(a->errors, a->errclass), a->errclass[IOACCT_ERR_SPACE],
			a->errclass[IOACCT_ERR_IO], a->errclass[IOACCT_ERR_ACCESS],
			a->errclass[IOACCT_ERR_OTHER], a->errclass[IOACCT_ERR_NOTFOUND]);
	}
	fputs("</div></div></section>\n", f);
}

static void values(FILE *f, const struct ioacct_advice_value *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s%s = ", i ? ", " : "", v[i].name);
		if (v[i].is_int)
			r_u64(f, v[i].u);
		else
			fprintf(f, "%.3f", v[i].d);
	}
}

static void advice(FILE *f, const struct ioacct_report *r)
{
	fputs("<section id=\"advice\"><h2>Advice</h2><ul class=\"advice\">", f);
	for (size_t i = 0; i < r->nadvice; i++) {
		const struct ioacct_advice *a = &r->advice[i];
		const char *lvl = ioacct_advice_level_name(a->level);

		fprintf(f, "<li class=\"%s\"><span class=\"badge\">%s</span><b>%s</b>: ", lvl, lvl,
			a->rule);
		r_html(f, a->message);
		fputs("<div class=\"sugg\">&rarr; ", f);
		r_html(f, a->suggestion);
		fputs("</div>", f);
		if (a->nvalues || a->nthresholds) {
			fputs("<div class=\"nums\">measured: ", f);
			values(f, a->values, a->nvalues);
			if (a->nthresholds) {
				fputs("; thresholds: ", f);
				values(f, a->thresholds, a->nthresholds);
			}
			fputs("</div>", f);
		}
		fputs("</li>", f);
	}
	fputs("</ul></section>\n", f);
}

static void mounts_tables(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Mount", "FS type", "Kind", "Bytes read", "Bytes written",
					     "Reads", "Writes", "Metadata calls", "Real errors",
					     "Not found", "Time in calls (s)" };
	static const char *const rcols[] = { "Mount", "Direction", "Min MiB/s", "Max MiB/s",
					      "Mean MiB/s", "Peak at (s)", "Min IOPS", "Max IOPS",
					      "Mean IOPS" };
	char t[32];

	fputs("<section id=\"mounts\"><h2>I/O per mount</h2><div class=\"scroll\">"
	      "<table id=\"mounts-table\">",
	      f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 3);
	fputs("<tbody>", f);
	for (size_t i = 0; r_mount_row(r, i); i++) {
		const struct ioacct_report_mount *m = r_mount_row(r, i);

		fputs("<tr>", f);
		r_td_text(f, i < r->nmounts ? m->path : "all mounts");
		r_td_text(f, i < r->nmounts ? m->fstype : "");
		r_td_text(f, i < r->nmounts ? ioacct_fs_kind_name(m->kind) : "");
		td_totals(f, m->op, m->meta_calls, m->errors, m->errclass, m->ns);
	}
	fprintf(f, "</tbody></table></div><h3>Bandwidth and IOPS over the job's %" PRIu32
		   " bin%s of %s s (min / max / mean; the mean is the total over the run time)</h3>"
		   "<div class=\"scroll\"><table id=\"rates-table\">",
		r->nbins, r->nbins == 1 ? "" : "s", r_secs(r->bin_width_ns, 3, t, sizeof(t)));
	r_th_row(f, rcols, ARRAY_SIZE(rcols), 2);
	fputs("<tbody>", f);
	for (size_t i = 0; r_mount_row(r, i); i++) {
		const struct ioacct_report_mount *m = r_mount_row(r, i);

		for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
			const struct ioacct_report_dir *x = &m->dir[d];

			if (x->calls == 0 && i < r->nmounts)
				continue;
			fputs("<tr>", f);
			r_td_text(f, i < r->nmounts ? m->path : "all mounts");
			r_td_text(f, ioacct_dir_name(d));
			fprintf(f, "<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
				   "<td class=\"n\">%.3f</td><td class=\"n\">%s</td>"
				   "<td class=\"n\">%.1f</td><td class=\"n\">%.1f</td>"
				   "<td class=\"n\">%.1f</td></tr>",
				x->bw.min / MIB_D, x->bw.max / MIB_D, x->bw.mean / MIB_D,
				x->bytes ? r_secs((uint64_t)x->bw.max_bin * r->bin_width_ns, 1, t, sizeof(t))
					 : "-",
				x->iops.min, x->iops.max, x->iops.mean);
		}
	}
	fputs("</tbody></table></div></section>\n", f);
}

static void sizes_section(FILE *f, const struct ioacct_report *r)
{
	fputs("<section id=\"sizes\"><h2>Access sizes</h2><figure class=\"narrow\">", f);
	sizes_chart(f, r);
	fputs("<figcaption>Requests per size bin (Darshan's bins), all mounts</figcaption></figure>"
	      "<div class=\"scroll\"><table id=\"sizes-table\"><thead><tr><th>Mount</th>"
	      "<th>Dir</th>",
	      f);
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		fprintf(f, "<th class=\"n\">%s</th>", ioacct_size_bin_label(b));
	fputs("</tr></thead><tbody>", f);
	for (struct r_cell it = { 0 }; r_next_dir(r, &it);) {
		fputs("<tr>", f);
		r_td_text(f, it.m->path);
		r_td_text(f, ioacct_dir_name(it.k));
		for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
			r_td_u64(f, it.c->size_hist[b]);
		fputs("</tr>", f);
	}
	fputs("</tbody></table></div></section>\n", f);
}

static void ops_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Mount", "Operation", "Calls", "Real errors",
					     "Not found", "Bytes", "Time (s)" };
	static const char *const ecols[] = { "Mount", "Operation", "Failed", "Not found",
					      "Access", "Space", "I/O", "Other", "Unclassified" };
	bool any = false;
	char t[32];

	fputs("<section id=\"ops\"><h2>Operation counts</h2><div class=\"grid\"><figure>", f);
	ops_chart(f, r);
	fputs("<figcaption>Calls per operation, all mounts (failed calls in red)</figcaption>"
	      "</figure><div class=\"scroll\"><table id=\"ops-table\">",
	      f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 2);
	fputs("<tbody>", f);
	for (struct r_cell it = { 0 }; r_next_op(r, &it, R_CELL_CALLS);) {
		const struct ioacct_counters *c = it.c;

		fputs("<tr>", f);
		r_td_text(f, it.m->path);
		r_td_text(f, ioacct_op_name(it.k));
		r_td_u64(f, c->calls);
		r_td_u64(f, ioacct_counters_real_errors(c));
		r_td_u64(f, c->errclass[IOACCT_ERR_NOTFOUND]);
		td_bytes(f, c->bytes);
		fprintf(f, "<td class=\"n\">%s</td></tr>", r_secs(c->ns, 6, t, sizeof(t)));
	}
	fputs("</tbody></table></div></div><h3>Failed calls by class (not found: ENOENT, ENOTDIR; "
	      "access: EACCES, EPERM, EROFS; space: ENOSPC, EDQUOT, EFBIG; I/O: EIO, ESTALE, "
	      "ETIMEDOUT, ...; other: the rest; unclassified: stored before ioacct classified "
	      "errors)</h3><div class=\"scroll\"><table id=\"errors-table\">",
	      f);
	r_th_row(f, ecols, ARRAY_SIZE(ecols), 2);
	fputs("<tbody>", f);
	for (struct r_cell it = { 0 }; r_next_op(r, &it, R_CELL_ERRORS);) {
		any = true;
		fputs("<tr>", f);
		r_td_text(f, it.m->path);
		r_td_text(f, ioacct_op_name(it.k));
		r_td_u64(f, it.c->errors);
		for (unsigned int e = 0; e < IOACCT_NR_ERR_CLASSES; e++)
			r_td_u64(f, it.c->errclass[e]);
		r_td_u64(f, ioacct_counters_unclassified(it.c));
		fputs("</tr>", f);
	}
	if (!any)
		fprintf(f, "<tr><td colspan=\"%zu\">No call failed.</td></tr>", ARRAY_SIZE(ecols));
	fputs("</tbody></table></div></section>\n", f);
}

static void time_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Mount", "Read (s)", "Write (s)", "Metadata (s)",
					     "Read %", "Write %", "Metadata %" };
	char a[32];

	fputs("<section id=\"time\"><h2>Time in I/O calls: read, write, metadata</h2>"
	      "<div class=\"grid\"><figure>",
	      f);
	time_chart_split(f, r);
	fputs("<figcaption>Share of the time spent in calls (metadata: every call but reads and "
	      "writes)</figcaption></figure><div class=\"scroll\"><table id=\"time-table\">",
	      f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 1);
	fputs("<tbody>", f);
	for (size_t i = 0; r_mount_row(r, i); i++) {
		const struct ioacct_report_mount *m = r_mount_row(r, i);
		uint64_t v[3] = { m->op[IOACCT_OP_READ].ns, m->op[IOACCT_OP_WRITE].ns, m->meta_ns };
		double all = (double)(v[0] + v[1] + v[2]);

		if (all == 0)
			all = 1;
		fputs("<tr>", f);
		r_td_text(f, i < r->nmounts ? m->path : "all mounts");
		for (int k = 0; k < 3; k++)
			fprintf(f, "<td class=\"n\">%s</td>", r_secs(v[k], 6, a, sizeof(a)));
		for (int k = 0; k < 3; k++)
			fprintf(f, "<td class=\"n\">%.1f</td>", 100.0 * (double)v[k] / all);
		fputs("</tr>", f);
	}
	fputs("</tbody></table></div></div></section>\n", f);
}

static void steps_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Step", "State", "Exit", "Start (s)", "End (s)",
					     "Bytes read", "Bytes written", "Reads", "Writes",
					     "Metadata calls", "Real errors", "Not found",
					     "Time in calls (s)" };
	const struct ioacct_job *j = &r->jd->job;
	char name[24], t[32];

	fputs("<section id=\"steps\"><h2>Steps</h2><div class=\"scroll\"><table id=\"steps-table\">", f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 2);
	fputs("<tbody>", f);
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct ioacct_report_step *s = &r->steps[i];
		const struct ioacct_step *st = s->step;

		fputs("<tr>", f);
		r_td_text(f, ioacct_step_name(s->step_id, name, sizeof(name)));
		r_td_text(f, st ? st->state : "-");
		fprintf(f, "<td class=\"n\">%" PRId32 "</td>", st ? st->exit_code : 0);
		fprintf(f, "<td class=\"n\">%s</td>",
			st && st->start_ns >= j->start_ns
				? r_secs((uint64_t)(st->start_ns - j->start_ns), 3, t, sizeof(t))
				: "-");
		fprintf(f, "<td class=\"n\">%s</td>",
			st && st->end_ns && st->end_ns >= j->start_ns
				? r_secs((uint64_t)(st->end_ns - j->start_ns), 3, t, sizeof(t))
				: "-");
		td_totals(f, s->op, s->meta_calls, s->errors, s->errclass, s->ns);
	}
	fputs("</tbody></table></div></section>\n", f);
}

/* ---- top files (issue 26) ---- */

/* The top files' table: this many rows, per sort order. */
#define TOP_FILES 20

/* The sort orders of the top files, each a column but the first (bytes moved, then time). */
enum fkey { FK_MOVED, FK_PATH, FK_MOUNT, FK_RANK, FK_READ, FK_WRITTEN, FK_CALLS, FK_READ_NS,
	    FK_WRITE_NS, FK_META_NS, FK_MMAP, FK_COUNT };
static const char *const fkey_id[FK_COUNT] = { "files-table", "files-by-path", "files-by-mount",
					       "files-by-rank", "files-by-read", "files-by-written",
					       "files-by-calls", "files-by-read-time",
					       "files-by-write-time", "files-by-meta-time",
					       "files-by-mmap" };
static const char *const fkey_col[FK_COUNT] = { NULL, "Path", "Mount", "Rank", "Bytes read",
						"Bytes written", "Calls", "Read (s)", "Write (s)",
						"Metadata (s)", "mmap bytes" };

static const char *fpath(const struct ioacct_report_file *x)
{
	if (x->other)
		return "(other files)";
	return x->sum.path[0] ? x->sum.path : "(path unknown)";
}

static uint64_t fkey_num(const struct ioacct_report_file *x, enum fkey k)
{
	switch (k) {
	case FK_READ:
		return x->sum.bytes_read;
	case FK_WRITTEN:
		return x->sum.bytes_written;
	case FK_CALLS:
		return x->calls;
	case FK_READ_NS:
		return x->sum.read_ns;
	case FK_WRITE_NS:
		return x->sum.write_ns;
	case FK_MMAP:
		return x->sum.mmap_bytes;
	default:
		return x->sum.meta_ns;
	}
}

/* Names and ranks ascending, numbers descending; the report's order breaks ties. */
static int cmp_fkey(const void *a, const void *b, void *arg)
{
	const struct ioacct_report_file *x = *(const struct ioacct_report_file *const *)a;
	const struct ioacct_report_file *y = *(const struct ioacct_report_file *const *)b;
	enum fkey k = *(const enum fkey *)arg;
	int c = 0;

	if (k == FK_PATH)
		c = strcmp(fpath(x), fpath(y));
	else if (k == FK_MOUNT)
		c = strcmp(x->mount ? x->mount->path : "", y->mount ? y->mount->path : "");
	else if (k == FK_RANK)
		c = (x->top_rank > y->top_rank) - (x->top_rank < y->top_rank);
	else if (k != FK_MOVED)
		c = (fkey_num(y, k) > fkey_num(x, k)) - (fkey_num(y, k) < fkey_num(x, k));
	return c ? c : (x > y) - (x < y);
}

/* mmap: the job's mmap bytes were measured (else "-", not 0). */
static void file_row(FILE *f, const struct ioacct_report_file *x, bool mmap)
{
	char t[32];

	fputs("<tr>", f);
	r_td_text(f, fpath(x));
	r_td_text(f, x->mount ? x->mount->path : "-");
	if (x->top_rank < 0)
		fputs("<td class=\"n\">-", f);
	else
		fprintf(f, "<td class=\"n\">%" PRId32, x->top_rank);
	if (x->nranks > 1)
		fprintf(f, " <small>of %" PRIu32 "</small>", x->nranks);
	fputs("</td>", f);
	td_bytes(f, x->sum.bytes_read);
	td_bytes(f, x->sum.bytes_written);
	r_td_u64(f, x->calls);
	fprintf(f, "<td class=\"n\">%s</td>", r_secs(x->sum.read_ns, 6, t, sizeof(t)));
	fprintf(f, "<td class=\"n\">%s</td>", r_secs(x->sum.write_ns, 6, t, sizeof(t)));
	fprintf(f, "<td class=\"n\">%s</td>", r_secs(x->sum.meta_ns, 6, t, sizeof(t)));
	if (mmap)
		td_bytes(f, x->sum.mmap_bytes);
	else
		fputs("<td class=\"n\">-</td>", f);
	fputs("</tr>", f);
}

/* One sort order's table: its top rows; a column's name selects its order. */
static void files_table(FILE *f, const struct ioacct_report *r,
			const struct ioacct_report_file **idx, enum fkey k)
{
	size_t n = r->nfiles < TOP_FILES ? r->nfiles : TOP_FILES;

	for (size_t i = 0; i < r->nfiles; i++)
		idx[i] = &r->files[i];
	qsort_r(idx, r->nfiles, sizeof(*idx), cmp_fkey, &k);
	fprintf(f, "<table id=\"%s\" class=\"ftab fs-%d\"><thead><tr>", fkey_id[k], (int)k);
	for (int c = FK_PATH; c < FK_COUNT; c++)
		fprintf(f, "<th%s><label for=\"fs-%d\">%s%s</label></th>", c <= FK_MOUNT ? "" : " class=\"n\"",
			c, fkey_col[c], c == (int)k ? " &#9662;" : "");
	fputs("</tr></thead><tbody>", f);
	for (size_t i = 0; i < n; i++)
		file_row(f, idx[i], r->files_mmap);
	fputs("</tbody></table>", f);
}

/*
 * The files that moved most, with their rank that moved most: one table per
 * sort order, each its own top rows, shown by a radio button that the
 * column names are labels of (a page without script can still sort).
 */
static int files_section(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_report_file **idx;

	if (ioacct_probe_files_off(r->jd->job.probe_mode)) {
		fprintf(f, "<section id=\"files\"><h2>Top files</h2><p id=\"files-off\">%s.</p>"
			   "</section>\n", IOACCT_FILES_OFF_NOTE);
		return 0;
	}
	if (r->nrecords == 0)
		return 0;
	idx = calloc(r->nfiles ? r->nfiles : 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	fprintf(f, "<section id=\"files\"><h2>Top files</h2><p>The %zu files of %zu that moved most "
		   "(<label for=\"fs-0\">bytes moved, then time</label>), or that lead the column "
		   "whose name is clicked; rank: the one that moved most. Every record: "
		   "<code>ioreport --files</code>.</p>",
		r->nfiles < TOP_FILES ? r->nfiles : TOP_FILES, r->nfiles);
	if (r->files_partial)
		fprintf(f, "<p class=\"partial\" id=\"files-partial\">Partial: max_files was reached; "
			   "%" PRIu64 " calls (%" PRIu64 " bytes) on files past it are counted as "
			   "&quot;other files&quot;.</p>",
			r->other_calls, r->other_bytes);
	for (int k = 0; k < FK_COUNT; k++)
		fprintf(f, "<input type=\"radio\" name=\"fsort\" class=\"fsort\" id=\"fs-%d\"%s>", k,
			k == 0 ? " checked" : "");
	fputs("<div class=\"scroll\">", f);
	for (int k = 0; k < FK_COUNT; k++)
		files_table(f, r, idx, (enum fkey)k);
	fputs("</div></section>\n", f);
	free(idx);
	return 0;
}

/*
 * A job of several nodes from the cluster store: each node's own totals, with
 * a bar of its time in I/O calls; the slowest node (the most time in calls,
 * the one that sets the pace) is marked, as the node-imbalance advice names it.
 */
static void nodes_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Node", "Start (s)", "Bytes read", "Bytes written",
					     "Reads", "Writes", "Time in calls (s)", "" };
	const struct ioacct_jobdata *jd = r->jd;
	uint64_t max_ns = 0;
	size_t slowest = 0;
	char t[32];

	if (jd->nnodes == 0)
		return;
	for (size_t i = 0; i < jd->nnodes; i++)
		if (jd->nodes[i].ns > max_ns) {
			max_ns = jd->nodes[i].ns;
			slowest = i;
		}
	fprintf(f, "<section id=\"nodes\"><h2>Nodes</h2><p class=\"nums\">%zu nodes; start from the "
		   "job's start (the earliest node's)", jd->nnodes);
	if (max_ns) {
		fputs("; the slowest node, ", f);
		r_html(f, jd->nodes[slowest].node);
		fputs(", spent the most time in I/O calls", f);
	}
	fputs("</p><div class=\"scroll\"><table id=\"nodes-table\">", f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 1);
	fputs("<tbody>", f);
	for (size_t i = 0; i < jd->nnodes; i++) {
		const struct ioacct_node_part *p = &jd->nodes[i];
		bool slow = max_ns && i == slowest;

		fprintf(f, "<tr%s>", slow ? " class=\"slowest\"" : "");
		r_td_text(f, p->node);
		fprintf(f, "<td class=\"n\">%s</td>",
			p->start_ns >= jd->job.start_ns
				? r_secs((uint64_t)(p->start_ns - jd->job.start_ns), 3, t, sizeof(t))
				: "-");
		td_bytes(f, p->read_bytes);
		td_bytes(f, p->write_bytes);
		r_td_u64(f, p->reads);
		r_td_u64(f, p->writes);
		fprintf(f, "<td class=\"n\">%s</td>", r_secs(p->ns, 6, t, sizeof(t)));
		fprintf(f, "<td class=\"bar\"><span style=\"width:%.1f%%\" title=\"%s\"></span></td></tr>",
			max_ns ? 100.0 * (double)p->ns / (double)max_ns : 0.0, slow ? "slowest" : "");
	}
	fputs("</tbody></table></div></section>\n", f);
}

static void series_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Bins", "Start (s)", "Mount", "Bytes read",
					     "Bytes written", "Reads", "Writes", "Metadata calls" };
	uint32_t group = 1;
	size_t maxbins = 0;
	char t[32];

	for (size_t i = 0; i < r->nmounts; i++)
		if (r->mounts[i].nbins > maxbins)
			maxbins = r->mounts[i].nbins;
	if (maxbins > 2 * SERIES_ROWS)
		group = (r->nbins + SERIES_ROWS - 1) / SERIES_ROWS;
	fprintf(f, "<section id=\"series\"><details><summary><b>Time series table</b> (%" PRIu32
		   " bin%s of %s s",
		r->nbins, r->nbins == 1 ? "" : "s", r_secs(r->bin_width_ns, 3, t, sizeof(t)));
	if (group > 1)
		fprintf(f, ", in groups of %" PRIu32, group);
	fputs("; rows without calls left out)</summary><div class=\"scroll\">"
	      "<table id=\"series-table\">",
	      f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 1);
	fputs("<tbody>", f);
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];
		size_t k = 0;

		while (k < m->nbins) {
			uint32_t g = m->bins[k].bin / group;
			struct ioacct_report_bin sum = { 0 };
			uint64_t last = (uint64_t)g * group + group - 1;

			for (; k < m->nbins && m->bins[k].bin / group == g; k++) {
				for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
					sum.bytes[d] += m->bins[k].bytes[d];
					sum.calls[d] += m->bins[k].calls[d];
				}
				sum.meta += m->bins[k].meta;
			}
			if (last >= r->nbins)
				last = r->nbins - 1;
			if (group > 1 && last > (uint64_t)g * group)
				fprintf(f, "<tr><td>%" PRIu64 "-%" PRIu64 "</td>", (uint64_t)g * group, last);
			else
				fprintf(f, "<tr><td>%" PRIu64 "</td>", (uint64_t)g * group);
			fprintf(f, "<td class=\"n\">%s</td>",
				r_secs((uint64_t)g * group * r->bin_width_ns, 3, t, sizeof(t)));
			r_td_text(f, m->path);
			td_bytes(f, sum.bytes[IOACCT_DIR_READ]);
			td_bytes(f, sum.bytes[IOACCT_DIR_WRITE]);
			r_td_u64(f, sum.calls[IOACCT_DIR_READ]);
			r_td_u64(f, sum.calls[IOACCT_DIR_WRITE]);
			r_td_u64(f, sum.meta);
			fputs("</tr>", f);
		}
	}
	fputs("</tbody></table></div></details></section>\n", f);
}

static void counters_section(FILE *f, const struct ioacct_report *r)
{
	char t[32];

	fputs("<section id=\"counters\"><h2>Counters under Darshan's names, for comparison with "
	      "<code>darshan-parser --total</code></h2>"
	      "<p class=\"nums\">As <code>darshan-parser --total</code> prints them; counts are "
	      "successful calls, times are seconds. IOACCT_* counters have no Darshan "
	      "equivalent.</p><div class=\"grid\">",
	      f);
	for (size_t i = 0; i < r->nmounts; i++) {
		struct ioacct_named_counter c[IOACCT_NAMED_COUNTERS];
		size_t n = ioacct_report_counters(&r->mounts[i], c);

		fputs("<details><summary>", f);
		r_html(f, r->mounts[i].path);
		fputs(" (", f);
		r_html(f, r->mounts[i].fstype);
		fputs(")</summary><table class=\"counters\"><tbody>", f);
		for (size_t k = 0; k < n; k++) {
			fprintf(f, "<tr><td><code>total_%s</code></td><td class=\"n\">", c[k].name);
			if (c[k].kind == IOACCT_CK_TIME_NS)
				fputs(r_secs(c[k].value, 6, t, sizeof(t)), f);
			else
				r_u64(f, c[k].value);
			fputs("</td></tr>", f);
		}
		fputs("</tbody></table></details>", f);
	}
	fputs("</div></section>\n", f);
}

int ioacct_render_html(FILE *f, const struct ioacct_report *r)
{
	const struct ioacct_job *j = &r->jd->job;
	char t[64];
	int ret;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	      "<meta name=\"generator\" content=\"ioacct\"><title>",
	      f);
	fprintf(f, "I/O report: job %" PRIu64 " ", j->job_id);
	r_html(f, j->name);
	fputs("</title><style>", f);
	fputs(css, f);
	fputs("</style></head>\n<body><header><h1>", f);
	fprintf(f, "I/O report: job %" PRIu64 " &middot; ", j->job_id);
	r_html(f, j->name);
	fputs("</h1><p>", f);
	r_html(f, j->user);
	fputs(" on ", f);
	r_html(f, j->node);
	fputs(" &middot; ", f);
	r_html(f, j->state);
	fputs(" &middot; ", f);
	if (j->end_ns > j->start_ns)
		fprintf(f, "%s s", r_secs((uint64_t)(j->end_ns - j->start_ns), 3, t, sizeof(t)));
	else
		fputs("running", f);
	fprintf(f, " &middot; started %s</p></header>\n<main>\n", r_iso_time(j->start_ns, t, sizeof(t)));
	summary(f, r);
	advice(f, r);
	mounts_tables(f, r);
	ret = time_charts(f, r);
	if (!ret)
		ret = hit_charts(f, r);
	if (ret)
		return ret;
	sizes_section(f, r);
	ops_section(f, r);
	r_html_rpc_section(f, r);
	time_section(f, r);
	steps_section(f, r);
	ret = files_section(f, r);
	if (ret)
		return ret;
	r_html_mpiio_section(f, r);
	r_html_hdf5_section(f, r);
	nodes_section(f, r);
	series_section(f, r);
	counters_section(f, r);
	fprintf(f, "</main><footer>ioacct report version %d &middot; counted by ioacct's eBPF "
		   "probes (", IOACCT_REPORT_VERSION);
	r_html(f, j->probe_mode);
	fputs("); times are spent in system calls</footer></body></html>\n", f);
	return r_finish(f);
}
