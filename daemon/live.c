// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LIVE: every running job's totals so far in one reply, for ioacct top.
 *
 * A job's totals are what the store has (drained bins) plus what the kernel
 * still holds; the daemon is single-threaded, so no drain can move counters
 * between the two while they are read. The kernel map is read once for all
 * jobs, and the reply says when (the daemon's CLOCK_MONOTONIC), so that the
 * client's rates are differences of exact counters over the daemon's clock.
 * Who sees what is QUERY's rule: with private_data a user other than root
 * sees only their own jobs, without it every job. Like a QUERY page, one
 * reply stops adding jobs after IOACCT_QUERY_PAGE_MS (at least one job) or
 * half the message limit, and says `more`; jobs_running still counts all.
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procfs.h"
#include "query_fetch.h"
#include "util.h"

struct live {
	struct ioacct_reply *rep;
	size_t jcap, scap, mcap, tcap;
	size_t bytes; /* an upper bound of the encoded reply so far */
};

static bool want_live(uint32_t slot, uint32_t bin, void *arg)
{
	const struct ioacct_registry *r = arg;

	(void)bin;
	return slot < r->nslots && r->slots[slot];
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ioacct_probe_entry *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The first of the entries (sorted by slot) of this slot, or where it would be. */
static size_t slot_first(const struct ioacct_probe_entry *e, size_t n, uint32_t slot)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Makes room for one more element in *array of *n, capacity *cap. */
static int grow(void **array, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*array, ncap * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = ncap;
	return 0;
}

/* Adds c to the job's total of (mount, op), summed over its steps. */
static int total_add(struct live *l, size_t first, int64_t key, uint32_t mnt_id, uint32_t op,
		     const struct ioacct_counters *c)
{
	struct ioacct_reply *rep = l->rep;
	struct ioacct_qtotal_row *t;

	for (size_t i = first; i < rep->nqtotals; i++) {
		t = &rep->qtotals[i];
		if (t->s.mnt_id == mnt_id && t->s.op == op) {
			t->s.c.bytes += c->bytes;
			t->s.c.calls += c->calls;
			t->s.c.errors += c->errors;
			t->s.c.ns += c->ns;
			return 0;
		}
	}
	if (grow((void **)&rep->qtotals, rep->nqtotals, &l->tcap, sizeof(*rep->qtotals)))
		return -ENOMEM;
	t = &rep->qtotals[rep->nqtotals++];
	memset(t, 0, sizeof(*t));
	t->job_key = key;
	t->s.step_id = UINT32_MAX;
	t->s.mnt_id = mnt_id;
	t->s.op = op;
	t->s.c.bytes = c->bytes;
	t->s.c.calls = c->calls;
	t->s.c.errors = c->errors;
	t->s.c.ns = c->ns;
	return 0;
}

/* Names the mount once per job: from the store, else the job's mount table, else mnt:N. */
static int mount_add(struct live *l, size_t first, struct djob *j,
		     const struct ioacct_jobdata *jd, uint32_t mnt_id)
{
	struct ioacct_reply *rep = l->rep;
	const struct ioacct_mount *m;
	struct ioacct_qmount_row *row;

	for (size_t i = first; i < rep->nqmounts; i++)
		if (rep->qmounts[i].mount.mnt_id == mnt_id)
			return 0;
	if (grow((void **)&rep->qmounts, rep->nqmounts, &l->mcap, sizeof(*rep->qmounts)))
		return -ENOMEM;
	row = &rep->qmounts[rep->nqmounts++];
	memset(row, 0, sizeof(*row));
	row->job_key = j->job.key;
	m = ioacct_mount_find(jd->mounts, jd->nmounts, mnt_id);
	if (!m)
		m = ioacct_registry_job_mount(j, mnt_id);
	if (m) {
		row->mount = *m;
	} else {
		row->mount.mnt_id = mnt_id;
		snprintf(row->mount.path, sizeof(row->mount.path), "mnt:%u", mnt_id);
	}
	return 0;
}

/* One job into the reply; 1 when it would not fit (the reply says `more`). */
static int job_add(struct ioacct_registry *r, struct live *l, struct djob *j,
		   const struct ioacct_probe_entry *e, size_t n)
{
	struct ioacct_reply *rep = l->rep;
	size_t t0 = rep->nqtotals, m0 = rep->nqmounts, s0 = rep->nqsteps;
	struct ioacct_jobdata *jd = NULL;
	size_t size;
	int ret;

	ret = ioacct_store_job_load_totals(r->store, j->job.key, &jd);
	if (ret) {
		log_warn("live: job %s/%llu: %s; left out of the reply", j->job.cluster,
			 (unsigned long long)j->job.job_id, ioacct_store_errmsg(r->store));
		return 0;
	}
	for (size_t i = 0; i < jd->ntotals && !ret; i++) {
		ret = total_add(l, t0, j->job.key, jd->totals[i].mnt_id, jd->totals[i].op,
				&jd->totals[i].c);
		if (!ret)
			ret = mount_add(l, m0, j, jd, jd->totals[i].mnt_id);
	}
	for (size_t k = 0; k < j->nsteps && !ret; k++) {
		for (size_t i = slot_first(e, n, j->steps[k]->slot);
		     i < n && e[i].slot == j->steps[k]->slot && !ret; i++) {
			ret = total_add(l, t0, j->job.key, e[i].mnt_id, e[i].op, &e[i].c);
			if (!ret)
				ret = mount_add(l, m0, j, jd, e[i].mnt_id);
		}
	}
	for (size_t i = 0; i < j->nsteps && !ret; i++) {
		struct ioacct_qstep_row *s;

		ret = grow((void **)&rep->qsteps, rep->nqsteps, &l->scap, sizeof(*rep->qsteps));
		if (ret)
			break;
		s = &rep->qsteps[rep->nqsteps++];
		memset(s, 0, sizeof(*s));
		s->job_key = j->job.key;
		s->step.step_id = j->steps[i]->step_id;
		ioacct_strlcpy(s->step.state, "RUNNING", sizeof(s->step.state));
		for (size_t k = 0; k < jd->nsteps; k++)
			if (jd->steps[k].step_id == s->step.step_id)
				s->step.start_ns = jd->steps[k].start_ns;
	}
	if (!ret)
		ret = grow((void **)&rep->jobs, rep->njobs, &l->jcap, sizeof(*rep->jobs));
	if (ret)
		goto out;
	size = ioacct_proto_query_job_size(&j->job, rep->nqsteps - s0, NULL, 0,
					   rep->nqtotals - t0, 0);
	for (size_t i = m0; i < rep->nqmounts; i++) {
		const struct ioacct_mount *m = &rep->qmounts[i].mount;

		/* Four attributes of at most 8 bytes, three headers of strings, and the strings. */
		size += 64 + strlen(m->path) + strlen(m->fstype) + strlen(m->source);
	}
	/* A page of QUERY's size limits: the job list, and the message with room to spare. */
	if (rep->njobs >= 4096 || l->bytes + size > IOACCT_PROTO_MAX_MSG / 2) {
		rep->nqtotals = t0;
		rep->nqmounts = m0;
		rep->nqsteps = s0;
		rep->more = 1;
		ret = 1;
		goto out;
	}
	l->bytes += size;
	rep->jobs[rep->njobs++] = j->job;
out:
	ioacct_jobdata_free(jd);
	return ret;
}

void ioacct_registry_live(struct ioacct_registry *r, const struct ioacct_req_query *req,
			  uid_t peer, struct ioacct_reply *rep)
{
	bool own_only = peer != 0 && r->cfg->private_data;
	struct ioacct_probe_entry *e = NULL;
	struct live l = { .rep = rep };
	uint64_t deadline;
	size_t n = 0;
	int ret;

	rep->start_mono_ns = ioacct_mono_ns();
	/* QUERY's budget: a user refreshing often cannot hold up drains and root's requests. */
	deadline = rep->start_mono_ns + IOACCT_QUERY_PAGE_MS * (uint64_t)NSEC_PER_MSEC;
	ret = ioacct_probes_read(r->probes, want_live, r, &e, &n);
	if (ret) {
		rep->status = ret;
		snprintf(rep->error, sizeof(rep->error), "cannot read the kernel's counters: %s",
			 strerror(-ret));
		return;
	}
	/* By slot: each job finds its steps' entries without a pass over all of them. */
	if (n)
		qsort(e, n, sizeof(*e), entry_cmp);
	for (struct djob *j = r->jobs; j; j = j->next) {
		if (own_only && j->job.uid != (uint32_t)peer)
			continue;
		if (req->cluster[0] && strcmp(req->cluster, j->job.cluster) != 0)
			continue;
		rep->jobs_running++;
		if (rep->more)
			continue;
		if (rep->njobs && ioacct_mono_ns() > deadline) {
			rep->more = 1;
			continue;
		}
		ret = job_add(r, &l, j, e, n);
		if (ret < 0) {
			free(e);
			rep->status = ret;
			snprintf(rep->error, sizeof(rep->error), "out of memory for the live totals");
			return;
		}
	}
	free(e);
}
