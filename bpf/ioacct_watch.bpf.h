/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The maps that say which cgroups are watched, and in which slot a job
 * step counts, as the main object declares them: the MPI-IO object
 * (ioacct_mpi.bpf.c) declares them the same and is loaded with the main
 * object's (bpf_map__reuse_fd), so both see one set. And the walk from a
 * cgroup up its ancestors to the watched one.
 */
#ifndef IOACCT_WATCH_BPF_H
#define IOACCT_WATCH_BPF_H

/* How far up the cgroup tree a task's cgroup may be below a watched one. */
#define MAX_CGROUP_DEPTH 8

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_state);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ioacct_watch_key);
	__type(value, struct ioacct_watch_val);
} watch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ioacct_slot);
} slots SEC(".maps");

/* The slot of the nearest watched cgroup among CG and its ancestors; IOACCT_SLOT_NONE if none. */
static __always_inline __u32 cgroup_watched(struct cgroup *cg, __u32 hier)
{
	struct ioacct_watch_key key = { .hier = hier };
	struct ioacct_watch_val *v;

	for (int i = 0; i < MAX_CGROUP_DEPTH && cg; i++) {
		struct cgroup_subsys_state *parent;

		key.cgroup_id = BPF_CORE_READ(cg, kn, id);
		v = bpf_map_lookup_elem(&watch, &key);
		if (v)
			return v->slot;
		parent = BPF_CORE_READ(cg, self.parent);
		if (!parent)
			break;
		cg = container_of(parent, struct cgroup, self);
	}
	return IOACCT_SLOT_NONE;
}

/*
 * The slot of a task's nearest watched cgroup (v2, then v1 through the
 * subsystem ssid), as the main object's current_slot() finds it without
 * its per-CPU cache: for the objects whose events are rare next to system
 * calls (MPI-IO calls, RPCs). IOACCT_SLOT_NONE if none (or calibration).
 */
static __always_inline __u32 task_watched_slot(struct task_struct *task,
					       const struct ioacct_state *st, __u32 ssid)
{
	__u32 slot = IOACCT_SLOT_NONE;

	if (st->nwatch_v2)
		slot = cgroup_watched(BPF_CORE_READ(task, cgroups, dfl_cgrp), IOACCT_HIER_V2);
	if (slot == IOACCT_SLOT_NONE && st->nwatch_v1) {
		struct cgroup *cg = task_v1_cgroup(task, ssid);

		if (cg)
			slot = cgroup_watched(cg, IOACCT_HIER_V1);
	}
	return slot >= IOACCT_SLOT_CALIB ? IOACCT_SLOT_NONE : slot;
}

#endif /* IOACCT_WATCH_BPF_H */
