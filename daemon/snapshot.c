// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A job's counts so far (jobs.h: ioacct_registry_snapshot()), for the
 * SNAPSHOT request and /metrics alike: the store's totals plus the kernel's
 * entries of its running steps, read in the main loop between two drains,
 * so nothing is counted twice or lost between the drained and the undrained
 * part; and, for /metrics, its RPCs the same way (issue 40).
 */
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcprobes.h"

static int rows_add(struct ioacct_reply *rep, size_t *cap, uint32_t step_id, uint32_t op,
		    const struct ioacct_mount *m, const struct ioacct_counters *c)
{
	for (size_t i = 0; i < rep->nrows; i++) {
		struct ioacct_snap_row *row = &rep->rows[i];

		if (row->step_id == step_id && row->op == op && row->mount.mnt_id == m->mnt_id) {
			ioacct_counters_add(&row->c, c);
			return 0;
		}
	}
	if (rep->nrows == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct ioacct_snap_row *nr = realloc(rep->rows, ncap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		rep->rows = nr;
		*cap = ncap;
	}
	memset(&rep->rows[rep->nrows], 0, sizeof(rep->rows[0]));
	rep->rows[rep->nrows].step_id = step_id;
	rep->rows[rep->nrows].op = op;
	rep->rows[rep->nrows].mount = *m;
	rep->rows[rep->nrows].c = *c;
	rep->nrows++;
	return 0;
}

static const struct ioacct_mount *jd_mount(const struct ioacct_jobdata *jd, uint64_t mnt_id,
					   struct ioacct_mount *tmp)
{
	for (size_t i = 0; i < jd->nmounts; i++)
		if (jd->mounts[i].mnt_id == mnt_id)
			return &jd->mounts[i];
	memset(tmp, 0, sizeof(*tmp));
	tmp->mnt_id = mnt_id;
	snprintf(tmp->path, sizeof(tmp->path), "mnt:%" PRIu64, mnt_id);
	return tmp;
}

/* ---- the RPCs so far (issue 40) ---- */

/* Adds row (its bin set aside) on mount m to s, into the row of the same key if there is one. */
static int rpc_rows_add(struct ioacct_rpc_snap *s, size_t *cap, const struct ioacct_rpc *row,
			const struct ioacct_mount *m)
{
	struct ioacct_rpc k = *row;

	k.bin = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!ioacct_rpc_key_cmp(&s->rows[i].r, &k)) {
			ioacct_rpc_add(&s->rows[i].r, &k);
			return 0;
		}
	if (s->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct ioacct_rpc_snap_row *nr = realloc(s->rows, ncap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		s->rows = nr;
		*cap = ncap;
	}
	s->rows[s->n].r = k;
	s->rows[s->n].mount = *m;
	s->n++;
	return 0;
}

/* Rows the kernel holds for slots, named as the system calls' rows of a running job. */
static int rpc_kernel_add(struct ioacct_registry *r, const struct djob *j,
			  const struct ioacct_jobdata *jd, const struct ioacct_rpc_batch *b,
			  struct ioacct_rpc_snap *s, size_t *cap)
{
	for (size_t i = 0; i < b->n; i++) {
		struct dstep *st = b->slots[i] < r->nslots ? r->slots[b->slots[i]] : NULL;
		struct ioacct_rpc row = b->rows[i];
		const struct ioacct_mount *m;
		struct ioacct_mount tmp;

		if (!st || st->job != j)
			continue;
		row.step_id = st->step_id;
		m = ioacct_registry_job_mount(j, row.mnt_id);
		if (!m)
			m = jd_mount(jd, row.mnt_id, &tmp);
		if (rpc_rows_add(s, cap, &row, m))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The job's RPC rows: the store's (summed over their bins; the unattributed
 * rows of its finished steps), then, when j runs, the kernel's of its steps
 * (open bins included, and what its steps' mounts got from no job since
 * each step began, which their finish stores: never both).
 */
static int rpc_snapshot(struct ioacct_registry *r, const struct djob *j,
			const struct ioacct_jobdata *jd, struct ioacct_rpc_snap *s)
{
	struct ioacct_mount tmp;
	size_t cap = 0;
	int ret = 0;

	s->rows = NULL;
	s->n = 0;
	for (size_t i = 0; i < jd->nrpc && !ret; i++)
		ret = rpc_rows_add(s, &cap, &jd->rpc[i], jd_mount(jd, jd->rpc[i].mnt_id, &tmp));
	if (!ret && j && s->kernel)
		ret = rpc_kernel_add(r, j, jd, s->kernel, s, &cap);
	if (ret)
		ioacct_rpc_snap_free(s);
	return ret;
}

void ioacct_rpc_snap_free(struct ioacct_rpc_snap *s)
{
	if (!s)
		return;
	free(s->rows);
	s->rows = NULL;
	s->n = 0;
}

int ioacct_registry_snapshot(struct ioacct_registry *r, int64_t job_key, const struct djob *j,
			     const struct ioacct_probe_entry *e, size_t n, struct ioacct_job *job,
			     struct ioacct_reply *rep, struct ioacct_rpc_snap *rpc)
{
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_mount tmp;
	size_t cap = rep->nrows;
	int ret;

	/* Totals alone: a running job's are summed in SQL, its series are not needed. */
	ret = ioacct_store_job_load_totals(r->store, job_key, &jd);
	if (ret)
		return ret;
	for (size_t i = 0; i < jd->ntotals; i++) {
		const struct ioacct_sample *t = &jd->totals[i];

		if (rows_add(rep, &cap, t->step_id, t->op, jd_mount(jd, t->mnt_id, &tmp), &t->c))
			goto nomem;
	}
	for (size_t i = 0; j && i < n; i++) {
		struct dstep *s = e[i].slot < r->nslots ? r->slots[e[i].slot] : NULL;
		const struct ioacct_mount *m;

		if (!s || s->job != j)
			continue;
		m = ioacct_registry_job_mount(j, e[i].mnt_id);
		if (!m)
			m = jd_mount(jd, e[i].mnt_id, &tmp);
		if (rows_add(rep, &cap, s->step_id, e[i].op, m, &e[i].c))
			goto nomem;
	}
	for (size_t i = 0; j && i < j->nsteps; i++) {
		uint64_t ev, by;

		if (ioacct_probes_dropped(r->probes, j->steps[i]->slot, &ev, &by, false) == 0) {
			rep->dropped_events += ev;
			rep->dropped_bytes += by;
		}
	}
	rep->dropped_events += jd->job.dropped_events;
	rep->dropped_bytes += jd->job.dropped_bytes;
	if (rpc && rpc_snapshot(r, j, jd, rpc))
		goto nomem;
	if (job)
		*job = jd->job;
	ioacct_jobdata_free(jd);
	return 0;
nomem:
	ioacct_jobdata_free(jd);
	return -ENOMEM;
}

