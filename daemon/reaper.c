// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reaper: every job ends, exactly once, even when its finish never
 * reached the daemon (killed, stopped, or its store failing at that moment).
 * A step whose watched cgroups have all been empty or gone for reap_grace is
 * finished by the daemon, and so is a job that has had no step for reap_grace
 * when its finish may have been lost too (djob.finish_lost):
 * state ENDED, exit code unknown, counters drained and stored, slot freed.
 * The grace lets Slurm's own finish (the plugin, the epilog) win the race.
 */
#include "registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"
#include "util.h"

/* Deep enough for Slurm's job/step/user/task trees; deeper ones count as live. */
#define REAP_MAX_DEPTH 8

enum cg_state { CG_LIVE, CG_EMPTY, CG_GONE };

/* cgroup v2: "populated 0" in cgroup.events covers every descendant. */
static enum cg_state v2_state(const char *dir)
{
	char path[PATH_MAX + 16], buf[256];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? CG_GONE : CG_LIVE;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return CG_LIVE;
	buf[len] = '\0';
	return strstr(buf, "populated 0") ? CG_EMPTY : CG_LIVE;
}

/* cgroup v1 has no populated flag: no task in cgroup.procs, here or below. */
static enum cg_state v1_state(const char *dir, int depth)
{
	char path[PATH_MAX + 16], c;
	enum cg_state st = CG_EMPTY;
	struct dirent *d;
	ssize_t len;
	DIR *dh;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? CG_GONE : CG_LIVE;
	len = read(fd, &c, 1);
	close(fd);
	if (len != 0)
		return CG_LIVE; /* a task, or an error: never reap on doubt */
	if (depth >= REAP_MAX_DEPTH)
		return CG_LIVE;
	dh = opendir(dir);
	if (!dh)
		return errno == ENOENT ? CG_GONE : CG_LIVE;
	while (st == CG_EMPTY && (d = readdir(dh))) {
		if (d->d_type != DT_DIR || d->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= sizeof(path))
			st = CG_LIVE;
		else if (v1_state(path, depth + 1) == CG_LIVE)
			st = CG_LIVE;
	}
	closedir(dh);
	return st;
}

static enum cg_state watch_state(const struct dwatch *w)
{
	uint64_t id = 0;

	/* A new cgroup of the same path is another one: this one is gone. */
	if (ioacct_cgroup_id(w->cgroup, &id) || id != w->cgroup_id)
		return CG_GONE;
	return w->hier == IOACCT_HIER_V1 ? v1_state(w->cgroup, 0) : v2_state(w->cgroup);
}

static bool step_live(const struct dstep *s)
{
	for (size_t i = 0; i < s->nwatches; i++)
		if (watch_state(&s->watches[i]) == CG_LIVE)
			return true;
	return false;
}

/* Whether `since` (0: not yet) is at least the grace old, starting the clock when 0. */
static bool grace_over(uint64_t *since, uint64_t now, uint64_t grace_ns)
{
	if (*since == 0) {
		*since = now ? now : 1;
		return grace_ns == 0;
	}
	return now - *since >= grace_ns;
}

static void reap_steps(struct ioacct_registry *r, struct djob *j, uint64_t now, uint64_t grace)
{
	/* Backwards: finishing a step moves the last one into its place. */
	for (size_t i = j->nsteps; i-- > 0;) {
		struct dstep *s = j->steps[i];

		if (step_live(s)) {
			s->empty_since_ns = 0;
			continue;
		}
		if (s->empty_since_ns == 0)
			log_debug("job %s/%llu step %u: its cgroups are empty; finished in %llu ms "
				  "unless its finish comes", j->job.cluster,
				  (unsigned long long)j->job.job_id, s->step_id,
				  (unsigned long long)(grace / 1000000));
		if (!grace_over(&s->empty_since_ns, now, grace))
			continue;
		log_info("job %s/%llu step %u: its cgroups emptied and no finish came: ending it (%s)",
			 j->job.cluster, (unsigned long long)j->job.job_id, s->step_id,
			 IOACCT_STATE_ENDED);
		/* Its job's finish is likely lost too. */
		j->finish_lost = true;
		/* On failure (the store again) it stays, and is tried at the next drain. */
		ioacct_registry_step_finish(r, s, IOACCT_STATE_ENDED, IOACCT_EXIT_UNKNOWN);
	}
}

int ioacct_registry_reap(struct ioacct_registry *r)
{
	uint64_t now = ioacct_mono_ns();
	uint64_t grace = r->cfg->reap_grace_ms * 1000000ULL;
	struct djob *j = r->jobs, *next;
	int ret = 0;

	for (; j; j = next) {
		next = j->next;
		reap_steps(r, j, now, grace);
		if (j->nsteps || !j->finish_lost) {
			j->idle_since_ns = 0;
			continue;
		}
		if (!grace_over(&j->idle_since_ns, now, grace))
			continue;
		log_info("job %s/%llu: no step left and no finish came: ending it (%s)",
			 j->job.cluster, (unsigned long long)j->job.job_id, IOACCT_STATE_ENDED);
		if (ioacct_registry_job_end(r, j, IOACCT_STATE_ENDED, IOACCT_EXIT_UNKNOWN, NULL)) {
			log_warn("job %s/%llu: cannot end it: %s; tried again at the next drain",
				 j->job.cluster, (unsigned long long)j->job.job_id,
				 ioacct_store_errmsg(r->store));
			ret = -EIO;
		}
	}
	return ret;
}
