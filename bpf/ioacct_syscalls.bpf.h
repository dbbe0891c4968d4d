/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system calls: on_enter and on_exit, common to every backend, and the
 * backends' programs: tp_btf sys_enter/sys_exit, fentry/fexit, ksyscall and
 * the per-syscall tracepoints (one pair per IOACCT_SYSCALLS entry), and the
 * tiny programs the daemon loads to find out which of them the kernel allows.
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_aio.bpf.h, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

/*
 * The start of an I/O call, common to every backend: a0..a4 are the
 * syscall's first arguments. Stashes what sys_exit needs when the task is
 * watched.
 */
static __always_inline int on_enter(long a0, long a1, long a2, long a3, long a4, __u32 op,
				    __u32 kind, bool tracepoint)
{
	__u32 flags = kind & ~IOACCT_SK_BASE_MASK;

	struct task_struct *task;
	struct ioacct_state *st;
	struct file_info fi = {};
	struct task_ent *t;
	__u32 slot;
	__u64 mnt = 0;

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
		/* Where the access is, for its file's record: the offset, else f_pos at sys_exit. */
		t->f_off = flags & IOACCT_SKF_POS ? a3 : -1;
		t->f_file = (__u64)f;
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
		struct file *fs = fd_file(task, (int)src), *fd = fd_file(task, (int)dst);
		struct file_info fo = {};
		__u32 ends = 0;

		/*
		 * Either end may be a pipe or a socket, which is not file-system
		 * I/O. The task's last file (which note_mount() can name) stays
		 * the source when that is a file, else becomes the destination.
		 */
		if (!file_info(fs, t, &fi) && fi.type == S_IFREG)
			ends |= PAIR_SRC;
		if (!file_info(fd, ends ? NULL : t, &fo) && fo.type == S_IFREG)
			ends |= PAIR_DST;
		if (!ends)
			return 0;
		/*
		 * For the ends' records (ioacct_file_pair()): splice's and
		 * copy_file_range's off_in and off_out, sendfile's offset.
		 */
		t->p_file[0] = (__u64)fs;
		t->p_file[1] = (__u64)fd;
		t->p_uoff[0] = kind == IOACCT_SK_FD_PAIR ? a1 : a2;
		t->p_uoff[1] = kind == IOACCT_SK_FD_PAIR ? a3 : 0;
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
		/*
		 * A stat's buffer names its file (device and inode) at sys_exit.
		 * Only a stat's: a syscall-tp program may not read past its own
		 * syscall's arguments (unlink has one), and op is a constant there.
		 */
		if (op == IOACCT_OP_STAT) {
			t->f_file = a1;
			t->stat_x = 0;
			t->s_upath = a0;
			t->s_dirfd = AT_FDCWD;
		}
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
		if (op == IOACCT_OP_STAT) {
			t->f_file = flags & IOACCT_SKF_STATX ? a4 : a2;
			t->stat_x = !!(flags & IOACCT_SKF_STATX);
			t->s_upath = a1;
			t->s_dirfd = (int)a0;
		}
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
			PT_REGS_PARM5_SYSCALL(regs), (e & IOACCT_SYS_OP_MASK) - 1,
			e >> IOACCT_SYS_KIND_SHIFT, true);
}

/*
 * What kind of call an exit program can see: a per-syscall program (fexit,
 * kretprobe, sys_exit_X) only its syscall's kind, the raw sys_exit any.
 * on_exit() leaves out at compile time the branches (and the global
 * functions they call) that its program's kind never takes: with ~125 exit
 * programs, what each carries is what the verifier walks at load (6.1 under
 * QEMU took 248 s to start with every program carrying every branch).
 */
#define EXIT_ANY 0xffU
#define EXIT_MAY(k, kind) ((k) == EXIT_ANY || (k) == IOACCT_SK_##kind)

/* The end of an I/O call, common to every backend; k: EXIT_ANY or the call's IOACCT_SK_ kind. */
static __always_inline int on_exit(long ret, __u32 k)
{
	struct task_struct *task;
	struct ioacct_state *st;
	struct task_ent *t;
	__u32 op, slot, created = 0, fmode = 0;
	__u64 mnt;
	bool opened, reg = false;
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
	if ((EXIT_MAY(k, AIO_SUBMIT) || EXIT_MAY(k, AIO_REAP)) &&
	    (t->kind == IOACCT_SK_AIO_SUBMIT || t->kind == IOACCT_SK_AIO_REAP)) {
		aio_exit(t, (__u64)task->mm, ret, now);
		return 0;
	}
	mnt = t->mnt;
	slot = t->pslot;
	opened = (EXIT_MAY(k, OPEN_PATH) || EXIT_MAY(k, OPEN_AT)) &&
		 (t->kind == IOACCT_SK_OPEN_PATH || t->kind == IOACCT_SK_OPEN_AT) && ret >= 0;
	if (opened) {
		struct file *f = fd_file(task, (int)ret);
		struct file_info fi = {};

		if (file_info_at(f, t, &fi, true) == 0) {
			t->upath = 0;
			mnt = fi.mnt;
			fmode = KREAD(struct file, f, f_mode);
			reg = fi.type == S_IFREG;
		}
	}
	if (t->upath) {
		__s64 m = path_mnt(task, t->dirfd, (const char *)t->upath);

		t->upath = 0;
		if (m >= 0)
			mnt = (__u64)m;
	}

	/*
	 * Two ends (sendfile, splice, copy_file_range): what moved is a read
	 * of the source and a write of the destination, each a call with its
	 * bytes, its size bin, its error and the call's whole time.
	 */
	if ((EXIT_MAY(k, FD_PAIR) || EXIT_MAY(k, FD_PAIR_OUT)) &&
	    (t->kind == IOACCT_SK_FD_PAIR || t->kind == IOACCT_SK_FD_PAIR_OUT)) {
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
		if (ret > 0 && file_records)
			ioacct_file_pair(t, ret, now);
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
	if ((EXIT_MAY(k, FADVISE) || EXIT_MAY(k, MADVISE)) &&
	    (t->kind == IOACCT_SK_FADVISE || t->kind == IOACCT_SK_MADVISE)) {
		account(&where, now, 0, ret < 0 ? ret : t->advice);
		return 0;
	}

	/* The common call: a run of them on one file is one update of stats. */
	if (EXIT_MAY(k, FD_DATA) && t->kind == IOACCT_SK_FD_DATA && ret >= 0 &&
	    (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE)) {
		__u64 ff = t->f_file; /* a local: KREAD's CO-RE read must not relocate task_ent */
		struct file_rw a = { .off = t->f_off, .ret = ret, .t_end = now, .dur = now - t->ts,
				     .slot = slot, .mnt = mnt, .rd = op == IOACCT_OP_READ };

		if (file_records && a.off < 0)
			a.off = (__s64)KREAD(struct file, ff, f_pos) - ret;
		if (!acc_add(t, &where, &a))
			return 0;
		a.direct = 1;
		if (file_records)
			ioacct_file_rw(t, &a);
	}
	account(&where, now, now - t->ts, ret);
	/* Opens, stats and fsyncs: calls of these kinds only. */
	if (ret >= 0 && file_records &&
	    (EXIT_MAY(k, OPEN_PATH) || EXIT_MAY(k, OPEN_AT) || EXIT_MAY(k, FD) || EXIT_MAY(k, PATH) ||
	     EXIT_MAY(k, AT)))
		ioacct_file_call(t, slot, mnt,
				 op | (opened && reg ? FILE_CALL_OPENED : 0) |
					 (created && reg ? FILE_CALL_CREATED : 0),
				 now - t->ts);
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
	return on_exit(ret, EXIT_ANY);
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
 * The flags of a syscall, from its name (folded at compile time): pread*
 * and pwrite* take their offset in arg3, *v and *v2 a vector of buffers,
 * statx its buffer in arg4. The
 * tracepoint backend has them in the sysmap (daemon/probes.c).
 */
#define SYS_NAME_LAST(name, i) (#name[sizeof(#name) - 1 - (i)])
#define SYS_FLAGS(name)                                                                      \
	((!__builtin_memcmp(#name, "pread", sizeof(#name) > 5 ? 5 : sizeof(#name)) ||         \
			  !__builtin_memcmp(#name, "pwrite", sizeof(#name) > 6 ? 6 : sizeof(#name)) ? \
		  IOACCT_SKF_POS : 0) |                                                      \
	 (!__builtin_memcmp(#name, "statx", sizeof(#name)) ? IOACCT_SKF_STATX : 0) |          \
	 (SYS_NAME_LAST(name, 1) == 'v' ||                                                   \
			  (SYS_NAME_LAST(name, 1) == '2' && SYS_NAME_LAST(name, 2) == 'v') ?       \
		  IOACCT_SKF_VEC : 0))

#define FENTRY_PAIR(name, uname, op, kind)                                                   \
	SEC("fentry/" SYSCALL_FN(name))                                                      \
	int BPF_PROG(ioacct_fe_##name, struct pt_regs *regs)                                 \
	{                                                                                    \
		return on_enter(PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),    \
				PT_REGS_PARM3_SYSCALL(regs), PT_REGS_PARM4_SYSCALL(regs),    \
				PT_REGS_PARM5_SYSCALL(regs), IOACCT_OP_##op,                 \
				IOACCT_SK_##kind | SYS_FLAGS(name), false);                  \
	}                                                                                    \
	SEC("fexit/" SYSCALL_FN(name))                                                       \
	int BPF_PROG(ioacct_fx_##name, struct pt_regs *regs, long ret)                       \
	{                                                                                    \
		return on_exit(ret, IOACCT_SK_##kind);                                       \
	}

#define KPROBE_PAIR(name, uname, op, kind)                                                   \
	SEC("ksyscall/" #name)                                                               \
	int BPF_KSYSCALL(ioacct_ks_##name, long a0, long a1, long a2, long a3, long a4)      \
	{                                                                                    \
		return on_enter(a0, a1, a2, a3, a4, IOACCT_OP_##op,                          \
				IOACCT_SK_##kind | SYS_FLAGS(name), false);                  \
	}                                                                                    \

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
				(long)ctx->args[3], (long)ctx->args[4], IOACCT_OP_##op,      \
				IOACCT_SK_##kind | SYS_FLAGS(name), false);                  \
	}

IOACCT_SYSCALLS(FENTRY_PAIR)
IOACCT_SYSCALLS(KPROBE_PAIR)
IOACCT_SYSCALLS(SYSCALL_TP_PAIR)

/*
 * The kprobe and syscall-tp backends' exits: one program per kind
 * (IOACCT_SYS_KINDS), which the daemon attaches to the exit of every syscall
 * of that kind it loaded an entry for (daemon/probes.c, attach_exits). The
 * exits of one kind are the same code whatever the syscall, and a kretprobe
 * or a tracepoint program can be attached many times: the verifier sees 13
 * programs instead of 39 (most of a start's time under emulation, issue 35).
 * fexit programs cannot be shared: each is verified against its function.
 */
#define KPROBE_KIND_EXIT(kind)                                                               \
	SEC("kretsyscall")                                                                   \
	int BPF_KRETPROBE(ioacct_kr_##kind, long ret)                                        \
	{                                                                                    \
		return on_exit(ret, IOACCT_SK_##kind);                                       \
	}
#define SYSCALL_TP_KIND_EXIT(kind)                                                           \
	SEC("tracepoint")                                                                    \
	int ioacct_tx_##kind(struct trace_event_raw_sys_exit *ctx)                           \
	{                                                                                    \
		return on_exit(ctx->ret, IOACCT_SK_##kind);                                  \
	}

IOACCT_SYS_KINDS(KPROBE_KIND_EXIT)
IOACCT_SYS_KINDS(SYSCALL_TP_KIND_EXIT)

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
