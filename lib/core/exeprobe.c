// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A job's program probed before it runs: see exeprobe.h.
 */
#include "exeprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto.h"
#include "util.h"

/* The wait before asking again, when the daemon had no room for the request. */
#define RETRY_MS 10

/*
 * The file at name, if execvp() would execute it: a regular file the
 * caller may execute, opened to be read. O_NONBLOCK: a FIFO put there
 * meanwhile does not hold the open. A fd, or -errno.
 */
static int open_program(const char *name)
{
	struct stat sb;
	int fd;

	if (stat(name, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode) || faccessat(AT_FDCWD, name, X_OK, AT_EACCESS))
		return -EACCES;
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* cmd as execvp() resolves it: a name with a slash as it is, else PATH's first match. */
static int find_program(const char *cmd, const char *path)
{
	char name[PATH_MAX];
	int fd = -ENOENT;

	if (!cmd[0])
		return -ENOENT;
	if (strchr(cmd, '/'))
		return open_program(cmd);
	if (!path)
		path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		size_t len = strcspn(p, ":");

		/* An empty element is the working directory, as execvp() has it. */
		if (snprintf(name, sizeof(name), "%.*s%s%s", (int)len, p, len ? "/" : "", cmd) <
		    (int)sizeof(name)) {
			fd = open_program(name);
			if (fd >= 0)
				return fd;
		}
		p += len;
		if (!*p)
			return fd;
	}
}

/*
 * The call, again while time is left when the daemon closed the connection
 * unread (a uid holds at most 32 of them: a node's tasks of one step ask at
 * once; the first's answer is the others' at once) or too many wait.
 */
static int call_retried(const char *socket_path, const struct ioacct_request *req, int fd,
			struct ioacct_reply *rep, int timeout_ms, char *err, size_t errlen)
{
	uint64_t end = ioacct_mono_ms() + (uint64_t)timeout_ms, now;
	int ret;

	for (;;) {
		ret = ioacct_client_call_fd(socket_path, req, fd, rep, timeout_ms, err, errlen);
		if (ret == 0 && rep->status != -EBUSY)
			return 0;
		if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
			return ret;
		now = ioacct_mono_ms();
		if (now + RETRY_MS >= end)
			return ret;
		if (ret == 0)
			ioacct_reply_free(rep);
		usleep(RETRY_MS * 1000);
		timeout_ms = (int)(end - now - RETRY_MS);
	}
}

int ioacct_exeprobe(const char *socket_path, const char *cmd, const char *path,
		    const char *cluster, uint64_t job_id, uint32_t step_id, int timeout_ms,
		    char *err, size_t errlen)
{
	struct ioacct_request req = { .type = IOACCT_MSG_PROBE_EXE };
	struct ioacct_reply rep;
	int fd = find_program(cmd, path), ret;

	if (fd < 0)
		return 0;
	req.u.probe.job_id = job_id;
	req.u.probe.step_id = step_id;
	ioacct_strlcpy(req.u.probe.cluster, cluster ? cluster : "", sizeof(req.u.probe.cluster));
	ret = call_retried(socket_path, &req, fd, &rep, timeout_ms, err, errlen);
	close(fd);
	/*
	 * No daemon: the step is not monitored, which is said elsewhere (iorun,
	 * task_init's rank 0). -EPROTO: a daemon before the request, which
	 * answers it as a bad message (sequence number 0).
	 */
	if (ret == -ENOENT || ret == -ECONNREFUSED || ret == -EPROTO)
		return 0;
	if (ret)
		return ret;
	ret = rep.status;
	/* -EPROTO: a daemon before the request; -ENOENT: the step is not monitored (said elsewhere). */
	if (ret == -EPROTO || ret == -EOPNOTSUPP || ret == -ENOENT)
		ret = 0;
	if (ret)
		snprintf(err, errlen, "%s", rep.error);
	ioacct_reply_free(&rep);
	return ret;
}
