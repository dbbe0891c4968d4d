// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The files a job names to the daemon, looked at before it parses or
 * probes them (jobfile.h): an MPI or HDF5 library a watched task opens, the
 * program it executes (issue 39).
 */
#include "jobfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/magic.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

/*
 * File systems whose "regular files" are the kernel's interfaces: opening
 * or reading one may act (reading /proc/kmsg takes the kernel's messages
 * from whoever else reads them; a sysfs or debugfs file may drive a
 * device). No MPI library lives there.
 */
static bool kernel_fs(long type)
{
	switch (type) {
	case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case DEBUGFS_MAGIC: case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC: case SELINUX_MAGIC: case SMACK_MAGIC: case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC: case BPF_FS_MAGIC: case EFIVARFS_MAGIC: case PSTOREFS_MAGIC:
	case DEVPTS_SUPER_MAGIC: case NSFS_MAGIC: case BINFMTFS_MAGIC: case HUGETLBFS_MAGIC:
		return true;
	}
	return false;
}

/* The smallest a shared object can be: its ELF header. */
#define ELF_MIN_SIZE 64

/*
 * path as the task sees it (a container's library is its own), resolved
 * under its root, as a path handle (O_PATH: opens nothing, a FIFO's writer
 * is not released, no device's open acts). A fd, or -errno.
 */
static int lib_handle(uint32_t tgid, const char *path)
{
	char root[32];
	int rootfd, fd = -ENOSYS;

	snprintf(root, sizeof(root), "/proc/%u/root", tgid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
#ifdef RESOLVE_IN_ROOT
	{
		/* Its absolute links resolved in its root too; no /proc magic link followed. */
		struct open_how how = { .flags = O_PATH | O_CLOEXEC,
					.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

		fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd < 0)
			fd = -errno;
	}
#endif
	/* Before 5.6: an absolute link goes to the daemon's root; the checks hold all the same. */
	if (fd == -ENOSYS) {
		fd = openat(rootfd, path + strspn(path, "/"), O_PATH | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	close(rootfd);
	return fd;
}

/* See jobfile.h: what is checked is the handle's file, the one parsed and probed. */
int ioacct_jobfile_lib_check(int fd, struct stat *sb, const char **why)
{
	struct statfs sfs;

	*why = NULL;
	if (fstat(fd, sb) || fstatfs(fd, &sfs)) {
		*why = "cannot stat it";
	} else if (!S_ISREG(sb->st_mode)) {
		*why = S_ISFIFO(sb->st_mode) ? "a FIFO" :
		       S_ISCHR(sb->st_mode) || S_ISBLK(sb->st_mode) ? "a device" :
		       S_ISDIR(sb->st_mode) ? "a directory" : S_ISSOCK(sb->st_mode) ? "a socket" :
									    "not a regular file";
	} else if (sb->st_uid != 0 || (sb->st_mode & 022)) {
		*why = "not a regular file of root's that only root may write";
	} else if (kernel_fs((long)sfs.f_type)) {
		*why = "a kernel interface (proc, sysfs, ...), not a file";
	} else if (sb->st_size < ELF_MIN_SIZE) {
		*why = "too small to be a library";
	} else {
		return 0;
	}
	return -EPERM;
}

/* The same of path as the task tgid sees it: a handle (O_PATH, lib_handle()) or -errno. */
int ioacct_jobfile_lib(uint32_t tgid, const char *path, struct stat *sb, const char **why)
{
	int fd = lib_handle(tgid, path), ret;

	*why = NULL;
	if (fd < 0)
		return fd;
	ret = ioacct_jobfile_lib_check(fd, sb, why);
	if (!ret)
		return fd;
	close(fd);
	return ret;
}

/*
 * Whether the task's user (its real uid, gid and groups: a set-user-ID
 * program's runs as the user who started it) may read the file of sb by
 * its mode: the daemon, which may read any file, hands the ELF worker only
 * a program the job could have read itself. 0, -EACCES, or -errno (the
 * task is gone).
 */
static int exe_readable(uint32_t tgid, const struct stat *sb)
{
	char path[64], line[4096];
	unsigned int uid = UINT_MAX, gid = UINT_MAX;
	bool group = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tgid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u", &uid) == 1 || sscanf(line, "Gid: %u", &gid) == 1)
			continue;
		if (strncmp(line, "Groups:", 7))
			continue;
		for (char *t = strtok(line + 7, " \t\n"); t; t = strtok(NULL, " \t\n"))
			group |= strtoul(t, NULL, 10) == sb->st_gid;
	}
	fclose(f);
	if (uid == UINT_MAX || gid == UINT_MAX)
		return -ESRCH;
	group |= gid == sb->st_gid;
	if (uid == 0 || (uid == sb->st_uid ? sb->st_mode & S_IRUSR :
			 group ? sb->st_mode & S_IRGRP : sb->st_mode & S_IROTH))
		return 0;
	return -EACCES;
}

/*
 * A program's file, of the handle or descriptor fd: a regular file on a
 * file system of files that no user's process serves, no smaller than an
 * ELF header. 0 with its stat; -EPERM with why; -errno.
 */
static int exe_check(int fd, struct stat *sb, const char **why)
{
	struct statfs sfs;

	if (fstat(fd, sb) || fstatfs(fd, &sfs))
		return -errno;
	if (!S_ISREG(sb->st_mode))
		*why = "not a regular file";
	else if (kernel_fs((long)sfs.f_type) || sfs.f_type == FUSE_SUPER_MAGIC)
		*why = "on a kernel's or a user's file system (proc, FUSE, ...)";
	else if (sb->st_size < ELF_MIN_SIZE)
		*why = "too small to be a program";
	return *why ? -EPERM : 0;
}

/* See jobfile.h. */
int ioacct_jobfile_exe(uint32_t tgid, struct stat *sb, const char **why, char *shown, size_t len)
{
	char link[32];
	ssize_t n;
	int fd, ret;

	*why = NULL;
	snprintf(link, sizeof(link), "/proc/%u/exe", tgid);
	n = readlink(link, shown, len - 1);
	shown[n > 0 ? n : 0] = '\0';
	for (char *c = shown; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?'; /* it goes to the log */
	fd = open(link, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = exe_check(fd, sb, why);
	if (!ret && (ret = exe_readable(tgid, sb)) == -EACCES)
		*why = "not readable by the job's user";
	if (!ret)
		return fd;
	close(fd);
	return *why ? -EPERM : ret;
}

/* See jobfile.h: the user opened it, with the user's rights; the rest as a task's program. */
int ioacct_jobfile_exe_fd(int fd, struct stat *sb, const char **why)
{
	int fl = fcntl(fd, F_GETFL);

	*why = NULL;
	if (fl < 0)
		return -errno;
	/* A path handle proves no right to read: any user may make one of a file of 0711. */
	if ((fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY) {
		*why = "not opened to be read";
		return -EPERM;
	}
	return exe_check(fd, sb, why);
}
