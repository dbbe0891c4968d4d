/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wire protocol; proto.h describes the framing. Each message type has a
 * schema, a table of the attributes it carries and where they live in the
 * C struct, walked by both the encoder and the decoder so that the two
 * cannot disagree about a field.
 *
 * The decoder's error codes: -EMSGSIZE for a message over the size limit,
 * -EPROTO for a malformed message (header, lengths, duplicates, nesting,
 * too many rows), -EINVAL for a well-formed message with bad content (a
 * missing required attribute, a string with a NUL or too long for its field).
 */
#include "proto.h"
#include "proto_attrs.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTR_HDR_LEN 4
/* A message is depth 1, a snapshot row depth 2; bounds the decoder's recursion. */
#define MAX_DEPTH 2
#define MAX_ROWS 1000000


/* Attribute numbers, from the one list (proto_attrs.h). */
enum ioacct_attr {
#define X(NAME, number, name, kind) IOACCT_ATTR_##NAME = number,
	IOACCT_PROTO_ATTRS(X)
#undef X
};

/*
 * One past the largest attribute number: a union is as large as its largest
 * member. (Member names are pasted: VERSION alone is config.h's macro.)
 */
union attr_numbers {
#define X(NAME, number, name, kind) char a_##NAME[number];
	IOACCT_PROTO_ATTRS(X)
#undef X
};
#define IOACCT_ATTR_COUNT (sizeof(union attr_numbers) + 1)

/* Never called: two rows of one number would be two equal cases, which do not compile. */
static inline void attr_numbers_unique(void)
{
	switch (0) {
#define X(NAME, number, name, kind) case number:
		IOACCT_PROTO_ATTRS(X)
#undef X
		break;
	}
}

/* encode_field()'s buffer holds the largest array kind. */
_Static_assert(IOACCT_NR_ERR_CLASSES <= IOACCT_NR_SIZE_BINS, "err classes fit the hist buffer");
/* The decoder tracks the attributes it has seen in a bit set, a bit per attribute number. */
#define SEEN_WORDS ((IOACCT_ATTR_COUNT + 63) / 64)
#define SEEN_BIT(a) (1ULL << ((a) % 64))
#define SEEN_WORD(seen, a) ((seen)[(a) / 64])

enum attr_kind {
	KIND_U32,
	KIND_I32,
	KIND_U64,
	KIND_I64,
	KIND_STRING,
	KIND_HIST,   /* IOACCT_NR_SIZE_BINS u64 */
	KIND_ERRCLS, /* IOACCT_NR_ERR_CLASSES u64 */
	KIND_U64S,   /* u64 words, exactly as many as the field holds */
	KIND_NESTED, /* a list of attributes */
};

struct attr_info {
	const char *name;
	enum attr_kind kind;
};

static const struct attr_info attr_info[IOACCT_ATTR_COUNT] = {
#define X(NAME, number, name, kind) [number] = { #name, KIND_##kind },
	IOACCT_PROTO_ATTRS(X)
#undef X
};

/*
 * Required attributes are always sent; optional ones only when not zero or
 * empty, which loses nothing since the decoder zero-fills.
 */
#define F_REQUIRED 1U
#define F_REPEAT 2U
/*
 * A 64-bit member older peers know as a U32 attribute, after its wide row: a mount's
 * key (issue 36) as MNT_KEY (150) and, while it fits 32 bits (all ones stays all ones),
 * MNT_ID (34), read when the wide one is absent; required in either form, there when one is.
 */
#define F_NARROW 4U
#define MNT_FIELDS(M, member, flags) \
	M(member, IOACCT_ATTR_MNT_KEY, flags), M(member, IOACCT_ATTR_MNT_ID, (flags) | F_NARROW)

struct field {
	uint16_t attr;
	unsigned int flags;
	size_t off;
	size_t size;
};

#define FIELD(type, member, attr, flags) \
	{ attr, flags, offsetof(type, member), sizeof(((type *)0)->member) }

/*
 * struct ioacct_counters, wherever a message carries it (`c` names it in the
 * message's struct): the one place that says how counters travel.
 */
#define COUNTER_FIELDS(M, c)                                                      \
	M(c.bytes, IOACCT_ATTR_BYTES, 0), M(c.calls, IOACCT_ATTR_CALLS, 0),       \
	M(c.errors, IOACCT_ATTR_ERRORS, 0), M(c.ns, IOACCT_ATTR_NS, 0),           \
	M(c.size_hist, IOACCT_ATTR_SIZE_HIST, 0), M(c.errclass, IOACCT_ATTR_ERR_CLASSES, 0)

#define REG(member, attr, flags) FIELD(struct ioacct_req_register, member, attr, flags)
static const struct field register_fields[] = {
	REG(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	REG(step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	REG(uid, IOACCT_ATTR_UID, F_REQUIRED),
	REG(gid, IOACCT_ATTR_GID, F_REQUIRED),
	REG(pid, IOACCT_ATTR_PID, 0),
	REG(cgroup, IOACCT_ATTR_CGROUP, 0),
	REG(cluster, IOACCT_ATTR_CLUSTER, 0),
	REG(source, IOACCT_ATTR_SOURCE, 0),
	REG(user, IOACCT_ATTR_USER, 0),
	REG(job_name, IOACCT_ATTR_JOB_NAME, 0),
	REG(workdir, IOACCT_ATTR_WORKDIR, 0),
	REG(bin_width_ns, IOACCT_ATTR_BIN_WIDTH_NS, 0),
	REG(has_array, IOACCT_ATTR_HAS_ARRAY, 0),
	REG(array_job_id, IOACCT_ATTR_ARRAY_JOB_ID, 0),
	REG(array_task_id, IOACCT_ATTR_ARRAY_TASK_ID, 0),
	REG(node_name, IOACCT_ATTR_NODE_NAME, 0),
	REG(trace_max, IOACCT_ATTR_TRACE_MAX, 0),
	REG(task_rank, IOACCT_ATTR_TASK_RANK, 0),
	REG(restart, IOACCT_ATTR_RESTART, 0),
	REG(spans, IOACCT_ATTR_SPANS, 0),
	REG(cmdline, IOACCT_ATTR_CMDLINE, 0),
};

#define FIN(member, attr, flags) FIELD(struct ioacct_req_finish, member, attr, flags)
static const struct field finish_step_fields[] = {
	FIN(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	FIN(step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	FIN(cluster, IOACCT_ATTR_CLUSTER, 0),
	FIN(state, IOACCT_ATTR_STATE, 0),
	FIN(exit_code, IOACCT_ATTR_EXIT_CODE, 0),
};

static const struct field finish_job_fields[] = {
	FIN(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	FIN(cluster, IOACCT_ATTR_CLUSTER, 0),
	FIN(state, IOACCT_ATTR_STATE, 0),
	FIN(exit_code, IOACCT_ATTR_EXIT_CODE, 0),
	FIN(report.path, IOACCT_ATTR_REPORT_PATH, 0),
	FIN(report.formats, IOACCT_ATTR_REPORT_FORMATS, 0),
	FIN(report.nodes, IOACCT_ATTR_REPORT_NODES, 0),
	FIN(report.copy_dir, IOACCT_ATTR_REPORT_COPY_DIR, 0),
	FIN(uid, IOACCT_ATTR_UID, 0),
	FIN(gid, IOACCT_ATTR_GID, 0),
	FIN(user, IOACCT_ATTR_USER, 0),
	FIN(node_name, IOACCT_ATTR_NODE_NAME, 0),
	FIN(workdir, IOACCT_ATTR_WORKDIR, 0),
	FIN(restart, IOACCT_ATTR_RESTART, 0),
};

#define PROBE(member, attr, flags) FIELD(struct ioacct_req_probe, member, attr, flags)
static const struct field probe_exe_fields[] = {
	PROBE(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	PROBE(step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	PROBE(cluster, IOACCT_ATTR_CLUSTER, 0),
};

#define QUERY(member, attr, flags) FIELD(struct ioacct_req_query, member, attr, flags)
static const struct field status_fields[] = {
	QUERY(cluster, IOACCT_ATTR_CLUSTER, 0),
};

static const struct field snapshot_fields[] = {
	QUERY(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	QUERY(cluster, IOACCT_ATTR_CLUSTER, 0),
};

static const struct field live_fields[] = {
	QUERY(cluster, IOACCT_ATTR_CLUSTER, 0),
};

#define SEL(member, attr, flags) FIELD(struct ioacct_req_select, member, attr, flags)
static const struct field query_fields[] = {
	SEL(job_ids, IOACCT_ATTR_JOB_IDS, 0),
	SEL(uids, IOACCT_ATTR_UIDS, 0),
	SEL(clusters, IOACCT_ATTR_CLUSTERS, 0),
	SEL(start_ns, IOACCT_ATTR_START_NS, 0),
	SEL(end_ns, IOACCT_ATTR_END_NS, 0),
	SEL(after_key, IOACCT_ATTR_JOB_KEY, 0),
	SEL(peaks, IOACCT_ATTR_PEAKS, 0),
	SEL(by_node, IOACCT_ATTR_BY_NODE, 0),
	SEL(local, IOACCT_ATTR_LOCAL, 0),
	SEL(duplicates, IOACCT_ATTR_DUPLICATES, 0),
};

/* The cursor reuses the sample's attributes: `more` says it is set. */
#define JOBREQ(member, attr, flags) FIELD(struct ioacct_req_job, member, attr, flags)
static const struct field job_fields[] = {
	JOBREQ(job_id, IOACCT_ATTR_JOB_ID, 0),
	JOBREQ(cluster, IOACCT_ATTR_CLUSTER, 0),
	JOBREQ(job_key, IOACCT_ATTR_JOB_KEY, 0),
	JOBREQ(after, IOACCT_ATTR_MORE, 0),
	JOBREQ(after_step, IOACCT_ATTR_STEP_ID, 0),
	MNT_FIELDS(JOBREQ, after_mnt, 0),
	JOBREQ(after_op, IOACCT_ATTR_OP, 0),
	JOBREQ(after_bin, IOACCT_ATTR_BIN, 0),
	JOBREQ(local, IOACCT_ATTR_LOCAL, 0),
	JOBREQ(run, IOACCT_ATTR_RUN, 0),
	JOBREQ(files, IOACCT_ATTR_FILES, 0),
	JOBREQ(after_rank, IOACCT_ATTR_TASK_RANK, 0),
	JOBREQ(after_dev, IOACCT_ATTR_FILE_DEV, 0),
	JOBREQ(after_ino, IOACCT_ATTR_FILE_INO, 0),
	JOBREQ(after_gen, IOACCT_ATTR_FILE_GEN, 0),
	JOBREQ(mpiio, IOACCT_ATTR_MPIIO, 0),
	JOBREQ(hdf5, IOACCT_ATTR_HDF5, 0),
	JOBREQ(after_kind, IOACCT_ATTR_H5_KIND, 0),
	JOBREQ(rpc, IOACCT_ATTR_RPC, 0),
	JOBREQ(after_prog, IOACCT_ATTR_RPC_PROG, 0),
	JOBREQ(after_vers, IOACCT_ATTR_RPC_VERS, 0),
	JOBREQ(after_proc, IOACCT_ATTR_RPC_PROC, 0),
	JOBREQ(after_flags, IOACCT_ATTR_RPC_FLAGS, 0),
	JOBREQ(after_pid, IOACCT_ATTR_PID, 0),
	JOBREQ(after_part, IOACCT_ATTR_NODE_PART_INDEX, 0),
	JOBREQ(after_path, IOACCT_ATTR_FILE_PATH, 0),
	JOBREQ(restart, IOACCT_ATTR_RESTART, 0),
	JOBREQ(run_start, IOACCT_ATTR_RUN_START, 0),
};

/* ioacctd and its workers (proto.h, struct ioacct_req_worker): each message's fields. */
#define WRK(member, attr, flags) FIELD(struct ioacct_req_worker, member, attr, flags)
static const struct field w_init_fields[] = {
	WRK(text, IOACCT_ATTR_DETAIL, F_REQUIRED),
};

static const struct field w_log_fields[] = {
	WRK(code, IOACCT_ATTR_CODE, F_REQUIRED),
	WRK(text, IOACCT_ATTR_DETAIL, 0),
};

/* w_page, w_post: the bytes of the memfd beside them. */
static const struct field w_page_fields[] = {
	WRK(size, IOACCT_ATTR_BYTES, F_REQUIRED),
};

static const struct field w_post_fields[] = {
	WRK(size, IOACCT_ATTR_BYTES, F_REQUIRED),
};

/* w_elf: code 1 for a program's executable (HDF5 linked into it), 0 for a library. */
static const struct field w_elf_fields[] = {
	WRK(text, IOACCT_ATTR_DETAIL, 0),
	WRK(code, IOACCT_ATTR_CODE, 0),
};

static const struct field w_pg_connect_fields[] = {
	WRK(code, IOACCT_ATTR_CODE, 0),
};

static const struct field w_pg_put_fields[] = {
	WRK(keys, IOACCT_ATTR_JOB_IDS, F_REQUIRED),
};

static const struct field w_pg_offer_fields[] = {
	WRK(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	WRK(cluster, IOACCT_ATTR_CLUSTER, 0),
	WRK(node, IOACCT_ATTR_NODE, 0),
	WRK(restart, IOACCT_ATTR_RESTART, 0),
	WRK(start_ns, IOACCT_ATTR_START_NS, 0),
	WRK(uid, IOACCT_ATTR_UID, 0),
	WRK(gid, IOACCT_ATTR_GID, 0),
	WRK(report.path, IOACCT_ATTR_REPORT_PATH, 0),
	WRK(report.formats, IOACCT_ATTR_REPORT_FORMATS, 0),
	WRK(report.nodes, IOACCT_ATTR_REPORT_NODES, 0),
	WRK(report.copy_dir, IOACCT_ATTR_REPORT_COPY_DIR, 0),
};

static const struct field w_pg_claim_fields[] = {
	WRK(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	WRK(cluster, IOACCT_ATTR_CLUSTER, 0),
	WRK(node, IOACCT_ATTR_NODE, 0),
	WRK(restart, IOACCT_ATTR_RESTART, 0),
	WRK(start_ns, IOACCT_ATTR_START_NS, 0),
	WRK(code, IOACCT_ATTR_CODE, 0),
};

static const struct field w_pg_written_fields[] = {
	WRK(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	WRK(cluster, IOACCT_ATTR_CLUSTER, 0),
	WRK(restart, IOACCT_ATTR_RESTART, 0),
	WRK(start_ns, IOACCT_ATTR_START_NS, 0),
	WRK(node, IOACCT_ATTR_NODE, 0),
	WRK(missing, IOACCT_ATTR_MISSING_NODES, 0),
};

static const struct field w_pg_purge_fields[] = {
	WRK(cutoff, IOACCT_ATTR_CUTOFF, F_REQUIRED),
	WRK(code, IOACCT_ATTR_CODE, 0),
};

static const struct field w_pg_downsample_fields[] = {
	WRK(cutoff, IOACCT_ATTR_CUTOFF, F_REQUIRED),
	WRK(bin_width_ns, IOACCT_ATTR_BIN_WIDTH_NS, F_REQUIRED),
	WRK(code, IOACCT_ATTR_CODE, 0),
};

#define REP(member, attr, flags) FIELD(struct ioacct_reply, member, attr, flags)
static const struct field reply_fields[] = {
	REP(status, IOACCT_ATTR_STATUS, F_REQUIRED),
	REP(error, IOACCT_ATTR_ERROR, 0),
	REP(job_id, IOACCT_ATTR_JOB_ID, 0),
	REP(job_key, IOACCT_ATTR_JOB_KEY, 0),
	REP(slot, IOACCT_ATTR_SLOT, 0),
	REP(start_mono_ns, IOACCT_ATTR_START_MONO_NS, 0),
	REP(start_ns, IOACCT_ATTR_START_NS, 0),
	REP(bin_width_ns, IOACCT_ATTR_BIN_WIDTH_NS, 0),
	REP(probe_mode, IOACCT_ATTR_PROBE_MODE, 0),
	REP(trace_error, IOACCT_ATTR_TRACE_ERROR, 0),
	REP(spans_error, IOACCT_ATTR_SPANS_ERROR, 0),
	REP(version, IOACCT_ATTR_VERSION, 0),
	REP(jobs_running, IOACCT_ATTR_JOBS_RUNNING, 0),
	REP(cgroups_watched, IOACCT_ATTR_CGROUPS_WATCHED, 0),
	REP(dropped_events, IOACCT_ATTR_DROPPED_EVENTS, 0),
	REP(uptime_s, IOACCT_ATTR_UPTIME_S, 0),
	REP(detail, IOACCT_ATTR_DETAIL, 0),
	REP(rows, IOACCT_ATTR_ROW, F_REPEAT),
	REP(dropped_bytes, IOACCT_ATTR_DROPPED_BYTES, 0),
	REP(jobs, IOACCT_ATTR_QJOB, F_REPEAT),
	REP(qsteps, IOACCT_ATTR_QSTEP, F_REPEAT),
	REP(qmounts, IOACCT_ATTR_QMOUNT, F_REPEAT),
	REP(qtotals, IOACCT_ATTR_QTOTAL, F_REPEAT),
	REP(qpeaks, IOACCT_ATTR_QPEAK, F_REPEAT),
	REP(qseries, IOACCT_ATTR_QSERIES, F_REPEAT),
	REP(qnodes, IOACCT_ATTR_QNODE, F_REPEAT),
	REP(files_read, IOACCT_ATTR_FILES, 0),
	REP(qfiles, IOACCT_ATTR_QFILE, F_REPEAT),
	REP(mpiio_read, IOACCT_ATTR_MPIIO, 0),
	REP(qmpiio, IOACCT_ATTR_QMPIIO, F_REPEAT),
	REP(hdf5_read, IOACCT_ATTR_HDF5, 0),
	REP(qh5, IOACCT_ATTR_QHDF5, F_REPEAT),
	REP(rpc_read, IOACCT_ATTR_RPC, 0),
	REP(qrpc, IOACCT_ATTR_QRPC, F_REPEAT),
	REP(more, IOACCT_ATTR_MORE, 0),
	REP(report_merged, IOACCT_ATTR_REPORT_MERGED, 0),
	REP(watches, IOACCT_ATTR_WATCH, F_REPEAT),
	/* A worker's reply: the code, an ELF file's offsets, a claimed merged report. */
	REP(w.code, IOACCT_ATTR_CODE, 0),
	REP(w.retry_after_ms, IOACCT_ATTR_RETRY_AFTER, 0),
	REP(w.offsets, IOACCT_ATTR_OFFSETS, 0),
	REP(w.report.path, IOACCT_ATTR_REPORT_PATH, 0),
	REP(w.report.formats, IOACCT_ATTR_REPORT_FORMATS, 0),
	REP(w.report.nodes, IOACCT_ATTR_REPORT_NODES, 0),
	REP(w.report.copy_dir, IOACCT_ATTR_REPORT_COPY_DIR, 0),
	REP(w.uid, IOACCT_ATTR_UID, 0),
	REP(w.gid, IOACCT_ATTR_GID, 0),
	REP(w.missing, IOACCT_ATTR_MISSING_NODES, 0),
	REP(w.purged.runs, IOACCT_ATTR_PURGED_RUNS, 0),
	REP(w.purged.parts, IOACCT_ATTR_PURGED_PARTS, 0),
	REP(w.purged.series, IOACCT_ATTR_PURGED_SERIES, 0),
	REP(w.purged.months, IOACCT_ATTR_PURGED_MONTHS, 0),
};

#define ROW(member, attr, flags) FIELD(struct ioacct_snap_row, member, attr, flags)
static const struct field row_fields[] = {
	ROW(step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	ROW(op, IOACCT_ATTR_OP, F_REQUIRED),
	MNT_FIELDS(ROW, mount.mnt_id, F_REQUIRED),
	ROW(mount.path, IOACCT_ATTR_MNT_PATH, 0),
	ROW(mount.fstype, IOACCT_ATTR_MNT_FSTYPE, 0),
	ROW(mount.source, IOACCT_ATTR_MNT_SOURCE, 0),
	COUNTER_FIELDS(ROW, c),
};

#define WATCH(member, attr, flags) FIELD(struct ioacct_watch_row, member, attr, flags)
static const struct field watch_fields[] = {
	WATCH(step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	WATCH(hier, IOACCT_ATTR_HIER, F_REQUIRED),
	WATCH(cgroup, IOACCT_ATTR_CGROUP, F_REQUIRED),
};

#define QJOB(member, attr, flags) FIELD(struct ioacct_job, member, attr, flags)
static const struct field qjob_fields[] = {
	QJOB(key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QJOB(job_id, IOACCT_ATTR_JOB_ID, F_REQUIRED),
	QJOB(cluster, IOACCT_ATTR_CLUSTER, 0),
	QJOB(node, IOACCT_ATTR_NODE, 0),
	QJOB(source, IOACCT_ATTR_SOURCE, 0),
	QJOB(uid, IOACCT_ATTR_UID, 0),
	QJOB(gid, IOACCT_ATTR_GID, 0),
	QJOB(user, IOACCT_ATTR_USER, 0),
	QJOB(name, IOACCT_ATTR_JOB_NAME, 0),
	QJOB(workdir, IOACCT_ATTR_WORKDIR, 0),
	QJOB(array_job_id, IOACCT_ATTR_ARRAY_JOB_ID, 0),
	QJOB(array_task_id, IOACCT_ATTR_ARRAY_TASK_ID, 0),
	QJOB(start_ns, IOACCT_ATTR_START_NS, 0),
	QJOB(end_ns, IOACCT_ATTR_END_NS, 0),
	QJOB(state, IOACCT_ATTR_STATE, 0),
	QJOB(exit_code, IOACCT_ATTR_EXIT_CODE, 0),
	QJOB(probe_mode, IOACCT_ATTR_PROBE_MODE, 0),
	QJOB(bin_width_ns, IOACCT_ATTR_BIN_WIDTH_NS, 0),
	QJOB(dropped_events, IOACCT_ATTR_DROPPED_EVENTS, 0),
	QJOB(dropped_bytes, IOACCT_ATTR_DROPPED_BYTES, 0),
	QJOB(skew_ns, IOACCT_ATTR_SKEW_NS, 0),
	QJOB(restart, IOACCT_ATTR_RESTART, 0),
	QJOB(orig_bin_width_ns, IOACCT_ATTR_ORIG_BIN_WIDTH_NS, 0),
	QJOB(run_start, IOACCT_ATTR_RUN_START, 0),
	QJOB(cmdline, IOACCT_ATTR_CMDLINE, 0),
	QJOB(lib_opens_missed, IOACCT_ATTR_LIB_OPENS_MISSED, 0),
};

#define QSTEP(member, attr, flags) FIELD(struct ioacct_qstep_row, member, attr, flags)
static const struct field qstep_fields[] = {
	QSTEP(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QSTEP(step.step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	QSTEP(step.start_ns, IOACCT_ATTR_START_NS, 0),
	QSTEP(step.end_ns, IOACCT_ATTR_END_NS, 0),
	QSTEP(step.state, IOACCT_ATTR_STATE, 0),
	QSTEP(step.exit_code, IOACCT_ATTR_EXIT_CODE, 0),
	/* Left empty for clients; an outbox job's pages to the cluster store's worker carry it. */
	QSTEP(step.cgroup, IOACCT_ATTR_CGROUP, 0),
};

#define QMOUNT(member, attr, flags) FIELD(struct ioacct_qmount_row, member, attr, flags)
static const struct field qmount_fields[] = {
	QMOUNT(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	MNT_FIELDS(QMOUNT, mount.mnt_id, F_REQUIRED),
	QMOUNT(mount.path, IOACCT_ATTR_MNT_PATH, 0),
	QMOUNT(mount.fstype, IOACCT_ATTR_MNT_FSTYPE, 0),
	QMOUNT(mount.source, IOACCT_ATTR_MNT_SOURCE, 0),
};

/* Totals and series rows alike: one table, so that a new counter reaches both. */
#define QTOTAL(member, attr, flags) FIELD(struct ioacct_qtotal_row, member, attr, flags)
static const struct field qtotal_fields[] = {
	QTOTAL(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QTOTAL(s.step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	MNT_FIELDS(QTOTAL, s.mnt_id, F_REQUIRED),
	QTOTAL(s.op, IOACCT_ATTR_OP, F_REQUIRED),
	QTOTAL(s.bin, IOACCT_ATTR_BIN, 0),
	COUNTER_FIELDS(QTOTAL, s.c),
};

#define QNODE(member, attr, flags) FIELD(struct ioacct_qnode_row, member, attr, flags)
static const struct field qnode_fields[] = {
	QNODE(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QNODE(p.node, IOACCT_ATTR_NODE, F_REQUIRED),
	QNODE(p.start_ns, IOACCT_ATTR_START_NS, 0),
	QNODE(p.read_bytes, IOACCT_ATTR_READ_BYTES, 0),
	QNODE(p.write_bytes, IOACCT_ATTR_WRITE_BYTES, 0),
	QNODE(p.reads, IOACCT_ATTR_READS, 0),
	QNODE(p.writes, IOACCT_ATTR_WRITES, 0),
	QNODE(p.ns, IOACCT_ATTR_NS, 0),
};

/* The record rows of a job reply's pages: files, MPI-IO, HDF5, RPC (proto_rows.h). */
#include "proto_rows.h"

#define QPEAK(member, attr, flags) FIELD(struct ioacct_qpeak_row, member, attr, flags)
static const struct field qpeak_fields[] = {
	QPEAK(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QPEAK(step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	MNT_FIELDS(QPEAK, mnt_id, F_REQUIRED),
	QPEAK(read_bytes, IOACCT_ATTR_PEAK_READ, 0),
	QPEAK(write_bytes, IOACCT_ATTR_PEAK_WRITE, 0),
};

/*
 * The lists of nested attributes a reply may carry, each into an array of
 * the reply. At most `max` of a kind, which bounds what a peer can make the
 * decoder allocate.
 */
struct nested {
	uint16_t attr;
	const char *name; /* in messages: "reply row 3", "5 rows" */
	const struct field *fields;
	size_t nfields;
	size_t size;      /* of one element */
	size_t array_off; /* the array's pointer in struct ioacct_reply */
	size_t count_off; /* its size_t count */
	size_t max;
};

#define NESTED(attr, name, fields, type, array, count, max)                              \
	{ attr, name, fields, ARRAY_SIZE(fields), sizeof(type),                            \
	  offsetof(struct ioacct_reply, array), offsetof(struct ioacct_reply, count), max }
static const struct nested nested[] = {
	NESTED(IOACCT_ATTR_ROW, "row", row_fields, struct ioacct_snap_row, rows, nrows, MAX_ROWS),
	NESTED(IOACCT_ATTR_QJOB, "job", qjob_fields, struct ioacct_job, jobs, njobs, 4096),
	NESTED(IOACCT_ATTR_QSTEP, "step", qstep_fields, struct ioacct_qstep_row, qsteps, nqsteps,
	       IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QMOUNT, "mount", qmount_fields, struct ioacct_qmount_row, qmounts,
	       nqmounts, IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QTOTAL, "total", qtotal_fields, struct ioacct_qtotal_row, qtotals,
	       nqtotals, MAX_ROWS),
	NESTED(IOACCT_ATTR_QPEAK, "peak", qpeak_fields, struct ioacct_qpeak_row, qpeaks, nqpeaks,
	       MAX_ROWS),
	NESTED(IOACCT_ATTR_QSERIES, "series row", qtotal_fields, struct ioacct_qtotal_row, qseries,
	       nqseries, MAX_ROWS),
	NESTED(IOACCT_ATTR_WATCH, "watch", watch_fields, struct ioacct_watch_row, watches, nwatches,
	       IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QNODE, "node part", qnode_fields, struct ioacct_qnode_row, qnodes,
	       nqnodes, IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QFILE, "file", qfile_fields, struct ioacct_qfile_row, qfiles, nqfiles,
	       IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QMPIIO, "MPI-IO record", qmpiio_fields, struct ioacct_qmpiio_row, qmpiio,
	       nqmpiio, IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QHDF5, "HDF5 record", qh5_fields, struct ioacct_qh5_row, qh5, nqh5,
	       IOACCT_PROTO_MAX_QROWS),
	NESTED(IOACCT_ATTR_QRPC, "RPC row", qrpc_fields, struct ioacct_qrpc_row, qrpc, nqrpc,
	       IOACCT_PROTO_MAX_QROWS),
};

static const struct nested *nested_find(uint16_t attr)
{
	for (size_t i = 0; i < ARRAY_SIZE(nested); i++)
		if (nested[i].attr == attr)
			return &nested[i];
	return NULL;
}

/* The array and count of a nested list, through memcpy: they are typed pointers in the reply. */
static void *nested_array(const struct nested *n, const struct ioacct_reply *rep)
{
	void *p;

	memcpy(&p, (const uint8_t *)rep + n->array_off, sizeof(p));
	return p;
}

static void nested_set_array(const struct nested *n, struct ioacct_reply *rep, void *p)
{
	memcpy((uint8_t *)rep + n->array_off, &p, sizeof(p));
}

static size_t nested_count(const struct nested *n, const struct ioacct_reply *rep)
{
	size_t c;

	memcpy(&c, (const uint8_t *)rep + n->count_off, sizeof(c));
	return c;
}

static void nested_set_count(const struct nested *n, struct ioacct_reply *rep, size_t c)
{
	memcpy((uint8_t *)rep + n->count_off, &c, sizeof(c));
}

struct schema {
	uint16_t type;
	size_t body_off; /* where the fields start in struct ioacct_request */
	const struct field *fields;
	size_t nfields;
};

static const struct schema request_schemas[] = {
#define X(NAME, number, name, body) \
	{ IOACCT_MSG_##NAME, offsetof(struct ioacct_request, body), name##_fields, \
	  ARRAY_SIZE(name##_fields) },
	IOACCT_PROTO_REQUESTS(X)
#undef X
};

static const struct schema *request_schema(uint16_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(request_schemas); i++)
		if (request_schemas[i].type == type)
			return &request_schemas[i];
	return NULL;
}

const char *ioacct_msg_type_name(uint16_t type)
{
	switch (type) {
#define X(NAME, number, name, body) \
	case IOACCT_MSG_##NAME:     \
		return #name;
		IOACCT_PROTO_REQUESTS(X)
#undef X
	case IOACCT_MSG_REPLY:
		return "reply";
	default:
		return "unknown";
	}
}

static bool attr_known(uint16_t type)
{
	return type < IOACCT_ATTR_COUNT && attr_info[type].name;
}

static const char *attr_name(uint16_t type)
{
	return attr_known(type) ? attr_info[type].name : "unknown";
}

/* The value length of a fixed-size kind, 0 for variable ones. */
static size_t kind_len(enum attr_kind kind)
{
	switch (kind) {
	case KIND_U32:
	case KIND_I32:
		return 4;
	case KIND_U64:
	case KIND_I64:
		return 8;
	case KIND_HIST:
		return 8 * IOACCT_NR_SIZE_BINS;
	case KIND_ERRCLS:
		return 8 * IOACCT_NR_ERR_CLASSES;
	case KIND_STRING:
	case KIND_U64S:
	case KIND_NESTED:
		break;
	}
	return 0;
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* The size of one number of a numeric kind: 4 or 8 bytes. */
static size_t kind_word(enum attr_kind kind)
{
	return kind == KIND_U32 || kind == KIND_I32 ? 4 : 8;
}

/*
 * n bytes of numbers of `word` bytes each, from host order at src to
 * little-endian at dst, or the other way: either is the same reordering of
 * each word's bytes (none on a little-endian host, a reversal on others).
 */
static void words_le(uint8_t *dst, const uint8_t *src, size_t n, size_t word)
{
	uint64_t x;
	uint32_t y;

	for (size_t i = 0; i < n; i += word) {
		if (word == 4) {
			memcpy(&y, src + i, sizeof(y));
			put_le32(dst + i, y);
		} else {
			memcpy(&x, src + i, sizeof(x));
			put_le64(dst + i, x);
		}
	}
}

/* The one error helper (util.h), under this file's own name. */
#define fail(...) ioacct_seterr(__VA_ARGS__)

/* ---- buffers ---- */

void ioacct_buf_free(struct ioacct_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void ioacct_buf_reset(struct ioacct_buf *b)
{
	b->len = 0;
}

int ioacct_buf_reserve(struct ioacct_buf *b, size_t extra)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *data;

	if (extra > SIZE_MAX - b->len)
		return -ENOMEM;
	if (b->len + extra <= b->cap)
		return 0;
	while (cap < b->len + extra) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	data = realloc(b->data, cap);
	if (!data)
		return -ENOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

/* ---- encoding ---- */

/* Appends an attribute header announcing `len` bytes of value. */
static int attr_begin(struct ioacct_buf *b, uint16_t type, size_t len)
{
	int ret;

	if (len > UINT16_MAX)
		return -EMSGSIZE;
	ret = ioacct_buf_reserve(b, ATTR_HDR_LEN);
	if (ret)
		return ret;
	put_le16(b->data + b->len, type);
	put_le16(b->data + b->len + 2, (uint16_t)len);
	b->len += ATTR_HDR_LEN;
	return 0;
}

static int attr_put(struct ioacct_buf *b, uint16_t type, const void *val, size_t len)
{
	int ret;

	ret = attr_begin(b, type, len);
	if (ret)
		return ret;
	ret = ioacct_buf_reserve(b, pad4(len));
	if (ret)
		return ret;
	memcpy(b->data + b->len, val, len);
	memset(b->data + b->len + len, 0, pad4(len) - len);
	b->len += pad4(len);
	return 0;
}

static bool is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int encode_list(struct ioacct_buf *b, const struct field *fields, size_t nfields,
		       const uint8_t *base, const struct ioacct_reply *rep);

static int encode_rows(struct ioacct_buf *b, uint16_t attr, const struct ioacct_reply *rep)
{
	const struct nested *n = nested_find(attr);
	const uint8_t *array;
	size_t start, len, count;
	int ret;

	if (!n)
		return -EINVAL;
	array = nested_array(n, rep);
	count = nested_count(n, rep);
	if (count && !array)
		return -EINVAL;
	for (size_t i = 0; i < count; i++) {
		start = b->len;
		ret = attr_begin(b, attr, 0);
		if (ret)
			return ret;
		ret = encode_list(b, n->fields, n->nfields, array + i * n->size, NULL);
		if (ret)
			return ret;
		/* The row's attributes are padded already, so the row needs none. */
		len = b->len - start - ATTR_HDR_LEN;
		if (len > UINT16_MAX)
			return -EMSGSIZE;
		put_le16(b->data + start + 2, (uint16_t)len);
	}
	return 0;
}

/* The field's u64 words, little-endian in place; sent unless all are zero (and not required). */
static int encode_u64s(struct ioacct_buf *b, const struct field *f, const uint8_t *src)
{
	int ret;

	if (is_zero(src, f->size) && !(f->flags & F_REQUIRED))
		return 0;
	ret = attr_begin(b, f->attr, f->size);
	if (!ret)
		ret = ioacct_buf_reserve(b, pad4(f->size));
	if (ret)
		return ret;
	words_le(b->data + b->len, src, f->size, 8);
	b->len += f->size; /* a multiple of 8: no padding */
	return 0;
}

static int encode_field(struct ioacct_buf *b, const struct field *f, const uint8_t *base,
			const struct ioacct_reply *rep)
{
	enum attr_kind kind = attr_info[f->attr].kind;
	const uint8_t *src = base + f->off;
	bool required = f->flags & F_REQUIRED;
	uint8_t v[8 * IOACCT_NR_SIZE_BINS];
	size_t n = kind_len(kind);

	if (f->flags & F_NARROW) {
		uint64_t wide;

		memcpy(&wide, src, sizeof(wide));
		if ((!wide && !required) || (wide >= UINT32_MAX && wide != UINT64_MAX))
			return 0;
		put_le32(v, (uint32_t)wide); /* all ones stays all ones */
		return attr_put(b, f->attr, v, 4);
	}
	/* The numeric kinds: n bytes of numbers, sent unless all are zero. */
	if (n) {
		if (is_zero(src, n) && !required)
			return 0;
		words_le(v, src, n, kind_word(kind));
		return attr_put(b, f->attr, v, n);
	}
	if (kind == KIND_NESTED)
		return rep ? encode_rows(b, f->attr, rep) : -EINVAL;
	if (kind == KIND_U64S)
		return encode_u64s(b, f, src);
	n = strnlen((const char *)src, f->size);
	if (n == f->size)
		return -EINVAL; /* not terminated: the decoder could not store it */
	if (!n && !required)
		return 0;
	return attr_put(b, f->attr, src, n);
}

/* `rep` is where rows come from; only the reply schema has them. */
static int encode_list(struct ioacct_buf *b, const struct field *fields, size_t nfields,
		       const uint8_t *base, const struct ioacct_reply *rep)
{
	int ret;

	for (size_t i = 0; i < nfields; i++) {
		ret = encode_field(b, &fields[i], base, rep);
		if (ret)
			return ret;
	}
	return 0;
}

static int msg_begin(struct ioacct_buf *b, uint16_t type, uint32_t seq)
{
	int ret;

	ret = ioacct_buf_reserve(b, IOACCT_PROTO_HDR_LEN);
	if (ret)
		return ret;
	put_le32(b->data + b->len, IOACCT_PROTO_MAGIC);
	put_le16(b->data + b->len + 4, IOACCT_PROTO_VERSION);
	put_le16(b->data + b->len + 6, type);
	put_le32(b->data + b->len + 8, 0);
	put_le32(b->data + b->len + 12, seq);
	b->len += IOACCT_PROTO_HDR_LEN;
	return 0;
}

/* Fills in the length of the message that starts at `start`. */
static int msg_end(struct ioacct_buf *b, size_t start)
{
	size_t total = b->len - start;

	if (total > IOACCT_PROTO_MAX_MSG)
		return -EMSGSIZE;
	put_le32(b->data + start + 8, (uint32_t)(total - IOACCT_PROTO_HDR_LEN));
	return 0;
}

/* One whole message of `type` with the attributes of `fields` at base, or nothing at all. */
static int encode_msg(struct ioacct_buf *out, uint16_t type, uint32_t seq, const struct field *fields,
		      size_t nfields, const uint8_t *base, const struct ioacct_reply *rep)
{
	size_t start = out->len;
	int ret;

	ret = msg_begin(out, type, seq);
	if (!ret)
		ret = encode_list(out, fields, nfields, base, rep);
	if (!ret)
		ret = msg_end(out, start);
	/* Never leave half a message behind. */
	if (ret)
		out->len = start;
	return ret;
}

static int encode_request(struct ioacct_buf *out, const struct ioacct_request *req, uint32_t seq)
{
	const struct schema *s = request_schema(req->type);

	if (!s)
		return -EINVAL;
	return encode_msg(out, req->type, seq, s->fields, s->nfields,
			  (const uint8_t *)req + s->body_off, NULL);
}

int ioacct_proto_encode_request(struct ioacct_buf *out, const struct ioacct_request *req)
{
	return encode_request(out, req, req->seq);
}

int ioacct_proto_encode_request_seq(struct ioacct_buf *out, const struct ioacct_request *req,
				    uint32_t seq)
{
	return encode_request(out, req, seq);
}

int ioacct_proto_encode_reply(struct ioacct_buf *out, const struct ioacct_reply *rep)
{
	/* The decoder insists on a message for every error: fail here, not there. */
	if (rep->status != 0 && !rep->error[0])
		return -EINVAL;
	return encode_msg(out, IOACCT_MSG_REPLY, rep->seq, reply_fields, ARRAY_SIZE(reply_fields),
			  (const uint8_t *)rep, rep);
}

/* ---- decoding ---- */

struct attr {
	uint16_t type;
	uint16_t len;
	const uint8_t *val;
};

struct cursor {
	const uint8_t *p;
	size_t left;
};

/* A list of attributes being decoded into a struct. */
struct list {
	const char *ctx; /* "register message", "reply row 3": starts every error */
	const struct field *fields;
	size_t nfields;
	uint8_t *base;
	unsigned int depth;
	struct ioacct_reply *rep; /* where rows go; NULL outside a reply */
};

/* 1 with the next attribute in *a, 0 at the end of the list, or -EPROTO. */
static int attr_next(struct cursor *c, struct attr *a, const char *ctx, char *err, size_t errlen)
{
	if (c->left == 0)
		return 0;
	if (c->left < ATTR_HDR_LEN)
		return fail(err, errlen, -EPROTO,
			    "%s: %zu bytes left at the end, too few for an attribute", ctx, c->left);
	a->type = get_le16(c->p);
	a->len = get_le16(c->p + 2);
	a->val = c->p + ATTR_HDR_LEN;
	if (a->len > c->left - ATTR_HDR_LEN)
		return fail(err, errlen, -EPROTO,
			    "%s: attribute %u (%s) has length %u, more than the %zu bytes left",
			    ctx, a->type, attr_name(a->type), a->len, c->left - ATTR_HDR_LEN);
	if (pad4(ATTR_HDR_LEN + a->len) > c->left)
		return fail(err, errlen, -EPROTO, "%s: attribute %u (%s) lacks its padding", ctx,
			    a->type, attr_name(a->type));
	c->p += pad4(ATTR_HDR_LEN + a->len);
	c->left -= pad4(ATTR_HDR_LEN + a->len);
	return 1;
}

/* What a known attribute must look like wherever it appears. */
static int attr_check(const struct attr *a, unsigned int depth, const char *ctx, char *err,
		      size_t errlen)
{
	enum attr_kind kind = attr_info[a->type].kind;
	const uint8_t *nul;

	if (kind_len(kind) && a->len != kind_len(kind))
		return fail(err, errlen, -EPROTO, "%s: attribute %u (%s) has length %u, expected %zu",
			    ctx, a->type, attr_name(a->type), a->len, kind_len(kind));
	if (kind == KIND_U64S && a->len % 8)
		return fail(err, errlen, -EPROTO, "%s: attribute %u (%s) has length %u, not whole u64 words",
			    ctx, a->type, attr_name(a->type), a->len);
	if (kind == KIND_STRING && (nul = memchr(a->val, 0, a->len)))
		return fail(err, errlen, -EINVAL, "%s: attribute %u (%s) has a NUL byte at offset %zu",
			    ctx, a->type, attr_name(a->type), (size_t)(nul - a->val));
	if (kind == KIND_NESTED && depth >= MAX_DEPTH)
		return fail(err, errlen, -EPROTO, "%s: attribute %u (%s) nests deeper than %d levels",
			    ctx, a->type, attr_name(a->type), MAX_DEPTH);
	return 0;
}

static const struct field *field_find(const struct list *l, uint16_t type)
{
	for (size_t i = 0; i < l->nfields; i++)
		if (l->fields[i].attr == type)
			return &l->fields[i];
	return NULL;
}

static int decode_list(const struct list *l, const uint8_t *p, size_t n, char *err, size_t errlen);

/* Rows were counted before; their array has room for this one. */
static int decode_row(const struct list *l, const struct attr *a, char *err, size_t errlen)
{
	const struct nested *n = nested_find(a->type);
	size_t i;
	char ctx[48];
	struct list row = {
		.ctx = ctx,
		.depth = l->depth + 1,
	};

	if (!n || !l->rep)
		return fail(err, errlen, -EPROTO, "%s: attribute %u (%s) is not a list here", l->ctx,
			    a->type, attr_name(a->type));
	i = nested_count(n, l->rep);
	row.fields = n->fields;
	row.nfields = n->nfields;
	row.base = (uint8_t *)nested_array(n, l->rep) + i * n->size;
	snprintf(ctx, sizeof(ctx), "reply %s %zu", n->name, i);
	nested_set_count(n, l->rep, i + 1);
	return decode_list(&row, a->val, a->len, err, errlen);
}

static int decode_attr(const struct list *l, const struct field *f, const struct attr *a,
		       char *err, size_t errlen)
{
	enum attr_kind kind = attr_info[a->type].kind;
	uint8_t *dst = l->base + f->off;

	if (f->flags & F_NARROW) {
		uint64_t wide = get_le32(a->val) == UINT32_MAX ? UINT64_MAX : get_le32(a->val);

		memcpy(dst, &wide, sizeof(wide));
		return 0;
	}
	/* A numeric kind: attr_check() saw that the length is kind_len(kind). */
	if (kind_len(kind)) {
		words_le(dst, a->val, kind_len(kind), kind_word(kind));
		return 0;
	}
	if (kind == KIND_NESTED)
		return decode_row(l, a, err, errlen);
	if (kind == KIND_U64S) {
		if (a->len != f->size)
			return fail(err, errlen, -EINVAL, "%s: attribute %u (%s) has length %u, expected %zu",
				    l->ctx, a->type, attr_name(a->type), a->len, f->size);
		words_le(dst, a->val, a->len, 8);
		return 0;
	}
	if (a->len >= f->size)
		return fail(err, errlen, -EINVAL, "%s: attribute %u (%s) has length %u, more than %zu",
			    l->ctx, a->type, attr_name(a->type), a->len, f->size - 1);
	memcpy(dst, a->val, a->len);
	dst[a->len] = '\0';
	return 0;
}

/* Whether an attribute of another field of l that carries f's member was seen (F_NARROW). */
static bool member_seen(const struct list *l, const struct field *f, const uint64_t *seen)
{
	for (size_t i = 0; i < l->nfields; i++)
		if (&l->fields[i] != f && l->fields[i].off == f->off &&
		    (SEEN_WORD(seen, l->fields[i].attr) & SEEN_BIT(l->fields[i].attr)))
			return true;
	return false;
}

static int decode_list(const struct list *l, const uint8_t *p, size_t n, char *err, size_t errlen)
{
	struct cursor cur = { p, n };
	const struct field *f;
	uint64_t seen[SEEN_WORDS] = { 0 };
	struct attr a;
	int ret;

	while ((ret = attr_next(&cur, &a, l->ctx, err, errlen)) > 0) {
		/* Unknown: from a newer peer, ignored. */
		if (!attr_known(a.type))
			continue;
		ret = attr_check(&a, l->depth, l->ctx, err, errlen);
		if (ret)
			return ret;
		/* Known, but not part of this message: ignored likewise. */
		f = field_find(l, a.type);
		if (!f)
			continue;
		if ((SEEN_WORD(seen, a.type) & SEEN_BIT(a.type)) && !(f->flags & F_REPEAT))
			return fail(err, errlen, -EPROTO, "%s: attribute %u (%s) appears twice",
				    l->ctx, a.type, attr_name(a.type));
		SEEN_WORD(seen, a.type) |= SEEN_BIT(a.type);
		if ((f->flags & F_NARROW) && member_seen(l, f, seen))
			continue; /* its wide form is here already, and says more */
		ret = decode_attr(l, f, &a, err, errlen);
		if (ret)
			return ret;
	}
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < l->nfields; i++) {
		f = &l->fields[i];
		if ((f->flags & F_REQUIRED) && !(SEEN_WORD(seen, f->attr) & SEEN_BIT(f->attr)) &&
		    !member_seen(l, f, seen))
			return fail(err, errlen, -EINVAL, "%s lacks attribute %u (%s)", l->ctx,
				    f->attr, attr_name(f->attr));
	}
	return 0;
}

int ioacct_proto_header_check(const uint8_t *hdr, size_t *msg_len, char *err, size_t errlen)
{
	uint32_t magic = get_le32(hdr);
	uint16_t version = get_le16(hdr + 4);
	uint32_t len = get_le32(hdr + 8);

	if (magic != IOACCT_PROTO_MAGIC)
		return fail(err, errlen, -EPROTO, "bad magic 0x%08x, not an ioacct message", magic);
	if (version != IOACCT_PROTO_VERSION)
		return fail(err, errlen, -EPROTO,
			    "protocol version %u, this side speaks %u: run the same ioacct release on both ends",
			    version, IOACCT_PROTO_VERSION);
	if (len > IOACCT_PROTO_MAX_MSG - IOACCT_PROTO_HDR_LEN)
		return fail(err, errlen, -EMSGSIZE,
			    "message announces %zu bytes, more than the limit of %u",
			    (size_t)len + IOACCT_PROTO_HDR_LEN, IOACCT_PROTO_MAX_MSG);
	*msg_len = (size_t)len + IOACCT_PROTO_HDR_LEN;
	return 0;
}

static int header_parse(const uint8_t *msg, size_t len, uint16_t *type, uint32_t *seq, char *err,
			size_t errlen)
{
	size_t total;
	int ret;

	if (len < IOACCT_PROTO_HDR_LEN)
		return fail(err, errlen, -EPROTO, "message of %zu bytes, shorter than its %d-byte header",
			    len, IOACCT_PROTO_HDR_LEN);
	ret = ioacct_proto_header_check(msg, &total, err, errlen);
	if (ret)
		return ret;
	if (total != len)
		return fail(err, errlen, -EPROTO, "message of %zu bytes, but its header announces %zu",
			    len, total);
	*type = get_le16(msg + 6);
	*seq = get_le32(msg + 12);
	return 0;
}

int ioacct_proto_decode_request(const uint8_t *msg, size_t len, struct ioacct_request *req,
				char *err, size_t errlen)
{
	struct ioacct_req_register *reg = &req->u.reg;
	const struct schema *s;
	struct list l;
	char ctx[48];
	int ret;

	memset(req, 0, sizeof(*req));
	/* type and seq are kept even when the rest is bad, so an error can be answered. */
	ret = header_parse(msg, len, &req->type, &req->seq, err, errlen);
	if (ret)
		return ret;
	s = request_schema(req->type);
	if (!s)
		return fail(err, errlen, -EPROTO, "message type %u (%s) is not a request", req->type,
			    ioacct_msg_type_name(req->type));
	snprintf(ctx, sizeof(ctx), "%s message", ioacct_msg_type_name(req->type));
	l = (struct list){
		.ctx = ctx,
		.fields = s->fields,
		.nfields = s->nfields,
		.base = (uint8_t *)req + s->body_off,
		.depth = 1,
	};
	ret = decode_list(&l, msg + IOACCT_PROTO_HDR_LEN, len - IOACCT_PROTO_HDR_LEN, err, errlen);
	if (ret)
		return ret;
	if (req->type == IOACCT_MSG_REGISTER && reg->pid <= 0 && !reg->cgroup[0])
		return fail(err, errlen, -EINVAL,
			    "%s has neither a pid (attribute %u) nor a cgroup (attribute %u)", ctx,
			    IOACCT_ATTR_PID, IOACCT_ATTR_CGROUP);
	return 0;
}

/* Counts the rows of each list of a reply so that they are allocated once, and no more than sent. */
static int count_rows(const uint8_t *p, size_t n, size_t *nrows, char *err, size_t errlen)
{
	struct cursor cur = { p, n };
	struct attr a;
	int ret;

	memset(nrows, 0, ARRAY_SIZE(nested) * sizeof(*nrows));
	while ((ret = attr_next(&cur, &a, "reply message", err, errlen)) > 0)
		for (size_t i = 0; i < ARRAY_SIZE(nested); i++)
			if (a.type == nested[i].attr)
				nrows[i]++;
	return ret;
}

static int alloc_rows(struct ioacct_reply *rep, const size_t *nrows, char *err, size_t errlen)
{
	void *p;

	for (size_t i = 0; i < ARRAY_SIZE(nested); i++) {
		const struct nested *n = &nested[i];

		if (nrows[i] > n->max)
			return fail(err, errlen, -EPROTO, "reply message has %zu %ss, more than %zu",
				    nrows[i], n->name, n->max);
		if (!nrows[i])
			continue;
		p = calloc(nrows[i], n->size);
		if (!p)
			return fail(err, errlen, -ENOMEM, "no memory for %zu %ss", nrows[i], n->name);
		nested_set_array(n, rep, p);
	}
	return 0;
}

int ioacct_proto_decode_reply(const uint8_t *msg, size_t len, struct ioacct_reply *rep,
			      char *err, size_t errlen)
{
	struct list l = {
		.ctx = "reply message",
		.fields = reply_fields,
		.nfields = ARRAY_SIZE(reply_fields),
		.base = (uint8_t *)rep,
		.depth = 1,
		.rep = rep,
	};
	size_t nrows[ARRAY_SIZE(nested)];
	uint16_t type;
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = header_parse(msg, len, &type, &rep->seq, err, errlen);
	if (ret)
		goto out;
	if (type != IOACCT_MSG_REPLY) {
		ret = fail(err, errlen, -EPROTO, "message type %u (%s) is not a reply", type,
			   ioacct_msg_type_name(type));
		goto out;
	}
	ret = count_rows(msg + IOACCT_PROTO_HDR_LEN, len - IOACCT_PROTO_HDR_LEN, nrows, err,
			 errlen);
	if (ret)
		goto out;
	ret = alloc_rows(rep, nrows, err, errlen);
	if (ret)
		goto out;
	ret = decode_list(&l, msg + IOACCT_PROTO_HDR_LEN, len - IOACCT_PROTO_HDR_LEN, err, errlen);
	if (ret)
		goto out;
	if (rep->status != 0 && !rep->error[0])
		ret = fail(err, errlen, -EINVAL, "reply message has status %d but no attribute %u (%s)",
			   rep->status, IOACCT_ATTR_ERROR, attr_name(IOACCT_ATTR_ERROR));
out:
	if (ret)
		ioacct_reply_free(rep);
	return ret;
}

void ioacct_reply_free(struct ioacct_reply *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(nested); i++) {
		free(nested_array(&nested[i], r));
		nested_set_array(&nested[i], r, NULL);
		nested_set_count(&nested[i], r, 0);
	}
}

void ioacct_reply_error(struct ioacct_reply *r, int status, const char *fmt, ...)
{
	va_list ap;

	ioacct_reply_free(r);
	r->status = status;
	va_start(ap, fmt);
	ioacct_vseterr(r->error, sizeof(r->error), status, fmt, ap);
	va_end(ap);
}

/* Attribute header and value, padded. */
static size_t attr_size(size_t len)
{
	return ATTR_HDR_LEN + pad4(len);
}

static size_t list_bound(const struct field *fields, size_t nfields)
{
	size_t n = ATTR_HDR_LEN; /* the list's own header */

	for (size_t i = 0; i < nfields; i++) {
		size_t len = kind_len(attr_info[fields[i].attr].kind);

		/* A string's own length is added apart; here its header and padding. */
		n += len ? attr_size(len) : ATTR_HDR_LEN + 3;
	}
	return n;
}

size_t ioacct_proto_query_job_size(const struct ioacct_job *job, size_t nsteps,
				   const struct ioacct_mount *mounts, size_t nmounts, size_t ntotals,
				   size_t npeaks)
{
	size_t n = list_bound(qjob_fields, ARRAY_SIZE(qjob_fields));

	n += strnlen(job->cluster, sizeof(job->cluster)) + strnlen(job->node, sizeof(job->node)) +
	     strnlen(job->source, sizeof(job->source)) + strnlen(job->user, sizeof(job->user)) +
	     strnlen(job->name, sizeof(job->name)) + strnlen(job->workdir, sizeof(job->workdir)) +
	     sizeof(job->state) + sizeof(job->probe_mode);
	n += nsteps * (list_bound(qstep_fields, ARRAY_SIZE(qstep_fields)) +
		       sizeof(((struct ioacct_step *)0)->state));
	for (size_t i = 0; i < nmounts; i++)
		n += list_bound(qmount_fields, ARRAY_SIZE(qmount_fields)) +
		     strnlen(mounts[i].path, sizeof(mounts[i].path)) +
		     strnlen(mounts[i].fstype, sizeof(mounts[i].fstype)) +
		     strnlen(mounts[i].source, sizeof(mounts[i].source));
	n += ntotals * list_bound(qtotal_fields, ARRAY_SIZE(qtotal_fields));
	n += npeaks * list_bound(qpeak_fields, ARRAY_SIZE(qpeak_fields));
	return n;
}

size_t ioacct_proto_node_row_size(void)
{
	return list_bound(qnode_fields, ARRAY_SIZE(qnode_fields)) +
	       sizeof(((struct ioacct_node_part *)0)->node);
}

size_t ioacct_proto_file_row_size(void)
{
	return list_bound(qfile_fields, ARRAY_SIZE(qfile_fields)) +
	       sizeof(((struct ioacct_file *)0)->path);
}

size_t ioacct_proto_mpiio_row_size(void)
{
	return list_bound(qmpiio_fields, ARRAY_SIZE(qmpiio_fields)) +
	       sizeof(((struct ioacct_mpiio *)0)->path);
}

size_t ioacct_proto_h5_row_size(void)
{
	return list_bound(qh5_fields, ARRAY_SIZE(qh5_fields)) +
	       sizeof(((struct ioacct_h5rec *)0)->name);
}

size_t ioacct_proto_rpc_row_size(void)
{
	return list_bound(qrpc_fields, ARRAY_SIZE(qrpc_fields)) +
	       sizeof(((struct ioacct_rpc *)0)->name);
}

size_t ioacct_proto_series_row_size(void)
{
	return list_bound(qtotal_fields, ARRAY_SIZE(qtotal_fields));
}

