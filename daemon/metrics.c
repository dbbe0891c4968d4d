// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /metrics for Prometheus: see metrics.h for why the text is built in the
 * main loop and served from a copy. Prometheus text format 0.0.4; the names
 * are documented in ioacctd(8).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "metrics.h"
#include "mserver.h"
#include "model.h"
#include "probes.h"
#include "text.h"
#include "util.h"

/* A growing text buffer; `failed` once an allocation failed, then it stays so. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = b->cap ? b->cap * 2 : 4096;
		while (ncap - b->len <= (size_t)n)
			ncap *= 2;
		char *np = realloc(b->p, ncap);
		if (!np) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
}

/*
 * Whether the UTF-8 sequence s of n bytes goes into a label value as
 * U+FFFD: bytes that are not UTF-8 (one bad mount path must not make the
 * node's whole page unreadable to Prometheus), and the control characters
 * the format cannot escape (C0 but the newline, DEL, C1): a CR, an ESC or a
 * BEL in a path must not reach the terminal of whoever curls the page.
 */
static bool label_replaced(const unsigned char *s, size_t n, bool valid)
{
	return !valid || (n == 1 && ((*s < 0x20 && *s != '\n') || *s == 0x7f)) ||
	       (n == 2 && s[0] == 0xc2 && s[1] < 0xa0);
}

/*
 * A label value: U+FFFD where label_replaced() says, then backslash,
 * double quote and newline escaped, as the format wants.
 */
static void sb_label(struct sbuf *b, const char *name, const char *value, bool comma)
{
	const unsigned char *s = (const unsigned char *)value;

	sb_printf(b, "%s%s=\"", comma ? "," : "", name);
	while (*s) {
		bool valid;
		size_t n = ioacct_utf8_seq(s, &valid);

		if (label_replaced(s, n, valid))
			sb_printf(b, "%s", IOACCT_UTF8_REPLACEMENT);
		else if (*s == '\\')
			sb_printf(b, "\\\\");
		else if (*s == '"')
			sb_printf(b, "\\\"");
		else if (*s == '\n')
			sb_printf(b, "\\n");
		else
			sb_printf(b, "%.*s", (int)n, (const char *)s);
		s += n;
	}
	sb_printf(b, "\"");
}

static void sb_free(struct sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ns as seconds, exactly: "12.000345678". */
static void sb_seconds(struct sbuf *b, uint64_t ns)
{
	sb_printf(b, "%llu.%09llu", (unsigned long long)(ns / NSEC_PER_SEC),
		  (unsigned long long)(ns % NSEC_PER_SEC));
}

/* The families of a job's series, in the order they are exposed. */
enum fam {
	F_READ_BYTES,
	F_WRITE_BYTES,
	F_CALLS,
	F_ERRORS,
	F_ERROR_CLASS,
	F_SECONDS,
	F_SIZE,
	F_RPC_CALLS,        /* issue 40: the job's own RPCs, per procedure, ... */
	F_RPC_SENT,
	F_RPC_RECV,
	F_RPC_QUEUE,
	F_RPC_RTT,
	F_RPC_EXEC,
	F_RPC_ERRORS,
	F_RPC_RETRANS,      /* ... to here, in IOACCT_RPC_COUNTERS' order */
	F_RPC_UNATTR,       /* the RPCs on the step's mounts that no job sent: calls, */
	F_RPC_UNATTR_SENT,  /* bytes sent, */
	F_RPC_UNATTR_RECV,  /* bytes received */
	F_DROPPED_EVENTS,
	F_DROPPED_BYTES,
	F_START,
	F_RUNNING,
	NFAM,
};

static const struct {
	const char *name, *type, *help;
} fams[NFAM] = {
	[F_READ_BYTES] = { "ioacct_read_bytes_total", "counter",
			   "Bytes read by the job step on the mount." },
	[F_WRITE_BYTES] = { "ioacct_write_bytes_total", "counter",
			    "Bytes written by the job step on the mount." },
	[F_CALLS] = { "ioacct_calls_total", "counter",
		      "Calls of the operation by the job step on the mount, failed ones included." },
	[F_ERRORS] = { "ioacct_errors_total", "counter",
		       "Failed calls of the operation by the job step on the mount." },
	[F_ERROR_CLASS] = { "ioacct_error_class_total", "counter",
			    "Failed calls by error class (notfound, access, space, io, other); "
			    "only the classes that occurred." },
	[F_SECONDS] = { "ioacct_io_seconds_total", "counter",
			"Time spent in calls of the operation by the job step on the mount." },
	[F_SIZE] = { "ioacct_request_size_bytes", "histogram",
		     "Sizes of the read and write requests (Darshan's access-size bins)." },
	[F_RPC_CALLS] = { "ioacct_rpc_calls_total", "counter",
			  "RPCs of the procedure the job step sent to the mount's server." },
	[F_RPC_SENT] = { "ioacct_rpc_sent_bytes_total", "counter",
			 "Bytes those RPCs sent, as mountstats counts them (headers included)." },
	[F_RPC_RECV] = { "ioacct_rpc_received_bytes_total", "counter",
			 "Bytes their replies brought, as mountstats counts them." },
	[F_RPC_QUEUE] = { "ioacct_rpc_queue_seconds_total", "counter",
			  "Time those RPCs waited to be sent (mountstats' backlog)." },
	[F_RPC_RTT] = { "ioacct_rpc_rtt_seconds_total", "counter",
			"Time from sending those RPCs to their replies." },
	[F_RPC_EXEC] = { "ioacct_rpc_execute_seconds_total", "counter",
			 "Time from submitting those RPCs to their end." },
	[F_RPC_ERRORS] = { "ioacct_rpc_errors_total", "counter",
			   "Those RPCs that ended in an error." },
	[F_RPC_RETRANS] = { "ioacct_rpc_retransmissions_total", "counter",
			    "Retransmissions of those RPCs." },
	[F_RPC_UNATTR] = { "ioacct_rpc_unattributed_calls_total", "counter",
			   "RPCs of the procedure on the step's mount during the step that no job "
			   "sent (writeback nobody is known for, the NFSv4 state manager's)." },
	[F_RPC_UNATTR_SENT] = { "ioacct_rpc_unattributed_sent_bytes_total", "counter",
				"Bytes those RPCs that no job sent sent." },
	[F_RPC_UNATTR_RECV] = { "ioacct_rpc_unattributed_received_bytes_total", "counter",
				"Bytes the replies to those RPCs that no job sent brought." },
	[F_DROPPED_EVENTS] = { "ioacct_dropped_events_total", "counter",
			       "Events of the job not counted because a kernel map was full." },
	[F_DROPPED_BYTES] = { "ioacct_dropped_bytes_total", "counter",
			      "Bytes of the job's dropped events." },
	[F_START] = { "ioacct_job_start_time_seconds", "gauge",
		      "Start of the job, seconds since the epoch." },
	[F_RUNNING] = { "ioacct_job_running", "gauge",
			"1 while the job runs, 0 during metrics_linger after its end." },
};

/* One job's part of the text, family by family: families must not be interleaved. */
struct mjob {
	int64_t key;
	struct sbuf f[NFAM];
	bool running;
	bool seen;
	uint64_t gone_ms;            /* CLOCK_MONOTONIC when it was seen finished */
	uint64_t dropped_events;
	struct mjob *next;
};

struct ioacct_metrics {
	const struct ioacct_config *cfg;
	struct mjob *jobs;
	/* Self metrics. */
	uint64_t drains;
	uint64_t drain_ns_total;
	uint64_t last_drain_ns;
	uint64_t last_build_ns;
	uint64_t builds_failed;
	struct ioacct_mserver *server; /* serves the pages, from an unprivileged process */
};

static void mjob_free(struct mjob *mj)
{
	for (int i = 0; i < NFAM; i++)
		sb_free(&mj->f[i]);
	free(mj);
}

/* `{cluster=..,job_id=..,user=..` without the closing brace. */
static void job_labels(struct sbuf *b, const struct ioacct_job *job)
{
	char id[32];

	snprintf(id, sizeof(id), "%llu", (unsigned long long)job->job_id);
	sb_printf(b, "{");
	sb_label(b, "cluster", job->cluster, false);
	sb_label(b, "job_id", id, true);
	sb_label(b, "user", job->user[0] ? job->user : "?", true);
}

static void mount_labels(struct sbuf *b, const struct ioacct_job *job, uint32_t step_id,
			 const struct ioacct_mount *m)
{
	char step[32];

	job_labels(b, job);
	sb_label(b, "step", ioacct_step_name(step_id, step, sizeof(step)), true);
	sb_label(b, "mount", m->path, true);
	sb_label(b, "fstype", m->fstype[0] ? m->fstype : "?", true);
}

static void row_labels(struct sbuf *b, const struct ioacct_job *job,
		       const struct ioacct_snap_row *row)
{
	mount_labels(b, job, row->step_id, &row->mount);
}

static void row_sample(struct sbuf *b, const char *name, const struct ioacct_job *job,
		       const struct ioacct_snap_row *row, bool with_op)
{
	sb_printf(b, "%s", name);
	row_labels(b, job, row);
	if (with_op)
		sb_label(b, "op", ioacct_op_name(row->op), true);
}

/* One (step, mount, op) of a job: its lines in each family. */
static void render_row(struct mjob *mj, const struct ioacct_job *job,
		       const struct ioacct_snap_row *row)
{
	const struct ioacct_counters *c = &row->c;

	if (row->op == IOACCT_OP_READ || row->op == IOACCT_OP_WRITE) {
		struct sbuf *b = &mj->f[row->op == IOACCT_OP_READ ? F_READ_BYTES : F_WRITE_BYTES];
		uint64_t cum = 0;

		row_sample(b, fams[row->op == IOACCT_OP_READ ? F_READ_BYTES : F_WRITE_BYTES].name, job,
			   row, false);
		sb_printf(b, "} %llu\n", (unsigned long long)c->bytes);
		b = &mj->f[F_SIZE];
		for (unsigned int i = 0; i < IOACCT_NR_SIZE_BINS; i++) {
			char le[32];

			cum += c->size_hist[i];
			if (i == IOACCT_NR_SIZE_BINS - 1)
				snprintf(le, sizeof(le), "+Inf");
			else
				snprintf(le, sizeof(le), "%llu",
					 (unsigned long long)ioacct_size_bin_limit(i));
			row_sample(b, "ioacct_request_size_bytes_bucket", job, row, true);
			sb_label(b, "le", le, true);
			sb_printf(b, "} %llu\n", (unsigned long long)cum);
		}
		row_sample(b, "ioacct_request_size_bytes_sum", job, row, true);
		sb_printf(b, "} %llu\n", (unsigned long long)c->bytes);
		row_sample(b, "ioacct_request_size_bytes_count", job, row, true);
		sb_printf(b, "} %llu\n", (unsigned long long)cum);
	}
	row_sample(&mj->f[F_CALLS], fams[F_CALLS].name, job, row, true);
	sb_printf(&mj->f[F_CALLS], "} %llu\n", (unsigned long long)c->calls);
	row_sample(&mj->f[F_ERRORS], fams[F_ERRORS].name, job, row, true);
	sb_printf(&mj->f[F_ERRORS], "} %llu\n", (unsigned long long)c->errors);
	for (unsigned int i = 0; i < IOACCT_NR_ERR_CLASSES; i++) {
		if (!c->errclass[i])
			continue;
		row_sample(&mj->f[F_ERROR_CLASS], fams[F_ERROR_CLASS].name, job, row, true);
		sb_label(&mj->f[F_ERROR_CLASS], "class", ioacct_err_class_name(i), true);
		sb_printf(&mj->f[F_ERROR_CLASS], "} %llu\n", (unsigned long long)c->errclass[i]);
	}
	if (ioacct_counters_unclassified(c)) {
		row_sample(&mj->f[F_ERROR_CLASS], fams[F_ERROR_CLASS].name, job, row, true);
		sb_label(&mj->f[F_ERROR_CLASS], "class", "unclassified", true);
		sb_printf(&mj->f[F_ERROR_CLASS], "} %llu\n",
			  (unsigned long long)ioacct_counters_unclassified(c));
	}
	row_sample(&mj->f[F_SECONDS], fams[F_SECONDS].name, job, row, true);
	sb_printf(&mj->f[F_SECONDS], "} ");
	sb_seconds(&mj->f[F_SECONDS], c->ns);
	sb_printf(&mj->f[F_SECONDS], "\n");
}

/* Rows whose labels are equal sort together: two mount ids may share a path and type. */
static int row_cmp(const void *a, const void *b)
{
	const struct ioacct_snap_row *x = *(const struct ioacct_snap_row *const *)a;
	const struct ioacct_snap_row *y = *(const struct ioacct_snap_row *const *)b;
	int d;

	if (x->step_id != y->step_id)
		return x->step_id < y->step_id ? -1 : 1;
	d = strcmp(x->mount.path, y->mount.path);
	if (d)
		return d;
	d = strcmp(x->mount.fstype, y->mount.fstype);
	if (d)
		return d;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return 0;
}

/*
 * s, of size len, made in place what sb_label() writes of it before its
 * escapes (cut to fit, never inside a sequence): U+FFFD where
 * label_replaced() says.
 */
static void label_fix(char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[PATH_MAX];
	size_t o = 0;

	if (len > sizeof(tmp))
		return;
	while (*p) {
		bool valid;
		size_t n = ioacct_utf8_seq(p, &valid);
		bool repl = label_replaced(p, n, valid);
		size_t w = repl ? sizeof(IOACCT_UTF8_REPLACEMENT) - 1 : n;

		if (o + w >= len)
			break;
		memcpy(tmp + o, repl ? IOACCT_UTF8_REPLACEMENT : (const char *)p, w);
		o += w;
		p += n;
	}
	tmp[o] = '\0';
	memcpy(s, tmp, o + 1);
}

/* ---- RPCs (issue 40) ---- */

/* A family per counter, in IOACCT_RPC_COUNTERS' order. */
#define RPC_ONE(f) +1
_Static_assert(F_RPC_RETRANS - F_RPC_CALLS + 1 == 0 IOACCT_RPC_COUNTERS(RPC_ONE),
	       "one family per RPC counter");
#undef RPC_ONE

static void rpc_sample(struct sbuf *b, enum fam f, const struct ioacct_job *job,
		       const struct ioacct_rpc_snap_row *row)
{
	char num[16];

	sb_printf(b, "%s", fams[f].name);
	mount_labels(b, job, row->r.step_id, &row->mount);
	sb_label(b, "procedure", row->r.name, true);
	snprintf(num, sizeof(num), "%u", row->r.prog);
	sb_label(b, "program", num, true);
	snprintf(num, sizeof(num), "%u", row->r.vers);
	sb_label(b, "version", num, true);
	sb_printf(b, "} ");
}

/* One (step, mount, procedure) of a job's RPCs: a line in each RPC family; none without calls. */
static void render_rpc_row(struct mjob *mj, const struct ioacct_job *job,
			   const struct ioacct_rpc_snap_row *row)
{
#define RPC_VALUE(f) row->r.f,
	const uint64_t v[] = { IOACCT_RPC_COUNTERS(RPC_VALUE) };
#undef RPC_VALUE

	if (!row->r.calls)
		return;
	if (row->r.flags & IOACCT_RPC_UNATTRIBUTED) {
		for (int f = F_RPC_UNATTR; f <= F_RPC_UNATTR_RECV; f++) {
			rpc_sample(&mj->f[f], f, job, row);
			sb_printf(&mj->f[f], "%llu\n", (unsigned long long)v[f - F_RPC_UNATTR]);
		}
		return;
	}
	for (int f = F_RPC_CALLS; f <= F_RPC_RETRANS; f++) {
		struct sbuf *b = &mj->f[f];

		rpc_sample(b, f, job, row);
		if (f == F_RPC_QUEUE || f == F_RPC_RTT || f == F_RPC_EXEC)
			sb_seconds(b, v[f - F_RPC_CALLS]);
		else
			sb_printf(b, "%llu", (unsigned long long)v[f - F_RPC_CALLS]);
		sb_printf(b, "\n");
	}
}

/* RPC rows whose labels are equal sort together, as row_cmp()'s. */
static int rpc_cmp(const void *a, const void *b)
{
	const struct ioacct_rpc_snap_row *x = *(const struct ioacct_rpc_snap_row *const *)a;
	const struct ioacct_rpc_snap_row *y = *(const struct ioacct_rpc_snap_row *const *)b;
	int d;

	if (x->r.step_id != y->r.step_id)
		return x->r.step_id < y->r.step_id ? -1 : 1;
	if ((d = strcmp(x->mount.path, y->mount.path)) ||
	    (d = strcmp(x->mount.fstype, y->mount.fstype)) || (d = strcmp(x->r.name, y->r.name)))
		return d;
	if (x->r.prog != y->r.prog)
		return x->r.prog < y->r.prog ? -1 : 1;
	if (x->r.vers != y->r.vers)
		return x->r.vers < y->r.vers ? -1 : 1;
	if (x->r.flags != y->r.flags)
		return x->r.flags < y->r.flags ? -1 : 1;
	return 0;
}

/* A job's RPC rows (this page's own copy), those of equal labels summed. -ENOMEM. */
static int render_rpc(struct mjob *mj, const struct ioacct_job *job, struct ioacct_rpc_snap *rpc)
{
	struct ioacct_rpc_snap_row **rows;

	if (!rpc->n)
		return 0;
	rows = calloc(rpc->n, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < rpc->n; i++) {
		rows[i] = &rpc->rows[i];
		label_fix(rows[i]->mount.path, sizeof(rows[i]->mount.path));
		label_fix(rows[i]->mount.fstype, sizeof(rows[i]->mount.fstype));
	}
	qsort(rows, rpc->n, sizeof(*rows), rpc_cmp);
	for (size_t i = 0; i < rpc->n;) {
		struct ioacct_rpc_snap_row merged = *rows[i];
		size_t k = i + 1;

		for (; k < rpc->n && rpc_cmp(&rows[i], &rows[k]) == 0; k++)
			ioacct_rpc_add(&merged.r, &rows[k]->r);
		render_rpc_row(mj, job, &merged);
		i = k;
	}
	free(rows);
	return 0;
}

/* Renders a job's snapshot into mj, replacing what it had. -ENOMEM. */
static int render_job(struct mjob *mj, const struct ioacct_job *job, struct ioacct_reply *rep,
		      struct ioacct_rpc_snap *rpc, bool running)
{
	struct ioacct_snap_row **rows = NULL;
	int ret = 0;

	for (int i = 0; i < NFAM; i++)
		sb_free(&mj->f[i]);
	if (rep->nrows && !(rows = calloc(rep->nrows, sizeof(*rows))))
		return -ENOMEM;
	for (size_t i = 0; i < rep->nrows; i++) {
		rows[i] = &rep->rows[i];
		/*
		 * Two paths that differ only in bytes that are not UTF-8 or in
		 * control characters get the same labels: make them equal here (the
		 * snapshot is this page's own copy) so that they merge into one
		 * series, not two of the same name.
		 */
		label_fix(rows[i]->mount.path, sizeof(rows[i]->mount.path));
		label_fix(rows[i]->mount.fstype, sizeof(rows[i]->mount.fstype));
	}
	qsort(rows, rep->nrows, sizeof(*rows), row_cmp);
	for (size_t i = 0; i < rep->nrows;) {
		struct ioacct_snap_row merged = *rows[i];
		size_t k = i + 1;

		for (; k < rep->nrows && row_cmp(&rows[i], &rows[k]) == 0; k++)
			ioacct_counters_add(&merged.c, &rows[k]->c);
		render_row(mj, job, &merged);
		i = k;
	}
	free(rows);
	if (render_rpc(mj, job, rpc))
		return -ENOMEM;
	sb_printf(&mj->f[F_DROPPED_EVENTS], "%s", fams[F_DROPPED_EVENTS].name);
	job_labels(&mj->f[F_DROPPED_EVENTS], job);
	sb_printf(&mj->f[F_DROPPED_EVENTS], "} %llu\n", (unsigned long long)rep->dropped_events);
	sb_printf(&mj->f[F_DROPPED_BYTES], "%s", fams[F_DROPPED_BYTES].name);
	job_labels(&mj->f[F_DROPPED_BYTES], job);
	sb_printf(&mj->f[F_DROPPED_BYTES], "} %llu\n", (unsigned long long)rep->dropped_bytes);
	sb_printf(&mj->f[F_START], "%s", fams[F_START].name);
	job_labels(&mj->f[F_START], job);
	sb_printf(&mj->f[F_START], "} %lld.%09lld\n", (long long)(job->start_ns / (int64_t)NSEC_PER_SEC),
		  (long long)(job->start_ns % (int64_t)NSEC_PER_SEC));
	sb_printf(&mj->f[F_RUNNING], "%s", fams[F_RUNNING].name);
	job_labels(&mj->f[F_RUNNING], job);
	sb_printf(&mj->f[F_RUNNING], "} %d\n", running ? 1 : 0);
	mj->running = running;
	mj->dropped_events = rep->dropped_events;
	for (int i = 0; i < NFAM; i++)
		if (mj->f[i].failed)
			ret = -ENOMEM;
	return ret;
}

static struct mjob *mjob_get(struct ioacct_metrics *m, int64_t key)
{
	struct mjob *mj;

	for (mj = m->jobs; mj; mj = mj->next)
		if (mj->key == key)
			return mj;
	mj = calloc(1, sizeof(*mj));
	if (!mj)
		return NULL;
	mj->key = key;
	mj->next = m->jobs;
	m->jobs = mj;
	return mj;
}

/* Whether sysctl kernel.bpf_stats_enabled is on: only then do programs count their run time. */
static bool bpf_stats_enabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 1;
}

static void self_metrics(struct ioacct_metrics *m, struct ioacct_registry *r, struct sbuf *b)
{
	struct ioacct_probes *probes = ioacct_registry_probes(r);
	uint32_t njobs = 0, ncg = 0, entries = 0;
	uint64_t dropped = 0, run_ns, run_cnt;

	for (struct mjob *mj = m->jobs; mj; mj = mj->next)
		if (mj->running)
			dropped += mj->dropped_events;
	ioacct_registry_counts(r, &njobs, &ncg);
	sb_printf(b, "# HELP ioacct_up 1: ioacctd is serving.\n# TYPE ioacct_up gauge\nioacct_up 1\n");
	sb_printf(b, "# HELP ioacct_build_info The version of ioacctd.\n"
		     "# TYPE ioacct_build_info gauge\nioacct_build_info{version=\"%s\"} 1\n",
		  PACKAGE_VERSION);
	sb_printf(b, "# HELP ioacct_jobs_watched Jobs running under ioacct.\n"
		     "# TYPE ioacct_jobs_watched gauge\nioacct_jobs_watched %u\n", njobs);
	sb_printf(b, "# HELP ioacct_cgroups_watched Cgroups the probes watch.\n"
		     "# TYPE ioacct_cgroups_watched gauge\nioacct_cgroups_watched %u\n", ncg);
	if (ioacct_probes_count(probes, &entries) == 0)
		sb_printf(b, "# HELP ioacct_kernel_entries Entries in the kernel's counter map.\n"
			     "# TYPE ioacct_kernel_entries gauge\nioacct_kernel_entries %u\n"
			     "# HELP ioacct_kernel_entries_max Size of the kernel's counter map "
			     "(max_entries).\n# TYPE ioacct_kernel_entries_max gauge\n"
			     "ioacct_kernel_entries_max %u\n", entries, m->cfg->max_entries);
	sb_printf(b, "# HELP ioacct_running_dropped_events Events dropped so far by the running "
		     "jobs (kernel map full).\n# TYPE ioacct_running_dropped_events gauge\n"
		     "ioacct_running_dropped_events %llu\n", (unsigned long long)dropped);
	sb_printf(b, "# HELP ioacct_drains_total Drains of closed bins into the store.\n"
		     "# TYPE ioacct_drains_total counter\nioacct_drains_total %llu\n",
		  (unsigned long long)m->drains);
	sb_printf(b, "# HELP ioacct_drain_seconds_total Time spent draining.\n"
		     "# TYPE ioacct_drain_seconds_total counter\nioacct_drain_seconds_total ");
	sb_seconds(b, m->drain_ns_total);
	sb_printf(b, "\n# HELP ioacct_last_drain_seconds Duration of the last drain.\n"
		     "# TYPE ioacct_last_drain_seconds gauge\nioacct_last_drain_seconds ");
	sb_seconds(b, m->last_drain_ns);
	sb_printf(b, "\n# HELP ioacct_metrics_build_seconds Time the last build of this page took.\n"
		     "# TYPE ioacct_metrics_build_seconds gauge\nioacct_metrics_build_seconds ");
	sb_seconds(b, m->last_build_ns);
	sb_printf(b, "\n# HELP ioacct_metrics_build_failures_total Builds of this page that failed "
		     "(the previous page was served).\n"
		     "# TYPE ioacct_metrics_build_failures_total counter\n"
		     "ioacct_metrics_build_failures_total %llu\n", (unsigned long long)m->builds_failed);
	sb_printf(b, "# HELP ioacct_probe_mode_info The probe backend in use.\n"
		     "# TYPE ioacct_probe_mode_info gauge\nioacct_probe_mode_info");
	sb_printf(b, "{");
	sb_label(b, "mode", ioacct_probes_mode(probes), false);
	sb_printf(b, "} 1\n");
	sb_printf(b, "# HELP ioacct_probes_attached 1 when the programs are attached.\n"
		     "# TYPE ioacct_probes_attached gauge\nioacct_probes_attached %d\n",
		  ioacct_probes_attached(probes) ? 1 : 0);
	if (bpf_stats_enabled() && ioacct_probes_run_stats(probes, &run_ns, &run_cnt) == 0) {
		sb_printf(b, "# HELP ioacct_bpf_run_seconds_total Time spent in ioacct's BPF programs "
			     "(while kernel.bpf_stats_enabled is 1).\n"
			     "# TYPE ioacct_bpf_run_seconds_total counter\nioacct_bpf_run_seconds_total ");
		sb_seconds(b, run_ns);
		sb_printf(b, "\n# HELP ioacct_bpf_runs_total Runs of ioacct's BPF programs "
			     "(while kernel.bpf_stats_enabled is 1).\n"
			     "# TYPE ioacct_bpf_runs_total counter\nioacct_bpf_runs_total %llu\n",
			  (unsigned long long)run_cnt);
	}
}

/*
 * The running jobs' counts: the kernel's counters (and RPC rows) read once
 * for all of them. -ENOMEM, or the error that kept the counts from being read.
 */
static int running_jobs(struct ioacct_metrics *m, struct ioacct_registry *r)
{
	struct ioacct_rpc_batch rb = { 0 };
	struct ioacct_probe_entry *e = NULL;
	size_t n = 0;
	int ret;

	/*
	 * Without the kernel's part a running job's counters would go back:
	 * serve the previous page rather than a wrong one.
	 */
	ret = ioacct_registry_kernel_read(r, &e, &n);
	if (!ret)
		ret = ioacct_registry_rpc_kernel_read(r, &rb);
	if (ret) {
		log_warn("metrics: cannot read the kernel's counters: %s; /metrics keeps its "
			 "previous page", strerror(-ret));
		free(e);
		return ret;
	}
	for (struct djob *j = ioacct_registry_jobs(r); j; j = ioacct_registry_job_next(j)) {
		int64_t key = ioacct_registry_job_info(j)->key;
		struct ioacct_rpc_snap rpc = { .kernel = &rb };
		struct ioacct_reply rep = { 0 };
		struct ioacct_job job;
		struct mjob *mj = mjob_get(m, key);

		if (!mj) {
			ret = -ENOMEM;
			break;
		}
		mj->seen = true;
		ret = ioacct_registry_snapshot(r, key, j, e, n, &job, &rep, &rpc);
		if (ret == 0)
			ret = render_job(mj, &job, &rep, &rpc, true);
		ioacct_reply_free(&rep);
		ioacct_rpc_snap_free(&rpc);
		if (ret)
			break;
	}
	free(e);
	ioacct_rpc_batch_free(&rb);
	if (ret)
		log_warn("metrics: cannot build /metrics: %s; it keeps its previous page",
			 ret == -ENOMEM ? "out of memory" : ioacct_store_errmsg(ioacct_registry_store(r)));
	return ret;
}

/* Jobs that left the registry since: their final counts, once, from the store. */
static void gone_jobs(struct ioacct_metrics *m, struct ioacct_registry *r, uint64_t now_ms)
{
	for (struct mjob **pp = &m->jobs; *pp;) {
		struct mjob *mj = *pp;

		if (!mj->seen && mj->running) {
			struct ioacct_rpc_snap rpc = { 0 };
			struct ioacct_reply rep = { 0 };
			struct ioacct_job job;
			int ret;

			ret = ioacct_registry_snapshot(r, mj->key, NULL, NULL, 0, &job, &rep, &rpc);
			if (ret == 0)
				ret = render_job(mj, &job, &rep, &rpc, false);
			ioacct_reply_free(&rep);
			ioacct_rpc_snap_free(&rpc);
			mj->gone_ms = now_ms;
			if (ret) {
				/* Undone registrations are deleted from the store: nothing to show. */
				if (ret != -ENOENT)
					log_warn("metrics: job key %lld left without its final counts: %s",
						 (long long)mj->key, ret == -ENOMEM ? "out of memory" :
						 ioacct_store_errmsg(ioacct_registry_store(r)));
				mj->running = false;
				mj->gone_ms = 0;
			}
		}
		if (!mj->seen && !mj->running && now_ms - mj->gone_ms >= m->cfg->metrics_linger_ms) {
			*pp = mj->next;
			mjob_free(mj);
			continue;
		}
		pp = &mj->next;
	}
}

/* Builds the whole page; -ENOMEM, or the error that kept the counts from being read. */
static int build(struct ioacct_metrics *m, struct ioacct_registry *r, struct sbuf *out)
{
	uint64_t now_ms = ioacct_mono_ns() / 1000000;
	int ret;

	for (struct mjob *mj = m->jobs; mj; mj = mj->next)
		mj->seen = false;
	ret = running_jobs(m, r);
	if (ret)
		return ret;
	gone_jobs(m, r, now_ms);
	self_metrics(m, r, out);
	for (int f = 0; f < NFAM; f++) {
		sb_printf(out, "# HELP %s %s\n# TYPE %s %s\n", fams[f].name, fams[f].help,
			  fams[f].name, fams[f].type);
		for (struct mjob *mj = m->jobs; mj; mj = mj->next)
			if (mj->f[f].len)
				sb_printf(out, "%.*s", (int)mj->f[f].len, mj->f[f].p);
	}
	return out->failed ? -ENOMEM : 0;
}

void ioacct_metrics_update(struct ioacct_metrics *m, struct ioacct_registry *r, uint64_t drain_ns)
{
	struct sbuf out = { 0 };
	uint64_t t0 = ioacct_mono_ns();

	if (!m)
		return;
	if (drain_ns) {
		m->drains++;
		m->drain_ns_total += drain_ns;
		m->last_drain_ns = drain_ns;
	}
	if (build(m, r, &out)) {
		m->builds_failed++;
		sb_free(&out);
		return;
	}
	m->last_build_ns = ioacct_mono_ns() - t0;
	ioacct_mserver_page(m->server, out.p, out.len);
}

struct ioacct_metrics *ioacct_metrics_start(const struct ioacct_config *cfg, char *err,
					    size_t errlen)
{
	struct ioacct_metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	m->cfg = cfg;
	m->server = ioacct_mserver_open(cfg, err, errlen);
	if (!m->server) {
		ioacct_metrics_stop(m);
		return NULL;
	}
	return m;
}

int ioacct_metrics_serve(struct ioacct_metrics *m, char *err, size_t errlen)
{
	return ioacct_mserver_serve(m->server, err, errlen);
}

void ioacct_metrics_stop(struct ioacct_metrics *m)
{
	if (!m)
		return;
	ioacct_mserver_stop(m->server);
	while (m->jobs) {
		struct mjob *mj = m->jobs;

		m->jobs = mj->next;
		mjob_free(mj);
	}
	free(m);
}
