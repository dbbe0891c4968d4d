/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ioacct top: the live view of the node's running jobs (top.c). */
#ifndef IOACCT_TOP_H
#define IOACCT_TOP_H

/* `ioacct top ARGS`: argv[0] is "top". Returns the exit status. */
int ioacct_top_main(int argc, char **argv);

#endif /* IOACCT_TOP_H */
