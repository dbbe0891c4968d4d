// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The jobs' mounts: which file system a mount key of the kernel's counters
 * is, named once per job in the store (the first time its data names it)
 * from the job's mount table, the kernel's own mounts, a container's table
 * (mntns.h), or what the probes noted of a mount gone since; a table's entry
 * only where mntid.h proves it the counted mount, never by a 32-bit id
 * another mount may have had (issue 36).
 */
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmounts.h"
#include "log.h"
#include "mntid.h"
#include "mntns.h"
#include "procfs.h"
#include "util.h"

/*
 * A mount table, shared by the jobs of one mount namespace: at 1,000 jobs
 * on a node with 40 mounts, one copy each would be 330 MB (an entry holds
 * two PATH_MAX strings). since[i]: CLOCK_MONOTONIC of the first read that
 * listed entry i as it is, every read since agreeing (mntid.h).
 */
struct mnttab {
	unsigned refs;
	uint32_t mntns; /* 0: unknown, never shared */
	size_t n;
	struct ioacct_mount *m;
	uint64_t *since;
};

void ioacct_mnttab_put(struct mnttab *t)
{
	if (t && --t->refs == 0) {
		free(t->m);
		free(t->since);
		free(t);
	}
}

/* What a live view names a mount not stored yet by: only a table's entry proven without a note. */
const struct ioacct_mount *ioacct_registry_job_mount(const struct djob *j, uint64_t mnt_id)
{
	if (!j->mt)
		return NULL;
	return ioacct_mntid_match(j->mt->m, j->mt->since, j->mt->n, j->mntns, mnt_id, NULL,
				  j->mt_first_ns);
}

/* An entry of the table before this read that lists the same mount, alike in every field. */
static const uint64_t *since_of(const struct mnttab *t, const struct ioacct_mount *e)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->m[i].mnt_id == e->mnt_id && t->m[i].mnt_id_old == e->mnt_id_old &&
		    !strcmp(t->m[i].path, e->path) && !strcmp(t->m[i].fstype, e->fstype) &&
		    !strcmp(t->m[i].source, e->source))
			return &t->since[i];
	return NULL;
}

/* See registry.h. */
void ioacct_jobmounts_read(struct ioacct_registry *r, struct djob *j)
{
	struct ioacct_mntns_ref ns = { .inum = j->mntns, .id = j->mntns_id }, self;
	uint64_t *since, now = ioacct_mono_ns();
	struct ioacct_mount *m = NULL;
	struct mnttab *t = j->mt;
	size_t n = 0, mapped;
	char err[256];
	bool own;

	own = ioacct_proc_mntns_ref(0, &self) == 0 &&
	      (!j->mntns || ioacct_mntns_ref_same(&ns, &self));
	/* Not the pid's namespace now: once the task is gone, the pid may be a stranger's. */
	if (j->pid > 0 && j->mntns &&
	    ioacct_mountinfo_read_ns(j->pid, &ns, &m, &n, err, sizeof(err)) == 0)
		goto done;
	/* The daemon's own table is the job's only while the job is in the daemon's namespace. */
	if (!own)
		return;
	if (ioacct_mountinfo_read(0, &m, &n, err, sizeof(err)) != 0) {
		log_warn("job %s/%llu: cannot read a mount table: %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, err);
		return;
	}
done:
	/* Where the probes key mounts by their unique ids, the table's entries too. */
	ioacct_mntid_map(own ? &self : &ns, own, m, n, &mapped);
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
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->refs = 1;
		t->mntns = j->mntns;
	}
	since = calloc(n ? n : 1, sizeof(*since));
	if (!t || !since) {
		free(since);
		free(m);
		j->mt = t;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t *was = since_of(t, &m[i]);

		since[i] = was ? *was : now;
	}
	free(t->m);
	free(t->since);
	t->m = m;
	t->since = since;
	t->n = n;
	j->mt = t;
	if (!j->mt_first_ns)
		j->mt_first_ns = now;
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
	if (ns == j->mntns)
		return;
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

/* The job's own table's entry proven to be mount key (mntid.h), or NULL. */
static const struct ioacct_mount *job_table_mount(const struct djob *j, uint64_t key,
						  const struct ioacct_mntid_note *note)
{
	if (!j->mt)
		return NULL;
	return ioacct_mntid_match(j->mt->m, j->mt->since, j->mt->n, j->mntns, key, note,
				  j->mt_first_ns);
}

/*
 * A mount of another mount namespace than the job's (a container's), from
 * the tasks in the job's watched cgroups: see mntns.h. NULL if none has it.
 */
static const struct ioacct_mount *job_mount_in_container(struct ioacct_registry *r,
							 struct djob *j, uint64_t key,
							 const struct ioacct_mntid_note *note,
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
	ret = ioacct_mntns_find(r->mntns, j->job.key, cgroups, n, j->mntns, key, note, buf, &ns);
	free(cgroups);
	if (ret)
		return NULL;
	say_whose(j, buf, ns);
	log_info("job %s/%llu: mount %" PRIu64 " is %s (%s) in mount namespace %u", j->job.cluster,
		 (unsigned long long)j->job.job_id, key, buf->path, buf->fstype, ns);
	return buf;
}

/*
 * A mount no table proves any more (a container step that ended before the
 * drain): named from what the probes noted of it, its mount point's path in
 * its namespace, which the kernel walked when the job first did I/O on it.
 * Where the path did not fit, the path stays mnt:N and the source gives its
 * last components. Whether it got a name.
 */
static bool job_mount_noted(const struct djob *j, const struct ioacct_mntid_note *note,
			    struct ioacct_mount *m)
{
	ioacct_strlcpy(m->fstype, note->fstype, sizeof(m->fstype));
	m->mnt_id_old = note->mnt_id_old;
	if (note->complete) {
		ioacct_strlcpy(m->path, note->path, sizeof(m->path));
		say_whose(j, m, note->mntns);
		snprintf(m->source, sizeof(m->source),
			 "mount namespace %u, gone before the drain (named by the probes)",
			 note->mntns);
	} else {
		snprintf(m->source, sizeof(m->source),
			 "gone before it could be named: mount point ...%s in mount namespace %u",
			 note->path, note->mntns);
	}
	log_info("job %s/%llu: mount %" PRIu64 " is gone; it was a %s on %s%s in mount namespace %u",
		 j->job.cluster, (unsigned long long)j->job.job_id, m->mnt_id, note->fstype,
		 note->complete ? "" : "...", note->path, note->mntns);
	return note->complete;
}

/*
 * What the probes noted of mount key when slot's counters on it were made;
 * NULL when nothing, or a note of the slot's earlier step (another job,
 * should its notes have outlived the step: probes_maps.c forgets them).
 */
static const struct ioacct_mntid_note *job_note(struct ioacct_registry *r, const struct djob *j,
						uint32_t slot, uint64_t key,
						struct ioacct_mntid_note *buf)
{
	if (ioacct_probes_mount_note(r->probes, key, slot, buf))
		return NULL;
	if (buf->slot_start != j->start_mono_ns)
		return NULL;
	return buf;
}

/* FNV-1a: two stored paths of one job compared without keeping them. */
static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/*
 * Two mounts of one job at one mount point (two containers in turn, each
 * with its tmpfs on /scratch; a namespace's inode number handed on) are two
 * mounts: the later one's path says its key, so that no report has two
 * mounts of one name. self: m's own entry, stored unnamed before. Returns
 * the hash of the path m keeps.
 */
static uint64_t path_own(const struct djob *j, const struct stored_mnt *self,
			 struct ioacct_mount *m)
{
	uint64_t h = path_hash(m->path);
	char path[sizeof(m->path)];

	for (size_t i = 0; i < j->nstored_mnts; i++) {
		if (&j->stored_mnts[i] == self || j->stored_mnts[i].path_hash != h)
			continue;
		ioacct_strlcpy(path, m->path, sizeof(path));
		if ((size_t)snprintf(m->path, sizeof(m->path), "%s (mount %" PRIu64 ")", path,
				     m->mnt_id) >= sizeof(m->path))
			ioacct_strlcpy(m->path, path, sizeof(m->path));
		return path_hash(m->path);
	}
	return h;
}

int ioacct_jobmounts_store(struct ioacct_registry *r, struct djob *j, uint32_t slot, uint64_t key)
{
	uint64_t pass = ioacct_mntns_pass_no(r->mntns);
	struct stored_mnt *sm = NULL, *nsm;
	const struct ioacct_mntid_note *note;
	struct ioacct_mntid_note nbuf;
	const struct ioacct_mount *m;
	struct ioacct_mount mt;
	bool named = true;
	uint64_t hash;
	int ret;

	for (size_t i = 0; i < j->nstored_mnts && !sm; i++)
		if (j->stored_mnts[i].key == key)
			sm = &j->stored_mnts[i];
	if (sm && (sm->named || sm->tried_pass == pass || sm->tries >= IOACCT_UNNAMED_TRIES))
		return 0;
	note = job_note(r, j, slot, key, &nbuf);
	m = job_table_mount(j, key, note);
	if (!m) {
		ioacct_jobmounts_read(r, j);
		m = job_table_mount(j, key, note);
	}
	if (!m)
		m = ioacct_kmounts_find(r->kmounts, r->nkmounts, key);
	if (!m)
		m = job_mount_in_container(r, j, key, note, &mt);
	if (m && m != &mt) {
		mt = *m;
		m = &mt;
	}
	/* Proven by the note, it is stored under the counters' key. */
	mt.mnt_id = key;
	if (!m) {
		/* Unmounted since, or never proven: keep the data, say what is known. */
		memset(&mt, 0, sizeof(mt));
		mt.mnt_id = key;
		snprintf(mt.path, sizeof(mt.path), "mnt:%" PRIu64, key);
		snprintf(mt.fstype, sizeof(mt.fstype), "unknown");
		named = note && job_mount_noted(j, note, &mt);
	}
	if (sm) {
		/* Stored unnamed before: replaced only by a name. */
		sm->tried_pass = pass;
		sm->tries++;
		if (!named)
			return 0;
		log_info("job %s/%llu: mount %" PRIu64 ", stored unnamed, is %s", j->job.cluster,
			 (unsigned long long)j->job.job_id, key, mt.path);
	}
	hash = path_own(j, sm, &mt);
	ret = ioacct_store_mount_put(r->store, j->job.key, &mt);
	if (ret)
		return ret;
	if (sm) {
		sm->named = true;
		sm->path_hash = hash;
		return 0;
	}
	nsm = realloc(j->stored_mnts, (j->nstored_mnts + 1) * sizeof(*nsm));
	if (!nsm)
		return -ENOMEM;
	j->stored_mnts = nsm;
	j->stored_mnts[j->nstored_mnts++] = (struct stored_mnt){
		.key = key, .path_hash = hash, .named = named, .tries = 1, .tried_pass = pass
	};
	return 0;
}
