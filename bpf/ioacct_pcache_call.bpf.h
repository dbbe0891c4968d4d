/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a system call tells the page-cache and mmap views, at its start:
 * the byte range a read asks for and the class of an access hint. The
 * views' programs are in ioacct_pcache.bpf.h.
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right after ioacct_counters.bpf.h, and using what the parts
 * before it define. The order of the parts is the order of the object's
 * code and data: keep it (scripts/bpf-same shows that nothing moved).
 */

/*
 * ---- The page-cache and mmap views (issue 14) ----------------------------
 *
 * Kernel events that name a page of a file, not a call: a page brought into
 * the page cache (a miss), a page fault on a file mapping, a readahead
 * decision. They fire for every task, so each program starts with the same
 * early exit as a syscall's (nothing watched, or the task's cgroup is not:
 * one per-CPU cache lookup); only a watched task's event goes further.
 * Each is counted as an op of kind VIEW (ioacct_ops.h).
 */

/* Set by the daemon before load: log2 of the page size. */
const volatile __u32 page_shift = 12;

/* The byte range a read asks for, for the page-cache view (see task_ent). */
static __always_inline void read_range(struct task_ent *t, struct file *f, long count, long off,
				       __u32 flags)
{
	__s64 lo = flags & IOACCT_SKF_POS ? off : -1;

	if (lo < 0)
		lo = KREAD(struct file, f, f_pos);
	t->rq_lo = lo;
	t->rq_hi = (flags & IOACCT_SKF_VEC) || count < 0 ? ~0ULL : (__u64)lo + count;
}

/* The IOACCT_HINT_ class of a posix_fadvise or madvise advice. */
static __always_inline __u32 advice_class(long advice, bool madv)
{
	if (advice >= 0 && advice <= 4)
		return advice; /* NORMAL, RANDOM, SEQUENTIAL, WILLNEED, DONTNEED: the same in both */
	if (!madv)
		return advice == 5 ? IOACCT_HINT_NOREUSE : IOACCT_HINT_OTHER;
	switch (advice) {
	case 8:  /* MADV_FREE */
	case 9:  /* MADV_REMOVE */
		return IOACCT_HINT_FREE;
	case 20: /* MADV_COLD */
	case 21: /* MADV_PAGEOUT */
		return IOACCT_HINT_COLD;
	case 14: /* MADV_HUGEPAGE */
	case 15: /* MADV_NOHUGEPAGE */
	case 25: /* MADV_COLLAPSE */
		return IOACCT_HINT_HUGEPAGE;
	default:
		return IOACCT_HINT_OTHER;
	}
}
