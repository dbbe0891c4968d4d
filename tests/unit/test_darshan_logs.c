// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader (lib/darshan/darshan.c) against Darshan's own tool: for every log in
 * ../shared/darshan-logs/ (beside the source tree; IOACCT_DARSHAN_LOGS
 * overrides), what darshan-parser 3.5.0 printed in expected/:
 *   <name>.total.txt   (darshan-parser --total): the job lines, the size and
 *                      version of every region, the mount table, and every
 *                      total_<COUNTER> line of POSIX, MPI-IO and STDIO,
 *                      compared as text, floats as %f prints them;
 *   <name>.parser.txt  (darshan-parser, when present): every record line of
 *                      POSIX, MPI-IO, H5F, H5D (with its H5D_FILE_REC_ID),
 *                      STDIO and HEATMAP, file name, mount point and
 *                      file-system type included.
 * The logs are never copied into the project. Exit 77 when the folder is
 * not there.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "darshan.h"

static char logs_dir[4096];

struct lines {
	char **v;
	size_t n;
};

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* The file's lines without their newline; false when it is not there. */
static bool lines_read(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	memset(l, 0, sizeof(*l));
	if (!f)
		return false;
	while ((n = getline(&line, &cap, f)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
		assert_non_null(l->v);
		l->v[l->n++] = strdup(line);
	}
	free(line);
	fclose(f);
	return true;
}

static void lines_add(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void lines_add(struct lines *l, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	assert_true(vasprintf(&s, fmt, ap) >= 0);
	va_end(ap);
	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	assert_non_null(l->v);
	l->v[l->n++] = s;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The sample logs' base names, sorted. */
static size_t list_logs(char names[][256], size_t max)
{
	DIR *d = opendir(logs_dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);

		if (len > 8 && strcmp(e->d_name + len - 8, ".darshan") == 0 && len - 8 < 256) {
			memcpy(names[n], e->d_name, len - 8);
			names[n++][len - 8] = '\0';
		}
	}
	closedir(d);
	qsort(names, n, 256, (int (*)(const void *, const void *))strcmp);
	return n;
}

static struct ioacct_darshan_log *read_log(const char *name)
{
	char path[4400], err[1024];
	struct ioacct_darshan_log *log;

	snprintf(path, sizeof(path), "%s/%s.darshan", logs_dir, name);
	log = ioacct_darshan_read(path, err, sizeof(err));
	if (!log)
		fail_msg("%s", err);
	return log;
}

/* The kind a counter name belongs to, by its prefix. */
static int kind_of(const char *counter)
{
	if (starts(counter, "POSIX_"))
		return IOACCT_DARSHAN_POSIX;
	if (starts(counter, "MPIIO_"))
		return IOACCT_DARSHAN_MPIIO;
	if (starts(counter, "STDIO_"))
		return IOACCT_DARSHAN_STDIO;
	return -1;
}

/* darshan-parser's header lines, from our reading of the log. */
static void header_lines(const struct ioacct_darshan_log *log, struct lines *out)
{
	char meta[IOACCT_DARSHAN_METADATA_LEN], *save = NULL;
	double run;

	lines_add(out, "# darshan log version: %s", log->version);
	lines_add(out, "# compression method: %s",
		  log->comp == IOACCT_DARSHAN_ZLIB ? "ZLIB" : "NONE");
	lines_add(out, "# exe: %s", log->exe);
	lines_add(out, "# uid: %" PRId64, log->uid);
	lines_add(out, "# jobid: %" PRId64, log->jobid);
	lines_add(out, "# start_time: %" PRId64, log->start_sec);
	lines_add(out, "# end_time: %" PRId64, log->end_sec);
	lines_add(out, "# nprocs: %" PRId64, log->nprocs);
	if (log->minor >= 41)
		run = ((double)log->end_sec + log->end_nsec / 1e9) -
		      ((double)log->start_sec + log->start_nsec / 1e9);
	else
		run = (double)(log->end_sec - log->start_sec + 1);
	lines_add(out, "# run time: %.4f", run);
	memcpy(meta, log->metadata, sizeof(meta));
	for (char *t = strtok_r(meta, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(t, '=');

		if (!eq)
			continue;
		*eq = '\0';
		lines_add(out, "# metadata: %s = %s", t, eq + 1);
	}
	lines_add(out, "# job data: %" PRIu64 " bytes (compressed)", log->job_region.len);
	lines_add(out, "# record table: %" PRIu64 " bytes (compressed)", log->name_region.len);
	for (unsigned int id = 0; id < IOACCT_DARSHAN_MAX_MODS; id++)
		if (log->regions[id].len)
			lines_add(out, "# %s module: %" PRIu64 " bytes (compressed), ver=%u",
				  ioacct_darshan_mod_name(id), log->regions[id].len,
				  log->regions[id].version);
}

/* The mount table as darshan-parser orders it: longest mount point first, stable. */
static size_t parser_mounts(const struct ioacct_darshan_log *log, size_t *order)
{
	for (size_t i = 0; i < log->nmounts; i++)
		order[i] = i;
	for (size_t i = 1; i < log->nmounts; i++)
		for (size_t j = i; j > 0 && strlen(log->mounts[order[j]].path) >
						   strlen(log->mounts[order[j - 1]].path); j--) {
			size_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	return log->nmounts;
}

static bool header_line_kind(const char *s)
{
	static const char *const keys[] = {
		"# darshan log version:", "# compression method:", "# exe:", "# uid:", "# jobid:",
		"# start_time:", "# end_time:", "# nprocs:", "# run time:", "# metadata:",
		"# job data:", "# record table:",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (starts(s, keys[i]))
			return true;
	return strstr(s, " module: ") && strstr(s, "bytes (compressed)") && starts(s, "# ");
}

static void check_totals(const char *name)
{
	struct ioacct_darshan_log *log = read_log(name);
	struct ioacct_darshan_record tot[IOACCT_DARSHAN_NKINDS];
	size_t seen[IOACCT_DARSHAN_NKINDS] = { 0 }, mi = 0, *order;
	struct lines exp, ours = { 0 };
	char path[4400], buf[128];

	snprintf(path, sizeof(path), "%s/expected/%s.total.txt", logs_dir, name);
	if (!lines_read(path, &exp))
		fail_msg("%s is missing", path);
	for (int k = 0; k < IOACCT_DARSHAN_NKINDS; k++)
		ioacct_darshan_total(log, (enum ioacct_darshan_kind)k, &tot[k]);
	header_lines(log, &ours);
	order = calloc(log->nmounts + 1, sizeof(*order));
	assert_non_null(order);
	parser_mounts(log, order);

	/* Every header line darshan-parser printed, ours the same, in the same order. */
	for (size_t i = 0, o = 0; i < exp.n; i++) {
		const char *e = exp.v[i];

		if (starts(e, "# mount entry:\t")) {
			if (mi >= log->nmounts)
				fail_msg("%s: extra mount line '%s'", name, e);
			snprintf(path, sizeof(path), "# mount entry:\t%s\t%s",
				 log->mounts[order[mi]].path, log->mounts[order[mi]].fstype);
			assert_string_equal(e, path);
			mi++;
			continue;
		}
		if (header_line_kind(e)) {
			if (o >= ours.n)
				fail_msg("%s: no line of ours for '%s'", name, e);
			assert_string_equal(ours.v[o], e);
			o++;
			continue;
		}
		if (!starts(e, "total_"))
			continue;
		{
			char cname[96];
			const char *colon = strchr(e, ':');
			int kind, idx;
			bool is_float = false;

			assert_non_null(colon);
			snprintf(cname, sizeof(cname), "%.*s", (int)(colon - e - 6), e + 6);
			kind = kind_of(cname);
			if (kind < 0)
				continue;
			idx = ioacct_darshan_counter_index((enum ioacct_darshan_kind)kind, cname,
							   &is_float);
			if (idx < 0)
				fail_msg("%s: unknown counter %s", name, cname);
			if (is_float)
				snprintf(buf, sizeof(buf), "total_%s: %f", cname, tot[kind].fcounters[idx]);
			else
				snprintf(buf, sizeof(buf), "total_%s: %" PRId64, cname,
					 tot[kind].counters[idx]);
			assert_string_equal(buf, e);
			seen[kind]++;
		}
	}
	assert_int_equal(mi, log->nmounts);
	/* Every counter of every module with records, none left out (no totals of H5F, H5D). */
	for (int k = 0; k <= IOACCT_DARSHAN_STDIO; k++) {
		const struct ioacct_darshan_modinfo *m = ioacct_darshan_modinfo((enum ioacct_darshan_kind)k);

		if (log->nrecs[k])
			assert_int_equal(seen[k], m->ncounters + m->nfcounters);
		else
			assert_int_equal(seen[k], 0);
	}
	printf("# %s: totals equal darshan-parser's (POSIX %zu, MPI-IO %zu, STDIO %zu records)\n",
	       name, log->nrecs[0], log->nrecs[1], log->nrecs[2]);
	free(order);
	lines_free(&exp);
	lines_free(&ours);
	ioacct_darshan_free(log);
}

/* darshan-parser's mount of a record: the first of the sorted table that prefixes the name. */
static void parser_mount_of(const struct ioacct_darshan_log *log, const size_t *order,
			    const char *name, const char **mnt, const char **fs)
{
	*mnt = "UNKNOWN";
	*fs = "UNKNOWN";
	if (!name)
		return;
	for (size_t i = 0; i < log->nmounts; i++) {
		const struct ioacct_darshan_mount *m = &log->mounts[order[i]];

		if (strncmp(m->path, name, strlen(m->path)) == 0) {
			*mnt = m->path;
			*fs = m->fstype;
			return;
		}
	}
}

static void record_lines(const struct ioacct_darshan_log *log, const size_t *order,
			 struct lines *out)
{
	/* darshan-parser's order: by module id. */
	static const enum ioacct_darshan_kind kinds[] = {
		IOACCT_DARSHAN_POSIX, IOACCT_DARSHAN_MPIIO, IOACCT_DARSHAN_H5F, IOACCT_DARSHAN_H5D,
		IOACCT_DARSHAN_STDIO,
	};

	for (size_t ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++) {
		enum ioacct_darshan_kind k = kinds[ki];
		const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(k);

		for (size_t i = 0; i < log->nrecs[k]; i++) {
			const struct ioacct_darshan_record *r = &log->recs[k][i];
			const char *name = ioacct_darshan_name_of(log, r->id), *mnt, *fs;

			parser_mount_of(log, order, name, &mnt, &fs);
			name = name ? name : "(null)";
			for (size_t c = 0; c < mi->ncounters; c++) {
				if (k == IOACCT_DARSHAN_POSIX && c == 12)   /* RENAMED_FROM is unsigned */
					lines_add(out, "%s\t%" PRId64 "\t%" PRIu64 "\t%s\t%" PRIu64 "\t%s\t%s\t%s",
						  mi->name, r->rank, r->id, mi->counters[c],
						  (uint64_t)r->counters[c], name, mnt, fs);
				else
					lines_add(out, "%s\t%" PRId64 "\t%" PRIu64 "\t%s\t%" PRId64 "\t%s\t%s\t%s",
						  mi->name, r->rank, r->id, mi->counters[c],
						  r->counters[c], name, mnt, fs);
			}
			for (size_t c = 0; c < mi->nfcounters; c++)
				lines_add(out, "%s\t%" PRId64 "\t%" PRIu64 "\t%s\t%f\t%s\t%s\t%s", mi->name,
					  r->rank, r->id, mi->fcounters[c], r->fcounters[c], name, mnt, fs);
			if (mi->file_id)
				lines_add(out, "%s\t%" PRId64 "\t%" PRIu64 "\tH5D_FILE_REC_ID\t%" PRIu64
					  "\t%s\t%s\t%s", mi->name, r->rank, r->id, r->file_id, name, mnt,
					  fs);
		}
	}
	for (size_t i = 0; i < log->nheatmaps; i++) {
		const struct ioacct_darshan_heatmap *h = &log->heatmaps[i];
		const char *name = ioacct_darshan_name_of(log, h->id), *mnt, *fs;

		parser_mount_of(log, order, name, &mnt, &fs);
		name = name ? name : "(null)";
		lines_add(out, "HEATMAP\t%" PRId64 "\t%" PRIu64 "\tHEATMAP_F_BIN_WIDTH_SECONDS\t%f\t%s\t%s\t%s",
			  h->rank, h->id, h->bin_width, name, mnt, fs);
		for (uint64_t b = 0; b < h->nbins; b++)
			lines_add(out, "HEATMAP\t%" PRId64 "\t%" PRIu64 "\tHEATMAP_READ_BIN_%" PRIu64 "\t%" PRId64
				  "\t%s\t%s\t%s", h->rank, h->id, b, h->read_bins[b], name, mnt, fs);
		for (uint64_t b = 0; b < h->nbins; b++)
			lines_add(out, "HEATMAP\t%" PRId64 "\t%" PRIu64 "\tHEATMAP_WRITE_BIN_%" PRIu64 "\t%" PRId64
				  "\t%s\t%s\t%s", h->rank, h->id, b, h->write_bins[b], name, mnt, fs);
	}
}

static bool read_module_line(const char *s)
{
	return starts(s, "POSIX\t") || starts(s, "MPI-IO\t") || starts(s, "STDIO\t") ||
	       starts(s, "H5F\t") || starts(s, "H5D\t") || starts(s, "HEATMAP\t");
}

static bool check_records(const char *name)
{
	struct lines exp, ours = { 0 };
	struct ioacct_darshan_log *log;
	char path[4400];
	size_t *order, o = 0;

	snprintf(path, sizeof(path), "%s/expected/%s.parser.txt", logs_dir, name);
	if (!lines_read(path, &exp))
		return false;
	log = read_log(name);
	order = calloc(log->nmounts + 1, sizeof(*order));
	assert_non_null(order);
	parser_mounts(log, order);
	record_lines(log, order, &ours);
	for (size_t i = 0; i < exp.n; i++) {
		if (!read_module_line(exp.v[i]))
			continue;
		if (o >= ours.n)
			fail_msg("%s: darshan-parser has more record lines than ours: '%s'", name, exp.v[i]);
		assert_string_equal(ours.v[o], exp.v[i]);
		o++;
	}
	assert_int_equal(o, ours.n);
	printf("# %s: %zu record lines equal darshan-parser's\n", name, o);
	free(order);
	lines_free(&exp);
	lines_free(&ours);
	ioacct_darshan_free(log);
	return true;
}

static void test_totals(void **state)
{
	char names[64][256];
	size_t n = list_logs(names, 64);

	(void)state;
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++)
		check_totals(names[i]);
}

static void test_records(void **state)
{
	char names[64][256];
	size_t n = list_logs(names, 64), checked = 0;

	(void)state;
	for (size_t i = 0; i < n; i++)
		checked += check_records(names[i]);
	assert_true(checked >= 1);
}

/* The record ids are Darshan's hash of the names (except in obfuscated logs). */
static void test_record_ids(void **state)
{
	char names[64][256];
	size_t n = list_logs(names, 64), hashed = 0;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		struct ioacct_darshan_log *log = read_log(names[i]);
		size_t match = 0;

		for (size_t k = 0; k < log->nnames; k++)
			match += ioacct_darshan_hash(log->names[k].name, strlen(log->names[k].name), 0) ==
				 log->names[k].id;
		/* noposixopens.darshan is obfuscated: names replaced, ids kept. */
		if (match == log->nnames)
			hashed++;
		ioacct_darshan_free(log);
	}
	assert_true(hashed + 1 >= n);
}

/*
 * The DXT sample log (Darshan 3.2, 16 ranks) read with its trace: every
 * DXT_POSIX record names a file of the name table and holds exactly the
 * writes and reads its POSIX record counts, bytes included, segments in
 * time order and within the job. Pins the record layout to real Darshan.
 */
static void test_dxt_sample(void **state)
{
	struct ioacct_darshan_log *log = read_log("sample-dxt-simple");
	int64_t segs_w = 0, bytes_w = 0;

	(void)state;
	assert_int_equal(log->regions[IOACCT_DARSHAN_MOD_DXT_POSIX].version, 1);
	assert_true(log->ndxt >= 1);
	for (size_t i = 0; i < log->ndxt; i++) {
		const struct ioacct_darshan_dxt *d = &log->dxt[i];
		const struct ioacct_darshan_record *p = NULL;
		int64_t bw = 0, br = 0;

		assert_non_null(ioacct_darshan_name_of(log, d->id));
		assert_true(d->hostname[0] != '\0');
		for (size_t k = 0; k < log->nrecs[IOACCT_DARSHAN_POSIX]; k++)
			if (log->recs[IOACCT_DARSHAN_POSIX][k].id == d->id &&
			    log->recs[IOACCT_DARSHAN_POSIX][k].rank == d->rank)
				p = &log->recs[IOACCT_DARSHAN_POSIX][k];
		assert_non_null(p);
		assert_int_equal(d->nwrites, p->counters[IOACCT_DARSHAN_POSIX_WRITES]);
		assert_int_equal(d->nreads, p->counters[IOACCT_DARSHAN_POSIX_READS]);
		for (uint64_t s = 0; s < d->nwrites; s++) {
			assert_true(d->writes[s].length >= 0 && d->writes[s].offset >= 0);
			assert_true(d->writes[s].start >= 0 && d->writes[s].end >= d->writes[s].start);
			bw += d->writes[s].length;
		}
		for (uint64_t s = 0; s < d->nreads; s++)
			br += d->reads[s].length;
		assert_int_equal(bw, p->counters[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN]);
		assert_int_equal(br, p->counters[IOACCT_DARSHAN_POSIX_BYTES_READ]);
		segs_w += (int64_t)d->nwrites;
		bytes_w += bw;
	}
	/* darshan-parser --total of this log: POSIX_WRITES 2, POSIX_BYTES_WRITTEN 4040. */
	assert_int_equal(segs_w, 2);
	assert_int_equal(bytes_w, 4040);
	ioacct_darshan_free(log);

	/* The other sample logs have no trace. */
	log = read_log("sample");
	assert_int_equal(log->ndxt, 0);
	ioacct_darshan_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_record_ids),
		cmocka_unit_test(test_dxt_sample),
	};
	const char *env = getenv("IOACCT_DARSHAN_LOGS");

	snprintf(logs_dir, sizeof(logs_dir), "%s", env && *env ? env : DARSHAN_LOGS_DIR);
	if (access(logs_dir, R_OK) != 0) {
		printf("SKIP: %s not found: the sample Darshan logs live beside the source tree "
		       "(../shared/darshan-logs), not in it\n", logs_dir);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
