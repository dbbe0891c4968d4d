// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobench: the cost of one I/O call, for tests/bench/sidebyside, vm-bench and
 * event-cost.
 *
 *   iobench pwrite|write|pread|rw|pwsync FILE SIZE COUNT
 *   iobench meta DIR SIZE COUNT
 *
 * Prints the mean nanoseconds per call (meta: per file) of the timed part.
 * Untimed calls first warm the page cache and the probes. What each mode
 * does, so that a monitor's counts can be checked exactly:
 *
 *   pwrite, write  1,000 + COUNT writes of SIZE bytes (pwrite at offset 0,
 *                  write rewinding every 64 calls: the file stays small)
 *   pread          one pwrite of SIZE bytes, then 1,000 + COUNT preads of
 *                  SIZE bytes at offset 0
 *   rw             as pread, but the calls alternate pwrite and pread (each
 *                  call another operation than the last: the per-task
 *                  accumulator's worst case)
 *   pwsync         as pwrite, each write followed by an fsync (a "call" is
 *                  both), after only 20 untimed ones: on NFS each makes a
 *                  WRITE and a COMMIT (vm-bench's RPC cost, issue 40)
 *   meta           for each of 100 + COUNT files in DIR: open(O_CREAT) and
 *                  write SIZE bytes (none when SIZE is 0), close, stat,
 *                  open read-only, close, unlink
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WARMUP_CALLS 1000
#define WARMUP_SYNCS 20
#define WARMUP_FILES 100

enum mode { M_PWRITE, M_WRITE, M_PREAD, M_RW, M_META, M_PWSYNC };

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int one_call(enum mode m, int fd, char *buf, size_t size, long i)
{
	ssize_t n;

	switch (m) {
	case M_PWRITE:
		n = pwrite(fd, buf, size, 0);
		break;
	case M_WRITE:
		n = write(fd, buf, size);
		if ((i & 63) == 63)
			lseek(fd, 0, SEEK_SET);
		break;
	case M_RW:
		n = i & 1 ? pread(fd, buf, size, 0) : pwrite(fd, buf, size, 0);
		break;
	case M_PWSYNC:
		n = pwrite(fd, buf, size, 0);
		if (n == (ssize_t)size && fsync(fd))
			n = -1;
		break;
	default:
		n = pread(fd, buf, size, 0);
		break;
	}
	if (n != (ssize_t)size) {
		perror("iobench: I/O call");
		return -1;
	}
	return 0;
}

/* One file's life in the metadata workload. */
static int one_file(const char *dir, long i, const char *buf, size_t size)
{
	char path[4096];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/f%ld", dir, i);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (size && write(fd, buf, size) != (ssize_t)size) || close(fd) ||
	    stat(path, &st)) {
		perror(path);
		return -1;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || close(fd) || unlink(path)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int run_meta(const char *dir, size_t size, long count)
{
	char *buf = calloc(1, size ? size : 1);
	double t0;

	if (!buf)
		return 1;
	for (long i = 0; i < WARMUP_FILES; i++)
		if (one_file(dir, i, buf, size))
			return 1;
	t0 = now_ns();
	for (long i = 0; i < count; i++)
		if (one_file(dir, WARMUP_FILES + i, buf, size))
			return 1;
	printf("%.1f\n", (now_ns() - t0) / (double)count);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "pwrite", "write", "pread", "rw", "meta", "pwsync" };
	enum mode m = M_PWRITE;
	size_t size;
	long count;
	int fd, k;
	char *buf;
	double t0;

	for (k = 0; argc == 5 && k < 6; k++)
		if (strcmp(argv[1], names[k]) == 0)
			break;
	if (argc != 5 || k == 6) {
		fprintf(stderr, "usage: iobench pwrite|write|pread|rw|pwsync FILE SIZE COUNT\n"
				"       iobench meta DIR SIZE COUNT\n");
		return 2;
	}
	m = (enum mode)k;
	size = strtoul(argv[3], NULL, 10);
	count = strtol(argv[4], NULL, 10);
	if (count <= 0) {
		fprintf(stderr, "iobench: COUNT must be a positive number\n");
		return 2;
	}
	if (m == M_META)
		return run_meta(argv[2], size, count);
	buf = malloc(size ? size : 1);
	fd = open(argv[2], (m == M_PREAD || m == M_RW ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC, 0644);
	if (!buf || fd < 0 || size == 0) {
		perror("iobench");
		return 1;
	}
	memset(buf, 'x', size);
	if ((m == M_PREAD || m == M_RW) && pwrite(fd, buf, size, 0) != (ssize_t)size) {
		perror("iobench: pwrite");
		return 1;
	}
	for (long i = 0; i < (m == M_PWSYNC ? WARMUP_SYNCS : WARMUP_CALLS); i++)
		if (one_call(m, fd, buf, size, i))
			return 1;
	t0 = now_ns();
	for (long i = 0; i < count; i++)
		if (one_call(m, fd, buf, size, i))
			return 1;
	printf("%.1f\n", (now_ns() - t0) / (double)count);
	close(fd);
	return 0;
}
