/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ioacct --purge: retention by hand (purge.c). */
#ifndef IOACCT_TOOLS_PURGE_H
#define IOACCT_TOOLS_PURGE_H

#include <stdbool.h>

#include "config.h"

struct ioacct_purge_opts {
	const char *db;            /* --db: this store file; NULL: the configuration's db */
	const char *before;        /* --before DURATION or TIME; NULL: purge_after */
	bool dry_run;              /* --dry-run: say what would go, change nothing */
	bool cluster_store;        /* --cluster-store: the cluster store (cluster_db) instead */
};

/* Runs the purge; returns the exit status (0, EXIT_RUNTIME, EXIT_USAGE), said on stderr. */
int ioacct_purge_main(const struct ioacct_purge_opts *o, const struct ioacct_config *cfg);

#endif /* IOACCT_TOOLS_PURGE_H */
