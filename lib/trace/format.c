// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The events as iotrace prints them: operation and errno names, the -p
 * format directives and --json lines.
 */
#include "tracefmt.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <linux/types.h>

#include "ioacct_ops.h"
#include "iotrace_abi.h"
#include "json.h"
#include "util.h"

/* The calls the tracer records: not the page-cache views (kind VIEW), which are no events of its. */
#define OP_NAME_DATA(NAME, name) [IOACCT_OP_##NAME] = #name,
#define OP_NAME_META OP_NAME_DATA
#define OP_NAME_MARK OP_NAME_DATA
#define OP_NAME_VIEW(NAME, name)
#define OP_NAME_(NAME, num, name, kind, ...) OP_NAME_##kind(NAME, name)
static const char *const op_names[IOTRACE_NR_OPS] = {
	IOACCT_OPS(OP_NAME_)
	[IOTRACE_OP_CLOSE] = "close",
};
#undef OP_NAME_
#undef OP_NAME_DATA
#undef OP_NAME_META
#undef OP_NAME_MARK
#undef OP_NAME_VIEW

const char *ioacct_trace_op_name(uint32_t op)
{
	return op < IOTRACE_NR_OPS ? op_names[op] : NULL;
}

int ioacct_trace_op_parse(const char *name, uint32_t *op)
{
	for (uint32_t i = 0; i < IOTRACE_NR_OPS; i++)
		if (op_names[i] && !strcmp(op_names[i], name)) {
			*op = i;
			return 0;
		}
	return -EINVAL;
}

/* The errnos file-system calls return; others print as their number. */
#define E_(name) { name, #name },
static const struct {
	int e;
	const char *name;
} errnos[] = {
	E_(EPERM) E_(ENOENT) E_(ESRCH) E_(EINTR) E_(EIO) E_(ENXIO) E_(E2BIG) E_(EBADF)
	E_(EAGAIN) E_(ENOMEM) E_(EACCES) E_(EFAULT) E_(EBUSY) E_(EEXIST) E_(EXDEV)
	E_(ENODEV) E_(ENOTDIR) E_(EISDIR) E_(EINVAL) E_(ENFILE) E_(EMFILE) E_(ETXTBSY)
	E_(EFBIG) E_(ENOSPC) E_(ESPIPE) E_(EROFS) E_(EMLINK) E_(EPIPE) E_(ERANGE)
	E_(ENAMETOOLONG) E_(ENOSYS) E_(ENOTEMPTY) E_(ELOOP) E_(ENODATA) E_(ENOLINK)
	E_(ECOMM) E_(EBADMSG) E_(EOVERFLOW) E_(EOPNOTSUPP) E_(ETIMEDOUT) E_(ESTALE)
	E_(EUCLEAN) E_(EDQUOT) E_(EREMOTEIO) E_(ECANCELED)
};
#undef E_

const char *ioacct_trace_errno_name(int e)
{
	for (size_t i = 0; i < ARRAY_SIZE(errnos); i++)
		if (errnos[i].e == e)
			return errnos[i].name;
	return NULL;
}

int ioacct_trace_errno_parse(const char *name, int *e)
{
	for (size_t i = 0; i < ARRAY_SIZE(errnos); i++)
		if (!strcmp(errnos[i].name, name)) {
			*e = errnos[i].e;
			return 0;
		}
	return -EINVAL;
}

static const char directives[] = "cptnmfosrTDexibBCQa";

int ioacct_trace_format_check(const char *fmt, char *err, size_t errlen)
{
	for (const char *p = fmt; *p; p++) {
		const char *start = p;

		if (*p != '%')
			continue;
		p++;
		if (*p == '-')
			p++;
		while (isdigit((unsigned char)*p))
			p++;
		if (p - start > 5)
			return ioacct_seterr(err, errlen, -EINVAL, "'%.*s' at column %d: width too large",
					     (int)(p - start), start, (int)(start - fmt) + 1);
		if (*p == '%')
			continue;
		if (!*p || !strchr(directives, *p))
			return ioacct_seterr(err, errlen, -EINVAL,
					     "'%.*s' at column %d: unknown directive (%%c op, %%p pid, "
					     "%%t tid, %%n comm, %%m mount, %%f path, %%o offset, %%s size, "
					     "%%r result, %%T start, %%D duration, %%e end; RPCs: %%x xid, "
					     "%%i file id, %%b bytes sent, %%B received, %%C call, %%Q queue, "
					     "%%a rtt; %%%%)",
					     (int)(p - start) + (*p ? 1 : 0), start, (int)(start - fmt) + 1);
	}
	return 0;
}

/* What %r prints: the return value of a call that worked, the errno's name of one that failed. */
static void result_str(const struct ioacct_trace_rec *r, char *buf, size_t len)
{
	const char *name;

	if (r->ret >= 0) {
		snprintf(buf, len, "%" PRId64, r->ret);
		return;
	}
	name = ioacct_trace_errno_name((int)-r->ret);
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "E%" PRId64, -r->ret);
}

static void print_us(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void print_s(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, ns / 1000000000, ns % 1000000000 / 1000);
}

/* An RPC's own directives; "-" for a call's. */
static void rpc_directive_str(char d, const struct ioacct_trace_rpc *rpc, char *buf, size_t len)
{
	const char *s;

	if (!rpc || (d == 'i' && !rpc->has_file)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (d) {
	case 'x':
		snprintf(buf, len, "0x%08" PRIx32, rpc->xid);
		break;
	case 'i':
		snprintf(buf, len, "%" PRIu64, rpc->fileid);
		break;
	case 'b':
		snprintf(buf, len, "%" PRIu64, rpc->bytes_sent);
		break;
	case 'B':
		snprintf(buf, len, "%" PRIu64, rpc->bytes_recv);
		break;
	case 'C':
		s = rpc->writeback ? "writeback" : ioacct_trace_op_name(rpc->call);
		snprintf(buf, len, "%s", s ? s : "-");
		break;
	case 'Q':
		print_us(buf, len, rpc->queue_ns);
		break;
	case 'a':
		print_us(buf, len, rpc->rtt_ns);
		break;
	default:
		buf[0] = '\0';
	}
}

static void directive_str(char d, const struct ioacct_trace_rec *r, char *buf, size_t len)
{
	const char *s;

	switch (d) {
	case 'c':
		s = r->rpc ? r->rpc->name : ioacct_trace_op_name(r->op);
		snprintf(buf, len, "%s", s && s[0] ? s : "?");
		break;
	case 'p':
		snprintf(buf, len, "%" PRIu32, r->pid);
		break;
	case 't':
		snprintf(buf, len, "%" PRIu32, r->tid);
		break;
	case 'n':
		snprintf(buf, len, "%s", r->comm);
		break;
	case 'm':
		snprintf(buf, len, "%s", r->mount[0] ? r->mount : "-");
		break;
	case 'f':
		snprintf(buf, len, "%s", r->path[0] ? r->path : "-");
		break;
	case 'o':
		if (r->offset < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%" PRId64, r->offset);
		break;
	case 's':
		snprintf(buf, len, "%" PRIu64, r->size);
		break;
	case 'r':
		result_str(r, buf, len);
		break;
	case 'T':
		print_s(buf, len, r->start_ns);
		break;
	case 'e':
		print_s(buf, len, r->start_ns + r->dur_ns);
		break;
	case 'D':
		print_us(buf, len, r->dur_ns);
		break;
	default:
		rpc_directive_str(d, r->rpc, buf, len);
	}
}

void ioacct_trace_format_print(FILE *out, const char *fmt, const struct ioacct_trace_rec *r)
{
	char buf[4096 + 64];

	for (const char *p = fmt; *p; p++) {
		bool left = false;
		int width = 0;

		if (*p != '%') {
			fputc(*p, out);
			continue;
		}
		p++;
		if (*p == '-') {
			left = true;
			p++;
		}
		while (isdigit((unsigned char)*p))
			width = width * 10 + (*p++ - '0');
		if (!*p)
			break;
		if (*p == '%') {
			fputc('%', out);
			continue;
		}
		directive_str(*p, r, buf, sizeof(buf));
		fprintf(out, left ? "%-*s" : "%*s", width, buf);
	}
	fputc('\n', out);
}

/* An RPC's own members, before the submitter's. */
static void json_rpc_head(FILE *out, const struct ioacct_trace_rpc *rpc)
{
	const char *call = ioacct_trace_op_name(rpc->call);

	fputs("{\"rpc\":", out);
	ioacct_json_string(out, rpc->name);
	fprintf(out, ",\"program\":%" PRIu32 ",\"version\":%" PRIu32 ",\"proc\":%" PRIu32
		",\"xid\":%" PRIu32 ",\"call\":", rpc->prog, rpc->vers, rpc->proc, rpc->xid);
	if (call)
		ioacct_json_string(out, call);
	else
		fputs("null", out);
	fprintf(out, ",\"writeback\":%s", rpc->writeback ? "true" : "false");
	if (rpc->has_file)
		fprintf(out, ",\"fileid\":%" PRIu64 ",\"count\":%" PRIu64, rpc->fileid, rpc->count);
	else
		fputs(",\"fileid\":null,\"count\":null", out);
	fprintf(out, ",\"bytes_sent\":%" PRIu64 ",\"bytes_recv\":%" PRIu64 ",\"queue_ns\":%" PRIu64
		",\"rtt_ns\":%" PRIu64 ",\"execute_ns\":%" PRIu64 ",\"retrans\":%" PRIu32,
		rpc->bytes_sent, rpc->bytes_recv, rpc->queue_ns, rpc->rtt_ns, rpc->execute_ns,
		rpc->retrans);
}

void ioacct_trace_json_print(FILE *out, const struct ioacct_trace_rec *r)
{
	const char *op = ioacct_trace_op_name(r->op);
	char res[32];

	if (r->rpc) {
		json_rpc_head(out, r->rpc);
	} else {
		fputs("{\"op\":", out);
		ioacct_json_string(out, op ? op : "?");
	}
	fprintf(out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"comm\":", r->pid, r->tid);
	ioacct_json_string(out, r->comm);
	if (r->mnt_id)
		fprintf(out, ",\"mnt_id\":%" PRIu32, r->mnt_id);
	else
		fputs(",\"mnt_id\":null", out);
	fputs(",\"mount\":", out);
	if (r->mount[0])
		ioacct_json_string(out, r->mount);
	else
		fputs("null", out);
	fputs(",\"path\":", out);
	if (r->path[0])
		ioacct_json_string(out, r->path);
	else
		fputs("null", out);
	if (r->offset < 0)
		fputs(",\"offset\":null", out);
	else
		fprintf(out, ",\"offset\":%" PRId64, r->offset);
	fprintf(out, ",\"size\":%" PRIu64 ",\"%s\":%" PRId64 ",\"errno\":", r->size,
		r->rpc ? "status" : "result", r->ret);
	if (r->ret < 0) {
		result_str(r, res, sizeof(res));
		ioacct_json_string(out, res);
	} else {
		fputs("null", out);
	}
	fprintf(out, ",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 "}\n", r->start_ns,
		r->dur_ns);
}
