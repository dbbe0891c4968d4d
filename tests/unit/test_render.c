// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the renderers (reports/render_*.c) on jobs stored through the
 * real store API in a temporary database and loaded back:
 *   - golden files: the text and JSON reports of a fixed job must equal
 *     tests/unit/golden/report.txt and report.json byte for byte. After an
 *     intended change, regenerate them with
 *         IOACCT_UPDATE_GOLDEN=1 make check TESTS=test_render
 *     (in tests/unit of the build tree) and review the diff;
 *   - the counters the text report prints equal the stored totals exactly,
 *     values above 2^63 included;
 *   - the HTML page is self-contained and has every plot and table;
 *   - a day of 1 s bins stays small and readable; write errors are reported;
 *   - hostile names (control characters, invalid UTF-8, markup) forge no
 *     line in the text, no element in the HTML (issue 24).
 * Times are printed in UTC here (TZ=UTC), as the golden files expect.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "darshan.h"
#include "jobbuild.h"
#include "model.h"
#include "render.h"
#include "report.h"
#include "store.h"
#include "text.h"

#define SEC 1000000000ULL
#define MIB 1048576ULL
#define BIG (1ULL << 63)
#define START_NS 1700000000123456789LL

struct fixture {
	char dir[64];
	char db[128];
	struct ioacct_store *st;
	int64_t key;
};

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");
	char err[512];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_render.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/ioacct.db", f->dir);
	f->st = ioacct_store_open(f->db, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!f->st) {
		fprintf(stderr, "open %s: %s\n", f->db, err);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc;

	ioacct_store_close(f->st);
	rc = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return rc;
}

/* One stored bin: for reads and writes all successful calls in the size bin of their mean. */
static void put(struct fixture *f, uint32_t step, uint32_t mnt, uint32_t op, uint32_t bin,
		uint64_t calls, uint64_t errors, uint64_t bytes, uint64_t ns)
{
	struct ioacct_sample s = { .step_id = step, .mnt_id = mnt, .op = op, .bin = bin };

	s.c.calls = calls;
	s.c.errors = errors;
	s.c.ns = ns;
	if ((op == IOACCT_OP_READ || op == IOACCT_OP_WRITE) && calls > errors) {
		s.c.bytes = bytes;
		s.c.size_hist[ioacct_size_bin(bytes / (calls - errors))] = calls - errors;
	} else if (ioacct_op_kind(op) == IOACCT_OPK_VIEW) {
		s.c.bytes = bytes; /* the page-cache views: bytes as they are, no histogram */
	}
	assert_int_equal(ioacct_store_series_put(f->st, f->key, &s), 0);
}

/* Like put(), with the failed calls per class (notfound, access, space, io, other). */
static void put_cls(struct fixture *f, uint32_t step, uint32_t mnt, uint32_t op, uint32_t bin,
		    uint64_t calls, const uint64_t cls[IOACCT_NR_ERR_CLASSES], uint64_t bytes,
		    uint64_t ns)
{
	struct ioacct_sample s = { .step_id = step, .mnt_id = mnt, .op = op, .bin = bin };

	s.c.calls = calls;
	s.c.ns = ns;
	for (unsigned int k = 0; k < IOACCT_NR_ERR_CLASSES; k++) {
		s.c.errclass[k] = cls[k];
		s.c.errors += cls[k];
	}
	if ((op == IOACCT_OP_READ || op == IOACCT_OP_WRITE) && calls > s.c.errors) {
		s.c.bytes = bytes;
		s.c.size_hist[ioacct_size_bin(bytes / (calls - s.c.errors))] = calls - s.c.errors;
	}
	assert_int_equal(ioacct_store_series_put(f->st, f->key, &s), 0);
}

static void put_step(struct fixture *f, uint32_t id, int64_t start_off, int64_t end_off)
{
	struct ioacct_step s = { .step_id = id };

	s.start_ns = START_NS + start_off;
	s.end_ns = START_NS + end_off;
	ioacct_strlcpy(s.state, "COMPLETED", sizeof(s.state));
	snprintf(s.cgroup, sizeof(s.cgroup), "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_4242/step_%u",
		 id);
	assert_int_equal(ioacct_store_step_put(f->st, f->key, &s), 0);
}

static void put_mount(struct fixture *f, uint32_t id, const char *path, const char *fstype,
		      const char *source)
{
	struct ioacct_mount m = { .mnt_id = id };

	ioacct_strlcpy(m.path, path, sizeof(m.path));
	ioacct_strlcpy(m.fstype, fstype, sizeof(m.fstype));
	ioacct_strlcpy(m.source, source, sizeof(m.source));
	assert_int_equal(ioacct_store_mount_put(f->st, f->key, &m), 0);
}

static void insert_job(struct fixture *f, uint64_t job_id)
{
	struct ioacct_job j = { 0 };

	ioacct_strlcpy(j.cluster, "hpc1", sizeof(j.cluster));
	j.job_id = job_id;
	ioacct_strlcpy(j.node, "node001", sizeof(j.node));
	ioacct_strlcpy(j.source, "slurm", sizeof(j.source));
	j.uid = 1001;
	j.gid = 1001;
	ioacct_strlcpy(j.user, "alice", sizeof(j.user));
	ioacct_strlcpy(j.name, "climate model", sizeof(j.name));
	ioacct_strlcpy(j.workdir, "/scratch/alice/run1", sizeof(j.workdir));
	ioacct_strlcpy(j.cmdline, "srun ./climate --years 3", sizeof(j.cmdline));
	j.has_array = true;
	j.array_job_id = 4240;
	j.array_task_id = 2;
	j.start_ns = START_NS;
	ioacct_strlcpy(j.state, "RUNNING", sizeof(j.state));
	ioacct_strlcpy(j.probe_mode, "tracepoint", sizeof(j.probe_mode));
	j.bin_width_ns = 5 * SEC;
	assert_int_equal(ioacct_store_job_insert(f->st, &j), 0);
	f->key = j.key;
}

static struct ioacct_jobdata *load(struct fixture *f)
{
	struct ioacct_jobdata *jd = NULL;

	assert_int_equal(ioacct_store_job_load(f->st, f->key, &jd), 0);
	return jd;
}

/*
 * The fixed job of the golden files: a batch script and two steps on a shared
 * /scratch, a local /tmp, /proc and a mount missing from the table, 61.5 s in
 * 5 s bins (the last one 1.5 s), with dropped events. Failed calls of every
 * class, and two on the missing mount stored unclassified (as by schema 3).
 */
static struct ioacct_jobdata *golden_job(struct fixture *f)
{
	enum { SCRATCH = 21, TMP = 22, PROC = 40, GONE = 99 };
	const uint32_t batch = IOACCT_STEP_BATCH;

	insert_job(f, 4242);
	put_step(f, batch, 0, 61500000000LL);
	put_step(f, 0, 1200000000LL, 40000000000LL);
	put_step(f, 1, 41000000000LL, 60000000000LL);
	put_mount(f, SCRATCH, "/scratch", "lustre", "10.0.0.1@o2ib:/scratch");
	put_mount(f, TMP, "/tmp", "ext4", "/dev/nvme0n1p1");
	put_mount(f, PROC, "/proc", "proc", "proc");
	for (uint32_t bin = 1; bin <= 6; bin++)
		put(f, 0, SCRATCH, IOACCT_OP_WRITE, bin, 500, 0, 500 * 4096, 50000000 + bin);
	put(f, 0, SCRATCH, IOACCT_OP_READ, 0, 64, 0, 64 * MIB, 80000000);
	put_cls(f, 0, SCRATCH, IOACCT_OP_OPEN, 0, 130, (uint64_t[]){ 3, 2, 0, 0, 0 }, 0, 3000000);
	put(f, 0, SCRATCH, IOACCT_OP_CREATE, 0, 100, 0, 0, 0);
	put_cls(f, 0, SCRATCH, IOACCT_OP_STAT, 0, 400, (uint64_t[]){ 20, 0, 0, 0, 0 }, 0, 1500000);
	put(f, 0, SCRATCH, IOACCT_OP_FSYNC, 7, 12, 0, 0, 90000000);
	put_cls(f, 0, SCRATCH, IOACCT_OP_UNLINK, 7, 3, (uint64_t[]){ 1, 0, 0, 0, 2 }, 0, 30000);
	put(f, 0, GONE, IOACCT_OP_STAT, 3, 2, 2, 0, 4000);
	put(f, 1, SCRATCH, IOACCT_OP_WRITE, 9, 100, 0, 100 * MIB, 400000000);
	put(f, 1, SCRATCH, IOACCT_OP_READ, 10, 10, 0, 10 * MIB, 7000000);
	put(f, batch, TMP, IOACCT_OP_WRITE, 0, 20, 0, 20 * MIB, 60000000);
	put_cls(f, batch, TMP, IOACCT_OP_READ, 12, 21, (uint64_t[]){ 0, 0, 0, 1, 0 }, 20 * MIB,
		9000000);
	put(f, batch, TMP, IOACCT_OP_MKDIR, 0, 2, 0, 0, 20000);
	put(f, batch, TMP, IOACCT_OP_RMDIR, 12, 1, 0, 0, 10000);
	put_cls(f, batch, TMP, IOACCT_OP_RENAME, 12, 4, (uint64_t[]){ 0, 0, 1, 0, 0 }, 0, 40000);
	put(f, batch, PROC, IOACCT_OP_STAT, 0, 7, 0, 0, 7000);
	assert_int_equal(ioacct_store_job_add_dropped(f->st, f->key, 3, 12288), 0);
	assert_int_equal(ioacct_store_job_add_lib_missed(f->st, f->key, 160), 0);
	assert_int_equal(ioacct_store_job_finish(f->st, f->key, START_NS + 61500000000LL,
						 "COMPLETED", 0),
			 0);
	return load(f);
}

/* Renders into memory; the caller frees. */
static char *render(const struct ioacct_jobdata *jd, enum ioacct_render_format fmt, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mf = open_memstream(&buf, &n);

	assert_non_null(mf);
	assert_int_equal(ioacct_render_job(mf, fmt, jd, NULL, NULL), 0);
	assert_int_equal(fclose(mf), 0);
	if (len)
		*len = n;
	return buf;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "re");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* Equal to golden/<name>, or (IOACCT_UPDATE_GOLDEN=1) written there. */
static void golden(const char *name, const char *got, size_t len)
{
	const char *update = getenv("IOACCT_UPDATE_GOLDEN");
	char path[PATH_MAX];
	size_t wlen = 0;
	char *want;

	snprintf(path, sizeof(path), "%s/golden/%s", TEST_SRCDIR, name);
	if (update && strcmp(update, "1") == 0) {
		FILE *fp = fopen(path, "we");

		assert_non_null(fp);
		assert_int_equal(fwrite(got, 1, len, fp), len);
		assert_int_equal(fclose(fp), 0);
		print_message("updated %s\n", path);
		return;
	}
	want = read_file(path, &wlen);
	if (!want)
		fail_msg("%s: %s (IOACCT_UPDATE_GOLDEN=1 writes it)", path, strerror(errno));
	if (wlen != len || memcmp(want, got, len) != 0) {
		size_t i = 0, line = 1;

		while (i < len && i < wlen && want[i] == got[i])
			line += got[i++] == '\n';
		fail_msg("%s differs from the rendering at line %zu (byte %zu); regenerate with "
			 "IOACCT_UPDATE_GOLDEN=1 if the change is intended",
			 path, line, i);
	}
	free(want);
}

static void test_golden_text(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = golden_job(f);
	size_t len;
	char *text = render(jd, IOACCT_RENDER_TEXT, &len);

	golden("report.txt", text, len);
	free(text);
	ioacct_jobdata_free(jd);
}

static void test_golden_json(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = golden_job(f);
	size_t len;
	char *json = render(jd, IOACCT_RENDER_JSON, &len);

	golden("report.json", json, len);
	free(json);
	ioacct_jobdata_free(jd);
}

/* ---- the text's counters are the stored totals ---- */

static const char *const count_name[IOACCT_OP_COUNT] = {
	[IOACCT_OP_READ] = "POSIX_READS",    [IOACCT_OP_WRITE] = "POSIX_WRITES",
	[IOACCT_OP_OPEN] = "POSIX_OPENS",    [IOACCT_OP_CREATE] = "IOACCT_CREATES",
	[IOACCT_OP_MKDIR] = "IOACCT_MKDIRS", [IOACCT_OP_UNLINK] = "IOACCT_UNLINKS",
	[IOACCT_OP_RMDIR] = "IOACCT_RMDIRS", [IOACCT_OP_FSYNC] = "POSIX_FSYNCS",
	[IOACCT_OP_RENAME] = "IOACCT_RENAMES", [IOACCT_OP_STAT] = "POSIX_STATS",
	[IOACCT_OP_MMAP_FAULT] = "IOACCT_MMAP_FAULTS", [IOACCT_OP_CACHE_FILL] = "IOACCT_CACHE_FILLS",
	[IOACCT_OP_READAHEAD] = "IOACCT_READAHEADS", [IOACCT_OP_FADVISE] = "IOACCT_FADVISES",
	[IOACCT_OP_MADVISE] = "IOACCT_MADVISES", [IOACCT_OP_IO_URING_OP] = "IOACCT_IO_URING_OPS",
	[IOACCT_OP_SEEK] = "POSIX_SEEKS",
};
static const char *const upper[IOACCT_OP_COUNT] = {
	"READ", "WRITE", "OPEN", "CREATE", "MKDIR", "UNLINK", "RMDIR", "FSYNC", "RENAME", "STAT",
	"MMAP_FAULT", "CACHE_FILL", "READAHEAD", "FADVISE", "MADVISE", "IO_URING_OP", "SEEK",
};

/* The value of "total_<name>: N" in the section of mount `path`, as printed. */
static uint64_t text_counter(const char *text, const char *path, const char *name)
{
	char head[PATH_MAX + 16], key[96];
	const char *sec, *end, *p;
	char *e;
	uint64_t v;

	snprintf(head, sizeof(head), "\n# mount: %s\t", path);
	sec = strstr(text, head);
	if (!sec)
		fail_msg("no section for %s", path);
	sec += strlen(head);
	end = strstr(sec, "\n\n");
	snprintf(key, sizeof(key), "\ntotal_%s: ", name);
	p = strstr(sec, key);
	if (!p || (end && p > end))
		fail_msg("%s: no %s", path, name);
	p += strlen(key);
	errno = 0;
	v = strtoull(p, &e, 10);
	assert_int_equal(errno, 0);
	assert_true(*e == '\n');
	return v;
}

static void check_text_totals(const struct ioacct_jobdata *jd)
{
	char *text = render(jd, IOACCT_RENDER_TEXT, NULL);
	size_t checked = 0;

	for (size_t m = 0; m < jd->nmounts; m++) {
		const struct ioacct_mount *mnt = &jd->mounts[m];
		struct ioacct_counters sum[IOACCT_OP_COUNT], all = { 0 };
		uint64_t calls = 0;

		for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++) {
			ioacct_samples_sum(jd->totals, jd->ntotals, UINT32_MAX, mnt->mnt_id, op, &sum[op]);
			ioacct_counters_add(&all, &sum[op]);
			calls += sum[op].calls;
		}
		if (calls == 0)
			continue;
		for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++) {
			char name[64];

			snprintf(name, sizeof(name), "IOACCT_%s_ERRORS", upper[op]);
			assert_int_equal(text_counter(text, mnt->path, name), sum[op].errors);
			/* Successful calls plus failed ones: the stored calls, exactly. */
			assert_true(text_counter(text, mnt->path, count_name[op]) + sum[op].errors ==
				    sum[op].calls);
			snprintf(name, sizeof(name), "IOACCT_%s_TIME_NS", upper[op]);
			assert_true(text_counter(text, mnt->path, name) == sum[op].ns);
		}
		assert_true(text_counter(text, mnt->path, "POSIX_BYTES_READ") ==
			    sum[IOACCT_OP_READ].bytes);
		assert_true(text_counter(text, mnt->path, "POSIX_BYTES_WRITTEN") ==
			    sum[IOACCT_OP_WRITE].bytes);
		assert_true(text_counter(text, mnt->path, "IOACCT_ERRORS") == all.errors);
		for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++) {
			char name[64];

			snprintf(name, sizeof(name), "POSIX_SIZE_READ_%s", ioacct_size_bin_name(b));
			assert_true(text_counter(text, mnt->path, name) ==
				    sum[IOACCT_OP_READ].size_hist[b]);
			snprintf(name, sizeof(name), "POSIX_SIZE_WRITE_%s", ioacct_size_bin_name(b));
			assert_true(text_counter(text, mnt->path, name) ==
				    sum[IOACCT_OP_WRITE].size_hist[b]);
		}
		checked++;
	}
	assert_true(checked > 0);
	free(text);
}

static void test_text_totals_exact(void **state)
{
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = golden_job(f);

	check_text_totals(jd);
	ioacct_jobdata_free(jd);
}

/* Counters at and above 2^63 (stored as negative int64) are printed exactly. */
static void test_text_totals_exact_big(void **state)
{
	struct fixture *f = *state;
	struct ioacct_sample s = { .step_id = 0, .mnt_id = 7, .op = IOACCT_OP_WRITE, .bin = 2 };
	struct ioacct_jobdata *jd;
	char *text;

	insert_job(f, 9);
	put_mount(f, 7, "/big", "xfs", "/dev/sdz");
	s.c.bytes = BIG + 12345;
	s.c.calls = BIG + 3;
	s.c.errors = 1;
	s.c.ns = UINT64_MAX - 2;
	for (unsigned int b = 0; b < IOACCT_NR_SIZE_BINS; b++)
		s.c.size_hist[b] = BIG / 16 + b;
	assert_int_equal(ioacct_store_series_put(f->st, f->key, &s), 0);
	s.op = IOACCT_OP_STAT;
	s.c.bytes = 0;
	memset(s.c.size_hist, 0, sizeof(s.c.size_hist));
	s.c.calls = UINT64_MAX;
	s.c.errors = BIG;
	s.c.ns = 1;
	assert_int_equal(ioacct_store_series_put(f->st, f->key, &s), 0);
	assert_int_equal(ioacct_store_job_finish(f->st, f->key, START_NS + 11 * SEC, "COMPLETED", 0),
			 0);
	jd = load(f);
	check_text_totals(jd);
	text = render(jd, IOACCT_RENDER_TEXT, NULL);
	assert_non_null(strstr(text, "\ntotal_POSIX_BYTES_WRITTEN: 9223372036854788153\n"));
	assert_non_null(strstr(text, "\ntotal_POSIX_STATS: 9223372036854775807\n"));
	assert_non_null(strstr(text, "\ntotal_IOACCT_WRITE_TIME_NS: 18446744073709551613\n"));
	free(text);
	ioacct_jobdata_free(jd);
}

/* ---- HTML ---- */

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_html(void **state)
{
	static const char *const ids[] = {
		"id=\"summary\"", "id=\"job-table\"", "id=\"advice\"", "id=\"mounts-table\"",
		"id=\"rates-table\"", "id=\"bw-0\"", "id=\"bw-1\"", "id=\"iops-0\"", "id=\"iops-2\"",
		"id=\"sizes-chart\"", "id=\"sizes-table\"", "id=\"ops-chart\"", "id=\"ops-table\"",
		"id=\"time-chart\"", "id=\"time-table\"", "id=\"steps-table\"", "id=\"series-table\"",
		"id=\"counters\"", "id=\"errors-table\"", "id=\"errors-card\"",
	};
	struct fixture *f = *state;
	struct ioacct_jobdata *jd = golden_job(f);
	char *html = render(jd, IOACCT_RENDER_HTML, NULL);

	assert_true(strncmp(html, "<!DOCTYPE html>\n", 16) == 0);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (!strstr(html, ids[i]))
			fail_msg("the page lacks %s", ids[i]);
	/* Self-contained: no script, nothing loaded. */
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "href="));
	assert_null(strstr(html, "url("));
	assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
	assert_int_equal(count(html, "<table"), count(html, "</table>"));
	assert_int_equal(count(html, "<section"), count(html, "</section>"));
	/* Axes with units, Darshan's size labels, advice levels. */
	assert_non_null(strstr(html, "time since job start (s)"));
	assert_non_null(strstr(html, "MiB/s"));
	assert_non_null(strstr(html, "operations/s"));
	assert_non_null(strstr(html, ">100K-1M<"));
	assert_non_null(strstr(html, "class=\"HIGH\""));
	assert_non_null(strstr(html, "small-requests"));
	/* Summary first; real errors apart from lookups that found nothing, exactly. */
	assert_true(strstr(html, "id=\"summary\"") < strstr(html, "id=\"mounts-table\""));
	assert_true(strstr(html, "id=\"mounts-table\"") < strstr(html, "id=\"counters\""));
	assert_non_null(strstr(html, "<span>Real errors</span><b>8</b><span>1 out of space, 1 I/O, "
				     "2 denied, 2 other; 24 lookups found nothing (not errors)</span>"));
	assert_non_null(strstr(html, "<tr><td>mnt:99</td><td>stat</td><td class=\"n\">2</td>"
				     "<td class=\"n\">0</td><td class=\"n\">0</td><td class=\"n\">0</td>"
				     "<td class=\"n\">0</td><td class=\"n\">0</td><td class=\"n\">2</td></tr>"));
	/* Text is escaped. */
	assert_non_null(strstr(html, "climate model"));
	/* /proc and mnt:99 have no data: no empty bandwidth plots, the page says so (issue 29). */
	assert_null(strstr(html, ">no calls<"));
	assert_null(strstr(html, "Read and write bandwidth on mnt:99"));
	assert_non_null(strstr(html, "Reads, writes and metadata calls per second on mnt:99"));
	assert_non_null(strstr(html, "<p>2 mounts with calls but no byte read or written are left out "
				     "(the tables list them).</p>"));
	free(html);
	ioacct_jobdata_free(jd);
}

static void test_html_escapes(void **state)
{
	struct jb b;
	char *html;

	(void)state;
	jb_init(&b, SEC, 3 * SEC);
	ioacct_strlcpy(b.jd->job.name, "<script>alert('x')</script> & \"q\"", sizeof(b.jd->job.name));
	jb_mount(&b, 3, "/mnt/<em>", "ext4");
	jb_add(&b, 0, 3, IOACCT_OP_READ, 0, 1, 0, 10, 1);
	html = render(b.jd, IOACCT_RENDER_HTML, NULL);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<em>"));
	assert_non_null(strstr(html, "/mnt/&lt;em&gt;"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"));
	free(html);
	/* JSON: control characters escaped, bytes that are not UTF-8 replaced, UTF-8 kept. */
	ioacct_strlcpy(b.jd->job.name, "a\"b\\c\nd\x01" "e\xff\xc3\xa9", sizeof(b.jd->job.name));
	html = render(b.jd, IOACCT_RENDER_JSON, NULL);
	assert_non_null(strstr(html, "\"name\": \"a\\\"b\\\\c\\nd\\u0001e\\ufffd\xc3\xa9\",\n"));
	free(html);
	ioacct_jobdata_free(b.jd);
}

/*
 * Names are anyone's bytes (issue 24): a job, user, workdir, node, step
 * state, mount path and fs type carrying invalid UTF-8, a newline followed
 * by a forged counter line, CR, a terminal escape, BEL and markup. The fs
 * type only comes from the kernel's mount table, so this hand-built job is
 * the one place a test can make it anything.
 */
#define HOSTILE "x\ntotal_POSIX_BYTES_WRITTEN: 999999999999\n# y\r\x1b[31m\x07<script>" \
		"document.title='PWNED'</script><img src=x onerror=alert(1)>\"'&\xff\xfe|"

/*
 * Every byte is UTF-8 and no control character but \n and \t is in the
 * output; C1 controls (U+0080-U+009F) too unless `c1` (JSON has them as
 * they are, as RFC 8259 allows).
 */
static void assert_clean(const char *out, size_t len, const char *what, bool c1)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			fail_msg("%s: control byte 0x%02x at %zu", what, c, i);
		if (!c1 && c == 0xc2 && i + 1 < len && (unsigned char)out[i + 1] < 0xa0)
			fail_msg("%s: C1 control at %zu", what, i);
	}
	if (strlen(out) != len)
		fail_msg("%s: a NUL byte in the output", what);
	if (!ioacct_utf8_valid(out))
		fail_msg("%s: not valid UTF-8", what);
}

static void test_hostile_names(void **state)
{
	static const char *const lines[] = { "\ntotal_POSIX_BYTES_WRITTEN: 999999999999", "\n# y",
					     "\n# user: root" };
	static const char *const tags[] = { "<script", "<img", "<svg/", "<marquee", "<blink",
					    "<dialog", "<meter" };
	struct ioacct_jobdata *jd;
	struct jb b;
	size_t len;
	char *out;

	(void)state;
	jb_init(&b, SEC, 3 * SEC);
	jd = b.jd;
	ioacct_strlcpy(jd->job.name, HOSTILE, sizeof(jd->job.name));
	ioacct_strlcpy(jd->job.user, "u\n# user: root\xff", sizeof(jd->job.user));
	ioacct_strlcpy(jd->job.cluster, "c\r\x1b]0;t\x07", sizeof(jd->job.cluster));
	ioacct_strlcpy(jd->job.node, "n\n<marquee>", sizeof(jd->job.node));
	ioacct_strlcpy(jd->job.workdir, "/home/" HOSTILE, sizeof(jd->job.workdir));
	ioacct_strlcpy(jd->job.state, "DONE\n<blink>", sizeof(jd->job.state));
	ioacct_strlcpy(jd->missing_nodes, "m\n<dialog>", sizeof(jd->missing_nodes));
	jd->missing_after_s = 15;
	jb_mount(&b, 3, "/mnt/" HOSTILE, "fuse.<svg/onload=alert(1)>\n\xff");
	jb_step(&b, 0, 0, 2 * SEC);
	ioacct_strlcpy(jd->steps[0].state, "OK\n<meter>\xc2\x9b", sizeof(jd->steps[0].state));
	/* Failed calls make advice that quotes the mount path. */
	jb_add(&b, 0, 3, IOACCT_OP_WRITE, 0, 50, 10, 40 * 10, 1000);
	jd->nodes = calloc(1, sizeof(*jd->nodes));
	assert_non_null(jd->nodes);
	jd->nnodes = 1;
	ioacct_strlcpy(jd->nodes[0].node, "n\n<svg/onload=alert(2)>", sizeof(jd->nodes[0].node));
	jd->nodes[0].start_ns = jd->job.start_ns;
	jd->nodes[0].ns = 5;

	out = render(jd, IOACCT_RENDER_TEXT, &len);
	assert_clean(out, len, "text", false);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (strstr(out, lines[i]))
			fail_msg("text: a forged line \"%s\"", lines[i] + 1);
	assert_non_null(strstr(out, "# job name: x\\ntotal_POSIX_BYTES_WRITTEN: 999999999999\\n# "
				    "y\\r\\x1b[31m\\x07<script>"));
	assert_non_null(strstr(out, "\"'&\xef\xbf\xbd\xef\xbf\xbd|"));
	assert_non_null(strstr(out, "\tfuse.<svg/onload=alert(1)>\\n\xef\xbf\xbd\n"));
	assert_non_null(strstr(out, "# user: u\\n# user: root\xef\xbf\xbd\n"));
	assert_non_null(strstr(out, "OK\\n<meter>\\x9b"));
	/* The advice quotes the path, cleaned. */
	assert_non_null(strstr(out, "failed with real errors"));
	assert_int_equal(count(out, "/mnt/x\\ntotal_POSIX"), count(out, "/mnt/x"));
	free(out);

	out = render(jd, IOACCT_RENDER_HTML, &len);
	assert_clean(out, len, "HTML", false);
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (strstr(out, tags[i]))
			fail_msg("HTML: markup from a name: %s", tags[i]);
	assert_non_null(strstr(out, "fuse.&lt;svg/onload=alert(1)&gt;\n\xef\xbf\xbd"));
	assert_non_null(strstr(out, "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;"));
	free(out);

	out = render(jd, IOACCT_RENDER_JSON, &len);
	assert_clean(out, len, "JSON", true);
	assert_non_null(strstr(out, "\"fs_type\": \"fuse.<svg/onload=alert(1)>\\n\\ufffd\""));
	free(out);
	ioacct_jobdata_free(jd);
}

/* A job with no I/O at all still renders in every format. */
/*
 * mmap bytes not measured (issue 29): where the job's views say the kernel
 * had no hook ("mmap-nohook") or the view was off, every format says "mmap
 * bytes: not measured here (why)" and gives no number; with "mmap", the number.
 */
static void test_mmap_unmeasured(void **state)
{
	static const char *const modes[] = { "tracepoint views=cache,mmap-nohook,readahead",
					     "tracepoint views=cache,readahead",
					     "fentry views=cache,mmap,readahead" };
	struct fixture *f = *state;
	struct ioacct_jobdata *jd;
	char *txt, *json, *html;

	insert_job(f, 77);
	put_step(f, 0, 0, 10 * SEC);
	put_mount(f, 21, "/data", "tmpfs", "tmpfs");
	put(f, 0, 21, IOACCT_OP_OPEN, 0, 1, 0, 0, 1000);
	put(f, 0, 21, IOACCT_OP_MMAP_FAULT, 0, 12, 0, 409600, 0);
	assert_int_equal(ioacct_store_job_finish(f->st, f->key, START_NS + 10 * SEC, "COMPLETED", 0), 0);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		jd = load(f);
		ioacct_strlcpy(jd->job.probe_mode, modes[i], sizeof(jd->job.probe_mode));
		txt = render(jd, IOACCT_RENDER_TEXT, NULL);
		json = render(jd, IOACCT_RENDER_JSON, NULL);
		html = render(jd, IOACCT_RENDER_HTML, NULL);
		if (i == 2) {
			assert_null(strstr(txt, "not measured"));
			assert_null(strstr(json, "not measured"));
			assert_null(strstr(html, "not measured"));
			assert_non_null(strstr(json, "\"mmap_read_bytes\": 409600"));
			assert_non_null(strstr(txt, " 409600 "));
		} else {
			const char *why = i == 0 ? "(no fentry nor kprobe reached set_pte_range, do_set_pte "
						   "or do_set_pmd on this kernel)" :
						   "(the mmap view was off: views = in ioacct.conf, or the "
						   "kernel refused it)";
			const char *row;
			char line[256];

			snprintf(line, sizeof(line), "\nmmap bytes: not measured here %s\n", why);
			assert_non_null(strstr(txt, line));
			snprintf(line, sizeof(line), "\"mmap_read_bytes_note\": \"mmap bytes: not measured here %s\"",
				 why);
			assert_non_null(strstr(json, line));
			assert_null(strstr(json, "\"mmap_read_bytes\": 409600"));
			assert_non_null(strstr(json, "\"mmap_read_bytes\": null"));
			/* The mount's row of the page-cache table: "-" in its MMAP column. */
			row = strstr(txt, "## Page cache and mmap");
			assert_non_null(row);
			row = strstr(row, "\n/data ");
			assert_non_null(row);
			assert_true(strcspn(row, "-") < strcspn(row + 1, "\n"));
			snprintf(line, sizeof(line), "<tr><th>mmap bytes</th><td>not measured here %s</td></tr>",
				 why);
			assert_non_null(strstr(html, line));
		}
		free(txt);
		free(json);
		free(html);
		ioacct_jobdata_free(jd);
	}
}

static void test_empty_job(void **state)
{
	struct jb b;
	char *out;

	(void)state;
	jb_init(&b, 5 * SEC, 2 * SEC);
	out = render(b.jd, IOACCT_RENDER_TEXT, NULL);
	assert_non_null(strstr(out, "(no file-system I/O was counted)"));
	assert_non_null(strstr(out, "OK   ok: "));
	free(out);
	out = render(b.jd, IOACCT_RENDER_JSON, NULL);
	assert_non_null(strstr(out, "\"mounts\": []"));
	free(out);
	out = render(b.jd, IOACCT_RENDER_HTML, NULL);
	assert_non_null(strstr(out, "No file-system I/O was counted."));
	free(out);
	ioacct_jobdata_free(b.jd);
}

/* A merged report without some nodes names them in every format; none named otherwise. */
static void test_missing_nodes(void **state)
{
	struct jb b;
	char *out;

	(void)state;
	jb_init(&b, 5 * SEC, 2 * SEC);
	out = render(b.jd, IOACCT_RENDER_JSON, NULL);
	assert_null(strstr(out, "missing"));
	free(out);
	ioacct_strlcpy(b.jd->missing_nodes, "mc3,mc4", sizeof(b.jd->missing_nodes));
	b.jd->missing_after_s = 15;
	out = render(b.jd, IOACCT_RENDER_TEXT, NULL);
	assert_non_null(strstr(out, "missing nodes: mc3,mc4 (no data within 15 s of the first node)\n"));
	assert_non_null(strstr(out, "# missing nodes: mc3,mc4\n"));
	free(out);
	out = render(b.jd, IOACCT_RENDER_JSON, NULL);
	assert_non_null(strstr(out, "\"missing_nodes\": [\"mc3\", \"mc4\"]"));
	assert_non_null(strstr(out, "\"missing_after_s\": 15"));
	free(out);
	out = render(b.jd, IOACCT_RENDER_HTML, NULL);
	assert_non_null(strstr(out, "mc3,mc4 (no data within 15 s of the first node)"));
	free(out);
	ioacct_jobdata_free(b.jd);
}

/* A day in 1 s bins: plots are downsampled, tables grouped, counts still exact. */
static void test_long_job(void **state)
{
	struct jb b;
	size_t len;
	char *out, *p;
	size_t rows = 0;

	(void)state;
	jb_init(&b, SEC, 86400 * SEC);
	jb_mount(&b, 5, "/scratch", "lustre");
	for (uint32_t bin = 0; bin < 86400; bin++) {
		jb_add(&b, 0, 5, IOACCT_OP_WRITE, bin, 4, 0, 4 * MIB, 1000);
		jb_add(&b, 0, 5, IOACCT_OP_READ, bin, 1 + bin % 7, 0, (1 + bin % 7) * 65536, 1000);
	}
	out = render(b.jd, IOACCT_RENDER_HTML, &len);
	/* About 600 steps per line: small enough to draw, readable. */
	assert_true(len < 1500000);
	assert_non_null(strstr(out, "mean of 144 bins"));
	assert_non_null(strstr(out, "time since job start (h)"));
	free(out);
	out = render(b.jd, IOACCT_RENDER_TEXT, &len);
	p = strstr(out, "## Time series: 86400 bins of 1.000 s, shown in groups of 864 bins");
	assert_non_null(p);
	p = strchr(p, '\n') + 1;
	p = strchr(p, '\n') + 1;
	for (; *p && *p != '\n'; p = strchr(p, '\n') + 1)
		rows++;
	assert_int_equal(rows, 100);
	assert_non_null(strstr(out, "\ntotal_POSIX_BYTES_WRITTEN: 362387865600\n"));
	free(out);
	ioacct_jobdata_free(b.jd);
}

static void test_write_errors(void **state)
{
	struct jb b;
	FILE *full;

	(void)state;
	jb_init(&b, SEC, 3 * SEC);
	jb_mount(&b, 3, "/tmp", "ext4");
	jb_add(&b, 0, 3, IOACCT_OP_READ, 0, 1, 0, 10, 1);
	for (int fmt = IOACCT_RENDER_TEXT; fmt < IOACCT_RENDER_NFORMATS; fmt++) {
		full = fopen("/dev/full", "we");
		if (!full)
			skip();
		assert_int_equal(ioacct_render_job(full, (enum ioacct_render_format)fmt, b.jd, NULL, NULL),
				 -ENOSPC);
		fclose(full);
	}
	ioacct_jobdata_free(b.jd);
}

/* The Darshan format renders a log the reader takes back, with the bytes the job moved. */
static void test_darshan_format(void **state)
{
	struct ioacct_darshan_record tot;
	struct ioacct_darshan_log *log;
	char err[256];
	size_t len;
	struct jb b;
	char *out;

	(void)state;
	jb_init(&b, SEC, 3 * SEC);
	jb_mount(&b, 3, "/scratch", "ext4");
	jb_add(&b, 0, 3, IOACCT_OP_READ, 0, 4, 0, 4096, 10);
	jb_add(&b, 0, 3, IOACCT_OP_WRITE, 1, 3, 0, 3000, 10);
	out = render(b.jd, IOACCT_RENDER_DARSHAN, &len);
	log = ioacct_darshan_parse(out, len, 0, err, sizeof(err));
	assert_non_null(log);
	assert_int_equal(ioacct_darshan_total(log, IOACCT_DARSHAN_POSIX, &tot), 1);
	assert_int_equal(tot.counters[IOACCT_DARSHAN_POSIX_BYTES_READ], 4096);
	assert_int_equal(tot.counters[IOACCT_DARSHAN_POSIX_BYTES_WRITTEN], 3000);
	ioacct_darshan_free(log);
	free(out);
	ioacct_jobdata_free(b.jd);
}

static void test_format_names(void **state)
{
	(void)state;
	assert_int_equal(ioacct_render_format_from_name("text"), IOACCT_RENDER_TEXT);
	assert_int_equal(ioacct_render_format_from_name("JSON"), IOACCT_RENDER_JSON);
	assert_int_equal(ioacct_render_format_from_name("html"), IOACCT_RENDER_HTML);
	assert_int_equal(ioacct_render_format_from_name("pdf"), -1);
	assert_int_equal(ioacct_render_format_from_name("darshan"), IOACCT_RENDER_DARSHAN);
	assert_string_equal(ioacct_render_format_name(IOACCT_RENDER_HTML), "html");
	assert_string_equal(ioacct_render_format_names(), "text, json, html or darshan");
	/* The table is whole: every format has a name, an extension and a renderer. */
	for (int fmt = 0; fmt < IOACCT_RENDER_NFORMATS; fmt++) {
		assert_non_null(ioacct_render_formats[fmt].name);
		assert_int_equal(ioacct_render_formats[fmt].ext[0], '.');
		assert_non_null(ioacct_render_formats[fmt].render);
		assert_int_equal(ioacct_render_formats[fmt].darshan, fmt == IOACCT_RENDER_DARSHAN);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_golden_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_totals_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_totals_exact_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html, setup, teardown),
		cmocka_unit_test(test_html_escapes),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test_setup_teardown(test_mmap_unmeasured, setup, teardown),
		cmocka_unit_test(test_empty_job),
		cmocka_unit_test(test_missing_nodes),
		cmocka_unit_test(test_long_job),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_darshan_format),
		cmocka_unit_test(test_format_names),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
