/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <sched.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "model.h"

#define NS 1000000000ULL

static char tmpdir[PATH_MAX];
static unsigned int file_counter;

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_config.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	/* Tests that want the environment variable set it themselves. */
	unsetenv("IOACCT_CONF");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes `len` bytes (NULs allowed) to a fresh file; its path goes to `path`. */
static void write_file(char *path, size_t pathlen, const char *data, size_t len)
{
	FILE *f;

	snprintf(path, pathlen, "%s/conf%u", tmpdir, ++file_counter);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Defaults, then `text` loaded over them. */
static int load_text(struct ioacct_config *cfg, const char *text, char *path, size_t pathlen,
		     char *err, size_t errlen)
{
	write_file(path, pathlen, text, strlen(text));
	ioacct_config_defaults(cfg);
	return ioacct_config_load(cfg, path, err, errlen);
}

static void load_ok(struct ioacct_config *cfg, const char *text)
{
	char path[PATH_MAX], err[2048];
	int ret = load_text(cfg, text, path, sizeof(path), err, sizeof(err));

	if (ret != 0)
		fail_msg("loading %s failed: %d: %s", text, ret, err);
	assert_string_equal(err, "");
}

/* Loading `text` fails on `line` with exactly `msg` after "path:line: ". */
static void load_fails(const char *text, unsigned int line, const char *msg)
{
	char path[PATH_MAX], err[2048], want[2048 + PATH_MAX];
	struct ioacct_config cfg;

	strcpy(err, "untouched");
	assert_int_equal(load_text(&cfg, text, path, sizeof(path), err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:%u: %s", path, line, msg);
	assert_string_equal(err, want);
	assert_null(strchr(err, '\n'));
}

/* Setting `key` to `value` through a file fails with exactly `msg` on line 1. */
static void value_fails(const char *key, const char *value, const char *msg)
{
	char text[8192];

	snprintf(text, sizeof(text), "%s = %s\n", key, value);
	load_fails(text, 1, msg);
}

static void test_defaults(void **state)
{
	struct ioacct_config cfg;
	char host[256] = "";

	(void)state;
	memset(&cfg, 0x5a, sizeof(cfg));
	ioacct_config_defaults(&cfg);
	assert_string_equal(cfg.socket_path, "/run/ioacct/ioacctd.sock");
	assert_string_equal(cfg.db_path, "/var/lib/ioacct/ioacct.db");
	assert_string_equal(cfg.pid_file, "/run/ioacct/ioacctd.pid");
	assert_string_equal(cfg.pin_dir, "/sys/fs/bpf/ioacct");
	assert_string_equal(cfg.user, "ioacct");
	assert_int_equal(cfg.probe_mode, IOACCT_PROBE_AUTO);
	assert_int_equal(cfg.bin_width_ns, 5 * NS);
	assert_int_equal(cfg.drain_interval_ms, 2000);
	assert_int_equal(cfg.reap_grace_ms, 30000);
	assert_int_equal(cfg.query_page_ms, 100);
	assert_int_equal(cfg.max_jobs, 1024);
	assert_int_equal(cfg.max_cgroups, 4096);
	assert_int_equal(cfg.max_entries, 65536);
	assert_int_equal(cfg.max_mountpoints, 4096);
	assert_string_equal(cfg.cgroup_v1_hierarchy, "freezer");
	assert_int_equal(cfg.cgroup_mode, IOACCT_CGROUP_AUTO);
	assert_string_equal(cfg.cgroup_parent, "ioacct");
	assert_string_equal(cfg.cluster, "");
	assert_int_equal(cfg.log_level, IOACCT_LOG_INFO);
	assert_false(cfg.private_data);
	assert_true(cfg.file_records);
	assert_true(cfg.rpc_probes);
	assert_int_equal(cfg.detach_when_idle, IOACCT_DETACH_AUTO);
	assert_string_equal(cfg.metrics_listen, "");
	assert_int_equal(cfg.metrics_linger_ms, 60000);
	assert_string_equal(cfg.metrics_tls_cert, "");
	assert_string_equal(cfg.metrics_auth_file, "");
	assert_string_equal(cfg.otlp_url, "");
	assert_int_equal(cfg.otlp_queue_kib, 4096);
	assert_int_equal(cfg.max_spans, 1000000);
	assert_string_equal(cfg.otlp_ca_file, "");
	assert_int_equal(cfg.pg_connect_timeout_ms, 10000);
	assert_int_equal(cfg.pg_statement_timeout_ms, 300000);
	assert_int_equal(cfg.pg_idle_timeout_ms, 60000);

	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	host[strcspn(host, ".")] = '\0';
	assert_string_equal(cfg.node, host);
	assert_null(strchr(cfg.node, '.'));
}

/* Only root can give a private UTS namespace a dotted host name. */
static void test_default_node_is_short(void **state)
{
	struct ioacct_config cfg;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWUTS) != 0 || sethostname("n17.cluster.example", 19) != 0)
			_exit(77);
		ioacct_config_defaults(&cfg);
		_exit(strcmp(cfg.node, "n17") == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_every_key(void **state)
{
	struct ioacct_config cfg;

	(void)state;
	load_ok(&cfg, "socket = /tmp/s.sock\n"
		      "db = /data/ioacct.db\n"
		      "pidfile = /tmp/d.pid\n"
		      "bpf_pin_dir = /sys/fs/bpf/other\n"
		      "user = slurm-io_2.x\n"
		      "probe_mode = kprobe\n"
		      "bin_width = 0.25\n"
		      "drain_interval = 1.5\n"
		      "max_jobs = 7\n"
		      "max_cgroups = 8\n"
		      "max_entries = 9\n"
		      "max_mountpoints = 10\n"
		      "max_traced_jobs = 0\n"
		      "max_trace_size = 64\n"
		      "otlp_url = http://collector.site:4318/v1/traces\n"
		      "otlp_queue = 128\n"
		      "max_spans = 50\n"
		      "cluster_db_connect_timeout = 3\n"
		      "cluster_db_statement_timeout = 1.5\n"
		      "cluster_db_idle_timeout = 20\n"
		      "cgroup_v1_hierarchy = net_cls\n"
		      "cgroup_mode = v1\n"
		      "cgroup_parent = system.slice/ioacct\n"
		      "cluster = tera-1.x_y\n"
		      "node = n042\n"
		      "log_level = debug\n"
		      "private_data = yes\n"
		      "file_records = no\n"
		      "rpc_probes = no\n"
		      "metrics_listen = 127.0.0.1:9464\n"
		      "metrics_linger = 2.5\n"
		      "metrics_tls_cert = /etc/ioacct/cert.pem\n"
		      "metrics_tls_key = /etc/ioacct/key.pem\n"
		      "metrics_auth_file = /etc/ioacct/metrics.passwd\n");
	assert_string_equal(cfg.socket_path, "/tmp/s.sock");
	assert_string_equal(cfg.db_path, "/data/ioacct.db");
	assert_string_equal(cfg.pid_file, "/tmp/d.pid");
	assert_string_equal(cfg.pin_dir, "/sys/fs/bpf/other");
	assert_string_equal(cfg.user, "slurm-io_2.x");
	assert_int_equal(cfg.probe_mode, IOACCT_PROBE_KPROBE);
	assert_int_equal(cfg.bin_width_ns, NS / 4);
	assert_int_equal(cfg.drain_interval_ms, 1500);
	assert_int_equal(cfg.max_jobs, 7);
	assert_int_equal(cfg.max_cgroups, 8);
	assert_int_equal(cfg.max_entries, 9);
	assert_int_equal(cfg.max_mountpoints, 10);
	assert_int_equal(cfg.max_traced_jobs, 0);
	assert_int_equal(cfg.max_trace_mib, 64);
	assert_string_equal(cfg.otlp_url, "http://collector.site:4318/v1/traces");
	assert_int_equal(cfg.otlp_queue_kib, 128);
	assert_int_equal(cfg.max_spans, 50);
	assert_int_equal(cfg.pg_connect_timeout_ms, 3000);
	assert_int_equal(cfg.pg_statement_timeout_ms, 1500);
	assert_int_equal(cfg.pg_idle_timeout_ms, 20000);
	assert_string_equal(cfg.cgroup_v1_hierarchy, "net_cls");
	assert_int_equal(cfg.cgroup_mode, IOACCT_CGROUP_V1);
	assert_string_equal(cfg.cgroup_parent, "system.slice/ioacct");
	assert_string_equal(cfg.cluster, "tera-1.x_y");
	assert_string_equal(cfg.node, "n042");
	assert_int_equal(cfg.log_level, IOACCT_LOG_DEBUG);
	assert_true(cfg.private_data);
	assert_false(cfg.file_records);
	assert_false(cfg.rpc_probes);
	assert_string_equal(cfg.metrics_listen, "127.0.0.1:9464");
	assert_int_equal(cfg.metrics_linger_ms, 2500);
	assert_string_equal(cfg.metrics_tls_cert, "/etc/ioacct/cert.pem");
	assert_string_equal(cfg.metrics_tls_key, "/etc/ioacct/key.pem");
	assert_string_equal(cfg.metrics_auth_file, "/etc/ioacct/metrics.passwd");

	/* A setting given under both its names is refused, as twice under one. */
	load_fails("page_cache_views = no\nviews = cache\n", 2,
		   "views: already set on line 1, as page_cache_views");
	load_fails("node = a\nnode_name = b\n", 2, "node_name: already set on line 1, as node");
	/* node_name is node's new name; the old one is still read. */
	load_ok(&cfg, "node_name = mc2\n");
	assert_string_equal(cfg.node, "mc2");
	load_ok(&cfg, "cluster_db = postgresql:///ioacct?host=/run/pg&sslmode=require\n");
	assert_string_equal(cfg.cluster_db, "postgresql:///ioacct?host=/run/pg&sslmode=require");
	load_ok(&cfg, "cluster_db = host=db1 dbname=ioacct user=ioacct passfile=/etc/ioacct/pgpass\n");
	assert_string_equal(cfg.cluster_db, "host=db1 dbname=ioacct user=ioacct passfile=/etc/ioacct/pgpass");
	/* The file is world-readable: no password in it, in either form. */
	load_fails("cluster_db = host=db1 password=s3cret\n", 1,
		   "cluster_db: holds a password, and this file is world-readable: put it in root's "
		   "~/.pgpass or in PGPASSFILE instead");
	load_fails("cluster_db = postgresql://ioacct:s3cret@db1/ioacct\n", 1,
		   "cluster_db: holds a password, and this file is world-readable: put it in root's "
		   "~/.pgpass or in PGPASSFILE instead");
	load_ok(&cfg, "cluster_db = postgresql://ioacct@db1:5433/ioacct\n");
	assert_string_equal(cfg.cluster_db, "postgresql://ioacct@db1:5433/ioacct");
	/* Any spelling of a password is one: percent-encoded in a URI, quoted or spaced. */
	for (size_t i = 0; i < 5; i++) {
		static const char *const pw[] = {
			"cluster_db = postgresql://db1/ioacct?pass%77ord=s3cret\n",
			"cluster_db = postgresql://db1/ioacct?%70%61%73%73%77%6f%72%64=s3cret\n",
			"cluster_db = postgresql://ioacct%3Ax@db1/ioacct?PASSWORD=s3cret\n",
			"cluster_db = host=db1 password = 's3 cret'\n",
			"cluster_db = host=db1 user=ioacct password='s3cret'\n",
		};

		load_fails(pw[i], 1, "cluster_db: holds a password, and this file is world-readable: "
				     "put it in root's ~/.pgpass or in PGPASSFILE instead");
	}
	/* Neither a URI nor keyword=value pairs: refused at start, not at the first export. */
	load_fails("cluster_db = db1:5432/ioacct\n", 1,
		   "cluster_db: \"db1:5432/ioacct\" is neither a postgresql:// URI nor keyword=value pairs "
		   "(keywords in a-z and _, values bare or in single quotes)");
	load_fails("cluster_db = host='db1 dbname=x\n", 1,
		   "cluster_db: \"host='db1 dbname=x\" is neither a postgresql:// URI nor keyword=value pairs "
		   "(keywords in a-z and _, values bare or in single quotes)");
	load_fails("cluster_db = postgresql://db1/io%zzacct\n", 1,
		   "cluster_db: \"postgresql://db1/io%zzacct\" is not a valid URI: a '%' must be followed by "
		   "two hex digits");
	load_ok(&cfg, "cluster_db = host='/run/my pg' dbname=io\\'acct sslmode=require\n");
	assert_string_equal(cfg.cluster_db, "host='/run/my pg' dbname=io\\'acct sslmode=require");
	/* A passfile is no password, nor is a database whose name says "pass". */
	load_ok(&cfg, "cluster_db = dbname=passwords_not_here passfile=/etc/ioacct/pgpass\n");

	load_ok(&cfg, "detach_when_idle = no\n");
	assert_int_equal(cfg.detach_when_idle, IOACCT_DETACH_NO);
	load_ok(&cfg, "detach_when_idle = YES\n");
	assert_int_equal(cfg.detach_when_idle, IOACCT_DETACH_YES);
	load_ok(&cfg, "probe_mode = fentry\ncgroup_mode = v2\nlog_level = error\n");
	assert_int_equal(cfg.probe_mode, IOACCT_PROBE_FENTRY);
	assert_int_equal(cfg.cgroup_mode, IOACCT_CGROUP_V2);
	assert_int_equal(cfg.log_level, IOACCT_LOG_ERR);
	load_ok(&cfg, "probe_mode = tracepoint\ncgroup_mode = auto\nlog_level = warning\n");
	assert_int_equal(cfg.probe_mode, IOACCT_PROBE_TRACEPOINT);
	assert_int_equal(cfg.cgroup_mode, IOACCT_CGROUP_AUTO);
	assert_int_equal(cfg.log_level, IOACCT_LOG_WARN);
}

static void test_load_over_values(void **state)
{
	char path[PATH_MAX], err[256];
	struct ioacct_config cfg;

	(void)state;
	ioacct_config_defaults(&cfg);
	cfg.max_jobs = 3;
	ioacct_strlcpy(cfg.cluster, "before", sizeof(cfg.cluster));
	write_file(path, sizeof(path), "cluster = after\n", 16);
	assert_int_equal(ioacct_config_load(&cfg, path, err, sizeof(err)), 0);
	assert_string_equal(cfg.cluster, "after");
	assert_int_equal(cfg.max_jobs, 3);
}

static void test_comments(void **state)
{
	struct ioacct_config cfg;

	(void)state;
	load_ok(&cfg, "# a comment = not a key\n"
		      "   \t# indented comment\n"
		      "#\n"
		      "max_jobs = 12 # trailing comment\n"
		      "max_cgroups = 13\t# after a tab\n"
		      "bpf_pin_dir = /a#b\n"
		      "db = /x/y#z # but this is a comment\n"
		      "pidfile = /p#\n");
	assert_int_equal(cfg.max_jobs, 12);
	assert_int_equal(cfg.max_cgroups, 13);
	assert_string_equal(cfg.pin_dir, "/a#b");
	assert_string_equal(cfg.db_path, "/x/y#z");
	assert_string_equal(cfg.pid_file, "/p#");
	/* '#' is not allowed in a node name: proves it was kept in the value. */
	load_fails("node = n1#\n", 1,
		   "node: \"n1#\" is not valid: use letters, digits, '_', '.' and '-', "
		   "at most 255 characters");
	/* A comment right after '=' leaves the value empty. */
	load_fails("cluster = # nothing\n", 1, "cluster: missing value");
}

static void test_whitespace(void **state)
{
	struct ioacct_config cfg;

	(void)state;
	load_ok(&cfg, "\n   \n\t\n"
		      "  \t max_jobs\t=\t 7 \t\n"
		      "max_cgroups=8\n"
		      "max_entries =9\r\n"
		      "cluster= c1   \n"
		      "max_mountpoints = 11");
	assert_int_equal(cfg.max_jobs, 7);
	assert_int_equal(cfg.max_cgroups, 8);
	assert_int_equal(cfg.max_entries, 9);
	assert_string_equal(cfg.cluster, "c1");
	/* The last line has no newline and still counts. */
	assert_int_equal(cfg.max_mountpoints, 11);

	load_ok(&cfg, "");
	assert_int_equal(cfg.max_jobs, 1024);
	/* Whitespace inside a value is part of it. */
	/* otlp_url: refused at start with the file, line and key (url.h has the rest). */
	load_fails("otlp_url = http://127.0.0.1:99999\n", 1,
		   "otlp_url: not a valid URL: port 99999 is out of range (1 .. 65535) "
		   "(use http[s]://HOST[:PORT][/PATH])");
	load_fails("\notlp_url = http://[::1\n", 2,
		   "otlp_url: not a valid URL: no ']' after the IPv6 address "
		   "(use http[s]://HOST[:PORT][/PATH])");
	/* The password is not repeated in the message. */
	load_fails("otlp_url = https://u:secret@c:4318\n", 1,
		   "otlp_url: not a valid URL: a user or password in the URL is not allowed (it "
		   "would be in a world-readable file and in the log) (use http[s]://HOST[:PORT][/PATH])");
	load_fails("otlp_url = http://:4318\n", 1,
		   "otlp_url: not a valid URL: no host (use http[s]://HOST[:PORT][/PATH])");
	load_ok(&cfg, "otlp_url = https://c:4318\notlp_ca_file = /etc/ssl/site-ca.pem\n");
	assert_string_equal(cfg.otlp_url, "https://c:4318");
	assert_string_equal(cfg.otlp_ca_file, "/etc/ssl/site-ca.pem");
	load_fails("otlp_queue = 63\n", 1, "otlp_queue: \"63\" is out of range (64 .. 1048576)");
	load_fails("max_spans = 0\n", 1, "max_spans: \"0\" is out of range (1 .. 1000000000)");
	/* user: an account name (daemon/privs.c looks it up at start). */
	load_fails("user = io acct\n", 1,
		   "user: \"io acct\" is not valid: use letters, digits, '_', '.' and '-', "
		   "at most 32 characters");
	load_fails("user = a/b\n", 1,
		   "user: \"a/b\" is not valid: use letters, digits, '_', '.' and '-', "
		   "at most 32 characters");
	load_fails("cluster = a b\n", 1,
		   "cluster: \"a b\" is not valid: use letters, digits, '_', '.' and '-', "
		   "at most 63 characters");
	/* Keys are not case-folded. */
	load_fails("\n\nMax_Jobs = 1\n", 3,
		   "unknown key \"Max_Jobs\" (valid keys: socket, db, pidfile, bpf_pin_dir, user, "
		   "probe_mode, detach_when_idle, bin_width, drain_interval, reap_grace, query_page_time, max_jobs, max_cgroups, max_entries, "
		   "max_mountpoints, max_files, file_records, max_traced_jobs, max_trace_size, otlp_url, otlp_ca_file, otlp_queue, max_spans, "
		   "cgroup_v1_hierarchy, cgroup_mode, "
		   "cgroup_parent, cluster, "
		   "node_name, node, cluster_db, cluster_db_connect_timeout, cluster_db_statement_timeout, "
		   "cluster_db_idle_timeout, merge_timeout, purge_after, downsample_after, downsample_width, "
		   "retention_interval, cluster_retention, log_level, private_data, views, mpi_libraries, "
		   "mpi_detach_after, hdf5_libraries, rpc_probes, page_cache_views, "
		   "metrics_listen, metrics_linger, "
		   "metrics_tls_cert, metrics_tls_key, metrics_auth_file, metrics_priority, "
		   "advice_small_requests_share, "
		   "advice_small_requests_min, advice_rw_intensive_share, advice_meta_time_share, "
		   "advice_meta_time_min, advice_meta_time_high, advice_meta_ops_per_mib, "
		   "advice_meta_ops_min, advice_fsync_min, advice_fsync_write_share, "
		   "advice_tiny_files_min, advice_tiny_file_size, advice_burst_ratio, "
		   "advice_burst_min_bandwidth, advice_shared_meta_ops, advice_local_share, "
		   "advice_step_imbalance, advice_notfound_min, advice_node_imbalance, "
		   "advice_pcache_min, advice_hit_ratio, advice_readahead_waste, "
		   "advice_mmap_faults_min, advice_file_writes_min, advice_file_small_write, "
		   "advice_file_reread, advice_file_reread_min, advice_file_reads_min, "
		   "advice_file_random_share, advice_file_random_size, advice_rpc_attr_min, "
		   "advice_rpc_writes_min, advice_rpc_small_write)");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	load_fails("max_jobs = 1\njust some words\n", 2,
		   "\"just some words\" is not \"key = value\"");
	load_fails("# c\n\n  = 5\n", 3, "missing key before \"=\"");
	load_fails("max_jobs =\n", 1, "max_jobs: missing value");
	load_fails("max_jobs =   \t \n", 1, "max_jobs: missing value");
	/* The message names the first line, loading stops at the first error. */
	load_fails("max_jobs = 2\n# x\nmax_jobs = 2\nnode = bad/\n", 3,
		   "max_jobs: already set on line 1");
	load_fails("max_jobs = 0\nnode = bad/\n", 1, "max_jobs: \"0\" is out of range (1 .. 65536)");
}

static void test_duplicate_only_within_file(void **state)
{
	char p1[PATH_MAX], p2[PATH_MAX], err[256];
	struct ioacct_config cfg;

	(void)state;
	ioacct_config_defaults(&cfg);
	write_file(p1, sizeof(p1), "max_jobs = 5\n", 13);
	write_file(p2, sizeof(p2), "max_jobs = 6\n", 13);
	assert_int_equal(ioacct_config_load(&cfg, p1, err, sizeof(err)), 0);
	assert_int_equal(ioacct_config_load(&cfg, p2, err, sizeof(err)), 0);
	assert_int_equal(cfg.max_jobs, 6);
}

static void test_long_line(void **state)
{
	static char text[8192];
	struct ioacct_config cfg;
	size_t n;

	(void)state;
	/* 4095 bytes before the newline are fine... */
	n = 0;
	text[n++] = '#';
	memset(text + n, 'x', 4094);
	n += 4094;
	memcpy(text + n, "\nmax_jobs = 3\n", 15);
	load_ok(&cfg, text);
	assert_int_equal(cfg.max_jobs, 3);

	/* ...4096 are not, even in a comment, even without a newline. */
	text[0] = '\n';
	text[1] = '#';
	memset(text + 2, 'x', 4095);
	text[4097] = '\0';
	load_fails(text, 2, "line longer than 4095 bytes");
	memcpy(text + 4097, "\nmax_jobs = 3\n", 15);
	load_fails(text, 2, "line longer than 4095 bytes");
}

static void test_nul_byte(void **state)
{
	static const char text[] = "max_jobs = 3\n# ok\ncluster = a\0b\n";
	char path[PATH_MAX], err[256], want[PATH_MAX + 64];
	struct ioacct_config cfg;

	(void)state;
	write_file(path, sizeof(path), text, sizeof(text) - 1);
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_load(&cfg, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: NUL byte in the file", path);
	assert_string_equal(err, want);
}

/* mpi_libraries: the names' literal starts, "none", and what is refused. */
static void test_mpi_libraries(void **state)
{
	char prefix[IOACCT_LIBNAMES_MAX][IOACCT_LIBNAME_MAX], err[512];
	static const char *const bad[] = { "", ",", "libmpi.so*,", "lib*mpi", "a/b", "lib mpi",
					   "a,b,c,d,e", "libmpi.so.40.30.2.x*" };
	struct ioacct_config cfg;

	(void)state;
	ioacct_config_defaults(&cfg);
	assert_string_equal(cfg.mpi_libraries, "libmpi.so*,libmpich.so*");
	assert_int_equal(ioacct_libnames_parse(cfg.mpi_libraries, prefix, IOACCT_LIBNAMES_MAX), 2);
	assert_string_equal(prefix[0], "libmpi.so");
	assert_string_equal(prefix[1], "libmpich.so");
	assert_int_equal(ioacct_libnames_parse("none", prefix, IOACCT_LIBNAMES_MAX), 0);
	assert_int_equal(ioacct_libnames_parse("libmpi_ibm.so.3", prefix, IOACCT_LIBNAMES_MAX), 1);
	assert_string_equal(prefix[0], "libmpi_ibm.so.3");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ioacct_libnames_parse(bad[i], NULL, IOACCT_LIBNAMES_MAX), -EINVAL);
	assert_int_equal(ioacct_config_set(&cfg, "mpi_libraries", "lib*mpi", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "mpi_libraries: \"lib*mpi\" is not \"none\" or a list"));
	assert_string_equal(cfg.mpi_libraries, "libmpi.so*,libmpich.so*");
	assert_int_equal(ioacct_config_set(&cfg, "mpi_libraries", "none", err, sizeof(err)), 0);
	assert_string_equal(cfg.mpi_libraries, "none");
}

static void test_unknown_key(void **state)
{
	static const char *const names[] = {
		"socket", "db", "pidfile", "bpf_pin_dir", "probe_mode", "bin_width",
		"drain_interval", "reap_grace", "query_page_time", "max_jobs", "max_cgroups", "max_entries", "max_mountpoints",
		"file_records", "cgroup_v1_hierarchy", "cgroup_mode", "cgroup_parent", "cluster", "node",
		"purge_after", "downsample_after", "downsample_width", "retention_interval", "cluster_retention",
		"log_level", "private_data", "views", "mpi_libraries", "rpc_probes", "page_cache_views", "metrics_listen", "metrics_linger",
		"metrics_tls_cert", "metrics_tls_key", "metrics_auth_file",
		"advice_small_requests_share", "advice_small_requests_min",
		"advice_rw_intensive_share", "advice_meta_time_share", "advice_meta_time_min",
		"advice_meta_time_high", "advice_meta_ops_per_mib", "advice_meta_ops_min",
		"advice_fsync_min", "advice_fsync_write_share", "advice_tiny_files_min",
		"advice_tiny_file_size", "advice_burst_ratio", "advice_burst_min_bandwidth",
		"advice_shared_meta_ops", "advice_local_share", "advice_step_imbalance",
		"advice_notfound_min", "advice_node_imbalance", "advice_pcache_min",
		"advice_hit_ratio", "advice_readahead_waste", "advice_mmap_faults_min",
		"advice_file_writes_min", "advice_file_small_write", "advice_file_reread",
		"advice_file_reread_min", "advice_file_reads_min", "advice_file_random_share",
		"advice_file_random_size", "advice_rpc_attr_min", "advice_rpc_writes_min",
		"advice_rpc_small_write",
	};
	char path[PATH_MAX], err[2048], want[PATH_MAX + 64];
	struct ioacct_config cfg;

	(void)state;
	assert_int_equal(load_text(&cfg, "max_jobs = 1\nbinwidth = 5\n", path, sizeof(path), err,
				   sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:2: unknown key \"binwidth\" (valid keys: ", path);
	assert_memory_equal(err, want, strlen(want));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char word[64];

		snprintf(word, sizeof(word), " %s%s", names[i],
			 i + 1 < sizeof(names) / sizeof(names[0]) ? "," : ")");
		if (!strstr(err, word))
			fail_msg("%s missing from: %s", names[i], err);
		/* Every listed key is really accepted. */
		assert_int_not_equal(ioacct_config_set(&cfg, names[i], "x", NULL, 0), -ENOENT);
	}
}

static void test_messages_stay_on_one_line(void **state)
{
	char text[512], want[512];

	(void)state;
	load_fails("cluster = a\x01\x1b[31mb\"c\\\n", 1,
		   "cluster: \"a\\x01\\x1b[31mb\\\"c\\\\\" is not valid: use letters, digits, "
		   "'_', '.' and '-', at most 63 characters");
	/* A long value is cut in the message. */
	snprintf(text, sizeof(text), "db = %0200d\n", 0);
	snprintf(want, sizeof(want), "db: \"%080d\"... is not an absolute path", 0);
	load_fails(text, 1, want);
}

static void test_bad_values(void **state)
{
	(void)state;
	value_fails("bin_width", "abc",
		    "bin_width: \"abc\" is not a number of seconds (e.g. 5 or 0.5)");
	value_fails("bin_width", "0.09", "bin_width: \"0.09\" is out of range (0.1 .. 86400 seconds)");
	value_fails("bin_width", "86400.000000001",
		    "bin_width: \"86400.000000001\" is out of range (0.1 .. 86400 seconds)");
	value_fails("bin_width", "5s", "bin_width: \"5s\" is not a number of seconds (e.g. 5 or 0.5)");
	value_fails("reap_grace", "86401",
		    "reap_grace: \"86401\" is out of range (0 .. 86400 seconds)");
	value_fails("query_page_time", "0.0001",
		    "query_page_time: \"0.0001\" is out of range (0.001 .. 60 seconds)");
	value_fails("drain_interval", "3601",
		    "drain_interval: \"3601\" is out of range (0.1 .. 3600 seconds)");
	value_fails("drain_interval", "0.05",
		    "drain_interval: \"0.05\" is out of range (0.1 .. 3600 seconds)");
	value_fails("drain_interval", "0.1005",
		    "drain_interval: \"0.1005\" is finer than a millisecond (at most 3 decimals)");
	value_fails("max_jobs", "-1", "max_jobs: \"-1\" is not a decimal whole number");
	value_fails("max_jobs", "+1", "max_jobs: \"+1\" is not a decimal whole number");
	value_fails("max_jobs", "0x10", "max_jobs: \"0x10\" is not a decimal whole number");
	value_fails("max_jobs", "1.0", "max_jobs: \"1.0\" is not a decimal whole number");
	value_fails("max_jobs", "65537", "max_jobs: \"65537\" is out of range (1 .. 65536)");
	value_fails("max_jobs", "99999999999999999999999",
		    "max_jobs: \"99999999999999999999999\" is out of range (1 .. 65536)");
	value_fails("max_cgroups", "0", "max_cgroups: \"0\" is out of range (1 .. 1048576)");
	value_fails("max_cgroups", "1048577", "max_cgroups: \"1048577\" is out of range (1 .. 1048576)");
	value_fails("max_entries", "16777217",
		    "max_entries: \"16777217\" is out of range (1 .. 16777216)");
	value_fails("max_mountpoints", "1048577",
		    "max_mountpoints: \"1048577\" is out of range (1 .. 1048576)");
	value_fails("probe_mode", "ebpf",
		    "probe_mode: \"ebpf\" is not one of auto, fentry, kprobe, tracepoint, syscall-tp");
	value_fails("cgroup_mode", "v3", "cgroup_mode: \"v3\" is not one of auto, v2, v1");
	value_fails("detach_when_idle", "maybe", "detach_when_idle: \"maybe\" is not one of auto, yes, no");
	value_fails("log_level", "verbose",
		    "log_level: \"verbose\" is not one of error, warning, info, debug");
	value_fails("private_data", "maybe",
		    "private_data: \"maybe\" is not yes/no, true/false, on/off or 1/0");
	value_fails("file_records", "some",
		    "file_records: \"some\" is not yes/no, true/false, on/off or 1/0");
	value_fails("cgroup_v1_hierarchy", "name=systemd",
		    "cgroup_v1_hierarchy: \"name=systemd\" is not valid: use a cgroup v1 controller "
		    "name (a-z and _), at most 31 characters");
	value_fails("cgroup_v1_hierarchy", "Freezer",
		    "cgroup_v1_hierarchy: \"Freezer\" is not valid: use a cgroup v1 controller "
		    "name (a-z and _), at most 31 characters");
	value_fails("node", "n/1",
		    "node: \"n/1\" is not valid: use letters, digits, '_', '.' and '-', at most 255 "
		    "characters");
}

/* metrics_listen: a numeric address and a port, nothing a resolver would have to look up. */
static void test_metrics_listen(void **state)
{
	static const char *const good[] = { "127.0.0.1:9464", "0.0.0.0:1", "[::1]:65535",
					    "[::]:9464", "10.1.2.3:80", "[::ffff:127.0.0.1]:9464" };
	static const char *const bad[] = { "127.0.0.1", "localhost:9464", "127.0.0.1:0",
					   "127.0.0.1:65536", "127.0.0.1:", ":9464", "::1:9464",
					   "[::1]9464", "[::1]:", "[127.0.0.1]:80", "1.2.3.4:+80",
					   "1.2.3.4:80 ", "[]:80" };
	struct ioacct_config cfg;
	unsigned char addr[16];
	char err[512], want[512];
	uint16_t port = 0;
	int family = 0;

	(void)state;
	ioacct_config_defaults(&cfg);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(ioacct_config_set(&cfg, "metrics_listen", good[i], err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ioacct_config_set(&cfg, "metrics_listen", bad[i], err, sizeof(err)),
				 -EINVAL);
		snprintf(want, sizeof(want), "metrics_listen: \"%s\" is not ADDRESS:PORT (e.g. "
			 "127.0.0.1:9464 or [::1]:9464; port 1 .. 65535, numeric address)", bad[i]);
		assert_string_equal(err, want);
	}
	assert_int_equal(ioacct_listen_parse("127.0.0.1:9464", &family, addr, &port), 0);
	assert_int_equal(family, AF_INET);
	assert_int_equal(port, 9464);
	assert_memory_equal(addr, "\x7f\0\0\x01", 4);
	assert_int_equal(ioacct_listen_parse("[::1]:80", &family, addr, &port), 0);
	assert_int_equal(family, AF_INET6);
	assert_int_equal(port, 80);
	assert_memory_equal(addr, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	/* An IPv4 address written as IPv6 is served as IPv4 (an IPv6-only socket could not bind it). */
	assert_int_equal(ioacct_listen_parse("[::ffff:127.0.0.1]:9464", &family, addr, &port), 0);
	assert_int_equal(family, AF_INET);
	assert_int_equal(port, 9464);
	assert_memory_equal(addr, "\x7f\0\0\x01", 4);
	value_fails("metrics_linger", "86401",
		    "metrics_linger: \"86401\" is out of range (0 .. 86400 seconds)");
}

/* metrics_priority: numeric addresses, IPv4 ones in their v4-mapped form. */
static void test_metrics_priority(void **state)
{
	static const char *const bad[] = { "", "localhost", "127.0.0.1,", ",::1", "1.2.3.4:80",
					   "10.0.0.1,,10.0.0.2", "[::1]", "1.2.3",
					   "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17" };
	struct in6_addr a[IOACCT_ADDRS_MAX], want4, want6;
	struct ioacct_config cfg;
	char err[512];

	(void)state;
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &want4);
	inet_pton(AF_INET6, "fe80::1", &want6);
	assert_int_equal(ioacct_addrs_parse("127.0.0.1", a, IOACCT_ADDRS_MAX), 1);
	assert_memory_equal(&a[0], &want4, sizeof(want4));
	assert_int_equal(ioacct_addrs_parse(" 127.0.0.1 ,fe80::1,\t::ffff:127.0.0.1", a,
					    IOACCT_ADDRS_MAX), 3);
	assert_memory_equal(&a[0], &want4, sizeof(want4));
	assert_memory_equal(&a[1], &want6, sizeof(want6));
	assert_memory_equal(&a[2], &want4, sizeof(want4));
	assert_int_equal(ioacct_addrs_parse("1.1.1.1,2.2.2.2", a, 1), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ioacct_addrs_parse(bad[i], a, IOACCT_ADDRS_MAX), -EINVAL);
	load_ok(&cfg, "metrics_priority = 10.0.0.5, ::1\n");
	assert_string_equal(cfg.metrics_priority, "10.0.0.5, ::1");
	value_fails("metrics_priority", "prometheus.example",
		    "metrics_priority: \"prometheus.example\" is not a list of numeric addresses "
		    "(e.g. 10.0.0.5, ::1; at most 16, separated by commas)");
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_set(&cfg, "metrics_priority", "1.2.3.4:80", err, sizeof(err)),
			 -EINVAL);
}

static void test_ranges(void **state)
{
	struct ioacct_config cfg;

	(void)state;
	load_ok(&cfg, "max_jobs = 1\nmax_cgroups = 1\nmax_entries = 1\nmax_mountpoints = 1\n"
		      "bin_width = 0.1\ndrain_interval = 0.1\n");
	assert_int_equal(cfg.max_jobs, 1);
	assert_int_equal(cfg.max_cgroups, 1);
	assert_int_equal(cfg.max_entries, 1);
	assert_int_equal(cfg.max_mountpoints, 1);
	assert_int_equal(cfg.bin_width_ns, NS / 10);
	assert_int_equal(cfg.drain_interval_ms, 100);
	load_ok(&cfg, "max_jobs = 65536\nmax_cgroups = 1048576\nmax_entries = 16777216\n"
		      "max_mountpoints = 001048576\nbin_width = 86400\ndrain_interval = 3600.000\n");
	assert_int_equal(cfg.max_jobs, 65536);
	assert_int_equal(cfg.max_cgroups, 1048576);
	assert_int_equal(cfg.max_entries, 16777216);
	assert_int_equal(cfg.max_mountpoints, 1048576);
	assert_int_equal(cfg.bin_width_ns, 86400 * NS);
	assert_int_equal(cfg.drain_interval_ms, 3600000);
	load_ok(&cfg, "bin_width = 1.000000001\ndrain_interval = 2.345\n");
	assert_int_equal(cfg.bin_width_ns, NS + 1);
	assert_int_equal(cfg.drain_interval_ms, 2345);
}

static void test_parse_seconds(void **state)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t ns;
	} cases[] = {
		{ "0.1", 0, 100000000ULL },
		{ "0.5", 0, 500000000ULL },
		{ "5", 0, 5 * NS },
		{ "86400", 0, 86400 * NS },
		{ "1.000000001", 0, 1000000001ULL },
		{ "0.123456789", 0, 123456789ULL },
		{ "2.25", 0, 2250000000ULL },
		{ "0", 0, 0 },
		{ "007.50", 0, 7500000000ULL },
		{ "18446744073.709551615", 0, UINT64_MAX },
		{ "18446744073.709551616", -ERANGE, 0 },
		{ "18446744074", -ERANGE, 0 },
		{ "99999999999999999999999999", -ERANGE, 0 },
		{ "1.0000000001", -EINVAL, 0 },
		{ "1.", -EINVAL, 0 },
		{ ".5", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ "1e3", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1.5.", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "inf", -EINVAL, 0 },
		{ "99999999999999999999999999x", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ns = 42;
		int ret = ioacct_parse_seconds(cases[i].s, 0, UINT64_MAX, &ns);

		if (ret != cases[i].ret)
			fail_msg("\"%s\": got %d, want %d", cases[i].s, ret, cases[i].ret);
		if (ret == 0 && ns != cases[i].ns)
			fail_msg("\"%s\": got %llu ns, want %llu", cases[i].s,
				 (unsigned long long)ns, (unsigned long long)cases[i].ns);
		if (ret != 0)
			assert_int_equal(ns, 42);
	}
}

static void test_parse_seconds_bounds(void **state)
{
	uint64_t ns = 0;

	(void)state;
	assert_int_equal(ioacct_parse_seconds("0.1", NS / 10, 86400 * NS, &ns), 0);
	assert_int_equal(ns, NS / 10);
	assert_int_equal(ioacct_parse_seconds("86400", NS / 10, 86400 * NS, &ns), 0);
	assert_int_equal(ns, 86400 * NS);
	assert_int_equal(ioacct_parse_seconds("0.099999999", NS / 10, 86400 * NS, &ns), -ERANGE);
	assert_int_equal(ioacct_parse_seconds("86400.000000001", NS / 10, 86400 * NS, &ns),
			 -ERANGE);
	assert_int_equal(ioacct_parse_seconds("x", NS / 10, 86400 * NS, &ns), -EINVAL);
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "4K", 0, 4096 },
		{ "64M", 0, 64ULL << 20 },
		{ "2G", 0, 2ULL << 30 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "17179869183G", 0, 17179869183ULL << 30 },
		{ "17179869184G", -ERANGE, 0 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1k", -EINVAL, 0 },
		{ "1KB", -EINVAL, 0 },
		{ "1T", -EINVAL, 0 },
		{ "1.5M", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 42;
		int ret = ioacct_parse_size(cases[i].s, &v);

		if (ret != cases[i].ret)
			fail_msg("\"%s\": got %d, want %d", cases[i].s, ret, cases[i].ret);
		if (ret == 0 && v != cases[i].v)
			fail_msg("\"%s\": got %llu, want %llu", cases[i].s, (unsigned long long)v,
				 (unsigned long long)cases[i].v);
		if (ret != 0)
			assert_int_equal(v, 42);
	}
}

static void test_booleans(void **state)
{
	static const char *const yes[] = { "yes", "true", "on", "1", "YES", "True", "On" };
	static const char *const no[] = { "no", "false", "off", "0", "NO", "False", "OFF" };
	struct ioacct_config cfg;
	char err[256];

	(void)state;
	ioacct_config_defaults(&cfg);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		cfg.private_data = false;
		assert_int_equal(ioacct_config_set(&cfg, "private_data", yes[i], err, sizeof(err)), 0);
		assert_true(cfg.private_data);
		assert_int_equal(ioacct_config_set(&cfg, "private_data", no[i], err, sizeof(err)), 0);
		assert_false(cfg.private_data);
	}
	assert_int_equal(ioacct_config_set(&cfg, "private_data", "2", err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_config_set(&cfg, "private_data", "y", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "private_data: \"y\" is not yes/no, true/false, on/off or 1/0");
}

/* views = all, none or a list; page_cache_views = yes/no, its first spelling. */
static void test_views(void **state)
{
	struct ioacct_config cfg;
	char err[256];

	(void)state;
	ioacct_config_defaults(&cfg);
	assert_int_equal(cfg.views, IOACCT_VIEWS_ALL);
	assert_int_equal(ioacct_config_set(&cfg, "views", "none", err, sizeof(err)), 0);
	assert_int_equal(cfg.views, 0);
	assert_int_equal(ioacct_config_set(&cfg, "views", "cache,uring", err, sizeof(err)), 0);
	assert_int_equal(cfg.views, 1u << 0 | 1u << 3);
	assert_int_equal(ioacct_config_set(&cfg, "views", "ALL", err, sizeof(err)), 0);
	assert_int_equal(cfg.views, IOACCT_VIEWS_ALL);
	assert_int_equal(ioacct_config_set(&cfg, "views", "readahead", err, sizeof(err)), 0);
	assert_int_equal(cfg.views, 1u << 2);
	assert_int_equal(ioacct_config_set(&cfg, "page_cache_views", "no", err, sizeof(err)), 0);
	assert_int_equal(cfg.views, 0);
	assert_int_equal(ioacct_config_set(&cfg, "page_cache_views", "yes", err, sizeof(err)), 0);
	assert_int_equal(cfg.views, IOACCT_VIEWS_ALL);
	value_fails("views", "cache,disk",
		    "views: \"cache,disk\" is not all, none, or a comma-separated list of cache, mmap, "
		    "readahead and uring");
	value_fails("views", "cache,", "views: \"cache,\" ends with a comma");
	value_fails("views", "cache,,mmap",
		    "views: \"cache,,mmap\" is not all, none, or a comma-separated list of cache, mmap, "
		    "readahead and uring");
	value_fails("page_cache_views", "cache",
		    "page_cache_views: \"cache\" is not yes/no, true/false, on/off or 1/0");
	/* A value refused changes nothing. */
	assert_int_equal(ioacct_config_set(&cfg, "views", "mmap, uring", err, sizeof(err)), -EINVAL);
	assert_int_equal(cfg.views, IOACCT_VIEWS_ALL);
}

static void test_paths(void **state)
{
	static const char *const keys[] = { "socket", "db", "pidfile", "bpf_pin_dir" };
	struct ioacct_config cfg;
	char err[256], want[256];

	(void)state;
	ioacct_config_defaults(&cfg);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		assert_int_equal(ioacct_config_set(&cfg, keys[i], "run/x", err, sizeof(err)),
				 -EINVAL);
		snprintf(want, sizeof(want), "%s: \"run/x\" is not an absolute path", keys[i]);
		assert_string_equal(err, want);
		assert_int_equal(ioacct_config_set(&cfg, keys[i], "./x", err, sizeof(err)), -EINVAL);
	}
	assert_string_equal(cfg.socket_path, "/run/ioacct/ioacctd.sock");
	value_fails("pidfile", "ioacctd.pid", "pidfile: \"ioacctd.pid\" is not an absolute path");
}

static void test_socket_too_long(void **state)
{
	const size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	char path[512], want[1024], q[128];
	struct ioacct_config cfg;
	char err[1024];

	(void)state;
	ioacct_config_defaults(&cfg);
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[sun_max] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "socket", path, err, sizeof(err)), 0);
	assert_string_equal(cfg.socket_path, path);

	path[sun_max] = 'a';
	path[sun_max + 1] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "socket", path, err, sizeof(err)), -EINVAL);
	snprintf(q, sizeof(q), "%.80s", path);
	snprintf(want, sizeof(want),
		 "socket: \"%s\"... is too long for a Unix socket (at most %zu bytes, the size of "
		 "sun_path)",
		 q, sun_max);
	assert_string_equal(err, want);
	/* Other paths have no such limit. */
	assert_int_equal(ioacct_config_set(&cfg, "db", path, err, sizeof(err)), 0);
	assert_string_equal(cfg.db_path, path);
}

static void test_path_too_long(void **state)
{
	static char path[PATH_MAX + 1];
	struct ioacct_config cfg;
	char err[1024];

	(void)state;
	ioacct_config_defaults(&cfg);
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[PATH_MAX - 1] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "pidfile", path, err, sizeof(err)), 0);
	assert_string_equal(cfg.pid_file, path);
	path[PATH_MAX - 1] = 'a';
	path[PATH_MAX] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "bpf_pin_dir", path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is too long (at most 4095 bytes)"));
	assert_string_equal(cfg.pin_dir, "/sys/fs/bpf/ioacct");
}

static void test_names(void **state)
{
	struct ioacct_config cfg;
	char name[300], err[1024];

	(void)state;
	ioacct_config_defaults(&cfg);
	memset(name, 'c', sizeof(name));
	name[63] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "cluster", name, err, sizeof(err)), 0);
	assert_string_equal(cfg.cluster, name);
	name[63] = 'c';
	name[64] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "cluster", name, err, sizeof(err)), -EINVAL);

	name[31] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "cgroup_v1_hierarchy", name, err, sizeof(err)), 0);
	assert_string_equal(cfg.cgroup_v1_hierarchy, name);
	name[31] = 'c';
	name[32] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "cgroup_v1_hierarchy", name, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ioacct_config_set(&cfg, "cgroup_v1_hierarchy", "cpu1", err, sizeof(err)),
			 -EINVAL);

	memset(name, 'n', sizeof(name));
	name[255] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "node", name, err, sizeof(err)), 0);
	assert_string_equal(cfg.node, name);
	name[255] = 'n';
	name[256] = '\0';
	assert_int_equal(ioacct_config_set(&cfg, "node", name, err, sizeof(err)), -EINVAL);
	assert_int_equal(ioacct_config_set(&cfg, "node", "Node-1.a_b", err, sizeof(err)), 0);
	assert_string_equal(cfg.node, "Node-1.a_b");
}

static void test_cgroup_parent(void **state)
{
	static const char *const good[] = { "a", "a/b", "a..b/c", "..a", "a/b../c", "x.slice" };
	static const char *const bad_dotdot[] = { "..", "../a", "a/..", "a/../b", "a//../b" };
	struct ioacct_config cfg;
	char err[256], want[256];

	(void)state;
	ioacct_config_defaults(&cfg);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(ioacct_config_set(&cfg, "cgroup_parent", good[i], err, sizeof(err)),
				 0);
		assert_string_equal(cfg.cgroup_parent, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad_dotdot) / sizeof(bad_dotdot[0]); i++) {
		assert_int_equal(ioacct_config_set(&cfg, "cgroup_parent", bad_dotdot[i], err,
						   sizeof(err)),
				 -EINVAL);
		snprintf(want, sizeof(want),
			 "cgroup_parent: \"%s\" must not contain \"..\" components", bad_dotdot[i]);
		assert_string_equal(err, want);
	}
	value_fails("cgroup_parent", "/ioacct",
		    "cgroup_parent: \"/ioacct\" must be relative to the cgroup root");
}

static void test_config_set(void **state)
{
	struct ioacct_config cfg;
	char err[1024];

	(void)state;
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_set(&cfg, "bin_width", "0.5", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(cfg.bin_width_ns, NS / 2);
	assert_int_equal(ioacct_config_set(&cfg, "nope", "1", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown key \"nope\" (valid keys: socket, db, "));
	assert_ptr_equal(strstr(err, "unknown"), err);
	assert_int_equal(ioacct_config_set(&cfg, "max_jobs", "", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "max_jobs: missing value");
	/* No buffer, or a small one, is fine. */
	assert_int_equal(ioacct_config_set(&cfg, "max_jobs", "x", NULL, 0), -EINVAL);
	assert_int_equal(ioacct_config_set(&cfg, "max_jobs", "x", err, 5), -EINVAL);
	assert_string_equal(err, "max_");
	assert_int_equal(cfg.max_jobs, 1024);
}

static void test_env_override(void **state)
{
	char path[PATH_MAX], missing[PATH_MAX + 32], err[1024], want[PATH_MAX + 128];
	struct ioacct_config cfg;

	(void)state;
	write_file(path, sizeof(path), "max_jobs = 77\n", 14);
	assert_int_equal(setenv("IOACCT_CONF", path, 1), 0);
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_load(&cfg, NULL, err, sizeof(err)), 0);
	assert_int_equal(cfg.max_jobs, 77);

	/* An explicit path wins over the environment. */
	write_file(path, sizeof(path), "max_jobs = 78\n", 14);
	assert_int_equal(ioacct_config_load(&cfg, path, err, sizeof(err)), 0);
	assert_int_equal(cfg.max_jobs, 78);

	/* A file named in the environment must exist. */
	snprintf(missing, sizeof(missing), "%s/nonexistent", tmpdir);
	assert_int_equal(setenv("IOACCT_CONF", missing, 1), 0);
	assert_int_equal(ioacct_config_load(&cfg, NULL, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: %s", missing, strerror(ENOENT));
	assert_string_equal(err, want);

	/* Errors in it are reported with its name. */
	write_file(path, sizeof(path), "max_jobs = x\n", 13);
	assert_int_equal(setenv("IOACCT_CONF", path, 1), 0);
	assert_int_equal(ioacct_config_load(&cfg, NULL, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:1: max_jobs: \"x\" is not a decimal whole number", path);
	assert_string_equal(err, want);
	unsetenv("IOACCT_CONF");
}

static void test_default_file_missing(void **state)
{
	struct ioacct_config cfg, ref;
	char err[1024] = "untouched";

	(void)state;
	if (access(IOACCT_CONFIG_FILE, F_OK) == 0 || errno != ENOENT)
		skip();
	ioacct_config_defaults(&cfg);
	ioacct_config_defaults(&ref);
	assert_int_equal(ioacct_config_load(&cfg, NULL, err, sizeof(err)), 0);
	assert_memory_equal(&cfg, &ref, sizeof(cfg));
	assert_string_equal(err, "");
	/* An empty variable means "not set". */
	assert_int_equal(setenv("IOACCT_CONF", "", 1), 0);
	assert_int_equal(ioacct_config_load(&cfg, NULL, err, sizeof(err)), 0);
	unsetenv("IOACCT_CONF");
	/* The same file named explicitly must exist. */
	assert_int_equal(ioacct_config_load(&cfg, IOACCT_CONFIG_FILE, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, IOACCT_CONFIG_FILE ": No such file or directory");
}

static void test_explicit_file_missing(void **state)
{
	char path[PATH_MAX + 32], err[1024], want[PATH_MAX + 128];
	struct ioacct_config cfg;

	(void)state;
	snprintf(path, sizeof(path), "%s/does-not-exist.conf", tmpdir);
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_load(&cfg, path, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);
}

static void test_directory(void **state)
{
	char err[1024], want[PATH_MAX + 64];
	struct ioacct_config cfg;

	(void)state;
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_load(&cfg, tmpdir, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", tmpdir);
	assert_string_equal(err, want);
}

static void test_unreadable(void **state)
{
	char path[PATH_MAX], err[1024], want[PATH_MAX + 64];
	struct ioacct_config cfg;

	(void)state;
	/* root reads a mode 000 file anyway. */
	if (geteuid() == 0)
		skip();
	write_file(path, sizeof(path), "max_jobs = 1\n", 13);
	assert_int_equal(chmod(path, 0), 0);
	ioacct_config_defaults(&cfg);
	assert_int_equal(ioacct_config_load(&cfg, path, err, sizeof(err)), -EACCES);
	snprintf(want, sizeof(want), "%s: Permission denied", path);
	assert_string_equal(err, want);
}

static void test_probe_mode_names(void **state)
{
	(void)state;
	assert_string_equal(ioacct_probe_mode_name(IOACCT_PROBE_AUTO), "auto");
	assert_string_equal(ioacct_probe_mode_name(IOACCT_PROBE_FENTRY), "fentry");
	assert_string_equal(ioacct_probe_mode_name(IOACCT_PROBE_KPROBE), "kprobe");
	assert_string_equal(ioacct_probe_mode_name(IOACCT_PROBE_TRACEPOINT), "tracepoint");
	assert_string_equal(ioacct_probe_mode_name(IOACCT_PROBE_SYSCALL_TP), "syscall-tp");
	assert_string_equal(ioacct_probe_mode_name((enum ioacct_probe_mode)99), "?");
	for (int m = IOACCT_PROBE_AUTO; m <= IOACCT_PROBE_SYSCALL_TP; m++)
		assert_int_equal(
			ioacct_probe_mode_from_name(ioacct_probe_mode_name((enum ioacct_probe_mode)m)),
			m);
	assert_int_equal(ioacct_probe_mode_from_name("KPROBE"), IOACCT_PROBE_KPROBE);
	assert_int_equal(ioacct_probe_mode_from_name("kprobes"), -1);
	assert_int_equal(ioacct_probe_mode_from_name(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_default_node_is_short),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_load_over_values),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_whitespace),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_duplicate_only_within_file),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_mpi_libraries),
		cmocka_unit_test(test_messages_stay_on_one_line),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_metrics_listen),
		cmocka_unit_test(test_metrics_priority),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_parse_seconds_bounds),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_socket_too_long),
		cmocka_unit_test(test_path_too_long),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_cgroup_parent),
		cmocka_unit_test(test_config_set),
		cmocka_unit_test(test_env_override),
		cmocka_unit_test(test_default_file_missing),
		cmocka_unit_test(test_explicit_file_missing),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_probe_mode_names),
		cmocka_unit_test(test_views),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
