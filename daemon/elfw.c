// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ELF worker (worker.h; issue 37): an MPI or HDF5 library a job's task opened
 * (or the program it executed, for HDF5 linked into it),
 * checked by the core (mpiprobes.c: a regular file of root's that only root
 * may write) and handed over as a descriptor, is parsed here with libelf:
 * which library it is, and where each MPI-IO (or HDF5) function is in the file for
 * its uprobes. The parse runs without privileges and under a filter that
 * lets it do nothing but read the descriptor and answer; the core attaches
 * the uprobes by offset to the file it checked.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ioacct_h5_abi.h"
#include "ioacct_mpi_abi.h"
#include "sandbox.h"
#include "util.h"
#include "wside.h"

static const char *const funcs[] = {
#define MPI_FUNC(sym, kind, cls, at) #sym,
	IOACCT_MPI_FUNCS(MPI_FUNC)
#undef MPI_FUNC
};
_Static_assert(ARRAY_SIZE(funcs) <= IOACCT_PROTO_OFFSETS_MAX, "a w_elf reply holds every offset");

static const char *const h5funcs[] = {
#define H5_FUNC(sym, kind) #sym,
	IOACCT_H5_FUNCS(H5_FUNC)
#undef H5_FUNC
};
_Static_assert(ARRAY_SIZE(h5funcs) <= IOACCT_PROTO_OFFSETS_MAX, "a w_elf reply holds every offset");

/* A symbol's value in the ELF file's table of type (SHT_DYNSYM, SHT_SYMTAB); 0 when absent. */
static GElf_Sym elf_sym_in(Elf *elf, const char *name, GElf_Word type)
{
	GElf_Sym none = { 0 }, sym;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name))
				return sym;
		}
	}
	return none;
}

static GElf_Sym elf_sym(Elf *elf, const char *name)
{
	return elf_sym_in(elf, name, SHT_DYNSYM);
}

/* The 8 bytes at virtual address addr of the file, from its section's contents. */
static int elf_u64_at(Elf *elf, int fd, uint64_t addr, uint64_t *v)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr + 8 > sh.sh_addr + sh.sh_size)
			continue;
		return pread(fd, v, 8, (off_t)(sh.sh_offset + addr - sh.sh_addr)) == 8 ? 0 : -EIO;
	}
	return -ENOENT;
}

/*
 * A function symbol's offset in the file, for a uprobe; 0 when absent. A
 * program's own functions (HDF5 linked into it: h5cc's default) are in
 * its .symtab only, unless it exports them: searched when all is true.
 */
static uint64_t elf_func_offset(Elf *elf, const char *name, bool all)
{
	GElf_Sym sym = elf_sym(elf, name);
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (!sym.st_value && all)
		sym = elf_sym_in(elf, name, SHT_SYMTAB);
	if (!sym.st_value || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
	    !(scn = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(scn, &sh) ||
	    sym.st_value < sh.sh_addr)
		return 0;
	return sym.st_value - sh.sh_addr + sh.sh_offset;
}

/*
 * Which library this is, by its symbols, and where each function is in it
 * (off[i], 0 when absent), found once: libbpf, given a function's name,
 * reads the whole file's symbols again for each probe, which made an
 * attach take seconds on a loaded machine while the ranks went on to their
 * first calls. OpenMPI's datatype layout is checked on the file itself:
 * its predefined MPI_INT and MPI_DOUBLE must have sizes 4 and 8 where the
 * probes will read a datatype's size; a build of another layout counts
 * calls with bytes unknown rather than wrong bytes. An HDF5 library (it
 * defines H5Dwrite; issue 39) has the offsets of IOACCT_H5_FUNCS instead,
 * and so has a program (exe) that HDF5 is linked into; any other program
 * is UNKNOWN, its file parsed for H5Dwrite alone.
 */
static enum ioacct_mpi_flavour lib_flavour(int fd, uint64_t *off, bool exe)
{
	enum ioacct_mpi_flavour fl = IOACCT_MPI_UNKNOWN;
	uint64_t i4 = 0, d8 = 0;
	GElf_Sym si, sd;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);

	if (!elf)
		return fl;
	if (exe) {
		/* A program: HDF5 linked in, or nothing to probe (MPI is a library). */
		fl = elf_func_offset(elf, "H5Dwrite", true) ? IOACCT_MPI_HDF5 : IOACCT_MPI_UNKNOWN;
		for (size_t i = 0; fl == IOACCT_MPI_HDF5 && i < ARRAY_SIZE(h5funcs); i++)
			off[i] = elf_func_offset(elf, h5funcs[i], true);
		elf_end(elf);
		return fl;
	}
	si = elf_sym(elf, "ompi_mpi_int");
	sd = elf_sym(elf, "ompi_mpi_double");
	if (si.st_value && sd.st_value && !elf_u64_at(elf, fd, si.st_value + IOACCT_OMPI_DT_SIZE_OFF, &i4) &&
	    !elf_u64_at(elf, fd, sd.st_value + IOACCT_OMPI_DT_SIZE_OFF, &d8) && i4 == 4 && d8 == 8)
		fl = IOACCT_MPI_OPENMPI;
	else if (elf_sym(elf, "MPII_Version_ABI").st_value) /* MPICH's, and its derivatives' */
		fl = IOACCT_MPI_MPICH;
	else if (elf_func_offset(elf, "H5Dwrite", false)) /* HDF5's (issue 39); not its wrappers' */
		fl = IOACCT_MPI_HDF5;
	for (size_t i = 0; fl != IOACCT_MPI_HDF5 && i < ARRAY_SIZE(funcs); i++)
		off[i] = elf_func_offset(elf, funcs[i], false);
	for (size_t i = 0; fl == IOACCT_MPI_HDF5 && i < ARRAY_SIZE(h5funcs); i++)
		off[i] = elf_func_offset(elf, h5funcs[i], false);
	elf_end(elf);
	return fl;
}

static int elf_init(struct ioacct_wside *ws, int *fds, size_t nfds, char *err, size_t errlen)
{
	(void)ws;
	(void)fds;
	(void)nfds;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return ioacct_seterr(err, errlen, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
	return 0;
}

static int elf_serve(struct ioacct_wside *ws, const struct ioacct_request *req, int *fds,
		     size_t nfds, struct ioacct_reply *rep)
{
	(void)ws;
	if (req->type != IOACCT_MSG_W_ELF || nfds != 1 || fds[0] < 0) {
		ioacct_reply_error(rep, -EPROTO, "not a library to parse");
		return 0;
	}
	rep->w.code = (uint32_t)lib_flavour(fds[0], rep->w.offsets, req->u.worker.code == 1);
	return 0;
}

const struct ioacct_worker_kind ioacct_worker_elf = {
	.name = "elf",
	.init = elf_init,
	.serve = elf_serve,
	.groups = IOACCT_SB_BASE,
};
