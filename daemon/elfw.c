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
_Static_assert(ARRAY_SIZE(h5funcs) + IOACCT_H5_NWORDS <= IOACCT_PROTO_OFFSETS_MAX,
	       "a w_elf reply holds every offset and the words after them");
_Static_assert(IOACCT_H5_LIB_FLAGS == ARRAY_SIZE(h5funcs) + IOACCT_H5_NWORDS - 1,
	       "the words follow the offsets");

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

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The n bytes at virtual address addr of the file, from its section's contents. */
static int elf_read_at(Elf *elf, int fd, uint64_t addr, void *v, size_t n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr + n > sh.sh_addr + sh.sh_size)
			continue;
		return pread(fd, v, n, (off_t)(sh.sh_offset + addr - sh.sh_addr)) == (ssize_t)n ? 0 : -EIO;
	}
	return -ENOENT;
}

static int elf_u64_at(Elf *elf, int fd, uint64_t addr, uint64_t *v)
{
	return elf_read_at(elf, fd, addr, v, 8);
}

/* Whether a dynamic relocation of the GOT slot at addr names the symbol name. */
static bool elf_slot_is(Elf *elf, uint64_t addr, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, symsh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *syms;
		Elf_Data *d, *sd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(syms = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(syms, &symsh) ||
		    !(d = elf_getdata(scn, NULL)) || !(sd = elf_getdata(syms, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *n;

			if (!gelf_getrela(d, (int)i, &r) || r.r_offset != addr ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			n = elf_strptr(elf, symsh.sh_link, sym.st_name);
			return n && !strcmp(n, name);
		}
	}
	return false;
}

/*
 * Whether a call to addr calls the function name: its own address (a
 * program's), or its PLT entry, "[endbr64;] [bnd] jmp *SLOT(%rip)" with
 * SLOT relocated to it.
 */
static bool elf_calls(Elf *elf, int fd, uint64_t addr, const char *name)
{
	GElf_Sym sym = elf_sym(elf, name);
	uint8_t c[16];
	size_t i = 0;

	if (!sym.st_value)
		sym = elf_sym_in(elf, name, SHT_SYMTAB);
	if (sym.st_value && addr == sym.st_value)
		return GELF_ST_TYPE(sym.st_info) == STT_FUNC;
	if (elf_read_at(elf, fd, addr, c, sizeof(c)))
		return false;
	if (!memcmp(c, "\xf3\x0f\x1e\xfa", 4))
		i = 4;
	if (c[i] == 0xf2)
		i++;
	return c[i] == 0xff && c[i + 1] == 0x25 &&
	       elf_slot_is(elf, addr + i + 6 + (uint64_t)(int64_t)(int32_t)le32(c + i + 2), name);
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
 * HDF5's own layouts (issue 39), read from its code as the MPI-IO layout
 * is checked on the file: where a dataspace keeps its selection's kind
 * and a hyperslab's regularity, where a dataset keeps its rank and chunk
 * dims. Each is the operand of an exact instruction sequence of 1.10's
 * functions (Debian's shared builds, and libhdf5.a as h5cc links it) or
 * of 1.14.6's (its shared builds, the same offsets); a library without
 * them (another version, another compiler) has its
 * selections' kinds and chunk sizes said not known, never guessed.
 */
#define H5_CODE_MAX 512

/* The first n bytes (at most H5_CODE_MAX) of the function name; how many read, 0 none. */
static size_t h5_code(Elf *elf, int fd, const char *name, uint8_t *buf, size_t n, uint64_t *at)
{
	uint64_t off = elf_func_offset(elf, name, true);
	ssize_t got;

	if (!off)
		return 0;
	got = pread(fd, buf, n, (off_t)off);
	*at = off;
	return got > 0 ? (size_t)got : 0;
}

/* mov disp32(%reg),%rax (not %rsp's SIB form) at c: its displacement, or -1. */
static int64_t load_d32(const uint8_t *c)
{
	return c[0] == 0x48 && c[1] == 0x8b && (c[2] & 0xf8) == 0x80 && (c[2] & 7) != 4 ?
		       (int64_t)le32(c + 3) : -1;
}

/*
 * mov (%rax),%eax or mov d8(%rax),%eax at c: the offset (*len its length),
 * or -1.
 */
static int load_eax(const uint8_t *c, size_t *len)
{
	if (c[0] == 0x8b && c[1] == 0x00)
		return *len = 2, 0;
	if (c[0] == 0x8b && c[1] == 0x40)
		return *len = 3, c[2];
	return -1;
}

/*
 * An instruction that touches neither %rax nor memory, which 1.14.6's gcc
 * puts between the loads and compares below: mov $imm32,%r32 (not %eax:
 * b8) or pop %r64 (not %rax: 58). Its length at c, 0 if not one.
 */
static size_t h5_filler(const uint8_t *c)
{
	if (c[0] > 0xb8 && c[0] <= 0xbf)
		return 5;
	return c[0] > 0x58 && c[0] <= 0x5f ? 1 : 0;
}

/*
 * diminfo_valid's load, as H5S__hyper_is_regular has it (inlined in
 * H5Sis_regular_hyperslab of the shared builds): load hslab from the
 * space, diminfo_valid from it; cmp $1 (H5S_DIMINFO_VALID_NO), je to a
 * call (H5S__hyper_rebuild) followed by the same load again; cmp $2
 * (H5S_DIMINFO_VALID_YES). 1.14.6 has a filler (h5_filler()) after the
 * je and inside the load again. The hslab offset << 8 | diminfo_valid's;
 * 0 none.
 */
static uint64_t h5_diminfo(const uint8_t *c, size_t n)
{
	for (size_t i = 0; i + 32 <= n; i++) {
		int64_t hs = load_d32(c + i), dv;
		size_t l, j, t, k;

		if (hs <= 0 || hs > 0xfff || (dv = load_eax(c + i + 7, &l)) < 0)
			continue;
		j = i + 7 + l;
		if (memcmp(c + j, "\x83\xf8\x01", 3))
			continue;
		if (c[j + 3] == 0x74) /* je rel8 */
			t = j + 5 + (size_t)(int8_t)c[j + 4], k = j + 5;
		else if (c[j + 3] == 0x0f && c[j + 4] == 0x84) /* je rel32 */
			t = j + 9 + (size_t)(int32_t)le32(c + j + 5), k = j + 9;
		else
			continue;
		k += h5_filler(c + k);
		if (k + 3 > n || memcmp(c + k, "\x83\xf8\x02", 3) || t >= n || t + 48 > n)
			continue;
		/* The "not yet" branch: a call within 16 bytes, then the load again within 16. */
		for (size_t a = t; a < t + 16; a++) {
			if (c[a] != 0xe8)
				continue;
			for (size_t b = a + 5; b < a + 21; b++)
				if (load_d32(c + b) == hs &&
				    load_eax(c + b + 7 + h5_filler(c + b + 7), &l) == dv)
					return (uint64_t)hs << 8 | (uint64_t)dv;
			break;
		}
	}
	return 0;
}

/*
 * The selection's layout (IOACCT_H5_SEL_WORD), or 0: H5S_get_select_type
 * is "mov SEL(%rdi),%rax; mov TYPE(%rax),%eax; ret"; H5Sis_regular_hyperslab
 * loads the same and compares it with 2 (H5S_SEL_HYPERSLABS), and has (or
 * calls, as H5S__hyper_is_regular in libhdf5.a) the diminfo_valid load.
 */
static uint64_t h5_sel_layout(Elf *elf, int fd)
{
	uint8_t c[H5_CODE_MAX], r[H5_CODE_MAX];
	size_t n = h5_code(elf, fd, "H5S_get_select_type", c, 64, &(uint64_t){ 0 }), nr, l;
	int sel = -1, type = -1;
	bool hyper = false;
	uint64_t di = 0;

	for (size_t i = 0; i + 8 <= n && sel < 0; i++)
		if (c[i] == 0x48 && c[i + 1] == 0x8b && c[i + 2] == 0x47 &&
		    (type = load_eax(c + i + 4, &l)) >= 0 && i + 4 + l < n && c[i + 4 + l] == 0xc3)
			sel = c[i + 3];
	nr = sel > 0 ? h5_code(elf, fd, "H5Sis_regular_hyperslab", r, sizeof(r), &(uint64_t){ 0 }) : 0;
	for (size_t i = 0; i + 8 <= nr && !hyper; i++)
		/* mov SEL(%rax),%rax; cmpl $2,TYPE(%rax) */
		hyper = !memcmp(r + i, "\x48\x8b\x40", 3) && r[i + 3] == sel &&
			(type == 0 ? !memcmp(r + i + 4, "\x83\x38\x02", 3) :
				     r[i + 4] == 0x83 && r[i + 5] == 0x78 && r[i + 6] == type && r[i + 7] == 2);
	if (hyper && !(di = h5_diminfo(r, nr)) &&
	    (nr = h5_code(elf, fd, "H5S__hyper_is_regular", r, 128, &(uint64_t){ 0 })))
		di = h5_diminfo(r, nr);
	return di ? IOACCT_H5_SEL_WORD(sel, type, di >> 8, di & 0xff) : 0;
}

/*
 * "mov SHARED(%rbx),%rdi" at c + i after "mov %rdi,%rbx" (1.10), or "mov
 * SHARED(%rdi),%rdi" after nothing but pushes and that mov (1.14.6): the
 * dataset's shared part loaded from the first argument.
 */
static bool h5_dset_shared(const uint8_t *c, size_t i)
{
	if (!memcmp(c + i, "\x48\x8b\x7b", 3))
		return memmem(c, i, "\x48\x89\xfb", 3) != NULL;
	if (memcmp(c + i, "\x48\x8b\x7f", 3))
		return false;
	for (size_t k = 0; k < i;)
		if (c[k] >= 0x50 && c[k] <= 0x57)
			k++;
		else if (c[k] == 0x41 && c[k + 1] >= 0x50 && c[k + 1] <= 0x57)
			k += 2;
		else if (!memcmp(c + k, "\x48\x89\xfb", 3))
			k += 3;
		else
			return false;
	return true;
}

/*
 * The chunk layout (IOACCT_H5_CHUNK_WORD), or 0: H5D__chunk_set_info(dset)
 * is "mov %rdi,%rbx; ...; mov SHARED(%rbx),%rdi; mov RANK(%rdi),%esi;
 * (two lea); add $CHUNK,%rdi; call real", and that callee, the
 * H5D__chunk_set_info_real(&layout.u.chunk, ndims, ...) of 1.10, reads
 * each dim as "mov DIM(%rbx,%rcx,4),%edi" after "mov %rdi,%rbx".
 */
static uint64_t h5_chunk_layout(Elf *elf, int fd)
{
	uint8_t c[128], r[128];
	uint64_t at = 0;
	size_t n = h5_code(elf, fd, "H5D__chunk_set_info", c, sizeof(c), &at), nr;

	for (size_t i = 0; i + 40 <= n; i++) {
		uint32_t shared, rank, chunk;
		uint64_t t;

		if (!h5_dset_shared(c, i) || memcmp(c + i + 4, "\x8b\xb7", 2))
			continue;
		shared = c[i + 3];
		rank = le32(c + i + 6);
		for (size_t j = i + 10; j + 12 <= n && j < i + 40; j++) {
			if (memcmp(c + j, "\x48\x81\xc7", 3) || c[j + 7] != 0xe8)
				continue;
			chunk = le32(c + j + 3);
			t = at + j + 12 + (uint64_t)(int64_t)(int32_t)le32(c + j + 8);
			nr = pread(fd, r, sizeof(r), (off_t)t) == (ssize_t)sizeof(r) ? sizeof(r) : 0;
			for (size_t k = 0; k + 4 <= nr; k++) {
				const uint8_t *mv = memmem(r, k, "\x48\x89\xfb", 3);

				if (mv && !memcmp(r + k, "\x8b\x7c\x8b", 3) && rank <= 0xffff &&
				    chunk + r[k + 3] <= 0xffff)
					return IOACCT_H5_CHUNK_WORD(shared, rank, chunk + r[k + 3]);
			}
			return 0;
		}
	}
	return 0;
}

/*
 * mov d8(%base),%dst or mov d32(%base),%dst (64 bits; %rsp's and %r12's
 * SIB form too, no index) at c, n bytes readable: its length, 0 if not one.
 */
static size_t load_r64(const uint8_t *c, size_t n, int *base, int *dst, int64_t *disp)
{
	unsigned int mod = n >= 3 ? c[2] >> 6 : 3;
	size_t sib = n >= 3 && (c[2] & 7) == 4;

	/* REX.W (R and B only), 8b, modrm not a register, not %rip-relative. */
	if (n < 3 + sib || (c[0] & 0xfa) != 0x48 || c[1] != 0x8b || mod == 3 ||
	    (mod == 0 && (c[2] & 7) == 5) || (sib && c[3] != 0x24))
		return 0;
	*base = (c[2] & 7) | (c[0] & 1) << 3;
	*dst = (c[2] >> 3 & 7) | (c[0] & 4) << 1;
	if (mod == 0)
		return *disp = 0, 3 + sib;
	if (mod == 1 && n >= 4 + sib)
		return *disp = (int8_t)c[3 + sib], 4 + sib;
	if (mod == 2 && n >= 7 + sib)
		return *disp = (int32_t)le32(c + 3 + sib), 7 + sib;
	return 0;
}

/* mov %src,%dst (64 bits, either opcode) at c: its length (3), 0 if not one. */
static size_t mov_r64(const uint8_t *c, int *src, int *dst)
{
	int reg = (c[2] >> 3 & 7) | (c[0] & 4) << 1, rm = (c[2] & 7) | (c[0] & 1) << 3;

	if ((c[0] & 0xfa) != 0x48 || (c[1] != 0x89 && c[1] != 0x8b) || c[2] >> 6 != 3)
		return 0;
	*src = c[1] == 0x89 ? reg : rm;
	*dst = c[1] == 0x89 ? rm : reg;
	return 3;
}

#define X86_RAX 0
#define X86_RCX 1
#define X86_RSP 4
#define X86_RDI 7

/*
 * The offsets a leaf that loads a field of its argument, or a field of
 * that field, and returns it reads: "mov A(%rdi),%rax; [mov B(%rax),%rax;]
 * ret" (H5S_get_select_npoints, H5D_typeof, H5T_get_size), each a
 * multiple of 8 that an IOACCT_H5_DIO_WORD holds; b is NULL for one load.
 * 0, or -1 when the code is not that.
 */
static int h5_leaf(Elf *elf, int fd, const char *name, int64_t *a, int64_t *b)
{
	uint8_t c[32];
	size_t n = h5_code(elf, fd, name, c, sizeof(c), &(uint64_t){ 0 }), l, l2 = 0;
	int base, dst, base2 = X86_RAX, dst2 = X86_RAX;

	if (!(l = load_r64(c, n, &base, &dst, a)) || base != X86_RDI || dst != X86_RAX ||
	    (b && !(l2 = load_r64(c + l, n - l, &base2, &dst2, b))) || base2 != X86_RAX ||
	    dst2 != X86_RAX || l + l2 >= n || c[l + l2] != 0xc3)
		return -1;
	for (int i = 0; i < (b ? 2 : 1); i++) {
		int64_t v = i ? *b : *a;

		if (v < 0 || v > IOACCT_H5_DIO_MAX || v % 8)
			return -1;
	}
	return 0;
}

/*
 * Where H5D__read or H5D__write (dset, mem type, mem space, file space,
 * buf) finds the dataset's own dataspace for a NULL file space (H5S_ALL),
 * 1.10's "if (!file_space) file_space = dset->shared->space": it keeps
 * %rdi and %rcx in two registers (D, F) in its prologue, then "test F,F;
 * je L" and at L "mov SHARED(D),%rax; mov SPACE(%rax),F" (Debian's shared
 * builds and libhdf5.a alike). SPACE, or -1 when its code is not that.
 */
static int64_t h5_space(Elf *elf, int fd, const char *name, int64_t shared)
{
	uint8_t c[H5_CODE_MAX], t[16];
	uint64_t at = 0, to;
	size_t n = h5_code(elf, fd, name, c, sizeof(c), &at), l;
	int d = -1, f = -1, src, dst, base, r;
	int64_t sh, sp;

	/* The prologue's first copies of each: its pushes and copies are in its first 64 bytes. */
	for (size_t i = 0; i + 3 <= n && i < 64 && (d < 0 || f < 0); i++) {
		if (!mov_r64(c + i, &src, &dst) || dst == X86_RSP)
			continue;
		if (src == X86_RDI && d < 0)
			d = dst;
		else if (src == X86_RCX && f < 0)
			f = dst;
	}
	for (size_t i = 0; f >= 0 && d >= 0 && i + 9 <= n; i++) {
		/* test %F,%F: REX.W with R and B alike, 85, modrm 11 F F. */
		if (c[i] != (0x48 | (f >> 3) << 2 | f >> 3) || c[i + 1] != 0x85 ||
		    c[i + 2] != (0xc0 | (f & 7) << 3 | (f & 7)))
			continue;
		if (c[i + 3] == 0x74)
			to = i + 5 + (uint64_t)(int64_t)(int8_t)c[i + 4];
		else if (c[i + 3] == 0x0f && c[i + 4] == 0x84)
			to = i + 9 + (uint64_t)(int64_t)(int32_t)le32(c + i + 5);
		else
			continue;
		if (pread(fd, t, sizeof(t), (off_t)(at + to)) != (ssize_t)sizeof(t) ||
		    !(l = load_r64(t, sizeof(t), &base, &r, &sh)) || base != d || r != X86_RAX ||
		    sh != shared || !load_r64(t + l, sizeof(t) - l, &base, &r, &sp) ||
		    base != X86_RAX || r != f || sp < 0 || sp > IOACCT_H5_DIO_MAX || sp % 8)
			return -1;
		return sp;
	}
	return -1;
}

/*
 * The reads' and writes' layout (IOACCT_H5_DIO_WORD), or 0: a dataset's
 * shared part and datatype as H5D_typeof loads them, its dataspace as
 * H5D__read and H5D__write load it (both the same), a selection's
 * elements as H5S_get_select_npoints loads them, a datatype's size as
 * H5T_get_size does, and both H5D__read and H5D__write there to probe.
 */
static uint64_t h5_dio_layout(Elf *elf, int fd)
{
	int64_t shared, type, nelem, tshared, tsize, rspace, wspace;

	if (h5_leaf(elf, fd, "H5D_typeof", &shared, &type) ||
	    h5_leaf(elf, fd, "H5T_get_size", &tshared, &tsize) ||
	    h5_leaf(elf, fd, "H5S_get_select_npoints", &nelem, NULL) ||
	    (rspace = h5_space(elf, fd, "H5D__read", shared)) < 0 ||
	    (wspace = h5_space(elf, fd, "H5D__write", shared)) != rspace)
		return 0;
	return IOACCT_H5_DIO_WORD(shared, rspace, type, nelem, tshared, tsize);
}

/*
 * Whether caller (H5Fcreate, H5Fopen) calls H5F_open and tests its result
 * as a pointer, "call H5F_open; [mov %rax,%R;] test %rax,%rax", as 1.10's
 * do before they register it: H5F_open's return is then the file the call
 * returns. 1.14's H5F_open returns an herr_t and its H5Fcreate and
 * H5Fopen call it through the VOL layer, not there.
 */
static bool h5_opens(Elf *elf, int fd, const char *caller)
{
	uint8_t c[H5_CODE_MAX];
	uint64_t at = 0;
	size_t n = h5_code(elf, fd, caller, c, sizeof(c), &at);
	GElf_Sym sym = elf_sym(elf, caller);
	int src, dst;

	if (!sym.st_value)
		sym = elf_sym_in(elf, caller, SHT_SYMTAB);
	for (size_t i = 0; sym.st_value && i + 11 <= n; i++) {
		size_t j = i + 5;

		if (c[i] != 0xe8 ||
		    !elf_calls(elf, fd, sym.st_value + j + (uint64_t)(int64_t)(int32_t)le32(c + i + 1),
			       "H5F_open"))
			continue;
		if (mov_r64(c + j, &src, &dst) && src == X86_RAX)
			j += 3;
		return j + 3 <= n && !memcmp(c + j, "\x48\x85\xc0", 3);
	}
	return false;
}

/*
 * H5F_open's layout (IOACCT_H5_FEAT_WORD), or 0: H5F_has_feature(f, flag)
 * is "mov SHARED(%rdi),%rax; mov LF(%rax),%rax; test %esi,FLAGS(%rax);
 * setne %al; ret" (f->shared->lf->feature_flags & flag: 0x18, 0, 0x20 in
 * Debian's 1.10.8), and H5Fcreate and H5Fopen return the file H5F_open
 * returns (h5_opens()).
 */
static uint64_t h5_feat_layout(Elf *elf, int fd)
{
	uint8_t c[32] = { 0 };
	size_t n = h5_code(elf, fd, "H5F_has_feature", c, sizeof(c), &(uint64_t){ 0 }), l, l2 = 0, t;
	int base, dst, base2 = -1, dst2 = -1;
	int64_t shared, lf, flags;

	if (!(l = load_r64(c, n, &base, &dst, &shared)) || base != X86_RDI || dst != X86_RAX ||
	    !(l2 = load_r64(c + l, n - l, &base2, &dst2, &lf)) || base2 != X86_RAX || dst2 != X86_RAX)
		return 0;
	/* test %esi,FLAGS(%rax): 85, modrm reg %esi, rm %rax, no displacement, d8 or d32. */
	t = l + l2;
	if (t + 2 > n || c[t] != 0x85 || (c[t + 1] & 0x3f) != 0x30 || c[t + 1] >> 6 == 3)
		return 0;
	flags = c[t + 1] >> 6 == 0 ? 0 : c[t + 1] >> 6 == 1 ? (int8_t)c[t + 2] : (int32_t)le32(c + t + 2);
	t += 2 + (c[t + 1] >> 6 == 0 ? 0 : c[t + 1] >> 6 == 1 ? 1 : 4);
	if (t + 4 > n || memcmp(c + t, "\x0f\x95\xc0\xc3", 4))
		return 0;
	if (shared < 0 || shared > IOACCT_H5_FEAT_MAX || lf < 0 || lf > IOACCT_H5_FEAT_MAX || flags < 0 ||
	    flags > IOACCT_H5_FEAT_MAX || !h5_opens(elf, fd, "H5Fcreate") || !h5_opens(elf, fd, "H5Fopen"))
		return 0;
	return IOACCT_H5_FEAT_WORD(shared, lf, flags);
}

/* After the functions' offsets: the layouts their probes read with, and the library's flags. */
static void h5_layouts(Elf *elf, int fd, uint64_t *off, bool exe)
{
	bool mpio = elf_func_offset(elf, "H5FD_mpio_init", exe) ||
		    elf_func_offset(elf, "H5Pset_fapl_mpio", exe);

	off[IOACCT_H5_SEL_LAYOUT] = h5_sel_layout(elf, fd);
	off[IOACCT_H5_CHUNK_LAYOUT] = h5_chunk_layout(elf, fd);
	off[IOACCT_H5_DIO_LAYOUT] = h5_dio_layout(elf, fd);
	off[IOACCT_H5_FEAT_LAYOUT] = h5_feat_layout(elf, fd);
	off[IOACCT_H5_LIB_FLAGS] = mpio ? IOACCT_H5_LIB_MPIO : 0;
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
		if (fl == IOACCT_MPI_HDF5)
			h5_layouts(elf, fd, off, true);
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
	if (fl == IOACCT_MPI_HDF5)
		h5_layouts(elf, fd, off, false);
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
