/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the HDF5 probes (ioacct_h5.bpf.h, in the MPI-IO object; issue 39)
 * and the daemon (daemon/h5probes.c) share. Plain structs and constants,
 * no includes: the includer has the __u32/__u64 types.
 */
#ifndef IOACCT_H5_ABI_H
#define IOACCT_H5_ABI_H

#define IOACCT_H5_NAME_MAX 256 /* a power of two: names are built at bounded offsets */
#define IOACCT_H5_NR_SIZE_BINS 10

/* What a function is to the probes. */
enum ioacct_h5_kind {
	IOACCT_H5_K_FOPEN = 0, /* H5Fcreate, H5Fopen: (name, ...) -> file id */
	IOACCT_H5_K_FFLUSH,    /* H5Fflush(object id, scope) */
	IOACCT_H5_K_FCLOSE,    /* H5Fclose(file id) */
	IOACCT_H5_K_GOPEN,     /* H5Gcreate2, H5Gopen2: (loc, name, ...) -> group id */
	IOACCT_H5_K_DOPEN,     /* H5Dcreate1/2, H5Dopen1/2: (loc, name, ...) -> dataset id */
	IOACCT_H5_K_DANON,     /* H5Dcreate_anon(loc, ...) -> dataset id, no name yet */
	IOACCT_H5_K_OLINK,     /* H5Olink(object, loc, name, ...): an anonymous dataset named */
	IOACCT_H5_K_DREAD,     /* H5Dread(dset, mem type, mem space, file space, dxpl, buf) */
	IOACCT_H5_K_DWRITE,    /* H5Dwrite, the same */
	IOACCT_H5_K_DFLUSH,    /* H5Dflush(dset) */
	IOACCT_H5_K_CLOSE,     /* H5Dclose, H5Gclose: the id forgotten */
	/*
	 * H5Dread_multi and H5Dwrite_multi (1.14): (count, dset ids[], mem
	 * type ids[], mem space ids[], file space ids[], dxpl, bufs[]); each
	 * dataset of the call counted as one read or write of it, unsized
	 * (the size probes are not asked in them), its first
	 * IOACCT_H5_MULTI_MAX datasets.
	 */
	IOACCT_H5_K_DREADM,
	IOACCT_H5_K_DWRITEM,
	/*
	 * The library's own functions that an H5Dread or H5Dwrite calls, whose
	 * results are the call's size: how many elements its selection has
	 * (H5S_get_select_npoints, its first result in the call), which
	 * datatypes it converts between (H5T_path_find(src, dst): the dataset's
	 * is dst for a write, src for a read) and that datatype's size
	 * (H5T_get_size of it). Outside a call of the thread's they do nothing.
	 */
	IOACCT_H5_K_NPOINTS,
	IOACCT_H5_K_TPATH,
	IOACCT_H5_K_TSIZE,
	/*
	 * H5S_get_simple_extent_dims(space, dims, maxdims) -> rank, as a
	 * dataset's create or open runs it on the dataset's dataspace: its
	 * first call there with dims is Darshan's H5D_DATASPACE_NDIMS, the
	 * product of the dims it wrote H5D_DATASPACE_NPOINTS.
	 */
	IOACCT_H5_K_EXTDIMS,
	/*
	 * H5F_has_feature(file, flag) -> hbool_t: its first answer for
	 * H5FD_FEAT_HAS_MPI in a file's create or open says the file's driver
	 * is MPI-IO (Darshan's H5F_USE_MPIIO: the fapl's driver is mpio).
	 */
	IOACCT_H5_K_HASFEAT,
	/*
	 * H5CX_get_io_xfer_mode(&mode), parallel builds only: what a read or
	 * write's transfer property list asks (H5D_USE_MPIIO_COLLECTIVE).
	 */
	IOACCT_H5_K_XFERMODE,
	/*
	 * H5D__chunk_set_info(dset): a chunked dataset's create or open runs
	 * it (1.10's layout init) with the dataset, whose chunk dims it reads
	 * (Darshan's H5D_CHUNK_SIZE_*, what H5Pget_chunk of its dcpl says).
	 * Entry only.
	 */
	IOACCT_H5_K_CHUNK,
	/*
	 * H5D__read and H5D__write(dset, mem type, mem space, file space,
	 * buf), 1.10's, which H5Dread and H5Dwrite call with their spaces
	 * validated (NULL for H5S_ALL): at their entry the call's elements,
	 * its dataset's datatype size and its file space are read from the
	 * library's own structures, where their code says
	 * (IOACCT_H5_DIO_WORD), instead of from the three functions above
	 * (each a single-stepped trap a call). Entry only.
	 */
	IOACCT_H5_K_DIO,
	/*
	 * H5F_open(name, flags, fcpl, fapl) -> H5F_t *, 1.10's, which
	 * H5Fcreate and H5Fopen call once and register what it returns: at
	 * its return in a file's create or open, the file's driver's feature
	 * flags are read where H5F_has_feature's code reads them
	 * (IOACCT_H5_FEAT_WORD), instead of probing H5F_has_feature, which
	 * begins with a mov (a single-stepped trap) and runs in every read and
	 * write of an MPI build.
	 */
	IOACCT_H5_K_FNEW,
};
#define IOACCT_H5_FEAT_HAS_MPI 0x100 /* H5FD_FEAT_HAS_MPI, 1.10 to 1.14 */
#define IOACCT_H5_MPIO_COLLECTIVE 1  /* H5FD_MPIO_COLLECTIVE */
#define IOACCT_H5_MAX_RANK 32 /* H5S_MAX_RANK */
#define IOACCT_H5_MULTI_MAX 16 /* datasets of an H5Dread_multi or H5Dwrite_multi counted */

/*
 * IOACCT_H5_FUNCS(X): X(symbol, kind), the entry points of the HDF5 1.10
 * to 1.14 libraries probed; a library lacking some is probed where it has
 * them. Not all of them on every library: IOACCT_H5_K_NPOINTS and the two
 * after it where IOACCT_H5_K_DIO's layout was not read, and those two
 * only where it was; H5F_has_feature only with IOACCT_H5_LIB_MPIO, and
 * there only where IOACCT_H5_K_FNEW's layout was not read (H5F_open where
 * it was); H5Dread_multi and H5Dwrite_multi (1.14) only where they are.
 */
#define IOACCT_H5_FUNCS(X)                                   \
	X(H5Fcreate, IOACCT_H5_K_FOPEN)                      \
	X(H5Fopen, IOACCT_H5_K_FOPEN)                        \
	X(H5Fflush, IOACCT_H5_K_FFLUSH)                      \
	X(H5Fclose, IOACCT_H5_K_FCLOSE)                      \
	X(H5Gcreate2, IOACCT_H5_K_GOPEN)                     \
	X(H5Gopen2, IOACCT_H5_K_GOPEN)                       \
	X(H5Gclose, IOACCT_H5_K_CLOSE)                       \
	X(H5Dcreate1, IOACCT_H5_K_DOPEN)                     \
	X(H5Dcreate2, IOACCT_H5_K_DOPEN)                     \
	X(H5Dopen1, IOACCT_H5_K_DOPEN)                       \
	X(H5Dopen2, IOACCT_H5_K_DOPEN)                       \
	X(H5Dcreate_anon, IOACCT_H5_K_DANON)                 \
	X(H5Olink, IOACCT_H5_K_OLINK)                        \
	X(H5Dread, IOACCT_H5_K_DREAD)                        \
	X(H5Dwrite, IOACCT_H5_K_DWRITE)                      \
	X(H5Dread_multi, IOACCT_H5_K_DREADM)                 \
	X(H5Dwrite_multi, IOACCT_H5_K_DWRITEM)               \
	X(H5Dflush, IOACCT_H5_K_DFLUSH)                      \
	X(H5Dclose, IOACCT_H5_K_CLOSE)                       \
	X(H5S_get_select_npoints, IOACCT_H5_K_NPOINTS)       \
	X(H5T_path_find, IOACCT_H5_K_TPATH)                  \
	X(H5T_get_size, IOACCT_H5_K_TSIZE)                   \
	X(H5S_get_simple_extent_dims, IOACCT_H5_K_EXTDIMS)   \
	X(H5F_has_feature, IOACCT_H5_K_HASFEAT)              \
	X(H5CX_get_io_xfer_mode, IOACCT_H5_K_XFERMODE)       \
	X(H5D__chunk_set_info, IOACCT_H5_K_CHUNK)            \
	X(H5D__read, IOACCT_H5_K_DIO)                        \
	X(H5D__write, IOACCT_H5_K_DIO)                       \
	X(H5F_open, IOACCT_H5_K_FNEW)
#define IOACCT_H5_ONE_(sym, kind) +1
#define IOACCT_H5_NFUNCS (0 IOACCT_H5_FUNCS(IOACCT_H5_ONE_))

/*
 * cookie = func index | kind << 8 | what the daemon read in the library's
 * own code (the ELF worker, by exact instruction patterns; issue 39) << 16:
 * - H5S_get_select_npoints's: where a dataspace (H5S_t) keeps its
 *   selection's class (select.type, H5S_get_select_type's load), the
 *   class's kind in it, and a hyperslab selection's sel_info.hslab and its
 *   diminfo_valid (H5Sis_regular_hyperslab's loads), with
 *   IOACCT_H5_LAYOUT_OK;
 * - H5D__chunk_set_info's: where a dataset (H5D_t) has its shared part,
 *   and that its rank (ndims) and its layout's chunk dims (uint32_t each),
 *   with IOACCT_H5_LAYOUT_OK;
 * - the dataset creates' and opens': IOACCT_H5_CHUNK_OK when the library's
 *   H5D__chunk_set_info is probed with a layout read: a create or open
 *   that does not run it is of a dataset not chunked;
 * - H5D__read's and H5D__write's: where a dataset (H5D_t) has its shared
 *   part, and that its dataspace and datatype (H5D_typeof's loads, and
 *   their own for a NULL file space), where a dataspace keeps its
 *   selection's elements (H5S_get_select_npoints's load) and a datatype
 *   its size (H5T_get_size's loads), with IOACCT_H5_LAYOUT_OK; H5Dread's
 *   and H5Dwrite's carry the selection's layout for them;
 * - H5F_open's: where a file (H5F_t) has its shared part, that its driver
 *   (H5FD_t, lf) and that its feature flags (H5F_has_feature's loads),
 *   with IOACCT_H5_LAYOUT_OK, where H5Fcreate and H5Fopen test and
 *   register H5F_open's 64-bit result (1.10's).
 * The ELF worker's answer carries the layouts after the functions'
 * offsets (IOACCT_H5_SEL_LAYOUT, IOACCT_H5_CHUNK_LAYOUT,
 * IOACCT_H5_DIO_LAYOUT, IOACCT_H5_FEAT_LAYOUT), 0 when its patterns were
 * not found: the
 * selections' kinds or the chunk sizes are then said not known, never
 * guessed, and without the last the sizes are read from the three
 * functions that say them (IOACCT_H5_K_NPOINTS and the two after it), as
 * on any library whose code is not 1.10's, and without the fourth
 * H5F_has_feature says the driver. Then IOACCT_H5_LIB_FLAGS.
 */
#define IOACCT_H5_COOKIE(fn, kind) ((__u64)(fn) | (__u64)(kind) << 8)
#define IOACCT_H5_LAYOUT_OK (1ULL << 63)
#define IOACCT_H5_CHUNK_OK (1ULL << 62)
#define IOACCT_H5_SEL_LAYOUT IOACCT_H5_NFUNCS
#define IOACCT_H5_CHUNK_LAYOUT (IOACCT_H5_NFUNCS + 1)
#define IOACCT_H5_DIO_LAYOUT (IOACCT_H5_NFUNCS + 2)
#define IOACCT_H5_FEAT_LAYOUT (IOACCT_H5_NFUNCS + 3)
#define IOACCT_H5_LIB_FLAGS (IOACCT_H5_NFUNCS + 4)
#define IOACCT_H5_NWORDS 5 /* the words after the offsets */
/*
 * The library has the MPI-IO driver (H5FD_mpio_init or H5Pset_fapl_mpio):
 * only then is H5F_has_feature probed, a serial library's answer being
 * always no (H5F_USE_MPIIO 0 without asking).
 */
#define IOACCT_H5_LIB_MPIO 1
/* H5S_get_select_npoints's layout: 12, 8, 12 and 8 bits from bit 16. */
#define IOACCT_H5_SEL_WORD(sel, type, hslab, dv)                                       \
	(IOACCT_H5_LAYOUT_OK | (__u64)(sel) << 16 | (__u64)(type) << 28 |             \
	 (__u64)(hslab) << 36 | (__u64)(dv) << 48)
#define IOACCT_H5_SEL_OFF(c) (((c) >> 16) & 0xfff)
#define IOACCT_H5_TYPE_OFF(c) (((c) >> 28) & 0xff)
#define IOACCT_H5_HSLAB_OFF(c) (((c) >> 36) & 0xfff)
#define IOACCT_H5_DV_OFF(c) (((c) >> 48) & 0xff)
/* H5D__chunk_set_info's layout: 8, 16 and 16 bits from bit 16. */
#define IOACCT_H5_CHUNK_WORD(shared, rank, dims)                                       \
	(IOACCT_H5_LAYOUT_OK | (__u64)(shared) << 16 | (__u64)(rank) << 24 |          \
	 (__u64)(dims) << 40)
#define IOACCT_H5_SHARED_OFF(c) (((c) >> 16) & 0xff)
#define IOACCT_H5_RANK_OFF(c) (((c) >> 24) & 0xffff)
#define IOACCT_H5_DIMS_OFF(c) (((c) >> 40) & 0xffff)
/* H5D__read's and H5D__write's layout: six offsets of 8-byte fields, in 8s, 7 bits each from bit 16. */
#define IOACCT_H5_DIO_WORD(shared, space, type, nelem, tshared, tsize)                           \
	(IOACCT_H5_LAYOUT_OK | (__u64)((shared) / 8) << 16 | (__u64)((space) / 8) << 23 |      \
	 (__u64)((type) / 8) << 30 | (__u64)((nelem) / 8) << 37 | (__u64)((tshared) / 8) << 44 | \
	 (__u64)((tsize) / 8) << 51)
#define IOACCT_H5_DIO_MAX (0x7f * 8) /* the largest offset it holds */
#define IOACCT_H5_DIO_OFF_(c, bit) ((((c) >> (bit)) & 0x7f) * 8)
#define IOACCT_H5_DIO_SHARED(c) IOACCT_H5_DIO_OFF_(c, 16)  /* H5D_t: its shared part */
#define IOACCT_H5_DIO_SPACE(c) IOACCT_H5_DIO_OFF_(c, 23)   /* that: the dataset's H5S_t */
#define IOACCT_H5_DIO_TYPE(c) IOACCT_H5_DIO_OFF_(c, 30)    /* that: the dataset's H5T_t */
#define IOACCT_H5_DIO_NELEM(c) IOACCT_H5_DIO_OFF_(c, 37)   /* H5S_t: select.num_elem */
#define IOACCT_H5_DIO_TSHARED(c) IOACCT_H5_DIO_OFF_(c, 44) /* H5T_t: its shared part */
#define IOACCT_H5_DIO_TSIZE(c) IOACCT_H5_DIO_OFF_(c, 51)   /* that: the type's size */
/* H5F_open's layout: three offsets, 12 bits each from bit 16; the flags a 32-bit field. */
#define IOACCT_H5_FEAT_WORD(shared, lf, flags)                                         \
	(IOACCT_H5_LAYOUT_OK | (__u64)(shared) << 16 | (__u64)(lf) << 28 |            \
	 (__u64)(flags) << 40)
#define IOACCT_H5_FEAT_MAX 0xfff /* the largest offset it holds */
#define IOACCT_H5_FEAT_SHARED(c) (((c) >> 16) & 0xfff) /* H5F_t: its shared part */
#define IOACCT_H5_FEAT_LF(c) (((c) >> 28) & 0xfff)     /* that: the driver's H5FD_t */
#define IOACCT_H5_FEAT_FLAGS(c) (((c) >> 40) & 0xfff)  /* that: its feature_flags */
/* What those fields hold in 1.10 (H5S_sel_type, H5S_diminfo_valid_t), checked in the same code. */
#define IOACCT_H5_SEL_POINTS 1
#define IOACCT_H5_SEL_HYPERSLABS 2
#define IOACCT_H5_DIMINFO_IMPOSSIBLE 0
#define IOACCT_H5_DIMINFO_NO 1
#define IOACCT_H5_DIMINFO_YES 2
#define IOACCT_H5_CHUNK_DIMS 5 /* Darshan's H5D_CHUNK_SIZE_D1..D5 */

/* Record kinds: Darshan's H5F (a file) and H5D (a dataset of a file). */
#define IOACCT_H5_FILE 0
#define IOACCT_H5_DATASET 1

/* h5recs: one per (slot, process, record), the record named by its name's hash. */
struct ioacct_h5_key {
	__u32 slot;
	__u32 tgid;
	__u64 name; /* FNV-1a of name: "FILE" or "FILE:/DATASET" */
};

struct ioacct_h5_val {
	__u64 start; /* the slot's start_ns when made: a reused slot is another job */
	__u32 kind;  /* IOACCT_H5_FILE or IOACCT_H5_DATASET */
	__u32 last;  /* a dataset's last access: 0 none, 1 read, 2 write (rw_switches) */
	__u64 opens, flushes;
	__u64 reads, writes, bytes_read, bytes_written;
	__u64 unsized_reads, unsized_writes; /* calls whose size could not be read */
	__u64 rw_switches;
	__u64 npoints_max, datatype_size;    /* the largest selection; the dataset's type size */
	__u64 read_ns, write_ns, meta_ns;
	__u64 size_read[IOACCT_H5_NR_SIZE_BINS];
	__u64 size_written[IOACCT_H5_NR_SIZE_BINS];
	/*
	 * Reads and writes by their file selection's kind, as Darshan counts
	 * them (none for H5S_ALL); sel_unknown: those whose kind, or a
	 * hyperslab's regularity, could not be read.
	 */
	__u64 sel_regular, sel_irregular, sel_points, sel_unknown;
	char name[IOACCT_H5_NAME_MAX];
	/*
	 * Kernel times (bpf_ktime_get_ns), 0 none, after the sums (H5Olink's
	 * merge adds those by index): the first start and last end of the
	 * opens, reads, writes and closes; the slowest read's and write's
	 * time and bytes (0 unsized).
	 */
	__u64 open_start, open_end, read_start, read_end;
	__u64 write_start, write_end, close_start, close_end;
	__u64 max_read_ns, max_read_size, max_write_ns, max_write_size;
	/* A dataset's dataspace at its last create or open: rank (0 not known) and elements. */
	__u64 ndims, npoints;
	/* 1: a file opened with the MPI-IO driver; a dataset read or written collectively. */
	__u64 mpiio, collective;
	/*
	 * A dataset's chunk dims at its last create or open, Darshan's order
	 * (D1 its last dimension's), 0s not chunked; chunk_known 0: not known.
	 */
	__u64 chunk_known, chunk[IOACCT_H5_CHUNK_DIMS];
};

/*
 * h5ids: what an id a process holds stands for: a file (its record's hash
 * and its name), a group (its file's, and "FILE:/path") or a dataset (its
 * record's, its file's, and its name).
 */
struct ioacct_h5_id_key {
	__s64 hid;
	__u32 tgid;
	__u32 pad;
};

struct ioacct_h5_id {
	__u64 rec;  /* the record's key (a group: none) */
	__u64 file; /* its file's record's key */
	__u32 kind; /* IOACCT_H5_FILE, IOACCT_H5_DATASET, or IOACCT_H5_GROUP */
	__u32 flen; /* the length of its file's name, at the start of name */
	__u32 anon; /* a dataset made by H5Dcreate_anon, not linked yet */
	__u32 pad;
	char name[IOACCT_H5_NAME_MAX];
};
#define IOACCT_H5_GROUP 2

/* h5pend: an API call between its entry and its return, per thread. */
struct ioacct_h5_pending {
	__u64 ts;
	__u64 cookie;
	__u64 a[5];
	__u32 slot;
	__u32 depth;    /* API calls made inside this one: counted as this one */
	__u32 inner;    /* the library's own function now running in it (K_TSIZE), or 0 */
	__u32 have;     /* H5_HAVE_* */
	__u64 inner_arg;
	__u64 npoints;  /* the call's selection, H5_HAVE_NPOINTS */
	__u64 dtype;    /* the dataset's datatype (H5T_t *), H5_HAVE_DTYPE */
	__u64 tsize;    /* its size, H5_HAVE_TSIZE */
	__u64 ndims;    /* a create's or open's dataspace rank, H5_HAVE_DIMS (npoints: its elements) */
	__u64 fspace;   /* a read's or write's file dataspace (H5S_t *), H5_HAVE_FSPACE */
	__u64 selc;     /* the cookie that said it (its layout) */
	__u64 chunk[IOACCT_H5_CHUNK_DIMS]; /* a create's or open's chunk dims, H5_HAVE_CHUNK */
};
#define IOACCT_H5_HAVE_NPOINTS 1
#define IOACCT_H5_HAVE_DTYPE 2
#define IOACCT_H5_HAVE_TSIZE 4
#define IOACCT_H5_HAVE_DIMS 8
#define IOACCT_H5_HAVE_FEAT 16 /* an open's HAS_MPI, a read's or write's mode answered */
#define IOACCT_H5_HAVE_MPIO 32 /* its answer: the driver is MPI-IO, the call collective */
#define IOACCT_H5_HAVE_FSPACE 64
#define IOACCT_H5_HAVE_CHUNK 128

#endif /* IOACCT_H5_ABI_H */
