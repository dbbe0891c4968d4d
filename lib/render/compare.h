/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job compared with a Darshan log of it (ioreport --compare): per mount,
 * ioacct's counters beside the sums of Darshan's POSIX records on that
 * mount, with the ratio ours / Darshan; then the read and write bandwidth
 * per time bin, ours and Darshan's HEATMAP resampled to one common bin
 * width, and the relative error of the means. With darshan_filter, ours
 * leaves out the mounts Darshan does not record (ioacct_darshan_skips_mount).
 * With only_mount, both sides keep that mount alone (Darshan's heatmap,
 * which is not per mount, stays whole). Where ours has per-file records and
 * the log records of files, file by file too: calls and bytes of each name.
 *
 * The model is computed once (ioacct_compare_create) and rendered as text;
 * the unit tests check the model itself.
 */
#ifndef IOACCT_COMPARE_H
#define IOACCT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "darshan.h"
#include "report.h"

/*
 * Rows of a mount, the counters reports name as Darshan's: the counts of the
 * operations reported as POSIX_* (IOACCT_OPS), 2 volumes, the size bins of
 * reads and writes, 3 times.
 */
#define IOACCT_COMPARE_OP_POSIX +1
#define IOACCT_COMPARE_OP_IOACCT
#define IOACCT_COMPARE_OP_(NAME, num, name, kind, darshan, report, ...) IOACCT_COMPARE_OP_##report
#define IOACCT_COMPARE_ROWS (5 + 2 * IOACCT_NR_SIZE_BINS IOACCT_OPS(IOACCT_COMPARE_OP_))

struct ioacct_compare_row {
	char name[48];                    /* Darshan's counter name */
	bool is_time;                     /* seconds; else an integer count */
	bool darshan_known;               /* false when a Darshan record had it at -1 */
	double ours;
	double darshan;
	double ratio;                     /* ours / darshan; NAN when undefined */
};

struct ioacct_compare_mount {
	const char *path;                 /* points into the report or the log */
	const char *fstype;
	bool in_ours;                     /* ours did I/O there (after the filter) */
	size_t posix_records;             /* Darshan's POSIX records on it */
	size_t stdio_records, mpiio_records;
	double stdio_bytes[2];            /* read, written; context, not compared */
	double mpiio_bytes[2];
	struct ioacct_compare_row rows[IOACCT_COMPARE_ROWS];
};

struct ioacct_compare_series {
	bool present;                     /* the log has heatmap:POSIX records */
	size_t records;                   /* heatmap:POSIX records summed (one per rank) */
	uint64_t ours_width_ns;
	uint64_t darshan_width_ns;        /* the widest of the records */
	uint64_t width_ns;                /* the common width */
	int64_t offset_ns;                /* Darshan's start minus ours */
	int64_t origin_ns;                /* start of bin 0, relative to our start */
	size_t nbins;
	double *ours[2];                  /* bytes per common bin: read, write */
	double *darshan[2];
	double mean_ours[2];              /* bytes per second over the common span */
	double mean_darshan[2];
	double rel_error[2];              /* (ours - Darshan) / Darshan; 0 when both are 0 */
};

/*
 * Per file, when ours has per-file records (issue 26) and the log has
 * records of files (not only of mounts, as ioacct's logs of jobs without
 * per-file records have): ours as the job's own log names them
 * (ioacct_darshan_file_records), Darshan's POSIX records, matched by name,
 * every rank added up on each side.
 */
#define IOACCT_COMPARE_FILE_COUNTERS 8
extern const char *const ioacct_compare_file_counters[IOACCT_COMPARE_FILE_COUNTERS];

struct ioacct_compare_file {
	char *name;                       /* the path, or ioacct's name of a record (malloc'd) */
	size_t ours_records;              /* records of ranks added up */
	size_t darshan_records;
	double ours[IOACCT_COMPARE_FILE_COUNTERS];
	double darshan[IOACCT_COMPARE_FILE_COUNTERS];
	bool darshan_known[IOACCT_COMPARE_FILE_COUNTERS]; /* false: a record had it at -1 */
	bool same;                        /* on both sides, every counter equal */
};

struct ioacct_compare_files {
	bool ours;                        /* ours has per-file records */
	bool darshan;                     /* the log has records of files */
	struct ioacct_compare_file *files; /* by name */
	size_t nfiles;
	size_t both, same, ours_only, darshan_only;
};

struct ioacct_compare {
	const struct ioacct_report *report;    /* not owned */
	const struct ioacct_darshan_log *log;  /* not owned */
	bool darshan_filter;
	/* Rendering: also the rows that are 0 on both sides (--all-counters); false by default. */
	bool all_counters;
	const char *only_mount;                /* NULL: every mount */
	struct ioacct_compare_mount *mounts;   /* ours in report order, then Darshan's only */
	size_t nmounts;
	const struct ioacct_report_mount **filtered; /* ours left out by the filter */
	size_t nfiltered;
	struct ioacct_compare_series series;
	/* The log's fsync time is in F_META_TIME (IOACCT_DARSHAN_FSYNC_META): ours likewise. */
	bool fsync_meta;
	struct ioacct_compare_files files;
};

/* NULL with errno set (ENOMEM). Both arguments must outlive the result. */
struct ioacct_compare *ioacct_compare_create(const struct ioacct_report *r,
					     const struct ioacct_darshan_log *log,
					     bool darshan_filter, const char *only_mount);
void ioacct_compare_destroy(struct ioacct_compare *c);

/* The whole comparison as text; `log_path` names the log. 0 or -errno. */
int ioacct_compare_render_text(FILE *f, const struct ioacct_compare *c, const char *log_path);

#endif /* IOACCT_COMPARE_H */
