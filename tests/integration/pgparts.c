// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pgparts: exports made-up parts of one multi-node job into the cluster
 * store through ioacct_pgstore_job_put, as ioacctd's exporter does, one
 * transaction each, in the order given; prints each part's export time.
 * With -e NODES, each part's export is followed by its merged report's
 * offer (ioacct_pgstore_report_offer, expected nodes NODES, "a,b,c"), as
 * ioacctd's exporter does for a job with a merged report: the part that
 * completes the run makes its merged series (issue 28). PGPARTS_RESTART=N:
 * the parts are of run N (a requeued job's, Slurm's restart count).
 * PGPARTS_OFFER_ONLY=1: the parts are offered (-e) without being exported:
 * the offer of a node whose part went in before the report's row existed.
 *
 *   pgparts [-e NODES] CONNINFO JOB_ID BINS WIDTH_NS SPEC...
 *
 * SPEC is NODE:OFFSET_NS[:MOUNTS[:GEN]]: the part of node NODE, started
 * OFFSET_NS after 2025-01-01, with BINS bins of WIDTH_NS on each of MOUNTS
 * (letters, each a mount /mnt/LETTER; default "abc"), in reads, writes, opens
 * and stats, every bin non-empty. Its mount ids are the letters' positions
 * counted down from 40, so that nodes number the same path differently.
 * GEN (default 1) changes every value: a node given twice is its part
 * exported again (a restarted export, a running job's next step); GEN "big"
 * puts bytes near UINT64_MAX in bin 0 (sums past uint64 are exact only in
 * PostgreSQL's numeric). Prints "NODE ms" per part and exits 0, or says
 * what failed and exits 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgstore.h"
#include "util.h"

static const uint32_t ops[] = { IOACCT_OP_READ, IOACCT_OP_WRITE, IOACCT_OP_OPEN, IOACCT_OP_STAT };
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One part from its spec into jd (malloc'd arrays). -1 when out of memory or bad. */
static int make_part(struct ioacct_jobdata *jd, uint64_t job_id, uint32_t bins, uint64_t width,
		     char *spec)
{
	char *node = strtok(spec, ":"), *off = strtok(NULL, ":"), *mnts = strtok(NULL, ":");
	char *gen_s = strtok(NULL, ":");
	bool big = gen_s && !strcmp(gen_s, "big");
	uint64_t gen = gen_s && !big ? strtoull(gen_s, NULL, 10) : 1;
	size_t nm, ns = 0;

	if (!node || !off)
		return -1;
	if (!mnts)
		mnts = "abc";
	nm = strlen(mnts);
	memset(jd, 0, sizeof(*jd));
	jd->job.job_id = job_id;
	ioacct_strlcpy(jd->job.cluster, "bench", sizeof(jd->job.cluster));
	ioacct_strlcpy(jd->job.node, node, sizeof(jd->job.node));
	ioacct_strlcpy(jd->job.source, "slurm", sizeof(jd->job.source));
	ioacct_strlcpy(jd->job.user, "user", sizeof(jd->job.user));
	ioacct_strlcpy(jd->job.name, "parts", sizeof(jd->job.name));
	ioacct_strlcpy(jd->job.workdir, "/home/user", sizeof(jd->job.workdir));
	ioacct_strlcpy(jd->job.state, "COMPLETED", sizeof(jd->job.state));
	ioacct_strlcpy(jd->job.probe_mode, "fentry", sizeof(jd->job.probe_mode));
	jd->job.uid = jd->job.gid = 1000;
	jd->job.start_ns = 1735689600000000000 + strtoll(off, NULL, 10);
	jd->job.end_ns = jd->job.start_ns + (int64_t)(bins * width);
	jd->job.bin_width_ns = width;
	/* A requeued run (Slurm's restart count), from the environment. */
	if (getenv("PGPARTS_RESTART"))
		jd->job.restart = (uint32_t)strtoul(getenv("PGPARTS_RESTART"), NULL, 10);
	jd->steps = calloc(1, sizeof(*jd->steps));
	jd->mounts = calloc(nm, sizeof(*jd->mounts));
	jd->totals = calloc(nm * NOPS, sizeof(*jd->totals));
	jd->series = calloc(nm * NOPS * (size_t)bins, sizeof(*jd->series));
	if (!jd->steps || !jd->mounts || !jd->totals || !jd->series)
		return -1;
	jd->nsteps = 1;
	jd->steps[0].start_ns = jd->job.start_ns;
	jd->steps[0].end_ns = jd->job.end_ns;
	ioacct_strlcpy(jd->steps[0].state, "COMPLETED", sizeof(jd->steps[0].state));
	for (size_t m = 0; m < nm; m++) {
		jd->mounts[m].mnt_id = 40 - (uint32_t)m;
		snprintf(jd->mounts[m].path, sizeof(jd->mounts[m].path), "/mnt/%c", mnts[m]);
		ioacct_strlcpy(jd->mounts[m].fstype, "ext4", sizeof(jd->mounts[m].fstype));
		ioacct_strlcpy(jd->mounts[m].source, "/dev/x", sizeof(jd->mounts[m].source));
		jd->nmounts++;
		for (size_t o = 0; o < NOPS; o++) {
			struct ioacct_sample *t = &jd->totals[jd->ntotals++];

			t->mnt_id = jd->mounts[m].mnt_id;
			t->op = ops[o];
			for (uint32_t b = 0; b < bins; b++) {
				struct ioacct_sample *s = &jd->series[ns++];
				uint64_t v = (gen * 7919 + (uint64_t)mnts[m] * 104729 + b * 31 + o) % 1000;

				s->mnt_id = t->mnt_id;
				s->op = ops[o];
				s->bin = b;
				s->c.calls = v % 50 + gen;
				s->c.ns = (v + 1) * 1000;
				if (ops[o] == IOACCT_OP_READ || ops[o] == IOACCT_OP_WRITE) {
					s->c.bytes = (v + 1) * 4096;
					s->c.size_hist[5] = s->c.calls;
				}
				if (big && !b)
					s->c.bytes = UINT64_MAX - 10;
				ioacct_counters_add(&t->c, &s->c);
			}
		}
	}
	jd->nseries = ns;
	return 0;
}

int main(int argc, char **argv)
{
	static struct ioacct_report_spec spec;
	const char *expected = NULL;
	struct ioacct_pgstore *pg;
	char err[1024];
	uint64_t job_id, width;
	uint32_t bins;

	if (argc > 2 && !strcmp(argv[1], "-e")) {
		expected = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 6) {
		fprintf(stderr, "usage: pgparts [-e NODES] CONNINFO JOB_ID BINS WIDTH_NS"
			" NODE:OFFSET_NS[:MOUNTS[:GEN]]...\n");
		return 2;
	}
	if (expected) {
		ioacct_strlcpy(spec.nodes, expected, sizeof(spec.nodes));
		ioacct_strlcpy(spec.path, "/nonexistent/pgparts", sizeof(spec.path));
		spec.formats = 1;
	}
	job_id = strtoull(argv[2], NULL, 10);
	bins = (uint32_t)strtoul(argv[3], NULL, 10);
	width = strtoull(argv[4], NULL, 10);
	if (!job_id || !bins || !width) {
		fprintf(stderr, "pgparts: JOB_ID, BINS and WIDTH_NS are positive numbers\n");
		return 2;
	}
	pg = ioacct_pgstore_open(argv[1], NULL, err, sizeof(err));
	if (!pg) {
		fprintf(stderr, "pgparts: %s\n", err);
		return 1;
	}
	for (int i = 5; i < argc; i++) {
		struct ioacct_jobdata jd;
		double t0;
		int ret = make_part(&jd, job_id, bins, width, argv[i]);

		if (ret) {
			fprintf(stderr, "pgparts: bad part %s, or out of memory\n", argv[i]);
		} else {
			t0 = now_ms();
			ret = getenv("PGPARTS_OFFER_ONLY") ? 0 : ioacct_pgstore_job_put(pg, &jd);
			if (!ret && expected)
				ret = ioacct_pgstore_report_offer(pg, &jd.job, &spec, 3600);
			if (ret)
				fprintf(stderr, "pgparts: %s\n", ioacct_pgstore_errmsg(pg));
			else
				printf("%s %.1f\n", jd.job.node, now_ms() - t0);
		}
		free(jd.steps);
		free(jd.mounts);
		free(jd.totals);
		free(jd.series);
		if (ret) {
			ioacct_pgstore_close(pg);
			return 1;
		}
	}
	ioacct_pgstore_close(pg);
	return 0;
}
