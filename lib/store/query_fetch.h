/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where ioacct's jobs come from: the store read directly, or ioacctd, which
 * reads it for the users who may not (private_data = yes makes the file
 * root's alone). Both give the same jobs in the same order (by store key),
 * each with its steps, mounts and totals, and its peaks when asked for.
 *
 * Functions return 0, the callback's nonzero return (passed on untouched),
 * or -errno with a one-line message in `err`.
 */
#ifndef IOACCT_QUERY_FETCH_H
#define IOACCT_QUERY_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "query.h"
#include "store.h"

/*
 * Jobs per page of ioacctd's replies. A page also stops short of a size
 * budget, and after a time budget: the daemon answers between drains, which
 * must not wait long.
 */
#define IOACCT_QUERY_PAGE_JOBS 128
#define IOACCT_QUERY_PAGE_BYTES (3U << 20)
#define IOACCT_QUERY_PAGE_MS 100
/* Steps, or mounts, per page: each is a few KiB of memory in the client. */
#define IOACCT_QUERY_PAGE_ROWS 8192

/*
 * The time budget of the pages this process serves from now on, in ms
 * (IOACCT_QUERY_PAGE_MS until then): ioacctd's query_page_time. Tests of the
 * other budgets raise it, so that a loaded machine does not cut their pages.
 */
void ioacct_query_page_ms_set(unsigned int ms);
/* The time budget in force, in ms. */
unsigned int ioacct_query_page_ms(void);

/* jd has no series; the job's peaks when they were asked for, none otherwise. */
typedef int (*ioacct_query_fetch_fn)(const struct ioacct_jobdata *jd,
				     const struct ioacct_qpeak *peaks, size_t npeaks, void *arg);

/* Every job of f (any number of job ids: they are selected in batches). */
int ioacct_query_fetch_store(struct ioacct_store *st, const struct ioacct_store_filter *f,
			     bool peaks, ioacct_query_fetch_fn fn, void *arg, char *err,
			     size_t errlen);

/* The same through ioacctd's socket, page by page (IOACCT_MSG_QUERY). */
int ioacct_query_fetch_daemon(const char *socket_path, const struct ioacct_store_filter *f,
			      bool peaks, int timeout_ms, ioacct_query_fetch_fn fn, void *arg,
			      char *err, size_t errlen);
/*
 * The same through any server of the protocol (proto.h's caller; ioacctd
 * asks its cluster store's worker so, issue 37).
 */
int ioacct_query_fetch_via(const struct ioacct_caller *c, const struct ioacct_store_filter *f,
			   bool peaks, ioacct_query_fetch_fn fn, void *arg, char *err,
			   size_t errlen);

/*
 * The daemon's side: one page of the jobs a peer asked for, into rep (status
 * and error set on failure). With private_data, a peer other than root gets
 * its own jobs whatever it asked: the store file is not readable to it, so
 * this is the only way in.
 */
void ioacct_query_serve_page(struct ioacct_store *st, const struct ioacct_req_select *req,
			     uint32_t peer_uid, bool private_data, struct ioacct_reply *rep);

/*
 * Where the page server reads jobs: fn for every job of f, in key order,
 * from f->after_key, at most f->limit; fn's nonzero return stops it and is
 * returned. -errno with a one-line message in err. A store file is one
 * (ioacct_query_serve_page); the cluster store is another (ioacctd).
 */
typedef int (*ioacct_query_select_fn)(void *src, const struct ioacct_store_filter *f,
				      bool peaks, ioacct_query_fetch_fn fn, void *arg, char *err,
				      size_t errlen);

/* ioacct_query_serve_page() from any source of jobs. */
void ioacct_query_serve_page_from(ioacct_query_select_fn select, void *src,
				  const struct ioacct_req_select *req, uint32_t peer_uid,
				  bool private_data, struct ioacct_reply *rep);

#endif /* IOACCT_QUERY_FETCH_H */
