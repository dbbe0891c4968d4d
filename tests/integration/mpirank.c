// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metadata of many files per rank for 58-filecounters.sh, as mdtest does:
 *
 *   mpirank DIR N
 *
 * Rank r creates DIR/r<r>.<i> (O_EXCL), writes 100 bytes to it, closes it
 * and stats it by path, for i = 0 .. N-1. The binary is large on purpose:
 * its initialized data comes after 8 MiB of read-only data, so that the
 * exec's first write to it (the .bss's first page, which shares a page with
 * the end of .data) faults a page of the binary in from the disk when the
 * binary is not cached: a page-cache miss of the new process before its
 * environment's bounds are set (issue 38).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#define PAD (8 << 20)

/* Read-only bytes that make the binary large; one is read so that it stays. */
static const char pad[PAD] = { 1 };
/* Initialized data after them, and a .bss after it. */
static char data[64] = "data";
static char bss[4096];

int main(int argc, char **argv)
{
	char path[4096], buf[100] = { 0 };
	struct stat st;
	int rank, n;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: mpirank DIR N\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf[0] = pad[rank % 2] + data[0] + bss[0];
	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/r%d.%d", argv[1], rank, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) ||
		    stat(path, &st) || st.st_size != (off_t)sizeof(buf)) {
			perror(path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	MPI_Finalize();
	return 0;
}
