/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbatch --io-monitor=trace in the epilog: the trace ioacctd spooled for
 * the job (daemon/jobtrace.h) put in the job's .darshan report. No spank.h
 * here.
 */
#ifndef IOACCT_SPANK_TRACE_H
#define IOACCT_SPANK_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/*
 * The job's Darshan report (as format=darshan renders it) with the DXT_POSIX
 * records and trace_* metadata of the trace spooled next to the store at
 * `db_path` (waited for while ioacctd still writes it, at most
 * IOACCT_SPANK_TRACE_WAIT_MS), which is then removed. Without a spool file the report has no
 * DXT records. In msg, one line for the admin's log: what the trace holds
 * and what it lost, or why there is none. 0 or -errno (the report was not
 * made; msg says why).
 */
/* How long the epilog waits for a trace ioacctd is still writing. */
#define IOACCT_SPANK_TRACE_WAIT_MS 120000

int ioacct_spank_trace_render(const struct ioacct_jobdata *jd, const char *db_path, char **buf,
			      size_t *len, char *msg, size_t msglen);

/*
 * Whether ioacctd spooled a trace for the job: a step was submitted with
 * `trace` when the job was not (srun --io-monitor=trace in a batch job
 * without it), and the epilog must still put it in a report.
 */
bool ioacct_spank_trace_spooled(const struct ioacct_job *job, const char *db_path);

#endif /* IOACCT_SPANK_TRACE_H */
