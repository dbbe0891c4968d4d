/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HDF5 linked into the executable (issue 39; h5cc links libhdf5.a by
 * default): a watched task's exec tells the daemon which file it now runs,
 * so that the ELF worker looks for HDF5's functions in it and the daemon
 * probes them there, as in a library. Included by ioacct_mpi.bpf.c, after
 * its maps. Attached only while a cgroup is watched, as the library watch.
 */

/* Executables found without HDF5, as of their change time (ioacct_mpi_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ioacct_exe_key);
	__type(value, struct ioacct_exe_val);
} exeseen SEC(".maps");

/* struct inode's change time before 6.11 (i_ctime_sec, i_ctime_nsec): 6.6's, and older. */
struct inode___ctime66 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

struct inode___ctime_old {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

/* 6.13's multigrain timestamps keep a flag in the top bit of i_ctime_nsec; stat(2) masks it. */
#define EXE_CTIME_QUERIED (1U << 31)

static __always_inline void inode_ctime(struct inode *ino, struct ioacct_exe_val *v)
{
	if (bpf_core_field_exists(ino->i_ctime_sec)) {
		v->ctime_sec = BPF_CORE_READ(ino, i_ctime_sec);
		v->ctime_nsec = BPF_CORE_READ(ino, i_ctime_nsec) & ~EXE_CTIME_QUERIED;
	} else if (bpf_core_field_exists(((struct inode___ctime66 *)ino)->__i_ctime)) {
		v->ctime_sec = BPF_CORE_READ((struct inode___ctime66 *)ino, __i_ctime.tv_sec);
		v->ctime_nsec = BPF_CORE_READ((struct inode___ctime66 *)ino, __i_ctime.tv_nsec);
	} else {
		v->ctime_sec = BPF_CORE_READ((struct inode___ctime_old *)ino, i_ctime.tv_sec);
		v->ctime_nsec = BPF_CORE_READ((struct inode___ctime_old *)ino, i_ctime.tv_nsec);
	}
}

/* The kernel's dev_t (major << 20 | minor) as stat(2) gives it (new_encode_dev()). */
static __always_inline __u64 exe_dev(__u32 kdev)
{
	__u32 major = kdev >> 20, minor = kdev & 0xfffff;

	return (minor & 0xff) | (major << 8) | ((__u64)(minor & ~0xffU) << 12);
}

/*
 * A watched task runs a program: unless its file is known to have no HDF5
 * (exeseen, same change time), the daemon is told, once per exec: a
 * program with HDF5 is noted at each of its execs (its ranks, its step),
 * one without is parsed once and its execs stop here.
 */
SEC("tp/sched/sched_process_exec")
int ioacct_mpi_exec(void *ctx)
{
	__u32 zero = 0, slot = task_slot();
	struct ioacct_exe_val v = {}, *seen;
	struct ioacct_mpi_event *e;
	struct inode *ino;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	ino = BPF_CORE_READ(bpf_get_current_task_btf(), mm, exe_file, f_inode);
	e = bpf_map_lookup_elem(&evscratch, &zero);
	if (!ino || !e)
		return 0;
	e->exe.dev = exe_dev(BPF_CORE_READ(ino, i_sb, s_dev));
	e->exe.ino = BPF_CORE_READ(ino, i_ino);
	inode_ctime(ino, &v);
	seen = bpf_map_lookup_elem(&exeseen, &e->exe);
	if (seen && seen->ctime_sec == v.ctime_sec && seen->ctime_nsec == v.ctime_nsec)
		return 0;
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->slot = slot;
	e->kind = IOACCT_MPI_EV_EXEC;
	e->path[0] = '\0';
	/* Only the header: the path is a library open's. */
	if (bpf_ringbuf_output(&events, e, offsetof(struct ioacct_mpi_event, path), 0))
		count_in(&libmiss, slot);
	return 0;
}
