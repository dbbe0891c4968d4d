/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the SQLite store, each on its own database in a fresh
 * temporary directory. Raw sqlite3 connections stand in for an older
 * ioacct, a newer one, another program and a damaged file.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "model.h"
#include "store.h"
#include "store_internal.h"

#define BIG (1ULL << 63) /* values at and above it are stored as negative int64 */

struct fixture {
	char dir[64];
	char path[128]; /* in a subdirectory the store must create */
	char err[PATH_MAX + 256];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/lib/ioacct.db", f->dir);
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

static struct ioacct_store *open_store(struct fixture *f, const char *path, int mode)
{
	struct ioacct_store *st = ioacct_store_open(path, mode, f->err, sizeof(f->err));

	if (!st)
		print_error("open %s: %s\n", path, f->err);
	assert_non_null(st);
	return st;
}

#define STR(x) #x
#define XSTR(x) STR(x)

/* Opening must fail with `err` and a message containing `needle`. */
static void open_fails(struct fixture *f, const char *path, int mode, int err, const char *needle)
{
	struct ioacct_store *st;

	f->err[0] = '\0';
	errno = 0;
	st = ioacct_store_open(path, mode, f->err, sizeof(f->err));
	assert_null(st);
	assert_int_equal(errno, err);
	if (!strstr(f->err, needle))
		print_error("message \"%s\" lacks \"%s\"\n", f->err, needle);
	assert_non_null(strstr(f->err, needle));
	assert_null(strchr(f->err, '\n'));
}

/* A raw connection, as another program would use. */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		print_error("%s: %s\n", sql, sqlite3_errmsg(db));
	assert_int_equal(rc, SQLITE_OK);
	sqlite3_close(db);
}

static sqlite3_int64 raw_int(const char *path, const char *sql)
{
	sqlite3_stmt *s;
	sqlite3 *db;
	sqlite3_int64 v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static off_t file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static void make_job(struct ioacct_job *j, const char *cluster, uint64_t job_id, int64_t start_ns)
{
	memset(j, 0, sizeof(*j));
	ioacct_strlcpy(j->cluster, cluster, sizeof(j->cluster));
	j->job_id = job_id;
	ioacct_strlcpy(j->node, "node001", sizeof(j->node));
	ioacct_strlcpy(j->source, "slurm", sizeof(j->source));
	j->uid = 4000000000U;
	j->gid = 1001;
	ioacct_strlcpy(j->user, "alice", sizeof(j->user));
	ioacct_strlcpy(j->name, "climate model", sizeof(j->name));
	ioacct_strlcpy(j->workdir, "/scratch/alice/run1", sizeof(j->workdir));
	ioacct_strlcpy(j->cmdline, "./climate --years 3 in.nc", sizeof(j->cmdline));
	j->start_ns = start_ns;
	ioacct_strlcpy(j->state, "RUNNING", sizeof(j->state));
	ioacct_strlcpy(j->probe_mode, "fentry", sizeof(j->probe_mode));
	j->bin_width_ns = 5000000000ULL;
}

static struct ioacct_job insert_job(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				    int64_t start_ns)
{
	struct ioacct_job j;

	make_job(&j, cluster, job_id, start_ns);
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	assert_true(j.key > 0);
	return j;
}

/* Every counter and size bin non-zero, some above 2^63. */
static void fill_counters(struct ioacct_counters *c, uint64_t seed)
{
	c->bytes = BIG + seed * 4096;
	c->calls = seed + 1;
	c->errors = seed % 3 + 1;
	c->ns = UINT64_MAX - seed;
	for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		c->size_hist[i] = (i % 2 ? BIG : 0) + seed * 10 + i + 1;
}

static struct ioacct_sample sample(uint32_t step, uint64_t mnt, uint32_t op, uint32_t bin,
				   uint64_t seed)
{
	struct ioacct_sample s = { .step_id = step, .mnt_id = mnt, .op = op, .bin = bin };

	fill_counters(&s.c, seed);
	return s;
}

static void assert_job_equal(const struct ioacct_job *a, const struct ioacct_job *b)
{
	assert_int_equal(a->key, b->key);
	assert_int_equal(a->job_id, b->job_id);
	assert_string_equal(a->cluster, b->cluster);
	assert_string_equal(a->node, b->node);
	assert_string_equal(a->source, b->source);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_string_equal(a->user, b->user);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->workdir, b->workdir);
	assert_int_equal(a->has_array, b->has_array);
	assert_int_equal(a->array_job_id, b->array_job_id);
	assert_int_equal(a->array_task_id, b->array_task_id);
	assert_int_equal(a->start_ns, b->start_ns);
	assert_int_equal(a->end_ns, b->end_ns);
	assert_string_equal(a->state, b->state);
	assert_int_equal(a->exit_code, b->exit_code);
	assert_string_equal(a->probe_mode, b->probe_mode);
	assert_int_equal(a->bin_width_ns, b->bin_width_ns);
	assert_int_equal(a->dropped_events, b->dropped_events);
	assert_int_equal(a->dropped_bytes, b->dropped_bytes);
	assert_string_equal(a->cmdline, b->cmdline);
}

static void assert_sample_equal(const struct ioacct_sample *a, const struct ioacct_sample *b)
{
	assert_int_equal(a->step_id, b->step_id);
	assert_int_equal(a->mnt_id, b->mnt_id);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->bin, b->bin);
	assert_memory_equal(&a->c, &b->c, sizeof(a->c));
}

/* Totals: one per (step, mount, op) of the series, each their exact sum. */
static void assert_totals_are_sums(const struct ioacct_jobdata *jd, size_t expected)
{
	struct ioacct_counters sum;

	assert_int_equal(jd->ntotals, expected);
	for (size_t i = 0; i < jd->ntotals; i++) {
		const struct ioacct_sample *t = &jd->totals[i];

		assert_int_equal(t->bin, 0);
		ioacct_samples_sum(jd->series, jd->nseries, t->step_id, t->mnt_id, t->op, &sum);
		assert_false(ioacct_counters_is_zero(&sum));
		assert_memory_equal(&t->c, &sum, sizeof(sum));
		if (i > 0) {
			const struct ioacct_sample *p = &jd->totals[i - 1];

			assert_true(p->step_id < t->step_id ||
				    (p->step_id == t->step_id &&
				     (p->mnt_id < t->mnt_id || (p->mnt_id == t->mnt_id && p->op < t->op))));
		}
	}
}

/* 2 steps x 3 mounts (a 32-bit id, two unique ones: issue 36) x 2 ops x 3 bins, in load order. */
static const uint32_t steps_ids[] = { 0, IOACCT_STEP_BATCH };
static const uint64_t mnt_ids[] = { 21, 0x80000016ULL, (1ULL << 33) + 40 };
static const uint32_t ops[] = { IOACCT_OP_READ, IOACCT_OP_STAT };
#define NBINS 3
#define NSERIES (2 * 3 * 2 * NBINS)

static void put_series(struct ioacct_store *st, int64_t key, struct ioacct_sample *out)
{
	size_t n = 0;

	for (size_t s = 0; s < 2; s++)
		for (size_t m = 0; m < 3; m++)
			for (size_t o = 0; o < 2; o++)
				for (uint32_t b = 0; b < NBINS; b++) {
					/* Bins 0, 7, 14: not contiguous. */
					out[n] = sample(steps_ids[s], mnt_ids[m], ops[o], b * 7, n + 1);
					assert_int_equal(ioacct_store_series_put(st, key, &out[n]), 0);
					n++;
				}
}

static void test_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct ioacct_sample series[NSERIES];
	struct ioacct_step steps[2] = {
		{ .step_id = 0, .start_ns = 1700000001000000000LL, .end_ns = 1700000002000000000LL,
		  .state = "COMPLETED", .exit_code = 0, .cgroup = "/slurm/uid_1/job_9/step_0" },
		{ .step_id = IOACCT_STEP_BATCH, .start_ns = 1700000000500000000LL,
		  .state = "RUNNING", .exit_code = 0, .cgroup = "/slurm/uid_1/job_9/step_batch" },
	};
	struct ioacct_mount mounts[3] = {
		{ .mnt_id = 21, .path = "/", .fstype = "ext4", .source = "/dev/sda1" },
		{ .mnt_id = 0x80000016ULL, .path = "/scratch", .fstype = "lustre", .source = "10.0.0.1@tcp:/scratch" },
		{ .mnt_id = (1ULL << 33) + 40, .path = "/home", .fstype = "nfs4", .source = "fs:/home" },
	};
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_store *st;
	struct ioacct_job job, got;
	char dir[128];
	struct stat sb;
	mode_t old;

	/* The modes are for users' tools, whatever the daemon's umask. */
	old = umask(077);
	st = open_store(f, f->path, IOACCT_STORE_RDWR);
	umask(old);
	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644);
	snprintf(dir, sizeof(dir), "%s/lib", f->dir);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0755);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(IOACCT_STORE_SCHEMA_VERSION, 24);

	make_job(&job, "hpc", BIG + 9, 1700000000000000000LL);
	job.has_array = true;
	job.array_job_id = 4000000001U;
	job.array_task_id = 17;
	job.dropped_events = BIG + 1;
	job.dropped_bytes = UINT64_MAX;
	job.bin_width_ns = BIG + 5;
	assert_int_equal(ioacct_store_job_insert(st, &job), 0);
	assert_true(job.key > 0);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(ioacct_store_step_put(st, job.key, &steps[i]), 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(ioacct_store_mount_put(st, job.key, &mounts[i]), 0);
	put_series(st, job.key, series);

	assert_int_equal(ioacct_store_job_get(st, job.key, &got), 0);
	assert_job_equal(&got, &job);
	assert_int_equal(ioacct_store_job_find_running(st, "hpc", BIG + 9, &got), 0);
	assert_int_equal(got.key, job.key);

	assert_int_equal(ioacct_store_job_finish(st, job.key, 1700000009000000000LL, "FAILED", -2), 0);
	assert_int_equal(ioacct_store_job_find_running(st, "hpc", BIG + 9, &got), -ENOENT);
	assert_int_equal(ioacct_store_job_load(st, job.key, &jd), 0);

	job.end_ns = 1700000009000000000LL;
	ioacct_strlcpy(job.state, "FAILED", sizeof(job.state));
	job.exit_code = -2;
	assert_job_equal(&jd->job, &job);

	/* Ordered by step id; the open step got the job's end and state. */
	assert_int_equal(jd->nsteps, 2);
	assert_int_equal(jd->steps[0].step_id, 0);
	assert_int_equal(jd->steps[0].start_ns, steps[0].start_ns);
	assert_int_equal(jd->steps[0].end_ns, steps[0].end_ns);
	assert_string_equal(jd->steps[0].state, "COMPLETED");
	assert_string_equal(jd->steps[0].cgroup, steps[0].cgroup);
	assert_int_equal(jd->steps[1].step_id, IOACCT_STEP_BATCH);
	assert_int_equal(jd->steps[1].start_ns, steps[1].start_ns);
	assert_int_equal(jd->steps[1].end_ns, 1700000009000000000LL);
	assert_string_equal(jd->steps[1].state, "FAILED");
	assert_string_equal(jd->steps[1].cgroup, steps[1].cgroup);

	assert_int_equal(jd->nmounts, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(jd->mounts[i].mnt_id, mounts[i].mnt_id);
		assert_string_equal(jd->mounts[i].path, mounts[i].path);
		assert_string_equal(jd->mounts[i].fstype, mounts[i].fstype);
		assert_string_equal(jd->mounts[i].source, mounts[i].source);
	}

	assert_int_equal(jd->nseries, NSERIES);
	for (size_t i = 0; i < NSERIES; i++)
		assert_sample_equal(&jd->series[i], &series[i]);
	assert_totals_are_sums(jd, 2 * 3 * 2);
	/* And not from a self-consistent mistake: one total by hand. */
	assert_int_equal(jd->totals[0].c.calls, 2 + 3 + 4);
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

static void test_series_replace(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job job = insert_job(st, "hpc", 1, 100);
	struct ioacct_sample a = sample(0, 21, IOACCT_OP_WRITE, 4, 1);
	struct ioacct_sample b = sample(0, 21, IOACCT_OP_WRITE, 4, 2);
	struct ioacct_jobdata *jd;

	assert_int_equal(ioacct_store_series_put(st, job.key, &a), 0);
	assert_int_equal(ioacct_store_series_put(st, job.key, &b), 0);
	assert_int_equal(ioacct_store_job_load(st, job.key, &jd), 0);
	assert_int_equal(jd->nseries, 1);
	assert_sample_equal(&jd->series[0], &b);
	ioacct_jobdata_free(jd);

	/* The finish must see the replaced value too. */
	assert_int_equal(ioacct_store_job_finish(st, job.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_job_load(st, job.key, &jd), 0);
	assert_int_equal(jd->ntotals, 1);
	assert_memory_equal(&jd->totals[0].c, &b.c, sizeof(b.c));
	ioacct_jobdata_free(jd);

	/* Out of range ops never get in. */
	a.op = IOACCT_OP_COUNT;
	assert_int_equal(ioacct_store_series_put(st, job.key, &a), -EINVAL);
	ioacct_store_close(st);
}

static void test_running_load_sums_series(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job job = insert_job(st, "hpc", 2, 100);
	struct ioacct_sample series[NSERIES];
	struct ioacct_jobdata *running, *finished;

	put_series(st, job.key, series);
	assert_int_equal(ioacct_store_job_load(st, job.key, &running), 0);
	assert_string_equal(running->job.state, "RUNNING");
	assert_int_equal(running->job.end_ns, 0);
	assert_int_equal(running->nseries, NSERIES);
	assert_totals_are_sums(running, 2 * 3 * 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM totals"), 0);

	assert_int_equal(ioacct_store_job_finish(st, job.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM totals"), 2 * 3 * 2);
	assert_int_equal(ioacct_store_job_load(st, job.key, &finished), 0);
	assert_int_equal(finished->ntotals, running->ntotals);
	for (size_t i = 0; i < running->ntotals; i++)
		assert_sample_equal(&finished->totals[i], &running->totals[i]);
	ioacct_jobdata_free(running);
	ioacct_jobdata_free(finished);
	ioacct_store_close(st);
}

/* Finishing queues a job for the cluster store, once; only the exporter unqueues it. */
static void test_export_queue(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(st, "hpc", 11, 100);
	struct ioacct_job b = insert_job(st, "hpc", 12, 100);
	int64_t key = -1, gen = -1, gen2 = -1;
	uint64_t n = 99;

	assert_int_equal(ioacct_store_export_count(st, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ioacct_store_export_next(st, 0, &key, &gen), -ENOENT);
	assert_int_equal(ioacct_store_job_finish(st, b.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_job_finish(st, a.key, 200, "FAILED", 1), 0);
	/* A second finish (a retried request) queues nothing more. */
	assert_int_equal(ioacct_store_job_finish(st, a.key, 300, "FAILED", 1), 0);
	assert_int_equal(ioacct_store_export_count(st, &n), 0);
	assert_int_equal(n, 2);
	/* Oldest first, and past a refused one. */
	assert_int_equal(ioacct_store_export_next(st, 0, &key, &gen), 0);
	assert_int_equal(key, a.key);
	assert_int_equal(ioacct_store_export_next(st, a.key, &key, &gen), 0);
	assert_int_equal(key, b.key);
	assert_int_equal(ioacct_store_export_next(st, b.key, &key, &gen), -ENOENT);
	assert_int_equal(ioacct_store_export_done(st, a.key, -1), 0);
	assert_int_equal(ioacct_store_export_next(st, 0, &key, &gen), 0);
	assert_int_equal(key, b.key);
	/* Queued again while exported: the exported generation's done leaves it queued. */
	assert_int_equal(ioacct_store_export_queue(st, b.key), 0);
	assert_int_equal(ioacct_store_export_done(st, b.key, gen), 0);
	assert_int_equal(ioacct_store_export_next(st, 0, &key, &gen2), 0);
	assert_int_equal(key, b.key);
	assert_int_equal(gen2, gen + 1);
	assert_int_equal(ioacct_store_export_done(st, b.key, gen2), 0);
	assert_int_equal(ioacct_store_export_next(st, 0, &key, &gen), -ENOENT);
	/* A running job queued (its step ended): queued once, whatever the count of steps. */
	assert_int_equal(ioacct_store_export_queue(st, b.key), 0);
	assert_int_equal(ioacct_store_export_queue(st, b.key), 0);
	assert_int_equal(ioacct_store_export_count(st, &n), 0);
	assert_int_equal(n, 1);
	/* Deleting a job unqueues it. */
	assert_int_equal(ioacct_store_job_delete(st, b.key), 0);
	assert_int_equal(ioacct_store_export_count(st, &n), 0);
	assert_int_equal(n, 0);
	ioacct_store_close(st);
}

/* A merged report's spec is kept with the finish, read back whole, walked, dropped. */
static void test_report_specs(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(st, "hpc", 21, 100);
	struct ioacct_job b = insert_job(st, "hpc", 22, 100);
	struct ioacct_job c = insert_job(st, "hpc", 23, 100);
	static struct ioacct_report_spec spec, got;
	int64_t key = -1;
	uint64_t n = 0;

	ioacct_strlcpy(spec.path, "/home/u/ioacct-21.txt", sizeof(spec.path));
	spec.formats = 3;
	ioacct_strlcpy(spec.nodes, "mc1,mc2,mc3", sizeof(spec.nodes));
	ioacct_strlcpy(spec.copy_dir, "/var/log/ioacct", sizeof(spec.copy_dir));
	assert_int_equal(ioacct_store_job_finish_report(st, a.key, 200, "COMPLETED", 0, &spec), 0);
	assert_int_equal(ioacct_store_job_finish_report(st, b.key, 200, "COMPLETED", 0, NULL), 0);
	/* Refused finish (no end time): no spec either. */
	assert_int_equal(ioacct_store_job_finish_report(st, c.key, 0, "COMPLETED", 0, &spec), -EINVAL);
	assert_int_equal(ioacct_store_report_spec_get(st, c.key, &got), -ENOENT);
	assert_int_equal(ioacct_store_export_count(st, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ioacct_store_report_spec_get(st, a.key, &got), 0);
	assert_string_equal(got.path, spec.path);
	assert_int_equal(got.formats, 3);
	assert_string_equal(got.nodes, spec.nodes);
	assert_string_equal(got.copy_dir, spec.copy_dir);
	assert_int_equal(ioacct_store_report_spec_get(st, b.key, &got), -ENOENT);
	assert_int_equal(ioacct_store_report_spec_next(st, 0, &key), 0);
	assert_int_equal(key, a.key);
	assert_int_equal(ioacct_store_report_spec_next(st, a.key, &key), -ENOENT);
	/* Unqueued from the outbox, it stays until the report is written. */
	assert_int_equal(ioacct_store_export_done(st, a.key, -1), 0);
	assert_int_equal(ioacct_store_report_spec_get(st, a.key, &got), 0);
	assert_int_equal(ioacct_store_report_spec_done(st, a.key), 0);
	assert_int_equal(ioacct_store_report_spec_next(st, 0, &key), -ENOENT);
	/* Deleting a job drops its spec. */
	assert_int_equal(ioacct_store_job_finish_report(st, b.key, 300, "COMPLETED", 0, &spec), 0);
	assert_int_equal(ioacct_store_job_delete(st, b.key), 0);
	assert_int_equal(ioacct_store_report_spec_next(st, 0, &key), -ENOENT);
	ioacct_store_close(st);
}

static void test_job_find_newest(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a, b, c, d, got;
	uint64_t max;

	a = insert_job(st, "hpc", 7, 100);
	assert_int_equal(ioacct_store_job_finish(st, a.key, 150, "COMPLETED", 0), 0);
	b = insert_job(st, "hpc", 7, 300);
	assert_int_equal(ioacct_store_job_finish(st, b.key, 350, "COMPLETED", 0), 0);
	/* Same start as b: the larger key wins the tie. */
	c = insert_job(st, "hpc", 7, 300);
	d = insert_job(st, "gpu", 7, 200);

	assert_int_equal(ioacct_store_job_find(st, "hpc", 7, &got), 0);
	assert_int_equal(got.key, c.key);
	assert_int_equal(ioacct_store_job_find(st, NULL, 7, &got), 0);
	assert_int_equal(got.key, c.key);
	assert_int_equal(ioacct_store_job_find(st, "gpu", 7, &got), 0);
	assert_int_equal(got.key, d.key);
	assert_int_equal(ioacct_store_job_find(st, "hpc", 8, &got), -ENOENT);
	assert_non_null(strstr(ioacct_store_errmsg(st), "no job 8"));
	assert_int_equal(ioacct_store_job_find(st, NULL, 8, &got), -ENOENT);
	assert_int_equal(ioacct_store_job_get(st, 9999, &got), -ENOENT);

	insert_job(st, "hpc", 70, 400);
	assert_int_equal(ioacct_store_job_max_id(st, "hpc", &max), 0);
	assert_int_equal(max, 70);
	assert_int_equal(ioacct_store_job_max_id(st, "gpu", &max), 0);
	assert_int_equal(max, 7);
	assert_int_equal(ioacct_store_job_max_id(st, "none", &max), 0);
	assert_int_equal(max, 0);
	ioacct_store_close(st);
}

static void test_insert_running_eexist(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(st, "hpc", 9, 100);
	struct ioacct_job b;

	make_job(&b, "hpc", 9, 200);
	assert_int_equal(ioacct_store_job_insert(st, &b), -EEXIST);
	assert_int_equal(b.key, 0);
	assert_non_null(strstr(ioacct_store_errmsg(st), "hpc/9"));
	/* Another cluster's job 9 is another job. */
	insert_job(st, "gpu", 9, 100);
	/* Once finished, the id may run again (Slurm reuses ids after wrapping). */
	assert_int_equal(ioacct_store_job_finish(st, a.key, 150, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_job_insert(st, &b), 0);
	assert_true(b.key > a.key);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 3);
	ioacct_store_close(st);
}

static void test_unknown_job(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job job = insert_job(st, "hpc", 3, 100);
	struct ioacct_step step = { .step_id = 0, .start_ns = 1, .state = "RUNNING" };
	struct ioacct_mount m = { .mnt_id = 1, .path = "/", .fstype = "ext4", .source = "x" };
	struct ioacct_sample s = sample(0, 1, IOACCT_OP_READ, 0, 1);
	struct ioacct_watch w = { .job_key = job.key + 100 };
	struct ioacct_jobdata *jd = NULL;

	/* Rows of a job that is not there: -ENOENT, not a constraint error. */
	assert_int_equal(ioacct_store_step_put(st, job.key + 100, &step), -ENOENT);
	assert_non_null(strstr(ioacct_store_errmsg(st), "FOREIGN KEY"));
	assert_int_equal(ioacct_store_mount_put(st, job.key + 100, &m), -ENOENT);
	assert_int_equal(ioacct_store_series_put(st, job.key + 100, &s), -ENOENT);
	assert_int_equal(ioacct_store_watch_put(st, &w), -ENOENT);
	assert_int_equal(ioacct_store_job_add_dropped(st, job.key + 100, 1, 1), -ENOENT);
	assert_int_equal(ioacct_store_job_finish(st, job.key + 100, 200, "COMPLETED", 0), -ENOENT);
	assert_int_equal(ioacct_store_job_load(st, job.key + 100, &jd), -ENOENT);
	assert_null(jd);
	/* A finish needs a final state and an end. */
	assert_int_equal(ioacct_store_job_finish(st, job.key, 200, "RUNNING", 0), -EINVAL);
	assert_int_equal(ioacct_store_job_finish(st, job.key, 0, "COMPLETED", 0), -EINVAL);
	assert_int_equal(ioacct_store_job_finish(st, job.key, 200, "", 0), -EINVAL);
	ioacct_store_close(st);
}

static void test_watches(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(st, "hpc", 1, 100);
	struct ioacct_job b = insert_job(st, "hpc", 2, 100);
	struct ioacct_watch w[3] = {
		{ .job_key = a.key, .step_id = IOACCT_STEP_BATCH, .slot = 3, .cgroup_id = BIG + 77,
		  .hier = IOACCT_HIER_V2, .pid = 4242, .mntns = 4026531841U,
		  .start_mono_ns = BIG + 123, .bin_width_ns = 5000000000ULL,
		  .cgroup = "/system.slice/slurmstepd.scope/job_1/step_batch" },
		{ .job_key = a.key, .step_id = 0, .slot = 4, .cgroup_id = 78, .hier = IOACCT_HIER_V1,
		  .pid = 4243, .mntns = 1, .start_mono_ns = 124, .bin_width_ns = 1,
		  .cgroup = "/slurm/uid_1/job_1/step_0" },
		{ .job_key = b.key, .step_id = 0, .slot = 5, .cgroup_id = 79, .pid = -1,
		  .cgroup = "/slurm/uid_1/job_2/step_0" },
	};
	struct ioacct_watch *list;
	size_t n;

	assert_int_equal(ioacct_store_watch_list(st, &list, &n), 0);
	assert_int_equal(n, 0);
	free(list);

	for (size_t i = 0; i < 3; i++)
		assert_int_equal(ioacct_store_watch_put(st, &w[i]), 0);
	/* Put again: replaced, not doubled. */
	w[2].slot = 6;
	assert_int_equal(ioacct_store_watch_put(st, &w[2]), 0);

	assert_int_equal(ioacct_store_watch_list(st, &list, &n), 0);
	assert_int_equal(n, 3);
	/* Ordered by (job, step): w[1] (step 0) before w[0] (batch). */
	assert_memory_equal(&list[0], &w[1], sizeof(w[1]));
	assert_memory_equal(&list[1], &w[0], sizeof(w[0]));
	assert_memory_equal(&list[2], &w[2], sizeof(w[2]));
	free(list);

	assert_int_equal(ioacct_store_watch_delete(st, a.key, 0), 0);
	assert_int_equal(ioacct_store_watch_delete(st, a.key, 0), -ENOENT);
	assert_int_equal(ioacct_store_watch_list(st, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].step_id, IOACCT_STEP_BATCH);
	free(list);

	/* Finishing a job deletes its watches, and only its. */
	assert_int_equal(ioacct_store_job_finish(st, a.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_watch_list(st, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].job_key, b.key);
	free(list);
	ioacct_store_close(st);
}

/* What the daemon reconciles at start, and the undo of an unacknowledged registration. */
static void test_running_and_delete(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(st, "hpc", 1, 100);
	struct ioacct_job b = insert_job(st, "hpc", 2, 100);
	struct ioacct_job c = insert_job(st, "hpc", 3, 100);
	struct ioacct_step step = { .step_id = 0, .start_ns = 1, .state = "RUNNING" };
	struct ioacct_watch w = { .job_key = c.key, .step_id = 0, .slot = 1, .cgroup_id = 9,
				  .cgroup = "/x" };
	struct ioacct_job *list = NULL, got;
	size_t n = 0;

	assert_int_equal(ioacct_store_job_finish(st, b.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_jobs_running(st, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].key, a.key);
	assert_int_equal(list[1].key, c.key);
	assert_string_equal(list[1].state, "RUNNING");
	free(list);

	/* A delete takes every row of the job with it; the id can be inserted again. */
	assert_int_equal(ioacct_store_step_put(st, c.key, &step), 0);
	assert_int_equal(ioacct_store_watch_put(st, &w), 0);
	assert_int_equal(ioacct_store_job_delete(st, c.key), 0);
	assert_int_equal(ioacct_store_job_delete(st, c.key), -ENOENT);
	assert_int_equal(ioacct_store_job_get(st, c.key, &got), -ENOENT);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM steps"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM watches"), 0);
	assert_int_equal(ioacct_store_jobs_running(st, &list, &n), 0);
	assert_int_equal(n, 1);
	free(list);
	c = insert_job(st, "hpc", 3, 100);
	assert_true(c.key > 0);
	ioacct_store_close(st);
}

static void test_dropped_add(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job job = insert_job(st, "hpc", 1, 100);
	struct ioacct_job got;

	assert_int_equal(ioacct_store_job_add_dropped(st, job.key, 3, 4000), 0);
	assert_int_equal(ioacct_store_job_add_dropped(st, job.key, 2, 96), 0);
	assert_int_equal(ioacct_store_job_get(st, job.key, &got), 0);
	assert_int_equal(got.dropped_events, 5);
	assert_int_equal(got.dropped_bytes, 4096);
	/* Across 2^63 the sum stays exact, where SQLite's + would turn REAL. */
	assert_int_equal(ioacct_store_job_add_dropped(st, job.key, BIG - 5, BIG), 0);
	assert_int_equal(ioacct_store_job_get(st, job.key, &got), 0);
	assert_int_equal(got.dropped_events, BIG);
	assert_int_equal(got.dropped_bytes, BIG + 4096);
	ioacct_store_close(st);
}

static void test_migrate_from_v1(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st;
	struct ioacct_jobdata *jd;
	struct ioacct_watch w = { .step_id = 0, .slot = 1, .cgroup = "/job_42" };
	struct ioacct_watch *list;
	struct ioacct_job got;
	size_t n;

	assert_int_equal(ioacct_store_create_at_version(f->path, 1, f->err, sizeof(f->err)), 0);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'watches'"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM ops"), IOACCT_OP_COUNT);
	/* What an ioacct of schema 1 would have written. */
	raw_exec(f->path,
		 "INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		 " start_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events, dropped_bytes)"
		 " VALUES (7, 'hpc', 42, 'n1', 'slurm', 1000, 1000, 'bob', 'sim', '/home/bob', 100,"
		 " 'RUNNING', 0, 'kprobe', 5000000000, 1, 2);"
		 "INSERT INTO series VALUES (7, 0, 21, 1, 0, 4096, 1, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0);"
		 "INSERT INTO series VALUES (7, 0, 21, 1, 1, 8192, 2, 1, 30, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0);");

	st = open_store(f, f->path, IOACCT_STORE_RDWR);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), IOACCT_STORE_SCHEMA_VERSION);
	/* A running job is not for the cluster store yet. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM export_queue"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master"
					  " WHERE type = 'index' AND name LIKE 'jobs_%'"), 7);

	assert_int_equal(ioacct_store_job_find(st, "hpc", 42, &got), 0);
	assert_int_equal(got.key, 7);
	assert_string_equal(got.user, "bob");
	assert_false(got.has_array);
	assert_int_equal(got.dropped_bytes, 2);
	assert_int_equal(ioacct_store_job_load(st, 7, &jd), 0);
	assert_int_equal(jd->nseries, 2);
	assert_int_equal(jd->ntotals, 1);
	assert_int_equal(jd->totals[0].c.bytes, 12288);
	assert_int_equal(jd->totals[0].c.size_hist[3], 3);
	ioacct_jobdata_free(jd);

	w.job_key = 7;
	assert_int_equal(ioacct_store_watch_put(st, &w), 0);
	assert_int_equal(ioacct_store_watch_list(st, &list, &n), 0);
	assert_int_equal(n, 1);
	free(list);
	ioacct_store_close(st);

	/* Opening again finds nothing to do. */
	st = open_store(f, f->path, IOACCT_STORE_RDWR);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	ioacct_store_close(st);
}

/*
 * Schema 3 to 4: series and totals gain the failed calls per class; rows of
 * old jobs read 0 in every class (their errors are unclassified), new rows
 * keep their classes through the totals.
 */
static void test_migrate_from_v3(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_sample smp = { .step_id = 0, .mnt_id = 21, .op = IOACCT_OP_OPEN, .bin = 0 };
	struct ioacct_job job;
	struct ioacct_store *st;

	assert_int_equal(ioacct_store_create_at_version(f->path, 3, f->err, sizeof(f->err)), 0);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 3);
	raw_exec(f->path,
		 "INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		 " start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		 " dropped_bytes) VALUES (5, 'hpc', 55, 'n1', 'slurm', 1000, 1000, 'bob', 'sim', '/',"
		 " 100, 5000, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0);"
		 "INSERT INTO series VALUES (5, 0, 21, 2, 0, 0, 10, 4, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);"
		 "INSERT INTO totals VALUES (5, 0, 21, 2, 0, 10, 4, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);");
	open_fails(f, f->path, IOACCT_STORE_RDONLY, ENOTSUP,
		   "has schema 3, older than this ioacct's " XSTR(IOACCT_STORE_SCHEMA_VERSION));

	st = open_store(f, f->path, IOACCT_STORE_RDWR);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_load(st, 5, &jd), 0);
	assert_int_equal(jd->ntotals, 1);
	assert_int_equal(jd->totals[0].c.calls, 10);
	assert_int_equal(jd->totals[0].c.errors, 4);
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
		assert_int_equal(jd->totals[0].c.errclass[k], 0);
	assert_int_equal(ioacct_counters_unclassified(&jd->totals[0].c), 4);
	assert_int_equal(ioacct_counters_real_errors(&jd->totals[0].c), 4);
	ioacct_jobdata_free(jd);
	jd = NULL;

	/* A job stored now keeps its classes, in the series and in the totals. */
	make_job(&job, "hpc", 56, 1700000000000000000LL);
	assert_int_equal(ioacct_store_job_insert(st, &job), 0);
	smp.c.calls = 9;
	smp.c.errclass[IOACCT_ERR_NOTFOUND] = 5;
	smp.c.errclass[IOACCT_ERR_ACCESS] = 1;
	smp.c.errclass[IOACCT_ERR_SPACE] = 1;
	smp.c.errclass[IOACCT_ERR_IO] = 1;
	smp.c.errclass[IOACCT_ERR_OTHER] = 1;
	smp.c.errors = 9;
	assert_int_equal(ioacct_store_series_put(st, job.key, &smp), 0);
	smp.bin = 1;
	assert_int_equal(ioacct_store_series_put(st, job.key, &smp), 0);
	assert_int_equal(ioacct_store_job_finish(st, job.key, 1700000001000000000LL, "COMPLETED", 0),
			 0);
	assert_int_equal(ioacct_store_job_load(st, job.key, &jd), 0);
	assert_int_equal(jd->nseries, 2);
	assert_int_equal(jd->series[1].c.errclass[IOACCT_ERR_IO], 1);
	assert_int_equal(jd->ntotals, 1);
	assert_int_equal(jd->totals[0].c.errors, 18);
	assert_int_equal(jd->totals[0].c.errclass[IOACCT_ERR_NOTFOUND], 10);
	assert_int_equal(jd->totals[0].c.errclass[IOACCT_ERR_ACCESS], 2);
	assert_int_equal(jd->totals[0].c.errclass[IOACCT_ERR_SPACE], 2);
	assert_int_equal(jd->totals[0].c.errclass[IOACCT_ERR_IO], 2);
	assert_int_equal(jd->totals[0].c.errclass[IOACCT_ERR_OTHER], 2);
	assert_int_equal(ioacct_counters_unclassified(&jd->totals[0].c), 0);
	assert_int_equal(ioacct_counters_real_errors(&jd->totals[0].c), 8);
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

static void test_newer_schema_refused(void **state)
{
	struct fixture *f = *state;

	ioacct_store_close(open_store(f, f->path, IOACCT_STORE_RDWR));
	raw_exec(f->path, "PRAGMA user_version = 99");
	open_fails(f, f->path, IOACCT_STORE_RDWR, ENOTSUP,
		   "newer ioacct (schema 99, this one knows " XSTR(IOACCT_STORE_SCHEMA_VERSION) ")");
	open_fails(f, f->path, IOACCT_STORE_RDONLY, ENOTSUP, "newer ioacct");
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 99);
	/* Nor can the test hook go back. */
	assert_int_equal(ioacct_store_create_at_version(f->path, 1, f->err, sizeof(f->err)), -ENOTSUP);
}

static void test_foreign_files(void **state)
{
	struct fixture *f = *state;
	char path[256], garbage[8192];

	/* Not SQLite at all: refused, and left as it was. */
	memset(garbage, 'x', sizeof(garbage));
	snprintf(path, sizeof(path), "%s/garbage.db", f->dir);
	write_file(path, garbage, sizeof(garbage));
	open_fails(f, path, IOACCT_STORE_RDWR, EIO, path);
	open_fails(f, path, IOACCT_STORE_RDONLY, EIO, "not a database");
	assert_int_equal(file_size(path), sizeof(garbage));

	/* Another program's SQLite database. */
	snprintf(path, sizeof(path), "%s/other.db", f->dir);
	raw_exec(path, "CREATE TABLE contacts (name TEXT)");
	open_fails(f, path, IOACCT_STORE_RDWR, EINVAL, "not ioacct's");
	assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master"), 1);

	/* Ours, with a table gone. */
	ioacct_store_close(open_store(f, f->path, IOACCT_STORE_RDWR));
	raw_exec(f->path, "DROP TABLE totals");
	open_fails(f, f->path, IOACCT_STORE_RDWR, EIO, "table totals is missing");
	open_fails(f, f->path, IOACCT_STORE_RDONLY, EIO, "table totals is missing");
}

static void test_truncated_file(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job job = insert_job(st, "hpc", 1, 100), got;
	struct ioacct_jobdata *jd;
	static char data[1 << 20];
	char path[256];
	ssize_t len;
	int fd;

	/* Enough rows for many pages; the WAL is checkpointed into the file at close. */
	for (uint32_t bin = 0; bin < 2000; bin++) {
		struct ioacct_sample s = sample(0, 21, IOACCT_OP_READ, bin, bin);

		assert_int_equal(ioacct_store_series_put(st, job.key, &s), 0);
	}
	ioacct_store_close(st);
	fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	len = read(fd, data, sizeof(data));
	close(fd);
	assert_true(len > 16 * 4096);

	/* Cut in half: SQLite sees the header's page count exceed the file. */
	snprintf(path, sizeof(path), "%s/half.db", f->dir);
	write_file(path, data, (size_t)len / 2);
	open_fails(f, path, IOACCT_STORE_RDONLY, EIO, "malformed");
	open_fails(f, path, IOACCT_STORE_RDWR, EIO, "malformed");
	assert_int_equal(file_size(path), len / 2);

	/*
	 * Whole, but the last half (pages of the series, written last) is
	 * garbage: it opens and finds the job, and loading it fails cleanly.
	 */
	snprintf(path, sizeof(path), "%s/damaged.db", f->dir);
	memset(data + len / 2, 0x5a, (size_t)(len - len / 2));
	write_file(path, data, (size_t)len);
	st = open_store(f, path, IOACCT_STORE_RDONLY);
	assert_int_equal(ioacct_store_job_find(st, "hpc", 1, &got), 0);
	jd = NULL;
	assert_int_equal(ioacct_store_job_load(st, got.key, &jd), -EIO);
	assert_null(jd);
	assert_non_null(strstr(ioacct_store_errmsg(st), "malformed"));
	ioacct_store_close(st);

	/* Not even a whole header. */
	snprintf(path, sizeof(path), "%s/stub.db", f->dir);
	write_file(path, data, 60);
	open_fails(f, path, IOACCT_STORE_RDONLY, EIO, path);
	open_fails(f, path, IOACCT_STORE_RDWR, EIO, path);
}

static void test_reader_while_writer(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *w = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(w, "hpc", 1, 100), b, got;
	struct ioacct_sample s = sample(0, 21, IOACCT_OP_WRITE, 0, 5);
	struct ioacct_store *r;
	struct ioacct_jobdata *jd;
	char side[160];

	assert_int_equal(ioacct_store_series_put(w, a.key, &s), 0);
	/* The writer holds a write transaction while the reader opens and reads. */
	assert_int_equal(ioacct_store_begin(w), 0);
	b = insert_job(w, "hpc", 2, 200);
	r = open_store(f, f->path, IOACCT_STORE_RDONLY);
	assert_int_equal(ioacct_store_schema_version(r), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 1, &got), 0);
	assert_int_equal(got.key, a.key);
	assert_int_equal(ioacct_store_job_load(r, a.key, &jd), 0);
	assert_int_equal(jd->nseries, 1);
	assert_int_equal(jd->ntotals, 1);
	assert_memory_equal(&jd->totals[0].c, &s.c, sizeof(s.c));
	ioacct_jobdata_free(jd);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 2, &got), -ENOENT);

	assert_int_equal(ioacct_store_commit(w), 0);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 2, &got), 0);
	assert_int_equal(got.key, b.key);

	/* A reader never writes. */
	assert_int_equal(ioacct_store_job_add_dropped(r, a.key, 1, 1), -EROFS);
	assert_true(strlen(ioacct_store_errmsg(r)) > 0);
	/* A reader's transaction is a snapshot. */
	assert_int_equal(ioacct_store_begin(r), 0);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 1, &got), 0);
	insert_job(w, "hpc", 3, 300);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 3, &got), -ENOENT);
	assert_int_equal(ioacct_store_commit(r), 0);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 3, &got), 0);
	ioacct_store_close(r);
	ioacct_store_close(w);

	/*
	 * The writer keeps -wal (emptied) and -shm at close: a reader that may
	 * not create files in the directory needs them to open the database.
	 */
	snprintf(side, sizeof(side), "%s-wal", f->path);
	assert_int_equal(file_size(side), 0);
	snprintf(side, sizeof(side), "%s-shm", f->path);
	assert_int_equal(access(side, F_OK), 0);
	r = open_store(f, f->path, IOACCT_STORE_RDONLY);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 3, &got), 0);
	ioacct_store_close(r);
}

static void test_rdonly_missing(void **state)
{
	struct fixture *f = *state;
	char msg[PATH_MAX + 64];

	snprintf(msg, sizeof(msg), "no ioacct database at %s", f->path);
	open_fails(f, f->path, IOACCT_STORE_RDONLY, ENOENT, msg);
	/* Nothing created on the way. */
	assert_int_equal(access(f->path, F_OK), -1);
}

static void test_rdonly_old_schema(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(ioacct_store_create_at_version(f->path, 1, f->err, sizeof(f->err)), 0);
	open_fails(f, f->path, IOACCT_STORE_RDONLY, ENOTSUP, "start ioacctd");
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);
}

static void test_transactions(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_step step = { .step_id = 0, .start_ns = 1, .state = "RUNNING" };
	struct ioacct_job a, b, got;

	assert_int_equal(ioacct_store_commit(st), -EINVAL);
	assert_int_equal(ioacct_store_rollback(st), -EINVAL);

	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_begin(st), -EINVAL);
	a = insert_job(st, "hpc", 1, 100);
	/* A failed call inside the transaction does not end it. */
	assert_int_equal(ioacct_store_step_put(st, a.key + 1, &step), -ENOENT);
	assert_int_equal(ioacct_store_job_finish(st, a.key + 1, 200, "COMPLETED", 0), -ENOENT);
	assert_int_equal(ioacct_store_step_put(st, a.key, &step), 0);
	assert_int_equal(ioacct_store_commit(st), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM steps"), 1);

	assert_int_equal(ioacct_store_begin(st), 0);
	b = insert_job(st, "hpc", 2, 100);
	assert_int_equal(ioacct_store_job_finish(st, a.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_job_get(st, a.key, &got), 0);
	assert_string_equal(got.state, "COMPLETED");
	assert_int_equal(ioacct_store_rollback(st), 0);
	assert_int_equal(ioacct_store_job_get(st, b.key, &got), -ENOENT);
	assert_int_equal(ioacct_store_job_get(st, a.key, &got), 0);
	assert_string_equal(got.state, "RUNNING");
	assert_int_equal(got.end_ns, 0);

	/* Finishing inside a transaction commits with it. */
	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_job_finish(st, a.key, 200, "COMPLETED", 0), 0);
	assert_int_equal(ioacct_store_commit(st), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'"), 1);
	ioacct_store_close(st);
}

static void test_hostile_rows(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job a = insert_job(st, "hpc", 1, 100), b = insert_job(st, "hpc", 2, 100), got;
	struct ioacct_jobdata *jd = NULL;
	char sql[256];

	/* Longer than their buffers: cut, never overflowed. */
	snprintf(sql, sizeof(sql),
		 "UPDATE jobs SET state = replace(hex(zeroblob(200)), '00', 'S'),"
		 " user = replace(hex(zeroblob(5000)), '00', 'u'),"
		 " workdir = replace(hex(zeroblob(9000)), '00', 'w') WHERE key = %lld",
		 (long long)a.key);
	raw_exec(f->path, sql);
	assert_int_equal(ioacct_store_job_get(st, a.key, &got), 0);
	assert_int_equal(strlen(got.state), sizeof(got.state) - 1);
	assert_int_equal(strlen(got.user), sizeof(got.user) - 1);
	assert_int_equal(strlen(got.workdir), sizeof(got.workdir) - 1);

	/* An operation this ioacct does not know. */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO series VALUES (%lld, 0, 1, 77, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)",
		 (long long)b.key);
	raw_exec(f->path, sql);
	assert_int_equal(ioacct_store_job_load(st, b.key, &jd), -EIO);
	assert_null(jd);
	assert_non_null(strstr(ioacct_store_errmsg(st), "damaged"));
	ioacct_store_close(st);
}

static void test_ops_table(void **state)
{
	struct fixture *f = *state;
	sqlite3_stmt *s;
	sqlite3 *db;
	unsigned char hdr[20];
	unsigned int n = 0;
	int fd;

	ioacct_store_close(open_store(f, f->path, IOACCT_STORE_RDWR));
	/* A database made before the last operation existed: the next writer names it. */
	raw_exec(f->path, "DELETE FROM ops WHERE op = (SELECT max(op) FROM ops)");
	ioacct_store_close(open_store(f, f->path, IOACCT_STORE_RDWR));
	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT op, name FROM ops ORDER BY op", -1, &s, NULL),
			 SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		assert_int_equal(sqlite3_column_int(s, 0), n);
		assert_string_equal((const char *)sqlite3_column_text(s, 1), ioacct_op_name(n));
		n++;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	assert_int_equal(n, IOACCT_OP_COUNT);
	/* WAL is recorded in the header (bytes 18 and 19 are 2), for every later opener. */
	fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, hdr, sizeof(hdr)), sizeof(hdr));
	close(fd);
	assert_int_equal(hdr[18], 2);
	assert_int_equal(hdr[19], 2);
}

/* ---- queries ---- */

#define T0 1700000000000000000LL
#define AT(s) (T0 + (int64_t)(s) * 1000000000LL)

static struct ioacct_job query_job(struct ioacct_store *st, const char *cluster, uint64_t job_id,
				   uint32_t uid, int start, int end)
{
	struct ioacct_job j;

	make_job(&j, cluster, job_id, AT(start));
	j.uid = uid;
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	if (end)
		assert_int_equal(ioacct_store_job_finish(st, j.key, AT(end), "COMPLETED", 0), 0);
	return j;
}

struct picked {
	int64_t keys[16];
	size_t n;
	int stop_after; /* return -ECANCELED after this many; 0 = never */
};

static int pick(struct ioacct_store *st, const struct ioacct_job *job, void *arg)
{
	struct picked *p = arg;
	struct ioacct_jobdata *jd;

	/* Loading inside the selection is what ioacct does: it must see the same snapshot. */
	assert_int_equal(ioacct_store_job_load_totals(st, job->key, &jd), 0);
	assert_int_equal(jd->job.key, job->key);
	ioacct_jobdata_free(jd);
	assert_true(p->n < 16);
	p->keys[p->n++] = job->key;
	if (p->stop_after && p->n == (size_t)p->stop_after)
		return -ECANCELED;
	return 0;
}

static void assert_picked(struct ioacct_store *st, const struct ioacct_store_filter *f,
			  const int64_t *want, size_t nwant)
{
	struct picked p = { .n = 0 };

	assert_int_equal(ioacct_store_jobs_select(st, f, pick, &p), 0);
	if (p.n != nwant)
		print_error("selected %zu jobs, expected %zu\n", p.n, nwant);
	assert_int_equal(p.n, nwant);
	for (size_t i = 0; i < nwant; i++)
		assert_int_equal(p.keys[i], want[i]);
}

static void test_select(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	/* a..f by start; d is the longest finished job (280 s), c and g never end. */
	struct ioacct_job a = query_job(st, "hpc", 10, 1000, 100, 200);
	struct ioacct_job b = query_job(st, "hpc", 11, 1001, 150, 160);
	struct ioacct_job c = query_job(st, "other", 10, 1000, 300, 0);
	struct ioacct_job d = query_job(st, "hpc", 12, 1000, 120, 400);
	struct ioacct_job e = query_job(st, "hpc", 13, 1002, 500, 600);
	struct ioacct_job g = query_job(st, "iorun", 1, 1000, 10, 0);
	const uint64_t id10 = 10;
	const uint32_t u1000 = 1000, u_other[] = { 1001, 1002 };
	const char *hpc[] = { "hpc" };
	uint64_t many[IOACCT_STORE_FILTER_MAX + 1] = { 0 };
	struct ioacct_store_filter flt;
	struct picked p = { .stop_after = 1 };
	struct ioacct_store *r;

	memset(&flt, 0, sizeof(flt));
	assert_picked(st, &flt, (int64_t[]){ a.key, b.key, c.key, d.key, e.key, g.key }, 6);

	/* A window ending before any job of it ends; g runs since before it. */
	flt.start_ns = AT(170);
	flt.end_ns = AT(250);
	assert_picked(st, &flt, (int64_t[]){ a.key, d.key, g.key }, 3);
	/* Later than the longest job is long: c and g come from the running jobs' index. */
	flt.start_ns = AT(700);
	flt.end_ns = AT(800);
	assert_picked(st, &flt, (int64_t[]){ c.key, g.key }, 2);
	/* A start alone: everything not ended before it. */
	flt.start_ns = AT(550);
	flt.end_ns = 0;
	assert_picked(st, &flt, (int64_t[]){ c.key, e.key, g.key }, 3);
	/* An end alone: everything started by then. */
	flt.start_ns = 0;
	flt.end_ns = AT(140);
	assert_picked(st, &flt, (int64_t[]){ a.key, d.key, g.key }, 3);
	/* Bounds are inclusive. */
	flt.start_ns = AT(600);
	flt.end_ns = AT(600);
	assert_picked(st, &flt, (int64_t[]){ c.key, e.key, g.key }, 3);

	memset(&flt, 0, sizeof(flt));
	flt.job_ids = &id10;
	flt.njob_ids = 1;
	assert_picked(st, &flt, (int64_t[]){ a.key, c.key }, 2);
	flt.clusters = hpc;
	flt.nclusters = 1;
	assert_picked(st, &flt, (int64_t[]){ a.key }, 1);

	memset(&flt, 0, sizeof(flt));
	flt.uids = &u1000;
	flt.nuids = 1;
	assert_picked(st, &flt, (int64_t[]){ a.key, c.key, d.key, g.key }, 4);
	flt.uids = u_other;
	flt.nuids = 2;
	assert_picked(st, &flt, (int64_t[]){ b.key, e.key }, 2);

	/* Pages. */
	memset(&flt, 0, sizeof(flt));
	flt.limit = 4;
	assert_picked(st, &flt, (int64_t[]){ a.key, b.key, c.key, d.key }, 4);
	flt.after_key = d.key;
	assert_picked(st, &flt, (int64_t[]){ e.key, g.key }, 2);
	flt.after_key = g.key;
	assert_picked(st, &flt, NULL, 0);

	/* A callback's error stops the selection and leaves no transaction behind. */
	memset(&flt, 0, sizeof(flt));
	assert_int_equal(ioacct_store_jobs_select(st, &flt, pick, &p), -ECANCELED);
	assert_int_equal(p.n, 1);
	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_commit(st), 0);

	flt.job_ids = many;
	flt.njob_ids = IOACCT_STORE_FILTER_MAX + 1;
	assert_int_equal(ioacct_store_jobs_select(st, &flt, pick, &p), -EINVAL);
	assert_non_null(strstr(ioacct_store_errmsg(st), "more than"));

	/* A reader selects the same. */
	r = open_store(f, f->path, IOACCT_STORE_RDONLY);
	memset(&flt, 0, sizeof(flt));
	flt.start_ns = AT(170);
	flt.end_ns = AT(250);
	assert_picked(r, &flt, (int64_t[]){ a.key, d.key, g.key }, 3);
	ioacct_store_close(r);
	ioacct_store_close(st);
}

static void test_load_totals(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job j = insert_job(st, "hpc", 5, 100);
	struct ioacct_step step = { .step_id = 0, .start_ns = 100, .state = "RUNNING" };
	struct ioacct_mount m = { .mnt_id = 21, .path = "/", .fstype = "ext4", .source = "/dev/sda" };
	struct ioacct_sample series[NSERIES], *got;
	struct ioacct_jobdata *full, *jd;
	size_t n;

	assert_int_equal(ioacct_store_step_put(st, j.key, &step), 0);
	assert_int_equal(ioacct_store_mount_put(st, j.key, &m), 0);
	put_series(st, j.key, series);
	for (int finished = 0; finished < 2; finished++) {
		/* Running, totals are summed from the series; finished, read from totals. */
		if (finished)
			assert_int_equal(ioacct_store_job_finish(st, j.key, 200, "COMPLETED", 0), 0);
		assert_int_equal(ioacct_store_job_load(st, j.key, &full), 0);
		assert_int_equal(ioacct_store_job_load_totals(st, j.key, &jd), 0);
		assert_job_equal(&jd->job, &full->job);
		assert_int_equal(jd->nsteps, 1);
		assert_int_equal(jd->nmounts, 1);
		assert_string_equal(jd->mounts[0].fstype, "ext4");
		assert_int_equal(jd->ntotals, full->ntotals);
		for (size_t i = 0; i < jd->ntotals; i++)
			assert_sample_equal(&jd->totals[i], &full->totals[i]);
		assert_null(jd->series);
		assert_int_equal(jd->nseries, 0);
		ioacct_jobdata_free(jd);
		ioacct_jobdata_free(full);
	}
	assert_int_equal(ioacct_store_job_series(st, j.key, &got, &n), 0);
	assert_int_equal(n, NSERIES);
	for (size_t i = 0; i < n; i++)
		assert_sample_equal(&got[i], &series[i]);
	free(got);
	assert_int_equal(ioacct_store_job_load_totals(st, j.key + 100, &jd), -ENOENT);
	assert_int_equal(ioacct_store_job_series(st, j.key + 100, &got, &n), 0);
	assert_int_equal(n, 0);
	free(got);
	ioacct_store_close(st);
}

static void test_migrate_from_v2(void **state)
{
	struct fixture *f = *state;
	const uint64_t id = 77;
	struct ioacct_store_filter flt = { .job_ids = &id, .njob_ids = 1 };
	struct ioacct_store *st;

	assert_int_equal(ioacct_store_create_at_version(f->path, 2, f->err, sizeof(f->err)), 0);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 2);
	raw_exec(f->path,
		 "INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		 " start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		 " dropped_bytes) VALUES (3, 'hpc', 77, 'n1', 'slurm', 1000, 1000, 'bob', 'sim', '/',"
		 " 100, 5000, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0);");
	/* A reader of this version does not upgrade it. */
	open_fails(f, f->path, IOACCT_STORE_RDONLY, ENOTSUP, "has schema 2, older than this ioacct's " XSTR(IOACCT_STORE_SCHEMA_VERSION));

	st = open_store(f, f->path, IOACCT_STORE_RDWR);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	/* A job finished before the outbox existed still goes to the cluster store. */
	assert_int_equal(raw_int(f->path, "SELECT job_key FROM export_queue"), 3);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
					  " AND name IN ('jobs_job_id', 'jobs_duration', 'jobs_running')"),
			 3);
	assert_picked(st, &flt, (int64_t[]){ 3 }, 1);
	flt.start_ns = 4000;
	flt.end_ns = 4500;
	assert_picked(st, &flt, (int64_t[]){ 3 }, 1);
	flt.start_ns = 5001;
	flt.end_ns = 0;
	assert_picked(st, &flt, NULL, 0);
	ioacct_store_close(st);
	/* The planner uses the new indexes (a scan would be just as right, and slow). */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM (SELECT key FROM jobs"
					  " INDEXED BY jobs_running WHERE end_ns IS NULL)"), 0);
}

/*
 * Schema 6 to 7 (issue 28): a requeued job's runs. Rows stored before were
 * runs too: a slurm job's rows on a node are numbered by start, the last
 * run answers by job id, every run reads back as it was, none summed.
 */
static void test_migrate_from_v6(void **state)
{
	struct fixture *f = *state;
	const uint64_t id = 88;
	struct ioacct_store_filter flt = { .job_ids = &id, .njob_ids = 1 };
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_job got, job;
	struct ioacct_store *st;

	assert_int_equal(ioacct_store_create_at_version(f->path, 6, f->err, sizeof(f->err)), 0);
	raw_exec(f->path,
		 "INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		 " start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		 " dropped_bytes) VALUES"
		 " (4, 'hpc', 88, 'n1', 'slurm', 1000, 1000, 'bob', 'rq', '/', 100, 500, 'REQUEUED',"
		 " 0, 'tracepoint', 5000000000, 0, 0),"
		 " (6, 'hpc', 88, 'n1', 'slurm', 1000, 1000, 'bob', 'rq', '/', 900, 1500, 'COMPLETED',"
		 " 0, 'tracepoint', 5000000000, 0, 0),"
		 " (8, 'hpc', 89, 'n1', 'slurm', 1000, 1000, 'bob', 'one', '/', 950, 1200, 'COMPLETED',"
		 " 0, 'tracepoint', 5000000000, 0, 0),"
		 " (9, 'iorun', 88, 'n1', 'iorun', 1000, 1000, 'bob', 'io', '/', 960, 990, 'COMPLETED',"
		 " 0, 'tracepoint', 5000000000, 0, 0);"
		 "INSERT INTO series VALUES (4, 0, 21, 1, 0, 4096, 1, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,"
		 " 0, 0, 0, 0, 0);"
		 "INSERT INTO totals VALUES (4, 0, 21, 1, 4096, 1, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,"
		 " 0, 0, 0, 0, 0);"
		 "INSERT INTO series VALUES (6, 0, 21, 1, 0, 8192, 2, 0, 20, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,"
		 " 0, 0, 0, 0, 0);"
		 "INSERT INTO totals VALUES (6, 0, 21, 1, 8192, 2, 0, 20, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,"
		 " 0, 0, 0, 0, 0);");
	open_fails(f, f->path, IOACCT_STORE_RDONLY, ENOTSUP, "has schema 6, older than this ioacct's " XSTR(IOACCT_STORE_SCHEMA_VERSION));

	st = open_store(f, f->path, IOACCT_STORE_RDWR);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "SELECT restart FROM jobs WHERE key = 4"), 0);
	assert_int_equal(raw_int(f->path, "SELECT restart FROM jobs WHERE key = 6"), 1);
	assert_int_equal(raw_int(f->path, "SELECT sum(restart) FROM jobs WHERE key IN (8, 9)"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
					  " AND name = 'jobs_cluster_job_id_run'"), 1);

	/* By job id, the last run; each run by its number; no run 2. */
	assert_int_equal(ioacct_store_job_find(st, "hpc", 88, &got), 0);
	assert_int_equal(got.key, 6);
	assert_int_equal(got.restart, 1);
	assert_int_equal(ioacct_store_job_find_run(st, "hpc", 88, 0, &got), 0);
	assert_int_equal(got.key, 4);
	assert_string_equal(got.state, "REQUEUED");
	assert_int_equal(ioacct_store_job_find_run(st, NULL, 88, 1, &got), 0);
	assert_int_equal(got.key, 6);
	assert_int_equal(ioacct_store_job_find_run(st, "hpc", 88, 2, &got), -ENOENT);
	assert_non_null(strstr(ioacct_store_errmsg(st), "no job 88 run 2 on cluster hpc"));

	/* Each run's own bytes, as before the upgrade. */
	assert_int_equal(ioacct_store_job_load(st, 4, &jd), 0);
	assert_int_equal(jd->ntotals, 1);
	assert_int_equal(jd->totals[0].c.bytes, 4096);
	ioacct_jobdata_free(jd);
	assert_int_equal(ioacct_store_job_load(st, 6, &jd), 0);
	assert_int_equal(jd->totals[0].c.bytes, 8192);
	assert_int_equal(jd->nseries, 1);
	ioacct_jobdata_free(jd);

	/* A selection has the last run (iorun's 88 is another job); -D every run. */
	assert_picked(st, &flt, (int64_t[]){ 6, 9 }, 2);
	flt.duplicates = true;
	assert_picked(st, &flt, (int64_t[]){ 4, 6, 9 }, 3);
	flt.duplicates = false;
	flt.start_ns = 100;
	flt.end_ns = 600;
	assert_picked(st, &flt, NULL, 0);
	flt.duplicates = true;
	assert_picked(st, &flt, (int64_t[]){ 4 }, 1);

	/* A third run registered now keeps its number; it is the one by job id. */
	make_job(&job, "hpc", 88, 2000);
	job.restart = 2;
	assert_int_equal(ioacct_store_job_insert(st, &job), 0);
	assert_int_equal(ioacct_store_job_find(st, "hpc", 88, &got), 0);
	assert_int_equal(got.key, job.key);
	assert_int_equal(got.restart, 2);
	flt.start_ns = flt.end_ns = 0;
	flt.duplicates = false;
	assert_picked(st, &flt, (int64_t[]){ 9, job.key }, 2);
	ioacct_store_close(st);
}

static void assert_mode(const char *path, const char *suffix, mode_t mode)
{
	char p[256];
	struct stat sb;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, mode);
}

static void test_set_private(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_store(f, f->path, IOACCT_STORE_RDWR);
	struct ioacct_job j = insert_job(st, "hpc", 1, 100), got;
	struct ioacct_store *r;

	assert_int_equal(ioacct_store_set_private(st, true), 0);
	assert_mode(f->path, "", 0600);
	assert_mode(f->path, "-wal", 0600);
	assert_mode(f->path, "-shm", 0600);
	/* The owner still reads it. */
	r = open_store(f, f->path, IOACCT_STORE_RDONLY);
	assert_int_equal(ioacct_store_job_find(r, "hpc", 1, &got), 0);
	assert_int_equal(got.key, j.key);
	ioacct_store_close(r);
	assert_int_equal(ioacct_store_set_private(st, false), 0);
	assert_mode(f->path, "", 0644);
	assert_mode(f->path, "-wal", 0644);
	assert_mode(f->path, "-shm", 0644);
	ioacct_store_close(st);
}

static void test_jobdata_free_null(void **state)
{
	(void)state;
	ioacct_jobdata_free(NULL);
	ioacct_store_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_running_load_sums_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_find_newest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_running_eexist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_running_and_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_add, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_while_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdonly_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdonly_old_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ops_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_specs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_private, setup, teardown),
		cmocka_unit_test(test_jobdata_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
