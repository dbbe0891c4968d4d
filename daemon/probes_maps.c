// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's side of the BPF object, after loading (probes.c): the map
 * operations (watched cgroups, slots, mount points, reading and deleting
 * counters, the accumulators' flush), the FMODE_CREATED calibration and the
 * programs' run time. probes.h states what each does.
 */
#include "probes.h"
#include "probes_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "procfs.h"
#include "util.h"

/* ---- map operations ------------------------------------------------------------------- */

int ioacct_probes_watch_add(struct ioacct_probes *p, uint64_t cgroup_id, uint32_t hier, uint32_t slot)
{
	struct ioacct_watch_key k = { .cgroup_id = cgroup_id, .hier = hier };
	struct ioacct_watch_val v = { .slot = slot };

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.watch), &k, &v, BPF_ANY))
		return -errno;
	return 0;
}

int ioacct_probes_watch_del(struct ioacct_probes *p, uint64_t cgroup_id, uint32_t hier)
{
	struct ioacct_watch_key k = { .cgroup_id = cgroup_id, .hier = hier };

	if (bpf_map_delete_elem(bpf_map__fd(p->skel->maps.watch), &k) && errno != ENOENT)
		return -errno;
	return 0;
}

int ioacct_probes_publish(struct ioacct_probes *p)
{
	int fd = bpf_map__fd(p->skel->maps.watch);
	struct ioacct_watch_key k, next, *prev = NULL;
	uint32_t v1 = 0, v2 = 0;
	char err[512] = "";
	int ret;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (next.hier == IOACCT_HIER_V1)
			v1++;
		else
			v2++;
		k = next;
		prev = &k;
	}
	p->st.nwatch_v1 = v1;
	p->st.nwatch_v2 = v2;
	p->st.nactive = v1 + v2 + (p->st.calib_tgid ? 1 : 0);
	p->st.gen++;
	ret = probes_publish_state(p);
	if (!ret)
		ret = probes_sync_attach(p, err, sizeof(err));
	if (ret && err[0])
		log_warn("%s", err);
	if (p->on_publish)
		p->on_publish(p->on_publish_ctx, v1 + v2);
	return ret;
}

void ioacct_probes_on_publish(struct ioacct_probes *p, void (*fn)(void *ctx, uint32_t nwatched),
			      void *ctx)
{
	p->on_publish = fn;
	p->on_publish_ctx = ctx;
	if (fn)
		fn(ctx, p->st.nwatch_v1 + p->st.nwatch_v2);
}

bool ioacct_probes_attached(const struct ioacct_probes *p)
{
	return p->nlinks > 0;
}

/*
 * Forgets the mount notes of a slot's earlier steps: no job is named from
 * another job's notes. The walk of flive_forget().
 */
static void mount_notes_forget(struct ioacct_probes *p, uint32_t slot)
{
	int fd = bpf_map__fd(p->skel->maps.mntnotes);
	struct ioacct_mnt_note_key k, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		if (k.slot == slot && bpf_map_delete_elem(fd, &k) == 0)
			continue; /* deleted: the walk goes on from the key before it */
		prev = &k;
	}
}

int ioacct_probes_slot_set(struct ioacct_probes *p, uint32_t slot, uint64_t start_mono_ns,
			   uint64_t width_ns)
{
	struct ioacct_slot s = { .start_ns = start_mono_ns, .width_ns = width_ns, .active = 1 };

	mount_notes_forget(p, slot);
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.slots), &slot, &s, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * Inactive, but with its start kept: the tasks' accumulators hold calls
 * counted under that start, which the finishing step's read must still get
 * (acc_flush).
 */
int ioacct_probes_slot_clear(struct ioacct_probes *p, uint32_t slot)
{
	int fd = bpf_map__fd(p->skel->maps.slots);
	struct ioacct_slot s = { 0 };

	if (bpf_map_lookup_elem(fd, &slot, &s))
		return -errno;
	s.active = 0;
	if (bpf_map_update_elem(fd, &slot, &s, BPF_ANY))
		return -errno;
	return 0;
}

/* Sets one key of the path table, writing only when it changes. */
static int mountpoint_key_set(int fd, const struct ioacct_mp_key *k, uint64_t mnt_id)
{
	struct ioacct_mp_val v = { .mnt_id = mnt_id }, cur;

	if (bpf_map_lookup_elem(fd, k, &cur) == 0 && cur.mnt_id == mnt_id)
		return 0;
	if (bpf_map_update_elem(fd, k, &v, BPF_ANY))
		return -errno;
	return 0;
}

int ioacct_probes_mountpoint_add(struct ioacct_probes *p, uint32_t mntns, const char *path,
				 uint64_t mnt_id)
{
	struct ioacct_mp_key k;
	size_t len = strlen(path);
	int fd = bpf_map__fd(p->skel->maps.mountpoints);
	int ret;

	/* The mount point itself, NUL included, and everything below it ("dir/"). */
	if (len + 2 > sizeof(k.path))
		return -ENAMETOOLONG;
	memset(&k, 0, sizeof(k));
	k.mntns = mntns;
	memcpy(k.path, path, len + 1);
	k.prefixlen = 32 + 8 * (uint32_t)(len + 1);
	ret = mountpoint_key_set(fd, &k, mnt_id);
	if (ret)
		return ret;
	if (len == 1) /* "/" already ends with its separator */
		k.prefixlen = 32 + 8;
	else {
		k.path[len] = '/';
		k.path[len + 1] = '\0';
		k.prefixlen = 32 + 8 * (uint32_t)(len + 1);
	}
	return mountpoint_key_set(fd, &k, mnt_id);
}

/*
 * The new table is built first (the visible mount of each mount point), then
 * each key goes straight from its old value to its new one: a key is never
 * rewritten, so a lookup never sees a hidden mount of a stack, even for the
 * moment between two writes (a restart republishing every job's table gave
 * paths below /dev/shm the lower tmpfs, and the job a duplicate mount row).
 */
int ioacct_probes_mountpoints_set(struct ioacct_probes *p, uint32_t mntns,
				  const struct ioacct_mount *m, size_t n)
{
	const struct ioacct_mount **v = n ? calloc(n, sizeof(*v)) : NULL;
	size_t k;
	int ret = 0;

	if (n && !v)
		return -ENOMEM;
	k = ioacct_mounts_visible(m, n, v);
	for (size_t i = 0; i < k; i++) {
		int r;

		if (p->unique_ids && v[i]->mnt_id < IOACCT_MNT_UNIQUE_MIN)
			continue;
		r = ioacct_probes_mountpoint_add(p, mntns, v[i]->path, v[i]->mnt_id);

		if (r == -ENAMETOOLONG)
			log_debug("mount point %s too long for path matching", v[i]->path);
		else if (r && !ret)
			ret = r;
		if (r && r != -ENAMETOOLONG)
			log_warn("cannot add mount point %s: %s", v[i]->path, strerror(-r));
	}
	free(v);
	return ret;
}

int ioacct_probes_watch_list(struct ioacct_probes *p, struct ioacct_probe_watch **out, size_t *n)
{
	int fd = bpf_map__fd(p->skel->maps.watch);
	struct ioacct_watch_key k, next, *prev = NULL;
	struct ioacct_probe_watch *w = NULL, *nw;
	struct ioacct_watch_val v;
	size_t cnt = 0, cap = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue; /* deleted meanwhile */
		if (cnt == cap) {
			cap = cap ? 2 * cap : 64;
			nw = reallocarray(w, cap, sizeof(*w));
			if (!nw) {
				free(w);
				return -ENOMEM;
			}
			w = nw;
		}
		w[cnt].cgroup_id = k.cgroup_id;
		w[cnt].hier = k.hier;
		w[cnt].slot = v.slot;
		cnt++;
	}
	*out = w;
	*n = cnt;
	return 0;
}

int ioacct_probes_mount_note(struct ioacct_probes *p, uint64_t mnt_id, uint32_t slot,
			     struct ioacct_mntid_note *out)
{
	struct ioacct_mnt_note_key k = { .mnt_id = mnt_id, .slot = slot };
	struct ioacct_mnt_note n;

	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.mntnotes), &k, &n))
		return -errno;
	/* The kernel's strings are NUL-terminated by bpf_probe_read_kernel_str; make sure. */
	n.fstype[sizeof(n.fstype) - 1] = '\0';
	n.path[sizeof(n.path) - 1] = '\0';
	if (!n.fstype[0] || n.path[0] != '/')
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->first_ns = n.first_ns;
	out->slot_start = n.slot_start;
	out->mntns = n.mntns;
	out->mnt_id_old = n.mnt_id_old;
	out->complete = n.flags & IOACCT_NOTE_PATH_COMPLETE;
	ioacct_strlcpy(out->fstype, n.fstype, sizeof(out->fstype));
	ioacct_strlcpy(out->path, n.path, sizeof(out->path));
	return 0;
}

/* Appends one entry (its per-CPU values summed) to *e. */
static int entry_add(struct ioacct_probes *p, const struct ioacct_stat_key *k, const uint8_t *vals,
		     size_t vsz, struct ioacct_probe_entry **e, size_t *cnt, size_t *cap)
{
	struct ioacct_probe_entry *x;

	if (*cnt == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct ioacct_probe_entry *ne = realloc(*e, ncap * sizeof(**e));

		if (!ne)
			return -ENOMEM;
		*e = ne;
		*cap = ncap;
	}
	x = &(*e)[(*cnt)++];
	memset(x, 0, sizeof(*x));
	x->slot = k->slot;
	x->mnt_id = k->mnt_id;
	x->op = k->op;
	x->bin = k->bin;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		const struct ioacct_stat_val *v = (const void *)(vals + vsz * (size_t)cpu);
		struct ioacct_counters c = { .bytes = v->bytes, .calls = v->calls, .ns = v->ns };

		memcpy(c.size_hist, v->size, sizeof(c.size_hist));
		/* The kernel counts failed calls per class only: errors is their sum. */
		for (unsigned int ec = 0; ec < IOACCT_NR_ERR_CLASSES; ec++) {
			c.errclass[ec] = v->errors[ec];
			c.errors += v->errors[ec];
		}
		ioacct_counters_add(&x->c, &c);
	}
	return 0;
}

/*
 * The whole table in batches of up to 1,024 entries per bpf() call (kernel
 * 5.6+): at 60,000 entries a key-by-key walk costs 120,000 system calls.
 * -EINVAL and -EOPNOTSUPP tell the caller to walk key by key instead.
 */
static int read_batched(struct ioacct_probes *p, int fd, size_t vsz,
			bool (*want)(uint32_t slot, uint32_t bin, void *ctx), void *ctx,
			struct ioacct_probe_entry **e, size_t *cnt, size_t *cap)
{
	uint32_t nbatch = 1024, token = 0;
	struct ioacct_stat_key *keys = NULL;
	bool first = true, done = false;
	uint8_t *vals = NULL;
	int ret = 0;

	while (!done) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		__u32 count = nbatch;
		uint32_t next = 0;

		if (!keys) {
			keys = calloc(nbatch, sizeof(*keys));
			vals = calloc(nbatch, vsz * (size_t)p->ncpus);
			if (!keys || !vals) {
				ret = -ENOMEM;
				break;
			}
		}
		ret = bpf_map_lookup_batch(fd, first ? NULL : &token, &next, keys, vals, &count, &opts);
		if (ret && errno == ENOSPC && nbatch < (1u << 20)) {
			/* A bucket holds more than a batch: larger buffers, same place. */
			nbatch *= 4;
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			continue;
		}
		if (ret && errno != ENOENT) {
			ret = -errno;
			break;
		}
		done = ret != 0; /* ENOENT: this was the last batch */
		ret = 0;
		for (__u32 i = 0; i < count && !ret; i++)
			if (!want || want(keys[i].slot, keys[i].bin, ctx))
				ret = entry_add(p, &keys[i], vals + vsz * (size_t)p->ncpus * i, vsz, e, cnt,
						cap);
		token = next;
		first = false;
	}
	free(keys);
	free(vals);
	return ret;
}

/* One run of the accumulators' flush over every task; *busy: the tasks it must visit again. */
static int acc_iter_run(struct ioacct_probes *p, uint64_t *busy)
{
	char buf[64];
	ssize_t got;
	int fd;

	p->skel->bss->acc_busy = 0;
	fd = bpf_iter_create(bpf_link__fd(p->acc_iter));
	if (fd < 0)
		return -errno;
	while ((got = read(fd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EAGAIN))
		;
	got = got < 0 ? -errno : 0;
	close(fd);
	*busy = p->skel->bss->acc_busy;
	return (int)got;
}

/*
 * Moves what the tasks' accumulators hold into stats (issue 18), before any
 * read of it: a bin is drained (and its row replaced in the store) only
 * once, so nothing may reach it afterwards but the calls that end within a
 * bin width of the read, as without accumulators; and a finishing step gets
 * what its living tasks hold. A task that holds its accumulator while the
 * iterator passes it (tens of ns per call) is visited again; those flushed
 * in this read are not (acc_pass).
 */
static int acc_collect(struct ioacct_probes *p)
{
	struct timespec ts;
	uint64_t busy = 0;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->skel->bss->acc_pass = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	for (int i = 0; i < 10000 && !ret; i++) {
		ret = acc_iter_run(p, &busy);
		if (!busy)
			break;
		sched_yield();
	}
	if (!ret && busy)
		ret = -EBUSY;
	if (ret)
		log_warn("cannot flush the tasks' accumulators: %s", strerror(-ret));
	return ret;
}

int ioacct_probes_read(struct ioacct_probes *p,
		       bool (*want)(uint32_t slot, uint32_t bin, void *ctx), void *ctx,
		       struct ioacct_probe_entry **out, size_t *n)
{
	int fd = bpf_map__fd(p->skel->maps.stats);
	size_t vsz = (sizeof(struct ioacct_stat_val) + 7) / 8 * 8;
	struct ioacct_stat_key k, next, *prev = NULL;
	struct ioacct_probe_entry *e = NULL;
	size_t cnt = 0, cap = 0;
	uint8_t *vals;
	int ret;

	ret = acc_collect(p);
	if (ret)
		return ret;
	ret = read_batched(p, fd, vsz, want, ctx, &e, &cnt, &cap);
	if (ret != -EINVAL && ret != -EOPNOTSUPP && ret != -524 /* ENOTSUPP */)
		goto out;
	/* A kernel without batch operations: key by key. */
	cnt = 0;
	ret = 0;
	vals = malloc(vsz * (size_t)p->ncpus);
	if (!vals) {
		ret = -ENOMEM;
		goto out;
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0 && !ret) {
		k = next;
		prev = &k;
		if (want && !want(k.slot, k.bin, ctx))
			continue;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue; /* deleted meanwhile */
		ret = entry_add(p, &k, vals, vsz, &e, &cnt, &cap);
	}
	free(vals);
out:
	if (ret) {
		free(e);
		return ret;
	}
	*out = e;
	*n = cnt;
	return 0;
}

/* The keys of slot's per-file records, *out malloc'd. */
static int files_keys(struct ioacct_probes *p, uint32_t slot, struct ioacct_file_key **out, size_t *n)
{
	int fd = bpf_map__fd(p->skel->maps.files);
	struct ioacct_file_key k, next, *prev = NULL, *keys = NULL, *nk;
	size_t cnt = 0, cap = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (k.slot != slot)
			continue;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 64;
			nk = reallocarray(keys, cap, sizeof(*keys));
			if (!nk) {
				free(keys);
				return -ENOMEM;
			}
			keys = nk;
		}
		keys[cnt++] = k;
	}
	*out = keys;
	*n = cnt;
	return 0;
}

/* The records of one inode together, by rank, mount, dev, ino, then in the order they were made. */
static int file_life_cmp(const void *a, const void *b)
{
	const struct ioacct_probe_file *x = a, *y = b;
	int64_t kx[] = { x->k.rank, x->k.mnt_id, x->k.dev };
	int64_t ky[] = { y->k.rank, y->k.mnt_id, y->k.dev };

	for (size_t i = 0; i < ARRAY_SIZE(kx); i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	if (x->k.ino != y->k.ino)
		return x->k.ino < y->k.ino ? -1 : 1;
	if (x->v.born != y->v.born)
		return x->v.born < y->v.born ? -1 : 1;
	return 0;
}

/*
 * Each stat-only record of no known life (IOACCT_FILE_NOGEN: stat'ed by
 * path before the step had a record of the inode) into the record of the
 * inode's life made next after it: a stat that precedes an open (a loader,
 * Python's importer) is of the file opened. Else the last life made before
 * it; none: it stays a record of its own, a file only stat'ed.
 */
static void files_fold(struct ioacct_probe_file *f, size_t n)
{
	qsort(f, n, sizeof(*f), file_life_cmp);
	for (size_t i = 0; i < n; i++)
		f[i].fold = f[i].fold_next = -1;
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && f[end].k.rank == f[i].k.rank &&
				  f[end].k.mnt_id == f[i].k.mnt_id && f[end].k.dev == f[i].k.dev &&
				  f[end].k.ino == f[i].k.ino;
		     end++)
			;
		for (size_t j = i; j < end; j++) {
			long to = -1;

			if (!(f[j].k.idflags & IOACCT_FILE_NOGEN))
				continue;
			for (size_t k = j + 1; k < end && to < 0; k++)
				if (!(f[k].k.idflags & IOACCT_FILE_NOGEN))
					to = (long)k;
			for (size_t k = j; k > i && to < 0; k--)
				if (!(f[k - 1].k.idflags & IOACCT_FILE_NOGEN))
					to = (long)k - 1;
			if (to < 0)
				continue;
			f[j].folded = true;
			f[j].fold_next = f[to].fold;
			f[to].fold = (long)j;
		}
	}
}

int ioacct_probes_files_read(struct ioacct_probes *p, uint32_t slot, struct ioacct_probe_file **out,
			     size_t *n)
{
	int fd = bpf_map__fd(p->skel->maps.files), pfd = bpf_map__fd(p->skel->maps.fpaths);
	struct ioacct_file_key *keys = NULL;
	struct ioacct_probe_file *f;
	struct ioacct_mnt_note note;
	size_t nk = 0, cnt = 0;
	int ret;

	ret = files_keys(p, slot, &keys, &nk);
	if (ret)
		return ret;
	f = nk ? calloc(nk, sizeof(*f)) : NULL;
	if (nk && !f) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nk; i++) {
		struct ioacct_probe_file *x = &f[cnt];

		if (bpf_map_lookup_elem(fd, &keys[i], &x->v))
			continue; /* deleted meanwhile */
		x->k = keys[i];
		if (bpf_map_lookup_elem(pfd, &keys[i], &note) == 0) {
			note.path[sizeof(note.path) - 1] = '\0';
			ioacct_strlcpy(x->path, note.path, sizeof(x->path));
			x->complete = note.flags & IOACCT_NOTE_PATH_COMPLETE;
		}
		cnt++;
	}
	free(keys);
	files_fold(f, cnt);
	*out = f;
	*n = cnt;
	return 0;
}

/* A kernel time as the job's time (from its start), -1 for none. */
static int64_t file_time(uint64_t t, uint64_t start)
{
	return t ? (int64_t)(t > start ? t - start : 0) : -1;
}

/* One record of the kernel as stored, its table of access sizes ranked (model.h). */
static void file_row(struct ioacct_file *f, const struct ioacct_probe_file *x, uint32_t step_id,
		     uint64_t start)
{
	const struct ioacct_file_val *v = &x->v;

	memset(f, 0, sizeof(*f));
	f->step_id = step_id;
	f->rank = x->k.rank;
	f->mnt_id = x->k.mnt_id;
	f->dev = x->k.dev;
	f->ino = x->k.ino;
	f->gen = x->k.gen;
	/* A path the kernel could not note whole keeps its last components. */
	snprintf(f->path, sizeof(f->path), "%s%s", x->path[0] && !x->complete ? "..." : "", x->path);
	f->opens = v->opens;
	f->reads = v->reads;
	f->writes = v->writes;
	f->stats = v->stats;
	f->fsyncs = v->fsyncs;
	f->bytes_read = v->bytes_read;
	f->bytes_written = v->bytes_written;
	f->read_ns = v->read_ns;
	f->write_ns = v->write_ns;
	f->meta_ns = v->meta_ns;
	f->max_byte_read = v->max_byte_read;
	f->max_byte_written = v->max_byte_written;
	f->seq_reads = v->seq_reads;
	f->seq_writes = v->seq_writes;
	f->consec_reads = v->consec_reads;
	f->consec_writes = v->consec_writes;
	f->first_read_ns = file_time(v->first_read, start);
	f->last_read_ns = file_time(v->last_read, start);
	f->first_write_ns = file_time(v->first_write, start);
	f->last_write_ns = file_time(v->last_write, start);
	memcpy(f->size_read, v->size_read, sizeof(f->size_read));
	memcpy(f->size_written, v->size_written, sizeof(f->size_written));
	f->mmap_bytes = v->mmap_bytes;
	f->cache_miss_bytes = v->cache_miss_bytes;
	f->seeks = v->seeks;
	f->rw_switches = v->rw_switches;
	/* The table holds each size + 1, 0 being a free entry (ioacct_abi.h). */
	for (size_t i = 0; i < IOACCT_FILE_ACCESS_MAX; i++)
		if (v->acc_size[i] > 1)
			ioacct_file_access_add(f, v->acc_size[i] - 1, v->acc_count[i]);
}

void ioacct_probes_file_row(const struct ioacct_probe_file *files, size_t i, uint32_t step_id,
			    uint64_t start_mono, struct ioacct_file *f)
{
	struct ioacct_file g;

	file_row(f, &files[i], step_id, start_mono);
	for (long k = files[i].fold; k >= 0; k = files[k].fold_next) {
		file_row(&g, &files[k], step_id, start_mono);
		ioacct_file_add(f, &g);
	}
}

/* The lives of the slot's inodes (flive), which its next step must not inherit. */
static void flive_forget(struct ioacct_probes *p, uint32_t slot)
{
	int fd = bpf_map__fd(p->skel->maps.flive);
	struct ioacct_flive_key k, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		if (k.slot == slot && bpf_map_delete_elem(fd, &k) == 0)
			continue; /* deleted: the walk goes on from the key before it */
		prev = &k;
	}
}

int ioacct_probes_files_forget(struct ioacct_probes *p, uint32_t slot)
{
	int fd = bpf_map__fd(p->skel->maps.files), pfd = bpf_map__fd(p->skel->maps.fpaths);
	struct ioacct_file_key *keys = NULL;
	uint64_t zero = 0;
	size_t nk = 0;
	int ret;

	ret = files_keys(p, slot, &keys, &nk);
	if (ret)
		return ret;
	for (size_t i = 0; i < nk; i++) {
		if (bpf_map_delete_elem(fd, &keys[i]) && errno != ENOENT && !ret)
			ret = -errno;
		bpf_map_delete_elem(pfd, &keys[i]);
	}
	free(keys);
	flive_forget(p, slot);
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.fcount), &slot, &zero, BPF_ANY) && !ret)
		ret = -errno;
	return ret;
}

int ioacct_probes_delete(struct ioacct_probes *p, const struct ioacct_probe_entry *e, size_t n)
{
	int fd = bpf_map__fd(p->skel->maps.stats);
	struct ioacct_stat_key keys[256];
	bool batch = true;
	size_t i = 0;

	while (i < n) {
		__u32 count = 0;

		while (count < 256 && i + count < n) {
			const struct ioacct_probe_entry *x = &e[i + count];

			keys[count++] = (struct ioacct_stat_key){ .slot = x->slot, .mnt_id = x->mnt_id,
								  .bin = x->bin, .op = x->op };
		}
		if (batch) {
			LIBBPF_OPTS(bpf_map_batch_opts, opts);
			__u32 done = count;

			if (bpf_map_delete_batch(fd, keys, &done, &opts) == 0) {
				i += count;
				continue;
			}
			if (errno == ENOENT) {
				i += done + 1; /* gone already: the ones after it are next */
				continue;
			}
			if (errno != EINVAL && errno != EOPNOTSUPP && errno != 524 /* ENOTSUPP */)
				return -errno;
			batch = false; /* an old kernel: one by one */
		}
		for (__u32 k = 0; k < count; k++)
			if (bpf_map_delete_elem(fd, &keys[k]) && errno != ENOENT)
				return -errno;
		i += count;
	}
	return 0;
}

int ioacct_probes_count(struct ioacct_probes *p, uint32_t *n)
{
	int fd = bpf_map__fd(p->skel->maps.stats);
	struct ioacct_stat_key k, next, *prev = NULL;
	uint32_t cnt = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		cnt++;
	}
	*n = cnt;
	return 0;
}

int ioacct_probes_dropped(struct ioacct_probes *p, uint32_t slot, uint64_t *events, uint64_t *bytes,
			  bool reset)
{
	int fd = bpf_map__fd(p->skel->maps.dropped);
	size_t vsz = (sizeof(struct ioacct_drop_val) + 7) / 8 * 8;
	uint8_t *vals = calloc((size_t)p->ncpus, vsz);
	int ret = 0;

	if (!vals)
		return -ENOMEM;
	*events = *bytes = 0;
	if (bpf_map_lookup_elem(fd, &slot, vals)) {
		ret = -errno;
		goto out;
	}
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		const struct ioacct_drop_val *d = (const void *)(vals + vsz * (size_t)cpu);

		*events += d->events;
		*bytes += d->bytes;
	}
	if (reset) {
		memset(vals, 0, vsz * (size_t)p->ncpus);
		if (bpf_map_update_elem(fd, &slot, vals, BPF_ANY))
			ret = -errno;
	}
out:
	free(vals);
	return ret;
}

/* ---- FMODE_CREATED calibration ---------------------------------------------------------- */

static int calib_open(struct ioacct_probes *p, const char *path, int flags, uint32_t *fmode)
{
	uint32_t zero = 0;
	struct ioacct_state st;
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.state), &zero, &st))
		return -errno;
	*fmode = (uint32_t)st.calib_fmode[0];
	return 0;
}

int ioacct_probes_calibrate(struct ioacct_probes *p, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	uint32_t created = 0, existing = 0, bit;
	int ret, ret2;

	snprintf(path, sizeof(path), "%s/.ioacct-calibrate-%d", dir, (int)getpid());
	unlink(path);
	p->st.calib_tgid = (uint32_t)getpid();
	ret = ioacct_probes_publish(p);
	if (ret) {
		snprintf(err, errlen, "cannot start calibration: %s", strerror(-ret));
		return ret;
	}
	ret = calib_open(p, path, O_WRONLY | O_CREAT | O_EXCL, &created);
	if (!ret)
		ret = calib_open(p, path, O_WRONLY | O_CREAT, &existing);
	unlink(path);
	p->st.calib_tgid = 0;
	ret2 = ioacct_probes_publish(p);
	if (ret || ret2) {
		snprintf(err, errlen, "calibration open in %s failed: %s", dir,
			 strerror(ret ? -ret : -ret2));
		return ret ? ret : ret2;
	}
	bit = created & ~existing;
	if (!bit || (bit & (bit - 1))) {
		snprintf(err, errlen,
			 "cannot tell FMODE_CREATED from f_mode 0x%x (created) and 0x%x (existing): "
			 "opens that create files are not counted as creates",
			 created, existing);
		return -EPROTO;
	}
	p->st.fmode_created = bit;
	return probes_publish_state(p);
}

uint32_t ioacct_probes_fmode_created(const struct ioacct_probes *p)
{
	return p->st.fmode_created;
}

/* ---- run time of the programs (kernel.bpf_stats_enabled) ------------------------------- */

int ioacct_probes_run_stats(struct ioacct_probes *p, uint64_t *run_ns, uint64_t *run_cnt)
{
	return ioacct_probes_run_stats_of(p, NULL, run_ns, run_cnt);
}

int ioacct_probes_run_stats_of(struct ioacct_probes *p, const char *prefix, uint64_t *run_ns,
			       uint64_t *run_cnt)
{
	struct bpf_program *prog;
	bool any = false;

	*run_ns = 0;
	*run_cnt = 0;
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || (prefix && strncmp(bpf_program__name(prog), prefix, strlen(prefix))))
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*run_ns += info.run_time_ns;
		*run_cnt += info.run_cnt;
		any = true;
	}
	return any ? 0 : -ENOENT;
}

int ioacct_probes_map_fd(struct ioacct_probes *p, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(p->skel->obj, name);
	int fd = m ? bpf_map__fd(m) : -1;

	return fd >= 0 ? fd : -ENOENT;
}
