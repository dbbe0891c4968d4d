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
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
