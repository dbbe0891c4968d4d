// SPDX-License-Identifier: GPL-2.0-or-later
#include "probes.h"
#include "probes_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ioacct.skel.h"
#include "ioacct_abi.h"
#include "ioacct_ops.h"
#include "config.h"
#include "log.h"
#include "sysnr.h"
#include "procfs.h"
#include "util.h"

#define BPF_FS_MAGIC_ 0xcafe4a11
#define TRACEFS_MAGIC_ 0x74726163

/* The maps that carry state across daemon restarts, pinned by name. */
#define PINNED_MAPS(X)                                                                    \
	X(state) X(watch) X(slots) X(stats) X(dropped) X(mountpoints) X(tasks) X(files)      \
	X(fpaths) X(fcount) X(flive) X(flast) X(flastnext)


/* The per-file records' table: 16 steps' worth at max_files, within 1..16M entries. */
static uint32_t files_room(const struct ioacct_probes_opts *opts)
{
	uint64_t n = (uint64_t)(opts->max_files ? opts->max_files : 4096) * 16;

	return n > (1u << 24) ? 1u << 24 : (uint32_t)n;
}

/* ---- which object --------------------------------------------------------------- */

/*
 * The kernel's BTF, parsed once while the probes open and freed when they
 * have (kernel_btf_release): the checks below each parsed it again, and a
 * parse of /sys/kernel/btf/vmlinux (5.5 MB on 6.18) takes ~0.2 s here and
 * seconds in the kernel matrix's QEMU (TCG). NULL when the kernel has none.
 */
static struct btf *vmlinux_btf;
static bool vmlinux_btf_tried;

static const struct btf *kernel_btf(void)
{
	if (!vmlinux_btf_tried) {
		vmlinux_btf = btf__load_vmlinux_btf();
		vmlinux_btf_tried = true;
	}
	return vmlinux_btf;
}

static void kernel_btf_release(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	vmlinux_btf_tried = false;
}

/*
 * Whether to load the object that reads kernel memory by plain loads
 * (bpf/ioacct_bpf_common.h, KREAD): where the kernel's BTF has the kfunc
 * bpf_rdonly_cast, unless IOACCT_BPF_COMPAT=1 asks for the other (to compare
 * the two on one kernel). Decided once.
 */
static bool direct_reads(void)
{
	static int direct = -1;

	if (direct < 0) {
		const char *force = getenv("IOACCT_BPF_COMPAT");
		const struct btf *vmlinux = kernel_btf();

		direct = vmlinux && btf__find_by_name_kind(vmlinux, "bpf_rdonly_cast", BTF_KIND_FUNC) >= 0;
		if (force && !strcmp(force, "1"))
			direct = 0;
	}
	return direct;
}

/*
 * Whether the running kernel's struct mount has mnt_id_unique (6.8+) and
 * the daemon takes it (not legacy): then the programs key mounts by it
 * (mount_key() in bpf/ioacct_mounts.bpf.h decides by the same BTF and the
 * same flag), and a 32-bit id is no key of theirs.
 */
static bool unique_mount_ids(bool legacy)
{
	const struct btf *vmlinux = legacy ? NULL : kernel_btf();
	const struct btf_type *t;
	bool found = false;
	int id;

	id = vmlinux ? btf__find_by_name_kind(vmlinux, "mount", BTF_KIND_STRUCT) : -1;
	t = id < 0 ? NULL : btf__type_by_id(vmlinux, (__u32)id);
	for (int i = 0; t && i < btf_vlen(t) && !found; i++)
		found = !strcmp(btf__name_by_offset(vmlinux, btf_members(t)[i].name_off),
				"mnt_id_unique");
	return found;
}

/*
 * ioacct_bpf__open(), of the object this kernel takes: the skeleton's own,
 * or the compatible one, which has the same maps, programs and globals (the
 * build checks), so the skeleton's pointers fit it too.
 */
static struct ioacct_bpf *skel_open(void)
{
	struct ioacct_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = ioacct_bpf__create_skeleton(obj);
	if (!err && !direct_reads())
		obj->skeleton->data = (void *)ioacct_probes_compat_obj(&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	if (err) {
		ioacct_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

const char *ioacct_probes_reads(const struct ioacct_probes *p)
{
	(void)p;
	return direct_reads() ? "direct" : "probe-read";
}

/* ---- libbpf messages go through our log ----------------------------------- */

static bool quiet_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum ioacct_log_level l = IOACCT_LOG_DEBUG;

	if (level == LIBBPF_WARN && !quiet_libbpf)
		l = IOACCT_LOG_WARN;
	else if (level == LIBBPF_DEBUG)
		return 0;
	ioacct_vlog(l, fmt, ap);
	return 0;
}

/* ---- the syscall table ------------------------------------------------------ */

static void fill_sysmap(struct ioacct_bpf *skel)
{
	for (size_t i = 0; i < ioacct_nsyscalls; i++) {
		const struct ioacct_syscall *s = &ioacct_syscalls[i];

		if (s->nr >= 0 && s->nr < IOACCT_NR_SYSCALLS)
			skel->rodata->sysmap[s->nr] =
				ioacct_sysmap_entry(s->op, s->kind | ioacct_syscall_flags(s->name));
	}
	skel->rodata->page_shift = (uint32_t)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
}

/* ---- file systems the probes need ------------------------------------------- */

static int ensure_fs(const char *dir, long magic, const char *type, const char *opts, bool required,
		     char *err, size_t errlen)
{
	struct statfs sfs;

	if (statfs(dir, &sfs) == 0 && (long)sfs.f_type == magic)
		return 0;
	if (mount(type, dir, type, 0, opts) == 0) {
		log_info("mounted %s on %s", type, dir);
		return 0;
	}
	if (!required) {
		log_warn("cannot mount %s on %s: %s", type, dir, strerror(errno));
		return 0;
	}
	snprintf(err, errlen, "cannot mount %s on %s: %s (ioacctd must run as root)", type, dir,
		 strerror(errno));
	return -errno;
}

/* ---- backends ------------------------------------------------------------------ */

struct backend {
	const char *name;
	enum ioacct_probe_mode mode;
	bool implemented;             /* this build has its full program set */
};

static const struct backend backends[] = {
	{ "fentry", IOACCT_PROBE_FENTRY, true },
	{ "kprobe", IOACCT_PROBE_KPROBE, true },
	{ "tracepoint", IOACCT_PROBE_TRACEPOINT, true },
	{ "syscall-tp", IOACCT_PROBE_SYSCALL_TP, true },
};

/* Name prefixes of each backend's programs (see bpf/ioacct.bpf.c). */
static bool prog_of_mode(const char *name, enum ioacct_probe_mode mode)
{
	/* The per-task accumulators' exit and flush: every backend's on_exit fills them. */
	if (!strncmp(name, "ioacct_acc_", 11))
		return true;
	switch (mode) {
	case IOACCT_PROBE_FENTRY:
		return !strncmp(name, "ioacct_fe_", 10) || !strncmp(name, "ioacct_fx_", 10);
	case IOACCT_PROBE_KPROBE:
		return !strncmp(name, "ioacct_ks_", 10) || !strncmp(name, "ioacct_kr_", 10);
	case IOACCT_PROBE_SYSCALL_TP:
		return !strncmp(name, "ioacct_te_", 10) || !strncmp(name, "ioacct_tx_", 10);
	default:
		return !strcmp(name, "ioacct_sys_enter") || !strcmp(name, "ioacct_sys_exit");
	}
}

#if defined(__x86_64__)
#define SYSCALL_FN_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define SYSCALL_FN_PREFIX "__arm64_sys_"
#endif

/* The kernel function a per-syscall program attaches to, from its section name. */
static void prog_target(struct bpf_program *prog, char *fn, size_t len)
{
	const char *sec = bpf_program__section_name(prog), *slash = strchr(sec, '/');

	fn[0] = '\0';
	if (!slash)
		return;
	if (!strncmp(sec, "ksyscall/", 9) || !strncmp(sec, "kretsyscall/", 12))
		snprintf(fn, len, SYSCALL_FN_PREFIX "%s", slash + 1);
	else if (!strncmp(sec, "tracepoint/", 11))
		snprintf(fn, len, "%s", strrchr(sec, '/') + 1); /* sys_enter_read */
	else
		snprintf(fn, len, "%s", slash + 1);
}

/*
 * The kprobe and syscall-tp backends' exits: one program per syscall kind
 * (ioacct_kr_KIND, ioacct_tx_KIND: IOACCT_SYS_KINDS), attached to the exit
 * of every syscall of that kind whose entry program is loaded.
 */
struct sys_row {
	const char *name; /* the kernel's: newstat, sendfile64 */
	unsigned int kind;
};

#define SYS_ROW(name, uname, op, kind) { #name, IOACCT_SK_##kind },
static const struct sys_row sys_rows[] = { IOACCT_SYSCALLS(SYS_ROW) };
#undef SYS_ROW
#define KIND_ROW(kind) { #kind, IOACCT_SK_##kind },
static const struct sys_row exit_kinds[] = { IOACCT_SYS_KINDS(KIND_ROW) };
#undef KIND_ROW

/* The kind of a per-kind exit program (ioacct_kr_FD_DATA), 0 for any other program. */
static unsigned int exit_prog_kind(const char *name)
{
	if (strncmp(name, "ioacct_kr_", 10) && strncmp(name, "ioacct_tx_", 10))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(exit_kinds); i++)
		if (!strcmp(name + 10, exit_kinds[i].name))
			return exit_kinds[i].kind;
	return 0;
}

/* Whether a per-kind exit program is the kprobe backend's (ioacct_kr_), else syscall-tp's. */
static bool exit_prog_kprobe(const char *name)
{
	return !strncmp(name, "ioacct_kr_", 10);
}

/* The entry program of syscall row r in the backend of exit program `exit`, if loaded. */
static bool entry_loaded(const struct ioacct_probes *p, const char *exit, const struct sys_row *r)
{
	struct bpf_program *prog;
	char name[64];

	snprintf(name, sizeof(name), "ioacct_%s_%s", exit_prog_kprobe(exit) ? "ks" : "te", r->name);
	prog = bpf_object__find_program_by_name(p->skel->obj, name);
	return prog && bpf_program__autoload(prog);
}

/*
 * Whether the per-syscall tracepoint exists, in tracefs wherever libbpf
 * looks for it: a syscall may be missing on an architecture or a kernel.
 */
static bool syscall_tp_exists(const char *tp)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", roots[i], tp);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

static struct bpf_program *probe_prog(struct ioacct_bpf *skel, enum ioacct_probe_mode mode)
{
	switch (mode) {
	case IOACCT_PROBE_FENTRY:
		return skel->progs.ioacct_probe_fentry;
	case IOACCT_PROBE_KPROBE:
		return skel->progs.ioacct_probe_kprobe;
	case IOACCT_PROBE_SYSCALL_TP:
		return skel->progs.ioacct_probe_syscall_tp;
	default:
		return skel->progs.ioacct_probe_tracepoint;
	}
}

static void autoload_only(struct ioacct_bpf *skel, struct bpf_program *keep[], size_t n)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		bool on = false;

		for (size_t i = 0; i < n; i++)
			on |= prog == keep[i];
		bpf_program__set_autoload(prog, on);
	}
}

/*
 * Really loads and attaches a do-nothing program of the backend's kind: a
 * kernel may load a program type and still refuse to attach it.
 */
static int probe_backend(enum ioacct_probe_mode mode, char *why, size_t len)
{
	struct ioacct_bpf *skel;
	struct bpf_program *prog;
	struct bpf_link *link;
	struct bpf_map *map;
	int err;

	skel = skel_open();
	if (!skel) {
		snprintf(why, len, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	bpf_object__for_each_map(map, skel->obj)
		if (bpf_map__type(map) != BPF_MAP_TYPE_TASK_STORAGE)
			bpf_map__set_max_entries(map, 1);
	prog = probe_prog(skel, mode);
	autoload_only(skel, &prog, 1);
	quiet_libbpf = true;
	err = ioacct_bpf__load(skel);
	if (err) {
		snprintf(why, len, "load refused: %s", strerror(-err));
		goto out;
	}
	link = bpf_program__attach(prog);
	if (!link) {
		err = -errno;
		if (mode == IOACCT_PROBE_KPROBE && access("/sys/bus/event_source/devices/kprobe", F_OK))
			snprintf(why, len, "attach refused: %s (kernel built without CONFIG_KPROBES)",
				 strerror(-err));
		else if (mode == IOACCT_PROBE_SYSCALL_TP && !syscall_tp_exists("sys_enter_read"))
			snprintf(why, len,
				 "attach refused: %s (no syscalls tracepoints in tracefs: kernel built "
				 "without CONFIG_FTRACE_SYSCALLS, or tracefs not mounted)",
				 strerror(-err));
		else
			snprintf(why, len, "attach refused: %s", strerror(-err));
		goto out;
	}
	bpf_link__destroy(link);
out:
	quiet_libbpf = false;
	ioacct_bpf__destroy(skel);
	return err;
}

static int choose_backend(struct ioacct_probes *p, enum ioacct_probe_mode want, char *err,
			  size_t errlen)
{
	size_t off = 0;

	for (size_t i = 0; i < ARRAY_SIZE(backends); i++) {
		const struct backend *b = &backends[i];
		char why[256];

		if (want != IOACCT_PROBE_AUTO && want != b->mode)
			continue;
		if (probe_backend(b->mode, why, sizeof(why)) == 0) {
			if (b->implemented) {
				snprintf(p->mode, sizeof(p->mode), "%s", b->name);
				off += snprintf(p->reason + off, sizeof(p->reason) - off, "%s%s: usable",
						off ? "; " : "", b->name);
				return 0;
			}
			snprintf(why, sizeof(why), "the kernel allows it, but this build has no %s programs yet",
				 b->name);
		}
		if (off < sizeof(p->reason))
			off += snprintf(p->reason + off, sizeof(p->reason) - off, "%s%s: %s",
					off ? "; " : "", b->name, why);
		if (want != IOACCT_PROBE_AUTO) {
			snprintf(err, errlen, "probe mode %s is not available on this kernel: %s", b->name, why);
			return -EOPNOTSUPP;
		}
	}
	snprintf(err, errlen, "no probe backend works on this kernel: %s", p->reason);
	return -EOPNOTSUPP;
}

/*
 * The views (issue 14): programs named ioacct_pc_*, beside whatever backend.
 * Each event of a view has alternatives, taken in this order: the tp_btf
 * program of a tracepoint the kernel's BTF has in the form it expects (nargs:
 * the tracepoint's arguments, 0 for any), else the fentry program on the
 * kernel function, else the kprobe one (see view_kind_ok). Entries of one
 * event, kind and target go together (a kprobe and its kretprobe). A view is
 * on when each of its events has a program loaded; none is needed to start.
 */
enum view_kind { VIEW_TP, VIEW_FENTRY, VIEW_KPROBE };

static const struct view_prog {
	const char *prog, *view, *event;
	enum view_kind kind;
	const char *target;            /* the tracepoint, or the kernel function */
	int nargs;
} view_progs[] = {
	{ "ioacct_pc_add", "cache", "add", VIEW_TP, "mm_filemap_add_to_page_cache", 0 },
	{ "ioacct_pc_fault", "mmap", "fault", VIEW_TP, "mm_filemap_fault", 0 },
	{ "ioacct_pc_fault_fe", "mmap", "fault", VIEW_FENTRY, "filemap_fault", 0 },
	{ "ioacct_pc_fault_kp", "mmap", "fault", VIEW_KPROBE, "filemap_fault", 0 },
	{ "ioacct_pc_map_pages", "mmap", "map_pages", VIEW_TP, "mm_filemap_map_pages", 0 },
	{ "ioacct_pc_map_pages_fx", "mmap", "map_pages", VIEW_FENTRY, "filemap_map_pages", 0 },
	{ "ioacct_pc_map_pages_kp", "mmap", "map_pages", VIEW_KPROBE, "filemap_map_pages", 0 },
	{ "ioacct_pc_map_pages_kr", "mmap", "map_pages", VIEW_KPROBE, "filemap_map_pages", 0 },
	/* The pages faults map (issue 29): set_pte_range since 6.5, do_set_pte before. */
	{ "ioacct_pc_pte_fe", "mmap", "pte", VIEW_FENTRY, "set_pte_range", 0 },
	{ "ioacct_pc_pte1_fe", "mmap", "pte", VIEW_FENTRY, "do_set_pte", 0 },
	{ "ioacct_pc_pte_kp", "mmap", "pte", VIEW_KPROBE, "set_pte_range", 0 },
	{ "ioacct_pc_pte1_kp", "mmap", "pte", VIEW_KPROBE, "do_set_pte", 0 },
	{ "ioacct_pc_pmd_fx", "mmap", "pmd", VIEW_FENTRY, "do_set_pmd", 0 },
	{ "ioacct_pc_pmd_kp", "mmap", "pmd", VIEW_KPROBE, "do_set_pmd", 0 },
	{ "ioacct_pc_pmd_kr", "mmap", "pmd", VIEW_KPROBE, "do_set_pmd", 0 },
	{ "ioacct_pc_sync_ra", "readahead", "sync_ra", VIEW_TP, "page_cache_sync_ra", 0 },
	{ "ioacct_pc_sync_ra_fe", "readahead", "sync_ra", VIEW_FENTRY, "page_cache_sync_ra", 0 },
	{ "ioacct_pc_sync_ra_kp", "readahead", "sync_ra", VIEW_KPROBE, "page_cache_sync_ra", 0 },
	{ "ioacct_pc_async_ra", "readahead", "async_ra", VIEW_TP, "page_cache_async_ra", 0 },
	{ "ioacct_pc_async_ra_fe", "readahead", "async_ra", VIEW_FENTRY, "page_cache_async_ra", 0 },
	{ "ioacct_pc_async_ra_kp", "readahead", "async_ra", VIEW_KPROBE, "page_cache_async_ra", 0 },
	{ "ioacct_pc_uring_submit", "uring", "submit", VIEW_TP, "io_uring_submit_req", 0 },
	{ "ioacct_pc_uring_submit_sqe", "uring", "submit", VIEW_TP, "io_uring_submit_sqe", 0 },
	{ "ioacct_pc_uring_complete", "uring", "complete", VIEW_TP, "io_uring_complete", 3 },
	{ "ioacct_pc_uring_complete7", "uring", "complete", VIEW_TP, "io_uring_complete", 7 },
};

static const char *const view_kind_names[] = { "tracepoint", "fentry", "kprobe" };

static bool view_prog(const char *name)
{
	return !strncmp(name, "ioacct_pc_", 10);
}

/* The number of arguments of a btf_trace_<tp> typedef's function (the first is the context). */
static int tp_nargs(const struct btf *vmlinux, const char *type)
{
	int id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(vmlinux, (__u32)id);

	/* typedef -> pointer -> function prototype */
	for (int hop = 0; t && hop < 2; hop++)
		t = btf__type_by_id(vmlinux, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

/* Whether the kernel's BTF has an entry's tracepoint in its form, or its function. */
static bool view_target_exists(const struct btf *vmlinux, const struct view_prog *v)
{
	char type[96];

	if (!vmlinux)
		return false;
	if (v->kind != VIEW_TP)
		return btf__find_by_name_kind(vmlinux, v->target, BTF_KIND_FUNC) >= 0;
	snprintf(type, sizeof(type), "btf_trace_%s", v->target);
	if (btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF) < 0)
		return false;
	return !v->nargs || tp_nargs(vmlinux, type) == v->nargs + 1;
}

/*
 * Whether programs of a kind may serve a view: tracepoints always; fentry
 * with the fentry backend, or, with tracepoint or syscall-tp, when a fentry
 * program attaches here; kprobes with the kprobe backend (chosen where fentry
 * is refused, or forced), or when a kprobe attaches. Each kernel is asked
 * once, and only when a view needs it (ok: -1 not asked yet, 0 no, 1 yes).
 */
static bool view_kind_ok(enum view_kind kind, enum ioacct_probe_mode mode, int ok[])
{
	char why[256];

	if (kind == VIEW_TP)
		return true;
	if (ok[kind] < 0) {
		if (kind == VIEW_FENTRY && mode == IOACCT_PROBE_KPROBE)
			ok[kind] = 0;
		else if ((kind == VIEW_FENTRY && mode == IOACCT_PROBE_FENTRY) ||
			 (kind == VIEW_KPROBE && mode == IOACCT_PROBE_KPROBE))
			ok[kind] = 1;
		else
			ok[kind] = probe_backend(kind == VIEW_FENTRY ? IOACCT_PROBE_FENTRY : IOACCT_PROBE_KPROBE,
						 why, sizeof(why)) == 0;
	}
	return ok[kind] == 1;
}

/* Whether any view program is to be loaded. */
static bool views_loading(const struct ioacct_probes *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(view_progs); i++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(p->skel->obj, view_progs[i].prog);

		if (prog && bpf_program__autoload(prog))
			return true;
	}
	return false;
}

static bool view_same_group(const struct view_prog *a, const struct view_prog *b)
{
	return !strcmp(a->event, b->event) && a->kind == b->kind && !strcmp(a->target, b->target) &&
	       a->nargs == b->nargs;
}

/*
 * Turns on, for each event of a view, the first group of programs that can
 * serve it on this kernel, and every other view program off.
 */
/* Whether ioacct.conf's views = asks for the view of this name. */
static bool view_wanted(const struct ioacct_probes *p, const char *view)
{
	for (size_t i = 0; i < IOACCT_NR_VIEWS; i++)
		if (!strcmp(ioacct_view_names[i], view))
			return p->want_views & (1u << i);
	return false;
}

static void select_views(struct ioacct_probes *p, const struct btf *vmlinux, enum ioacct_probe_mode mode)
{
	int ok[3] = { 1, -1, -1 };
	bool on[ARRAY_SIZE(view_progs)] = { false };
	struct bpf_program *prog;

	for (size_t i = 0; i < ARRAY_SIZE(view_progs); i++) {
		const struct view_prog *v = &view_progs[i];
		bool taken = false, usable = true;
		size_t j;

		if (!view_wanted(p, v->view))
			continue;
		for (j = 0; j < i && !taken; j++)
			taken = on[j] && !strcmp(view_progs[j].event, v->event);
		if (taken || (i > 0 && view_same_group(&view_progs[i - 1], v)))
			continue;
		/* The whole group, from i on. */
		for (j = i; j < ARRAY_SIZE(view_progs) && view_same_group(&view_progs[j], v); j++)
			usable &= bpf_object__find_program_by_name(p->skel->obj, view_progs[j].prog) &&
				  view_target_exists(vmlinux, &view_progs[j]);
		if (usable && view_kind_ok(v->kind, mode, ok))
			for (j = i; j < ARRAY_SIZE(view_progs) && view_same_group(&view_progs[j], v); j++)
				on[j] = true;
	}
	/* A view program not in the table is never loaded. */
	bpf_object__for_each_program(prog, p->skel->obj) {
		bool use = false;

		if (!view_prog(bpf_program__name(prog)))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(view_progs); i++)
			use |= on[i] && !strcmp(view_progs[i].prog, bpf_program__name(prog));
		bpf_program__set_autoload(prog, use);
	}
}

/*
 * Lists the views whose events all have a program loaded, in p->views and
 * p->job_mode, and in p->views_detail with what serves those not served by
 * tracepoints ("cache,mmap,uring (mmap by fentry)"). The mmap view wanted
 * without all of its events is listed as "mmap-nohook": its faults may be
 * counted, its bytes are not (issue 29: only fentry or kprobes reach the
 * functions that map the pages), and the reports say so.
 */
static void views_note(struct ioacct_probes *p)
{
	size_t off = 0, doff = 0;
	char how[160] = "";

	p->views[0] = '\0';
	for (size_t v = 0; v < IOACCT_NR_VIEWS; v++) {
		bool all = true, partial_mmap = false;
		enum view_kind kind = VIEW_TP;

		for (size_t i = 0; i < ARRAY_SIZE(view_progs); i++) {
			const struct view_prog *e = &view_progs[i];
			bool served = false;

			if (strcmp(e->view, ioacct_view_names[v]))
				continue;
			for (size_t j = 0; j < ARRAY_SIZE(view_progs); j++) {
				struct bpf_program *prog;

				if (strcmp(view_progs[j].event, e->event))
					continue;
				prog = bpf_object__find_program_by_name(p->skel->obj, view_progs[j].prog);
				if (prog && bpf_program__autoload(prog)) {
					served = true;
					if (view_progs[j].kind > kind)
						kind = view_progs[j].kind;
				}
			}
			all &= served;
		}
		if (!all && !(partial_mmap = !strcmp(ioacct_view_names[v], "mmap") &&
					    (p->want_views & (1u << v))))
			continue;
		if (off < sizeof(p->views))
			off += (size_t)snprintf(p->views + off, sizeof(p->views) - off, "%s%s%s",
						off ? "," : "", ioacct_view_names[v],
						partial_mmap ? "-nohook" : "");
		if (kind != VIEW_TP && doff < sizeof(how))
			doff += (size_t)snprintf(how + doff, sizeof(how) - doff, "%s%s by %s",
						 doff ? ", " : "", ioacct_view_names[v], view_kind_names[kind]);
		if (partial_mmap && doff < sizeof(how))
			doff += (size_t)snprintf(how + doff, sizeof(how) - doff,
						 "%smmap bytes not measured: no fentry nor kprobe on "
						 "set_pte_range/do_set_pmd", doff ? ", " : "");
	}
	snprintf(p->views_detail, sizeof(p->views_detail), "%s%s%s%s", p->views[0] ? p->views : "none",
		 how[0] ? " (" : "", how, how[0] ? ")" : "");
	/* "files=off" before "views=": a reader of an older store finds the views where they were. */
	snprintf(p->job_mode, sizeof(p->job_mode), "%s%s views=%s", p->mode,
		 p->files_off ? " " IOACCT_PROBE_FILES_OFF : "", p->views[0] ? p->views : "none");
}

/* Loads the per-kind exits of the mode whose kind has a syscall with its entry loaded. */
static size_t select_exits(struct ioacct_probes *p, enum ioacct_probe_mode mode)
{
	struct bpf_program *prog;
	size_t on = 0;

	bpf_object__for_each_program(prog, p->skel->obj) {
		const char *name = bpf_program__name(prog);
		unsigned int kind = exit_prog_kind(name);
		bool use = false;

		if (!kind)
			continue;
		if (prog_of_mode(name, mode))
			for (size_t i = 0; i < ARRAY_SIZE(sys_rows); i++)
				use |= sys_rows[i].kind == kind && entry_loaded(p, name, &sys_rows[i]);
		bpf_program__set_autoload(prog, use);
		on += use;
	}
	return on;
}

/*
 * Turns on the programs of a backend whose kernel function exists (a
 * syscall may be missing on an architecture or a kernel), off all others.
 * Returns how many are on and says which syscalls are not covered.
 */
static size_t select_progs(struct ioacct_probes *p, enum ioacct_probe_mode mode)
{
	const struct btf *vmlinux = kernel_btf();
	struct bpf_program *prog;
	char missing[512] = "";
	size_t on = 0, off = 0;

	bpf_object__for_each_program(prog, p->skel->obj) {
		const char *name = bpf_program__name(prog);
		bool use = prog_of_mode(name, mode);
		char fn[128];

		if (view_prog(name) || exit_prog_kind(name))
			continue;
		if (use && strncmp(name, "ioacct_acc_", 11) &&
		    (vmlinux || mode == IOACCT_PROBE_SYSCALL_TP) &&
		    (mode == IOACCT_PROBE_FENTRY || mode == IOACCT_PROBE_KPROBE ||
		     mode == IOACCT_PROBE_SYSCALL_TP)) {
			prog_target(prog, fn, sizeof(fn));
			if (mode == IOACCT_PROBE_SYSCALL_TP ? !syscall_tp_exists(fn) :
			    btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) < 0) {
				use = false;
				/* Each syscall has two programs: name it once. */
				if (!strncmp(name, "ioacct_fe_", 10) || !strncmp(name, "ioacct_ks_", 10) ||
				    !strncmp(name, "ioacct_te_", 10))
					off += (size_t)snprintf(missing + off, sizeof(missing) - off, "%s%s",
								off ? " " : "", name + 10);
				if (off >= sizeof(missing))
					off = sizeof(missing) - 1;
			}
		}
		bpf_program__set_autoload(prog, use);
		on += use;
	}
	on += select_exits(p, mode);
	select_views(p, vmlinux, mode);
	if (missing[0]) {
		size_t l = strlen(p->reason);

		snprintf(p->reason + l, sizeof(p->reason) - l, " (no such syscall function here: %s)", missing);
	}
	views_note(p);
	return on;
}

/* ---- pins ----------------------------------------------------------------------------- */

static void pin_path(const struct ioacct_probes *p, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", p->dir, name);
}

/*
 * Which backend an earlier daemon left attached, from the names of its
 * pinned links; "" when there are none.
 */
static const char *pinned_mode(const struct ioacct_probes *p)
{
	const char *mode = "";
	struct dirent *de;
	DIR *d = opendir(p->dir);

	if (!d)
		return mode;
	while ((de = readdir(d)) && !mode[0]) {
		if (!strncmp(de->d_name, "link_ioacct_fx_", 15))
			mode = "fentry";
		else if (!strncmp(de->d_name, "link_ioacct_kr_", 15))
			mode = "kprobe";
		else if (!strcmp(de->d_name, "link_ioacct_sys_exit"))
			mode = "tracepoint";
		else if (!strncmp(de->d_name, "link_ioacct_tx_", 15))
			mode = "syscall-tp";
		/* The marker left while detached (nothing watched): the maps are there. */
		else if (!strcmp(de->d_name, "mode_fentry"))
			mode = "fentry";
		else if (!strcmp(de->d_name, "mode_kprobe"))
			mode = "kprobe";
		else if (!strcmp(de->d_name, "mode_tracepoint"))
			mode = "tracepoint";
		else if (!strcmp(de->d_name, "mode_syscall-tp"))
			mode = "syscall-tp";
	}
	closedir(d);
	return mode;
}

/* Removes every pin: links detach when the daemon closes them too. */
static void unpin_all(const struct ioacct_probes *p)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(p->dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		pin_path(p, de->d_name, path, sizeof(path));
		if (unlink(path) && errno == EISDIR)
			rmdir(path); /* the mode marker */
	}
	closedir(d);
	rmdir(p->dir);
	/* And the pin directory itself when nothing else is in it. */
	char *slash = strrchr(p->dir, '/');

	if (slash) {
		*slash = '\0';
		rmdir(p->dir);
		*slash = '/';
	}
}

static int reuse_maps(struct ioacct_probes *p, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, ret;

#define REUSE(m)                                                                          \
	pin_path(p, #m, path, sizeof(path));                                              \
	fd = bpf_obj_get(path);                                                           \
	if (fd < 0) {                                                                     \
		snprintf(err, errlen, "cannot open pinned map %s: %s", path, strerror(errno)); \
		return -errno;                                                            \
	}                                                                                 \
	ret = bpf_map__reuse_fd(p->skel->maps.m, fd);                                     \
	close(fd);                                                                        \
	if (ret) {                                                                        \
		snprintf(err, errlen, "cannot reuse pinned map %s: %s", path, strerror(-ret)); \
		return ret;                                                               \
	}
	PINNED_MAPS(REUSE)
#undef REUSE
	return 0;
}

static int pin_maps(struct ioacct_probes *p, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret;

#define PIN(m)                                                                         \
	pin_path(p, #m, path, sizeof(path));                                           \
	ret = bpf_map__pin(p->skel->maps.m, path);                                     \
	if (ret) {                                                                     \
		snprintf(err, errlen, "cannot pin map at %s: %s", path, strerror(-ret)); \
		return ret;                                                            \
	}
	PINNED_MAPS(PIN)
#undef PIN
	return 0;
}

int probes_publish_state(struct ioacct_probes *p)
{
	uint32_t zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.state), &zero, &p->st, BPF_ANY))
		return -errno;
	return 0;
}

/* Keeps a link for the detach; with a name, pins it as link_NAME too. */
static int keep_link(struct ioacct_probes *p, struct bpf_link *link, const char *name, char *err,
		     size_t errlen)
{
	char path[PATH_MAX], pin[160];
	int ret;

	if (p->nlinks == p->caplinks) {
		size_t ncap = p->caplinks ? p->caplinks * 2 : 16;
		struct bpf_link **nl = realloc(p->links, ncap * sizeof(*nl));

		if (!nl) {
			bpf_link__destroy(link);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		p->links = nl;
		p->caplinks = ncap;
	}
	p->links[p->nlinks++] = link;
	if (!name)
		return 0;
	snprintf(pin, sizeof(pin), "link_%s", name);
	pin_path(p, pin, path, sizeof(path));
	ret = bpf_link__pin(link, path);
	if (ret)
		snprintf(err, errlen, "cannot pin link at %s: %s", path, strerror(-ret));
	return ret;
}

/*
 * Attaches a per-kind exit program to the exit of each syscall of its kind
 * whose entry is loaded: a kretprobe on its function, or its sys_exit_
 * tracepoint. With pin, pins each link as link_PROG_SYSCALL.
 */
static int attach_exits(struct ioacct_probes *p, struct bpf_program *prog, bool pin, char *err,
			size_t errlen)
{
	LIBBPF_OPTS(bpf_ksyscall_opts, kopts, .retprobe = true);
	const char *pname = bpf_program__name(prog);
	unsigned int kind = exit_prog_kind(pname);
	bool kprobe = exit_prog_kprobe(pname);
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(sys_rows); i++) {
		const struct sys_row *r = &sys_rows[i];
		struct bpf_link *link;
		char name[128];

		if (r->kind != kind || !entry_loaded(p, pname, r))
			continue;
		snprintf(name, sizeof(name), "sys_exit_%s", r->name);
		link = kprobe ? bpf_program__attach_ksyscall(prog, r->name, &kopts) :
				bpf_program__attach_tracepoint(prog, "syscalls", name);
		if (!link) {
			ret = -errno;
			snprintf(err, errlen, "cannot attach %s to %s's exit: %s", pname, r->name,
				 strerror(-ret));
			return ret;
		}
		snprintf(name, sizeof(name), "%s_%s", pname, r->name);
		ret = keep_link(p, link, pin ? name : NULL, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* Attaches every program selected for loading; with pin, pins each link. */
static int attach_all(struct ioacct_probes *p, bool pin, char *err, size_t errlen)
{
	struct bpf_program *prog;
	int ret;

	/* What a call recorded before a detach is not finished by these programs. */
	p->st.epoch++;
	ret = probes_publish_state(p);
	if (ret) {
		snprintf(err, errlen, "cannot update the state map: %s", strerror(-ret));
		return ret;
	}
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog) || prog == p->skel->progs.ioacct_acc_iter)
			continue;
		if (exit_prog_kind(bpf_program__name(prog))) {
			ret = attach_exits(p, prog, pin, err, errlen);
			if (ret)
				return ret;
			continue;
		}
		link = bpf_program__attach(prog);
		if (!link && view_prog(bpf_program__name(prog))) {
			/* A view is extra: the kernel refusing one costs only that view. */
			log_warn("page-cache view program %s does not attach (%s): view off",
				 bpf_program__name(prog), strerror(errno));
			bpf_program__set_autoload(prog, false);
			views_note(p);
			continue;
		}
		if (!link) {
			ret = -errno;
			snprintf(err, errlen, "cannot attach %s: %s", bpf_program__name(prog), strerror(-ret));
			return ret;
		}
		ret = keep_link(p, link, pin ? bpf_program__name(prog) : NULL, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* Takes over the links an earlier daemon pinned, so that they can be detached. */
static int adopt_links(struct ioacct_probes *p, char *err, size_t errlen)
{
	struct dirent *de;
	DIR *d = opendir(p->dir);
	int ret = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && !ret) {
		char path[PATH_MAX];
		struct bpf_link *link, **nl;

		if (strncmp(de->d_name, "link_", 5))
			continue;
		pin_path(p, de->d_name, path, sizeof(path));
		link = bpf_link__open(path);
		if (!link) {
			ret = -errno;
			snprintf(err, errlen, "cannot open pinned link %s: %s", path, strerror(errno));
			break;
		}
		nl = realloc(p->links, (p->nlinks + 1) * sizeof(*nl));
		if (!nl) {
			bpf_link__destroy(link);
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			break;
		}
		p->links = nl;
		p->caplinks = p->nlinks + 1;
		p->links[p->nlinks++] = link;
	}
	closedir(d);
	return ret;
}

/* A directory named after the mode: a restart while detached knows the maps are there. */
static int mode_marker(struct ioacct_probes *p)
{
	char path[PATH_MAX], name[32];

	snprintf(name, sizeof(name), "mode_%s", p->mode);
	pin_path(p, name, path, sizeof(path));
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	/* And whether the attached programs have the per-file records (files_off_pinned()). */
	pin_path(p, "files_off", path, sizeof(path));
	if (p->files_off ? mkdir(path, 0700) && errno != EEXIST : rmdir(path) && errno != ENOENT)
		return -errno;
	return 0;
}

/* The programs an earlier daemon left attached were loaded with file_records = no. */
static bool files_off_pinned(const struct ioacct_probes *p)
{
	char path[PATH_MAX];

	pin_path(p, "files_off", path, sizeof(path));
	return access(path, F_OK) == 0;
}

/*
 * With detach_when_idle, the programs are attached only while a cgroup is
 * watched (or the daemon calibrates): a node whose jobs are not monitored
 * pays nothing. Links of an earlier daemon that are still attached are kept.
 */
int probes_sync_attach(struct ioacct_probes *p, char *err, size_t errlen)
{
	bool want = !p->detach_idle || p->st.nactive > 0;
	int ret = 0;

	if (want && !p->nlinks) {
		ret = attach_all(p, true, err, errlen);
		if (ret)
			ioacct_probes_detach(p);
		else
			log_debug("probes attached (%zu programs)", p->nlinks);
	} else if (!want && p->nlinks) {
		ret = ioacct_probes_detach(p);
		if (ret)
			snprintf(err, errlen, "cannot detach the programs: %s", strerror(-ret));
		else
			log_debug("probes detached: nothing is watched");
	}
	return ret;
}

/* bpffs for the pins (required), tracefs where the kernel has it, and the pin directory. */
static int open_dirs(struct ioacct_probes *p, const struct ioacct_probes_opts *opts, char *err,
		     size_t errlen)
{
	int ret;

	ret = ensure_fs("/sys/fs/bpf", BPF_FS_MAGIC_, "bpf", "mode=0700", true, err, errlen);
	if (ret)
		return ret;
	if (access("/sys/kernel/tracing", F_OK) == 0)
		ensure_fs("/sys/kernel/tracing", TRACEFS_MAGIC_, "tracefs", NULL, false, NULL, 0);
	snprintf(p->dir, sizeof(p->dir), "%s/abi%d", opts->pin_dir, IOACCT_ABI_VERSION);
	ret = ioacct_mkdir_p(p->dir, 0700, false);
	if (ret)
		snprintf(err, errlen, "cannot create %s: %s", p->dir, strerror(-ret));
	return ret;
}

/*
 * Opens the BPF object and sets it up before load: the maps of an earlier
 * daemon and its mode, or a backend chosen now and the map sizes of the
 * config; the syscall table and the load-time constants.
 */
static int open_object(struct ioacct_probes *p, const struct ioacct_probes_opts *opts, char *err,
		       size_t errlen)
{
	int ret;

	p->skel = skel_open();
	if (!p->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return ret;
	}
	snprintf(p->mode, sizeof(p->mode), "%s", pinned_mode(p));
	p->reused = p->mode[0] != '\0';
	if (p->reused) {
		/*
		 * An earlier daemon's maps, and its programs when they are still
		 * attached and counting: keep them (adopt_links); load this
		 * binary's programs of the same mode for the next attach.
		 */
		ret = reuse_maps(p, err, errlen);
		if (ret)
			return ret;
		snprintf(p->reason, sizeof(p->reason),
			 "reused the maps an earlier ioacctd left in %s", p->dir);
	} else {
		uint64_t t0 = ioacct_mono_ms();

		unpin_all(p); /* leftovers of an interrupted start */
		ioacct_mkdir_p(p->dir, 0700, false);
		ret = choose_backend(p, opts->mode, err, errlen);
		p->ms_choose += ioacct_mono_ms() - t0;
		if (ret)
			return ret;
		bpf_map__set_max_entries(p->skel->maps.watch, opts->max_cgroups);
		bpf_map__set_max_entries(p->skel->maps.slots, opts->max_jobs);
		bpf_map__set_max_entries(p->skel->maps.dropped, opts->max_jobs);
		bpf_map__set_max_entries(p->skel->maps.stats, opts->max_entries);
		bpf_map__set_max_entries(p->skel->maps.mountpoints, opts->max_mountpoints);
		bpf_map__set_max_entries(p->skel->maps.fcount, opts->max_jobs);
		/* Room for 16 steps at their bound; the records live as long as their step. */
		bpf_map__set_max_entries(p->skel->maps.files, files_room(opts));
		bpf_map__set_max_entries(p->skel->maps.fpaths, files_room(opts));
		bpf_map__set_max_entries(p->skel->maps.flive, files_room(opts));
		bpf_map__set_max_entries(p->skel->maps.flast, files_room(opts));
	}
	p->skel->rodata->max_files = opts->max_files ? opts->max_files : 4096;
	/* A reused flast keeps its size: the programs take its entries modulo it. */
	p->skel->rodata->flast_size = bpf_map__max_entries(p->skel->maps.flast);
	p->skel->rodata->file_records = !opts->files_off;
	fill_sysmap(p->skel);
	p->skel->rodata->v1_ssid = opts->v1_ssid;
	p->skel->rodata->mnt_ids_legacy = opts->legacy_mnt_ids;
	/*
	 * inomnt's LRU lists are per CPU (BPF_F_NO_COMMON_LRU: an insertion
	 * evicts from its own CPU's list, without the global lock), so each CPU
	 * keeps max_entries / CPUs of them: at least 256 each.
	 */
	if (bpf_map__max_entries(p->skel->maps.inomnt) < 256u * (unsigned)p->ncpus)
		bpf_map__set_max_entries(p->skel->maps.inomnt, 256u * (unsigned)p->ncpus);
	return 0;
}

/* Loads the programs of the mode chosen, and decides whether they stay attached when idle. */
static int load_object(struct ioacct_probes *p, const struct ioacct_probes_opts *opts, char *err,
		       size_t errlen)
{
	enum ioacct_probe_mode mode = IOACCT_PROBE_TRACEPOINT;
	uint64_t t0;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(backends); i++)
		if (!strcmp(backends[i].name, p->mode))
			mode = backends[i].mode;
	/*
	 * auto: detach with the tracepoint backend, whose programs run on every
	 * system call of every task and attach in a millisecond; keep fentry and
	 * kprobe programs, which only the watched calls run and whose attach
	 * (dozens of trampolines or probes) would delay a job's start. Detach
	 * with syscall-tp too: while any syscall tracepoint is enabled, the
	 * kernel sends every system call of every task down its slow path.
	 */
	p->detach_idle = opts->detach_when_idle == IOACCT_DETACH_YES ||
			 (opts->detach_when_idle == IOACCT_DETACH_AUTO &&
			  (mode == IOACCT_PROBE_TRACEPOINT || mode == IOACCT_PROBE_SYSCALL_TP));
	p->nprogs = (uint32_t)select_progs(p, mode);
	if (p->nprogs == 0) {
		snprintf(err, errlen, "no %s program can attach on this kernel", p->mode);
		return -EOPNOTSUPP;
	}
	t0 = ioacct_mono_ms();
	ret = ioacct_bpf__load(p->skel);
	p->ms_load += ioacct_mono_ms() - t0;
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s", strerror(-ret));
		return ret;
	}
	/* Without it the accumulators could not be read: refuse to start rather than never drain. */
	p->acc_iter = bpf_program__attach_iter(p->skel->progs.ioacct_acc_iter, NULL);
	if (!p->acc_iter) {
		ret = -errno;
		snprintf(err, errlen, "cannot attach the accumulators' task iterator: %s", strerror(-ret));
		return ret;
	}
	p->max_jobs = bpf_map__max_entries(p->skel->maps.slots);
	return 0;
}

/* Picks up the state and the attached programs an earlier daemon left. */
static int resume_state(struct ioacct_probes *p, char *err, size_t errlen)
{
	uint32_t zero = 0;
	int ret;

	ret = bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.state), &zero, &p->st) ? -errno : 0;
	if (ret) {
		snprintf(err, errlen, "cannot read the pinned state: %s", strerror(-ret));
		return ret;
	}
	/* A calibration cut short by a crash must not go on. */
	if (p->st.calib_tgid) {
		p->st.calib_tgid = 0;
		p->st.nactive = p->st.nwatch_v1 + p->st.nwatch_v2;
		p->st.gen++;
		probes_publish_state(p);
	}
	ret = adopt_links(p, err, errlen);
	/*
	 * Programs loaded with the other file_records: this daemon's take their
	 * place now, so that every job it records has what its mode says.
	 */
	if (!ret && p->nlinks && files_off_pinned(p) != p->files_off) {
		log_info("file_records changed: attaching programs %s the per-file records",
			 p->files_off ? "without" : "with");
		ioacct_probes_detach(p);
		ret = attach_all(p, true, err, errlen);
	}
	return ret;
}

/* A fresh start: the first state, the pins, and one attach. */
static int fresh_state(struct ioacct_probes *p, char *err, size_t errlen)
{
	uint64_t t0;
	int ret;

	p->st.gen = 1;
	ret = probes_publish_state(p);
	if (ret) {
		snprintf(err, errlen, "cannot initialise the state map: %s", strerror(-ret));
		return ret;
	}
	ret = pin_maps(p, err, errlen);
	if (ret)
		return ret;
	/* Attached once now, so that a kernel refusing them is told at start. */
	t0 = ioacct_mono_ms();
	ret = attach_all(p, true, err, errlen);
	p->ms_attach += ioacct_mono_ms() - t0;
	return ret;
}

struct ioacct_probes *ioacct_probes_open(const struct ioacct_probes_opts *opts, char *err,
					 size_t errlen)
{
	struct ioacct_probes *p;
	int ret;

	libbpf_set_print(libbpf_print);
	err[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->want_views = opts->views;
	p->files_off = opts->files_off;
	p->unique_ids = unique_mount_ids(opts->legacy_mnt_ids);
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		snprintf(err, errlen, "cannot count possible CPUs: %s", strerror(-p->ncpus));
		ret = p->ncpus;
		goto fail;
	}
	ret = open_dirs(p, opts, err, errlen);
	if (!ret)
		ret = open_object(p, opts, err, errlen);
	if (!ret)
		ret = load_object(p, opts, err, errlen);
	if (ret && p->skel && views_loading(p)) {
		/* A view the verifier refuses must not keep the daemon from starting: again without them. */
		log_warn("%s: starting without the page-cache, mmap and io_uring views", err);
		ioacct_bpf__destroy(p->skel);
		p->skel = NULL;
		p->want_views = 0;
		ret = open_object(p, opts, err, errlen);
		if (!ret)
			ret = load_object(p, opts, err, errlen);
	}
	kernel_btf_release();
	if (!ret)
		ret = p->reused ? resume_state(p, err, errlen) : fresh_state(p, err, errlen);
	if (ret)
		goto fail;
	/*
	 * Still attached when fresh (the daemon calibrates next, which needs
	 * them); its first ioacct_probes_publish() detaches them if nothing is
	 * watched.
	 */
	ret = mode_marker(p);
	if (ret) {
		snprintf(err, errlen, "cannot mark the pin directory %s: %s", p->dir, strerror(-ret));
		goto fail;
	}
	return p;
fail:
	kernel_btf_release();
	if (p->skel && !p->reused)
		unpin_all(p);
	ioacct_probes_close(p, false);
	errno = -ret;
	return NULL;
}

void ioacct_probes_close(struct ioacct_probes *p, bool unpin)
{
	if (!p)
		return;
	if (unpin && p->skel)
		unpin_all(p);
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	bpf_link__destroy(p->acc_iter);
	ioacct_bpf__destroy(p->skel);
	free(p);
}

int ioacct_probes_detach(struct ioacct_probes *p)
{
	int ret = 0;

	for (size_t i = 0; i < p->nlinks; i++) {
		if (bpf_link__pin_path(p->links[i]) && bpf_link__unpin(p->links[i]) && !ret)
			ret = -errno;
		bpf_link__destroy(p->links[i]);
	}
	p->nlinks = 0;
	return ret;
}

int ioacct_probes_attach(struct ioacct_probes *p, char *err, size_t errlen)
{
	int ret;

	if (p->nlinks)
		return 0;
	ret = attach_all(p, false, err, errlen);
	if (ret)
		ioacct_probes_detach(p);
	return ret;
}

void ioacct_probes_start_cost(const struct ioacct_probes *p, char *buf, size_t len)
{
	snprintf(buf, len, "backend chosen in %" PRIu64 " ms, %u programs loaded in %" PRIu64
		 " ms, attached in %" PRIu64 " ms", p->ms_choose, p->nprogs, p->ms_load, p->ms_attach);
}

const char *ioacct_probes_mode(const struct ioacct_probes *p)
{
	return p->mode;
}

const char *ioacct_probes_views(const struct ioacct_probes *p)
{
	return p->views_detail[0] ? p->views_detail : "none";
}

const char *ioacct_probes_job_mode(const struct ioacct_probes *p)
{
	return p->job_mode[0] ? p->job_mode : p->mode;
}

const char *ioacct_probes_reason(const struct ioacct_probes *p)
{
	return p->reason;
}

bool ioacct_probes_reused(const struct ioacct_probes *p)
{
	return p->reused;
}

uint32_t ioacct_probes_max_jobs(const struct ioacct_probes *p)
{
	return p->max_jobs;
}
