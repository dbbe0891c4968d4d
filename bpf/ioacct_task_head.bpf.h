/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The head of the main object's per-task entry (struct task_ent in
 * ioacct.bpf.c): a watched task's pending call and the last file it did
 * I/O on. The RPC object (ioacct_rpc.bpf.c) shares the `tasks` map and
 * reads only this much of it; ioacct.bpf.c asserts that task_ent starts so.
 */
#ifndef IOACCT_TASK_HEAD_BPF_H
#define IOACCT_TASK_HEAD_BPF_H

struct task_ent_head {
	__u64 ts;
	__u64 mnt;      /* key of the mount the pending call targets, 0: not known at its entry */
	__u32 op;       /* pending op + 1, 0 when none */
	__u32 pslot;
	__u16 kind;
	__u16 epoch;
	__u64 upath;
	__u64 u[2];
	__u64 c_inode;  /* the last file: its inode, vfsmount and mount key */
	__u64 c_vfsmnt;
	__u64 c_mnt;
};

#endif /* IOACCT_TASK_HEAD_BPF_H */
