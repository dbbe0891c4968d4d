// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioreport: the report of one stored job, as text (darshan-parser's style),
 * JSON, one self-contained HTML page or a Darshan log (render.h lists the
 * formats). Asks ioacctd for the job (its socket, so that the store's path
 * and permissions are the daemon's business), or with --db reads a store
 * file directly; the same renderers serve iorun and the Slurm plugin. With
 * --compare it sets the job beside a Darshan log of it (reports/compare.c).
 *
 * Exit status: 0, 1 when the report cannot be made (no such job, daemon
 * unreachable, store unreadable, a Darshan log that cannot be read, write error), 2 for usage
 * errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "compare.h"
#include "config.h"
#include "darshan.h"
#include "job_fetch.h"
#include "log.h"
#include "render.h"
#include "store.h"
#include "text.h"

#define CALL_TIMEOUT_MS 30000

struct opts {
	const char *db;
	const char *cluster;
	const char *output;
	const char *mount;
	const char *compare;          /* a Darshan log to compare with */
	bool local;                   /* --local: this node's part of a cluster job */
	bool darshan_filter;
	bool all_counters;            /* --compare: rows that are 0 on both sides too */
	bool files;                   /* --files: every per-file record */
	const char *format_name;      /* -f: NULL for text */
	enum ioacct_render_format format;
	uint64_t job_id;
	const char *run_arg;          /* --run N: Slurm's restart count of the run */
	uint32_t run;                 /* N + 1; 0: the job's last run */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ioreport [OPTIONS] JOBID\n"
		"Prints the I/O report of a job stored by ioacctd.\n"
		"\n"
		"      --db PATH         read this store file instead of asking ioacctd (offline;\n"
		"                        root, or whoever may read the file)\n"
		"      --cluster NAME    the job's cluster (default: the newest job with this id)\n"
		"      --local           with a cluster store (cluster_db): this node's part of\n"
		"                        the job (default: the whole job, every node summed)\n"
		"      --run N           the job id's run N, oldest first as ioacct -D lists\n"
		"                        them (0: the first; a requeued job's N requeues;\n"
		"                        default: the last run)\n"
		"  -f, --format FORMAT   %s\n"
		"                        (default text; darshan: a binary Darshan log, needs -o)\n"
		"  -m, --mount PATH      report this mount only (e.g. to diff with darshan-parser)\n"
		"      --files           list every per-file record (one per step, rank, mount\n"
		"                        and file), tab-separated; with -f json the report's\n"
		"                        \"files\"\n"
		"      --compare LOG     compare the job with a Darshan log of it, per mount,\n"
		"                        per file and per time bin (text)\n"
		"      --darshan-filter  leave out the mounts Darshan does not record (with\n"
		"                        --compare or --format darshan)\n"
		"      --all-counters    with --compare, also the counters that are 0 on both\n"
		"                        sides (left out by default)\n"
		"  -o, --output FILE     write the report to FILE instead of standard output\n"
		"Common options:\n",
		ioacct_render_format_names());
	ioacct_cli_help_common(out, 24);
	fprintf(out, "\nExit status: 0; 1 when the report cannot be made; 2 for usage errors.\n");
}

enum {
	OPT_DB = 256, OPT_CLUSTER, OPT_COMPARE, OPT_DARSHAN_FILTER, OPT_ALL_COUNTERS, OPT_LOCAL,
	OPT_RUN, OPT_FILES
};

static const struct option options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "local", no_argument, NULL, OPT_LOCAL },
	{ "run", required_argument, NULL, OPT_RUN },
	{ "format", required_argument, NULL, 'f' },
	{ "mount", required_argument, NULL, 'm' },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "darshan-filter", no_argument, NULL, OPT_DARSHAN_FILTER },
	{ "all-counters", no_argument, NULL, OPT_ALL_COUNTERS },
	{ "files", no_argument, NULL, OPT_FILES },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

/* One of ioreport's own options: 0, or the exit status. */
static int option(struct ioacct_cli *cli, int key, const char *arg)
{
	struct opts *o = cli->ctx;

	switch (key) {
	case OPT_DB:
		o->db = arg;
		break;
	case OPT_CLUSTER:
		o->cluster = arg;
		break;
	case OPT_LOCAL:
		o->local = true;
		break;
	case OPT_RUN:
		o->run_arg = arg;
		break;
	case 'f':
		o->format_name = arg;
		break;
	case OPT_COMPARE:
		o->compare = arg;
		break;
	case OPT_ALL_COUNTERS:
		o->all_counters = true;
		break;
	case OPT_FILES:
		o->files = true;
		break;
	case OPT_DARSHAN_FILTER:
		o->darshan_filter = true;
		break;
	case 'm':
		o->mount = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	}
	return 0;
}

/* The job id and the options that go together: 0, or the exit status. */
static int check_args(const struct ioacct_cli *cli, struct opts *o)
{
	char err[256];
	int fmt = ioacct_render_format_arg(o->format_name, o->output, err, sizeof(err));

	if (fmt < 0)
		return ioacct_cli_bad(cli, "%s", err);
	o->format = (enum ioacct_render_format)fmt;
	if (cli->argc != 1)
		return ioacct_cli_usage_error(cli, "%s",
					      cli->argc ? "one job id only" : "no job id given");
	if (ioacct_cli_uint(cli->argv[0], 1, UINT64_MAX, &o->job_id))
		return ioacct_cli_bad(cli, "'%s' is not a job id (a positive integer)",
				      cli->argv[0]);
	if (o->run_arg) {
		uint64_t n;

		if (ioacct_cli_uint(o->run_arg, 0, UINT32_MAX - 1, &n))
			return ioacct_cli_bad(cli, "--run: '%s' is not a run (0 for the first, N after N others)",
					      o->run_arg);
		o->run = (uint32_t)n + 1;
	}
	if (o->compare && o->format != IOACCT_RENDER_TEXT)
		return ioacct_cli_bad(cli, "--compare prints text; it takes no --format");
	if (o->files && (o->compare || (o->format != IOACCT_RENDER_TEXT &&
					o->format != IOACCT_RENDER_JSON)))
		return ioacct_cli_bad(cli, "--files lists the records as text or JSON, %s",
				      o->compare ? "not beside --compare" : "not in this --format");
	if (o->all_counters && !o->compare)
		return ioacct_cli_bad(cli, "--all-counters goes with --compare");
	if (o->darshan_filter && !o->compare && !ioacct_render_formats[fmt].darshan)
		return ioacct_cli_bad(cli, "--darshan-filter goes with --compare or --format darshan");
	return 0;
}

/* Loads the job, or says why not: from ioacctd, or with --db from that file. */
static int load_job(const struct ioacct_config *cfg, const struct opts *o,
		    struct ioacct_jobdata **jd)
{
	struct ioacct_source src = {
		.socket_path = cfg->socket_path,
		.db_path = o->db,
		.timeout_ms = CALL_TIMEOUT_MS,
		.local = o->local,
		.run = o->run,
	};
	char err[PATH_MAX + 1024];
	int ret;

	ret = ioacct_source_load_job(&src, o->cluster, o->job_id, 0, jd, err, sizeof(err));
	if (ret)
		fprintf(stderr, "ioreport: %s\n", err);
	return ret;
}

/* With --mount, a path the job did no I/O on is an error that names the ones it did. */
static bool mount_known(const struct ioacct_jobdata *jd, const char *mount)
{
	struct ioacct_report *all = ioacct_report_create(jd, NULL, NULL);
	bool found = false;

	if (!all)
		return true; /* out of memory: let the real attempt report it */
	for (size_t i = 0; i < all->nmounts; i++)
		found |= strcmp(all->mounts[i].path, mount) == 0;
	if (!found) {
		fprintf(stderr, "ioreport: job %llu did no I/O on %s; it did on:",
			(unsigned long long)jd->job.job_id, mount);
		for (size_t i = 0; i < all->nmounts; i++) {
			fputc(' ', stderr);
			ioacct_text_put(stderr, all->mounts[i].path);
		}
		fprintf(stderr, "%s\n", all->nmounts ? "" : " (no mount)");
	}
	ioacct_report_destroy(all);
	return found;
}

/* --compare: the job beside a Darshan log, on standard output or o->output. 0 or -1. */
static int compare_darshan(const struct ioacct_jobdata *jd, const struct ioacct_config *cfg,
			   const struct opts *o)
{
	char err[PATH_MAX + 512];
	struct ioacct_darshan_log *log = ioacct_darshan_read(o->compare, err, sizeof(err));
	struct ioacct_report *r = NULL;
	struct ioacct_compare *c = NULL;
	FILE *f = stdout;
	int ret = -1;

	if (!log) {
		fprintf(stderr, "ioreport: %s\n", err);
		return -1;
	}
	r = ioacct_report_create(jd, &cfg->advice, o->mount);
	c = r ? ioacct_compare_create(r, log, o->darshan_filter, o->mount) : NULL;
	if (!c) {
		fprintf(stderr, "ioreport: cannot compare with %s: %s\n", o->compare, strerror(errno));
		goto out;
	}
	c->all_counters = o->all_counters;
	if (o->output && !(f = fopen(o->output, "we"))) {
		fprintf(stderr, "ioreport: cannot write %s: %s\n", o->output, strerror(errno));
		goto out;
	}
	ret = ioacct_compare_render_text(f, c, o->compare);
	if (f != stdout && fclose(f) && !ret)
		ret = -errno;
	if (ret) {
		fprintf(stderr, "ioreport: cannot write the comparison%s%s: %s\n",
			o->output ? " to " : "", o->output ? o->output : "", strerror(-ret));
		ret = -1;
	}
out:
	ioacct_compare_destroy(c);
	ioacct_report_destroy(r);
	ioacct_darshan_free(log);
	return ret;
}

/*
 * The report in o->format, or with --files its per-file records;
 * --darshan-filter is the one option a renderer takes.
 */
static int render(FILE *f, const struct ioacct_jobdata *jd, const struct ioacct_config *cfg,
		  const struct opts *o)
{
	struct ioacct_report *r;
	int ret;

	if (!o->darshan_filter && !o->files)
		return ioacct_render_job(f, o->format, jd, &cfg->advice, o->mount);
	r = ioacct_report_create(jd, &cfg->advice, o->mount);
	if (!r)
		return -errno;
	if (!o->files)
		ret = ioacct_render_darshan_log(f, r, true);
	else if (o->format == IOACCT_RENDER_JSON)
		ret = ioacct_render_files_json(f, r);
	else
		ret = ioacct_render_files_text(f, r);
	ioacct_report_destroy(r);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = { .format = IOACCT_RENDER_TEXT };
	struct ioacct_cli cli = {
		.prog = "ioreport", .options = options, .option = option, .usage = usage,
		.args = IOACCT_CLI_ARGS, .ctx = &o,
	};
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_config cfg;
	FILE *f = stdout;
	int ret;

	ioacct_log_set_ident("ioreport");
	ret = ioacct_cli_parse(&cli, argc, argv);
	if (ret != IOACCT_CLI_GO)
		return ret;
	ret = check_args(&cli, &o);
	if (!ret)
		ret = ioacct_cli_config(&cli, &cfg, NULL, 0);
	if (ret)
		return ret;
	if (load_job(&cfg, &o, &jd))
		return EXIT_RUNTIME;
	if (o.mount && !mount_known(jd, o.mount)) {
		ioacct_jobdata_free(jd);
		return EXIT_RUNTIME;
	}
	if (o.files && !jd->files_loaded) {
		fprintf(stderr, "ioreport: job %llu: no per-file records here (a job of several "
				"nodes from the cluster store, an ioacctd older than them, or a store "
				"before schema 8); a node's part: --local or --db\n",
			(unsigned long long)jd->job.job_id);
		ioacct_jobdata_free(jd);
		return EXIT_RUNTIME;
	}
	if (o.compare) {
		ret = compare_darshan(jd, &cfg, &o);
		ioacct_jobdata_free(jd);
		return ret ? EXIT_RUNTIME : 0;
	}
	if (o.output) {
		f = fopen(o.output, "we");
		if (!f) {
			fprintf(stderr, "ioreport: cannot write %s: %s\n", o.output, strerror(errno));
			ioacct_jobdata_free(jd);
			return EXIT_RUNTIME;
		}
	}
	ret = render(f, jd, &cfg, &o);
	if (f != stdout && fclose(f) && !ret)
		ret = -errno;
	if (ret)
		fprintf(stderr, "ioreport: cannot write the report%s%s: %s\n", o.output ? " to " : "",
			o.output ? o.output : "", strerror(-ret));
	ioacct_jobdata_free(jd);
	return ret ? EXIT_RUNTIME : 0;
}
