/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbatch --io-monitor=trace and --io-monitor=spans: ioacctd runs one tracer (trace/libtracer.la)
 * per traced job, attached when the job's first task registers with a
 * trace cap and detached when the job ends, so no other job pays. The
 * reads and writes of the job's tasks become DXT_POSIX records (per file
 * and rank), at most trace_max bytes of segments per node; past that they
 * are dropped and counted. When the job ends its trace is spooled, a
 * Darshan log of DXT records alone, to ioacct_darshan_spool_path() (root's
 * directory next to the store), where the epilog merges it into the job's
 * .darshan report and removes it.
 *
 * The tracer follows the job's cgroup: for a Slurm step cgroup
 * (".../job_J/step_S", cgroup2 or the v1 hierarchy ioacctd attributes by)
 * the job's directory, so every step of the job on this node is in it;
 * else the registered cgroup itself.
 */
#ifndef IOACCT_JOBTRACE_H
#define IOACCT_JOBTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* Ring buffer of a job's tracer: read every 100 ms, ~25k events of slack. */
#define IOACCT_JOBTRACE_BUFFER (8UL << 20)
/* How often the event loop reads the tracers while any runs. */
#define IOACCT_JOBTRACE_POLL_MS 100

struct ioacct_jobtraces;
struct ioacct_config;

struct ioacct_jobtraces *ioacct_jobtraces_create(const struct ioacct_config *cfg);
/* Stops every trace without spooling it (the daemon exits). Accepts NULL. */
void ioacct_jobtraces_destroy(struct ioacct_jobtraces *t);

/*
 * A task of job `key` registered (req: its request, req->trace_max set)
 * in cgroup `cgroup` of hierarchy `hier`: starts the job's trace, with
 * times counted from `start_mono_ns` (the job's), or notes the task's rank
 * when it runs already. With req->spans, the job's calls are also sent as
 * OTLP spans to otlp_url (see design.md "Trace documents and spans"). 0, or
 * -errno with why there is no trace in rep->trace_error and why there are
 * no spans in rep->spans_error (set too when the trace runs without spans).
 */
int ioacct_jobtraces_register(struct ioacct_jobtraces *t, int64_t key, const char *cluster,
			      const char *node, const char *workdir, uint64_t start_mono_ns,
			      const struct ioacct_req_register *req, const char *cgroup,
			      uint32_t hier, struct ioacct_reply *rep);
struct ioacct_mpi_call;
/*
 * MPI-IO call c of step `step_id` of job `key` (spans=mpiio, mpiprobes.h):
 * a span named after its function, a child of the step's.
 */
void ioacct_jobtraces_mpi_call(struct ioacct_jobtraces *t, int64_t key, uint32_t step_id,
			       const struct ioacct_mpi_call *c);
/* Step `step_id` of job `key` finished: its span ends now (spans only). */
void ioacct_jobtraces_step_end(struct ioacct_jobtraces *t, int64_t key, uint32_t step_id);
/* Reads what every tracer has; called from the event loop. */
void ioacct_jobtraces_poll(struct ioacct_jobtraces *t);
/* Whether any trace runs (the event loop then wakes every IOACCT_JOBTRACE_POLL_MS). */
bool ioacct_jobtraces_active(const struct ioacct_jobtraces *t);
/* Job `key` ended: its tracer stopped and its trace spooled (logged on failure). */
void ioacct_jobtraces_end(struct ioacct_jobtraces *t, int64_t key);
/* Job `key`'s registration was undone: its tracer stopped, nothing kept. */
void ioacct_jobtraces_forget(struct ioacct_jobtraces *t, int64_t key);

#endif /* IOACCT_JOBTRACE_H */
