// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iotrace's probes: one event per completed I/O call of the traced cgroup,
 * through a ring buffer. Loaded and attached by iotrace only while a trace
 * runs, apart from the daemon's object: nothing is pinned, and when iotrace
 * exits the programs are gone.
 *
 * Backend "tracepoint": tp_btf sys_enter/sys_exit. sys_enter first looks
 * the syscall up in its table (one load), then asks whether the task is in
 * the traced cgroup (or below it; a cgroup2 cgroup, or one of the v1
 * hierarchy the daemon attributes by, as ioacct.bpf.c): every other task
 * of the node stops there, at a few loads. A traced task's I/O call is
 * stashed in task-local storage; sys_exit turns it into an event. An event
 * that finds the ring buffer full is counted in `lost`, never silently
 * dropped. The syscalls and what each one is: IOACCT_SYSCALLS in
 * ioacct_ops.h, the counters' list, plus close (iotrace_abi.h).
 *
 * iotrace --rpc adds the programs of iotrace_rpc.bpf.h (one event per RPC of
 * a traced task), loaded only then: they need the sunrpc module's BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ioacct_abi.h"
#include "ioacct_ops.h"
#include "iotrace_abi.h"
#include "ioacct_bpf_common.h"

char LICENSE[] SEC("license") = "GPL";

/* How far below the traced cgroup a task's cgroup may be. */
#define MAX_CGROUP_DEPTH 8

/* Set by iotrace before load. */
const volatile __u16 sysmap[IOACCT_NR_SYSCALLS] = {};
const volatile __u64 target_cgid = 0;  /* kernfs id of the traced cgroup */
const volatile __u32 target_level = 0; /* its depth: the hierarchy's root is 0 */
const volatile __u32 target_v1 = 0;    /* 1: a v1 cgroup, of subsystem v1_ssid's hierarchy */
const volatile __u32 v1_ssid = 0;
/* 0: iotrace --rpc=only: of the calls, only opens and closes (user space's paths of fds) */
const volatile __u32 emit_calls = 1;
const volatile __u32 rpc_on = 0;       /* iotrace --rpc: files' writers noted (iotrace_rpc.bpf.h) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* iotrace --buffer-size sets it before load */
} events SEC(".maps");

/* lost[0]: per-CPU, events that found the ring buffer full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* A traced task's call, between sys_enter and sys_exit. */
struct pending {
	__u64 ts;
	__u64 upath;  /* path argument, read at sys_exit (the kernel has faulted it in by then) */
	__s64 offset;
	__s32 dirfd;
	__s32 fd;
	__u32 op;     /* op + 1, 0 when nothing is pending */
	__u32 kind;
	__u32 mnt;
	__u32 cgroup; /* the task's own cgroup: its kernfs id's low half (the directory's inode) */
	/* What nfs_initiate_* said of the rpc_task it names, until that task's rpc_task_begin. */
	__u64 nfs_task;
	__u64 nfs_fileid;
	__s64 nfs_offset;
	__u32 nfs_count;
	__u32 nfs_flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending);
} pend SEC(".maps");

/*
 * Is the task in the traced cgroup or below it? Tasks in cgroups higher up
 * stop at the first comparison; those deeper climb to the traced level.
 */
static __always_inline bool traced(struct task_struct *task)
{
	struct cgroup *cg = target_v1 ? task_v1_cgroup(task, v1_ssid) : task->cgroups->dfl_cgrp;
	int level;

	if (!cg)
		return false;
	level = cg->level;
	if (level < (int)target_level)
		return false;
	for (int i = 0; i < MAX_CGROUP_DEPTH && level > (int)target_level; i++) {
		struct cgroup_subsys_state *parent = BPF_CORE_READ(cg, self.parent);

		if (!parent)
			return false;
		cg = container_of(parent, struct cgroup, self);
		level--;
	}
	if (level != (int)target_level)
		return false;
	return BPF_CORE_READ(cg, kn, id) == target_cgid;
}

/* The task's own cgroup (ioacctd tells a job's steps by it), read for traced calls alone. */
static __always_inline __u32 own_cgroup(struct task_struct *task)
{
	struct cgroup *cg = target_v1 ? task_v1_cgroup(task, v1_ssid) : task->cgroups->dfl_cgrp;

	return cg ? (__u32)BPF_CORE_READ(cg, kn, id) : 0;
}

static __always_inline int file_mnt_type(struct file *f, __u32 *mnt, __u32 *type)
{
	if (!f)
		return -1;
	*mnt = vfsmount_id(BPF_CORE_READ(f, f_path.mnt));
	*type = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;
	return 0;
}

/*
 * Waking iotrace for every event would cost the traced job a wakeup per
 * call: wake it when a quarter of the buffer is used, it polls every 100 ms
 * for the rest.
 */
static __always_inline void submit(void *ev)
{
	bpf_ringbuf_submit(ev, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >=
			       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4 ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (n)
		(*n)++;
}

#include "iotrace_rpc.bpf.h"

SEC("tp_btf/sys_enter")
int BPF_PROG(iotrace_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 op, kind, mnt = 0, type = 0;
	struct pending *p;
	struct file *f;
	__s64 offset = -1;
	__s32 fd = -1, dirfd = AT_FDCWD;
	__u64 upath = 0;
	long a0, a1, a2;
	__u16 e;

	/*
	 * The table first, while id is still in its register: after traced()'s
	 * loop it lives on the stack, and 6.1's verifier loses a spilled
	 * scalar's bounds (its test and the index were three loads of it).
	 */
	if (id < 0 || id >= IOACCT_NR_SYSCALLS)
		return 0;
	e = sysmap[id];
	if (!e || !traced(task) || compat_syscall(task))
		return 0;
	op = (e & IOACCT_SYS_OP_MASK) - 1;
	kind = (e >> IOACCT_SYS_KIND_SHIFT) & IOTRACE_SYS_KIND_MASK;
	a0 = PT_REGS_PARM1_SYSCALL(regs);
	a1 = PT_REGS_PARM2_SYSCALL(regs);
	a2 = PT_REGS_PARM3_SYSCALL(regs);

	switch (kind) {
	case IOACCT_SK_FD_DATA:
		/* Only file-system I/O, like the counters: pipes, sockets and devices are not. */
		fd = (int)a0;
		f = fd_file(task, fd);
		if (file_mnt_type(f, &mnt, &type) || type != S_IFREG)
			return 0;
		if (e & IOTRACE_SYS_POSITIONAL)
			offset = PT_REGS_PARM4_SYSCALL(regs);
		/* preadv2/pwritev2 with offset -1, and plain read/write: the file position. */
		if (offset < 0)
			offset = BPF_CORE_READ(f, f_pos);
		break;
	case IOACCT_SK_FD:
		fd = (int)a0;
		if (file_mnt_type(fd_file(task, fd), &mnt, &type) ||
		    (type != S_IFREG && type != S_IFDIR))
			return 0;
		break;
	case IOACCT_SK_PATH:
	case IOACCT_SK_OPEN_PATH:
		upath = a0;
		break;
	case IOACCT_SK_UNLINKAT:
		if (a2 & AT_REMOVEDIR)
			op = IOACCT_OP_RMDIR;
		/* fall through */
	case IOACCT_SK_AT:
	case IOACCT_SK_OPEN_AT:
		/* fd and dirfd arguments are ints: the upper half of the register is not theirs. */
		dirfd = (int)a0;
		upath = a1;
		/* fstat is newfstatat(fd, "", AT_EMPTY_PATH): the fd names the file then. */
		fd = dirfd;
		break;
	default:
		return 0;
	}
	p = bpf_task_storage_get(&pend, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p)
		return 0;
	p->upath = upath;
	p->offset = offset;
	p->dirfd = dirfd;
	p->fd = fd;
	p->kind = kind;
	p->mnt = mnt;
	p->op = op + 1;
	p->cgroup = own_cgroup(task);
	p->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(iotrace_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct iotrace_event *ev;
	struct pending *p;
	__u32 type = 0;
	long id = exit_syscall_nr(regs);
	__u64 now;

	if (id < 0 || id >= IOACCT_NR_SYSCALLS || !sysmap[id])
		return 0;
	task = bpf_get_current_task_btf();
	/* Only a traced task's call has anything pending; the others have no storage. */
	p = bpf_task_storage_get(&pend, task, 0, 0);
	if (!p || !p->op)
		return 0;
	/* Here, not at sys_enter: one more live value there spills the syscall number on 6.1. */
	if (rpc_on && p->op == IOACCT_OP_WRITE + 1 && ret > 0)
		note_writer(task, fd_file(task, p->fd), p->fd, p->mnt);
	now = bpf_ktime_get_ns();
	if ((ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK) ||
	    (!emit_calls && p->kind != IOACCT_SK_OPEN_PATH && p->kind != IOACCT_SK_OPEN_AT &&
	     p->op != IOTRACE_OP_CLOSE + 1)) {
		p->op = 0;
		return 0;
	}
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		p->op = 0;
		count_lost();
		return 0;
	}
	ev->type = IOTRACE_EV_CALL;
	ev->start_ns = p->ts;
	ev->dur_ns = now - p->ts;
	ev->ret = ret;
	ev->offset = p->offset;
	ev->pid = task->tgid;
	ev->tid = task->pid;
	ev->op = p->op - 1;
	ev->fd = p->fd;
	ev->syscall = id;
	ev->mnt_id = p->mnt;
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->cgroup = p->cgroup;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->path[0] = '\0';
	if (p->upath) {
		if (bpf_probe_read_user_str(ev->path, sizeof(ev->path), (const char *)p->upath) <= 0)
			ev->path[0] = '\0';
		/* Relative paths: the mount of the directory they start from; absolute ones: user space. */
		if (ev->path[0] != '/') {
			if (p->dirfd == AT_FDCWD)
				ev->mnt_id = vfsmount_id(BPF_CORE_READ(task, fs, pwd.mnt));
			else
				file_mnt_type(fd_file(task, p->dirfd), &ev->mnt_id, &type);
		}
	}
	/* A successful open: its file says exactly which mount it is on. */
	if ((p->kind == IOACCT_SK_OPEN_PATH || p->kind == IOACCT_SK_OPEN_AT) && ret >= 0) {
		ev->fd = (__s32)ret;
		file_mnt_type(fd_file(task, ret), &ev->mnt_id, &type);
	}
	p->op = 0;
	submit(ev);
	return 0;
}
