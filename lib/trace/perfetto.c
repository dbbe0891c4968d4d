// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iotrace --perfetto: the calls as a Chrome trace-event JSON document (what
 * ui.perfetto.dev and chrome://tracing open, as DFTracer writes them), one
 * "X" (complete) event per call, written as the calls come, with "M"
 * (metadata) events naming each process and thread the first time it shows.
 * An RPC (iotrace --rpc) is an async slice, a "b" and an "e" event of one
 * id, on its submitter's process: RPCs overlap each other and the calls.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tracefmt.h"

void ioacct_perfetto_begin(FILE *out)
{
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iotrace " PACKAGE_VERSION
	      "\"},\n\"traceEvents\":[", out);
}

/* Whether key was already in the set; adds it (a set that cannot grow forgets nothing: true). */
static bool seen(struct ioacct_perfetto *p, uint64_t key)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		uint64_t *t = calloc(cap, sizeof(*t));

		if (!t)
			return true;
		for (size_t j = 0; j < p->cap; j++) {
			if (!p->keys[j])
				continue;
			for (i = p->keys[j] * 0x9e3779b97f4a7c15ULL >> 40 & (cap - 1); t[i];
			     i = (i + 1) & (cap - 1))
				;
			t[i] = p->keys[j];
		}
		free(p->keys);
		p->keys = t;
		p->cap = cap;
	}
	for (i = key * 0x9e3779b97f4a7c15ULL >> 40 & (p->cap - 1); p->keys[i];
	     i = (i + 1) & (p->cap - 1))
		if (p->keys[i] == key)
			return true;
	p->keys[i] = key;
	p->n++;
	return false;
}

static void sep(FILE *out, struct ioacct_perfetto *p)
{
	fputs(p->events++ ? ",\n" : "\n", out);
}

static void meta(FILE *out, struct ioacct_perfetto *p, const char *what, uint32_t pid,
		 uint32_t tid, const char *name)
{
	sep(out, p);
	fprintf(out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"args\":{\"name\":", what, pid, tid);
	ioacct_json_string(out, name);
	fputs("}}", out);
}

static void rpc_event(FILE *out, struct ioacct_perfetto *p, const struct ioacct_trace_rec *r)
{
	const struct ioacct_trace_rpc *rpc = r->rpc;
	uint64_t id = ++p->rpcs, end = r->start_ns + r->dur_ns;
	const char *call = ioacct_trace_op_name(rpc->call);

	sep(out, p);
	fputs("{\"ph\":\"b\",\"cat\":\"rpc\",\"name\":", out);
	ioacct_json_string(out, rpc->name);
	fprintf(out, ",\"id\":%" PRIu64 ",\"ts\":%" PRIu64 ".%03" PRIu64 ",\"pid\":%" PRIu32
		",\"tid\":%" PRIu32 ",\"args\":{\"xid\":%" PRIu32 ",\"call\":", id,
		r->start_ns / 1000, r->start_ns % 1000, r->pid, r->tid, rpc->xid);
	if (call)
		ioacct_json_string(out, call);
	else
		fputs("null", out);
	if (rpc->has_file)
		fprintf(out, ",\"fileid\":%" PRIu64 ",\"offset\":%" PRId64 ",\"count\":%" PRIu64,
			rpc->fileid, r->offset, rpc->count);
	fprintf(out, ",\"bytes_sent\":%" PRIu64 ",\"bytes_recv\":%" PRIu64 ",\"status\":%" PRId64
		"}}", rpc->bytes_sent, rpc->bytes_recv, r->ret);
	sep(out, p);
	fputs("{\"ph\":\"e\",\"cat\":\"rpc\",\"name\":", out);
	ioacct_json_string(out, rpc->name);
	fprintf(out, ",\"id\":%" PRIu64 ",\"ts\":%" PRIu64 ".%03" PRIu64 ",\"pid\":%" PRIu32
		",\"tid\":%" PRIu32 "}", id, end / 1000, end % 1000, r->pid, r->tid);
}

void ioacct_perfetto_event(FILE *out, struct ioacct_perfetto *p, const struct ioacct_trace_rec *r)
{
	const char *op = ioacct_trace_op_name(r->op);

	/* Keys: 1 << 32 | pid for a process, 2 << 32 | tid for a thread; never 0. */
	if (!seen(p, 1ULL << 32 | r->pid))
		meta(out, p, "process_name", r->pid, r->pid, r->comm);
	if (!seen(p, 2ULL << 32 | r->tid))
		meta(out, p, "thread_name", r->pid, r->tid, r->comm);
	if (r->rpc) {
		rpc_event(out, p, r);
		return;
	}
	sep(out, p);
	fputs("{\"ph\":\"X\",\"cat\":\"posix\",\"name\":", out);
	ioacct_json_string(out, op ? op : "?");
	fprintf(out, ",\"ts\":%" PRIu64 ".%03" PRIu64 ",\"dur\":%" PRIu64 ".%03" PRIu64
		",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"file\":",
		r->start_ns / 1000, r->start_ns % 1000, r->dur_ns / 1000, r->dur_ns % 1000,
		r->pid, r->tid);
	if (r->path[0])
		ioacct_json_string(out, r->path);
	else
		fputs("null", out);
	fputs(",\"mount\":", out);
	if (r->mount[0])
		ioacct_json_string(out, r->mount);
	else
		fputs("null", out);
	if (r->offset >= 0)
		fprintf(out, ",\"offset\":%" PRId64, r->offset);
	fprintf(out, ",\"bytes\":%" PRIu64 ",\"result\":%" PRId64, r->size, r->ret);
	if (r->ret < 0) {
		const char *e = ioacct_trace_errno_name((int)-r->ret);

		fputs(",\"errno\":", out);
		if (e)
			ioacct_json_string(out, e);
		else
			fprintf(out, "\"E%" PRId64 "\"", -r->ret);
	}
	fputs("}}", out);
}

void ioacct_perfetto_end(FILE *out, struct ioacct_perfetto *p)
{
	fputs("\n]}\n", out);
	free(p->keys);
	memset(p, 0, sizeof(*p));
}
