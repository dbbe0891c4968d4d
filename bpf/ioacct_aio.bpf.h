/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Linux AIO: io_submit's iocbs recorded at its start, counted when
 * io_getevents reaps their events; called from on_enter/on_exit
 * (ioacct_syscalls.bpf.h).
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_pcache_call.bpf.h, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

/*
 * ---- Linux AIO (issue 14) -------------------------------------------------
 *
 * io_submit and io_getevents are no reads or writes themselves: the iocbs
 * they carry are. At io_submit's start (a watched task) each iocb's opcode
 * and fd are read from the user's memory, which the application has just
 * written, and its file's mount, its op and the job's slot are kept by
 * (mm, iocb address) in aio_reqs: at the start, because a buffered iocb
 * completes inside io_submit and another thread may reap it before the
 * submitter's sys_exit. At io_submit's end the iocbs the kernel did not take
 * are forgotten (a failure of the first one is counted as a failed call of
 * its kind). When io_getevents or io_pgetevents returns events, each one's
 * iocb (io_event.obj) is looked up and counted with the event's result, for
 * the submitter's job, once; the time is from submission to reaping.
 * The loops run in bpf_loop (5.17+): without it, AIO is not counted.
 */
#define IOCB_CMD_PREAD 0
#define IOCB_CMD_PWRITE 1
#define IOCB_CMD_FSYNC 2
#define IOCB_CMD_FDSYNC 3
#define IOCB_CMD_PREADV 7
#define IOCB_CMD_PWRITEV 8

/* iocbs of one io_submit, events of one io_getevents looked at; the rest count as dropped. */
#define AIO_MAX_BATCH 1024

struct aio_key {
	__u64 mm;  /* the submitter's address space: iocb addresses are its */
	__u64 obj; /* the iocb's user address, io_event.obj */
};

struct aio_req {
	__u32 slot;
	__u32 op;  /* IOACCT_OP_READ, _WRITE or _FSYNC */
	__u64 mnt;
	__u64 t0;  /* io_submit's start */
	struct file_req f; /* for its file's record (issue 26): a regular file's, else zeros */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct aio_key);
	__type(value, struct aio_req);
} aio_reqs SEC(".maps");

/*
 * Where aio_record_one() builds an iocb's request: off the stack, which 6.1
 * adds up over the whole chain (an io_submit's program, aio_submit_enter(),
 * this callback, what it calls) against 512 bytes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct aio_req);
} aioscratch SEC(".maps");

/* The uapi's struct iocb from aio_lio_opcode on (offset 16), and struct io_event: a stable ABI. */
#define AIO_IOCB_OPCODE_OFF 16
struct aio_iocb_op {
	__u16 opcode;
	__s16 reqprio;
	__u32 fildes;
	__u64 buf;
	__u64 nbytes; /* PREADV, PWRITEV: the number of iovecs */
	__s64 offset;
};

/*
 * The page-cache view of an io_submit: the byte ranges its read and its
 * write iocbs ask of each file, so that a folio added meanwhile is a read's
 * miss (inside the reads' range) or read ahead (outside both), and a folio
 * a write creates (inside the writes' range only) no miss, as for write(2).
 * Keyed by task and inode; `gen` is the io_submit's start time (the task's
 * pending call's ts), so a range of an earlier call is never taken for this
 * one's.
 */
struct aio_range_key {
	__u64 task;
	__u64 inode;
};

struct aio_range {
	__u64 gen;
	__u64 lo, hi;   /* what its reads ask for; lo == hi: none */
	__u64 wlo, whi; /* what its writes write; wlo == whi: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct aio_range_key);
	__type(value, struct aio_range);
} aio_ranges SEC(".maps");

struct aio_event {
	__u64 data;
	__u64 obj;
	__s64 res;
	__s64 res2;
};

/* What a bpf_loop callback over an io_submit's iocbs or an io_getevents' events works on. */
struct aio_walk {
	__u64 uptr;  /* the user's array of iocb pointers, or of events */
	__u64 mm;
	__u64 now;
	__u32 slot;
	__u32 first; /* index of the first element */
	__u32 done;  /* elements read */
	__u32 lost;  /* events that could not be read */
	__s32 err;   /* io_submit's error: its first iocb's */
	__s32 rank;  /* the submitter's (ioacct_task_rank()) */
};

static __always_inline void count_drops(__u32 slot, __u32 n)
{
	struct ioacct_drop_val *d = bpf_map_lookup_elem(&dropped, &slot);

	if (d)
		d->events += n;
}

/* The op an iocb's opcode is counted as, -1 for none (IOCB_CMD_POLL, IOCB_CMD_NOOP). */
static __always_inline int aio_op(__u16 opcode)
{
	switch (opcode) {
	case IOCB_CMD_PREAD:
	case IOCB_CMD_PREADV:
		return IOACCT_OP_READ;
	case IOCB_CMD_PWRITE:
	case IOCB_CMD_PWRITEV:
		return IOACCT_OP_WRITE;
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		return IOACCT_OP_FSYNC;
	default:
		return -1;
	}
}

/* Widens the range the current io_submit (gen) reads or writes of f's inode by an iocb's. */
static __noinline void aio_range_add(struct task_struct *task, struct file *f,
				     const struct aio_iocb_op *io, __u64 gen, bool write)
{
	struct aio_range_key k = { .task = (__u64)task };
	struct aio_range r = { .gen = gen }, *old;
	__u64 lo, hi, *rlo, *rhi;

	if (!f || !io)
		return;
	k.inode = (__u64)BPF_CORE_READ(f, f_inode);
	lo = io->offset < 0 ? 0 : io->offset;
	/* A vector's length is not read: every byte from its offset on. */
	hi = io->opcode == IOCB_CMD_PREADV || io->opcode == IOCB_CMD_PWRITEV ? ~0ULL : lo + io->nbytes;
	old = bpf_map_lookup_elem(&aio_ranges, &k);
	if (old && old->gen == gen)
		r = *old;
	rlo = write ? &r.wlo : &r.lo;
	rhi = write ? &r.whi : &r.hi;
	if (*rlo == *rhi) {
		*rlo = lo;
		*rhi = hi;
	} else {
		*rlo = *rlo < lo ? *rlo : lo;
		*rhi = *rhi > hi ? *rhi : hi;
	}
	bpf_map_update_elem(&aio_ranges, &k, &r, BPF_ANY);
}

/* io_submit's start: records iocb i; stops at the first that cannot be read. */
static long aio_record_one(__u64 i, void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct aio_walk *w = ctx;
	struct aio_key k = { .mm = w->mm };
	__u32 zero = 0;
	struct aio_req *r = bpf_map_lookup_elem(&aioscratch, &zero);
	struct file_info fi = {};
	struct aio_iocb_op io;
	__u64 iocb = 0;
	struct file *f;
	int op;

	if (!r)
		return 1;
	__builtin_memset(r, 0, sizeof(*r));
	r->slot = w->slot;
	r->t0 = w->now;
	if (bpf_probe_read_user(&iocb, sizeof(iocb), (void *)(w->uptr + i * sizeof(iocb))) ||
	    bpf_probe_read_user(&io, sizeof(io), (void *)(iocb + AIO_IOCB_OPCODE_OFF)))
		return 1;
	w->done = i + 1;
	k.obj = iocb;
	op = aio_op(io.opcode);
	f = fd_file(task, (long)io.fildes);
	/*
	 * Only file-system I/O, as for system calls; an fsync of a directory
	 * too. An iocb not counted forgets what its address meant before (an
	 * iocb of a process that had this mm before and never reaped it).
	 */
	if (op < 0 ||
	    file_info(f, bpf_task_storage_get(&tasks, task, 0, 0), &fi) ||
	    (fi.type != S_IFREG && (op != IOACCT_OP_FSYNC || fi.type != S_IFDIR))) {
		bpf_map_delete_elem(&aio_reqs, &k);
		return 0;
	}
	r->mnt = fi.mnt;
	r->op = op;
	if (file_records && fi.type == S_IFREG && !file_id_of((__u64)f, &r->f.id)) {
		r->f.off = io.offset;
		r->f.rank = w->rank;
		r->f.op = op;
		r->f.slot = w->slot;
		r->f.mnt = fi.mnt;
	}
	if (bpf_map_update_elem(&aio_reqs, &k, r, BPF_ANY)) {
		count_drops(w->slot, 1);
		return 0;
	}
	if (op != IOACCT_OP_FSYNC)
		aio_range_add(task, f, &io, w->now, op == IOACCT_OP_WRITE);
	return 0;
}

/*
 * io_submit's end: iocb first + i was not taken. The call's error, when it
 * failed, is the first iocb's: a failed call of its kind.
 */
static long aio_forget_one(__u64 i, void *ctx)
{
	struct aio_walk *w = ctx;
	struct aio_key k = { .mm = w->mm };
	struct aio_req *r;

	if (bpf_probe_read_user(&k.obj, sizeof(k.obj), (void *)(w->uptr + (w->first + i) * 8)))
		return 1;
	if (i == 0 && w->err) {
		r = bpf_map_lookup_elem(&aio_reqs, &k);
		if (r) {
			struct ioacct_stat_key where = { .slot = r->slot, .mnt_id = r->mnt, .op = r->op };

			account(&where, w->now, w->now > r->t0 ? w->now - r->t0 : 0, w->err);
		}
	}
	bpf_map_delete_elem(&aio_reqs, &k);
	return 0;
}

/* io_getevents' end: event i reaped; its iocb counted if it was recorded. */
static long aio_reap_one(__u64 i, void *ctx)
{
	struct aio_walk *w = ctx;
	struct aio_key k = { .mm = w->mm };
	/*
	 * The event, then the counters' key in its place: this callback is a
	 * frame of sys_exit's deepest chain (down to note_mount()), which 6.1's
	 * verifier holds to 512 bytes in frames rounded up to 32.
	 */
	union {
		struct aio_event ev;
		struct ioacct_stat_key where;
	} u;
	struct aio_req *r;
	__s64 res;

	if (bpf_probe_read_user(&u.ev, sizeof(u.ev), (void *)(w->uptr + i * sizeof(u.ev)))) {
		w->lost++;
		return 0;
	}
	k.obj = u.ev.obj;
	res = u.ev.res;
	r = bpf_map_lookup_elem(&aio_reqs, &k);
	if (!r)
		return 0;
	u.where = (struct ioacct_stat_key){ .slot = r->slot, .mnt_id = r->mnt, .op = r->op };
	account(&u.where, w->now, w->now > r->t0 ? w->now - r->t0 : 0, res);
	if (file_records)
		ioacct_file_req(&r->f, res, w->now, w->now > r->t0 ? w->now - r->t0 : 0);
	bpf_map_delete_elem(&aio_reqs, &k);
	return 0;
}

/*
 * io_submit's start: records up to AIO_MAX_BATCH iocbs; t->aio_n says how
 * many were looked at. t->ts is the call's start: the read ranges' gen.
 */
static __noinline void aio_submit_enter(struct task_ent *t, __u64 mm, long nr, __u64 uptr, __u32 slot)
{
	struct aio_walk w = { .uptr = uptr, .mm = mm, .now = bpf_ktime_get_ns(), .slot = slot };

	if (!t)
		return;
	t->ts = w.now;
	t->aio_n = 0;
	if (file_records)
		ioacct_task_rank(t);
	w.rank = t->rank;
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop) || nr <= 0 || !mm)
		return;
	bpf_loop(nr < AIO_MAX_BATCH ? nr : AIO_MAX_BATCH, aio_record_one, &w, 0);
	t->aio_n = w.done;
}

/* The end of io_submit (AIO_SUBMIT) or io_getevents (AIO_REAP) with ret. */
static __noinline void aio_exit(struct task_ent *t, __u64 mm, long ret, __u64 now)
{
	struct aio_walk w = { .mm = mm, .now = now };
	__u32 n, slot;

	if (!t || !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop) || !mm)
		return;
	w.uptr = t->aio_uptr;
	slot = t->pslot;
	n = t->aio_n;
	if (t->kind == IOACCT_SK_AIO_REAP) {
		if (ret <= 0)
			return;
		n = ret < AIO_MAX_BATCH ? ret : AIO_MAX_BATCH;
		bpf_loop(n, aio_reap_one, &w, 0);
		if (ret > n || w.lost)
			count_drops(slot, ret - n + w.lost);
		return;
	}
	/* io_submit: ret iocbs taken, the first n looked at. */
	if (ret < 0) {
		w.err = (__s32)ret;
		ret = 0;
	}
	if (ret > n)
		count_drops(slot, ret - n);
	if (ret < n) {
		w.first = ret;
		bpf_loop(n - ret, aio_forget_one, &w, 0);
	}
}
