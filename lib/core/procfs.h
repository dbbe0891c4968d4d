/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Facts read from /proc and the cgroup file systems: mount tables, a task's
 * cgroups, cgroup ids, subsystem ids, mount namespaces. Every /proc reader
 * is a thin wrapper around a parser of the file's text, so unit tests run
 * the parsers on fixtures.
 */
#ifndef IOACCT_PROCFS_H
#define IOACCT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

/*
 * Reads a whole file into a malloc'd, NUL-terminated buffer. Meant for
 * /proc files, whose size stat cannot tell. 0 or -errno.
 */
int ioacct_procfs_read(const char *path, char **text);

/*
 * Parses the text of a /proc/<pid>/mountinfo into a malloc'd array of *n
 * mounts (mount point, fstype, source; octal escapes undone; mnt_id and
 * mnt_id_old the 32-bit id the file lists), in the file's order. A malformed line gives -EINVAL and its number in err (err may
 * be NULL); a field too long for struct ioacct_mount gives -ENAMETOOLONG.
 */
int ioacct_mountinfo_parse(const char *text, struct ioacct_mount **out, size_t *n, char *err,
			   size_t errlen);
/* ioacct_mountinfo_parse() on /proc/<pid>/mountinfo; pid 0 is the caller. */
int ioacct_mountinfo_read(pid_t pid, struct ioacct_mount **out, size_t *n, char *err,
			  size_t errlen);

/* The mount with this key (mnt_id); NULL and errno ENOENT when there is none. */
const struct ioacct_mount *ioacct_mount_find(const struct ioacct_mount *m, size_t n,
					     uint64_t mnt_id);
/*
 * The mount an absolute, normalised path lives on: the longest mount point
 * that is a prefix of it on a component boundary. Of mounts stacked on the
 * same mount point the last one listed wins, as it is the visible one.
 * NULL and errno EINVAL for a relative path, ENOENT when nothing matches.
 */
const struct ioacct_mount *ioacct_mount_of_path(const struct ioacct_mount *m, size_t n,
						const char *abs_path);
/*
 * The mounts a path can reach: of mounts stacked on one mount point only the
 * last listed (the visible one). Fills out (room for n) with pointers into m,
 * in the order of m; returns how many.
 */
size_t ioacct_mounts_visible(const struct ioacct_mount *m, size_t n,
			     const struct ioacct_mount **out);

/*
 * From the text of a mountinfo: the mount point of the root of the cgroup2
 * hierarchy (IOACCT_HIER_V2), or of the v1 hierarchy whose super options list
 * v1_controller ("freezer", or "name=systemd" for a named hierarchy). The
 * first such mount wins. -ENOENT when not mounted, -EINVAL on a malformed
 * mountinfo or arguments, -ENAMETOOLONG when out is too small.
 */
int ioacct_cgroup_mountpoint_parse(const char *mountinfo, enum ioacct_hier hier,
				   const char *v1_controller, char *out, size_t len);
/* ioacct_cgroup_mountpoint_parse() on /proc/self/mountinfo. */
int ioacct_cgroup_mountpoint(enum ioacct_hier hier, const char *v1_controller, char *out,
			     size_t len);

/*
 * From the text of a /proc/<pid>/cgroup: the task's cgroup in the given
 * hierarchy, relative to the hierarchy's root ("/slurm/uid_0/job_1/step_0").
 * v1_controller is matched as in ioacct_cgroup_mountpoint_parse(). -ENOENT
 * when the hierarchy is not listed, -EINVAL on malformed text or arguments,
 * -ENAMETOOLONG when out is too small.
 */
int ioacct_cgroup_parse(const char *text, enum ioacct_hier hier, const char *v1_controller,
			char *out, size_t len);
/* ioacct_cgroup_parse() on /proc/<pid>/cgroup; pid 0 is the caller. */
int ioacct_cgroup_of_pid(pid_t pid, enum ioacct_hier hier, const char *v1_controller, char *out,
			 size_t len);

/*
 * The kernel's id of the cgroup whose directory is fs_path: its inode
 * number. -ENOTDIR when fs_path is not a directory.
 */
int ioacct_cgroup_id(const char *fs_path, uint64_t *id);
/*
 * A new cgroup for a command, <mount>/<cgroup_parent>/<prefix>-<our pid>
 * (iorun, iotrace): v2 when usable, else the configured v1 hierarchy
 * (cfg->cgroup_mode). Its directory in path; 0, or -errno and why in err.
 */
struct ioacct_config;
int ioacct_cgroup_make(const struct ioacct_config *cfg, const char *prefix, char *path, size_t len,
		       char *err, size_t errlen);
/* Moves pid into the cgroup whose directory is fs_path: 0 or -errno. */
int ioacct_cgroup_enter(const char *fs_path, pid_t pid);
/* Which hierarchy the file system holding fs_path is; -EINVAL if no cgroup fs. */
int ioacct_cgroup_hier_of_path(const char *fs_path, enum ioacct_hier *hier);

/*
 * From the text of /proc/cgroups: the subsystem id of a v1 controller, which
 * is the index of its line since the kernel lists subsystems in id order.
 * -ENOENT when the controller is not listed.
 */
int ioacct_cgroup_v1_ssid_parse(const char *text, const char *controller, uint32_t *ssid);
/* ioacct_cgroup_v1_ssid_parse() on /proc/cgroups. */
int ioacct_cgroup_v1_ssid(const char *controller, uint32_t *ssid);

/*
 * Whether ioacctd runs as on a kernel without unique mount ids (before
 * 6.8), for tests: IOACCT_MNT_IDS=legacy in its environment, read once.
 * Then the probes key mounts by their 32-bit ids (ioacct_probes_opts'
 * legacy_mnt_ids), daemon/kmounts.c asks statx for no unique id,
 * ioacct_mntid_map() says ENOSYS as listmount() does there, and a mount
 * namespace has no 64-bit id (6.9): the fallback's proofs, tested on a
 * kernel that has all of these.
 */
bool ioacct_mnt_ids_legacy(void);

/*
 * A mount namespace as the kernel names it: the inode number of its nsfs
 * file, which the kernel gives to a new namespace once this one is freed,
 * and its 64-bit id (NS_GET_MNTNS_ID, Linux 6.9), which it never reuses;
 * id 0 on older kernels and with ioacct_mnt_ids_legacy().
 */
struct ioacct_mntns_ref {
	uint32_t inum;
	uint64_t id;
};

/* The mount namespace of pid (0 is the caller): 0 or -errno. */
int ioacct_proc_mntns_ref(pid_t pid, struct ioacct_mntns_ref *ref);
/* Whether a and b are one namespace: by id when both are known, else by inode number. */
bool ioacct_mntns_ref_same(const struct ioacct_mntns_ref *a, const struct ioacct_mntns_ref *b);

/*
 * A pidfd on process pid (pidfd_open(2)), or -errno. The kernel does not
 * give a pid to a new process before the old one is reaped, so what is read
 * of /proc/<pid> after this call is of that process if ioacct_proc_unpin()
 * then finds it not reaped; otherwise it may be of a stranger that got the pid.
 */
int ioacct_proc_pin(pid_t pid);
/* Closes a pidfd of ioacct_proc_pin(): 0 if its process was not reaped yet, else -ESRCH. */
int ioacct_proc_unpin(int pidfd);

/*
 * ioacct_mountinfo_read() of process pid, only if it lives in mount
 * namespace ns for the whole read. -ESRCH when pid is gone or was reused
 * meanwhile, -ESTALE when it is in another namespace: the pid is not the
 * task it was, or the task has moved (setns, unshare).
 */
int ioacct_mountinfo_read_ns(pid_t pid, const struct ioacct_mntns_ref *ns,
			     struct ioacct_mount **out, size_t *n, char *err, size_t errlen);

#endif /* IOACCT_PROCFS_H */
