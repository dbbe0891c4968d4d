/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mounts of other mount namespaces: a job in a container (Apptainer,
 * enroot, `unshare -m`) does its I/O on mounts its registering task's
 * mountinfo does not list. Mount ids are unique system-wide, so such a
 * mount is found in the mountinfo of a task of the job that lives in the
 * container's namespace. Each drain pass scans a job's cgroups at most once
 * and reads each namespace at most once. The tables read are kept across
 * passes only under the kernel's 64-bit namespace id (Linux 6.9): the inode
 * number of a freed namespace, and its mount ids, are given to the next ones
 * made, so without that id a table is trusted in the pass that read it and
 * for its job only. A pid listed in a cgroup is made sure to be the job's
 * task (pidfd) before its namespace names anything (issue 24). An entry names
 * a counted mount only as mntid.h proves it: by the mount's unique id, or by
 * what the probes noted of it (issue 36); a 32-bit id alone proves nothing
 * here, as the mount ids of containers are the ones the kernel reuses.
 */
#ifndef IOACCT_MNTNS_H
#define IOACCT_MNTNS_H

#include <stddef.h>
#include <stdint.h>

#include "mntid.h"
#include "model.h"

struct ioacct_mntns;

/* NULL and errno ENOMEM. */
struct ioacct_mntns *ioacct_mntns_create(void);
void ioacct_mntns_destroy(struct ioacct_mntns *c);

/* Starts a drain pass: scans and reads of the last pass are not trusted any more. */
void ioacct_mntns_pass(struct ioacct_mntns *c);
/* The current pass's number (1, 2, ...). */
uint64_t ioacct_mntns_pass_no(const struct ioacct_mntns *c);

/*
 * Names the mount of key mnt_id (note: what the probes noted of it, NULL
 * when nothing) from the mount namespaces of the tasks in the job's cgroups
 * (cgroup directories of either hierarchy, with their descendants), leaving
 * out skip_ns (the namespace whose table the caller has just read; 0 for
 * none). Fills *out (the path as seen inside the namespace; mnt_id the key)
 * and *ns. -ENOENT when no task of the job lives in a namespace whose table
 * proves to have the mount (it is unmounted, its namespace is gone, or
 * nothing tells its 32-bit id from another's), -ENOMEM.
 */
int ioacct_mntns_find(struct ioacct_mntns *c, int64_t job_key, const char *const *cgroups,
		      size_t ncgroups, uint32_t skip_ns, uint64_t mnt_id,
		      const struct ioacct_mntid_note *note, struct ioacct_mount *out, uint32_t *ns);

#endif /* IOACCT_MNTNS_H */
