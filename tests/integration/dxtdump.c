// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dxtdump LOG: the DXT_POSIX records of a .darshan log as our reader
 * (lib/darshan) reads them, for the tests: one line per segment,
 *   PATH RANK HOST write|read OFFSET LENGTH START END
 * in the record's order, after the log's "trace_*=N" and "ioacct_*=V" metadata lines and
 * "posix_reads=N" and "posix_writes=N", the sums of the POSIX records'
 * counters (every call the counters saw, to hold the trace against).
 */
#include <stdio.h>
#include <string.h>

#include "darshan.h"

static void segs(const struct ioacct_darshan_log *log, const struct ioacct_darshan_dxt *d,
		 const char *what, const struct ioacct_darshan_dxt_seg *s, uint64_t n)
{
	const char *path = ioacct_darshan_name_of(log, d->id);

	for (uint64_t i = 0; i < n; i++)
		printf("%s %lld %s %s %lld %lld %.6f %.6f\n", path ? path : "?", (long long)d->rank,
		       d->hostname, what, (long long)s[i].offset, (long long)s[i].length, s[i].start,
		       s[i].end);
}

int main(int argc, char **argv)
{
	struct ioacct_darshan_log *log;
	int64_t reads = 0, writes = 0;
	char err[1024];
	size_t mlen;

	if (argc != 2) {
		fprintf(stderr, "usage: dxtdump LOG\n");
		return 2;
	}
	log = ioacct_darshan_read(argv[1], err, sizeof(err));
	if (!log) {
		fprintf(stderr, "dxtdump: %s\n", err);
		return 1;
	}
	mlen = strnlen(log->metadata, sizeof(log->metadata));
	for (size_t i = 0, n; i < mlen; i += n) {
		const char *l = log->metadata + i, *nl = memchr(l, '\n', mlen - i);

		n = nl ? (size_t)(nl - l) + 1 : mlen - i;
		if (!strncmp(l, "trace_", 6) || !strncmp(l, "ioacct_", 7))
			printf("%.*s\n", (int)(nl ? n - 1 : n), l);
	}
	for (size_t i = 0; i < log->nrecs[IOACCT_DARSHAN_POSIX]; i++) {
		reads += log->recs[IOACCT_DARSHAN_POSIX][i].counters[IOACCT_DARSHAN_POSIX_READS];
		writes += log->recs[IOACCT_DARSHAN_POSIX][i].counters[IOACCT_DARSHAN_POSIX_WRITES];
	}
	printf("posix_reads=%lld\nposix_writes=%lld\n", (long long)reads, (long long)writes);
	for (size_t i = 0; i < log->ndxt; i++) {
		segs(log, &log->dxt[i], "write", log->dxt[i].writes, log->dxt[i].nwrites);
		segs(log, &log->dxt[i], "read", log->dxt[i].reads, log->dxt[i].nreads);
	}
	ioacct_darshan_free(log);
	return 0;
}
