// SPDX-License-Identifier: GPL-2.0-or-later
#include "userfile.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

enum step {
	STEP_RAISE = 1, STEP_GROUPS, STEP_GID, STEP_UID, STEP_CAPS, STEP_OPEN, STEP_NOT_OWNED,
	STEP_WRITE
};

static const char *const step_names[] = {
	[STEP_RAISE] = "raise CAP_SETUID and CAP_SETGID", [STEP_GROUPS] = "set the user's groups",
	[STEP_GID] = "set gid", [STEP_UID] = "set uid", [STEP_CAPS] = "drop every capability",
	[STEP_OPEN] = "open", [STEP_NOT_OWNED] = "refuse to replace (not a regular file of the user)",
	[STEP_WRITE] = "write",
};

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The calling thread's capabilities: `raise` makes CAP_SETUID and CAP_SETGID
 * effective when they are permitted (ioacctd, once it runs as its own
 * account, keeps them permitted only); else every set is emptied. The bare
 * system calls, which a child of a threaded process may make (libcap may
 * allocate). 0 or -1 with errno.
 */
static int caps_set(bool raise)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	const uint32_t setid = (1u << CAP_SETUID) | (1u << CAP_SETGID);

	memset(data, 0, sizeof(data));
	if (raise) {
		if (syscall(SYS_capget, &hdr, data))
			return -1;
		if ((data[0].effective & setid) == setid || (data[0].permitted & setid) != setid)
			return 0;
		data[0].effective |= setid;
	}
	return (int)syscall(SYS_capset, &hdr, data);
}

/*
 * In the child: returns the failing step, errno set; 0 when written. Only
 * async-signal-safe calls: the parent may be a threaded daemon (ioacctd's
 * exporter), where another thread may have held a lock of malloc or of
 * the passwd database at the fork. The groups were resolved before it.
 */
static int child_write(const char *path, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
		       const void *data, size_t len)
{
	struct stat st;
	int fd;

	if (caps_set(true))
		return STEP_RAISE;
	if (setgroups(ngroups, groups))
		return STEP_GROUPS;
	if (setresgid(gid, gid, gid))
		return STEP_GID;
	if (setresuid(uid, uid, uid))
		return STEP_UID;
	/*
	 * From root the kernel has emptied the sets; from ioacctd's own account
	 * (not root) it keeps them: the user's path is opened with none.
	 */
	if (caps_set(false))
		return STEP_CAPS;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return STEP_OPEN;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid) {
			errno = EPERM;
			return STEP_NOT_OWNED;
		}
		if (ftruncate(fd, 0))
			return STEP_WRITE;
	}
	if (fd < 0)
		return STEP_OPEN;
	if (write_all(fd, data, len) || close(fd))
		return STEP_WRITE;
	return 0;
}

/*
 * The user's supplementary groups, as initgroups() would set them (none for
 * a uid without a passwd entry). *groups: free().
 */
static int user_groups(uid_t uid, gid_t gid, gid_t **groups, size_t *ngroups)
{
	struct passwd pw, *res = NULL;
	char pwbuf[4096];
	int n = 64;
	gid_t *g;

	*groups = NULL;
	*ngroups = 0;
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) || !res)
		return 0;
	for (;;) {
		int want = n;

		g = malloc((size_t)n * sizeof(*g));
		if (!g)
			return -ENOMEM;
		if (getgrouplist(res->pw_name, gid, g, &n) >= 0)
			break;
		free(g);
		if (n <= want)
			n = want * 2;
		if (n > 65536)
			return -E2BIG;
	}
	*groups = g;
	*ngroups = (size_t)n;
	return 0;
}

int ioacct_write_as_user(const char *path, uid_t uid, gid_t gid, const void *data, size_t len,
			 char *err, size_t errlen)
{
	int pipefd[2], status = 0, msg[2] = { 0, 0 };
	gid_t *groups;
	size_t ngroups;
	pid_t pid;
	int ret;

	ret = user_groups(uid, gid, &groups, &ngroups);
	if (ret) {
		snprintf(err, errlen, "the groups of uid %u: %s", (unsigned int)uid, strerror(-ret));
		return ret;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		ret = -errno;
		free(groups);
		snprintf(err, errlen, "pipe: %s", strerror(-ret));
		return ret;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pipefd[0]);
		close(pipefd[1]);
		free(groups);
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		int r[2];

		close(pipefd[0]);
		r[0] = child_write(path, uid, gid, groups, ngroups, data, len);
		r[1] = errno;
		if (write(pipefd[1], r, sizeof(r)) != sizeof(r))
			_exit(2);
		_exit(r[0] ? 1 : 0);
	}
	close(pipefd[1]);
	free(groups);
	if (read(pipefd[0], msg, sizeof(msg)) != sizeof(msg))
		msg[0] = -1;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (msg[0] == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (msg[0] > 0 && msg[0] <= STEP_WRITE) {
		snprintf(err, errlen, "%s %s as uid %u: %s", step_names[msg[0]], path, (unsigned int)uid,
			 strerror(msg[1]));
		return msg[1] ? -msg[1] : -EIO;
	}
	snprintf(err, errlen, "writing %s as uid %u: the child failed", path, (unsigned int)uid);
	return -EIO;
}

int ioacct_write_as_root(const char *dir, const char *name, const void *data, size_t len, char *err,
			 size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, ret;

	if (strchr(name, '/') || snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, name, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "bad report name %s in %s", name, dir);
		return -EINVAL;
	}
	/* A new file beside, then rename: the copy is whole or absent, never through a link. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "create %s: %s", tmp, strerror(errno));
		return ret;
	}
	ret = write_all(fd, data, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "write %s: %s", path, strerror(-ret));
		unlink(tmp);
	}
	return ret;
}
