/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store: every node's finished jobs in one PostgreSQL database
 * (config: cluster_db, a libpq connection string). The node's SQLite store
 * stays the source and the outbox (daemon/export.c); this module connects,
 * migrates the schema forward and writes one job with all its rows in one
 * transaction. Built only with libpq (HAVE_LIBPQ); without it every call
 * fails with -ENOTSUP and says so.
 *
 * Tables (schema version IOACCT_PGSTORE_SCHEMA_VERSION, table ioacct_schema):
 *   jobs    one row per (cluster, job_id, node, start_ns); id is the key of the rest;
 *           restart (schema 5): Slurm's restart count; run_start (schema 13): the
 *           start of the run's first part stored, given as a part goes in; a job
 *           whole is its nodes' rows of one run, (cluster, job_id, restart,
 *           run_start): a job id used again is another run (pgstore_db.h)
 *   steps   (job, step_id)
 *   mounts  (job, mnt_id) -> path, fs type, source
 *   totals  (job, step_id, mnt_id, op) -> counters
 *   series  (job, step_id, mnt_id, op) -> bins[] and one array per counter, element i
 *           of bin bins[i] (schema 6; one row per bin before); the view
 *           series_bins shows them one row per bin
 *   merged_jobs, merged_series  (cluster, job_id, restart, run_start[, step_id,
 *           mnt_id, op]) -> a
 *           job of several nodes' series aligned and summed, made once when its
 *           last expected part is exported (or, without a merged report, at its
 *           first whole read), for the parts named in members (schema 7)
 *   series and totals are partitioned by the month their part ended (schema 8):
 *           a part's id is its block << 33 plus a sequence number, one
 *           partition a block (series_2026_11, totals_running), see pgstore.c
 *   files   (job, step_id, rank, mnt_id, dev, ino, gen) -> path, path_raw and Darshan's
 *           POSIX counters of a file, as the node's SQLite files (schema 9, seeks 11;
 *           gen, rw_switches and access1..4(_count) 12; the "other files" records
 *           too: dev and ino 0)
 *   mpiio_files  (job, step_id, rank, pid, path) -> MPI-IO counters (schema 9)
 *           files and mpiio_files are partitioned as series and totals;
 *           jobs.files_kept says a part's are there (false: written before)
 *   hdf5_records  (job, step_id, rank, pid, kind, name) -> name_raw and Darshan's H5F
 *           (kind 0) or H5D (kind 1) counters of a process (schema 18; timestamps
 *           and slowest calls 19; selection kinds and chunk dims 21), partitioned as files; jobs.h5_kept says a part's are there (false: written before)
 *   rpc     (job, step_id, mnt_id, prog, vers, proc, flags, bin) -> the procedure's
 *           name and mountstats' counters of a part's RPCs (schema 20; issue 40; flags 1:
 *           sent by no job during the part), partitioned as files; jobs.rpc_kept says a
 *           part's are there (false: written before)
 *   job_reports  (cluster, job_id, restart, run_start) -> the merged report of a run of several
 *           nodes: expected nodes, path, formats, owner, deadline, and
 *           who wrote it when, without which nodes (schema 3)
 * Text is UTF-8: a name with bytes that are not (a job name, a workdir, a
 * mount path: anyone's bytes) is stored with U+FFFD for them, as the JSON
 * output shows it, and a path's exact bytes kept beside it in a bytea
 * column (jobs.workdir_raw, mounts.path_raw, job_reports.path_raw and
 * copy_dir_raw; NULL when the text is exact; schema 4).
 * The counters are numeric(20,0): exact for the whole uint64 range, in sums too.
 * Their columns follow IOACCT_STORE_COUNTER_COLS: a column new there is added
 * here on connect.
 *
 * A job is written by deleting that node's row of it (its children go with
 * it) and inserting it again, in one transaction: writing a job twice, as
 * after a crash between PostgreSQL's commit and SQLite's unqueue, leaves
 * exactly one copy.
 */
#ifndef IOACCT_PGSTORE_H
#define IOACCT_PGSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "model.h"
#include "query.h"
#include "store.h"

#define IOACCT_PGSTORE_SCHEMA_VERSION 21

struct ioacct_pgstore;

/* Whether this build has libpq. */
bool ioacct_pgstore_available(void);

/*
 * The files libpq may read, by name, to connect with conninfo (the rules
 * of what the worker holding the connection may open, daemon/sandbox.h):
 * its file options (passfile, sslcert, sslkey, sslrootcert, sslcrl,
 * sslcrldir), the PG* variables naming files or their directory, and the
 * account's ~/.pgpass, ~/.pg_service.conf and ~/.postgresql, for $HOME and
 * the account's home both (libpq takes the first it has). Each given to
 * add(ctx, path); 0, or the first nonzero add returned; -EINVAL when
 * conninfo does not parse. Without libpq: none, 0.
 */
int ioacct_pgstore_conninfo_files(const char *conninfo, int (*add)(void *ctx, const char *path),
				  void *ctx);

/*
 * Every wait for the server has a deadline (pgstore_wait.c): the connect
 * within connect_ms; a statement's server silent for statement_ms (its
 * statement_timeout) plus IOACCT_PGSTORE_GRACE_MS is given up, the
 * connection closed; a host that stops answering at the TCP level is seen
 * within idle_ms (keepalives, tcp_user_timeout). stop_fd (-1: none), once
 * readable, ends every wait at once: the call fails as for a lost
 * connection (the transaction in progress is rolled back by the server).
 * ioacct.conf: cluster_db_connect_timeout, _statement_timeout, _idle_timeout.
 */
struct ioacct_pgstore_opts {
	uint32_t connect_ms;
	uint32_t statement_ms;
	uint32_t idle_ms;
	int stop_fd;
};
#define IOACCT_PGSTORE_GRACE_MS 5000
#define IOACCT_PGSTORE_OPTS_DEFAULT                                                       \
	{ .connect_ms = 10000, .statement_ms = 300000, .idle_ms = 60000, .stop_fd = -1 }
/* The configuration's deadlines, and the owner's stop fd. */
void ioacct_pgstore_opts_config(struct ioacct_pgstore_opts *o, const struct ioacct_config *cfg,
				int stop_fd);

/*
 * Connects and migrates (the migration without a statement deadline: it
 * takes what it takes, and waits for another node's). opts: NULL for the
 * defaults. NULL with `err` filled ("cluster store <where>: what failed")
 * and errno set: -ENOTSUP without libpq, -ECONNREFUSED when it cannot
 * connect, -ETIMEDOUT when it gave up waiting, -ECANCELED when stopped,
 * -EIO for any other failure.
 */
struct ioacct_pgstore *ioacct_pgstore_open(const char *conninfo,
					   const struct ioacct_pgstore_opts *opts, char *err,
					   size_t errlen);
/*
 * Connects to read only (every transaction read-only, no migration): for a
 * command such as ioacct --purge --dry-run --cluster-store, which must
 * change nothing, not even the schema. NULL with err filled when the store
 * has not exactly this build's schema (-ENOTSUP) or none yet (-ENOENT).
 */
struct ioacct_pgstore *ioacct_pgstore_open_readonly(const char *conninfo,
						    const struct ioacct_pgstore_opts *opts,
						    char *err, size_t errlen);
void ioacct_pgstore_close(struct ioacct_pgstore *pg);
const char *ioacct_pgstore_errmsg(const struct ioacct_pgstore *pg);
/* Whether the connection still works (after a failure: reconnect when not). */
bool ioacct_pgstore_connected(const struct ioacct_pgstore *pg);

/*
 * Writes a finished job, its steps, mounts, totals and series in one
 * transaction, replacing what an earlier write of the same job left.
 * 0 once PostgreSQL has committed; -errno otherwise (nothing written):
 * -EINVAL when PostgreSQL refused the job's data (SQLSTATE class 22 or 23:
 * writing it again would fail again), -ECONNRESET when the connection was
 * lost, -EIO for another failure (which may pass later).
 */
int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd);
/*
 * Writes n jobs as ioacct_pgstore_job_put() writes one, in one transaction:
 * all of them committed, or none. The same errors, for the batch: write
 * its jobs one by one to find the one at fault. A node's exporter with a
 * backlog sends up to IOACCT_PGSTORE_BATCH_JOBS jobs a batch, and stops
 * adding at IOACCT_PGSTORE_BATCH_SAMPLES samples (series and totals; a
 * per-file or MPI-IO record counts as the samples of its size, about 8):
 * one transaction, a dozen round trips and one fsync for them all.
 */
#define IOACCT_PGSTORE_BATCH_JOBS 32
#define IOACCT_PGSTORE_BATCH_SAMPLES 200000
int ioacct_pgstore_jobs_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
			    size_t n);

/*
 * A connection for queries, which ioacctd makes in its event loop: it gives
 * up connecting after a few seconds and every statement after timeout_ms
 * (statement_timeout, in place of opts'), so that a slow or absent
 * PostgreSQL holds nobody long. The exporter has its own (ioacct_pgstore_open).
 */
struct ioacct_pgstore *ioacct_pgstore_open_query(const char *conninfo, int timeout_ms,
						 const struct ioacct_pgstore_opts *opts, char *err,
						 size_t errlen);

/* Called for each job selected; a nonzero return stops the selection and is returned. */
typedef int (*ioacct_pgstore_job_fn)(const struct ioacct_jobdata *jd,
				     const struct ioacct_qpeak *peaks, size_t npeaks, void *arg);

/*
 * The jobs of f, as ioacct_store_jobs_select() gives a node's (f->local is
 * the caller's business; an earlier run gives way to a later one unless
 * f->duplicates). A job is whole: the rows of every node of the same run
 * (cluster, job id, restart, run_start) summed into one (f->by_node: one per node, the
 * nodes of a job together, by name, keyed as pgstore.c says). Its
 * key is the smallest id of its rows, its Node the list of its nodes, its
 * start the earliest, its end the latest, its state and exit code those of
 * the node with the highest exit code. Steps of the same id are one step;
 * mounts of the same path are one mount (renumbered from 1); totals are
 * summed, and with `peaks` the series too, bin by bin as each node numbered
 * them (from its own start). The cluster store holds finished jobs: those
 * selected by a window are the ones started by its end and ended in it or
 * after. 0, fn's nonzero return, or -errno (message in errmsg).
 */
int ioacct_pgstore_jobs_select(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
			       bool peaks, ioacct_pgstore_job_fn fn, void *arg);

/*
 * Job job_id of cluster (NULL or "": the one with the highest key) whole,
 * as ioacct_pgstore_jobs_select() sums it, with its series: the nodes'
 * bins of the same number summed, each node's moved onto the earliest
 * node's start. run: run - 1 is the run's place among the job id's runs
 * by start, oldest first (as ioacct -D lists them; a requeued job's restart
 * count when its id was never used again); 0: the last. -ENOENT when the
 * cluster store does not have it. *out: ioacct_jobdata_free().
 */
int ioacct_pgstore_job_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    uint32_t run, struct ioacct_jobdata **out);
/* The same of the run (cluster, job_id, restart, run_start) exactly, as a job row named it. */
int ioacct_pgstore_run_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    uint32_t restart, int64_t run_start, struct ioacct_jobdata **out);

/*
 * The merged report of a job of several nodes (issue 13), one per run of it
 * (a requeued job's runs, a job id used again: each has its own). Every
 * node, after committing its part `job` (this node's row of the run: its
 * run is the one the cluster store gave that part), offers the report (the
 * first offer makes the row, its deadline now + merge_timeout_s on
 * PostgreSQL's clock), then claims it.
 */
int ioacct_pgstore_report_offer(struct ioacct_pgstore *pg, const struct ioacct_job *job,
				const struct ioacct_report_spec *spec, uint32_t merge_timeout_s);

/* What a claim gives the writer: the spec, and the user to write as. */
struct ioacct_pgstore_report {
	struct ioacct_report_spec spec;
	uint32_t uid, gid;
};

/*
 * Opens a transaction and locks the job's report row (skip_locked: FOR
 * UPDATE SKIP LOCKED, for the idle poll; else waits for the lock). 0: this
 * caller writes it, the transaction stays open, *jd is the whole job
 * (ioacct_pgstore_job_load) with missing_nodes set when the deadline passed
 * without some nodes; then ioacct_pgstore_report_written() or _abort().
 * Otherwise the transaction is over: -EALREADY when written already,
 * -EAGAIN when it must wait (nodes missing before the deadline, or locked
 * with skip_locked), -ENOENT without a row, another -errno on failure.
 */
int ioacct_pgstore_report_claim(struct ioacct_pgstore *pg, const struct ioacct_job *part,
				bool skip_locked, struct ioacct_pgstore_report *rep,
				struct ioacct_jobdata **jd);
/* Marks the claimed report written by part->node and commits. */
int ioacct_pgstore_report_written(struct ioacct_pgstore *pg, const struct ioacct_job *part,
				  const char *missing);
/* Gives a claim up (rolls back): another node, or a later poll, tries again. */
void ioacct_pgstore_report_abort(struct ioacct_pgstore *pg);

/* What a purge or a downsample did (or, dry, would do). */
struct ioacct_pgstore_purge_counts {
	uint64_t runs;   /* runs of jobs (cluster, job id, restart, run_start), whole */
	uint64_t parts;  /* their nodes' rows in jobs: deleted, or re-binned */
	uint64_t series; /* series rows (one per job, node, step, mount, op): deleted, or re-binned */
	uint64_t months; /* of them, months purged whole: their partitions dropped (schema 8) */
};

/* What a cluster purge says as it goes (its progress callback). */
enum ioacct_pgstore_purge_step {
	IOACCT_PG_PURGE_MONTH,   /* a month's runs deleted (dry: would be); counts: the month's */
	IOACCT_PG_PURGE_DROPPED, /* the month's partitions detached and dropped */
	IOACCT_PG_PURGE_BATCH,   /* a batch of the rest committed; counts: the rest's so far */
	IOACCT_PG_PURGE_REST,    /* dry: what the rest (row by row) would delete */
};

struct ioacct_pgstore_purge_progress {
	enum ioacct_pgstore_purge_step step;
	char month[8];                           /* "YYYY-MM" (UTC): MONTH, DROPPED */
	struct ioacct_pgstore_purge_counts counts;
	uint64_t ms;                             /* the step's time */
};

/* After each step; a nonzero return stops the purge there (committed so far). */
typedef int (*ioacct_pgstore_purge_fn)(const struct ioacct_pgstore_purge_progress *p, void *arg);

/*
 * Retention (issue 28). Deletes every run of a job whose parts all ended
 * before cutoff_unix (seconds since the epoch) and whose merged report, if
 * any, is written, with every row of it (steps, mounts, totals, series, its
 * merged series and report row). First every month that ended before the
 * cutoff, whole (schema 8: its runs' small rows in one transaction, then its
 * partitions detached concurrently and dropped; counts->months), then the
 * rest in batches, a transaction each, so that exports and queries go on and
 * an interruption leaves whole runs. dry_run: counts what would go and
 * changes nothing, by ranges of ids (a month is an id range) in one
 * read-only statement: exact at its snapshot, the figures the purge would
 * report right after. progress (may be NULL): called for each month (and
 * when its partitions are dropped), after each batch of the rest, and, dry,
 * once per month and once for the rest. 0 or -errno (message in errmsg);
 * -ECANCELED when progress stopped it.
 */
int ioacct_pgstore_purge(struct ioacct_pgstore *pg, int64_t cutoff_unix, bool dry_run,
			 ioacct_pgstore_purge_fn progress, void *arg,
			 struct ioacct_pgstore_purge_counts *counts);
/*
 * The cluster purge's cutoff for purge_after_s at now (seconds): with four
 * weeks or more, the start (UTC) of the month it falls in, as slurmdbd purges
 * by the month (a month's runs go together, its partitions dropped); else
 * now - purge_after_s. ioacctd's cluster_retention and ioacct --purge
 * --cluster-store --dry-run both use it.
 */
int64_t ioacct_pgstore_purge_cutoff(int64_t now, uint64_t purge_after_s);
/*
 * Re-bins the series of the same runs (ended before cutoff_unix) to
 * bin_width_ns where their width divides it: bin b becomes b / (new / old),
 * the samples of a new bin summed (the totals stay exact, the series'
 * sums too); the parts' bin_width_ns set, the runs' merged series forgotten
 * (made again at their next whole read). Same batches and dry_run.
 */
int ioacct_pgstore_downsample(struct ioacct_pgstore *pg, int64_t cutoff_unix,
			      uint64_t bin_width_ns, bool dry_run,
			      struct ioacct_pgstore_purge_counts *counts);

#endif /* IOACCT_PGSTORE_H */
