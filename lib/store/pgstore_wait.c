// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cluster store's deadlines (pgstore_db.h). libpq's blocking calls
 * wait for the server as long as it takes: a server that completes the
 * startup and then never answers held the exporter, and ioacctd's stop,
 * forever. So the connection is non-blocking and every wait is here, in
 * poll(), on the connection's socket and on its owner's stop fd: the
 * connect within connect_ms; every statement's answer (and the sending of
 * its data) within silence_ms of the server's last sign of life (its own
 * statement_timeout, plus a grace, so that a live server's cancel always
 * comes first); and a stop at once. A wait that gives up shuts the socket
 * down: libpq then finds the connection closed, the call in progress
 * fails as for a lost connection, and the reason is kept for the message.
 */
#ifdef HAVE_LIBPQ

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "pgstore_db.h"

/* Gives the connection up: the calls in progress fail at once, as for a lost one. */
__attribute__((format(printf, 2, 3)))
static void cut(struct ioacct_pgstore *pg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pg->cut, sizeof(pg->cut), fmt, ap);
	va_end(ap);
	if (PQsocket(pg->conn) >= 0)
		shutdown(PQsocket(pg->conn), SHUT_RDWR);
}

/*
 * Waits until the socket is ready for events, until `end` (ioacct_mono_ns,
 * limit_ms after the wait began; 0: no deadline), or until the owner's
 * stop fd is readable. 0 when ready; -ETIMEDOUT or -ECANCELED (the
 * connection cut, "no answer <doing> within ..."), or another -errno.
 */
static int wait_io(struct ioacct_pgstore *pg, short events, uint64_t end, uint32_t limit_ms,
		   const char *doing)
{
	struct pollfd p[2] = {
		{ .fd = PQsocket(pg->conn), .events = events },
		{ .fd = pg->stop_fd, .events = POLLIN },
	};

	if (p[0].fd < 0)
		return -ECONNRESET;
	for (;;) {
		uint64_t now = ioacct_mono_ns();
		int ms = -1, n;

		if (end && now >= end) {
			cut(pg, "no answer %s within %.1f s", doing, limit_ms / 1000.0);
			return -ETIMEDOUT;
		}
		if (end && end - now > (uint64_t)INT_MAX * 1000000)
			ms = INT_MAX;
		else if (end)
			ms = (int)((end - now + 999999) / 1000000);
		n = poll(p, pg->stop_fd >= 0 ? 2 : 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n > 0 && p[1].revents) {
			cut(pg, "given up: ioacctd is stopping");
			return -ECANCELED;
		}
		if (n > 0)
			return 0;
	}
}

/* The deadline of a wait for the server starting now (0: none). */
static uint64_t silence_end(const struct ioacct_pgstore *pg)
{
	return pg->silence_ms ? ioacct_mono_ns() + (uint64_t)pg->silence_ms * 1000000 : 0;
}

int pg_connect(struct ioacct_pgstore *pg, const char *const *keys, const char *const *values)
{
	uint64_t end = ioacct_mono_ns() + (uint64_t)pg->connect_ms * 1000000;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	pg->conn = PQconnectStartParams(keys, values, 1);
	if (!pg->conn)
		return -ENOMEM;
	if (PQstatus(pg->conn) == CONNECTION_BAD)
		return -ECONNREFUSED;
	/* The socket may change from one call to the next (another address, another host). */
	while (st != PGRES_POLLING_OK) {
		int ret;

		if (st == PGRES_POLLING_FAILED)
			return -ECONNREFUSED;
		ret = wait_io(pg, st == PGRES_POLLING_READING ? POLLIN : POLLOUT, end,
			      pg->connect_ms, "while connecting");
		if (ret)
			return ret;
		st = PQconnectPoll(pg->conn);
	}
	return PQsetnonblocking(pg->conn, 1) ? -EIO : 0;
}

int pg_flush(struct ioacct_pgstore *pg)
{
	uint64_t end = silence_end(pg);
	int ret;

	while ((ret = PQflush(pg->conn)) == 1) {
		/* The server may be sending while it reads (notices, an error): take it in. */
		ret = wait_io(pg, POLLOUT | POLLIN, end, pg->silence_ms, "while sending");
		if (ret || !PQconsumeInput(pg->conn))
			return ret ? ret : -ECONNRESET;
		end = silence_end(pg);
	}
	return ret < 0 ? -ECONNRESET : 0;
}

PGresult *pg_result(struct ioacct_pgstore *pg)
{
	uint64_t end;

	if (pg_flush(pg) == 0) {
		end = silence_end(pg);
		while (PQisBusy(pg->conn)) {
			if (wait_io(pg, POLLIN, end, pg->silence_ms, "to a statement") ||
			    !PQconsumeInput(pg->conn))
				break;
			end = silence_end(pg);
		}
	}
	/* Busy still only when the connection was cut: libpq sees its end at once. */
	return PQgetResult(pg->conn);
}

/* The last result of what was sent, as PQexec() gives it; NULL when it could not be sent. */
static PGresult *last_result(struct ioacct_pgstore *pg, int sent)
{
	PGresult *last = NULL, *res;

	if (!sent)
		return NULL;
	while ((res = pg_result(pg))) {
		ExecStatusType st = PQresultStatus(res);

		PQclear(last);
		last = res;
		if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH ||
		    PQstatus(pg->conn) == CONNECTION_BAD)
			break;
	}
	return last;
}

PGresult *pg_run(struct ioacct_pgstore *pg, const char *sql)
{
	return last_result(pg, PQsendQuery(pg->conn, sql));
}

PGresult *pg_run_params(struct ioacct_pgstore *pg, const char *sql, int n,
			const char *const *params)
{
	return last_result(pg, PQsendQueryParams(pg->conn, sql, n, NULL, params, NULL, NULL, 0));
}

PGresult *pg_run_prepare(struct ioacct_pgstore *pg, const char *name, const char *sql, int n)
{
	return last_result(pg, PQsendPrepare(pg->conn, name, sql, n, NULL));
}

PGresult *pg_run_prepared(struct ioacct_pgstore *pg, const char *name, int n,
			  const char *const *params)
{
	return last_result(pg, PQsendQueryPrepared(pg->conn, name, n, params, NULL, NULL, 0));
}

int pg_put_copy(struct ioacct_pgstore *pg, const char *p, size_t len)
{
	if (len > INT_MAX || PQputCopyData(pg->conn, p, (int)len) != 1)
		return -ECONNRESET;
	return pg_flush(pg);
}

int pg_put_copy_end(struct ioacct_pgstore *pg, const char *why)
{
	if (PQputCopyEnd(pg->conn, why) != 1)
		return -ECONNRESET;
	return pg_flush(pg);
}

#endif /* HAVE_LIBPQ */
