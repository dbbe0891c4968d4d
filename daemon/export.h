/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exporter: drains the SQLite outbox (export_queue) into the cluster
 * store (cluster_db, PostgreSQL) from a thread of its own, with its own
 * SQLite connection, so that a slow or absent PostgreSQL never holds up
 * registrations, finishes or drains. A job leaves the outbox only after
 * PostgreSQL has committed it; writing it twice is harmless (pgstore.h).
 */
#ifndef IOACCT_EXPORT_H
#define IOACCT_EXPORT_H

#include "config.h"

struct ioacct_export;

/*
 * Starts the exporter when cfg->cluster_db is set; *out stays NULL when it
 * is not. 0 or -errno (logged): -ENOTSUP for a build without libpq.
 */
int ioacct_export_start(const struct ioacct_config *cfg, struct ioacct_export **out);
/* A job was finished: look at the outbox now rather than at the next poll. */
void ioacct_export_poke(struct ioacct_export *ex);
/* Stops the thread after the job it is writing; NULL is fine. */
void ioacct_export_stop(struct ioacct_export *ex);

#endif /* IOACCT_EXPORT_H */
