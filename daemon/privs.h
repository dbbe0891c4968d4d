/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacctd's rights (issue 37). Started by root, it does as root only what
 * the kernel keeps for root (mount the BPF and trace file systems, load,
 * attach and pin the probes, open the store, bind the socket), then gives
 * its state to its own account (ioacct.conf's user, `ioacct` by default)
 * and becomes that account with the few capabilities its work needs (the
 * table in privs.c, each named in ioacctd(8) with what needs it). Every
 * thread started after ioacct_privs_drop() inherits that; none may run
 * before it.
 */
#ifndef IOACCT_PRIVS_H
#define IOACCT_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ioacct_config;
struct ioacct_store;
struct ioacct_privs;

/*
 * The account named `user`, looked up in the passwd database: NULL with
 * errno and `err` when it does not exist. "root" keeps root's rights (the
 * daemon says so). `setid`: keep CAP_SETUID and CAP_SETGID permitted, for
 * report files written as their users (the cluster store's merged reports).
 */
struct ioacct_privs *ioacct_privs_create(const char *user, bool setid, char *err, size_t errlen);
void ioacct_privs_destroy(struct ioacct_privs *p);

/* The account's uid and gid (0 and 0 for root). */
uid_t ioacct_privs_uid(const struct ioacct_privs *p);
gid_t ioacct_privs_gid(const struct ioacct_privs *p);

/*
 * Gives the account what it writes once started, made by this daemon or by
 * an earlier one as root (an upgrade): the store's files, every pin under
 * bpf_pin_dir (on the BPF file system only), the trace spool, and the
 * directories of the store, socket and pidfile when they hold nothing but
 * ioacctd's files (else a warning says what the daemon cannot do there).
 * 0 or -errno with `err`.
 */
int ioacct_privs_take_over(const struct ioacct_privs *p, const struct ioacct_config *cfg,
			   struct ioacct_store *store, char *err, size_t errlen);

/*
 * Becomes the account, for good: its uid, gid and only group; the kept
 * capabilities effective (CAP_SETUID and CAP_SETGID permitted only), every
 * other one gone from every set; the bounding set empty (what its workers,
 * the one program it executes, may gain: nothing); no ambient
 * capabilities, SECBIT_NOROOT locked, no_new_privs. Before any thread is
 * started. 0 or -errno with `err` (the daemon must not go on then).
 */
int ioacct_privs_drop(const struct ioacct_privs *p, char *err, size_t errlen);

#endif /* IOACCT_PRIVS_H */
