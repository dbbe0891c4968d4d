// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacct top: the running jobs of the node, live, like top and sstat. One
 * LIVE request per refresh gives every running job's exact totals so far and
 * the daemon's clock when it read them; a rate is the difference of two
 * such totals over the difference of the two clocks.
 *
 * On a terminal: a full-screen view (plain ANSI and termios, no curses: one
 * screen of text redrawn in place needs nothing more), keys to sort and q to
 * quit, the terminal put back however it ends. Otherwise, or with -b: batch
 * output, one block per refresh, with the exact counters beside the rates.
 *
 * Exit status: 0 done, 1 the daemon failed, 2 bad usage.
 */
#include "top.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "proto.h"

#define CALL_TIMEOUT_MS 30000
#define NS_PER_S 1000000000ULL

enum sort_key { SORT_BW, SORT_READ, SORT_WRITE, SORT_IOPS, SORT_TIME };

static const struct {
	char key;
	const char *name;
} sort_names[] = {
	[SORT_BW] = { 'b', "bandwidth" }, [SORT_READ] = { 'r', "read" },
	[SORT_WRITE] = { 'w', "write" },  [SORT_IOPS] = { 'i', "iops" },
	[SORT_TIME] = { 't', "time" },
};

struct top_opts {
	const char *cluster;
	double delay;
	long iterations;            /* 0: until q or a signal */
	bool batch;
	enum sort_key sort;
};

/* One job's totals at one reading. */
struct jtot {
	int64_t key;
	uint64_t read_bytes, write_bytes, data_calls, ns;
};

/* One row on screen: a job, its totals, and its rates over the last interval. */
struct row {
	struct ioacct_job job;
	size_t nsteps;
	struct jtot tot;
	bool has_rate;              /* false for a job the previous reading did not have */
	uint64_t d_read, d_write, d_calls, d_ns;
	double read_bps, write_bps, iops, io_pct;
	char top_mount[64];
};

struct sample {
	struct ioacct_reply rep;
	bool valid;
};

static volatile sig_atomic_t got_quit;
static volatile sig_atomic_t got_winch;
static volatile sig_atomic_t got_tstp;

static void on_quit(int sig)
{
	got_quit = sig;
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

static void on_tstp(int sig)
{
	(void)sig;
	got_tstp = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ioacct top [OPTIONS]\n"
		"The running jobs of this node, live: per job the read and write bandwidth,\n"
		"IOPS, the busiest mount and the time in I/O over each interval.\n"
		"\n"
		"  -d, --delay SECONDS      seconds between refreshes (default 1, at least 0.1)\n"
		"  -n, --iterations N       stop after N refreshes\n"
		"  -b, --batch              batch output, as when not on a terminal: one block\n"
		"                           per refresh with the exact counters\n"
		"      --once               -b -n 1: one block after one interval\n"
		"  -s, --sort KEY           b[andwidth] (read + write, the default), r[ead],\n"
		"                           w[rite], i[ops], t[ime]\n"
		"  -M, --cluster NAME       only this cluster's jobs\n"
		"Common options:\n");
	ioacct_cli_help_common(out, 27);
	fprintf(out,
		"\n"
		"Keys on a terminal: b r w i t sort, q quits.\n"
		"With private_data = yes a user other than root sees only their own jobs.\n");
}

static int sort_parse(const char *s, enum sort_key *out)
{
	for (size_t i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++) {
		if ((s[0] == sort_names[i].key && s[1] == '\0') ||
		    strcasecmp(s, sort_names[i].name) == 0) {
			*out = (enum sort_key)i;
			return 0;
		}
	}
	return -EINVAL;
}

enum { OPT_ONCE = 256 };

static const struct option options[] = {
	{ "delay", required_argument, NULL, 'd' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "batch", no_argument, NULL, 'b' },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "sort", required_argument, NULL, 's' },
	{ "cluster", required_argument, NULL, 'M' },
	{ NULL, 0, NULL, 0 },
};

/* One of top's own options: 0, or the exit status. */
static int option(struct ioacct_cli *cli, int key, const char *arg)
{
	struct top_opts *o = cli->ctx;
	char *end;

	switch (key) {
	case 'd':
		errno = 0;
		o->delay = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->delay >= 0.1 && o->delay <= 3600))
			return ioacct_cli_usage_error(cli, "-d %s: the delay is a number of seconds "
						      "from 0.1 to 3600", arg);
		break;
	case 'n':
		errno = 0;
		o->iterations = strtol(arg, &end, 10);
		if (errno || end == arg || *end || o->iterations < 1)
			return ioacct_cli_usage_error(cli, "-n %s: the number of refreshes is a "
						      "whole number, 1 or more", arg);
		break;
	case 'b':
		o->batch = true;
		break;
	case OPT_ONCE:
		o->batch = true;
		o->iterations = 1;
		break;
	case 's':
		if (sort_parse(arg, &o->sort))
			return ioacct_cli_usage_error(cli, "--sort %s: the keys are b, r, w, i and t "
						      "(bandwidth, read, write, iops, time)", arg);
		break;
	case 'M':
		o->cluster = arg;
		break;
	}
	return 0;
}

/* One LIVE reading into s; on failure `err` says why in one line. */
static int sample_take(const struct top_opts *o, const char *socket_path, struct sample *s,
		       char *err, size_t errlen)
{
	struct ioacct_request req = { .type = IOACCT_MSG_LIVE };
	char why[512];
	int ret;

	ioacct_reply_free(&s->rep);
	memset(&s->rep, 0, sizeof(s->rep));
	s->valid = false;
	if (o->cluster && ioacct_strlcpy(req.u.query.cluster, o->cluster,
					 sizeof(req.u.query.cluster))) {
		snprintf(err, errlen, "cluster name %s is too long", o->cluster);
		return -ENAMETOOLONG;
	}
	ret = ioacct_client_call(socket_path, &req, &s->rep, CALL_TIMEOUT_MS, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s; is ioacctd running?", why);
		return ret;
	}
	if (s->rep.status) {
		snprintf(err, errlen, "ioacctd refused the live totals: %s", s->rep.error);
		ret = s->rep.status;
		ioacct_reply_free(&s->rep);
		memset(&s->rep, 0, sizeof(s->rep));
		return ret;
	}
	s->valid = true;
	return 0;
}

/* A job's totals over every mount, from a reply. */
static void job_totals(const struct ioacct_reply *rep, int64_t key, struct jtot *t)
{
	memset(t, 0, sizeof(*t));
	t->key = key;
	for (size_t i = 0; i < rep->nqtotals; i++) {
		const struct ioacct_qtotal_row *q = &rep->qtotals[i];

		if (q->job_key != key)
			continue;
		if (q->s.op == IOACCT_OP_READ)
			t->read_bytes += q->s.c.bytes;
		else if (q->s.op == IOACCT_OP_WRITE)
			t->write_bytes += q->s.c.bytes;
		if (ioacct_op_is_data(q->s.op))
			t->data_calls += q->s.c.calls;
		t->ns += q->s.c.ns;
	}
}

/* Bytes read and written on one mount of a job, in a reply. */
static uint64_t mount_bytes(const struct ioacct_reply *rep, int64_t key, uint64_t mnt_id)
{
	uint64_t b = 0;

	if (!rep)
		return 0;
	for (size_t i = 0; i < rep->nqtotals; i++) {
		const struct ioacct_qtotal_row *q = &rep->qtotals[i];

		if (q->job_key == key && q->s.mnt_id == mnt_id && ioacct_op_is_data(q->s.op))
			b += q->s.c.bytes;
	}
	return b;
}

/* The mount with most data over the interval, else over the job's life; "-" when none. */
static void top_mount(const struct ioacct_reply *cur, const struct ioacct_reply *prev, int64_t key,
		      char *out, size_t len)
{
	uint64_t best_d = 0, best_t = 0;
	const char *by_d = NULL, *by_t = NULL;

	for (size_t i = 0; i < cur->nqmounts; i++) {
		const struct ioacct_qmount_row *m = &cur->qmounts[i];
		uint64_t t, p;

		if (m->job_key != key)
			continue;
		t = mount_bytes(cur, key, m->mount.mnt_id);
		p = mount_bytes(prev, key, m->mount.mnt_id);
		if (t > best_t) {
			best_t = t;
			by_t = m->mount.path;
		}
		if (prev && t > p && t - p > best_d) {
			best_d = t - p;
			by_d = m->mount.path;
		}
	}
	snprintf(out, len, "%s", by_d ? by_d : by_t ? by_t : "-");
}

static int row_cmp_key;

static double row_value(const struct row *r)
{
	switch ((enum sort_key)row_cmp_key) {
	case SORT_READ:
		return r->read_bps;
	case SORT_WRITE:
		return r->write_bps;
	case SORT_IOPS:
		return r->iops;
	case SORT_TIME:
		return r->io_pct;
	case SORT_BW:
		break;
	}
	return r->read_bps + r->write_bps;
}

/* Largest first; a job without a rate yet last; then by job id. */
static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double vx = row_value(x), vy = row_value(y);

	if (x->has_rate != y->has_rate)
		return x->has_rate ? -1 : 1;
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->job.job_id != y->job.job_id)
		return x->job.job_id < y->job.job_id ? -1 : 1;
	return strcmp(x->job.cluster, y->job.cluster);
}

static void rows_sort(struct row *rows, size_t n, enum sort_key key)
{
	row_cmp_key = (int)key;
	qsort(rows, n, sizeof(*rows), row_cmp);
}

/* The rows of `cur`, with rates against `prev` (may be NULL) over interval_ns. */
static int rows_build(const struct ioacct_reply *cur, const struct ioacct_reply *prev,
		      uint64_t interval_ns, struct row **out)
{
	struct row *rows = calloc(cur->njobs ? cur->njobs : 1, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < cur->njobs; i++) {
		struct row *r = &rows[i];
		struct jtot p;
		bool found = false;

		r->job = cur->jobs[i];
		for (size_t k = 0; k < cur->nqsteps; k++)
			r->nsteps += cur->qsteps[k].job_key == r->job.key;
		job_totals(cur, r->job.key, &r->tot);
		for (size_t k = 0; prev && k < prev->njobs && !found; k++)
			found = prev->jobs[k].key == r->job.key;
		top_mount(cur, found ? prev : NULL, r->job.key, r->top_mount, sizeof(r->top_mount));
		if (!found || !interval_ns)
			continue;
		job_totals(prev, r->job.key, &p);
		/* Counters only grow; a smaller one would be a restarted daemon's: no rate. */
		if (r->tot.read_bytes < p.read_bytes || r->tot.write_bytes < p.write_bytes ||
		    r->tot.data_calls < p.data_calls || r->tot.ns < p.ns)
			continue;
		r->has_rate = true;
		r->d_read = r->tot.read_bytes - p.read_bytes;
		r->d_write = r->tot.write_bytes - p.write_bytes;
		r->d_calls = r->tot.data_calls - p.data_calls;
		r->d_ns = r->tot.ns - p.ns;
		r->read_bps = (double)r->d_read * NS_PER_S / (double)interval_ns;
		r->write_bps = (double)r->d_write * NS_PER_S / (double)interval_ns;
		r->iops = (double)r->d_calls * NS_PER_S / (double)interval_ns;
		r->io_pct = 100.0 * (double)r->d_ns / (double)interval_ns;
	}
	*out = rows;
	return 0;
}

/* 1536 -> "1.50K": powers of 1024, three significant digits. */
static void human(double v, char *out, size_t len)
{
	static const char units[] = " KMGTP";
	size_t u = 0;

	while (v >= 1000 && u + 1 < sizeof(units) - 1) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%.0f", v);
	else
		snprintf(out, len, "%.*f%c", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

static void user_name(const struct ioacct_job *j, char *out, size_t len)
{
	struct passwd *pw;

	if (j->user[0]) {
		snprintf(out, len, "%s", j->user);
		return;
	}
	pw = getpwuid(j->uid);
	if (pw)
		snprintf(out, len, "%s", pw->pw_name);
	else
		snprintf(out, len, "%u", j->uid);
}

static void node_name(const struct ioacct_reply *rep, const struct ioacct_config *cfg, char *out,
		      size_t len)
{
	if (rep->njobs && rep->jobs[0].node[0])
		snprintf(out, len, "%s", rep->jobs[0].node);
	else if (cfg->node[0])
		snprintf(out, len, "%s", cfg->node);
	else if (gethostname(out, len) != 0)
		snprintf(out, len, "?");
	out[len - 1] = '\0';
}

/* The header line: node, jobs, aggregate bandwidth. */
static void header(char *out, size_t len, const char *node, const struct ioacct_reply *rep,
		   const struct row *rows, uint64_t interval_ns, enum sort_key sort)
{
	double rd = 0, wr = 0, iops = 0;
	char r[16], w[16], i[16], more[64] = "";

	for (size_t k = 0; k < rep->njobs; k++) {
		rd += rows[k].read_bps;
		wr += rows[k].write_bps;
		iops += rows[k].iops;
	}
	human(rd, r, sizeof(r));
	human(wr, w, sizeof(w));
	human(iops, i, sizeof(i));
	if (rep->more)
		snprintf(more, sizeof(more), " (%zu shown)", rep->njobs);
	if (!interval_ns) {
		snprintf(out, len, "ioacct top - node %s, %u jobs%s, first reading, sort %s", node,
			 rep->jobs_running, more, sort_names[sort].name);
		return;
	}
	snprintf(out, len,
		 "ioacct top - node %s, %u jobs%s, read %sB/s, write %sB/s, %s IOPS, "
		 "interval %.3f s, sort %s",
		 node, rep->jobs_running, more, r, w, i, (double)interval_ns / NS_PER_S,
		 sort_names[sort].name);
}

#define COLS_FMT "%-10s %-12.12s %5s %9s %9s %8s %8s  %s"

static void row_line(char *out, size_t len, const struct row *r)
{
	char id[32], user[64], steps[16], rd[16] = "-", wr[16] = "-", iops[16] = "-",
		pct[16] = "-";

	snprintf(id, sizeof(id), "%" PRIu64, r->job.job_id);
	user_name(&r->job, user, sizeof(user));
	snprintf(steps, sizeof(steps), "%zu", r->nsteps);
	if (r->has_rate) {
		human(r->read_bps, rd, sizeof(rd));
		human(r->write_bps, wr, sizeof(wr));
		human(r->iops, iops, sizeof(iops));
		snprintf(pct, sizeof(pct), "%.1f", r->io_pct);
	}
	snprintf(out, len, COLS_FMT, id, user, steps, rd, wr, iops, pct, r->top_mount);
}

static void batch_print(const char *head, const struct row *rows, size_t n,
			uint64_t interval_ns)
{
	char line[1024];

	printf("%s\n", head);
	printf("interval_ns %" PRIu64 "\n", interval_ns);
	printf(COLS_FMT " %14s %14s %14s %14s %10s\n", "JOBID", "USER", "STEPS", "READ/s",
	       "WRITE/s", "IOPS", "IO-TIME%", "TOP-MOUNT", "READ_BYTES", "WRITE_BYTES", "D_READ",
	       "D_WRITE", "D_OPS");
	for (size_t k = 0; k < n; k++) {
		row_line(line, sizeof(line), &rows[k]);
		/* The mount last on screen, but here the exact counters follow it. */
		printf("%s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu64 "\n",
		       line, rows[k].tot.read_bytes, rows[k].tot.write_bytes, rows[k].d_read,
		       rows[k].d_write, rows[k].d_calls);
	}
	printf("\n");
	fflush(stdout);
}

/* ---- the terminal ---- */

struct term {
	struct termios saved;
	bool raw;
	bool atexit_set;
	unsigned rows, cols;
};

static struct term term;

static void term_size(void)
{
	struct winsize ws;

	term.rows = 24;
	term.cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		term.rows = ws.ws_row;
		term.cols = ws.ws_col;
	}
}

static void term_write(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(STDOUT_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Normal screen, cursor shown, the saved modes back. Safe to call twice. */
static void term_restore(void)
{
	if (!term.raw)
		return;
	term_write("\033[?25h\033[?1049l");
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &term.saved);
	term.raw = false;
}

static int term_setup(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &term.saved) != 0) {
		fprintf(stderr, "ioacct top: cannot read the terminal's modes: %s; use -b\n",
			strerror(errno));
		return -errno;
	}
	t = term.saved;
	/* Keys without Enter and without echo; ^C still a signal, output untouched. */
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) != 0) {
		fprintf(stderr, "ioacct top: cannot set the terminal's modes: %s; use -b\n",
			strerror(errno));
		return -errno;
	}
	term.raw = true;
	if (!term.atexit_set)
		term.atexit_set = atexit(term_restore) == 0;
	term_write("\033[?1049h\033[?25l");
	term_size();
	return 0;
}

/* Appends a line cut to the terminal's width, cleared to its end. */
static void screen_line(char **buf, size_t *len, size_t *cap, const char *line, bool inverse)
{
	size_t n = strlen(line), need;
	char *p;

	if (n > term.cols)
		n = term.cols;
	need = *len + n + 16;
	if (need > *cap) {
		p = realloc(*buf, need * 2);
		if (!p)
			return;
		*buf = p;
		*cap = need * 2;
	}
	*len += (size_t)sprintf(*buf + *len, "%s", inverse ? "\033[7m" : "");
	memcpy(*buf + *len, line, n);
	*len += n;
	*len += (size_t)sprintf(*buf + *len, "%s\033[K\r\n", inverse ? "\033[0m" : "");
}

static void screen_draw(const char *head, const struct row *rows, size_t n, const char *status)
{
	char line[1024], *buf = NULL;
	size_t len = 0, cap = 0, shown = 0;

	screen_line(&buf, &len, &cap, head, false);
	screen_line(&buf, &len, &cap, status, false);
	snprintf(line, sizeof(line), COLS_FMT, "JOBID", "USER", "STEPS", "READ/s", "WRITE/s",
		 "IOPS", "IO-TIME%", "TOP-MOUNT");
	screen_line(&buf, &len, &cap, line, true);
	for (size_t k = 0; k < n && shown + 4 < term.rows; k++, shown++) {
		row_line(line, sizeof(line), &rows[k]);
		screen_line(&buf, &len, &cap, line, false);
	}
	if (!buf)
		return;
	/* From the top left; clears what an earlier, longer screen left below. */
	term_write("\033[H");
	buf[len] = '\0';
	term_write(buf);
	term_write("\033[J");
	free(buf);
}

/* ---- the loop ---- */

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Waits until `deadline` (CLOCK_MONOTONIC ns), reading keys on a terminal. */
static void wait_until(uint64_t deadline, bool interactive, enum sort_key *sort, bool *redraw)
{
	for (;;) {
		uint64_t now = mono_now();
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char c;

		if (got_quit || got_tstp || now >= deadline)
			return;
		if (got_winch) {
			got_winch = 0;
			term_size();
			*redraw = true;
			return;
		}
		if (!interactive) {
			struct timespec ts = { (time_t)((deadline - now) / NS_PER_S),
					       (long)((deadline - now) % NS_PER_S) };

			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) <= 0)
			continue;
		if (read(STDIN_FILENO, &c, 1) != 1)
			continue;
		if (c == 'q' || c == 'Q') {
			got_quit = SIGTERM;
			return;
		}
		if (sort_parse((char[]){ c, '\0' }, sort) == 0) {
			*redraw = true;
			return;
		}
	}
}

/* The reading `cur` with rates against `prev`: on the screen, or a block of batch output. */
static int show(const struct top_opts *o, bool interactive, const char *node,
		const struct sample *cur, const struct sample *prev, uint64_t interval_ns,
		const char *problem)
{
	struct row *rows = NULL;
	char head[1024], status[256];

	if (rows_build(&cur->rep, prev->valid ? &prev->rep : NULL, interval_ns, &rows))
		return -ENOMEM;
	rows_sort(rows, cur->rep.njobs, o->sort);
	header(head, sizeof(head), node, &cur->rep, rows, interval_ns, o->sort);
	if (interactive) {
		if (problem[0])
			snprintf(status, sizeof(status), "%s; trying again every interval", problem);
		else
			snprintf(status, sizeof(status), "keys: b r w i t sort, q quit%s",
				 interval_ns ? "" : "; rates after the first interval");
		screen_draw(head, rows, cur->rep.njobs, status);
	} else {
		batch_print(head, rows, cur->rep.njobs, interval_ns);
	}
	free(rows);
	return 0;
}

/* Ctrl-Z: the terminal as it was while stopped, the view back on SIGCONT. */
static int suspend(const struct sigaction *tstp)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	got_tstp = 0;
	term_restore();
	sigaction(SIGTSTP, &dfl, NULL);
	raise(SIGTSTP);
	/* Stopped here until SIGCONT. */
	sigaction(SIGTSTP, tstp, NULL);
	term_size();
	return term_setup();
}

/*
 * The next reading, into the other slot of s: s[*cur] stays the last good
 * one if it fails (err says why, -1). Else *cur is the new one, and
 * *interval_ns the time since the one before (0: no rate).
 */
static int next_reading(const struct top_opts *o, const char *socket_path, struct sample s[2],
			int *cur, uint64_t *interval_ns, char *err, size_t errlen)
{
	int nxt = !*cur;

	if (sample_take(o, socket_path, &s[nxt], err, errlen))
		return -1;
	*cur = nxt;
	*interval_ns = 0;
	if (s[!nxt].valid && s[nxt].rep.start_mono_ns > s[!nxt].rep.start_mono_ns)
		*interval_ns = s[nxt].rep.start_mono_ns - s[!nxt].rep.start_mono_ns;
	else
		s[!nxt].valid = false;
	return 0;
}

/* Quit on INT, TERM and HUP; a new size on WINCH; on a terminal, Ctrl-Z through `tstp`. */
static void signals_install(bool interactive, const struct sigaction *tstp)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_quit;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	if (interactive)
		sigaction(SIGTSTP, tstp, NULL);
}

int ioacct_top_main(int argc, char **argv)
{
	struct top_opts o = { .delay = 1.0, .sort = SORT_BW };
	struct ioacct_cli cli = {
		.prog = "ioacct top", .options = options, .option = option, .usage = usage,
		.ctx = &o,
	};
	struct sample s[2] = { 0 };
	struct ioacct_config cfg;
	struct sigaction tstp = { .sa_handler = on_tstp };
	bool interactive, redraw;
	char err[1024], node[256], problem[768] = "";
	const char *socket_path;
	uint64_t delay_ns, interval_ns = 0, next;
	long done = 0;
	int cur = 0, ret;

	ret = ioacct_cli_parse(&cli, argc, argv);
	if (ret != IOACCT_CLI_GO)
		return ret;
	ret = ioacct_cli_config(&cli, &cfg, NULL, 0);
	if (ret)
		return ret;
	socket_path = cfg.socket_path;
	interactive = !o.batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	delay_ns = (uint64_t)llround(o.delay * 1e9);
	signals_install(interactive, &tstp);

	/* The first reading decides: no daemon, no screen. */
	if (sample_take(&o, socket_path, &s[cur], err, sizeof(err))) {
		fprintf(stderr, "ioacct top: %s\n", err);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (interactive && term_setup()) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	node_name(&s[cur].rep, &cfg, node, sizeof(node));
	next = mono_now() + delay_ns;
	redraw = interactive;
	ret = 0;
	while (!got_quit) {
		if (redraw) {
			if (show(&o, interactive, node, &s[cur], &s[!cur], interval_ns, problem))
				goto nomem;
			redraw = false;
		}
		if (o.iterations && done >= o.iterations)
			break;
		wait_until(next, interactive, &o.sort, &redraw);
		if (got_tstp) {
			if (suspend(&tstp)) {
				ret = EXIT_RUNTIME;
				break;
			}
			redraw = true;
		}
		if (got_quit || redraw)
			continue;
		next += delay_ns;
		if (next < mono_now())
			next = mono_now() + delay_ns;
		done++;
		redraw = true;
		if (next_reading(&o, socket_path, s, &cur, &interval_ns, err, sizeof(err))) {
			if (!interactive) {
				fprintf(stderr, "ioacct top: %s\n", err);
				ret = EXIT_RUNTIME;
				break;
			}
			/* A daemon restarting: say so on the screen and ask again. */
			snprintf(problem, sizeof(problem), "%s", err);
			continue;
		}
		problem[0] = '\0';
		if (!interactive) {
			if (show(&o, interactive, node, &s[cur], &s[!cur], interval_ns, problem))
				goto nomem;
			redraw = false;
			if (ferror(stdout)) {
				fprintf(stderr, "ioacct top: cannot write the output: %s\n",
					strerror(errno));
				ret = EXIT_RUNTIME;
				break;
			}
		}
	}
	goto out;
nomem:
	fprintf(stderr, "ioacct top: out of memory\n");
	ret = EXIT_RUNTIME;
out:
	term_restore();
	ioacct_reply_free(&s[0].rep);
	ioacct_reply_free(&s[1].rep);
	return ret;
}
