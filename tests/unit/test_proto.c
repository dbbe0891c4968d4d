/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the wire protocol: round trips, every class of malformed
 * message, a deterministic fuzz loop. The query, live and job messages and
 * their rows: test_proto_query.c; the transport over real sockets and the
 * client's call (lib/core/proto_io.c): test_proto_io.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto.h"
#include "protobuild.h"

/* ---- round trips ---- */

static void test_register_roundtrip(void **state)
{
	struct ioacct_request in, out;
	const struct ioacct_req_register *a = &in.u.reg, *b = &out.u.reg;

	(void)state;
	fill_register(&in);
	roundtrip_request(&in, &out);
	assert_true(a->job_id == b->job_id);
	assert_int_equal(a->step_id, b->step_id);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_int_equal(a->pid, b->pid);
	assert_string_equal(a->cgroup, b->cgroup);
	assert_string_equal(a->cluster, b->cluster);
	assert_string_equal(a->source, b->source);
	assert_string_equal(a->user, b->user);
	assert_string_equal(a->job_name, b->job_name);
	assert_string_equal(a->workdir, b->workdir);
	assert_true(a->bin_width_ns == b->bin_width_ns);
	assert_int_equal(a->has_array, b->has_array);
	assert_int_equal(a->array_job_id, b->array_job_id);
	assert_int_equal(a->array_task_id, b->array_task_id);
	/* Attribute 70: past the first word of the decoder's seen set. */
	assert_string_equal(a->node_name, b->node_name);
	/* sbatch --io-monitor=trace: attributes 62 and 63. */
	assert_true(a->trace_max == b->trace_max);
	assert_int_equal(a->task_rank, b->task_rank);
}

static void test_register_longest_strings(void **state)
{
	struct ioacct_request in, out;

	(void)state;
	fill_register(&in);
	memset(in.u.reg.cgroup, 'c', sizeof(in.u.reg.cgroup) - 1);
	memset(in.u.reg.workdir, 'w', sizeof(in.u.reg.workdir) - 1);
	memset(in.u.reg.job_name, 'n', sizeof(in.u.reg.job_name) - 1);
	roundtrip_request(&in, &out);
	assert_string_equal(in.u.reg.cgroup, out.u.reg.cgroup);
	assert_string_equal(in.u.reg.workdir, out.u.reg.workdir);
	assert_string_equal(in.u.reg.job_name, out.u.reg.job_name);
}

static void fill_finish(struct ioacct_request *req, uint16_t type)
{
	memset(req, 0, sizeof(*req));
	req->type = type;
	req->seq = 3;
	req->u.fin.job_id = 1ULL << 50;
	req->u.fin.step_id = 12;
	snprintf(req->u.fin.cluster, sizeof(req->u.fin.cluster), "hpc");
	snprintf(req->u.fin.state, sizeof(req->u.fin.state), "CANCELLED");
	req->u.fin.exit_code = -9;
}

static void test_finish_step_roundtrip(void **state)
{
	struct ioacct_request in, out;

	(void)state;
	fill_finish(&in, IOACCT_MSG_FINISH_STEP);
	roundtrip_request(&in, &out);
	assert_true(out.u.fin.job_id == in.u.fin.job_id);
	assert_int_equal(out.u.fin.step_id, 12);
	assert_string_equal(out.u.fin.cluster, "hpc");
	assert_string_equal(out.u.fin.state, "CANCELLED");
	assert_int_equal(out.u.fin.exit_code, -9);
}

/* probe_exe (issue 39): the step whose task executes the program; its file goes beside it. */
static void test_probe_exe_roundtrip(void **state)
{
	struct ioacct_request in = { .type = IOACCT_MSG_PROBE_EXE, .seq = 4 }, out;

	(void)state;
	in.u.probe.job_id = 1ULL << 40;
	in.u.probe.step_id = 0xfffffffbU;
	ioacct_strlcpy(in.u.probe.cluster, "hpc", sizeof(in.u.probe.cluster));
	roundtrip_request(&in, &out);
	assert_true(out.u.probe.job_id == 1ULL << 40);
	assert_int_equal(out.u.probe.step_id, 0xfffffffbU);
	assert_string_equal(out.u.probe.cluster, "hpc");
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_PROBE_EXE), "probe_exe");
}

static void test_finish_job_roundtrip(void **state)
{
	struct ioacct_request in, out;

	(void)state;
	fill_finish(&in, IOACCT_MSG_FINISH_JOB);
	roundtrip_request(&in, &out);
	assert_true(out.u.fin.job_id == in.u.fin.job_id);
	/* A job has no step: the field is not carried. */
	assert_int_equal(out.u.fin.step_id, 0);
	assert_string_equal(out.u.fin.cluster, "hpc");
	assert_string_equal(out.u.fin.state, "CANCELLED");
	assert_int_equal(out.u.fin.exit_code, -9);
	/* No report sent: none decoded. */
	assert_string_equal(out.u.fin.report.path, "");
	assert_int_equal(out.u.fin.report.formats, 0);
}

/* The epilog's report spec travels with FINISH_JOB; the reply says whether the daemon took it. */
static void test_finish_job_report_roundtrip(void **state)
{
	static struct ioacct_request in, out;
	static struct ioacct_reply rin, rout;
	size_t i;

	(void)state;
	fill_finish(&in, IOACCT_MSG_FINISH_JOB);
	ioacct_strlcpy(in.u.fin.report.path, "/home/u/ioacct-%j.txt", sizeof(in.u.fin.report.path));
	in.u.fin.report.formats = 5;
	/* The longest node list that fits. */
	for (i = 0; i + 1 < sizeof(in.u.fin.report.nodes); i++)
		in.u.fin.report.nodes[i] = i % 4 == 3 ? ',' : 'n';
	in.u.fin.report.nodes[i] = '\0';
	ioacct_strlcpy(in.u.fin.report.copy_dir, "/var/log/ioacct", sizeof(in.u.fin.report.copy_dir));
	in.u.fin.uid = 1001;
	in.u.fin.gid = 1002;
	ioacct_strlcpy(in.u.fin.user, "alice", sizeof(in.u.fin.user));
	ioacct_strlcpy(in.u.fin.node_name, "mc3", sizeof(in.u.fin.node_name));
	ioacct_strlcpy(in.u.fin.workdir, "/home/alice", sizeof(in.u.fin.workdir));
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.fin.uid, 1001);
	assert_int_equal(out.u.fin.gid, 1002);
	assert_string_equal(out.u.fin.user, "alice");
	assert_string_equal(out.u.fin.node_name, "mc3");
	assert_string_equal(out.u.fin.workdir, "/home/alice");
	assert_string_equal(out.u.fin.report.path, in.u.fin.report.path);
	assert_int_equal(out.u.fin.report.formats, 5);
	assert_string_equal(out.u.fin.report.nodes, in.u.fin.report.nodes);
	assert_string_equal(out.u.fin.report.copy_dir, "/var/log/ioacct");
	/* FINISH_STEP carries none of it. */
	in.type = IOACCT_MSG_FINISH_STEP;
	roundtrip_request(&in, &out);
	assert_string_equal(out.u.fin.report.path, "");
	assert_string_equal(out.u.fin.report.nodes, "");
	assert_string_equal(out.u.fin.node_name, "");

	memset(&rin, 0, sizeof(rin));
	rin.job_key = 7;
	rin.report_merged = 1;
	roundtrip_reply(&rin, &rout);
	assert_int_equal(rout.report_merged, 1);
	rin.report_merged = 0;
	roundtrip_reply(&rin, &rout);
	assert_int_equal(rout.report_merged, 0);
}

/*
 * A requeued job's run (issue 28): the restart count on register, finish
 * and a job row, the run a job request asks for, a query's duplicates. An
 * older peer sends none of them: they read 0, the first run, the last run,
 * the last runs only.
 */
static void test_restart_roundtrip(void **state)
{
	static struct ioacct_request in, out;
	static struct ioacct_reply rin, rout;
	static struct ioacct_job job = { .key = 4, .job_id = 88, .restart = 3 };

	(void)state;
	fill_register(&in);
	in.u.reg.restart = 2;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.reg.restart, 2);
	in.u.reg.restart = 0;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.reg.restart, 0);

	fill_finish(&in, IOACCT_MSG_FINISH_JOB);
	in.u.fin.restart = 1;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.fin.restart, 1);
	/* A step's finish does not carry it. */
	in.type = IOACCT_MSG_FINISH_STEP;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.fin.restart, 0);

	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_QUERY;
	in.u.select.duplicates = 1;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.select.duplicates, 1);
	in.u.select.duplicates = 0;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.select.duplicates, 0);

	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_JOB;
	in.u.job.job_id = 88;
	in.u.job.run = 1;
	roundtrip_request(&in, &out);
	assert_true(out.u.job.job_id == 88);
	assert_int_equal(out.u.job.run, 1);

	memset(&rin, 0, sizeof(rin));
	rin.jobs = &job;
	rin.njobs = 1;
	roundtrip_reply(&rin, &rout);
	assert_int_equal(rout.njobs, 1);
	assert_int_equal(rout.jobs[0].restart, 3);
	ioacct_reply_free(&rout);
}

/* A page of HDF5 records (issue 39): every field of each, its times (schema 22) too. */
static void test_h5_rows_roundtrip(void **state)
{
	static struct ioacct_qh5_row rows[3];
	static struct ioacct_reply rin, rout;
	static struct ioacct_job job = { .key = 4, .job_id = 88 };
	uint64_t v = 1;

	(void)state;
	memset(&rin, 0, sizeof(rin));
	for (int i = 0; i < 3; i++) {
		struct ioacct_h5rec *h = &rows[i].h;

		rows[i].job_key = 4;
		h->step_id = 1;
		h->rank = i;
		h->pid = 100 + i;
		h->kind = i ? IOACCT_H5REC_DATASET : IOACCT_H5REC_FILE;
		snprintf(h->name, sizeof(h->name), i ? "/w/f.h5:/d%d" : "/w/f.h5", i);
#define H5_FILL(name) h->name = (v << (v % 40)) + v, v++;
		IOACCT_H5_COUNTERS(H5_FILL)
#undef H5_FILL
		h->max_write_size = UINT64_MAX;
		h->size_read[9] = v++;
		h->size_written[0] = v++;
	}
	rin.jobs = &job;
	rin.njobs = 1;
	rin.hdf5_read = 1;
	rin.qh5 = rows;
	rin.nqh5 = 3;
	roundtrip_reply(&rin, &rout);
	assert_int_equal(rout.hdf5_read, 1);
	assert_int_equal(rout.nqh5, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&rout.qh5[i], &rows[i], sizeof(rows[i]));
	ioacct_reply_free(&rout);
}

/*
 * A page of RPC rows (issue 40): every field of each, a mount key past 32
 * bits, an unattributed row; and a request's cursor of them.
 */
static void test_rpc_rows_roundtrip(void **state)
{
	static struct ioacct_qrpc_row rows[3];
	static struct ioacct_reply rin, rout;
	static struct ioacct_job job = { .key = 4, .job_id = 88 };
	struct ioacct_request in, out;
	uint64_t v = 1;

	(void)state;
	memset(&rin, 0, sizeof(rin));
	for (int i = 0; i < 3; i++) {
		struct ioacct_rpc *r = &rows[i].r;

		rows[i].job_key = 4;
		r->step_id = i ? IOACCT_STEP_BATCH : 0;
		r->bin = i == 2 ? 0 : 1000 + (uint32_t)i;
		r->mnt_id = i ? (1ULL << 40) + 3 : 27;
		r->prog = 100003;
		r->vers = 3 + (uint32_t)i % 2;
		r->proc = 38 + (uint32_t)i;
		r->flags = i == 2 ? IOACCT_RPC_UNATTRIBUTED : 0;
		snprintf(r->name, sizeof(r->name), i ? "DELEGRETURN_%031d" : "WRITE", i);
#define RPC_FILL(name) r->name = (v << (v % 50)) + v, v++;
		IOACCT_RPC_COUNTERS(RPC_FILL)
#undef RPC_FILL
	}
	rows[1].r.execute_ns = UINT64_MAX;
	assert_int_equal(strlen(rows[1].r.name), IOACCT_RPC_NAME_MAX - 1);
	rin.jobs = &job;
	rin.njobs = 1;
	rin.rpc_read = 1;
	rin.qrpc = rows;
	rin.nqrpc = 3;
	roundtrip_reply(&rin, &rout);
	assert_int_equal(rout.rpc_read, 1);
	assert_int_equal(rout.nqrpc, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&rout.qrpc[i], &rows[i], sizeof(rows[i]));
	assert_string_equal(rout.qrpc[0].r.name, "WRITE");
	ioacct_reply_free(&rout);

	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_JOB;
	in.u.job.job_key = 4;
	in.u.job.rpc = 1;
	in.u.job.after = 1;
	in.u.job.after_step = IOACCT_STEP_BATCH;
	in.u.job.after_mnt = (1ULL << 40) + 3;
	in.u.job.after_prog = 100003;
	in.u.job.after_vers = 4;
	in.u.job.after_proc = 39;
	in.u.job.after_flags = IOACCT_RPC_UNATTRIBUTED;
	in.u.job.after_bin = 1001;
	roundtrip_request(&in, &out);
	assert_int_equal(out.u.job.rpc, 1);
	assert_int_equal(out.u.job.after_step, IOACCT_STEP_BATCH);
	assert_true(out.u.job.after_mnt == (1ULL << 40) + 3);
	assert_int_equal(out.u.job.after_prog, 100003);
	assert_int_equal(out.u.job.after_vers, 4);
	assert_int_equal(out.u.job.after_proc, 39);
	assert_int_equal(out.u.job.after_flags, IOACCT_RPC_UNATTRIBUTED);
	assert_int_equal(out.u.job.after_bin, 1001);
}

static void test_status_snapshot_roundtrip(void **state)
{
	struct ioacct_request in, out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_STATUS;
	in.seq = 1;
	snprintf(in.u.query.cluster, sizeof(in.u.query.cluster), "hpc");
	roundtrip_request(&in, &out);
	assert_string_equal(out.u.query.cluster, "hpc");

	in.type = IOACCT_MSG_SNAPSHOT;
	in.u.query.job_id = 77;
	roundtrip_request(&in, &out);
	assert_true(out.u.query.job_id == 77);
	assert_string_equal(out.u.query.cluster, "hpc");

	/* STATUS has nothing required: an empty payload is a whole message. */
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_STATUS;
	roundtrip_request(&in, &out);
	assert_int_equal(out.type, IOACCT_MSG_STATUS);
}

static void test_reply_roundtrip(void **state)
{
	struct ioacct_snap_row rows[3];
	struct ioacct_reply in, out;

	(void)state;
	fill_reply(&in, rows, 3);
	roundtrip_reply(&in, &out);
	assert_reply_equal(&in, &out);
	ioacct_reply_free(&out);
	assert_null(out.rows);
	assert_int_equal(out.nrows, 0);
}

static void test_required_only(void **state)
{
	struct ioacct_request in, out;
	struct ioacct_reply rin, rout;
	struct ioacct_buf b = { 0 };

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_REGISTER;
	in.u.reg.pid = 1;
	roundtrip_request(&in, &out);
	assert_true(out.u.reg.job_id == 0);
	assert_int_equal(out.u.reg.pid, 1);
	assert_string_equal(out.u.reg.cgroup, "");

	/* A cgroup instead of a pid does too. */
	in.u.reg.pid = 0;
	snprintf(in.u.reg.cgroup, sizeof(in.u.reg.cgroup), "/job_1");
	roundtrip_request(&in, &out);
	assert_string_equal(out.u.reg.cgroup, "/job_1");

	/* job_id, step_id, uid, gid are sent though zero; nothing else. */
	in.u.reg.cgroup[0] = '\0';
	in.u.reg.pid = 1;
	encode_req(&b, &in);
	assert_int_equal(b.len, HDR + 12 + 4 * 8);

	memset(&rin, 0, sizeof(rin));
	rin.seq = 5;
	ioacct_buf_reset(&b);
	assert_int_equal(ioacct_proto_encode_reply(&b, &rin), 0);
	assert_int_equal(b.len, HDR + 8); /* the status alone */
	assert_int_equal(ioacct_proto_decode_reply(b.data, b.len, &rout, NULL, 0), 0);
	assert_reply_equal(&rin, &rout);
	assert_null(rout.rows);
	ioacct_reply_free(&rout);
	ioacct_buf_free(&b);
}

static void test_encode_appends(void **state)
{
	struct ioacct_request a, b, out;
	struct ioacct_buf buf = { 0 };
	size_t first;

	(void)state;
	fill_register(&a);
	fill_finish(&b, IOACCT_MSG_FINISH_STEP);
	assert_int_equal(ioacct_proto_encode_request(&buf, &a), 0);
	first = buf.len;
	assert_int_equal(ioacct_proto_encode_request(&buf, &b), 0);
	assert_int_equal(ioacct_proto_decode_request(buf.data, first, &out, NULL, 0), 0);
	assert_int_equal(out.type, IOACCT_MSG_REGISTER);
	assert_int_equal(ioacct_proto_decode_request(buf.data + first, buf.len - first, &out, NULL, 0),
			 0);
	assert_int_equal(out.type, IOACCT_MSG_FINISH_STEP);
	ioacct_buf_free(&buf);
	ioacct_buf_free(&buf);
	ioacct_buf_free(NULL);
}

static void test_encode_errors(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct ioacct_buf b = { 0 };

	(void)state;
	fill_register(&req);
	encode_req(&b, &req);

	/* A failed encoding leaves what was in the buffer, and only that. */
	req.type = IOACCT_MSG_REPLY;
	assert_int_equal(ioacct_proto_encode_request(&b, &req), -EINVAL);
	req.type = 77;
	assert_int_equal(ioacct_proto_encode_request(&b, &req), -EINVAL);
	fill_register(&req);
	memset(req.u.reg.user, 'u', sizeof(req.u.reg.user)); /* no NUL */
	assert_int_equal(ioacct_proto_encode_request(&b, &req), -EINVAL);

	memset(&rep, 0, sizeof(rep));
	rep.status = -ENOENT;
	assert_int_equal(ioacct_proto_encode_reply(&b, &rep), -EINVAL);
	rep.status = 0;
	rep.nrows = 2;
	assert_int_equal(ioacct_proto_encode_reply(&b, &rep), -EINVAL);

	assert_int_equal(ioacct_proto_decode_request(b.data, b.len, &req, NULL, 0), 0);
	ioacct_buf_free(&b);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_REGISTER), "register");
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_SNAPSHOT), "snapshot");
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_REPLY), "reply");
	assert_string_equal(ioacct_msg_type_name(999), "unknown");
}

/*
 * The numbers on the wire, pinned: a message type's, and an attribute's with
 * its name and kind (a value of the wrong length, or with a NUL byte, or
 * nested too deep, is answered with both). Both ends of a socket may be of
 * different versions: renumbering any of these breaks them.
 */
static void test_wire_numbers(void **state)
{
	static const struct {
		uint16_t attr;
		const char *name;
		size_t len; /* 0: a string; SIZE_MAX: a list */
	} pins[] = {
		{ 1, "status", 4 },
		{ 2, "error", 0 },
		{ 3, "job_id", 8 },
		{ 14, "bin_width_ns", 8 },
		{ 20, "job_key", 8 },
		{ 32, "row", SIZE_MAX },
		{ 42, "size_hist", 80 },
		{ 45, "job", SIZE_MAX },
		{ 57, "err_classes", 40 },
		{ 59, "series", SIZE_MAX },
		{ 61, "watch", SIZE_MAX },
		{ 62, "trace_max", 8 },
		{ 63, "task_rank", 4 },
		{ 64, "trace_error", 0 },
		{ 70, "node_name", 0 },
		{ 73, "skew_ns", 8 },
		{ 74, "node_part", SIZE_MAX },
		{ 78, "writes", 8 },
		{ 79, "report_path", 0 },
		{ 80, "report_formats", 4 },
		{ 83, "report_merged", 4 },
		{ 84, "restart", 4 },
		{ 85, "run", 4 },
		{ 86, "duplicates", 4 },
		{ 87, "orig_bin_width_ns", 8 },
		{ 90, "files", 4 },
		{ 91, "file", SIZE_MAX },
		{ 92, "file_dev", 4 },
		{ 93, "file_ino", 8 },
		{ 94, "file_path", 0 },
		{ 101, "max_byte_read", 8 },
		{ 107, "first_read_ns", 8 },
		{ 111, "size_read", 80 },
		{ 112, "size_written", 80 },
		{ 150, "mnt_key", 8 },
		{ 165, "run_start", 8 },
		{ 185, "cmdline", 0 },
		{ 210, "lib_opens_missed", 8 },
		{ 211, "hdf5", 4 },
		{ 212, "hdf5_record", SIZE_MAX },
		{ 213, "h5_kind", 4 },
		{ 214, "flushes", 8 },
		{ 215, "npoints_max", 8 },
		{ 216, "datatype_size", 8 },
		{ 230, "h5_open_start_ns", 8 },
		{ 241, "h5_max_write_size", 8 },
		{ 243, "h5_dataspace_npoints", 8 },
		{ 245, "h5_use_mpiio_collective", 8 },
		{ 250, "rpc", 4 },
		{ 251, "rpc_row", SIZE_MAX },
		{ 252, "rpc_prog", 4 },
		{ 253, "rpc_vers", 4 },
		{ 254, "rpc_proc", 4 },
		{ 255, "rpc_flags", 4 },
		{ 256, "rpc_name", 0 },
		{ 257, "bytes_sent", 8 },
		{ 258, "bytes_recv", 8 },
		{ 259, "queue_ns", 8 },
		{ 260, "rtt_ns", 8 },
		{ 261, "execute_ns", 8 },
		{ 262, "retrans", 8 },
		{ 263, "h5_regular_hyperslab_selects", 8 },
		{ 266, "h5_unknown_selects", 8 },
		{ 267, "h5_chunk_known", 8 },
		{ 272, "h5_chunk_size_d5", 8 },
	};
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256], want[256];
	size_t outer;

	(void)state;
	assert_int_equal(IOACCT_MSG_REGISTER, 1);
	assert_int_equal(IOACCT_MSG_FINISH_STEP, 2);
	assert_int_equal(IOACCT_MSG_FINISH_JOB, 3);
	assert_int_equal(IOACCT_MSG_STATUS, 4);
	assert_int_equal(IOACCT_MSG_SNAPSHOT, 5);
	assert_int_equal(IOACCT_MSG_QUERY, 6);
	assert_int_equal(IOACCT_MSG_JOB, 7);
	assert_int_equal(IOACCT_MSG_PROBE_EXE, 8);
	assert_int_equal(IOACCT_MSG_LIVE, 90);
	assert_int_equal(IOACCT_MSG_REPLY, 0x100);
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_FINISH_STEP), "finish_step");
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_LIVE), "live");

	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		if (pins[i].len == SIZE_MAX) {
			/* A list inside a reply's row: one level too deep. */
			raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
			raw_u32(&r, A_STATUS, 0);
			outer = raw_nest_begin(&r, A_ROW);
			raw_nest_end(&r, raw_nest_begin(&r, pins[i].attr));
			raw_nest_end(&r, outer);
			raw_finish(&r);
			assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
			snprintf(want, sizeof(want), "reply row 0: attribute %u (%s) nests deeper than 2 levels",
				 pins[i].attr, pins[i].name);
			assert_string_equal(err, want);
			continue;
		}
		raw_register_base(&r);
		if (pins[i].len) {
			raw_attr(&r, pins[i].attr, "ab", 2);
			snprintf(want, sizeof(want),
				 "register message: attribute %u (%s) has length 2, expected %zu",
				 pins[i].attr, pins[i].name, pins[i].len);
		} else {
			raw_attr(&r, pins[i].attr, "a\0b", 3);
			snprintf(want, sizeof(want),
				 "register message: attribute %u (%s) has a NUL byte at offset 1",
				 pins[i].attr, pins[i].name);
		}
		raw_finish(&r);
		assert_int_not_equal(decode_req(&r, &req, err, sizeof(err)), 0);
		assert_string_equal(err, want);
	}

	/* 65..69 are no attributes (yet): ignored, whatever they hold. */
	for (uint16_t a = 65; a <= 69; a++) {
		raw_register_base(&r);
		raw_attr(&r, a, "a\0b", 3);
		raw_finish(&r);
		assert_int_equal(decode_req(&r, &req, err, sizeof(err)), 0);
	}
	free(r.p);
}

/* ---- malformed messages ---- */

static void test_bad_header(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	size_t total = 0;
	char err[256];

	(void)state;
	raw_begin(&r, 0x12345678, IOACCT_PROTO_VERSION, IOACCT_MSG_STATUS, 1);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "magic");

	raw_begin(&r, IOACCT_PROTO_MAGIC, 2, IOACCT_MSG_STATUS, 1);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "version 2");

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, 77, 1);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "type 77");
	/* The seq survives, so that the daemon can answer the error. */
	assert_int_equal(req.seq, 1);

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "not a request");

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_STATUS, 1);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "not a reply");

	/* The header's length disagrees with the buffer's, both ways. */
	raw_u32(&r, A_STEP_ID, 1);
	raw_finish(&r);
	r.len -= 4;
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	r.len += 4;
	le32(r.p + 8, 4);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "announces 20");

	/* Oversized, by the header alone. */
	le32(r.p + 8, IOACCT_PROTO_MAX_MSG + 1);
	assert_int_equal(ioacct_proto_header_check(r.p, &total, err, sizeof(err)), -EMSGSIZE);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EMSGSIZE);
	le32(r.p + 8, UINT32_MAX);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EMSGSIZE);
	le32(r.p + 8, IOACCT_PROTO_MAX_MSG - HDR);
	assert_int_equal(ioacct_proto_header_check(r.p, &total, err, sizeof(err)), 0);
	assert_int_equal(total, IOACCT_PROTO_MAX_MSG);

	/* Shorter than a header. */
	assert_int_equal(ioacct_proto_decode_request(r.p, 10, &req, err, sizeof(err)), -EPROTO);
	assert_int_equal(ioacct_proto_decode_request(r.p, 0, &req, err, sizeof(err)), -EPROTO);
	free(r.p);
}

static void test_bad_lengths(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	char *s = malloc(9001);
	uint8_t two[2] = { 1, 2 };
	size_t off;

	(void)state;
	assert_non_null(s);

	/* A fixed-size attribute of the wrong size. */
	raw_register_base(&r);
	raw_u32(&r, 14 /* bin_width_ns, u64 */, 5);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "register message: attribute 14 (bin_width_ns) has length 4, expected 8");

	/* A string longer than its field. */
	memset(s, 'x', 9000);
	s[9000] = '\0';
	raw_register_base(&r);
	raw_str(&r, A_CGROUP, s);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "register message: attribute 7 (cgroup) has length 9000, more than 4095");
	/* One byte shorter than PATH_MAX fits; PATH_MAX does not (no room for the NUL). */
	s[PATH_MAX] = '\0';
	raw_register_base(&r);
	raw_str(&r, A_CGROUP, s);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	s[PATH_MAX - 1] = '\0';
	raw_register_base(&r);
	raw_str(&r, A_CGROUP, s);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), 0);
	assert_int_equal(strlen(req.u.reg.cgroup), PATH_MAX - 1);

	/* A string with a NUL inside. */
	raw_register_base(&r);
	raw_attr(&r, A_CGROUP, "ab\0cd", 5);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	assert_err_contains(err, "NUL byte at offset 2");

	/* An attribute running past the end of the payload. */
	raw_register_base(&r);
	raw_bytes(&r, "\x07\x00\x64\x00" "abcd", 8);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "attribute 7 (cgroup) has length 100, more than the 4 bytes left");

	/* A truncated attribute header at the end. */
	raw_register_base(&r);
	raw_bytes(&r, two, sizeof(two));
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "2 bytes left");

	/* The last attribute without its padding. */
	raw_register_base(&r);
	raw_str(&r, A_CGROUP, "/a");
	r.len -= 2;
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_err_contains(err, "padding");

	/* A size_hist of 9 bins. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u32(&r, A_MNT_ID, 0);
	memset(s, 0, 9 * 8);
	raw_attr(&r, A_SIZE_HIST, s, 9 * 8);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply row 0: attribute 42 (size_hist) has length 72, expected 80");
	assert_null(rep.rows);

	/* Error classes of 4 instead of 5. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u32(&r, A_MNT_ID, 0);
	memset(s, 0, 4 * 8);
	raw_attr(&r, A_ERR_CLASSES, s, 4 * 8);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply row 0: attribute 57 (err_classes) has length 32, expected 40");
	assert_null(rep.rows);

	/* A row whose last attribute runs past the row's end, though not the message's. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	le16(r.p + r.len - 6, 8);
	raw_nest_end(&r, off);
	raw_u32(&r, A_MNT_ID, 0);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply row 0: attribute 33 (op) has length 8, more than the 4 bytes left");
	free(s);
	free(r.p);
}

static void test_missing_required(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	size_t off;

	(void)state;
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REGISTER, 1);
	raw_u64(&r, A_JOB_ID, 42);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_GID, 100);
	raw_u32(&r, A_PID, 1);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "register message lacks attribute 5 (uid)");

	/* Neither pid nor cgroup. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REGISTER, 1);
	raw_u64(&r, A_JOB_ID, 42);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_UID, 1000);
	raw_u32(&r, A_GID, 100);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	assert_err_contains(err, "neither a pid");

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_FINISH_STEP, 1);
	raw_u64(&r, A_JOB_ID, 42);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "finish_step message lacks attribute 4 (step_id)");

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_SNAPSHOT, 1);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EINVAL);
	assert_err_contains(err, "(job_id)");

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply message lacks attribute 1 (status)");

	/* An error status without its message. */
	raw_u32(&r, A_STATUS, (uint32_t)-ENOENT);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_err_contains(err, "status -2");
	raw_str(&r, A_ERROR, "no such job");
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.status, -ENOENT);
	assert_string_equal(rep.error, "no such job");

	/* A row without its mount. */
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply row 0 lacks attribute 150 (mnt_key)");
	assert_null(rep.rows);
	assert_int_equal(rep.nrows, 0);
	free(r.p);
}

static void test_duplicate(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	size_t off;

	(void)state;
	raw_register_base(&r);
	raw_u64(&r, A_JOB_ID, 43);
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "register message: attribute 3 (job_id) appears twice");

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u32(&r, A_MNT_ID, 0);
	raw_u32(&r, A_OP, 1);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply row 0: attribute 33 (op) appears twice");
	free(r.p);
}

static void test_unknown_skipped(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	size_t off, inner;

	(void)state;
	raw_register_base(&r);
	raw_attr(&r, A_UNKNOWN, "abcde", 5); /* odd length: skipping must honour the padding */
	raw_attr(&r, A_UNKNOWN, "", 0);
	raw_attr(&r, 0, "abcde", 5); /* 0 is no attribute either */
	raw_u64(&r, A_UNKNOWN, 1); /* unknown may repeat */
	raw_u32(&r, A_STATUS, 1);  /* known, but not part of a request */
	raw_str(&r, A_CGROUP, "/job_42");
	raw_finish(&r);
	assert_int_equal(decode_req(&r, &req, err, sizeof(err)), 0);
	assert_true(req.u.reg.job_id == 42);
	assert_int_equal(req.u.reg.uid, 1000);
	assert_int_equal(req.u.reg.pid, 4242);
	assert_string_equal(req.u.reg.cgroup, "/job_42");

	/* Inside a row too, with an unknown nested list. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 3);
	inner = raw_nest_begin(&r, A_UNKNOWN);
	raw_u32(&r, A_UNKNOWN, 1);
	raw_nest_end(&r, inner);
	raw_u32(&r, A_OP, 1);
	raw_u32(&r, A_MNT_ID, 9);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.nrows, 1);
	assert_int_equal(rep.rows[0].step_id, 3);
	assert_int_equal(rep.rows[0].op, 1);
	assert_int_equal(rep.rows[0].mount.mnt_id, 9);
	ioacct_reply_free(&rep);
	free(r.p);
}

/* Whether the encoded row i of a reply (a ROW list) carries attribute attr. */
static bool row_has(const struct ioacct_buf *b, size_t i, uint16_t attr)
{
	size_t off = HDR, k = 0;

	while (off + 4 <= b->len) {
		uint16_t type = (uint16_t)(b->data[off] | b->data[off + 1] << 8);
		size_t len = (size_t)(b->data[off + 2] | b->data[off + 3] << 8);

		if (type == A_ROW && k++ == i) {
			for (size_t in = off + 4; in + 4 <= off + 4 + len;) {
				uint16_t t = (uint16_t)(b->data[in] | b->data[in + 1] << 8);
				size_t l = (size_t)(b->data[in + 2] | b->data[in + 3] << 8);

				if (t == attr)
					return true;
				in += 4 + ((l + 3) & ~(size_t)3);
			}
			return false;
		}
		off += 4 + ((len + 3) & ~(size_t)3);
	}
	fail_msg("no row %zu", i);
	return false;
}

/*
 * A mount's 64-bit key (issue 36): mnt_key always, mnt_id beside it for
 * older peers while the key fits 32 bits; from an older peer, mnt_id alone
 * (all ones: every mount); mnt_key wins over mnt_id, whichever comes first.
 */
static void test_mnt_key(void **state)
{
	static const uint64_t keys[] = { 9, 0x80000005ULL, (1ULL << 33) + 7, 0xfffffffeULL };
	enum { NKEYS = sizeof(keys) / sizeof(keys[0]) };
	struct ioacct_snap_row rows[NKEYS];
	struct ioacct_reply rin = { .rows = rows, .nrows = NKEYS }, rout;
	struct ioacct_buf b = { 0 };
	struct raw r = { 0 };
	char err[256];
	size_t off;

	(void)state;
	memset(rows, 0, sizeof(rows));
	for (size_t i = 0; i < NKEYS; i++)
		rows[i].mount.mnt_id = keys[i];
	assert_int_equal(ioacct_proto_encode_reply(&b, &rin), 0);
	for (size_t i = 0; i < NKEYS; i++) {
		assert_true(row_has(&b, i, A_MNT_KEY));
		assert_int_equal(row_has(&b, i, A_MNT_ID), keys[i] < UINT32_MAX);
	}
	assert_int_equal(ioacct_proto_decode_reply(b.data, b.len, &rout, err, sizeof(err)), 0);
	assert_int_equal(rout.nrows, NKEYS);
	for (size_t i = 0; i < NKEYS; i++)
		assert_true(rout.rows[i].mount.mnt_id == keys[i]);
	ioacct_reply_free(&rout);
	ioacct_buf_free(&b);

	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u32(&r, A_MNT_ID, UINT32_MAX);
	raw_nest_end(&r, off);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u32(&r, A_MNT_ID, 5);
	raw_u64(&r, A_MNT_KEY, (1ULL << 33) + 7);
	raw_nest_end(&r, off);
	off = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u64(&r, A_MNT_KEY, (1ULL << 33) + 8);
	raw_u32(&r, A_MNT_ID, 6);
	raw_nest_end(&r, off);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rout, err, sizeof(err)), 0);
	assert_int_equal(rout.nrows, 3);
	assert_true(rout.rows[0].mount.mnt_id == IOACCT_MNT_ANY);
	assert_true(rout.rows[1].mount.mnt_id == (1ULL << 33) + 7);
	assert_true(rout.rows[2].mount.mnt_id == (1ULL << 33) + 8);
	ioacct_reply_free(&rout);
	free(r.p);
}

static void test_nesting_too_deep(void **state)
{
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	size_t outer, inner;

	(void)state;
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	outer = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_u32(&r, A_OP, 0);
	raw_u32(&r, A_MNT_ID, 0);
	inner = raw_nest_begin(&r, A_ROW);
	raw_u32(&r, A_STEP_ID, 0);
	raw_nest_end(&r, inner);
	raw_nest_end(&r, outer);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply row 0: attribute 32 (row) nests deeper than 2 levels");
	assert_null(rep.rows);
	free(r.p);
}

static void test_too_many_rows(void **state)
{
	const size_t n = 1000001;
	struct ioacct_reply rep;
	struct raw r = { 0 };
	char err[256];
	uint8_t empty_row[4];

	(void)state;
	le16(empty_row, A_ROW);
	le16(empty_row + 2, 0);
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	r.cap = r.len + n * sizeof(empty_row);
	r.p = realloc(r.p, r.cap);
	assert_non_null(r.p);
	for (size_t i = 0; i < n; i++)
		raw_bytes(&r, empty_row, sizeof(empty_row));
	raw_finish(&r);
	assert_true(r.len <= IOACCT_PROTO_MAX_MSG);
	assert_int_equal(decode_rep(&r, &rep, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply message has 1000001 rows, more than 1000000");
	assert_null(rep.rows);
	free(r.p);
}

/* Checks that a successful decode left every string terminated. */
static void assert_request_sane(const struct ioacct_request *req)
{
	const struct ioacct_req_register *r = &req->u.reg;

	assert_non_null(memchr(r->cgroup, 0, sizeof(r->cgroup)));
	assert_non_null(memchr(r->cluster, 0, sizeof(r->cluster)));
	assert_non_null(memchr(r->source, 0, sizeof(r->source)));
	assert_non_null(memchr(r->user, 0, sizeof(r->user)));
	assert_non_null(memchr(r->job_name, 0, sizeof(r->job_name)));
	assert_non_null(memchr(r->workdir, 0, sizeof(r->workdir)));
}

static void assert_reply_sane(const struct ioacct_reply *rep)
{
	assert_non_null(memchr(rep->error, 0, sizeof(rep->error)));
	assert_non_null(memchr(rep->detail, 0, sizeof(rep->detail)));
	assert_true(rep->status == 0 || rep->error[0]);
	assert_true(rep->nrows == 0 || rep->rows);
	for (size_t i = 0; i < rep->nrows; i++)
		assert_non_null(memchr(rep->rows[i].mount.path, 0, sizeof(rep->rows[i].mount.path)));
}

/* Decodes m as a request and as a reply; 1 when either succeeded. */
static int decode_both(const uint8_t *m, size_t len)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	char err[256];
	int ok = 0, ret;

	err[0] = '\0';
	ret = ioacct_proto_decode_request(m, len, &req, err, sizeof(err));
	if (ret == 0) {
		assert_request_sane(&req);
		ok = 1;
	} else {
		assert_true(ret == -EPROTO || ret == -EINVAL || ret == -EMSGSIZE);
		assert_true(err[0] != '\0');
	}
	err[0] = '\0';
	ret = ioacct_proto_decode_reply(m, len, &rep, err, sizeof(err));
	if (ret == 0) {
		assert_reply_sane(&rep);
		ok = 1;
	} else {
		assert_true(ret == -EPROTO || ret == -EINVAL || ret == -EMSGSIZE);
		assert_true(err[0] != '\0');
		assert_null(rep.rows);
	}
	ioacct_reply_free(&rep);
	return ok;
}

static void encode_samples(struct ioacct_buf *reqb, struct ioacct_buf *repb)
{
	struct ioacct_snap_row rows[3];
	struct ioacct_request req;
	struct ioacct_reply rep;

	fill_register(&req);
	encode_req(reqb, &req);
	fill_reply(&rep, rows, 3);
	ioacct_buf_reset(repb);
	assert_int_equal(ioacct_proto_encode_reply(repb, &rep), 0);
}

static void test_truncated_everywhere(void **state)
{
	struct ioacct_buf bufs[2] = { { 0 }, { 0 } };
	uint8_t *m;

	(void)state;
	encode_samples(&bufs[0], &bufs[1]);
	for (int i = 0; i < 2; i++) {
		const struct ioacct_buf *b = &bufs[i];

		/* A copy of exactly the truncated size, so that ASan sees any overread. */
		for (size_t len = 0; len < b->len; len++) {
			m = malloc(len ? len : 1);
			assert_non_null(m);
			memcpy(m, b->data, len);
			assert_int_equal(decode_both(m, len), 0);
			/* Same cut, with a header agreeing: off a 4-byte boundary it cannot be whole. */
			if (len >= HDR) {
				le32(m + 8, (uint32_t)(len - HDR));
				if (decode_both(m, len))
					assert_int_equal(len % 4, 0);
			}
			free(m);
		}
		assert_int_equal(decode_both(b->data, b->len), 1);
	}
	ioacct_buf_free(&bufs[0]);
	ioacct_buf_free(&bufs[1]);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* xorshift64: the same sequence on every libc. */
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_fuzz(void **state)
{
	struct ioacct_buf bufs[2] = { { 0 }, { 0 } };
	unsigned int ok = 0, bad = 0;
	uint8_t *m;

	(void)state;
	encode_samples(&bufs[0], &bufs[1]);
	for (int iter = 0; iter < 20000; iter++) {
		const struct ioacct_buf *b = &bufs[iter % 2];
		size_t len = b->len, flips = 1 + rng() % 4;

		m = malloc(len);
		assert_non_null(m);
		memcpy(m, b->data, len);
		for (size_t f = 0; f < flips; f++) {
			/* Mostly in the payload: a broken header stops everything early. */
			size_t pos = rng() % 8 ? HDR + rng() % (len - HDR) : rng() % len;

			m[pos] ^= (uint8_t)(1 + rng() % 255);
		}
		if (decode_both(m, len))
			ok++;
		else
			bad++;
		free(m);
	}
	/* Both outcomes happen, or the loop tested less than it claims. */
	assert_true(ok > 100);
	assert_true(bad > 100);
	ioacct_buf_free(&bufs[0]);
	ioacct_buf_free(&bufs[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_roundtrip),
		cmocka_unit_test(test_register_longest_strings),
		cmocka_unit_test(test_finish_step_roundtrip),
		cmocka_unit_test(test_finish_job_roundtrip),
		cmocka_unit_test(test_probe_exe_roundtrip),
		cmocka_unit_test(test_finish_job_report_roundtrip),
		cmocka_unit_test(test_h5_rows_roundtrip),
		cmocka_unit_test(test_rpc_rows_roundtrip),
		cmocka_unit_test(test_status_snapshot_roundtrip),
		cmocka_unit_test(test_reply_roundtrip),
		cmocka_unit_test(test_required_only),
		cmocka_unit_test(test_encode_appends),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_restart_roundtrip),
		cmocka_unit_test(test_wire_numbers),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_unknown_skipped),
		cmocka_unit_test(test_mnt_key),
		cmocka_unit_test(test_nesting_too_deep),
		cmocka_unit_test(test_too_many_rows),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
