/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Builds a job in memory, as ioacct_store_job_load() would return it, for the
 * report tests and the render benchmark: samples are appended to the series
 * and summed into the totals. Aborts on out of memory (tests only).
 */
#ifndef IOACCT_TEST_JOBBUILD_H
#define IOACCT_TEST_JOBBUILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define JB_SEC 1000000000ULL
#define JB_MIB 1048576ULL

struct jb {
	struct ioacct_jobdata *jd;
	size_t cap_series;
};

static inline void *jb_grow(void *p, size_t n, size_t size)
{
	void *q = realloc(p, (n ? n : 1) * size);

	if (!q) {
		fprintf(stderr, "jobbuild: out of memory\n");
		abort();
	}
	return q;
}

/* A finished job of `run_ns` that started at a fixed time, bins of `width_ns`. */
static inline void jb_init(struct jb *b, uint64_t width_ns, uint64_t run_ns)
{
	struct ioacct_job *j;

	memset(b, 0, sizeof(*b));
	b->jd = jb_grow(NULL, 1, sizeof(*b->jd));
	memset(b->jd, 0, sizeof(*b->jd));
	j = &b->jd->job;
	j->key = 1;
	j->job_id = 77;
	ioacct_strlcpy(j->cluster, "test", sizeof(j->cluster));
	ioacct_strlcpy(j->node, "n1", sizeof(j->node));
	ioacct_strlcpy(j->source, "slurm", sizeof(j->source));
	ioacct_strlcpy(j->user, "u", sizeof(j->user));
	ioacct_strlcpy(j->name, "job", sizeof(j->name));
	ioacct_strlcpy(j->state, "COMPLETED", sizeof(j->state));
	ioacct_strlcpy(j->probe_mode, "tracepoint", sizeof(j->probe_mode));
	j->start_ns = 1700000000LL * (int64_t)JB_SEC;
	j->end_ns = j->start_ns + (int64_t)run_ns;
	j->bin_width_ns = width_ns;
}

static inline void jb_mount(struct jb *b, uint32_t id, const char *path, const char *fstype)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_mount *m;

	jd->mounts = jb_grow(jd->mounts, jd->nmounts + 1, sizeof(*jd->mounts));
	m = &jd->mounts[jd->nmounts++];
	memset(m, 0, sizeof(*m));
	m->mnt_id = id;
	ioacct_strlcpy(m->path, path, sizeof(m->path));
	ioacct_strlcpy(m->fstype, fstype, sizeof(m->fstype));
	ioacct_strlcpy(m->source, "src", sizeof(m->source));
}

static inline void jb_step(struct jb *b, uint32_t step_id, uint64_t start_off, uint64_t end_off)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_step *s;

	jd->steps = jb_grow(jd->steps, jd->nsteps + 1, sizeof(*jd->steps));
	s = &jd->steps[jd->nsteps++];
	memset(s, 0, sizeof(*s));
	s->step_id = step_id;
	s->start_ns = jd->job.start_ns + (int64_t)start_off;
	s->end_ns = jd->job.start_ns + (int64_t)end_off;
	ioacct_strlcpy(s->state, "COMPLETED", sizeof(s->state));
}

/*
 * `calls` calls of `op` in one bin, `errors` of them failed; for reads and
 * writes the successful ones moved `bytes` in total, all in the size bin of
 * their mean size.
 */
static inline void jb_add(struct jb *b, uint32_t step, uint32_t mnt, uint32_t op, uint32_t bin,
			  uint64_t calls, uint64_t errors, uint64_t bytes, uint64_t ns)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_sample s = { .step_id = step, .mnt_id = mnt, .op = op, .bin = bin };
	struct ioacct_sample *t = NULL;

	s.c.calls = calls;
	s.c.errors = errors;
	s.c.ns = ns;
	if ((op == IOACCT_OP_READ || op == IOACCT_OP_WRITE) && calls > errors) {
		s.c.bytes = bytes;
		s.c.size_hist[ioacct_size_bin(bytes / (calls - errors))] = calls - errors;
	}
	/* The page-cache views: bytes as they are; their histogram is set by jb_view(). */
	if (ioacct_op_kind(op) == IOACCT_OPK_VIEW)
		s.c.bytes = bytes;
	if (jd->nseries == b->cap_series) {
		b->cap_series = b->cap_series ? 2 * b->cap_series : 64;
		jd->series = jb_grow(jd->series, b->cap_series, sizeof(*jd->series));
	}
	jd->series[jd->nseries++] = s;
	for (size_t i = 0; i < jd->ntotals && !t; i++)
		if (jd->totals[i].step_id == step && jd->totals[i].mnt_id == mnt && jd->totals[i].op == op)
			t = &jd->totals[i];
	if (!t) {
		jd->totals = jb_grow(jd->totals, jd->ntotals + 1, sizeof(*jd->totals));
		t = &jd->totals[jd->ntotals++];
		memset(t, 0, sizeof(*t));
		t->step_id = step;
		t->mnt_id = mnt;
		t->op = op;
	}
	ioacct_counters_add(&t->c, &s.c);
}

/*
 * A page-cache view or hint op (kind VIEW) in one bin: calls, bytes, and
 * `hist_n` counted in size-histogram slot `hist` (readahead: 0 sync, 1
 * async; fadvise, madvise: the IOACCT_HINT_ class).
 */
static inline void jb_view(struct jb *b, uint32_t mnt, uint32_t op, uint64_t calls, uint64_t bytes,
			   unsigned int hist, uint64_t hist_n)
{
	struct ioacct_jobdata *jd = b->jd;

	jb_add(b, 0, mnt, op, 0, calls, 0, bytes, 0);
	jd->series[jd->nseries - 1].c.size_hist[hist] += hist_n;
	for (size_t i = 0; i < jd->ntotals; i++)
		if (jd->totals[i].step_id == 0 && jd->totals[i].mnt_id == mnt && jd->totals[i].op == op)
			jd->totals[i].c.size_hist[hist] += hist_n;
}

/*
 * A per-file record (issue 26) of `step`, `rank` on mount `mnt`: file
 * dev:ino at `path` ("" for the mount's "other files", dev and ino 0), its
 * counters zero, times -1; the caller sets the counters it needs (before
 * the next jb_file(), which may move the records).
 */
static inline struct ioacct_file *jb_file(struct jb *b, uint32_t step, int32_t rank, uint32_t mnt,
					  uint32_t dev, uint64_t ino, const char *path)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_file *f;

	jd->files = jb_grow(jd->files, jd->nfiles + 1, sizeof(*jd->files));
	f = &jd->files[jd->nfiles++];
	jd->files_loaded = true;
	memset(f, 0, sizeof(*f));
	f->step_id = step;
	f->rank = rank;
	f->mnt_id = mnt;
	f->dev = dev;
	f->ino = ino;
	ioacct_strlcpy(f->path, path, sizeof(f->path));
	f->first_read_ns = f->last_read_ns = f->first_write_ns = f->last_write_ns = -1;
	return f;
}

#endif /* IOACCT_TEST_JOBBUILD_H */
