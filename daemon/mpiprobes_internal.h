/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MPI-IO and HDF5 object's state, shared by mpiprobes.c (the library
 * and program watch, the uprobes' attach and detach) and mpirecords.c (the
 * records a step's finish reads and forgets). Not for other modules: they
 * go through mpiprobes.h.
 */
#ifndef IOACCT_MPIPROBES_INTERNAL_H
#define IOACCT_MPIPROBES_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <linux/types.h>

#include "ioacct_h5_abi.h"
#include "ioacct_mpi_abi.h"
#include "mpiprobes.h"

/* The MPI-IO functions (IOACCT_MPI_FUNCS): a library's links and offsets are this long. */
#define MPI_FUNC_ONE_(sym, kind, cls, at) +1
#define NFUNCS (0 IOACCT_MPI_FUNCS(MPI_FUNC_ONE_))
/* What the ELF worker says of a file: its offsets, and for HDF5 the words after them. */
#define NOFFS_H5_ (IOACCT_H5_NFUNCS + IOACCT_H5_NWORDS)
#define NOFFS (NFUNCS > NOFFS_H5_ ? NFUNCS : NOFFS_H5_)

/*
 * A library file with uprobes, and the slots whose tasks loaded it (its
 * users). Until the ELF worker has said where its functions are, it is
 * pending: its descriptor (checked, the one the uprobes will name) kept.
 */
struct mpilib {
	dev_t dev;
	ino_t ino;
	struct bpf_link *links[2 * NFUNCS];
	size_t nlinks;
	int mfd[2];             /* the uprobe_multi links of returns and entries, or -1 */
	uint32_t *slots;
	size_t nslots;
	uint64_t idle_since_ns; /* no slot uses it since (CLOCK_MONOTONIC); 0: in use */
	int fd;                 /* pending: the file's handle (O_PATH, checked); -1 once attached */
	bool warm;              /* pending for the answer only (elf_prewarm): no job loads it yet */
	bool ahead;             /* parsed ahead (elf_prewarm): attached at registrations once answered */
	bool at_register;       /* attached at a step's registration */
	uint32_t seq;           /* pending: its w_elf request; 0: not sent yet */
	uint64_t pending_ns;    /* pending since (CLOCK_MONOTONIC) */
	char *shown;            /* pending: its path, for the log */
	bool exe;               /* a program's executable (HDF5 linked in), not a library */
	uint32_t slot, tgid;    /* pending: the task that loaded (or executed) it first */
	struct ioacct_exe_key key; /* a program's: its exec event's (exeseen's key) */
};

/* A library the ELF worker has not answered for in this long is given up (its next open tries again). */
#define ELF_WAIT_NS (30 * NSEC_PER_SEC)
/*
 * The answers kept, by file: a library attached again (the next job, after
 * mpi_detach_after) is attached at its open, as before there was a worker,
 * rather than after a round trip, which gives the job's ranks time to map
 * it (and each uprobe then patches every process mapping it: seconds on a
 * loaded machine, while MPI_File_open goes uncounted).
 */
#define ELF_CACHE 32 /* libhdf5* names a score of the host's libraries */

struct mpirank {
	uint32_t slot, tgid;
	int32_t rank;
};

/*
 * A client waiting for the uprobes of the program its task is about to
 * execute (probe_exe): answered when the file is attached, found without
 * HDF5, or given up; its client gives up first (iorun, the SPANK plugin
 * wait 2 s) and is then forgotten (ioacct_mpiprobes_cancel).
 */
struct exewait {
	void *tag;
	uint32_t seq;
	dev_t dev;
	ino_t ino;
	bool done;
	int status;
	const char *why;
};

/* Programs waited for at once; beyond, -EBUSY and the job runs (its exec is still seen). */
#define EXE_WAITS_MAX 64

/*
 * Libraries no watched step loads any more, whose uprobes go in a thread of
 * their own: the kernel waits for an RCU grace period per uprobe it removes
 * (78 probes took 8.5 to 9.3 s on a loaded machine here), which inside a
 * FINISH request made the job's client time out.
 */
struct detaching {
	struct mpilib lib;
	struct detaching *next;
};

struct ioacct_mpiprobes {
	struct ioacct_mpi_bpf *skel;
	struct ioacct_probes *probes;
	struct bpf_link *watch; /* the library watch's link, while a cgroup is watched */
	struct bpf_link *execw; /* the exec watch's (HDF5 in executables), the same; NULL: none */
	bool h5;                /* programs are looked at too (hdf5_libraries, exec watch taken) */
	struct ring_buffer *rb;
	struct mpilib *libs;
	size_t nlibs;
	struct mpirank *ranks;
	size_t nranks, capranks;
	/* The detacher: a queue, and the library it is detaching now. */
	pthread_t detacher;
	bool detacher_on, stopping;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct detaching *queue;
	const struct mpilib *busy;
	uint64_t detach_after_ns;
	/* Calls of slots with spans go to span_cb. */
	void (*span_cb)(void *ctx, const struct ioacct_mpi_call *c);
	void *span_ctx;
	bool umulti;            /* the kernel makes uprobe_multi links */
	/* The unprivileged process that parses the libraries' ELF (elfw.c). */
	struct ioacct_worker *elf;
	/* What it said of the last files (ELF_CACHE), reused while the file is the same. */
	struct elfseen {
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec ctime;
		enum ioacct_mpi_flavour fl;
		bool exe; /* parsed as a program's (HDF5 only), not a library's */
		uint64_t off[NOFFS];
	} seen[ELF_CACHE];
	size_t nseen;
	struct exewait waits[EXE_WAITS_MAX];
	size_t nwaits;
	/* The libraries parsed ahead that have functions to probe: attached at registrations. */
	struct ahead {
		char *path;
		struct elfseen e;
	} *ahead;
	size_t nahead;
	bool ahead_off;         /* uprobes cannot be made after start (perf's, without root) */
};

/* The MPI rank of process tgid in slot's step, from its environment; -1 unknown (mpiprobes.c). */
int32_t mpiprobes_rank_of(const struct ioacct_mpiprobes *m, uint32_t slot, uint32_t tgid);

/* slot's step no longer uses its libraries (mpiprobes.c). */
void mpiprobes_libs_release(struct ioacct_mpiprobes *m, uint32_t slot);
/* The libraries no step has used for mpi_detach_after go to the detacher (mpiprobes.c). */
void mpiprobes_libs_reap(struct ioacct_mpiprobes *m);

#endif /* IOACCT_MPIPROBES_INTERNAL_H */
