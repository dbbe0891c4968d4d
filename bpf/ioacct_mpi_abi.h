/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What ioacct_mpi.bpf.c (the MPI-IO uprobes, issue 27) and the daemon
 * (daemon/mpiprobes.c) share. Plain structs and constants, no includes:
 * the includer has the __u32/__u64 types (vmlinux.h or linux/types.h).
 */
#ifndef IOACCT_MPI_ABI_H
#define IOACCT_MPI_ABI_H

#define IOACCT_MPI_PATH_MAX 256
#define IOACCT_MPI_NR_SIZE_BINS 10 /* the size bins of ioacct_abi.h */

/* What a function is: what it counts, and where its count and datatype are. */
enum ioacct_mpi_kind {
	IOACCT_MPI_K_READ = 0,
	IOACCT_MPI_K_WRITE,
	IOACCT_MPI_K_READ_END,  /* the end of a split read: its time, no call */
	IOACCT_MPI_K_WRITE_END,
	IOACCT_MPI_K_OPEN,
	IOACCT_MPI_K_CLOSE,
	IOACCT_MPI_K_SYNC,
	IOACCT_MPI_K_VIEW,
	IOACCT_MPI_K_SIZE,      /* set_size: metadata time */
	IOACCT_MPI_K_TYPE,      /* a datatype constructor (MPICH only): its size noted */
	IOACCT_MPI_K_TYPE_FREE, /* MPI_Type_free (MPICH only): its size forgotten */
};

/*
 * The datatype constructors whose result's size follows from their
 * arguments (in a K_TYPE function's class field): MPICH's derived
 * datatype handles are indices into objects the probes cannot find, so
 * their sizes are noted as they are made (dtsizes), per process.
 */
enum ioacct_mpi_type_ctor {
	IOACCT_MPI_T_CONTIG = 0, /* (count, old, *new): count x size(old) */
	IOACCT_MPI_T_VECTOR,     /* (count, blocklength, stride, old, *new): count x bl x size(old) */
	IOACCT_MPI_T_RESIZED,    /* (old, lb, extent, *new): size(old) */
	IOACCT_MPI_T_DUP,        /* (old, *new): size(old) */
};

/* Darshan's MPIIO access classes. */
enum ioacct_mpi_class {
	IOACCT_MPI_C_INDEP = 0,
	IOACCT_MPI_C_COLL,
	IOACCT_MPI_C_SPLIT,
	IOACCT_MPI_C_NB,
};

/*
 * IOACCT_MPI_FUNCS(X): every entry point, X(symbol, kind, class, at) with
 * at 1 for the explicit-offset forms (count and datatype one argument later).
 */
#define IOACCT_MPI_RW(X, rw, K)                                                   \
	X(MPI_File_##rw, K, IOACCT_MPI_C_INDEP, 0)                                \
	X(MPI_File_##rw##_at, K, IOACCT_MPI_C_INDEP, 1)                           \
	X(MPI_File_##rw##_shared, K, IOACCT_MPI_C_INDEP, 0)                       \
	X(MPI_File_##rw##_all, K, IOACCT_MPI_C_COLL, 0)                           \
	X(MPI_File_##rw##_at_all, K, IOACCT_MPI_C_COLL, 1)                        \
	X(MPI_File_##rw##_ordered, K, IOACCT_MPI_C_COLL, 0)                       \
	X(MPI_File_i##rw, K, IOACCT_MPI_C_NB, 0)                                  \
	X(MPI_File_i##rw##_at, K, IOACCT_MPI_C_NB, 1)                             \
	X(MPI_File_i##rw##_shared, K, IOACCT_MPI_C_NB, 0)                         \
	X(MPI_File_i##rw##_all, K, IOACCT_MPI_C_NB, 0)                            \
	X(MPI_File_i##rw##_at_all, K, IOACCT_MPI_C_NB, 1)                         \
	X(MPI_File_##rw##_all_begin, K, IOACCT_MPI_C_SPLIT, 0)                    \
	X(MPI_File_##rw##_at_all_begin, K, IOACCT_MPI_C_SPLIT, 1)                 \
	X(MPI_File_##rw##_ordered_begin, K, IOACCT_MPI_C_SPLIT, 0)                \
	X(MPI_File_##rw##_all_end, K##_END, IOACCT_MPI_C_SPLIT, 0)                \
	X(MPI_File_##rw##_at_all_end, K##_END, IOACCT_MPI_C_SPLIT, 0)             \
	X(MPI_File_##rw##_ordered_end, K##_END, IOACCT_MPI_C_SPLIT, 0)

#define IOACCT_MPI_FUNCS(X)                                                       \
	IOACCT_MPI_RW(X, read, IOACCT_MPI_K_READ)                                 \
	IOACCT_MPI_RW(X, write, IOACCT_MPI_K_WRITE)                               \
	X(MPI_File_open, IOACCT_MPI_K_OPEN, IOACCT_MPI_C_COLL, 0)                 \
	X(MPI_File_close, IOACCT_MPI_K_CLOSE, IOACCT_MPI_C_COLL, 0)               \
	X(MPI_File_sync, IOACCT_MPI_K_SYNC, IOACCT_MPI_C_COLL, 0)                 \
	X(MPI_File_set_view, IOACCT_MPI_K_VIEW, IOACCT_MPI_C_COLL, 0)             \
	X(MPI_File_set_size, IOACCT_MPI_K_SIZE, IOACCT_MPI_C_COLL, 0)               \
	X(MPI_Type_contiguous, IOACCT_MPI_K_TYPE, IOACCT_MPI_T_CONTIG, 0)         \
	X(MPI_Type_vector, IOACCT_MPI_K_TYPE, IOACCT_MPI_T_VECTOR, 0)             \
	X(MPI_Type_create_hvector, IOACCT_MPI_K_TYPE, IOACCT_MPI_T_VECTOR, 0)     \
	X(MPI_Type_create_resized, IOACCT_MPI_K_TYPE, IOACCT_MPI_T_RESIZED, 0)    \
	X(MPI_Type_dup, IOACCT_MPI_K_TYPE, IOACCT_MPI_T_DUP, 0)                   \
	X(MPI_Type_free, IOACCT_MPI_K_TYPE_FREE, 0, 0)

/*
 * How a library's handles are read (the daemon finds it from the library's
 * symbols and passes it in each uprobe's cookie, with the function's kind):
 * OpenMPI's MPI_Datatype and MPI_Comm are pointers to structs whose layout
 * is fixed for its ABI (libmpi.so.40); MPICH's are ints whose builtin
 * datatypes carry their size. Anything else: calls counted, bytes unknown.
 */
enum ioacct_mpi_flavour {
	IOACCT_MPI_UNKNOWN = 0,
	IOACCT_MPI_OPENMPI,
	IOACCT_MPI_MPICH,
	IOACCT_MPI_HDF5, /* not MPI: an HDF5 library, its functions IOACCT_H5_FUNCS (issue 39) */
};

/* OpenMPI 4.x (libmpi.so.40): opal_datatype_t.size, and a communicator's group size. */
#define IOACCT_OMPI_DT_SIZE_OFF 24
#define IOACCT_OMPI_COMM_GROUP_OFF 248
#define IOACCT_OMPI_GROUP_SIZE_OFF 16
/* MPICH: MPI_COMM_SELF, and a builtin datatype handle's kind and size bits. */
#define IOACCT_MPICH_COMM_SELF 0x44000001U
#define IOACCT_MPICH_KIND_BUILTIN 1U

/* cookie = func index | kind << 8 | class << 16 | at << 20 | flavour << 24 */
#define IOACCT_MPI_COOKIE(fn, kind, cls, at, fl)                                  \
	((__u64)(fn) | (__u64)(kind) << 8 | (__u64)(cls) << 16 | (__u64)(at) << 20 | \
	 (__u64)(fl) << 24)

/* dtsizes: an MPICH derived datatype's size in bytes, per (slot, process, handle). */
struct ioacct_mpi_dt_key {
	__u32 slot;
	__u32 tgid;
	__u32 handle;
	__u32 pad;
};

/* records: one per (slot, process, file), the file named by its path's hash. */
struct ioacct_mpi_key {
	__u32 slot;
	__u32 tgid;
	__u64 file; /* FNV-1a of the path given to MPI_File_open */
};

struct ioacct_mpi_val {
	__u64 start;  /* the slot's start_ns when made: a reused slot is another job */
	__u64 indep_opens, coll_opens;
	__u64 indep_reads, indep_writes, coll_reads, coll_writes;
	__u64 split_reads, split_writes, nb_reads, nb_writes;
	__u64 syncs, views;
	__u64 bytes_read, bytes_written;
	__u64 unsized_reads, unsized_writes; /* calls whose datatype size is unknown */
	__u64 read_ns, write_ns, meta_ns;
	__u64 size_read[IOACCT_MPI_NR_SIZE_BINS];
	__u64 size_written[IOACCT_MPI_NR_SIZE_BINS];
	char path[IOACCT_MPI_PATH_MAX];
};

/* pend: a call between its entry and its return, per thread (pid_tgid). */
struct ioacct_mpi_pending {
	__u64 ts;
	__u64 cookie;
	__u64 a[5];
	__u32 slot;
	__u32 depth; /* MPI-IO calls made inside this one: counted as this one */
};

/* An executable's file (exeseen's key, an exec event's). */
struct ioacct_exe_key {
	__u64 dev; /* its super block's, in stat(2)'s form (new_encode_dev()); not always st_dev (btrfs) */
	__u64 ino;
};

/*
 * events: a watched task opened a file whose name starts with one of the
 * daemon's library prefixes (ld.so loading an MPI library): the daemon
 * attaches to it and reads the task's rank. Or it executed a program
 * (kind EV_EXEC).
 */
struct ioacct_mpi_event {
	__u32 tgid;
	__u32 slot;
	__u32 kind; /* IOACCT_MPI_EV_* */
	__u32 pad;
	struct ioacct_exe_key exe; /* EV_EXEC: the file the task now runs */
	char path[IOACCT_MPI_PATH_MAX]; /* EV_LIB: the path it opened */
};

/*
 * Event kinds: a library opened (above), or a program executed by a
 * watched task (issue 39: HDF5 linked into the executable), whose file the
 * daemon looks at through /proc/PID/exe.
 */
#define IOACCT_MPI_EV_LIB 0
#define IOACCT_MPI_EV_EXEC 1

/*
 * exeseen: executables the daemon found without HDF5 (or refused), as of
 * their change time: their next execs send no event, so that a job's
 * thousands of small programs cost one parse each file, not one each exec.
 * A file changed since (rebuilt in place, chmod) is looked at again.
 */
struct ioacct_exe_val {
	__s64 ctime_sec;
	__u32 ctime_nsec;
	__u32 pad;
};

/*
 * spans: an MPI-IO call of a slot whose job asked for its calls as spans
 * (--io-monitor=spans=mpiio), made at its return; the daemon names its file
 * from the records map (slot, tgid, file) and its rank from its environment.
 */
struct ioacct_mpi_span {
	__u64 start_ns, end_ns; /* CLOCK_MONOTONIC */
	__u64 cookie;           /* the function (IOACCT_MPI_COOKIE) */
	__u64 file;             /* records' key of its file; 0: not known */
	__s64 offset;           /* explicit offset of an _at call; -1: none */
	__s64 bytes;            /* count x datatype size; -1: unsized or no data */
	__s32 ret;
	__u32 tgid, pid, slot;
};

#define IOACCT_MPI_PREFIXES 8 /* mpi_libraries' and hdf5_libraries' */
#define IOACCT_MPI_PREFIX_MAX 16

#endif /* IOACCT_MPI_ABI_H */
