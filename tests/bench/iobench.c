// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobench: the cost of one I/O call, for tests/bench/syscall-cost.
 *
 *   iobench pwrite|write FILE SIZE COUNT
 *
 * Writes COUNT requests of SIZE bytes (pwrite: always at offset 0, so the
 * file stays small and the page cache warm) and prints the mean nanoseconds
 * per call. A few untimed calls first warm the page cache and the probes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t size;
	long count;
	int pw, fd;
	char *buf;
	double t0;

	if (argc != 5 || (strcmp(argv[1], "pwrite") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: iobench pwrite|write FILE SIZE COUNT\n");
		return 2;
	}
	pw = strcmp(argv[1], "pwrite") == 0;
	size = strtoul(argv[3], NULL, 10);
	count = strtol(argv[4], NULL, 10);
	buf = malloc(size);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!buf || fd < 0 || count <= 0) {
		perror("iobench");
		return 1;
	}
	memset(buf, 'x', size);
	for (int i = 0; i < 1000; i++)
		if (pwrite(fd, buf, size, 0) != (ssize_t)size)
			return 1;
	t0 = now_ns();
	for (long i = 0; i < count; i++) {
		ssize_t n = pw ? pwrite(fd, buf, size, 0) : write(fd, buf, size);

		if (n != (ssize_t)size) {
			perror("iobench: write");
			return 1;
		}
		if (!pw && (i & 63) == 63)
			lseek(fd, 0, SEEK_SET);
	}
	printf("%.1f\n", (now_ns() - t0) / (double)count);
	close(fd);
	return 0;
}
