// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The jobs' mounts: which file system a mount id of the kernel's counters is,
 * named once per job in the store (the first time its data names it) from
 * the job's mount table, the kernel's own mounts, a container's table
 * (mntns.h), or what the probes noted of a mount gone since.
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmounts.h"
#include "log.h"
#include "mntns.h"
#include "procfs.h"
#include "util.h"

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

void ioacct_mnttab_put(struct mnttab *t)
{
	if (t && --t->refs == 0) {
		free(t->m);
		free(t);
	}
}

const struct ioacct_mount *ioacct_registry_job_mount(const struct djob *j, uint32_t mnt_id)
{
	return j->mt ? ioacct_mount_find(j->mt->m, j->mt->n, mnt_id) : NULL;
}

/* See registry.h. */
void ioacct_jobmounts_read(struct ioacct_registry *r, struct djob *j)
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
		ioacct_mnttab_put(t); /* the job's namespace is another one now */
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

void ioacct_jobmounts_publish(struct ioacct_registry *r, struct djob *j)
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
static bool job_mount_noted(struct ioacct_registry *r, const struct djob *j, struct ioacct_mount *m)
{
	char fstype[sizeof(m->fstype)], path[IOACCT_NOTE_PATH_MAX];
	bool complete = false, found = false;
	uint32_t ns = 0;

	/* Its own steps' notes only: the id may be another job's mount now. */
	for (size_t i = 0; i < j->nsteps && !found; i++)
		found = ioacct_probes_mount_note(r->probes, j->steps[i]->slot, m->mnt_id, fstype,
						 sizeof(fstype), path, sizeof(path), &ns,
						 &complete) == 0;
	if (!found)
		return false;
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
	return complete;
}

int ioacct_jobmounts_store(struct ioacct_registry *r, struct djob *j, uint32_t mnt_id)
{
	uint64_t pass = ioacct_mntns_pass_no(r->mntns);
	struct stored_mnt *sm = NULL, *nsm;
	const struct ioacct_mount *m;
	struct ioacct_mount unknown;
	bool named = true;
	int ret;

	for (size_t i = 0; i < j->nstored_mnts && !sm; i++)
		if (j->stored_mnts[i].mnt_id == mnt_id)
			sm = &j->stored_mnts[i];
	if (sm && (sm->named || sm->tried_pass == pass || sm->tries >= IOACCT_UNNAMED_TRIES))
		return 0;
	m = ioacct_registry_job_mount(j, mnt_id);
	if (!m) {
		ioacct_jobmounts_read(r, j);
		m = ioacct_registry_job_mount(j, mnt_id);
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
		named = job_mount_noted(r, j, &unknown);
		m = &unknown;
	}
	if (sm) {
		/* Stored unnamed before: replaced only by a name. */
		sm->tried_pass = pass;
		sm->tries++;
		if (!named)
			return 0;
		log_info("job %s/%llu: mount %u, stored unnamed, is %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, mnt_id, m->path);
	}
	ret = ioacct_store_mount_put(r->store, j->job.key, m);
	if (ret)
		return ret;
	if (sm) {
		sm->named = true;
		return 0;
	}
	nsm = realloc(j->stored_mnts, (j->nstored_mnts + 1) * sizeof(*nsm));
	if (!nsm)
		return -ENOMEM;
	j->stored_mnts = nsm;
	j->stored_mnts[j->nstored_mnts++] = (struct stored_mnt){ .mnt_id = mnt_id, .named = named,
								  .tries = 1, .tried_pass = pass };
	return 0;
}
