/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's registry of running jobs and the handlers of its requests.
 *
 * A job has steps; each step has one slot (its own counters in the kernel)
 * and one or more watched cgroups. Everything needed to carry on after a
 * restart is in the store (jobs, steps and the watches table); the kernel
 * keeps counting in pinned maps meanwhile. Closed time bins are drained into
 * the store every drain interval and deleted from the kernel only after the
 * store has committed them.
 */
#ifndef IOACCT_JOBS_H
#define IOACCT_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "probes.h"
#include "proto.h"
#include "store.h"

struct ioacct_registry;

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
 * exit code unknown). From the drain timer.
 */
int ioacct_registry_reap(struct ioacct_registry *r);

/*
 * Undoes a REGISTER whose reply could not be delivered (the client gave up):
 * the job goes with it when the step was its only one, else the step is
 * finished as CANCELLED. -ENOENT when there is nothing to undo.
 */
int ioacct_registry_abort_register(struct ioacct_registry *r, int64_t job_key, uint32_t step_id);

/* Number of running jobs and watched cgroups. */
/* sbatch --io-monitor=trace: reads the running jobs' tracers (jobtrace.h). */
void ioacct_registry_trace_poll(struct ioacct_registry *r);
/* Whether a job is traced: the event loop then reads every IOACCT_JOBTRACE_POLL_MS. */
bool ioacct_registry_tracing(const struct ioacct_registry *r);
void ioacct_registry_counts(const struct ioacct_registry *r, uint32_t *jobs, uint32_t *cgroups);

/*
 * Whether a request is answered off the event loop (a QUERY of the cluster
 * store, clusterq.h): 1 when it was queued for the client `tag`, whose
 * answer ioacct_registry_answer() gives later; 0 when it is not one of
 * those (ioacct_registry_handle() it); -errno with rep filled when it was
 * refused (-EBUSY: too many wait; ask again).
 */
int ioacct_registry_defer(struct ioacct_registry *r, const struct ioacct_request *req,
			  uid_t peer_uid, void *tag, struct ioacct_reply *rep);
/* An fd readable when answers are ready (starts their thread); -1 without a cluster store. */
int ioacct_registry_answers_fd(struct ioacct_registry *r);
/* One ready answer: true with its client's tag and the reply (the caller frees it). */
bool ioacct_registry_answer(struct ioacct_registry *r, void **tag, struct ioacct_reply *rep);
/* The client `tag` went away: its queued request and answer are dropped. */
void ioacct_registry_forget_client(struct ioacct_registry *r, void *tag);

/* One request from a peer with the given credentials; fills rep. */
void ioacct_registry_handle(struct ioacct_registry *r, const struct ioacct_request *req,
			    uid_t peer_uid, struct ioacct_reply *rep);

#endif /* IOACCT_JOBS_H */
