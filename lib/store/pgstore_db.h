/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store's insides, shared by its files when built with libpq
 * (programs use pgstore.h):
 *   pgstore.c         the connection: open, migrate, close; errors; parameters
 *   pgstore_export.c  a finished job written (daemon/export.c)
 *   pgstore_query.c   pages of jobs selected, one job loaded
 *   pgstore_merge.c   a job's nodes' rows made into one whole job
 *   pgstore_report.c  the merged report of a job of several nodes
 *   pgstore_merged.c  a job of several nodes' series merged once, read again
 *   pgstore_rows.c    rows in and out: COPY text, compact series rows, samples from results
 *   pgstore_files.c   per-file and MPI-IO records in and out (schema 9)
 *   pgstore_rpc.c     RPC rows in and out (schema 20), a job's nodes' on one time axis
 *   pgstore_wait.c    the deadlines: every wait for the server, in poll()
 * Every function that fails leaves its message in pg->errmsg and returns -errno.
 */
#ifndef IOACCT_PGSTORE_DB_H
#define IOACCT_PGSTORE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <libpq-fe.h>

#include "pgstore.h"
#include "store.h"
#include "util.h"

/*
 * The parameterised statements the exporter runs per part or per batch,
 * prepared once per connection by pg_exec_prepared() as "ioacct_<name>":
 * no parse, analysis or planning at each call (PostgreSQL keeps a generic
 * plan once five custom ones cost no less; docs/performance.md, issue 28).
 */
#define PG_STMTS(X)                                                                         \
	X(blocks_missing) X(block_parts) X(place) X(files_not_kept) X(report_offer)         \
	X(report_claim) X(report_claim_skip) X(report_written) X(run_unmerged) X(run_lock)  \
	X(merged_forget) X(merged_insert) X(make_parts) X(make_mounts) X(make_series)       \
	X(h5_not_kept) X(rpc_not_kept)
#define PG_STMT_ENUM(name) PG_STMT_##name,
enum pg_stmt { PG_STMTS(PG_STMT_ENUM) PG_NR_STMTS };

struct ioacct_pgstore {
	PGconn *conn;               /* non-blocking: waited for in pgstore_wait.c alone */
	int stop_fd;                /* the owner's: readable, every wait gives up (-1: none) */
	uint32_t connect_ms;        /* the connection made within this */
	uint32_t silence_ms;        /* a server silent this long in a statement: gone (0: never) */
	char cut[160];              /* why the connection was given up ("": it was not) */
	/* Bit i: statement i (enum pg_stmt) is prepared on this connection. */
	uint32_t prepared;
	char errmsg[1024];
	/* The last selection summed a job of several nodes: it had no usable merged series. */
	bool merged_missing;
	/* The session's staging table of exported jobs' rows exists (pgstore_export.c). */
	bool export_batch;
};

/* ---- the compact series (schema 6) ---- */

/*
 * A series row's counters: one array per counter column, element i the
 * value of bin bins[i]. numeric: exact for the whole uint64 range, in sums.
 */
#define PG_SERIES_COUNTER_TYPE "numeric(20,0)[]"
/*
 * The series one row a bin, as a FROM item (alias it): job, step_id, mnt_id,
 * op, bin and the counters. A column older rows lack reads NULL there.
 */
#define PG_SERIES_ROWS                                                              \
	"(SELECT s.job, s.step_id, s.mnt_id, s.op, u.* FROM series s,"              \
	" unnest(bins, " IOACCT_STORE_COUNTER_COLS ") AS u(bin, "                   \
	IOACCT_STORE_COUNTER_COLS "))"

/* ---- the month blocks (schema 8) ---- */

/*
 * A part's id is its block << PG_BLOCK_SHIFT plus a sequence number: block b
 * (1 for January 2000 and before, one more a month) holds the parts that
 * ended in its month, PG_BLOCK_RUNNING those not ended (or written while
 * their month was being purged). The advisory lock (PG_BLOCK_LOCK, b): shared
 * by a transaction writing a part of block b, exclusive by a purge of it.
 */
#define PG_BLOCK_SHIFT 33
#define PG_BLOCK_RUNNING 1023
#define PG_BLOCK_LOCK "730804912"

/* ---- runs (schema 13, issue 36) ---- */

/*
 * A run is (cluster, job_id, restart, run_start): jobs.run_start is given to
 * a part as it goes in (ioacct_job_place(), ioacct_run_of()): the run_start
 * of the newest run of its (cluster, job_id, restart) that has no part on
 * its node and whose parts' times, widened by PG_RUN_SLACK_NS, meet its
 * own; else its own start (a new run). A node never holds two parts of one
 * run, and a job id used again runs later. Given under the advisory lock
 * (PG_RUN_LOCK, PG_RUN_BUCKET) of its (cluster, job_id, restart), held to
 * the commit: two nodes' first parts of a run written at once are one run.
 * One of 1024 buckets, not a lock per job id: a transaction writing
 * thousands of parts (a script, a bench) holds at most 1024 of the server's
 * lock slots. An exporter takes its batch's buckets in order first.
 */
#define PG_RUN_LOCK "730804914"
#define PG_RUN_KEY(t) t "cluster || '/' || " t "job_id || '/' || " t "restart"
#define PG_RUN_BUCKET(t) "(hashtext(" PG_RUN_KEY(t) ") & 1023)"
/*
 * How far apart in time two nodes' parts of one run may be: the nodes'
 * clocks and epilogs (a node where no step ran has a part from its epilog
 * alone), and iorun's parts of one job id on several nodes one after the
 * other. A Slurm job id used again on other nodes this soon after its last
 * use (the controller's state reset at once) would be taken for one run.
 */
#define PG_RUN_SLACK_NS "60000000000"
/*
 * The tables partitioned by block, in the order ioacct_block_parts() makes a
 * block's partitions (each taking an ACCESS EXCLUSIVE lock on its parent).
 * A batch's transaction locks the parents in this same order before it
 * writes (pgstore_export.c): a node making a month's partitions and another
 * writing its rows wait for each other, never in a cycle.
 */
#define PG_BLOCK_TABLES                                                                     \
	"series", "totals", "files", "mpiio_files", "steps", "mounts", "hdf5_records", "rpc"
#define PG_BLOCK_LOCK_SQL                                                                   \
	"LOCK TABLE ONLY series, ONLY totals, ONLY files, ONLY mpiio_files, ONLY steps,"     \
	" ONLY mounts, ONLY hdf5_records, ONLY rpc IN ROW EXCLUSIVE MODE"

/* ---- per-file, MPI-IO (pgstore_files.c, schema 9) and HDF5 records (schema 18) ---- */

/* The columns of files and mpiio_files after job, in COPY order (held_move copies them too). */
#define PG_FILE_COLS                                                                        \
	"step_id, rank, mnt_id, dev, ino, path, path_raw, opens, reads, writes, stats,"     \
	" fsyncs, bytes_read, bytes_written, read_ns, write_ns, meta_ns, seq_reads,"        \
	" seq_writes, consec_reads, consec_writes, mmap_bytes, cache_miss_bytes,"           \
	" max_byte_read, max_byte_written, first_read_ns, last_read_ns, first_write_ns,"    \
	" last_write_ns, size_read, size_written, seeks, gen, rw_switches, access1,"       \
	" access2, access3, access4, access1_count, access2_count, access3_count,"          \
	" access4_count"
#define PG_MPIIO_COL(name) " " #name ","
#define PG_MPIIO_COLS                                                                       \
	"step_id, rank, pid, path, path_raw," IOACCT_MPIIO_COUNTERS(PG_MPIIO_COL)           \
	" size_read, size_written"
/* The columns of hdf5_records after job, in COPY order (schema 21). */
#define PG_H5_COLS                                                                          \
	"step_id, rank, pid, kind, name, name_raw," IOACCT_H5_COUNTERS(PG_MPIIO_COL)        \
	" size_read, size_written"

/* The columns of rpc after job, in COPY order (schema 20; issue 40). */
#define PG_RPC_COL(name) ", " #name
#define PG_RPC_COLS                                                                         \
	"step_id, mnt_id, prog, vers, proc, flags, bin, name, name_raw"                     \
	IOACCT_RPC_COUNTERS(PG_RPC_COL)

/* ---- errors ---- */

/* Leaves the message in pg->errmsg; returns err. */
__attribute__((format(printf, 3, 4)))
int pg_error(struct ioacct_pgstore *pg, int err, const char *fmt, ...);
/*
 * The error of a failed call: the connection's when it broke (-ECONNRESET),
 * else the result's: -EINVAL when the data was refused, else -EIO.
 */
int pg_conn_error(struct ioacct_pgstore *pg, const PGresult *res, const char *what);

/* ---- the waits (pgstore_wait.c): never libpq's own blocking calls ---- */

/*
 * The connection of keys/values (PQconnectStartParams), made within
 * pg->connect_ms and left non-blocking: 0, or -errno (pg->conn, when
 * not NULL, holds libpq's message, or pg->cut why it was given up).
 */
int pg_connect(struct ioacct_pgstore *pg, const char *const *keys, const char *const *values);
/* The next result of what was sent, as PQgetResult(), waited for within the deadlines. */
PGresult *pg_result(struct ioacct_pgstore *pg);
/* As PQexec(), PQexecParams() (text in and out), PQprepare() and PQexecPrepared(). */
PGresult *pg_run(struct ioacct_pgstore *pg, const char *sql);
PGresult *pg_run_params(struct ioacct_pgstore *pg, const char *sql, int n,
			const char *const *params);
PGresult *pg_run_prepare(struct ioacct_pgstore *pg, const char *name, const char *sql, int n);
PGresult *pg_run_prepared(struct ioacct_pgstore *pg, const char *name, int n,
			  const char *const *params);
/* Sends what libpq holds; COPY data and its end, sent. 0 or -errno. */
int pg_flush(struct ioacct_pgstore *pg);
int pg_put_copy(struct ioacct_pgstore *pg, const char *p, size_t len);
int pg_put_copy_end(struct ioacct_pgstore *pg, const char *why);

/* ---- parameters and statements ---- */

/*
 * A name as a text parameter: PostgreSQL's text is UTF-8 (client_encoding
 * is set so), and a byte that is not refuses the whole job. Valid names go
 * as they are; others as a copy with U+FFFD for their invalid bytes, kept
 * in *owned for the caller to free. NULL (errno ENOMEM) when out of memory.
 */
const char *pg_text_param(const char *s, char **owned);
/*
 * The exact bytes of a path that is not valid UTF-8, as bytea input
 * (\x and hex digits, malloc'd); NULL when the path is valid UTF-8 (its
 * text column is exact), or out of memory (*nomem).
 */
char *pg_raw_param(const char *s, bool *nomem);
/* Runs SQL that returns nothing (or rows nobody reads). */
int pg_exec(struct ioacct_pgstore *pg, const char *sql, const char *what);
/*
 * Statement stmt (sql, always the same text for it, with nparams parameters)
 * prepared on this connection if it is not yet, its name in name: 0 or
 * -errno (what failed, in pg->errmsg). A statement that failed to prepare
 * (in an aborted transaction, on a lost connection) is not taken for
 * prepared: the next call prepares it again; a new connection has none.
 */
int pg_prepare(struct ioacct_pgstore *pg, enum pg_stmt stmt, const char *sql, int nparams,
	       char name[32], const char *what);
/* Statement stmt run with params (prepared first if need be): its result, or the prepare's. */
PGresult *pg_exec_prepared(struct ioacct_pgstore *pg, enum pg_stmt stmt, const char *sql,
			   int nparams, const char *const *params);
/* Ends an open transaction, if any, without a word: after an error, whose message stays. */
void pg_rollback_quiet(struct ioacct_pgstore *pg);

/* ---- SQL and COPY text ---- */

/* A growing string; `failed` once out of memory, after which adding does nothing. */
struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
void pg_buf_add(struct buf *b, const char *fmt, ...);
/*
 * A string field of COPY's text format, at most max bytes of s, then sep:
 * escaped, and valid UTF-8 as pg_text_param() makes it.
 */
void pg_buf_copy_text(struct buf *b, const char *s, size_t max, char sep);
/* COPY ... FROM STDIN started; its data sent from b when big enough (force: all); ended. */
int pg_copy_begin(struct ioacct_pgstore *pg, const char *sql);
int pg_copy_flush(struct ioacct_pgstore *pg, struct buf *b, bool force);
/* Ends the COPY: committed to the statement when err is 0, else given up; err or its error. */
int pg_copy_end(struct ioacct_pgstore *pg, struct buf *b, int err, const char *what);
/*
 * The samples s[0..n) as compact series rows (schema 6), one per (step,
 * mount, op), through copy_sql ("COPY table (key columns..., step_id,
 * mnt_id, op, bins, counters) FROM STDIN"); key: the COPY text of the key
 * columns, tab-separated. Any order; b is the caller's scratch buffer.
 */
int pg_put_series(struct ioacct_pgstore *pg, const char *copy_sql, const char *key,
		  const struct ioacct_sample *s, size_t n, struct buf *b);
/* The same rows into a COPY the caller has begun (and ends): several keys in one COPY. */
int pg_buf_series(struct ioacct_pgstore *pg, const char *key, const struct ioacct_sample *s,
		  size_t n, struct buf *b);

/* ---- reading rows ---- */

/* A node's row of a job, and where its children are in the page's results. */
struct member {
	int64_t key;             /* the job it belongs to */
	int64_t id;
	struct ioacct_job job;
	uint64_t *mnt_from, *mnt_to; /* its mount keys -> the whole job's */
	size_t nmnt;
};

/* A page's children, one result each, ordered by job. */
struct children {
	PGresult *res;
	int64_t *job;            /* the job column, parsed */
	int n;
};

static inline uint64_t val_u64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoull(PQgetvalue(res, row, col), NULL, 10);
}

static inline int64_t val_i64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static inline void val_str(const PGresult *res, int row, int col, char *dst, size_t len)
{
	ioacct_strlcpy(dst, PQgetisnull(res, row, col) ? "" : PQgetvalue(res, row, col), len);
}


/*
 * The whole job of members m[0..n) (one page's rows of one job, from
 * pgstore_query.c) with its children from the page's results: its jobdata,
 * and its peaks when asked, handed to fn; fn's result, or -errno. rpc (of
 * PG_RPC_TOTALS_SQL; NULL: not selected): a listing's RPC totals.
 */
int pg_group_emit(struct ioacct_pgstore *pg, struct member *m, size_t n,
		  const struct children *steps, const struct children *mounts,
		  const struct children *totals, const struct children *series,
		  const struct children *rpc, bool peaks, bool keep_series,
		  ioacct_pgstore_job_fn fn, void *arg);

/* ---- the merged series of a job of several nodes (pgstore_merged.c, schema 7) ---- */

/*
 * Writes jd's series (a whole job of several nodes, as pg_group_emit
 * makes it) as its run's merged series, replacing any: within the
 * caller's transaction, under a savepoint, so that a failure costs only
 * them (a reader sums the nodes then). 0 or -errno.
 */
int pg_merged_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd);
/*
 * The merged series of the job of members m[0..n), added to jd->series
 * (*cap its room), when they were made from exactly these members: 1;
 * 0 when there are none to use; -errno on failure.
 */
int pg_merged_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
		  struct ioacct_jobdata *jd, size_t *cap);
/*
 * Within an export's transaction, after its parts' rows (pgstore_export.c):
 * the merged series of each of the batch's runs whose merged report's
 * expected nodes (job_reports, cardinality > 1) all have a finished part
 * now, made once from the parts (summed in C, as the readers would) and
 * written; a run made whole again by a part written again is made again.
 * A failure to make them costs only them (a savepoint: the first whole
 * read sums the nodes then); 0, or -errno when the transaction is lost.
 */
int pg_merged_complete(struct ioacct_pgstore *pg);
/*
 * After a merged report's offer (pgstore_report.c), outside any transaction:
 * its run's merged series made when its expected parts are all there and
 * none are made (the last part was exported before the report's row existed:
 * each node offers after its own export). job names the run as the cluster
 * store does (its run_start there). 0, or -errno (nothing made).
 */
int pg_merged_offered(struct ioacct_pgstore *pg, const struct ioacct_job *job);
/* The key of pg_merged_complete's advisory locks (hashtextextended's seed). */
#define PG_MERGED_LOCK "730804913"
/* Forgets the merged series of a run: a part of it is written again (in the caller's transaction). */
int pg_merged_forget(struct ioacct_pgstore *pg, const char *const params[4]);
/* The counters in columns first.. of a result row (IOACCT_STORE_COUNTER_COLS order), added to c. */
void pg_counters_add(struct ioacct_counters *c, const PGresult *res, int row, int first);
/* Adds a sample to a, summed with one of the same (step, mount, op[, bin]); -ENOMEM. */
int pg_sample_add(struct ioacct_sample **a, size_t *n, size_t *cap, bool with_bin,
		  const struct ioacct_sample *s, const PGresult *res, int row, int first);

/* ---- the per-file, MPI-IO (pgstore_files.c, schema 9) and HDF5 records (18) ---- */

/*
 * The per-file, MPI-IO and HDF5 records of n parts jds[i], whose rows of
 * jobs have ids ids[i], in the caller's transaction: one COPY per table for
 * them all. A part without them read is marked so (files_loaded,
 * mpiio_loaded: jobs.files_kept false; h5_loaded: jobs.h5_kept false). b is
 * the caller's scratch buffer. 0 or -errno.
 */
int pg_records_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
		   char (*ids)[24], size_t n, struct buf *b);
/*
 * The records of the members m[0..n) of a whole job into jd (its mounts
 * merged, jd->job its start), as each node's SQLite has them: their mount
 * ids the whole job's, times from the whole job's start. files_loaded
 * and mpiio_loaded only when every part has them (jobs.files_kept),
 * h5_loaded only when every part has its HDF5 records (jobs.h5_kept).
 * 0 or -errno.
 */
int pg_records_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
		   struct ioacct_jobdata *jd);
/*
 * COPY text of a name or path (at most max bytes) and its exact bytes, each
 * then a tab: its text with U+FFFD, then the bytes when not UTF-8, else NULL.
 */
void pg_buf_path(struct buf *b, const char *path, size_t max);
/* The parts in list ("{1,2", closed here) marked by the prepared statement stmt (sql). */
int pg_mark_not_kept(struct ioacct_pgstore *pg, struct buf *list, enum pg_stmt stmt,
		     const char *sql);
/* A name or path: its exact bytes when kept (bytea column col + 1), else its text (col). */
void pg_val_path(const PGresult *res, int row, int col, char *dst, size_t len);
/* A member's mount id as the whole job's (merge_mounts' map). */
uint64_t pg_mnt_of(const struct member *m, uint64_t mnt_id);
/* The parts ids of members m[0..n) as a bigint[] literal ("{1,2}") in ids; -ENOMEM. */
int pg_member_ids(const struct member *m, size_t n, struct buf *ids);
/*
 * The rows of sql ($1 the parts ids) when every part has them kept (kept:
 * a boolean column of jobs, false for the parts written before their
 * schema); else NULL with *err 0 (not read), or NULL with *err on failure.
 */
PGresult *pg_kept_rows(struct ioacct_pgstore *pg, const char *kept, const char *sql,
		       const char *ids, const char *what, int *err);
/* The member of part id, NULL when none (rows come by job). */
const struct member *pg_member_of(const struct member *m, size_t n, int64_t id);
/* The rows of sql with $1 the parts ids ("{1,2}"); NULL with *err (said) when it failed. */
PGresult *pg_query_ids(struct ioacct_pgstore *pg, const char *sql, const char *ids,
		       const char *what, int *err);

/* ---- RPC rows (pgstore_rpc.c, schema 20; issue 40) ---- */

/*
 * The RPC rows of n parts jds[i] (rows of jobs ids[i]), in the caller's
 * transaction: one COPY for them all; a part without them read is marked
 * so (jobs.rpc_kept false). 0 or -errno.
 */
int pg_rpc_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
	       char (*ids)[24], size_t n, struct buf *b);
/*
 * The RPC rows of the members m[0..n) of a whole job into jd (its mounts
 * merged, jd->job its start and width), after pg_records_get(): each node's mount ids the whole job's, its bins shifted
 * onto the earliest node's as the series are, the rows of one key summed,
 * in the stores' order; rpc_loaded only when every part has them
 * (jobs.rpc_kept). 0 or -errno.
 */
int pg_rpc_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
	       struct ioacct_jobdata *jd);
/* A row of PG_RPC_COLS after job (column 0); its mount and bin as the part has them. */
void pg_rpc_from_row(const PGresult *res, int r, struct ioacct_rpc *x);
/* jd->rpc sorted, the rows of one key (two nodes' of one mount path and bin) summed. */
void pg_rpc_merge(struct ioacct_jobdata *jd);
/*
 * A page's RPC totals for ioacct's listings (issue 40): every part of the
 * page once, its own rows summed over their bins (bin 0) in PG_RPC_COLS
 * order, then jobs.rpc_kept; a part without rows, one row of NULLs. $1: the
 * parts' ids.
 */
#define PG_RPC_R_COL(name) ", r." #name
#define PG_RPC_SUM_AS(name) ", sum(" #name ") AS " #name
#define PG_RPC_TOTALS_SQL                                                                   \
	"SELECT j.id, r.step_id, r.mnt_id, r.prog, r.vers, r.proc, r.flags, 0, r.name,"      \
	" r.name_raw" IOACCT_RPC_COUNTERS(PG_RPC_R_COL) ", j.rpc_kept FROM jobs j"           \
	" LEFT JOIN (SELECT job, step_id, mnt_id, prog, vers, proc, flags, max(name) AS name," \
	" (array_agg(name_raw))[1] AS name_raw" IOACCT_RPC_COUNTERS(PG_RPC_SUM_AS)           \
	" FROM rpc WHERE job = ANY($1::bigint[]) AND flags & 1 = 0"                          \
	" GROUP BY job, step_id, mnt_id, prog, vers, proc, flags) r ON r.job = j.id"         \
	" WHERE j.id = ANY($1::bigint[]) ORDER BY j.id"

#endif /* IOACCT_PGSTORE_DB_H */
