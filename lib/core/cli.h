/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command-line frame every program shares (tools/: ioacctd, iorun,
 * ioacct, ioacct top, ioreport, iotrace): the common options, the exit
 * statuses, one way to parse and one way to load the configuration.
 *
 * A program describes itself in a struct ioacct_cli: its name, its own
 * options (a getopt_long table), a function that takes one of them, and its
 * help. ioacct_cli_parse() merges the frame's options into that table, so that
 * an option added to the frame here is every program's at once: -c/--config
 * FILE, --socket PATH, -h/--help and -V/--version. ioacct_cli_config() then
 * loads the configuration with the command line over it, every override
 * through ioacct_config_set(), so that an option is checked exactly as the
 * same key in the file would be.
 *
 * Messages are one line on standard error, "PROG: what is wrong"; those of
 * bad usage end with "(see PROG --help)".
 */
#ifndef IOACCT_CLI_H
#define IOACCT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ioacct_config;

/* The exit statuses of every program (each man page says which it uses). */
enum ioacct_exit {
	EXIT_RUNTIME = 1,    /* the work failed: the store, ioacctd, a file */
	EXIT_USAGE = 2,      /* bad usage: an option, an argument, the configuration */
	EXIT_OWN = 125,      /* iorun's and iotrace's own failure, apart from their command's */
	EXIT_NOEXEC = 126,   /* their command is there but cannot be run */
	EXIT_NOTFOUND = 127, /* their command is not found */
};

/* ioacct_cli_parse(): go on with the command line parsed (any other value is an exit status). */
#define IOACCT_CLI_GO (-1)

/* What a program takes after its options. */
enum ioacct_cli_args {
	IOACCT_CLI_NO_ARGS = 0, /* nothing: an argument is bad usage */
	IOACCT_CLI_ARGS,        /* arguments, among the options too (ioreport's JOBID) */
	IOACCT_CLI_COMMAND,     /* options end at the first argument: a command and its own follow */
};

struct ioacct_cli {
	/* Set by the program. */
	const char *prog;                 /* "ioacct top": the start of every message */
	const struct option *options;     /* its own, ended by a zeroed entry; NULL: none */
	/* One of its own options (the key its table gives it); 0, or an exit status. */
	int (*option)(struct ioacct_cli *cli, int key, const char *arg);
	/* Its help, on `out`; ioacct_cli_help_common() prints the frame's part. */
	void (*usage)(FILE *out);
	enum ioacct_cli_args args;
	int usage_status;                 /* the exit status of bad usage; 0: EXIT_USAGE */
	void *ctx;                        /* the program's, for option() */

	/* Filled by ioacct_cli_parse(). */
	const char *config_file;          /* -c FILE; NULL: $IOACCT_CONF, else the default file */
	const char *socket_path;          /* --socket PATH; NULL: the configuration's socket */
	int argc;                         /* the arguments after the options */
	char **argv;
};

/*
 * The frame's options, ended by a zeroed entry: the table every program's is
 * merged with, each with its help. A program's table may not use their names
 * or keys ('c', 'h', 'V', and the keys from IOACCT_CLI_KEY_BASE up); its own
 * keys are letters, or from 256 up below IOACCT_CLI_KEY_BASE.
 */
#define IOACCT_CLI_KEY_BASE 0x10000
enum { IOACCT_CLI_KEY_SOCKET = IOACCT_CLI_KEY_BASE };
struct ioacct_cli_common {
	struct option opt;
	const char *arg;                  /* its value's name in the help ("FILE"), or NULL */
	const char *help;                 /* lines apart by '\n' */
};
extern const struct ioacct_cli_common ioacct_cli_common[];

/*
 * Parses argv: the frame's options and the program's (option() for each of
 * these), short ones from the tables' letters. --help prints the help on
 * standard output and --version "PROG VERSION"; both return 0 at once. An
 * unknown option, a missing value and, with IOACCT_CLI_NO_ARGS, an argument
 * are bad usage. Returns IOACCT_CLI_GO with cli->argc and cli->argv set, or
 * the exit status (0 after --help or --version). A table that clashes with
 * the frame's is said and is EXIT_RUNTIME.
 */
int ioacct_cli_parse(struct ioacct_cli *cli, int argc, char **argv);

/*
 * Writes "PROG: MESSAGE (see PROG --help)" and returns the program's exit
 * status of bad usage, for option() and the checks after the parse.
 */
int ioacct_cli_usage_error(const struct ioacct_cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Writes "PROG: MESSAGE" and returns the exit status of bad usage (no hint). */
int ioacct_cli_bad(const struct ioacct_cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The help of the frame's options, their text starting at column `width`. */
void ioacct_cli_help_common(FILE *out, int width);

/* A command-line option that sets a key of the configuration; value NULL: not given. */
struct ioacct_cli_set {
	const char *option;               /* "bin-width", for the message */
	const char *key;                  /* "bin_width" */
	const char *value;
};

/*
 * The configuration: defaults, then cli->config_file (or $IOACCT_CONF, or
 * the default file if there is one), then --socket and the program's own
 * `sets` (n of them) through ioacct_config_set(). On error one line, "PROG:
 * path:line: what" or "PROG: --option: what", and the exit status of bad
 * usage; else 0.
 */
int ioacct_cli_config(const struct ioacct_cli *cli, struct ioacct_config *cfg,
		      const struct ioacct_cli_set *sets, size_t n);

/*
 * A whole number from `s`, digits alone (no sign, no blank), in [min, max]:
 * 0, or -EINVAL.
 */
int ioacct_cli_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * The command of iorun and iotrace, argv[0] searched in PATH: forked and
 * held on a pipe until ioacct_cli_release(*go), so that it can be put in a
 * cgroup first. If *go is closed instead, the command runs all the same when
 * `run_unreleased` (iorun: monitoring failed, the command must run), else
 * exits EXIT_OWN without running. It cannot be run: "PROG: cannot run
 * COMMAND: why" and EXIT_NOEXEC or EXIT_NOTFOUND. 0, or -errno said.
 */
int ioacct_cli_fork_held(const struct ioacct_cli *cli, char **argv, bool run_unreleased,
			 pid_t *pid, int *go);

/* Lets the held command run, and closes `go`; 0, or -errno said. */
int ioacct_cli_release(const struct ioacct_cli *cli, int go);

#endif /* IOACCT_CLI_H */
