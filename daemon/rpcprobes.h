/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RPCs per job (issue 40): the object ioacct_rpc.bpf.c, loaded beside
 * the main one when the kernel has the sunrpc module (sharing its watch and
 * task maps), and the counters it keeps per (slot, bin, mount, procedure),
 * read, stored and forgotten as the system calls' are (registry.c). The
 * module may come after the daemon's start (the first NFS mount loads it):
 * ioacct_rpcprobes_try(), at each registration, loads the object then.
 * Nothing is pinned: a daemon restart loses the RPC counters of the running
 * steps, and counts their RPCs from its start on (as the MPI-IO object).
 */
#ifndef IOACCT_RPCPROBES_H
#define IOACCT_RPCPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "probes.h"

struct ioacct_rpcprobes;

/*
 * Tries to load and attach now (ioacct_rpcprobes_try()); NULL only when
 * out of memory. p must outlive it. Not enabled (rpc_probes = no): never
 * loaded, the jobs' probe mode says "rpc=off:config".
 */
struct ioacct_rpcprobes *ioacct_rpcprobes_create(struct ioacct_probes *p, uint32_t v1_ssid,
						 bool enabled);
void ioacct_rpcprobes_destroy(struct ioacct_rpcprobes *rp);

/*
 * Loads and attaches the object if it is not yet and the kernel has the
 * sunrpc module: costs a stat() when it has not, nothing once loaded.
 * Says in the log once when it attaches, and why it cannot.
 */
void ioacct_rpcprobes_try(struct ioacct_rpcprobes *rp); /* rp may be NULL */
/* The job's probe mode word: "rpc=sunrpc", "rpc=off:no-sunrpc", "rpc=off:config"... */
const char *ioacct_rpcprobes_mode(const struct ioacct_rpcprobes *rp);
/*
 * A job's probe mode: the backend's mode (ioacct_probes_job_mode()) with
 * the RPC word before its views ("fentry rpc=sunrpc views=cache"), where
 * older readers of the store find the views where they were; mode alone
 * when rp is NULL.
 */
void ioacct_rpcprobes_job_mode(const struct ioacct_rpcprobes *rp, const char *mode, char *buf,
			       size_t len);

/*
 * A step starts in slot: the unattributed counters are read now, so that
 * its finish stores what the mounts it used got from no job meanwhile.
 */
void ioacct_rpcprobes_step_begin(struct ioacct_rpcprobes *rp, uint32_t slot);

/*
 * RPC rows read from the kernel, one per (slot, bin, mount, program,
 * version, procedure) with their names (step_id left 0: slots[i] says
 * whose), and the kernel's entries they came from, for
 * ioacct_rpcprobes_delete() once stored.
 */
struct ioacct_rpc_batch {
	struct ioacct_rpc *rows;
	uint32_t *slots;
	size_t n;
	void *keys; /* the kernel's keys (ioacct_rpc_abi.h) */
	size_t nkeys;
};

/* The entries whose (slot, bin) want() takes; an empty batch when not loaded. */
int ioacct_rpcprobes_read(struct ioacct_rpcprobes *rp,
			  bool (*want)(uint32_t slot, uint32_t bin, void *ctx), void *ctx,
			  struct ioacct_rpc_batch *b);
int ioacct_rpcprobes_delete(struct ioacct_rpcprobes *rp, const struct ioacct_rpc_batch *b);
void ioacct_rpc_batch_free(struct ioacct_rpc_batch *b);

/*
 * Adds to b the unattributed rows of slot's step (IOACCT_RPC_UNATTRIBUTED,
 * bin 0): per mount its RPCs used, what that mount's clients (and their
 * parents, which mountstats adds) counted from no job since
 * ioacct_rpcprobes_step_begin(). Nothing when the step began before the
 * object was loaded.
 */
int ioacct_rpcprobes_unattributed(struct ioacct_rpcprobes *rp, uint32_t slot,
				  struct ioacct_rpc_batch *b);
/*
 * The same for every running step (a step with a baseline) at once, as
 * they would be stored if each finished now: /metrics' live rows, with one
 * read of the maps whatever the number of steps.
 */
int ioacct_rpcprobes_unattributed_all(struct ioacct_rpcprobes *rp, struct ioacct_rpc_batch *b);
/*
 * Forgets slot (its step, job_id/step_id of cluster, is stored): its mounts'
 * clients, its baseline, its count of RPCs lost (a warning when some were).
 */
void ioacct_rpcprobes_forget(struct ioacct_rpcprobes *rp, uint32_t slot, const char *cluster,
			     uint64_t job_id, uint32_t step_id);

#endif /* IOACCT_RPCPROBES_H */
