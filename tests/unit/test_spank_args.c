// SPDX-License-Identifier: GPL-2.0-or-later
/* The SPANK plugin's parsers and its as-user file writer, without Slurm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "args.h"
#include "proto.h"
#include "userfile.h"

static void test_conf_all_keys(void **state)
{
	struct ioacct_spank_conf c;
	char *av[] = { "config=/etc/x.conf", "socket=/run/s", "report=%w/r-%j.txt",
		       "report_copy_dir=/var/log/ioacct", "default=on", "strict=1" };
	char err[512];

	(void)state;
	assert_int_equal(ioacct_spank_conf_parse(&c, 6, av, err, sizeof(err)), 0);
	assert_string_equal(c.config, "/etc/x.conf");
	assert_string_equal(c.socket, "/run/s");
	assert_string_equal(c.report, "%w/r-%j.txt");
	assert_string_equal(c.report_copy_dir, "/var/log/ioacct");
	assert_true(c.default_on);
	assert_true(c.strict);
	assert_string_equal(err, "");
}

static void test_conf_bad_keys_skipped(void **state)
{
	struct ioacct_spank_conf c;
	char *av[] = { "colour=red", "default=maybe", "socket=relative", "noequals", "default=on" };
	char err[512];

	(void)state;
	assert_int_equal(ioacct_spank_conf_parse(&c, 5, av, err, sizeof(err)), 4);
	assert_non_null(strstr(err, "colour: unknown key (valid: config, socket"));
	assert_non_null(strstr(err, "default=maybe: expected on or off"));
	assert_non_null(strstr(err, "socket=relative: not an absolute path"));
	assert_non_null(strstr(err, "noequals: expected key=value"));
	/* The good argument after the bad ones still counts. */
	assert_true(c.default_on);
	assert_false(c.strict);
	assert_string_equal(c.socket, "");
}

static void test_monitor_opts(void **state)
{
	struct ioacct_monitor_opts o;
	char err[256];

	(void)state;
	assert_int_equal(ioacct_monitor_opts_parse(NULL, &o, err, sizeof(err)), 0);
	assert_int_equal(o.formats, 0);
	assert_int_equal(ioacct_monitor_opts_parse("(null)", &o, err, sizeof(err)), 0);
	assert_int_equal(o.formats, 0);
	assert_int_equal(ioacct_monitor_opts_parse("format=text,html,json,bin=2.5", &o, err, sizeof(err)), 0);
	assert_int_equal(o.formats, IOACCT_FMT(IOACCT_RENDER_TEXT) | IOACCT_FMT(IOACCT_RENDER_HTML) |
				   IOACCT_FMT(IOACCT_RENDER_JSON));
	assert_true(o.bin_width_ns == 2500000000ULL);
	assert_int_equal(ioacct_monitor_opts_parse("bin=1,format=darshan", &o, err, sizeof(err)), 0);
	assert_int_equal(o.formats, IOACCT_FMT(IOACCT_RENDER_DARSHAN));
	assert_true(o.bin_width_ns == 1000000000ULL);
	assert_int_equal(ioacct_monitor_opts_parse("format=pdf", &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "format 'pdf' unknown (text, json, html or darshan)"));
	assert_int_equal(ioacct_monitor_opts_parse("bin=0.01", &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0.1 to 86400"));
	assert_int_equal(ioacct_monitor_opts_parse("text", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("colour=red", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("bin=1,2", &o, err, sizeof(err)), -EINVAL);
}

/* trace[,trace_max=SIZE]: a cap in bytes, and a Darshan report to put the trace in. */
static void test_monitor_opts_trace(void **state)
{
	struct ioacct_monitor_opts o;
	char err[256];

	(void)state;
	assert_int_equal(ioacct_monitor_opts_parse("format=json", &o, err, sizeof(err)), 0);
	assert_true(o.trace_max == 0);
	assert_int_equal(ioacct_monitor_opts_parse("trace", &o, err, sizeof(err)), 0);
	assert_true(o.trace_max == IOACCT_TRACE_MAX_DEFAULT && o.trace_max == 64ULL << 20);
	assert_int_equal(o.formats, IOACCT_FMT(IOACCT_RENDER_TEXT) | IOACCT_FMT(IOACCT_RENDER_DARSHAN));
	/* A bare "trace" after format= is the switch, not a format. */
	assert_int_equal(ioacct_monitor_opts_parse("format=html,trace,trace_max=4K", &o, err, sizeof(err)), 0);
	assert_true(o.trace_max == 4096);
	assert_int_equal(o.formats, IOACCT_FMT(IOACCT_RENDER_HTML) | IOACCT_FMT(IOACCT_RENDER_DARSHAN));
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=2G,format=darshan", &o, err, sizeof(err)), 0);
	assert_true(o.trace_max == 2ULL << 30);
	assert_int_equal(o.formats, IOACCT_FMT(IOACCT_RENDER_DARSHAN));
	assert_int_equal(ioacct_monitor_opts_parse("trace,trace_max=1M,trace", &o, err, sizeof(err)), 0);
	assert_true(o.trace_max == 1ULL << 20);
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=100", &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "trace_max=100: a size of at least 4K"));
	/* Too large is said as such, not as "at least 4K". */
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=99999999999999999999", &o, err,
						   sizeof(err)), -EINVAL);
	assert_string_equal(err, "trace_max=99999999999999999999: too large for 64 bits (each node "
				 "caps a trace at its max_trace_size anyway)");
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=17179869184G", &o, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "too large for 64 bits"));
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=1X", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=-4K", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("trace_max", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("trace_max=16777216T", &o, err, sizeof(err)), -EINVAL);
	/* spans: the calls as OTLP spans, alone or with a trace; a switch like trace. */
	assert_int_equal(ioacct_monitor_opts_parse("spans", &o, err, sizeof(err)), 0);
	assert_true(o.spans == IOACCT_SPANS_ALL && o.trace_max == 0 && o.formats == 0);
	assert_int_equal(ioacct_monitor_opts_parse("format=html,spans,trace", &o, err, sizeof(err)),
			 0);
	assert_true(o.spans == IOACCT_SPANS_ALL && o.trace_max == IOACCT_TRACE_MAX_DEFAULT);
	/* spans=WHAT: the system calls, the MPI-IO calls, or both (attribute 140's bits). */
	assert_int_equal(ioacct_monitor_opts_parse("spans=posix", &o, err, sizeof(err)), 0);
	assert_true(o.spans == IOACCT_SPANS_POSIX);
	assert_int_equal(ioacct_monitor_opts_parse("spans=mpiio,trace", &o, err, sizeof(err)), 0);
	assert_true(o.spans == IOACCT_SPANS_MPIIO && o.trace_max == IOACCT_TRACE_MAX_DEFAULT);
	assert_int_equal(ioacct_monitor_opts_parse("spans=all", &o, err, sizeof(err)), 0);
	assert_true(o.spans == (IOACCT_SPANS_POSIX | IOACCT_SPANS_MPIIO));
	assert_int_equal(ioacct_monitor_opts_parse("spans=mpi", &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "spans=mpi: posix, mpiio or all");
	assert_int_equal(ioacct_monitor_opts_parse("spans=", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("spans=mpiio,posix", &o, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ioacct_monitor_opts_parse("bogus", &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'bogus': expected format=..., bin=SECONDS, trace or spans");
}

static void test_report_path_expand(void **state)
{
	struct ioacct_report_vars v = { .job_id = 1234, .user = "alice", .job_name = "sim",
					.workdir = "/home/alice/run", .node = "n07" };
	char out[4096], err[256];

	(void)state;
	assert_int_equal(ioacct_report_path_expand("%w/ioacct-%j.txt", &v, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "/home/alice/run/ioacct-1234.txt");
	assert_int_equal(ioacct_report_path_expand("/r/%u/%x-%A_%a-100%%.txt", &v, out, sizeof(out), err,
						   sizeof(err)), 0);
	assert_string_equal(out, "/r/alice/sim-1234_4294967294-100%.txt");
	assert_int_equal(ioacct_report_path_expand("/r/%N/%j", &v, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "/r/n07/1234");
	v.has_array = true;
	v.array_job_id = 1200;
	v.array_task_id = 3;
	assert_int_equal(ioacct_report_path_expand("/r/%A_%a", &v, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "/r/1200_3");
	/* A name must not lead elsewhere. */
	v.job_name = "../../etc/x";
	assert_int_equal(ioacct_report_path_expand("/r/%x", &v, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_report_path_expand("/r/%q", &v, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown %q"));
	assert_int_equal(ioacct_report_path_expand("rel/%j", &v, out, sizeof(out), err, sizeof(err)), -EINVAL);
	v.workdir = NULL;
	assert_int_equal(ioacct_report_path_expand("%w/x", &v, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_report_path_expand("/a/%j", &v, out, 5, err, sizeof(err)), -ENAMETOOLONG);
}

static void test_report_path_for_and_default(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(ioacct_report_path_for("/a.b/ioacct-1.txt", IOACCT_RENDER_JSON, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/a.b/ioacct-1.json");
	assert_int_equal(ioacct_report_path_for("/a.b/report", IOACCT_RENDER_HTML, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/a.b/report.html");
	assert_int_equal(ioacct_report_path_for("/r/x.txt", IOACCT_RENDER_TEXT, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/r/x.txt");
	assert_int_equal(ioacct_report_path_for("/r/x.txt", IOACCT_RENDER_DARSHAN, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/r/x.darshan");
	/* A job on several nodes: one part per node. */
	assert_int_equal(ioacct_report_path_for("/r/ioacct-7.txt", IOACCT_RENDER_TEXT, "node012", out, sizeof(out)), 0);
	assert_string_equal(out, "/r/ioacct-7.node012.txt");
	assert_int_equal(ioacct_report_path_for("/r/x.txt", IOACCT_RENDER_TEXT, "a/b", out, sizeof(out)), -EINVAL);
	ioacct_report_default_pattern("/home/a/out/slurm-%j.out", out, sizeof(out));
	assert_string_equal(out, "/home/a/out/ioacct-%j.txt");
	ioacct_report_default_pattern("/dev/null", out, sizeof(out));
	assert_string_equal(out, "%w/ioacct-%j.txt");
	ioacct_report_default_pattern(NULL, out, sizeof(out));
	assert_string_equal(out, "%w/ioacct-%j.txt");
}

/* As root: the writer drops to the user and never goes through a link or over another's file. */
static void test_write_as_user(void **state)
{
	char dir[] = "/tmp/test_spank.XXXXXX", path[256], link[256], victim[256], err[512], buf[64];
	struct passwd *pw = getpwnam("nobody");
	struct stat st;
	int fd;

	(void)state;
	if (geteuid() != 0 || !pw)
		skip();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chown(dir, pw->pw_uid, pw->pw_gid), 0);
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	assert_int_equal(ioacct_write_as_user(path, pw->pw_uid, pw->pw_gid, "abc", 3, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, pw->pw_uid);
	assert_int_equal(st.st_size, 3);
	/* Replacing the user's own file: allowed. */
	assert_int_equal(ioacct_write_as_user(path, pw->pw_uid, pw->pw_gid, "x", 1, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 1);
	/* A root-owned file in the user's directory: not replaced. */
	snprintf(victim, sizeof(victim), "%s/rootfile", dir);
	fd = open(victim, O_WRONLY | O_CREAT, 0666);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	chmod(victim, 0666);
	assert_true(ioacct_write_as_user(victim, pw->pw_uid, pw->pw_gid, "bad", 3, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "refuse to replace"));
	/* A link to it: not followed. */
	snprintf(link, sizeof(link), "%s/link.txt", dir);
	assert_int_equal(symlink(victim, link), 0);
	assert_true(ioacct_write_as_user(link, pw->pw_uid, pw->pw_gid, "bad", 3, err, sizeof(err)) < 0);
	fd = open(victim, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	close(fd);
	assert_memory_equal(buf, "keep", 4);
	/* A directory the user cannot write to. */
	assert_true(ioacct_write_as_user("/root/ioacct-test-report.txt", pw->pw_uid, pw->pw_gid, "x", 1, err,
					 sizeof(err)) < 0);
	assert_non_null(strstr(err, "open /root/ioacct-test-report.txt as uid"));
	unlink(path);
	unlink(link);
	unlink(victim);
	rmdir(dir);
}

static void test_write_as_root(void **state)
{
	char dir[] = "/tmp/test_spank.XXXXXX", path[256], err[256], buf[16];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(ioacct_write_as_root(dir, "c-ioacct-1.txt", "one", 3, err, sizeof(err)), 0);
	assert_int_equal(ioacct_write_as_root(dir, "c-ioacct-1.txt", "two", 3, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/c-ioacct-1.txt", dir);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	assert_memory_equal(buf, "two", 3);
	assert_int_equal(ioacct_write_as_root(dir, "../escape", "x", 1, err, sizeof(err)), -EINVAL);
	unlink(path);
	rmdir(dir);
}

static void assert_nth(const char *list, unsigned int n, const char *want)
{
	char out[64] = "";

	assert_int_equal(ioacct_hostlist_nth(list, n, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_hostlist_expand(void **state)
{
	char out[64], small[8];

	(void)state;
	assert_int_equal(ioacct_hostlist_expand("mc[1-3]", out, sizeof(out)), 0);
	assert_string_equal(out, "mc1,mc2,mc3");
	assert_int_equal(ioacct_hostlist_expand("n[09-11],login", out, sizeof(out)), 0);
	assert_string_equal(out, "n09,n10,n11,login");
	assert_int_equal(ioacct_hostlist_expand("mc1", out, sizeof(out)), 0);
	assert_string_equal(out, "mc1");
	assert_int_equal(ioacct_hostlist_expand("", out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_hostlist_expand("a[1-2]b[1-2]", out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_hostlist_expand("mc[1-3]", small, sizeof(small)), -ENAMETOOLONG);
}

static void test_hostlist_nth(void **state)
{
	char out[8];

	(void)state;
	assert_nth("mc1", 0, "mc1");
	assert_nth("mc[1-3]", 0, "mc1");
	assert_nth("mc[1-3]", 2, "mc3");
	assert_nth("n[007-010,12],login,gpu[1-2]x", 3, "n010");
	assert_nth("n[007-010,12],login,gpu[1-2]x", 4, "n12");
	assert_nth("n[007-010,12],login,gpu[1-2]x", 5, "login");
	assert_nth("n[007-010,12],login,gpu[1-2]x", 7, "gpu2x");
	assert_int_equal(ioacct_hostlist_nth("mc[1-3]", 3, out, sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_hostlist_nth("", 0, out, sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_hostlist_nth("a[1-2]b[1-2]", 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_hostlist_nth("a[3-1]", 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_hostlist_nth("a[1-", 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_hostlist_nth("a,,b", 1, out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_hostlist_nth("averyveryverylongname", 0, out, sizeof(out)),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_all_keys),
		cmocka_unit_test(test_conf_bad_keys_skipped),
		cmocka_unit_test(test_monitor_opts),
		cmocka_unit_test(test_monitor_opts_trace),
		cmocka_unit_test(test_report_path_expand),
		cmocka_unit_test(test_report_path_for_and_default),
		cmocka_unit_test(test_write_as_user),
		cmocka_unit_test(test_write_as_root),
		cmocka_unit_test(test_hostlist_nth),
		cmocka_unit_test(test_hostlist_expand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
