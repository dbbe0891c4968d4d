/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "procfs.h"

/*
 * A hybrid Slurm node: optional fields, an escaped mount point, a tmpfs at
 * /dev/shm, a bind mount stacked on /home, a v1 freezer, a named systemd
 * hierarchy, a co-mounted cpu,cpuacct and cgroup2 at .../unified.
 */
static const char hybrid_mountinfo[] =
	"28 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro\n"
	"22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	"23 28 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"
	"24 28 0:5 / /dev rw,nosuid,relatime shared:3 - devtmpfs udev rw,size=16363004k,mode=755\n"
	"25 24 0:23 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw\n"
	"30 23 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
	"31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 "
	"cgroup2 rw,nsdelegate\n"
	"32 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup "
	"cgroup rw,xattr,name=systemd\n"
	"35 30 0:31 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:16 - cgroup "
	"cgroup rw,freezer\n"
	"36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:17 - cgroup "
	"cgroup rw,cpu,cpuacct\n"
	"40 28 0:40 / /scratch rw,relatime shared:20 master:2 - lustre 10.0.0.1@o2ib:/scratch "
	"rw,flock\n"
	"41 28 8:3 / /data/my\\040files rw,relatime shared:21 - xfs /dev/sdb1 rw\n"
	"42 28 0:45 / /home rw,relatime shared:22 - nfs4 nfs:/export/home rw,vers=4.2\n"
	"43 42 8:3 /users /home rw,relatime shared:21 - xfs /dev/sdb1 rw\n"
	"44 28 0:46 / /mnt/t\\011n\\012b\\134 rw - tmpfs my\\040src rw\n"
	"45 28 0:47 / /mnt/nosrc rw - tmpfs  rw\n";

#define HYBRID_MOUNTS 16

static const char pure_v2_mountinfo[] =
	"21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
	"26 21 0:23 / /sys rw,nosuid shared:2 - sysfs sysfs rw\n"
	"27 26 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
	"rw,nsdelegate,memory_recursiveprot";

/* A freezer subtree bind-mounted before the real root of the hierarchy. */
static const char subtree_mountinfo[] =
	"21 1 8:1 / / rw - ext4 /dev/vda1 rw\n"
	"50 21 0:31 /slurm /run/freezer_slurm rw - cgroup cgroup rw,freezer\n"
	"51 21 0:31 / /run/freezer rw - cgroup cgroup rw,freezer\n"
	"52 21 0:27 /job /run/unified_job rw - cgroup2 cgroup2 rw\n";

static const char hybrid_cgroup[] =
	"12:pids:/system.slice/slurmd.service\n"
	"11:freezer:/slurm_vm/uid_0/job_5/step_batch\n"
	"10:memory:/slurm_vm/uid_0/job_5/step_batch/task_0\n"
	"9:devices:/slurm_vm/uid_0/job_5/step_batch\n"
	"4:cpu,cpuacct:/slurm_vm/uid_0/job_5/step_batch/task_0\n"
	"3:cpuset:/slurm_vm/uid_0/job_5/step_batch\n"
	"1:name=systemd:/system.slice/slurmd.service\n"
	"0::/system.slice/slurmd.service\n";

static const char pure_v2_cgroup[] = "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n";

static const char proc_cgroups[] =
	"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	"cpuset\t3\t1\t1\n"
	"cpu\t4\t80\t1\n"
	"cpuacct\t4\t80\t1\n"
	"blkio\t8\t80\t1\n"
	"memory\t10\t120\t1\n"
	"devices\t9\t80\t1\n"
	"freezer\t11\t5\t1\n"
	"net_cls\t2\t1\t1\n"
	"perf_event\t5\t1\t1\n"
	"net_prio\t2\t1\t1\n"
	"hugetlb\t6\t1\t1\n"
	"pids\t12\t85\t1\n"
	"rdma\t7\t1\t1\n"
	"misc\t0\t1\t1";

static void parse_ok(const char *text, struct ioacct_mount **m, size_t *n)
{
	char err[256] = "";
	int ret = ioacct_mountinfo_parse(text, m, n, err, sizeof(err));

	if (ret)
		fail_msg("ioacct_mountinfo_parse: %d: %s", ret, err);
}

static void test_mountinfo_hybrid(void **state __attribute__((unused)))
{
	struct ioacct_mount *m;
	size_t n;

	parse_ok(hybrid_mountinfo, &m, &n);
	assert_int_equal(n, HYBRID_MOUNTS);

	assert_int_equal(m[0].mnt_id, 28);
	assert_string_equal(m[0].path, "/");
	assert_string_equal(m[0].fstype, "ext4");
	assert_string_equal(m[0].source, "/dev/sda2");

	assert_int_equal(m[3].mnt_id, 24);
	assert_string_equal(m[3].source, "udev");

	/* Two optional fields before the separator. */
	assert_int_equal(m[10].mnt_id, 40);
	assert_string_equal(m[10].path, "/scratch");
	assert_string_equal(m[10].fstype, "lustre");
	assert_string_equal(m[10].source, "10.0.0.1@o2ib:/scratch");

	assert_string_equal(m[11].path, "/data/my files");
	assert_string_equal(m[11].source, "/dev/sdb1");

	assert_int_equal(m[14].mnt_id, 44);
	assert_string_equal(m[14].path, "/mnt/t\tn\nb\\");
	assert_string_equal(m[14].source, "my src");

	/* mount -t tmpfs "" /mnt/nosrc: the kernel prints an empty field. */
	assert_string_equal(m[15].path, "/mnt/nosrc");
	assert_string_equal(m[15].fstype, "tmpfs");
	assert_string_equal(m[15].source, "");
	free(m);
}

static void test_mountinfo_last_line_unterminated(void **state __attribute__((unused)))
{
	struct ioacct_mount *m;
	size_t n;

	parse_ok(pure_v2_mountinfo, &m, &n);
	assert_int_equal(n, 3);
	assert_int_equal(m[2].mnt_id, 27);
	assert_string_equal(m[2].path, "/sys/fs/cgroup");
	assert_string_equal(m[2].fstype, "cgroup2");
	free(m);
}

/*
 * The kernel escapes space, tab, newline, backslash (and, since 6.x, '#')
 * in mount points, sources and file-system types as \ooo: the real bytes
 * come back, non-ASCII bytes pass as they are, and an escaped backslash
 * followed by digits stays a backslash and digits (issue 24).
 */
static void test_mountinfo_escapes(void **state __attribute__((unused)))
{
	static const char text[] =
		"21 1 8:1 / / rw - ext4 /dev/vda1 rw\n"
		"60 21 0:50 / /tmp/28007-sp\\040ace\\011tab\\012nl\\134bs rw - tmpfs ioacct-28007 rw\n"
		"61 21 0:51 / /tmp/a\\134040b rw - tmpfs a\\043b rw\n"
		"62 21 0:52 / /tmp/\xc3\xa9t\xc3\xa9\\040\xff rw - fuse.my\\040fs me\\134\\134x rw\n"
		"63 21 0:53 /sub\\040dir /tmp/\\043hash rw - tmpfs \\040 rw\n";
	struct ioacct_mount *m;
	size_t n;

	parse_ok(text, &m, &n);
	assert_int_equal(n, 5);
	assert_string_equal(m[1].path, "/tmp/28007-sp ace\ttab\nnl\\bs");
	assert_string_equal(m[2].path, "/tmp/a\\040b");
	assert_string_equal(m[2].source, "a#b");
	assert_string_equal(m[3].path, "/tmp/\xc3\xa9t\xc3\xa9 \xff");
	assert_string_equal(m[3].fstype, "fuse.my fs");
	assert_string_equal(m[3].source, "me\\\\x");
	assert_string_equal(m[4].path, "/tmp/#hash");
	assert_string_equal(m[4].source, " ");
	free(m);
}

static void test_mountinfo_malformed(void **state __attribute__((unused)))
{
	static const char good[] = "21 1 8:1 / / rw - ext4 /dev/vda1 rw\n";
	static const char *const bad[] = {
		"",                                                     /* empty line */
		"x 1 8:1 / /a rw - ext4 /dev/vda1 rw",                  /* id */
		"22 -1 8:1 / /a rw - ext4 /dev/vda1 rw",                /* parent */
		"22 1 8 / /a rw - ext4 /dev/vda1 rw",                   /* no minor */
		"22 1 8:1x / /a rw - ext4 /dev/vda1 rw",                /* junk in devno */
		"22 1 8:1 / a rw - ext4 /dev/vda1 rw",                  /* relative */
		"22 1 8:1 / /a",                                        /* too short */
		"22 1 8:1 / /a rw shared:1 ext4 /dev/vda1 rw",          /* no separator */
		"22 1 8:1 / /a rw - ext4",                              /* no source */
		"22 1 8:1 / /a rw - ext4 /dev/vda1",                    /* no super options */
		"22 1 8:1 / /a rw -  /dev/vda1 rw",                     /* empty fstype */
		"22 1 8:1 / /a\\04 rw - ext4 /dev/vda1 rw",             /* short escape */
		"22 1 8:1 / /a\\000 rw - ext4 /dev/vda1 rw",            /* NUL */
		"22 1 8:1 / /a\\400 rw - ext4 /dev/vda1 rw",            /* > 0377 */
		"22 1 8:1 / /a\\x rw - ext4 /dev/vda1 rw",              /* lone backslash */
		"22 1 8:1 / /a rw - ext4 /dev/vd\\9a1 rw",              /* bad source */
		"22 1 8:1 / /a rw - ext\\4 /dev/vda1 rw",               /* bad fstype */
		"22 1 8:1 / /a\\ rw - ext4 /dev/vda1 rw",               /* backslash at the end */
		"4294967296 1 8:1 / /a rw - ext4 /dev/vda1 rw",         /* id > u32 */
	};
	struct ioacct_mount *m = NULL;
	char text[256], err[128];
	size_t i, n = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s\n%s", good, bad[i], good);
		err[0] = '\0';
		assert_int_equal(ioacct_mountinfo_parse(text, &m, &n, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "line 2:"));
		assert_null(m);
		assert_int_equal(n, 0);
	}
	/* err is optional. */
	assert_int_equal(ioacct_mountinfo_parse("garbage\n", &m, &n, NULL, 0), -EINVAL);
	assert_null(m);
}

static void test_mountinfo_too_long(void **state __attribute__((unused)))
{
	struct ioacct_mount *m = NULL;
	char *text, err[128] = "";
	size_t n, len = PATH_MAX + 100;

	text = malloc(len + 64);
	assert_non_null(text);
	strcpy(text, "21 1 8:1 / /");
	memset(text + strlen(text), 'a', len);
	strcpy(text + 12 + len, " rw - ext4 /dev/vda1 rw\n");
	assert_int_equal(ioacct_mountinfo_parse(text, &m, &n, err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "line 1:"));
	assert_null(m);
	free(text);
}

/* More lines than any fixed buffer or first guess would hold. */
static void test_mountinfo_many(void **state __attribute__((unused)))
{
	const size_t lines = 3000;
	struct ioacct_mount *m;
	char *text, *p;
	size_t i, n;

	text = malloc(lines * 64);
	assert_non_null(text);
	p = text;
	for (i = 0; i < lines; i++)
		p += sprintf(p, "%zu 1 0:%zu / /mnt/m%zu rw - tmpfs tmpfs rw\n", i + 100, i, i);
	parse_ok(text, &m, &n);
	assert_int_equal(n, lines);
	assert_int_equal(m[lines - 1].mnt_id, lines + 99);
	assert_string_equal(m[lines - 1].path, "/mnt/m2999");
	free(m);
	free(text);
}

static void test_mount_find(void **state __attribute__((unused)))
{
	const struct ioacct_mount *f;
	struct ioacct_mount *m;
	size_t n;

	parse_ok(hybrid_mountinfo, &m, &n);
	f = ioacct_mount_find(m, n, 35);
	assert_non_null(f);
	assert_string_equal(f->path, "/sys/fs/cgroup/freezer");
	errno = 0;
	assert_null(ioacct_mount_find(m, n, 999));
	assert_int_equal(errno, ENOENT);
	assert_null(ioacct_mount_find(m, 0, 28));
	free(m);
}

static uint32_t mount_id_of(const struct ioacct_mount *m, size_t n, const char *path)
{
	const struct ioacct_mount *f = ioacct_mount_of_path(m, n, path);

	if (!f)
		fail_msg("no mount for %s: errno %d", path, errno);
	return f->mnt_id;
}

static void test_mount_of_path(void **state __attribute__((unused)))
{
	struct ioacct_mount *m;
	size_t n;

	parse_ok(hybrid_mountinfo, &m, &n);
	assert_int_equal(mount_id_of(m, n, "/"), 28);
	assert_int_equal(mount_id_of(m, n, "/etc/passwd"), 28);
	assert_int_equal(mount_id_of(m, n, "/dev/shm"), 25);
	assert_int_equal(mount_id_of(m, n, "/dev/shm/"), 25);
	assert_int_equal(mount_id_of(m, n, "/dev/shm/x"), 25);
	assert_int_equal(mount_id_of(m, n, "/dev/shmx"), 24);
	assert_int_equal(mount_id_of(m, n, "/dev"), 24);
	assert_int_equal(mount_id_of(m, n, "/devx"), 28);
	assert_int_equal(mount_id_of(m, n, "/data/my files/a"), 41);
	assert_int_equal(mount_id_of(m, n, "/data/my"), 28);
	assert_int_equal(mount_id_of(m, n, "/sys/fs/cgroup/cpu,cpuacct/slurm"), 36);
	assert_int_equal(mount_id_of(m, n, "/sys/fs/cgroup/cpu"), 30);
	/* The bind mount stacked on /home hides the NFS mount under it. */
	assert_int_equal(mount_id_of(m, n, "/home"), 43);
	assert_int_equal(mount_id_of(m, n, "/home/u/f"), 43);

	errno = 0;
	assert_null(ioacct_mount_of_path(m, n, "home/u"));
	assert_int_equal(errno, EINVAL);
	/* Without "/" in the table an unrelated path has no mount. */
	errno = 0;
	assert_null(ioacct_mount_of_path(m + 1, n - 1, "/etc"));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(ioacct_mount_of_path(m, 0, "/"));
	assert_int_equal(errno, ENOENT);
	free(m);
}

/* Two tmpfs stacked on /dev/shm, as on the test machine: only the top one is published. */
static void test_mounts_visible(void **state __attribute__((unused)))
{
	static const char stacked[] =
		"28 1 8:2 / / rw - ext4 /dev/sda2 rw\n"
		"25 28 0:23 / /dev/shm rw - tmpfs tmpfs rw\n"
		"60 28 0:50 / /scratch rw - xfs /dev/sdc rw\n"
		"61 25 0:51 / /dev/shm rw - tmpfs tmpfs rw,size=1g\n";
	const struct ioacct_mount *v[4];
	struct ioacct_mount *m;
	size_t n, k;

	parse_ok(stacked, &m, &n);
	assert_int_equal(n, 4);
	k = ioacct_mounts_visible(m, n, v);
	assert_int_equal(k, 3);
	assert_int_equal(v[0]->mnt_id, 28);
	assert_int_equal(v[1]->mnt_id, 60);
	assert_int_equal(v[2]->mnt_id, 61);
	/* Agrees with the lookup of a path below the stack. */
	assert_ptr_equal(ioacct_mount_of_path(m, n, "/dev/shm/x"), v[2]);
	free(m);

	parse_ok(hybrid_mountinfo, &m, &n);
	{
		const struct ioacct_mount *hv[HYBRID_MOUNTS];

		k = ioacct_mounts_visible(m, n, hv);
		assert_int_equal(k, n - 1); /* NFS /home under its bind mount */
		for (size_t i = 0; i < k; i++)
			assert_int_not_equal(hv[i]->mnt_id, 42);
	}
	free(m);
	assert_int_equal(ioacct_mounts_visible(NULL, 0, v), 0);
}

static void expect_mountpoint(const char *mi, enum ioacct_hier hier, const char *ctrl,
			      const char *want)
{
	char out[PATH_MAX] = "";
	int ret = ioacct_cgroup_mountpoint_parse(mi, hier, ctrl, out, sizeof(out));

	if (ret)
		fail_msg("mount point of %s: %d", ctrl ? ctrl : "v2", ret);
	assert_string_equal(out, want);
}

static void test_cgroup_mountpoint_parse(void **state __attribute__((unused)))
{
	char out[PATH_MAX];

	expect_mountpoint(hybrid_mountinfo, IOACCT_HIER_V2, NULL, "/sys/fs/cgroup/unified");
	expect_mountpoint(hybrid_mountinfo, IOACCT_HIER_V1, "freezer", "/sys/fs/cgroup/freezer");
	expect_mountpoint(hybrid_mountinfo, IOACCT_HIER_V1, "cpu", "/sys/fs/cgroup/cpu,cpuacct");
	expect_mountpoint(hybrid_mountinfo, IOACCT_HIER_V1, "cpuacct", "/sys/fs/cgroup/cpu,cpuacct");
	expect_mountpoint(hybrid_mountinfo, IOACCT_HIER_V1, "name=systemd", "/sys/fs/cgroup/systemd");
	/* Whole list elements only. */
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1, "systemd",
							out, sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1, "acct",
							out, sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1, "free",
							out, sizeof(out)), -ENOENT);
	/* "rw" is a super option of every mount, but no cgroup controller. */
	assert_int_equal(ioacct_cgroup_mountpoint_parse(pure_v2_mountinfo, IOACCT_HIER_V1, "rw",
							out, sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1, "blkio",
							out, sizeof(out)), -ENOENT);

	expect_mountpoint(pure_v2_mountinfo, IOACCT_HIER_V2, NULL, "/sys/fs/cgroup");
	assert_int_equal(ioacct_cgroup_mountpoint_parse(pure_v2_mountinfo, IOACCT_HIER_V1,
							"freezer", out, sizeof(out)), -ENOENT);

	/* Subtree mounts are passed over for the hierarchy's root. */
	expect_mountpoint(subtree_mountinfo, IOACCT_HIER_V1, "freezer", "/run/freezer");
	assert_int_equal(ioacct_cgroup_mountpoint_parse(subtree_mountinfo, IOACCT_HIER_V2, NULL,
							out, sizeof(out)), -ENOENT);

	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V2, NULL,
							out, 8), -ENAMETOOLONG);
	assert_int_equal(ioacct_cgroup_mountpoint_parse("bad line\n", IOACCT_HIER_V2, NULL, out,
							sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1, NULL,
							out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1, "",
							out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, IOACCT_HIER_V1,
							"cpu,cpuacct", out, sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_cgroup_mountpoint_parse(hybrid_mountinfo, (enum ioacct_hier)7,
							"freezer", out, sizeof(out)), -EINVAL);
}

static void expect_cgroup(const char *text, enum ioacct_hier hier, const char *ctrl,
			  const char *want)
{
	char out[PATH_MAX] = "";
	int ret = ioacct_cgroup_parse(text, hier, ctrl, out, sizeof(out));

	if (ret)
		fail_msg("cgroup of %s: %d", ctrl ? ctrl : "v2", ret);
	assert_string_equal(out, want);
}

static void test_cgroup_parse_hybrid(void **state __attribute__((unused)))
{
	char out[PATH_MAX];

	expect_cgroup(hybrid_cgroup, IOACCT_HIER_V1, "freezer", "/slurm_vm/uid_0/job_5/step_batch");
	expect_cgroup(hybrid_cgroup, IOACCT_HIER_V1, "cpuacct",
		      "/slurm_vm/uid_0/job_5/step_batch/task_0");
	expect_cgroup(hybrid_cgroup, IOACCT_HIER_V1, "memory",
		      "/slurm_vm/uid_0/job_5/step_batch/task_0");
	expect_cgroup(hybrid_cgroup, IOACCT_HIER_V1, "name=systemd", "/system.slice/slurmd.service");
	expect_cgroup(hybrid_cgroup, IOACCT_HIER_V2, NULL, "/system.slice/slurmd.service");
	assert_int_equal(ioacct_cgroup_parse(hybrid_cgroup, IOACCT_HIER_V1, "systemd", out,
					     sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_cgroup_parse(hybrid_cgroup, IOACCT_HIER_V1, "hugetlb", out,
					     sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_cgroup_parse(hybrid_cgroup, IOACCT_HIER_V1, "mem", out,
					     sizeof(out)), -ENOENT);
	assert_int_equal(ioacct_cgroup_parse(hybrid_cgroup, IOACCT_HIER_V1, "name=sys", out,
					     sizeof(out)), -ENOENT);
}

static void test_cgroup_parse_v2(void **state __attribute__((unused)))
{
	char out[PATH_MAX];

	expect_cgroup(pure_v2_cgroup, IOACCT_HIER_V2, NULL,
		      "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0");
	assert_int_equal(ioacct_cgroup_parse(pure_v2_cgroup, IOACCT_HIER_V1, "freezer", out,
					     sizeof(out)), -ENOENT);
	/* A v1-only host has no "0::" line. */
	assert_int_equal(ioacct_cgroup_parse("11:freezer:/\n", IOACCT_HIER_V2, NULL, out,
					     sizeof(out)), -ENOENT);
}

static void test_cgroup_parse_colon(void **state __attribute__((unused)))
{
	static const char text[] = "6:freezer:/a:b/c\n0::/weird:name/x:y:\n";

	expect_cgroup(text, IOACCT_HIER_V2, NULL, "/weird:name/x:y:");
	expect_cgroup(text, IOACCT_HIER_V1, "freezer", "/a:b/c");
}

static void test_cgroup_parse_bad(void **state __attribute__((unused)))
{
	static const char *const bad[] = {
		"freezer:/\n",
		"x:freezer:/\n",
		"-1:freezer:/\n",
		"6:freezer:relative\n",
		"6:freezer:\n",
		"\n0::/\n",
	};
	char out[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ioacct_cgroup_parse(bad[i], IOACCT_HIER_V1, "freezer", out,
						     sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_cgroup_parse(hybrid_cgroup, IOACCT_HIER_V1, NULL, out,
					     sizeof(out)), -EINVAL);
	assert_int_equal(ioacct_cgroup_parse(hybrid_cgroup, IOACCT_HIER_V1, "freezer", out, 10),
			 -ENAMETOOLONG);
	assert_int_equal(strlen(out), 9);
	assert_int_equal(ioacct_cgroup_parse("", IOACCT_HIER_V2, NULL, out, sizeof(out)), -ENOENT);
}

static void test_v1_ssid_parse(void **state __attribute__((unused)))
{
	uint32_t ssid = 99;

	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "cpuset", &ssid), 0);
	assert_int_equal(ssid, 0);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "cpu", &ssid), 0);
	assert_int_equal(ssid, 1);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "freezer", &ssid), 0);
	assert_int_equal(ssid, 6);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "pids", &ssid), 0);
	assert_int_equal(ssid, 11);
	/* Last line, no newline. */
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "misc", &ssid), 0);
	assert_int_equal(ssid, 13);
	/* Named hierarchies have no subsystem; prefixes are not names. */
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "name=systemd", &ssid), -ENOENT);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "free", &ssid), -ENOENT);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "freezers", &ssid), -ENOENT);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse(proc_cgroups, "", &ssid), -EINVAL);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse("#subsys_name\n", "cpu", &ssid), -ENOENT);
	assert_int_equal(ioacct_cgroup_v1_ssid_parse("cpuset\t1\n\tx\ncpu\t1\n", "cpu", &ssid),
			 -EINVAL);
}

static void test_procfs_read(void **state __attribute__((unused)))
{
	char path[] = "/tmp/test_procfs.XXXXXX";
	const size_t len = 100000;
	char *data, *text = NULL;
	size_t i;
	int fd;

	data = malloc(len);
	assert_non_null(data);
	for (i = 0; i < len; i++)
		data[i] = (char)('a' + i % 26);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), len);
	close(fd);

	assert_int_equal(ioacct_procfs_read(path, &text), 0);
	assert_int_equal(strlen(text), len);
	assert_memory_equal(text, data, len);
	free(text);
	unlink(path);
	free(data);
	assert_int_equal(ioacct_procfs_read("/nonexistent/file", &text), -ENOENT);
}

static void test_live_mountinfo(void **state __attribute__((unused)))
{
	const struct ioacct_mount *root;
	struct ioacct_mount *m, *m2;
	char err[256] = "";
	size_t n, n2;
	int ret;

	ret = ioacct_mountinfo_read(0, &m, &n, err, sizeof(err));
	if (ret)
		fail_msg("ioacct_mountinfo_read(0): %d: %s", ret, err);
	root = ioacct_mount_of_path(m, n, "/");
	assert_non_null(root);
	assert_string_equal(root->path, "/");
	assert_ptr_equal(ioacct_mount_find(m, n, root->mnt_id)->path, root->path);

	ret = ioacct_mountinfo_read(getpid(), &m2, &n2, err, sizeof(err));
	if (ret)
		fail_msg("ioacct_mountinfo_read(getpid()): %d: %s", ret, err);
	assert_int_equal(n2, n);
	free(m2);
	free(m);

	/* Above the kernel's largest pid_max: no such process. */
	assert_int_equal(ioacct_mountinfo_read(5000000, &m, &n, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/proc/5000000/mountinfo"));
}

/* The mount point of a hierarchy, or NULL after a message when it is absent here. */
static const char *live_mountpoint(enum ioacct_hier hier, const char *ctrl, char *out,
				   size_t len)
{
	int ret = ioacct_cgroup_mountpoint(hier, ctrl, out, len);

	if (ret == -ENOENT) {
		print_message("cgroup hierarchy %s is not mounted here\n", ctrl ? ctrl : "v2");
		return NULL;
	}
	assert_int_equal(ret, 0);
	return out;
}

static void test_live_cgroup_v2(void **state __attribute__((unused)))
{
	char mp[PATH_MAX], rel[PATH_MAX], dir[2 * PATH_MAX];
	enum ioacct_hier hier = IOACCT_HIER_V1;
	uint64_t id = 0;

	if (!live_mountpoint(IOACCT_HIER_V2, NULL, mp, sizeof(mp)))
		skip();
	assert_string_equal(mp, "/sys/fs/cgroup/unified");
	assert_int_equal(ioacct_cgroup_id(mp, &id), 0);
	assert_int_equal(id, 1);
	assert_int_equal(ioacct_cgroup_hier_of_path(mp, &hier), 0);
	assert_int_equal(hier, IOACCT_HIER_V2);

	/* Our own cgroup, found through /proc/self/cgroup, is a directory there. */
	assert_int_equal(ioacct_cgroup_of_pid(0, IOACCT_HIER_V2, NULL, rel, sizeof(rel)), 0);
	assert_int_equal(rel[0], '/');
	snprintf(dir, sizeof(dir), "%s%s", mp, rel);
	assert_int_equal(ioacct_cgroup_id(dir, &id), 0);
	assert_int_equal(ioacct_cgroup_hier_of_path(dir, &hier), 0);
	assert_int_equal(hier, IOACCT_HIER_V2);
}

static void test_live_cgroup_v1(void **state __attribute__((unused)))
{
	char mp[PATH_MAX], rel[PATH_MAX], dir[2 * PATH_MAX];
	enum ioacct_hier hier = IOACCT_HIER_V2;
	uint64_t id = 0;

	if (!live_mountpoint(IOACCT_HIER_V1, "freezer", mp, sizeof(mp)))
		skip();
	assert_string_equal(mp, "/sys/fs/cgroup/freezer");
	assert_int_equal(ioacct_cgroup_hier_of_path(mp, &hier), 0);
	assert_int_equal(hier, IOACCT_HIER_V1);

	assert_int_equal(ioacct_cgroup_of_pid(getpid(), IOACCT_HIER_V1, "freezer", rel,
					      sizeof(rel)), 0);
	snprintf(dir, sizeof(dir), "%s%s", mp, rel);
	assert_int_equal(ioacct_cgroup_id(dir, &id), 0);
	assert_true(id != 0);
}

static void test_live_cgroup_errors(void **state __attribute__((unused)))
{
	enum ioacct_hier hier;
	uint64_t id;
	char out[PATH_MAX];

	assert_int_equal(ioacct_cgroup_id("/proc/self/status", &id), -ENOTDIR);
	assert_int_equal(ioacct_cgroup_id("/nonexistent/cgroup", &id), -ENOENT);
	assert_int_equal(ioacct_cgroup_hier_of_path("/proc", &hier), -EINVAL);
	assert_int_equal(ioacct_cgroup_hier_of_path("/nonexistent/cgroup", &hier), -ENOENT);
	assert_int_equal(ioacct_cgroup_of_pid(5000000, IOACCT_HIER_V2, NULL, out, sizeof(out)),
			 -ENOENT);
}

static void test_live_v1_ssid(void **state __attribute__((unused)))
{
	char line[256];
	uint32_t ssid = 0, pos = 0;
	bool found = false;
	FILE *f;

	f = fopen("/proc/cgroups", "r");
	if (!f) {
		print_message("no /proc/cgroups here\n");
		skip();
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strncmp(line, "freezer\t", 8) == 0) {
			found = true;
			break;
		}
		pos++;
	}
	fclose(f);
	if (!found) {
		print_message("the kernel has no freezer controller\n");
		assert_int_equal(ioacct_cgroup_v1_ssid("freezer", &ssid), -ENOENT);
		skip();
	}
	assert_int_equal(ioacct_cgroup_v1_ssid("freezer", &ssid), 0);
	assert_int_equal(ssid, pos);
}

static void test_live_mntns(void **state __attribute__((unused)))
{
	struct ioacct_mntns_ref ref = { 0 }, ref2 = { 0 };
	struct stat st;

	assert_int_equal(stat("/proc/self/ns/mnt", &st), 0);
	assert_int_equal(ioacct_proc_mntns_ref(0, &ref), 0);
	assert_int_equal(ref.inum, st.st_ino);
	assert_int_equal(ioacct_proc_mntns_ref(getpid(), &ref2), 0);
	assert_int_equal(ref2.inum, ref.inum);
	assert_true(ref2.id == ref.id);
	assert_true(ioacct_mntns_ref_same(&ref, &ref2));
	assert_int_equal(ioacct_proc_mntns_ref(5000000, &ref), -ENOENT);
}

static void test_mntns_ref_same(void **state __attribute__((unused)))
{
	const struct ioacct_mntns_ref a = { 7, 100 }, b = { 7, 101 }, c = { 8, 100 }, old = { 7, 0 };

	assert_true(ioacct_mntns_ref_same(&a, &a));
	/* One inode number, two namespaces one after the other: the ids tell them apart. */
	assert_false(ioacct_mntns_ref_same(&a, &b));
	assert_false(ioacct_mntns_ref_same(&a, &c));
	/* Without the kernel's id, the inode number is all there is. */
	assert_true(ioacct_mntns_ref_same(&a, &old));
	assert_true(ioacct_mntns_ref_same(&old, &b));
}

/* A pin tells whether what was read of /proc/<pid> was of the process pinned. */
static void test_live_pin(void **state __attribute__((unused)))
{
	struct ioacct_mntns_ref self, other;
	struct ioacct_mount *m = NULL;
	char err[256] = "";
	size_t n = 0;
	int fd, status;
	pid_t child;

	assert_int_equal(ioacct_proc_mntns_ref(0, &self), 0);
	fd = ioacct_proc_pin(getpid());
	if (fd == -ENOSYS)
		skip();
	assert_true(fd >= 0);
	assert_int_equal(ioacct_proc_unpin(fd), 0);

	assert_int_equal(ioacct_mountinfo_read_ns(getpid(), &self, &m, &n, err, sizeof(err)), 0);
	assert_non_null(m);
	assert_true(n > 0);
	free(m);
	m = NULL;
	other = self;
	other.inum++;
	assert_int_equal(ioacct_mountinfo_read_ns(getpid(), &other, &m, &n, err, sizeof(err)),
			 -ESTALE);
	assert_non_null(strstr(err, "not in mount namespace"));
	assert_null(m);

	/* Pinned, then reaped: its pid is free for anyone, and the pin says so. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	fd = ioacct_proc_pin(child);
	assert_true(fd >= 0);
	/* A zombie still holds its pid. */
	while (ioacct_proc_mntns_ref(child, &other) == 0)
		usleep(1000);
	assert_int_equal(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(ioacct_proc_unpin(fd), -ESRCH);
	assert_int_equal(ioacct_mountinfo_read_ns(child, &self, &m, &n, err, sizeof(err)), -ESRCH);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo_hybrid),
		cmocka_unit_test(test_mountinfo_last_line_unterminated),
		cmocka_unit_test(test_mountinfo_escapes),
		cmocka_unit_test(test_mountinfo_malformed),
		cmocka_unit_test(test_mountinfo_too_long),
		cmocka_unit_test(test_mountinfo_many),
		cmocka_unit_test(test_mount_find),
		cmocka_unit_test(test_mount_of_path),
		cmocka_unit_test(test_mounts_visible),
		cmocka_unit_test(test_cgroup_mountpoint_parse),
		cmocka_unit_test(test_cgroup_parse_hybrid),
		cmocka_unit_test(test_cgroup_parse_v2),
		cmocka_unit_test(test_cgroup_parse_colon),
		cmocka_unit_test(test_cgroup_parse_bad),
		cmocka_unit_test(test_v1_ssid_parse),
		cmocka_unit_test(test_procfs_read),
		cmocka_unit_test(test_live_mountinfo),
		cmocka_unit_test(test_live_cgroup_v2),
		cmocka_unit_test(test_live_cgroup_v1),
		cmocka_unit_test(test_live_cgroup_errors),
		cmocka_unit_test(test_live_v1_ssid),
		cmocka_unit_test(test_live_mntns),
		cmocka_unit_test(test_mntns_ref_same),
		cmocka_unit_test(test_live_pin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
