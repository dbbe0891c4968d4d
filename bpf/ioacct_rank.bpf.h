/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The task's rank for its per-file records (issues 26, 38): the process's
 * environment scanned once per task and exec (ioacct_task_rank()).
 *
 * A part of ioacct.bpf.c, not a header of its own: included once, by
 * ioacct.bpf.c only, right before ioacct_files.bpf.h, which calls it, and
 * using what the parts before it define.
 */
/*
 * The task's rank (issue 26), as Darshan has it: under mpirun the MPI rank
 * (OMPI_COMM_WORLD_RANK, PMI_RANK), else the Slurm task (SLURM_PROCID),
 * else -1. Read from the task's environment, the strings its exec was
 * given (mm->env_start..env_end), once per task and address space: task
 * storage is not inherited, so a forked child reads its own copy.
 */
#define RANK_VARS 3
#define RANK_NAME_MAX 32
#define RANK_CHUNK 4096 /* a read never crosses a 4 KiB boundary, so never a page's end */
#define RANK_ENV_MAX 65536 /* an environment's bytes looked at: Slurm's is ~10 KiB */

/* The variables, the ones that win first (an MPI rank over the Slurm task). */
static const char rank_names[RANK_VARS][RANK_NAME_MAX] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK",
							   "SLURM_PROCID" };
static const __u32 rank_lens[RANK_VARS] = { 20, 8, 12 };

enum { RS_NAME, RS_VALUE, RS_SKIP };

/* Where rank_byte() works: a chunk of the environment and the scan's state. */
struct rank_scan {
	char buf[RANK_CHUNK];
	__u64 addr;	/* the next byte to read */
	__u64 left;	/* the bytes still to read */
	__u64 stamp;	/* whose scan it is (ioacct_task_rank()) */
	__u32 have;	/* the bytes in buf */
	__u32 at;	/* the next of them */
	__s64 val[RANK_VARS]; /* each variable's value, -1: none seen */
	__s64 cur;	/* the value being read */
	__u32 state;	/* RS_* */
	__u32 pos;	/* the name's bytes seen */
	__u32 match;	/* the variables the name still matches, a bit each */
	__u32 which;	/* RS_VALUE: the variable */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rank_scan);
} rankscratch SEC(".maps");

/* A name's byte c at s->pos: which variables it still matches. */
static __always_inline void rank_name_byte(struct rank_scan *s, char c)
{
	__u32 pos = s->pos & (RANK_NAME_MAX - 1);

	for (int k = 0; k < RANK_VARS; k++)
		if (s->pos >= rank_lens[k] || rank_names[k][pos] != c)
			s->match &= ~(1U << k);
	s->pos++;
}

/* The end of a name ('='): its value is read when it is one of the variables'. */
static __always_inline void rank_name_end(struct rank_scan *s)
{
	s->state = RS_SKIP;
	for (int k = 0; k < RANK_VARS; k++) {
		if ((s->match & (1U << k)) && s->pos == rank_lens[k]) {
			s->state = RS_VALUE;
			s->which = k;
			s->cur = -1;
			return;
		}
	}
}

/*
 * The next byte of the strings: a bpf_loop callback, verified once. Reads
 * in chunks that end at 4 KiB boundaries, so that where the strings' end is
 * not known (an exec in progress) the first page past the stack ends the
 * scan, having read everything before it.
 */
static long rank_byte(__u64 i, void *ctx)
{
	struct rank_scan *s = *(struct rank_scan **)ctx;
	__u64 n;
	char c;

	if (s->at >= s->have) {
		n = RANK_CHUNK - (s->addr & (RANK_CHUNK - 1));
		if (n > s->left)
			n = s->left;
		/* The compiler drops a bound it can prove idle; the verifier needs to see it. */
		asm volatile("%0 &= 8191" : "+r"(n));
		if (!n || n > RANK_CHUNK || bpf_probe_read_user(s->buf, n, (void *)s->addr))
			return 1;
		s->addr += n;
		s->left -= n;
		s->have = n;
		s->at = 0;
	}
	c = s->buf[s->at & (RANK_CHUNK - 1)];
	s->at++;
	if (!c) {
		/* A variable's end: its value is whole, the next one's name begins. */
		if (s->state == RS_VALUE && s->cur >= 0 && s->which < RANK_VARS)
			s->val[s->which] = s->cur;
		s->state = RS_NAME;
		s->pos = 0;
		s->match = (1U << RANK_VARS) - 1;
	} else if (s->state == RS_NAME) {
		if (c == '=')
			rank_name_end(s);
		else
			rank_name_byte(s, c);
	} else if (s->state == RS_VALUE) {
		if (c >= '0' && c <= '9' && s->cur < 100000000)
			s->cur = (s->cur < 0 ? 0 : s->cur * 10) + (c - '0');
		else
			s->state = RS_SKIP;
	}
	return 0;
}

/*
 * Scans len bytes of strings from addr into s; 0, or -1 when another scan
 * took the CPU's scratch meanwhile (a kernel that preempts programs).
 */
static __always_inline int rank_scan_once(struct rank_scan *s, __u64 addr, __u64 len)
{
	__u64 stamp = bpf_get_current_pid_tgid() ^ bpf_ktime_get_ns();

	s->stamp = stamp;
	s->addr = addr;
	s->left = len;
	s->have = s->at = 0;
	s->state = RS_NAME;
	s->pos = 0;
	s->match = (1U << RANK_VARS) - 1;
	for (int k = 0; k < RANK_VARS; k++)
		s->val[k] = -1;
	bpf_loop(len, rank_byte, &s, 0);
	return s->stamp == stamp ? 0 : -1;
}

/*
 * Reads the current task's rank into t, when it has none yet for its
 * address space: its first file record after its creation or an exec. A
 * global function: verified once per program, as the ones below.
 *
 * Rank never lost (issue 38): a record can be made before the exec has set
 * the new environment's bounds (env_end 0: create_elf_tables() has not run,
 * and a page of the binary or of ld.so read meanwhile, for a .bss's first
 * page, is a page-cache miss of the new process). The strings are in place
 * already, from mm->arg_start (setup_arg_pages()) to the stack's top: they
 * are read there, and not remembered, so the next record reads the
 * environment proper. Nor is a scan whose scratch another took.
 */
__noinline int ioacct_task_rank(struct task_ent *t)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rank_scan *s;
	__u64 mm, start, end;
	__u32 zero = 0;
	bool keep = true;

	if (!t)
		return 0;
	/* Plain loads through the task's BTF pointer: this runs on every new file. */
	mm = (__u64)task->mm;
	if (t->rank_mm == mm && mm)
		return 0;
	t->rank_mm = 0;
	t->rank = -1;
	s = bpf_map_lookup_elem(&rankscratch, &zero);
	if (!s || !mm)
		return 0;
	start = task->mm->env_start;
	end = task->mm->env_end;
	if (!end) {
		start = task->mm->arg_start;
		end = start + RANK_ENV_MAX;
		keep = false;
		if (!start)
			return 0;
	}
	if (end < start)
		return 0;
	if (end - start > RANK_ENV_MAX)
		end = start + RANK_ENV_MAX;
	if (rank_scan_once(s, start, end - start) && rank_scan_once(s, start, end - start))
		return 0;
	/* The last variable may end the scan without its NUL (a cut-off environment). */
	for (int k = 0; k < RANK_VARS; k++) {
		if (s->val[k] >= 0) {
			t->rank = (__s32)s->val[k];
			break;
		}
	}
	if (keep)
		t->rank_mm = mm;
	return 0;
}
