// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parallel HDF5 (77-h5mpi.sh, issue 39): every rank of MPI_COMM_WORLD opens
 * FILE through the MPI-IO driver and writes its 1,024 doubles of dataset
 * "p" (1,024 x ranks) in one collective H5Dwrite, then reads them back in
 * one independent H5Dread.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

#define N 1024

int main(int argc, char **argv)
{
	int rank, size, bad = 0;
	double v[N], back[N];
	hsize_t dim, start, count = N;
	hid_t fapl, f, fs, ms, d, dxpl;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 2)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < N; i++)
		v[i] = rank * N + i;
	dim = (hsize_t)size * N;
	start = (hsize_t)rank * N;
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
	f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	fs = H5Screate_simple(1, &dim, NULL);
	ms = H5Screate_simple(1, &count, NULL);
	d = H5Dcreate2(f, "p", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
	dxpl = H5Pcreate(H5P_DATASET_XFER);
	H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
	if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, v) < 0 ||
	    H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, back) < 0)
		bad = 1;
	for (int i = 0; i < N && !bad; i++)
		bad = back[i] != v[i];
	H5Pclose(dxpl);
	H5Dclose(d);
	H5Sclose(ms);
	H5Sclose(fs);
	H5Fclose(f);
	H5Pclose(fapl);
	if (bad)
		fprintf(stderr, "h5pmpi: rank %d failed\n", rank);
	MPI_Finalize();
	return bad;
}
