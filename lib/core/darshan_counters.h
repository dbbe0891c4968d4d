/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The indices of the Darshan POSIX counters ioacct measures, as
 * darshan-posix-log-format.h numbers them. Include-free and apart from
 * lib/darshan/darshan.h so that the report (lib/report), which names its
 * counters after Darshan's, and the Darshan reader and writer (lib/darshan)
 * share one list without the report depending on the log code.
 * bpf/ioacct_ops.h names, per operation, the counter of its successful calls.
 */
#ifndef IOACCT_DARSHAN_COUNTERS_H
#define IOACCT_DARSHAN_COUNTERS_H

/* Integer counters (POSIX_*). */
enum {
	IOACCT_DARSHAN_POSIX_NONE = -1, /* an operation Darshan does not count (ioacct_ops.h) */
	IOACCT_DARSHAN_POSIX_OPENS = 0,
	IOACCT_DARSHAN_POSIX_READS = 3,
	IOACCT_DARSHAN_POSIX_WRITES = 4,
	IOACCT_DARSHAN_POSIX_SEEKS = 5,
	IOACCT_DARSHAN_POSIX_STATS = 6,
	IOACCT_DARSHAN_POSIX_FSYNCS = 8,
	IOACCT_DARSHAN_POSIX_FDSYNCS = 9,
	IOACCT_DARSHAN_POSIX_RENAME_SOURCES = 10,
	IOACCT_DARSHAN_POSIX_BYTES_READ = 14,
	IOACCT_DARSHAN_POSIX_BYTES_WRITTEN = 15,
	IOACCT_DARSHAN_POSIX_SIZE_READ_0_100 = 29,
	IOACCT_DARSHAN_POSIX_SIZE_WRITE_0_100 = 39,
	IOACCT_DARSHAN_POSIX_FASTEST_RANK = 65,
	IOACCT_DARSHAN_POSIX_FASTEST_RANK_BYTES = 66,
	IOACCT_DARSHAN_POSIX_SLOWEST_RANK = 67,
	IOACCT_DARSHAN_POSIX_SLOWEST_RANK_BYTES = 68,
	IOACCT_DARSHAN_POSIX_NCOUNTERS = 69,
};

/* Floating-point counters (POSIX_F_*). */
enum {
	IOACCT_DARSHAN_POSIX_F_READ_TIME = 8,
	IOACCT_DARSHAN_POSIX_F_WRITE_TIME = 9,
	IOACCT_DARSHAN_POSIX_F_META_TIME = 10,
	IOACCT_DARSHAN_POSIX_F_FASTEST_RANK_TIME = 13,
	IOACCT_DARSHAN_POSIX_F_SLOWEST_RANK_TIME = 14,
	IOACCT_DARSHAN_POSIX_NFCOUNTERS = 17,
};

#endif /* IOACCT_DARSHAN_COUNTERS_H */
