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
#define IOTRACE_RPC_NAME_MAX 32

/* What a ring buffer record is: its first field. */
#define IOTRACE_EV_CALL 1
#define IOTRACE_EV_RPC 2

/* One completed call, in the ring buffer. */
struct iotrace_event {
	__u32 type;      /* IOTRACE_EV_CALL */
	__u32 op;        /* enum ioacct_op, or IOTRACE_OP_CLOSE */
	__u64 start_ns;  /* CLOCK_MONOTONIC at sys_enter */
	__u64 dur_ns;    /* sys_exit - sys_enter */
	__s64 ret;       /* the syscall's return value: bytes, an fd, 0 or -errno */
	__s64 offset;    /* file offset of a read or write, -1 when not one */
	__u32 pid;       /* thread group id */
	__u32 tid;
	__u32 mnt_id;    /* 0: not known in the kernel (absolute paths: user space resolves) */
	__s32 fd;        /* fd (or dirfd) the call used, or that an open returned; < 0 if none */
	__u32 syscall;   /* the syscall's number */
	__u32 uid;       /* the caller's real uid (ioacctd keeps a job's user's calls alone) */
	__u32 cgroup;    /* the caller's cgroup (traced hierarchy): low half of its kernfs id */
	char comm[IOTRACE_COMM_LEN];
	char path[IOTRACE_PATH_MAX]; /* path argument of path-based calls, else "" */
};

/* iotrace_rpc_event.flags */
#define IOTRACE_RPC_FILE 1u /* nfs_initiate_read/write/commit gave fileid, offset, count */
#define IOTRACE_RPC_DATA 2u /* a READ's or WRITE's: count is the data it moves */
/* Sent by another task (flusher, rpciod) for a file a traced task wrote: pid to comm are the writer's. */
#define IOTRACE_RPC_WRITEBACK 4u

/*
 * One RPC of a traced task (iotrace --rpc), when mountstats counted it
 * (sunrpc:rpc_stats_latency). What its submitter was doing is taken at
 * rpc_task_begin, in the submitting task: pid to path.
 */
struct iotrace_rpc_event {
	__u32 type;        /* IOTRACE_EV_RPC */
	__u32 op;          /* the traced call its task was in at rpc_task_begin: op + 1; 0: none */
	__u64 submit_ns;   /* CLOCK_MONOTONIC at rpc_task_begin */
	__u64 done_ns;     /* at rpc_stats_latency */
	__u64 queue_ns;    /* rpc_stats_latency's backlog, rtt, execute */
	__u64 rtt_ns;
	__u64 execute_ns;
	__u64 fileid;      /* with IOTRACE_RPC_FILE: the file's id (its inode number) */
	__s64 offset;      /* with IOTRACE_RPC_FILE, else -1 */
	__u64 bytes_sent;  /* rq_xmit_bytes_sent, rq_reply_bytes_recvd: what mountstats adds */
	__u64 bytes_recv;
	__u32 count;       /* with IOTRACE_RPC_FILE: the bytes asked for */
	__u32 flags;       /* IOTRACE_RPC_* */
	__s32 status;      /* tk_status: 0, a count, or -errno */
	__u32 xid;
	__u32 prog;        /* cl_prog, cl_vers, p_statidx */
	__u32 vers;
	__u32 proc;
	__u32 ntrans;      /* rq_ntrans: transmissions */
	__u32 pid;         /* the submitter's */
	__u32 tid;
	__u32 uid;
	__u32 cgroup;
	__u32 mnt_id;      /* the call's (fd calls), else 0 */
	__s32 fd;          /* the call's fd, else < 0 */
	char comm[IOTRACE_COMM_LEN];
	char name[IOTRACE_RPC_NAME_MAX];  /* p_name: "WRITE" */
	char path[IOTRACE_PATH_MAX];      /* the call's path argument, else "" */
};

#endif /* IOTRACE_ABI_H */
