// SPDX-License-Identifier: GPL-2.0-or-later
#include "mntns.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "log.h"
#include "procfs.h"

/*
 * Namespace tables kept. A table holds its strings only (about 100 bytes a
 * mount, not the 8 KiB of a struct ioacct_mount), so 256 containers of 50
 * mounts cost about 1.3 MB.
 */
#define MNTNS_MAX_TABLES 256
/* Cgroup levels below a watched one looked at: the kernel side goes 8 ancestors up. */
#define MNTNS_MAX_DEPTH 8
/*
 * Tasks listed per job and pass. Finding a task's namespace is an open,
 * fstat and ioctl of /proc/PID/ns/mnt (3 us measured, a stat 2 us; 10 us
 * under load): a mount no task has costs 1 s at the limit,
 * once per pass (10,000 tasks: 100 ms, measured); a mount that is there is
 * found at the first task of its namespace.
 */
#define MNTNS_MAX_TASKS 100000

struct nsmount {
	uint64_t key;                /* the unique id where mntid.h found it, else mnt_id_old */
	uint32_t mnt_id_old;
	char *path;
	char *fstype;
	char *source;
};

/*
 * The mount table of one namespace. The kernel gives a freed namespace's
 * inode number, and its mount ids, to the next namespaces made (issue 24:
 * a job's mounts were named by an earlier job's table), so a table is only
 * trusted while it surely is of the namespace asked for: always when the
 * kernel gave the namespace's 64-bit id, else only in the pass that read
 * it and for the job whose task it was read from.
 */
struct nstab {
	struct ioacct_mntns_ref ref;
	int64_t job_key;             /* the job whose task it was read from */
	uint64_t read_pass;          /* the pass that last read it */
	uint64_t seen_pass;          /* the last pass a task was seen in it: the oldest goes first */
	size_t n;
	struct nsmount *m;
};

/* A task listed in a cgroup.procs, and which cgroup directory (of jobscan.dirs) that was. */
struct jobtask {
	pid_t pid;
	size_t dir;
};

/* A namespace one of the job's tasks lives in, and that task. */
struct nstask {
	struct ioacct_mntns_ref ref;
	struct jobtask task;
};

/*
 * One job's tasks as listed in this pass, and the namespaces of those
 * looked at so far (tasks[0..next)): a lookup stops at the first task
 * whose namespace has the mount, the next one carries on from there.
 */
struct jobscan {
	int64_t job_key;
	char **dirs;                 /* the cgroup directories that listed tasks */
	size_t ndirs;
	struct jobtask *tasks;
	size_t ntasks;
	size_t next;
	struct nstask *ns;
	size_t nns;
};

struct ioacct_mntns {
	struct ioacct_mntns_ref self; /* the daemon's own namespace */
	uint64_t pass;
	struct nstab *tabs;
	size_t ntabs;
	struct jobscan *scans;
	size_t nscans;
};

static void nsmounts_free(struct nsmount *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].path);
		free(m[i].fstype);
		free(m[i].source);
	}
	free(m);
}

static void scans_clear(struct ioacct_mntns *c)
{
	for (size_t i = 0; i < c->nscans; i++) {
		for (size_t k = 0; k < c->scans[i].ndirs; k++)
			free(c->scans[i].dirs[k]);
		free(c->scans[i].dirs);
		free(c->scans[i].tasks);
		free(c->scans[i].ns);
	}
	free(c->scans);
	c->scans = NULL;
	c->nscans = 0;
}

struct ioacct_mntns *ioacct_mntns_create(void)
{
	struct ioacct_mntns *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->pass = 1;
	if (ioacct_proc_mntns_ref(0, &c->self))
		memset(&c->self, 0, sizeof(c->self));
	return c;
}

void ioacct_mntns_destroy(struct ioacct_mntns *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntabs; i++)
		nsmounts_free(c->tabs[i].m, c->tabs[i].n);
	free(c->tabs);
	scans_clear(c);
	free(c);
}

void ioacct_mntns_pass(struct ioacct_mntns *c)
{
	scans_clear(c);
	c->pass++;
}

uint64_t ioacct_mntns_pass_no(const struct ioacct_mntns *c)
{
	return c->pass;
}

/* ---- the job's tasks, pid reuse ruled out ----------------------------------------------- */

/*
 * Pins a task listed in the job's cgroup directory: a pid read from
 * cgroup.procs may belong, by now, to another user's process in another
 * namespace. The pinned process is the job's if the directory still lists
 * the pid; what is read of it until the ioacct_proc_unpin() that finds it
 * not reaped is the job task's. The pidfd, or -errno.
 */
static int task_pin(const struct jobscan *s, const struct jobtask *jt)
{
	char path[PATH_MAX];
	char *text = NULL, *p, *end;
	int fd = ioacct_proc_pin(jt->pid), ret = -ESRCH;

	if (fd < 0)
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", s->dirs[jt->dir]) >=
		    sizeof(path) ||
	    ioacct_procfs_read(path, &text) != 0)
		goto out;
	for (p = text; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		while (*end == '\n')
			end++;
		if (pid == jt->pid) {
			ret = 0;
			break;
		}
	}
out:
	free(text);
	if (ret) {
		ioacct_proc_unpin(fd);
		return ret;
	}
	return fd;
}

/* The namespace of a task of the job (see task_pin()): 0 or -errno. */
static int task_ns(const struct jobscan *s, const struct jobtask *jt, struct ioacct_mntns_ref *ref)
{
	int fd = task_pin(s, jt), ret;

	if (fd < 0)
		return fd;
	ret = ioacct_proc_mntns_ref(jt->pid, ref);
	if (ioacct_proc_unpin(fd) && !ret)
		ret = -ESRCH;
	return ret;
}

/* ---- tables per namespace ------------------------------------------------------------- */

static struct nstab *tab_get(struct ioacct_mntns *c, const struct ioacct_mntns_ref *ref)
{
	for (size_t i = 0; i < c->ntabs; i++)
		if (ioacct_mntns_ref_same(&c->tabs[i].ref, ref))
			return &c->tabs[i];
	return NULL;
}

/* Read in this pass for this job, or (with the kernel's id) in this pass at all. */
static bool tab_current(const struct ioacct_mntns *c, const struct nstab *t, int64_t job_key)
{
	return t->read_pass == c->pass && (t->ref.id || t->job_key == job_key);
}

/* Surely the table of the namespace it is kept under: see struct nstab. */
static bool tab_trusted(const struct ioacct_mntns *c, const struct nstab *t, int64_t job_key)
{
	return t->ref.id || tab_current(c, t, job_key);
}

/* A free entry for a new table: the one seen longest ago is evicted when all are used. */
static struct nstab *tab_new(struct ioacct_mntns *c)
{
	struct nstab *t;

	if (c->ntabs == MNTNS_MAX_TABLES) {
		t = &c->tabs[0];
		for (size_t i = 1; i < c->ntabs; i++)
			if (c->tabs[i].seen_pass < t->seen_pass)
				t = &c->tabs[i];
		nsmounts_free(t->m, t->n);
	} else {
		t = realloc(c->tabs, (c->ntabs + 1) * sizeof(*t));
		if (!t)
			return NULL;
		c->tabs = t;
		t = &c->tabs[c->ntabs++];
	}
	memset(t, 0, sizeof(*t));
	return t;
}

/*
 * Reads the mount table of namespace nt->ref from the mountinfo of
 * nt->task, a task of the job seen in it. The task may have exited and its
 * pid have been reused since: without the kernel's id, the pid is checked to
 * be the job's again (task_pin()); the namespace is checked around the read.
 * NULL when the task is gone or memory is short: the mount stays unnamed,
 * nothing else is lost.
 */
static struct nstab *tab_read(struct ioacct_mntns *c, const struct jobscan *s,
			      const struct nstask *nt)
{
	struct ioacct_mount *m = NULL;
	struct nsmount *nm = NULL;
	struct nstab *t;
	size_t n = 0, i, mapped;
	char err[256];
	int fd = -1, ret;

	/* With the id, whichever task is in the namespace reads its table. */
	if (!nt->ref.id && (fd = task_pin(s, &nt->task)) < 0)
		return NULL;
	ret = ioacct_mountinfo_read_ns(nt->task.pid, &nt->ref, &m, &n, err, sizeof(err));
	if (fd >= 0 && ioacct_proc_unpin(fd) && !ret) {
		snprintf(err, sizeof(err), "process %d exited during the read", (int)nt->task.pid);
		ret = -ESRCH;
	}
	if (ret) {
		log_debug("mount namespace %u: %s", nt->ref.inum, err);
		goto fail;
	}
	/* Where the kernel can say, each entry by the unique id the probes key its mount by. */
	ioacct_mntid_map(&nt->ref, ioacct_mntns_ref_same(&nt->ref, &c->self), m, n, &mapped);
	nm = calloc(n ? n : 1, sizeof(*nm));
	if (!nm)
		goto fail;
	for (i = 0; i < n; i++) {
		nm[i].key = m[i].mnt_id;
		nm[i].mnt_id_old = m[i].mnt_id_old;
		nm[i].path = strdup(m[i].path);
		nm[i].fstype = strdup(m[i].fstype);
		nm[i].source = strdup(m[i].source);
		if (!nm[i].path || !nm[i].fstype || !nm[i].source) {
			nsmounts_free(nm, i + 1);
			goto fail;
		}
	}
	t = tab_get(c, &nt->ref);
	if (t)
		nsmounts_free(t->m, t->n);
	else if (!(t = tab_new(c))) {
		nsmounts_free(nm, n);
		goto fail;
	}
	t->ref = nt->ref;
	t->job_key = s->job_key;
	t->m = nm;
	t->n = n;
	t->read_pass = t->seen_pass = c->pass;
	free(m);
	return t;
fail:
	free(m);
	return NULL;
}

/*
 * The entry of t that is the counted mount of key: by its unique id, or by
 * the note of it (mntid.h); never by a 32-bit id alone.
 */
static const struct nsmount *tab_find(const struct nstab *t, uint64_t key,
				      const struct ioacct_mntid_note *note)
{
	for (size_t i = 0; key >= IOACCT_MNT_UNIQUE_MIN && i < t->n; i++)
		if (t->m[i].key == key)
			return &t->m[i];
	for (size_t i = 0; note && note->mntns == t->ref.inum && i < t->n; i++)
		if (t->m[i].mnt_id_old == note->mnt_id_old &&
		    (t->m[i].key == key || t->m[i].key == t->m[i].mnt_id_old) &&
		    ioacct_mntid_note_agrees(note, t->m[i].fstype, t->m[i].path))
			return &t->m[i];
	return NULL;
}

/* ---- the namespaces of a job's tasks ---------------------------------------------------- */

static bool scan_knows(const struct jobscan *s, const struct ioacct_mntns_ref *ref)
{
	for (size_t i = 0; i < s->nns; i++)
		if (ioacct_mntns_ref_same(&s->ns[i].ref, ref))
			return true;
	return false;
}

static int scan_add(struct jobscan *s, const struct nstask *nt)
{
	struct nstask *ns = realloc(s->ns, (s->nns + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	s->ns = ns;
	s->ns[s->nns++] = *nt;
	return 0;
}

/*
 * Lists the tasks of one cgroup directory (path, of length len in a
 * PATH_MAX buffer) and of its descendants. A cgroup that goes away
 * meanwhile is skipped: the job's tasks come and go.
 */
static int scan_cgroup(struct jobscan *s, char *path, size_t len, int depth, size_t *cap)
{
	char *text = NULL, *p, *end;
	struct dirent *de;
	DIR *d = NULL;
	int ret = 0;

	if (len + sizeof("/cgroup.procs") > PATH_MAX)
		return 0;
	memcpy(path + len, "/cgroup.procs", sizeof("/cgroup.procs"));
	ret = ioacct_procfs_read(path, &text);
	path[len] = '\0';
	if (ret)
		return 0;
	if (*text) {
		/* Kept to check, later in the pass, that a pid is still the job's (task_pin()). */
		char **dirs = realloc(s->dirs, (s->ndirs + 1) * sizeof(*dirs));

		if (!dirs || !(dirs[s->ndirs] = strdup(path))) {
			if (dirs)
				s->dirs = dirs;
			ret = -ENOMEM;
			goto out;
		}
		s->dirs = dirs;
		s->ndirs++;
	}
	for (p = text; *p && s->ntasks < MNTNS_MAX_TASKS; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		while (*end == '\n')
			end++;
		if (pid <= 0)
			continue;
		if (s->ntasks == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			struct jobtask *nt = realloc(s->tasks, ncap * sizeof(*nt));

			if (!nt) {
				ret = -ENOMEM;
				goto out;
			}
			s->tasks = nt;
			*cap = ncap;
		}
		s->tasks[s->ntasks].pid = (pid_t)pid;
		s->tasks[s->ntasks].dir = s->ndirs - 1;
		s->ntasks++;
	}
	if (depth >= MNTNS_MAX_DEPTH || s->ntasks >= MNTNS_MAX_TASKS || !(d = opendir(path)))
		goto out;
	while ((de = readdir(d)) != NULL) {
		size_t nlen = strlen(de->d_name);

		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 || len + 1 + nlen >= PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, nlen + 1);
		ret = scan_cgroup(s, path, len + 1 + nlen, depth + 1, cap);
		path[len] = '\0';
		if (ret)
			break;
	}
out:
	if (d)
		closedir(d);
	free(text);
	return ret;
}

static struct jobscan *scan_job(struct ioacct_mntns *c, int64_t job_key,
				const char *const *cgroups, size_t ncgroups)
{
	char path[PATH_MAX];
	struct jobscan *s;
	size_t cap = 0;

	for (size_t i = 0; i < c->nscans; i++)
		if (c->scans[i].job_key == job_key)
			return &c->scans[i];
	s = realloc(c->scans, (c->nscans + 1) * sizeof(*s));
	if (!s)
		return NULL;
	c->scans = s;
	s = &c->scans[c->nscans++];
	memset(s, 0, sizeof(*s));
	s->job_key = job_key;
	for (size_t i = 0; i < ncgroups; i++) {
		if (ioacct_strlcpy(path, cgroups[i], sizeof(path)) != 0)
			continue;
		if (scan_cgroup(s, path, strlen(path), 0, &cap) != 0)
			break;
	}
	if (s->ntasks >= MNTNS_MAX_TASKS)
		log_debug("job key %lld: only the first %d tasks looked at for mount namespaces",
			  (long long)job_key, MNTNS_MAX_TASKS);
	return s;
}

/*
 * Looks for the mount in the table of namespace nt: as cached if it can be
 * trusted (read if new), or, with reread, read again unless it was in this
 * pass.
 */
static int ns_lookup(struct ioacct_mntns *c, const struct jobscan *s, const struct nstask *nt,
		     uint32_t skip_ns, bool reread, uint64_t mnt_id,
		     const struct ioacct_mntid_note *note, struct ioacct_mount *out, uint32_t *ns)
{
	struct nstab *t = tab_get(c, &nt->ref);
	const struct nsmount *m;

	if (nt->ref.inum == skip_ns)
		return -ENOENT;
	if (t)
		t->seen_pass = c->pass;
	if (reread && (!t || tab_current(c, t, s->job_key)))
		return -ENOENT; /* unreadable, or read in this pass already */
	if (!t || reread || !tab_trusted(c, t, s->job_key))
		t = tab_read(c, s, nt);
	if (!t || !(m = tab_find(t, mnt_id, note)))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->mnt_id = mnt_id;
	out->mnt_id_old = m->mnt_id_old;
	ioacct_strlcpy(out->path, m->path, sizeof(out->path));
	ioacct_strlcpy(out->fstype, m->fstype, sizeof(out->fstype));
	ioacct_strlcpy(out->source, m->source, sizeof(out->source));
	*ns = nt->ref.inum;
	return 0;
}

int ioacct_mntns_find(struct ioacct_mntns *c, int64_t job_key, const char *const *cgroups,
		      size_t ncgroups, uint32_t skip_ns, uint64_t mnt_id,
		      const struct ioacct_mntid_note *note, struct ioacct_mount *out, uint32_t *ns)
{
	struct jobscan *s = scan_job(c, job_key, cgroups, ncgroups);
	int ret;

	if (!s)
		return -ENOMEM;
	/* The namespaces met so far in this pass, as cached... */
	for (size_t i = 0; i < s->nns; i++)
		if (ns_lookup(c, s, &s->ns[i], skip_ns, false, mnt_id, note, out, ns) == 0)
			return 0;
	/* ...then those of the tasks not looked at yet: one read per new namespace... */
	while (s->next < s->ntasks) {
		struct nstask nt = { .task = s->tasks[s->next++] };

		/* A quick look first; a namespace new to the job is made sure of. */
		if (ioacct_proc_mntns_ref(nt.task.pid, &nt.ref) != 0 || scan_knows(s, &nt.ref))
			continue;
		if (task_ns(s, &nt.task, &nt.ref) != 0 || scan_knows(s, &nt.ref))
			continue; /* exited, or no task of the job any more */
		ret = scan_add(s, &nt);
		if (ret)
			return ret;
		if (ns_lookup(c, s, &s->ns[s->nns - 1], skip_ns, false, mnt_id, note, out, ns) == 0)
			return 0;
	}
	/* ...then, for a mount made since, those read in an earlier pass, read again. */
	for (size_t i = 0; i < s->nns; i++)
		if (ns_lookup(c, s, &s->ns[i], skip_ns, true, mnt_id, note, out, ns) == 0)
			return 0;
	return -ENOENT;
}
