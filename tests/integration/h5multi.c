// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * HDF5 1.14's multi-dataset calls (75-hdf5-prefix.sh; issue 39): in FILE,
 * dataset "x" of 1,000 doubles and "y" of 500 ints; one H5Dwrite_multi
 * writes x whole (H5S_ALL) and y's first 100 elements (a hyperslab), one
 * H5Dread_multi reads both whole, then one H5Dwrite writes y whole. Checks
 * what it reads back, so that a count is of calls that did their work.
 */
#include <hdf5.h>
#include <stdio.h>

#define NX 1000
#define NY 500
#define NY_FIRST 100

static int fail(const char *what)
{
	fprintf(stderr, "h5multi: %s failed\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	static double x[NX], xb[NX];
	static int y[NY], yb[NY];
	hsize_t nx = NX, ny = NY, first = NY_FIRST, zero = 0;
	hid_t f, sx, sy, ds[2], mt[2], ms[2], fs[2];
	const void *wb[2] = { x, y };
	void *rb[2] = { xb, yb };

	if (argc != 2) {
		fprintf(stderr, "usage: h5multi FILE\n");
		return 2;
	}
	for (int i = 0; i < NX; i++)
		x[i] = i / 4.0;
	for (int i = 0; i < NY; i++)
		y[i] = 3 * i;
	f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	sx = H5Screate_simple(1, &nx, NULL);
	sy = H5Screate_simple(1, &ny, NULL);
	if (f < 0 || sx < 0 || sy < 0)
		return fail("create");
	ds[0] = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, sx, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ds[1] = H5Dcreate2(f, "y", H5T_NATIVE_INT, sy, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (ds[0] < 0 || ds[1] < 0)
		return fail("H5Dcreate2");
	mt[0] = H5T_NATIVE_DOUBLE;
	mt[1] = H5T_NATIVE_INT;

	/* x whole, y's first 100 through a hyperslab of its dataspace. */
	ms[0] = fs[0] = H5S_ALL;
	ms[1] = H5Screate_simple(1, &first, NULL);
	fs[1] = H5Scopy(sy);
	if (H5Sselect_hyperslab(fs[1], H5S_SELECT_SET, &zero, NULL, &first, NULL) < 0 ||
	    H5Dwrite_multi(2, ds, mt, ms, fs, H5P_DEFAULT, wb) < 0)
		return fail("H5Dwrite_multi");
	H5Sclose(ms[1]);
	H5Sclose(fs[1]);

	/* Both whole. */
	ms[1] = fs[1] = H5S_ALL;
	if (H5Dread_multi(2, ds, mt, ms, fs, H5P_DEFAULT, rb) < 0)
		return fail("H5Dread_multi");
	for (int i = 0; i < NX; i++)
		if (xb[i] != x[i])
			return fail("x read back");
	for (int i = 0; i < NY_FIRST; i++)
		if (yb[i] != y[i])
			return fail("y read back");

	if (H5Dwrite(ds[1], H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, y) < 0)
		return fail("H5Dwrite");
	if (H5Dclose(ds[0]) < 0 || H5Dclose(ds[1]) < 0 || H5Sclose(sx) < 0 || H5Sclose(sy) < 0 ||
	    H5Fclose(f) < 0)
		return fail("close");
	return 0;
}
