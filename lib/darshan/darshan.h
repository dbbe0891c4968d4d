/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Darshan logs (darshan-hpc/darshan), read and written in plain C with zlib;
 * no darshan-util. Log format versions 3.10, 3.20, 3.21 and 3.41 are read
 * (the ones Darshan 3.1 to 3.5 write), 3.41 is written.
 *
 * A log: an uncompressed header (version string, magic number, compression,
 * partial flag, offset and length of the name table and of each module's
 * region, each module's record version), then zlib-compressed regions: the
 * job (uid, start and end, nprocs, job id, 1024 bytes of key=value metadata,
 * the command line and the mount table), the name table (record id -> path)
 * and one region per module. Records of the POSIX, MPI-IO, STDIO, H5F and
 * H5D modules are read, older record versions converted to the newest one
 * the way darshan-util converts them; HEATMAP and DXT_POSIX (trace) records
 * are read as they are; other modules (Lustre, DXT_MPIIO, ...) are listed
 * but not read. docs/darshan.md has the details.
 *
 * A bad log (truncated, corrupt, not a Darshan log, lengths past the end of
 * the file) gives a message saying what is wrong and where, never a crash.
 * Memory is bounded: a region may inflate to at most 1032 times its
 * compressed size (deflate's own limit) and everything a log allocates
 * counts against one limit (IOACCT_DARSHAN_MEM_MAX unless told otherwise).
 *
 * Integers in logs are in the byte order of the machine that wrote them;
 * the magic number tells which, and both are read. Logs are written in
 * little-endian order.
 */
#ifndef IOACCT_DARSHAN_H
#define IOACCT_DARSHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "darshan_counters.h"
#include "report.h"

#define IOACCT_DARSHAN_MAGIC 6567223
#define IOACCT_DARSHAN_MAX_MODS 64
#define IOACCT_DARSHAN_METADATA_LEN 1024
/* What Darshan reads of the job region: the job struct, the exe and the mount table. */
#define IOACCT_DARSHAN_JOB_REGION_MAX 4096
/* Default limit of the memory one log may take (file, inflated regions, records). */
#define IOACCT_DARSHAN_MEM_MAX (2048ULL << 20)
/* Largest HEATMAP record darshan-parser accepts (its DEF_MOD_BUF_SIZE, 81920 bytes). */
#define IOACCT_DARSHAN_HEATMAP_MAX_BINS 5117

enum ioacct_darshan_comp {
	IOACCT_DARSHAN_ZLIB = 0,
	IOACCT_DARSHAN_BZIP2 = 1,
	IOACCT_DARSHAN_NOCOMP = 2,
};

/* Module ids as log format 3.41 numbers them; older logs are renumbered on reading. */
enum ioacct_darshan_mod_id {
	IOACCT_DARSHAN_MOD_NULL = 0,
	IOACCT_DARSHAN_MOD_POSIX = 1,
	IOACCT_DARSHAN_MOD_MPIIO = 2,
	IOACCT_DARSHAN_MOD_H5F = 3,
	IOACCT_DARSHAN_MOD_H5D = 4,
	IOACCT_DARSHAN_MOD_PNETCDF_FILE = 5,
	IOACCT_DARSHAN_MOD_PNETCDF_VAR = 6,
	IOACCT_DARSHAN_MOD_BGQ = 7,
	IOACCT_DARSHAN_MOD_LUSTRE = 8,
	IOACCT_DARSHAN_MOD_STDIO = 9,
	IOACCT_DARSHAN_MOD_DXT_POSIX = 10,
	IOACCT_DARSHAN_MOD_DXT_MPIIO = 11,
	IOACCT_DARSHAN_MOD_MDHIM = 12,
	IOACCT_DARSHAN_MOD_APXC = 13,
	IOACCT_DARSHAN_MOD_APMPI = 14,
	IOACCT_DARSHAN_MOD_HEATMAP = 15,
	IOACCT_DARSHAN_MOD_DFS = 16,
	IOACCT_DARSHAN_MOD_DAOS = 17,
	IOACCT_DARSHAN_MOD_KNOWN = 18,
};

/* The modules whose counter records are read. */
enum ioacct_darshan_kind {
	IOACCT_DARSHAN_POSIX = 0,
	IOACCT_DARSHAN_MPIIO = 1,
	IOACCT_DARSHAN_STDIO = 2,
	IOACCT_DARSHAN_H5F = 3,           /* HDF5 files */
	IOACCT_DARSHAN_H5D = 4,           /* HDF5 datasets */
	IOACCT_DARSHAN_NKINDS = 5,
};

/* The most counters of any module read (H5D: 94 integers; POSIX: 17 floats). */
#define IOACCT_DARSHAN_MAX_COUNTERS 94
#define IOACCT_DARSHAN_MAX_FCOUNTERS 17

/* A module's counters, in the order of its newest record version. */
struct ioacct_darshan_modinfo {
	const char *name;                 /* as darshan-parser prints it: "POSIX", "MPI-IO", "H5D" */
	enum ioacct_darshan_mod_id mod_id;
	uint32_t version;                 /* newest record version */
	size_t ncounters;
	size_t nfcounters;
	const char *const *counters;      /* "POSIX_OPENS", ... */
	const char *const *fcounters;     /* "POSIX_F_OPEN_START_TIMESTAMP", ... */
	bool file_id;                     /* H5D: the record's file id follows id and rank */
};

/* The indices of the POSIX counters ioacct measures: darshan_counters.h (lib/core). */

/* A POSIX, MPI-IO, STDIO, H5F or H5D record; counters past the module's own count are 0. */
struct ioacct_darshan_record {
	uint64_t id;                      /* Darshan's hash of the path */
	int64_t rank;                     /* -1: shared by every rank, counters aggregated */
	uint64_t file_id;                 /* H5D: its file's record id (0 before H5D version 2) */
	int64_t counters[IOACCT_DARSHAN_MAX_COUNTERS];
	double fcounters[IOACCT_DARSHAN_MAX_FCOUNTERS];
};

/* One HEATMAP record: bytes per time bin of one API ("heatmap:POSIX", ...) and rank. */
struct ioacct_darshan_heatmap {
	uint64_t id;
	int64_t rank;
	double bin_width;                 /* seconds */
	uint64_t nbins;
	int64_t *read_bins;               /* nbins each, malloc'd */
	int64_t *write_bins;
};

/* One traced operation of a DXT record (darshan-dxt-log-format.h's segment_info). */
struct ioacct_darshan_dxt_seg {
	int64_t offset;
	int64_t length;
	double start;                     /* seconds since the job's start */
	double end;
};

/* Darshan's hostname field of a DXT record. */
#define IOACCT_DARSHAN_DXT_HOSTNAME 64
/* A DXT record before its segments: id, rank, shared_record, hostname, two counts. */
#define IOACCT_DARSHAN_DXT_HEAD (16 + 8 + IOACCT_DARSHAN_DXT_HOSTNAME + 16)
#define IOACCT_DARSHAN_DXT_SEG 32

/* One DXT_POSIX record: the read and write operations of a file on a rank, in order. */
struct ioacct_darshan_dxt {
	uint64_t id;                      /* the name record's hash */
	int64_t rank;
	int64_t shared_record;            /* -1: shared by every rank */
	char hostname[IOACCT_DARSHAN_DXT_HOSTNAME]; /* NUL-terminated */
	uint64_t nwrites, nreads;
	struct ioacct_darshan_dxt_seg *writes; /* nwrites each, malloc'd */
	struct ioacct_darshan_dxt_seg *reads;
};

struct ioacct_darshan_region {
	uint64_t off;                     /* in the file */
	uint64_t len;                     /* compressed */
	uint32_t version;                 /* the module's record version */
};

struct ioacct_darshan_mount {
	char *path;
	char *fstype;
};

struct ioacct_darshan_name {
	uint64_t id;
	char *name;
};

struct ioacct_darshan_log {
	char version[8];                  /* "3.21" */
	unsigned int minor;               /* 10, 20, 21 or 41 */
	enum ioacct_darshan_comp comp;
	bool swapped;                     /* written on a machine of the other byte order */
	uint64_t partial;                 /* bit per module id that ran out of memory */
	int64_t uid;
	int64_t start_sec, start_nsec;    /* nsec: 0 before format 3.41 */
	int64_t end_sec, end_nsec;
	int64_t nprocs;
	int64_t jobid;
	char metadata[IOACCT_DARSHAN_METADATA_LEN]; /* "key=value\n" lines */
	char *exe;                        /* command line */
	struct ioacct_darshan_mount *mounts; /* in the log's order */
	size_t nmounts;
	struct ioacct_darshan_name *names; /* sorted by id */
	size_t nnames;
	struct ioacct_darshan_region job_region;
	struct ioacct_darshan_region name_region;
	struct ioacct_darshan_region regions[IOACCT_DARSHAN_MAX_MODS]; /* by 3.41 module id */
	struct ioacct_darshan_record *recs[IOACCT_DARSHAN_NKINDS];
	size_t nrecs[IOACCT_DARSHAN_NKINDS];
	struct ioacct_darshan_heatmap *heatmaps;
	size_t nheatmaps;
	struct ioacct_darshan_dxt *dxt;   /* DXT_POSIX records, in the log's order */
	size_t ndxt;
	/*
	 * ioacct's own records (IOACCT_DARSHAN_OWN_MAGIC): POSIX records that
	 * are no file (a mount's calls no file's record holds, the files past
	 * max_files), kept where Darshan's tools do not look so that they
	 * count no file there; their names are in `names` with the others'.
	 */
	struct ioacct_darshan_record *own;
	size_t nown;
};

/*
 * Where ioacct's own records are in a log: two regions after the modules'
 * (their names, laid out as the name table, then their records, POSIX
 * record version 4), each one zlib stream, found through a trailer, the
 * file's last IOACCT_DARSHAN_OWN_TRAILER bytes: the 8 bytes of
 * IOACCT_DARSHAN_OWN_MAGIC, then the names' offset and length, the records'
 * offset and length and their record version (uint64 each). Darshan's
 * tools read a log through its header's offsets and never see them.
 */
#define IOACCT_DARSHAN_OWN_MAGIC "ioacct\0\1"
#define IOACCT_DARSHAN_OWN_TRAILER 48
/*
 * The metadata key that says how many of them a log has: a log cut short
 * loses its trailer first, and is then said to be truncated, not read as
 * a log without them.
 */
#define IOACCT_DARSHAN_OWN_META "ioacct_own_records="

const struct ioacct_darshan_modinfo *ioacct_darshan_modinfo(enum ioacct_darshan_kind kind);
/* Darshan's name of a module id ("POSIX", "H5F", ...), NULL past the known ones. */
const char *ioacct_darshan_mod_name(unsigned int mod_id);
/* Index of a counter of `kind` by name; *is_float says which array. -1 when unknown. */
int ioacct_darshan_counter_index(enum ioacct_darshan_kind kind, const char *name, bool *is_float);

/*
 * Parses a whole log held in memory. max_mem bounds what the log may
 * allocate (0: IOACCT_DARSHAN_MEM_MAX). NULL with errno set and `err`
 * filled: EINVAL not a Darshan log or corrupt, ENOTSUP a version or
 * compression this reader does not read, EFBIG over the memory limit,
 * ENOMEM.
 */
struct ioacct_darshan_log *ioacct_darshan_parse(const void *buf, size_t len, size_t max_mem,
						char *err, size_t errlen);
/* Reads and parses a log file; errors as ioacct_darshan_parse() and those of open/read. */
struct ioacct_darshan_log *ioacct_darshan_read(const char *path, char *err, size_t errlen);
/* Frees a log read or built; accepts NULL. */
void ioacct_darshan_free(struct ioacct_darshan_log *log);

/* The path of a record id, NULL when the name table lacks it. */
const char *ioacct_darshan_name_of(const struct ioacct_darshan_log *log, uint64_t id);
/* The mount a path lives on: the longest mount point that is a prefix of it up to a '/'. */
const struct ioacct_darshan_mount *ioacct_darshan_mount_of(const struct ioacct_darshan_log *log,
							   const char *path);

/*
 * The totals of a module as `darshan-parser --total` prints them (POSIX,
 * MPI-IO and STDIO: it prints none of H5F and H5D, nor does this): every
 * record aggregated with darshan-util's rules (sums, maxima, earliest
 * non-zero start, latest end, the four most common access sizes and
 * strides, the fastest and slowest rank of shared files). Returns the
 * number of records aggregated; *out is zero when there is none.
 */
size_t ioacct_darshan_total(const struct ioacct_darshan_log *log, enum ioacct_darshan_kind kind,
			    struct ioacct_darshan_record *out);

/* Darshan's record id of a name: Bob Jenkins' 64-bit hash (lookup8) with level 0. */
uint64_t ioacct_darshan_hash(const void *key, size_t len, uint64_t level);

/*
 * Whether the Darshan runtime leaves out I/O on this mount: mount points
 * under its excluded directories (/etc /dev /usr /bin /boot /lib /opt /sbin
 * /sys /proc /var) and file systems it does not list in its mount table
 * (tmpfs, proc, sysfs, devpts, cgroup, ...).
 */
bool ioacct_darshan_skips_mount(const char *path, const char *fstype);
/* Whether the Darshan runtime leaves out a path: under its excluded directories. */
bool ioacct_darshan_skips_path(const char *path);

/*
 * A log of a job from its report, format 3.41: the job record (as Darshan
 * 3.5's runtime writes it: lib_ver first in the metadata, the job's command
 * line as the exe), the mount table, the POSIX records of the job's files
 * (ioacct_darshan_file_records; the pseudo-records among them, a mount's
 * rest and "other files", as ioacct's own records; the POSIX module marked
 * partial when there are "other files") or, for a job without per-file
 * records, one POSIX record per mount with calls (rank -1) holding the
 * counters ioacct measures (-1 for those it does not), and the HEATMAP
 * records (ioacct_darshan_heatmaps). With darshan_filter, mounts Darshan
 * skips are left out. NULL with errno.
 */
struct ioacct_darshan_log *ioacct_darshan_from_report(const struct ioacct_report *r,
						      bool darshan_filter);

/*
 * The per-file records of a job (issue 26) as Darshan POSIX records, as the
 * log of the job holds them and ioreport --compare holds them against a
 * log: one per file name and rank (records of one path and rank added up:
 * a file replaced under its name, several steps), named by the file's path,
 * "<mount>/<ioacct: other files>" for a mount's files past max_files
 * (*partial then true), "<mount>/<ioacct: dev MAJ:MIN ino N ...>" for a
 * file without a whole path under its mount; then per mount one
 * "<mount>/<ioacct: not per file>" record of its calls that no file's
 * record holds (directories, pipes, renames, io_uring, ...), when it has
 * any, so that a mount's records add up to its counters. Counters Darshan
 * defines and ioacct does not keep per file are -1; fsync time is in
 * F_META_TIME, not F_WRITE_TIME (the kernel keeps one metadata time per
 * file). keep: per report mount (NULL: every mount). With darshan_filter,
 * a file whose path Darshan's runtime leaves out (ioacct_darshan_skips_path)
 * has no record of its own: its calls are in its mount's rest. *n is 0 for
 * a job without per-file records (stored before them, or read through
 * ioacctd). 0 or -ENOMEM.
 */
#define IOACCT_DARSHAN_OTHER_FILES "other files"
#define IOACCT_DARSHAN_NOT_PER_FILE "not per file"
struct ioacct_darshan_frec {
	char *name;
	size_t mount;                     /* index into the report's mounts */
	bool pseudo;                      /* no file: a mount's rest or its "other files" */
	struct ioacct_darshan_record rec;
};
int ioacct_darshan_file_records(const struct ioacct_report *r, const bool *keep,
				bool darshan_filter, struct ioacct_darshan_frec **out, size_t *n,
				bool *partial);
void ioacct_darshan_frecs_free(struct ioacct_darshan_frec *fr, size_t n);
/*
 * The job's MPI-IO records (issue 27) as MPIIO records (darshan_mpiio.c):
 * one per path and rank, named as the POSIX record of the same file
 * (ioacct_darshan_mpiio_name), the files on mounts keep[] leaves out
 * skipped. -1 where ioacct counts nothing, and for the bytes of a rank
 * with unsized calls. 0 or -ENOMEM; *n 0 for a job without MPI-IO.
 */
int ioacct_darshan_mpiio_records(const struct ioacct_report *r, const bool *keep,
				 struct ioacct_darshan_frec **out, size_t *n);
/*
 * The job's HDF5 records (issue 39) as H5F and H5D records (darshan_hdf5.c):
 * `kind` IOACCT_DARSHAN_H5F, one per file and rank, named by the file's path
 * (ioacct_darshan_mpiio_name), or IOACCT_DARSHAN_H5D, one per dataset and
 * rank, named "FILE:/DATASET" with the file's path as the H5F record has it
 * and that record's id as file_id; the records of one name and rank added
 * up (rank 0 when no record of the kind names a rank, as the POSIX records);
 * files on mounts keep[] leaves out skipped. -1 where ioacct counts
 * nothing, and for the bytes of a rank with unsized calls. 0 or -ENOMEM;
 * *n 0 for a job without HDF5 records of that kind.
 */
int ioacct_darshan_h5_records(const struct ioacct_report *r, const bool *keep,
			      enum ioacct_darshan_kind kind, struct ioacct_darshan_frec **out,
			      size_t *n);
/* One H5F or H5D record of counters h (rank h->rank, ids given). */
void ioacct_darshan_h5_record(const struct ioacct_h5rec *h, uint64_t id, uint64_t file_id,
			      struct ioacct_darshan_record *r);
/* The metadata line that says how the H5F and H5D records are made. */
#define IOACCT_DARSHAN_H5_META                                                          \
	"ioacct_hdf5=uprobes; -1: not measured; H5D_BYTES_* -1: calls of a selection of " \
	"unknown size, in no H5D_SIZE_*_AGG bin; H5D_MAX_*_TIME_SIZE -1: such a call"
/* Whether the file at `name` lies on a mount keep[] (per report mount) leaves out: its deepest. */
bool ioacct_darshan_mount_skipped(const struct ioacct_report *r, const bool *keep,
				  const char *name);
/* One MPIIO record of counters m (rank m->rank, id given). */
void ioacct_darshan_mpiio_record(const struct ioacct_mpiio *m, uint64_t id,
				 struct ioacct_darshan_record *r);
/* The record name of an MPI-IO path: no "ufs:" prefix, relative ones under workdir. NULL: ENOMEM. */
char *ioacct_darshan_mpiio_name(const char *path, const char *workdir);
/* The metadata line that says how the MPIIO records are made. */
#define IOACCT_DARSHAN_MPIIO_META                                                         \
	"ioacct_mpiio=uprobes; MPIIO_BYTES_* -1: calls with a datatype of unknown size, in " \
	"no MPIIO_SIZE_*_AGG bin"
/* One file's record (rank and counters as above, id given). */
void ioacct_darshan_file_record(const struct ioacct_file *f, uint64_t id,
				struct ioacct_darshan_record *r);
/* The record name of a file on the mount `mount` (see above); malloc'd, NULL on ENOMEM. */
char *ioacct_darshan_file_name(const char *mount, const struct ioacct_file *f);
/* A mount point with tabs and newlines as the kernel writes them (\011, \012); malloc'd. */
char *ioacct_darshan_mount_name(const char *path);
/* Metadata line of a log whose fsync time is in F_META_TIME (logs with per-file records). */
#define IOACCT_DARSHAN_FSYNC_META "ioacct_fsync_time=meta"

/*
 * The HEATMAP records (module 15, "heatmap:POSIX") of a job's log, from its
 * time bins over the mounts keep[] keeps: bins of the job's width merged
 * pairwise while there are more than 200 (Darshan's limit), each bin's
 * read and write bytes the job's, exactly. One record, rank 0, for a job
 * whose files name one rank at most; else one per rank (of the files that
 * moved bytes), each bin split over the ranks in proportion to what their
 * files would put there at an even rate between their first and last
 * access, in whole bytes that add up to the bin's (*estimated then true).
 * *n is 0 when no byte moved. 0 or -ENOMEM.
 */
int ioacct_darshan_heatmaps(const struct ioacct_report *r, const bool *keep,
			    struct ioacct_darshan_heatmap **out, size_t *n, bool *estimated);
void ioacct_darshan_heatmaps_free(struct ioacct_darshan_heatmap *h, size_t n);
/* The metadata line of a log whose heatmaps split the job's bins over its ranks by estimate. */
#define IOACCT_DARSHAN_HEATMAP_META                                                     \
	"ioacct_heatmap=each bin the job's bytes; split over ranks by their files' access " \
	"windows"

/*
 * Adds one traced operation on `path` to the DXT_POSIX record of (path,
 * rank) of a log being built: the record id is Darshan's hash of the path,
 * added to the name table when new; a new record has shared_record -1 and
 * `hostname`. Segments are kept in the order added (Darshan's: the order
 * operations ended). 0 or -ENOMEM (the log unchanged).
 */
int ioacct_darshan_dxt_add(struct ioacct_darshan_log *log, const char *path, int64_t rank,
			   const char *hostname, bool write, const struct ioacct_darshan_dxt_seg *seg);

/*
 * ioacct_darshan_dxt_add() of one traced read or write as the tracer gives
 * it (iorun --trace, ioacctd's job traces): `path` as the call named it, a
 * relative one joined to `cwd`; the offset and the bytes it moved; start
 * and duration in ns since the job's start. 0 or -ENOMEM.
 */
int ioacct_darshan_dxt_add_call(struct ioacct_darshan_log *log, const char *path, const char *cwd,
				int64_t rank, const char *hostname, bool write, int64_t offset,
				int64_t bytes, uint64_t start_ns, uint64_t dur_ns);

/*
 * Moves the DXT_POSIX records of `from` (with their names) to the end of
 * those of `to`: a trace gathered apart, put in the log of the job's
 * counters. 0, or -ENOMEM with both logs as they were.
 */
int ioacct_darshan_dxt_move(struct ioacct_darshan_log *to, struct ioacct_darshan_log *from);

/*
 * A trace spooled apart (sbatch --io-monitor=trace: ioacctd writes it, the
 * epilog reads it) put in the log of the job's counters: its DXT_POSIX
 * records moved as ioacct_darshan_dxt_move() does, and its metadata lines
 * "trace_*=..." (events, lost, dropped, cap) appended to the log's. 0 or
 * -ENOMEM.
 */
int ioacct_darshan_trace_merge(struct ioacct_darshan_log *to, struct ioacct_darshan_log *trace);

/*
 * Where ioacctd spools the trace of job `job_id` of `cluster` for the
 * epilog: <directory of db_path>/trace/<cluster>-<job_id>.darshan, ioacctd's
 * and root's alone. 0, -EINVAL for a cluster name that is no file name,
 * -ENAMETOOLONG.
 */
int ioacct_darshan_spool_path(const char *db_path, const char *cluster, uint64_t job_id, char *out,
			      size_t len);
/* That directory, <directory of db_path>/trace. 0 or -ENAMETOOLONG. */
int ioacct_darshan_spool_dir(const char *db_path, char *out, size_t len);
/* Beside the spool file while ioacctd still writes it (in the background): wait. */
#define IOACCT_DARSHAN_SPOOL_PENDING ".pending"

/*
 * Serialises a log as format 3.41, zlib-compressed, into a malloc'd buffer.
 * 0 or -errno (-EINVAL with `err` filled when the log cannot be written:
 * a job region over 4096 bytes, a heatmap with too many bins).
 */
int ioacct_darshan_write(const struct ioacct_darshan_log *log, void **buf, size_t *len, char *err,
			 size_t errlen);
/* ioacct_darshan_write() into a file, replaced whole or not at all. */
int ioacct_darshan_write_file(const struct ioacct_darshan_log *log, const char *path, char *err,
			      size_t errlen);

#endif /* IOACCT_DARSHAN_H */
