// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacct: lists the I/O of jobs from the store the way sacct lists their
 * accounting: the same options, formats and output, with I/O fields. One row
 * per job and per step, and per mount when a per-mount field is asked for.
 *
 * Jobs are asked of ioacctd, whose socket is all a client needs to know: the
 * store's path and permissions are the daemon's business, and with
 * private_data = yes it gives users other than root their own jobs only.
 * --db reads a store file directly instead, read-only (offline: a copied
 * store, or no daemon), which is root's with private_data.
 *
 * Exit status: 0 done, 1 the store or the daemon failed, 2 bad usage.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "query.h"
#include "job_fetch.h"
#include "query_fetch.h"
#include "purge.h"
#include "store.h"
#include "top.h"

#define CALL_TIMEOUT_MS 30000
#define NS_PER_S 1000000000LL

struct opts {
	const char *db;
	struct ioacct_qcol *cols;
	size_t ncols;
	struct ioacct_qjobsel *jobs;
	size_t njobs;
	char **users;
	size_t nusers;
	bool all_users;
	char **clusters;
	size_t nclusters;
	bool all_clusters;
	const char *start;
	const char *end;
	enum ioacct_qmode mode;
	const char *delimiter;
	bool no_header;
	bool no_steps;
	bool mounts;
	bool nodes;
	bool local;
	bool duplicates;
	bool json;
	bool help_format;
	unsigned int units;
	bool purge;
	struct ioacct_purge_opts purge_opts;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ioacct [OPTIONS]\n"
		"       ioacct top [OPTIONS]   (the running jobs, live: ioacct top --help)\n"
		"Lists the file-system I/O of jobs, like sacct lists their accounting.\n"
		"\n"
		"Selection:\n"
		"  -j, --jobs JOB[.STEP][,...]   these jobs or steps, of any user, at any time\n"
		"  -u, --user, --uid USER[,...]  these users' jobs (names or uids)\n"
		"  -a, --allusers                every user's jobs (default: your own; root: all)\n"
		"  -M, --clusters NAME[,...]     these clusters' jobs (default: all; iorun's are \"iorun\")\n"
		"  -L, --allclusters             every cluster's jobs (the default)\n"
		"  -S, --starttime TIME          jobs not ended before TIME (default: midnight,\n"
		"                                or all time with -j)\n"
		"  -E, --endtime TIME            jobs started by TIME (default: now)\n"
		"  -X, --allocations             job rows only, no steps\n"
		"      --mounts                  one row per mount (as does any per-mount field)\n"
		"      --nodes                   with a cluster store: one row per node of each\n"
		"                                job (as does the Node field); default: summed\n"
		"      --local                   with a cluster store: this node's jobs alone\n"
		"  -D, --duplicates              every run of a job id, requeued or used again\n"
		"                                (default: the last)\n"
		"Output:\n"
		"  -o, --format, --fields F[%%[-]N],...  fields and widths (N: right, -N: left);\n"
		"                                default $IOACCT_FORMAT or\n"
		"                                %s\n"
		"  -e, --helpformat              list the fields and what they mean\n"
		"  -n, --noheader                no header\n"
		"  -p, --parsable                fields followed by '|', no padding\n"
		"  -P, --parsable2               fields separated by '|', no padding\n"
		"      --delimiter STRING        the separator for -p and -P\n"
		"      --json                    one JSON object, exact numbers\n"
		"      --units K|M|G|T|P         bytes in KiB, MiB, ... (default: exact)\n"
		"Sources:\n"
		"      --db PATH                 read this store file instead of asking ioacctd\n"
		"                                (offline; root, or whoever may read the file)\n"
		"Retention (root):\n"
		"      --purge                   delete the jobs that ended before --before (default:\n"
		"                                purge_after ago) from the node's store (--db, or\n"
		"                                db in ioacct.conf), except running ones and those\n"
		"                                not yet exported to the cluster store\n"
		"      --dry-run                 with --purge: what would go, per user; no change\n"
		"      --before DURATION|TIME    with --purge: 30days, 12months, 48hours, 20s ago,\n"
		"                                or a TIME as for -S\n"
		"      --cluster-store           with --purge --dry-run: what ioacctd's purge of the\n"
		"                                cluster store (cluster_retention) would delete, per\n"
		"                                month; that purge is the daemon's, not ioacct's\n"
		"Common options:\n",
		IOACCT_QUERY_DEFAULT_FORMAT);
	ioacct_cli_help_common(out, 32);
	fprintf(out,
		"\n"
		"TIME: %s.\n"
		"Exit status: 0 done, 1 the store or ioacctd failed, 2 bad usage.\n",
		IOACCT_QUERY_TIME_FORMS);
}

static int option(struct ioacct_cli *cli, int key, const char *arg);

enum {
	OPT_DELIM = 256, OPT_JSON, OPT_UNITS, OPT_MOUNTS, OPT_DB, OPT_NODES, OPT_LOCAL,
	OPT_PURGE, OPT_DRY_RUN, OPT_BEFORE, OPT_CLUSTER_STORE,
};

static const struct option options[] = {
	{ "allusers", no_argument, NULL, 'a' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "user", required_argument, NULL, 'u' },
	{ "uid", required_argument, NULL, 'u' },
	{ "clusters", required_argument, NULL, 'M' },
	{ "cluster", required_argument, NULL, 'M' },
	{ "allclusters", no_argument, NULL, 'L' },
	{ "starttime", required_argument, NULL, 'S' },
	{ "endtime", required_argument, NULL, 'E' },
	{ "allocations", no_argument, NULL, 'X' },
	{ "mounts", no_argument, NULL, OPT_MOUNTS },
	{ "nodes", no_argument, NULL, OPT_NODES },
	{ "local", no_argument, NULL, OPT_LOCAL },
	{ "duplicates", no_argument, NULL, 'D' },
	{ "format", required_argument, NULL, 'o' },
	{ "fields", required_argument, NULL, 'o' },
	{ "helpformat", no_argument, NULL, 'e' },
	{ "noheader", no_argument, NULL, 'n' },
	{ "parsable", no_argument, NULL, 'p' },
	{ "parsable2", no_argument, NULL, 'P' },
	{ "delimiter", required_argument, NULL, OPT_DELIM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "units", required_argument, NULL, OPT_UNITS },
	{ "db", required_argument, NULL, OPT_DB },
	{ "purge", no_argument, NULL, OPT_PURGE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "before", required_argument, NULL, OPT_BEFORE },
	{ "cluster-store", no_argument, NULL, OPT_CLUSTER_STORE },
	{ NULL, 0, NULL, 0 },
};

static struct opts opts = { .mode = IOACCT_QM_TABLE };

static struct ioacct_cli cli = {
	.prog = "ioacct", .options = options, .option = option, .usage = usage, .ctx = &opts,
};

static int add_format(struct opts *o, const char *spec, const char *what)
{
	char err[2048];

	if (ioacct_query_format_parse(spec, &o->cols, &o->ncols, err, sizeof(err))) {
		fprintf(stderr, "ioacct: %s: %s\n", what, err);
		return EXIT_USAGE;
	}
	return 0;
}

/* The options that select jobs; -1 when `key` is not one of them. */
static int selection_option(struct opts *o, int key, const char *arg)
{
	char err[512];

	switch (key) {
	case 'a':
		o->all_users = true;
		return 0;
	case 'j':
		if (ioacct_query_jobs_parse(arg, &o->jobs, &o->njobs, err, sizeof(err)))
			return ioacct_cli_usage_error(&cli, "-j: %s", err);
		return 0;
	case 'u':
		/* As in sacct, the last of -a and -u wins. */
		o->all_users = false;
		return ioacct_query_list_split(arg, &o->users, &o->nusers) ? EXIT_RUNTIME : 0;
	case 'M':
		if (strcasecmp(arg, "all") == 0) {
			o->all_clusters = true;
			return 0;
		}
		return ioacct_query_list_split(arg, &o->clusters, &o->nclusters) ? EXIT_RUNTIME : 0;
	case 'L':
		o->all_clusters = true;
		return 0;
	case 'S':
		o->start = arg;
		return 0;
	case 'E':
		o->end = arg;
		return 0;
	case 'X':
		o->no_steps = true;
		return 0;
	case OPT_MOUNTS:
		o->mounts = true;
		return 0;
	case OPT_NODES:
		o->nodes = true;
		return 0;
	case OPT_LOCAL:
		o->local = true;
		return 0;
	case 'D':
		o->duplicates = true;
		return 0;
	}
	return -1;
}

/* One of ioacct's own options: 0, or the exit status. */
static int option(struct ioacct_cli *c, int key, const char *arg)
{
	struct opts *o = c->ctx;
	int ret = selection_option(o, key, arg);

	if (ret >= 0)
		return ret;
	switch (key) {
	case 'o':
		return add_format(o, arg, "-o");
	case 'e':
		o->help_format = true;
		break;
	case 'n':
		o->no_header = true;
		break;
	case 'p':
		o->mode = IOACCT_QM_PARSABLE;
		break;
	case 'P':
		o->mode = IOACCT_QM_PARSABLE2;
		break;
	case OPT_DELIM:
		o->delimiter = arg;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_UNITS:
		if (ioacct_query_units_parse(arg, &o->units))
			return ioacct_cli_usage_error(c, "--units: '%s' is not one of K, M, G, T, P",
						      arg);
		break;
	case OPT_DB:
		o->db = arg;
		break;
	case OPT_PURGE:
		o->purge = true;
		break;
	case OPT_DRY_RUN:
		o->purge_opts.dry_run = true;
		break;
	case OPT_BEFORE:
		o->purge_opts.before = arg;
		break;
	case OPT_CLUSTER_STORE:
		o->purge_opts.cluster_store = true;
		break;
	}
	return 0;
}

/* --purge and its options; 0, IOACCT_CLI_GO when not asked, or the exit status. */
static int purge(struct opts *o, const struct ioacct_config *cfg)
{
	const struct ioacct_purge_opts *p = &o->purge_opts;

	if (!o->purge) {
		if (p->dry_run || p->before || p->cluster_store)
			return ioacct_cli_usage_error(&cli, "%s is an option of --purge",
						      p->dry_run ? "--dry-run" :
						      p->before ? "--before" : "--cluster-store");
		return IOACCT_CLI_GO;
	}
	if (o->njobs || o->nusers || o->start || o->end)
		return ioacct_cli_usage_error(&cli, "--purge selects jobs by age alone (--before), not with -j, -u, -S or -E");
	o->purge_opts.db = o->db;
	return ioacct_purge_main(&o->purge_opts, cfg);
}

/* A user name or uid; 0 or the exit status. */
static int resolve_user(const char *s, uint32_t *uid)
{
	struct passwd *pw;
	char *end;
	unsigned long v;

	if (isdigit((unsigned char)*s)) {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (!errno && !*end && v <= UINT32_MAX) {
			*uid = (uint32_t)v;
			return 0;
		}
	}
	errno = 0;
	pw = getpwnam(s);
	if (!pw) {
		if (errno)
			fprintf(stderr, "ioacct: -u: cannot look up user '%s': %s\n", s, strerror(errno));
		else
			fprintf(stderr, "ioacct: -u: no user '%s'\n", s);
		return errno ? EXIT_RUNTIME : EXIT_USAGE;
	}
	*uid = pw->pw_uid;
	return 0;
}

/* What to select, and how rows are made of each job. */
struct query {
	struct ioacct_store_filter filter;
	uint64_t *job_ids;
	uint32_t *uids;
	bool peaks;
	struct ioacct_qrow_opts row_opts;
	const struct opts *o;
	struct ioacct_qprint print;
	uint32_t *steps; /* the steps -j asked of the current job */
	bool begun;      /* the header is out: not before a first answer, so a failure is one line */
};

static int parse_time_opt(const char *what, const char *s, time_t now, time_t *t)
{
	char err[1024];

	if (ioacct_query_time_parse(s, now, t, err, sizeof(err))) {
		fprintf(stderr, "ioacct: %s: %s\n", what, err);
		return EXIT_USAGE;
	}
	return 0;
}

static int build_window(const struct opts *o, time_t now, struct ioacct_store_filter *f)
{
	time_t start = 0, end = now;
	int ret;

	/* sacct: from midnight, unless jobs are named; until now. */
	if (o->start) {
		ret = parse_time_opt("-S", o->start, now, &start);
		if (ret)
			return ret;
	} else if (!o->njobs) {
		start = ioacct_query_midnight(now);
	}
	if (o->end) {
		ret = parse_time_opt("-E", o->end, now, &end);
		if (ret)
			return ret;
	}
	if (o->start || o->end || !o->njobs) {
		if (start > end) {
			fprintf(stderr, "ioacct: the start time (-S) is after the end time (-E)\n");
			return EXIT_USAGE;
		}
		f->start_ns = start > 0 ? (int64_t)start * NS_PER_S : 0;
		/* A time names a whole second. */
		f->end_ns = (int64_t)end * NS_PER_S + NS_PER_S - 1;
	}
	return 0;
}

static int build_query(const struct opts *o, time_t now, struct query *q)
{
	struct ioacct_store_filter *f = &q->filter;
	size_t n = 0;
	int ret;

	ret = build_window(o, now, f);
	if (ret)
		return ret;
	if (o->njobs) {
		q->job_ids = calloc(o->njobs, sizeof(*q->job_ids));
		if (!q->job_ids)
			return EXIT_RUNTIME;
		for (size_t i = 0; i < o->njobs; i++) {
			size_t k;

			for (k = 0; k < n && q->job_ids[k] != o->jobs[i].job_id; k++)
				;
			if (k == n)
				q->job_ids[n++] = o->jobs[i].job_id;
		}
		f->job_ids = q->job_ids;
		f->njob_ids = n;
		q->steps = calloc(o->njobs, sizeof(*q->steps));
		if (!q->steps)
			return EXIT_RUNTIME;
	}
	/* sacct: your own jobs, unless you are root or name users or jobs. */
	if (o->nusers && !o->all_users) {
		if (o->nusers > IOACCT_STORE_FILTER_MAX)
			return ioacct_cli_usage_error(&cli, "-u: more than 256 users");
		q->uids = calloc(o->nusers, sizeof(*q->uids));
		if (!q->uids)
			return EXIT_RUNTIME;
		for (size_t i = 0; i < o->nusers; i++) {
			ret = resolve_user(o->users[i], &q->uids[i]);
			if (ret)
				return ret;
		}
		f->uids = q->uids;
		f->nuids = o->nusers;
	} else if (!o->all_users && !o->njobs && getuid() != 0) {
		q->uids = calloc(1, sizeof(*q->uids));
		if (!q->uids)
			return EXIT_RUNTIME;
		q->uids[0] = getuid();
		f->uids = q->uids;
		f->nuids = 1;
	}
	if (!o->all_clusters && o->nclusters) {
		if (o->nclusters > IOACCT_STORE_FILTER_MAX)
			return ioacct_cli_usage_error(&cli, "-M: more than 256 clusters");
		f->clusters = (const char *const *)o->clusters;
		f->nclusters = o->nclusters;
	}
	for (size_t i = 0; i < o->ncols; i++) {
		unsigned int flags = ioacct_query_field(o->cols[i].field)->flags;

		q->row_opts.per_mount |= (flags & IOACCT_QF_PER_MOUNT) != 0;
		q->peaks |= (flags & IOACCT_QF_PEAK) != 0;
		f->by_node |= (flags & IOACCT_QF_PER_NODE) != 0;
	}
	q->row_opts.per_mount |= o->mounts;
	f->by_node |= o->nodes;
	f->local = o->local;
	f->duplicates = o->duplicates;
	q->row_opts.no_steps = o->no_steps;
	q->row_opts.with_peaks = q->peaks;
	q->print = (struct ioacct_qprint){
		.f = stdout,
		.mode = o->mode,
		.delimiter = o->delimiter,
		.header = !o->no_header,
		.units = o->units,
		.now_ns = (int64_t)now * NS_PER_S,
		.cols = o->cols,
		.ncols = o->ncols,
	};
	q->o = o;
	return 0;
}

/* -j JOB.STEP without JOB alone: only those steps of the job, and no job row. */
static void select_steps(struct query *q, uint64_t job_id)
{
	const struct opts *o = q->o;
	size_t n = 0;

	q->row_opts.steps = NULL;
	q->row_opts.nsteps = 0;
	for (size_t i = 0; i < o->njobs; i++) {
		if (o->jobs[i].job_id != job_id)
			continue;
		if (o->jobs[i].step_id == IOACCT_QUERY_ALL)
			return;
		q->steps[n++] = o->jobs[i].step_id;
	}
	if (n) {
		q->row_opts.steps = q->steps;
		q->row_opts.nsteps = n;
	}
}

static int print_job(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		     size_t npeaks, void *arg)
{
	struct query *q = arg;
	struct ioacct_qrow *rows;
	size_t n;
	int ret;

	if (!q->begun) {
		ioacct_query_print_begin(&q->print);
		q->begun = true;
	}
	select_steps(q, jd->job.job_id);
	ret = ioacct_query_rows(jd, peaks, npeaks, &q->row_opts, &rows, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		ioacct_query_print_row(&q->print, &rows[i]);
	free(rows);
	/* A reader gone away (head, a closed pipe): stop reading the store. */
	return ferror(stdout) ? -EPIPE : 0;
}

/* The end of the output, and its header first when no job came. */
static void print_end(struct query *q)
{
	if (!q->begun)
		ioacct_query_print_begin(&q->print);
	q->begun = true;
	ioacct_query_print_end(&q->print);
}

static int run_direct(const char *db, struct query *q)
{
	char err[PATH_MAX + 512];
	struct ioacct_store *st;
	int ret;

	st = ioacct_store_open(db, IOACCT_STORE_RDONLY, err, sizeof(err));
	if (!st) {
		if (errno == ENOENT)
			fprintf(stderr, "ioacct: %s (ioacctd creates it; see db in ioacct.conf, or --db)\n",
				err);
		else if (errno == EACCES || errno == EPERM)
			fprintf(stderr,
				"ioacct: %s: %s; with private_data = yes only root reads the store, users ask ioacctd (without --db)\n",
				err, strerror(errno));
		else
			fprintf(stderr, "ioacct: %s\n", err);
		return EXIT_RUNTIME;
	}
	err[0] = '\0';
	ret = ioacct_query_fetch_store(st, &q->filter, q->peaks, print_job, q, err, sizeof(err));
	if (ret == 0)
		print_end(q);
	else if (ret != -EPIPE)
		fprintf(stderr, "ioacct: %s: %s\n", db, err[0] ? err : strerror(-ret));
	ioacct_store_close(st);
	return ret ? EXIT_RUNTIME : 0;
}

static int run_daemon(const char *socket_path, struct query *q)
{
	char err[2048] = "", why[1024] = "";
	int ret;

	ret = ioacct_query_fetch_daemon(socket_path, &q->filter, q->peaks, CALL_TIMEOUT_MS,
					print_job, q, why, sizeof(why));
	/* The daemon not there: say so, and the way around it. */
	if (ret && strncmp(why, "cannot connect to ", 18) == 0)
		ioacct_source_unreachable(socket_path, ret, why, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", why);
	if (ret == 0)
		print_end(q);
	else if (ret != -EPIPE)
		fprintf(stderr, "ioacct: %s\n", err[0] ? err : strerror(-ret));
	return ret ? EXIT_RUNTIME : 0;
}

static void opts_free(struct opts *o)
{
	free(o->cols);
	free(o->jobs);
	ioacct_query_list_free(o->users, o->nusers);
	ioacct_query_list_free(o->clusters, o->nclusters);
}

int main(int argc, char **argv)
{
	struct opts *o = &opts;
	struct query q = { 0 };
	struct ioacct_config cfg;
	const char *env;
	int ret;

	if (argc > 1 && strcmp(argv[1], "top") == 0)
		return ioacct_top_main(argc - 1, argv + 1);
	ret = ioacct_cli_parse(&cli, argc, argv);
	if (ret != IOACCT_CLI_GO)
		goto out;
	if (o->json)
		o->mode = IOACCT_QM_JSON;
	if (o->help_format) {
		ioacct_query_fields_help(stdout);
		ret = 0;
		goto out;
	}
	ret = ioacct_cli_config(&cli, &cfg, NULL, 0);
	if (ret)
		goto out;
	ret = purge(o, &cfg);
	if (ret != IOACCT_CLI_GO)
		goto out;
	env = getenv("IOACCT_FORMAT");
	if (!o->ncols) {
		ret = add_format(o, env && *env ? env : IOACCT_QUERY_DEFAULT_FORMAT,
				 env && *env ? "IOACCT_FORMAT" : "default format");
		if (ret)
			goto out;
	}
	ret = build_query(o, time(NULL), &q);
	if (ret)
		goto out;
	/* The daemon by default; a store file only when named (offline). */
	if (o->db)
		ret = run_direct(o->db, &q);
	else
		ret = run_daemon(cfg.socket_path, &q);
	if (fflush(stdout) || ferror(stdout)) {
		if (ret == 0)
			fprintf(stderr, "ioacct: cannot write the output: %s\n", strerror(errno));
		ret = EXIT_RUNTIME;
	}
out:
	free(q.job_ids);
	free(q.uids);
	free(q.steps);
	opts_free(o);
	return ret;
}
