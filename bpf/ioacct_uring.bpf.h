/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io_uring: a request's job and op noted at submission, counted at its
 * completion for the task that submitted it.
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_pcache.bpf.h, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

/*
 * ---- io_uring (issue 14) --------------------------------------------------
 *
 * A request is counted when it completes, by the job of the task that
 * SUBMITTED it, whoever completes it (the submitter's task work, an io-wq
 * worker, the SQPOLL thread): at submission the watched task's slot is kept
 * by the request's address (uring_reqs); at completion the request's file
 * gives the mount (a fixed file is only assigned when the request is issued)
 * and the result its bytes or error. Reads and writes of every read/write
 * opcode, fsyncs, opens, statx, unlinks, mkdirs and renames are counted as
 * those of system calls are; every request also as one io_uring_op on its
 * file's mount (0 without a file). io_uring_enter is in no syscall table:
 * nothing twice. On when the kernel's BTF has a submit tracepoint
 * (io_uring_submit_req, or io_uring_submit_sqe before 6.4) and
 * io_uring_complete in one of its two forms (daemon/probes.c, the "uring"
 * view).
 *
 * The path-based requests (opens, statx, unlink, mkdir, rename) have no
 * file: their mount is resolved at submission, in the submitter's context,
 * from the path and directory fd the kernel prepared before the tracepoint
 * (io_init_req() runs the opcode's prep). An open's mount is then its new
 * fd's file at completion, which also says whether it created the file:
 * io-wq workers share the submitter's file table. A direct descriptor
 * (file_index) has no fd: its open keeps the path's mount and is never a
 * create.
 *
 * Only io_uring_ops: SPLICE and TEE (their second file is not looked at),
 * FADVISE and MADVISE (no advice class), and the opcodes without a watched
 * system call (FALLOCATE, FTRUNCATE, SYNC_FILE_RANGE, LINKAT, SYMLINKAT,
 * the xattr ones). READ_MULTISHOT reads pollable files only, never a
 * regular file's bytes.
 */
struct uring_req {
	__u64 mnt;   /* URING_SUBMIT_MNT: the mount resolved at submission */
	__u64 t0;
	__u32 slot;
	__u16 op;    /* IOACCT_OP_READ, _WRITE, _FSYNC, _OPEN, ..., or _IO_URING_OP alone */
	__u16 flags; /* URING_* */
	__u64 inode; /* a read's or write's file, whose uring_ranges entry it holds; 0 if none */
	struct file_req f; /* for its file's record (issue 26): the file is filled at completion */
};

#define URING_SUBMIT_MNT 1 /* no file at completion: mnt is the request's mount */
#define URING_DIRECT 2     /* an open into a direct descriptor: res is no fd */

/* UAPI opcode numbers newer than some kernels whose vmlinux.h may build this. */
#define URING_OP_READV_FIXED 60
#define URING_OP_WRITEV_FIXED 61

/*
 * The prepared data of the path-based opcodes (io_uring/openclose.c,
 * statx.c, fs.c): the start of struct io_kiocb (io_kiocb_to_cmd()), only the
 * fields read here, matched by name on the running kernel. On every kernel
 * with io_uring_submit_req their paths are struct filename, copied in by
 * the prep.
 */
struct io_open___ioacct {
	int dfd;
	__u32 file_slot; /* 5.15 */
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_statx___ioacct {
	int dfd;
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_unlink___ioacct {
	int dfd;
	int flags;
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_mkdir___ioacct {
	int dfd;
	struct filename *filename;
} __attribute__((preserve_access_index));

struct io_rename___ioacct {
	int old_dfd;
	struct filename *oldpath;
} __attribute__((preserve_access_index));

struct io_close___ioacct {
	int fd;
	__u32 file_slot;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct uring_req);
} uring_reqs SEC(".maps");

/* The mount of a request's path (kpath_mnt()), 0 when it cannot be read. */
static __always_inline __u64 uring_path_mnt(struct task_struct *task, int dfd, struct filename *fn)
{
	__s64 m = kpath_mnt(task, dfd, fn ? BPF_CORE_READ(fn, name) : NULL);

	return m > 0 ? (__u64)m : 0;
}

/*
 * What a path-based or close request is, and on which mount: r->op and
 * r->mnt. Returns false when it is not file-system I/O (the close of a
 * pipe or socket), not to be counted.
 */
static __noinline bool uring_submit_meta(struct task_struct *task, struct io_kiocb *req,
					 __u32 opcode, struct uring_req *r)
{
	r->flags = URING_SUBMIT_MNT;
	switch (opcode) {
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2: {
		struct io_open___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = IOACCT_OP_OPEN;
		if (bpf_core_field_exists(o->file_slot) && BPF_CORE_READ(o, file_slot))
			r->flags |= URING_DIRECT;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_STATX: {
		struct io_statx___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = IOACCT_OP_STAT;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_UNLINKAT: {
		struct io_unlink___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = BPF_CORE_READ(o, flags) & AT_REMOVEDIR ? IOACCT_OP_RMDIR : IOACCT_OP_UNLINK;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_MKDIRAT: {
		struct io_mkdir___ioacct *o = (void *)req;

		if (!bpf_core_field_exists(o->filename))
			break;
		r->op = IOACCT_OP_MKDIR;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, dfd), BPF_CORE_READ(o, filename));
		break;
	}
	case IORING_OP_RENAMEAT: {
		struct io_rename___ioacct *o = (void *)req;

		/* The source's mount, as for renameat(2). */
		if (!bpf_core_field_exists(o->oldpath))
			break;
		r->op = IOACCT_OP_RENAME;
		r->mnt = uring_path_mnt(task, BPF_CORE_READ(o, old_dfd), BPF_CORE_READ(o, oldpath));
		break;
	}
	case IORING_OP_CLOSE: {
		/* No close op (nor for close(2)): an io_uring_op on the file's mount, found before it goes. */
		struct io_close___ioacct *o = (void *)req;
		struct file_info fi = {};
		struct file *f;

		if (!bpf_core_field_exists(o->fd) ||
		    (bpf_core_field_exists(o->file_slot) && BPF_CORE_READ(o, file_slot)))
			break;
		f = fd_file(task, BPF_CORE_READ(o, fd));
		if (f && (file_info(f, NULL, &fi) || (fi.type != S_IFREG && fi.type != S_IFDIR)))
			return false;
		r->mnt = fi.mnt;
		break;
	}
	default:
		r->flags = 0;
		break;
	}
	return true;
}

/* A request submitted: its job and what it does, kept until it completes. */
/* The parts of a read request's prepared data read here (io_uring/rw.c). */
struct io_rw___ioacct {
	struct kiocb kiocb;
	__u32 len; /* bytes, or the vector's length (READV) */
} __attribute__((preserve_access_index));

struct io_cqe___ioacct {
	int fd;
} __attribute__((preserve_access_index));

struct io_kiocb___ioacct {
	struct io_cqe___ioacct cqe;
} __attribute__((preserve_access_index));

#define URING_REQ_F_FIXED_FILE 1 /* IOSQE_FIXED_FILE, the first of req->flags */

/*
 * At a read's or a write's submission: adds its byte range to its file's
 * uring_ranges entry and returns the file's inode, 0 when it has none (a
 * fixed file, not a regular file, a kernel without req->cqe.fd).
 */
static __noinline __u64 uring_range_add(struct task_struct *task, struct io_kiocb *req, __u32 opcode,
					__u32 slot, bool write)
{
	struct io_rw___ioacct *rw = (void *)req;
	struct uring_range_key k = { .slot = slot };
	struct uring_range nr = { .pending = 1 }, *old;
	struct file_info fi = {};
	struct file *f;
	__s64 lo;
	__u64 hi;

	if (!bpf_core_field_exists(((struct io_kiocb___ioacct *)req)->cqe.fd) ||
	    (BPF_CORE_READ(req, flags) & URING_REQ_F_FIXED_FILE))
		return 0;
	f = fd_file(task, BPF_CORE_READ((struct io_kiocb___ioacct *)req, cqe.fd));
	if (!f || file_info(f, NULL, &fi) || fi.type != S_IFREG)
		return 0;
	k.inode = (__u64)BPF_CORE_READ(f, f_inode);
	lo = BPF_CORE_READ(rw, kiocb.ki_pos);
	if (lo < 0) /* -1: the file position */
		lo = BPF_CORE_READ(f, f_pos);
	/* A vectored request's length is its iovec count: its range is the rest of the file. */
	hi = opcode == IORING_OP_READV || opcode == URING_OP_READV_FIXED || opcode == IORING_OP_WRITEV ||
	     opcode == URING_OP_WRITEV_FIXED ? ~0ULL : (__u64)lo + BPF_CORE_READ(rw, len);
	old = bpf_map_lookup_elem(&uring_ranges, &k);
	if (old && write) {
		if (!old->wpending || (__u64)lo < old->wlo)
			old->wlo = lo;
		if (!old->wpending || hi > old->whi)
			old->whi = hi;
		__sync_fetch_and_add(&old->wpending, 1);
		return k.inode;
	}
	if (old) {
		if (!old->pending || (__u64)lo < old->lo)
			old->lo = lo;
		if (!old->pending || hi > old->hi)
			old->hi = hi;
		__sync_fetch_and_add(&old->pending, 1);
		return k.inode;
	}
	if (write) {
		nr.pending = 0;
		nr.wpending = 1;
		nr.wlo = lo;
		nr.whi = hi;
	} else {
		nr.lo = lo;
		nr.hi = hi;
	}
	return bpf_map_update_elem(&uring_ranges, &k, &nr, BPF_ANY) ? 0 : k.inode;
}

/*
 * A read or write request of the file is over: its range goes with the last
 * one of its kind pending, the entry with the last of both.
 */
__noinline int uring_range_put(__u32 slot, __u64 inode, bool write)
{
	struct uring_range_key k = { .slot = slot, .inode = inode };
	struct uring_range *r = bpf_map_lookup_elem(&uring_ranges, &k);

	if (!r)
		return 0;
	if (__sync_fetch_and_add(write ? &r->wpending : &r->pending, -1) <= 1 &&
	    !(write ? r->pending : r->wpending))
		bpf_map_delete_elem(&uring_ranges, &k);
	return 0;
}

/*
 * What a request's file record needs from its submitter: its rank (an
 * SQPOLL thread has its creator's address space, so its environment).
 */
static __noinline void uring_file_submit(struct task_struct *task, struct uring_req *r)
{
	struct task_ent *t;

	if (!r || !task)
		return;
	r->f.op = r->op;
	r->f.slot = r->slot;
	r->f.rank = -1;
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return;
	ioacct_task_rank(t);
	r->f.rank = t->rank;
}

static __always_inline int uring_submit(struct io_kiocb *req)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task), opcode;
	struct uring_req r = { .slot = slot, .op = IOACCT_OP_IO_URING_OP };
	__u64 key = (__u64)req;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	opcode = BPF_CORE_READ(req, opcode);
	switch (opcode) {
	case IORING_OP_READV:
	case IORING_OP_READ_FIXED:
	case IORING_OP_READ:
	case URING_OP_READV_FIXED:
		r.op = IOACCT_OP_READ;
		break;
	case IORING_OP_WRITEV:
	case IORING_OP_WRITE_FIXED:
	case IORING_OP_WRITE:
	case URING_OP_WRITEV_FIXED:
		r.op = IOACCT_OP_WRITE;
		break;
	case IORING_OP_FSYNC:
		r.op = IOACCT_OP_FSYNC;
		break;
	default:
		if (!uring_submit_meta(task, req, opcode, &r))
			return 0;
		break;
	}
	r.t0 = bpf_ktime_get_ns();
	if (r.op == IOACCT_OP_READ || r.op == IOACCT_OP_WRITE) {
		r.inode = uring_range_add(task, req, opcode, slot, r.op == IOACCT_OP_WRITE);
		r.f.off = BPF_CORE_READ((struct io_rw___ioacct *)req, kiocb.ki_pos);
	}
	if (file_records)
		uring_file_submit(task, &r);
	if (bpf_map_update_elem(&uring_reqs, &key, &r, BPF_ANY) && r.inode)
		uring_range_put(slot, r.inode, r.op == IOACCT_OP_WRITE);
	return 0;
}

/* io_uring_submit_req(req), since 6.4. */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(ioacct_pc_uring_submit, struct io_kiocb *req)
{
	return uring_submit(req);
}

/* io_uring_submit_sqe(req, force_nonblock), its name until 6.3 (Debian's 6.1). */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(ioacct_pc_uring_submit_sqe, struct io_kiocb *req, bool force_nonblock)
{
	return uring_submit(req);
}

/*
 * The file a successful open request installed as fd `fd` in the current
 * task's table (the submitter's: see above): its mount in *mnt, and whether
 * the open created it.
 */
static __noinline bool uring_opened(long fd, __u64 *mnt)
{
	struct file *f = fd_file(bpf_get_current_task_btf(), fd);
	struct ioacct_state *st = get_state();
	struct file_info fi = {};

	if (!f || !mnt || file_info(f, NULL, &fi))
		return false;
	*mnt = fi.mnt;
	return st && st->fmode_created && (BPF_CORE_READ(f, f_mode) & st->fmode_created);
}

/*
 * A request on regular file f (a kernel address; an open's new file)
 * completed: its file's record. A read or write at the file position
 * (offset -1) was at f_pos less what it moved.
 */
static __noinline int uring_file_done(struct uring_req *r, __u64 f, __u64 mnt, long res, __u64 now)
{
	__u64 inode;

	if (!r || !f || res < 0 || file_id_of(f, &r->f.id))
		return 0;
	inode = (__u64)KREAD(struct file, f, f_inode);
	if ((KREAD(struct inode, inode, i_mode) & S_IFMT) != S_IFREG)
		return 0;
	r->f.mnt = mnt;
	if (r->f.off < 0)
		r->f.off = (__s64)KREAD(struct file, f, f_pos) - res;
	ioacct_file_req(&r->f, res, now, now > r->t0 ? now - r->t0 : 0);
	return 0;
}

/*
 * A request completed with result res: counted for the job that submitted
 * it, whatever task completes it. Every form of the io_uring_complete
 * tracepoint calls this.
 */
static __always_inline int uring_done(void *req, long res)
{
	__u64 key = (__u64)req, now, dur;
	struct ioacct_stat_key where = { 0 };
	struct file_info fi = { 0 };
	struct uring_req *r;
	bool created = false;
	struct file *f;
	__u32 op;

	r = bpf_map_lookup_elem(&uring_reqs, &key);
	if (!r)
		return 0;
	now = bpf_ktime_get_ns();
	dur = now > r->t0 ? now - r->t0 : 0;
	op = r->op;
	where.slot = r->slot;
	if (r->inode)
		uring_range_put(r->slot, r->inode, r->op == IOACCT_OP_WRITE);
	if (r->flags & URING_SUBMIT_MNT) {
		where.mnt_id = r->mnt;
		if (op == IOACCT_OP_OPEN && res >= 0 && !(r->flags & URING_DIRECT)) {
			created = uring_opened(res, &where.mnt_id);
			if (file_records)
				uring_file_done(r, (__u64)fd_file(bpf_get_current_task_btf(), res),
						where.mnt_id, res, now);
		}
	} else {
		f = BPF_CORE_READ((struct io_kiocb *)req, file);
		/* Only file-system I/O, as for system calls: pipes, sockets and devices are not. */
		if (f && (file_info(f, NULL, &fi) || (fi.type != S_IFREG && fi.type != S_IFDIR))) {
			bpf_map_delete_elem(&uring_reqs, &key);
			return 0;
		}
		if (fi.type != S_IFREG && op != IOACCT_OP_FSYNC)
			op = IOACCT_OP_IO_URING_OP;
		where.mnt_id = fi.mnt;
		if (fi.type == S_IFREG && file_records)
			uring_file_done(r, (__u64)f, fi.mnt, res, now);
	}
	bpf_map_delete_elem(&uring_reqs, &key);
	if (op != IOACCT_OP_IO_URING_OP) {
		where.op = op;
		account(&where, now, dur, res);
	}
	if (created) {
		where.op = IOACCT_OP_CREATE;
		account(&where, now, 0, 0);
	}
	where.op = IOACCT_OP_IO_URING_OP;
	view_add(&where, 1, 0, -1);
	return 0;
}

/* io_uring_complete(ctx, req, cqe), as on 6.18: the result is in the cqe. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(ioacct_pc_uring_complete, struct io_ring_ctx *rctx, void *req, struct io_uring_cqe *cqe)
{
	return uring_done(req, BPF_CORE_READ(cqe, res));
}

/* io_uring_complete(ctx, req, user_data, res, cflags, extra1, extra2), as on 6.1 and 6.12. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(ioacct_pc_uring_complete7, void *rctx, void *req, __u64 user_data, int res, unsigned int cflags,
	     __u64 extra1, __u64 extra2)
{
	return uring_done(req, res);
}
