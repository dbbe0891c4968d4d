// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HTML report's HDF5 section (issue 39): per HDF5 file, what its
 * datasets asked for beside the POSIX bytes of the file; then the datasets
 * that moved most (their records summed over processes, by name).
 */
#include "render.h"
#include "render_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The datasets shown, most bytes first. */
#define H5_TOP_DATASETS 20

static void td_bytes(FILE *f, uint64_t bytes, uint64_t unsized)
{
	fputs("<td class=\"n\">", f);
	if (unsized)
		fputs("&ge;", f);
	r_u64(f, bytes);
	fputs("</td>", f);
}

static int by_bytes(const void *a, const void *b)
{
	const struct ioacct_h5rec *x = a, *y = b;
	uint64_t bx = x->bytes_read + x->bytes_written, by = y->bytes_read + y->bytes_written;

	return bx < by ? 1 : bx > by ? -1 : strcmp(x->name, y->name);
}

/* The job's dataset records summed per name, most bytes first; NULL when none (or no memory). */
static struct ioacct_h5rec *datasets(const struct ioacct_jobdata *jd, size_t *n)
{
	struct ioacct_h5rec *d = calloc(jd->nh5 ? jd->nh5 : 1, sizeof(*d));
	size_t k;

	*n = 0;
	for (size_t i = 0; d && i < jd->nh5; i++) {
		if (jd->h5[i].kind != IOACCT_H5REC_DATASET)
			continue;
		for (k = 0; k < *n && strcmp(d[k].name, jd->h5[i].name); k++)
			;
		if (k == *n)
			d[(*n)++] = jd->h5[i];
		else
			ioacct_h5rec_add(&d[k], &jd->h5[i]);
	}
	if (d)
		qsort(d, *n, sizeof(*d), by_bytes);
	return d;
}

void r_html_hdf5_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const fcols[] = { "File", "Dataset records", "Bytes read (datasets)",
					      "Bytes written (datasets)", "POSIX bytes read",
					      "POSIX bytes written" };
	static const char *const dcols[] = { "Dataset", "Opens", "Reads", "Writes", "Bytes read",
					      "Bytes written", "Read/write switches", "Read (s)",
					      "Write (s)", "Metadata (s)" };
	const struct ioacct_jobdata *jd = r->jd;
	struct ioacct_h5rec *d;
	size_t nd;
	char t[32];

	if (!jd->h5_loaded || !jd->nh5)
		return;
	fprintf(f, "<section id=\"hdf5\"><h2>HDF5</h2><p class=\"nums\">%zu files, %zu records "
		   "(Darshan's H5F and H5D, per process): what the datasets' reads and writes "
		   "asked for beside what the POSIX calls moved on the same file (chunking, "
		   "compression, metadata).</p><div class=\"scroll\"><table id=\"hdf5-files\">",
		r->nh5_files, jd->nh5);
	r_th_row(f, fcols, ARRAY_SIZE(fcols), 1);
	fputs("<tbody>", f);
	for (size_t i = 0; i < r->nh5_files; i++) {
		const struct ioacct_report_h5_file *x = &r->h5_files[i];

		fputs("<tr>", f);
		r_td_text(f, x->name);
		r_td_u64(f, x->ndatasets);
		td_bytes(f, x->bytes_read, x->unsized_reads);
		td_bytes(f, x->bytes_written, x->unsized_writes);
		if (x->posix_found) {
			r_td_u64(f, x->posix_read);
			r_td_u64(f, x->posix_written);
		} else {
			r_td_text(f, "none");
			r_td_text(f, "none");
		}
		fputs("</tr>", f);
	}
	fputs("</tbody></table></div>", f);
	d = datasets(jd, &nd);
	if (d && nd) {
		fprintf(f, "<h3>Datasets that moved most</h3><div class=\"scroll\">"
			   "<table id=\"hdf5-datasets\">");
		r_th_row(f, dcols, ARRAY_SIZE(dcols), 1);
		fputs("<tbody>", f);
		for (size_t i = 0; i < nd && i < H5_TOP_DATASETS; i++) {
			fputs("<tr>", f);
			r_td_text(f, d[i].name);
			r_td_u64(f, d[i].opens);
			r_td_u64(f, d[i].reads);
			r_td_u64(f, d[i].writes);
			td_bytes(f, d[i].bytes_read, d[i].unsized_reads);
			td_bytes(f, d[i].bytes_written, d[i].unsized_writes);
			r_td_u64(f, d[i].rw_switches);
			fprintf(f, "<td class=\"n\">%s</td>", r_secs(d[i].read_ns, 6, t, sizeof(t)));
			fprintf(f, "<td class=\"n\">%s</td>", r_secs(d[i].write_ns, 6, t, sizeof(t)));
			fprintf(f, "<td class=\"n\">%s</td>", r_secs(d[i].meta_ns, 6, t, sizeof(t)));
			fputs("</tr>", f);
		}
		fputs("</tbody></table></div>", f);
		if (nd > H5_TOP_DATASETS)
			fprintf(f, "<p>%zu datasets: every one in the JSON report.</p>", nd);
	}
	free(d);
	fputs("</section>\n", f);
}
