// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A worker's seccomp filter: see sandbox.h. libseccomp (Debian's
 * libseccomp2, also what systemd and OpenSSH build their filters with)
 * writes the BPF program: the architecture check, the numbers of each
 * architecture, the argument comparisons; a hand-written filter would get
 * one of those wrong sooner or later.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "util.h"

/* Calls allowed whatever their arguments, by group. */
static const int base_calls[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
	/* glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH): a name's metadata, never its data. */
	SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(lseek),
	SCMP_SYS(dup), SCMP_SYS(dup3),
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(madvise),
	SCMP_SYS(brk), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
	SCMP_SYS(sigaltstack), SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
	SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(getpid),
	SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid),
	SCMP_SYS(getegid), SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(getgroups),
	SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(restart_syscall), SCMP_SYS(sched_yield),
	SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(select), SCMP_SYS(pselect6),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_pwait2), SCMP_SYS(epoll_ctl),
	SCMP_SYS(fcntl), SCMP_SYS(getrandom), SCMP_SYS(prlimit64), SCMP_SYS(getrlimit),
	SCMP_SYS(uname), SCMP_SYS(sched_getaffinity), SCMP_SYS(membarrier),
	/* glibc's qsort() asks how much memory there is. */
	SCMP_SYS(sysinfo),
};

static const int server_calls[] = {
	SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(shutdown), SCMP_SYS(getsockname),
	SCMP_SYS(getpeername), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
	SCMP_SYS(epoll_create1), SCMP_SYS(eventfd2), SCMP_SYS(pipe2),
};

static const int client_calls[] = {
	SCMP_SYS(connect), SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(getsockopt),
	SCMP_SYS(setsockopt), SCMP_SYS(shutdown), SCMP_SYS(bind), SCMP_SYS(sendmmsg),
	SCMP_SYS(recvmmsg), SCMP_SYS(epoll_create1), SCMP_SYS(eventfd2), SCMP_SYS(pipe2),
};

static const int read_files_calls[] = {
	SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink),
	SCMP_SYS(readlinkat), SCMP_SYS(getdents64), SCMP_SYS(getcwd),
};

static int allow_all(scmp_filter_ctx f, const int *calls, size_t n)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, calls[i], 0);
		if (ret == -EEXIST)
			ret = 0; /* in two groups a worker has */
	}
	return ret;
}

/* Calls allowed only with some arguments. */
static int allow_some(scmp_filter_ctx f, unsigned int groups)
{
	const scmp_datum_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
	const scmp_datum_t pid = (scmp_datum_t)getpid();
	int ret;

	/* Signals to this process only (abort(), raise()). */
	ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, pid));
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				       SCMP_A0(SCMP_CMP_EQ, pid));
	/* A thread names itself (libmicrohttpd's, as they start: maybe after the filter). */
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				       SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	/* stdio asks whether a stream is a terminal; sockets, how many bytes wait. */
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_EQ, TCGETS));
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_EQ, FIONREAD));
	if (!ret && (groups & IOACCT_SB_CLIENT)) {
		static const int families[] = { AF_UNIX, AF_INET, AF_INET6 };

		for (size_t i = 0; i < ARRAY_SIZE(families) && !ret; i++)
			ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
					       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]));
		/* libcurl wakes its resolver's thread and its loop through a pair of its own. */
		if (!ret)
			ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1,
					       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_UNIX));
	}
	if (!ret && (groups & IOACCT_SB_READ_FILES)) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
				       SCMP_A2(SCMP_CMP_MASKED_EQ, writes, 0));
		if (!ret)
			ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
					       SCMP_A1(SCMP_CMP_MASKED_EQ, writes, 0));
	}
	if (!ret && (groups & IOACCT_SB_THREADS)) {
		/* clone() for threads only: CLONE_THREAD set (a fork has it clear). */
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
		/* clone3's flags are behind a pointer: ENOSYS, and glibc falls back to clone(). */
		if (!ret)
			ret = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	}
	return ret;
}

int ioacct_sandbox_load(unsigned int groups, char *err, size_t errlen)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int ret;

	if (!f)
		return ioacct_seterr(err, errlen, -ENOMEM, "seccomp: cannot make a filter");
	/* Every thread: libmicrohttpd's were started before. */
	ret = seccomp_attr_set(f, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!ret)
		ret = allow_all(f, base_calls, ARRAY_SIZE(base_calls));
	if (!ret && (groups & IOACCT_SB_SERVER))
		ret = allow_all(f, server_calls, ARRAY_SIZE(server_calls));
	if (!ret && (groups & IOACCT_SB_CLIENT))
		ret = allow_all(f, client_calls, ARRAY_SIZE(client_calls));
	if (!ret && (groups & IOACCT_SB_READ_FILES))
		ret = allow_all(f, read_files_calls, ARRAY_SIZE(read_files_calls));
	if (!ret)
		ret = allow_some(f, groups);
	if (!ret)
		ret = seccomp_load(f);
	seccomp_release(f);
	if (ret)
		return ioacct_seterr(err, errlen, ret < 0 ? ret : -EINVAL, "seccomp: cannot load the filter: %s",
				     strerror(ret < 0 ? -ret : EINVAL));
	return 0;
}

/*
 * Landlock. Debian 12's <linux/landlock.h> is 6.1's: the rights and the
 * ruleset's fields of later ABIs are named here, and the ruleset given to
 * the kernel is only as long as its ABI knows (a longer one with fields it
 * does not know set is refused).
 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4: none handled, a worker connects where it is told */
	uint64_t scoped;             /* ABI 6 */
};

/* The file system rights ABI abi knows. */
static uint64_t ll_fs_rights(int abi)
{
	uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0 to 12 */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

int ioacct_sb_files_add(struct ioacct_sb_files *f, const char *path)
{
	size_t len = path ? strlen(path) + 1 : 0;

	if (len <= 1)
		return 0;
	if (f->n >= IOACCT_SB_MAX_FILES || len > sizeof(f->buf) - f->used)
		return -E2BIG;
	f->path[f->n++] = memcpy(f->buf + f->used, path, len);
	f->used += len;
	return 0;
}

/* Reading beneath path (a directory: its files and listings; a file: it), if it exists. */
static int ll_allow_read(int ruleset, const char *path)
{
	struct landlock_path_beneath_attr pb = { 0 };
	struct stat st;
	int fd, ret = 0;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
	if (fstat(fd, &st))
		ret = -errno;
	if (!ret) {
		pb.parent_fd = fd;
		pb.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE;
		if (S_ISDIR(st.st_mode))
			pb.allowed_access |= LANDLOCK_ACCESS_FS_READ_DIR;
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0))
			ret = -errno;
	}
	close(fd);
	return ret;
}

int ioacct_sandbox_landlock(unsigned int groups, const struct ioacct_sb_files *files, char *err,
			    size_t errlen)
{
	static const char *const system_trees[] = {
		"/etc", "/usr", "/lib", "/lib64", "/run/systemd/resolve",
	};
	struct ll_ruleset rs = { 0 };
	const char *failed = NULL;
	size_t size = sizeof(rs.handled_access_fs);
	int abi, fd, ret = 0;

	/*
	 * Asking the version needs no privilege: EPERM is a system call filter
	 * of the service's (systemd's SystemCallFilter= without landlock_*),
	 * said as a missing Landlock is, not a reason to stop serving.
	 */
	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (errno != ENOSYS && errno != EOPNOTSUPP && errno != EPERM)
			return ioacct_seterr(err, errlen, -errno, "landlock: %s", strerror(errno));
		ioacct_seterr(err, errlen, 0, "Landlock is %s: the worker may read whatever its account may",
			      errno == ENOSYS	  ? "not in this kernel" :
			      errno == EOPNOTSUPP ? "not enabled in this kernel (lsm=)" :
						    "refused by a system call filter (the unit's SystemCallFilter=?)");
		return 1;
	}
	rs.handled_access_fs = ll_fs_rights(abi);
	if (abi >= 4)
		size = offsetof(struct ll_ruleset, scoped);
	if (abi >= 6) {
		rs.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(rs);
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &rs, size, 0);
	if (fd < 0)
		return ioacct_seterr(err, errlen, -errno, "landlock: cannot make a ruleset (ABI %d): %s",
				     abi, strerror(errno));
	if (groups & IOACCT_SB_READ_FILES) {
		for (size_t i = 0; i < ARRAY_SIZE(system_trees) && !ret; i++)
			if ((ret = ll_allow_read(fd, system_trees[i])))
				failed = system_trees[i];
		for (size_t i = 0; files && i < files->n && !ret; i++)
			if ((ret = ll_allow_read(fd, files->path[i])))
				failed = files->path[i];
	}
	if (ret)
		ioacct_seterr(err, errlen, ret, "landlock: cannot allow reading %s: %s", failed,
			      strerror(-ret));
	else if (syscall(SYS_landlock_restrict_self, fd, 0))
		ret = ioacct_seterr(err, errlen, -errno, "landlock: cannot restrict the worker: %s",
				    strerror(errno));
	close(fd);
	return ret;
}
