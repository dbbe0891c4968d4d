/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What probes.c (choosing, loading, attaching and pinning the object) and
 * probes_maps.c (the map operations, the calibration, the programs' run
 * time) share: struct ioacct_probes itself, and the two steps of probes.c
 * the map operations take too (never the other way round: no circle).
 * For daemon/probes*.c only: everyone else has the opaque handle of probes.h.
 */
#ifndef IOACCT_PROBES_INTERNAL_H
#define IOACCT_PROBES_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "ioacct.skel.h"
#include "probes.h"

struct ioacct_probes {
	struct ioacct_bpf *skel;
	struct bpf_link **links;
	size_t nlinks, caplinks;
	char dir[PATH_MAX];            /* pin_dir/abi<N> */
	char mode[16];
	char reason[1024];
	bool reused;                   /* maps (and maybe links) of an earlier daemon */
	bool detach_idle;              /* programs attached only while something is watched */
	uint32_t want_views;           /* views = in ioacct.conf: bit i for ioacct_view_names[i] */
	uint32_t max_jobs;
	int ncpus;
	char views[48];                /* the page-cache and mmap views loaded: "cache,mmap,readahead" */
	char job_mode[64];             /* mode and views, as each job records them */
	char views_detail[256];        /* the views and what serves them, for status */
	struct ioacct_state st;        /* what the daemon last published */
	struct bpf_link *acc_iter;     /* the accumulators' flush, run before each read of stats */
	bool files_off;                /* loaded with file_records = 0 (file_records = no) */
	bool unique_ids;               /* mounts keyed by mnt_id_unique (ioacct_abi.h) */
	void (*on_publish)(void *ctx, uint32_t nwatched); /* ioacct_probes_on_publish() */
	void *on_publish_ctx;
	/* What the start cost, in ms of CLOCK_MONOTONIC (ioacct_probes_start_cost()). */
	uint64_t ms_choose, ms_load, ms_attach;
	uint32_t nprogs;               /* programs loaded */
};

/* Writes p->st into the state map, where the programs read it (probes.c). 0 or -errno. */
int probes_publish_state(struct ioacct_probes *p);

/*
 * With detach_when_idle, attaches or detaches the programs as p->st.nactive
 * says (probes.c). 0 or -errno, with `err`.
 */
int probes_sync_attach(struct ioacct_probes *p, char *err, size_t errlen);

#endif /* IOACCT_PROBES_INTERNAL_H */
