// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The RPCs per job (issue 40): loading ioacct_rpc.bpf.c when the kernel
 * has sunrpc, and reading its counters (rpcprobes.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ioacct_abi.h"
#include "ioacct_rpc_abi.h"
#include "ioacct_rpc.skel.h"
#include "log.h"
#include "mntid.h"
#include "rpcbtf.h"
#include "rpcprobes.h"
#include "util.h"

/* The kernel's counters are the model's, in its order. */
#define RPC_SAME(f) _Static_assert(offsetof(struct ioacct_rpc_val, f) - offsetof(struct ioacct_rpc_val, calls) == \
				   offsetof(struct ioacct_rpc, f) - offsetof(struct ioacct_rpc, calls), #f);
IOACCT_RPC_COUNTERS(RPC_SAME)
_Static_assert(IOACCT_RPC_PNAME_MAX == IOACCT_RPC_NAME_MAX, "the procedure names' size");

/* An unattributed counter as read at a step's start. */
struct ucount {
	struct ioacct_rpc_ukey k;
	struct ioacct_rpc_val v;
};

struct baseline {
	struct ucount *c;
	size_t n;
	bool taken;
};

struct ioacct_rpcprobes {
	struct ioacct_probes *p;
	uint32_t v1_ssid;
	struct ioacct_rpc_bpf *skel;
	struct bpf_link *links[2];
	struct bpf_link *wb[4];  /* background writeback's, a job's files' (the nfs module's tracepoints) */
	bool failed;           /* loading failed, or rpc_probes = no: not tried again (said once) */
	bool said_absent;
	char mode[40];
	int ncpus;
	uint32_t nslots;
	struct baseline *base; /* per slot */
};

/* Whether sunrpc is in the kernel: a module loaded, or built in (both have /sys/module/sunrpc). */
static bool sunrpc_present(void)
{
	return access("/sys/module/sunrpc", F_OK) == 0;
}

struct ioacct_rpcprobes *ioacct_rpcprobes_create(struct ioacct_probes *p, uint32_t v1_ssid,
						 bool enabled)
{
	struct ioacct_rpcprobes *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->p = p;
	rp->v1_ssid = v1_ssid;
	rp->nslots = ioacct_probes_max_jobs(p);
	rp->ncpus = libbpf_num_possible_cpus();
	rp->base = calloc(rp->nslots, sizeof(*rp->base));
	if (!rp->base || rp->ncpus <= 0) {
		free(rp->base);
		free(rp);
		return NULL;
	}
	if (!enabled) {
		/* Never loaded: ioacct_rpcprobes_try() returns at once. */
		snprintf(rp->mode, sizeof(rp->mode), "rpc=off:config");
		rp->failed = true;
		log_info("RPC: rpc_probes = no: the jobs' RPCs are not counted");
		return rp;
	}
	snprintf(rp->mode, sizeof(rp->mode), "rpc=off:no-sunrpc");
	ioacct_rpcprobes_try(rp);
	return rp;
}

static void unload(struct ioacct_rpcprobes *rp)
{
	for (size_t i = 0; i < 4; i++) {
		if (i < 2) {
			bpf_link__destroy(rp->links[i]);
			rp->links[i] = NULL;
		}
		bpf_link__destroy(rp->wb[i]);
		rp->wb[i] = NULL;
	}
	ioacct_rpc_bpf__destroy(rp->skel);
	rp->skel = NULL;
}

void ioacct_rpcprobes_destroy(struct ioacct_rpcprobes *rp)
{
	if (!rp)
		return;
	unload(rp);
	for (uint32_t i = 0; i < rp->nslots; i++)
		free(rp->base[i].c);
	free(rp->base);
	free(rp);
}

/*
 * Opens the object with the main object's maps and this daemon's sizes,
 * its types relocated against btf (NULL: the kernel's, modules' included).
 */
static int open_shared(struct ioacct_rpcprobes *rp, const char *btf, const char **what)
{
	static const char *const shared[] = { "state", "watch", "slots", "tasks" };
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);
	int ret;

	*what = "open";
	rp->skel = ioacct_rpc_bpf__open_opts(&opts);
	if (!rp->skel)
		return -errno;
	rp->skel->rodata->v1_ssid = rp->v1_ssid;
	/* Mount keys as the main object makes them (mntid.h). */
	rp->skel->rodata->mnt_ids_legacy = ioacct_mnt_ids_legacy();
	ret = bpf_map__set_max_entries(rp->skel->maps.lost, rp->nslots);
	*what = "share the main object's maps with";
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]) && !ret; i++) {
		int fd = ioacct_probes_map_fd(rp->p, shared[i]);

		ret = fd < 0 ? fd : bpf_map__reuse_fd(
			bpf_object__find_map_by_name(rp->skel->obj, shared[i]), fd);
	}
	return ret;
}

/*
 * The writeback's programs (the flusher's WRITEs and COMMITs to the job
 * that dirtied the pages): optional, said when they cannot be attached.
 */
static const char *wb_attach(struct ioacct_rpcprobes *rp, bool nfs)
{
	struct bpf_program *progs[4] = { rp->skel->progs.ioacct_rpc_dirty,
					  rp->skel->progs.ioacct_rpc_wb_write,
					  rp->skel->progs.ioacct_rpc_wb_commit,
					  rp->skel->progs.ioacct_rpc_rd };

	if (!nfs)
		return "no nfs module at the load";
	for (size_t i = 0; i < 4; i++) {
		rp->wb[i] = bpf_program__attach(progs[i]);
		if (!rp->wb[i]) {
			for (size_t j = 0; j < i; j++) {
				bpf_link__destroy(rp->wb[j]);
				rp->wb[j] = NULL;
			}
			return strerror(errno);
		}
	}
	return NULL;
}

/*
 * The modules' types for a daemon that may no longer read them through
 * bpf() (after its start, as its account: rpcbtf.h). 0 without: path empty.
 */
static int module_types(char *path, size_t len, int *fd, const char **what)
{
	static const char *const modules[] = { "sunrpc", "nfs", "nfsv4", NULL };

	path[0] = '\0';
	*fd = -1;
	if (ioacct_rpcbtf_bpf_readable())
		return 0;
	*what = "read the modules' types (/sys/kernel/btf) for";
	*fd = ioacct_rpcbtf_merge(modules, path, len);
	return *fd < 0 ? *fd : 0;
}

static int load_attach(struct ioacct_rpcprobes *rp, const char **what, const char **reason)
{
	bool nfs = access("/sys/module/nfs", F_OK) == 0;
	struct bpf_program *progs[2];
	uint64_t t0 = ioacct_mono_ms(), t1;
	const char *nowb;
	char btf[64];
	int ret, btf_fd;

	*reason = "load-failed";
	ret = module_types(btf, sizeof(btf), &btf_fd, what);
	if (!ret)
		ret = open_shared(rp, btf[0] ? btf : NULL, what);
	if (!ret && !nfs) {
		/* Their types are the nfs module's: not loadable without it. */
		bpf_program__set_autoload(rp->skel->progs.ioacct_rpc_dirty, false);
		bpf_program__set_autoload(rp->skel->progs.ioacct_rpc_wb_write, false);
		bpf_program__set_autoload(rp->skel->progs.ioacct_rpc_wb_commit, false);
		bpf_program__set_autoload(rp->skel->progs.ioacct_rpc_rd, false);
	}
	if (!ret) {
		*what = "load";
		ret = ioacct_rpc_bpf__load(rp->skel);
	}
	if (btf_fd >= 0)
		close(btf_fd);
	if (ret)
		return ret;
	t1 = ioacct_mono_ms();
	progs[0] = rp->skel->progs.ioacct_rpc_begin;
	progs[1] = rp->skel->progs.ioacct_rpc_count;
	*what = "attach";
	*reason = "no-tracepoint";
	for (size_t i = 0; i < 2; i++) {
		rp->links[i] = bpf_program__attach(progs[i]);
		if (!rp->links[i])
			return -errno;
	}
	nowb = wb_attach(rp, nfs);
	log_info("RPC: sunrpc's tracepoints attached: the RPCs of jobs are counted (%d programs "
		 "loaded in %" PRIu64 " ms%s, attached in %" PRIu64 " ms)", nfs ? 6 : 2,
		 t1 - t0, btf[0] ? " against the types of /sys/kernel/btf" : "",
		 ioacct_mono_ms() - t1);
	if (nowb)
		log_info("RPC: the flushers' writeback of the jobs' pages is not attributed to them "
			 "(%s): those WRITEs and COMMITs are unattributed, and so are the CLOSEs a "
			 "kworker sends for them", nowb);
	return 0;
}

void ioacct_rpcprobes_try(struct ioacct_rpcprobes *rp)
{
	const char *what = "", *reason = "";
	int ret;

	if (!rp || rp->skel || rp->failed)
		return;
	if (!sunrpc_present()) {
		if (!rp->said_absent)
			log_info("RPC: no sunrpc module in the kernel: RPCs are counted from the first "
				 "registration after it is loaded (the first NFS mount loads it)");
		rp->said_absent = true;
		return;
	}
	ret = load_attach(rp, &what, &reason);
	if (!ret) {
		snprintf(rp->mode, sizeof(rp->mode), "rpc=sunrpc");
		return;
	}
	unload(rp);
	rp->failed = true;
	snprintf(rp->mode, sizeof(rp->mode), "rpc=off:%s", reason);
	log_warn("RPC: cannot %s the RPC probes: %s; the jobs' RPCs are not counted", what,
		 strerror(-ret));
}

const char *ioacct_rpcprobes_mode(const struct ioacct_rpcprobes *rp)
{
	return rp->mode;
}

void ioacct_rpcprobes_job_mode(const struct ioacct_rpcprobes *rp, const char *mode, char *buf,
			       size_t len)
{
	const char *v = strstr(mode, " views=");

	if (!rp)
		ioacct_strlcpy(buf, mode, len);
	else
		snprintf(buf, len, "%.*s %s%s", (int)(v ? (size_t)(v - mode) : strlen(mode)), mode,
			 rp->mode, v ? v : "");
}

/* A per-CPU value summed over the CPUs. */
static int percpu_sum(int fd, const void *key, struct ioacct_rpc_val *buf, int ncpus,
		      struct ioacct_rpc_val *out)
{
	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(fd, key, buf))
		return -errno;
	for (int c = 0; c < ncpus; c++) {
		const __u64 *s = &buf[c].calls;
		__u64 *d = &out->calls;

		for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
			d[i] += s[i];
	}
	return 0;
}

/* Every unattributed counter, summed over the CPUs. */
static int ucounts_read(struct ioacct_rpcprobes *rp, struct ucount **out, size_t *n)
{
	int fd = bpf_map__fd(rp->skel->maps.rpcunattr);
	struct ioacct_rpc_val *buf = calloc((size_t)rp->ncpus, sizeof(*buf));
	struct ioacct_rpc_ukey k, prev;
	struct ucount *c = NULL;
	bool first = true;
	size_t cap = 0;
	int ret = buf ? 0 : -ENOMEM;

	*n = 0;
	while (!ret && bpf_map_get_next_key(fd, first ? NULL : &prev, &k) == 0) {
		first = false;
		prev = k;
		if (*n == cap) {
			struct ucount *g = realloc(c, (cap = cap ? 2 * cap : 64) * sizeof(*c));

			if (!g) {
				ret = -ENOMEM;
				break;
			}
			c = g;
		}
		c[*n].k = k;
		if (!percpu_sum(fd, &k, buf, rp->ncpus, &c[*n].v))
			(*n)++;
	}
	free(buf);
	if (ret) {
		free(c);
		c = NULL;
		*n = 0;
	}
	*out = c;
	return ret;
}

/*
 * Deletes the entries of the map fd whose key (ksize bytes, at most 64)
 * holds slot as the __u32 at slot_off. Collected first: deleting while
 * walking a hash restarts the walk.
 */
static void slot_sweep(int fd, size_t ksize, size_t slot_off, uint32_t slot)
{
	unsigned char k[64], prev[64], *del = NULL;
	size_t ndel = 0, cap = 0;
	bool first = true;

	while (ksize <= sizeof(k) && bpf_map_get_next_key(fd, first ? NULL : prev, k) == 0) {
		uint32_t s;

		first = false;
		memcpy(prev, k, ksize);
		memcpy(&s, k + slot_off, sizeof(s));
		if (s != slot)
			continue;
		if (ndel == cap) {
			unsigned char *g = realloc(del, (cap = cap ? 2 * cap : 16) * ksize);

			if (!g)
				break;
			del = g;
		}
		memcpy(del + ndel++ * ksize, k, ksize);
	}
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, del + i * ksize);
	free(del);
}

void ioacct_rpcprobes_step_begin(struct ioacct_rpcprobes *rp, uint32_t slot)
{
	struct baseline *b;

	if (!rp || !rp->skel || slot >= rp->nslots)
		return;
	/*
	 * An RPC of the slot's last step counted while it finished (it saw the
	 * slot active just before) may have come after the finish read: not
	 * this step's.
	 */
	slot_sweep(bpf_map__fd(rp->skel->maps.rpcstats), sizeof(struct ioacct_rpc_key),
		   offsetof(struct ioacct_rpc_key, slot), slot);
	b = &rp->base[slot];
	free(b->c);
	b->c = NULL;
	b->n = 0;
	b->taken = ucounts_read(rp, &b->c, &b->n) == 0;
}

/* The procedure's name as the kernel gave it, else its number. */
static void proc_name(struct ioacct_rpcprobes *rp, struct ioacct_rpc *r)
{
	struct ioacct_rpc_nkey nk = { .prog = r->prog, .vers = r->vers, .proc = r->proc };
	struct ioacct_rpc_name nm;

	if (!bpf_map_lookup_elem(bpf_map__fd(rp->skel->maps.rpcnames), &nk, &nm) && nm.name[0]) {
		nm.name[sizeof(nm.name) - 1] = '\0';
		ioacct_strlcpy(r->name, nm.name, sizeof(r->name));
	} else {
		snprintf(r->name, sizeof(r->name), "proc%u", r->proc);
	}
}

/* The mount learnt for {clnt, slot}: an RPC counted before its client's mount was seen. */
static uint64_t clnt_mount(struct ioacct_rpcprobes *rp, uint64_t clnt, uint32_t slot)
{
	struct ioacct_rpc_ckey ck = { .clnt = clnt, .slot = slot };
	struct ioacct_rpc_cval cv;

	if (bpf_map_lookup_elem(bpf_map__fd(rp->skel->maps.clntmnt), &ck, &cv))
		return 0;
	return cv.mnt_id;
}

/* Adds r (of slot) to b, into the row of the same key if there is one. */
static int batch_add(struct ioacct_rpc_batch *b, size_t *cap, uint32_t slot, const struct ioacct_rpc *r)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->slots[i] == slot && !ioacct_rpc_key_cmp(&b->rows[i], r)) {
			ioacct_rpc_add(&b->rows[i], r);
			return 0;
		}
	if (b->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct ioacct_rpc *rows = realloc(b->rows, ncap * sizeof(*rows));
		uint32_t *slots;

		if (!rows)
			return -ENOMEM;
		b->rows = rows;
		slots = realloc(b->slots, ncap * sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		b->slots = slots;
		*cap = ncap;
	}
	b->rows[b->n] = *r;
	b->slots[b->n++] = slot;
	return 0;
}

static int key_keep(struct ioacct_rpc_batch *b, size_t *cap, const struct ioacct_rpc_key *k)
{
	struct ioacct_rpc_key *keys = b->keys;

	if (b->nkeys == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		keys = realloc(b->keys, *cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		b->keys = keys;
	}
	keys[b->nkeys++] = *k;
	return 0;
}

int ioacct_rpcprobes_read(struct ioacct_rpcprobes *rp,
			  bool (*want)(uint32_t slot, uint32_t bin, void *ctx), void *ctx,
			  struct ioacct_rpc_batch *b)
{
	struct ioacct_rpc_key k, prev;
	struct ioacct_rpc_val *buf, v;
	size_t rcap = 0, kcap = 0;
	bool first = true;
	int fd, ret = 0;

	memset(b, 0, sizeof(*b));
	if (!rp || !rp->skel)
		return 0;
	fd = bpf_map__fd(rp->skel->maps.rpcstats);
	buf = calloc((size_t)rp->ncpus, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	while (!ret && bpf_map_get_next_key(fd, first ? NULL : &prev, &k) == 0) {
		struct ioacct_rpc r = { .bin = k.bin, .mnt_id = k.mnt_id, .prog = k.prog,
					.vers = k.vers, .proc = k.proc };

		first = false;
		prev = k;
		if (!want(k.slot, k.bin, ctx) || percpu_sum(fd, &k, buf, rp->ncpus, &v))
			continue;
		if (!r.mnt_id)
			r.mnt_id = clnt_mount(rp, k.clnt, k.slot);
#define RPC_COPY(f) r.f = v.f;
		IOACCT_RPC_COUNTERS(RPC_COPY)
#undef RPC_COPY
		proc_name(rp, &r);
		ret = batch_add(b, &rcap, k.slot, &r);
		if (!ret)
			ret = key_keep(b, &kcap, &k);
	}
	free(buf);
	if (ret)
		ioacct_rpc_batch_free(b);
	return ret;
}

int ioacct_rpcprobes_delete(struct ioacct_rpcprobes *rp, const struct ioacct_rpc_batch *b)
{
	const struct ioacct_rpc_key *keys = b->keys;
	int fd, ret = 0;

	if (!rp || !rp->skel)
		return 0;
	fd = bpf_map__fd(rp->skel->maps.rpcstats);
	for (size_t i = 0; i < b->nkeys; i++)
		if (bpf_map_delete_elem(fd, &keys[i]) && errno != ENOENT)
			ret = -errno;
	return ret;
}

void ioacct_rpc_batch_free(struct ioacct_rpc_batch *b)
{
	free(b->rows);
	free(b->slots);
	free(b->keys);
	memset(b, 0, sizeof(*b));
}

/* A (mount, client) of a step: the client's unattributed RPCs are in the mount's mountstats. */
struct mntclnt {
	uint64_t mnt_id, clnt;
	uint32_t slot;
};

static int mntclnt_add(struct mntclnt **mc, size_t *n, size_t *cap, uint32_t slot, uint64_t mnt,
		       uint64_t clnt)
{
	for (size_t i = 0; i < *n; i++)
		if ((*mc)[i].slot == slot && (*mc)[i].mnt_id == mnt && (*mc)[i].clnt == clnt)
			return 0;
	if (*n == *cap) {
		struct mntclnt *g = realloc(*mc, (*cap = *cap ? 2 * *cap : 16) * sizeof(**mc));

		if (!g)
			return -ENOMEM;
		*mc = g;
	}
	(*mc)[(*n)++] = (struct mntclnt){ mnt, clnt, slot };
	return 0;
}

/*
 * The mounts of slot (-1: of every slot with a baseline) and, for each, the
 * clients (and their parents) its RPCs went through.
 */
static int slot_clients(struct ioacct_rpcprobes *rp, int64_t slot, struct mntclnt **mc, size_t *n)
{
	int fd = bpf_map__fd(rp->skel->maps.clntmnt);
	struct ioacct_rpc_ckey k, prev;
	struct ioacct_rpc_cval cv;
	bool first = true;
	size_t cap = 0;
	int ret = 0;

	*mc = NULL;
	*n = 0;
	while (!ret && bpf_map_get_next_key(fd, first ? NULL : &prev, &k) == 0) {
		first = false;
		prev = k;
		if ((slot >= 0 && k.slot != slot) || k.slot >= rp->nslots || !rp->base[k.slot].taken ||
		    bpf_map_lookup_elem(fd, &k, &cv) || !cv.mnt_id)
			continue;
		ret = mntclnt_add(mc, n, &cap, k.slot, cv.mnt_id, k.clnt);
		for (int i = 0; i < IOACCT_RPC_ANCESTORS && !ret && cv.anc[i]; i++)
			ret = mntclnt_add(mc, n, &cap, k.slot, cv.mnt_id, cv.anc[i]);
	}
	return ret;
}

static const struct ioacct_rpc_val *base_of(const struct baseline *b, const struct ioacct_rpc_ukey *k)
{
	for (size_t i = 0; i < b->n; i++)
		if (!memcmp(&b->c[i].k, k, sizeof(*k)))
			return &b->c[i].v;
	return NULL;
}

/* unattributed() of one slot, or of every slot with a baseline (-1): one read of the maps. */
static int unattributed(struct ioacct_rpcprobes *rp, int64_t slot, struct ioacct_rpc_batch *b)
{
	struct ucount *now = NULL;
	struct mntclnt *mc = NULL;
	size_t nnow = 0, nmc = 0, cap = b->n;
	int ret;

	ret = slot_clients(rp, slot, &mc, &nmc);
	if (!ret && nmc)
		ret = ucounts_read(rp, &now, &nnow);
	for (size_t i = 0; i < nmc && !ret; i++)
		for (size_t j = 0; j < nnow && !ret; j++) {
			const struct ioacct_rpc_val *was = base_of(&rp->base[mc[i].slot], &now[j].k);
			struct ioacct_rpc r = { .mnt_id = mc[i].mnt_id, .prog = now[j].k.prog,
						.vers = now[j].k.vers, .proc = now[j].k.proc,
						.flags = IOACCT_RPC_UNATTRIBUTED };

			if (now[j].k.clnt != mc[i].clnt ||
			    now[j].v.calls <= (was ? was->calls : 0))
				continue;
#define RPC_DELTA(f) r.f = now[j].v.f - (was && was->f <= now[j].v.f ? was->f : 0);
			IOACCT_RPC_COUNTERS(RPC_DELTA)
#undef RPC_DELTA
			proc_name(rp, &r);
			ret = batch_add(b, &cap, mc[i].slot, &r);
		}
	free(now);
	free(mc);
	return ret;
}

int ioacct_rpcprobes_unattributed(struct ioacct_rpcprobes *rp, uint32_t slot,
				  struct ioacct_rpc_batch *b)
{
	if (!rp || !rp->skel || slot >= rp->nslots || !rp->base[slot].taken)
		return 0;
	return unattributed(rp, slot, b);
}

int ioacct_rpcprobes_unattributed_all(struct ioacct_rpcprobes *rp, struct ioacct_rpc_batch *b)
{
	if (!rp || !rp->skel)
		return 0;
	return unattributed(rp, -1, b);
}

void ioacct_rpcprobes_forget(struct ioacct_rpcprobes *rp, uint32_t slot, const char *cluster,
			     uint64_t job_id, uint32_t step_id)
{
	uint64_t lost = 0, zero = 0;
	int fd;

	if (!rp || !rp->skel || slot >= rp->nslots)
		return;
	free(rp->base[slot].c);
	rp->base[slot] = (struct baseline){ 0 };
	slot_sweep(bpf_map__fd(rp->skel->maps.clntmnt), sizeof(struct ioacct_rpc_ckey),
		   offsetof(struct ioacct_rpc_ckey, slot), slot);
	fd = bpf_map__fd(rp->skel->maps.lost);
	if (!bpf_map_lookup_elem(fd, &slot, &lost) && lost) {
		bpf_map_update_elem(fd, &slot, &zero, BPF_ANY);
		log_warn("job %s/%" PRIu64 " step %u: %" PRIu64 " RPCs not counted (the RPC "
			 "counters' map was full)", cluster, job_id, step_id, lost);
	}
}
