/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Retention, as slurmdbd's PurgeJobAfter (issue 28): jobs that ended before
 * a cutoff are purged (deleted with everything they own), or their series
 * re-binned coarser (downsampled, every total kept exact).
 *
 * The contract is the store's, not SQLite's: the result and the progress
 * callback below are what a cluster store's purge (PostgreSQL) reports too,
 * so that ioacct --purge and the daemon drive either the same way.
 *
 * What is never touched, whatever its age: a running job (no end), a job
 * still in the outbox of the cluster store (export_queue: not yet exported)
 * when there is a cluster store (keep_unexported; without one every
 * finished job waits in the outbox for a cluster store that may never
 * come), and a job whose merged report this node still waits for
 * (report_specs).
 * A purge deletes whole jobs, a batch of them per transaction: killed at any
 * point, the store has every job either fully there or gone from every table.
 */
#ifndef IOACCT_RETAIN_H
#define IOACCT_RETAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Jobs per transaction at most (and 25,000 series rows, store_retain.c):
 * short enough that the daemon's drains wait little.
 */
#define IOACCT_PURGE_BATCH 64
#define IOACCT_DOWNSAMPLE_BATCH 8

/* One user's share of a purge (a dry run lists them). */
struct ioacct_purge_user {
	uint32_t uid;
	char user[64];
	uint64_t jobs;
};

struct ioacct_retain_result {
	uint64_t jobs;          /* purged or downsampled (would be, in a dry run) */
	uint64_t rows;          /* series rows deleted, or removed by re-binning */
	uint64_t bytes;         /* about how many bytes of the store those jobs take */
	uint64_t batches;       /* transactions committed */
	uint64_t kept_unexported; /* past the cutoff, kept: to be exported, or a merged report */
	struct ioacct_purge_user *users; /* a dry run's per-user counts (malloc'd) */
	size_t nusers;
};

/* After each batch; a nonzero return stops the work there (committed so far). */
typedef int (*ioacct_retain_progress_fn)(const struct ioacct_retain_result *so_far, void *arg);

struct ioacct_store;

/*
 * Deletes the finished jobs that ended before cutoff_ns (wall clock), with
 * their steps, mounts, series, totals, files and every other row keyed by
 * them, a batch of jobs per transaction. dry_run: counts what would
 * go (jobs, per user, rows, bytes) and changes nothing. `res` is filled
 * (free its users with ioacct_retain_result_free()). 0 or -errno, the
 * message in ioacct_store_errmsg().
 */
int ioacct_store_purge(struct ioacct_store *st, int64_t cutoff_ns, bool keep_unexported,
		       bool dry_run, ioacct_retain_progress_fn progress, void *arg,
		       struct ioacct_retain_result *res);

/*
 * Re-bins the series of the finished jobs that ended before cutoff_ns to
 * width_ns: each job's bin width becomes the smallest multiple of its own
 * at least width_ns (so that old bins fall whole into new ones), its bins
 * are summed into the new ones, and the job keeps the width it had
 * (orig_bin_width_ns). Jobs already that coarse are left alone.
 */
int ioacct_store_downsample(struct ioacct_store *st, int64_t cutoff_ns, uint64_t width_ns,
			    bool keep_unexported, ioacct_retain_progress_fn progress, void *arg,
			    struct ioacct_retain_result *res);

void ioacct_retain_result_free(struct ioacct_retain_result *res);

#endif /* IOACCT_RETAIN_H */
