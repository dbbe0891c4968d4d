// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command-line frame of every program (cli.h): the common options merged
 * into each program's table, its messages, the configuration with the
 * command line over it, and the held command of iorun and iotrace.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "text.h"

const struct ioacct_cli_common ioacct_cli_common[] = {
	{ { "config", required_argument, NULL, 'c' }, "FILE",
	  "configuration file (default: $IOACCT_CONF,\nelse " IOACCT_CONFIG_FILE ")" },
	{ { "socket", required_argument, NULL, IOACCT_CLI_KEY_SOCKET }, "PATH",
	  "ioacctd's socket (config: socket)" },
	{ { "help", no_argument, NULL, 'h' }, NULL, "show this help" },
	{ { "version", no_argument, NULL, 'V' }, NULL, "show the version" },
	{ { NULL, 0, NULL, 0 }, NULL, NULL },
};

static int usage_status(const struct ioacct_cli *cli)
{
	return cli->usage_status ? cli->usage_status : EXIT_USAGE;
}

static void vsay(const struct ioacct_cli *cli, const char *fmt, va_list ap, bool hint)
{
	fprintf(stderr, "%s: ", cli->prog);
	vfprintf(stderr, fmt, ap);
	if (hint)
		fprintf(stderr, " (see %s --help)", cli->prog);
	fputc('\n', stderr);
}

int ioacct_cli_usage_error(const struct ioacct_cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cli, fmt, ap, true);
	va_end(ap);
	return usage_status(cli);
}

int ioacct_cli_bad(const struct ioacct_cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cli, fmt, ap, false);
	va_end(ap);
	return usage_status(cli);
}

void ioacct_cli_help_common(FILE *out, int width)
{
	for (const struct ioacct_cli_common *c = ioacct_cli_common; c->opt.name; c++) {
		const char *h = c->help;
		int n;

		if (c->opt.val < 256)
			n = fprintf(out, "  -%c, --%s", c->opt.val, c->opt.name);
		else
			n = fprintf(out, "      --%s", c->opt.name);
		if (c->arg)
			n += fprintf(out, " %s", c->arg);
		/* A name longer than the column: its help on the next line. */
		if (n >= width) {
			fputc('\n', out);
			n = 0;
		}
		for (;;) {
			size_t len = strcspn(h, "\n");

			fprintf(out, "%*s%.*s\n", width - n, "", (int)len, h);
			if (!h[len])
				break;
			h += len + 1;
			n = 0;
		}
	}
}

static size_t count_options(const struct option *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

static bool is_common(const struct option *o)
{
	if (o->val >= IOACCT_CLI_KEY_BASE)
		return true;
	for (const struct ioacct_cli_common *c = ioacct_cli_common; c->opt.name; c++)
		if (!strcmp(c->opt.name, o->name) || c->opt.val == o->val)
			return true;
	return false;
}

/* Appends o's letter to the short options, once. */
static void add_short(char *s, const struct option *o)
{
	size_t n = strlen(s);

	if (o->flag || o->val <= 0 || o->val >= 256 || o->val == ':' || o->val == '?' ||
	    strchr(s, o->val))
		return;
	s[n++] = (char)o->val;
	if (o->has_arg != no_argument)
		s[n++] = ':';
	if (o->has_arg == optional_argument)
		s[n++] = ':';
	s[n] = '\0';
}

/*
 * getopt_long's tables: the frame's options, then the program's; the short
 * ones from both. 0, or -EINVAL (a clash, said) or -ENOMEM.
 */
static int merge_tables(const struct ioacct_cli *cli, struct option **lo, char **so)
{
	size_t nc = 0, np = count_options(cli->options), n = 0;

	while (ioacct_cli_common[nc].opt.name)
		nc++;
	*lo = calloc(nc + np + 1, sizeof(**lo));
	/* "+" and ":" first, then at most three bytes an option. */
	*so = calloc(3 * (nc + np) + 3, 1);
	if (!*lo || !*so)
		return -ENOMEM;
	strcpy(*so, cli->args == IOACCT_CLI_COMMAND ? "+:" : ":");
	for (size_t i = 0; i < nc; i++) {
		(*lo)[n] = ioacct_cli_common[i].opt;
		add_short(*so, &(*lo)[n++]);
	}
	for (size_t i = 0; i < np; i++) {
		if (is_common(&cli->options[i])) {
			fprintf(stderr, "%s: internal error: option --%s clashes with a common option\n",
				cli->prog, cli->options[i].name);
			return -EINVAL;
		}
		(*lo)[n] = cli->options[i];
		add_short(*so, &(*lo)[n++]);
	}
	return 0;
}

/* getopt's complaint about argv[optind - 1], in one line of ours. */
static int option_error(const struct ioacct_cli *cli, int c, char **argv)
{
	char opt[3] = { '-', (char)optopt, '\0' };
	const char *last = argv[optind - 1];
	const char *name = strncmp(last, "--", 2) == 0 || !optopt ? last : opt;

	if (c == ':')
		return ioacct_cli_usage_error(cli, "option %s needs a value", name);
	return ioacct_cli_usage_error(cli, "unknown option %s", name);
}

/* One option; IOACCT_CLI_GO to go on, or the exit status. */
static int take(struct ioacct_cli *cli, int c, char **argv)
{
	int ret;

	switch (c) {
	case 'c':
		cli->config_file = optarg;
		return IOACCT_CLI_GO;
	case IOACCT_CLI_KEY_SOCKET:
		cli->socket_path = optarg;
		return IOACCT_CLI_GO;
	case 'h':
		cli->usage(stdout);
		return 0;
	case 'V':
		printf("%s %s\n", cli->prog, PACKAGE_VERSION);
		return 0;
	case ':':
	case '?':
		return option_error(cli, c, argv);
	}
	ret = cli->option ? cli->option(cli, c, optarg) : option_error(cli, '?', argv);
	return ret ? ret : IOACCT_CLI_GO;
}

int ioacct_cli_parse(struct ioacct_cli *cli, int argc, char **argv)
{
	struct option *lo = NULL;
	char *so = NULL;
	int c, ret;

	ret = merge_tables(cli, &lo, &so);
	if (ret) {
		if (ret == -ENOMEM)
			fprintf(stderr, "%s: out of memory\n", cli->prog);
		free(lo);
		free(so);
		return EXIT_RUNTIME;
	}
	ret = IOACCT_CLI_GO;
	opterr = 0;
	/* 0, not 1: getopt starts afresh, should a program parse twice (the unit tests do). */
	optind = 0;
	while (ret == IOACCT_CLI_GO && (c = getopt_long(argc, argv, so, lo, NULL)) != -1)
		ret = take(cli, c, argv);
	free(lo);
	free(so);
	if (ret != IOACCT_CLI_GO)
		return ret;
	cli->argc = argc - optind;
	cli->argv = argv + optind;
	if (cli->args == IOACCT_CLI_NO_ARGS && cli->argc)
		return ioacct_cli_usage_error(cli, "unexpected argument '%s'", cli->argv[0]);
	return IOACCT_CLI_GO;
}

int ioacct_cli_config(const struct ioacct_cli *cli, struct ioacct_config *cfg,
		      const struct ioacct_cli_set *sets, size_t n)
{
	const struct ioacct_cli_set socket = { "socket", "socket", cli->socket_path };
	char err[1024];

	ioacct_config_defaults(cfg);
	if (ioacct_config_load(cfg, cli->config_file, err, sizeof(err)))
		return ioacct_cli_bad(cli, "%s", err);
	for (size_t i = 0; i <= n; i++) {
		const struct ioacct_cli_set *s = i ? &sets[i - 1] : &socket;

		if (s->value && ioacct_config_set(cfg, s->key, s->value, err, sizeof(err)))
			return ioacct_cli_bad(cli, "--%s: %s", s->option, err);
	}
	return 0;
}

int ioacct_cli_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The child: waits for the go, then becomes the command. Never returns. */
static void run_held(const struct ioacct_cli *cli, char **argv, bool run_unreleased, int wait_fd)
{
	char c, name[PATH_MAX];
	ssize_t n;
	int e;

	while ((n = read(wait_fd, &c, 1)) < 0 && errno == EINTR)
		;
	/* EOF: the parent gave up on the cgroup; run only if told to all the same. */
	if (n != 1 && !run_unreleased)
		_exit(EXIT_OWN);
	close(wait_fd);
	execvp(argv[0], argv);
	e = errno;
	/* The command is a job's name: no byte of it may forge a line here. One write, too. */
	fprintf(stderr, "%s: cannot run %s: %s\n", cli->prog,
		ioacct_text_clean(name, sizeof(name), argv[0]), strerror(e));
	_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

int ioacct_cli_fork_held(const struct ioacct_cli *cli, char **argv, bool run_unreleased,
			 pid_t *pid, int *go)
{
	int fds[2], ret;

	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		fprintf(stderr, "%s: pipe: %s\n", cli->prog, strerror(-ret));
		return ret;
	}
	*pid = fork();
	if (*pid < 0) {
		ret = -errno;
		fprintf(stderr, "%s: fork: %s\n", cli->prog, strerror(-ret));
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (*pid == 0) {
		close(fds[1]);
		run_held(cli, argv, run_unreleased, fds[0]);
	}
	close(fds[0]);
	*go = fds[1];
	return 0;
}

int ioacct_cli_release(const struct ioacct_cli *cli, int go)
{
	int ret = 0;

	if (write(go, "g", 1) != 1) {
		ret = errno ? -errno : -EIO;
		fprintf(stderr, "%s: cannot start the command: %s\n", cli->prog, strerror(-ret));
	}
	close(go);
	return ret;
}
