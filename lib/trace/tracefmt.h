/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iotrace's pure parts, without libbpf (unit-tested by tests/unit/
 * test_iotrace_*): the events as iotrace prints them, the -p format
 * directives, the --filter grammar and the --assert expressions. See
 * iotrace(1) for the grammar.
 */
#ifndef IOACCT_TRACEFMT_H
#define IOACCT_TRACEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The record's op when it has none: an RPC's, an RPC's call when it began outside one. */
#define IOACCT_TRACE_NO_OP UINT32_MAX

/* What an RPC adds (iotrace --rpc; iotrace_abi.h's iotrace_rpc_event). */
struct ioacct_trace_rpc {
	const char *name;   /* the procedure as the kernel names it: "WRITE"; "" when it has none */
	uint32_t prog;      /* RPC program (100003: NFS), its version, the procedure's index */
	uint32_t vers;
	uint32_t proc;
	uint32_t xid;
	uint32_t call;      /* the traced call its task was in when it began: an op, or IOACCT_TRACE_NO_OP */
	bool writeback;     /* sent by another task (flusher, rpciod) for a file the traced task wrote */
	bool has_file;      /* nfs_initiate_read/write/commit named its file: fileid, count, the offset */
	uint64_t fileid;
	uint64_t count;     /* bytes it asked for (READ, WRITE, COMMIT) */
	uint64_t bytes_sent; /* as mountstats counts them */
	uint64_t bytes_recv;
	uint64_t queue_ns;  /* mountstats' queue (backlog), rtt and execute times */
	uint64_t rtt_ns;
	uint64_t execute_ns;
	uint32_t retrans;   /* transmissions less one */
};

/*
 * One completed call, or one RPC of a traced task (rpc set): its submitter's
 * pid to comm, the mount and path of the call it was made in, the file
 * offset it reads or writes at, its data bytes as size (a READ's or
 * WRITE's), its status as ret, submit time and time to when mountstats
 * counted it.
 */
struct ioacct_trace_rec {
	uint32_t op;        /* enum ioacct_op, or IOTRACE_OP_CLOSE (iotrace_abi.h); RPCs: IOACCT_TRACE_NO_OP */
	uint32_t pid, tid;
	uint32_t uid;       /* the caller's real uid */
	uint32_t cgroup;    /* the caller's cgroup's inode number (traced hierarchy); 0: unknown */
	const char *comm;
	uint32_t mnt_id;    /* the mount's id (/proc/PID/mountinfo); 0 when not known */
	const char *mount;  /* mount point; "" when not known */
	const char *path;   /* "" when not known */
	int64_t offset;     /* -1 when not a read or write */
	uint64_t size;      /* bytes a read or write moved, else 0 */
	int64_t ret;        /* the return value: bytes, an fd, 0, or -errno */
	uint64_t start_ns;  /* since the trace started */
	uint64_t dur_ns;
	const struct ioacct_trace_rpc *rpc; /* NULL: a call */
};

/* "read", ..., "close"; NULL for a number that is no operation. */
const char *ioacct_trace_op_name(uint32_t op);
int ioacct_trace_op_parse(const char *name, uint32_t *op);
/* "ENOENT"; NULL for an errno this table lacks. */
const char *ioacct_trace_errno_name(int e);
int ioacct_trace_errno_parse(const char *name, int *e);

/* ---- -p FORMAT --------------------------------------------------------------- */

#define IOACCT_TRACE_DEFAULT_FORMAT "%-14T %-6c %7p %-15n %-10m %10o %8s %-7r %10D %f"
/* An RPC's line unless -p is given: the same columns (%c its procedure, %r its status), then its own. */
#define IOACCT_TRACE_DEFAULT_RPC_FORMAT \
	"%-14T %-6c %7p %-15n %-10m %10o %8s %-7r %10D %f xid=%x fileid=%i sent=%b recv=%B call=%C"

/* 0, or -EINVAL with what is wrong and where in err. */
int ioacct_trace_format_check(const char *fmt, char *err, size_t errlen);
/* One line (fmt must have passed the check), newline included. */
void ioacct_trace_format_print(FILE *out, const char *fmt, const struct ioacct_trace_rec *r);
/* One JSON object on one line, the same fields (an RPC's: its own, "rpc" first). */
void ioacct_trace_json_print(FILE *out, const struct ioacct_trace_rec *r);

/* ---- --perfetto: a Chrome trace-event JSON document ------------------------- */

/* The processes and threads already named by "M" events. */
struct ioacct_perfetto {
	uint64_t *keys;
	size_t n, cap;
	uint64_t events;
	uint64_t rpcs;      /* the ids of the RPCs' async slices */
};

void ioacct_perfetto_begin(FILE *out);
/*
 * The call as an "X" event, an RPC as a "b" and "e" pair (an async slice:
 * RPCs overlap each other and their calls), after "M" events naming a new
 * process or thread.
 */
void ioacct_perfetto_event(FILE *out, struct ioacct_perfetto *p, const struct ioacct_trace_rec *r);
/* Closes the document and frees p. */
void ioacct_perfetto_end(FILE *out, struct ioacct_perfetto *p);

/* ---- --filter ----------------------------------------------------------------- */

enum ioacct_trace_field {
	IOACCT_TF_OP, IOACCT_TF_PID, IOACCT_TF_TID, IOACCT_TF_COMM, IOACCT_TF_MOUNT,
	IOACCT_TF_PATH, IOACCT_TF_SIZE, IOACCT_TF_OFFSET, IOACCT_TF_ERRNO, IOACCT_TF_RESULT,
	IOACCT_TF_DUR, IOACCT_TF_RPC, IOACCT_TF_CALL, IOACCT_TF_SENT, IOACCT_TF_RECV,
	IOACCT_TF_STATUS, IOACCT_TF_FILEID,
};

enum ioacct_trace_cmp {
	IOACCT_TC_EQ, IOACCT_TC_NE, IOACCT_TC_LT, IOACCT_TC_LE, IOACCT_TC_GT, IOACCT_TC_GE,
	IOACCT_TC_GLOB, IOACCT_TC_NOGLOB,
};

#define IOACCT_TRACE_MAX_ALTS 16

/*
 * FIELD OP VALUE[|VALUE...]: true when any value compares true (all, for !=
 * and !~). A field the record lacks (op of an RPC, rpc of a call, an
 * unknown offset) compares false, and true with != and !~.
 */
struct ioacct_trace_term {
	enum ioacct_trace_field field;
	enum ioacct_trace_cmp cmp;
	size_t nvals;
	int64_t num[IOACCT_TRACE_MAX_ALTS];
	char *str[IOACCT_TRACE_MAX_ALTS];
};

/* Terms, all of which must hold; an empty filter matches every event. */
struct ioacct_trace_filter {
	size_t n;
	struct ioacct_trace_term *t;
};

/*
 * Adds the comma-separated terms of text to f (so several --filter options
 * add up). 0, or -EINVAL/-ENOMEM with "TERM: what is wrong" in err, f as it
 * was before.
 */
int ioacct_trace_filter_parse(const char *text, struct ioacct_trace_filter *f, char *err,
			      size_t errlen);
bool ioacct_trace_filter_match(const struct ioacct_trace_filter *f, const struct ioacct_trace_rec *r);
void ioacct_trace_filter_free(struct ioacct_trace_filter *f);

/* ---- --assert ----------------------------------------------------------------- */

enum ioacct_trace_agg { IOACCT_TA_COUNT, IOACCT_TA_BYTES };

/* count(FILTER) OP N, bytes(FILTER) OP N: over every event traced, --filter or not. */
struct ioacct_trace_assert {
	const char *text;
	enum ioacct_trace_agg agg;
	struct ioacct_trace_filter f;
	enum ioacct_trace_cmp cmp;
	uint64_t limit;
	uint64_t seen;
};

int ioacct_trace_assert_parse(const char *text, struct ioacct_trace_assert *a, char *err,
			      size_t errlen);
void ioacct_trace_assert_add(struct ioacct_trace_assert *a, const struct ioacct_trace_rec *r);
bool ioacct_trace_assert_holds(const struct ioacct_trace_assert *a);
void ioacct_trace_assert_free(struct ioacct_trace_assert *a);

#endif /* IOACCT_TRACEFMT_H */
