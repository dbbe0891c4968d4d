// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tracer (see tracer.h): iotrace's BPF object attached for one cgroup,
 * its ring buffer read into ioacct_trace_rec records. The BPF side only
 * sees the calls of the traced cgroup and costs the rest of the node a few
 * loads per syscall while attached, nothing once closed.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "iotrace.skel.h"
#include "ioacct_abi.h"
#include "ioacct_ops.h"
#include "iotrace_abi.h"
#include "procfs.h"
#include "sysnr.h"
#include "tracer.h"
#include "util.h"

/* ---- what user space adds to the events: mount names, paths of fds ------------- */

/* Paths of open fds, from the opens traced, so fd calls have a path too. */
#define FD_BUCKETS 1024
struct fd_ent {
	struct fd_ent *next;
	uint32_t pid;
	int32_t fd;
	char path[IOTRACE_PATH_MAX];
};

struct ioacct_tracer {
	struct iotrace_bpf *skel;
	struct ring_buffer *rb;
	ioacct_tracer_fn fn;
	void *ctx;
	struct ioacct_mount *mounts;
	size_t nmounts;
	struct fd_ent *fds[FD_BUCKETS];
	uint32_t unknown_mnt;  /* last mount id no table had: not looked for again and again */
	bool calls;            /* calls handed over: not with IOACCT_TRACER_RPC_ONLY */
	uint64_t t0;
	uint64_t events;
};

static struct fd_ent **fd_slot(struct ioacct_tracer *t, uint32_t pid, int32_t fd)
{
	struct fd_ent **e = &t->fds[(pid * 31u + (uint32_t)fd) % FD_BUCKETS];

	while (*e && ((*e)->pid != pid || (*e)->fd != fd))
		e = &(*e)->next;
	return e;
}

static void fd_set_path(struct ioacct_tracer *t, uint32_t pid, int32_t fd, const char *path)
{
	struct fd_ent **e = fd_slot(t, pid, fd);

	if (!*e) {
		*e = calloc(1, sizeof(**e));
		if (!*e)
			return; /* the path of this fd will just not be known */
		(*e)->pid = pid;
		(*e)->fd = fd;
	}
	ioacct_strlcpy((*e)->path, path, sizeof((*e)->path));
}

static void fd_forget(struct ioacct_tracer *t, uint32_t pid, int32_t fd)
{
	struct fd_ent **e = fd_slot(t, pid, fd), *dead = *e;

	if (dead) {
		*e = dead->next;
		free(dead);
	}
}

/*
 * The mount point of mount id `id`: from the mount table read at start, or,
 * for a mount it lacks (the command mounted something, or lives in another
 * mount namespace), from the table of the process that did the call.
 */
static const char *mount_name(struct ioacct_tracer *t, uint32_t *idp, uint32_t pid, const char *path)
{
	const struct ioacct_mount *m;
	struct ioacct_mount *fresh;
	uint32_t id = *idp;
	size_t n;
	char err[256];

	/* An absolute path the kernel did not resolve (a failed open, mkdir, stat, ...). */
	if (!id) {
		m = path[0] == '/' ? ioacct_mount_of_path(t->mounts, t->nmounts, path) : NULL;
		if (!m)
			return "";
		*idp = m->mnt_id_old;
		return m->path;
	}
	m = ioacct_mount_find(t->mounts, t->nmounts, id);
	if (m)
		return m->path;
	if (id == t->unknown_mnt)
		return "";
	t->unknown_mnt = id;
	if (ioacct_mountinfo_read((pid_t)pid, &fresh, &n, err, sizeof(err)) == 0) {
		if (ioacct_mount_find(fresh, n, id)) {
			free(t->mounts);
			t->mounts = fresh;
			t->nmounts = n;
			t->unknown_mnt = 0;
			return ioacct_mount_find(t->mounts, t->nmounts, id)->path;
		}
		free(fresh);
	}
	return "";
}

/* The path of the call: its own, or that of the open that made its fd. */
static void event_path(struct ioacct_tracer *t, const char *raw, uint32_t pid, int32_t fd,
		       bool is_open, char *path)
{
	struct fd_ent **fe;

	memcpy(path, raw, IOTRACE_PATH_MAX);
	path[IOTRACE_PATH_MAX] = '\0';
	if (!path[0] && fd >= 0 && !is_open) {
		fe = fd_slot(t, pid, fd);
		if (*fe)
			ioacct_strlcpy(path, (*fe)->path, IOTRACE_PATH_MAX + 1);
	}
}

/* What a call's record and an RPC's share: who made it, and the mount of its path or fd. */
static void rec_origin(struct ioacct_tracer *t, struct ioacct_trace_rec *r, uint32_t pid,
		       uint32_t tid, uint32_t uid, uint32_t cgroup, uint32_t mnt_id, const char *comm,
		       const char *path)
{
	r->pid = pid;
	r->tid = tid;
	r->uid = uid;
	r->cgroup = cgroup;
	r->comm = comm;
	r->path = path;
	r->mnt_id = mnt_id;
	r->mount = mount_name(t, &r->mnt_id, pid, path);
}

static int on_rpc(struct ioacct_tracer *t, const struct iotrace_rpc_event *ev)
{
	struct ioacct_trace_rec r = { 0 };
	struct ioacct_trace_rpc rpc = { 0 };
	char comm[IOTRACE_COMM_LEN + 1], name[IOTRACE_RPC_NAME_MAX + 1], path[IOTRACE_PATH_MAX + 1];

	memcpy(comm, ev->comm, IOTRACE_COMM_LEN);
	comm[IOTRACE_COMM_LEN] = '\0';
	memcpy(name, ev->name, IOTRACE_RPC_NAME_MAX);
	name[IOTRACE_RPC_NAME_MAX] = '\0';
	event_path(t, ev->path, ev->pid, ev->fd, false, path);
	rpc.name = name;
	rpc.prog = ev->prog;
	rpc.vers = ev->vers;
	rpc.proc = ev->proc;
	rpc.xid = ev->xid;
	rpc.call = ev->op ? ev->op - 1 : IOACCT_TRACE_NO_OP;
	rpc.has_file = ev->flags & IOTRACE_RPC_FILE;
	rpc.writeback = ev->flags & IOTRACE_RPC_WRITEBACK;
	rpc.fileid = ev->fileid;
	rpc.count = rpc.has_file ? ev->count : 0;
	rpc.bytes_sent = ev->bytes_sent;
	rpc.bytes_recv = ev->bytes_recv;
	rpc.queue_ns = ev->queue_ns;
	rpc.rtt_ns = ev->rtt_ns;
	rpc.execute_ns = ev->execute_ns;
	rpc.retrans = ev->ntrans > 1 ? ev->ntrans - 1 : 0;
	r.op = IOACCT_TRACE_NO_OP;
	rec_origin(t, &r, ev->pid, ev->tid, ev->uid, ev->cgroup, ev->mnt_id, comm, path);
	r.offset = rpc.has_file ? ev->offset : -1;
	r.size = ev->flags & IOTRACE_RPC_DATA ? ev->count : 0;
	r.ret = ev->status;
	r.start_ns = ev->submit_ns > t->t0 ? ev->submit_ns - t->t0 : 0;
	r.dur_ns = ev->done_ns > ev->submit_ns ? ev->done_ns - ev->submit_ns : 0;
	r.rpc = &rpc;
	t->events++;
	t->fn(t->ctx, &r);
	return 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct ioacct_tracer *t = ctx;
	const struct iotrace_event *ev = data;
	struct ioacct_trace_rec r = { 0 };
	char comm[IOTRACE_COMM_LEN + 1], path[IOTRACE_PATH_MAX + 1];
	bool is_open = ev->op == IOACCT_OP_OPEN;

	if (len >= sizeof(struct iotrace_rpc_event) && ev->type == IOTRACE_EV_RPC)
		return on_rpc(t, data);
	if (len < sizeof(*ev) || ev->type != IOTRACE_EV_CALL)
		return 0;
	memcpy(comm, ev->comm, IOTRACE_COMM_LEN);
	comm[IOTRACE_COMM_LEN] = '\0';
	event_path(t, ev->path, ev->pid, ev->fd, is_open, path);
	r.op = ev->op;
	rec_origin(t, &r, ev->pid, ev->tid, ev->uid, ev->cgroup, ev->mnt_id, comm, path);
	r.offset = ev->offset;
	r.ret = ev->ret;
	r.size = (ev->op == IOACCT_OP_READ || ev->op == IOACCT_OP_WRITE) && ev->ret > 0 ?
		 (uint64_t)ev->ret : 0;
	r.start_ns = ev->start_ns > t->t0 ? ev->start_ns - t->t0 : 0;
	r.dur_ns = ev->dur_ns;
	/* --rpc=only: the opens and closes come for the paths of fds alone. */
	if (t->calls) {
		t->events++;
		t->fn(t->ctx, &r);
	}
	if (is_open && ev->ret >= 0 && path[0])
		fd_set_path(t, ev->pid, (int32_t)ev->ret, path);
	else if (ev->op == IOTRACE_OP_CLOSE && ev->fd >= 0)
		fd_forget(t, ev->pid, ev->fd);
	return 0;
}

/* ---- the BPF side ---------------------------------------------------------------- */

/* One sysmap entry; pread64, preadv, preadv2, pwrite64, ...: the offset is an argument. */
static void sysmap_set(struct iotrace_bpf *skel, long nr, const char *name, unsigned int op,
		       unsigned int kind)
{
	uint16_t e;

	if (nr < 0 || nr >= IOACCT_NR_SYSCALLS)
		return;
	e = ioacct_sysmap_entry(op, kind);
	if (!strncmp(name, "pread", 5) || !strncmp(name, "pwrite", 6))
		e |= IOTRACE_SYS_POSITIONAL;
	skel->rodata->sysmap[nr] = e;
}

/* The counters' syscalls (sysnr.h), and close, which iotrace shows and the counters do not count. */
static void fill_sysmap(struct iotrace_bpf *skel)
{
	for (size_t i = 0; i < ioacct_nsyscalls; i++)
		sysmap_set(skel, ioacct_syscalls[i].nr, ioacct_syscalls[i].name, ioacct_syscalls[i].op,
			   ioacct_syscalls[i].kind);
	sysmap_set(skel, SYS_close, "close", IOTRACE_OP_CLOSE, IOACCT_SK_FD);
}

/* ---- iotrace --rpc: sunrpc's and nfs's tracepoints ----------------------------------- */

/* Whether tracepoint `tp` has BTF (tp_btf programs need it): vmlinux's, or module `module`'s. */
static bool tp_has_btf(const struct btf *vmlinux, const char *module, const char *tp)
{
	char name[128];
	struct btf *m;
	bool found;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0)
		return true;
	m = btf__load_module_btf(module, (struct btf *)vmlinux);
	if (!m)
		return false;
	found = btf__find_by_name_kind(m, name, BTF_KIND_TYPEDEF) > 0;
	btf__free(m);
	return found;
}

int ioacct_tracer_rpc_check(bool *nfs, char *err, size_t errlen)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int ret = 0;

	*nfs = false;
	if (!vmlinux)
		return ioacct_seterr(err, errlen, -ENOENT, "the kernel has no BTF "
				     "(/sys/kernel/btf/vmlinux): RPCs cannot be traced");
	if (!tp_has_btf(vmlinux, "sunrpc", "rpc_task_begin") ||
	    !tp_has_btf(vmlinux, "sunrpc", "rpc_stats_latency")) {
		if (access("/sys/module/sunrpc", F_OK))
			ret = ioacct_seterr(err, errlen, -ENOENT, "the sunrpc module is not loaded "
					    "(nothing is mounted over NFS): no RPC to trace");
		else
			ret = ioacct_seterr(err, errlen, -ENOENT, "sunrpc has no BTF for its "
					    "tracepoints rpc_task_begin and rpc_stats_latency "
					    "(/sys/kernel/btf/sunrpc): RPCs cannot be traced");
	} else {
		*nfs = tp_has_btf(vmlinux, "nfs", "nfs_initiate_read") &&
		       tp_has_btf(vmlinux, "nfs", "nfs_initiate_write") &&
		       tp_has_btf(vmlinux, "nfs", "nfs_initiate_commit");
	}
	btf__free(vmlinux);
	return ret;
}

/* Loads the RPC programs with IOACCT_TRACER_RPC, and the NFS ones where nfs is loaded. */
static int setup_rpc(struct iotrace_bpf *skel, unsigned int flags, char *err, size_t errlen)
{
	bool rpc = flags & IOACCT_TRACER_RPC, nfs = false;
	int ret;

	if (rpc) {
		ret = ioacct_tracer_rpc_check(&nfs, err, errlen);
		if (ret)
			return ret;
	}
	bpf_program__set_autoload(skel->progs.iotrace_rpc_begin, rpc);
	bpf_program__set_autoload(skel->progs.iotrace_rpc_counted, rpc);
	bpf_program__set_autoload(skel->progs.iotrace_nfs_read, nfs);
	bpf_program__set_autoload(skel->progs.iotrace_nfs_write, nfs);
	bpf_program__set_autoload(skel->progs.iotrace_nfs_commit, nfs);
	bpf_program__set_autoload(skel->progs.iotrace_rpc_dirty, nfs);
	skel->rodata->emit_calls = !(rpc && (flags & IOACCT_TRACER_RPC_ONLY));
	skel->rodata->rpc_on = rpc;
	if (rpc)
		return 0;
	/* Without --rpc these maps are never used: one entry each, not megabytes. */
	ret = bpf_map__set_max_entries(skel->maps.rpcs, 1);
	return ret ? ret : bpf_map__set_max_entries(skel->maps.writers, 1);
}

/* libbpf's warnings, after the name of the program that loads the tracer. */
static const char *libbpf_ident = "iotrace";

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	fprintf(stderr, "%s: libbpf: ", libbpf_ident);
	return vfprintf(stderr, fmt, ap);
}

int ioacct_tracer_open(struct ioacct_tracer **out, const char *ident,
		       const struct ioacct_tracer_target *tg, unsigned int flags, unsigned long buffer_size,
		       uint64_t t0_ns, ioacct_tracer_fn fn, void *ctx, char *err, size_t errlen)
{
	libbpf_print_fn_t old_print;
	struct ioacct_tracer *t;
	char merr[256];
	int ret;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ioacct_seterr(err, errlen, -ENOMEM, "out of memory");
	t->fn = fn;
	t->ctx = ctx;
	t->calls = !((flags & IOACCT_TRACER_RPC) && (flags & IOACCT_TRACER_RPC_ONLY));
	/* Mount names of the calls; without the table they are looked up per process. */
	if (ioacct_mountinfo_read(getpid(), &t->mounts, &t->nmounts, merr, sizeof(merr)))
		t->nmounts = 0;
	libbpf_ident = ident;
	/* Only while loading: the daemon's own handler (probes.c) is back after. */
	old_print = libbpf_set_print(libbpf_quiet);
	t->skel = iotrace_bpf__open();
	if (!t->skel) {
		ret = ioacct_seterr(err, errlen, -errno, "cannot open the BPF object: %s",
				    strerror(errno));
		goto fail;
	}
	fill_sysmap(t->skel);
	t->skel->rodata->target_cgid = tg->cgid;
	t->skel->rodata->target_level = tg->level;
	t->skel->rodata->target_v1 = tg->v1;
	t->skel->rodata->v1_ssid = tg->v1_ssid;
	ret = setup_rpc(t->skel, flags, err, errlen);
	if (ret)
		goto fail;
	ret = bpf_map__set_max_entries(t->skel->maps.events, (uint32_t)buffer_size);
	if (!ret)
		ret = iotrace_bpf__load(t->skel);
	if (ret) {
		ret = ioacct_seterr(err, errlen, ret, "cannot load the BPF programs: %s (root, and a "
				    "kernel with BTF and BPF ring buffers, 5.8 or later, are needed)",
				    strerror(-ret));
		goto fail;
	}
	ret = iotrace_bpf__attach(t->skel);
	if (ret) {
		ret = ioacct_seterr(err, errlen, ret, "cannot attach to the sys_enter/sys_exit%s "
				    "tracepoints: %s", flags & IOACCT_TRACER_RPC ? " and sunrpc" : "",
				    strerror(-ret));
		goto fail;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_event, t, NULL);
	if (!t->rb) {
		ret = ioacct_seterr(err, errlen, -errno, "cannot read the ring buffer: %s",
				    strerror(errno));
		goto fail;
	}
	t->t0 = t0_ns ? t0_ns : ioacct_mono_ns();
	libbpf_set_print(old_print);
	*out = t;
	return 0;
fail:
	ioacct_tracer_close(t);
	libbpf_set_print(old_print);
	return ret;
}

int ioacct_tracer_poll(struct ioacct_tracer *t, int timeout_ms)
{
	int ret = ring_buffer__poll(t->rb, timeout_ms);

	return ret < 0 && ret != -EINTR ? ret : 0;
}

int ioacct_tracer_fd(const struct ioacct_tracer *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

int ioacct_tracer_drain(struct ioacct_tracer *t)
{
	int ret = ring_buffer__consume(t->rb);

	return ret < 0 ? ret : 0;
}

uint64_t ioacct_tracer_events(const struct ioacct_tracer *t)
{
	return t->events;
}

uint64_t ioacct_tracer_lost(const struct ioacct_tracer *t)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t sum = 0, *vals;
	uint32_t zero = 0;

	if (ncpus <= 0)
		return 0;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.lost), &zero, vals) == 0)
		for (int i = 0; i < ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

void ioacct_tracer_close(struct ioacct_tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	iotrace_bpf__destroy(t->skel);
	for (size_t i = 0; i < FD_BUCKETS; i++)
		while (t->fds[i])
			fd_forget(t, t->fds[i]->pid, t->fds[i]->fd);
	free(t->mounts);
	free(t);
}

/* ---- cgroups ------------------------------------------------------------------------ */

int ioacct_tracer_target(const char *dir, const char *v1_controller, struct ioacct_tracer_target *t,
			 char *err, size_t errlen)
{
	enum ioacct_hier hier = v1_controller ? IOACCT_HIER_V1 : IOACCT_HIER_V2;
	const char *what = v1_controller ? v1_controller : "cgroup2";
	char mnt[PATH_MAX];
	size_t n;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = ioacct_cgroup_mountpoint(hier, v1_controller, mnt, sizeof(mnt));
	if (ret)
		return ioacct_seterr(err, errlen, ret, "no %s cgroup hierarchy is mounted", what);
	n = strlen(mnt);
	if (strncmp(dir, mnt, n) || (dir[n] != '/' && dir[n]))
		return ioacct_seterr(err, errlen, -EINVAL, "cgroup %s is not in the %s hierarchy (%s)",
				     dir, what, mnt);
	ret = ioacct_cgroup_id(dir, &t->cgid);
	if (ret)
		return ioacct_seterr(err, errlen, ret, "cannot find the id of cgroup %s: %s", dir,
				     strerror(-ret));
	for (const char *p = dir + n; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			t->level++;
	if (v1_controller) {
		ret = ioacct_cgroup_v1_ssid(v1_controller, &t->v1_ssid);
		if (ret)
			return ioacct_seterr(err, errlen, ret, "no cgroup v1 controller %s in "
					     "/proc/cgroups", v1_controller);
		t->v1 = true;
	}
	return 0;
}
