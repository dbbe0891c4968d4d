// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MPI-IO of one shared file for 56-filelives.sh and 58-filecounters.sh:
 *
 *   mpifile DIR coll|indep SIZE COUNT
 *
 * Every rank writes COUNT blocks of SIZE bytes to DIR/data, block i of rank
 * r at (i x ranks + r) x SIZE, then reads them back: collective calls
 * (MPI_File_write_at_all, MPI_File_read_at_all) or independent ones
 * (MPI_File_write_at, MPI_File_read_at). The file is opened on
 * MPI_COMM_WORLD, so that OpenMPI's ompio makes and unlinks its
 * DIR/data.locktest.RANK files first. Exits nonzero on any failed call or
 * short transfer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define CHECK(call)                                                         \
	do {                                                                \
		if ((call) != MPI_SUCCESS) {                                \
			fprintf(stderr, "mpifile: %s failed\n", #call);     \
			MPI_Abort(MPI_COMM_WORLD, 1);                       \
		}                                                           \
	} while (0)

static void whole(MPI_Status *st, int size)
{
	int n = 0;

	MPI_Get_count(st, MPI_BYTE, &n);
	if (n != size) {
		fprintf(stderr, "mpifile: moved %d bytes of %d\n", n, size);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

int main(int argc, char **argv)
{
	int rank, nranks, size, count, coll;
	char path[4096], *buf;
	MPI_Status st;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	if (argc != 5 || (strcmp(argv[2], "coll") && strcmp(argv[2], "indep"))) {
		fprintf(stderr, "usage: mpifile DIR coll|indep SIZE COUNT\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	coll = !strcmp(argv[2], "coll");
	size = atoi(argv[3]);
	count = atoi(argv[4]);
	buf = malloc(size > 0 ? (size_t)size : 1);
	if (!buf || size <= 0 || count <= 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(buf, 'a' + rank, (size_t)size);
	snprintf(path, sizeof(path), "%s/data", argv[1]);
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			    &fh));
	for (int i = 0; i < count; i++) {
		MPI_Offset off = ((MPI_Offset)i * nranks + rank) * size;

		if (coll)
			CHECK(MPI_File_write_at_all(fh, off, buf, size, MPI_BYTE, &st));
		else
			CHECK(MPI_File_write_at(fh, off, buf, size, MPI_BYTE, &st));
		whole(&st, size);
	}
	CHECK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < count; i++) {
		MPI_Offset off = ((MPI_Offset)i * nranks + rank) * size;

		if (coll)
			CHECK(MPI_File_read_at_all(fh, off, buf, size, MPI_BYTE, &st));
		else
			CHECK(MPI_File_read_at(fh, off, buf, size, MPI_BYTE, &st));
		whole(&st, size);
	}
	CHECK(MPI_File_close(&fh));
	free(buf);
	MPI_Finalize();
	return 0;
}
