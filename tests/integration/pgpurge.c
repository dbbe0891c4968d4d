// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pgpurge: the cluster store's retention calls, for the integration tests
 * until the CLI has them (ioacct --purge).
 *
 *   pgpurge CONNINFO purge CUTOFF_UNIX [dry]
 *   pgpurge CONNINFO downsample CUTOFF_UNIX BIN_WIDTH_NS [dry]
 *
 * Prints "runs=R parts=P series=S" and exits 0, or says what failed and exits 1.
 * PGPURGE_STEPS=1: each progress step of a purge on stderr first, as
 * "month YYYY-MM runs=R parts=P series=S", "dropped YYYY-MM", "batch runs=R ...",
 * "rest runs=R ...".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstore.h"

static int step(const struct ioacct_pgstore_purge_progress *p, void *arg)
{
	static const char *const names[] = {
		[IOACCT_PG_PURGE_MONTH] = "month", [IOACCT_PG_PURGE_DROPPED] = "dropped",
		[IOACCT_PG_PURGE_BATCH] = "batch", [IOACCT_PG_PURGE_REST] = "rest",
	};

	(void)arg;
	if (p->step == IOACCT_PG_PURGE_DROPPED)
		fprintf(stderr, "dropped %s\n", p->month);
	else
		fprintf(stderr, "%s%s%s runs=%" PRIu64 " parts=%" PRIu64 " series=%" PRIu64 "\n",
			names[p->step], p->month[0] ? " " : "", p->month, p->counts.runs,
			p->counts.parts, p->counts.series);
	return 0;
}

int main(int argc, char **argv)
{
	struct ioacct_pgstore_purge_counts c;
	struct ioacct_pgstore *pg;
	bool purge, dry;
	char err[1024];
	int ret;

	purge = argc >= 4 && !strcmp(argv[2], "purge");
	if (argc < 4 || (!purge && strcmp(argv[2], "downsample")) || (!purge && argc < 5)) {
		fprintf(stderr, "usage: pgpurge CONNINFO purge CUTOFF [dry] | downsample CUTOFF WIDTH_NS [dry]\n");
		return 2;
	}
	dry = !strcmp(argv[argc - 1], "dry");
	pg = ioacct_pgstore_open(argv[1], NULL, err, sizeof(err));
	if (!pg) {
		fprintf(stderr, "pgpurge: %s\n", err);
		return 1;
	}
	if (purge)
		ret = ioacct_pgstore_purge(pg, strtoll(argv[3], NULL, 10), dry,
					   getenv("PGPURGE_STEPS") ? step : NULL, NULL, &c);
	else
		ret = ioacct_pgstore_downsample(pg, strtoll(argv[3], NULL, 10),
						strtoull(argv[4], NULL, 10), dry, &c);
	if (ret)
		fprintf(stderr, "pgpurge: %s\n", ioacct_pgstore_errmsg(pg));
	else if (c.months) /* only then: the answers of a store without old months stay */
		printf("runs=%" PRIu64 " parts=%" PRIu64 " series=%" PRIu64 " months=%" PRIu64 "\n",
		       c.runs, c.parts, c.series, c.months);
	else
		printf("runs=%" PRIu64 " parts=%" PRIu64 " series=%" PRIu64 "\n", c.runs, c.parts,
		       c.series);
	ioacct_pgstore_close(pg);
	return ret ? 1 : 0;
}
