/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the wire protocol's query, live and job messages: the
 * requests, the replies' lists of rows (jobs, steps, mounts, totals, peaks,
 * series, node parts, watches) and what a malformed one is told.
 * The rest, the framing and the transport: test_proto.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto.h"
#include "protobuild.h"
#include "util.h"

/* ---- query (ioacct through the daemon) ---- */

enum { A_JOB_KEY = 20, A_QJOB = 45, A_QTOTAL = 48 };

static void test_query_request_roundtrip(void **state)
{
	struct ioacct_request in, out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_QUERY;
	in.seq = 7;
	strcpy(in.u.select.job_ids, "1,22,18446744073709551615");
	strcpy(in.u.select.uids, "0,1000");
	strcpy(in.u.select.clusters, "hpc,iorun");
	in.u.select.start_ns = -5;
	in.u.select.end_ns = INT64_MAX;
	in.u.select.after_key = 1234567890123LL;
	in.u.select.peaks = 1;
	in.u.select.by_node = 1;
	in.u.select.local = 1;
	roundtrip_request(&in, &out);
	assert_memory_equal(&out.u.select, &in.u.select, sizeof(in.u.select));
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_QUERY), "query");

	/* Everything is optional: an empty query is "every job". */
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_QUERY;
	roundtrip_request(&in, &out);
	assert_memory_equal(&out.u.select, &in.u.select, sizeof(in.u.select));
}

/* A page of two jobs with every kind of row; rows of a job need not be adjacent. */
static void fill_query_reply(struct ioacct_reply *rep)
{
	static struct ioacct_job jobs[2];
	static struct ioacct_qstep_row steps[3];
	static struct ioacct_qmount_row mounts[2];
	static struct ioacct_qtotal_row totals[3];
	static struct ioacct_qpeak_row peaks[2];

	memset(rep, 0, sizeof(*rep));
	memset(jobs, 0, sizeof(jobs));
	memset(steps, 0, sizeof(steps));
	memset(mounts, 0, sizeof(mounts));
	memset(totals, 0, sizeof(totals));
	for (int i = 0; i < 2; i++) {
		struct ioacct_job *j = &jobs[i];

		j->key = 100 + i;
		j->job_id = UINT64_MAX - (uint64_t)i;
		snprintf(j->cluster, sizeof(j->cluster), "cluster%d", i);
		snprintf(j->node, sizeof(j->node), "node%d", i);
		strcpy(j->source, "slurm");
		j->uid = 4000000000U + (uint32_t)i;
		j->gid = 100;
		strcpy(j->user, "alice");
		strcpy(j->name, "a \"name\"");
		memset(j->workdir, 'w', sizeof(j->workdir) - 1); /* the longest there is */
		j->array_job_id = i ? 77 : 0;
		j->array_task_id = i ? 3 : 0;
		j->start_ns = -1;
		j->end_ns = INT64_MAX;
		strcpy(j->state, "CANCELLED");
		j->exit_code = -15;
		strcpy(j->probe_mode, "tracepoint");
		j->bin_width_ns = 5000000000ULL;
		j->dropped_events = 1ULL << 63;
		j->dropped_bytes = 9;
	}
	steps[0] = (struct ioacct_qstep_row){ .job_key = 100, .step = { .step_id = 0,
		.start_ns = 5, .end_ns = 6, .state = "COMPLETED", .exit_code = 1 } };
	steps[1] = (struct ioacct_qstep_row){ .job_key = 101, .step = { .step_id = IOACCT_STEP_BATCH,
		.start_ns = 7, .state = "RUNNING" } };
	steps[2] = (struct ioacct_qstep_row){ .job_key = 100, .step = { .step_id = IOACCT_STEP_EXTERN } };
	mounts[0] = (struct ioacct_qmount_row){ .job_key = 101, .mount = { .mnt_id = 21, .path = "/",
		.fstype = "ext4", .source = "/dev/sda1" } };
	mounts[1] = (struct ioacct_qmount_row){ .job_key = 100, .mount = { .mnt_id = 0, .path = "mnt:0" } };
	for (int i = 0; i < 3; i++) {
		totals[i].job_key = i == 1 ? 101 : 100;
		totals[i].s = (struct ioacct_sample){ .step_id = (uint32_t)i, .mnt_id = 21,
						      .op = IOACCT_OP_STAT - (uint32_t)i };
		totals[i].s.c.bytes = UINT64_MAX - (uint64_t)i;
		totals[i].s.c.calls = 3;
		totals[i].s.c.ns = 1ULL << 40;
		totals[i].s.c.size_hist[9] = 8;
		totals[i].s.c.errors = 6 + (uint64_t)i;
		totals[i].s.c.errclass[IOACCT_ERR_NOTFOUND] = 5;
		totals[i].s.c.errclass[IOACCT_ERR_SPACE + (unsigned int)i] = 1 + (uint64_t)i;
	}
	peaks[0] = (struct ioacct_qpeak_row){ .job_key = 100, .step_id = UINT32_MAX,
		.mnt_id = IOACCT_MNT_ANY, .read_bytes = 1, .write_bytes = UINT64_MAX };
	peaks[1] = (struct ioacct_qpeak_row){ .job_key = 101, .step_id = 0,
		.mnt_id = (1ULL << 33) + 21 };
	rep->seq = 9;
	rep->jobs = jobs;
	rep->njobs = 2;
	rep->qsteps = steps;
	rep->nqsteps = 3;
	rep->qmounts = mounts;
	rep->nqmounts = 2;
	rep->qtotals = totals;
	rep->nqtotals = 3;
	rep->qpeaks = peaks;
	rep->nqpeaks = 2;
	rep->job_key = 101;
	rep->more = 1;
}

/* LIVE (ioacct top): a cluster or nothing; a job id is not part of it. */
static void test_live_roundtrip(void **state)
{
	struct ioacct_request in, out;
	struct ioacct_reply rin, rout;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_LIVE;
	in.seq = 9;
	in.u.query.job_id = 77;
	snprintf(in.u.query.cluster, sizeof(in.u.query.cluster), "hpc");
	roundtrip_request(&in, &out);
	assert_int_equal(out.type, IOACCT_MSG_LIVE);
	assert_string_equal(out.u.query.cluster, "hpc");
	assert_true(out.u.query.job_id == 0);
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_LIVE;
	roundtrip_request(&in, &out);
	assert_string_equal(out.u.query.cluster, "");

	/* The reply: QUERY's lists, the reading's clock, how many jobs the caller may see. */
	fill_query_reply(&rin);
	rin.start_mono_ns = 123456789012345ULL;
	rin.jobs_running = 5;
	roundtrip_reply(&rin, &rout);
	assert_true(rout.start_mono_ns == rin.start_mono_ns);
	assert_int_equal(rout.jobs_running, 5);
	assert_int_equal(rout.njobs, 2);
	assert_int_equal(rout.nqtotals, 3);
	assert_memory_equal(rout.qtotals, rin.qtotals, 3 * sizeof(*rin.qtotals));
	assert_int_equal(rout.more, 1);
	ioacct_reply_free(&rout);
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_LIVE), "live");
}

/* A job from the cluster store: its skew and its nodes' parts (attributes 73 to 78). */
static void test_node_parts_roundtrip(void **state)
{
	static struct ioacct_job job;
	static struct ioacct_qnode_row nodes[3];
	struct ioacct_reply in, out;

	(void)state;
	memset(&in, 0, sizeof(in));
	job.key = 42;
	job.job_id = 7001;
	strcpy(job.node, "n1,n2,n3");
	job.skew_ns = 2500000000ULL;
	for (int i = 0; i < 3; i++) {
		nodes[i].job_key = 42;
		snprintf(nodes[i].p.node, sizeof(nodes[i].p.node), "node%03d", i + 1);
		nodes[i].p.start_ns = 1700000000000000000LL + i;
		nodes[i].p.read_bytes = UINT64_MAX - (uint64_t)i;
		nodes[i].p.write_bytes = 3145728 + (uint64_t)i;
		nodes[i].p.reads = (uint64_t)i;
		nodes[i].p.writes = 3 + (uint64_t)i;
		nodes[i].p.ns = 1ULL << (40 + i);
	}
	in.jobs = &job;
	in.njobs = 1;
	in.qnodes = nodes;
	in.nqnodes = 3;
	roundtrip_reply(&in, &out);
	assert_int_equal(out.njobs, 1);
	assert_true(out.jobs[0].skew_ns == 2500000000ULL);
	assert_int_equal(out.nqnodes, 3);
	assert_memory_equal(out.qnodes, nodes, sizeof(nodes));
	ioacct_reply_free(&out);
	assert_null(out.qnodes);
	assert_true(ioacct_proto_node_row_size() > sizeof(nodes[0].p.node));
}

static void test_query_reply_roundtrip(void **state)
{
	struct ioacct_reply in, out;
	struct ioacct_buf b = { 0 };
	size_t bound = 0, base;

	(void)state;
	fill_query_reply(&in);
	roundtrip_reply(&in, &out);
	assert_int_equal(out.njobs, 2);
	/* has_array is not sent: 0 on both sides here; array_job_id says it. */
	assert_memory_equal(out.jobs, in.jobs, 2 * sizeof(*in.jobs));
	assert_int_equal(out.nqsteps, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(out.qsteps[i].job_key, in.qsteps[i].job_key);
		assert_int_equal(out.qsteps[i].step.step_id, in.qsteps[i].step.step_id);
		assert_int_equal(out.qsteps[i].step.start_ns, in.qsteps[i].step.start_ns);
		assert_int_equal(out.qsteps[i].step.end_ns, in.qsteps[i].step.end_ns);
		assert_string_equal(out.qsteps[i].step.state, in.qsteps[i].step.state);
		assert_int_equal(out.qsteps[i].step.exit_code, in.qsteps[i].step.exit_code);
	}
	assert_int_equal(out.nqmounts, 2);
	assert_memory_equal(out.qmounts, in.qmounts, 2 * sizeof(*in.qmounts));
	assert_int_equal(out.nqtotals, 3);
	assert_memory_equal(out.qtotals, in.qtotals, 3 * sizeof(*in.qtotals));
	assert_int_equal(out.nqpeaks, 2);
	assert_memory_equal(out.qpeaks, in.qpeaks, 2 * sizeof(*in.qpeaks));
	assert_int_equal(out.job_key, 101);
	assert_int_equal(out.more, 1);
	ioacct_reply_free(&out);
	assert_null(out.jobs);
	assert_null(out.qpeaks);
	assert_int_equal(out.nqtotals, 0);

	/* The size bound holds: what the jobs add is no more than the daemon counted. */
	memset(&out, 0, sizeof(out));
	out.status = 0;
	assert_int_equal(ioacct_proto_encode_reply(&b, &out), 0);
	base = b.len;
	ioacct_buf_reset(&b);
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	for (size_t i = 0; i < 2; i++) {
		size_t ns = 0, nt = 0, np = 0;
		struct ioacct_mount m[2];
		size_t nm = 0;

		for (size_t k = 0; k < in.nqsteps; k++)
			ns += in.qsteps[k].job_key == in.jobs[i].key;
		for (size_t k = 0; k < in.nqmounts; k++)
			if (in.qmounts[k].job_key == in.jobs[i].key)
				m[nm++] = in.qmounts[k].mount;
		for (size_t k = 0; k < in.nqtotals; k++)
			nt += in.qtotals[k].job_key == in.jobs[i].key;
		for (size_t k = 0; k < in.nqpeaks; k++)
			np += in.qpeaks[k].job_key == in.jobs[i].key;
		bound += ioacct_proto_query_job_size(&in.jobs[i], ns, m, nm, nt, np);
	}
	/* job_key and more are the page's own: 24 bytes at most. */
	assert_true(b.len - base <= bound + 24);
	ioacct_buf_free(&b);
}

static void test_query_reply_bad(void **state)
{
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	size_t off;
	uint8_t empty[4];

	(void)state;
	/* A job without its key. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_QJOB);
	raw_u64(&r, A_JOB_ID, 5);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply job 0 lacks attribute 20 (job_key)");
	assert_null(rep.jobs);
	free(r.p);

	/* A total nested in a job: one level too deep. */
	memset(&r, 0, sizeof(r));
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_QJOB);
	raw_u64(&r, A_JOB_KEY, 5);
	raw_u64(&r, A_JOB_ID, 5);
	raw_nest_end(&r, raw_nest_begin(&r, A_QTOTAL));
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply job 0: attribute 48 (total) nests deeper than 2 levels");
	free(r.p);

	/* More jobs than a reply may carry: refused before anything is allocated. */
	memset(&r, 0, sizeof(r));
	le16(empty, A_QJOB);
	le16(empty + 2, 0);
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	for (int i = 0; i < 4097; i++)
		raw_bytes(&r, empty, sizeof(empty));
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply message has 4097 jobs, more than 4096");
	assert_null(rep.jobs);
	free(r.p);
}

/* ---- job (one whole job through the daemon) ---- */

enum { A_MORE = 52, A_BIN = 58, A_QSERIES = 59 };

static void test_job_request_roundtrip(void **state)
{
	struct ioacct_request in, out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_JOB;
	in.seq = 9;
	in.u.job.job_id = UINT64_MAX;
	strcpy(in.u.job.cluster, "hpc");
	roundtrip_request(&in, &out);
	assert_memory_equal(&out.u.job, &in.u.job, sizeof(in.u.job));
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_JOB), "job");

	/* A later page: by key, after a cursor whose every part may be 0 or the largest. */
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_JOB;
	in.u.job.job_key = INT64_MAX;
	in.u.job.after = 1;
	in.u.job.after_step = IOACCT_STEP_BATCH;
	in.u.job.after_mnt = 0;
	in.u.job.after_op = IOACCT_OP_COUNT - 1;
	in.u.job.after_bin = UINT32_MAX;
	in.u.job.local = 1;
	roundtrip_request(&in, &out);
	assert_memory_equal(&out.u.job, &in.u.job, sizeof(in.u.job));
}

/* A page of a job: its row, a step, a mount, a total and series rows with bins. */
static void fill_job_reply(struct ioacct_reply *rep, struct ioacct_qtotal_row *series, size_t n)
{
	static struct ioacct_job job;
	static struct ioacct_qstep_row step;
	static struct ioacct_qmount_row mount;
	static struct ioacct_qtotal_row total;

	memset(rep, 0, sizeof(*rep));
	memset(&job, 0, sizeof(job));
	job.key = 42;
	job.job_id = 12;
	strcpy(job.cluster, "hpc");
	strcpy(job.user, "alice");
	job.uid = 1000;
	strcpy(job.state, "RUNNING");
	step = (struct ioacct_qstep_row){ .job_key = 42, .step = { .step_id = IOACCT_STEP_BATCH } };
	strcpy(step.step.state, "RUNNING");
	mount = (struct ioacct_qmount_row){ .job_key = 42, .mount = { .mnt_id = 21 } };
	strcpy(mount.mount.path, "/scratch");
	strcpy(mount.mount.fstype, "lustre");
	total = (struct ioacct_qtotal_row){ .job_key = 42, .s = { .step_id = IOACCT_STEP_BATCH,
			.mnt_id = 21, .op = IOACCT_OP_WRITE } };
	total.s.c.bytes = 1;
	for (size_t i = 0; i < n; i++) {
		memset(&series[i], 0, sizeof(series[i]));
		series[i].job_key = 42;
		series[i].s.step_id = IOACCT_STEP_BATCH;
		series[i].s.mnt_id = 21;
		series[i].s.op = IOACCT_OP_WRITE;
		series[i].s.bin = i ? UINT32_MAX - (uint32_t)(n - i) : 0;
		series[i].s.c.bytes = UINT64_MAX - i;
		series[i].s.c.calls = i;
		series[i].s.c.ns = 7;
		series[i].s.c.size_hist[IOACCT_NR_SIZE_BINS - 1] = i + 1;
	}
	rep->jobs = &job;
	rep->njobs = 1;
	rep->qsteps = &step;
	rep->nqsteps = 1;
	rep->qmounts = &mount;
	rep->nqmounts = 1;
	rep->qtotals = &total;
	rep->nqtotals = 1;
	rep->qseries = series;
	rep->nqseries = n;
	rep->job_key = 42;
	rep->more = 1;
}

static void test_job_reply_roundtrip(void **state)
{
	struct ioacct_qtotal_row series[5];
	struct ioacct_reply in, out, empty = { 0 };
	struct ioacct_buf b = { 0 };
	size_t base;

	(void)state;
	fill_job_reply(&in, series, 5);
	roundtrip_reply(&in, &out);
	assert_int_equal(out.njobs, 1);
	assert_memory_equal(out.jobs, in.jobs, sizeof(*in.jobs));
	assert_int_equal(out.nqtotals, 1);
	assert_memory_equal(out.qtotals, in.qtotals, sizeof(*in.qtotals));
	/* Series rows keep their bins, the first one's 0 too; totals none. */
	assert_int_equal(out.nqseries, 5);
	assert_memory_equal(out.qseries, series, sizeof(series));
	assert_int_equal(out.qtotals[0].s.bin, 0);
	assert_int_equal(out.more, 1);
	assert_int_equal(out.job_key, 42);
	ioacct_reply_free(&out);
	assert_null(out.qseries);
	assert_int_equal(out.nqseries, 0);

	/* Each series row adds no more than the bound the daemon fills its pages by. */
	assert_int_equal(ioacct_proto_encode_reply(&b, &empty), 0);
	base = b.len;
	ioacct_buf_reset(&b);
	in.njobs = in.nqsteps = in.nqmounts = in.nqtotals = 0;
	in.job_key = 0;
	in.more = 0;
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	assert_true(b.len - base <= 5 * ioacct_proto_series_row_size());
	ioacct_buf_free(&b);
}

/* A snapshot reply's watched cgroups (iotrace --job), with the rows; a v1 one and a longest path. */
static void test_snapshot_watches_roundtrip(void **state)
{
	struct ioacct_snap_row rows[2];
	struct ioacct_watch_row w[3];
	struct ioacct_reply in, out;

	(void)state;
	fill_reply(&in, rows, 2);
	memset(w, 0, sizeof(w));
	w[0].step_id = 0;
	w[0].hier = IOACCT_HIER_V2;
	snprintf(w[0].cgroup, sizeof(w[0].cgroup), "/sys/fs/cgroup/ioacct/iorun-42");
	w[1].step_id = 4294967294U;
	w[1].hier = IOACCT_HIER_V1;
	snprintf(w[1].cgroup, sizeof(w[1].cgroup), "/sys/fs/cgroup/memory/slurm/uid_0/job_42/step_batch");
	w[2].step_id = 3;
	w[2].hier = IOACCT_HIER_V2;
	memset(w[2].cgroup, 'c', sizeof(w[2].cgroup) - 1);
	in.watches = w;
	in.nwatches = 3;
	roundtrip_reply(&in, &out);
	assert_reply_equal(&in, &out);
	assert_int_equal(out.nwatches, 3);
	assert_memory_equal(out.watches, w, sizeof(w));
	ioacct_reply_free(&out);
	assert_null(out.watches);
	assert_int_equal(out.nwatches, 0);
}

static void test_job_reply_bad(void **state)
{
	struct ioacct_qtotal_row series[3];
	struct ioacct_reply in, rep;
	struct ioacct_buf b = { 0 };
	struct raw r = { 0 };
	char err[256];
	size_t off;
	uint8_t *m;

	(void)state;
	/* A series row without its op. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_QSERIES);
	raw_u64(&r, A_JOB_KEY, 5);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_MNT_ID, 21);
	raw_u32(&r, A_BIN, 3);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply series row 0 lacks attribute 33 (op)");
	assert_null(rep.qseries);
	free(r.p);

	/* A bin of the wrong size. */
	memset(&r, 0, sizeof(r));
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_QSERIES);
	raw_u64(&r, A_JOB_KEY, 5);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_MNT_ID, 21);
	raw_u32(&r, A_OP, 1);
	raw_u64(&r, A_BIN, 3);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply series row 0: attribute 58 (bin) has length 8, expected 4");
	free(r.p);

	/* A cursor flag of the wrong size in a request. */
	memset(&r, 0, sizeof(r));
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_JOB, 1);
	raw_u64(&r, A_JOB_ID, 12);
	raw_u64(&r, A_MORE, 1);
	raw_finish(&r);
	{
		struct ioacct_request req;

		assert_int_equal(ioacct_proto_decode_request(r.p, r.len, &req, err, sizeof(err)),
				 -EPROTO);
		assert_string_equal(err, "job message: attribute 52 (more) has length 8, expected 4");
	}
	free(r.p);

	/* Cut anywhere, a page of a job is refused, never half taken. */
	fill_job_reply(&in, series, 3);
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	for (size_t len = 0; len < b.len; len++) {
		m = malloc(len ? len : 1);
		assert_non_null(m);
		memcpy(m, b.data, len);
		if (len >= HDR)
			le32(m + 8, (uint32_t)(len - HDR));
		if (ioacct_proto_decode_reply(m, len, &rep, err, sizeof(err)) == 0) {
			/* Whole attributes dropped off the end: fewer rows, never a torn one. */
			assert_true(rep.nqseries < 3 || len % 4 == 0);
			ioacct_reply_free(&rep);
		} else {
			assert_null(rep.qseries);
		}
		free(m);
	}
	ioacct_buf_free(&b);
}

/* ---- a job's per-file records (issue 26) ---- */

enum { A_FILES = 90, A_QFILE = 91, A_FILE_PATH = 94 };

/* Record i, every field its own value: negatives, the largest, paths as hostile as they come. */
static void fill_file(struct ioacct_qfile_row *row, size_t i)
{
	struct ioacct_file *f = &row->f;
	uint64_t *u[] = { &f->opens, &f->reads, &f->writes, &f->stats, &f->fsyncs, &f->bytes_read,
			  &f->bytes_written, &f->read_ns, &f->write_ns, &f->meta_ns, &f->seq_reads,
			  &f->seq_writes, &f->consec_reads, &f->consec_writes, &f->mmap_bytes,
			  &f->cache_miss_bytes, &f->seeks };

	memset(row, 0, sizeof(*row));
	row->job_key = 42;
	f->step_id = i == 0 ? IOACCT_STEP_BATCH : (uint32_t)i;
	f->rank = i == 1 ? -1 : i == 2 ? INT32_MAX : (int32_t)i;
	f->mnt_id = 21 + (uint32_t)i;
	f->dev = i == 3 ? 0 : (259U << 20) | (uint32_t)i; /* 3: the mount's "other files" */
	f->ino = i == 3 ? 0 : i == 2 ? UINT64_MAX : 1000 + i;
	f->part = i == 2 ? UINT32_MAX : (uint32_t)i;
	for (size_t k = 0; k < ARRAY_SIZE(u); k++)
		*u[k] = i == 2 ? UINT64_MAX - k : 1000 * (i + 1) + k;
	f->max_byte_read = i == 1 ? -1 : INT64_MAX - (int64_t)i;
	f->max_byte_written = i == 1 ? -1 : (int64_t)i * 4096 - 1;
	f->first_read_ns = i == 1 ? -1 : 5;
	f->last_read_ns = i == 1 ? -1 : INT64_MAX;
	f->first_write_ns = INT64_MIN + (int64_t)i;
	f->last_write_ns = -1;
	for (size_t b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
		f->size_read[b] = i * 100 + b;
		f->size_written[b] = b == IOACCT_NR_SIZE_BINS - 1 ? UINT64_MAX : i + b;
	}
	switch (i) {
	case 0: /* a newline and a tab: a report line of its own if not escaped */
		strcpy(f->path, "/scratch/out\nFAKE: 1\t.dat");
		break;
	case 1: /* not UTF-8: a lone continuation byte, an overlong '/', a lone 0xff */
		strcpy(f->path, "/scratch/\x80\xc0\xaf\xff.bin");
		break;
	case 2: /* the longest path a record holds: 1023 bytes */
		memset(f->path, 'p', sizeof(f->path) - 1);
		f->path[0] = '/';
		break;
	case 3: /* "other files": no path */
		break;
	default:
		snprintf(f->path, sizeof(f->path), "/scratch/f%zu", i);
	}
}

static void test_job_files_roundtrip(void **state)
{
	struct ioacct_qfile_row files[5];
	struct ioacct_reply in = { 0 }, out;
	struct ioacct_job job = { .key = 42, .job_id = 12 };
	struct ioacct_buf b = { 0 }, e = { 0 };
	struct ioacct_request rq, rq_out;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		fill_file(&files[i], i);
	assert_int_equal(strlen(files[2].f.path), 1023);
	in.jobs = &job;
	in.njobs = 1;
	in.job_key = 42;
	in.files_read = 1;
	in.qfiles = files;
	in.nqfiles = ARRAY_SIZE(files);
	in.more = 1;
	roundtrip_reply(&in, &out);
	assert_int_equal(out.files_read, 1);
	assert_int_equal(out.more, 1);
	assert_int_equal(out.nqfiles, ARRAY_SIZE(files));
	/* Every field, every byte of every path. */
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		assert_memory_equal(&out.qfiles[i], &files[i], sizeof(files[i]));
	assert_string_equal(out.qfiles[1].f.path, "/scratch/\x80\xc0\xaf\xff.bin");
	ioacct_reply_free(&out);
	assert_null(out.qfiles);

	/* A file row adds no more than the bound the daemon fills its pages by, the longest path too. */
	in.qfiles = NULL;
	in.nqfiles = 0;
	assert_int_equal(ioacct_proto_encode_reply(&e, &in), 0);
	in.qfiles = &files[2];
	in.nqfiles = 1;
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	assert_true(b.len - e.len <= ioacct_proto_file_row_size());
	ioacct_buf_free(&b);
	ioacct_buf_free(&e);

	/* A reply without files (an older daemon's) decodes as "not read". */
	in.files_read = 0;
	in.qfiles = NULL;
	in.nqfiles = 0;
	roundtrip_reply(&in, &out);
	assert_int_equal(out.files_read, 0);
	assert_null(out.qfiles);
	ioacct_reply_free(&out);

	/* A path of 1024 bytes does not fit a record: the encoder refuses it, whole. */
	memset(files[4].f.path, 'q', sizeof(files[4].f.path));
	in.qfiles = files;
	in.nqfiles = ARRAY_SIZE(files);
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), -EINVAL);
	assert_int_equal(b.len, 0);
	ioacct_buf_free(&b);

	/* The request for a page of them, with a file cursor at its extremes. */
	memset(&rq, 0, sizeof(rq));
	rq.type = IOACCT_MSG_JOB;
	rq.u.job.job_key = 42;
	rq.u.job.files = 1;
	rq.u.job.after = 1;
	rq.u.job.after_step = IOACCT_STEP_BATCH;
	rq.u.job.after_rank = -1;
	rq.u.job.after_mnt = UINT32_MAX;
	rq.u.job.after_dev = UINT32_MAX;
	rq.u.job.after_ino = UINT64_MAX;
	rq.u.job.after_part = UINT32_MAX;
	roundtrip_request(&rq, &rq_out);
	assert_memory_equal(&rq_out.u.job, &rq.u.job, sizeof(rq.u.job));
}

/* What a peer may not send in a file row. */
static void test_job_files_bad(void **state)
{
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256], path[1025];
	size_t off;

	(void)state;
	/* A file row without its mount. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	raw_u32(&r, A_FILES, 1);
	off = raw_nest_begin(&r, A_QFILE);
	raw_u64(&r, A_JOB_KEY, 5);
	raw_u32(&r, A_STEP_ID, 0);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply file 0 lacks attribute 150 (mnt_key)");
	assert_null(rep.qfiles);
	free(r.p);

	/* A path longer than a record holds. */
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	memset(&r, 0, sizeof(r));
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_QFILE);
	raw_u64(&r, A_JOB_KEY, 5);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_MNT_ID, 21);
	raw_str(&r, A_FILE_PATH, path);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply file 0: attribute 94 (file_path) has length 1024, more than 1023");
	free(r.p);
}

/* A page of file rows cut anywhere, bytes flipped: refused or taken whole, never overread. */
static void test_job_files_fuzz(void **state)
{
	struct ioacct_qfile_row files[4];
	struct ioacct_job job = { .key = 42, .job_id = 12 };
	struct ioacct_reply in = { 0 }, rep;
	struct ioacct_buf b = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned int ok = 0, bad = 0;
	char err[256];
	uint8_t *m;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		fill_file(&files[i], i);
	in.jobs = &job;
	in.njobs = 1;
	in.files_read = 1;
	in.qfiles = files;
	in.nqfiles = ARRAY_SIZE(files);
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	for (size_t len = 0; len < b.len; len += 1 + len / 64) {
		m = malloc(len ? len : 1);
		assert_non_null(m);
		memcpy(m, b.data, len);
		if (len >= HDR)
			le32(m + 8, (uint32_t)(len - HDR));
		if (ioacct_proto_decode_reply(m, len, &rep, err, sizeof(err)) == 0) {
			assert_true(rep.nqfiles < ARRAY_SIZE(files) || len % 4 == 0);
			ioacct_reply_free(&rep);
		} else {
			assert_null(rep.qfiles);
		}
		free(m);
	}
	for (int iter = 0; iter < 5000; iter++) {
		m = malloc(b.len);
		assert_non_null(m);
		memcpy(m, b.data, b.len);
		for (int f = 0; f < 3; f++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			m[HDR + x % (b.len - HDR)] ^= (uint8_t)(1 + (x >> 32) % 255);
		}
		if (ioacct_proto_decode_reply(m, b.len, &rep, err, sizeof(err)) == 0) {
			ok++;
			for (size_t i = 0; i < rep.nqfiles; i++)
				assert_true(strnlen(rep.qfiles[i].f.path, sizeof(rep.qfiles[i].f.path)) <
					    sizeof(rep.qfiles[i].f.path));
			ioacct_reply_free(&rep);
		} else {
			bad++;
			assert_null(rep.qfiles);
		}
		free(m);
	}
	/* Both outcomes happen, or the loop tested less than it claims. */
	assert_true(ok > 100);
	assert_true(bad > 100);
	ioacct_buf_free(&b);
}

/* ---- a job's MPI-IO records (issue 27) ---- */

static void test_job_mpiio_roundtrip(void **state)
{
	struct ioacct_qmpiio_row rows[3];
	struct ioacct_reply in = { 0 }, out;
	struct ioacct_job job = { .key = 42, .job_id = 12 };
	struct ioacct_buf b = { 0 }, e = { 0 };
	struct ioacct_request rq, rq_out;

	(void)state;
	memset(rows, 0, sizeof(rows));
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ioacct_mpiio *m = &rows[i].m;
#define MPIIO_FILL(name) m->name = i == 2 ? UINT64_MAX - __LINE__ : 1000 * (i + 1) + __LINE__;
		IOACCT_MPIIO_COUNTERS(MPIIO_FILL)
#undef MPIIO_FILL
		rows[i].job_key = 42;
		m->step_id = i == 0 ? IOACCT_STEP_BATCH : (uint32_t)i;
		m->rank = i == 1 ? -1 : (int32_t)i;
		m->pid = i == 2 ? UINT32_MAX : 4000 + (uint32_t)i;
		m->part = i == 2 ? UINT32_MAX : (uint32_t)i;
		for (size_t k = 0; k < IOACCT_NR_SIZE_BINS; k++) {
			m->size_read[k] = i * 100 + k;
			m->size_written[k] = k == 9 ? UINT64_MAX : i + k;
		}
	}
	strcpy(rows[0].m.path, "ufs:/scratch/out\nFAKE: 1\t.dat");
	strcpy(rows[1].m.path, "/scratch/\x80\xc0\xaf\xff.bin");
	memset(rows[2].m.path, 'p', sizeof(rows[2].m.path) - 1);
	in.jobs = &job;
	in.njobs = 1;
	in.job_key = 42;
	in.mpiio_read = 1;
	in.qmpiio = rows;
	in.nqmpiio = ARRAY_SIZE(rows);
	in.more = 1;
	roundtrip_reply(&in, &out);
	assert_int_equal(out.mpiio_read, 1);
	assert_int_equal(out.more, 1);
	assert_int_equal(out.nqmpiio, ARRAY_SIZE(rows));
	/* Every field, every byte of every path. */
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_memory_equal(&out.qmpiio[i], &rows[i], sizeof(rows[i]));
	ioacct_reply_free(&out);
	assert_null(out.qmpiio);

	/* A row adds no more than the bound the daemon fills its pages by, the longest path too. */
	in.qmpiio = NULL;
	in.nqmpiio = 0;
	assert_int_equal(ioacct_proto_encode_reply(&e, &in), 0);
	in.qmpiio = &rows[2];
	in.nqmpiio = 1;
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	assert_true(b.len - e.len <= ioacct_proto_mpiio_row_size());
	ioacct_buf_free(&b);
	ioacct_buf_free(&e);

	/* A reply without them (an older daemon's) decodes as "not read". */
	in.mpiio_read = 0;
	in.qmpiio = NULL;
	in.nqmpiio = 0;
	roundtrip_reply(&in, &out);
	assert_int_equal(out.mpiio_read, 0);
	assert_null(out.qmpiio);
	ioacct_reply_free(&out);

	/* The request for a page of them, the cursor's path the longest. */
	memset(&rq, 0, sizeof(rq));
	rq.type = IOACCT_MSG_JOB;
	rq.u.job.job_key = 42;
	rq.u.job.mpiio = 1;
	rq.u.job.after = 1;
	rq.u.job.after_step = IOACCT_STEP_BATCH;
	rq.u.job.after_rank = -1;
	rq.u.job.after_pid = INT32_MAX;
	rq.u.job.after_part = UINT32_MAX;
	memset(rq.u.job.after_path, 'p', sizeof(rq.u.job.after_path) - 1);
	roundtrip_request(&rq, &rq_out);
	assert_int_equal(rq_out.u.job.mpiio, 1);
	assert_int_equal(rq_out.u.job.after_rank, -1);
	assert_int_equal(rq_out.u.job.after_pid, INT32_MAX);
	assert_int_equal(rq_out.u.job.after_part, UINT32_MAX);
	assert_int_equal(rq_out.u.job.after_step, IOACCT_STEP_BATCH);
	assert_string_equal(rq_out.u.job.after_path, rq.u.job.after_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_roundtrip),
		cmocka_unit_test(test_query_request_roundtrip),
		cmocka_unit_test(test_query_reply_roundtrip),
		cmocka_unit_test(test_node_parts_roundtrip),
		cmocka_unit_test(test_query_reply_bad),
		cmocka_unit_test(test_job_request_roundtrip),
		cmocka_unit_test(test_job_reply_roundtrip),
		cmocka_unit_test(test_snapshot_watches_roundtrip),
		cmocka_unit_test(test_job_reply_bad),
		cmocka_unit_test(test_job_files_roundtrip),
		cmocka_unit_test(test_job_files_bad),
		cmocka_unit_test(test_job_files_fuzz),
		cmocka_unit_test(test_job_mpiio_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
