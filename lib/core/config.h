/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration file, /etc/ioacct/ioacct.conf: `key = value` lines,
 * `#` starts a comment, blank lines are ignored. Unknown keys and bad values
 * are rejected with "file:line: message". Every program reads the same file.
 */
#ifndef IOACCT_CONFIG_H
#define IOACCT_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "advice_limits.h"

#define IOACCT_CONFIG_FILE SYSCONFDIR "/ioacct/ioacct.conf"
/* The longest cluster_db connection string, and its NUL. */
#define IOACCT_CONNINFO_MAX 1024

enum ioacct_probe_mode {
	IOACCT_PROBE_AUTO = 0,
	IOACCT_PROBE_FENTRY,
	IOACCT_PROBE_KPROBE,
	IOACCT_PROBE_TRACEPOINT,
	IOACCT_PROBE_SYSCALL_TP,
};

/* detach_when_idle: auto = yes with the tracepoint backend, no with fentry and kprobe. */
enum ioacct_detach {
	IOACCT_DETACH_AUTO = 0,
	IOACCT_DETACH_YES,
	IOACCT_DETACH_NO,
};

enum ioacct_cgroup_mode {
	IOACCT_CGROUP_AUTO = 0,   /* v2 when usable, else the v1 hierarchy */
	IOACCT_CGROUP_V2,
	IOACCT_CGROUP_V1,
};

struct ioacct_config {
	char socket_path[PATH_MAX];      /* socket = /run/ioacct/ioacctd.sock */
	char db_path[PATH_MAX];          /* db = /var/lib/ioacct/ioacct.db */
	char pid_file[PATH_MAX];         /* pidfile = /run/ioacct/ioacctd.pid */
	char pin_dir[PATH_MAX];          /* bpf_pin_dir = /sys/fs/bpf/ioacct */
	char user[33];                   /* user = ioacct: the account ioacctd runs as once started (root: no switch) */
	enum ioacct_probe_mode probe_mode; /* probe_mode = auto */
	enum ioacct_detach detach_when_idle; /* detach_when_idle = auto: programs attached only while watching */
	uint64_t bin_width_ns;           /* bin_width = 5 (seconds, decimals allowed, 0.1 .. 86400) */
	uint64_t drain_interval_ms;      /* drain_interval = 2 (seconds, decimals allowed, 0.1 .. 3600) */
	uint64_t reap_grace_ms;          /* reap_grace = 30: seconds an emptied cgroup waits for its finish */
	uint64_t query_page_ms;          /* query_page_time = 0.1: seconds a QUERY or LIVE reply may take to build */
	uint32_t max_jobs;               /* max_jobs = 1024: watch slots (concurrent steps) */
	uint32_t max_cgroups;            /* max_cgroups = 4096: registered cgroups */
	uint32_t max_entries;            /* max_entries = 65536: (slot, mount, op, bin) entries in the kernel */
	uint32_t max_mountpoints;        /* max_mountpoints = 4096: path prefixes over all namespaces */
	uint32_t max_files;              /* max_files = 4096: per-file records per job step and node */
	bool file_records;               /* file_records = yes: the per-file records at all */
	uint32_t max_traced_jobs;        /* max_traced_jobs = 4: --io-monitor=trace jobs at once (0: none) */
	uint32_t max_trace_mib;          /* max_trace_size = 1024: MiB of DXT segments a traced job may keep */
	char otlp_url[512];              /* otlp_url = (empty: no spans) OTLP/HTTP collector of --io-monitor=spans */
	char otlp_ca_file[PATH_MAX];     /* otlp_ca_file = (empty: the system's) PEM CA certificates of an https:// otlp_url */
	uint32_t max_spans;              /* max_spans = 1000000: call spans a job sends from a node */
	uint32_t otlp_queue_kib;         /* otlp_queue = 4096: KiB of spans a job may queue (64 .. 1048576) */
	char cgroup_v1_hierarchy[32];    /* cgroup_v1_hierarchy = freezer */
	enum ioacct_cgroup_mode cgroup_mode; /* cgroup_mode = auto (iorun) */
	char cgroup_parent[PATH_MAX];    /* cgroup_parent = ioacct: iorun's cgroups go below it */
	char cluster[64];                /* cluster = (empty: Slurm's ClusterName; "iorun" for iorun) */
	char node[256];                  /* node_name = (default: the short host name); old name: node */
	char cluster_db[IOACCT_CONNINFO_MAX];           /* cluster_db = (empty: no cluster store): libpq connection string */
	uint32_t merge_timeout_s;        /* merge_timeout = 300: seconds a merged report waits for every node */
	uint64_t pg_connect_timeout_ms;   /* cluster_db_connect_timeout = 10: seconds to connect */
	uint64_t pg_statement_timeout_ms; /* cluster_db_statement_timeout = 300: a statement's, then its server is given up 5 s later */
	uint64_t pg_idle_timeout_ms;      /* cluster_db_idle_timeout = 60: a silent TCP peer (keepalives, tcp_user_timeout) */
	/* Retention of the node's store, as slurmdbd's PurgeJobAfter (duration.h); 0: off. */
	uint64_t purge_after_s;          /* purge_after = (off) jobs ended longer ago are deleted */
	uint64_t downsample_after_s;     /* downsample_after = (off) jobs ended longer ago get coarser series */
	uint64_t downsample_width_s;     /* downsample_width = 60s: their new bin width */
	uint64_t retention_interval_s;   /* retention_interval = 1hour: how often the daemon looks */
	bool cluster_retention;          /* cluster_retention = no: also purge/downsample cluster_db */
	int log_level;                   /* log_level = info */
	bool private_data;               /* private_data = no */
	uint32_t views;                  /* views = all: bit i for ioacct_view_names[i] (IOACCT_VIEWS_ALL) */
	char mpi_libraries[128];         /* mpi_libraries = libmpi.so*,libmpich.so* (none: no MPI-IO counters) */
	uint64_t mpi_detach_after_s;     /* mpi_detach_after = 10min: a library unused this long loses its uprobes */
	char hdf5_libraries[128];        /* hdf5_libraries = libhdf5* (none: no HDF5 counters; issue 39) */
	bool rpc_probes;                 /* rpc_probes = yes: the RPCs per job counted (issue 40; no: rpc=off:config) */
	char metrics_listen[64];         /* metrics_listen = (empty: off) ADDR:PORT of /metrics */
	uint64_t metrics_linger_ms;      /* metrics_linger = 60: seconds a finished job stays in /metrics */
	char metrics_tls_cert[PATH_MAX]; /* metrics_tls_cert = (empty: plain HTTP) PEM certificate chain */
	char metrics_tls_key[PATH_MAX];  /* metrics_tls_key = (empty) its PEM private key */
	char metrics_auth_file[PATH_MAX]; /* metrics_auth_file = (empty: no auth) user:crypt-hash lines */
	char metrics_priority[256];      /* metrics_priority = (empty) addresses with reserved /metrics slots */
	struct ioacct_advice_limits advice; /* advice_* = see advice_limits.h: report thresholds */
};

/*
 * mpi_libraries, hdf5_libraries: "none" (0) or up to max names, each a literal start of a
 * library's file name with an optional '*' at its end; the literal parts
 * into prefix (NULL: only checked). The count, or -EINVAL.
 */
#define IOACCT_LIBNAMES_MAX 4
#define IOACCT_LIBNAME_MAX 16
int ioacct_libnames_parse(const char *s, char prefix[][IOACCT_LIBNAME_MAX], size_t max);

/* Fills every field with its default. */
void ioacct_config_defaults(struct ioacct_config *cfg);

/*
 * Reads `path` over the values already in cfg. When `path` is NULL the
 * default file is read and its absence is not an error. Returns 0 or -errno;
 * on error `err` holds "path:line: what is wrong" (or "path: <strerror>").
 */
int ioacct_config_load(struct ioacct_config *cfg, const char *path, char *err, size_t errlen);

/* Sets one key as if read from a file; -EINVAL/-ENOENT with a message. */
int ioacct_config_set(struct ioacct_config *cfg, const char *key, const char *value,
		      char *err, size_t errlen);

/*
 * Parses a duration in seconds with optional decimals ("5", "0.5", "2.25")
 * into nanoseconds; -EINVAL when malformed, -ERANGE when outside [min_ns, max_ns].
 */
int ioacct_parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out_ns);
/* A byte count: digits and an optional K, M or G (powers of 1024). 0 or -EINVAL (-ERANGE on overflow). */
int ioacct_parse_size(const char *s, uint64_t *out);

/*
 * Parses metrics_listen's "IPv4:PORT" or "[IPv6]:PORT" (numeric address):
 * family AF_INET or AF_INET6, addr (struct in_addr or in6_addr, network
 * order) and port (host order); any output may be NULL. -EINVAL otherwise.
 * A v4-mapped address ([::ffff:127.0.0.1]:PORT) comes out as AF_INET.
 */
int ioacct_listen_parse(const char *s, int *family, void *addr, uint16_t *port);

/* The most addresses metrics_priority may list. */
#define IOACCT_ADDRS_MAX 16

/*
 * Parses a comma-separated list of numeric IPv4 or IPv6 addresses (blanks
 * around each allowed) into out[] (may be NULL), IPv4 ones as v4-mapped
 * IPv6 (::ffff:a.b.c.d), so that one comparison serves both. How many, or
 * -EINVAL when malformed, empty or longer than max.
 */
struct in6_addr;
int ioacct_addrs_parse(const char *s, struct in6_addr *out, size_t max);

/*
 * The views of issue 14 ioacctd may load, by name; `views` in ioacct.conf
 * is "all", "none" or a comma-separated list of them.
 */
#define IOACCT_NR_VIEWS 4
#define IOACCT_VIEWS_ALL ((1u << IOACCT_NR_VIEWS) - 1)
extern const char *const ioacct_view_names[IOACCT_NR_VIEWS]; /* cache, mmap, readahead, uring */

/* "all", "none" or a list of view names to a mask; -EINVAL (the name in err) otherwise. */
int ioacct_views_parse(const char *s, uint32_t *mask, char *err, size_t errlen);

/*
 * "posix", "mpiio" or "all" (spans=WHAT, iorun --spans=WHAT) as
 * IOACCT_SPANS_* (proto.h); NULL: all. 0, or -EINVAL for another word.
 */
int ioacct_spans_parse(const char *s, uint32_t *spans);

const char *ioacct_probe_mode_name(enum ioacct_probe_mode mode);
int ioacct_probe_mode_from_name(const char *name); /* -1 when unknown */

#endif /* IOACCT_CONFIG_H */
