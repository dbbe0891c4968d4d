/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The data model of ioacct: jobs, steps, mounts, operations, counters and
 * time bins. Data and arithmetic, no kernel and no SQLite; the one call that
 * touches the file system is ioacct_mkdir_p().
 */
#ifndef IOACCT_MODEL_H
#define IOACCT_MODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "ioacct_abi.h"
#include "ioacct_ops.h"

/* Slurm's special step ids (slurm.h SLURM_BATCH_SCRIPT and friends). */
#define IOACCT_STEP_BATCH 0xfffffffbU
#define IOACCT_STEP_EXTERN 0xfffffffcU
#define IOACCT_STEP_INTERACTIVE 0xfffffffdU

#define IOACCT_NAME_MAX 256
#define IOACCT_SHORT_MAX 64
/* A job's command line, as Darshan's exe (its job region keeps about 3 KiB of it and the mounts). */
#define IOACCT_CMDLINE_MAX 1024

struct ioacct_counters {
	uint64_t bytes;
	uint64_t calls;
	uint64_t errors;                  /* every failed call */
	uint64_t ns;
	uint64_t size_hist[IOACCT_NR_SIZE_BINS];
	/*
	 * Failed calls per enum ioacct_err_class. Jobs stored before errors were
	 * classified (store schema < 4) have errors but every class 0.
	 */
	uint64_t errclass[IOACCT_NR_ERR_CLASSES];
};

struct ioacct_job {
	int64_t key;                      /* store's row id, 0 when not stored */
	uint64_t job_id;                  /* Slurm job id, or iorun's own */
	char cluster[IOACCT_SHORT_MAX];   /* Slurm ClusterName, "iorun" for iorun */
	char node[IOACCT_NAME_MAX];
	char source[16];                  /* "slurm" or "iorun" */
	uint32_t uid;
	uint32_t gid;
	char user[IOACCT_SHORT_MAX];
	char name[IOACCT_NAME_MAX];
	char workdir[PATH_MAX];
	bool has_array;
	uint32_t array_job_id;
	uint32_t array_task_id;
	int64_t start_ns;                 /* wall clock, ns since the epoch */
	int64_t end_ns;                   /* 0 while running */
	char state[32];                   /* RUNNING, COMPLETED, FAILED, CANCELLED, ... */
	int32_t exit_code;
	char probe_mode[128];
	uint64_t bin_width_ns;
	uint64_t dropped_events;
	uint64_t dropped_bytes;
	/*
	 * Library opens of the job's tasks that the MPI-IO library watch missed
	 * (its ring buffer full, the daemon behind; issue 39): a library they
	 * loaded may have had no uprobes, and its MPI-IO calls no count. 0 for
	 * jobs stored before it was counted (SQLite schema 20, PostgreSQL 17).
	 */
	uint64_t lib_opens_missed;
	/*
	 * Slurm's restart count (SLURM_RESTART_COUNT): 0 for the first run, n
	 * for the run after n requeues. A run is a job of its own in every
	 * store; (cluster, job_id, restart, run_start) names it.
	 */
	uint32_t restart;
	/*
	 * What tells a job id used again from its earlier uses (issue 36): in a
	 * node's store the run's own start_ns (a node holds one part of a
	 * run); from the cluster store, the start of the part that opened the
	 * run there (jobs.run_start), which every node's part of it shares.
	 */
	int64_t run_start;
	/*
	 * The width the series were recorded at when the store has re-binned
	 * them coarser since (downsample_after; bin_width_ns is their width
	 * now); 0 when never downsampled.
	 */
	uint64_t orig_bin_width_ns;
	/*
	 * The command line the job ran, its arguments joined by spaces (issue
	 * 38, Darshan's exe): iorun's command; in Slurm the first step
	 * registered, a batch script under its job name; "" for jobs stored
	 * before it was kept (SQLite schema 18, PostgreSQL 15).
	 */
	char cmdline[IOACCT_CMDLINE_MAX];
	/*
	 * Not stored: a job read whole from the cluster store has its nodes' bins
	 * aligned on its earliest node's start, to the bin; this is the largest
	 * rest, under one bin (ioacct_bin_shift). 0 for one node.
	 */
	uint64_t skew_ns;
};

struct ioacct_step {
	uint32_t step_id;
	int64_t start_ns;
	int64_t end_ns;
	char state[32];
	int32_t exit_code;
	char cgroup[PATH_MAX];
};

/*
 * A mount's key, in every store, reply and report: the kernel's 64-bit
 * unique id where it has one (mnt_id_unique, Linux 6.8+: at least
 * IOACCT_MNT_UNIQUE_MIN, never handed out twice), else the 32-bit id of
 * /proc/PID/mountinfo, which the kernel reuses (docs/design.md, "Which
 * identity keys what"). A job's rows agree on it; other jobs' do not matter.
 */
/* Every mount (a sum over mounts): no mount has this key. */
#define IOACCT_MNT_ANY UINT64_MAX

struct ioacct_mount {
	uint64_t mnt_id;
	/* The 32-bit id /proc/PID/mountinfo lists it by; 0 unknown. Not stored: the daemon's. */
	uint32_t mnt_id_old;
	char path[PATH_MAX];
	char fstype[IOACCT_SHORT_MAX];
	char source[PATH_MAX];
};

/* One time bin of one operation on one mount in one step. */
struct ioacct_sample {
	uint32_t step_id;
	uint32_t op;
	uint32_t bin;
	uint64_t mnt_id;
	struct ioacct_counters c;
};

/* Everything stored about one job, as loaded by ioacct_store_job_load(). */
/*
 * One node's part of a job read whole from the cluster store (not stored):
 * its own totals, every step and mount, for the report's per-node rows.
 */
struct ioacct_node_part {
	char node[IOACCT_NAME_MAX];
	int64_t start_ns;                 /* its own registration, wall clock */
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t reads;
	uint64_t writes;
	uint64_t ns;                      /* time in I/O calls, every operation */
};

/* The longest node list of a merged report ("mc1,mc2,..."): 8 KiB. */
#define IOACCT_REPORT_NODES_MAX 8192

/*
 * The report of a job of several nodes, as the epilog asks for it: one
 * merged file for the whole job, written by one node's ioacctd (issue 13).
 */
struct ioacct_report_spec {
	char path[4096];                  /* expanded base path, no format suffix */
	uint32_t formats;                 /* IOACCT_FMT() bits of reports/render.h */
	char nodes[IOACCT_REPORT_NODES_MAX]; /* the job's nodes, "mc1,mc2,mc3" */
	char copy_dir[4096];              /* the admin's copy (report_copy_dir), "" = none */
};

/*
 * A file's record (issue 26): the system calls on one file by one rank of a
 * job step on one node, through one mount, as Darshan's POSIX module counts
 * them per file (successful calls only). A file is one life of an inode
 * (issue 36): dev, ino and gen. dev 0 with ino 0 is the mount's "other
 * files": the calls on files past max_files, which make the job partial.
 * Byte positions are Darshan's (offset + size - 1, 0 before any); times are
 * from the job's start, -1 when none.
 */
#define IOACCT_FILE_PATH_MAX 1024
#define IOACCT_FILE_ACCESSES 4 /* Darshan's POSIX_ACCESS1..4 */
struct ioacct_file {
	uint32_t step_id;
	int32_t rank;           /* Slurm or MPI rank; -1 unknown */
	uint64_t mnt_id;
	uint32_t dev;           /* the kernel's dev_t: MAJOR << 20 | MINOR */
	uint64_t ino;
	/*
	 * The inode's life: its i_generation, or where the file system has
	 * none a birth the probes count at each create, 0 unknown (a file only
	 * stat'ed by path).
	 */
	uint32_t gen;
	char path[IOACCT_FILE_PATH_MAX]; /* absolute, as resolved at open; "" unknown */
	/*
	 * Not stored: the node part, as struct ioacct_mpiio's (two nodes' ranks
	 * -1 on one shared file: the same mount path, dev, ino and gen).
	 */
	uint32_t part;
	uint64_t opens, reads, writes, stats, fsyncs;
	uint64_t bytes_read, bytes_written;
	uint64_t read_ns, write_ns, meta_ns;
	int64_t max_byte_read, max_byte_written;
	uint64_t seq_reads, seq_writes, consec_reads, consec_writes;
	int64_t first_read_ns, last_read_ns, first_write_ns, last_write_ns;
	uint64_t size_read[IOACCT_NR_SIZE_BINS];
	uint64_t size_written[IOACCT_NR_SIZE_BINS];
	/*
	 * The page-cache and mmap views' bytes of the file (its share of the
	 * mount's mmap_read_bytes and cache_miss_bytes); not measured where the
	 * job's views say so (ioacct_probe_mmap_unmeasured(), no "cache" view).
	 */
	uint64_t mmap_bytes, cache_miss_bytes;
	uint64_t seeks; /* lseek calls (stdio's ftell is one: lseek(fd, 0, SEEK_CUR)) */
	uint64_t rw_switches; /* a read after a write or a write after a read (POSIX_RW_SWITCHES) */
	/*
	 * The most common access sizes of its reads and writes, most common
	 * first (then the larger), with their counts: Darshan's
	 * POSIX_ACCESS1..4_ACCESS and _COUNT; count 0: none.
	 */
	uint64_t access[IOACCT_FILE_ACCESSES];
	uint64_t access_count[IOACCT_FILE_ACCESSES];
};

/*
 * Adds count accesses of size bytes to f's most common access sizes, as
 * Darshan's DARSHAN_UPDATE_COMMON_VAL_COUNTERS with its add flag: the four
 * kept are the most common, then the larger; a size 0 is not kept.
 */
void ioacct_file_access_add(struct ioacct_file *f, uint64_t size, uint64_t count);
/*
 * Adds src's calls to dst, as one file of one rank: sums, the largest
 * offsets, the first and last times, the common access sizes merged.
 */
void ioacct_file_add(struct ioacct_file *dst, const struct ioacct_file *src);

/*
 * The MPI-IO counters (issue 27) of the process on one rank of a job step
 * on one node for one file, as Darshan's MPIIO module counts them: the
 * file as named to MPI_File_open, calls that succeeded, bytes = count x
 * the datatype's size at the call. unsized_* calls had a datatype whose
 * size the probes could not read exactly: their bytes are not in bytes_*.
 */
#define IOACCT_MPIIO_COUNTERS(X)                                                    \
	X(indep_opens) X(coll_opens) X(indep_reads) X(indep_writes) X(coll_reads)    \
	X(coll_writes) X(split_reads) X(split_writes) X(nb_reads) X(nb_writes)       \
	X(syncs) X(views) X(bytes_read) X(bytes_written) X(unsized_reads)            \
	X(unsized_writes) X(read_ns) X(write_ns) X(meta_ns)
#define IOACCT_MPIIO_FIELD(name) uint64_t name;
struct ioacct_mpiio {
	uint32_t step_id;
	int32_t rank;           /* MPI rank from the process's environment; -1 unknown */
	/*
	 * Not stored: a job of several nodes from the cluster store, the node
	 * part it is of, as an index of the job's nodes (by name); else 0. A
	 * pid is one node's number: two nodes' records may share all else.
	 */
	uint32_t part;
	uint32_t pid;
	char path[IOACCT_FILE_PATH_MAX];
	IOACCT_MPIIO_COUNTERS(IOACCT_MPIIO_FIELD)
	uint64_t size_read[IOACCT_NR_SIZE_BINS];
	uint64_t size_written[IOACCT_NR_SIZE_BINS];
};
#undef IOACCT_MPIIO_FIELD

/* Adds src's MPI-IO counters and size bins to dst's. */
void ioacct_mpiio_add(struct ioacct_mpiio *dst, const struct ioacct_mpiio *src);
/*
 * The stores' order of MPI-IO records: step, rank, pid, path (bytes, as
 * SQLite's blobs), node part (a node's store has part 0 alone).
 */
int ioacct_mpiio_key_cmp(const struct ioacct_mpiio *a, const struct ioacct_mpiio *b);

/*
 * The HDF5 counters (issue 39) of the process on one rank of a job step on
 * one node for one HDF5 file (kind IOACCT_H5REC_FILE, Darshan's H5F
 * module) or dataset (IOACCT_H5REC_DATASET, H5D), named as Darshan names
 * them ("FILE", "FILE:/DATASET"; an anonymous dataset never linked
 * "FILE:(anonymous)"): calls that succeeded; bytes = the selection's
 * elements x the dataset's datatype size, as Darshan counts them;
 * unsized_* calls' sizes could not be read (not in bytes_*).
 */
#define IOACCT_H5_COUNTERS(X)                                                       \
	IOACCT_H5_COUNTS(X) IOACCT_H5_TIMES(X) IOACCT_H5_SHAPE(X) IOACCT_H5_SELECT(X)
/* The counters of SQLite schema 21 (PostgreSQL 18): sums but npoints_max and datatype_size. */
#define IOACCT_H5_COUNTS(X)                                                         \
	X(opens) X(flushes) X(reads) X(writes) X(bytes_read) X(bytes_written)        \
	X(unsized_reads) X(unsized_writes) X(rw_switches) X(npoints_max)             \
	X(datatype_size) X(read_ns) X(write_ns) X(meta_ns)
/*
 * Schema 22 (PostgreSQL 19): Darshan's timestamps, in ns from the job's
 * start, 0 none (as Darshan's 0): the first call's start (*_start_ns) and
 * the last's end (*_end_ns) of the opens (H5Fcreate/H5Fopen, H5Dcreate/
 * H5Dopen), reads, writes and closes (H5Fclose, H5Dclose); the slowest
 * read's and write's time and bytes (0 when unsized).
 */
#define IOACCT_H5_TIMES(X)                                                          \
	X(open_start_ns) X(open_end_ns) X(read_start_ns) X(read_end_ns)              \
	X(write_start_ns) X(write_end_ns) X(close_start_ns) X(close_end_ns)          \
	X(max_read_ns) X(max_read_size) X(max_write_ns) X(max_write_size)
/*
 * Schema 22 too: a dataset's dataspace at its last create or open, Darshan's
 * H5D_DATASPACE_NDIMS and _NPOINTS; ndims 0 not known (a scalar or null
 * dataspace, or an older record). 1 (else 0): a file's last open was with
 * the MPI-IO driver (H5F_USE_MPIIO); a dataset was read or written
 * collectively (H5D_USE_MPIIO_COLLECTIVE).
 */
#define IOACCT_H5_SHAPE(X) X(dataspace_ndims) X(dataspace_npoints) X(use_mpiio) X(use_mpiio_collective)
/*
 * Schema 24 (PostgreSQL 21): a dataset's reads and writes by their file
 * selection's kind, as Darshan counts them (H5D_REGULAR_HYPERSLAB_SELECTS,
 * _IRREGULAR_, H5D_POINT_SELECTS; none for H5S_ALL), and those whose kind
 * (or a hyperslab's regularity) could not be read (unknown_selects: the
 * three are then not known; every call of a record stored before); its
 * chunk dims at its last create or open (Darshan's H5D_CHUNK_SIZE_D1..D5,
 * D1 its last dimension's; 0s not chunked) when chunk_known is 1, else not
 * known.
 */
#define IOACCT_H5_SELECT(X)                                                         \
	X(regular_hyperslab_selects) X(irregular_hyperslab_selects) X(point_selects) \
	X(unknown_selects) X(chunk_known) X(chunk_size_d1) X(chunk_size_d2)          \
	X(chunk_size_d3) X(chunk_size_d4) X(chunk_size_d5)
#define IOACCT_H5REC_FILE 0
#define IOACCT_H5REC_DATASET 1
#define IOACCT_H5_FIELD(name) uint64_t name;
struct ioacct_h5rec {
	uint32_t step_id;
	int32_t rank;           /* MPI rank from the process's environment; -1 unknown */
	uint32_t part;          /* the node part, as struct ioacct_mpiio's */
	uint32_t pid;
	uint32_t kind;          /* IOACCT_H5REC_FILE or IOACCT_H5REC_DATASET */
	char name[IOACCT_FILE_PATH_MAX];
	IOACCT_H5_COUNTERS(IOACCT_H5_FIELD)
	uint64_t size_read[IOACCT_NR_SIZE_BINS];
	uint64_t size_written[IOACCT_NR_SIZE_BINS];
};
#undef IOACCT_H5_FIELD

/*
 * Adds src's HDF5 counters to dst's: sums, the larger selection, a known
 * datatype size, the earlier starts and later ends, the slower call, src's
 * dataspace and chunk dims when known.
 */
void ioacct_h5rec_add(struct ioacct_h5rec *dst, const struct ioacct_h5rec *src);
/* The stores' order of HDF5 records: step, rank, pid, kind, name, node part (as MPI-IO's). */
int ioacct_h5rec_key_cmp(const struct ioacct_h5rec *a, const struct ioacct_h5rec *b);

/*
 * The RPC layer per job (issue 40): what /proc/self/mountstats counts per
 * procedure, per job step, time bin, mount, RPC program, version and
 * procedure (its p_statidx, mountstats' order), counted where the kernel
 * counts it (sunrpc:rpc_stats_latency). calls, bytes_sent, bytes_recv as
 * mountstats' ops, bytes sent and received; queue_ns, rtt_ns, execute_ns
 * summed over the calls; errors (tk_status < 0); retrans, transmissions
 * beyond the first.
 */
#define IOACCT_RPC_NAME_MAX 32
/* mountstats' per-procedure counters (issue 40) */
#define IOACCT_RPC_COUNTERS(X) \
	X(calls) X(bytes_sent) X(bytes_recv) X(queue_ns) X(rtt_ns) X(execute_ns) X(errors) X(retrans)
/* flags: RPCs on the mount during the job that no job submitted */
#define IOACCT_RPC_UNATTRIBUTED 1u
#define IOACCT_RPC_FIELD(name) uint64_t name;
struct ioacct_rpc {
	uint32_t step_id;
	uint32_t bin;        /* time bin as ioacct_sample's; 0 for IOACCT_RPC_UNATTRIBUTED rows */
	uint64_t mnt_id;     /* the mount's key, as ioacct_sample.mnt_id */
	uint32_t prog;       /* RPC program number: 100003 NFS */
	uint32_t vers;       /* its version: 3, 4 */
	uint32_t proc;       /* p_statidx */
	uint32_t flags;      /* IOACCT_RPC_* */
	char name[IOACCT_RPC_NAME_MAX]; /* p_name, "WRITE" */
	IOACCT_RPC_COUNTERS(IOACCT_RPC_FIELD)
};
#undef IOACCT_RPC_FIELD

/* Adds src's counters to dst's (the key and name stay dst's). */
void ioacct_rpc_add(struct ioacct_rpc *dst, const struct ioacct_rpc *src);
/*
 * The stores' order of RPC rows: step, mount, program, version, procedure,
 * flags, bin; the mount key as SQLite's int64 of the same bits (a key of
 * 2^63 and above first, as in the per-file records' order).
 */
int ioacct_rpc_key_cmp(const struct ioacct_rpc *a, const struct ioacct_rpc *b);

/* The mount's "other files" record (files past max_files). */
static inline bool ioacct_file_is_other(const struct ioacct_file *f)
{
	return f->dev == 0 && f->ino == 0;
}

struct ioacct_jobdata {
	struct ioacct_job job;
	struct ioacct_step *steps;
	size_t nsteps;
	struct ioacct_mount *mounts;
	size_t nmounts;
	struct ioacct_sample *totals;     /* bin is 0; one per (step, mount, op) */
	size_t ntotals;
	struct ioacct_sample *series;     /* ordered by step, mount, op, bin */
	size_t nseries;
	struct ioacct_file *files;        /* per-file records, by bytes moved, largest first */
	size_t nfiles;
	/*
	 * Not stored: the per-file records were read (a store of schema 8 or
	 * later, directly or through ioacctd's socket, or the cluster store's
	 * schema 9); false for a cluster store part written before its schema
	 * 9, or from an ioacctd older than their pages.
	 */
	bool files_loaded;
	/* MPI-IO records (issue 27), in (step, rank, pid, path, part) order. */
	struct ioacct_mpiio *mpiio;
	size_t nmpiio;
	/* Not stored: they were read (a store of schema 10 or later); false as for files_loaded. */
	bool mpiio_loaded;
	/* HDF5 records (issue 39), in (step, rank, pid, kind, name, part) order. */
	struct ioacct_h5rec *h5;
	size_t nh5;
	/* Not stored: they were read (a store of schema 21 or later). */
	bool h5_loaded;
	/*
	 * RPC rows (issue 40), in (step, mnt_id, prog, vers, proc, flags, bin)
	 * order: the job's own (flags 0) and, per mount, those no job sent
	 * during it (IOACCT_RPC_UNATTRIBUTED, bin 0).
	 */
	struct ioacct_rpc *rpc;
	size_t nrpc;
	/* Not stored: they were read (a store of schema 23 or later). */
	bool rpc_loaded;
	/* Not stored: the job's CLOCK_MONOTONIC time base, when the caller knows it (iorun). */
	uint64_t start_mono_ns;
	/* Not stored: a job of several nodes from the cluster store, by node name; else none. */
	struct ioacct_node_part *nodes;
	size_t nnodes;
	/*
	 * Not stored: a merged report written without some nodes' parts, the
	 * nodes missing ("mc3,mc4"; "" when none) and how long after the first
	 * node's part the report waited for them (merge_timeout).
	 */
	char missing_nodes[1024];
	uint32_t missing_after_s;
};

void ioacct_jobdata_free(struct ioacct_jobdata *jd);

/* "read", "write", ... ; NULL for an op out of range. */
const char *ioacct_op_name(unsigned int op);
/* "reads", "writes", ... ; NULL for an op out of range. */
const char *ioacct_op_plural(unsigned int op);
/* "READ", "WRITE", ... (IOACCT_READ_ERRORS); NULL for an op out of range. */
const char *ioacct_op_upper(unsigned int op);
/* -1 when unknown. */
int ioacct_op_from_name(const char *name);
/* Moves bytes: read, write (IOACCT_OPK_DATA); false for an op out of range. */
bool ioacct_op_is_data(unsigned int op);
/* What an operation is (see IOACCT_OPS); IOACCT_OPK_MARK for an op out of range. */
enum ioacct_op_kind ioacct_op_kind(unsigned int op);

/* Index of the Darshan access-size bin for a request of `size` bytes. */
unsigned int ioacct_size_bin(uint64_t size);
/* Darshan's counter suffix for a bin: "0_100", "100_1K", ..., "1G_PLUS". */
const char *ioacct_size_bin_name(unsigned int bin);
/* Inclusive upper limit of a bin; UINT64_MAX for the last. */
uint64_t ioacct_size_bin_limit(unsigned int bin);

/* Shifts beyond this many bins are not applied (ioacct_bin_shift). */
#define IOACCT_BIN_SHIFT_MAX (1u << 24)
/*
 * Where one node's bins go on a multi-node job's common time axis. Each node
 * counts its bins from its own registration (start_ns); on the axis of the
 * earliest node (origin_ns) its bin b is bin b + the returned shift. Exact
 * to the bin when the nodes' widths are equal; what is left, under one bin,
 * is the skew (*skew_ns) the report must own up to. A node that started
 * before origin_ns, a zero width or a shift over IOACCT_BIN_SHIFT_MAX gets
 * no shift, and all of start_ns - origin_ns as its skew.
 */
uint32_t ioacct_bin_shift(int64_t start_ns, int64_t origin_ns, uint64_t width_ns, uint64_t *skew_ns);

/* "notfound", "access", "space", "io", "other"; NULL for a class out of range. */
const char *ioacct_err_class_name(unsigned int cls);
/* Failed calls that are real errors: every one but lookups that found nothing. */
uint64_t ioacct_counters_real_errors(const struct ioacct_counters *c);
/* Failed calls not given a class (stored before errors were classified). */
uint64_t ioacct_counters_unclassified(const struct ioacct_counters *c);

void ioacct_counters_add(struct ioacct_counters *dst, const struct ioacct_counters *src);
bool ioacct_counters_is_zero(const struct ioacct_counters *c);

/* Time bin of an event at `t_ns` for a job that started at `start_ns`. */
uint32_t ioacct_bin_of(uint64_t start_ns, uint64_t width_ns, uint64_t t_ns);

/* "batch", "extern", "interactive" or the decimal number, into buf. */
const char *ioacct_step_name(uint32_t step_id, char *buf, size_t len);
/* Parses what ioacct_step_name() prints; -EINVAL on anything else. */
int ioacct_step_parse(const char *s, uint32_t *step_id);

/* Sum of every sample in `s` matching step/mount/op (UINT32_MAX, IOACCT_MNT_ANY = any). */
void ioacct_samples_sum(const struct ioacct_sample *s, size_t n, uint32_t step_id,
			uint64_t mnt_id, uint32_t op, struct ioacct_counters *out);

/*
 * The page-cache hit ratio of reads: 1 - misses / bytes read (read calls
 * and mmap faults); -1 when nothing was read. Misses include readahead, so
 * a ratio of 0 can mean more was brought in than read.
 */
double ioacct_hit_ratio(uint64_t read_bytes, uint64_t miss_bytes);

/*
 * A job's probe mode is "tracepoint views=cache,mmap,readahead" since the
 * page-cache views (issue 14): the views part, NULL for a job stored before
 * (or "none" when none was active).
 */
const char *ioacct_probe_views(const char *probe_mode);
/* Whether the view ("cache", "mmap", "readahead") was active; false for a job stored before. */
bool ioacct_probe_has_view(const char *probe_mode, const char *view);
/*
 * Why the job's mmap_read_bytes were not measured (issue 29), for "mmap
 * bytes: not measured here (%s)"; NULL when they were: the mmap view was
 * active with its exact hooks ("mmap" in the views), or the job was stored
 * before the views. "mmap-nohook": the kernel let no program reach the
 * functions that map the pages; no mmap at all: the view was off.
 */
const char *ioacct_probe_mmap_unmeasured(const char *probe_mode);
/*
 * The RPC probes' word of a job's probe mode (issue 40), its value into buf:
 * "sunrpc" (attached for the job) or "off:REASON" ("off:no-sunrpc"); NULL
 * for a job stored before the RPC layer (no "rpc=" word).
 */
const char *ioacct_probe_rpc(const char *probe_mode, char *buf, size_t len);
/* Its backend part, "tracepoint", into buf. */
const char *ioacct_probe_backend(const char *probe_mode, char *buf, size_t len);
/*
 * A job recorded with file_records = no in ioacct.conf has this word after
 * its backend ("tracepoint files=off views=cache"): it has no per-file
 * records because none were kept, not because it used no file.
 */
#define IOACCT_PROBE_FILES_OFF "files=off"
bool ioacct_probe_files_off(const char *probe_mode);
/* What the reports say where a job's files would be. */
#define IOACCT_FILES_OFF_NOTE "per-file records: off (file_records = no)"

/* Copies src into dst (size len) and always NUL-terminates; -ENAMETOOLONG if cut. */
int ioacct_strlcpy(char *dst, const char *src, size_t len);

/*
 * A command line as Darshan writes its exe: argv[0..argc) joined by single
 * spaces, valid UTF-8 (U+FFFD for bytes that are not: PyDarshan decodes
 * the exe as UTF-8, and the cluster store keeps text), newlines and other
 * control characters as spaces (the exe is one line of the log); cut with
 * IOACCT_CMDLINE_CUT at its end when it does not fit in len bytes, never
 * within a character. argc < 0: up to argv's NULL.
 */
#define IOACCT_CMDLINE_CUT " <TRUNCATED>"
void ioacct_cmdline_join(char *dst, size_t len, int argc, char *const argv[]);

/*
 * mkdir -p: creates path and its missing parents with mode (existing ones
 * are left as they are). With parent_only, stops at the last component's
 * parent, for a file's directory. 0 or -errno.
 */
int ioacct_mkdir_p(const char *path, unsigned int mode, bool parent_only);

#endif /* IOACCT_MODEL_H */
