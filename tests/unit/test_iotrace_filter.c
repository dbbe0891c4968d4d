// SPDX-License-Identifier: GPL-2.0-or-later
/* trace/filter.c: iotrace's --filter grammar and --assert expressions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tracefmt.h"

static const struct ioacct_trace_rec recs[] = {
	{ .op = 2, .pid = 10, .tid = 10, .comm = "python3", .mount = "/home", .path = "/home/u/a.py",
	  .offset = -1, .ret = 3, .dur_ns = 5000 },
	{ .op = 1, .pid = 10, .tid = 11, .comm = "python3", .mount = "/scratch",
	  .path = "/scratch/out.h5", .offset = 0, .size = 1048576, .ret = 1048576, .dur_ns = 2000000 },
	{ .op = 1, .pid = 10, .tid = 11, .comm = "python3", .mount = "/scratch",
	  .path = "/scratch/out.h5", .offset = 1048576, .size = 100, .ret = 100, .dur_ns = 900 },
	{ .op = 2, .pid = 12, .tid = 12, .comm = "sh", .mount = "/", .path = "/etc/missing",
	  .offset = -1, .ret = -2, .dur_ns = 700 },
	{ .op = 32, .pid = 10, .tid = 10, .comm = "python3", .mount = "/home", .path = "",
	  .offset = -1, .ret = 0, .dur_ns = 300 },
};

/* iotrace --rpc: a WRITE of an fsync, a failed GETATTR outside any call, then a call. */
static const struct ioacct_trace_rpc write_rpc = {
	.name = "WRITE", .prog = 100003, .vers = 4, .proc = 4, .xid = 0x1234, .call = 7,
	.has_file = true, .fileid = 131073, .count = 1048576, .bytes_sent = 1048812,
	.bytes_recv = 200,
};
static const struct ioacct_trace_rpc getattr_rpc = {
	.name = "GETATTR", .prog = 100003, .vers = 4, .proc = 17, .xid = 0x1235,
	.call = IOACCT_TRACE_NO_OP, .bytes_sent = 240, .bytes_recv = 0,
};
static const struct ioacct_trace_rec rpc_recs[] = {
	{ .op = IOACCT_TRACE_NO_OP, .pid = 20, .tid = 20, .comm = "dd", .mount = "/mnt/nfs",
	  .path = "/mnt/nfs/f", .offset = 4096, .size = 1048576, .ret = 0, .dur_ns = 3000000,
	  .rpc = &write_rpc },
	{ .op = IOACCT_TRACE_NO_OP, .pid = 20, .tid = 20, .comm = "dd", .mount = "", .path = "",
	  .offset = -1, .ret = -5, .dur_ns = 200000, .rpc = &getattr_rpc },
	{ .op = 7, .pid = 20, .tid = 20, .comm = "dd", .mount = "/mnt/nfs", .path = "/mnt/nfs/f",
	  .offset = -1, .ret = 0, .dur_ns = 4000000 },
};

/* Which of rs[] the filter matches, as a string of 0 and 1. */
static void expect_in(const struct ioacct_trace_rec *rs, size_t n, const char *text,
		      const char *want)
{
	struct ioacct_trace_filter f = { 0 };
	char err[512], got[16] = "";

	if (ioacct_trace_filter_parse(text, &f, err, sizeof(err)))
		fail_msg("%s: %s", text, err);
	for (size_t i = 0; i < n; i++)
		got[i] = ioacct_trace_filter_match(&f, &rs[i]) ? '1' : '0';
	if (strcmp(got, want))
		fail_msg("%s: matched %s, want %s", text, got, want);
	ioacct_trace_filter_free(&f);
}

static void expect(const char *text, const char *want)
{
	expect_in(recs, sizeof(recs) / sizeof(recs[0]), text, want);
}

static void expect_rpc(const char *text, const char *want)
{
	expect_in(rpc_recs, sizeof(rpc_recs) / sizeof(rpc_recs[0]), text, want);
}

static void expect_error(const char *text, const char *want)
{
	struct ioacct_trace_filter f = { 0 };
	char err[512];

	assert_int_equal(ioacct_trace_filter_parse(text, &f, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("%s: error '%s', want '%s'", text, err, want);
	assert_int_equal(f.n, 0);
	ioacct_trace_filter_free(&f);
}

static void test_fields(void **state)
{
	expect("", "11111");
	expect("op=write", "01100");
	expect("op=open|close", "10011");
	expect("op!=write", "10011");
	expect("op!=write|open", "00001");
	expect("pid=10", "11101");
	expect("tid>=11", "01110");
	expect("comm=sh", "00010");
	expect("comm~py*", "11101");
	expect("mount=/scratch", "01100");
	expect("mount!=/scratch", "10011");
	expect("path~*.py", "10000");
	expect("path!~*.py", "01111");
	expect("size>=1M", "01000");
	expect("size<1K", "10111");
	expect("size=100", "00100");
	expect("offset>=1K", "00100");
	expect("offset=0", "01000");
	expect("offset!=0", "10111");
	expect("errno=ENOENT", "00010");
	expect("errno=0", "11101");
	expect("errno!=0", "00010");
	expect("errno=2", "00010");
	expect("result<0", "00010");
	expect("result==3", "10000");
	expect("dur>=1ms", "01000");
	expect("dur<1us", "00111");
	expect("dur>2s", "00000");
}

/* A field a record lacks (op of an RPC, rpc of a call) matches nothing but != and !~. */
static void test_rpc_fields(void **state)
{
	expect_rpc("rpc=WRITE", "100");
	expect_rpc("rpc=WRITE|GETATTR", "110");
	expect_rpc("rpc~*", "110");
	expect_rpc("rpc!=WRITE", "011");
	expect_rpc("rpc!~*", "001");
	expect_rpc("op=fsync", "001");
	expect_rpc("op!=fsync", "110");
	expect_rpc("call=fsync", "100");
	expect_rpc("call!=fsync", "011");
	expect_rpc("sent>1M", "100");
	expect_rpc("recv=0", "010");
	expect_rpc("status=0", "100");
	expect_rpc("status=EIO", "010");
	expect_rpc("status=-5", "010");
	expect_rpc("status<0", "010");
	expect_rpc("status!=0", "011");
	expect_rpc("errno=EIO", "010");
	expect_rpc("result=0", "101");
	expect_rpc("fileid=131073", "100");
	expect_rpc("fileid!=131073", "011");
	expect_rpc("size=1M", "100");
	expect_rpc("offset=4K", "100");
	expect_rpc("path=/mnt/nfs/f", "101");
	expect_rpc("rpc=WRITE,mount=/mnt/nfs,dur>=1ms", "100");
	expect_error("status=ENOPE", "status=ENOPE: 'ENOPE' is not a status");
	expect_error("call=wrte", "call=wrte: unknown operation 'wrte'");
	expect_error("rpc<WRITE", "rpc<WRITE: rpc compares with = != ~ !~");
	expect_error("xid=1", "unknown field 'xid' (op, pid, tid, comm, mount, path, size, offset, "
		     "errno, result, dur; RPCs: rpc, call, sent, recv, status, fileid)");
}

static void test_terms_add_up(void **state)
{
	struct ioacct_trace_filter f = { 0 };
	char err[256];

	expect("op=write,mount=/scratch,size>=1M", "01000");
	expect("op=open,path~*.py", "10000");
	assert_int_equal(ioacct_trace_filter_parse("op=write", &f, err, sizeof(err)), 0);
	assert_int_equal(ioacct_trace_filter_parse("size<1K", &f, err, sizeof(err)), 0);
	assert_int_equal(f.n, 2);
	/* A bad second filter leaves the first as it was. */
	assert_int_equal(ioacct_trace_filter_parse("pid=1,op=nope", &f, err, sizeof(err)), -EINVAL);
	assert_int_equal(f.n, 2);
	assert_false(ioacct_trace_filter_match(&f, &recs[1]));
	assert_true(ioacct_trace_filter_match(&f, &recs[2]));
	ioacct_trace_filter_free(&f);
}

static void test_errors(void **state)
{
	expect_error("op=wrte", "op=wrte: unknown operation 'wrte' (read, write, open, create, mkdir, "
		     "unlink, rmdir, fsync, rename, stat, seek, close)");
	expect_error("mount=/x,sise>1", "sise>1: unknown field 'sise'");
	expect_error("size", "size: expected an operator after 'size'");
	expect_error("size>=", "size>=: no value after the operator");
	expect_error("size>=1Q", "size>=1Q: '1Q' is not a size");
	expect_error("size>=-1", "size>=-1: '-1' is not a size");
	expect_error("dur>1h", "dur>1h: '1h' is not a duration");
	expect_error("pid=x", "pid=x: 'x' is not a number");
	expect_error("errno=ENOPE", "errno=ENOPE: unknown errno 'ENOPE'");
	expect_error("op<write", "op<write: op compares with = != ");
	expect_error("path>/a", "path>/a: path compares with = != ~ !~");
	expect_error("size~1", "size~1: '~' matches strings");
}

static struct ioacct_trace_assert run_in(const struct ioacct_trace_rec *rs, size_t n,
				       const char *text)
{
	struct ioacct_trace_assert a;
	char err[512];

	if (ioacct_trace_assert_parse(text, &a, err, sizeof(err)))
		fail_msg("%s: %s", text, err);
	for (size_t i = 0; i < n; i++)
		ioacct_trace_assert_add(&a, &rs[i]);
	return a;
}

static struct ioacct_trace_assert run(const char *text)
{
	return run_in(recs, sizeof(recs) / sizeof(recs[0]), text);
}

static void test_asserts(void **state)
{
	static const struct {
		const char *text;
		uint64_t seen;
		bool holds;
	} cases[] = {
		{ "count(op=open,path~*.py)<=100", 1, true },
		{ "count()==5", 5, true },
		{ "count(op=write)==2", 2, true },
		{ "count(op=write)!=2", 2, false },
		{ "count(op=write)<2", 2, false },
		{ "count(op=write)>1", 2, true },
		{ "bytes(op=write)==1048676", 1048676, true },
		{ "bytes(op=write)>=1M", 1048676, true },
		{ "bytes(op=write,size<1K)==100", 100, true },
		{ "bytes(op=write)<1M", 1048676, false },
		{ "count(errno=ENOENT)=1", 1, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ioacct_trace_assert a = run(cases[i].text);

		if (a.seen != cases[i].seen || ioacct_trace_assert_holds(&a) != cases[i].holds)
			fail_msg("%s: seen %llu, holds %d", cases[i].text, (unsigned long long)a.seen,
				 ioacct_trace_assert_holds(&a));
		assert_string_equal(a.text, cases[i].text);
		ioacct_trace_assert_free(&a);
	}
}

/* iotrace --rpc --assert: RPCs count as records; bytes() sums a READ's or WRITE's data. */
static void test_rpc_asserts(void **state)
{
	static const struct {
		const char *text;
		uint64_t seen;
		bool holds;
	} cases[] = {
		{ "count(rpc=COMMIT)>=1", 0, false },
		{ "count(rpc=COMMIT)==0", 0, true },
		{ "count(rpc=WRITE)>=1", 1, true },
		{ "count(rpc~*)==2", 2, true },
		{ "count(op=fsync)==1", 1, true },
		{ "count()==3", 3, true },
		{ "bytes(rpc=WRITE)==1M", 1048576, true },
		{ "count(rpc=GETATTR,status<0)<=0", 1, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ioacct_trace_assert a = run_in(rpc_recs, sizeof(rpc_recs) / sizeof(rpc_recs[0]),
						      cases[i].text);

		if (a.seen != cases[i].seen || ioacct_trace_assert_holds(&a) != cases[i].holds)
			fail_msg("%s: seen %llu, holds %d", cases[i].text, (unsigned long long)a.seen,
				 ioacct_trace_assert_holds(&a));
		ioacct_trace_assert_free(&a);
	}
}

static void test_assert_errors(void **state)
{
	static const char *const cases[][2] = {
		{ "cnt(op=write)==3", "cnt(op=write)==3: expected count(FILTER) or bytes(FILTER)" },
		{ "count op=write", "expected count(FILTER) or bytes(FILTER)" },
		{ "count(op=write==3", "no ')' after 'count('" },
		{ "count(op=write)3", "count(op=write)3: expected == != < <= > >= after ')'" },
		{ "count(op=write)~3", "expected == != < <= > >= after ')'" },
		{ "count(op=write)==x", "'x' is not a number" },
		{ "count(op=wrte)==3", "count(op=wrte)==3: op=wrte: unknown operation 'wrte'" },
	};
	struct ioacct_trace_assert a;
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ioacct_trace_assert_parse(cases[i][0], &a, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i][1]))
			fail_msg("%s: error '%s', want '%s'", cases[i][0], err, cases[i][1]);
		ioacct_trace_assert_free(&a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_rpc_fields),
		cmocka_unit_test(test_terms_add_up),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_asserts),
		cmocka_unit_test(test_rpc_asserts),
		cmocka_unit_test(test_assert_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
