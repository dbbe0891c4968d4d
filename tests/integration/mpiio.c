// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MPI-IO calls of known counts and sizes for 42-mpiio.sh: mpiio DIR.
 * Every rank, on DIR/shared (opened on MPI_COMM_WORLD) at its own offsets:
 * independent, collective, nonblocking and split writes then reads of
 * 2000 MPI_BYTE, 30 MPI_INT, 2 of a derived type (a vector of 2 x 3 ints
 * with holes: 24 bytes) and 7 MPI_BYTE, with and without MPI_STATUS_IGNORE;
 * a sync and a set_view. Then on DIR/own.RANK (MPI_COMM_SELF): 3
 * independent writes of 5 MPI_INT. Exits nonzero on any failed call.
 *
 * mpiio DIR N (68-darshan-tools.sh, issue 38): every rank writes N blocks
 * of 64 KiB to DIR/data, block i of rank r at offset (i * nranks + r) *
 * 64 KiB (MPI_File_write_at), then, after a barrier and 0.3 s, reads its
 * blocks back: N x 64 KiB each way per rank, in two phases apart in time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#define CHECK(call)                                                         \
	do {                                                                \
		if ((call) != MPI_SUCCESS) {                                \
			fprintf(stderr, "mpiio: %s failed\n", #call);       \
			MPI_Abort(MPI_COMM_WORLD, 1);                       \
		}                                                           \
	} while (0)

static char buf[8192], rbuf[8192];

static void shared_file(const char *dir, int rank, MPI_Datatype vec)
{
	MPI_Offset base = (MPI_Offset)rank * 8192;
	MPI_Request req;
	MPI_Status st;
	MPI_File fh;
	char path[4096];

	snprintf(path, sizeof(path), "%s/shared", dir);
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			    &fh));
	CHECK(MPI_File_write_at(fh, base, buf, 2000, MPI_BYTE, &st));
	CHECK(MPI_File_write_at_all(fh, base + 2000, buf, 30, MPI_INT, MPI_STATUS_IGNORE));
	CHECK(MPI_File_iwrite_at(fh, base + 2200, buf, 2, vec, &req));
	CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(MPI_File_write_at_all_begin(fh, base + 2300, buf, 7, MPI_BYTE));
	CHECK(MPI_File_write_at_all_end(fh, buf, &st));
	CHECK(MPI_File_sync(fh));
	CHECK(MPI_File_read_at(fh, base, rbuf, 2000, MPI_BYTE, MPI_STATUS_IGNORE));
	CHECK(MPI_File_read_at_all(fh, base + 2000, rbuf, 30, MPI_INT, &st));
	CHECK(MPI_File_iread_at(fh, base + 2200, rbuf, 2, vec, &req));
	CHECK(MPI_Wait(&req, &st));
	CHECK(MPI_File_read_at_all_begin(fh, base + 2300, rbuf, 7, MPI_BYTE));
	CHECK(MPI_File_read_at_all_end(fh, rbuf, MPI_STATUS_IGNORE));
	CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	CHECK(MPI_File_close(&fh));
}

static void own_file(const char *dir, int rank)
{
	MPI_File fh;
	MPI_Status st;
	char path[4096];

	snprintf(path, sizeof(path), "%s/own.%d", dir, rank);
	CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			    &fh));
	for (int i = 0; i < 3; i++)
		CHECK(MPI_File_write(fh, buf, 5, MPI_INT, i ? &st : MPI_STATUS_IGNORE));
	CHECK(MPI_File_close(&fh));
}

#define BLOCK 65536

static char block[BLOCK];

static void blocks(const char *dir, int rank, int n)
{
	struct timespec pause = { 0, 300000000 };
	MPI_File fh;
	char path[4096];
	int nranks;

	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	snprintf(path, sizeof(path), "%s/data", dir);
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			    &fh));
	for (int i = 0; i < n; i++)
		CHECK(MPI_File_write_at(fh, ((MPI_Offset)i * nranks + rank) * BLOCK, block, BLOCK,
					MPI_BYTE, MPI_STATUS_IGNORE));
	MPI_Barrier(MPI_COMM_WORLD);
	nanosleep(&pause, NULL);
	for (int i = 0; i < n; i++)
		CHECK(MPI_File_read_at(fh, ((MPI_Offset)i * nranks + rank) * BLOCK, block, BLOCK,
				       MPI_BYTE, MPI_STATUS_IGNORE));
	CHECK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	MPI_Datatype vec;
	int rank;

	MPI_Init(&argc, &argv);
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: mpiio DIR [BLOCKS]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc == 3) {
		memset(block, 'a' + rank, sizeof(block));
		blocks(argv[1], rank, atoi(argv[2]));
		MPI_Finalize();
		return 0;
	}
	memset(buf, 'a' + rank, sizeof(buf));
	/* 2 blocks of 3 ints, 5 ints apart: 24 bytes of data in an extent of 32. */
	CHECK(MPI_Type_vector(2, 3, 5, MPI_INT, &vec));
	CHECK(MPI_Type_commit(&vec));
	shared_file(argv[1], rank, vec);
	own_file(argv[1], rank);
	MPI_Type_free(&vec);
	MPI_Finalize();
	return 0;
}
