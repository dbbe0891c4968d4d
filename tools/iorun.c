// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iorun: runs any command in a fresh cgroup watched by ioacctd, as a job of
 * its own, and prints the job's per-mount I/O when it ends. No Slurm needed.
 *
 * The command is held on a pipe until it is in the cgroup and registered,
 * so everything it does is counted. If monitoring is unavailable the command
 * still runs and one line says why. The exit status is the command's
 * (125 for iorun's own usage errors, 126/127 when the command cannot run).
 *
 * --trace FILE (opt-in) also runs the tracer (trace/libtracer.la) on the
 * command's cgroup and writes FILE, a Darshan log of the job's counters plus
 * a DXT_POSIX record per file of its reads and writes (offset, length, start
 * and end), as darshan-dxt-parser reads them. Events lost (ring buffer full)
 * or dropped (past --trace-max-events) are counted and said, in the log's
 * metadata too. Tracing that cannot start is said, and the command runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "darshan.h"
#include "exeprobe.h"
#include "ioacct_ops.h"
#include "job_fetch.h"
#include "log.h"
#include "procfs.h"
#include "proto.h"
#include "render.h"
#include "report.h"
#include "text.h"
#include "tracer.h"
#include "util.h"

#define CALL_TIMEOUT_MS 10000
/*
 * The finish and the report read back: the command has ended and what iorun
 * has left to give is its report, which the daemon makes in the finish (the
 * last drain, the mounts named, the store's commit, the probes detached when
 * nothing else is watched). Beside a whole test suite and four emulated
 * kernels that took over 10 s and the report was lost; a slow daemon must
 * delay it, not lose it.
 */
#define REPORT_TIMEOUT_MS 120000
/* --trace-max-events unless told: 32 MB of segments. */
#define TRACE_MAX_EVENTS_DEFAULT 1000000

struct iorun_opts {
	const char *output;
	const char *cgroup_mode;
	const char *bin_width;
	uint64_t job_id;
	const char *format_name;    /* -f, --json: NULL for text */
	const char *trace;          /* --trace FILE: the Darshan log with DXT records */
	uint64_t trace_max;         /* read/write events kept, past which they are dropped */
	uint32_t spans;             /* --spans[=WHAT]: IOACCT_SPANS_* ioacctd sends to otlp_url */
	enum ioacct_render_format format;
	char **argv;
};

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: iorun [OPTIONS] -- COMMAND [ARGS...]\n"
		"Runs COMMAND in a fresh cgroup watched by ioacctd and prints its I/O per mount.\n"
		"\n"
		"      --job-id ID            job id to record (default: the next free iorun id)\n"
		"      --bin-width SECONDS    time bin width for this job (config: bin_width)\n"
		"      --cgroup-mode MODE     auto, v2 or v1 (config: cgroup_mode)\n"
		"  -f, --format FORMAT        %s\n"
		"                             (default text; darshan: a Darshan log, needs -o)\n"
		"      --json                 the same as --format json\n"
		"  -o, --output FILE          write the report to FILE instead of stderr\n"
		"      --trace FILE           also trace every read and write of COMMAND and\n"
		"                             write FILE, a Darshan log of the counters and\n"
		"                             DXT_POSIX trace records (darshan-dxt-parser)\n"
		"      --trace-max-events N   keep at most N reads and writes in the trace\n"
		"                             (default %d); the rest are counted as dropped\n"
		"      --spans[=WHAT]         ioacctd sends COMMAND's calls as OpenTelemetry\n"
		"                             spans to the collector of ioacct.conf's otlp_url;\n"
		"                             WHAT: posix, mpiio or all (the default)\n"
		"Common options (the socket: where the job is registered and read back):\n",
		ioacct_render_format_names(), TRACE_MAX_EVENTS_DEFAULT);
	ioacct_cli_help_common(out, 29);
	fprintf(out,
		"\n"
		"Needs root (registering a job with ioacctd does). Exit status: COMMAND's;\n"
		"125 for iorun's own errors, 126 or 127 when COMMAND cannot be run.\n");
}

enum { OPT_JOB = 256, OPT_JSON, OPT_CGMODE, OPT_BIN, OPT_TRACE, OPT_TRACE_MAX, OPT_SPANS };

static const struct option options[] = {
	{ "job-id", required_argument, NULL, OPT_JOB },
	{ "bin-width", required_argument, NULL, OPT_BIN },
	{ "cgroup-mode", required_argument, NULL, OPT_CGMODE },
	{ "format", required_argument, NULL, 'f' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output", required_argument, NULL, 'o' },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "trace-max-events", required_argument, NULL, OPT_TRACE_MAX },
	{ "spans", optional_argument, NULL, OPT_SPANS },
	{ NULL, 0, NULL, 0 },
};

/* One of iorun's own options: 0, or the exit status. */
static int option(struct ioacct_cli *cli, int key, const char *arg)
{
	struct iorun_opts *o = cli->ctx;

	switch (key) {
	case OPT_JOB:
		if (ioacct_cli_uint(arg, 1, UINT64_MAX, &o->job_id))
			return ioacct_cli_bad(cli, "--job-id: '%s' is not a positive integer", arg);
		break;
	case OPT_BIN:
		o->bin_width = arg;
		break;
	case OPT_TRACE:
		o->trace = arg;
		break;
	case OPT_TRACE_MAX:
		if (ioacct_cli_uint(arg, 1, UINT64_MAX, &o->trace_max))
			return ioacct_cli_bad(cli, "--trace-max-events: '%s' is not a positive "
					      "integer", arg);
		break;
	case OPT_SPANS:
		if (ioacct_spans_parse(arg, &o->spans))
			return ioacct_cli_bad(cli, "--spans=%s: posix, mpiio or all", arg);
		break;
	case OPT_CGMODE:
		o->cgroup_mode = arg;
		break;
	case 'f':
		o->format_name = arg;
		break;
	case OPT_JSON:
		o->format_name = "json";
		break;
	case 'o':
		o->output = arg;
		break;
	}
	return 0;
}

static struct iorun_opts opts;

/* IOACCT_CLI_COMMAND: options stop at the command, so its own options are left alone. */
static struct ioacct_cli cli = {
	.prog = "iorun", .options = options, .option = option, .usage = usage,
	.args = IOACCT_CLI_COMMAND, .usage_status = EXIT_OWN, .ctx = &opts,
};

/*
 * The command line, the command and the configuration with the options over
 * it: IOACCT_CLI_GO, or the exit status.
 */
static int setup(int argc, char **argv, struct iorun_opts *o, struct ioacct_config *cfg)
{
	struct ioacct_cli_set sets[] = {
		{ "cgroup-mode", "cgroup_mode", NULL },
		{ "bin-width", "bin_width", NULL },
	};
	char err[256];
	int ret = ioacct_cli_parse(&cli, argc, argv);

	if (ret != IOACCT_CLI_GO)
		return ret;
	ret = ioacct_render_format_arg(o->format_name, o->output, err, sizeof(err));
	if (ret < 0)
		return ioacct_cli_bad(&cli, "%s", err);
	o->format = (enum ioacct_render_format)ret;
	if (!cli.argc)
		return ioacct_cli_usage_error(&cli, "no command given");
	o->argv = cli.argv;
	sets[0].value = o->cgroup_mode;
	sets[1].value = o->bin_width;
	ret = ioacct_cli_config(&cli, cfg, sets, sizeof(sets) / sizeof(sets[0]));
	return ret ? ret : IOACCT_CLI_GO;
}

static void user_name(uid_t uid, char *out, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		ioacct_strlcpy(out, pw->pw_name, len);
	else
		snprintf(out, len, "%u", (unsigned int)uid);
}

/* The state Slurm would give a job that ended this way. */
static const char *job_state(int status, int32_t *exit_code)
{
	if (WIFSIGNALED(status)) {
		*exit_code = 128 + WTERMSIG(status);
		return WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT ? "CANCELLED" : "FAILED";
	}
	*exit_code = WEXITSTATUS(status);
	return *exit_code == 0 ? "COMPLETED" : "FAILED";
}

/* ---- --trace: the job's reads and writes as DXT_POSIX records ---- */

struct iorun_trace {
	struct ioacct_tracer *tracer;      /* NULL: not tracing */
	struct ioacct_darshan_log *dxt;    /* the DXT records and their names alone */
	char host[IOACCT_DARSHAN_DXT_HOSTNAME];
	char cwd[PATH_MAX];                /* the command's, for relative paths */
	uint64_t max;                      /* --trace-max-events */
	uint64_t kept, dropped, nopath;
	bool broken;                       /* the ring buffer could not be read to the end */
	bool nomem;
	bool written;                      /* the log was written */
};

static void on_trace_event(void *ctx, const struct ioacct_trace_rec *r)
{
	struct iorun_trace *t = ctx;
	bool write = r->op == IOACCT_OP_WRITE;

	/* Darshan traces the reads and writes that did not fail, of 0 bytes too. */
	if ((r->op != IOACCT_OP_READ && !write) || r->ret < 0)
		return;
	/*
	 * No path: the process did not open the fd under the trace (stdin, an fd
	 * inherited from its parent). Counted and said, not guessed.
	 */
	if (!r->path[0]) {
		t->nopath++;
		return;
	}
	if (t->kept >= t->max) {
		t->dropped++;
		return;
	}
	if (ioacct_darshan_dxt_add_call(t->dxt, r->path, t->cwd, 0, t->host, write, r->offset,
					r->ret, r->start_ns, r->dur_ns)) {
		t->nomem = true;
		t->dropped++;
		return;
	}
	t->kept++;
}

/*
 * The Darshan log of the job's counters with the trace's DXT records, in
 * o->trace; then one line saying what the trace holds and what it lost.
 */
static int write_trace(const struct iorun_opts *o, struct iorun_trace *t,
		       const struct ioacct_jobdata *jd)
{
	struct ioacct_report *r = ioacct_report_create(jd, NULL, NULL);
	struct ioacct_darshan_log *log = r ? ioacct_darshan_from_report(r, false) : NULL;
	uint64_t lost = ioacct_tracer_lost(t->tracer), nw = 0, nr = 0;
	size_t ndxt = t->dxt->ndxt, mlen;
	char err[PATH_MAX + 512];
	int ret;

	if (!log || ioacct_darshan_dxt_move(log, t->dxt)) {
		ret = -ENOMEM;
		fputs("iorun: --trace: cannot make the Darshan log ", stderr);
		ioacct_text_put(stderr, o->trace);
		fputs(": out of memory\n", stderr);
		goto out;
	}
	for (size_t i = 0; i < log->ndxt; i++) {
		nw += log->dxt[i].nwrites;
		nr += log->dxt[i].nreads;
	}
	/* What the trace lacks, in the log itself: a reader must not take it for complete. */
	mlen = strnlen(log->metadata, sizeof(log->metadata));
	snprintf(log->metadata + mlen, sizeof(log->metadata) - mlen,
		 "trace_events=%" PRIu64 "\ntrace_lost=%" PRIu64 "\ntrace_dropped=%" PRIu64
		 "\ntrace_max_events=%" PRIu64 "\n", ioacct_tracer_events(t->tracer), lost, t->dropped,
		 t->max);
	ret = ioacct_darshan_write_file(log, o->trace, err, sizeof(err));
	if (ret) {
		fputs("iorun: --trace: ", stderr);
		ioacct_text_put(stderr, err);
		fputc('\n', stderr);
		goto out;
	}
	t->written = true;
	fputs("iorun: trace in ", stderr);
	ioacct_text_put(stderr, o->trace);
	fprintf(stderr, ": %" PRIu64 " writes and %" PRIu64 " reads on %zu "
		"files; %" PRIu64 " events lost (ring buffer full), %" PRIu64 " dropped (past "
		"--trace-max-events %" PRIu64 "%s)%s\n", nw, nr, ndxt, lost, t->dropped,
		t->max, t->nomem ? ", or out of memory" : "",
		t->broken ? "; the ring buffer failed, the trace ends early" : "");
	if (t->nopath)
		fprintf(stderr, "iorun: trace: %" PRIu64 " reads and writes on fds whose open the "
			"process did not make under the trace (stdin, inherited fds) have no file, so "
			"no DXT record\n", t->nopath);
out:
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	return ret;
}

/* "iorun: cannot write PATH: ERROR", the path as a line of text can hold it. */
static void cannot_write(const char *path, int err)
{
	fputs("iorun: cannot write ", stderr);
	ioacct_text_put(stderr, path);
	fprintf(stderr, ": %s\n", strerror(err));
}

/* The job's report, as ioacctd has it: through the socket, wherever the store is. */
static int print_summary(const struct ioacct_config *cfg, const struct iorun_opts *o, int64_t job_key,
			 uint64_t start_mono_ns, struct iorun_trace *t)
{
	struct ioacct_source src = { .socket_path = cfg->socket_path, .timeout_ms = REPORT_TIMEOUT_MS };
	struct ioacct_jobdata *jd = NULL;
	char err[PATH_MAX + 1024];
	FILE *f = stderr;
	int ret;

	ret = ioacct_source_load_job(&src, NULL, 0, job_key, &jd, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iorun: cannot read the job back: %s\n", err);
		return ret;
	}
	jd->start_mono_ns = start_mono_ns;
	if (t->tracer)
		write_trace(o, t, jd);
	if (o->output) {
		f = fopen(o->output, "we");
		if (!f) {
			ret = -errno;
			cannot_write(o->output, -ret);
			goto out;
		}
	}
	ret = ioacct_render_job(f, o->format, jd, &cfg->advice, NULL);
	if (ret)
		fprintf(stderr, "iorun: cannot write the report: %s\n", strerror(-ret));
	if (f != stderr && fclose(f)) {
		ret = -errno;
		cannot_write(o->output, -ret);
	}
out:
	ioacct_jobdata_free(jd);
	return ret;
}

/*
 * Forks the command, held on a pipe until ioacct_cli_release(*go); run even
 * if iorun gives up on the cgroup. Signals to iorun are passed on to it.
 */
static int fork_command(char **argv, pid_t *pid, int *go)
{
	struct sigaction sa;
	int ret;

	ret = ioacct_cli_fork_held(&cli, argv, true, pid, go);
	if (ret)
		return ret;
	child_pid = *pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

/* What registering the command gave: a job, or why not. */
struct iorun_job {
	bool monitored;
	uint64_t job_id;
	uint64_t start_mono_ns;
	char cgroup[PATH_MAX];      /* "" when none was made */
	char err[1024];
};

/* Puts the command in a cgroup of its own and registers it with ioacctd. */
static void register_command(const struct ioacct_config *cfg, const struct iorun_opts *o, pid_t pid,
			     struct iorun_job *j)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	int ret;

	if (geteuid() != 0) {
		snprintf(j->err, sizeof(j->err), "iorun needs root to create a cgroup and register it");
		return;
	}
	if (ioacct_cgroup_make(cfg, "iorun", j->cgroup, sizeof(j->cgroup), j->err, sizeof(j->err))) {
		j->cgroup[0] = '\0';
		return;
	}
	ret = ioacct_cgroup_enter(j->cgroup, pid);
	if (ret) {
		snprintf(j->err, sizeof(j->err), "cannot move the command into %s: %s", j->cgroup,
			 strerror(-ret));
		return;
	}
	memset(&req, 0, sizeof(req));
	req.type = IOACCT_MSG_REGISTER;
	req.u.reg.job_id = o->job_id;
	req.u.reg.step_id = 0;
	req.u.reg.uid = getuid();
	req.u.reg.gid = getgid();
	req.u.reg.pid = pid;
	req.u.reg.bin_width_ns = o->bin_width ? cfg->bin_width_ns : 0;
	req.u.reg.spans = o->spans;
	ioacct_strlcpy(req.u.reg.cgroup, j->cgroup, sizeof(req.u.reg.cgroup));
	ioacct_strlcpy(req.u.reg.cluster, "iorun", sizeof(req.u.reg.cluster));
	ioacct_strlcpy(req.u.reg.source, "iorun", sizeof(req.u.reg.source));
	user_name(getuid(), req.u.reg.user, sizeof(req.u.reg.user));
	ioacct_strlcpy(req.u.reg.job_name, o->argv[0], sizeof(req.u.reg.job_name));
	ioacct_cmdline_join(req.u.reg.cmdline, sizeof(req.u.reg.cmdline), -1, o->argv);
	if (!getcwd(req.u.reg.workdir, sizeof(req.u.reg.workdir)))
		req.u.reg.workdir[0] = '\0';
	ret = ioacct_client_call(cfg->socket_path, &req, &rep, CALL_TIMEOUT_MS, j->err, sizeof(j->err));
	if (ret == 0 && rep.status)
		snprintf(j->err, sizeof(j->err), "ioacctd refused: %s", rep.error);
	j->monitored = ret == 0 && rep.status == 0;
	if (j->monitored) {
		/* The command runs without spans: one line says why. */
		if (rep.spans_error[0])
			fprintf(stderr, "iorun: %s\n", rep.spans_error);
		j->job_id = rep.job_id;
		j->start_mono_ns = rep.start_mono_ns;
	}
	ioacct_reply_free(&rep);
}

/*
 * The command's program probed before it runs (issue 39: HDF5 linked into
 * it counted from its first call), as iorun's user, who is the command's:
 * at most IOACCT_EXEPROBE_TIMEOUT_MS, then it runs all the same.
 */
static void probe_command(const struct ioacct_config *cfg, const struct iorun_opts *o,
			  const struct iorun_job *j)
{
	char err[512], name[PATH_MAX];

	if (ioacct_exeprobe(cfg->socket_path, o->argv[0], NULL, "iorun", j->job_id, 0,
			    IOACCT_EXEPROBE_TIMEOUT_MS, err, sizeof(err)))
		fprintf(stderr, "iorun: %s not probed before it runs (HDF5 calls it makes at once "
			"may go uncounted): %s\n", ioacct_text_clean(name, sizeof(name), o->argv[0]), err);
}

/* The command's wait status; -1 when waitpid itself failed. */
static int wait_command(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "iorun: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	child_pid = 0;
	return 0;
}

/*
 * Attaches the tracer to the job's cgroup before the command starts, with
 * the job's start as time 0. A trace that cannot start is said; the
 * command runs all the same.
 */
static void trace_start(const struct ioacct_config *cfg, const struct iorun_opts *o,
			const struct iorun_job *j, struct iorun_trace *t)
{
	struct ioacct_tracer_target tg;
	char err[1024], v2[PATH_MAX] = "";
	bool is_v2;
	size_t n;
	int ret;

	if (!j->monitored) {
		fprintf(stderr, "iorun: --trace: not tracing, the job is not monitored (see above)\n");
		return;
	}
	/* The job's cgroup is cgroup2's when usable, else in the configured v1 hierarchy. */
	ret = ioacct_cgroup_mountpoint(IOACCT_HIER_V2, NULL, v2, sizeof(v2));
	n = strlen(v2);
	is_v2 = !ret && !strncmp(j->cgroup, v2, n) && j->cgroup[n] == '/';
	ret = ioacct_tracer_target(j->cgroup, is_v2 ? NULL : cfg->cgroup_v1_hierarchy, &tg, err,
				   sizeof(err));
	if (ret) {
		fprintf(stderr, "iorun: --trace: not tracing: %s\n", err);
		return;
	}
	t->dxt = calloc(1, sizeof(*t->dxt));
	if (!t->dxt) {
		fprintf(stderr, "iorun: --trace: not tracing: out of memory\n");
		return;
	}
	if (gethostname(t->host, sizeof(t->host) - 1))
		ioacct_strlcpy(t->host, "localhost", sizeof(t->host));
	if (!getcwd(t->cwd, sizeof(t->cwd)))
		t->cwd[0] = '\0';
	t->max = o->trace_max ? o->trace_max : TRACE_MAX_EVENTS_DEFAULT;
	ret = ioacct_tracer_open(&t->tracer, "iorun", &tg, 0, IOACCT_TRACER_BUFFER_DEFAULT,
				 j->start_mono_ns, on_trace_event, t, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iorun: --trace: not tracing: %s\n", err);
		t->tracer = NULL;
	}
}

/* Like wait_command(), reading the trace meanwhile, then what the last calls left. */
static int wait_traced(pid_t pid, int *status, struct iorun_trace *t)
{
	int ret;

	for (;;) {
		pid_t w;

		ret = ioacct_tracer_poll(t->tracer, 100);
		if (ret) {
			fprintf(stderr, "iorun: --trace: reading the ring buffer: %s; the trace ends "
				"here\n", strerror(-ret));
			t->broken = true;
			return wait_command(pid, status);
		}
		w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "iorun: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	child_pid = 0;
	ret = ioacct_tracer_drain(t->tracer);
	if (ret) {
		fprintf(stderr, "iorun: --trace: reading the ring buffer: %s; the trace may lack "
			"the last calls\n", strerror(-ret));
		t->broken = true;
	}
	return 0;
}

/* Tells ioacctd the job ended, then prints its report. */
static void finish_job(const struct ioacct_config *cfg, const struct iorun_opts *o,
		       const struct iorun_job *j, int status, struct iorun_trace *t)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	int32_t exit_code = 0;
	const char *state = job_state(status, &exit_code);
	char err[1024];
	int ret;

	memset(&req, 0, sizeof(req));
	req.type = IOACCT_MSG_FINISH_JOB;
	req.u.fin.job_id = j->job_id;
	ioacct_strlcpy(req.u.fin.cluster, "iorun", sizeof(req.u.fin.cluster));
	ioacct_strlcpy(req.u.fin.state, state, sizeof(req.u.fin.state));
	req.u.fin.exit_code = exit_code;
	ret = ioacct_client_call(cfg->socket_path, &req, &rep, REPORT_TIMEOUT_MS, err, sizeof(err));
	if (ret)
		fprintf(stderr, "ioacct: cannot finish job %llu: %s\n", (unsigned long long)j->job_id, err);
	else if (rep.status)
		fprintf(stderr, "ioacct: cannot finish job %llu: %s\n", (unsigned long long)j->job_id,
			rep.error);
	else
		print_summary(cfg, o, rep.job_key, j->start_mono_ns, t);
	ioacct_reply_free(&rep);
}

int main(int argc, char **argv)
{
	struct iorun_opts *o = &opts;
	struct iorun_job j = { 0 };
	struct iorun_trace t = { 0 };
	struct ioacct_config cfg;
	int go = -1, status = 0, ret;
	pid_t pid = 0;

	ioacct_log_set_ident("iorun");
	ret = setup(argc, argv, o, &cfg);
	if (ret != IOACCT_CLI_GO)
		return ret;
	if (fork_command(o->argv, &pid, &go))
		return EXIT_OWN;
	j.job_id = o->job_id;
	register_command(&cfg, o, pid, &j);
	if (!j.monitored)
		fprintf(stderr, "ioacct: I/O monitoring unavailable: %s\n", j.err);
	if (j.monitored)
		probe_command(&cfg, o, &j);
	if (o->trace)
		trace_start(&cfg, o, &j, &t);
	ioacct_cli_release(&cli, go);
	if (t.tracer ? wait_traced(pid, &status, &t) : wait_command(pid, &status))
		return EXIT_OWN;
	if (j.monitored)
		finish_job(&cfg, o, &j, status, &t);
	if (t.tracer && !t.written) {
		fputs("iorun: --trace: ", stderr);
		ioacct_text_put(stderr, o->trace);
		fputs(" not written: the job's counters could not be read back (see above)\n", stderr);
	}
	ioacct_tracer_close(t.tracer);
	ioacct_darshan_free(t.dxt);
	/* Processes the command left behind keep the cgroup busy; leave it then. */
	if (j.cgroup[0] && rmdir(j.cgroup) && errno != ENOENT)
		fprintf(stderr, "iorun: cgroup %s left in place: %s\n", j.cgroup, strerror(errno));

	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
