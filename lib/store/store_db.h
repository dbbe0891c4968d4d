/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SQLite store's insides, shared by its files and by nothing outside
 * lib/store (programs use store.h):
 *   store.c         statements, errors, units of work: what every part uses
 *   store_open.c    open, migrate, close; a store removed under the daemon put back,
 *                   checked before each of the daemon's explicit transactions
 *   store_jobs.c    jobs, their steps, mounts, series, files, MPI-IO, HDF5 and RPC
 *                   rows and watches, written and loaded
 *   store_select.c  ioacct's job queries (filters, time windows)
 *   store_outbox.c  the outbox of the cluster store and the merged reports' specs
 *
 * Statements are prepared once per connection (store_stmt_get()) from the
 * table in store.c, indexed by enum stmt_id. Every function that fails
 * leaves its message in st->errmsg and returns -errno.
 */
#ifndef IOACCT_STORE_DB_H
#define IOACCT_STORE_DB_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "store.h"
#include "util.h"

/* The columns store_read_job() reads, in its order. */
#define JOB_COLS                                                                      \
	"key, cluster, job_id, node, source, uid, gid, user, name, workdir, "        \
	"array_job_id, array_task_id, start_ns, end_ns, state, exit_code, probe_mode, " \
	"bin_width_ns, dropped_events, dropped_bytes, restart, orig_bin_width_ns, cmdline, " \
	"lib_opens_missed"

/* The counter columns of files, in the order of struct ioacct_file (store_jobs.c). */
#define FILE_COLS                                                                     \
	"opens, reads, writes, stats, fsyncs, bytes_read, bytes_written, read_ns, "   \
	"write_ns, meta_ns, max_byte_read, max_byte_written, seq_reads, seq_writes, " \
	"consec_reads, consec_writes, first_read_ns, last_read_ns, first_write_ns, "  \
	"last_write_ns, size_read, size_written, mmap_bytes, cache_miss_bytes, seeks, " \
	"rw_switches, access1, access2, access3, access4, access1_count, "           \
	"access2_count, access3_count, access4_count"
#define FILE_NR_COLS 34

/* The counter columns of mpiio_files, in IOACCT_MPIIO_COUNTERS order (store_jobs.c). */
#define MPIIO_COL(name) #name ", "
#define MPIIO_COLS IOACCT_MPIIO_COUNTERS(MPIIO_COL) "size_read, size_written"
#define MPIIO_NR_COLS 21
/* The counter columns of hdf5_records, in IOACCT_H5_COUNTERS order (store_jobs.c). */
#define H5_COLS IOACCT_H5_COUNTERS(MPIIO_COL) "size_read, size_written"
#define H5_NR_COLS 42
/* The counter columns of rpc, in IOACCT_RPC_COUNTERS order (store_jobs.c). */
#define RPC_COLS IOACCT_RPC_COUNTERS(MPIIO_COL) "name"
#define RPC_KEY_COLS "step_id, mnt_id, prog, vers, proc, flags, bin"
#define RPC_SUM(name) "ioacct_u64sum(" #name "), "
/* RPC_COLS summed over a key's bins (store.c, store_retain.c). */
#define RPC_SUMS IOACCT_RPC_COUNTERS(RPC_SUM) "max(name)"

/* Sums of IOACCT_STORE_COUNTER_COLS over rows, modulo 2^64 like the counters (store.c). */
#define COUNTER_SUMS                                                                 \
	"ioacct_u64sum(bytes), ioacct_u64sum(calls), ioacct_u64sum(errors), "       \
	"ioacct_u64sum(ns), ioacct_u64sum(s0), ioacct_u64sum(s1), ioacct_u64sum(s2), " \
	"ioacct_u64sum(s3), ioacct_u64sum(s4), ioacct_u64sum(s5), ioacct_u64sum(s6), " \
	"ioacct_u64sum(s7), ioacct_u64sum(s8), ioacct_u64sum(s9), "                 \
	"ioacct_u64sum(err_notfound), ioacct_u64sum(err_access), "                  \
	"ioacct_u64sum(err_space), ioacct_u64sum(err_io), ioacct_u64sum(err_other)"

enum stmt_id {
	ST_BEGIN_READ,
	ST_BEGIN_WRITE,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAVEPOINT,
	ST_RELEASE,
	ST_ROLLBACK_TO,
	ST_USER_VERSION,
	ST_JOURNAL_WAL,
	ST_COUNT_TABLES,
	ST_TABLE_EXISTS,
	ST_JOB_INSERT,
	ST_JOB_GET,
	ST_JOB_FIND,
	ST_JOB_FIND_ANY,
	ST_JOB_FIND_NTH,
	ST_JOB_FIND_NTH_ANY,
	ST_JOB_FIND_EXACT,
	ST_JOB_FIND_RUNNING,
	ST_JOB_MAX_ID,
	ST_JOB_ADD_DROPPED,
	ST_JOB_ADD_LIB_MISSED,
	ST_JOB_FINISH,
	ST_STEPS_END,
	ST_STEP_PUT,
	ST_MOUNT_PUT,
	ST_SERIES_PUT,
	ST_TOTALS_DELETE,
	ST_TOTALS_COMPUTE,
	ST_WATCH_PUT,
	ST_WATCH_DELETE,
	ST_WATCHES_DELETE_JOB,
	ST_WATCH_LIST,
	ST_JOBS_RUNNING,
	ST_JOB_DELETE,
	ST_LOAD_STEPS,
	ST_LOAD_MOUNTS,
	ST_LOAD_TOTALS,
	ST_LOAD_TOTALS_RUNNING,
	ST_LOAD_SERIES,
	ST_LOAD_SERIES_PAGE,
	ST_EXPORT_QUEUE,
	ST_EXPORT_NEXT,
	ST_EXPORT_DONE,
	ST_EXPORT_COUNT,
	ST_SPEC_PUT,
	ST_SPEC_GET,
	ST_SPEC_NEXT,
	ST_FILE_PUT,
	ST_LOAD_FILES,
	ST_LOAD_FILES_PAGE,
	ST_LOAD_MPIIO_PAGE,
	ST_SPEC_DONE,
	ST_MPIIO_PUT,
	ST_H5_PUT,
	ST_LOAD_H5,
	ST_RPC_PUT,
	ST_LOAD_RPC,
	ST_LOAD_RPC_TOTALS,
	ST_COUNT,
};

struct ioacct_store {
	sqlite3 *db;
	int mode;
	int version;
	sqlite3_stmt *stmt[ST_COUNT]; /* prepared on first use, kept until close */
	char errmsg[PATH_MAX + 256];
	/* The writer's file, to notice it removed or replaced under the daemon. */
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
	bool lost;                    /* the file at path is not ours: being recreated */
	uint64_t retry_at_ms;
	unsigned int backoff_ms;
	int private_mode;             /* -1: never set; else what ioacct_store_set_private() chose */
	dev_t shm_dev;                /* the -shm (WAL index) SQLite maps, and its size */
	ino_t shm_ino;
	off_t shm_size;
};

/* ---- errors ---- */

/* Leaves the message in st->errmsg; returns err. */
__attribute__((format(printf, 3, 4)))
int store_error(struct ioacct_store *st, int err, const char *fmt, ...);
/* The errno for SQLite's result code `rc` on `db`. */
int store_sql_errno(sqlite3 *db, int rc);
/* "what failed: SQLite's message" in st->errmsg, and the errno for SQLite's code `rc`. */
__attribute__((format(printf, 3, 4)))
int store_sql_error(struct ioacct_store *st, int rc, const char *fmt, ...);

/* ---- uint64 in SQLite: the int64 with the same bits ---- */

static inline sqlite3_int64 u64_to_db(uint64_t v)
{
	/* Same bits, without relying on the implementation-defined cast. */
	return v > INT64_MAX ? -(sqlite3_int64)(UINT64_MAX - v) - 1 : (sqlite3_int64)v;
}

static inline uint64_t u64_from_db(sqlite3_int64 v)
{
	return (uint64_t)v;
}

/* ---- statements ---- */

/* The prepared statement `id`, prepared on first use. */
int store_stmt_get(struct ioacct_store *st, enum stmt_id id, sqlite3_stmt **out);

static inline void stmt_done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/*
 * Steps a statement that returns no rows and resets it. `bound` is the
 * result of its bind calls: nonzero when one failed (its code is then in
 * sqlite3_errcode()).
 */
__attribute__((format(printf, 4, 5)))
int store_stmt_run(struct ioacct_store *st, sqlite3_stmt *s, int bound, const char *fmt, ...);
/* Gets and runs statement `id`, which takes no parameters; `what` names it in the message. */
int store_stmt_exec(struct ioacct_store *st, enum stmt_id id, const char *what);
/* For undoing after a failure: the first error's message is the one to keep. */
void store_stmt_exec_quiet(struct ioacct_store *st, enum stmt_id id);
/* One integer from a statement returning one row. */
int store_stmt_int(struct ioacct_store *st, sqlite3_stmt *s, int bound, sqlite3_int64 *v,
		   const char *what);
/* Runs statement `id` with job_key as ?1; the message says "`what` of job N". */
int store_run_key(struct ioacct_store *st, enum stmt_id id, int64_t job_key, const char *what);

static inline int bind_i64(sqlite3_stmt *s, int i, int64_t v)
{
	return sqlite3_bind_int64(s, i, v);
}

static inline int bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	return sqlite3_bind_int64(s, i, u64_to_db(v));
}

/* 0 (not ended) is stored as NULL. */
static inline int bind_end(sqlite3_stmt *s, int i, int64_t end_ns)
{
	return end_ns ? sqlite3_bind_int64(s, i, end_ns) : sqlite3_bind_null(s, i);
}

/* A string from a fixed buffer, which may lack its NUL; the buffer outlives the statement's use. */
static inline int bind_buf(sqlite3_stmt *s, int i, const char *buf, size_t len)
{
	return sqlite3_bind_text(s, i, buf, (int)strnlen(buf, len), SQLITE_STATIC);
}

#define BIND_BUF(s, i, field) bind_buf((s), (i), (field), sizeof(field))

/* The counters as parameters first, first + 1, ... (IOACCT_STORE_COUNTER_COLS). */
int store_bind_counters(sqlite3_stmt *s, int first, const struct ioacct_counters *c);

static inline uint64_t col_u64(sqlite3_stmt *s, int i)
{
	return u64_from_db(sqlite3_column_int64(s, i));
}

/* The database is input: a string longer than its buffer is cut, NULL reads as "". */
static inline void col_str(sqlite3_stmt *s, int i, char *dst, size_t len)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	(void)ioacct_strlcpy(dst, v ? v : "", len);
}

/* The counters from columns first, first + 1, ... (IOACCT_STORE_COUNTER_COLS). */
void store_col_counters(sqlite3_stmt *s, int first, struct ioacct_counters *c);
/* A job from a row of JOB_COLS. */
void store_read_job(sqlite3_stmt *s, struct ioacct_job *j);

/* ---- transactions ---- */

/*
 * Starts a unit of work that must be atomic: a transaction of its own
 * outside an explicit one, a savepoint inside it. *outer tells which.
 */
int store_unit_begin(struct ioacct_store *st, bool write, bool *outer);
/* Commits the unit when err is 0, undoes it otherwise; returns err or the commit's error. */
int store_unit_end(struct ioacct_store *st, bool outer, int err);

#endif /* IOACCT_STORE_DB_H */
