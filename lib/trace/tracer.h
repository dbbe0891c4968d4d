/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tracer as a library (trace/libtracer.la, libbpf): loads iotrace's BPF
 * object (bpf/iotrace.bpf.c) for one cgroup (cgroup2, or of a v1
 * hierarchy), reads its ring buffer
 * and hands each completed call to a callback as an ioacct_trace_rec, with
 * the mount point and, for fd calls, the path of the open that made the fd.
 * Used by iotrace (lines), iorun --trace and ioacctd for
 * sbatch --io-monitor=trace (Darshan DXT records).
 */
#ifndef IOACCT_TRACER_H
#define IOACCT_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracefmt.h"

/* Ring buffer bytes unless told: a few thousand events of slack for a burst. */
#define IOACCT_TRACER_BUFFER_DEFAULT (4UL << 20)

struct ioacct_tracer;

/*
 * Called for every event, in the order the ring buffer gives them
 * (completion order: an RPC when mountstats counted it).
 */
typedef void (*ioacct_tracer_fn)(void *ctx, const struct ioacct_trace_rec *r);

/* What the BPF side traces: one cgroup and everything below it. */
struct ioacct_tracer_target {
	uint64_t cgid;      /* the cgroup's id (its directory's inode number) */
	uint32_t level;     /* its depth below its hierarchy's root */
	bool v1;            /* a cgroup v1 cgroup, of the hierarchy of subsystem v1_ssid */
	uint32_t v1_ssid;   /* that subsystem's id (/proc/cgroups) */
};

/*
 * The target for cgroup directory `dir` (an absolute path): a cgroup2 cgroup
 * when v1_controller is NULL, else a cgroup of the v1 hierarchy that has
 * that controller ("freezer": ioacctd's cgroup_v1_hierarchy). 0, or -errno
 * with what failed in err.
 */
int ioacct_tracer_target(const char *dir, const char *v1_controller, struct ioacct_tracer_target *t,
			 char *err, size_t errlen);

/* ioacct_tracer_open's flags. */
#define IOACCT_TRACER_RPC 1u      /* the traced tasks' RPCs too (iotrace --rpc): sunrpc must be there */
#define IOACCT_TRACER_RPC_ONLY 2u /* with IOACCT_TRACER_RPC: the RPCs alone, no call records */

/*
 * Whether RPCs can be traced: sunrpc's tracepoints (rpc_task_begin,
 * rpc_stats_latency) in the kernel's BTF, its own or its modules'; *nfs
 * says whether the NFS client's (nfs_initiate_*, the file ids) are too.
 * 0, or -errno with what is missing, in one sentence, in err.
 */
int ioacct_tracer_rpc_check(bool *nfs, char *err, size_t errlen);

/*
 * Loads and attaches the tracer for target `tg` with a ring buffer of
 * `buffer_size` bytes (a power of 2, a page or more), IOACCT_TRACER_*
 * `flags`. Event times are
 * counted from `t0_ns` (CLOCK_MONOTONIC; 0: from when the tracer is
 * attached). libbpf's warnings go to stderr after "`ident`: libbpf: ".
 * 0, or -errno with what failed in err.
 */
int ioacct_tracer_open(struct ioacct_tracer **out, const char *ident,
		       const struct ioacct_tracer_target *tg, unsigned int flags, unsigned long buffer_size,
		       uint64_t t0_ns, ioacct_tracer_fn fn, void *ctx, char *err, size_t errlen);
/* The ring buffer's epoll fd: readable when events wait (ioacctd's event loop). */
int ioacct_tracer_fd(const struct ioacct_tracer *t);
/* Waits up to timeout_ms for events and hands them over; 0 or -errno (-EINTR is 0). */
int ioacct_tracer_poll(struct ioacct_tracer *t, int timeout_ms);
/* Hands over what is left in the ring buffer without waiting; 0 or -errno. */
int ioacct_tracer_drain(struct ioacct_tracer *t);
/* Events handed over so far. */
uint64_t ioacct_tracer_events(const struct ioacct_tracer *t);
/* Events the BPF side could not queue (ring buffer full): lost, never seen. */
uint64_t ioacct_tracer_lost(const struct ioacct_tracer *t);
/* Detaches and frees; accepts NULL. */
void ioacct_tracer_close(struct ioacct_tracer *t);

#endif /* IOACCT_TRACER_H */
