// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacctd: the node daemon. Keeps the probes loaded, keyed by cgroup;
 * registers and finishes jobs on request over a Unix socket; drains closed
 * time bins into the SQLite store.
 */
#include "cli.h"
#include "config.h"
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "jobs.h"
#include "jobtrace.h"
#include "log.h"
#include "metrics.h"
#include "mpiprobes.h"
#include "rpcprobes.h"
#include "privs.h"
#include "probes.h"
#include "procfs.h"
#include "proto.h"
#include "query_fetch.h"
#include "retainer.h"
#include "server.h"
#include "store.h"
#include "util.h"
#include "wmain.h"
#include "worker.h"

struct daemon_opts {
	bool foreground;
	const char *db_path;
	const char *probe_mode;
	const char *bin_width;
	const char *node_name;
	const char *metrics_listen;
	bool verbose;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * A file SQLite maps (the store's -shm) truncated under the daemon between
 * two of the checks in ioacct_store_begin() is a SIGBUS: the daemon cannot
 * go on, but it says why on its way out (the probes stay pinned and keep
 * counting for the next ioacctd, as after kill -9).
 */
static void on_sigbus(int sig)
{
	static const char msg[] =
		"ioacctd: fatal: SIGBUS: a file mapped in memory (the store's -shm WAL index?) was truncated under the daemon; the probes stay pinned and keep counting: start ioacctd again\n";
	ssize_t n __attribute__((unused));

	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	/* Not async-signal-safe, but the process is ending anyway and syslog is where a daemon's words go. */
	syslog(LOG_CRIT, "%.*s", (int)sizeof(msg) - 10, msg + 9);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_sigbus_say_why(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGBUS, &sa, NULL);
}

/* The unprivileged workers' machinery (worker.h), before any is started. 0 or -errno (said). */
static int workers_init(const struct ioacct_config *cfg)
{
	int ret = ioacct_workers_init(cfg);

	if (ret)
		log_err("workers: %s", strerror(-ret));
	return ret;
}

/* SIGTERM and SIGINT stop the daemon, SIGPIPE is an error where it happens, SIGBUS is said. */
static void signals_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	on_sigbus_say_why();
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ioacctd [OPTIONS]\n"
		"Per-job I/O accounting daemon: keeps eBPF probes loaded, keyed by cgroup.\n"
		"\n"
		"  -f, --foreground         stay in the foreground, log to stderr\n"
		"      --db PATH            SQLite store (config: db)\n"
		"      --probe-mode MODE    auto, fentry, kprobe, tracepoint or syscall-tp (config: probe_mode)\n"
		"      --bin-width SECONDS  default time bin width (config: bin_width)\n"
		"      --node-name NAME     this node's name when the client sends none (config: node_name)\n"
		"      --metrics-listen ADDR:PORT  serve /metrics for Prometheus there\n"
		"                           (config: metrics_listen; e.g. 127.0.0.1:9464)\n"
		"  -v, --verbose            log debug messages\n"
		"Common options (the socket: the one ioacctd serves):\n");
	ioacct_cli_help_common(out, 27);
	fprintf(out, "\nSee ioacctd(8) and ioacct.conf(5).\n");
}

enum { OPT_DB = 256, OPT_PROBE, OPT_BIN, OPT_NODE, OPT_METRICS };

static const struct option options[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "db", required_argument, NULL, OPT_DB },
	{ "probe-mode", required_argument, NULL, OPT_PROBE },
	{ "bin-width", required_argument, NULL, OPT_BIN },
	{ "node-name", required_argument, NULL, OPT_NODE },
	{ "metrics-listen", required_argument, NULL, OPT_METRICS },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

/* One of ioacctd's own options: 0 (its values are checked with the configuration's). */
static int option(struct ioacct_cli *cli, int key, const char *arg)
{
	struct daemon_opts *o = cli->ctx;

	switch (key) {
	case 'f':
		o->foreground = true;
		break;
	case OPT_DB:
		o->db_path = arg;
		break;
	case OPT_PROBE:
		o->probe_mode = arg;
		break;
	case OPT_BIN:
		o->bin_width = arg;
		break;
	case OPT_NODE:
		o->node_name = arg;
		break;
	case OPT_METRICS:
		o->metrics_listen = arg;
		break;
	case 'v':
		o->verbose = true;
		break;
	}
	return 0;
}

/* The command line, then the configuration with it over: IOACCT_CLI_GO or the exit status. */
static int setup(int argc, char **argv, struct daemon_opts *o, struct ioacct_config *cfg)
{
	struct ioacct_cli cli = {
		.prog = "ioacctd", .options = options, .option = option, .usage = usage, .ctx = o,
	};
	struct ioacct_cli_set sets[] = {
		{ "db", "db", NULL },
		{ "probe-mode", "probe_mode", NULL },
		{ "bin-width", "bin_width", NULL },
		{ "node-name", "node_name", NULL },
		{ "metrics-listen", "metrics_listen", NULL },
	};
	int ret = ioacct_cli_parse(&cli, argc, argv);

	if (ret != IOACCT_CLI_GO)
		return ret;
	sets[0].value = o->db_path;
	sets[1].value = o->probe_mode;
	sets[2].value = o->bin_width;
	sets[3].value = o->node_name;
	sets[4].value = o->metrics_listen;
	ret = ioacct_cli_config(&cli, cfg, sets, sizeof(sets) / sizeof(sets[0]));
	if (ret)
		return ret;
	if (o->verbose)
		cfg->log_level = IOACCT_LOG_DEBUG;
	ioacct_query_page_ms_set((unsigned int)cfg->query_page_ms);
	return IOACCT_CLI_GO;
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
 * The backlog is SOMAXCONN so that a burst of connections waits in the
 * kernel's queue rather than being refused (server.c empties it each round).
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
	    listen(fd, SOMAXCONN)) {
		ret = -errno;
		log_err("cannot serve %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

/*
 * The reply to root's REGISTER did not reach its client (iorun, slurmstepd),
 * which will never know it registered: nobody would finish the job. Undo it.
 */
static void on_undelivered(void *ctx, uid_t uid, const struct ioacct_request *req,
			   const struct ioacct_reply *rep)
{
	if (req->type != IOACCT_MSG_REGISTER || rep->status)
		return;
	log_warn("uid %u: the reply to REGISTER of job %llu step %u was not delivered: undoing it",
		 (unsigned int)uid, (unsigned long long)rep->job_id, req->u.reg.step_id);
	ioacct_registry_abort_register(ctx, rep->job_key, req->u.reg.step_id);
}

/* Serves clients, and drains closed bins on schedule whatever the clients do. */
static int serve(const struct ioacct_config *cfg, int lfd, struct ioacct_registry *reg,
		 struct ioacct_export *ex, struct ioacct_metrics *metrics)
{
	struct ioacct_server *srv = ioacct_server_create(lfd, reg);
	uint64_t next_drain = ioacct_mono_ms() + cfg->drain_interval_ms;
	int ret = 0;

	if (!srv) {
		log_err("cannot serve the socket: %s", strerror(errno));
		return -errno;
	}
	ioacct_server_set_undelivered(srv, on_undelivered, reg);
	/* The unprivileged workers' messages (worker.h) wake the loop too. */
	if (ioacct_server_wake_fd(srv, ioacct_workers_fd()))
		log_warn("workers: cannot wait for their messages: %s; they are read once a second",
			 strerror(errno));
	if (ioacct_registry_mpi_fd(reg) >= 0 && ioacct_server_wake_fd(srv, ioacct_registry_mpi_fd(reg)))
		log_warn("MPI-IO: cannot wait for MPI libraries' opens: %s; they are looked at "
			 "once a second", strerror(errno));
	while (!stop_signal) {
		uint64_t now = ioacct_mono_ms();
		int timeout = next_drain > now ? (int)(next_drain - now) : 0;

		if (timeout > 1000)
			timeout = 1000;
		if (ioacct_registry_tracing(reg) && timeout > IOACCT_JOBTRACE_POLL_MS)
			timeout = IOACCT_JOBTRACE_POLL_MS;
		ret = ioacct_server_run(srv, timeout);
		if (ret)
			break;
		ioacct_registry_trace_poll(reg);
		/* Their answers (the ELF worker's first: an MPI library's uprobes), their restarts. */
		ioacct_workers_tick();
		/* Before the library's MPI_Init can return: its uprobes are attached now. */
		ioacct_registry_mpi_poll(reg);
		/* A request may have finished a job: the exporter looks now. */
		ioacct_export_poke(ex);
		now = ioacct_mono_ms();
		if (now >= next_drain) {
			uint64_t t0 = ioacct_mono_ns();

			ioacct_registry_drain(reg, false);
			ioacct_registry_reap(reg);
			ioacct_export_poke(ex);
			/* /metrics: rebuilt here, never by a scrape (metrics.h). */
			ioacct_metrics_update(metrics, reg, ioacct_mono_ns() - t0);
			next_drain = now + cfg->drain_interval_ms;
		}
	}
	ioacct_server_destroy(srv);
	return ret;
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

/*
 * The store, checked before anything is added to it: a corrupt file would
 * otherwise serve jobs with missing counters (0 bytes) without a word.
 */
static struct ioacct_store *store_open_checked(const char *path)
{
	struct ioacct_store *st;
	char err[1024];
	uint64_t t0;

	st = ioacct_store_open(path, IOACCT_STORE_RDWR, err, sizeof(err));
	if (!st) {
		log_err("%s", err);
		return NULL;
	}
	t0 = ioacct_mono_ms();
	if (ioacct_store_quick_check(st)) {
		log_err("%s", ioacct_store_errmsg(st));
		ioacct_store_close(st);
		return NULL;
	}
	log_info("store %s checked (quick_check) in %llu ms", path, (unsigned long long)(ioacct_mono_ms() - t0));
	return st;
}

/*
 * MPI-IO and HDF5 accounting, unless both mpi_libraries and hdf5_libraries
 * are none; a kernel or library that cannot take it leaves the rest of the
 * daemon as it was (NULL, said).
 */
static struct ioacct_mpiprobes *mpi_start(const struct ioacct_config *cfg,
					  struct ioacct_probes *probes)
{
	struct ioacct_mpiprobes *m;
	char err[512];
	uint32_t ssid = 0;
	uint64_t t0;

	if (!strcmp(cfg->mpi_libraries, "none") && !strcmp(cfg->hdf5_libraries, "none"))
		return NULL;
	ioacct_cgroup_v1_ssid(cfg->cgroup_v1_hierarchy, &ssid);
	t0 = ioacct_mono_ms();
	m = ioacct_mpiprobes_open(probes, cfg->mpi_libraries, cfg->hdf5_libraries, ssid, err,
				  sizeof(err));
	if (m)
		ioacct_mpiprobes_set_detach_after(m, cfg->mpi_detach_after_s * 1000000000ULL);
	if (!m)
		log_warn("%s: MPI-IO and HDF5 calls are not counted", err);
	else
		log_info("MPI-IO: watching for %s; HDF5: for %s (its probes loaded in %" PRIu64 " ms)",
			 cfg->mpi_libraries, cfg->hdf5_libraries, ioacct_mono_ms() - t0);
	return m;
}

/*
 * The RPCs per job (issue 40): loaded now if the kernel has sunrpc, else at
 * the first registration after it is loaded (none with rpc_probes = no);
 * never fatal.
 */
static struct ioacct_rpcprobes *rpc_start(const struct ioacct_config *cfg,
					  struct ioacct_probes *probes)
{
	struct ioacct_rpcprobes *rp;
	uint32_t ssid = 0;

	ioacct_cgroup_v1_ssid(cfg->cgroup_v1_hierarchy, &ssid);
	rp = ioacct_rpcprobes_create(probes, ssid, cfg->rpc_probes);
	if (!rp)
		log_warn("RPC probes: out of memory: the jobs' RPCs are not counted");
	return rp;
}

/* The probes, loaded or found pinned, FMODE_CREATED measured if need be; NULL when they fail (said). */
static struct ioacct_probes *probes_start(const struct ioacct_config *cfg)
{
	struct ioacct_probes_opts popts;
	struct ioacct_probes *probes;
	char err[1024], dbdir[PATH_MAX];
	uint32_t ssid = 0;

	if (ioacct_cgroup_v1_ssid(cfg->cgroup_v1_hierarchy, &ssid))
		log_info("cgroup v1 controller %s not in /proc/cgroups: v1 attribution is off",
			 cfg->cgroup_v1_hierarchy);
	popts = (struct ioacct_probes_opts){
		.pin_dir = cfg->pin_dir, .mode = cfg->probe_mode, .max_jobs = cfg->max_jobs,
		.max_cgroups = cfg->max_cgroups, .max_entries = cfg->max_entries,
		.max_mountpoints = cfg->max_mountpoints, .max_files = cfg->max_files, .v1_ssid = ssid,
		.detach_when_idle = cfg->detach_when_idle, .views = cfg->views,
		.files_off = !cfg->file_records, .legacy_mnt_ids = ioacct_mnt_ids_legacy(),
	};
	if (popts.legacy_mnt_ids)
		log_warn("IOACCT_MNT_IDS=legacy (for tests): mounts keyed by their 32-bit ids, as on a "
			 "kernel before 6.8; a mount is named only from what the probes noted of it");
	probes = ioacct_probes_open(&popts, err, sizeof(err));
	if (!probes) {
		log_err("%s", err);
		return NULL;
	}
	log_info("probe mode %s: %s", ioacct_probes_mode(probes), ioacct_probes_reason(probes));
	ioacct_probes_start_cost(probes, err, sizeof(err));
	log_info("probes: %s", err);
	if (!ioacct_probes_fmode_created(probes)) {
		uint64_t t0 = ioacct_mono_ms();

		dir_of(cfg->db_path, dbdir, sizeof(dbdir));
		if (ioacct_probes_calibrate(probes, dbdir, err, sizeof(err)))
			log_warn("%s", err);
		else
			log_info("FMODE_CREATED is 0x%x (measured in %" PRIu64 " ms)",
				 ioacct_probes_fmode_created(probes), ioacct_mono_ms() - t0);
	}
	return probes;
}

/* The threads beside the event loop, each with its own connection to the store. */
static void threads_start(const struct ioacct_config *cfg, struct ioacct_export **ex,
			  struct ioacct_retainer **retainer)
{
	/* Without the cluster store jobs are still counted and kept: the outbox waits. */
	ioacct_export_start(cfg, ex);
	/* Purge and downsample (purge_after, downsample_after), off the event loop. */
	ioacct_retainer_start(cfg, retainer);
}

static void threads_stop(struct ioacct_export *ex, struct ioacct_retainer *retainer)
{
	ioacct_retainer_stop(retainer);
	ioacct_export_stop(ex);
}

/* The account the daemon runs as once started, trusted with the store; NULL when there is none (said). */
static struct ioacct_privs *privs_open(const struct ioacct_config *cfg)
{
	struct ioacct_privs *privs;
	char err[512];

	if (geteuid() != 0) {
		fprintf(stderr, "ioacctd: must be started as root (it loads BPF programs, then "
			"runs as user %s)\n", cfg->user);
		return NULL;
	}
	/* The merged reports of the cluster store are written as their users. */
	privs = ioacct_privs_create(cfg->user, cfg->cluster_db[0] != '\0', err, sizeof(err));
	if (!privs) {
		fprintf(stderr, "ioacctd: %s\n", err);
		return NULL;
	}
	ioacct_store_set_owner(ioacct_privs_uid(privs));
	return privs;
}

/*
 * Root's part is done: the state given to the account, its rights from here
 * on (privs.h), then the first threads, /metrics' server. 0 or -1 (said).
 */
static int become_account(const struct ioacct_config *cfg, const struct ioacct_privs *privs,
			  struct ioacct_store *store, struct ioacct_registry *reg,
			  struct ioacct_metrics *metrics)
{
	char err[1024];

	if (ioacct_privs_take_over(privs, cfg, store, err, sizeof(err)) ||
	    ioacct_privs_drop(privs, err, sizeof(err)))
		goto fail;
	if (metrics) {
		/* The first scrape finds a page. */
		ioacct_metrics_update(metrics, reg, 0);
		if (ioacct_metrics_serve(metrics, err, sizeof(err)))
			goto fail;
		log_info("serving /metrics on %s", cfg->metrics_listen);
	}
	return 0;
fail:
	log_err("%s", err);
	return -1;
}

int main(int argc, char **argv)
{
	struct daemon_opts o = { 0 };
	struct ioacct_config cfg;
	struct ioacct_store *store = NULL;
	struct ioacct_probes *probes = NULL;
	struct ioacct_registry *reg = NULL;
	struct ioacct_export *ex = NULL;
	struct ioacct_retainer *retainer = NULL;
	struct ioacct_metrics *metrics = NULL;
	struct ioacct_privs *privs = NULL;
	char err[1024];
	int pidfd = -1, lfd = -1, ret;
	uint32_t njobs = 0, ncg = 0;

	/* ioacctd started by itself as one of its unprivileged workers (worker.h). */
	if (argc > 1 && !strcmp(argv[1], IOACCT_WORKER_ARG))
		return ioacct_worker_main(argc, argv);
	ret = setup(argc, argv, &o, &cfg);
	if (ret != IOACCT_CLI_GO)
		return ret;
	ret = EXIT_RUNTIME;
	ioacct_log_set_ident("ioacctd");
	ioacct_log_set_level((enum ioacct_log_level)cfg.log_level);
	privs = privs_open(&cfg);
	if (!privs)
		return EXIT_RUNTIME;
	if (!o.foreground) {
		if (daemonize()) {
			fprintf(stderr, "ioacctd: cannot become a daemon: %s\n", strerror(errno));
			return EXIT_RUNTIME;
		}
		ioacct_log_set_sink(ioacct_log_sink_syslog, NULL);
	}

	signals_init();
	if (pidfile_open(cfg.pid_file, &pidfd) || workers_init(&cfg))
		goto out;
	/* Before the probes: a taken address must fail before anything is loaded. */
	if (cfg.metrics_listen[0] && !(metrics = ioacct_metrics_start(&cfg, err, sizeof(err)))) {
		log_err("%s", err);
		goto out;
	}
	store = store_open_checked(cfg.db_path);
	if (!store)
		goto out;
	/* private_data: the file becomes the daemon's alone; users ask the socket (IOACCT_MSG_QUERY). */
	if (ioacct_store_set_private(store, cfg.private_data)) {
		log_err("%s", ioacct_store_errmsg(store));
		goto out;
	}
	probes = probes_start(&cfg);
	if (!probes)
		goto out;
	reg = ioacct_registry_create(&cfg, store, probes);
	if (!reg) {
		log_err("out of memory");
		goto out;
	}
	ioacct_registry_set_mpi(reg, mpi_start(&cfg, probes));
	ioacct_registry_set_rpc(reg, rpc_start(&cfg, probes));
	if (ioacct_registry_restore(reg))
		goto out;
	if (socket_open(cfg.socket_path, &lfd))
		goto out;
	if (become_account(&cfg, privs, store, reg, metrics))
		goto out;
	log_info("ioacctd %s serving %s, store %s, node %s", PACKAGE_VERSION, cfg.socket_path,
		 cfg.db_path, cfg.node);
	threads_start(&cfg, &ex, &retainer);

	ret = serve(&cfg, lfd, reg, ex, metrics) ? EXIT_RUNTIME : 0;
	log_info("stopping on signal %d", (int)stop_signal);
	ioacct_registry_drain(reg, false);
	ioacct_registry_counts(reg, &njobs, &ncg);
out:
	/* No thread waits on a worker from now: each call in progress ends. */
	ioacct_workers_cancel();
	threads_stop(ex, retainer);
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
	ioacct_workers_fini();
	if (pidfd >= 0) {
		unlink(cfg.pid_file);
		close(pidfd);
	}
	ioacct_privs_destroy(privs);
	return ret;
}
