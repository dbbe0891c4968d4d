/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the wire protocol: round trips, every class of malformed
 * message, a deterministic fuzz loop, and the transport over real sockets.
 */
#include <errno.h>
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
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto.h"

/*
 * Attribute numbers, written out again on purpose: a test that pins the
 * wire format fails when someone renumbers proto.c.
 */
enum {
	A_STATUS = 1,
	A_ERROR = 2,
	A_JOB_ID = 3,
	A_STEP_ID = 4,
	A_UID = 5,
	A_GID = 6,
	A_CGROUP = 7,
	A_PID = 8,
	A_ROW = 32,
	A_OP = 33,
	A_MNT_ID = 34,
	A_SIZE_HIST = 42,
	A_ERR_CLASSES = 57,
	A_UNKNOWN = 999,
};

#define HDR IOACCT_PROTO_HDR_LEN

/* ---- a raw message builder, to write what the encoder never would ---- */

struct raw {
	uint8_t *p;
	size_t len;
	size_t cap;
};

static void raw_bytes(struct raw *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->p = realloc(r->p, r->cap);
		assert_non_null(r->p);
	}
	memcpy(r->p + r->len, p, n);
	r->len += n;
}

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void raw_begin(struct raw *r, uint32_t magic, uint16_t version, uint16_t type, uint32_t seq)
{
	uint8_t h[HDR];

	le32(h, magic);
	le16(h + 4, version);
	le16(h + 6, type);
	le32(h + 8, 0);
	le32(h + 12, seq);
	r->len = 0;
	raw_bytes(r, h, sizeof(h));
}

/* A header-announced payload length of whatever is there now. */
static void raw_finish(struct raw *r)
{
	le32(r->p + 8, (uint32_t)(r->len - HDR));
}

static void raw_attr(struct raw *r, uint16_t type, const void *val, size_t len)
{
	static const uint8_t zero[4];
	uint8_t h[4];

	le16(h, type);
	le16(h + 2, (uint16_t)len);
	raw_bytes(r, h, sizeof(h));
	raw_bytes(r, val, len);
	raw_bytes(r, zero, (4 - len % 4) % 4);
}

static void raw_u32(struct raw *r, uint16_t type, uint32_t v)
{
	uint8_t b[4];

	le32(b, v);
	raw_attr(r, type, b, sizeof(b));
}

static void raw_u64(struct raw *r, uint16_t type, uint64_t v)
{
	uint8_t b[8];

	le32(b, (uint32_t)v);
	le32(b + 4, (uint32_t)(v >> 32));
	raw_attr(r, type, b, sizeof(b));
}

static void raw_str(struct raw *r, uint16_t type, const char *s)
{
	raw_attr(r, type, s, strlen(s));
}

static size_t raw_nest_begin(struct raw *r, uint16_t type)
{
	size_t off = r->len;

	raw_attr(r, type, "", 0);
	return off;
}

static void raw_nest_end(struct raw *r, size_t off)
{
	le16(r->p + off + 2, (uint16_t)(r->len - off - 4));
}

/* A register request with what it requires, before the test adds its part. */
static void raw_register_base(struct raw *r)
{
	raw_begin(r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REGISTER, 7);
	raw_u64(r, A_JOB_ID, 42);
	raw_u32(r, A_STEP_ID, 0);
	raw_u32(r, A_UID, 1000);
	raw_u32(r, A_GID, 100);
	raw_u32(r, A_PID, 4242);
}

static int decode_req(const struct raw *r, struct ioacct_request *req, char *err, size_t errlen)
{
	err[0] = '\0';
	return ioacct_proto_decode_request(r->p, r->len, req, err, errlen);
}

static int decode_rep(const struct raw *r, struct ioacct_reply *rep, char *err, size_t errlen)
{
	err[0] = '\0';
	return ioacct_proto_decode_reply(r->p, r->len, rep, err, errlen);
}

#define assert_err_contains(err, what)                                         \
	do {                                                                   \
		if (!strstr((err), (what)))                                    \
			fail_msg("error \"%s\" lacks \"%s\"", (err), (what));  \
	} while (0)

/* ---- well-formed messages ---- */

static void fill_register(struct ioacct_request *req)
{
	struct ioacct_req_register *r = &req->u.reg;

	memset(req, 0, sizeof(*req));
	req->type = IOACCT_MSG_REGISTER;
	req->seq = 0xdeadbeef;
	r->job_id = 0x0123456789abcdefULL;
	r->step_id = IOACCT_STEP_BATCH;
	r->uid = 1000;
	r->gid = 100;
	r->pid = 4242;
	snprintf(r->cgroup, sizeof(r->cgroup), "/sys/fs/cgroup/system.slice/job_42/step_batch");
	snprintf(r->cluster, sizeof(r->cluster), "hpc");
	snprintf(r->source, sizeof(r->source), "slurm");
	snprintf(r->user, sizeof(r->user), "alice");
	snprintf(r->job_name, sizeof(r->job_name), "a name with spaces, ümlauts");
	snprintf(r->workdir, sizeof(r->workdir), "/home/alice/run");
	r->bin_width_ns = 10000000000ULL;
	r->has_array = 1;
	r->array_job_id = 41;
	r->array_task_id = 7;
	snprintf(r->node_name, sizeof(r->node_name), "mc3");
	r->trace_max = 5ULL << 32;
	r->task_rank = 17;
}

static void fill_row(struct ioacct_snap_row *row, unsigned int i)
{
	memset(row, 0, sizeof(*row));
	row->step_id = i == 0 ? IOACCT_STEP_EXTERN : i;
	row->op = i % IOACCT_OP_COUNT;
	row->mount.mnt_id = 20 + i;
	snprintf(row->mount.path, sizeof(row->mount.path), "/scratch/%u", i);
	snprintf(row->mount.fstype, sizeof(row->mount.fstype), "lustre");
	snprintf(row->mount.source, sizeof(row->mount.source), "10.0.0.%u@o2ib:/fs", i);
	row->c.bytes = 0xffffffffffffff00ULL + i;
	row->c.calls = 1000 + i;
	row->c.errors = 3 + i;
	row->c.ns = 123456789ULL * (i + 1);
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		row->c.size_hist[b] = (uint64_t)(i + 1) << (b * 6);
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
		row->c.errclass[k] = k == IOACCT_ERR_NOTFOUND ? UINT64_MAX - i : (uint64_t)(k + i) << (k * 8);
}

static void fill_reply(struct ioacct_reply *rep, struct ioacct_snap_row *rows, size_t nrows)
{
	memset(rep, 0, sizeof(*rep));
	rep->seq = 99;
	rep->status = -EPERM;
	snprintf(rep->error, sizeof(rep->error), "user 1000 may not register job 42");
	rep->job_id = 42;
	rep->job_key = -17;
	rep->slot = 12;
	rep->start_mono_ns = 0xfedcba9876543210ULL;
	rep->start_ns = -1;
	rep->bin_width_ns = 5000000000ULL;
	snprintf(rep->probe_mode, sizeof(rep->probe_mode), "fentry");
	snprintf(rep->trace_error, sizeof(rep->trace_error), "no cgroup2 cgroup hierarchy is mounted");
	snprintf(rep->version, sizeof(rep->version), "0.1.0");
	rep->jobs_running = 3;
	rep->cgroups_watched = 5;
	rep->dropped_events = 77;
	rep->uptime_s = 86400;
	snprintf(rep->detail, sizeof(rep->detail), "backend fentry, stats map 12%% full");
	rep->dropped_bytes = 1ULL << 40;
	for (size_t i = 0; i < nrows; i++)
		fill_row(&rows[i], (unsigned int)i);
	rep->rows = rows;
	rep->nrows = nrows;
}

static void assert_row_equal(const struct ioacct_snap_row *a, const struct ioacct_snap_row *b)
{
	assert_int_equal(a->step_id, b->step_id);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->mount.mnt_id, b->mount.mnt_id);
	assert_string_equal(a->mount.path, b->mount.path);
	assert_string_equal(a->mount.fstype, b->mount.fstype);
	assert_string_equal(a->mount.source, b->mount.source);
	assert_true(a->c.bytes == b->c.bytes);
	assert_true(a->c.calls == b->c.calls);
	assert_true(a->c.errors == b->c.errors);
	assert_true(a->c.ns == b->c.ns);
	for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		assert_true(a->c.size_hist[i] == b->c.size_hist[i]);
	for (unsigned int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		assert_true(a->c.errclass[i] == b->c.errclass[i]);
}

static void assert_reply_equal(const struct ioacct_reply *a, const struct ioacct_reply *b)
{
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->status, b->status);
	assert_string_equal(a->error, b->error);
	assert_true(a->job_id == b->job_id);
	assert_true(a->job_key == b->job_key);
	assert_int_equal(a->slot, b->slot);
	assert_true(a->start_mono_ns == b->start_mono_ns);
	assert_true(a->start_ns == b->start_ns);
	assert_true(a->bin_width_ns == b->bin_width_ns);
	assert_string_equal(a->probe_mode, b->probe_mode);
	assert_string_equal(a->trace_error, b->trace_error);
	assert_string_equal(a->version, b->version);
	assert_int_equal(a->jobs_running, b->jobs_running);
	assert_int_equal(a->cgroups_watched, b->cgroups_watched);
	assert_true(a->dropped_events == b->dropped_events);
	assert_true(a->uptime_s == b->uptime_s);
	assert_string_equal(a->detail, b->detail);
	assert_true(a->dropped_bytes == b->dropped_bytes);
	assert_int_equal(a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++)
		assert_row_equal(&a->rows[i], &b->rows[i]);
}

static void encode_req(struct ioacct_buf *b, const struct ioacct_request *req)
{
	ioacct_buf_reset(b);
	assert_int_equal(ioacct_proto_encode_request(b, req), 0);
}

static void roundtrip_request(const struct ioacct_request *in, struct ioacct_request *out)
{
	struct ioacct_buf b = { 0 };
	char err[256] = "";
	int ret;

	encode_req(&b, in);
	ret = ioacct_proto_decode_request(b.data, b.len, out, err, sizeof(err));
	if (ret)
		fail_msg("decode: %d %s", ret, err);
	assert_int_equal(out->type, in->type);
	assert_int_equal(out->seq, in->seq);
	ioacct_buf_free(&b);
}

static void roundtrip_reply(const struct ioacct_reply *in, struct ioacct_reply *out)
{
	struct ioacct_buf b = { 0 };
	char err[256] = "";
	int ret;

	assert_int_equal(ioacct_proto_encode_reply(&b, in), 0);
	ret = ioacct_proto_decode_reply(b.data, b.len, out, err, sizeof(err));
	if (ret)
		fail_msg("decode: %d %s", ret, err);
	ioacct_buf_free(&b);
}

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
	assert_string_equal(err, "reply row 0 lacks attribute 34 (mnt_id)");
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

/* ---- transport ---- */

struct sender {
	int fd;
	const struct ioacct_buf *b;
	int ret;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	s->ret = ioacct_proto_send(s->fd, s->b, 5000);
	return NULL;
}

static void test_send_recv_large(void **state)
{
	struct ioacct_snap_row *rows = calloc(200, sizeof(*rows));
	struct ioacct_reply in, out;
	struct ioacct_buf b = { 0 }, got = { 0 };
	struct sender s;
	pthread_t t;
	char err[256] = "";
	int sv[2];

	(void)state;
	assert_non_null(rows);
	fill_reply(&in, rows, 200);
	/* Long paths: the message outgrows the socket buffer, so both sides loop. */
	for (size_t i = 0; i < 200; i++)
		memset(rows[i].mount.path, 'p', 3000);
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	assert_true(b.len > 600000);
	in.seq++;
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	s = (struct sender){ .fd = sv[0], .b = &b };
	assert_int_equal(pthread_create(&t, NULL, sender_main, &s), 0);
	/* Two messages back to back: each recv takes one and no more. */
	for (uint32_t i = 0; i < 2; i++) {
		if (ioacct_proto_recv(sv[1], &got, 5000, err, sizeof(err)))
			fail_msg("recv: %s", err);
		assert_int_equal(ioacct_proto_decode_reply(got.data, got.len, &out, err, sizeof(err)), 0);
		in.seq = 99 + i;
		assert_reply_equal(&in, &out);
		ioacct_reply_free(&out);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(s.ret, 0);
	close(sv[0]);
	close(sv[1]);
	ioacct_buf_free(&b);
	ioacct_buf_free(&got);
	free(rows);
}

static void test_send_recv_pipe(void **state)
{
	struct ioacct_request in, out;
	struct ioacct_buf b = { 0 }, got = { 0 };
	char err[256];
	int p[2];

	(void)state;
	fill_register(&in);
	encode_req(&b, &in);
	assert_int_equal(pipe(p), 0);
	/* Not a socket: send() fails with ENOTSOCK, write() takes over. */
	assert_int_equal(ioacct_proto_send(p[1], &b, 1000), 0);
	assert_int_equal(ioacct_proto_recv(p[0], &got, 1000, err, sizeof(err)), 0);
	assert_int_equal(ioacct_proto_decode_request(got.data, got.len, &out, err, sizeof(err)), 0);
	assert_string_equal(out.u.reg.cgroup, in.u.reg.cgroup);
	close(p[0]);
	close(p[1]);
	ioacct_buf_free(&b);
	ioacct_buf_free(&got);
}

static void test_recv_errors(void **state)
{
	struct ioacct_buf got = { 0 };
	struct timespec t0, t1;
	struct raw r = { 0 };
	char err[256], tail[8];
	long ms;
	int sv[2];

	(void)state;
	/* A header announcing 100 bytes, 10 of them, then the end. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_STATUS, 1);
	le32(r.p + 8, 100);
	raw_bytes(&r, "0123456789", 10);
	assert_int_equal(write(sv[0], r.p, r.len), (ssize_t)r.len);
	close(sv[0]);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 1000, err, sizeof(err)), -ECONNRESET);
	assert_string_equal(err, "connection closed after 26 of 116 bytes of the message");
	close(sv[1]);

	/* Nothing at all, then the end. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[0]);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 1000, err, sizeof(err)), -ECONNRESET);
	assert_err_contains(err, "after 0 of 16 bytes of the header");
	close(sv[1]);

	/* A peer that says nothing. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 100, err, sizeof(err)), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 90 && ms < 2000);
	assert_err_contains(err, "nothing received for 100 ms");

	/* A header announcing too much: refused, and nothing after it read. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_STATUS, 1);
	le32(r.p + 8, IOACCT_PROTO_MAX_MSG + 1);
	raw_bytes(&r, "tail", 4);
	assert_int_equal(write(sv[0], r.p, r.len), (ssize_t)r.len);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 1000, err, sizeof(err)), -EMSGSIZE);
	assert_err_contains(err, "more than the limit");
	assert_int_equal(recv(sv[1], tail, sizeof(tail), MSG_DONTWAIT), 4);
	assert_memory_equal(tail, "tail", 4);
	close(sv[0]);
	close(sv[1]);
	ioacct_buf_free(&got);
	free(r.p);
}

static void test_send_closed_peer(void **state)
{
	struct ioacct_request req;
	struct ioacct_buf b = { 0 };
	int sv[2];

	(void)state;
	fill_register(&req);
	encode_req(&b, &req);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	/* EPIPE, and no SIGPIPE killing the test. */
	assert_int_equal(ioacct_proto_send(sv[0], &b, 1000), -EPIPE);
	close(sv[0]);
	ioacct_buf_free(&b);
}

/* ---- the client against a tiny server ---- */

enum server_mode {
	SERVE_ECHO,     /* a reply carrying what was asked */
	SERVE_ERROR,    /* an error reply */
	SERVE_BAD_SEQ,  /* a reply to some other request */
	SERVE_HANG_UP,  /* read the request, close */
	SERVE_SILENT,   /* never accept */
};

struct server {
	char dir[64];
	char path[128];
	int fd;
	enum server_mode mode;
	pthread_t thread;
	struct ioacct_request req; /* as received */
	int ret;
};

static int serve_one(struct server *srv, int fd)
{
	struct ioacct_buf b = { 0 };
	struct ioacct_reply rep;
	char err[256];
	int ret;

	ret = ioacct_proto_recv(fd, &b, 5000, err, sizeof(err));
	if (ret)
		goto out;
	ret = ioacct_proto_decode_request(b.data, b.len, &srv->req, err, sizeof(err));
	if (ret || srv->mode == SERVE_HANG_UP)
		goto out;
	memset(&rep, 0, sizeof(rep));
	rep.seq = srv->req.seq + (srv->mode == SERVE_BAD_SEQ);
	rep.job_id = srv->req.u.reg.job_id;
	rep.slot = 3;
	ioacct_strlcpy(rep.detail, srv->req.u.reg.cgroup, sizeof(rep.detail));
	if (srv->mode == SERVE_ERROR) {
		rep.status = -EPERM;
		snprintf(rep.error, sizeof(rep.error), "uid %u may not register", srv->req.u.reg.uid);
	}
	ioacct_buf_reset(&b);
	ret = ioacct_proto_encode_reply(&b, &rep);
	if (ret)
		goto out;
	ret = ioacct_proto_send(fd, &b, 5000);
out:
	ioacct_buf_free(&b);
	return ret;
}

static void *server_main(void *arg)
{
	struct server *srv = arg;
	struct pollfd pfd = { .fd = srv->fd, .events = POLLIN };
	int fd;

	/* Bounded, so that a client failing before connect cannot hang the test. */
	if (poll(&pfd, 1, 5000) != 1) {
		srv->ret = -ETIMEDOUT;
		return NULL;
	}
	fd = accept(srv->fd, NULL, NULL);
	if (fd < 0) {
		srv->ret = -errno;
		return NULL;
	}
	srv->ret = serve_one(srv, fd);
	close(fd);
	return NULL;
}

static void server_start(struct server *srv, enum server_mode mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	memset(srv, 0, sizeof(*srv));
	srv->mode = mode;
	snprintf(srv->dir, sizeof(srv->dir), "/tmp/test_proto.XXXXXX");
	assert_non_null(mkdtemp(srv->dir));
	snprintf(srv->path, sizeof(srv->path), "%s/ioacctd.sock", srv->dir);
	assert_int_equal(ioacct_strlcpy(addr.sun_path, srv->path, sizeof(addr.sun_path)), 0);
	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(srv->fd >= 0);
	assert_int_equal(bind(srv->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(srv->fd, 4), 0);
	if (mode != SERVE_SILENT)
		assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

static void server_stop(struct server *srv)
{
	if (srv->mode != SERVE_SILENT)
		assert_int_equal(pthread_join(srv->thread, NULL), 0);
	close(srv->fd);
	unlink(srv->path);
	rmdir(srv->dir);
}

static void test_client_call(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct server srv;
	char err[512] = "";
	uint32_t first_seq;

	(void)state;
	fill_register(&req);
	server_start(&srv, SERVE_ECHO);
	if (ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)))
		fail_msg("client_call: %s", err);
	server_stop(&srv);
	assert_int_equal(srv.ret, 0);
	assert_int_equal(rep.status, 0);
	assert_true(rep.job_id == req.u.reg.job_id);
	assert_int_equal(rep.slot, 3);
	assert_string_equal(rep.detail, req.u.reg.cgroup);
	assert_string_equal(srv.req.u.reg.job_name, req.u.reg.job_name);
	/* The seq comes from the client's counter, not from req. */
	assert_int_equal(rep.seq, srv.req.seq);
	first_seq = rep.seq;
	ioacct_reply_free(&rep);

	server_start(&srv, SERVE_ERROR);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)), 0);
	server_stop(&srv);
	assert_int_equal(rep.status, -EPERM);
	assert_string_equal(rep.error, "uid 1000 may not register");
	assert_int_not_equal(rep.seq, first_seq);
	ioacct_reply_free(&rep);
}

static void test_client_call_errors(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct server srv;
	char err[512], want[512], path[300];

	(void)state;
	fill_register(&req);

	server_start(&srv, SERVE_BAD_SEQ);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)), -EPROTO);
	server_stop(&srv);
	assert_err_contains(err, "bad reply from ioacctd on ");
	assert_err_contains(err, "sequence number");
	assert_null(rep.rows);

	server_start(&srv, SERVE_HANG_UP);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)),
			 -ECONNRESET);
	server_stop(&srv);
	snprintf(want, sizeof(want),
		 "no reply from ioacctd on %s: connection closed after 0 of 16 bytes of the header",
		 srv.path);
	assert_string_equal(err, want);

	/* A daemon that never answers: the connection is queued, the reply never comes. */
	server_start(&srv, SERVE_SILENT);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 100, err, sizeof(err)),
			 -ETIMEDOUT);
	assert_err_contains(err, "no reply from ioacctd on ");
	/* Gone: nothing listens on the path any more. */
	server_stop(&srv);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 100, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "cannot connect to %s: No such file or directory", srv.path);
	assert_string_equal(err, want);

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(ioacct_client_call(path, &req, &rep, 100, err, sizeof(err)), -ENAMETOOLONG);
	assert_err_contains(err, "cannot connect to /aaa");
	assert_err_contains(err, "longer than 107 bytes");
}

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
		.mnt_id = UINT32_MAX, .read_bytes = 1, .write_bytes = UINT64_MAX };
	peaks[1] = (struct ioacct_qpeak_row){ .job_key = 101, .step_id = 0, .mnt_id = 21 };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_roundtrip),
		cmocka_unit_test(test_register_longest_strings),
		cmocka_unit_test(test_finish_step_roundtrip),
		cmocka_unit_test(test_finish_job_roundtrip),
		cmocka_unit_test(test_finish_job_report_roundtrip),
		cmocka_unit_test(test_status_snapshot_roundtrip),
		cmocka_unit_test(test_live_roundtrip),
		cmocka_unit_test(test_reply_roundtrip),
		cmocka_unit_test(test_required_only),
		cmocka_unit_test(test_encode_appends),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_unknown_skipped),
		cmocka_unit_test(test_nesting_too_deep),
		cmocka_unit_test(test_too_many_rows),
		cmocka_unit_test(test_query_request_roundtrip),
		cmocka_unit_test(test_query_reply_roundtrip),
		cmocka_unit_test(test_node_parts_roundtrip),
		cmocka_unit_test(test_query_reply_bad),
		cmocka_unit_test(test_job_request_roundtrip),
		cmocka_unit_test(test_job_reply_roundtrip),
		cmocka_unit_test(test_snapshot_watches_roundtrip),
		cmocka_unit_test(test_job_reply_bad),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_send_recv_large),
		cmocka_unit_test(test_send_recv_pipe),
		cmocka_unit_test(test_recv_errors),
		cmocka_unit_test(test_send_closed_peer),
		cmocka_unit_test(test_client_call),
		cmocka_unit_test(test_client_call_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
