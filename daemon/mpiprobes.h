/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MPI-IO accounting (issue 27): the object ioacct_mpi.bpf.c loaded beside
 * the main one (sharing its watch maps), uprobes attached once per MPI
 * library file that a watched task opens, each process's MPI rank read
 * from its environment then, and the counters per (slot, process, file)
 * read and forgotten with their step. Nothing is pinned: a daemon restart
 * detaches the uprobes and loses the counters of running steps.
 */
#ifndef IOACCT_MPIPROBES_H
#define IOACCT_MPIPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "probes.h"

struct ioacct_mpiprobes;

/*
 * Loads the library watch (a tracepoint on openat) and attaches it once, to
 * see that the kernel takes it; from then on it is attached only while p
 * watches a cgroup (ioacct_probes_on_publish), so an idle node runs none of
 * it. libs is mpi_libraries of ioacct.conf, h5libs hdf5_libraries (the same
 * watch, the same ELF worker and uprobes: issue 39). NULL with errno and `err` on
 * failure. Closed before p.
 */
struct ioacct_mpiprobes *ioacct_mpiprobes_open(struct ioacct_probes *p, const char *libs,
					       const char *h5libs, uint32_t v1_ssid, char *err,
					       size_t errlen);
void ioacct_mpiprobes_close(struct ioacct_mpiprobes *m);

/* An fd that is readable when there are library opens to handle (epoll). */
int ioacct_mpiprobes_fd(const struct ioacct_mpiprobes *m);
/*
 * Handles them: attaches to libraries not seen before, notes the processes'
 * ranks; and hands the libraries no watched step has used for detach_after
 * to the detacher.
 */
void ioacct_mpiprobes_poll(struct ioacct_mpiprobes *m);
/*
 * slot's step is registered, its program not started yet: the libraries
 * parsed ahead at start (the system's directories) are attached now, so
 * that its first calls into them are counted (a serial HDF5 program makes
 * them before its library's open could reach the daemon), and used by slot
 * as if its tasks had opened them. Those attached already cost nothing.
 */
void ioacct_mpiprobes_attach_ahead(struct ioacct_mpiprobes *m, uint32_t slot);
/* mpi_detach_after of ioacct.conf; 0 (the default here): as soon as their last step ends. */
void ioacct_mpiprobes_set_detach_after(struct ioacct_mpiprobes *m, uint64_t ns);
/*
 * probe_exe (issue 39): the program a task of slot is about to execute,
 * fd as its user opened it (taken), probed now so that its first run is
 * counted. 0: answered now (its HDF5 probed already, none in it as of its
 * change time, or programs not looked at); 1: the client tag (its request
 * seq) waits for ioacct_mpiprobes_answer(); -errno with why (refused, or
 * too many wait).
 */
int ioacct_mpiprobes_probe_exe(struct ioacct_mpiprobes *m, int fd, uint32_t slot, void *tag,
			       uint32_t seq, const char **why);
/* One waiting client answered: its tag and seq, the status (0 or -errno) and why. */
bool ioacct_mpiprobes_answer(struct ioacct_mpiprobes *m, void **tag, uint32_t *seq, int *status,
			     const char **why);
/* The client tag went away: forgotten. */
void ioacct_mpiprobes_cancel(struct ioacct_mpiprobes *m, void *tag);
/* How many library files have uprobes (for tests and status). */
size_t ioacct_mpiprobes_nlibs(const struct ioacct_mpiprobes *m);

/* An MPI-IO call of a slot with spans (ioacct_mpiprobes_spans), as it returned. */
struct ioacct_mpi_call {
	const char *func;          /* MPI_File_write_at_all */
	const char *path;          /* as given to MPI_File_open; "": not known */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	int64_t offset;            /* explicit offset (_at calls); -1: none */
	int64_t bytes;             /* count x datatype size; -1: unsized, or no data */
	int64_t result;            /* the MPI error code */
	uint32_t slot, tgid, pid;
	int32_t rank;              /* from the process's environment; -1: not known */
	bool collective;
};

/* Where the calls of slots with spans go, from ioacct_mpiprobes_poll. */
void ioacct_mpiprobes_set_span_cb(struct ioacct_mpiprobes *m,
				  void (*cb)(void *ctx, const struct ioacct_mpi_call *c),
				  void *ctx);
/* Slot's MPI-IO calls as spans from now (on), or no more; forget ends them too. */
int ioacct_mpiprobes_spans(struct ioacct_mpiprobes *m, uint32_t slot, bool on);

/* Every record of slot into *out (malloc'd), step_id left 0. */
int ioacct_mpiprobes_read(struct ioacct_mpiprobes *m, uint32_t slot, struct ioacct_mpiio **out,
			  size_t *n);
/*
 * Library opens of slot's tasks that found the library watch's ring buffer
 * full (the daemon behind): the libraries they loaded may have no uprobes.
 */
uint64_t ioacct_mpiprobes_missed(const struct ioacct_mpiprobes *m, uint32_t slot);
/* Every HDF5 record of slot (issue 39) into *out (malloc'd), step_id left 0. */
int ioacct_mpiprobes_h5_read(struct ioacct_mpiprobes *m, uint32_t slot, struct ioacct_h5rec **out,
			     size_t *n);
/*
 * Deletes slot's records (MPI-IO and HDF5), ranks, lost count and missed
 * library opens: its step is stored. Returns the calls lost.
 */
uint64_t ioacct_mpiprobes_forget(struct ioacct_mpiprobes *m, uint32_t slot);

#endif /* IOACCT_MPIPROBES_H */
