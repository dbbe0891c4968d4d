// SPDX-License-Identifier: GPL-2.0-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "model.h"

/* Darshan's bin edges: each limit is the last size of its bin, the next byte the next bin. */
static void test_size_bins_edges(void **state)
{
	static const uint64_t limits[] = { 100, 1024, 10240, 102400, 1048576, 4194304, 10485760,
					   104857600, 1073741824 };

	(void)state;
	assert_int_equal(ioacct_size_bin(0), 0);
	for (unsigned int i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		assert_int_equal(ioacct_size_bin(limits[i]), i);
		assert_int_equal(ioacct_size_bin(limits[i] + 1), i + 1);
		assert_int_equal(ioacct_size_bin_limit(i), limits[i]);
	}
	assert_int_equal(ioacct_size_bin(UINT64_MAX), 9);
	assert_int_equal(ioacct_size_bin(4096), 2);
	assert_int_equal(ioacct_size_bin(65536), 3);
	assert_true(ioacct_size_bin_limit(9) == UINT64_MAX);
}

static void test_size_bin_names(void **state)
{
	(void)state;
	assert_string_equal(ioacct_size_bin_name(0), "0_100");
	assert_string_equal(ioacct_size_bin_name(4), "100K_1M");
	assert_string_equal(ioacct_size_bin_name(9), "1G_PLUS");
	assert_null(ioacct_size_bin_name(10));
}

static void test_op_names(void **state)
{
	(void)state;
	for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++) {
		const char *name = ioacct_op_name(op);

		assert_non_null(name);
		assert_int_equal(ioacct_op_from_name(name), (int)op);
	}
	assert_string_equal(ioacct_op_name(IOACCT_OP_RMDIR), "rmdir");
	assert_null(ioacct_op_name(IOACCT_OP_COUNT));
	assert_int_equal(ioacct_op_from_name("close"), -1);
	assert_true(ioacct_op_is_data(IOACCT_OP_READ));
	assert_true(ioacct_op_is_data(IOACCT_OP_WRITE));
	assert_false(ioacct_op_is_data(IOACCT_OP_OPEN));
}

/*
 * The numbers are stored: they never change. And every table generated from
 * IOACCT_OPS agrees with the enum.
 */
static void test_op_table(void **state)
{
	static const char *const stored[] = { "read",   "write", "open",  "create", "mkdir",
					      "unlink", "rmdir", "fsync", "rename", "stat" };
	static const char *const upper[] = { "READ",   "WRITE", "OPEN",  "CREATE", "MKDIR",
					     "UNLINK", "RMDIR", "FSYNC", "RENAME", "STAT" };
	char plural[32];

	(void)state;
	/* New operations come after these. */
	assert_true(IOACCT_OP_COUNT >= sizeof(stored) / sizeof(stored[0]));
	for (unsigned int op = 0; op < sizeof(stored) / sizeof(stored[0]); op++) {
		assert_string_equal(ioacct_op_name(op), stored[op]);
		assert_string_equal(ioacct_op_upper(op), upper[op]);
		snprintf(plural, sizeof(plural), "%ss", stored[op]);
		assert_string_equal(ioacct_op_plural(op), plural);
	}
#define CHECK(NAME, num, name, ...)                                  \
	assert_int_equal(IOACCT_OP_##NAME, num);                     \
	assert_string_equal(ioacct_op_name(IOACCT_OP_##NAME), #name); \
	assert_string_equal(ioacct_op_upper(IOACCT_OP_##NAME), #NAME);
	IOACCT_OPS(CHECK)
#undef CHECK
	assert_null(ioacct_op_plural(IOACCT_OP_COUNT));
	assert_null(ioacct_op_upper(IOACCT_OP_COUNT));
	assert_int_equal(ioacct_op_kind(IOACCT_OP_READ), IOACCT_OPK_DATA);
	assert_int_equal(ioacct_op_kind(IOACCT_OP_WRITE), IOACCT_OPK_DATA);
	assert_int_equal(ioacct_op_kind(IOACCT_OP_CREATE), IOACCT_OPK_MARK);
	for (unsigned int op = IOACCT_OP_OPEN; op <= IOACCT_OP_STAT; op++)
		if (op != IOACCT_OP_CREATE)
			assert_int_equal(ioacct_op_kind(op), IOACCT_OPK_META);
	assert_false(ioacct_op_is_data(IOACCT_OP_COUNT));
}

static void test_counters_add(void **state)
{
	struct ioacct_counters a = { .bytes = 10, .calls = 2, .errors = 1, .ns = 100 };
	struct ioacct_counters b = { .bytes = UINT64_MAX - 10, .calls = 3, .errors = 0, .ns = 5 };

	(void)state;
	a.size_hist[0] = 1;
	b.size_hist[0] = 2;
	b.size_hist[9] = 7;
	assert_false(ioacct_counters_is_zero(&a));
	ioacct_counters_add(&a, &b);
	assert_true(a.bytes == UINT64_MAX);
	assert_int_equal(a.calls, 5);
	assert_int_equal(a.errors, 1);
	assert_int_equal(a.ns, 105);
	assert_int_equal(a.size_hist[0], 3);
	assert_int_equal(a.size_hist[9], 7);
	memset(&b, 0, sizeof(b));
	assert_true(ioacct_counters_is_zero(&b));
}

static void test_bin_of(void **state)
{
	(void)state;
	assert_int_equal(ioacct_bin_of(1000, 10, 1000), 0);
	assert_int_equal(ioacct_bin_of(1000, 10, 1009), 0);
	assert_int_equal(ioacct_bin_of(1000, 10, 1010), 1);
	assert_int_equal(ioacct_bin_of(1000, 10, 999), 0);  /* before the start */
	assert_int_equal(ioacct_bin_of(1000, 0, 5000), 0);  /* no width */
	assert_int_equal(ioacct_bin_of(0, 1, UINT64_MAX), UINT32_MAX);
	assert_int_equal(ioacct_bin_of(5000000000ULL, 1000000000ULL, 12500000000ULL), 7);
}

static void test_step_names(void **state)
{
	char buf[32];
	uint32_t id;

	(void)state;
	assert_string_equal(ioacct_step_name(IOACCT_STEP_BATCH, buf, sizeof(buf)), "batch");
	assert_string_equal(ioacct_step_name(IOACCT_STEP_EXTERN, buf, sizeof(buf)), "extern");
	assert_string_equal(ioacct_step_name(IOACCT_STEP_INTERACTIVE, buf, sizeof(buf)), "interactive");
	assert_string_equal(ioacct_step_name(12, buf, sizeof(buf)), "12");
	assert_int_equal(ioacct_step_parse("batch", &id), 0);
	assert_int_equal(id, IOACCT_STEP_BATCH);
	assert_int_equal(ioacct_step_parse("extern", &id), 0);
	assert_int_equal(id, IOACCT_STEP_EXTERN);
	assert_int_equal(ioacct_step_parse("4294967295", &id), 0);
	assert_int_equal(id, UINT32_MAX);
	assert_int_equal(ioacct_step_parse("4294967296", &id), -EINVAL);
	assert_int_equal(ioacct_step_parse("-1", &id), -EINVAL);
	assert_int_equal(ioacct_step_parse("1x", &id), -EINVAL);
	assert_int_equal(ioacct_step_parse("", &id), -EINVAL);
}

static void test_samples_sum(void **state)
{
	struct ioacct_sample s[4] = {
		{ .step_id = 0, .mnt_id = 10, .op = IOACCT_OP_WRITE, .bin = 0, .c = { .bytes = 1, .calls = 1 } },
		{ .step_id = 0, .mnt_id = 10, .op = IOACCT_OP_WRITE, .bin = 1, .c = { .bytes = 2, .calls = 1 } },
		{ .step_id = 1, .mnt_id = 10, .op = IOACCT_OP_WRITE, .bin = 0, .c = { .bytes = 4, .calls = 1 } },
		{ .step_id = 1, .mnt_id = 11, .op = IOACCT_OP_READ, .bin = 0, .c = { .bytes = 8, .calls = 1 } },
	};
	struct ioacct_counters c;

	(void)state;
	ioacct_samples_sum(s, 4, UINT32_MAX, IOACCT_MNT_ANY, UINT32_MAX, &c);
	assert_int_equal(c.bytes, 15);
	assert_int_equal(c.calls, 4);
	ioacct_samples_sum(s, 4, 0, 10, IOACCT_OP_WRITE, &c);
	assert_int_equal(c.bytes, 3);
	ioacct_samples_sum(s, 4, UINT32_MAX, 10, UINT32_MAX, &c);
	assert_int_equal(c.bytes, 7);
	ioacct_samples_sum(s, 4, 1, IOACCT_MNT_ANY, IOACCT_OP_READ, &c);
	assert_int_equal(c.bytes, 8);
	ioacct_samples_sum(s, 4, 2, IOACCT_MNT_ANY, UINT32_MAX, &c);
	assert_true(ioacct_counters_is_zero(&c));
}

static void test_strlcpy(void **state)
{
	char buf[4];

	(void)state;
	assert_int_equal(ioacct_strlcpy(buf, "abc", sizeof(buf)), 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(ioacct_strlcpy(buf, "abcd", sizeof(buf)), -ENAMETOOLONG);
	assert_string_equal(buf, "abc");
	assert_int_equal(ioacct_strlcpy(buf, "", sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(ioacct_strlcpy(buf, "x", 0), -ENAMETOOLONG);
}

/* Darshan's exe (issue 38): argv joined by spaces, one line, cut with a mark at the end. */
static void test_cmdline_join(void **state)
{
	char *const argv[] = { "mpirun", "-np", "4", "./application", "--input", "a\nb\tc", NULL };
	char buf[64], small[30], tiny[8];

	(void)state;
	ioacct_cmdline_join(buf, sizeof(buf), -1, argv);
	assert_string_equal(buf, "mpirun -np 4 ./application --input a b c");
	ioacct_cmdline_join(buf, 41, -1, argv);
	assert_string_equal(buf, "mpirun -np 4 ./application --input a b c");
	ioacct_cmdline_join(buf, sizeof(buf), 2, argv);
	assert_string_equal(buf, "mpirun -np");
	ioacct_cmdline_join(buf, sizeof(buf), 0, argv);
	assert_string_equal(buf, "");
	/* 29 characters of room for 40: the mark takes the last 12. */
	ioacct_cmdline_join(small, sizeof(small), -1, argv);
	assert_string_equal(small, "mpirun -np 4 ./ap <TRUNCATED>");
	/* No room for the mark: cut where the room ends. */
	ioacct_cmdline_join(tiny, sizeof(tiny), -1, argv);
	assert_string_equal(tiny, "mpirun ");
	/* Bytes that are not UTF-8: U+FFFD (PyDarshan decodes the exe); a character never cut. */
	ioacct_cmdline_join(buf, sizeof(buf), 2, (char *const[]){ "cat", "bad\xffname\xc3\xa9", NULL });
	assert_string_equal(buf, "cat bad\xef\xbf\xbdname\xc3\xa9");
	ioacct_cmdline_join(tiny, sizeof(tiny), 1, (char *const[]){ "ab\xff", NULL });
	assert_string_equal(tiny, "ab\xef\xbf\xbd");
	ioacct_cmdline_join(tiny, sizeof(tiny), 1, (char *const[]){ "abcde\xff", NULL });
	assert_string_equal(tiny, "abcde");
}

static void test_mkdir_p(void **state)
{
	char dir[] = "/tmp/test_model.XXXXXX", path[256], file[256];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(ioacct_mkdir_p(path, 0700, false), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(ioacct_mkdir_p(path, 0700, false), 0); /* exists: fine */
	snprintf(file, sizeof(file), "%s/x/y/file.sock", dir);
	assert_int_equal(ioacct_mkdir_p(file, 0755, true), 0);
	snprintf(path, sizeof(path), "%s/x/y", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(stat(file, &st), -1); /* only the parent */
	/* A file in the way is an error, not a silent success. */
	snprintf(path, sizeof(path), "%s/x/y/f", dir);
	fclose(fopen(path, "w"));
	snprintf(file, sizeof(file), "%s/x/y/f/g", dir);
	assert_int_equal(ioacct_mkdir_p(file, 0755, false), -ENOTDIR);
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

static void test_jobdata_free_null(void **state)
{
	(void)state;
	ioacct_jobdata_free(NULL);
}

/*
 * A synthetic 3-node job, 5 s bins: n1 registered first (the origin), n2
 * 11.5 s later, n3 0.25 s later. n2's bin 1 (12.5 .. 17.5 s after n1) goes
 * to bin 3 (15 .. 20 s), rounded down by the 1.5 s of skew; n3 stays put.
 */
static void test_bin_shift(void **state)
{
	const uint64_t w = 5000000000ULL;
	const int64_t origin = 1700000000000000000LL;
	uint64_t skew = 7;

	(void)state;
	assert_int_equal(ioacct_bin_shift(origin, origin, w, &skew), 0);
	assert_int_equal(skew, 0);
	assert_int_equal(ioacct_bin_shift(origin + 11500000000LL, origin, w, &skew), 2);
	assert_int_equal(skew, 1500000000ULL);
	assert_int_equal(1 + ioacct_bin_shift(origin + 11500000000LL, origin, w, &skew), 3);
	assert_int_equal(ioacct_bin_shift(origin + 250000000LL, origin, w, &skew), 0);
	assert_int_equal(skew, 250000000ULL);
	/* Exactly on a bin edge: no skew. */
	assert_int_equal(ioacct_bin_shift(origin + 3 * (int64_t)w, origin, w, &skew), 3);
	assert_int_equal(skew, 0);
	/* Before the origin, no width, absurdly far: no shift, all of it skew. */
	assert_int_equal(ioacct_bin_shift(origin - 10, origin, w, &skew), 0);
	assert_int_equal(skew, 10);
	assert_int_equal(ioacct_bin_shift(origin + 10, origin, 0, &skew), 0);
	assert_int_equal(skew, 10);
	assert_int_equal(ioacct_bin_shift(INT64_MAX, INT64_MIN, w, &skew), 0);
	assert_true(skew == UINT64_MAX);
	assert_int_equal(ioacct_bin_shift(origin + (int64_t)IOACCT_BIN_SHIFT_MAX * (int64_t)w, origin,
					  w, &skew), IOACCT_BIN_SHIFT_MAX);
	assert_int_equal(skew, 0);
}

/*
 * The MPI-IO and HDF5 records' key: (step, rank, pid, path[, kind, name]),
 * then the node part. Two nodes' processes of the same rank and pid (a
 * serial program's rank -1, pids from the same numbers) on the same file
 * are two keys, one per part; every other field orders before the part, so
 * that a job of one node (part 0) and an older client keep their order.
 */
static void test_record_keys(void **state)
{
	static struct ioacct_mpiio ma, mb;
	static struct ioacct_h5rec ha, hb;

	(void)state;
	ma = (struct ioacct_mpiio){ .step_id = 0, .rank = -1, .pid = 4242 };
	strcpy(ma.path, "/scratch/x");
	mb = ma;
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), 0);
	mb.part = 1;
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), -1);
	assert_int_equal(ioacct_mpiio_key_cmp(&mb, &ma), 1);
	ma.part = UINT32_MAX;
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), 1);
	/* The part last: a smaller pid, path, rank or step of a later part is before. */
	mb.pid = 4241;
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), 1);
	mb.pid = 4243;
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), -1);
	mb = ma;
	mb.part = UINT32_MAX - 1;
	strcpy(mb.path, "/scratch/y");
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), -1);
	mb.path[0] = '\0';
	mb.rank = 0;
	assert_int_equal(ioacct_mpiio_key_cmp(&ma, &mb), -1);

	ha = (struct ioacct_h5rec){ .step_id = 1, .rank = -1, .pid = 4242,
				    .kind = IOACCT_H5REC_DATASET };
	strcpy(ha.name, "/scratch/x.h5:/a");
	hb = ha;
	assert_int_equal(ioacct_h5rec_key_cmp(&ha, &hb), 0);
	hb.part = 1;
	assert_int_equal(ioacct_h5rec_key_cmp(&ha, &hb), -1);
	assert_int_equal(ioacct_h5rec_key_cmp(&hb, &ha), 1);
	/* Kind and name before the part. */
	ha.part = 2;
	hb.kind = IOACCT_H5REC_FILE;
	assert_int_equal(ioacct_h5rec_key_cmp(&ha, &hb), 1);
	hb.kind = IOACCT_H5REC_DATASET;
	strcpy(hb.name, "/scratch/x.h5:/b");
	assert_int_equal(ioacct_h5rec_key_cmp(&ha, &hb), -1);
	hb = ha;
	hb.pid = 0;
	hb.part = 0;
	assert_int_equal(ioacct_h5rec_key_cmp(&ha, &hb), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_bins_edges),
		cmocka_unit_test(test_size_bin_names),
		cmocka_unit_test(test_op_names),
		cmocka_unit_test(test_op_table),
		cmocka_unit_test(test_counters_add),
		cmocka_unit_test(test_bin_of),
		cmocka_unit_test(test_step_names),
		cmocka_unit_test(test_samples_sum),
		cmocka_unit_test(test_strlcpy),
		cmocka_unit_test(test_cmdline_join),
		cmocka_unit_test(test_mkdir_p),
		cmocka_unit_test(test_jobdata_free_null),
		cmocka_unit_test(test_bin_shift),
		cmocka_unit_test(test_record_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
