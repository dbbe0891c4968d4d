/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The syscall table: sysnr.h. */
#include "sysnr.h"

#include <linux/types.h>
#include <string.h>
#include <sys/syscall.h>

#include "ioacct_abi.h"
#include "ioacct_ops.h"
#include "util.h"

/* Syscalls this architecture or these headers do not have: left out of every sysmap. */
#ifndef SYS_open
#define SYS_open -1
#endif
#ifndef SYS_creat
#define SYS_creat -1
#endif
#ifndef SYS_openat2
#define SYS_openat2 -1
#endif
#ifndef SYS_mkdir
#define SYS_mkdir -1
#endif
#ifndef SYS_unlink
#define SYS_unlink -1
#endif
#ifndef SYS_rmdir
#define SYS_rmdir -1
#endif
#ifndef SYS_rename
#define SYS_rename -1
#endif
#ifndef SYS_renameat
#define SYS_renameat -1
#endif
#ifndef SYS_stat
#define SYS_stat -1
#endif
#ifndef SYS_lstat
#define SYS_lstat -1
#endif
#ifndef SYS_newfstatat
#define SYS_newfstatat -1
#endif
#ifndef SYS_io_pgetevents
#define SYS_io_pgetevents -1
#endif

#define SYS(name, uname, op, kind) { SYS_##uname, #uname, IOACCT_OP_##op, IOACCT_SK_##kind },
const struct ioacct_syscall ioacct_syscalls[] = { IOACCT_SYSCALLS(SYS) };
#undef SYS
const size_t ioacct_nsyscalls = ARRAY_SIZE(ioacct_syscalls);

uint16_t ioacct_sysmap_entry(unsigned int op, unsigned int kind)
{
	return (uint16_t)((op + 1) | kind << IOACCT_SYS_KIND_SHIFT);
}

unsigned int ioacct_syscall_flags(const char *name)
{
	size_t n = strlen(name);
	unsigned int f = 0;

	if (!strncmp(name, "pread", 5) || !strncmp(name, "pwrite", 6))
		f |= IOACCT_SKF_POS;
	if (!strcmp(name, "statx"))
		f |= IOACCT_SKF_STATX;
	if (n >= 2 && (name[n - 1] == 'v' || (name[n - 1] == '2' && name[n - 2] == 'v')))
		f |= IOACCT_SKF_VEC;
	return f;
}
