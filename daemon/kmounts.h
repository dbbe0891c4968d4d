/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel-internal mounts: pipes, sockets, anonymous inodes (eventfd, epoll,
 * timerfd, signalfd), pidfds, namespace files and memfds live on mounts the
 * kernel makes for itself, which no mountinfo lists. A job's fstat of a
 * pipe is counted on one of them; without this table it showed as
 * "mnt:16 unknown" in every report. Their ids are learnt once, at start, by
 * making one object of each kind and asking statx for its mount.
 */
#ifndef IOACCT_KMOUNTS_H
#define IOACCT_KMOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * Fills *out (malloc'd, *n entries) with the internal mounts this kernel
 * has, one per mount (mnt_id the probes' key, mnt_id_old the 32-bit id):
 * path as /proc/PID/fd links name their objects
 * ("pipe:", "socket:", "anon_inode:", ...), fstype from the file system's
 * magic ("pipefs", ...), source "kernel-internal". A kind this kernel or
 * sandbox cannot make is left out. 0 or -ENOMEM.
 */
int ioacct_kmounts_read(struct ioacct_mount **out, size_t *n);

/* The entry of mount key mnt_id in a table from ioacct_kmounts_read(), or NULL. */
const struct ioacct_mount *ioacct_kmounts_find(const struct ioacct_mount *m, size_t n,
					       uint64_t mnt_id);

#endif /* IOACCT_KMOUNTS_H */
