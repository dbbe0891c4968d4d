// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HDF5 acceptance program of issue 39 (75-hdf5.sh): in FILE, dataset
 * "a" of 1,000 doubles written with one H5Dwrite; dataset "b" of 256 x 256
 * ints written as 4 hyperslabs of 64 rows, then read back whole; a flush of
 * the file. Checks what it reads back, so that a count is of calls that did
 * their work.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 256
#define COLS 256

static int fail(const char *what)
{
	fprintf(stderr, "h5prog: %s failed\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	static int b[ROWS][COLS], back[ROWS][COLS];
	hsize_t adim = 1000, bdim[2] = { ROWS, COLS }, start[2] = { 0, 0 }, count[2] = { 64, COLS };
	double a[1000];
	hid_t f, as, ad, bs, bd, ms;

	if (argc != 2) {
		fprintf(stderr, "usage: h5prog FILE\n");
		return 2;
	}
	for (int i = 0; i < 1000; i++)
		a[i] = i * 0.5;
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			b[r][c] = r * COLS + c;
	f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0)
		return fail("H5Fcreate");
	as = H5Screate_simple(1, &adim, NULL);
	ad = H5Dcreate2(f, "a", H5T_NATIVE_DOUBLE, as, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (ad < 0 || H5Dwrite(ad, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0)
		return fail("dataset a");
	bs = H5Screate_simple(2, bdim, NULL);
	bd = H5Dcreate2(f, "b", H5T_NATIVE_INT, bs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ms = H5Screate_simple(2, count, NULL);
	if (bd < 0 || ms < 0)
		return fail("dataset b");
	for (int k = 0; k < 4; k++) {
		start[0] = (hsize_t)k * 64;
		if (H5Sselect_hyperslab(bs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
		    H5Dwrite(bd, H5T_NATIVE_INT, ms, bs, H5P_DEFAULT, b[k * 64]) < 0)
			return fail("a hyperslab of b");
	}
	if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
		return fail("H5Fflush");
	if (H5Dread(bd, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0)
		return fail("reading b");
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			if (back[r][c] != b[r][c])
				return fail("b read back");
	H5Sclose(ms);
	H5Sclose(bs);
	H5Sclose(as);
	H5Dclose(ad);
	H5Dclose(bd);
	if (H5Fclose(f) < 0)
		return fail("H5Fclose");
	return 0;
}
