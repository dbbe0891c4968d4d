/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A mount's key (ioacct_abi.h) from its struct vfsmount, as every object
 * that names a mount computes it: the main one (ioacct_mounts.bpf.h) and
 * the RPC object (ioacct_rpc.bpf.c). Needs KREAD (ioacct_bpf_common.h).
 */
#ifndef IOACCT_MNTKEY_BPF_H
#define IOACCT_MNTKEY_BPF_H

/*
 * Set before load when the daemon runs as on a kernel without mnt_id_unique
 * (IOACCT_MNT_IDS=legacy, daemon/mntid.c): the 32-bit ids and their notes'
 * proofs, tested on a kernel that has the unique ids. A load-time constant,
 * as bpf_core_field_exists() is: the verifier drops the branch not taken.
 */
const volatile __u32 mnt_ids_legacy = 0;

/* mnt_id_unique (6.8+), matched by name on the running kernel. */
struct mount___uniq {
	struct vfsmount mnt;
	__u64 mnt_id_unique;
} __attribute__((preserve_access_index));

/* Whether mounts are keyed by mnt_id_unique: the kernel has it and the daemon takes it. */
static __always_inline bool mount_keys_unique(void)
{
	return !mnt_ids_legacy && bpf_core_field_exists(((struct mount___uniq *)0)->mnt_id_unique);
}

/*
 * A mount's key (ioacct_abi.h): the kernel's 64-bit mnt_id_unique, which it
 * never hands out twice, where struct mount has it; else the 32-bit mnt_id,
 * which the kernel gives to the next mount as soon as this one is freed. A
 * load-time constant picks the branch: the verifier drops the other.
 */
static __always_inline __u64 mount_key(struct vfsmount *mnt)
{
	__u64 m = (__u64)mnt - bpf_core_field_offset(struct mount, mnt);

	if (!mnt)
		return 0;
	if (mount_keys_unique())
		return KREAD(struct mount___uniq, m, mnt_id_unique);
	return KREAD(struct mount, m, mnt_id);
}

#endif /* IOACCT_MNTKEY_BPF_H */
