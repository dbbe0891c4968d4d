/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SQLite store (see store.h for the contract).
 *
 * SQLite integers are signed 64-bit: a uint64_t is stored as the int64 with
 * the same bits and converted back on read, so values of 2^63 and above
 * round-trip exactly (they only look negative in the sqlite3 shell). For the
 * same reason sums of counters go through ioacct_u64sum() and additions
 * through ioacct_u64add(), which work modulo 2^64 like the C counters do,
 * where SQLite's SUM() fails with "integer overflow" and + turns into a REAL.
 *
 * Writes made outside ioacct_store_begin() are transactions of their own;
 * those made of several statements (job_finish) run as one transaction, or
 * as one savepoint inside the caller's transaction, so that a failure undoes
 * that call alone and the caller's transaction goes on.
 */
#include "store.h"
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "log.h"
#include "util.h"

#define RDWR_BUSY_MS 5000
#define RDONLY_BUSY_MS 2000

/*
 * Migration step k brings schema k-1 to k. Never edit a step once released:
 * databases in the field were made by it; add a step instead.
 */
#define V1_COUNTERS                                                                 \
	"bytes INTEGER NOT NULL, calls INTEGER NOT NULL, errors INTEGER NOT NULL, " \
	"ns INTEGER NOT NULL, s0 INTEGER NOT NULL, s1 INTEGER NOT NULL, "          \
	"s2 INTEGER NOT NULL, s3 INTEGER NOT NULL, s4 INTEGER NOT NULL, "          \
	"s5 INTEGER NOT NULL, s6 INTEGER NOT NULL, s7 INTEGER NOT NULL, "          \
	"s8 INTEGER NOT NULL, s9 INTEGER NOT NULL"

/*
 * The outbox of the cluster store (daemon/export.c): a finished job waits
 * here until PostgreSQL has committed it. Jobs finished before this step
 * wait too, so that a node's whole history reaches the cluster store. Its
 * own step (schema 5).
 */
#define MIGRATION_EXPORT_QUEUE                                                         \
	"CREATE TABLE export_queue ("                                                  \
	" job_key INTEGER PRIMARY KEY REFERENCES jobs(key) ON DELETE CASCADE);"        \
	"INSERT INTO export_queue SELECT key FROM jobs WHERE end_ns IS NOT NULL;"

/*
 * 6: the spec of a job's merged report (issue 13), kept with the finished
 * job until this node has seen the report written. Its own step.
 */
#define MIGRATION_REPORT_SPECS                                                          \
	"CREATE TABLE report_specs ("                                                   \
	" job_key INTEGER PRIMARY KEY REFERENCES jobs(key) ON DELETE CASCADE,"          \
	" path TEXT NOT NULL,"                                                          \
	" formats INTEGER NOT NULL,"                                                    \
	" nodes TEXT NOT NULL,"                                                         \
	" copy_dir TEXT NOT NULL);"

static const char *const migrations[] = {
	/* 1: jobs and their data. */
	"CREATE TABLE jobs ("
	" key INTEGER PRIMARY KEY,"
	" cluster TEXT NOT NULL,"
	" job_id INTEGER NOT NULL,"
	" node TEXT NOT NULL,"
	" source TEXT NOT NULL,"
	" uid INTEGER NOT NULL,"
	" gid INTEGER NOT NULL,"
	" user TEXT NOT NULL,"
	" name TEXT NOT NULL,"
	" workdir TEXT NOT NULL,"
	" array_job_id INTEGER,"
	" array_task_id INTEGER,"
	" start_ns INTEGER NOT NULL,"
	" end_ns INTEGER,"
	" state TEXT NOT NULL,"
	" exit_code INTEGER NOT NULL,"
	" probe_mode TEXT NOT NULL,"
	" bin_width_ns INTEGER NOT NULL,"
	" dropped_events INTEGER NOT NULL,"
	" dropped_bytes INTEGER NOT NULL);"
	"CREATE TABLE steps ("
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"
	" step_id INTEGER NOT NULL,"
	" start_ns INTEGER NOT NULL,"
	" end_ns INTEGER,"
	" state TEXT NOT NULL,"
	" exit_code INTEGER NOT NULL,"
	" cgroup TEXT NOT NULL,"
	" PRIMARY KEY (job_key, step_id));"
	"CREATE TABLE mounts ("
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"
	" mnt_id INTEGER NOT NULL,"
	" path TEXT NOT NULL,"
	" fstype TEXT NOT NULL,"
	" source TEXT NOT NULL,"
	" PRIMARY KEY (job_key, mnt_id));"
	"CREATE TABLE series ("
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"
	" step_id INTEGER NOT NULL,"
	" mnt_id INTEGER NOT NULL,"
	" op INTEGER NOT NULL,"
	" bin INTEGER NOT NULL, " V1_COUNTERS ","
	" PRIMARY KEY (job_key, step_id, mnt_id, op, bin)) WITHOUT ROWID;"
	"CREATE TABLE totals ("
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"
	" step_id INTEGER NOT NULL,"
	" mnt_id INTEGER NOT NULL,"
	" op INTEGER NOT NULL, " V1_COUNTERS ","
	" PRIMARY KEY (job_key, step_id, mnt_id, op)) WITHOUT ROWID;"
	/* Only for people reading the database with sqlite3. */
	"CREATE TABLE ops (op INTEGER PRIMARY KEY, name TEXT NOT NULL);"
	"INSERT INTO ops VALUES (0, 'read'), (1, 'write'), (2, 'open'), (3, 'create'),"
	" (4, 'mkdir'), (5, 'unlink'), (6, 'rmdir'), (7, 'fsync'), (8, 'rename'),"
	" (9, 'stat');",

	/* 2: the daemon's registry of watched cgroups, indexes for the tools. */
	"CREATE TABLE watches ("
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"
	" step_id INTEGER NOT NULL,"
	" slot INTEGER NOT NULL,"
	" cgroup_id INTEGER NOT NULL,"
	" hier INTEGER NOT NULL,"
	" pid INTEGER NOT NULL,"
	" mntns INTEGER NOT NULL,"
	" start_mono_ns INTEGER NOT NULL,"
	" bin_width_ns INTEGER NOT NULL,"
	" cgroup TEXT NOT NULL,"
	" PRIMARY KEY (job_key, step_id, hier, cgroup_id));"
	"CREATE INDEX jobs_cluster_job_id ON jobs (cluster, job_id);"
	"CREATE INDEX jobs_uid_start ON jobs (uid, start_ns);"
	"CREATE INDEX jobs_start ON jobs (start_ns);",

	/*
	 * 3: ioacct's queries. By job id on any cluster; and for time windows,
	 * the longest finished job (max over this expression) bounds how long
	 * before a window its jobs may have started, running jobs apart.
	 */
	"CREATE INDEX jobs_job_id ON jobs (job_id);"
	"CREATE INDEX jobs_duration ON jobs (end_ns - start_ns);"
	"CREATE INDEX jobs_running ON jobs (start_ns) WHERE end_ns IS NULL;",

	/*
	 * 4: failed calls per class (enum ioacct_err_class), next to errors,
	 * which stays every failed call. Rows of older jobs read 0 in every
	 * class: they were not classified, and the report says so.
	 */
	"ALTER TABLE series ADD COLUMN err_notfound INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE series ADD COLUMN err_access INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE series ADD COLUMN err_space INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE series ADD COLUMN err_io INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE series ADD COLUMN err_other INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE totals ADD COLUMN err_notfound INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE totals ADD COLUMN err_access INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE totals ADD COLUMN err_space INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE totals ADD COLUMN err_io INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE totals ADD COLUMN err_other INTEGER NOT NULL DEFAULT 0;",
	MIGRATION_EXPORT_QUEUE,
	MIGRATION_REPORT_SPECS,
};

_Static_assert(ARRAY_SIZE(migrations) == IOACCT_STORE_SCHEMA_VERSION,
	       "one migration step per schema version");
_Static_assert(IOACCT_NR_SIZE_BINS == 10, "the tables have columns s0..s9");
_Static_assert(IOACCT_NR_ERR_CLASSES == 5 && IOACCT_ERR_NOTFOUND == 0 && IOACCT_ERR_OTHER == 4,
	       "the tables have columns err_notfound..err_other in class order");

/* Tables a database of a given schema must have; checked on open. */
static const struct {
	const char *name;
	int since;
} tables[] = {
	{ "jobs", 1 },   { "steps", 1 }, { "mounts", 1 },  { "series", 1 },
	{ "totals", 1 }, { "ops", 1 },   { "watches", 2 },
	{ "export_queue", 5 },
	{ "report_specs", 6 },
};

/*
 * The ops table's rows, from IOACCT_OPS: migration 1 wrote those of its
 * time, every writer adds the ones since (migrate()).
 */
#define OP_ROW(NAME, num, name, ...) "INSERT OR IGNORE INTO ops VALUES (" #num ", '" #name "');"
static const char ops_rows[] = IOACCT_OPS(OP_ROW);
#undef OP_ROW

#define JOB_COLS                                                                      \
	"key, cluster, job_id, node, source, uid, gid, user, name, workdir, "        \
	"array_job_id, array_task_id, start_ns, end_ns, state, exit_code, probe_mode, " \
	"bin_width_ns, dropped_events, dropped_bytes"
#define COUNTER_COLS IOACCT_STORE_COUNTER_COLS
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
	ST_JOB_FIND_RUNNING,
	ST_JOB_MAX_ID,
	ST_JOB_ADD_DROPPED,
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
	ST_SPEC_DONE,
	ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN_READ] = "BEGIN",
	/* A writer takes the lock up front: upgrading a read later could fail with BUSY. */
	[ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SAVEPOINT] = "SAVEPOINT ioacct_unit",
	[ST_RELEASE] = "RELEASE ioacct_unit",
	[ST_ROLLBACK_TO] = "ROLLBACK TO ioacct_unit",
	[ST_USER_VERSION] = "PRAGMA user_version",
	[ST_JOURNAL_WAL] = "PRAGMA journal_mode = WAL",
	[ST_COUNT_TABLES] = "SELECT count(*) FROM sqlite_master"
			    " WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
	[ST_TABLE_EXISTS] = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
	[ST_JOB_INSERT] = "INSERT INTO jobs (cluster, job_id, node, source, uid, gid, user, name,"
			  " workdir, array_job_id, array_task_id, start_ns, end_ns, state, exit_code,"
			  " probe_mode, bin_width_ns, dropped_events, dropped_bytes)"
			  " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, NULL, 'RUNNING',"
			  " ?13, ?14, ?15, ?16, ?17 WHERE NOT EXISTS (SELECT 1 FROM jobs"
			  " WHERE cluster = ?1 AND job_id = ?2 AND state = 'RUNNING')",
	[ST_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE key = ?1",
	[ST_JOB_FIND] = "SELECT " JOB_COLS " FROM jobs WHERE cluster = ?2 AND job_id = ?1"
			" ORDER BY start_ns DESC, key DESC LIMIT 1",
	[ST_JOB_FIND_ANY] = "SELECT " JOB_COLS " FROM jobs WHERE job_id = ?1"
			    " ORDER BY start_ns DESC, key DESC LIMIT 1",
	[ST_JOB_FIND_RUNNING] = "SELECT " JOB_COLS " FROM jobs WHERE cluster = ?2 AND job_id = ?1"
				" AND state = 'RUNNING' ORDER BY key DESC LIMIT 1",
	/* A signed MAX() is right: Slurm's job ids are 32-bit and iorun counts from them. */
	[ST_JOB_MAX_ID] = "SELECT MAX(job_id) FROM jobs WHERE cluster = ?1",
	[ST_JOB_ADD_DROPPED] = "UPDATE jobs SET dropped_events = ioacct_u64add(dropped_events, ?2),"
			       " dropped_bytes = ioacct_u64add(dropped_bytes, ?3) WHERE key = ?1",
	[ST_JOB_FINISH] = "UPDATE jobs SET end_ns = ?2, state = ?3, exit_code = ?4 WHERE key = ?1",
	[ST_STEPS_END] = "UPDATE steps SET end_ns = ?2, state = ?3"
			 " WHERE job_key = ?1 AND end_ns IS NULL",
	[ST_STEP_PUT] = "REPLACE INTO steps (job_key, step_id, start_ns, end_ns, state, exit_code,"
			" cgroup) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_MOUNT_PUT] = "REPLACE INTO mounts (job_key, mnt_id, path, fstype, source)"
			 " VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_SERIES_PUT] = "REPLACE INTO series (job_key, step_id, mnt_id, op, bin, " COUNTER_COLS ")"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
			  " ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
	[ST_TOTALS_DELETE] = "DELETE FROM totals WHERE job_key = ?1",
	[ST_TOTALS_COMPUTE] = "INSERT INTO totals (job_key, step_id, mnt_id, op, " COUNTER_COLS ")"
			      " SELECT ?1, step_id, mnt_id, op, " COUNTER_SUMS
			      " FROM series WHERE job_key = ?1 GROUP BY step_id, mnt_id, op",
	[ST_WATCH_PUT] = "REPLACE INTO watches (job_key, step_id, slot, cgroup_id, hier, pid, mntns,"
			 " start_mono_ns, bin_width_ns, cgroup)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_WATCH_DELETE] = "DELETE FROM watches WHERE job_key = ?1 AND step_id = ?2",
	[ST_WATCHES_DELETE_JOB] = "DELETE FROM watches WHERE job_key = ?1",
	[ST_WATCH_LIST] = "SELECT job_key, step_id, slot, cgroup_id, hier, pid, mntns, start_mono_ns,"
			  " bin_width_ns, cgroup FROM watches ORDER BY job_key, step_id",
	[ST_JOBS_RUNNING] = "SELECT " JOB_COLS " FROM jobs WHERE state = 'RUNNING' ORDER BY key",
	/* Its steps, mounts, series, totals and watches go with it (ON DELETE CASCADE). */
	[ST_JOB_DELETE] = "DELETE FROM jobs WHERE key = ?1",
	[ST_LOAD_STEPS] = "SELECT step_id, start_ns, end_ns, state, exit_code, cgroup FROM steps"
			  " WHERE job_key = ?1 ORDER BY step_id",
	[ST_LOAD_MOUNTS] = "SELECT mnt_id, path, fstype, source FROM mounts WHERE job_key = ?1"
			   " ORDER BY mnt_id",
	[ST_LOAD_TOTALS] = "SELECT step_id, mnt_id, op, 0, " COUNTER_COLS " FROM totals"
			   " WHERE job_key = ?1 ORDER BY step_id, mnt_id, op",
	[ST_LOAD_TOTALS_RUNNING] = "SELECT step_id, mnt_id, op, 0, " COUNTER_SUMS " FROM series"
				   " WHERE job_key = ?1 GROUP BY step_id, mnt_id, op"
				   " ORDER BY step_id, mnt_id, op",
	[ST_LOAD_SERIES] = "SELECT step_id, mnt_id, op, bin, " COUNTER_COLS " FROM series"
			   " WHERE job_key = ?1 ORDER BY step_id, mnt_id, op, bin",
	/* ?2 NULL: from the first row. The primary key's order, so it walks the index. */
	[ST_LOAD_SERIES_PAGE] = "SELECT step_id, mnt_id, op, bin, " COUNTER_COLS " FROM series"
				" WHERE job_key = ?1 AND (?2 IS NULL OR"
				" (step_id, mnt_id, op, bin) > (?2, ?3, ?4, ?5))"
				" ORDER BY step_id, mnt_id, op, bin LIMIT ?6",
	[ST_EXPORT_QUEUE] = "INSERT OR IGNORE INTO export_queue (job_key) VALUES (?1)",
	[ST_EXPORT_NEXT] = "SELECT job_key FROM export_queue WHERE job_key > ?1 ORDER BY job_key LIMIT 1",
	[ST_EXPORT_DONE] = "DELETE FROM export_queue WHERE job_key = ?1",
	[ST_EXPORT_COUNT] = "SELECT count(*) FROM export_queue",
	[ST_SPEC_PUT] = "INSERT OR REPLACE INTO report_specs (job_key, path, formats, nodes, copy_dir)"
			" VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_SPEC_GET] = "SELECT path, formats, nodes, copy_dir FROM report_specs WHERE job_key = ?1",
	[ST_SPEC_NEXT] = "SELECT job_key FROM report_specs WHERE job_key > ?1 ORDER BY job_key LIMIT 1",
	[ST_SPEC_DONE] = "DELETE FROM report_specs WHERE job_key = ?1",
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

static int store_verror(struct ioacct_store *st, int err, const char *fmt, va_list ap)
{
	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	return err;
}

__attribute__((format(printf, 3, 4)))
static int store_error(struct ioacct_store *st, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	store_verror(st, err, fmt, ap);
	va_end(ap);
	return err;
}

static int sql_errno(sqlite3 *db, int rc)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EIO;
	case SQLITE_CONSTRAINT:
		/* A row of a job that is not there. */
		return rc == SQLITE_CONSTRAINT_FOREIGNKEY ? -ENOENT : -EEXIST;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
		/* The failed system call's errno says more than SQLite's code. */
		return sqlite3_system_errno(db) > 0 ? -sqlite3_system_errno(db) : -EIO;
	default:
		/* Our SQL is fixed, so any other error means the file is not what we expect. */
		return -EIO;
	}
}

/* "what failed: SQLite's message", and the errno for SQLite's code `rc`. */
static int sql_verror(struct ioacct_store *st, int rc, const char *fmt, va_list ap)
{
	size_t n;

	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	n = strlen(st->errmsg);
	snprintf(st->errmsg + n, sizeof(st->errmsg) - n, ": %s", sqlite3_errmsg(st->db));
	return sql_errno(st->db, rc);
}

__attribute__((format(printf, 3, 4)))
static int sql_error(struct ioacct_store *st, int rc, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = sql_verror(st, rc, fmt, ap);
	va_end(ap);
	return err;
}

/* ---- uint64 in SQLite ---- */

static sqlite3_int64 u64_to_db(uint64_t v)
{
	/* Same bits, without relying on the implementation-defined cast. */
	return v > INT64_MAX ? -(sqlite3_int64)(UINT64_MAX - v) - 1 : (sqlite3_int64)v;
}

static uint64_t u64_from_db(sqlite3_int64 v)
{
	return (uint64_t)v;
}

static void u64sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint64_t *acc = sqlite3_aggregate_context(ctx, sizeof(*acc));

	(void)argc;
	if (!acc) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	*acc += u64_from_db(sqlite3_value_int64(argv[0]));
}

static void u64sum_final(sqlite3_context *ctx)
{
	uint64_t *acc = sqlite3_aggregate_context(ctx, 0);

	sqlite3_result_int64(ctx, acc ? u64_to_db(*acc) : 0);
}

static void u64add(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	sqlite3_result_int64(ctx, u64_to_db(u64_from_db(sqlite3_value_int64(argv[0])) +
					    u64_from_db(sqlite3_value_int64(argv[1]))));
}

/* ---- statements ---- */

static int stmt_get(struct ioacct_store *st, enum stmt_id id, sqlite3_stmt **out)
{
	int rc;

	if (!st->stmt[id]) {
		rc = sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					&st->stmt[id], NULL);
		if (rc != SQLITE_OK)
			return sql_error(st, rc, "unexpected database contents (damaged?)");
	}
	*out = st->stmt[id];
	return 0;
}

static void stmt_done(sqlite3_stmt *s)
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
static int stmt_run(struct ioacct_store *st, sqlite3_stmt *s, int bound, const char *fmt, ...)
{
	va_list ap;
	int rc, err = 0;

	rc = bound ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		va_start(ap, fmt);
		err = sql_verror(st, rc, fmt, ap);
		va_end(ap);
	}
	stmt_done(s);
	return err;
}

static int stmt_exec(struct ioacct_store *st, enum stmt_id id, const char *what)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, id, &s);
	if (err)
		return err;
	return stmt_run(st, s, 0, "%s", what);
}

/* For undoing after a failure: the first error's message is the one to keep. */
static void stmt_exec_quiet(struct ioacct_store *st, enum stmt_id id)
{
	if (!st->stmt[id] &&
	    sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id],
			       NULL) != SQLITE_OK)
		return;
	sqlite3_step(st->stmt[id]);
	sqlite3_reset(st->stmt[id]);
}

/* One integer from a statement returning one row. */
static int stmt_int(struct ioacct_store *st, sqlite3_stmt *s, int bound, sqlite3_int64 *v,
		    const char *what)
{
	int rc, err = 0;

	rc = bound ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	else
		err = sql_error(st, rc == SQLITE_DONE ? SQLITE_ERROR : rc, "%s", what);
	stmt_done(s);
	return err;
}

static int bind_i64(sqlite3_stmt *s, int i, int64_t v)
{
	return sqlite3_bind_int64(s, i, v);
}

static int bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	return sqlite3_bind_int64(s, i, u64_to_db(v));
}

/* 0 (not ended) is stored as NULL. */
static int bind_end(sqlite3_stmt *s, int i, int64_t end_ns)
{
	return end_ns ? sqlite3_bind_int64(s, i, end_ns) : sqlite3_bind_null(s, i);
}

/* A string from a fixed buffer, which may lack its NUL; the buffer outlives the statement's use. */
static int bind_buf(sqlite3_stmt *s, int i, const char *buf, size_t len)
{
	return sqlite3_bind_text(s, i, buf, (int)strnlen(buf, len), SQLITE_STATIC);
}

#define BIND_BUF(s, i, field) bind_buf((s), (i), (field), sizeof(field))

size_t ioacct_store_counter_values(const struct ioacct_counters *c,
				   uint64_t v[IOACCT_STORE_NR_COUNTERS])
{
	size_t n = 0;

	v[n++] = c->bytes;
	v[n++] = c->calls;
	v[n++] = c->errors;
	v[n++] = c->ns;
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		v[n++] = c->size_hist[i];
	for (int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		v[n++] = c->errclass[i];
	return n;
}

static int bind_counters(sqlite3_stmt *s, int first, const struct ioacct_counters *c)
{
	uint64_t v[IOACCT_STORE_NR_COUNTERS];
	size_t n = ioacct_store_counter_values(c, v);
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++)
		rc = bind_u64(s, first + (int)i, v[i]);
	return rc;
}

static uint64_t col_u64(sqlite3_stmt *s, int i)
{
	return u64_from_db(sqlite3_column_int64(s, i));
}

/* The database is input: a string longer than its buffer is cut, NULL reads as "". */
static void col_str(sqlite3_stmt *s, int i, char *dst, size_t len)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	(void)ioacct_strlcpy(dst, v ? v : "", len);
}

static void col_counters(sqlite3_stmt *s, int first, struct ioacct_counters *c)
{
	c->bytes = col_u64(s, first);
	c->calls = col_u64(s, first + 1);
	c->errors = col_u64(s, first + 2);
	c->ns = col_u64(s, first + 3);
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		c->size_hist[i] = col_u64(s, first + 4 + i);
	for (int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		c->errclass[i] = col_u64(s, first + 4 + IOACCT_NR_SIZE_BINS + i);
}

/* ---- transactions ---- */

/*
 * Starts a unit of work that must be atomic: a transaction of its own
 * outside an explicit one, a savepoint inside it. *outer tells which.
 */
static int unit_begin(struct ioacct_store *st, bool write, bool *outer)
{
	*outer = sqlite3_get_autocommit(st->db);
	if (*outer)
		return stmt_exec(st, write ? ST_BEGIN_WRITE : ST_BEGIN_READ, "begin a transaction");
	return stmt_exec(st, ST_SAVEPOINT, "begin a savepoint");
}

/* Commits the unit when err is 0, undoes it otherwise; returns err or the commit's error. */
static int unit_end(struct ioacct_store *st, bool outer, int err)
{
	if (!err) {
		err = stmt_exec(st, outer ? ST_COMMIT : ST_RELEASE, "commit");
		if (!err)
			return 0;
	}
	/* SQLite may have rolled back already after some errors (full disk): then this is a no-op. */
	if (outer) {
		if (!sqlite3_get_autocommit(st->db))
			stmt_exec_quiet(st, ST_ROLLBACK);
	} else {
		stmt_exec_quiet(st, ST_ROLLBACK_TO);
		stmt_exec_quiet(st, ST_RELEASE);
	}
	return err;
}

static int store_check_file(struct ioacct_store *st);

int ioacct_store_begin(struct ioacct_store *st)
{
	int err;

	/* The daemon's writes come in transactions: each one first makes sure the file is there. */
	err = store_check_file(st);
	if (err)
		return err;
	if (!sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL, "begin: a transaction is open already");
	return stmt_exec(st, st->mode == IOACCT_STORE_RDWR ? ST_BEGIN_WRITE : ST_BEGIN_READ,
			 "begin a transaction");
}

int ioacct_store_commit(struct ioacct_store *st)
{
	int err;

	if (sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL,
				   "commit: no transaction is open (none begun, or SQLite rolled it back after an error)");
	err = stmt_exec(st, ST_COMMIT, "commit");
	/* Never leave a transaction open behind a failed commit: every later begin would fail. */
	if (err && !sqlite3_get_autocommit(st->db))
		stmt_exec_quiet(st, ST_ROLLBACK);
	return err;
}

int ioacct_store_rollback(struct ioacct_store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL, "rollback: no transaction is open");
	return stmt_exec(st, ST_ROLLBACK, "rollback");
}

/* ---- open, migrate, close ---- */

static int make_parents(struct ioacct_store *st, const char *path)
{
	char dir[PATH_MAX];
	char *p;
	int err;

	if (ioacct_strlcpy(dir, path, sizeof(dir)))
		return store_error(st, -ENAMETOOLONG, "database path too long: %s", path);
	for (p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		/* Users' tools read the database: the modes must not depend on the daemon's umask. */
		if (mkdir(dir, 0755) == 0) {
			if (chmod(dir, 0755)) {
				err = -errno;
				return store_error(st, err, "cannot set the mode of %s: %s", dir,
						   strerror(-err));
			}
		} else if (errno != EEXIST) {
			err = -errno;
			return store_error(st, err, "cannot create directory %s: %s", dir,
					   strerror(-err));
		}
		*p = '/';
	}
	return 0;
}

static int create_file(struct ioacct_store *st, const char *path)
{
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		err = -errno;
		return store_error(st, err, "cannot create database %s: %s", path, strerror(-err));
	}
	if (fchmod(fd, 0644)) {
		err = -errno;
		store_error(st, err, "cannot set the mode of %s: %s", path, strerror(-err));
	}
	close(fd);
	return err;
}

/*
 * May the daemon trust directory `dir` (lstat'ed as `d`) with its entry
 * `name` (lstat'ed as `e`, or NULL when absent)? Nobody else may be able to
 * replace the entry: the directory is writable only by root (or the daemon's
 * own user), or it is sticky and the entry is theirs.
 */
static int check_entry(struct ioacct_store *st, const char *dir, const struct stat *d,
		       const char *name, const struct stat *e)
{
	uid_t me = geteuid();
	bool others_write = (d->st_mode & S_IWOTH) || ((d->st_mode & S_IWGRP) && d->st_gid != 0);

	if (d->st_uid != 0 && d->st_uid != me)
		return store_error(st, -EPERM,
				   "refusing database path: directory %s belongs to uid %u, who could replace %s: keep db in a directory of root's such as /var/lib/ioacct",
				   dir, (unsigned int)d->st_uid, name);
	if (!others_write)
		return 0;
	if ((d->st_mode & S_ISVTX) && (!e || e->st_uid == 0 || e->st_uid == me))
		return 0;
	return store_error(st, -EPERM,
			   "refusing database path: directory %s is writable by others (mode %04o)%s, so %s could be replaced: keep db in a directory only root can write, such as /var/lib/ioacct",
			   dir, (unsigned int)(d->st_mode & 07777),
			   (d->st_mode & S_ISVTX) ? " and the entry is not root's" : "", name);
}

/*
 * Walks `path` from / with lstat: every directory on the way must be one
 * that only root can change (see check_entry), and a symbolic link on the
 * way must be root's in such a directory; its target is walked in turn.
 * `depth` bounds the links followed.
 */
static int check_dirs(struct ioacct_store *st, const char *path, int depth)
{
	char cur[PATH_MAX], parent[PATH_MAX], target[PATH_MAX], next[PATH_MAX];
	struct stat d, e;
	const char *p = path, *end;
	size_t len;
	ssize_t n;
	int err;

	if (depth > 8)
		return store_error(st, -ELOOP, "refusing database path %s: too many symbolic links", path);
	if (path[0] != '/')
		return store_error(st, -EINVAL, "database path %s is not absolute", path);
	if (lstat("/", &d))
		return store_error(st, -errno, "cannot check /: %s", strerror(errno));
	strcpy(parent, "/");
	cur[0] = '\0';
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return 0;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		len = strlen(cur);
		if (len + 1 + (size_t)(end - p) >= sizeof(cur))
			return store_error(st, -ENAMETOOLONG, "database path too long: %s", path);
		snprintf(cur + len, sizeof(cur) - len, "/%.*s", (int)(end - p), p);
		if (lstat(cur, &e)) {
			/* The rest does not exist yet: make_parents creates it, root's. */
			if (errno == ENOENT)
				return 0;
			err = -errno;
			return store_error(st, err, "cannot check %s: %s", cur, strerror(-err));
		}
		err = check_entry(st, parent, &d, cur, &e);
		if (err)
			return err;
		if (S_ISLNK(e.st_mode)) {
			if (e.st_uid != 0 && e.st_uid != geteuid())
				return store_error(st, -EPERM,
						   "refusing database path: %s is a symbolic link of uid %u",
						   cur, (unsigned int)e.st_uid);
			n = readlink(cur, target, sizeof(target) - 1);
			if (n < 0)
				return store_error(st, -errno, "cannot read link %s: %s", cur,
						   strerror(errno));
			target[n] = '\0';
			/* A relative target is relative to the link's directory. */
			if (snprintf(next, sizeof(next), "%s%s%s%s", target[0] == '/' ? "" : parent,
				     target[0] == '/' || !strcmp(parent, "/") ? "" : "/", target, end) >=
			    (int)sizeof(next))
				return store_error(st, -ENAMETOOLONG, "database path too long: %s", path);
			return check_dirs(st, next, depth + 1);
		}
		if (!*end)
			return 0;
		if (!S_ISDIR(e.st_mode))
			return store_error(st, -ENOTDIR, "database path %s: %s is not a directory",
					   path, cur);
		d = e;
		strcpy(parent, cur);
		p = end;
	}
}

/*
 * The daemon writes the store as root: a db path that someone else could
 * point elsewhere (a symbolic link planted in a world-writable directory)
 * would hand them the whole store or let them overwrite a file of root's.
 * The directories up to the file are walked, and the file, its -wal and
 * its -shm are lstat'ed: no link, nothing another user could replace.
 */
static int check_path(struct ioacct_store *st, const char *path)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char dir[PATH_MAX], f[PATH_MAX];
	struct stat d, e;
	char *slash;
	int err;

	if (ioacct_strlcpy(dir, path, sizeof(dir)))
		return store_error(st, -ENAMETOOLONG, "database path too long: %s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return store_error(st, -EINVAL, "database path %s is not absolute", path);
	*slash = '\0';
	err = check_dirs(st, dir[0] ? dir : "/", 0);
	if (err)
		return err;
	/* The directory itself, links resolved: its mode decides who may replace the file. */
	if (stat(dir[0] ? dir : "/", &d)) {
		/* Not there yet: make_parents creates it, root's, and the second check sees it. */
		if (errno == ENOENT)
			return 0;
		err = -errno;
		return store_error(st, err, "cannot check the directory of %s: %s", path,
				   strerror(-err));
	}
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		if (snprintf(f, sizeof(f), "%s%s", path, suffixes[i]) >= (int)sizeof(f))
			return store_error(st, -ENAMETOOLONG, "database path too long: %s", path);
		if (lstat(f, &e)) {
			/* Absent: the directory alone says whether someone may put one there. */
			if (errno == ENOENT) {
				err = check_entry(st, dir[0] ? dir : "/", &d, f, NULL);
				if (err)
					return err;
				continue;
			}
			err = -errno;
			return store_error(st, err, "cannot check %s: %s", f, strerror(-err));
		}
		if (S_ISLNK(e.st_mode))
			return store_error(st, -ELOOP,
					   "refusing database %s: it is a symbolic link (someone may have planted it): remove it, and keep db in a directory only root can write",
					   f);
		if (!S_ISREG(e.st_mode))
			return store_error(st, -EINVAL, "refusing database %s: not a regular file", f);
		err = check_entry(st, dir[0] ? dir : "/", &d, f, &e);
		if (err)
			return err;
	}
	return 0;
}

static int read_version(struct ioacct_store *st, const char *path, int *version)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v;
	int err;

	err = stmt_get(st, ST_USER_VERSION, &s);
	if (!err)
		err = stmt_int(st, s, 0, &v, path);
	if (err)
		return err;
	*version = (int)v;
	return 0;
}

static int check_version(struct ioacct_store *st, const char *path, int target)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 ntables;
	int err, v;

	err = read_version(st, path, &v);
	if (err)
		return err;
	if (v > target)
		return store_error(st, -ENOTSUP,
				   "%s was written by a newer ioacct (schema %d, this one knows %d): upgrade ioacct",
				   path, v, target);
	if (v < 0)
		return store_error(st, -EINVAL, "%s is not an ioacct database (schema %d)", path, v);
	if (v == 0) {
		err = stmt_get(st, ST_COUNT_TABLES, &s);
		if (!err)
			err = stmt_int(st, s, 0, &ntables, path);
		if (err)
			return err;
		if (ntables > 0)
			return store_error(st, -EINVAL,
					   "%s is an SQLite database but not ioacct's: it has tables and no schema version",
					   path);
	}
	if (v < target && st->mode == IOACCT_STORE_RDONLY)
		return store_error(st, -ENOTSUP,
				   "%s has schema %d, older than this ioacct's %d: start ioacctd, which upgrades it",
				   path, v, target);
	st->version = v;
	return 0;
}

static int setup_writer(struct ioacct_store *st, const char *path)
{
	sqlite3_stmt *s = NULL;
	const char *mode;
	int rc, err, persist = 1;

	if (sqlite3_db_readonly(st->db, "main") == 1)
		return store_error(st, -EACCES, "%s: cannot write the database", path);
	err = stmt_get(st, ST_JOURNAL_WAL, &s);
	if (err)
		return err;
	/* WAL lets the tools read while the daemon writes. */
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		err = sql_error(st, rc, "%s: cannot switch to WAL", path);
	} else {
		mode = (const char *)sqlite3_column_text(s, 0);
		if (!mode || strcmp(mode, "wal") != 0)
			err = store_error(st, -ENOTSUP,
					  "%s: cannot switch to WAL (journal mode stays %s): is it on a network file system?",
					  path, mode ? mode : "unknown");
	}
	stmt_done(s);
	if (err)
		return err;
	/*
	 * FULL: every commit (a drain, a finished step or job) is on disk when it
	 * returns, so a power loss loses no finished job; NORMAL could lose the
	 * commits since the last checkpoint. It costs one fsync of the WAL per
	 * commit (2.7 ms against 0.3 ms measured, every drain_interval).
	 * A size limit also makes the kept WAL file (below) shrink to nothing at close.
	 * No memory-mapped I/O on the main file: a file truncated under it would
	 * be a SIGBUS instead of an error.
	 */
	rc = sqlite3_exec(st->db,
			  "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA mmap_size = 0;"
			  " PRAGMA journal_size_limit = 67108864",
			  NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "%s: cannot set up the connection", path);
	/*
	 * Keep -wal and -shm when the daemon closes: a reader that may not
	 * create files in the directory can then still open the database.
	 */
	rc = sqlite3_file_control(st->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "%s: cannot keep the WAL file", path);
	return 0;
}

/*
 * One transaction per step; the version is read again inside it because
 * another process may have migrated meanwhile.
 */
static int migrate(struct ioacct_store *st, const char *path, int target)
{
	char sql[64];
	int err, rc, v;

	for (;;) {
		err = stmt_exec(st, ST_BEGIN_WRITE, "begin the schema upgrade");
		if (err)
			return err;
		err = read_version(st, path, &v);
		if (err)
			goto rollback;
		if (v >= target)
			break;
		rc = sqlite3_exec(st->db, migrations[v], NULL, NULL, NULL);
		if (rc == SQLITE_OK) {
			snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
			rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
		}
		if (rc != SQLITE_OK) {
			err = sql_error(st, rc, "%s: upgrade from schema %d to %d", path, v, v + 1);
			goto rollback;
		}
		err = stmt_exec(st, ST_COMMIT, "commit the schema upgrade");
		if (err)
			goto rollback;
	}
	st->version = v;
	if (v >= 1) {
		rc = sqlite3_exec(st->db, ops_rows, NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			err = sql_error(st, rc, "%s: name the operations in table ops", path);
			goto rollback;
		}
	}
	return stmt_exec(st, ST_COMMIT, "commit the schema upgrade");
rollback:
	if (!sqlite3_get_autocommit(st->db))
		stmt_exec_quiet(st, ST_ROLLBACK);
	return err;
}

static int check_tables(struct ioacct_store *st, const char *path)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 n;
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		if (tables[i].since > st->version)
			continue;
		err = stmt_get(st, ST_TABLE_EXISTS, &s);
		if (!err)
			err = stmt_int(st, s, sqlite3_bind_text(s, 1, tables[i].name, -1, SQLITE_STATIC),
				       &n, path);
		if (err)
			return err;
		if (n == 0)
			return store_error(st, -EIO, "%s is damaged: table %s is missing (schema %d)",
					   path, tables[i].name, st->version);
	}
	return 0;
}

static int register_functions(struct ioacct_store *st)
{
	/* DIRECTONLY: a hostile file's views and triggers cannot call them. */
	const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY;
	int rc;

	rc = sqlite3_create_function_v2(st->db, "ioacct_u64sum", 1, flags, NULL, NULL, u64sum_step,
					u64sum_final, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(st->db, "ioacct_u64add", 2, flags, NULL, u64add,
						NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "register SQL functions");
	return 0;
}

static int open_db(struct ioacct_store *st, const char *path)
{
	struct stat sb;
	int rc, err, flags;

	if (st->mode == IOACCT_STORE_RDWR) {
		err = check_path(st, path);
		if (!err)
			err = make_parents(st, path);
		if (!err)
			err = create_file(st, path);
		/* Again: the file exists now, and something may have raced the creation. */
		if (!err)
			err = check_path(st, path);
		if (err)
			return err;
		flags = SQLITE_OPEN_READWRITE;
#ifdef SQLITE_OPEN_NOFOLLOW
		/* And SQLite itself (3.31 or later) refuses a link put there after the check. */
		flags |= SQLITE_OPEN_NOFOLLOW;
#endif
	} else {
		if (stat(path, &sb)) {
			err = -errno;
			if (err == -ENOENT)
				return store_error(st, err, "no ioacct database at %s", path);
			return store_error(st, err, "cannot open database %s: %s", path,
					   strerror(-err));
		}
		flags = SQLITE_OPEN_READONLY;
	}
	rc = sqlite3_open_v2(path, &st->db, flags, NULL);
	if (!st->db)
		return store_error(st, -ENOMEM, "open database %s: out of memory", path);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "open database %s", path);
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, st->mode == IOACCT_STORE_RDWR ? RDWR_BUSY_MS : RDONLY_BUSY_MS);
	/* The file is input like any other: no schema tricks, no functions called from it. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	return register_functions(st);
}

static void store_check_shm(struct ioacct_store *st);

/* The file the writer has open, by identity: see store_check_file(). */
static int remember_file(struct ioacct_store *st, const char *path)
{
	struct stat sb;
	int err;

	if (ioacct_strlcpy(st->path, path, sizeof(st->path)))
		return store_error(st, -ENAMETOOLONG, "database path too long: %s", path);
	if (stat(path, &sb)) {
		err = -errno;
		return store_error(st, err, "cannot stat %s: %s", path, strerror(-err));
	}
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	st->shm_ino = 0;
	store_check_shm(st);
	return 0;
}

static struct ioacct_store *store_open(const char *path, int mode, int target, char *errbuf,
				       size_t errlen)
{
	struct ioacct_store *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(errbuf, errlen, "open database %s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	st->mode = mode;
	st->private_mode = -1;
	if (!path || !*path || (mode != IOACCT_STORE_RDONLY && mode != IOACCT_STORE_RDWR)) {
		err = store_error(st, -EINVAL, "open database: bad path or mode");
		goto fail;
	}
	err = open_db(st, path);
	if (!err)
		err = check_version(st, path, target);
	if (!err && mode == IOACCT_STORE_RDWR) {
		err = setup_writer(st, path);
		if (!err)
			err = migrate(st, path, target);
	}
	if (!err)
		err = check_tables(st, path);
	if (!err && mode == IOACCT_STORE_RDWR)
		err = remember_file(st, path);
	if (!err)
		return st;
fail:
	/* Whatever failed, the message names the file. */
	if (path && strstr(st->errmsg, path))
		snprintf(errbuf, errlen, "%s", st->errmsg);
	else
		snprintf(errbuf, errlen, "%s: %s", path ? path : "(null)", st->errmsg);
	ioacct_store_close(st);
	errno = -err;
	return NULL;
}

struct ioacct_store *ioacct_store_open(const char *path, int mode, char *errbuf, size_t errlen)
{
	return store_open(path, mode, IOACCT_STORE_SCHEMA_VERSION, errbuf, errlen);
}

int ioacct_store_create_at_version(const char *path, int version, char *errbuf, size_t errlen)
{
	struct ioacct_store *st;

	if (version < 0 || version > IOACCT_STORE_SCHEMA_VERSION) {
		snprintf(errbuf, errlen, "no schema version %d", version);
		return -EINVAL;
	}
	st = store_open(path, IOACCT_STORE_RDWR, version, errbuf, errlen);
	if (!st)
		return -errno;
	ioacct_store_close(st);
	return 0;
}

void ioacct_store_close(struct ioacct_store *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(st->stmt); i++)
		sqlite3_finalize(st->stmt[i]);
	/* Rolls back a transaction left open. */
	sqlite3_close(st->db);
	free(st);
}

const char *ioacct_store_errmsg(const struct ioacct_store *st)
{
	return st ? st->errmsg : "no database";
}

int ioacct_store_schema_version(struct ioacct_store *st)
{
	return st->version;
}

/* ---- jobs ---- */

static void read_job(sqlite3_stmt *s, struct ioacct_job *j)
{
	memset(j, 0, sizeof(*j));
	j->key = sqlite3_column_int64(s, 0);
	col_str(s, 1, j->cluster, sizeof(j->cluster));
	j->job_id = col_u64(s, 2);
	col_str(s, 3, j->node, sizeof(j->node));
	col_str(s, 4, j->source, sizeof(j->source));
	j->uid = (uint32_t)col_u64(s, 5);
	j->gid = (uint32_t)col_u64(s, 6);
	col_str(s, 7, j->user, sizeof(j->user));
	col_str(s, 8, j->name, sizeof(j->name));
	col_str(s, 9, j->workdir, sizeof(j->workdir));
	j->has_array = sqlite3_column_type(s, 10) != SQLITE_NULL;
	j->array_job_id = (uint32_t)col_u64(s, 10);
	j->array_task_id = (uint32_t)col_u64(s, 11);
	j->start_ns = sqlite3_column_int64(s, 12);
	j->end_ns = sqlite3_column_int64(s, 13); /* NULL reads as 0: running */
	col_str(s, 14, j->state, sizeof(j->state));
	j->exit_code = (int32_t)sqlite3_column_int64(s, 15);
	col_str(s, 16, j->probe_mode, sizeof(j->probe_mode));
	j->bin_width_ns = col_u64(s, 17);
	j->dropped_events = col_u64(s, 18);
	j->dropped_bytes = col_u64(s, 19);
}

/* Runs a bound job query; -ENOENT without a message when no row matches. */
static int job_fetch(struct ioacct_store *st, sqlite3_stmt *s, int bound, struct ioacct_job *job)
{
	int rc, err = 0;

	rc = bound ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW)
		read_job(s, job);
	else if (rc == SQLITE_DONE)
		err = -ENOENT;
	else
		err = sql_error(st, rc, "read job");
	stmt_done(s);
	return err;
}

/* A new job is RUNNING: its end and state are not taken from `job`. */
int ioacct_store_job_insert(struct ioacct_store *st, struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = stmt_get(st, ST_JOB_INSERT, &s);
	if (err)
		return err;
	bound = BIND_BUF(s, 1, job->cluster) || bind_u64(s, 2, job->job_id) ||
		BIND_BUF(s, 3, job->node) || BIND_BUF(s, 4, job->source) ||
		bind_u64(s, 5, job->uid) || bind_u64(s, 6, job->gid) ||
		BIND_BUF(s, 7, job->user) || BIND_BUF(s, 8, job->name) ||
		BIND_BUF(s, 9, job->workdir) ||
		(job->has_array ? bind_u64(s, 10, job->array_job_id) || bind_u64(s, 11, job->array_task_id)
				: sqlite3_bind_null(s, 10) || sqlite3_bind_null(s, 11)) ||
		bind_i64(s, 12, job->start_ns) || sqlite3_bind_int(s, 13, job->exit_code) ||
		BIND_BUF(s, 14, job->probe_mode) || bind_u64(s, 15, job->bin_width_ns) ||
		bind_u64(s, 16, job->dropped_events) || bind_u64(s, 17, job->dropped_bytes);
	err = stmt_run(st, s, bound, "insert job %.*s/%" PRIu64, (int)sizeof(job->cluster),
		       job->cluster, job->job_id);
	if (err)
		return err;
	if (sqlite3_changes(st->db) == 0)
		return store_error(st, -EEXIST, "insert job %.*s/%" PRIu64 ": it is running already",
				   (int)sizeof(job->cluster), job->cluster, job->job_id);
	job->key = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int ioacct_store_job_find_running(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				  struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, ST_JOB_FIND_RUNNING, &s);
	if (err)
		return err;
	err = job_fetch(st, s,
			bind_u64(s, 1, job_id) || sqlite3_bind_text(s, 2, cluster, -1, SQLITE_STATIC),
			job);
	if (err == -ENOENT)
		store_error(st, err, "no running job %s/%" PRIu64, cluster ? cluster : "", job_id);
	return err;
}

int ioacct_store_job_max_id(struct ioacct_store *st, const char *cluster, uint64_t *job_id)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v;
	int err;

	err = stmt_get(st, ST_JOB_MAX_ID, &s);
	if (err)
		return err;
	/* MAX() of no rows is NULL, which reads as 0. */
	err = stmt_int(st, s, sqlite3_bind_text(s, 1, cluster, -1, SQLITE_STATIC), &v,
		       "largest job id");
	if (!err)
		*job_id = u64_from_db(v);
	return err;
}

int ioacct_store_job_add_dropped(struct ioacct_store *st, int64_t job_key, uint64_t events,
				 uint64_t bytes)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, ST_JOB_ADD_DROPPED, &s);
	if (err)
		return err;
	err = stmt_run(st, s,
		       bind_i64(s, 1, job_key) || bind_u64(s, 2, events) || bind_u64(s, 3, bytes),
		       "add dropped events to job %" PRId64, job_key);
	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "add dropped events: no job with key %" PRId64, job_key);
	return err;
}

static int run_key(struct ioacct_store *st, enum stmt_id id, int64_t job_key, const char *what)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, id, &s);
	if (err)
		return err;
	return stmt_run(st, s, bind_i64(s, 1, job_key), "%s of job %" PRId64, what, job_key);
}

static int finish_in_unit(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
			  const char *state, int32_t exit_code)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, ST_JOB_FINISH, &s);
	if (err)
		return err;
	err = stmt_run(st, s,
		       bind_i64(s, 1, job_key) || bind_i64(s, 2, end_ns) ||
			       sqlite3_bind_text(s, 3, state, -1, SQLITE_STATIC) ||
			       sqlite3_bind_int(s, 4, exit_code),
		       "finish job %" PRId64, job_key);
	if (err)
		return err;
	if (sqlite3_changes(st->db) == 0)
		return store_error(st, -ENOENT, "finish job: no job with key %" PRId64, job_key);
	err = stmt_get(st, ST_STEPS_END, &s);
	if (err)
		return err;
	err = stmt_run(st, s,
		       bind_i64(s, 1, job_key) || bind_i64(s, 2, end_ns) ||
			       sqlite3_bind_text(s, 3, state, -1, SQLITE_STATIC),
		       "end the open steps of job %" PRId64, job_key);
	if (!err)
		err = run_key(st, ST_TOTALS_DELETE, job_key, "delete the totals");
	if (!err)
		err = run_key(st, ST_TOTALS_COMPUTE, job_key, "compute the totals");
	if (!err)
		err = run_key(st, ST_WATCHES_DELETE_JOB, job_key, "delete the watches");
	/* In the same transaction: a finished job is never missing from the outbox. */
	if (!err)
		err = run_key(st, ST_EXPORT_QUEUE, job_key, "queue for the cluster store");
	return err;
}

static int spec_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_report_spec *spec)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, ST_SPEC_PUT, &s);
	if (err)
		return err;
	return stmt_run(st, s,
			bind_i64(s, 1, job_key) || BIND_BUF(s, 2, spec->path) ||
				sqlite3_bind_int64(s, 3, spec->formats) || BIND_BUF(s, 4, spec->nodes) ||
				BIND_BUF(s, 5, spec->copy_dir),
			"keep the merged report of job %" PRId64, job_key);
}

/*
 * Works inside an explicit transaction too, as a savepoint: the finish is
 * then committed (or lost) with the caller's transaction.
 */
int ioacct_store_job_finish_report(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
				   const char *state, int32_t exit_code,
				   const struct ioacct_report_spec *spec)
{
	bool outer;
	int err;

	if (end_ns <= 0 || !state || !*state || strcmp(state, "RUNNING") == 0)
		return store_error(st, -EINVAL,
				   "finish job %" PRId64 ": needs an end time and a final state",
				   job_key);
	err = unit_begin(st, true, &outer);
	if (err)
		return err;
	err = finish_in_unit(st, job_key, end_ns, state, exit_code);
	/* With the finish and its outbox row: the exporter never sees one without the other. */
	if (!err && spec)
		err = spec_put(st, job_key, spec);
	return unit_end(st, outer, err);
}

int ioacct_store_job_finish(struct ioacct_store *st, int64_t job_key, int64_t end_ns,
			    const char *state, int32_t exit_code)
{
	return ioacct_store_job_finish_report(st, job_key, end_ns, state, exit_code, NULL);
}

int ioacct_store_job_get(struct ioacct_store *st, int64_t job_key, struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, ST_JOB_GET, &s);
	if (err)
		return err;
	err = job_fetch(st, s, bind_i64(s, 1, job_key), job);
	if (err == -ENOENT)
		store_error(st, err, "no job with key %" PRId64, job_key);
	return err;
}

int ioacct_store_job_find(struct ioacct_store *st, const char *cluster, uint64_t job_id,
			  struct ioacct_job *job)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, cluster ? ST_JOB_FIND : ST_JOB_FIND_ANY, &s);
	if (err)
		return err;
	err = job_fetch(st, s,
			bind_u64(s, 1, job_id) ||
				(cluster && sqlite3_bind_text(s, 2, cluster, -1, SQLITE_STATIC)),
			job);
	if (err == -ENOENT)
		store_error(st, err, "no job %" PRIu64 "%s%s", job_id, cluster ? " on cluster " : "",
			    cluster ? cluster : "");
	return err;
}

/* ---- steps, mounts, series, watches ---- */

int ioacct_store_step_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_step *step)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = stmt_get(st, ST_STEP_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, job_key) || bind_u64(s, 2, step->step_id) ||
		bind_i64(s, 3, step->start_ns) || bind_end(s, 4, step->end_ns) ||
		BIND_BUF(s, 5, step->state) || sqlite3_bind_int(s, 6, step->exit_code) ||
		BIND_BUF(s, 7, step->cgroup);
	return stmt_run(st, s, bound, "store step %" PRIu32 " of job %" PRId64, step->step_id,
			job_key);
}

int ioacct_store_mount_put(struct ioacct_store *st, int64_t job_key, const struct ioacct_mount *m)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = stmt_get(st, ST_MOUNT_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, job_key) || bind_u64(s, 2, m->mnt_id) || BIND_BUF(s, 3, m->path) ||
		BIND_BUF(s, 4, m->fstype) || BIND_BUF(s, 5, m->source);
	return stmt_run(st, s, bound, "store mount %" PRIu32 " of job %" PRId64, m->mnt_id,
			job_key);
}

int ioacct_store_series_put(struct ioacct_store *st, int64_t job_key,
			    const struct ioacct_sample *smp)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	if (smp->op >= IOACCT_OP_COUNT)
		return store_error(st, -EINVAL, "store a bin of job %" PRId64 ": no operation %" PRIu32,
				   job_key, smp->op);
	err = stmt_get(st, ST_SERIES_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, job_key) || bind_u64(s, 2, smp->step_id) ||
		bind_u64(s, 3, smp->mnt_id) || bind_u64(s, 4, smp->op) || bind_u64(s, 5, smp->bin) ||
		bind_counters(s, 6, &smp->c);
	return stmt_run(st, s, bound, "store bin %" PRIu32 " of job %" PRId64, smp->bin, job_key);
}

int ioacct_store_watch_put(struct ioacct_store *st, const struct ioacct_watch *w)
{
	sqlite3_stmt *s = NULL;
	int err, bound;

	err = stmt_get(st, ST_WATCH_PUT, &s);
	if (err)
		return err;
	bound = bind_i64(s, 1, w->job_key) || bind_u64(s, 2, w->step_id) ||
		bind_u64(s, 3, w->slot) || bind_u64(s, 4, w->cgroup_id) || bind_u64(s, 5, w->hier) ||
		bind_i64(s, 6, w->pid) || bind_u64(s, 7, w->mntns) ||
		bind_u64(s, 8, w->start_mono_ns) || bind_u64(s, 9, w->bin_width_ns) ||
		BIND_BUF(s, 10, w->cgroup);
	return stmt_run(st, s, bound, "store the watch of step %" PRIu32 " of job %" PRId64,
			w->step_id, w->job_key);
}

int ioacct_store_watch_delete(struct ioacct_store *st, int64_t job_key, uint32_t step_id)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = stmt_get(st, ST_WATCH_DELETE, &s);
	if (err)
		return err;
	err = stmt_run(st, s, bind_i64(s, 1, job_key) || bind_u64(s, 2, step_id),
		       "delete the watch of step %" PRIu32 " of job %" PRId64, step_id, job_key);
	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "no watch of step %" PRIu32 " of job %" PRId64,
				  step_id, job_key);
	return err;
}

/* ---- loading rows ---- */

/* Fills one array element from a row; -EIO when the row cannot be valid. */
typedef int (*row_fn)(sqlite3_stmt *s, void *elem);

static int row_step(sqlite3_stmt *s, void *elem)
{
	struct ioacct_step *step = elem;

	step->step_id = (uint32_t)col_u64(s, 0);
	step->start_ns = sqlite3_column_int64(s, 1);
	step->end_ns = sqlite3_column_int64(s, 2);
	col_str(s, 3, step->state, sizeof(step->state));
	step->exit_code = (int32_t)sqlite3_column_int64(s, 4);
	col_str(s, 5, step->cgroup, sizeof(step->cgroup));
	return 0;
}

static int row_mount(sqlite3_stmt *s, void *elem)
{
	struct ioacct_mount *m = elem;

	m->mnt_id = (uint32_t)col_u64(s, 0);
	col_str(s, 1, m->path, sizeof(m->path));
	col_str(s, 2, m->fstype, sizeof(m->fstype));
	col_str(s, 3, m->source, sizeof(m->source));
	return 0;
}

static int row_sample(sqlite3_stmt *s, void *elem)
{
	struct ioacct_sample *smp = elem;
	uint64_t op = col_u64(s, 2);

	/* Readers index tables by op: one out of range must not get past here. */
	if (op >= IOACCT_OP_COUNT)
		return -EIO;
	smp->step_id = (uint32_t)col_u64(s, 0);
	smp->mnt_id = (uint32_t)col_u64(s, 1);
	smp->op = (uint32_t)op;
	smp->bin = (uint32_t)col_u64(s, 3);
	col_counters(s, 4, &smp->c);
	return 0;
}

static int row_watch(sqlite3_stmt *s, void *elem)
{
	struct ioacct_watch *w = elem;

	w->job_key = sqlite3_column_int64(s, 0);
	w->step_id = (uint32_t)col_u64(s, 1);
	w->slot = (uint32_t)col_u64(s, 2);
	w->cgroup_id = col_u64(s, 3);
	w->hier = (uint32_t)col_u64(s, 4);
	w->pid = (int32_t)sqlite3_column_int64(s, 5);
	w->mntns = (uint32_t)col_u64(s, 6);
	w->start_mono_ns = col_u64(s, 7);
	w->bin_width_ns = col_u64(s, 8);
	col_str(s, 9, w->cgroup, sizeof(w->cgroup));
	return 0;
}

/*
 * Every row of a query (of one job when job_key is given) into a malloc'd
 * array of elements of `size` bytes, zeroed first; NULL when there is none.
 */
static int load_rows(struct ioacct_store *st, enum stmt_id id, const int64_t *job_key,
		     size_t size, row_fn fn, void **out, size_t *n, const char *what)
{
	sqlite3_stmt *s = NULL;
	char *rows = NULL, *tmp;
	size_t cap = 0, count = 0;
	int rc, err;

	err = stmt_get(st, id, &s);
	if (err)
		return err;
	if (job_key && bind_i64(s, 1, *job_key)) {
		err = sql_error(st, sqlite3_errcode(st->db), "read %s", what);
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (count == cap) {
			cap = cap ? 2 * cap : 16;
			tmp = reallocarray(rows, cap, size);
			if (!tmp) {
				err = store_error(st, -ENOMEM, "read %s: out of memory", what);
				goto out;
			}
			rows = tmp;
		}
		memset(rows + count * size, 0, size);
		err = fn(s, rows + count * size);
		if (err) {
			store_error(st, err, "read %s: row %zu is out of range, the database is damaged",
				    what, count + 1);
			goto out;
		}
		count++;
	}
	if (rc != SQLITE_DONE)
		err = sql_error(st, rc, "read %s", what);
out:
	stmt_done(s);
	if (err) {
		free(rows);
		return err;
	}
	*out = rows;
	*n = count;
	return 0;
}

int ioacct_store_watch_list(struct ioacct_store *st, struct ioacct_watch **out, size_t *n)
{
	void *rows;
	int err;

	err = load_rows(st, ST_WATCH_LIST, NULL, sizeof(**out), row_watch, &rows, n, "watches");
	if (!err)
		*out = rows;
	return err;
}

static int row_job(sqlite3_stmt *s, void *elem)
{
	read_job(s, elem);
	return 0;
}

int ioacct_store_jobs_running(struct ioacct_store *st, struct ioacct_job **out, size_t *n)
{
	void *rows;
	int err;

	err = load_rows(st, ST_JOBS_RUNNING, NULL, sizeof(**out), row_job, &rows, n,
			"running jobs");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_job_delete(struct ioacct_store *st, int64_t job_key)
{
	int err = run_key(st, ST_JOB_DELETE, job_key, "delete");

	if (!err && sqlite3_changes(st->db) == 0)
		err = store_error(st, -ENOENT, "delete job: no job with key %" PRId64, job_key);
	return err;
}

static int load_children(struct ioacct_store *st, struct ioacct_jobdata *jd)
{
	const int64_t key = jd->job.key;
	bool running = strcmp(jd->job.state, "RUNNING") == 0;
	void *rows;
	int err;

	err = load_rows(st, ST_LOAD_STEPS, &key, sizeof(*jd->steps), row_step, &rows, &jd->nsteps,
			"steps");
	if (err)
		return err;
	jd->steps = rows;
	err = load_rows(st, ST_LOAD_MOUNTS, &key, sizeof(*jd->mounts), row_mount, &rows,
			&jd->nmounts, "mounts");
	if (err)
		return err;
	jd->mounts = rows;
	/* The totals table is written at finish; a running job's are summed now. */
	err = load_rows(st, running ? ST_LOAD_TOTALS_RUNNING : ST_LOAD_TOTALS, &key,
			sizeof(*jd->totals), row_sample, &rows, &jd->ntotals, "totals");
	if (err)
		return err;
	jd->totals = rows;
	err = load_rows(st, ST_LOAD_SERIES, &key, sizeof(*jd->series), row_sample, &rows,
			&jd->nseries, "series");
	if (err)
		return err;
	jd->series = rows;
	return 0;
}

int ioacct_store_job_load(struct ioacct_store *st, int64_t job_key, struct ioacct_jobdata **out)
{
	struct ioacct_jobdata *jd;
	bool outer;
	int err;

	jd = calloc(1, sizeof(*jd));
	if (!jd)
		return store_error(st, -ENOMEM, "load job %" PRId64 ": out of memory", job_key);
	/* One read transaction: the job as of one commit of the daemon. */
	err = unit_begin(st, false, &outer);
	if (err)
		goto out;
	err = ioacct_store_job_get(st, job_key, &jd->job);
	if (!err)
		err = load_children(st, jd);
	err = unit_end(st, outer, err);
out:
	if (err) {
		ioacct_jobdata_free(jd);
		return err;
	}
	*out = jd;
	return 0;
}

/* ---- queries (ioacct) ---- */

struct sql_buf {
	char *p;
	size_t len;
	size_t cap;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void sql_add(struct sql_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len)
			break;
		char *tmp = realloc(b->p, 2 * b->cap + (size_t)n);

		if (!tmp) {
			b->failed = true;
			return;
		}
		b->p = tmp;
		b->cap = 2 * b->cap + (size_t)n;
	}
	b->len += (size_t)n;
}

/* Parameter numbers: the lists first, then these, after them. */
enum { P_AFTER = 1, P_START, P_END, P_LOW, P_LIMIT, P_LISTS };

/* " AND col IN (?a,?b,...)" numbered from *next. */
static void sql_in(struct sql_buf *b, const char *col, size_t n, int *next)
{
	if (n == 0)
		return;
	sql_add(b, " AND %s IN (", col);
	for (size_t i = 0; i < n; i++)
		sql_add(b, "%s?%d", i ? "," : "", (*next)++);
	sql_add(b, ")");
}

static void sql_common(struct sql_buf *b, const struct ioacct_store_filter *f)
{
	int next = P_LISTS;

	sql_add(b, " key > ?%d", P_AFTER);
	sql_in(b, "job_id", f->njob_ids, &next);
	sql_in(b, "uid", f->nuids, &next);
	sql_in(b, "cluster", f->nclusters, &next);
}

/*
 * A window [S, E] matches the jobs started by E and not ended before S.
 * Finished ones started at most the longest duration (the jobs_duration
 * index gives it at once) before S, so their scan is bounded by time;
 * running ones come from the small partial index jobs_running.
 */
static char *select_sql(const struct ioacct_store_filter *f)
{
	struct sql_buf b = { .p = malloc(1024), .cap = 1024 };

	if (!b.p)
		return NULL;
	b.p[0] = '\0';
	sql_add(&b, "SELECT " JOB_COLS " FROM jobs WHERE");
	sql_common(&b, f);
	if (f->start_ns) {
		sql_add(&b, " AND start_ns >= ?%d AND start_ns <= ?%d AND (end_ns IS NULL OR end_ns >= ?%d)",
			P_LOW, P_END, P_START);
		sql_add(&b, " UNION ALL SELECT " JOB_COLS " FROM jobs INDEXED BY jobs_running WHERE");
		sql_common(&b, f);
		sql_add(&b, " AND end_ns IS NULL AND start_ns < ?%d AND start_ns <= ?%d ORDER BY 1", P_LOW,
			P_END);
	} else {
		if (f->end_ns)
			sql_add(&b, " AND start_ns <= ?%d", P_END);
		sql_add(&b, " ORDER BY key");
	}
	sql_add(&b, " LIMIT ?%d", P_LIMIT);
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static int select_bind(sqlite3_stmt *s, const struct ioacct_store_filter *f, int64_t low)
{
	int next = P_LISTS, rc;

	rc = bind_i64(s, P_AFTER, f->after_key) || bind_i64(s, P_START, f->start_ns) ||
	     bind_i64(s, P_END, f->end_ns ? f->end_ns : INT64_MAX) || bind_i64(s, P_LOW, low) ||
	     bind_i64(s, P_LIMIT, f->limit ? (int64_t)f->limit : -1);
	for (size_t i = 0; !rc && i < f->njob_ids; i++)
		rc = bind_u64(s, next++, f->job_ids[i]);
	for (size_t i = 0; !rc && i < f->nuids; i++)
		rc = bind_u64(s, next++, f->uids[i]);
	for (size_t i = 0; !rc && i < f->nclusters; i++)
		rc = sqlite3_bind_text(s, next++, f->clusters[i], -1, SQLITE_STATIC);
	return rc;
}

/* The earliest start of a finished job that can still overlap a window starting at start_ns. */
static int window_low(struct ioacct_store *st, int64_t start_ns, int64_t *low)
{
	sqlite3_stmt *s = NULL;
	int rc, err = 0;

	*low = start_ns;
	rc = sqlite3_prepare_v2(st->db, "SELECT max(end_ns - start_ns) FROM jobs", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "longest job");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		int64_t d = sqlite3_column_int64(s, 0);

		if (d > 0)
			*low = start_ns > INT64_MIN + d ? start_ns - d : INT64_MIN;
	} else {
		err = sql_error(st, rc, "longest job");
	}
	sqlite3_finalize(s);
	return err;
}

static int select_run(struct ioacct_store *st, const struct ioacct_store_filter *f,
		      ioacct_store_job_fn fn, void *arg)
{
	struct ioacct_job job;
	sqlite3_stmt *s = NULL;
	int64_t low = 0;
	char *sql;
	int rc, err;

	if (f->start_ns) {
		err = window_low(st, f->start_ns, &low);
		if (err)
			return err;
	}
	sql = select_sql(f);
	if (!sql)
		return store_error(st, -ENOMEM, "select jobs: out of memory");
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "select jobs: unexpected database contents (damaged?)");
	if (select_bind(s, f, low)) {
		err = sql_error(st, sqlite3_errcode(st->db), "select jobs");
		goto out;
	}
	err = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		read_job(s, &job);
		err = fn(st, &job, arg);
		if (err)
			goto out;
	}
	if (rc != SQLITE_DONE)
		err = sql_error(st, rc, "select jobs");
out:
	sqlite3_finalize(s);
	return err;
}

int ioacct_store_jobs_select(struct ioacct_store *st, const struct ioacct_store_filter *f,
			     ioacct_store_job_fn fn, void *arg)
{
	bool outer;
	int err;

	if (f->njob_ids > IOACCT_STORE_FILTER_MAX || f->nuids > IOACCT_STORE_FILTER_MAX ||
	    f->nclusters > IOACCT_STORE_FILTER_MAX)
		return store_error(st, -EINVAL, "select jobs: more than %d job ids, users or clusters",
				   IOACCT_STORE_FILTER_MAX);
	err = unit_begin(st, false, &outer);
	if (err)
		return err;
	return unit_end(st, outer, select_run(st, f, fn, arg));
}

int ioacct_store_job_load_totals(struct ioacct_store *st, int64_t job_key,
				 struct ioacct_jobdata **out)
{
	struct ioacct_jobdata *jd;
	bool outer, running;
	void *rows;
	int err;

	jd = calloc(1, sizeof(*jd));
	if (!jd)
		return store_error(st, -ENOMEM, "load job %" PRId64 ": out of memory", job_key);
	err = unit_begin(st, false, &outer);
	if (err)
		goto out;
	err = ioacct_store_job_get(st, job_key, &jd->job);
	if (!err)
		err = load_rows(st, ST_LOAD_STEPS, &job_key, sizeof(*jd->steps), row_step, &rows,
				&jd->nsteps, "steps");
	if (!err) {
		jd->steps = rows;
		err = load_rows(st, ST_LOAD_MOUNTS, &job_key, sizeof(*jd->mounts), row_mount, &rows,
				&jd->nmounts, "mounts");
	}
	if (!err) {
		jd->mounts = rows;
		/* The totals table is written at finish; a running job's are summed now. */
		running = strcmp(jd->job.state, "RUNNING") == 0;
		err = load_rows(st, running ? ST_LOAD_TOTALS_RUNNING : ST_LOAD_TOTALS, &job_key,
				sizeof(*jd->totals), row_sample, &rows, &jd->ntotals, "totals");
	}
	if (!err)
		jd->totals = rows;
	err = unit_end(st, outer, err);
out:
	if (err) {
		ioacct_jobdata_free(jd);
		return err;
	}
	*out = jd;
	return 0;
}

int ioacct_store_job_series(struct ioacct_store *st, int64_t job_key, struct ioacct_sample **out,
			    size_t *n)
{
	void *rows;
	int err;

	err = load_rows(st, ST_LOAD_SERIES, &job_key, sizeof(**out), row_sample, &rows, n, "series");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_quick_check(struct ioacct_store *st)
{
	const char *db = sqlite3_db_filename(st->db, "main");
	sqlite3_stmt *s = NULL;
	const char *first;
	char msg[256] = "";
	int rc, nrows = 0;

	/* quick_check: the b-trees and their pages, not the indexes' contents (O(N), no sort). */
	rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(8)", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_error(st, rc, "%s: cannot check the database", db);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		first = (const char *)sqlite3_column_text(s, 0);
		if (!first)
			first = "?";
		/* "*** in database main ***\nPage 8: ...": the page is what says something. */
		if (!strncmp(first, "*** in database ", 16) && strchr(first, '\n'))
			first = strchr(first, '\n') + 1;
		if (nrows++ == 0)
			snprintf(msg, sizeof(msg), "%s", first);
	}
	/* One line in the log. */
	for (char *c = msg; *c; c++)
		if (*c == '\n')
			*c = ' ';
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE && nrows == 0)
		return store_error(st, -EIO,
				   "%s is corrupt (%s): move it aside (mv %s %s.corrupt, with its -wal and -shm) and start ioacctd again, which starts a new, empty store",
				   db, sqlite3_errstr(rc), db, db);
	if (nrows == 1 && !strcmp(msg, "ok"))
		return 0;
	return store_error(st, -EIO,
			   "%s is corrupt (quick_check: %s%s): move it aside (mv %s %s.corrupt, with its -wal and -shm) and start ioacctd again, which starts a new, empty store",
			   db, msg, nrows > 1 ? ", ..." : "", db, db);
}

int ioacct_store_job_series_page(struct ioacct_store *st, int64_t job_key,
				 const struct ioacct_sample *after, size_t limit,
				 struct ioacct_sample **out, size_t *n)
{
	sqlite3_stmt *s = NULL;
	void *rows;
	int err;

	/* load_rows binds ?1 on the same prepared statement and resets it. */
	err = stmt_get(st, ST_LOAD_SERIES_PAGE, &s);
	if (err)
		return err;
	if ((after && (bind_i64(s, 2, after->step_id) || bind_i64(s, 3, after->mnt_id) ||
		       bind_i64(s, 4, after->op) || bind_i64(s, 5, after->bin))) ||
	    bind_i64(s, 6, limit > INT64_MAX ? INT64_MAX : (int64_t)limit)) {
		err = sql_error(st, sqlite3_errcode(st->db), "read series");
		stmt_done(s);
		return err;
	}
	err = load_rows(st, ST_LOAD_SERIES_PAGE, &job_key, sizeof(**out), row_sample, &rows, n,
			"series");
	if (!err)
		*out = rows;
	return err;
}

int ioacct_store_set_private(struct ioacct_store *st, bool private_data)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	const char *db = sqlite3_db_filename(st->db, "main");
	mode_t mode = private_data ? 0600 : 0644;
	char path[PATH_MAX];
	int err;

	/* A store recreated under the daemon gets the same modes. */
	st->private_mode = private_data;
	if (!db || !*db)
		return store_error(st, -EINVAL, "set the mode of the database: it has no file");
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		if (snprintf(path, sizeof(path), "%s%s", db, suffixes[i]) >= (int)sizeof(path))
			return store_error(st, -ENAMETOOLONG, "database path too long: %s", db);
		/* SQLite gives new -wal and -shm files the mode of the database. */
		if (chmod(path, mode) && errno != ENOENT) {
			err = -errno;
			return store_error(st, err, "cannot set the mode of %s to %04o: %s", path,
					   (unsigned int)mode, strerror(-err));
		}
	}
	return 0;
}

/* ---- a store removed or replaced under the daemon ---- */

#define RESTORE_BACKOFF_MIN_MS 1000
#define RESTORE_BACKOFF_MAX_MS 60000

/* Copies the open database, which may be unlinked, into a new file `tmp` (created here, ours). */
static int store_copy_to(struct ioacct_store *st, const char *tmp)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	int rc, err = 0;

	rc = sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK) {
		err = store_error(st, -EIO, "cannot open the copy %s: %s", tmp,
				  dst ? sqlite3_errmsg(dst) : "out of memory");
		goto out;
	}
	b = sqlite3_backup_init(dst, "main", st->db, "main");
	if (!b) {
		err = store_error(st, -EIO, "cannot copy the database to %s: %s", tmp,
				  sqlite3_errmsg(dst));
		goto out;
	}
	rc = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE)
		err = store_error(st, sql_errno(dst, rc), "cannot copy the database to %s: %s", tmp,
				  sqlite3_errstr(rc));
out:
	sqlite3_close(dst);
	return err;
}

/*
 * Puts the store back at its path from the connection the daemon still has
 * open (an unlinked file keeps its data while it is open): a copy made with
 * SQLite's backup API in `path.restore`, renamed into place only if nothing
 * is there (never over another file), opened like at start-up; then the new
 * connection replaces the old one. Until it has, the old one stays in use.
 */
static int store_restore(struct ioacct_store *st)
{
	static const char *const side[] = { "-wal", "-shm" };
	char tmp[PATH_MAX], a[PATH_MAX], b[PATH_MAX], err_open[PATH_MAX + 256];
	struct ioacct_store *nst;
	bool aside[2] = { false, false };
	int err;

	if (snprintf(tmp, sizeof(tmp), "%s.restore", st->path) >= (int)sizeof(tmp))
		return store_error(st, -ENAMETOOLONG, "database path too long: %s", st->path);
	err = check_path(st, st->path);
	if (err)
		return err;
	/* A copy left by an earlier try is ours, but may be partial. */
	unlink(tmp);
	snprintf(a, sizeof(a), "%s-journal", tmp);
	unlink(a);
	err = create_file(st, tmp);
	/* private_data: nobody may read the copy either. */
	if (!err && st->private_mode == 1 && chmod(tmp, 0600))
		err = store_error(st, -errno, "cannot set the mode of %s: %s", tmp, strerror(errno));
	if (!err)
		err = store_copy_to(st, tmp);
	if (err)
		goto fail;
	/*
	 * A -wal or -shm left at the old names belongs to the old connection:
	 * a new connection must not share them. Moved aside, the old one keeps
	 * them open until it is closed.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(side); i++) {
		snprintf(a, sizeof(a), "%s%s", st->path, side[i]);
		snprintf(b, sizeof(b), "%s%s.stale", st->path, side[i]);
		if (rename(a, b) == 0)
			aside[i] = true;
		else if (errno != ENOENT) {
			err = store_error(st, -errno, "cannot move %s aside: %s", a, strerror(errno));
			goto fail;
		}
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, st->path, RENAME_NOREPLACE)) {
		err = -errno;
		if (err == -EEXIST)
			store_error(st, err,
				    "another file is at %s now: move it away, and ioacctd puts its store back there",
				    st->path);
		else
			store_error(st, err, "cannot rename %s to %s: %s", tmp, st->path,
				    strerror(-err));
		goto fail;
	}
	nst = store_open(st->path, IOACCT_STORE_RDWR, st->version, err_open, sizeof(err_open));
	if (!nst) {
		err = store_error(st, -errno, "%s", err_open);
		/* Only a copy: the data is still in the old connection, for the next try. */
		unlink(st->path);
		goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(st->stmt); i++)
		sqlite3_finalize(st->stmt[i]);
	sqlite3_close(st->db);
	st->db = nst->db;
	memcpy(st->stmt, nst->stmt, sizeof(st->stmt));
	st->dev = nst->dev;
	st->ino = nst->ino;
	st->shm_dev = nst->shm_dev;
	st->shm_ino = nst->shm_ino;
	st->shm_size = nst->shm_size;
	free(nst);
	for (size_t i = 0; i < ARRAY_SIZE(side); i++) {
		snprintf(b, sizeof(b), "%s%s.stale", st->path, side[i]);
		if (aside[i])
			unlink(b);
	}
	if (st->private_mode >= 0 && ioacct_store_set_private(st, st->private_mode))
		log_warn("%s", st->errmsg);
	return 0;
fail:
	unlink(tmp);
	for (size_t i = 0; i < ARRAY_SIZE(side); i++) {
		if (!aside[i])
			continue;
		snprintf(a, sizeof(a), "%s%s", st->path, side[i]);
		snprintf(b, sizeof(b), "%s%s.stale", st->path, side[i]);
		rename(b, a);
	}
	return err;
}

/*
 * Before each of the daemon's transactions: is the file at the path still
 * the one open? SQLite would go on writing a removed file (lost at close,
 * never seen by the tools) or, with its -shm truncated or replaced, fault
 * (SIGBUS) on the mapped WAL index. When it is not, say so once, keep the
 * counters in the kernel (the caller's transaction fails with -EAGAIN) and
 * put the store back from the open connection, retrying with a backoff of
 * 1 s doubling to 60 s.
 */
/*
 * SQLite maps the -shm file (the WAL index) shared: truncated under it
 * (by hand, or by a tool that thinks itself alone), the next access to the
 * mapping is a SIGBUS. Its size is put back: the pages read as zeros, an
 * invalid index header, which SQLite rebuilds from the WAL.
 */
static void store_check_shm(struct ioacct_store *st)
{
	char shm[PATH_MAX];
	struct stat sb;

	if (snprintf(shm, sizeof(shm), "%s-shm", st->path) >= (int)sizeof(shm) || stat(shm, &sb))
		return; /* removed: the mapping keeps the old file */
	if (sb.st_dev != st->shm_dev || sb.st_ino != st->shm_ino) {
		st->shm_dev = sb.st_dev;
		st->shm_ino = sb.st_ino;
		st->shm_size = sb.st_size;
		return;
	}
	if (sb.st_size >= st->shm_size) {
		st->shm_size = sb.st_size;
		return;
	}
	if (truncate(shm, st->shm_size))
		log_err("store %s: its WAL index %s was truncated under ioacctd (%lld bytes, was %lld) and its size cannot be put back: %s; the next access will fault (SIGBUS): restart ioacctd",
			st->path, shm, (long long)sb.st_size, (long long)st->shm_size, strerror(errno));
	else
		log_err("store %s: its WAL index %s was truncated under ioacctd (%lld bytes, was %lld): size put back, SQLite rebuilds the index from the WAL",
			st->path, shm, (long long)sb.st_size, (long long)st->shm_size);
}

static int store_check_file(struct ioacct_store *st)
{
	struct stat sb;
	uint64_t now;
	int err;

	if (st->mode != IOACCT_STORE_RDWR || !st->path[0])
		return 0;
	if (!st->lost)
		store_check_shm(st);
	if (!st->lost) {
		err = stat(st->path, &sb) ? errno : 0;
		if (!err && sb.st_dev == st->dev && sb.st_ino == st->ino)
			return 0;
		st->lost = true;
		st->backoff_ms = RESTORE_BACKOFF_MIN_MS;
		st->retry_at_ms = 0;
		log_err("store %s %s under ioacctd: its data is safe in the open file and new counters stay in the kernel; putting it back",
			st->path,
			err == ENOENT ? "was removed" :
			err ? strerror(err) : "was replaced by another file");
	}
	now = ioacct_mono_ms();
	if (now < st->retry_at_ms)
		return store_error(st, -EAGAIN, "store %s is being put back; next try in %llu ms",
				   st->path, (unsigned long long)(st->retry_at_ms - now));
	err = store_restore(st);
	if (err) {
		log_warn("store %s not back yet: %s; next try in %u s (counters stay in the kernel)",
			 st->path, st->errmsg, st->backoff_ms / 1000);
		st->retry_at_ms = now + st->backoff_ms;
		st->backoff_ms = st->backoff_ms * 2 > RESTORE_BACKOFF_MAX_MS ? RESTORE_BACKOFF_MAX_MS :
									   st->backoff_ms * 2;
		return store_error(st, -EAGAIN, "store %s is being put back", st->path);
	}
	st->lost = false;
	log_warn("store %s is back (copied from the open database); draining again", st->path);
	return 0;
}

/* ---- the outbox of the cluster store ---- */

int ioacct_store_export_next(struct ioacct_store *st, int64_t after_key, int64_t *job_key)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v;
	int rc, err;

	err = stmt_get(st, ST_EXPORT_NEXT, &s);
	if (err)
		return err;
	rc = bind_i64(s, 1, after_key) ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		v = sqlite3_column_int64(s, 0);
		*job_key = v;
	} else if (rc == SQLITE_DONE) {
		err = store_error(st, -ENOENT, "no job waits for the cluster store");
	} else {
		err = sql_error(st, rc, "read the export queue");
	}
	stmt_done(s);
	return err;
}

int ioacct_store_export_done(struct ioacct_store *st, int64_t job_key)
{
	return run_key(st, ST_EXPORT_DONE, job_key, "unqueue from the cluster store");
}

int ioacct_store_export_count(struct ioacct_store *st, uint64_t *n)
{
	sqlite3_stmt *s = NULL;
	sqlite3_int64 v = 0;
	int err;

	err = stmt_get(st, ST_EXPORT_COUNT, &s);
	if (!err)
		err = stmt_int(st, s, 0, &v, "count the export queue");
	if (!err)
		*n = (uint64_t)v;
	return err;
}

int ioacct_store_report_spec_get(struct ioacct_store *st, int64_t job_key,
				 struct ioacct_report_spec *spec)
{
	sqlite3_stmt *s = NULL;
	int rc, err;

	memset(spec, 0, sizeof(*spec));
	err = stmt_get(st, ST_SPEC_GET, &s);
	if (err)
		return err;
	rc = bind_i64(s, 1, job_key) ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		col_str(s, 0, spec->path, sizeof(spec->path));
		spec->formats = (uint32_t)sqlite3_column_int64(s, 1);
		col_str(s, 2, spec->nodes, sizeof(spec->nodes));
		col_str(s, 3, spec->copy_dir, sizeof(spec->copy_dir));
	} else if (rc == SQLITE_DONE) {
		err = store_error(st, -ENOENT, "job %" PRId64 " has no merged report", job_key);
	} else {
		err = sql_error(st, rc, "read the merged report of job %" PRId64, job_key);
	}
	stmt_done(s);
	return err;
}

int ioacct_store_report_spec_next(struct ioacct_store *st, int64_t after_key, int64_t *job_key)
{
	sqlite3_stmt *s = NULL;
	int rc, err;

	err = stmt_get(st, ST_SPEC_NEXT, &s);
	if (err)
		return err;
	rc = bind_i64(s, 1, after_key) ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*job_key = sqlite3_column_int64(s, 0);
	else if (rc == SQLITE_DONE)
		err = store_error(st, -ENOENT, "no merged report waits");
	else
		err = sql_error(st, rc, "read the merged reports");
	stmt_done(s);
	return err;
}

int ioacct_store_report_spec_done(struct ioacct_store *st, int64_t job_key)
{
	return run_key(st, ST_SPEC_DONE, job_key, "drop the merged report");
}
