// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The BPF object for kernels without bpf_rdonly_cast (before 6.2), which read
 * kernel memory with bpf_probe_read_kernel (bpf/ioacct_bpf_common.h, KREAD):
 * bpf/ioacct_compat.bpf.o, as it is, in read-only data. The skeleton carries
 * the other one; probes.c opens this one through the same skeleton
 * (the build checks that both have the same maps, programs and globals).
 */
#include <stddef.h>

#include "probes.h"

__asm__(".section .rodata\n"
	".balign 8\n"
	"ioacct_compat_obj_start:\n"
	".incbin \"" IOACCT_COMPAT_OBJ "\"\n"
	"ioacct_compat_obj_end:\n"
	".previous\n");

extern const char ioacct_compat_obj_start[], ioacct_compat_obj_end[];

const void *ioacct_probes_compat_obj(size_t *size)
{
	*size = (size_t)(ioacct_compat_obj_end - ioacct_compat_obj_start);
	return ioacct_compat_obj_start;
}
