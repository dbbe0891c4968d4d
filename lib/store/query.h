/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacct's query language and output, as pure functions: the field table,
 * sacct's time formats, job and list arguments, the rows made of a job
 * (the job, its steps, each per mount) and their printing as a table,
 * parsable text or JSON. No store, no socket: query_fetch.h gets the jobs.
 *
 * Functions returning int give 0 or -errno and, where they take `err`, a
 * one-line message in it.
 */
#ifndef IOACCT_QUERY_H
#define IOACCT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "model.h"

/* A step or mount id meaning "all of them" (no real step or mount has it). */
#define IOACCT_QUERY_ALL UINT32_MAX

enum ioacct_qfield {
	IOACCT_QF_JOBID,
	IOACCT_QF_JOBIDRAW,
	IOACCT_QF_CLUSTER,
	IOACCT_QF_JOBNAME,
	IOACCT_QF_USER,
	IOACCT_QF_UID,
	IOACCT_QF_GID,
	IOACCT_QF_NODE,
	IOACCT_QF_NODELIST,
	IOACCT_QF_SOURCE,
	IOACCT_QF_WORKDIR,
	IOACCT_QF_START,
	IOACCT_QF_END,
	IOACCT_QF_ELAPSED,
	IOACCT_QF_STATE,
	IOACCT_QF_EXITCODE,
	IOACCT_QF_RESTARTS,
	IOACCT_QF_STEP,
	IOACCT_QF_MOUNT,
	IOACCT_QF_FSTYPE,
	IOACCT_QF_MOUNTSOURCE,
	IOACCT_QF_READBYTES,
	IOACCT_QF_WRITEBYTES,
	/* The calls of each operation: IOACCT_QF_READS, ... (IOACCT_OPS). */
#define IOACCT_QF_OP_(NAME, ...) IOACCT_QF_##NAME##S,
	IOACCT_OPS(IOACCT_QF_OP_)
#undef IOACCT_QF_OP_
	IOACCT_QF_ERRORS,
	IOACCT_QF_REALERRORS,
	IOACCT_QF_NOTFOUND,
	IOACCT_QF_READTIME,
	IOACCT_QF_WRITETIME,
	IOACCT_QF_METATIME,
	IOACCT_QF_AVEREADBW,
	IOACCT_QF_AVEWRITEBW,
	IOACCT_QF_MAXREADBW,
	IOACCT_QF_MAXWRITEBW,
	IOACCT_QF_AVEREADIOPS,
	IOACCT_QF_AVEWRITEIOPS,
	IOACCT_QF_DROPPED,
	IOACCT_QF_DROPPEDBYTES,
	IOACCT_QF_PROBEMODE,
	IOACCT_QF_BINWIDTH,
	/* The page-cache and mmap views (issue 14). */
	IOACCT_QF_VIEWS,
	IOACCT_QF_MMAPREADBYTES,
	IOACCT_QF_CACHEMISSBYTES,
	IOACCT_QF_READAHEADBYTES,
	IOACCT_QF_HITRATIO,
	/* The RPCs the job sent to file servers (issue 40). */
	IOACCT_QF_RPCCALLS,
	IOACCT_QF_RPCBYTESSENT,
	IOACCT_QF_RPCBYTESRECV,
	IOACCT_QF_COUNT
};

/* How a value is written in JSON. */
enum ioacct_qkind {
	IOACCT_QK_TEXT,
	IOACCT_QK_INT,
	IOACCT_QK_REAL,
};

#define IOACCT_QF_PER_MOUNT 0x1U /* asking for it gives one row per mount */
#define IOACCT_QF_BYTES 0x2U     /* bytes or bytes/s: scaled by --units */
#define IOACCT_QF_PEAK 0x4U      /* needs the time series */
#define IOACCT_QF_JOB_ONLY 0x8U  /* blank on step rows, as sacct leaves User */
#define IOACCT_QF_PER_NODE 0x10U /* asking for it gives one job per node (cluster store) */

struct ioacct_qfield_info {
	const char *name;
	int width;              /* default; negative: left-justified */
	enum ioacct_qkind kind;
	unsigned int flags;
	const char *help;       /* one line, for --helpformat */
};

/* NULL when out of range. */
const struct ioacct_qfield_info *ioacct_query_field(enum ioacct_qfield f);
/* Case-insensitive; -1 when unknown. */
int ioacct_query_field_find(const char *name);

/* One output column: -o Name%WIDTH (right-justified) or Name%-WIDTH (left). */
struct ioacct_qcol {
	enum ioacct_qfield field;
	int width;
	bool left;
};

#define IOACCT_QUERY_DEFAULT_FORMAT \
	"JobID,JobName,User,Start,Elapsed,State,ReadBytes,WriteBytes,Opens,Errors"
#define IOACCT_QUERY_MAX_WIDTH 4096

/*
 * Parses "Field[%[-]N],..." (or "ALL") and appends to *cols, which may
 * already hold columns (-o given twice); *cols is realloc'd, free() it.
 * An unknown field's message lists the valid ones.
 */
int ioacct_query_format_parse(const char *spec, struct ioacct_qcol **cols, size_t *ncols,
			      char *err, size_t errlen);

/* Every field with its help, one per line, for -e/--helpformat. */
void ioacct_query_fields_help(FILE *f);

/* What ioacct_query_time_parse() accepts, for messages and --help. */
#define IOACCT_QUERY_TIME_FORMS                                                      \
	"HH:MM[:SS], MMDD[YY], MM/DD[/YY], MM/DD[/YY]-HH:MM[:SS], "                     \
	"YYYY-MM-DD[THH:MM[:SS]], today, tomorrow, midnight, noon, "                    \
	"now[{+|-}N[seconds|minutes|hours|days|weeks]]"

/*
 * sacct's time formats, in local time, relative to `now` (injected so that
 * tests are exact). As with sacct's -S/-E, a time alone is today, and a
 * date without a year is this year unless its month is still to come, then
 * last year. The message of a bad time names the accepted forms.
 */
int ioacct_query_time_parse(const char *s, time_t now, time_t *out, char *err, size_t errlen);

/* Local midnight of the day of `t`. */
time_t ioacct_query_midnight(time_t t);

/* -j: JOB[.STEP][,...]; appends to *sel (realloc'd, free() it). */
struct ioacct_qjobsel {
	uint64_t job_id;
	uint32_t step_id; /* IOACCT_QUERY_ALL: the whole job */
};

int ioacct_query_jobs_parse(const char *s, struct ioacct_qjobsel **sel, size_t *n, char *err,
			    size_t errlen);

/*
 * A comma-separated list into its non-empty items, appended to *items
 * (realloc'd; the items are strdup'd): -u and -M. ioacct_query_list_free()
 * frees them all.
 */
int ioacct_query_list_split(const char *s, char ***items, size_t *n);
void ioacct_query_list_free(char **items, size_t n);

/* Decimal uint64 items of a comma-separated list (the daemon's request). */
int ioacct_query_u64_list(const char *s, uint64_t **out, size_t *n);

/* --units: K, M, G, T, P (case-insensitive) -> 1..5. */
int ioacct_query_units_parse(const char *s, unsigned int *units);

/*
 * The largest bytes read and written in one time bin, for a step or every
 * step (IOACCT_QUERY_ALL) on a mount or every mount: what Max*BW divide by
 * the bin width. The sums across steps or mounts are taken bin by bin.
 */
struct ioacct_qpeak {
	uint32_t step_id;
	uint64_t mnt_id;    /* IOACCT_MNT_ANY: every mount */
	uint64_t read_bytes;
	uint64_t write_bytes;
};

/* From a job's series (any order); *out malloc'd (NULL when n is 0), free() it. */
int ioacct_query_peaks(const struct ioacct_sample *series, size_t n, struct ioacct_qpeak **out,
		       size_t *nout);

/* One output row: a job or one of its steps, on every mount or on one. */
struct ioacct_qrow {
	const struct ioacct_job *job;
	const struct ioacct_step *step;   /* NULL on the job's rows */
	bool per_mount;                   /* false: all mounts together */
	uint64_t mnt_id;
	const struct ioacct_mount *mount; /* NULL when the job's mount table lacks mnt_id */
	struct ioacct_counters op[IOACCT_OP_COUNT];
	bool has_peak;
	uint64_t peak_read;
	uint64_t peak_write;
	/* The job's own RPCs of the row's step and mount (issue 40); none read: blank. */
	bool rpc_read;
	uint64_t rpc_calls, rpc_bytes_sent, rpc_bytes_recv;
};

struct ioacct_qrow_opts {
	bool per_mount;          /* one row per mount with I/O */
	bool no_steps;           /* -X: job rows only */
	bool with_peaks;         /* peaks were computed: a row without one has 0 */
	const uint32_t *steps;   /* only these steps and no job row; NULL: all */
	size_t nsteps;
};

/*
 * The rows of one job: the job, then its steps (batch, extern, interactive,
 * then by number); per mount, ordered by path. A job or step without I/O
 * still gets one row (with no mount). *rows malloc'd, free() it; the rows
 * point into jd and peaks, which must outlive them.
 */
int ioacct_query_rows(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		      size_t npeaks, const struct ioacct_qrow_opts *o, struct ioacct_qrow **rows,
		      size_t *n);

/*
 * A field's value as text in buf, as the table shows it. Returns true when
 * the value is absent (a blank, "Unknown" for the end of a running job),
 * which JSON writes as null. `units` 0 keeps exact numbers.
 */
bool ioacct_query_value(const struct ioacct_qrow *r, enum ioacct_qfield f, unsigned int units,
			int64_t now_ns, char *buf, size_t len);

enum ioacct_qmode {
	IOACCT_QM_TABLE,
	IOACCT_QM_PARSABLE,  /* -p: every field followed by the delimiter */
	IOACCT_QM_PARSABLE2, /* -P: fields separated by the delimiter */
	IOACCT_QM_JSON,
};

struct ioacct_qprint {
	FILE *f;
	enum ioacct_qmode mode;
	const char *delimiter; /* "|" when NULL */
	bool header;
	unsigned int units;
	int64_t now_ns;        /* the end of running jobs, for Elapsed and averages */
	const struct ioacct_qcol *cols;
	size_t ncols;
	size_t nrows;          /* printed so far */
};

/* Header (and dashes), rows, end; like sacct's, or one JSON object. */
void ioacct_query_print_begin(struct ioacct_qprint *p);
void ioacct_query_print_row(struct ioacct_qprint *p, const struct ioacct_qrow *r);
void ioacct_query_print_end(struct ioacct_qprint *p);

#endif /* IOACCT_QUERY_H */
