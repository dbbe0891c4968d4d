/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioacct's fields, time formats, rows and output (see query.h).
 */
#include "query.h"
#include "json.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NS_PER_S 1000000000LL

#define F(id, name, width, kind, flags, help) \
	[IOACCT_QF_##id] = { name, width, IOACCT_QK_##kind, flags, help }
#define PER_MOUNT IOACCT_QF_PER_MOUNT
#define BYTES IOACCT_QF_BYTES
#define PEAK IOACCT_QF_PEAK
#define JOB_ONLY IOACCT_QF_JOB_ONLY

static const struct ioacct_qfield_info fields[IOACCT_QF_COUNT] = {
	F(JOBID, "JobID", -12, TEXT, 0,
	  "job id; steps as ID.batch, ID.extern, ID.N; array tasks as ARRAYID_TASKID"),
	F(JOBIDRAW, "JobIDRaw", -12, TEXT, 0, "job id as Slurm numbers it, steps as ID.STEP"),
	F(CLUSTER, "Cluster", -10, TEXT, 0, "cluster name; iorun for jobs run by iorun"),
	F(JOBNAME, "JobName", -10, TEXT, JOB_ONLY, "job name (for iorun, the command)"),
	F(USER, "User", -9, TEXT, JOB_ONLY, "user name"),
	F(UID, "UID", 6, INT, JOB_ONLY, "user id"),
	F(GID, "GID", 6, INT, JOB_ONLY, "group id"),
	F(NODE, "Node", -10, TEXT, IOACCT_QF_PER_NODE,
	  "node whose daemon counted the job; from a cluster store, one row per node"),
	F(NODELIST, "NodeList", -15, TEXT, 0,
	  "the job's nodes (from a cluster store, all of them, summed over; else this node)"),
	F(SOURCE, "Source", -6, TEXT, JOB_ONLY, "who registered the job: slurm or iorun"),
	F(WORKDIR, "WorkDir", -20, TEXT, JOB_ONLY, "working directory"),
	F(START, "Start", 19, TEXT, 0, "start time"),
	F(END, "End", 19, TEXT, 0, "end time; Unknown while running"),
	F(ELAPSED, "Elapsed", 10, TEXT, 0, "run time, [D-]HH:MM:SS; so far while running"),
	F(STATE, "State", -10, TEXT, 0, "RUNNING, COMPLETED, FAILED, CANCELLED, ..."),
	F(EXITCODE, "ExitCode", 8, INT, 0, "exit code; 128+N for a command killed by signal N"),
	F(RESTARTS, "Restarts", 8, INT, JOB_ONLY,
	  "the run: times the job was requeued before it (Slurm's restart count); -D lists every run"),
	F(STEP, "Step", -11, TEXT, 0, "step: batch, extern, interactive or a number; blank for the job"),
	F(MOUNT, "Mount", -20, TEXT, PER_MOUNT,
	  "mount point as the job saw it (mnt:N when it could not be named)"),
	F(FSTYPE, "FSType", -10, TEXT, PER_MOUNT, "file-system type of the mount"),
	F(MOUNTSOURCE, "MountSource", -20, TEXT, PER_MOUNT,
	  "what is mounted there: device, server:/export, ..."),
	F(READBYTES, "ReadBytes", 12, INT, BYTES, "bytes read"),
	F(WRITEBYTES, "WriteBytes", 12, INT, BYTES, "bytes written"),
#define OP(NAME, num, name, kind, darshan, report, title, width, help) \
	F(NAME##S, title, width, INT, 0, help),
	IOACCT_OPS(OP)
#undef OP
	F(ERRORS, "Errors", 7, INT, 0, "calls of any kind that failed"),
	F(REALERRORS, "RealErrors", 10, INT, 0,
	  "failed calls but lookups that found nothing: permission, space, I/O, ..."),
	F(NOTFOUND, "NotFound", 9, INT, 0,
	  "lookups that found nothing (ENOENT, ENOTDIR): failed calls, not errors"),
	F(READTIME, "ReadTime", 12, REAL, 0, "seconds spent in reads"),
	F(WRITETIME, "WriteTime", 12, REAL, 0, "seconds spent in writes"),
	F(METATIME, "MetaTime", 12, REAL, 0,
	  "seconds spent in every other call: open, stat, fsync, unlink, ..."),
	F(AVEREADBW, "AveReadBW", 12, INT, BYTES, "bytes read per second of Elapsed"),
	F(AVEWRITEBW, "AveWriteBW", 12, INT, BYTES, "bytes written per second of Elapsed"),
	F(MAXREADBW, "MaxReadBW", 12, INT, BYTES | PEAK,
	  "bytes read per second in the busiest time bin"),
	F(MAXWRITEBW, "MaxWriteBW", 12, INT, BYTES | PEAK,
	  "bytes written per second in the busiest time bin"),
	F(AVEREADIOPS, "AveReadIOPS", 11, REAL, 0, "reads per second of Elapsed"),
	F(AVEWRITEIOPS, "AveWriteIOPS", 12, REAL, 0, "writes per second of Elapsed"),
	F(DROPPED, "Dropped", 8, INT, JOB_ONLY,
	  "events not counted because the kernel's map was full"),
	F(DROPPEDBYTES, "DroppedBytes", 12, INT, BYTES | JOB_ONLY, "bytes of the dropped events"),
	F(PROBEMODE, "ProbeMode", -10, TEXT, 0, "probe backend that counted the job"),
	F(BINWIDTH, "BinWidth", 8, REAL, 0, "width of the job's time bins, seconds"),
	F(VIEWS, "Views", -20, TEXT, 0,
	  "page-cache views active for the job: cache, mmap, readahead; none"),
	F(MMAPREADBYTES, "MmapReadBytes", 13, INT, BYTES,
	  "bytes of file pages faulted into the job's mappings (fault-around: at most)"),
	F(CACHEMISSBYTES, "CacheMissBytes", 14, INT, BYTES,
	  "bytes the job's reads and faults brought in from storage"),
	F(READAHEADBYTES, "ReadaheadBytes", 14, INT, BYTES,
	  "of the misses, bytes brought in outside the range a read or fault asked for"),
	F(HITRATIO, "HitRatio", 8, REAL, 0,
	  "page-cache hit ratio: 1 - CacheMissBytes / (ReadBytes + MmapReadBytes)"),
	F(RPCCALLS, "RPCCalls", 9, INT, 0,
	  "RPCs the job sent to file servers (NFS), as mountstats counts them; blank: not read"),
	F(RPCBYTESSENT, "RPCBytesSent", 12, INT, BYTES,
	  "bytes the job's RPCs sent, their headers included"),
	F(RPCBYTESRECV, "RPCBytesRecv", 12, INT, BYTES, "bytes of their replies received"),
};

#undef F
#undef PER_MOUNT
#undef BYTES
#undef PEAK
#undef JOB_ONLY

/* The one error helper (util.h), under this file's own name: every error here is -EINVAL. */
#define set_err(err, errlen, ...) ioacct_seterr(err, errlen, -EINVAL, __VA_ARGS__)

/* ---- fields and formats ---- */

const struct ioacct_qfield_info *ioacct_query_field(enum ioacct_qfield f)
{
	return (unsigned int)f < IOACCT_QF_COUNT ? &fields[f] : NULL;
}

int ioacct_query_field_find(const char *name)
{
	for (int i = 0; i < IOACCT_QF_COUNT; i++)
		if (strcasecmp(fields[i].name, name) == 0)
			return i;
	return -1;
}

static void field_names(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < IOACCT_QF_COUNT && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", fields[i].name);
}

static int cols_add(struct ioacct_qcol **cols, size_t *ncols, enum ioacct_qfield f, int width,
		    bool left)
{
	struct ioacct_qcol *c = reallocarray(*cols, *ncols + 1, sizeof(**cols));

	if (!c)
		return -ENOMEM;
	c[*ncols] = (struct ioacct_qcol){ .field = f, .width = width, .left = left };
	*cols = c;
	(*ncols)++;
	return 0;
}

/* "%N" or "%-N" after a field name; 0 with *width 0 when there is none. */
static int parse_width(const char *s, int *width, bool *left, char *err, size_t errlen)
{
	const char *p = s;
	char *end;
	long v;

	*width = 0;
	*left = false;
	if (!*p)
		return 0;
	p++; /* the '%' */
	if (*p == '-') {
		*left = true;
		p++;
	}
	if (!isdigit((unsigned char)*p))
		return set_err(err, errlen, "bad width '%s': expected %%N or %%-N", s);
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || *end || v < 1 || v > IOACCT_QUERY_MAX_WIDTH)
		return set_err(err, errlen, "bad width '%s': expected %%N or %%-N, N from 1 to %d", s,
			       IOACCT_QUERY_MAX_WIDTH);
	*width = (int)v;
	return 0;
}

static int format_item(char *item, struct ioacct_qcol **cols, size_t *ncols, char *err,
		       size_t errlen)
{
	char *pct = strchr(item, '%'), names[1024];
	bool left;
	int f, width, ret;

	ret = parse_width(pct ? pct : "", &width, &left, err, errlen);
	if (ret)
		return ret;
	if (pct)
		*pct = '\0';
	if (strcasecmp(item, "ALL") == 0) {
		for (int i = 0; i < IOACCT_QF_COUNT; i++) {
			ret = cols_add(cols, ncols, (enum ioacct_qfield)i,
				       width ? width : abs(fields[i].width),
				       width ? left : fields[i].width < 0);
			if (ret)
				return ret;
		}
		return 0;
	}
	f = ioacct_query_field_find(item);
	if (f < 0) {
		field_names(names, sizeof(names));
		return set_err(err, errlen, "unknown field '%s'; valid fields: %s", item, names);
	}
	return cols_add(cols, ncols, (enum ioacct_qfield)f, width ? width : abs(fields[f].width),
			width ? left : fields[f].width < 0);
}

int ioacct_query_format_parse(const char *spec, struct ioacct_qcol **cols, size_t *ncols,
			      char *err, size_t errlen)
{
	char *copy = strdup(spec), *save = NULL, *item;
	size_t before = *ncols;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ",", &save); item && !ret; item = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*item))
			item++;
		for (char *e = item + strlen(item); e > item && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (*item)
			ret = format_item(item, cols, ncols, err, errlen);
	}
	free(copy);
	if (!ret && *ncols == before)
		ret = set_err(err, errlen, "no field in format '%s'", spec);
	if (ret == -ENOMEM)
		set_err(err, errlen, "out of memory");
	return ret;
}

void ioacct_query_fields_help(FILE *f)
{
	for (int i = 0; i < IOACCT_QF_COUNT; i++)
		fprintf(f, "%-13s %s%s\n", fields[i].name, fields[i].help,
			fields[i].flags & IOACCT_QF_PER_MOUNT ? " (one row per mount)" : "");
}

/* ---- times ---- */

static const struct {
	const char *name;
	long mult;
} time_units[] = {
	{ "seconds", 1 }, { "second", 1 }, { "minutes", 60 }, { "minute", 60 },
	{ "hours", 3600 }, { "hour", 3600 }, { "days", 86400 }, { "day", 86400 },
	{ "weeks", 604800 }, { "week", 604800 },
};

__attribute__((format(printf, 4, 5)))
static int time_err(char *err, size_t errlen, const char *s, const char *why, ...)
{
	char reason[128];
	va_list ap;

	va_start(ap, why);
	vsnprintf(reason, sizeof(reason), why, ap);
	va_end(ap);
	return set_err(err, errlen, "invalid time '%s' (%s); accepted forms: %s", s, reason,
		       IOACCT_QUERY_TIME_FORMS);
}

/* Exactly `n` digits at *p, advancing it. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return true;
}

/* One or two digits at *p. */
static bool digits12(const char **p, int *v)
{
	if (!isdigit((unsigned char)**p))
		return false;
	return digits(p, isdigit((unsigned char)(*p)[1]) ? 2 : 1, v);
}

/* HH:MM[:SS] at *p; the rest of the string must be empty. */
static bool clock_part(const char *p, int *h, int *m, int *sec)
{
	*sec = 0;
	if (!digits12(&p, h) || *p++ != ':' || !digits(&p, 2, m))
		return false;
	if (*p == ':' && (p++, !digits(&p, 2, sec)))
		return false;
	return *p == '\0';
}

static time_t midnight_of(const struct tm *day)
{
	struct tm t = *day;

	t.tm_hour = t.tm_min = t.tm_sec = 0;
	t.tm_isdst = -1;
	return mktime(&t);
}

time_t ioacct_query_midnight(time_t t)
{
	struct tm tm;

	localtime_r(&t, &tm);
	return midnight_of(&tm);
}

/* now[{+|-}N[unit]] */
static int parse_now(const char *s, time_t now, time_t *out, char *err, size_t errlen)
{
	const char *p = s + 3;
	long long n = 0, mult = 1;
	int sign;

	if (!*p) {
		*out = now;
		return 0;
	}
	if (*p != '+' && *p != '-')
		return time_err(err, errlen, s, "expected + or - after now");
	sign = *p++ == '-' ? -1 : 1;
	if (!isdigit((unsigned char)*p))
		return time_err(err, errlen, s, "expected a number after now%c", sign < 0 ? '-' : '+');
	while (isdigit((unsigned char)*p)) {
		n = n * 10 + (*p++ - '0');
		if (n > 100LL * 366 * 86400)
			return time_err(err, errlen, s, "too far from now");
	}
	if (*p) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(time_units); i++)
			if (strcasecmp(p, time_units[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(time_units))
			return time_err(err, errlen, s, "unknown unit '%s'", p);
		mult = time_units[i].mult;
	}
	if (n * mult > 100LL * 366 * 86400)
		return time_err(err, errlen, s, "too far from now");
	*out = now + (time_t)(sign * n * mult);
	return 0;
}

/* The date and time in tm, checked by a round trip through mktime(). */
static int make_time(const char *s, int year, int mon, int mday, int h, int m, int sec,
		     time_t *out, char *err, size_t errlen)
{
	struct tm tm = { 0 };
	time_t t;

	if (mon < 1 || mon > 12)
		return time_err(err, errlen, s, "no month %d", mon);
	if (h > 23 || m > 59 || sec > 59)
		return time_err(err, errlen, s, "no time %02d:%02d:%02d", h, m, sec);
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = mday;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	/* mktime() moves Feb 30 to March: a changed day means there is no such day. */
	if (t == (time_t)-1 || mday < 1 || tm.tm_mday != mday || tm.tm_mon != mon - 1)
		return time_err(err, errlen, s, "no day %d-%02d-%02d", year, mon, mday);
	*out = t;
	return 0;
}

/* YYYY-MM-DD[THH:MM[:SS]] */
static int parse_iso(const char *s, time_t *out, char *err, size_t errlen)
{
	const char *p = s;
	int y, mon, d, h = 0, m = 0, sec = 0;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits12(&p, &mon) || *p++ != '-' ||
	    !digits12(&p, &d))
		return time_err(err, errlen, s, "expected YYYY-MM-DD");
	if (*p == 'T' || *p == 't') {
		if (!clock_part(p + 1, &h, &m, &sec))
			return time_err(err, errlen, s, "expected HH:MM[:SS] after T");
	} else if (*p) {
		return time_err(err, errlen, s, "unexpected '%s' after the date", p);
	}
	return make_time(s, y, mon, d, h, m, sec, out, err, errlen);
}

/*
 * MMDD[YY], MM/DD[/YY][-HH:MM[:SS]]. Without a year: this year, or last
 * year when the month is still to come (sacct's rule for -S and -E).
 */
static int parse_mdy(const char *s, const struct tm *now, time_t *out, char *err, size_t errlen)
{
	const char *p = s;
	int mon, d, yy = -1, h = 0, m = 0, sec = 0, year;

	if (strchr(s, '/')) {
		if (!digits12(&p, &mon) || *p++ != '/' || !digits12(&p, &d))
			return time_err(err, errlen, s, "expected MM/DD[/YY]");
		if (*p == '/' && (p++, !digits(&p, 2, &yy)))
			return time_err(err, errlen, s, "expected a two-digit year after MM/DD/");
		if (*p == '-') {
			if (!clock_part(p + 1, &h, &m, &sec))
				return time_err(err, errlen, s, "expected HH:MM[:SS] after the date");
		} else if (*p) {
			return time_err(err, errlen, s, "unexpected '%s' after the date", p);
		}
	} else {
		size_t n = strlen(s);

		if ((n != 4 && n != 6) || !digits(&p, 2, &mon) || !digits(&p, 2, &d) ||
		    (n == 6 && !digits(&p, 2, &yy)))
			return time_err(err, errlen, s, "expected MMDD or MMDDYY");
	}
	if (yy >= 0)
		year = 2000 + yy;
	else
		year = now->tm_year + 1900 - (mon - 1 > now->tm_mon ? 1 : 0);
	return make_time(s, year, mon, d, h, m, sec, out, err, errlen);
}

int ioacct_query_time_parse(const char *s, time_t now, time_t *out, char *err, size_t errlen)
{
	struct tm tm_now;
	int h, m, sec;

	if (!s || !*s)
		return time_err(err, errlen, s ? s : "", "empty");
	localtime_r(&now, &tm_now);
	if (strcasecmp(s, "today") == 0 || strcasecmp(s, "midnight") == 0) {
		*out = midnight_of(&tm_now);
		return 0;
	}
	if (strcasecmp(s, "noon") == 0) {
		tm_now.tm_hour = 12;
		tm_now.tm_min = tm_now.tm_sec = 0;
		tm_now.tm_isdst = -1;
		*out = mktime(&tm_now);
		return 0;
	}
	if (strcasecmp(s, "tomorrow") == 0) {
		tm_now.tm_mday++;
		*out = midnight_of(&tm_now);
		return 0;
	}
	if (strncasecmp(s, "now", 3) == 0)
		return parse_now(s, now, out, err, errlen);
	if (!isdigit((unsigned char)*s))
		return time_err(err, errlen, s, "not a date or time");
	if (clock_part(s, &h, &m, &sec))
		return make_time(s, tm_now.tm_year + 1900, tm_now.tm_mon + 1, tm_now.tm_mday, h, m,
				 sec, out, err, errlen);
	if (strlen(s) >= 5 && s[4] == '-')
		return parse_iso(s, out, err, errlen);
	if (strchr(s, ':') && !strchr(s, '/'))
		return time_err(err, errlen, s, "expected HH:MM[:SS]");
	return parse_mdy(s, &tm_now, out, err, errlen);
}

/* ---- lists ---- */

int ioacct_query_jobs_parse(const char *s, struct ioacct_qjobsel **sel, size_t *n, char *err,
			    size_t errlen)
{
	char **items = NULL, *dot, *end;
	size_t nitems = 0;
	struct ioacct_qjobsel *tmp;
	int ret;

	ret = ioacct_query_list_split(s, &items, &nitems);
	if (ret) {
		set_err(err, errlen, "out of memory");
		goto out;
	}
	if (nitems == 0)
		ret = set_err(err, errlen, "no job id in '%s'", s);
	for (size_t i = 0; i < nitems && !ret; i++) {
		struct ioacct_qjobsel js = { .step_id = IOACCT_QUERY_ALL };

		dot = strchr(items[i], '.');
		if (dot)
			*dot = '\0';
		errno = 0;
		js.job_id = strtoull(items[i], &end, 10);
		if (!isdigit((unsigned char)items[i][0]) || *end || errno) {
			ret = set_err(err, errlen,
				      "bad job id '%s': expected JOB or JOB.STEP, STEP being batch, extern, interactive or a number",
				      items[i]);
			break;
		}
		if (dot && ioacct_step_parse(dot + 1, &js.step_id)) {
			ret = set_err(err, errlen,
				      "bad step '%s' of job %s: expected batch, extern, interactive or a number",
				      dot + 1, items[i]);
			break;
		}
		tmp = reallocarray(*sel, *n + 1, sizeof(**sel));
		if (!tmp) {
			set_err(err, errlen, "out of memory");
			ret = -ENOMEM;
			break;
		}
		tmp[*n] = js;
		*sel = tmp;
		(*n)++;
	}
out:
	ioacct_query_list_free(items, nitems);
	return ret;
}

int ioacct_query_list_split(const char *s, char ***items, size_t *n)
{
	const char *p = s;

	while (*p) {
		const char *start, *end;
		char **tmp, *item;

		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		start = p;
		while (*p && *p != ',')
			p++;
		end = p;
		while (end > start && isspace((unsigned char)end[-1]))
			end--;
		if (end == start)
			continue;
		item = strndup(start, (size_t)(end - start));
		tmp = item ? reallocarray(*items, *n + 1, sizeof(**items)) : NULL;
		if (!tmp) {
			free(item);
			return -ENOMEM;
		}
		tmp[*n] = item;
		*items = tmp;
		(*n)++;
	}
	return 0;
}

void ioacct_query_list_free(char **items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

int ioacct_query_u64_list(const char *s, uint64_t **out, size_t *n)
{
	char **items = NULL, *end;
	size_t nitems = 0;
	uint64_t *v = NULL;
	int ret;

	*out = NULL;
	*n = 0;
	ret = ioacct_query_list_split(s, &items, &nitems);
	if (!ret && nitems) {
		v = calloc(nitems, sizeof(*v));
		if (!v)
			ret = -ENOMEM;
	}
	for (size_t i = 0; i < nitems && !ret; i++) {
		errno = 0;
		v[i] = strtoull(items[i], &end, 10);
		if (!isdigit((unsigned char)items[i][0]) || *end || errno)
			ret = -EINVAL;
	}
	ioacct_query_list_free(items, nitems);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = nitems;
	return 0;
}

int ioacct_query_units_parse(const char *s, unsigned int *units)
{
	const char *p;

	if (!s || strlen(s) != 1 || !(p = strchr("KMGTP", toupper((unsigned char)*s))))
		return -EINVAL;
	*units = (unsigned int)(p - "KMGTP") + 1;
	return 0;
}

/* ---- peaks ---- */

struct bin_sum {
	uint32_t step_id;
	uint32_t bin;
	uint64_t mnt_id;
	uint64_t read;
	uint64_t write;
};

static int bin_sum_cmp(const void *a, const void *b)
{
	const struct bin_sum *x = a, *y = b;

	if (x->step_id != y->step_id)
		return x->step_id < y->step_id ? -1 : 1;
	if (x->mnt_id != y->mnt_id)
		return x->mnt_id < y->mnt_id ? -1 : 1;
	if (x->bin != y->bin)
		return x->bin < y->bin ? -1 : 1;
	return 0;
}

int ioacct_query_peaks(const struct ioacct_sample *series, size_t n, struct ioacct_qpeak **out,
		       size_t *nout)
{
	struct bin_sum *b;
	struct ioacct_qpeak *pk = NULL;
	size_t nb = 0, np = 0;

	*out = NULL;
	*nout = 0;
	if (n == 0)
		return 0;
	if (n > SIZE_MAX / 4 / sizeof(*b))
		return -ENOMEM;
	/* Each read or write bin counts at four levels: (step, mount), (step, *), (*, mount), (*, *). */
	b = calloc(4 * n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ioacct_sample *s = &series[i];

		if (s->op != IOACCT_OP_READ && s->op != IOACCT_OP_WRITE)
			continue;
		for (int level = 0; level < 4; level++) {
			struct bin_sum *e = &b[nb++];

			e->step_id = level & 1 ? IOACCT_QUERY_ALL : s->step_id;
			e->mnt_id = level & 2 ? IOACCT_MNT_ANY : s->mnt_id;
			e->bin = s->bin;
			if (s->op == IOACCT_OP_READ)
				e->read = s->c.bytes;
			else
				e->write = s->c.bytes;
		}
	}
	qsort(b, nb, sizeof(*b), bin_sum_cmp);
	if (nb)
		pk = calloc(nb, sizeof(*pk));
	if (nb && !pk) {
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nb;) {
		uint64_t r = 0, w = 0;
		size_t j = i;

		/* One bin of one (step, mount): sum it. */
		while (j < nb && bin_sum_cmp(&b[i], &b[j]) == 0) {
			r += b[j].read;
			w += b[j].write;
			j++;
		}
		if (np == 0 || pk[np - 1].step_id != b[i].step_id || pk[np - 1].mnt_id != b[i].mnt_id)
			pk[np++] = (struct ioacct_qpeak){ .step_id = b[i].step_id,
							  .mnt_id = b[i].mnt_id };
		if (r > pk[np - 1].read_bytes)
			pk[np - 1].read_bytes = r;
		if (w > pk[np - 1].write_bytes)
			pk[np - 1].write_bytes = w;
		i = j;
	}
	free(b);
	if (np == 0) {
		free(pk);
		pk = NULL;
	}
	*out = pk;
	*nout = np;
	return 0;
}

/* ---- rows ---- */

/* sacct's order: batch, extern, interactive, then the numbered steps. */
static int step_rank(uint32_t id)
{
	switch (id) {
	case IOACCT_STEP_BATCH:
		return 0;
	case IOACCT_STEP_EXTERN:
		return 1;
	case IOACCT_STEP_INTERACTIVE:
		return 2;
	default:
		return 3;
	}
}

static int step_cmp(const void *a, const void *b)
{
	const struct ioacct_step *x = *(const struct ioacct_step *const *)a;
	const struct ioacct_step *y = *(const struct ioacct_step *const *)b;

	if (step_rank(x->step_id) != step_rank(y->step_id))
		return step_rank(x->step_id) - step_rank(y->step_id);
	return x->step_id < y->step_id ? -1 : x->step_id > y->step_id;
}

struct mnt_ref {
	uint64_t mnt_id;
	const struct ioacct_mount *m;
	char name[32]; /* mnt:N when m is NULL */
};

static const char *mnt_ref_path(const struct mnt_ref *r)
{
	return r->m ? r->m->path : r->name;
}

static int mnt_ref_cmp(const void *a, const void *b)
{
	const struct mnt_ref *x = a, *y = b;
	int c = strcmp(mnt_ref_path(x), mnt_ref_path(y));

	if (c)
		return c;
	return x->mnt_id < y->mnt_id ? -1 : x->mnt_id > y->mnt_id;
}

/* The distinct mounts of the totals, ordered by path. */
static int job_mounts(const struct ioacct_jobdata *jd, struct mnt_ref **out, size_t *n)
{
	struct mnt_ref *r = calloc(jd->ntotals ? jd->ntotals : 1, sizeof(*r));
	size_t cnt = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < jd->ntotals; i++) {
		uint64_t id = jd->totals[i].mnt_id;
		size_t k;

		for (k = 0; k < cnt && r[k].mnt_id != id; k++)
			;
		if (k < cnt)
			continue;
		r[cnt].mnt_id = id;
		for (size_t m = 0; m < jd->nmounts && !r[cnt].m; m++)
			if (jd->mounts[m].mnt_id == id)
				r[cnt].m = &jd->mounts[m];
		snprintf(r[cnt].name, sizeof(r[cnt].name), "mnt:%" PRIu64, id);
		cnt++;
	}
	qsort(r, cnt, sizeof(*r), mnt_ref_cmp);
	*out = r;
	*n = cnt;
	return 0;
}

struct rows {
	struct ioacct_qrow *r;
	size_t n;
	size_t cap;
};

static const struct ioacct_qpeak *peak_find(const struct ioacct_qpeak *p, size_t n,
					    uint32_t step_id, uint64_t mnt_id)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].step_id == step_id && p[i].mnt_id == mnt_id)
			return &p[i];
	return NULL;
}

/* Appends the row of (step or all, mount or all); with `skip_idle`, only if it saw I/O. */
static int row_add(struct rows *rs, const struct ioacct_jobdata *jd, const struct ioacct_step *step,
		   const struct mnt_ref *mnt, const struct ioacct_qpeak *peaks, size_t npeaks,
		   bool with_peaks, bool skip_idle)
{
	uint32_t sid = step ? step->step_id : IOACCT_QUERY_ALL;
	uint64_t mid = mnt ? mnt->mnt_id : IOACCT_MNT_ANY;
	const struct ioacct_qpeak *pk;
	struct ioacct_qrow *row;
	bool idle = true;

	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 8;
		struct ioacct_qrow *tmp = reallocarray(rs->r, cap, sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		rs->r = tmp;
		rs->cap = cap;
	}
	row = &rs->r[rs->n];
	memset(row, 0, sizeof(*row));
	row->job = &jd->job;
	row->step = step;
	row->per_mount = mnt != NULL;
	row->mnt_id = mid;
	row->mount = mnt ? mnt->m : NULL;
	for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++) {
		ioacct_samples_sum(jd->totals, jd->ntotals, sid, mid, op, &row->op[op]);
		/* fadvise and madvise alone do not make a mount's row (madvise has no mount: 0). */
		if (mnt && (op == IOACCT_OP_FADVISE || op == IOACCT_OP_MADVISE))
			continue;
		idle &= row->op[op].calls == 0 && row->op[op].errors == 0 && row->op[op].bytes == 0;
	}
	if (skip_idle && idle)
		return 0;
	row->rpc_read = jd->rpc_loaded;
	for (size_t i = 0; i < jd->nrpc; i++) {
		const struct ioacct_rpc *x = &jd->rpc[i];

		if ((x->flags & IOACCT_RPC_UNATTRIBUTED) || (step && x->step_id != sid) ||
		    (mnt && x->mnt_id != mid))
			continue;
		row->rpc_calls += x->calls;
		row->rpc_bytes_sent += x->bytes_sent;
		row->rpc_bytes_recv += x->bytes_recv;
	}
	if (with_peaks) {
		pk = peak_find(peaks, npeaks, sid, mid);
		row->has_peak = true;
		row->peak_read = pk ? pk->read_bytes : 0;
		row->peak_write = pk ? pk->write_bytes : 0;
	}
	rs->n++;
	return 0;
}

/* The rows of the job (step NULL) or of one step: one, or one per mount with I/O. */
static int rows_of(struct rows *rs, const struct ioacct_jobdata *jd, const struct ioacct_step *step,
		   const struct mnt_ref *mnts, size_t nmnts, const struct ioacct_qpeak *peaks,
		   size_t npeaks, const struct ioacct_qrow_opts *o)
{
	size_t before = rs->n;
	int ret;

	if (o->per_mount) {
		for (size_t i = 0; i < nmnts; i++) {
			ret = row_add(rs, jd, step, &mnts[i], peaks, npeaks, o->with_peaks, true);
			if (ret)
				return ret;
		}
		if (rs->n > before)
			return 0;
	}
	return row_add(rs, jd, step, NULL, peaks, npeaks, o->with_peaks, false);
}

static bool step_wanted(const struct ioacct_qrow_opts *o, uint32_t step_id)
{
	if (!o->steps)
		return true;
	for (size_t i = 0; i < o->nsteps; i++)
		if (o->steps[i] == step_id)
			return true;
	return false;
}

int ioacct_query_rows(const struct ioacct_jobdata *jd, const struct ioacct_qpeak *peaks,
		      size_t npeaks, const struct ioacct_qrow_opts *o, struct ioacct_qrow **out,
		      size_t *n)
{
	const struct ioacct_step **steps = NULL;
	struct mnt_ref *mnts = NULL;
	struct rows rs = { 0 };
	size_t nmnts = 0;
	int ret;

	ret = job_mounts(jd, &mnts, &nmnts);
	if (ret)
		return ret;
	if (!o->steps)
		ret = rows_of(&rs, jd, NULL, mnts, nmnts, peaks, npeaks, o);
	if (!ret && !o->no_steps && jd->nsteps) {
		steps = calloc(jd->nsteps, sizeof(*steps));
		if (!steps)
			ret = -ENOMEM;
		for (size_t i = 0; !ret && i < jd->nsteps; i++)
			steps[i] = &jd->steps[i];
		if (!ret)
			qsort(steps, jd->nsteps, sizeof(*steps), step_cmp);
		for (size_t i = 0; !ret && i < jd->nsteps; i++)
			if (step_wanted(o, steps[i]->step_id))
				ret = rows_of(&rs, jd, steps[i], mnts, nmnts, peaks, npeaks, o);
	}
	free(steps);
	free(mnts);
	if (ret) {
		free(rs.r);
		return ret;
	}
	*out = rs.r;
	*n = rs.n;
	return 0;
}

/* ---- values ---- */

static bool put(char *buf, size_t len, bool absent, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool put(char *buf, size_t len, bool absent, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return absent;
}

static bool put_time(char *buf, size_t len, int64_t ns)
{
	struct tm tm;
	time_t t;

	if (ns <= 0)
		return put(buf, len, true, "Unknown");
	t = (time_t)(ns / NS_PER_S);
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm))
		return put(buf, len, true, "Unknown");
	return false;
}

/* sacct's [D-]HH:MM:SS. */
static bool put_elapsed(char *buf, size_t len, int64_t ns)
{
	int64_t s = ns > 0 ? ns / NS_PER_S : 0;

	if (s >= 86400)
		return put(buf, len, false, "%" PRId64 "-%02d:%02d:%02d", s / 86400,
			   (int)(s % 86400 / 3600), (int)(s % 3600 / 60), (int)(s % 60));
	return put(buf, len, false, "%02d:%02d:%02d", (int)(s / 3600), (int)(s % 3600 / 60),
		   (int)(s % 60));
}

static bool put_bytes(char *buf, size_t len, double v, unsigned int units)
{
	if (units == 0)
		return put(buf, len, false, "%.0f", v);
	for (unsigned int i = 0; i < units; i++)
		v /= 1024;
	return put(buf, len, false, "%.2f%c", v, "KMGTP"[units - 1]);
}

static bool put_u64_bytes(char *buf, size_t len, uint64_t v, unsigned int units)
{
	if (units == 0)
		return put(buf, len, false, "%" PRIu64, v);
	return put_bytes(buf, len, (double)v, units);
}

static int64_t row_start(const struct ioacct_qrow *r)
{
	return r->step ? r->step->start_ns : r->job->start_ns;
}

/* 0 while running. A step that never got its end has the job's, as in sacct. */
static int64_t row_end(const struct ioacct_qrow *r)
{
	if (r->step && r->step->end_ns)
		return r->step->end_ns;
	return r->job->end_ns;
}

static int64_t row_elapsed(const struct ioacct_qrow *r, int64_t now_ns)
{
	int64_t end = row_end(r) ? row_end(r) : now_ns;

	return end > row_start(r) ? end - row_start(r) : 0;
}

static bool put_rate(char *buf, size_t len, uint64_t v, int64_t elapsed_ns, bool bytes,
		     unsigned int units)
{
	double rate;

	if (elapsed_ns <= 0)
		return put(buf, len, true, "%s", "");
	rate = (double)v * 1e9 / (double)elapsed_ns;
	if (bytes)
		return put_bytes(buf, len, rate, units);
	return put(buf, len, false, "%.2f", rate);
}

static bool put_peak(char *buf, size_t len, const struct ioacct_qrow *r, uint64_t v,
		     unsigned int units)
{
	if (!r->has_peak || r->job->bin_width_ns == 0)
		return put(buf, len, true, "%s", "");
	return put_bytes(buf, len, (double)v * 1e9 / (double)r->job->bin_width_ns, units);
}

static void job_id_text(const struct ioacct_qrow *r, bool raw, char *buf, size_t len)
{
	char step[16];
	int n;

	if (!raw && r->job->has_array)
		n = snprintf(buf, len, "%" PRIu32 "_%" PRIu32, r->job->array_job_id,
			     r->job->array_task_id);
	else
		n = snprintf(buf, len, "%" PRIu64, r->job->job_id);
	if (r->step && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ".%s",
			 ioacct_step_name(r->step->step_id, step, sizeof(step)));
}

/* READTIME, WRITETIME or METATIME (every operation that moves no data) of a row, in ns. */
static uint64_t row_time_ns(const struct ioacct_qrow *r, enum ioacct_qfield f)
{
	uint64_t ns = 0;

	if (f == IOACCT_QF_READTIME)
		return r->op[IOACCT_OP_READ].ns;
	if (f == IOACCT_QF_WRITETIME)
		return r->op[IOACCT_OP_WRITE].ns;
	for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++)
		if (!ioacct_op_is_data(op))
			ns += r->op[op].ns;
	return ns;
}

/* Field of an operation's calls -> that operation + 1; 0 for other fields. */
#define OP(NAME, ...) [IOACCT_QF_##NAME##S] = IOACCT_OP_##NAME + 1,
static const unsigned int calls_op[IOACCT_QF_COUNT] = { IOACCT_OPS(OP) };
#undef OP

/* Field of an operation's bytes -> that operation + 1; 0 for other fields. */
static const unsigned int bytes_op[IOACCT_QF_COUNT] = {
	[IOACCT_QF_READBYTES] = IOACCT_OP_READ + 1,
	[IOACCT_QF_WRITEBYTES] = IOACCT_OP_WRITE + 1,
	[IOACCT_QF_MMAPREADBYTES] = IOACCT_OP_MMAP_FAULT + 1,
	[IOACCT_QF_CACHEMISSBYTES] = IOACCT_OP_CACHE_FILL + 1,
	[IOACCT_QF_READAHEADBYTES] = IOACCT_OP_READAHEAD + 1,
};

/* Field of a text of the job -> its offset in struct ioacct_job + 1; 0 for other fields. */
#define JOB_TEXT(F, member) [IOACCT_QF_##F] = offsetof(struct ioacct_job, member) + 1
static const size_t job_text[IOACCT_QF_COUNT] = {
	JOB_TEXT(CLUSTER, cluster), JOB_TEXT(JOBNAME, name),   JOB_TEXT(USER, user),
	JOB_TEXT(NODE, node),       JOB_TEXT(NODELIST, node),  JOB_TEXT(SOURCE, source),
	JOB_TEXT(WORKDIR, workdir),
};
#undef JOB_TEXT

/* The page-cache hit ratio of a row; empty without the cache view (no misses counted). */
static bool put_hit_ratio(char *buf, size_t len, const struct ioacct_qrow *r)
{
	double h = ioacct_hit_ratio(r->op[IOACCT_OP_READ].bytes + r->op[IOACCT_OP_MMAP_FAULT].bytes,
				    r->op[IOACCT_OP_CACHE_FILL].bytes);

	if (!ioacct_probe_has_view(r->job->probe_mode, "cache"))
		h = -1; /* no misses counted: no ratio */
	if (r->op[IOACCT_OP_MMAP_FAULT].calls && ioacct_probe_mmap_unmeasured(r->job->probe_mode))
		h = -1; /* misses of mapped pages, but the bytes mapped unknown */

	return h < 0 ? put(buf, len, false, "%s", "") : put(buf, len, false, "%.4f", h);
}

/* ERRORS (every failed call), REALERRORS or NOTFOUND of a row, over its operations. */
static uint64_t row_errors(const struct ioacct_qrow *r, enum ioacct_qfield f)
{
	uint64_t errors = 0;

	for (unsigned int op = 0; op < IOACCT_OP_COUNT; op++)
		errors += f == IOACCT_QF_ERRORS ? r->op[op].errors :
			  f == IOACCT_QF_REALERRORS ? ioacct_counters_real_errors(&r->op[op]) :
			  r->op[op].errclass[IOACCT_ERR_NOTFOUND];
	return errors;
}

bool ioacct_query_value(const struct ioacct_qrow *r, enum ioacct_qfield f, unsigned int units,
			int64_t now_ns, char *buf, size_t len)
{
	const struct ioacct_job *j = r->job;
	char step[16];

	buf[0] = '\0';
	if ((unsigned int)f >= IOACCT_QF_COUNT)
		return true;
	if ((fields[f].flags & IOACCT_QF_JOB_ONLY) && r->step)
		return true;
	if (calls_op[f])
		return put(buf, len, false, "%" PRIu64, r->op[calls_op[f] - 1].calls);
	/* Empty, not 0, where the kernel had no exact hook for mmap bytes. */
	if (f == IOACCT_QF_MMAPREADBYTES && ioacct_probe_mmap_unmeasured(r->job->probe_mode))
		return put(buf, len, false, "%s", "");
	if (bytes_op[f])
		return put_u64_bytes(buf, len, r->op[bytes_op[f] - 1].bytes, units);
	if (job_text[f])
		return put(buf, len, false, "%s", (const char *)j + job_text[f] - 1);
	switch (f) {
	case IOACCT_QF_JOBID:
	case IOACCT_QF_JOBIDRAW:
		job_id_text(r, f == IOACCT_QF_JOBIDRAW, buf, len);
		return false;
	case IOACCT_QF_UID:
		return put(buf, len, false, "%" PRIu32, j->uid);
	case IOACCT_QF_GID:
		return put(buf, len, false, "%" PRIu32, j->gid);
	case IOACCT_QF_START:
		return put_time(buf, len, row_start(r));
	case IOACCT_QF_END:
		return put_time(buf, len, row_end(r));
	case IOACCT_QF_ELAPSED:
		return put_elapsed(buf, len, row_elapsed(r, now_ns));
	case IOACCT_QF_STATE:
		return put(buf, len, false, "%s", r->step ? r->step->state : j->state);
	case IOACCT_QF_EXITCODE:
		return put(buf, len, false, "%" PRId32, r->step ? r->step->exit_code : j->exit_code);
	case IOACCT_QF_RESTARTS:
		return put(buf, len, false, "%" PRIu32, j->restart);
	case IOACCT_QF_STEP:
		if (!r->step)
			return true;
		return put(buf, len, false, "%s", ioacct_step_name(r->step->step_id, step, sizeof(step)));
	case IOACCT_QF_MOUNT:
		if (!r->per_mount)
			return true;
		if (!r->mount)
			return put(buf, len, false, "mnt:%" PRIu64, r->mnt_id);
		return put(buf, len, false, "%s", r->mount->path);
	case IOACCT_QF_FSTYPE:
		if (!r->per_mount)
			return true;
		return put(buf, len, false, "%s", r->mount ? r->mount->fstype : "unknown");
	case IOACCT_QF_MOUNTSOURCE:
		if (!r->per_mount || !r->mount)
			return true;
		return put(buf, len, false, "%s", r->mount->source);
	case IOACCT_QF_ERRORS:
	case IOACCT_QF_REALERRORS:
	case IOACCT_QF_NOTFOUND:
		return put(buf, len, false, "%" PRIu64, row_errors(r, f));
	case IOACCT_QF_READTIME:
	case IOACCT_QF_WRITETIME:
	case IOACCT_QF_METATIME:
		return put(buf, len, false, "%.6f", (double)row_time_ns(r, f) / 1e9);
	case IOACCT_QF_AVEREADBW:
		return put_rate(buf, len, r->op[IOACCT_OP_READ].bytes, row_elapsed(r, now_ns), true,
				units);
	case IOACCT_QF_AVEWRITEBW:
		return put_rate(buf, len, r->op[IOACCT_OP_WRITE].bytes, row_elapsed(r, now_ns), true,
				units);
	case IOACCT_QF_MAXREADBW:
		return put_peak(buf, len, r, r->peak_read, units);
	case IOACCT_QF_MAXWRITEBW:
		return put_peak(buf, len, r, r->peak_write, units);
	case IOACCT_QF_AVEREADIOPS:
		return put_rate(buf, len, r->op[IOACCT_OP_READ].calls, row_elapsed(r, now_ns), false,
				0);
	case IOACCT_QF_AVEWRITEIOPS:
		return put_rate(buf, len, r->op[IOACCT_OP_WRITE].calls, row_elapsed(r, now_ns), false,
				0);
	case IOACCT_QF_DROPPED:
		return put(buf, len, false, "%" PRIu64, j->dropped_events);
	case IOACCT_QF_DROPPEDBYTES:
		return put_u64_bytes(buf, len, j->dropped_bytes, units);
	case IOACCT_QF_PROBEMODE: {
		char mode[sizeof(j->probe_mode)];

		return put(buf, len, false, "%s",
			   ioacct_probe_backend(j->probe_mode, mode, sizeof(mode)));
	}
	case IOACCT_QF_VIEWS: {
		const char *v = ioacct_probe_views(j->probe_mode);

		return put(buf, len, false, "%s", v ? v : "");
	}
	case IOACCT_QF_HITRATIO:
		return put_hit_ratio(buf, len, r);
	case IOACCT_QF_RPCCALLS:
		return r->rpc_read ? put(buf, len, false, "%" PRIu64, r->rpc_calls) : true;
	case IOACCT_QF_RPCBYTESSENT:
		return r->rpc_read ? put_u64_bytes(buf, len, r->rpc_bytes_sent, units) : true;
	case IOACCT_QF_RPCBYTESRECV:
		return r->rpc_read ? put_u64_bytes(buf, len, r->rpc_bytes_recv, units) : true;
	case IOACCT_QF_BINWIDTH:
		return put(buf, len, false, "%g", (double)j->bin_width_ns / 1e9);
	default:
		return true;
	}
}

/* ---- output ---- */

/* Text output never passes control characters to a terminal: a job name is anyone's input. */
static void put_clean(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}

/*
 * A line of the table: blanks are held back until text follows them, so
 * that no line ends in blanks whatever its last cells are.
 */
struct line {
	FILE *f;
	size_t blanks;
};

static void line_text(struct line *l, const char *s, size_t n)
{
	if (n == 0)
		return;
	for (; l->blanks; l->blanks--)
		fputc(' ', l->f);
	put_clean(l->f, s, n);
}

/* One table cell: cut to the width (ending in '+' for values), padded. */
static void put_cell(struct line *l, const char *s, int width, bool left, bool mark_cut)
{
	size_t n = strlen(s), w = (size_t)width;

	if (n > w) {
		line_text(l, s, mark_cut ? w - 1 : w);
		if (mark_cut)
			line_text(l, "+", 1);
		return;
	}
	if (!left)
		l->blanks += w - n;
	line_text(l, s, n);
	if (left)
		l->blanks += w - n;
}

static const char *delim(const struct ioacct_qprint *p)
{
	return p->delimiter ? p->delimiter : "|";
}

/* After field i of a parsable line. */
static void put_delim(const struct ioacct_qprint *p, size_t i)
{
	if (i + 1 < p->ncols || p->mode == IOACCT_QM_PARSABLE)
		fputs(delim(p), p->f);
}

void ioacct_query_print_begin(struct ioacct_qprint *p)
{
	struct line l = { .f = p->f };

	p->nrows = 0;
	if (p->mode == IOACCT_QM_JSON) {
		fputs("{\"rows\": [", p->f);
		return;
	}
	if (!p->header)
		return;
	for (size_t i = 0; i < p->ncols; i++) {
		const struct ioacct_qcol *c = &p->cols[i];
		const char *name = fields[c->field].name;

		if (p->mode == IOACCT_QM_TABLE) {
			put_cell(&l, name, c->width, c->left, false);
			l.blanks++;
		} else {
			fputs(name, p->f);
			put_delim(p, i);
		}
	}
	fputc('\n', p->f);
	if (p->mode != IOACCT_QM_TABLE)
		return;
	for (size_t i = 0; i < p->ncols; i++) {
		for (int k = 0; k < p->cols[i].width; k++)
			fputc('-', p->f);
		if (i + 1 < p->ncols)
			fputc(' ', p->f);
	}
	fputc('\n', p->f);
}

static void print_json_row(struct ioacct_qprint *p, const struct ioacct_qrow *r)
{
	char buf[PATH_MAX + 64];

	fputs(p->nrows ? ",\n  {" : "\n  {", p->f);
	for (size_t i = 0; i < p->ncols; i++) {
		enum ioacct_qfield f = p->cols[i].field;
		/* JSON's numbers are exact: --units is for people. */
		bool absent = ioacct_query_value(r, f, 0, p->now_ns, buf, sizeof(buf));

		if (i)
			fputs(", ", p->f);
		ioacct_json_string(p->f, fields[f].name);
		fputs(": ", p->f);
		if (absent)
			fputs("null", p->f);
		else if (fields[f].kind == IOACCT_QK_TEXT)
			ioacct_json_string(p->f, buf);
		else
			fputs(buf, p->f);
	}
	fputc('}', p->f);
}

void ioacct_query_print_row(struct ioacct_qprint *p, const struct ioacct_qrow *r)
{
	struct line l = { .f = p->f };
	char buf[PATH_MAX + 64];

	if (p->mode == IOACCT_QM_JSON) {
		print_json_row(p, r);
		p->nrows++;
		return;
	}
	for (size_t i = 0; i < p->ncols; i++) {
		const struct ioacct_qcol *c = &p->cols[i];

		ioacct_query_value(r, c->field, p->units, p->now_ns, buf, sizeof(buf));
		if (p->mode == IOACCT_QM_TABLE) {
			put_cell(&l, buf, c->width, c->left, true);
			l.blanks++;
		} else {
			put_clean(p->f, buf, strlen(buf));
			put_delim(p, i);
		}
	}
	fputc('\n', p->f);
	p->nrows++;
}

void ioacct_query_print_end(struct ioacct_qprint *p)
{
	if (p->mode == IOACCT_QM_JSON)
		fputs(p->nrows ? "\n]}\n" : "]}\n", p->f);
}
