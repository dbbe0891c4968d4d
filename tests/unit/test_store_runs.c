/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of a job id's runs in a node's store (issue 36): a job id
 * requeued once and then used again (Slurm's ids started again, iorun
 * --job-id) is three rows, three runs: by job id the newest, by place each
 * (oldest first, as ioacct -D lists them), by name (cluster, job id,
 * restart, run_start) exactly that one, never another that shares its id
 * and restart count; a selection without duplicates the newest alone. The
 * daemon's JOB replies (job_fetch.c) serve the same runs. Apart from
 * test_store.c, which is long enough.
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

#include "job_fetch.h"
#include "model.h"
#include "proto.h"
#include "store.h"

struct fixture {
	char dir[64];
	char path[128];
	char err[PATH_MAX + 256];
	struct ioacct_store *st;
	int64_t key[3];           /* job 77's runs, oldest first */
};

/* Run k of job 77: restart count, start, end, state. */
static const struct {
	uint32_t restart;
	int64_t start, end;
	const char *state;
} runs[] = {
	{ 0, 1000, 2000, "REQUEUED" },
	{ 1, 3000, 4000, "COMPLETED" },
	{ 0, 9000, 9500, "FAILED" },     /* the id used again: count 0 again */
};

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_store_runs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/ioacct.db", f->dir);
	f->st = ioacct_store_open(f->path, IOACCT_STORE_RDWR, f->err, sizeof(f->err));
	if (!f->st) {
		print_error("open %s: %s\n", f->path, f->err);
		nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(f);
		return -1;
	}
	for (size_t i = 0; i < 3; i++) {
		struct ioacct_job j = { .job_id = 77, .restart = runs[i].restart,
					.start_ns = runs[i].start, .uid = 1000,
					.bin_width_ns = 5000000000ULL };

		ioacct_strlcpy(j.cluster, "hpc", sizeof(j.cluster));
		ioacct_strlcpy(j.node, "n1", sizeof(j.node));
		ioacct_strlcpy(j.source, "slurm", sizeof(j.source));
		ioacct_strlcpy(j.state, "RUNNING", sizeof(j.state));
		ioacct_strlcpy(j.probe_mode, "tracepoint", sizeof(j.probe_mode));
		if (ioacct_store_job_insert(f->st, &j) ||
		    ioacct_store_job_finish(f->st, j.key, runs[i].end, runs[i].state, 0))
			return -1;
		f->key[i] = j.key;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc;

	ioacct_store_close(f->st);
	rc = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return rc;
}

/* By job id the newest; by place each, oldest first; no fourth. */
static void test_find(void **state)
{
	struct fixture *f = *state;
	struct ioacct_job got;

	assert_int_equal(ioacct_store_job_find(f->st, "hpc", 77, &got), 0);
	assert_int_equal(got.key, f->key[2]);
	assert_string_equal(got.state, "FAILED");
	assert_int_equal(got.run_start, runs[2].start);
	for (int64_t n = 0; n < 3; n++) {
		assert_int_equal(ioacct_store_job_find_run(f->st, n % 2 ? NULL : "hpc", 77, n, &got), 0);
		assert_int_equal(got.key, f->key[n]);
		assert_int_equal(got.restart, runs[n].restart);
	}
	assert_int_equal(ioacct_store_job_find_run(f->st, "hpc", 77, 3, &got), -ENOENT);
	assert_non_null(strstr(ioacct_store_errmsg(f->st), "no job 77 run 3 on cluster hpc"));
	assert_int_equal(ioacct_store_job_find_run(f->st, "gpu", 77, -1, &got), -ENOENT);
}

/* By name exactly: restart 0 names two runs, its start tells which. */
static void test_find_exact(void **state)
{
	struct fixture *f = *state;
	struct ioacct_job got;

	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(ioacct_store_job_find_exact(f->st, "hpc", 77, runs[i].restart,
							     runs[i].start, &got), 0);
		assert_int_equal(got.key, f->key[i]);
	}
	assert_int_equal(ioacct_store_job_find_exact(f->st, "hpc", 77, 1, runs[0].start, &got),
			 -ENOENT);
	assert_int_equal(ioacct_store_job_find_exact(f->st, "hpc", 77, 0, 5000, &got), -ENOENT);
	assert_non_null(strstr(ioacct_store_errmsg(f->st), "no run of job 77 on cluster hpc"));
	assert_int_equal(ioacct_store_job_find_exact(f->st, "gpu", 77, 0, runs[0].start, &got),
			 -ENOENT);
}

struct picked {
	int64_t keys[8];
	size_t n;
};

static int pick(struct ioacct_store *st, const struct ioacct_job *job, void *arg)
{
	struct picked *p = arg;

	(void)st;

	if (p->n < 8)
		p->keys[p->n] = job->key;
	p->n++;
	return 0;
}

/* As sacct: the newest run of a job id; with duplicates (-D) every run, by key. */
static void test_select(void **state)
{
	struct fixture *f = *state;
	const uint64_t id = 77;
	struct ioacct_store_filter flt = { .job_ids = &id, .njob_ids = 1 };
	struct picked p = { .n = 0 };

	assert_int_equal(ioacct_store_jobs_select(f->st, &flt, pick, &p), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.keys[0], f->key[2]);
	flt.duplicates = true;
	p.n = 0;
	assert_int_equal(ioacct_store_jobs_select(f->st, &flt, pick, &p), 0);
	assert_int_equal(p.n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(p.keys[i], f->key[i]);
	/* A window that holds the requeued runs alone: without -D, none of them. */
	flt.duplicates = false;
	flt.start_ns = 1;
	flt.end_ns = 5000;
	p.n = 0;
	assert_int_equal(ioacct_store_jobs_select(f->st, &flt, pick, &p), 0);
	assert_int_equal(p.n, 0);
}

/* The daemon's JOB reply: the run asked for, by place or by name; the key of a page's job. */
static void test_serve(void **state)
{
	struct fixture *f = *state;
	struct ioacct_req_job req = { .job_id = 77 };
	struct ioacct_reply rep;

	for (uint32_t run = 0; run <= 4; run++) {
		memset(&rep, 0, sizeof(rep));
		req.run = run;
		ioacct_job_serve_page(f->st, &req, 0, false, &rep);
		if (run == 4) {
			assert_int_equal(rep.status, -ENOENT);
			assert_non_null(strstr(rep.error, "no run 3 of job 77 in ioacctd's store"));
		} else {
			assert_int_equal(rep.status, 0);
			assert_int_equal(rep.njobs, 1);
			assert_int_equal(rep.jobs[0].key, f->key[run ? run - 1 : 2]);
			assert_int_equal(rep.jobs[0].run_start, runs[run ? run - 1 : 2].start);
		}
		ioacct_reply_free(&rep);
	}
	/* A later page names its run: the same one, whatever the newest is now. */
	req.run = 0;
	req.restart = 0;
	req.run_start = runs[0].start;
	ioacct_strlcpy(req.cluster, "hpc", sizeof(req.cluster));
	memset(&rep, 0, sizeof(rep));
	ioacct_job_serve_page(f->st, &req, 0, false, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.jobs[0].key, f->key[0]);
	assert_string_equal(rep.jobs[0].state, "REQUEUED");
	ioacct_reply_free(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_serve, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
