// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MPI-IO accounting (issue 27): see mpiprobes.h. The object's openat
 * tracepoint tells, through a ring buffer, that a watched task opens a file
 * named like an MPI library (ld.so loading it, long before MPI_Init has
 * returned); this attaches one uprobe and one uretprobe per MPI-IO function
 * to that library file, once per file (dev, ino), for every process that
 * maps it, and reads the task's MPI rank from its environment. Where the
 * kernel has uprobe_multi links (6.6) all of a library's uprobes are two
 * links, which CAP_BPF and CAP_PERFMON may make; a uprobe through
 * perf_event_open needs CAP_SYS_ADMIN since the fix of CVE-2025-38466
 * (6.1.146, 6.6.99, 6.12.39), and ioacctd gives that up once started
 * (privs.h): on older kernels only libraries probed at start are counted.
 */
#include "mpiprobes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/magic.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ioacct_h5_abi.h"
#include "ioacct_mpi_abi.h"
#include "ioacct_mpi.skel.h"
#include "jobfile.h"
#include "mpiprobes_internal.h"
#include "log.h"
#include "util.h"
#include "worker.h"

static const struct mpi_func {
	const char *name;
	unsigned int kind, cls, at;
} funcs[] = {
#define MPI_FUNC(sym, kind, cls, at) { #sym, kind, cls, at },
	IOACCT_MPI_FUNCS(MPI_FUNC)
#undef MPI_FUNC
};
_Static_assert(sizeof(funcs) / sizeof(funcs[0]) == NFUNCS, "MPI_NFUNCS counts IOACCT_MPI_FUNCS");

/* HDF5's functions (issue 39), in the same libraries' table as the MPI ones. */
static const struct h5_func {
	const char *name;
	unsigned int kind;
} h5funcs[] = {
#define H5_FUNC(sym, kind) { #sym, kind },
	IOACCT_H5_FUNCS(H5_FUNC)
#undef H5_FUNC
};
#define NH5FUNCS (sizeof(h5funcs) / sizeof(h5funcs[0]))
_Static_assert(NH5FUNCS <= NFUNCS, "a library's links are NFUNCS long");
_Static_assert(NOFFS <= IOACCT_PROTO_OFFSETS_MAX, "a w_elf reply holds what elfseen keeps");
_Static_assert(NH5FUNCS == IOACCT_H5_NFUNCS, "IOACCT_H5_NFUNCS counts IOACCT_H5_FUNCS");


/*
 * uprobe_multi links, which libbpf 1.1 (Debian 12) cannot make: the
 * BPF_LINK_CREATE command as the kernel lays it out (uapi linux/bpf.h of 6.6).
 */
#define UMULTI_ATTACH_TYPE 48 /* BPF_TRACE_UPROBE_MULTI */
#define UMULTI_RETURN 1       /* BPF_F_UPROBE_MULTI_RETURN */

struct umulti_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, uflags, pid, pad;
};

/* A link of prog at offs[0..cnt) of the file at path, each with its cookie (NULL: 0). fd or -errno. */
static int umulti_link(int prog_fd, const char *path, const uint64_t *offs,
		       const uint64_t *cookies, uint32_t cnt, bool ret)
{
	struct umulti_attr a = {
		.prog_fd = (uint32_t)prog_fd, .attach_type = UMULTI_ATTACH_TYPE,
		.path = (uintptr_t)path, .offsets = (uintptr_t)offs, .cookies = (uintptr_t)cookies,
		.cnt = cnt, .uflags = ret ? UMULTI_RETURN : 0,
	};
	int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));

	return fd < 0 ? -errno : fd;
}

/* Whether the kernel makes them: it refuses "/", no regular file, with EBADF (as libbpf probes). */
static bool umulti_supported(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	uint64_t off = 0;
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o), link;

	if (prog < 0)
		return false;
	link = umulti_link(prog, "/", &off, NULL, 1, false);
	close(prog);
	if (link >= 0)
		close(link);
	return link == -EBADF;
}

/*
 * A library's probes: the functions it has (off[] not 0) of its family's
 * table (MPI-IO's, or HDF5's: issue 39), each with its cookie, and whether
 * its return is probed too (not H5T_path_find's, H5D__chunk_set_info's,
 * H5D__read's nor H5D__write's).
 */
struct probeset {
	struct bpf_program *enter, *ret;
	uint64_t offs[NFUNCS], cookies[NFUNCS], roffs[NFUNCS], rcookies[NFUNCS];
	uint32_t n, nret;
	size_t tried, missing;
};

static void probeset_add(struct probeset *ps, uint64_t off, uint64_t cookie, bool ret)
{
	ps->tried++;
	if (!off) {
		ps->missing++;
		return;
	}
	ps->offs[ps->n] = off;
	ps->cookies[ps->n++] = cookie;
	if (ret) {
		ps->roffs[ps->nret] = off;
		ps->rcookies[ps->nret++] = cookie;
	}
}

/*
 * Whether the library's reads and writes have their sizes read at
 * H5D__read's and H5D__write's entries (1.10's layouts read, both there):
 * then the three functions that would say them are not probed. Each
 * begins with a mov, which x86 uprobes single-step (a second trap a hit:
 * tens of us on a virtual machine), and they ran 5 times an H5Dwrite.
 */
static bool h5_dio(const uint64_t *off)
{
	size_t n = 0;

	for (size_t k = 0; k < NH5FUNCS; k++)
		n += h5funcs[k].kind == IOACCT_H5_K_DIO && off[k];
	return n == 2 && (off[IOACCT_H5_DIO_LAYOUT] & IOACCT_H5_LAYOUT_OK);
}

/*
 * Whether function i is probed on the library: H5D__read and H5D__write,
 * or the three functions they call that say the sizes (h5_dio()); in a
 * library with the MPI-IO driver only, where the answer may be yes,
 * H5F_open's return where its layout was read (1.10's code), else
 * H5F_has_feature, which begins with a mov too and runs in every read and
 * write of an MPI build.
 */
static bool h5_wanted(size_t i, const uint64_t *off)
{
	bool mpio = off[IOACCT_H5_LIB_FLAGS] & IOACCT_H5_LIB_MPIO,
	     feat = off[IOACCT_H5_FEAT_LAYOUT] & IOACCT_H5_LAYOUT_OK;

	switch (h5funcs[i].kind) {
	case IOACCT_H5_K_NPOINTS:
	case IOACCT_H5_K_TPATH:
	case IOACCT_H5_K_TSIZE:
		return !h5_dio(off);
	case IOACCT_H5_K_DIO:
		return h5_dio(off);
	case IOACCT_H5_K_HASFEAT:
		return mpio && !feat;
	case IOACCT_H5_K_FNEW:
		return mpio && feat;
	case IOACCT_H5_K_DREADM:
	case IOACCT_H5_K_DWRITEM:
		/* 1.14's: not asked of a library without them (1.10's counts unchanged). */
		return off[i] != 0;
	default:
		return true;
	}
}

/*
 * An HDF5 function's cookie, with the layouts the ELF worker read in the
 * library's code (off[IOACCT_H5_SEL_LAYOUT] and the words after it; 0 not
 * found): the selection's for H5S_get_select_npoints and for H5Dread and
 * H5Dwrite (whose cookie H5D__read's and H5D__write's probe reads), the
 * chunk's for H5D__chunk_set_info, the reads' and writes' for H5D__read
 * and H5D__write, the driver's feature flags' for H5F_open, and for the
 * creates and opens whether a call without
 * H5D__chunk_set_info is of a dataset not chunked.
 */
static uint64_t h5_cookie(size_t i, const uint64_t *off)
{
	uint64_t c = IOACCT_H5_COOKIE(i, h5funcs[i].kind), chunk = off[IOACCT_H5_CHUNK_LAYOUT];
	bool chunk_ok = false;

	for (size_t k = 0; k < NH5FUNCS; k++)
		if (h5funcs[k].kind == IOACCT_H5_K_CHUNK && off[k] && (chunk & IOACCT_H5_LAYOUT_OK))
			chunk_ok = true;
	switch (h5funcs[i].kind) {
	case IOACCT_H5_K_NPOINTS:
	case IOACCT_H5_K_DREAD:
	case IOACCT_H5_K_DWRITE:
		return c | off[IOACCT_H5_SEL_LAYOUT];
	case IOACCT_H5_K_DIO:
		return c | off[IOACCT_H5_DIO_LAYOUT];
	case IOACCT_H5_K_FNEW:
		return c | off[IOACCT_H5_FEAT_LAYOUT];
	case IOACCT_H5_K_CHUNK:
		return c | chunk;
	case IOACCT_H5_K_DOPEN:
	case IOACCT_H5_K_DANON:
		return chunk_ok ? c | IOACCT_H5_CHUNK_OK : c;
	default:
		return c;
	}
}

static void probeset_make(const struct ioacct_mpiprobes *m, struct probeset *ps,
			  enum ioacct_mpi_flavour fl, const uint64_t *off)
{
	memset(ps, 0, sizeof(*ps));
	if (fl == IOACCT_MPI_HDF5) {
		ps->enter = m->skel->progs.ioacct_h5_enter;
		ps->ret = m->skel->progs.ioacct_h5_return;
		for (size_t i = 0; i < NH5FUNCS; i++)
			if (h5_wanted(i, off))
				probeset_add(ps, off[i], h5_cookie(i, off),
					     h5funcs[i].kind != IOACCT_H5_K_TPATH &&
						     h5funcs[i].kind != IOACCT_H5_K_CHUNK &&
						     h5funcs[i].kind != IOACCT_H5_K_DIO);
		return;
	}
	ps->enter = m->skel->progs.ioacct_mpi_enter;
	ps->ret = m->skel->progs.ioacct_mpi_return;
	for (size_t i = 0; i < NFUNCS; i++) {
		const struct mpi_func *f = &funcs[i];

		/* Datatype constructors: only MPICH's derived types need their sizes noted. */
		if ((f->kind == IOACCT_MPI_K_TYPE || f->kind == IOACCT_MPI_K_TYPE_FREE) &&
		    fl != IOACCT_MPI_MPICH)
			continue;
		probeset_add(ps, off[i], IOACCT_MPI_COOKIE(i, f->kind, f->cls, f->at, fl), true);
	}
}

/* The probes in two uprobe_multi links (returns, entries); 0 or -errno. */
static int lib_attach_multi(struct mpilib *lib, const char *path, const struct probeset *ps)
{
	int err;

	/* The returns first, as below. */
	lib->mfd[0] = umulti_link(bpf_program__fd(ps->ret), path, ps->roffs, ps->rcookies, ps->nret,
				  true);
	if (lib->mfd[0] >= 0)
		lib->mfd[1] = umulti_link(bpf_program__fd(ps->enter), path, ps->offs, ps->cookies,
					  ps->n, false);
	if (lib->mfd[0] >= 0 && lib->mfd[1] >= 0) {
		lib->nlinks = ps->n + ps->nret;
		return 0;
	}
	err = lib->mfd[0] < 0 ? lib->mfd[0] : lib->mfd[1];
	if (lib->mfd[0] >= 0)
		close(lib->mfd[0]);
	lib->mfd[0] = lib->mfd[1] = -1;
	return err;
}

/*
 * What an HDF5 library's probes read with (its layouts, or not known), and
 * the functions it has that are not probed there (h5_wanted()): the log's
 * line that tests and h5-cost read.
 */
static void h5_said(const struct mpilib *lib, const uint64_t *off)
{
	char skipped[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < NH5FUNCS; i++)
		if (off[i] && !h5_wanted(i, off) && len < sizeof(skipped))
			len += (size_t)snprintf(skipped + len, sizeof(skipped) - len, " %s", h5funcs[i].name);
	log_info("HDF5: %s: selection kinds %s, chunk sizes %s; sizes %s; not probed:%s", lib->shown,
		 off[IOACCT_H5_SEL_LAYOUT] ? "read" : "not known (code not recognised)",
		 off[IOACCT_H5_CHUNK_LAYOUT] ? "read" : "not known (code not recognised)",
		 h5_dio(off) ? "read at H5D__read and H5D__write" :
			       "from H5S_get_select_npoints, H5T_path_find, H5T_get_size (not 1.10's code)",
		 len ? skipped : " none");
}

/*
 * Attaches every function the library has (older ones lack some of the
 * MPI-3 forms). The return probe first: an entry whose return is not seen
 * would leave its thread's call pending.
 */
static void lib_attach(struct ioacct_mpiprobes *m, struct mpilib *lib, enum ioacct_mpi_flavour fl,
		       const uint64_t *off)
{
	const char *what = fl == IOACCT_MPI_HDF5 ? "HDF5" : "MPI-IO";
	uint64_t t0 = ioacct_mono_ns();
	struct probeset ps;
	size_t failed = 0;
	char path[32];
	int err = 0;

	/* What is checked is what is attached: the open file itself. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", lib->fd);
	lib->mfd[0] = lib->mfd[1] = -1;
	probeset_make(m, &ps, fl, off);
	if (!ps.n) {
		log_info("%s: %s has none of its functions: nothing attached", what, lib->shown);
		return;
	}
	if (m->umulti)
		err = lib_attach_multi(lib, path, &ps);
	for (uint32_t i = 0, r = 0; !m->umulti && i < ps.n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = true, .bpf_cookie = ps.cookies[i]);
		struct bpf_link *ret = NULL, *ent;

		if (r < ps.nret && ps.roffs[r] == ps.offs[i]) {
			ret = bpf_program__attach_uprobe_opts(ps.ret, -1, path, ps.offs[i], &o);
			r++;
			if (!ret) {
				failed++;
				continue;
			}
			lib->links[lib->nlinks++] = ret;
		}
		o.retprobe = false;
		ent = bpf_program__attach_uprobe_opts(ps.enter, -1, path, ps.offs[i], &o);
		if (ent)
			lib->links[lib->nlinks++] = ent;
		else
			failed++;
	}
	if (err) {
		log_warn("%s: cannot attach to %s: %s", what, lib->shown, strerror(-err));
		failed = ps.n;
	}
	log_info("%s: attached to %s%s (%s; %zu of %zu functions%s, in %llu ms, %llu of them attaching)",
		 what, lib->shown, lib->at_register ? " at a step's registration" : "",
		 fl == IOACCT_MPI_OPENMPI ? "OpenMPI" : fl == IOACCT_MPI_MPICH ? "MPICH" :
		 fl == IOACCT_MPI_HDF5 ? "HDF5" : "unknown library: bytes not counted",
		 ps.n - failed, ps.tried, ps.missing ? ", the others absent" : "",
		 (unsigned long long)((ioacct_mono_ns() - lib->pending_ns) / 1000000),
		 (unsigned long long)((ioacct_mono_ns() - t0) / 1000000));
	if (fl == IOACCT_MPI_HDF5)
		h5_said(lib, off);
}

/* The MPI rank a launcher gave the process, from its environment; -1 unknown. */
static int32_t env_rank(uint32_t tgid)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK=", "PMI_RANK=", "PMIX_RANK=",
					     "SLURM_PROCID=" };
	char path[64], *buf = malloc(1 << 18);
	int32_t rank = -1;
	ssize_t len = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/environ", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (buf && fd >= 0)
		len = read(fd, buf, (1 << 18) - 1);
	if (fd >= 0)
		close(fd);
	for (size_t v = 0; len > 0 && v < sizeof(vars) / sizeof(vars[0]) && rank < 0; v++) {
		size_t vl = strlen(vars[v]);

		buf[len] = '\0';
		for (char *e = buf; e < buf + len; e += strlen(e) + 1) {
			char *end;
			long r;

			if (strncmp(e, vars[v], vl))
				continue;
			r = strtol(e + vl, &end, 10);
			if (*end == '\0' && r >= 0 && r <= INT32_MAX)
				rank = (int32_t)r;
			break;
		}
	}
	free(buf);
	return rank;
}

static void rank_note(struct ioacct_mpiprobes *m, uint32_t slot, uint32_t tgid)
{
	struct mpirank *r;

	if (!tgid)
		return; /* a program probed before its exec (probe_exe): its exec notes it */

	for (size_t i = 0; i < m->nranks; i++)
		if (m->ranks[i].slot == slot && m->ranks[i].tgid == tgid)
			return;
	if (m->nranks == m->capranks) {
		size_t cap = m->capranks ? 2 * m->capranks : 64;

		r = realloc(m->ranks, cap * sizeof(*r));
		if (!r)
			return;
		m->ranks = r;
		m->capranks = cap;
	}
	m->ranks[m->nranks++] = (struct mpirank){ slot, tgid, env_rank(tgid) };
}

int32_t mpiprobes_rank_of(const struct ioacct_mpiprobes *m, uint32_t slot, uint32_t tgid)
{
	for (size_t i = 0; i < m->nranks; i++)
		if (m->ranks[i].slot == slot && m->ranks[i].tgid == tgid)
			return m->ranks[i].rank;
	return -1;
}

static void lib_use(struct mpilib *lib, uint32_t slot)
{
	uint32_t *s;

	lib->idle_since_ns = 0;
	for (size_t i = 0; i < lib->nslots; i++)
		if (lib->slots[i] == slot)
			return;
	s = realloc(lib->slots, (lib->nslots + 1) * sizeof(*s));
	if (!s)
		return; /* then it stays attached until the daemon stops */
	lib->slots = s;
	lib->slots[lib->nslots++] = slot;
}

/* A library of m's from now, pending with its handle fd (checked); NULL when out of memory. */
static struct mpilib *lib_new(struct ioacct_mpiprobes *m, const struct stat *sb, const char *shown,
			      int fd)
{
	char *name = strdup(shown);
	struct mpilib *lib = name ? realloc(m->libs, (m->nlibs + 1) * sizeof(*lib)) : NULL;

	if (!lib) {
		free(name);
		return NULL;
	}
	m->libs = lib;
	lib = &m->libs[m->nlibs++];
	*lib = (struct mpilib){ .dev = sb->st_dev, .ino = sb->st_ino, .mfd = { -1, -1 }, .fd = fd,
				.shown = name, .pending_ns = ioacct_mono_ns() };
	return lib;
}

static void lib_free(struct mpilib *lib)
{
	for (size_t k = 0; k < 2; k++)
		if (lib->mfd[k] >= 0)
			close(lib->mfd[k]);
	for (size_t k = 0; k < lib->nlinks && lib->mfd[0] < 0; k++)
		bpf_link__destroy(lib->links[k]);
	free(lib->slots);
	if (lib->fd >= 0)
		close(lib->fd);
	free(lib->shown);
}

static void *detacher_main(void *arg)
{
	struct ioacct_mpiprobes *m = arg;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		struct detaching *d = m->queue;
		uint64_t t0;
		char *name;

		if (!d) {
			if (m->stopping)
				break;
			pthread_cond_wait(&m->cond, &m->lock);
			continue;
		}
		m->queue = d->next;
		m->busy = &d->lib;
		pthread_mutex_unlock(&m->lock);
		t0 = ioacct_mono_ns();
		name = d->lib.shown;
		d->lib.shown = NULL;
		lib_free(&d->lib);
		log_info("MPI-IO: detached from the library %s (dev %llu ino %llu): no watched step "
			 "loads it (%zu probes in %llu ms)", name ? name : "?",
			 (unsigned long long)d->lib.dev, (unsigned long long)d->lib.ino, d->lib.nlinks,
			 (unsigned long long)((ioacct_mono_ns() - t0) / 1000000));
		free(name);
		pthread_mutex_lock(&m->lock);
		m->busy = NULL;
		free(d);
		pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* The library's uprobes go, in the detacher; here when it cannot run. */
static void lib_detach(struct ioacct_mpiprobes *m, struct mpilib *lib)
{
	struct detaching *d = malloc(sizeof(*d)), **tail;

	if (d && !m->detacher_on)
		m->detacher_on = !pthread_create(&m->detacher, NULL, detacher_main, m);
	if (!d || !m->detacher_on) {
		free(d);
		log_info("MPI-IO: detached from the library %s (dev %llu ino %llu): no watched "
			 "step loads it", lib->shown ? lib->shown : "?", (unsigned long long)lib->dev,
			 (unsigned long long)lib->ino);
		lib_free(lib);
		return;
	}
	d->lib = *lib;
	d->next = NULL;
	pthread_mutex_lock(&m->lock);
	for (tail = &m->queue; *tail; tail = &(*tail)->next)
		;
	*tail = d;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/*
 * Before a library is attached again: its old uprobes, if still going,
 * gone first (both sets would count every call meanwhile).
 */
static void lib_wait_detached(struct ioacct_mpiprobes *m, dev_t dev, ino_t ino)
{
	bool pending;

	if (!m->detacher_on)
		return;
	pthread_mutex_lock(&m->lock);
	do {
		pending = m->busy && m->busy->dev == dev && m->busy->ino == ino;
		for (const struct detaching *d = m->queue; d && !pending; d = d->next)
			pending = d->lib.dev == dev && d->lib.ino == ino;
		if (pending)
			pthread_cond_wait(&m->cond, &m->lock);
	} while (pending);
	pthread_mutex_unlock(&m->lock);
}

/* (dev, ino) back from the detacher's queue, its uprobes in place, as m's last library: 1. */
static int lib_reclaim(struct ioacct_mpiprobes *m, dev_t dev, ino_t ino)
{
	struct detaching **p, *d = NULL;
	struct mpilib *libs;
	int ret = 0; /* -EBUSY: the detacher removes them now; 0: it has none of it */

	/* Room first: a library taken from the queue must not be lost. */
	if (!m->detacher_on || !(libs = realloc(m->libs, (m->nlibs + 1) * sizeof(*libs))))
		return 0;
	m->libs = libs;
	pthread_mutex_lock(&m->lock);
	if (m->busy && m->busy->dev == dev && m->busy->ino == ino)
		ret = -EBUSY;
	for (p = &m->queue; !ret && *p && !d; p = &(*p)->next)
		if ((*p)->lib.dev == dev && (*p)->lib.ino == ino) {
			d = *p;
			*p = d->next;
		}
	pthread_mutex_unlock(&m->lock);
	if (!d)
		return ret;
	m->libs[m->nlibs++] = d->lib;
	free(d);
	return 1;
}

/* The slot's step is over: libraries no running step has loaded are idle from now. */
void mpiprobes_libs_release(struct ioacct_mpiprobes *m, uint32_t slot)
{
	for (size_t i = 0; i < m->nlibs; i++) {
		struct mpilib *lib = &m->libs[i];
		size_t w = 0;
		bool had = false;

		for (size_t k = 0; k < lib->nslots; k++) {
			had |= lib->slots[k] == slot;
			if (lib->slots[k] != slot)
				lib->slots[w++] = lib->slots[k];
		}
		lib->nslots = w;
		if (had && !w)
			lib->idle_since_ns = ioacct_mono_ns();
	}
}

/*
 * Libraries idle for detach_after lose their uprobes, so that MPI jobs that
 * are not watched stop paying for them; a job that starts before finds them
 * in place (an attach races the job's first calls).
 */
void mpiprobes_libs_reap(struct ioacct_mpiprobes *m)
{
	uint64_t now = ioacct_mono_ns();

	for (size_t i = 0; i < m->nlibs;) {
		struct mpilib *lib = &m->libs[i];

		if (lib->nslots || !lib->idle_since_ns ||
		    now - lib->idle_since_ns < m->detach_after_ns) {
			i++;
			continue;
		}
		lib_detach(m, lib);
		m->libs[i] = m->libs[--m->nlibs];
	}
}

void ioacct_mpiprobes_set_detach_after(struct ioacct_mpiprobes *m, uint64_t ns)
{
	m->detach_after_ns = ns;
}

/*
 * The program's file (k as the exec program names it, sb its stat),
 * without HDF5 or refused (why, said in the log): its execs send nothing
 * until the file changes (exeseen). The key is the program's own, not
 * stat's: btrfs gives a subvolume's files another st_dev than their
 * super block's, overlayfs may too.
 */
static void exe_none(struct ioacct_mpiprobes *m, const struct ioacct_exe_key *k,
		     const struct stat *sb, const char *shown, const char *why)
{
	struct ioacct_exe_val v = { .ctime_sec = sb->st_ctim.tv_sec,
				    .ctime_nsec = (uint32_t)sb->st_ctim.tv_nsec };

	bpf_map_update_elem(bpf_map__fd(m->skel->maps.exeseen), k, &v, BPF_ANY);
	log_debug("HDF5: %s not probed: %s", shown, why);
}

/*
 * A pending library's ELF to the worker (elfw.c): where its functions are.
 * Not ready, or not reading: it waits, and is asked for when the worker is
 * ready (elf_ready) or the next round (elf_expire).
 */
static void elf_ask(struct ioacct_mpiprobes *m, struct mpilib *lib)
{
	struct ioacct_request req = { .type = IOACCT_MSG_W_ELF };
	char fdpath[32];
	int fd, ret;

	/* The handle's file, checked (jobfile.h), opened to be read: the worker cannot open. */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", lib->fd);
	fd = open(fdpath, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		log_warn("MPI-IO: %s: cannot open it for the ELF worker: %s", lib->shown,
			 strerror(errno));
		return;
	}
	ioacct_strlcpy(req.u.worker.text, lib->shown, sizeof(req.u.worker.text));
	req.u.worker.code = lib->exe;
	ret = ioacct_worker_send(m->elf, &req, &fd, 1, &lib->seq);
	close(fd);
	if (ret)
		lib->seq = 0;
	if (ret && ret != -ENOTCONN && ret != -EAGAIN)
		log_warn("MPI-IO: %s: cannot ask the ELF worker: %s", lib->shown, strerror(-ret));
}

static struct mpilib *lib_pending(struct ioacct_mpiprobes *m, uint32_t seq)
{
	for (size_t i = 0; i < m->nlibs; i++)
		if (m->libs[i].fd >= 0 && m->libs[i].seq == seq)
			return &m->libs[i];
	return NULL;
}

/* Whether what the ELF worker said is of this very file (same inode, size and ctime). */
static bool seen_same(const struct elfseen *e, const struct stat *sb)
{
	return e->dev == sb->st_dev && e->ino == sb->st_ino && e->size == sb->st_size &&
	       e->ctime.tv_sec == sb->st_ctim.tv_sec && e->ctime.tv_nsec == sb->st_ctim.tv_nsec;
}

/* What the ELF worker said of this very file before, as a program (exe) or a library, or NULL. */
static const struct elfseen *elf_seen(const struct ioacct_mpiprobes *m, const struct stat *sb,
				      bool exe)
{
	for (size_t i = 0; i < m->nseen && i < ELF_CACHE; i++)
		if (m->seen[i].exe == exe && seen_same(&m->seen[i], sb))
			return &m->seen[i];
	return NULL;
}

/* Keeps what the worker said of the library's file, over the oldest kept; NULL: not kept. */
static const struct elfseen *elf_keep(struct ioacct_mpiprobes *m, const struct mpilib *lib,
				      enum ioacct_mpi_flavour fl, const uint64_t *off)
{
	struct elfseen *e = &m->seen[m->nseen++ % ELF_CACHE];
	struct stat sb;

	if (fstat(lib->fd, &sb))
		return NULL;
	*e = (struct elfseen){ .dev = sb.st_dev, .ino = sb.st_ino, .size = sb.st_size,
			       .ctime = sb.st_ctim, .fl = fl, .exe = lib->exe };
	memcpy(e->off, off, sizeof(e->off));
	return e;
}

/* Whether lib is the last library parsed ahead that the worker had to answer. */
static bool ahead_done(const struct ioacct_mpiprobes *m, const struct mpilib *lib)
{
	for (size_t i = 0; i < m->nlibs; i++)
		if (&m->libs[i] != lib && m->libs[i].ahead && m->libs[i].fd >= 0)
			return false;
	return true;
}

/* A library parsed ahead with functions to probe (not a wrapper), attached at registrations. */
static void ahead_keep(struct ioacct_mpiprobes *m, const char *path, const struct elfseen *e)
{
	struct ahead *a;
	size_t k = 0;

	while (k < NFUNCS && !e->off[k])
		k++;
	if (k == NFUNCS || !(a = realloc(m->ahead, (m->nahead + 1) * sizeof(*a))))
		return;
	m->ahead = a;
	a[m->nahead].e = *e;
	a[m->nahead].path = strdup(path);
	if (a[m->nahead].path)
		m->nahead++;
}

/* The clients waiting for the file (dev, ino) have their answer (probe_exe). */
static void waits_done(struct ioacct_mpiprobes *m, dev_t dev, ino_t ino, int status,
		       const char *why)
{
	for (size_t i = 0; i < m->nwaits; i++) {
		struct exewait *w = &m->waits[i];

		if (!w->done && w->dev == dev && w->ino == ino)
			*w = (struct exewait){ .tag = w->tag, .seq = w->seq, .dev = dev, .ino = ino,
					       .done = true, .status = status, .why = why };
	}
}

/* Attached, by offset, to the file checked; pending no more. */
static void lib_attached(struct ioacct_mpiprobes *m, struct mpilib *lib,
			 enum ioacct_mpi_flavour fl, const uint64_t *off)
{
	lib_attach(m, lib, fl, off);
	waits_done(m, lib->dev, lib->ino, 0, NULL);
	close(lib->fd);
	lib->fd = -1;
	lib->seq = 0;
}

/* The ELF worker's answer: attach, by offset, to the file checked. */
static void elf_reply(void *ctx, const struct ioacct_reply *rep)
{
	struct ioacct_mpiprobes *m = ctx;
	struct mpilib *lib = lib_pending(m, rep->seq);
	const struct elfseen *e;
	uint32_t fl = rep->w.code;

	if (!lib)
		return; /* given up meanwhile */
	if (lib->exe && (rep->status || fl != IOACCT_MPI_HDF5)) {
		struct stat sb;

		/* A program without HDF5: its next execs send nothing (exeseen). */
		if (!fstat(lib->fd, &sb))
			exe_none(m, &lib->key, &sb, lib->shown,
				 rep->status ? rep->error : "no HDF5 in it");
		waits_done(m, lib->dev, lib->ino, 0, NULL);
		lib_free(lib);
		*lib = m->libs[--m->nlibs];
		return;
	}
	if (lib->exe)
		rank_note(m, lib->slot, lib->tgid);
	if (lib->warm)
		log_debug("MPI-IO: %s: parsed ahead%s", lib->shown, rep->status ? ", not a library" : "");
	if (lib->ahead && ahead_done(m, lib))
		log_info("MPI-IO: every library parsed ahead is parsed: attached at registrations");
	if (rep->status) {
		log_warn("MPI-IO: %s not attached: its ELF: %s", lib->shown, rep->error);
		close(lib->fd);
		lib->fd = -1;
		lib->seq = 0;
		return;
	}
	if (fl > IOACCT_MPI_HDF5)
		fl = IOACCT_MPI_UNKNOWN; /* the worker is not to be trusted with an index */
	e = elf_keep(m, lib, (enum ioacct_mpi_flavour)fl, rep->w.offsets);
	if (lib->ahead && e)
		ahead_keep(m, lib->shown, e);
	if (!lib->warm) {
		lib_attached(m, lib, (enum ioacct_mpi_flavour)fl, rep->w.offsets);
		return;
	}
	/* Parsed ahead (elf_prewarm): kept, nothing attached until a step is registered. */
	lib_free(lib);
	*lib = m->libs[--m->nlibs];
}

/*
 * The host's libraries of mpi_libraries' names, in the usual directories,
 * parsed once at start and their answers kept (ELF_CACHE): a job that
 * loads one is attached at its open, as before there was a worker. The
 * same rule as a job's library: a regular file of root's that only root
 * may write; each file once (links to it are the same inode).
 */
static void elf_prewarm(struct ioacct_mpiprobes *m, char prefix[][IOACCT_LIBNAME_MAX], int n)
{
	static const char *const dirs[] = {
		"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/lib/x86_64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char path[PATH_MAX];
			struct mpilib *lib;
			struct stat sb;
			const char *why;
			bool match = false, known = false;
			int fd;

			for (int k = 0; k < n && !match; k++)
				match = !strncmp(de->d_name, prefix[k], strlen(prefix[k]));
			/* What ld.so loads: not libhdf5*'s archives (.a) and settings. */
			if (!match || !strstr(de->d_name, ".so"))
				continue;
			/* A handle, as for a job's library: nothing opened before it is checked. */
			fd = openat(dirfd(d), de->d_name, O_PATH | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (ioacct_jobfile_lib_check(fd, &sb, &why)) {
				close(fd);
				continue;
			}
			for (size_t k = 0; k < m->nlibs; k++)
				known |= m->libs[k].dev == sb.st_dev && m->libs[k].ino == sb.st_ino;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			if (known || !(lib = lib_new(m, &sb, path, fd))) {
				close(fd);
				continue;
			}
			lib->warm = lib->ahead = true;
			log_debug("MPI-IO: %s to be parsed ahead", path);
		}
		if (d)
			closedir(d);
	}
}

/* The worker is (again) ready: the libraries still pending are asked for. */
static void elf_ready(void *ctx)
{
	struct ioacct_mpiprobes *m = ctx;

	for (size_t i = 0; i < m->nlibs; i++)
		if (m->libs[i].fd >= 0)
			elf_ask(m, &m->libs[i]);
}

/* The worker died: what it was asked will not be answered; asked again when it is back. */
static void elf_down(void *ctx)
{
	struct ioacct_mpiprobes *m = ctx;

	for (size_t i = 0; i < m->nlibs; i++)
		m->libs[i].seq = 0;
}

static const struct ioacct_worker_ops elf_ops = {
	.reply = elf_reply, .ready = elf_ready, .down = elf_down,
};

/*
 * Pending libraries not asked for yet (the worker was busy) are asked for;
 * those waiting for ELF_WAIT_NS are given up: the next open of the file
 * tries again.
 */
static void elf_expire(struct ioacct_mpiprobes *m)
{
	uint64_t now = ioacct_mono_ns();

	for (size_t i = 0; i < m->nlibs;) {
		struct mpilib *lib = &m->libs[i];

		if (lib->fd < 0) {
			i++;
			continue;
		}
		if (now - lib->pending_ns < ELF_WAIT_NS) {
			if (!lib->seq)
				elf_ask(m, lib);
			i++;
			continue;
		}
		log_warn("MPI-IO: %s not attached: the ELF worker did not answer in %llu s",
			 lib->shown, (unsigned long long)(ELF_WAIT_NS / NSEC_PER_SEC));
		waits_done(m, lib->dev, lib->ino, -ETIMEDOUT, "the ELF worker did not answer");
		lib_free(lib);
		m->libs[i] = m->libs[--m->nlibs];
	}
}

/*
 * The file of fd (checked, stat sb), which the task of e loaded or
 * executed: the job's use of it noted; a file not seen before attached
 * from what the worker said of it before, or asked for. Takes fd.
 */
static void lib_found(struct ioacct_mpiprobes *m, int fd, const struct stat *sb,
		      const char *shown, const struct ioacct_mpi_event *e)
{
	bool exe = e->kind == IOACCT_MPI_EV_EXEC;
	const struct elfseen *seen;
	struct mpilib *lib = NULL;

	for (size_t i = 0; i < m->nlibs && !lib; i++)
		if (m->libs[i].dev == sb->st_dev && m->libs[i].ino == sb->st_ino)
			lib = &m->libs[i];
	if (lib && lib->warm) {
		/* Parsed ahead, not answered yet: attached when it is. */
		lib->warm = false;
		lib->pending_ns = ioacct_mono_ns();
	}
	if (lib && exe)
		rank_note(m, e->slot, e->tgid);
	if (!lib) {
		/* Kept until attached: the uprobes name this file, the one checked. */
		lib = lib_new(m, sb, shown, fd);
		if (!lib) {
			close(fd);
			return;
		}
		fd = -1;
		lib->exe = exe;
		lib->slot = e->slot;
		lib->tgid = e->tgid;
		lib->key = e->exe;
		lib_wait_detached(m, sb->st_dev, sb->st_ino);
		seen = elf_seen(m, sb, exe);
		if (seen && exe)
			rank_note(m, e->slot, e->tgid);
		if (seen)
			lib_attached(m, lib, seen->fl, seen->off);
		else
			elf_ask(m, lib);
	}
	lib_use(lib, e->slot);
	if (fd >= 0)
		close(fd);
}

/*
 * A watched task executed a program (HDF5 linked into it: issue 39),
 * looked at through /proc/PID/exe. A task gone meanwhile leaves nothing to
 * look at: its program's next exec tries again.
 */
static void on_exec(struct ioacct_mpiprobes *m, const struct ioacct_mpi_event *e)
{
	char shown[PATH_MAX];
	struct ioacct_exe_val v;
	const char *why;
	struct stat sb;
	int fd = ioacct_jobfile_exe(e->tgid, &sb, &why, shown, sizeof(shown));

	if (why)
		exe_none(m, &e->exe, &sb, shown, why);
	if (fd < 0)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.exeseen), &e->exe, &v) &&
	    v.ctime_sec == sb.st_ctim.tv_sec && v.ctime_nsec == (uint32_t)sb.st_ctim.tv_nsec) {
		/* Its exec came before the answer that it has no HDF5 (79-h5static.sh counts these). */
		log_debug("HDF5: %s: an exec of before its answer", shown);
		close(fd);
		return;
	}
	/*
	 * A task that executed another program since is looked at in that
	 * one: a program it executed all the same, whose own event follows.
	 */
	lib_found(m, fd, &sb, shown, e);
}

/* See mpiprobes.h. The key is stat's, which the exec's may not be (btrfs): then parsed once more. */
int ioacct_mpiprobes_probe_exe(struct ioacct_mpiprobes *m, int fd, uint32_t slot, void *tag,
			       uint32_t seq, const char **why)
{
	struct ioacct_mpi_event e = { .slot = slot, .kind = IOACCT_MPI_EV_EXEC };
	char link[32], shown[PATH_MAX];
	struct ioacct_exe_val v;
	struct stat sb = { 0 };
	ssize_t n;
	int ret = ioacct_jobfile_exe_fd(fd, &sb, why);

	if (!ret && m->nwaits == EXE_WAITS_MAX) {
		*why = "too many programs wait for their probes";
		ret = -EBUSY;
	}
	e.exe = (struct ioacct_exe_key){ .dev = sb.st_dev, .ino = sb.st_ino };
	if (ret || !m->h5 ||
	    (!bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.exeseen), &e.exe, &v) &&
	     v.ctime_sec == sb.st_ctim.tv_sec && v.ctime_nsec == (uint32_t)sb.st_ctim.tv_nsec)) {
		close(fd);
		return ret;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, shown, sizeof(shown) - 1);
	shown[n > 0 ? n : 0] = '\0';
	for (char *c = shown; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?'; /* it goes to the log */
	lib_found(m, fd, &sb, shown, &e);
	for (size_t i = 0; i < m->nlibs; i++) {
		if (m->libs[i].dev != sb.st_dev || m->libs[i].ino != sb.st_ino)
			continue;
		if (m->libs[i].fd < 0)
			return 0; /* attached */
		m->waits[m->nwaits++] = (struct exewait){ .tag = tag, .seq = seq, .dev = sb.st_dev,
							  .ino = sb.st_ino };
		return 1;
	}
	*why = "out of memory";
	return -ENOMEM;
}

bool ioacct_mpiprobes_answer(struct ioacct_mpiprobes *m, void **tag, uint32_t *seq, int *status,
			     const char **why)
{
	for (size_t i = 0; i < m->nwaits; i++) {
		if (!m->waits[i].done)
			continue;
		*tag = m->waits[i].tag;
		*seq = m->waits[i].seq;
		*status = m->waits[i].status;
		*why = m->waits[i].why;
		m->waits[i] = m->waits[--m->nwaits];
		return true;
	}
	return false;
}

void ioacct_mpiprobes_cancel(struct ioacct_mpiprobes *m, void *tag)
{
	for (size_t i = 0; i < m->nwaits;)
		if (m->waits[i].tag == tag)
			m->waits[i] = m->waits[--m->nwaits];
		else
			i++;
}

/*
 * A library parsed ahead, for slot's step: in place, taken back from the detacher, or
 * attached now if its file is the one parsed (else at its open, as any other).
 */
static void ahead_attach(struct ioacct_mpiprobes *m, const struct ahead *a, uint32_t slot)
{
	struct mpilib *lib = NULL;
	const char *why;
	struct stat sb;
	int fd, ret;

	for (size_t i = 0; i < m->nlibs && !lib; i++)
		if (m->libs[i].dev == a->e.dev && m->libs[i].ino == a->e.ino)
			lib = &m->libs[i];
	ret = lib ? 0 : lib_reclaim(m, a->e.dev, a->e.ino);
	if (ret > 0)
		lib = &m->libs[m->nlibs - 1];
	if (lib) {
		lib_use(lib, slot);
		return;
	}
	if (ret == -EBUSY) {
		/*
		 * Its uprobes are being removed right now: gone first, then attached
		 * again below, before the answer. Left to its open, the step's first
		 * calls raced the attach (75-hdf5's second job lost all its records).
		 */
		log_debug("MPI-IO: %s being detached: waited for, then attached again", a->path);
		lib_wait_detached(m, a->e.dev, a->e.ino);
	}
	fd = open(a->path, O_PATH | O_CLOEXEC);
	if (fd >= 0 && (ioacct_jobfile_lib_check(fd, &sb, &why) || !seen_same(&a->e, &sb) ||
			!(lib = lib_new(m, &sb, a->path, fd)))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		log_debug("MPI-IO: %s not attached at a registration: changed since parsed ahead",
			  a->path);
		return;
	}
	lib->at_register = true;
	lib_attached(m, lib, a->e.fl, a->e.off);
	lib_use(lib, slot);
}

/*
 * Whether uprobes can be made now: uprobe_multi links (6.6) need CAP_BPF and
 * CAP_PERFMON, which ioacctd keeps; perf_event ones CAP_SYS_ADMIN, which it
 * keeps as root only (privs.c).
 */
static bool uprobes_allowed(const struct ioacct_mpiprobes *m)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	return m->umulti || (!syscall(SYS_capget, &hdr, caps) &&
			     (caps[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32))));
}

void ioacct_mpiprobes_attach_ahead(struct ioacct_mpiprobes *m, uint32_t slot)
{
	if (m->ahead_off)
		return;
	if (!uprobes_allowed(m)) {
		log_info("MPI-IO: the libraries parsed ahead are not attached at registrations: "
			 "this kernel's uprobes need CAP_SYS_ADMIN, which ioacctd keeps only with "
			 "user = root (ioacctd(8), PRIVILEGES)");
		m->ahead_off = true;
		return;
	}
	for (size_t i = 0; i < m->nahead; i++)
		ahead_attach(m, &m->ahead[i], slot);
	/* Still parsed ahead (the daemon just started): attached when answered, as at an open. */
	for (size_t i = 0; i < m->nlibs; i++)
		if (m->libs[i].warm && m->libs[i].fd >= 0) {
			m->libs[i].warm = false;
			m->libs[i].pending_ns = ioacct_mono_ns();
			lib_use(&m->libs[i], slot);
		}
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct ioacct_mpi_event *e = data;
	struct ioacct_mpiprobes *m = ctx;
	char path[IOACCT_MPI_PATH_MAX + 1], shown[IOACCT_MPI_PATH_MAX + 64], fdpath[32];
	const char *why;
	struct stat sb;
	int fd;

	if (size >= offsetof(struct ioacct_mpi_event, path) && e->kind == IOACCT_MPI_EV_EXEC) {
		on_exec(m, e);
		return 0;
	}
	if (size < sizeof(*e) || e->path[0] != '/')
		return 0;
	rank_note(m, e->slot, e->tgid);
	snprintf(path, sizeof(path), "%.*s", (int)sizeof(e->path), e->path);
	snprintf(shown, sizeof(shown), "/proc/%u/root%s", e->tgid, path);
	for (char *c = shown; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?'; /* it goes to the log */
	fd = ioacct_jobfile_lib(e->tgid, path, &sb, &why);
	if (fd < 0) {
		/*
		 * ld.so tries a path per search directory: most opens name no
		 * file. Said only when the task is gone before its event was
		 * read (nothing left to look at, nor to probe), or when a file
		 * is there and refused.
		 */
		if (why)
			log_debug("MPI-IO: %s not attached: %s", shown, why);
		else if (fd == -ESRCH || fd == -ENOENT) {
			snprintf(fdpath, sizeof(fdpath), "/proc/%u", e->tgid);
			if (access(fdpath, F_OK))
				log_debug("MPI-IO: %s not looked at: its task is gone", shown);
		}
		return 0;
	}
	lib_found(m, fd, &sb, shown, e);
	return 0;
}

/* Collective: the function's class says so, or its name (the nonblocking _all ones). */
static bool func_collective(const struct mpi_func *f)
{
	return f->cls == IOACCT_MPI_C_COLL || strstr(f->name, "_all") ||
	       strstr(f->name, "_ordered");
}

static int on_span(void *ctx, void *data, size_t size)
{
	const struct ioacct_mpi_span *e = data;
	struct ioacct_mpiprobes *m = ctx;
	struct ioacct_mpi_key k = { 0 };
	struct ioacct_mpi_val v;
	struct ioacct_mpi_call c;
	size_t fn;

	if (size < sizeof(*e) || !m->span_cb || (fn = e->cookie & 0xff) >= NFUNCS)
		return 0;
	c = (struct ioacct_mpi_call){
		.func = funcs[fn].name, .path = "", .start_ns = e->start_ns, .end_ns = e->end_ns,
		.offset = e->offset, .bytes = e->bytes, .result = e->ret, .slot = e->slot,
		.tgid = e->tgid, .pid = e->pid, .rank = mpiprobes_rank_of(m, e->slot, e->tgid),
		.collective = func_collective(&funcs[fn]),
	};
	k.slot = e->slot;
	k.tgid = e->tgid;
	k.file = e->file;
	/* The record keeps the path as MPI_File_open was given it. */
	if (e->file && !bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.records), &k, &v)) {
		v.path[sizeof(v.path) - 1] = '\0';
		c.path = v.path;
	}
	m->span_cb(m->span_ctx, &c);
	return 0;
}

void ioacct_mpiprobes_set_span_cb(struct ioacct_mpiprobes *m,
				  void (*cb)(void *ctx, const struct ioacct_mpi_call *c),
				  void *ctx)
{
	m->span_cb = cb;
	m->span_ctx = ctx;
}

int ioacct_mpiprobes_spans(struct ioacct_mpiprobes *m, uint32_t slot, bool on)
{
	uint32_t v = on;

	return bpf_map_update_elem(bpf_map__fd(m->skel->maps.spanon), &slot, &v, BPF_ANY) ?
	       -errno : 0;
}

/*
 * The library watch follows the main object's watch (ioacct_probes_on_publish):
 * attached while a cgroup is watched, whatever detach_when_idle says. It is
 * a syscall tracepoint: while any is enabled, the kernel sends every system
 * call of every task down its slow path, and with nothing watched it would
 * only look at the state map and return. The count is the watch map's,
 * recounted at each register and finish, so two steps at once, or one
 * starting while another ends, leave it attached.
 */
static void watch_sync(void *ctx, uint32_t nwatched)
{
	struct ioacct_mpiprobes *m = ctx;

	/* The exec watch (HDF5 in executables) likewise: a task's exec costs nothing while idle. */
	if (nwatched && !m->execw && m->h5) {
		m->execw = bpf_program__attach(m->skel->progs.ioacct_mpi_exec);
		if (!m->execw)
			log_warn("HDF5: cannot attach the exec watch: %s; HDF5 linked into the programs "
				 "of the steps registered now is not probed", strerror(errno));
	} else if (!nwatched && m->execw) {
		bpf_link__destroy(m->execw);
		m->execw = NULL;
	}
	if (nwatched && !m->watch) {
		m->watch = bpf_program__attach(m->skel->progs.ioacct_mpi_lib_open);
		if (m->watch)
			log_debug("MPI-IO: library watch attached (%u cgroups watched)", nwatched);
		else
			log_warn("MPI-IO: cannot attach the library watch: %s; the MPI libraries of "
				 "the steps registered now are not probed", strerror(errno));
	} else if (!nwatched && m->watch) {
		bpf_link__destroy(m->watch);
		m->watch = NULL;
		log_debug("MPI-IO: library watch detached: nothing is watched");
	}
}

struct ioacct_mpiprobes *ioacct_mpiprobes_open(struct ioacct_probes *p, const char *libs,
					       const char *h5libs, uint32_t v1_ssid, char *err,
					       size_t errlen)
{
	char prefix[2 * IOACCT_LIBNAMES_MAX][IOACCT_LIBNAME_MAX] = { { 0 } };
	struct ioacct_mpiprobes *m = calloc(1, sizeof(*m));
	static const char *const shared[] = { "watch", "slots", "state" };
	int ret = -ENOMEM, n = ioacct_libnames_parse(libs, prefix, IOACCT_LIBNAMES_MAX), nh5;
	const char *what = "open";
	char why[512] = "";

	_Static_assert(IOACCT_LIBNAME_MAX == IOACCT_MPI_PREFIX_MAX &&
		       2 * IOACCT_LIBNAMES_MAX == IOACCT_MPI_PREFIXES, "the object's library prefixes");
	/* One watch for both families: the ELF worker tells an HDF5 library by its symbols. */
	nh5 = n < 0 ? -1 : ioacct_libnames_parse(h5libs, prefix + n, IOACCT_LIBNAMES_MAX);
	n = nh5 < 0 ? -1 : n + nh5;
	if (m) {
		m->h5 = nh5 > 0;
		pthread_mutex_init(&m->lock, NULL);
		pthread_cond_init(&m->cond, NULL);
	}
	if (!m || n <= 0 || !(m->skel = ioacct_mpi_bpf__open()))
		goto fail;
	m->skel->rodata->v1_ssid = v1_ssid;
	memcpy((void *)m->skel->rodata->lib_prefix, prefix, sizeof(prefix));
	m->umulti = umulti_supported();
	if (m->umulti) {
		bpf_program__set_expected_attach_type(m->skel->progs.ioacct_mpi_enter,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(m->skel->progs.ioacct_mpi_return,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(m->skel->progs.ioacct_h5_enter,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(m->skel->progs.ioacct_h5_return,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	} else {
		log_warn("MPI-IO: this kernel has no uprobe_multi links (Linux 6.6): its uprobes go "
			 "through perf_event_open, which needs CAP_SYS_ADMIN; ioacctd keeps it only "
			 "with user = root, so libraries first loaded after its start are not counted "
			 "(ioacctd(8), PRIVILEGES)");
	}
	what = "share the main object's maps with";
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		int fd = ioacct_probes_map_fd(p, shared[i]);

		ret = fd < 0 ? fd : bpf_map__reuse_fd(
			bpf_object__find_map_by_name(m->skel->obj, shared[i]), fd);
		if (ret)
			goto fail;
	}
	what = "load";
	ret = ioacct_mpi_bpf__load(m->skel);
	if (!ret) {
		/* Attached once now, so that a kernel refusing it is told at start. */
		what = "attach the library watch of";
		m->watch = bpf_program__attach(m->skel->progs.ioacct_mpi_lib_open);
		ret = m->watch ? 0 : -errno;
	}
	if (!ret && m->h5) {
		/* Without it, only HDF5 linked into programs goes uncounted: said, not fatal. */
		m->execw = bpf_program__attach(m->skel->progs.ioacct_mpi_exec);
		if (!m->execw)
			log_warn("HDF5: cannot attach the exec watch (sched_process_exec): %s; HDF5 "
				 "linked into programs is not probed", strerror(errno));
		m->h5 = m->execw != NULL;
	}
	if (!ret) {
		what = "make the ring buffer of";
		m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.events), on_event, m, NULL);
		ret = m->rb ? 0 : -errno;
	}
	if (!ret)
		ret = ring_buffer__add(m->rb, bpf_map__fd(m->skel->maps.spans), on_span, m);
	/* The libraries' ELF is parsed by an unprivileged process (issue 37). */
	if (!ret) {
		m->elf = ioacct_worker_new("elf", NULL, 0, &elf_ops, m);
		ret = m->elf ? ioacct_worker_start(m->elf, 0, why, sizeof(why)) : -errno;
		what = "start the ELF worker of";
	}
	if (!ret) {
		/* Asked for as soon as it is ready (elf_ready). */
		elf_prewarm(m, prefix, n);
		/* Detached now if nothing is watched. */
		m->probes = p;
		ioacct_probes_on_publish(p, watch_sync, m);
		return m;
	}
fail:
	snprintf(err, errlen, "cannot %s the MPI-IO probes: %s", what,
		 n <= 0 ? "mpi_libraries and hdf5_libraries name no library" :
		 why[0] ? why : strerror(-ret));
	ioacct_mpiprobes_close(m);
	errno = n <= 0 ? EINVAL : -ret;
	return NULL;
}

void ioacct_mpiprobes_close(struct ioacct_mpiprobes *m)
{
	if (!m)
		return;
	if (m->probes)
		ioacct_probes_on_publish(m->probes, NULL, NULL);
	bpf_link__destroy(m->watch);
	bpf_link__destroy(m->execw);
	if (m->detacher_on) {
		pthread_mutex_lock(&m->lock);
		m->stopping = true;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->detacher, NULL);
	}
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	ioacct_worker_free(m->elf);
	ring_buffer__free(m->rb);
	for (size_t i = 0; i < m->nlibs; i++)
		lib_free(&m->libs[i]);
	ioacct_mpi_bpf__destroy(m->skel);
	free(m->libs);
	for (size_t i = 0; i < m->nahead; i++)
		free(m->ahead[i].path);
	free(m->ahead);
	free(m->ranks);
	free(m);
}

int ioacct_mpiprobes_fd(const struct ioacct_mpiprobes *m)
{
	return ring_buffer__epoll_fd(m->rb);
}

void ioacct_mpiprobes_poll(struct ioacct_mpiprobes *m)
{
	ring_buffer__consume(m->rb);
	elf_expire(m);
	mpiprobes_libs_reap(m);
}

size_t ioacct_mpiprobes_nlibs(const struct ioacct_mpiprobes *m)
{
	return m->nlibs;
}
