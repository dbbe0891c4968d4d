/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system calls ioacct counts, the rows of IOACCT_SYSCALLS
 * (bpf/ioacct_ops.h), by the host's numbers (SYS_*): the one table the
 * daemon (daemon/probes.c) and the tracer (lib/trace/tracer.c) fill their
 * BPF object's sysmap from. Syscalls some architectures lack (arm64 has only
 * the *at forms) or older headers do not name have nr -1, which leaves them
 * out of a sysmap. No libbpf: numbers, names and ops only.
 */
#ifndef IOACCT_SYSNR_H
#define IOACCT_SYSNR_H

#include <stddef.h>
#include <stdint.h>

struct ioacct_syscall {
	long nr;           /* SYS_<name>; -1: none here */
	const char *name;  /* the kernel's name: "pread64", "newfstatat" */
	unsigned int op;   /* IOACCT_OP_* */
	unsigned int kind; /* IOACCT_SK_*, without the flags of ioacct_syscall_flags() */
};

/* IOACCT_SYSCALLS in its order, ioacct_nsyscalls rows. */
extern const struct ioacct_syscall ioacct_syscalls[];
extern const size_t ioacct_nsyscalls;

/* A sysmap entry (ioacct_abi.h): (op + 1) | kind << IOACCT_SYS_KIND_SHIFT. */
uint16_t ioacct_sysmap_entry(unsigned int op, unsigned int kind);

/*
 * The kind flags a read's name implies (IOACCT_SKF_*, the page-cache view's
 * request range): pread* take their offset as an argument (POS), *v and *v2
 * a vector of buffers (VEC). The BPF object's SYS_FLAGS says the same.
 */
unsigned int ioacct_syscall_flags(const char *name);

#endif /* IOACCT_SYSNR_H */
