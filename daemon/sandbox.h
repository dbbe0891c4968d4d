/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A worker's seccomp filter (worker.h), made with libseccomp: the system
 * calls it may make, by groups, and SIGSYS for the whole process on any
 * other (the kernel's audit log, where there is one, names the call). The
 * filter is loaded once the worker has what it serves set up (its
 * threads started, its listening socket and files in hand) and before it
 * reads anything from outside; it holds for every thread (TSYNC).
 *
 * Every worker has IOACCT_SB_BASE: memory, time, its descriptors' reads
 * and writes, polls, its channel's sendmsg/recvmsg, signals to itself,
 * exit. Nothing in any group opens a file for writing, changes an
 * identity, loads BPF, traces or signals another process, mounts,
 * executes, or makes a namespace.
 */
#ifndef IOACCT_SANDBOX_H
#define IOACCT_SANDBOX_H

#include <stddef.h>

enum ioacct_sb_group {
	IOACCT_SB_BASE = 1u << 0,
	/* accept4 and what a server does to its connections (/metrics) */
	IOACCT_SB_SERVER = 1u << 1,
	/* sockets of AF_UNIX, AF_INET and AF_INET6 and their connect (PostgreSQL, a collector, DNS) */
	IOACCT_SB_CLIENT = 1u << 2,
	/* files opened read-only, and their names looked at (libpq's and the resolver's settings) */
	IOACCT_SB_READ_FILES = 1u << 3,
	/* threads started after the filter */
	IOACCT_SB_THREADS = 1u << 4,
};

/* Loads the filter of `groups` on every thread of the process. 0 or -errno with err. */
int ioacct_sandbox_load(unsigned int groups, char *err, size_t errlen);

/*
 * What a worker may still open, by name (Landlock, Linux 5.13+). A worker
 * keeps the uid of the account, which owns the store, the pins and the
 * spool: without this, one that may open files (IOACCT_SB_READ_FILES:
 * libpq's and libcurl's settings) could read the store with that uid. The
 * rules hold for the process and whatever it would start; every access
 * right the kernel knows is handled, so that nothing is written, made,
 * removed, renamed or executed anywhere, and only these are read:
 *  - with IOACCT_SB_READ_FILES, the system's read-only trees (/etc, /usr,
 *    /lib, /lib64, and /run/systemd/resolve where /etc/resolv.conf points)
 *    and the files (or directories) of `files`, those that exist now;
 *  - without it, nothing.
 * Descriptors opened before are not affected (the channel, the listening
 * socket, what the core gave). On Landlock's ABI 6 and later the worker
 * may also neither signal nor connect to an abstract socket outside it.
 * 0 when in force; 1 when the kernel has no Landlock (err says so: the
 * seccomp filter still holds); -errno with err.
 */
#define IOACCT_SB_MAX_FILES 24
struct ioacct_sb_files {
	size_t n, used;
	const char *path[IOACCT_SB_MAX_FILES];
	char buf[16384];
};
/* Adds a copy of path (NULL or "" are skipped); -E2BIG when there is no room left. */
int ioacct_sb_files_add(struct ioacct_sb_files *f, const char *path);
int ioacct_sandbox_landlock(unsigned int groups, const struct ioacct_sb_files *files, char *err,
			    size_t errlen);

#endif /* IOACCT_SANDBOX_H */
