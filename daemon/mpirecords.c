// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The MPI-IO and HDF5 records of a step (mpiprobes.h): read from the
 * object's maps at the step's finish, with each process's rank, then
 * forgotten with the step's handles and pending calls. Split from
 * mpiprobes.c, which keeps the watch and the uprobes.
 */
#include "mpiprobes_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ioacct_mpi.skel.h"
#include "log.h"
#include "util.h"

static void mpiio_from_val(struct ioacct_mpiio *o, const struct ioacct_mpi_val *v)
{
#define MPIIO_COPY(name) o->name = v->name;
	IOACCT_MPIIO_COUNTERS(MPIIO_COPY)
#undef MPIIO_COPY
	_Static_assert(IOACCT_MPI_NR_SIZE_BINS == IOACCT_NR_SIZE_BINS, "size bins");
	memcpy(o->size_read, v->size_read, sizeof(o->size_read));
	memcpy(o->size_written, v->size_written, sizeof(o->size_written));
	snprintf(o->path, sizeof(o->path), "%.*s", (int)sizeof(v->path), v->path);
}

int ioacct_mpiprobes_read(struct ioacct_mpiprobes *m, uint32_t slot, struct ioacct_mpiio **out,
			  size_t *n)
{
	int fd = bpf_map__fd(m->skel->maps.records);
	struct ioacct_mpi_key k, next, *prev = NULL;
	struct ioacct_mpiio *a = NULL, *x;
	struct ioacct_mpi_val v;
	size_t cnt = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (k.slot != slot || bpf_map_lookup_elem(fd, &k, &v))
			continue;
		x = realloc(a, (cnt + 1) * sizeof(*a));
		if (!x) {
			free(a);
			return -ENOMEM;
		}
		a = x;
		memset(&a[cnt], 0, sizeof(a[cnt]));
		mpiio_from_val(&a[cnt], &v);
		a[cnt].pid = k.tgid;
		a[cnt].rank = mpiprobes_rank_of(m, slot, k.tgid);
		cnt++;
	}
	*out = a;
	*n = cnt;
	return 0;
}

/* A kernel time as the job's (from its start, v's slot's), at least 1: 0 is none. */
static uint64_t h5_time(uint64_t t, uint64_t start)
{
	return !t ? 0 : t > start ? t - start : 1;
}

/*
 * What follows the sums in v: times, the slowest calls, the dataspace, the
 * MPI-IO flags, the selections' kinds, the chunk dims.
 */
static void h5_rest_from_val(struct ioacct_h5rec *x, const struct ioacct_h5_val *v)
{
	x->open_start_ns = h5_time(v->open_start, v->start);
	x->open_end_ns = h5_time(v->open_end, v->start);
	x->read_start_ns = h5_time(v->read_start, v->start);
	x->read_end_ns = h5_time(v->read_end, v->start);
	x->write_start_ns = h5_time(v->write_start, v->start);
	x->write_end_ns = h5_time(v->write_end, v->start);
	x->close_start_ns = h5_time(v->close_start, v->start);
	x->close_end_ns = h5_time(v->close_end, v->start);
	x->max_read_ns = v->max_read_ns;
	x->max_read_size = v->max_read_size;
	x->max_write_ns = v->max_write_ns;
	x->max_write_size = v->max_write_size;
	x->dataspace_ndims = v->ndims;
	x->dataspace_npoints = v->npoints;
	x->use_mpiio = v->mpiio;
	x->use_mpiio_collective = v->collective;
	x->regular_hyperslab_selects = v->sel_regular;
	x->irregular_hyperslab_selects = v->sel_irregular;
	x->point_selects = v->sel_points;
	x->unknown_selects = v->sel_unknown;
	x->chunk_known = v->chunk_known;
	x->chunk_size_d1 = v->chunk[0];
	x->chunk_size_d2 = v->chunk[1];
	x->chunk_size_d3 = v->chunk[2];
	x->chunk_size_d4 = v->chunk[3];
	x->chunk_size_d5 = v->chunk[4];
}

int ioacct_mpiprobes_h5_read(struct ioacct_mpiprobes *m, uint32_t slot, struct ioacct_h5rec **out,
			     size_t *n)
{
	int fd = bpf_map__fd(m->skel->maps.h5recs);
	struct ioacct_h5_key k, next, *prev = NULL;
	struct ioacct_h5rec *a = NULL, *x;
	struct ioacct_h5_val v;
	size_t cnt = 0;

	_Static_assert(IOACCT_H5_NR_SIZE_BINS == IOACCT_NR_SIZE_BINS, "size bins");
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (k.slot != slot || bpf_map_lookup_elem(fd, &k, &v))
			continue;
		x = realloc(a, (cnt + 1) * sizeof(*a));
		if (!x) {
			free(a);
			return -ENOMEM;
		}
		a = x;
		x = &a[cnt++];
		memset(x, 0, sizeof(*x));
#define H5_COPY(name) x->name = v.name;
		IOACCT_H5_COUNTS(H5_COPY)
#undef H5_COPY
		h5_rest_from_val(x, &v);
		memcpy(x->size_read, v.size_read, sizeof(x->size_read));
		memcpy(x->size_written, v.size_written, sizeof(x->size_written));
		snprintf(x->name, sizeof(x->name), "%.*s", (int)sizeof(v.name), v.name);
		x->kind = v.kind == IOACCT_H5_DATASET ? IOACCT_H5REC_DATASET : IOACCT_H5REC_FILE;
		x->pid = k.tgid;
		x->rank = mpiprobes_rank_of(m, slot, k.tgid);
		/* Anonymous datasets never linked share a name: one record of the name, as stored. */
		for (size_t i = 0; i + 1 < cnt; i++)
			if (a[i].pid == x->pid && a[i].kind == x->kind && !strcmp(a[i].name, x->name)) {
				ioacct_h5rec_add(&a[i], x);
				cnt--;
				break;
			}
	}
	*out = a;
	*n = cnt;
	return 0;
}

/* Deletes the keys of map fd for which `mine` says yes; keys of size ksize. */
static void map_delete_if(int fd, size_t ksize, bool (*mine)(const void *k, const void *ctx),
			  const void *ctx)
{
	char k[64], next[64];
	bool first = true;

	while (bpf_map_get_next_key(fd, first ? NULL : k, next) == 0) {
		memcpy(k, next, ksize);
		first = false;
		/* Deleted keys are looked up again from the start: the walk stays whole. */
		if (mine(k, ctx) && bpf_map_delete_elem(fd, k) == 0)
			first = true;
	}
}

/* A key of records, dtsizes or h5recs (all start with the slot) of the slot *ctx. */
static bool record_of(const void *k, const void *ctx)
{
	_Static_assert(offsetof(struct ioacct_mpi_key, slot) == 0 &&
		       offsetof(struct ioacct_mpi_dt_key, slot) == 0 &&
		       offsetof(struct ioacct_h5_key, slot) == 0, "keys start with the slot");
	return ((const struct ioacct_mpi_key *)k)->slot == *(const uint32_t *)ctx;
}

/* An open handle of a process of the slot (fhs key: fh, tgid; h5ids': hid, tgid). */
static bool handle_of(const void *k, const void *ctx)
{
	const struct ioacct_mpiprobes *m = ctx;
	uint32_t tgid;

	memcpy(&tgid, (const char *)k + 8, sizeof(tgid));
	for (size_t i = 0; i < m->nranks; i++)
		if (m->ranks[i].tgid == tgid && m->ranks[i].slot == UINT32_MAX)
			return true;
	return false;
}

/*
 * Calls of the slot still pending (map fd: MPI-IO's or HDF5's, whose values
 * have their slot at slot_off): a thread in a call when its step ended (or
 * its library's uprobes went) would otherwise count its next calls as
 * nested in that one, never.
 */
static void pend_forget(int fd, size_t slot_off, uint32_t slot)
{
	union {
		struct ioacct_mpi_pending mpi;
		struct ioacct_h5_pending h5;
	} v;
	uint64_t k, next, *prev = NULL;
	uint32_t vslot;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		memcpy(&vslot, (const char *)&v + slot_off, sizeof(vslot));
		if (vslot == slot && bpf_map_delete_elem(fd, &k) == 0)
			prev = NULL; /* from the start again: the walk stays whole */
	}
}

uint64_t ioacct_mpiprobes_missed(const struct ioacct_mpiprobes *m, uint32_t slot)
{
	uint64_t n = 0;

	bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.libmiss), &slot, &n);
	return n;
}

uint64_t ioacct_mpiprobes_forget(struct ioacct_mpiprobes *m, uint32_t slot)
{
	int lfd = bpf_map__fd(m->skel->maps.lost);
	uint64_t lost = 0, zero = 0;
	size_t w = 0;

	map_delete_if(bpf_map__fd(m->skel->maps.records), sizeof(struct ioacct_mpi_key), record_of,
		      &slot);
	map_delete_if(bpf_map__fd(m->skel->maps.dtsizes), sizeof(struct ioacct_mpi_dt_key),
		      record_of, &slot);
	map_delete_if(bpf_map__fd(m->skel->maps.h5recs), sizeof(struct ioacct_h5_key), record_of,
		      &slot);
	/* The slot's processes, marked, lose the handles they left open; then they go. */
	for (size_t i = 0; i < m->nranks; i++)
		if (m->ranks[i].slot == slot)
			m->ranks[i].slot = UINT32_MAX;
	map_delete_if(bpf_map__fd(m->skel->maps.fhs), 16, handle_of, m);
	_Static_assert(offsetof(struct ioacct_h5_id_key, tgid) == 8 &&
		       sizeof(struct ioacct_h5_id_key) == 16, "h5ids' keys are as fhs' (handle_of)");
	map_delete_if(bpf_map__fd(m->skel->maps.h5ids), 16, handle_of, m);
	for (size_t i = 0; i < m->nranks; i++)
		if (m->ranks[i].slot != UINT32_MAX)
			m->ranks[w++] = m->ranks[i];
	m->nranks = w;
	pend_forget(bpf_map__fd(m->skel->maps.pend), offsetof(struct ioacct_mpi_pending, slot), slot);
	pend_forget(bpf_map__fd(m->skel->maps.h5pend), offsetof(struct ioacct_h5_pending, slot), slot);
	ioacct_mpiprobes_spans(m, slot, false);
	mpiprobes_libs_release(m, slot);
	mpiprobes_libs_reap(m);
	bpf_map_lookup_elem(lfd, &slot, &lost);
	bpf_map_update_elem(lfd, &slot, &zero, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(m->skel->maps.libmiss), &slot, &zero, BPF_ANY);
	return lost;
}
