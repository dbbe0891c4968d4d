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
	};
	__u64 c_inode;
	__u64 c_vfsmnt;
	__u32 c_mnt;
	__u32 c_type;
};

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

static const struct ioacct_stat_val zero_val;

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
 * What an fd-based call needs of a file: its mount and its type. Two reads
 * (inode and vfsmount) tell whether the file is the one the task used last;
 * the mount id and inode mode are read only when it is not. (Reading the
 * head of struct file in one 192-byte copy instead costs more.)
 */
struct file_info {
	__u32 mnt;
	__u32 type;
};

static __noinline int file_info(struct file *f, struct task_ent *t, struct file_info *fi)
{
	__u64 inode = 0, vfsmnt = 0;

	if (!f || !fi)
		return -1;
	if (bpf_core_read(&inode, sizeof(inode), &f->f_inode) ||
	    bpf_core_read(&vfsmnt, sizeof(vfsmnt), &f->f_path.mnt))
		return -1;
	if (t && t->c_inode == inode && t->c_vfsmnt == vfsmnt) {
		fi->mnt = t->c_mnt;
		fi->type = t->c_type;
		return 0;
	}
	fi->mnt = vfsmount_id((struct vfsmount *)vfsmnt);
	fi->type = BPF_CORE_READ((struct inode *)inode, i_mode) & S_IFMT;
	if (t) {
		t->c_inode = inode;
		t->c_vfsmnt = vfsmnt;
		t->c_mnt = fi->mnt;
		t->c_type = fi->type;
	}
	return 0;
}

/*
 * The mount a path argument points into. Absolute paths: longest prefix
 * among the mount points of the task's mount namespace (the daemon fills
 * them from the job's mountinfo). Relative paths: the mount of the directory
 * they start from. An empty path (AT_EMPTY_PATH) is the directory fd itself.
 */
static __noinline __s64 path_mnt(struct task_struct *task, int dirfd, const char *upath)
{
	struct ioacct_mp_key *key;
	struct ioacct_mp_val *v;
	__u32 zero = 0;
	long n;

	key = bpf_map_lookup_elem(&mpscratch, &zero);
	if (!key || !task)
		return 0;
	/*
	 * A tracing program cannot fault pages in: a path in a page the program
	 * has not touched yet (fresh .rodata after exec) reads as an error here,
	 * and is readable at sys_exit, the kernel having copied it meanwhile.
	 */
	n = bpf_probe_read_user_str(key->path, sizeof(key->path), upath);
	if (n <= 0)
		return -1;
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

static __always_inline void count_drop(__u32 slot, __u64 bytes)
{
	struct ioacct_drop_val *d = bpf_map_lookup_elem(&dropped, &slot);

	if (d) {
		d->events++;
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
 * Notes the file-system type and mount point name of a mount the current
 * task does I/O on, so that the daemon can say what it was if the task's
 * mount namespace is gone before the drain. Called only when a counter
 * entry is created (once per slot, mount, bin and operation), never on the
 * per-call path; the mount is the task's last file's, when it is that one.
 */
static __noinline void note_mount(__u32 id)
{
	struct ioacct_mnt_note n = {}, *old;
	struct vfsmount *mnt;
	struct task_ent *t;
	struct mount *m;

	t = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
	if (!t || t->c_mnt != id || !t->c_vfsmnt)
		return;
	old = bpf_map_lookup_elem(&mntnotes, &id);
	if (old && old->vfsmnt == t->c_vfsmnt)
		return;
	mnt = (struct vfsmount *)t->c_vfsmnt;
	m = container_of(mnt, struct mount, mnt);
	n.vfsmnt = t->c_vfsmnt;
	n.mntns = BPF_CORE_READ(m, mnt_ns, ns.inum);
	bpf_probe_read_kernel_str(n.fstype, sizeof(n.fstype), BPF_CORE_READ(mnt, mnt_sb, s_type, name));
	bpf_probe_read_kernel_str(n.name, sizeof(n.name), BPF_CORE_READ(m, mnt_mountpoint, d_name.name));
	bpf_map_update_elem(&mntnotes, &id, &n, BPF_ANY);
}

/*
 * Adds one finished operation to its (slot, mount, bin, op) counters; `where`
 * carries slot, mount and op, the bin is computed here.
 */
static __noinline void account(const struct ioacct_stat_key *where, __u64 t_end, __u64 dur, long ret)
{
	struct ioacct_stat_key key = *where;
	__u32 slot = key.slot, op = key.op;
	struct ioacct_stat_val *v;
	struct ioacct_slot *s;
	__u64 bytes = 0;

	s = bpf_map_lookup_elem(&slots, &slot);
	if (!s || !s->active)
		return;
	if (t_end > s->start_ns && s->width_ns)
		key.bin = (t_end - s->start_ns) / s->width_ns;
	if (ret > 0 && (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE))
		bytes = ret;

	v = bpf_map_lookup_elem(&stats, &key);
	if (!v) {
		/* EEXIST: another CPU created it first, which is fine. */
		long err = bpf_map_update_elem(&stats, &key, &zero_val, BPF_NOEXIST);

		if (err && err != -17) {
			count_drop(slot, bytes);
			return;
		}
		if (!err)
			note_mount(key.mnt_id);
		v = bpf_map_lookup_elem(&stats, &key);
		if (!v) {
			count_drop(slot, bytes);
			return;
		}
	}
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
	}
}

/*
 * The start of an I/O call, common to every backend: a0..a2 are the
 * syscall's first arguments. Stashes what sys_exit needs when the task is
 * watched.
 */
static __always_inline int on_enter(long a0, long a1, long a2, __u32 op, __u32 kind,
				    bool tracepoint)
{
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

	switch (kind) {
	case IOACCT_SK_FD_DATA:
		/* Only file-system I/O: pipes, sockets and devices are not. */
		if (file_info(fd_file(task, (int)a0), t, &fi) || fi.type != S_IFREG)
			return 0;
		mnt = fi.mnt;
		break;
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
	case IOACCT_SK_PATH:
	case IOACCT_SK_OPEN_PATH:
		mnt = path_mnt_enter(task, t, AT_FDCWD, (const char *)a0);
		break;
	case IOACCT_SK_UNLINKAT:
		if (a2 & AT_REMOVEDIR)
			op = IOACCT_OP_RMDIR;
		/* fall through */
	case IOACCT_SK_AT:
	case IOACCT_SK_OPEN_AT:
		/* fd and dirfd arguments are ints: the upper half of the register is not theirs. */
		mnt = path_mnt_enter(task, t, (int)a0, (const char *)a1);
		break;
	default:
		return 0;
	}
	if (kind <= IOACCT_SK_FD)
		t->upath = 0;
	t->op = op + 1;
	t->kind = kind;
	t->epoch = (__u16)st->epoch;
	t->mnt = mnt;
	t->pslot = slot;
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
			PT_REGS_PARM3_SYSCALL(regs), (e & IOACCT_SYS_OP_MASK) - 1,
			e >> IOACCT_SYS_KIND_SHIFT, true);
}

/* The end of an I/O call, common to every backend. */
static __always_inline int on_exit(long ret)
{
	struct task_struct *task;
	struct ioacct_state *st;
	struct task_ent *t;
	__u32 op, mnt, slot, created = 0;
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
	mnt = t->mnt;
	slot = t->pslot;
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
	if (t->kind >= IOACCT_SK_FD_PAIR) {
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
	if ((t->kind == IOACCT_SK_OPEN_PATH || t->kind == IOACCT_SK_OPEN_AT) && ret >= 0) {
		struct file *f = fd_file(task, (int)ret);
		struct file_info fi = {};
		__u32 fmode = 0;

		if (file_info(f, t, &fi) == 0) {
			mnt = fi.mnt;
			fmode = BPF_CORE_READ(f, f_mode);
		}
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

#define FENTRY_PAIR(name, uname, op, kind)                                                   \
	SEC("fentry/" SYSCALL_FN(name))                                                      \
	int BPF_PROG(ioacct_fe_##name, struct pt_regs *regs)                                 \
	{                                                                                    \
		return on_enter(PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),    \
				PT_REGS_PARM3_SYSCALL(regs), IOACCT_OP_##op, IOACCT_SK_##kind, \
				false);                                                      \
	}                                                                                    \
	SEC("fexit/" SYSCALL_FN(name))                                                       \
	int BPF_PROG(ioacct_fx_##name, struct pt_regs *regs, long ret)                       \
	{                                                                                    \
		return on_exit(ret);                                                         \
	}

#define KPROBE_PAIR(name, uname, op, kind)                                                   \
	SEC("ksyscall/" #name)                                                               \
	int BPF_KSYSCALL(ioacct_ks_##name, long a0, long a1, long a2)                        \
	{                                                                                    \
		return on_enter(a0, a1, a2, IOACCT_OP_##op, IOACCT_SK_##kind, false);        \
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
				IOACCT_OP_##op, IOACCT_SK_##kind, false);                    \
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
