/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's registry of running jobs, and the handlers of its requests.
 *
 * A job has steps; each step has one slot (its own counters in the kernel)
 * and one or more watched cgroups. Everything needed to carry on after a
 * restart is in the store (jobs, steps and the watches table); the kernel
 * keeps counting in pinned maps meanwhile. Closed time bins are drained into
 * the store every drain interval and deleted from the kernel only after the
 * store has committed them.
 *
 * The registry (registry.c, with jobmounts.c and reaper.c) owns that state;
 * the request handlers (handlers.c) and /metrics (metrics.c) see it through
 * the functions below alone: a running job is a `struct djob` they hold but
 * do not open, valid until the registry next changes (the event loop's
 * current request or timer).
 */
#ifndef IOACCT_JOBS_H
#define IOACCT_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "probes.h"
#include "proto.h"
#include "rpcprobes.h"
#include "store.h"

struct ioacct_registry;
struct djob;

struct ioacct_registry *ioacct_registry_create(const struct ioacct_config *cfg,
					       struct ioacct_store *store,
					       struct ioacct_probes *probes);
void ioacct_registry_destroy(struct ioacct_registry *r);

/*
 * Loads the persisted watches and reconciles them with the kernel (watches
 * back in, unowned ones out) and adopts jobs left running without a watch.
 */
int ioacct_registry_restore(struct ioacct_registry *r);

/* Moves closed bins (all bins with `all`) from the kernel into the store. */
int ioacct_registry_drain(struct ioacct_registry *r, bool all);

/*
 * Finishes, without waiting for their finish request, the steps whose
 * cgroups have been empty or gone for reap_grace, and the jobs that have had
 * no step for that long and whose finish may have been lost (state ENDED,
 * exit code unknown). From the drain timer (reaper.c).
 */
int ioacct_registry_reap(struct ioacct_registry *r);

/*
 * Undoes a REGISTER whose reply could not be delivered (the client gave up):
 * the job goes with it when the step was its only one, else the step is
 * finished as CANCELLED. -ENOENT when there is nothing to undo.
 */
int ioacct_registry_abort_register(struct ioacct_registry *r, int64_t job_key, uint32_t step_id);

/* sbatch --io-monitor=trace: reads the running jobs' tracers (jobtrace.h). */
void ioacct_registry_trace_poll(struct ioacct_registry *r);
/* Whether a job is traced: the event loop then reads every IOACCT_JOBTRACE_POLL_MS. */
bool ioacct_registry_tracing(const struct ioacct_registry *r);
/*
 * MPI-IO accounting (mpiprobes.h): the registry owns m (NULL: off) and
 * closes it with itself, before the probes whose maps it shares.
 * The fd is readable when libraries opened by watched tasks wait for
 * mpi_poll (-1 when off).
 */
struct ioacct_mpiprobes;
void ioacct_registry_set_mpi(struct ioacct_registry *r, struct ioacct_mpiprobes *m);
/* The RPC probes (rpcprobes.h, issue 40): the registry owns them (NULL: none). */
struct ioacct_rpcprobes;
void ioacct_registry_set_rpc(struct ioacct_registry *r, struct ioacct_rpcprobes *rp);
int ioacct_registry_mpi_fd(const struct ioacct_registry *r);
struct ioacct_mpiprobes *ioacct_registry_mpi(const struct ioacct_registry *r);
void ioacct_registry_mpi_poll(struct ioacct_registry *r);
/* Number of running jobs and watched cgroups. */
void ioacct_registry_counts(const struct ioacct_registry *r, uint32_t *jobs, uint32_t *cgroups);

/* ---- requests (handlers.c) ---- */

/*
 * Whether a request is answered off the event loop (a QUERY of the cluster
 * store, clusterq.h): 1 when it was queued for the client `tag`, whose
 * answer ioacct_registry_answer() gives later; 0 when it is not one of
 * those (ioacct_registry_handle() it); -errno with rep filled when it was
 * refused (-EBUSY: too many wait; ask again).
 */
int ioacct_registry_defer(struct ioacct_registry *r, const struct ioacct_request *req,
			  uid_t peer_uid, void *tag, struct ioacct_reply *rep);
/*
 * probe_exe (issue 39): the program fd (taken) that a task of the request's
 * step is about to execute, probed for HDF5 before it runs. Only the job's
 * user or root. 1 when the client `tag` waits for ioacct_registry_answer();
 * 0 or -errno with rep filled: answered now.
 */
int ioacct_registry_probe_exe(struct ioacct_registry *r, const struct ioacct_request *req,
			      uid_t peer_uid, int fd, void *tag, struct ioacct_reply *rep);
/*
 * An fd readable when answers are ready (starts their thread); -1 without a
 * cluster store. probe_exe's answers do not wake it: the server takes the
 * answers at each round, the ELF worker's replies being read between rounds.
 */
int ioacct_registry_answers_fd(struct ioacct_registry *r);
/*
 * One ready answer: true with its client's tag, the type of the request it
 * answers (QUERY, PROBE_EXE) and the reply (the caller frees it).
 */
bool ioacct_registry_answer(struct ioacct_registry *r, void **tag, uint16_t *type,
			    struct ioacct_reply *rep);
/* The client `tag` went away: its queued request and answer are dropped. */
void ioacct_registry_forget_client(struct ioacct_registry *r, void *tag);

/* One request from a peer with the given credentials; fills rep. */
void ioacct_registry_handle(struct ioacct_registry *r, const struct ioacct_request *req,
			    uid_t peer_uid, struct ioacct_reply *rep);

/* ---- what the handlers and /metrics see of the registry (registry.c) ---- */

const struct ioacct_config *ioacct_registry_config(const struct ioacct_registry *r);
struct ioacct_store *ioacct_registry_store(const struct ioacct_registry *r);
struct ioacct_probes *ioacct_registry_probes(const struct ioacct_registry *r);
/* The number of slots (max_jobs), and the events dropped so far by the steps holding one. */
uint32_t ioacct_registry_nslots(const struct ioacct_registry *r);
uint64_t ioacct_registry_dropped_events(const struct ioacct_registry *r);

/*
 * The readers of the cluster store that the handlers start on first use
 * and keep between requests (clusterq.h, jobload.h); the registry holds
 * them so that they go with it.
 */
struct ioacct_cluster_readers {
	struct ioacct_clusterq *clusterq; /* cluster-wide queries, off the loop */
	struct ioacct_jobload *jobload;   /* whole jobs from the cluster store, read off the loop */
};
struct ioacct_cluster_readers *ioacct_registry_readers(struct ioacct_registry *r);

/* A request's cluster: the one it names, else the configured one, else "local". */
const char *ioacct_registry_cluster(const struct ioacct_registry *r, const char *asked);

/* The running jobs, newest first: for (j = ioacct_registry_jobs(r); j; j = ..._job_next(j)). */
struct djob *ioacct_registry_jobs(const struct ioacct_registry *r);
struct djob *ioacct_registry_job_next(const struct djob *j);
/* The running job of that cluster and id; NULL when there is none. */
struct djob *ioacct_registry_job_find(const struct ioacct_registry *r, const char *cluster,
				      uint64_t job_id);
/* The job as registered (and stored); its time base, CLOCK_MONOTONIC. */
const struct ioacct_job *ioacct_registry_job_info(const struct djob *j);
uint64_t ioacct_registry_job_start_mono(const struct djob *j);
/* Its running steps: how many, and the id of the i-th with its slot in *slot. */
size_t ioacct_registry_job_nsteps(const struct djob *j);
uint32_t ioacct_registry_job_step(const struct djob *j, size_t i, uint32_t *slot);
/*
 * The job's mount of this key, from its mount table as last read, where the
 * table proves it without a note (mntid.h); NULL when not.
 */
const struct ioacct_mount *ioacct_registry_job_mount(const struct djob *j, uint64_t mnt_id);
/* The cgroups the job's running steps are watched through, into rep->watches. -ENOMEM. */
int ioacct_registry_job_watches(const struct djob *j, struct ioacct_reply *rep);

/*
 * REGISTER of a cgroup already resolved (fs_path, its id and hierarchy):
 * one transaction across store and kernel. Fills rep: the job, its slot,
 * or the error.
 */
void ioacct_registry_register(struct ioacct_registry *r, const struct ioacct_req_register *req,
			      const char *fs_path, uint64_t cgroup_id, enum ioacct_hier hier,
			      struct ioacct_reply *rep);
/*
 * Finishes step `step_id` of the job: its counters and end into the store,
 * its slot freed. -ENOENT (nothing done) when the job has no such step, else
 * 0 or the store's error (the counters stay in the kernel).
 */
int ioacct_registry_finish_step(struct ioacct_registry *r, struct djob *j, uint32_t step_id,
				const char *state, int32_t exit_code);
/*
 * Finishes the job: its steps, then itself, with its merged report's spec
 * when this node writes one (NULL otherwise). Fills rep's job and, on
 * failure, its error; the job is then left to the reaper.
 */
void ioacct_registry_job_finish(struct ioacct_registry *r, struct djob *j, const char *state,
				int32_t exit_code, const struct ioacct_report_spec *spec,
				struct ioacct_reply *rep);

/*
 * Every entry the kernel holds for the watched slots, open bins included;
 * *e malloc'd. For ioacct_registry_snapshot(), read once for many jobs.
 */
int ioacct_registry_kernel_read(struct ioacct_registry *r, struct ioacct_probe_entry **e,
				size_t *n);
/*
 * The kernel's RPC rows of every watched step, open bins included, and the
 * unattributed rows of every running step as its finish would store them
 * (issue 40): for ioacct_registry_snapshot()'s rpc, read once for many
 * jobs. An empty batch when the RPC probes are not loaded.
 */
int ioacct_registry_rpc_kernel_read(struct ioacct_registry *r, struct ioacct_rpc_batch *b);

/* A job's RPC row so far: its counters summed over the bins, its mount named. */
struct ioacct_rpc_snap_row {
	struct ioacct_rpc r;          /* bin 0 */
	struct ioacct_mount mount;
};
/*
 * A job's RPCs so far (/metrics): kernel, set by the caller, is
 * ioacct_registry_rpc_kernel_read()'s batch (NULL: the store's alone);
 * rows, one per (step, mount key, program, version, procedure, flags),
 * are filled by ioacct_registry_snapshot() and freed by
 * ioacct_rpc_snap_free().
 */
struct ioacct_rpc_snap {
	const struct ioacct_rpc_batch *kernel;
	struct ioacct_rpc_snap_row *rows;
	size_t n;
};
void ioacct_rpc_snap_free(struct ioacct_rpc_snap *s);

/*
 * A job's counts so far, added to rep's rows (one per step, mount and op) and
 * dropped counters: the store's totals plus, when j is the running job, its
 * entries among the n kernel entries e. With j NULL (a finished job) the
 * store's alone. *job, when not NULL, gets the job as stored. rpc, when not
 * NULL, gets the job's RPC rows the same way (struct ioacct_rpc_snap). 0,
 * -ENOMEM, or the store's error. (snapshot.c)
 */
int ioacct_registry_snapshot(struct ioacct_registry *r, int64_t job_key, const struct djob *j,
			     const struct ioacct_probe_entry *e, size_t n, struct ioacct_job *job,
			     struct ioacct_reply *rep, struct ioacct_rpc_snap *rpc);

#endif /* IOACCT_JOBS_H */
