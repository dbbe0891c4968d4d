// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacct --purge [--dry-run] [--before DURATION|TIME]: the node's store
 * purged by hand, as ioacctd does every retention_interval with
 * purge_after (lib/store/retain.h says what goes and what never does).
 * A dry run lists what would go, per user, and changes nothing.
 * ioacct --purge --dry-run --cluster-store: what ioacctd's cluster_retention
 * would delete from the cluster store, per month; its purge is the daemon's.
 */
#include "purge.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "duration.h"
#include "pgstore.h"
#include "query.h"
#include "retain.h"
#include "store.h"
#include "util.h"

/* now - s, or for the cluster store the month's start as ioacctd puts it (pgstore.h). */
static int64_t ago_ns(const struct ioacct_purge_opts *o, time_t now, uint64_t s)
{
	if (o->cluster_store)
		return ioacct_pgstore_purge_cutoff((int64_t)now, s) * (int64_t)NSEC_PER_SEC;
	return ((int64_t)now - (int64_t)s) * (int64_t)NSEC_PER_SEC;
}

/* The cutoff: jobs that ended before it go. 0 or the exit status, said. */
static int cutoff_of(const struct ioacct_purge_opts *o, const struct ioacct_config *cfg,
		     time_t now, int64_t *cutoff_ns)
{
	char derr[512], terr[512];
	uint64_t s;
	time_t t;

	if (!o->before) {
		if (!cfg->purge_after_s) {
			fprintf(stderr,
				"ioacct: --purge: no --before, and purge_after is not set in the configuration (see ioacct.conf(5))\n");
			return EXIT_USAGE;
		}
		*cutoff_ns = ago_ns(o, now, cfg->purge_after_s);
		return 0;
	}
	/* A duration as purge_after writes it, else a time as -S and -E do. */
	if (ioacct_duration_parse(o->before, IOACCT_DUR_MONTHS, &s, derr, sizeof(derr)) == 0) {
		*cutoff_ns = ago_ns(o, now, s);
		return 0;
	}
	if (ioacct_query_time_parse(o->before, now, &t, terr, sizeof(terr)) == 0) {
		*cutoff_ns = (int64_t)t * (int64_t)NSEC_PER_SEC;
		return 0;
	}
	fprintf(stderr, "ioacct: --before: neither a duration (%s) nor a time (%s)\n", derr, terr);
	return EXIT_USAGE;
}

static const char *when(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / (int64_t)NSEC_PER_SEC);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

/* Once a second at most: how far a long purge is. */
static int progress(const struct ioacct_retain_result *so_far, void *arg)
{
	time_t *last = arg, now = time(NULL);

	if (now != *last) {
		fprintf(stderr, "ioacct: purged %llu jobs so far (%llu batches)\n",
			(unsigned long long)so_far->jobs, (unsigned long long)so_far->batches);
		*last = now;
	}
	return 0;
}

static void report(const struct ioacct_purge_opts *o, const char *db, int64_t cutoff_ns,
		   const struct ioacct_retain_result *res)
{
	char t[64];

	printf("%s %llu jobs ended before %s from %s (%llu series rows, about %llu bytes)\n",
	       o->dry_run ? "would purge" : "purged", (unsigned long long)res->jobs,
	       when(cutoff_ns, t, sizeof(t)), db, (unsigned long long)res->rows,
	       (unsigned long long)res->bytes);
	for (size_t i = 0; i < res->nusers; i++)
		printf("  user %s (uid %u): %llu jobs\n", res->users[i].user[0] ? res->users[i].user : "?",
		       res->users[i].uid, (unsigned long long)res->users[i].jobs);
	if (res->kept_unexported)
		printf("kept %llu jobs ended before then: not yet exported to the cluster store, or their merged report not yet written\n",
		       (unsigned long long)res->kept_unexported);
}

/* Each month's figures, and the rest's, as the dry run counts them. */
static int cluster_step(const struct ioacct_pgstore_purge_progress *p, void *arg)
{
	(void)arg;
	if (p->step == IOACCT_PG_PURGE_MONTH)
		printf("  month %s, whole (its partitions dropped):", p->month);
	else
		printf("  the rest, row by row:");
	printf(" %llu runs, %llu node parts, %llu series rows\n", (unsigned long long)p->counts.runs,
	       (unsigned long long)p->counts.parts, (unsigned long long)p->counts.series);
	return 0;
}

/*
 * The cluster store's dry run: what ioacctd's purge (cluster_retention)
 * would delete, per month; exact at the moment counted, one read-only
 * statement. The real purge is the daemon's.
 */
static int cluster_dry_run(const struct ioacct_purge_opts *o, const struct ioacct_config *cfg,
			   time_t now)
{
	struct ioacct_pgstore_purge_counts c;
	struct ioacct_pgstore_opts po;
	struct ioacct_pgstore *pg;
	char err[1024], t[64];
	int64_t cutoff_ns;
	uint64_t t0;
	time_t ct;
	int ret;

	if (!o->dry_run) {
		fprintf(stderr, "ioacct: --purge --cluster-store: only with --dry-run: the cluster store (PostgreSQL) is purged by ioacctd, not here: set cluster_retention = yes on one node (ioacct.conf(5))\n");
		return EXIT_USAGE;
	}
	if (!cfg->cluster_db[0]) {
		fprintf(stderr, "ioacct: --purge --cluster-store: no cluster_db in the configuration (ioacct.conf(5))\n");
		return EXIT_USAGE;
	}
	ret = cutoff_of(o, cfg, now, &cutoff_ns);
	if (ret)
		return ret;
	/* Read-only: a dry run changes nothing, not even the schema (ioacctd migrates it). */
	ioacct_pgstore_opts_config(&po, cfg, -1);
	pg = ioacct_pgstore_open_readonly(cfg->cluster_db, &po, err, sizeof(err));
	if (!pg) {
		fprintf(stderr, "ioacct: --purge --cluster-store: %s\n", err);
		return EXIT_RUNTIME;
	}
	ct = (time_t)(cutoff_ns / (int64_t)NSEC_PER_SEC);
	if (!strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", gmtime(&ct)))
		snprintf(t, sizeof(t), "%lld", (long long)ct);
	printf("would purge from the cluster store the runs of jobs ended before %s (every part, no"
	       " merged report waiting):\n", t);
	t0 = ioacct_mono_ms();
	ret = ioacct_pgstore_purge(pg, (int64_t)ct, true, cluster_step, NULL, &c);
	if (ret) {
		fprintf(stderr, "ioacct: --purge --cluster-store: %s\n", ioacct_pgstore_errmsg(pg));
	} else {
		printf("total: %llu runs, %llu node parts, %llu series rows; %llu months whole\n",
		       (unsigned long long)c.runs, (unsigned long long)c.parts,
		       (unsigned long long)c.series, (unsigned long long)c.months);
		printf("(exact when counted, in %llu ms; nothing changed: the purge is ioacctd's,"
		       " cluster_retention = yes)\n", (unsigned long long)(ioacct_mono_ms() - t0));
	}
	ioacct_pgstore_close(pg);
	return ret ? EXIT_RUNTIME : 0;
}

int ioacct_purge_main(const struct ioacct_purge_opts *o, const struct ioacct_config *cfg)
{
	struct ioacct_retain_result res = { 0 };
	const char *db = o->db ? o->db : cfg->db_path;
	char err[PATH_MAX + 512];
	struct ioacct_store *st;
	struct passwd *pw;
	time_t now = time(NULL), last = now;
	int64_t cutoff_ns;
	int ret;

	if (o->cluster_store)
		return cluster_dry_run(o, cfg, now);
	ret = cutoff_of(o, cfg, now, &cutoff_ns);
	if (ret)
		return ret;
	if (getenv("IOACCT_RETAIN_KILL_AT"))
		fprintf(stderr, "ioacct: IOACCT_RETAIN_KILL_AT is set: this purge kills itself (tests only)\n");
	/* The store is ioacctd's account's (ioacctd(8), PRIVILEGES): trusted as root's. */
	pw = getpwnam(cfg->user);
	if (pw)
		ioacct_store_set_owner(pw->pw_uid);
	/* A dry run only reads: it works on a store another process writes, and as any reader. */
	st = ioacct_store_open(db, o->dry_run ? IOACCT_STORE_RDONLY : IOACCT_STORE_RDWR, err,
			       sizeof(err));
	if (!st) {
		fprintf(stderr, "ioacct: --purge: %s%s\n", err,
			errno == EACCES || errno == EPERM || errno == EROFS ?
				" (the store is ioacctd's: run ioacct --purge as root)" : "");
		return EXIT_RUNTIME;
	}
	/* Without a cluster store nothing waits to be exported (see retain.h). */
	ret = ioacct_store_purge(st, cutoff_ns, cfg->cluster_db[0] != '\0', o->dry_run, progress,
				 &last, &res);
	if (ret)
		fprintf(stderr, "ioacct: --purge: %s (%llu jobs purged before it, committed)\n",
			ioacct_store_errmsg(st), (unsigned long long)res.jobs);
	else
		report(o, db, cutoff_ns, &res);
	ioacct_retain_result_free(&res);
	ioacct_store_close(st);
	return ret ? EXIT_RUNTIME : 0;
}
