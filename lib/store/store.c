/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SQLite store (see store.h for the contract): what every part of it
 * uses (store_db.h lists the parts): the table of its statements, errors,
 * binding and reading values, units of work (a transaction or a savepoint).
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
#include "store_db.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#define COUNTER_COLS IOACCT_STORE_COUNTER_COLS
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
			  " probe_mode, bin_width_ns, dropped_events, dropped_bytes, restart, cmdline)"
			  " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, NULL, 'RUNNING',"
			  " ?13, ?14, ?15, ?16, ?17, ?18, ?19 WHERE NOT EXISTS (SELECT 1 FROM jobs"
			  " WHERE cluster = ?1 AND job_id = ?2 AND state = 'RUNNING')",
	[ST_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE key = ?1",
	/*
	 * A job id's runs (a node has one row per run, issue 36): the newest,
	 * or (_NTH) the one ?3 earlier ones started before, oldest first.
	 */
	[ST_JOB_FIND] = "SELECT " JOB_COLS " FROM jobs WHERE cluster = ?2 AND job_id = ?1"
			" ORDER BY start_ns DESC, key DESC LIMIT 1",
	[ST_JOB_FIND_ANY] = "SELECT " JOB_COLS " FROM jobs WHERE job_id = ?1"
			    " ORDER BY start_ns DESC, key DESC LIMIT 1",
	[ST_JOB_FIND_NTH] = "SELECT " JOB_COLS " FROM jobs WHERE cluster = ?2 AND job_id = ?1"
			    " ORDER BY start_ns, key LIMIT 1 OFFSET ?3",
	[ST_JOB_FIND_NTH_ANY] = "SELECT " JOB_COLS " FROM jobs WHERE job_id = ?1"
				" ORDER BY start_ns, key LIMIT 1 OFFSET ?3",
	/* A run named exactly: this node's part of it started at its run_start. */
	[ST_JOB_FIND_EXACT] = "SELECT " JOB_COLS " FROM jobs WHERE cluster = ?2 AND job_id = ?1"
			      " AND restart = ?3 AND start_ns = ?4 ORDER BY key DESC LIMIT 1",
	[ST_JOB_FIND_RUNNING] = "SELECT " JOB_COLS " FROM jobs WHERE cluster = ?2 AND job_id = ?1"
				" AND state = 'RUNNING' ORDER BY key DESC LIMIT 1",
	/* A signed MAX() is right: Slurm's job ids are 32-bit and iorun counts from them. */
	[ST_JOB_MAX_ID] = "SELECT MAX(job_id) FROM jobs WHERE cluster = ?1",
	[ST_JOB_ADD_DROPPED] = "UPDATE jobs SET dropped_events = ioacct_u64add(dropped_events, ?2),"
			       " dropped_bytes = ioacct_u64add(dropped_bytes, ?3) WHERE key = ?1",
	[ST_JOB_ADD_LIB_MISSED] = "UPDATE jobs SET lib_opens_missed ="
				  " ioacct_u64add(lib_opens_missed, ?2) WHERE key = ?1",
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
	[ST_EXPORT_QUEUE] = "INSERT INTO export_queue (job_key) VALUES (?1)"
			    " ON CONFLICT (job_key) DO UPDATE SET gen = gen + 1",
	[ST_EXPORT_NEXT] = "SELECT job_key, gen FROM export_queue WHERE job_key > ?1 ORDER BY job_key"
			   " LIMIT 1",
	[ST_EXPORT_DONE] = "DELETE FROM export_queue WHERE job_key = ?1 AND (?2 < 0 OR gen = ?2)",
	[ST_EXPORT_COUNT] = "SELECT count(*) FROM export_queue",
	[ST_SPEC_PUT] = "INSERT OR REPLACE INTO report_specs (job_key, path, formats, nodes, copy_dir)"
			" VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_SPEC_GET] = "SELECT path, formats, nodes, copy_dir FROM report_specs WHERE job_key = ?1",
	[ST_SPEC_NEXT] = "SELECT job_key FROM report_specs WHERE job_key > ?1 ORDER BY job_key LIMIT 1",
	[ST_FILE_PUT] = "REPLACE INTO files (job_key, step_id, rank, mnt_id, dev, ino, gen, path, "
			FILE_COLS ")"
			" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
			" ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30,"
			" ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42)",
	[ST_MPIIO_PUT] = "REPLACE INTO mpiio_files (job_key, step_id, rank, pid, path, " MPIIO_COLS ")"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
			 " ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
	[ST_LOAD_FILES] = "SELECT step_id, rank, mnt_id, dev, ino, gen, path, " FILE_COLS " FROM files"
			  " WHERE job_key = ?1"
			  " ORDER BY bytes_read + bytes_written DESC, step_id, rank, mnt_id, dev, ino,"
			  " gen",
	/* ioacctd's pages of them: by key, which a page's cursor stays valid in. */
	[ST_LOAD_FILES_PAGE] = "SELECT step_id, rank, mnt_id, dev, ino, gen, path, " FILE_COLS
			       " FROM files WHERE job_key = ?1 AND (?2 IS NULL OR"
			       " (step_id, rank, mnt_id, dev, ino, gen) > (?2, ?3, ?4, ?5, ?6, ?8))"
			       " ORDER BY step_id, rank, mnt_id, dev, ino, gen LIMIT ?7",
	/* MPI-IO records by key, in pages (every one: no cursor, no limit). */
	[ST_LOAD_MPIIO_PAGE] = "SELECT step_id, rank, pid, path, " MPIIO_COLS " FROM mpiio_files"
			       " WHERE job_key = ?1 AND (?2 IS NULL OR"
			       " (step_id, rank, pid, path) > (?2, ?3, ?4, ?5))"
			       " ORDER BY step_id, rank, pid, path LIMIT ?6",
	[ST_SPEC_DONE] = "DELETE FROM report_specs WHERE job_key = ?1",
	[ST_H5_PUT] = "REPLACE INTO hdf5_records (job_key, step_id, rank, pid, kind, name, " H5_COLS ")"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		      " ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31,"
		      " ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47,"
		      " ?48)",
	/* HDF5 records by key, in pages (every one: no cursor, no limit). */
	[ST_LOAD_H5] = "SELECT step_id, rank, pid, kind, name, " H5_COLS " FROM hdf5_records"
		       " WHERE job_key = ?1 AND (?2 IS NULL OR"
		       " (step_id, rank, pid, kind, name) > (?2, ?3, ?4, ?5, ?6))"
		       " ORDER BY step_id, rank, pid, kind, name LIMIT ?7",
	[ST_RPC_PUT] = "REPLACE INTO rpc (job_key, " RPC_KEY_COLS ", " RPC_COLS ")"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
		       " ?16, ?17)",
	/* RPC rows by key, in pages (every one: no cursor, no limit). */
	[ST_LOAD_RPC] = "SELECT " RPC_KEY_COLS ", " RPC_COLS " FROM rpc WHERE job_key = ?1"
			" AND (?2 IS NULL OR (" RPC_KEY_COLS ") > (?2, ?3, ?4, ?5, ?6, ?7, ?8))"
			" ORDER BY " RPC_KEY_COLS " LIMIT ?9",
	/* A listing's: each key's rows summed over their bins (bin 0). */
	[ST_LOAD_RPC_TOTALS] = "SELECT step_id, mnt_id, prog, vers, proc, flags, 0, " RPC_SUMS
			       " FROM rpc WHERE job_key = ?1"
			       " GROUP BY step_id, mnt_id, prog, vers, proc, flags"
			       " ORDER BY step_id, mnt_id, prog, vers, proc, flags",
};

/* ---- errors ---- */

static int store_verror(struct ioacct_store *st, int err, const char *fmt, va_list ap)
{
	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	return err;
}

int store_error(struct ioacct_store *st, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	store_verror(st, err, fmt, ap);
	va_end(ap);
	return err;
}

int store_sql_errno(sqlite3 *db, int rc)
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

static int sql_verror(struct ioacct_store *st, int rc, const char *fmt, va_list ap)
{
	size_t n;

	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	n = strlen(st->errmsg);
	snprintf(st->errmsg + n, sizeof(st->errmsg) - n, ": %s", sqlite3_errmsg(st->db));
	return store_sql_errno(st->db, rc);
}

int store_sql_error(struct ioacct_store *st, int rc, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = sql_verror(st, rc, fmt, ap);
	va_end(ap);
	return err;
}

/* ---- statements ---- */

int store_stmt_get(struct ioacct_store *st, enum stmt_id id, sqlite3_stmt **out)
{
	int rc;

	if (!st->stmt[id]) {
		rc = sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					&st->stmt[id], NULL);
		if (rc != SQLITE_OK)
			return store_sql_error(st, rc, "unexpected database contents (damaged?)");
	}
	*out = st->stmt[id];
	return 0;
}

int store_stmt_run(struct ioacct_store *st, sqlite3_stmt *s, int bound, const char *fmt, ...)
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

int store_stmt_exec(struct ioacct_store *st, enum stmt_id id, const char *what)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, id, &s);
	if (err)
		return err;
	return store_stmt_run(st, s, 0, "%s", what);
}

void store_stmt_exec_quiet(struct ioacct_store *st, enum stmt_id id)
{
	if (!st->stmt[id] &&
	    sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id],
			       NULL) != SQLITE_OK)
		return;
	sqlite3_step(st->stmt[id]);
	sqlite3_reset(st->stmt[id]);
}

int store_stmt_int(struct ioacct_store *st, sqlite3_stmt *s, int bound, sqlite3_int64 *v,
		   const char *what)
{
	int rc, err = 0;

	rc = bound ? sqlite3_errcode(st->db) : sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	else
		err = store_sql_error(st, rc == SQLITE_DONE ? SQLITE_ERROR : rc, "%s", what);
	stmt_done(s);
	return err;
}

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

int store_bind_counters(sqlite3_stmt *s, int first, const struct ioacct_counters *c)
{
	uint64_t v[IOACCT_STORE_NR_COUNTERS];
	size_t n = ioacct_store_counter_values(c, v);
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++)
		rc = bind_u64(s, first + (int)i, v[i]);
	return rc;
}

void store_col_counters(sqlite3_stmt *s, int first, struct ioacct_counters *c)
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

int store_run_key(struct ioacct_store *st, enum stmt_id id, int64_t job_key, const char *what)
{
	sqlite3_stmt *s = NULL;
	int err;

	err = store_stmt_get(st, id, &s);
	if (err)
		return err;
	return store_stmt_run(st, s, bind_i64(s, 1, job_key), "%s of job %" PRId64, what, job_key);
}

/* ---- transactions ---- */

int store_unit_begin(struct ioacct_store *st, bool write, bool *outer)
{
	*outer = sqlite3_get_autocommit(st->db);
	if (*outer)
		return store_stmt_exec(st, write ? ST_BEGIN_WRITE : ST_BEGIN_READ,
				       "begin a transaction");
	return store_stmt_exec(st, ST_SAVEPOINT, "begin a savepoint");
}

int store_unit_end(struct ioacct_store *st, bool outer, int err)
{
	if (!err) {
		err = store_stmt_exec(st, outer ? ST_COMMIT : ST_RELEASE, "commit");
		if (!err)
			return 0;
	}
	/* SQLite may have rolled back already after some errors (full disk): then this is a no-op. */
	if (outer) {
		if (!sqlite3_get_autocommit(st->db))
			store_stmt_exec_quiet(st, ST_ROLLBACK);
	} else {
		store_stmt_exec_quiet(st, ST_ROLLBACK_TO);
		store_stmt_exec_quiet(st, ST_RELEASE);
	}
	return err;
}
