// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacctd's rights: the state it writes given to its account, then the
 * switch to that account with the capabilities below (privs.h). libcap
 * speaks the kernel's capability sets (the bounding set, securebits) in
 * one place, as most daemons that keep a few capabilities do; the uid and
 * gid change through glibc, which applies it to every thread.
 */
#include "privs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/securebits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "config.h"
#include "darshan.h"
#include "log.h"
#include "store.h"
#include "util.h"

/* Pin directories below bpf_pin_dir: abi<N>, mode_<backend>; deeper is not ioacctd's. */
#define PIN_DEPTH_MAX 4

struct ioacct_privs {
	char user[64];
	uid_t uid;
	gid_t gid;
	bool setid;
};

/*
 * What ioacctd keeps once it runs as its account, and what needs it (the
 * same words in ioacctd(8)). Measured on 6.1, 6.12 and 6.18: without one,
 * the operation named fails with EPERM or EACCES.
 */
static const struct kept {
	cap_value_t cap;
	const char *why;
} kept_caps[] = {
	/* Every bpf() command on kernels before 6.5 (unprivileged_bpf_disabled), maps and loads since. */
	{ CAP_BPF, "the probes' maps, the tracer and MPI-IO programs loaded for jobs" },
	/* Tracing programs loaded later (the tracer), uprobes attached to MPI libraries (perf_event_open). */
	{ CAP_PERFMON, "tracing programs loaded and uprobes attached while jobs run" },
	/* /proc/PID/ns/mnt, /proc/PID/root and /proc/PID/environ of other users' tasks. */
	{ CAP_SYS_PTRACE, "jobs' mount namespaces, libraries and environments in /proc" },
	/* The pin directory under /sys/fs/bpf (mode 0700, root's) at each attach and detach. */
	{ CAP_DAC_READ_SEARCH, "the way to bpf_pin_dir through /sys/fs/bpf" },
};

/* Permitted only: raised in the child that writes a report file as its user (userfile.c). */
static const cap_value_t setid_caps[] = { CAP_SETUID, CAP_SETGID };

struct ioacct_privs *ioacct_privs_create(const char *user, bool setid, char *err, size_t errlen)
{
	struct ioacct_privs *p;
	struct passwd pw, *res = NULL;
	char buf[4096];
	int ret;

	ret = getpwnam_r(user, &pw, buf, sizeof(buf), &res);
	if (ret || !res) {
		snprintf(err, errlen,
			 "user = %s: %s; create the account (adduser --system --group %s, as the "
			 "packages do) or name another one in user",
			 user, ret ? strerror(ret) : "no such user", user);
		errno = ret ? ret : ENOENT;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ioacct_strlcpy(p->user, user, sizeof(p->user));
	p->uid = res->pw_uid;
	p->gid = res->pw_gid;
	p->setid = setid;
	return p;
}

void ioacct_privs_destroy(struct ioacct_privs *p)
{
	free(p);
}

uid_t ioacct_privs_uid(const struct ioacct_privs *p)
{
	return p->uid;
}

gid_t ioacct_privs_gid(const struct ioacct_privs *p)
{
	return p->gid;
}

/* ---- the state given away ----------------------------------------------------------- */

/* Everything in directory fd (closed here) and below, links not followed. */
static int give_tree(const struct ioacct_privs *p, int fd, const char *path, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = 0, sub;

	if (fchown(fd, p->uid, p->gid)) {
		ret = -errno;
		log_err("cannot give %s to %s: %s", path, p->user, strerror(errno));
		close(fd);
		return ret;
	}
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while (!ret && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    fchownat(dirfd(d), de->d_name, p->uid, p->gid, AT_SYMLINK_NOFOLLOW)) {
			ret = -errno;
			log_err("cannot give %s/%s to %s: %s", path, de->d_name, p->user,
				strerror(errno));
			break;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth >= PIN_DEPTH_MAX) {
			log_err("%s/%s: deeper than ioacctd pins", path, de->d_name);
			ret = -ELOOP;
			break;
		}
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			ret = -errno;
			break;
		}
		ret = give_tree(p, sub, de->d_name, depth + 1);
	}
	closedir(d);
	return ret;
}

/* bpf_pin_dir and what is pinned under it, on the BPF file system and nowhere else. */
static int give_pins(const struct ioacct_privs *p, const char *dir, char *err, size_t errlen)
{
	struct statfs sfs;
	int fd, ret;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return ioacct_seterr(err, errlen, ret, "cannot open the pin directory %s: %s", dir,
				     strerror(-ret));
	}
	if (fstatfs(fd, &sfs) || (unsigned long)sfs.f_type != (unsigned long)BPF_FS_MAGIC) {
		close(fd);
		return ioacct_seterr(err, errlen, -EINVAL,
				     "the pin directory %s is not on the BPF file system", dir);
	}
	ret = give_tree(p, fd, dir, 0);
	if (ret)
		return ioacct_seterr(err, errlen, ret, "cannot give the pins under %s to %s: %s",
				     dir, p->user, strerror(-ret));
	return 0;
}

/* A directory of ioacctd's: which of its files live in it, and what it does there later. */
struct statedir {
	char path[PATH_MAX];
	char names[16][NAME_MAX + 1];
	size_t nnames;
	char later[256];            /* what the account cannot do when it is not theirs */
};

static bool is_ours(const struct statedir *sd, const char *name)
{
	/* An FMODE_CREATED calibration interrupted at start (probes_maps.c). */
	if (!strncmp(name, ".ioacct-calibrate-", 18))
		return true;
	for (size_t i = 0; i < sd->nnames; i++)
		if (!strcmp(name, sd->names[i]))
			return true;
	return false;
}

/*
 * The directory is given to the account when it is root's, writable by
 * root alone and holds nothing but ioacctd's files: made by this daemon or
 * an earlier one (/run/ioacct, /var/lib/ioacct). A directory with anything
 * else in it is the site's: left as it is, with a warning.
 */
static void give_dir(const struct ioacct_privs *p, const struct statedir *sd)
{
	const char *foreign = NULL;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (lstat(sd->path, &st) || !S_ISDIR(st.st_mode) || st.st_uid == p->uid)
		return;
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) || !strcmp(sd->path, "/")) {
		log_warn("%s is not %s's: ioacctd cannot %s; give it to %s or use a directory of its own",
			 sd->path, p->user, sd->later, p->user);
		return;
	}
	d = opendir(sd->path);
	if (!d)
		return;
	while (!foreign && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !is_ours(sd, de->d_name))
			foreign = de->d_name;
	if (foreign) {
		log_warn("%s is root's and holds %s, which is not ioacctd's: left root's, so "
			 "ioacctd cannot %s; give it to %s or use a directory of its own",
			 sd->path, foreign, sd->later, p->user);
	} else if (lchown(sd->path, p->uid, p->gid)) {
		log_warn("cannot give %s to %s: %s; ioacctd cannot %s", sd->path, p->user,
			 strerror(errno), sd->later);
	} else {
		log_info("%s given to %s (it holds only ioacctd's files)", sd->path, p->user);
	}
	closedir(d);
}

/*
 * `path` + `suffix` is ioacctd's, in the state directory of its directory
 * (one of sd[0..*n), added when new), where ioacctd does `later` too.
 */
static void add_state(struct statedir *sd, size_t *n, const char *path, const char *suffix,
		      const char *later)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct statedir *s = NULL;
	size_t len;

	snprintf(dir, sizeof(dir), "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
	for (size_t i = 0; i < *n && !s; i++)
		if (!strcmp(sd[i].path, dir))
			s = &sd[i];
	if (!s) {
		s = &sd[(*n)++];
		memset(s, 0, sizeof(*s));
		ioacct_strlcpy(s->path, dir, sizeof(s->path));
	}
	len = strlen(s->later);
	if (!strstr(s->later, later))
		snprintf(s->later + len, sizeof(s->later) - len, "%s%s", len ? " or " : "", later);
	if (s->nnames < ARRAY_SIZE(s->names))
		snprintf(s->names[s->nnames++], sizeof(s->names[0]), "%.*s%s", NAME_MAX - 24,
			 slash ? slash + 1 : path, suffix);
}

/* The trace spool of an earlier daemon (root's) or a new one, for --io-monitor=trace. */
static int give_spool(const struct ioacct_privs *p, const struct ioacct_config *cfg, char *err,
		      size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;
	int ret;

	if (cfg->max_traced_jobs == 0)
		return 0;
	if (ioacct_darshan_spool_dir(cfg->db_path, dir, sizeof(dir)))
		return ioacct_seterr(err, errlen, -ENAMETOOLONG, "db path too long: %s", cfg->db_path);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		return ioacct_seterr(err, errlen, ret, "cannot make the trace spool %s: %s", dir,
				     strerror(-ret));
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != p->uid))
		return ioacct_seterr(err, errlen, -EPERM,
				     "the trace spool %s is not a directory of root's or %s's", dir,
				     p->user);
	if (lchown(dir, p->uid, p->gid)) {
		ret = -errno;
		return ioacct_seterr(err, errlen, ret, "cannot give the trace spool %s to %s: %s",
				     dir, p->user, strerror(-ret));
	}
	return 0;
}

int ioacct_privs_take_over(const struct ioacct_privs *p, const struct ioacct_config *cfg,
			   struct ioacct_store *store, char *err, size_t errlen)
{
	/* The store's files, as SQLite and store_restore() name them. */
	static const char *const db_files[] = {
		"", "-wal", "-shm", "-journal", "-wal.stale", "-shm.stale", ".restore",
		".restore-journal",
	};
	struct statedir sd[3];
	char spool[PATH_MAX];
	size_t n = 0;
	int ret;

	if (p->uid == 0)
		return 0;
	if (ioacct_store_chown(store, p->uid, p->gid))
		return ioacct_seterr(err, errlen, -EPERM, "%s", ioacct_store_errmsg(store));
	ret = give_pins(p, cfg->pin_dir, err, errlen);
	if (!ret)
		ret = give_spool(p, cfg, err, errlen);
	if (ret)
		return ret;
	for (size_t i = 0; i < ARRAY_SIZE(db_files); i++)
		add_state(sd, &n, cfg->db_path, db_files[i], "put back a store removed under it");
	if (!ioacct_darshan_spool_dir(cfg->db_path, spool, sizeof(spool)))
		add_state(sd, &n, spool, "", "put back a store removed under it");
	add_state(sd, &n, cfg->socket_path, "", "remove its socket when it stops");
	add_state(sd, &n, cfg->pid_file, "", "remove its pidfile when it stops");
	for (size_t i = 0; i < n; i++)
		give_dir(p, &sd[i]);
	return 0;
}

/* ---- the switch --------------------------------------------------------------------- */

/*
 * IOACCT_CAPS_DROP=cap_x,cap_y (tests only): capabilities of the kept set
 * given up too, to show what needs each. It can only take rights away.
 */
static bool test_dropped(cap_value_t cap)
{
	const char *env = getenv("IOACCT_CAPS_DROP");
	char name[32];
	cap_value_t c;

	while (env && *env) {
		size_t len = strcspn(env, ",");

		snprintf(name, sizeof(name), "%.*s", (int)len, env);
		if (cap_from_name(name, &c) == 0 && c == cap)
			return true;
		env += len + (env[len] == ',');
	}
	return false;
}

/* The capabilities kept: CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN where the kernel has neither. */
static size_t kept_list(cap_value_t *out, bool *old_kernel)
{
	size_t n = 0;

	*old_kernel = !CAP_IS_SUPPORTED(CAP_BPF) || !CAP_IS_SUPPORTED(CAP_PERFMON);
	for (size_t i = 0; i < ARRAY_SIZE(kept_caps); i++) {
		if (*old_kernel && (kept_caps[i].cap == CAP_BPF || kept_caps[i].cap == CAP_PERFMON))
			continue;
		out[n++] = kept_caps[i].cap;
	}
	if (*old_kernel)
		out[n++] = CAP_SYS_ADMIN;
	for (size_t i = 0; i < n; i++) {
		char *name;

		if (!test_dropped(out[i]))
			continue;
		name = cap_to_name(out[i]);
		log_warn("IOACCT_CAPS_DROP: without %s (tests only)", name ? name : "?");
		cap_free(name);
		out[i--] = out[--n];
	}
	return n;
}

/* The sets: `eff` effective and permitted, the set-id ones permitted when wanted. */
static int set_caps(const struct ioacct_privs *p, const cap_value_t *eff, size_t n)
{
	cap_t c = cap_init();
	int ret = 0;

	if (!c)
		return -errno;
	if (cap_set_flag(c, CAP_PERMITTED, (int)n, eff, CAP_SET) ||
	    cap_set_flag(c, CAP_EFFECTIVE, (int)n, eff, CAP_SET) ||
	    (p->setid && cap_set_flag(c, CAP_PERMITTED, (int)ARRAY_SIZE(setid_caps), setid_caps,
				      CAP_SET)) ||
	    cap_set_proc(c))
		ret = -errno;
	cap_free(c);
	return ret;
}

/*
 * The bounding set emptied (needs CAP_SETPCAP: still root). It only bounds
 * what an execve() may gain, and the daemon executes nothing but its
 * workers (worker.h), which must gain nothing: the kept capabilities stay
 * permitted and effective without it.
 */
static int drop_bound(void)
{
	for (cap_value_t cap = 0; CAP_IS_SUPPORTED(cap); cap++)
		if (cap_drop_bound(cap))
			return -errno;
	return 0;
}

/* "cap_bpf,cap_perfmon=ep cap_setuid,cap_setgid=p": what the daemon holds now, for the log. */
static void log_caps(const struct ioacct_privs *p)
{
	cap_t c = cap_get_proc();
	char *text = c ? cap_to_text(c, NULL) : NULL;

	log_info("running as %s (uid %u, gid %u), capabilities %s", p->user, (unsigned int)p->uid,
		 (unsigned int)p->gid, text ? text : "unknown");
	cap_free(text);
	cap_free(c);
}

int ioacct_privs_drop(const struct ioacct_privs *p, char *err, size_t errlen)
{
	cap_value_t keep[ARRAY_SIZE(kept_caps) + 1];
	bool old_kernel;
	size_t n;
	int ret;

	if (p->uid == 0) {
		log_warn("user = root: ioacctd keeps every capability of root (not recommended: "
			 "see ioacctd(8), PRIVILEGES)");
		return 0;
	}
	n = kept_list(keep, &old_kernel);
	if (old_kernel)
		log_warn("this kernel has no CAP_BPF and CAP_PERFMON (before 5.8): ioacctd keeps "
			 "CAP_SYS_ADMIN instead");
	ret = drop_bound();
	if (ret)
		return ioacct_seterr(err, errlen, ret, "cannot empty the bounding set: %s",
				     strerror(-ret));
	/* The capabilities survive the uid's change; no root uid ever grants them back. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0L,
		  0L, 0L)) {
		ret = -errno;
		return ioacct_seterr(err, errlen, ret, "cannot set the securebits: %s",
				     strerror(-ret));
	}
	if (setgroups(1, &p->gid) || setresgid(p->gid, p->gid, p->gid) ||
	    setresuid(p->uid, p->uid, p->uid)) {
		ret = -errno;
		return ioacct_seterr(err, errlen, ret, "cannot become %s (uid %u, gid %u): %s",
				     p->user, (unsigned int)p->uid, (unsigned int)p->gid,
				     strerror(-ret));
	}
	ret = set_caps(p, keep, n);
	if (!ret && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L) && errno != EINVAL)
		ret = -errno;
	if (!ret && prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L))
		ret = -errno;
	if (!ret && prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L))
		ret = -errno;
	if (ret)
		return ioacct_seterr(err, errlen, ret, "cannot set the capabilities of %s: %s",
				     p->user, strerror(-ret));
	log_caps(p);
	return 0;
}
