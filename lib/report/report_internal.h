/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the report model's files share, not part of its interface: the
 * advice items' helpers (advice.c), used by the per-mount rules (report.c)
 * and the per-file ones (files.c), and the per-file part of the report.
 */
#ifndef IOACCT_REPORT_INTERNAL_H
#define IOACCT_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define MIB 1048576ULL

/* The advice being made: items are appended to r->advice. */
struct advice_ctx {
	struct ioacct_report *r;
	size_t cap;
	int err;                          /* the first -errno; later items are not made */
};

/* A new item at the end of r->advice, zeroed but for these; NULL (ctx->err set) on ENOMEM. */
struct ioacct_advice *ioacct_advice_new(struct advice_ctx *ctx, enum ioacct_advice_level level,
					const char *rule, const struct ioacct_report_mount *m,
					int dir);
/* snprintf into an item's message or suggestion. */
__attribute__((format(printf, 3, 4)))
void ioacct_advice_say(char *buf, size_t len, const char *fmt, ...);
void ioacct_advice_value_u(struct ioacct_advice_value *v, size_t *n, const char *name, uint64_t u);
void ioacct_advice_value_d(struct ioacct_advice_value *v, size_t *n, const char *name, double d);

#define VAL_U(a, name, u) ioacct_advice_value_u((a)->values, &(a)->nvalues, name, u)
#define VAL_D(a, name, d) ioacct_advice_value_d((a)->values, &(a)->nvalues, name, d)
#define THR_U(a, name, u) ioacct_advice_value_u((a)->thresholds, &(a)->nthresholds, name, u)
#define THR_D(a, name, d) ioacct_advice_value_d((a)->thresholds, &(a)->nthresholds, name, d)

static inline double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* part / whole > share %, exactly. */
static inline bool share_above(uint64_t part, uint64_t whole, uint32_t share)
{
	return (unsigned __int128)part * 100 > (unsigned __int128)whole * share;
}

static inline double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static inline double mib(uint64_t bytes)
{
	return (double)bytes / (double)MIB;
}

/* The per-file part (files.c): r->files, r->records and the partial flag. 0 or -ENOMEM. */
int ioacct_report_files_collect(struct ioacct_report *r, const char *only_mount);
/* The per-file advice rules (files.c), after the per-mount ones. */
void ioacct_report_files_advise(struct advice_ctx *ctx);
void ioacct_report_files_free(struct ioacct_report *r);
/* The MPI-IO part (mpiio.c), after the per-file one. 0 or -ENOMEM. */
int ioacct_report_mpiio_collect(struct ioacct_report *r);
void ioacct_report_mpiio_free(struct ioacct_report *r);
/* The HDF5 part (hdf5.c), after the per-file one. 0 or -ENOMEM. */
int ioacct_report_h5_collect(struct ioacct_report *r);
/* Whether the job's own RPCs (issue 40) went through the mount: it is kept in the report. */
bool ioacct_report_rpc_used(const struct ioacct_jobdata *jd, uint64_t mnt_id);
/* The RPC part (rpc.c): each report mount's procedures. 0 or -ENOMEM. */
int ioacct_report_rpc_collect(struct ioacct_report *r);
void ioacct_report_rpc_free(struct ioacct_report *r);

#endif /* IOACCT_REPORT_INTERNAL_H */
