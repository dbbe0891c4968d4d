// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * abbench: the cost of ioacct per I/O call, with the three cases interleaved
 * every few milliseconds inside one process, so that the drift of a shared
 * machine (tens of percent between windows of seconds) cancels out.
 *
 *   abbench [-m MODE] [-r ROUNDS] [-n CALLS] [-s SIZE] [-f FILE] [-w WORKLOAD] [-M] [-V]
 *           [-F] [-S]
 *
 * -M (issue 14): each call is a page-cache miss instead: posix_fadvise
 * (DONTNEED) of the file's first SIZE bytes, then a pread() of them, which
 * brings them in again from storage (FILE on a disk file system); then the
 * page-cache view programs run on every page, in every case where they are
 * attached, and the check also wants every page counted as a miss.
 * -V: without the page-cache view programs (page_cache_views = no).
 * -w (issue 26): what each call is: pwrite (the default) or pread of SIZE
 * bytes at offset 0, fstat of the open file, stat of its path (FILE must
 * be in its mount's root directory: that directory is the mount point the
 * path lookup is given), or open and close of it; counted as a write, a
 * read, a stat, a stat or an open.
 * -F (issue 26): two more cases, "unwatched-nf" and "watched-nf", with a
 * second set of the programs, loaded with the per-file records off
 * (file_records = no), attached in their turn instead of the first.
 * -S: kernel.bpf_stats on (BPF_ENABLE_STATS) while it runs, and the
 * programs' own run time per call of each case printed: their clock reads
 * add to every monitored case alike.
 *
 * It loads ioacct's BPF programs through the daemon's own code
 * (daemon/probes.c) under a pin directory of its own, creates two cgroups,
 * watches one (slot 0) and not the other, and then, ROUNDS times, runs CALLS
 * pwrite()s of SIZE bytes at offset 0 of FILE in each case, in an order
 * rotated every round:
 *   bare       programs detached: no syscall pays anything;
 *   empty      (tracepoint mode) two empty programs on the raw tracepoints
 *              sys_enter and sys_exit instead of ioacct's: the floor, what
 *              the mechanism costs before a program does anything;
 *   unwatched  programs attached, a child of this process in the unwatched
 *              cgroup (forked for each batch: never watched, so without
 *              task storage, like every unwatched process on a node);
 *   watched    programs attached, this process in the watched cgroup.
 * After each switch it sleeps 1 ms and makes an eighth of the calls
 * untimed. Per round it divides each case's ns per call by bare's of the same round;
 * it prints the median ns per call of each case and the median, min and max
 * of those ratios. Then it checks that the programs counted exactly the
 * watched calls and bytes (the benchmark measured what it says), and exits 1
 * when they did not.
 *
 * Needs root and no running ioacctd sharing its pin directory. Defaults:
 * auto mode, 301 rounds of 20,000 calls of 4 KiB to /dev/shm. Run by
 * tests/bench/syscall-cost; docs/performance.md has the method.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "config.h"
#include "ioacct_abi.h"
#include "log.h"
#include "probes.h"
#include "procfs.h"

#define CGROUP2_SUPER_MAGIC_ 0x63677270

enum { BARE, EMPTY, UNWATCHED, WATCHED, UNWATCHED_NF, WATCHED_NF, NCASES };
static const char *const case_name[NCASES] = { "bare", "empty", "unwatched", "watched",
					       "unwatched-nf", "watched-nf" };

static char cg_top[PATH_MAX], cg_root[PATH_MAX], cg_w[PATH_MAX], cg_u[PATH_MAX], pin_dir[PATH_MAX],
	pin_dir_nf[PATH_MAX];

/* -w: what a call is, and the operation it is counted as. */
enum workload { W_PWRITE, W_PREAD, W_FSTAT, W_STAT, W_OPEN, NWORKLOADS };
static const char *const workload_name[NWORKLOADS] = { "pwrite", "pread", "fstat", "stat", "open" };
static const uint32_t workload_op[NWORKLOADS] = { IOACCT_OP_WRITE, IOACCT_OP_READ, IOACCT_OP_STAT,
						  IOACCT_OP_STAT, IOACCT_OP_OPEN };
static enum workload workload = W_PWRITE;
static const char *work_path;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int join_cgroup(const char *dir)
{
	char path[PATH_MAX + 16], pid[32];
	int fd, n, ret = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, (size_t)n) != n)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	return ret;
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (cg_root[0]) {
		join_cgroup(cg_top);
		rmdir(cg_w);
		rmdir(cg_u);
		rmdir(cg_root);
	}
	if (pin_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pin_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "abbench: could not remove %s\n", pin_dir);
	}
	if (pin_dir_nf[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pin_dir_nf);
		if (system(cmd) != 0)
			fprintf(stderr, "abbench: could not remove %s\n", pin_dir_nf);
	}
}

/* Two `r0 = 0; exit` programs on sys_enter and sys_exit: fds in fds[2]. */
static int empty_attach(int fds[2])
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const char *tp[2] = { "sys_enter", "sys_exit" };

	for (int i = 0; i < 2; i++) {
		int prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "abbench_empty", "GPL", insns, 2,
					 NULL);

		if (prog < 0)
			return prog;
		fds[i] = bpf_raw_tracepoint_open(tp[i], prog);
		close(prog);
		if (fds[i] < 0)
			return fds[i];
	}
	return 0;
}

static void empty_detach(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static bool miss_mode;
/* -M: the view programs' run time and runs per case (kernel.bpf_stats_enabled). */
static uint64_t view_ns[4], view_runs[4];

/* One call of the workload; false when it failed. */
static bool one_call(int fd, char *buf, size_t size)
{
	struct stat st;
	int f;

	switch (workload) {
	case W_PWRITE:
		return pwrite(fd, buf, size, 0) == (ssize_t)size;
	case W_PREAD:
		return pread(fd, buf, size, 0) == (ssize_t)size;
	case W_FSTAT:
		/* The system call itself: glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH). */
		return syscall(SYS_fstat, fd, &st) == 0;
	case W_STAT:
		return stat(work_path, &st) == 0;
	case W_OPEN:
		f = open(work_path, O_RDONLY | O_CLOEXEC);
		return f >= 0 && close(f) == 0;
	case NWORKLOADS:
		break;
	}
	return false;
}

static double run_calls(int fd, char *buf, size_t size, long calls)
{
	uint64_t t0 = now_ns();

	for (long i = 0; i < calls; i++) {
		if (miss_mode) {
			if (posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_DONTNEED) ||
			    pread(fd, buf, size, 0) != (ssize_t)size) {
				perror("abbench: fadvise and pread");
				exit(1);
			}
			continue;
		}
		if (!one_call(fd, buf, size)) {
			fprintf(stderr, "abbench: %s: %s\n", workload_name[workload], strerror(errno));
			exit(1);
		}
	}
	return (double)(now_ns() - t0) / (double)calls;
}

/*
 * The unwatched case, in a child forked for it: a process that was never
 * watched, as every other process on a node is. This one was (the watched
 * case), so it has task storage, and its unwatched calls would pay a lookup
 * that theirs do not. -1 when the child fails.
 */
static double run_unwatched(int fd, char *buf, size_t size, long calls)
{
	double t = -1;
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		run_calls(fd, buf, size, calls / 8 + 1);
		t = run_calls(fd, buf, size, calls);
		_exit(write(pfd[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &t, sizeof(t)) != sizeof(t))
		t = -1;
	close(pfd[0]);
	if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)))
		t = -1;
	return t;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: abbench [-m auto|fentry|kprobe|tracepoint|syscall-tp] [-r ROUNDS] [-n CALLS]\n"
		   "               [-s SIZE] [-f FILE] [-w pwrite|pread|fstat|stat|open] [-M] [-V]\n"
		   "               [-F] [-S]\n");
}

int main(int argc, char **argv)
{
	struct ioacct_probes_opts opts = {
		.mode = IOACCT_PROBE_AUTO, .max_jobs = 4, .max_cgroups = 16,
		.max_entries = 4096, .max_mountpoints = 16, .detach_when_idle = IOACCT_DETACH_NO,
		.views = IOACCT_VIEWS_ALL,
	};
	const char *file = "/dev/shm/ioacct-abbench", *cg2 = NULL;
	long rounds = 301, calls = 20000, size = 4096;
	uint64_t cgid, want_calls = 0, got_calls = 0, got_bytes = 0, got_miss = 0, want_bytes;
	uint64_t prog_ns[NCASES] = { 0 }, prog_runs[NCASES] = { 0 };
	double *ns[NCASES], *ratio[NCASES];
	struct ioacct_probes *p, *pnf = NULL;
	struct statfs sfs;
	struct statx stx;
	char err[1024], *buf;
	int opt, fd, m, efd[2] = { -1, -1 }, stats_fd = -1;
	bool tracepoint, nf = false, bpf_stats = false;

	while ((opt = getopt(argc, argv, "m:r:n:s:f:w:MVFSh")) != -1) {
		switch (opt) {
		case 'm':
			m = ioacct_probe_mode_from_name(optarg);
			if (m < 0) {
				fprintf(stderr, "abbench: unknown mode '%s'\n", optarg);
				return 2;
			}
			opts.mode = (enum ioacct_probe_mode)m;
			break;
		case 'r': rounds = strtol(optarg, NULL, 10); break;
		case 'n': calls = strtol(optarg, NULL, 10); break;
		case 's': size = strtol(optarg, NULL, 10); break;
		case 'f': file = optarg; break;
		case 'M': miss_mode = true; break;
		case 'V': opts.views = 0; break;
		case 'F': nf = true; break;
		case 'S': bpf_stats = true; break;
		case 'w':
			for (m = 0; m < NWORKLOADS && strcmp(optarg, workload_name[m]); m++)
				;
			if (m == NWORKLOADS) {
				fprintf(stderr, "abbench: unknown workload '%s' (pwrite, pread, fstat, "
						"stat, open)\n", optarg);
				return 2;
			}
			workload = (enum workload)m;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || rounds < 1 || calls < 1 || size < 1 || size > (1L << 30) ||
	    (miss_mode && workload != W_PWRITE)) {
		usage(stderr);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "abbench: needs root (loads BPF programs, creates cgroups)\n");
		return 1;
	}
	/* Pure v2, or the hybrid layout's v2 under unified/. */
	if (!statfs("/sys/fs/cgroup", &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC_)
		cg2 = "/sys/fs/cgroup";
	else if (!statfs("/sys/fs/cgroup/unified", &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC_)
		cg2 = "/sys/fs/cgroup/unified";
	if (!cg2) {
		fprintf(stderr, "abbench: no cgroup v2 hierarchy on /sys/fs/cgroup or /sys/fs/cgroup/unified\n");
		return 1;
	}
	ioacct_log_set_ident("abbench");
	ioacct_log_set_level(IOACCT_LOG_WARN);
	atexit(cleanup);

	snprintf(cg_top, sizeof(cg_top), "%s", cg2);
	snprintf(cg_root, sizeof(cg_root), "%s/ioacct-abbench-%d", cg2, (int)getpid());
	snprintf(cg_w, sizeof(cg_w), "%s/watched", cg_root);
	snprintf(cg_u, sizeof(cg_u), "%s/unwatched", cg_root);
	if (mkdir(cg_root, 0755) || mkdir(cg_w, 0755) || mkdir(cg_u, 0755)) {
		fprintf(stderr, "abbench: cannot create cgroups under %s: %s\n", cg_root, strerror(errno));
		return 1;
	}
	if (join_cgroup(cg_u)) {
		fprintf(stderr, "abbench: cannot move into %s: %s\n", cg_u, strerror(errno));
		return 1;
	}
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/ioacct-abbench-%d", (int)getpid());
	opts.pin_dir = pin_dir;
	p = ioacct_probes_open(&opts, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "abbench: %s\n", err);
		return 1;
	}
	if (nf) {
		struct ioacct_probes_opts o = opts;

		snprintf(pin_dir_nf, sizeof(pin_dir_nf), "/sys/fs/bpf/ioacct-abbench-nf-%d",
			 (int)getpid());
		o.pin_dir = pin_dir_nf;
		o.files_off = true;
		/* Loaded attached: only one set runs at a time. */
		if (ioacct_probes_detach(p) || !(pnf = ioacct_probes_open(&o, err, sizeof(err)))) {
			fprintf(stderr, "abbench: file_records = no: %s\n", err);
			return 1;
		}
	}
	for (struct ioacct_probes *q = p; q; q = q == p ? pnf : NULL)
		if (ioacct_cgroup_id(cg_w, &cgid) ||
		    ioacct_probes_slot_set(q, 0, now_ns(), 3600000000000ULL) ||
		    ioacct_probes_watch_add(q, cgid, IOACCT_HIER_V2, 0) || ioacct_probes_publish(q)) {
			fprintf(stderr, "abbench: cannot watch %s\n", cg_w);
			return 1;
		}

	buf = malloc((size_t)size);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!buf || fd < 0) {
		fprintf(stderr, "abbench: %s: %s\n", file, strerror(errno));
		return 1;
	}
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) || !(stx.stx_mask & STATX_MNT_ID)) {
		fprintf(stderr, "abbench: cannot find the mount id of %s\n", file);
		return 1;
	}
	work_path = file;
	/* A stat by path finds its mount through the mount points the daemon would publish. */
	if (workload == W_STAT) {
		struct ioacct_mntns_ref mns;
		char dir[PATH_MAX], *slash;

		snprintf(dir, sizeof(dir), "%s", file);
		slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), "/");
		for (struct ioacct_probes *q = p; q; q = q == p ? pnf : NULL)
			if (ioacct_proc_mntns_ref(0, &mns) ||
			    ioacct_probes_mountpoint_add(q, mns.inum, dir, stx.stx_mnt_id)) {
				fprintf(stderr, "abbench: cannot publish the mount point %s\n", dir);
				return 1;
			}
	}
	if (bpf_stats && (stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) {
		fprintf(stderr, "abbench: cannot enable bpf_stats: %s\n", strerror(-stats_fd));
		return 1;
	}
	memset(buf, 'x', (size_t)size);
	for (int c = 0; c < NCASES; c++) {
		ns[c] = calloc((size_t)rounds, sizeof(double));
		ratio[c] = calloc((size_t)rounds, sizeof(double));
		if (!ns[c] || !ratio[c])
			return 1;
	}
	/* The data to read; -M: on the disk, so that DONTNEED can drop it. */
	if ((miss_mode || workload == W_PREAD) &&
	    (pwrite(fd, buf, (size_t)size, 0) != (ssize_t)size || fsync(fd))) {
		perror("abbench: writing the file");
		return 1;
	}
	run_calls(fd, buf, (size_t)size, calls / 10 + 1); /* page cache warm */

	tracepoint = strcmp(ioacct_probes_mode(p), "tracepoint") == 0;
	fprintf(stderr, "abbench: %s mode, %ld rounds of %ld %ss of %ld bytes, %s%s\n",
		ioacct_probes_mode(p), rounds, calls, workload_name[workload], size, file,
		nf ? ", file_records yes and no" : "");
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < NCASES; k++) {
			int c = (int)((r + k) % NCASES), ret;
			bool off = c == UNWATCHED_NF || c == WATCHED_NF;
			struct ioacct_probes *on = off ? pnf : p, *other = off ? p : pnf;

			if ((c == EMPTY && !tracepoint) || (off && !nf))
				continue;
			snprintf(err, sizeof(err), "error %d", errno);
			ret = other ? ioacct_probes_detach(other) : 0;
			if (ret)
				;
			else if (c == BARE || c == EMPTY)
				ret = ioacct_probes_detach(p);
			else
				ret = ioacct_probes_attach(on, err, sizeof(err));
			if (!ret)
				ret = join_cgroup(c == WATCHED || c == WATCHED_NF ? cg_w : cg_u);
			if (!ret && c == EMPTY)
				ret = empty_attach(efd);
			if (ret) {
				fprintf(stderr, "abbench: cannot switch to %s: %s\n", case_name[c],
					c == BARE || c == EMPTY ? strerror(-ret) : err);
				return 1;
			}
			/* Let the switch's aftermath (RCU callbacks, text patching) settle. */
			usleep(1000);
			{
				uint64_t n0 = 0, r0 = 0, n1 = 0, r1 = 0;

				uint64_t a0 = 0, b0 = 0, a1 = 0, b1 = 0;

				if (c != BARE && c != EMPTY)
					ioacct_probes_run_stats_of(on, "ioacct_", &a0, &b0);
				ioacct_probes_run_stats_of(p, "ioacct_pc_", &n0, &r0);
				if (c == UNWATCHED || c == UNWATCHED_NF) {
					ns[c][r] = run_unwatched(fd, buf, (size_t)size, calls);
					if (ns[c][r] < 0) {
						fprintf(stderr, "abbench: the unwatched child failed\n");
						return 1;
					}
				} else {
					run_calls(fd, buf, (size_t)size, calls / 8 + 1);
					ns[c][r] = run_calls(fd, buf, (size_t)size, calls);
				}
				ioacct_probes_run_stats_of(p, "ioacct_pc_", &n1, &r1);
				if (c != BARE && c != EMPTY)
					ioacct_probes_run_stats_of(on, "ioacct_", &a1, &b1);
				if (c < 4) {
					view_ns[c] += n1 - n0;
					view_runs[c] += r1 - r0;
				}
				prog_ns[c] += a1 - a0;
				prog_runs[c] += b1 - b0;
			}
			empty_detach(efd);
			if (c == WATCHED || c == WATCHED_NF)
				want_calls += (uint64_t)(calls + calls / 8 + 1);
		}
		for (int c = 0; c < NCASES; c++)
			ratio[c][r] = ns[c][r] / ns[BARE][r];
		if ((r + 1) % 50 == 0)
			fprintf(stderr, "abbench: round %ld/%ld\n", r + 1, rounds);
	}
	join_cgroup(cg_u);
	close(fd);
	unlink(file);

	for (struct ioacct_probes *q = p; q; q = q == p ? pnf : NULL) {
		struct ioacct_probe_entry *e = NULL;
		uint32_t op = miss_mode ? IOACCT_OP_READ : workload_op[workload];
		size_t n = 0;

		if (ioacct_probes_read(q, NULL, NULL, &e, &n)) {
			fprintf(stderr, "abbench: cannot read the counters\n");
			return 1;
		}
		/* Only the file's mount: moving between cgroups is a write too (cgroup.procs). */
		for (size_t i = 0; i < n; i++)
			if (e[i].slot == 0 && e[i].mnt_id == stx.stx_mnt_id) {
				if (e[i].op == op) {
					got_calls += e[i].c.calls;
					got_bytes += e[i].c.bytes;
				}
				if (e[i].op == IOACCT_OP_CACHE_FILL)
					got_miss += e[i].c.bytes;
			}
		free(e);
	}
	want_bytes = workload <= W_PREAD ? want_calls * (uint64_t)size : 0;

	printf("%-12s %12s %10s %10s %10s%s\n", "case", "ns/call", "ratio", "min", "max",
	       bpf_stats ? "  programs ns/call" : "");
	for (int c = 0; c < NCASES; c++) {
		if ((c == EMPTY && !tracepoint) || ((c == UNWATCHED_NF || c == WATCHED_NF) && !nf))
			continue;
		double med = median(ns[c], (size_t)rounds), rmed = median(ratio[c], (size_t)rounds);

		printf("%-12s %12.1f %9.3fx %9.3fx %9.3fx", case_name[c], med, rmed, ratio[c][0],
		       ratio[c][rounds - 1]);
		/* The programs' run time over the timed calls and their untimed lead-in. */
		if (bpf_stats && c != BARE && c != EMPTY)
			printf("  %8.1f", (double)prog_ns[c] /
						((double)rounds * (double)(calls + calls / 8 + 1)));
		putchar('\n');
	}
	printf("counted: %llu watched %ss, %llu bytes (expected %llu, %llu)\n",
	       (unsigned long long)got_calls, miss_mode ? "read" : workload_name[workload],
	       (unsigned long long)got_bytes, (unsigned long long)want_calls,
	       (unsigned long long)want_bytes);
	if (miss_mode)
		printf("views %s: cache misses %llu bytes (expected %llu)\n", ioacct_probes_views(p),
		       (unsigned long long)got_miss,
		       (unsigned long long)(!opts.views ? 0 : want_calls * (uint64_t)size));
	for (int c = UNWATCHED; c <= WATCHED && miss_mode && view_runs[c]; c++)
		printf("view programs, %s: %.1f ns per run, %.2f runs per call, %.1f ns per call\n",
		       case_name[c], (double)view_ns[c] / (double)view_runs[c],
		       (double)view_runs[c] / ((double)rounds * (double)calls),
		       (double)view_ns[c] / ((double)rounds * (double)calls));
	ioacct_probes_close(p, true);
	ioacct_probes_close(pnf, true);
	if (stats_fd >= 0)
		close(stats_fd);
	if (got_calls != want_calls || got_bytes != want_bytes ||
	    (miss_mode && got_miss != (!opts.views ? 0 : want_calls * (uint64_t)size))) {
		fprintf(stderr, "abbench: the programs did not count exactly the watched calls\n");
		return 1;
	}
	return 0;
}
