/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of retention (issue 28): slurmdbd's durations and their config
 * keys (lib/core/duration.c, config.c); the store's purge and downsample
 * (lib/store/store_retain.c) on a file with jobs of different ages, exact
 * totals before and after, running and unexported jobs untouched, a purged
 * job in no table and no query; a purge killed with SIGKILL in the middle
 * of a batch (a child process) leaving every job whole or gone; schema 9
 * migrated from 8 with a job in it.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "config.h"
#include "duration.h"
#include "model.h"
#include "report.h"
#include "retain.h"
#include "store.h"
#include "store_internal.h"

#define NOW_NS 1800000000000000000LL
#define DAY_NS (86400LL * 1000000000LL)
#define W5 5000000000ULL
#define NBINS 24

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
	snprintf(f->dir, sizeof(f->dir), "%s/test_retain.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	chmod(f->dir, 0755);
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

/* ---- durations ---- */

static void test_duration(void **state)
{
	static const struct {
		const char *s;
		enum ioacct_duration_unit bare;
		uint64_t want;
	} ok[] = {
		{ "12months", IOACCT_DUR_MONTHS, 12 * IOACCT_SECONDS_PER_MONTH },
		{ "1month", IOACCT_DUR_MONTHS, IOACCT_SECONDS_PER_MONTH },
		{ "12", IOACCT_DUR_MONTHS, 12 * IOACCT_SECONDS_PER_MONTH },
		{ "12", IOACCT_DUR_SECONDS, 12 },
		{ "30days", IOACCT_DUR_MONTHS, 30 * 86400 },
		{ "1DAY", IOACCT_DUR_MONTHS, 86400 },
		{ "48hours", IOACCT_DUR_MONTHS, 48 * 3600 },
		{ "1hour", IOACCT_DUR_MONTHS, 3600 },
		{ "90minutes", IOACCT_DUR_MONTHS, 5400 },
		{ "5min", IOACCT_DUR_SECONDS, 300 },
		{ "20s", IOACCT_DUR_MONTHS, 20 },
		{ "60seconds", IOACCT_DUR_MONTHS, 60 },
	};
	static const char *const bad[] = { "", "abc", "0", "0days", "5x", "-1", "1.5days",
					   " 5days", "5 days", "99999999999999999999999",
					   "12001months" };
	char err[512], buf[32];
	uint64_t s;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		s = 0;
		assert_int_equal(ioacct_duration_parse(ok[i].s, ok[i].bare, &s, err, sizeof(err)), 0);
		assert_int_equal(s, ok[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(ioacct_duration_parse(bad[i], IOACCT_DUR_MONTHS, &s, err, sizeof(err)),
				 -EINVAL);
		/* One line naming the value and the forms accepted. */
		assert_non_null(strstr(err, "12months, 30days"));
		assert_null(strchr(err, '\n'));
	}
	assert_string_equal(ioacct_duration_format(30 * 86400, buf, sizeof(buf)), "30days");
	assert_string_equal(ioacct_duration_format(20, buf, sizeof(buf)), "20s");
	assert_string_equal(ioacct_duration_format(12 * IOACCT_SECONDS_PER_MONTH, buf, sizeof(buf)),
			    "12months");
	assert_string_equal(ioacct_duration_format(5400, buf, sizeof(buf)), "90minutes");
}

static void test_config_keys(void **state)
{
	struct ioacct_config cfg;
	char err[1024];

	(void)state;
	ioacct_config_defaults(&cfg);
	/* Off unless configured: never purge by default. */
	assert_int_equal(cfg.purge_after_s, 0);
	assert_int_equal(cfg.downsample_after_s, 0);
	assert_int_equal(cfg.downsample_width_s, 60);
	assert_int_equal(cfg.retention_interval_s, 3600);
	assert_int_equal(ioacct_config_set(&cfg, "purge_after", "12months", err, sizeof(err)), 0);
	assert_int_equal(cfg.purge_after_s, 12 * IOACCT_SECONDS_PER_MONTH);
	assert_int_equal(ioacct_config_set(&cfg, "purge_after", "20s", err, sizeof(err)), 0);
	assert_int_equal(cfg.purge_after_s, 20);
	assert_int_equal(ioacct_config_set(&cfg, "downsample_after", "30days", err, sizeof(err)), 0);
	assert_int_equal(cfg.downsample_after_s, 30 * 86400);
	assert_int_equal(ioacct_config_set(&cfg, "downsample_width", "5minutes", err, sizeof(err)), 0);
	assert_int_equal(cfg.downsample_width_s, 300);
	assert_int_equal(ioacct_config_set(&cfg, "downsample_width", "90", err, sizeof(err)), 0);
	assert_int_equal(cfg.downsample_width_s, 90);
	assert_int_equal(ioacct_config_set(&cfg, "retention_interval", "1s", err, sizeof(err)), 0);
	assert_int_equal(cfg.retention_interval_s, 1);
	/* Bad values: one line naming the key, the value kept as it was. */
	assert_int_equal(ioacct_config_set(&cfg, "purge_after", "soon", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "purge_after: \"soon\""));
	assert_int_equal(cfg.purge_after_s, 20);
	assert_int_equal(ioacct_config_set(&cfg, "downsample_width", "2days", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(cfg.downsample_width_s, 90);
}

/* ---- a store with jobs of different ages ---- */

/*
 * Its RPC rows (issue 40): step 0's WRITEs on mount 20 in every bin, bin b
 * b + 1 calls of 1000 bytes, and 124 WRITEs no job sent during it.
 */
static void make_rpc(struct ioacct_store *st, int64_t key)
{
	struct ioacct_rpc r;

	memset(&r, 0, sizeof(r));
	r.mnt_id = 20;
	r.prog = 100003;
	r.vers = 4;
	r.proc = 38;
	ioacct_strlcpy(r.name, "WRITE", sizeof(r.name));
	for (uint32_t b = 0; b < NBINS; b++) {
		r.bin = b;
		r.calls = b + 1;
		r.bytes_sent = 1000ULL * (b + 1);
		r.rtt_ns = b == 0 ? UINT64_MAX - 2 : 10;
		assert_int_equal(ioacct_store_rpc_put(st, key, &r), 0);
	}
	r.bin = 0;
	r.flags = IOACCT_RPC_UNATTRIBUTED;
	r.calls = 124;
	r.bytes_sent = 124000;
	r.rtt_ns = 0;
	assert_int_equal(ioacct_store_rpc_put(st, key, &r), 0);
}

/* A finished (end_ns != 0) or running job with two steps, two mounts, series, a file, RPCs. */
static int64_t make_job(struct ioacct_store *st, uint64_t job_id, uint32_t uid, int64_t end_ns,
			uint64_t width)
{
	struct ioacct_job j;
	struct ioacct_step step;
	struct ioacct_mount m;
	struct ioacct_sample s;
	struct ioacct_file fl;

	memset(&j, 0, sizeof(j));
	ioacct_strlcpy(j.cluster, "hpc", sizeof(j.cluster));
	j.job_id = job_id;
	ioacct_strlcpy(j.node, "n1", sizeof(j.node));
	ioacct_strlcpy(j.source, "slurm", sizeof(j.source));
	j.uid = uid;
	snprintf(j.user, sizeof(j.user), "u%u", uid);
	ioacct_strlcpy(j.state, "RUNNING", sizeof(j.state));
	ioacct_strlcpy(j.probe_mode, "tracepoint", sizeof(j.probe_mode));
	j.start_ns = (end_ns ? end_ns : NOW_NS) - (int64_t)(NBINS * width);
	j.bin_width_ns = width;
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	for (uint32_t sid = 0; sid < 2; sid++) {
		memset(&step, 0, sizeof(step));
		step.step_id = sid;
		step.start_ns = j.start_ns;
		ioacct_strlcpy(step.state, "RUNNING", sizeof(step.state));
		assert_int_equal(ioacct_store_step_put(st, j.key, &step), 0);
	}
	for (uint32_t mid = 20; mid < 22; mid++) {
		memset(&m, 0, sizeof(m));
		m.mnt_id = mid;
		snprintf(m.path, sizeof(m.path), "/m%u", mid);
		ioacct_strlcpy(m.fstype, "ext4", sizeof(m.fstype));
		assert_int_equal(ioacct_store_mount_put(st, j.key, &m), 0);
	}
	/* Every bin of every (step, mount, op) its own numbers: sums show any bin lost or doubled. */
	for (uint32_t sid = 0; sid < 2; sid++)
		for (uint32_t mid = 20; mid < 22; mid++)
			for (uint32_t op = 0; op < 2; op++)
				for (uint32_t b = 0; b < NBINS; b++) {
					memset(&s, 0, sizeof(s));
					s.step_id = sid;
					s.mnt_id = mid;
					s.op = op;
					s.bin = b;
					s.c.bytes = 4096ULL * (b + 1) + sid * 7 + mid + op;
					s.c.calls = b + 1;
					s.c.ns = 1000ULL * b + job_id;
					s.c.errors = b % 3;
					s.c.errclass[IOACCT_ERR_IO] = b % 3;
					s.c.size_hist[b % IOACCT_NR_SIZE_BINS] = b + 1;
					/* Near 2^64: the sums must wrap as the counters do, exactly. */
					if (b == 0 && op == 1)
						s.c.ns = UINT64_MAX - 5;
					assert_int_equal(ioacct_store_series_put(st, j.key, &s), 0);
				}
	memset(&fl, 0, sizeof(fl));
	fl.step_id = 0;
	fl.rank = -1;
	fl.mnt_id = 20;
	fl.dev = 1;
	fl.ino = job_id;
	ioacct_strlcpy(fl.path, "/m20/f", sizeof(fl.path));
	fl.bytes_written = 4096;
	assert_int_equal(ioacct_store_file_put(st, j.key, &fl), 0);
	make_rpc(st, j.key);
	if (end_ns)
		assert_int_equal(ioacct_store_job_finish(st, j.key, end_ns, "COMPLETED", 0), 0);
	return j.key;
}

/* The job's totals, as ioacct and the reports read them. */
static struct ioacct_jobdata *load(struct ioacct_store *st, int64_t key)
{
	struct ioacct_jobdata *jd = NULL;

	assert_int_equal(ioacct_store_job_load(st, key, &jd), 0);
	return jd;
}

static void assert_same_totals(const struct ioacct_jobdata *a, const struct ioacct_jobdata *b)
{
	assert_int_equal(a->ntotals, b->ntotals);
	assert_true(a->ntotals > 0);
	assert_memory_equal(a->totals, b->totals, a->ntotals * sizeof(*a->totals));
}

/* The series summed per (step, mount, op): what totals are made of. */
static void assert_series_sum_to_totals(const struct ioacct_jobdata *jd)
{
	for (size_t t = 0; t < jd->ntotals; t++) {
		struct ioacct_counters sum;

		memset(&sum, 0, sizeof(sum));
		for (size_t i = 0; i < jd->nseries; i++) {
			const struct ioacct_sample *s = &jd->series[i];

			if (s->step_id == jd->totals[t].step_id && s->mnt_id == jd->totals[t].mnt_id &&
			    s->op == jd->totals[t].op)
				ioacct_counters_add(&sum, &s->c);
		}
		assert_memory_equal(&sum, &jd->totals[t].c, sizeof(sum));
	}
}

static int64_t raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int64_t v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static const char *const job_tables[] = {
	"steps", "mounts", "series", "totals", "watches", "export_queue", "report_specs", "files", "mpiio_files",
	"hdf5_records", "rpc",
};

/* The rows of job `key` in every table keyed by job, and (all) in the schema's list of them. */
static int64_t rows_of(const char *path, int64_t key)
{
	char sql[256];
	int64_t n = raw_int(path, "SELECT count(*) FROM sqlite_master m, pragma_table_info(m.name) p"
				  " WHERE m.type = 'table' AND p.name = 'job_key'");
	int64_t rows = 0;

	/* A new table keyed by job must be in the list above, and so in this test. */
	assert_int_equal(n, sizeof(job_tables) / sizeof(job_tables[0]));
	for (size_t i = 0; i < sizeof(job_tables) / sizeof(job_tables[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE job_key = %lld", job_tables[i],
			 (long long)key);
		rows += raw_int(path, sql);
	}
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM jobs WHERE key = %lld", (long long)key);
	return rows + raw_int(path, sql);
}

/* Rows of any table keyed by job whose job is not there. */
static int64_t orphans(const char *path)
{
	char sql[256];
	int64_t n = 0;

	for (size_t i = 0; i < sizeof(job_tables) / sizeof(job_tables[0]); i++) {
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM %s WHERE job_key NOT IN (SELECT key FROM jobs)",
			 job_tables[i]);
		n += raw_int(path, sql);
	}
	return n;
}

static int count_selected(struct ioacct_store *st, const struct ioacct_job *job, void *arg)
{
	(void)st;
	(void)job;
	(*(int *)arg)++;
	return 0;
}

static void unqueue(struct ioacct_store *st, int64_t key)
{
	assert_int_equal(ioacct_store_export_done(st, key, -1), 0);
}

static void test_purge(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_rw(f);
	struct ioacct_retain_result res;
	struct ioacct_store_filter all = { 0 };
	struct ioacct_jobdata *before[4], *after;
	struct ioacct_report_spec spec;
	struct ioacct_job j;
	int64_t cutoff = NOW_NS - 30 * DAY_NS, old1, old2, queued, running, recent, specd;
	int n = 0;

	old1 = make_job(st, 101, 1000, NOW_NS - 40 * DAY_NS, W5);
	old2 = make_job(st, 102, 1001, NOW_NS - 31 * DAY_NS, W5);
	queued = make_job(st, 103, 1000, NOW_NS - 50 * DAY_NS, W5);
	running = make_job(st, 104, 1000, 0, W5);
	recent = make_job(st, 105, 1000, NOW_NS - 29 * DAY_NS, W5);
	specd = make_job(st, 106, 1000, NOW_NS - 60 * DAY_NS, W5);
	/* Exported: all but 103. Job 106 still waits for its merged report. */
	unqueue(st, old1);
	unqueue(st, old2);
	unqueue(st, recent);
	unqueue(st, specd);
	memset(&spec, 0, sizeof(spec));
	ioacct_strlcpy(spec.path, "/home/u/r", sizeof(spec.path));
	ioacct_strlcpy(spec.nodes, "n[1-2]", sizeof(spec.nodes));
	assert_int_equal(ioacct_store_job_finish_report(st, specd, NOW_NS - 60 * DAY_NS, "COMPLETED",
							0, &spec), 0);
	unqueue(st, specd);
	before[0] = load(st, queued);
	before[1] = load(st, running);
	before[2] = load(st, recent);
	before[3] = load(st, specd);
	assert_true(rows_of(f->path, old1) > NBINS);

	/* A dry run: what would go, per user; nothing changes. */
	assert_int_equal(ioacct_store_purge(st, cutoff, true, true, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 2);
	assert_int_equal(res.rows, 2 * 2 * 2 * 2 * NBINS);
	assert_true(res.bytes > 0);
	assert_int_equal(res.kept_unexported, 2);
	assert_int_equal(res.nusers, 2);
	assert_int_equal(res.users[0].uid, 1000);
	assert_string_equal(res.users[0].user, "u1000");
	assert_int_equal(res.users[0].jobs, 1);
	assert_int_equal(res.users[1].uid, 1001);
	assert_int_equal(res.users[1].jobs, 1);
	ioacct_retain_result_free(&res);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 6);

	assert_int_equal(ioacct_store_purge(st, cutoff, true, false, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 2);
	assert_int_equal(res.rows, 2 * 2 * 2 * 2 * NBINS);
	assert_int_equal(res.batches, 1);
	assert_int_equal(res.kept_unexported, 2);
	/* Gone from every table and every query. */
	assert_int_equal(rows_of(f->path, old1), 0);
	assert_int_equal(rows_of(f->path, old2), 0);
	assert_int_equal(orphans(f->path), 0);
	assert_int_equal(ioacct_store_job_get(st, old1, &j), -ENOENT);
	assert_int_equal(ioacct_store_job_find(st, "hpc", 102, &j), -ENOENT);
	assert_int_equal(ioacct_store_job_load(st, old2, &after), -ENOENT);
	assert_int_equal(ioacct_store_jobs_select(st, &all, count_selected, &n), 0);
	assert_int_equal(n, 4);
	/* The others whole, to the counter. */
	for (int i = 0; i < 4; i++) {
		int64_t key = (int64_t[]){ queued, running, recent, specd }[i];

		after = load(st, key);
		assert_same_totals(before[i], after);
		assert_int_equal(after->nseries, before[i]->nseries);
		assert_int_equal(after->nfiles, 1);
		ioacct_jobdata_free(after);
		ioacct_jobdata_free(before[i]);
	}
	assert_int_equal(ioacct_store_report_spec_get(st, specd, &spec), 0);
	/* Without a cluster store the outbox holds nothing back: it would wait forever. */
	assert_int_equal(ioacct_store_purge(st, cutoff, false, true, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 1);
	assert_int_equal(res.kept_unexported, 1); /* the merged report's */
	ioacct_retain_result_free(&res);
	/* Exported at last: now it goes too. */
	unqueue(st, queued);
	assert_int_equal(ioacct_store_purge(st, cutoff, true, false, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 1);
	assert_int_equal(rows_of(f->path, queued), 0);
	ioacct_store_close(st);
}

static int stop_after_two(const struct ioacct_retain_result *so_far, void *arg)
{
	(*(int *)arg)++;
	return so_far->batches >= 2;
}

/* 200 jobs: 4 batches of 64; a progress callback that says stop stops after a whole batch. */
static void test_purge_batches(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_rw(f);
	struct ioacct_retain_result res;
	int calls = 0;

	assert_int_equal(ioacct_store_begin(st), 0);
	for (uint64_t i = 0; i < 200; i++)
		make_job(st, 1000 + i, 1000 + (uint32_t)(i % 3), NOW_NS - 40 * DAY_NS, W5);
	assert_int_equal(ioacct_store_commit(st), 0);
	assert_int_equal(raw_int(f->path, "DELETE FROM export_queue"), -1);
	/* Inside the caller's transaction it refuses: its batches are its own. */
	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_purge(st, NOW_NS, true, false, NULL, NULL, &res), -EINVAL);
	assert_int_equal(ioacct_store_rollback(st), 0);
	assert_int_equal(ioacct_store_purge(st, NOW_NS, true, false, stop_after_two, &calls, &res), 0);
	assert_int_equal(res.batches, 2);
	assert_int_equal(res.jobs, 2 * IOACCT_PURGE_BATCH);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 200 - 2 * IOACCT_PURGE_BATCH);
	assert_int_equal(ioacct_store_purge(st, NOW_NS, true, false, stop_after_two, &calls, &res), 0);
	assert_int_equal(res.jobs, 200 - 2 * IOACCT_PURGE_BATCH);
	assert_int_equal(res.batches, 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM series"), 0);
	assert_int_equal(orphans(f->path), 0);
	ioacct_store_close(st);
}

/* kill -9 in the middle of a batch: every job whole or gone, then the rest purged. */
static void test_purge_killed(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_rw(f);
	struct ioacct_retain_result res;
	int64_t whole = -1, n, per_job, keys = 300;
	int status;
	pid_t pid;

	assert_int_equal(ioacct_store_begin(st), 0);
	for (int64_t i = 0; i < keys; i++)
		make_job(st, 5000 + (uint64_t)i, 1000, NOW_NS - 40 * DAY_NS, W5);
	assert_int_equal(ioacct_store_commit(st), 0);
	assert_int_equal(raw_int(f->path, "DELETE FROM export_queue"), -1);
	per_job = rows_of(f->path, 1);
	assert_true(per_job > 2 * 2 * 2 * NBINS);
	ioacct_store_close(st);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[1024];
		struct ioacct_store *c = ioacct_store_open(f->path, IOACCT_STORE_RDWR, err, sizeof(err));

		setenv("IOACCT_RETAIN_KILL_AT", "3", 1);
		if (c)
			ioacct_store_purge(c, NOW_NS, true, false, NULL, NULL, &res);
		_exit(3); /* not reached: killed in batch 3 */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	/* Two batches committed, the third not at all. */
	st = open_rw(f);
	assert_int_equal(ioacct_store_quick_check(st), 0);
	n = raw_int(f->path, "SELECT count(*) FROM jobs");
	assert_int_equal(n, keys - 2 * IOACCT_PURGE_BATCH);
	assert_int_equal(orphans(f->path), 0);
	for (int64_t key = 1; key <= keys; key++) {
		int64_t r = rows_of(f->path, key);

		assert_true(r == 0 || r == per_job);
		if (r == per_job && whole < 0)
			whole = key;
	}
	assert_int_equal(whole, 2 * IOACCT_PURGE_BATCH + 1);
	assert_int_equal(ioacct_store_purge(st, NOW_NS, true, false, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, keys - 2 * IOACCT_PURGE_BATCH);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 0);
	assert_int_equal(orphans(f->path), 0);
	ioacct_store_close(st);
}

/* Re-binned to 60 s: fewer rows, every total exact, the report right. */
static void test_downsample(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st = open_rw(f);
	struct ioacct_retain_result res;
	struct ioacct_jobdata *b_old, *b_odd, *b_new, *b_run, *a;
	struct ioacct_report *r;
	int64_t cutoff = NOW_NS - 30 * DAY_NS, old, odd, fresh, running, queued;

	old = make_job(st, 201, 1000, NOW_NS - 40 * DAY_NS, W5);
	odd = make_job(st, 202, 1000, NOW_NS - 40 * DAY_NS, 7000000000ULL);
	fresh = make_job(st, 203, 1000, NOW_NS - 2 * DAY_NS, W5);
	running = make_job(st, 204, 1000, 0, W5);
	queued = make_job(st, 205, 1000, NOW_NS - 40 * DAY_NS, W5);
	unqueue(st, old);
	unqueue(st, odd);
	unqueue(st, fresh);
	b_old = load(st, old);
	b_odd = load(st, odd);
	b_new = load(st, fresh);
	b_run = load(st, running);

	assert_int_equal(ioacct_store_downsample(st, cutoff, 60000000000ULL, true, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 2);
	assert_int_equal(res.kept_unexported, 1);
	/* 24 bins of 5 s in 2 of 60 s; of 7 s (a multiple: 63 s, 9 each) in 3. */
	assert_int_equal(res.rows, 8 * (NBINS - 2) + 8 * (NBINS - 3));

	a = load(st, old);
	assert_int_equal(a->job.bin_width_ns, 60000000000ULL);
	assert_int_equal(a->job.orig_bin_width_ns, W5);
	assert_int_equal(a->nseries, 8 * 2);
	assert_int_equal(a->series[0].bin, 0);
	assert_int_equal(a->series[1].bin, 1);
	/* Bins 0..11 of 5 s in bin 0: bytes 4096 * (1 + ... + 12) + 12 * (step*7 + mount + op). */
	assert_int_equal(a->series[0].c.bytes, 4096ULL * 78 + 12 * 20);
	assert_same_totals(b_old, a);
	assert_series_sum_to_totals(a);
	/*
	 * Its RPC rows on the same bins: bins 0..11 of 5 s in bin 0 (78 calls,
	 * rtt (2^64 - 3) + 11 x 10 wrapped as the counters), 12..23 in bin 1
	 * (222 calls); the unattributed row stays in bin 0.
	 */
	assert_int_equal(a->nrpc, 3);
	assert_int_equal(a->rpc[0].bin, 0);
	assert_int_equal(a->rpc[0].flags, 0);
	assert_int_equal(a->rpc[0].calls, 78);
	assert_int_equal(a->rpc[0].bytes_sent, 78000);
	assert_int_equal(a->rpc[0].rtt_ns, 107);
	assert_string_equal(a->rpc[0].name, "WRITE");
	assert_int_equal(a->rpc[1].bin, 1);
	assert_int_equal(a->rpc[1].calls, 222);
	assert_int_equal(a->rpc[1].bytes_sent, 222000);
	assert_int_equal(a->rpc[1].rtt_ns, 120);
	assert_int_equal(a->rpc[2].bin, 0);
	assert_int_equal(a->rpc[2].flags, IOACCT_RPC_UNATTRIBUTED);
	assert_int_equal(a->rpc[2].calls, 124);
	assert_int_equal(a->rpc[2].proc, 38);
	assert_int_equal(a->rpc[2].prog, 100003);
	assert_int_equal(a->rpc[2].vers, 4);
	/* A report of it renders, on the new bins, to the job's end. */
	r = ioacct_report_create(a, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->bin_width_ns, 60000000000ULL);
	assert_int_equal(r->nbins, 2);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(a);

	a = load(st, odd);
	assert_int_equal(a->job.bin_width_ns, 63000000000ULL);
	assert_int_equal(a->job.orig_bin_width_ns, 7000000000ULL);
	assert_int_equal(a->nseries, 8 * 3);
	assert_same_totals(b_odd, a);
	assert_series_sum_to_totals(a);
	ioacct_jobdata_free(a);

	/* Untouched: too recent, running, not yet exported. */
	for (int i = 0; i < 3; i++) {
		int64_t key = (int64_t[]){ fresh, running, queued }[i];

		a = load(st, key);
		assert_int_equal(a->job.bin_width_ns, W5);
		assert_int_equal(a->job.orig_bin_width_ns, 0);
		assert_int_equal(a->nseries, 8 * NBINS);
		assert_int_equal(a->nrpc, NBINS + 1);
		ioacct_jobdata_free(a);
	}
	a = load(st, fresh);
	assert_memory_equal(a->series, b_new->series, a->nseries * sizeof(*a->series));
	ioacct_jobdata_free(a);
	a = load(st, running);
	assert_memory_equal(a->series, b_run->series, a->nseries * sizeof(*a->series));
	ioacct_jobdata_free(a);

	/* Again: nothing left that coarse a width would change. */
	assert_int_equal(ioacct_store_downsample(st, cutoff, 60000000000ULL, true, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 0);
	/* Coarser still: the first width is kept. */
	assert_int_equal(ioacct_store_downsample(st, cutoff, 120000000000ULL, true, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 2);
	a = load(st, old);
	assert_int_equal(a->job.bin_width_ns, 120000000000ULL);
	assert_int_equal(a->job.orig_bin_width_ns, W5);
	assert_int_equal(a->nseries, 8);
	assert_same_totals(b_old, a);
	assert_series_sum_to_totals(a);
	ioacct_jobdata_free(a);
	ioacct_jobdata_free(b_old);
	ioacct_jobdata_free(b_odd);
	ioacct_jobdata_free(b_new);
	ioacct_jobdata_free(b_run);
	ioacct_store_close(st);
}

/* Schema 8 with a finished job, migrated to 9: the job reads back, never downsampled. */
static void test_migrate_from_8(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store *st;
	struct ioacct_retain_result res;
	struct ioacct_jobdata *jd;
	char sql[2048];
	sqlite3 *db = NULL;

	assert_int_equal(ioacct_store_create_at_version(f->path, 8, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name, workdir,"
		 " start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns, dropped_events,"
		 " dropped_bytes, restart) VALUES (1, 'hpc', 42, 'n1', 'slurm', 1000, 1000, 'u',"
		 " 'j', '/w', %lld, %lld, 'COMPLETED', 0, 'tracepoint', 5000000000, 0, 0, 0);"
		 "INSERT INTO series (job_key, step_id, mnt_id, op, bin, bytes, calls, errors, ns,"
		 " s0, s1, s2, s3, s4, s5, s6, s7, s8, s9) VALUES"
		 " (1, 0, 20, 1, 0, 100, 1, 0, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0),"
		 " (1, 0, 20, 1, 13, 900, 2, 0, 6, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0);"
		 "INSERT INTO totals SELECT job_key, step_id, mnt_id, op, sum(bytes), sum(calls),"
		 " sum(errors), sum(ns), sum(s0), sum(s1), sum(s2), sum(s3), sum(s4), sum(s5),"
		 " sum(s6), sum(s7), sum(s8), sum(s9), 0, 0, 0, 0, 0 FROM series"
		 " GROUP BY job_key, step_id, mnt_id, op;",
		 (long long)(NOW_NS - 90 * DAY_NS), (long long)(NOW_NS - 89 * DAY_NS));
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("schema 8 rows: %s", sqlite3_errmsg(db));
	sqlite3_close(db);

	st = open_rw(f);
	assert_int_equal(ioacct_store_schema_version(st), IOACCT_STORE_SCHEMA_VERSION);
	jd = load(st, 1);
	assert_int_equal(jd->job.job_id, 42);
	assert_int_equal(jd->job.orig_bin_width_ns, 0);
	assert_int_equal(jd->nseries, 2);
	assert_int_equal(jd->totals[0].c.bytes, 1000);
	ioacct_jobdata_free(jd);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs_end'"),
			 1);
	/* As if exported: then it is downsampled. */
	assert_int_equal(raw_int(f->path, "DELETE FROM export_queue"), -1);
	assert_int_equal(ioacct_store_downsample(st, NOW_NS, 60000000000ULL, true, NULL, NULL, &res), 0);
	assert_int_equal(res.jobs, 1);
	jd = load(st, 1);
	/* Bins 0 and 13 of 5 s: 0 and 1 of 60 s. */
	assert_int_equal(jd->nseries, 2);
	assert_int_equal(jd->series[1].bin, 1);
	assert_int_equal(jd->totals[0].c.bytes, 1000);
	assert_int_equal(jd->job.orig_bin_width_ns, 5000000000ULL);
	ioacct_jobdata_free(jd);
	ioacct_store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test_setup_teardown(test_purge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_downsample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_8, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
