// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * query-gen: writes a store the size of a busy cluster's year for
 * tests/bench/query-bench: NJOBS jobs (1,000,000 by default) over 365 days
 * from 2024-01-01 UTC, 200 users, each job with a batch step (and half of
 * them a step 0) and I/O on three mounts, its totals and BINS time bins per
 * (step, mount, operation). The last jobs are still running.
 *
 *   query-gen DB [NJOBS [BINS]]
 *
 * The schema comes from the store itself (ioacct_store_open), the rows from
 * prepared statements in one transaction with the journal off: a store
 * written this way is the same as the daemon's, only much faster to make.
 * Deterministic: the same arguments give the same store.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "model.h"
#include "store.h"

#define NS 1000000000LL
#define EPOCH_2024 1704067200LL
#define DAYS 365
#define NUSERS 200
#define NRUNNING 20

struct mnt {
	uint32_t id;
	const char *path, *fstype, *source;
	unsigned int ops[4];
	unsigned int nops;
};

static const struct mnt mounts[3] = {
	{ 21, "/", "ext4", "/dev/sda1", { IOACCT_OP_OPEN, IOACCT_OP_STAT, IOACCT_OP_READ }, 3 },
	{ 25, "/home", "nfs4", "fs1:/home", { IOACCT_OP_OPEN, IOACCT_OP_READ, IOACCT_OP_STAT }, 3 },
	{ 30, "/scratch", "lustre", "10.0.0.1@tcp:/scratch",
	  { IOACCT_OP_OPEN, IOACCT_OP_READ, IOACCT_OP_WRITE, IOACCT_OP_FSYNC }, 4 },
};

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static sqlite3 *db;

static void die(const char *what)
{
	fprintf(stderr, "query-gen: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
	exit(1);
}

static sqlite3_stmt *prepare(const char *sql)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		die(sql);
	return s;
}

static void run(sqlite3_stmt *s, const char *what)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		die(what);
	sqlite3_reset(s);
}

static void exec(const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(sql);
}

static sqlite3_stmt *ins_job, *ins_step, *ins_mount, *ins_series, *ins_total;

/* A (step, mount, op)'s bins: `bins` rows of series, their sum in totals. */
static void put_counters(int64_t key, uint32_t step, uint32_t mnt, unsigned int op,
			 unsigned int bins, uint64_t width_bins)
{
	uint64_t sum[4] = { 0 }, hist[10] = { 0 };
	bool data = op == IOACCT_OP_READ || op == IOACCT_OP_WRITE;

	for (unsigned int b = 0; b < bins; b++) {
		uint64_t calls = 1 + next() % 500, size = data ? 4096ULL << (next() % 9) : 0;
		uint64_t v[4] = { calls * size, calls, next() % 8 == 0 ? next() % 3 : 0,
				  calls * (2000 + next() % 50000) };
		unsigned int sb = data ? ioacct_size_bin(size) : 0;
		/* Spread over the job; a job shorter than BINS bins gets consecutive ones. */
		uint64_t step_bins = width_bins / bins ? width_bins / bins : 1;
		uint32_t bin = (uint32_t)(bins > 1 ? b * step_bins : 0);

		sqlite3_bind_int64(ins_series, 1, key);
		sqlite3_bind_int64(ins_series, 2, step);
		sqlite3_bind_int64(ins_series, 3, mnt);
		sqlite3_bind_int64(ins_series, 4, op);
		sqlite3_bind_int64(ins_series, 5, bin);
		for (int i = 0; i < 4; i++) {
			sqlite3_bind_int64(ins_series, 6 + i, (sqlite3_int64)v[i]);
			sum[i] += v[i];
		}
		for (int i = 0; i < 10; i++)
			sqlite3_bind_int64(ins_series, 10 + i, data && i == (int)sb ? (sqlite3_int64)calls : 0);
		if (data)
			hist[sb] += calls;
		run(ins_series, "insert series");
	}
	sqlite3_bind_int64(ins_total, 1, key);
	sqlite3_bind_int64(ins_total, 2, step);
	sqlite3_bind_int64(ins_total, 3, mnt);
	sqlite3_bind_int64(ins_total, 4, op);
	for (int i = 0; i < 4; i++)
		sqlite3_bind_int64(ins_total, 5 + i, (sqlite3_int64)sum[i]);
	for (int i = 0; i < 10; i++)
		sqlite3_bind_int64(ins_total, 9 + i, (sqlite3_int64)hist[i]);
	run(ins_total, "insert totals");
}

/* Mostly minutes to hours, a few for days. */
static int64_t duration_s(void)
{
	uint64_t r = next() % 1000;

	if (r == 0)
		return 86400 + (int64_t)(next() % (2 * 86400));
	if (r < 100)
		return 3600 + (int64_t)(next() % (8 * 3600));
	return 30 + (int64_t)(next() % 3600);
}

static void put_job(int64_t key, uint64_t n, uint64_t njobs, unsigned int bins)
{
	const int64_t span = (int64_t)DAYS * 86400;
	int64_t start = (EPOCH_2024 + (int64_t)((double)span * (double)(key - 1) / (double)njobs)) * NS +
			(int64_t)(next() % NS);
	int64_t dur = duration_s() * NS;
	bool running = (uint64_t)key > njobs - NRUNNING;
	unsigned int user = (unsigned int)(next() % NUSERS);
	bool iorun = next() % 20 == 0;
	uint32_t steps[2] = { IOACCT_STEP_BATCH, 0 };
	unsigned int nsteps = next() % 2 ? 2 : 1;
	char name[64], uname[32], node[32], workdir[64];
	uint64_t width = 5 * NS;

	(void)n;
	snprintf(uname, sizeof(uname), "user%03u", user);
	snprintf(name, sizeof(name), iorun ? "a.out" : "job-%" PRId64, key % 9973);
	snprintf(node, sizeof(node), "n%04u", (unsigned int)(next() % 1000));
	snprintf(workdir, sizeof(workdir), "/home/%s/run%u", uname, (unsigned int)(next() % 50));
	if (iorun) {
		steps[0] = 0;
		nsteps = 1;
	}
	sqlite3_bind_int64(ins_job, 1, key);
	sqlite3_bind_text(ins_job, 2, iorun ? "iorun" : "hpc", -1, SQLITE_STATIC);
	sqlite3_bind_int64(ins_job, 3, key); /* job ids: the key is as good as Slurm's */
	sqlite3_bind_text(ins_job, 4, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(ins_job, 5, iorun ? "iorun" : "slurm", -1, SQLITE_STATIC);
	sqlite3_bind_int64(ins_job, 6, 10000 + user);
	sqlite3_bind_int64(ins_job, 7, 10000 + user);
	sqlite3_bind_text(ins_job, 8, uname, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(ins_job, 9, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(ins_job, 10, workdir, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(ins_job, 11, start);
	if (running)
		sqlite3_bind_null(ins_job, 12);
	else
		sqlite3_bind_int64(ins_job, 12, start + dur);
	sqlite3_bind_text(ins_job, 13, running ? "RUNNING" : next() % 10 ? "COMPLETED" : "FAILED", -1,
			  SQLITE_STATIC);
	sqlite3_bind_int64(ins_job, 14, (sqlite3_int64)width);
	run(ins_job, "insert job");

	for (unsigned int s = 0; s < nsteps; s++) {
		sqlite3_bind_int64(ins_step, 1, key);
		sqlite3_bind_int64(ins_step, 2, steps[s]);
		sqlite3_bind_int64(ins_step, 3, start + (int64_t)s * NS);
		if (running)
			sqlite3_bind_null(ins_step, 4);
		else
			sqlite3_bind_int64(ins_step, 4, start + dur);
		sqlite3_bind_text(ins_step, 5, running ? "RUNNING" : "COMPLETED", -1, SQLITE_STATIC);
		run(ins_step, "insert step");
	}
	for (unsigned int m = 0; m < 3; m++) {
		sqlite3_bind_int64(ins_mount, 1, key);
		sqlite3_bind_int64(ins_mount, 2, mounts[m].id);
		sqlite3_bind_text(ins_mount, 3, mounts[m].path, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins_mount, 4, mounts[m].fstype, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins_mount, 5, mounts[m].source, -1, SQLITE_STATIC);
		run(ins_mount, "insert mount");
	}
	/* Rows in primary-key order: the WITHOUT ROWID tables only ever append. */
	for (unsigned int s = 0; s < nsteps; s++)
		for (unsigned int m = 0; m < 3; m++) {
			unsigned int ops[4];

			memcpy(ops, mounts[m].ops, sizeof(ops));
			for (unsigned int a = 0; a < mounts[m].nops; a++)
				for (unsigned int b = a + 1; b < mounts[m].nops; b++)
					if (ops[b] < ops[a]) {
						unsigned int t = ops[a];

						ops[a] = ops[b];
						ops[b] = t;
					}
			for (unsigned int o = 0; o < mounts[m].nops; o++)
				put_counters(key, steps[s], mounts[m].id, ops[o], bins,
					     (uint64_t)dur / width + 1);
		}
}

int main(int argc, char **argv)
{
	uint64_t njobs = 1000000;
	unsigned int bins = 2;
	struct ioacct_store *st;
	char err[1024];

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: query-gen DB [NJOBS [BINS]]\n");
		return 2;
	}
	if (argc > 2)
		njobs = strtoull(argv[2], NULL, 10);
	if (argc > 3)
		bins = (unsigned int)strtoul(argv[3], NULL, 10);
	if (njobs <= NRUNNING || bins < 1 || bins > 1000) {
		fprintf(stderr, "query-gen: NJOBS must be above %d, BINS from 1 to 1000\n", NRUNNING);
		return 2;
	}
	if (access(argv[1], F_OK) == 0) {
		fprintf(stderr, "query-gen: %s exists; give a new file\n", argv[1]);
		return 1;
	}
	st = ioacct_store_open(argv[1], IOACCT_STORE_RDWR, err, sizeof(err));
	if (!st) {
		fprintf(stderr, "query-gen: %s\n", err);
		return 1;
	}
	ioacct_store_close(st);

	if (sqlite3_open(argv[1], &db) != SQLITE_OK)
		die("open");
	exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -500000;"
	     " BEGIN");
	ins_job = prepare("INSERT INTO jobs (key, cluster, job_id, node, source, uid, gid, user, name,"
			  " workdir, start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns,"
			  " dropped_events, dropped_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
			  " ?10, ?11, ?12, ?13, 0, 'tracepoint', ?14, 0, 0)");
	ins_step = prepare("INSERT INTO steps (job_key, step_id, start_ns, end_ns, state, exit_code,"
			   " cgroup) VALUES (?1, ?2, ?3, ?4, ?5, 0, '')");
	ins_mount = prepare("INSERT INTO mounts (job_key, mnt_id, path, fstype, source)"
			    " VALUES (?1, ?2, ?3, ?4, ?5)");
	/* Columns named: later schemas add some (the error classes), left to their defaults. */
	ins_series = prepare("INSERT INTO series (job_key, step_id, mnt_id, op, bin, bytes, calls,"
			     " errors, ns, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
			     " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)");
	ins_total = prepare("INSERT INTO totals (job_key, step_id, mnt_id, op, bytes, calls, errors,"
			    " ns, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
			    " ?12, ?13, ?14, ?15, ?16, ?17, ?18)");
	for (uint64_t k = 1; k <= njobs; k++)
		put_job((int64_t)k, k, njobs, bins);
	exec("COMMIT");
	sqlite3_finalize(ins_job);
	sqlite3_finalize(ins_step);
	sqlite3_finalize(ins_mount);
	sqlite3_finalize(ins_series);
	sqlite3_finalize(ins_total);
	/* Back to what the daemon leaves: WAL, statistics for the planner left to SQLite. */
	exec("PRAGMA journal_mode = WAL");
	sqlite3_close(db);
	printf("query-gen: %s: %" PRIu64 " jobs, %u bins per (step, mount, op)\n", argv[1], njobs,
	       bins);
	return 0;
}
