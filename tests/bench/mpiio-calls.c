// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The MPI-IO calls of tests/bench/mpiio-cost (issue 27), built there with
 * the MPI library's mpicc (MPI is a test and benchmark dependency only):
 *
 *   mpiio-calls N DIR    each rank: N MPI_File_write_at of 8 bytes to its own
 *                        file DIR/c.RANK (MPI_COMM_SELF), then N read_at of
 *                        them; rank 0 prints "WRITE_NS READ_NS", the mean
 *                        time of one call of each
 *   mpiio-calls hold F   MPI_Init, then waits until the file F is gone (a
 *                        job that keeps the library mapped, so its uprobes)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char path[4096], buf[8] = "01234567";
	MPI_File fh;
	double t0, tw, tr;
	long n;
	int rank;

	if (argc != 3) {
		fprintf(stderr, "usage: mpiio-calls N DIR | mpiio-calls hold FILE\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argv[1][0] == 'h') {
		while (access(argv[2], F_OK) == 0)
			usleep(20000);
		MPI_Finalize();
		return 0;
	}
	n = atol(argv[1]);
	snprintf(path, sizeof(path), "%s/c.%d", argv[2], rank);
	if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			  &fh) != MPI_SUCCESS) {
		fprintf(stderr, "mpiio-calls: cannot open %s\n", path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		MPI_File_write_at(fh, i * 8, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE);
	tw = now_ns() - t0;
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		MPI_File_read_at(fh, i * 8, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE);
	tr = now_ns() - t0;
	MPI_File_close(&fh);
	if (rank == 0)
		printf("%.1f %.1f\n", tw / n, tr / n);
	MPI_Finalize();
	return 0;
}
