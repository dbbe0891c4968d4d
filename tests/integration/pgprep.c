// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pgprep: the cluster store's statements prepared once per connection
 * (pg_exec_prepared(), issue 28) against a real PostgreSQL, through one of
 * the exporter's own (files_not_kept, with no ids: it changes nothing):
 *   1. its first call inside an aborted transaction fails and does not count
 *      it as prepared: after the rollback it is prepared and runs;
 *   2. a rollback does not take a prepared statement back;
 *   3. gone from the session (DEALLOCATE ALL), its call fails once, and the
 *      next prepares it again and runs.
 * Prints "ok: ..." per step and exits 0, or says what failed and exits 1.
 *
 *   pgprep CONNINFO
 */
#include <stdio.h>
#include <string.h>

#include "pgstore_db.h"

#define SQL "UPDATE jobs SET files_kept = false WHERE id = ANY($1::bigint[])"
#define BIT (UINT32_C(1) << PG_STMT_files_not_kept)

static const char *const no_ids[1] = { "{}" };

/* The statement run: 0 when it ran, else -1 with the server's SQLSTATE in state. */
static int run(struct ioacct_pgstore *pg, char *state, size_t len)
{
	PGresult *res = pg_exec_prepared(pg, PG_STMT_files_not_kept, SQL, 1, no_ids);
	const char *s = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	int ret = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : -1;

	snprintf(state, len, "%s", s ? s : "");
	PQclear(res);
	return ret;
}

/* How many statements of the session have the name: 1 once prepared. */
static int session_has(struct ioacct_pgstore *pg)
{
	PGresult *res = PQexec(pg->conn, "SELECT count(*) FROM pg_prepared_statements"
			       " WHERE name = 'ioacct_files_not_kept'");
	int n = PQresultStatus(res) == PGRES_TUPLES_OK ? atoi(PQgetvalue(res, 0, 0)) : -1;

	PQclear(res);
	return n;
}

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "pgprep: " __VA_ARGS__);                             \
			fprintf(stderr, "\n");                                              \
			goto out;                                                           \
		}                                                                           \
	} while (0)

int main(int argc, char **argv)
{
	struct ioacct_pgstore *pg;
	char err[1024], state[8];
	int ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: pgprep CONNINFO\n");
		return 2;
	}
	pg = ioacct_pgstore_open(argv[1], NULL, err, sizeof(err));
	if (!pg) {
		fprintf(stderr, "pgprep: %s\n", err);
		return 1;
	}
	/* 1. First call in an aborted transaction (SQLSTATE 25P02), then after the rollback. */
	CHECK(!pg_exec(pg, "BEGIN", "begin"), "%s", pg->errmsg);
	CHECK(pg_exec(pg, "SELECT 1/0", "divide by zero"), "SELECT 1/0 did not fail");
	CHECK(run(pg, state, sizeof(state)) && !strcmp(state, "25P02"),
	      "prepared in an aborted transaction: SQLSTATE '%s', not 25P02", state);
	CHECK(!(pg->prepared & BIT), "a failed prepare is taken for prepared");
	pg_rollback_quiet(pg);
	CHECK(session_has(pg) == 0, "the session has the statement after a failed prepare");
	CHECK(!run(pg, state, sizeof(state)), "after the rollback: SQLSTATE %s", state);
	CHECK((pg->prepared & BIT) && session_has(pg) == 1, "not prepared after its first run");
	printf("ok: a prepare failed in an aborted transaction, prepared at the next call\n");

	/* 2. Prepared inside a transaction that rolls back (a new connection's first batch). */
	pg->prepared &= ~BIT;
	CHECK(!pg_exec(pg, "DEALLOCATE ALL", "deallocate"), "%s", pg->errmsg);
	CHECK(!pg_exec(pg, "BEGIN", "begin"), "%s", pg->errmsg);
	CHECK(!run(pg, state, sizeof(state)), "in a transaction: SQLSTATE %s", state);
	CHECK(!pg_exec(pg, "ROLLBACK", "roll back"), "%s", pg->errmsg);
	CHECK(session_has(pg) == 1, "a rollback took the prepared statement back");
	CHECK(!run(pg, state, sizeof(state)), "after a rollback: SQLSTATE %s", state);
	printf("ok: a statement prepared in a transaction outlives its rollback\n");

	/* 3. Gone from the session: one failure (26000), then prepared again. */
	CHECK(!pg_exec(pg, "DEALLOCATE ALL", "deallocate"), "%s", pg->errmsg);
	CHECK(run(pg, state, sizeof(state)) && !strcmp(state, "26000"),
	      "gone: SQLSTATE '%s', not 26000", state);
	CHECK(!(pg->prepared & BIT), "a statement gone from the session is taken for prepared");
	CHECK(!run(pg, state, sizeof(state)) && session_has(pg) == 1,
	      "not prepared again: SQLSTATE %s", state);
	printf("ok: a statement gone from the session failed once, prepared again at its next"
	       " call\n");
	ret = 0;
out:
	ioacct_pgstore_close(pg);
	return ret;
}
