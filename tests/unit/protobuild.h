/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the protocol tests share (test_proto.c, test_proto_query.c, test_proto_io.c): the
 * attribute numbers written out again, a raw message builder to write what
 * the encoder never would, well-formed messages and their round trips.
 * Tests only: a failed allocation or call fails the test (cmocka).
 */
#ifndef IOACCT_TEST_PROTOBUILD_H
#define IOACCT_TEST_PROTOBUILD_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	A_MNT_KEY = 150,
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

static inline void raw_bytes(struct raw *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->p = realloc(r->p, r->cap);
		assert_non_null(r->p);
	}
	memcpy(r->p + r->len, p, n);
	r->len += n;
}

static inline void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void raw_begin(struct raw *r, uint32_t magic, uint16_t version, uint16_t type,
			     uint32_t seq)
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
static inline void raw_finish(struct raw *r)
{
	le32(r->p + 8, (uint32_t)(r->len - HDR));
}

static inline void raw_attr(struct raw *r, uint16_t type, const void *val, size_t len)
{
	static const uint8_t zero[4];
	uint8_t h[4];

	le16(h, type);
	le16(h + 2, (uint16_t)len);
	raw_bytes(r, h, sizeof(h));
	raw_bytes(r, val, len);
	raw_bytes(r, zero, (4 - len % 4) % 4);
}

static inline void raw_u32(struct raw *r, uint16_t type, uint32_t v)
{
	uint8_t b[4];

	le32(b, v);
	raw_attr(r, type, b, sizeof(b));
}

static inline void raw_u64(struct raw *r, uint16_t type, uint64_t v)
{
	uint8_t b[8];

	le32(b, (uint32_t)v);
	le32(b + 4, (uint32_t)(v >> 32));
	raw_attr(r, type, b, sizeof(b));
}

static inline void raw_str(struct raw *r, uint16_t type, const char *s)
{
	raw_attr(r, type, s, strlen(s));
}

static inline size_t raw_nest_begin(struct raw *r, uint16_t type)
{
	size_t off = r->len;

	raw_attr(r, type, "", 0);
	return off;
}

static inline void raw_nest_end(struct raw *r, size_t off)
{
	le16(r->p + off + 2, (uint16_t)(r->len - off - 4));
}

/* A register request with what it requires, before the test adds its part. */
static inline void raw_register_base(struct raw *r)
{
	raw_begin(r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REGISTER, 7);
	raw_u64(r, A_JOB_ID, 42);
	raw_u32(r, A_STEP_ID, 0);
	raw_u32(r, A_UID, 1000);
	raw_u32(r, A_GID, 100);
	raw_u32(r, A_PID, 4242);
}

static inline int decode_req(const struct raw *r, struct ioacct_request *req, char *err,
			     size_t errlen)
{
	err[0] = '\0';
	return ioacct_proto_decode_request(r->p, r->len, req, err, errlen);
}

static inline int decode_rep(const struct raw *r, struct ioacct_reply *rep, char *err,
			     size_t errlen)
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

static inline void fill_register(struct ioacct_request *req)
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

static inline void fill_row(struct ioacct_snap_row *row, unsigned int i)
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

static inline void fill_reply(struct ioacct_reply *rep, struct ioacct_snap_row *rows, size_t nrows)
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

static inline void assert_row_equal(const struct ioacct_snap_row *a,
				    const struct ioacct_snap_row *b)
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

static inline void assert_reply_equal(const struct ioacct_reply *a, const struct ioacct_reply *b)
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

static inline void encode_req(struct ioacct_buf *b, const struct ioacct_request *req)
{
	ioacct_buf_reset(b);
	assert_int_equal(ioacct_proto_encode_request(b, req), 0);
}

static inline void roundtrip_request(const struct ioacct_request *in, struct ioacct_request *out)
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

static inline void roundtrip_reply(const struct ioacct_reply *in, struct ioacct_reply *out)
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

#endif /* IOACCT_TEST_PROTOBUILD_H */
