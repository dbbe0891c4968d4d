/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of the BPF object: choosing a backend, loading and
 * attaching it, pinning maps and links under the pin directory so counting
 * survives a daemon restart, and the map operations the daemon needs. The
 * only module that includes libbpf.
 */
#ifndef IOACCT_PROBES_H
#define IOACCT_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "model.h"
#include "mntid.h"

struct ioacct_probes;

struct ioacct_probes_opts {
	const char *pin_dir;           /* e.g. /sys/fs/bpf/ioacct */
	enum ioacct_probe_mode mode;
	uint32_t max_jobs;             /* slots */
	uint32_t max_cgroups;
	uint32_t max_entries;
	uint32_t max_mountpoints;
	uint32_t max_files;            /* per-file records per slot (0: 4096) */
	uint32_t v1_ssid;              /* subsystem id of the v1 attribution hierarchy */
	enum ioacct_detach detach_when_idle; /* attach only while something is watched */
	uint32_t views;                /* the views to load where the kernel allows (views =), IOACCT_VIEWS_ALL */
	bool files_off;                /* file_records = no: the programs without the per-file records */
	bool legacy_mnt_ids;           /* mounts by 32-bit ids, as before 6.8 (ioacct_mnt_ids_legacy()) */
};

/*
 * Mounts bpffs and tracefs when missing, then either reuses what an earlier
 * daemon pinned (its programs keep running, nothing is lost) or chooses a
 * backend, loads, attaches and pins. NULL with errno and `err` on failure.
 * With detach_when_idle, the first ioacct_probes_publish() detaches them
 * when nothing is watched.
 */
struct ioacct_probes *ioacct_probes_open(const struct ioacct_probes_opts *opts, char *err,
					 size_t errlen);
/* With unpin, removes the pins so the programs detach; else they keep counting. */
void ioacct_probes_close(struct ioacct_probes *p, bool unpin);

/*
 * Detaches every program (removing the link pins), so that no syscall pays
 * anything; attach puts them back, unpinned. The maps stay as they are.
 * With detach_when_idle, publish does this by itself; tests/bench/abbench
 * calls them to alternate bare and monitored runs.
 */
int ioacct_probes_detach(struct ioacct_probes *p);
int ioacct_probes_attach(struct ioacct_probes *p, char *err, size_t errlen);
bool ioacct_probes_attached(const struct ioacct_probes *p);

/* "tracepoint", "fentry" or "kprobe". */
/* What the start cost: "backend chosen in A ms, N programs loaded in B ms, attached in C ms". */
void ioacct_probes_start_cost(const struct ioacct_probes *p, char *buf, size_t len);
const char *ioacct_probes_mode(const struct ioacct_probes *p);
/*
 * How the programs read kernel memory: "direct" (loads through
 * bpf_rdonly_cast, 6.2+) or "probe-read" (bpf_probe_read_kernel: older
 * kernels, or IOACCT_BPF_COMPAT=1 in the daemon's environment).
 */
const char *ioacct_probes_reads(const struct ioacct_probes *p);
/* The object for kernels without bpf_rdonly_cast, embedded (compat_obj.c). */
const void *ioacct_probes_compat_obj(size_t *size);
/* Why that mode: which backends were tried and why they were refused. */
const char *ioacct_probes_reason(const struct ioacct_probes *p);
/*
 * The page-cache, mmap and io_uring views loaded, issue 14, and what serves
 * those not served by tracepoints: "cache,mmap,readahead,uring (mmap by
 * fentry, readahead by fentry)"; "none".
 */
const char *ioacct_probes_views(const struct ioacct_probes *p);
/* What each job records as its probe mode: "tracepoint views=cache,mmap,readahead". */
const char *ioacct_probes_job_mode(const struct ioacct_probes *p);
bool ioacct_probes_reused(const struct ioacct_probes *p);
uint32_t ioacct_probes_max_jobs(const struct ioacct_probes *p);

int ioacct_probes_watch_add(struct ioacct_probes *p, uint64_t cgroup_id, uint32_t hier, uint32_t slot);
int ioacct_probes_watch_del(struct ioacct_probes *p, uint64_t cgroup_id, uint32_t hier);
/*
 * Recounts the watch map, publishes the counts and bumps the generation;
 * with detach_when_idle, attaches the programs when something is watched
 * now and was not, and detaches them when nothing is.
 */
int ioacct_probes_publish(struct ioacct_probes *p);
/*
 * fn(ctx, n) once now and after each publish, n the cgroups watched then
 * (calibration apart): how the MPI-IO object's library watch follows the
 * main object's (mpiprobes.c). One hook; fn NULL removes it.
 */
void ioacct_probes_on_publish(struct ioacct_probes *p, void (*fn)(void *ctx, uint32_t nwatched),
			      void *ctx);
int ioacct_probes_slot_set(struct ioacct_probes *p, uint32_t slot, uint64_t start_mono_ns,
			   uint64_t width_ns);
int ioacct_probes_slot_clear(struct ioacct_probes *p, uint32_t slot);
int ioacct_probes_mountpoint_add(struct ioacct_probes *p, uint32_t mntns, const char *path,
				 uint64_t mnt_id);
/*
 * Publishes a mount table of namespace mntns: the visible mount of each mount
 * point, each key written only when its value changes (never a hidden mount of
 * a stack, even for a moment). Where the kernel keys mounts by their unique
 * ids, an entry without one (mnt_id still the 32-bit id) is left out: the
 * probes would count its paths under a key no counter of its files has.
 * Returns the first error other than a path too long for the table (those
 * are skipped), after trying every mount.
 */
int ioacct_probes_mountpoints_set(struct ioacct_probes *p, uint32_t mntns,
				  const struct ioacct_mount *m, size_t n);

/* A watched cgroup as the kernel has it. */
struct ioacct_probe_watch {
	uint64_t cgroup_id;
	uint32_t hier;
	uint32_t slot;
};

/* Every entry of the kernel's watch map; *out malloc'd (NULL when none). */
int ioacct_probes_watch_list(struct ioacct_probes *p, struct ioacct_probe_watch **out, size_t *n);

/*
 * What the probes noted of the mount of key mnt_id a watched task did fd
 * I/O on, when slot's counters on it were made: its file-system type, its
 * mount point's path in its mount namespace, that namespace and its 32-bit
 * id. Every note is its slot's own (a 32-bit id may be another mount's in
 * another slot; the slot's notes are forgotten when it gets a new step).
 * -ENOENT when not noted (no fd I/O on it, evicted, or noted by an earlier
 * daemon's programs, which are still the attached ones).
 */
int ioacct_probes_mount_note(struct ioacct_probes *p, uint64_t mnt_id, uint32_t slot,
			     struct ioacct_mntid_note *out);

/* One drained entry, summed over CPUs. */
struct ioacct_probe_entry {
	uint32_t slot;
	uint32_t op;
	uint32_t bin;
	uint64_t mnt_id;
	struct ioacct_counters c;
};

/*
 * Reads every entry of the stats map for which `want` returns true (all when
 * want is NULL) into *out (malloc'd). Does not delete: the caller deletes
 * with ioacct_probes_delete() once what it read is safely stored.
 */
int ioacct_probes_read(struct ioacct_probes *p,
		       bool (*want)(uint32_t slot, uint32_t bin, void *ctx), void *ctx,
		       struct ioacct_probe_entry **out, size_t *n);
int ioacct_probes_delete(struct ioacct_probes *p, const struct ioacct_probe_entry *e, size_t n);
/*
 * One per-file record of the kernel (issue 26) and the path noted for it
 * ("" when none: a file only stat'ed by path, an "other files"). A record
 * of a file stat'ed by path before the step had a record of its life
 * (IOACCT_FILE_NOGEN) is added to that life's record: `folded`, and listed
 * in its chain (fold, then each one's fold_next; -1 ends).
 */
struct ioacct_probe_file {
	struct ioacct_file_key k;
	struct ioacct_file_val v;
	char path[IOACCT_NOTE_PATH_MAX];
	bool complete; /* path is whole; else its last components */
	bool folded;
	long fold, fold_next;
};

/*
 * Every per-file record of slot into *out (malloc'd), each stat-only
 * record of no known life folded into the record of its inode's life made
 * next after it (else the last one made before it; kept apart where the
 * step has none). Read after ioacct_probes_read(), which has flushed the
 * tasks' accumulators. Does not delete: ioacct_probes_files_forget() does,
 * once they are stored.
 */
int ioacct_probes_files_read(struct ioacct_probes *p, uint32_t slot, struct ioacct_probe_file **out,
			     size_t *n);
/*
 * Record x (and those folded into it) as stored for step step_id of a job
 * started at start_mono (CLOCK_MONOTONIC ns): times from the job's start,
 * the four most common access sizes of its table.
 */
void ioacct_probes_file_row(const struct ioacct_probe_file *files, size_t i, uint32_t step_id,
			    uint64_t start_mono, struct ioacct_file *f);
/*
 * Deletes every per-file record and path of slot and zeroes its count of
 * records: its step is stored (or the slot is given to another step).
 */
int ioacct_probes_files_forget(struct ioacct_probes *p, uint32_t slot);

/* Number of entries in the stats map (for status). */
int ioacct_probes_count(struct ioacct_probes *p, uint32_t *n);

/* Sum over CPUs of the slot's dropped counters; reset zeroes them. */
int ioacct_probes_dropped(struct ioacct_probes *p, uint32_t slot, uint64_t *events, uint64_t *bytes,
			  bool reset);

/*
 * Finds the kernel's FMODE_CREATED bit by watching the daemon's own opens of
 * a file it creates and of one that exists, in `dir`. Until it is known,
 * opens that create files are not counted as creates.
 */
int ioacct_probes_calibrate(struct ioacct_probes *p, const char *dir, char *err, size_t errlen);
uint32_t ioacct_probes_fmode_created(const struct ioacct_probes *p);

/*
 * Time spent in and runs of the loaded programs, summed; the kernel counts
 * them only while sysctl kernel.bpf_stats_enabled is 1. -ENOENT when no
 * program is loaded by this daemon.
 */
int ioacct_probes_run_stats(struct ioacct_probes *p, uint64_t *run_ns, uint64_t *run_cnt);
/* The same, of the programs whose name starts with prefix ("ioacct_pc_": the page-cache views). */
int ioacct_probes_run_stats_of(struct ioacct_probes *p, const char *prefix, uint64_t *run_ns,
			       uint64_t *run_cnt);

/*
 * The fd of one of the object's maps ("watch", "slots", "state"), which
 * the MPI-IO object (mpiprobes.c) shares; owned by p. -ENOENT when none.
 */
int ioacct_probes_map_fd(struct ioacct_probes *p, const char *name);

#endif /* IOACCT_PROBES_H */
