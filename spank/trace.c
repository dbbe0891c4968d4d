// SPDX-License-Identifier: GPL-2.0-or-later
/* The spooled trace of a job in its .darshan report (trace.h). */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "darshan.h"
#include "report.h"
#include "util.h"

/* A "key=N" line of a log's metadata; 0 when absent. */
static uint64_t meta_u64(const struct ioacct_darshan_log *log, const char *key)
{
	size_t klen = strlen(key), mlen = strnlen(log->metadata, sizeof(log->metadata));

	for (size_t i = 0; i < mlen;) {
		const char *l = log->metadata + i, *nl = memchr(l, '\n', mlen - i);

		if (!strncmp(l, key, klen) && l[klen] == '=')
			return strtoull(l + klen + 1, NULL, 10);
		i += nl ? (size_t)(nl - l) + 1 : mlen - i;
	}
	return 0;
}

/*
 * ioacctd writes a large trace in the background: wait while its pending
 * marker is there, at most IOACCT_SPANK_TRACE_WAIT_MS.
 */
static void wait_spooled(const char *path)
{
	char pending[PATH_MAX + 16];
	struct timespec nap = { 0, 50000000 };

	snprintf(pending, sizeof(pending), "%s" IOACCT_DARSHAN_SPOOL_PENDING, path);
	for (int i = 0; i < IOACCT_SPANK_TRACE_WAIT_MS / 50 && access(pending, F_OK) == 0; i++)
		nanosleep(&nap, NULL);
}

int ioacct_spank_trace_render(const struct ioacct_jobdata *jd, const char *db_path, char **buf,
			      size_t *len, char *msg, size_t msglen)
{
	const struct ioacct_job *job = &jd->job;
	struct ioacct_report *r = NULL;
	struct ioacct_darshan_log *log = NULL, *trace = NULL;
	char path[PATH_MAX], err[PATH_MAX + 256];
	uint64_t nw = 0, nr = 0, dropped;
	size_t ndxt = 0;
	void *out = NULL;
	int ret;

	ret = ioacct_darshan_spool_path(db_path, job->cluster, job->job_id, path, sizeof(path));
	if (ret)
		return ioacct_seterr(msg, msglen, ret, "no trace spool file name: %s", strerror(-ret));
	wait_spooled(path);
	trace = ioacct_darshan_read(path, err, sizeof(err));
	if (!trace)
		snprintf(msg, msglen, "no trace: %s%s", err,
			 errno == ENOENT ? " (ioacctd recorded none: its log says why)" : "");
	r = ioacct_report_create(jd, NULL, NULL);
	log = r ? ioacct_darshan_from_report(r, false) : NULL;
	if (!log) {
		ret = ioacct_seterr(msg, msglen, -ENOMEM, "cannot make the Darshan report: out of memory");
		goto out;
	}
	if (trace) {
		for (size_t i = 0; i < trace->ndxt; i++) {
			nw += trace->dxt[i].nwrites;
			nr += trace->dxt[i].nreads;
		}
		ndxt = trace->ndxt;
		ret = ioacct_darshan_trace_merge(log, trace);
		if (ret) {
			ioacct_seterr(msg, msglen, ret, "cannot add the trace: out of memory");
			goto out;
		}
		dropped = meta_u64(trace, "trace_dropped");
		snprintf(msg, msglen, "trace: %" PRIu64 " writes and %" PRIu64 " reads in %zu DXT "
			 "records; %" PRIu64 " events lost (ring buffer full), %" PRIu64 " dropped%s",
			 nw, nr, ndxt, meta_u64(trace, "trace_lost"), dropped,
			 dropped ? " (trace_max was reached)" : "");
	}
	ret = ioacct_darshan_write(log, &out, len, err, sizeof(err));
	if (ret) {
		ioacct_seterr(msg, msglen, ret, "cannot write the Darshan report: %s",
			      err[0] ? err : strerror(-ret));
		goto out;
	}
	*buf = out;
	/* The report is made: the spooled copy has served. */
	if (trace)
		unlink(path);
out:
	ioacct_darshan_free(trace);
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	return ret;
}

bool ioacct_spank_trace_spooled(const struct ioacct_job *job, const char *db_path)
{
	char path[PATH_MAX], pending[PATH_MAX + 16];

	if (ioacct_darshan_spool_path(db_path, job->cluster, job->job_id, path, sizeof(path)))
		return false;
	/* Still being written (a grandchild of ioacctd's): it will be there; render waits. */
	snprintf(pending, sizeof(pending), "%s" IOACCT_DARSHAN_SPOOL_PENDING, path);
	return access(path, F_OK) == 0 || access(pending, F_OK) == 0;
}
