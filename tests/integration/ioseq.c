// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioseq: a known sequence of calls for iotrace's tests (20-iotrace.sh).
 * Linked statically, so that starting it opens and reads nothing: the calls
 * below are all the file-system calls it makes.
 *
 *   ioseq FILE MISSING    open(FILE, O_WRONLY|O_CREAT|O_TRUNC), write 100,
 *                         2000 and 30000 bytes, fsync, close, then open
 *                         MISSING, which must fail with ENOENT
 *   ioseq -n N FILE       N writes of 1 byte to FILE (a chatty command)
 *   ioseq -t FILE         open FILE, a second thread pwrite()s 10 bytes at
 *                         offset 100, then close: a tid that is not the pid,
 *                         an offset that is an argument
 *
 * Exit 0 when every call did what was asked, 1 otherwise (with a message).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[30000];

static int fail(const char *what, const char *path)
{
	dprintf(2, "ioseq: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

static void *pwriter(void *arg)
{
	int fd = *(int *)arg;

	return pwrite(fd, buf, 10, 100) == 10 ? NULL : (void *)1;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 100, 2000, 30000 };
	int fd;

	if (argc == 4 && !strcmp(argv[1], "-n")) {
		long n = strtol(argv[2], NULL, 10);

		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return fail("open", argv[3]);
		for (long i = 0; i < n; i++)
			if (write(fd, buf, 1) != 1)
				return fail("write", argv[3]);
		close(fd);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "-t")) {
		pthread_t th;
		void *res;

		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return fail("open", argv[2]);
		if (pthread_create(&th, NULL, pwriter, &fd) || pthread_join(th, &res) || res)
			return fail("pwrite in a thread", argv[2]);
		close(fd);
		return 0;
	}
	if (argc != 3) {
		dprintf(2, "usage: ioseq FILE MISSING | ioseq -n N FILE | ioseq -t FILE\n");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fail("open", argv[1]);
	for (size_t i = 0; i < 3; i++)
		if (write(fd, buf, sizeof(buf) < sizes[i] ? sizeof(buf) : sizes[i]) != (ssize_t)sizes[i])
			return fail("write", argv[1]);
	if (fsync(fd))
		return fail("fsync", argv[1]);
	if (close(fd))
		return fail("close", argv[1]);
	if (open(argv[2], O_RDONLY) >= 0 || errno != ENOENT)
		return fail("open (expected ENOENT)", argv[2]);
	return 0;
}
