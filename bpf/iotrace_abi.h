/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ABI between the tracer's BPF object (iotrace.bpf.c) and iotrace:
 * the events of its ring buffer. Like ioacct_abi.h: plain structs and
 * constants, no includes. Never pinned nor stored: iotrace and its object
 * are built together, so it needs no version.
 */
#ifndef IOTRACE_ABI_H
#define IOTRACE_ABI_H

/*
 * Operations the tracer sees besides IOACCT_OPS (ioacct_ops.h), numbered
 * after them: close has no counter, but a trace without it hides where a
 * file's life ends.
 */
#define IOTRACE_OP_CLOSE 32
#define IOTRACE_NR_OPS 33

/*
 * The tracer's syscall table (rodata): like the counters' sysmap, (op + 1) |
 * kind << IOACCT_SYS_KIND_SHIFT, plus IOTRACE_SYS_POSITIONAL for the calls
 * whose offset is their fourth argument (pread64, pwritev2, ...).
 */
#define IOTRACE_SYS_POSITIONAL 0x8000
/*
 * The whole kind (IOACCT_SK_BASE_MASK): the tracer handles kinds 1 to 7 and
 * ignores the others (two fds, AIO, hints), which it does not report.
 */
#define IOTRACE_SYS_KIND_MASK 0x1f

#define IOTRACE_PATH_MAX 256
#define IOTRACE_COMM_LEN 16

/* One completed call, in the ring buffer. */
struct iotrace_event {
	__u64 start_ns;  /* CLOCK_MONOTONIC at sys_enter */
	__u64 dur_ns;    /* sys_exit - sys_enter */
	__s64 ret;       /* the syscall's return value: bytes, an fd, 0 or -errno */
	__s64 offset;    /* file offset of a read or write, -1 when not one */
	__u32 pid;       /* thread group id */
	__u32 tid;
	__u32 mnt_id;    /* 0: not known in the kernel (absolute paths: user space resolves) */
	__u32 op;        /* enum ioacct_op, or IOTRACE_OP_CLOSE */
	__s32 fd;        /* fd (or dirfd) the call used, or that an open returned; < 0 if none */
	__u32 syscall;   /* the syscall's number */
	__u32 uid;       /* the caller's real uid (ioacctd keeps a job's user's calls alone) */
	__u32 cgroup;    /* the caller's cgroup (traced hierarchy): low half of its kernfs id */
	char comm[IOTRACE_COMM_LEN];
	char path[IOTRACE_PATH_MAX]; /* path argument of path-based calls, else "" */
};

#endif /* IOTRACE_ABI_H */
