/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL, per-file and MPI-IO records (schema 9)
 * and HDF5 records (schema 18; see pgstore.h, pgstore_db.h): written with
 * their parts, one COPY per table for a batch; read with a whole job, each
 * node's as its SQLite has them (files: lib/store/store_jobs.c,
 * ST_LOAD_FILES order; MPI-IO: ST_LOAD_MPIIO_PAGE order; HDF5: ST_LOAD_H5).
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

void pg_buf_path(struct buf *b, const char *path, size_t max)
{
	bool nomem = false;
	char *raw;

	pg_buf_copy_text(b, path, max, '\t');
	raw = pg_raw_param(path, &nomem);
	if (nomem)
		b->failed = true;
	else if (raw)
		pg_buf_add(b, "\\%s\t", raw); /* COPY's text format: the backslash escaped */
	else
		pg_buf_add(b, "\\N\t");
	free(raw);
}

/* Size bins as a numeric[] literal, then sep. */
static void buf_bins(struct buf *b, const uint64_t *v, char sep)
{
	pg_buf_add(b, "{");
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		pg_buf_add(b, "%s%" PRIu64, i ? "," : "", v[i]);
	pg_buf_add(b, "}%c", sep);
}

static void buf_file(struct buf *b, const char *id, const struct ioacct_file *f)
{
	const uint64_t u[] = {
		f->opens, f->reads, f->writes, f->stats, f->fsyncs, f->bytes_read,
		f->bytes_written, f->read_ns, f->write_ns, f->meta_ns, f->seq_reads,
		f->seq_writes, f->consec_reads, f->consec_writes, f->mmap_bytes,
		f->cache_miss_bytes,
	};
	const int64_t v[] = {
		f->max_byte_read, f->max_byte_written, f->first_read_ns, f->last_read_ns,
		f->first_write_ns, f->last_write_ns,
	};

	pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRId32 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu64 "\t",
		   id, f->step_id, f->rank, f->mnt_id, f->dev, f->ino);
	pg_buf_path(b, f->path, sizeof(f->path));
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		pg_buf_add(b, "%" PRIu64 "\t", u[i]);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		pg_buf_add(b, "%" PRId64 "\t", v[i]);
	buf_bins(b, f->size_read, '\t');
	buf_bins(b, f->size_written, '\t');
	pg_buf_add(b, "%" PRIu64 "\t", f->seeks); /* schema 11 */
	/* schema 12 */
	pg_buf_add(b, "%" PRIu32 "\t%" PRIu64, f->gen, f->rw_switches);
	for (size_t i = 0; i < IOACCT_FILE_ACCESSES; i++)
		pg_buf_add(b, "\t%" PRIu64, f->access[i]);
	for (size_t i = 0; i < IOACCT_FILE_ACCESSES; i++)
		pg_buf_add(b, "\t%" PRIu64, f->access_count[i]);
	pg_buf_add(b, "\n");
}

#define MPIIO_VALUE(name) m->name,

static void buf_mpiio(struct buf *b, const char *id, const struct ioacct_mpiio *m)
{
	const uint64_t u[] = { IOACCT_MPIIO_COUNTERS(MPIIO_VALUE) };

	pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRId32 "\t%" PRIu32 "\t", id, m->step_id, m->rank,
		   m->pid);
	pg_buf_path(b, m->path, sizeof(m->path));
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		pg_buf_add(b, "%" PRIu64 "\t", u[i]);
	buf_bins(b, m->size_read, '\t');
	buf_bins(b, m->size_written, '\n');
}

#define H5_VALUE(name) h->name,

static void buf_h5(struct buf *b, const char *id, const struct ioacct_h5rec *h)
{
	const uint64_t u[] = { IOACCT_H5_COUNTERS(H5_VALUE) };

	pg_buf_add(b, "%s\t%" PRIu32 "\t%" PRId32 "\t%" PRIu32 "\t%" PRIu32 "\t", id, h->step_id,
		   h->rank, h->pid, h->kind);
	pg_buf_path(b, h->name, sizeof(h->name));
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		pg_buf_add(b, "%" PRIu64 "\t", u[i]);
	buf_bins(b, h->size_read, '\t');
	buf_bins(b, h->size_written, '\n');
}

/* The tables of a part's records, one COPY each. */
enum rec_table { REC_FILES, REC_MPIIO, REC_H5 };

static const struct {
	const char *copy, *what;
} rec_tables[] = {
	[REC_FILES] = { "COPY files (job, " PG_FILE_COLS ") FROM STDIN", "store the files" },
	[REC_MPIIO] = { "COPY mpiio_files (job, " PG_MPIIO_COLS ") FROM STDIN",
			"store the MPI-IO records" },
	[REC_H5] = { "COPY hdf5_records (job, " PG_H5_COLS ") FROM STDIN",
		     "store the HDF5 records" },
};

static size_t rec_count(const struct ioacct_jobdata *jd, enum rec_table t)
{
	return t == REC_FILES ? jd->nfiles : t == REC_MPIIO ? jd->nmpiio : jd->nh5;
}

/* One COPY of the parts' records of table t; none when they have none. */
static int copy_records(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
			char (*ids)[24], size_t n, enum rec_table t, struct buf *b)
{
	size_t i, total = 0;
	int err;

	for (i = 0; i < n; i++)
		total += rec_count(jds[i], t);
	if (!total)
		return 0;
	err = pg_copy_begin(pg, rec_tables[t].copy);
	for (i = 0; i < n && !err; i++) {
		for (size_t k = 0; k < rec_count(jds[i], t) && !err; k++) {
			if (t == REC_FILES)
				buf_file(b, ids[i], &jds[i]->files[k]);
			else if (t == REC_MPIIO)
				buf_mpiio(b, ids[i], &jds[i]->mpiio[k]);
			else
				buf_h5(b, ids[i], &jds[i]->h5[k]);
			err = pg_copy_flush(pg, b, false);
		}
	}
	return pg_copy_end(pg, b, err, rec_tables[t].what);
}

int pg_mark_not_kept(struct ioacct_pgstore *pg, struct buf *list, enum pg_stmt stmt,
			 const char *sql)
{
	const char *params[1];
	PGresult *res;
	int err = 0;

	pg_buf_add(list, "}");
	if (list->failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	params[0] = list->p;
	res = pg_exec_prepared(pg, stmt, sql, 1, params);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = pg_conn_error(pg, res, "mark jobs without their records");
	PQclear(res);
	return err;
}

int pg_records_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *const *jds,
		   char (*ids)[24], size_t n, struct buf *b)
{
	struct buf none = { 0 }, none_h5 = { 0 };
	int err = 0;

	for (enum rec_table t = REC_FILES; t <= REC_H5 && !err; t++)
		err = copy_records(pg, jds, ids, n, t, b);
	/* A part whose records were not read (never from ioacctd's own store): not kept. */
	for (size_t i = 0; !err && i < n; i++) {
		if (!jds[i]->files_loaded || !jds[i]->mpiio_loaded)
			pg_buf_add(&none, "%s%s", none.len ? "," : "{", ids[i]);
		if (!jds[i]->h5_loaded)
			pg_buf_add(&none_h5, "%s%s", none_h5.len ? "," : "{", ids[i]);
	}
	if (!err && none.len)
		err = pg_mark_not_kept(pg, &none, PG_STMT_files_not_kept,
				    "UPDATE jobs SET files_kept = false WHERE id = ANY($1::bigint[])");
	if (!err && none_h5.len)
		err = pg_mark_not_kept(pg, &none_h5, PG_STMT_h5_not_kept,
				    "UPDATE jobs SET h5_kept = false WHERE id = ANY($1::bigint[])");
	free(none.p);
	free(none_h5.p);
	return err;
}

/* ---- reading ---- */

/* A bytea's text output (hex: \x4142) as a C string into dst; false when it is not that. */
static bool bytea_str(const char *s, char *dst, size_t len)
{
	size_t o = 0;

	if (s[0] != '\\' || s[1] != 'x')
		return false;
	for (s += 2; s[0] && s[1] && o + 1 < len; s += 2) {
		char hex[3] = { s[0], s[1], 0 };

		dst[o++] = (char)strtoul(hex, NULL, 16);
	}
	dst[o] = '\0';
	return true;
}

void pg_val_path(const PGresult *res, int row, int col, char *dst, size_t len)
{
	if (PQgetisnull(res, row, col + 1) || !bytea_str(PQgetvalue(res, row, col + 1), dst, len))
		val_str(res, row, col, dst, len);
}

/* A numeric[] of size bins ("{1,2,...}"). */
static void val_bins(const PGresult *res, int row, int col, uint64_t *v)
{
	const char *s = PQgetvalue(res, row, col);

	memset(v, 0, IOACCT_NR_SIZE_BINS * sizeof(*v));
	if (*s == '{')
		s++;
	for (int i = 0; i < IOACCT_NR_SIZE_BINS && *s && *s != '}'; i++) {
		char *end;

		v[i] = strtoull(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
}

uint64_t pg_mnt_of(const struct member *m, uint64_t mnt_id)
{
	for (size_t i = 0; i < m->nmnt; i++)
		if (m->mnt_from[i] == mnt_id)
			return m->mnt_to[i];
	return mnt_id;
}

/* A time from the node's start (-1: none) made one from the whole job's. */
static int64_t time_moved(int64_t t, int64_t shift)
{
	return t < 0 ? t : t + shift;
}

static void file_from_row(const PGresult *res, int r, const struct member *m, int64_t shift,
			  struct ioacct_file *f)
{
	uint64_t *u[] = {
		&f->opens, &f->reads, &f->writes, &f->stats, &f->fsyncs, &f->bytes_read,
		&f->bytes_written, &f->read_ns, &f->write_ns, &f->meta_ns, &f->seq_reads,
		&f->seq_writes, &f->consec_reads, &f->consec_writes, &f->mmap_bytes,
		&f->cache_miss_bytes,
	};
	int64_t *v[] = {
		&f->max_byte_read, &f->max_byte_written, &f->first_read_ns, &f->last_read_ns,
		&f->first_write_ns, &f->last_write_ns,
	};
	int col = 1;

	memset(f, 0, sizeof(*f));
	f->step_id = (uint32_t)val_u64(res, r, col++);
	f->rank = (int32_t)val_i64(res, r, col++);
	f->mnt_id = pg_mnt_of(m, val_u64(res, r, col++));
	f->dev = (uint32_t)val_u64(res, r, col++);
	f->ino = val_u64(res, r, col++);
	pg_val_path(res, r, col, f->path, sizeof(f->path));
	col += 2;
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		*u[i] = val_u64(res, r, col++);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		*v[i] = val_i64(res, r, col++);
	val_bins(res, r, col++, f->size_read);
	val_bins(res, r, col++, f->size_written);
	f->seeks = val_u64(res, r, col++);
	f->gen = (uint32_t)val_u64(res, r, col++);
	f->rw_switches = val_u64(res, r, col++);
	for (size_t i = 0; i < IOACCT_FILE_ACCESSES; i++)
		f->access[i] = val_u64(res, r, col++);
	for (size_t i = 0; i < IOACCT_FILE_ACCESSES; i++)
		f->access_count[i] = val_u64(res, r, col++);
	/* Byte positions stay; times are from the start, the whole job's now. */
	f->first_read_ns = time_moved(f->first_read_ns, shift);
	f->last_read_ns = time_moved(f->last_read_ns, shift);
	f->first_write_ns = time_moved(f->first_write_ns, shift);
	f->last_write_ns = time_moved(f->last_write_ns, shift);
}

#define MPIIO_PTR(name) &x->name,

static void mpiio_from_row(const PGresult *res, int r, uint32_t part, struct ioacct_mpiio *x)
{
	uint64_t *u[] = { IOACCT_MPIIO_COUNTERS(MPIIO_PTR) };
	int col = 1;

	memset(x, 0, sizeof(*x));
	x->part = part;
	x->step_id = (uint32_t)val_u64(res, r, col++);
	x->rank = (int32_t)val_i64(res, r, col++);
	x->pid = (uint32_t)val_u64(res, r, col++);
	pg_val_path(res, r, col, x->path, sizeof(x->path));
	col += 2;
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		*u[i] = val_u64(res, r, col++);
	val_bins(res, r, col++, x->size_read);
	val_bins(res, r, col, x->size_written);
}

#define H5_PTR(name) &h->name,

static void h5_from_row(const PGresult *res, int r, uint32_t part, struct ioacct_h5rec *h)
{
	uint64_t *u[] = { IOACCT_H5_COUNTERS(H5_PTR) };
	int col = 1;

	memset(h, 0, sizeof(*h));
	h->part = part;
	h->step_id = (uint32_t)val_u64(res, r, col++);
	h->rank = (int32_t)val_i64(res, r, col++);
	h->pid = (uint32_t)val_u64(res, r, col++);
	h->kind = (uint32_t)val_u64(res, r, col++);
	pg_val_path(res, r, col, h->name, sizeof(h->name));
	col += 2;
	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		*u[i] = val_u64(res, r, col++);
	val_bins(res, r, col++, h->size_read);
	val_bins(res, r, col, h->size_written);
}

/* SQLite's order of a job's files (ST_LOAD_FILES): bytes moved, largest first, the key, the part. */
static int file_cmp(const void *pa, const void *pb)
{
	const struct ioacct_file *a = pa, *b = pb;
	int64_t x[] = { -(int64_t)(a->bytes_read + a->bytes_written), a->step_id, a->rank,
			(int64_t)a->mnt_id, a->dev, (int64_t)a->ino, a->gen, a->part };
	int64_t y[] = { -(int64_t)(b->bytes_read + b->bytes_written), b->step_id, b->rank,
			(int64_t)b->mnt_id, b->dev, (int64_t)b->ino, b->gen, b->part };

	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* SQLite's order of the MPI-IO records (ST_LOAD_MPIIO_PAGE). */
static int mpiio_cmp(const void *a, const void *b)
{
	return ioacct_mpiio_key_cmp(a, b);
}

/* SQLite's order of the HDF5 records (ST_LOAD_H5). */
static int h5_cmp(const void *a, const void *b)
{
	return ioacct_h5rec_key_cmp(a, b);
}

PGresult *pg_query_ids(struct ioacct_pgstore *pg, const char *sql, const char *ids,
			const char *what, int *err)
{
	const char *params[1] = { ids };
	PGresult *res = pg_run_params(pg, sql, 1, params);

	*err = 0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		*err = pg_conn_error(pg, res, what);
		PQclear(res);
		return NULL;
	}
	return res;
}

int pg_member_ids(const struct member *m, size_t n, struct buf *ids)
{
	pg_buf_add(ids, "{");
	for (size_t i = 0; i < n; i++)
		pg_buf_add(ids, "%s%" PRId64, i ? "," : "", m[i].id);
	pg_buf_add(ids, "}");
	return ids->failed ? -ENOMEM : 0;
}

PGresult *pg_kept_rows(struct ioacct_pgstore *pg, const char *kept, const char *sql,
			const char *ids, const char *what, int *err)
{
	char count[160];
	PGresult *res;
	bool all;

	snprintf(count, sizeof(count),
		 "SELECT count(*) FROM jobs WHERE id = ANY($1::bigint[]) AND NOT %s", kept);
	res = pg_query_ids(pg, count, ids, what, err);
	if (!res)
		return NULL;
	all = val_u64(res, 0, 0) == 0;
	PQclear(res);
	return all ? pg_query_ids(pg, sql, ids, what, err) : NULL;
}

const struct member *pg_member_of(const struct member *m, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].id == id)
			return &m[i];
	return NULL;
}

/*
 * The node part of the rows of part id of members m[0..n): its node's index
 * in jd->nodes, a job of several nodes' (by name; two parts of one name,
 * by their order in m); else 0.
 */
static uint32_t part_of(const struct member *m, size_t n, const struct ioacct_jobdata *jd,
			int64_t id)
{
	const struct member *p = pg_member_of(m, n, id);
	size_t same = 0;

	if (!p)
		return 0;
	for (const struct member *q = m; q < p; q++)
		same += !strcmp(q->job.node, p->job.node);
	for (size_t i = 0; i + same < jd->nnodes; i++)
		if (!strcmp(jd->nodes[i].node, p->job.node))
			return (uint32_t)(i + same);
	return 0;
}

/*
 * The HDF5 records of the parts ids ("{1,2}"), members m[0..n), into jd,
 * unless a part has none kept (schema 18).
 */
static int h5_get(struct ioacct_pgstore *pg, const struct member *m, size_t n, const char *ids,
		  struct ioacct_jobdata *jd)
{
	PGresult *res;
	int err;

	/* None for a part written before schema 18: not read. */
	res = pg_kept_rows(pg, "h5_kept", "SELECT job, " PG_H5_COLS " FROM hdf5_records"
			   " WHERE job = ANY($1::bigint[])", ids, "select HDF5 records", &err);
	if (!res)
		return err;
	jd->h5 = calloc(PQntuples(res) ? (size_t)PQntuples(res) : 1, sizeof(*jd->h5));
	if (!jd->h5) {
		err = -ENOMEM;
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++)
		h5_from_row(res, r, part_of(m, n, jd, val_i64(res, r, 0)), &jd->h5[jd->nh5++]);
	qsort(jd->h5, jd->nh5, sizeof(*jd->h5), h5_cmp);
	jd->h5_loaded = true;
out:
	PQclear(res);
	return err;
}

int pg_records_get(struct ioacct_pgstore *pg, const struct member *m, size_t n,
		   struct ioacct_jobdata *jd)
{
	struct buf ids = { 0 };
	PGresult *res = NULL;
	int err = 0;

	if (pg_member_ids(m, n, &ids)) {
		err = -ENOMEM;
		goto out;
	}
	/* None for a part written before schema 9: not read. */
	res = pg_kept_rows(pg, "files_kept", "SELECT job, " PG_FILE_COLS " FROM files"
			   " WHERE job = ANY($1::bigint[])", ids.p, "select files", &err);
	if (!res)
		goto out;
	jd->files = calloc(PQntuples(res) ? (size_t)PQntuples(res) : 1, sizeof(*jd->files));
	if (!jd->files) {
		err = -ENOMEM;
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		const struct member *p = pg_member_of(m, n, val_i64(res, r, 0));
		struct ioacct_file *f = &jd->files[jd->nfiles];

		if (!p)
			continue;
		file_from_row(res, r, p, p->job.start_ns - jd->job.start_ns, f);
		f->part = part_of(m, n, jd, p->id);
		jd->nfiles++;
	}
	qsort(jd->files, jd->nfiles, sizeof(*jd->files), file_cmp);
	PQclear(res);
	res = pg_query_ids(pg, "SELECT job, " PG_MPIIO_COLS " FROM mpiio_files"
			" WHERE job = ANY($1::bigint[])", ids.p, "select MPI-IO records", &err);
	if (!res)
		goto out;
	jd->mpiio = calloc(PQntuples(res) ? (size_t)PQntuples(res) : 1, sizeof(*jd->mpiio));
	if (!jd->mpiio) {
		err = -ENOMEM;
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++)
		mpiio_from_row(res, r, part_of(m, n, jd, val_i64(res, r, 0)),
			       &jd->mpiio[jd->nmpiio++]);
	qsort(jd->mpiio, jd->nmpiio, sizeof(*jd->mpiio), mpiio_cmp);
	jd->files_loaded = true;
	jd->mpiio_loaded = true;
out:
	PQclear(res);
	/* Kept or not apart from the files: a part of schema 9 to 17 has files, no HDF5. */
	if (!err)
		err = h5_get(pg, m, n, ids.p, jd);
	free(ids.p);
	return err;
}

#endif /* HAVE_LIBPQ */
