// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * HDF5's selection kinds and chunk sizes (75-hdf5.sh; issue 39): in FILE,
 * dataset "s" of 100 x 100 ints (contiguous) written whole (H5S_ALL: no
 * selection kind, as Darshan), then through a regular hyperslab (rows 0 to
 * 9), two row blocks OR'ed (rows 0-9 and 50-59: regular to HDF5, start 0,
 * stride 50, count 2), two 5 x 5 blocks OR'ed on the diagonal (irregular:
 * HDF5 can make no one hyperslab of them) and 3 points; read back through
 * the points and whole. Dataset "c" of 100 x 100 ints in chunks of 10 x 20
 * rows and columns (Darshan's H5D_CHUNK_SIZE_D1 20, D2 10) written whole,
 * closed, opened again and read through a regular hyperslab (rows 10 to 19).
 * Checks what it reads back, so that a count is of calls that did their
 * work, and that HDF5 itself calls each selection what the test says.
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define N 100

static int fail(const char *what)
{
	fprintf(stderr, "h5sel: %s failed\n", what);
	return 1;
}

/* Writes buf through file selection fs of s (mem: as many elements, 1-D); 0 or -1. */
static int put(hid_t s, hid_t fs, const int *buf)
{
	hsize_t n = (hsize_t)H5Sget_select_npoints(fs);
	hid_t ms = H5Screate_simple(1, &n, NULL);
	herr_t e = H5Dwrite(s, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf);

	H5Sclose(ms);
	return e < 0 ? -1 : 0;
}

/* Whether fs's selection is what HDF5 calls a regular hyperslab (want 1) or not (0). */
static int is(hid_t fs, int want)
{
	return H5Sget_select_type(fs) == H5S_SEL_HYPERSLABS && H5Sis_regular_hyperslab(fs) == want;
}

int main(int argc, char **argv)
{
	static int a[N][N], back[N][N];
	hsize_t dims[2] = { N, N }, chunk[2] = { 10, 20 }, z[2] = { 0, 0 }, rows[2] = { 10, N };
	hsize_t r50[2] = { 50, 0 }, r10[2] = { 10, 0 }, b5[2] = { 5, 5 }, d7[2] = { 7, 7 };
	hsize_t pts[3][2] = { { 1, 1 }, { 5, 5 }, { 99, 98 } }, three = 3;
	int got[3];
	hid_t f, sp, s, c, fs, dcpl, ms;

	if (argc != 2) {
		fprintf(stderr, "usage: h5sel FILE\n");
		return 2;
	}
	for (int r = 0; r < N; r++)
		for (int k = 0; k < N; k++)
			a[r][k] = r * N + k;
	f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	sp = H5Screate_simple(2, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (f < 0 || sp < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 2, chunk) < 0)
		return fail("H5Fcreate");
	s = H5Dcreate2(f, "s", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	c = H5Dcreate2(f, "c", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (s < 0 || c < 0 || H5Dwrite(s, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0 ||
	    H5Dwrite(c, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0)
		return fail("writing s and c whole");
	fs = H5Dget_space(s);
	if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, z, NULL, rows, NULL) < 0 || !is(fs, 1) ||
	    put(s, fs, a[0]) < 0)
		return fail("a regular hyperslab");
	if (H5Sselect_hyperslab(fs, H5S_SELECT_OR, r50, NULL, rows, NULL) < 0 || !is(fs, 1) ||
	    put(s, fs, a[0]) < 0)
		return fail("two row blocks OR'ed");
	if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, z, NULL, b5, NULL) < 0 ||
	    H5Sselect_hyperslab(fs, H5S_SELECT_OR, d7, NULL, b5, NULL) < 0 || put(s, fs, a[0]) < 0 ||
	    !is(fs, 0))
		return fail("an irregular hyperslab");
	if (H5Sselect_elements(fs, H5S_SELECT_SET, 3, &pts[0][0]) < 0 || put(s, fs, a[0]) < 0)
		return fail("3 points");
	ms = H5Screate_simple(1, &three, NULL);
	if (H5Dread(s, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, got) < 0 || got[0] != a[0][0] ||
	    got[1] != a[0][1] || got[2] != a[0][2])
		return fail("reading 3 points");
	if (H5Dread(s, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0 ||
	    back[1][1] != a[0][0] || back[50][0] != a[10][0] || back[8][8] != a[0][31] ||
	    back[60][0] != a[60][0])
		return fail("reading s whole");
	H5Sclose(ms);
	H5Sclose(fs);
	if (H5Dclose(s) < 0 || H5Dclose(c) < 0)
		return fail("H5Dclose");
	c = H5Dopen2(f, "c", H5P_DEFAULT);
	fs = c < 0 ? -1 : H5Dget_space(c);
	ms = H5Screate_simple(2, rows, NULL);
	if (fs < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, r10, NULL, rows, NULL) < 0 ||
	    H5Dread(c, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, back) < 0 ||
	    memcmp(back, a[10], sizeof(a[0]) * 10))
		return fail("reading c again");
	H5Sclose(ms);
	H5Sclose(fs);
	H5Sclose(sp);
	H5Pclose(dcpl);
	if (H5Dclose(c) < 0 || H5Fclose(f) < 0)
		return fail("H5Fclose");
	return 0;
}
