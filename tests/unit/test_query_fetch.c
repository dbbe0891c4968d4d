/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of ioacct's sources of jobs: the store read directly, the
 * daemon's page server (privacy, paging, size budget) and the client going
 * through a real Unix socket to a server thread that answers as ioacctd
 * does. Both sources must give the same jobs, rows and peaks.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "job_fetch.h"
#include "proto.h"
#include "query.h"
#include "query_fetch.h"
#include "store.h"

#define NS 1000000000LL
#define T0 (1700000000LL * NS)
#define ALICE 1000
#define BOB 1001

struct fixture {
	char dir[64];
	char db[128];
	char sock[128];
	struct ioacct_store *st;
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
	char err[1024];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_qf.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/ioacct.db", f->dir);
	snprintf(f->sock, sizeof(f->sock), "%s/sock", f->dir);
	f->st = ioacct_store_open(f->db, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!f->st) {
		print_error("%s\n", err);
		return -1;
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

/*
 * Job i: alice's when i is even, bob's when odd; steps batch and 0; writes
 * and reads on two mounts over three bins; finished unless `running`.
 */
static int64_t add_job(struct ioacct_store *st, uint64_t job_id, bool running)
{
	struct ioacct_job j = { .job_id = job_id, .start_ns = T0 + (int64_t)job_id * NS };
	struct ioacct_mount m[2] = {
		{ .mnt_id = 21, .path = "/", .fstype = "ext4", .source = "/dev/sda1" },
		{ .mnt_id = 30, .path = "/scratch", .fstype = "lustre", .source = "mds:/s" },
	};
	uint32_t steps[2] = { IOACCT_STEP_BATCH, 0 };

	strcpy(j.cluster, job_id % 3 ? "hpc" : "iorun");
	strcpy(j.node, "n1");
	strcpy(j.source, "slurm");
	j.uid = job_id % 2 ? BOB : ALICE;
	strcpy(j.user, job_id % 2 ? "bob" : "alice");
	strcpy(j.probe_mode, "tracepoint");
	j.bin_width_ns = 5 * NS;
	if (job_id % 5 == 0) {
		j.has_array = true;
		j.array_job_id = 9000;
		j.array_task_id = (uint32_t)job_id;
	}
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	for (int s = 0; s < 2; s++) {
		struct ioacct_step step = { .step_id = steps[s], .start_ns = j.start_ns,
					    .state = "RUNNING" };

		assert_int_equal(ioacct_store_step_put(st, j.key, &step), 0);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(ioacct_store_mount_put(st, j.key, &m[i]), 0);
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t mi = 0; mi < 2; mi++)
			for (uint32_t op = IOACCT_OP_READ; op <= IOACCT_OP_OPEN; op++)
				for (uint32_t bin = 0; bin < 3; bin++) {
					struct ioacct_sample smp = { .step_id = steps[s],
								     .mnt_id = m[mi].mnt_id,
								     .op = op, .bin = bin };

					smp.c.calls = 1 + bin;
					smp.c.bytes = op == IOACCT_OP_OPEN ? 0 :
						      (job_id * 1000 + s * 100 + mi * 10 + bin) * 4096;
					smp.c.ns = 1000 * (bin + 1);
					smp.c.size_hist[3] = smp.c.calls;
					assert_int_equal(ioacct_store_series_put(st, j.key, &smp), 0);
				}
	if (!running)
		assert_int_equal(ioacct_store_job_finish(st, j.key, j.start_ns + 60 * NS, "COMPLETED",
						  0), 0);
	return j.key;
}

/* What a fetch gave: one record per job. */
struct got {
	struct {
		struct ioacct_jobdata *jd;
		struct ioacct_qpeak *peaks;
		size_t npeaks;
	} jobs[400];
	size_t n;
	int fail_at; /* return -ECANCELED at this job (1-based); 0 never */
};

static struct ioacct_jobdata *jd_copy(const struct ioacct_jobdata *jd)
{
	struct ioacct_jobdata *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->job = jd->job;
	c->nsteps = jd->nsteps;
	c->nmounts = jd->nmounts;
	c->ntotals = jd->ntotals;
	c->steps = calloc(jd->nsteps + 1, sizeof(*c->steps));
	c->mounts = calloc(jd->nmounts + 1, sizeof(*c->mounts));
	c->totals = calloc(jd->ntotals + 1, sizeof(*c->totals));
	assert_true(c->steps && c->mounts && c->totals);
	memcpy(c->steps, jd->steps, jd->nsteps * sizeof(*c->steps));
	memcpy(c->mounts, jd->mounts, jd->nmounts * sizeof(*c->mounts));
	memcpy(c->totals, jd->totals, jd->ntotals * sizeof(*c->totals));
	return c;
}

static int collect(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		   size_t npeaks, void *arg)
{
	struct got *g = arg;

	assert_true(g->n < 400);
	assert_null(jd->series);
	g->jobs[g->n].jd = jd_copy(jd);
	g->jobs[g->n].npeaks = npeaks;
	g->jobs[g->n].peaks = calloc(npeaks + 1, sizeof(*peaks));
	assert_non_null(g->jobs[g->n].peaks);
	if (npeaks)
		memcpy(g->jobs[g->n].peaks, peaks, npeaks * sizeof(*peaks));
	g->n++;
	if (g->fail_at && g->n == (size_t)g->fail_at)
		return -ECANCELED;
	return 0;
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++) {
		ioacct_jobdata_free(g->jobs[i].jd);
		free(g->jobs[i].peaks);
	}
	free(g);
}

static struct got *got_new(void)
{
	struct got *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	return g;
}

/* The same jobs, rows and peaks; the store's cgroup is not sent by the daemon. */
static void assert_same(const struct got *a, const struct got *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct ioacct_jobdata *x = a->jobs[i].jd, *y = b->jobs[i].jd;

		assert_memory_equal(&x->job, &y->job, sizeof(x->job));
		assert_int_equal(x->nsteps, y->nsteps);
		for (size_t k = 0; k < x->nsteps; k++) {
			assert_int_equal(x->steps[k].step_id, y->steps[k].step_id);
			assert_int_equal(x->steps[k].start_ns, y->steps[k].start_ns);
			assert_int_equal(x->steps[k].end_ns, y->steps[k].end_ns);
			assert_string_equal(x->steps[k].state, y->steps[k].state);
		}
		assert_int_equal(x->nmounts, y->nmounts);
		assert_memory_equal(x->mounts, y->mounts, x->nmounts * sizeof(*x->mounts));
		assert_int_equal(x->ntotals, y->ntotals);
		assert_memory_equal(x->totals, y->totals, x->ntotals * sizeof(*x->totals));
		assert_int_equal(a->jobs[i].npeaks, b->jobs[i].npeaks);
		assert_memory_equal(a->jobs[i].peaks, b->jobs[i].peaks,
				    a->jobs[i].npeaks * sizeof(*a->jobs[i].peaks));
	}
}

static void test_fetch_store(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store_filter flt = { 0 };
	struct ioacct_jobdata *full;
	struct ioacct_qpeak *want;
	struct got *g;
	uint64_t ids[300];
	int64_t keys[300];
	size_t nwant;
	char err[512] = "";

	for (uint64_t i = 0; i < 300; i++) {
		keys[i] = add_job(f->st, i + 1, i == 299);
		ids[i] = i + 1;
	}
	/* Every job, in key order, each with its peaks as computed from its series. */
	g = got_new();
	assert_int_equal(ioacct_query_fetch_store(f->st, &flt, true, collect, g, err, sizeof(err)), 0);
	assert_int_equal(g->n, 300);
	for (size_t i = 0; i < 300; i += 37) {
		assert_int_equal(g->jobs[i].jd->job.key, keys[i]);
		assert_int_equal(ioacct_store_job_load(f->st, keys[i], &full), 0);
		assert_int_equal(g->jobs[i].jd->ntotals, full->ntotals);
		assert_memory_equal(g->jobs[i].jd->totals, full->totals,
				    full->ntotals * sizeof(*full->totals));
		assert_int_equal(ioacct_query_peaks(full->series, full->nseries, &want, &nwant), 0);
		assert_int_equal(g->jobs[i].npeaks, nwant);
		assert_memory_equal(g->jobs[i].peaks, want, nwant * sizeof(*want));
		free(want);
		ioacct_jobdata_free(full);
	}
	/* The running job's totals are summed from its series. */
	assert_string_equal(g->jobs[299].jd->job.state, "RUNNING");
	assert_int_equal(g->jobs[299].jd->ntotals, 2 * 2 * 3);
	got_free(g);

	/* 300 job ids: more than one selection can take, all found. */
	flt.job_ids = ids;
	flt.njob_ids = 300;
	g = got_new();
	assert_int_equal(ioacct_query_fetch_store(f->st, &flt, false, collect, g, err, sizeof(err)),
			 0);
	assert_int_equal(g->n, 300);
	assert_int_equal(g->jobs[299].jd->job.job_id, 300);
	assert_int_equal(g->jobs[0].npeaks, 0);
	got_free(g);

	/* A callback's error comes back as it was, the message untouched. */
	g = got_new();
	g->fail_at = 2;
	strcpy(err, "untouched");
	assert_int_equal(ioacct_query_fetch_store(f->st, &flt, false, collect, g, err, sizeof(err)),
			 -ECANCELED);
	assert_string_equal(err, "untouched");
	assert_int_equal(g->n, 2);
	got_free(g);
}

static void serve(struct fixture *f, const char *job_ids, const char *uids, uint32_t peer,
		  bool private_data, int64_t after, struct ioacct_reply *rep)
{
	struct ioacct_req_select req = { .after_key = after, .peaks = 1 };

	snprintf(req.job_ids, sizeof(req.job_ids), "%s", job_ids);
	snprintf(req.uids, sizeof(req.uids), "%s", uids);
	memset(rep, 0, sizeof(*rep));
	ioacct_query_serve_page(f->st, &req, peer, private_data, rep);
}

static void test_serve_page(void **state)
{
	struct fixture *f = *state;
	struct ioacct_reply rep;
	int64_t keys[200];

	for (uint64_t i = 0; i < 200; i++)
		keys[i] = add_job(f->st, i + 1, false);

	/*
	 * Pages of at most IOACCT_QUERY_PAGE_JOBS (fewer when the time budget
	 * runs out on a slow machine), each starting after the last one's key.
	 */
	for (int64_t after = 0, seen = 0, pages = 0;; pages++) {
		serve(f, "", "", 0, true, after, &rep);
		assert_int_equal(rep.status, 0);
		assert_true(rep.njobs <= IOACCT_QUERY_PAGE_JOBS);
		for (size_t i = 0; i < rep.njobs; i++)
			assert_int_equal(rep.jobs[i].key, keys[seen + (int64_t)i]);
		assert_int_equal(rep.nqsteps, 2 * rep.njobs);
		assert_int_equal(rep.nqmounts, 2 * rep.njobs);
		assert_int_equal(rep.nqtotals, 2 * 2 * 3 * rep.njobs);
		assert_int_equal(rep.nqpeaks, 9 * rep.njobs);
		if (rep.nqsteps)
			assert_int_equal(rep.qsteps[0].step.cgroup[0], '\0');
		seen += (int64_t)rep.njobs;
		if (!rep.more) {
			assert_int_equal(seen, 200);
			assert_true(pages >= 1);
			ioacct_reply_free(&rep);
			break;
		}
		assert_true(rep.njobs > 0);
		assert_int_equal(rep.job_key, keys[seen - 1]);
		after = rep.job_key;
		ioacct_reply_free(&rep);
	}

	/* private_data: a user gets their own jobs whatever they ask for. */
	serve(f, "1,2,3,4", "", ALICE, true, 0, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.njobs, 2);
	assert_int_equal(rep.jobs[0].job_id, 2);
	assert_int_equal(rep.jobs[1].job_id, 4);
	ioacct_reply_free(&rep);
	serve(f, "1,3", "1001", ALICE, true, 0, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.njobs, 0);
	assert_false(rep.more);
	ioacct_reply_free(&rep);
	serve(f, "1,2,3,4", "1001,1000", ALICE, true, 0, &rep);
	assert_int_equal(rep.njobs, 2);
	assert_int_equal(rep.jobs[1].job_id, 4);
	ioacct_reply_free(&rep);
	/* Root, or anyone without private_data, gets what is asked. */
	serve(f, "1,2,3,4", "1001", 0, true, 0, &rep);
	assert_int_equal(rep.njobs, 2);
	assert_int_equal(rep.jobs[0].uid, BOB);
	ioacct_reply_free(&rep);
	serve(f, "1,2,3,4", "", ALICE, false, 0, &rep);
	assert_int_equal(rep.njobs, 4);
	ioacct_reply_free(&rep);

	/* Bad lists are errors, not crashes. */
	serve(f, "1,x", "", 0, false, 0, &rep);
	assert_int_equal(rep.status, -EINVAL);
	assert_non_null(strstr(rep.error, "bad job id"));
	assert_null(rep.jobs);
	ioacct_reply_free(&rep);
	serve(f, "", "4294967296", 0, false, 0, &rep);
	assert_int_equal(rep.status, -EINVAL);
	ioacct_reply_free(&rep);
}

/* A job of `nmounts` mounts with the longest paths: ~8 KiB of reply each. */
static int64_t add_fat_job(struct ioacct_store *st, uint64_t job_id, int nmounts)
{
	struct ioacct_job j = { .job_id = job_id, .start_ns = T0, .uid = ALICE };
	struct ioacct_mount m = { .fstype = "nfs" };

	strcpy(j.cluster, "hpc");
	strcpy(j.state, "RUNNING");
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	memset(m.path, 'p', sizeof(m.path) - 1);
	memset(m.source, 's', sizeof(m.source) - 1);
	for (int i = 0; i < nmounts; i++) {
		m.mnt_id = (uint32_t)i;
		assert_int_equal(ioacct_store_mount_put(st, j.key, &m), 0);
	}
	return j.key;
}

static void test_serve_page_budget(void **state)
{
	struct fixture *f = *state;
	struct ioacct_reply rep;
	struct ioacct_buf b = { 0 };
	int64_t k[4];

	/* The byte budget alone: reading 150 mounts a job may outlast 100 ms here. */
	ioacct_query_page_ms_set(60000);
	assert_int_equal(ioacct_store_begin(f->st), 0);
	for (int i = 0; i < 3; i++)
		k[i] = add_fat_job(f->st, 10 + (uint64_t)i, 150);
	k[3] = add_fat_job(f->st, 20, 600);
	assert_int_equal(ioacct_store_commit(f->st), 0);

	/* 150 mounts of 8 KiB: two such jobs fit the budget, not three. */
	serve(f, "", "", 0, false, 0, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.njobs, 2);
	assert_true(rep.more);
	assert_int_equal(rep.job_key, k[1]);
	/* And the page does encode, under the message limit. */
	assert_int_equal(ioacct_proto_encode_reply(&b, &rep), 0);
	assert_true(b.len <= IOACCT_QUERY_PAGE_BYTES);
	ioacct_buf_free(&b);
	ioacct_reply_free(&rep);
	serve(f, "", "", 0, false, k[1], &rep);
	assert_int_equal(rep.njobs, 1);
	assert_int_equal(rep.job_key, k[2]);
	ioacct_reply_free(&rep);
	/* A job larger than any message: said so, not sent half. */
	serve(f, "", "", 0, false, k[2], &rep);
	assert_int_equal(rep.status, -EMSGSIZE);
	assert_non_null(strstr(rep.error, "job 20 of cluster hpc is too large"));
	assert_null(rep.jobs);
	ioacct_reply_free(&rep);
}

static void test_serve_page_rows(void **state)
{
	struct fixture *f = *state;
	struct ioacct_reply rep;
	int64_t k[3];

	/* Jobs of 5000 steps (srun in a loop): one per page, a page holds 8192 steps. */
	ioacct_query_page_ms_set(60000);
	assert_int_equal(ioacct_store_begin(f->st), 0);
	for (int i = 0; i < 3; i++) {
		k[i] = add_fat_job(f->st, 30 + (uint64_t)i, 1);
		for (uint32_t s = 0; s < 5000; s++) {
			struct ioacct_step step = { .step_id = s, .start_ns = T0, .state = "RUNNING" };

			assert_int_equal(ioacct_store_step_put(f->st, k[i], &step), 0);
		}
	}
	assert_int_equal(ioacct_store_commit(f->st), 0);
	for (int i = 0; i < 3; i++) {
		serve(f, "", "", 0, false, i ? k[i - 1] : 0, &rep);
		assert_int_equal(rep.status, 0);
		assert_int_equal(rep.njobs, 1);
		assert_int_equal(rep.nqsteps, 5000);
		assert_int_equal(rep.more, i < 2);
		ioacct_reply_free(&rep);
	}
}

/* ---- through a socket: a thread answering as ioacctd does ---- */

struct server {
	struct fixture *f;
	int lfd;
	uint32_t peer;
	bool private_data;
	pthread_t thread;
	int requests;
	bool before_files;            /* answers as an ioacctd older than the file pages */
	bool before_rpc;              /* answers as an ioacctd older than the RPC pages */
};

static void *server_main(void *arg)
{
	struct server *srv = arg;
	struct ioacct_buf in = { 0 }, out = { 0 };

	for (;;) {
		struct ioacct_request req;
		struct ioacct_reply rep;
		char err[256];
		int fd = accept(srv->lfd, NULL, NULL);

		if (fd < 0)
			break;
		if (ioacct_proto_recv(fd, &in, 5000, err, sizeof(err)) == 0 &&
		    ioacct_proto_decode_request(in.data, in.len, &req, err, sizeof(err)) == 0 &&
		    (req.type == IOACCT_MSG_QUERY || req.type == IOACCT_MSG_JOB)) {
			memset(&rep, 0, sizeof(rep));
			rep.seq = req.seq;
			/* An older daemon ignores the attribute it does not know. */
			if (__atomic_load_n(&srv->before_files, __ATOMIC_SEQ_CST))
				req.u.job.files = 0;
			if (__atomic_load_n(&srv->before_rpc, __ATOMIC_SEQ_CST))
				req.u.job.rpc = 0;
			if (req.type == IOACCT_MSG_JOB)
				ioacct_job_serve_page(srv->f->st, &req.u.job, srv->peer,
						      srv->private_data, &rep);
			else
				ioacct_query_serve_page(srv->f->st, &req.u.select, srv->peer,
							srv->private_data, &rep);
			/* Counted before the reply goes: the client reads the count after it. */
			__atomic_add_fetch(&srv->requests, 1, __ATOMIC_SEQ_CST);
			ioacct_buf_reset(&out);
			if (ioacct_proto_encode_reply(&out, &rep) == 0)
				ioacct_proto_send(fd, &out, 5000);
			ioacct_reply_free(&rep);
		}
		close(fd);
	}
	ioacct_buf_free(&in);
	ioacct_buf_free(&out);
	return NULL;
}

static void server_start(struct server *srv, struct fixture *f, uint32_t peer, bool private_data)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	memset(srv, 0, sizeof(*srv));
	srv->f = f;
	srv->peer = peer;
	srv->private_data = private_data;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->sock);
	unlink(f->sock);
	srv->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(srv->lfd >= 0);
	assert_int_equal(bind(srv->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(srv->lfd, 8), 0);
	assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

static void server_stop(struct server *srv)
{
	shutdown(srv->lfd, SHUT_RDWR);
	pthread_join(srv->thread, NULL);
	close(srv->lfd);
}

static void test_fetch_daemon(void **state)
{
	struct fixture *f = *state;
	struct ioacct_store_filter flt = { 0 };
	const uint32_t alice = ALICE;
	const char *hpc[] = { "hpc" };
	struct got *direct, *daemon;
	struct server srv;
	uint64_t ids[300];
	char err[512] = "";

	for (uint64_t i = 0; i < 300; i++) {
		add_job(f->st, i + 1, i >= 290);
		ids[i] = i + 1;
	}
	/* Root through the daemon sees what the store has: 300 jobs in 3 pages or more. */
	server_start(&srv, f, 0, true);
	direct = got_new();
	daemon = got_new();
	assert_int_equal(ioacct_query_fetch_store(f->st, &flt, true, collect, direct, err,
						  sizeof(err)), 0);
	assert_int_equal(ioacct_query_fetch_daemon(f->sock, &flt, true, 5000, collect, daemon, err,
						   sizeof(err)), 0);
	assert_true(__atomic_load_n(&srv.requests, __ATOMIC_SEQ_CST) >= 3);
	assert_int_equal(daemon->n, 300);
	/* Array tasks come back as such. */
	assert_true(daemon->jobs[4].jd->job.has_array);
	assert_same(direct, daemon);
	got_free(direct);
	got_free(daemon);

	/* Filters travel: ids (in batches), users, clusters, a window. */
	flt.job_ids = ids;
	flt.njob_ids = 300;
	flt.uids = &alice;
	flt.nuids = 1;
	flt.clusters = hpc;
	flt.nclusters = 1;
	flt.start_ns = T0 + 100 * NS;
	flt.end_ns = T0 + 200 * NS;
	direct = got_new();
	daemon = got_new();
	assert_int_equal(ioacct_query_fetch_store(f->st, &flt, false, collect, direct, err,
						  sizeof(err)), 0);
	assert_int_equal(ioacct_query_fetch_daemon(f->sock, &flt, false, 5000, collect, daemon, err,
						   sizeof(err)), 0);
	assert_true(direct->n > 10);
	for (size_t i = 0; i < direct->n; i++) {
		assert_int_equal(direct->jobs[i].jd->job.uid, ALICE);
		assert_string_equal(direct->jobs[i].jd->job.cluster, "hpc");
	}
	assert_same(direct, daemon);
	got_free(direct);
	got_free(daemon);
	server_stop(&srv);

	/* As bob, with private_data: bob's jobs only, even asking for alice's. */
	server_start(&srv, f, BOB, true);
	memset(&flt, 0, sizeof(flt));
	flt.uids = &alice;
	flt.nuids = 1;
	daemon = got_new();
	assert_int_equal(ioacct_query_fetch_daemon(f->sock, &flt, false, 5000, collect, daemon, err,
						   sizeof(err)), 0);
	assert_int_equal(daemon->n, 0);
	got_free(daemon);
	flt.nuids = 0;
	daemon = got_new();
	daemon->fail_at = 3;
	assert_int_equal(ioacct_query_fetch_daemon(f->sock, &flt, false, 5000, collect, daemon, err,
						   sizeof(err)), -ECANCELED);
	for (size_t i = 0; i < daemon->n; i++)
		assert_int_equal(daemon->jobs[i].jd->job.uid, BOB);
	got_free(daemon);
	server_stop(&srv);

	/* No daemon: the client says where it looked. */
	assert_int_equal(ioacct_query_fetch_daemon(f->sock, &flt, false, 5000, collect, NULL, err,
						   sizeof(err)), -ECONNREFUSED);
	assert_non_null(strstr(err, f->sock));
	unlink(f->sock);
	assert_int_equal(ioacct_query_fetch_daemon(f->sock, &flt, false, 5000, collect, NULL, err,
						   sizeof(err)), -ENOENT);
}

/* ---- one whole job (IOACCT_MSG_JOB) ---- */

/* A job as the daemon gives it equals the store's, the steps' cgroups aside (not sent). */
static void assert_same_job(const struct ioacct_jobdata *a, const struct ioacct_jobdata *b)
{
	assert_memory_equal(&a->job, &b->job, sizeof(a->job));
	assert_int_equal(a->nsteps, b->nsteps);
	for (size_t i = 0; i < a->nsteps; i++) {
		assert_int_equal(a->steps[i].step_id, b->steps[i].step_id);
		assert_int_equal(a->steps[i].start_ns, b->steps[i].start_ns);
		assert_int_equal(a->steps[i].end_ns, b->steps[i].end_ns);
		assert_string_equal(a->steps[i].state, b->steps[i].state);
		assert_int_equal(a->steps[i].exit_code, b->steps[i].exit_code);
	}
	assert_int_equal(a->nmounts, b->nmounts);
	if (a->nmounts)
		assert_memory_equal(a->mounts, b->mounts, a->nmounts * sizeof(*a->mounts));
	assert_int_equal(a->ntotals, b->ntotals);
	if (a->ntotals)
		assert_memory_equal(a->totals, b->totals, a->ntotals * sizeof(*a->totals));
	assert_int_equal(a->nseries, b->nseries);
	if (a->nseries)
		assert_memory_equal(a->series, b->series, a->nseries * sizeof(*a->series));
	/* The per-file records, read, in the store's order, every field. */
	assert_int_equal(a->files_loaded, b->files_loaded);
	assert_int_equal(a->nfiles, b->nfiles);
	if (a->nfiles)
		assert_memory_equal(a->files, b->files, a->nfiles * sizeof(*a->files));
}

/* A running job with a series longer than a few pages: one op, `nbins` bins. */
static int64_t add_long_job(struct ioacct_store *st, uint64_t job_id, uint32_t nbins)
{
	struct ioacct_job j = { .job_id = job_id, .start_ns = T0, .uid = ALICE };
	struct ioacct_mount m = { .mnt_id = 21, .path = "/", .fstype = "ext4" };
	struct ioacct_step step = { .step_id = 0, .start_ns = T0, .state = "RUNNING" };

	strcpy(j.cluster, "hpc");
	strcpy(j.state, "RUNNING");
	j.bin_width_ns = NS;
	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	assert_int_equal(ioacct_store_step_put(st, j.key, &step), 0);
	assert_int_equal(ioacct_store_mount_put(st, j.key, &m), 0);
	for (uint32_t bin = 0; bin < nbins; bin++) {
		struct ioacct_sample smp = { .step_id = 0, .mnt_id = 21, .op = IOACCT_OP_WRITE,
					     .bin = bin };

		smp.c.calls = 1;
		smp.c.bytes = 4096 + bin;
		assert_int_equal(ioacct_store_series_put(st, j.key, &smp), 0);
	}
	assert_int_equal(ioacct_store_commit(st), 0);
	return j.key;
}

static void test_job_fetch(void **state)
{
	struct fixture *f = *state;
	struct ioacct_source offline = { .db_path = f->db };
	struct ioacct_jobdata *want, *got;
	struct ioacct_counters sum = { 0 };
	struct server srv;
	int64_t k5, klong;
	char err[1024] = "";

	add_job(f->st, 4, false);
	k5 = add_job(f->st, 5, false);  /* bob's, an array task */
	klong = add_long_job(f->st, 77, 40000);

	/* Root, private_data: every job, whole, the long one in several pages. */
	server_start(&srv, f, 0, true);
	assert_int_equal(ioacct_store_job_load(f->st, k5, &want), 0);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 5, 0, 5000, &got, err, sizeof(err)),
			 0);
	assert_true(got->job.has_array);
	assert_same_job(want, got);
	ioacct_jobdata_free(want);
	ioacct_jobdata_free(got);

	assert_int_equal(ioacct_store_job_load(f->st, klong, &want), 0);
	__atomic_store_n(&srv.requests, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, "hpc", 77, 0, 5000, &got, err,
						 sizeof(err)), 0);
	assert_true(__atomic_load_n(&srv.requests, __ATOMIC_SEQ_CST) >= 3);
	assert_int_equal(got->nseries, 40000);
	assert_same_job(want, got);
	/* A running job's totals are what its series add up to, as in the store. */
	ioacct_samples_sum(got->series, got->nseries, 0, 21, IOACCT_OP_WRITE, &sum);
	assert_int_equal(sum.bytes, 40000ULL * 4096 + 40000ULL * 39999 / 2);
	assert_int_equal(got->ntotals, 1);
	assert_int_equal(got->totals[0].c.bytes, sum.bytes);
	ioacct_jobdata_free(want);
	ioacct_jobdata_free(got);

	/* By store key, as iorun and the plugin ask after finishing the job. */
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 0, k5, 5000, &got, err,
						 sizeof(err)), 0);
	assert_int_equal(got->job.job_id, 5);
	ioacct_jobdata_free(got);

	/* No such job, no such cluster. */
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 999, 0, 5000, &got, err,
						 sizeof(err)), -ENOENT);
	assert_string_equal(err, "no job 999 in ioacctd's store");
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, "other", 5, 0, 5000, &got, err,
						 sizeof(err)), -ENOENT);
	assert_string_equal(err, "no job 5 of cluster other in ioacctd's store");
	server_stop(&srv);

	/* Bob, private_data: his job, not alice's. */
	server_start(&srv, f, BOB, true);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 5, 0, 5000, &got, err, sizeof(err)),
			 0);
	ioacct_jobdata_free(got);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 4, 0, 5000, &got, err, sizeof(err)),
			 -EPERM);
	assert_string_equal(err, "job 4 belongs to another user (private_data = yes)");
	server_stop(&srv);

	/* Without private_data the store is everyone's, and so is the daemon's answer. */
	server_start(&srv, f, BOB, false);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 4, 0, 5000, &got, err, sizeof(err)),
			 0);
	assert_int_equal(got->job.uid, ALICE);
	ioacct_jobdata_free(got);
	server_stop(&srv);

	/* No daemon: one line saying where, and the way around it; then that way. */
	unlink(f->sock);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, NULL, 5, 0, 5000, &got, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "cannot reach ioacctd at "));
	assert_non_null(strstr(err, f->sock));
	assert_non_null(strstr(err, "(is it running? or use --db FILE as root)"));
	assert_int_equal(ioacct_store_job_load(f->st, k5, &want), 0);
	assert_int_equal(ioacct_source_load_job(&offline, NULL, 5, 0, &got, err, sizeof(err)), 0);
	assert_memory_equal(&want->job, &got->job, sizeof(want->job));
	assert_int_equal(want->nseries, got->nseries);
	ioacct_jobdata_free(want);
	ioacct_jobdata_free(got);
	assert_int_equal(ioacct_source_load_job(&offline, "hpc", 999, 0, &got, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no job 999 of cluster hpc in "));
}

/*
 * A job of `n` per-file records with the longest paths, more than a page
 * holds by count and by bytes: two steps, ranks -1 and 0..3, two mounts.
 * Bytes moved repeat, so that the store's order falls back on the key.
 */
static int64_t add_files_job(struct ioacct_store *st, uint64_t job_id, size_t n)
{
	struct ioacct_job j = { .job_id = job_id, .start_ns = T0, .uid = ALICE };
	struct ioacct_mount m = { .mnt_id = 21, .path = "/", .fstype = "ext4" };
	struct ioacct_step step = { .step_id = 0, .start_ns = T0, .state = "COMPLETED" };

	strcpy(j.cluster, "hpc");
	strcpy(j.state, "COMPLETED");
	j.bin_width_ns = NS;
	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	assert_int_equal(ioacct_store_step_put(st, j.key, &step), 0);
	assert_int_equal(ioacct_store_mount_put(st, j.key, &m), 0);
	for (size_t i = 0; i < n; i++) {
		struct ioacct_file f = {
			.step_id = i % 2 ? 0 : IOACCT_STEP_BATCH, .rank = (int32_t)(i % 5) - 1,
			.mnt_id = 21 + (uint32_t)(i % 2), .dev = (8U << 20) | 1,
			.ino = i == 7 ? (uint64_t)INT64_MAX + 5 : 100000 + i * 7919 % n,
			.opens = 1, .writes = i % 3, .bytes_written = (i % 13) * 4096,
			.reads = 2, .bytes_read = 4096, .max_byte_read = 4095,
			.max_byte_written = (int64_t)((i % 13) * 4096) - 1,
			.first_read_ns = 1, .last_read_ns = 2, .first_write_ns = -1,
			.last_write_ns = -1,
		};

		f.size_read[ioacct_size_bin(4096)] = 2;
		memset(f.path, 'a' + (char)(i % 26), sizeof(f.path) - 1);
		snprintf(f.path, sizeof(f.path), "/scratch/\n\xff%zu", i);
		f.path[strlen(f.path)] = 'z'; /* back to 1023 bytes after snprintf's NUL */
		assert_int_equal(ioacct_store_file_put(st, j.key, &f), 0);
	}
	assert_int_equal(ioacct_store_commit(st), 0);
	return j.key;
}

/* A job's per-file records through the daemon, in pages, equal to the store's. */
static void test_job_fetch_files(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *want, *got;
	struct ioacct_reply rep = { 0 };
	struct ioacct_req_job req = { 0 };
	struct server srv;
	int64_t key;
	size_t n = 2 * IOACCT_JOB_PAGE_FILES + 77;
	char err[1024] = "";

	key = add_files_job(f->st, 88, n);
	assert_int_equal(ioacct_store_job_load(f->st, key, &want), 0);
	assert_true(want->files_loaded);
	assert_int_equal(want->nfiles, n);
	assert_int_equal(strlen(want->files[0].path), sizeof(want->files[0].path) - 1);

	/* One page: no more than its bound of rows, under the message limit. */
	req.job_key = key;
	req.files = 1;
	ioacct_job_serve_page(f->st, &req, 0, true, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.files_read, 1);
	assert_int_equal(rep.more, 1);
	assert_true(rep.nqfiles >= 1 && rep.nqfiles <= IOACCT_JOB_PAGE_FILES);
	assert_true(rep.nqfiles * ioacct_proto_file_row_size() <= IOACCT_QUERY_PAGE_BYTES);
	/* Neither steps nor series in a page of files. */
	assert_int_equal(rep.nqsteps, 0);
	assert_int_equal(rep.nqseries, 0);
	ioacct_reply_free(&rep);

	server_start(&srv, f, 0, true);
	__atomic_store_n(&srv.requests, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, "hpc", 88, 0, 5000, &got, err,
						 sizeof(err)), 0);
	/* The first page, then at least three of files. */
	assert_true(__atomic_load_n(&srv.requests, __ATOMIC_SEQ_CST) >= 4);
	assert_same_job(want, got);
	ioacct_jobdata_free(got);
	server_stop(&srv);

	/* A daemon older than the file pages: the job whole but its records not read, not none. */
	server_start(&srv, f, 0, true);
	__atomic_store_n(&srv.before_files, true, __ATOMIC_SEQ_CST);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, "hpc", 88, 0, 5000, &got, err,
						 sizeof(err)), 0);
	assert_false(got->files_loaded);
	assert_null(got->files);
	assert_int_equal(got->nfiles, 0);
	assert_int_equal(got->nsteps, want->nsteps);
	assert_int_equal(got->nmounts, want->nmounts);
	ioacct_jobdata_free(got);
	server_stop(&srv);
	ioacct_jobdata_free(want);
}

/*
 * A job of `n` RPC rows (issue 40), more than a page holds: two steps,
 * mounts 21 and 2^63 + 5 (a key past int64), NFSv3 and v4 procedures,
 * their bins and a row of RPCs no job sent, every counter its own value.
 */
static void make_rpc_rows(struct ioacct_rpc *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r[i] = (struct ioacct_rpc){
			.step_id = i < n / 2 ? 0 : IOACCT_STEP_BATCH, .mnt_id = i % 4 < 2 ? 21 : (1ULL << 63) + 5,
			.prog = 100003, .vers = i % 2 ? 4 : 3, .proc = (uint32_t)(i / 4) % 60,
			.flags = (i / 4) % 60 == 59 ? IOACCT_RPC_UNATTRIBUTED : 0, .bin = (uint32_t)i,
			.calls = i + 1, .bytes_sent = 4096 * i, .bytes_recv = 7 * i, .queue_ns = 11 * i,
			.rtt_ns = 13 * i, .execute_ns = UINT64_MAX - i, .errors = i % 3, .retrans = i % 5,
		};
		snprintf(r[i].name, sizeof(r[i].name), "PROC_%zu_OF_A_LONG_NAME_0123456", i % 60);
	}
}

static int64_t add_rpc_job(struct ioacct_store *st, uint64_t job_id, const struct ioacct_rpc *r,
			   size_t n)
{
	struct ioacct_job j = { .job_id = job_id, .start_ns = T0, .uid = ALICE };
	struct ioacct_step step = { .step_id = 0, .start_ns = T0, .state = "COMPLETED" };

	strcpy(j.cluster, "hpc");
	strcpy(j.state, "COMPLETED");
	j.bin_width_ns = NS;
	assert_int_equal(ioacct_store_begin(st), 0);
	assert_int_equal(ioacct_store_job_insert(st, &j), 0);
	assert_int_equal(ioacct_store_step_put(st, j.key, &step), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ioacct_store_rpc_put(st, j.key, &r[i]), 0);
	assert_int_equal(ioacct_store_commit(st), 0);
	return j.key;
}

static int rpc_cmp(const void *a, const void *b)
{
	return ioacct_rpc_key_cmp(a, b);
}

/* A job's RPC rows through the daemon, in pages, equal to the store's; an older daemon's none. */
static void test_job_fetch_rpc(void **state)
{
	struct fixture *f = *state;
	size_t n = 2 * IOACCT_JOB_PAGE_FILES + 33;
	struct ioacct_rpc *r = calloc(n, sizeof(*r));
	struct ioacct_jobdata *want, *got;
	struct ioacct_reply rep = { 0 };
	struct ioacct_req_job req = { 0 };
	struct server srv;
	int64_t key;
	char err[1024] = "";

	assert_non_null(r);
	make_rpc_rows(r, n);
	key = add_rpc_job(f->st, 40, r, n);
	assert_int_equal(ioacct_store_job_load(f->st, key, &want), 0);
	assert_int_equal(want->nrpc, n);
	/* The store's order is the model's, the mount key past int64 first. */
	qsort(r, n, sizeof(*r), rpc_cmp);
	assert_memory_equal(want->rpc, r, n * sizeof(*r));
	assert_true(want->rpc[0].mnt_id == (1ULL << 63) + 5);

	/* One page: its bound of rows, under the message limit, nothing else in it. */
	req.job_key = key;
	req.rpc = 1;
	ioacct_job_serve_page(f->st, &req, 0, true, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.rpc_read, 1);
	assert_int_equal(rep.more, 1);
	assert_int_equal(rep.nqrpc, IOACCT_JOB_PAGE_FILES);
	assert_true(rep.nqrpc * ioacct_proto_rpc_row_size() <= IOACCT_QUERY_PAGE_BYTES);
	assert_int_equal(rep.nqsteps + rep.nqseries + rep.nqfiles, 0);
	ioacct_reply_free(&rep);

	server_start(&srv, f, 0, true);
	__atomic_store_n(&srv.requests, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, "hpc", 40, 0, 5000, &got, err,
						 sizeof(err)), 0);
	/* The first page, one each of files, MPI-IO, HDF5, then three of RPC rows. */
	assert_int_equal(__atomic_load_n(&srv.requests, __ATOMIC_SEQ_CST), 7);
	assert_true(got->rpc_loaded);
	assert_int_equal(got->nrpc, n);
	assert_memory_equal(got->rpc, want->rpc, n * sizeof(*got->rpc));
	assert_int_equal(got->rpc[n - 1].step_id, IOACCT_STEP_BATCH);
	assert_int_equal(got->rpc[n - 1].mnt_id, 21);
	ioacct_jobdata_free(got);
	server_stop(&srv);

	/* A daemon older than them: the job whole, its RPC rows not read, not none. */
	server_start(&srv, f, 0, true);
	__atomic_store_n(&srv.before_rpc, true, __ATOMIC_SEQ_CST);
	assert_int_equal(ioacct_job_fetch_daemon(f->sock, "hpc", 40, 0, 5000, &got, err,
						 sizeof(err)), 0);
	assert_false(got->rpc_loaded);
	assert_null(got->rpc);
	assert_int_equal(got->nrpc, 0);
	assert_int_equal(got->nsteps, 1);
	ioacct_jobdata_free(got);
	server_stop(&srv);
	ioacct_jobdata_free(want);
	free(r);
}

/* A server of JOB pages from one job held whole, through the wire's encoder and decoder. */
static int held_call(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep, char *err,
		     size_t errlen)
{
	struct ioacct_reply page = { 0 };
	struct ioacct_buf b = { 0 };
	int ret;

	ioacct_job_serve_page_jd(ctx, &req->u.job, &page);
	page.seq = req->seq;
	ret = ioacct_proto_encode_reply(&b, &page);
	if (!ret)
		ret = ioacct_proto_decode_reply(b.data, b.len, rep, err, errlen);
	ioacct_buf_free(&b);
	ioacct_reply_free(&page);
	return ret;
}

/* An empty job 42 (job id 4242 on hpc) to hold whole: its records the caller's. */
static struct ioacct_jobdata *held_job(void)
{
	struct ioacct_jobdata *jd = calloc(1, sizeof(*jd));

	assert_non_null(jd);
	jd->job.key = 42;
	jd->job.job_id = 4242;
	strcpy(jd->job.cluster, "hpc");
	return jd;
}

static int by_ino_bytes(const void *pa, const void *pb)
{
	const struct ioacct_file *a = pa, *b = pb;

	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a->bytes_read < b->bytes_read ? -1 : a->bytes_read > b->bytes_read;
}

/*
 * A job of the cluster store held whole has one record per node of a file
 * the nodes share, under the same key (a shared file system's file, rank
 * unknown): its pages carry every one, none split from its twin across a
 * page's end (the next page's cursor is a key).
 */
static void test_job_fetch_same_keys(void **state)
{
	struct ioacct_jobdata *jd = held_job(), *got = NULL;
	struct ioacct_caller c = { .call = held_call, .ctx = jd, .name = "a held job" };
	/* One alone, then twins: a page's end (IOACCT_JOB_PAGE_FILES) falls between two. */
	size_t n = 1 + 2 * (IOACCT_JOB_PAGE_FILES + 300), k = 0;
	char err[1024] = "";

	(void)state;
	jd->files = calloc(n, sizeof(*jd->files));
	assert_non_null(jd->files);
	for (uint64_t ino = 0; k < n; ino++)
		for (int node = 0; node < (ino ? 2 : 1); node++) {
			struct ioacct_file *f = &jd->files[k++];

			*f = (struct ioacct_file){ .rank = -1, .mnt_id = 21, .dev = 8U << 20,
						   .ino = ino, .reads = 1,
						   .bytes_read = ino * 10 + (uint64_t)node };
			snprintf(f->path, sizeof(f->path), "/shared/f%" PRIu64, ino);
		}
	jd->nfiles = n;
	jd->files_loaded = true;
	jd->mpiio_loaded = true;
	assert_int_equal(ioacct_job_fetch_via(&c, "hpc", 4242, 0, 0, false, &got, err, sizeof(err)),
			 0);
	assert_true(got->files_loaded);
	assert_int_equal(got->nfiles, n);
	qsort(got->files, got->nfiles, sizeof(*got->files), by_ino_bytes);
	assert_memory_equal(got->files, jd->files, n * sizeof(*jd->files));
	ioacct_jobdata_free(got);
	ioacct_jobdata_free(jd);
}

/*
 * A job of two nodes held whole: on each node a process of the same rank
 * (-1, a serial program's) and pid wrote the same shared files, through
 * POSIX, MPI-IO and HDF5: one record per node under every key but the node
 * part (the first file the second node's alone). Every page is taken, the twins apart, a
 * page's end between two; a record of a part the job has not is refused.
 */
static void test_job_fetch_node_parts(void **state)
{
	struct ioacct_jobdata *jd = held_job(), *got = NULL;
	struct ioacct_caller c = { .call = held_call, .ctx = jd, .name = "a held job" };
	/* One alone, then twins: a page's end (IOACCT_JOB_PAGE_FILES) falls between two. */
	size_t n = 1 + 2 * (IOACCT_JOB_PAGE_FILES + 300);
	char err[1024] = "";

	(void)state;
	jd->nodes = calloc(2, sizeof(*jd->nodes));
	jd->files = calloc(n, sizeof(*jd->files));
	jd->mpiio = calloc(n, sizeof(*jd->mpiio));
	jd->h5 = calloc(n, sizeof(*jd->h5));
	assert_true(jd->nodes && jd->files && jd->mpiio && jd->h5);
	strcpy(jd->nodes[0].node, "n1");
	strcpy(jd->nodes[1].node, "n2");
	jd->nnodes = 2;
	for (size_t k = 0; k < n; k++) {
		struct ioacct_mpiio *m = &jd->mpiio[k];
		struct ioacct_h5rec *h = &jd->h5[k];

		uint32_t part = (uint32_t)(k + 1) % 2;
		struct ioacct_file *f = &jd->files[k];

		/* Bytes fewer and fewer: the store's order of the files is the key's too. */
		*f = (struct ioacct_file){ .rank = -1, .mnt_id = 21, .dev = 8U << 20,
					   .ino = (k + 1) / 2, .part = part, .reads = 1,
					   .bytes_read = n - k };
		snprintf(f->path, sizeof(f->path), "/shared/f%05zu", (k + 1) / 2);
		*m = (struct ioacct_mpiio){ .rank = -1, .pid = 4242, .part = part,
					    .indep_writes = 1, .bytes_written = k };
		snprintf(m->path, sizeof(m->path), "/shared/f%05zu", (k + 1) / 2);
		*h = (struct ioacct_h5rec){ .rank = -1, .pid = 4242, .part = part,
					    .kind = IOACCT_H5REC_DATASET, .writes = 1,
					    .bytes_written = k };
		snprintf(h->name, sizeof(h->name), "/shared/f%05zu.h5:/d", (k + 1) / 2);
	}
	jd->nfiles = jd->nmpiio = jd->nh5 = n;
	jd->files_loaded = jd->mpiio_loaded = jd->h5_loaded = true;
	assert_int_equal(ioacct_job_fetch_via(&c, "hpc", 4242, 0, 0, false, &got, err, sizeof(err)),
			 0);
	assert_int_equal(got->nnodes, 2);
	assert_true(got->files_loaded && got->mpiio_loaded && got->h5_loaded);
	assert_int_equal(got->nfiles, n);
	assert_memory_equal(got->files, jd->files, n * sizeof(*jd->files));
	assert_int_equal(got->nmpiio, n);
	assert_int_equal(got->nh5, n);
	assert_memory_equal(got->mpiio, jd->mpiio, n * sizeof(*jd->mpiio));
	assert_memory_equal(got->h5, jd->h5, n * sizeof(*jd->h5));
	ioacct_jobdata_free(got);

	/* A part past the job's nodes: refused, not taken for another node's. */
	jd->h5[n - 1].part = 2;
	got = NULL;
	assert_int_equal(ioacct_job_fetch_via(&c, "hpc", 4242, 0, 0, false, &got, err, sizeof(err)),
			 -EPROTO);
	assert_null(got);
	assert_non_null(strstr(err, "HDF5 records of another job"));
	ioacct_jobdata_free(jd);
}

/*
 * A job held whole (the cluster store's) with RPC rows past a page: every
 * page taken, in order; rows out of order refused; rows not read stay so.
 */
static void test_job_fetch_rpc_held(void **state)
{
	struct ioacct_jobdata *jd = held_job(), *got = NULL;
	struct ioacct_caller c = { .call = held_call, .ctx = jd, .name = "a held job" };
	size_t n = IOACCT_JOB_PAGE_FILES + 5;
	char err[1024] = "";

	(void)state;
	jd->rpc = calloc(n, sizeof(*jd->rpc));
	assert_non_null(jd->rpc);
	make_rpc_rows(jd->rpc, n);
	qsort(jd->rpc, n, sizeof(*jd->rpc), rpc_cmp);
	jd->nrpc = n;
	assert_int_equal(ioacct_job_fetch_via(&c, "hpc", 4242, 0, 0, false, &got, err, sizeof(err)),
			 0);
	/* Not read: the held job's files, MPI-IO and HDF5 records. */
	assert_false(got->rpc_loaded);
	assert_int_equal(got->nrpc, 0);
	ioacct_jobdata_free(got);
	jd->rpc_loaded = true;
	assert_int_equal(ioacct_job_fetch_via(&c, "hpc", 4242, 0, 0, false, &got, err, sizeof(err)),
			 0);
	assert_true(got->rpc_loaded);
	assert_int_equal(got->nrpc, n);
	assert_memory_equal(got->rpc, jd->rpc, n * sizeof(*jd->rpc));
	ioacct_jobdata_free(got);

	/* The last two rows swapped: the second page goes back, refused. */
	got = NULL;
	jd->rpc[n - 2].bin = jd->rpc[n - 1].bin + 1;
	jd->rpc[n - 2].mnt_id = jd->rpc[n - 1].mnt_id;
	jd->rpc[n - 2].step_id = jd->rpc[n - 1].step_id;
	jd->rpc[n - 2].proc = jd->rpc[n - 1].proc;
	jd->rpc[n - 2].vers = jd->rpc[n - 1].vers;
	jd->rpc[n - 2].flags = jd->rpc[n - 1].flags;
	assert_int_equal(ioacct_job_fetch_via(&c, "hpc", 4242, 0, 0, false, &got, err, sizeof(err)),
			 -EPROTO);
	assert_null(got);
	assert_non_null(strstr(err, "RPC rows of another job"));
	ioacct_jobdata_free(jd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fetch_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_serve_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_serve_page_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_serve_page_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_fetch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_fetch_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_fetch_rpc, setup, teardown),
		cmocka_unit_test(test_job_fetch_rpc_held),
		cmocka_unit_test(test_job_fetch_same_keys),
		cmocka_unit_test(test_job_fetch_node_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
