// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A simulated stretch of a large centre's year in the cluster store (issue
 * 28): NODES nodes and JOBS_PER_DAY jobs a day for DAYS days, each job 1-64
 * nodes (most of them one), minutes to a day long, on 1-4 of 4 mounts, its
 * series bursty (input read at the start, checkpoints, output at the end,
 * metadata calls between) in 5 s bins. Every node's part of every job is
 * exported with ioacct_pgstore_jobs_put() -- what ioacctd's exporter calls
 * with a backlog, in batches of the same limits -- by EXPORTERS threads with
 * a connection each (a node belongs to one exporter, as on a cluster), day
 * by day. Prints per day the parts, jobs,
 * series samples, the ingest rate and the database's size; then times the
 * queries ioacct makes (-j, -u -S -E) and the load of the biggest job whole
 * (the merged report's read), each the median of 5. CLUSTER_YEAR_REPORTS=1:
 * each part of a job of several nodes is followed by its merged report's
 * offer (every node expected) and claim, as ioacctd's exporter does after a
 * batch for jobs with one: the last part's claim loads the job whole (not
 * rendered; issue 28). CLUSTER_YEAR_CPUACCT=FILE: a cgroup's cpuacct.usage
 * holding the PostgreSQL server (the script puts it there): its CPU during
 * each day's ingest is printed, and a job's share of it.
 *
 *   cluster-year CONNINFO [NODES [JOBS_PER_DAY [DAYS [EXPORTERS [SEED]]]]]
 *
 * Deterministic for a seed. tests/bench/cluster-year (the script) starts a
 * private PostgreSQL and runs it; docs/performance.md has the figures and the
 * year's extrapolation.
 */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "pgstore.h"
#include "store.h"

#define NS 1000000000LL
#define WIDTH_NS (5 * NS)
#define DAY0_S 1735689600LL /* 2025-01-01 */
#define NUSERS 500

static const struct {
	uint32_t id;
	const char *path, *fstype, *source;
} mounts[] = {
	{ 21, "/lustre/scratch", "lustre", "10.0.0.1@o2ib:/scratch" },
	{ 22, "/home", "nfs4", "nas:/home" },
	{ 23, "/tmp", "ext4", "/dev/nvme0n1p2" },
	{ 24, "/dev/shm", "tmpfs", "tmpfs" },
};

static const char *conninfo;
static unsigned int nnodes = 1400, jobs_per_day = 20000, ndays = 1, nexporters = 256;
static uint64_t seed = 1;
/* CLUSTER_YEAR_REPORTS=1: every job of several nodes has a merged report (offered). */
static bool reports;
/* CLUSTER_YEAR_CPUACCT: the PostgreSQL server's cgroup's cpuacct.usage (ns), or NULL. */
static const char *cpuacct;

/* The server's CPU so far in seconds, or -1 when not measured. */
static double pg_cpu_s(void)
{
	unsigned long long ns;
	FILE *f;
	int ok;

	if (!cpuacct || !(f = fopen(cpuacct, "r")))
		return -1;
	ok = fscanf(f, "%llu", &ns) == 1;
	fclose(f);
	return ok ? (double)ns / 1e9 : -1;
}

/* splitmix64: a job's numbers from its own seed, the same in every thread. */
static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* What every node of a job shares. */
struct jobspec {
	uint64_t job_id;
	int64_t start_ns, dur_ns;
	unsigned int first_node, nodes, nmounts, user;
	uint64_t s;                       /* the seed of its parts */
};

static void job_spec(unsigned int day, unsigned int i, struct jobspec *j)
{
	uint64_t s = seed * 1000003ULL + (uint64_t)day * 100000007ULL + i, r;

	j->job_id = (uint64_t)day * jobs_per_day + i + 1;
	j->start_ns = (DAY0_S + (int64_t)day * 86400) * NS + (int64_t)(mix(&s) % (86400ULL * NS));
	/* Durations log-uniform from 2 minutes to a day. */
	r = mix(&s) % 10000;
	j->dur_ns = (int64_t)(120.0 * NS * pow(720.0, (double)r / 10000.0));
	r = mix(&s) % 1000;
	j->nodes = r < 700 ? 1 : r < 900 ? 2 + (unsigned int)(mix(&s) % 7) :
		   r < 980 ? 9 + (unsigned int)(mix(&s) % 24) : 33 + (unsigned int)(mix(&s) % 32);
	if (j->nodes > nnodes)
		j->nodes = nnodes;
	j->first_node = (unsigned int)(mix(&s) % nnodes);
	j->nmounts = 1 + (unsigned int)(mix(&s) % 4);
	j->user = (unsigned int)(mix(&s) % NUSERS);
	j->s = s;
}

static struct ioacct_sample *add_sample(struct ioacct_jobdata *jd, size_t *cap, uint32_t mnt,
					uint32_t op, uint32_t bin)
{
	struct ioacct_sample *x;

	if (jd->nseries == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		x = realloc(jd->series, *cap * sizeof(*x));
		if (!x)
			abort();
		jd->series = x;
	}
	x = &jd->series[jd->nseries++];
	memset(x, 0, sizeof(*x));
	x->mnt_id = mnt;
	x->op = op;
	x->bin = bin;
	return x;
}

/* A bin's counters for op: data ops move bytes in one size, metadata ops only count. */
static void fill(struct ioacct_sample *x, uint64_t *s, uint64_t scale)
{
	bool data = x->op == IOACCT_OP_READ || x->op == IOACCT_OP_WRITE;
	uint64_t calls = 1 + mix(s) % (data ? 200 * scale : 50);
	uint64_t size = data ? 4096ULL << (mix(s) % 9) : 0;

	x->c.calls = calls;
	x->c.bytes = calls * size;
	x->c.ns = calls * (2000 + mix(s) % 100000);
	if (data)
		x->c.size_hist[ioacct_size_bin(size)] = calls;
	if (mix(s) % 50 == 0) {
		x->c.errors = 1;
		x->c.errclass[IOACCT_ERR_NOTFOUND] = 1;
	}
}

/*
 * Node k's part of job j: one step, per mount the reads of its input in the
 * first minute, a checkpoint's writes every 30-60 minutes, its output's
 * writes in the last minute, opens and stats in 1 bin of 20.
 */
static void make_part(const struct jobspec *j, unsigned int k, struct ioacct_jobdata *jd)
{
	uint64_t s = j->s * 131 + k;
	uint32_t nbins = (uint32_t)(j->dur_ns / WIDTH_NS) + 1, every = 360 + (uint32_t)(mix(&s) % 360);
	size_t cap = 0;

	memset(jd, 0, sizeof(*jd));
	jd->job.job_id = j->job_id;
	snprintf(jd->job.cluster, sizeof(jd->job.cluster), "big");
	snprintf(jd->job.node, sizeof(jd->job.node), "n%04u", (j->first_node + k) % nnodes);
	snprintf(jd->job.source, sizeof(jd->job.source), "slurm");
	jd->job.uid = jd->job.gid = 10000 + j->user;
	snprintf(jd->job.user, sizeof(jd->job.user), "user%03u", j->user);
	snprintf(jd->job.name, sizeof(jd->job.name), "run-%" PRIu64, j->job_id % 997);
	snprintf(jd->job.workdir, sizeof(jd->job.workdir), "/home/user%03u/run", j->user);
	jd->job.start_ns = j->start_ns + (int64_t)k * 1000000;
	jd->job.end_ns = j->start_ns + j->dur_ns;
	snprintf(jd->job.state, sizeof(jd->job.state), "COMPLETED");
	snprintf(jd->job.probe_mode, sizeof(jd->job.probe_mode), "fentry");
	jd->job.bin_width_ns = WIDTH_NS;
	jd->steps = calloc(1, sizeof(*jd->steps));
	jd->mounts = calloc(j->nmounts, sizeof(*jd->mounts));
	if (!jd->steps || !jd->mounts)
		abort();
	jd->nsteps = 1;
	jd->steps[0].step_id = 0;
	jd->steps[0].start_ns = jd->job.start_ns;
	jd->steps[0].end_ns = jd->job.end_ns;
	snprintf(jd->steps[0].state, sizeof(jd->steps[0].state), "COMPLETED");
	jd->nmounts = j->nmounts;
	for (unsigned int m = 0; m < j->nmounts; m++) {
		jd->mounts[m].mnt_id = mounts[m].id;
		snprintf(jd->mounts[m].path, sizeof(jd->mounts[m].path), "%s", mounts[m].path);
		snprintf(jd->mounts[m].fstype, sizeof(jd->mounts[m].fstype), "%s", mounts[m].fstype);
		snprintf(jd->mounts[m].source, sizeof(jd->mounts[m].source), "%s", mounts[m].source);
	}
	/* In (step, mount, op, bin) order, as the store gives them. */
	for (unsigned int m = 0; m < j->nmounts; m++)
		for (uint32_t op = 0; op < IOACCT_OP_COUNT; op++) {
			if (op != IOACCT_OP_READ && op != IOACCT_OP_WRITE && op != IOACCT_OP_OPEN &&
			    op != IOACCT_OP_STAT)
				continue;
			for (uint32_t b = 0; b < nbins; b++) {
				bool on;

				if (op == IOACCT_OP_READ)
					on = b < 12;
				else if (op == IOACCT_OP_WRITE)
					on = b % every < 6 || b + 12 >= nbins;
				else
					on = b % 20 == 0;
				if (on)
					fill(add_sample(jd, &cap, mounts[m].id, op, b), &s, 4);
			}
		}
	/* Totals: the series summed per (mount, op). */
	jd->totals = calloc(jd->nseries ? jd->nseries : 1, sizeof(*jd->totals));
	if (!jd->totals)
		abort();
	for (size_t i = 0; i < jd->nseries; i++) {
		const struct ioacct_sample *x = &jd->series[i];
		struct ioacct_sample *t;

		if (!jd->ntotals || jd->totals[jd->ntotals - 1].mnt_id != x->mnt_id ||
		    jd->totals[jd->ntotals - 1].op != x->op) {
			t = &jd->totals[jd->ntotals++];
			*t = *x;
			t->bin = 0;
			continue;
		}
		t = &jd->totals[jd->ntotals - 1];
		t->c.calls += x->c.calls;
		t->c.bytes += x->c.bytes;
		t->c.ns += x->c.ns;
		t->c.errors += x->c.errors;
		for (int h = 0; h < IOACCT_NR_SIZE_BINS; h++)
			t->c.size_hist[h] += x->c.size_hist[h];
		for (int e = 0; e < IOACCT_NR_ERR_CLASSES; e++)
			t->c.errclass[e] += x->c.errclass[e];
	}
}

struct exporter {
	pthread_t thread;
	unsigned int index, day;
	uint64_t parts, samples;
	int err;
	struct ioacct_pgstore *pg;
};

static void part_free(struct ioacct_jobdata *jd)
{
	free(jd->steps);
	free(jd->mounts);
	free(jd->series);
	free(jd->totals);
}

/*
 * A part's merged report offered and claimed, when its job has several nodes,
 * as ioacctd's exporter does after the commit for a job with one (every node
 * expected).
 */
static int offer(struct exporter *e, const struct jobspec *j, const struct ioacct_jobdata *jd)
{
	static const struct ioacct_report_spec none;
	struct ioacct_report_spec *spec;
	size_t len = 0;
	int err;

	if (j->nodes < 2)
		return 0;
	spec = malloc(sizeof(*spec));
	if (!spec)
		return -ENOMEM;
	*spec = none;
	snprintf(spec->path, sizeof(spec->path), "/nonexistent/cluster-year");
	spec->formats = 1;
	for (unsigned int k = 0; k < j->nodes && len < sizeof(spec->nodes); k++)
		len += (size_t)snprintf(spec->nodes + len, sizeof(spec->nodes) - len, "%sn%04u",
					k ? "," : "", (j->first_node + k) % nnodes);
	err = ioacct_pgstore_report_offer(e->pg, &jd->job, spec, 3600);
	free(spec);
	if (err)
		return err;
	/* Claimed as ioacctd claims it; the last part's claim loads the job whole (not rendered). */
	{
		struct ioacct_pgstore_report rep;
		struct ioacct_jobdata *whole = NULL;

		err = ioacct_pgstore_report_claim(e->pg, &jd->job, false, &rep, &whole);
		if (!err)
			err = ioacct_pgstore_report_written(e->pg, &jd->job, "");
		ioacct_jobdata_free(whole);
	}
	return err == -EAGAIN || err == -EALREADY ? 0 : err;
}

/* Sends the exporter's batch, as ioacctd's exporter does with a backlog. */
static void flush_batch(struct exporter *e, struct ioacct_jobdata *batch,
			const struct jobspec *specs, size_t *n)
{
	const struct ioacct_jobdata *jds[IOACCT_PGSTORE_BATCH_JOBS];

	for (size_t i = 0; i < *n; i++)
		jds[i] = &batch[i];
	if (*n && !e->err) {
		e->err = ioacct_pgstore_jobs_put(e->pg, jds, *n);
		for (size_t i = 0; i < *n && reports && !e->err; i++)
			e->err = offer(e, &specs[i], &batch[i]);
		if (e->err)
			fprintf(stderr, "cluster-year: %s\n", ioacct_pgstore_errmsg(e->pg));
	}
	for (size_t i = 0; i < *n; i++)
		part_free(&batch[i]);
	*n = 0;
}

/*
 * Exporter e's day: the parts of every job on the nodes it serves (node %
 * nexporters == e), in batches within ioacctd's limits (pgstore.h): a day
 * after an outage, each node's backlog.
 */
static void *export_day(void *arg)
{
	struct exporter *e = arg;
	struct ioacct_jobdata batch[IOACCT_PGSTORE_BATCH_JOBS];
	struct jobspec specs[IOACCT_PGSTORE_BATCH_JOBS];
	size_t n = 0, samples = 0;

	for (unsigned int i = 0; i < jobs_per_day && !e->err; i++) {
		struct jobspec j;

		job_spec(e->day, i, &j);
		for (unsigned int k = 0; k < j.nodes && !e->err; k++) {
			struct ioacct_jobdata *jd = &batch[n];

			if ((j.first_node + k) % nnodes % nexporters != e->index)
				continue;
			make_part(&j, k, jd);
			specs[n] = j;
			e->parts++;
			e->samples += jd->nseries;
			samples += jd->nseries + jd->ntotals;
			if (++n == IOACCT_PGSTORE_BATCH_JOBS ||
			    samples >= IOACCT_PGSTORE_BATCH_SAMPLES) {
				flush_batch(e, batch, specs, &n);
				samples = 0;
			}
		}
	}
	flush_batch(e, batch, specs, &n);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long db_size(PGconn *c)
{
	PGresult *r = PQexec(c, "SELECT pg_database_size(current_database())");
	long long v = PQresultStatus(r) == PGRES_TUPLES_OK ? atoll(PQgetvalue(r, 0, 0)) : -1;

	PQclear(r);
	return v;
}

static int count_fn(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks, size_t npeaks,
		    void *arg)
{
	(void)jd;
	(void)peaks;
	(void)npeaks;
	++*(size_t *)arg;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of 5 runs of one query, in ms; n: the jobs it gave. */
static double time_query(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f, size_t *n)
{
	double t[5];

	for (int i = 0; i < 5; i++) {
		double t0 = now_s();

		*n = 0;
		if (ioacct_pgstore_jobs_select(pg, f, false, count_fn, n) < 0) {
			fprintf(stderr, "cluster-year: query: %s\n", ioacct_pgstore_errmsg(pg));
			exit(1);
		}
		t[i] = (now_s() - t0) * 1000;
	}
	qsort(t, 5, sizeof(t[0]), cmp_d);
	return t[2];
}

static void queries(struct ioacct_pgstore *pg)
{
	struct jobspec j, big = { 0 };
	struct ioacct_store_filter f;
	uint64_t id;
	uint32_t uid;
	size_t n;
	double t[5];

	/* The last day's biggest job, and a job and a user of its middle. */
	for (unsigned int i = 0; i < jobs_per_day; i++) {
		job_spec(ndays - 1, i, &j);
		if (j.nodes > big.nodes)
			big = j;
	}
	job_spec(ndays - 1, jobs_per_day / 2, &j);
	id = j.job_id;
	uid = 10000 + j.user;
	memset(&f, 0, sizeof(f));
	f.job_ids = &id;
	f.njob_ids = 1;
	printf("query -j %" PRIu64 ": %.1f ms", id, time_query(pg, &f, &n));
	printf(" (%zu job)\n", n);
	memset(&f, 0, sizeof(f));
	f.uids = &uid;
	f.nuids = 1;
	f.start_ns = j.start_ns - 12 * 3600 * NS;
	f.end_ns = j.start_ns + 12 * 3600 * NS;
	printf("query -u %u -S -E (a day): %.1f ms", uid, time_query(pg, &f, &n));
	printf(" (%zu jobs)\n", n);
	for (int i = 0; i < 5; i++) {
		struct ioacct_jobdata *jd = NULL;
		double t0 = now_s();

		if (ioacct_pgstore_job_load(pg, "big", big.job_id, 0, &jd)) {
			fprintf(stderr, "cluster-year: load: %s\n", ioacct_pgstore_errmsg(pg));
			exit(1);
		}
		t[i] = (now_s() - t0) * 1000;
		if (i == 0)
			printf("job %" PRIu64 " whole (%u nodes, %.1f h, %zu bins summed): ", big.job_id,
			       big.nodes, (double)big.dur_ns / 3600e9, jd->nseries);
		ioacct_jobdata_free(jd);
	}
	qsort(t, 5, sizeof(t[0]), cmp_d);
	printf("%.1f ms\n", t[2]);
}

int main(int argc, char **argv)
{
	struct exporter *ex;
	char err[1024];
	PGconn *c;
	uint64_t all_parts = 0, all_samples = 0;
	double all_s = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: cluster-year CONNINFO [NODES [JOBS_PER_DAY [DAYS [EXPORTERS [SEED]]]]]\n");
		return 2;
	}
	conninfo = argv[1];
	if (argc > 2)
		nnodes = (unsigned int)strtoul(argv[2], NULL, 10);
	if (argc > 3)
		jobs_per_day = (unsigned int)strtoul(argv[3], NULL, 10);
	if (argc > 4)
		ndays = (unsigned int)strtoul(argv[4], NULL, 10);
	if (argc > 5)
		nexporters = (unsigned int)strtoul(argv[5], NULL, 10);
	if (argc > 6)
		seed = strtoull(argv[6], NULL, 10);
	if (!nnodes || !jobs_per_day || !ndays || !nexporters) {
		fprintf(stderr, "cluster-year: NODES, JOBS_PER_DAY, DAYS and EXPORTERS must be > 0\n");
		return 2;
	}
	if (nexporters > nnodes)
		nexporters = nnodes;
	reports = getenv("CLUSTER_YEAR_REPORTS") && !strcmp(getenv("CLUSTER_YEAR_REPORTS"), "1");
	cpuacct = getenv("CLUSTER_YEAR_CPUACCT");
	if (cpuacct && pg_cpu_s() < 0) {
		fprintf(stderr, "cluster-year: cannot read %s\n", cpuacct);
		return 1;
	}
	c = PQconnectdb(conninfo);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "cluster-year: %s", PQerrorMessage(c));
		return 1;
	}
	ex = calloc(nexporters, sizeof(*ex));
	if (!ex)
		return 1;
	/* One connection each, opened (and the schema made) one after the other. */
	for (unsigned int e = 0; e < nexporters; e++) {
		ex[e].index = e;
		ex[e].pg = ioacct_pgstore_open(conninfo, NULL, err, sizeof(err));
		if (!ex[e].pg) {
			fprintf(stderr, "cluster-year: exporter %u: %s\n", e, err);
			return 1;
		}
	}
	printf("cluster-year: %u nodes, %u jobs a day, %u days, %u exporters, 5 s bins, seed %" PRIu64
	       "%s\n", nnodes, jobs_per_day, ndays, nexporters, seed,
	       reports ? ", merged reports offered" : "");
	printf("%4s %9s %12s %8s %10s %12s %14s\n", "day", "parts", "samples", "secs", "jobs/s",
	       "samples/s", "db_bytes");
	for (unsigned int d = 0; d < ndays; d++) {
		uint64_t parts = 0, samples = 0;
		double t0 = now_s(), cpu0 = pg_cpu_s(), dt;

		for (unsigned int e = 0; e < nexporters; e++) {
			ex[e].day = d;
			ex[e].parts = ex[e].samples = 0;
			if (pthread_create(&ex[e].thread, NULL, export_day, &ex[e]))
				return 1;
		}
		for (unsigned int e = 0; e < nexporters; e++) {
			pthread_join(ex[e].thread, NULL);
			if (ex[e].err)
				return 1;
			parts += ex[e].parts;
			samples += ex[e].samples;
		}
		dt = now_s() - t0;
		all_parts += parts;
		all_samples += samples;
		all_s += dt;
		printf("%4u %9" PRIu64 " %12" PRIu64 " %8.1f %10.1f %12.0f %14lld\n", d + 1, parts, samples,
		       dt, jobs_per_day / dt, (double)samples / dt, db_size(c));
		if (cpuacct) {
			double cpu = pg_cpu_s() - cpu0;

			printf("day %u: PostgreSQL CPU %.1f s, %.2f ms a job, %.2f ms a part\n", d + 1,
			       cpu, cpu * 1e3 / jobs_per_day, cpu * 1e3 / (double)parts);
		}
		fflush(stdout);
	}
	long long size = db_size(c);

	printf("total: %" PRIu64 " parts, %" PRIu64 " samples in %.1f s: %.1f jobs/s, %.0f samples/s;"
	       " %.0f bytes a job, %.1f bytes a sample\n",
	       all_parts, all_samples, all_s, (double)jobs_per_day * ndays / all_s,
	       (double)all_samples / all_s, (double)size / ((double)jobs_per_day * ndays),
	       (double)size / (double)all_samples);
	printf("a year at this rate: %.1f GB (365 x %u jobs x %.0f bytes)\n",
	       365.0 * jobs_per_day * ((double)size / ((double)jobs_per_day * ndays)) / 1e9, jobs_per_day,
	       (double)size / ((double)jobs_per_day * ndays));
	queries(ex[0].pg);
	for (unsigned int e = 0; e < nexporters; e++)
		ioacct_pgstore_close(ex[e].pg);
	PQfinish(c);
	free(ex);
	return 0;
}
