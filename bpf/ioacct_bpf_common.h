/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel-side helpers shared by the BPF objects (ioacct.bpf.c, the counters;
 * iotrace.bpf.c, the tracer): reaching a file from an fd, a mount's id, a
 * task's cgroup in a v1 hierarchy, where the syscall number is at sys_exit.
 * Include after vmlinux.h and the libbpf headers; every function is inline
 * or static, so an object that does not use one pays nothing for it.
 */
#ifndef IOACCT_BPF_COMMON_H
#define IOACCT_BPF_COMMON_H

#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFDIR 0040000
#define AT_FDCWD -100
#define AT_REMOVEDIR 0x200
/* Kernel-internal "restart the syscall" codes: the call is not over yet. */
#define ERESTARTSYS 512
#define ERESTART_RESTARTBLOCK 516

/*
 * Reading a field through a kernel pointer the program holds as a number
 * (a file from the fd table, its inode, its mount), which the verifier does
 * not let it load through. With IOACCT_DIRECT (kernels with bpf_rdonly_cast,
 * 6.2+), the number is cast to a read-only pointer of its BTF type and the
 * field is one load instruction, which the JIT guards with an exception-table
 * entry (a bad address reads 0); the verifier removes the cast itself.
 * Otherwise it is bpf_probe_read_kernel, a helper call: about 25 ns a read on
 * the development host (AMD, return thunks), and a watched fd call made three.
 * The build makes ioacct.bpf.c twice, with IOACCT_DIRECT 1 and 0; the daemon
 * loads the first where the running kernel's BTF has bpf_rdonly_cast.
 */
#ifndef IOACCT_DIRECT
#define IOACCT_DIRECT 0
#endif
#if IOACCT_DIRECT
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym;
#define KREAD(type, p, field)                                                                \
	(((type *)bpf_rdonly_cast((const void *)(__u64)(p), bpf_core_type_id_kernel(type)))->field)
#else
#define KREAD(type, p, field) BPF_CORE_READ((type *)(__u64)(p), field)
#endif

static __always_inline struct file *fd_file(struct task_struct *task, long fd)
{
	struct fdtable *fdt;
	struct file *f = NULL;

	if (fd < 0)
		return NULL;
	fdt = task->files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return NULL;
#if IOACCT_DIRECT
	/*
	 * fdt->fd[fd], read as the first entry of a files_struct's own fd_array
	 * placed at that address: a field load at a constant offset, which the
	 * verifier allows (an index into the array would be a variable one).
	 */
	f = KREAD(struct files_struct,
		  (__u64)fdt->fd + fd * sizeof(f) - bpf_core_field_offset(struct files_struct, fd_array),
		  fd_array[0]);
#else
	bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]);
#endif
	return f;
}

static __always_inline __u32 vfsmount_id(struct vfsmount *mnt)
{
	if (!mnt)
		return 0;
	/* container_of(mnt, struct mount, mnt), as a number. */
	return KREAD(struct mount, (__u64)mnt - bpf_core_field_offset(struct mount, mnt), mnt_id);
}

/*
 * The task's cgroup in the v1 hierarchy of subsystem `ssid` (the daemon's
 * cgroup_v1_hierarchy, by its id in /proc/cgroups), or NULL. A v1-only Slurm
 * job's tasks sit in the cgroup2 root: only this says which job they are of.
 */
static __always_inline struct cgroup *task_v1_cgroup(struct task_struct *task, __u32 ssid)
{
	struct cgroup_subsys_state *css;

	if (ssid >= bpf_core_field_size(task->cgroups->subsys) / sizeof(void *))
		return NULL;
	css = task->cgroups->subsys[ssid];
	return css ? css->cgroup : NULL;
}

/*
 * A 32-bit process's syscall numbers are another table's: the sysmap would
 * misname them, so the tracepoint backend leaves them alone (the others
 * only see the 64-bit entry functions anyway).
 */
static __always_inline bool compat_syscall(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	if (bpf_core_field_exists(task->thread_info.status))
		return task->thread_info.status & 0x0002; /* TS_COMPAT */
#endif
	return false;
}

/* The syscall number at sys_exit, where the tracepoint does not pass it. */
static __always_inline long exit_syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#else
#error "tell exit_syscall_nr() where this architecture keeps the syscall number"
#endif
}

#endif /* IOACCT_BPF_COMMON_H */
