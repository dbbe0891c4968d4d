/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iotrace --rpc (included by iotrace.bpf.c, which it shares traced(), the
 * ring buffer and the pending calls with): one event per RPC a traced task
 * submitted, when mountstats counted it.
 *
 * Who: sunrpc:rpc_task_begin runs in the submitting task (sync and async
 * RPCs alike); a traced task's RPC gets an entry in `rpcs`, keyed by the
 * rpc_task pointer, with what the task was doing (the traced call pending
 * in task storage, its fd and path) and what nfs_initiate_read/write/commit
 * said of the same rpc_task just before (file id, offset, count).
 * sunrpc:rpc_stats_latency, usually in an rpciod worker, fires where
 * mountstats adds the RPC (rpc_count_iostats_metrics): the entry plus the
 * RPC's own numbers become the event.
 *
 * A READ, WRITE or COMMIT another task submits for a file a traced task
 * wrote is the traced task's too ("writeback", IOTRACE_RPC_WRITEBACK): the
 * flusher's WRITEs of its dirty pages, and the COMMIT that an rpciod worker
 * sends when the last WRITE of a writeback completes (nfs_writepages'
 * nfs_io_completion_commit), which races the fsync's own and wins about as
 * often. `writers` keeps, per inode, the last traced task that wrote to it
 * (when its write makes the inode dirty, and at the sys_exit of a write that
 * wrote, with --rpc only); nfs_initiate_* in another task then puts an
 * entry for the rpc_task in `rpcs` before its rpc_task_begin, which keeps it.
 *
 * The entry is not deleted there nor at rpc_task_end (which fires before
 * the counting): a call restarted by its rpc_call_done (short reads and
 * writes, NFS4ERR_DELAY) is counted again without a new rpc_task_begin.
 * Instead every rpc_task_begin writes its key, an entry for a traced task,
 * a delete for any other, so an address reused by a later task never finds
 * an older one's entry; the LRU bounds what freed tasks leave.
 *
 * sunrpc's and nfs's structures are not in vmlinux.h (their BTF is the
 * modules'): the fields read are declared here for CO-RE, flavoured
 * (___iot) so that a vmlinux.h that has them does not clash. These programs
 * are loaded only for iotrace --rpc, and only where the modules are
 * (tracer.c): the nfs ones are left out when sunrpc alone is loaded.
 */
#ifndef IOTRACE_RPC_BPF_H
#define IOTRACE_RPC_BPF_H

#include <bpf/bpf_endian.h>

struct rpc_procinfo___iot {
	__u32 p_statidx;
	const char *p_name;
} __attribute__((preserve_access_index));

struct rpc_message___iot {
	const struct rpc_procinfo___iot *rpc_proc;
} __attribute__((preserve_access_index));

struct rpc_clnt___iot {
	__u32 cl_prog;
	__u32 cl_vers;
} __attribute__((preserve_access_index));

struct rpc_rqst___iot {
	__be32 rq_xid;
	int rq_ntrans;
	unsigned long rq_xmit_bytes_sent;   /* size_t */
	unsigned long rq_reply_bytes_recvd; /* size_t */
} __attribute__((preserve_access_index));

struct rpc_task___iot {
	int tk_status;
	struct rpc_message___iot tk_msg;
	struct rpc_clnt___iot *tk_client;
	struct rpc_rqst___iot *tk_rqstp;
} __attribute__((preserve_access_index));

struct nfs_pgio_args___iot {
	__u64 offset;
	__u32 count;
} __attribute__((preserve_access_index));

struct nfs_pgio_header___iot {
	struct inode *inode;
	struct rpc_task___iot task;
	struct nfs_pgio_args___iot args;
} __attribute__((preserve_access_index));

struct nfs_commitargs___iot {
	__u64 offset;
	__u32 count;
} __attribute__((preserve_access_index));

struct nfs_commit_data___iot {
	struct rpc_task___iot task;
	struct inode *inode;
	struct nfs_commitargs___iot args;
} __attribute__((preserve_access_index));

/* The traced tasks' RPCs between rpc_task_begin and their counting (see above). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* tracer.c makes it 1 without --rpc */
	__type(key, __u64);
	__type(value, struct iotrace_rpc_event);
} rpcs SEC(".maps");

/* The last traced writer of a file, by inode (see above). */
struct file_writer {
	__u64 ino;     /* the inode's number when noted: a reused inode is another file */
	__u32 pid;
	__u32 tid;
	__u32 uid;
	__u32 cgroup;
	__u32 mnt;
	__s32 fd;
	char comm[IOTRACE_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096); /* tracer.c makes it 1 without --rpc */
	__type(key, __u64);
	__type(value, struct file_writer);
} writers SEC(".maps");

/* A traced write to inode (its call's fd and mount) that wrote or dirtied it. */
static __always_inline void note_inode_writer(struct task_struct *task, struct inode *inode,
					      __s32 fd, __u32 mnt)
{
	__u64 key = (__u64)inode;
	struct file_writer w;

	if (!inode)
		return;
	w = (struct file_writer){
		.ino = BPF_CORE_READ(inode, i_ino),
		.pid = task->tgid,
		.tid = task->pid,
		.uid = (__u32)bpf_get_current_uid_gid(),
		.cgroup = own_cgroup(task),
		.mnt = mnt,
		.fd = fd,
	};

	bpf_get_current_comm(w.comm, sizeof(w.comm));
	bpf_map_update_elem(&writers, &key, &w, BPF_ANY);
}

/* A traced write to file f that wrote something (sys_exit, iotrace --rpc). */
static __always_inline void note_writer(struct task_struct *task, struct file *f, __s32 fd,
					__u32 mnt)
{
	note_inode_writer(task, BPF_CORE_READ(f, f_inode), fd, mnt);
}

/* Where rpc_task_begin builds an entry: too big for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iotrace_rpc_event);
} rpc_scratch SEC(".maps");

/*
 * Another task's READ, WRITE or COMMIT of a file a traced task wrote: an
 * entry for rpc_task `rt` with the writer as its submitter, submit time 0
 * until its rpc_task_begin.
 */
static __always_inline void nfs_writeback(const void *rt, struct inode *inode, __u64 offset,
					  __u32 count, __u32 flags)
{
	__u64 key = (__u64)inode, ino = BPF_CORE_READ(inode, i_ino);
	struct iotrace_rpc_event *e;
	struct file_writer *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&writers, &key);
	if (!w || w->ino != ino)
		return;
	e = bpf_map_lookup_elem(&rpc_scratch, &zero);
	if (!e)
		return;
	e->type = IOTRACE_EV_RPC;
	e->submit_ns = 0;
	e->op = 0;
	e->pid = w->pid;
	e->tid = w->tid;
	e->uid = w->uid;
	e->cgroup = w->cgroup;
	e->mnt_id = w->mnt;
	e->fd = w->fd;
	__builtin_memcpy(e->comm, w->comm, sizeof(e->comm));
	e->path[0] = '\0';
	e->flags = flags | IOTRACE_RPC_WRITEBACK;
	e->fileid = ino;
	e->offset = (__s64)offset;
	e->count = count;
	key = (__u64)rt;
	bpf_map_update_elem(&rpcs, &key, e, BPF_ANY);
}

/*
 * nfs_initiate_*: the file of the rpc_task `rt` about to be run by this
 * task (nfs_initiate_pgio and nfs_initiate_commit call rpc_run_task right
 * after); a file id is the inode number on 64-bit kernels (nfs_fileid_to_ino_t).
 */
static __always_inline void nfs_initiate(const void *rt, struct inode *inode, __u64 offset,
					 __u32 count, __u32 flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending *p;

	if (!traced(task)) {
		nfs_writeback(rt, inode, offset, count, flags);
		return;
	}
	p = bpf_task_storage_get(&pend, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p)
		return;
	p->nfs_task = (__u64)rt;
	p->nfs_fileid = BPF_CORE_READ(inode, i_ino);
	p->nfs_offset = (__s64)offset;
	p->nfs_count = count;
	p->nfs_flags = flags;
}

/*
 * A traced write makes an inode dirty (writeback_dirty_inode_enqueue runs in the
 * writing task, inside its call): its writer noted at once. The note at the
 * call's sys_exit alone came too late when the flusher began writing the pages
 * back while the call still ran (a loaded VM: 2 of a dd's 33 WRITEs untraced).
 */
SEC("tp_btf/writeback_dirty_inode_enqueue")
int BPF_PROG(iotrace_rpc_dirty, struct inode *inode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending *p;

	if (!traced(task))
		return 0;
	p = bpf_task_storage_get(&pend, task, 0, 0);
	if (p && p->op == IOACCT_OP_WRITE + 1)
		note_inode_writer(task, inode, p->fd, p->mnt);
	return 0;
}

SEC("tp_btf/nfs_initiate_read")
int BPF_PROG(iotrace_nfs_read, struct nfs_pgio_header___iot *hdr)
{
	/* 6.12 types these arguments trusted-or-null: no arithmetic on them before the test. */
	if (!hdr)
		return 0;
	nfs_initiate(&hdr->task, BPF_CORE_READ(hdr, inode), BPF_CORE_READ(hdr, args.offset),
		     BPF_CORE_READ(hdr, args.count), IOTRACE_RPC_FILE | IOTRACE_RPC_DATA);
	return 0;
}

SEC("tp_btf/nfs_initiate_write")
int BPF_PROG(iotrace_nfs_write, struct nfs_pgio_header___iot *hdr)
{
	if (!hdr)
		return 0;
	nfs_initiate(&hdr->task, BPF_CORE_READ(hdr, inode), BPF_CORE_READ(hdr, args.offset),
		     BPF_CORE_READ(hdr, args.count), IOTRACE_RPC_FILE | IOTRACE_RPC_DATA);
	return 0;
}

SEC("tp_btf/nfs_initiate_commit")
int BPF_PROG(iotrace_nfs_commit, struct nfs_commit_data___iot *data)
{
	if (!data)
		return 0;
	nfs_initiate(&data->task, BPF_CORE_READ(data, inode), BPF_CORE_READ(data, args.offset),
		     BPF_CORE_READ(data, args.count), IOTRACE_RPC_FILE);
	return 0;
}

/* What the submitting task was doing: the traced call pending, the file nfs_initiate_* named. */
static __always_inline void rpc_origin(struct iotrace_rpc_event *e, struct task_struct *task,
				       __u64 key)
{
	struct pending *p = bpf_task_storage_get(&pend, task, 0, 0);

	e->op = 0;
	e->fd = -1;
	e->mnt_id = 0;
	e->path[0] = '\0';
	e->flags = 0;
	e->fileid = 0;
	e->offset = -1;
	e->count = 0;
	if (!p)
		return;
	if (p->op) {
		e->op = p->op;
		e->fd = p->fd;
		e->mnt_id = p->mnt;
		/* The kernel copied the path in at the call's start: the page is there. */
		if (p->upath &&
		    bpf_probe_read_user_str(e->path, sizeof(e->path), (const char *)p->upath) <= 0)
			e->path[0] = '\0';
	}
	if (p->nfs_task == key) {
		e->flags = p->nfs_flags;
		e->fileid = p->nfs_fileid;
		e->offset = p->nfs_offset;
		e->count = p->nfs_count;
		p->nfs_task = 0;
	}
}

SEC("tp_btf/rpc_task_begin")
int BPF_PROG(iotrace_rpc_begin, struct rpc_task___iot *rt, const void *action)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct iotrace_rpc_event *e;
	__u64 key = (__u64)rt;
	__u32 zero = 0;

	if (!rt)
		return 0;
	if (!traced(task)) {
		/* nfs_writeback()'s entry for this very task; any other is an older task's. */
		e = bpf_map_lookup_elem(&rpcs, &key);
		if (e && (e->flags & IOTRACE_RPC_WRITEBACK) && !e->submit_ns)
			e->submit_ns = bpf_ktime_get_ns();
		else if (e)
			bpf_map_delete_elem(&rpcs, &key);
		return 0;
	}
	e = bpf_map_lookup_elem(&rpc_scratch, &zero);
	if (!e)
		return 0;
	e->type = IOTRACE_EV_RPC;
	e->submit_ns = bpf_ktime_get_ns();
	e->pid = task->tgid;
	e->tid = task->pid;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->cgroup = own_cgroup(task);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	rpc_origin(e, task, key);
	bpf_map_update_elem(&rpcs, &key, e, BPF_ANY);
	return 0;
}

SEC("tp_btf/rpc_stats_latency")
int BPF_PROG(iotrace_rpc_counted, struct rpc_task___iot *rt, ktime_t backlog, ktime_t rtt,
	     ktime_t execute)
{
	const struct rpc_procinfo___iot *pi;
	struct iotrace_rpc_event *o, *ev;
	struct rpc_rqst___iot *rq;
	__u64 key = (__u64)rt;
	const char *name;

	if (!rt)
		return 0;
	o = bpf_map_lookup_elem(&rpcs, &key);
	if (!o)
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count_lost();
		return 0;
	}
	if (bpf_probe_read_kernel(ev, sizeof(*ev), o)) {
		bpf_ringbuf_discard(ev, 0);
		return 0;
	}
	ev->done_ns = bpf_ktime_get_ns();
	ev->queue_ns = backlog;
	ev->rtt_ns = rtt;
	ev->execute_ns = execute;
	rq = BPF_CORE_READ(rt, tk_rqstp);
	ev->xid = bpf_ntohl(BPF_CORE_READ(rq, rq_xid));
	ev->ntrans = BPF_CORE_READ(rq, rq_ntrans);
	ev->bytes_sent = BPF_CORE_READ(rq, rq_xmit_bytes_sent);
	ev->bytes_recv = BPF_CORE_READ(rq, rq_reply_bytes_recvd);
	ev->status = BPF_CORE_READ(rt, tk_status);
	ev->prog = BPF_CORE_READ(rt, tk_client, cl_prog);
	ev->vers = BPF_CORE_READ(rt, tk_client, cl_vers);
	pi = BPF_CORE_READ(rt, tk_msg.rpc_proc);
	ev->proc = BPF_CORE_READ(pi, p_statidx);
	name = BPF_CORE_READ(pi, p_name);
	if (!name || bpf_probe_read_kernel_str(ev->name, sizeof(ev->name), name) <= 0)
		ev->name[0] = '\0';
	/* A restarted call's next round starts now (rpc_reset_task_statistics). */
	o->submit_ns = ev->done_ns;
	submit(ev);
	return 0;
}

#endif /* IOTRACE_RPC_BPF_H */
