// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bpfstat: the kernel's run-time counters of BPF programs, for
 * tests/bench/event-cost. Plain bpf(2) calls, no libbpf, so that it also runs
 * static in the test VM's initramfs.
 *
 *   bpfstat list [PID]    one line per program: id type run_cnt run_time_ns name
 *                         (only the programs PID holds open, when given)
 *   bpfstat empty TP...   loads one empty program per raw tracepoint TP (for
 *                         instance sys_enter sys_exit), attaches it, prints
 *                         "ready" and holds it until its standard input closes
 *
 * The counters move only while kernel.bpf_stats_enabled is 1. An empty program
 * measures what the counters themselves cost per run (two clock reads and a
 * per-CPU update), to be subtracted from the others.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int print_prog(__u32 id)
{
	struct bpf_prog_info info;
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* unloaded meanwhile */
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (__u32)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (__u64)(unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a)) {
		close(fd);
		return -errno;
	}
	close(fd);
	printf("%u %u %llu %llu %s\n", info.id, info.type, (unsigned long long)info.run_cnt,
	       (unsigned long long)info.run_time_ns, info.name[0] ? info.name : "-");
	return 0;
}

/* The ids of the programs PID holds open, from /proc/PID/fdinfo. */
static int list_pid(const char *pid)
{
	char path[64], fpath[384], line[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo", pid);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "bpfstat: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		unsigned int id;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fpath, sizeof(fpath), "%s/%s", path, de->d_name);
		f = fopen(fpath, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "prog_id: %u", &id) == 1)
				print_prog(id);
		fclose(f);
	}
	closedir(d);
	return 0;
}

static int list_all(void)
{
	union bpf_attr a;
	__u32 id = 0;
	int ret;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a))
			return errno == ENOENT ? 0 : 1;
		id = a.next_id;
		ret = print_prog(id);
		if (ret) {
			fprintf(stderr, "bpfstat: program %u: %s\n", id, strerror(-ret));
			return 1;
		}
	}
}

static int hold_empty(int n, char **tps)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	char c;

	for (int i = 0; i < n; i++) {
		union bpf_attr a;
		int prog, link;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
		a.insns = (__u64)(unsigned long)insns;
		a.insn_cnt = 2;
		a.license = (__u64)(unsigned long)"GPL";
		a.log_buf = (__u64)(unsigned long)log;
		a.log_size = sizeof(log);
		a.log_level = 1;
		snprintf(a.prog_name, sizeof(a.prog_name), "empty_%.9s", tps[i]);
		prog = (int)sys_bpf(BPF_PROG_LOAD, &a);
		if (prog < 0) {
			fprintf(stderr, "bpfstat: cannot load an empty program: %s\n%s", strerror(errno),
				log);
			return 1;
		}
		memset(&a, 0, sizeof(a));
		a.raw_tracepoint.name = (__u64)(unsigned long)tps[i];
		a.raw_tracepoint.prog_fd = (__u32)prog;
		link = (int)sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
		if (link < 0) {
			fprintf(stderr, "bpfstat: cannot attach to raw tracepoint %s: %s\n", tps[i],
				strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0; /* exit closes the links: the programs detach */
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "list") && argc <= 3)
		return argc == 3 ? list_pid(argv[2]) : list_all();
	if (argc >= 3 && !strcmp(argv[1], "empty"))
		return hold_empty(argc - 2, argv + 2);
	fprintf(stderr, "usage: bpfstat list [PID] | bpfstat empty TRACEPOINT...\n");
	return 2;
}
