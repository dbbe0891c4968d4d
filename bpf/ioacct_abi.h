/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ABI shared by the BPF object and user space: map keys and values,
 * access-size bins (operation numbers: ioacct_ops.h). Plain structs and
 * constants only, no includes: the kernel side gets __u32/__u64 from
 * vmlinux.h, user space from <linux/types.h>.
 *
 * Any change to a struct here must bump IOACCT_ABI_VERSION: the daemon
 * refuses to reuse pinned maps of another ABI version. So must a change of
 * the pinned task storage's value (struct task_ent in ioacct.bpf.c):
 * version 6 added the per-task accumulator to it, version 7 the per-file
 * records (files, fpaths, fcount) and the task's file accumulator, version 8
 * the task's rank, version 9 a file's seeks, version 10 a file's life in its
 * key (gen, idflags), its name noted late, its access sizes and read/write
 * switches, and the maps flive and flast, version 11 the 64-bit mount key
 * (issue 36) in stats, files, mountpoints and the task's entry, and the
 * task's noted mounts' slots.
 */
#ifndef IOACCT_ABI_H
#define IOACCT_ABI_H

#define IOACCT_ABI_VERSION 11

/* Operations (enum ioacct_op) and the watched system calls: ioacct_ops.h. */

/*
 * Darshan's access-size bins: a size goes in the first bin whose upper limit
 * it does not exceed (0..100, 101..1024, ..., > 1 GiB).
 */
#define IOACCT_NR_SIZE_BINS 10
#define IOACCT_SIZE_LIMIT_0 100ULL
#define IOACCT_SIZE_LIMIT_1 1024ULL
#define IOACCT_SIZE_LIMIT_2 10240ULL
#define IOACCT_SIZE_LIMIT_3 102400ULL
#define IOACCT_SIZE_LIMIT_4 1048576ULL
#define IOACCT_SIZE_LIMIT_5 4194304ULL
#define IOACCT_SIZE_LIMIT_6 10485760ULL
#define IOACCT_SIZE_LIMIT_7 104857600ULL
#define IOACCT_SIZE_LIMIT_8 1073741824ULL

/*
 * Classes of failed calls, decided in the kernel from the errno (the only
 * place it is known). Never renumber: stored data uses them.
 */
enum ioacct_err_class {
	IOACCT_ERR_NOTFOUND = 0, /* ENOENT, ENOTDIR: a lookup that found nothing */
	IOACCT_ERR_ACCESS = 1,   /* EACCES, EPERM, EROFS: permission denied */
	IOACCT_ERR_SPACE = 2,    /* ENOSPC, EDQUOT, EFBIG: out of space or quota */
	IOACCT_ERR_IO = 3,       /* EIO, ESTALE, ETIMEDOUT, ...: the storage failed */
	IOACCT_ERR_OTHER = 4,    /* the rest: EEXIST, EINVAL, EBADF, EINTR, EAGAIN, ... */
	IOACCT_NR_ERR_CLASSES = 5,
};

/* Which cgroup hierarchy a watched cgroup id belongs to. */
enum ioacct_hier {
	IOACCT_HIER_V2 = 0,
	IOACCT_HIER_V1 = 1,
};

/* A slot number meaning "no watched cgroup" in the per-task cache. */
#define IOACCT_SLOT_NONE 0xffffffffU
/* The daemon's own process while it calibrates FMODE_CREATED: recorded, never counted. */
#define IOACCT_SLOT_CALIB 0xfffffffeU

/*
 * The syscall table (rodata, filled by the daemon from the host's syscall
 * numbers): sysmap[nr] = (op + 1) | kind << IOACCT_SYS_KIND_SHIFT, 0 for a
 * syscall that is not watched.
 */
#define IOACCT_NR_SYSCALLS 512
#define IOACCT_SYS_OP_MASK 0xff
#define IOACCT_SYS_KIND_SHIFT 8

/* Where a syscall's target is found. */
enum ioacct_sys_kind {
	IOACCT_SK_FD_DATA = 1,  /* fd = arg0, regular files only, bytes = return value */
	IOACCT_SK_FD = 2,       /* fd = arg0, regular files and directories */
	IOACCT_SK_PATH = 3,     /* path = arg0, relative to the cwd */
	IOACCT_SK_AT = 4,       /* dirfd = arg0, path = arg1 */
	IOACCT_SK_OPEN_PATH = 5,/* like PATH; the returned fd names the file */
	IOACCT_SK_OPEN_AT = 6,  /* like AT; the returned fd names the file */
	IOACCT_SK_UNLINKAT = 7, /* like AT; AT_REMOVEDIR in arg2 makes it an rmdir */
	/*
	 * Two ends, bytes = return value: a read of the source when it is a
	 * regular file, a write of the destination when it is one (a pipe or
	 * socket end is not file-system I/O). The row's op is not used.
	 */
	IOACCT_SK_FD_PAIR = 8,  /* source fd = arg0, destination fd = arg2 (splice, copy_file_range) */
	IOACCT_SK_FD_PAIR_OUT = 9, /* destination fd = arg0, source fd = arg1 (sendfile) */
	/*
	 * Linux AIO (issue 14): the iocbs a call submits are counted as reads,
	 * writes and fsyncs of their files when io_getevents reaps their
	 * events, by the submitter's job. The row's op is not used.
	 */
	IOACCT_SK_AIO_SUBMIT = 10, /* io_submit: nr = arg1, iocb pointers = arg2 */
	IOACCT_SK_AIO_REAP = 11,   /* io_getevents, io_pgetevents: events = arg3, count = return value */
	/* Access hints (issue 14), counted by advice. */
	IOACCT_SK_FADVISE = 16, /* fd = arg0, advice = arg3 */
	IOACCT_SK_MADVISE = 24, /* advice = arg2; no file: mount 0 */
	/* Kinds are < 32 (IOACCT_SK_BASE_MASK): the flags below sit above. */
};

/*
 * Flags on a kind (the page-cache view's request range of a read): the
 * offset is arg3 (pread64, preadv, preadv2; -1: the file position), and the
 * length is a vector's (readv, preadv: unknown, so every page from the
 * offset on counts as requested).
 */
#define IOACCT_SKF_POS 0x20
#define IOACCT_SKF_VEC 0x40
/*
 * statx: its buffer is arg4, where newfstatat's is arg2 (the per-file
 * records read the file's device and inode from it). pwrite64, pwritev and
 * pwritev2 carry IOACCT_SKF_POS as the preads do: the offset of the access.
 */
#define IOACCT_SKF_STATX 0x80
#define IOACCT_SK_BASE_MASK 0x1f

/*
 * Advice classes, the size-histogram index a fadvise or madvise call is
 * counted in (their op has no sizes). posix_fadvise's advice values are
 * the first six; madvise's common ones share them, the rest are apart.
 */
enum ioacct_hint {
	IOACCT_HINT_NORMAL = 0,
	IOACCT_HINT_RANDOM = 1,
	IOACCT_HINT_SEQUENTIAL = 2,
	IOACCT_HINT_WILLNEED = 3,
	IOACCT_HINT_DONTNEED = 4,
	IOACCT_HINT_NOREUSE = 5,  /* POSIX_FADV_NOREUSE */
	IOACCT_HINT_FREE = 6,     /* MADV_FREE, MADV_REMOVE */
	IOACCT_HINT_COLD = 7,     /* MADV_COLD, MADV_PAGEOUT */
	IOACCT_HINT_HUGEPAGE = 8, /* MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_COLLAPSE */
	IOACCT_HINT_OTHER = 9,    /* the rest: MADV_DONTFORK, MADV_POPULATE_*, ... */
	IOACCT_NR_HINTS = 10,      /* = IOACCT_NR_SIZE_BINS */
};

/* watch: cgroup -> slot. One entry per registered cgroup. */
struct ioacct_watch_key {
	__u64 cgroup_id;
	__u32 hier;
	__u32 pad;
};

struct ioacct_watch_val {
	__u32 slot;
	__u32 pad;
};

/* slots[slot]: the time base of the job the slot belongs to. */
struct ioacct_slot {
	__u64 start_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) at job start */
	__u64 width_ns; /* bin width */
	__u32 active;
	__u32 pad;
};

/*
 * A mount's key wherever the kernel side names one (counters, file records,
 * the path table, the notes): the kernel's 64-bit mnt_id_unique where
 * struct mount has it (Linux 6.8+, never handed out twice; at least
 * IOACCT_MNT_UNIQUE_MIN), else its 32-bit mnt_id, the number of
 * /proc/PID/mountinfo, which the kernel gives to the next mount made as soon
 * as a mount is freed (below IOACCT_MNT_UNIQUE_MIN: the two never meet).
 */
#define IOACCT_MNT_UNIQUE_MIN 0x80000000ULL

/* stats: per-CPU counters for one (slot, mount, operation, time bin). */
struct ioacct_stat_key {
	__u32 slot;
	__u32 bin;
	__u32 op;
	__u32 pad;
	__u64 mnt_id; /* the mount's key (IOACCT_MNT_UNIQUE_MIN) */
};

struct ioacct_stat_val {
	__u64 bytes;
	__u64 calls;
	__u64 ns;
	/* Failed calls per enum ioacct_err_class; their sum is every failed call. */
	__u64 errors[IOACCT_NR_ERR_CLASSES];
	__u64 size[IOACCT_NR_SIZE_BINS];
};

/*
 * files: the per-file records of issue 26, one per (slot, rank, mount, file)
 * for the life of the step, read and deleted by the daemon when the step
 * ends. A file is one life of an inode (issue 36): its device (the kernel's
 * dev_t of its super block, MAJOR << 20 | MINOR), inode and generation
 * (i_generation, which ext4, xfs, tmpfs and btrfs give every new inode; on a
 * file system that leaves it 0, a birth counter the probes bump when the job
 * creates the file), so that the next file to get a freed inode number has
 * a record of its own. dev 0 and ino 0 is the mount's "other files": the
 * calls on files past the slot's max_files records (the step is then
 * partial). rank is the Slurm or MPI rank of the task, -1 unknown.
 * IOACCT_FILE_NOGEN: a file only stat'ed by path so far, whose generation a
 * stat's buffer does not tell; the daemon adds such a record to its file's
 * life (the next one made after it, else the last).
 */
#define IOACCT_FILE_NOGEN 1U
struct ioacct_file_key {
	__u32 slot;
	__s32 rank;
	__u64 mnt_id; /* the mount's key (IOACCT_MNT_UNIQUE_MIN) */
	__u32 dev;
	__u32 pad;
	__u64 ino;
	__u32 gen;
	__u32 idflags; /* IOACCT_FILE_* */
};

/* Darshan's common access sizes: the first IOACCT_FILE_ACCESS_MAX distinct sizes of a file. */
#define IOACCT_FILE_ACCESS_MAX 32

/*
 * A file's counters: successful calls only, as Darshan's POSIX module
 * counts them. The *_byte fields are Darshan's (offset + size - 1 of an
 * access, 0 before any): max_* the largest, last_* the last access's, from
 * which the next one is sequential (it starts after it) or consecutive (it
 * starts right after it). Times are bpf_ktime_get_ns(): the first access's
 * start and the last one's end, 0 when none.
 */
struct ioacct_file_val {
	__u64 opens;
	__u64 reads;
	__u64 writes;
	__u64 stats;
	__u64 fsyncs;
	__u64 bytes_read;
	__u64 bytes_written;
	__u64 read_ns;
	__u64 write_ns;
	__u64 meta_ns;
	__s64 max_byte_read;
	__s64 max_byte_written;
	__s64 last_byte_read;
	__s64 last_byte_written;
	__u64 seq_reads;
	__u64 seq_writes;
	__u64 consec_reads;
	__u64 consec_writes;
	__u64 first_read;
	__u64 last_read;
	__u64 first_write;
	__u64 last_write;
	__u64 size_read[IOACCT_NR_SIZE_BINS];
	__u64 size_written[IOACCT_NR_SIZE_BINS];
	/*
	 * The page-cache and mmap views' bytes of the file: its pages mapped
	 * into the job by faults (the mount's mmap_fault bytes) and brought
	 * into the page cache for its reads (cache_fill bytes), counted where
	 * the mount's are.
	 */
	__u64 mmap_bytes;
	__u64 cache_miss_bytes;
	__u64 seeks; /* lseek calls of the file (stdio's ftell is one) */
	/* A read after a write or a write after a read (Darshan's POSIX_RW_SWITCHES). */
	__u64 rw_switches;
	__u64 born;   /* when the record was made (bpf_ktime_get_ns()) */
	__u64 ltag;   /* flast[lidx] is this record's while its tag is ltag; 0: none */
	__u32 lidx;
	__u32 pad;
	__u64 named;  /* its path is noted in fpaths (or being noted) */
	/*
	 * Darshan's common access sizes: the first IOACCT_FILE_ACCESS_MAX
	 * distinct sizes of its reads and writes, each size + 1 (0: a free
	 * entry) in the entry its hash picks or the next free one, with their
	 * counts. The daemon keeps the four most common (POSIX_ACCESS1..4).
	 * 64-bit entries: the BPF object's compare-and-swap is of 64 bits.
	 */
	__u64 acc_size[IOACCT_FILE_ACCESS_MAX];
	__u64 acc_count[IOACCT_FILE_ACCESS_MAX];
};

/*
 * flive: {slot, dev, ino} -> the life of the inode the slot's records last
 * saw (gen: the key's; igen: its i_generation), so that a stat by path,
 * which tells no generation, counts in that life, and a file system
 * without generations gets a birth at each create.
 */
struct ioacct_flive_key {
	__u32 slot;
	__u32 dev;
	__u64 ino;
};

struct ioacct_flive_val {
	__u32 gen;
	__u32 igen;
};

/*
 * flast[lidx]: a record's last accesses, shared by every task that counts
 * in it (Darshan judges sequential and consecutive accesses, and read/write
 * switches, against the file's last access by any thread of the process).
 * An array entry per record made, taken in turn: the record owns it while
 * the entry's tag is its ltag.
 */
struct ioacct_flast {
	__u64 tag;
	__s64 last_byte_read;
	__s64 last_byte_written;
	__u32 last_io; /* 1 read, 2 write, 0 none: Darshan's last_io_type */
	__u32 pad;
};

/* dropped[slot]: per-CPU, events that found the stats map full. */
struct ioacct_drop_val {
	__u64 events;
	__u64 bytes;
};

/*
 * state[0]: knobs the daemon changes at run time. gen is bumped whenever the
 * set of watched cgroups changes, which invalidates every task's cached slot.
 */
struct ioacct_state {
	__u64 gen;
	__u32 nactive;       /* watched cgroups + calibration: 0 means nothing to do */
	__u32 nwatch_v2;     /* number of watched v2 cgroups */
	__u32 nwatch_v1;     /* number of watched v1 cgroups */
	__u32 fmode_created; /* FMODE_CREATED bit, found by calibration; 0 = unknown */
	__u32 calib_tgid;    /* process whose opens are recorded for calibration */
	__u32 epoch;         /* bumped each time the programs are attached (low 16 bits used) */
	__u64 calib_fmode[2];/* f_mode of the calibrating process's last two opens */
};

/*
 * mountpoints: longest-prefix match of an absolute path to a mount id, per
 * mount namespace, for path-based operations whose file cannot be reached
 * through a file descriptor (failed opens, mkdir, unlink, rename, stat).
 */
#define IOACCT_MP_PATH_MAX 248 /* the LPM trie takes at most 256 bytes of data */
struct ioacct_mp_key {
	__u32 prefixlen; /* in bits, counting the mntns field */
	__u32 mntns;     /* inode number of the mount namespace */
	char path[IOACCT_MP_PATH_MAX];
};

struct ioacct_mp_val {
	__u64 mnt_id; /* the mount's key (IOACCT_MNT_UNIQUE_MIN) */
};

/*
 * mntnotes: (mount key, slot) -> what the kernel knows of a mount a watched
 * task did fd I/O on, for the daemon to name a mount whose namespace is gone
 * before the drain (a short-lived container), and to prove that a mount
 * table's entry is the mount counted. Keyed by the slot whose counters it
 * was noted for too, even where the key is mnt_id_unique: a 32-bit id freed
 * by one job's container is at once another's (the "/" of the next
 * `unshare -m`), whose note must not name the first job's bytes, and the
 * daemon names a job's mounts from its own slots' notes only; it forgets a
 * slot's notes when the slot gets a new step. Not pinned: a new daemon's
 * programs start an empty one, so this needs no ABI version of its own.
 */
#define IOACCT_NOTE_FSTYPE_MAX 32
#define IOACCT_NOTE_PATH_MAX 256     /* a power of two: the BPF side masks offsets with it */
#define IOACCT_NOTE_PATH_COMPLETE 1  /* path is the whole mount point, from its namespace's root */
struct ioacct_mnt_note_key {
	__u64 mnt_id; /* the mount's key */
	__u32 slot;   /* the slot whose counters it was noted for */
	__u32 pad;
};

struct ioacct_mnt_note {
	__u64 vfsmnt;                        /* which of the mounts that had this id */
	__u64 uniq;                          /* mnt_id_unique (6.8+, never reused); 0 unknown */
	__u64 first_ns;                      /* bpf_ktime_get_ns() when this mount was first noted */
	__u64 slot_start;                    /* the slot's start_ns then: a reused slot is another job */
	__u32 mntns;                         /* inode number of its mount namespace */
	__u32 flags;                         /* IOACCT_NOTE_PATH_* */
	__u32 mnt_id_old;                    /* its 32-bit mnt_id, as mountinfo lists it */
	__u32 pad;
	char fstype[IOACCT_NOTE_FSTYPE_MAX]; /* mnt_sb->s_type->name */
	/* Its mount point's path in its namespace; without _COMPLETE, its last components. */
	char path[IOACCT_NOTE_PATH_MAX];
};

#endif /* IOACCT_ABI_H */
