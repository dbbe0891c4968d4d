// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacct's MPI-IO probes (issue 27): uprobes on the MPI-IO entry points of
 * the MPI libraries a watched job loads, counters per (slot, process, file)
 * as Darshan's MPIIO module keeps them. A separate object from ioacct.bpf.c,
 * loaded by the daemon beside it: it shares that object's watch, slots and
 * state maps (bpf_map__reuse_fd), so a task counts here exactly when it
 * counts there, in the same slot.
 *
 * The uprobes are attached by the daemon once per library file, when a
 * watched task opens one (mpi_lib_open, below, tells it through events):
 * a job that loads no MPI library pays no uprobe. One entry program and one
 * return program serve every function: the attach cookie says which
 * function it is, where its count and datatype are and how the library's
 * handles are read (ioacct_mpi_abi.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ioacct_abi.h"
#include "ioacct_mpi_abi.h"
#include "ioacct_h5_abi.h"
#include "ioacct_bpf_common.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the daemon before load. */
const volatile __u32 v1_ssid = 0;
/* Library name prefixes (literal start of each configured name), "" unused. */
const volatile char lib_prefix[IOACCT_MPI_PREFIXES][IOACCT_MPI_PREFIX_MAX] = {};

/* The main object's maps, reused by fd: declared as it declares them. */
#include "ioacct_watch.bpf.h"

/* This object's own. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_mpi_key);
	__type(value, struct ioacct_mpi_val);
} records SEC(".maps");

/* An open file handle of a process: which record its calls go to. */
struct fh_key {
	__u64 fh;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fh_key);
	__type(value, __u64);
} fhs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct ioacct_mpi_pending);
} pend SEC(".maps");

/* MPICH's derived datatypes' sizes, noted as they are made (ioacct_mpi_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ioacct_mpi_dt_key);
	__type(value, __s64);
} dtsizes SEC(".maps");

/* lost[slot]: calls that found a map full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * libmiss[slot]: library opens that found the ring buffer full (the daemon
 * behind): the library they loaded may have no uprobes, and the job's
 * report says how many (issue 39).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} libmiss SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_mpi_val);
} scratch SEC(".maps");

/* spanon[slot]: nonzero when the slot's job asked for its MPI-IO calls as spans. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} spanon SEC(".maps");

/* Those calls, one struct ioacct_mpi_span each. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} spans SEC(".maps");

/*
 * Where the openat program builds an event: a record reserved in the ring
 * buffer and discarded would hold its space until the daemon reads past
 * it, and a task's start opens hundreds of files.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_mpi_event);
} evscratch SEC(".maps");

/*
 * The slot the current task counts in, as ioacct.bpf.c's current_slot()
 * finds it, without its per-CPU cache: an MPI-IO call is rare next to a
 * system call, and only tasks of a library the daemon attached to get here.
 */
static __noinline __u32 task_slot(void)
{
	__u32 zero = 0;
	struct ioacct_state *st = bpf_map_lookup_elem(&state, &zero);

	if (!st || !st->nactive)
		return IOACCT_SLOT_NONE;
	return task_watched_slot(bpf_get_current_task_btf(), st, v1_ssid);
}

static __always_inline void count_in(void *map, __u32 slot)
{
	__u64 *n = bpf_map_lookup_elem(map, &slot);

	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("uprobe")
int BPF_KPROBE(ioacct_mpi_enter)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ioacct_mpi_pending *p = bpf_map_lookup_elem(&pend, &id);
	struct ioacct_mpi_pending n = {};
	__u32 kind;

	if (p) {
		p->depth++;
		return 0;
	}
	n.slot = task_slot();
	if (n.slot == IOACCT_SLOT_NONE)
		return 0;
	n.cookie = bpf_get_attach_cookie(ctx);
	n.a[0] = PT_REGS_PARM1(ctx);
	n.a[1] = PT_REGS_PARM2(ctx);
	n.a[2] = PT_REGS_PARM3(ctx);
	n.a[3] = PT_REGS_PARM4(ctx);
	n.a[4] = PT_REGS_PARM5(ctx);
	kind = (n.cookie >> 8) & 0xff;
	/*
	 * MPI_File_close(MPI_File *fh) sets *fh to MPI_FILE_NULL, MPI_Type_free
	 * (MPI_Datatype *) to MPI_DATATYPE_NULL: read it now.
	 */
	if ((kind == IOACCT_MPI_K_CLOSE || kind == IOACCT_MPI_K_TYPE_FREE) &&
	    bpf_probe_read_user(&n.a[0], sizeof(n.a[0]), (void *)n.a[0]))
		return 0;
	n.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&pend, &id, &n, BPF_NOEXIST))
		count_in(&lost, n.slot);
	return 0;
}

static __always_inline __u32 size_bin(__u64 n)
{
	static const __u64 limits[IOACCT_MPI_NR_SIZE_BINS - 1] = {
		IOACCT_SIZE_LIMIT_0, IOACCT_SIZE_LIMIT_1, IOACCT_SIZE_LIMIT_2,
		IOACCT_SIZE_LIMIT_3, IOACCT_SIZE_LIMIT_4, IOACCT_SIZE_LIMIT_5,
		IOACCT_SIZE_LIMIT_6, IOACCT_SIZE_LIMIT_7, IOACCT_SIZE_LIMIT_8,
	};

	for (__u32 i = 0; i < IOACCT_MPI_NR_SIZE_BINS - 1; i++)
		if (n <= limits[i])
			return i;
	return IOACCT_MPI_NR_SIZE_BINS - 1;
}

/*
 * A datatype's size in bytes, -1 when this library's cannot be read exactly.
 * MPICH: a builtin datatype's handle holds its size; a derived one's was
 * noted when the process made it (on_type), else it is unknown.
 */
static __always_inline __s64 type_size(__u32 flavour, __u64 dt, __u32 slot, __u32 tgid)
{
	struct ioacct_mpi_dt_key k = { .slot = slot, .tgid = tgid, .handle = (__u32)dt };
	__s64 *noted;
	__u64 size;

	if (flavour == IOACCT_MPI_OPENMPI) {
		if (bpf_probe_read_user(&size, sizeof(size), (void *)(dt + IOACCT_OMPI_DT_SIZE_OFF)))
			return -1;
		return (__s64)size;
	}
	if (flavour != IOACCT_MPI_MPICH)
		return -1;
	if ((((__u32)dt >> 30) & 3) == IOACCT_MPICH_KIND_BUILTIN)
		return ((__u32)dt >> 8) & 0xff;
	noted = bpf_map_lookup_elem(&dtsizes, &k);
	return noted ? *noted : -1;
}

/*
 * An MPICH datatype constructor returned: its result's size, from its
 * arguments and its old type's size, noted for the process; MPI_Type_free
 * returned: forgotten (MPICH reuses the handle). A size that is not known
 * exactly is not noted: calls with that type count as unsized.
 */
static __noinline int on_type(const struct ioacct_mpi_pending *p, __u32 tgid)
{
	__u32 kind = (p->cookie >> 8) & 0xff, ctor = (p->cookie >> 16) & 0xf;
	struct ioacct_mpi_dt_key k = { .slot = p->slot, .tgid = tgid };
	__u64 old, n = 1, newp;
	__s64 size;
	__u32 handle;

	if (kind == IOACCT_MPI_K_TYPE_FREE) {
		k.handle = (__u32)p->a[0];
		bpf_map_delete_elem(&dtsizes, &k);
		return 0;
	}
	switch (ctor) {
	case IOACCT_MPI_T_CONTIG:
		n = (__u32)p->a[0];
		old = p->a[1];
		newp = p->a[2];
		break;
	case IOACCT_MPI_T_VECTOR:
		n = (__u64)(__u32)p->a[0] * (__u32)p->a[1];
		old = p->a[3];
		newp = p->a[4];
		break;
	case IOACCT_MPI_T_RESIZED:
		old = p->a[0];
		newp = p->a[3];
		break;
	default:
		old = p->a[0];
		newp = p->a[1];
	}
	size = type_size(IOACCT_MPI_MPICH, old, p->slot, tgid);
	if (bpf_probe_read_user(&handle, sizeof(handle), (void *)newp))
		return 0;
	k.handle = handle;
	if (size < 0) {
		bpf_map_delete_elem(&dtsizes, &k);
		return 0;
	}
	size *= n;
	if (bpf_map_update_elem(&dtsizes, &k, &size, BPF_ANY))
		count_in(&lost, p->slot);
	return 0;
}

/* Is the communicator a file is opened on of one process? 1, 0, or -1 unknown. */
static __always_inline int comm_single(__u32 flavour, __u64 comm)
{
	__u64 group;
	__s32 size;

	if (flavour == IOACCT_MPI_OPENMPI) {
		if (bpf_probe_read_user(&group, sizeof(group), (void *)(comm + IOACCT_OMPI_COMM_GROUP_OFF)) ||
		    bpf_probe_read_user(&size, sizeof(size), (void *)(group + IOACCT_OMPI_GROUP_SIZE_OFF)))
			return -1;
		return size == 1;
	}
	if (flavour == IOACCT_MPI_MPICH)
		return (__u32)comm == IOACCT_MPICH_COMM_SELF;
	return -1;
}

static __always_inline __u64 fnv1a(const char *s)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < IOACCT_MPI_PATH_MAX && s[i]; i++) {
		h ^= (__u8)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static __always_inline struct ioacct_slot *slot_of(__u32 slot)
{
	return bpf_map_lookup_elem(&slots, &slot);
}

/* MPI_File_open returned: the file's record (made if new) and its handle. */
static __noinline int on_open(const struct ioacct_mpi_pending *p, __u32 tgid, __u64 dt)
{
	__u32 flavour = (p->cookie >> 24) & 0xff, zero = 0;
	struct ioacct_mpi_key k = { .slot = p->slot, .tgid = tgid };
	struct fh_key fk = { .tgid = tgid };
	struct ioacct_mpi_val *v, *s = bpf_map_lookup_elem(&scratch, &zero);
	struct ioacct_slot *sl = slot_of(p->slot);

	if (!s || !sl || bpf_probe_read_user(&fk.fh, sizeof(fk.fh), (void *)p->a[4]))
		return 0;
	__builtin_memset(s, 0, sizeof(*s));
	if (bpf_probe_read_user_str(s->path, sizeof(s->path), (void *)p->a[1]) <= 0)
		return 0;
	k.file = fnv1a(s->path);
	v = bpf_map_lookup_elem(&records, &k);
	if (v && v->start != sl->start_ns) {
		bpf_map_delete_elem(&records, &k);
		v = NULL;
	}
	if (!v) {
		s->start = sl->start_ns;
		if (bpf_map_update_elem(&records, &k, s, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&records, &k)) {
			count_in(&lost, p->slot);
			return 0;
		}
		v = bpf_map_lookup_elem(&records, &k);
		if (!v)
			return 0;
	}
	if (comm_single(flavour, p->a[0]) == 1)
		__sync_fetch_and_add(&v->indep_opens, 1);
	else
		__sync_fetch_and_add(&v->coll_opens, 1);
	__sync_fetch_and_add(&v->meta_ns, dt);
	if (bpf_map_update_elem(&fhs, &fk, &k.file, BPF_ANY))
		count_in(&lost, p->slot);
	return 0;
}

static __always_inline void on_access(struct ioacct_mpi_val *v, __u32 kind, __u32 cls, __s64 bytes,
				      __u64 dt)
{
	bool rd = kind == IOACCT_MPI_K_READ;
	__u64 *calls;

	if (cls == IOACCT_MPI_C_INDEP)
		calls = rd ? &v->indep_reads : &v->indep_writes;
	else if (cls == IOACCT_MPI_C_COLL)
		calls = rd ? &v->coll_reads : &v->coll_writes;
	else if (cls == IOACCT_MPI_C_SPLIT)
		calls = rd ? &v->split_reads : &v->split_writes;
	else
		calls = rd ? &v->nb_reads : &v->nb_writes;
	__sync_fetch_and_add(calls, 1);
	__sync_fetch_and_add(rd ? &v->read_ns : &v->write_ns, dt);
	if (bytes < 0) {
		__sync_fetch_and_add(rd ? &v->unsized_reads : &v->unsized_writes, 1);
		return;
	}
	__sync_fetch_and_add(rd ? &v->bytes_read : &v->bytes_written, bytes);
	__u32 b = size_bin(bytes);

	if (b < IOACCT_MPI_NR_SIZE_BINS)
		__sync_fetch_and_add(rd ? &v->size_read[b] : &v->size_written[b], 1);
}

/* Any other call returned: added to the record of its handle's file. */
static __noinline int on_call(const struct ioacct_mpi_pending *p, __u32 tgid, __u64 dt)
{
	__u32 kind = (p->cookie >> 8) & 0xff, cls = (p->cookie >> 16) & 0xf;
	__u32 at = (p->cookie >> 20) & 0xf, flavour = (p->cookie >> 24) & 0xff;
	struct fh_key fk = { .fh = p->a[0], .tgid = tgid };
	struct ioacct_mpi_key k = { .slot = p->slot, .tgid = tgid };
	struct ioacct_mpi_val *v;
	__u64 *file = bpf_map_lookup_elem(&fhs, &fk);
	__u64 count, type;

	if (!file)
		return 0; /* opened before the daemon attached: not counted */
	k.file = *file;
	if (kind == IOACCT_MPI_K_CLOSE)
		bpf_map_delete_elem(&fhs, &fk);
	v = bpf_map_lookup_elem(&records, &k);
	if (!v)
		return 0;
	switch (kind) {
	case IOACCT_MPI_K_READ:
	case IOACCT_MPI_K_WRITE:
		count = at ? p->a[3] : p->a[2];
		type = at ? p->a[4] : p->a[3];
		__s64 size = type_size(flavour, type, p->slot, tgid);

		on_access(v, kind, cls, size < 0 ? -1 : (__s64)((__u32)count * (__u64)size), dt);
		break;
	case IOACCT_MPI_K_READ_END:
		__sync_fetch_and_add(&v->read_ns, dt);
		break;
	case IOACCT_MPI_K_WRITE_END:
		__sync_fetch_and_add(&v->write_ns, dt);
		break;
	case IOACCT_MPI_K_SYNC:
		__sync_fetch_and_add(&v->syncs, 1);
		__sync_fetch_and_add(&v->meta_ns, dt);
		break;
	case IOACCT_MPI_K_VIEW:
		__sync_fetch_and_add(&v->views, 1);
		__sync_fetch_and_add(&v->meta_ns, dt);
		break;
	default:
		__sync_fetch_and_add(&v->meta_ns, dt);
	}
	return 0;
}

/*
 * A call of a slot with spans returned: its span's event. Its file is its
 * handle's (the handle MPI_File_open made, read where it was written), its
 * bytes counted as on_call counts them, whatever its result.
 */
__noinline int span_out(struct ioacct_mpi_pending *p, __u64 id, int ret, __u64 end)
{
	struct fh_key fk = { .tgid = id >> 32 };
	struct ioacct_mpi_span *e;
	__u32 kind, at, flavour;
	__u64 *file;
	__s64 size;

	if (!p)
		return 0;
	kind = (p->cookie >> 8) & 0xff;
	at = (p->cookie >> 20) & 0xf;
	flavour = (p->cookie >> 24) & 0xff;
	if (kind == IOACCT_MPI_K_TYPE || kind == IOACCT_MPI_K_TYPE_FREE)
		return 0;
	fk.fh = p->a[0];
	if (kind == IOACCT_MPI_K_OPEN &&
	    (ret || bpf_probe_read_user(&fk.fh, sizeof(fk.fh), (void *)p->a[4])))
		fk.fh = 0;
	e = bpf_ringbuf_reserve(&spans, sizeof(*e), 0);
	if (!e) {
		count_in(&lost, p->slot);
		return 0;
	}
	file = bpf_map_lookup_elem(&fhs, &fk);
	e->file = file ? *file : 0;
	e->start_ns = p->ts;
	e->end_ns = end;
	e->cookie = p->cookie;
	e->offset = at ? (__s64)p->a[1] : -1;
	e->bytes = -1;
	if (kind == IOACCT_MPI_K_READ || kind == IOACCT_MPI_K_WRITE) {
		size = type_size(flavour, at ? p->a[4] : p->a[3], p->slot, id >> 32);
		if (size >= 0)
			e->bytes = (__s64)((__u32)(at ? p->a[3] : p->a[2]) * (__u64)size);
	}
	e->ret = ret;
	e->tgid = id >> 32;
	e->pid = (__u32)id;
	e->slot = p->slot;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ioacct_mpi_return, int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ioacct_mpi_pending *p = bpf_map_lookup_elem(&pend, &id);
	__u32 *span, kind;
	__u64 end, dt;

	if (!p)
		return 0;
	if (p->depth) {
		p->depth--;
		return 0;
	}
	end = bpf_ktime_get_ns();
	dt = end - p->ts;
	kind = (p->cookie >> 8) & 0xff;
	span = bpf_map_lookup_elem(&spanon, &p->slot);
	/* A close's span before on_call forgets its handle; an open's after on_open notes it. */
	if (span && *span && kind != IOACCT_MPI_K_OPEN)
		span_out(p, id, ret, end);
	/* As Darshan: a call that failed is not counted. */
	if (ret == 0) {
		if (kind == IOACCT_MPI_K_OPEN)
			on_open(p, id >> 32, dt);
		else if (kind == IOACCT_MPI_K_TYPE || kind == IOACCT_MPI_K_TYPE_FREE)
			on_type(p, id >> 32);
		else
			on_call(p, id >> 32, dt);
	}
	if (span && *span && kind == IOACCT_MPI_K_OPEN)
		span_out(p, id, ret, end);
	bpf_map_delete_elem(&pend, &id);
	return 0;
}

/*
 * Does the path's last component start with one of the library prefixes?
 * Where the last component starts is found without a branch per character
 * (a branch there would have the verifier follow every way through 256),
 * and it is read again from the task's memory into name: what follows
 * depends on name only, so the verifier checks it once.
 */
static __always_inline bool lib_name(const char *path, __u64 upath)
{
	char name[IOACCT_MPI_PREFIX_MAX] = {};
	__u64 base = 0;

	for (__u32 i = 0; i < IOACCT_MPI_PATH_MAX - 1; i++) {
		__u64 x = (__u8)path[i] ^ '/';
		__u64 slash = 1 - ((x | -x) >> 63); /* 1 when path[i] is '/' */

		base += (i + 1 - base) * slash;
		if (!path[i])
			break;
	}
	if (bpf_probe_read_user_str(name, sizeof(name), (void *)(upath + base)) <= 0)
		return false;
	for (__u32 j = 0; j < IOACCT_MPI_PREFIXES; j++) {
		bool match = lib_prefix[j][0] != 0;

		for (__u32 i = 0; i < IOACCT_MPI_PREFIX_MAX && match && lib_prefix[j][i]; i++)
			if (name[i] != lib_prefix[j][i])
				match = false;
		if (match)
			return true;
	}
	return false;
}

/*
 * A watched task opens a file: when it is an MPI library (ld.so loading it,
 * before MPI_Init can run), the daemon is told, attaches to it and notes the
 * task's rank. Every other task stops at the state map's count.
 */
SEC("tracepoint/syscalls/sys_enter_openat")
int ioacct_mpi_lib_open(struct trace_event_raw_sys_enter *ctx)
{
	__u32 zero = 0, slot = task_slot();
	struct ioacct_mpi_event *e;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	e = bpf_map_lookup_elem(&evscratch, &zero);
	if (!e || bpf_probe_read_user_str(e->path, sizeof(e->path), (void *)ctx->args[1]) <= 0 ||
	    !lib_name(e->path, (__u64)ctx->args[1]))
		return 0;
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->slot = slot;
	e->kind = IOACCT_MPI_EV_LIB;
	if (bpf_ringbuf_output(&events, e, sizeof(*e), 0))
		count_in(&libmiss, slot);
	return 0;
}

/* HDF5 (issue 39): its programs, on the libraries the same watch finds. */
#include "ioacct_h5.bpf.h"
/* And on the executables of watched tasks that have HDF5 linked in. */
#include "ioacct_exe.bpf.h"
