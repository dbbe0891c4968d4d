/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacctd as one of its own workers (worker.h): tools/ioacctd.c hands its
 * command line here when its first argument is IOACCT_WORKER_ARG.
 */
#ifndef IOACCT_WMAIN_H
#define IOACCT_WMAIN_H

#include <stdbool.h>

#include "worker.h"

/* argv: ioacctd --worker NAME START. The process's exit status. */
int ioacct_worker_main(int argc, char **argv);

/* Whether NAME is a kind of worker wmain.c knows (its table). */
bool ioacct_worker_known(const char *name);

#endif /* IOACCT_WMAIN_H */
