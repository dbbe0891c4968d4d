/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hooks of the SQLite store for its unit tests only; programs use store.h.
 */
#ifndef IOACCT_STORE_INTERNAL_H
#define IOACCT_STORE_INTERNAL_H

#include <stddef.h>

/*
 * Creates (or migrates) the database at `path` with only the first `version`
 * migration steps, as an older ioacct would have left it, so that tests can
 * prove that migrating forward keeps the data. 0 or -errno, `err` filled.
 */
int ioacct_store_create_at_version(const char *path, int version, char *err, size_t errlen);

#endif /* IOACCT_STORE_INTERNAL_H */
