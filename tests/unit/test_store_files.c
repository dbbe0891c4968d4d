/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the store's per-file records (issue 26, schema 8): a round
 * trip of every field, the largest values included, and the migration of
 * a schema 6 database with a job in it, which keeps the job and gains an
 * empty files table; of a job's command line (issue 38, schema 15); of the
 * HDF5 records (issue 39, schema 21) and their times (schema 22); of the
 * RPC layer's rows (issue 40, schema 23): ioacct_rpc_add and the key order,
 * a round trip of every field stored out of order, replaced when put again,
 * page by page, and schema 22 migrated with a job in it.
 * Apart from test_store.c, which is long enough.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "model.h"
#include "store.h"
#include "store_internal.h"

struct fixture {
	char dir[64];
	char path[128];
	char err[PATH_MAX + 256];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_store_files.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/ioacct.db", f->dir);
	*state = f;
	return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(f);
	return rc;
}

static struct ioacct_store *open_rw(struct fixture *f)
{
	struct ioacct_store *st = ioacct_store_open(f->path, IOACCT_STORE_RDWR, f->err, sizeof(f->err));

	if (!st)
		print_error("open %s: %s\n", f->path, f->err);
	assert_non_null(st);
	return st;
}

static int64_t new_job(struct ioacct_store *st, uint64_t job_id)
{
	struct ioacct_job j;

	memset(&j, 0, sizeof(j));
	ioacct_strlcpy(j.cluster, "hpc", sizeof(j.cluster));
	j.job_id = job_id;
	ioacct_strlcpy(j.node, "n1", sizeof(j.node));
	ioacct_strlcpy(j.source, "iorun", sizeof(j.source));
	ioacct_strlcpy(j.state, "RUNNING", sizeof(j.state));
	ioacct_strlcpy(j.probe_mode, "tracepoint", sizeof(j.probe_mode));
	j.start_ns = 1700000000000000000LL;
	j.bin_width_ns = 5000000000ULL;
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	return j.key;
}

/* Every field its own value, the counters at their largest. */
static void make_file(struct ioacct_file *x, uint64_t ino, uint64_t bytes)
{
	memset(x, 0, sizeof(*x));
	x->step_id = 3;
	x->rank = -1;
	x->mnt_id = 27;
	x->dev = 8u << 20 | 1;
	x->ino = ino;
	snprintf(x->path, sizeof(x->path), "/scratch/f%llu 'quoted'", (unsigned long long)ino);
	x->opens = 1;
	x->reads = 2;
	x->writes = UINT64_MAX;
	x->stats = 4;
	x->fsyncs = 5;
	x->seeks = 21;
	x->bytes_read = bytes;
	x->bytes_written = 7;
	x->read_ns = 8;
	x->write_ns = 9;
	x->meta_ns = 10;
	x->max_byte_read = INT64_MAX;
	x->max_byte_written = -1;
	x->seq_reads = 13;
	x->seq_writes = 14;
	x->consec_reads = 15;
	x->consec_writes = 16;
	x->first_read_ns = 17;
	x->last_read_ns = 18;
	x->first_write_ns = -1;
	x->last_write_ns = 20;
	for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS; i++) {
		x->size_read[i] = i;
		x->size_written[i] = UINT64_MAX - i;
	}
	x->mmap_bytes = UINT64_MAX - 21;
	x->cache_miss_bytes = 22;
	x->gen = UINT32_MAX - 23;
	x->rw_switches = 24;
	for (unsigned int i = 0; i < IOACCT_FILE_ACCESSES; i++) {
		x->access[i] = UINT64_MAX - 25 - i;
		x->access_count[i] = 30 - i;
	}
}

static void test_files_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_file a, b, c, other;
	struct ioacct_store *st = open_rw(f);
	int64_t key = new_job(st, 7);

	make_file(&a, 100, 10);
	make_file(&b, 200, 1000);
	make_file(&other, 0, 5);
	other.dev = 0;
	other.gen = 0;
	memset(other.path, 0, sizeof(other.path));
	assert_int_equal(ioacct_store_file_put(st, key, &a), 0);
	assert_int_equal(ioacct_store_file_put(st, key, &b), 0);
	assert_int_equal(ioacct_store_file_put(st, key, &other), 0);
	/* Storing a record again replaces it (a finish replayed after a crash). */
	assert_int_equal(ioacct_store_file_put(st, key, &a), 0);
	assert_int_equal(ioacct_store_job_load(st, key, &jd), 0);
	assert_int_equal(jd->nfiles, 3);
	/* By bytes moved, largest first: UINT64_MAX writes do not count, bytes do. */
	assert_memory_equal(&jd->files[0], &b, sizeof(b));
	assert_memory_equal(&jd->files[1], &a, sizeof(a));
	assert_memory_equal(&jd->files[2], &other, sizeof(other));
	assert_true(ioacct_file_is_other(&jd->files[2]));
	assert_false(ioacct_file_is_other(&jd->files[0]));
	ioacct_jobdata_free(jd);
	jd = NULL;
	/* Another life of a's inode (issue 36): a row of its own, a's kept as it was. */
	make_file(&c, a.ino, 5000);
	c.gen = a.gen + 1;
	assert_int_equal(ioacct_store_file_put(st, key, &c), 0);
	assert_int_equal(ioacct_store_job_load(st, key, &jd), 0);
	assert_int_equal(jd->nfiles, 4);
	assert_memory_equal(&jd->files[0], &c, sizeof(c));
	assert_memory_equal(&jd->files[2], &a, sizeof(a));
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

/* A schema 6 database with a job: migrated, the job intact, no files yet; then files stored. */
static void test_files_migrate_from_v6(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_store *st;
	struct ioacct_file a;
	sqlite3 *db;
	int64_t key;

	assert_int_equal(ioacct_store_create_at_version(f->path, 6, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes) VALUES (5, 'hpc', 55, 'n1', 'slurm', 1000, 1000, 'bob', 'sim', '/',"
		" 100, 5000, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0);"
		"INSERT INTO mounts VALUES (5, 21, '/scratch', 'lustre', 'mds@tcp:/fs');"
		"INSERT INTO totals VALUES (5, 0, 21, 0, 4096, 1, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,"
		" 0, 0, 0, 0, 0);",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->job.job_id, 55);
	assert_int_equal(jd->nmounts, 1);
	assert_int_equal(jd->ntotals, 1);
	assert_int_equal(jd->totals[0].c.bytes, 4096);
	assert_int_equal(jd->nfiles, 0);
	ioacct_jobdata_free(jd);
	jd = NULL;

	key = new_job(st, 56);
	make_file(&a, 9, 1);
	assert_int_equal(ioacct_store_file_put(st, key, &a), 0);
	assert_int_equal(ioacct_store_job_load(st, key, &jd), 0);
	assert_int_equal(jd->nfiles, 1);
	assert_memory_equal(&jd->files[0], &a, sizeof(a));
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

/* A schema 11 database's file row: migrated, its counters kept, its views' bytes 0. */
static void test_files_migrate_from_v11(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_store *st;
	sqlite3 *db;

	assert_int_equal(ioacct_store_create_at_version(f->path, 11, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes) VALUES (5, 'hpc', 57, 'n1', 'slurm', 1000, 1000, 'bob', 'sim', '/',"
		" 100, 5000, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0);"
		"INSERT INTO files VALUES (5, 0, -1, 21, 8388609, 77, '/scratch/x', 1, 2, 3, 4, 5,"
		" 4096, 8192, 6, 7, 8, 4095, 8191, 9, 10, 11, 12, 13, 14, 15, 16,"
		" '0,0,0,0,0,0,0,0,0,0', '1,0,0,0,0,0,0,0,0,0');",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nfiles, 1);
	assert_int_equal(jd->files[0].ino, 77);
	assert_int_equal(jd->files[0].bytes_written, 8192);
	assert_int_equal(jd->files[0].size_written[0], 1);
	assert_int_equal(jd->files[0].mmap_bytes, 0);
	assert_int_equal(jd->files[0].cache_miss_bytes, 0);
	assert_int_equal(jd->files[0].seeks, 0); /* schema 14: rows of older jobs read 0 */
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

/*
 * Schema 14 to 15 (issue 38): a job's command line. A job stored before it
 * reads "" and keeps everything else; a job stored now keeps its own.
 */
static void test_cmdline_migrate_from_v14(void **state)
{
	struct fixture *f = *state;
	struct ioacct_job got, job;
	struct ioacct_store *st;
	sqlite3 *db;

	assert_int_equal(ioacct_store_create_at_version(f->path, 14, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes) VALUES (5, 'hpc', 91, 'n1', 'slurm', 1000, 1000, 'bob', 'old', '/w',"
		" 100, 500, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0);",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_get(st, 5, &got), 0);
	assert_string_equal(got.cmdline, "");
	assert_string_equal(got.name, "old");
	assert_string_equal(got.workdir, "/w");
	assert_int_equal(got.end_ns, 500);

	memset(&job, 0, sizeof(job));
	ioacct_strlcpy(job.cluster, "hpc", sizeof(job.cluster));
	job.job_id = 92;
	job.start_ns = 2000;
	ioacct_strlcpy(job.cmdline, "./climate --years 3 in.nc", sizeof(job.cmdline));
	assert_int_equal(ioacct_store_job_insert(st, &job), 0);
	assert_int_equal(ioacct_store_job_get(st, job.key, &got), 0);
	assert_string_equal(got.cmdline, "./climate --years 3 in.nc");
	ioacct_store_close(st);
}

/*
 * A schema 15 database's file row (issues 36, 38): migrated to the key with
 * the inode's life, its counters kept, gen and the new counters 0; a record
 * of another life of the same inode stored beside it, not over it.
 */
static void test_files_migrate_from_v15(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_store *st;
	struct ioacct_file a;
	sqlite3 *db;

	assert_int_equal(ioacct_store_create_at_version(f->path, 15, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes) VALUES (5, 'hpc', 58, 'n1', 'slurm', 1000, 1000, 'bob', 'sim', '/',"
		" 100, 5000, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0);"
		"INSERT INTO files VALUES (5, 0, -1, 21, 8388609, 77, '/scratch/x', 1, 2, 3, 4, 5,"
		" 4096, 8192, 6, 7, 8, 4095, 8191, 9, 10, 11, 12, 13, 14, 15, 16,"
		" '0,0,0,0,0,0,0,0,0,0', '1,0,0,0,0,0,0,0,0,0', 17, 18, 19);",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nfiles, 1);
	assert_int_equal(jd->files[0].ino, 77);
	assert_int_equal(jd->files[0].gen, 0);
	assert_string_equal(jd->files[0].path, "/scratch/x");
	assert_int_equal(jd->files[0].bytes_written, 8192);
	assert_int_equal(jd->files[0].last_write_ns, 16);
	assert_int_equal(jd->files[0].mmap_bytes, 17);
	assert_int_equal(jd->files[0].cache_miss_bytes, 18);
	assert_int_equal(jd->files[0].seeks, 19);
	assert_int_equal(jd->files[0].rw_switches, 0);
	assert_int_equal(jd->files[0].access_count[0], 0);
	ioacct_jobdata_free(jd);
	jd = NULL;
	make_file(&a, 77, 1 << 20);
	a.step_id = 0;
	a.mnt_id = 21;
	a.dev = 8388609;
	a.gen = 3;
	assert_int_equal(ioacct_store_file_put(st, 5, &a), 0);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nfiles, 2);
	assert_memory_equal(&jd->files[0], &a, sizeof(a));
	assert_int_equal(jd->files[1].gen, 0);
	assert_int_equal(jd->files[1].bytes_written, 8192);
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

/*
 * Schema 19 to 20 (issue 39): library opens the MPI-IO watch missed. A job
 * stored before reads 0 and keeps everything else; one stored now adds up.
 */
static void test_lib_missed_migrate_from_v19(void **state)
{
	struct fixture *f = *state;
	struct ioacct_job got;
	struct ioacct_store *st;
	sqlite3 *db;

	assert_int_equal(ioacct_store_create_at_version(f->path, 19, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes, cmdline) VALUES (5, 'hpc', 91, 'n1', 'slurm', 1000, 1000, 'bob',"
		" 'old', '/w', 100, 500, 'COMPLETED', 0, 'tracepoint', 5000000000, 2, 8192, './a');",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_get(st, 5, &got), 0);
	assert_int_equal(got.lib_opens_missed, 0);
	assert_int_equal(got.dropped_events, 2);
	assert_int_equal(got.dropped_bytes, 8192);
	assert_string_equal(got.cmdline, "./a");
	assert_int_equal(got.end_ns, 500);
	/* They add up, past 2^63 too, and leave the dropped counts alone. */
	assert_int_equal(ioacct_store_job_add_lib_missed(st, 5, 7), 0);
	assert_int_equal(ioacct_store_job_add_lib_missed(st, 5, 1ULL << 63), 0);
	assert_int_equal(ioacct_store_job_get(st, 5, &got), 0);
	assert_int_equal(got.lib_opens_missed, (1ULL << 63) + 7);
	assert_int_equal(got.dropped_events, 2);
	assert_int_equal(ioacct_store_job_add_lib_missed(st, 6, 1), -ENOENT);
	ioacct_store_close(st);
}

/* A database of schema `version` with job key 5 of job 91 stored before, and what sql adds. */
static void old_job(struct fixture *f, int version, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(ioacct_store_create_at_version(f->path, version, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes, cmdline) VALUES (5, 'hpc', 91, 'n1', 'slurm', 1000, 1000, 'bob',"
		" 'old', '/w', 100, 500, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0, './a');",
		NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/*
 * Schema 20 to 21 (issue 39): HDF5 records. A job stored before keeps its
 * MPI-IO rows and has none (read, not "not read"); records stored now come
 * back whole, in (step, rank, pid, kind, name) order, page by page.
 */
static void test_h5_migrate_from_v20(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_h5rec h[3], *page = NULL;
	struct ioacct_store *st;
	size_t n = 0;

	old_job(f, 20, "INSERT INTO mpiio_files VALUES (5, 0, 3, 77, '/w/f', 1, 0, 0, 2, 0, 0, 0,"
		" 0, 0, 0, 0, 0, 0, 4096, 0, 0, 0, 9, 0, '0,0,0,0,0,0,0,0,0,0', '0,0,2,0,0,0,0,0,0,0');");

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_true(jd->h5_loaded);
	assert_int_equal(jd->nh5, 0);
	assert_int_equal(jd->nmpiio, 1);
	assert_int_equal(jd->mpiio[0].bytes_written, 4096);
	ioacct_jobdata_free(jd);

	memset(h, 0, sizeof(h));
	for (int i = 0; i < 3; i++) {
		h[i].rank = 3;
		h[i].pid = 77;
	}
	h[0].kind = IOACCT_H5REC_FILE;
	snprintf(h[0].name, sizeof(h[0].name), "/w/f.h5");
	h[0].opens = 1;
	h[0].flushes = 2;
	h[1].kind = IOACCT_H5REC_DATASET;
	snprintf(h[1].name, sizeof(h[1].name), "/w/f.h5:/a");
	h[1].writes = 1;
	h[1].bytes_written = UINT64_MAX;
	h[1].datatype_size = 8;
	h[1].npoints_max = 1000;
	h[1].size_written[2] = 1;
	h[2] = h[1];
	snprintf(h[2].name, sizeof(h[2].name), "/w/f.h5:/b");
	h[2].unsized_reads = 5;
	h[2].rw_switches = 1;
	h[2].meta_ns = 123456789;
	/* Stored out of order: read back in key order. */
	assert_int_equal(ioacct_store_h5_put(st, 5, &h[2]), 0);
	assert_int_equal(ioacct_store_h5_put(st, 5, &h[0]), 0);
	assert_int_equal(ioacct_store_h5_put(st, 5, &h[1]), 0);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nh5, 3);
	for (int i = 0; i < 3; i++) {
		const struct ioacct_h5rec *g = &jd->h5[i];

		assert_int_equal(g->step_id, h[i].step_id);
		assert_int_equal(g->rank, h[i].rank);
		assert_int_equal(g->pid, h[i].pid);
		assert_int_equal(g->kind, h[i].kind);
		assert_string_equal(g->name, h[i].name);
#define H5_EQ(name) assert_true(g->name == h[i].name);
		IOACCT_H5_COUNTERS(H5_EQ)
#undef H5_EQ
		assert_memory_equal(g->size_read, h[i].size_read, sizeof(g->size_read));
		assert_memory_equal(g->size_written, h[i].size_written, sizeof(g->size_written));
	}
	ioacct_jobdata_free(jd);
	/* Pages: after the file's record, one at a time. */
	assert_int_equal(ioacct_store_job_h5_page(st, 5, &h[0], 1, &page, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(page[0].name, "/w/f.h5:/a");
	free(page);
	assert_int_equal(ioacct_store_job_h5_page(st, 5, &h[2], 0, &page, &n), 0);
	assert_int_equal(n, 0);
	free(page);
	ioacct_store_close(st);
}

/* Job 5's one HDF5 record h stored, then loaded back with every counter equal. */
static void h5_round_trip(struct ioacct_store *st, const struct ioacct_h5rec *h)
{
	struct ioacct_jobdata *jd = NULL;

	assert_int_equal(ioacct_store_h5_put(st, 5, h), 0);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nh5, 1);
#define H5_EQ(name) assert_true(jd->h5[0].name == h->name);
	IOACCT_H5_COUNTERS(H5_EQ)
#undef H5_EQ
	ioacct_jobdata_free(jd);
}

/*
 * Schema 21 to 22 (issue 39): the HDF5 records' timestamps, slowest
 * calls and dataspaces. A row stored before keeps its counters and reads
 * 0 (none, not known) for them; a row stored now has them back, the
 * largest values too.
 */
static void test_h5_times_migrate_from_v21(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_h5rec h;
	struct ioacct_store *st;

	old_job(f, 21, "INSERT INTO hdf5_records VALUES (5, 0, 3, 77, 1, '/w/f.h5:/a', 1, 0, 0, 1,"
		" 0, 8000, 0, 0, 0, 1000, 8, 0, 2500, 100, '0,0,0,0,0,0,0,0,0,0',"
		" '0,0,1,0,0,0,0,0,0,0');");

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nh5, 1);
	assert_string_equal(jd->h5[0].name, "/w/f.h5:/a");
	assert_int_equal(jd->h5[0].writes, 1);
	assert_int_equal(jd->h5[0].bytes_written, 8000);
	assert_int_equal(jd->h5[0].write_ns, 2500);
	assert_int_equal(jd->h5[0].size_written[2], 1);
#define H5_NONE(name) assert_int_equal(jd->h5[0].name, 0);
	IOACCT_H5_TIMES(H5_NONE)
	IOACCT_H5_SHAPE(H5_NONE)
#undef H5_NONE
	h = jd->h5[0];
	ioacct_jobdata_free(jd);

	h.open_start_ns = 1;
	h.open_end_ns = 2;
	h.write_start_ns = 3;
	h.write_end_ns = UINT64_MAX;
	h.close_start_ns = 5;
	h.close_end_ns = 6;
	h.max_write_ns = 2500;
	h.max_write_size = 8000;
	h.max_read_ns = UINT64_MAX - 1;
	h.dataspace_ndims = 32;
	h.dataspace_npoints = 1ULL << 62;
	h.use_mpiio = 1;
	h.use_mpiio_collective = 1;
	h5_round_trip(st, &h);
	ioacct_store_close(st);
}

/*
 * Schema 23 to 24 (issue 39): the selections' kinds and chunk sizes
 * (IOACCT_H5_SELECT). A row stored before keeps its counters, has every
 * read and write's kind not known (unknown_selects 2 + 3) and its chunking
 * not known; a row stored now has them back, the largest values too.
 */
static void test_h5_select_migrate_from_v23(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_h5rec h;
	struct ioacct_store *st;

	old_job(f, 23, "INSERT INTO hdf5_records (job_key, step_id, rank, pid, kind, name, opens,"
		" flushes, reads, writes, bytes_read, bytes_written, unsized_reads, unsized_writes,"
		" rw_switches, npoints_max, datatype_size, read_ns, write_ns, meta_ns, size_read,"
		" size_written, dataspace_ndims, dataspace_npoints) VALUES (5, 0, 3, 77, 1,"
		" '/w/f.h5:/a', 1, 0, 2, 3, 16, 24, 0, 0, 1, 1, 8, 10, 20, 30,"
		" '0,0,0,0,0,0,0,0,0,0', '0,0,0,0,0,0,0,0,0,0', 2, 100);");

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nh5, 1);
	assert_int_equal(jd->h5[0].reads, 2);
	assert_int_equal(jd->h5[0].writes, 3);
	assert_int_equal(jd->h5[0].bytes_written, 24);
	assert_int_equal(jd->h5[0].dataspace_npoints, 100);
	assert_int_equal(jd->h5[0].unknown_selects, 5);
	assert_int_equal(jd->h5[0].regular_hyperslab_selects, 0);
	assert_int_equal(jd->h5[0].irregular_hyperslab_selects, 0);
	assert_int_equal(jd->h5[0].point_selects, 0);
	assert_int_equal(jd->h5[0].chunk_known, 0);
	assert_int_equal(jd->h5[0].chunk_size_d1, 0);
	h = jd->h5[0];
	ioacct_jobdata_free(jd);

	h.regular_hyperslab_selects = UINT64_MAX;
	h.irregular_hyperslab_selects = 7;
	h.point_selects = 1ULL << 62;
	h.unknown_selects = 0;
	h.chunk_known = 1;
	h.chunk_size_d1 = 20;
	h.chunk_size_d2 = 10;
	h.chunk_size_d3 = UINT32_MAX;
	h.chunk_size_d4 = 1;
	h.chunk_size_d5 = 2;
	h5_round_trip(st, &h);
	ioacct_store_close(st);
}

/* A row of NFSv4 procedure `proc` named `name`, every counter its own value from base. */
static void make_rpc(struct ioacct_rpc *r, uint32_t step, uint64_t mnt, uint32_t proc,
		     const char *name, uint32_t bin, uint64_t base)
{
	memset(r, 0, sizeof(*r));
	r->step_id = step;
	r->mnt_id = mnt;
	r->prog = 100003;
	r->vers = 4;
	r->proc = proc;
	r->bin = bin;
	ioacct_strlcpy(r->name, name, sizeof(r->name));
	r->calls = base + 1;
	r->bytes_sent = base + 2;
	r->bytes_recv = base + 3;
	r->queue_ns = base + 4;
	r->rtt_ns = base + 5;
	r->execute_ns = base + 6;
	r->errors = base + 7;
	r->retrans = base + 8;
}

static void assert_rpc_equal(const struct ioacct_rpc *g, const struct ioacct_rpc *w)
{
	assert_int_equal(g->step_id, w->step_id);
	assert_true(g->mnt_id == w->mnt_id);
	assert_int_equal(g->prog, w->prog);
	assert_int_equal(g->vers, w->vers);
	assert_int_equal(g->proc, w->proc);
	assert_int_equal(g->flags, w->flags);
	assert_int_equal(g->bin, w->bin);
	assert_string_equal(g->name, w->name);
#define RPC_EQ(name) assert_true(g->name == w->name);
	IOACCT_RPC_COUNTERS(RPC_EQ)
#undef RPC_EQ
}

static void test_rpc_model(void **state)
{
	struct ioacct_rpc a, b;

	(void)state;
	make_rpc(&a, 0, 27, 38, "WRITE", 3, 0);
	make_rpc(&b, 0, 27, 38, "WRITE", 4, 100);
	b.rtt_ns = UINT64_MAX;
	ioacct_rpc_add(&a, &b);
	/* Sums modulo 2^64, the key and the name dst's. */
	assert_int_equal(a.calls, 102);
	assert_int_equal(a.bytes_sent, 104);
	assert_int_equal(a.bytes_recv, 106);
	assert_int_equal(a.queue_ns, 108);
	assert_true(a.rtt_ns == 4);
	assert_int_equal(a.execute_ns, 112);
	assert_int_equal(a.errors, 114);
	assert_int_equal(a.retrans, 116);
	assert_int_equal(a.bin, 3);
	assert_string_equal(a.name, "WRITE");

	/* Step, mount, program, version, procedure, flags, bin; the name and counters never. */
	make_rpc(&a, 1, 27, 38, "WRITE", 9, 0);
	make_rpc(&b, 1, 27, 38, "OTHER", 9, 5);
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), 0);
	b.bin = 10;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), -1);
	b.flags = IOACCT_RPC_UNATTRIBUTED;
	b.bin = 0;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), -1);
	b.proc = 37;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), 1);
	b.vers = 3;
	b.proc = 99;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), 1);
	b.prog = 100005;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), -1);
	/* Mount keys compare as SQLite's int64 of the same bits: 2^63 and above first. */
	b.mnt_id = 1ULL << 63;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), 1);
	assert_int_equal(ioacct_rpc_key_cmp(&b, &a), -1);
	b.step_id = 0;
	assert_int_equal(ioacct_rpc_key_cmp(&a, &b), 1);
	/* A NULL-tolerant free of a job with rows. */
	ioacct_jobdata_free(NULL);
}

static void test_rpc_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_rw(f);
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_rpc r[5], again, *page = NULL;
	size_t n = 0;
	int64_t key = new_job(st, 40);

	/* In key order: step 0 before step 1, GETATTR (9) before WRITE (38), bins, unattributed last. */
	make_rpc(&r[0], 0, 27, 9, "GETATTR", 0, 10);
	make_rpc(&r[1], 0, 27, 38, "WRITE", 0, 20);
	make_rpc(&r[2], 0, 27, 38, "WRITE", 7, UINT64_MAX - 8);
	make_rpc(&r[3], 0, 27, 38, "WRITE", 0, 30);
	r[3].flags = IOACCT_RPC_UNATTRIBUTED;
	make_rpc(&r[4], 1, 28, 38, "A_NAME_OF_THIRTY_ONE_CHARACTERS", 2, 40);
	r[4].vers = 3;
	for (int i = 4; i >= 0; i--)
		assert_int_equal(ioacct_store_rpc_put(st, key, &r[i]), 0);
	/* Put again (a drain after a crash): replaced, not added. */
	assert_int_equal(ioacct_store_rpc_put(st, key, &r[1]), 0);
	/* Another job's rows stay its own. */
	make_rpc(&again, 0, 27, 38, "WRITE", 0, 1000);
	assert_int_equal(ioacct_store_rpc_put(st, new_job(st, 41), &again), 0);

	assert_int_equal(ioacct_store_job_load(st, key, &jd), 0);
	assert_true(jd->rpc_loaded);
	assert_int_equal(jd->nrpc, 5);
	for (int i = 0; i < 5; i++)
		assert_rpc_equal(&jd->rpc[i], &r[i]);
	assert_int_equal(jd->rpc[2].calls, UINT64_MAX - 7);
	assert_true(jd->rpc[2].retrans == UINT64_MAX);
	ioacct_jobdata_free(jd);
	/* The listing's load has them summed over their bins: WRITE's bins 0 and 7 one row. */
	assert_int_equal(ioacct_store_job_load_totals(st, key, &jd), 0);
	assert_true(jd->rpc_loaded);
	assert_int_equal(jd->nrpc, 4);
	assert_rpc_equal(&jd->rpc[0], &r[0]);
	again = r[1];
	ioacct_rpc_add(&again, &r[2]);
	assert_rpc_equal(&jd->rpc[1], &again);
	assert_int_equal(jd->rpc[1].calls, 20 + 1 + UINT64_MAX - 7);
	assert_rpc_equal(&jd->rpc[2], &r[3]);
	again = r[4];
	again.bin = 0;
	assert_rpc_equal(&jd->rpc[3], &again);
	ioacct_jobdata_free(jd);

	/* Pages: two after the first, then what is left, then none. */
	assert_int_equal(ioacct_store_job_rpc_page(st, key, &r[0], 2, &page, &n), 0);
	assert_int_equal(n, 2);
	assert_rpc_equal(&page[0], &r[1]);
	assert_rpc_equal(&page[1], &r[2]);
	free(page);
	assert_int_equal(ioacct_store_job_rpc_page(st, key, &r[2], 0, &page, &n), 0);
	assert_int_equal(n, 2);
	assert_rpc_equal(&page[0], &r[3]);
	assert_rpc_equal(&page[1], &r[4]);
	free(page);
	assert_int_equal(ioacct_store_job_rpc_page(st, key, &r[4], 0, &page, &n), 0);
	assert_int_equal(n, 0);
	assert_null(page);
	assert_int_equal(ioacct_store_job_rpc_page(st, key, NULL, 1, &page, &n), 0);
	assert_int_equal(n, 1);
	assert_rpc_equal(&page[0], &r[0]);
	free(page);

	/* A row of a job that is not there is refused. */
	assert_int_equal(ioacct_store_rpc_put(st, key + 100, &r[0]), -ENOENT);
	/* Deleted with its job. */
	assert_int_equal(ioacct_store_job_delete(st, key), 0);
	assert_int_equal(ioacct_store_job_rpc_page(st, key, NULL, 0, &page, &n), 0);
	assert_int_equal(n, 0);
	ioacct_store_close(st);
}

/*
 * Schema 22 to 23 (issue 40): a job stored before keeps its series and HDF5
 * records and has no RPC rows (read, not "not read"); rows stored now come
 * back.
 */
static void test_rpc_migrate_from_v22(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_store *st;
	struct ioacct_rpc r;
	sqlite3 *db;

	assert_int_equal(ioacct_store_create_at_version(f->path, 22, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		" start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		" dropped_bytes, cmdline) VALUES (5, 'hpc', 91, 'n1', 'slurm', 1000, 1000, 'bob',"
		" 'old', '/w', 100, 500, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0, './a');"
		"INSERT INTO mounts VALUES (5, 27, '/nfs', 'nfs4', 'srv:/export');"
		"INSERT INTO series (job_key, step_id, mnt_id, op, bin, bytes, calls, errors, ns,"
		" s0, s1, s2, s3, s4, s5, s6, s7, s8, s9) VALUES"
		" (5, 0, 27, 1, 2, 8388608, 128, 0, 9000, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0);"
		"INSERT INTO totals (job_key, step_id, mnt_id, op, bytes, calls, errors, ns,"
		" s0, s1, s2, s3, s4, s5, s6, s7, s8, s9) VALUES"
		" (5, 0, 27, 1, 8388608, 128, 0, 9000, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0);"
		"INSERT INTO hdf5_records (job_key, step_id, rank, pid, kind, name, opens, flushes,"
		" reads, writes, bytes_read, bytes_written, unsized_reads, unsized_writes, rw_switches,"
		" npoints_max, datatype_size, read_ns, write_ns, meta_ns, size_read, size_written,"
		" write_end_ns) VALUES (5, 0, 3, 77, 0, '/nfs/f.h5', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,"
		" 0, 0, 9, '0,0,0,0,0,0,0,0,0,0', '0,0,0,0,0,0,0,0,0,0', 4242);",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	/* A reader refuses it until ioacctd migrated it. */
	assert_null(ioacct_store_open(f->path, IOACCT_STORE_RDONLY, f->err, sizeof(f->err)));

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_true(jd->rpc_loaded);
	assert_int_equal(jd->nrpc, 0);
	assert_int_equal(jd->nseries, 1);
	assert_int_equal(jd->series[0].c.bytes, 8388608);
	assert_int_equal(jd->totals[0].c.calls, 128);
	assert_int_equal(jd->nh5, 1);
	assert_int_equal(jd->h5[0].write_end_ns, 4242);
	assert_int_equal(jd->h5[0].meta_ns, 9);
	ioacct_jobdata_free(jd);

	make_rpc(&r, 0, 27, 38, "WRITE", 2, 131);
	assert_int_equal(ioacct_store_rpc_put(st, 5, &r), 0);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->nrpc, 1);
	assert_rpc_equal(&jd->rpc[0], &r);
	assert_int_equal(jd->rpc[0].calls, 132);
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_files_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_migrate_from_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_migrate_from_v11, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmdline_migrate_from_v14, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_migrate_from_v15, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lib_missed_migrate_from_v19, setup, teardown),
		cmocka_unit_test_setup_teardown(test_h5_migrate_from_v20, setup, teardown),
		cmocka_unit_test_setup_teardown(test_h5_times_migrate_from_v21, setup, teardown),
		cmocka_unit_test(test_rpc_model),
		cmocka_unit_test_setup_teardown(test_rpc_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rpc_migrate_from_v22, setup, teardown),
		cmocka_unit_test_setup_teardown(test_h5_select_migrate_from_v23, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
