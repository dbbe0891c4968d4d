// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The RPC part of the report (issue 40), on a job built in memory: an
 * NFSv4 mount the job wrote to (132 WRITEs, 101 LOOKUPs, a COMMIT, a NULL
 * of NFS and one of NFSACL under the same name) with 124 WRITEs and a
 * DELEGRETURN no job sent; an NFSv3 mount the table lacks that only RPCs
 * went through; a Lustre mount without any:
 *   - the model: per mount and procedure, summed over steps and bins, most
 *     calls first, a name two programs share keyed apart; the RPC-only
 *     mount kept;
 *   - the renderers, exact: the text's "Server calls" and its unattributed
 *     line, the JSON's `rpc`, `rpc_unattributed` and `rpc_series`, the HTML
 *     section; null when the rows were not read; nothing new for a job
 *     without any.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobbuild.h"
#include "model.h"
#include "render.h"
#include "rendercheck.h"
#include "report.h"

#define SEC JB_SEC
#define MIB JB_MIB
enum { M_SCRATCH = 21, M_NFS = 30, M_NFS3 = 31 };
enum { NFS = 100003, NFSACL = 100227 };

static int key_cmp(const void *a, const void *b)
{
	return ioacct_rpc_key_cmp(a, b);
}

/* A row: calls, bytes sent and received, queue, rtt, execute time, errors, retransmissions. */
static void row(struct jb *b, uint32_t step, uint64_t mnt, uint32_t prog, uint32_t vers,
		uint32_t proc, const char *name, uint32_t flags, uint32_t bin, const uint64_t *v)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_rpc *r;

	jd->rpc = jb_grow(jd->rpc, jd->nrpc + 1, sizeof(*jd->rpc));
	r = &jd->rpc[jd->nrpc++];
	*r = (struct ioacct_rpc){ .step_id = step, .mnt_id = mnt, .prog = prog, .vers = vers,
				  .proc = proc, .flags = flags, .bin = bin,
				  .calls = v[0], .bytes_sent = v[1], .bytes_recv = v[2],
				  .queue_ns = v[3], .rtt_ns = v[4], .execute_ns = v[5],
				  .errors = v[6], .retrans = v[7] };
	ioacct_strlcpy(r->name, name, sizeof(r->name));
	jd->rpc_loaded = true;
}

static struct jb job(void)
{
	struct jb b;

	jb_init(&b, SEC, 10 * SEC);
	jb_mount(&b, M_SCRATCH, "/scratch", "lustre");
	jb_mount(&b, M_NFS, "/nfs", "nfs4");
	jb_step(&b, 0, 0, 9 * SEC);
	jb_step(&b, 1, 9 * SEC, 10 * SEC);
	jb_add(&b, 0, M_SCRATCH, IOACCT_OP_READ, 0, 4, 0, 4 * MIB, 4000);
	jb_add(&b, 0, M_NFS, IOACCT_OP_WRITE, 0, 2048, 0, 8 * MIB, 90000000);
	jb_add(&b, 0, M_NFS, IOACCT_OP_STAT, 1, 100, 0, 0, 1000000);
	row(&b, 0, M_NFS, NFS, 4, 38, "WRITE", 0, 0,
	    (uint64_t[]){ 100, 6400000, 12000, 1000000, 50000000, 60000000, 0, 0 });
	row(&b, 0, M_NFS, NFS, 4, 38, "WRITE", 0, 1,
	    (uint64_t[]){ 32, 2015812, 3840, 600000, 16000000, 19000000, 1, 2 });
	row(&b, 0, M_NFS, NFS, 4, 16, "LOOKUP", 0, 0,
	    (uint64_t[]){ 101, 20200, 30300, 101000, 10100000, 12120000, 1, 0 });
	row(&b, 1, M_NFS, NFS, 4, 21, "COMMIT", 0, 9,
	    (uint64_t[]){ 1, 200, 150, 0, 2000000, 2500000, 0, 0 });
	row(&b, 0, M_NFS, NFS, 4, 0, "NULL", 0, 0, (uint64_t[]){ 1, 40, 24, 0, 0, 0, 0, 0 });
	row(&b, 0, M_NFS, NFSACL, 3, 0, "NULL", 0, 0, (uint64_t[]){ 2, 80, 48, 0, 0, 0, 0, 0 });
	row(&b, 0, M_NFS, NFS, 4, 38, "WRITE", IOACCT_RPC_UNATTRIBUTED, 0,
	    (uint64_t[]){ 124, 7936000, 14880, 0, 0, 0, 0, 0 });
	row(&b, 0, M_NFS, NFS, 4, 30, "DELEGRETURN", IOACCT_RPC_UNATTRIBUTED, 0,
	    (uint64_t[]){ 1, 200, 100, 0, 0, 0, 0, 0 });
	row(&b, 0, M_NFS3, NFS, 3, 6, "READ", 0, 2,
	    (uint64_t[]){ 5, 600, 5243480, 5000, 3000000, 3500000, 0, 0 });
	/* The stores' order, as a job is loaded. */
	qsort(b.jd->rpc, b.jd->nrpc, sizeof(*b.jd->rpc), key_cmp);
	return b;
}

static void test_model(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	const struct ioacct_report_mount *m;
	const struct ioacct_rpc *s;

	(void)state;
	assert_non_null(r);
	assert_true(r->has_rpc);
	/* /scratch, /nfs and the RPC-only mount the table lacks, in mount-id order. */
	assert_int_equal(r->nmounts, 3);
	assert_string_equal(r->mounts[0].path, "/scratch");
	assert_int_equal(r->mounts[0].nrpc + r->mounts[0].nrpc_unattr, 0);
	m = &r->mounts[2];
	assert_string_equal(m->path, "mnt:31");
	assert_string_equal(m->fstype, "unknown");
	assert_int_equal(m->calls, 0);
	assert_int_equal(m->nrpc, 1);
	assert_string_equal(m->rpc[0].key, "READ");
	assert_int_equal(m->rpc[0].sum.bytes_recv, 5243480);

	m = &r->mounts[1];
	assert_string_equal(m->path, "/nfs");
	assert_int_equal(m->nrpc, 5);
	assert_string_equal(m->rpc[0].key, "WRITE");
	assert_string_equal(m->rpc[1].key, "LOOKUP");
	assert_string_equal(m->rpc[2].key, "NULL@100227v3");
	/* Ties of calls: the stores' order, NULL (0) before COMMIT (21). */
	assert_string_equal(m->rpc[3].key, "NULL@100003v4");
	assert_string_equal(m->rpc[4].key, "COMMIT");
	s = &m->rpc[0].sum;
	assert_int_equal(s->calls, 132);
	assert_int_equal(s->bytes_sent, 8415812);
	assert_int_equal(s->bytes_recv, 15840);
	assert_int_equal(s->queue_ns, 1600000);
	assert_int_equal(s->rtt_ns, 66000000);
	assert_int_equal(s->execute_ns, 79000000);
	assert_int_equal(s->errors, 1);
	assert_int_equal(s->retrans, 2);
	assert_int_equal(s->prog, NFS);
	assert_int_equal(s->vers, 4);
	assert_int_equal(s->proc, 38);
	assert_int_equal(s->flags, 0);
	/* The step and time of the sum are no one's. */
	assert_int_equal(m->rpc[4].sum.step_id, 0);
	assert_int_equal(m->rpc[4].sum.bin, 0);
	assert_int_equal(m->nrpc_unattr, 2);
	assert_int_equal(m->rpc_unattr_calls, 125);
	assert_string_equal(m->rpc_unattr[0].key, "WRITE");
	assert_int_equal(m->rpc_unattr[0].sum.calls, 124);
	assert_int_equal(m->rpc_unattr[0].sum.flags, IOACCT_RPC_UNATTRIBUTED);
	assert_string_equal(m->rpc_unattr[1].key, "DELEGRETURN");
	ioacct_report_destroy(r);

	/* One mount asked for: the others' RPCs are not in the report. */
	r = ioacct_report_create(b.jd, NULL, "/scratch");
	assert_non_null(r);
	assert_int_equal(r->nmounts, 1);
	assert_false(r->has_rpc);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

static void test_text(void **state)
{
	struct jb b = job();
	struct ioacct_report *r = ioacct_report_create(b.jd, NULL, NULL);
	char *t = render(r, ioacct_render_text);

	(void)state;
	has(t, "\n\n## Server calls: /nfs (nfs4), the RPCs the job sent, per procedure (QUEUE_S, "
	       "RTT_S, EXECUTE_S: mean per call)\n"
	       "PROCEDURE                   PROG VERS      CALLS     BYTES_SENT     BYTES_RECV"
	       "    QUEUE_S      RTT_S  EXECUTE_S   ERRORS  RETRANS\n"
	       "WRITE                     100003    4        132        8415812          15840"
	       "   0.000012   0.000500   0.000598        1        2\n"
	       "LOOKUP                    100003    4        101          20200          30300"
	       "   0.000001   0.000100   0.000120        1        0\n"
	       "NULL@100227v3             100227    3          2             80             48"
	       "   0.000000   0.000000   0.000000        0        0\n"
	       "NULL@100003v4             100003    4          1             40             24"
	       "   0.000000   0.000000   0.000000        0        0\n"
	       "COMMIT                    100003    4          1            200            150"
	       "   0.000000   0.002000   0.002500        0        0\n"
	       "on this mount, 125 RPCs during the job were sent by no job: 124 WRITE, 1 "
	       "DELEGRETURN\n\n## Server calls: mnt:31 (unknown), ");
	has(t, "\nREAD                      100003    3          5            600        5243480"
	       "   0.000001   0.000600   0.000700        0        0\n\n## Access sizes");
	/* Beside the system calls: after the operations, before the access sizes. */
	assert_true(strstr(t, "## Failed calls by class") < strstr(t, "## Server calls: /nfs"));
	assert_null(strstr(t, "## Server calls: /scratch"));
	free(t);
	ioacct_report_destroy(r);

	/* A mount with RPCs no job sent, and none of the job's. */
	for (size_t i = 0; i < b.jd->nrpc; i++)
		if (b.jd->rpc[i].mnt_id == M_NFS && !b.jd->rpc[i].flags)
			b.jd->rpc[i].mnt_id = M_NFS3;
	qsort(b.jd->rpc, b.jd->nrpc, sizeof(*b.jd->rpc), key_cmp);
	r = ioacct_report_create(b.jd, NULL, NULL);
	t = render(r, ioacct_render_text);
	has(t, "EXECUTE_S   ERRORS  RETRANS\n(none: the job sent no RPC on this mount)\n"
	       "on this mount, 125 RPCs during the job were sent by no job: 124 WRITE, 1 "
	       "DELEGRETURN\n");
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
	has(t, "\n      \"rpc\": {\n"
	       "        \"WRITE\": {\"calls\": 132, \"bytes_sent\": 8415812, \"bytes_recv\": 15840, "
	       "\"queue_ns\": 1600000, \"rtt_ns\": 66000000, \"execute_ns\": 79000000, "
	       "\"errors\": 1, \"retrans\": 2, \"program\": 100003, \"version\": 4},\n"
	       "        \"LOOKUP\": {\"calls\": 101, \"bytes_sent\": 20200, \"bytes_recv\": 30300, "
	       "\"queue_ns\": 101000, \"rtt_ns\": 10100000, \"execute_ns\": 12120000, "
	       "\"errors\": 1, \"retrans\": 0, \"program\": 100003, \"version\": 4},\n"
	       "        \"NULL@100227v3\": {\"calls\": 2, \"bytes_sent\": 80, \"bytes_recv\": 48, "
	       "\"queue_ns\": 0, \"rtt_ns\": 0, \"execute_ns\": 0, \"errors\": 0, \"retrans\": 0, "
	       "\"program\": 100227, \"version\": 3},\n");
	has(t, "        \"COMMIT\": {\"calls\": 1, \"bytes_sent\": 200, \"bytes_recv\": 150, "
	       "\"queue_ns\": 0, \"rtt_ns\": 2000000, \"execute_ns\": 2500000, \"errors\": 0, "
	       "\"retrans\": 0, \"program\": 100003, \"version\": 4}\n      },\n"
	       "      \"rpc_unattributed\": {\n"
	       "        \"WRITE\": {\"calls\": 124, \"bytes_sent\": 7936000, \"bytes_recv\": 14880, "
	       "\"queue_ns\": 0, \"rtt_ns\": 0, \"execute_ns\": 0, \"errors\": 0, \"retrans\": 0, "
	       "\"program\": 100003, \"version\": 4},\n"
	       "        \"DELEGRETURN\": {\"calls\": 1, \"bytes_sent\": 200, \"bytes_recv\": 100, "
	       "\"queue_ns\": 0, \"rtt_ns\": 0, \"execute_ns\": 0, \"errors\": 0, \"retrans\": 0, "
	       "\"program\": 100003, \"version\": 4}\n      }\n    },");
	/* A mount without any: empty objects. */
	has(t, "\"IOACCT_SEEK_TIME_NS\": 0\n      },\n      \"rpc\": {},\n"
	       "      \"rpc_unattributed\": {}\n    },\n    {\n      \"mount\": \"/nfs\",");
	/* The job's own rows, in the stores' order, the unattributed ones left out. */
	has(t, "\n  \"rpc_series\": [\n"
	       "    {\"step\": \"0\", \"mount\": \"/nfs\", \"proc\": \"NULL\", \"bin\": 0, "
	       "\"calls\": 1, \"bytes_sent\": 40, \"bytes_recv\": 24},\n"
	       "    {\"step\": \"0\", \"mount\": \"/nfs\", \"proc\": \"LOOKUP\", \"bin\": 0, "
	       "\"calls\": 101, \"bytes_sent\": 20200, \"bytes_recv\": 30300},\n"
	       "    {\"step\": \"0\", \"mount\": \"/nfs\", \"proc\": \"WRITE\", \"bin\": 0, "
	       "\"calls\": 100, \"bytes_sent\": 6400000, \"bytes_recv\": 12000},\n"
	       "    {\"step\": \"0\", \"mount\": \"/nfs\", \"proc\": \"WRITE\", \"bin\": 1, "
	       "\"calls\": 32, \"bytes_sent\": 2015812, \"bytes_recv\": 3840},\n"
	       "    {\"step\": \"0\", \"mount\": \"/nfs\", \"proc\": \"NULL\", \"bin\": 0, "
	       "\"calls\": 2, \"bytes_sent\": 80, \"bytes_recv\": 48},\n"
	       "    {\"step\": \"0\", \"mount\": \"mnt:31\", \"proc\": \"READ\", \"bin\": 2, "
	       "\"calls\": 5, \"bytes_sent\": 600, \"bytes_recv\": 5243480},\n"
	       "    {\"step\": \"1\", \"mount\": \"/nfs\", \"proc\": \"COMMIT\", \"bin\": 9, "
	       "\"calls\": 1, \"bytes_sent\": 200, \"bytes_recv\": 150}\n  ],\n  \"advice\"");
	free(t);
	ioacct_report_destroy(r);

	/* Not read (a store or daemon older than them): null, not none. */
	b.jd->rpc_loaded = false;
	b.jd->nrpc = 0;
	r = ioacct_report_create(b.jd, NULL, NULL);
	t = render(r, ioacct_render_json);
	has(t, "\"IOACCT_SEEK_TIME_NS\": 0\n      },\n      \"rpc\": null,\n"
	       "      \"rpc_unattributed\": null\n    }");
	has(t, "\n  \"rpc_series\": null,\n");
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
	has(t, "<section id=\"rpc\"><h2>Server calls</h2>");
	has(t, "<h3>/nfs (nfs4)</h3><div class=\"scroll\"><table id=\"rpc-1\"><thead><tr>"
	       "<th>Procedure</th><th class=\"n\">Program</th>");
	has(t, "<tbody><tr><td>WRITE</td><td class=\"n\">100003</td><td class=\"n\">4</td>"
	       "<td class=\"n\">132</td><td class=\"n\">8415812</td><td class=\"n\">15840</td>"
	       "<td class=\"n\">0.000012</td><td class=\"n\">0.000500</td>"
	       "<td class=\"n\">0.000598</td><td class=\"n\">1</td><td class=\"n\">2</td></tr>");
	has(t, "</tbody></table></div><p id=\"rpc-unattributed-1\">on this mount, 125 RPCs during "
	       "the job were sent by no job: 124 WRITE, 1 DELEGRETURN.</p><h3>mnt:31 (unknown)</h3>");
	assert_null(strstr(t, "id=\"rpc-0\""));
	/* Beside the system calls' operations. */
	assert_true(strstr(t, "<section id=\"ops\">") < strstr(t, "<section id=\"rpc\">"));
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

/* A job without RPC rows (read, none): nothing new in the text and the HTML. */
static void test_none(void **state)
{
	struct jb b = job();
	struct ioacct_report *r;
	char *t;

	(void)state;
	b.jd->nrpc = 0;
	r = ioacct_report_create(b.jd, NULL, NULL);
	assert_false(r->has_rpc);
	assert_int_equal(r->nmounts, 2);
	t = render(r, ioacct_render_text);
	assert_null(strstr(t, "Server calls"));
	assert_null(strstr(t, "RPC"));
	free(t);
	t = render(r, ioacct_render_html);
	assert_null(strstr(t, "Server calls"));
	assert_null(strstr(t, "id=\"rpc"));
	free(t);
	t = render(r, ioacct_render_json);
	has(t, "\n  \"rpc_series\": [],\n");
	free(t);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b.jd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
