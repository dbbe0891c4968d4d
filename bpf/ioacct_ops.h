/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one list of operations and the one list of system calls, as X-macros:
 * the BPF object, the daemon's syscall table, the model, the reports, the
 * query fields and the store are generated from them. Adding an operation
 * is a row here, plus the code that does something new with it.
 *
 * Like ioacct_abi.h: no includes, no types, so that the kernel side and user
 * space can both include it.
 */
#ifndef IOACCT_OPS_H
#define IOACCT_OPS_H

/*
 * X(NAME, number, name, kind, darshan, report, title, width, help), one row
 * per operation, in number order. Never renumber: stored data uses them.
 *
 *   NAME    enum ioacct_op: IOACCT_OP_NAME; reports print IOACCT_NAME_ERRORS,
 *           IOACCT_NAME_TIME_NS; the query field of its calls is NAMES
 *   number  its value, stored in the kernel's maps and in the database
 *   name    "read": reports, JSON keys, the store's ops table; the plural
 *           ("reads") names its calls in JSON and iorun's summary
 *   kind    DATA: moves bytes (bandwidth, access sizes, the kernel counts
 *           its bytes); META: a metadata call (meta ops and meta time);
 *           MARK: marks another call (create: an open that made its file),
 *           has no time of its own and is not a metadata call by itself;
 *           VIEW: the page-cache and mmap views and the access hints (issue
 *           14): counted by their own probes, never a call's time, never in
 *           a mount's calls, meta ops or time; what calls and bytes mean is
 *           the row's help
 *   darshan the Darshan POSIX counter of its successful calls
 *           (IOACCT_DARSHAN_POSIX_<darshan> in lib/core/darshan_counters.h), NONE if none
 *   report  how reports name the count of its successful calls: POSIX_<darshan>,
 *           Darshan's name, compared with Darshan's logs by ioreport --compare;
 *           or IOACCT_<NAME>S, ioacct's own
 *   title, width, help: its query field (ioacct --format), as ioacct(1) lists it
 */
#define IOACCT_OPS(X)                                                                       \
	X(READ, 0, read, DATA, READS, POSIX, "Reads", 9,                                    \
	  "read calls (read, pread64, readv, ...)")                                         \
	X(WRITE, 1, write, DATA, WRITES, POSIX, "Writes", 9,                                \
	  "write calls (write, pwrite64, writev, ...)")                                     \
	X(OPEN, 2, open, META, OPENS, POSIX, "Opens", 8, "opens, failed ones included")     \
	X(CREATE, 3, create, MARK, NONE, IOACCT, "Creates", 8,                              \
	  "opens that created their file")                                                  \
	X(MKDIR, 4, mkdir, META, NONE, IOACCT, "Mkdirs", 7, "mkdir calls")                  \
	X(UNLINK, 5, unlink, META, NONE, IOACCT, "Unlinks", 8, "unlink calls")              \
	X(RMDIR, 6, rmdir, META, NONE, IOACCT, "Rmdirs", 7, "rmdir calls")                  \
	/* fdatasync too: Darshan counts it apart (POSIX_FDSYNCS), --compare adds it */     \
	X(FSYNC, 7, fsync, META, FSYNCS, POSIX, "Fsyncs", 7, "fsync and fdatasync calls")   \
	/* POSIX_RENAME_SOURCES in the logs ioreport writes; reports say IOACCT_RENAMES */  \
	X(RENAME, 8, rename, META, RENAME_SOURCES, IOACCT, "Renames", 8, "rename calls")    \
	X(STAT, 9, stat, META, STATS, POSIX, "Stats", 8,                                    \
	  "stat calls (stat, lstat, fstat, statx, ...)")                                    \
	/* Numbers 10.. may be renumbered by the lead at merge (io_uring adds its own). */  \
	X(MMAP_FAULT, 10, mmap_fault, VIEW, NONE, IOACCT, "MmapFaults", 10,                 \
	  "page faults on file mappings; bytes: file pages mapped (mmap_read_bytes)")       \
	X(CACHE_FILL, 11, cache_fill, VIEW, NONE, IOACCT, "CacheFills", 10,                 \
	  "folios the reads and faults filled from storage (misses); bytes: cache_miss_bytes")   \
	X(READAHEAD, 12, readahead, VIEW, NONE, IOACCT, "Readaheads", 10,                   \
	  "sync and async readahead decisions; bytes: read ahead beyond the request")       \
	X(FADVISE, 13, fadvise, VIEW, NONE, IOACCT, "Fadvises", 8,                          \
	  "posix_fadvise calls (by advice in reports)")                                     \
	X(MADVISE, 14, madvise, VIEW, NONE, IOACCT, "Madvises", 8,                          \
	  "madvise calls (by advice in reports)")                                           \
	X(IO_URING_OP, 15, io_uring_op, VIEW, NONE, IOACCT, "UringOps", 8,                  \
	  "io_uring requests completed (their reads, writes, fsyncs counted as those too)") \
	/* lseek(fd, 0, SEEK_CUR) is what stdio's ftell does: it counts as a seek. */       \
	X(SEEK, 16, seek, META, SEEKS, POSIX, "Seeks", 8, "lseek calls, ftell's included")

/* The kind column. */
enum ioacct_op_kind {
	IOACCT_OPK_DATA = 0,
	IOACCT_OPK_META = 1,
	IOACCT_OPK_MARK = 2,
	IOACCT_OPK_VIEW = 3,
};

#define IOACCT_OP_ENUM_(NAME, num, ...) IOACCT_OP_##NAME = num,
#define IOACCT_OP_ONE_(...) +1

enum ioacct_op {
	IOACCT_OPS(IOACCT_OP_ENUM_)
	IOACCT_OP_COUNT = 0 IOACCT_OPS(IOACCT_OP_ONE_),
};

/*
 * X(kernel name, user-space name, OP, KIND), one row per system call the
 * probes watch: OP is an IOACCT_OP_ name, KIND an IOACCT_SK_ name (where its
 * target is found, enum ioacct_sys_kind in ioacct_abi.h). The kernel name is
 * the syscall function's without its prefix (__x64_sys_newstat), for the
 * fentry and kprobe backends; the user-space name is SYS_<name> in
 * <sys/syscall.h>, for the daemon's table of the tracepoint backend. An
 * architecture may lack some (arm64 has only the *at forms): the daemon
 * leaves out a program whose function the kernel does not have.
 *
 * The FD_PAIR kinds move bytes between two fds: a read on the source's
 * mount and a write on the destination's, whatever the OP column says.
 * vmsplice is not here: its one fd is always a pipe, never a file.
 *
 * fadvise64 and madvise count calls by advice (IOACCT_HINT_* in
 * ioacct_abi.h), in the size histogram of their op: they move no bytes.
 * On arm64 the kernel's function is fadvise64_64: only the tracepoint
 * backend sees it there.
 *
 * The AIO kinds are not calls of their own: io_submit records the reads,
 * writes and fsyncs its iocbs ask for, io_getevents and io_pgetevents count
 * those whose events they return (bpf/ioacct.bpf.c). The 32-bit forms
 * (io_getevents_time32) are compat syscalls, not watched.
 */
#define IOACCT_SYSCALLS(X)                                                                  \
	X(read, read, READ, FD_DATA) X(write, write, WRITE, FD_DATA)                        \
	X(pread64, pread64, READ, FD_DATA) X(pwrite64, pwrite64, WRITE, FD_DATA)            \
	X(readv, readv, READ, FD_DATA) X(writev, writev, WRITE, FD_DATA)                    \
	X(preadv, preadv, READ, FD_DATA) X(pwritev, pwritev, WRITE, FD_DATA)                \
	X(preadv2, preadv2, READ, FD_DATA) X(pwritev2, pwritev2, WRITE, FD_DATA)            \
	X(open, open, OPEN, OPEN_PATH) X(creat, creat, OPEN, OPEN_PATH)                     \
	X(openat, openat, OPEN, OPEN_AT) X(openat2, openat2, OPEN, OPEN_AT)                 \
	X(mkdir, mkdir, MKDIR, PATH) X(mkdirat, mkdirat, MKDIR, AT)                         \
	X(unlink, unlink, UNLINK, PATH) X(rmdir, rmdir, RMDIR, PATH)                        \
	X(unlinkat, unlinkat, UNLINK, UNLINKAT)                                             \
	X(fsync, fsync, FSYNC, FD) X(fdatasync, fdatasync, FSYNC, FD)                       \
	X(lseek, lseek, SEEK, FD)                                                           \
	X(rename, rename, RENAME, PATH) X(renameat, renameat, RENAME, AT)                   \
	X(renameat2, renameat2, RENAME, AT)                                                 \
	X(newstat, stat, STAT, PATH) X(newlstat, lstat, STAT, PATH)                         \
	X(newfstat, fstat, STAT, FD) X(newfstatat, newfstatat, STAT, AT)                    \
	X(statx, statx, STAT, AT)                                                           \
	X(sendfile64, sendfile, READ, FD_PAIR_OUT) X(splice, splice, READ, FD_PAIR)         \
	X(copy_file_range, copy_file_range, READ, FD_PAIR)                                  \
	X(fadvise64, fadvise64, FADVISE, FADVISE) X(madvise, madvise, MADVISE, MADVISE)     \
	X(io_submit, io_submit, READ, AIO_SUBMIT)                                           \
	X(io_getevents, io_getevents, READ, AIO_REAP)                                       \
	X(io_pgetevents, io_pgetevents, READ, AIO_REAP)

/*
 * Every IOACCT_SK_ kind a row of IOACCT_SYSCALLS has: the kprobe and
 * syscall-tp backends have one exit program per kind (ioacct_kr_KIND,
 * ioacct_tx_KIND), attached to the exit of each syscall of that kind.
 */
#define IOACCT_SYS_KINDS(X)                                                                 \
	X(FD_DATA) X(FD) X(PATH) X(AT) X(OPEN_PATH) X(OPEN_AT) X(UNLINKAT) X(FD_PAIR)       \
	X(FD_PAIR_OUT) X(AIO_SUBMIT) X(AIO_REAP) X(FADVISE) X(MADVISE)

#endif /* IOACCT_OPS_H */
