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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "config.h"
#include "darshan.h"
#include "job_fetch.h"
#include "log.h"
#include "render.h"
#include "store.h"
#include "text.h"

#define EXIT_USAGE 2
#define CALL_TIMEOUT_MS 30000

struct opts {
	const char *config_file;
	const char *db;
	const char *socket_path;
	const char *cluster;
	const char *output;
	const char *mount;
	const char *compare;          /* a Darshan log to compare with */
	bool local;                   /* --local: this node's part of a cluster job */
	bool darshan_filter;
	bool all_counters;            /* --compare: rows that are 0 on both sides too */
	enum ioacct_render_format format;
	uint64_t job_id;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ioreport [OPTIONS] JOBID\n"
		"Prints the I/O report of a job stored by ioacctd.\n"
		"\n"
		"  -c, --config FILE     configuration file (default %s)\n"
		"      --socket PATH     ioacctd's socket, where jobs are read (config: socket)\n"
		"      --db PATH         read this store file instead, without ioacctd (offline;\n"
		"                        root, or whoever may read the file)\n"
		"      --cluster NAME    the job's cluster (default: the newest job with this id)\n"
		"      --local           with a cluster store (cluster_db): this node's part of\n"
		"                        the job (default: the whole job, every node summed)\n"
		"  -f, --format FORMAT   %s\n"
		"                        (default text; darshan: a binary Darshan log, needs -o)\n"
		"  -m, --mount PATH      report this mount only (e.g. to diff with darshan-parser)\n"
		"      --compare LOG     compare the job with a Darshan log of it, per mount and\n"
		"                        per time bin (text)\n"
		"      --darshan-filter  leave out the mounts Darshan does not record (with\n"
		"                        --compare or --format darshan)\n"
		"      --all-counters    with --compare, also the counters that are 0 on both\n"
		"                        sides (left out by default)\n"
		"  -o, --output FILE     write the report to FILE instead of standard output\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n"
		"\n"
		"Exit status: 0; 1 when the report cannot be made; 2 for usage errors.\n",
		IOACCT_CONFIG_FILE, ioacct_render_format_names());
}

static int parse_job_id(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out == 0 ? -EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_DB = 256, OPT_SOCKET, OPT_CLUSTER, OPT_COMPARE, OPT_DARSHAN_FILTER, OPT_ALL_COUNTERS,
	       OPT_LOCAL };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, OPT_DB },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "cluster", required_argument, NULL, OPT_CLUSTER },
		{ "local", no_argument, NULL, OPT_LOCAL },
		{ "format", required_argument, NULL, 'f' },
		{ "mount", required_argument, NULL, 'm' },
		{ "compare", required_argument, NULL, OPT_COMPARE },
		{ "darshan-filter", no_argument, NULL, OPT_DARSHAN_FILTER },
		{ "all-counters", no_argument, NULL, OPT_ALL_COUNTERS },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, fmt;

	while ((c = getopt_long(argc, argv, "c:f:m:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config_file = optarg;
			break;
		case OPT_DB:
			o->db = optarg;
			break;
		case OPT_SOCKET:
			o->socket_path = optarg;
			break;
		case OPT_CLUSTER:
			o->cluster = optarg;
			break;
		case OPT_LOCAL:
			o->local = true;
			break;
		case 'f':
			fmt = ioacct_render_format_from_name(optarg);
			if (fmt < 0) {
				fprintf(stderr, "ioreport: --format: '%s' is not %s\n", optarg,
					ioacct_render_format_names());
				return -EINVAL;
			}
			o->format = (enum ioacct_render_format)fmt;
			break;
		case OPT_COMPARE:
			o->compare = optarg;
			break;
		case OPT_ALL_COUNTERS:
			o->all_counters = true;
			break;
		case OPT_DARSHAN_FILTER:
			o->darshan_filter = true;
			break;
		case 'm':
			o->mount = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("ioreport %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "ioreport: %s\n", optind >= argc ? "no job id given" : "one job id only");
		usage(stderr);
		return -EINVAL;
	}
	if (parse_job_id(argv[optind], &o->job_id)) {
		fprintf(stderr, "ioreport: '%s' is not a job id (a positive integer)\n", argv[optind]);
		return -EINVAL;
	}
	if (ioacct_render_formats[o->format].darshan && !o->output) {
		fprintf(stderr, "ioreport: --format %s writes a binary log: name it with -o FILE\n",
			ioacct_render_formats[o->format].name);
		return -EINVAL;
	}
	if (o->compare && o->format != IOACCT_RENDER_TEXT) {
		fprintf(stderr, "ioreport: --compare prints text; it takes no --format\n");
		return -EINVAL;
	}
	if (o->all_counters && !o->compare) {
		fprintf(stderr, "ioreport: --all-counters goes with --compare\n");
		return -EINVAL;
	}
	if (o->darshan_filter && !o->compare && !ioacct_render_formats[o->format].darshan) {
		fprintf(stderr, "ioreport: --darshan-filter goes with --compare or --format darshan\n");
		return -EINVAL;
	}
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

/* The report in o->format; --darshan-filter is the one option a renderer takes. */
static int render(FILE *f, const struct ioacct_jobdata *jd, const struct ioacct_config *cfg,
		  const struct opts *o)
{
	struct ioacct_report *r;
	int ret;

	if (!o->darshan_filter)
		return ioacct_render_job(f, o->format, jd, &cfg->advice, o->mount);
	r = ioacct_report_create(jd, &cfg->advice, o->mount);
	if (!r)
		return -errno;
	ret = ioacct_render_darshan_log(f, r, true);
	ioacct_report_destroy(r);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = { .format = IOACCT_RENDER_TEXT };
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_config cfg;
	char err[1024];
	FILE *f = stdout;
	int ret;

	ioacct_log_set_ident("ioreport");
	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	ioacct_config_defaults(&cfg);
	if (ioacct_config_load(&cfg, o.config_file, err, sizeof(err)) ||
	    (o.socket_path && ioacct_config_set(&cfg, "socket", o.socket_path, err, sizeof(err)))) {
		fprintf(stderr, "ioreport: %s\n", err);
		return EXIT_USAGE;
	}
	if (load_job(&cfg, &o, &jd))
		return EXIT_FAILURE;
	if (o.mount && !mount_known(jd, o.mount)) {
		ioacct_jobdata_free(jd);
		return EXIT_FAILURE;
	}
	if (o.compare) {
		ret = compare_darshan(jd, &cfg, &o);
		ioacct_jobdata_free(jd);
		return ret ? EXIT_FAILURE : 0;
	}
	if (o.output) {
		f = fopen(o.output, "we");
		if (!f) {
			fprintf(stderr, "ioreport: cannot write %s: %s\n", o.output, strerror(errno));
			ioacct_jobdata_free(jd);
			return EXIT_FAILURE;
		}
	}
	ret = render(f, jd, &cfg, &o);
	if (f != stdout && fclose(f) && !ret)
		ret = -errno;
	if (ret)
		fprintf(stderr, "ioreport: cannot write the report%s%s: %s\n", o.output ? " to " : "",
			o.output ? o.output : "", strerror(-ret));
	ioacct_jobdata_free(jd);
	return ret ? EXIT_FAILURE : 0;
}
