// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spank_ioacct.so: sbatch/salloc/srun --io-monitor[=OPTIONS].
 *
 * Every slurm_spank_* hook is here; each switches on the context it runs in.
 *
 *   init              all contexts    register the option, read plugstack args
 *   init_post_opt     remote          decide whether this step is monitored
 *   task_post_fork    remote, root    register the task's cgroup with ioacctd
 *                                     (the task is in its final cgroup, before exec)
 *   task_init         remote, user    if registration failed, tell the user in one line
 *   exit              remote, root    finish the step
 *   job_epilog        job script      finish the job, write the report as the user
 *
 * Monitoring never harms a job: every hook returns success whatever happens,
 * unless the admin set strict=1.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "args.h"
#include "config.h"
#include "exeprobe.h"
#include "job_fetch.h"
#include "log.h"
#include "proto.h"
#include "render.h"
#include "text.h"
#include "trace.h"
#include "userfile.h"

SPANK_PLUGIN(ioacct, 1);

#define CALL_TIMEOUT_MS 5000
/* Reading a job back is pages of it: more than one call's worth of time. */
#define LOAD_TIMEOUT_MS 30000
/* Slurm's SLURM_EXTERN_CONT: the extern step holds no user task of the job. */
#define STEP_BATCH 0xfffffffbU
#define STEP_EXTERN 0xfffffffcU

static struct ioacct_spank_conf conf;
static struct ioacct_config cfg;
static struct ioacct_monitor_opts mopts;
static bool opt_given;        /* --io-monitor was on the command line */
static bool monitored;        /* this step (remote) is monitored */
static bool registered;       /* this slurmstepd registered at least one task */
static char reg_error[512];

/*
 * A message fit for one line of slurmd's log and of the job's output: the
 * messages quote job names, workdirs and report paths, anyone's bytes.
 */
#define LINE_MAX_BYTES 2048
static const char *one_line(const char *msg, char buf[LINE_MAX_BYTES])
{
	return ioacct_text_clean(buf, LINE_MAX_BYTES, msg);
}

static void slurm_sink(enum ioacct_log_level level, const char *msg, void *ctx)
{
	char line[LINE_MAX_BYTES];

	(void)ctx;
	msg = one_line(msg, line);
	switch (level) {
	case IOACCT_LOG_ERR:
	case IOACCT_LOG_WARN:
		slurm_error("ioacct: %s", msg);
		break;
	case IOACCT_LOG_INFO:
		slurm_info("ioacct: %s", msg);
		break;
	default:
		slurm_debug("ioacct: %s", msg);
	}
}

static int opt_cb(int val, const char *optarg, int remote)
{
	char err[256];

	(void)val;
	if (ioacct_monitor_opts_parse(optarg, &mopts, err, sizeof(err))) {
		/* At submission this stops sbatch with the reason; on the node it must not. */
		slurm_error("ioacct: --io-monitor: %s", err);
		return remote ? 0 : -1;
	}
	opt_given = true;
	return 0;
}

static struct spank_option io_monitor_opt = {
	"io-monitor", "OPTS",
	"Record the job's file-system I/O with ioacct",
	2, 0, opt_cb,
};

static const char *socket_path(void)
{
	return conf.socket[0] ? conf.socket : cfg.socket_path;
}

/* The failure the admin wants to hear about: stop the job only with strict=1. */
static int failure(void)
{
	return conf.strict ? -1 : 0;
}

/*
 * The plugstack arguments and ioacct.conf, read once per process. Every hook
 * gets the arguments, and not every context calls slurm_spank_init first
 * (the prolog/epilog context does not).
 */
static void load_conf(int ac, char **av)
{
	static bool loaded;
	char err[2048];

	if (loaded)
		return;
	loaded = true;
	ioacct_log_set_sink(slurm_sink, NULL);
	if (ioacct_spank_conf_parse(&conf, ac, av, err, sizeof(err)))
		slurm_error("ioacct: plugstack.conf: %s (ignored)", err);
	ioacct_config_defaults(&cfg);
	if (ioacct_config_load(&cfg, conf.config[0] ? conf.config : NULL, err, sizeof(err)))
		slurm_error("ioacct: %s (using defaults)", err);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	if (spank_option_register(sp, &io_monitor_opt) != ESPANK_SUCCESS)
		slurm_error("ioacct: cannot register --io-monitor");
	if (spank_context() == S_CTX_REMOTE)
		load_conf(ac, av);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	uint32_t step = 0;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return 0;
	monitored = (opt_given || conf.default_on) && step != STEP_EXTERN;
	return 0;
}

static void env_or(spank_t sp, const char *var, char *buf, size_t len, const char *dflt)
{
	if (spank_getenv(sp, var, buf, (int)len) != ESPANK_SUCCESS)
		ioacct_strlcpy(buf, dflt, len);
}

/* The user's name from the passwd database, when Slurm gives none ("" when there is none). */
static void user_from_uid(uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pwbuf[4096];

	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		ioacct_strlcpy(buf, res->pw_name, len);
	else
		buf[0] = '\0';
}

/* The user's primary group, when the environment does not say it. */
static void user_gid(uint32_t uid, uint32_t *gid)
{
	struct passwd pw, *res = NULL;
	char pwbuf[4096];

	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		*gid = res->pw_gid;
}

/*
 * slurmd's node name, which need not be the host name (slurmd -N, several per
 * host). Not SLURMD_NODENAME: here, before the task's environment is set up,
 * that is the one srun inherited (from a batch script: the batch node's). The
 * step's node list and this node's place in it say it right; when they cannot,
 * nothing is sent and ioacctd uses its node_name.
 */
static void node_name(spank_t sp, char *buf, size_t len)
{
	char list[4096];
	uint32_t nodeid;

	buf[0] = '\0';
	if (spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS)
		return;
	if (spank_getenv(sp, "SLURM_STEP_NODELIST", list, (int)sizeof(list)) != ESPANK_SUCCESS &&
	    spank_getenv(sp, "SLURM_NODELIST", list, (int)sizeof(list)) != ESPANK_SUCCESS)
		return;
	if (ioacct_hostlist_nth(list, nodeid, buf, len))
		buf[0] = '\0';
}

/* ---- --io-monitor=trace (trace.h, daemon/jobtrace.h) ---------------------------------- */

/* The trace cap and the task's rank in REGISTER: ioacctd traces the job when the cap is set. */
static void trace_request(spank_t sp, struct ioacct_req_register *r)
{
	uint32_t rank = 0;

	r->trace_max = mopts.trace_max;
	r->spans = mopts.spans;
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) == ESPANK_SUCCESS)
		r->task_rank = (int32_t)rank;
}

/* The step runs untraced: one line (for its first task), to the job's output too. */
static void trace_reply(uint32_t job, uint32_t step, const struct ioacct_reply *rep)
{
	static bool said, said_spans;

	char line[LINE_MAX_BYTES];

	if (mopts.trace_max && rep->trace_error[0] && !said) {
		slurm_error("ioacct: job %u step %u: not traced: %s", job, step,
			    one_line(rep->trace_error, line));
		said = true;
	}
	if (mopts.spans && rep->spans_error[0] && !said_spans) {
		slurm_error("ioacct: job %u step %u: %s", job, step,
			    one_line(rep->spans_error, line));
		said_spans = true;
	}
}

/* The .darshan report with the trace ioacctd spooled; said in the log either way. */
static int render_trace(const struct ioacct_jobdata *jd, char **buf, size_t *len)
{
	char msg[1024] = "", line[LINE_MAX_BYTES];
	int ret = ioacct_spank_trace_render(jd, cfg.db_path, buf, len, msg, sizeof(msg));

	if (ret)
		slurm_error("ioacct: job %llu: %s", (unsigned long long)jd->job.job_id,
			    one_line(msg, line));
	else
		slurm_info("ioacct: job %llu: %s", (unsigned long long)jd->job.job_id,
			   one_line(msg, line));
	return ret;
}

/* A step traced when the job was not asked to be: its trace still gets a report. */
static void trace_epilog(const struct ioacct_jobdata *jd)
{
	if (mopts.trace_max || !ioacct_spank_trace_spooled(&jd->job, cfg.db_path))
		return;
	ioacct_monitor_opts_trace(&mopts, IOACCT_TRACE_MAX_DEFAULT);
}

static void first_line(const char *cmd, char *line, size_t len);

/* scontrol's one line about the batch step's job: asked once, for its restarts and its script. */
static const char *batch_show_job(uint32_t job)
{
	static char line[8192];
	static bool asked;
	char cmd[128];

	if (!asked) {
		snprintf(cmd, sizeof(cmd), "scontrol -o show job %u 2>/dev/null", job);
		first_line(cmd, line, sizeof(line));
		asked = true;
	}
	return line;
}

/*
 * A requeued job's run: Slurm's restart count, 0 for the first run. A step
 * that srun started has SLURM_RESTART_COUNT from the batch script's
 * environment. The batch step has it in no environment but each task's
 * (slurmstepd sets it in the child, after this callback), and the spank
 * item reads 0 there: ask slurmctld, once per batch step.
 */
static uint32_t restart_count(spank_t sp, uint32_t job, uint32_t step)
{
	char buf[32];
	uint32_t n = 0;
	const char *f;

	if (spank_getenv(sp, "SLURM_RESTART_COUNT", buf, (int)sizeof(buf)) == ESPANK_SUCCESS)
		return (uint32_t)strtoul(buf, NULL, 10);
	if (spank_get_item(sp, S_SLURM_RESTART_COUNT, &n) == ESPANK_SUCCESS && n)
		return n;
	if (step != STEP_BATCH)
		return 0;
	if ((f = strstr(batch_show_job(job), " Restarts=")))
		sscanf(f, " Restarts=%u", &n);
	return n;
}

/*
 * The job's command line as the task's (Darshan's exe, issue 38): the
 * step's argv as slurmstepd starts it. The batch step's argv[0] is slurmd's
 * spooled copy of the script: the script as submitted stands for the whole
 * line (scontrol's Command=, the script and its arguments, up to the next
 * field, WorkDir=), else the job's name with the script's arguments.
 */
static void task_cmdline(spank_t sp, uint32_t job, uint32_t step, char *out, size_t len)
{
	char name[IOACCT_CMDLINE_MAX], **argv = NULL, **args;
	const char *c, *end;
	int argc = 0;

	out[0] = '\0';
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc <= 0 || !argv)
		return;
	if (step != STEP_BATCH) {
		ioacct_cmdline_join(out, len, argc, argv);
		return;
	}
	c = strstr(batch_show_job(job), " Command=");
	if (c) {
		c += strlen(" Command=");
		end = strstr(c, " WorkDir=");
		snprintf(name, sizeof(name), "%.*s", (int)(end ? (size_t)(end - c) : strcspn(c, " ")), c);
		ioacct_cmdline_join(out, len, 1, (char *const[]){ name, NULL });
		if (out[0])
			return;
	}
	env_or(sp, "SLURM_JOB_NAME", name, sizeof(name), "");
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return;
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	if (name[0])
		args[0] = name;
	ioacct_cmdline_join(out, len, argc, args);
	free(args);
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	struct ioacct_request req = { .type = IOACCT_MSG_REGISTER };
	struct ioacct_req_register *r = &req.u.reg;
	struct ioacct_reply rep;
	uint32_t array_id = 0, array_task = 0;
	char link[64], err[512], line[LINE_MAX_BYTES];
	pid_t pid = 0;
	ssize_t n;
	int ret;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || !monitored)
		return 0;
	uint32_t job = 0;
	if (spank_get_item(sp, S_TASK_PID, &pid) || spank_get_item(sp, S_JOB_ID, &job) ||
	    spank_get_item(sp, S_JOB_STEPID, &r->step_id) || spank_get_item(sp, S_JOB_UID, &r->uid) ||
	    spank_get_item(sp, S_JOB_GID, &r->gid)) {
		snprintf(reg_error, sizeof(reg_error), "Slurm did not give the task's ids");
		slurm_error("ioacct: I/O monitoring unavailable: %s", one_line(reg_error, line));
		return failure();
	}
	r->job_id = job;
	r->pid = pid;
	r->bin_width_ns = mopts.bin_width_ns;
	trace_request(sp, r);
	/*
	 * Steps on nodes other than the batch host get the job's own id and
	 * NO_VAL (0xfffffffe) for a job that is no array: not an array task.
	 */
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_id) == ESPANK_SUCCESS && array_id &&
	    spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) == ESPANK_SUCCESS &&
	    array_task < 0xfffffffeU) {
		r->has_array = 1;
		r->array_job_id = array_id;
		r->array_task_id = array_task;
	}
	env_or(sp, "SLURM_CLUSTER_NAME", r->cluster, sizeof(r->cluster), "");
	r->restart = restart_count(sp, job, r->step_id);
	env_or(sp, "SLURM_JOB_USER", r->user, sizeof(r->user), "");
	/* slurmstepd does not always export it: the report's user: line wants it. */
	if (!r->user[0])
		user_from_uid(r->uid, r->user, sizeof(r->user));
	env_or(sp, "SLURM_JOB_NAME", r->job_name, sizeof(r->job_name), "");
	task_cmdline(sp, job, r->step_id, r->cmdline, sizeof(r->cmdline));
	node_name(sp, r->node_name, sizeof(r->node_name));
	ioacct_strlcpy(r->source, "slurm", sizeof(r->source));
	/* The task has already changed to the job's working directory. */
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, r->workdir, sizeof(r->workdir) - 1);
	r->workdir[n > 0 ? n : 0] = '\0';

	ret = ioacct_client_call(socket_path(), &req, &rep, CALL_TIMEOUT_MS, err, sizeof(err));
	if (ret == 0 && rep.status)
		snprintf(err, sizeof(err), "ioacctd refused: %s", rep.error);
	if (ret == 0 && rep.status == 0) {
		registered = true;
		reg_error[0] = '\0';
		trace_reply(job, r->step_id, &rep);
	} else {
		snprintf(reg_error, sizeof(reg_error), "%s", err);
		/* slurm_error() would reach the job's output too; task_init says it there once. */
		slurm_info("ioacct: I/O monitoring unavailable for job %u step %u: %s", job, r->step_id,
			   one_line(err, line));
	}
	ioacct_reply_free(&rep);
	return registered ? 0 : failure();
}

/*
 * The task's program probed before it runs (issue 39: HDF5 linked into it
 * counted from its first call), by every task, as the job's user: found
 * in the job's PATH as execvp() would, opened with the user's rights. At
 * most IOACCT_EXEPROBE_TIMEOUT_MS, then it runs all the same; a step not
 * monitored (its registration failed) is answered at once and says nothing.
 */
static void task_probe(spank_t sp, uint32_t job)
{
	char err[512], line[LINE_MAX_BYTES], name[PATH_MAX], path[4096], cluster[IOACCT_SHORT_MAX];
	uint32_t step = 0;
	char **argv = NULL;
	int argc = 0;

	if (spank_get_item(sp, S_JOB_STEPID, &step) || spank_get_item(sp, S_JOB_ARGV, &argc, &argv) ||
	    argc < 1 || !argv || !argv[0])
		return;
	env_or(sp, "SLURM_CLUSTER_NAME", cluster, sizeof(cluster), "");
	if (spank_getenv(sp, "PATH", path, sizeof(path)) != ESPANK_SUCCESS)
		path[0] = '\0';
	if (ioacct_exeprobe(socket_path(), argv[0], path[0] ? path : NULL, cluster, job, step,
			    IOACCT_EXEPROBE_TIMEOUT_MS, err, sizeof(err)))
		fprintf(stderr, "ioacct: %s not probed before it runs (HDF5 calls it makes at once "
			"may go uncounted): %s\n", ioacct_text_clean(name, sizeof(name), argv[0]),
			one_line(err, line));
}

/*
 * In the task, as the job's user, just before exec: its standard error is
 * the job's. The parent's registration result is not shared with this
 * process, so ask the daemon whether the job is watched.
 */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	struct ioacct_request req = { .type = IOACCT_MSG_SNAPSHOT };
	struct ioacct_reply rep;
	uint32_t job = 0, rank = 1;
	char err[512], line[LINE_MAX_BYTES];
	int ret;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || !monitored || spank_get_item(sp, S_JOB_ID, &job))
		return 0;
	task_probe(sp, job);
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) || rank != 0)
		return 0;
	req.u.query.job_id = job;
	env_or(sp, "SLURM_CLUSTER_NAME", req.u.query.cluster, sizeof(req.u.query.cluster), "");
	ret = ioacct_client_call(socket_path(), &req, &rep, CALL_TIMEOUT_MS, err, sizeof(err));
	if (ret == 0 && rep.status)
		snprintf(err, sizeof(err), "%s", rep.error);
	if (ret || rep.status)
		fprintf(stderr, "ioacct: I/O monitoring unavailable: %s\n", one_line(err, line));
	ioacct_reply_free(&rep);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	struct ioacct_request req = { .type = IOACCT_MSG_FINISH_STEP };
	struct ioacct_reply rep;
	uint32_t job = 0;
	char err[512], line[LINE_MAX_BYTES];
	int ret;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || !registered)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) || spank_get_item(sp, S_JOB_STEPID, &req.u.fin.step_id))
		return 0;
	req.u.fin.job_id = job;
	env_or(sp, "SLURM_CLUSTER_NAME", req.u.fin.cluster, sizeof(req.u.fin.cluster), "");
	ret = ioacct_client_call(socket_path(), &req, &rep, CALL_TIMEOUT_MS, err, sizeof(err));
	if (ret == 0 && rep.status)
		snprintf(err, sizeof(err), "%s", rep.error);
	if (ret || rep.status)
		slurm_error("ioacct: cannot finish job %u step %u: %s", job, req.u.fin.step_id,
			    one_line(err, line));
	ioacct_reply_free(&rep);
	return 0;
}

/* ---- epilog: finish the job and write its report ------------------------------------ */

/* The first line of a command's output, without its newline ("" when none). */
static void first_line(const char *cmd, char *line, size_t len)
{
	FILE *p = popen(cmd, "r");

	line[0] = '\0';
	if (!p)
		return;
	if (!fgets(line, (int)len, p))
		line[0] = '\0';
	pclose(p);
	line[strcspn(line, "\n")] = '\0';
}

/*
 * The job's final state as Slurm names it. During the epilog slurmctld still
 * shows the job as COMPLETING (the flag clears when the epilog is done), so
 * the state is taken when it is final, else derived: a signal ended the
 * script (ExitCode=N:SIG) means CANCELLED, or TIMEOUT when the time limit did.
 * *run: the run that ended (Slurm's restart count of it).
 */
static void job_final_state(char *state, size_t len, int32_t *exit_code, uint32_t *run)
{
	const char *id = getenv("SLURM_JOB_ID");
	char cmd[128], line[8192], st[32] = "", reason[64] = "", end[32] = "";
	int code = 0, sig = 0, restarts = 0;
	const char *f;

	snprintf(state, len, "COMPLETED");
	*exit_code = 0;
	*run = 0;
	if (!id || !*id || strspn(id, "0123456789") != strlen(id))
		return;
	snprintf(cmd, sizeof(cmd), "scontrol -o show job %s 2>/dev/null", id);
	first_line(cmd, line, sizeof(line));
	if ((f = strstr(line, " JobState=")))
		sscanf(f, " JobState=%31[A-Z_]", st);
	if ((f = strstr(line, " Reason=")))
		sscanf(f, " Reason=%63[A-Za-z_]", reason);
	if ((f = strstr(line, " ExitCode=")))
		sscanf(f, " ExitCode=%d:%d", &code, &sig);
	if ((f = strstr(line, " Restarts=")))
		sscanf(f, " Restarts=%d", &restarts);
	if ((f = strstr(line, " EndTime=")))
		sscanf(f, " EndTime=%31s", end);
	*exit_code = sig ? 128 + sig : code;
	/*
	 * Requeued while running (scontrol requeue, a node failure): the epilog
	 * sees the job COMPLETING like any other, but Slurm has already counted
	 * the restart and cleared the end for the next run. sacct says REQUEUED.
	 */
	*run = restarts > 0 ? (uint32_t)restarts : 0;
	if (strcmp(st, "COMPLETING") == 0 && restarts > 0 && strcmp(end, "Unknown") == 0) {
		snprintf(state, len, "REQUEUED");
		/* The run that ended is the one before the count Slurm shows now. */
		*run = (uint32_t)restarts - 1;
	}
	else if (st[0] && strcmp(st, "COMPLETING") && strcmp(st, "RUNNING"))
		snprintf(state, len, "%s", st);
	else if (sig)
		snprintf(state, len, "%s", strcmp(reason, "TimeLimit") == 0 ? "TIMEOUT" : "CANCELLED");
	else if (code)
		snprintf(state, len, "FAILED");
}

/* The report pattern: plugstack's report=, else next to the job's output. */
static void report_pattern(char *pattern, size_t len)
{
	if (conf.report[0])
		ioacct_strlcpy(pattern, conf.report, len);
	else
		ioacct_report_default_pattern(getenv("SLURM_JOB_STDOUT"), pattern, len);
}

static unsigned int report_formats(void)
{
	return mopts.formats ? mopts.formats : IOACCT_FMT(IOACCT_RENDER_TEXT);
}

/*
 * The job's nodes, comma-separated: SLURM_JOB_NODELIST (or SLURM_NODELIST)
 * when the epilog's environment has it, else the NodeList of `scontrol show
 * job`, run like job_final_state() runs it; `scontrol show hostnames` for a
 * list form the plugin does not expand itself. "" when unknown: then
 * nobody merges, and each node writes its own part.
 */
static void job_nodes(char *out, size_t len)
{
	const char *id = getenv("SLURM_JOB_ID"), *env = getenv("SLURM_JOB_NODELIST");
	char list[8192], line[8192], cmd[128];
	const char *f;
	size_t n = 0;
	FILE *p;
	int w;

	out[0] = list[0] = '\0';
	if (!env || !*env)
		env = getenv("SLURM_NODELIST");
	if (env && *env) {
		ioacct_strlcpy(list, env, sizeof(list));
	} else if (id && *id && strspn(id, "0123456789") == strlen(id)) {
		snprintf(cmd, sizeof(cmd), "scontrol -o show job %s 2>/dev/null", id);
		first_line(cmd, line, sizeof(line));
		if ((f = strstr(line, " NodeList=")))
			sscanf(f, " NodeList=%8191[^ ]", list);
	}
	if (!list[0] || strcmp(list, "(null)") == 0)
		return;
	if (ioacct_hostlist_expand(list, out, len) == 0)
		return;
	out[0] = '\0';
	if (strspn(list, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,[]") != strlen(list))
		return;
	snprintf(line, sizeof(line), "scontrol show hostnames '%s' 2>/dev/null", list);
	p = popen(line, "r");
	if (!p)
		return;
	while (fgets(cmd, sizeof(cmd), p)) {
		cmd[strcspn(cmd, "\n")] = '\0';
		if (!cmd[0])
			continue;
		w = snprintf(out + n, len - n, "%s%s", n ? "," : "", cmd);
		if (w < 0 || (size_t)w >= len - n) {
			out[0] = '\0';
			break;
		}
		n += (size_t)w;
	}
	pclose(p);
}

/* This node's part of the job: one report per node, named apart when the job has several. */
static void write_reports(const struct ioacct_jobdata *jd)
{
	const struct ioacct_job *job = &jd->job;
	struct ioacct_report_vars v = {
		.job_id = job->job_id, .has_array = job->has_array, .array_job_id = job->array_job_id,
		.array_task_id = job->array_task_id, .user = job->user, .job_name = job->name,
		.workdir = job->workdir[0] ? job->workdir : getenv("SLURM_JOB_WORK_DIR"),
		.node = job->node, .restart = job->restart,
	};
	const char *nnodes = getenv("SLURM_JOB_NUM_NODES");
	char pattern[PATH_MAX], expanded[PATH_MAX], err[512], line[LINE_MAX_BYTES];
	const char *part;

	report_pattern(pattern, sizeof(pattern));
	if (ioacct_report_path_expand(pattern, &v, expanded, sizeof(expanded), err, sizeof(err))) {
		slurm_error("ioacct: job %llu: no report written: %s", (unsigned long long)job->job_id,
			    one_line(err, line));
		return;
	}
	/* Each node's epilog writes what this node saw: name the parts apart. */
	part = nnodes && atoi(nnodes) > 1 && !strstr(pattern, "%N") ? job->node : NULL;
	/* A traced job's .darshan report carries the trace ioacctd spooled. */
	ioacct_report_write_files(jd, expanded, report_formats(), part, job->uid, job->gid,
				  conf.report_copy_dir, &cfg.advice, mopts.trace_max ? render_trace : NULL);
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	struct ioacct_request req = { .type = IOACCT_MSG_FINISH_JOB };
	struct ioacct_reply rep;
	struct ioacct_source src = { .timeout_ms = LOAD_TIMEOUT_MS };
	struct ioacct_jobdata *jd = NULL;
	const char *id = getenv("SLURM_JOB_ID"), *cluster = getenv("SLURM_CLUSTER_NAME"), *env;
	char *optval = NULL, err[1024], line[LINE_MAX_BYTES];
	int ret;

	load_conf(ac, av);
	src.socket_path = socket_path();
	if (spank_option_getopt(sp, &io_monitor_opt, &optval) == ESPANK_SUCCESS) {
		opt_cb(0, optval, 1);
		opt_given = true;
	}
	if ((!opt_given && !conf.default_on) || !id)
		return 0;
	req.u.fin.job_id = strtoull(id, NULL, 10);
	ioacct_strlcpy(req.u.fin.cluster, cluster ? cluster : "", sizeof(req.u.fin.cluster));
	job_final_state(req.u.fin.state, sizeof(req.u.fin.state), &req.u.fin.exit_code,
			&req.u.fin.restart);
	/*
	 * The report as this epilog would write it: the pattern (ioacctd expands
	 * it from the job it has, as write_reports() does here), the formats, the
	 * job's nodes. With a cluster store and several nodes ioacctd takes it
	 * over and one node writes one merged report.
	 */
	/* A traced job keeps its per-node .darshan reports, each with its node's trace. */
	if (!mopts.trace_max)
		report_pattern(req.u.fin.report.path, sizeof(req.u.fin.report.path));
	req.u.fin.report.formats = report_formats();
	job_nodes(req.u.fin.report.nodes, sizeof(req.u.fin.report.nodes));
	ioacct_strlcpy(req.u.fin.report.copy_dir, conf.report_copy_dir,
		       sizeof(req.u.fin.report.copy_dir));
	/* For a node where no step ran: its empty part (the epilog's own environment). */
	env = getenv("SLURM_JOB_UID");
	req.u.fin.uid = env ? (uint32_t)strtoul(env, NULL, 10) : 0;
	env = getenv("SLURM_JOB_GID");
	req.u.fin.gid = env ? (uint32_t)strtoul(env, NULL, 10) : 0;
	if (!env && req.u.fin.uid)
		user_gid(req.u.fin.uid, &req.u.fin.gid);
	env = getenv("SLURM_JOB_USER");
	ioacct_strlcpy(req.u.fin.user, env ? env : "", sizeof(req.u.fin.user));
	env = getenv("SLURMD_NODENAME");
	ioacct_strlcpy(req.u.fin.node_name, env ? env : "", sizeof(req.u.fin.node_name));
	env = getenv("SLURM_JOB_WORK_DIR");
	ioacct_strlcpy(req.u.fin.workdir, env ? env : "", sizeof(req.u.fin.workdir));
	ret = ioacct_client_call(socket_path(), &req, &rep, CALL_TIMEOUT_MS, err, sizeof(err));
	if (ret) {
		slurm_error("ioacct: cannot finish job %s: %s", id, one_line(err, line));
		return failure();
	}
	if (rep.status) {
		/* -ENOENT: never registered (the daemon was down); the user was told then. */
		bool never_registered = rep.status == -ENOENT;

		if (!never_registered)
			slurm_error("ioacct: cannot finish job %s: %s", id, one_line(rep.error, line));
		ioacct_reply_free(&rep);
		return never_registered ? 0 : failure();
	}
	if (!rep.report_merged && strchr(req.u.fin.report.nodes, ','))
		slurm_debug("ioacct: job %s: one report per node (no cluster store, or ioacctd did not take the report of nodes %s)",
			    id, req.u.fin.report.nodes);
	if (rep.report_merged) {
		slurm_info("ioacct: job %s: one merged report for its nodes (%s), written by ioacctd once every node's part is in the cluster store",
			   id, req.u.fin.report.nodes);
		ioacct_reply_free(&rep);
		return 0;
	}
	/* From the daemon, which knows where its store is: plugstack.conf needs only socket=. */
	if (ioacct_source_load_job(&src, NULL, 0, rep.job_key, &jd, err, sizeof(err))) {
		slurm_error("ioacct: job %s: cannot read it back: %s", id, one_line(err, line));
	} else {
		if (!jd->job.user[0])
			user_from_uid(jd->job.uid, jd->job.user, sizeof(jd->job.user));
		trace_epilog(jd);
		write_reports(jd);
		ioacct_jobdata_free(jd);
	}
	ioacct_reply_free(&rep);
	return 0;
}
