/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Debug-only fault injection for the lifecycle tests: when ioacctd was
 * started with IOACCT_CRASH_AT=<point> in its environment, it kills itself
 * with SIGKILL on reaching that point. Points: register-before-commit,
 * register-after-commit, finish-before-commit, finish-after-commit,
 * drain-before-commit, drain-after-commit (the registry, registry.c) and
 * export-after-pg-commit (the exporter's thread, export.c).
 */
#ifndef IOACCT_CRASH_H
#define IOACCT_CRASH_H

/*
 * Reads IOACCT_CRASH_AT, once, before any thread runs (the registry's
 * creation), and warns when it is set: nothing else in the daemon looks at it.
 */
void ioacct_crash_init(void);

/* Kills the daemon with SIGKILL when `point` is the one IOACCT_CRASH_AT names. */
void ioacct_crash_point(const char *point);

#endif /* IOACCT_CRASH_H */
