// SPDX-License-Identifier: GPL-2.0-or-later
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clusterq.h"
#include "job_fetch.h"
#include "jobload.h"
#include "jobtrace.h"
#include "log.h"
#include "kmounts.h"
#include "mntns.h"
#include "pgstore.h"
#include "procfs.h"
#include "util.h"
#include "query_fetch.h"
#include "render.h"

/*
 * A mount table, shared by the jobs of one mount namespace: at 1,000 jobs
 * on a node with 40 mounts, one copy each would be 330 MB (an entry holds
 * two PATH_MAX strings).
 */
struct mnttab {
	unsigned refs;
	uint32_t mntns; /* 0: unknown, never shared */
	size_t n;
	struct ioacct_mount *m;
};

static void mnttab_put(struct mnttab *t)
{
	if (t && --t->refs == 0) {
		free(t->m);
		free(t);
	}
}

/* Read once, at the registry's creation: nothing else in the daemon looks at it. */
static const char *crash_at;

void ioacct_registry_crash_point(const char *point)
{
	if (crash_at && strcmp(crash_at, point) == 0) {
		log_warn("IOACCT_CRASH_AT=%s: killing myself with SIGKILL (fault injection)", point);
		raise(SIGKILL);
	}
}

/* ---- registry bookkeeping ------------------------------------------------------ */

struct ioacct_registry *ioacct_registry_create(const struct ioacct_config *cfg,
					       struct ioacct_store *store,
					       struct ioacct_probes *probes)
{
	struct ioacct_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	crash_at = getenv("IOACCT_CRASH_AT");
	if (crash_at)
		log_warn("IOACCT_CRASH_AT=%s: this daemon will kill itself there (tests only)",
			 crash_at);
	r->cfg = cfg;
	r->store = store;
	r->probes = probes;
	r->nslots = ioacct_probes_max_jobs(probes);
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	r->mntns = ioacct_mntns_create();
	r->traces = ioacct_jobtraces_create(cfg);
	if (!r->slots || !r->mntns || !r->traces || ioacct_kmounts_read(&r->kmounts, &r->nkmounts)) {
		free(r->slots);
		free(r->kmounts);
		ioacct_mntns_destroy(r->mntns);
		ioacct_jobtraces_destroy(r->traces);
		free(r);
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
	mnttab_put(j->mt);
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
	ioacct_clusterq_free(r->clusterq);
	ioacct_jobload_free(r->jobload);
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

static struct djob *job_lookup(struct ioacct_registry *r, const char *cluster, uint64_t job_id)
{
	for (struct djob *j = r->jobs; j; j = j->next)
		if (j->job.job_id == job_id && strcmp(j->job.cluster, cluster) == 0)
			return j;
	return NULL;
}

static struct djob *job_lookup_key(struct ioacct_registry *r, int64_t key)
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

static int watch_attach(struct dstep *s, uint64_t cgroup_id, uint32_t hier, const char *cgroup)
{
	struct dwatch *nw;

	for (size_t i = 0; i < s->nwatches; i++)
		if (s->watches[i].cgroup_id == cgroup_id && s->watches[i].hier == hier)
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

static const struct ioacct_mount *job_mount(const struct djob *j, uint32_t mnt_id)
{
	return j->mt ? ioacct_mount_find(j->mt->m, j->mt->n, mnt_id) : NULL;
}

const struct ioacct_mount *ioacct_registry_job_mount(const struct djob *j, uint32_t mnt_id)
{
	return job_mount(j, mnt_id);
}

/*
 * The job's mount table, from one of its tasks, else from the daemon's own
 * namespace; shared with the other jobs of the same mount namespace, whose
 * copy this read refreshes.
 */
static void job_read_mounts(struct ioacct_registry *r, struct djob *j)
{
	struct ioacct_mntns_ref ns = { .inum = j->mntns, .id = j->mntns_id };
	struct ioacct_mount *m = NULL;
	struct mnttab *t = j->mt;
	size_t n = 0;
	char err[256];

	/* Not the pid's namespace now: once the task is gone, the pid may be a stranger's. */
	if (j->pid > 0 && j->mntns &&
	    ioacct_mountinfo_read_ns(j->pid, &ns, &m, &n, err, sizeof(err)) == 0)
		goto done;
	if (ioacct_mountinfo_read(0, &m, &n, err, sizeof(err)) != 0) {
		log_warn("job %s/%llu: cannot read a mount table: %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, err);
		return;
	}
done:
	if (t && t->mntns != j->mntns) {
		mnttab_put(t); /* the job's namespace is another one now */
		t = j->mt = NULL;
	}
	for (struct djob *o = r->jobs; !t && j->mntns && o; o = o->next)
		if (o != j && o->mt && o->mt->mntns == j->mntns &&
		    (!o->mntns_id || !j->mntns_id || o->mntns_id == j->mntns_id)) {
			t = o->mt;
			t->refs++;
		}
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t) {
			free(m);
			return;
		}
		t->refs = 1;
		t->mntns = j->mntns;
	}
	free(t->m);
	t->m = m;
	t->n = n;
	j->mt = t;
}

/* Puts the job's mount points into the kernel's path -> mount table, as one swap. */
static void job_publish_mountpoints(struct ioacct_registry *r, struct djob *j)
{
	if (j->mt)
		ioacct_probes_mountpoints_set(r->probes, j->mntns, j->mt->m, j->mt->n);
}

/*
 * A mount point the job's own namespace has too (the "/" of `unshare -m`, a
 * container's /home) would give the report two mounts of one name: m's path
 * says whose it is, namespace ns. Mounts of the container's own keep theirs.
 */
static void say_whose(const struct djob *j, struct ioacct_mount *m, uint32_t ns)
{
	for (size_t i = 0; j->mt && i < j->mt->n; i++) {
		if (strcmp(j->mt->m[i].path, m->path) == 0) {
			char path[sizeof(m->path)];

			ioacct_strlcpy(path, m->path, sizeof(path));
			if ((size_t)snprintf(m->path, sizeof(m->path), "%s (mount namespace %u)", path,
					     ns) >= sizeof(m->path))
				ioacct_strlcpy(m->path, path, sizeof(m->path));
			break;
		}
	}
}

/*
 * A mount of another mount namespace than the job's (a container's), from
 * the tasks in the job's watched cgroups: see mntns.h. NULL if none has it.
 */
static const struct ioacct_mount *job_mount_in_container(struct ioacct_registry *r,
							 struct djob *j, uint32_t mnt_id,
							 struct ioacct_mount *buf)
{
	const char **cgroups = NULL;
	size_t n = 0, max = 0;
	uint32_t ns = 0;
	int ret;

	for (size_t i = 0; i < j->nsteps; i++)
		max += j->steps[i]->nwatches;
	if (max == 0 || !(cgroups = calloc(max, sizeof(*cgroups))))
		return NULL;
	for (size_t i = 0; i < j->nsteps; i++)
		for (size_t k = 0; k < j->steps[i]->nwatches; k++)
			cgroups[n++] = j->steps[i]->watches[k].cgroup;
	ret = ioacct_mntns_find(r->mntns, j->job.key, cgroups, n, j->mntns, mnt_id, buf, &ns);
	free(cgroups);
	if (ret)
		return NULL;
	say_whose(j, buf, ns);
	log_info("job %s/%llu: mount %u is %s (%s) in mount namespace %u", j->job.cluster,
		 (unsigned long long)j->job.job_id, mnt_id, buf->path, buf->fstype, ns);
	return buf;
}

/*
 * A mount no task's mountinfo lists any more (a container step that ended
 * before the drain): named from what the probes noted of it, its mount
 * point's path in its namespace, which the kernel walked when the job first
 * did I/O on it. Where the path did not fit, the path stays mnt:N and the
 * source gives its last components.
 */
static void job_mount_noted(struct ioacct_registry *r, const struct djob *j, struct ioacct_mount *m)
{
	char fstype[sizeof(m->fstype)], path[IOACCT_NOTE_PATH_MAX];
	bool complete = false;
	uint32_t ns = 0;

	if (ioacct_probes_mount_note(r->probes, m->mnt_id, fstype, sizeof(fstype), path,
				     sizeof(path), &ns, &complete))
		return;
	ioacct_strlcpy(m->fstype, fstype, sizeof(m->fstype));
	if (complete) {
		ioacct_strlcpy(m->path, path, sizeof(m->path));
		say_whose(j, m, ns);
		snprintf(m->source, sizeof(m->source),
			 "mount namespace %u, gone before the drain (named by the probes)", ns);
	} else {
		snprintf(m->source, sizeof(m->source),
			 "gone before it could be named: mount point ...%s in mount namespace %u", path,
			 ns);
	}
	log_info("job %s/%llu: mount %u is gone; it was a %s on %s%s in mount namespace %u",
		 j->job.cluster, (unsigned long long)j->job.job_id, m->mnt_id, fstype,
		 complete ? "" : "...", path, ns);
}

/* Stores the description of a mount the first time the job's data names it. */
static int job_store_mount(struct ioacct_registry *r, struct djob *j, uint32_t mnt_id)
{
	const struct ioacct_mount *m;
	struct ioacct_mount unknown;
	uint32_t *ns;
	int ret;

	for (size_t i = 0; i < j->nstored_mnts; i++)
		if (j->stored_mnts[i] == mnt_id)
			return 0;
	m = job_mount(j, mnt_id);
	if (!m) {
		job_read_mounts(r, j);
		m = job_mount(j, mnt_id);
	}
	if (!m)
		m = ioacct_kmounts_find(r->kmounts, r->nkmounts, mnt_id);
	if (!m)
		m = job_mount_in_container(r, j, mnt_id, &unknown);
	if (!m) {
		/* Unmounted since: keep the data, say what is known. */
		memset(&unknown, 0, sizeof(unknown));
		unknown.mnt_id = mnt_id;
		snprintf(unknown.path, sizeof(unknown.path), "mnt:%u", mnt_id);
		snprintf(unknown.fstype, sizeof(unknown.fstype), "unknown");
		job_mount_noted(r, j, &unknown);
		m = &unknown;
	}
	ret = ioacct_store_mount_put(r->store, j->job.key, m);
	if (ret)
		return ret;
	ns = realloc(j->stored_mnts, (j->nstored_mnts + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	j->stored_mnts = ns;
	j->stored_mnts[j->nstored_mnts++] = mnt_id;
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

/* Writes entries into the store, inside the caller's transaction. */
static int store_entries(struct ioacct_registry *r, const struct ioacct_probe_entry *e, size_t n)
{
	ioacct_mntns_pass(r->mntns);
	for (size_t i = 0; i < n; i++) {
		struct dstep *s = r->slots[e[i].slot];
		struct ioacct_sample smp = { .step_id = s->step_id, .mnt_id = e[i].mnt_id,
					     .op = e[i].op, .bin = e[i].bin, .c = e[i].c };
		int ret = job_store_mount(r, s->job, e[i].mnt_id);

		if (!ret)
			ret = ioacct_store_series_put(r->store, s->job->job.key, &smp);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The one way counters leave the kernel: stored with whatever `more` adds,
 * in one transaction, and deleted from the kernel only once committed. A
 * crash in between leaves them in both; storing them again replaces the
 * same rows (ioacct_store_series_put), so nothing is counted twice.
 * `what` names the crash points: <what>-before-commit, <what>-after-commit.
 */
static int store_then_forget(struct ioacct_registry *r, const struct ioacct_probe_entry *e,
			     size_t n, int (*more)(struct ioacct_registry *r, void *arg), void *arg,
			     const char *what)
{
	char point[64];
	int ret;

	ret = tx_begin(r);
	if (ret)
		return ret;
	ret = store_entries(r, e, n);
	if (!ret && more)
		ret = more(r, arg);
	if (ret) {
		tx_rollback(r);
		return ret;
	}
	snprintf(point, sizeof(point), "%s-before-commit", what);
	ioacct_registry_crash_point(point);
	ret = tx_commit(r);
	if (ret)
		return ret;
	snprintf(point, sizeof(point), "%s-after-commit", what);
	ioacct_registry_crash_point(point);
	ret = n ? ioacct_probes_delete(r->probes, e, n) : 0;
	if (ret)
		/* Stored: what stays in the kernel is stored again, over itself, next time. */
		log_warn("%s: %zu entries stored but not deleted from the kernel: %s", what, n,
			 strerror(-ret));
	return 0;
}

static int drain(struct ioacct_registry *r, bool all, int32_t only_slot)
{
	struct drain_ctx c = { .r = r, .now = ioacct_mono_ns(), .all = all, .only_slot = only_slot };
	struct ioacct_probe_entry *e = NULL;
	size_t n = 0;
	int ret;

	ret = ioacct_probes_read(r->probes, want_entry, &c, &e, &n);
	if (ret || n == 0)
		goto out;
	ret = store_then_forget(r, e, n, NULL, NULL, "drain");
out:
	/* -EAGAIN: the store is being put back, and said so once. */
	if (ret && ret != -EAGAIN)
		log_warn("drain: %s; the counters stay in the kernel and are tried again",
			 ret == -EBUSY || ret == -EIO ? ioacct_store_errmsg(r->store) : strerror(-ret));
	free(e);
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
		ioacct_probes_dropped(r->probes, slot, &ev, &by, true);
		r->next_slot = (slot + 1) % r->nslots;
		s->slot = slot;
		return 0;
	}
	return -ENOSPC;
}

/* ---- register ----------------------------------------------------------------------------- */

/* The cgroup to watch: given as a path, or the one the task is in. */
static int resolve_cgroup(struct ioacct_registry *r, const struct ioacct_req_register *req,
			  char *fs_path, size_t len, uint64_t *id, enum ioacct_hier *hier,
			  struct ioacct_reply *rep)
{
	char rel[PATH_MAX], mnt[PATH_MAX];
	const char *ctrl = r->cfg->cgroup_v1_hierarchy;
	int ret;

	if (req->cgroup[0]) {
		if (req->cgroup[0] != '/') {
			ioacct_reply_error(rep, -EINVAL, "cgroup %s is not an absolute path", req->cgroup);
			return -EINVAL;
		}
		ioacct_strlcpy(fs_path, req->cgroup, len);
	} else {
		/* A v1 hierarchy is used when the task is placed in it (Slurm's proctrack). */
		ret = ioacct_cgroup_of_pid(req->pid, IOACCT_HIER_V1, ctrl, rel, sizeof(rel));
		if (ret == 0 && strcmp(rel, "/") != 0 &&
		    ioacct_cgroup_mountpoint(IOACCT_HIER_V1, ctrl, mnt, sizeof(mnt)) == 0) {
			*hier = IOACCT_HIER_V1;
		} else {
			ret = ioacct_cgroup_of_pid(req->pid, IOACCT_HIER_V2, NULL, rel, sizeof(rel));
			if (ret) {
				ioacct_reply_error(rep, ret, "cannot read the cgroup of pid %d: %s", req->pid,
					  strerror(-ret));
				return ret;
			}
			if (strcmp(rel, "/") == 0) {
				ioacct_reply_error(rep, -EINVAL,
					  "pid %d is in the root cgroup of every hierarchy: nothing to watch",
					  req->pid);
				return -EINVAL;
			}
			ret = ioacct_cgroup_mountpoint(IOACCT_HIER_V2, NULL, mnt, sizeof(mnt));
			if (ret) {
				ioacct_reply_error(rep, ret, "no cgroup2 file system is mounted");
				return ret;
			}
		}
		if ((size_t)snprintf(fs_path, len, "%s%s", mnt, rel) >= len) {
			ioacct_reply_error(rep, -ENAMETOOLONG, "cgroup path too long");
			return -ENAMETOOLONG;
		}
	}
	ret = ioacct_cgroup_hier_of_path(fs_path, hier);
	if (ret) {
		ioacct_reply_error(rep, ret, "%s is not on a cgroup file system", fs_path);
		return ret;
	}
	ret = ioacct_cgroup_id(fs_path, id);
	if (ret) {
		ioacct_reply_error(rep, ret, "cannot stat cgroup %s: %s", fs_path, strerror(-ret));
		return ret;
	}
	return 0;
}

static struct djob *job_new(struct ioacct_registry *r, const struct ioacct_req_register *req,
			    struct ioacct_reply *rep)
{
	struct djob *j = calloc(1, sizeof(*j));
	const char *cluster = req->cluster[0] ? req->cluster :
			      (r->cfg->cluster[0] ? r->cfg->cluster : "local");
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
	j->job.has_array = req->has_array != 0;
	j->job.array_job_id = req->array_job_id;
	j->job.array_task_id = req->array_task_id;
	j->start_mono_ns = ioacct_mono_ns();
	j->job.start_ns = ioacct_wall_ns();
	snprintf(j->job.state, sizeof(j->job.state), "RUNNING");
	ioacct_strlcpy(j->job.probe_mode, ioacct_probes_job_mode(r->probes), sizeof(j->job.probe_mode));
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
	const char *cluster = req->cluster[0] ? req->cluster :
			      (r->cfg->cluster[0] ? r->cfg->cluster : "local");

	u->job = req->job_id ? job_lookup(r, cluster, req->job_id) : NULL;
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
			job_read_mounts(r, u->job);
			job_publish_mountpoints(r, u->job);
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
 * sbatch --io-monitor=trace: the job's tracer (jobtrace.h). A trace that
 * cannot start leaves the job monitored; the reply says why, once.
 */
static void register_trace(struct ioacct_registry *r, const struct djob *j,
			   const struct ioacct_req_register *req, const char *fs_path,
			   enum ioacct_hier hier, struct ioacct_reply *rep)
{
	int ret = ioacct_jobtraces_register(r->traces, j->job.key, j->job.cluster, j->job.node,
					    j->job.workdir, j->start_mono_ns, req, fs_path, hier,
					    rep->trace_error, sizeof(rep->trace_error));

	if (ret)
		log_warn("job %s/%llu step %u: not traced: %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, req->step_id, rep->trace_error);
}

void ioacct_registry_trace_poll(struct ioacct_registry *r)
{
	ioacct_jobtraces_poll(r->traces);
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
static void handle_register(struct ioacct_registry *r, const struct ioacct_req_register *req,
			    struct ioacct_reply *rep)
{
	char fs_path[PATH_MAX];
	enum ioacct_hier hier = IOACCT_HIER_V2;
	struct reg_undo u = { 0 };
	int ret;

	if (req->bin_width_ns && (req->bin_width_ns < 100000000ULL ||
				  req->bin_width_ns > 86400ULL * NSEC_PER_SEC)) {
		ioacct_reply_error(rep, -ERANGE, "bin width must be between 0.1 and 86400 seconds");
		return;
	}
	if (resolve_cgroup(r, req, fs_path, sizeof(fs_path), &u.cgroup_id, &hier, rep))
		return;
	u.hier = hier;
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
		ioacct_registry_crash_point("register-before-commit");
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
	ioacct_registry_crash_point("register-after-commit");
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
	if (req->trace_max)
		register_trace(r, u.job, req, fs_path, hier, rep);
}

/* ---- finish ----------------------------------------------------------------------------- */

struct step_end {
	struct dstep *s;
	const char *state;
	int32_t exit_code;
	uint64_t dropped_events, dropped_bytes;
};

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
	struct ioacct_probe_entry *e = NULL;
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
	ioacct_probes_dropped(r->probes, s->slot, &x.dropped_events, &x.dropped_bytes, false);
	ret = store_then_forget(r, e, n, step_end_store, &x, "finish");
	if (ret)
		goto out;
	ioacct_probes_dropped(r->probes, s->slot, &x.dropped_events, &x.dropped_bytes, true);
	log_info("job %s/%llu step %u finished (%s)", j->job.cluster,
		 (unsigned long long)j->job.job_id, s->step_id, x.state);
	r->slots[s->slot] = NULL;
	step_detach(j, s);
	step_free(s);
	if (j->nsteps == 0)
		j->idle_since_ns = ioacct_mono_ns();
out:
	free(e);
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

static void handle_finish_step(struct ioacct_registry *r, const struct ioacct_req_finish *req,
			       struct ioacct_reply *rep)
{
	const char *cluster = req->cluster[0] ? req->cluster :
			      (r->cfg->cluster[0] ? r->cfg->cluster : "local");
	struct djob *j = job_lookup(r, cluster, req->job_id);
	struct dstep *s = j ? step_lookup(j, req->step_id) : NULL;
	int ret;

	if (!s) {
		ioacct_reply_error(rep, -ENOENT, "job %llu step %u is not being monitored",
			  (unsigned long long)req->job_id, req->step_id);
		return;
	}
	rep->job_id = j->job.job_id;
	rep->job_key = j->job.key;
	ret = ioacct_registry_step_finish(r, s, req->state, req->exit_code);
	if (ret)
		ioacct_reply_error(rep, ret, "cannot store the step: %s", ioacct_store_errmsg(r->store));
}

/* Finishes a job of the registry: its steps, then itself. */
static void job_finish_all(struct ioacct_registry *r, struct djob *j, const char *state,
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

/*
 * Whether this daemon takes over the job's report, into *out: a report
 * asked, a cluster store to merge in, and more than one node. Its pattern
 * is expanded here from the job as registered, as the epilog would expand
 * it. false: the epilog writes this node's part as before.
 */
static bool report_spec(const struct ioacct_registry *r, const struct ioacct_job *job,
			const struct ioacct_report_spec *req, struct ioacct_report_spec *out)
{
	struct ioacct_report_vars v = {
		.job_id = job->job_id, .has_array = job->has_array, .array_job_id = job->array_job_id,
		.array_task_id = job->array_task_id, .user = job->user, .job_name = job->name,
		.workdir = job->workdir, .node = job->node,
	};
	char err[512];

	if (!req->path[0] || !req->formats || !r->cfg->cluster_db[0] ||
	    !ioacct_pgstore_available() || !strchr(req->nodes, ','))
		return false;
	*out = *req;
	if (ioacct_report_path_expand(req->path, &v, out->path, sizeof(out->path), err, sizeof(err))) {
		log_warn("job %s/%llu: no merged report (%s): each node writes its own",
			 job->cluster, (unsigned long long)job->job_id, err);
		return false;
	}
	return true;
}

/* Whether `node` is one of a comma-separated list. */
static bool in_list(const char *list, const char *node)
{
	size_t n = strlen(node);

	while (*list) {
		size_t l = strcspn(list, ",");

		if (l == n && strncmp(list, node, n) == 0)
			return true;
		list += l;
		list += strspn(list, ",");
	}
	return false;
}

/*
 * A job of several nodes with a merged report, none of whose steps was
 * monitored here (it ran on other nodes only): an empty finished part,
 * exported like any other, so that the report counts this node in rather
 * than waiting merge_timeout for it and naming it missing. No spec: the
 * nodes with data offer and write the report. 0, or -errno to answer as
 * before (not monitored).
 */
static int empty_part(struct ioacct_registry *r, const char *cluster,
		      const struct ioacct_req_finish *req, struct ioacct_reply *rep)
{
	const char *node = req->node_name[0] ? req->node_name : r->cfg->node;
	struct ioacct_job job = { .job_id = req->job_id };
	int ret;

	if (!req->report.path[0] || !req->report.formats || !r->cfg->cluster_db[0] ||
	    !ioacct_pgstore_available() || !strchr(req->report.nodes, ',') ||
	    !in_list(req->report.nodes, node))
		return -ENOENT;
	ioacct_strlcpy(job.cluster, cluster, sizeof(job.cluster));
	ioacct_strlcpy(job.node, node, sizeof(job.node));
	ioacct_strlcpy(job.source, "slurm", sizeof(job.source));
	job.uid = req->uid;
	job.gid = req->gid;
	ioacct_strlcpy(job.user, req->user, sizeof(job.user));
	ioacct_strlcpy(job.workdir, req->workdir, sizeof(job.workdir));
	job.start_ns = ioacct_wall_ns();
	snprintf(job.state, sizeof(job.state), "RUNNING");
	ioacct_strlcpy(job.probe_mode, ioacct_probes_mode(r->probes), sizeof(job.probe_mode));
	job.bin_width_ns = r->cfg->bin_width_ns;
	ret = ioacct_store_job_insert(r->store, &job);
	if (!ret)
		ret = ioacct_store_job_finish(r->store, job.key, ioacct_wall_ns(),
					      req->state[0] ? req->state : "COMPLETED", req->exit_code);
	if (ret) {
		log_warn("job %s/%llu: cannot keep this node's empty part: %s", cluster,
			 (unsigned long long)req->job_id, ioacct_store_errmsg(r->store));
		return ret;
	}
	log_info("job %s/%llu finished (%s): no step of it monitored on %s, an empty part for its merged report",
		 cluster, (unsigned long long)req->job_id, req->state[0] ? req->state : "COMPLETED", node);
	rep->job_id = req->job_id;
	rep->job_key = job.key;
	rep->report_merged = 1;
	return 0;
}

static void handle_finish_job(struct ioacct_registry *r, const struct ioacct_req_finish *req,
			      struct ioacct_reply *rep)
{
	const char *cluster = req->cluster[0] ? req->cluster :
			      (r->cfg->cluster[0] ? r->cfg->cluster : "local");
	const char *state = req->state[0] ? req->state : "COMPLETED";
	struct djob *j = job_lookup(r, cluster, req->job_id);
	/* Static: the event loop is one thread, and it is 16 KiB. */
	static struct ioacct_report_spec merged;
	struct ioacct_job stored;
	int ret;

	if (j) {
		bool m = report_spec(r, &j->job, &req->report, &merged);

		job_finish_all(r, j, state, req->exit_code, m ? &merged : NULL, rep);
		rep->report_merged = m && rep->status == 0;
		return;
	}
	/* Running in the store only: its daemon died before it could finish it. */
	ret = ioacct_store_job_find_running(r->store, cluster, req->job_id, &stored);
	if (ret == -ENOENT && empty_part(r, cluster, req, rep) == 0)
		return;
	if (ret == -ENOENT) {
		ioacct_reply_error(rep, ret, "job %llu of cluster %s is not being monitored",
			  (unsigned long long)req->job_id, cluster);
		return;
	}
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
		return;
	}
	bool m = report_spec(r, &stored, &req->report, &merged);

	ret = ioacct_store_job_finish_report(r->store, stored.key, ioacct_wall_ns(), state,
					     req->exit_code, m ? &merged : NULL);
	if (ret) {
		ioacct_reply_error(rep, ret, "cannot finish job: %s", ioacct_store_errmsg(r->store));
		return;
	}
	log_info("job %s/%llu finished (%s)", cluster, (unsigned long long)req->job_id, state);
	rep->job_id = stored.job_id;
	rep->job_key = stored.key;
	rep->report_merged = m;
}

/* ---- snapshot and status ---------------------------------------------------------------- */

static int rows_add(struct ioacct_reply *rep, size_t *cap, uint32_t step_id, uint32_t op,
		    const struct ioacct_mount *m, const struct ioacct_counters *c)
{
	for (size_t i = 0; i < rep->nrows; i++) {
		struct ioacct_snap_row *row = &rep->rows[i];

		if (row->step_id == step_id && row->op == op && row->mount.mnt_id == m->mnt_id) {
			ioacct_counters_add(&row->c, c);
			return 0;
		}
	}
	if (rep->nrows == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct ioacct_snap_row *nr = realloc(rep->rows, ncap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		rep->rows = nr;
		*cap = ncap;
	}
	memset(&rep->rows[rep->nrows], 0, sizeof(rep->rows[0]));
	rep->rows[rep->nrows].step_id = step_id;
	rep->rows[rep->nrows].op = op;
	rep->rows[rep->nrows].mount = *m;
	rep->rows[rep->nrows].c = *c;
	rep->nrows++;
	return 0;
}

static const struct ioacct_mount *jd_mount(const struct ioacct_jobdata *jd, uint32_t mnt_id,
					   struct ioacct_mount *tmp)
{
	for (size_t i = 0; i < jd->nmounts; i++)
		if (jd->mounts[i].mnt_id == mnt_id)
			return &jd->mounts[i];
	memset(tmp, 0, sizeof(*tmp));
	tmp->mnt_id = mnt_id;
	snprintf(tmp->path, sizeof(tmp->path), "mnt:%u", mnt_id);
	return tmp;
}

int ioacct_registry_kernel_read(struct ioacct_registry *r, struct ioacct_probe_entry **e,
				size_t *n)
{
	struct drain_ctx c = { .r = r, .all = true, .only_slot = -1 };

	*e = NULL;
	*n = 0;
	return ioacct_probes_read(r->probes, want_entry, &c, e, n);
}

int ioacct_registry_snapshot(struct ioacct_registry *r, int64_t job_key, struct djob *j,
			     const struct ioacct_probe_entry *e, size_t n, struct ioacct_job *job,
			     struct ioacct_reply *rep)
{
	struct ioacct_jobdata *jd = NULL;
	struct ioacct_mount tmp;
	size_t cap = rep->nrows;
	int ret;

	/* Totals alone: a running job's are summed in SQL, its series are not needed. */
	ret = ioacct_store_job_load_totals(r->store, job_key, &jd);
	if (ret)
		return ret;
	for (size_t i = 0; i < jd->ntotals; i++) {
		const struct ioacct_sample *t = &jd->totals[i];

		if (rows_add(rep, &cap, t->step_id, t->op, jd_mount(jd, t->mnt_id, &tmp), &t->c))
			goto nomem;
	}
	for (size_t i = 0; j && i < n; i++) {
		struct dstep *s = e[i].slot < r->nslots ? r->slots[e[i].slot] : NULL;
		const struct ioacct_mount *m;

		if (!s || s->job != j)
			continue;
		m = job_mount(j, e[i].mnt_id);
		if (!m)
			m = jd_mount(jd, e[i].mnt_id, &tmp);
		if (rows_add(rep, &cap, s->step_id, e[i].op, m, &e[i].c))
			goto nomem;
	}
	for (size_t i = 0; j && i < j->nsteps; i++) {
		uint64_t ev, by;

		if (ioacct_probes_dropped(r->probes, j->steps[i]->slot, &ev, &by, false) == 0) {
			rep->dropped_events += ev;
			rep->dropped_bytes += by;
		}
	}
	rep->dropped_events += jd->job.dropped_events;
	rep->dropped_bytes += jd->job.dropped_bytes;
	if (job)
		*job = jd->job;
	ioacct_jobdata_free(jd);
	return 0;
nomem:
	ioacct_jobdata_free(jd);
	return -ENOMEM;
}

/* The cgroups the job's running steps are watched through, for iotrace --job. -ENOMEM. */
static int snapshot_watches(const struct djob *j, struct ioacct_reply *rep)
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

/* Counts so far of a running job: what the store has plus what the kernel holds. */
static void handle_snapshot(struct ioacct_registry *r, const struct ioacct_req_query *req,
			    uid_t peer, struct ioacct_reply *rep)
{
	const char *cluster = req->cluster[0] ? req->cluster :
			      (r->cfg->cluster[0] ? r->cfg->cluster : "local");
	struct djob *j = job_lookup(r, cluster, req->job_id);
	struct ioacct_probe_entry *e = NULL;
	size_t n = 0;
	int ret;

	/* With private_data, another user's job is not there: its existence is private too. */
	if (!j || (peer != 0 && peer != j->job.uid && r->cfg->private_data)) {
		ioacct_reply_error(rep, -ENOENT, "job %llu of cluster %s is not running under ioacct",
				   (unsigned long long)req->job_id, cluster);
		return;
	}
	if (peer != 0 && peer != j->job.uid) {
		ioacct_reply_error(rep, -EPERM, "job %llu belongs to another user",
				   (unsigned long long)req->job_id);
		return;
	}
	if (ioacct_registry_kernel_read(r, &e, &n)) {
		/* As before: the store's part alone when the kernel cannot be read. */
		free(e);
		e = NULL;
		n = 0;
	}
	ret = ioacct_registry_snapshot(r, j->job.key, j, e, n, NULL, rep);
	free(e);
	if (ret == -ENOMEM) {
		ioacct_reply_error(rep, -ENOMEM, "out of memory");
		return;
	}
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(r->store));
		return;
	}
	ret = snapshot_watches(j, rep);
	if (ret) {
		ioacct_reply_error(rep, ret, "out of memory");
		return;
	}
	rep->job_id = j->job.job_id;
	rep->job_key = j->job.key;
	rep->start_ns = j->job.start_ns;
	rep->start_mono_ns = j->start_mono_ns;
	rep->bin_width_ns = j->job.bin_width_ns;
	ioacct_strlcpy(rep->probe_mode, j->job.probe_mode, sizeof(rep->probe_mode));
}

/*
 * A page of jobs for ioacct. With private_data the store is root's alone,
 * so this is how users read it: their own jobs only (query_fetch.c). With
 * a cluster store, jobs are the cluster's, whole (unless asked for this
 * node's): those are answered off the event loop (ioacct_registry_defer());
 * when PostgreSQL is down that is an error saying so, not this node's part
 * of the jobs passed off as the whole.
 */
static bool cluster_query(const struct ioacct_registry *r, const struct ioacct_request *req)
{
	return req->type == IOACCT_MSG_QUERY && r->cfg->cluster_db[0] && !req->u.select.local &&
	       ioacct_pgstore_available();
}

static void handle_query(struct ioacct_registry *r, const struct ioacct_request *req,
			 uid_t peer, struct ioacct_reply *rep)
{
	if (cluster_query(r, req))
		ioacct_reply_error(rep, -EOPNOTSUPP,
				   "query: the cluster store is read off the event loop (ioacct_registry_defer)");
	else
		ioacct_query_serve_page(r->store, &req->u.select, (uint32_t)peer,
					r->cfg->private_data, rep);
}

int ioacct_registry_defer(struct ioacct_registry *r, const struct ioacct_request *req,
			  uid_t peer_uid, void *tag, struct ioacct_reply *rep)
{
	int ret;

	if (!cluster_query(r, req))
		return 0;
	memset(rep, 0, sizeof(*rep));
	rep->seq = req->seq;
	/* Started with the server (ioacct_registry_answers_fd()), which waits for its answers. */
	if (!r->clusterq) {
		ioacct_reply_error(rep, -EAGAIN,
				   "cluster store (cluster_db) unavailable: ioacctd could not start the thread that reads it (see its log); ioacct --local reads this node's part alone");
		return -EAGAIN;
	}
	ret = ioacct_clusterq_submit(r->clusterq, req, peer_uid, tag, rep);
	if (ret == -ENOMEM)
		ioacct_reply_error(rep, ret, "cluster queries: out of memory");
	return ret ? ret : 1;
}

int ioacct_registry_answers_fd(struct ioacct_registry *r)
{
	if (!r->cfg->cluster_db[0] || !ioacct_pgstore_available())
		return -1;
	if (!r->clusterq && !(r->clusterq = ioacct_clusterq_new(r->cfg))) {
		log_err("cluster queries: cannot start their thread: %s; ioacct reads only this node's store",
			strerror(errno));
		return -1;
	}
	return ioacct_clusterq_fd(r->clusterq);
}

bool ioacct_registry_answer(struct ioacct_registry *r, void **tag, struct ioacct_reply *rep)
{
	return r->clusterq && ioacct_clusterq_take(r->clusterq, tag, rep);
}

void ioacct_registry_forget_client(struct ioacct_registry *r, void *tag)
{
	if (r->clusterq)
		ioacct_clusterq_cancel(r->clusterq, tag);
}

/*
 * One job for the clients (lib/store/job_fetch.c), by the same rule as a
 * query. By key (iorun and spank: the job they ran here) or --local, this
 * node's store. By job id with a cluster store, the whole job from there,
 * read by the loader's thread (jobload.h: the event loop never waits for
 * PostgreSQL summing a big job) and kept for the next pages; a job it does
 * not have yet (running, or waiting in the outbox) is this node's.
 */
static void handle_job(struct ioacct_registry *r, const struct ioacct_req_job *req, uid_t peer,
		       struct ioacct_reply *rep)
{
	const struct ioacct_jobdata *jd = NULL;
	char err[1536];
	int ret;

	if (!r->cfg->cluster_db[0] || req->local || !req->job_id || !ioacct_pgstore_available()) {
		ioacct_job_serve_page(r->store, req, (uint32_t)peer, r->cfg->private_data, rep);
		return;
	}
	if (!r->jobload && !(r->jobload = ioacct_jobload_new(r->cfg->cluster_db))) {
		ioacct_reply_error(rep, -ENOMEM, "job: out of memory");
		return;
	}
	ret = ioacct_jobload_get(r->jobload, req->cluster, req->job_id, !req->after, &jd, err,
				 sizeof(err));
	if (ret == -EINPROGRESS) {
		ioacct_reply_error(rep, ret, "job %" PRIu64 " is being read from the cluster store: ask again",
				   req->job_id);
		return;
	}
	if (ret == -ENOENT) {
		ioacct_job_serve_page(r->store, req, (uint32_t)peer, r->cfg->private_data, rep);
		return;
	}
	if (ret) {
		ioacct_reply_error(rep, ret, "job: %s", err);
		return;
	}
	if (r->cfg->private_data && peer != 0 && jd->job.uid != (uint32_t)peer)
		ioacct_reply_error(rep, -EPERM, "job %" PRIu64 " belongs to another user (private_data = yes)",
			  jd->job.job_id);
	else if (req->job_key && req->job_key != jd->job.key)
		ioacct_reply_error(rep, -EAGAIN,
			  "job %" PRIu64 " changed in the cluster store while it was read: ask again",
			  jd->job.job_id);
	else
		ioacct_job_serve_page_jd(jd, req, rep);
}

static void handle_status(struct ioacct_registry *r, struct ioacct_reply *rep)
{
	uint32_t entries = 0;

	ioacct_registry_counts(r, &rep->jobs_running, &rep->cgroups_watched);
	ioacct_probes_count(r->probes, &entries);
	ioacct_strlcpy(rep->version, PACKAGE_VERSION, sizeof(rep->version));
	ioacct_strlcpy(rep->probe_mode, ioacct_probes_job_mode(r->probes), sizeof(rep->probe_mode));
	for (uint32_t s = 0; s < r->nslots; s++) {
		uint64_t ev, by;

		if (r->slots[s] && ioacct_probes_dropped(r->probes, s, &ev, &by, false) == 0)
			rep->dropped_events += ev;
	}
	snprintf(rep->detail, sizeof(rep->detail),
		 "probes: %s, %s (%s); kernel reads: %s; page-cache views: %s; kernel entries: %u of %u; "
		 "slots: %u; FMODE_CREATED: %s",
		 ioacct_probes_mode(r->probes),
		 ioacct_probes_attached(r->probes) ? "attached" : "detached (nothing watched)",
		 ioacct_probes_reason(r->probes), ioacct_probes_reads(r->probes),
		 ioacct_probes_views(r->probes), entries,
		 r->cfg->max_entries, r->nslots,
		 ioacct_probes_fmode_created(r->probes) ? "calibrated" : "unknown");
}

void ioacct_registry_handle(struct ioacct_registry *r, const struct ioacct_request *req,
			    uid_t peer_uid, struct ioacct_reply *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->seq = req->seq;
	switch (req->type) {
	case IOACCT_MSG_REGISTER:
	case IOACCT_MSG_FINISH_STEP:
	case IOACCT_MSG_FINISH_JOB:
		if (peer_uid != 0) {
			ioacct_reply_error(rep, -EPERM, "only root may %s (you are uid %u)",
				  req->type == IOACCT_MSG_REGISTER ? "register jobs" : "finish jobs",
				  (unsigned int)peer_uid);
			return;
		}
		if (req->type == IOACCT_MSG_REGISTER)
			handle_register(r, &req->u.reg, rep);
		else if (req->type == IOACCT_MSG_FINISH_STEP)
			handle_finish_step(r, &req->u.fin, rep);
		else
			handle_finish_job(r, &req->u.fin, rep);
		return;
	case IOACCT_MSG_STATUS:
		handle_status(r, rep);
		return;
	case IOACCT_MSG_SNAPSHOT:
		handle_snapshot(r, &req->u.query, peer_uid, rep);
		return;
	case IOACCT_MSG_QUERY:
		handle_query(r, req, peer_uid, rep);
		return;
	case IOACCT_MSG_JOB:
		/* One job for the clients (lib/store/job_fetch.c), by the same rule as a query. */
		handle_job(r, &req->u.job, peer_uid, rep);
		return;
	case IOACCT_MSG_LIVE:
		ioacct_registry_live(r, &req->u.query, peer_uid, rep);
		return;
	default:
		ioacct_reply_error(rep, -EOPNOTSUPP, "request type %u is not one ioacctd serves", req->type);
	}
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
	j->next = r->jobs;
	r->jobs = j;
	job_read_mounts(r, j);
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

static bool step_watches(const struct dstep *s, uint64_t cgroup_id, uint32_t hier)
{
	for (size_t i = 0; i < s->nwatches; i++)
		if (s->watches[i].cgroup_id == cgroup_id && s->watches[i].hier == hier)
			return true;
	return false;
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
	ret = ioacct_registry_adopt_running(r);
	if (ret)
		goto out;
	for (struct djob *j = r->jobs; j; j = j->next)
		if (j->mntns)
			job_publish_mountpoints(r, j);
	ret = ioacct_probes_publish(r->probes);
out:
	free(w);
	return ret;
}
