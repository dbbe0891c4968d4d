// SPDX-License-Identifier: GPL-2.0-or-later
#include "mntid.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* The system calls and their structures (uapi linux/mount.h of 6.8+; the C library has none). */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#ifndef SYS_listmount
#define SYS_listmount 458
#endif
#define LSMT_ROOT UINT64_MAX
#define STATMOUNT_MNT_BASIC 0x2U
#define STATMOUNT_MNT_POINT 0x10U
#define STATMOUNT_FS_TYPE 0x20U
#define MNT_ID_REQ_SIZE_VER0 24
#define MNT_ID_REQ_SIZE_VER1 32 /* with mnt_ns_id: another namespace (6.11) */

struct mnt_id_req {
	uint32_t size;
	uint32_t spare;
	uint64_t mnt_id;
	uint64_t param;
	uint64_t mnt_ns_id;
};

/* The fixed part of struct statmount, as far as the fields read here; strings follow at str. */
struct statmount_head {
	uint32_t size;
	uint32_t spare1;
	uint64_t mask;
	uint32_t sb_dev_major;
	uint32_t sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags;
	uint32_t fs_type;          /* offset of the string in str */
	uint64_t mnt_id;           /* unique */
	uint64_t mnt_parent_id;
	uint32_t mnt_id_old;       /* the id of mountinfo */
	uint32_t mnt_parent_id_old;
	uint64_t mnt_attr;
	uint64_t mnt_propagation;
	uint64_t mnt_peer_group;
	uint64_t mnt_master;
	uint64_t propagate_from;
	uint32_t mnt_root;
	uint32_t mnt_point;        /* offset of the string in str */
	uint64_t mnt_ns_id;
	uint64_t spare2[49];
};
_Static_assert(sizeof(struct statmount_head) == 512, "struct statmount's fixed part");

/* Mounts looked at per table: listmount() pages, statmount() one each. */
#define MNTUNIQ_MAX 4096
#define LIST_PAGE 256

/* Set once listmount() said ENOSYS: a kernel before 6.8. */
static bool no_listmount;

static void req_init(struct mnt_id_req *r, uint64_t mnt_id, uint64_t param, uint64_t ns_id)
{
	memset(r, 0, sizeof(*r));
	r->size = ns_id ? MNT_ID_REQ_SIZE_VER1 : MNT_ID_REQ_SIZE_VER0;
	r->mnt_id = mnt_id;
	r->param = param;
	r->mnt_ns_id = ns_id;
}

/* Appends the ids listmount() gives under parent (every page) to *ids, less those there. */
static int list_under(uint64_t parent, uint64_t ns_id, uint64_t **ids, size_t *n, size_t *cap)
{
	uint64_t page[LIST_PAGE], last = 0;
	struct mnt_id_req req;
	long got;

	do {
		req_init(&req, parent, last, ns_id);
		got = syscall(SYS_listmount, &req, page, (size_t)LIST_PAGE, 0UL);
		if (got < 0)
			return -errno;
		for (long i = 0; i < got; i++) {
			size_t k;

			for (k = 0; k < *n && (*ids)[k] != page[i]; k++)
				;
			if (k < *n)
				continue;
			if (*n == MNTUNIQ_MAX)
				return -EOVERFLOW;
			if (*n == *cap) {
				size_t ncap = *cap ? *cap * 2 : 64;
				uint64_t *p = reallocarray(*ids, ncap, sizeof(*p));

				if (!p)
					return -ENOMEM;
				*ids = p;
				*cap = ncap;
			}
			(*ids)[(*n)++] = page[i];
		}
		if (got)
			last = page[got - 1];
	} while (got == LIST_PAGE);
	return 0;
}

/* Type "fuse" agrees with mountinfo's "fuse.SUBTYPE": the file system's own name is the first. */
static bool fstype_agrees(const char *table, const char *fs)
{
	size_t len = strlen(fs);

	return strncmp(table, fs, len) == 0 && (table[len] == '\0' || table[len] == '.');
}

bool ioacct_mntid_note_agrees(const struct ioacct_mntid_note *note, const char *fstype,
			      const char *path)
{
	if (!fstype_agrees(fstype, note->fstype))
		return false;
	/* A mount point too long for the note has its last components there, or its first. */
	return note->complete ? strcmp(path, note->path) == 0 : strstr(path, note->path) != NULL;
}

const struct ioacct_mount *ioacct_mntid_match(const struct ioacct_mount *m, const uint64_t *since,
					      size_t n, uint32_t ns, uint64_t key,
					      const struct ioacct_mntid_note *note, uint64_t bound_ns)
{
	for (size_t i = 0; key >= IOACCT_MNT_UNIQUE_MIN && i < n; i++)
		if (m[i].mnt_id == key)
			return &m[i];
	if (note) {
		if (note->mntns != ns)
			return NULL;
		for (size_t i = 0; i < n; i++)
			if (m[i].mnt_id_old == note->mnt_id_old &&
			    (m[i].mnt_id == key || m[i].mnt_id == m[i].mnt_id_old) &&
			    ioacct_mntid_note_agrees(note, m[i].fstype, m[i].path))
				return &m[i];
		return NULL;
	}
	for (size_t i = 0; key < IOACCT_MNT_UNIQUE_MIN && since && i < n; i++)
		if (m[i].mnt_id == key && since[i] <= bound_ns)
			return &m[i];
	return NULL;
}

/* The entry of m that mount id (statmount'ed into sm, strings in buf) is, or NULL. */
static struct ioacct_mount *entry_of(struct ioacct_mount *m, size_t n,
				     const struct statmount_head *sm, const char *str, size_t len)
{
	const char *point, *fstype;

	if ((sm->mask & (STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT | STATMOUNT_FS_TYPE)) !=
	    (STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT | STATMOUNT_FS_TYPE) ||
	    sm->mnt_point >= len || sm->fs_type >= len || !memchr(str + sm->mnt_point, 0,
								   len - sm->mnt_point) ||
	    !memchr(str + sm->fs_type, 0, len - sm->fs_type))
		return NULL;
	point = str + sm->mnt_point;
	fstype = str + sm->fs_type;
	for (size_t i = 0; i < n; i++)
		if (m[i].mnt_id_old == sm->mnt_id_old && strcmp(m[i].path, point) == 0 &&
		    fstype_agrees(m[i].fstype, fstype))
			return &m[i];
	return NULL;
}

int ioacct_mntid_map(const struct ioacct_mntns_ref *ns, bool own, struct ioacct_mount *m,
		       size_t n, size_t *mapped)
{
	uint64_t ns_id = own ? 0 : ns->id, *ids = NULL;
	size_t nids = 0, cap = 0, done = 0, expanded = 0;
	char *buf = NULL;
	size_t buflen = sizeof(struct statmount_head) + 2 * PATH_MAX;
	int ret;

	*mapped = 0;
	if (no_listmount || ioacct_mnt_ids_legacy() || (!own && !ns_id))
		return -ENOSYS;
	buf = malloc(buflen);
	if (!buf)
		return -ENOMEM;
	ret = list_under(LSMT_ROOT, ns_id, &ids, &nids, &cap);
	if (ret == -ENOSYS)
		no_listmount = true;
	/* 6.8 to 6.10 list no namespace but the caller's: E2BIG, EINVAL for mnt_ns_id. */
	if (ret == -E2BIG || ret == -EINVAL)
		ret = -ENOSYS;
	/*
	 * Each listed mount looked at once; listmount() of one lists its
	 * children, which a kernel listing only the root's children (early
	 * 6.8) needs for the mounts below them: only while some entry is
	 * unmatched.
	 */
	for (size_t i = 0; !ret && i < nids && done < n; i++) {
		struct mnt_id_req req;
		struct statmount_head *sm = (struct statmount_head *)buf;
		struct ioacct_mount *e;

		req_init(&req, ids[i], STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT | STATMOUNT_FS_TYPE,
			 ns_id);
		if (syscall(SYS_statmount, &req, buf, buflen, 0UL) == 0 &&
		    (e = entry_of(m, n, sm, buf + sizeof(*sm), buflen - sizeof(*sm))) != NULL &&
		    e->mnt_id == e->mnt_id_old && sm->mnt_id >= IOACCT_MNT_UNIQUE_MIN) {
			e->mnt_id = sm->mnt_id;
			done++;
		}
		if (i + 1 == nids && done < n && expanded < nids) {
			size_t upto = nids;

			for (; expanded < upto && !ret; expanded++) {
				ret = list_under(ids[expanded], ns_id, &ids, &nids, &cap);
				if (ret == -ENOENT)
					ret = 0; /* unmounted meanwhile */
			}
		}
	}
	free(ids);
	free(buf);
	if (ret == -EOVERFLOW)
		ret = 0; /* what was looked at is mapped; the rest keep their ids */
	*mapped = done;
	return ret;
}
