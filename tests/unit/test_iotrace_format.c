// SPDX-License-Identifier: GPL-2.0-or-later
/* trace/format.c: iotrace's operation and errno names, -p directives and --json lines. */
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

static const struct ioacct_trace_rec write_rec = {
	.op = 1, .pid = 42, .tid = 43, .comm = "ioseq", .mnt_id = 77, .mount = "/scratch",
	.path = "/scratch/out.h5", .offset = 2100, .size = 30000, .ret = 30000,
	.start_ns = 1234567890, .dur_ns = 21672,
};

static const struct ioacct_trace_rec failed_open = {
	.op = 2, .pid = 42, .tid = 42, .comm = "ioseq", .mount = "",
	.path = "", .offset = -1, .size = 0, .ret = -2, .start_ns = 5, .dur_ns = 999,
};

/* iotrace --rpc: the WRITE an fsync sent; a COMMIT of no call that failed. */
static const struct ioacct_trace_rpc write_rpc = {
	.name = "WRITE", .prog = 100003, .vers = 4, .proc = 4, .xid = 0x5a1f3c, .call = 7,
	.has_file = true, .fileid = 131073, .count = 4096, .bytes_sent = 4332, .bytes_recv = 160,
	.queue_ns = 1500, .rtt_ns = 250250, .execute_ns = 300000, .retrans = 1,
};
static const struct ioacct_trace_rec write_rpc_rec = {
	.op = IOACCT_TRACE_NO_OP, .pid = 50, .tid = 51, .comm = "dd", .mnt_id = 88,
	.mount = "/mnt/nfs", .path = "/mnt/nfs/f", .offset = 8192, .size = 4096, .ret = 0,
	.start_ns = 2000001000, .dur_ns = 310500, .rpc = &write_rpc,
};
static const struct ioacct_trace_rpc commit_rpc = {
	.name = "COMMIT", .prog = 100003, .vers = 3, .proc = 21, .xid = 7,
	.call = IOACCT_TRACE_NO_OP, .writeback = true, .bytes_sent = 128,
};
static const struct ioacct_trace_rec commit_rpc_rec = {
	.op = IOACCT_TRACE_NO_OP, .pid = 50, .tid = 50, .comm = "dd", .mount = "", .path = "",
	.offset = -1, .ret = -5, .start_ns = 3, .dur_ns = 4, .rpc = &commit_rpc,
};

static char *print(const char *fmt, const struct ioacct_trace_rec *r)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (fmt)
		ioacct_trace_format_print(f, fmt, r);
	else
		ioacct_trace_json_print(f, r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect(const char *fmt, const struct ioacct_trace_rec *r, const char *want)
{
	char err[256];
	char *got;

	if (fmt)
		assert_int_equal(ioacct_trace_format_check(fmt, err, sizeof(err)), 0);
	got = print(fmt, r);
	assert_string_equal(got, want);
	free(got);
}

static void test_names(void **state)
{
	uint32_t op;
	int e;

	assert_string_equal(ioacct_trace_op_name(0), "read");
	assert_string_equal(ioacct_trace_op_name(9), "stat");
	assert_string_equal(ioacct_trace_op_name(32), "close");
	assert_null(ioacct_trace_op_name(10));
	assert_null(ioacct_trace_op_name(1000));
	assert_int_equal(ioacct_trace_op_parse("close", &op), 0);
	assert_int_equal(op, 32);
	assert_int_equal(ioacct_trace_op_parse("fsync", &op), 0);
	assert_int_equal(op, 7);
	assert_int_equal(ioacct_trace_op_parse("wrte", &op), -EINVAL);
	assert_string_equal(ioacct_trace_errno_name(ENOENT), "ENOENT");
	assert_null(ioacct_trace_errno_name(4000));
	assert_int_equal(ioacct_trace_errno_parse("EDQUOT", &e), 0);
	assert_int_equal(e, EDQUOT);
	assert_int_equal(ioacct_trace_errno_parse("enoent", &e), -EINVAL);
}

static void test_directives(void **state)
{
	expect("%c %p %t %n %m %f %o %s %r %T %D %%", &write_rec,
	       "write 42 43 ioseq /scratch /scratch/out.h5 2100 30000 30000 1.234567 21.672 %\n");
	expect("%c %m %f %o %s %r %T %D", &failed_open, "open - - - 0 ENOENT 0.000000 0.999\n");
	/* An errno without a name prints as its number. */
	struct ioacct_trace_rec odd = failed_open;

	odd.ret = -4000;
	expect("%r", &odd, "E4000\n");
	expect("plain text", &write_rec, "plain text\n");
	expect("", &write_rec, "\n");
}

/* An RPC's own directives, and "-" for them on a call. */
static void test_rpc_directives(void **state)
{
	expect("%c %p %t %n %m %f %o %s %r %T %e %D", &write_rpc_rec,
	       "WRITE 50 51 dd /mnt/nfs /mnt/nfs/f 8192 4096 0 2.000001 2.000311 310.500\n");
	expect("%x %i %b %B %C %Q %a", &write_rpc_rec,
	       "0x005a1f3c 131073 4332 160 fsync 1.500 250.250\n");
	expect("%c %x %i %o %s %b %B %C %r", &commit_rpc_rec,
	       "COMMIT 0x00000007 - - 0 128 0 writeback EIO\n");
	expect("%x %i %b %B %C %Q %a %e", &write_rec, "- - - - - - - 1.234589\n");
	expect(IOACCT_TRACE_DEFAULT_RPC_FORMAT, &write_rpc_rec,
	       "2.000001       WRITE       50 dd              /mnt/nfs         8192     4096 0       "
	       "   310.500 /mnt/nfs/f xid=0x005a1f3c fileid=131073 sent=4332 recv=160 call=fsync\n");
}

static void test_width_alignment(void **state)
{
	expect("[%-7c][%7c][%3s][%-10n]", &write_rec, "[write  ][  write][30000][ioseq     ]\n");
	expect("[%-8r][%8o]", &failed_open, "[ENOENT  ][       -]\n");
	expect("[%-%][%5%]", &write_rec, "[%][%]\n");
}

static void test_bad_formats(void **state)
{
	char err[512];

	assert_int_equal(ioacct_trace_format_check("%c %q", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'%q' at column 4: unknown directive"));
	assert_int_equal(ioacct_trace_format_check("%-12", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'%-12' at column 1"));
	assert_int_equal(ioacct_trace_format_check("abc %", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at column 5"));
	assert_int_equal(ioacct_trace_format_check("%123456c", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "width too large"));
	assert_int_equal(ioacct_trace_format_check(IOACCT_TRACE_DEFAULT_FORMAT, err, sizeof(err)), 0);
	assert_int_equal(ioacct_trace_format_check(IOACCT_TRACE_DEFAULT_RPC_FORMAT, err, sizeof(err)),
			 0);
}

static void test_json(void **state)
{
	expect(NULL, &write_rec,
	       "{\"op\":\"write\",\"pid\":42,\"tid\":43,\"comm\":\"ioseq\",\"mnt_id\":77,\"mount\":\"/scratch\","
	       "\"path\":\"/scratch/out.h5\",\"offset\":2100,\"size\":30000,\"result\":30000,"
	       "\"errno\":null,\"start_ns\":1234567890,\"duration_ns\":21672}\n");
	expect(NULL, &failed_open,
	       "{\"op\":\"open\",\"pid\":42,\"tid\":42,\"comm\":\"ioseq\",\"mnt_id\":null,\"mount\":null,"
	       "\"path\":null,\"offset\":null,\"size\":0,\"result\":-2,"
	       "\"errno\":\"ENOENT\",\"start_ns\":5,\"duration_ns\":999}\n");
	expect(NULL, &write_rpc_rec,
	       "{\"rpc\":\"WRITE\",\"program\":100003,\"version\":4,\"proc\":4,\"xid\":5906236,"
	       "\"call\":\"fsync\",\"writeback\":false,\"fileid\":131073,\"count\":4096,\"bytes_sent\":4332,"
	       "\"bytes_recv\":160,\"queue_ns\":1500,\"rtt_ns\":250250,\"execute_ns\":300000,"
	       "\"retrans\":1,\"pid\":50,\"tid\":51,\"comm\":\"dd\",\"mnt_id\":88,"
	       "\"mount\":\"/mnt/nfs\",\"path\":\"/mnt/nfs/f\",\"offset\":8192,\"size\":4096,"
	       "\"status\":0,\"errno\":null,\"start_ns\":2000001000,\"duration_ns\":310500}\n");
	expect(NULL, &commit_rpc_rec,
	       "{\"rpc\":\"COMMIT\",\"program\":100003,\"version\":3,\"proc\":21,\"xid\":7,"
	       "\"call\":null,\"writeback\":true,\"fileid\":null,\"count\":null,\"bytes_sent\":128,\"bytes_recv\":0,"
	       "\"queue_ns\":0,\"rtt_ns\":0,\"execute_ns\":0,\"retrans\":0,\"pid\":50,\"tid\":50,"
	       "\"comm\":\"dd\",\"mnt_id\":null,\"mount\":null,\"path\":null,\"offset\":null,"
	       "\"size\":0,\"status\":-5,\"errno\":\"EIO\",\"start_ns\":3,\"duration_ns\":4}\n");
	/* A path is any bytes: it is escaped. */
	struct ioacct_trace_rec q = write_rec;

	q.path = "/a\"b\n";
	char *got = print(NULL, &q);

	assert_non_null(strstr(got, "\"path\":\"/a\\\"b\\n\""));
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_directives),
		cmocka_unit_test(test_rpc_directives),
		cmocka_unit_test(test_width_alignment),
		cmocka_unit_test(test_bad_formats),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
