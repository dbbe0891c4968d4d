// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OTLP/HTTP (protobuf) spans for iotrace --otlp: the wire format, written
 * from opentelemetry-proto's field numbers (collector/trace/v1 and
 * trace/v1, common/v1, resource/v1), and the exporter's queue and sender
 * thread. See otlp.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "otlp.h"
#include "text.h"

/* ---- the wire format --------------------------------------------------------------- */

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

static bool pb_room(struct ioacct_pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void pb_raw(struct ioacct_pb *b, const void *p, size_t n)
{
	if (n && pb_room(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void ioacct_pb_varint(struct ioacct_pb *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	pb_raw(b, buf, n);
}

void ioacct_pb_key(struct ioacct_pb *b, uint32_t field, uint32_t wire)
{
	ioacct_pb_varint(b, (uint64_t)field << 3 | wire);
}

void ioacct_pb_bytes(struct ioacct_pb *b, uint32_t field, const void *p, size_t len)
{
	ioacct_pb_key(b, field, PB_LEN);
	ioacct_pb_varint(b, len);
	pb_raw(b, p, len);
}

void ioacct_pb_string(struct ioacct_pb *b, uint32_t field, const char *s)
{
	ioacct_pb_bytes(b, field, s, strlen(s));
}

void ioacct_pb_fixed64(struct ioacct_pb *b, uint32_t field, uint64_t v)
{
	uint8_t buf[8];

	for (int i = 0; i < 8; i++)
		buf[i] = (uint8_t)(v >> (8 * i));
	ioacct_pb_key(b, field, PB_FIXED64);
	pb_raw(b, buf, sizeof(buf));
}

void ioacct_pb_uint(struct ioacct_pb *b, uint32_t field, uint64_t v)
{
	ioacct_pb_key(b, field, PB_VARINT);
	ioacct_pb_varint(b, v);
}

/* KeyValue { key = 1; AnyValue value = 2 }, the value's bytes given (one keyed field). */
static void pb_attr(struct ioacct_pb *b, uint32_t field, const char *key, size_t vlen)
{
	size_t klen = strlen(key);

	ioacct_pb_key(b, field, PB_LEN);
	ioacct_pb_varint(b, 1 + varint_len(klen) + klen + 1 + varint_len(vlen) + vlen);
	ioacct_pb_string(b, 1, key);
	ioacct_pb_key(b, 2, PB_LEN);
	ioacct_pb_varint(b, vlen);
}

/* AnyValue { string_value = 1 } */
void ioacct_pb_attr_str(struct ioacct_pb *b, uint32_t field, const char *key, const char *v)
{
	size_t len = strlen(v);

	pb_attr(b, field, key, 1 + varint_len(len) + len);
	ioacct_pb_string(b, 1, v);
}

/* AnyValue { bytes_value = 7 } */
void ioacct_pb_attr_bytes(struct ioacct_pb *b, uint32_t field, const char *key, const void *v,
			  size_t len)
{
	pb_attr(b, field, key, 1 + varint_len(len) + len);
	ioacct_pb_bytes(b, 7, v, len);
}

/*
 * Protobuf's strings are UTF-8: a strict receiver (the OpenTelemetry
 * Collector is one) refuses the whole batch for one path that is not.
 */
void ioacct_pb_attr_name(struct ioacct_pb *b, uint32_t field, const char *key, const char *v,
			 const char *raw_key)
{
	char *clean;

	if (ioacct_utf8_valid(v)) {
		ioacct_pb_attr_str(b, field, key, v);
		return;
	}
	clean = ioacct_utf8_dup(v);
	if (!clean) {
		b->oom = true;
		return;
	}
	ioacct_pb_attr_str(b, field, key, clean);
	free(clean);
	if (raw_key)
		ioacct_pb_attr_bytes(b, field, raw_key, v, strlen(v));
}

/* AnyValue { int_value = 3 } (int64: a negative value is ten bytes) */
void ioacct_pb_attr_int(struct ioacct_pb *b, uint32_t field, const char *key, int64_t v)
{
	pb_attr(b, field, key, 1 + varint_len((uint64_t)v));
	ioacct_pb_uint(b, 3, (uint64_t)v);
}

void ioacct_pb_free(struct ioacct_pb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Span fields (opentelemetry.proto.trace.v1.Span). */
enum {
	SPAN_TRACE_ID = 1, SPAN_SPAN_ID = 2, SPAN_PARENT = 4, SPAN_NAME = 5, SPAN_KIND = 6,
	SPAN_START = 7, SPAN_END = 8, SPAN_ATTRS = 9, SPAN_STATUS = 15,
};
#define SPAN_KIND_INTERNAL 1
#define STATUS_ERROR 2
/* The exact bytes of a path or mount point that is not UTF-8 (bytes attributes). */
#define RAW_PATH "ioacct.file.path_raw"
#define RAW_MOUNT "ioacct.mount_raw"

static void span_id(uint8_t out[8], uint64_t id)
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(id >> (56 - 8 * i));
}

/* The fields every span has; the caller adds attributes and closes it (keyed, as field 2). */
static void span_head(struct ioacct_pb *s, const struct ioacct_otlp_ids *ids, uint64_t id,
		      uint64_t parent, const char *name, uint64_t start, uint64_t end)
{
	uint8_t buf[8];

	ioacct_pb_bytes(s, SPAN_TRACE_ID, ids->trace_id, sizeof(ids->trace_id));
	span_id(buf, id);
	ioacct_pb_bytes(s, SPAN_SPAN_ID, buf, sizeof(buf));
	if (parent) {
		span_id(buf, parent);
		ioacct_pb_bytes(s, SPAN_PARENT, buf, sizeof(buf));
	}
	if (ioacct_utf8_valid(name)) {
		ioacct_pb_string(s, SPAN_NAME, name);
	} else {
		/* iotrace's root span: the command line, anyone's bytes. */
		char *clean = ioacct_utf8_dup(name);

		if (clean)
			ioacct_pb_string(s, SPAN_NAME, clean);
		else
			s->oom = true;
		free(clean);
	}
	ioacct_pb_uint(s, SPAN_KIND, SPAN_KIND_INTERNAL);
	ioacct_pb_fixed64(s, SPAN_START, start);
	ioacct_pb_fixed64(s, SPAN_END, end);
}

/* The span `s` as ScopeSpans' field 2 in b; s emptied for the next one (its memory kept). */
static void span_put(struct ioacct_pb *b, struct ioacct_pb *s)
{
	if (s->oom)
		b->oom = true;
	else
		ioacct_pb_bytes(b, 2, s->p, s->len);
	s->len = 0;
	s->oom = false;
}

/* A job's step and rank, and the node (NULL: not said). */
static void job_attrs(struct ioacct_pb *s, const struct ioacct_otlp_ids *ids, int64_t step,
		      int64_t rank, const char *node)
{
	if (ids->job)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.job", (int64_t)ids->job);
	if (step >= 0)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.step", step);
	if (rank >= 0)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rank", rank);
	if (node)
		ioacct_pb_attr_str(s, SPAN_ATTRS, "ioacct.node", node);
}

/*
 * ioacct_otlp_span with s as the scratch buffer (reused: one allocation for
 * many spans); c: its parent, step and rank in a job's trace, or NULL.
 */
/*
 * An RPC's own attributes (iotrace --rpc): OpenTelemetry's ONC RPC
 * conventions (rpc.system onc_rpc, rpc.onc_rpc.*), then ioacct's.
 */
static void rpc_attrs(struct ioacct_pb *s, const struct ioacct_trace_rpc *rpc)
{
	const char *call = rpc->writeback ? "writeback" : ioacct_trace_op_name(rpc->call);

	ioacct_pb_attr_str(s, SPAN_ATTRS, "rpc.system", "onc_rpc");
	ioacct_pb_attr_str(s, SPAN_ATTRS, "rpc.onc_rpc.procedure_name", rpc->name);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "rpc.onc_rpc.version", rpc->vers);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.program", rpc->prog);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.xid", rpc->xid);
	if (call)
		ioacct_pb_attr_str(s, SPAN_ATTRS, "ioacct.rpc.call", call);
	if (rpc->has_file)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.fileid", (int64_t)rpc->fileid);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.bytes_sent", (int64_t)rpc->bytes_sent);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.bytes_recv", (int64_t)rpc->bytes_recv);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.queue_ns", (int64_t)rpc->queue_ns);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.rpc.rtt_ns", (int64_t)rpc->rtt_ns);
}

static void span_encode(struct ioacct_pb *b, struct ioacct_pb *s,
			const struct ioacct_otlp_ids *ids, uint64_t n,
			const struct ioacct_trace_rec *r, const struct ioacct_otlp_call *c)
{
	const char *op = r->rpc ? r->rpc->name : ioacct_trace_op_name(r->op);
	uint64_t start = ids->real0_ns + r->start_ns;

	span_head(s, ids, ids->span_seed + n, c && c->parent ? c->parent : ids->root_id,
		  op && op[0] ? op : "?", start, start + r->dur_ns);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "process.pid", r->pid);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "thread.id", r->tid);
	ioacct_pb_attr_name(s, SPAN_ATTRS, "process.command", r->comm, NULL);
	job_attrs(s, ids, c ? c->step : -1, c ? c->rank : -1, c ? c->node : NULL);
	if (r->path[0])
		ioacct_pb_attr_name(s, SPAN_ATTRS, "file.path", r->path, RAW_PATH);
	if (r->mount[0])
		ioacct_pb_attr_name(s, SPAN_ATTRS, "ioacct.mount", r->mount, RAW_MOUNT);
	if (r->offset >= 0)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.offset", r->offset);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.bytes", (int64_t)r->size);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.result", r->ret);
	if (r->rpc)
		rpc_attrs(s, r->rpc);
	if (r->ret < 0) {
		const char *e = ioacct_trace_errno_name((int)-r->ret);
		char buf[32];

		if (!e) {
			snprintf(buf, sizeof(buf), "E%" PRId64, -r->ret);
			e = buf;
		}
		ioacct_pb_attr_str(s, SPAN_ATTRS, "error.type", e);
		/* Status { message = 2; code = 3 } */
		ioacct_pb_key(s, SPAN_STATUS, PB_LEN);
		ioacct_pb_varint(s, 1 + varint_len(strlen(e)) + strlen(e) + 2);
		ioacct_pb_string(s, 2, e);
		ioacct_pb_uint(s, 3, STATUS_ERROR);
	}
	span_put(b, s);
}

void ioacct_otlp_span(struct ioacct_pb *b, const struct ioacct_otlp_ids *ids, uint64_t n,
		      const struct ioacct_trace_rec *r)
{
	struct ioacct_pb s = { 0 };

	span_encode(b, &s, ids, n, r, NULL);
	ioacct_pb_free(&s);
}

void ioacct_otlp_root_span(struct ioacct_pb *b, const struct ioacct_otlp_ids *ids,
			   const char *name, uint64_t start_ns, uint64_t end_ns)
{
	struct ioacct_pb s = { 0 };

	span_head(&s, ids, ids->root_id, 0, name, start_ns, end_ns);
	job_attrs(&s, ids, -1, -1, NULL);
	span_put(b, &s);
	ioacct_pb_free(&s);
}

void ioacct_otlp_request(struct ioacct_pb *b, const char *node, const uint8_t *spans, size_t len)
{
	struct ioacct_pb res = { 0 }, scope = { 0 }, ss = { 0 }, rs = { 0 };

	/* Resource { attributes = 1 } */
	ioacct_pb_attr_str(&res, 1, "service.name", "ioacct");
	ioacct_pb_attr_name(&res, 1, "host.name", node, NULL);
	/* InstrumentationScope { name = 1; version = 2 } */
	ioacct_pb_string(&scope, 1, "iotrace");
	ioacct_pb_string(&scope, 2, PACKAGE_VERSION);
	/* ScopeSpans { scope = 1; spans = 2 } */
	ioacct_pb_bytes(&ss, 1, scope.p, scope.len);
	pb_raw(&ss, spans, len);
	/* ResourceSpans { resource = 1; scope_spans = 2 } */
	ioacct_pb_bytes(&rs, 1, res.p, res.len);
	ioacct_pb_bytes(&rs, 2, ss.p, ss.len);
	if (res.oom || scope.oom || ss.oom || rs.oom)
		b->oom = true;
	/* ExportTraceServiceRequest { resource_spans = 1 } */
	ioacct_pb_bytes(b, 1, rs.p, rs.len);
	ioacct_pb_free(&res);
	ioacct_pb_free(&scope);
	ioacct_pb_free(&ss);
	ioacct_pb_free(&rs);
}

/* ---- the exporter ------------------------------------------------------------------- */

struct ioacct_otlp {
	struct ioacct_otlp_ids ids;
	struct ioacct_url url;
	struct ioacct_http *http;   /* the sender's */
	char node[256];
	size_t budget;
	int timeout_ms;
	ioacct_otlp_post_fn post;   /* NULL: this process POSTs (http, ioacct_http_post) */
	void *post_ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;        /* the sender: a batch is ready, or closing */
	pthread_cond_t idle;        /* close: the sender sent what there was */
	struct ioacct_pb queue;     /* spans waiting, keyed as ScopeSpans' field 2 */
	struct ioacct_pb span, body; /* the reading thread's, reused */
	uint64_t nqueued;
	size_t inflight;            /* bytes of the batch being sent */
	uint64_t nspans;            /* call spans made so far (span ids) */
	uint64_t nmade;             /* spans made, of every kind */
	uint64_t sent, dropped;
	uint64_t full;              /* of the dropped: queue full */
	char why[256];              /* the last failure, for the final line */
	bool closing, done;
	/* ioacct_otlp_finish: told the final line by the sender, which then frees o */
	void (*on_done)(void *arg, const char *msg, uint64_t dropped);
	void *arg;
};

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * A batch the collector could not take now (OTLP/HTTP's retryable answers)
 * goes again, OTLP_TRIES times at most: after its Retry-After, else after
 * a backoff doubling from OTLP_BACKOFF_MS; one asked to wait longer than
 * OTLP_RETRY_MAX_MS is given up at once. A connection refused or a POST
 * not answered in time is not tried again: the next batch tries anew.
 */
#define OTLP_TRIES 5
#define OTLP_BACKOFF_MS 1000
#define OTLP_RETRY_MAX_MS 30000

static bool retryable(int status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* POSTs one batch, again while the collector says to; the lock is not held. */
static void send_batch(struct ioacct_otlp *o, struct ioacct_pb *spans, uint64_t n)
{
	struct ioacct_pb req = { 0 };
	int64_t after = -1, wait_ms = OTLP_BACKOFF_MS;
	char err[256] = "";
	int status, tries = 0;

	ioacct_otlp_request(&req, o->node, spans->p, spans->len);
	if (req.oom) {
		status = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	}
	while (!req.oom) {
		status = o->post ? o->post(o->post_ctx, req.p, req.len, o->timeout_ms, &after, err,
					   sizeof(err)) :
				   ioacct_http_post(o->http, req.p, req.len, o->timeout_ms, &after, err,
						    sizeof(err));
		tries++;
		if (!retryable(status) || tries == OTLP_TRIES)
			break;
		if (after > OTLP_RETRY_MAX_MS) {
			snprintf(err, sizeof(err), "answered HTTP %d, to try again after %" PRId64
				 " s", status, after / 1000);
			status = -EAGAIN;
			break;
		}
		sleep_ms(after >= 0 ? after : wait_ms);
		wait_ms = wait_ms * 2 > OTLP_RETRY_MAX_MS ? OTLP_RETRY_MAX_MS : wait_ms * 2;
	}
	ioacct_pb_free(&req);
	pthread_mutex_lock(&o->lock);
	if (status >= 200 && status < 300) {
		o->sent += n;
	} else {
		o->dropped += n;
		if (status > 0 && tries > 1)
			snprintf(o->why, sizeof(o->why), "answered HTTP %d %d times", status,
				 tries);
		else if (status > 0)
			snprintf(o->why, sizeof(o->why), "answered HTTP %d", status);
		else
			snprintf(o->why, sizeof(o->why), "%s", err);
	}
	o->inflight = 0;
	pthread_mutex_unlock(&o->lock);
}

/* "N spans sent, M dropped (collector HOST:PORT: why; queue of B bytes full for K)" */
static void close_msg(const struct ioacct_otlp *o, uint64_t sent, uint64_t dropped, char *msg,
		      size_t msglen)
{
	int n = snprintf(msg, msglen, "%" PRIu64 " spans sent, %" PRIu64 " dropped", sent, dropped);

	if (!dropped || n < 0 || (size_t)n >= msglen)
		return;
	n += snprintf(msg + n, msglen - (size_t)n, " (collector %s:%u", o->url.host, o->url.port);
	if (o->why[0] && (size_t)n < msglen)
		n += snprintf(msg + n, msglen - (size_t)n, ": %s", o->why);
	if (o->full && (size_t)n < msglen)
		n += snprintf(msg + n, msglen - (size_t)n, "%s queue of %zu bytes full for %" PRIu64
			      " spans", o->why[0] ? ";" : ":", o->budget, o->full);
	if ((size_t)n < msglen)
		snprintf(msg + n, msglen - (size_t)n, ")");
}

static void otlp_free(struct ioacct_otlp *o)
{
	ioacct_http_free(o->http);
	ioacct_pb_free(&o->queue);
	ioacct_pb_free(&o->span);
	ioacct_pb_free(&o->body);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->wake);
	pthread_cond_destroy(&o->idle);
	free(o);
}

/*
 * The bytes of the first n spans of a queue: each is ScopeSpans' field 2, a
 * one-byte key and a varint length (span_put), so walking n lengths finds it.
 */
static size_t spans_end(const struct ioacct_pb *q, uint64_t n)
{
	size_t off = 0;

	while (n-- && off < q->len) {
		uint64_t len = 0;
		unsigned int shift = 0;

		off++;
		while (off < q->len && shift < 64) {
			uint8_t b = q->p[off++];

			len |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
			if (!(b & 0x80))
				break;
		}
		off = len > q->len - off ? q->len : off + (size_t)len;
	}
	return off;
}

/*
 * Sends a batch when IOACCT_OTLP_BATCH spans wait or a second has passed, until
 * closed; at most IOACCT_OTLP_BATCH spans a POST, however late the sender woke.
 */
static void *sender(void *arg)
{
	struct ioacct_otlp *o = arg;
	struct timespec ts;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		struct ioacct_pb batch;
		uint64_t n;

		deadline(&ts, 1000);
		while (!o->closing && o->nqueued < IOACCT_OTLP_BATCH)
			if (pthread_cond_timedwait(&o->wake, &o->lock, &ts) == ETIMEDOUT)
				break;
		if (!o->nqueued) {
			if (o->closing)
				break;
			continue;
		}
		batch = o->queue;
		n = o->nqueued;
		memset(&o->queue, 0, sizeof(o->queue));
		o->nqueued = 0;
		if (n > IOACCT_OTLP_BATCH) {
			/* A sender that woke late found several batches: one a POST, the rest stay. */
			size_t cut = spans_end(&batch, IOACCT_OTLP_BATCH);

			pb_raw(&o->queue, batch.p + cut, batch.len - cut);
			o->nqueued = n - IOACCT_OTLP_BATCH;
			batch.len = cut;
			n = IOACCT_OTLP_BATCH;
		}
		o->inflight = batch.len;
		pthread_mutex_unlock(&o->lock);
		send_batch(o, &batch, n);
		ioacct_pb_free(&batch);
		pthread_mutex_lock(&o->lock);
	}
	o->done = true;
	pthread_cond_broadcast(&o->idle);
	pthread_mutex_unlock(&o->lock);
	if (o->on_done) {
		char msg[512];

		close_msg(o, o->sent, o->dropped, msg, sizeof(msg));
		o->on_done(o->arg, msg, o->dropped);
		otlp_free(o);
	}
	return NULL;
}

/* ioacct_otlp_open() (post NULL: libcurl here, with ca_file) and ioacct_otlp_open_with(). */
static int otlp_start(struct ioacct_otlp **out, const char *url, const char *ca_file,
		      const struct ioacct_otlp_ids *ids, const char *node, size_t queue_bytes,
		      int timeout_ms, ioacct_otlp_post_fn post, void *post_ctx, char *err,
		      size_t errlen)
{
	struct ioacct_otlp *o = calloc(1, sizeof(*o));
	int ret;

	*out = NULL;
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = ioacct_url_parse(url, "/v1/traces", &o->url, err, errlen);
	if (ret) {
		free(o);
		return ret;
	}
	o->http = post ? NULL : ioacct_http_new(&o->url, "application/x-protobuf", ca_file, err,
						  errlen);
	if (!post && !o->http) {
		ret = -errno;
		free(o);
		return ret;
	}
	o->ids = *ids;
	snprintf(o->node, sizeof(o->node), "%s", node);
	o->budget = queue_bytes;
	o->timeout_ms = timeout_ms;
	o->post = post;
	o->post_ctx = post_ctx;
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->wake, NULL);
	pthread_cond_init(&o->idle, NULL);
	ret = pthread_create(&o->thread, NULL, sender, o);
	if (ret) {
		snprintf(err, errlen, "cannot start the sender thread: %s", strerror(ret));
		ioacct_http_free(o->http);
		free(o);
		return -ret;
	}
	*out = o;
	return 0;
}

int ioacct_otlp_open(struct ioacct_otlp **out, const char *url, const char *ca_file,
		     const struct ioacct_otlp_ids *ids, const char *node, size_t queue_bytes,
		     int timeout_ms, char *err, size_t errlen)
{
	return otlp_start(out, url, ca_file, ids, node, queue_bytes, timeout_ms, NULL, NULL, err,
			  errlen);
}

int ioacct_otlp_open_with(struct ioacct_otlp **out, const char *url,
			  const struct ioacct_otlp_ids *ids, const char *node, size_t queue_bytes,
			  int timeout_ms, ioacct_otlp_post_fn post, void *post_ctx, char *err,
			  size_t errlen)
{
	return otlp_start(out, url, NULL, ids, node, queue_bytes, timeout_ms, post, post_ctx, err,
			  errlen);
}

/*
 * Queues an encoded span, or drops it when the budget is spent (the root span,
 * one, is always queued). Called with the lock held.
 */
static void enqueue(struct ioacct_otlp *o, struct ioacct_pb *s, bool root)
{
	o->nmade++;
	if (s->oom || (!root && o->queue.len + o->inflight + s->len > o->budget)) {
		o->dropped++;
		o->full++;
		return;
	}
	pb_raw(&o->queue, s->p, s->len);
	o->nqueued++;
	if (o->nqueued == IOACCT_OTLP_BATCH)
		pthread_cond_signal(&o->wake);
}

void ioacct_otlp_add_call(struct ioacct_otlp *o, const struct ioacct_trace_rec *r,
			  const struct ioacct_otlp_call *c)
{
	/* Encoded outside the lock: the sender never waits for it, nor it for the sender. */
	o->span.len = 0;
	o->span.oom = false;
	span_encode(&o->span, &o->body, &o->ids, ++o->nspans, r, c);
	pthread_mutex_lock(&o->lock);
	enqueue(o, &o->span, false);
	pthread_mutex_unlock(&o->lock);
}

void ioacct_otlp_add_mpi(struct ioacct_otlp *o, const struct ioacct_otlp_mpi *m,
			 const struct ioacct_otlp_call *c)
{
	struct ioacct_pb *s = &o->body;
	uint64_t parent = c->parent ? c->parent : o->ids.root_id;

	o->span.len = 0;
	o->span.oom = false;
	span_head(s, &o->ids, o->ids.span_seed + ++o->nspans, parent, m->func, m->start_ns,
		  m->end_ns);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "process.pid", m->pid);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "thread.id", m->tid);
	job_attrs(s, &o->ids, c->step, c->rank, c->node);
	if (m->path[0])
		ioacct_pb_attr_name(s, SPAN_ATTRS, "file.path", m->path, RAW_PATH);
	if (m->offset >= 0)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.offset", m->offset);
	if (m->bytes >= 0)
		ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.bytes", m->bytes);
	ioacct_pb_attr_int(s, SPAN_ATTRS, "ioacct.result", m->result);
	ioacct_pb_attr_str(s, SPAN_ATTRS, "mpi.collective", m->collective ? "true" : "false");
	if (m->result) {
		/* Status { code = 3 }: an MPI error code has no errno name. */
		ioacct_pb_key(s, SPAN_STATUS, PB_LEN);
		ioacct_pb_varint(s, 2);
		ioacct_pb_uint(s, 3, STATUS_ERROR);
	}
	span_put(&o->span, s);
	pthread_mutex_lock(&o->lock);
	enqueue(o, &o->span, false);
	pthread_mutex_unlock(&o->lock);
}

void ioacct_otlp_add(struct ioacct_otlp *o, const struct ioacct_trace_rec *r)
{
	ioacct_otlp_add_call(o, r, NULL);
}

void ioacct_otlp_add_parent(struct ioacct_otlp *o, uint64_t id, uint64_t parent,
			    const char *name, uint64_t start_ns, uint64_t end_ns, int64_t step)
{
	o->span.len = 0;
	o->span.oom = false;
	span_head(&o->body, &o->ids, id, parent, name, start_ns, end_ns);
	job_attrs(&o->body, &o->ids, step, -1, o->node);
	span_put(&o->span, &o->body);
	pthread_mutex_lock(&o->lock);
	enqueue(o, &o->span, true);
	pthread_mutex_unlock(&o->lock);
}

void ioacct_otlp_finish(struct ioacct_otlp *o,
			void (*done)(void *arg, const char *msg, uint64_t dropped), void *arg)
{
	pthread_mutex_lock(&o->lock);
	o->on_done = done;
	o->arg = arg;
	o->closing = true;
	pthread_cond_signal(&o->wake);
	pthread_mutex_unlock(&o->lock);
	pthread_detach(o->thread);
}

uint64_t ioacct_otlp_close(struct ioacct_otlp *o, const char *root_name, uint64_t end_ns,
			   char *msg, size_t msglen)
{
	struct ioacct_pb s = { 0 };
	struct timespec ts;
	uint64_t sent, dropped;
	bool done;

	ioacct_otlp_root_span(&s, &o->ids, root_name, o->ids.real0_ns, end_ns ? end_ns : real_ns());
	pthread_mutex_lock(&o->lock);
	enqueue(o, &s, true);
	o->closing = true;
	pthread_cond_signal(&o->wake);
	deadline(&ts, o->timeout_ms);
	while (!o->done)
		if (pthread_cond_timedwait(&o->idle, &o->lock, &ts) == ETIMEDOUT)
			break;
	done = o->done;
	/* Not done: what waits and what is in flight are not sent by now, nor ever. */
	if (!done)
		snprintf(o->why, sizeof(o->why), "no answer within %d ms at the end",
			 o->timeout_ms);
	sent = o->sent;
	dropped = done ? o->dropped : o->nmade - o->sent;
	close_msg(o, sent, dropped, msg, msglen);
	pthread_mutex_unlock(&o->lock);
	ioacct_pb_free(&s);
	if (done) {
		pthread_join(o->thread, NULL);
		otlp_free(o);
	}
	/* else: the sender still holds o; the process exits without it. */
	return dropped;
}
