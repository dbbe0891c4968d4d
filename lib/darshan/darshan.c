/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a Darshan log means (see darshan.h; darshan_read.c reads it): the
 * modules' counter tables, lookups of names and mounts, darshan-parser's
 * totals and the record-id hash. They follow darshan-log-format.h and
 * darshan-util; docs/darshan.md lists them.
 */
#include "darshan.h"
#include "util.h"

#include <stdint.h>
#include <string.h>

/* ---- module tables ---- */

static const char *const posix_counters[] = {
	"POSIX_OPENS", "POSIX_FILENOS", "POSIX_DUPS", "POSIX_READS", "POSIX_WRITES",
	"POSIX_SEEKS", "POSIX_STATS", "POSIX_MMAPS", "POSIX_FSYNCS", "POSIX_FDSYNCS",
	"POSIX_RENAME_SOURCES", "POSIX_RENAME_TARGETS", "POSIX_RENAMED_FROM", "POSIX_MODE",
	"POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_READ",
	"POSIX_MAX_BYTE_WRITTEN", "POSIX_CONSEC_READS", "POSIX_CONSEC_WRITES",
	"POSIX_SEQ_READS", "POSIX_SEQ_WRITES", "POSIX_RW_SWITCHES", "POSIX_MEM_NOT_ALIGNED",
	"POSIX_MEM_ALIGNMENT", "POSIX_FILE_NOT_ALIGNED", "POSIX_FILE_ALIGNMENT",
	"POSIX_MAX_READ_TIME_SIZE", "POSIX_MAX_WRITE_TIME_SIZE",
	"POSIX_SIZE_READ_0_100", "POSIX_SIZE_READ_100_1K", "POSIX_SIZE_READ_1K_10K",
	"POSIX_SIZE_READ_10K_100K", "POSIX_SIZE_READ_100K_1M", "POSIX_SIZE_READ_1M_4M",
	"POSIX_SIZE_READ_4M_10M", "POSIX_SIZE_READ_10M_100M", "POSIX_SIZE_READ_100M_1G",
	"POSIX_SIZE_READ_1G_PLUS",
	"POSIX_SIZE_WRITE_0_100", "POSIX_SIZE_WRITE_100_1K", "POSIX_SIZE_WRITE_1K_10K",
	"POSIX_SIZE_WRITE_10K_100K", "POSIX_SIZE_WRITE_100K_1M", "POSIX_SIZE_WRITE_1M_4M",
	"POSIX_SIZE_WRITE_4M_10M", "POSIX_SIZE_WRITE_10M_100M", "POSIX_SIZE_WRITE_100M_1G",
	"POSIX_SIZE_WRITE_1G_PLUS",
	"POSIX_STRIDE1_STRIDE", "POSIX_STRIDE2_STRIDE", "POSIX_STRIDE3_STRIDE",
	"POSIX_STRIDE4_STRIDE", "POSIX_STRIDE1_COUNT", "POSIX_STRIDE2_COUNT",
	"POSIX_STRIDE3_COUNT", "POSIX_STRIDE4_COUNT",
	"POSIX_ACCESS1_ACCESS", "POSIX_ACCESS2_ACCESS", "POSIX_ACCESS3_ACCESS",
	"POSIX_ACCESS4_ACCESS", "POSIX_ACCESS1_COUNT", "POSIX_ACCESS2_COUNT",
	"POSIX_ACCESS3_COUNT", "POSIX_ACCESS4_COUNT",
	"POSIX_FASTEST_RANK", "POSIX_FASTEST_RANK_BYTES", "POSIX_SLOWEST_RANK",
	"POSIX_SLOWEST_RANK_BYTES",
};

static const char *const posix_fcounters[] = {
	"POSIX_F_OPEN_START_TIMESTAMP", "POSIX_F_READ_START_TIMESTAMP",
	"POSIX_F_WRITE_START_TIMESTAMP", "POSIX_F_CLOSE_START_TIMESTAMP",
	"POSIX_F_OPEN_END_TIMESTAMP", "POSIX_F_READ_END_TIMESTAMP",
	"POSIX_F_WRITE_END_TIMESTAMP", "POSIX_F_CLOSE_END_TIMESTAMP",
	"POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME",
	"POSIX_F_MAX_READ_TIME", "POSIX_F_MAX_WRITE_TIME",
	"POSIX_F_FASTEST_RANK_TIME", "POSIX_F_SLOWEST_RANK_TIME",
	"POSIX_F_VARIANCE_RANK_TIME", "POSIX_F_VARIANCE_RANK_BYTES",
};

static const char *const mpiio_counters[] = {
	"MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS", "MPIIO_INDEP_READS", "MPIIO_INDEP_WRITES",
	"MPIIO_COLL_READS", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_READS", "MPIIO_SPLIT_WRITES",
	"MPIIO_NB_READS", "MPIIO_NB_WRITES", "MPIIO_SYNCS", "MPIIO_HINTS", "MPIIO_VIEWS",
	"MPIIO_MODE", "MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN", "MPIIO_RW_SWITCHES",
	"MPIIO_MAX_READ_TIME_SIZE", "MPIIO_MAX_WRITE_TIME_SIZE",
	"MPIIO_SIZE_READ_AGG_0_100", "MPIIO_SIZE_READ_AGG_100_1K",
	"MPIIO_SIZE_READ_AGG_1K_10K", "MPIIO_SIZE_READ_AGG_10K_100K",
	"MPIIO_SIZE_READ_AGG_100K_1M", "MPIIO_SIZE_READ_AGG_1M_4M",
	"MPIIO_SIZE_READ_AGG_4M_10M", "MPIIO_SIZE_READ_AGG_10M_100M",
	"MPIIO_SIZE_READ_AGG_100M_1G", "MPIIO_SIZE_READ_AGG_1G_PLUS",
	"MPIIO_SIZE_WRITE_AGG_0_100", "MPIIO_SIZE_WRITE_AGG_100_1K",
	"MPIIO_SIZE_WRITE_AGG_1K_10K", "MPIIO_SIZE_WRITE_AGG_10K_100K",
	"MPIIO_SIZE_WRITE_AGG_100K_1M", "MPIIO_SIZE_WRITE_AGG_1M_4M",
	"MPIIO_SIZE_WRITE_AGG_4M_10M", "MPIIO_SIZE_WRITE_AGG_10M_100M",
	"MPIIO_SIZE_WRITE_AGG_100M_1G", "MPIIO_SIZE_WRITE_AGG_1G_PLUS",
	"MPIIO_ACCESS1_ACCESS", "MPIIO_ACCESS2_ACCESS", "MPIIO_ACCESS3_ACCESS",
	"MPIIO_ACCESS4_ACCESS", "MPIIO_ACCESS1_COUNT", "MPIIO_ACCESS2_COUNT",
	"MPIIO_ACCESS3_COUNT", "MPIIO_ACCESS4_COUNT",
	"MPIIO_FASTEST_RANK", "MPIIO_FASTEST_RANK_BYTES", "MPIIO_SLOWEST_RANK",
	"MPIIO_SLOWEST_RANK_BYTES",
};

static const char *const mpiio_fcounters[] = {
	"MPIIO_F_OPEN_START_TIMESTAMP", "MPIIO_F_READ_START_TIMESTAMP",
	"MPIIO_F_WRITE_START_TIMESTAMP", "MPIIO_F_CLOSE_START_TIMESTAMP",
	"MPIIO_F_OPEN_END_TIMESTAMP", "MPIIO_F_READ_END_TIMESTAMP",
	"MPIIO_F_WRITE_END_TIMESTAMP", "MPIIO_F_CLOSE_END_TIMESTAMP",
	"MPIIO_F_READ_TIME", "MPIIO_F_WRITE_TIME", "MPIIO_F_META_TIME",
	"MPIIO_F_MAX_READ_TIME", "MPIIO_F_MAX_WRITE_TIME",
	"MPIIO_F_FASTEST_RANK_TIME", "MPIIO_F_SLOWEST_RANK_TIME",
	"MPIIO_F_VARIANCE_RANK_TIME", "MPIIO_F_VARIANCE_RANK_BYTES",
};

static const char *const stdio_counters[] = {
	"STDIO_OPENS", "STDIO_FDOPENS", "STDIO_READS", "STDIO_WRITES", "STDIO_SEEKS",
	"STDIO_FLUSHES", "STDIO_BYTES_WRITTEN", "STDIO_BYTES_READ", "STDIO_MAX_BYTE_READ",
	"STDIO_MAX_BYTE_WRITTEN", "STDIO_FASTEST_RANK", "STDIO_FASTEST_RANK_BYTES",
	"STDIO_SLOWEST_RANK", "STDIO_SLOWEST_RANK_BYTES",
};

static const char *const stdio_fcounters[] = {
	"STDIO_F_META_TIME", "STDIO_F_WRITE_TIME", "STDIO_F_READ_TIME",
	"STDIO_F_OPEN_START_TIMESTAMP", "STDIO_F_CLOSE_START_TIMESTAMP",
	"STDIO_F_WRITE_START_TIMESTAMP", "STDIO_F_READ_START_TIMESTAMP",
	"STDIO_F_OPEN_END_TIMESTAMP", "STDIO_F_CLOSE_END_TIMESTAMP",
	"STDIO_F_WRITE_END_TIMESTAMP", "STDIO_F_READ_END_TIMESTAMP",
	"STDIO_F_FASTEST_RANK_TIME", "STDIO_F_SLOWEST_RANK_TIME",
	"STDIO_F_VARIANCE_RANK_TIME", "STDIO_F_VARIANCE_RANK_BYTES",
};

/* HDF5: H5F record version 3, H5D version 2 (darshan-hdf5-log-format.h, Darshan 3.5). */
static const char *const h5f_counters[] = {
	"H5F_OPENS", "H5F_FLUSHES", "H5F_USE_MPIIO",
};

static const char *const h5f_fcounters[] = {
	"H5F_F_OPEN_START_TIMESTAMP", "H5F_F_CLOSE_START_TIMESTAMP",
	"H5F_F_OPEN_END_TIMESTAMP", "H5F_F_CLOSE_END_TIMESTAMP", "H5F_F_META_TIME",
};

static const char *const h5d_counters[] = {
	"H5D_OPENS", "H5D_READS", "H5D_WRITES", "H5D_FLUSHES", "H5D_BYTES_READ",
	"H5D_BYTES_WRITTEN", "H5D_RW_SWITCHES", "H5D_REGULAR_HYPERSLAB_SELECTS",
	"H5D_IRREGULAR_HYPERSLAB_SELECTS", "H5D_POINT_SELECTS", "H5D_MAX_READ_TIME_SIZE",
	"H5D_MAX_WRITE_TIME_SIZE", "H5D_SIZE_READ_AGG_0_100", "H5D_SIZE_READ_AGG_100_1K",
	"H5D_SIZE_READ_AGG_1K_10K", "H5D_SIZE_READ_AGG_10K_100K", "H5D_SIZE_READ_AGG_100K_1M",
	"H5D_SIZE_READ_AGG_1M_4M", "H5D_SIZE_READ_AGG_4M_10M", "H5D_SIZE_READ_AGG_10M_100M",
	"H5D_SIZE_READ_AGG_100M_1G", "H5D_SIZE_READ_AGG_1G_PLUS", "H5D_SIZE_WRITE_AGG_0_100",
	"H5D_SIZE_WRITE_AGG_100_1K", "H5D_SIZE_WRITE_AGG_1K_10K",
	"H5D_SIZE_WRITE_AGG_10K_100K", "H5D_SIZE_WRITE_AGG_100K_1M",
	"H5D_SIZE_WRITE_AGG_1M_4M", "H5D_SIZE_WRITE_AGG_4M_10M", "H5D_SIZE_WRITE_AGG_10M_100M",
	"H5D_SIZE_WRITE_AGG_100M_1G", "H5D_SIZE_WRITE_AGG_1G_PLUS", "H5D_ACCESS1_ACCESS",
	"H5D_ACCESS1_LENGTH_D1", "H5D_ACCESS1_LENGTH_D2", "H5D_ACCESS1_LENGTH_D3",
	"H5D_ACCESS1_LENGTH_D4", "H5D_ACCESS1_LENGTH_D5", "H5D_ACCESS1_STRIDE_D1",
	"H5D_ACCESS1_STRIDE_D2", "H5D_ACCESS1_STRIDE_D3", "H5D_ACCESS1_STRIDE_D4",
	"H5D_ACCESS1_STRIDE_D5", "H5D_ACCESS2_ACCESS", "H5D_ACCESS2_LENGTH_D1",
	"H5D_ACCESS2_LENGTH_D2", "H5D_ACCESS2_LENGTH_D3", "H5D_ACCESS2_LENGTH_D4",
	"H5D_ACCESS2_LENGTH_D5", "H5D_ACCESS2_STRIDE_D1", "H5D_ACCESS2_STRIDE_D2",
	"H5D_ACCESS2_STRIDE_D3", "H5D_ACCESS2_STRIDE_D4", "H5D_ACCESS2_STRIDE_D5",
	"H5D_ACCESS3_ACCESS", "H5D_ACCESS3_LENGTH_D1", "H5D_ACCESS3_LENGTH_D2",
	"H5D_ACCESS3_LENGTH_D3", "H5D_ACCESS3_LENGTH_D4", "H5D_ACCESS3_LENGTH_D5",
	"H5D_ACCESS3_STRIDE_D1", "H5D_ACCESS3_STRIDE_D2", "H5D_ACCESS3_STRIDE_D3",
	"H5D_ACCESS3_STRIDE_D4", "H5D_ACCESS3_STRIDE_D5", "H5D_ACCESS4_ACCESS",
	"H5D_ACCESS4_LENGTH_D1", "H5D_ACCESS4_LENGTH_D2", "H5D_ACCESS4_LENGTH_D3",
	"H5D_ACCESS4_LENGTH_D4", "H5D_ACCESS4_LENGTH_D5", "H5D_ACCESS4_STRIDE_D1",
	"H5D_ACCESS4_STRIDE_D2", "H5D_ACCESS4_STRIDE_D3", "H5D_ACCESS4_STRIDE_D4",
	"H5D_ACCESS4_STRIDE_D5", "H5D_ACCESS1_COUNT", "H5D_ACCESS2_COUNT", "H5D_ACCESS3_COUNT",
	"H5D_ACCESS4_COUNT", "H5D_DATASPACE_NDIMS", "H5D_DATASPACE_NPOINTS",
	"H5D_DATATYPE_SIZE", "H5D_CHUNK_SIZE_D1", "H5D_CHUNK_SIZE_D2", "H5D_CHUNK_SIZE_D3",
	"H5D_CHUNK_SIZE_D4", "H5D_CHUNK_SIZE_D5", "H5D_USE_MPIIO_COLLECTIVE",
	"H5D_USE_DEPRECATED", "H5D_FASTEST_RANK", "H5D_FASTEST_RANK_BYTES", "H5D_SLOWEST_RANK",
	"H5D_SLOWEST_RANK_BYTES",
};

static const char *const h5d_fcounters[] = {
	"H5D_F_OPEN_START_TIMESTAMP", "H5D_F_READ_START_TIMESTAMP",
	"H5D_F_WRITE_START_TIMESTAMP", "H5D_F_CLOSE_START_TIMESTAMP",
	"H5D_F_OPEN_END_TIMESTAMP", "H5D_F_READ_END_TIMESTAMP", "H5D_F_WRITE_END_TIMESTAMP",
	"H5D_F_CLOSE_END_TIMESTAMP", "H5D_F_READ_TIME", "H5D_F_WRITE_TIME", "H5D_F_META_TIME",
	"H5D_F_MAX_READ_TIME", "H5D_F_MAX_WRITE_TIME", "H5D_F_FASTEST_RANK_TIME",
	"H5D_F_SLOWEST_RANK_TIME", "H5D_F_VARIANCE_RANK_TIME", "H5D_F_VARIANCE_RANK_BYTES",
};

static const struct ioacct_darshan_modinfo modinfo[IOACCT_DARSHAN_NKINDS] = {
	[IOACCT_DARSHAN_POSIX] = { "POSIX", IOACCT_DARSHAN_MOD_POSIX, 4, ARRAY_SIZE(posix_counters),
				   ARRAY_SIZE(posix_fcounters), posix_counters, posix_fcounters },
	[IOACCT_DARSHAN_MPIIO] = { "MPI-IO", IOACCT_DARSHAN_MOD_MPIIO, 3, ARRAY_SIZE(mpiio_counters),
				   ARRAY_SIZE(mpiio_fcounters), mpiio_counters, mpiio_fcounters },
	[IOACCT_DARSHAN_STDIO] = { "STDIO", IOACCT_DARSHAN_MOD_STDIO, 2, ARRAY_SIZE(stdio_counters),
				   ARRAY_SIZE(stdio_fcounters), stdio_counters, stdio_fcounters },
	[IOACCT_DARSHAN_H5F] = { "H5F", IOACCT_DARSHAN_MOD_H5F, 3, ARRAY_SIZE(h5f_counters),
				 ARRAY_SIZE(h5f_fcounters), h5f_counters, h5f_fcounters },
	[IOACCT_DARSHAN_H5D] = { "H5D", IOACCT_DARSHAN_MOD_H5D, 2, ARRAY_SIZE(h5d_counters),
				 ARRAY_SIZE(h5d_fcounters), h5d_counters, h5d_fcounters, true },
};

_Static_assert(ARRAY_SIZE(posix_counters) == IOACCT_DARSHAN_POSIX_NCOUNTERS, "POSIX counters");
_Static_assert(ARRAY_SIZE(posix_fcounters) == IOACCT_DARSHAN_POSIX_NFCOUNTERS, "POSIX floats");
_Static_assert(ARRAY_SIZE(mpiio_counters) == 51 && ARRAY_SIZE(mpiio_fcounters) == 17, "MPI-IO");
_Static_assert(ARRAY_SIZE(stdio_counters) == 14 && ARRAY_SIZE(stdio_fcounters) == 15, "STDIO");
_Static_assert(ARRAY_SIZE(h5f_counters) == 3 && ARRAY_SIZE(h5f_fcounters) == 5, "H5F");
_Static_assert(ARRAY_SIZE(h5d_counters) == IOACCT_DARSHAN_MAX_COUNTERS &&
	       ARRAY_SIZE(h5d_fcounters) == 17, "H5D");

static const char *const mod_names[IOACCT_DARSHAN_MOD_KNOWN] = {
	"NULL", "POSIX", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "BG/Q", "LUSTRE",
	"STDIO", "DXT_POSIX", "DXT_MPIIO", "MDHIM", "APXC", "APMPI", "HEATMAP", "DFS", "DAOS",
};

const struct ioacct_darshan_modinfo *ioacct_darshan_modinfo(enum ioacct_darshan_kind kind)
{
	return (unsigned int)kind < IOACCT_DARSHAN_NKINDS ? &modinfo[kind] : NULL;
}

const char *ioacct_darshan_mod_name(unsigned int mod_id)
{
	return mod_id < IOACCT_DARSHAN_MOD_KNOWN ? mod_names[mod_id] : NULL;
}

int ioacct_darshan_counter_index(enum ioacct_darshan_kind kind, const char *name, bool *is_float)
{
	const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kind);

	if (!mi)
		return -1;
	for (size_t i = 0; i < mi->ncounters; i++)
		if (strcmp(mi->counters[i], name) == 0) {
			*is_float = false;
			return (int)i;
		}
	for (size_t i = 0; i < mi->nfcounters; i++)
		if (strcmp(mi->fcounters[i], name) == 0) {
			*is_float = true;
			return (int)i;
		}
	return -1;
}


/* ---- lookups ---- */

const char *ioacct_darshan_name_of(const struct ioacct_darshan_log *log, uint64_t id)
{
	size_t lo = 0, hi = log->nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->names[mid].id == id)
			return log->names[mid].name;
		if (log->names[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether `prefix` is `path` or one of its parent directories. */
static bool path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 0 || strncmp(path, prefix, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || prefix[n - 1] == '/';
}

const struct ioacct_darshan_mount *ioacct_darshan_mount_of(const struct ioacct_darshan_log *log,
							   const char *path)
{
	const struct ioacct_darshan_mount *best = NULL;

	for (size_t i = 0; i < log->nmounts; i++)
		if (path_under(path, log->mounts[i].path) &&
		    (!best || strlen(log->mounts[i].path) > strlen(best->path)))
			best = &log->mounts[i];
	return best;
}

/* darshan-runtime: darshan-config.c (paths), darshan-core.c (mount table). */
bool ioacct_darshan_skips_path(const char *path)
{
	static const char *const dirs[] = {
		"/etc", "/dev", "/usr", "/bin", "/boot", "/lib", "/opt", "/sbin", "/sys", "/proc", "/var",
	};

	if (path_under(path, "/var/opt/cray/dws/mounts"))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (path_under(path, dirs[i]))
			return true;
	return false;
}

bool ioacct_darshan_skips_mount(const char *path, const char *fstype)
{
	static const char *const fstypes[] = {
		"tmpfs", "proc", "sysfs", "devpts", "binfmt_misc", "fusectl", "debugfs",
		"securityfs", "nfsd", "none", "rpc_pipefs", "hugetlbfs", "cgroup",
	};

	for (size_t i = 0; i < ARRAY_SIZE(fstypes); i++)
		if (strcmp(fstype, fstypes[i]) == 0)
			return true;
	return ioacct_darshan_skips_path(path);
}

/* ---- totals, as darshan-util aggregates records ---- */

enum agg {
	AGG_NONE = 0,        /* set elsewhere (rank counters, the common-value tables) */
	AGG_SUM,
	AGG_SUM_CLAMP,       /* POSIX: a negative sum means unknown, -1 */
	AGG_SET,             /* the last record's value */
	AGG_MAX,
	AGG_COMMON,          /* start of a table of 4 values and 4 counts */
	AGG_F_SUM,
	AGG_F_MIN_NONZERO,
	AGG_F_MAX,
	AGG_F_MAX_TIME,      /* maximum, and the size counter that goes with it */
	AGG_F_FASTEST,
	AGG_F_SLOWEST,
	AGG_F_ZERO,          /* variances: darshan-util leaves them 0 */
};

struct aggspec {
	unsigned char ints[IOACCT_DARSHAN_MAX_COUNTERS];
	unsigned char floats[IOACCT_DARSHAN_MAX_FCOUNTERS];
	int fastest_rank, fastest_bytes, slowest_rank, slowest_bytes;
	int f_fastest, f_slowest;
	int bytes_read, bytes_written;
	int f_read, f_write, f_meta;
	int max_read_size, max_write_size;   /* paired with the floats after F_MAX_TIME */
	bool common_skips_zero;              /* MPI-IO returns early on an empty table */
};

static void spec_ints(unsigned char *a, int from, int to, enum agg how)
{
	for (int i = from; i <= to; i++)
		a[i] = (unsigned char)how;
}

/*
 * POSIX and MPI-IO records share the layout of their 17 floats (open, read,
 * write and close timestamps, the three times, the max times, fastest and
 * slowest, variances) and the places of their byte counters.
 */
static void spec_posix_floats(struct aggspec *s)
{
	spec_ints(s->floats, 0, 3, AGG_F_MIN_NONZERO);
	spec_ints(s->floats, 4, 7, AGG_F_MAX);
	spec_ints(s->floats, 8, 10, AGG_F_SUM);
	spec_ints(s->floats, 11, 12, AGG_F_MAX_TIME);
	s->floats[13] = AGG_F_FASTEST;
	s->floats[14] = AGG_F_SLOWEST;
	spec_ints(s->floats, 15, 16, AGG_F_ZERO);
	s->f_fastest = 13, s->f_slowest = 14;
	s->bytes_read = 14, s->bytes_written = 15;
	s->f_read = 8, s->f_write = 9, s->f_meta = 10;
}

static void aggspec_of(enum ioacct_darshan_kind kind, struct aggspec *s)
{
	memset(s, 0, sizeof(*s));
	switch (kind) {
	case IOACCT_DARSHAN_POSIX:
		spec_ints(s->ints, 0, 11, AGG_SUM_CLAMP);     /* OPENS .. RENAME_TARGETS */
		spec_ints(s->ints, 12, 13, AGG_SET);          /* RENAMED_FROM, MODE */
		spec_ints(s->ints, 14, 15, AGG_SUM_CLAMP);    /* BYTES_READ, _WRITTEN */
		spec_ints(s->ints, 16, 17, AGG_MAX);          /* MAX_BYTE_* */
		spec_ints(s->ints, 18, 23, AGG_SUM_CLAMP);    /* CONSEC, SEQ, RW_SWITCHES, MEM_NOT_ALIGNED */
		s->ints[24] = AGG_SET;                        /* MEM_ALIGNMENT */
		s->ints[25] = AGG_SUM_CLAMP;                  /* FILE_NOT_ALIGNED */
		s->ints[26] = AGG_SET;                        /* FILE_ALIGNMENT */
		spec_ints(s->ints, 29, 48, AGG_SUM_CLAMP);    /* size histograms */
		s->ints[49] = AGG_COMMON;                     /* STRIDE1_STRIDE */
		s->ints[57] = AGG_COMMON;                     /* ACCESS1_ACCESS */
		spec_posix_floats(s);
		s->fastest_rank = 65, s->fastest_bytes = 66, s->slowest_rank = 67, s->slowest_bytes = 68;
		s->max_read_size = 27, s->max_write_size = 28;
		break;
	case IOACCT_DARSHAN_MPIIO:
		spec_ints(s->ints, 0, 12, AGG_SUM);
		s->ints[13] = AGG_SET;                        /* MODE */
		spec_ints(s->ints, 14, 16, AGG_SUM);
		spec_ints(s->ints, 19, 38, AGG_SUM);
		s->ints[39] = AGG_COMMON;
		spec_posix_floats(s);
		s->fastest_rank = 47, s->fastest_bytes = 48, s->slowest_rank = 49, s->slowest_bytes = 50;
		s->max_read_size = 17, s->max_write_size = 18;
		s->common_skips_zero = true;
		break;
	case IOACCT_DARSHAN_STDIO:
		spec_ints(s->ints, 0, 7, AGG_SUM);
		spec_ints(s->ints, 8, 9, AGG_MAX);
		spec_ints(s->floats, 0, 2, AGG_F_SUM);
		spec_ints(s->floats, 3, 6, AGG_F_MIN_NONZERO);
		spec_ints(s->floats, 7, 10, AGG_F_MAX);
		s->floats[11] = AGG_F_FASTEST;
		s->floats[12] = AGG_F_SLOWEST;
		spec_ints(s->floats, 13, 14, AGG_F_ZERO);
		s->fastest_rank = 10, s->fastest_bytes = 11, s->slowest_rank = 12, s->slowest_bytes = 13;
		s->f_fastest = 11, s->f_slowest = 12;
		s->bytes_read = 7, s->bytes_written = 6;
		s->f_read = 2, s->f_write = 1, s->f_meta = 0;
		s->max_read_size = s->max_write_size = -1;
		break;
	default:
		break;
	}
}

static int64_t add64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

/*
 * Merges the four most common values (and their counts) of a record into
 * the aggregate's, at counters[i .. i+7], exactly as darshan-util does,
 * including its 32-bit running count. Reads past the table stay within
 * the record.
 */
static void merge_common(int64_t *agg, size_t n, size_t i, const int64_t *rec)
{
	bool dup[4] = { false, false, false, false };

	if (i + 8 > n)
		return;
	for (size_t j = 0; j < 4; j++)
		for (size_t k = 0; k < 4; k++)
			if (agg[i + k] == rec[i + j]) {
				agg[i + k + 4] = add64(agg[i + k + 4], rec[i + j + 4]);
				dup[j] = true;
			}
	for (size_t j = 0; j < 4; j++) {
		int64_t val[4] = { 0, 0, 0, 0 }, cnt[4] = { 0, 0, 0, 0 };
		size_t nd = 0, k;
		int total;

		if (dup[j])
			continue;
		if (rec[i + j] == 0)
			break;
		for (k = 0; k < 4; k++)
			if (agg[i + k] == rec[i + j])
				break;
		total = (int)(k < 4 ? add64(agg[i + k + 4], rec[i + j + 4]) : rec[i + j + 4]);
		for (k = 0; k < 4; k++) {
			if (agg[i + k + 4] > total ||
			    (agg[i + k + 4] == total && agg[i + k] > rec[i + j])) {
				val[nd] = agg[i + k];
				cnt[nd] = agg[i + k + 4];
				nd++;
			} else {
				break;
			}
		}
		if (nd == 4)
			break;
		val[nd] = rec[i + j];
		cnt[nd] = rec[i + j + 4];
		nd++;
		while (nd != 4 && i + k + 4 < n) {
			if (agg[i + k] != rec[i + j]) {
				val[nd] = agg[i + k];
				cnt[nd] = agg[i + k + 4];
				nd++;
			}
			k++;
		}
		memcpy(&agg[i], val, sizeof(val));
		memcpy(&agg[i + 4], cnt, sizeof(cnt));
	}
}

/* The fastest or the slowest rank of a record, its bytes and its time. */
struct rank_io {
	int64_t rank, bytes;
	double time;
};

static void agg_ints(const struct aggspec *s, const struct ioacct_darshan_modinfo *mi,
		     const struct ioacct_darshan_record *rec, struct ioacct_darshan_record *agg)
{
	for (size_t i = 0; i < mi->ncounters; i++) {
		int64_t *a = &agg->counters[i];

		switch (s->ints[i]) {
		case AGG_SUM:
			*a = add64(*a, rec->counters[i]);
			break;
		case AGG_SUM_CLAMP:
			*a = add64(*a, rec->counters[i]);
			if (*a < 0)
				*a = -1;
			break;
		case AGG_SET:
			*a = rec->counters[i];
			break;
		case AGG_MAX:
			if (rec->counters[i] > *a)
				*a = rec->counters[i];
			break;
		case AGG_COMMON:
			if (s->common_skips_zero && rec->counters[i] == 0)
				break;
			merge_common(agg->counters, mi->ncounters, i, rec->counters);
			break;
		default:
			break;
		}
	}
}

/*
 * The fastest (or slowest) rank's counters and time: unknown (-1, 0.0)
 * over records of different files, else the better of the two.
 */
static void agg_rank(struct ioacct_darshan_record *agg, int rank_i, int bytes_i, double *a,
		     const struct rank_io *r, bool same_file, bool better)
{
	if (!same_file) {
		agg->counters[rank_i] = -1;
		agg->counters[bytes_i] = -1;
		*a = 0.0;
	} else if (better) {
		agg->counters[rank_i] = r->rank;
		agg->counters[bytes_i] = r->bytes;
		*a = r->time;
	}
}

static void agg_floats(const struct aggspec *s, const struct ioacct_darshan_modinfo *mi,
		       const struct ioacct_darshan_record *rec, struct ioacct_darshan_record *agg,
		       bool first, bool same_file, const struct rank_io *fast,
		       const struct rank_io *slow)
{
	for (size_t i = 0; i < mi->nfcounters; i++) {
		double *a = &agg->fcounters[i], v = rec->fcounters[i];

		switch (s->floats[i]) {
		case AGG_F_SUM:
			*a += v;
			break;
		case AGG_F_MIN_NONZERO:
			if (v > 0 && (*a == 0 || v < *a))
				*a = v;
			break;
		case AGG_F_MAX:
			if (v > *a)
				*a = v;
			break;
		case AGG_F_MAX_TIME:
			if (v > *a) {
				int size = i == 11 ? s->max_read_size : s->max_write_size;

				*a = v;
				if (size >= 0)
					agg->counters[size] = rec->counters[size];
			}
			break;
		case AGG_F_FASTEST:
			agg_rank(agg, s->fastest_rank, s->fastest_bytes, a, fast, same_file,
				 first || fast->time < *a);
			break;
		case AGG_F_SLOWEST:
			agg_rank(agg, s->slowest_rank, s->slowest_bytes, a, slow, same_file,
				 first || slow->time > *a);
			break;
		case AGG_F_ZERO:
			*a = 0;
			break;
		default:
			break;
		}
	}
}

static void agg_record(const struct aggspec *s, const struct ioacct_darshan_modinfo *mi,
		       const struct ioacct_darshan_record *rec, struct ioacct_darshan_record *agg,
		       bool first)
{
	struct rank_io fast, slow;
	bool same_file;

	if (rec->rank == -1) {
		fast.rank = rec->counters[s->fastest_rank];
		slow.rank = rec->counters[s->slowest_rank];
		fast.bytes = rec->counters[s->fastest_bytes];
		slow.bytes = rec->counters[s->slowest_bytes];
		fast.time = rec->fcounters[s->f_fastest];
		slow.time = rec->fcounters[s->f_slowest];
	} else {
		fast.rank = slow.rank = rec->rank;
		fast.bytes = slow.bytes = add64(rec->counters[s->bytes_read],
						rec->counters[s->bytes_written]);
		fast.time = slow.time = rec->fcounters[s->f_read] + rec->fcounters[s->f_write] +
					rec->fcounters[s->f_meta];
	}
	if (first) {
		agg->rank = rec->rank;
		agg->id = rec->id;
	}
	same_file = agg->id == rec->id;
	if (!same_file)
		agg->id = 0;
	if (agg->rank != rec->rank)
		agg->rank = -1;
	agg_ints(s, mi, rec, agg);
	agg_floats(s, mi, rec, agg, first, same_file, &fast, &slow);
}

size_t ioacct_darshan_total(const struct ioacct_darshan_log *log, enum ioacct_darshan_kind kind,
			    struct ioacct_darshan_record *out)
{
	const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kind);
	struct aggspec s;

	memset(out, 0, sizeof(*out));
	/* darshan-parser --total sums POSIX, MPI-IO and STDIO only. */
	if (!mi || kind > IOACCT_DARSHAN_STDIO)
		return 0;
	aggspec_of(kind, &s);
	for (size_t i = 0; i < log->nrecs[kind]; i++)
		agg_record(&s, mi, &log->recs[kind][i], out, i == 0);
	return log->nrecs[kind];
}

/* ---- record ids ---- */

/* Bob Jenkins' mix of three 64-bit words (lookup8.c, public domain). */
#define JMIX(a, b, c)                                   \
	do {                                            \
		a -= b; a -= c; a ^= c >> 43;           \
		b -= c; b -= a; b ^= a << 9;            \
		c -= a; c -= b; c ^= b >> 8;            \
		a -= b; a -= c; a ^= c >> 38;           \
		b -= c; b -= a; b ^= a << 23;           \
		c -= a; c -= b; c ^= b >> 5;            \
		a -= b; a -= c; a ^= c >> 35;           \
		b -= c; b -= a; b ^= a << 49;           \
		c -= a; c -= b; c ^= b >> 11;           \
		a -= b; a -= c; a ^= c >> 12;           \
		b -= c; b -= a; b ^= a << 18;           \
		c -= a; c -= b; c ^= b >> 22;           \
	} while (0)

static uint64_t le64(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t ioacct_darshan_hash(const void *key, size_t len, uint64_t level)
{
	const unsigned char *k = key;
	uint64_t a = level, b = level, c = 0x9e3779b97f4a7c13ULL;
	size_t left = len;

	for (; left >= 24; k += 24, left -= 24) {
		a += le64(k, 8);
		b += le64(k + 8, 8);
		c += le64(k + 16, 8);
		JMIX(a, b, c);
	}
	/* The last 0..23 bytes: a, b, then c above its lowest byte, which holds the length. */
	c += len;
	a += le64(k, left < 8 ? left : 8);
	if (left > 8)
		b += le64(k + 8, left < 16 ? left - 8 : 8);
	if (left > 16)
		c += le64(k + 16, left - 16) << 8;
	JMIX(a, b, c);
	return c;
}
