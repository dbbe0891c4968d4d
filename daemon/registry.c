// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The registry: its state (jobs, steps, watches, slots), the transactions
 * that keep memory, store and kernel in step, the drains, a registration and
 * a finish, and the restore after a restart. The request handlers
 * (handlers.c) and /metrics see it through jobs.h; the jobs' mount tables
 * (jobmounts.c) and the reaper (reaper.c) share its structures (registry.h).
 */
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterq.h"
#include "crash.h"
#include "jobload.h"
#include "jobtrace.h"
#include "kmounts.h"
#include "log.h"
#include "mpiprobes.h"
#include "mntns.h"
#include "procfs.h"
#include "rpcprobes.h"
#include "util.h"

/* ---- registry bookkeeping ------------------------------------------------------ */

struct ioacct_registry *ioacct_registry_create(const struct ioacct_config *cfg,
					       struct ioacct_store *store,
					       struct ioacct_probes *probes)
{
	struct ioacct_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	ioacct_crash_init();
	r->cfg = cfg;
	r->store = store;
	r->probes = probes;
	r->nslots = ioacct_probes_max_jobs(probes);
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	r->mntns = ioacct_mntns_create();
	r->traces = ioacct_jobtraces_create(cfg);
	if (!r->slots || !r->mntns || !r->traces || ioacct_kmounts_read(&r->kmounts, &r->nkmounts)) {
		ioacct_registry_destroy(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

static void step_free(struct dstep *s)
{
	if (!s)
		return;
	free(s->watches);
	free(s);
}

static void job_free(struct djob *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nsteps; i++)
		step_free(j->steps[i]);
	free(j->steps);
	ioacct_mnttab_put(j->mt);
	free(j->stored_mnts);
	free(j);
}

void ioacct_registry_destroy(struct ioacct_registry *r)
{
	if (!r)
		return;
	while (r->jobs) {
		struct djob *j = r->jobs;

		r->jobs = j->next;
		job_free(j);
	}
	free(r->slots);
	free(r->kmounts);
	ioacct_mntns_destroy(r->mntns);
	ioacct_jobtraces_destroy(r->traces);
	ioacct_mpiprobes_close(r->mpi);
	ioacct_rpcprobes_destroy(r->rpc);
	ioacct_clusterq_free(r->readers.clusterq);
	ioacct_jobload_free(r->readers.jobload);
	free(r);
}

void ioacct_registry_counts(const struct ioacct_registry *r, uint32_t *jobs, uint32_t *cgroups)
{
	*jobs = *cgroups = 0;
	for (const struct djob *j = r->jobs; j; j = j->next) {
		(*jobs)++;
		for (size_t i = 0; i < j->nsteps; i++)
			*cgroups += (uint32_t)j->steps[i]->nwatches;
	}
}

struct djob *ioacct_registry_job_find(const struct ioacct_registry *r, const char *cluster,
				      uint64_t job_id)
{
	for (struct djob *j = r->jobs; j; j = j->next)
		if (j->job.job_id == job_id && strcmp(j->job.cluster, cluster) == 0)
			return j;
	return NULL;
}

static struct djob *job_lookup_key(const struct ioacct_registry *r, int64_t key)
{
	for (struct djob *j = r->jobs; j; j = j->next)
		if (j->job.key == key)
			return j;
	return NULL;
}

static struct dstep *step_lookup(struct djob *j, uint32_t step_id)
{
	for (size_t i = 0; i < j->nsteps; i++)
		if (j->steps[i]->step_id == step_id)
			return j->steps[i];
	return NULL;
}

static void job_unlink(struct ioacct_registry *r, struct djob *j)
{
	for (struct djob **pp = &r->jobs; *pp; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			return;
		}
	}
}

static int step_attach(struct djob *j, struct dstep *s)
{
	struct dstep **ns = realloc(j->steps, (j->nsteps + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	j->steps = ns;
	j->steps[j->nsteps++] = s;
	s->job = j;
	return 0;
}

static void step_detach(struct djob *j, struct dstep *s)
{
	for (size_t i = 0; i < j->nsteps; i++) {
		if (j->steps[i] == s) {
			j->steps[i] = j->steps[--j->nsteps];
			return;
		}
	}
}

static bool step_watches(const struct dstep *s, uint64_t cgroup_id, uint32_t hier)
{
	for (size_t i = 0; i < s->nwatches; i++)
		if (s->watches[i].cgroup_id == cgroup_id && s->watches[i].hier == hier)
			return true;
	return false;
}

/* 1 when the watch was added, 0 when the step had it already, -ENOMEM. */
static int watch_attach(struct dstep *s, uint64_t cgroup_id, uint32_t hier, const char *cgroup)
{
	struct dwatch *nw;

	if (step_watches(s, cgroup_id, hier))
		return 0;
	nw = realloc(s->watches, (s->nwatches + 1) * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	s->watches = nw;
	memset(&nw[s->nwatches], 0, sizeof(*nw));
	nw[s->nwatches].cgroup_id = cgroup_id;
	nw[s->nwatches].hier = hier;
	ioacct_strlcpy(nw[s->nwatches].cgroup, cgroup, sizeof(nw->cgroup));
	s->nwatches++;
	return 1;
}

/* ---- what the handlers and /metrics see (jobs.h) ------------------------------------ */

const struct ioacct_config *ioacct_registry_config(const struct ioacct_registry *r)
{
	return r->cfg;
}

struct ioacct_store *ioacct_registry_store(const struct ioacct_registry *r)
{
	return r->store;
}

struct ioacct_probes *ioacct_registry_probes(const struct ioacct_registry *r)
{
	return r->probes;
}

uint32_t ioacct_registry_nslots(const struct ioacct_registry *r)
{
	return r->nslots;
}

uint64_t ioacct_registry_dropped_events(const struct ioacct_registry *r)
{
	uint64_t sum = 0;

	for (uint32_t s = 0; s < r->nslots; s++) {
		uint64_t ev, by;

		if (r->slots[s] && ioacct_probes_dropped(r->probes, s, &ev, &by, false) == 0)
			sum += ev;
	}
	return sum;
}

struct ioacct_cluster_readers *ioacct_registry_readers(struct ioacct_registry *r)
{
	return &r->readers;
}

const char *ioacct_registry_cluster(const struct ioacct_registry *r, const char *asked)
{
	return asked[0] ? asked : (r->cfg->cluster[0] ? r->cfg->cluster : "local");
}

struct djob *ioacct_registry_jobs(const struct ioacct_registry *r)
{
	return r->jobs;
}

struct djob *ioacct_registry_job_next(const struct djob *j)
{
	return j->next;
}

const struct ioacct_job *ioacct_registry_job_info(const struct djob *j)
{
	return &j->job;
}

uint64_t ioacct_registry_job_start_mono(const struct djob *j)
{
	return j->start_mono_ns;
}

size_t ioacct_registry_job_nsteps(const struct djob *j)
{
	return j->nsteps;
}

uint32_t ioacct_registry_job_step(const struct djob *j, size_t i, uint32_t *slot)
{
	*slot = j->steps[i]->slot;
	return j->steps[i]->step_id;
}

/* For SNAPSHOT: iotrace --job follows the job's cgroups. */
int ioacct_registry_job_watches(const struct djob *j, struct ioacct_reply *rep)
{
	size_t n = 0;

	for (size_t i = 0; i < j->nsteps; i++)
		n += j->steps[i]->nwatches;
	if (!n)
		return 0;
	rep->watches = calloc(n, sizeof(*rep->watches));
	if (!rep->watches)
		return -ENOMEM;
	for (size_t i = 0; i < j->nsteps; i++) {
		const struct dstep *s = j->steps[i];

		for (size_t k = 0; k < s->nwatches; k++) {
			struct ioacct_watch_row *w = &rep->watches[rep->nwatches++];

			w->step_id = s->step_id;
			w->hier = s->watches[k].hier;
			ioacct_strlcpy(w->cgroup, s->watches[k].cgroup, sizeof(w->cgroup));
		}
	}
	return 0;
}

/* ---- transactions ------------------------------------------------------------------ */

/*
 * Store transactions that carry the registry's memory with them: what a
 * rolled back (or failed) transaction wrote is forgotten in memory too, or
 * a mount believed stored would never be written (issue 17: after a full
 * disk every mount of the job showed as "mnt:N unknown").
 */
static int tx_begin(struct ioacct_registry *r)
{
	int ret = ioacct_store_begin(r->store);

	if (ret)
		return ret;
	for (struct djob *j = r->jobs; j; j = j->next)
		j->nstored_mnts_tx = j->nstored_mnts;
	return 0;
}

static void tx_forget(struct ioacct_registry *r)
{
	for (struct djob *j = r->jobs; j; j = j->next)
		if (j->nstored_mnts > j->nstored_mnts_tx)
			j->nstored_mnts = j->nstored_mnts_tx;
}

static void tx_rollback(struct ioacct_registry *r)
{
	ioacct_store_rollback(r->store);
	tx_forget(r);
}

/* On failure the store has rolled back (ioacct_store_commit never leaves it open). */
static int tx_commit(struct ioacct_registry *r)
{
	int ret = ioacct_store_commit(r->store);

	if (ret)
		tx_forget(r);
	return ret;
}

/* ---- draining ------------------------------------------------------------------------- */

struct drain_ctx {
	struct ioacct_registry *r;
	uint64_t now;
	bool all;
	int32_t only_slot;           /* -1 for every slot */
};

/*
 * A bin is drained once it has been closed for a whole bin width: an
 * operation computes its bin when it ends and adds to it right away, so no
 * late addition can reach a bin that old, and each bin is stored exactly once.
 */
static bool want_entry(uint32_t slot, uint32_t bin, void *arg)
{
	const struct drain_ctx *c = arg;
	const struct dstep *s;
	uint64_t cur;

	if (slot >= c->r->nslots || !(s = c->r->slots[slot]))
		return false;
	if (c->only_slot >= 0 && slot != (uint32_t)c->only_slot)
		return false;
	if (c->all)
		return true;
	cur = ioacct_bin_of(s->job->start_mono_ns, s->job->job.bin_width_ns, c->now);
	return (uint64_t)bin + 2 <= cur;
}

/* Writes entries and RPC rows (issue 40) into the store, inside the caller's transaction. */
static int store_entries(struct ioacct_registry *r, const struct ioacct_probe_entry *e, size_t n,
			 struct ioacct_rpc_batch *rb)
{
	ioacct_mntns_pass(r->mntns);
	for (size_t i = 0; i < n; i++) {
		struct dstep *s = r->slots[e[i].slot];
		struct ioacct_sample smp = { .step_id = s->step_id, .mnt_id = e[i].mnt_id,
					     .op = e[i].op, .bin = e[i].bin, .c = e[i].c };
		int ret = ioacct_jobmounts_store(r, s->job, s->slot, e[i].mnt_id);

		if (!ret)
			ret = ioacct_store_series_put(r->store, s->job->job.key, &smp);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < rb->n; i++) {
		struct dstep *s = r->slots[rb->slots[i]];
		int ret;

		rb->rows[i].step_id = s->step_id;
		ret = ioacct_jobmounts_store(r, s->job, s->slot, rb->rows[i].mnt_id);
		if (!ret)
			ret = ioacct_store_rpc_put(r->store, s->job->job.key, &rb->rows[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The one way counters leave the kernel: stored with the RPC rows read with
 * them (rb, issue 40) and whatever `more` adds, in one transaction, and deleted from the kernel only once committed. A
 * crash in between leaves them in both; storing them again replaces the
 * same rows (ioacct_store_series_put), so nothing is counted twice.
 * `what` names the crash points: <what>-before-commit, <what>-after-commit.
 */
static int store_then_forget(struct ioacct_registry *r, const struct ioacct_probe_entry *e,
			     size_t n, struct ioacct_rpc_batch *rb,
			     int (*more)(struct ioacct_registry *r, void *arg), void *arg, const char *what)
{
	char point[64];
	int ret;

	ret = tx_begin(r);
	if (ret)
		return ret;
	ret = store_entries(r, e, n, rb);
	if (!ret && more)
		ret = more(r, arg);
	if (ret) {
		tx_rollback(r);
		return ret;
	}
	snprintf(point, sizeof(point), "%s-before-commit", what);
	ioacct_crash_point(point);
	ret = tx_commit(r);
	if (ret)
		return ret;
	snprintf(point, sizeof(point), "%s-after-commit", what);
	ioacct_crash_point(point);
	ret = n ? ioacct_probes_delete(r->probes, e, n) : 0;
	if (!ret)
		ret = ioacct_rpcprobes_delete(r->rpc, rb);
	if (ret)
		/* Stored: what stays in the kernel is stored again, over itself, next time. */
		log_warn("%s: %zu entries stored but not deleted from the kernel: %s", what, n,
			 strerror(-ret));
	return 0;
}

static int drain(struct ioacct_registry *r, bool all, int32_t only_slot)
{
	struct drain_ctx c = { .r = r, .now = ioacct_mono_ns(), .all = all, .only_slot = only_slot };
	struct ioacct_rpc_batch rb = { 0 };
	struct ioacct_probe_entry *e = NULL;
	size_t n = 0;
	int ret;

	ret = ioacct_probes_read(r->probes, want_entry, &c, &e, &n);
	if (!ret)
		ret = ioacct_rpcprobes_read(r->rpc, want_entry, &c, &rb);
	if (ret || (n == 0 && rb.n == 0))
		goto out;
	ret = store_then_forget(r, e, n, &rb, NULL, NULL, "drain");
out:
	/* -EAGAIN: the store is being put back, and said so once. */
	if (ret && ret != -EAGAIN)
		log_warn("drain: %s; the counters stay in the kernel and are tried again",
			 ret == -EBUSY || ret == -EIO ? ioacct_store_errmsg(r->store) : strerror(-ret));
	free(e);
	ioacct_rpc_batch_free(&rb);
	return ret;
}

/*
 * The periodic drain reads the kernel's whole table, so it runs only when a
 * bin has closed since the last one, for some step: with 1,000 idle jobs
 * and long bins, a scan every drain_interval would cost the daemon several
 * percent of a core for nothing.
 */
int ioacct_registry_drain(struct ioacct_registry *r, bool all)
{
	uint64_t now = ioacct_mono_ns();
	bool due = all;
	int ret;

	for (uint32_t i = 0; i < r->nslots && !due; i++) {
		const struct dstep *s = r->slots[i];

		due = s && ioacct_bin_of(s->job->start_mono_ns, s->job->job.bin_width_ns, now) !=
				   s->drained_cur;
	}
	if (!due)
		return 0;
	ret = drain(r, all, -1);
	for (uint32_t i = 0; i < r->nslots && !ret; i++) {
		struct dstep *s = r->slots[i];

		if (s)
			s->drained_cur = ioacct_bin_of(s->job->start_mono_ns, s->job->job.bin_width_ns, now);
	}
	return ret;
}

/* ---- slots ------------------------------------------------------------------------------ */

static int slot_alloc(struct ioacct_registry *r, struct dstep *s)
{
	for (uint32_t i = 0; i < r->nslots; i++) {
		uint32_t slot = (r->next_slot + i) % r->nslots;
		struct ioacct_probe_entry *e = NULL;
		size_t n = 0;
		uint64_t ev, by;
		int ret;

		if (r->slots[slot])
			continue;
		/* Leftovers of a step finished by a daemon that died before deleting them. */
		struct drain_ctx c = { .r = r, .all = true, .only_slot = (int32_t)slot };
		r->slots[slot] = s;
		ret = ioacct_probes_read(r->probes, want_entry, &c, &e, &n);
		if (!ret && n)
			ioacct_probes_delete(r->probes, e, n);
		free(e);
		ioacct_probes_files_forget(r->probes, slot);
		ioacct_probes_dropped(r->probes, slot, &ev, &by, true);
		r->next_slot = (slot + 1) % r->nslots;
		s->slot = slot;
		return 0;
	}
	return -ENOSPC;
}

/* ---- register ----------------------------------------------------------------------------- */

static struct djob *job_new(struct ioacct_registry *r, const struct ioacct_req_register *req,
			    struct ioacct_reply *rep)
{
	struct djob *j = calloc(1, sizeof(*j));
	const char *cluster = ioacct_registry_cluster(r, req->cluster);
	int ret;

	if (!j) {
		ioacct_reply_error(rep, -ENOMEM, "out of memory");
		return NULL;
	}
	ioacct_strlcpy(j->job.cluster, cluster, sizeof(j->job.cluster));
	j->job.job_id = req->job_id;
	if (j->job.job_id == 0) {
		uint64_t max = 0;

		ret = ioacct_store_job_max_id(r->store, cluster, &max);
		if (ret) {
			ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
			goto fail;
		}
		j->job.job_id = max + 1;
	}
	/* The client's node name (Slurm's) wins: several simulated nodes may share a host. */
	ioacct_strlcpy(j->job.node, req->node_name[0] ? req->node_name : r->cfg->node,
		       sizeof(j->job.node));
	ioacct_strlcpy(j->job.source, req->source[0] ? req->source : "slurm", sizeof(j->job.source));
	j->job.uid = req->uid;
	j->job.gid = req->gid;
	ioacct_strlcpy(j->job.user, req->user, sizeof(j->job.user));
	ioacct_strlcpy(j->job.name, req->job_name, sizeof(j->job.name));
	ioacct_strlcpy(j->job.workdir, req->workdir, sizeof(j->job.workdir));
	/* Anyone's bytes: one line of valid UTF-8, whatever the client sent. */
	ioacct_cmdline_join(j->job.cmdline, sizeof(j->job.cmdline), 1,
			    (char *const[]){ (char *)req->cmdline, NULL });
	j->job.has_array = req->has_array != 0;
	j->job.array_job_id = req->array_job_id;
	j->job.array_task_id = req->array_task_id;
	j->job.restart = req->restart;
	j->start_mono_ns = ioacct_mono_ns();
	j->job.start_ns = ioacct_wall_ns();
	snprintf(j->job.state, sizeof(j->job.state), "RUNNING");
	ioacct_rpcprobes_job_mode(r->rpc, ioacct_probes_job_mode(r->probes), j->job.probe_mode,
				  sizeof(j->job.probe_mode));
	j->job.bin_width_ns = req->bin_width_ns ? req->bin_width_ns : r->cfg->bin_width_ns;
	ret = ioacct_store_job_insert(r->store, &j->job);
	if (ret) {
		if (ret == -EEXIST)
			ioacct_reply_error(rep, ret, "job %llu of cluster %s is already running in the store",
				  (unsigned long long)j->job.job_id, cluster);
		else
			ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
		goto fail;
	}
	return j;
fail:
	free(j);
	return NULL;
}

/*
 * What one REGISTER created, so that a failure undoes exactly that: the
 * store by rolling back its one transaction, memory and kernel here.
 */
struct reg_undo {
	struct djob *job;
	struct dstep *step;
	bool new_job, new_step, new_watch, kernel_watch;
	uint64_t cgroup_id;
	uint32_t hier;
};

static void register_undo(struct ioacct_registry *r, struct reg_undo *u)
{
	if (u->kernel_watch) {
		ioacct_probes_watch_del(r->probes, u->cgroup_id, u->hier);
		ioacct_probes_publish(r->probes);
	}
	if (u->new_watch)
		u->step->nwatches--;
	if (u->new_step) {
		ioacct_probes_slot_clear(r->probes, u->step->slot);
		r->slots[u->step->slot] = NULL;
		step_detach(u->job, u->step);
		step_free(u->step);
	}
	if (u->new_job) {
		job_unlink(r, u->job);
		job_free(u->job);
	}
}

/* The job of the request: the running one, or a new one (stored, not committed yet). */
static int register_job(struct ioacct_registry *r, const struct ioacct_req_register *req,
			struct reg_undo *u, struct ioacct_reply *rep)
{
	const char *cluster = ioacct_registry_cluster(r, req->cluster);

	u->job = req->job_id ? ioacct_registry_job_find(r, cluster, req->job_id) : NULL;
	if (!u->job) {
		u->job = job_new(r, req, rep);
		if (!u->job)
			return rep->status;
		u->job->next = r->jobs;
		r->jobs = u->job;
		u->new_job = true;
	}
	/*
	 * Before the watch: the row keeps the namespace for a restart, and the
	 * path table must be there when the first path-based call is counted.
	 */
	if (req->pid > 0) {
		struct ioacct_mntns_ref ns;

		u->job->pid = req->pid;
		if (ioacct_proc_mntns_ref(req->pid, &ns) == 0) {
			u->job->mntns = ns.inum;
			u->job->mntns_id = ns.id;
			ioacct_jobmounts_read(r, u->job);
			ioacct_jobmounts_publish(r, u->job);
		}
	}
	return 0;
}

/* The step of the request: the registered one, or a new one with a slot. */
static int register_step(struct ioacct_registry *r, const struct ioacct_req_register *req,
			 const char *fs_path, struct reg_undo *u, struct ioacct_reply *rep)
{
	struct djob *j = u->job;
	struct dstep *s = step_lookup(j, req->step_id);
	struct ioacct_step st = { .step_id = req->step_id, .start_ns = ioacct_wall_ns() };
	int ret;

	if (s) {
		u->step = s;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		ioacct_reply_error(rep, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	s->step_id = req->step_id;
	ret = slot_alloc(r, s);
	if (!ret && (ret = step_attach(j, s)))
		r->slots[s->slot] = NULL;
	if (ret) {
		if (ret == -ENOSPC)
			ioacct_reply_error(rep, ret, "all %u slots are in use (max_jobs in the config)", r->nslots);
		else
			ioacct_reply_error(rep, ret, "out of memory");
		free(s);
		return ret;
	}
	u->step = s;
	u->new_step = true;
	snprintf(st.state, sizeof(st.state), "RUNNING");
	ioacct_strlcpy(st.cgroup, fs_path, sizeof(st.cgroup));
	ret = ioacct_store_step_put(r->store, j->job.key, &st);
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
		return ret;
	}
	ret = ioacct_probes_slot_set(r->probes, s->slot, j->start_mono_ns, j->job.bin_width_ns);
	if (ret)
		ioacct_reply_error(rep, ret, "cannot set up slot %u: %s", s->slot, strerror(-ret));
	return ret;
}

/* The watch of the cgroup: stored, then in the kernel (both undone on failure). */
static int register_watch(struct ioacct_registry *r, const struct ioacct_req_register *req,
			  const char *fs_path, struct reg_undo *u, struct ioacct_reply *rep)
{
	struct djob *j = u->job;
	struct dstep *s = u->step;
	struct ioacct_watch w;
	int ret;

	ret = watch_attach(s, u->cgroup_id, u->hier, fs_path);
	if (ret <= 0) {
		if (ret)
			ioacct_reply_error(rep, ret, "out of memory");
		return ret;
	}
	u->new_watch = true;
	memset(&w, 0, sizeof(w));
	w.job_key = j->job.key;
	w.step_id = s->step_id;
	w.slot = s->slot;
	w.cgroup_id = u->cgroup_id;
	w.hier = u->hier;
	w.pid = req->pid;
	w.mntns = j->mntns;
	w.start_mono_ns = j->start_mono_ns;
	w.bin_width_ns = j->job.bin_width_ns;
	ioacct_strlcpy(w.cgroup, fs_path, sizeof(w.cgroup));
	ret = ioacct_store_watch_put(r->store, &w);
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
		return ret;
	}
	ret = ioacct_probes_watch_add(r->probes, u->cgroup_id, u->hier, s->slot);
	if (ret) {
		ioacct_reply_error(rep, ret, "cannot watch cgroup %s: %s (max_cgroups in the config?)",
			  fs_path, strerror(-ret));
		return ret;
	}
	u->kernel_watch = true;
	ret = ioacct_probes_publish(r->probes);
	if (ret)
		/* For instance the programs could not be attached (detach_when_idle). */
		ioacct_reply_error(rep, ret, "cannot start counting for cgroup %s: %s", fs_path,
			  strerror(-ret));
	return ret;
}

static void register_reply(const struct djob *j, const struct dstep *s, struct ioacct_reply *rep)
{
	rep->job_id = j->job.job_id;
	rep->job_key = j->job.key;
	rep->slot = s->slot;
	rep->start_mono_ns = j->start_mono_ns;
	rep->start_ns = j->job.start_ns;
	rep->bin_width_ns = j->job.bin_width_ns;
	ioacct_strlcpy(rep->probe_mode, j->job.probe_mode, sizeof(rep->probe_mode));
}

/*
 * sbatch --io-monitor=trace and spans: the job's tracer (jobtrace.h). A
 * trace or spans that cannot start leave the job monitored; the reply says
 * why, once.
 */
static void register_trace(struct ioacct_registry *r, const struct djob *j, uint32_t slot,
			   const struct ioacct_req_register *req, const char *fs_path,
			   enum ioacct_hier hier, struct ioacct_reply *rep)
{
	int ret = ioacct_jobtraces_register(r->traces, j->job.key, j->job.cluster, j->job.node,
					    j->job.workdir, j->start_mono_ns, req, fs_path, hier,
					    rep);

	if (ret && req->trace_max)
		log_warn("job %s/%llu step %u: not traced: %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, req->step_id, rep->trace_error);
	/* MPI-IO calls: their probes told that the slot's go to the job's exporter. */
	if ((req->spans & IOACCT_SPANS_MPIIO) && !rep->spans_error[0]) {
		/* Said when MPI-IO spans alone were asked for: spans=all gets the POSIX ones. */
		ret = r->mpi ? ioacct_mpiprobes_spans(r->mpi, slot, true) :
		      req->spans & IOACCT_SPANS_POSIX ? 0 : -ENOTSUP;
		if (ret)
			ioacct_seterr(rep->spans_error, sizeof(rep->spans_error), ret,
				      "no MPI-IO spans: %s on node %s", r->mpi ? strerror(-ret) :
				      "the MPI-IO probes are off", j->job.node);
	}
	if (req->spans && rep->spans_error[0])
		log_warn("job %s/%llu step %u: %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, req->step_id, rep->spans_error);
}

/* An MPI-IO call of a slot with spans: to its job's exporter. */
static void mpi_span(void *ctx, const struct ioacct_mpi_call *c)
{
	struct ioacct_registry *r = ctx;
	const struct dstep *s = c->slot < r->nslots ? r->slots[c->slot] : NULL;

	if (s)
		ioacct_jobtraces_mpi_call(r->traces, s->job->job.key, s->step_id, c);
}

void ioacct_registry_trace_poll(struct ioacct_registry *r)
{
	ioacct_jobtraces_poll(r->traces);
}

void ioacct_registry_set_mpi(struct ioacct_registry *r, struct ioacct_mpiprobes *m)
{
	r->mpi = m;
	if (m)
		ioacct_mpiprobes_set_span_cb(m, mpi_span, r);
}

void ioacct_registry_set_rpc(struct ioacct_registry *r, struct ioacct_rpcprobes *rp)
{
	r->rpc = rp;
}

struct ioacct_mpiprobes *ioacct_registry_mpi(const struct ioacct_registry *r)
{
	return r->mpi;
}

int ioacct_registry_mpi_fd(const struct ioacct_registry *r)
{
	return r->mpi ? ioacct_mpiprobes_fd(r->mpi) : -1;
}

void ioacct_registry_mpi_poll(struct ioacct_registry *r)
{
	if (r->mpi)
		ioacct_mpiprobes_poll(r->mpi);
}

bool ioacct_registry_tracing(const struct ioacct_registry *r)
{
	return ioacct_jobtraces_active(r->traces);
}

/*
 * One transaction across store and kernel: the job, step and watch rows are
 * written, the kernel told, and only then is the store committed. A failure
 * undoes all of it; a kill -9 before the commit leaves kernel state that no
 * row owns, which ioacct_registry_restore() removes, and after it a whole
 * registration. Registering what is registered already changes nothing and
 * answers the same job and slot: the plugin retries after a timeout.
 */
void ioacct_registry_register(struct ioacct_registry *r, const struct ioacct_req_register *req,
			      const char *fs_path, uint64_t cgroup_id, enum ioacct_hier hier,
			      struct ioacct_reply *rep)
{
	struct reg_undo u = { .cgroup_id = cgroup_id, .hier = hier };
	int ret;

	/* The sunrpc module may have come since (an NFS mount): its probes, before the job's mode. */
	ioacct_rpcprobes_try(r->rpc);
	ret = tx_begin(r);
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
		return;
	}
	ret = register_job(r, req, &u, rep);
	if (!ret)
		ret = register_step(r, req, fs_path, &u, rep);
	if (!ret)
		ret = register_watch(r, req, fs_path, &u, rep);
	if (!ret) {
		ioacct_crash_point("register-before-commit");
		ret = tx_commit(r);
		if (ret)
			ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
	} else {
		tx_rollback(r);
	}
	if (ret) {
		register_undo(r, &u);
		return;
	}
	ioacct_crash_point("register-after-commit");
	/* Before the answer: the step's program runs only then, its libraries probed. */
	if (r->mpi)
		ioacct_mpiprobes_attach_ahead(r->mpi, u.step->slot);
	if (u.new_step)
		ioacct_rpcprobes_step_begin(r->rpc, u.step->slot);
	u.step->pid = req->pid;
	u.step->empty_since_ns = 0;
	u.job->idle_since_ns = 0;
	if (u.new_watch)
		log_info("job %s/%llu step %u: watching %s (cgroup %s id %llu, slot %u)",
			 u.job->job.cluster, (unsigned long long)u.job->job.job_id, u.step->step_id,
			 fs_path, hier == IOACCT_HIER_V1 ? "v1" : "v2",
			 (unsigned long long)u.cgroup_id, u.step->slot);
	else
		log_info("job %s/%llu step %u: %s registered again: same job, slot %u",
			 u.job->job.cluster, (unsigned long long)u.job->job.job_id, u.step->step_id,
			 fs_path, u.step->slot);
	register_reply(u.job, u.step, rep);
	if (req->trace_max || req->spans)
		register_trace(r, u.job, u.step->slot, req, fs_path, hier, rep);
}

/* ---- finish ----------------------------------------------------------------------------- */

struct step_end {
	struct dstep *s;
	const char *state;
	int32_t exit_code;
	uint64_t dropped_events, dropped_bytes;
	uint64_t lib_missed; /* library opens the MPI-IO watch missed (issue 39) */
	struct ioacct_probe_file *files; /* the step's per-file records (issue 26) */
	size_t nfiles;
	struct ioacct_mpiio *mpi; /* its MPI-IO counters (issue 27) */
	size_t nmpi;
	struct ioacct_h5rec *h5;  /* its HDF5 counters (issue 39) */
	size_t nh5;
};

/* The step's per-file records, in the finish's transaction. */
static int files_store(struct ioacct_registry *r, const struct step_end *x)
{
	struct ioacct_file *f = malloc(sizeof(*f));
	int ret = 0;

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < x->nfiles && !ret; i++) {
		if (x->files[i].folded)
			continue;
		ioacct_probes_file_row(x->files, i, x->s->step_id, x->s->job->start_mono_ns, f);
		ret = ioacct_jobmounts_store(r, x->s->job, x->s->slot, f->mnt_id);
		if (!ret)
			ret = ioacct_store_file_put(r->store, x->s->job->job.key, f);
	}
	free(f);
	for (size_t i = 0; i < x->nmpi && !ret; i++) {
		x->mpi[i].step_id = x->s->step_id;
		ret = ioacct_store_mpiio_put(r->store, x->s->job->job.key, &x->mpi[i]);
	}
	for (size_t i = 0; i < x->nh5 && !ret; i++) {
		x->h5[i].step_id = x->s->step_id;
		ret = ioacct_store_h5_put(r->store, x->s->job->job.key, &x->h5[i]);
	}
	return ret;
}

/* The step's row with its end, its dropped counts, no more watch: in the finish's transaction. */
static int step_end_store(struct ioacct_registry *r, void *arg)
{
	const struct step_end *x = arg;
	const struct dstep *s = x->s;
	int64_t key = s->job->job.key;
	struct ioacct_step st = { .step_id = s->step_id };
	struct ioacct_jobdata *jd = NULL;
	int ret = 0;

	if (x->dropped_events || x->dropped_bytes)
		ret = ioacct_store_job_add_dropped(r->store, key, x->dropped_events, x->dropped_bytes);
	if (!ret && x->lib_missed)
		ret = ioacct_store_job_add_lib_missed(r->store, key, x->lib_missed);
	if (!ret)
		ret = files_store(r, x);
	if (ret)
		return ret;
	/* The start and cgroup stay as registered: read them back. */
	if (ioacct_store_job_load(r->store, key, &jd) == 0) {
		for (size_t i = 0; i < jd->nsteps; i++)
			if (jd->steps[i].step_id == s->step_id)
				st = jd->steps[i];
		ioacct_jobdata_free(jd);
	}
	st.end_ns = ioacct_wall_ns();
	st.exit_code = x->exit_code;
	ioacct_strlcpy(st.state, x->state, sizeof(st.state));
	ret = ioacct_store_step_put(r->store, key, &st);
	if (!ret)
		ret = ioacct_store_watch_delete(r->store, key, s->step_id);
	/* The finished step reaches the cluster store now, not at the job's end (export.c). */
	if (!ret && r->cfg->cluster_db[0])
		ret = ioacct_store_export_queue(r->store, key);
	return ret;
}

/*
 * Stops counting for a step and moves everything it counted into the
 * store. The kernel's entries are deleted only after the commit; if the
 * daemon dies in between, slot_alloc() removes them before reuse.
 */
int ioacct_registry_step_finish(struct ioacct_registry *r, struct dstep *s, const char *state,
				int32_t exit_code)
{
	struct djob *j = s->job;
	struct step_end x = { .s = s, .state = state[0] ? state : "COMPLETED", .exit_code = exit_code };
	struct ioacct_rpc_batch rb = { 0 };
	struct ioacct_probe_entry *e = NULL;
	uint64_t lost;
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < s->nwatches; i++)
		ioacct_probes_watch_del(r->probes, s->watches[i].cgroup_id, s->watches[i].hier);
	ioacct_probes_publish(r->probes);
	/* Calls that entered before the watch was removed still add to the slot: stop them. */
	ioacct_probes_slot_clear(r->probes, s->slot);

	struct drain_ctx c = { .r = r, .all = true, .only_slot = (int32_t)s->slot };
	ret = ioacct_probes_read(r->probes, want_entry, &c, &e, &n);
	if (ret)
		goto out;
	ret = ioacct_probes_files_read(r->probes, s->slot, &x.files, &x.nfiles);
	/* Its RPCs, and what its mounts got from no job meanwhile (issue 40). */
	if (!ret)
		ret = ioacct_rpcprobes_read(r->rpc, want_entry, &c, &rb);
	if (!ret)
		ret = ioacct_rpcprobes_unattributed(r->rpc, s->slot, &rb);
	/*
	 * Library opens the step's tasks made before its watch went, not read
	 * yet: read now, so that what they attach is released with the step
	 * below, not left attached to a slot nobody finishes.
	 */
	if (!ret && r->mpi)
		ioacct_mpiprobes_poll(r->mpi);
	if (!ret && r->mpi) {
		x.lib_missed = ioacct_mpiprobes_missed(r->mpi, s->slot);
		ret = ioacct_mpiprobes_read(r->mpi, s->slot, &x.mpi, &x.nmpi);
		if (!ret)
			ret = ioacct_mpiprobes_h5_read(r->mpi, s->slot, &x.h5, &x.nh5);
	}
	if (ret)
		goto out;
	ioacct_probes_dropped(r->probes, s->slot, &x.dropped_events, &x.dropped_bytes, false);
	ret = store_then_forget(r, e, n, &rb, step_end_store, &x, "finish");
	if (ret)
		goto out;
	ioacct_probes_dropped(r->probes, s->slot, &x.dropped_events, &x.dropped_bytes, true);
	/* Stored with the step (store_then_forget): the records go as its counters went. */
	ret = ioacct_probes_files_forget(r->probes, s->slot);
	if (ret)
		log_warn("finish: per-file records stored but not deleted from the kernel: %s",
			 strerror(-ret));
	ret = 0;
	ioacct_rpcprobes_forget(r->rpc, s->slot, j->job.cluster, j->job.job_id, s->step_id);
	lost = r->mpi ? ioacct_mpiprobes_forget(r->mpi, s->slot) : 0;
	if (lost)
		log_warn("job %s/%llu step %u: %llu MPI-IO calls not counted (probe maps full)",
			 j->job.cluster, (unsigned long long)j->job.job_id, s->step_id,
			 (unsigned long long)lost);
	if (x.lib_missed)
		log_warn("job %s/%llu step %u: %llu library opens not seen (the MPI-IO watch's ring "
			 "buffer was full): an MPI library they loaded may have had no uprobes; said "
			 "in the job's report", j->job.cluster, (unsigned long long)j->job.job_id,
			 s->step_id, (unsigned long long)x.lib_missed);
	log_info("job %s/%llu step %u finished (%s)", j->job.cluster,
		 (unsigned long long)j->job.job_id, s->step_id, x.state);
	r->slots[s->slot] = NULL;
	step_detach(j, s);
	step_free(s);
	if (j->nsteps == 0)
		j->idle_since_ns = ioacct_mono_ns();
out:
	free(e);
	ioacct_rpc_batch_free(&rb);
	free(x.files);
	free(x.mpi);
	free(x.h5);
	if (ret)
		log_err("job %s/%llu step %u: cannot store its data: %s; kept in the kernel",
			j->job.cluster, (unsigned long long)j->job.job_id, s->step_id,
			ioacct_store_errmsg(r->store));
	return ret;
}

int ioacct_registry_job_end(struct ioacct_registry *r, struct djob *j, const char *state,
			    int32_t exit_code, const struct ioacct_report_spec *spec)
{
	int ret = ioacct_store_job_finish_report(r->store, j->job.key, ioacct_wall_ns(), state,
						 exit_code, spec);

	if (ret)
		return ret;
	log_info("job %s/%llu finished (%s)", j->job.cluster, (unsigned long long)j->job.job_id,
		 state);
	ioacct_jobtraces_end(r->traces, j->job.key);
	job_unlink(r, j);
	job_free(j);
	return 0;
}

int ioacct_registry_finish_step(struct ioacct_registry *r, struct djob *j, uint32_t step_id,
				const char *state, int32_t exit_code)
{
	struct dstep *s = step_lookup(j, step_id);

	if (s)
		ioacct_jobtraces_step_end(r->traces, j->job.key, step_id);
	return s ? ioacct_registry_step_finish(r, s, state, exit_code) : -ENOENT;
}

void ioacct_registry_job_finish(struct ioacct_registry *r, struct djob *j, const char *state,
				int32_t exit_code, const struct ioacct_report_spec *spec,
				struct ioacct_reply *rep)
{
	int ret;

	rep->job_id = j->job.job_id;
	rep->job_key = j->job.key;
	while (j->nsteps) {
		ret = ioacct_registry_step_finish(r, j->steps[0], state, exit_code);
		if (ret) {
			ioacct_reply_error(rep, ret, "cannot store step %u: %s", j->steps[0]->step_id,
				  ioacct_store_errmsg(r->store));
			j->finish_lost = true; /* nobody will ask again: the reaper ends it */
			return;
		}
	}
	ret = ioacct_registry_job_end(r, j, state, exit_code, spec);
	if (ret) {
		ioacct_reply_error(rep, ret, "cannot finish job: %s", ioacct_store_errmsg(r->store));
		j->finish_lost = true;
	}
}

/* ---- counts so far (the snapshot itself: snapshot.c) --------------------------------------- */

int ioacct_registry_kernel_read(struct ioacct_registry *r, struct ioacct_probe_entry **e,
				size_t *n)
{
	struct drain_ctx c = { .r = r, .all = true, .only_slot = -1 };

	*e = NULL;
	*n = 0;
	return ioacct_probes_read(r->probes, want_entry, &c, e, n);
}

int ioacct_registry_rpc_kernel_read(struct ioacct_registry *r, struct ioacct_rpc_batch *b)
{
	struct drain_ctx c = { .r = r, .all = true, .only_slot = -1 };

	int ret = ioacct_rpcprobes_read(r->rpc, want_entry, &c, b);

	if (!ret)
		ret = ioacct_rpcprobes_unattributed_all(r->rpc, b);
	if (ret)
		ioacct_rpc_batch_free(b);
	return ret;
}

/* ---- a registration whose client went away ------------------------------------------------ */

/* Takes a step out of the kernel and of memory, with whatever it counted. */
static void step_forget(struct ioacct_registry *r, struct dstep *s)
{
	struct drain_ctx c = { .r = r, .all = true, .only_slot = (int32_t)s->slot };
	struct ioacct_probe_entry *e = NULL;
	size_t n = 0;
	uint64_t ev, by;

	for (size_t i = 0; i < s->nwatches; i++)
		ioacct_probes_watch_del(r->probes, s->watches[i].cgroup_id, s->watches[i].hier);
	ioacct_probes_publish(r->probes);
	ioacct_probes_slot_clear(r->probes, s->slot);
	if (ioacct_probes_read(r->probes, want_entry, &c, &e, &n) == 0 && n)
		ioacct_probes_delete(r->probes, e, n);
	free(e);
	ioacct_probes_dropped(r->probes, s->slot, &ev, &by, true);
	/* Nor its MPI-IO records and counts, which the slot's next step would inherit. */
	if (r->mpi)
		ioacct_mpiprobes_forget(r->mpi, s->slot);
	r->slots[s->slot] = NULL;
	step_detach(s->job, s);
	step_free(s);
}

int ioacct_registry_abort_register(struct ioacct_registry *r, int64_t job_key, uint32_t step_id)
{
	struct djob *j = job_lookup_key(r, job_key);
	struct dstep *s = j ? step_lookup(j, step_id) : NULL;
	struct ioacct_jobdata *jd = NULL;
	bool alone;
	int ret;

	if (!s)
		return -ENOENT;
	ret = ioacct_store_job_load(r->store, job_key, &jd);
	if (ret)
		goto out;
	alone = j->nsteps == 1 && jd->nsteps == 1;
	ioacct_jobdata_free(jd);
	if (!alone) {
		/* Other steps have data: keep the job, end this step. */
		log_info("job %s/%llu step %u: its client went away before the reply; step cancelled",
			 j->job.cluster, (unsigned long long)j->job.job_id, step_id);
		ret = ioacct_registry_step_finish(r, s, "CANCELLED", IOACCT_EXIT_UNKNOWN);
		goto out;
	}
	ret = ioacct_store_job_delete(r->store, job_key);
	if (ret)
		goto out;
	log_info("job %s/%llu step %u: its client went away before the reply; registration undone",
		 j->job.cluster, (unsigned long long)j->job.job_id, step_id);
	step_forget(r, s);
	ioacct_jobtraces_forget(r->traces, job_key);
	job_unlink(r, j);
	job_free(j);
out:
	if (ret)
		log_warn("job %s/%llu step %u: cannot undo the registration its client did not hear of: "
			 "%s; the reaper will finish it", j->job.cluster,
			 (unsigned long long)j->job.job_id, step_id, ioacct_store_errmsg(r->store));
	return ret;
}

/* ---- restart ------------------------------------------------------------------------------- */

/* The job of a persisted watch, in memory again. */
static struct djob *restore_job(struct ioacct_registry *r, const struct ioacct_watch *w)
{
	struct djob *j = job_lookup_key(r, w->job_key);

	if (j)
		return j;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	if (ioacct_store_job_get(r->store, w->job_key, &j->job) ||
	    strcmp(j->job.state, "RUNNING") != 0) {
		log_warn("watch of job key %lld, which is not running, dropped", (long long)w->job_key);
		free(j);
		ioacct_store_watch_delete(r->store, w->job_key, w->step_id);
		errno = ENOENT;
		return NULL;
	}
	j->start_mono_ns = w->start_mono_ns;
	j->pid = w->pid;
	j->mntns = w->mntns;
	/*
	 * The namespace's 64-bit id is not in the row: taken again from the pid
	 * while it is in that namespace (whoever has the pid now, the namespace
	 * is the job's). Without it, a namespace other than the daemon's cannot
	 * be listed (listmount) and the job's mounts stayed unnamed after a
	 * restart (slurm/05-merged, mc2's daemon killed -9 mid-step).
	 */
	if (j->pid > 0 && j->mntns) {
		struct ioacct_mntns_ref ns;

		if (ioacct_proc_mntns_ref(j->pid, &ns) == 0 && ns.inum == j->mntns)
			j->mntns_id = ns.id;
	}
	j->next = r->jobs;
	r->jobs = j;
	ioacct_jobmounts_read(r, j);
	return j;
}

static struct dstep *restore_step(struct ioacct_registry *r, struct djob *j,
				  const struct ioacct_watch *w)
{
	struct dstep *s = step_lookup(j, w->step_id);

	if (s)
		return s;
	if (w->slot >= r->nslots || r->slots[w->slot]) {
		log_warn("job %llu step %u: slot %u unusable after restart; its counts are lost",
			 (unsigned long long)j->job.job_id, w->step_id, w->slot);
		errno = EBUSY;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || step_attach(j, s)) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->step_id = w->step_id;
	s->slot = w->slot;
	s->pid = w->pid;
	r->slots[s->slot] = s;
	return s;
}

/*
 * The kernel as the store says, whether its maps survived or not: a daemon
 * killed in the middle of a finish has taken the watch out of the kernel but
 * not out of the store. Both writes change nothing when already so. A cgroup
 * that is gone is left to the reaper, which finishes its step.
 */
static void restore_kernel(struct ioacct_registry *r, const struct djob *j, const struct dstep *s,
			   const struct ioacct_watch *w, bool fresh)
{
	uint64_t id = 0;

	if (ioacct_cgroup_id(w->cgroup, &id) || id != w->cgroup_id) {
		log_warn("job %llu step %u: cgroup %s is gone; its data up to the last drain is kept",
			 (unsigned long long)j->job.job_id, w->step_id, w->cgroup);
		return;
	}
	ioacct_probes_slot_set(r->probes, s->slot, j->start_mono_ns, j->job.bin_width_ns);
	ioacct_probes_watch_add(r->probes, w->cgroup_id, w->hier, s->slot);
	if (fresh)
		/* The kernel lost its maps (reboot, or probes unpinned). */
		log_warn("job %llu step %u: watching %s again; I/O while ioacctd was down is not counted",
			 (unsigned long long)j->job.job_id, w->step_id, w->cgroup);
}

/*
 * Kernel watches and slots that no persisted watch owns: left by a daemon
 * killed during a registration, after telling the kernel and before its
 * commit. They go, so that nothing counts for a job the store does not have.
 */
static void restore_sweep(struct ioacct_registry *r)
{
	struct ioacct_probe_watch *kw = NULL;
	size_t n = 0;

	if (ioacct_probes_watch_list(r->probes, &kw, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			const struct dstep *s = kw[i].slot < r->nslots ? r->slots[kw[i].slot] : NULL;

			if (s && step_watches(s, kw[i].cgroup_id, kw[i].hier))
				continue;
			log_warn("kernel watch of cgroup id %llu (slot %u) has no registration: removed",
				 (unsigned long long)kw[i].cgroup_id, kw[i].slot);
			ioacct_probes_watch_del(r->probes, kw[i].cgroup_id, kw[i].hier);
		}
		free(kw);
	}
	for (uint32_t slot = 0; slot < r->nslots; slot++)
		if (!r->slots[slot])
			ioacct_probes_slot_clear(r->probes, slot);
}

/*
 * A job the store has RUNNING without any watch: its daemon died between
 * finishing its last step and finishing it, or it predates atomic
 * registration. It comes back without steps; its finish may still come
 * (Slurm's epilog), else the reaper ends it after the grace (reaper.c).
 */
static int adopt_running(struct ioacct_registry *r)
{
	struct ioacct_job *jobs = NULL;
	uint64_t now = ioacct_mono_ns();
	int64_t wall = ioacct_wall_ns();
	size_t n = 0;
	int ret;

	ret = ioacct_store_jobs_running(r->store, &jobs, &n);
	if (ret) {
		log_err("cannot read the running jobs from the store: %s",
			ioacct_store_errmsg(r->store));
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		struct djob *j;
		bool known = false;

		for (j = r->jobs; j && !known; j = j->next)
			known = j->job.key == jobs[i].key;
		if (known)
			continue;
		j = calloc(1, sizeof(*j));
		if (!j) {
			ret = -ENOMEM;
			break;
		}
		j->job = jobs[i];
		/* Its time base, from its wall-clock start: a step registered later bins alike. */
		j->start_mono_ns = wall > j->job.start_ns && (uint64_t)(wall - j->job.start_ns) < now ?
					   now - (uint64_t)(wall - j->job.start_ns) : now;
		j->idle_since_ns = now;
		j->finish_lost = true;
		j->next = r->jobs;
		r->jobs = j;
		log_warn("job %s/%llu is running in the store with no step watched: ended in %llu s "
			 "unless its finish comes", j->job.cluster, (unsigned long long)j->job.job_id,
			 (unsigned long long)(r->cfg->reap_grace_ms / 1000));
	}
	free(jobs);
	return ret;
}

/*
 * Reconciles the registry in the store with the kernel and the cgroups:
 * persisted watches come back (in the kernel too), kernel state nobody owns
 * goes, jobs running without any watch are adopted for the reaper.
 */
int ioacct_registry_restore(struct ioacct_registry *r)
{
	struct ioacct_watch *w = NULL;
	size_t n = 0;
	bool fresh = !ioacct_probes_reused(r->probes);
	int ret;

	ret = ioacct_store_watch_list(r->store, &w, &n);
	if (ret) {
		log_err("cannot read the registry from the store: %s", ioacct_store_errmsg(r->store));
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		struct djob *j = restore_job(r, &w[i]);
		struct dstep *s = j ? restore_step(r, j, &w[i]) : NULL;

		if (!s && errno == ENOMEM) {
			ret = -ENOMEM;
			goto out;
		}
		if (!s)
			continue;
		if (watch_attach(s, w[i].cgroup_id, w[i].hier, w[i].cgroup) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		restore_kernel(r, j, s, &w[i], fresh);
		log_info("job %s/%llu step %u: restored (slot %u)", j->job.cluster,
			 (unsigned long long)j->job.job_id, w[i].step_id, w[i].slot);
	}
	restore_sweep(r);
	ret = adopt_running(r);
	if (ret)
		goto out;
	for (struct djob *j = r->jobs; j; j = j->next)
		if (j->mntns)
			ioacct_jobmounts_publish(r, j);
	ret = ioacct_probes_publish(r->probes);
out:
	free(w);
	return ret;
}
