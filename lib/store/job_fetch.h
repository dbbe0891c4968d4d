/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One whole job (struct ioacct_jobdata: the job, its steps, mounts, totals,
 * series and per-file records), wherever it is: asked of ioacctd page by page
 * (IOACCT_MSG_JOB), which is what every client does by default, or read
 * from a store file named on the command line (--db, offline: a copied
 * store, no daemon). The daemon's side serves the pages, with the peer's
 * uid deciding what it may see.
 *
 * Functions return 0 or -errno with a one-line message in `err`.
 */
#ifndef IOACCT_JOB_FETCH_H
#define IOACCT_JOB_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "store.h"

/*
 * Series rows per page of a job reply, at most; a page also stops short of
 * IOACCT_QUERY_PAGE_BYTES (query_fetch.h), which bounds the daemon's time
 * on it as well: the rows are one index range of the store.
 */
#define IOACCT_JOB_PAGE_SERIES 16384
/* File records (issue 26) per page of a job reply, at most; the same byte bound holds. */
#define IOACCT_JOB_PAGE_FILES 1024

/* Where a client reads jobs from. */
struct ioacct_source {
	const char *socket_path;   /* ioacctd's socket: the default */
	const char *db_path;       /* not NULL: this store file, read directly (offline) */
	int timeout_ms;            /* for each call to the daemon */
	bool local;                /* ioacctd with a cluster store: this node's part alone */
	uint32_t run;              /* by job id: the run with restart count run - 1; 0: the last */
};

/*
 * A job: job_key when not 0, else the newest job_id on cluster (NULL or ""
 * = any), of run src->run when it is not 0. -ENOENT when there is none, -EPERM when it is another user's and
 * private_data hides it; when the daemon cannot be reached, `err` says so
 * and how to read the store instead. *out: free with ioacct_jobdata_free().
 */
int ioacct_source_load_job(const struct ioacct_source *src, const char *cluster, uint64_t job_id,
			   int64_t job_key, struct ioacct_jobdata **out, char *err, size_t errlen);

/* The same through ioacctd alone. */
int ioacct_job_fetch_daemon(const char *socket_path, const char *cluster, uint64_t job_id,
			    int64_t job_key, int timeout_ms, struct ioacct_jobdata **out, char *err,
			    size_t errlen);

/*
 * The same through any server of the protocol (proto.h's caller: ioacctd's
 * socket, or a channel between ioacctd and a worker, issue 37), of run
 * `run`, this node's part alone when `local`: its JOB pages, as the
 * daemon's clients ask for them.
 */
int ioacct_job_fetch_via(const struct ioacct_caller *c, const char *cluster, uint64_t job_id,
			 int64_t job_key, uint32_t run, bool local, struct ioacct_jobdata **out,
			 char *err, size_t errlen);
/*
 * The same of the run (cluster, job_id, restart, run_start) exactly, as a
 * job row names it (a run of the same id stored meanwhile is another).
 */
int ioacct_job_fetch_run_via(const struct ioacct_caller *c, const char *cluster, uint64_t job_id,
			     uint32_t restart, int64_t run_start, struct ioacct_jobdata **out,
			     char *err, size_t errlen);

/*
 * The message for a call that did not reach the daemon (ret and why from
 * ioacct_client_call): "cannot reach ioacctd at PATH: REASON (is it
 * running? or use --db FILE as root)".
 */
void ioacct_source_unreachable(const char *socket_path, int ret, const char *why, char *err,
			       size_t errlen);

/*
 * The daemon's side: one page of a job, into rep (status and error set on
 * failure). With private_data, a peer other than root gets its own jobs
 * only (-EPERM "job 12 belongs to another user"); without it, anyone may
 * read any job, as the store file is world-readable then.
 */
void ioacct_job_serve_page(struct ioacct_store *st, const struct ioacct_req_job *req,
			   uint32_t peer_uid, bool private_data, struct ioacct_reply *rep);

/*
 * The same from a job already loaded whole, with its series in order (the
 * cluster store's, in ioacctd): the page after req's cursor. The caller has
 * applied the uid rule.
 */
void ioacct_job_serve_page_jd(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
			      struct ioacct_reply *rep);

/*
 * A page of the per-file (or MPI-IO) records of jd, a job from the cluster
 * store without them (a part written before its schema 9) that is one
 * node's part alone, this node's: from this node's store `st`, the same
 * run (cluster, job id, restart, start), sent as jd's rows. None (files_read 0)
 * when this node's store no longer has it.
 */
void ioacct_job_serve_files_own(struct ioacct_store *st, const struct ioacct_jobdata *jd,
				const struct ioacct_req_job *req, struct ioacct_reply *rep);

#endif /* IOACCT_JOB_FETCH_H */
