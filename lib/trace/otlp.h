/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iotrace --otlp: completed calls as OpenTelemetry spans, sent in OTLP/HTTP
 * (protobuf) to a collector. The encoder writes the protobuf wire format of
 * opentelemetry-proto's ExportTraceServiceRequest by field number; a sender
 * thread POSTs batches (512 spans, or what came in a second) over HTTP or
 * HTTPS (libcurl, http.c), again after a while when the collector says so
 * (429, 502, 503, 504, its Retry-After), a few times at most. The caller
 * never waits on the collector: a span that does not fit in the queue's
 * byte budget is dropped and counted, as are the spans of a batch the
 * collector refused or never answered. Names users control (paths, mount
 * points, commands) go as valid UTF-8, U+FFFD for bytes that are not, and
 * a path's exact bytes beside it as a bytes attribute.
 */
#ifndef IOACCT_OTLP_H
#define IOACCT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracefmt.h"
#include "url.h"

#define IOACCT_OTLP_QUEUE_DEFAULT (4UL << 20)
#define IOACCT_OTLP_BATCH 512
#define IOACCT_OTLP_TIMEOUT_MS 5000

/* ---- the wire format (pure; unit-tested) ---------------------------------------- */

struct ioacct_pb {
	uint8_t *p;
	size_t len, cap;
	bool oom;           /* an append failed: the buffer is not whole */
};

void ioacct_pb_varint(struct ioacct_pb *b, uint64_t v);
/* A field's key: its number and wire type (0 varint, 1 fixed64, 2 bytes, 5 fixed32). */
void ioacct_pb_key(struct ioacct_pb *b, uint32_t field, uint32_t wire);
void ioacct_pb_bytes(struct ioacct_pb *b, uint32_t field, const void *p, size_t len);
void ioacct_pb_string(struct ioacct_pb *b, uint32_t field, const char *s);
void ioacct_pb_fixed64(struct ioacct_pb *b, uint32_t field, uint64_t v);
void ioacct_pb_uint(struct ioacct_pb *b, uint32_t field, uint64_t v);
/* KeyValue attributes (field `field` of the enclosing message); a string must be UTF-8. */
void ioacct_pb_attr_str(struct ioacct_pb *b, uint32_t field, const char *key, const char *v);
void ioacct_pb_attr_bytes(struct ioacct_pb *b, uint32_t field, const char *key, const void *v,
			  size_t len);
/*
 * A name users control: as a string when it is valid UTF-8; else made so
 * (U+FFFD for each invalid part, as the cluster store writes names) and,
 * when raw_key is given, its exact bytes beside it under raw_key.
 */
void ioacct_pb_attr_name(struct ioacct_pb *b, uint32_t field, const char *key, const char *v,
			 const char *raw_key);
void ioacct_pb_attr_int(struct ioacct_pb *b, uint32_t field, const char *key, int64_t v);
void ioacct_pb_free(struct ioacct_pb *b);

/* What every span of one run shares. */
struct ioacct_otlp_ids {
	uint8_t trace_id[16];
	uint64_t span_seed;     /* span ids are span_seed + n, never 0 */
	uint64_t root_id;       /* the root span's (the command's, the process's or the job's) */
	uint64_t real0_ns;      /* unix time of the trace's start (start_ns 0) */
	uint64_t job;           /* --job's id, 0 when none */
};

/* Where a call's span goes in a job's trace (sbatch --io-monitor=spans). */
struct ioacct_otlp_call {
	uint64_t parent;        /* its step's span; 0: the root span */
	int64_t step, rank;     /* < 0: not said */
	const char *node;       /* NULL: not said */
};

/* An MPI-IO call (sbatch --io-monitor=spans=mpiio), in unix nanoseconds. */
struct ioacct_otlp_mpi {
	const char *func;       /* the MPI function: the span's name */
	const char *path;       /* "": not known */
	uint64_t start_ns, end_ns;
	int64_t offset;         /* < 0: the call has none */
	int64_t bytes;          /* < 0: not known (unsized datatype, or no data) */
	int64_t result;         /* the MPI error code, 0: MPI_SUCCESS */
	int64_t pid, tid;
	bool collective;
};

/* Span n of call r, a child of the root span, appended to b as a Span message. */
void ioacct_otlp_span(struct ioacct_pb *b, const struct ioacct_otlp_ids *ids, uint64_t n,
		      const struct ioacct_trace_rec *r);
/* The root span: `name`, from unix time start_ns to end_ns. */
void ioacct_otlp_root_span(struct ioacct_pb *b, const struct ioacct_otlp_ids *ids,
			   const char *name, uint64_t start_ns, uint64_t end_ns);
/*
 * An ExportTraceServiceRequest with one ResourceSpans (service.name=ioacct,
 * host.name=node) and one ScopeSpans holding `spans` (Span messages, each
 * already keyed as field 2 of ScopeSpans), appended to b.
 */
void ioacct_otlp_request(struct ioacct_pb *b, const char *node, const uint8_t *spans,
			 size_t len);

/* ---- the exporter: queue and sender thread ------------------------------------ */

struct ioacct_otlp;

/*
 * Parses url (http[s]://HOST[:PORT][/PATH], url.h; no path: /v1/traces)
 * and starts the sender; ca_file: as ioacct_http_new(). queue_bytes bounds
 * the spans waiting and in flight; timeout_ms bounds each POST. 0, or
 * -errno with what is wrong in err.
 */
int ioacct_otlp_open(struct ioacct_otlp **out, const char *url, const char *ca_file,
		     const struct ioacct_otlp_ids *ids, const char *node, size_t queue_bytes,
		     int timeout_ms, char *err, size_t errlen);
/*
 * What POSTs an encoded request (ExportTraceServiceRequest) to the
 * collector: the HTTP status (*retry_after_ms the answer's Retry-After, -1
 * when none), or -errno with what failed in err, as ioacct_http_post().
 * ioacctd's goes through its unprivileged OTLP worker (daemon/otlpsend.c);
 * ctx is the caller's.
 */
typedef int (*ioacct_otlp_post_fn)(void *ctx, const void *body, size_t len, int timeout_ms,
				   int64_t *retry_after_ms, char *err, size_t errlen);
/*
 * ioacct_otlp_open(), each batch POSTed by post (what a retry waits for
 * still decided here), which holds the connection and its CA certificates
 * (ca_file is not used).
 */
int ioacct_otlp_open_with(struct ioacct_otlp **out, const char *url,
			  const struct ioacct_otlp_ids *ids, const char *node, size_t queue_bytes,
			  int timeout_ms, ioacct_otlp_post_fn post, void *post_ctx, char *err,
			  size_t errlen);
/* Queues call r as a span; never waits on the collector (a full queue drops it). */
void ioacct_otlp_add(struct ioacct_otlp *o, const struct ioacct_trace_rec *r);
/* The same, the span's parent (0: the root) and its job attributes given. */
void ioacct_otlp_add_call(struct ioacct_otlp *o, const struct ioacct_trace_rec *r,
			  const struct ioacct_otlp_call *c);
/* Queues MPI-IO call m as a span, its parent and job attributes in c. */
void ioacct_otlp_add_mpi(struct ioacct_otlp *o, const struct ioacct_otlp_mpi *m,
			 const struct ioacct_otlp_call *c);
/*
 * Queues a parent span (a job's or a step's: ids and times chosen by the
 * caller; step < 0: none) with the node's name; queued whatever the budget.
 */
void ioacct_otlp_add_parent(struct ioacct_otlp *o, uint64_t id, uint64_t parent,
			    const char *name, uint64_t start_ns, uint64_t end_ns, int64_t step);
/*
 * Ends o without waiting (ioacctd: its event loop never waits on a
 * collector): the sender sends what is queued, each POST within timeout_ms,
 * then calls done with "N spans sent, M dropped (...)" from its thread and
 * frees o. No root span.
 */
void ioacct_otlp_finish(struct ioacct_otlp *o,
			void (*done)(void *arg, const char *msg, uint64_t dropped), void *arg);
/*
 * Queues the root span, sends what is queued and waits for it at most
 * timeout_ms; what is not sent by then counts as dropped. Then writes "N
 * spans sent, M dropped (...)" into msg and frees o (a sender still stuck on
 * the collector is left to die with the process). Returns the dropped count.
 */
uint64_t ioacct_otlp_close(struct ioacct_otlp *o, const char *root_name, uint64_t end_ns,
			   char *msg, size_t msglen);

/* ---- HTTP (http.c, libcurl) -------------------------------------------------------- */

struct ioacct_http;

/*
 * A client of u (url.h) POSTing bodies of type ctype: one libcurl handle
 * whose connection is kept between POSTs; ca_file ("" or NULL: the
 * system's) the CA certificates an https:// server's must chain to. NULL
 * with errno and what failed in err.
 */
struct ioacct_http *ioacct_http_new(const struct ioacct_url *u, const char *ctype,
				    const char *ca_file, char *err, size_t errlen);
void ioacct_http_free(struct ioacct_http *h);
/*
 * POSTs body and reads the answer, all within timeout_ms. The HTTP status
 * (*retry_after_ms the answer's Retry-After, -1 when none), or -errno with
 * what failed in err.
 */
int ioacct_http_post(struct ioacct_http *h, const void *body, size_t len, int timeout_ms,
		     int64_t *retry_after_ms, char *err, size_t errlen);

#endif /* IOACCT_OTLP_H */
