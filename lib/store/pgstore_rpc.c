/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, RPC rows (schema 20, issue 40; see
 * pgstore.h, pgstore_db.h): written with their parts, one COPY for a batch;
 * read with a whole job, its nodes' rows on one time axis as its series:
 * each node's mount ids the whole job's (mounts matched by path), its bins
 * shifted onto the earliest node's start (ioacct_bin_shift), the rows of one
 * key summed, in the stores' order (ioacct_rpc_key_cmp). The rows of RPCs no
 * job sent are in bin 0 on every node: summed there, not shifted.
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"

/* ---- writing ---- */

static void buf_rpc(struct buf *b, const char *id, const struct ioacct_rpc *r)
{
#define RPC_VALUE(name) r->name,
	const uint64_t u[] = { IOACCT_RPC_COUNTERS(RPC_VALUE) };
#undef RPC_VALUE
	char name[IOACCT_RPC_NAME_MAX + 1];

	memcpy(name, r->name, sizeof(r->name));
	name[sizeof(r->name)] = '\0';
	pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32
		   "\t%" PRIu32 "\t", id, r->step_id, r->mnt_id, r->prog, r->vers, r->proc,
		   r->flags, r->bin);
	pg_buf_path(b, name, sizeof(name));
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		pg_buf_add(b, "%" PRIu64 "%c", u[i], i + 1 < ARRAY_SIZE(u) ? '\t' : '\n');
}

int pg_rpc_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
	       char (*ids)[24], size_t n, struct buf *b)
{
	struct buf none = { 0 };
	size_t total = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		total += jds[i]->nrpc;
	if (total) {
		err = pg_copy_begin(pg, "COPY rpc (job, " PG_RPC_COLS ") FROM STDIN");
		for (size_t i = 0; i < n && !err; i++)
			for (size_t k = 0; k < jds[i]->nrpc && !err; k++) {
				buf_rpc(b, ids[i], &jds[i]->rpc[k]);
				err = pg_copy_flush(pg, b, false);
			}
		err = pg_copy_end(pg, b, err, "store the RPC rows");
	}
	/* A part whose RPC rows were not read (never from ioacctd's own store): not kept. */
	for (size_t i = 0; !err && i < n; i++)
		if (!jds[i]->rpc_loaded)
			pg_buf_add(&none, "%s%s", none.len ? "," : "{", ids[i]);
	if (!err && none.len)
		err = pg_mark_not_kept(pg, &none, PG_STMT_rpc_not_kept,
				       "UPDATE jobs SET rpc_kept = false WHERE id = ANY($1::bigint[])");
	free(none.p);
	return err;
}

/* ---- reading ---- */

#define RPC_PTR(name) &x->name,

void pg_rpc_from_row(const PGresult *res, int r, struct ioacct_rpc *x)
{
	uint64_t *u[] = { IOACCT_RPC_COUNTERS(RPC_PTR) };
	char name[IOACCT_RPC_NAME_MAX + 1];
	int col = 1;

	memset(x, 0, sizeof(*x));
	x->step_id = (uint32_t)val_u64(res, r, col++);
	x->mnt_id = val_u64(res, r, col++);
	x->prog = (uint32_t)val_u64(res, r, col++);
	x->vers = (uint32_t)val_u64(res, r, col++);
	x->proc = (uint32_t)val_u64(res, r, col++);
	x->flags = (uint32_t)val_u64(res, r, col++);
	x->bin = (uint32_t)val_u64(res, r, col++);
	pg_val_path(res, r, col, name, sizeof(name));
	memcpy(x->name, name, sizeof(x->name));
	col += 2;
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		*u[i] = val_u64(res, r, col++);
}

static int rpc_cmp(const void *a, const void *b)
{
	return ioacct_rpc_key_cmp(a, b);
}

/* Where member p's bins go on the whole job's axis: as merge_series puts its series. */
static uint32_t shift_of(const struct member *p, const struct ioacct_jobdata *jd)
{
	uint64_t skew = 0;

	if (p->job.bin_width_ns != jd->job.bin_width_ns)
		return 0;
	return ioacct_bin_shift(p->job.start_ns, jd->job.start_ns, jd->job.bin_width_ns, &skew);
}

void pg_rpc_merge(struct ioacct_jobdata *jd)
{
	size_t o = 0;

	if (!jd->nrpc)
		return;
	qsort(jd->rpc, jd->nrpc, sizeof(*jd->rpc), rpc_cmp);
	for (size_t i = 1; i < jd->nrpc; i++) {
		if (ioacct_rpc_key_cmp(&jd->rpc[o], &jd->rpc[i]) == 0)
			ioacct_rpc_add(&jd->rpc[o], &jd->rpc[i]);
		else
			jd->rpc[++o] = jd->rpc[i];
	}
	jd->nrpc = o + 1;
}

int pg_rpc_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
	       struct ioacct_jobdata *jd)
{
	struct buf ids = { 0 };
	PGresult *res;
	int err = 0;

	if (pg_member_ids(m, n, &ids)) {
		free(ids.p);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	/* None for a part written before schema 20: not read. */
	res = pg_kept_rows(pg, "rpc_kept", "SELECT job, " PG_RPC_COLS " FROM rpc"
			   " WHERE job = ANY($1::bigint[])", ids.p, "select RPC rows", &err);
	free(ids.p);
	if (!res)
		return err;
	jd->rpc = calloc(PQntuples(res) ? (size_t)PQntuples(res) : 1, sizeof(*jd->rpc));
	if (!jd->rpc) {
		PQclear(res);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	for (int r = 0; r < PQntuples(res); r++) {
		const struct member *p = pg_member_of(m, n, val_i64(res, r, 0));
		struct ioacct_rpc *x = &jd->rpc[jd->nrpc];
		uint32_t shift;

		if (!p)
			continue;
		pg_rpc_from_row(res, r, x);
		x->mnt_id = pg_mnt_of(p, x->mnt_id);
		shift = x->flags & IOACCT_RPC_UNATTRIBUTED ? 0 : shift_of(p, jd);
		/* As the series: a bin that would pass UINT32_MAX stays where it is. */
		if ((uint64_t)x->bin + shift <= UINT32_MAX)
			x->bin += shift;
		jd->nrpc++;
	}
	PQclear(res);
	pg_rpc_merge(jd);
	jd->rpc_loaded = true;
	return 0;
}

#endif /* HAVE_LIBPQ */
