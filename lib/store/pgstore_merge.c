/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, merged reads (see pgstore.h,
 * pgstore_db.h): the rows of a job's nodes, fetched for a page of jobs by
 * pgstore_query.c, made into one whole job (the nodes' mounts by path,
 * their steps, totals and series summed, the series on one time axis),
 * handed to the caller's function.
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"

/* One node's row into the whole job: see pgstore.h for the rules. */
static void job_merge(struct ioacct_job *w, const struct ioacct_job *n)
{
	size_t len = strlen(w->node);

	/* The node list: as many as fit, then "+" for the rest. */
	if (len + strlen(n->node) + 2 < sizeof(w->node))
		snprintf(w->node + len, sizeof(w->node) - len, ",%s", n->node);
	else if (len + 2 < sizeof(w->node) && w->node[len - 1] != '+')
		snprintf(w->node + len, sizeof(w->node) - len, "+");
	if (n->start_ns < w->start_ns)
		w->start_ns = n->start_ns;
	if (!w->end_ns || !n->end_ns)
		w->end_ns = 0;
	else if (n->end_ns > w->end_ns)
		w->end_ns = n->end_ns;
	if (n->exit_code > w->exit_code) {
		w->exit_code = n->exit_code;
		ioacct_strlcpy(w->state, n->state, sizeof(w->state));
	}
	w->dropped_events += n->dropped_events;
	w->dropped_bytes += n->dropped_bytes;
	w->lib_opens_missed += n->lib_opens_missed;
}

/* The first row of job id in c (sorted by job), and how many. */
static int child_range(const struct children *c, int64_t id, int *count)
{
	int lo = 0, hi = c->n, end;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (c->job[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < c->n && c->job[end] == id; end++)
		;
	*count = end - lo;
	return lo;
}

/* A node's totals, summed over its steps and mounts. */
static void node_part_add(struct ioacct_node_part *p, uint32_t op, const PGresult *res, int row,
			  int first)
{
	struct ioacct_counters c = { 0 };

	pg_counters_add(&c, res, row, first);
	if (op == IOACCT_OP_READ) {
		p->read_bytes += c.bytes;
		p->reads += c.calls;
	} else if (op == IOACCT_OP_WRITE) {
		p->write_bytes += c.bytes;
		p->writes += c.calls;
	}
	p->ns += c.ns;
}

static int node_part_cmp(const void *pa, const void *pb)
{
	const struct ioacct_node_part *a = pa, *b = pb;

	return strcmp(a->node, b->node);
}

static int sample_cmp(const void *pa, const void *pb)
{
	const struct ioacct_sample *a = pa, *b = pb;

	if (a->step_id != b->step_id)
		return a->step_id < b->step_id ? -1 : 1;
	if (a->mnt_id != b->mnt_id)
		return a->mnt_id < b->mnt_id ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	if (a->bin != b->bin)
		return a->bin < b->bin ? -1 : 1;
	return 0;
}

static void counters_sum(struct ioacct_counters *d, const struct ioacct_counters *c)
{
	d->bytes += c->bytes;
	d->calls += c->calls;
	d->errors += c->errors;
	d->ns += c->ns;
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		d->size_hist[i] += c->size_hist[i];
	for (int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		d->errclass[i] += c->errclass[i];
}

/* The series in (step, mount, op, bin) order, the nodes' rows of one bin summed. */
static void series_merge(struct ioacct_jobdata *jd)
{
	size_t o = 0;

	if (!jd->nseries)
		return;
	qsort(jd->series, jd->nseries, sizeof(*jd->series), sample_cmp);
	for (size_t i = 1; i < jd->nseries; i++) {
		if (sample_cmp(&jd->series[o], &jd->series[i]) == 0)
			counters_sum(&jd->series[o].c, &jd->series[i].c);
		else
			jd->series[++o] = jd->series[i];
	}
	jd->nseries = o + 1;
}

/*
 * The series of a job of several nodes, summed by PostgreSQL: each node's
 * bins shifted by shift[i] onto the whole job's axis (as the C path would,
 * a bin that would pass UINT32_MAX left where it is), its mount ids mapped to
 * the whole job's, then one row per (step, mount, op, bin). A 64-node job of
 * an hour of 1 s bins is 2.8 million rows in the table and 43 thousand here:
 * fetching them all made the load slower than the query timeout and the
 * result over a gigabyte (tests/bench/merged-bench).
 */
static int series_summed(struct ioacct_pgstore *pg, const struct member *m, size_t n,
			 const uint32_t *shift, struct ioacct_jobdata *jd, size_t *cap)
{
	static const char cols[] = IOACCT_STORE_COUNTER_COLS;
	struct buf sql = { 0 }, ids = { 0 }, shifts = { 0 }, mjob = { 0 }, mfrom = { 0 }, mto = { 0 };
	const char *params[5];
	PGresult *res = NULL;
	int ret = 0;

	pg_buf_add(&sql, "SELECT s.step_id, coalesce(mp.mnt_to, s.mnt_id), s.op,"
		   " CASE WHEN s.bin + sh.shift > 4294967295 THEN s.bin ELSE s.bin + sh.shift END");
	for (const char *c = cols; *c;) {
		size_t len = strcspn(c, ", ");

		pg_buf_add(&sql, ", sum(s.%.*s)", (int)len, c);
		c += len;
		c += strspn(c, ", ");
	}
	pg_buf_add(&sql, " FROM " PG_SERIES_ROWS " s"
		   " JOIN unnest($1::bigint[], $2::bigint[]) AS sh(job, shift) ON sh.job = s.job"
		   " LEFT JOIN unnest($3::bigint[], $4::bigint[], $5::bigint[])"
		   " AS mp(job, mnt_from, mnt_to)"
		   " ON mp.job = s.job AND mp.mnt_from = s.mnt_id"
		   " WHERE s.job = ANY($1::bigint[]) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4");
	pg_buf_add(&ids, "{");
	pg_buf_add(&shifts, "{");
	pg_buf_add(&mjob, "{");
	pg_buf_add(&mfrom, "{");
	pg_buf_add(&mto, "{");
	for (size_t i = 0; i < n; i++) {
		pg_buf_add(&ids, "%s%" PRId64, i ? "," : "", m[i].id);
		pg_buf_add(&shifts, "%s%" PRIu32, i ? "," : "", shift[i]);
		for (size_t k = 0; k < m[i].nmnt; k++) {
			bool first = !i && !k;

			pg_buf_add(&mjob, "%s%" PRId64, first ? "" : ",", m[i].id);
			pg_buf_add(&mfrom, "%s%" PRIu64, first ? "" : ",", m[i].mnt_from[k]);
			pg_buf_add(&mto, "%s%" PRIu64, first ? "" : ",", m[i].mnt_to[k]);
		}
	}
	pg_buf_add(&ids, "}");
	pg_buf_add(&shifts, "}");
	pg_buf_add(&mjob, "}");
	pg_buf_add(&mfrom, "}");
	pg_buf_add(&mto, "}");
	if (sql.failed || ids.failed || shifts.failed || mjob.failed || mfrom.failed || mto.failed) {
		ret = -ENOMEM;
		goto out;
	}
	params[0] = ids.p;
	params[1] = shifts.p;
	params[2] = mjob.p;
	params[3] = mfrom.p;
	params[4] = mto.p;
	res = pg_run_params(pg, sql.p, 5, params);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = pg_conn_error(pg, res, "select series");
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		struct ioacct_sample s = {
			.step_id = (uint32_t)val_u64(res, r, 0),
			.mnt_id = val_u64(res, r, 1),
			.op = (uint32_t)val_u64(res, r, 2),
			.bin = (uint32_t)val_u64(res, r, 3),
		};

		if (pg_sample_add(&jd->series, &jd->nseries, cap, true, &s, res, r, 4)) {
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	PQclear(res);
	free(sql.p);
	free(ids.p);
	free(shifts.p);
	free(mjob.p);
	free(mfrom.p);
	free(mto.p);
	return ret;
}

/* Adds a grown array's slot: *a has *n of *cap elements of `size` bytes. -ENOMEM. */
static int grow(void **a, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = reallocarray(*a, ncap, size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = ncap;
	return 0;
}

/*
 * The whole job's mounts, and each member's map of its mount ids to them.
 * One node's mount ids mean nothing on another: a job of several nodes
 * numbers its mounts afresh, one per path.
 */
static int merge_mounts(struct member *m, size_t n, const struct children *mounts,
			struct ioacct_jobdata *jd)
{
	size_t cap = 0;

	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(mounts, m[i].id, &cnt);

		m[i].mnt_from = calloc(cnt ? (size_t)cnt : 1, sizeof(uint64_t));
		m[i].mnt_to = calloc(cnt ? (size_t)cnt : 1, sizeof(uint64_t));
		if (!m[i].mnt_from || !m[i].mnt_to)
			return -ENOMEM;
		for (int r = first; r < first + cnt; r++) {
			const char *path = PQgetvalue(mounts->res, r, 2);
			uint64_t id = val_u64(mounts->res, r, 1);
			struct ioacct_mount *mt;
			size_t k;

			for (k = 0; n > 1 && k < jd->nmounts; k++)
				if (!strcmp(jd->mounts[k].path, path))
					break;
			if (n == 1 || k == jd->nmounts) {
				if (grow((void **)&jd->mounts, jd->nmounts, &cap,
					 sizeof(*jd->mounts)))
					return -ENOMEM;
				k = jd->nmounts++;
				mt = &jd->mounts[k];
				memset(mt, 0, sizeof(*mt));
				mt->mnt_id = n == 1 ? id : (uint64_t)k + 1;
				val_str(mounts->res, r, 2, mt->path, sizeof(mt->path));
				val_str(mounts->res, r, 3, mt->fstype, sizeof(mt->fstype));
				val_str(mounts->res, r, 4, mt->source, sizeof(mt->source));
			}
			m[i].mnt_from[m[i].nmnt] = id;
			m[i].mnt_to[m[i].nmnt++] = jd->mounts[k].mnt_id;
		}
	}
	return 0;
}

/* The whole job's steps: a step on several nodes spans them all, its worst exit wins. */
static int merge_steps(const struct member *m, size_t n, const struct children *steps,
		       struct ioacct_jobdata *jd)
{
	size_t cap = 0;

	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(steps, m[i].id, &cnt);

		for (int r = first; r < first + cnt; r++) {
			struct ioacct_step st = { 0 };
			size_t k;

			st.step_id = (uint32_t)val_u64(steps->res, r, 1);
			st.start_ns = val_i64(steps->res, r, 2);
			st.end_ns = val_i64(steps->res, r, 3);
			val_str(steps->res, r, 4, st.state, sizeof(st.state));
			st.exit_code = (int32_t)val_i64(steps->res, r, 5);
			for (k = 0; k < jd->nsteps && jd->steps[k].step_id != st.step_id; k++)
				;
			if (k < jd->nsteps) {
				struct ioacct_step *w = &jd->steps[k];

				if (st.start_ns < w->start_ns)
					w->start_ns = st.start_ns;
				w->end_ns = !w->end_ns || !st.end_ns ? 0 :
					    st.end_ns > w->end_ns ? st.end_ns : w->end_ns;
				if (st.exit_code > w->exit_code) {
					w->exit_code = st.exit_code;
					ioacct_strlcpy(w->state, st.state, sizeof(w->state));
				}
				continue;
			}
			if (grow((void **)&jd->steps, jd->nsteps, &cap, sizeof(*jd->steps)))
				return -ENOMEM;
			jd->steps[jd->nsteps++] = st;
		}
	}
	return 0;
}

/*
 * The whole job's totals; with several nodes, each one's own too, for the
 * report's per-node rows.
 */
static int merge_totals(const struct member *m, size_t n, const struct children *totals,
			struct ioacct_jobdata *jd)
{
	const PGresult *res = totals->res;
	size_t cap = 0;

	if (n > 1) {
		jd->nodes = calloc(n, sizeof(*jd->nodes));
		if (!jd->nodes)
			return -ENOMEM;
		jd->nnodes = n;
	}
	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(totals, m[i].id, &cnt);

		if (jd->nodes) {
			ioacct_strlcpy(jd->nodes[i].node, m[i].job.node, sizeof(jd->nodes[i].node));
			jd->nodes[i].start_ns = m[i].job.start_ns;
		}
		for (int r = first; r < first + cnt; r++) {
			struct ioacct_sample s = {
				.step_id = (uint32_t)val_u64(res, r, 1),
				.mnt_id = pg_mnt_of(&m[i], val_u64(res, r, 2)),
				.op = (uint32_t)val_u64(res, r, 3),
			};

			if (pg_sample_add(&jd->totals, &jd->ntotals, &cap, false, &s, res, r, 4))
				return -ENOMEM;
			if (jd->nodes)
				node_part_add(&jd->nodes[i], s.op, res, r, 4);
		}
	}
	if (jd->nodes)
		qsort(jd->nodes, jd->nnodes, sizeof(*jd->nodes), node_part_cmp);
	return 0;
}

/*
 * The whole job's series, on the time axis of its earliest node: for several
 * nodes their merged series, or summed by PostgreSQL (series_summed); a single node's rows as
 * they are. 0, -ENOMEM or the query's error.
 */
static int merge_series(struct ioacct_pgstore *pg, const struct member *m, size_t n,
			const struct children *series, struct ioacct_jobdata *jd)
{
	uint32_t *shift = calloc(n, sizeof(*shift));
	size_t cap = 0;
	int ret = 0;

	if (!shift)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t skew = 0;

		/*
		 * Each node counts bins from its own start: put them on the
		 * earliest node's (jd->job.start_ns, the smallest). Nodes of
		 * another width cannot be aligned exactly: they stay as they are.
		 */
		if (m[i].job.bin_width_ns == jd->job.bin_width_ns)
			shift[i] = ioacct_bin_shift(m[i].job.start_ns, jd->job.start_ns,
						    jd->job.bin_width_ns, &skew);
		if (skew > jd->job.skew_ns)
			jd->job.skew_ns = skew;
	}
	if (n > 1) {
		/* Made once when the job was whole (pgstore_merged.c), else summed now. */
		ret = pg_merged_get(pg, m, n, jd, &cap);
		if (ret == 0) {
			pg->merged_missing = true;
			ret = series_summed(pg, m, n, shift, jd, &cap);
		} else if (ret > 0) {
			ret = 0;
		}
	} else {
		const PGresult *res = series->res;
		int cnt, first = child_range(series, m[0].id, &cnt);

		for (int r = first; !ret && r < first + cnt; r++) {
			struct ioacct_sample s = {
				.step_id = (uint32_t)val_u64(res, r, 1),
				.mnt_id = pg_mnt_of(&m[0], val_u64(res, r, 2)),
				.op = (uint32_t)val_u64(res, r, 3),
				.bin = (uint32_t)val_u64(res, r, 4),
			};

			if (pg_sample_add(&jd->series, &jd->nseries, &cap, true, &s, res, r, 5))
				ret = -ENOMEM;
		}
	}
	free(shift);
	return ret;
}

/*
 * A listing's RPC totals of the job (rows of PG_RPC_TOTALS_SQL): each
 * member's mount ids the whole job's, the rows of one key summed; read only
 * when every part has them kept.
 */
static int merge_rpc_totals(const struct member *m, size_t n, const struct children *rpc,
			    struct ioacct_jobdata *jd)
{
	const PGresult *res = rpc->res;
	int last = PQnfields(res) - 1;
	size_t rows = 0;

	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(rpc, m[i].id, &cnt);

		for (int r = first; r < first + cnt; r++)
			if (strcmp(PQgetvalue(res, r, last), "t"))
				return 0; /* a part written before schema 20: not read */
		rows += (size_t)cnt;
	}
	jd->rpc = calloc(rows ? rows : 1, sizeof(*jd->rpc));
	if (!jd->rpc)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(rpc, m[i].id, &cnt);

		for (int r = first; r < first + cnt; r++) {
			if (PQgetisnull(res, r, 1))
				continue; /* a part without any */
			pg_rpc_from_row(res, r, &jd->rpc[jd->nrpc]);
			jd->rpc[jd->nrpc].mnt_id = pg_mnt_of(&m[i], jd->rpc[jd->nrpc].mnt_id);
			jd->nrpc++;
		}
	}
	pg_rpc_merge(jd);
	jd->rpc_loaded = true;
	return 0;
}

int pg_group_emit(struct ioacct_pgstore *pg, struct member *m, size_t n,
		  const struct children *steps, const struct children *mounts,
		  const struct children *totals, const struct children *series,
		  const struct children *rpc, bool peaks, bool keep_series,
		  ioacct_pgstore_job_fn fn, void *arg)
{
	struct ioacct_jobdata jd = { 0 };
	struct ioacct_qpeak *pk = NULL;
	size_t npk = 0;
	int ret;

	jd.job = m[0].job;
	jd.job.key = m[0].key;
	for (size_t i = 1; i < n; i++)
		job_merge(&jd.job, &m[i].job);
	ret = merge_mounts(m, n, mounts, &jd);
	if (!ret)
		ret = merge_steps(m, n, steps, &jd);
	if (!ret)
		ret = merge_totals(m, n, totals, &jd);
	if (!ret && rpc)
		ret = merge_rpc_totals(m, n, rpc, &jd);
	if (!ret && (peaks || keep_series)) {
		ret = merge_series(pg, m, n, series, &jd);
		/* Aligned, bins of the same number on different nodes add up (query.h). */
		if (!ret && peaks && ioacct_query_peaks(jd.series, jd.nseries, &pk, &npk))
			ret = -ENOMEM;
	}
	if (ret)
		goto out;
	if (keep_series) {
		series_merge(&jd);
		/* A job loaded whole has its records too (schema 9). */
		ret = pg_records_get(pg, m, n, &jd);
		if (!ret)
			ret = pg_rpc_get(pg, m, n, &jd);
		if (ret)
			goto out;
	} else {
		free(jd.series);
		jd.series = NULL;
		jd.nseries = 0;
	}
	ret = fn(&jd, pk, npk, arg);
out:
	if (ret == -ENOMEM)
		pg_error(pg, ret, "cluster store: out of memory");
	free(pk);
	free(jd.steps);
	free(jd.mounts);
	free(jd.totals);
	free(jd.series);
	free(jd.files);
	free(jd.mpiio);
	free(jd.h5);
	free(jd.rpc);
	free(jd.nodes);
	return ret;
}

#endif /* HAVE_LIBPQ */
