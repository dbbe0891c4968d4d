// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The --filter grammar and the --assert expressions (iotrace(1)):
 *
 *   FILTER := TERM [, TERM]...        every term must hold
 *   TERM   := FIELD OP VALUE[|VALUE]...
 *   OP     := = != < <= > >= ~ !~    (~: shell glob, for comm, mount, path)
 *   ASSERT := count(FILTER) CMP N | bytes(FILTER) CMP N
 *
 * Sizes take K, M, G, T (powers of 1024), durations ns, us, ms, s; a
 * status an errno's name for its negative (status=EIO is status=-5).
 */
#include "tracefmt.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "iotrace_abi.h"
#include "util.h"

enum value_kind { V_NUM, V_SIZE, V_DUR, V_STR, V_OP, V_ERRNO, V_STATUS };

static const struct {
	const char *name;
	enum ioacct_trace_field field;
	enum value_kind kind;
} fields[] = {
	{ "op", IOACCT_TF_OP, V_OP },         { "pid", IOACCT_TF_PID, V_NUM },
	{ "tid", IOACCT_TF_TID, V_NUM },      { "comm", IOACCT_TF_COMM, V_STR },
	{ "mount", IOACCT_TF_MOUNT, V_STR },  { "path", IOACCT_TF_PATH, V_STR },
	{ "size", IOACCT_TF_SIZE, V_SIZE },   { "offset", IOACCT_TF_OFFSET, V_SIZE },
	{ "errno", IOACCT_TF_ERRNO, V_ERRNO }, { "result", IOACCT_TF_RESULT, V_NUM },
	{ "dur", IOACCT_TF_DUR, V_DUR },
	/* An RPC's (iotrace --rpc). */
	{ "rpc", IOACCT_TF_RPC, V_STR },      { "call", IOACCT_TF_CALL, V_OP },
	{ "sent", IOACCT_TF_SENT, V_SIZE },   { "recv", IOACCT_TF_RECV, V_SIZE },
	{ "status", IOACCT_TF_STATUS, V_STATUS }, { "fileid", IOACCT_TF_FILEID, V_NUM },
};

#define FIELD_NAMES "op, pid, tid, comm, mount, path, size, offset, errno, result, dur; RPCs: " \
	"rpc, call, sent, recv, status, fileid"

/* Longest first, so that "<=" is not read as "<". */
static const struct {
	const char *s;
	enum ioacct_trace_cmp cmp;
} cmps[] = {
	{ "!=", IOACCT_TC_NE }, { "<=", IOACCT_TC_LE }, { ">=", IOACCT_TC_GE }, { "!~", IOACCT_TC_NOGLOB },
	{ "==", IOACCT_TC_EQ }, { "=", IOACCT_TC_EQ },  { "<", IOACCT_TC_LT },  { ">", IOACCT_TC_GT },
	{ "~", IOACCT_TC_GLOB },
};

static const char *match_cmp(const char *p, enum ioacct_trace_cmp *cmp)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmps); i++) {
		size_t n = strlen(cmps[i].s);

		if (!strncmp(p, cmps[i].s, n)) {
			*cmp = cmps[i].cmp;
			return p + n;
		}
	}
	return NULL;
}

/* A number with an optional unit suffix: K M G T for sizes, ns us ms s for durations (ns). */
static int parse_num(const char *s, enum value_kind kind, int64_t *out)
{
	char *end;
	long long v;
	int64_t mul = 1;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || errno)
		return -EINVAL;
	if (kind == V_SIZE && *end) {
		const char *units = "KMGT";
		const char *u = strchr(units, *end);

		if (!u || end[1])
			return -EINVAL;
		for (const char *q = units; q <= u; q++)
			mul *= 1024;
		end++;
	} else if (kind == V_DUR && *end) {
		if (!strcmp(end, "ns"))
			mul = 1;
		else if (!strcmp(end, "us"))
			mul = 1000;
		else if (!strcmp(end, "ms"))
			mul = 1000000;
		else if (!strcmp(end, "s"))
			mul = 1000000000;
		else
			return -EINVAL;
		end += strlen(end);
	}
	if (*end)
		return -EINVAL;
	if (v < 0 && kind != V_NUM)
		return -EINVAL;
	if (v != 0 && (v > INT64_MAX / mul || v < INT64_MIN / mul))
		return -ERANGE;
	*out = v * mul;
	return 0;
}

static void op_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < IOTRACE_NR_OPS && used < len; i++) {
		const char *n = ioacct_trace_op_name(i);

		if (n)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
	}
}

static void term_free(struct ioacct_trace_term *t)
{
	for (size_t i = 0; i < t->nvals; i++)
		free(t->str[i]);
	t->nvals = 0;
}

static int parse_value(struct ioacct_trace_term *t, enum value_kind kind, const char *v,
		       const char *term, char *err, size_t errlen)
{
	size_t i = t->nvals;
	int e, ret;

	if (i >= IOACCT_TRACE_MAX_ALTS)
		return ioacct_seterr(err, errlen, -EINVAL, "%s: more than %d values", term,
				     IOACCT_TRACE_MAX_ALTS);
	t->str[i] = NULL;
	t->num[i] = 0;
	switch (kind) {
	case V_OP: {
		uint32_t op;
		char list[256];

		if (ioacct_trace_op_parse(v, &op)) {
			op_list(list, sizeof(list));
			return ioacct_seterr(err, errlen, -EINVAL, "%s: unknown operation '%s' (%s)",
					     term, v, list);
		}
		t->num[i] = op;
		break;
	}
	case V_ERRNO:
		if (ioacct_trace_errno_parse(v, &e) == 0) {
			t->num[i] = e;
		} else if (parse_num(v, V_NUM, &t->num[i]) || t->num[i] < 0) {
			return ioacct_seterr(err, errlen, -EINVAL,
					     "%s: unknown errno '%s' (a name such as ENOENT, or 0 for success)",
					     term, v);
		}
		break;
	case V_STATUS:
		if (ioacct_trace_errno_parse(v, &e) == 0)
			t->num[i] = -e;
		else if (parse_num(v, V_NUM, &t->num[i]))
			return ioacct_seterr(err, errlen, -EINVAL,
					     "%s: '%s' is not a status (a number, or an errno's name "
					     "such as EIO for its negative)", term, v);
		break;
	case V_STR:
		t->str[i] = strdup(v);
		if (!t->str[i])
			return ioacct_seterr(err, errlen, -ENOMEM, "%s: out of memory", term);
		break;
	default:
		ret = parse_num(v, kind, &t->num[i]);
		if (ret)
			return ioacct_seterr(err, errlen, -EINVAL, "%s: '%s' is not a %s", term, v,
					     kind == V_SIZE ? "size (a number, optionally K, M, G or T)" :
					     kind == V_DUR ? "duration (a number, optionally ns, us, ms or s)" :
					     "number");
	}
	t->nvals++;
	return 0;
}

/* One TERM (text is a copy of just that term). */
static int parse_term(char *text, struct ioacct_trace_term *t, char *err, size_t errlen)
{
	char term[256];
	size_t nlen = strspn(text, "abcdefghijklmnopqrstuvwxyz");
	enum value_kind kind = V_NUM;
	const char *rest;
	char *v, *save = NULL;
	size_t i;
	int ret;

	snprintf(term, sizeof(term), "%s", text);
	memset(t, 0, sizeof(*t));
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (strlen(fields[i].name) == nlen && !strncmp(fields[i].name, text, nlen))
			break;
	if (i == ARRAY_SIZE(fields))
		return ioacct_seterr(err, errlen, -EINVAL,
				     "%s: unknown field '%.*s' (" FIELD_NAMES ")", term, (int)nlen, text);
	t->field = fields[i].field;
	kind = fields[i].kind;
	rest = match_cmp(text + nlen, &t->cmp);
	if (!rest)
		return ioacct_seterr(err, errlen, -EINVAL,
				     "%s: expected an operator after '%s' (= != < <= > >= ~ !~)", term,
				     fields[i].name);
	if ((t->cmp == IOACCT_TC_GLOB || t->cmp == IOACCT_TC_NOGLOB) && kind != V_STR)
		return ioacct_seterr(err, errlen, -EINVAL,
				     "%s: '~' matches strings (comm, mount, path, rpc), not %s", term,
				     fields[i].name);
	if (t->cmp != IOACCT_TC_EQ && t->cmp != IOACCT_TC_NE && t->cmp != IOACCT_TC_GLOB &&
	    t->cmp != IOACCT_TC_NOGLOB && (kind == V_STR || kind == V_OP || kind == V_ERRNO))
		return ioacct_seterr(err, errlen, -EINVAL, "%s: %s compares with = != %s only", term,
				     fields[i].name, kind == V_STR ? "~ !~" : "");
	if (!*rest)
		return ioacct_seterr(err, errlen, -EINVAL, "%s: no value after the operator", term);
	for (v = strtok_r((char *)rest, "|", &save); v; v = strtok_r(NULL, "|", &save)) {
		ret = parse_value(t, kind, v, term, err, errlen);
		if (ret) {
			term_free(t);
			return ret;
		}
	}
	if (!t->nvals)
		return ioacct_seterr(err, errlen, -EINVAL, "%s: no value after the operator", term);
	return 0;
}

int ioacct_trace_filter_parse(const char *text, struct ioacct_trace_filter *f, char *err,
			      size_t errlen)
{
	struct ioacct_trace_filter nf = *f;
	char *copy = strdup(text), *tok, *save = NULL;
	size_t added = 0;
	int ret = 0;

	if (!copy)
		return ioacct_seterr(err, errlen, -ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct ioacct_trace_term *t = realloc(nf.t, (nf.n + 1) * sizeof(*t));

		if (!t) {
			ret = ioacct_seterr(err, errlen, -ENOMEM, "out of memory");
			break;
		}
		nf.t = t;
		ret = parse_term(tok, &nf.t[nf.n], err, errlen);
		if (ret)
			break;
		nf.n++;
		added++;
	}
	free(copy);
	if (ret) {
		for (size_t i = nf.n - added; i < nf.n; i++)
			term_free(&nf.t[i]);
		nf.n -= added;
	}
	*f = nf;
	return ret;
}

static bool cmp_num(enum ioacct_trace_cmp c, int64_t a, int64_t b)
{
	switch (c) {
	case IOACCT_TC_EQ:
		return a == b;
	case IOACCT_TC_NE:
		return a != b;
	case IOACCT_TC_LT:
		return a < b;
	case IOACCT_TC_LE:
		return a <= b;
	case IOACCT_TC_GT:
		return a > b;
	case IOACCT_TC_GE:
		return a >= b;
	default:
		return false;
	}
}

/*
 * The record's value of a field: a number in *n or a string in *s; false
 * when the record has none (an RPC's op, a call's rpc, an unknown offset).
 */
static bool rpc_value(enum ioacct_trace_field f, const struct ioacct_trace_rpc *rpc, int64_t *n,
		      const char **s)
{
	switch (f) {
	case IOACCT_TF_RPC:
		*s = rpc->name;
		return true;
	case IOACCT_TF_CALL:
		*n = rpc->call;
		return rpc->call != IOACCT_TRACE_NO_OP;
	case IOACCT_TF_SENT:
		*n = (int64_t)rpc->bytes_sent;
		return true;
	case IOACCT_TF_RECV:
		*n = (int64_t)rpc->bytes_recv;
		return true;
	case IOACCT_TF_FILEID:
		*n = (int64_t)rpc->fileid;
		return rpc->has_file;
	default:
		return false;
	}
}

static bool field_value(enum ioacct_trace_field f, const struct ioacct_trace_rec *r, int64_t *n,
			const char **s)
{
	switch (f) {
	case IOACCT_TF_OP:
		*n = r->op;
		return !r->rpc;
	case IOACCT_TF_PID:
		*n = r->pid;
		return true;
	case IOACCT_TF_TID:
		*n = r->tid;
		return true;
	case IOACCT_TF_COMM:
		*s = r->comm;
		return true;
	case IOACCT_TF_MOUNT:
		*s = r->mount;
		return true;
	case IOACCT_TF_PATH:
		*s = r->path;
		return true;
	case IOACCT_TF_SIZE:
		*n = (int64_t)r->size;
		return true;
	case IOACCT_TF_OFFSET:
		*n = r->offset;
		return r->offset >= 0;
	case IOACCT_TF_ERRNO:
		*n = r->ret < 0 ? -r->ret : 0;
		return true;
	case IOACCT_TF_RESULT:
	case IOACCT_TF_STATUS:
		*n = r->ret;
		return f == IOACCT_TF_RESULT || r->rpc;
	case IOACCT_TF_DUR:
		*n = (int64_t)r->dur_ns;
		return true;
	default:
		return r->rpc && rpc_value(f, r->rpc, n, s);
	}
}

static bool term_match(const struct ioacct_trace_term *t, const struct ioacct_trace_rec *r)
{
	bool negated = t->cmp == IOACCT_TC_NE || t->cmp == IOACCT_TC_NOGLOB;
	const char *s = NULL;
	int64_t n = 0;

	/* A field the record lacks matches no comparison (but every != and !~). */
	if (!field_value(t->field, r, &n, &s))
		return negated;
	for (size_t i = 0; i < t->nvals; i++) {
		bool hit;

		if (s && (t->cmp == IOACCT_TC_GLOB || t->cmp == IOACCT_TC_NOGLOB))
			hit = fnmatch(t->str[i], s, 0) == 0;
		else if (s)
			hit = strcmp(t->str[i], s) == 0;
		else
			hit = cmp_num(negated ? IOACCT_TC_EQ : t->cmp, n, t->num[i]);
		if (hit)
			return !negated;
	}
	return negated;
}

bool ioacct_trace_filter_match(const struct ioacct_trace_filter *f, const struct ioacct_trace_rec *r)
{
	for (size_t i = 0; i < f->n; i++)
		if (!term_match(&f->t[i], r))
			return false;
	return true;
}

void ioacct_trace_filter_free(struct ioacct_trace_filter *f)
{
	for (size_t i = 0; i < f->n; i++)
		term_free(&f->t[i]);
	free(f->t);
	f->t = NULL;
	f->n = 0;
}

int ioacct_trace_assert_parse(const char *text, struct ioacct_trace_assert *a, char *err,
			      size_t errlen)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')'), *rest;
	size_t nlen = open ? (size_t)(open - text) : 0;
	char inner[1024];
	int64_t limit;
	int ret;

	memset(a, 0, sizeof(*a));
	a->text = text;
	if (open && nlen == 5 && !strncmp(text, "count", 5))
		a->agg = IOACCT_TA_COUNT;
	else if (open && nlen == 5 && !strncmp(text, "bytes", 5))
		a->agg = IOACCT_TA_BYTES;
	else
		return ioacct_seterr(err, errlen, -EINVAL,
				     "%s: expected count(FILTER) or bytes(FILTER), then a comparison", text);
	if (!close || close < open)
		return ioacct_seterr(err, errlen, -EINVAL, "%s: no ')' after '%.*s('", text,
				     (int)nlen, text);
	if ((size_t)(close - open - 1) >= sizeof(inner))
		return ioacct_seterr(err, errlen, -EINVAL, "%s: filter too long", text);
	snprintf(inner, sizeof(inner), "%.*s", (int)(close - open - 1), open + 1);
	rest = match_cmp(close + 1, &a->cmp);
	if (!rest || a->cmp == IOACCT_TC_GLOB || a->cmp == IOACCT_TC_NOGLOB)
		return ioacct_seterr(err, errlen, -EINVAL,
				     "%s: expected == != < <= > >= after ')', then a number", text);
	if (parse_num(rest, V_SIZE, &limit))
		return ioacct_seterr(err, errlen, -EINVAL,
				     "%s: '%s' is not a number (K, M, G, T allowed)", text, rest);
	a->limit = (uint64_t)limit;
	if (inner[0]) {
		ret = ioacct_trace_filter_parse(inner, &a->f, err, errlen);
		if (ret) {
			char why[512];

			snprintf(why, sizeof(why), "%s", err);
			return ioacct_seterr(err, errlen, ret, "%s: %s", text, why);
		}
	}
	return 0;
}

void ioacct_trace_assert_add(struct ioacct_trace_assert *a, const struct ioacct_trace_rec *r)
{
	if (!ioacct_trace_filter_match(&a->f, r))
		return;
	a->seen += a->agg == IOACCT_TA_COUNT ? 1 : r->size;
}

bool ioacct_trace_assert_holds(const struct ioacct_trace_assert *a)
{
	/* Both are at most INT64_MAX in practice: seen counts events or bytes. */
	return cmp_num(a->cmp, (int64_t)a->seen, (int64_t)a->limit);
}

void ioacct_trace_assert_free(struct ioacct_trace_assert *a)
{
	ioacct_trace_filter_free(&a->f);
}
