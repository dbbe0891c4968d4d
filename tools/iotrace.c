// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iotrace: prints the I/O calls of a command (or of a running process) one
 * line per completed call, with filters and assertions for regression tests
 * (iotrace(1)). Its own BPF object (bpf/iotrace.bpf.c), attached only while
 * it runs and only for the traced cgroup: the rest of the node pays a few
 * loads per syscall, and nothing once iotrace exits.
 *
 * `-- COMMAND`: the command is forked, held on a pipe until it is in a fresh
 * cgroup2 cgroup and the programs are attached, then released, so its first
 * call is traced; the trace ends when it exits. `--pid PID`: the programs
 * trace PID's cgroup, and only PID's events are kept (in user space, by
 * thread group id), until PID exits or iotrace is interrupted. `--job ID`:
 * the local ioacctd says which cgroups the job's running steps are watched
 * through (its snapshot reply); the programs trace the step's cgroup2 cgroup,
 * or its v1 one (a Slurm cgroup/v1 job), until it is empty or gone.
 * `--rpc`: the RPCs those tasks submit too (NFS), one line each.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "otlp.h"
#include "procfs.h"
#include "proto.h"
#include "tracefmt.h"
#include "tracer.h"
#include "util.h"

#define MAX_ASSERTS 64

struct opts {
	const char *format;
	bool format_given;          /* -p FORMAT: RPCs' lines too; else theirs is their own */
	unsigned int rpc;           /* --rpc, --rpc=only: IOACCT_TRACER_RPC[_ONLY] */
	bool json;
	bool lines_asked;           /* -p or --json given */
	const char *perfetto;       /* --perfetto FILE ("-": standard output) */
	const char *otlp;           /* --otlp URL */
	const char *otlp_ca;        /* --otlp-ca FILE (NULL: the configuration's otlp_ca_file) */
	unsigned long otlp_queue;
	int otlp_timeout_ms;
	struct ioacct_trace_filter filter;
	struct ioacct_trace_assert asserts[MAX_ASSERTS];
	size_t nasserts;
	pid_t pid;
	uint64_t job;
	uint32_t step;
	bool has_step;
	const char *cluster;
	unsigned long buffer_size;
	char **argv;
};

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
	else
		stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: iotrace [OPTIONS] -- COMMAND [ARGS...]\n"
		"       iotrace [OPTIONS] --pid PID\n"
		"       iotrace [OPTIONS] --job ID [--step S] [-M CLUSTER]\n"
		"Prints every I/O call of COMMAND (or of process PID, or of a running job's step),\n"
		"one line per completed call.\n"
		"\n"
		"  -p, --format FORMAT    line format (default \"%s\"):\n"
		"                         %%c op, %%p pid, %%t tid, %%n comm, %%m mount, %%f path,\n"
		"                         %%o offset, %%s size, %%r result or errno, %%T start (s.us),\n"
		"                         %%D duration (us), %%e end, %%%%; width and - as in printf\n"
		"                         (%%-8c); RPCs: %%c procedure, %%r status, %%x xid, %%i file id,\n"
		"                         %%b bytes sent, %%B received, %%C call, %%Q queue, %%a rtt (us)\n"
		"      --json             one JSON object per line instead\n"
		"      --rpc[=only]       the RPCs (NFS) the traced tasks submit too, one line each,\n"
		"                         when mountstats counts them (only: without the calls)\n"
		"      --perfetto FILE    a Chrome trace-event JSON document (ui.perfetto.dev)\n"
		"                         in FILE (- or -p perfetto: standard output)\n"
		"      --otlp URL         OpenTelemetry spans (OTLP/HTTP protobuf) to\n"
		"                         http[s]://HOST[:PORT][/PATH] (no path: /v1/traces;\n"
		"                         the proxy of http_proxy, https_proxy, no_proxy)\n"
		"      --otlp-ca FILE     PEM CA certificates an https:// collector's must chain\n"
		"                         to (default: ioacct.conf's otlp_ca_file, else the system's)\n"
		"      --otlp-queue N     bytes of spans waiting for the collector (default 4M);\n"
		"                         more are dropped and counted\n"
		"      --otlp-timeout S   seconds a POST may take, and the wait at the end\n"
		"                         (default 5); with --perfetto or --otlp, lines only\n"
		"                         if -p or --json is given\n"
		"      --filter EXPR      print only matching calls: FIELD OP VALUE[|VALUE...][,...]\n"
		"                         fields op pid tid comm mount path size offset errno result dur,\n"
		"                         RPCs' rpc call sent recv status fileid (rpc=GETATTR),\n"
		"                         OP = != < <= > >= ~ !~ (e.g. op=write,size>=1M,path~*.h5)\n"
		"      --assert EXPR      count(FILTER) CMP N or bytes(FILTER) CMP N over every call;\n"
		"                         exit 1 if one does not hold (e.g. 'count(op=open)<=100')\n"
		"      --pid PID          trace process PID (its cgroup's calls, kept if PID's) until it exits\n"
		"      --job ID           trace the running job ID's step on this node (its cgroup2 or v1 cgroup,\n"
		"                         as the local ioacctd watches it) until the step ends\n"
		"      --step S           with --job: that step (needed when several are running)\n"
		"  -M, --cluster NAME     with --job: the job's cluster (default: the daemon's; iorun\n"
		"                         jobs are cluster iorun)\n"
		"      --buffer-size N    ring buffer bytes, a power of 2 >= 4096 (default 4M; K, M allowed)\n"
		"Common options (the configuration's cgroup_parent; with --job, the socket):\n",
		IOACCT_TRACE_DEFAULT_FORMAT);
	ioacct_cli_help_common(out, 25);
	fprintf(out,
		"\n"
		"Exit status: 0, or 1 when an assertion fails; when COMMAND fails, its exit status\n"
		"(128 + signal if killed); 2 on bad usage, 125 when iotrace cannot trace.\n");
}

enum {
	OPT_JSON = 256, OPT_FILTER, OPT_ASSERT, OPT_PID, OPT_BUFSZ, OPT_JOB, OPT_STEP, OPT_PERFETTO,
	OPT_OTLP, OPT_OTLP_QUEUE, OPT_OTLP_TIMEOUT, OPT_OTLP_CA, OPT_RPC,
};

static const struct option options[] = {
	{ "format", required_argument, NULL, 'p' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "assert", required_argument, NULL, OPT_ASSERT },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "job", required_argument, NULL, OPT_JOB },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "cluster", required_argument, NULL, 'M' },
	{ "buffer-size", required_argument, NULL, OPT_BUFSZ },
	{ "perfetto", required_argument, NULL, OPT_PERFETTO },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "otlp-queue", required_argument, NULL, OPT_OTLP_QUEUE },
	{ "otlp-timeout", required_argument, NULL, OPT_OTLP_TIMEOUT },
	{ "otlp-ca", required_argument, NULL, OPT_OTLP_CA },
	{ "rpc", optional_argument, NULL, OPT_RPC },
	{ NULL, 0, NULL, 0 },
};

/* The options that say what to trace; -1 when `key` is not one of them. */
static int target_option(const struct ioacct_cli *cli, struct opts *o, int key, const char *arg)
{
	uint64_t v;

	switch (key) {
	case OPT_PID:
		if (ioacct_cli_uint(arg, 1, INT_MAX, &v))
			return ioacct_cli_bad(cli, "--pid: '%s' is not a process id", arg);
		o->pid = (pid_t)v;
		return 0;
	case OPT_JOB:
		if (ioacct_cli_uint(arg, 1, UINT64_MAX, &o->job))
			return ioacct_cli_bad(cli, "--job: '%s' is not a job id", arg);
		return 0;
	case OPT_STEP:
		if (ioacct_cli_uint(arg, 0, UINT32_MAX, &v))
			return ioacct_cli_bad(cli, "--step: '%s' is not a step id", arg);
		o->step = (uint32_t)v;
		o->has_step = true;
		return 0;
	case 'M':
		if (strlen(arg) >= IOACCT_SHORT_MAX)
			return ioacct_cli_bad(cli, "-M: cluster name '%s' is too long", arg);
		o->cluster = arg;
		return 0;
	}
	return -1;
}

static int buffer_size_option(const struct ioacct_cli *cli, struct opts *o, const char *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t size = 0;

	if (ioacct_parse_size(arg, &size) || size < (uint64_t)page || (size & (size - 1)) ||
	    size > (1UL << 30))
		return ioacct_cli_bad(cli, "--buffer-size: '%s' is not a power of 2 between %ld "
				      "and 1G bytes", arg, page);
	o->buffer_size = (unsigned long)size;
	return 0;
}

/* --perfetto, --otlp and theirs; -1 when `key` is not one of them. */
static int output_option(const struct ioacct_cli *cli, struct opts *o, int key, const char *arg)
{
	struct ioacct_url u;
	char err[1024];
	uint64_t v;

	switch (key) {
	case OPT_PERFETTO:
		if (!arg[0])
			return ioacct_cli_bad(cli, "--perfetto: give a file name (- for standard "
					      "output)");
		o->perfetto = arg;
		return 0;
	case OPT_OTLP:
		if (ioacct_url_parse(arg, "/v1/traces", &u, err, sizeof(err)))
			return ioacct_cli_bad(cli, "--otlp: '%s': %s", arg, err);
		o->otlp = arg;
		return 0;
	case OPT_OTLP_CA:
		if (access(arg, R_OK))
			return ioacct_cli_bad(cli, "--otlp-ca: %s: %s", arg, strerror(errno));
		o->otlp_ca = arg;
		return 0;
	case OPT_OTLP_QUEUE:
		if (ioacct_parse_size(arg, &v) || v < 4096 || v > (1ULL << 30))
			return ioacct_cli_bad(cli, "--otlp-queue: '%s' is not a size between 4K "
					      "and 1G", arg);
		o->otlp_queue = (unsigned long)v;
		return 0;
	case OPT_OTLP_TIMEOUT:
		if (ioacct_cli_uint(arg, 1, 3600, &v))
			return ioacct_cli_bad(cli, "--otlp-timeout: '%s' is not a number of "
					      "seconds (1 to 3600)", arg);
		o->otlp_timeout_ms = (int)v * 1000;
		return 0;
	}
	return -1;
}

/* One of iotrace's own options: 0, or the exit status. */
static int option(struct ioacct_cli *cli, int key, const char *arg)
{
	struct opts *o = cli->ctx;
	char err[1024];
	int ret = target_option(cli, o, key, arg);

	if (ret < 0)
		ret = output_option(cli, o, key, arg);
	if (ret >= 0)
		return ret;
	switch (key) {
	case 'p':
		if (!strcmp(arg, "perfetto")) {
			o->perfetto = "-";
			break;
		}
		if (ioacct_trace_format_check(arg, err, sizeof(err)))
			return ioacct_cli_bad(cli, "-p: %s", err);
		o->format = arg;
		o->format_given = true;
		o->lines_asked = true;
		break;
	case OPT_RPC:
		if (arg && strcmp(arg, "only"))
			return ioacct_cli_bad(cli, "--rpc: '%s': give --rpc or --rpc=only", arg);
		o->rpc = IOACCT_TRACER_RPC | (arg ? IOACCT_TRACER_RPC_ONLY : 0);
		break;
	case OPT_JSON:
		o->json = true;
		o->lines_asked = true;
		break;
	case OPT_FILTER:
		if (ioacct_trace_filter_parse(arg, &o->filter, err, sizeof(err)))
			return ioacct_cli_bad(cli, "--filter: %s", err);
		break;
	case OPT_ASSERT:
		if (o->nasserts == MAX_ASSERTS)
			return ioacct_cli_bad(cli, "--assert: at most %d assertions", MAX_ASSERTS);
		if (ioacct_trace_assert_parse(arg, &o->asserts[o->nasserts], err, sizeof(err)))
			return ioacct_cli_bad(cli, "--assert: %s", err);
		o->nasserts++;
		break;
	case OPT_BUFSZ:
		return buffer_size_option(cli, o, arg);
	}
	return 0;
}

static struct opts opts = {
	.format = IOACCT_TRACE_DEFAULT_FORMAT,
	.buffer_size = IOACCT_TRACER_BUFFER_DEFAULT,
	.otlp_queue = IOACCT_OTLP_QUEUE_DEFAULT,
	.otlp_timeout_ms = IOACCT_OTLP_TIMEOUT_MS,
};

/* IOACCT_CLI_COMMAND: options stop at the command, so its own options are left alone. */
static struct ioacct_cli cli = {
	.prog = "iotrace", .options = options, .option = option, .usage = usage,
	.args = IOACCT_CLI_COMMAND, .ctx = &opts,
};

/* What to trace: one of a command, --pid and --job. IOACCT_CLI_GO, or the exit status. */
static int parse_args(int argc, char **argv, struct opts *o, struct ioacct_config *cfg)
{
	int ret = ioacct_cli_parse(&cli, argc, argv);

	if (ret != IOACCT_CLI_GO)
		return ret;
	o->argv = cli.argv;
	if ((o->pid != 0) + (o->job != 0) + (o->argv[0] != NULL) != 1)
		return ioacct_cli_bad(&cli, "give one of -- COMMAND [ARGS...], --pid PID or --job ID "
				      "(see --help)");
	if ((o->has_step || o->cluster) && !o->job)
		return ioacct_cli_bad(&cli, "--step and -M go with --job");
	if (o->perfetto && !strcmp(o->perfetto, "-") && o->lines_asked)
		return ioacct_cli_bad(&cli, "--perfetto - (or -p perfetto) and lines (-p FORMAT, "
				      "--json) would share standard output: give --perfetto "
				      "a file");
	ret = ioacct_cli_config(&cli, cfg, NULL, 0);
	return ret ? ret : IOACCT_CLI_GO;
}

/* ---- what iotrace does with each call: assertions, then the line ------------------- */

struct tracer {
	struct opts *o;
	uint64_t events;
	int out_err;
	bool lines;                 /* lines on standard output */
	FILE *pout;                 /* --perfetto's */
	struct ioacct_perfetto pf;
	struct ioacct_otlp *otlp;
	struct ioacct_otlp_ids ids;
};

static void on_event(void *ctx, const struct ioacct_trace_rec *r)
{
	struct tracer *t = ctx;

	/* --pid: the BPF side traces PID's cgroup; only PID's calls are kept. */
	if (t->o->pid && r->pid != (uint32_t)t->o->pid)
		return;
	t->events++;
	for (size_t i = 0; i < t->o->nasserts; i++)
		ioacct_trace_assert_add(&t->o->asserts[i], r);
	if (!ioacct_trace_filter_match(&t->o->filter, r))
		return;
	if (t->otlp)
		ioacct_otlp_add(t->otlp, r);
	if (t->pout && t->pout != stdout)
		ioacct_perfetto_event(t->pout, &t->pf, r);
	if (!t->out_err && (t->lines || t->pout == stdout)) {
		if (t->pout == stdout)
			ioacct_perfetto_event(stdout, &t->pf, r);
		else if (t->o->json)
			ioacct_trace_json_print(stdout, r);
		else
			ioacct_trace_format_print(stdout, r->rpc && !t->o->format_given ?
						  IOACCT_TRACE_DEFAULT_RPC_FORMAT : t->o->format, r);
		/* A reader gone (| head): keep tracing for the assertions, the command keeps running. */
		if (ferror(stdout)) {
			t->out_err = errno ? errno : EIO;
			fprintf(stderr, "iotrace: standard output: %s; still tracing, printing no more\n",
				strerror(t->out_err));
		}
	}
}

/* ---- --perfetto and --otlp ---------------------------------------------------------- */

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The document's head, the exporter's thread; 0, or -errno (said on stderr). */
static int outputs_open(struct tracer *t, const struct ioacct_config *cfg, uint64_t real0)
{
	const struct opts *o = t->o;
	char err[1024];
	int ret;

	t->lines = o->lines_asked || (!o->perfetto && !o->otlp);
	if (o->perfetto) {
		t->pout = strcmp(o->perfetto, "-") ? fopen(o->perfetto, "we") : stdout;
		if (!t->pout) {
			ret = -errno;
			fprintf(stderr, "iotrace: --perfetto %s: %s\n", o->perfetto,
				strerror(errno));
			return ret;
		}
		ioacct_perfetto_begin(t->pout);
	}
	if (!o->otlp)
		return 0;
	/* One trace per run: 16 random bytes; span ids from a random 64-bit start. */
	if (getrandom(t->ids.trace_id, sizeof(t->ids.trace_id), 0) != sizeof(t->ids.trace_id) ||
	    getrandom(&t->ids.span_seed, sizeof(t->ids.span_seed), 0) !=
	    sizeof(t->ids.span_seed)) {
		ret = -errno;
		fprintf(stderr, "iotrace: --otlp: no random bytes for the trace id: %s\n",
			strerror(errno));
		return ret;
	}
	/* Span n is span_seed + n for n >= 1; the root is span_seed, and none is 0. */
	t->ids.span_seed |= 1ULL << 63;
	t->ids.span_seed &= ~0xffffffffULL;
	t->ids.root_id = t->ids.span_seed;
	t->ids.real0_ns = real0;
	t->ids.job = o->job;
	ret = ioacct_otlp_open(&t->otlp, o->otlp, o->otlp_ca ? o->otlp_ca : cfg->otlp_ca_file,
			       &t->ids, cfg->node, o->otlp_queue, o->otlp_timeout_ms, err,
			       sizeof(err));
	if (ret)
		fprintf(stderr, "iotrace: --otlp: %s\n", err);
	return ret;
}

/* The root span's name: the command line, or "pid PID", or "job ID". */
static void root_name(const struct opts *o, char *buf, size_t len)
{
	size_t n = 0;

	if (o->pid) {
		snprintf(buf, len, "pid %d", (int)o->pid);
		return;
	}
	if (o->job) {
		snprintf(buf, len, "job %llu", (unsigned long long)o->job);
		return;
	}
	buf[0] = '\0';
	for (char **a = o->argv; *a && n + 1 < len; a++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", *a);
}

/* Ends the document and the export (the latter waits at most --otlp-timeout). */
static void outputs_close(struct tracer *t)
{
	char msg[1024], name[256];

	if (t->pout) {
		ioacct_perfetto_end(t->pout, &t->pf);
		if (t->pout != stdout && (ferror(t->pout) | fclose(t->pout)))
			fprintf(stderr, "iotrace: --perfetto %s: %s; the document is not whole\n",
				t->o->perfetto, strerror(errno ? errno : EIO));
		t->pout = NULL;
	}
	if (t->otlp) {
		root_name(t->o, name, sizeof(name));
		ioacct_otlp_close(t->otlp, name, 0, msg, sizeof(msg));
		t->otlp = NULL;
		fprintf(stderr, "iotrace: %s\n", msg);
	}
}

/* ---- cgroups ------------------------------------------------------------------------ */

/* A fresh cgroup2 cgroup for the command, like iorun's (cgroup_parent from the configuration). */
static int make_cgroup(struct ioacct_config *cfg, char *dir, size_t len,
		       struct ioacct_tracer_target *tg)
{
	char err[1024];
	int ret;

	/* A cgroup2 cgroup: the command's own, whatever the daemon uses. */
	cfg->cgroup_mode = IOACCT_CGROUP_V2;
	ret = ioacct_cgroup_make(cfg, "iotrace", dir, len, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iotrace: %s (iotrace needs root and cgroup2)\n", err);
		return ret;
	}
	ret = ioacct_tracer_target(dir, NULL, tg, err, sizeof(err));
	if (ret)
		fprintf(stderr, "iotrace: %s\n", err);
	return ret;
}

static int pid_cgroup(pid_t pid, struct ioacct_tracer_target *tg)
{
	char mnt[PATH_MAX], rel[PATH_MAX], dir[2 * PATH_MAX], err[1024];
	int ret;

	ret = ioacct_cgroup_mountpoint(IOACCT_HIER_V2, NULL, mnt, sizeof(mnt));
	if (ret) {
		fprintf(stderr, "iotrace: --pid needs cgroup2, and none is mounted\n");
		return ret;
	}
	ret = ioacct_cgroup_of_pid(pid, IOACCT_HIER_V2, NULL, rel, sizeof(rel));
	if (ret) {
		fprintf(stderr, "iotrace: --pid %d: cannot read its cgroup2 cgroup: %s\n", (int)pid,
			strerror(-ret));
		return ret;
	}
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	ret = ioacct_tracer_target(dir, NULL, tg, err, sizeof(err));
	if (ret)
		fprintf(stderr, "iotrace: --pid %d: %s\n", (int)pid, err);
	return ret;
}

/*
 * --job: asks the local ioacctd (its snapshot reply lists the cgroups the
 * job's running steps are watched through) for the step's cgroup: its
 * cgroup2 one, else its cgroup of the v1 hierarchy ioacctd attributes by
 * (cgroup_v1_hierarchy, as a Slurm cgroup/v1 job is watched).
 */
static int job_cgroup(const struct opts *o, const struct ioacct_config *cfg, char *dir, size_t len,
		      struct ioacct_tracer_target *tg)
{
	struct ioacct_request req = { .type = IOACCT_MSG_SNAPSHOT };
	struct ioacct_reply rep = { 0 };
	const struct ioacct_watch_row *pick = NULL;
	char err[1024], step[32] = "";
	unsigned long long job = (unsigned long long)o->job;
	enum ioacct_hier hier = IOACCT_HIER_V1;
	size_t n = 0;
	int ret;

	if (o->has_step)
		snprintf(step, sizeof(step), " %u", o->step);
	req.u.query.job_id = o->job;
	if (o->cluster)
		ioacct_strlcpy(req.u.query.cluster, o->cluster, sizeof(req.u.query.cluster));
	ret = ioacct_client_call(cfg->socket_path, &req, &rep, 10000, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iotrace: --job %llu: %s (is ioacctd running on this node?)\n", job, err);
		goto out;
	}
	if (rep.status) {
		ret = rep.status;
		fprintf(stderr, "iotrace: --job %llu: %s\n", job, rep.error);
		goto out;
	}
	/* cgroup2 if the step has one, else v1. */
	for (size_t i = 0; i < rep.nwatches; i++)
		if ((!o->has_step || rep.watches[i].step_id == o->step) &&
		    rep.watches[i].hier == IOACCT_HIER_V2)
			hier = IOACCT_HIER_V2;
	for (size_t i = 0; i < rep.nwatches; i++) {
		const struct ioacct_watch_row *w = &rep.watches[i];

		if ((o->has_step && w->step_id != o->step) || w->hier != hier)
			continue;
		/* Steps of one job may share a cgroup (iorun's, a v2 job cgroup): one is enough. */
		if (!pick || strcmp(pick->cgroup, w->cgroup))
			n++;
		pick = pick ? pick : w;
	}
	ret = -ENOENT;
	if (!rep.nwatches) {
		fprintf(stderr,
			"iotrace: --job %llu: ioacctd named no cgroup for it (the job has no running step on "
			"this node, or ioacctd is older than iotrace)\n", job);
		goto out;
	}
	if (!pick) {
		fprintf(stderr, "iotrace: --job %llu has no running step%s on this node\n", job, step);
		goto out;
	}
	if (n > 1) {
		ret = -EINVAL;
		fprintf(stderr,
			"iotrace: --job %llu has %zu running steps in different cgroups: choose one with --step\n",
			job, n);
		goto out;
	}
	ioacct_strlcpy(dir, pick->cgroup, len);
	ret = ioacct_tracer_target(dir, hier == IOACCT_HIER_V1 ? cfg->cgroup_v1_hierarchy : NULL, tg,
				   err, sizeof(err));
	if (ret)
		fprintf(stderr, "iotrace: --job %llu: %s\n", job, err);
out:
	ioacct_reply_free(&rep);
	return ret;
}

/* Whether any cgroup.procs at or below v1 cgroup `dir` lists a process. */
static bool v1_populated(const char *dir, int depth)
{
	char path[PATH_MAX + 32], line[32];
	bool populated = false;
	struct dirent *de;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	populated = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (populated || depth >= 8 || !(d = opendir(dir)))
		return populated;
	while (!populated && (de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			populated = v1_populated(path, depth + 1);
		}
	closedir(d);
	return populated;
}

/* Whether cgroup directory `dir` still has processes; false once it is gone. */
static bool cgroup_populated(const char *dir)
{
	char path[PATH_MAX + 32], line[128];
	bool populated = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	f = fopen(path, "re");
	if (!f) /* a v1 cgroup: no cgroup.events */
		return errno == ENOENT && v1_populated(dir, 0);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "populated ", 10))
			populated = line[10] == '1';
	fclose(f);
	return populated;
}

/* ---- the command ---------------------------------------------------------------------- */

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* After the fork: the command must not inherit an ignored SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
}

/* Polls the ring buffer until the command (or --pid's process, or --job's step) is gone. */
static int trace_loop(struct ioacct_tracer *tr, const struct opts *o, const char *jobdir, pid_t child,
		      int *status)
{
	int ret;

	for (;;) {
		ret = ioacct_tracer_poll(tr, 100);
		if (ret < 0) {
			fprintf(stderr, "iotrace: reading the ring buffer: %s\n", strerror(-ret));
			return ret;
		}
		if (child > 0) {
			pid_t w = waitpid(child, status, WNOHANG);

			if (w == child)
				break;
		} else if (stop) {
			break;
		} else if (o->pid && kill(o->pid, 0) < 0 && errno == ESRCH) {
			break;
		} else if (o->job && !cgroup_populated(jobdir)) {
			break;
		}
	}
	/* What the last calls left in the buffer. */
	ret = ioacct_tracer_drain(tr);
	if (ret)
		fprintf(stderr, "iotrace: reading the ring buffer: %s\n", strerror(-ret));
	return ret;
}

/* Where the trace is: --pid's cgroup, --job's, or a fresh one for the command. */
struct target {
	struct ioacct_tracer_target tg;
	char cgroup[PATH_MAX];      /* the command's, made here; "" when none */
	char jobdir[PATH_MAX];      /* --job's */
	pid_t child;                /* the command, held until released through go */
	int go;
};

/* Finds or makes the cgroup to trace; the command forked into it, not yet running. 0 or -errno. */
static int find_target(const struct opts *o, struct ioacct_config *cfg, struct target *g)
{
	int ret;

	if (o->pid)
		return pid_cgroup(o->pid, &g->tg);
	if (o->job)
		return job_cgroup(o, cfg, g->jobdir, sizeof(g->jobdir), &g->tg);
	ret = make_cgroup(cfg, g->cgroup, sizeof(g->cgroup), &g->tg);
	if (ret) {
		g->cgroup[0] = '\0';
		return ret;
	}
	/* Not released (iotrace gave up): the command must not run untraced. */
	ret = ioacct_cli_fork_held(&cli, o->argv, false, &g->child, &g->go);
	if (ret)
		return ret;
	child_pid = g->child;
	ret = ioacct_cgroup_enter(g->cgroup, g->child);
	if (ret)
		fprintf(stderr, "iotrace: cannot move the command into %s: %s\n", g->cgroup,
			strerror(-ret));
	return ret;
}

/* The exit status once the trace is over: the assertions, then the command's. */
static int verdict(const struct opts *o, const struct tracer *t, uint64_t lost, pid_t child,
		   int status)
{
	bool failed = false;
	int exit_code = 0;

	if (lost)
		fprintf(stderr, "iotrace: %" PRIu64 " events lost (ring buffer full; %" PRIu64
			" received; --buffer-size is %lu)\n", lost, t->events, o->buffer_size);
	for (size_t i = 0; i < o->nasserts; i++) {
		const struct ioacct_trace_assert *a = &o->asserts[i];
		bool holds = ioacct_trace_assert_holds(a);

		fprintf(stderr, "iotrace: assertion %s: %s (seen %" PRIu64 "%s)\n",
			holds ? "holds" : "FAILED", a->text, a->seen,
			lost ? ", with events lost: not every call was seen" : "");
		if (!holds || lost)
			failed = true;
	}
	if (failed)
		exit_code = 1;
	if (child) {
		int code = WIFEXITED(status) ? WEXITSTATUS(status) :
			   WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

		if (code) {
			if (WIFSIGNALED(status))
				fprintf(stderr, "iotrace: the command was killed by signal %d\n",
					WTERMSIG(status));
			else
				fprintf(stderr, "iotrace: the command failed with exit status %d\n", code);
			if (!failed)
				exit_code = code;
		}
	}
	return exit_code;
}

int main(int argc, char **argv)
{
	struct opts *o = &opts;
	struct tracer t = { .o = o };
	struct target g = { .go = -1 };
	struct ioacct_tracer *tr = NULL;
	struct ioacct_config cfg;
	char err[1024];
	int status = 0, ret, exit_code = EXIT_OWN;
	uint64_t t0;

	ret = parse_args(argc, argv, o, &cfg);
	if (ret != IOACCT_CLI_GO)
		return ret;
	if (geteuid() != 0) {
		fprintf(stderr, "iotrace: needs root (it loads BPF programs%s)\n",
			o->argv[0] ? " and creates a cgroup" : "");
		return EXIT_OWN;
	}
	/* Before the command is forked: --rpc where nothing speaks RPC is a usage error of this node. */
	if (o->rpc && ioacct_tracer_rpc_check(&(bool){ false }, err, sizeof(err))) {
		fprintf(stderr, "iotrace: --rpc: %s\n", err);
		return EXIT_OWN;
	}
	if (find_target(o, &cfg, &g))
		goto out;
	install_signals();
	/* Event times count from t0; --otlp's unix times from real0, taken together. */
	t0 = ioacct_mono_ns();
	if (outputs_open(&t, &cfg, real_ns()))
		goto out;
	if (ioacct_tracer_open(&tr, "iotrace", &g.tg, o->rpc, o->buffer_size, t0, on_event, &t, err,
			       sizeof(err))) {
		fprintf(stderr, "iotrace: %s\n", err);
		goto out;
	}
	if (o->pid)
		fprintf(stderr, "iotrace: tracing pid %d until it exits (interrupt to stop)\n",
			(int)o->pid);
	if (o->job)
		fprintf(stderr, "iotrace: tracing job %llu in %s until it is empty (interrupt to stop)\n",
			(unsigned long long)o->job, g.jobdir);
	if (g.child) {
		ret = ioacct_cli_release(&cli, g.go);
		g.go = -1;
		if (ret)
			goto out;
	}
	if (trace_loop(tr, o, g.jobdir, g.child, &status))
		goto out;
	outputs_close(&t);
	if (fflush(stdout) && !t.out_err)
		fprintf(stderr, "iotrace: standard output: %s; some events were not printed\n",
			strerror(errno));
	exit_code = verdict(o, &t, ioacct_tracer_lost(tr), g.child, status);
out:
	outputs_close(&t); /* a document left whole, what was traced sent */
	if (g.go >= 0)
		close(g.go); /* the command, not started, exits */
	if (g.child && exit_code == EXIT_OWN) {
		kill(g.child, SIGKILL);
		waitpid(g.child, NULL, 0);
	}
	ioacct_tracer_close(tr);
	/* Processes the command left behind keep the cgroup busy; leave it then. */
	if (g.cgroup[0] && rmdir(g.cgroup) && errno != ENOENT)
		fprintf(stderr, "iotrace: cgroup %s left in place: %s\n", g.cgroup, strerror(errno));
	ioacct_trace_filter_free(&o->filter);
	for (size_t i = 0; i < o->nasserts; i++)
		ioacct_trace_assert_free(&o->asserts[i]);
	return exit_code;
}
