// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The MPI-IO part of the report and of the Darshan log (issue 27), on a
 * job built in memory: two ranks writing and reading one shared file
 * collectively (one of them naming it "ufs:/scratch/shared"), one rank's
 * write of a datatype the probes could not size:
 *   - the model: records summed per file, the POSIX bytes of the same
 *     file beside them, the ratio;
 *   - the renderers: the text section's rows, JSON's `mpiio`, the HTML
 *     table, exact; unsized bytes said to be unknown, never 0;
 *   - the Darshan writer: one MPIIO record per file and rank, named as
 *     the POSIX record of the file, read back by our reader, exact, -1
 *     where ioacct counts nothing and for the bytes of unsized calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "darshan.h"
#include "jobbuild.h"
#include "model.h"
#include "render.h"
#include "rendercheck.h"
#include "report.h"

#define SEC JB_SEC
#define MIB JB_MIB
enum { M_SCRATCH = 21 };
#define DEV ((8u << 20) | 1u)

static struct ioacct_mpiio *mpiio(struct jb *b, int32_t rank, const char *path)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_mpiio *m;

	jd->mpiio = jb_grow(jd->mpiio, jd->nmpiio + 1, sizeof(*jd->mpiio));
	m = &jd->mpiio[jd->nmpiio++];
	jd->mpiio_loaded = true;
	memset(m, 0, sizeof(*m));
	m->rank = rank;
	m->pid = 1000 + (uint32_t)rank;
	ioacct_strlcpy(m->path, path, sizeof(m->path));
	return m;
}

/*
 * Collective buffering: rank 0 aggregates, its POSIX writes carry both
 * ranks' 1 MiB; data sieving: it reads 3 MiB for their 2 MiB.
 */
static struct jb job(void)
{
	struct jb b;
	struct ioacct_file *f;
	struct ioacct_mpiio *m;

	jb_init(&b, SEC, 10 * SEC);
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_step(&b, 0, 0, 10 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_WRITE, 0, 2, 0, 2 * MIB, 2000);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 3, 0, 3 * MIB, 3000);
	f = jb_file(&b, 0, 0, M_SCRATCH, DEV, 100, "/scratch/shared");
	f->opens = 1;
	f->writes = 2;
	f->bytes_written = 2 * MIB;
	f->reads = 3;
	f->bytes_read = 3 * MIB;
	f = jb_file(&b, 0, 1, M_SCRATCH, DEV, 100, "");
	f->opens = 1;
	for (int32_t r = 0; r < 2; r++) {
		m = mpiio(&b, r, r ? "ufs:/scratch/shared" : "/scratch/shared");
		m->coll_opens = 1;
		m->coll_writes = 1;
		m->coll_reads = 1;
		m->bytes_written = m->bytes_read = MIB;
		m->size_written[ioacct_size_bin(MIB)] = m->size_read[ioacct_size_bin(MIB)] = 1;
		m->write_ns = 2000000;
		m->read_ns = 1000000;
		m->meta_ns = 500000;
	}
	m = mpiio(&b, 0, "/scratch/u.dat");
	m->indep_opens = 1;
	m->indep_writes = 2;
	m->unsized_writes = 1;
	m->bytes_written = 100;
	m->size_written[ioacct_size_bin(100)] = 1;
	return b;
}

static void test_model(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	const struct ioacct_report_mpiio_file *x;

	(void)state;
	assert_non_null(r);
	assert_int_equal(r->nmpiio_files, 2);
	x = &r->mpiio_files[0];
	assert_string_equal(x->sum.path, "/scratch/shared");
	assert_int_equal(x->nranks, 2);
	assert_int_equal(x->sum.rank, -1);
	assert_int_equal(x->sum.coll_writes, 2);
	assert_true(x->sum.bytes_written == 2 * MIB && x->sum.bytes_read == 2 * MIB);
	/* Rank 1's POSIX record has no path: it is the same inode. */
	assert_true(x->posix_found);
	assert_true(x->posix_written == 2 * MIB && x->posix_read == 3 * MIB);
	assert_true(ioacct_report_mpiio_ratio(x) == 0.8);
	x = &r->mpiio_files[1];
	assert_string_equal(x->sum.path, "/scratch/u.dat");
	assert_int_equal(x->nranks, 1);
	assert_int_equal(x->sum.rank, 0);
	assert_false(x->posix_found);
	assert_true(ioacct_report_mpiio_ratio(x) < 0);
	assert_int_equal(r->mpiio_all.sum.unsized_writes, 1);
	assert_true(r->mpiio_all.sum.bytes_written == 2 * MIB + 100);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_text(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	char *t = render(r, ioacct_render_text);

	(void)state;
	has(t, "\n## MPI-IO: 2 files, 3 records (process and file); 2097152 bytes read, 2097252 "
	       "written through MPI-IO; POSIX bytes of the same files: 3145728 read, 2097152 "
	       "written; MPI-IO / POSIX bytes: >=0.80\n");
	has(t, "\nunsized: 0 reads and 1 writes had a datatype whose size the probes could not "
	       "read: their bytes are unknown, not in BYTES (\">=\")\n");
	has(t, "\n  all     0/2               0/2/0/0               0/2/0/0     0     0"
	       "        2097152        2097152       0/0   0.002000   0.004000   0.001000"
	       "        5242880   0.80 /scratch/shared\n"
	       "  all     1/0               0/0/0/0               2/0/0/0     0     0"
	       "              0          >=100       0/1   0.000000   0.000000   0.000000"
	       "              -      - /scratch/u.dat\n"
	       "    0     0/1               0/1/0/0               0/1/0/0     0     0"
	       "        1048576        1048576       0/0   0.001000   0.002000   0.000500"
	       "              -      - /scratch/shared\n");
	has(t, "\n    1     0/1               0/1/0/0               0/1/0/0     0     0"
	       "        1048576        1048576       0/0   0.001000   0.002000   0.000500"
	       "              -      - ufs:/scratch/shared\n");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_json(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	char *t = render(r, ioacct_render_json);

	(void)state;
	has(t, "\n  \"mpiio\": {\n    \"nrecords\": 3,\n    \"indep_opens\": 1,\n"
	       "    \"coll_opens\": 2,\n");
	has(t, "    \"bytes_written\": 2097252,\n    \"unsized_reads\": 0,\n"
	       "    \"unsized_writes\": 1,\n");
	has(t, "    \"bytes_read_exact\": true,\n    \"bytes_written_exact\": false,\n"
	       "    \"posix_records\": true,\n    \"posix_bytes_read\": 3145728,\n"
	       "    \"posix_bytes_written\": 2097152,\n    \"mpiio_posix_ratio\": 0.800019,\n");
	has(t, "\"path\": \"/scratch/u.dat\",\n        \"nrecords\": 1,\n");
	has(t, "        \"posix_records\": false,\n        \"posix_bytes_read\": 0,\n"
	       "        \"posix_bytes_written\": 0,\n        \"mpiio_posix_ratio\": null,\n");
	has(t, "\"step\": \"0\",\n        \"step_id\": 0,\n        \"rank\": 1,\n"
	       "        \"pid\": 1001,\n        \"path\": \"ufs:/scratch/shared\",\n"
	       "        \"indep_opens\": 0,\n        \"coll_opens\": 1,\n");
	free(t);
	/* A job whose MPI-IO records were not read: null, not none. */
	b.jd->mpiio_loaded = false;
	ioacct_report_destroy(r);
	r = ioacct_report_create(b.jd, NULL, NULL);
	t = render(r, ioacct_render_json);
	has(t, "\n  \"mpiio\": null,\n");
	free(t);
	t = render(r, ioacct_render_text);
	assert_null(strstr(t, "## MPI-IO"));
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_html(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	char *t = render(r, ioacct_render_html);

	(void)state;
	has(t, "<section id=\"mpiio\"><h2>MPI-IO</h2><p class=\"nums\">2 files, 3 records");
	has(t, "(MPI-IO / POSIX: 0.80;");
	has(t, "<tr class=\"sum\"><td>/scratch/u.dat</td><td>all</td><td class=\"n\">1 / 0</td>"
	       "<td class=\"n\">0 / 0 / 0 / 0</td><td class=\"n\">2 / 0 / 0 / 0</td>"
	       "<td class=\"n\">0</td><td class=\"n\">0</td><td class=\"n\">0</td>"
	       "<td class=\"n\">&ge;100</td><td class=\"n\">0 / 1</td>");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static const struct ioacct_darshan_record *find(const struct ioacct_darshan_log *log,
						const char *name, int64_t rank)
{
	for (size_t i = 0; i < log->nrecs[IOACCT_DARSHAN_MPIIO]; i++) {
		const struct ioacct_darshan_record *x = &log->recs[IOACCT_DARSHAN_MPIIO][i];
		const char *n = ioacct_darshan_name_of(log, x->id);

		if (n && !strcmp(n, name) && x->rank == rank)
			return x;
	}
	fail_msg("no MPIIO record of %s rank %lld", name, (long long)rank);
	return NULL;
}

static int64_t counter(const struct ioacct_darshan_record *x, const char *name)
{
	bool is_float;
	int i = ioacct_darshan_counter_index(IOACCT_DARSHAN_MPIIO, name, &is_float);

	assert_true(i >= 0 && !is_float);
	return x->counters[i];
}

static double fcounter(const struct ioacct_darshan_record *x, const char *name)
{
	bool is_float;
	int i = ioacct_darshan_counter_index(IOACCT_DARSHAN_MPIIO, name, &is_float);

	assert_true(i >= 0 && is_float);
	return x->fcounters[i];
}

static void test_darshan(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	struct ioacct_darshan_log *log = ioacct_darshan_from_report(r, false), *back;
	const struct ioacct_darshan_record *x;
	bool posix_named = false;
	char err[256];
	size_t len;
	void *buf;

	(void)state;
	assert_non_null(log);
	assert_int_equal(ioacct_darshan_write(log, &buf, &len, err, sizeof(err)), 0);
	back = ioacct_darshan_parse(buf, len, 0, err, sizeof(err));
	if (!back)
		fail_msg("our reader: %s", err);
	assert_int_equal(back->nrecs[IOACCT_DARSHAN_MPIIO], 3);
	assert_true(back->nprocs >= 2);
	has(back->metadata, IOACCT_DARSHAN_MPIIO_META "\n");
	for (int64_t rank = 0; rank < 2; rank++) {
		x = find(back, "/scratch/shared", rank);
		assert_int_equal(counter(x, "MPIIO_COLL_OPENS"), 1);
		assert_int_equal(counter(x, "MPIIO_INDEP_OPENS"), 0);
		assert_int_equal(counter(x, "MPIIO_COLL_WRITES"), 1);
		assert_int_equal(counter(x, "MPIIO_COLL_READS"), 1);
		assert_int_equal(counter(x, "MPIIO_SPLIT_WRITES"), 0);
		assert_int_equal(counter(x, "MPIIO_NB_READS"), 0);
		assert_int_equal(counter(x, "MPIIO_SYNCS"), 0);
		assert_int_equal(counter(x, "MPIIO_VIEWS"), 0);
		assert_int_equal(counter(x, "MPIIO_BYTES_WRITTEN"), MIB);
		assert_int_equal(counter(x, "MPIIO_BYTES_READ"), MIB);
		assert_int_equal(counter(x, "MPIIO_SIZE_WRITE_AGG_100K_1M"), 1);
		assert_int_equal(counter(x, "MPIIO_SIZE_READ_AGG_100K_1M"), 1);
		assert_int_equal(counter(x, "MPIIO_SIZE_READ_AGG_1M_4M"), 0);
		assert_int_equal(counter(x, "MPIIO_HINTS"), -1);
		assert_int_equal(counter(x, "MPIIO_MODE"), -1);
		assert_int_equal(counter(x, "MPIIO_RW_SWITCHES"), -1);
		assert_int_equal(counter(x, "MPIIO_FASTEST_RANK"), rank);
		assert_int_equal(counter(x, "MPIIO_FASTEST_RANK_BYTES"), 2 * MIB);
		assert_true(fcounter(x, "MPIIO_F_WRITE_TIME") == 0.002);
		assert_true(fcounter(x, "MPIIO_F_READ_TIME") == 0.001);
		assert_true(fcounter(x, "MPIIO_F_META_TIME") == 0.0005);
		assert_true(fcounter(x, "MPIIO_F_OPEN_START_TIMESTAMP") == -1);
		assert_true(fcounter(x, "MPIIO_F_MAX_WRITE_TIME") == -1);
	}
	/* The bytes of a rank with an unsized call are not known: -1, and said so. */
	x = find(back, "/scratch/u.dat", 0);
	assert_int_equal(counter(x, "MPIIO_INDEP_WRITES"), 2);
	assert_int_equal(counter(x, "MPIIO_BYTES_WRITTEN"), -1);
	assert_int_equal(counter(x, "MPIIO_BYTES_READ"), 0);
	assert_int_equal(counter(x, "MPIIO_SIZE_WRITE_AGG_0_100"), 1);
	/* One name, one record id: the POSIX record of the same file has it. */
	x = find(back, "/scratch/shared", 0);
	for (size_t i = 0; i < back->nrecs[IOACCT_DARSHAN_POSIX]; i++)
		posix_named |= back->recs[IOACCT_DARSHAN_POSIX][i].id == x->id;
	assert_true(posix_named);
	free(buf);
	ioacct_darshan_free(back);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_darshan_name(void **state)
{
	char *s;

	(void)state;
	s = ioacct_darshan_mpiio_name("ufs:/scratch/f", "/home/u");
	assert_string_equal(s, "/scratch/f");
	free(s);
	s = ioacct_darshan_mpiio_name("out/f", "/home/u/");
	assert_string_equal(s, "/home/u/out/f");
	free(s);
	s = ioacct_darshan_mpiio_name("out/f", "/home/u");
	assert_string_equal(s, "/home/u/out/f");
	free(s);
	s = ioacct_darshan_mpiio_name("c:f", "");
	assert_string_equal(s, "c:f");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_darshan),
		cmocka_unit_test(test_darshan_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
