/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What ioacct_rpc.bpf.c (the RPCs per job, issue 40) and the daemon
 * (daemon/rpcprobes.c) share. Plain structs and constants, no includes:
 * the includer has the __u32/__u64 types (vmlinux.h or linux/types.h).
 */
#ifndef IOACCT_RPC_ABI_H
#define IOACCT_RPC_ABI_H

#define IOACCT_RPC_PNAME_MAX 32 /* IOACCT_RPC_NAME_MAX of model.h */
#define IOACCT_RPC_ANCESTORS 4  /* a client's parents noted (cl_parent: mountstats sums them) */

/*
 * mountstats' per-procedure counters, in the order of IOACCT_RPC_COUNTERS
 * (model.h): the daemon asserts it.
 */
struct ioacct_rpc_val {
	__u64 calls;
	__u64 bytes_sent;
	__u64 bytes_recv;
	__u64 queue_ns;
	__u64 rtt_ns;
	__u64 execute_ns;
	__u64 errors;
	__u64 retrans;
};

/*
 * rpcstats: a job's RPCs per (slot, time bin, mount, program, version,
 * procedure). mnt_id 0: the mount was not known when counted; the daemon
 * takes it from clntmnt by clnt, which the counting learnt later.
 */
struct ioacct_rpc_key {
	__u32 slot;
	__u32 bin;
	__u32 prog;
	__u32 vers;
	__u32 proc;
	__u32 pad;
	__u64 mnt_id;
	__u64 clnt;   /* struct rpc_clnt * */
};

/* rpcunattr: RPCs no watched task submitted, per (client, program, version, procedure). */
struct ioacct_rpc_ukey {
	__u64 clnt;
	__u32 prog;
	__u32 vers;
	__u32 proc;
	__u32 pad;
};

/*
 * clntmnt: {client, slot} -> the mount the slot's tasks were last seen
 * using that client for, and the client's parents (their RPCs are in the
 * mount's mountstats too).
 */
struct ioacct_rpc_ckey {
	__u64 clnt;
	__u32 slot;
	__u32 pad;
};

struct ioacct_rpc_cval {
	__u64 mnt_id;
	__u64 anc[IOACCT_RPC_ANCESTORS]; /* cl_parent, its parent...; 0 past the root */
};

/* rpcnames: {program, version, procedure} -> the kernel's name of it (p_name). */
struct ioacct_rpc_nkey {
	__u32 prog;
	__u32 vers;
	__u32 proc;
	__u32 pad;
};

struct ioacct_rpc_name {
	char name[IOACCT_RPC_PNAME_MAX];
};

#endif /* IOACCT_RPC_ABI_H */
