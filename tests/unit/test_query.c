/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of ioacct's query module: fields and formats, every time form
 * sacct accepts (in UTC, with "now" fixed), job and list arguments, peaks,
 * the rows made of a job, values, and the table, parsable and JSON output.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "query.h"

/* Friday 2024-03-15T10:30:00 UTC. */
#define NOW 1710498600
#define MIDNIGHT 1710460800
#define DAY 86400
#define NS 1000000000LL

/* ---- fields and formats ---- */

static void test_field_find(void **state)
{
	(void)state;
	assert_int_equal(ioacct_query_field_find("JobID"), IOACCT_QF_JOBID);
	assert_int_equal(ioacct_query_field_find("writebytes"), IOACCT_QF_WRITEBYTES);
	assert_int_equal(ioacct_query_field_find("MAXREADBW"), IOACCT_QF_MAXREADBW);
	assert_int_equal(ioacct_query_field_find("Write"), -1);
	assert_int_equal(ioacct_query_field_find(""), -1);
	assert_null(ioacct_query_field(IOACCT_QF_COUNT));
	/* Every field has a name, a width and one line of help. */
	for (int i = 0; i < IOACCT_QF_COUNT; i++) {
		const struct ioacct_qfield_info *fi = ioacct_query_field((enum ioacct_qfield)i);

		assert_non_null(fi->name);
		assert_non_null(fi->help);
		assert_null(strchr(fi->help, '\n'));
		assert_true(fi->width != 0);
		assert_int_equal(ioacct_query_field_find(fi->name), i);
	}
	/* The fields the issue asks for at least. */
	static const char *const wanted[] = {
		"JobID", "User", "UID", "Node", "Start", "End", "Elapsed", "Step", "Mount",
		"FSType", "ReadBytes", "WriteBytes", "Reads", "Writes", "Opens", "Creates",
		"Mkdirs", "Unlinks", "Rmdirs", "Fsyncs", "Renames", "Stats", "Errors", "RealErrors",
		"NotFound",
		"ReadTime", "WriteTime", "MetaTime", "AveReadBW", "AveWriteBW", "MaxReadBW",
		"MaxWriteBW", "AveReadIOPS", "AveWriteIOPS", "Dropped", "ProbeMode", "Cluster",
	};
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		assert_true(ioacct_query_field_find(wanted[i]) >= 0);
}

static void test_format_parse(void **state)
{
	struct ioacct_qcol *cols = NULL;
	size_t n = 0;
	char err[2048];

	(void)state;
	assert_int_equal(ioacct_query_format_parse(" JobID , mount%20,WriteBytes%-7 ", &cols, &n,
						   err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(cols[0].field, IOACCT_QF_JOBID);
	assert_int_equal(cols[0].width, 12); /* the default, left-justified */
	assert_true(cols[0].left);
	assert_int_equal(cols[1].field, IOACCT_QF_MOUNT);
	assert_int_equal(cols[1].width, 20);
	assert_false(cols[1].left); /* %N: right-justified */
	assert_int_equal(cols[2].field, IOACCT_QF_WRITEBYTES);
	assert_int_equal(cols[2].width, 7);
	assert_true(cols[2].left);

	/* -o twice appends. */
	assert_int_equal(ioacct_query_format_parse("Errors", &cols, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(cols[3].width, 7);
	assert_false(cols[3].left);
	free(cols);

	cols = NULL;
	n = 0;
	assert_int_equal(ioacct_query_format_parse("all%5", &cols, &n, err, sizeof(err)), 0);
	assert_int_equal(n, IOACCT_QF_COUNT);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(cols[i].field, i);
		assert_int_equal(cols[i].width, 5);
	}
	free(cols);

	cols = NULL;
	n = 0;
	assert_int_equal(ioacct_query_format_parse("JobID,Bytes", &cols, &n, err, sizeof(err)),
			 -EINVAL);
	/* An unknown field names the valid ones. */
	assert_non_null(strstr(err, "unknown field 'Bytes'"));
	assert_non_null(strstr(err, "valid fields: JobID, JobIDRaw,"));
	assert_non_null(strstr(err, "WriteBytes"));
	assert_non_null(strstr(err, "BinWidth"));
	assert_null(strchr(err, '\n'));
	static const char *const bad[] = { "JobID%", "JobID%0", "JobID%-", "JobID%x", "JobID%5x",
					   "JobID%99999", "", " , ," };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(ioacct_query_format_parse(bad[i], &cols, &n, err, sizeof(err)),
				 -EINVAL);
		assert_true(strlen(err) > 0);
	}
	free(cols);
}

static void test_fields_help(void **state)
{
	char *buf = NULL;
	size_t len = 0, lines = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	ioacct_query_fields_help(f);
	fclose(f);
	for (char *p = buf; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, IOACCT_QF_COUNT);
	assert_non_null(strstr(buf, "MaxWriteBW    bytes written per second in the busiest time bin\n"));
	assert_non_null(strstr(buf, "Mount ") && strstr(buf, "(one row per mount)"));
	free(buf);
}

/* ---- times ---- */

static int setup_utc(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

static void time_is(const char *s, time_t want)
{
	char err[1024] = "";
	time_t t = 0;
	int ret = ioacct_query_time_parse(s, NOW, &t, err, sizeof(err));

	if (ret || t != want)
		print_error("'%s': ret %d, %lld, want %lld (%s)\n", s, ret, (long long)t,
			    (long long)want, err);
	assert_int_equal(ret, 0);
	assert_int_equal(t, want);
}

static void time_bad(const char *s, const char *why)
{
	char err[1024] = "", quoted[128];
	time_t t = 12345;

	assert_int_equal(ioacct_query_time_parse(s, NOW, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(t, 12345);
	snprintf(quoted, sizeof(quoted), "invalid time '%s'", s);
	if (!strstr(err, quoted) || !strstr(err, why))
		print_error("'%s': message \"%s\" lacks \"%s\"\n", s, err, why);
	assert_non_null(strstr(err, quoted));
	assert_non_null(strstr(err, why));
	/* A bad time names the accepted forms. */
	assert_non_null(strstr(err, "accepted forms: " IOACCT_QUERY_TIME_FORMS));
}

static void test_time_forms(void **state)
{
	(void)state;
	/* HH:MM[:SS]: today, even later than now (sacct's -S/-E look back). */
	time_is("08:15", MIDNIGHT + 8 * 3600 + 15 * 60);
	time_is("08:15:30", MIDNIGHT + 8 * 3600 + 15 * 60 + 30);
	time_is("23:59:59", MIDNIGHT + DAY - 1);
	time_is("0:05", MIDNIGHT + 300);
	/* MMDD[YY]; without a year, a month still to come is last year's. */
	time_is("0310", MIDNIGHT - 5 * DAY);
	time_is("031024", MIDNIGHT - 5 * DAY);
	time_is("0315", MIDNIGHT);
	time_is("0501", 1682899200);  /* 2023-05-01 */
	time_is("050124", 1714521600); /* 2024-05-01 */
	time_is("123199", 4102358400); /* YY is 20YY: 2099-12-31 */
	/* MM/DD[/YY][-HH:MM[:SS]] */
	time_is("03/10", MIDNIGHT - 5 * DAY);
	time_is("3/1", 1709251200);
	time_is("03/10/24", MIDNIGHT - 5 * DAY);
	time_is("03/10/24-14:30", MIDNIGHT - 5 * DAY + 14 * 3600 + 30 * 60);
	time_is("03/10-14:30:15", MIDNIGHT - 5 * DAY + 14 * 3600 + 30 * 60 + 15);
	time_is("12/25", 1703462400); /* last year's Christmas */
	/* YYYY-MM-DD[THH:MM[:SS]] */
	time_is("2024-03-10", MIDNIGHT - 5 * DAY);
	time_is("2024-3-9", MIDNIGHT - 6 * DAY);
	time_is("2024-03-10T14:30", MIDNIGHT - 5 * DAY + 14 * 3600 + 30 * 60);
	time_is("2024-03-10T14:30:15", MIDNIGHT - 5 * DAY + 14 * 3600 + 30 * 60 + 15);
	time_is("2024-02-29", 1709164800);
	time_is("1970-01-01T00:00:00", 0);
	/* Words. */
	time_is("today", MIDNIGHT);
	time_is("midnight", MIDNIGHT);
	time_is("Midnight", MIDNIGHT);
	time_is("tomorrow", MIDNIGHT + DAY);
	time_is("noon", MIDNIGHT + 12 * 3600);
	/* now[{+|-}N[unit]] */
	time_is("now", NOW);
	time_is("now-90", NOW - 90);
	time_is("now-90seconds", NOW - 90);
	time_is("now-1second", NOW - 1);
	time_is("now-30minutes", NOW - 1800);
	time_is("now-1minute", NOW - 60);
	time_is("now-2hours", NOW - 7200);
	time_is("NOW-1HOUR", NOW - 3600);
	time_is("now-3days", NOW - 3 * DAY);
	time_is("now-1day", NOW - DAY);
	time_is("now+1week", NOW + 7 * DAY);
	time_is("now-2weeks", NOW - 14 * DAY);
	assert_int_equal(ioacct_query_midnight(NOW), MIDNIGHT);
	assert_int_equal(ioacct_query_midnight(MIDNIGHT), MIDNIGHT);
}

static void test_time_bad(void **state)
{
	char err[8];
	time_t t;

	(void)state;
	time_bad("", "empty");
	time_bad("yesterday", "not a date or time");
	time_bad("25:00", "no time 25:00:00");
	time_bad("12:60", "no time 12:60:00");
	time_bad("12:00:00:00", "expected HH:MM[:SS]");
	time_bad("12:5", "expected HH:MM[:SS]");
	time_bad("2024-02-30", "no day 2024-02-30");
	time_bad("2023-02-29", "no day 2023-02-29");
	time_bad("2024-13-01", "no month 13");
	time_bad("2024-03-10T", "expected HH:MM[:SS] after T");
	time_bad("2024-03-10 14:30", "unexpected ' 14:30' after the date");
	time_bad("2024-03-10T25:00", "no time 25:00:00");
	time_bad("13/01", "no month 13");
	time_bad("02/30", "no day");
	time_bad("03/10/2024", "unexpected");
	time_bad("03/10-", "expected HH:MM[:SS] after the date");
	time_bad("031", "expected MMDD or MMDDYY");
	time_bad("0310245", "expected MMDD or MMDDYY");
	time_bad("0230", "no day");
	time_bad("0010", "no month 0");
	time_bad("now-", "expected a number after now-");
	time_bad("now-3fortnights", "unknown unit 'fortnights'");
	time_bad("now*2", "expected + or - after now");
	time_bad("now-99999999999days", "too far from now");
	/* A message cut to a small buffer is still terminated. */
	assert_int_equal(ioacct_query_time_parse("x", NOW, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
}

/* ---- arguments ---- */

static void test_jobs_parse(void **state)
{
	struct ioacct_qjobsel *sel = NULL;
	size_t n = 0;
	char err[512];

	(void)state;
	assert_int_equal(ioacct_query_jobs_parse("123, 124.batch,125.0,,126.extern,127.interactive",
						 &sel, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 5);
	assert_int_equal(sel[0].job_id, 123);
	assert_int_equal(sel[0].step_id, IOACCT_QUERY_ALL);
	assert_int_equal(sel[1].job_id, 124);
	assert_int_equal(sel[1].step_id, IOACCT_STEP_BATCH);
	assert_int_equal(sel[2].step_id, 0);
	assert_int_equal(sel[3].step_id, IOACCT_STEP_EXTERN);
	assert_int_equal(sel[4].step_id, IOACCT_STEP_INTERACTIVE);
	assert_int_equal(ioacct_query_jobs_parse("18446744073709551615", &sel, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 6);
	assert_int_equal(sel[5].job_id, UINT64_MAX);

	assert_int_equal(ioacct_query_jobs_parse("abc", &sel, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad job id 'abc'"));
	assert_int_equal(ioacct_query_jobs_parse("-1", &sel, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_query_jobs_parse("18446744073709551616", &sel, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ioacct_query_jobs_parse("12.foo", &sel, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad step 'foo' of job 12"));
	assert_int_equal(ioacct_query_jobs_parse("12_3", &sel, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_query_jobs_parse(" , ", &sel, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no job id"));
	assert_int_equal(n, 6);
	free(sel);
}

static void test_lists(void **state)
{
	char **items = NULL;
	uint64_t *v;
	size_t n = 0;
	unsigned int u;

	(void)state;
	assert_int_equal(ioacct_query_list_split(" alice, bob,,carol ,", &items, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(items[0], "alice");
	assert_string_equal(items[1], "bob");
	assert_string_equal(items[2], "carol");
	assert_int_equal(ioacct_query_list_split("dave", &items, &n), 0);
	assert_int_equal(n, 4);
	ioacct_query_list_free(items, n);

	assert_int_equal(ioacct_query_u64_list("1,22,18446744073709551615", &v, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[1], 22);
	assert_int_equal(v[2], UINT64_MAX);
	free(v);
	assert_int_equal(ioacct_query_u64_list("", &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(ioacct_query_u64_list("1,x", &v, &n), -EINVAL);
	assert_int_equal(ioacct_query_u64_list("-1", &v, &n), -EINVAL);
	assert_int_equal(ioacct_query_u64_list("99999999999999999999", &v, &n), -EINVAL);

	for (unsigned int i = 0; i < 5; i++) {
		char s[2] = { "KMGTP"[i], 0 };

		assert_int_equal(ioacct_query_units_parse(s, &u), 0);
		assert_int_equal(u, i + 1);
		s[0] = (char)(s[0] - 'A' + 'a');
		assert_int_equal(ioacct_query_units_parse(s, &u), 0);
		assert_int_equal(u, i + 1);
	}
	assert_int_equal(ioacct_query_units_parse("X", &u), -EINVAL);
	assert_int_equal(ioacct_query_units_parse("KB", &u), -EINVAL);
	assert_int_equal(ioacct_query_units_parse("", &u), -EINVAL);
	assert_int_equal(ioacct_query_units_parse(NULL, &u), -EINVAL);
}

/* ---- peaks ---- */

static struct ioacct_sample smp(uint32_t step, uint64_t mnt, uint32_t op, uint32_t bin,
				uint64_t bytes)
{
	struct ioacct_sample s = { .step_id = step, .mnt_id = mnt, .op = op, .bin = bin };

	s.c.bytes = bytes;
	s.c.calls = 1;
	return s;
}

static const struct ioacct_qpeak *peak(const struct ioacct_qpeak *p, size_t n, uint32_t step,
				       uint64_t mnt)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].step_id == step && p[i].mnt_id == mnt)
			return &p[i];
	fail_msg("no peak for step %u mount %" PRIu64, step, mnt);
	return NULL;
}

/* Mount 2 has a unique id past 32 bits (issue 36): its peaks are its own, not mount 1's. */
#define M2 ((1ULL << 32) + 2)

static void test_peaks(void **state)
{
	const uint32_t A = IOACCT_QUERY_ALL;
	/* Out of order on purpose; a stat's bytes are not I/O. */
	struct ioacct_sample s[] = {
		smp(0, M2, IOACCT_OP_READ, 1, 80),  smp(0, 1, IOACCT_OP_READ, 0, 100),
		smp(0, 1, IOACCT_OP_READ, 1, 50),   smp(0, M2, IOACCT_OP_READ, 0, 10),
		smp(1, 1, IOACCT_OP_READ, 1, 30),   smp(0, 1, IOACCT_OP_WRITE, 2, 7),
		smp(0, 1, IOACCT_OP_STAT, 3, 999),  smp(1, 1, IOACCT_OP_WRITE, 2, 5),
	};
	struct ioacct_qpeak *p;
	size_t n;

	(void)state;
	assert_int_equal(ioacct_query_peaks(s, sizeof(s) / sizeof(s[0]), &p, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(peak(p, n, 0, 1)->read_bytes, 100);
	assert_int_equal(peak(p, n, 0, 1)->write_bytes, 7);
	assert_int_equal(peak(p, n, 0, M2)->read_bytes, 80);
	assert_int_equal(peak(p, n, 0, M2)->write_bytes, 0);
	/* Step 0 on every mount: bin 0 is 110, bin 1 is 130. */
	assert_int_equal(peak(p, n, 0, IOACCT_MNT_ANY)->read_bytes, 130);
	assert_int_equal(peak(p, n, 1, 1)->read_bytes, 30);
	assert_int_equal(peak(p, n, 1, IOACCT_MNT_ANY)->write_bytes, 5);
	/* Mount 1 over every step: bin 1 is 50 + 30 = 80 < 100; bin 2 writes 7 + 5. */
	assert_int_equal(peak(p, n, A, 1)->read_bytes, 100);
	assert_int_equal(peak(p, n, A, 1)->write_bytes, 12);
	assert_int_equal(peak(p, n, A, M2)->read_bytes, 80);
	/* The job: bin 1 is 50 + 80 + 30. */
	assert_int_equal(peak(p, n, A, IOACCT_MNT_ANY)->read_bytes, 160);
	assert_int_equal(peak(p, n, A, IOACCT_MNT_ANY)->write_bytes, 12);
	free(p);
	assert_int_equal(ioacct_query_peaks(NULL, 0, &p, &n), 0);
	assert_null(p);
	assert_int_equal(n, 0);
	/* Only metadata: no peak at all. */
	assert_int_equal(ioacct_query_peaks(&s[6], 1, &p, &n), 0);
	assert_int_equal(n, 0);
	assert_null(p);
}

/* ---- rows and values ---- */

struct job_fixture {
	struct ioacct_jobdata jd;
	struct ioacct_step steps[3];
	struct ioacct_mount mounts[2];
	struct ioacct_sample totals[5];
};

static void tot(struct ioacct_sample *s, uint32_t step, uint32_t mnt, uint32_t op, uint64_t bytes,
		uint64_t calls, uint64_t errors, uint64_t ns)
{
	memset(s, 0, sizeof(*s));
	s->step_id = step;
	s->mnt_id = mnt;
	s->op = op;
	s->c.bytes = bytes;
	s->c.calls = calls;
	s->c.errors = errors;
	s->c.ns = ns;
}

/*
 * Job 1234 (array task 1200_4) of alice, 1 day 2 h 3 min 4 s long, with a
 * numbered step (/scratch and an unnamed mount), a batch step (/), and an
 * extern step without I/O. Given in the store's order (by step id).
 */
static void job_fixture(struct job_fixture *f)
{
	struct ioacct_job *j = &f->jd.job;

	memset(f, 0, sizeof(*f));
	j->key = 9;
	j->job_id = 1234;
	strcpy(j->cluster, "hpc");
	strcpy(j->node, "n001");
	strcpy(j->source, "slurm");
	j->uid = 1000;
	j->gid = 100;
	strcpy(j->user, "alice");
	strcpy(j->name, "sim\x1b[31m");
	strcpy(j->workdir, "/home/alice");
	j->has_array = true;
	j->array_job_id = 1200;
	j->array_task_id = 4;
	j->start_ns = (int64_t)MIDNIGHT * NS;
	j->end_ns = j->start_ns + (int64_t)(DAY + 2 * 3600 + 3 * 60 + 4) * NS;
	strcpy(j->state, "COMPLETED");
	j->exit_code = 3;
	strcpy(j->probe_mode, "tracepoint");
	j->bin_width_ns = 5 * NS;
	j->dropped_events = 2;
	j->dropped_bytes = 4096;
	f->steps[0] = (struct ioacct_step){ .step_id = 0, .start_ns = j->start_ns + 10 * NS,
					    .end_ns = j->start_ns + 15 * NS, .state = "FAILED",
					    .exit_code = 1 };
	f->steps[1] = (struct ioacct_step){ .step_id = IOACCT_STEP_BATCH, .start_ns = j->start_ns,
					    .state = "COMPLETED" }; /* never got its end */
	f->steps[2] = (struct ioacct_step){ .step_id = IOACCT_STEP_EXTERN, .start_ns = j->start_ns,
					    .end_ns = j->end_ns, .state = "COMPLETED" };
	f->mounts[0] = (struct ioacct_mount){ .mnt_id = 30, .path = "/scratch", .fstype = "lustre",
					      .source = "mds:/scratch" };
	f->mounts[1] = (struct ioacct_mount){ .mnt_id = 21, .path = "/", .fstype = "ext4",
					      .source = "/dev/sda1" };
	tot(&f->totals[0], 0, 30, IOACCT_OP_WRITE, 7340032, 7, 0, 3000000);
	tot(&f->totals[1], 0, 30, IOACCT_OP_OPEN, 0, 3, 1, 2000);
	f->totals[1].c.errclass[IOACCT_ERR_NOTFOUND] = 1;
	tot(&f->totals[2], 0, 99, IOACCT_OP_STAT, 0, 5, 0, 500);
	tot(&f->totals[3], IOACCT_STEP_BATCH, 21, IOACCT_OP_READ, 1536, 2, 0, 1000000);
	tot(&f->totals[4], IOACCT_STEP_BATCH, 21, IOACCT_OP_FSYNC, 0, 1, 1, 250000);
	f->jd.steps = f->steps;
	f->jd.nsteps = 3;
	f->jd.mounts = f->mounts;
	f->jd.nmounts = 2;
	f->jd.totals = f->totals;
	f->jd.ntotals = 5;
}

static const char *val(const struct ioacct_qrow *r, enum ioacct_qfield f, unsigned int units)
{
	static char buf[PATH_MAX + 64];

	ioacct_query_value(r, f, units, (int64_t)NOW * NS, buf, sizeof(buf));
	return buf;
}

static bool absent(const struct ioacct_qrow *r, enum ioacct_qfield f)
{
	char buf[256];

	return ioacct_query_value(r, f, 0, (int64_t)NOW * NS, buf, sizeof(buf));
}

static void test_rows(void **state)
{
	struct job_fixture f;
	struct ioacct_qrow_opts o = { 0 };
	struct ioacct_qrow *r;
	uint32_t only_batch = IOACCT_STEP_BATCH;
	size_t n;

	(void)state;
	job_fixture(&f);
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	/* The job, then batch, extern, 0. */
	assert_int_equal(n, 4);
	assert_null(r[0].step);
	assert_int_equal(r[1].step->step_id, IOACCT_STEP_BATCH);
	assert_int_equal(r[2].step->step_id, IOACCT_STEP_EXTERN);
	assert_int_equal(r[3].step->step_id, 0);
	assert_int_equal(r[0].op[IOACCT_OP_WRITE].bytes, 7340032);
	assert_int_equal(r[0].op[IOACCT_OP_READ].bytes, 1536);
	assert_int_equal(r[0].op[IOACCT_OP_STAT].calls, 5);
	assert_int_equal(r[3].op[IOACCT_OP_READ].bytes, 0);
	assert_false(r[0].per_mount);
	assert_false(r[0].has_peak);
	free(r);

	/* Per mount, by path: "/", "/scratch", then the unnamed "mnt:99". */
	o.per_mount = true;
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	assert_int_equal(n, 3 + 1 + 1 + 2);
	assert_string_equal(val(&r[0], IOACCT_QF_MOUNT, 0), "/");
	assert_string_equal(val(&r[1], IOACCT_QF_MOUNT, 0), "/scratch");
	assert_string_equal(val(&r[2], IOACCT_QF_MOUNT, 0), "mnt:99");
	assert_string_equal(val(&r[2], IOACCT_QF_FSTYPE, 0), "unknown");
	assert_true(absent(&r[2], IOACCT_QF_MOUNTSOURCE));
	assert_string_equal(val(&r[1], IOACCT_QF_MOUNTSOURCE, 0), "mds:/scratch");
	assert_string_equal(val(&r[1], IOACCT_QF_WRITEBYTES, 0), "7340032");
	assert_string_equal(val(&r[0], IOACCT_QF_WRITEBYTES, 0), "0");
	assert_string_equal(val(&r[3], IOACCT_QF_JOBID, 0), "1200_4.batch");
	assert_string_equal(val(&r[3], IOACCT_QF_MOUNT, 0), "/");
	/* extern did no I/O: one row, no mount. */
	assert_int_equal(r[4].step->step_id, IOACCT_STEP_EXTERN);
	assert_false(r[4].per_mount);
	assert_true(absent(&r[4], IOACCT_QF_MOUNT));
	assert_string_equal(val(&r[5], IOACCT_QF_MOUNT, 0), "/scratch");
	assert_string_equal(val(&r[6], IOACCT_QF_MOUNT, 0), "mnt:99");
	free(r);

	/* -X */
	o.no_steps = true;
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_null(r[i].step);
	free(r);

	/* -j 1234.batch: that step alone. */
	o = (struct ioacct_qrow_opts){ .steps = &only_batch, .nsteps = 1 };
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].step->step_id, IOACCT_STEP_BATCH);
	free(r);

	/* A job with nothing at all still has its row. */
	f.jd.nsteps = 0;
	f.jd.ntotals = 0;
	o = (struct ioacct_qrow_opts){ .per_mount = true };
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(val(&r[0], IOACCT_QF_READBYTES, 0), "0");
	free(r);
}

static void test_values(void **state)
{
	struct job_fixture f;
	struct ioacct_qpeak peaks[] = {
		{ .step_id = IOACCT_QUERY_ALL, .mnt_id = IOACCT_MNT_ANY, .read_bytes = 5 * 1048576,
		  .write_bytes = 10 },
	};
	struct ioacct_qrow_opts o = { .with_peaks = true };
	struct ioacct_qrow *r;
	size_t n;

	(void)state;
	job_fixture(&f);
	assert_int_equal(ioacct_query_rows(&f.jd, peaks, 1, &o, &r, &n), 0);
	assert_int_equal(n, 4);
	/* The job. */
	assert_string_equal(val(&r[0], IOACCT_QF_JOBID, 0), "1200_4");
	assert_string_equal(val(&r[0], IOACCT_QF_JOBIDRAW, 0), "1234");
	assert_string_equal(val(&r[0], IOACCT_QF_CLUSTER, 0), "hpc");
	assert_string_equal(val(&r[0], IOACCT_QF_USER, 0), "alice");
	assert_string_equal(val(&r[0], IOACCT_QF_UID, 0), "1000");
	assert_string_equal(val(&r[0], IOACCT_QF_GID, 0), "100");
	assert_string_equal(val(&r[0], IOACCT_QF_NODE, 0), "n001");
	assert_string_equal(val(&r[0], IOACCT_QF_SOURCE, 0), "slurm");
	assert_string_equal(val(&r[0], IOACCT_QF_WORKDIR, 0), "/home/alice");
	assert_string_equal(val(&r[0], IOACCT_QF_START, 0), "2024-03-15T00:00:00");
	assert_string_equal(val(&r[0], IOACCT_QF_END, 0), "2024-03-16T02:03:04");
	assert_string_equal(val(&r[0], IOACCT_QF_ELAPSED, 0), "1-02:03:04");
	assert_string_equal(val(&r[0], IOACCT_QF_STATE, 0), "COMPLETED");
	assert_string_equal(val(&r[0], IOACCT_QF_EXITCODE, 0), "3");
	assert_true(absent(&r[0], IOACCT_QF_STEP));
	assert_true(absent(&r[0], IOACCT_QF_MOUNT));
	assert_string_equal(val(&r[0], IOACCT_QF_READBYTES, 0), "1536");
	assert_string_equal(val(&r[0], IOACCT_QF_WRITEBYTES, 0), "7340032");
	assert_string_equal(val(&r[0], IOACCT_QF_READS, 0), "2");
	assert_string_equal(val(&r[0], IOACCT_QF_WRITES, 0), "7");
	assert_string_equal(val(&r[0], IOACCT_QF_OPENS, 0), "3");
	assert_string_equal(val(&r[0], IOACCT_QF_STATS, 0), "5");
	assert_string_equal(val(&r[0], IOACCT_QF_FSYNCS, 0), "1");
	assert_string_equal(val(&r[0], IOACCT_QF_CREATES, 0), "0");
	assert_string_equal(val(&r[0], IOACCT_QF_ERRORS, 0), "2");
	/* The ENOENT open is a lookup; the fsync error (stored unclassified) a real one. */
	assert_string_equal(val(&r[0], IOACCT_QF_REALERRORS, 0), "1");
	assert_string_equal(val(&r[0], IOACCT_QF_NOTFOUND, 0), "1");
	assert_string_equal(val(&r[0], IOACCT_QF_READTIME, 0), "0.001000");
	assert_string_equal(val(&r[0], IOACCT_QF_WRITETIME, 0), "0.003000");
	assert_string_equal(val(&r[0], IOACCT_QF_METATIME, 0), "0.000253");
	/* 7340032 bytes over 93784 s. */
	assert_string_equal(val(&r[0], IOACCT_QF_AVEWRITEBW, 0), "78");
	assert_string_equal(val(&r[0], IOACCT_QF_AVEWRITEIOPS, 0), "0.00");
	/* 5 MiB in a 5 s bin. */
	assert_string_equal(val(&r[0], IOACCT_QF_MAXREADBW, 0), "1048576");
	assert_string_equal(val(&r[0], IOACCT_QF_MAXREADBW, 2), "1.00M");
	assert_string_equal(val(&r[0], IOACCT_QF_MAXWRITEBW, 0), "2");
	assert_string_equal(val(&r[0], IOACCT_QF_DROPPED, 0), "2");
	assert_string_equal(val(&r[0], IOACCT_QF_DROPPEDBYTES, 1), "4.00K");
	assert_string_equal(val(&r[0], IOACCT_QF_PROBEMODE, 0), "tracepoint");
	assert_string_equal(val(&r[0], IOACCT_QF_BINWIDTH, 0), "5");
	/* --units: 1024-based, two decimals. */
	assert_string_equal(val(&r[0], IOACCT_QF_WRITEBYTES, 2), "7.00M");
	assert_string_equal(val(&r[0], IOACCT_QF_READBYTES, 1), "1.50K");
	assert_string_equal(val(&r[0], IOACCT_QF_WRITEBYTES, 3), "0.01G");
	assert_string_equal(val(&r[0], IOACCT_QF_WRITEBYTES, 5), "0.00P");
	/* Counts are never scaled. */
	assert_string_equal(val(&r[0], IOACCT_QF_WRITES, 3), "7");

	/* batch: no end of its own, so the job's, as in sacct; job-only fields blank. */
	assert_string_equal(val(&r[1], IOACCT_QF_JOBID, 0), "1200_4.batch");
	assert_string_equal(val(&r[1], IOACCT_QF_JOBIDRAW, 0), "1234.batch");
	assert_string_equal(val(&r[1], IOACCT_QF_STEP, 0), "batch");
	assert_string_equal(val(&r[1], IOACCT_QF_END, 0), "2024-03-16T02:03:04");
	assert_true(absent(&r[1], IOACCT_QF_USER));
	assert_true(absent(&r[1], IOACCT_QF_UID));
	assert_true(absent(&r[1], IOACCT_QF_DROPPED));
	assert_string_equal(val(&r[1], IOACCT_QF_NODE, 0), "n001");
	/* Step 0: its own times, state and exit code. A peak not listed is 0. */
	assert_string_equal(val(&r[3], IOACCT_QF_JOBID, 0), "1200_4.0");
	assert_string_equal(val(&r[3], IOACCT_QF_ELAPSED, 0), "00:00:05");
	assert_string_equal(val(&r[3], IOACCT_QF_STATE, 0), "FAILED");
	assert_string_equal(val(&r[3], IOACCT_QF_EXITCODE, 0), "1");
	assert_string_equal(val(&r[3], IOACCT_QF_MAXWRITEBW, 0), "0");
	assert_string_equal(val(&r[3], IOACCT_QF_AVEWRITEBW, 0), "1468006");
	assert_string_equal(val(&r[3], IOACCT_QF_AVEWRITEBW, 2), "1.40M");
	assert_string_equal(val(&r[3], IOACCT_QF_AVEWRITEIOPS, 0), "1.40");
	free(r);

	/* Running: no end, elapsed up to now; no array; no peaks asked: Max*BW blank. */
	f.jd.job.end_ns = 0;
	f.jd.job.has_array = false;
	f.steps[2].end_ns = 0;
	o.with_peaks = false;
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	assert_true(absent(&r[0], IOACCT_QF_END));
	assert_string_equal(val(&r[0], IOACCT_QF_END, 0), "Unknown");
	assert_string_equal(val(&r[0], IOACCT_QF_ELAPSED, 0), "10:30:00");
	assert_string_equal(val(&r[0], IOACCT_QF_JOBID, 0), "1234");
	assert_string_equal(val(&r[2], IOACCT_QF_JOBID, 0), "1234.extern");
	assert_true(absent(&r[0], IOACCT_QF_MAXREADBW));
	/* A job that started in the same ns as now has no rate. */
	f.jd.job.start_ns = (int64_t)NOW * NS;
	assert_true(absent(&r[0], IOACCT_QF_AVEREADBW));
	assert_true(absent(&r[0], IOACCT_QF_AVEREADIOPS));
	assert_string_equal(val(&r[0], IOACCT_QF_ELAPSED, 0), "00:00:00");
	free(r);
}

/* ---- output ---- */

static char *print_rows(enum ioacct_qmode mode, const char *delim, bool header, const char *spec,
			unsigned int units)
{
	struct ioacct_qcol *cols = NULL;
	struct job_fixture f;
	struct ioacct_qrow_opts o = { 0 };
	struct ioacct_qprint p;
	struct ioacct_qrow *r;
	size_t ncols = 0, n, len;
	char err[2048], *buf = NULL;
	FILE *out = open_memstream(&buf, &len);

	job_fixture(&f);
	assert_int_equal(ioacct_query_format_parse(spec, &cols, &ncols, err, sizeof(err)), 0);
	for (size_t i = 0; i < ncols; i++)
		o.per_mount |= ioacct_query_field(cols[i].field)->flags & IOACCT_QF_PER_MOUNT;
	assert_int_equal(ioacct_query_rows(&f.jd, NULL, 0, &o, &r, &n), 0);
	p = (struct ioacct_qprint){ .f = out, .mode = mode, .delimiter = delim, .header = header,
				    .units = units, .now_ns = (int64_t)NOW * NS, .cols = cols,
				    .ncols = ncols };
	ioacct_query_print_begin(&p);
	for (size_t i = 0; i < n; i++)
		ioacct_query_print_row(&p, &r[i]);
	ioacct_query_print_end(&p);
	assert_int_equal(p.nrows, n);
	fclose(out);
	free(r);
	free(cols);
	return buf;
}

static void test_print_table(void **state)
{
	char *s;

	(void)state;
	s = print_rows(IOACCT_QM_TABLE, NULL, true, "JobID,Step%-5,WriteBytes%10,JobName%4", 0);
	assert_string_equal(s,
			    "JobID        Step  WriteBytes JobN\n"
			    "------------ ----- ---------- ----\n"
			    "1200_4                7340032 sim+\n"
			    "1200_4.batch batch          0\n"
			    "1200_4.exte+ exte+          0\n"
			    "1200_4.0     0        7340032\n");
	free(s);
	/* Right-justified strings, a last column left-justified and not padded, units. */
	s = print_rows(IOACCT_QM_TABLE, NULL, false, "JobIDRaw%12,Mount%-9,WriteBytes%6,JobName%-8",
		       2);
	assert_string_equal(s,
			    "        1234 /          0.00M sim?[31m\n"
			    "        1234 /scratch   7.00M sim?[31m\n"
			    "        1234 mnt:99     0.00M sim?[31m\n"
			    "  1234.batch /          0.00M\n"
			    " 1234.extern            0.00M\n"
			    "      1234.0 /scratch   7.00M\n"
			    "      1234.0 mnt:99     0.00M\n");
	free(s);
}

static void test_print_parsable(void **state)
{
	char *s;

	(void)state;
	s = print_rows(IOACCT_QM_PARSABLE2, NULL, true, "JobID,Mount,WriteBytes", 0);
	assert_string_equal(s,
			    "JobID|Mount|WriteBytes\n"
			    "1200_4|/|0\n"
			    "1200_4|/scratch|7340032\n"
			    "1200_4|mnt:99|0\n"
			    "1200_4.batch|/|0\n"
			    "1200_4.extern||0\n"
			    "1200_4.0|/scratch|7340032\n"
			    "1200_4.0|mnt:99|0\n");
	free(s);
	/* -p ends every field with the delimiter; widths and --units do not apply to numbers... */
	s = print_rows(IOACCT_QM_PARSABLE, NULL, false, "JobID%3,End,WriteBytes", 0);
	assert_string_equal(s,
			    "1200_4|2024-03-16T02:03:04|7340032|\n"
			    "1200_4.batch|2024-03-16T02:03:04|0|\n"
			    "1200_4.extern|2024-03-16T02:03:04|0|\n"
			    "1200_4.0|2024-03-15T00:00:15|7340032|\n");
	free(s);
	/* ...except that --units scales like the table. */
	s = print_rows(IOACCT_QM_PARSABLE2, ",", true, "JobID,WriteBytes,JobName", 1);
	assert_string_equal(s,
			    "JobID,WriteBytes,JobName\n"
			    "1200_4,7168.00K,sim?[31m\n"
			    "1200_4.batch,0.00K,\n"
			    "1200_4.extern,0.00K,\n"
			    "1200_4.0,7168.00K,\n");
	free(s);
	s = print_rows(IOACCT_QM_PARSABLE, " :: ", true, "JobID,Writes", 0);
	assert_string_equal(s,
			    "JobID :: Writes :: \n"
			    "1200_4 :: 7 :: \n"
			    "1200_4.batch :: 0 :: \n"
			    "1200_4.extern :: 0 :: \n"
			    "1200_4.0 :: 7 :: \n");
	free(s);
}

static void test_print_json(void **state)
{
	char *s;

	(void)state;
	/* Exact numbers whatever --units, null for absent values, escaped strings. */
	s = print_rows(IOACCT_QM_JSON, NULL, true, "JobID,User,WriteBytes,End,ReadTime,JobName", 3);
	assert_string_equal(s,
			    "{\"rows\": [\n"
			    "  {\"JobID\": \"1200_4\", \"User\": \"alice\", \"WriteBytes\": 7340032,"
			    " \"End\": \"2024-03-16T02:03:04\", \"ReadTime\": 0.001000,"
			    " \"JobName\": \"sim\\u001b[31m\"},\n"
			    "  {\"JobID\": \"1200_4.batch\", \"User\": null, \"WriteBytes\": 0,"
			    " \"End\": \"2024-03-16T02:03:04\", \"ReadTime\": 0.001000,"
			    " \"JobName\": null},\n"
			    "  {\"JobID\": \"1200_4.extern\", \"User\": null, \"WriteBytes\": 0,"
			    " \"End\": \"2024-03-16T02:03:04\", \"ReadTime\": 0.000000,"
			    " \"JobName\": null},\n"
			    "  {\"JobID\": \"1200_4.0\", \"User\": null, \"WriteBytes\": 7340032,"
			    " \"End\": \"2024-03-15T00:00:15\", \"ReadTime\": 0.000000,"
			    " \"JobName\": null}\n"
			    "]}\n");
	free(s);
}

static void test_print_empty(void **state)
{
	struct ioacct_qcol col = { .field = IOACCT_QF_JOBID, .width = 5, .left = true };
	struct ioacct_qprint p = { .mode = IOACCT_QM_JSON, .cols = &col, .ncols = 1, .header = true };
	char *buf = NULL;
	size_t len;

	(void)state;
	p.f = open_memstream(&buf, &len);
	ioacct_query_print_begin(&p);
	ioacct_query_print_end(&p);
	fclose(p.f);
	assert_string_equal(buf, "{\"rows\": []}\n");
	free(buf);
	/* A table with no rows still has its header, like sacct's. */
	p.mode = IOACCT_QM_TABLE;
	p.f = open_memstream(&buf, &len);
	ioacct_query_print_begin(&p);
	ioacct_query_print_end(&p);
	fclose(p.f);
	assert_string_equal(buf, "JobID\n-----\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_find),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_fields_help),
		cmocka_unit_test_setup(test_time_forms, setup_utc),
		cmocka_unit_test_setup(test_time_bad, setup_utc),
		cmocka_unit_test(test_jobs_parse),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_peaks),
		cmocka_unit_test_setup(test_rows, setup_utc),
		cmocka_unit_test_setup(test_values, setup_utc),
		cmocka_unit_test_setup(test_print_table, setup_utc),
		cmocka_unit_test_setup(test_print_parsable, setup_utc),
		cmocka_unit_test_setup(test_print_json, setup_utc),
		cmocka_unit_test(test_print_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
