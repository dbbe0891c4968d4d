/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SQLite store's file (see store.h, store_db.h): opening it (the path
 * checked, the schema migrated forward one step per transaction, the
 * connection set up), closing it, checking it, and putting it back from the
 * open connection when it is removed or replaced under the daemon.
 */
#include "store.h"
#include "store_db.h"
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

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

/*
 * 7: a requeued job's runs apart (issue 28). A run's restart count is part
 * of its name, (cluster, job_id, restart); the index serves lookups by job
 * id as the one it replaces did. Rows stored before were runs too: a job's
 * earlier rows on this node, by start, were its earlier runs (Slurm counts
 * restarts the same way), so they are numbered so.
 */
#define MIGRATION_RESTART                                                               \
	"ALTER TABLE jobs ADD COLUMN restart INTEGER NOT NULL DEFAULT 0;"               \
	"UPDATE jobs SET restart = (SELECT count(*) FROM jobs e"                        \
	" WHERE e.cluster = jobs.cluster AND e.job_id = jobs.job_id"                    \
	" AND e.node = jobs.node AND (e.start_ns < jobs.start_ns"                       \
	" OR (e.start_ns = jobs.start_ns AND e.key < jobs.key)))"                       \
	" WHERE source = 'slurm';"                                                      \
	"DROP INDEX jobs_cluster_job_id;"                                               \
	"CREATE INDEX jobs_cluster_job_id_run ON jobs (cluster, job_id, restart);"

/*
 * 8: the per-file records (issue 26), one row per job, step, rank, mount
 * and file (dev, ino; both 0: the mount's "other files"), with Darshan's
 * POSIX counters of the file. Its own step.
 */
#define MIGRATION_FILES                                                                 \
	"CREATE TABLE files ("                                                          \
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"             \
	" step_id INTEGER NOT NULL,"                                                    \
	" rank INTEGER NOT NULL,"                                                       \
	" mnt_id INTEGER NOT NULL,"                                                     \
	" dev INTEGER NOT NULL,"                                                        \
	" ino INTEGER NOT NULL,"                                                        \
	" path TEXT NOT NULL,"                                                          \
	" opens INTEGER NOT NULL, reads INTEGER NOT NULL, writes INTEGER NOT NULL,"     \
	" stats INTEGER NOT NULL, fsyncs INTEGER NOT NULL,"                             \
	" bytes_read INTEGER NOT NULL, bytes_written INTEGER NOT NULL,"                 \
	" read_ns INTEGER NOT NULL, write_ns INTEGER NOT NULL, meta_ns INTEGER NOT NULL," \
	" max_byte_read INTEGER NOT NULL, max_byte_written INTEGER NOT NULL,"           \
	" seq_reads INTEGER NOT NULL, seq_writes INTEGER NOT NULL,"                     \
	" consec_reads INTEGER NOT NULL, consec_writes INTEGER NOT NULL,"               \
	" first_read_ns INTEGER NOT NULL, last_read_ns INTEGER NOT NULL,"               \
	" first_write_ns INTEGER NOT NULL, last_write_ns INTEGER NOT NULL,"             \
	" size_read TEXT NOT NULL, size_written TEXT NOT NULL,"                         \
	" PRIMARY KEY (job_key, step_id, rank, mnt_id, dev, ino));"

/*
 * 10: the MPI-IO counters (issue 27), one row per job, step, process and
 * file (the path given to MPI_File_open), with the process's MPI rank.
 */
#define MPIIO_COUNTER_COL(name) " " #name " INTEGER NOT NULL,"
#define MIGRATION_MPIIO                                                                 \
	"CREATE TABLE mpiio_files ("                                                    \
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"             \
	" step_id INTEGER NOT NULL,"                                                    \
	" rank INTEGER NOT NULL,"                                                       \
	" pid INTEGER NOT NULL,"                                                        \
	" path TEXT NOT NULL,"                                                          \
	IOACCT_MPIIO_COUNTERS(MPIIO_COUNTER_COL)                                        \
	" size_read TEXT NOT NULL, size_written TEXT NOT NULL,"                         \
	" PRIMARY KEY (job_key, step_id, pid, path));"

/*
 * 11: retention (issue 28). A job whose series were re-binned coarser
 * (downsample_after) keeps the width they were recorded at; bin_width_ns is
 * the width they have now, which is what every report reads. NULL: never
 * downsampled. The index finds the jobs ended before a cutoff.
 */
#define MIGRATION_RETENTION                                                             \
	"ALTER TABLE jobs ADD COLUMN orig_bin_width_ns INTEGER;"                        \
	"CREATE INDEX jobs_end ON jobs (end_ns) WHERE end_ns IS NOT NULL;"

/*
 * 15 (issue 38): the job's command line, Darshan's exe; "" for jobs stored
 * before it was kept.
 */
#define MIGRATION_CMDLINE "ALTER TABLE jobs ADD COLUMN cmdline TEXT NOT NULL DEFAULT '';"

/*
 * 16: a file's record is one life of its inode (issue 36): the inode's
 * generation (or birth) joins the key, so that a file given a freed inode
 * number keeps a row of its own; and Darshan's read/write switches and
 * most common access sizes (issue 38). The key of a table cannot change in
 * place: the rows move to a table of the new key, their gen 0 (one life
 * each, as they were counted), the new counters 0.
 */
#define MIGRATION_FILE_LIVES                                                            \
	"CREATE TABLE files_v16 ("                                                      \
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"             \
	" step_id INTEGER NOT NULL,"                                                    \
	" rank INTEGER NOT NULL,"                                                       \
	" mnt_id INTEGER NOT NULL,"                                                     \
	" dev INTEGER NOT NULL,"                                                        \
	" ino INTEGER NOT NULL,"                                                        \
	" gen INTEGER NOT NULL DEFAULT 0,"                                              \
	" path TEXT NOT NULL,"                                                          \
	" opens INTEGER NOT NULL, reads INTEGER NOT NULL, writes INTEGER NOT NULL,"     \
	" stats INTEGER NOT NULL, fsyncs INTEGER NOT NULL,"                             \
	" bytes_read INTEGER NOT NULL, bytes_written INTEGER NOT NULL,"                 \
	" read_ns INTEGER NOT NULL, write_ns INTEGER NOT NULL, meta_ns INTEGER NOT NULL," \
	" max_byte_read INTEGER NOT NULL, max_byte_written INTEGER NOT NULL,"           \
	" seq_reads INTEGER NOT NULL, seq_writes INTEGER NOT NULL,"                     \
	" consec_reads INTEGER NOT NULL, consec_writes INTEGER NOT NULL,"               \
	" first_read_ns INTEGER NOT NULL, last_read_ns INTEGER NOT NULL,"               \
	" first_write_ns INTEGER NOT NULL, last_write_ns INTEGER NOT NULL,"             \
	" size_read TEXT NOT NULL, size_written TEXT NOT NULL,"                         \
	" mmap_bytes INTEGER NOT NULL DEFAULT 0, cache_miss_bytes INTEGER NOT NULL DEFAULT 0," \
	" seeks INTEGER NOT NULL DEFAULT 0,"                                            \
	" rw_switches INTEGER NOT NULL DEFAULT 0,"                                      \
	" access1 INTEGER NOT NULL DEFAULT 0, access2 INTEGER NOT NULL DEFAULT 0,"      \
	" access3 INTEGER NOT NULL DEFAULT 0, access4 INTEGER NOT NULL DEFAULT 0,"      \
	" access1_count INTEGER NOT NULL DEFAULT 0, access2_count INTEGER NOT NULL DEFAULT 0," \
	" access3_count INTEGER NOT NULL DEFAULT 0, access4_count INTEGER NOT NULL DEFAULT 0," \
	" PRIMARY KEY (job_key, step_id, rank, mnt_id, dev, ino, gen));"                \
	"INSERT INTO files_v16 (job_key, step_id, rank, mnt_id, dev, ino, path, opens, reads," \
	" writes, stats, fsyncs, bytes_read, bytes_written, read_ns, write_ns, meta_ns,"  \
	" max_byte_read, max_byte_written, seq_reads, seq_writes, consec_reads,"        \
	" consec_writes, first_read_ns, last_read_ns, first_write_ns, last_write_ns,"   \
	" size_read, size_written, mmap_bytes, cache_miss_bytes, seeks)"                \
	" SELECT job_key, step_id, rank, mnt_id, dev, ino, path, opens, reads, writes,"  \
	" stats, fsyncs, bytes_read, bytes_written, read_ns, write_ns, meta_ns,"         \
	" max_byte_read, max_byte_written, seq_reads, seq_writes, consec_reads,"        \
	" consec_writes, first_read_ns, last_read_ns, first_write_ns, last_write_ns,"   \
	" size_read, size_written, mmap_bytes, cache_miss_bytes, seeks FROM files;"     \
	"DROP TABLE files;"                                                             \
	"ALTER TABLE files_v16 RENAME TO files;"

/*
 * 20 (issue 39): library opens the MPI-IO library watch missed, per job; 0
 * for jobs stored before they were counted.
 */
#define MIGRATION_LIB_MISSED "ALTER TABLE jobs ADD COLUMN lib_opens_missed INTEGER NOT NULL DEFAULT 0;"

/*
 * 21 (issue 39): the HDF5 counters, one row per job, step, process and
 * record: kind 0 a file (Darshan's H5F), 1 a dataset (H5D, named
 * "FILE:/DATASET"), with the process's MPI rank. Jobs stored before have
 * none (their reports say so: not read, rather than none).
 */
#define MIGRATION_HDF5                                                                  \
	"CREATE TABLE hdf5_records ("                                                   \
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"             \
	" step_id INTEGER NOT NULL,"                                                    \
	" rank INTEGER NOT NULL,"                                                       \
	" pid INTEGER NOT NULL,"                                                        \
	" kind INTEGER NOT NULL,"                                                       \
	" name TEXT NOT NULL,"                                                          \
	IOACCT_H5_COUNTS(MPIIO_COUNTER_COL)                                             \
	" size_read TEXT NOT NULL, size_written TEXT NOT NULL,"                         \
	" PRIMARY KEY (job_key, step_id, pid, kind, name));"

/*
 * 22 (issue 39): the HDF5 records' timestamps and slowest calls
 * (IOACCT_H5_TIMES), datasets' dataspaces and the MPI-IO flags
 * (IOACCT_H5_SHAPE); 0, none or
 * not known, in the rows stored before (their reports and Darshan logs say
 * 0 for the times, as Darshan for a call it did not see; -1 for the
 * dataspace).
 */
#define H5_TIME_COL(name) "ALTER TABLE hdf5_records ADD COLUMN " #name " INTEGER NOT NULL DEFAULT 0;"
#define MIGRATION_H5_TIMES IOACCT_H5_TIMES(H5_TIME_COL) IOACCT_H5_SHAPE(H5_TIME_COL)

/*
 * 24 (issue 39): a dataset's reads and writes by their file selection's
 * kind and its chunk dims (IOACCT_H5_SELECT); the rows stored before had
 * every call's kind not known (unknown_selects: their reads and writes)
 * and their chunking not known (chunk_known 0).
 */
#define MIGRATION_H5_SELECT                                                             \
	IOACCT_H5_SELECT(H5_TIME_COL)                                                   \
	"UPDATE hdf5_records SET unknown_selects = reads + writes;"

/*
 * 23 (issue 40): the RPC layer per job, one row per job, step, mount, RPC
 * program, version, procedure (its index in mountstats), flags (1: sent by
 * no job during this one) and time bin, with the procedure's name and
 * mountstats' counters. Jobs stored before have none.
 */
#define MIGRATION_RPC                                                                   \
	"CREATE TABLE rpc ("                                                            \
	" job_key INTEGER NOT NULL REFERENCES jobs(key) ON DELETE CASCADE,"             \
	" step_id INTEGER NOT NULL, mnt_id INTEGER NOT NULL, prog INTEGER NOT NULL,"    \
	" vers INTEGER NOT NULL, proc INTEGER NOT NULL, flags INTEGER NOT NULL,"        \
	" bin INTEGER NOT NULL,"                                                        \
	IOACCT_RPC_COUNTERS(MPIIO_COUNTER_COL)                                          \
	" name TEXT NOT NULL,"                                                          \
	" PRIMARY KEY (job_key, step_id, mnt_id, prog, vers, proc, flags, bin)) WITHOUT ROWID;"

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
	MIGRATION_RESTART,
	MIGRATION_FILES,
	/*
	 * 9: a queued job's generation (issue 28): a running job is queued again
	 * at each step's end, and the exporter unqueues only the generation it
	 * exported, so a step or the finish queued meanwhile is exported too.
	 */
	"ALTER TABLE export_queue ADD COLUMN gen INTEGER NOT NULL DEFAULT 0;",
	MIGRATION_MPIIO,
	MIGRATION_RETENTION,
	/* 12: an old placeholder, empty (files.seeks came in 14). */
	"",
	/*
	 * 13: a file's page-cache and mmap views' bytes (issue 26). Rows of
	 * older jobs read 0; whether a job's were measured is in its probe_mode.
	 */
	"ALTER TABLE files ADD COLUMN mmap_bytes INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE files ADD COLUMN cache_miss_bytes INTEGER NOT NULL DEFAULT 0;",
	/* 14: a file's seeks (lseek calls, issue 26). Rows of older jobs read 0. */
	"ALTER TABLE files ADD COLUMN seeks INTEGER NOT NULL DEFAULT 0;",
	MIGRATION_CMDLINE,
	MIGRATION_FILE_LIVES,
	/* 17..19: other branches' steps, merged beside this one (placeholders until then). */
	"",
	"",
	"",
	MIGRATION_LIB_MISSED,
	MIGRATION_HDF5,
	MIGRATION_H5_TIMES,
	MIGRATION_RPC,
	MIGRATION_H5_SELECT,
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
	{ "files", 8 },
	{ "mpiio_files", 10 },
	{ "hdf5_records", 21 },
	{ "rpc", 23 },
};

/*
 * The ops table's rows, from IOACCT_OPS: migration 1 wrote those of its
 * time, every writer adds the ones since (migrate()).
 */
#define OP_ROW(NAME, num, name, ...) "INSERT OR IGNORE INTO ops VALUES (" #num ", '" #name "');"
static const char ops_rows[] = IOACCT_OPS(OP_ROW);
#undef OP_ROW

/* ---- uint64 in SQLite: the SQL functions ---- */

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

/* The account ioacctd runs as once started (ioacct_store_set_owner); 0: root alone. */
static uid_t owner_uid;

void ioacct_store_set_owner(uid_t uid)
{
	owner_uid = uid;
}

/* Root, this process's own user and ioacctd's account may hold the store's path. */
static bool trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid() || uid == owner_uid;
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
	bool others_write = (d->st_mode & S_IWOTH) || ((d->st_mode & S_IWGRP) && d->st_gid != 0);

	if (!trusted(d->st_uid))
		return store_error(st, -EPERM,
				   "refusing database path: directory %s belongs to uid %u, who could replace %s: keep db in a directory of root's such as /var/lib/ioacct",
				   dir, (unsigned int)d->st_uid, name);
	if (!others_write)
		return 0;
	if ((d->st_mode & S_ISVTX) && (!e || trusted(e->st_uid)))
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
			if (!trusted(e.st_uid))
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

	err = store_stmt_get(st, ST_USER_VERSION, &s);
	if (!err)
		err = store_stmt_int(st, s, 0, &v, path);
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
		err = store_stmt_get(st, ST_COUNT_TABLES, &s);
		if (!err)
			err = store_stmt_int(st, s, 0, &ntables, path);
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
	err = store_stmt_get(st, ST_JOURNAL_WAL, &s);
	if (err)
		return err;
	/* WAL lets the tools read while the daemon writes. */
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		err = store_sql_error(st, rc, "%s: cannot switch to WAL", path);
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
		return store_sql_error(st, rc, "%s: cannot set up the connection", path);
	/*
	 * Keep -wal and -shm when the daemon closes: a reader that may not
	 * create files in the directory can then still open the database.
	 */
	rc = sqlite3_file_control(st->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
	if (rc != SQLITE_OK)
		return store_sql_error(st, rc, "%s: cannot keep the WAL file", path);
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
		err = store_stmt_exec(st, ST_BEGIN_WRITE, "begin the schema upgrade");
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
			err = store_sql_error(st, rc, "%s: upgrade from schema %d to %d", path, v,
					      v + 1);
			goto rollback;
		}
		err = store_stmt_exec(st, ST_COMMIT, "commit the schema upgrade");
		if (err)
			goto rollback;
	}
	st->version = v;
	if (v >= 1) {
		rc = sqlite3_exec(st->db, ops_rows, NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			err = store_sql_error(st, rc, "%s: name the operations in table ops", path);
			goto rollback;
		}
	}
	return store_stmt_exec(st, ST_COMMIT, "commit the schema upgrade");
rollback:
	if (!sqlite3_get_autocommit(st->db))
		store_stmt_exec_quiet(st, ST_ROLLBACK);
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
		err = store_stmt_get(st, ST_TABLE_EXISTS, &s);
		if (!err)
			err = store_stmt_int(st, s,
					     sqlite3_bind_text(s, 1, tables[i].name, -1,
							       SQLITE_STATIC),
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
		return store_sql_error(st, rc, "register SQL functions");
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
		return store_sql_error(st, rc, "open database %s", path);
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
		return store_sql_error(st, rc, "%s: cannot check the database", db);
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

int ioacct_store_chown(struct ioacct_store *st, uid_t uid, gid_t gid)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	const char *db = sqlite3_db_filename(st->db, "main");
	char path[PATH_MAX];
	int err;

	if (!db || !*db)
		return store_error(st, -EINVAL, "give the database away: it has no file");
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		if (snprintf(path, sizeof(path), "%s%s", db, suffixes[i]) >= (int)sizeof(path))
			return store_error(st, -ENAMETOOLONG, "database path too long: %s", db);
		/* Checked at open: no link, nobody else's; never followed all the same. */
		if (fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW) && errno != ENOENT) {
			err = -errno;
			return store_error(st, err, "cannot give %s to uid %u: %s", path,
					   (unsigned int)uid, strerror(-err));
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
		err = store_error(st, store_sql_errno(dst, rc),
				  "cannot copy the database to %s: %s", tmp, sqlite3_errstr(rc));
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

/* ---- the daemon's explicit transactions ---- */

int ioacct_store_begin(struct ioacct_store *st)
{
	int err;

	/* The daemon's writes come in transactions: each one first makes sure the file is there. */
	err = store_check_file(st);
	if (err)
		return err;
	if (!sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL, "begin: a transaction is open already");
	return store_stmt_exec(st, st->mode == IOACCT_STORE_RDWR ? ST_BEGIN_WRITE : ST_BEGIN_READ,
			       "begin a transaction");
}

int ioacct_store_commit(struct ioacct_store *st)
{
	int err;

	if (sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL,
				   "commit: no transaction is open (none begun, or SQLite rolled it back after an error)");
	err = store_stmt_exec(st, ST_COMMIT, "commit");
	/* Never leave a transaction open behind a failed commit: every later begin would fail. */
	if (err && !sqlite3_get_autocommit(st->db))
		store_stmt_exec_quiet(st, ST_ROLLBACK);
	return err;
}

int ioacct_store_rollback(struct ioacct_store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return store_error(st, -EINVAL, "rollback: no transaction is open");
	return store_stmt_exec(st, ST_ROLLBACK, "rollback");
}
