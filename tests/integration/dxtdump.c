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
 * ioacct's own records (darshan.h: a mount's rest, "other files") follow
 * the POSIX ones with "own": true; the others have "own": false.
 * dxtdump --mpiio LOG: the same of its MPIIO records (issue 27).
 * dxtdump --h5f LOG, --h5d LOG: the same of its H5F and H5D records (issue
 * 39); an H5D record's object has "file": the name of its file's record id.
 * dxtdump --job LOG: the job record as Darshan's tools read it (issue 38),
 * one JSON object: {"exe", "uid", "jobid", "nprocs", "start_time_sec",
 * "start_time_nsec", "end_time_sec", "end_time_nsec", "run_time" (as
 * darshan-util computes it for format 3.41), "metadata": {key: value},
 * "mounts": [[path, fstype], ...]}.
 * dxtdump --heatmap LOG: its HEATMAP records, one JSON object each:
 * {"name", "rank", "bin_width", "nbins", "read": [...], "write": [...]}.
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
	size_t n = log->nrecs[kind], nown = kind == IOACCT_DARSHAN_POSIX ? log->nown : 0;

	printf("{\"partial\": %llu, \"metadata\": ", (unsigned long long)log->partial);
	ioacct_json_string(stdout, log->metadata);
	printf("}\n");
	for (size_t i = 0; i < n + nown; i++) {
		const struct ioacct_darshan_record *r = i < n ? &log->recs[kind][i] : &log->own[i - n];
		const char *name = ioacct_darshan_name_of(log, r->id);

		printf("{\"name\": ");
		ioacct_json_string(stdout, name ? name : "");
		printf(", \"own\": %s, \"rank\": %lld, ", i < n ? "false" : "true", (long long)r->rank);
		if (mi->file_id) {
			const char *file = ioacct_darshan_name_of(log, r->file_id);

			printf("\"file\": ");
			ioacct_json_string(stdout, file ? file : "");
			printf(", ");
		}
		printf("\"c\": {");
		for (size_t k = 0; k < mi->ncounters; k++)
			printf("%s\"%s\": %lld", k ? ", " : "", mi->counters[k], (long long)r->counters[k]);
		printf("}, \"f\": {");
		for (size_t k = 0; k < mi->nfcounters; k++)
			printf("%s\"%s\": %.17g", k ? ", " : "", mi->fcounters[k], r->fcounters[k]);
		printf("}}\n");
	}
}

static void job_dump(const struct ioacct_darshan_log *log)
{
	size_t mlen = strnlen(log->metadata, sizeof(log->metadata));
	double run = (double)log->end_sec + (double)log->end_nsec / 1e9 -
		     ((double)log->start_sec + (double)log->start_nsec / 1e9);
	char line[IOACCT_DARSHAN_METADATA_LEN + 1];

	printf("{\"exe\": ");
	ioacct_json_string(stdout, log->exe ? log->exe : "");
	printf(", \"uid\": %lld, \"jobid\": %lld, \"nprocs\": %lld, \"start_time_sec\": %lld, "
	       "\"start_time_nsec\": %lld, \"end_time_sec\": %lld, \"end_time_nsec\": %lld, "
	       "\"run_time\": %.9f, \"metadata\": {", (long long)log->uid, (long long)log->jobid,
	       (long long)log->nprocs, (long long)log->start_sec, (long long)log->start_nsec,
	       (long long)log->end_sec, (long long)log->end_nsec, run);
	/* As PyDarshan splits it: lines of key=value, the value past the first '='. */
	for (size_t i = 0, n, k = 0; i < mlen; i += n) {
		const char *l = log->metadata + i, *nl = memchr(l, '\n', mlen - i), *eq;

		n = nl ? (size_t)(nl - l) + 1 : mlen - i;
		snprintf(line, sizeof(line), "%.*s", (int)(nl ? n - 1 : n), l);
		eq = strchr(line, '=');
		if (!eq)
			continue;
		printf("%s", k++ ? ", " : "");
		line[eq - line] = '\0';
		ioacct_json_string(stdout, line);
		printf(": ");
		ioacct_json_string(stdout, eq + 1);
	}
	printf("}, \"mounts\": [");
	for (size_t i = 0; i < log->nmounts; i++) {
		printf("%s[", i ? ", " : "");
		ioacct_json_string(stdout, log->mounts[i].path);
		printf(", ");
		ioacct_json_string(stdout, log->mounts[i].fstype);
		printf("]");
	}
	printf("]}\n");
}

static void bins(const char *key, const int64_t *b, uint64_t n)
{
	printf(", \"%s\": [", key);
	for (uint64_t i = 0; i < n; i++)
		printf("%s%lld", i ? ", " : "", (long long)b[i]);
	printf("]");
}

static void heatmap_dump(const struct ioacct_darshan_log *log)
{
	for (size_t i = 0; i < log->nheatmaps; i++) {
		const struct ioacct_darshan_heatmap *h = &log->heatmaps[i];
		const char *name = ioacct_darshan_name_of(log, h->id);

		printf("{\"name\": ");
		ioacct_json_string(stdout, name ? name : "");
		printf(", \"rank\": %lld, \"bin_width\": %.17g, \"nbins\": %llu", (long long)h->rank,
		       h->bin_width, (unsigned long long)h->nbins);
		bins("read", h->read_bins, h->nbins);
		bins("write", h->write_bins, h->nbins);
		printf("}\n");
	}
}

int main(int argc, char **argv)
{
	bool posix = argc == 3 && !strcmp(argv[1], "--posix");
	bool mpiio = argc == 3 && !strcmp(argv[1], "--mpiio");
	bool job = argc == 3 && !strcmp(argv[1], "--job");
	bool heatmap = argc == 3 && !strcmp(argv[1], "--heatmap");
	bool h5f = argc == 3 && !strcmp(argv[1], "--h5f");
	bool h5d = argc == 3 && !strcmp(argv[1], "--h5d");
	struct ioacct_darshan_log *log;
	int64_t reads = 0, writes = 0;
	char err[1024];
	size_t mlen;

	if (argc != 2 && !posix && !mpiio && !job && !heatmap && !h5f && !h5d) {
		fprintf(stderr, "usage: dxtdump [--posix | --mpiio | --h5f | --h5d | --job | "
			"--heatmap] LOG\n");
		return 2;
	}
	log = ioacct_darshan_read(argv[argc - 1], err, sizeof(err));
	if (!log) {
		fprintf(stderr, "dxtdump: %s\n", err);
		return 1;
	}
	if (posix || mpiio || job || heatmap || h5f || h5d) {
		if (job)
			job_dump(log);
		else if (heatmap)
			heatmap_dump(log);
		else
			records_dump(log, posix ? IOACCT_DARSHAN_POSIX :
					  mpiio ? IOACCT_DARSHAN_MPIIO :
					  h5f ? IOACCT_DARSHAN_H5F : IOACCT_DARSHAN_H5D);
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
	for (size_t i = 0; i < log->nown; i++) {
		reads += log->own[i].counters[IOACCT_DARSHAN_POSIX_READS];
		writes += log->own[i].counters[IOACCT_DARSHAN_POSIX_WRITES];
	}
	printf("posix_reads=%lld\nposix_writes=%lld\n", (long long)reads, (long long)writes);
	for (size_t i = 0; i < log->ndxt; i++) {
		segs(log, &log->dxt[i], "write", log->dxt[i].writes, log->dxt[i].nwrites);
		segs(log, &log->dxt[i], "read", log->dxt[i].reads, log->dxt[i].nreads);
	}
	ioacct_darshan_free(log);
	return 0;
}
