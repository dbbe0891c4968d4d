// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HTML report's MPI-IO section (issue 27): per file (every rank summed,
 * with the POSIX bytes of the same file and their ratio) and per record.
 */
#include "render.h"
#include "render_internal.h"

#include <inttypes.h>
#include <stdio.h>


/* MPI-IO bytes, with "at least" when unsized calls moved bytes not counted. */
static void td_mpiio_bytes(FILE *f, uint64_t bytes, uint64_t unsized)
{
	fputs("<td class=\"n\">", f);
	if (unsized)
		fputs("&ge;", f);
	r_u64(f, bytes);
	fputs("</td>", f);
}

static void mpiio_row(FILE *f, const struct ioacct_mpiio *m, const char *rank,
		      const struct ioacct_report_mpiio_file *x)
{
	char t[32];
	double q = x ? ioacct_report_mpiio_ratio(x) : -1;

	fprintf(f, "<tr%s>", x ? " class=\"sum\"" : "");
	r_td_text(f, m->path);
	r_td_text(f, rank);
	fprintf(f, "<td class=\"n\">%" PRIu64 " / %" PRIu64 "</td>", m->indep_opens, m->coll_opens);
	fprintf(f, "<td class=\"n\">%" PRIu64 " / %" PRIu64 " / %" PRIu64 " / %" PRIu64 "</td>",
		m->indep_reads, m->coll_reads, m->split_reads, m->nb_reads);
	fprintf(f, "<td class=\"n\">%" PRIu64 " / %" PRIu64 " / %" PRIu64 " / %" PRIu64 "</td>",
		m->indep_writes, m->coll_writes, m->split_writes, m->nb_writes);
	r_td_u64(f, m->syncs);
	r_td_u64(f, m->views);
	td_mpiio_bytes(f, m->bytes_read, m->unsized_reads);
	td_mpiio_bytes(f, m->bytes_written, m->unsized_writes);
	fprintf(f, "<td class=\"n\">%" PRIu64 " / %" PRIu64 "</td>", m->unsized_reads,
		m->unsized_writes);
	fprintf(f, "<td class=\"n\">%s</td>", r_secs(m->read_ns, 6, t, sizeof(t)));
	fprintf(f, "<td class=\"n\">%s</td>", r_secs(m->write_ns, 6, t, sizeof(t)));
	fprintf(f, "<td class=\"n\">%s</td>", r_secs(m->meta_ns, 6, t, sizeof(t)));
	if (x && x->posix_found)
		r_td_u64(f, x->posix_read + x->posix_written);
	else
		r_td_text(f, x ? "none" : "");
	if (q >= 0)
		fprintf(f, "<td class=\"n\">%s%.2f</td>",
			m->unsized_reads + m->unsized_writes ? "&ge;" : "", q);
	else
		r_td_text(f, "");
	fputs("</tr>", f);
}

void r_html_mpiio_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Path", "Rank", "Opens indep / coll",
					     "Reads indep / coll / split / nb",
					     "Writes indep / coll / split / nb", "Syncs", "Views",
					     "Bytes read", "Bytes written", "Unsized reads / writes",
					     "Read (s)", "Write (s)", "Metadata (s)", "POSIX bytes",
					     "MPI-IO / POSIX" };
	const struct ioacct_report_mpiio_file *all = &r->mpiio_all;
	const struct ioacct_jobdata *jd = r->jd;
	double q = ioacct_report_mpiio_ratio(all);
	char rank[16];

	if (!jd->mpiio_loaded || !jd->nmpiio)
		return;
	fprintf(f, "<section id=\"mpiio\"><h2>MPI-IO</h2><p class=\"nums\">%zu files, %zu records "
		   "(process and file); %" PRIu64 " bytes read and %" PRIu64 " written through "
		   "MPI-IO, %" PRIu64 " and %" PRIu64 " by POSIX calls on the same files",
		r->nmpiio_files, jd->nmpiio, all->sum.bytes_read, all->sum.bytes_written,
		all->posix_read, all->posix_written);
	if (q >= 0)
		fprintf(f, " (MPI-IO / POSIX: %.2f; under 1: the POSIX calls moved more than MPI-IO "
			   "asked, as data sieving does, over 1: less)", q);
	fputs(".", f);
	if (all->sum.unsized_reads || all->sum.unsized_writes)
		fprintf(f, " %" PRIu64 " reads and %" PRIu64 " writes had a datatype whose size the "
			   "probes could not read: their bytes are unknown, not counted (&ge;).",
			all->sum.unsized_reads, all->sum.unsized_writes);
	fputs("</p><div class=\"scroll\"><table id=\"mpiio-table\">", f);
	r_th_row(f, cols, ARRAY_SIZE(cols), 2);
	fputs("<tbody>", f);
	for (size_t i = 0; i < r->nmpiio_files; i++)
		mpiio_row(f, &r->mpiio_files[i].sum, "all", &r->mpiio_files[i]);
	for (size_t i = 0; i < jd->nmpiio && jd->nmpiio <= MPIIO_RANK_ROWS; i++) {
		snprintf(rank, sizeof(rank), "%" PRId32, jd->mpiio[i].rank);
		mpiio_row(f, &jd->mpiio[i], rank, NULL);
	}
	fputs("</tbody></table></div>", f);
	if (jd->nmpiio > MPIIO_RANK_ROWS)
		fprintf(f, "<p>%zu records: per rank in the JSON report.</p>", jd->nmpiio);
	fputs("</section>\n", f);
}
