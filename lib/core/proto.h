/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wire protocol between ioacctd and its clients (iorun, the SPANK
 * plugin, the tools), one module for both ends.
 *
 * A message is a 16-byte header followed by `len` bytes of attributes:
 *
 *   header:    u32 magic "IOAC" | u16 version | u16 type | u32 len | u32 seq
 *   attribute: u16 type | u16 len | len bytes of value | padding to 4 bytes
 *
 * all integers little-endian (the socket never leaves the node, but a fixed
 * byte order makes the format a format). Strings are sent without their NUL.
 * A nested attribute's value is itself a list of attributes. Unknown
 * attribute types are ignored so that a newer client can talk to an older
 * daemon; a missing required attribute, a bad length, or a message larger
 * than IOACCT_PROTO_MAX_MSG is an error, reported, never a crash.
 *
 * Every request gets exactly one reply of type IOACCT_MSG_REPLY carrying
 * IOACCT_ATTR_STATUS (0 or -errno) and, on error, IOACCT_ATTR_ERROR.
 */
#ifndef IOACCT_PROTO_H
#define IOACCT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define IOACCT_PROTO_MAGIC 0x43414f49U /* "IOAC" read as little-endian u32 */
#define IOACCT_PROTO_VERSION 1
#define IOACCT_PROTO_HDR_LEN 16
#define IOACCT_PROTO_MAX_MSG (4U << 20)

/*
 * The requests, as an X-macro: the one list their numbers, their names
 * (ioacct_msg_type_name) and proto.c's table of their schemas come from.
 * X(NAME, number, name, body), one row per request, in number order. Never
 * renumber: both ends of the socket must agree.
 *
 *   NAME    enum ioacct_msg_type: IOACCT_MSG_NAME
 *   number  its type in the header
 *   name    what logs and errors call it ("register message"); proto.c's
 *           table of its attributes is <name>_fields
 *   body    the member of struct ioacct_request its attributes fill
 */
#define IOACCT_PROTO_REQUESTS(X)                                                        \
	X(REGISTER, 1, register, u.reg)                                                 \
	X(FINISH_STEP, 2, finish_step, u.fin)                                           \
	X(FINISH_JOB, 3, finish_job, u.fin)                                             \
	X(STATUS, 4, status, u.query)                                                   \
	X(SNAPSHOT, 5, snapshot, u.query)                                               \
	X(QUERY, 6, query, u.select)                                                    \
	X(JOB, 7, job, u.job)                                                           \
	/*                                                                              \
	 * probe_exe: the program a job's task is about to execute (iorun, the          \
	 * SPANK plugin, as the job's user), its file opened O_RDONLY beside the        \
	 * message (SCM_RIGHTS): answered once HDF5's uprobes are on it, or at          \
	 * once when it has none or has them already (issue 39: its first run           \
	 * counted). A daemon before it answers -EPROTO: the client goes on.            \
	 */                                                                             \
	X(PROBE_EXE, 8, probe_exe, u.probe)                                             \
	/*                                                                              \
	 * live: every running job the caller may see, with its totals so far          \
	 * (store + kernel, summed over steps: step_id UINT32_MAX) in the query         \
	 * reply's lists, for ioacct top. Request: u.query, cluster only ("" =          \
	 * every cluster). Reply: jobs, qsteps (running steps), qmounts, qtotals        \
	 * (bytes, calls, errors, ns only: no histograms), jobs_running (what the       \
	 * caller may see), start_mono_ns = the daemon's CLOCK_MONOTONIC when it        \
	 * read the counters (rates are differences over that clock), more = 1          \
	 * when jobs were left out to stay under IOACCT_PROTO_MAX_MSG.                  \
	 */                                                                             \
	X(LIVE, 90, live, u.query)                                                      \
	/*                                                                              \
	 * ioacctd and its unprivileged workers (issue 37, daemon/worker.h), on         \
	 * the socketpair of each, never on ioacctd's socket (refused there):           \
	 * struct ioacct_req_worker says what each carries. w_log and w_page            \
	 * are one way (no reply); the others are answered with a reply.                \
	 */                                                                             \
	X(W_INIT, 200, w_init, u.worker)                                                \
	X(W_LOG, 201, w_log, u.worker)                                                  \
	X(W_PAGE, 202, w_page, u.worker)                                                \
	X(W_POST, 203, w_post, u.worker)                                                \
	X(W_ELF, 204, w_elf, u.worker)                                                  \
	X(W_PG_CONNECT, 205, w_pg_connect, u.worker)                                    \
	X(W_PG_PUT, 206, w_pg_put, u.worker)                                            \
	X(W_PG_OFFER, 207, w_pg_offer, u.worker)                                        \
	X(W_PG_CLAIM, 208, w_pg_claim, u.worker)                                        \
	X(W_PG_WRITTEN, 209, w_pg_written, u.worker)                                    \
	X(W_PG_PURGE, 210, w_pg_purge, u.worker)                                        \
	X(W_PG_DOWNSAMPLE, 211, w_pg_downsample, u.worker)

enum ioacct_msg_type {
#define X(NAME, number, name, body) IOACCT_MSG_##NAME = number,
	IOACCT_PROTO_REQUESTS(X)
#undef X
	/* The one reply type, to every request. */
	IOACCT_MSG_REPLY = 0x100,
};

/* A growable byte buffer. */
struct ioacct_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

void ioacct_buf_free(struct ioacct_buf *b);
void ioacct_buf_reset(struct ioacct_buf *b); /* len = 0, keeps memory */
/* Makes room for `extra` more bytes after len. 0 or -ENOMEM. */
int ioacct_buf_reserve(struct ioacct_buf *b, size_t extra);

/* register: a cgroup becomes watched as (job, step). */
struct ioacct_req_register {
	uint64_t job_id;            /* 0 from iorun: the daemon assigns one */
	uint32_t step_id;
	uint32_t uid;
	uint32_t gid;
	int32_t pid;                /* a task in the cgroup: mounts and namespace are read from it */
	char cgroup[PATH_MAX];      /* "" = read from /proc/<pid>/cgroup */
	char cluster[IOACCT_SHORT_MAX];
	char source[16];
	char user[IOACCT_SHORT_MAX];
	char job_name[IOACCT_NAME_MAX];
	char workdir[PATH_MAX];
	uint64_t bin_width_ns;      /* 0 = the daemon's default */
	uint32_t has_array;
	uint32_t array_job_id;
	uint32_t array_task_id;
	/* The Slurm node name (SLURMD_NODENAME); "" = the daemon's node_name. Old clients omit it. */
	char node_name[IOACCT_NAME_MAX];
	/*
	 * sbatch --io-monitor=trace: trace the job's reads and writes into
	 * DXT records, at most this many bytes of them on this node (0: no
	 * trace). task_rank: the registered task's global rank (DXT's rank).
	 */
	uint64_t trace_max;
	int32_t task_rank;
	/* Slurm's restart count (SLURM_RESTART_COUNT): 0 for a job's first run. */
	uint32_t restart;
	/*
	 * sbatch --io-monitor=spans: the job's calls as OTLP spans to the
	 * node's otlp_url (IOACCT_SPANS_POSIX, IOACCT_SPANS_MPIIO or both; 0: none).
	 */
	uint32_t spans;
	/* The job's command line (struct ioacct_job's cmdline); kept from its first registration. */
	char cmdline[IOACCT_CMDLINE_MAX];
};

#define IOACCT_SPANS_POSIX 1u
#define IOACCT_SPANS_MPIIO 2u
#define IOACCT_SPANS_ALL (IOACCT_SPANS_POSIX | IOACCT_SPANS_MPIIO)

struct ioacct_req_finish {
	uint64_t job_id;
	uint32_t step_id;           /* ignored for FINISH_JOB */
	char cluster[IOACCT_SHORT_MAX];
	char state[32];             /* COMPLETED, FAILED, CANCELLED, ...; "" = COMPLETED */
	int32_t exit_code;
	/*
	 * FINISH_JOB only: the job's report as the epilog would write it ("" path:
	 * none sent). With cluster_db and more than one node the daemon keeps it
	 * and one node writes the merged report (reply: report_merged).
	 */
	struct ioacct_report_spec report;
	/*
	 * FINISH_JOB only, with a report: the job's owner and this node's Slurm
	 * name, for a node where no step of the job was monitored. Its daemon
	 * keeps an empty part then, so that the merged report does not wait
	 * for it and name it missing.
	 */
	uint32_t uid;
	uint32_t gid;
	char user[IOACCT_SHORT_MAX];
	char node_name[IOACCT_NAME_MAX];
	char workdir[PATH_MAX];
	/* FINISH_JOB only: the run it ends (Slurm's restart count), for an empty part. */
	uint32_t restart;
};

/* status, snapshot and live have only these. */
struct ioacct_req_query {
	uint64_t job_id;            /* snapshot only */
	char cluster[IOACCT_SHORT_MAX];
};

/*
 * query: one page of the jobs ioacct selects, for users who may not read the
 * store (private_data). Lists are comma-separated, "" matching everything:
 * job ids and uids in decimal, cluster names. The reply carries the jobs
 * with key > after_key in key order, each with its steps, mounts, totals
 * and (with `peaks`) peaks; when `more` is set, ask again with after_key =
 * the reply's job_key.
 */
struct ioacct_req_select {
	char job_ids[4096];
	char uids[1024];
	char clusters[1024];
	int64_t start_ns;           /* sacct's window; 0 = unbounded */
	int64_t end_ns;
	int64_t after_key;
	uint32_t peaks;             /* 1: with each job's peaks, for Max*BW */
	/*
	 * With a cluster store (cluster_db), jobs are whole: every node's rows
	 * summed into one. by_node: one job per node instead; local: this
	 * node's store alone (what answers anyway without a cluster store).
	 */
	uint32_t by_node;
	uint32_t local;
	/*
	 * 1: every run of a requeued job (sacct -D); else a run is left out
	 * when a later one of the same job is there.
	 */
	uint32_t duplicates;
};

/*
 * job: one whole job, everything a report, a comparison or a Darshan log is
 * built from, for clients that may not (private_data) or need not know where
 * the store is. The job is job_key when not 0, else the newest with job_id
 * on cluster ("" = any). Every reply carries the job row; the first (no
 * cursor) also its steps, mounts and totals; each one as much of the series
 * as fits, in (step, mount, op, bin) order. When `more` is set, ask again
 * with the reply's job_key and the last series row as the cursor.
 */
struct ioacct_req_job {
	uint64_t job_id;
	char cluster[IOACCT_SHORT_MAX];
	int64_t job_key;
	uint32_t after;             /* 1: the cursor below is set, series only */
	uint32_t after_step;
	uint64_t after_mnt;
	uint32_t after_op;
	uint32_t after_bin;
	/*
	 * By job id, with a cluster store (cluster_db), the job is the whole
	 * of it there (every node's rows summed); local: this node's store.
	 */
	uint32_t local;
	/*
	 * By job id: run - 1 is the run's place among the job id's runs,
	 * oldest first (0: the first; a requeued job's restart count when its
	 * id was never used again); 0: the last run.
	 */
	uint32_t run;
	/*
	 * run_start not 0: the run (cluster, job_id, restart, run_start)
	 * exactly, as a reply's job row named it (issue 36): a client's later
	 * pages of a job, so that a run of the same id stored meanwhile is not
	 * taken for it. A daemon that predates them ignores both.
	 */
	uint32_t restart;
	int64_t run_start;
	/*
	 * 1: a page of the job's per-file records instead of its series, in
	 * (step, rank, mount, dev, ino, gen, part) order, after the file named
	 * by the cursor when `after` is set (after_step, after_rank, after_mnt,
	 * after_dev, after_ino, after_gen, after_part). A daemon that predates them ignores
	 * it and its reply lacks `files`: the client has them as not read.
	 */
	uint32_t files;
	int32_t after_rank;
	uint32_t after_dev;
	uint64_t after_ino;
	uint32_t after_gen;
	/*
	 * 1: a page of the job's MPI-IO records (issue 27) instead, in (step,
	 * rank, pid, path, part) order, after the cursor when `after` is set
	 * (after_step, after_rank, after_pid, after_path, after_part). A
	 * daemon that predates them ignores it and sends series: the client
	 * sees no `mpiio` in the reply and has them as not read.
	 */
	uint32_t mpiio;
	int32_t after_pid;
	char after_path[IOACCT_FILE_PATH_MAX];
	/*
	 * 1: a page of the job's HDF5 records (issue 39) instead, in (step,
	 * rank, pid, kind, name, part) order, after the cursor when `after` is
	 * set (after_step, after_rank, after_pid, after_kind, after_path,
	 * after_part). A daemon that predates them ignores it, as `mpiio`.
	 */
	uint32_t hdf5;
	uint32_t after_kind;
	/*
	 * 1: a page of the job's RPC rows (issue 40) instead, in (step, mount,
	 * prog, vers, proc, flags, bin) order, after the cursor when `after` is
	 * set (after_step, after_mnt, after_prog, after_vers, after_proc,
	 * after_flags, after_bin). A daemon that predates them ignores it, as
	 * `mpiio`.
	 */
	uint32_t rpc;
	uint32_t after_prog;
	uint32_t after_vers;
	uint32_t after_proc;
	uint32_t after_flags;
	/*
	 * The three cursors' node part (model.h's `part`): a job of several
	 * nodes, whose processes on two nodes may have the same rank and pid
	 * (and files the same mount path, dev and inode). Last in each order,
	 * so that a peer that predates it keeps its own order: a daemon
	 * ignores it (a node's store has part 0 alone); a client sends none
	 * (0), and its pages are the same as before.
	 */
	uint32_t after_part;
};

/* probe_exe: the job's step whose task executes the program (its fd beside the message). */
struct ioacct_req_probe {
	uint64_t job_id;
	uint32_t step_id;
	char cluster[IOACCT_SHORT_MAX];
};

/*
 * The messages between ioacctd and a worker (W_*), one body for them all;
 * the file descriptors a message carries go beside it (SCM_RIGHTS), in the
 * order given here. A worker's requests to ioacctd are QUERY and JOB
 * (the cluster store's worker reads an outbox job's pages), served as for
 * a client; ioacctd asks a worker QUERY and JOB too (pages of the cluster
 * store).
 *
 *   w_init        core -> worker, fds: the configuration (a sealed memfd of
 *                 struct ioacct_config: the worker is the same executable),
 *                 then the worker's own (metrics: the listening socket, then
 *                 the TLS certificate and key and the metrics_auth_file
 *                 when the configuration names them). text: the worker's
 *                 name. Reply: ready, or why not.
 *   w_log         worker -> core: a line of its log; code: its level.
 *   w_page        core -> worker, fd: a sealed memfd of `size` bytes, the
 *                 /metrics page to serve from now.
 *   w_post        core -> worker, fd: a sealed memfd of `size` bytes, an OTLP
 *                 request to POST to otlp_url. Reply: code, the HTTP status,
 *                 and retry_after, the answer's Retry-After in ms (-1: none).
 *   w_elf         core -> worker, fd: an MPI library (read-only), text: its
 *                 name for messages. Reply: code, the flavour
 *                 (IOACCT_MPI_*), offsets: each function's file offset.
 *   w_pg_connect  core -> worker: connect when not connected; code: 0 for
 *                 the exporter's connection (which migrates), else the
 *                 statement timeout in ms of a query connection.
 *   w_pg_put      core -> worker: write the jobs of keys to the cluster
 *                 store, reading each from ioacctd (JOB by job_key).
 *   w_pg_offer    core -> worker: offer the merged report `report` of the
 *                 run this node's part (cluster, job_id, node, start_ns;
 *                 restart, uid, gid) is in.
 *   w_pg_claim    core -> worker: claim it, by the same part (code 1: skip
 *                 locked). Reply: the
 *                 spec, uid and gid to write it as, job_key of the whole
 *                 job (ioacctd reads it with JOB), missing_nodes and code
 *                 (seconds it waited for them).
 *   w_pg_written  core -> worker: mark it written by the part's `node` (the
 *                 part as w_pg_claim's) without `missing`.
 *   w_pg_purge    core -> worker: purge the runs ended before `cutoff`
 *                 (cluster_retention; its progress as log lines); code 1:
 *                 close the connection after it (the round's last). Reply,
 *                 even when it failed midway: what it did (w.purged).
 *   w_pg_downsample core -> worker: re-bin the series of the runs ended
 *                 before `cutoff` to bin_width_ns; code and reply as
 *                 w_pg_purge's.
 * A pg reply's status is -ENOTCONN when the worker's connection is down
 * after the call (the error says why).
 */
#define IOACCT_WORKER_TEXT_MAX 1024
struct ioacct_req_worker {
	uint32_t code;
	char text[IOACCT_WORKER_TEXT_MAX];
	uint64_t size;
	char keys[4096];
	uint64_t job_id;
	char cluster[IOACCT_SHORT_MAX];
	uint32_t restart;
	int64_t start_ns;
	uint32_t uid;
	uint32_t gid;
	struct ioacct_report_spec report;
	char node[IOACCT_NAME_MAX];
	char missing[IOACCT_WORKER_TEXT_MAX];
	int64_t cutoff;
	uint64_t bin_width_ns;
};

struct ioacct_request {
	uint16_t type;
	uint32_t seq;
	union {
		struct ioacct_req_register reg;
		struct ioacct_req_finish fin;
		struct ioacct_req_query query;
		struct ioacct_req_select select;
		struct ioacct_req_job job;
		struct ioacct_req_probe probe;
		struct ioacct_req_worker worker;
	} u;
};

/* One row of a snapshot reply: a step's totals on one mount for one op. */
struct ioacct_snap_row {
	uint32_t step_id;
	uint32_t op;
	struct ioacct_mount mount;
	struct ioacct_counters c;
};

/*
 * A cgroup a running step is watched through, in a snapshot reply (for
 * iotrace --job): hier is IOACCT_HIER_V2 (0) or IOACCT_HIER_V1 (1), cgroup
 * its directory ("/sys/fs/cgroup/ioacct/iorun-42").
 */
struct ioacct_watch_row {
	uint32_t step_id;
	uint32_t hier;
	char cgroup[PATH_MAX];
};

/* Rows of a query reply, each tied to its job by job_key. At most this many steps or mounts. */
#define IOACCT_PROTO_MAX_QROWS 65536

struct ioacct_qstep_row {
	int64_t job_key;
	struct ioacct_step step;    /* the cgroup is not sent */
};

struct ioacct_qmount_row {
	int64_t job_key;
	struct ioacct_mount mount;
};

struct ioacct_qtotal_row {
	int64_t job_key;
	struct ioacct_sample s;     /* bin is sent for series rows only (0 in totals) */
};

/* A node's part of a job read whole from the cluster store (first page of a job reply). */
struct ioacct_qnode_row {
	int64_t job_key;
	struct ioacct_node_part p;
};

/* A file's record (issue 26), in a job reply's page of them. */
struct ioacct_qfile_row {
	int64_t job_key;
	struct ioacct_file f;
};

/* An MPI-IO record (issue 27), in a job reply's page of them. */
struct ioacct_qmpiio_row {
	int64_t job_key;
	struct ioacct_mpiio m;
};

/* An HDF5 record (issue 39), in a job reply's page of them. */
struct ioacct_qh5_row {
	int64_t job_key;
	struct ioacct_h5rec h;
};

/* An RPC row (issue 40), in a job reply's page of them. */
struct ioacct_qrpc_row {
	int64_t job_key;
	struct ioacct_rpc r;
};

/* The most function offsets a w_elf reply carries (ioacct_mpi_abi.h's functions fit). */
#define IOACCT_PROTO_OFFSETS_MAX 64

/* ioacct_qpeak of query.h: step UINT32_MAX, mount IOACCT_MNT_ANY for all of them. */
struct ioacct_qpeak_row {
	int64_t job_key;
	uint32_t step_id;
	uint64_t mnt_id;
	uint64_t read_bytes;
	uint64_t write_bytes;
};

struct ioacct_reply {
	uint32_t seq;
	int32_t status;             /* 0 or -errno */
	char error[512];
	/* register, finish */
	uint64_t job_id;
	int64_t job_key;
	uint32_t slot;
	uint64_t start_mono_ns;     /* the time base of the job's bins */
	int64_t start_ns;           /* wall clock */
	uint64_t bin_width_ns;
	char probe_mode[128];
	/* register with trace_max: why the job is not traced ("" when it is) */
	char trace_error[256];
	/* register with spans: why the job sends none ("" when it does) */
	char spans_error[256];
	/* status */
	char version[32];
	uint32_t jobs_running;
	uint32_t cgroups_watched;
	uint64_t dropped_events;
	uint64_t uptime_s;
	char detail[1024];          /* free text: backend choice, map fill, ... */
	/* snapshot; owned by the reply, freed by ioacct_reply_free() */
	struct ioacct_snap_row *rows;
	size_t nrows;
	uint64_t dropped_bytes;
	/*
	 * query; owned by the reply, freed by ioacct_reply_free(). has_array is
	 * not sent: a job is an array task when its array_job_id is not 0.
	 * job_key is the last job's key, `more` says whether to ask again.
	 */
	struct ioacct_job *jobs;
	size_t njobs;
	struct ioacct_qstep_row *qsteps;
	size_t nqsteps;
	struct ioacct_qmount_row *qmounts;
	size_t nqmounts;
	struct ioacct_qtotal_row *qtotals;
	size_t nqtotals;
	struct ioacct_qpeak_row *qpeaks;
	size_t nqpeaks;
	/* job: a page of the series, with bins; owned and freed likewise */
	struct ioacct_qtotal_row *qseries;
	size_t nqseries;
	/* job, first page: the nodes' parts of a job from the cluster store */
	struct ioacct_qnode_row *qnodes;
	size_t nqnodes;
	/*
	 * job, a page of per-file records (request `files`): files_read is 1
	 * when the job's records were read (0: a store or cluster store that
	 * has none, which is not "no files"); owned and freed likewise
	 */
	uint32_t files_read;
	struct ioacct_qfile_row *qfiles;
	size_t nqfiles;
	/* job, a page of MPI-IO records (request `mpiio`): as files_read and qfiles */
	uint32_t mpiio_read;
	struct ioacct_qmpiio_row *qmpiio;
	size_t nqmpiio;
	/* job, a page of HDF5 records (request `hdf5`): as files_read and qfiles */
	uint32_t hdf5_read;
	struct ioacct_qh5_row *qh5;
	size_t nqh5;
	/* job, a page of RPC rows (request `rpc`): as files_read and qfiles */
	uint32_t rpc_read;
	struct ioacct_qrpc_row *qrpc;
	size_t nqrpc;
	uint32_t more;
	/* finish job: 1 when the daemon writes the job's merged report (the epilog writes none) */
	uint32_t report_merged;
	/* snapshot: the running steps' watched cgroups; owned and freed likewise */
	struct ioacct_watch_row *watches;
	size_t nwatches;
	/* A worker's reply (struct ioacct_req_worker says which carries what). */
	struct {
		uint32_t code;
		int64_t retry_after_ms;
		uint64_t offsets[IOACCT_PROTO_OFFSETS_MAX];
		struct ioacct_report_spec report;
		uint32_t uid;
		uint32_t gid;
		char missing[IOACCT_WORKER_TEXT_MAX];
		/* w_pg_purge, w_pg_downsample: struct ioacct_pgstore_purge_counts' */
		struct {
			uint64_t runs, parts, series, months;
		} purged;
	} w;
};

void ioacct_reply_free(struct ioacct_reply *r);
/* An error reply: what the reply held freed, status (-errno) and the message for the client. */
void ioacct_reply_error(struct ioacct_reply *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Encoding: appends one whole message (header included) to `out`. 0 or -errno. */
int ioacct_proto_encode_request(struct ioacct_buf *out, const struct ioacct_request *req);
/* The same with sequence number seq instead of req->seq. */
int ioacct_proto_encode_request_seq(struct ioacct_buf *out, const struct ioacct_request *req,
				    uint32_t seq);
int ioacct_proto_encode_reply(struct ioacct_buf *out, const struct ioacct_reply *rep);

/*
 * Decoding one whole message of `len` bytes (header included). 0, or
 * -EPROTO/-EMSGSIZE/-EINVAL with `err` saying what is wrong.
 */
int ioacct_proto_decode_request(const uint8_t *msg, size_t len, struct ioacct_request *req,
				char *err, size_t errlen);
int ioacct_proto_decode_reply(const uint8_t *msg, size_t len, struct ioacct_reply *rep,
			      char *err, size_t errlen);

/*
 * Validates a header (magic, version, length limit) and gives the total
 * message length it announces. -EPROTO/-EMSGSIZE with `err`.
 */
int ioacct_proto_header_check(const uint8_t *hdr, size_t *msg_len, char *err, size_t errlen);

/*
 * Reads one whole message from a stream socket into `in`, waiting at most
 * timeout_ms for each part (-ETIMEDOUT). -ECONNRESET on EOF before a whole
 * message. Never reads more than the header's length allows.
 */
int ioacct_proto_recv(int fd, struct ioacct_buf *in, int timeout_ms, char *err, size_t errlen);
/* Writes all of `b`; -errno. */
int ioacct_proto_send(int fd, const struct ioacct_buf *b, int timeout_ms);

/*
 * Client side: connect to the daemon's socket, send `req`, wait for the
 * reply. Returns 0 when a reply was received (look at rep->status), or
 * -errno when the daemon could not be reached, with `err` saying why in one
 * line ("cannot connect to /run/ioacct/ioacctd.sock: No such file or directory").
 */
int ioacct_client_call(const char *socket_path, const struct ioacct_request *req,
		       struct ioacct_reply *rep, int timeout_ms, char *err, size_t errlen);
/* The same with the descriptor pass_fd beside the request (SCM_RIGHTS; -1: none). */
int ioacct_client_call_fd(const char *socket_path, const struct ioacct_request *req, int pass_fd,
			  struct ioacct_reply *rep, int timeout_ms, char *err, size_t errlen);

/*
 * How a client reaches a server of the protocol, for the code that pages
 * through its replies (job_fetch.h, query_fetch.h): ioacctd's socket, or
 * the channel between ioacctd and one of its workers (issue 37). call: one
 * request (its seq is the caller's business), its reply (0: the caller
 * frees it), or -errno with err saying why in one line.
 */
struct ioacct_caller {
	int (*call)(void *ctx, struct ioacct_request *req, struct ioacct_reply *rep, char *err,
		    size_t errlen);
	void *ctx;
	const char *name;            /* what replies come from: "ioacctd on PATH" */
};

const char *ioacct_msg_type_name(uint16_t type);
/*
 * An upper bound of the bytes one job with these rows adds to an encoded
 * query reply, so that the daemon fills a page up to a budget without
 * encoding it twice.
 */
size_t ioacct_proto_query_job_size(const struct ioacct_job *job, size_t nsteps,
				   const struct ioacct_mount *mounts, size_t nmounts, size_t ntotals,
				   size_t npeaks);

/* An upper bound of the bytes one series row adds to an encoded job reply. */
size_t ioacct_proto_series_row_size(void);
/* An upper bound of the bytes one file row adds to an encoded job reply, its path included. */
size_t ioacct_proto_file_row_size(void);
/* The same for an MPI-IO record. */
size_t ioacct_proto_mpiio_row_size(void);
/* The most bytes one HDF5 record takes in a reply. */
size_t ioacct_proto_h5_row_size(void);
/* The most bytes one RPC row takes in a reply, its name included. */
size_t ioacct_proto_rpc_row_size(void);
/* Bound on the bytes of one node part row. */
size_t ioacct_proto_node_row_size(void);

#endif /* IOACCT_PROTO_H */
