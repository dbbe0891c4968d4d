/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A mount's identity (issue 36): which entry of a mount table is the mount
 * the probes counted under a key (ioacct_abi.h: mnt_id_unique where the
 * kernel has it, else the 32-bit id it reuses at once), and the unique ids
 * of a table read from a mountinfo, which lists only the 32-bit ones.
 *
 * On kernels with unique ids, listmount() and statmount() of the table's
 * namespace give each mount's unique id beside its 32-bit one and its mount
 * point, and an entry of the table gets the unique id of the mount that
 * agrees with it in all three; neither call touches a file system (no FUSE
 * or NFS server can hold the daemon up). An entry with the counters' unique
 * id is that mount, whenever the table was read. An entry by a 32-bit id is
 * that mount only when proven: by what the probes noted of the mount the
 * slot counted (its namespace, 32-bit id, file-system type and mount point
 * must all agree with the entry), or, for a mount of the job's own table
 * that no note names (reached by path only), by that entry having been in
 * the table, unchanged, since the job's first read of it, before any of its
 * counters (docs/design.md, "Which identity keys what").
 */
#ifndef IOACCT_MNTID_H
#define IOACCT_MNTID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "procfs.h"

/* What the probes noted of a counted mount (bpf/ioacct_abi.h, mntnotes). */
struct ioacct_mntid_note {
	uint64_t first_ns;       /* CLOCK_MONOTONIC when the mount was first noted */
	uint64_t slot_start;     /* the noting slot's start then */
	uint32_t mntns;          /* inode number of its mount namespace */
	uint32_t mnt_id_old;     /* its 32-bit id, as mountinfo lists it */
	bool complete;           /* path is the whole mount point; else its last components */
	char fstype[IOACCT_NOTE_FSTYPE_MAX];
	char path[IOACCT_NOTE_PATH_MAX];
};

/*
 * The entry of table m (n entries, of mount namespace inode number ns) that
 * is the mount of key: the entry with that unique id; else, with a note of
 * the mount, the entry of the note's namespace, 32-bit id, file-system type
 * and mount point (an entry given another unique id is another mount);
 * else, for a 32-bit key without a note, the entry of that id in the table
 * since (the time each entry was first seen, unchanged since; NULL: none is
 * trusted so) no later than bound_ns. NULL when nothing proves one.
 */
const struct ioacct_mount *ioacct_mntid_match(const struct ioacct_mount *m, const uint64_t *since,
					      size_t n, uint32_t ns, uint64_t key,
					      const struct ioacct_mntid_note *note, uint64_t bound_ns);

/* Whether what the probes noted of a mount agrees with a table's entry: its type and mount point. */
bool ioacct_mntid_note_agrees(const struct ioacct_mntid_note *note, const char *fstype,
			      const char *path);

/*
 * Sets mnt_id of each entry of m (read from the mountinfo of a task in
 * namespace ns; mnt_id_old is its 32-bit id) to the unique id of its mount.
 * own: ns is the daemon's own namespace, which listmount() reaches from 6.8;
 * another namespace needs its 64-bit id (ns->id, NS_GET_MNTNS_ID, 6.9) and
 * listmount()'s mnt_ns_id (6.11). An entry no listed mount agrees with (it
 * was unmounted between the two reads, its id given to another) keeps its
 * 32-bit id. 0 (*mapped: how many got a unique id), -ENOSYS where the kernel
 * cannot say, or -errno.
 */
int ioacct_mntid_map(const struct ioacct_mntns_ref *ns, bool own, struct ioacct_mount *m, size_t n,
		     size_t *mapped);

#endif /* IOACCT_MNTID_H */
