/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report model: everything a report shows about one job, derived from
 * what ioacct_store_job_load() returns. Per mount: counters summed over
 * steps, the time split (read, write, metadata), bandwidth and IOPS
 * min / max / mean over the job's time bins, the time series merged over
 * steps and operations; per step: counters; for the job: the advice, each
 * item with a level, the numbers behind it and a suggestion.
 *
 * Pure arithmetic: no I/O. The renderers (reports/render.h) only format it,
 * so that every output format says the same thing.
 *
 * Integers stay exact: counters are the stored ones, summed. Rates are
 * doubles, computed from them.
 */
#ifndef IOACCT_REPORT_H
#define IOACCT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "advice_limits.h" /* the advice thresholds, struct ioacct_advice_limits */
#include "model.h"

/*
 * Version of the report content; every output format carries it. 3: the
 * JSON spells each quantity one way (bytes_read, bytes_written,
 * mmap_read_bytes), version 2's names kept beside them for this version.
 */
#define IOACCT_REPORT_VERSION 3

enum ioacct_dir {
	IOACCT_DIR_READ = 0,
	IOACCT_DIR_WRITE = 1,
	IOACCT_DIR_COUNT = 2,
};

enum ioacct_advice_level {
	IOACCT_ADVICE_OK = 0,
	IOACCT_ADVICE_INFO = 1,
	IOACCT_ADVICE_WARN = 2,
	IOACCT_ADVICE_HIGH = 3,
};

/* One time bin of one mount (or of all mounts), summed over steps and operations. */
struct ioacct_report_bin {
	uint32_t bin;
	uint64_t bytes[IOACCT_DIR_COUNT];
	uint64_t calls[IOACCT_DIR_COUNT];
	uint64_t meta;                    /* metadata calls */
	uint64_t miss_bytes;              /* page-cache misses (cache_fill bytes) */
	uint64_t mmap_bytes;              /* file pages faulted into mappings (mmap_fault bytes) */
};

/* Per second, over the job's bins (empty bins count: min is 0 if any bin is empty). */
struct ioacct_rate {
	double min;
	double max;
	double mean;                      /* total / span of the job */
	uint32_t max_bin;                 /* the bin of the max */
};

struct ioacct_report_dir {
	uint64_t bytes;                   /* from the time series, = the totals */
	uint64_t calls;
	struct ioacct_rate bw;            /* bytes per second */
	struct ioacct_rate iops;          /* calls per second */
};

/* Where a mount's data lives, from its file-system type. */
enum ioacct_fs_kind {
	IOACCT_FS_SHARED = 0,             /* lustre, gpfs, nfs, beegfs, cephfs, ... */
	IOACCT_FS_LOCAL,                  /* ext4, xfs, btrfs, tmpfs, ... */
	IOACCT_FS_PSEUDO,                 /* proc, sysfs, devtmpfs, cgroup, ... */
	IOACCT_FS_UNKNOWN,
};

/*
 * One RPC procedure on a mount (issue 40): its rows summed over steps and
 * bins (sum's step_id and bin 0). key names it in the JSON: the procedure's
 * name, or "NAME@PROGvVERS" when another program or version on the mount has
 * a procedure of the same name.
 */
struct ioacct_report_rpc {
	struct ioacct_rpc sum;
	char key[IOACCT_RPC_NAME_MAX + 32];
};

struct ioacct_report_mount {
	uint64_t mnt_id;
	const char *path;
	const char *fstype;
	const char *source;
	enum ioacct_fs_kind kind;
	char idname[32];                  /* path storage for a mount missing from the table */
	struct ioacct_counters op[IOACCT_OP_COUNT]; /* summed over steps */
	uint64_t calls, errors, ns;       /* over every operation */
	uint64_t errclass[IOACCT_NR_ERR_CLASSES]; /* errors per enum ioacct_err_class */
	uint64_t unclassified;            /* errors of jobs stored before errors were classified */
	uint64_t meta_calls;              /* see ioacct_op_is_meta() */
	uint64_t meta_ns;                 /* Darshan's META time: every operation but read and write */
	bool mmap_unmeasured;             /* no exact hook: IOACCT_MMAP_READ_BYTES is left out */
	struct ioacct_report_dir dir[IOACCT_DIR_COUNT];
	struct ioacct_report_bin *bins;   /* bins with any call, in bin order */
	size_t nbins;
	/*
	 * Its RPCs (issue 40) per procedure, most calls first (then the
	 * stores' order): the job's own, and those no job sent during it
	 * (IOACCT_RPC_UNATTRIBUTED) with their calls summed.
	 */
	struct ioacct_report_rpc *rpc;
	size_t nrpc;
	struct ioacct_report_rpc *rpc_unattr;
	size_t nrpc_unattr;
	uint64_t rpc_unattr_calls;
};

struct ioacct_report_step {
	uint32_t step_id;
	const struct ioacct_step *step;   /* NULL when the step has data but no row */
	struct ioacct_counters op[IOACCT_OP_COUNT]; /* summed over mounts */
	uint64_t calls, errors, ns, meta_calls, meta_ns;
	uint64_t errclass[IOACCT_NR_ERR_CLASSES];
	uint64_t unclassified;
};

/* One number behind an advice item; integers stay integers. */
struct ioacct_advice_value {
	const char *name;
	bool is_int;
	uint64_t u;
	double d;
};

#define IOACCT_ADVICE_VALUES 6
#define IOACCT_ADVICE_TEXT 512

struct ioacct_advice {
	enum ioacct_advice_level level;
	const char *rule;                 /* "small-requests", ... (docs/report-format.md) */
	const struct ioacct_report_mount *mount; /* NULL: about the whole job */
	int dir;                          /* enum ioacct_dir, or -1 */
	char message[IOACCT_ADVICE_TEXT]; /* what was seen, with the numbers */
	char suggestion[IOACCT_ADVICE_TEXT];
	struct ioacct_advice_value values[IOACCT_ADVICE_VALUES];     /* measured */
	size_t nvalues;
	struct ioacct_advice_value thresholds[IOACCT_ADVICE_VALUES]; /* from the config */
	size_t nthresholds;
};

/*
 * One file of the job (issue 26): its records (per step and rank) summed,
 * or a mount's "other files" (the calls on files past max_files).
 */
struct ioacct_report_file {
	struct ioacct_file sum;           /* counters summed; largest bytes, first and last times */
	const struct ioacct_report_mount *mount; /* NULL: a mount the report has no calls of */
	int32_t top_rank;                 /* the rank that moved most bytes (then took most time) */
	uint32_t nranks;                  /* ranks with records of the file */
	uint64_t calls;                   /* opens, reads, writes, stats, fsyncs, seeks */
	uint64_t ns;                      /* read, write and metadata time */
	bool other;                       /* the mount's "other files" */
};

/*
 * One file's MPI-IO (issue 27): its records (per step and process) summed,
 * and the POSIX bytes of the same file. bytes_* leave out the unsized
 * calls' (unsized_* > 0: the bytes are at least these).
 */
struct ioacct_report_mpiio_file {
	struct ioacct_mpiio sum;          /* path without a "ufs:" prefix; rank -1: several */
	uint32_t nranks;                  /* records summed (one per step, process and file) */
	bool posix_found;                 /* the job has POSIX records of the file */
	uint64_t posix_read;              /* their bytes */
	uint64_t posix_written;
};

/*
 * One HDF5 file's layer (issue 39): what its datasets' calls asked for
 * (their records summed, every rank) beside the POSIX bytes of the same
 * file: chunking, compression and metadata make the two differ.
 */
struct ioacct_report_h5_file {
	const char *name;                 /* the file's H5F record's name (jd->h5) */
	uint32_t ndatasets;               /* dataset records (per step and process) */
	uint64_t bytes_read, bytes_written;       /* the datasets' */
	uint64_t unsized_reads, unsized_writes;
	bool posix_found;                 /* the job has POSIX records of the file */
	uint64_t posix_read, posix_written;
};

struct ioacct_report {
	const struct ioacct_jobdata *jd;  /* not owned */
	struct ioacct_advice_limits limits;
	uint64_t bin_width_ns;
	uint32_t nbins;                   /* bins the job spans, empty ones included */
	uint64_t last_width_ns;           /* the last bin is cut at the job's end */
	uint64_t span_ns;                 /* (nbins - 1) * width + last width */
	struct ioacct_report_mount *mounts; /* with any call, in mount-id order */
	size_t nmounts;
	struct ioacct_report_mount all;   /* every mount together */
	struct ioacct_report_step *steps;
	size_t nsteps;
	struct ioacct_advice *advice;     /* most severe first; at least one item */
	size_t nadvice;
	/* Per-file records (issue 26), of the mounts the report keeps. */
	const struct ioacct_file **records; /* every record, in the store's order */
	size_t nrecords;
	struct ioacct_report_file *files; /* by bytes moved, then time, most first */
	size_t nfiles;
	bool files_partial;               /* max_files was reached: "other files" has calls */
	uint64_t other_calls;             /* calls on "other files" (opens ... seeks) */
	uint64_t other_bytes;             /* bytes read and written there */
	/* MPI-IO (issue 27): the records are jd->mpiio; per file, by path; every file. */
	struct ioacct_report_mpiio_file *mpiio_files;
	size_t nmpiio_files;
	struct ioacct_report_mpiio_file mpiio_all;
	/* HDF5 (issue 39): the records are jd->h5; per file, by name, in jd->h5's order. */
	struct ioacct_report_h5_file *h5_files;
	size_t nh5_files;
	/* RPC rows (issue 40): the records are jd->rpc; a mount with any has its own. */
	bool has_rpc;                     /* some mount of the report has RPC rows */
	bool files_mmap;                  /* the files' mmap_bytes were measured (exact hooks) */
	bool files_miss;                  /* their cache_miss_bytes were (the cache view) */
};

/*
 * Builds the report of `jd` (which must outlive it). `only_mount`, when not
 * NULL, keeps the mount with that path alone (and `all` is that mount).
 * NULL limits: the defaults. NULL with errno set (ENOMEM).
 */
struct ioacct_report *ioacct_report_create(const struct ioacct_jobdata *jd,
					   const struct ioacct_advice_limits *limits,
					   const char *only_mount);
void ioacct_report_destroy(struct ioacct_report *r);

/*
 * Real errors of a mount or step: every failed call but the lookups that
 * found nothing (ENOENT, ENOTDIR), unclassified ones included.
 */
uint64_t ioacct_report_real_errors(uint64_t errors, const uint64_t *errclass);
/* What a class means, for people: "lookups that found nothing", ... */
const char *ioacct_err_class_text(unsigned int cls);

/* Bytes read through the page cache: read calls and file pages faulted into mappings. */
uint64_t ioacct_report_read_all(const struct ioacct_counters *op);
/* "normal", "random", ..., the IOACCT_HINT_ classes of fadvise and madvise; NULL out of range. */
const char *ioacct_hint_name(unsigned int hint);

/* The report's mount of a per-file record; NULL when the report has no calls there. */
const struct ioacct_report_mount *ioacct_report_file_mount(const struct ioacct_report *r,
							   uint64_t mnt_id);
/* The mean of a sum over n calls, 0 for none. */
static inline uint64_t ioacct_rpc_mean(uint64_t sum, uint64_t calls)
{
	return calls ? sum / calls : 0;
}
/* A record's calls: opens, reads, writes, stats, fsyncs and seeks. */
uint64_t ioacct_file_calls(const struct ioacct_file *f);
/* MPI-IO bytes (read + written) over the POSIX bytes of the same file; -1 when there are none. */
double ioacct_report_mpiio_ratio(const struct ioacct_report_mpiio_file *x);

/* Metadata operations (IOACCT_OPK_META): every one but read, write and create. */
bool ioacct_op_is_meta(unsigned int op);
/* Width in ns of bin `bin` of the job: the last one ends at the job's end. */
uint64_t ioacct_report_bin_width(const struct ioacct_report *r, uint32_t bin);

const char *ioacct_dir_name(unsigned int dir);               /* "read", "write" */
const char *ioacct_advice_level_name(enum ioacct_advice_level level); /* "HIGH", ... */
const char *ioacct_fs_kind_name(enum ioacct_fs_kind kind);   /* "shared", ... */
enum ioacct_fs_kind ioacct_fs_kind_of(const char *fstype);
/* Darshan's label of an access-size bin: "0-100", "101-1K", ..., "1G+". */
const char *ioacct_size_bin_label(unsigned int bin);

/*
 * The per-mount counters under the names the text report and the JSON
 * give them: Darshan's POSIX names where the meaning matches, IOACCT_* for
 * the rest. Counts are successful calls, as Darshan counts them; times are
 * nanoseconds, shown by the renderers as Darshan's float seconds.
 */
enum ioacct_counter_kind {
	IOACCT_CK_COUNT,
	IOACCT_CK_TIME_NS,
};

struct ioacct_named_counter {
	char name[48];                    /* without Darshan's "total_" prefix */
	enum ioacct_counter_kind kind;
	bool darshan;                     /* a Darshan POSIX counter */
	uint64_t value;
};

/*
 * POSIX_BYTES_READ and _WRITTEN, the three POSIX_F_*_TIME, IOACCT_ERRORS; the
 * size bins of reads and writes; the error classes; per operation its count,
 * its errors and its time.
 */
#define IOACCT_NAMED_COUNTERS \
	(9 + 2 * IOACCT_NR_SIZE_BINS + IOACCT_NR_ERR_CLASSES + 3 * IOACCT_OP_COUNT)

/* Fills `out` (IOACCT_NAMED_COUNTERS entries) and returns how many were filled. */
size_t ioacct_report_counters(const struct ioacct_report_mount *m, struct ioacct_named_counter *out);

#endif /* IOACCT_REPORT_H */
