/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store: every node's finished jobs in one PostgreSQL database
 * (config: cluster_db, a libpq connection string). The node's SQLite store
 * stays the source and the outbox (daemon/export.c); this module connects,
 * migrates the schema forward and writes one job with all its rows in one
 * transaction. Built only with libpq (HAVE_LIBPQ); without it every call
 * fails with -ENOTSUP and says so.
 *
 * Tables (schema version IOACCT_PGSTORE_SCHEMA_VERSION, table ioacct_schema):
 *   jobs    one row per (cluster, job_id, node, start_ns); id is the key of the rest
 *   steps   (job, step_id)
 *   mounts  (job, mnt_id) -> path, fs type, source
 *   totals  (job, step_id, mnt_id, op) -> counters
 *   series  (job, step_id, mnt_id, op, bin) -> counters
 * The counters are numeric(20,0): exact for the whole uint64 range, in sums too.
 * Their columns follow IOACCT_STORE_COUNTER_COLS: a column new there is added
 * here on connect.
 *
 * A job is written by deleting that node's row of it (its children go with
 * it) and inserting it again, in one transaction: writing a job twice, as
 * after a crash between PostgreSQL's commit and SQLite's unqueue, leaves
 * exactly one copy.
 */
#ifndef IOACCT_PGSTORE_H
#define IOACCT_PGSTORE_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

#define IOACCT_PGSTORE_SCHEMA_VERSION 1

struct ioacct_pgstore;

/* Whether this build has libpq. */
bool ioacct_pgstore_available(void);

/*
 * Connects and migrates. NULL with `err` filled ("cluster store <where>: what
 * failed") and errno set: -ENOTSUP without libpq, -ECONNREFUSED when it cannot
 * connect, -EIO for any other failure.
 */
struct ioacct_pgstore *ioacct_pgstore_open(const char *conninfo, char *err, size_t errlen);
void ioacct_pgstore_close(struct ioacct_pgstore *pg);
const char *ioacct_pgstore_errmsg(const struct ioacct_pgstore *pg);
/* Whether the connection still works (after a failure: reconnect when not). */
bool ioacct_pgstore_connected(const struct ioacct_pgstore *pg);

/*
 * Writes a finished job, its steps, mounts, totals and series in one
 * transaction, replacing what an earlier write of the same job left.
 * 0 once PostgreSQL has committed; -errno otherwise (nothing written).
 */
int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd);

#endif /* IOACCT_PGSTORE_H */
