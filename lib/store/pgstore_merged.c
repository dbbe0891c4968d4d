/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, the merged series of a job of several
 * nodes (see pgstore_db.h; schema 7, issue 28): the nodes' bins aligned on
 * the job's axis and summed, made once when the run's last expected part is
 * exported (pg_merged_complete, pg_merged_offered; else at the job's first
 * whole read), and read instead of summing every node's bins again. A
 * 64-node job of an hour of 1 s bins is 2.8 million bins to sum; its merged
 * series are 43 thousand to read.
 *
 * They stand for the exact set of parts they were made of, named by node
 * and start (jobs is unique on them): a part that arrives later, or a node
 * written again, makes them unusable (and put_job_row forgets them), and
 * the reader sums the nodes as before.
 */
#include "pgstore.h"

#ifdef HAVE_LIBPQ

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore_db.h"

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A text[] literal of "node@start_ns" of each part, sorted: the parts' names. */
static int members_literal(struct buf *out, const char *const *node, const int64_t *start,
			   size_t n)
{
	char **e = calloc(n ? n : 1, sizeof(*e));
	int err = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++)
		if (asprintf(&e[i], "%s@%" PRId64, node[i], start[i]) < 0) {
			e[i] = NULL;
			err = -ENOMEM;
		}
	if (!err) {
		qsort(e, n, sizeof(*e), str_cmp);
		pg_buf_add(out, "{");
		for (size_t i = 0; i < n; i++) {
			pg_buf_add(out, "%s\"", i ? "," : "");
			for (const char *c = e[i]; *c; c++)
				pg_buf_add(out, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
			pg_buf_add(out, "\"");
		}
		pg_buf_add(out, "}");
		if (out->failed)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		free(e[i]);
	free(e);
	return err;
}

/* Room for a run's key as text parameters: job id, restart, run_start. */
struct run_text {
	char job_id[24], restart[16], run_start[24];
};

/*
 * The run's key (cluster, job id, restart, run_start: the cluster store's)
 * as text parameters: cluster (*owned to free), then t's.
 */
static int run_params(const struct ioacct_job *j, const char **params, char **owned,
		      struct run_text *t)
{
	params[0] = pg_text_param(j->cluster, owned);
	if (!params[0])
		return -ENOMEM;
	snprintf(t->job_id, sizeof(t->job_id), "%" PRIu64, j->job_id);
	snprintf(t->restart, sizeof(t->restart), "%" PRIu32, j->restart);
	snprintf(t->run_start, sizeof(t->run_start), "%" PRId64, j->run_start);
	params[1] = t->job_id;
	params[2] = t->restart;
	params[3] = t->run_start;
	return 0;
}

static int exec_params(struct ioacct_pgstore *pg, enum pg_stmt stmt, const char *sql, int n,
		       const char *const *params, const char *what)
{
	PGresult *res = pg_exec_prepared(pg, stmt, sql, n, params);
	int err = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		err = pg_conn_error(pg, res, what);
	PQclear(res);
	return err;
}

int pg_merged_forget(struct ioacct_pgstore *pg, const char *const params[4])
{
	return exec_params(pg, PG_STMT_merged_forget, "DELETE FROM merged_jobs WHERE cluster = $1"
			   " AND job_id = $2 AND restart = $3 AND run_start = $4", 4, params,
			   "forget the merged series");
}

/* Writes them; the caller's savepoint takes them back on failure. */
static int merged_write(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd,
			const char **params, struct buf *key, struct buf *b)
{
	int err = pg_merged_forget(pg, params);

	if (!err)
		err = exec_params(pg, PG_STMT_merged_insert,
				  "INSERT INTO merged_jobs (cluster, job_id, restart, run_start, members)"
				  " VALUES ($1, $2, $3, $4, $5::text[])", 5, params,
				  "store the merged series");
	if (err)
		return err;
	pg_buf_copy_text(key, jd->job.cluster, sizeof(jd->job.cluster), '\t');
	pg_buf_add(key, "%s\t%s\t%s", params[1], params[2], params[3]);
	if (key->failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	return pg_put_series(pg, "COPY merged_series (cluster, job_id, restart, run_start, step_id,"
			     " mnt_id, op,"
			     " bins, " IOACCT_STORE_COUNTER_COLS ") FROM STDIN", key->p, jd->series,
			     jd->nseries, b);
}

int pg_merged_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	const char **node = calloc(jd->nnodes ? jd->nnodes : 1, sizeof(*node));
	int64_t *start = calloc(jd->nnodes ? jd->nnodes : 1, sizeof(*start));
	struct buf members = { 0 }, key = { 0 }, b = { 0 };
	struct run_text t;
	char *owned = NULL;
	const char *params[5];
	int err = 0;

	if (jd->nnodes < 2)
		goto out;
	if (!node || !start) {
		err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	for (size_t i = 0; i < jd->nnodes; i++) {
		node[i] = jd->nodes[i].node;
		start[i] = jd->nodes[i].start_ns;
	}
	err = members_literal(&members, node, start, jd->nnodes);
	if (!err)
		err = run_params(&jd->job, params, &owned, &t);
	if (err) {
		err = pg_error(pg, err, "cluster store: out of memory");
		goto out;
	}
	params[4] = members.p;
	err = pg_exec(pg, "SAVEPOINT merged", "store the merged series");
	if (err)
		goto out;
	err = merged_write(pg, jd, params, &key, &b);
	if (err) {
		char msg[sizeof(pg->errmsg)];

		/* The message is the failure's, not the rollback's. */
		snprintf(msg, sizeof(msg), "%s", pg->errmsg);
		if (!pg_exec(pg, "ROLLBACK TO SAVEPOINT merged", "give the merged series up"))
			pg_exec(pg, "RELEASE SAVEPOINT merged", "give the merged series up");
		pg_error(pg, err, "%s", msg);
	} else {
		err = pg_exec(pg, "RELEASE SAVEPOINT merged", "store the merged series");
	}
out:
	free(node);
	free(start);
	free(owned);
	free(members.p);
	free(key.p);
	free(b.p);
	return err;
}

/* Whether the run of m has merged series made of exactly the parts m[0..n). */
static int merged_usable(struct ioacct_pgstore *pg, const char **params)
{
	PGresult *res = pg_run_params(pg,
				      "SELECT count(*) FROM merged_jobs WHERE cluster = $1"
				      " AND job_id = $2 AND restart = $3 AND run_start = $4"
				      " AND members = $5::text[]",
				      5, params);
	int ret;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		ret = pg_conn_error(pg, res, "look for the merged series");
	else
		ret = atoi(PQgetvalue(res, 0, 0)) > 0;
	PQclear(res);
	return ret;
}

static int merged_rows(struct ioacct_pgstore *pg, const char **params, struct ioacct_jobdata *jd,
		       size_t *cap)
{
	PGresult *res = pg_run_params(pg,
		"SELECT ms.step_id, ms.mnt_id, ms.op, u.* FROM merged_series ms,"
		" unnest(bins, " IOACCT_STORE_COUNTER_COLS ") AS u(bin, "
		IOACCT_STORE_COUNTER_COLS ")"
		" WHERE ms.cluster = $1 AND ms.job_id = $2 AND ms.restart = $3"
		" AND ms.run_start = $4 ORDER BY 1, 2, 3, 4", 4, params);
	int ret = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = pg_conn_error(pg, res, "select the merged series");
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
			ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
			goto out;
		}
	}
out:
	PQclear(res);
	return ret;
}

int pg_merged_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
		  struct ioacct_jobdata *jd, size_t *cap)
{
	const char **node = calloc(n ? n : 1, sizeof(*node));
	int64_t *start = calloc(n ? n : 1, sizeof(*start));
	struct run_text t;
	char *owned = NULL;
	struct buf members = { 0 };
	const char *params[5];
	int ret;

	if (!node || !start) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		node[i] = m[i].job.node;
		start[i] = m[i].job.start_ns;
	}
	ret = members_literal(&members, node, start, n);
	if (!ret)
		ret = run_params(&m[0].job, params, &owned, &t);
	if (ret) {
		ret = pg_error(pg, ret, "cluster store: out of memory");
		goto out;
	}
	params[4] = members.p;
	ret = merged_usable(pg, params);
	if (ret > 0) {
		ret = merged_rows(pg, params, jd, cap);
		if (!ret)
			ret = 1;
	}
out:
	free(node);
	free(start);
	free(owned);
	free(members.p);
	return ret;
}

/* ---- made once at export, when the run's last expected part arrives (issue 28) ---- */

/* One mount of the whole run as the readers number them, per part (merge_mounts()). */
struct part_map {
	int64_t id;
	uint32_t shift;
	uint64_t *from, *to;
	size_t n, cap;
};

/* A (mount) series of one (step, op) being summed: bins lo.. of the whole job's axis. */
struct acc {
	uint64_t mnt_id;
	uint32_t lo, n;
	struct ioacct_counters *c;
	uint8_t *has;
};

struct make {
	struct ioacct_jobdata jd;         /* the run: its key, members (nodes) and merged series */
	size_t cap;                       /* of jd.series */
	struct part_map *parts;
	size_t nparts;
	char (*paths)[PATH_MAX];          /* the whole run's mount paths, their ids 1.. */
	size_t npaths;
	struct acc *accs;                 /* one (step, op)'s mounts */
	size_t naccs;
	uint32_t step_id, op;
};

static uint64_t *counter_at(struct ioacct_counters *c, int k)
{
	if (k < 4)
		return k == 0 ? &c->bytes : k == 1 ? &c->calls : k == 2 ? &c->errors : &c->ns;
	if (k < 4 + IOACCT_NR_SIZE_BINS)
		return &c->size_hist[k - 4];
	return &c->errclass[k - 4 - IOACCT_NR_SIZE_BINS];
}

/* Adds as series_summed's numeric sum read back does: saturated at UINT64_MAX. */
static void add_sat(uint64_t *d, uint64_t v)
{
	*d = *d > UINT64_MAX - v ? UINT64_MAX : *d + v;
}

/* The run's parts, in the readers' order (node, start): members, shifts. */
static int make_parts(struct ioacct_pgstore *pg, const char *const *params, struct make *mk)
{
	PGresult *res = pg_exec_prepared(pg, PG_STMT_make_parts,
		"SELECT id, node, start_ns, bin_width_ns FROM jobs WHERE cluster = $1"
		" AND job_id = $2 AND restart = $3 AND run_start = $4 ORDER BY node, start_ns",
		4, params);
	int64_t origin = INT64_MAX;
	uint64_t width;
	int ret = 0, n;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = pg_conn_error(pg, res, "select the run's parts");
		goto out;
	}
	n = PQntuples(res);
	if (n < 2)
		goto out;
	mk->parts = calloc((size_t)n, sizeof(*mk->parts));
	mk->jd.nodes = calloc((size_t)n, sizeof(*mk->jd.nodes));
	if (!mk->parts || !mk->jd.nodes) {
		ret = -ENOMEM;
		goto out;
	}
	mk->nparts = mk->jd.nnodes = (size_t)n;
	for (int r = 0; r < n; r++)
		if (val_i64(res, r, 2) < origin)
			origin = val_i64(res, r, 2);
	width = val_u64(res, 0, 3);
	for (int r = 0; r < n; r++) {
		uint64_t skew;

		mk->parts[r].id = val_i64(res, r, 0);
		val_str(res, r, 1, mk->jd.nodes[r].node, sizeof(mk->jd.nodes[r].node));
		mk->jd.nodes[r].start_ns = val_i64(res, r, 2);
		/* As merge_series(): nodes of another width stay as they are. */
		if (val_u64(res, r, 3) == width)
			mk->parts[r].shift = ioacct_bin_shift(val_i64(res, r, 2), origin, width,
							      &skew);
	}
out:
	PQclear(res);
	return ret;
}

static struct part_map *part_of(struct make *mk, int64_t id)
{
	for (size_t i = 0; i < mk->nparts; i++)
		if (mk->parts[i].id == id)
			return &mk->parts[i];
	return NULL;
}

/* The whole run's mounts numbered by path in the parts' order, as merge_mounts() does. */
static int make_mounts(struct ioacct_pgstore *pg, const char *ids, struct make *mk)
{
	PGresult *res = pg_exec_prepared(pg, PG_STMT_make_mounts, "SELECT job, mnt_id, path"
					 " FROM mounts WHERE job = ANY($1::bigint[])"
					 " ORDER BY job, mnt_id", 1, &ids);
	int ret = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = pg_conn_error(pg, res, "select the run's mounts");
		goto out;
	}
	mk->paths = calloc((size_t)PQntuples(res) + 1, sizeof(*mk->paths));
	if (!mk->paths) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < mk->nparts; i++) {
		struct part_map *p = &mk->parts[i];

		for (int r = 0; r < PQntuples(res); r++) {
			char path[PATH_MAX];
			size_t k;

			if (val_i64(res, r, 0) != p->id)
				continue;
			val_str(res, r, 2, path, sizeof(path));
			for (k = 0; k < mk->npaths && strcmp(mk->paths[k], path); k++)
				;
			if (k == mk->npaths)
				memcpy(mk->paths[mk->npaths++], path, sizeof(path));
			if (p->n == p->cap) {
				size_t ncap = p->cap ? p->cap * 2 : 8;
				uint64_t *f = reallocarray(p->from, ncap, sizeof(*f));
				uint64_t *t = f ? reallocarray(p->to, ncap, sizeof(*t)) : NULL;

				if (f)
					p->from = f;
				if (!f || !t) {
					ret = -ENOMEM;
					goto out;
				}
				p->to = t;
				p->cap = ncap;
			}
			p->from[p->n] = val_u64(res, r, 1);
			p->to[p->n++] = (uint64_t)k + 1;
		}
	}
out:
	PQclear(res);
	return ret;
}

/* The (step, op) summed so far into the run's merged series; its accumulators emptied. */
static int accs_emit(struct make *mk)
{
	for (size_t a = 0; a < mk->naccs; a++) {
		struct acc *x = &mk->accs[a];

		for (uint32_t i = 0; i < x->n; i++) {
			struct ioacct_sample *s;

			if (!x->has[i])
				continue;
			if (mk->jd.nseries == mk->cap) {
				size_t ncap = mk->cap ? mk->cap * 2 : 1024;
				void *p = reallocarray(mk->jd.series, ncap, sizeof(*s));

				if (!p)
					return -ENOMEM;
				mk->jd.series = p;
				mk->cap = ncap;
			}
			s = &mk->jd.series[mk->jd.nseries++];
			s->step_id = mk->step_id;
			s->mnt_id = x->mnt_id;
			s->op = mk->op;
			s->bin = x->lo + i;
			s->c = x->c[i];
		}
		free(x->c);
		free(x->has);
	}
	mk->naccs = 0;
	return 0;
}

/* Makes room in x for bins lo..hi of the axis (lo <= hi). */
static int acc_cover(struct acc *x, uint32_t lo, uint32_t hi)
{
	uint32_t nlo = x->n && x->lo < lo ? x->lo : lo;
	uint64_t nhi = x->n && (uint64_t)x->lo + x->n - 1 > hi ? (uint64_t)x->lo + x->n - 1 : hi;
	size_t nn = (size_t)(nhi - nlo + 1);
	struct ioacct_counters *c;
	uint8_t *has;

	if (x->n && nlo == x->lo && nn == x->n)
		return 0;
	c = calloc(nn, sizeof(*c));
	has = calloc(nn, 1);
	if (!c || !has) {
		free(c);
		free(has);
		return -ENOMEM;
	}
	if (x->n) {
		memcpy(c + (x->lo - nlo), x->c, x->n * sizeof(*c));
		memcpy(has + (x->lo - nlo), x->has, x->n);
	}
	free(x->c);
	free(x->has);
	x->c = c;
	x->has = has;
	x->lo = nlo;
	x->n = (uint32_t)nn;
	return 0;
}

static struct acc *acc_of(struct make *mk, uint64_t mnt_id)
{
	struct acc *x;

	for (size_t a = 0; a < mk->naccs; a++)
		if (mk->accs[a].mnt_id == mnt_id)
			return &mk->accs[a];
	x = reallocarray(mk->accs, mk->naccs + 1, sizeof(*x));
	if (!x)
		return NULL;
	mk->accs = x;
	x = &mk->accs[mk->naccs++];
	memset(x, 0, sizeof(*x));
	x->mnt_id = mnt_id;
	return x;
}

/* An int array's elements ("{1,2}"), at most max of them, into v; how many. */
static size_t parse_u64s(const char *s, uint64_t *v, size_t max)
{
	size_t n = 0;

	if (*s == '{')
		s++;
	while (*s && *s != '}' && n < max) {
		char *end;

		v[n++] = strtoull(s, &end, 10); /* numeric past uint64 saturates, as val_u64 */
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* A part's bins ("{0,1}"), at most max, moved by shift onto the axis; how many, their range. */
static size_t parse_bins(const char *s, uint32_t *bins, size_t max, uint32_t shift, uint32_t *lo,
			 uint32_t *hi)
{
	size_t n = 0;

	if (*s == '{')
		s++;
	while (*s && *s != '}' && n < max) {
		char *end;
		uint64_t b = strtoull(s, &end, 10);

		/* As series_summed(): a bin the shift would take past UINT32_MAX stays. */
		bins[n] = b + shift > UINT32_MAX ? (uint32_t)b : (uint32_t)(b + shift);
		if (bins[n] < *lo)
			*lo = bins[n];
		if (bins[n] > *hi)
			*hi = bins[n];
		n++;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* One series row of a part (job, step, mount, op, bins, counters) added to the sum. */
static int make_row(struct make *mk, const PGresult *res, uint32_t **bins, uint64_t **v,
		    size_t *room)
{
	struct part_map *p = part_of(mk, val_i64(res, 0, 0));
	uint32_t step_id = (uint32_t)val_u64(res, 0, 1);
	uint64_t mnt_id = val_u64(res, 0, 2);
	uint32_t op = (uint32_t)val_u64(res, 0, 3), lo = UINT32_MAX, hi = 0;
	const char *bs = PQgetvalue(res, 0, 4);
	size_t n = 1;
	struct acc *x;

	if (!p)
		return 0;
	for (const char *c = bs; *c; c++)
		n += *c == ',';
	if (n > *room) {
		uint32_t *nb = reallocarray(*bins, n, sizeof(**bins));
		uint64_t *nv = nb ? reallocarray(*v, n, sizeof(**v)) : NULL;

		if (nb)
			*bins = nb;
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*room = n;
	}
	if (mk->naccs && (step_id != mk->step_id || op != mk->op) && accs_emit(mk))
		return -ENOMEM;
	mk->step_id = step_id;
	mk->op = op;
	for (size_t k = 0; k < p->n; k++)
		if (p->from[k] == mnt_id) {
			mnt_id = p->to[k];
			break;
		}
	n = parse_bins(bs, *bins, n, p->shift, &lo, &hi);
	if (!n)
		return 0;
	x = acc_of(mk, mnt_id);
	if (!x || acc_cover(x, lo, hi))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		x->has[(*bins)[i] - x->lo] = 1;
	for (int k = 0; k < IOACCT_STORE_NR_COUNTERS; k++) {
		size_t got;

		if (PQgetisnull(res, 0, 5 + k))
			continue;
		got = parse_u64s(PQgetvalue(res, 0, 5 + k), *v, n);
		for (size_t i = 0; i < got; i++)
			add_sat(counter_at(&x->c[(*bins)[i] - x->lo], k), (*v)[i]);
	}
	return 0;
}

/*
 * The parts' series rows streamed (single-row mode: a 64-node hour of 1 s
 * bins is 768 rows of 3,600 bins, never all in memory), by (step, op), each
 * (step, op)'s mounts summed on the whole job's axis.
 */
static int make_series(struct ioacct_pgstore *pg, const char *ids, struct make *mk)
{
	uint32_t *bins = NULL;
	uint64_t *v = NULL;
	size_t room = 0;
	char name[32];
	PGresult *res;
	int ret = pg_prepare(pg, PG_STMT_make_series, "SELECT job, step_id, mnt_id, op, bins, "
			     IOACCT_STORE_COUNTER_COLS " FROM series"
			     " WHERE job = ANY($1::bigint[]) ORDER BY step_id, op", 1, name,
			     "select the run's series");

	if (ret)
		return ret;
	if (!PQsendQueryPrepared(pg->conn, name, 1, &ids, NULL, NULL, 0) ||
	    !PQsetSingleRowMode(pg->conn))
		return pg_conn_error(pg, NULL, "select the run's series");
	while ((res = pg_result(pg))) {
		ExecStatusType st = PQresultStatus(res);

		if (!ret && st == PGRES_SINGLE_TUPLE)
			ret = make_row(mk, res, &bins, &v, &room);
		else if (!ret && st != PGRES_TUPLES_OK)
			ret = pg_conn_error(pg, res, "select the run's series");
		PQclear(res);
	}
	if (!ret)
		ret = accs_emit(mk);
	free(bins);
	free(v);
	return ret;
}

static void make_free(struct make *mk)
{
	for (size_t i = 0; i < mk->nparts; i++) {
		free(mk->parts[i].from);
		free(mk->parts[i].to);
	}
	for (size_t a = 0; a < mk->naccs; a++) {
		free(mk->accs[a].c);
		free(mk->accs[a].has);
	}
	free(mk->accs);
	free(mk->parts);
	free(mk->paths);
	free(mk->jd.series);
	free(mk->jd.nodes);
}

/* The merged series of the run params (cluster, job id, restart, run_start), made now. */
static int merged_make(struct ioacct_pgstore *pg, const char *const *params)
{
	struct make mk = { 0 };
	struct buf ids = { 0 };
	int ret;

	ioacct_strlcpy(mk.jd.job.cluster, params[0], sizeof(mk.jd.job.cluster));
	mk.jd.job.job_id = strtoull(params[1], NULL, 10);
	mk.jd.job.restart = (uint32_t)strtoul(params[2], NULL, 10);
	mk.jd.job.run_start = strtoll(params[3], NULL, 10);
	ret = make_parts(pg, params, &mk);
	if (ret || mk.nparts < 2)
		goto out;
	pg_buf_add(&ids, "{");
	for (size_t i = 0; i < mk.nparts; i++)
		pg_buf_add(&ids, "%s%" PRId64, i ? "," : "", mk.parts[i].id);
	pg_buf_add(&ids, "}");
	ret = ids.failed ? -ENOMEM : make_mounts(pg, ids.p, &mk);
	if (!ret)
		ret = make_series(pg, ids.p, &mk);
	if (!ret)
		ret = pg_merged_put(pg, &mk.jd);
out:
	if (ret == -ENOMEM)
		pg_error(pg, ret, "cluster store: out of memory");
	make_free(&mk);
	free(ids.p);
	return ret;
}

/*
 * The batch's runs (export_batch) with a merged report of several nodes
 * (job_reports.expected) whose expected nodes all have a finished part, as
 * this transaction sees them: each locked (an advisory lock of its own, in
 * order, held to the commit), then looked at again in a statement of its
 * own (a snapshot taken after the locks). Of two parts written again at
 * once (a run already whole), the second to lock sees the first's committed
 * and makes them after it. Two parts that complete a run at once each see
 * the other's missing: neither makes them, and the first offer after both
 * commits does (pg_merged_offered). A batch of parts whose runs are not
 * whole takes no lock. The lateral probes keep the planner on
 * job_reports' key (export_batch is never analysed).
 */
#define RUNS_SQL                                                                            \
	" FROM (SELECT DISTINCT cluster, job_id, restart, run_start FROM export_batch) b"     \
	" CROSS JOIN LATERAL (SELECT x.cluster, x.job_id, x.restart, x.run_start, x.expected" \
	" FROM job_reports x WHERE x.cluster = b.cluster AND x.job_id = b.job_id"            \
	" AND x.restart = b.restart AND x.run_start = b.run_start"                          \
	" AND cardinality(x.expected) > 1) r"
#define LOCK_SQL(key) "pg_advisory_xact_lock(hashtextextended(" key ", " PG_MERGED_LOCK "))"
/* Of a run r with expected nodes: all have a finished part. */
#define WHOLE_SQL                                                                           \
	"NOT EXISTS (SELECT 1 FROM unnest(r.expected) n WHERE NOT EXISTS (SELECT 1 FROM jobs j" \
	" WHERE j.cluster = r.cluster AND j.job_id = r.job_id AND j.restart = r.restart"     \
	" AND j.run_start = r.run_start AND j.node = n AND j.end_ns IS NOT NULL))"
#define RUN_KEY "r.cluster || '/' || r.job_id || '/' || r.restart || '/' || r.run_start"
#define COMPLETE_SQL                                                                        \
	"SELECT " LOCK_SQL("k") " FROM (SELECT " RUN_KEY " AS k" RUNS_SQL                     \
	" WHERE " WHOLE_SQL " ORDER BY 1 OFFSET 0) l;"                                       \
	"SELECT r.cluster, r.job_id, r.restart, r.run_start, " LOCK_SQL(RUN_KEY) RUNS_SQL       \
	" WHERE " WHOLE_SQL

/* merged_make() under a savepoint: a failure costs only them (a whole read sums the nodes). */
static int make_saved(struct ioacct_pgstore *pg, const char *const *params)
{
	int err = pg_exec(pg, "SAVEPOINT merged_make", "make the merged series");

	if (err)
		return err;
	err = merged_make(pg, params);
	if (err && !pg_exec(pg, "ROLLBACK TO SAVEPOINT merged_make", "give them up"))
		err = 0;
	if (!err)
		err = pg_exec(pg, "RELEASE SAVEPOINT merged_make", "make the merged series");
	return err;
}

int pg_merged_complete(struct ioacct_pgstore *pg)
{
	PGresult *res = pg_run(pg, COMPLETE_SQL);
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		err = pg_conn_error(pg, res, "look for the runs made whole");
		goto out;
	}
	for (int r = 0; r < PQntuples(res) && !err; r++) {
		const char *params[4] = { PQgetvalue(res, r, 0), PQgetvalue(res, r, 1),
					  PQgetvalue(res, r, 2), PQgetvalue(res, r, 3) };

		err = make_saved(pg, params);
	}
out:
	PQclear(res);
	return err;
}

/*
 * Whether the run params (cluster, job id, restart, run_start) has a merged report of
 * several nodes, all with a finished part, and no merged series: 1, 0 or -errno.
 */
static int run_unmerged(struct ioacct_pgstore *pg, const char *const *params)
{
	PGresult *res = pg_exec_prepared(pg, PG_STMT_run_unmerged,
		"SELECT count(*) FROM job_reports r WHERE r.cluster = $1 AND r.job_id = $2"
		" AND r.restart = $3 AND r.run_start = $4 AND cardinality(r.expected) > 1"
		" AND " WHOLE_SQL " AND NOT EXISTS (SELECT 1 FROM merged_jobs m"
		" WHERE m.cluster = r.cluster AND m.job_id = r.job_id AND m.restart = r.restart"
		" AND m.run_start = r.run_start)", 4, params);
	int ret;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		ret = pg_conn_error(pg, res, "look for the run made whole");
	else
		ret = atoi(PQgetvalue(res, 0, 0)) > 0;
	PQclear(res);
	return ret;
}

int pg_merged_offered(struct ioacct_pgstore *pg, const struct ioacct_job *job)
{
	struct run_text t;
	char *owned = NULL;
	const char *params[4];
	PGresult *res;
	int ret;

	if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE)
		return 0;
	ret = run_params(job, params, &owned, &t);
	if (ret) {
		ret = pg_error(pg, ret, "cluster store: out of memory");
		goto out;
	}
	/* Most offers are not the last: one look, then the lock and a look again. */
	ret = run_unmerged(pg, params);
	if (ret <= 0)
		goto out;
	ret = pg_exec(pg, "BEGIN", "begin a transaction");
	if (ret)
		goto out;
	res = pg_exec_prepared(pg, PG_STMT_run_lock,
			       "SELECT " LOCK_SQL("$1 || '/' || $2 || '/' || $3 || '/' || $4"), 4,
			       params);
	ret = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : pg_conn_error(pg, res, "lock the run");
	PQclear(res);
	if (!ret)
		ret = run_unmerged(pg, params);
	if (ret > 0)
		ret = make_saved(pg, params);
	if (ret >= 0)
		ret = pg_exec(pg, "COMMIT", "store the merged series");
	if (ret)
		pg_rollback_quiet(pg);
out:
	free(owned);
	return ret < 0 ? ret : 0;
}

#endif /* HAVE_LIBPQ */
