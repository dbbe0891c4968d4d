/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SQLite store: one file per node (/var/lib/ioacct/ioacct.db), WAL
 * mode, a versioned schema migrated forward on open (PRAGMA user_version).
 * The daemon writes; ioacct, ioreport and iorun read. Every function
 * returns 0 or -errno (-ENOENT when a job is not there, -EBUSY when the
 * database is locked past the busy timeout, -EIO/-EINVAL for a corrupt or
 * foreign file) and leaves a one-line message in ioacct_store_errmsg().
 *
 * Tables (schema version IOACCT_STORE_SCHEMA_VERSION):
 *   jobs     one row per run of a job (restart: Slurm's restart count, schema 7);
 *            state RUNNING until finished
 *   steps    (job_key, step_id)
 *   mounts   (job_key, mnt_id) -> path, fs type, source
 *   series   (job_key, step_id, mnt_id, op, bin) -> counters (failed calls per
 *            class err_* since schema 4; 0 in rows of older jobs)
 *   totals   (job_key, step_id, mnt_id, op) -> counters, written at finish
 *   watches  the daemon's registry of watched cgroups (survives restarts)
 *   export_queue  finished jobs not yet committed to the cluster store
 *   report_specs  a finished job's merged report until it is written (schema 6)
 *   files    (job_key, step_id, rank, mnt_id, dev, ino, gen) -> path and Darshan's POSIX
 *            counters of one file (schema 8; issue 26); its page-cache and
 *            mmap views' bytes, mmap_bytes and cache_miss_bytes (schema 13); its seeks (schema 14);
 *            gen, the inode's life, in the key, rw_switches and access1..4(_count),
 *            Darshan's most common access sizes (schema 15; issues 36, 38)
 *   hdf5_records  (job_key, step_id, pid, kind, name) -> the rank and Darshan's H5F
 *            (kind 0, a file) or H5D (kind 1, "FILE:/DATASET") counters of
 *            one process (schema 21; issue 39); their timestamps and slowest
 *            calls (schema 22); selection kinds and chunk dims (schema 24)
 *   rpc      (job_key, step_id, mnt_id, prog, vers, proc, flags, bin) -> the
 *            procedure's name and mountstats' counters of its RPCs (schema
 *            23; issue 40); flags 1: sent by no job during this one (bin 0)
 * Retention (schema 9, retain.h): jobs.orig_bin_width_ns, the width a
 * downsampled job's series were recorded at (NULL: never downsampled).
 */
#ifndef IOACCT_STORE_H
#define IOACCT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

#define IOACCT_STORE_SCHEMA_VERSION 24

struct ioacct_store;

/*
 * The counter columns of series and totals, in the order
 * ioacct_store_counter_values() gives them: the one list that the SQLite
 * tables, their statements and the cluster store (pgstore.c) all follow.
 */
#define IOACCT_STORE_COUNTER_COLS                                                   \
	"bytes, calls, errors, ns, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, "        \
	"err_notfound, err_access, err_space, err_io, err_other"
#define IOACCT_STORE_NR_COUNTERS (4 + IOACCT_NR_SIZE_BINS + IOACCT_NR_ERR_CLASSES)
/* c's values in the order of IOACCT_STORE_COUNTER_COLS; returns how many. */
size_t ioacct_store_counter_values(const struct ioacct_counters *c,
				   uint64_t v[IOACCT_STORE_NR_COUNTERS]);

enum {
	IOACCT_STORE_RDONLY = 0,
	IOACCT_STORE_RDWR = 1,   /* creates the file and its directory, migrates */
};

/* NULL with errno set and `err` filled. */
struct ioacct_store *ioacct_store_open(const char *path, int mode, char *err, size_t errlen);
void ioacct_store_close(struct ioacct_store *st);
/* PRAGMA quick_check: -EIO with a message naming the file and what to do when it is corrupt. */
int ioacct_store_quick_check(struct ioacct_store *st);
const char *ioacct_store_errmsg(const struct ioacct_store *st);
int ioacct_store_schema_version(struct ioacct_store *st);

/* Explicit transactions, for the daemon's batched writes. Nested calls are errors. */
int ioacct_store_begin(struct ioacct_store *st);
int ioacct_store_commit(struct ioacct_store *st);
int ioacct_store_rollback(struct ioacct_store *st);

/* A watched cgroup, as the daemon persists it. */
struct ioacct_watch {
	int64_t job_key;
	uint32_t step_id;
	uint32_t slot;
	uint64_t cgroup_id;
	uint32_t hier;              /* enum ioacct_hier */
	int32_t pid;
	uint32_t mntns;
	uint64_t start_mono_ns;     /* the job's time base (CLOCK_MONOTONIC) */
	uint64_t bin_width_ns;
	char cgroup[PATH_MAX];
};

/* ---- writer side (daemon) ---- */

/* Inserts a RUNNING job; sets job->key. -EEXIST if (cluster, job_id) is running already. */
int ioacct_store_job_insert(struct ioacct_store *st, struct ioacct_job *job);
/* The RUNNING job for (cluster, job_id); -ENOENT. */
int ioacct_store_job_find_running(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				  struct ioacct_job *job);
/* Largest job_id stored for a cluster, 0 when none (iorun numbers its jobs from it). */
int ioacct_store_job_max_id(struct ioacct_store *st, const char *cluster, uint64_t *job_id);
/* Insert or replace a step row. */
int ioacct_store_step_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_step *step);
/* Insert or replace a mount of a job. */
int ioacct_store_mount_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_mount *m);
/* A file's record (schema 8), replacing the one of the same step, rank, mount and file. */
int ioacct_store_file_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_file *f);
/* A process's MPI-IO counters of a file (schema 10), replacing those of the same step, pid and path. */
int ioacct_store_mpiio_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_mpiio *m);
/* One process's HDF5 record of a job step (schema 21; issue 39). */
int ioacct_store_h5_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_h5rec *h);
/*
 * Insert or REPLACE one RPC row (schema 23; issue 40): idempotent as
 * series_put, the daemon drains a closed bin once and may drain it again
 * after a crash.
 */
int ioacct_store_rpc_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_rpc *r);
/*
 * Insert or REPLACE the counters of one bin. Replace, not add: the daemon
 * drains a closed bin once, and re-draining after a crash must be idempotent.
 */
int ioacct_store_series_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_sample *s);
int ioacct_store_watch_put(struct ioacct_store *st, const struct ioacct_watch *w);
/* A step may watch several cgroups; this deletes every watch of the step. */
int ioacct_store_watch_delete(struct ioacct_store *st, int64_t job_key, uint32_t step_id);
/* Every persisted watch; *out is malloc'd, free() it. */
int ioacct_store_watch_list(struct ioacct_store *st, struct ioacct_watch **out, size_t *n);
/* Every RUNNING job (the daemon reconciles them at start); *out malloc'd, free() it. */
int ioacct_store_jobs_running(struct ioacct_store *st, struct ioacct_job **out, size_t *n);
/*
 * Deletes a job and all its rows: only for a registration undone before its
 * client heard of it (the client went away), never for a job with data.
 */
int ioacct_store_job_delete(struct ioacct_store *st, int64_t job_key);
/* Adds to the job's dropped counters. */
int ioacct_store_job_add_dropped(struct ioacct_store *st, int64_t job_key, uint64_t events,
				 uint64_t bytes);
/* Adds to the job's library opens missed (struct ioacct_job's lib_opens_missed). */
int ioacct_store_job_add_lib_missed(struct ioacct_store *st, int64_t job_key, uint64_t opens);
/*
 * Finishes a job in one transaction: sets end, state and exit code, computes
 * the totals table from the series, ends steps still open, deletes its
 * watches. The caller has already written the final bins.
 */
int ioacct_store_job_finish(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
			    const char *state, int32_t exit_code);
/*
 * The same, keeping in the same transaction the spec of the job's merged
 * report (spec NULL: none), so that a restart loses neither.
 */
int ioacct_store_job_finish_report(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
				   const char *state, int32_t exit_code,
				   const struct ioacct_report_spec *spec);

/*
 * The outbox of the cluster store: job_finish queues every finished job in
 * its own transaction; the exporter takes them in key order and unqueues
 * one only after PostgreSQL has committed it.
 */
/* The first queued job with a key above after_key; -ENOENT when none. */
int ioacct_store_export_next(struct ioacct_store *st, int64_t after_key, int64_t *job_key,
			     int64_t *gen);
/*
 * Unqueues job_key when its generation is still gen (the one export_next
 * gave): queued again since (a step ended, the job finished), it stays.
 * gen < 0: whatever its generation.
 */
int ioacct_store_export_done(struct ioacct_store *st, int64_t job_key, int64_t gen);
/*
 * Queues a job for the cluster store, or queues it again (a new generation)
 * when it waits there already: a running job at each step's end, so that
 * its finished steps reach the cluster store before it ends (issue 28).
 * A finished job is queued by its finish.
 */
int ioacct_store_export_queue(struct ioacct_store *st, int64_t job_key);
int ioacct_store_export_count(struct ioacct_store *st, uint64_t *n);
/*
 * The specs of merged reports this node still has to see written: the
 * exporter reads the one of a job it exported (-ENOENT: none), walks them
 * in key order when idle (next: the first above after_key), and drops one
 * once the report is written, by whichever node.
 */
int ioacct_store_report_spec_get(struct ioacct_store *st, int64_t job_key,
				 struct ioacct_report_spec *spec);
int ioacct_store_report_spec_next(struct ioacct_store *st, int64_t after_key, int64_t *job_key);
int ioacct_store_report_spec_done(struct ioacct_store *st, int64_t job_key);

/* ---- reader side (tools) ---- */

int ioacct_store_job_get(struct ioacct_store *st, int64_t job_key, struct ioacct_job *job);
/*
 * The newest run of this job id on this cluster (any cluster when NULL);
 * -ENOENT. A node's store has one row per run: a job id used again (a
 * requeue, Slurm's ids started again, iorun --job-id) is a row of its own.
 */
int ioacct_store_job_find(struct ioacct_store *st, const char *cluster, uint64_t job_id,
			  struct ioacct_job *job);
/*
 * The same, of one run: nth earlier runs of the id started before it (0:
 * the first; for a requeued job whose id was never used again, its restart
 * count); nth < 0: the newest.
 */
int ioacct_store_job_find_run(struct ioacct_store *st, const char *cluster, uint64_t job_id,
			      int64_t nth, struct ioacct_job *job);
/*
 * The run (cluster, job_id, restart, run_start) exactly, as a job row named
 * it (struct ioacct_job: here, its part started at run_start); -ENOENT.
 */
int ioacct_store_job_find_exact(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				uint32_t restart, int64_t run_start, struct ioacct_job *job);
/*
 * Loads a whole job. For a finished job totals come from the totals table;
 * for a running one they are summed from the series. *out malloc'd,
 * free with ioacct_jobdata_free().
 */
int ioacct_store_job_load(struct ioacct_store *st, int64_t job_key, struct ioacct_jobdata **out);

/* ---- queries (ioacct) ---- */

/* At most this many items in each list of a filter. */
#define IOACCT_STORE_FILTER_MAX 256

/* Jobs as ioacct selects them; an empty list matches everything. */
struct ioacct_store_filter {
	const uint64_t *job_ids;
	size_t njob_ids;
	const uint32_t *uids;
	size_t nuids;
	const char *const *clusters;
	size_t nclusters;
	/* sacct's window: jobs running at some time in [start_ns, end_ns]; 0 = unbounded. */
	int64_t start_ns;
	int64_t end_ns;
	int64_t after_key;          /* only keys above it: the next page */
	size_t limit;               /* at most this many jobs; 0 = all */
	/* For ioacctd with a cluster store (query_fetch.h); a store file ignores them. */
	bool by_node;               /* one job per node, not summed over them */
	bool local;                 /* this node's store, not the cluster's */
	/*
	 * Every run of a job id (sacct -D): its requeues and its uses again.
	 * Without it a run is left out when the same job id (and cluster) has
	 * a later run, as sacct returns the most recent job of a number.
	 */
	bool duplicates;
	/*
	 * The cluster store leaves out the running parts of this node (a
	 * running job's step exports, issue 28): the caller lists them fresher
	 * from its own store. NULL: every part.
	 */
	const char *running_here;
};

/* Called for each job selected; a nonzero return stops the selection and is returned. */
typedef int (*ioacct_store_job_fn)(struct ioacct_store *st, const struct ioacct_job *job,
				   void *arg);

/*
 * Calls fn for every job matching f, in key order, inside one read
 * transaction: what fn loads through the same store belongs to the same
 * snapshot. -EINVAL for a list longer than IOACCT_STORE_FILTER_MAX.
 */
int ioacct_store_jobs_select(struct ioacct_store *st, const struct ioacct_store_filter *f,
			     ioacct_store_job_fn fn, void *arg);
/*
 * ioacct_store_job_load() without the series: what a listing needs; its RPC
 * rows summed over their bins (bin 0).
 */
int ioacct_store_job_load_totals(struct ioacct_store *st, int64_t job_key,
				 struct ioacct_jobdata **out);
/* A job's series alone, ordered by step, mount, op, bin; *out malloc'd (NULL when none). */
int ioacct_store_job_series(struct ioacct_store *st, int64_t job_key, struct ioacct_sample **out,
			    size_t *n);
/*
 * At most `limit` rows of a job's series after `after` (NULL: from the
 * first) in (step, mount, op, bin) order: a page of it for ioacctd's
 * replies. *out malloc'd (NULL when none).
 */
int ioacct_store_job_series_page(struct ioacct_store *st, int64_t job_key,
				 const struct ioacct_sample *after, size_t limit,
				 struct ioacct_sample **out, size_t *n);
/*
 * At most `limit` of a job's per-file records after `after` (NULL: from the
 * first) in (step, rank, mount, dev, ino) order: a page of them for
 * ioacctd's replies. *out malloc'd (NULL when none). -EOPNOTSUPP from a
 * store older than the per-file records (schema 8).
 */
int ioacct_store_job_files_page(struct ioacct_store *st, int64_t job_key,
				const struct ioacct_file *after, size_t limit,
				struct ioacct_file **out, size_t *n);
/*
 * The same for the MPI-IO records (issue 27), in (step, rank, pid, path)
 * order; limit 0: every one after `after`. -EOPNOTSUPP from a store older
 * than them (schema 10).
 */
int ioacct_store_job_mpiio_page(struct ioacct_store *st, int64_t job_key,
				const struct ioacct_mpiio *after, size_t limit,
				struct ioacct_mpiio **out, size_t *n);
/*
 * The same of its HDF5 records (issue 39), in (step, rank, pid, kind, name)
 * order; -EOPNOTSUPP from a store older than schema 21.
 */
int ioacct_store_job_h5_page(struct ioacct_store *st, int64_t job_key,
			     const struct ioacct_h5rec *after, size_t limit, struct ioacct_h5rec **out,
			     size_t *n);
/*
 * The same of its RPC rows (issue 40), in (step, mnt_id, prog, vers, proc,
 * flags, bin) order; -EOPNOTSUPP from a store older than schema 23.
 */
int ioacct_store_job_rpc_page(struct ioacct_store *st, int64_t job_key,
			      const struct ioacct_rpc *after, size_t limit, struct ioacct_rpc **out,
			      size_t *n);
/*
 * private_data: the database and its -wal and -shm files become readable by
 * their owner (ioacctd's account) and root alone (0600), or by everyone
 * again (0644). For the daemon, at start.
 */
int ioacct_store_set_private(struct ioacct_store *st, bool private_data);
/*
 * The database and its -wal and -shm files given to uid:gid (symbolic
 * links never followed). For the daemon, at start, before it gives up
 * root's rights for its own account (ioacct.conf's user).
 */
int ioacct_store_chown(struct ioacct_store *st, uid_t uid, gid_t gid);
/*
 * The account ioacctd runs as (ioacct.conf's user): the path checks of a
 * writer trust its directories and files as they trust root's. Process-wide;
 * set once, before the first open.
 */
void ioacct_store_set_owner(uid_t uid);

#endif /* IOACCT_STORE_H */
