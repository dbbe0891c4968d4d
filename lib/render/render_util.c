/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "render.h"
#include "render_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void r_u64(FILE *f, uint64_t v)
{
	char buf[24];
	char *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), f);
}

void r_text_pad(FILE *f, int width, const char *s)
{
	/* An escape takes 4 bytes ("\\xNN") for each byte of s at most: a path fits whole. */
	char buf[4 * PATH_MAX + 1];
	int n = (int)strlen(ioacct_text_clean(buf, sizeof(buf), s));

	fputs(buf, f);
	if (n < width)
		fprintf(f, "%*s", width - n, "");
}

const char *r_secs(uint64_t ns, unsigned int decimals, char *buf, size_t len)
{
	uint64_t unit = 1, scaled;

	if (decimals > 9)
		decimals = 9;
	for (unsigned int i = decimals; i < 9; i++)
		unit *= 10;
	/* Round half up without overflowing near UINT64_MAX. */
	scaled = ns / unit + (ns % unit >= (unit + 1) / 2 && unit > 1 ? 1 : 0);
	if (decimals == 0) {
		snprintf(buf, len, "%" PRIu64, scaled);
	} else {
		uint64_t div = 1;

		for (unsigned int i = 0; i < decimals; i++)
			div *= 10;
		snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, scaled / div, (int)decimals, scaled % div);
	}
	return buf;
}

const char *r_ctime(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	if (!localtime_r(&t, &tm) || strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm) == 0)
		snprintf(buf, len, "?");
	return buf;
}

const char *r_iso_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000LL);
	long frac = (long)(ns % 1000000000LL);
	char day[40];
	struct tm tm;

	if (frac < 0) {
		frac += 1000000000L;
		t--;
	}
	if (!gmtime_r(&t, &tm) || strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%s.%09ldZ", day, frac);
	return buf;
}

const char *r_human_bytes(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%.0f B", bytes);
		return buf;
	}
	bytes /= 1024;
	while (bytes >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", bytes, units[u]);
	return buf;
}

int r_finish(FILE *f)
{
	if (fflush(f) == EOF)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}

/* The next (mount, k) after it's, k below `nk`; false after the last. */
static bool next_cell(const struct ioacct_report *r, struct r_cell *it, unsigned int nk)
{
	if (!it->started)
		it->started = true;
	else if (++it->k == nk) {
		it->k = 0;
		it->i++;
	}
	return it->i < r->nmounts;
}

bool r_next_op(const struct ioacct_report *r, struct r_cell *it, enum r_cell_keep keep)
{
	while (next_cell(r, it, IOACCT_OP_COUNT)) {
		it->m = &r->mounts[it->i];
		it->c = &it->m->op[it->k];
		if (keep == R_CELL_ERRORS ? it->c->errors : it->c->calls)
			return true;
	}
	return false;
}

bool r_next_dir(const struct ioacct_report *r, struct r_cell *it)
{
	while (next_cell(r, it, IOACCT_DIR_COUNT)) {
		it->m = &r->mounts[it->i];
		it->c = &it->m->op[it->k == IOACCT_DIR_READ ? IOACCT_OP_READ : IOACCT_OP_WRITE];
		if (it->c->calls)
			return true;
	}
	return false;
}

/* HTML table cells, for render_html.c and the sections in files of their own. */
void r_td_u64(FILE *f, uint64_t v)
{
	fputs("<td class=\"n\">", f);
	r_u64(f, v);
	fputs("</td>", f);
}

void r_td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	r_html(f, s);
	fputs("</td>", f);
}

void r_th_row(FILE *f, const char *const *cols, size_t n, size_t nleft)
{
	fputs("<thead><tr>", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "<th%s>%s</th>", i < nleft ? "" : " class=\"n\"", cols[i]);
	fputs("</tr></thead>", f);
}

void r_rpc_unattributed(FILE *f, const struct ioacct_report_mount *m,
			void (*put)(FILE *f, const char *s))
{
	fprintf(f, "on this mount, %" PRIu64 " RPC%s during the job %s sent by no job: ",
		m->rpc_unattr_calls, m->rpc_unattr_calls == 1 ? "" : "s",
		m->rpc_unattr_calls == 1 ? "was" : "were");
	for (size_t i = 0; i < m->nrpc_unattr; i++) {
		fprintf(f, "%s%" PRIu64 " ", i ? ", " : "", m->rpc_unattr[i].sum.calls);
		put(f, m->rpc_unattr[i].key);
	}
}
