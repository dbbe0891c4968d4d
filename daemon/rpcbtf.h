/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's types for the RPC object's CO-RE relocations when the
 * daemon may not read the modules' BTF through bpf() (issue 40). libbpf
 * finds a module's types by BPF_BTF_GET_NEXT_ID and BPF_BTF_GET_FD_BY_ID,
 * which need CAP_SYS_ADMIN; ioacctd gives it up after its start (privs.h),
 * so a sunrpc module loaded later (the first NFS mount) could not be
 * relocated against. The same types are in /sys/kernel/btf, which anyone
 * may read: vmlinux's and the named modules' are merged there into one BTF,
 * which libbpf takes as btf_custom_path (it then looks for no module BTF).
 */
#ifndef IOACCT_RPCBTF_H
#define IOACCT_RPCBTF_H

#include <stdbool.h>
#include <stddef.h>

/* Whether libbpf can read the modules' BTF through bpf() (false: EPERM). */
bool ioacct_rpcbtf_bpf_readable(void);

/*
 * vmlinux's types and those of each module of the NULL-terminated list
 * that is loaded, in one BTF in a memory file: its descriptor (to close
 * once the object is loaded) and its path in path; -errno on failure.
 */
int ioacct_rpcbtf_merge(const char *const *modules, char *path, size_t len);

#endif /* IOACCT_RPCBTF_H */
