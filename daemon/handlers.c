// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The handlers of ioacctd's requests: who may ask what, the defaults a
 * request leaves out, and its reply, over the registry's API (jobs.h):
 * REGISTER and the finishes change the registry through it; SNAPSHOT and
 * LIVE read it; STATUS counts; QUERY and JOB read the store, or the
 * cluster store off the event loop (clusterq.h, jobload.h).
 */
#include "jobs.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clusterq.h"
#include "job_fetch.h"
#include "jobload.h"
#include "log.h"
#include "mpiprobes.h"
#include "pgstore.h"
#include "procfs.h"
#include "query_fetch.h"
#include "render.h"
#include "util.h"

/* ---- register ----------------------------------------------------------------------------- */

/* The cgroup to watch: given as a path, or the one the task is in. */
static int resolve_cgroup(const struct ioacct_config *cfg, const struct ioacct_req_register *req,
			  char *fs_path, size_t len, uint64_t *id, enum ioacct_hier *hier,
			  struct ioacct_reply *rep)
{
	char rel[PATH_MAX], mnt[PATH_MAX];
	const char *ctrl = cfg->cgroup_v1_hierarchy;
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

/* The request's checks and its cgroup; the registry does the rest (ioacct_registry_register()). */
static void handle_register(struct ioacct_registry *r, const struct ioacct_req_register *req,
			    struct ioacct_reply *rep)
{
	char fs_path[PATH_MAX];
	enum ioacct_hier hier = IOACCT_HIER_V2;
	uint64_t cgroup_id = 0;

	if (req->bin_width_ns && (req->bin_width_ns < 100000000ULL ||
				  req->bin_width_ns > 86400ULL * NSEC_PER_SEC)) {
		ioacct_reply_error(rep, -ERANGE, "bin width must be between 0.1 and 86400 seconds");
		return;
	}
	if (resolve_cgroup(ioacct_registry_config(r), req, fs_path, sizeof(fs_path), &cgroup_id,
			   &hier, rep))
		return;
	ioacct_registry_register(r, req, fs_path, cgroup_id, hier, rep);
}

/* ---- finish ----------------------------------------------------------------------------- */

/* Whether the job has a running step of that id. */
static bool job_has_step(const struct djob *j, uint32_t step_id)
{
	uint32_t slot;

	for (size_t i = 0; i < ioacct_registry_job_nsteps(j); i++)
		if (ioacct_registry_job_step(j, i, &slot) == step_id)
			return true;
	return false;
}

static void handle_finish_step(struct ioacct_registry *r, const struct ioacct_req_finish *req,
			       struct ioacct_reply *rep)
{
	const char *cluster = ioacct_registry_cluster(r, req->cluster);
	struct djob *j = ioacct_registry_job_find(r, cluster, req->job_id);
	int ret;

	if (!j || !job_has_step(j, req->step_id)) {
		ioacct_reply_error(rep, -ENOENT, "job %llu step %u is not being monitored",
			  (unsigned long long)req->job_id, req->step_id);
		return;
	}
	rep->job_id = ioacct_registry_job_info(j)->job_id;
	rep->job_key = ioacct_registry_job_info(j)->key;
	ret = ioacct_registry_finish_step(r, j, req->step_id, req->state, req->exit_code);
	if (ret)
		ioacct_reply_error(rep, ret, "cannot store the step: %s",
				   ioacct_store_errmsg(ioacct_registry_store(r)));
}

/*
 * Whether this daemon takes over the job's report, into *out: a report
 * asked, a cluster store to merge in, and more than one node. Its pattern
 * is expanded here from the job as registered, as the epilog would expand
 * it. false: the epilog writes this node's part as before.
 */
static bool report_spec(const struct ioacct_config *cfg, const struct ioacct_job *job,
			const struct ioacct_report_spec *req, struct ioacct_report_spec *out)
{
	struct ioacct_report_vars v = {
		.job_id = job->job_id, .has_array = job->has_array, .array_job_id = job->array_job_id,
		.array_task_id = job->array_task_id, .user = job->user, .job_name = job->name,
		.workdir = job->workdir, .node = job->node, .restart = job->restart,
	};
	char err[512];

	if (!req->path[0] || !req->formats || !cfg->cluster_db[0] ||
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
	const struct ioacct_config *cfg = ioacct_registry_config(r);
	struct ioacct_store *store = ioacct_registry_store(r);
	struct ioacct_probes *probes = ioacct_registry_probes(r);
	const char *node = req->node_name[0] ? req->node_name : cfg->node;
	struct ioacct_job job = { .job_id = req->job_id };
	int ret;

	if (!req->report.path[0] || !req->report.formats || !cfg->cluster_db[0] ||
	    !ioacct_pgstore_available() || !strchr(req->report.nodes, ',') ||
	    !in_list(req->report.nodes, node))
		return -ENOENT;
	ioacct_strlcpy(job.cluster, cluster, sizeof(job.cluster));
	ioacct_strlcpy(job.node, node, sizeof(job.node));
	ioacct_strlcpy(job.source, "slurm", sizeof(job.source));
	job.uid = req->uid;
	job.gid = req->gid;
	job.restart = req->restart;
	ioacct_strlcpy(job.user, req->user, sizeof(job.user));
	ioacct_strlcpy(job.workdir, req->workdir, sizeof(job.workdir));
	job.start_ns = ioacct_wall_ns();
	snprintf(job.state, sizeof(job.state), "RUNNING");
	ioacct_strlcpy(job.probe_mode, ioacct_probes_mode(probes), sizeof(job.probe_mode));
	job.bin_width_ns = cfg->bin_width_ns;
	ret = ioacct_store_job_insert(store, &job);
	if (!ret)
		ret = ioacct_store_job_finish(store, job.key, ioacct_wall_ns(),
					      req->state[0] ? req->state : "COMPLETED", req->exit_code);
	if (ret) {
		log_warn("job %s/%llu: cannot keep this node's empty part: %s", cluster,
			 (unsigned long long)req->job_id, ioacct_store_errmsg(store));
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
	const struct ioacct_config *cfg = ioacct_registry_config(r);
	struct ioacct_store *store = ioacct_registry_store(r);
	const char *cluster = ioacct_registry_cluster(r, req->cluster);
	const char *state = req->state[0] ? req->state : "COMPLETED";
	struct djob *j = ioacct_registry_job_find(r, cluster, req->job_id);
	/* Static: the event loop is one thread, and it is 16 KiB. */
	static struct ioacct_report_spec merged;
	struct ioacct_job stored;
	int ret;

	if (j) {
		bool m = report_spec(cfg, ioacct_registry_job_info(j), &req->report, &merged);

		ioacct_registry_job_finish(r, j, state, req->exit_code, m ? &merged : NULL, rep);
		rep->report_merged = m && rep->status == 0;
		return;
	}
	/* Running in the store only: its daemon died before it could finish it. */
	ret = ioacct_store_job_find_running(store, cluster, req->job_id, &stored);
	if (ret == -ENOENT && empty_part(r, cluster, req, rep) == 0)
		return;
	if (ret == -ENOENT) {
		ioacct_reply_error(rep, ret, "job %llu of cluster %s is not being monitored",
			  (unsigned long long)req->job_id, cluster);
		return;
	}
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(store));
		return;
	}
	bool m = report_spec(cfg, &stored, &req->report, &merged);

	ret = ioacct_store_job_finish_report(store, stored.key, ioacct_wall_ns(), state,
					     req->exit_code, m ? &merged : NULL);
	if (ret) {
		ioacct_reply_error(rep, ret, "cannot finish job: %s", ioacct_store_errmsg(store));
		return;
	}
	log_info("job %s/%llu finished (%s)", cluster, (unsigned long long)req->job_id, state);
	rep->job_id = stored.job_id;
	rep->job_key = stored.key;
	rep->report_merged = m;
}

/* ---- snapshot ---------------------------------------------------------------------------- */

/* Counts so far of a running job: what the store has plus what the kernel holds. */
static void handle_snapshot(struct ioacct_registry *r, const struct ioacct_req_query *req,
			    uid_t peer, struct ioacct_reply *rep)
{
	const struct ioacct_config *cfg = ioacct_registry_config(r);
	struct ioacct_store *store = ioacct_registry_store(r);
	const char *cluster = ioacct_registry_cluster(r, req->cluster);
	struct djob *j = ioacct_registry_job_find(r, cluster, req->job_id);
	const struct ioacct_job *job = j ? ioacct_registry_job_info(j) : NULL;
	struct ioacct_probe_entry *e = NULL;
	size_t n = 0;
	int ret;

	/* With private_data, another user's job is not there: its existence is private too. */
	if (!j || (peer != 0 && peer != job->uid && cfg->private_data)) {
		ioacct_reply_error(rep, -ENOENT, "job %llu of cluster %s is not running under ioacct",
				   (unsigned long long)req->job_id, cluster);
		return;
	}
	if (peer != 0 && peer != job->uid) {
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
	ret = ioacct_registry_snapshot(r, job->key, j, e, n, NULL, rep, NULL);
	free(e);
	if (ret == -ENOMEM) {
		ioacct_reply_error(rep, -ENOMEM, "out of memory");
		return;
	}
	if (ret) {
		ioacct_reply_error(rep, ret, "store: %s", ioacct_store_errmsg(store));
		return;
	}
	ret = ioacct_registry_job_watches(j, rep);
	if (ret) {
		ioacct_reply_error(rep, ret, "out of memory");
		return;
	}
	rep->job_id = job->job_id;
	rep->job_key = job->key;
	rep->start_ns = job->start_ns;
	rep->start_mono_ns = ioacct_registry_job_start_mono(j);
	rep->bin_width_ns = job->bin_width_ns;
	ioacct_strlcpy(rep->probe_mode, job->probe_mode, sizeof(rep->probe_mode));
}

/* ---- live -------------------------------------------------------------------------------- */

/*
 * LIVE: every running job's totals so far in one reply, for ioacct top.
 *
 * A job's totals are what the store has (drained bins) plus what the kernel
 * still holds; the daemon is single-threaded, so no drain can move counters
 * between the two while they are read. The kernel map is read once for all
 * jobs, and the reply says when (the daemon's CLOCK_MONOTONIC), so that the
 * client's rates are differences of exact counters over the daemon's clock.
 * Who sees what is QUERY's rule: with private_data a user other than root
 * sees only their own jobs, without it every job. Like a QUERY page, one
 * reply stops adding jobs after query_page_time (at least one job) or
 * half the message limit, and says `more`; jobs_running still counts all.
 */
struct live {
	struct ioacct_reply *rep;
	size_t jcap, scap, mcap, tcap;
	size_t bytes; /* an upper bound of the encoded reply so far */
};

static int entry_cmp(const void *a, const void *b)
{
	const struct ioacct_probe_entry *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The first of the entries (sorted by slot) of this slot, or where it would be. */
static size_t slot_first(const struct ioacct_probe_entry *e, size_t n, uint32_t slot)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Makes room for one more element in *array of *n, capacity *cap. */
static int grow(void **array, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*array, ncap * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = ncap;
	return 0;
}

/* Adds c to the job's total of (mount, op), summed over its steps. */
static int total_add(struct live *l, size_t first, int64_t key, uint64_t mnt_id, uint32_t op,
		     const struct ioacct_counters *c)
{
	struct ioacct_reply *rep = l->rep;
	struct ioacct_qtotal_row *t;

	for (size_t i = first; i < rep->nqtotals; i++) {
		t = &rep->qtotals[i];
		if (t->s.mnt_id == mnt_id && t->s.op == op) {
			t->s.c.bytes += c->bytes;
			t->s.c.calls += c->calls;
			t->s.c.errors += c->errors;
			t->s.c.ns += c->ns;
			return 0;
		}
	}
	if (grow((void **)&rep->qtotals, rep->nqtotals, &l->tcap, sizeof(*rep->qtotals)))
		return -ENOMEM;
	t = &rep->qtotals[rep->nqtotals++];
	memset(t, 0, sizeof(*t));
	t->job_key = key;
	t->s.step_id = UINT32_MAX;
	t->s.mnt_id = mnt_id;
	t->s.op = op;
	t->s.c.bytes = c->bytes;
	t->s.c.calls = c->calls;
	t->s.c.errors = c->errors;
	t->s.c.ns = c->ns;
	return 0;
}

/* Names the mount once per job: from the store, else the job's mount table, else mnt:N. */
static int mount_add(struct live *l, size_t first, const struct djob *j,
		     const struct ioacct_jobdata *jd, uint64_t mnt_id)
{
	struct ioacct_reply *rep = l->rep;
	const struct ioacct_mount *m;
	struct ioacct_qmount_row *row;

	for (size_t i = first; i < rep->nqmounts; i++)
		if (rep->qmounts[i].mount.mnt_id == mnt_id)
			return 0;
	if (grow((void **)&rep->qmounts, rep->nqmounts, &l->mcap, sizeof(*rep->qmounts)))
		return -ENOMEM;
	row = &rep->qmounts[rep->nqmounts++];
	memset(row, 0, sizeof(*row));
	row->job_key = ioacct_registry_job_info(j)->key;
	m = ioacct_mount_find(jd->mounts, jd->nmounts, mnt_id);
	if (!m)
		m = ioacct_registry_job_mount(j, mnt_id);
	if (m) {
		row->mount = *m;
	} else {
		row->mount.mnt_id = mnt_id;
		snprintf(row->mount.path, sizeof(row->mount.path), "mnt:%" PRIu64, mnt_id);
	}
	return 0;
}

/* One job into the reply; 1 when it would not fit (the reply says `more`). */
static int job_add(struct ioacct_store *store, struct live *l, const struct djob *j,
		   const struct ioacct_probe_entry *e, size_t n)
{
	const struct ioacct_job *job = ioacct_registry_job_info(j);
	size_t nsteps = ioacct_registry_job_nsteps(j);
	struct ioacct_reply *rep = l->rep;
	size_t t0 = rep->nqtotals, m0 = rep->nqmounts, s0 = rep->nqsteps;
	struct ioacct_jobdata *jd = NULL;
	uint32_t slot;
	size_t size;
	int ret;

	ret = ioacct_store_job_load_totals(store, job->key, &jd);
	if (ret) {
		log_warn("live: job %s/%llu: %s; left out of the reply", job->cluster,
			 (unsigned long long)job->job_id, ioacct_store_errmsg(store));
		return 0;
	}
	for (size_t i = 0; i < jd->ntotals && !ret; i++) {
		ret = total_add(l, t0, job->key, jd->totals[i].mnt_id, jd->totals[i].op,
				&jd->totals[i].c);
		if (!ret)
			ret = mount_add(l, m0, j, jd, jd->totals[i].mnt_id);
	}
	for (size_t k = 0; k < nsteps && !ret; k++) {
		ioacct_registry_job_step(j, k, &slot);
		for (size_t i = slot_first(e, n, slot); i < n && e[i].slot == slot && !ret; i++) {
			ret = total_add(l, t0, job->key, e[i].mnt_id, e[i].op, &e[i].c);
			if (!ret)
				ret = mount_add(l, m0, j, jd, e[i].mnt_id);
		}
	}
	for (size_t i = 0; i < nsteps && !ret; i++) {
		struct ioacct_qstep_row *s;

		ret = grow((void **)&rep->qsteps, rep->nqsteps, &l->scap, sizeof(*rep->qsteps));
		if (ret)
			break;
		s = &rep->qsteps[rep->nqsteps++];
		memset(s, 0, sizeof(*s));
		s->job_key = job->key;
		s->step.step_id = ioacct_registry_job_step(j, i, &slot);
		ioacct_strlcpy(s->step.state, "RUNNING", sizeof(s->step.state));
		for (size_t k = 0; k < jd->nsteps; k++)
			if (jd->steps[k].step_id == s->step.step_id)
				s->step.start_ns = jd->steps[k].start_ns;
	}
	if (!ret)
		ret = grow((void **)&rep->jobs, rep->njobs, &l->jcap, sizeof(*rep->jobs));
	if (ret)
		goto out;
	size = ioacct_proto_query_job_size(job, rep->nqsteps - s0, NULL, 0,
					   rep->nqtotals - t0, 0);
	for (size_t i = m0; i < rep->nqmounts; i++) {
		const struct ioacct_mount *m = &rep->qmounts[i].mount;

		/* Four attributes of at most 8 bytes, three headers of strings, and the strings. */
		size += 64 + strlen(m->path) + strlen(m->fstype) + strlen(m->source);
	}
	/* A page of QUERY's size limits: the job list, and the message with room to spare. */
	if (rep->njobs >= 4096 || l->bytes + size > IOACCT_PROTO_MAX_MSG / 2) {
		rep->nqtotals = t0;
		rep->nqmounts = m0;
		rep->nqsteps = s0;
		rep->more = 1;
		ret = 1;
		goto out;
	}
	l->bytes += size;
	rep->jobs[rep->njobs++] = *job;
out:
	ioacct_jobdata_free(jd);
	return ret;
}

static void handle_live(struct ioacct_registry *r, const struct ioacct_req_query *req,
			uid_t peer, struct ioacct_reply *rep)
{
	bool own_only = peer != 0 && ioacct_registry_config(r)->private_data;
	struct ioacct_probe_entry *e = NULL;
	struct live l = { .rep = rep };
	uint64_t deadline;
	size_t n = 0;
	int ret;

	rep->start_mono_ns = ioacct_mono_ns();
	/* QUERY's budget: a user refreshing often cannot hold up drains and root's requests. */
	deadline = rep->start_mono_ns + ioacct_query_page_ms() * (uint64_t)NSEC_PER_MSEC;
	ret = ioacct_registry_kernel_read(r, &e, &n);
	if (ret) {
		rep->status = ret;
		snprintf(rep->error, sizeof(rep->error), "cannot read the kernel's counters: %s",
			 strerror(-ret));
		return;
	}
	/* By slot: each job finds its steps' entries without a pass over all of them. */
	if (n)
		qsort(e, n, sizeof(*e), entry_cmp);
	for (struct djob *j = ioacct_registry_jobs(r); j; j = ioacct_registry_job_next(j)) {
		const struct ioacct_job *job = ioacct_registry_job_info(j);

		if (own_only && job->uid != (uint32_t)peer)
			continue;
		if (req->cluster[0] && strcmp(req->cluster, job->cluster) != 0)
			continue;
		rep->jobs_running++;
		if (rep->more)
			continue;
		if (rep->njobs && ioacct_mono_ns() > deadline) {
			rep->more = 1;
			continue;
		}
		ret = job_add(ioacct_registry_store(r), &l, j, e, n);
		if (ret < 0) {
			free(e);
			rep->status = ret;
			snprintf(rep->error, sizeof(rep->error), "out of memory for the live totals");
			return;
		}
	}
	free(e);
}

/* ---- query, job, status ------------------------------------------------------------------ */

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
	return req->type == IOACCT_MSG_QUERY && ioacct_registry_config(r)->cluster_db[0] &&
	       !req->u.select.local && ioacct_pgstore_available();
}

static void handle_query(struct ioacct_registry *r, const struct ioacct_request *req,
			 uid_t peer, struct ioacct_reply *rep)
{
	if (cluster_query(r, req))
		ioacct_reply_error(rep, -EOPNOTSUPP,
				   "query: the cluster store is read off the event loop (ioacct_registry_defer)");
	else
		ioacct_query_serve_page(ioacct_registry_store(r), &req->u.select, (uint32_t)peer,
					ioacct_registry_config(r)->private_data, rep);
}

int ioacct_registry_defer(struct ioacct_registry *r, const struct ioacct_request *req,
			  uid_t peer_uid, void *tag, struct ioacct_reply *rep)
{
	struct ioacct_clusterq *q = ioacct_registry_readers(r)->clusterq;
	int ret;

	if (!cluster_query(r, req))
		return 0;
	memset(rep, 0, sizeof(*rep));
	rep->seq = req->seq;
	/* Started with the server (ioacct_registry_answers_fd()), which waits for its answers. */
	if (!q) {
		ioacct_reply_error(rep, -EAGAIN,
				   "cluster store (cluster_db) unavailable: ioacctd could not start the thread that reads it (see its log); ioacct --local reads this node's part alone");
		return -EAGAIN;
	}
	ret = ioacct_clusterq_submit(q, req, peer_uid, tag, rep);
	if (ret == -ENOMEM)
		ioacct_reply_error(rep, ret, "cluster queries: out of memory");
	return ret ? ret : 1;
}

int ioacct_registry_answers_fd(struct ioacct_registry *r)
{
	const struct ioacct_config *cfg = ioacct_registry_config(r);
	struct ioacct_cluster_readers *rd = ioacct_registry_readers(r);

	if (!cfg->cluster_db[0] || !ioacct_pgstore_available())
		return -1;
	if (!rd->clusterq && !(rd->clusterq = ioacct_clusterq_new(cfg))) {
		log_err("cluster queries: cannot start their thread: %s; ioacct reads only this node's store",
			strerror(errno));
		return -1;
	}
	return ioacct_clusterq_fd(rd->clusterq);
}

/* The running step's slot, or -ENOENT. */
static int64_t step_slot(const struct djob *j, uint32_t step_id)
{
	for (size_t i = 0; j && i < ioacct_registry_job_nsteps(j); i++) {
		uint32_t slot;

		if (ioacct_registry_job_step(j, i, &slot) == step_id)
			return slot;
	}
	return -ENOENT;
}

int ioacct_registry_probe_exe(struct ioacct_registry *r, const struct ioacct_request *req,
			      uid_t peer_uid, int fd, void *tag, struct ioacct_reply *rep)
{
	const struct ioacct_req_probe *p = &req->u.probe;
	struct ioacct_mpiprobes *m = ioacct_registry_mpi(r);
	struct djob *j = ioacct_registry_job_find(r, ioacct_registry_cluster(r, p->cluster), p->job_id);
	int64_t slot = step_slot(j, p->step_id);
	const char *why = NULL;
	int ret = 0;

	memset(rep, 0, sizeof(*rep));
	rep->seq = req->seq;
	if (fd < 0)
		ioacct_reply_error(rep, (ret = -EINVAL), "probe_exe: no program's file came with it");
	else if (slot < 0)
		ioacct_reply_error(rep, (ret = -ENOENT), "probe_exe: job %llu step %u is not running here",
				   (unsigned long long)p->job_id, p->step_id);
	else if (peer_uid != 0 && ioacct_registry_job_info(j)->uid != (uint32_t)peer_uid)
		ioacct_reply_error(rep, (ret = -EPERM), "probe_exe: job %llu is not yours (uid %u)",
				   (unsigned long long)p->job_id, (unsigned int)peer_uid);
	if (ret || !m) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	ret = ioacct_mpiprobes_probe_exe(m, fd, (uint32_t)slot, tag, req->seq, &why);
	if (ret < 0)
		ioacct_reply_error(rep, ret, "probe_exe: the program not probed: %s",
				   why ? why : strerror(-ret));
	return ret;
}

bool ioacct_registry_answer(struct ioacct_registry *r, void **tag, uint16_t *type,
			    struct ioacct_reply *rep)
{
	struct ioacct_clusterq *q = ioacct_registry_readers(r)->clusterq;
	struct ioacct_mpiprobes *m = ioacct_registry_mpi(r);
	const char *why;
	uint32_t seq;
	int status;

	*type = IOACCT_MSG_QUERY;
	if (q && ioacct_clusterq_take(q, tag, rep))
		return true;
	if (!m || !ioacct_mpiprobes_answer(m, tag, &seq, &status, &why))
		return false;
	*type = IOACCT_MSG_PROBE_EXE;
	memset(rep, 0, sizeof(*rep));
	rep->seq = seq;
	if (status)
		ioacct_reply_error(rep, status, "probe_exe: the program not probed: %s", why);
	return true;
}

void ioacct_registry_forget_client(struct ioacct_registry *r, void *tag)
{
	struct ioacct_clusterq *q = ioacct_registry_readers(r)->clusterq;

	if (q)
		ioacct_clusterq_cancel(q, tag);
	if (ioacct_registry_mpi(r))
		ioacct_mpiprobes_cancel(ioacct_registry_mpi(r), tag);
}

/*
 * One job for the clients (lib/store/job_fetch.c), by the same rule as a
 * query. By key (iorun and spank: the job they ran here) or --local, this
 * node's store. By job id with a cluster store, the whole job from there,
 * read by the loader's thread (jobload.h: the event loop never waits for
 * PostgreSQL summing a big job) and kept for the next pages; a job it does
 * not have yet (running, or waiting in the outbox) is this node's.
 */
/*
 * A job from the cluster store that is one node's part alone (its mount ids
 * kept), this node's, whose records req asks for the cluster store does not
 * keep: they are in this node's store (per-file and MPI-IO records of a
 * part written before the cluster store's schema 9, HDF5 records before 18,
 * RPC rows before 20).
 */
static bool own_part(const struct ioacct_jobdata *jd, const struct ioacct_req_job *req,
		     const struct ioacct_config *cfg)
{
	bool kept = req->rpc ? jd->rpc_loaded : req->hdf5 ? jd->h5_loaded : jd->files_loaded;

	return !kept && !jd->nnodes && strcmp(jd->job.node, cfg->node) == 0;
}

static void handle_job(struct ioacct_registry *r, const struct ioacct_req_job *req, uid_t peer,
		       struct ioacct_reply *rep)
{
	const struct ioacct_config *cfg = ioacct_registry_config(r);
	struct ioacct_store *store = ioacct_registry_store(r);
	struct ioacct_cluster_readers *rd = ioacct_registry_readers(r);
	const struct ioacct_jobdata *jd = NULL;
	char err[1536];
	int ret;

	if (!cfg->cluster_db[0] || req->local || !req->job_id || !ioacct_pgstore_available()) {
		ioacct_job_serve_page(store, req, (uint32_t)peer, cfg->private_data, rep);
		return;
	}
	if (!rd->jobload && !(rd->jobload = ioacct_jobload_new(cfg))) {
		ioacct_reply_error(rep, -ENOMEM, "job: out of memory");
		return;
	}
	/* A first page, not a later one nor one of files, gets the job read anew. */
	ret = ioacct_jobload_get(rd->jobload, req->cluster, req->job_id, req->run, req->restart,
				 req->run_start, !req->after && !req->files && !req->mpiio && !req->hdf5 &&
					 !req->rpc,
				 &jd, err, sizeof(err));
	if (ret == -EINPROGRESS) {
		ioacct_reply_error(rep, ret, "job %" PRIu64 " is being read from the cluster store: ask again",
				   req->job_id);
		return;
	}
	if (ret == -ENOENT) {
		ioacct_job_serve_page(store, req, (uint32_t)peer, cfg->private_data, rep);
		return;
	}
	if (ret) {
		ioacct_reply_error(rep, ret, "job: %s", err);
		return;
	}
	if (cfg->private_data && peer != 0 && jd->job.uid != (uint32_t)peer)
		ioacct_reply_error(rep, -EPERM, "job %" PRIu64 " belongs to another user (private_data = yes)",
			  jd->job.job_id);
	else if (req->job_key && req->job_key != jd->job.key)
		ioacct_reply_error(rep, -EAGAIN,
			  "job %" PRIu64 " changed in the cluster store while it was read: ask again",
			  jd->job.job_id);
	else if ((req->files || req->mpiio || req->hdf5 || req->rpc) && own_part(jd, req, cfg))
		ioacct_job_serve_files_own(store, jd, req, rep);
	else
		ioacct_job_serve_page_jd(jd, req, rep);
}

static void handle_status(struct ioacct_registry *r, struct ioacct_reply *rep)
{
	struct ioacct_probes *probes = ioacct_registry_probes(r);
	const struct ioacct_config *cfg = ioacct_registry_config(r);
	uint32_t entries = 0;
	char files[48];

	if (cfg->file_records)
		snprintf(files, sizeof(files), "on (max_files = %" PRIu32 ")", cfg->max_files);
	else
		snprintf(files, sizeof(files), "off (file_records = no)");
	ioacct_registry_counts(r, &rep->jobs_running, &rep->cgroups_watched);
	ioacct_probes_count(probes, &entries);
	ioacct_strlcpy(rep->version, PACKAGE_VERSION, sizeof(rep->version));
	ioacct_strlcpy(rep->probe_mode, ioacct_probes_job_mode(probes), sizeof(rep->probe_mode));
	rep->dropped_events = ioacct_registry_dropped_events(r);
	snprintf(rep->detail, sizeof(rep->detail),
		 "probes: %s, %s (%s); kernel reads: %s; page-cache views: %s; kernel entries: %u of %u; "
		 "slots: %u; FMODE_CREATED: %s; per-file records: %s",
		 ioacct_probes_mode(probes),
		 ioacct_probes_attached(probes) ? "attached" : "detached (nothing watched)",
		 ioacct_probes_reason(probes), ioacct_probes_reads(probes),
		 ioacct_probes_views(probes), entries,
		 ioacct_registry_config(r)->max_entries, ioacct_registry_nslots(r),
		 ioacct_probes_fmode_created(probes) ? "calibrated" : "unknown", files);
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
		handle_live(r, &req->u.query, peer_uid, rep);
		return;
	default:
		ioacct_reply_error(rep, -EOPNOTSUPP, "request type %u is not one ioacctd serves", req->type);
	}
}
