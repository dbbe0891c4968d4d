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
};
#define IOACCT_H5_FEAT_HAS_MPI 0x100 /* H5FD_FEAT_HAS_MPI, 1.10 to 1.14 */
#define IOACCT_H5_MPIO_COLLECTIVE 1  /* H5FD_MPIO_COLLECTIVE */
#define IOACCT_H5_MAX_RANK 32 /* H5S_MAX_RANK */

/*
 * IOACCT_H5_FUNCS(X): X(symbol, kind), the entry points of the HDF5 1.10
 * to 1.14 libraries probed; a library lacking some is probed where it has
 * them.
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
	X(H5Dflush, IOACCT_H5_K_DFLUSH)                      \
	X(H5Dclose, IOACCT_H5_K_CLOSE)                       \
	X(H5S_get_select_npoints, IOACCT_H5_K_NPOINTS)       \
	X(H5T_path_find, IOACCT_H5_K_TPATH)                  \
	X(H5T_get_size, IOACCT_H5_K_TSIZE)                   \
	X(H5S_get_simple_extent_dims, IOACCT_H5_K_EXTDIMS)   \
	X(H5F_has_feature, IOACCT_H5_K_HASFEAT)              \
	X(H5CX_get_io_xfer_mode, IOACCT_H5_K_XFERMODE)

/* cookie = func index | kind << 8 */
#define IOACCT_H5_COOKIE(fn, kind) ((__u64)(fn) | (__u64)(kind) << 8)

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
};
#define IOACCT_H5_HAVE_NPOINTS 1
#define IOACCT_H5_HAVE_DTYPE 2
#define IOACCT_H5_HAVE_TSIZE 4
#define IOACCT_H5_HAVE_DIMS 8
#define IOACCT_H5_HAVE_FEAT 16 /* an open's HAS_MPI, a read's or write's mode answered */
#define IOACCT_H5_HAVE_MPIO 32 /* its answer: the driver is MPI-IO, the call collective */

#endif /* IOACCT_H5_ABI_H */
