// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lib/core/cli.c: the command-line frame. Programs of different shapes (a
 * table with letters, one with long options alone, one that runs a command,
 * one with no options at all) each get every common option without naming
 * it: an option added to the frame is every program's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "config.h"

/* What a program's option() saw. */
struct seen {
	int keys[16];
	const char *args[16];
	int n;
	int refuse;             /* a key option() refuses (returns 42 for) */
};

static int take(struct ioacct_cli *cli, int key, const char *arg)
{
	struct seen *s = cli->ctx;

	if (key == s->refuse)
		return 42;
	s->keys[s->n] = key;
	s->args[s->n++] = arg;
	return 0;
}

static int usage_calls;

static void usage(FILE *out)
{
	usage_calls++;
	fprintf(out, "Usage: test\n");
	ioacct_cli_help_common(out, 24);
}

/* Four programs' tables, none naming a common option. */
enum { OPT_LONG = 256, OPT_OTHER };
static const struct option letters[] = {
	{ "xray", required_argument, NULL, 'x' },
	{ "yes", no_argument, NULL, 'y' },
	{ "long", required_argument, NULL, OPT_LONG },
	{ NULL, 0, NULL, 0 },
};
static const struct option longs[] = {
	{ "other", no_argument, NULL, OPT_OTHER },
	{ NULL, 0, NULL, 0 },
};

struct prog {
	const char *name;
	const struct option *options;
	enum ioacct_cli_args args;
	int usage_status;
};
static const struct prog progs[] = {
	{ "letters", letters, IOACCT_CLI_NO_ARGS, 0 },
	{ "longs", longs, IOACCT_CLI_ARGS, 0 },
	{ "runner", letters, IOACCT_CLI_COMMAND, EXIT_OWN },
	{ "bare", NULL, IOACCT_CLI_NO_ARGS, 0 },
};

static void cli_init(struct ioacct_cli *cli, const struct prog *p, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	*cli = (struct ioacct_cli){
		.prog = p->name, .options = p->options, .option = take, .usage = usage,
		.args = p->args, .usage_status = p->usage_status, .ctx = s,
	};
}

/* argv from a NULL-ended list of words; parse it. */
static int parse(struct ioacct_cli *cli, ...)
{
	static char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, cli);
	argv[argc++] = (char *)cli->prog;
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return ioacct_cli_parse(cli, argc, argv);
}

/* What fd (1 or 2) got while `fn` ran, into out. */
#define CAPTURE(fd, out, call)                                                  \
	do {                                                                    \
		FILE *tmp_ = tmpfile();                                         \
		int saved_ = dup(fd);                                           \
		size_t n_;                                                      \
									\
		assert_non_null(tmp_);                                          \
		fflush(NULL);                                                   \
		dup2(fileno(tmp_), fd);                                         \
		call;                                                           \
		fflush(NULL);                                                   \
		dup2(saved_, fd);                                               \
		close(saved_);                                                  \
		rewind(tmp_);                                                   \
		n_ = fread(out, 1, sizeof(out) - 1, tmp_);                      \
		out[n_] = '\0';                                                 \
		fclose(tmp_);                                                   \
	} while (0)

static void test_common_options_everywhere(void **state)
{
	char out[4096], want[256];
	struct ioacct_cli cli;
	struct seen s;
	int ret = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		const struct prog *p = &progs[i];

		/* Every option of the frame's table, long and short, in every program. */
		for (const struct ioacct_cli_common *c = ioacct_cli_common; c->opt.name; c++) {
			char lopt[64];

			snprintf(lopt, sizeof(lopt), "--%s", c->opt.name);
			cli_init(&cli, p, &s);
			if (c->opt.has_arg == required_argument)
				assert_int_equal(parse(&cli, lopt, "/v", NULL), IOACCT_CLI_GO);
			else
				CAPTURE(1, out, ret = parse(&cli, lopt, NULL));
			if (c->opt.has_arg == no_argument)
				assert_int_equal(ret, 0);
			assert_int_equal(s.n, 0);
		}
		cli_init(&cli, p, &s);
		assert_int_equal(parse(&cli, "-c", "/etc/x.conf", "--socket=/run/s", NULL),
				 IOACCT_CLI_GO);
		assert_string_equal(cli.config_file, "/etc/x.conf");
		assert_string_equal(cli.socket_path, "/run/s");
		assert_int_equal(cli.argc, 0);

		cli_init(&cli, p, &s);
		CAPTURE(1, out, ret = parse(&cli, "-V", "--nonsense", NULL));
		assert_int_equal(ret, 0);
		snprintf(want, sizeof(want), "%s %s\n", p->name, PACKAGE_VERSION);
		assert_string_equal(out, want);

		cli_init(&cli, p, &s);
		usage_calls = 0;
		CAPTURE(1, out, ret = parse(&cli, "-h", NULL));
		assert_int_equal(ret, 0);
		assert_int_equal(usage_calls, 1);
		for (const struct ioacct_cli_common *c = ioacct_cli_common; c->opt.name; c++)
			assert_non_null(strstr(out, c->opt.name));
	}
}

static void test_own_options(void **state)
{
	struct ioacct_cli cli;
	struct seen s;

	(void)state;
	cli_init(&cli, &progs[0], &s);
	assert_int_equal(parse(&cli, "-x", "1", "-y", "--long", "L", "--xray=2", "-yx3", NULL),
			 IOACCT_CLI_GO);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.keys[0], 'x');
	assert_string_equal(s.args[0], "1");
	assert_int_equal(s.keys[1], 'y');
	assert_int_equal(s.keys[2], OPT_LONG);
	assert_string_equal(s.args[2], "L");
	assert_string_equal(s.args[3], "2");
	assert_int_equal(s.keys[4], 'y');
	assert_string_equal(s.args[5], "3");

	/* option()'s exit status ends the parse. */
	cli_init(&cli, &progs[0], &s);
	s.refuse = 'y';
	assert_int_equal(parse(&cli, "-x", "1", "-y", "-x", "2", NULL), 42);
	assert_int_equal(s.n, 1);
}

static void test_arguments(void **state)
{
	struct ioacct_cli cli;
	struct seen s;

	(void)state;
	/* ARGS: among the options. */
	cli_init(&cli, &progs[1], &s);
	assert_int_equal(parse(&cli, "12", "--other", "13", NULL), IOACCT_CLI_GO);
	assert_int_equal(s.n, 1);
	assert_int_equal(cli.argc, 2);
	assert_string_equal(cli.argv[0], "12");
	assert_string_equal(cli.argv[1], "13");

	/* COMMAND: the options end at the command; its own are its own. */
	cli_init(&cli, &progs[2], &s);
	assert_int_equal(parse(&cli, "-y", "cmd", "-x", "--socket", NULL), IOACCT_CLI_GO);
	assert_int_equal(s.n, 1);
	assert_int_equal(cli.argc, 3);
	assert_string_equal(cli.argv[0], "cmd");
	assert_null(cli.socket_path);
	cli_init(&cli, &progs[2], &s);
	assert_int_equal(parse(&cli, "-y", "--", "cmd", NULL), IOACCT_CLI_GO);
	assert_int_equal(cli.argc, 1);
}

/* Bad usage: one line, the program's status for it. */
static void test_usage_errors(void **state)
{
	static const struct {
		const char *words[3];
		const char *msg;
	} bad[] = {
		{ { "--nope", NULL }, "unknown option --nope" },
		{ { "-Z", NULL }, "unknown option -Z" },
		{ { "-x", NULL }, "option -x needs a value" },
		{ { "--socket", NULL }, "option --socket needs a value" },
		{ { "--config", NULL }, "option --config needs a value" },
		{ { "--yes=1", NULL }, "unknown option --yes=1" },
	};
	char err[1024], want[256];
	struct ioacct_cli cli;
	struct seen s;
	int ret;

	(void)state;
	for (size_t p = 0; p < 3; p += 2) {
		int status = p ? EXIT_OWN : EXIT_USAGE;

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			cli_init(&cli, &progs[p], &s);
			CAPTURE(2, err, ret = parse(&cli, bad[i].words[0], bad[i].words[1], NULL));
			assert_int_equal(ret, status);
			snprintf(want, sizeof(want), "%s: %s (see %s --help)\n", progs[p].name,
				 bad[i].msg, progs[p].name);
			assert_string_equal(err, want);
		}
	}
	cli_init(&cli, &progs[0], &s);
	CAPTURE(2, err, ret = parse(&cli, "-y", "extra", NULL));
	assert_int_equal(ret, EXIT_USAGE);
	assert_string_equal(err, "letters: unexpected argument 'extra' (see letters --help)\n");
	CAPTURE(2, err, ret = ioacct_cli_bad(&cli, "--x: %d is odd", 3));
	assert_int_equal(ret, EXIT_USAGE);
	assert_string_equal(err, "letters: --x: 3 is odd\n");
}

/* A program's table may not take a common option's name or key. */
static void test_clash_refused(void **state)
{
	static const struct option clash[][2] = {
		{ { "socket", required_argument, NULL, 300 }, { NULL, 0, NULL, 0 } },
		{ { "cfg", required_argument, NULL, 'c' }, { NULL, 0, NULL, 0 } },
		{ { "vers", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 } },
		{ { "mine", no_argument, NULL, IOACCT_CLI_KEY_BASE + 7 }, { NULL, 0, NULL, 0 } },
	};
	const struct prog p = { "clash", NULL, IOACCT_CLI_NO_ARGS, 0 };
	char err[1024];
	struct ioacct_cli cli;
	struct seen s;
	int ret;

	(void)state;
	for (size_t i = 0; i < sizeof(clash) / sizeof(clash[0]); i++) {
		cli_init(&cli, &p, &s);
		cli.options = clash[i];
		CAPTURE(2, err, ret = parse(&cli, NULL));
		assert_int_equal(ret, EXIT_RUNTIME);
		assert_non_null(strstr(err, "clashes with a common option"));
	}
}

static void write_conf(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The configuration, with every override through the setter. */
static void test_config(void **state)
{
	char dir[] = "/tmp/test_cli.XXXXXX", path[PATH_MAX], err[2048], want[PATH_MAX + 128];
	struct ioacct_cli_set sets[] = {
		{ "bin-width", "bin_width", NULL },
		{ "node-name", "node_name", NULL },
	};
	struct ioacct_config cfg;
	struct ioacct_cli cli;
	struct seen s;
	int ret;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ioacct.conf", dir);
	write_conf(path, "socket = /run/file.sock\nbin_width = 2\n");
	cli_init(&cli, &progs[3], &s);
	cli.config_file = path;
	assert_int_equal(ioacct_cli_config(&cli, &cfg, sets, 2), 0);
	assert_string_equal(cfg.socket_path, "/run/file.sock");
	assert_int_equal(cfg.bin_width_ns, 2000000000ULL);

	/* The command line over the file. */
	cli.socket_path = "/run/cli.sock";
	sets[0].value = "0.5";
	sets[1].value = "n1";
	assert_int_equal(ioacct_cli_config(&cli, &cfg, sets, 2), 0);
	assert_string_equal(cfg.socket_path, "/run/cli.sock");
	assert_int_equal(cfg.bin_width_ns, 500000000ULL);
	assert_string_equal(cfg.node, "n1");

	/* Checked as the file's keys are: one line, the option named. */
	cli.socket_path = "relative.sock";
	CAPTURE(2, err, ret = ioacct_cli_config(&cli, &cfg, sets, 2));
	assert_int_equal(ret, EXIT_USAGE);
	assert_string_equal(err, "bare: --socket: socket: \"relative.sock\" is not an absolute path\n");
	cli.socket_path = NULL;
	sets[0].value = "0";
	cli.usage_status = EXIT_OWN;
	CAPTURE(2, err, ret = ioacct_cli_config(&cli, &cfg, sets, 2));
	assert_int_equal(ret, EXIT_OWN);
	assert_non_null(strstr(err, "bare: --bin-width: bin_width: "));

	/* -c on a missing file: one line. */
	snprintf(path, sizeof(path), "%s/missing.conf", dir);
	cli.usage_status = 0;
	CAPTURE(2, err, ret = ioacct_cli_config(&cli, &cfg, NULL, 0));
	assert_int_equal(ret, EXIT_USAGE);
	snprintf(want, sizeof(want), "bare: %s: No such file or directory\n", path);
	assert_string_equal(err, want);
	snprintf(path, sizeof(path), "%s/ioacct.conf", dir);
	unlink(path);
	rmdir(dir);
}

static void test_help_columns(void **state)
{
	char out[4096];

	(void)state;
	CAPTURE(1, out, ioacct_cli_help_common(stdout, 22));
	assert_non_null(strstr(out, "  -c, --config FILE   configuration file"));
	assert_non_null(strstr(out, "\n      --socket PATH   ioacctd's socket"));
	assert_non_null(strstr(out, "\n  -V, --version       show the version\n"));
	/* A name as long as the column: its help on the next line. */
	CAPTURE(1, out, ioacct_cli_help_common(stdout, 10));
	assert_non_null(strstr(out, "  -c, --config FILE\n          configuration file"));
}

static void test_uint(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(ioacct_cli_uint("42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(ioacct_cli_uint("0", 0, 1, &v), 0);
	assert_int_equal(ioacct_cli_uint("18446744073709551615", 1, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(ioacct_cli_uint("18446744073709551616", 1, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint("0", 1, 100, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint("101", 1, 100, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint("", 0, 100, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint("-1", 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint("+1", 0, 100, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(ioacct_cli_uint("1x", 0, 100, &v), -EINVAL);
}

/* The held command: runs once released; closed unreleased, runs or not as told. */
static void test_fork_held(void **state)
{
	char *ok[] = { "sh", "-c", "exit 7", NULL }, *missing[] = { "/nonexistent/cmd", NULL };
	const struct prog p = { "runner", NULL, IOACCT_CLI_COMMAND, EXIT_OWN };
	char err[1024];
	struct ioacct_cli cli;
	struct seen s;
	int go, status;
	pid_t pid;

	(void)state;
	cli_init(&cli, &p, &s);
	assert_int_equal(ioacct_cli_fork_held(&cli, ok, false, &pid, &go), 0);
	assert_int_equal(ioacct_cli_release(&cli, go), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 7);

	assert_int_equal(ioacct_cli_fork_held(&cli, ok, false, &pid, &go), 0);
	close(go);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), EXIT_OWN);

	assert_int_equal(ioacct_cli_fork_held(&cli, ok, true, &pid, &go), 0);
	close(go);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 7);

	CAPTURE(2, err, {
		assert_int_equal(ioacct_cli_fork_held(&cli, missing, false, &pid, &go), 0);
		ioacct_cli_release(&cli, go);
		waitpid(pid, &status, 0);
	});
	assert_int_equal(WEXITSTATUS(status), EXIT_NOTFOUND);
	assert_string_equal(err, "runner: cannot run /nonexistent/cmd: No such file or directory\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_common_options_everywhere),
		cmocka_unit_test(test_own_options),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_clash_refused),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_help_columns),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_fork_held),
	};

	unsetenv("IOACCT_CONF");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
