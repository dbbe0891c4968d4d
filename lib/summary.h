/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-mount summary of a job that iorun prints (and the Slurm plugin
 * writes until the full report renderers exist): per mount, bytes and
 * operation counts summed over steps, in text or JSON.
 */
#ifndef IOACCT_SUMMARY_H
#define IOACCT_SUMMARY_H

#include <stdio.h>

#include "model.h"

/* Per-mount sums of a job, one entry per mount with any counted operation. */
struct ioacct_mount_sum {
	const struct ioacct_mount *mount;
	struct ioacct_counters op[IOACCT_OP_COUNT];
	uint64_t errors;   /* over all operations */
	uint64_t ns;       /* over all operations */
};

/* *out malloc'd, free() it; mounts in mount-id order. 0 or -ENOMEM. */
int ioacct_summary_mounts(const struct ioacct_jobdata *jd, struct ioacct_mount_sum **out, size_t *n);

int ioacct_summary_print_text(FILE *f, const struct ioacct_jobdata *jd);
int ioacct_summary_print_json(FILE *f, const struct ioacct_jobdata *jd);

/* Writes s as a JSON string literal, quotes included. */
void ioacct_json_string(FILE *f, const char *s);

#endif /* IOACCT_SUMMARY_H */
