/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-file records (issue 26): per (slot, rank, mount, file) counters
 * of the system calls counted per mount, as Darshan's POSIX module keeps
 * them per file and rank. A run of reads, writes, opens, stats and fsyncs
 * of a file is added up in the task's file accumulators (task_ent.fa, owned
 * with the per-mount accumulator) and reaches the record as one update;
 * io_uring and AIO requests update it directly. The records live as long
 * as their step: the daemon reads and deletes them when it ends (with its
 * path notes), and empties the slot's count when it gives the slot to
 * another step.
 *
 * A file is one life of an inode (issue 36): device, inode and generation
 * (file_life()), so that a file made after another was unlinked has its own
 * record, named by its own path, even when it gets the freed inode number.
 * Its path is noted once, at the first call that has its dentry (an open,
 * an fd call on an inherited descriptor, a request's completion), whatever
 * made the record (issue 38).
 *
 * Bounded: at most max_files records of files per slot (fcount); the calls
 * on files past the bound go to their mount's "other files" record (dev 0,
 * ino 0), which marks the step partial. A record that finds the map full
 * is counted in dropped, as a stats entry is.
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_rank.bpf.h, and using what the
 * parts before it define.
 */

/* Set by the daemon before load (max_files in ioacct.conf; flast's max_entries). */
const volatile __u32 max_files = 4096;
const volatile __u32 flast_size = 65536;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_file_key);
	__type(value, struct ioacct_file_val);
} files SEC(".maps");

/* The path of a record's file, noted once (a mount note's layout). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_file_key);
	__type(value, struct ioacct_mnt_note);
} fpaths SEC(".maps");

/* fcount[slot]: the records of files (not "other files") the slot has. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} fcount SEC(".maps");

/*
 * flive: the life of each inode a slot's records saw (ioacct_abi.h),
 * written once per record made, read where a call's file has no generation
 * of its own: a stat by path, a file system without generations.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_flive_key);
	__type(value, struct ioacct_flive_val);
} flive SEC(".maps");

/*
 * flast: each record's last accesses, shared by the tasks counting in it
 * (ioacct_abi.h). An array, whose lookup the verifier inlines: a read or
 * write reaches it with no helper call. Sized as files by the daemon;
 * flastnext[0] counts the entries taken, a record's entry being the count
 * modulo the size and its tag the count + 1, so that an entry taken again
 * by a newer record is told from its older owner's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct ioacct_flast);
} flast SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} flastnext SEC(".maps");

static const struct ioacct_file_val zero_file;

/* One more record of a file in the slot whose count is *n, when it is under max_files. */
static __always_inline bool count_take(__u64 *n)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *n;

		if (old >= max_files)
			return false;
		if (__sync_val_compare_and_swap(n, old, old + 1) == old)
			return true;
	}
	return false;
}

/*
 * A file's identity for its record: device, inode, its i_generation, its
 * life (file_life(): the key's gen) and a dentry and mount that name its
 * path. The task's last file's (task_file_id()), or another's (file_id_of():
 * the second end of a copy, an io_uring or AIO request's), or a stat's
 * (file_stat_id(): no generation, no dentry).
 */
struct file_id {
	__u64 ino;
	__u64 dentry;
	__u64 vfsmnt;
	__u32 dev;
	__u32 igen;
	__u32 gen;
	__u32 flags; /* IOACCT_FILE_NOGEN */
};

/*
 * Notes the path of a record's file: dentry on vfsmnt, walked up to its
 * mount namespace's root as d_path() does. Once per record, never per call.
 */
static __always_inline void file_note(const struct ioacct_file_key *key, __u64 dentry, __u64 vfsmnt)
{
	struct note_scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&notescratch, &zero);
	if (!s || !dentry || !vfsmnt)
		return;
	s->n.vfsmnt = vfsmnt;
	s->n.uniq = 0;
	s->n.mntns = 0;
	s->n.fstype[0] = '\0';
	s->d = dentry;
	s->parent = vfsmnt - bpf_core_field_offset(struct mount, mnt);
	note_path_from(s);
	bpf_map_update_elem(&fpaths, key, &s->n, BPF_ANY);
}

/*
 * Names record v of *key when it has no name yet and a dentry is at hand:
 * the first such call of any task takes the flag, so the walk is made once.
 * Inline: as a frame of its own it made the chain of a read's fentry
 * program (ioacct_fx_read, file_call, file_acc_load, file_rec, file_name)
 * 544 bytes, over the 512 that 6.1's verifier adds up.
 */
static __always_inline void file_name(const struct ioacct_file_key *key,
				      struct ioacct_file_val *v, __u64 dentry, __u64 vfsmnt)
{
	struct ioacct_file_key k;

	if (!key || !v || !dentry || !vfsmnt || v->named)
		return;
	if (__sync_val_compare_and_swap(&v->named, 0, 1) != 0)
		return;
	k = *key; /* from the stack: 6.1's map helpers take no other memory as a key */
	file_note(&k, dentry, vfsmnt);
}

/* A new record's entry in flast: the next one, its tag told from an older owner's. */
static __always_inline void file_last_take(struct ioacct_file_val *v)
{
	struct ioacct_flast *e;
	__u32 zero = 0, idx;
	__u64 *next, n;

	next = bpf_map_lookup_elem(&flastnext, &zero);
	if (!next)
		return;
	n = __sync_fetch_and_add(next, 1);
	idx = (__u32)(n % (flast_size ? flast_size : 1));
	e = bpf_map_lookup_elem(&flast, &idx);
	if (!e)
		return;
	e->tag = n + 1;
	e->last_byte_read = 0;
	e->last_byte_written = 0;
	e->last_io = 0;
	v->lidx = idx;
	v->ltag = n + 1;
}

/*
 * The record of *key, made when missing: a file's counts against the slot's
 * max_files, and past it *key becomes its mount's "other files". id's
 * dentry and vfsmnt (0 when unknown: a stat by path, a page-cache miss) name
 * its path, now or at the first call that has them. NULL when the map is
 * full.
 */
static __noinline struct ioacct_file_val *file_rec(struct ioacct_file_key *key,
						   const struct file_id *id)
{
	struct ioacct_flive_key lk;
	struct ioacct_flive_val lv;
	struct ioacct_file_val *v;
	__u64 *n = NULL;
	long err;

	if (!id)
		return NULL;
	v = bpf_map_lookup_elem(&files, key);
	if (v) {
		if (!v->named && id->dentry && (key->ino || key->dev))
			file_name(key, v, id->dentry, id->vfsmnt);
		return v;
	}
	if (key->ino || key->dev) {
		n = bpf_map_lookup_elem(&fcount, &key->slot); /* no copy: a frame of sys_exit's chains */
		if (!n)
			return NULL;
		if (!count_take(n)) {
			n = NULL;
			key->dev = 0;
			key->ino = 0;
			key->gen = 0;
			key->idflags = 0;
			v = bpf_map_lookup_elem(&files, key);
			if (v)
				return v;
		}
	}
	/* EEXIST: another CPU made it first, which is fine. */
	err = bpf_map_update_elem(&files, key, &zero_file, BPF_NOEXIST);
	if (err && n)
		__sync_fetch_and_add(n, -1);
	if (err && err != -17)
		return NULL;
	v = bpf_map_lookup_elem(&files, key);
	if (err || !n || !v)
		return v;
	/* Made here: its entry of last accesses, its name, its inode's life. */
	v->born = bpf_ktime_get_ns();
	file_last_take(v);
	if (id->dentry)
		file_name(key, v, id->dentry, id->vfsmnt);
	if (!(key->idflags & IOACCT_FILE_NOGEN)) {
		lk.slot = key->slot;
		lk.dev = key->dev;
		lk.ino = key->ino;
		lv.gen = key->gen;
		lv.igen = id->igen;
		bpf_map_update_elem(&flive, &lk, &lv, BPF_ANY);
	}
	return v;
}

/*
 * The life of file id in slot (issue 36), into id->gen: its i_generation,
 * which a new inode gets afresh; where the file system leaves it 0, the
 * birth the slot's records last saw for the inode (file_birth()); for a
 * stat by path, which tells no generation, the life the slot's records last
 * saw (none: IOACCT_FILE_NOGEN stays, the daemon adds the record to its
 * life). A map lookup only in those two cases, and only when a file is
 * loaded, never per call.
 */
__noinline int file_life(__u32 slot, struct file_id *id)
{
	struct ioacct_flive_key lk = { .slot = slot };
	struct ioacct_flive_val *lv;

	if (!id)
		return 0;
	if (!(id->flags & IOACCT_FILE_NOGEN) && id->igen) {
		id->gen = id->igen;
		return 0;
	}
	id->gen = 0;
	lk.dev = id->dev;
	lk.ino = id->ino;
	lv = bpf_map_lookup_elem(&flive, &lk);
	if (!lv)
		return 0;
	if (id->flags & IOACCT_FILE_NOGEN) {
		id->flags = 0;
		id->igen = lv->igen;
		id->gen = lv->gen;
	} else if (!lv->igen) {
		id->gen = lv->gen;
	}
	return 0;
}

/*
 * A file the job just created on a file system without generations: a new
 * life of its inode (the next birth), so that it does not count in the
 * record of the unlinked file whose inode number it got.
 */
__noinline int file_birth(__u32 slot, struct file_id *id)
{
	struct ioacct_flive_key lk = { .slot = slot };
	struct ioacct_flive_val nv = {}, *lv;

	if (!id || id->igen)
		return 0;
	lk.dev = id->dev;
	lk.ino = id->ino;
	lv = bpf_map_lookup_elem(&flive, &lk);
	nv.gen = lv ? lv->gen + 1 : 1;
	if (!nv.gen)
		nv.gen = 1;
	bpf_map_update_elem(&flive, &lk, &nv, BPF_ANY);
	id->gen = nv.gen;
	return 0;
}

static __always_inline struct file_id task_file_id(const struct task_ent *t)
{
	struct file_id id = { .ino = t->c_ino, .dentry = t->c_dentry, .vfsmnt = t->c_vfsmnt,
			      .dev = t->c_dev, .igen = t->c_igen };

	return id;
}

/* The identity of struct file f (a kernel address). */
static __noinline int file_id_of(__u64 f, struct file_id *id)
{
	__u64 inode, sb;

	if (!f || !id)
		return -1;
	inode = (__u64)KREAD(struct file, f, f_inode);
	if (!inode)
		return -1;
	sb = (__u64)KREAD(struct inode, inode, i_sb);
	id->ino = KREAD(struct inode, inode, i_ino);
	id->igen = KREAD(struct inode, inode, i_generation);
	id->dev = KREAD(struct super_block, sb, s_dev);
	id->dentry = (__u64)KREAD(struct file, f, f_path.dentry);
	id->vfsmnt = (__u64)KREAD(struct file, f, f_path.mnt);
	id->gen = 0;
	id->flags = 0;
	return 0;
}

/* The key of file id (its life known: file_life()), of rank, on mount mnt, counted in slot. */
static __always_inline struct ioacct_file_key file_key(__s32 rank, const struct file_id *id,
							__u32 slot, __u64 mnt)
{
	struct ioacct_file_key k = { .slot = slot, .rank = rank, .mnt_id = mnt, .dev = id->dev,
				     .ino = id->ino, .gen = id->gen,
				     .idflags = id->flags & IOACCT_FILE_NOGEN };

	return k;
}

/*
 * An open, a stat, an fsync or a seek of a regular file, added to its record at
 * once (with its time as metadata time, as the mount's counters have it):
 * a request's, or a call's while the daemon's iterator holds the task's
 * accumulators.
 */
static __noinline void file_meta(struct ioacct_file_key *key, const struct file_id *id, __u32 op,
				 __u64 dur)
{
	struct ioacct_file_val *v = file_rec(key, id);

	if (!v) {
		count_drop(key->slot, 1, 0);
		return;
	}
	if (op == IOACCT_OP_OPEN)
		__sync_fetch_and_add(&v->opens, 1);
	else if (op == IOACCT_OP_STAT)
		__sync_fetch_and_add(&v->stats, 1);
	else if (op == IOACCT_OP_FSYNC)
		__sync_fetch_and_add(&v->fsyncs, 1);
	else if (op == IOACCT_OP_SEEK)
		__sync_fetch_and_add(&v->seeks, 1);
	__sync_fetch_and_add(&v->meta_ns, dur);
}

/* *p = max(*p, x), against other CPUs' flushes of the same record. */
static __always_inline void atomic_max(__s64 *p, __s64 x)
{
	for (int i = 0; i < 8; i++) {
		__s64 old = *p;

		if (old >= x || __sync_val_compare_and_swap(p, old, x) == old)
			return;
	}
}

/* *p = min(*p, x) where 0 is "none yet". */
static __always_inline void atomic_min_set(__u64 *p, __u64 x)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *p;

		if ((old && old <= x) || __sync_val_compare_and_swap(p, old, x) == old)
			return;
	}
}

/* Where a size's entry is looked for first in a record's table of access sizes. */
static __always_inline __u32 size_hash(__u32 z)
{
	return (z * 2654435761U) >> 27; /* IOACCT_FILE_ACCESS_MAX = 32 entries */
}

/*
 * fa's access sizes into record v's table, and fa's emptied: each size in
 * the entry its hash picks, or the next free one (taken with a
 * compare-and-swap against other CPUs), as long as the table has room: as
 * Darshan, the first IOACCT_FILE_ACCESS_MAX distinct sizes are counted, the
 * rest not. A global function: verified once.
 */
__noinline int ioacct_file_sizes(struct ioacct_file_val *v, struct file_acc *fa)
{
	if (!fa)
		return 0;
	for (int i = 0; i < FA_SIZES; i++) {
		__u64 z = fa->asz[i];
		__u32 h = size_hash(fa->asz[i]);

		for (int j = 0; v && z && j < IOACCT_FILE_ACCESS_MAX; j++) {
			__u32 e = (h + j) & (IOACCT_FILE_ACCESS_MAX - 1);
			__u64 cur = v->acc_size[e];

			if (!cur) {
				cur = __sync_val_compare_and_swap(&v->acc_size[e], 0, z);
				if (!cur)
					cur = z;
			}
			if (cur == z) {
				__sync_fetch_and_add(&v->acc_count[e], fa->acnt[i]);
				break;
			}
		}
		fa->asz[i] = 0;
		fa->acnt[i] = 0;
	}
	return 0;
}

/*
 * fa's four access sizes into its record, to make room for a fifth: only
 * into the job it was counted for, as file_acc_flush(). A global function.
 */
__noinline int ioacct_file_sizes_spill(struct file_acc *fa)
{
	struct ioacct_file_key key;
	struct ioacct_file_val *v = NULL;
	struct ioacct_slot *s;
	__u32 slot;

	if (!fa)
		return 0;
	key = fa->key; /* from the stack: 6.1's map helpers take no other memory as a key */
	slot = key.slot;
	s = bpf_map_lookup_elem(&slots, &slot);
	if (fa->ok && s && s->start_ns == fa->start)
		v = bpf_map_lookup_elem(&files, &key);
	ioacct_file_sizes(v, fa);
	return 0;
}

/*
 * Adds a file accumulator to its record and empties its counts (its key and
 * last accesses stay: the run goes on). Only into the job it was counted
 * for, as acc_flush().
 */
__noinline int file_acc_flush(struct file_acc *fa, bool iter)
{
	struct ioacct_file_key key;
	struct ioacct_file_val *v;
	struct ioacct_slot *s;
	__u64 metas;

	if (!fa)
		return 0;
	key = fa->key;
	metas = fa->opens + fa->stats + fa->fsyncs + fa->seeks;
	if (!fa->ok || !(fa->reads | fa->writes | metas))
		return 0;
	/* The key's slot, no copy: a frame of a read's and of sys_exit's deepest chains (see aio_reap_one()). */
	s = bpf_map_lookup_elem(&slots, &key.slot);
	/*
	 * The key from the stack: fa may be in a global function's argument
	 * (t), memory that 6.1's map helpers do not take as a key.
	 */
	v = bpf_map_lookup_elem(&files, &key);
	if (!s || s->start_ns != fa->start || !(iter || s->active)) {
		fa->ok = 0;
		v = NULL;
	} else if (!v) {
		count_drop(key.slot, fa->reads + fa->writes + metas,
			   fa->bytes_read + fa->bytes_written);
	}
	if (v && fa->reads) {
		__sync_fetch_and_add(&v->reads, fa->reads);
		__sync_fetch_and_add(&v->bytes_read, fa->bytes_read);
		__sync_fetch_and_add(&v->read_ns, fa->read_ns);
		__sync_fetch_and_add(&v->seq_reads, fa->seq_reads);
		__sync_fetch_and_add(&v->consec_reads, fa->consec_reads);
		for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
			if (fa->size_read[i])
				__sync_fetch_and_add(&v->size_read[i], fa->size_read[i]);
		atomic_max(&v->max_byte_read, fa->max_byte_read);
		atomic_min_set(&v->first_read, fa->first_read);
		atomic_max((__s64 *)&v->last_read, fa->last_read);
		v->last_byte_read = fa->last_byte_read;
	}
	if (v && fa->writes) {
		__sync_fetch_and_add(&v->writes, fa->writes);
		__sync_fetch_and_add(&v->bytes_written, fa->bytes_written);
		__sync_fetch_and_add(&v->write_ns, fa->write_ns);
		__sync_fetch_and_add(&v->seq_writes, fa->seq_writes);
		__sync_fetch_and_add(&v->consec_writes, fa->consec_writes);
		for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
			if (fa->size_written[i])
				__sync_fetch_and_add(&v->size_written[i], fa->size_written[i]);
		atomic_max(&v->max_byte_written, fa->max_byte_written);
		atomic_min_set(&v->first_write, fa->first_write);
		atomic_max((__s64 *)&v->last_write, fa->last_write);
		v->last_byte_written = fa->last_byte_written;
	}
	if (v && fa->rw_switches)
		__sync_fetch_and_add(&v->rw_switches, fa->rw_switches);
	ioacct_file_sizes(v, fa);
	if (v && metas) {
		if (fa->opens)
			__sync_fetch_and_add(&v->opens, fa->opens);
		if (fa->stats)
			__sync_fetch_and_add(&v->stats, fa->stats);
		if (fa->fsyncs)
			__sync_fetch_and_add(&v->fsyncs, fa->fsyncs);
		if (fa->seeks)
			__sync_fetch_and_add(&v->seeks, fa->seeks);
		__sync_fetch_and_add(&v->meta_ns, fa->meta_ns);
	}
	fa->opens = fa->stats = fa->fsyncs = fa->seeks = fa->meta_ns = 0;
	fa->reads = fa->writes = fa->bytes_read = fa->bytes_written = 0;
	fa->read_ns = fa->write_ns = fa->seq_reads = fa->seq_writes = 0;
	fa->consec_reads = fa->consec_writes = fa->rw_switches = 0;
	fa->max_byte_read = fa->max_byte_written = 0;
	fa->first_read = fa->last_read = fa->first_write = fa->last_write = 0;
	__builtin_memset(fa->size_read, 0, sizeof(fa->size_read));
	__builtin_memset(fa->size_written, 0, sizeof(fa->size_written));
	return 0;
}

/* fa loaded with record v: where its last accesses are, whether it is named. */
static __always_inline void file_acc_from(struct file_acc *fa, const struct ioacct_file_val *v)
{
	fa->last_byte_read = v->last_byte_read;
	fa->last_byte_written = v->last_byte_written;
	fa->last_io = 0;
	fa->lidx = v->lidx;
	fa->ltag = v->ltag;
	fa->named = v->named || !(fa->key.ino || fa->key.dev);
	fa->ok = 1;
}

/*
 * A file accumulator of t, the older one, flushed by the caller
 * (file_acc_take()), loaded with file id on mount mnt in slot (its life
 * known, its record made, its last accesses read). NULL: no record (the map
 * is full).
 */
static __noinline struct file_acc *file_acc_load(struct task_ent *t, struct file_id *id,
						 __u32 slot, __u64 mnt, __u64 start)
{
	struct ioacct_file_key key;
	struct ioacct_file_val *v;
	struct file_acc *fa;
	__u32 i;

	if (!t || !id)
		return NULL;
	ioacct_task_rank(t);
	file_life(slot, id);
	key = file_key(t->rank, id, slot, mnt);

	i = t->fa_next & (FILE_ACCS - 1);
	t->fa_next = i + 1;
	fa = &t->fa[i];
	fa->ok = 0;
	fa->ino = key.ino;
	fa->dev = key.dev;
	fa->igen = id->igen;
	fa->nogen = !!(id->flags & IOACCT_FILE_NOGEN);
	fa->start = start;
	v = file_rec(&key, id);
	fa->key = key;
	if (!v)
		return NULL;
	file_acc_from(fa, v);
	return fa;
}

/*
 * file_acc_load() into t's older accumulator, flushed first. Flushed here,
 * not in file_acc_load(): their frames side by side, not one on the other,
 * in a read's and sys_exit's deepest call chains (512 bytes on 6.1).
 */
static __always_inline struct file_acc *file_acc_take(struct task_ent *t, struct file_id *id,
						      __u32 slot, __u64 mnt, __u64 start)
{
	file_acc_flush(&t->fa[t->fa_next & (FILE_ACCS - 1)], false);
	return file_acc_load(t, id, slot, mnt, start);
}

/*
 * Whether fa holds the file of inode ino (generation igen) on device dev, on
 * mount mnt in slot. path: a stat by path's, which knows no generation and
 * takes whichever life the task has loaded.
 */
static __always_inline bool file_acc_is(const struct file_acc *fa, __u64 ino, __u32 dev,
					__u32 igen, bool path, __u32 slot, __u64 mnt, __u64 start)
{
	return fa->ok && fa->ino == ino && fa->dev == dev &&
	       (path || (fa->igen == igen && !fa->nogen)) && fa->key.slot == slot &&
	       fa->key.mnt_id == mnt && fa->start == start;
}

/*
 * The task's file accumulator for the file of inode ino on device dev:
 * inline, and found by comparisons while it is one it has. NULL: none.
 */
static __always_inline struct file_acc *file_acc_find(struct task_ent *t, __u64 ino, __u32 dev,
						      __u32 igen, bool path, __u32 slot, __u64 mnt,
						      __u64 start)
{
	for (int i = 0; i < FILE_ACCS; i++) {
		struct file_acc *fa = &t->fa[i];

		if (file_acc_is(fa, ino, dev, igen, path, slot, mnt, start))
			return fa;
	}
	return NULL;
}

/*
 * fa's record named, where it has no name yet, from the dentry of the call
 * at hand: once, by the first call with a dentry (an inherited descriptor's
 * first read, an open after a stat by path made the record).
 */
static __noinline int file_acc_name(struct file_acc *fa, __u64 dentry, __u64 vfsmnt)
{
	struct ioacct_file_key key;
	struct ioacct_file_val *v;

	if (!fa || !dentry)
		return 0;
	key = fa->key;
	v = bpf_map_lookup_elem(&files, &key);
	if (v)
		file_name(&key, v, dentry, vfsmnt);
	fa->named = 1;
	return 0;
}

/* One access of z - 1 bytes in fa's access sizes; a fifth size sends the four to the record. */
static __always_inline void file_acc_size(struct file_acc *fa, __u32 z)
{
	for (int i = 0; i < FA_SIZES; i++) {
		if (fa->asz[i] == z) {
			fa->acnt[i]++;
			return;
		}
		if (!fa->asz[i]) {
			fa->asz[i] = z;
			fa->acnt[i] = 1;
			return;
		}
	}
	ioacct_file_sizes_spill(fa);
	fa->asz[0] = z;
	fa->acnt[0] = 1;
}

/*
 * One successful read or write of off..off+ret-1, ended at t_end after dur,
 * added to its file accumulator as Darshan's POSIX module counts it: its
 * sequential and consecutive access and read/write switch judged against
 * the record's last access by any task (flast), its size among the common
 * ones. The flast entry is an inlined array lookup: no helper call.
 */
static __always_inline void file_acc_add(struct file_acc *fa, bool rd, __s64 off, long ret,
					 __u64 t_end, __u64 dur, __u32 b)
{
	__s64 last = off + ret - 1, prev;
	struct ioacct_flast *e = NULL;
	__u32 idx = fa->lidx, io = rd ? 1 : 2, lio;

	if (b >= IOACCT_NR_SIZE_BINS)
		return;
	if (fa->ltag) {
		e = bpf_map_lookup_elem(&flast, &idx);
		if (e && e->tag != fa->ltag)
			e = NULL;
	}
	lio = e ? e->last_io : fa->last_io;
	fa->rw_switches += lio && lio != io;
	fa->last_io = io;
	if (e)
		e->last_io = io;
	if (rd) {
		prev = e ? e->last_byte_read : fa->last_byte_read;
		fa->seq_reads += off > prev;
		fa->consec_reads += off == prev + 1;
		fa->last_byte_read = last;
		if (e)
			e->last_byte_read = last;
		if (last > fa->max_byte_read)
			fa->max_byte_read = last;
		if (!fa->first_read)
			fa->first_read = t_end - dur;
		fa->last_read = t_end;
		fa->reads++;
		fa->bytes_read += ret;
		fa->read_ns += dur;
		fa->size_read[b]++;
	} else {
		prev = e ? e->last_byte_written : fa->last_byte_written;
		fa->seq_writes += off > prev;
		fa->consec_writes += off == prev + 1;
		fa->last_byte_written = last;
		if (e)
			e->last_byte_written = last;
		if (last > fa->max_byte_written)
			fa->max_byte_written = last;
		if (!fa->first_write)
			fa->first_write = t_end - dur;
		fa->last_write = t_end;
		fa->writes++;
		fa->bytes_written += ret;
		fa->write_ns += dur;
		fa->size_written[b]++;
	}
	file_acc_size(fa, (__u32)ret + 1);
}

/* Where file_direct() builds its one call's accumulator: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct file_acc);
} fascratch SEC(".maps");

/*
 * What one read or write tells its file's record, built by the caller on
 * its stack: the global functions below take it as one argument (a BPF
 * function has at most five).
 */
struct file_rw {
	__s64 off;	/* the access's first byte */
	__s64 ret;	/* the bytes moved */
	__u64 t_end;
	__u64 dur;
	__u64 start;	/* the slot's start_ns */
	__u64 mnt;
	__u32 slot;
	/* 16 bits each: on_exit()'s frame, of sys_exit's deepest chain (512 bytes on 6.1) */
	__u16 rd;	/* a read, else a write */
	__u16 direct;	/* the daemon's iterator holds t's accumulators: straight to the record */
};

/*
 * A read or write of rank added to its record directly: when the daemon's
 * iterator holds the task's accumulators (acc_add() returned 1), a run of
 * one call; an io_uring or AIO request's, whose task is not at hand.
 */
__noinline int file_direct(__s32 rank, struct file_id *id, const struct file_rw *a)
{
	struct ioacct_file_val *v;
	struct ioacct_slot *s;
	struct file_acc *fa;
	__u32 zero = 0, slot;

	if (!id || !a)
		return 0;
	slot = a->slot;
	file_life(slot, id);
	fa = bpf_map_lookup_elem(&fascratch, &zero);
	s = bpf_map_lookup_elem(&slots, &slot);
	if (!fa || !s)
		return 0;
	__builtin_memset(fa, 0, sizeof(*fa));
	/*
	 * The key in the scratch, not on the stack: with it there, this frame
	 * made the chain of an AIO completion (aio_exit, aio_reap_one,
	 * ioacct_file_req, here, file_acc_flush) 544 bytes, over 6.1's 512.
	 */
	fa->key = file_key(rank, id, slot, a->mnt);
	v = file_rec(&fa->key, id);
	if (!v) {
		count_drop(slot, 1, a->ret);
		return 0;
	}
	fa->start = s->start_ns;
	file_acc_from(fa, v);
	file_acc_add(fa, a->rd, a->off, a->ret, a->t_end, a->dur, size_bin(a->ret));
	file_acc_flush(fa, false);
	return 0;
}

/*
 * The per-file records' entry points from the programs are global
 * functions, not static ones: the verifier checks a global function once
 * per program, on its own, where a static one (or inlined code) is walked
 * again on every path of every caller. With ~250 programs calling them,
 * that is what keeps the objects' load time where it was before the
 * records (docs/performance.md, "Loading").
 */

/* A successful read or write of t's last file, in its file accumulator (or directly). */
__noinline int ioacct_file_rw(struct task_ent *t, const struct file_rw *a)
{
	struct file_id id;
	struct file_acc *fa;

	if (!t || !a)
		return 0;
	if (a->direct) {
		id = task_file_id(t);
		ioacct_task_rank(t);
		file_direct(t->rank, &id, a);
		return 0;
	}
	/* The common call: the file of the task's run, found without building its identity. */
	fa = file_acc_find(t, t->c_ino, t->c_dev, t->c_igen, false, a->slot, a->mnt, a->start);
	if (!fa) {
		id = task_file_id(t);
		fa = file_acc_take(t, &id, a->slot, a->mnt, a->start);
	} else if (!fa->named) {
		file_acc_name(fa, t->c_dentry, t->c_vfsmnt);
	}
	if (fa)
		file_acc_add(fa, a->rd, a->off, a->ret, a->t_end, a->dur, size_bin(a->ret));
	else
		count_drop(a->slot, 1, a->ret);
	return 0;
}

/*
 * Where file_pair_end() builds an end's call and file: off the stack. 6.1
 * adds up every frame of a call chain, global functions' too, against 512
 * bytes, and a copy's chain (the exit program, ioacct_file_pair(), this,
 * file_acc_load(), file_rec(), ...) went past it with these there.
 */
struct pair_scratch {
	struct file_rw base;	/* the call's, ioacct_file_pair() */
	struct file_rw a;	/* one end's */
	struct file_id id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pair_scratch);
} pairscratch SEC(".maps");

/*
 * One end of a sendfile, splice or copy_file_range that moved a->ret bytes
 * (a->mnt: the source's mount): a read of the source (end 0), a write of
 * the destination (end 1), from the ends on_enter kept in t (p_file, a
 * regular file's when pair.ends says so; p_uoff, the user's pointer to the
 * offset the call advanced, 0: it used and advanced f_pos).
 */
static __always_inline void file_pair_end(struct task_ent *t, struct pair_scratch *p, __u32 end,
					  bool own, __u64 start)
{
	struct file_acc *fa;
	__s64 pos = 0;
	__u64 f;

	if (!(t->pair.ends & (end ? PAIR_DST : PAIR_SRC)))
		return;
	f = t->p_file[end]; /* a local: KREAD's CO-RE read must not relocate task_ent */
	if (file_id_of(f, &p->id))
		return;
	p->a = p->base;
	p->a.rd = end == 0;
	if (end)
		p->a.mnt = t->pair.out_mnt;
	p->a.start = start;
	/* The first byte moved: the offset after the call, less what moved. */
	if (!t->p_uoff[end] ||
	    bpf_probe_read_user(&pos, sizeof(pos), (void *)t->p_uoff[end]))
		pos = KREAD(struct file, f, f_pos);
	p->a.off = pos - p->a.ret;
	if (!own) {
		ioacct_task_rank(t);
		file_direct(t->rank, &p->id, &p->a);
		return;
	}
	fa = file_acc_find(t, p->id.ino, p->id.dev, p->id.igen, false, p->a.slot, p->a.mnt, start);
	if (!fa)
		fa = file_acc_take(t, &p->id, p->a.slot, p->a.mnt, start);
	else if (!fa->named)
		file_acc_name(fa, p->id.dentry, p->id.vfsmnt);
	if (fa)
		file_acc_add(fa, p->a.rd, p->a.off, p->a.ret, p->a.t_end, p->a.dur, size_bin(p->a.ret));
	else
		count_drop(p->a.slot, 1, p->a.ret);
}

/*
 * A sendfile, splice or copy_file_range that moved ret bytes, ended at
 * now, in its files' records: the task's file accumulators when it can take
 * them (a run of copies is no update per call), else straight to the
 * records. Its slot, source mount and start are the pending call's in t.
 */
__noinline int ioacct_file_pair(struct task_ent *t, long ret, __u64 now)
{
	struct ioacct_slot *s;
	struct pair_scratch *p;
	__u32 slot, zero = 0;
	bool own;

	if (!t || ret <= 0)
		return 0;
	slot = t->pslot;
	s = bpf_map_lookup_elem(&slots, &slot);
	p = bpf_map_lookup_elem(&pairscratch, &zero);
	if (!s || !s->active || !p)
		return 0;
	__builtin_memset(&p->base, 0, sizeof(p->base));
	p->base.ret = ret;
	p->base.t_end = now;
	p->base.dur = now - t->ts;
	p->base.slot = slot;
	p->base.mnt = t->mnt;
	own = __sync_val_compare_and_swap(&t->acc_own, 0, ACC_TASK) == 0;
	file_pair_end(t, p, 0, own, s->start_ns);
	file_pair_end(t, p, 1, own, s->start_ns);
	if (own)
		__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}

/*
 * An io_uring or AIO request, for its file's record when it completes
 * (ioacct_file_req()): its file, the submitter's rank, the access's offset
 * (-1: none known), op (IOACCT_OP_READ, _WRITE, _FSYNC or _OPEN), slot and
 * mount. Noted at submission (AIO: all of it; io_uring: rank and offset,
 * the file being known at completion).
 */
struct file_req {
	struct file_id id;
	__s64 off;
	__s32 rank;
	__u32 op;
	__u32 slot;
	__u64 mnt;
};

/*
 * Where ioacct_file_req() builds its record's call, key and file: off the
 * stack. It runs at the end of a long chain (an exit program, aio_exit(),
 * the reaping callback), and 6.1 adds up every frame of it against 512
 * bytes: with these on its stack the chain was 544.
 */
struct req_scratch {
	struct ioacct_file_key key;
	struct file_rw a;
	struct file_id id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct req_scratch);
} reqscratch SEC(".maps");

/*
 * A completed request with result ret, ended at t_end after dur, in its
 * file's record, straight (its task is not at hand: an io-wq worker, the
 * reaping thread). Successful ones only, as for system calls.
 */
__noinline int ioacct_file_req(const struct file_req *q, long ret, __u64 t_end, __u64 dur)
{
	struct req_scratch *r;
	__u32 zero = 0;

	if (!q || ret < 0 || (!q->id.ino && !q->id.dev))
		return 0;
	r = bpf_map_lookup_elem(&reqscratch, &zero);
	if (!r)
		return 0;
	r->id = q->id;
	if (q->op == IOACCT_OP_READ || q->op == IOACCT_OP_WRITE) {
		__builtin_memset(&r->a, 0, sizeof(r->a));
		r->a.off = q->off < 0 ? 0 : q->off;
		r->a.ret = ret;
		r->a.t_end = t_end;
		r->a.dur = dur;
		r->a.slot = q->slot;
		r->a.mnt = q->mnt;
		r->a.rd = q->op == IOACCT_OP_READ;
		file_direct(q->rank, &r->id, &r->a);
	} else if (q->op == IOACCT_OP_FSYNC || q->op == IOACCT_OP_OPEN) {
		file_life(q->slot, &r->id);
		r->key = file_key(q->rank, &r->id, q->slot, q->mnt);
		file_meta(&r->key, &r->id, q->op, dur);
	}
	return 0;
}

/* Every file accumulator of t into its record (the task's exit, the daemon's iterator). */
__noinline int ioacct_file_accs_flush(struct task_ent *t, int iter)
{
	if (!t)
		return 0;
	for (int i = 0; i < FILE_ACCS; i++)
		file_acc_flush(&t->fa[i], iter);
	return 0;
}

/*
 * The file a successful stat by path filled its user buffer with (t->f_file:
 * struct stat, or struct statx for statx), into id: 0, or -1 when it is not
 * a regular file or cannot be read. One copy of the fields it needs (two for
 * statx, whose device is 100 bytes past its inode): a user read costs more
 * than the rest of the record's work. st_dev is the kernel's dev_t in
 * new_encode_dev() form; statx has major and minor apart.
 */
static __always_inline int file_stat_id(struct task_ent *t, struct file_id *id)
{
	__u64 buf = t->f_file;
	__u32 maj, min, mode;

	if (!buf)
		return -1;
	id->gen = 0;
	id->igen = 0;
	id->flags = IOACCT_FILE_NOGEN;
	if (t->stat_x) {
		/* stx_mode (__u16) at 28, stx_ino at 32; stx_dev_major, _minor at 136. */
		__u32 m[3], d[2];

		if (bpf_probe_read_user(m, sizeof(m), (void *)(buf + 28)) ||
		    bpf_probe_read_user(d, sizeof(d), (void *)(buf + 136)))
			return -1;
		mode = m[0] & 0xffff;
		id->ino = (__u64)m[2] << 32 | m[1];
		maj = d[0];
		min = d[1];
	} else {
		/* st_dev, st_ino, then st_mode: at 24 on x86 (st_nlink before it), else 16. */
		__u64 h[4] = {};
#if defined(__TARGET_ARCH_x86)
		const __u32 mode_w = 3;
#else
		const __u32 mode_w = 2; /* the generic struct stat (arm64) */
#endif
		if (bpf_probe_read_user(h, (mode_w + 1) * 8 - 4, (void *)buf))
			return -1;
		mode = (__u32)h[mode_w];
		id->ino = h[1];
		maj = (h[0] >> 8) & 0xfff;
		min = (h[0] & 0xff) | ((h[0] >> 12) & 0xfff00);
	}
	if ((mode & S_IFMT) != S_IFREG)
		return -1;
	id->dev = maj << 20 | min;
	id->dentry = 0;
	id->vfsmnt = 0;
	return 0;
}

/*
 * Gives back t's accumulators (acc_own) after the task's updates: whoever
 * takes them next (a cmpxchg) must see those. x86 orders a store after
 * every earlier load and store, so there a plain store (the compiler kept
 * from moving it) releases them; elsewhere an atomic exchange, which costs
 * a locked instruction more.
 */
static __always_inline void acc_release(struct task_ent *t)
{
#if defined(__TARGET_ARCH_x86)
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&t->acc_own = 0;
#else
	__sync_lock_test_and_set(&t->acc_own, 0);
#endif
}

/*
 * The record of fa, made by a stat by path and not named yet, named by the
 * path the stat was given (issue 38), as Darshan names a file: absolute
 * from the directory it starts from (the cwd's or dirfd's path, walked as
 * a file's is), not resolved further (a "..", a symbolic link stay as
 * given); an empty path (AT_EMPTY_PATH: glibc's fstat) is dirfd's file.
 * Once per record, never per call: the record's named flag is taken first.
 */
__noinline int file_name_stat(struct task_ent *t, struct file_acc *fa)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ioacct_file_key key;
	struct ioacct_file_val *v;
	struct note_scratch *s;
	__u32 zero = 0, off = 0, len;
	__u64 up, d = 0, m = 0;
	struct file *f;
	long n;
	char c = 0;

	if (!t || !fa)
		return 0;
	fa->named = 1;
	up = t->s_upath;
	key = fa->key;
	v = bpf_map_lookup_elem(&files, &key);
	s = bpf_map_lookup_elem(&notescratch, &zero);
	if (!v || !s || !up || v->named || (!key.ino && !key.dev))
		return 0;
	if (__sync_val_compare_and_swap(&v->named, 0, 1) != 0)
		return 0;
	s->n.vfsmnt = 0;
	s->n.uniq = 0;
	s->n.mntns = 0;
	s->n.fstype[0] = '\0';
	if (bpf_probe_read_user(&c, 1, (void *)up) == 0 && c == '/') {
		s->complete = 1;
	} else {
		if (t->s_dirfd == AT_FDCWD) {
			d = (__u64)BPF_CORE_READ(task, fs, pwd.dentry);
			m = (__u64)BPF_CORE_READ(task, fs, pwd.mnt);
		} else if ((f = fd_file(task, t->s_dirfd))) {
			d = (__u64)KREAD(struct file, (__u64)f, f_path.dentry);
			m = (__u64)KREAD(struct file, (__u64)f, f_path.mnt);
		}
		if (!d || !m)
			return 0;
		s->d = d;
		s->parent = m - bpf_core_field_offset(struct mount, mnt);
		note_path_from(s);
		if (!c)
			goto out; /* the directory itself (the empty path) */
		off = s->off > 1 ? s->off : 0; /* "/" and "a", not "//a" */
		if (off > IOACCT_NOTE_PATH_MAX - 1)
			off = IOACCT_NOTE_PATH_MAX - 1;
		s->buf[off & (IOACCT_NOTE_PATH_MAX - 1)] = '/';
		off++;
	}
	n = bpf_probe_read_user_str(&s->buf[off & (IOACCT_NOTE_PATH_MAX - 1)], IOACCT_NOTE_PATH_MAX,
				    (void *)up);
	if (n <= 0)
		return 0;
	len = off + (__u32)n - 1;
	if (n == IOACCT_NOTE_PATH_MAX)
		s->complete = 0;
	/* Too long: its last IOACCT_NOTE_PATH_MAX - 1 bytes, marked cut (the daemon's "..."). */
	off = len < IOACCT_NOTE_PATH_MAX ? 0 : len - (IOACCT_NOTE_PATH_MAX - 1);
	if (off)
		s->complete = 0;
	bpf_probe_read_kernel(s->n.path, IOACCT_NOTE_PATH_MAX,
			      &s->buf[off & (IOACCT_NOTE_PATH_MAX - 1)]);
	s->n.path[IOACCT_NOTE_PATH_MAX - 1] = '\0';
	s->n.flags = s->complete ? IOACCT_NOTE_PATH_COMPLETE : 0;
out:
	bpf_map_update_elem(&fpaths, &key, &s->n, BPF_ANY);
	return 0;
}

/*
 * FILE_CALL_OPENED in ioacct_file_call()'s op: the open opened a regular
 * file; FILE_CALL_CREATED: and created it (FMODE_CREATED).
 */
#define FILE_CALL_OPENED 0x100
#define FILE_CALL_CREATED 0x200

/*
 * An open of a file whose inode has no generation: a new life when the
 * open created it (file_birth()), else the one its inode has; either way
 * the task's accumulators of the inode are let go, a file of another life
 * having its inode number. A map lookup per such open, none per call.
 */
__noinline int file_open_nogen(struct task_ent *t, __u32 slot, struct file_id *id,
				       bool created)
{
	if (!t || !id)
		return 0;
	for (int i = 0; i < FILE_ACCS; i++) {
		struct file_acc *fa = &t->fa[i];

		if (fa->ok && fa->ino == id->ino && fa->dev == id->dev && fa->key.slot == slot) {
			file_acc_flush(fa, false);
			fa->ok = 0;
		}
	}
	if (created)
		file_birth(slot, id);
	return 0;
}

/*
 * A successful open, stat, fsync or seek of a regular file, in its file
 * accumulator as a read or write is (the task's last file: found by
 * comparisons, no map update per call), or straight to its record when the
 * daemon's iterator holds the accumulators. The file is the task's last one
 * (an open's new fd, an fd call's), or for a stat by path the one its buffer
 * names.
 */
__noinline int ioacct_file_call(struct task_ent *t, __u32 slot, __u64 mnt, __u32 op, __u64 dur)
{
	struct ioacct_file_key key;
	bool opened = op & FILE_CALL_OPENED, created = op & FILE_CALL_CREATED, path = false;
	struct ioacct_slot *s;
	struct file_acc *fa;
	struct file_id id;

	if (!t)
		return 0;
	op &= ~(FILE_CALL_OPENED | FILE_CALL_CREATED);
	if (op == IOACCT_OP_OPEN) {
		if (!opened)
			return 0;
		id = task_file_id(t);
	} else if (op == IOACCT_OP_FSYNC || op == IOACCT_OP_SEEK ||
		   (op == IOACCT_OP_STAT && t->kind == IOACCT_SK_FD)) {
		if (t->c_type != S_IFREG)
			return 0;
		id = task_file_id(t);
	} else if (op == IOACCT_OP_STAT) {
		if (file_stat_id(t, &id))
			return 0;
		path = true;
	} else {
		return 0;
	}
	s = bpf_map_lookup_elem(&slots, &slot);
	/* As account(): a call of a job that has ended counts nowhere. */
	if (!s || !s->active)
		return 0;
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_TASK) != 0) {
		ioacct_task_rank(t);
		if (created && !id.igen)
			file_birth(slot, &id);
		else
			file_life(slot, &id);
		key = file_key(t->rank, &id, slot, mnt);
		file_meta(&key, &id, op, dur);
		return 0;
	}
	fa = NULL;
	if (op == IOACCT_OP_OPEN && !id.igen) {
		file_open_nogen(t, slot, &id, created);
	} else {
		/* The one it loaded last first: a run of calls on one file reads one line of t. */
		fa = &t->fa[(t->fa_next - 1) & (FILE_ACCS - 1)];
		if (!file_acc_is(fa, id.ino, id.dev, id.igen, path, slot, mnt, s->start_ns))
			fa = file_acc_find(t, id.ino, id.dev, id.igen, path, slot, mnt, s->start_ns);
	}
	if (!fa)
		fa = file_acc_take(t, &id, slot, mnt, s->start_ns);
	else if (!fa->named && id.dentry)
		file_acc_name(fa, id.dentry, id.vfsmnt);
	if (fa && path && !fa->named)
		file_name_stat(t, fa);
	if (fa) {
		fa->opens += op == IOACCT_OP_OPEN;
		fa->stats += op == IOACCT_OP_STAT;
		fa->fsyncs += op == IOACCT_OP_FSYNC;
		fa->seeks += op == IOACCT_OP_SEEK;
		fa->meta_ns += dur;
	} else {
		count_drop(slot, 1, 0);
	}
	acc_release(t);
	return 0;
}

/*
 * What a page-cache or mmap view event tells a file's record: bytes of the
 * file's pages mapped into the job (file: the mapping's struct file) or
 * brought into the page cache for its read (a miss; inode: the page's
 * host, file 0), on mount mnt in slot. Built on the program's stack.
 */
struct file_page {
	__u64 file;
	__u64 inode;
	__u64 bytes;
	__u64 mnt;
	__u32 slot;
};

/* id's dentry and mount, when inode is the current task's executable's. */
static __noinline int file_exe_id(__u64 inode, struct file_id *id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 exe;

	if (!id || !task->mm)
		return 0;
	exe = (__u64)BPF_CORE_READ(task, mm, exe_file);
	if (!exe || (__u64)KREAD(struct file, exe, f_inode) != inode)
		return 0;
	id->dentry = (__u64)KREAD(struct file, exe, f_path.dentry);
	id->vfsmnt = (__u64)KREAD(struct file, exe, f_path.mnt);
	return 0;
}

/*
 * A view event's bytes in their file's record, straight (no accumulator:
 * a fault may come inside a call whose run the task's accumulators hold).
 * Only for a watched task, after the view's own early exit: the unwatched
 * path never gets here.
 */
__noinline int ioacct_file_page(struct task_ent *t, const struct file_page *p)
{
	struct ioacct_file_key key;
	struct ioacct_file_val *v;
	struct file_id id = {};
	__u64 inode, sb;

	if (!t || !p || !p->bytes)
		return 0;
	if (p->file) {
		if (file_id_of(p->file, &id))
			return 0;
	} else {
		inode = p->inode;
		if (!inode)
			return 0;
		sb = (__u64)KREAD(struct inode, inode, i_sb);
		id.ino = KREAD(struct inode, inode, i_ino);
		id.igen = KREAD(struct inode, inode, i_generation);
		id.dev = KREAD(struct super_block, sb, s_dev);
		/*
		 * Its path when it is the task's last file or its executable
		 * (an exec reads the binary with no open of the task's): the
		 * record is named.
		 */
		if (t->c_inode == inode) {
			id.dentry = t->c_dentry;
			id.vfsmnt = t->c_vfsmnt;
		} else {
			file_exe_id(inode, &id);
		}
	}
	if (!id.ino && !id.dev)
		return 0;
	ioacct_task_rank(t);
	file_life(p->slot, &id);
	key = file_key(t->rank, &id, p->slot, p->mnt);
	v = file_rec(&key, &id);
	if (!v) {
		count_drop(p->slot, 1, p->bytes);
		return 0;
	}
	if (p->file)
		__sync_fetch_and_add(&v->mmap_bytes, p->bytes);
	else
		__sync_fetch_and_add(&v->cache_miss_bytes, p->bytes);
	return 0;
}
