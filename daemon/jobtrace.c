// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sbatch --io-monitor=trace and spans: one tracer per traced job, its reads
 * and writes as DXT_POSIX records, spooled for the epilog when the job ends,
 * and its calls as OTLP spans (jobtrace.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "darshan.h"
#include "ioacct_ops.h"
#include "jobtrace.h"
#include "log.h"
#include "otlpsend.h"
#include "model.h"
#include "mpiprobes.h"
#include "otlp.h"
#include "tracer.h"
#include "util.h"

#define MAX_TASKS 4096
#define RANK_CACHE 1024
/* How far up the process tree a process may be from the task it belongs to. */
#define MAX_ANCESTRY 32
/* Steps of a job whose spans this node keeps apart (later ones share the last). */
#define MAX_STEPS 64
#define STEP_BATCH 4294967291u

struct task_rank {
	int32_t pid;
	int32_t rank;
	uint32_t step;
};

/* A step of a job with spans: its span's times (CLOCK_MONOTONIC), sent by its rank 0's node. */
struct span_step {
	uint32_t step;
	uint32_t cgroup;                 /* its cgroup's inode number (0: not known) */
	bool rank0;
	uint64_t start_ns, end_ns;       /* end_ns 0: not finished yet */
};

struct jobtrace {
	struct jobtrace *next;
	int64_t key;
	char cluster[IOACCT_SHORT_MAX];
	uint64_t job_id;
	uint32_t uid;                      /* the job's user: root's calls are Slurm's (0: kept) */
	struct ioacct_tracer *tracer;
	struct ioacct_darshan_log *dxt;    /* the DXT records and their names alone */
	char host[IOACCT_DARSHAN_DXT_HOSTNAME];
	char workdir[PATH_MAX];            /* relative paths are the job's working directory's */
	char cgroup[PATH_MAX];
	uint64_t max_segs;                 /* trace_max in segments */
	uint64_t max_bytes;
	uint64_t kept, dropped, nopath, failed;
	bool nomem, broken;
	struct task_rank tasks[MAX_TASKS]; /* registered tasks */
	size_t ntasks;
	struct task_rank cache[RANK_CACHE]; /* pid -> rank of the processes seen, 0: free */
	/* --io-monitor=spans: NULL when the job asked for none */
	struct ioacct_otlp *otlp;
	uint32_t spans;                    /* what its steps asked for: IOACCT_SPANS_* */
	uint64_t max_calls, calls, capped; /* call spans: max_spans, made, past it (not sent) */
	struct ioacct_otlp_ids ids;
	uint64_t start_mono_ns;
	uint32_t restart;
	struct span_step steps[MAX_STEPS];
	size_t nsteps;
};

struct ioacct_jobtraces {
	const struct ioacct_config *cfg;
	struct jobtrace *jobs;
	uint32_t njobs;
};

struct ioacct_jobtraces *ioacct_jobtraces_create(const struct ioacct_config *cfg)
{
	struct ioacct_jobtraces *t = calloc(1, sizeof(*t));

	if (t) {
		t->cfg = cfg;
		/* The spans leave through an unprivileged process (issue 37). */
		ioacct_otlpsend_start(cfg);
	}
	return t;
}

static void spans_finish(struct jobtrace *j);

static void jobtrace_free(struct jobtrace *j)
{
	spans_finish(j);
	ioacct_tracer_close(j->tracer);
	ioacct_darshan_free(j->dxt);
	free(j);
}

void ioacct_jobtraces_destroy(struct ioacct_jobtraces *t)
{
	if (!t)
		return;
	while (t->jobs) {
		struct jobtrace *j = t->jobs;

		t->jobs = j->next;
		log_warn("job %s/%" PRIu64 ": trace abandoned (ioacctd stops)", j->cluster, j->job_id);
		jobtrace_free(j);
	}
	ioacct_otlpsend_stop();
	free(t);
}

static struct jobtrace **lookup(struct ioacct_jobtraces *t, int64_t key)
{
	struct jobtrace **j = &t->jobs;

	while (*j && (*j)->key != key)
		j = &(*j)->next;
	return j;
}

/* ---- ranks: which task a process is of, by its ancestry ------------------------------- */

static const struct task_rank *registered(const struct jobtrace *j, int32_t pid)
{
	for (size_t i = 0; i < j->ntasks; i++)
		if (j->tasks[i].pid == pid)
			return &j->tasks[i];
	return NULL;
}

static int32_t parent_pid(int32_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, the last ')' ends it. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/*
 * The task (rank and step) process `pid` descends from. A process gone
 * before its events were read has no ancestry left: with one task on the
 * node it is that task's, else rank 0 of the last step registered. Cached
 * per pid either way: a process's events come in runs.
 */
static const struct task_rank *task_of(struct jobtrace *j, int32_t pid)
{
	struct task_rank *c = &j->cache[(uint32_t)pid % RANK_CACHE];
	const struct task_rank *t = NULL;
	int32_t p = pid;

	if (c->pid == pid)
		return c;
	for (int i = 0; i < MAX_ANCESTRY && p > 1 && !t; i++) {
		t = registered(j, p);
		if (!t)
			p = parent_pid(p);
	}
	if (t) {
		*c = *t;
	} else {
		c->rank = j->ntasks == 1 ? j->tasks[0].rank : 0;
		c->step = j->ntasks ? j->tasks[j->ntasks - 1].step : 0;
	}
	c->pid = pid;
	return c;
}

/* ---- spans: ids, the job's and the steps' spans ----------------------------------------- */

/* FNV-1a over the bytes, from `seed`, then splitmix64's finaliser: ids spread over 64 bits. */
static uint64_t hash64(uint64_t seed, const char *s, size_t len)
{
	uint64_t h = seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return (h ^ (h >> 31)) | 1; /* never 0: 0 is "no span" */
}

#define SEED_TRACE_HI 0xcbf29ce484222325ULL
#define SEED_TRACE_LO 0x84222325cbf29ce4ULL
#define SEED_SPAN 0x9e3779b97f4a7c15ULL

/*
 * The trace and parent span ids of run `restart` of job `cluster/job`: the
 * same on every node of the job, so that its nodes' spans make one trace.
 * step < 0: the job's span.
 */
static void job_ids(const char *cluster, uint64_t job, uint32_t restart, int64_t step,
		    uint8_t trace_id[16], uint64_t *span)
{
	char key[IOACCT_SHORT_MAX + 64];
	int n = snprintf(key, sizeof(key), "%s/%" PRIu64 "/%u", cluster, job, restart);
	uint64_t hi = hash64(SEED_TRACE_HI, key, (size_t)n);
	uint64_t lo = hash64(SEED_TRACE_LO, key, (size_t)n);

	for (int i = 0; i < 8; i++) {
		trace_id[i] = (uint8_t)(hi >> (56 - 8 * i));
		trace_id[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	if (step >= 0)
		n += snprintf(key + n, sizeof(key) - (size_t)n, "/step/%" PRId64, step);
	*span = hash64(SEED_SPAN, key, (size_t)n);
}

static uint64_t step_span(const struct jobtrace *j, uint32_t step)
{
	uint8_t trace_id[16];
	uint64_t id;

	job_ids(j->cluster, j->job_id, j->restart, step, trace_id, &id);
	return id;
}

static struct span_step *span_step(struct jobtrace *j, uint32_t step)
{
	for (size_t i = 0; i < j->nsteps; i++)
		if (j->steps[i].step == step)
			return &j->steps[i];
	if (j->nsteps == MAX_STEPS)
		return &j->steps[MAX_STEPS - 1];
	j->steps[j->nsteps].step = step;
	j->steps[j->nsteps].start_ns = ioacct_mono_ns();
	return &j->steps[j->nsteps++];
}

static uint64_t real_of(const struct jobtrace *j, uint64_t mono_ns)
{
	return j->ids.real0_ns + (mono_ns - j->start_mono_ns);
}

static void step_name(const struct jobtrace *j, uint32_t step, char *buf, size_t len)
{
	if (step == STEP_BATCH)
		snprintf(buf, len, "step %" PRIu64 ".batch", j->job_id);
	else
		snprintf(buf, len, "step %" PRIu64 ".%u", j->job_id, step);
}

/* The sender's last line, from its thread: the daemon's log. */
static void spans_done(void *arg, const char *msg, uint64_t dropped)
{
	char *label = arg;

	if (dropped)
		log_warn("%s: spans: %s", label, msg);
	else
		log_info("%s: spans: %s", label, msg);
	free(label);
}

/*
 * The step spans of the steps whose rank 0 ran here, and the job's span
 * where rank 0 of its batch step ran (or of step 0, for a job without a
 * batch step here: iorun, salloc), then the rest sent without waiting.
 */
static void spans_finish(struct jobtrace *j)
{
	uint64_t now = ioacct_mono_ns(), end = now;
	bool batch = false, job_span = false;
	char name[96], *label;

	if (!j->otlp)
		return;
	for (size_t i = 0; i < j->nsteps; i++)
		batch |= j->steps[i].step == STEP_BATCH;
	for (size_t i = 0; i < j->nsteps; i++) {
		struct span_step *st = &j->steps[i];

		if (!st->rank0)
			continue;
		step_name(j, st->step, name, sizeof(name));
		ioacct_otlp_add_parent(j->otlp, step_span(j, st->step), j->ids.root_id, name,
				       real_of(j, st->start_ns),
				       real_of(j, st->end_ns ? st->end_ns : now), st->step);
		job_span |= st->step == (batch ? STEP_BATCH : 0);
	}
	if (job_span) {
		snprintf(name, sizeof(name), "job %" PRIu64, j->job_id);
		ioacct_otlp_add_parent(j->otlp, j->ids.root_id, 0, name, j->ids.real0_ns,
				       real_of(j, end), -1);
	}
	if (asprintf(&label, "job %s/%" PRIu64, j->cluster, j->job_id) < 0)
		label = NULL;
	if (j->capped)
		log_warn("job %s/%" PRIu64 ": spans: %" PRIu64 " calls past max_spans (%" PRIu64
			 ") not sent", j->cluster, j->job_id, j->capped, j->max_calls);
	ioacct_otlp_finish(j->otlp, label ? spans_done : NULL, label);
	j->otlp = NULL;
}

/* The step whose cgroup the call was made in; NULL when none is known by it. */
static const struct span_step *step_by_cgroup(const struct jobtrace *j, uint32_t cgroup)
{
	for (size_t i = 0; cgroup && i < j->nsteps; i++)
		if (j->steps[i].cgroup == cgroup)
			return &j->steps[i];
	return NULL;
}

/* The rank of step's only task on this node; -1 when it has several or none. */
static int32_t only_rank(const struct jobtrace *j, uint32_t step)
{
	int32_t rank = -1;
	size_t n = 0;

	for (size_t i = 0; i < j->ntasks; i++)
		if (j->tasks[i].step == step && n++ == 0)
			rank = j->tasks[i].rank;
	return n == 1 ? rank : -1;
}

/* One more call span: false past the job's max_spans on this node (counted, not sent). */
static bool span_room(struct jobtrace *j)
{
	if (j->calls >= j->max_calls) {
		j->capped++;
		return false;
	}
	j->calls++;
	return true;
}

static void span_call(struct jobtrace *j, const struct ioacct_trace_rec *r)
{
	const struct task_rank *t = task_of(j, (int32_t)r->pid);
	const struct span_step *st = step_by_cgroup(j, r->cgroup);
	struct ioacct_otlp_call c = { .step = t->step, .rank = t->rank, .node = j->host };

	/*
	 * The cgroup names the step even for a process gone before its events
	 * were read (its ancestry lost); the rank is then its step's only task's.
	 */
	if (st && st->step != t->step) {
		int32_t rank = only_rank(j, st->step);

		c.step = st->step;
		c.rank = rank >= 0 ? rank : 0;
	}
	c.parent = step_span(j, (uint32_t)c.step);
	if (span_room(j))
		ioacct_otlp_add_call(j->otlp, r, &c);
}

/* ---- events ------------------------------------------------------------------------- */

static void dxt_event(struct jobtrace *j, const struct ioacct_trace_rec *r)
{
	bool write = r->op == IOACCT_OP_WRITE;
	int64_t rank;

	if (r->op != IOACCT_OP_READ && !write)
		return;
	/* Darshan traces the reads and writes that did not fail, of 0 bytes too. */
	if (r->ret < 0) {
		j->failed++;
		return;
	}
	/* An fd opened before the trace (stdin, inherited): no file to name. */
	if (!r->path[0]) {
		j->nopath++;
		return;
	}
	if (j->kept >= j->max_segs) {
		j->dropped++;
		return;
	}
	rank = task_of(j, (int32_t)r->pid)->rank;
	if (ioacct_darshan_dxt_add_call(j->dxt, r->path, j->workdir, rank, j->host, write, r->offset,
					r->ret, r->start_ns, r->dur_ns)) {
		j->nomem = true;
		j->dropped++;
		return;
	}
	j->kept++;
}

static void on_event(void *ctx, const struct ioacct_trace_rec *r)
{
	struct jobtrace *j = ctx;

	/*
	 * The job's tasks run as its user; Slurm's own processes in the job's
	 * cgroup (slurmstepd, freezing and emptying it) as root: not the job's.
	 */
	if (j->uid && r->uid != j->uid)
		return;
	if (j->otlp && (j->spans & IOACCT_SPANS_POSIX))
		span_call(j, r);
	if (j->max_segs)
		dxt_event(j, r);
}

/* ---- start ---------------------------------------------------------------------------- */

/* A Slurm step's cgroup (".../job_J/step_S"): the job's directory; else the cgroup itself. */
static void job_dir(const char *cgroup, char *out, size_t len)
{
	const char *base = strrchr(cgroup, '/');

	ioacct_strlcpy(out, cgroup, len);
	if (base && !strncmp(base + 1, "step_", 5)) {
		char *slash = strrchr(out, '/');
		const char *parent = slash ? memrchr(out, '/', (size_t)(slash - out)) : NULL;

		if (parent && !strncmp(parent + 1, "job_", 4))
			*slash = '\0';
	}
}

static int add_task(struct jobtrace *j, const struct ioacct_req_register *req,
		    const char *cgroup)
{
	struct span_step *st = j->otlp ? span_step(j, req->step_id) : NULL;
	struct stat sb;

	if (st && req->task_rank <= 0)
		st->rank0 = true;
	if (st && !st->cgroup && !stat(cgroup, &sb))
		st->cgroup = (uint32_t)sb.st_ino;
	if (req->pid <= 0 || registered(j, req->pid))
		return 0;
	if (j->ntasks >= MAX_TASKS)
		return -ENOSPC;
	j->tasks[j->ntasks].pid = req->pid;
	j->tasks[j->ntasks].rank = req->task_rank < 0 ? 0 : req->task_rank;
	j->tasks[j->ntasks].step = req->step_id;
	j->ntasks++;
	return 0;
}

/* Why the job has no trace or no spans, in the reply's fields for what it asked. */
__attribute__((format(printf, 4, 5)))
static int refuse(const struct ioacct_req_register *req, struct ioacct_reply *rep, int ret,
		  const char *fmt, ...)
{
	char msg[sizeof(rep->trace_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (req->trace_max)
		ioacct_strlcpy(rep->trace_error, msg, sizeof(rep->trace_error));
	if (req->spans)
		ioacct_strlcpy(rep->spans_error, msg, sizeof(rep->spans_error));
	return ret;
}

/* The job's OTLP exporter; 0 or -errno with why not in rep->spans_error. */
static int spans_open(const struct ioacct_jobtraces *t, struct jobtrace *j,
		      const struct ioacct_req_register *req, uint64_t start_mono_ns,
		      struct ioacct_reply *rep)
{
	char err[512];
	uint64_t mono = ioacct_mono_ns();
	int ret;

	if (!t->cfg->otlp_url[0])
		return ioacct_seterr(rep->spans_error, sizeof(rep->spans_error), -ENOTCONN,
				     "no spans: otlp_url is not set in ioacct.conf on node %s",
				     j->host);
	job_ids(j->cluster, j->job_id, req->restart, -1, j->ids.trace_id, &j->ids.root_id);
	if (getrandom(&j->ids.span_seed, sizeof(j->ids.span_seed), 0) !=
	    sizeof(j->ids.span_seed))
		j->ids.span_seed = mono ^ (uint64_t)getpid() << 32;
	/* Call spans are span_seed + n, n >= 1: random per node, never 0. */
	j->ids.span_seed = (j->ids.span_seed | 1ULL << 63) & ~0xffffffffULL;
	j->ids.real0_ns = (uint64_t)ioacct_wall_ns() - (mono - start_mono_ns);
	j->ids.job = j->job_id;
	j->max_calls = t->cfg->max_spans;
	j->restart = req->restart;
	j->start_mono_ns = start_mono_ns;
	ret = ioacct_otlp_open_with(&j->otlp, t->cfg->otlp_url, &j->ids, j->host,
				    (size_t)t->cfg->otlp_queue_kib << 10, IOACCT_OTLP_TIMEOUT_MS,
				    ioacct_otlpsend_post, NULL, err, sizeof(err));
	if (ret)
		return ioacct_seterr(rep->spans_error, sizeof(rep->spans_error), ret,
				     "no spans: otlp_url: %s", err);
	return 0;
}

int ioacct_jobtraces_register(struct ioacct_jobtraces *t, int64_t key, const char *cluster,
			      const char *node, const char *workdir, uint64_t start_mono_ns,
			      const struct ioacct_req_register *req, const char *cgroup,
			      uint32_t hier, struct ioacct_reply *rep)
{
	struct jobtrace **slot = lookup(t, key), *j = *slot;
	struct ioacct_tracer_target tg;
	char dir[PATH_MAX], terr[1024];
	int ret;

	if (j) {
		/* A later step: in the traced directory, or not traced (said, once per step). */
		size_t n = strlen(j->cgroup);

		if (strncmp(cgroup, j->cgroup, n) || (cgroup[n] && cgroup[n] != '/'))
			return refuse(req, rep, -EXDEV, "step %u is in cgroup %s, not below the "
				      "traced %s", req->step_id, cgroup, j->cgroup);
		if (req->spans && !j->otlp)
			ioacct_strlcpy(rep->spans_error, "no spans: the job's first step here "
				       "asked for none", sizeof(rep->spans_error));
		if (j->otlp)
			j->spans |= req->spans;
		return add_task(j, req, cgroup);
	}
	if (t->njobs >= t->cfg->max_traced_jobs)
		return refuse(req, rep, -EBUSY, t->cfg->max_traced_jobs ?
			      "%u jobs are traced on this node already (max_traced_jobs)" :
			      "traces are off on this node (max_traced_jobs = %u)",
			      t->cfg->max_traced_jobs);
	job_dir(cgroup, dir, sizeof(dir));
	ret = ioacct_tracer_target(dir, hier == IOACCT_HIER_V1 ? t->cfg->cgroup_v1_hierarchy : NULL,
				   &tg, terr, sizeof(terr));
	if (ret)
		return refuse(req, rep, ret, "%s", terr);
	j = calloc(1, sizeof(*j));
	if (!j || !(j->dxt = calloc(1, sizeof(*j->dxt)))) {
		free(j);
		return refuse(req, rep, -ENOMEM, "out of memory");
	}
	j->key = key;
	j->job_id = req->job_id;
	j->uid = req->uid;
	ioacct_strlcpy(j->cluster, cluster, sizeof(j->cluster));
	ioacct_strlcpy(j->host, node, sizeof(j->host));
	ioacct_strlcpy(j->workdir, workdir, sizeof(j->workdir));
	ioacct_strlcpy(j->cgroup, dir, sizeof(j->cgroup));
	/* The site's cap on what one job keeps in the daemon's memory. */
	j->max_bytes = req->trace_max < (uint64_t)t->cfg->max_trace_mib << 20 ?
		       req->trace_max : (uint64_t)t->cfg->max_trace_mib << 20;
	j->max_segs = j->max_bytes / IOACCT_DARSHAN_DXT_SEG;
	/* Spans that cannot be sent leave the DXT trace, if asked for; else nothing runs. */
	j->spans = req->spans;
	if (req->spans && spans_open(t, j, req, start_mono_ns, rep) && !j->max_segs) {
		jobtrace_free(j);
		return -ENOTCONN;
	}
	add_task(j, req, cgroup);
	ret = ioacct_tracer_open(&j->tracer, "ioacctd", &tg, 0, IOACCT_JOBTRACE_BUFFER,
				 start_mono_ns, on_event, j, terr, sizeof(terr));
	if (ret) {
		j->nsteps = 0; /* no step nor job span for a job that had no tracer */
		jobtrace_free(j);
		return refuse(req, rep, ret, "%s", terr);
	}
	*slot = j;
	t->njobs++;
	log_info("job %s/%" PRIu64 ": tracing %s (cgroup %s; at most %" PRIu64 " bytes of DXT "
		 "segments; %s%s)", cluster, req->job_id, dir, hier == IOACCT_HIER_V1 ? "v1" : "v2",
		 j->max_bytes, j->otlp ? "spans to " : "no spans",
		 j->otlp ? t->cfg->otlp_url : "");
	return 0;
}

void ioacct_jobtraces_mpi_call(struct ioacct_jobtraces *t, int64_t key, uint32_t step_id,
			       const struct ioacct_mpi_call *c)
{
	struct jobtrace *j = t ? *lookup(t, key) : NULL;
	struct ioacct_otlp_call oc = { .step = step_id, .node = j ? j->host : NULL };
	struct ioacct_otlp_mpi m;

	if (!j || !j->otlp || !(j->spans & IOACCT_SPANS_MPIIO) || !span_room(j))
		return;
	/* The launcher's rank, else the task the process descends from. */
	oc.rank = c->rank >= 0 ? c->rank : task_of(j, (int32_t)c->tgid)->rank;
	oc.parent = step_span(j, step_id);
	m = (struct ioacct_otlp_mpi){
		.func = c->func, .path = c->path, .start_ns = real_of(j, c->start_ns),
		.end_ns = real_of(j, c->end_ns), .offset = c->offset, .bytes = c->bytes,
		.result = c->result, .pid = c->tgid, .tid = c->pid, .collective = c->collective,
	};
	ioacct_otlp_add_mpi(j->otlp, &m, &oc);
}

void ioacct_jobtraces_step_end(struct ioacct_jobtraces *t, int64_t key, uint32_t step_id)
{
	struct jobtrace *j = t ? *lookup(t, key) : NULL;

	for (size_t i = 0; j && j->otlp && i < j->nsteps; i++)
		if (j->steps[i].step == step_id)
			j->steps[i].end_ns = ioacct_mono_ns();
}

/* ---- the event loop ------------------------------------------------------------------------ */

static void drain(struct jobtrace *j, bool all)
{
	int ret;

	if (j->broken)
		return;
	ret = all ? ioacct_tracer_drain(j->tracer) : ioacct_tracer_poll(j->tracer, 0);
	if (ret) {
		log_err("job %s/%" PRIu64 ": reading its trace: %s; the trace ends here", j->cluster,
			j->job_id, strerror(-ret));
		j->broken = true;
	}
}

void ioacct_jobtraces_poll(struct ioacct_jobtraces *t)
{
	for (struct jobtrace *j = t->jobs; j; j = j->next)
		drain(j, false);
}

bool ioacct_jobtraces_active(const struct ioacct_jobtraces *t)
{
	return t && t->jobs;
}

/* ---- end: the trace spooled for the epilog ------------------------------------------------- */

/* The spool file's name, its directory made. 0 or -errno (logged). */
static int spool_prepare(const struct ioacct_jobtraces *t, const struct jobtrace *j, char *path,
			 size_t len)
{
	char dir[PATH_MAX];
	int ret;

	ret = ioacct_darshan_spool_path(t->cfg->db_path, j->cluster, j->job_id, path, len);
	if (ret) {
		log_err("job %s/%" PRIu64 ": no spool file name for its trace: %s", j->cluster,
			j->job_id, strerror(-ret));
		return ret;
	}
	ioacct_strlcpy(dir, path, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	ret = ioacct_mkdir_p(dir, 0700, false);
	if (ret)
		log_err("job %s/%" PRIu64 ": cannot make the trace spool %s: %s", j->cluster,
			j->job_id, dir, strerror(-ret));
	return ret;
}

/* Writes the trace (compressing it takes seconds for millions of segments) and says so. */
static void spool_write(struct jobtrace *j, const char *path, uint64_t lost)
{
	char err[PATH_MAX + 512];
	uint64_t nw = 0, nr = 0, t0 = ioacct_mono_ns();

	for (size_t i = 0; i < j->dxt->ndxt; i++) {
		nw += j->dxt->dxt[i].nwrites;
		nr += j->dxt->dxt[i].nreads;
	}
	if (ioacct_darshan_write_file(j->dxt, path, err, sizeof(err))) {
		log_err("job %s/%" PRIu64 ": cannot spool its trace: %s", j->cluster, j->job_id, err);
		return;
	}
	log_info("job %s/%" PRIu64 ": trace spooled in %s: %" PRIu64 " writes and %" PRIu64
		 " reads in %zu DXT records; %" PRIu64 " events lost (ring buffer full), %" PRIu64
		 " dropped (past trace_max=%" PRIu64 "%s); %" PRIu64 " ms", j->cluster, j->job_id,
		 path, nw, nr, j->dxt->ndxt, lost, j->dropped, j->max_bytes,
		 j->nomem ? ", or out of memory" : "", (ioacct_mono_ns() - t0) / 1000000);
}

/*
 * Spools in a grandchild, so that the event loop goes on serving the node's
 * other jobs meanwhile; the pending marker tells the epilog to wait for it.
 * Without a marker or a fork, here and now.
 */
static void spool(struct jobtrace *j, const char *path, uint64_t lost)
{
	char pending[PATH_MAX + 16];
	int fd, status = 0;
	pid_t pid;

	snprintf(pending, sizeof(pending), "%s" IOACCT_DARSHAN_SPOOL_PENDING, path);
	fd = open(pending, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		spool_write(j, path, lost);
		return;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		pid_t g = fork();

		if (g == 0) {
			/* This job's programs are detached with the daemon's copy. */
			ioacct_tracer_close(j->tracer);
			j->tracer = NULL;
			spool_write(j, path, lost);
			unlink(pending);
			_exit(0);
		}
		_exit(g < 0 ? 1 : 0);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		spool_write(j, path, lost);
		unlink(pending);
	}
}

/* Job `key`'s trace taken out of the list; NULL when it has none. */
static struct jobtrace *take(struct ioacct_jobtraces *t, int64_t key)
{
	struct jobtrace **slot = t ? lookup(t, key) : NULL, *j = slot ? *slot : NULL;

	if (j) {
		*slot = j->next;
		t->njobs--;
	}
	return j;
}

void ioacct_jobtraces_end(struct ioacct_jobtraces *t, int64_t key)
{
	struct jobtrace *j = take(t, key);
	char path[PATH_MAX];
	uint64_t lost;
	size_t mlen;

	if (!j)
		return;
	drain(j, true);
	lost = ioacct_tracer_lost(j->tracer);
	if (lost && j->otlp)
		log_warn("job %s/%" PRIu64 ": %" PRIu64 " calls lost (ring buffer full): no span "
			 "for them", j->cluster, j->job_id, lost);
	spans_finish(j);
	if (!j->max_segs) {
		jobtrace_free(j);
		return;
	}
	j->dxt->jobid = (int64_t)j->job_id;
	mlen = strnlen(j->dxt->metadata, sizeof(j->dxt->metadata));
	snprintf(j->dxt->metadata + mlen, sizeof(j->dxt->metadata) - mlen,
		 "trace_events=%" PRIu64 "\ntrace_lost=%" PRIu64 "\ntrace_dropped=%" PRIu64
		 "\ntrace_max=%" PRIu64 "\ntrace_nopath=%" PRIu64 "\ntrace_failed=%" PRIu64 "\n%s",
		 ioacct_tracer_events(j->tracer), lost, j->dropped, j->max_bytes, j->nopath, j->failed,
		 j->broken ? "trace_broken=1\n" : "");
	if (!spool_prepare(t, j, path, sizeof(path)))
		spool(j, path, lost);
	jobtrace_free(j);
}

void ioacct_jobtraces_forget(struct ioacct_jobtraces *t, int64_t key)
{
	struct jobtrace *j = take(t, key);

	if (!j)
		return;
	log_info("job %s/%" PRIu64 ": trace dropped with its registration", j->cluster, j->job_id);
	jobtrace_free(j);
}
