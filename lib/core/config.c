/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "model.h"
#include "proto.h"
#include "url.h"
#include "util.h"

#define LINE_MAX_BYTES 4095
/* Bound on how much of an offending value a message repeats. */
#define QUOTE_MAX 80
#define MSG_MAX 2048 /* an unknown key lists every key: over 1 KiB */


enum key_type {
	KEY_PATH,          /* absolute path */
	KEY_SOCKET,        /* absolute path that also fits sun_path */
	KEY_SECONDS_NS,    /* seconds with decimals, stored as ns */
	KEY_SECONDS_MS,    /* seconds with decimals, stored as ms */
	KEY_UINT32,
	KEY_PROBE_MODE,
	KEY_CGROUP_MODE,
	KEY_DETACH,
	KEY_CONTROLLER,    /* [a-z_]+ */
	KEY_CGROUP_PATH,   /* relative, no ".." */
	KEY_NAME,          /* [A-Za-z0-9_.-]+ */
	KEY_LOG_LEVEL,
	KEY_BOOL,
	KEY_CONNINFO,      /* a libpq connection string without a password */
	KEY_LISTEN,        /* IPv4:PORT or [IPv6]:PORT */
	KEY_ADDRS,         /* numeric IPv4 or IPv6 addresses, comma-separated */
	KEY_VIEWS,         /* all, none, or a list of ioacct_view_names */
	KEY_VIEWS_BOOL,    /* yes: all views, no: none (the old page_cache_views) */
	KEY_LIBNAMES,      /* none, or up to 4 names [A-Za-z0-9_.+-] each ending in an optional '*' */
	KEY_DURATION,      /* slurmdbd's durations (duration.h), bare number: months; in s */
	KEY_DURATION_S,    /* the same, bare number: seconds; in s */
	KEY_URL,           /* http[s]://HOST[:PORT][/PATH] (url.h) */
};

struct key {
	const char *name;
	enum key_type type;
	size_t off;
	size_t size;
	uint64_t min, max;  /* KEY_UINT32: the value; KEY_SECONDS_*: ns */
};

#define FIELD(m) offsetof(struct ioacct_config, m), sizeof(((struct ioacct_config *)0)->m)

static const struct key keys[] = {
	{ "socket", KEY_SOCKET, FIELD(socket_path), 0, 0 },
	{ "db", KEY_PATH, FIELD(db_path), 0, 0 },
	{ "pidfile", KEY_PATH, FIELD(pid_file), 0, 0 },
	{ "bpf_pin_dir", KEY_PATH, FIELD(pin_dir), 0, 0 },
	/* The account ioacctd and its workers run as once its probes are loaded (daemon/privs.c). */
	{ "user", KEY_NAME, FIELD(user), 0, 0 },
	{ "probe_mode", KEY_PROBE_MODE, FIELD(probe_mode), 0, 0 },
	{ "detach_when_idle", KEY_DETACH, FIELD(detach_when_idle), 0, 0 },
	{ "bin_width", KEY_SECONDS_NS, FIELD(bin_width_ns), NSEC_PER_SEC / 10, 86400 * NSEC_PER_SEC },
	{ "drain_interval", KEY_SECONDS_MS, FIELD(drain_interval_ms), NSEC_PER_SEC / 10,
	  3600 * NSEC_PER_SEC },
	{ "reap_grace", KEY_SECONDS_MS, FIELD(reap_grace_ms), 0, 86400 * NSEC_PER_SEC },
	{ "query_page_time", KEY_SECONDS_MS, FIELD(query_page_ms), NSEC_PER_SEC / 1000,
	  60 * NSEC_PER_SEC },
	{ "max_jobs", KEY_UINT32, FIELD(max_jobs), 1, 65536 },
	{ "max_cgroups", KEY_UINT32, FIELD(max_cgroups), 1, 1048576 },
	{ "max_entries", KEY_UINT32, FIELD(max_entries), 1, 16777216 },
	{ "max_mountpoints", KEY_UINT32, FIELD(max_mountpoints), 1, 1048576 },
	{ "max_files", KEY_UINT32, FIELD(max_files), 1, 1048576 },
	/* The per-file records on or off: off, the verifier drops their code (file_records). */
	{ "file_records", KEY_BOOL, FIELD(file_records), 0, 0 },
	/* sbatch --io-monitor=trace (daemon/jobtrace.c): how many, how large. */
	{ "max_traced_jobs", KEY_UINT32, FIELD(max_traced_jobs), 0, 1024 },
	{ "max_trace_size", KEY_UINT32, FIELD(max_trace_mib), 1, 1048576 },
	/* sbatch --io-monitor=spans: the site's OTLP/HTTP collector, KiB of spans per job. */
	{ "otlp_url", KEY_URL, FIELD(otlp_url), 0, 0 },
	{ "otlp_ca_file", KEY_PATH, FIELD(otlp_ca_file), 0, 0 },
	{ "otlp_queue", KEY_UINT32, FIELD(otlp_queue_kib), 64, 1048576 },
	{ "max_spans", KEY_UINT32, FIELD(max_spans), 1, 1000000000 },
	{ "cgroup_v1_hierarchy", KEY_CONTROLLER, FIELD(cgroup_v1_hierarchy), 0, 0 },
	{ "cgroup_mode", KEY_CGROUP_MODE, FIELD(cgroup_mode), 0, 0 },
	{ "cgroup_parent", KEY_CGROUP_PATH, FIELD(cgroup_parent), 0, 0 },
	{ "cluster", KEY_NAME, FIELD(cluster), 0, 0 },
	{ "node_name", KEY_NAME, FIELD(node), 0, 0 },
	/* The first name of node_name, still read. */
	{ "node", KEY_NAME, FIELD(node), 0, 0 },
	{ "cluster_db", KEY_CONNINFO, FIELD(cluster_db), 0, 0 },
	/* Deadlines of the cluster store's connections (lib/store/pgstore_wait.c). */
	{ "cluster_db_connect_timeout", KEY_SECONDS_MS, FIELD(pg_connect_timeout_ms), NSEC_PER_SEC,
	  3600 * NSEC_PER_SEC },
	{ "cluster_db_statement_timeout", KEY_SECONDS_MS, FIELD(pg_statement_timeout_ms),
	  NSEC_PER_SEC, 86400 * NSEC_PER_SEC },
	{ "cluster_db_idle_timeout", KEY_SECONDS_MS, FIELD(pg_idle_timeout_ms), NSEC_PER_SEC,
	  86400 * NSEC_PER_SEC },
	{ "merge_timeout", KEY_UINT32, FIELD(merge_timeout_s), 1, 7 * 86400 },
	/* Retention (daemon/retain.c): min and max in seconds. */
	{ "purge_after", KEY_DURATION, FIELD(purge_after_s), 1, IOACCT_DURATION_MAX_S },
	{ "downsample_after", KEY_DURATION, FIELD(downsample_after_s), 1, IOACCT_DURATION_MAX_S },
	{ "downsample_width", KEY_DURATION_S, FIELD(downsample_width_s), 1, 86400 },
	{ "retention_interval", KEY_DURATION_S, FIELD(retention_interval_s), 1, 7 * 86400 },
	{ "cluster_retention", KEY_BOOL, FIELD(cluster_retention), 0, 0 },
	{ "log_level", KEY_LOG_LEVEL, FIELD(log_level), 0, 0 },
	{ "private_data", KEY_BOOL, FIELD(private_data), 0, 0 },
	{ "views", KEY_VIEWS, FIELD(views), 0, 0 },
	/* The MPI libraries whose MPI-IO calls are counted (issue 27, daemon/mpiprobes.c). */
	{ "mpi_libraries", KEY_LIBNAMES, FIELD(mpi_libraries), 0, 0 },
	{ "mpi_detach_after", KEY_DURATION_S, FIELD(mpi_detach_after_s), 1, 7 * 86400 },
	/* The HDF5 libraries whose dataset calls are counted (issue 39), by the same watch. */
	{ "hdf5_libraries", KEY_LIBNAMES, FIELD(hdf5_libraries), 0, 0 },
	/* The RPCs per job (issue 40, daemon/rpcprobes.c) counted at all. */
	{ "rpc_probes", KEY_BOOL, FIELD(rpc_probes), 0, 0 },
	/* The first spelling of views = all / none, still read. */
	{ "page_cache_views", KEY_VIEWS_BOOL, FIELD(views), 0, 0 },
	{ "metrics_listen", KEY_LISTEN, FIELD(metrics_listen), 0, 0 },
	{ "metrics_linger", KEY_SECONDS_MS, FIELD(metrics_linger_ms), 0, 86400 * NSEC_PER_SEC },
	{ "metrics_tls_cert", KEY_PATH, FIELD(metrics_tls_cert), 0, 0 },
	{ "metrics_tls_key", KEY_PATH, FIELD(metrics_tls_key), 0, 0 },
	{ "metrics_auth_file", KEY_PATH, FIELD(metrics_auth_file), 0, 0 },
	{ "metrics_priority", KEY_ADDRS, FIELD(metrics_priority), 0, 0 },
	/* Thresholds of the report's advice (lib/report/report.c). */
	{ "advice_small_requests_share", KEY_UINT32, FIELD(advice.small_share), 0, 100 },
	{ "advice_small_requests_min", KEY_UINT32, FIELD(advice.small_min), 0, UINT32_MAX },
	{ "advice_rw_intensive_share", KEY_UINT32, FIELD(advice.rw_share), 0, 100 },
	{ "advice_meta_time_share", KEY_UINT32, FIELD(advice.meta_share), 0, 100 },
	{ "advice_meta_time_min", KEY_SECONDS_NS, FIELD(advice.meta_min_ns), 0, 86400 * NSEC_PER_SEC },
	{ "advice_meta_time_high", KEY_SECONDS_NS, FIELD(advice.meta_high_ns), 0, 86400 * NSEC_PER_SEC },
	{ "advice_meta_ops_per_mib", KEY_UINT32, FIELD(advice.meta_per_mib), 0, UINT32_MAX },
	{ "advice_meta_ops_min", KEY_UINT32, FIELD(advice.meta_ops_min), 0, UINT32_MAX },
	{ "advice_fsync_min", KEY_UINT32, FIELD(advice.fsync_min), 0, UINT32_MAX },
	{ "advice_fsync_write_share", KEY_UINT32, FIELD(advice.fsync_share), 0, 100 },
	{ "advice_tiny_files_min", KEY_UINT32, FIELD(advice.tiny_files_min), 0, UINT32_MAX },
	{ "advice_tiny_file_size", KEY_UINT32, FIELD(advice.tiny_file_size), 0, 1073741824 },
	{ "advice_burst_ratio", KEY_UINT32, FIELD(advice.burst_ratio), 2, 1000000 },
	{ "advice_burst_min_bandwidth", KEY_UINT32, FIELD(advice.burst_min_mibps), 0, 1048576 },
	{ "advice_shared_meta_ops", KEY_UINT32, FIELD(advice.shared_meta_ops), 0, UINT32_MAX },
	{ "advice_local_share", KEY_UINT32, FIELD(advice.local_share), 0, 100 },
	{ "advice_step_imbalance", KEY_UINT32, FIELD(advice.step_imbalance), 0, 100 },
	{ "advice_notfound_min", KEY_UINT32, FIELD(advice.notfound_min), 0, UINT32_MAX },
	{ "advice_node_imbalance", KEY_UINT32, FIELD(advice.node_imbalance), 0, 1000 },
	{ "advice_pcache_min", KEY_UINT32, FIELD(advice.pcache_min_mib), 0, UINT32_MAX },
	{ "advice_hit_ratio", KEY_UINT32, FIELD(advice.hit_ratio), 0, 100 },
	{ "advice_readahead_waste", KEY_UINT32, FIELD(advice.ra_waste), 0, 100 },
	{ "advice_mmap_faults_min", KEY_UINT32, FIELD(advice.mmap_faults_min), 0, UINT32_MAX },
	{ "advice_file_writes_min", KEY_UINT32, FIELD(advice.file_writes_min), 0, UINT32_MAX },
	{ "advice_file_small_write", KEY_UINT32, FIELD(advice.file_small_write), 0, 1073741824 },
	{ "advice_file_reread", KEY_UINT32, FIELD(advice.file_reread), 1, 1000000 },
	{ "advice_file_reread_min", KEY_UINT32, FIELD(advice.file_reread_min_mib), 0, UINT32_MAX },
	{ "advice_file_reads_min", KEY_UINT32, FIELD(advice.file_reads_min), 0, UINT32_MAX },
	{ "advice_file_random_share", KEY_UINT32, FIELD(advice.file_random_share), 0, 100 },
	{ "advice_file_random_size", KEY_UINT32, FIELD(advice.file_random_min_mib), 0, UINT32_MAX },
	{ "advice_rpc_attr_min", KEY_UINT32, FIELD(advice.rpc_attr_min), 0, UINT32_MAX },
	{ "advice_rpc_writes_min", KEY_UINT32, FIELD(advice.rpc_writes_min), 0, UINT32_MAX },
	{ "advice_rpc_small_write", KEY_UINT32, FIELD(advice.rpc_small_write), 0, 1073741824 },
};

#define NKEYS ARRAY_SIZE(keys)

/* set_keyword() stores both enums and log_level through an int pointer. */
_Static_assert(sizeof(enum ioacct_probe_mode) == sizeof(int), "probe_mode is not int-sized");
_Static_assert(sizeof(enum ioacct_cgroup_mode) == sizeof(int), "cgroup_mode is not int-sized");
_Static_assert(sizeof(enum ioacct_detach) == sizeof(int), "detach_when_idle is not int-sized");

static const char *const probe_mode_names[] = {
	[IOACCT_PROBE_AUTO] = "auto",
	[IOACCT_PROBE_FENTRY] = "fentry",
	[IOACCT_PROBE_KPROBE] = "kprobe",
	[IOACCT_PROBE_TRACEPOINT] = "tracepoint",
	[IOACCT_PROBE_SYSCALL_TP] = "syscall-tp",
};

static const char *const cgroup_mode_names[] = {
	[IOACCT_CGROUP_AUTO] = "auto",
	[IOACCT_CGROUP_V2] = "v2",
	[IOACCT_CGROUP_V1] = "v1",
};

static const char *const detach_names[] = {
	[IOACCT_DETACH_AUTO] = "auto",
	[IOACCT_DETACH_YES] = "yes",
	[IOACCT_DETACH_NO] = "no",
};

static const struct {
	const char *name;
	bool value;
} bool_names[] = {
	{ "yes", true }, { "no", false }, { "true", true }, { "false", false },
	{ "on", true },  { "off", false }, { "1", true },   { "0", false },
};

/* The one error helper (util.h) under this file's own name; err may be NULL. */
#define set_err(err, errlen, ...) ((void)ioacct_seterr(err, errlen, 0, __VA_ARGS__))

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The value between double quotes for a message, control characters escaped
 * so that the message stays on one line, cut after QUOTE_MAX bytes.
 */
static const char *quote(const char *s, char *buf, size_t len)
{
	size_t o = 0, i;

	buf[o++] = '"';
	for (i = 0; s[i] && i < QUOTE_MAX && o + 8 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, len - o, "\\%c", c);
		else
			buf[o++] = (char)c;
	}
	buf[o++] = '"';
	if (s[i])
		o += (size_t)snprintf(buf + o, len - o, "...");
	buf[o] = '\0';
	return buf;
}

#define QUOTE_BUFSZ (QUOTE_MAX * 4 + 16)

/* "0.1", "5", "86400": the shortest exact decimal form of ns in seconds. */
static const char *format_seconds(uint64_t ns, char *buf, size_t len)
{
	uint64_t frac = ns % NSEC_PER_SEC;
	int digits = 9;

	if (frac == 0) {
		snprintf(buf, len, "%llu", (unsigned long long)(ns / NSEC_PER_SEC));
		return buf;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%llu.%0*llu", (unsigned long long)(ns / NSEC_PER_SEC), digits,
		 (unsigned long long)frac);
	return buf;
}

int ioacct_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end) {
		const char *units = "KMG", *u = strchr(units, *end);

		if (!u || end[1])
			return -EINVAL;
		shift = 10 * (unsigned int)(u - units + 1);
	}
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int ioacct_parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out_ns)
{
	uint64_t secs = 0, frac = 0, ns;
	unsigned int decimals = 0;
	bool overflow = false;
	const char *p = s;

	if (!s || !is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		/* Keep scanning past an overflow so that "99...9x" is still -EINVAL. */
		if (secs > UINT64_MAX / NSEC_PER_SEC)
			overflow = true;
		else
			secs = secs * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return -EINVAL;
		for (; is_digit(*p); p++) {
			if (++decimals > 9)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		for (; decimals < 9; decimals++)
			frac *= 10;
	}
	if (*p != '\0')
		return -EINVAL;
	if (overflow || secs > UINT64_MAX / NSEC_PER_SEC)
		return -ERANGE;
	ns = secs * NSEC_PER_SEC;
	if (ns > UINT64_MAX - frac)
		return -ERANGE;
	ns += frac;
	if (ns < min_ns || ns > max_ns)
		return -ERANGE;
	*out_ns = ns;
	return 0;
}

/* Decimal digits only: "+1", "0x10" and "1e3" are not numbers here. */
static int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!is_digit(*s))
		return -EINVAL;
	/* Saturating: any max is below UINT64_MAX, so an overflow ends up out of range. */
	for (; is_digit(*s); s++)
		v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(*s - '0');
	if (*s != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

const char *ioacct_probe_mode_name(enum ioacct_probe_mode mode)
{
	if ((unsigned int)mode >= ARRAY_SIZE(probe_mode_names))
		return "?";
	return probe_mode_names[mode];
}

int ioacct_probe_mode_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(probe_mode_names); i++)
		if (strcasecmp(name, probe_mode_names[i]) == 0)
			return (int)i;
	return -1;
}

static int detach_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(detach_names); i++)
		if (strcasecmp(name, detach_names[i]) == 0)
			return (int)i;
	return -1;
}

static int cgroup_mode_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cgroup_mode_names); i++)
		if (strcasecmp(name, cgroup_mode_names[i]) == 0)
			return (int)i;
	return -1;
}

void ioacct_config_defaults(struct ioacct_config *cfg)
{
	char *dot;

	memset(cfg, 0, sizeof(*cfg));
	ioacct_strlcpy(cfg->socket_path, "/run/ioacct/ioacctd.sock", sizeof(cfg->socket_path));
	ioacct_strlcpy(cfg->db_path, "/var/lib/ioacct/ioacct.db", sizeof(cfg->db_path));
	ioacct_strlcpy(cfg->pid_file, "/run/ioacct/ioacctd.pid", sizeof(cfg->pid_file));
	ioacct_strlcpy(cfg->pin_dir, "/sys/fs/bpf/ioacct", sizeof(cfg->pin_dir));
	ioacct_strlcpy(cfg->user, "ioacct", sizeof(cfg->user));
	cfg->probe_mode = IOACCT_PROBE_AUTO;
	cfg->detach_when_idle = IOACCT_DETACH_AUTO;
	cfg->bin_width_ns = 5 * NSEC_PER_SEC;
	cfg->drain_interval_ms = 2000;
	cfg->reap_grace_ms = 30000;
	cfg->query_page_ms = 100;
	cfg->max_jobs = 1024;
	cfg->max_cgroups = 4096;
	cfg->max_entries = 65536;
	cfg->max_mountpoints = 4096;
	cfg->max_files = 4096;
	cfg->file_records = true;
	cfg->max_traced_jobs = 4;
	cfg->max_trace_mib = 1024;
	ioacct_strlcpy(cfg->cgroup_v1_hierarchy, "freezer", sizeof(cfg->cgroup_v1_hierarchy));
	cfg->cgroup_mode = IOACCT_CGROUP_AUTO;
	ioacct_strlcpy(cfg->cgroup_parent, "ioacct", sizeof(cfg->cgroup_parent));
	/* gethostname() need not terminate a truncated name; an unknown one stays empty. */
	if (gethostname(cfg->node, sizeof(cfg->node) - 1) != 0)
		cfg->node[0] = '\0';
	cfg->node[sizeof(cfg->node) - 1] = '\0';
	dot = strchr(cfg->node, '.');
	if (dot)
		*dot = '\0';
	cfg->log_level = IOACCT_LOG_INFO;
	cfg->private_data = false;
	cfg->views = IOACCT_VIEWS_ALL;
	ioacct_strlcpy(cfg->mpi_libraries, "libmpi.so*,libmpich.so*", sizeof(cfg->mpi_libraries));
	cfg->mpi_detach_after_s = 600;
	ioacct_strlcpy(cfg->hdf5_libraries, "libhdf5*", sizeof(cfg->hdf5_libraries));
	cfg->rpc_probes = true;
	cfg->otlp_queue_kib = 4096;
	cfg->max_spans = 1000000;
	cfg->metrics_linger_ms = 60000;
	cfg->merge_timeout_s = 300;
	cfg->pg_connect_timeout_ms = 10000;
	cfg->pg_statement_timeout_ms = 300000;
	cfg->pg_idle_timeout_ms = 60000;
	cfg->downsample_width_s = 60;
	cfg->retention_interval_s = 3600;
	ioacct_advice_limits_defaults(&cfg->advice);
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(name, keys[i].name) == 0)
			return &keys[i];
	return NULL;
}

static void unknown_key(const char *name, char *err, size_t errlen)
{
	char q[QUOTE_BUFSZ], list[MSG_MAX];
	size_t o = 0;

	list[0] = '\0';
	for (size_t i = 0; i < NKEYS && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
				      keys[i].name);
	set_err(err, errlen, "unknown key %s (valid keys: %s)", quote(name, q, sizeof(q)), list);
}

static bool all_in(const char *s, const char *extra, bool upper_and_digits)
{
	for (; *s; s++) {
		char c = *s;

		if ((c >= 'a' && c <= 'z') || strchr(extra, c))
			continue;
		if (upper_and_digits && ((c >= 'A' && c <= 'Z') || is_digit(c)))
			continue;
		return false;
	}
	return true;
}

static bool has_dotdot(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
		p += strspn(p, "/");
	}
	return false;
}

/* value into a string key's field of k->size bytes, or why it does not fit. */
static int copy_value(const struct key *k, char *dst, const char *value, char *err, size_t errlen)
{
	char q[QUOTE_BUFSZ];

	if (strlen(value) >= k->size) {
		set_err(err, errlen, "%s: %s is too long (at most %zu bytes)", k->name,
			quote(value, q, sizeof(q)), k->size - 1);
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

static int set_path(const struct key *k, char *dst, const char *value, char *err, size_t errlen)
{
	const size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	char q[QUOTE_BUFSZ];

	if (value[0] != '/') {
		set_err(err, errlen, "%s: %s is not an absolute path", k->name,
			quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	if (k->type == KEY_SOCKET && strlen(value) > sun_max) {
		set_err(err, errlen,
			"%s: %s is too long for a Unix socket (at most %zu bytes, the size of sun_path)",
			k->name, quote(value, q, sizeof(q)), sun_max);
		return -EINVAL;
	}
	return copy_value(k, dst, value, err, errlen);
}

static int set_seconds(const struct key *k, void *field, const char *value, char *err,
		       size_t errlen)
{
	char q[QUOTE_BUFSZ], lo[32], hi[32];
	uint64_t ns;
	int ret;

	ret = ioacct_parse_seconds(value, k->min, k->max, &ns);
	if (ret == -EINVAL) {
		set_err(err, errlen, "%s: %s is not a number of seconds (e.g. 5 or 0.5)", k->name,
			quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	if (ret < 0) {
		set_err(err, errlen, "%s: %s is out of range (%s .. %s seconds)", k->name,
			quote(value, q, sizeof(q)), format_seconds(k->min, lo, sizeof(lo)),
			format_seconds(k->max, hi, sizeof(hi)));
		return -EINVAL;
	}
	if (k->type == KEY_SECONDS_NS) {
		*(uint64_t *)field = ns;
		return 0;
	}
	/* Rounding would silently change what the admin wrote. */
	if (ns % NSEC_PER_MSEC != 0) {
		set_err(err, errlen, "%s: %s is finer than a millisecond (at most 3 decimals)",
			k->name, quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	*(uint64_t *)field = ns / NSEC_PER_MSEC;
	return 0;
}

static int set_duration(const struct key *k, uint64_t *field, const char *value, char *err,
			size_t errlen)
{
	char msg[MSG_MAX], lo[32], hi[32];
	uint64_t s;

	if (ioacct_duration_parse(value, k->type == KEY_DURATION ? IOACCT_DUR_MONTHS :
								   IOACCT_DUR_SECONDS,
				  &s, msg, sizeof(msg))) {
		set_err(err, errlen, "%s: %s", k->name, msg);
		return -EINVAL;
	}
	if (s < k->min || s > k->max) {
		set_err(err, errlen, "%s: \"%.80s\" is out of range (%s .. %s)", k->name, value,
			ioacct_duration_format(k->min, lo, sizeof(lo)),
			ioacct_duration_format(k->max, hi, sizeof(hi)));
		return -EINVAL;
	}
	*field = s;
	return 0;
}

static int set_uint32(const struct key *k, uint32_t *field, const char *value, char *err,
		      size_t errlen)
{
	char q[QUOTE_BUFSZ];
	uint64_t v;
	int ret;

	ret = parse_uint(value, k->min, k->max, &v);
	if (ret == -EINVAL) {
		set_err(err, errlen, "%s: %s is not a decimal whole number", k->name,
			quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	if (ret < 0) {
		set_err(err, errlen, "%s: %s is out of range (%llu .. %llu)", k->name,
			quote(value, q, sizeof(q)), (unsigned long long)k->min,
			(unsigned long long)k->max);
		return -EINVAL;
	}
	*field = (uint32_t)v;
	return 0;
}

/* The value of hex digit c, or -1. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A connection URI percent-decoded into out (as libpq decodes every part of
 * it before reading it): -EINVAL for a '%' not followed by two hex digits.
 */
static int uri_decode(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 1 < len; o++) {
		if (*s != '%') {
			out[o] = *s++;
			continue;
		}
		if (hexval(s[1]) < 0 || hexval(s[2]) < 0)
			return -EINVAL;
		out[o] = (char)(hexval(s[1]) << 4 | hexval(s[2]));
		s += 3;
	}
	out[o] = '\0';
	return 0;
}

/*
 * libpq's keyword/value form: `keyword = value` pairs apart by blanks, a
 * value bare (backslash escapes) or single-quoted (with \' and \\). Sets
 * *password when a keyword is "password". -EINVAL on anything else, as
 * libpq would refuse it at the first connection, hours after start.
 */
static int kv_parse(const char *s, bool *password)
{
	*password = false;
	for (;;) {
		const char *kw;
		size_t kwlen;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 0;
		for (kw = s; (*s >= 'a' && *s <= 'z') || *s == '_'; s++)
			;
		kwlen = (size_t)(s - kw);
		while (*s == ' ' || *s == '\t')
			s++;
		if (kwlen == 0 || *s++ != '=')
			return -EINVAL;
		if (kwlen == 8 && strncmp(kw, "password", 8) == 0)
			*password = true;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\'') {
			for (s++; *s != '\''; s++) {
				if (!*s || (*s == '\\' && !*++s))
					return -EINVAL;
			}
			s++;
			if (*s && *s != ' ' && *s != '\t')
				return -EINVAL;
		} else {
			for (; *s && *s != ' ' && *s != '\t'; s++)
				if (*s == '\\' && !*++s)
					return -EINVAL;
		}
	}
}

/*
 * A libpq connection string, "postgresql://..." or "keyword=value ...". The
 * configuration file is world-readable: a password in it (a password
 * keyword or parameter, user:secret@ in a URI, in any percent-encoded
 * spelling) is refused; it belongs in ~/.pgpass or PGPASSFILE.
 */
static int set_conninfo(const struct key *k, char *dst, const char *value, char *err,
			size_t errlen)
{
	static const char *const uri[] = { "postgresql://", "postgres://" };
	const char *at, *colon, *auth = NULL;
	char q[QUOTE_BUFSZ], dec[IOACCT_CONNINFO_MAX];
	bool password = false;

	if (strlen(value) >= k->size) {
		set_err(err, errlen, "%s: longer than %zu characters", k->name, k->size - 1);
		return -EINVAL;
	}
	for (const char *c = value; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			set_err(err, errlen, "%s: %s has a control character", k->name,
				quote(value, q, sizeof(q)));
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(uri); i++)
		if (strncmp(value, uri[i], strlen(uri[i])) == 0)
			auth = value + strlen(uri[i]);
	if (auth) {
		if (uri_decode(value, dec, sizeof(dec))) {
			set_err(err, errlen, "%s: %s is not a valid URI: a '%%' must be followed by two hex digits",
				k->name, quote(value, q, sizeof(q)));
			return -EINVAL;
		}
		/* user:secret@ before the host, in the raw text (a decoded ':' is the user's). */
		at = strpbrk(auth, "@/?");
		colon = at && *at == '@' ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
		password = colon || strcasestr(dec, "password");
	} else if (kv_parse(value, &password)) {
		set_err(err, errlen,
			"%s: %s is neither a postgresql:// URI nor keyword=value pairs (keywords in a-z and _, "
			"values bare or in single quotes)",
			k->name, quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	if (password) {
		set_err(err, errlen,
			"%s: holds a password, and this file is world-readable: put it in root's ~/.pgpass or in PGPASSFILE instead",
			k->name);
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

/* Checked as the client will take it (url.h): a bad URL is said here, not per job later. */
static int set_url(const struct key *k, char *dst, const char *value, char *err, size_t errlen)
{
	char q[QUOTE_BUFSZ], why[256];
	struct ioacct_url u;

	if (strlen(value) >= k->size) {
		set_err(err, errlen, "%s: %s is too long (at most %zu bytes)", k->name,
			quote(value, q, sizeof(q)), k->size - 1);
		return -EINVAL;
	}
	if (ioacct_url_parse(value, "/", &u, why, sizeof(why))) {
		/* Not quoted whole: the value may hold a password. */
		set_err(err, errlen, "%s: not a valid URL: %s (use http[s]://HOST[:PORT][/PATH])",
			k->name, why);
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

static int set_name(const struct key *k, char *dst, const char *value, char *err, size_t errlen)
{
	bool controller = k->type == KEY_CONTROLLER;
	char q[QUOTE_BUFSZ];

	if (!all_in(value, controller ? "_" : "_.-", !controller) || strlen(value) >= k->size) {
		set_err(err, errlen, "%s: %s is not valid: use %s, at most %zu characters",
			k->name, quote(value, q, sizeof(q)),
			controller ? "a cgroup v1 controller name (a-z and _)"
				   : "letters, digits, '_', '.' and '-'",
			k->size - 1);
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

static int set_cgroup_path(const struct key *k, char *dst, const char *value, char *err,
			   size_t errlen)
{
	char q[QUOTE_BUFSZ];

	if (value[0] == '/') {
		set_err(err, errlen, "%s: %s must be relative to the cgroup root", k->name,
			quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	if (has_dotdot(value)) {
		set_err(err, errlen, "%s: %s must not contain \"..\" components", k->name,
			quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	return copy_value(k, dst, value, err, errlen);
}

static int set_keyword(const struct key *k, int *field, const char *value, char *err,
		       size_t errlen)
{
	char q[QUOTE_BUFSZ];
	const char *choices;
	int v;

	switch (k->type) {
	case KEY_PROBE_MODE:
		v = ioacct_probe_mode_from_name(value);
		choices = "auto, fentry, kprobe, tracepoint, syscall-tp";
		break;
	case KEY_CGROUP_MODE:
		v = cgroup_mode_from_name(value);
		choices = "auto, v2, v1";
		break;
	case KEY_DETACH:
		v = detach_from_name(value);
		choices = "auto, yes, no";
		break;
	default: /* KEY_LOG_LEVEL */
		v = ioacct_log_level_from_name(value);
		choices = "error, warning, info, debug";
		break;
	}
	if (v < 0) {
		set_err(err, errlen, "%s: %s is not one of %s", k->name, quote(value, q, sizeof(q)),
			choices);
		return -EINVAL;
	}
	*field = v;
	return 0;
}

static int set_bool(const struct key *k, bool *field, const char *value, char *err,
		    size_t errlen)
{
	char q[QUOTE_BUFSZ];

	for (size_t i = 0; i < ARRAY_SIZE(bool_names); i++) {
		if (strcasecmp(value, bool_names[i].name) == 0) {
			*field = bool_names[i].value;
			return 0;
		}
	}
	set_err(err, errlen, "%s: %s is not yes/no, true/false, on/off or 1/0", k->name,
		quote(value, q, sizeof(q)));
	return -EINVAL;
}

const char *const ioacct_view_names[IOACCT_NR_VIEWS] = { "cache", "mmap", "readahead", "uring" };

int ioacct_spans_parse(const char *s, uint32_t *spans)
{
	if (!s || strcmp(s, "all") == 0)
		*spans = IOACCT_SPANS_ALL;
	else if (strcmp(s, "posix") == 0)
		*spans = IOACCT_SPANS_POSIX;
	else if (strcmp(s, "mpiio") == 0)
		*spans = IOACCT_SPANS_MPIIO;
	else
		return -EINVAL;
	return 0;
}

int ioacct_views_parse(const char *s, uint32_t *mask, char *err, size_t errlen)
{
	char q[QUOTE_BUFSZ];
	uint32_t m = 0;
	const char *p = s;

	if (!strcasecmp(s, "all") || !strcasecmp(s, "none")) {
		*mask = strcasecmp(s, "all") ? 0 : IOACCT_VIEWS_ALL;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < IOACCT_NR_VIEWS; i++)
			if (len == strlen(ioacct_view_names[i]) && !strncasecmp(p, ioacct_view_names[i], len))
				break;
		if (i == IOACCT_NR_VIEWS) {
			set_err(err, errlen, "%s is not all, none, or a comma-separated list of "
				"cache, mmap, readahead and uring", quote(s, q, sizeof(q)));
			return -EINVAL;
		}
		m |= 1u << i;
		p += len;
		if (*p == ',' && p[1])
			p++;
		else if (*p == ',') {
			set_err(err, errlen, "%s ends with a comma", quote(s, q, sizeof(q)));
			return -EINVAL;
		}
	}
	*mask = m;
	return 0;
}

static int set_views(const struct key *k, uint32_t *field, const char *value, char *err,
		     size_t errlen)
{
	char msg[MSG_MAX];
	bool on;

	if (k->type == KEY_VIEWS_BOOL) {
		if (set_bool(k, &on, value, err, errlen))
			return -EINVAL;
		*field = on ? IOACCT_VIEWS_ALL : 0;
		return 0;
	}
	if (ioacct_views_parse(value, field, msg, sizeof(msg))) {
		set_err(err, errlen, "%s: %s", k->name, msg);
		return -EINVAL;
	}
	return 0;
}

int ioacct_listen_parse(const char *s, int *family, void *addr, uint16_t *port)
{
	char host[INET6_ADDRSTRLEN + 1];
	struct in6_addr buf;
	const char *colon;
	uint64_t p;
	size_t len;
	int fam = AF_INET;

	if (s[0] == '[') {
		colon = strstr(s, "]:");
		if (!colon)
			return -EINVAL;
		len = (size_t)(colon - s - 1);
		s++;
		colon++;
		fam = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		len = (size_t)(colon - s);
	}
	if (len == 0 || len >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, len);
	host[len] = '\0';
	if (parse_uint(colon + 1, 1, 65535, &p))
		return -EINVAL;
	if (inet_pton(fam, host, &buf) != 1)
		return -EINVAL;
	/*
	 * [::ffff:127.0.0.1] is an IPv4 address: an IPv6 socket bound to it
	 * with IPV6_V6ONLY, as libmicrohttpd makes them, would refuse to start.
	 */
	if (fam == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&buf)) {
		fam = AF_INET;
		memmove(&buf, &buf.s6_addr[12], sizeof(struct in_addr));
	}
	if (addr)
		memcpy(addr, &buf, fam == AF_INET ? sizeof(struct in_addr) : sizeof(struct in6_addr));
	if (family)
		*family = fam;
	if (port)
		*port = (uint16_t)p;
	return 0;
}

int ioacct_addrs_parse(const char *s, struct in6_addr *out, size_t max)
{
	size_t n = 0;

	while (*s) {
		char host[INET6_ADDRSTRLEN + 1];
		size_t len = strcspn(s, ",");
		struct in6_addr a6;
		struct in_addr a4;
		size_t b = 0, e = len;

		while (b < e && (s[b] == ' ' || s[b] == '\t'))
			b++;
		while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		if (e == b || e - b >= sizeof(host) || n == max)
			return -EINVAL;
		memcpy(host, s + b, e - b);
		host[e - b] = '\0';
		if (inet_pton(AF_INET, host, &a4) == 1) {
			/* One form for both families: IPv4 as ::ffff:a.b.c.d. */
			memset(&a6, 0, sizeof(a6));
			a6.s6_addr[10] = 0xff;
			a6.s6_addr[11] = 0xff;
			memcpy(&a6.s6_addr[12], &a4, sizeof(a4));
		} else if (inet_pton(AF_INET6, host, &a6) != 1) {
			return -EINVAL;
		}
		if (out)
			out[n] = a6;
		n++;
		s += len;
		if (*s == ',' && !*++s)
			return -EINVAL;
	}
	return n ? (int)n : -EINVAL;
}

static int set_listen(const struct key *k, char *dst, const char *value, char *err,
		      size_t errlen)
{
	char q[QUOTE_BUFSZ];

	if (strlen(value) >= k->size || ioacct_listen_parse(value, NULL, NULL, NULL)) {
		set_err(err, errlen,
			"%s: %s is not ADDRESS:PORT (e.g. 127.0.0.1:9464 or [::1]:9464; "
			"port 1 .. 65535, numeric address)", k->name, quote(value, q, sizeof(q)));
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

static int set_addrs(const struct key *k, char *dst, const char *value, char *err, size_t errlen)
{
	char q[QUOTE_BUFSZ];

	if (strlen(value) >= k->size ||
	    ioacct_addrs_parse(value, NULL, IOACCT_ADDRS_MAX) < 0) {
		set_err(err, errlen,
			"%s: %s is not a list of numeric addresses (e.g. 10.0.0.5, ::1; at most "
			"%d, separated by commas)", k->name, quote(value, q, sizeof(q)),
			IOACCT_ADDRS_MAX);
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

int ioacct_libnames_parse(const char *s, char prefix[][IOACCT_LIBNAME_MAX], size_t max)
{
	size_t n = 0, len;

	if (!strcmp(s, "none"))
		return 0;
	for (;;) {
		len = strcspn(s, ",");
		if (len == 0 || n == max || len >= IOACCT_LIBNAME_MAX)
			return -EINVAL;
		for (size_t i = 0; i < len; i++)
			if (!(isalnum((unsigned char)s[i]) || strchr("_.+-", s[i]) ||
			      (s[i] == '*' && i == len - 1)))
				return -EINVAL;
		if (prefix) {
			memcpy(prefix[n], s, len);
			prefix[n][len - (s[len - 1] == '*')] = '\0';
		}
		n++;
		if (!s[len])
			return (int)n;
		s += len + 1;
	}
}

static int set_libnames(const struct key *k, char *dst, const char *value, char *err,
			size_t errlen)
{
	char q[QUOTE_BUFSZ];

	if (strlen(value) >= k->size || ioacct_libnames_parse(value, NULL, IOACCT_LIBNAMES_MAX) < 0) {
		set_err(err, errlen,
			"%s: %s is not \"none\" or a list of library names (e.g. libmpi.so*; at most "
			"%d, separated by commas, each at most %d characters, '*' only at the end)",
			k->name, quote(value, q, sizeof(q)), IOACCT_LIBNAMES_MAX, IOACCT_LIBNAME_MAX - 1);
		return -EINVAL;
	}
	ioacct_strlcpy(dst, value, k->size);
	return 0;
}

static int set_key(struct ioacct_config *cfg, const struct key *k, const char *value, char *err,
		   size_t errlen)
{
	void *field = (char *)cfg + k->off;

	if (value[0] == '\0') {
		set_err(err, errlen, "%s: missing value", k->name);
		return -EINVAL;
	}
	switch (k->type) {
	case KEY_PATH:
	case KEY_SOCKET:
		return set_path(k, field, value, err, errlen);
	case KEY_SECONDS_NS:
	case KEY_SECONDS_MS:
		return set_seconds(k, field, value, err, errlen);
	case KEY_UINT32:
		return set_uint32(k, field, value, err, errlen);
	case KEY_CONTROLLER:
	case KEY_NAME:
		return set_name(k, field, value, err, errlen);
	case KEY_CGROUP_PATH:
		return set_cgroup_path(k, field, value, err, errlen);
	case KEY_URL:
		return set_url(k, field, value, err, errlen);
	case KEY_PROBE_MODE:
	case KEY_CGROUP_MODE:
	case KEY_DETACH:
	case KEY_LOG_LEVEL:
		return set_keyword(k, field, value, err, errlen);
	case KEY_BOOL:
		return set_bool(k, field, value, err, errlen);
	case KEY_CONNINFO:
		return set_conninfo(k, field, value, err, errlen);
	case KEY_LISTEN:
		return set_listen(k, field, value, err, errlen);
	case KEY_ADDRS:
		return set_addrs(k, field, value, err, errlen);
	case KEY_VIEWS:
	case KEY_VIEWS_BOOL:
		return set_views(k, field, value, err, errlen);
	case KEY_LIBNAMES:
		return set_libnames(k, field, value, err, errlen);
	case KEY_DURATION:
	case KEY_DURATION_S:
		return set_duration(k, field, value, err, errlen);
	}
	return -EINVAL;
}

int ioacct_config_set(struct ioacct_config *cfg, const char *key, const char *value, char *err,
		      size_t errlen)
{
	const struct key *k = find_key(key);

	set_err(err, errlen, "%s", "");
	if (!k) {
		unknown_key(key, err, errlen);
		return -ENOENT;
	}
	return set_key(cfg, k, value, err, errlen);
}

static char *trim(char *s)
{
	char *end;

	while (is_space(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_space(end[-1]))
		end--;
	*end = '\0';
	return s;
}

/* One line without its '\n', NUL-terminated; the comment is cut off here. */
static int parse_line(struct ioacct_config *cfg, char *line, unsigned int lineno,
		      unsigned int seen[NKEYS], char *msg, size_t msglen)
{
	char q[QUOTE_BUFSZ], *eq, *key, *value;
	const struct key *k;

	for (char *p = line; *p; p++) {
		if (*p == '#' && (p == line || is_space(p[-1]))) {
			*p = '\0';
			break;
		}
	}
	line = trim(line);
	if (*line == '\0')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		set_err(msg, msglen, "%s is not \"key = value\"", quote(line, q, sizeof(q)));
		return -EINVAL;
	}
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (*key == '\0') {
		set_err(msg, msglen, "missing key before \"=\"");
		return -EINVAL;
	}
	k = find_key(key);
	if (!k) {
		unknown_key(key, msg, msglen);
		return -EINVAL;
	}
	/* A key and its old name (node_name and node, views and page_cache_views) are one setting. */
	for (size_t i = 0; i < NKEYS; i++) {
		if (!seen[i] || keys[i].off != k->off)
			continue;
		if (&keys[i] == k)
			set_err(msg, msglen, "%s: already set on line %u", k->name, seen[i]);
		else
			set_err(msg, msglen, "%s: already set on line %u, as %s", k->name, seen[i],
				keys[i].name);
		return -EINVAL;
	}
	seen[k - keys] = lineno;
	return set_key(cfg, k, value, msg, msglen);
}

static int load_stream(struct ioacct_config *cfg, FILE *f, const char *path, char *err,
		       size_t errlen)
{
	unsigned int seen[NKEYS] = { 0 };
	char line[LINE_MAX_BYTES + 1], msg[MSG_MAX];
	unsigned int lineno = 0;
	int c = 0, ret;

	while (c != EOF) {
		size_t len = 0;

		lineno++;
		/* Byte by byte: bounded memory, and NUL bytes are seen. */
		while ((c = getc(f)) != EOF && c != '\n') {
			if (c == '\0') {
				set_err(err, errlen, "%s:%u: NUL byte in the file", path, lineno);
				return -EINVAL;
			}
			if (len == LINE_MAX_BYTES) {
				set_err(err, errlen, "%s:%u: line longer than %d bytes", path,
					lineno, LINE_MAX_BYTES);
				return -EINVAL;
			}
			line[len++] = (char)c;
		}
		if (c == EOF && ferror(f)) {
			ret = errno ? -errno : -EIO;
			set_err(err, errlen, "%s: %s", path, strerror(-ret));
			return ret;
		}
		line[len] = '\0';
		ret = parse_line(cfg, line, lineno, seen, msg, sizeof(msg));
		if (ret < 0) {
			set_err(err, errlen, "%s:%u: %s", path, lineno, msg);
			return ret;
		}
	}
	return 0;
}

int ioacct_config_load(struct ioacct_config *cfg, const char *path, char *err, size_t errlen)
{
	bool optional = false;
	FILE *f;
	int ret;

	set_err(err, errlen, "%s", "");
	if (!path) {
		/* secure_getenv: a set-id program must not read a file the caller picks. */
		path = secure_getenv("IOACCT_CONF");
		if (!path || !*path) {
			path = IOACCT_CONFIG_FILE;
			optional = true;
		}
	}
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		if (ret == -ENOENT && optional)
			return 0;
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* fopen() accepts a directory: the first read fails with EISDIR. */
	ret = load_stream(cfg, f, path, err, errlen);
	fclose(f);
	return ret;
}
