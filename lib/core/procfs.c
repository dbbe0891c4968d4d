/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "config.h"
#include "model.h"
#include "util.h"

/* linux/nsfs.h of Linux 6.9; older headers lack it. */
#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t)
#endif

/* Room for "/proc/<pid>/" and the longest file name asked for here. */
#define PROC_PATH_MAX 64

/* One mountinfo line split in place; the strings point into the line. */
struct mi_line {
	uint32_t mnt_id;
	const char *root;
	const char *mountpoint;
	const char *fstype;
	const char *source;
	const char *superopts;
};

typedef int (*mi_line_fn)(const struct mi_line *l, void *ctx);

/* The one error helper (util.h), under this file's own name. */
#define set_err(err, errlen, ...) ((void)ioacct_seterr(err, errlen, 0, __VA_ARGS__))

static void proc_path(pid_t pid, const char *file, char *buf, size_t len)
{
	if (pid == 0)
		snprintf(buf, len, "/proc/self/%s", file);
	else
		snprintf(buf, len, "/proc/%d/%s", (int)pid, file);
}

/* Cuts the next line out of a mutable buffer; NULL at the end of the text. */
static char *next_line(char **cur)
{
	char *line = *cur;
	size_t len;

	if (*line == '\0')
		return NULL;
	len = strcspn(line, "\n");
	*cur = line + len;
	if (**cur == '\n') {
		**cur = '\0';
		(*cur)++;
	}
	return line;
}

/* The start of the line after the one p is in. */
static const char *skip_line(const char *p)
{
	p += strcspn(p, "\n");
	return *p == '\n' ? p + 1 : p;
}

/* A whole string of decimal digits: strtoul alone accepts "-1" and " 1". */
static int parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end != '\0' || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

static bool is_devno(const char *s)
{
	size_t major = strspn(s, "0123456789");
	size_t minor;

	if (major == 0 || s[major] != ':')
		return false;
	minor = strspn(s + major + 1, "0123456789");
	return minor > 0 && s[major + 1 + minor] == '\0';
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * Undoes the kernel's \ooo escapes in place. The kernel escapes every
 * backslash it prints, so a backslash without three octal digits, or one
 * that encodes NUL or more than a byte, means the text is not mountinfo.
 */
static int unescape(char *s)
{
	char *w = s;
	unsigned int c;

	for (; *s; s++) {
		if (*s != '\\') {
			*w++ = *s;
			continue;
		}
		if (!is_octal(s[1]) || !is_octal(s[2]) || !is_octal(s[3]))
			return -EINVAL;
		c = (unsigned int)(s[1] - '0') << 6 | (unsigned int)(s[2] - '0') << 3 |
		    (unsigned int)(s[3] - '0');
		if (c == 0 || c > 0377)
			return -EINVAL;
		*w++ = (char)c;
		s += 3;
	}
	*w = '\0';
	return 0;
}

/* Splits one line; *why names what is wrong when it returns -EINVAL. */
static int mi_split(char *line, struct mi_line *l, const char **why)
{
	char *p = line;
	char *id = strsep(&p, " ");
	char *parent = strsep(&p, " ");
	char *devno = strsep(&p, " ");
	char *root = strsep(&p, " ");
	char *mountpoint = strsep(&p, " ");
	char *options = strsep(&p, " ");
	char *tok, *fstype, *source;
	uint32_t parent_id;

	if (!options) {
		*why = "fewer than 6 fields before the separator";
		return -EINVAL;
	}
	if (parse_u32(id, &l->mnt_id) || parse_u32(parent, &parent_id)) {
		*why = "mount id or parent id is not a number";
		return -EINVAL;
	}
	if (!is_devno(devno)) {
		*why = "third field is not major:minor";
		return -EINVAL;
	}
	if (*root == '\0' || unescape(root) || unescape(mountpoint) || *mountpoint != '/') {
		*why = "bad root or mount point";
		return -EINVAL;
	}
	/* Optional fields ("shared:1", "master:2", ...) end with a lone "-". */
	do {
		tok = strsep(&p, " ");
	} while (tok && strcmp(tok, "-") != 0);
	if (!tok) {
		*why = "no \" - \" separator";
		return -EINVAL;
	}
	fstype = strsep(&p, " ");
	source = strsep(&p, " ");
	/* p is now the super options; an empty source is legal (mount "" /x). */
	if (!p || !fstype || *fstype == '\0') {
		*why = "fewer than 3 fields after the separator";
		return -EINVAL;
	}
	if (unescape(fstype) || unescape(source)) {
		*why = "bad escape in file system type or source";
		return -EINVAL;
	}
	l->root = root;
	l->mountpoint = mountpoint;
	l->fstype = fstype;
	l->source = source;
	l->superopts = p;
	return 0;
}

/* Calls fn on every line of a mountinfo text, stopping at the first error. */
static int mi_walk(const char *text, mi_line_fn fn, void *ctx, char *err, size_t errlen)
{
	char *buf, *cur, *line;
	struct mi_line l;
	const char *why = NULL;
	size_t lineno = 0;
	int ret = 0;

	buf = strdup(text);
	if (!buf)
		return -ENOMEM;
	cur = buf;
	while ((line = next_line(&cur))) {
		lineno++;
		ret = mi_split(line, &l, &why);
		if (ret) {
			set_err(err, errlen, "mountinfo line %zu: %s", lineno, why);
			goto out;
		}
		ret = fn(&l, ctx);
		if (ret) {
			set_err(err, errlen, "mountinfo line %zu: %s", lineno, strerror(-ret));
			goto out;
		}
	}
out:
	free(buf);
	return ret;
}

int ioacct_procfs_read(const char *path, char **text)
{
	size_t cap = 4096, len = 0;
	char *buf, *grown;
	ssize_t r;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		/* Keep a byte for the terminating NUL. */
		if (cap - len < 2) {
			grown = realloc(buf, cap * 2);
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			buf = grown;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*text = buf;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return ret;
}

struct mount_list {
	struct ioacct_mount *m;
	size_t n;
};

static int add_mount(const struct mi_line *l, void *ctx)
{
	struct mount_list *ml = ctx;
	struct ioacct_mount *m = &ml->m[ml->n];
	int ret;

	m->mnt_id = m->mnt_id_old = l->mnt_id;
	if ((ret = ioacct_strlcpy(m->path, l->mountpoint, sizeof(m->path))) ||
	    (ret = ioacct_strlcpy(m->fstype, l->fstype, sizeof(m->fstype))) ||
	    (ret = ioacct_strlcpy(m->source, l->source, sizeof(m->source))))
		return ret;
	ml->n++;
	return 0;
}

int ioacct_mountinfo_parse(const char *text, struct ioacct_mount **out, size_t *n, char *err,
			   size_t errlen)
{
	struct mount_list ml = { 0 };
	size_t lines = 1;
	const char *p;
	int ret;

	/* One slot per line is enough: every line is one mount or an error. */
	for (p = strchr(text, '\n'); p; p = strchr(p + 1, '\n'))
		lines++;
	ml.m = calloc(lines, sizeof(*ml.m));
	if (!ml.m)
		return -ENOMEM;
	ret = mi_walk(text, add_mount, &ml, err, errlen);
	if (ret)
		goto out;
	*out = ml.m;
	*n = ml.n;
	ml.m = NULL;
out:
	free(ml.m);
	return ret;
}

int ioacct_mountinfo_read(pid_t pid, struct ioacct_mount **out, size_t *n, char *err,
			  size_t errlen)
{
	char path[PROC_PATH_MAX];
	char *text = NULL;
	int ret;

	proc_path(pid, "mountinfo", path, sizeof(path));
	ret = ioacct_procfs_read(path, &text);
	if (ret) {
		set_err(err, errlen, "cannot read %s: %s", path, strerror(-ret));
		goto out;
	}
	ret = ioacct_mountinfo_parse(text, out, n, err, errlen);
out:
	free(text);
	return ret;
}

const struct ioacct_mount *ioacct_mount_find(const struct ioacct_mount *m, size_t n,
					     uint64_t mnt_id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].mnt_id == mnt_id)
			return &m[i];
	errno = ENOENT;
	return NULL;
}

const struct ioacct_mount *ioacct_mount_of_path(const struct ioacct_mount *m, size_t n,
						const char *abs_path)
{
	const struct ioacct_mount *best = NULL;
	size_t best_len = 0, len, i;

	if (abs_path[0] != '/') {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		len = strlen(m[i].path);
		if (strncmp(abs_path, m[i].path, len) != 0)
			continue;
		/* "/" ends on a boundary by itself; "/dev/shm" must not match "/dev/shmx". */
		if (len > 1 && abs_path[len] != '\0' && abs_path[len] != '/')
			continue;
		/* >= so that the later of stacked mounts wins. */
		if (!best || len >= best_len) {
			best = &m[i];
			best_len = len;
		}
	}
	if (!best)
		errno = ENOENT;
	return best;
}

size_t ioacct_mounts_visible(const struct ioacct_mount *m, size_t n,
			     const struct ioacct_mount **out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		bool hidden = false;

		for (size_t j = i + 1; j < n && !hidden; j++)
			hidden = strcmp(m[i].path, m[j].path) == 0;
		if (!hidden)
			out[k++] = &m[i];
	}
	return k;
}

/* Whether a comma-separated list holds item as a whole element. */
static bool list_has(const char *list, const char *item)
{
	size_t len = strlen(item);
	const char *p = list;

	for (;;) {
		if (strncmp(p, item, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
		p = strchr(p, ',');
		if (!p)
			return false;
		p++;
	}
}

static int check_hier(enum ioacct_hier hier, const char *v1_controller)
{
	if (hier == IOACCT_HIER_V2)
		return 0;
	if (hier != IOACCT_HIER_V1 || !v1_controller || *v1_controller == '\0' ||
	    strpbrk(v1_controller, ",:"))
		return -EINVAL;
	return 0;
}

struct cg_mount_query {
	enum ioacct_hier hier;
	const char *controller;
	char *out;
	size_t len;
	bool found;
};

static int match_cg_mount(const struct mi_line *l, void *ctx)
{
	struct cg_mount_query *q = ctx;
	bool match;

	/*
	 * A mount of a subtree (root other than "/") cannot be joined with the
	 * paths of /proc/<pid>/cgroup, which start at the hierarchy's root.
	 */
	if (q->found || strcmp(l->root, "/") != 0)
		return 0;
	if (q->hier == IOACCT_HIER_V2)
		match = strcmp(l->fstype, "cgroup2") == 0;
	else
		match = strcmp(l->fstype, "cgroup") == 0 && list_has(l->superopts, q->controller);
	if (!match)
		return 0;
	q->found = true;
	return ioacct_strlcpy(q->out, l->mountpoint, q->len);
}

int ioacct_cgroup_mountpoint_parse(const char *mountinfo, enum ioacct_hier hier,
				   const char *v1_controller, char *out, size_t len)
{
	struct cg_mount_query q = {
		.hier = hier,
		.controller = v1_controller,
		.out = out,
		.len = len,
	};
	int ret;

	ret = check_hier(hier, v1_controller);
	if (ret)
		return ret;
	ret = mi_walk(mountinfo, match_cg_mount, &q, NULL, 0);
	if (ret)
		return ret;
	return q.found ? 0 : -ENOENT;
}

int ioacct_cgroup_mountpoint(enum ioacct_hier hier, const char *v1_controller, char *out,
			     size_t len)
{
	char *text = NULL;
	int ret;

	ret = ioacct_procfs_read("/proc/self/mountinfo", &text);
	if (ret)
		goto out;
	ret = ioacct_cgroup_mountpoint_parse(text, hier, v1_controller, out, len);
out:
	free(text);
	return ret;
}

int ioacct_cgroup_parse(const char *text, enum ioacct_hier hier, const char *v1_controller,
			char *out, size_t len)
{
	char *buf, *cur, *line, *controllers, *path;
	uint32_t hier_id;
	bool match;
	int ret;

	ret = check_hier(hier, v1_controller);
	if (ret)
		return ret;
	buf = strdup(text);
	if (!buf)
		return -ENOMEM;
	ret = -ENOENT;
	cur = buf;
	while ((line = next_line(&cur))) {
		/* "id:controllers:path"; the path may itself hold colons. */
		controllers = strchr(line, ':');
		path = controllers ? strchr(controllers + 1, ':') : NULL;
		if (!path) {
			ret = -EINVAL;
			goto out;
		}
		*controllers++ = '\0';
		*path++ = '\0';
		if (parse_u32(line, &hier_id) || *path != '/') {
			ret = -EINVAL;
			goto out;
		}
		if (hier == IOACCT_HIER_V2)
			match = hier_id == 0 && *controllers == '\0';
		else
			match = list_has(controllers, v1_controller);
		if (match) {
			ret = ioacct_strlcpy(out, path, len);
			goto out;
		}
	}
out:
	free(buf);
	return ret;
}

int ioacct_cgroup_of_pid(pid_t pid, enum ioacct_hier hier, const char *v1_controller, char *out,
			 size_t len)
{
	char path[PROC_PATH_MAX];
	char *text = NULL;
	int ret;

	proc_path(pid, "cgroup", path, sizeof(path));
	ret = ioacct_procfs_read(path, &text);
	if (ret)
		goto out;
	ret = ioacct_cgroup_parse(text, hier, v1_controller, out, len);
out:
	free(text);
	return ret;
}

int ioacct_cgroup_id(const char *fs_path, uint64_t *id)
{
	struct stat st;

	if (stat(fs_path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = st.st_ino;
	return 0;
}

int ioacct_cgroup_hier_of_path(const char *fs_path, enum ioacct_hier *hier)
{
	struct statfs sf;

	if (statfs(fs_path, &sf) < 0)
		return -errno;
	if (sf.f_type == CGROUP2_SUPER_MAGIC)
		*hier = IOACCT_HIER_V2;
	else if (sf.f_type == CGROUP_SUPER_MAGIC)
		*hier = IOACCT_HIER_V1;
	else
		return -EINVAL;
	return 0;
}

int ioacct_cgroup_v1_ssid_parse(const char *text, const char *controller, uint32_t *ssid)
{
	size_t want = strlen(controller), len;
	uint32_t idx = 0;
	const char *p;

	if (want == 0)
		return -EINVAL;
	for (p = text; *p; p = skip_line(p)) {
		if (*p == '#')
			continue;
		len = strcspn(p, " \t\n");
		if (len == 0)
			return -EINVAL;
		if (len == want && strncmp(p, controller, len) == 0) {
			*ssid = idx;
			return 0;
		}
		idx++;
	}
	return -ENOENT;
}

int ioacct_cgroup_v1_ssid(const char *controller, uint32_t *ssid)
{
	char *text = NULL;
	int ret;

	ret = ioacct_procfs_read("/proc/cgroups", &text);
	if (ret)
		goto out;
	ret = ioacct_cgroup_v1_ssid_parse(text, controller, ssid);
out:
	free(text);
	return ret;
}

bool ioacct_mnt_ids_legacy(void)
{
	static int legacy = -1;

	if (legacy < 0) {
		const char *v = getenv("IOACCT_MNT_IDS");

		legacy = v && !strcmp(v, "legacy");
	}
	return legacy;
}

int ioacct_proc_mntns_ref(pid_t pid, struct ioacct_mntns_ref *ref)
{
	char path[PROC_PATH_MAX];
	struct stat st;
	uint64_t id = 0;
	int fd, ret = 0;

	proc_path(pid, "ns/mnt", path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	/* The kernel's namespace inode numbers are 32 bits; the BPF side keeps them so. */
	if (st.st_ino > UINT32_MAX) {
		ret = -EOVERFLOW;
		goto out;
	}
	/* Before Linux 6.9 nsfs answers ENOTTY: the inode number is all there is. */
	if (ioacct_mnt_ids_legacy() || ioctl(fd, NS_GET_MNTNS_ID, &id) < 0)
		id = 0;
	ref->inum = (uint32_t)st.st_ino;
	ref->id = id;
out:
	close(fd);
	return ret;
}

bool ioacct_mntns_ref_same(const struct ioacct_mntns_ref *a, const struct ioacct_mntns_ref *b)
{
	return a->inum == b->inum && (!a->id || !b->id || a->id == b->id);
}

int ioacct_proc_pin(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

int ioacct_proc_unpin(int pidfd)
{
	/*
	 * Signal 0 reaches a zombie too: only a reaped process frees its pid.
	 * Only ESRCH says it is gone: ioacctd runs as its own account without
	 * CAP_KILL, and a process of another user answers EPERM, alive.
	 */
	int ret = syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 && errno == ESRCH ? -ESRCH : 0;

	close(pidfd);
	return ret;
}

int ioacct_mountinfo_read_ns(pid_t pid, const struct ioacct_mntns_ref *ns,
			     struct ioacct_mount **out, size_t *n, char *err, size_t errlen)
{
	struct ioacct_mntns_ref before, after;
	int fd = ioacct_proc_pin(pid), ret;

	if (fd < 0) {
		set_err(err, errlen, "process %d: %s", (int)pid, strerror(-fd));
		return fd;
	}
	ret = ioacct_proc_mntns_ref(pid, &before);
	if (!ret && !ioacct_mntns_ref_same(&before, ns))
		ret = -ESTALE;
	if (ret) {
		set_err(err, errlen, "process %d is not in mount namespace %u: %s", (int)pid,
			ns->inum, strerror(-ret));
		ioacct_proc_unpin(fd);
		return ret;
	}
	ret = ioacct_mountinfo_read(pid, out, n, err, errlen);
	if (ret) {
		ioacct_proc_unpin(fd);
		return ret;
	}
	if (ioacct_proc_mntns_ref(pid, &after) || !ioacct_mntns_ref_same(&after, ns))
		ret = -ESTALE;
	if (ioacct_proc_unpin(fd))
		ret = -ESRCH;
	if (ret) {
		set_err(err, errlen, "process %d left mount namespace %u during the read", (int)pid,
			ns->inum);
		free(*out);
		*out = NULL;
	}
	return ret;
}

/* Moves process pid into the cgroup at fs_path (a directory of a mounted hierarchy). */
int ioacct_cgroup_enter(const char *cgroup, pid_t pid)
{
	char path[PATH_MAX + 32], buf[32];
	int fd, n, ret = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	if (write(fd, buf, (size_t)n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

static int cgroup_path(char *path, size_t len, const char *mnt, const char *parent, const char *prefix)
{
	int n = snprintf(path, len, "%s/%s/%s-%d", mnt, parent, prefix, (int)getpid());

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ioacct_cgroup_make(const struct ioacct_config *cfg, const char *prefix, char *path, size_t len,
		       char *err, size_t errlen)
{
	char mnt[PATH_MAX];
	int ret = -ENOENT;

	if (cfg->cgroup_mode != IOACCT_CGROUP_V1) {
		ret = ioacct_cgroup_mountpoint(IOACCT_HIER_V2, NULL, mnt, sizeof(mnt));
		if (ret == 0) {
			ret = cgroup_path(path, len, mnt, cfg->cgroup_parent, prefix);
			if (ret == 0)
				ret = ioacct_mkdir_p(path, 0755, false);
			if (ret == 0)
				return 0;
		}
		if (cfg->cgroup_mode == IOACCT_CGROUP_V2) {
			snprintf(err, errlen, "cannot create a cgroup2 cgroup%s%s: %s", ret == -ENOENT ? "" : " ",
				 ret == -ENOENT ? "" : path, ret == -ENOENT ? "no cgroup2 file system mounted" :
				 strerror(-ret));
			return ret;
		}
	}
	ret = ioacct_cgroup_mountpoint(IOACCT_HIER_V1, cfg->cgroup_v1_hierarchy, mnt, sizeof(mnt));
	if (ret) {
		snprintf(err, errlen, "no usable cgroup: cgroup2 unusable and v1 %s not mounted",
			 cfg->cgroup_v1_hierarchy);
		return ret;
	}
	ret = cgroup_path(path, len, mnt, cfg->cgroup_parent, prefix);
	if (ret == 0)
		ret = ioacct_mkdir_p(path, 0755, false);
	if (ret)
		snprintf(err, errlen, "cannot create cgroup %s: %s", path, strerror(-ret));
	return ret;
}
