// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacctd: the node daemon. Keeps the probes loaded, keyed by cgroup;
 * registers and finishes jobs on request over a Unix socket; drains closed
 * time bins into the SQLite store.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "jobs.h"
#include "log.h"
#include "metrics.h"
#include "probes.h"
#include "procfs.h"
#include "proto.h"
#include "store.h"

#define MAX_CLIENTS 64
/* A client that has not sent a whole request by then is dropped. */
#define CLIENT_TIMEOUT_MS 5000
#define REPLY_TIMEOUT_MS 2000

struct client {
	int fd;
	uid_t uid;
	uint64_t since_ms;
	struct ioacct_buf in;
};

struct daemon_opts {
	bool foreground;
	const char *config_file;
	const char *socket_path;
	const char *db_path;
	const char *probe_mode;
	const char *bin_width;
	const char *metrics_listen;
	bool verbose;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ioacctd [OPTIONS]\n"
		"Per-job I/O accounting daemon: keeps eBPF probes loaded, keyed by cgroup.\n"
		"\n"
		"  -f, --foreground         stay in the foreground, log to stderr\n"
		"  -c, --config FILE        configuration file (default %s)\n"
		"      --socket PATH        Unix socket to serve (config: socket)\n"
		"      --db PATH            SQLite store (config: db)\n"
		"      --probe-mode MODE    auto, fentry, kprobe or tracepoint (config: probe_mode)\n"
		"      --bin-width SECONDS  default time bin width (config: bin_width)\n"
		"      --metrics-listen ADDR:PORT  serve /metrics for Prometheus there\n"
		"                           (config: metrics_listen; e.g. 127.0.0.1:9464)\n"
		"  -v, --verbose            log debug messages\n"
		"  -h, --help               show this help\n"
		"  -V, --version            show the version\n"
		"\n"
		"See ioacctd(8) and ioacct.conf(5).\n",
		IOACCT_CONFIG_FILE);
}

static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	enum { OPT_SOCKET = 256, OPT_DB, OPT_PROBE, OPT_BIN, OPT_METRICS };
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "db", required_argument, NULL, OPT_DB },
		{ "probe-mode", required_argument, NULL, OPT_PROBE },
		{ "bin-width", required_argument, NULL, OPT_BIN },
		{ "metrics-listen", required_argument, NULL, OPT_METRICS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "fc:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 'c':
			o->config_file = optarg;
			break;
		case OPT_SOCKET:
			o->socket_path = optarg;
			break;
		case OPT_DB:
			o->db_path = optarg;
			break;
		case OPT_PROBE:
			o->probe_mode = optarg;
			break;
		case OPT_BIN:
			o->bin_width = optarg;
			break;
		case OPT_METRICS:
			o->metrics_listen = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("ioacctd %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ioacctd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int load_config(const struct daemon_opts *o, struct ioacct_config *cfg)
{
	char err[1024];
	int ret;

	ioacct_config_defaults(cfg);
	ret = ioacct_config_load(cfg, o->config_file, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "ioacctd: %s\n", err);
		return ret;
	}
#define OVERRIDE(opt, key)                                                             \
	if (opt && (ret = ioacct_config_set(cfg, key, opt, err, sizeof(err)))) {       \
		fprintf(stderr, "ioacctd: --%s: %s\n", key, err);                      \
		return ret;                                                            \
	}
	OVERRIDE(o->socket_path, "socket")
	OVERRIDE(o->db_path, "db")
	OVERRIDE(o->probe_mode, "probe_mode")
	OVERRIDE(o->bin_width, "bin_width")
	OVERRIDE(o->metrics_listen, "metrics_listen")
#undef OVERRIDE
	if (o->verbose)
		cfg->log_level = IOACCT_LOG_DEBUG;
	return 0;
}

/* A locked pidfile: a second daemon on the same pidfile refuses to start. */
static int pidfile_open(const char *path, int *out)
{
	char buf[32];
	int fd, ret;

	ret = ioacct_mkdir_p(path, 0755, true);
	if (ret) {
		log_err("cannot create the directory of %s: %s", path, strerror(-ret));
		return ret;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		log_err("cannot open pidfile %s: %s", path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		log_err("another ioacctd holds %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, strlen(buf), 0) < 0) {
		ret = -errno;
		log_err("cannot write pidfile %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (chdir("/"))
		return -errno;
	umask(022);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

/*
 * Binds the socket, replacing a stale one left by a dead daemon but never a
 * live one. Anyone may connect; what they may do is checked per request.
 */
static int socket_open(const char *path, int *out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, ret;

	ret = ioacct_mkdir_p(path, 0755, true);
	if (ret) {
		log_err("cannot create the directory of %s: %s", path, strerror(-ret));
		return ret;
	}
	if (ioacct_strlcpy(addr.sun_path, path, sizeof(addr.sun_path))) {
		log_err("socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
		log_err("another ioacctd is serving %s", path);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || chmod(path, 0666) ||
	    listen(fd, 128)) {
		ret = -errno;
		log_err("cannot serve %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	ioacct_buf_free(&c->in);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void client_accept(int lfd, struct client *clients)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct client *c = NULL;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			close(fd);
			continue;
		}
		for (int i = 0; i < MAX_CLIENTS && !c; i++)
			if (clients[i].fd < 0)
				c = &clients[i];
		if (!c) {
			log_warn("too many clients; refusing uid %u", (unsigned int)cred.uid);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cred.uid;
		c->since_ms = now_ms();
	}
}

static void reply_error(struct client *c, uint32_t seq, int status, const char *msg)
{
	struct ioacct_reply rep = { .seq = seq, .status = status };
	struct ioacct_buf out = { 0 };

	ioacct_strlcpy(rep.error, msg, sizeof(rep.error));
	if (ioacct_proto_encode_reply(&out, &rep) == 0)
		ioacct_proto_send(c->fd, &out, REPLY_TIMEOUT_MS);
	ioacct_buf_free(&out);
}

/*
 * Whether the peer has closed its socket: a REGISTER that arrives after its
 * client gave up (timeout) must not leave a job nobody will finish.
 * POLLHUP, not a read of 0 bytes: a client may shut down only its sending side.
 */
static bool peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* Reads what the client sent; once a whole request is there, serves it. */
static void client_read(struct client *c, struct ioacct_registry *reg)
{
	char err[512];
	size_t want = IOACCT_PROTO_HDR_LEN;
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct ioacct_buf out = { 0 };
	int ret;

	for (;;) {
		ssize_t n;

		if (c->in.len >= IOACCT_PROTO_HDR_LEN) {
			ret = ioacct_proto_header_check(c->in.data, &want, err, sizeof(err));
			if (ret) {
				log_warn("client uid %u: %s", (unsigned int)c->uid, err);
				reply_error(c, 0, ret, err);
				client_close(c);
				return;
			}
		}
		if (c->in.len >= want && c->in.len >= IOACCT_PROTO_HDR_LEN)
			break;
		if (c->in.cap < want) {
			uint8_t *nd = realloc(c->in.data, want);

			if (!nd) {
				client_close(c);
				return;
			}
			c->in.data = nd;
			c->in.cap = want;
		}
		n = read(c->fd, c->in.data + c->in.len, want - c->in.len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			if (c->in.len) {
				/* The peer may have shut down only its sending side: tell it why. */
				snprintf(err, sizeof(err), "request truncated: %zu of %zu bytes arrived",
					 c->in.len, want);
				log_warn("client uid %u: %s", (unsigned int)c->uid, err);
				reply_error(c, 0, -EPROTO, err);
			}
			client_close(c);
			return;
		}
		c->in.len += (size_t)n;
	}

	ret = ioacct_proto_decode_request(c->in.data, c->in.len, &req, err, sizeof(err));
	if (ret) {
		log_warn("client uid %u: bad request: %s", (unsigned int)c->uid, err);
		reply_error(c, 0, ret, err);
		client_close(c);
		return;
	}
	log_debug("uid %u: %s", (unsigned int)c->uid, ioacct_msg_type_name(req.type));
	if (req.type == IOACCT_MSG_REGISTER && peer_gone(c->fd)) {
		log_warn("uid %u: REGISTER of job %llu step %u ignored: its client has gone away",
			 (unsigned int)c->uid, (unsigned long long)req.u.reg.job_id, req.u.reg.step_id);
		client_close(c);
		return;
	}
	ioacct_registry_handle(reg, &req, c->uid, &rep);
	if (rep.status)
		log_info("uid %u: %s refused: %s", (unsigned int)c->uid, ioacct_msg_type_name(req.type),
			 rep.error);
	ret = ioacct_proto_encode_reply(&out, &rep);
	if (ret == 0)
		ret = ioacct_proto_send(c->fd, &out, REPLY_TIMEOUT_MS);
	else
		reply_error(c, req.seq, ret, "reply too large to encode");
	if (ret && req.type == IOACCT_MSG_REGISTER && rep.status == 0) {
		/* The client will never know it registered: nobody would finish the job. */
		log_warn("uid %u: the reply to REGISTER of job %llu step %u was not delivered (%s): "
			 "undoing it", (unsigned int)c->uid, (unsigned long long)rep.job_id,
			 req.u.reg.step_id, strerror(-ret));
		ioacct_registry_abort_register(reg, rep.job_key, req.u.reg.step_id);
	}
	ioacct_buf_free(&out);
	ioacct_reply_free(&rep);
	client_close(c);
}

static int serve(const struct ioacct_config *cfg, int lfd, struct ioacct_registry *reg,
		 struct ioacct_metrics *metrics)
{
	struct client clients[MAX_CLIENTS];
	struct pollfd pfd[MAX_CLIENTS + 1];
	uint64_t next_drain = now_ms() + cfg->drain_interval_ms;

	for (int i = 0; i < MAX_CLIENTS; i++) {
		memset(&clients[i], 0, sizeof(clients[i]));
		clients[i].fd = -1;
	}
	while (!stop_signal) {
		int n = 0, map[MAX_CLIENTS + 1];
		uint64_t now = now_ms();
		int timeout = next_drain > now ? (int)(next_drain - now) : 0;

		pfd[n].fd = lfd;
		pfd[n].events = POLLIN;
		map[n++] = -1;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (clients[i].fd < 0)
				continue;
			pfd[n].fd = clients[i].fd;
			pfd[n].events = POLLIN;
			map[n++] = i;
		}
		if (timeout > 1000)
			timeout = 1000;
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			log_err("poll: %s", strerror(errno));
			return -errno;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (map[k] < 0)
				client_accept(lfd, clients);
			else
				client_read(&clients[map[k]], reg);
		}
		now = now_ms();
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (clients[i].fd >= 0 && now - clients[i].since_ms > CLIENT_TIMEOUT_MS) {
				log_warn("client uid %u sent no whole request in %d ms; dropped",
					 (unsigned int)clients[i].uid, CLIENT_TIMEOUT_MS);
				client_close(&clients[i]);
			}
		}
		if (now >= next_drain) {
			uint64_t t0 = now_ns();

			ioacct_registry_drain(reg, false);
			ioacct_registry_reap(reg);
			/* /metrics: rebuilt here, never by a scrape (metrics.h). */
			ioacct_metrics_update(metrics, reg, now_ns() - t0);
			next_drain = now + cfg->drain_interval_ms;
		}
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		client_close(&clients[i]);
	return 0;
}

static int dir_of(const char *path, char *out, size_t len)
{
	char *slash;

	if (ioacct_strlcpy(out, path, len))
		return -ENAMETOOLONG;
	slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	struct daemon_opts o = { 0 };
	struct ioacct_config cfg;
	struct ioacct_store *store = NULL;
	struct ioacct_probes *probes = NULL;
	struct ioacct_registry *reg = NULL;
	struct ioacct_metrics *metrics = NULL;
	struct ioacct_probes_opts popts;
	struct sigaction sa;
	char err[1024], dbdir[PATH_MAX];
	int pidfd = -1, lfd = -1, ret = 1;
	uint32_t ssid = 0, njobs = 0, ncg = 0;

	if (parse_args(argc, argv, &o) || load_config(&o, &cfg))
		return 2;
	ioacct_log_set_ident("ioacctd");
	ioacct_log_set_level((enum ioacct_log_level)cfg.log_level);
	if (geteuid() != 0) {
		fprintf(stderr, "ioacctd: must run as root (it loads BPF programs)\n");
		return 1;
	}
	if (!o.foreground) {
		if (daemonize()) {
			fprintf(stderr, "ioacctd: cannot become a daemon: %s\n", strerror(errno));
			return 1;
		}
		ioacct_log_set_sink(ioacct_log_sink_syslog, NULL);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	if (pidfile_open(cfg.pid_file, &pidfd))
		goto out;
	/* Before the probes: a taken address must fail before anything is loaded. */
	if (cfg.metrics_listen[0] && !(metrics = ioacct_metrics_start(&cfg, err, sizeof(err)))) {
		log_err("%s", err);
		goto out;
	}
	store = ioacct_store_open(cfg.db_path, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!store) {
		log_err("%s", err);
		goto out;
	}
	/* private_data: the file becomes root's alone; users ask the socket (IOACCT_MSG_QUERY). */
	if (ioacct_store_set_private(store, cfg.private_data)) {
		log_err("%s", ioacct_store_errmsg(store));
		goto out;
	}
	if (ioacct_cgroup_v1_ssid(cfg.cgroup_v1_hierarchy, &ssid))
		log_info("cgroup v1 controller %s not in /proc/cgroups: v1 attribution is off",
			 cfg.cgroup_v1_hierarchy);
	popts = (struct ioacct_probes_opts){
		.pin_dir = cfg.pin_dir, .mode = cfg.probe_mode, .max_jobs = cfg.max_jobs,
		.max_cgroups = cfg.max_cgroups, .max_entries = cfg.max_entries,
		.max_mountpoints = cfg.max_mountpoints, .v1_ssid = ssid,
		.detach_when_idle = cfg.detach_when_idle,
	};
	probes = ioacct_probes_open(&popts, err, sizeof(err));
	if (!probes) {
		log_err("%s", err);
		goto out;
	}
	log_info("probe mode %s: %s", ioacct_probes_mode(probes), ioacct_probes_reason(probes));
	if (!ioacct_probes_fmode_created(probes)) {
		dir_of(cfg.db_path, dbdir, sizeof(dbdir));
		if (ioacct_probes_calibrate(probes, dbdir, err, sizeof(err)))
			log_warn("%s", err);
		else
			log_debug("FMODE_CREATED is 0x%x", ioacct_probes_fmode_created(probes));
	}
	reg = ioacct_registry_create(&cfg, store, probes);
	if (!reg) {
		log_err("out of memory");
		goto out;
	}
	if (ioacct_registry_restore(reg))
		goto out;
	if (metrics) {
		ioacct_metrics_update(metrics, reg, 0);
		log_info("serving /metrics on %s", cfg.metrics_listen);
	}
	if (socket_open(cfg.socket_path, &lfd))
		goto out;
	log_info("ioacctd %s serving %s, store %s", PACKAGE_VERSION, cfg.socket_path, cfg.db_path);

	ret = serve(&cfg, lfd, reg, metrics) ? 1 : 0;
	log_info("stopping on signal %d", (int)stop_signal);
	ioacct_registry_drain(reg, false);
	ioacct_registry_counts(reg, &njobs, &ncg);
out:
	if (lfd >= 0) {
		close(lfd);
		unlink(cfg.socket_path);
	}
	ioacct_metrics_stop(metrics);
	if (probes && njobs)
		log_info("%u jobs still running: the probes stay attached and keep counting", njobs);
	ioacct_registry_destroy(reg);
	/* With no job running nothing needs the programs: detach them. */
	ioacct_probes_close(probes, reg && njobs == 0);
	ioacct_store_close(store);
	if (pidfd >= 0) {
		unlink(cfg.pid_file);
		close(pidfd);
	}
	return ret;
}
