// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacct's RPCs per job (issue 40): what /proc/self/mountstats counts per
 * procedure, per job slot, time bin and mount. A separate object from
 * ioacct.bpf.c: its types are the sunrpc module's (CO-RE against the
 * module's BTF), so a kernel without sunrpc loads the main object
 * unchanged, and this one when the module is there (daemon/rpcprobes.c).
 * It shares the main object's state, watch, slots and tasks maps
 * (bpf_map__reuse_fd), so an RPC counts in the slot its submitter's
 * system calls count in.
 *
 * Who an RPC belongs to is decided at rpc_task_begin, in the submitting
 * task (sync and async alike), and carried by the rpc_task's address to
 * rpc_stats_latency, which fires where the kernel adds the RPC to
 * mountstats (rpc_count_iostats_metrics()), usually in an rpciod worker,
 * once per round: a call restarted by its rpc_call_done (a short write,
 * NFS4ERR_DELAY) is counted again without a new rpc_task_begin, as
 * mountstats counts it. So the entry is never deleted there, nor at
 * rpc_task_end (rpc_exit_task() traces it before it counts the task): the
 * next rpc_task_begin at the same address replaces or deletes it, and the
 * LRU bounds what freed tasks leave.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ioacct_abi.h"
#include "ioacct_rpc_abi.h"
#include "ioacct_bpf_common.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the daemon before load. */
const volatile __u32 v1_ssid = 0;

/* The main object's maps, reused by fd: declared as it declares them. */
#include "ioacct_watch.bpf.h"
#include "ioacct_task_head.bpf.h"
#include "ioacct_mntkey.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ent_head);
} tasks SEC(".maps");

/*
 * sunrpc's and nfs's types, matched by name on the running kernel (the
 * ___io suffix keeps them apart from a vmlinux.h that has them). Integer
 * fields whose width differs between versions are read with their size
 * relocated (BPF_CORE_READ_BITFIELD_PROBED).
 */
struct rpc_procinfo___io {
	__u32 p_statidx;
	const char *p_name;
} __attribute__((preserve_access_index));

struct rpc_message___io {
	const struct rpc_procinfo___io *rpc_proc;
} __attribute__((preserve_access_index));

struct rpc_clnt___io {
	__u32 cl_prog;
	__u32 cl_vers;
	struct rpc_clnt___io *cl_parent;
} __attribute__((preserve_access_index));

struct rpc_rqst___io {
	unsigned long rq_xmit_bytes_sent;
	unsigned long rq_reply_bytes_recvd;
	int rq_ntrans;
} __attribute__((preserve_access_index));

struct rpc_task___io {
	struct rpc_clnt___io *tk_client;
	struct rpc_rqst___io *tk_rqstp;
	struct rpc_message___io tk_msg;
	void *tk_calldata;
	int tk_status;
} __attribute__((preserve_access_index));

struct nfs_client___io {
	struct rpc_clnt___io *cl_rpcclient;
} __attribute__((preserve_access_index));

struct nfs_server___io {
	struct nfs_client___io *nfs_client;
	struct rpc_clnt___io *client;
	struct rpc_clnt___io *client_acl; /* NFSv3's NFSACL (CONFIG_NFS_V3_ACL) */
} __attribute__((preserve_access_index));

struct nfs_pgio_header___io {
	struct inode *inode;
} __attribute__((preserve_access_index));

struct nfs_commit_data___io {
	struct inode *inode;
} __attribute__((preserve_access_index));

/* An NFSv4 CLOSE's calldata (the nfsv4 module's). */
struct nfs4_closedata___io {
	struct inode *inode;
} __attribute__((preserve_access_index));

#define NFS_SUPER_MAGIC 0x6969

/* This object's own maps (ioacct_rpc_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_rpc_key);
	__type(value, struct ioacct_rpc_val);
} rpcstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ioacct_rpc_ukey);
	__type(value, struct ioacct_rpc_val);
} rpcunattr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ioacct_rpc_ckey);
	__type(value, struct ioacct_rpc_cval);
} clntmnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct ioacct_rpc_nkey);
	__type(value, struct ioacct_rpc_name);
} rpcnames SEC(".maps");

/* An rpc_task in flight that a watched task submitted: its slot, the slot's job and the mount. */
struct rpc_owner {
	__u64 start_ns; /* the slot's job start when submitted: a reused slot is another job */
	__u64 mnt_id;
	__u32 slot;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rpc_owner);
} owners SEC(".maps");

/*
 * RPCs another thread sends for a job's file. inodes notes an NFS inode's
 * job: its dirtier when its pages first make it dirty
 * (writeback_dirty_inode_enqueue, in the dirtying task), its reader when a
 * watched task reads it (nfs_initiate_read). Background writeback (the
 * flusher writes what a job dirtied): nfs_initiate_write and _commit, in
 * whichever thread writes it back, put the inode's job in wbnext for the
 * thread's next rpc_task_begin, which follows at once (nfs_initiate_pgio,
 * nfs_initiate_commit -> rpc_run_task). A CLOSE a kworker sends when the
 * file's last reference goes with a read's or write's completion (after the
 * job's close returned): its inode's job. These programs are loaded only
 * when the nfs module is (daemon/rpcprobes.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rpc_owner);
} inodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct rpc_owner);
} wbnext SEC(".maps");

/* lost[slot]: RPCs of the slot that found rpcstats full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * Whether the vfsmount's super block is an NFS mount whose RPCs go through
 * clnt (its server's client, or that client's nfs_client's, or NFSv3's
 * NFSACL client: a create's GETACL). Without the nfs module's types (not
 * loaded when this object was), nothing is.
 */
static __always_inline bool mount_on_clnt(__u64 vfsmnt, __u64 clnt)
{
	struct nfs_server___io *srv;
	struct super_block *sb;

	if (!bpf_core_type_exists(struct nfs_server___io) || !vfsmnt)
		return false;
	sb = BPF_CORE_READ((struct vfsmount *)vfsmnt, mnt_sb);
	if (!sb || BPF_CORE_READ(sb, s_magic) != NFS_SUPER_MAGIC)
		return false;
	srv = BPF_CORE_READ(sb, s_fs_info);
	return srv && ((__u64)BPF_CORE_READ(srv, client) == clnt ||
		       (__u64)BPF_CORE_READ(srv, nfs_client, cl_rpcclient) == clnt ||
		       (bpf_core_field_exists(srv->client_acl) &&
			(__u64)BPF_CORE_READ(srv, client_acl) == clnt));
}

/* Notes that slot's tasks use clnt for the mount of key mnt, with the client's parents. */
static __noinline void clnt_learn(__u64 clnt, __u32 slot, __u64 mnt)
{
	struct ioacct_rpc_ckey ck = { .clnt = clnt, .slot = slot };
	struct ioacct_rpc_cval cv = { .mnt_id = mnt }, *known = bpf_map_lookup_elem(&clntmnt, &ck);
	struct rpc_clnt___io *c = (struct rpc_clnt___io *)clnt;

	if (known && known->mnt_id == mnt)
		return;
	for (int i = 0; i < IOACCT_RPC_ANCESTORS; i++) {
		struct rpc_clnt___io *p = BPF_CORE_READ(c, cl_parent);

		if (!p || p == c)
			break;
		cv.anc[i] = (__u64)p;
		c = p;
	}
	bpf_map_update_elem(&clntmnt, &ck, &cv, BPF_ANY);
}

/*
 * The mount of an RPC the current task submits, on this client's NFS
 * mount: its pending system call's when that is on its last file (a write's
 * flush, a read, an fsync); else the mount its path walk is on (a lookup,
 * an open's OPEN: the call's mount is known only at its exit); each learnt
 * for {clnt, slot}. Else the mount learnt (a stat's GETATTR after its
 * walk), else its last file's, else 0 (the daemon looks at clntmnt again
 * when it drains).
 */
static __always_inline __u64 rpc_mount(struct task_struct *task, struct ioacct_state *st,
				       struct rpc_clnt___io *clnt, __u32 slot)
{
	struct ioacct_rpc_ckey ck = { .clnt = (__u64)clnt, .slot = slot };
	struct ioacct_rpc_cval *known = bpf_map_lookup_elem(&clntmnt, &ck);
	struct task_ent_head *t = bpf_task_storage_get(&tasks, task, 0, 0);
	struct vfsmount *walk;
	__u64 mnt;

	if (t && t->c_mnt && t->op && t->pslot == slot && t->epoch == (__u16)st->epoch &&
	    t->mnt == t->c_mnt && mount_on_clnt(t->c_vfsmnt, (__u64)clnt)) {
		clnt_learn((__u64)clnt, slot, t->c_mnt);
		return t->c_mnt;
	}
	/* In a path walk (a lookup, an open's OPEN): the mount it is on. */
	walk = BPF_CORE_READ(task, nameidata, path.mnt);
	if (walk && mount_on_clnt((__u64)walk, (__u64)clnt) && (mnt = mount_key(walk))) {
		clnt_learn((__u64)clnt, slot, mnt);
		return mnt;
	}
	if (!known && t && t->c_mnt && mount_on_clnt(t->c_vfsmnt, (__u64)clnt)) {
		clnt_learn((__u64)clnt, slot, t->c_mnt);
		return t->c_mnt;
	}
	return known ? known->mnt_id : 0;
}

/*
 * The current task's job: the slot of its watched cgroup while the slot is
 * active, and the slot's job start. 0: none (nothing watched: *stp NULL).
 */
static __always_inline int task_owner(struct task_struct *task, struct rpc_owner *o,
				      struct ioacct_state **stp)
{
	struct ioacct_state *st;
	struct ioacct_slot *s;
	__u32 zero = 0;

	*stp = st = bpf_map_lookup_elem(&state, &zero);
	if (!st || !st->nactive) {
		*stp = NULL;
		return 0;
	}
	o->slot = task_watched_slot(task, st, v1_ssid);
	s = o->slot == IOACCT_SLOT_NONE ? NULL : bpf_map_lookup_elem(&slots, &o->slot);
	if (!s || !s->active)
		return 0;
	o->start_ns = s->start_ns;
	return 1;
}

/* An NFSv4 CLOSE's inode, else 0. */
static __always_inline __u64 close_inode(struct rpc_task___io *rt)
{
	const struct rpc_procinfo___io *pi = BPF_CORE_READ(rt, tk_msg.rpc_proc);
	struct nfs4_closedata___io *cd;
	char name[8] = {};

	if (!bpf_core_type_exists(struct nfs4_closedata___io) || !pi ||
	    BPF_CORE_READ(rt, tk_client, cl_vers) != 4 ||
	    bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(pi, p_name)) != 6 ||
	    name[0] != 'C' || name[1] != 'L' || name[2] != 'O' || name[3] != 'S' || name[4] != 'E')
		return 0;
	cd = BPF_CORE_READ(rt, tk_calldata);
	return cd ? (__u64)BPF_CORE_READ(cd, inode) : 0;
}

/*
 * An RPC a thread of no watched job submits: the writeback of a job's pages
 * when nfs_initiate_write or _commit said so just before in this thread, or
 * the CLOSE of a job's file.
 */
static __noinline int wb_begin(__u64 key, __u64 task)
{
	struct rpc_task___io *rt = (struct rpc_task___io *)task;
	struct rpc_clnt___io *clnt = BPF_CORE_READ(rt, tk_client);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct rpc_owner *w = bpf_map_lookup_elem(&wbnext, &tid), o;
	__u64 inode;

	if (w) {
		o = *w;
		bpf_map_delete_elem(&wbnext, &tid);
	} else if ((inode = close_inode(rt)) && (w = bpf_map_lookup_elem(&inodes, &inode))) {
		o = *w;
	} else {
		/* An rpc_task where one that was never counted lay: not its owner. */
		bpf_map_delete_elem(&owners, &key);
		return 0;
	}
	if (o.slot == IOACCT_SLOT_NONE) {
		bpf_map_delete_elem(&owners, &key);
		return 0;
	}
	if (!o.mnt_id) {
		struct ioacct_rpc_ckey ck = { .clnt = (__u64)clnt, .slot = o.slot };
		struct ioacct_rpc_cval *cv = bpf_map_lookup_elem(&clntmnt, &ck);

		o.mnt_id = cv ? cv->mnt_id : 0;
	}
	bpf_map_update_elem(&owners, &key, &o, BPF_ANY);
	return 0;
}

SEC("raw_tp/rpc_task_begin")
int BPF_PROG(ioacct_rpc_begin, struct rpc_task___io *rt)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rpc_owner o = {};
	struct ioacct_state *st;
	__u64 key = (__u64)rt;

	if (!task_owner(task, &o, &st))
		/* A thread of no job (or of a step finishing): a job's writeback or CLOSE? */
		return st ? wb_begin(key, (__u64)rt) : 0;
	o.mnt_id = rpc_mount(task, st, BPF_CORE_READ(rt, tk_client), o.slot);
	bpf_map_update_elem(&owners, &key, &o, BPF_ANY);
	return 0;
}

static __always_inline void val_add(struct ioacct_rpc_val *v, const struct ioacct_rpc_val *d)
{
	v->calls += d->calls;
	v->bytes_sent += d->bytes_sent;
	v->bytes_recv += d->bytes_recv;
	v->queue_ns += d->queue_ns;
	v->rtt_ns += d->rtt_ns;
	v->execute_ns += d->execute_ns;
	v->errors += d->errors;
	v->retrans += d->retrans;
}

/* Per-CPU values: a plain add; a new key is inserted, and added to if another CPU made it first. */
static __always_inline int val_put(void *map, const void *key, const struct ioacct_rpc_val *d)
{
	struct ioacct_rpc_val *v = bpf_map_lookup_elem(map, key);

	if (v) {
		val_add(v, d);
		return 0;
	}
	if (!bpf_map_update_elem(map, key, d, BPF_NOEXIST))
		return 0;
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		return -1;
	val_add(v, d);
	return 0;
}

/* The procedure's name, once per (program, version, procedure). */
static __always_inline void name_note(const struct ioacct_rpc_nkey *nk,
				      const struct rpc_procinfo___io *pi)
{
	struct ioacct_rpc_name n = {};
	const char *p;

	if (bpf_map_lookup_elem(&rpcnames, nk))
		return;
	p = BPF_CORE_READ(pi, p_name);
	if (!p || bpf_probe_read_kernel_str(n.name, sizeof(n.name), p) <= 0)
		return;
	bpf_map_update_elem(&rpcnames, nk, &n, BPF_NOEXIST);
}

/*
 * The kernel has just added this request to the client's mountstats
 * (rpc_count_iostats_metrics()): the same numbers, here per job.
 */
SEC("raw_tp/rpc_stats_latency")
int BPF_PROG(ioacct_rpc_count, struct rpc_task___io *rt, __s64 backlog, __s64 rtt, __s64 execute)
{
	const struct rpc_procinfo___io *pi = BPF_CORE_READ(rt, tk_msg.rpc_proc);
	struct rpc_clnt___io *clnt = BPF_CORE_READ(rt, tk_client);
	struct rpc_rqst___io *rq = BPF_CORE_READ(rt, tk_rqstp);
	struct ioacct_rpc_nkey nk = {};
	struct ioacct_rpc_val d = {};
	struct rpc_owner *o;
	struct ioacct_slot *s;
	struct ioacct_state *st;
	__u64 key = (__u64)rt;
	__u32 zero = 0;
	int ntrans;

	st = bpf_map_lookup_elem(&state, &zero);
	if (!st || !st->nactive || !pi || !clnt || !rq)
		return 0;
	nk.prog = BPF_CORE_READ(clnt, cl_prog);
	nk.vers = BPF_CORE_READ(clnt, cl_vers);
	nk.proc = BPF_CORE_READ(pi, p_statidx);
	ntrans = BPF_CORE_READ_BITFIELD_PROBED(rq, rq_ntrans);
	d.calls = 1;
	d.bytes_sent = BPF_CORE_READ_BITFIELD_PROBED(rq, rq_xmit_bytes_sent);
	d.bytes_recv = BPF_CORE_READ_BITFIELD_PROBED(rq, rq_reply_bytes_recvd);
	d.queue_ns = backlog;
	d.rtt_ns = rtt;
	d.execute_ns = execute;
	d.errors = BPF_CORE_READ(rt, tk_status) < 0;
	d.retrans = ntrans > 1 ? ntrans - 1 : 0;
	name_note(&nk, pi);

	o = bpf_map_lookup_elem(&owners, &key);
	s = o ? bpf_map_lookup_elem(&slots, &o->slot) : NULL;
	if (o && s && s->active && s->start_ns == o->start_ns && s->width_ns) {
		struct ioacct_rpc_key k = {
			.slot = o->slot, .prog = nk.prog, .vers = nk.vers, .proc = nk.proc,
			.mnt_id = o->mnt_id, .clnt = (__u64)clnt,
		};
		__u64 now = bpf_ktime_get_ns();
		__u32 slot = o->slot;

		k.bin = now > s->start_ns ? (now - s->start_ns) / s->width_ns : 0;
		if (!k.mnt_id) {
			struct ioacct_rpc_ckey ck = { .clnt = (__u64)clnt, .slot = slot };
			struct ioacct_rpc_cval *cv = bpf_map_lookup_elem(&clntmnt, &ck);

			if (cv)
				k.mnt_id = cv->mnt_id;
		}
		if (val_put(&rpcstats, &k, &d)) {
			__u64 *n = bpf_map_lookup_elem(&lost, &slot);

			if (n)
				__sync_fetch_and_add(n, 1);
		}
		return 0;
	}
	/* Submitted by no job, or by one finished since: the mount's own. */
	struct ioacct_rpc_ukey uk = { .clnt = (__u64)clnt, .prog = nk.prog, .vers = nk.vers,
				      .proc = nk.proc };

	val_put(&rpcunattr, &uk, &d);
	return 0;
}


/* A watched task's write makes an NFS inode dirty: the job it belongs to, for its writeback. */
SEC("raw_tp/writeback_dirty_inode_enqueue")
int BPF_PROG(ioacct_rpc_dirty, struct inode *inode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rpc_owner o = {};
	struct task_ent_head *t;
	struct ioacct_state *st;
	__u64 key = (__u64)inode;

	if (BPF_CORE_READ(inode, i_sb, s_magic) != NFS_SUPER_MAGIC || !task_owner(task, &o, &st))
		return 0;
	/* The mount of the write that dirties it: the task's last file is this inode. */
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (t && t->c_inode == key && t->c_mnt) {
		struct nfs_server___io *srv = BPF_CORE_READ(inode, i_sb, s_fs_info);

		o.mnt_id = t->c_mnt;
		/* Its client's mount for this slot: the job's other RPCs on it (its OPEN, its close's). */
		if (bpf_core_type_exists(struct nfs_server___io) && srv)
			clnt_learn((__u64)BPF_CORE_READ(srv, client), o.slot, o.mnt_id);
	}
	bpf_map_update_elem(&inodes, &key, &o, BPF_ANY);
	return 0;
}

/* The thread's next RPC writes back inode: its dirtier's, if a job's. */
static __always_inline int wb_next(struct inode *inode)
{
	struct rpc_owner n = { .slot = IOACCT_SLOT_NONE }, *o;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct ioacct_state *st = bpf_map_lookup_elem(&state, &zero);
	__u64 key = (__u64)inode;

	if (!st || !st->nactive)
		return 0;
	o = bpf_map_lookup_elem(&inodes, &key);
	if (o)
		n = *o;
	bpf_map_update_elem(&wbnext, &tid, &n, BPF_ANY);
	return 0;
}

SEC("raw_tp/nfs_initiate_write")
int BPF_PROG(ioacct_rpc_wb_write, struct nfs_pgio_header___io *hdr)
{
	return wb_next(BPF_CORE_READ(hdr, inode));
}

SEC("raw_tp/nfs_initiate_commit")
int BPF_PROG(ioacct_rpc_wb_commit, struct nfs_commit_data___io *data)
{
	return wb_next(BPF_CORE_READ(data, inode));
}

/* A watched task reads an NFS file: its job, for the file's CLOSE should a kworker send it. */
SEC("raw_tp/nfs_initiate_read")
int BPF_PROG(ioacct_rpc_rd, struct nfs_pgio_header___io *hdr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 key = (__u64)BPF_CORE_READ(hdr, inode);
	struct rpc_owner o = {}, *was;
	struct task_ent_head *t;
	struct ioacct_state *st;

	if (!task_owner(task, &o, &st))
		return 0;
	was = bpf_map_lookup_elem(&inodes, &key);
	if (was && was->slot == o.slot && was->start_ns == o.start_ns)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (t && t->c_inode == key)
		o.mnt_id = t->c_mnt;
	bpf_map_update_elem(&inodes, &key, &o, BPF_ANY);
	return 0;
}
