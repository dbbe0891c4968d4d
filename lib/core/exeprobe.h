/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Before a job's command runs (iorun; the SPANK plugin's task_init, in the
 * task, as the job's user): its program probed by ioacctd (probe_exe,
 * issue 39), so that HDF5 linked into it is counted from its first call.
 * The exec tracepoint sees the program too, but only once it runs: a short
 * program has ended before its uprobes are on.
 */
#ifndef IOACCT_EXEPROBE_H
#define IOACCT_EXEPROBE_H

#include <stddef.h>
#include <stdint.h>

/* How long the command waits for its probes at most: then it runs all the same. */
#define IOACCT_EXEPROBE_TIMEOUT_MS 2000

/*
 * The program of cmd, found as execvp() finds it (path: PATH's value, NULL
 * for the caller's; unset: "/bin:/usr/bin"), opened O_RDONLY with the
 * caller's rights (a file its user cannot read is never sent), sent to the
 * daemon on socket_path for the step (cluster, job_id, step_id), and its
 * answer awaited at most timeout_ms. 0 when there is nothing to tell the
 * user: probed; nothing to probe; no program found or not readable (its
 * exec says so, or it runs unprobed as the exec path would leave it); a
 * daemon that predates the request or does not run the step. -errno with
 * err (one line) otherwise: the command runs all the same.
 */
int ioacct_exeprobe(const char *socket_path, const char *cmd, const char *path,
		    const char *cluster, uint64_t job_id, uint32_t step_id, int timeout_ms,
		    char *err, size_t errlen);

#endif /* IOACCT_EXEPROBE_H */
