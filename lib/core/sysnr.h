/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's system call numbers (SYS_*) for the rows of IOACCT_SYSCALLS
 * (bpf/ioacct_ops.h), for the daemon's syscall table and the tracer's.
 * Syscalls some architectures lack (arm64 has only the *at forms) or older
 * headers do not name are -1, which leaves them out of a table.
 */
#ifndef IOACCT_SYSNR_H
#define IOACCT_SYSNR_H

#include <sys/syscall.h>

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

#endif /* IOACCT_SYSNR_H */
