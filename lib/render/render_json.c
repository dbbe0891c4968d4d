/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The JSON report: one object, schema in docs/report-format.md. Integers
 * are exact (uint64 counters may exceed 2^53: parse them as integers, not
 * doubles); rates are decimals with three digits. The top level and the
 * "mounts" entries carry every field iorun's --json printed before the
 * report existed, under the same names.
 */
#include "render.h"
#include "render_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define MAX_DEPTH 16

/* A small writer: indented objects, or compact ones on one line. */
struct jw {
	FILE *f;
	int depth;
	bool first[MAX_DEPTH];
	bool compact[MAX_DEPTH];
};

static void jw_sep(struct jw *w)
{
	if (w->depth == 0)
		return;
	if (!w->first[w->depth])
		fputs_unlocked(w->compact[w->depth] ? ", " : ",", w->f);
	if (!w->compact[w->depth])
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	w->first[w->depth] = false;
}

static void jw_key(struct jw *w, const char *key)
{
	jw_sep(w);
	r_json_str(w->f, key);
	fputs_unlocked(": ", w->f);
}

static void jw_open(struct jw *w, char c, bool compact)
{
	putc_unlocked(c, w->f);
	w->depth++;
	w->first[w->depth] = true;
	w->compact[w->depth] = compact || (w->depth > 1 && w->compact[w->depth - 1]);
}

static void jw_close(struct jw *w, char c)
{
	bool compact = w->compact[w->depth], empty = w->first[w->depth];

	w->depth--;
	if (!compact && !empty)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	putc_unlocked(c, w->f);
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	r_u64(w->f, v);
}

/*
 * Report version 3 spells each quantity one way (Darshan's: bytes_read,
 * bytes_written); the names version 2 used are written beside them, the
 * same value, for one more version (docs/report-format.md).
 */
static void jw_bytes(struct jw *w, bool written, uint64_t v)
{
	jw_u64(w, written ? "bytes_written" : "bytes_read", v);
	jw_u64(w, written ? "write_bytes" : "read_bytes", v);
}

static void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	fprintf(w->f, "%" PRId64, v);
}

static void jw_dbl(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	fprintf(w->f, "%.3f", isfinite(v) ? v : 0.0);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	if (s)
		r_json_str(w->f, s);
	else
		fputs_unlocked("null", w->f);
}

static void jw_raw(struct jw *w, const char *key, const char *raw)
{
	jw_key(w, key);
	fputs_unlocked(raw, w->f);
}

static void size_bins(struct jw *w, const char *key, const uint64_t *hist)
{
	jw_key(w, key);
	jw_open(w, '{', true);
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		jw_u64(w, ioacct_size_bin_name(b), hist[b]);
	jw_close(w, '}');
}

static void sizes(struct jw *w, const char *key, const struct ioacct_counters *c)
{
	size_bins(w, key, c->size_hist);
}

static void rate(struct jw *w, const char *key, const struct ioacct_rate *x)
{
	jw_key(w, key);
	jw_open(w, '{', true);
	jw_dbl(w, "min", x->min);
	jw_dbl(w, "max", x->max);
	jw_dbl(w, "mean", x->mean);
	jw_u64(w, "max_bin", x->max_bin);
	jw_close(w, '}');
}

/* Failed calls per class; "unclassified": stored before ioacct classified errors. */
static void err_classes(struct jw *w, const uint64_t *errclass, uint64_t unclassified)
{
	jw_key(w, "error_classes");
	jw_open(w, '{', true);
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++)
		jw_u64(w, ioacct_err_class_name(k), errclass[k]);
	jw_u64(w, "unclassified", unclassified);
	jw_close(w, '}');
}

static void ops(struct jw *w, const struct ioacct_counters *op)
{
	jw_key(w, "ops");
	jw_open(w, '{', false);
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++) {
		jw_key(w, ioacct_op_name(k));
		jw_open(w, '{', true);
		jw_u64(w, "calls", op[k].calls);
		jw_u64(w, "errors", op[k].errors);
		jw_u64(w, "bytes", op[k].bytes);
		jw_u64(w, "time_ns", op[k].ns);
		jw_u64(w, "real_errors", ioacct_counters_real_errors(&op[k]));
		err_classes(w, op[k].errclass, ioacct_counters_unclassified(&op[k]));
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

/* One fadvise or madvise op's calls by advice class. */
static void hints(struct jw *w, const char *key, const struct ioacct_counters *c)
{
	jw_key(w, key);
	jw_open(w, '{', true);
	for (unsigned int h = 0; h < IOACCT_NR_HINTS; h++)
		jw_u64(w, ioacct_hint_name(h), c->size_hist[h]);
	jw_close(w, '}');
}

/*
 * The page-cache and mmap views (issue 14): mmap_faults and the other calls
 * are with the ops' plurals; here their bytes, the hit ratio and the hints.
 * mmap_read_bytes is null where they were not measured (issue 29; the job's
 * mmap_read_bytes_note says why).
 */
static void page_cache(struct jw *w, const struct ioacct_counters *op, bool cache_view,
		       bool mmap_bytes)
{
	uint64_t miss = op[IOACCT_OP_CACHE_FILL].bytes;
	/* Without the cache view there are no misses to count: no ratio either. */
	double hit = cache_view ? ioacct_hit_ratio(ioacct_report_read_all(op), miss) : -1;
	char b[32];

	if (mmap_bytes)
		jw_u64(w, "mmap_read_bytes", op[IOACCT_OP_MMAP_FAULT].bytes);
	else
		jw_raw(w, "mmap_read_bytes", "null");
	jw_u64(w, "cache_miss_bytes", miss);
	jw_u64(w, "readahead_bytes", op[IOACCT_OP_READAHEAD].bytes);
	jw_u64(w, "readahead_sync", op[IOACCT_OP_READAHEAD].size_hist[0]);
	jw_u64(w, "readahead_async", op[IOACCT_OP_READAHEAD].size_hist[1]);
	if (hit < 0) {
		jw_raw(w, "hit_ratio", "null");
	} else {
		snprintf(b, sizeof(b), "%.4f", hit);
		jw_raw(w, "hit_ratio", b);
	}
	hints(w, "fadvise_advice", &op[IOACCT_OP_FADVISE]);
	hints(w, "madvise_advice", &op[IOACCT_OP_MADVISE]);
}

/* The fields of a mount, also used for the job's totals over every mount. */
static void mount_body(struct jw *w, const struct ioacct_report_mount *m, bool named_counters,
		       bool cache_view, bool mmap_bytes)
{
	const struct ioacct_counters *op = m->op;

	jw_bytes(w, false, op[IOACCT_OP_READ].bytes);
	jw_bytes(w, true, op[IOACCT_OP_WRITE].bytes);
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		jw_u64(w, ioacct_op_plural(k), op[k].calls);
	jw_u64(w, "errors", m->errors);
	jw_u64(w, "real_errors", ioacct_report_real_errors(m->errors, m->errclass));
	err_classes(w, m->errclass, m->unclassified);
	jw_u64(w, "time_ns", m->ns);
	jw_key(w, "op_errors");
	jw_open(w, '{', true);
	for (unsigned int k = 0; k < IOACCT_OP_COUNT; k++)
		jw_u64(w, ioacct_op_plural(k), op[k].errors);
	jw_close(w, '}');
	sizes(w, "read_sizes", &op[IOACCT_OP_READ]);
	sizes(w, "write_sizes", &op[IOACCT_OP_WRITE]);
	jw_u64(w, "meta_ops", m->meta_calls);
	jw_key(w, "time_split_ns");
	jw_open(w, '{', true);
	jw_u64(w, "read", op[IOACCT_OP_READ].ns);
	jw_u64(w, "write", op[IOACCT_OP_WRITE].ns);
	jw_u64(w, "meta", m->meta_ns);
	jw_close(w, '}');
	ops(w, op);
	page_cache(w, op, cache_view, mmap_bytes);
	jw_key(w, "rates");
	jw_open(w, '{', false);
	for (unsigned int d = 0; d < IOACCT_DIR_COUNT; d++) {
		jw_key(w, ioacct_dir_name(d));
		jw_open(w, '{', false);
		jw_u64(w, "bytes", m->dir[d].bytes);
		jw_u64(w, "calls", m->dir[d].calls);
		rate(w, "bandwidth_bytes_per_s", &m->dir[d].bw);
		rate(w, "iops", &m->dir[d].iops);
		jw_close(w, '}');
	}
	jw_close(w, '}');
	if (named_counters) {
		struct ioacct_named_counter c[IOACCT_NAMED_COUNTERS];
		size_t n = ioacct_report_counters(m, c);
		char buf[32];

		jw_key(w, "counters");
		jw_open(w, '{', false);
		for (size_t i = 0; i < n; i++) {
			if (c[i].kind == IOACCT_CK_TIME_NS)
				jw_raw(w, c[i].name, r_secs(c[i].value, 6, buf, sizeof(buf)));
			else
				jw_u64(w, c[i].name, c[i].value);
		}
		jw_close(w, '}');
	}
}

static void job(struct jw *w, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	const struct ioacct_job *j = &jd->job;
	char buf[64];

	jw_u64(w, "schema_version", IOACCT_REPORT_VERSION);
	jw_u64(w, "job_id", j->job_id);
	jw_str(w, "cluster", j->cluster);
	jw_str(w, "node", j->node);
	jw_str(w, "source", j->source);
	jw_u64(w, "uid", j->uid);
	jw_u64(w, "gid", j->gid);
	jw_str(w, "user", j->user);
	jw_str(w, "name", j->name);
	jw_str(w, "workdir", j->workdir);
	/* null for a job stored before its command line was kept. */
	jw_str(w, "cmdline", j->cmdline[0] ? j->cmdline : NULL);
	if (j->has_array) {
		jw_u64(w, "array_job_id", j->array_job_id);
		jw_u64(w, "array_task_id", j->array_task_id);
	} else {
		jw_raw(w, "array_job_id", "null");
		jw_raw(w, "array_task_id", "null");
	}
	jw_str(w, "state", j->state);
	jw_i64(w, "exit_code", j->exit_code);
	jw_u64(w, "restart", j->restart);
	jw_i64(w, "start_ns", j->start_ns);
	jw_i64(w, "end_ns", j->end_ns);
	jw_str(w, "start_time", r_iso_time(j->start_ns, buf, sizeof(buf)));
	jw_str(w, "end_time", j->end_ns ? r_iso_time(j->end_ns, buf, sizeof(buf)) : NULL);
	if (j->end_ns > j->start_ns)
		jw_raw(w, "run_time_s", r_secs((uint64_t)(j->end_ns - j->start_ns), 9, buf, sizeof(buf)));
	else
		jw_raw(w, "run_time_s", "null");
	jw_u64(w, "bin_width_ns", j->bin_width_ns);
	/* Re-binned coarser by the store (downsample_after): the width it was recorded at. */
	if (j->orig_bin_width_ns)
		jw_u64(w, "downsampled_from_ns", j->orig_bin_width_ns);
	jw_u64(w, "nbins", r->nbins);
	jw_u64(w, "last_bin_width_ns", r->last_width_ns);
	jw_u64(w, "span_ns", r->span_ns);
	{
		/* "tracepoint views=cache,mmap,readahead": the mode, and the views apart. */
		const char *v = ioacct_probe_views(j->probe_mode);
		char mode[sizeof(j->probe_mode)];

		jw_str(w, "probe_mode", ioacct_probe_backend(j->probe_mode, mode, sizeof(mode)));
		if (v)
			jw_str(w, "views", v);
		else
			jw_raw(w, "views", "null");
		/* The RPC probes (issue 40): "sunrpc", "off:no-sunrpc"; null for a job stored before. */
		if (ioacct_probe_rpc(j->probe_mode, mode, sizeof(mode)))
			jw_str(w, "rpc_probes", mode);
		else
			jw_raw(w, "rpc_probes", "null");
		if (ioacct_probe_mmap_unmeasured(j->probe_mode)) {
			char note[160];

			snprintf(note, sizeof(note), "mmap bytes: not measured here (%s)",
				 ioacct_probe_mmap_unmeasured(j->probe_mode));
			jw_str(w, "mmap_read_bytes_note", note);
		}
	}
	if (jd->start_mono_ns)
		jw_u64(w, "start_mono_ns", jd->start_mono_ns);
	/* A job of several nodes, their bins aligned to the bin: how far off they may be. */
	if (j->skew_ns)
		jw_u64(w, "skew_ns", j->skew_ns);
	jw_u64(w, "dropped", j->dropped_events);
	jw_u64(w, "dropped_bytes", j->dropped_bytes);
	jw_u64(w, "lib_opens_missed", j->lib_opens_missed);
}

static void steps(struct jw *w, const struct ioacct_report *r)
{
	char name[24];

	jw_key(w, "steps");
	jw_open(w, '[', false);
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct ioacct_report_step *s = &r->steps[i];
		const struct ioacct_step *st = s->step;

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "step", ioacct_step_name(s->step_id, name, sizeof(name)));
		jw_u64(w, "step_id", s->step_id);
		jw_str(w, "state", st ? st->state : NULL);
		if (st)
			jw_i64(w, "exit_code", st->exit_code);
		else
			jw_raw(w, "exit_code", "null");
		jw_i64(w, "start_ns", st ? st->start_ns : 0);
		jw_i64(w, "end_ns", st ? st->end_ns : 0);
		jw_bytes(w, false, s->op[IOACCT_OP_READ].bytes);
		jw_bytes(w, true, s->op[IOACCT_OP_WRITE].bytes);
		jw_u64(w, "reads", s->op[IOACCT_OP_READ].calls);
		jw_u64(w, "writes", s->op[IOACCT_OP_WRITE].calls);
		jw_u64(w, "meta_ops", s->meta_calls);
		jw_u64(w, "errors", s->errors);
		jw_u64(w, "real_errors", ioacct_report_real_errors(s->errors, s->errclass));
		err_classes(w, s->errclass, s->unclassified);
		jw_u64(w, "time_ns", s->ns);
		ops(w, s->op);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/* A job of several nodes from the cluster store: each node's own totals; none else. */
static void nodes(struct jw *w, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;

	if (jd->nnodes == 0)
		return;
	jw_key(w, "nodes");
	jw_open(w, '[', false);
	for (size_t i = 0; i < jd->nnodes; i++) {
		const struct ioacct_node_part *p = &jd->nodes[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "node", p->node);
		jw_i64(w, "start_ns", p->start_ns);
		jw_bytes(w, false, p->read_bytes);
		jw_bytes(w, true, p->write_bytes);
		jw_u64(w, "reads", p->reads);
		jw_u64(w, "writes", p->writes);
		jw_u64(w, "time_ns", p->ns);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/*
 * A merged report written without some nodes (they sent nothing within
 * missing_after_s of the first): their names; the key only then.
 */
static void missing_nodes(struct jw *w, const struct ioacct_report *r)
{
	const char *p = r->jd->missing_nodes;
	char name[IOACCT_NAME_MAX];

	if (!*p)
		return;
	jw_key(w, "missing_nodes");
	jw_open(w, '[', true);
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			jw_sep(w);
			r_json_str(w->f, name);
		}
		p += n;
		p += strspn(p, ",");
	}
	jw_close(w, ']');
	jw_u64(w, "missing_after_s", r->jd->missing_after_s);
}

/* A file's most common access sizes (POSIX_ACCESS1..4), most common first: [{size, count}]. */
static void access_sizes(struct jw *w, const struct ioacct_file *f)
{
	jw_key(w, "access_sizes");
	jw_open(w, '[', true);
	for (unsigned int i = 0; i < IOACCT_FILE_ACCESSES && f->access_count[i]; i++) {
		jw_sep(w);
		jw_open(w, '{', true);
		jw_u64(w, "size", f->access[i]);
		jw_u64(w, "count", f->access_count[i]);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/*
 * A record's node, in a job of several nodes (its part's: two nodes' records
 * may share all else, pids being a node's numbers): none else, as before.
 */
static void record_node(struct jw *w, const struct ioacct_jobdata *jd, uint32_t part)
{
	if (part < jd->nnodes)
		jw_str(w, "node", jd->nodes[part].node);
}

/* One per-file record (issue 26), every counter of struct ioacct_file. */
static void file_record(struct jw *w, const struct ioacct_report *r, const struct ioacct_file *f)
{
	const struct ioacct_report_mount *m = ioacct_report_file_mount(r, f->mnt_id);
	bool other = ioacct_file_is_other(f);
	char name[24];

	jw_sep(w);
	jw_open(w, '{', false);
	jw_str(w, "step", ioacct_step_name(f->step_id, name, sizeof(name)));
	jw_u64(w, "step_id", f->step_id);
	jw_i64(w, "rank", f->rank);
	record_node(w, r->jd, f->part);
	jw_str(w, "mount", m ? m->path : NULL);
	jw_u64(w, "mnt_id", f->mnt_id);
	jw_u64(w, "dev", f->dev);
	jw_u64(w, "ino", f->ino);
	jw_u64(w, "gen", f->gen);
	jw_str(w, "path", other || !f->path[0] ? NULL : f->path);
	jw_raw(w, "other_files", other ? "true" : "false");
	jw_u64(w, "opens", f->opens);
	jw_u64(w, "reads", f->reads);
	jw_u64(w, "writes", f->writes);
	jw_u64(w, "stats", f->stats);
	jw_u64(w, "fsyncs", f->fsyncs);
	jw_u64(w, "seeks", f->seeks);
	jw_u64(w, "bytes_read", f->bytes_read);
	jw_u64(w, "bytes_written", f->bytes_written);
	jw_u64(w, "read_time_ns", f->read_ns);
	jw_u64(w, "write_time_ns", f->write_ns);
	jw_u64(w, "meta_time_ns", f->meta_ns);
	jw_i64(w, "max_byte_read", f->max_byte_read);
	jw_i64(w, "max_byte_written", f->max_byte_written);
	jw_u64(w, "seq_reads", f->seq_reads);
	jw_u64(w, "seq_writes", f->seq_writes);
	jw_u64(w, "consec_reads", f->consec_reads);
	jw_u64(w, "consec_writes", f->consec_writes);
	jw_i64(w, "first_read_ns", f->first_read_ns);
	jw_i64(w, "last_read_ns", f->last_read_ns);
	jw_i64(w, "first_write_ns", f->first_write_ns);
	jw_i64(w, "last_write_ns", f->last_write_ns);
	size_bins(w, "read_sizes", f->size_read);
	size_bins(w, "write_sizes", f->size_written);
	/* The mount's name for the same quantity; "mmap_bytes" as version 2 named it. */
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "mmap_bytes" : "mmap_read_bytes";

		if (r->files_mmap)
			jw_u64(w, key, f->mmap_bytes);
		else
			jw_raw(w, key, "null");
	}
	if (r->files_miss)
		jw_u64(w, "cache_miss_bytes", f->cache_miss_bytes);
	else
		jw_raw(w, "cache_miss_bytes", "null");
	jw_u64(w, "rw_switches", f->rw_switches);
	access_sizes(w, f);
	jw_close(w, '}');
}

/*
 * The HDF5 part (issue 39): per file, what its datasets asked for beside its
 * POSIX bytes; every record (Darshan's H5F and H5D), named as Darshan names
 * them; null when not read.
 */
static void hdf5(struct jw *w, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	char name[24];

	if (!jd->h5_loaded) {
		jw_raw(w, "hdf5", "null");
		return;
	}
	jw_key(w, "hdf5");
	jw_open(w, '{', false);
	jw_u64(w, "nrecords", jd->nh5);
	jw_key(w, "files");
	jw_open(w, '[', false);
	for (size_t i = 0; i < r->nh5_files; i++) {
		const struct ioacct_report_h5_file *x = &r->h5_files[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "name", x->name);
		jw_u64(w, "dataset_records", x->ndatasets);
		jw_u64(w, "bytes_read", x->bytes_read);
		jw_u64(w, "bytes_written", x->bytes_written);
		jw_raw(w, "bytes_read_exact", x->unsized_reads ? "false" : "true");
		jw_raw(w, "bytes_written_exact", x->unsized_writes ? "false" : "true");
		jw_raw(w, "posix_records", x->posix_found ? "true" : "false");
		jw_u64(w, "posix_bytes_read", x->posix_read);
		jw_u64(w, "posix_bytes_written", x->posix_written);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_key(w, "records");
	jw_open(w, '[', false);
	for (size_t i = 0; i < jd->nh5; i++) {
		const struct ioacct_h5rec *h = &jd->h5[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "module", h->kind == IOACCT_H5REC_DATASET ? "H5D" : "H5F");
		jw_str(w, "step", ioacct_step_name(h->step_id, name, sizeof(name)));
		jw_u64(w, "step_id", h->step_id);
		jw_i64(w, "rank", h->rank);
		record_node(w, jd, h->part);
		jw_u64(w, "pid", h->pid);
		jw_str(w, "name", h->name);
#define H5_JSON(field) jw_u64(w, #field, h->field);
		IOACCT_H5_COUNTERS(H5_JSON)
#undef H5_JSON
		jw_raw(w, "bytes_read_exact", h->unsized_reads ? "false" : "true");
		jw_raw(w, "bytes_written_exact", h->unsized_writes ? "false" : "true");
		size_bins(w, "read_sizes", h->size_read);
		size_bins(w, "write_sizes", h->size_written);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

/* The MPI-IO counters (issue 27) of a record or a sum; bytes_* leave out unsized calls'. */
static void mpiio_counters(struct jw *w, const struct ioacct_mpiio *m)
{
#define MPIIO_JSON(name) jw_u64(w, #name, m->name);
	IOACCT_MPIIO_COUNTERS(MPIIO_JSON)
#undef MPIIO_JSON
	/* Bytes exact only when every call's datatype size was read. */
	jw_raw(w, "bytes_read_exact", m->unsized_reads ? "false" : "true");
	jw_raw(w, "bytes_written_exact", m->unsized_writes ? "false" : "true");
}

/* POSIX bytes of the same file(s), and MPI-IO bytes over them (null: none). */
static void mpiio_posix(struct jw *w, const struct ioacct_report_mpiio_file *x)
{
	double q = ioacct_report_mpiio_ratio(x);

	jw_raw(w, "posix_records", x->posix_found ? "true" : "false");
	jw_u64(w, "posix_bytes_read", x->posix_read);
	jw_u64(w, "posix_bytes_written", x->posix_written);
	if (q < 0) {
		jw_raw(w, "mpiio_posix_ratio", "null");
		return;
	}
	jw_key(w, "mpiio_posix_ratio");
	fprintf(w->f, "%.6f", q);
}

/* The MPI-IO part (issue 27): totals, per file, every record; null when not read. */
static void mpiio(struct jw *w, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	char name[24];

	if (!jd->mpiio_loaded) {
		jw_raw(w, "mpiio", "null");
		return;
	}
	jw_key(w, "mpiio");
	jw_open(w, '{', false);
	jw_u64(w, "nrecords", jd->nmpiio);
	mpiio_counters(w, &r->mpiio_all.sum);
	mpiio_posix(w, &r->mpiio_all);
	jw_key(w, "files");
	jw_open(w, '[', false);
	for (size_t i = 0; i < r->nmpiio_files; i++) {
		const struct ioacct_report_mpiio_file *x = &r->mpiio_files[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "path", x->sum.path);
		jw_u64(w, "nrecords", x->nranks);
		mpiio_counters(w, &x->sum);
		mpiio_posix(w, x);
		size_bins(w, "read_sizes", x->sum.size_read);
		size_bins(w, "write_sizes", x->sum.size_written);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_key(w, "records");
	jw_open(w, '[', false);
	for (size_t i = 0; i < jd->nmpiio; i++) {
		const struct ioacct_mpiio *m = &jd->mpiio[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "step", ioacct_step_name(m->step_id, name, sizeof(name)));
		jw_u64(w, "step_id", m->step_id);
		jw_i64(w, "rank", m->rank);
		record_node(w, jd, m->part);
		jw_u64(w, "pid", m->pid);
		jw_str(w, "path", m->path);
		mpiio_counters(w, m);
		size_bins(w, "read_sizes", m->size_read);
		size_bins(w, "write_sizes", m->size_written);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

/* The per-file part: partial or not, and every record (not only the top files). */
static void files(struct jw *w, const struct ioacct_report *r)
{
	/* Off (file_records = no): no records were kept, which is not "no files". */
	if (ioacct_probe_files_off(r->jd->job.probe_mode)) {
		jw_raw(w, "file_records", "false");
		jw_str(w, "files_note", IOACCT_FILES_OFF_NOTE);
		jw_raw(w, "files_partial", "null");
		jw_raw(w, "other_files_calls", "null");
		jw_raw(w, "other_files_bytes", "null");
		jw_raw(w, "files", "null");
		return;
	}
	jw_raw(w, "file_records", "true");
	/* Not known (a job read through ioacctd's socket, or an old store): null, not "none". */
	if (!r->jd->files_loaded) {
		jw_raw(w, "file_records", "null");
		jw_raw(w, "files_partial", "null");
		jw_raw(w, "other_files_calls", "null");
		jw_raw(w, "other_files_bytes", "null");
		jw_raw(w, "files", "null");
		return;
	}
	jw_raw(w, "files_partial", r->files_partial ? "true" : "false");
	jw_u64(w, "other_files_calls", r->other_calls);
	jw_u64(w, "other_files_bytes", r->other_bytes);
	jw_key(w, "files");
	jw_open(w, '[', false);
	for (size_t i = 0; i < r->nrecords; i++)
		file_record(w, r, r->records[i]);
	jw_close(w, ']');
}

/*
 * A mount's RPCs (issue 40) per procedure, keyed by its name: mountstats'
 * counters (sums over the calls), its program and version; null when the
 * job's RPC rows were not read (a store or daemon older than them).
 */
static void rpc_procs(struct jw *w, const char *key, const struct ioacct_report_rpc *p, size_t n,
		      bool loaded)
{
	if (!loaded) {
		jw_raw(w, key, "null");
		return;
	}
	jw_key(w, key);
	jw_open(w, '{', false);
	for (size_t i = 0; i < n; i++) {
		const struct ioacct_rpc *s = &p[i].sum;

		jw_key(w, p[i].key);
		jw_open(w, '{', true);
#define RPC_JSON(name) jw_u64(w, #name, s->name);
		IOACCT_RPC_COUNTERS(RPC_JSON)
#undef RPC_JSON
		jw_u64(w, "program", s->prog);
		jw_u64(w, "version", s->vers);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

/* The job's own RPC rows (issue 40) of the report's mounts, per step, procedure and bin. */
static void rpc_series(struct jw *w, const struct ioacct_report *r)
{
	const struct ioacct_jobdata *jd = r->jd;
	char name[24];

	if (!jd->rpc_loaded) {
		jw_raw(w, "rpc_series", "null");
		return;
	}
	jw_key(w, "rpc_series");
	jw_open(w, '[', false);
	for (size_t i = 0; i < jd->nrpc; i++) {
		const struct ioacct_rpc *x = &jd->rpc[i];
		const struct ioacct_report_mount *m = ioacct_report_file_mount(r, x->mnt_id);

		if (!m || (x->flags & IOACCT_RPC_UNATTRIBUTED))
			continue;
		jw_sep(w);
		jw_open(w, '{', true);
		jw_str(w, "step", ioacct_step_name(x->step_id, name, sizeof(name)));
		jw_str(w, "mount", m->path);
		jw_str(w, "proc", x->name);
		jw_u64(w, "bin", x->bin);
		jw_u64(w, "calls", x->calls);
		jw_u64(w, "bytes_sent", x->bytes_sent);
		jw_u64(w, "bytes_recv", x->bytes_recv);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

enum col { COL_BIN, COL_RB, COL_WB, COL_RC, COL_WC, COL_META };

static void series_col(struct jw *w, const char *key, const struct ioacct_report_mount *m,
		       enum col c)
{
	FILE *f = w->f;

	jw_key(w, key);
	putc_unlocked('[', f);
	for (size_t i = 0; i < m->nbins; i++) {
		const struct ioacct_report_bin *b = &m->bins[i];
		uint64_t v = c == COL_BIN ? b->bin
			   : c == COL_RB  ? b->bytes[IOACCT_DIR_READ]
			   : c == COL_WB  ? b->bytes[IOACCT_DIR_WRITE]
			   : c == COL_RC  ? b->calls[IOACCT_DIR_READ]
			   : c == COL_WC  ? b->calls[IOACCT_DIR_WRITE]
					  : b->meta;

		if (i)
			putc_unlocked(',', f);
		r_u64(f, v);
	}
	putc_unlocked(']', f);
}

static void series(struct jw *w, const struct ioacct_report *r)
{
	jw_key(w, "series");
	jw_open(w, '{', false);
	jw_u64(w, "bin_width_ns", r->bin_width_ns);
	jw_u64(w, "nbins", r->nbins);
	jw_key(w, "mounts");
	jw_open(w, '[', false);
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "mount", m->path);
		series_col(w, "bin", m, COL_BIN);
		series_col(w, "bytes_read", m, COL_RB);
		series_col(w, "bytes_written", m, COL_WB);
		series_col(w, "reads", m, COL_RC);
		series_col(w, "writes", m, COL_WC);
		series_col(w, "meta_ops", m, COL_META);
		/* Version 2's names of the first two, for one more version. */
		series_col(w, "read_bytes", m, COL_RB);
		series_col(w, "write_bytes", m, COL_WB);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void values(struct jw *w, const char *key, const struct ioacct_advice_value *v, size_t n)
{
	jw_key(w, key);
	jw_open(w, '{', true);
	for (size_t i = 0; i < n; i++) {
		if (v[i].is_int)
			jw_u64(w, v[i].name, v[i].u);
		else
			jw_dbl(w, v[i].name, v[i].d);
		/* Two page-cache rules named it read_bytes in version 2: kept one more version. */
		if (!strcmp(v[i].name, "bytes_read") && v[i].is_int)
			jw_u64(w, "read_bytes", v[i].u);
	}
	jw_close(w, '}');
}

static void advice(struct jw *w, const struct ioacct_report *r)
{
	jw_key(w, "advice");
	jw_open(w, '[', false);
	for (size_t i = 0; i < r->nadvice; i++) {
		const struct ioacct_advice *a = &r->advice[i];

		jw_sep(w);
		jw_open(w, '{', false);
		jw_str(w, "level", ioacct_advice_level_name(a->level));
		jw_str(w, "rule", a->rule);
		jw_str(w, "mount", a->mount ? a->mount->path : NULL);
		jw_str(w, "direction", a->dir >= 0 ? ioacct_dir_name((unsigned int)a->dir) : NULL);
		jw_str(w, "message", a->message);
		jw_str(w, "suggestion", a->suggestion);
		values(w, "values", a->values, a->nvalues);
		values(w, "thresholds", a->thresholds, a->nthresholds);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

int ioacct_render_json(FILE *f, const struct ioacct_report *r)
{
	bool cache = ioacct_probe_has_view(r->jd->job.probe_mode, "cache");
	bool mmap = !ioacct_probe_mmap_unmeasured(r->jd->job.probe_mode);
	struct jw w = { .f = f };

	jw_open(&w, '{', false);
	job(&w, r);
	jw_key(&w, "totals");
	jw_open(&w, '{', false);
	mount_body(&w, &r->all, false, cache, mmap);
	jw_close(&w, '}');
	jw_key(&w, "mounts");
	jw_open(&w, '[', false);
	for (size_t i = 0; i < r->nmounts; i++) {
		const struct ioacct_report_mount *m = &r->mounts[i];

		jw_sep(&w);
		jw_open(&w, '{', false);
		jw_str(&w, "mount", m->path);
		jw_u64(&w, "mnt_id", m->mnt_id);
		jw_str(&w, "fs_type", m->fstype);
		jw_str(&w, "source", m->source);
		jw_str(&w, "kind", ioacct_fs_kind_name(m->kind));
		mount_body(&w, m, true, cache, mmap);
		rpc_procs(&w, "rpc", m->rpc, m->nrpc, r->jd->rpc_loaded);
		rpc_procs(&w, "rpc_unattributed", m->rpc_unattr, m->nrpc_unattr, r->jd->rpc_loaded);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	steps(&w, r);
	nodes(&w, r);
	missing_nodes(&w, r);
	files(&w, r);
	mpiio(&w, r);
	hdf5(&w, r);
	series(&w, r);
	rpc_series(&w, r);
	advice(&w, r);
	jw_close(&w, '}');
	putc_unlocked('\n', f);
	return r_finish(f);
}

int ioacct_render_files_json(FILE *f, const struct ioacct_report *r)
{
	struct jw w = { .f = f };

	jw_open(&w, '{', false);
	jw_u64(&w, "schema_version", IOACCT_REPORT_VERSION);
	jw_u64(&w, "job_id", r->jd->job.job_id);
	jw_str(&w, "cluster", r->jd->job.cluster);
	files(&w, r);
	jw_close(&w, '}');
	putc_unlocked('\n', f);
	return r_finish(f);
}
