/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of a mount's identity (daemon/mntid.c, issue 36): which entry
 * of a mount table is the mount the probes counted under a key. A unique id
 * names its mount whenever the table was read; a 32-bit id, which the kernel
 * gives to the next mount at once, only with what the probes noted of the
 * mount agreeing in namespace, id, type and mount point, or (no note) when
 * the entry was in the table, unchanged, before the job's counters; an entry
 * another unique id was found for is another mount. Then the unique ids of
 * this process's own mount table, from listmount() and statmount(), checked
 * against statx() where the kernel has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "mntid.h"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif

#define U1 (IOACCT_MNT_UNIQUE_MIN + 101)
#define U2 ((1ULL << 33) + 7)
#define U3 (IOACCT_MNT_UNIQUE_MIN + 303)

static struct ioacct_mount mnt(uint64_t key, uint32_t old, const char *path, const char *fstype)
{
	struct ioacct_mount m = { .mnt_id = key, .mnt_id_old = old };

	snprintf(m.path, sizeof(m.path), "%s", path);
	snprintf(m.fstype, sizeof(m.fstype), "%s", fstype);
	return m;
}

static struct ioacct_mntid_note note(uint32_t ns, uint32_t old, const char *path,
				     const char *fstype, bool complete)
{
	struct ioacct_mntid_note n = { .mntns = ns, .mnt_id_old = old, .complete = complete };

	snprintf(n.path, sizeof(n.path), "%s", path);
	snprintf(n.fstype, sizeof(n.fstype), "%s", fstype);
	return n;
}

/* A table of namespace 7 read where the kernel has unique ids (the third entry unmapped). */
static void test_unique(void **state)
{
	static struct ioacct_mount t[4];
	struct ioacct_mntid_note n;

	(void)state;
	t[0] = mnt(U1, 26, "/", "ext4");
	t[1] = mnt(U2, 89, "/m/81015-t", "tmpfs");
	t[2] = mnt(90, 90, "/m/81016-b", "ext4");
	t[3] = mnt(U3, 91, "/sshfs", "fuse.sshfs");
	/* A unique key names its entry, whenever it was read, note or not. */
	assert_ptr_equal(ioacct_mntid_match(t, NULL, 4, 7, U2, NULL, 0), &t[1]);
	n = note(99, 1, "/elsewhere", "xfs", true);
	assert_ptr_equal(ioacct_mntid_match(t, NULL, 4, 7, U2, &n, 0), &t[1]);
	/* Not in the table, no note: nothing proves it, not even a 32-bit id of the same value. */
	assert_null(ioacct_mntid_match(t, NULL, 4, 7, U1 + 1000, NULL, 0));
	/* An entry without its unique id: by the note, in its namespace only. */
	n = note(7, 90, "/m/81016-b", "ext4", true);
	assert_ptr_equal(ioacct_mntid_match(t, NULL, 4, 7, U1 + 1000, &n, 0), &t[2]);
	assert_null(ioacct_mntid_match(t, NULL, 4, 8, U1 + 1000, &n, 0));
	/* Another mount point, or another type, under that 32-bit id: another mount. */
	n = note(7, 90, "/m/81015-b", "ext4", true);
	assert_null(ioacct_mntid_match(t, NULL, 4, 7, U1 + 1000, &n, 0));
	n = note(7, 90, "/m/81016-b", "tmpfs", true);
	assert_null(ioacct_mntid_match(t, NULL, 4, 7, U1 + 1000, &n, 0));
	/* The note agrees with an entry another unique id was found for: that other mount. */
	n = note(7, 89, "/m/81015-t", "tmpfs", true);
	assert_null(ioacct_mntid_match(t, NULL, 4, 7, U1 + 1000, &n, 0));
	/* A FUSE file system's own type is "fuse"; mountinfo says "fuse.SUBTYPE". */
	n = note(7, 91, "/sshfs", "fuse", true);
	assert_ptr_equal(ioacct_mntid_match(t, NULL, 4, 7, U3, &n, 0), &t[3]);
	assert_true(ioacct_mntid_note_agrees(&n, "fuse.sshfs", "/sshfs"));
	assert_false(ioacct_mntid_note_agrees(&n, "fuseblk", "/sshfs"));
}

/* Where the kernel has no unique ids: keys are the 32-bit ids it reuses. */
static void test_reused(void **state)
{
	static struct ioacct_mount t[3];
	const uint64_t since[3] = { 100, 100, 500 };
	struct ioacct_mntid_note n;

	(void)state;
	t[0] = mnt(26, 26, "/", "ext4");
	t[1] = mnt(89, 89, "/m/41010-b", "ext4");
	t[2] = mnt(90, 90, "/scratch", "xfs");
	/* The slot's note of mount 89 was another job's tmpfs: the table's 89 is not it. */
	n = note(7, 89, "/m/81015-t", "tmpfs", true);
	assert_null(ioacct_mntid_match(t, since, 3, 7, 89, &n, 1000));
	n = note(7, 89, "/m/41010-b", "ext4", true);
	assert_ptr_equal(ioacct_mntid_match(t, since, 3, 7, 89, &n, 1000), &t[1]);
	/* The note is of another namespace than the table's. */
	assert_null(ioacct_mntid_match(t, since, 3, 4026532195u, 89, &n, 1000));
	/* A mount point the note could only hold the end of. */
	n = note(7, 90, "/scratch", "xfs", false);
	assert_ptr_equal(ioacct_mntid_match(t, since, 3, 7, 90, &n, 1000), &t[2]);
	n = note(7, 90, "/other", "xfs", false);
	assert_null(ioacct_mntid_match(t, since, 3, 7, 90, &n, 1000));
	/* No note: only an entry the table had, as it is, before the job's counters. */
	assert_ptr_equal(ioacct_mntid_match(t, since, 3, 7, 26, NULL, 100), &t[0]);
	assert_ptr_equal(ioacct_mntid_match(t, since, 3, 7, 89, NULL, 200), &t[1]);
	assert_null(ioacct_mntid_match(t, since, 3, 7, 90, NULL, 200));
	assert_ptr_equal(ioacct_mntid_match(t, since, 3, 7, 90, NULL, 500), &t[2]);
	assert_null(ioacct_mntid_match(t, NULL, 3, 7, 26, NULL, 1000));
	assert_null(ioacct_mntid_match(t, since, 3, 7, 27, NULL, 1000));
}

/*
 * This process's own table: every entry gets the unique id listmount() and
 * statmount() give its mount, and the root's is the one statx() says. On a
 * kernel without unique ids the call says so and changes nothing.
 */
static void test_map_own(void **state)
{
	struct ioacct_mntns_ref self = { 0 };
	struct ioacct_mount *m = NULL;
	size_t n = 0, mapped = 0;
	struct statx stx;
	char err[256];
	int ret;

	(void)state;
	assert_int_equal(ioacct_mountinfo_read(0, &m, &n, err, sizeof(err)), 0);
	assert_true(n > 0);
	assert_int_equal(ioacct_proc_mntns_ref(0, &self), 0);
	if (statx(AT_FDCWD, "/", 0, STATX_MNT_ID_UNIQUE, &stx) != 0 ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE)) {
		assert_int_equal(ioacct_mntid_map(&self, true, m, n, &mapped), -ENOSYS);
		for (size_t i = 0; i < n; i++)
			assert_true(m[i].mnt_id == m[i].mnt_id_old);
		free(m);
		skip();
	}
	ret = ioacct_mntid_map(&self, true, m, n, &mapped);
	if (ret == -EPERM) {
		free(m);
		skip();
	}
	assert_int_equal(ret, 0);
	assert_int_equal(mapped, n);
	for (size_t i = 0; i < n; i++)
		assert_true(m[i].mnt_id >= IOACCT_MNT_UNIQUE_MIN);
	assert_true(ioacct_mount_of_path(m, n, "/")->mnt_id == stx.stx_mnt_id);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unique),
		cmocka_unit_test(test_reused),
		cmocka_unit_test(test_map_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
