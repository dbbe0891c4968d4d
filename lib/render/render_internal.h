/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Formatting helpers shared by the renderers; not part of librender's interface. */
#ifndef IOACCT_RENDER_INTERNAL_H
#define IOACCT_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "report.h"
#include "text.h"
#include "util.h"

#define MIB_D 1048576.0
/* The MPI-IO section's per-rank rows, text and HTML: at most this many records (JSON: all). */
#define MPIIO_RANK_ROWS 256

/* A decimal integer, without printf's parsing: the JSON series is large. */
void r_u64(FILE *f, uint64_t v);
/* s as a JSON string literal, quotes included: lib/core/json.h's encoder, as everywhere. */
static inline void r_json_str(FILE *f, const char *s)
{
	ioacct_json_string(f, s);
}
/*
 * Every name a user controls (job, user, workdir, mount path, fs type, the
 * advice that quotes them) leaves a renderer through one of these: the store
 * keeps the real bytes, the output is made safe as it is written.
 */
/* s for HTML text and attributes: lib/core/text.h's escaping. */
static inline void r_html(FILE *f, const char *s)
{
	ioacct_html_put(f, s);
}
/* s for a line of text: no byte of it can end the line or drive a terminal. */
static inline void r_text(FILE *f, const char *s)
{
	ioacct_text_put(f, s);
}
/* r_text(), then spaces up to `width` bytes, as printf's "%-*s" pads. */
void r_text_pad(FILE *f, int width, const char *s);

/* ns as seconds with `decimals` digits, rounded half up, exactly (no floating point). */
const char *r_secs(uint64_t ns, unsigned int decimals, char *buf, size_t len);
/* Local time in ctime()'s form, as darshan-parser prints it: "Tue Nov 14 22:13:20 2023". */
const char *r_ctime(int64_t ns, char *buf, size_t len);
/* UTC, RFC 3339 with nanoseconds: "2023-11-14T22:13:20.000000000Z". */
const char *r_iso_time(int64_t ns, char *buf, size_t len);
/* 1536 -> "1.5 KiB"; below 1 KiB "N B". */
const char *r_human_bytes(double bytes, char *buf, size_t len);

/* HTML table cells: a number, a text, a header row of n columns (the first nleft left). */
void r_td_u64(FILE *f, uint64_t v);
void r_td_text(FILE *f, const char *s);
void r_th_row(FILE *f, const char *const *cols, size_t n, size_t nleft);
struct ioacct_report;
/* The MPI-IO section (render_html_mpiio.c); nothing when the job has no MPI-IO records. */
void r_html_mpiio_section(FILE *f, const struct ioacct_report *r);
/* The HDF5 section (render_html_hdf5.c; issue 39); nothing when the job has no HDF5 records. */
void r_html_hdf5_section(FILE *f, const struct ioacct_report *r);
/* The "Server calls" section (render_html_rpc.c; issue 40); nothing when no mount has RPC rows. */
void r_html_rpc_section(FILE *f, const struct ioacct_report *r);
/*
 * A mount's RPCs no job sent during the job (issue 40), as one sentence:
 * "on this mount, 125 RPCs during the job were sent by no job: 124 WRITE, 1
 * DELEGRETURN", the procedures' names through `put` (r_text or r_html).
 */
void r_rpc_unattributed(FILE *f, const struct ioacct_report_mount *m,
			void (*put)(FILE *f, const char *s));

/*
 * The cells of a report's per-mount tables, in report order: each mount with
 * each operation (r_next_op) or each direction (r_next_dir: reads, writes)
 * whose counters have calls (errors, with R_CELL_ERRORS). Start from
 * `struct r_cell it = { 0 }`; each call fills m, k and c and returns false
 * after the last cell.
 */
struct r_cell {
	size_t i;                              /* the mount's index */
	unsigned int k;                        /* enum ioacct_op, or enum ioacct_dir */
	bool started;
	const struct ioacct_report_mount *m;
	const struct ioacct_counters *c;
};
enum r_cell_keep { R_CELL_CALLS, R_CELL_ERRORS };
bool r_next_op(const struct ioacct_report *r, struct r_cell *it, enum r_cell_keep keep);
bool r_next_dir(const struct ioacct_report *r, struct r_cell *it);

/*
 * The rows of a per-mount table: the mounts in report order, then the "all
 * mounts" row when there are two or more; NULL after the last.
 */
static inline const struct ioacct_report_mount *r_mount_row(const struct ioacct_report *r,
							    size_t i)
{
	if (i < r->nmounts)
		return &r->mounts[i];
	return i == r->nmounts && r->nmounts >= 2 ? &r->all : NULL;
}

/* Flushes and reports a write error: 0 or -errno. */
int r_finish(FILE *f);

#endif /* IOACCT_RENDER_INTERNAL_H */
