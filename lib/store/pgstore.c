/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster store on PostgreSQL (see pgstore.h for the contract).
 *
 * Rows go in as text: parameters of the job's row, COPY for its children
 * (a job has thousands of series rows; one COPY costs one round trip).
 * Without libpq this file only says so.
 */
#include "pgstore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "text.h"

#ifdef HAVE_LIBPQ
#include <libpq-fe.h>
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef HAVE_LIBPQ

bool ioacct_pgstore_available(void)
{
	return false;
}

struct ioacct_pgstore *ioacct_pgstore_open(const char *conninfo, char *err, size_t errlen)
{
	(void)conninfo;
	snprintf(err, errlen,
		 "cluster store: this ioacctd was built without libpq (Debian: libpq-dev; then rebuild): cluster_db is ignored");
	errno = ENOTSUP;
	return NULL;
}

void ioacct_pgstore_close(struct ioacct_pgstore *pg)
{
	(void)pg;
}

const char *ioacct_pgstore_errmsg(const struct ioacct_pgstore *pg)
{
	(void)pg;
	return "built without libpq";
}

bool ioacct_pgstore_connected(const struct ioacct_pgstore *pg)
{
	(void)pg;
	return false;
}

int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	(void)pg;
	(void)jd;
	return -ENOTSUP;
}

struct ioacct_pgstore *ioacct_pgstore_open_query(const char *conninfo, int timeout_ms, char *err,
						 size_t errlen)
{
	(void)timeout_ms;
	return ioacct_pgstore_open(conninfo, err, errlen);
}

int ioacct_pgstore_jobs_select(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
			       bool peaks, ioacct_pgstore_job_fn fn, void *arg)
{
	(void)pg;
	(void)f;
	(void)peaks;
	(void)fn;
	(void)arg;
	return -ENOTSUP;
}

int ioacct_pgstore_job_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    struct ioacct_jobdata **out)
{
	(void)pg;
	(void)cluster;
	(void)job_id;
	*out = NULL;
	return -ENOTSUP;
}

int ioacct_pgstore_report_offer(struct ioacct_pgstore *pg, const struct ioacct_job *job,
				const struct ioacct_report_spec *spec, uint32_t merge_timeout_s)
{
	(void)pg;
	(void)job;
	(void)spec;
	(void)merge_timeout_s;
	return -ENOTSUP;
}

int ioacct_pgstore_report_claim(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
				bool skip_locked, struct ioacct_pgstore_report *rep,
				struct ioacct_jobdata **jd)
{
	(void)pg;
	(void)cluster;
	(void)job_id;
	(void)skip_locked;
	(void)rep;
	*jd = NULL;
	return -ENOTSUP;
}

int ioacct_pgstore_report_written(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
				  const char *node, const char *missing)
{
	(void)pg;
	(void)cluster;
	(void)job_id;
	(void)node;
	(void)missing;
	return -ENOTSUP;
}

void ioacct_pgstore_report_abort(struct ioacct_pgstore *pg)
{
	(void)pg;
}

#else /* HAVE_LIBPQ */

/*
 * Migration step k brings schema k-1 to k; never edit a released one. The
 * counter columns of totals and series are not here: they are added from
 * IOACCT_STORE_COUNTER_COLS on every connect (sync_counter_cols).
 */
static const char *const migrations[] = {
	/* 1: jobs and their rows, indexes for sacct-like queries. */
	"CREATE TABLE jobs ("
	" id bigserial PRIMARY KEY,"
	" cluster text NOT NULL,"
	" job_id bigint NOT NULL,"
	" node text NOT NULL,"
	" source text NOT NULL,"
	" uid bigint NOT NULL,"
	" gid bigint NOT NULL,"
	" \"user\" text NOT NULL,"
	" name text NOT NULL,"
	" workdir text NOT NULL,"
	" array_job_id bigint,"
	" array_task_id bigint,"
	" start_ns bigint NOT NULL,"
	" end_ns bigint,"
	" state text NOT NULL,"
	" exit_code integer NOT NULL,"
	" probe_mode text NOT NULL,"
	" bin_width_ns bigint NOT NULL,"
	" dropped_events numeric(20,0) NOT NULL,"
	" dropped_bytes numeric(20,0) NOT NULL,"
	" exported_at timestamptz NOT NULL DEFAULT now(),"
	" UNIQUE (cluster, job_id, node, start_ns));"
	"CREATE TABLE steps ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" start_ns bigint NOT NULL,"
	" end_ns bigint,"
	" state text NOT NULL,"
	" exit_code integer NOT NULL,"
	" cgroup text NOT NULL,"
	" PRIMARY KEY (job, step_id));"
	"CREATE TABLE mounts ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" mnt_id bigint NOT NULL,"
	" path text NOT NULL,"
	" fstype text NOT NULL,"
	" source text NOT NULL,"
	" PRIMARY KEY (job, mnt_id));"
	"CREATE TABLE totals ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" op smallint NOT NULL,"
	" PRIMARY KEY (job, step_id, mnt_id, op));"
	"CREATE TABLE series ("
	" job bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" step_id bigint NOT NULL,"
	" mnt_id bigint NOT NULL,"
	" op smallint NOT NULL,"
	" bin integer NOT NULL,"
	" PRIMARY KEY (job, step_id, mnt_id, op, bin));"
	"CREATE TABLE ops (op smallint PRIMARY KEY, name text NOT NULL);"
	"INSERT INTO ops VALUES (0, 'read'), (1, 'write'), (2, 'open'), (3, 'create'),"
	" (4, 'mkdir'), (5, 'unlink'), (6, 'rmdir'), (7, 'fsync'), (8, 'rename'), (9, 'stat');"
	"CREATE INDEX jobs_cluster_job_id ON jobs (cluster, job_id);"
	"CREATE INDEX jobs_job_id ON jobs (job_id);"
	"CREATE INDEX jobs_uid_start ON jobs (uid, start_ns);"
	"CREATE INDEX jobs_start ON jobs (start_ns);"
	"CREATE INDEX jobs_end ON jobs (end_ns);",
	/*
	 * 2: cluster-wide queries. A window [S, E] scans the jobs started in
	 * [S - the longest duration, E]: this index gives that duration at once.
	 */
	"CREATE INDEX jobs_duration ON jobs ((end_ns - start_ns));",
	/*
	 * 3: the merged report of a job of several nodes (issue 13): one row
	 * per job, made by the first node to export its part; the node that
	 * writes the report sets written_at under the row's lock.
	 */
	"CREATE TABLE job_reports ("
	" cluster text NOT NULL,"
	" job_id bigint NOT NULL,"
	" expected text[] NOT NULL,"
	" path text NOT NULL,"
	" formats integer NOT NULL,"
	" uid bigint NOT NULL,"
	" gid bigint NOT NULL,"
	" copy_dir text NOT NULL,"
	" merge_timeout_s integer NOT NULL,"
	" first_at timestamptz NOT NULL DEFAULT now(),"
	" deadline timestamptz NOT NULL,"
	" written_at timestamptz,"
	" written_by text,"
	" missing text[],"
	" PRIMARY KEY (cluster, job_id));"
	"CREATE INDEX job_reports_waiting ON job_reports (deadline) WHERE written_at IS NULL;",
	/*
	 * 4: names are bytes, text is UTF-8 (issue 24). A path that is not valid
	 * UTF-8 is stored with U+FFFD in its text column, for people and
	 * queries, and its exact bytes here beside it (NULL when the text is
	 * exact): a report is written, a directory found, at the real path.
	 */
	"ALTER TABLE jobs ADD COLUMN workdir_raw bytea;"
	"ALTER TABLE mounts ADD COLUMN path_raw bytea;"
	"ALTER TABLE job_reports ADD COLUMN path_raw bytea;"
	"ALTER TABLE job_reports ADD COLUMN copy_dir_raw bytea;",
};

_Static_assert(ARRAY_SIZE(migrations) == IOACCT_PGSTORE_SCHEMA_VERSION,
	       "one migration step per schema version");

/* Any 64-bit number: ioacctds of every node migrate one at a time under it. */
#define MIGRATE_LOCK "7308049115212693097"

/* Flush COPY data to the server in pieces of about this size. */
#define COPY_CHUNK (256 * 1024)

struct ioacct_pgstore {
	PGconn *conn;
	char errmsg[1024];
};

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

/* ---- errors ---- */

__attribute__((format(printf, 3, 4)))
static int pg_error(struct ioacct_pgstore *pg, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pg->errmsg, sizeof(pg->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* libpq's messages end with a newline and may have several lines: keep one. */
static const char *one_line(const char *msg, char *buf, size_t len)
{
	size_t i, o = 0;

	for (i = 0; msg[i] && o + 1 < len; i++) {
		char c = msg[i] == '\n' || msg[i] == '\r' || msg[i] == '\t' ? ' ' : msg[i];

		if (c == ' ' && (o == 0 || buf[o - 1] == ' '))
			continue;
		buf[o++] = c;
	}
	while (o && buf[o - 1] == ' ')
		o--;
	buf[o] = '\0';
	return buf;
}

/*
 * Whether PostgreSQL refused the data itself: SQLSTATE class 22 (data
 * exception: a bad byte, a number out of range) or 23 (a constraint).
 * Sending the same rows again fails the same way; anything else (a lost
 * connection, no space, a lock, a permission) may pass later.
 */
static bool data_refused(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return state && (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0);
}

/*
 * The error of a failed call: the connection's when it broke (-ECONNRESET),
 * else the result's: -EINVAL when the data was refused, else -EIO.
 */
static int conn_error(struct ioacct_pgstore *pg, const PGresult *res, const char *what)
{
	const char *msg = res && PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res) :
								PQerrorMessage(pg->conn);
	char line[768];

	one_line(msg, line, sizeof(line));
	if (PQstatus(pg->conn) != CONNECTION_OK)
		return pg_error(pg, -ECONNRESET, "cluster store: %s: connection lost: %s", what, line);
	return pg_error(pg, data_refused(res) ? -EINVAL : -EIO, "cluster store: %s: %s", what,
			line);
}

/*
 * A name as a text parameter: PostgreSQL's text is UTF-8 (client_encoding
 * is set so), and a byte that is not refuses the whole job. Valid names go
 * as they are; others as a copy with U+FFFD for their invalid bytes, kept
 * in *owned for the caller to free. NULL (errno ENOMEM) when out of memory.
 */
static const char *text_param(const char *s, char **owned)
{
	*owned = NULL;
	if (ioacct_utf8_valid(s))
		return s;
	*owned = ioacct_utf8_dup(s);
	return *owned;
}

/*
 * The exact bytes of a path that is not valid UTF-8, as bytea input
 * (\x and hex digits, malloc'd); NULL when the path is valid UTF-8 (its
 * text column is exact), or out of memory (*nomem).
 */
static char *raw_param(const char *s, bool *nomem)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s);
	char *out, *o;

	if (ioacct_utf8_valid(s))
		return NULL;
	out = malloc(2 + 2 * n + 1);
	if (!out) {
		*nomem = true;
		return NULL;
	}
	o = out;
	*o++ = '\\';
	*o++ = 'x';
	for (size_t i = 0; i < n; i++) {
		*o++ = hex[(unsigned char)s[i] >> 4];
		*o++ = hex[(unsigned char)s[i] & 15];
	}
	*o = '\0';
	return out;
}

/* A bytea column's value (text output, \x...), unescaped into dst; false when NULL. */
static bool raw_value(const PGresult *res, int row, int col, char *dst, size_t len)
{
	unsigned char *bytes;
	size_t n;

	if (PQgetisnull(res, row, col))
		return false;
	bytes = PQunescapeBytea((const unsigned char *)PQgetvalue(res, row, col), &n);
	if (!bytes)
		return false;
	if (n >= len)
		n = len - 1;
	memcpy(dst, bytes, n);
	dst[n] = '\0';
	PQfreemem(bytes);
	return true;
}

/* Runs SQL that returns nothing (or rows nobody reads). */
static int exec(struct ioacct_pgstore *pg, const char *sql, const char *what)
{
	PGresult *res = PQexec(pg->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int err = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		err = conn_error(pg, res, what);
	PQclear(res);
	return err;
}

static void rollback_quiet(struct ioacct_pgstore *pg)
{
	if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE)
		PQclear(PQexec(pg->conn, "ROLLBACK"));
}

/* ---- open, migrate ---- */

/* PostgreSQL's notices ("column ... already exists, skipping") are no news for the log. */
static void notice_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static int schema_version(struct ioacct_pgstore *pg, int *version)
{
	PGresult *res = PQexec(pg->conn, "SELECT coalesce(max(version), 0) FROM ioacct_schema");
	int err = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		err = conn_error(pg, res, "read the schema version");
	else
		*version = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return err;
}

/*
 * Every column of the counter list, in totals and series: new ones come
 * from newer ioacctds (and older rows read 0 there, which they were).
 */
static int sync_counter_cols(struct ioacct_pgstore *pg)
{
	static const char *const tables[] = { "totals", "series" };
	const char *p = IOACCT_STORE_COUNTER_COLS;
	char sql[256], col[64];
	int err;

	while (*p) {
		size_t n = strcspn(p, ", ");

		if (n == 0 || n >= sizeof(col))
			return pg_error(pg, -EINVAL, "cluster store: bad counter column list");
		memcpy(col, p, n);
		col[n] = '\0';
		for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
			snprintf(sql, sizeof(sql),
				 "ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s numeric(20,0) NOT NULL DEFAULT 0",
				 tables[t], col);
			err = exec(pg, sql, "add a counter column");
			if (err)
				return err;
		}
		p += n;
		p += strspn(p, ", ");
	}
	return 0;
}

/*
 * The ops table's rows, from IOACCT_OPS, like the SQLite store's: operations
 * newer than the schema (the page-cache views, issue 14) get their names.
 */
#define OP_ROW(NAME, num, name, ...) "(" #num ", '" #name "'),"
static const char pg_ops_rows[] = "INSERT INTO ops VALUES " IOACCT_OPS(OP_ROW);
#undef OP_ROW

static int sync_ops(struct ioacct_pgstore *pg)
{
	char sql[sizeof(pg_ops_rows) + 32];

	/* The list ends with a comma: replace it with the conflict clause. */
	snprintf(sql, sizeof(sql), "%.*s ON CONFLICT (op) DO NOTHING", (int)sizeof(pg_ops_rows) - 2,
		 pg_ops_rows);
	return exec(pg, sql, "name the operations");
}

static int migrate(struct ioacct_pgstore *pg)
{
	char sql[64];
	int err, v = 0;

	err = exec(pg, "BEGIN", "begin the migration");
	if (err)
		return err;
	/* Every node connects at once after an upgrade: one migrates, the others wait. */
	err = exec(pg, "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ")", "lock the schema");
	if (!err)
		err = exec(pg, "CREATE TABLE IF NOT EXISTS ioacct_schema (version integer NOT NULL)",
			   "create the schema version table");
	if (!err)
		err = schema_version(pg, &v);
	if (!err && v > IOACCT_PGSTORE_SCHEMA_VERSION)
		err = pg_error(pg, -ENOTSUP,
			       "cluster store has schema %d, newer than this ioacctd's %d: upgrade ioacct on this node",
			       v, IOACCT_PGSTORE_SCHEMA_VERSION);
	for (; !err && v < IOACCT_PGSTORE_SCHEMA_VERSION; v++) {
		err = exec(pg, migrations[v], "migrate the schema");
		snprintf(sql, sizeof(sql), "INSERT INTO ioacct_schema VALUES (%d)", v + 1);
		if (!err)
			err = exec(pg, sql, "record the schema version");
	}
	if (!err)
		err = sync_counter_cols(pg);
	if (!err)
		err = sync_ops(pg);
	if (!err)
		err = exec(pg, "COMMIT", "commit the migration");
	if (err)
		rollback_quiet(pg);
	return err;
}

bool ioacct_pgstore_available(void)
{
	return true;
}

/* connect_timeout in seconds; options: the server's settings ("-c name=value"), or "". */
static struct ioacct_pgstore *pg_open(const char *conninfo, const char *connect_timeout,
				      const char *options, char *err, size_t errlen)
{
	/*
	 * Ours first: what the connection string says overrides them. A server
	 * gone silent must not hold the exporter (and the daemon's stop) for
	 * hours: TCP keepalives and a user timeout of a minute (no effect on a
	 * Unix socket).
	 */
	const char *const keys[] = { "connect_timeout", "application_name", "keepalives_idle",
				     "keepalives_interval", "keepalives_count", "tcp_user_timeout",
				     "client_encoding", "options", "dbname", NULL };
	/* UTF8: what every text ioacctd sends is (text_param()), whatever the locale says. */
	const char *const values[] = { connect_timeout, "ioacctd", "30", "10", "3", "60000",
				       "UTF8", options, conninfo, NULL };
	struct ioacct_pgstore *pg = calloc(1, sizeof(*pg));
	char line[768];
	int ret;

	if (!pg) {
		snprintf(err, errlen, "cluster store: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pg->conn = PQconnectdbParams(keys, values, 1);
	if (!pg->conn || PQstatus(pg->conn) != CONNECTION_OK) {
		snprintf(err, errlen, "cannot connect: %s",
			 pg->conn ? one_line(PQerrorMessage(pg->conn), line, sizeof(line)) :
				    "out of memory");
		ioacct_pgstore_close(pg);
		errno = ECONNREFUSED;
		return NULL;
	}
	PQsetNoticeProcessor(pg->conn, notice_quiet, NULL);
	ret = migrate(pg);
	if (ret) {
		snprintf(err, errlen, "%s", pg->errmsg);
		ioacct_pgstore_close(pg);
		errno = -ret;
		return NULL;
	}
	return pg;
}

struct ioacct_pgstore *ioacct_pgstore_open(const char *conninfo, char *err, size_t errlen)
{
	/* JIT: seconds of compiling for the merged read of a big job (merged-bench), for nothing. */
	return pg_open(conninfo, "10", "-c jit=off", err, errlen);
}

struct ioacct_pgstore *ioacct_pgstore_open_query(const char *conninfo, int timeout_ms, char *err,
						 size_t errlen)
{
	char options[64], connect[16];
	int connect_s = timeout_ms / 1000;

	snprintf(options, sizeof(options), "-c statement_timeout=%d -c jit=off", timeout_ms);
	/* libpq's smallest is 2 seconds; an absent server is said within 5. */
	if (connect_s < 2)
		connect_s = 2;
	if (connect_s > 5)
		connect_s = 5;
	snprintf(connect, sizeof(connect), "%d", connect_s);
	return pg_open(conninfo, connect, options, err, errlen);
}

void ioacct_pgstore_close(struct ioacct_pgstore *pg)
{
	if (!pg)
		return;
	if (pg->conn)
		PQfinish(pg->conn);
	free(pg);
}

const char *ioacct_pgstore_errmsg(const struct ioacct_pgstore *pg)
{
	return pg->errmsg;
}

bool ioacct_pgstore_connected(const struct ioacct_pgstore *pg)
{
	return pg && pg->conn && PQstatus(pg->conn) == CONNECTION_OK;
}

/* ---- writing a job ---- */

__attribute__((format(printf, 2, 3)))
static void buf_add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap * 2 + (size_t)n + 4096;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/*
 * A string field of COPY's text format: backslash, tab and line ends
 * escaped, and valid UTF-8 as text_param() makes it (U+FFFD for bytes that
 * are not).
 */
static void buf_text(struct buf *b, const char *s, size_t max, char sep)
{
	size_t n = strnlen(s, max);

	for (size_t i = 0; i < n && !b->failed;) {
		bool valid;
		size_t len = ioacct_utf8_seq((const unsigned char *)s + i, &valid);

		if (len > n - i)
			len = n - i;
		if (!valid)
			buf_add(b, IOACCT_UTF8_REPLACEMENT);
		else if (s[i] == '\\')
			buf_add(b, "\\\\");
		else if (s[i] == '\t')
			buf_add(b, "\\t");
		else if (s[i] == '\n')
			buf_add(b, "\\n");
		else if (s[i] == '\r')
			buf_add(b, "\\r");
		else
			buf_add(b, "%.*s", (int)len, s + i);
		i += len;
	}
	buf_add(b, "%c", sep);
}

/* A path's exact bytes (bytea, raw_param()) when it is not valid UTF-8, else NULL. */
static void buf_raw(struct buf *b, const char *s, char sep)
{
	bool nomem = false;
	char *raw = raw_param(s, &nomem);

	if (nomem)
		b->failed = true;
	else if (raw)
		buf_add(b, "\\%s%c", raw, sep); /* COPY's text format: the backslash escaped */
	else
		buf_add(b, "\\N%c", sep);
	free(raw);
}

/* 0 (not ended) is NULL, as in SQLite. */
static void buf_end(struct buf *b, int64_t end_ns)
{
	if (end_ns)
		buf_add(b, "%" PRId64 "\t", end_ns);
	else
		buf_add(b, "\\N\t");
}

static void buf_counters(struct buf *b, const struct ioacct_counters *c)
{
	uint64_t v[IOACCT_STORE_NR_COUNTERS];
	size_t n = ioacct_store_counter_values(c, v);

	for (size_t i = 0; i < n; i++)
		buf_add(b, "%" PRIu64 "%c", v[i], i + 1 < n ? '\t' : '\n');
}

/* Sends what the buffer holds when it is big enough (or always, with force). */
static int copy_flush(struct ioacct_pgstore *pg, struct buf *b, bool force)
{
	if (b->failed)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	if (!force && b->len < COPY_CHUNK)
		return 0;
	if (b->len && PQputCopyData(pg->conn, b->p, (int)b->len) != 1)
		return conn_error(pg, NULL, "send rows");
	b->len = 0;
	return 0;
}

static int copy_begin(struct ioacct_pgstore *pg, const char *sql)
{
	PGresult *res = PQexec(pg->conn, sql);
	int err = 0;

	if (PQresultStatus(res) != PGRES_COPY_IN)
		err = conn_error(pg, res, "start COPY");
	PQclear(res);
	return err;
}

static int copy_end(struct ioacct_pgstore *pg, struct buf *b, int err, const char *what)
{
	PGresult *res;

	if (!err)
		err = copy_flush(pg, b, true);
	if (PQputCopyEnd(pg->conn, err ? "ioacctd gave up" : NULL) != 1 && !err)
		err = conn_error(pg, NULL, what);
	while ((res = PQgetResult(pg->conn))) {
		if (!err && PQresultStatus(res) != PGRES_COMMAND_OK)
			err = conn_error(pg, res, what);
		PQclear(res);
	}
	return err;
}

static int put_steps(struct ioacct_pgstore *pg, const char *id, const struct ioacct_jobdata *jd,
		     struct buf *b)
{
	int err = copy_begin(pg, "COPY steps (job, step_id, start_ns, end_ns, state, exit_code, cgroup)"
				 " FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < jd->nsteps && !err; i++) {
		const struct ioacct_step *s = &jd->steps[i];

		buf_add(b, "%s\t%" PRIu32 "\t%" PRId64 "\t", id, s->step_id, s->start_ns);
		buf_end(b, s->end_ns);
		buf_text(b, s->state, sizeof(s->state), '\t');
		buf_add(b, "%" PRId32 "\t", s->exit_code);
		buf_text(b, s->cgroup, sizeof(s->cgroup), '\n');
		err = copy_flush(pg, b, false);
	}
	return copy_end(pg, b, err, "store the steps");
}

static int put_mounts(struct ioacct_pgstore *pg, const char *id,
		      const struct ioacct_jobdata *jd, struct buf *b)
{
	int err = copy_begin(pg, "COPY mounts (job, mnt_id, path, fstype, source, path_raw)"
				 " FROM STDIN");

	if (err)
		return err;
	for (size_t i = 0; i < jd->nmounts && !err; i++) {
		const struct ioacct_mount *m = &jd->mounts[i];

		buf_add(b, "%s\t%" PRIu32 "\t", id, m->mnt_id);
		buf_text(b, m->path, sizeof(m->path), '\t');
		buf_text(b, m->fstype, sizeof(m->fstype), '\t');
		buf_text(b, m->source, sizeof(m->source), '\t');
		buf_raw(b, m->path, '\n');
		err = copy_flush(pg, b, false);
	}
	return copy_end(pg, b, err, "store the mounts");
}

/* totals (with_bin false) or series. */
static int put_samples(struct ioacct_pgstore *pg, const char *id, const struct ioacct_sample *s,
		       size_t n, bool with_bin, struct buf *b)
{
	char sql[512];
	int err;

	snprintf(sql, sizeof(sql), "COPY %s (job, step_id, mnt_id, op, %s" IOACCT_STORE_COUNTER_COLS
		 ") FROM STDIN", with_bin ? "series" : "totals", with_bin ? "bin, " : "");
	err = copy_begin(pg, sql);
	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		buf_add(b, "%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", id, s[i].step_id,
			s[i].mnt_id, s[i].op);
		if (with_bin)
			buf_add(b, "%" PRIu32 "\t", s[i].bin);
		buf_counters(b, &s[i].c);
		err = copy_flush(pg, b, false);
	}
	return copy_end(pg, b, err, with_bin ? "store the series" : "store the totals");
}

/* The job's names as text parameters (text_param()), in the order of the job's row. */
enum { T_CLUSTER, T_NODE, T_SOURCE, T_USER, T_NAME, T_WORKDIR, T_STATE, T_PROBE, NR_T };

static int job_texts(struct ioacct_pgstore *pg, const struct ioacct_job *j, const char **t,
		     char **owned)
{
	const char *const src[NR_T] = { j->cluster, j->node, j->source, j->user, j->name,
					j->workdir, j->state, j->probe_mode };

	for (int i = 0; i < NR_T; i++) {
		t[i] = text_param(src[i], &owned[i]);
		if (!t[i])
			return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	return 0;
}

static int put_job_row(struct ioacct_pgstore *pg, const struct ioacct_job *j, char *id,
		       size_t idlen)
{
	char job_id[24], uid[16], gid[16], ajob[16], atask[16], start[24], end[24], ec[16], bw[24],
		de[24], db[24];
	const char *params[20], *t[NR_T];
	char *owned[NR_T] = { 0 }, *workdir_raw = NULL;
	bool nomem = false;
	PGresult *res;
	int err;

	err = job_texts(pg, j, t, owned);
	if (!err) {
		workdir_raw = raw_param(j->workdir, &nomem);
		if (nomem)
			err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	if (err)
		goto out;
	snprintf(job_id, sizeof(job_id), "%" PRIu64, j->job_id);
	snprintf(start, sizeof(start), "%" PRId64, j->start_ns);
	params[0] = t[T_CLUSTER];
	params[1] = job_id;
	params[2] = t[T_NODE];
	params[3] = start;
	/* That node's earlier copy of this job, with its rows (ON DELETE CASCADE). */
	res = PQexecParams(pg->conn,
			   "DELETE FROM jobs WHERE cluster = $1 AND job_id = $2 AND node = $3"
			   " AND start_ns = $4",
			   4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = conn_error(pg, res, "replace the job");
	PQclear(res);
	if (err)
		goto out;

	snprintf(uid, sizeof(uid), "%" PRIu32, j->uid);
	snprintf(gid, sizeof(gid), "%" PRIu32, j->gid);
	snprintf(ajob, sizeof(ajob), "%" PRIu32, j->array_job_id);
	snprintf(atask, sizeof(atask), "%" PRIu32, j->array_task_id);
	snprintf(end, sizeof(end), "%" PRId64, j->end_ns);
	snprintf(ec, sizeof(ec), "%" PRId32, j->exit_code);
	snprintf(bw, sizeof(bw), "%" PRIu64, j->bin_width_ns);
	snprintf(de, sizeof(de), "%" PRIu64, j->dropped_events);
	snprintf(db, sizeof(db), "%" PRIu64, j->dropped_bytes);
	params[4] = t[T_SOURCE];
	params[5] = uid;
	params[6] = gid;
	params[7] = t[T_USER];
	params[8] = t[T_NAME];
	params[9] = t[T_WORKDIR];
	params[10] = j->has_array ? ajob : NULL;
	params[11] = j->has_array ? atask : NULL;
	params[12] = j->end_ns ? end : NULL;
	params[13] = t[T_STATE];
	params[14] = ec;
	params[15] = t[T_PROBE];
	params[16] = bw;
	params[17] = de;
	params[18] = db;
	params[19] = workdir_raw;
	res = PQexecParams(pg->conn,
			   "INSERT INTO jobs (cluster, job_id, node, start_ns, source, uid, gid, \"user\","
			   " name, workdir, array_job_id, array_task_id, end_ns, state, exit_code,"
			   " probe_mode, bin_width_ns, dropped_events, dropped_bytes, workdir_raw)"
			   " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,"
			   " $16, $17, $18, $19, $20) RETURNING id",
			   20, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		err = conn_error(pg, res, "store the job");
	else
		snprintf(id, idlen, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
out:
	for (int i = 0; i < NR_T; i++)
		free(owned[i]);
	free(workdir_raw);
	return err;
}

int ioacct_pgstore_job_put(struct ioacct_pgstore *pg, const struct ioacct_jobdata *jd)
{
	struct buf b = { 0 };
	char id[32];
	int err;

	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	err = exec(pg, "BEGIN", "begin a transaction");
	if (err)
		return err;
	err = put_job_row(pg, &jd->job, id, sizeof(id));
	if (!err)
		err = put_steps(pg, id, jd, &b);
	if (!err)
		err = put_mounts(pg, id, jd, &b);
	if (!err)
		err = put_samples(pg, id, jd->totals, jd->ntotals, false, &b);
	if (!err)
		err = put_samples(pg, id, jd->series, jd->nseries, true, &b);
	if (!err)
		err = exec(pg, "COMMIT", "commit");
	if (err)
		rollback_quiet(pg);
	free(b.p);
	if (!err)
		return 0;
	/* Name the job: the message goes to the log of a node with many. */
	{
		char msg[sizeof(pg->errmsg)], cluster[sizeof(jd->job.cluster) * 4];

		snprintf(msg, sizeof(msg), "%s", pg->errmsg);
		pg_error(pg, err, "%s (job %" PRIu64 " of cluster %s)", msg, jd->job.job_id,
			 ioacct_text_clean(cluster, sizeof(cluster), jd->job.cluster));
	}
	return err;
}

/* ---- reading jobs (cluster-wide queries) ---- */

#define JOB_SEL_COLS                                                                   \
	"j.id, j.cluster, j.job_id, j.node, j.source, j.uid, j.gid, j.\"user\", j.name,"  \
	" j.workdir, j.array_job_id, j.array_task_id, j.start_ns, j.end_ns, j.state,"      \
	" j.exit_code, j.probe_mode, j.bin_width_ns, j.dropped_events, j.dropped_bytes"

/*
 * Per node (by_node), a job's row n (from 1, by node name) is keyed
 * key * NODE_RANKS + n: as many nodes, and ids up to 2^63 / NODE_RANKS.
 */
#define NODE_RANKS (1 << 20)

/* A node's row of a job, and where its children are in the page's results. */
struct member {
	int64_t key;             /* the job it belongs to */
	int64_t id;
	struct ioacct_job job;
	uint32_t *mnt_from, *mnt_to; /* its mount ids -> the whole job's */
	size_t nmnt;
};

/* A page's children, one result each, ordered by job. */
struct children {
	PGresult *res;
	int64_t *job;            /* the job column, parsed */
	int n;
};

static uint64_t val_u64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoull(PQgetvalue(res, row, col), NULL, 10);
}

static int64_t val_i64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static void val_str(const PGresult *res, int row, int col, char *dst, size_t len)
{
	ioacct_strlcpy(dst, PQgetisnull(res, row, col) ? "" : PQgetvalue(res, row, col), len);
}

/* The counters in columns first.. in IOACCT_STORE_COUNTER_COLS order, added to c. */
static void counters_add(struct ioacct_counters *c, const PGresult *res, int row, int first)
{
	int k = first;

	c->bytes += val_u64(res, row, k++);
	c->calls += val_u64(res, row, k++);
	c->errors += val_u64(res, row, k++);
	c->ns += val_u64(res, row, k++);
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		c->size_hist[i] += val_u64(res, row, k++);
	for (int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		c->errclass[i] += val_u64(res, row, k++);
}

static void job_from_row(const PGresult *res, int row, struct ioacct_job *j)
{
	memset(j, 0, sizeof(*j));
	j->key = val_i64(res, row, 1);
	val_str(res, row, 2, j->cluster, sizeof(j->cluster));
	j->job_id = val_u64(res, row, 3);
	val_str(res, row, 4, j->node, sizeof(j->node));
	val_str(res, row, 5, j->source, sizeof(j->source));
	j->uid = (uint32_t)val_u64(res, row, 6);
	j->gid = (uint32_t)val_u64(res, row, 7);
	val_str(res, row, 8, j->user, sizeof(j->user));
	val_str(res, row, 9, j->name, sizeof(j->name));
	val_str(res, row, 10, j->workdir, sizeof(j->workdir));
	j->has_array = !PQgetisnull(res, row, 11);
	j->array_job_id = (uint32_t)val_u64(res, row, 11);
	j->array_task_id = (uint32_t)val_u64(res, row, 12);
	j->start_ns = val_i64(res, row, 13);
	j->end_ns = val_i64(res, row, 14);
	val_str(res, row, 15, j->state, sizeof(j->state));
	j->exit_code = (int32_t)val_i64(res, row, 16);
	val_str(res, row, 17, j->probe_mode, sizeof(j->probe_mode));
	j->bin_width_ns = val_u64(res, row, 18);
	j->dropped_events = val_u64(res, row, 19);
	j->dropped_bytes = val_u64(res, row, 20);
}

/* One node's row into the whole job: see pgstore.h for the rules. */
static void job_merge(struct ioacct_job *w, const struct ioacct_job *n)
{
	size_t len = strlen(w->node);

	/* The node list: as many as fit, then "+" for the rest. */
	if (len + strlen(n->node) + 2 < sizeof(w->node))
		snprintf(w->node + len, sizeof(w->node) - len, ",%s", n->node);
	else if (len + 2 < sizeof(w->node) && w->node[len - 1] != '+')
		snprintf(w->node + len, sizeof(w->node) - len, "+");
	if (n->start_ns < w->start_ns)
		w->start_ns = n->start_ns;
	if (!w->end_ns || !n->end_ns)
		w->end_ns = 0;
	else if (n->end_ns > w->end_ns)
		w->end_ns = n->end_ns;
	if (n->exit_code > w->exit_code) {
		w->exit_code = n->exit_code;
		ioacct_strlcpy(w->state, n->state, sizeof(w->state));
	}
	w->dropped_events += n->dropped_events;
	w->dropped_bytes += n->dropped_bytes;
}

static int child_query(struct ioacct_pgstore *pg, const char *sql, const char *ids,
		       struct children *c, const char *what)
{
	const char *params[1] = { ids };

	c->res = PQexecParams(pg->conn, sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(c->res) != PGRES_TUPLES_OK)
		return conn_error(pg, c->res, what);
	c->n = PQntuples(c->res);
	c->job = calloc(c->n ? (size_t)c->n : 1, sizeof(*c->job));
	if (!c->job)
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	for (int i = 0; i < c->n; i++)
		c->job[i] = val_i64(c->res, i, 0);
	return 0;
}

static void children_free(struct children *c)
{
	PQclear(c->res);
	free(c->job);
}

/* The first row of job id in c (sorted by job), and how many. */
static int child_range(const struct children *c, int64_t id, int *count)
{
	int lo = 0, hi = c->n, end;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (c->job[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < c->n && c->job[end] == id; end++)
		;
	*count = end - lo;
	return lo;
}

static uint32_t mnt_map(const struct member *m, uint32_t mnt_id)
{
	for (size_t i = 0; i < m->nmnt; i++)
		if (m->mnt_from[i] == mnt_id)
			return m->mnt_to[i];
	return mnt_id;
}

/* Adds a sample to an array, summed into the one of the same (step, mount, op[, bin]). */
static int sample_add(struct ioacct_sample **a, size_t *n, size_t *cap, bool with_bin,
		      const struct ioacct_sample *s, const PGresult *res, int row, int first)
{
	size_t i;

	/* Per job there are a few per node: a scan is enough for totals. */
	for (i = 0; !with_bin && i < *n; i++)
		if ((*a)[i].step_id == s->step_id && (*a)[i].mnt_id == s->mnt_id &&
		    (*a)[i].op == s->op)
			break;
	if (with_bin || i == *n) {
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			void *p = reallocarray(*a, ncap, sizeof(**a));

			if (!p)
				return -ENOMEM;
			*a = p;
			*cap = ncap;
		}
		i = (*n)++;
		(*a)[i] = *s;
	}
	counters_add(&(*a)[i].c, res, row, first);
	return 0;
}

/* A node's totals, summed over its steps and mounts. */
static void node_part_add(struct ioacct_node_part *p, uint32_t op, const PGresult *res, int row,
			  int first)
{
	struct ioacct_counters c = { 0 };

	counters_add(&c, res, row, first);
	if (op == IOACCT_OP_READ) {
		p->read_bytes += c.bytes;
		p->reads += c.calls;
	} else if (op == IOACCT_OP_WRITE) {
		p->write_bytes += c.bytes;
		p->writes += c.calls;
	}
	p->ns += c.ns;
}

static int node_part_cmp(const void *pa, const void *pb)
{
	const struct ioacct_node_part *a = pa, *b = pb;

	return strcmp(a->node, b->node);
}

static int sample_cmp(const void *pa, const void *pb)
{
	const struct ioacct_sample *a = pa, *b = pb;

	if (a->step_id != b->step_id)
		return a->step_id < b->step_id ? -1 : 1;
	if (a->mnt_id != b->mnt_id)
		return a->mnt_id < b->mnt_id ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	if (a->bin != b->bin)
		return a->bin < b->bin ? -1 : 1;
	return 0;
}

static void counters_sum(struct ioacct_counters *d, const struct ioacct_counters *c)
{
	d->bytes += c->bytes;
	d->calls += c->calls;
	d->errors += c->errors;
	d->ns += c->ns;
	for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
		d->size_hist[i] += c->size_hist[i];
	for (int i = 0; i < IOACCT_NR_ERR_CLASSES; i++)
		d->errclass[i] += c->errclass[i];
}

/* The series in (step, mount, op, bin) order, the nodes' rows of one bin summed. */
static void series_merge(struct ioacct_jobdata *jd)
{
	size_t o = 0;

	if (!jd->nseries)
		return;
	qsort(jd->series, jd->nseries, sizeof(*jd->series), sample_cmp);
	for (size_t i = 1; i < jd->nseries; i++) {
		if (sample_cmp(&jd->series[o], &jd->series[i]) == 0)
			counters_sum(&jd->series[o].c, &jd->series[i].c);
		else
			jd->series[++o] = jd->series[i];
	}
	jd->nseries = o + 1;
}

/*
 * The series of a job of several nodes, summed by PostgreSQL: each node's
 * bins shifted by shift[i] onto the whole job's axis (as the C path would,
 * a bin that would pass UINT32_MAX left where it is), its mount ids mapped to
 * the whole job's, then one row per (step, mount, op, bin). A 64-node job of
 * an hour of 1 s bins is 2.8 million rows in the table and 43 thousand here:
 * fetching them all made the load slower than the query timeout and the
 * result over a gigabyte (tests/bench/merged-bench).
 */
static int series_summed(struct ioacct_pgstore *pg, const struct member *m, size_t n,
			 const uint32_t *shift, struct ioacct_jobdata *jd, size_t *cap)
{
	static const char cols[] = IOACCT_STORE_COUNTER_COLS;
	struct buf sql = { 0 }, ids = { 0 }, shifts = { 0 }, mjob = { 0 }, mfrom = { 0 }, mto = { 0 };
	const char *params[5];
	PGresult *res = NULL;
	int ret = 0;

	buf_add(&sql, "SELECT s.step_id, coalesce(mp.mnt_to, s.mnt_id), s.op,"
		" CASE WHEN s.bin + sh.shift > 4294967295 THEN s.bin ELSE s.bin + sh.shift END");
	for (const char *c = cols; *c;) {
		size_t len = strcspn(c, ", ");

		buf_add(&sql, ", sum(s.%.*s)", (int)len, c);
		c += len;
		c += strspn(c, ", ");
	}
	buf_add(&sql, " FROM series s"
		" JOIN unnest($1::bigint[], $2::bigint[]) AS sh(job, shift) ON sh.job = s.job"
		" LEFT JOIN unnest($3::bigint[], $4::bigint[], $5::bigint[]) AS mp(job, mnt_from, mnt_to)"
		" ON mp.job = s.job AND mp.mnt_from = s.mnt_id"
		" WHERE s.job = ANY($1::bigint[]) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4");
	buf_add(&ids, "{");
	buf_add(&shifts, "{");
	buf_add(&mjob, "{");
	buf_add(&mfrom, "{");
	buf_add(&mto, "{");
	for (size_t i = 0; i < n; i++) {
		buf_add(&ids, "%s%" PRId64, i ? "," : "", m[i].id);
		buf_add(&shifts, "%s%" PRIu32, i ? "," : "", shift[i]);
		for (size_t k = 0; k < m[i].nmnt; k++) {
			bool first = !i && !k;

			buf_add(&mjob, "%s%" PRId64, first ? "" : ",", m[i].id);
			buf_add(&mfrom, "%s%" PRIu32, first ? "" : ",", m[i].mnt_from[k]);
			buf_add(&mto, "%s%" PRIu32, first ? "" : ",", m[i].mnt_to[k]);
		}
	}
	buf_add(&ids, "}");
	buf_add(&shifts, "}");
	buf_add(&mjob, "}");
	buf_add(&mfrom, "}");
	buf_add(&mto, "}");
	if (sql.failed || ids.failed || shifts.failed || mjob.failed || mfrom.failed || mto.failed) {
		ret = -ENOMEM;
		goto out;
	}
	params[0] = ids.p;
	params[1] = shifts.p;
	params[2] = mjob.p;
	params[3] = mfrom.p;
	params[4] = mto.p;
	res = PQexecParams(pg->conn, sql.p, 5, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = conn_error(pg, res, "select series");
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		struct ioacct_sample s = {
			.step_id = (uint32_t)val_u64(res, r, 0),
			.mnt_id = (uint32_t)val_u64(res, r, 1),
			.op = (uint32_t)val_u64(res, r, 2),
			.bin = (uint32_t)val_u64(res, r, 3),
		};

		if (sample_add(&jd->series, &jd->nseries, cap, true, &s, res, r, 4)) {
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	PQclear(res);
	free(sql.p);
	free(ids.p);
	free(shifts.p);
	free(mjob.p);
	free(mfrom.p);
	free(mto.p);
	return ret;
}

/* The whole job of members m[0..n): its jobdata and peaks, then fn. */
static int group_emit(struct ioacct_pgstore *pg, struct member *m, size_t n,
		      const struct children *steps, const struct children *mounts,
		      const struct children *totals, const struct children *series, bool peaks,
		      bool keep_series, ioacct_pgstore_job_fn fn, void *arg)
{
	struct ioacct_jobdata jd = { 0 };
	struct ioacct_qpeak *pk = NULL;
	size_t npk = 0, cap_m = 0, cap_t = 0, cap_s = 0, cap_st = 0;
	int ret = -ENOMEM;

	jd.job = m[0].job;
	jd.job.key = m[0].key;
	for (size_t i = 1; i < n; i++)
		job_merge(&jd.job, &m[i].job);
	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(mounts, m[i].id, &cnt);

		m[i].mnt_from = calloc(cnt ? (size_t)cnt : 1, sizeof(uint32_t));
		m[i].mnt_to = calloc(cnt ? (size_t)cnt : 1, sizeof(uint32_t));
		if (!m[i].mnt_from || !m[i].mnt_to)
			goto out;
		for (int r = first; r < first + cnt; r++) {
			const char *path = PQgetvalue(mounts->res, r, 2);
			uint32_t id = (uint32_t)val_u64(mounts->res, r, 1);
			size_t k;

			/* One node's mount ids mean nothing on another: whole jobs go by path. */
			for (k = 0; n > 1 && k < jd.nmounts && strcmp(jd.mounts[k].path, path); k++)
				;
			if (n == 1 || k == jd.nmounts) {
				if (jd.nmounts == cap_m) {
					size_t ncap = cap_m ? cap_m * 2 : 8;
					void *p = reallocarray(jd.mounts, ncap, sizeof(*jd.mounts));

					if (!p)
						goto out;
					jd.mounts = p;
					cap_m = ncap;
				}
				k = jd.nmounts++;
				memset(&jd.mounts[k], 0, sizeof(jd.mounts[k]));
				jd.mounts[k].mnt_id = n == 1 ? id : (uint32_t)k + 1;
				val_str(mounts->res, r, 2, jd.mounts[k].path, sizeof(jd.mounts[k].path));
				val_str(mounts->res, r, 3, jd.mounts[k].fstype,
					sizeof(jd.mounts[k].fstype));
				val_str(mounts->res, r, 4, jd.mounts[k].source,
					sizeof(jd.mounts[k].source));
			}
			m[i].mnt_from[m[i].nmnt] = id;
			m[i].mnt_to[m[i].nmnt++] = jd.mounts[k].mnt_id;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(steps, m[i].id, &cnt);

		for (int r = first; r < first + cnt; r++) {
			struct ioacct_step st = { 0 };
			size_t k;

			st.step_id = (uint32_t)val_u64(steps->res, r, 1);
			st.start_ns = val_i64(steps->res, r, 2);
			st.end_ns = val_i64(steps->res, r, 3);
			val_str(steps->res, r, 4, st.state, sizeof(st.state));
			st.exit_code = (int32_t)val_i64(steps->res, r, 5);
			for (k = 0; k < jd.nsteps && jd.steps[k].step_id != st.step_id; k++)
				;
			if (k < jd.nsteps) {
				struct ioacct_step *w = &jd.steps[k];

				if (st.start_ns < w->start_ns)
					w->start_ns = st.start_ns;
				w->end_ns = !w->end_ns || !st.end_ns ? 0 :
					    st.end_ns > w->end_ns ? st.end_ns : w->end_ns;
				if (st.exit_code > w->exit_code) {
					w->exit_code = st.exit_code;
					ioacct_strlcpy(w->state, st.state, sizeof(w->state));
				}
				continue;
			}
			if (jd.nsteps == cap_st) {
				size_t ncap = cap_st ? cap_st * 2 : 8;
				void *p = reallocarray(jd.steps, ncap, sizeof(*jd.steps));

				if (!p)
					goto out;
				jd.steps = p;
				cap_st = ncap;
			}
			jd.steps[jd.nsteps++] = st;
		}
	}
	/* Several nodes: each one's own totals too, for the report's per-node rows. */
	if (n > 1) {
		jd.nodes = calloc(n, sizeof(*jd.nodes));
		if (!jd.nodes)
			goto out;
		jd.nnodes = n;
	}
	for (size_t i = 0; i < n; i++) {
		int cnt, first = child_range(totals, m[i].id, &cnt);

		if (jd.nodes) {
			ioacct_strlcpy(jd.nodes[i].node, m[i].job.node, sizeof(jd.nodes[i].node));
			jd.nodes[i].start_ns = m[i].job.start_ns;
		}
		for (int r = first; r < first + cnt; r++) {
			struct ioacct_sample s = {
				.step_id = (uint32_t)val_u64(totals->res, r, 1),
				.mnt_id = mnt_map(&m[i], (uint32_t)val_u64(totals->res, r, 2)),
				.op = (uint32_t)val_u64(totals->res, r, 3),
			};

			if (sample_add(&jd.totals, &jd.ntotals, &cap_t, false, &s, totals->res, r, 4))
				goto out;
			if (jd.nodes)
				node_part_add(&jd.nodes[i], s.op, totals->res, r, 4);
		}
	}
	if (jd.nodes)
		qsort(jd.nodes, jd.nnodes, sizeof(*jd.nodes), node_part_cmp);
	if (peaks || keep_series) {
		uint32_t *shift = calloc(n, sizeof(*shift));

		if (!shift)
			goto out;
		for (size_t i = 0; i < n; i++) {
			uint64_t skew = 0;

			/*
			 * Each node counts bins from its own start: put them on the
			 * earliest node's (jd.job.start_ns, the smallest). Nodes of
			 * another width cannot be aligned exactly: they stay as they are.
			 */
			if (m[i].job.bin_width_ns == jd.job.bin_width_ns)
				shift[i] = ioacct_bin_shift(m[i].job.start_ns, jd.job.start_ns,
							    jd.job.bin_width_ns, &skew);
			if (skew > jd.job.skew_ns)
				jd.job.skew_ns = skew;
		}
		if (n > 1) {
			int err = series_summed(pg, m, n, shift, &jd, &cap_s);

			if (err) {
				free(shift);
				ret = err;
				goto out;
			}
		}
		for (size_t i = 0; n == 1 && i < n; i++) {
			int cnt, first = child_range(series, m[i].id, &cnt);

			for (int r = first; r < first + cnt; r++) {
				struct ioacct_sample s = {
					.step_id = (uint32_t)val_u64(series->res, r, 1),
					.mnt_id = mnt_map(&m[i], (uint32_t)val_u64(series->res, r, 2)),
					.op = (uint32_t)val_u64(series->res, r, 3),
					.bin = (uint32_t)val_u64(series->res, r, 4),
				};

				if (sample_add(&jd.series, &jd.nseries, &cap_s, true, &s, series->res,
					       r, 5)) {
					free(shift);
					goto out;
				}
			}
		}
		free(shift);
		/* Aligned, bins of the same number on different nodes add up (query.h). */
		if (peaks && ioacct_query_peaks(jd.series, jd.nseries, &pk, &npk))
			goto out;
	}
	if (keep_series) {
		series_merge(&jd);
	} else {
		free(jd.series);
		jd.series = NULL;
		jd.nseries = 0;
	}
	ret = fn(&jd, pk, npk, arg);
out:
	if (ret == -ENOMEM)
		pg_error(pg, ret, "cluster store: out of memory");
	free(pk);
	free(jd.steps);
	free(jd.mounts);
	free(jd.totals);
	free(jd.series);
	free(jd.nodes);
	return ret;
}

/* The WHERE of the jobs selected: numbers inline, cluster names escaped. */
static int where_sql(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f, struct buf *b)
{
	buf_add(b, " WHERE true");
	if (f->njob_ids) {
		buf_add(b, " AND j.job_id IN (");
		for (size_t i = 0; i < f->njob_ids; i++)
			buf_add(b, "%s%" PRIu64, i ? "," : "", f->job_ids[i]);
		buf_add(b, ")");
	}
	if (f->nuids) {
		buf_add(b, " AND j.uid IN (");
		for (size_t i = 0; i < f->nuids; i++)
			buf_add(b, "%s%" PRIu32, i ? "," : "", f->uids[i]);
		buf_add(b, ")");
	}
	if (f->nclusters) {
		buf_add(b, " AND j.cluster IN (");
		for (size_t i = 0; i < f->nclusters; i++) {
			char *owned, *lit = NULL;
			const char *name = text_param(f->clusters[i], &owned);

			if (name)
				lit = PQescapeLiteral(pg->conn, name, strlen(name));
			free(owned);
			if (!lit)
				return conn_error(pg, NULL, "quote a cluster name");
			buf_add(b, "%s%s", i ? "," : "", lit);
			PQfreemem(lit);
		}
		buf_add(b, ")");
	}
	if (f->start_ns)
		buf_add(b, " AND j.start_ns >= %" PRId64 " - (SELECT coalesce(max(end_ns - start_ns), 0)"
			" FROM jobs) AND coalesce(j.end_ns, 9223372036854775807) >= %" PRId64,
			f->start_ns, f->start_ns);
	if (f->end_ns)
		buf_add(b, " AND j.start_ns <= %" PRId64, f->end_ns);
	return b->failed ? pg_error(pg, -ENOMEM, "cluster store: out of memory") : 0;
}

static int select_jobs(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f, bool peaks,
		       bool keep_series, ioacct_pgstore_job_fn fn, void *arg)
{
	struct children steps = { 0 }, mounts = { 0 }, totals = { 0 }, series = { 0 };
	struct buf b = { 0 }, ids = { 0 }, ids1 = { 0 };
	struct member *m = NULL;
	PGresult *res = NULL;
	size_t nm = 0;
	int ret;

	if (!ioacct_pgstore_connected(pg))
		return pg_error(pg, -ENOTCONN, "cluster store: not connected");
	/* The page's jobs (keys), then each with its nodes' rows, in key order. */
	buf_add(&b, "WITH sel AS (SELECT " JOB_SEL_COLS " FROM jobs j");
	ret = where_sql(pg, f, &b);
	if (ret)
		goto out;
	/*
	 * Per node, a job's rows come together, by node: each is keyed by its
	 * job's key and its rank among the job's nodes, which pages go by.
	 */
	if (f->by_node)
		buf_add(&b, "), g AS (SELECT id, min(id) OVER w * %d + row_number() OVER"
			" (w ORDER BY node, start_ns, id) AS key FROM sel"
			" WINDOW w AS (PARTITION BY cluster, job_id)),"
			" k AS (SELECT id, key FROM g WHERE key > %" PRId64 " ORDER BY key LIMIT %zu)"
			" SELECT k.key, sel.* FROM k JOIN sel ON sel.id = k.id ORDER BY k.key",
			NODE_RANKS, f->after_key, f->limit ? f->limit : (size_t)INT64_MAX);
	else
		buf_add(&b, "), k AS (SELECT min(id) AS key, cluster, job_id FROM sel"
			" GROUP BY cluster, job_id HAVING min(id) > %" PRId64 " ORDER BY 1 LIMIT %zu)"
			" SELECT k.key, sel.* FROM k JOIN sel USING (cluster, job_id)"
			" ORDER BY k.key, sel.node, sel.start_ns",
			f->after_key, f->limit ? f->limit : (size_t)INT64_MAX);
	if (b.failed) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	res = PQexec(pg->conn, b.p);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		ret = conn_error(pg, res, "select jobs");
		goto out;
	}
	nm = (size_t)PQntuples(res);
	m = calloc(nm ? nm : 1, sizeof(*m));
	if (!m) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	buf_add(&ids, "{");
	for (size_t i = 0; i < nm; i++) {
		m[i].key = val_i64(res, (int)i, 0);
		m[i].id = val_i64(res, (int)i, 1);
		job_from_row(res, (int)i, &m[i].job);
		m[i].job.key = m[i].id;
		buf_add(&ids, "%s%" PRId64, i ? "," : "", m[i].id);
	}
	buf_add(&ids, "}");
	if (ids.failed) {
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	if (!nm)
		goto out;
	ret = child_query(pg, "SELECT job, step_id, start_ns, end_ns, state, exit_code FROM steps"
			  " WHERE job = ANY($1::bigint[]) ORDER BY job, step_id", ids.p, &steps,
			  "select steps");
	if (!ret)
		ret = child_query(pg, "SELECT job, mnt_id, path, fstype, source FROM mounts"
				  " WHERE job = ANY($1::bigint[]) ORDER BY job, mnt_id", ids.p,
				  &mounts, "select mounts");
	if (!ret)
		ret = child_query(pg, "SELECT job, step_id, mnt_id, op, " IOACCT_STORE_COUNTER_COLS
				  " FROM totals WHERE job = ANY($1::bigint[]) ORDER BY job", ids.p,
				  &totals, "select totals");
	/* Raw rows only for jobs of one node: PostgreSQL sums the others' (series_summed). */
	buf_add(&ids1, "{");
	for (size_t i = 0, k = 0; i < nm; i++)
		if ((i == 0 || m[i - 1].key != m[i].key) && (i + 1 == nm || m[i + 1].key != m[i].key))
			buf_add(&ids1, "%s%" PRId64, k++ ? "," : "", m[i].id);
	buf_add(&ids1, "}");
	if (!ret && ids1.failed)
		ret = pg_error(pg, -ENOMEM, "cluster store: out of memory");
	if (!ret && (peaks || keep_series))
		ret = child_query(pg, "SELECT job, step_id, mnt_id, op, bin, "
				  IOACCT_STORE_COUNTER_COLS " FROM series"
				  " WHERE job = ANY($1::bigint[]) ORDER BY job", ids1.p, &series,
				  "select series");
	for (size_t i = 0; !ret && i < nm;) {
		size_t j = i + 1;

		while (j < nm && m[j].key == m[i].key)
			j++;
		ret = group_emit(pg, m + i, j - i, &steps, &mounts, &totals, &series, peaks,
				 keep_series, fn, arg);
		i = j;
	}
out:
	for (size_t i = 0; i < nm; i++) {
		free(m[i].mnt_from);
		free(m[i].mnt_to);
	}
	free(m);
	PQclear(res);
	children_free(&steps);
	children_free(&mounts);
	children_free(&totals);
	children_free(&series);
	free(b.p);
	free(ids.p);
	free(ids1.p);
	return ret;
}

int ioacct_pgstore_jobs_select(struct ioacct_pgstore *pg, const struct ioacct_store_filter *f,
			       bool peaks, ioacct_pgstore_job_fn fn, void *arg)
{
	return select_jobs(pg, f, peaks, false, fn, arg);
}

/* Keeps a copy of the job with the highest key (the newest cluster's, with -M none). */
static int keep_newest(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		       size_t npeaks, void *arg)
{
	struct ioacct_jobdata **out = arg, *c;

	(void)peaks;
	(void)npeaks;
	if (*out && (*out)->job.key > jd->job.key)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *jd;
	c->steps = malloc((jd->nsteps ? jd->nsteps : 1) * sizeof(*c->steps));
	c->mounts = malloc((jd->nmounts ? jd->nmounts : 1) * sizeof(*c->mounts));
	c->totals = malloc((jd->ntotals ? jd->ntotals : 1) * sizeof(*c->totals));
	c->series = malloc((jd->nseries ? jd->nseries : 1) * sizeof(*c->series));
	c->nodes = malloc((jd->nnodes ? jd->nnodes : 1) * sizeof(*c->nodes));
	if (!c->steps || !c->mounts || !c->totals || !c->series || !c->nodes) {
		ioacct_jobdata_free(c);
		return -ENOMEM;
	}
	memcpy(c->steps, jd->steps, jd->nsteps * sizeof(*c->steps));
	memcpy(c->mounts, jd->mounts, jd->nmounts * sizeof(*c->mounts));
	memcpy(c->totals, jd->totals, jd->ntotals * sizeof(*c->totals));
	memcpy(c->series, jd->series, jd->nseries * sizeof(*c->series));
	memcpy(c->nodes, jd->nodes, jd->nnodes * sizeof(*c->nodes));
	ioacct_jobdata_free(*out);
	*out = c;
	return 0;
}

int ioacct_pgstore_job_load(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
			    struct ioacct_jobdata **out)
{
	const char *clusters[1] = { cluster };
	struct ioacct_store_filter f = {
		.job_ids = &job_id,
		.njob_ids = 1,
		.clusters = clusters,
		.nclusters = cluster && *cluster ? 1 : 0,
	};
	int ret;

	*out = NULL;
	ret = select_jobs(pg, &f, false, true, keep_newest, out);
	if (ret == -ENOMEM)
		pg_error(pg, ret, "cluster store: out of memory");
	if (ret) {
		ioacct_jobdata_free(*out);
		*out = NULL;
		return ret;
	}
	return *out ? 0 : -ENOENT;
}

/* ---- the merged report of a job of several nodes ---- */

int ioacct_pgstore_report_offer(struct ioacct_pgstore *pg, const struct ioacct_job *job,
				const struct ioacct_report_spec *spec, uint32_t merge_timeout_s)
{
	char job_id[24], formats[16], uid[16], gid[16], timeout[16], start[24];
	const char *params[12];
	char *owned[4] = { 0 }, *path_raw = NULL, *copy_dir_raw = NULL;
	bool nomem = false;
	PGresult *res;
	int err = 0;

	params[0] = text_param(job->cluster, &owned[0]);
	params[2] = text_param(spec->nodes, &owned[1]);
	params[3] = text_param(spec->path, &owned[2]);
	params[7] = text_param(spec->copy_dir, &owned[3]);
	path_raw = raw_param(spec->path, &nomem);
	copy_dir_raw = raw_param(spec->copy_dir, &nomem);
	if (!params[0] || !params[2] || !params[3] || !params[7] || nomem) {
		err = pg_error(pg, -ENOMEM, "cluster store: out of memory");
		goto out;
	}
	snprintf(job_id, sizeof(job_id), "%" PRIu64, job->job_id);
	snprintf(formats, sizeof(formats), "%" PRIu32, spec->formats);
	snprintf(uid, sizeof(uid), "%" PRIu32, job->uid);
	snprintf(gid, sizeof(gid), "%" PRIu32, job->gid);
	snprintf(timeout, sizeof(timeout), "%" PRIu32, merge_timeout_s);
	params[1] = job_id;
	params[4] = formats;
	params[5] = uid;
	params[6] = gid;
	params[8] = timeout;
	snprintf(start, sizeof(start), "%" PRId64, job->start_ns);
	params[9] = start;
	params[10] = path_raw;
	params[11] = copy_dir_raw;
	/*
	 * The first node's offer stands: its deadline counts from the first part.
	 * A row made before this node's part started is an earlier run of the
	 * same job id (requeued, or ids started again): this run starts afresh.
	 */
	res = PQexecParams(pg->conn,
			   "INSERT INTO job_reports (cluster, job_id, expected, path, formats, uid, gid,"
			   " copy_dir, merge_timeout_s, deadline, path_raw, copy_dir_raw)"
			   " VALUES ($1, $2, string_to_array($3, ','), $4, $5, $6, $7, $8, $9,"
			   " now() + make_interval(secs => $9::integer), $11, $12)"
			   " ON CONFLICT (cluster, job_id) DO UPDATE SET expected = EXCLUDED.expected,"
			   " path = EXCLUDED.path, formats = EXCLUDED.formats, uid = EXCLUDED.uid,"
			   " gid = EXCLUDED.gid, copy_dir = EXCLUDED.copy_dir,"
			   " path_raw = EXCLUDED.path_raw, copy_dir_raw = EXCLUDED.copy_dir_raw,"
			   " merge_timeout_s = EXCLUDED.merge_timeout_s, first_at = now(),"
			   " deadline = EXCLUDED.deadline, written_at = NULL, written_by = NULL,"
			   " missing = NULL"
			   " WHERE job_reports.first_at < to_timestamp($10::bigint / 1e9)",
			   12, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = conn_error(pg, res, "offer the merged report");
	PQclear(res);
out:
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
		free(owned[i]);
	free(path_raw);
	free(copy_dir_raw);
	return err;
}

void ioacct_pgstore_report_abort(struct ioacct_pgstore *pg)
{
	rollback_quiet(pg);
}

int ioacct_pgstore_report_claim(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
				bool skip_locked, struct ioacct_pgstore_report *rep,
				struct ioacct_jobdata **jd)
{
	/* Missing: expected nodes with no part in jobs yet, by name. */
	static const char sql[] =
		"SELECT r.path, r.formats, r.uid, r.gid, r.copy_dir,"
		" array_to_string(r.expected, ','), r.written_at IS NOT NULL, now() >= r.deadline,"
		" coalesce((SELECT string_agg(n, ',' ORDER BY n) FROM unnest(r.expected) n"
		"  WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.cluster = r.cluster"
		"  AND j.job_id = r.job_id AND j.node = n)), ''), r.merge_timeout_s, r.path_raw,"
		" r.copy_dir_raw"
		" FROM job_reports r WHERE r.cluster = $1 AND r.job_id = $2 FOR UPDATE";
	char job_id_s[24], q[sizeof(sql) + 16];
	const char *params[2] = { NULL, job_id_s };
	char *owned = NULL, missing[sizeof((*jd)->missing_nodes)];
	uint32_t timeout = 0;
	bool written = false, overdue = false;
	PGresult *res;
	int err;

	*jd = NULL;
	memset(rep, 0, sizeof(*rep));
	snprintf(job_id_s, sizeof(job_id_s), "%" PRIu64, job_id);
	snprintf(q, sizeof(q), "%s%s", sql, skip_locked ? " SKIP LOCKED" : "");
	params[0] = text_param(cluster, &owned);
	if (!params[0])
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	err = exec(pg, "BEGIN", "begin a transaction");
	if (err) {
		free(owned);
		return err;
	}
	res = PQexecParams(pg->conn, q, 2, NULL, params, NULL, NULL, 0);
	free(owned);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		err = conn_error(pg, res, "lock the merged report");
	} else if (PQntuples(res) != 1) {
		/* None, or another node holds it (SKIP LOCKED). */
		err = skip_locked ? -EAGAIN : -ENOENT;
	} else {
		ioacct_strlcpy(rep->spec.path, PQgetvalue(res, 0, 0), sizeof(rep->spec.path));
		rep->spec.formats = (uint32_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
		rep->uid = (uint32_t)strtoul(PQgetvalue(res, 0, 2), NULL, 10);
		rep->gid = (uint32_t)strtoul(PQgetvalue(res, 0, 3), NULL, 10);
		ioacct_strlcpy(rep->spec.copy_dir, PQgetvalue(res, 0, 4), sizeof(rep->spec.copy_dir));
		ioacct_strlcpy(rep->spec.nodes, PQgetvalue(res, 0, 5), sizeof(rep->spec.nodes));
		written = PQgetvalue(res, 0, 6)[0] == 't';
		overdue = PQgetvalue(res, 0, 7)[0] == 't';
		ioacct_strlcpy(missing, PQgetvalue(res, 0, 8), sizeof(missing));
		timeout = (uint32_t)strtoul(PQgetvalue(res, 0, 9), NULL, 10);
		/* The exact paths, where the text has U+FFFD for bytes that were not UTF-8. */
		raw_value(res, 0, 10, rep->spec.path, sizeof(rep->spec.path));
		raw_value(res, 0, 11, rep->spec.copy_dir, sizeof(rep->spec.copy_dir));
	}
	PQclear(res);
	if (!err && written)
		err = -EALREADY;
	else if (!err && missing[0] && !overdue)
		err = -EAGAIN;
	if (!err) {
		err = ioacct_pgstore_job_load(pg, cluster, job_id, jd);
		if (err == -ENOENT)
			pg_error(pg, err, "cluster store: job %" PRIu64 " has a report but no part", job_id);
	}
	if (err) {
		rollback_quiet(pg);
		return err;
	}
	ioacct_strlcpy((*jd)->missing_nodes, missing, sizeof((*jd)->missing_nodes));
	(*jd)->missing_after_s = missing[0] ? timeout : 0;
	return 0;
}

int ioacct_pgstore_report_written(struct ioacct_pgstore *pg, const char *cluster, uint64_t job_id,
				  const char *node, const char *missing)
{
	char job_id_s[24], *owned[3] = { 0 };
	const char *params[4] = { text_param(cluster, &owned[0]), job_id_s,
				  text_param(node, &owned[1]), text_param(missing, &owned[2]) };
	PGresult *res;
	int err = 0;

	if (!params[0] || !params[2] || !params[3]) {
		for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
			free(owned[i]);
		rollback_quiet(pg);
		return pg_error(pg, -ENOMEM, "cluster store: out of memory");
	}
	snprintf(job_id_s, sizeof(job_id_s), "%" PRIu64, job_id);
	res = PQexecParams(pg->conn,
			   "UPDATE job_reports SET written_at = now(), written_by = $3,"
			   " missing = CASE WHEN $4 = '' THEN NULL ELSE string_to_array($4, ',') END"
			   " WHERE cluster = $1 AND job_id = $2",
			   4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		err = conn_error(pg, res, "mark the merged report written");
	PQclear(res);
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
		free(owned[i]);
	if (!err)
		err = exec(pg, "COMMIT", "commit the merged report");
	if (err)
		rollback_quiet(pg);
	return err;
}

#endif /* HAVE_LIBPQ */
