// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace/otlp.c, http.c, perfetto.c: the protobuf wire format byte for byte
 * (varints, keys, attributes, names that are not UTF-8, a root span), and --perfetto's
 * events. The whole request is decoded by the OpenTelemetry schema in
 * tests/integration/46-otlp.sh, not here.
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

#include "otlp.h"
#include "tracefmt.h"

static void expect_bytes(const struct ioacct_pb *b, const uint8_t *want, size_t len)
{
	assert_false(b->oom);
	assert_int_equal(b->len, len);
	assert_memory_equal(b->p, want, len);
}

static void test_varint(void **state)
{
	struct ioacct_pb b = { 0 };
	static const uint8_t want[] = {
		0x00, 0x7f, 0xac, 0x02, /* 0, 127, 300 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* -1 as int64 */
	};

	(void)state;
	ioacct_pb_varint(&b, 0);
	ioacct_pb_varint(&b, 127);
	ioacct_pb_varint(&b, 300);
	ioacct_pb_varint(&b, (uint64_t)-1);
	expect_bytes(&b, want, sizeof(want));
	ioacct_pb_free(&b);
}

static void test_fields(void **state)
{
	struct ioacct_pb b = { 0 };
	static const uint8_t want[] = {
		0x0a, 0x02, 'h', 'i',                             /* 1: "hi" */
		0x39, 0x01, 0x02, 0, 0, 0, 0, 0, 0,               /* 7: fixed64 0x201 */
		0x30, 0x01,                                       /* 6: varint 1 */
		/* 9: KeyValue { key "k", AnyValue { string_value "v" } } */
		0x4a, 0x08, 0x0a, 0x01, 'k', 0x12, 0x03, 0x0a, 0x01, 'v',
		/* 9: KeyValue { key "n", AnyValue { int_value 300 } } */
		0x4a, 0x08, 0x0a, 0x01, 'n', 0x12, 0x03, 0x18, 0xac, 0x02,
	};

	(void)state;
	ioacct_pb_string(&b, 1, "hi");
	ioacct_pb_fixed64(&b, 7, 0x201);
	ioacct_pb_uint(&b, 6, 1);
	ioacct_pb_attr_str(&b, 9, "k", "v");
	ioacct_pb_attr_int(&b, 9, "n", 300);
	expect_bytes(&b, want, sizeof(want));
	ioacct_pb_free(&b);
}

static void test_root_span(void **state)
{
	struct ioacct_otlp_ids ids = { .root_id = 0x0102030405060708ULL };
	struct ioacct_pb b = { 0 };
	uint8_t want[128];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 16; i++)
		ids.trace_id[i] = (uint8_t)(0xa0 + i);
	ioacct_otlp_root_span(&b, &ids, "job", 1, 2);
	want[n++] = 0x12;               /* ScopeSpans.spans */
	want[n++] = 18 + 10 + 5 + 2 + 9 + 9;
	want[n++] = 0x0a;               /* trace_id */
	want[n++] = 16;
	for (int i = 0; i < 16; i++)
		want[n++] = (uint8_t)(0xa0 + i);
	want[n++] = 0x12;               /* span_id, big-endian */
	want[n++] = 8;
	for (int i = 1; i <= 8; i++)
		want[n++] = (uint8_t)i;
	memcpy(want + n, "\x2a\x03job", 5); /* name; no parent_span_id (4) */
	n += 5;
	want[n++] = 0x30;               /* kind INTERNAL */
	want[n++] = 1;
	memcpy(want + n, "\x39\x01\0\0\0\0\0\0\0\x41\x02\0\0\0\0\0\0\0", 18);
	n += 18;
	expect_bytes(&b, want, n);
	ioacct_pb_free(&b);
}

/* A name users control: valid UTF-8 as it is; else U+FFFD and its exact bytes beside. */
static void test_attr_name(void **state)
{
	struct ioacct_pb b = { 0 }, want = { 0 };

	(void)state;
	ioacct_pb_attr_name(&b, 9, "file.path", "/t/ok", "raw");
	ioacct_pb_attr_str(&want, 9, "file.path", "/t/ok");
	expect_bytes(&b, want.p, want.len);
	b.len = want.len = 0;
	ioacct_pb_attr_name(&b, 9, "file.path", "/t/bad\xffname", "raw");
	ioacct_pb_attr_str(&want, 9, "file.path", "/t/bad\xef\xbf\xbdname");
	/* KeyValue { key "raw", AnyValue { bytes_value (7) = the exact 11 bytes } } */
	ioacct_pb_key(&want, 9, 2);
	ioacct_pb_varint(&want, 2 + 3 + 2 + 2 + 11);
	ioacct_pb_string(&want, 1, "raw");
	ioacct_pb_key(&want, 2, 2);
	ioacct_pb_varint(&want, 2 + 11);
	ioacct_pb_bytes(&want, 7, "/t/bad\xffname", 11);
	expect_bytes(&b, want.p, want.len);
	b.len = want.len = 0;
	/* Without a raw key only the replaced text goes. */
	ioacct_pb_attr_name(&b, 9, "process.command", "a\xc3", NULL);
	ioacct_pb_attr_str(&want, 9, "process.command", "a\xef\xbf\xbd");
	expect_bytes(&b, want.p, want.len);
	ioacct_pb_free(&b);
	ioacct_pb_free(&want);
}

static void test_perfetto(void **state)
{
	static const struct ioacct_trace_rec w = {
		.op = 1, .pid = 42, .tid = 43, .comm = "io\"seq", .mount = "/scratch",
		.path = "/scratch/f", .offset = 2100, .size = 300, .ret = 300,
		.start_ns = 1234567, .dur_ns = 21672,
	};
	struct ioacct_trace_rec o = w;
	struct ioacct_perfetto p = { 0 };
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	o.op = 2;
	o.offset = -1;
	o.size = 0;
	o.ret = -2;
	ioacct_perfetto_begin(f);
	ioacct_perfetto_event(f, &p, &w);
	ioacct_perfetto_event(f, &p, &o);
	ioacct_perfetto_end(f, &p);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":42,\"tid\":42,"
		"\"args\":{\"name\":\"io\\\"seq\"}},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":42,\"tid\":43,"
		"\"args\":{\"name\":\"io\\\"seq\"}},\n"
		"{\"ph\":\"X\",\"cat\":\"posix\",\"name\":\"write\",\"ts\":1234.567,\"dur\":21.672,"
		"\"pid\":42,\"tid\":43,\"args\":{\"file\":\"/scratch/f\",\"mount\":\"/scratch\","
		"\"offset\":2100,\"bytes\":300,\"result\":300}},\n"
		"{\"ph\":\"X\",\"cat\":\"posix\",\"name\":\"open\",\"ts\":1234.567,\"dur\":21.672,"
		"\"pid\":42,\"tid\":43,\"args\":{\"file\":\"/scratch/f\",\"mount\":\"/scratch\","
		"\"bytes\":0,\"result\":-2,\"errno\":\"ENOENT\"}}\n]}\n"));
	free(buf);
}

/* Whether the encoded bytes hold KeyValue { key, AnyValue { string_value value } }. */
static bool has_str_attr(const struct ioacct_pb *b, const char *key, const char *value)
{
	struct ioacct_pb want = { 0 };
	bool found;

	ioacct_pb_attr_str(&want, 9, key, value);
	found = memmem(b->p, b->len, want.p, want.len) != NULL;
	ioacct_pb_free(&want);
	return found;
}

static bool has_int_attr(const struct ioacct_pb *b, const char *key, int64_t value)
{
	struct ioacct_pb want = { 0 };
	bool found;

	ioacct_pb_attr_int(&want, 9, key, value);
	found = memmem(b->p, b->len, want.p, want.len) != NULL;
	ioacct_pb_free(&want);
	return found;
}

/* An RPC's span (iotrace --rpc --otlp): named for its procedure, ONC RPC's attributes and ioacct's. */
static void test_rpc_span(void **state)
{
	static const struct ioacct_trace_rpc c = {
		.name = "COMMIT", .prog = 100003, .vers = 4, .xid = 9, .call = 7, .writeback = true,
		.has_file = true, .fileid = 5, .bytes_sent = 128, .bytes_recv = 140, .rtt_ns = 700,
	};
	static const struct ioacct_trace_rec r = {
		.op = IOACCT_TRACE_NO_OP, .pid = 42, .tid = 42, .comm = "dd", .mount = "/mnt/nfs",
		.path = "/mnt/nfs/f", .offset = 0, .ret = -5, .start_ns = 2000, .dur_ns = 1000,
		.rpc = &c,
	};
	struct ioacct_otlp_ids ids = { .root_id = 1, .span_seed = 1 };
	struct ioacct_pb b = { 0 }, name = { 0 };

	(void)state;
	ioacct_otlp_span(&b, &ids, 1, &r);
	ioacct_pb_string(&name, 5, "COMMIT");
	assert_non_null(memmem(b.p, b.len, name.p, name.len));
	assert_true(has_str_attr(&b, "rpc.system", "onc_rpc"));
	assert_true(has_str_attr(&b, "rpc.onc_rpc.procedure_name", "COMMIT"));
	assert_true(has_int_attr(&b, "rpc.onc_rpc.version", 4));
	assert_true(has_int_attr(&b, "ioacct.rpc.program", 100003));
	assert_true(has_int_attr(&b, "ioacct.rpc.xid", 9));
	assert_true(has_str_attr(&b, "ioacct.rpc.call", "writeback"));
	assert_true(has_int_attr(&b, "ioacct.rpc.fileid", 5));
	assert_true(has_int_attr(&b, "ioacct.rpc.bytes_sent", 128));
	assert_true(has_int_attr(&b, "ioacct.rpc.bytes_recv", 140));
	assert_true(has_int_attr(&b, "ioacct.rpc.rtt_ns", 700));
	assert_true(has_int_attr(&b, "ioacct.result", -5));
	assert_true(has_str_attr(&b, "error.type", "EIO"));
	assert_true(has_str_attr(&b, "file.path", "/mnt/nfs/f"));
	ioacct_pb_free(&b);
	ioacct_pb_free(&name);
}

/* An RPC: a "b" and "e" pair of one id on its submitter's process (iotrace --rpc). */
static void test_perfetto_rpc(void **state)
{
	static const struct ioacct_trace_rpc c = {
		.name = "COMMIT", .xid = 9, .call = 7, .has_file = true, .fileid = 5, .count = 0,
		.bytes_sent = 128, .bytes_recv = 140,
	};
	static const struct ioacct_trace_rec r = {
		.op = IOACCT_TRACE_NO_OP, .pid = 42, .tid = 42, .comm = "dd", .mount = "",
		.path = "", .offset = 0, .ret = 0, .start_ns = 2000500, .dur_ns = 1000250, .rpc = &c,
	};
	struct ioacct_perfetto p = { 0 };
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	ioacct_perfetto_begin(f);
	ioacct_perfetto_event(f, &p, &r);
	ioacct_perfetto_event(f, &p, &r);
	ioacct_perfetto_end(f, &p);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "\"args\":{\"name\":\"dd\"}},\n"
		"{\"ph\":\"b\",\"cat\":\"rpc\",\"name\":\"COMMIT\",\"id\":1,\"ts\":2000.500,"
		"\"pid\":42,\"tid\":42,\"args\":{\"xid\":9,\"call\":\"fsync\",\"fileid\":5,"
		"\"offset\":0,\"count\":0,\"bytes_sent\":128,\"bytes_recv\":140,\"status\":0}},\n"
		"{\"ph\":\"e\",\"cat\":\"rpc\",\"name\":\"COMMIT\",\"id\":1,\"ts\":3000.750,"
		"\"pid\":42,\"tid\":42},\n"
		"{\"ph\":\"b\",\"cat\":\"rpc\",\"name\":\"COMMIT\",\"id\":2,"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_root_span),
		cmocka_unit_test(test_attr_name),
		cmocka_unit_test(test_perfetto),
		cmocka_unit_test(test_perfetto_rpc),
		cmocka_unit_test(test_rpc_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
