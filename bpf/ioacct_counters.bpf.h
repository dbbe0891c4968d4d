/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters: a (slot, mount, op, bin) entry of stats, account() which
 * adds one finished operation to it, and the per-task accumulator of runs
 * of reads and writes (issue 18; and of their files, issue 26) with the
 * programs that empty it: the daemon's task iterator and a task's exit.
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_files.bpf.h, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

/*
 * The counters of key, created when missing; NULL when the map is full,
 * and then what was to be added (events calls, bytes) is counted as dropped.
 */
static __noinline struct ioacct_stat_val *stat_entry(const struct ioacct_stat_key *key, __u64 events,
						     __u64 bytes)
{
	__u32 slot = key->slot;
	struct ioacct_stat_val *v;

	v = bpf_map_lookup_elem(&stats, key);
	if (!v) {
		/* EEXIST: another CPU created it first, which is fine. */
		long err = bpf_map_update_elem(&stats, key, &zero_val, BPF_NOEXIST);

		if (err && err != -17) {
			count_drop(slot, events, bytes);
			return NULL;
		}
		if (!err)
			note_mount(key);
		v = bpf_map_lookup_elem(&stats, key);
		if (!v)
			count_drop(slot, events, bytes);
	}
	return v;
}

/*
 * The counters of (slot, mount, op) in the bin of t_end, created when
 * missing; NULL (and counted as dropped) when the slot is gone or the map
 * is full. key->bin is set here.
 */
static __noinline struct ioacct_stat_val *stat_get(struct ioacct_stat_key *key, __u64 t_end,
						   __u64 bytes)
{
	__u32 slot = key->slot;
	struct ioacct_slot *s;

	s = bpf_map_lookup_elem(&slots, &slot);
	if (!s || !s->active)
		return NULL;
	if (t_end > s->start_ns && s->width_ns)
		key->bin = (t_end - s->start_ns) / s->width_ns;
	return stat_entry(key, 1, bytes);
}

/*
 * Adds one finished operation to its (slot, mount, bin, op) counters; `where`
 * carries slot, mount and op, the bin is computed here.
 */
__noinline int account(const struct ioacct_stat_key *where, __u64 t_end, __u64 dur, long ret)
{
	struct ioacct_stat_key key;
	struct ioacct_stat_val *v;
	__u64 bytes = 0;
	__u32 op;

	if (!where)
		return 0;
	key = *where;
	op = key.op;

	if (ret > 0 && (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE))
		bytes = ret;
	v = stat_get(&key, t_end, bytes);
	if (!v)
		return 0;
	v->calls++;
	v->ns += dur;
	if (ret < 0) {
		__u32 c = err_class(ret);

		if (c < IOACCT_NR_ERR_CLASSES)
			v->errors[c]++;
		return 0;
	}
	if (op == IOACCT_OP_READ || op == IOACCT_OP_WRITE) {
		__u32 b = size_bin(ret);

		v->bytes += bytes;
		if (b < IOACCT_NR_SIZE_BINS)
			v->size[b]++;
	} else if (op == IOACCT_OP_FADVISE || op == IOACCT_OP_MADVISE) {
		/* ret is the advice class here (on_exit) */
		if (ret < IOACCT_NR_HINTS)
			v->size[ret]++;
	}
	return 0;
}

/*
 * Moves t's accumulated counters into stats and empties them; the caller
 * owns them (acc_own). Only into the job they were counted for: the slot
 * must have the start it had then and, unless the daemon's iterator flushes
 * (a finishing step clears its slot before reading it), still be active.
 */
__noinline int acc_flush(struct task_ent *t, bool iter)
{
	struct ioacct_stat_key key;
	struct ioacct_stat_val *v;
	struct ioacct_slot *s;
	__u32 slot;

	if (!t)
		return 0;
	key = t->acc_key;
	slot = key.slot;
	if (!t->acc.calls)
		return 0;
	s = bpf_map_lookup_elem(&slots, &slot);
	if (s && s->start_ns == t->acc_start && (iter || s->active)) {
		v = stat_entry(&key, t->acc.calls, t->acc.bytes);
		if (v) {
			v->calls += t->acc.calls;
			v->ns += t->acc.ns;
			v->bytes += t->acc.bytes;
			for (int i = 0; i < IOACCT_NR_SIZE_BINS; i++)
				v->size[i] += t->acc.size[i];
		}
	}
	__builtin_memset(&t->acc, 0, sizeof(t->acc));
	return 0;
}

/* note_mount() for a new accumulator of t's, unless t noted that mount last or before. */
static __always_inline void acc_note(struct task_ent *t, const struct ioacct_stat_key *key)
{
	__u32 i = t->noted_next & 1;

	if ((t->noted_key[0] == key->mnt_id && t->noted_slot[0] == key->slot &&
	     t->noted_vfsmnt[0] == t->c_vfsmnt) ||
	    (t->noted_key[1] == key->mnt_id && t->noted_slot[1] == key->slot &&
	     t->noted_vfsmnt[1] == t->c_vfsmnt))
		return;
	if (!note_mount(key))
		return;
	t->noted_key[i] = key->mnt_id;
	t->noted_slot[i] = key->slot;
	t->noted_vfsmnt[i] = t->c_vfsmnt;
	t->noted_next = i ^ 1;
}

/*
 * A successful read or write (*a), added to the task's
 * accumulator and to its file's (issue 26). Returns 1 when it must be
 * counted the ordinary way instead (account(), a->direct): the daemon's
 * iterator holds the accumulators at this moment. key->bin is set here, in
 * the caller's key (account() sets it again): no copy of the key on the
 * stack of sys_exit's deepest chain (512 bytes on 6.1).
 */
static __always_inline int acc_add(struct task_ent *t, struct ioacct_stat_key *key,
				   struct file_rw *a)
{
	__u64 t_end = a->t_end, dur = a->dur;
	long ret = a->ret;
	struct ioacct_slot *s;
	__u32 b;

	s = bpf_map_lookup_elem(&slots, &key->slot);
	if (!s || !s->active)
		return 0;
	if (t_end > s->start_ns && s->width_ns)
		key->bin = (t_end - s->start_ns) / s->width_ns;
	b = size_bin(ret);
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_TASK) != 0)
		return 1;
	if (t->acc.calls &&
	    (key->slot != t->acc_key.slot || key->mnt_id != t->acc_key.mnt_id ||
	     key->op != t->acc_key.op || key->bin != t->acc_key.bin || s->start_ns != t->acc_start || t_end - t->acc_t0 > ACC_MAX_AGE_NS))
		acc_flush(t, false);
	if (!t->acc.calls) {
		t->acc_key = *key;
		t->acc_start = s->start_ns;
		t->acc_t0 = t_end;
		/*
		 * Noted now, by the task on its file's mount: the entry this
		 * accumulator creates may be created by the daemon's iterator or
		 * after the task moved on to another mount, where stat_entry's
		 * note would see another task or mount (a container's tmpfs then
		 * stayed unnamed). Once per accumulator, not per call.
		 */
		acc_note(t, key);
	}
	t->acc.calls++;
	t->acc.ns += dur;
	t->acc.bytes += ret;
	if (b < IOACCT_NR_SIZE_BINS)
		t->acc.size[b]++;
	a->start = s->start_ns;
	if (file_records)
		ioacct_file_rw(t, a);
	/* An atomic exchange: whoever takes it next sees the flush above complete. */
	__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}

/* Set by the daemon before each run of acc_iter (a time: unique across daemons). */
volatile __u64 acc_pass;
/* Tasks acc_iter found holding their accumulator: the daemon runs it again. */
__u64 acc_busy;

/*
 * Run by the daemon before it reads stats: every task's accumulator into
 * stats, so that a bin it drains holds every call that ended in it, and a
 * finishing step gets the calls its living tasks hold. A task that holds
 * its accumulator at that instant is counted busy and visited again (the
 * ones flushed in this read, marked with acc_pass, are skipped then).
 */
SEC("iter/task")
int ioacct_acc_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u64 pass = acc_pass;
	struct task_ent *t;

	if (!task || no_storage(task))
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!t || t->acc_pass == pass)
		return 0;
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_ITER) != 0) {
		__sync_fetch_and_add(&acc_busy, 1);
		return 0;
	}
	acc_flush(t, true);
	if (file_records)
		ioacct_file_accs_flush(t, 1);
	t->acc_pass = pass;
	__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}

/*
 * A task's exit flushes its accumulator; a task that never was watched has
 * no storage and returns at once. It runs before the task leaves the task
 * list, so acc_iter either finds it holding the accumulator or finds it
 * flushed; when acc_iter holds it, acc_iter flushes it.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ioacct_acc_exit)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_ent *t;

	if (no_storage(task))
		return 0;
	t = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!t)
		return 0;
	if (__sync_val_compare_and_swap(&t->acc_own, 0, ACC_TASK) != 0)
		return 0;
	acc_flush(t, false);
	if (file_records)
		ioacct_file_accs_flush(t, 0);
	__sync_lock_test_and_set(&t->acc_own, 0);
	return 0;
}
