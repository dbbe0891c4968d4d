/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where an operation lands: the mount of a file (an fd's, with the task's
 * last file remembered in task_ent) or of a path (the mountpoints LPM trie),
 * the inode-to-mount map of the page-cache view, the class of a failed
 * call's errno, and the mount notes the daemon reads (mntnotes).
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct.bpf.c, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

#include "ioacct_mntkey.bpf.h"

/*
 * The page-cache view's map from a watched task's files to their mounts: a
 * page-cache event names an inode, not the mount it was reached through.
 * An inode's address and a mount's 32-bit id are both given to others once
 * freed: the mount's vfsmount is kept beside its key, and inode_mnt() takes
 * the note only while that struct still is the mount (its key) and in the
 * faulting task's namespace, so a job never gets another job's gone mount.
 * Filled when a watched task resolves a file it had not used just before
 * (an open, the first read of another file), never on the per-call path.
 * Its LRU lists are per CPU: with the common one, every insertion into the
 * full map (a job creating files) took ~500 ns (the global list's lock and
 * shrinking it), lost in the noise of bpf_stats this way (iobench meta); the daemon
 * sizes it to at least 256 entries per CPU. A note the map already holds is
 * not written again.
 */
struct ino_mnt {
	__u64 mnt;    /* the mount's key */
	__u64 vfsmnt; /* its struct vfsmount when noted */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct ino_mnt);
} inomnt SEC(".maps");

static __always_inline void note_inode(__u64 inode, __u64 mnt, __u64 vfsmnt, __u32 type)
{
	struct ino_mnt *m, v = { .mnt = mnt, .vfsmnt = vfsmnt };

	if (type != S_IFREG)
		return;
	m = bpf_map_lookup_elem(&inomnt, &inode);
	if (!m || m->mnt != mnt || m->vfsmnt != vfsmnt)
		bpf_map_update_elem(&inomnt, &inode, &v, BPF_ANY);
}

/*
 * What an fd-based call needs of a file: its mount and its type. Two reads
 * (inode and vfsmount) tell whether the file is the one the task used last,
 * inline (a run of calls on one file makes no subprogram call); the mount id
 * and inode mode are read only when it is not, by file_resolve().
 */
struct file_info {
	__u64 mnt;
	__u32 type;
};

static __noinline int file_resolve(struct file *f, __u64 inode, __u64 vfsmnt, struct task_ent *t,
				   struct file_info *fi)
{
	if (!fi)
		return -1;
	fi->mnt = mount_key((struct vfsmount *)vfsmnt);
	fi->type = KREAD(struct inode, inode, i_mode) & S_IFMT;
	if (t) {
		t->c_inode = inode;
		t->c_vfsmnt = vfsmnt;
		t->c_mnt = fi->mnt;
		t->c_type = fi->type;
		/* Its per-file record's key and path (ioacct_files.bpf.h). */
		if (file_records) {
			__u64 sb = (__u64)KREAD(struct inode, inode, i_sb);

			t->c_ino = KREAD(struct inode, inode, i_ino);
			t->c_igen = KREAD(struct inode, inode, i_generation);
			t->c_dev = KREAD(struct super_block, sb, s_dev);
			t->c_dentry = (__u64)KREAD(struct file, f, f_path.dentry);
		}
		note_inode(inode, fi->mnt, vfsmnt, fi->type);
	}
	return 0;
}

/*
 * fresh: an open's new file. Its inode may sit where the task's last file's
 * was freed (the same address, a new file: issue 36), with another number,
 * generation or name: read only here, as every other call's file is one the
 * task has open, which keeps its inode alive.
 */
static __always_inline bool file_same_life(struct file *f, __u64 inode, const struct task_ent *t)
{
	return (__u64)KREAD(struct file, f, f_path.dentry) == t->c_dentry &&
	       KREAD(struct inode, inode, i_ino) == t->c_ino &&
	       KREAD(struct inode, inode, i_generation) == t->c_igen;
}

static __always_inline int file_info_at(struct file *f, struct task_ent *t, struct file_info *fi,
					bool fresh)
{
	__u64 inode, vfsmnt;

	if (!f)
		return -1;
	inode = (__u64)KREAD(struct file, f, f_inode);
	vfsmnt = (__u64)KREAD(struct file, f, f_path.mnt);
	if (!inode || !vfsmnt)
		return -1;
	if (t && t->c_inode == inode && t->c_vfsmnt == vfsmnt &&
	    (!fresh || !file_records || file_same_life(f, inode, t))) {
		fi->mnt = t->c_mnt;
		fi->type = t->c_type;
		return 0;
	}
	return file_resolve(f, inode, vfsmnt, t, fi);
}

static __always_inline int file_info(struct file *f, struct task_ent *t, struct file_info *fi)
{
	return file_info_at(f, t, fi, false);
}

/*
 * The mount of the path in key->path. Absolute paths: longest prefix among
 * the mount points of the task's mount namespace (the daemon fills them from
 * the job's mountinfo). Relative paths: the mount of the directory they
 * start from. An empty path (AT_EMPTY_PATH) is the directory fd itself.
 */
static __noinline __s64 key_mnt(struct task_struct *task, int dirfd, struct ioacct_mp_key *key)
{
	struct ioacct_mp_val *v;

	if (!key || !task)
		return 0;
	if (key->path[0] == '/') {
		key->prefixlen = 32 + 8 * IOACCT_MP_PATH_MAX;
		key->mntns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
		v = bpf_map_lookup_elem(&mountpoints, key);
		if (v)
			return v->mnt_id;
		return mount_key(BPF_CORE_READ(task, fs, root.mnt));
	}
	if (dirfd == AT_FDCWD)
		return mount_key(BPF_CORE_READ(task, fs, pwd.mnt));
	struct file_info fi = {};

	file_info(fd_file(task, dirfd), NULL, &fi);
	return fi.mnt;
}

/* The mount a system call's path argument, in user memory, points into (key_mnt()). */
static __noinline __s64 path_mnt(struct task_struct *task, int dirfd, const char *upath)
{
	struct ioacct_mp_key *key;
	__u32 zero = 0;
	long n;

	key = bpf_map_lookup_elem(&mpscratch, &zero);
	if (!key)
		return 0;
	/*
	 * A tracing program cannot fault pages in: a path in a page the program
	 * has not touched yet (fresh .rodata after exec) reads as an error here,
	 * and is readable at sys_exit, the kernel having copied it meanwhile.
	 */
	n = bpf_probe_read_user_str(key->path, sizeof(key->path), upath);
	if (n < 0)
		return -1;
	/*
	 * The empty path (glibc's fstat: newfstatat(fd, "", AT_EMPTY_PATH)) reads
	 * as 1, its NUL, where the kernel's strncpy_from_user_nofault() counts
	 * the NUL (the 6.18 host), but as 0 before (Debian's 6.1 and 6.12), with
	 * no NUL written. Taken for a failed read there, each such stat went to
	 * mount key 0, "mnt:0" of type unknown (issue 40).
	 */
	if (n == 0)
		key->path[0] = '\0';
	return key_mnt(task, dirfd, key);
}

/*
 * The same for a path the kernel has already copied in (an io_uring
 * request's struct filename): NULL is the empty path.
 */
static __noinline __s64 kpath_mnt(struct task_struct *task, int dirfd, const char *kpath)
{
	struct ioacct_mp_key *key;
	__u32 zero = 0;

	key = bpf_map_lookup_elem(&mpscratch, &zero);
	if (!key)
		return 0;
	key->path[0] = 0;
	if (kpath && bpf_probe_read_kernel_str(key->path, sizeof(key->path), kpath) <= 0)
		return -1;
	return key_mnt(task, dirfd, key);
}

/* path_mnt() now, or at sys_exit when the path cannot be read yet. */
static __always_inline __u64 path_mnt_enter(struct task_struct *task, struct task_ent *t, int dirfd,
					    const char *upath)
{
	__s64 m = path_mnt(task, dirfd, upath);

	if (m >= 0)
		return (__u64)m;
	t->upath = (__u64)upath;
	t->dirfd = dirfd;
	return 0;
}

static __always_inline void count_drop(__u32 slot, __u64 events, __u64 bytes)
{
	struct ioacct_drop_val *d = bpf_map_lookup_elem(&dropped, &slot);

	if (d) {
		d->events += events;
		d->bytes += bytes;
	}
}

/*
 * The class of a failed call's errno (enum ioacct_err_class). Only failed
 * calls get here, and it is arithmetic on the return value: no map lookup,
 * no helper call.
 */
static __always_inline __u32 err_class(long ret)
{
	switch (-ret) {
	case 2:   /* ENOENT */
	case 20:  /* ENOTDIR */
		return IOACCT_ERR_NOTFOUND;
	case 1:   /* EPERM */
	case 13:  /* EACCES */
	case 30:  /* EROFS */
		return IOACCT_ERR_ACCESS;
	case 27:  /* EFBIG */
	case 28:  /* ENOSPC */
	case 122: /* EDQUOT */
		return IOACCT_ERR_SPACE;
	case 5:   /* EIO */
	case 67:  /* ENOLINK */
	case 70:  /* ECOMM */
	case 74:  /* EBADMSG (EFSBADCRC) */
	case 110: /* ETIMEDOUT */
	case 116: /* ESTALE */
	case 117: /* EUCLEAN (EFSCORRUPTED) */
	case 121: /* EREMOTEIO */
		return IOACCT_ERR_IO;
	default:
		return IOACCT_ERR_OTHER;
	}
}

/*
 * One step of the walk from a mount point up to its namespace's root, as
 * d_path() goes: a dentry's name and its parent, up to the root of the
 * mount it is on, then that mount's mount point, up to the namespace's root
 * mount (its own parent). A bpf_loop callback (5.17+): the verifier sees
 * one step, not every path through 48 of them.
 */
static long note_walk(__u64 i, void *ctx)
{
	struct note_scratch *s = *(struct note_scratch **)ctx;
	struct dentry *d = (struct dentry *)s->d;
	struct mount *parent = (struct mount *)s->parent, *pp;

	if (!d || !parent)
		return 1;
	if (d == BPF_CORE_READ(parent, mnt.mnt_root)) {
		pp = BPF_CORE_READ(parent, mnt_parent);
		if (pp == parent) {
			s->complete = 1;
			return 1;
		}
		s->d = (__u64)BPF_CORE_READ(parent, mnt_mountpoint);
		s->parent = (__u64)pp;
		return 0;
	}
	/* Out of room, or a dentry that is its own parent but no mount's root: unlinked. */
	if (s->ncomp >= NOTE_MAX_COMPONENTS || BPF_CORE_READ(d, d_parent) == d)
		return 1;
	s->names[s->ncomp & (NOTE_MAX_COMPONENTS - 1)] = (__u64)BPF_CORE_READ(d, d_name.name);
	s->ncomp++;
	s->d = (__u64)BPF_CORE_READ(d, d_parent);
	return 0;
}

/* Writes component i of the path (0: the one nearest the root): "/" and its name. */
static long note_put(__u64 i, void *ctx)
{
	struct note_scratch *s = *(struct note_scratch **)ctx;
	__u32 k = s->ncomp - 1 - (__u32)i;
	long len;

	if (k >= NOTE_MAX_COMPONENTS || s->off >= IOACCT_NOTE_PATH_MAX) {
		s->complete = 0;
		return 1;
	}
	s->buf[s->off & (IOACCT_NOTE_PATH_MAX - 1)] = '/';
	s->off++;
	/* The compiler drops a mask it can prove idle; the verifier needs to see it. */
	asm volatile("%0 &= 15" : "+r"(k));
	len = bpf_probe_read_kernel_str(&s->buf[s->off & (IOACCT_NOTE_PATH_MAX - 1)],
					IOACCT_NOTE_PATH_MAX, (void *)s->names[k]);
	if (len > 1)
		s->off += len - 1;
	return 0;
}

/*
 * The path of dentry s->d on mount s->parent in its namespace, as d_path()
 * would give it from the namespace's root, into s->n.path. Bounded: a path
 * of more components or bytes than fit is not marked complete.
 */
static __always_inline void note_path_from(struct note_scratch *s)
{
	s->ncomp = s->off = s->complete = 0;
	/* bpf_loop's context is on the stack: a pointer to the scratch. */
	bpf_loop(NOTE_MAX_STEPS, note_walk, &s, 0);
	if (s->ncomp)
		bpf_loop(s->ncomp, note_put, &s, 0);
	else
		s->buf[s->off++ & (IOACCT_NOTE_PATH_MAX - 1)] = '/';
	if (s->off >= IOACCT_NOTE_PATH_MAX) {
		s->complete = 0;
		s->off = IOACCT_NOTE_PATH_MAX - 1;
	}
	s->buf[s->off & (2 * IOACCT_NOTE_PATH_MAX - 1)] = '\0';
	__builtin_memcpy(s->n.path, s->buf, IOACCT_NOTE_PATH_MAX);
	s->n.path[IOACCT_NOTE_PATH_MAX - 1] = '\0';
	s->n.flags = s->complete ? IOACCT_NOTE_PATH_COMPLETE : 0;
}

/* The same for mount m's mount point. */
static __always_inline void note_path(struct note_scratch *s, struct mount *m)
{
	s->d = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
	s->parent = (__u64)BPF_CORE_READ(m, mnt_parent);
	note_path_from(s);
}

/*
 * Notes the file-system type and mount point of a mount the current task
 * does I/O on, so that the daemon can name it if the task's mount namespace
 * is gone before the drain (a container step of a second), and tell a mount
 * table's entry of the mount from one of another mount given its 32-bit id
 * since. Called when a counter entry is created (once per slot, mount, bin
 * and operation) and when a task's accumulator starts on a mount it did not
 * note last (acc_note), never per call; the mount is the task's last file's,
 * when it is that one. 1 when noted (or already), 0 when not.
 */
__noinline int note_mount(const struct ioacct_stat_key *key)
{
	struct ioacct_mnt_note *old;
	struct note_scratch *s;
	struct ioacct_slot *sl;
	struct vfsmount *mnt;
	struct task_ent *t;
	__u32 zero = 0;
	bool uniq;

	if (!key)
		return 0;
	t = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
	if (!t || t->c_mnt != key->mnt_id || !t->c_vfsmnt)
		return 0;
	s = bpf_map_lookup_elem(&notescratch, &zero);
	if (!s)
		return 0;
	/*
	 * The slot's number through the scratch: 6.1's verifier takes no
	 * pointer into a global function's argument (PTR_TO_MEM) as a map key,
	 * and this frame has no stack to spare for a copy.
	 */
	s->nk.slot = key->slot;
	sl = bpf_map_lookup_elem(&slots, &s->nk.slot);
	if (!sl)
		return 0;
	/*
	 * Each value goes to the scratch as soon as it is read, the note's key
	 * too: this frame is the deepest of sys_exit's chain, which 6.1's
	 * verifier holds to 512 bytes in frames rounded up to 32 (see
	 * aio_reap_one()), and a value kept in a register across the reads
	 * below is spilled to the stack.
	 */
	s->n.vfsmnt = t->c_vfsmnt;
	s->n.slot_start = sl->start_ns;
	/*
	 * The note is the slot's own, under the mount's key: the daemon names a
	 * job's mount only from its own slot's notes, and forgets a slot's notes
	 * when the slot gets a new step (probes_maps.c). A mount_key() that is
	 * mnt_id_unique is that mount's alone: noted once per slot. The 32-bit
	 * id is given to the next mount made as soon as this one is freed, and
	 * the struct's address too (a container's tmpfs in the memory of an
	 * earlier container's bind mount): so its note is taken again, walk and
	 * all, at each new counter entry or accumulator (not per call), and
	 * first_ns is kept only while it is the same mount struct in the same job.
	 */
	uniq = mount_keys_unique();
	s->nk = (struct ioacct_mnt_note_key){ .mnt_id = key->mnt_id, .slot = key->slot };
	s->n.uniq = uniq ? key->mnt_id : 0;
	old = bpf_map_lookup_elem(&mntnotes, &s->nk);
	if (old && uniq)
		return 1;
	s->n.first_ns = bpf_ktime_get_ns();
	if (old && old->vfsmnt == s->n.vfsmnt && old->slot_start == s->n.slot_start)
		s->n.first_ns = old->first_ns;
	mnt = (struct vfsmount *)s->n.vfsmnt;
	s->n.mnt_id_old = BPF_CORE_READ(container_of(mnt, struct mount, mnt), mnt_id);
	s->n.mntns = BPF_CORE_READ(container_of(mnt, struct mount, mnt), mnt_ns, ns.inum);
	bpf_probe_read_kernel_str(s->n.fstype, sizeof(s->n.fstype), BPF_CORE_READ(mnt, mnt_sb, s_type, name));
	note_path(s, container_of(mnt, struct mount, mnt));
	return bpf_map_update_elem(&mntnotes, &s->nk, &s->n, BPF_ANY) == 0;
}
