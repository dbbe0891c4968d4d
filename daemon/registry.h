/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the registry: what jobs.c (requests, drains, restore) and reaper.c
 * (jobs whose finish never came) share. Not for anyone else.
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
	uint32_t *stored_mnts;       /* mount ids already in the store for this job */
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
	struct ioacct_clusterq *clusterq; /* cluster-wide queries, off the loop (clusterq.h) */
	struct ioacct_jobload *jobload; /* whole jobs from the cluster store, read off the loop */
	struct ioacct_jobtraces *traces; /* sbatch --io-monitor=trace (jobtrace.h) */
};

/*
 * Debug-only fault injection for the lifecycle tests: when ioacctd was
 * started with IOACCT_CRASH_AT=<point> in its environment, it kills itself
 * with SIGKILL on reaching that point. Points: register-before-commit,
 * register-after-commit, finish-before-commit, finish-after-commit,
 * drain-before-commit, drain-after-commit.
 */
void ioacct_registry_crash_point(const char *point);

/*
 * Stops counting for a step, stores everything it counted and its end, frees
 * its slot. On failure the counters stay in the kernel and the step stays.
 */
int ioacct_registry_step_finish(struct ioacct_registry *r, struct dstep *s, const char *state,
				int32_t exit_code);
/* Finishes a job with no step left in the store (totals, state) and forgets it. */
int ioacct_registry_job_end(struct ioacct_registry *r, struct djob *j, const char *state,
			    int32_t exit_code, const struct ioacct_report_spec *spec);

/*
 * Every entry the kernel holds for the watched slots, open bins included;
 * *e malloc'd. For ioacct_registry_snapshot(), read once for many jobs.
 */
int ioacct_registry_kernel_read(struct ioacct_registry *r, struct ioacct_probe_entry **e,
				size_t *n);
/*
 * A job's counts so far, added to rep's rows (one per step, mount and op) and
 * dropped counters: the store's totals plus, when j is the running job, its
 * entries among the n kernel entries e. With j NULL (a finished job) the
 * store's alone. *job, when not NULL, gets the job as stored. 0, -ENOMEM, or
 * the store's error.
 */
int ioacct_registry_snapshot(struct ioacct_registry *r, int64_t job_key, struct djob *j,
			     const struct ioacct_probe_entry *e, size_t n, struct ioacct_job *job,
			     struct ioacct_reply *rep);

/* The job's mount with this id, from its mount table as last read; NULL when not there. */
const struct ioacct_mount *ioacct_registry_job_mount(const struct djob *j, uint32_t mnt_id);

/* LIVE (live.c): every running job `peer` may see, with its totals so far. */
void ioacct_registry_live(struct ioacct_registry *r, const struct ioacct_req_query *req,
			  uid_t peer, struct ioacct_reply *rep);

/* Re-creates, at start, the jobs the store has RUNNING but no watch of (see reaper.c). */
int ioacct_registry_adopt_running(struct ioacct_registry *r);

#endif /* IOACCT_REGISTRY_H */
