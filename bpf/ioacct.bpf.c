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
 *
 * This file holds what every part needs (the maps, a task's entry, which
 * cgroup a task is watched in); the families follow in the files included
 * at its end, in this order: mounts, per-file records, counters, what a call tells the
 * page-cache view, AIO, the system calls' programs, the page-cache and mmap
 * views' programs, io_uring.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ioacct_abi.h"
#include "ioacct_ops.h"
#include "ioacct_bpf_common.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the daemon before load. */
const volatile __u16 sysmap[IOACCT_NR_SYSCALLS] = {};
/* Subsystem id of the v1 hierarchy used for attribution: a constant to the verifier. */
const volatile __u32 v1_ssid = 0;
/*
 * The per-file records (file_records in ioacct.conf), set before load: with
 * 0 the verifier knows every branch on it and drops the per-file code from
 * the programs (their calls, and a file's identity read at its first call).
 */
const volatile __u32 file_records = 1;

#include "ioacct_watch.bpf.h"
#include "ioacct_task_head.bpf.h"

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
 * A run of a task's reads, writes, opens, stats, fsyncs and seeks of one file
 * (issue 26), added to the file's record (files) as one update: when the
 * task turns to a third file, at its exit and when the daemon's iterator
 * flushes the accumulators. Two of them, so that a copy (read one file,
 * write another) is no update per call. key is the record's (its mount's
 * "other files" past max_files); dev, ino and igen (i_generation) the file's
 * own: a call matches the accumulator by them, its life being the key's.
 * Darshan's sequential and consecutive accesses and read/write switches are
 * judged against the record's last accesses in flast[lidx], which every
 * task counting in the record shares (its tag still ltag), else against
 * the accumulator's own last_byte_* and last_io (carried on from the
 * record's). Access sizes gather in asz/acnt (size + 1, 0 free) until a
 * fifth one comes or the flush, then go to the record's table.
 */
#define FA_SIZES 4
struct file_acc {
	struct ioacct_file_key key;
	__u64 ino;
	__u32 dev;
	__u32 ok;	/* key has a record (file_acc_load found or made one) */
	__u64 start;	/* start_ns of the slot it was loaded in: a reused slot is another job */
	__u32 igen;	/* the inode's i_generation */
	__u8 nogen;	/* loaded for a stat by path of a file of no known life (IOACCT_FILE_NOGEN) */
	__u8 named;	/* the record's path is noted */
	__u8 last_io;	/* Darshan's last_io_type, where flast has no entry */
	__u8 pad;
	/* Its metadata calls (ioacct_file_call()): next to what finds it, one cache line. */
	__u64 opens, stats, fsyncs, seeks, meta_ns;
	__u64 reads, writes, bytes_read, bytes_written, read_ns, write_ns;
	__s64 max_byte_read, max_byte_written, last_byte_read, last_byte_written;
	__u64 seq_reads, seq_writes, consec_reads, consec_writes, rw_switches;
	__u64 first_read, last_read, first_write, last_write;
	__u64 ltag;
	__u32 lidx;
	__u32 asz[FA_SIZES];
	__u32 acnt[FA_SIZES];
	__u64 size_read[IOACCT_NR_SIZE_BINS];
	__u64 size_written[IOACCT_NR_SIZE_BINS];
};

#define FILE_ACCS 2

/*
 * A watched task's pending operation, between sys_enter and sys_exit, and
 * the last file it did I/O on (so a loop of writes to one file resolves its
 * mount once): a file is the same when its inode and vfsmount are.
 */
struct task_ent {
	__u64 ts;    /* sys_enter time */
	__u64 mnt;   /* key of the mount the pending op targets */
	__u32 op;    /* pending op + 1, 0 when none */
	__u32 pslot; /* slot of the pending op */
	__u16 kind;  /* IOACCT_SK_* of the pending op */
	__u16 epoch; /* state epoch at sys_enter: the programs were not detached since */
	__u64 upath; /* path argument not readable at sys_enter: resolved at sys_exit */
	union {
		__s64 dirfd; /* what upath is relative to */
		struct {
			__u64 out_mnt; /* FD_PAIR kinds: the destination's mount (mnt: the source's) */
			__u32 ends;    /* PAIR_SRC | PAIR_DST: which ends are regular files */
		} pair;
		__u64 aio_uptr;        /* AIO kinds: io_submit's iocb pointers, io_getevents' events */
	};
	__u64 c_inode;
	__u64 c_vfsmnt;
	__u64 c_mnt;
	__u32 c_type;
	/*
	 * The last two mounts this task noted (note_mount) for its accumulators:
	 * the mount's struct, its key and the slot. A copy between two file
	 * systems alternates them; each is walked once, not per call.
	 */
	__u64 noted_vfsmnt[2];
	__u64 noted_key[2];
	__u32 noted_slot[2];
	__u32 noted_next;
	/*
	 * The last file's identity for its record (issue 26): device, inode,
	 * its i_generation (issue 36), a dentry of it.
	 */
	__u64 c_ino;
	__u64 c_dentry;
	__u32 c_dev;
	__u32 c_igen;
	__u32 fa_next;  /* which file accumulator the next new file takes */
	__u32 stat_x;   /* the pending stat is a statx: f_file is a struct statx */
	/*
	 * The task's rank for its file records (task_rank()): the MPI rank or
	 * Slurm task of its environment, else -1; read for the address space
	 * rank_mm (an exec is another environment), 0: not yet.
	 */
	__s32 rank;
	__u64 rank_mm;
	/*
	 * The pending call's access offset (pread, pwrite; -1: the file
	 * position, read at sys_exit from f_file) or a stat's user buffer.
	 */
	__s64 f_off;
	__u64 f_file;
	/* A pending stat by path: its path argument and what it is relative to, for its record's name. */
	__u64 s_upath;
	__s64 s_dirfd;
	/* FD_PAIR kinds: the ends' struct file (pair.ends: which are regular files), offsets. */
	__u64 p_file[2];
	__u64 p_uoff[2];
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
	struct file_acc fa[FILE_ACCS]; /* owned with acc (acc_own) */
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

/* The RPC object reads a task's pending call through this map (ioacct_task_head.bpf.h). */
#define TASK_HEAD_SAME(f) \
	_Static_assert(__builtin_offsetof(struct task_ent, f) == __builtin_offsetof(struct task_ent_head, f) && \
		       sizeof(((struct task_ent *)0)->f) == sizeof(((struct task_ent_head *)0)->f), #f)
TASK_HEAD_SAME(mnt);
TASK_HEAD_SAME(op);
TASK_HEAD_SAME(pslot);
TASK_HEAD_SAME(epoch);
TASK_HEAD_SAME(c_vfsmnt);
TASK_HEAD_SAME(c_mnt);

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
	__uint(max_entries, 8192);
	__type(key, struct ioacct_mnt_note_key);
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
	struct ioacct_mnt_note_key nk; /* n's key in mntnotes, off the stack too */
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
 * The families, one file each. Included, not linked: one object, one
 * compilation, the code and data in the order they had when this was one
 * file (bpf/Makefile.am lists them as the objects' prerequisites).
 */
#include "ioacct_mounts.bpf.h"
#include "ioacct_rank.bpf.h"
#include "ioacct_files.bpf.h"
#include "ioacct_counters.bpf.h"
#include "ioacct_pcache_call.bpf.h"
#include "ioacct_aio.bpf.h"
#include "ioacct_syscalls.bpf.h"
#include "ioacct_pcache.bpf.h"
#include "ioacct_uring.bpf.h"
