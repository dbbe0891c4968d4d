/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the ELF worker's reading of HDF5 libraries (daemon/elfw.c,
 * issue 39) on the real files of this machine: Debian's 1.10.8 serial and
 * OpenMPI builds have the layouts their reads and writes are sized with
 * (H5D__read and H5D__write probed, not the three mov-first functions: a
 * test that fails when that cheap path would silently fall back), and
 * which of them has the MPI-IO driver, asked at H5F_open's return there
 * (f->shared->lf->feature_flags, H5F_has_feature's loads, not that
 * mov-first function); an upstream 1.14 (IOACCT_HDF5_PREFIX, IOACCT_HDF5_MPI_PREFIX,
 * opt-in) has not 1.10's reads' and writes' layouts (the fallback) but its selection and
 * chunk layouts, read from its code, and its multi-dataset calls. A library absent here
 * is skipped, and said.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libelf.h>
#include <linux/types.h>

#include "ioacct_h5_abi.h"
#include "ioacct_mpi_abi.h"
#include "proto.h"
#include "wside.h"

#define DEBIAN_SERIAL "/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103"
#define DEBIAN_OPENMPI "/usr/lib/x86_64-linux-gnu/libhdf5_openmpi.so.103"

/* What 1.10.8's code says (objdump): H5D_typeof, H5D__write's NULL file space, H5S_get_select_npoints, H5T_get_size. */
#define DEBIAN_DIO IOACCT_H5_DIO_WORD(0x30, 0x20, 0x18, 0x160, 0x28, 0x10)
/* H5F_has_feature's loads in both (objdump): mov 0x18(%rdi),%rax; mov (%rax),%rax; test %esi,0x20(%rax). */
#define DEBIAN_FEAT IOACCT_H5_FEAT_WORD(0x18, 0, 0x20)

/* The worker's answer for the file at path (parsed as a library); 0, or -1 with the test skipped. */
static int parse(const char *path, struct ioacct_reply *rep)
{
	struct ioacct_request req = { .type = IOACCT_MSG_W_ELF };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		print_message("%s: %s: skipped\n", path, strerror(errno));
		return -1;
	}
	memset(rep, 0, sizeof(*rep));
	assert_int_equal(elf_version(EV_CURRENT), EV_CURRENT);
	assert_int_equal(ioacct_worker_elf.serve(NULL, &req, &fd, 1, rep), 0);
	close(fd);
	assert_int_equal(rep->status, 0);
	assert_int_equal(rep->w.code, IOACCT_MPI_HDF5);
	return 0;
}

static size_t func(const char *name)
{
	static const char *const names[] = {
#define H5_FUNC(sym, kind) #sym,
		IOACCT_H5_FUNCS(H5_FUNC)
#undef H5_FUNC
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i], name))
			return i;
	fail_msg("%s is not in IOACCT_H5_FUNCS", name);
	return 0;
}

/* Debian's serial 1.10.8: the layouts read, no MPI-IO driver. */
static void test_debian_serial(void **state)
{
	struct ioacct_reply rep;

	(void)state;
	if (parse(DEBIAN_SERIAL, &rep))
		skip();
	assert_true(rep.w.offsets[func("H5D__read")]);
	assert_true(rep.w.offsets[func("H5D__write")]);
	assert_int_equal(rep.w.offsets[IOACCT_H5_DIO_LAYOUT], DEBIAN_DIO);
	assert_int_equal(IOACCT_H5_DIO_NELEM(rep.w.offsets[IOACCT_H5_DIO_LAYOUT]), 0x160);
	assert_int_equal(IOACCT_H5_DIO_SPACE(rep.w.offsets[IOACCT_H5_DIO_LAYOUT]), 0x20);
	assert_int_equal(rep.w.offsets[IOACCT_H5_LIB_FLAGS], 0);
	/* Read, not used: no MPI-IO driver, neither H5F_open nor H5F_has_feature probed. */
	assert_int_equal(rep.w.offsets[IOACCT_H5_FEAT_LAYOUT], DEBIAN_FEAT);
	/* The layouts read before, unchanged. */
	assert_int_equal(rep.w.offsets[IOACCT_H5_SEL_LAYOUT], IOACCT_H5_SEL_WORD(0x50, 0, 0x168, 0));
	assert_int_equal(rep.w.offsets[IOACCT_H5_CHUNK_LAYOUT] & IOACCT_H5_LAYOUT_OK,
			 IOACCT_H5_LAYOUT_OK);
	/* 1.14's multi-dataset calls: not in 1.10. */
	assert_int_equal(rep.w.offsets[func("H5Dwrite_multi")], 0);
	assert_int_equal(rep.w.offsets[func("H5Dread_multi")], 0);
}

/* Debian's OpenMPI 1.10.8: the same layouts, and the MPI-IO driver, asked at H5F_open's return. */
static void test_debian_openmpi(void **state)
{
	struct ioacct_reply rep;

	(void)state;
	if (parse(DEBIAN_OPENMPI, &rep))
		skip();
	assert_int_equal(rep.w.offsets[IOACCT_H5_DIO_LAYOUT], DEBIAN_DIO);
	assert_int_equal(rep.w.offsets[IOACCT_H5_LIB_FLAGS], IOACCT_H5_LIB_MPIO);
	assert_true(rep.w.offsets[func("H5F_has_feature")]);
	assert_true(rep.w.offsets[func("H5F_open")]);
	assert_int_equal(rep.w.offsets[IOACCT_H5_FEAT_LAYOUT], DEBIAN_FEAT);
	assert_int_equal(IOACCT_H5_FEAT_SHARED(rep.w.offsets[IOACCT_H5_FEAT_LAYOUT]), 0x18);
	assert_int_equal(IOACCT_H5_FEAT_LF(rep.w.offsets[IOACCT_H5_FEAT_LAYOUT]), 0);
	assert_int_equal(IOACCT_H5_FEAT_FLAGS(rep.w.offsets[IOACCT_H5_FEAT_LAYOUT]), 0x20);
}

/*
 * An upstream 1.14 under the prefix the environment variable var names
 * (opt-in), with the MPI-IO driver or not: its reads' and writes' code is
 * not 1.10's, the sizes from the functions; its selection kinds and chunk
 * sizes read; its multi-dataset calls there.
 */
static void upstream_114(const char *var, uint64_t flags)
{
	const char *prefix = getenv(var);
	struct ioacct_reply rep;
	char path[4096];

	if (!prefix || !*prefix) {
		print_message("opt-in: %s names an HDF5 1.14 install: skipped\n", var);
		skip();
	}
	snprintf(path, sizeof(path), "%s/lib/libhdf5.so", prefix);
	if (parse(path, &rep))
		skip();
	assert_int_equal(rep.w.offsets[IOACCT_H5_LIB_FLAGS], flags);
	assert_int_equal(rep.w.offsets[IOACCT_H5_DIO_LAYOUT], 0);
	assert_true(rep.w.offsets[func("H5S_get_select_npoints")]);
	/*
	 * Its H5F_has_feature is 1.10's code (0x10, 0, 0x20), but its H5F_open
	 * returns an herr_t and its H5Fcreate and H5Fopen do not call it: not
	 * read, H5F_has_feature probed (MPI builds).
	 */
	assert_true(rep.w.offsets[func("H5F_open")]);
	assert_int_equal(rep.w.offsets[IOACCT_H5_FEAT_LAYOUT], 0);
	/*
	 * Its selection and chunk layouts are read from its code (objdump of
	 * 1.14.6, serial and OpenMPI: H5S_get_select_type "mov 0x50(%rdi),%rax;
	 * mov (%rax),%eax", H5Sis_regular_hyperslab's inlined "mov
	 * 0x168(%rbx),%rax; mov (%rax),%eax; cmp $1", H5D__chunk_set_info "mov
	 * 0x30(%rdi),%rdi; mov 0x9cc(%rdi),%esi; ...; add $0x108,%rdi" and its
	 * callee's "mov 0xc(%rbx,%rcx,4),%edi"): 1.10.8's offsets.
	 */
	assert_int_equal(rep.w.offsets[IOACCT_H5_SEL_LAYOUT], IOACCT_H5_SEL_WORD(0x50, 0, 0x168, 0));
	assert_int_equal(rep.w.offsets[IOACCT_H5_CHUNK_LAYOUT],
			 IOACCT_H5_CHUNK_WORD(0x30, 0x9cc, 0x108 + 0xc));
	assert_true(rep.w.offsets[func("H5Dwrite_multi")]);
	assert_true(rep.w.offsets[func("H5Dread_multi")]);
}

static void test_upstream_114(void **state)
{
	(void)state;
	upstream_114("IOACCT_HDF5_PREFIX", 0);
}

static void test_upstream_114_mpi(void **state)
{
	(void)state;
	upstream_114("IOACCT_HDF5_MPI_PREFIX", IOACCT_H5_LIB_MPIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_serial),
		cmocka_unit_test(test_debian_openmpi),
		cmocka_unit_test(test_upstream_114),
		cmocka_unit_test(test_upstream_114_mpi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
