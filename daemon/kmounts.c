// SPDX-License-Identifier: GPL-2.0-or-later
#include "kmounts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "model.h"
#include "procfs.h"

#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC 0x50494446
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U /* Linux 6.8 */
#endif

/* The file-system type of an internal mount, from its magic. */
static const char *magic_name(long type)
{
	switch (type) {
	case PIPEFS_MAGIC:
		return "pipefs";
	case SOCKFS_MAGIC:
		return "sockfs";
	case ANON_INODE_FS_MAGIC:
		return "anon_inodefs";
	case PID_FS_MAGIC:
		return "pidfs";
	case NSFS_MAGIC:
		return "nsfs";
	case TMPFS_MAGIC:
		return "tmpfs";
	default:
		return "unknown";
	}
}

/*
 * Adds the mount of fd (then closed) as path, unless its id is known: by its
 * unique id where the kernel has them (the probes' key then), else by the
 * 32-bit one. An internal mount lives as long as the kernel: never unmounted,
 * its 32-bit id is never another's.
 */
static int add(struct ioacct_mount **m, size_t *n, int fd, const char *path)
{
	struct ioacct_mount *nm;
	struct statfs sfs;
	struct statx stx;
	uint64_t key;
	uint32_t old;
	int ret = 0;

	if (fd < 0)
		return 0;
	/* 0 is no mount id the probes could have seen for a file: not one to name. */
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID) ||
	    stx.stx_mnt_id == 0 || stx.stx_mnt_id > UINT32_MAX || fstatfs(fd, &sfs) != 0)
		goto out;
	key = old = (uint32_t)stx.stx_mnt_id;
	if (!ioacct_mnt_ids_legacy() &&
	    statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		key = stx.stx_mnt_id;
	for (size_t i = 0; i < *n; i++)
		if ((*m)[i].mnt_id == key)
			goto out;
	nm = realloc(*m, (*n + 1) * sizeof(*nm));
	if (!nm) {
		ret = -ENOMEM;
		goto out;
	}
	*m = nm;
	nm = &nm[(*n)++];
	memset(nm, 0, sizeof(*nm));
	nm->mnt_id = key;
	nm->mnt_id_old = old;
	ioacct_strlcpy(nm->path, path, sizeof(nm->path));
	ioacct_strlcpy(nm->fstype, magic_name((long)sfs.f_type), sizeof(nm->fstype));
	ioacct_strlcpy(nm->source, "kernel-internal", sizeof(nm->source));
out:
	close(fd);
	return ret;
}

int ioacct_kmounts_read(struct ioacct_mount **out, size_t *n)
{
	struct ioacct_mount *m = NULL;
	size_t nm = 0;
	int p[2] = { -1, -1 }, ret;

	if (pipe2(p, O_CLOEXEC) == 0)
		close(p[1]);
	ret = add(&m, &nm, p[0], "pipe:");
	if (!ret)
		ret = add(&m, &nm, socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket:");
	if (!ret)
		ret = add(&m, &nm, eventfd(0, EFD_CLOEXEC), "anon_inode:");
	if (!ret)
		ret = add(&m, &nm, (int)syscall(SYS_pidfd_open, getpid(), 0), "pidfd:");
	if (!ret)
		ret = add(&m, &nm, open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), "nsfs:");
	if (!ret)
		ret = add(&m, &nm, memfd_create("ioacct-kmounts", MFD_CLOEXEC), "memfd:");
	if (ret) {
		free(m);
		return ret;
	}
	for (size_t i = 0; i < nm; i++)
		log_debug("kernel-internal mount %" PRIu64 " (%" PRIu32 "): %s (%s)", m[i].mnt_id,
			  m[i].mnt_id_old, m[i].path, m[i].fstype);
	*out = m;
	*n = nm;
	return 0;
}

const struct ioacct_mount *ioacct_kmounts_find(const struct ioacct_mount *m, size_t n,
					       uint64_t mnt_id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].mnt_id == mnt_id)
			return &m[i];
	return NULL;
}
