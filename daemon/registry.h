/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the registry: the structures of registry.c (state, slots,
 * transactions, drains, restore), jobmounts.c (the jobs' mount tables) and
 * reaper.c (jobs whose finish never came). Not for anyone else: the request
 * handlers and /metrics go through jobs.h.
 */
#ifndef IOACCT_REGISTRY_H
#define IOACCT_REGISTRY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs.h"

/* The state of a step or job that ioacctd finished itself: no finish request came. */
#define IOACCT_STATE_ENDED "ENDED"
/* Its exit code: unknown. */
#define IOACCT_EXIT_UNKNOWN (-1)

struct dwatch {
	uint64_t cgroup_id;
	uint32_t hier;
	char cgroup[PATH_MAX];
};

struct djob;
struct mnttab;

/*
 * A mount stored for a job. One stored unnamed (mnt:N: its file was opened
 * before any of the job's tasks could note it, and its namespace was gone or
 * not scanned yet) is named again in the next drain passes, up to
 * IOACCT_UNNAMED_TRIES of them (each may read mount tables).
 */
#define IOACCT_UNNAMED_TRIES 16
struct stored_mnt {
	uint64_t key;        /* the counters' mount key */
	uint64_t path_hash;  /* a hash of the path stored (jobmounts.c, path_own()) */
	bool named;
	uint8_t tries;       /* passes it was named in, or tried */
	uint64_t tried_pass; /* the mntns pass it was last named in, or tried */
};

struct dstep {
	struct djob *job;
	uint32_t step_id;
	uint32_t slot;
	int32_t pid;
	struct dwatch *watches;
	size_t nwatches;
	uint64_t drained_cur;        /* the job's current bin at the last periodic drain */
	uint64_t empty_since_ns;     /* CLOCK_MONOTONIC when its cgroups were seen empty; 0: live */
};

struct djob {
	struct ioacct_job job;
	uint64_t start_mono_ns;
	int32_t pid;                 /* a task of the job: its mountinfo names the mounts */
	uint32_t mntns;
	uint64_t mntns_id;           /* the kernel's id of it, 0 unknown (before Linux 6.9, restarts) */
	struct mnttab *mt;           /* the job's mount table as last read, shared per namespace */
	uint64_t mt_first_ns;        /* CLOCK_MONOTONIC of the job's first read of it (mntid.h) */
	struct stored_mnt *stored_mnts; /* mounts already in the store for this job */
	size_t nstored_mnts;
	size_t nstored_mnts_tx;      /* how many of them were stored before the open transaction */
	struct dstep **steps;
	size_t nsteps;
	uint64_t idle_since_ns;      /* CLOCK_MONOTONIC since when it has no step; 0: it has some */
	/*
	 * Its finish may have been lost: a step of it was reaped, it was adopted
	 * at start, or finishing it failed. Only then does the reaper end it when
	 * it has no step, or an salloc between two sruns would be ended.
	 */
	bool finish_lost;
	struct djob *next;
};

struct ioacct_registry {
	const struct ioacct_config *cfg;
	struct ioacct_store *store;
	struct ioacct_probes *probes;
	struct ioacct_mntns *mntns;  /* mount tables of the jobs' containers */
	struct ioacct_mount *kmounts; /* the kernel-internal mounts (pipes, sockets...) */
	size_t nkmounts;
	struct djob *jobs;
	struct dstep **slots;        /* slot -> step, NULL when free */
	uint32_t nslots;
	uint32_t next_slot;          /* round robin: a freed slot is reused as late as possible */
	struct ioacct_cluster_readers readers; /* the handlers', freed with the registry */
	struct ioacct_jobtraces *traces; /* sbatch --io-monitor=trace (jobtrace.h) */
	struct ioacct_mpiprobes *mpi; /* MPI-IO counters (mpiprobes.h); NULL: off */
	struct ioacct_rpcprobes *rpc; /* RPCs per job (rpcprobes.h, issue 40); NULL: off */
};

/*
 * Stops counting for a step, stores everything it counted and its end, frees
 * its slot. On failure the counters stay in the kernel and the step stays.
 */
int ioacct_registry_step_finish(struct ioacct_registry *r, struct dstep *s, const char *state,
				int32_t exit_code);
/* Finishes a job with no step left in the store (totals, state) and forgets it. */
int ioacct_registry_job_end(struct ioacct_registry *r, struct djob *j, const char *state,
			    int32_t exit_code, const struct ioacct_report_spec *spec);

/* ---- the jobs' mount tables (jobmounts.c) ---- */

/* Drops the job's hold on its mount table (shared per mount namespace); NULL is fine. */
void ioacct_mnttab_put(struct mnttab *t);
/*
 * Reads the job's mount table, from one of its tasks, else from the daemon's
 * own namespace; shared with the other jobs of the same mount namespace,
 * whose copy this read refreshes.
 */
void ioacct_jobmounts_read(struct ioacct_registry *r, struct djob *j);
/* Puts the job's mount points into the kernel's path -> mount table, as one swap. */
void ioacct_jobmounts_publish(struct ioacct_registry *r, struct djob *j);
/*
 * Stores the description of the mount of key mnt_id the first time the
 * job's data (counted in slot) names it, and again with its name in a later
 * pass where it was stored unnamed (struct stored_mnt), inside the caller's
 * transaction (see tx_begin() in registry.c). 0 or the store's error, -ENOMEM.
 */
int ioacct_jobmounts_store(struct ioacct_registry *r, struct djob *j, uint32_t slot,
			   uint64_t mnt_id);

#endif /* IOACCT_REGISTRY_H */
