// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report's RPC part (issue 40): per mount, each procedure's RPCs summed
 * over steps and bins, the job's own apart from those no job sent during it
 * (IOACCT_RPC_UNATTRIBUTED: a flusher's writeback nobody is known for, the
 * state manager's DELEGRETURN), most calls first.
 */
#include "report_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ioacct_report_rpc_used(const struct ioacct_jobdata *jd, uint64_t mnt_id)
{
	for (size_t i = 0; i < jd->nrpc; i++)
		if (jd->rpc[i].mnt_id == mnt_id && !(jd->rpc[i].flags & IOACCT_RPC_UNATTRIBUTED))
			return true;
	return false;
}

static bool same_proc(const struct ioacct_rpc *a, const struct ioacct_rpc *b)
{
	return a->prog == b->prog && a->vers == b->vers && a->proc == b->proc;
}

/* Most calls first, then the stores' order (program, version, procedure). */
static int by_calls(const void *pa, const void *pb)
{
	const struct ioacct_report_rpc *a = pa, *b = pb;

	if (a->sum.calls != b->sum.calls)
		return a->sum.calls > b->sum.calls ? -1 : 1;
	return ioacct_rpc_key_cmp(&a->sum, &b->sum);
}

/* The mount's rows of one kind (flags), one entry per procedure; 0 or -ENOMEM. */
static int procs(const struct ioacct_jobdata *jd, uint64_t mnt_id, uint32_t flags,
		 struct ioacct_report_rpc **out, size_t *n)
{
	struct ioacct_report_rpc *p = NULL, *x;
	size_t k;

	*n = 0;
	for (size_t i = 0; i < jd->nrpc; i++) {
		const struct ioacct_rpc *row = &jd->rpc[i];

		if (row->mnt_id != mnt_id || row->flags != flags)
			continue;
		for (k = 0; k < *n && !same_proc(&p[k].sum, row); k++)
			;
		if (k == *n) {
			x = realloc(p, (*n + 1) * sizeof(*p));
			if (!x) {
				free(p);
				return -ENOMEM;
			}
			p = x;
			p[(*n)++] = (struct ioacct_report_rpc){
				.sum = { .mnt_id = mnt_id, .prog = row->prog, .vers = row->vers,
					 .proc = row->proc, .flags = flags },
			};
			memcpy(p[k].sum.name, row->name, sizeof(p[k].sum.name));
		}
		ioacct_rpc_add(&p[k].sum, row);
	}
	for (size_t i = 0; i < *n; i++) {
		bool shared = false;

		for (k = 0; k < *n; k++)
			shared |= k != i && !strcmp(p[k].sum.name, p[i].sum.name);
		if (shared)
			snprintf(p[i].key, sizeof(p[i].key), "%s@%" PRIu32 "v%" PRIu32, p[i].sum.name,
				 p[i].sum.prog, p[i].sum.vers);
		else
			snprintf(p[i].key, sizeof(p[i].key), "%s", p[i].sum.name);
	}
	if (*n)
		qsort(p, *n, sizeof(*p), by_calls);
	*out = p;
	return 0;
}

int ioacct_report_rpc_collect(struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	int ret = 0;

	for (size_t i = 0; i < r->nmounts && !ret; i++) {
		struct ioacct_report_mount *m = &r->mounts[i];

		ret = procs(jd, m->mnt_id, 0, &m->rpc, &m->nrpc);
		if (!ret)
			ret = procs(jd, m->mnt_id, IOACCT_RPC_UNATTRIBUTED, &m->rpc_unattr,
				    &m->nrpc_unattr);
		for (size_t k = 0; k < m->nrpc_unattr; k++)
			m->rpc_unattr_calls += m->rpc_unattr[k].sum.calls;
		r->has_rpc |= m->nrpc || m->nrpc_unattr;
	}
	return ret;
}

void ioacct_report_rpc_free(struct ioacct_report *r)
{
	for (size_t i = 0; i < r->nmounts; i++) {
		free(r->mounts[i].rpc);
		free(r->mounts[i].rpc_unattr);
		r->mounts[i].rpc = r->mounts[i].rpc_unattr = NULL;
		r->mounts[i].nrpc = r->mounts[i].nrpc_unattr = 0;
	}
}
