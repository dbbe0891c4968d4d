/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page-cache and mmap views' programs: page-cache misses, faults on
 * file mappings, fault-around and readahead, each on a tracepoint or on
 * the kernel function behind it.
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_syscalls.bpf.h, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

/*
 * ---- The page-cache and mmap views: programs (issue 14) ------------------
 * One body per event, with thin programs on it: tp_btf where the running
 * kernel's BTF has the tracepoint, else fentry/fexit or kprobe on the kernel
 * function that fires it (daemon/probes.c picks one per event; "views" in
 * ioacctd status); none is needed for the rest to work.
 */

/* The current task's slot for a page-cache event; IOACCT_SLOT_NONE at once when nothing is watched. */
static __always_inline __u32 view_slot(struct task_struct *task)
{
	struct ioacct_state *st = get_state();
	__u32 slot;

	if (!st || !st->nactive)
		return IOACCT_SLOT_NONE;
	slot = current_slot(task, st);
	return slot == IOACCT_SLOT_CALIB ? IOACCT_SLOT_NONE : slot;
}

/*
 * The mount a watched task reached an inode through: its last file's, or
 * one it opened (inomnt), while that mount still is (its struct has its key)
 * and is of the task's namespace (see inomnt). A file it never opened (its
 * own executable and libraries, an fd it inherited) gets the mount of the
 * task's root or working directory when that is of the same file system;
 * else 0, unknown.
 */
static __noinline __u64 inode_mnt(struct task_ent *t, __u64 inode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ino_mnt *m, v = { 0 };
	struct vfsmount *root, *pwd;
	struct super_block *sb;
	__u64 vfsmnt;

	if (t && t->c_inode == inode)
		return t->c_mnt;
	m = bpf_map_lookup_elem(&inomnt, &inode);
	/*
	 * m->vfsmnt read here, not inside KREAD(): where KREAD() is
	 * BPF_CORE_READ() (6.1), its argument is under preserve_access_index,
	 * and a field of this program's own struct is no kernel type to
	 * relocate (6.1 refused ioacct_pc_add: "failed to resolve CO-RE
	 * relocation ... struct ino_mnt.vfsmnt").
	 */
	vfsmnt = m ? m->vfsmnt : 0;
	if (vfsmnt && mount_key((struct vfsmount *)vfsmnt) == m->mnt &&
	    KREAD(struct mount, vfsmnt - bpf_core_field_offset(struct mount, mnt), mnt_ns) ==
		    BPF_CORE_READ(task, nsproxy, mnt_ns))
		return m->mnt;
	if (!inode)
		return 0;
	sb = BPF_CORE_READ((struct inode *)inode, i_sb);
	root = BPF_CORE_READ(task, fs, root.mnt);
	pwd = BPF_CORE_READ(task, fs, pwd.mnt);
	if (root && BPF_CORE_READ(root, mnt_sb) == sb)
		v.vfsmnt = (__u64)root;
	else if (pwd && BPF_CORE_READ(pwd, mnt_sb) == sb)
		v.vfsmnt = (__u64)pwd;
	v.mnt = mount_key((struct vfsmount *)v.vfsmnt);
	if (v.mnt)
		bpf_map_update_elem(&inomnt, &inode, &v, BPF_ANY);
	return v.mnt;
}

/* Adds calls and bytes to where's (slot, mount, op) in the current bin; hist: a size-histogram index or -1. */
__noinline int view_add(const struct ioacct_stat_key *where, __u64 calls, __u64 bytes, int hist)
{
	struct ioacct_stat_key key;
	struct ioacct_stat_val *v;

	if (!where)
		return 0;
	key = *where;
	v = stat_get(&key, bpf_ktime_get_ns(), bytes);
	if (!v)
		return 0;
	v->calls += calls;
	v->bytes += bytes;
	if (hist >= 0 && hist < IOACCT_NR_SIZE_BINS)
		v->size[hist]++;
	return 0;
}

#define VIEW_ADD(s_, m_, o_, calls, bytes, hist)                                             \
	do {                                                                                 \
		struct ioacct_stat_key w_ = { .slot = (s_), .mnt_id = (m_), .op = (o_) };    \
		view_add(&w_, (calls), (bytes), (hist));                                     \
	} while (0)

/* Before 6.1's folio->_nr_pages: the field of the same meaning. */
struct folio___old {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_pages(struct folio *folio)
{
	__u64 flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* flags is the first word on every version */
	if (!(flags & (1ULL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	if (bpf_core_field_exists(((struct folio___old *)folio)->_folio_nr_pages))
		return BPF_CORE_READ((struct folio___old *)folio, _folio_nr_pages);
	return 1;
}

/*
 * A folio added to the page cache of a regular file while a watched task
 * reads it (a read call, or a page fault when no call is pending): a miss,
 * brought in from storage. Pages outside the range the read asked for were
 * read ahead. Writes (a page created to be written) and the other calls are
 * not misses; nor are pages brought in by other tasks (kswapd, a
 * neighbour's readahead) for the job.
 */
/*
 * The page-cache view of io_uring reads and writes: the byte ranges the
 * job's pending read and write requests ask of each file, by (slot, inode),
 * with how many of each are pending. A folio added while no system call is
 * pending (in io_uring_enter, or in an io-wq worker, which has no call of
 * its own) is a read's miss inside the read range and read ahead outside
 * it; a folio a write creates (inside the write range, outside the read
 * range) is no miss, as for write(2). Kept from submission to completion
 * (uring_submit(), uring_done()).
 */
struct uring_range_key {
	__u32 slot;
	__u32 pad;
	__u64 inode;
};

struct uring_range {
	__u64 lo, hi;   /* reads */
	__u64 pending;
	__u64 wlo, whi; /* writes */
	__u64 wpending;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct uring_range_key);
	__type(value, struct uring_range);
} uring_ranges SEC(".maps");

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ioacct_pc_add, struct folio *folio)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 inode, pages, lo, hi, first, end, inside = 0, wlo = 0, whi = 0;
	__u32 slot = view_slot(task);
	__u64 mnt;
	struct file_page fp = {};
	struct task_ent *t;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	inode = (__u64)BPF_CORE_READ(folio, mapping, host);
	if (!inode || (BPF_CORE_READ((struct inode *)inode, i_mode) & S_IFMT) != S_IFREG)
		return 0;
	if (t->op) {
		/* fadvise(WILLNEED) and madvise(WILLNEED) read ahead: every page of theirs is. */
		if (t->kind == IOACCT_SK_FADVISE || t->kind == IOACCT_SK_MADVISE)
			lo = hi = 0;
		else if (t->op - 1 == IOACCT_OP_READ && t->kind == IOACCT_SK_FD_DATA)
			lo = t->rq_lo, hi = t->rq_hi;
		/* io_submit: the range its reads ask of this file, if any (aio_ranges). */
		else if (t->kind == IOACCT_SK_AIO_SUBMIT) {
			struct aio_range_key k = { .task = (__u64)task, .inode = inode };
			struct aio_range *r = bpf_map_lookup_elem(&aio_ranges, &k);

			if (!r || r->gen != t->ts)
				return 0;
			lo = r->lo;
			hi = r->hi;
			wlo = r->wlo;
			whi = r->whi;
		} else {
			return 0;
		}
	} else {
		/* No call pending: an io_uring request's (uring_ranges), else the last fault's page. */
		struct uring_range_key uk = { .slot = slot, .inode = inode };
		struct uring_range *ur = bpf_map_lookup_elem(&uring_ranges, &uk);

		lo = ur && ur->pending ? ur->lo : t->rq_lo;
		hi = ur && ur->pending ? ur->hi : t->rq_hi;
		if (ur && ur->wpending) {
			wlo = ur->wlo;
			whi = ur->whi;
		}
	}
	pages = folio_pages(folio);
	first = BPF_CORE_READ(folio, index) << page_shift;
	end = first + (pages << page_shift);
	/*
	 * A folio an io_submit's or io_uring's write touches and none of their
	 * reads asks for: no miss, as for write(2).
	 */
	if (wlo < whi && whi > first && wlo < end && !(hi > first && lo < end))
		return 0;
	mnt = inode_mnt(t, inode);
	if (hi > first && lo < end)
		inside = (hi < end ? hi : end) - (lo > first ? lo : first);
	VIEW_ADD(slot, mnt, IOACCT_OP_CACHE_FILL, 1, pages << page_shift, -1);
	/* The file's record gets the same bytes (issue 26). */
	fp.inode = inode;
	fp.bytes = pages << page_shift;
	fp.slot = slot;
	fp.mnt = mnt;
	ioacct_file_page(t, &fp);
	if (inside < (pages << page_shift))
		VIEW_ADD(slot, mnt, IOACCT_OP_READAHEAD, 0, (pages << page_shift) - inside, -1);
	return 0;
}

/*
 * A page fault on a file mapping that found no page mapped: one fault; the
 * page it wants is the request of the page-cache view until the next fault
 * or call. What it maps is counted where it is mapped (pc_map()).
 */
static __always_inline int pc_fault(struct address_space *mapping, unsigned long index)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct task_ent *t;
	__u64 inode;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	inode = (__u64)BPF_CORE_READ(mapping, host);
	/* A fault inside a read (its buffer is a mapping) leaves the read's range alone. */
	if (!t->op) {
		t->rq_lo = (__u64)index << page_shift;
		t->rq_hi = t->rq_lo + (1ULL << page_shift);
	}
	VIEW_ADD(slot, inode_mnt(t, inode), IOACCT_OP_MMAP_FAULT, 1, 0, -1);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(ioacct_pc_fault, struct address_space *mapping, unsigned long index)
{
	return pc_fault(mapping, index);
}

/*
 * Where the kernel has no mm_filemap_fault (Debian's 6.1): filemap_fault(vmf)
 * itself, which fires the tracepoint once it has found the page inside the
 * file (a fault beyond its end is SIGBUS, not counted).
 */
static __always_inline int pc_fault_fn(struct vm_fault *vmf)
{
	struct address_space *mapping = BPF_CORE_READ(vmf, vma, vm_file, f_mapping);
	unsigned long index = BPF_CORE_READ(vmf, pgoff);
	__u64 size = BPF_CORE_READ(mapping, host, i_size);

	if (!mapping || index >= (size + (1ULL << page_shift) - 1) >> page_shift)
		return 0;
	return pc_fault(mapping, index);
}

SEC("fentry/filemap_fault")
int BPF_PROG(ioacct_pc_fault_fe, struct vm_fault *vmf)
{
	return pc_fault_fn(vmf);
}

SEC("kprobe/filemap_fault")
int BPF_KPROBE(ioacct_pc_fault_kp, struct vm_fault *vmf)
{
	return pc_fault_fn(vmf);
}

/*
 * Fault-around: a fault served from pages already in the page cache, which
 * maps the pages of [start, last] that are there; counted as one fault. Its
 * range is only an upper bound of what it mapped (issue 29): the pages are
 * counted by pc_map().
 */
static __always_inline int pc_map_pages(struct address_space *mapping, unsigned long start,
					unsigned long last)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct task_ent *t;
	__u64 inode;

	if (slot == IOACCT_SLOT_NONE || last < start)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	inode = (__u64)BPF_CORE_READ(mapping, host);
	VIEW_ADD(slot, inode_mnt(t, inode), IOACCT_OP_MMAP_FAULT, 1, 0, -1);
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(ioacct_pc_map_pages, struct address_space *mapping, unsigned long start,
	     unsigned long last)
{
	return pc_map_pages(mapping, start, last);
}

/*
 * Without mm_filemap_map_pages: filemap_map_pages(vmf, start, end) on its
 * return. The kernel fires the tracepoint once it has found a page to map
 * and locked the page table, which leaves vmf->pte set (it is NULL when the
 * fault comes in): a call that found nothing is not counted.
 */
static __always_inline int pc_map_pages_fn(struct vm_fault *vmf, unsigned long start, unsigned long end)
{
	if (!BPF_CORE_READ(vmf, pte))
		return 0;
	return pc_map_pages(BPF_CORE_READ(vmf, vma, vm_file, f_mapping), start, end);
}

SEC("fexit/filemap_map_pages")
int BPF_PROG(ioacct_pc_map_pages_fx, struct vm_fault *vmf, unsigned long start, unsigned long end,
	     vm_fault_t ret)
{
	return pc_map_pages_fn(vmf, start, end);
}

/* A kretprobe sees no arguments: the kprobe keeps them, by thread. */
struct map_call {
	struct vm_fault *vmf;
	unsigned long start, end;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct map_call);
} map_calls SEC(".maps");

SEC("kprobe/filemap_map_pages")
int BPF_KPROBE(ioacct_pc_map_pages_kp, struct vm_fault *vmf, unsigned long start, unsigned long end)
{
	struct map_call c = { .vmf = vmf, .start = start, .end = end };
	__u64 id = bpf_get_current_pid_tgid();

	if (view_slot(bpf_get_current_task_btf()) == IOACCT_SLOT_NONE)
		return 0;
	bpf_map_update_elem(&map_calls, &id, &c, BPF_ANY);
	return 0;
}

SEC("kretprobe/filemap_map_pages")
int BPF_KRETPROBE(ioacct_pc_map_pages_kr)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct map_call *c = bpf_map_lookup_elem(&map_calls, &id);
	struct map_call call;

	if (!c)
		return 0;
	call = *c;
	bpf_map_delete_elem(&map_calls, &id);
	return pc_map_pages_fn(call.vmf, call.start, call.end);
}

/*
 * The bytes of mmap_fault (issue 29): the file pages a fault maps into the
 * job's address space, where the kernel maps them. Every PTE mapping of
 * file pages goes through set_pte_range(vmf, folio, page, nr, addr) since
 * 6.5 (finish_fault, and each run of fault-around in filemap_map_pages),
 * do_set_pte(vmf, page, addr) before, one page; a PMD mapping of a huge
 * folio through do_set_pmd(vmf, [folio,] page), which returns 0 when it
 * mapped it. The tracepoints of the faults see none of this: fault-around
 * gives a range it may not map, a large folio maps many pages at one
 * fault, a shmem PMD fault passes no filemap event. Only fentry/fexit or
 * kprobes reach these functions: where neither can, the job's views say
 * "mmap-nohook" and its reports say the bytes were not measured.
 *
 * Counted: pages of the file of a file mapping (vmf->vma->vm_file), not
 * the anonymous copy a write fault on a MAP_PRIVATE mapping makes; on the
 * mount the file was mapped from.
 */
static __always_inline int pc_map(struct vm_fault *vmf, struct page *page, __u64 bytes)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct file_page fp = {};
	struct task_ent *t;
	struct file *file;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	file = BPF_CORE_READ(vmf, vma, vm_file);
	/* The low bit of mapping marks an anonymous folio (a folio starts as its first page). */
	if (!file || ((__u64)BPF_CORE_READ(page, mapping) & 1))
		return 0;
	fp.mnt = mount_key(BPF_CORE_READ(file, f_path.mnt));
	VIEW_ADD(slot, fp.mnt, IOACCT_OP_MMAP_FAULT, 0, bytes, -1);
	/* And in the record of the mapped file (issue 26), of the task's rank. */
	t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	fp.file = (__u64)file;
	fp.bytes = bytes;
	fp.slot = slot;
	ioacct_file_page(t, &fp);
	return 0;
}

/* Bytes of a PMD mapping: a page table of pointers of 8 bytes, each to a page. */
#define PMD_MAP_BYTES (1ULL << (2 * page_shift - 3))

SEC("fentry/set_pte_range")
int BPF_PROG(ioacct_pc_pte_fe, struct vm_fault *vmf, struct folio *folio, struct page *page,
	     unsigned int nr)
{
	return pc_map(vmf, (struct page *)folio, (__u64)nr << page_shift);
}

SEC("kprobe/set_pte_range")
int BPF_KPROBE(ioacct_pc_pte_kp, struct vm_fault *vmf, struct folio *folio, struct page *page,
	       unsigned int nr)
{
	return pc_map(vmf, (struct page *)folio, (__u64)nr << page_shift);
}

SEC("fentry/do_set_pte")
int BPF_PROG(ioacct_pc_pte1_fe, struct vm_fault *vmf, struct page *page)
{
	return pc_map(vmf, page, 1ULL << page_shift);
}

SEC("kprobe/do_set_pte")
int BPF_KPROBE(ioacct_pc_pte1_kp, struct vm_fault *vmf, struct page *page)
{
	return pc_map(vmf, page, 1ULL << page_shift);
}

/* do_set_pmd(vmf, page) on older kernels, (vmf, folio, page) on newer: its return is read either way. */
SEC("fexit/do_set_pmd")
int BPF_PROG(ioacct_pc_pmd_fx, struct vm_fault *vmf, struct page *page)
{
	__u64 ret = 1;

	if (bpf_get_func_ret(ctx, &ret) || ret)
		return 0;
	return pc_map(vmf, page, PMD_MAP_BYTES);
}

/* The kprobe keeps do_set_pmd's arguments, by thread, for the kretprobe's return value. */
struct pmd_call {
	struct vm_fault *vmf;
	struct page *page;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct pmd_call);
} pmd_calls SEC(".maps");

SEC("kprobe/do_set_pmd")
int BPF_KPROBE(ioacct_pc_pmd_kp, struct vm_fault *vmf, struct page *page)
{
	struct pmd_call c = { .vmf = vmf, .page = page };
	__u64 id = bpf_get_current_pid_tgid();

	if (view_slot(bpf_get_current_task_btf()) == IOACCT_SLOT_NONE)
		return 0;
	bpf_map_update_elem(&pmd_calls, &id, &c, BPF_ANY);
	return 0;
}

SEC("kretprobe/do_set_pmd")
int BPF_KRETPROBE(ioacct_pc_pmd_kr, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pmd_call *c = bpf_map_lookup_elem(&pmd_calls, &id);
	struct pmd_call call;

	if (!c)
		return 0;
	call = *c;
	bpf_map_delete_elem(&pmd_calls, &id);
	return ret ? 0 : pc_map(call.vmf, call.page, PMD_MAP_BYTES);
}

/* A readahead decision: size histogram 0 counts the synchronous, 1 the asynchronous. */
static __always_inline int ra_event(struct inode *inode, int which)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = view_slot(task);
	struct task_ent *t;

	if (slot == IOACCT_SLOT_NONE)
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	VIEW_ADD(slot, inode_mnt(t, (__u64)inode), IOACCT_OP_READAHEAD, 1, 0, which);
	return 0;
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(ioacct_pc_sync_ra, struct inode *inode)
{
	return ra_event(inode, 0);
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(ioacct_pc_async_ra, struct inode *inode)
{
	return ra_event(inode, 1);
}

/*
 * Without the readahead tracepoints (6.1, 6.12): the functions that fire
 * them, page_cache_sync_ra(ractl, req_count), at once, and
 * page_cache_async_ra(ractl, folio, req_count), once it has seen that
 * readahead is on and the folio is not under writeback.
 */
static __always_inline int pc_async_ra_fn(struct readahead_control *ractl, struct folio *folio)
{
	__u64 flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* the first word, as in folio_pages() */
	if (!BPF_CORE_READ(ractl, ra, ra_pages) ||
	    (flags & (1ULL << bpf_core_enum_value(enum pageflags, PG_writeback))))
		return 0;
	return ra_event(BPF_CORE_READ(ractl, mapping, host), 1);
}

SEC("fentry/page_cache_sync_ra")
int BPF_PROG(ioacct_pc_sync_ra_fe, struct readahead_control *ractl)
{
	return ra_event(BPF_CORE_READ(ractl, mapping, host), 0);
}

SEC("kprobe/page_cache_sync_ra")
int BPF_KPROBE(ioacct_pc_sync_ra_kp, struct readahead_control *ractl)
{
	return ra_event(BPF_CORE_READ(ractl, mapping, host), 0);
}

SEC("fentry/page_cache_async_ra")
int BPF_PROG(ioacct_pc_async_ra_fe, struct readahead_control *ractl, struct folio *folio)
{
	return pc_async_ra_fn(ractl, folio);
}

SEC("kprobe/page_cache_async_ra")
int BPF_KPROBE(ioacct_pc_async_ra_kp, struct readahead_control *ractl, struct folio *folio)
{
	return pc_async_ra_fn(ractl, folio);
}
