// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HTML report's "Server calls" section (issue 40): per mount with RPC
 * rows, the RPCs the job sent per procedure (most calls first; times are
 * means per call), then those on the mount during the job that no job sent.
 */
#include "render.h"
#include "render_internal.h"

#include <inttypes.h>
#include <stdio.h>

static void td_secs(FILE *f, uint64_t sum_ns, uint64_t calls)
{
	char t[32];

	fprintf(f, "<td class=\"n\">%s</td>", r_secs(ioacct_rpc_mean(sum_ns, calls), 6, t, sizeof(t)));
}

void r_html_rpc_section(FILE *f, const struct ioacct_report *r)
{
	static const char *const cols[] = { "Procedure", "Program", "Version", "Calls",
					     "Bytes sent", "Bytes received", "Queue (s)", "RTT (s)",
					     "Execute (s)", "Errors", "Retransmissions" };

	if (!r->has_rpc)
		return;
	fputs("<section id=\"rpc\"><h2>Server calls</h2><p>The RPCs the job sent to file "
	      "servers, per mount and procedure, as <code>/proc/self/mountstats</code> counts "
	      "them; times are means per call.</p>", f);
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		if (!m->nrpc && !m->nrpc_unattr)
			continue;
		fputs("<h3>", f);
		r_html(f, m->path);
		fputs(" (", f);
		r_html(f, m->fstype);
		fprintf(f, ")</h3><div class=\"scroll\"><table id=\"rpc-%zu\">", i);
		r_th_row(f, cols, ARRAY_SIZE(cols), 1);
		fputs("<tbody>", f);
		for (size_t k = 0; k < m->nrpc; k++) {
			const struct ioacct_rpc *s = &m->rpc[k].sum;

			fputs("<tr>", f);
			r_td_text(f, m->rpc[k].key);
			r_td_u64(f, s->prog);
			r_td_u64(f, s->vers);
			r_td_u64(f, s->calls);
			r_td_u64(f, s->bytes_sent);
			r_td_u64(f, s->bytes_recv);
			td_secs(f, s->queue_ns, s->calls);
			td_secs(f, s->rtt_ns, s->calls);
			td_secs(f, s->execute_ns, s->calls);
			r_td_u64(f, s->errors);
			r_td_u64(f, s->retrans);
			fputs("</tr>", f);
		}
		if (!m->nrpc)
			fprintf(f, "<tr><td colspan=\"%zu\">None: the job sent no RPC on this "
				   "mount.</td></tr>", ARRAY_SIZE(cols));
		fputs("</tbody></table></div>", f);
		if (m->nrpc_unattr) {
			fprintf(f, "<p id=\"rpc-unattributed-%zu\">", i);
			r_rpc_unattributed(f, m, r_html);
			fputs(".</p>", f);
		}
	}
	fputs("</section>\n", f);
}
