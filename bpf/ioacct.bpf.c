// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacct's probes: per-cgroup, per-mount, per-operation I/O counters in
 * time bins computed here, in the kernel, from the job's start.
 *
 * Backend "tracepoint": tp_btf sys_enter/sys_exit. Both first look the
 * syscall up in a table (most syscalls stop there), then ask whether the
 * task's cgroup is watched: a per-CPU direct-mapped cache keyed by cgroup id
 * answers without a helper call or a hash lookup, and is invalidated by a
 * generation number the daemon bumps whenever the set of watched cgroups
 * changes. Only a watched task goes further: sys_enter resolves the mount the
 * operation targets and stashes {op, mount, slot, start time} in task-local
 * storage; sys_exit adds the result to the per-CPU stats map.
 *
 * The fentry and kprobe backends (kernel-portability work) feed the same
 * maps through the same account() function.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ioacct_abi.h"
#include "ioacct_ops.h"
#include "ioacct_bpf_common.h"

char LICENSE[] SEC("license") = "GPL";

/* How far up the cgroup tree a task's cgroup may be below a watched one. */
#define MAX_CGROUP_DEPTH 8

/* Set by the daemon before load. */
const volatile __u16 sysmap[IOACCT_NR_SYSCALLS] = {};
/* Subsystem id of the v1 hierarchy used for attribution: a constant to the verifier. */
const volatile __u32 v1_ssid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_state);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ioacct_watch_key);
	__type(value, struct ioacct_watch_val);
} watch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ioacct_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_stat_key);
	__type(value, struct ioacct_stat_val);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ioacct_drop_val);
} dropped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_mp_key);
	__type(value, struct ioacct_mp_val);
} mountpoints SEC(".maps");

/*
 * A watched task's pending operation, between sys_enter and sys_exit, and
 * the last file it did I/O on (so a loop of writes to one file resolves its
 * mount once): a file is the same when its inode and vfsmount are.
 */
struct task_ent {
	__u64 ts;    /* sys_enter time */
	__u32 op;    /* pending op + 1, 0 when none */
	__u32 mnt;   /* mount the pending op targets */
	__u32 pslot; /* slot of the pending op */
	__u16 kind;  /* IOACCT_SK_* of the pending op */
	__u16 epoch; /* state epoch at sys_enter: the programs were not detached since */
	__u64 upath; /* path argument not readable at sys_enter: resolved at sys_exit */
	union {
		__s64 dirfd; /* what upath is relative to */
		struct {
			__u32 out_mnt; /* FD_PAIR kinds: the destination's mount (mnt: the source's) */
			__u32 ends;    /* PAIR_SRC | PAIR_DST: which ends are regular files */
		} pair;
		__u64 aio_uptr;        /* AIO kinds: io_submit's iocb pointers, io_getevents' events */
	};
	__u64 c_inode;
	__u64 c_vfsmnt;
	__u32 c_mnt;
	__u32 c_type;
	/*
	 * The page-cache view: the byte range the pending read asked for, or
	 * (no call pending) the page the last fault on a file mapping wanted.
	 * A page brought in outside it was read ahead.
	 */
	__u64 rq_lo;
	__u64 rq_hi;
	__u32 advice; /* the pending fadvise or madvise call's IOACCT_HINT_ */
	__u32 aio_n;  /* the pending io_submit's iocbs looked at (recorded or not a file's) */
	/*
	 * The accumulator (issue 18): the counters of a run of successful
	 * reads and writes with one (slot, mount, op, bin), moved into stats
	 * as one update when the key changes, when they are ACC_MAX_AGE_NS
	 * old, at the task's exit, and before every read of stats by the
	 * daemon (acc_iter). acc_own says who may touch them: 0 nobody, 1 the
	 * task, 2 the daemon's iterator; each takes it with a cmpxchg and
	 * never waits for the other.
	 */
	__u64 acc_own;
	__u64 acc_pass;  /* the daemon's read that last flushed them (acc_iter) */
	__u64 acc_start; /* start_ns of the slot they were counted in: a reused slot is another job */
	__u64 acc_t0;    /* end of their first call */
	struct ioacct_stat_key acc_key;
	struct acc_val {
		__u64 calls;
		__u64 ns;
		__u64 bytes;
		__u64 size[IOACCT_NR_SIZE_BINS];
	} acc;
};

#define ACC_MAX_AGE_NS 50000000ULL
#define ACC_TASK 1
#define ACC_ITER 2

#define PAIR_SRC 1
#define PAIR_DST 2

/* One line of the per-CPU watched-cgroup cache. */
struct cg_cache_ent {
	__u64 cgroup_id;
	__u64 gen;
	__u32 hier;
	__u32 slot;
};

#define CG_CACHE_SIZE 256

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CG_CACHE_SIZE);
	__type(key, __u32);
	__type(value, struct cg_cache_ent);
} cgcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ent);
} tasks SEC(".maps");

/* Scratch space for a path lookup key: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_mp_key);
} mpscratch SEC(".maps");

/* Mounts noted for the daemon (ioacct_abi.h); names, not counts, so an LRU is fine. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ioacct_mnt_note);
} mntnotes SEC(".maps");

/*
 * Where note_mount() builds a note: the walk's state, a mount point's
 * components (their names, deepest first) and the path written from them.
 * Off the stack, which the call chain above note_mount() already uses.
 */
#define NOTE_MAX_COMPONENTS 16 /* note_put() masks with 15 */
#define NOTE_MAX_STEPS 48      /* components and mount crossings, together */
struct note_scratch {
	struct ioacct_mnt_note n;
	__u64 d, parent; /* the walk: a dentry, and the mount it is on */
	__u32 ncomp, off;
	__u32 complete, pad;
	__u64 names[NOTE_MAX_COMPONENTS];
	char buf[2 * IOACCT_NOTE_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct note_scratch);
} notescratch SEC(".maps");

static const struct ioacct_stat_val zero_val;

/*
 * A task with no task storage of any program (nearly every task a job does
 * not own) has nothing in tasks: one load says so, where the lookup is a
 * helper call (30 ns of an unwatched task's sys_exit on the development host).
 */
static __always_inline bool no_storage(struct task_struct *task)
{
	return bpf_core_field_exists(task->bpf_storage) && !task->bpf_storage;
}

static __always_inline struct ioacct_state *get_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&state, &zero);
}

static __always_inline __u32 size_bin(__u64 n)
{
	if (n <= IOACCT_SIZE_LIMIT_0)
		return 0;
	if (n <= IOACCT_SIZE_LIMIT_1)
		return 1;
	if (n <= IOACCT_SIZE_LIMIT_2)
		return 2;
	if (n <= IOACCT_SIZE_LIMIT_3)
		return 3;
	if (n <= IOACCT_SIZE_LIMIT_4)
		return 4;
	if (n <= IOACCT_SIZE_LIMIT_5)
		return 5;
	if (n <= IOACCT_SIZE_LIMIT_6)
		return 6;
	if (n <= IOACCT_SIZE_LIMIT_7)
		return 7;
	if (n <= IOACCT_SIZE_LIMIT_8)
		return 8;
	return 9;
}

static __always_inline __u32 cgroup_watched(struct cgroup *cg, __u32 hier)
{
	struct ioacct_watch_key key = { .hier = hier };
	struct ioacct_watch_val *v;

	for (int i = 0; i < MAX_CGROUP_DEPTH && cg; i++) {
		key.cgroup_id = BPF_CORE_READ(cg, kn, id);
		v = bpf_map_lookup_elem(&watch, &key);
		if (v)
			return v->slot;
		/* cgroup.self is the css of the cgroup itself; its parent is the parent's self. */
		struct cgroup_subsys_state *parent = BPF_CORE_READ(cg, self.parent);

		if (!parent)
			break;
		cg = container_of(parent, struct cgroup, self);
	}
	return IOACCT_SLOT_NONE;
}

/* The slow path: is this cgroup, or one of its ancestors, watched? Cached per CPU. */
static __noinline __u32 cg_resolve(struct cgroup *cg, __u64 id, __u32 hier, __u64 gen)
{
	__u32 idx = (__u32)(id ^ (id >> 8)) & (CG_CACHE_SIZE - 1);
	struct cg_cache_ent *e = bpf_map_lookup_elem(&cgcache, &idx);
	__u32 slot = cgroup_watched(cg, hier);

	if (e) {
		e->cgroup_id = id;
		e->hier = hier;
		e->slot = slot;
		e->gen = gen;
	}
	return slot;
}

static __always_inline __u32 cg_lookup(__u64 id, __u32 hier, __u64 gen, bool *hit)
{
	__u32 idx = (__u32)(id ^ (id >> 8)) & (CG_CACHE_SIZE - 1);
	struct cg_cache_ent *e = bpf_map_lookup_elem(&cgcache, &idx);

	*hit = e && e->cgroup_id == id && e->gen == gen && e->hier == hier;
	return *hit ? e->slot : IOACCT_SLOT_NONE;
}

/*
 * Which watched cgroup, if any, is the current task in? The v2 cgroup is
 * checked first, then the v1 hierarchy's; each costs one cached lookup when
 * the answer is known.
 */
static __always_inline __u32 current_slot(struct task_struct *task, const struct ioacct_state *st)
{
	__u64 gen = st->gen;
	__u32 slot = IOACCT_SLOT_NONE;
	bool hit;

	if (st->calib_tgid && task->tgid == (int)st->calib_tgid)
		return IOACCT_SLOT_CALIB;
	if (st->nwatch_v2) {
		/* bpf_get_current_cgroup_id() without the helper call: four loads. */
		__u64 id = task->cgroups->dfl_cgrp->kn->id;

		slot = cg_lookup(id, IOACCT_HIER_V2, gen, &hit);
		if (!hit)
			slot = cg_resolve(task->cgroups->dfl_cgrp, id, IOACCT_HIER_V2, gen);
		if (slot != IOACCT_SLOT_NONE)
			return slot;
	}
	if (st->nwatch_v1) {
		struct cgroup *cg = task_v1_cgroup(task, v1_ssid);
		__u64 id = cg ? cg->kn->id : 0;

		if (!id)
			return IOACCT_SLOT_NONE;
		slot = cg_lookup(id, IOACCT_HIER_V1, gen, &hit);
		if (!hit)
			slot = cg_resolve(cg, id, IOACCT_HIER_V1, gen);
	}
	return slot;
}

/*
 * The page-cache view's map from a watched task's files to their mounts: a
 * page-cache event names an inode, not the mount it was reached through.
 * Filled when a watched task resolves a file it had not used just before
 * (an open, the first read of another file), never on the per-call path.
 * Its LRU lists are per CPU: with the common one, every insertion into the
 * full map (a job creating files) took ~500 ns (the global list's lock and
 * shrinking it), lost in the noise of bpf_stats this way (iobench meta); the daemon
 * sizes it to at least 256 entries per CPU. A note the map already holds is
 * not written again.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u32);
} inomnt SEC(".maps");

static __always_inline void note_inode(__u64 inode, __u32 mnt, __u32 type)
{
	__u32 *m;

	if (type != S_IFREG)
		return;
	m = bpf_map_lookup_elem(&inomnt, &inode);
	if (!m || *m != mnt)
		bpf_map_update_elem(&inomnt, &inode, &mnt, BPF_ANY);
}

/*
 * What an fd-based call needs of a file: its mount and its type. Two reads
 * (inode and vfsmount) tell whether the file is the one the task used last,
 * inline (a run of calls on one file makes no subprogram call); the mount id
 * and inode mode are read only when it is not, by file_resolve().
 */
struct file_info {
	__u32 mnt;
	__u32 type;
};

static __noinline int file_resolve(__u64 inode, __u64 vfsmnt, struct task_ent *t, struct file_info *fi)
{
	if (!fi)
		return -1;
	fi->mnt = vfsmount_id((struct vfsmount *)vfsmnt);
	fi->type = KREAD(struct inode, inode, i_mode) & S_IFMT;
	if (t) {
		t->c_inode = inode;
		t->c_vfsmnt = vfsmnt;
		t->c_mnt = fi->mnt;
		t->c_type = fi->type;
		note_inode(inode, fi->mnt, fi->type);
	}
	return 0;
}

static __always_inline int file_info(struct file *f, struct task_ent *t, struct file_info *fi)
{
	__u64 inode, vfsmnt;

	if (!f)
		return -1;
	inode = (__u64)KREAD(struct file, f, f_inode);
	vfsmnt = (__u64)KREAD(struct file, f, f_path.mnt);
	if (!inode || !vfsmnt)
		return -1;
	if (t && t->c_inode == inode && t->c_vfsmnt == vfsmnt) {
		fi->mnt = t->c_mnt;
		fi->type = t->c_type;
		return 0;
	}
	return file_resolve(inode, vfsmnt, t, fi);
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
		return vfsmount_id(BPF_CORE_READ(task, fs, root.mnt));
	}
	if (dirfd == AT_FDCWD)
		return vfsmount_id(BPF_CORE_READ(task, fs, pwd.mnt));
	struct file_info fi = {};

	file_info(fd_file(task, dirfd), NULL, &fi);
	return fi.mnt;
}

/* The mount a system call's path argument, in user memory, points into (key_mnt()). */
static __noinline __s64 path_mnt(struct task_struct *task, int dirfd, const char *upath)
{
	struct ioacct_mp_key *key;
	__u32 zero = 0;

	key = bpf_map_lookup_elem(&mpscratch, &zero);
	if (!key)
		return 0;
	/*
	 * A tracing program cannot fault pages in: a path in a page the program
	 * has not touched yet (fresh .rodata after exec) reads as an error here,
	 * and is readable at sys_exit, the kernel having copied it meanwhile.
	 */
	if (bpf_probe_read_user_str(key->path, sizeof(key->path), upath) <= 0)
		return -1;
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
static __always_inline __u32 path_mnt_enter(struct task_struct *task, struct task_ent *t, int dirfd,
					    const char *upath)
{
	__s64 m = path_mnt(task, dirfd, upath);

	if (m >= 0)
		return (__u32)m;
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
 * The path of mount m's mount point in its namespace, as d_path() would
 * give it from the namespace's root, into s->n.path. Bounded: a path of
 * more components or bytes than fit is not marked complete.
 */
static __always_inline void note_path(struct note_scratch *s, struct mount *m)
{
	s->d = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
	s->parent = (__u64)BPF_CORE_READ(m, mnt_parent);
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

/*
 * Notes the file-system type and mount point of a mount the current task
 * does I/O on, so that the daemon can name it if the task's mount namespace
 * is gone before the drain (a container step of a second). Called only when
 * a counter entry is created (once per slot, mount, bin and operation),
 * never on the per-call path; the mount is the task's last file's, when it
 * is that one.
 */
/* mnt_id_unique (6.8+), matched by name on the running kernel. */
struct mount___ioacct {
	__u64 mnt_id_unique;
} __attribute__((preserve_access_index));

static __noinline void note_mount(__u32 id)
{
	struct ioacct_mnt_note *old;
	__u64 uniq = 0;
	struct note_scratch *s;
	struct vfsmount *mnt;
	struct task_ent *t;
	struct mount *m;
	__u32 zero = 0;

	t = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
	if (!t || t->c_mnt != id || !t->c_vfsmnt)
		return;
	mnt = (struct vfsmount *)t->c_vfsmnt;
	m = container_of(mnt, struct mount, mnt);
	/*
	 * A freed mount's id and its struct's address are both reused (a
	 * container's tmpfs in the memory of an earlier container's bind
	 * mount): only the 64-bit mnt_id_unique tells the mount noted before.
	 * Without it (before 6.8) the note is taken again, walk and all, at
	 * each new counter entry: not per call.
	 */
	if (bpf_core_field_exists(((struct mount___ioacct *)m)->mnt_id_unique))
		uniq = BPF_CORE_READ((struct mount___ioacct *)m, mnt_id_unique);
	old = bpf_map_lookup_elem(&mntnotes, &id);
	if (old && uniq && old->uniq == uniq && old->vfsmnt == t->c_vfsmnt)
		return;
	s = bpf_map_lookup_elem(&notescratch, &zero);
	if (!s)
		return;
	s->n.vfsmnt = t->c_vfsmnt;
	s->n.uniq = uniq;
	s->n.mntns = BPF_CORE_READ(m, mnt_ns, ns.inum);
	bpf_probe_read_kernel_str(s->n.fstype, sizeof(s->n.fstype), BPF_CORE_READ(mnt, mnt_sb, s_type, name));
	note_path(s, m);
	bpf_map_update_elem(&mntnotes, &id, &s->n, BPF_ANY);
}

/*
 * The counters of key, created when missing; NULL when the map is full,
 * and then what was to be added (events calls, bytes) is counted as dropped.
 */
static __noinline struct ioacct_stat_val *stat_entry(const struct ioacct_stat_key *key, __u64 events,
						     __u64 bytes)
{
	__u32 slot = key->slot;
	struct ioacct_stat_val *v;

	v = bpf_map_lookup_elem(&stats, key);
	if (!v) {
		/* EEXIST: another CPU created it first, which is fine. */
		long err = bpf_map_update_elem(&stats, key, &zero_val, BPF_NOEXIST);

		if (err && err != -17) {
			count_drop(slot, events, bytes);
			return NULL;
		}
		if (!err)
			note_mount(key->mnt_id);
		v = bpf_map_lookup_elem(&stats, key);
		if (!v)
			count_drop(slot, events, bytes);
	}
	return v;
}

/*
 * The counters of (slot, mount, op) in the bin of t_end, created when
 * missing; NULL (and counted as dropped) when the slot is gone or the map
 * is full. key->bin is set here.
 */
static __noinline struct ioacct_stat_val *stat_get(struct ioacct_stat_key *key, __u64 t_end,
						   __u64 bytes)
{
	__u32 slot = key->slot;
	struct ioacct_slot *s;

	s = bpf_map_lookup_elem(&slots, &slot);
	if (!s || !s->active)
		return NULL;
	if (t_end > s->start_ns && s->width_ns)
		key->bin = (t_end - s->start_ns) / s->width_ns;
	return stat_entry(key, 1, bytes);
}

/*
 * Adds one finished operation to its (slot, mount, bin, op) counters; `where`
 * carries slot, mount and op, the bin is computed here.
 */
static __noinline void account(const struct ioacct_stat_key *where, __u64 t_end, __u64 dur, long ret)
{
	struct ioacct_stat_key key = *where;
	__u32 op = key.op;
	struct ioacct_stat_val *v;
	__u64 bytes = 0;

	if (ret > 0 && (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE))
		bytes = ret;
	v = stat_get(&key, t_end, bytes);
	if (!v)
		return;
	v->calls++;
	v->ns += dur;
	if (ret < 0) {
		__u32 c = err_class(ret);

		if (c < IOACCT_NR_ERR_CLASSES)
			v->errors[c]++;
		return;
	}
	if (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE) {
		__u32 b = size_bin(ret);

		v->bytes += bytes;
		if (b < IOACCT_NR_SIZE_BINS)
			v->size[b]++;
	} else if (op == IOACCT_OP_FADVISE || op == IOACCT_OP_MADVISE) {
		/* ret is the advice class here (on_exit) */
		if (ret < IOACCT_NR_HINTS)
			v->size[ret]++;
	}
}

/*
 * Moves t's accumulated counters into stats and empties them; the caller
 * owns them (acc_own). Only into the job they were counted for: the slot
 * must have the start it had then and, unless the daemon's iterator flushes
 * (a finishing step clears its slot before reading it), still be active.
 */
static __noinline void acc_flush(struct task_ent *t, bool iter)
{
	struct ioacct_stat_key key = t->acc_key;
	struct ioacct_stat_val *v;
	struct ioacct_slot *s;
	__u32 slot = key.slot;

	if (!t->acc.calls)
		return;
	s = bpf_map_lookup_elem(&slots, &slot);
	if (s && s->start_ns == t->acc_start && (iter || s->active)) {
		v = stat_entry(&key, t->acc.calls, t->acc.bytes);
		if (v) {
			v->calls += t->acc.calls;
			v->ns += t->acc.ns;
			v->bytes += t->acc.bytes;
			for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
				v->size[i] += t->acc.size[i];
		}
	}
	__builtin_memset(&t->acc, 0, sizeof(t->acc));
}

/*
 * A successful read or write, added to the task's accumulator. Returns 1
 * when it must be counted the ordinary way instead (account()): the
 * daemon's iterator holds the accumulator at this moment.
 */
static __always_inline int acc_add(struct task_ent *t, const struct ioacct_stat_key *where, __u64 t_end,
			      __u64 dur, long ret)
{
	struct ioacct_stat_key key = *where;
	__u32 slot = key.slot, b;
	struct ioacct_slot *s;

	s = bpf_map_lookup_elem(&slots, &slot);
	if (!s || !s->active)
		return 0;
	if (t_end > s->start_ns && s->width_ns)
		key.bin = (t_end - s->start_ns) / s->width_ns;
	b = size_bin(ret);
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_TASK) != 0)
		return 1;
	if (t->acc.calls &&
	    (key.slot != t->acc_key.slot || key.mnt_id != t->acc_key.mnt_id || key.op != t->acc_key.op ||
	     key.bin != t->acc_key.bin || s->start_ns != t->acc_start || t_end - t->acc_t0 > ACC_MAX_AGE_NS))
		acc_flush(t, false);
	if (!t->acc.calls) {
		t->acc_key = key;
		t->acc_start = s->start_ns;
		t->acc_t0 = t_end;
	}
	t->acc.calls++;
	t->acc.ns += dur;
	t->acc.bytes += ret;
	if (b < IOACCT_NR_SIZE_BINS)
		t->acc.size[b]++;
	/* An atomic exchange: whoever takes it next sees the flush above complete. */
	__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}

/* Set by the daemon before each run of acc_iter (a time: unique across daemons). */
volatile __u64 acc_pass;
/* Tasks acc_iter found holding their accumulator: the daemon runs it again. */
__u64 acc_busy;

/*
 * Run by the daemon before it reads stats: every task's accumulator into
 * stats, so that a bin it drains holds every call that ended in it, and a
 * finishing step gets the calls its living tasks hold. A task that holds
 * its accumulator at that instant is counted busy and visited again (the
 * ones flushed in this read, marked with acc_pass, are skipped then).
 */
SEC("iter/task")
int ioacct_acc_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u64 pass = acc_pass;
	struct task_ent *t;

	if (!task || no_storage(task))
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!t || t->acc_pass == pass)
		return 0;
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_ITER) != 0) {
		__sync_fetch_and_add(&acc_busy, 1);
		return 0;
	}
	acc_flush(t, true);
	t->acc_pass = pass;
	__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}

/*
 * A task's exit flushes its accumulator; a task that never was watched has
 * no storage and returns at once. It runs before the task leaves the task
 * list, so acc_iter either finds it holding the accumulator or finds it
 * flushed; when acc_iter holds it, acc_iter flushes it.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ioacct_acc_exit)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_ent *t;

	if (no_storage(task))
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!t || !t->acc.calls)
		return 0;
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_TASK) != 0)
		return 0;
	acc_flush(t, false);
	__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}

/*
 * ---- The page-cache and mmap views (issue 14) ----------------------------
 *
 * Kernel events that name a page of a file, not a call: a page brought into
 * the page cache (a miss), a page fault on a file mapping, a readahead
 * decision. They fire for every task, so each program starts with the same
 * early exit as a syscall's (nothing watched, or the task's cgroup is not:
 * one per-CPU cache lookup); only a watched task's event goes further.
 * Each is counted as an op of kind VIEW (ioacct_ops.h).
 */

/* Set by the daemon before load: log2 of the page size. */
const volatile __u32 page_shift = 12;

/* The byte range a read asks for, for the page-cache view (see task_ent). */
static __always_inline void read_range(struct task_ent *t, struct file *f, long count, long off,
				       __u32 flags)
{
	__s64 lo = flags & IOACCT_SKF_POS ? off : -1;

	if (lo < 0)
		lo = KREAD(struct file, f, f_pos);
	t->rq_lo = lo;
	t->rq_hi = (flags & IOACCT_SKF_VEC) || count < 0 ? ~0ULL : (__u64)lo + count;
}

/* The IOACCT_HINT_ class of a posix_fadvise or madvise advice. */
static __always_inline __u32 advice_class(long advice, bool madv)
{
	if (advice >= 0 && advice <= 4)
		return advice; /* NORMAL, RANDOM, SEQUENTIAL, WILLNEED, DONTNEED: the same in both */
	if (!madv)
		return advice == 5 ? IOACCT_HINT_NOREUSE : IOACCT_HINT_OTHER;
	switch (advice) {
	case 8:  /* MADV_FREE */
	case 9:  /* MADV_REMOVE */
		return IOACCT_HINT_FREE;
	case 20: /* MADV_COLD */
	case 21: /* MADV_PAGEOUT */
		return IOACCT_HINT_COLD;
	case 14: /* MADV_HUGEPAGE */
	case 15: /* MADV_NOHUGEPAGE */
	case 25: /* MADV_COLLAPSE */
		return IOACCT_HINT_HUGEPAGE;
	default:
		return IOACCT_HINT_OTHER;
	}
}

/*
 * ---- Linux AIO (issue 14) -------------------------------------------------
 *
 * io_submit and io_getevents are no reads or writes themselves: the iocbs
 * they carry are. At io_submit's start (a watched task) each iocb's opcode
 * and fd are read from the user's memory, which the application has just
 * written, and its file's mount, its op and the job's slot are kept by
 * (mm, iocb address) in aio_reqs: at the start, because a buffered iocb
 * completes inside io_submit and another thread may reap it before the
 * submitter's sys_exit. At io_submit's end the iocbs the kernel did not take
 * are forgotten (a failure of the first one is counted as a failed call of
 * its kind). When io_getevents or io_pgetevents returns events, each one's
 * iocb (io_event.obj) is looked up and counted with the event's result, for
 * the submitter's job, once; the time is from submission to reaping.
 * The loops run in bpf_loop (5.17+): without it, AIO is not counted.
 */
#define IOCB_CMD_PREAD 0
#define IOCB_CMD_PWRITE 1
#define IOCB_CMD_FSYNC 2
#define IOCB_CMD_FDSYNC 3
#define IOCB_CMD_PREADV 7
#define IOCB_CMD_PWRITEV 8

/* iocbs of one io_submit, events of one io_getevents looked at; the rest count as dropped. */
#define AIO_MAX_BATCH 1024

struct aio_key {
	__u64 mm;  /* the submitter's address space: iocb addresses are its */
	__u64 obj; /* the iocb's user address, io_event.obj */
};

struct aio_req {
	__u32 slot;
	__u32 mnt;
	__u32 op;  /* IOACCT_OP_READ, _WRITE or _FSYNC */
	__u32 pad;
	__u64 t0;  /* io_submit's start */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct aio_key);
	__type(value, struct aio_req);
} aio_reqs SEC(".maps");

/* The uapi's struct iocb from aio_lio_opcode on (offset 16), and struct io_event: a stable ABI. */
#define AIO_IOCB_OPCODE_OFF 16
struct aio_iocb_op {
	__u16 opcode;
	__s16 reqprio;
	__u32 fildes;
	__u64 buf;
	__u64 nbytes; /* PREADV, PWRITEV: the number of iovecs */
	__s64 offset;
};

/*
 * The page-cache view of an io_submit: the byte ranges its read and its
 * write iocbs ask of each file, so that a folio added meanwhile is a read's
 * miss (inside the reads' range) or read ahead (outside both), and a folio
 * a write creates (inside the writes' range only) no miss, as for write(2).
 * Keyed by task and inode; `gen` is the io_submit's start time (the task's
 * pending call's ts), so a range of an earlier call is never taken for this
 * one's.
 */
struct aio_range_key {
	__u64 task;
	__u64 inode;
};

struct aio_range {
	__u64 gen;
	__u64 lo, hi;   /* what its reads ask for; lo == hi: none */
	__u64 wlo, whi; /* what its writes write; wlo == whi: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct aio_range_key);
	__type(value, struct aio_range);
} aio_ranges SEC(".maps");

struct aio_event {
	__u64 data;
	__u64 obj;
	__s64 res;
	__s64 res2;
};

/* What a bpf_loop callback over an io_submit's iocbs or an io_getevents' events works on. */
struct aio_walk {
	__u64 uptr;  /* the user's array of iocb pointers, or of events */
	__u64 mm;
	__u64 now;
	__u32 slot;
	__u32 first; /* index of the first element */
	__u32 done;  /* elements read */
	__u32 lost;  /* events that could not be read */
	__s32 err;   /* io_submit's error: its first iocb's */
	__u32 pad;
};

static __always_inline void count_drops(__u32 slot, __u32 n)
{
	struct ioacct_drop_val *d = bpf_map_lookup_elem(&dropped, &slot);

	if (d)
		d->events += n;
}

/* The op an iocb's opcode is counted as, -1 for none (IOCB_CMD_POLL, IOCB_CMD_NOOP). */
static __always_inline int aio_op(__u16 opcode)
{
	switch (opcode) {
	case IOCB_CMD_PREAD:
	case IOCB_CMD_PREADV:
		return IOACCT_OP_READ;
	case IOCB_CMD_PWRITE:
	case IOCB_CMD_PWRITEV:
		return IOACCT_OP_WRITE;
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		return IOACCT_OP_FSYNC;
	default:
		return -1;
	}
}

/* Widens the range the current io_submit (gen) reads or writes of f's inode by an iocb's. */
static __noinline void aio_range_add(struct task_struct *task, struct file *f,
				     const struct aio_iocb_op *io, __u64 gen, bool write)
{
	struct aio_range_key k = { .task = (__u64)task };
	struct aio_range r = { .gen = gen }, *old;
	__u64 lo, hi, *rlo, *rhi;

	if (!f || !io)
		return;
	k.inode = (__u64)BPF_CORE_READ(f, f_inode);
	lo = io->offset < 0 ? 0 : io->offset;
	/* A vector's length is not read: every byte from its offset on. */
	hi = io->opcode == IOCB_CMD_PREADV || io->opcode == IOCB_CMD_PWRITEV ? ~0ULL : lo + io->nbytes;
	old = bpf_map_lookup_elem(&aio_ranges, &k);
	if (old && old->gen == gen)
		r = *old;
	rlo = write ? &r.wlo : &r.lo;
	rhi = write ? &r.whi : &r.hi;
	if (*rlo == *rhi) {
		*rlo = lo;
		*rhi = hi;
	} else {
		*rlo = *rlo < lo ? *rlo : lo;
		*rhi = *rhi > hi ? *rhi : hi;
	}
	bpf_map_update_elem(&aio_ranges, &k, &r, BPF_ANY);
}

/* io_submit's start: records iocb i; stops at the first that cannot be read. */
static long aio_record_one(__u64 i, void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct aio_walk *w = ctx;
	struct aio_req r = { .slot = w->slot, .t0 = w->now };
	struct aio_key k = { .mm = w->mm };
	struct file_info fi = {};
	struct aio_iocb_op io;
	__u64 iocb = 0;
	int op;

	if (bpf_probe_read_user(&iocb, sizeof(iocb), (void *)(w->uptr + i * sizeof(iocb))) ||
	    bpf_probe_read_user(&io, sizeof(io), (void *)(iocb + AIO_IOCB_OPCODE_OFF)))
		return 1;
	w->done = i + 1;
	k.obj = iocb;
	op = aio_op(io.opcode);
	/*
	 * Only file-system I/O, as for system calls; an fsync of a directory
	 * too. An iocb not counted forgets what its address meant before (an
	 * iocb of a process that had this mm before and never reaped it).
	 */
	if (op < 0 ||
	    file_info(fd_file(task, (long)io.fildes), bpf_task_storage_get(&tasks, task, 0, 0), &fi) ||
	    (fi.type != S_IFREG && (op != IOACCT_OP_FSYNC || fi.type != S_IFDIR))) {
		bpf_map_delete_elem(&aio_reqs, &k);
		return 0;
	}
	r.mnt = fi.mnt;
	r.op = op;
	if (bpf_map_update_elem(&aio_reqs, &k, &r, BPF_ANY)) {
		count_drops(w->slot, 1);
		return 0;
	}
	if (op != IOACCT_OP_FSYNC)
		aio_range_add(task, fd_file(task, (long)io.fildes), &io, w->now, op == IOACCT_OP_WRITE);
	return 0;
}

/*
 * io_submit's end: iocb first + i was not taken. The call's error, when it
 * failed, is the first iocb's: a failed call of its kind.
 */
static long aio_forget_one(__u64 i, void *ctx)
{
	struct aio_walk *w = ctx;
	struct aio_key k = { .mm = w->mm };
	struct aio_req *r;

	if (bpf_probe_read_user(&k.obj, sizeof(k.obj), (void *)(w->uptr + (w->first + i) * 8)))
		return 1;
	if (i == 0 && w->err) {
		r = bpf_map_lookup_elem(&aio_reqs, &k);
		if (r) {
			struct ioacct_stat_key where = { .slot = r->slot, .mnt_id = r->mnt, .op = r->op };

			account(&where, w->now, w->now > r->t0 ? w->now - r->t0 : 0, w->err);
		}
	}
	bpf_map_delete_elem(&aio_reqs, &k);
	return 0;
}

/* io_getevents' end: event i reaped; its iocb counted if it was recorded. */
static long aio_reap_one(__u64 i, void *ctx)
{
	struct aio_walk *w = ctx;
	struct aio_key k = { .mm = w->mm };
	struct aio_event ev;
	struct aio_req *r;

	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(w->uptr + i * sizeof(ev)))) {
		w->lost++;
		return 0;
	}
	k.obj = ev.obj;
	r = bpf_map_lookup_elem(&aio_reqs, &k);
	if (!r)
		return 0;
	struct ioacct_stat_key where = { .slot = r->slot, .mnt_id = r->mnt, .op = r->op };

	account(&where, w->now, w->now > r->t0 ? w->now - r->t0 : 0, ev.res);
	bpf_map_delete_elem(&aio_reqs, &k);
	return 0;
}

/*
 * io_submit's start: records up to AIO_MAX_BATCH iocbs; t->aio_n says how
 * many were looked at. t->ts is the call's start: the read ranges' gen.
 */
static __noinline void aio_submit_enter(struct task_ent *t, __u64 mm, long nr, __u64 uptr, __u32 slot)
{
	struct aio_walk w = { .uptr = uptr, .mm = mm, .now = bpf_ktime_get_ns(), .slot = slot };

	if (!t)
		return;
	t->ts = w.now;
	t->aio_n = 0;
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop) || nr <= 0 || !mm)
		return;
	bpf_loop(nr < AIO_MAX_BATCH ? nr : AIO_MAX_BATCH, aio_record_one, &w, 0);
	t->aio_n = w.done;
}

/* The end of io_submit (AIO_SUBMIT) or io_getevents (AIO_REAP) with ret. */
static __noinline void aio_exit(struct task_ent *t, __u64 mm, long ret, __u64 now)
{
	struct aio_walk w = { .mm = mm, .now = now };
	__u32 n, slot;

	if (!t || !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop) || !mm)
		return;
	w.uptr = t->aio_uptr;
	slot = t->pslot;
	n = t->aio_n;
	if (t->kind == IOACCT_SK_AIO_REAP) {
		if (ret <= 0)
			return;
		n = ret < AIO_MAX_BATCH ? ret : AIO_MAX_BATCH;
		bpf_loop(n, aio_reap_one, &w, 0);
		if (ret > n || w.lost)
			count_drops(slot, ret - n + w.lost);
		return;
	}
	/* io_submit: ret iocbs taken, the first n looked at. */
	if (ret < 0) {
		w.err = (__s32)ret;
		ret = 0;
	}
	if (ret > n)
		count_drops(slot, ret - n);
	if (ret < n) {
		w.first = ret;
		bpf_loop(n - ret, aio_forget_one, &w, 0);
	}
}

/*
 * The start of an I/O call, common to every backend: a0..a2 are the
 * syscall's first arguments. Stashes what sys_exit needs when the task is
 * watched.
 */
static __always_inline int on_enter(long a0, long a1, long a2, long a3, __u32 op, __u32 kind,
				    bool tracepoint)
{
	__u32 flags = kind & ~IOACCT_SK_BASE_MASK;

	struct task_struct *task;
	struct ioacct_state *st;
	struct file_info fi = {};
	struct task_ent *t;
	__u32 slot, mnt = 0;

	st = get_state();
	if (!st || !st->nactive)
		return 0;
	task = bpf_get_current_task_btf();
	slot = current_slot(task, st);
	if (slot == IOACCT_SLOT_NONE)
		return 0;
	if (tracepoint && compat_syscall(task))
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;

	kind &= IOACCT_SK_BASE_MASK;
	switch (kind) {
	case IOACCT_SK_FD_DATA: {
		struct file *f = fd_file(task, (int)a0);

		/* Only file-system I/O: pipes, sockets and devices are not. */
		if (file_info(f, t, &fi) || fi.type != S_IFREG)
			return 0;
		mnt = fi.mnt;
		if (op == IOACCT_OP_READ)
			read_range(t, f, a2, a3, flags);
		break;
	}
	case IOACCT_SK_FD:
		if (file_info(fd_file(task, (int)a0), t, &fi) ||
		    (fi.type != S_IFREG && fi.type != S_IFDIR))
			return 0;
		mnt = fi.mnt;
		break;
	case IOACCT_SK_FD_PAIR:
	case IOACCT_SK_FD_PAIR_OUT: {
		long src = kind == IOACCT_SK_FD_PAIR ? a0 : a1;
		long dst = kind == IOACCT_SK_FD_PAIR ? a2 : a0;
		struct file_info fo = {};
		__u32 ends = 0;

		/*
		 * Either end may be a pipe or a socket, which is not file-system
		 * I/O. The task's last file (which note_mount() can name) stays
		 * the source when that is a file, else becomes the destination.
		 */
		if (!file_info(fd_file(task, (int)src), t, &fi) && fi.type == S_IFREG)
			ends |= PAIR_SRC;
		if (!file_info(fd_file(task, (int)dst), ends ? NULL : t, &fo) && fo.type == S_IFREG)
			ends |= PAIR_DST;
		if (!ends)
			return 0;
		mnt = fi.mnt;
		t->pair.out_mnt = fo.mnt;
		t->pair.ends = ends;
		t->upath = 0;
		break;
	}
	case IOACCT_SK_FADVISE:
		if (file_info(fd_file(task, (int)a0), t, &fi))
			return 0;
		mnt = fi.mnt;
		t->advice = advice_class(a3, false);
		break;
	case IOACCT_SK_MADVISE:
		t->advice = advice_class(a2, true);
		break;
	case IOACCT_SK_AIO_SUBMIT:
		if (slot == IOACCT_SLOT_CALIB)
			return 0;
		t->aio_uptr = a2;
		aio_submit_enter(t, (__u64)task->mm, a1, a2, slot);
		t->upath = 0;
		break;
	case IOACCT_SK_AIO_REAP:
		t->aio_uptr = a3;
		t->upath = 0;
		break;
	case IOACCT_SK_PATH:
		mnt = path_mnt_enter(task, t, AT_FDCWD, (const char *)a0);
		break;
	case IOACCT_SK_OPEN_PATH:
	case IOACCT_SK_OPEN_AT:
		/*
		 * The fd an open returns names its file and mount (on_exit): the
		 * path matters only when it fails, and is read then, not here (a
		 * string read and a mount-point lookup saved on every open).
		 */
		t->upath = kind == IOACCT_SK_OPEN_PATH ? a0 : a1;
		t->dirfd = kind == IOACCT_SK_OPEN_PATH ? AT_FDCWD : (int)a0;
		break;
	case IOACCT_SK_UNLINKAT:
		if (a2 & AT_REMOVEDIR)
			op = IOACCT_OP_RMDIR;
		/* fall through */
	case IOACCT_SK_AT:
		/* fd and dirfd arguments are ints: the upper half of the register is not theirs. */
		mnt = path_mnt_enter(task, t, (int)a0, (const char *)a1);
		break;
	default:
		return 0;
	}
	if (kind <= IOACCT_SK_FD || kind >= IOACCT_SK_FADVISE)
		t->upath = 0;
	t->op = op + 1;
	t->kind = kind;
	t->epoch = (__u16)st->epoch;
	t->mnt = mnt;
	t->pslot = slot;
	/* io_submit's is set already: its read ranges carry it (aio_submit_enter()). */
	if (kind != IOACCT_SK_AIO_SUBMIT)
		t->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ioacct_sys_enter, struct pt_regs *regs, long id)
{
	__u16 e;

	if (id < 0 || id >= IOACCT_NR_SYSCALLS)
		return 0;
	e = sysmap[id];
	if (!e)
		return 0;
	return on_enter(PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),
			PT_REGS_PARM3_SYSCALL(regs), PT_REGS_PARM4_SYSCALL(regs),
			(e & IOACCT_SYS_OP_MASK) - 1, e >> IOACCT_SYS_KIND_SHIFT, true);
}

/* The end of an I/O call, common to every backend. */
static __always_inline int on_exit(long ret)
{
	struct task_struct *task;
	struct ioacct_state *st;
	struct task_ent *t;
	__u32 op, mnt, slot, created = 0, fmode = 0;
	bool opened;
	__u64 now;

	st = get_state();
	if (!st || !st->nactive)
		return 0;
	task = bpf_get_current_task_btf();
	/*
	 * Only a call whose start was seen has anything pending: no cgroup
	 * lookup here, and a task that never was watched has no storage at
	 * all, so its lookup ends at once. A call whose task moves to another
	 * cgroup meanwhile still counts for the job it started in.
	 */
	if (no_storage(task))
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!t || !t->op)
		return 0;
	op = t->op - 1;
	t->op = 0;
	if (ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK)
		return 0;
	/*
	 * The programs were detached (no cgroup watched) and attached again
	 * since this op was recorded: its exit was never seen, this is
	 * another call's.
	 */
	if (t->epoch != (__u16)st->epoch)
		return 0;
	now = bpf_ktime_get_ns();
	if (t->kind == IOACCT_SK_AIO_SUBMIT || t->kind == IOACCT_SK_AIO_REAP) {
		aio_exit(t, (__u64)task->mm, ret, now);
		return 0;
	}
	mnt = t->mnt;
	slot = t->pslot;
	opened = (t->kind == IOACCT_SK_OPEN_PATH || t->kind == IOACCT_SK_OPEN_AT) && ret >= 0;
	if (opened) {
		struct file *f = fd_file(task, (int)ret);
		struct file_info fi = {};

		if (file_info(f, t, &fi) == 0) {
			t->upath = 0;
			mnt = fi.mnt;
			fmode = KREAD(struct file, f, f_mode);
		}
	}
	if (t->upath) {
		__s64 m = path_mnt(task, t->dirfd, (const char *)t->upath);

		t->upath = 0;
		if (m >= 0)
			mnt = (__u32)m;
	}

	/*
	 * Two ends (sendfile, splice, copy_file_range): what moved is a read
	 * of the source and a write of the destination, each a call with its
	 * bytes, its size bin, its error and the call's whole time.
	 */
	if (t->kind == IOACCT_SK_FD_PAIR || t->kind == IOACCT_SK_FD_PAIR_OUT) {
		struct ioacct_stat_key pw = { .slot = slot, .mnt_id = mnt, .op = IOACCT_OP_READ };
		__u32 ends = t->pair.ends;

		if (slot == IOACCT_SLOT_CALIB)
			return 0;
		if (ends & PAIR_SRC)
			account(&pw, now, now - t->ts, ret);
		if (ends & PAIR_DST) {
			pw.mnt_id = t->pair.out_mnt;
			pw.op = IOACCT_OP_WRITE;
			account(&pw, now, now - t->ts, ret);
		}
		return 0;
	}
	if (opened) {
		if (slot == IOACCT_SLOT_CALIB) {
			st->calib_fmode[1] = st->calib_fmode[0];
			st->calib_fmode[0] = fmode;
			return 0;
		}
		created = st->fmode_created && (fmode & st->fmode_created);
	}
	if (slot == IOACCT_SLOT_CALIB)
		return 0;
	struct ioacct_stat_key where = { .slot = slot, .mnt_id = mnt, .op = op };

	/* An access hint: its advice class, no time (not I/O), see account(). */
	if (t->kind == IOACCT_SK_FADVISE || t->kind == IOACCT_SK_MADVISE) {
		account(&where, now, 0, ret < 0 ? ret : t->advice);
		return 0;
	}

	/* The common call: a run of them on one file is one update of stats. */
	if (t->kind == IOACCT_SK_FD_DATA && ret >= 0 && !created &&
	    (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE) && !acc_add(t, &where, now, now - t->ts, ret))
		return 0;
	account(&where, now, now - t->ts, ret);
	if (created) {
		where.op = IOACCT_OP_CREATE;
		account(&where, now, 0, 0);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ioacct_sys_exit, struct pt_regs *regs, long ret)
{
	long id = exit_syscall_nr(regs);

	if (id < 0 || id >= IOACCT_NR_SYSCALLS || !sysmap[id])
		return 0;
	return on_exit(ret);
}

/*
 * The fentry and kprobe backends: a program pair per syscall, on the
 * kernel's syscall entry function (__x64_sys_openat, ...). Its argument is
 * the user's saved registers on every kernel version, so no signature change
 * can break it, and the counts are the tracepoint backend's; but only these
 * syscalls pay for the probes, not every syscall of every task. The daemon
 * loads a pair only when its function exists in the running kernel. The
 * syscalls and what each one is: IOACCT_SYSCALLS in ioacct_ops.h.
 */

#if defined(__TARGET_ARCH_x86)
#define SYSCALL_FN(name) "__x64_sys_" #name
#elif defined(__TARGET_ARCH_arm64)
#define SYSCALL_FN(name) "__arm64_sys_" #name
#endif

/*
 * The read flags of a syscall, from its name (folded at compile time):
 * pread* take their offset in arg3, *v and *v2 a vector of buffers. The
 * tracepoint backend has them in the sysmap (daemon/probes.c).
 */
#define SYS_NAME_LAST(name, i) (#name[sizeof(#name) - 1 - (i)])
#define SYS_FLAGS(name)                                                                      \
	((!__builtin_memcmp(#name, "pread", sizeof(#name) > 5 ? 5 : sizeof(#name)) ?          \
		  IOACCT_SKF_POS : 0) |                                                      \
	 (SYS_NAME_LAST(name, 1) == 'v' ||                                                   \
			  (SYS_NAME_LAST(name, 1) == '2' && SYS_NAME_LAST(name, 2) == 'v') ?       \
		  IOACCT_SKF_VEC : 0))

#define FENTRY_PAIR(name, uname, op, kind)                                                   \
	SEC("fentry/" SYSCALL_FN(name))                                                      \
	int BPF_PROG(ioacct_fe_##name, struct pt_regs *regs)                                 \
	{                                                                                    \
		return on_enter(PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),    \
				PT_REGS_PARM3_SYSCALL(regs), PT_REGS_PARM4_SYSCALL(regs),    \
				IOACCT_OP_##op, IOACCT_SK_##kind | SYS_FLAGS(name), false);  \
	}                                                                                    \
	SEC("fexit/" SYSCALL_FN(name))                                                       \
	int BPF_PROG(ioacct_fx_##name, struct pt_regs *regs, long ret)                       \
	{                                                                                    \
		return on_exit(ret);                                                         \
	}

#define KPROBE_PAIR(name, uname, op, kind)                                                   \
	SEC("ksyscall/" #name)                                                               \
	int BPF_KSYSCALL(ioacct_ks_##name, long a0, long a1, long a2, long a3)               \
	{                                                                                    \
		return on_enter(a0, a1, a2, a3, IOACCT_OP_##op,                              \
				IOACCT_SK_##kind | SYS_FLAGS(name), false);                  \
	}                                                                                    \
	SEC("kretsyscall/" #name)                                                            \
	int BPF_KRETPROBE(ioacct_kr_##name, long ret)                                        \
	{                                                                                    \
		return on_exit(ret);                                                         \
	}

/*
 * The syscall-tp backend: the per-syscall tracepoints (syscalls:sys_enter_X,
 * sys_exit_X), which only these syscalls run, unlike the raw sys_enter and
 * sys_exit of the tracepoint backend; and they need neither trampolines nor
 * kprobes. Their records hold the syscall's six arguments and its return
 * value. The kernel fires them for native syscalls only, never for compat
 * ones. The tracepoints are named after the kernel name (sys_enter_newstat).
 */
#define SYSCALL_TP_PAIR(name, uname, op, kind)                                               \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                          \
	int ioacct_te_##name(struct trace_event_raw_sys_enter *ctx)                          \
	{                                                                                    \
		return on_enter((long)ctx->args[0], (long)ctx->args[1], (long)ctx->args[2],  \
				(long)ctx->args[3], IOACCT_OP_##op,                          \
				IOACCT_SK_##kind | SYS_FLAGS(name), false);                  \
	}                                                                                    \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                           \
	int ioacct_tx_##name(struct trace_event_raw_sys_exit *ctx)                           \
	{                                                                                    \
		return on_exit(ctx->ret);                                                    \
	}

IOACCT_SYSCALLS(FENTRY_PAIR)
IOACCT_SYSCALLS(KPROBE_PAIR)
IOACCT_SYSCALLS(SYSCALL_TP_PAIR)

/*
 * Tiny programs the daemon loads and attaches, alone, to find out which
 * mechanism this kernel allows (see daemon/probes.c). They do nothing.
 */
SEC("fentry/" SYSCALL_FN(read))
int BPF_PROG(ioacct_probe_fentry)
{
	return 0;
}

SEC("ksyscall/read")
int BPF_KSYSCALL(ioacct_probe_kprobe, long fd)
{
	return fd < -1;
}

SEC("tracepoint/syscalls/sys_enter_read")
int ioacct_probe_syscall_tp(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ioacct_probe_tracepoint, struct pt_regs *regs, long id)
{
	return 0;
}

/*
 * ---- The page-cache and mmap views: programs (issue 14) ------------------
 * One body per event, with thin programs on it: tp_btf where the running
 * kernel's BTF has the tracepoint, else fentry/fexit or kprobe on the kernel
 * function that fires it (daemon/probes.c picks one per event; "views" in
 * ioacctd status); none is needed for the rest to work.
 */

/* The current task's slot for a page-cache event; IOACCT_SLOT_NONE at once when nothing is watched. */
static __always_inline __u32 view_slot(struct task_struct *task)
{
	struct ioacct_state *st = get_state();
	__u32 slot;

	if (!st || !st->nactive)
		return IOACCT_SLOT_NONE;
	slot = current_slot(task, st);
	return slot == IOACCT_SLOT_CALIB ? IOACCT_SLOT_NONE : slot;
}

/*
 * The mount a watched task reached an inode through: its last file's, or
 * one it opened (inomnt). A file it never opened (its own executable and
 * libraries, an fd it inherited) gets the mount of the task's root or
 * working directory when that is of the same file system; else 0, unknown.
 */
static __noinline __u32 inode_mnt(struct task_ent *t, __u64 inode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vfsmount *root, *pwd;
	struct super_block *sb;
	__u32 *m, id = 0;

	if (t && t->c_inode == inode)
		return t->c_mnt;
	m = bpf_map_lookup_elem(&inomnt, &inode);
	if (m)
		return *m;
	if (!inode)
		return 0;
	sb = BPF_CORE_READ((struct inode *)inode, i_sb);
	root = BPF_CORE_READ(task, fs, root.mnt);
	pwd = BPF_CORE_READ(task, fs, pwd.mnt);
	if (root && BPF_CORE_READ(root, mnt_sb) == sb)
		id = vfsmount_id(root);
	else if (pwd && BPF_CORE_READ(pwd, mnt_sb) == sb)
		id = vfsmount_id(pwd);
	if (id)
		bpf_map_update_elem(&inomnt, &inode, &id, BPF_ANY);
	return id;
}

/* Adds calls and bytes to where's (slot, mount, op) in the current bin; hist: a size-histogram index or -1. */
static __noinline void view_add(const struct ioacct_stat_key *where, __u64 calls, __u64 bytes, int hist)
{
	struct ioacct_stat_key key = *where;
	struct ioacct_stat_val *v = stat_get(&key, bpf_ktime_get_ns(), bytes);

	if (!v)
		return;
	v->calls += calls;
	v->bytes += bytes;
	if (hist >= 0 && hist < IOACCT_NR_SIZE_BINS)
		v->size[hist]++;
}

#define VIEW_ADD(s_, m_, o_, calls, bytes, hist)                                             \
	do {                                                                                 \
		struct ioacct_stat_key w_ = { .slot = (s_), .mnt_id = (m_), .op = (o_) };    \
		view_add(&w_, (calls), (bytes), (hist));                                     \
	} while (0)

/* Before 6.1's folio->_nr_pages: the field of the same meaning. */
struct folio___old {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_pages(struct folio *folio)
{
	__u64 flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* flags is the first word on every version */
	if (!(flags & (1ULL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	if (bpf_core_field_exists(((struct folio___old *)folio)->_folio_nr_pages))
		return BPF_CORE_READ((struct folio___old *)folio, _folio_nr_pages);
	return 1;
}

/*
 * A folio added to the page cache of a regular file while a watched task
 * reads it (a read call, or a page fault when no call is pending): a miss,
 * brought in from storage. Pages outside the range the read asked for were
 * read ahead. Writes (a page created to be written) and the other calls are
 * not misses; nor are pages brought in by other tasks (kswapd, a
 * neighbour's readahead) for the job.
 */
/*
 * The page-cache view of io_uring reads and writes: the byte ranges the
 * job's pending read and write requests ask of each file, by (slot, inode),
 * with how many of each are pending. A folio added while no system call is
 * pending (in io_uring_enter, or in an io-wq worker, which has no call of
 * its own) is a read's miss inside the read range and read ahead outside
 * it; a folio a write creates (inside the write range, outside the read
 * range) is no miss, as for write(2). Kept from submission to completion
 * (uring_submit(), uring_done()).
 */
struct uring_range_key {
	__u32 slot;
	__u32 pad;
	__u64 inode;
};

struct uring_range {
	__u64 lo, hi;   /* reads */
	__u64 pending;
	__u64 wlo, whi; /* writes */
	__u64 wpending;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct uring_range_key);
	__type(value, struct uring_range);
} uring_ranges SEC(".maps");

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ioacct_pc_add, struct folio *folio)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 inode, pages, lo, hi, first, end, inside = 0, wlo = 0, whi = 0;
	__u32 slot = view_slot(task), mnt;
	struct task_ent *t;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	inode = (__u64)BPF_CORE_READ(folio, mapping, host);
	if (!inode || (BPF_CORE_READ((struct inode *)inode, i_mode) & S_IFMT) != S_IFREG)
		return 0;
	if (t->op) {
		/* fadvise(WILLNEED) and madvise(WILLNEED) read ahead: every page of theirs is. */
		if (t->kind == IOACCT_SK_FADVISE || t->kind == IOACCT_SK_MADVISE)
			lo = hi = 0;
		else if (t->op - 1 == IOACCT_OP_READ && t->kind == IOACCT_SK_FD_DATA)
			lo = t->rq_lo, hi = t->rq_hi;
		/* io_submit: the range its reads ask of this file, if any (aio_ranges). */
		else if (t->kind == IOACCT_SK_AIO_SUBMIT) {
			struct aio_range_key k = { .task = (__u64)task, .inode = inode };
			struct aio_range *r = bpf_map_lookup_elem(&aio_ranges, &k);

			if (!r || r->gen != t->ts)
				return 0;
			lo = r->lo;
			hi = r->hi;
			wlo = r->wlo;
			whi = r->whi;
		} else {
			return 0;
		}
	} else {
		/* No call pending: an io_uring request's (uring_ranges), else the last fault's page. */
		struct uring_range_key uk = { .slot = slot, .inode = inode };
		struct uring_range *ur = bpf_map_lookup_elem(&uring_ranges, &uk);

		lo = ur && ur->pending ? ur->lo : t->rq_lo;
		hi = ur && ur->pending ? ur->hi : t->rq_hi;
		if (ur && ur->wpending) {
			wlo = ur->wlo;
			whi = ur->whi;
		}
	}
	pages = folio_pages(folio);
	first = BPF_CORE_READ(folio, index) << page_shift;
	end = first + (pages << page_shift);
	/*
	 * A folio an io_submit's or io_uring's write touches and none of their
	 * reads asks for: no miss, as for write(2).
	 */
	if (wlo < whi && whi > first && wlo < end && !(hi > first && lo < end))
		return 0;
	mnt = inode_mnt(t, inode);
	if (hi > first && lo < end)
		inside = (hi < end ? hi : end) - (lo > first ? lo : first);
	VIEW_ADD(slot, mnt, IOACCT_OP_CACHE_FILL, 1, pages << page_shift, -1);
	if (inside < (pages << page_shift))
		VIEW_ADD(slot, mnt, IOACCT_OP_READAHEAD, 0, (pages << page_shift) - inside, -1);
	return 0;
}

/*
 * A page fault on a file mapping that found no page mapped: one fault, one
 * page; the page it wants is the request of the page-cache view until the
 * next fault or call.
 */
static __always_inline int pc_fault(struct address_space *mapping, unsigned long index)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct task_ent *t;
	__u64 inode;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	inode = (__u64)BPF_CORE_READ(mapping, host);
	/* A fault inside a read (its buffer is a mapping) leaves the read's range alone. */
	if (!t->op) {
		t->rq_lo = (__u64)index << page_shift;
		t->rq_hi = t->rq_lo + (1ULL << page_shift);
	}
	VIEW_ADD(slot, inode_mnt(t, inode), IOACCT_OP_MMAP_FAULT, 1, 1ULL << page_shift, -1);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(ioacct_pc_fault, struct address_space *mapping, unsigned long index)
{
	return pc_fault(mapping, index);
}

/*
 * Where the kernel has no mm_filemap_fault (Debian's 6.1): filemap_fault(vmf)
 * itself, which fires the tracepoint once it has found the page inside the
 * file (a fault beyond its end is SIGBUS, not counted).
 */
static __always_inline int pc_fault_fn(struct vm_fault *vmf)
{
	struct address_space *mapping = BPF_CORE_READ(vmf, vma, vm_file, f_mapping);
	unsigned long index = BPF_CORE_READ(vmf, pgoff);
	__u64 size = BPF_CORE_READ(mapping, host, i_size);

	if (!mapping || index >= (size + (1ULL << page_shift) - 1) >> page_shift)
		return 0;
	return pc_fault(mapping, index);
}

SEC("fentry/filemap_fault")
int BPF_PROG(ioacct_pc_fault_fe, struct vm_fault *vmf)
{
	return pc_fault_fn(vmf);
}

SEC("kprobe/filemap_fault")
int BPF_KPROBE(ioacct_pc_fault_kp, struct vm_fault *vmf)
{
	return pc_fault_fn(vmf);
}

/*
 * Fault-around: a fault served from pages already in the page cache, which
 * maps the pages of [start, last] that are there; counted as one fault and
 * that range, an upper bound of what it mapped (see docs/design.md).
 */
static __always_inline int pc_map_pages(struct address_space *mapping, unsigned long start,
					unsigned long last)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct task_ent *t;
	__u64 inode;

	if (slot == IOACCT_SLOT_NONE || last < start)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	inode = (__u64)BPF_CORE_READ(mapping, host);
	VIEW_ADD(slot, inode_mnt(t, inode), IOACCT_OP_MMAP_FAULT, 1,
		 (__u64)(last - start + 1) << page_shift, -1);
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(ioacct_pc_map_pages, struct address_space *mapping, unsigned long start,
	     unsigned long last)
{
	return pc_map_pages(mapping, start, last);
}

/*
 * Without mm_filemap_map_pages: filemap_map_pages(vmf, start, end) on its
 * return. The kernel fires the tracepoint once it has found a page to map
 * and locked the page table, which leaves vmf->pte set (it is NULL when the
 * fault comes in): a call that found nothing is not counted.
 */
static __always_inline int pc_map_pages_fn(struct vm_fault *vmf, unsigned long start, unsigned long end)
{
	if (!BPF_CORE_READ(vmf, pte))
		return 0;
	return pc_map_pages(BPF_CORE_READ(vmf, vma, vm_file, f_mapping), start, end);
}

SEC("fexit/filemap_map_pages")
int BPF_PROG(ioacct_pc_map_pages_fx, struct vm_fault *vmf, unsigned long start, unsigned long end,
	     vm_fault_t ret)
{
	return pc_map_pages_fn(vmf, start, end);
}

/* A kretprobe sees no arguments: the kprobe keeps them, by thread. */
struct map_call {
	struct vm_fault *vmf;
	unsigned long start, end;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct map_call);
} map_calls SEC(".maps");

SEC("kprobe/filemap_map_pages")
int BPF_KPROBE(ioacct_pc_map_pages_kp, struct vm_fault *vmf, unsigned long start, unsigned long end)
{
	struct map_call c = { .vmf = vmf, .start = start, .end = end };
	__u64 id = bpf_get_current_pid_tgid();

	if (view_slot(bpf_get_current_task_btf()) == IOACCT_SLOT_NONE)
		return 0;
	bpf_map_update_elem(&map_calls, &id, &c, BPF_ANY);
	return 0;
}

SEC("kretprobe/filemap_map_pages")
int BPF_KRETPROBE(ioacct_pc_map_pages_kr)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct map_call *c = bpf_map_lookup_elem(&map_calls, &id);
	struct map_call call;

	if (!c)
		return 0;
	call = *c;
	bpf_map_delete_elem(&map_calls, &id);
	return pc_map_pages_fn(call.vmf, call.start, call.end);
}

/* A readahead decision: size histogram 0 counts the synchronous, 1 the asynchronous. */
static __always_inline int ra_event(struct inode *inode, int which)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct task_ent *t;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	VIEW_ADD(slot, inode_mnt(t, (__u64)inode), IOACCT_OP_READAHEAD, 1, 0, which);
	return 0;
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(ioacct_pc_sync_ra, struct inode *inode)
{
	return ra_event(inode, 0);
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(ioacct_pc_async_ra, struct inode *inode)
{
	return ra_event(inode, 1);
}

/*
 * Without the readahead tracepoints (6.1, 6.12): the functions that fire
 * them, page_cache_sync_ra(ractl, req_count), at once, and
 * page_cache_async_ra(ractl, folio, req_count), once it has seen that
 * readahead is on and the folio is not under writeback.
 */
static __always_inline int pc_async_ra_fn(struct readahead_control *ractl, struct folio *folio)
{
	__u64 flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* the first word, as in folio_pages() */
	if (!BPF_CORE_READ(ractl, ra, ra_pages) ||
	    (flags & (1ULL << bpf_core_enum_value(enum pageflags, PG_writeback))))
		return 0;
	return ra_event(BPF_CORE_READ(ractl, mapping, host), 1);
}

SEC("fentry/page_cache_sync_ra")
int BPF_PROG(ioacct_pc_sync_ra_fe, struct readahead_control *ractl)
{
	return ra_event(BPF_CORE_READ(ractl, mapping, host), 0);
}

SEC("kprobe/page_cache_sync_ra")
int BPF_KPROBE(ioacct_pc_sync_ra_kp, struct readahead_control *ractl)
{
	return ra_event(BPF_CORE_READ(ractl, mapping, host), 0);
}

SEC("fentry/page_cache_async_ra")
int BPF_PROG(ioacct_pc_async_ra_fe, struct readahead_control *ractl, struct folio *folio)
{
	return pc_async_ra_fn(ractl, folio);
}

SEC("kprobe/page_cache_async_ra")
int BPF_KPROBE(ioacct_pc_async_ra_kp, struct readahead_control *ractl, struct folio *folio)
{
	return pc_async_ra_fn(ractl, folio);
}

/*
 * ---- io_uring (issue 14) --------------------------------------------------
 *
 * A request is counted when it completes, by the job of the task that
 * SUBMITTED it, whoever completes it (the submitter's task work, an io-wq
 * worker, the SQPOLL thread): at submission the watched task's slot is kept
 * by the request's address (uring_reqs); at completion the request's file
 * gives the mount (a fixed file is only assigned when the request is issued)
 * and the result its bytes or error. Reads and writes of every read/write
 * opcode, fsyncs, opens, statx, unlinks, mkdirs and renames are counted as
 * those of system calls are; every request also as one io_uring_op on its
 * file's mount (0 without a file). io_uring_enter is in no syscall table:
 * nothing twice. On when the kernel's BTF has a submit tracepoint
 * (io_uring_submit_req, or io_uring_submit_sqe before 6.4) and
 * io_uring_complete in one of its two forms (daemon/probes.c, the "uring"
 * view).
 *
 * The path-based requests (opens, statx, unlink, mkdir, rename) have no
 * file: their mount is resolved at submission, in the submitter's context,
 * from the path and directory fd the kernel prepared before the tracepoint
 * (io_init_req() runs the opcode's prep). An open's mount is then its new
 * fd's file at completion, which also says whether it created the file:
 * io-wq workers share the submitter's file table. A direct descriptor
 * (file_index) has no fd: its open keeps the path's mount and is never a
 * create.
 *
 * Only io_uring_ops: SPLICE and TEE (their second file is not looked at),
 * FADVISE and MADVISE (no advice class), and the opcodes without a watched
 * system call (FALLOCATE, FTRUNCATE, SYNC_FILE_RANGE, LINKAT, SYMLINKAT,
 * the xattr ones). READ_MULTISHOT reads pollable files only, never a
 * regular file's bytes.
 */
struct uring_req {
	__u32 slot;
	__u32 mnt;   /* URING_SUBMIT_MNT: the mount resolved at submission */
	__u64 t0;
	__u16 op;    /* IOACCT_OP_READ, _WRITE, _FSYNC, _OPEN, ..., or _IO_URING_OP alone */
	__u16 flags; /* URING_* */
	__u32 pad;
	__u64 inode; /* a read's or write's file, whose uring_ranges entry it holds; 0 if none */
};

#define URING_SUBMIT_MNT 1 /* no file at completion: mnt is the request's mount */
#define URING_DIRECT 2     /* an open into a direct descriptor: res is no fd */

/* UAPI opcode numbers newer than some kernels whose vmlinux.h may build this. */
#define URING_OP_READV_FIXED 60
#define URING_OP_WRITEV_FIXED 61

/*
 * The prepared data of the path-based opcodes (io_uring/openclose.c,
 * statx.c, fs.c): the start of struct io_kiocb (io_kiocb_to_cmd()), only the
 * fields read here, matched by name on the running kernel. On every kernel
 * with io_uring_submit_req their paths are struct filename, copied in by
 * the prep.
 */
struct io_open___ioacct {
	int dfd;
	__u32 file_slot; /* 5.15 */
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_statx___ioacct {
	int dfd;
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_unlink___ioacct {
	int dfd;
	int flags;
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_mkdir___ioacct {
	int dfd;
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_rename___ioacct {
	int old_dfd;
	struct filename *oldpath;
} __attribute__((preserve_access_index));

struct io_close___ioacct {
	int fd;
	__u32 file_slot;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct uring_req);
} uring_reqs SEC(".maps");

/* The mount of a request's path (kpath_mnt()), 0 when it cannot be read. */
static __always_inline __u32 uring_path_mnt(struct task_struct *task, int dfd, struct filename *fn)
{
	__s64 m = kpath_mnt(task, dfd, fn ? BPF_CORE_READ(fn, name) : NULL);

	return m > 0 ? (__u32)m : 0;
}

/*
 * What a path-based or close request is, and on which mount: r->op and
 * r->mnt. Returns false when it is not file-system I/O (the close of a
 * pipe or socket), not to be counted.
 */
static __noinline bool uring_submit_meta(struct task_struct *task, struct io_kiocb *req,
					 __u32 opcode, struct uring_req *r)
{
	r->flags = URING_SUBMIT_MNT;
	switch (opcode) {
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2: {
		struct io_open___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = IOACCT_OP_OPEN;
		if (bpf_core_field_exists(o->file_slot) && BPF_CORE_READ(o, file_slot))
			r->flags |= URING_DIRECT;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_STATX: {
		struct io_statx___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = IOACCT_OP_STAT;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_UNLINKAT: {
		struct io_unlink___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = BPF_CORE_READ(o, flags) & AT_REMOVEDIR ? IOACCT_OP_RMDIR : IOACCT_OP_UNLINK;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_MKDIRAT: {
		struct io_mkdir___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = IOACCT_OP_MKDIR;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_RENAMEAT: {
		struct io_rename___ioacct *o = (void *)req;

		/* The source's mount, as for renameat(2). */
		if (!bpf_core_field_exists(o->oldpath))
			break;
		r->op = IOACCT_OP_RENAME;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, old_dfd), BPF_CORE_READ(o, oldpath));
		break;
	}
	case IORING_OP_CLOSE: {
		/* No close op (nor for close(2)): an io_uring_op on the file's mount, found before it goes. */
		struct io_close___ioacct *o = (void *)req;
		struct file_info fi = {};
		struct file *f;

		if (!bpf_core_field_exists(o->fd) ||
		    (bpf_core_field_exists(o->file_slot) && BPF_CORE_READ(o, file_slot)))
			break;
		f = fd_file(task, BPF_CORE_READ(o, fd));
		if (f && (file_info(f, NULL, &fi) || (fi.type != S_IFREG && fi.type != S_IFDIR)))
			return false;
		r->mnt = fi.mnt;
		break;
	}
	default:
		r->flags = 0;
		break;
	}
	return true;
}

/* A request submitted: its job and what it does, kept until it completes. */
/* The parts of a read request's prepared data read here (io_uring/rw.c). */
struct io_rw___ioacct {
	struct kiocb kiocb;
	__u32 len; /* bytes, or the vector's length (READV) */
} __attribute__((preserve_access_index));

struct io_cqe___ioacct {
	int fd;
} __attribute__((preserve_access_index));

struct io_kiocb___ioacct {
	struct io_cqe___ioacct cqe;
} __attribute__((preserve_access_index));

#define URING_REQ_F_FIXED_FILE 1 /* IOSQE_FIXED_FILE, the first of req->flags */

/*
 * At a read's or a write's submission: adds its byte range to its file's
 * uring_ranges entry and returns the file's inode, 0 when it has none (a
 * fixed file, not a regular file, a kernel without req->cqe.fd).
 */
static __noinline __u64 uring_range_add(struct task_struct *task, struct io_kiocb *req, __u32 opcode,
					__u32 slot, bool write)
{
	struct io_rw___ioacct *rw = (void *)req;
	struct uring_range_key k = { .slot = slot };
	struct uring_range nr = { .pending = 1 }, *old;
	struct file_info fi = {};
	struct file *f;
	__s64 lo;
	__u64 hi;

	if (!bpf_core_field_exists(((struct io_kiocb___ioacct *)req)->cqe.fd) ||
	    (BPF_CORE_READ(req, flags) & URING_REQ_F_FIXED_FILE))
		return 0;
	f = fd_file(task, BPF_CORE_READ((struct io_kiocb___ioacct *)req, cqe.fd));
	if (!f || file_info(f, NULL, &fi) || fi.type != S_IFREG)
		return 0;
	k.inode = (__u64)BPF_CORE_READ(f, f_inode);
	lo = BPF_CORE_READ(rw, kiocb.ki_pos);
	if (lo < 0) /* -1: the file position */
		lo = BPF_CORE_READ(f, f_pos);
	/* A vectored request's length is its iovec count: its range is the rest of the file. */
	hi = opcode == IORING_OP_READV || opcode == URING_OP_READV_FIXED || opcode == IORING_OP_WRITEV ||
	     opcode == URING_OP_WRITEV_FIXED ? ~0ULL : (__u64)lo + BPF_CORE_READ(rw, len);
	old = bpf_map_lookup_elem(&uring_ranges, &k);
	if (old && write) {
		if (!old->wpending || (__u64)lo < old->wlo)
			old->wlo = lo;
		if (!old->wpending || hi > old->whi)
			old->whi = hi;
		__sync_fetch_and_add(&old->wpending, 1);
		return k.inode;
	}
	if (old) {
		if (!old->pending || (__u64)lo < old->lo)
			old->lo = lo;
		if (!old->pending || hi > old->hi)
			old->hi = hi;
		__sync_fetch_and_add(&old->pending, 1);
		return k.inode;
	}
	if (write) {
		nr.pending = 0;
		nr.wpending = 1;
		nr.wlo = lo;
		nr.whi = hi;
	} else {
		nr.lo = lo;
		nr.hi = hi;
	}
	return bpf_map_update_elem(&uring_ranges, &k, &nr, BPF_ANY) ? 0 : k.inode;
}

/*
 * A read or write request of the file is over: its range goes with the last
 * one of its kind pending, the entry with the last of both.
 */
static __noinline void uring_range_put(__u32 slot, __u64 inode, bool write)
{
	struct uring_range_key k = { .slot = slot, .inode = inode };
	struct uring_range *r = bpf_map_lookup_elem(&uring_ranges, &k);

	if (!r)
		return;
	if (__sync_fetch_and_add(write ? &r->wpending : &r->pending, -1) <= 1 &&
	    !(write ? r->pending : r->wpending))
		bpf_map_delete_elem(&uring_ranges, &k);
}

static __always_inline int uring_submit(struct io_kiocb *req)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task), opcode;
	struct uring_req r = { .slot = slot, .op = IOACCT_OP_IO_URING_OP };
	__u64 key = (__u64)req;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	opcode = BPF_CORE_READ(req, opcode);
	switch (opcode) {
	case IORING_OP_READV:
	case IORING_OP_READ_FIXED:
	case IORING_OP_READ:
	case URING_OP_READV_FIXED:
		r.op = IOACCT_OP_READ;
		break;
	case IORING_OP_WRITEV:
	case IORING_OP_WRITE_FIXED:
	case IORING_OP_WRITE:
	case URING_OP_WRITEV_FIXED:
		r.op = IOACCT_OP_WRITE;
		break;
	case IORING_OP_FSYNC:
		r.op = IOACCT_OP_FSYNC;
		break;
	default:
		if (!uring_submit_meta(task, req, opcode, &r))
			return 0;
		break;
	}
	r.t0 = bpf_ktime_get_ns();
	if (r.op == IOACCT_OP_READ || r.op == IOACCT_OP_WRITE)
		r.inode = uring_range_add(task, req, opcode, slot, r.op == IOACCT_OP_WRITE);
	if (bpf_map_update_elem(&uring_reqs, &key, &r, BPF_ANY) && r.inode)
		uring_range_put(slot, r.inode, r.op == IOACCT_OP_WRITE);
	return 0;
}

/* io_uring_submit_req(req), since 6.4. */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(ioacct_pc_uring_submit, struct io_kiocb *req)
{
	return uring_submit(req);
}

/* io_uring_submit_sqe(req, force_nonblock), its name until 6.3 (Debian's 6.1). */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(ioacct_pc_uring_submit_sqe, struct io_kiocb *req, bool force_nonblock)
{
	return uring_submit(req);
}

/*
 * The file a successful open request installed as fd `fd` in the current
 * task's table (the submitter's: see above): its mount in *mnt, and whether
 * the open created it.
 */
static __noinline bool uring_opened(long fd, __u32 *mnt)
{
	struct file *f = fd_file(bpf_get_current_task_btf(), fd);
	struct ioacct_state *st = get_state();
	struct file_info fi = {};

	if (!f || !mnt || file_info(f, NULL, &fi))
		return false;
	*mnt = fi.mnt;
	return st && st->fmode_created && (BPF_CORE_READ(f, f_mode) & st->fmode_created);
}

/*
 * A request completed with result res: counted for the job that submitted
 * it, whatever task completes it. Every form of the io_uring_complete
 * tracepoint calls this.
 */
static __always_inline int uring_done(void *req, long res)
{
	__u64 key = (__u64)req, now, dur;
	struct ioacct_stat_key where = { 0 };
	struct file_info fi = { 0 };
	struct uring_req *r;
	bool created = false;
	struct file *f;
	__u32 op;

	r = bpf_map_lookup_elem(&uring_reqs, &key);
	if (!r)
		return 0;
	now = bpf_ktime_get_ns();
	dur = now > r->t0 ? now - r->t0 : 0;
	op = r->op;
	where.slot = r->slot;
	if (r->inode)
		uring_range_put(r->slot, r->inode, r->op == IOACCT_OP_WRITE);
	if (r->flags & URING_SUBMIT_MNT) {
		where.mnt_id = r->mnt;
		if (op == IOACCT_OP_OPEN && res >= 0 && !(r->flags & URING_DIRECT))
			created = uring_opened(res, &where.mnt_id);
	} else {
		f = BPF_CORE_READ((struct io_kiocb *)req, file);
		/* Only file-system I/O, as for system calls: pipes, sockets and devices are not. */
		if (f && (file_info(f, NULL, &fi) || (fi.type != S_IFREG && fi.type != S_IFDIR))) {
			bpf_map_delete_elem(&uring_reqs, &key);
			return 0;
		}
		if (fi.type != S_IFREG && op != IOACCT_OP_FSYNC)
			op = IOACCT_OP_IO_URING_OP;
		where.mnt_id = fi.mnt;
	}
	bpf_map_delete_elem(&uring_reqs, &key);
	if (op != IOACCT_OP_IO_URING_OP) {
		where.op = op;
		account(&where, now, dur, res);
	}
	if (created) {
		where.op = IOACCT_OP_CREATE;
		account(&where, now, 0, 0);
	}
	where.op = IOACCT_OP_IO_URING_OP;
	view_add(&where, 1, 0, -1);
	return 0;
}

/* io_uring_complete(ctx, req, cqe), as on 6.18: the result is in the cqe. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(ioacct_pc_uring_complete, struct io_ring_ctx *rctx, void *req, struct io_uring_cqe *cqe)
{
	return uring_done(req, BPF_CORE_READ(cqe, res));
}

/* io_uring_complete(ctx, req, user_data, res, cflags, extra1, extra2), as on 6.1 and 6.12. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(ioacct_pc_uring_complete7, void *rctx, void *req, __u64 user_data, int res, unsigned int cflags,
	     __u64 extra1, __u64 extra2)
{
	return uring_done(req, res);
}
