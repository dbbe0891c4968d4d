/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing a report where a user asked for it, as that user: the epilog and
 * ioacctd (a multi-node job's merged report, daemon/export.c) run as root,
 * and root must never create or follow anything in a user's directory. A child drops to the user's uid, gid and groups, then opens the
 * file with O_NOFOLLOW; an existing file is replaced only when it is a
 * regular file the user owns.
 * The user's groups are resolved before the fork and the child makes only
 * async-signal-safe calls, so a threaded process may call it.
 */
#ifndef IOACCT_USERFILE_H
#define IOACCT_USERFILE_H

#include <stddef.h>
#include <sys/types.h>

/* 0, or -errno with err saying what failed ("open /x/y: Permission denied"). */
int ioacct_write_as_user(const char *path, uid_t uid, gid_t gid, const void *data, size_t len,
			 char *err, size_t errlen);

/* As root, into an admin directory: a new file, replacing an old one, never through a link. */
int ioacct_write_as_root(const char *dir, const char *name, const void *data, size_t len, char *err,
			 size_t errlen);

#endif /* IOACCT_USERFILE_H */
