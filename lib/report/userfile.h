/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing a report where a user asked for it, as that user: the epilog runs
 * as root, ioacctd (a multi-node job's merged report, daemon/export.c) as
 * its own account with CAP_SETUID and CAP_SETGID permitted, and neither may
 * create or follow anything in a user's directory with its rights. A child
 * drops to the user's uid, gid and groups and to no capability at all, then
 * opens the file with O_NOFOLLOW; an existing file is replaced only when it
 * is a regular file the user owns.
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

/*
 * As the caller (root in the epilog, ioacctd's account in the daemon), into
 * an admin directory: a new file, replacing an old one, never through a link.
 */
int ioacct_write_as_root(const char *dir, const char *name, const void *data, size_t len, char *err,
			 size_t errlen);

#endif /* IOACCT_USERFILE_H */
