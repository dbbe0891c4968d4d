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
 * Tasks listed per job and pass. Finding a task's namespace is a stat() of
 * /proc/PID/ns/mnt, about 10 us: a mount no task has costs 1 s at the limit,
 * once per pass (10,000 tasks: 100 ms, measured); a mount that is there is
 * found at the first task of its namespace.
 */
#define MNTNS_MAX_TASKS 100000

struct nsmount {
	uint32_t mnt_id;
	char *path;
	char *fstype;
	char *source;
};

struct nstab {
	uint32_t inum;
	uint64_t read_pass;          /* the pass that last read it */
	uint64_t seen_pass;          /* the last pass a task was seen in it: the oldest goes first */
	size_t n;
	struct nsmount *m;
};

/* A namespace one of the job's tasks lives in, and that task. */
struct nstask {
	uint32_t inum;
	pid_t pid;
};

/*
 * One job's tasks as listed in this pass, and the namespaces of those
 * looked at so far (pids[0..next)): a lookup stops at the first task
 * whose namespace has the mount, the next one carries on from there.
 */
struct jobscan {
	int64_t job_key;
	pid_t *pids;
	size_t npids;
	size_t next;
	struct nstask *ns;
	size_t nns;
};

struct ioacct_mntns {
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
		free(c->scans[i].pids);
		free(c->scans[i].ns);
	}
	free(c->scans);
	c->scans = NULL;
	c->nscans = 0;
}

struct ioacct_mntns *ioacct_mntns_create(void)
{
	struct ioacct_mntns *c = calloc(1, sizeof(*c));

	if (!c)
		errno = ENOMEM;
	else
		c->pass = 1;
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

/* ---- tables per namespace ------------------------------------------------------------- */

static struct nstab *tab_get(struct ioacct_mntns *c, uint32_t inum)
{
	for (size_t i = 0; i < c->ntabs; i++)
		if (c->tabs[i].inum == inum)
			return &c->tabs[i];
	return NULL;
}

/* A free entry for a new table: the one seen longest ago is evicted when all are used. */
static struct nstab *tab_new(struct ioacct_mntns *c, uint32_t inum)
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
	t->inum = inum;
	return t;
}

/*
 * Reads the mount table of namespace inum from the mountinfo of pid, a task
 * seen in it. The pid may have exited and been reused since, so the
 * namespace is checked again after the read. NULL when the task is gone or
 * memory is short: the mount stays unnamed, nothing else is lost.
 */
static struct nstab *tab_read(struct ioacct_mntns *c, uint32_t inum, pid_t pid)
{
	struct ioacct_mount *m = NULL;
	struct nsmount *nm = NULL;
	struct nstab *t;
	uint32_t again = 0;
	size_t n = 0, i;
	char err[256];

	if (ioacct_mountinfo_read(pid, &m, &n, err, sizeof(err)) != 0) {
		log_debug("mount namespace %u: %s", inum, err);
		return NULL;
	}
	if (ioacct_proc_mntns(pid, &again) != 0 || again != inum)
		goto fail;
	nm = calloc(n ? n : 1, sizeof(*nm));
	if (!nm)
		goto fail;
	for (i = 0; i < n; i++) {
		nm[i].mnt_id = m[i].mnt_id;
		nm[i].path = strdup(m[i].path);
		nm[i].fstype = strdup(m[i].fstype);
		nm[i].source = strdup(m[i].source);
		if (!nm[i].path || !nm[i].fstype || !nm[i].source) {
			nsmounts_free(nm, i + 1);
			goto fail;
		}
	}
	t = tab_get(c, inum);
	if (t)
		nsmounts_free(t->m, t->n);
	else if (!(t = tab_new(c, inum))) {
		nsmounts_free(nm, n);
		goto fail;
	}
	t->m = nm;
	t->n = n;
	t->read_pass = t->seen_pass = c->pass;
	free(m);
	return t;
fail:
	free(m);
	return NULL;
}

static const struct nsmount *tab_find(const struct nstab *t, uint32_t mnt_id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].mnt_id == mnt_id)
			return &t->m[i];
	return NULL;
}

/* ---- the namespaces of a job's tasks ---------------------------------------------------- */

/* Adds the namespace of pid unless it is known; 1 if it was new. */
static int scan_add(struct jobscan *s, uint32_t inum, pid_t pid)
{
	struct nstask *ns;

	for (size_t i = 0; i < s->nns; i++)
		if (s->ns[i].inum == inum)
			return 0;
	ns = realloc(s->ns, (s->nns + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	s->ns = ns;
	s->ns[s->nns].inum = inum;
	s->ns[s->nns].pid = pid;
	s->nns++;
	return 1;
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
	for (p = text; *p && s->npids < MNTNS_MAX_TASKS; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		while (*end == '\n')
			end++;
		if (pid <= 0)
			continue;
		if (s->npids == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			pid_t *np = realloc(s->pids, ncap * sizeof(*np));

			if (!np) {
				ret = -ENOMEM;
				goto out;
			}
			s->pids = np;
			*cap = ncap;
		}
		s->pids[s->npids++] = (pid_t)pid;
	}
	if (depth >= MNTNS_MAX_DEPTH || s->npids >= MNTNS_MAX_TASKS || !(d = opendir(path)))
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
	if (s->npids >= MNTNS_MAX_TASKS)
		log_debug("job key %lld: only the first %d tasks looked at for mount namespaces",
			  (long long)job_key, MNTNS_MAX_TASKS);
	return s;
}

/*
 * Looks for the mount in the table of namespace nt: as cached (read if new),
 * or, with reread, read again unless it was in this pass.
 */
static int ns_lookup(struct ioacct_mntns *c, const struct nstask *nt, uint32_t skip_ns,
		     bool reread, uint32_t mnt_id, struct ioacct_mount *out, uint32_t *ns)
{
	struct nstab *t = tab_get(c, nt->inum);
	const struct nsmount *m;

	if (nt->inum == skip_ns)
		return -ENOENT;
	if (t)
		t->seen_pass = c->pass;
	if (reread && (!t || t->read_pass == c->pass))
		return -ENOENT; /* unreadable, or read in this pass already */
	if (!t || reread)
		t = tab_read(c, nt->inum, nt->pid);
	if (!t || !(m = tab_find(t, mnt_id)))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->mnt_id = mnt_id;
	ioacct_strlcpy(out->path, m->path, sizeof(out->path));
	ioacct_strlcpy(out->fstype, m->fstype, sizeof(out->fstype));
	ioacct_strlcpy(out->source, m->source, sizeof(out->source));
	*ns = nt->inum;
	return 0;
}

int ioacct_mntns_find(struct ioacct_mntns *c, int64_t job_key, const char *const *cgroups,
		      size_t ncgroups, uint32_t skip_ns, uint32_t mnt_id, struct ioacct_mount *out,
		      uint32_t *ns)
{
	struct jobscan *s = scan_job(c, job_key, cgroups, ncgroups);
	int ret;

	if (!s)
		return -ENOMEM;
	/* The namespaces met so far in this pass, as cached... */
	for (size_t i = 0; i < s->nns; i++)
		if (ns_lookup(c, &s->ns[i], skip_ns, false, mnt_id, out, ns) == 0)
			return 0;
	/* ...then those of the tasks not looked at yet: one read per new namespace... */
	while (s->next < s->npids) {
		pid_t pid = s->pids[s->next++];
		uint32_t inum;

		if (ioacct_proc_mntns(pid, &inum) != 0)
			continue; /* exited */
		ret = scan_add(s, inum, pid);
		if (ret < 0)
			return ret;
		if (ret > 0 && ns_lookup(c, &s->ns[s->nns - 1], skip_ns, false, mnt_id, out, ns) == 0)
			return 0;
	}
	/* ...then, for a mount made since, those read in an earlier pass, read again. */
	for (size_t i = 0; i < s->nns; i++)
		if (ns_lookup(c, &s->ns[i], skip_ns, true, mnt_id, out, ns) == 0)
			return 0;
	return -ENOENT;
}
