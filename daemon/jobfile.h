/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The files a job names to the daemon (issue 37), looked at through a
 * path handle (O_PATH: opens nothing, a FIFO's writer is not released, no
 * device's open acts) before anything parses or probes them: an MPI or
 * HDF5 library a watched task opens (mpiprobes.c), the program it executes
 * (HDF5 linked into it: issue 39). The daemon acts with its rights on a
 * name a user gave: each says what it takes and why.
 */
#ifndef IOACCT_JOBFILE_H
#define IOACCT_JOBFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * A library looked at through its handle fd: only a regular file of root's
 * that only root may write, on a file system of files, no smaller than an
 * ELF header. 0 with its stat, or -EPERM with why not in why.
 */
int ioacct_jobfile_lib_check(int fd, struct stat *sb, const char **why);

/*
 * The same of path as the task tgid sees it (a container's library is its
 * own), resolved under its root: a handle (O_PATH) or -errno; -EPERM with
 * why when a file is there and refused.
 */
int ioacct_jobfile_lib(uint32_t tgid, const char *path, struct stat *sb, const char **why);

/*
 * The program the task tgid runs, as a path handle (O_PATH) of the file
 * itself (/proc/PID/exe: what the kernel maps, whatever its name now), if
 * the daemon may look into it: a regular file on a file system of files
 * that no user's process serves (not FUSE: its open could keep the daemon
 * waiting), no smaller than an ELF header, that the job's user may read by
 * its mode (its real uid, gid and groups: the daemon may read any file,
 * and hands the ELF worker only a program the job could have read
 * itself). A fd with its stat; -EPERM with why not (the stat filled); or
 * -errno (the task gone). shown: the file's name, for the log.
 */
int ioacct_jobfile_exe(uint32_t tgid, struct stat *sb, const char **why, char *shown, size_t len);

/*
 * A program a job's task is about to execute, as its user opened it and
 * sent it (probe_exe: iorun, the SPANK plugin): opened to be read (not a
 * path handle: that proves no right to read), then the same checks as
 * ioacct_jobfile_exe() but the mode's, which the open itself passed with
 * the user's rights. 0 with its stat; -EPERM with why; -errno.
 */
int ioacct_jobfile_exe_fd(int fd, struct stat *sb, const char **why);

#endif /* IOACCT_JOBFILE_H */
