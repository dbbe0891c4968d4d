/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the channel between ioacctd and its workers (issue 37):
 * the worker messages of the wire protocol (lib/core/proto.c: their numbers
 * pinned, each one's fields through a round trip, the U64S kind's lengths)
 * and daemon/wchan.c on a real socketpair: descriptors arrive with their
 * own message and no other, a message read in parts keeps its state, the
 * event loop's queue keeps whole messages with their descriptors, a call
 * answers the peer's requests and logs its lines before its reply, and a
 * peer that sends something else, or nothing, is an error.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "proto.h"
#include "protobuild.h"
#include "util.h"
#include "wchan.h"

/* Written out again on purpose (see protobuild.h). */
enum { A_DETAIL = 30, A_BYTES = 38, A_CODE = 175, A_OFFSETS = 176, A_MISSING = 177 };

static void test_worker_numbers(void **state)
{
	static const uint16_t types[] = {
		IOACCT_MSG_W_INIT, IOACCT_MSG_W_LOG, IOACCT_MSG_W_PAGE, IOACCT_MSG_W_POST,
		IOACCT_MSG_W_ELF, IOACCT_MSG_W_PG_CONNECT, IOACCT_MSG_W_PG_PUT,
		IOACCT_MSG_W_PG_OFFER, IOACCT_MSG_W_PG_CLAIM, IOACCT_MSG_W_PG_WRITTEN,
		IOACCT_MSG_W_PG_PURGE, IOACCT_MSG_W_PG_DOWNSAMPLE,
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		assert_int_equal(types[i], 200 + i);
	assert_string_equal(ioacct_msg_type_name(IOACCT_MSG_W_PG_CLAIM), "w_pg_claim");
}

static void test_worker_roundtrip(void **state)
{
	struct ioacct_request in, out;
	struct ioacct_buf b = { 0 };
	char err[256];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_W_PG_OFFER;
	in.seq = 9;
	in.u.worker.job_id = 77;
	strcpy(in.u.worker.cluster, "hpc");
	in.u.worker.restart = 2;
	in.u.worker.start_ns = -1;
	in.u.worker.uid = 1000;
	in.u.worker.gid = 100;
	strcpy(in.u.worker.report.path, "/home/u/ioacct-77");
	in.u.worker.report.formats = 5;
	strcpy(in.u.worker.report.nodes, "n1,n2");
	assert_int_equal(ioacct_proto_encode_request(&b, &in), 0);
	assert_int_equal(ioacct_proto_decode_request(b.data, b.len, &out, err, sizeof(err)), 0);
	assert_int_equal(out.type, IOACCT_MSG_W_PG_OFFER);
	assert_memory_equal(&in.u.worker, &out.u.worker, sizeof(in.u.worker));
	/* A log line: its level is required, its text may be empty. */
	ioacct_buf_reset(&b);
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_W_LOG;
	in.u.worker.code = 3;
	assert_int_equal(ioacct_proto_encode_request(&b, &in), 0);
	assert_int_equal(ioacct_proto_decode_request(b.data, b.len, &out, err, sizeof(err)), 0);
	assert_int_equal(out.u.worker.code, 3);
	ioacct_buf_free(&b);
}

/* The cluster retention's: a cutoff before the epoch survives; the counts come back whole. */
static void test_retain_roundtrip(void **state)
{
	struct ioacct_request in, out;
	struct ioacct_reply rin, rout;
	struct ioacct_buf b = { 0 };
	struct raw r = { 0 };
	char err[256];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = IOACCT_MSG_W_PG_DOWNSAMPLE;
	in.u.worker.cutoff = -86400;
	in.u.worker.bin_width_ns = 600000000000ULL;
	in.u.worker.code = 1;
	assert_int_equal(ioacct_proto_encode_request(&b, &in), 0);
	assert_int_equal(ioacct_proto_decode_request(b.data, b.len, &out, err, sizeof(err)), 0);
	assert_int_equal(out.type, IOACCT_MSG_W_PG_DOWNSAMPLE);
	assert_memory_equal(&in.u.worker, &out.u.worker, sizeof(in.u.worker));
	ioacct_buf_reset(&b);
	memset(&rin, 0, sizeof(rin));
	rin.status = -ENOTCONN;
	strcpy(rin.error, "cluster store: connection lost");
	rin.w.purged.runs = 1ULL << 40;
	rin.w.purged.parts = 3;
	rin.w.purged.series = UINT64_MAX;
	rin.w.purged.months = 2;
	assert_int_equal(ioacct_proto_encode_reply(&b, &rin), 0);
	assert_int_equal(ioacct_proto_decode_reply(b.data, b.len, &rout, err, sizeof(err)), 0);
	assert_int_equal(rout.status, -ENOTCONN);
	assert_memory_equal(&rin.w.purged, &rout.w.purged, sizeof(rin.w.purged));
	ioacct_reply_free(&rout);
	ioacct_buf_free(&b);
	/* A purge without its cutoff is refused. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_W_PG_PURGE, 1);
	raw_u32(&r, A_CODE, 1);
	raw_finish(&r);
	assert_int_not_equal(ioacct_proto_decode_request(r.p, r.len, &out, err, sizeof(err)), 0);
	free(r.p);
}

/* An ELF reply's offsets: exactly the field's words, little-endian. */
static void test_offsets(void **state)
{
	struct ioacct_reply in, out;
	struct ioacct_buf b = { 0 };
	struct raw r = { 0 };
	uint8_t words[8 * IOACCT_PROTO_OFFSETS_MAX] = { 0 };
	char err[256];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.seq = 4;
	in.w.code = 2;
	for (size_t i = 0; i < IOACCT_PROTO_OFFSETS_MAX; i++)
		in.w.offsets[i] = i % 3 ? 0 : 0x100000000ULL * i + i;
	strcpy(in.w.missing, "n3,n4");
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	assert_int_equal(ioacct_proto_decode_reply(b.data, b.len, &out, err, sizeof(err)), 0);
	assert_int_equal(out.w.code, 2);
	assert_memory_equal(in.w.offsets, out.w.offsets, sizeof(in.w.offsets));
	assert_string_equal(out.w.missing, "n3,n4");
	ioacct_reply_free(&out);
	ioacct_buf_free(&b);

	/* On the wire: offset 1 is word 1, little-endian. */
	words[8] = 0x34;
	words[9] = 0x12;
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	raw_attr(&r, A_OFFSETS, words, sizeof(words));
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &out, err, sizeof(err)), 0);
	assert_int_equal(out.w.offsets[1], 0x1234);
	ioacct_reply_free(&out);
	/* Fewer words than the field: refused; not whole words: refused. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	raw_attr(&r, A_OFFSETS, words, 16);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &out, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reply message: attribute 176 (offsets) has length 16, expected 512");
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_REPLY, 1);
	raw_u32(&r, A_STATUS, 0);
	raw_attr(&r, A_OFFSETS, words, 12);
	raw_finish(&r);
	assert_int_equal(decode_rep(&r, &out, err, sizeof(err)), -EPROTO);
	assert_string_equal(err, "reply message: attribute 176 (offsets) has length 12, not whole u64 words");
	free(r.p);
}

static void pair(struct ioacct_wchan *a, struct ioacct_wchan *b)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(ioacct_wchan_init(a, sv[0]), 0);
	assert_int_equal(ioacct_wchan_init(b, sv[1]), 0);
}

static void encode(struct ioacct_buf *b, uint16_t type, uint64_t size)
{
	struct ioacct_request req;

	memset(&req, 0, sizeof(req));
	req.type = type;
	req.u.worker.size = size;
	strcpy(req.u.worker.text, "x");
	ioacct_buf_reset(b);
	assert_int_equal(ioacct_proto_encode_request(b, &req), 0);
}

/* The inode of a descriptor, to tell which file came. */
static ino_t ino_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

/* Descriptors arrive with their own message: before it, none; after it, none. */
static void test_fds_with_their_message(void **state)
{
	struct ioacct_wchan a, b;
	struct ioacct_buf m = { 0 };
	int p1[2], p2[2], fds[2];
	char err[256];

	(void)state;
	pair(&a, &b);
	assert_int_equal(pipe2(p1, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p2, O_CLOEXEC), 0);
	/* One without, one with two, one without: sent back to back before any read. */
	encode(&m, IOACCT_MSG_W_PAGE, 1);
	assert_int_equal(ioacct_wchan_send(&a, &m, NULL, 0, 0, -1), 0);
	fds[0] = p1[0];
	fds[1] = p2[0];
	encode(&m, IOACCT_MSG_W_POST, 2);
	assert_int_equal(ioacct_wchan_send(&a, &m, fds, 2, 0, -1), 0);
	encode(&m, IOACCT_MSG_W_PAGE, 3);
	assert_int_equal(ioacct_wchan_send(&a, &m, NULL, 0, 0, -1), 0);

	assert_int_equal(ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 1);
	assert_int_equal(ioacct_wchan_type(&b), IOACCT_MSG_W_PAGE);
	assert_int_equal(b.nfds, 0);
	ioacct_wchan_done(&b);
	assert_int_equal(ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 1);
	assert_int_equal(ioacct_wchan_type(&b), IOACCT_MSG_W_POST);
	assert_int_equal(b.nfds, 2);
	assert_int_equal(ino_of(b.fds[0]), ino_of(p1[0]));
	assert_int_equal(ino_of(b.fds[1]), ino_of(p2[0]));
	/* Received close-on-exec: a worker's descriptors never reach a process it starts. */
	assert_true(fcntl(b.fds[0], F_GETFD) & FD_CLOEXEC);
	ioacct_wchan_done(&b);
	assert_int_equal(ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 1);
	assert_int_equal(b.nfds, 0);
	ioacct_wchan_done(&b);
	/* Nothing more: a wait of 0 ms says so at once. */
	assert_int_equal(ioacct_wchan_recv(&b, 0, -1, err, sizeof(err)), 0);
	/* The peer gone: said. */
	ioacct_wchan_close(&a);
	assert_int_equal(ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)),
			 -ECONNRESET);
	ioacct_wchan_close(&b);
	for (int i = 0; i < 2; i++) {
		close(p1[i]);
		close(p2[i]);
	}
	ioacct_buf_free(&m);
}

/* A message that arrives in parts is whole at the end; a bad header is refused. */
static void test_parts_and_bad_header(void **state)
{
	struct ioacct_wchan a, b;
	struct ioacct_buf m = { 0 };
	char err[256];

	(void)state;
	pair(&a, &b);
	encode(&m, IOACCT_MSG_W_PAGE, 7);
	assert_int_equal(write(a.fd, m.data, 10), 10);
	assert_int_equal(ioacct_wchan_recv(&b, 0, -1, err, sizeof(err)), 0);
	assert_int_equal(write(a.fd, m.data + 10, m.len - 10), (ssize_t)(m.len - 10));
	assert_int_equal(ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 1);
	assert_int_equal(b.in.len, m.len);
	ioacct_wchan_done(&b);
	assert_int_equal(write(a.fd, "not a message at all", 20), 20);
	assert_int_equal(ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "bad magic"));
	ioacct_wchan_close(&a);
	ioacct_wchan_close(&b);
	ioacct_buf_free(&m);
}

/* The event loop's queue: what the socket does not take waits, whole, with its descriptors. */
static void test_queue(void **state)
{
	struct ioacct_wchan a, b;
	struct ioacct_buf m = { 0 };
	char err[256];
	int p[2], n = 0, got = 0, sent;

	(void)state;
	pair(&a, &b);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	/* Large messages until one waits in the queue. */
	encode(&m, IOACCT_MSG_W_PAGE, 0);
	m.data = realloc(m.data, 1 << 20);
	memset(m.data + m.len, 0, (1 << 20) - m.len);
	le32(m.data + 8, (1 << 20) - HDR);
	m.len = 1 << 20;
	while (!ioacct_wchan_queued(&a) && n < 64) {
		assert_int_equal(ioacct_wchan_queue(&a, &m, &p[0], 1), 0);
		n++;
	}
	assert_true(ioacct_wchan_queued(&a));
	/* The caller's descriptor may go: the queue has its own. */
	close(p[0]);
	sent = n;
	while (got < sent) {
		int ret = ioacct_wchan_recv(&b, ioacct_wchan_now_ms() + 100, -1, err, sizeof(err));

		assert_true(ret >= 0);
		assert_int_equal(ioacct_wchan_flush(&a), 0);
		if (ret == 0)
			continue;
		assert_int_equal(b.in.len, 1 << 20);
		assert_int_equal(b.nfds, 1);
		assert_int_equal(ino_of(b.fds[0]), ino_of(p[1]));
		ioacct_wchan_done(&b);
		got++;
	}
	assert_false(ioacct_wchan_queued(&a));
	ioacct_wchan_close(&a);
	ioacct_wchan_close(&b);
	close(p[1]);
	free(m.data);
}

/* The peer of a call: logs a line, asks a JOB of the caller, then answers. */
static void *peer(void *arg)
{
	struct ioacct_wchan *b = arg;
	struct ioacct_request req, ask, line;
	struct ioacct_reply rep, sub;
	struct ioacct_buf m = { 0 };
	char err[256];

	assert_int_equal(ioacct_wchan_recv(b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 1);
	assert_int_equal(ioacct_proto_decode_request(b->in.data, b->in.len, &req, err, sizeof(err)), 0);
	ioacct_wchan_done(b);
	memset(&line, 0, sizeof(line));
	line.type = IOACCT_MSG_W_LOG;
	line.u.worker.code = 1;
	strcpy(line.u.worker.text, "on its way");
	assert_int_equal(ioacct_proto_encode_request(&m, &line), 0);
	assert_int_equal(ioacct_wchan_send(b, &m, NULL, 0, 0, -1), 0);
	memset(&ask, 0, sizeof(ask));
	ask.type = IOACCT_MSG_JOB;
	ask.u.job.job_key = 42;
	assert_int_equal(ioacct_wchan_call(b, &ask, NULL, 0, &sub, NULL, NULL, NULL, NULL,
					   ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 0);
	memset(&rep, 0, sizeof(rep));
	rep.seq = req.seq;
	rep.w.code = sub.status == -ENOENT && strstr(sub.error, "key 42") ? 200 : 500;
	ioacct_reply_free(&sub);
	assert_int_equal(ioacct_wchan_reply(b, &rep, 0, -1), 0);
	ioacct_buf_free(&m);
	return NULL;
}

/* A peer that asks a JOB of the caller and never waits for the answer. */
static void *asker(void *arg)
{
	struct ioacct_wchan *b = arg;
	struct ioacct_request ask;
	struct ioacct_buf m = { 0 };
	char err[256];

	assert_int_equal(ioacct_wchan_recv(b, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 1);
	ioacct_wchan_done(b);
	memset(&ask, 0, sizeof(ask));
	ask.type = IOACCT_MSG_JOB;
	ask.seq = 1;
	assert_int_equal(ioacct_proto_encode_request(&m, &ask), 0);
	assert_int_equal(ioacct_wchan_send(b, &m, NULL, 0, 0, -1), 0);
	ioacct_buf_free(&m);
	return NULL;
}

static void serve_job(void *ctx, const struct ioacct_request *req, struct ioacct_reply *rep)
{
	(*(int *)ctx)++;
	ioacct_reply_error(rep, -ENOENT, "no job with key %lld here", (long long)req->u.job.job_key);
}

static void log_line(void *ctx, const struct ioacct_req_worker *line)
{
	snprintf(ctx, 64, "%u %s", line->code, line->text);
}

static void test_call(void **state)
{
	struct ioacct_wchan a, b;
	struct ioacct_request req;
	struct ioacct_reply rep;
	char err[256], logged[64] = "";
	pthread_t t;
	int served = 0;

	(void)state;
	pair(&a, &b);
	assert_int_equal(pthread_create(&t, NULL, peer, &b), 0);
	memset(&req, 0, sizeof(req));
	req.type = IOACCT_MSG_W_PG_CONNECT;
	assert_int_equal(ioacct_wchan_call(&a, &req, NULL, 0, &rep, serve_job, &served, log_line,
					   logged, ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), 0);
	pthread_join(t, NULL);
	assert_int_equal(served, 1);
	assert_string_equal(logged, "1 on its way");
	assert_int_equal(rep.w.code, 200);
	ioacct_reply_free(&rep);
	/* A call nobody answers ends at its deadline; one whose requests may not come, at the first. */
	assert_int_equal(ioacct_wchan_call(&a, &req, NULL, 0, &rep, NULL, NULL, NULL, NULL,
					   ioacct_wchan_now_ms() + 200, -1, err, sizeof(err)), -ETIMEDOUT);
	ioacct_wchan_close(&a);
	ioacct_wchan_close(&b);
	pair(&a, &b);
	assert_int_equal(pthread_create(&t, NULL, asker, &b), 0);
	assert_int_equal(ioacct_wchan_call(&a, &req, NULL, 0, &rep, NULL, NULL, NULL, NULL,
					   ioacct_wchan_now_ms() + 5000, -1, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "a job request where none may come"));
	pthread_join(t, NULL);
	ioacct_wchan_close(&a);
	ioacct_wchan_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_numbers),
		cmocka_unit_test(test_worker_roundtrip),
		cmocka_unit_test(test_retain_roundtrip),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_fds_with_their_message),
		cmocka_unit_test(test_parts_and_bad_header),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
