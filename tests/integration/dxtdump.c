// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dxtdump LOG: the DXT_POSIX records of a .darshan log as our reader
 * (lib/darshan) reads them, for the tests: one line per segment,
 *   PATH RANK HOST write|read OFFSET LENGTH START END
 * in the record's order, after the log's "trace_*=N" and "ioacct_*=V" metadata lines and
 * "posix_reads=N" and "posix_writes=N", the sums of the POSIX records'
 * counters (every call the counters saw, to hold the trace against).
 *
 * dxtdump --posix LOG: the log's POSIX records instead (issue 26), as JSON
 * lines: first {"partial": FLAG, "metadata": TEXT}, then one object per
 * record, {"name": ..., "rank": ..., "c": {"POSIX_OPENS": N, ...}, "f":
 * {"POSIX_F_READ_TIME": X, ...}} with every counter by Darshan's name.
 * dxtdump --mpiio LOG: the same of its MPIIO records (issue 27).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "darshan.h"
#include "json.h"

static void segs(const struct ioacct_darshan_log *log, const struct ioacct_darshan_dxt *d,
		 const char *what, const struct ioacct_darshan_dxt_seg *s, uint64_t n)
{
	const char *path = ioacct_darshan_name_of(log, d->id);

	for (uint64_t i = 0; i < n; i++)
		printf("%s %lld %s %s %lld %lld %.6f %.6f\n", path ? path : "?", (long long)d->rank,
		       d->hostname, what, (long long)s[i].offset, (long long)s[i].length, s[i].start,
		       s[i].end);
}

static void records_dump(const struct ioacct_darshan_log *log, enum ioacct_darshan_kind kind)
{
	const struct ioacct_darshan_modinfo *mi = ioacct_darshan_modinfo(kind);

	printf("{\"partial\": %llu, \"metadata\": ", (unsigned long long)log->partial);
	ioacct_json_string(stdout, log->metadata);
	printf("}\n");
	for (size_t i = 0; i < log->nrecs[kind]; i++) {
		const struct ioacct_darshan_record *r = &log->recs[kind][i];
		const char *name = ioacct_darshan_name_of(log, r->id);

		printf("{\"name\": ");
		ioacct_json_string(stdout, name ? name : "");
		printf(", \"rank\": %lld, \"c\": {", (long long)r->rank);
		for (size_t k = 0; k < mi->ncounters; k++)
			printf("%s\"%s\": %lld", k ? ", " : "", mi->counters[k], (long long)r->counters[k]);
		printf("}, \"f\": {");
		for (size_t k = 0; k < mi->nfcounters; k++)
			printf("%s\"%s\": %.17g", k ? ", " : "", mi->fcounters[k], r->fcounters[k]);
		printf("}}\n");
	}
}

int main(int argc, char **argv)
{
	bool posix = argc == 3 && !strcmp(argv[1], "--posix");
	bool mpiio = argc == 3 && !strcmp(argv[1], "--mpiio");
	struct ioacct_darshan_log *log;
	int64_t reads = 0, writes = 0;
	char err[1024];
	size_t mlen;

	if (argc != 2 && !posix && !mpiio) {
		fprintf(stderr, "usage: dxtdump [--posix | --mpiio] LOG\n");
		return 2;
	}
	log = ioacct_darshan_read(argv[argc - 1], err, sizeof(err));
	if (!log) {
		fprintf(stderr, "dxtdump: %s\n", err);
		return 1;
	}
	if (posix || mpiio) {
		records_dump(log, posix ? IOACCT_DARSHAN_POSIX : IOACCT_DARSHAN_MPIIO);
		ioacct_darshan_free(log);
		return 0;
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
