// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The H5Dwrite calls of tests/bench/h5-cost (issue 39), built there with
 * Debian's serial HDF5 (h5cc -shlib: linked to libhdf5_serial.so, the
 * library the daemon probes; HDF5 is a test and benchmark dependency only):
 *
 *   h5-calls N ELEMS FILE  creates FILE with one contiguous dataset "d" of
 *                          ELEMS doubles (its space allocated at the create,
 *                          so that no write pays for it), then N H5Dwrite of
 *                          the whole dataset, timed, then one H5Dread of it
 *                          that checks the last write; prints the mean ns of
 *                          one H5Dwrite
 *   h5-calls hold FILE     opens the library (H5open), then waits until the
 *                          file FILE is gone (a job that keeps the library
 *                          mapped, so its uprobes)
 */
#include <hdf5.h>
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

static int fail(const char *what)
{
	fprintf(stderr, "h5-calls: %s failed\n", what);
	return 1;
}

static int hold(const char *path)
{
	if (H5open() < 0)
		return fail("H5open");
	while (access(path, F_OK) == 0)
		usleep(20000);
	return 0;
}

int main(int argc, char **argv)
{
	hid_t f, space, dcpl, d;
	double *buf, t0, tw;
	hsize_t elems;
	long n;

	if (argc == 3 && argv[1][0] == 'h')
		return hold(argv[2]);
	if (argc != 4 || (n = atol(argv[1])) < 1 || (elems = strtoull(argv[2], NULL, 10)) < 1) {
		fprintf(stderr, "usage: h5-calls N ELEMS FILE | h5-calls hold FILE\n");
		return 2;
	}
	buf = calloc(elems, sizeof(*buf));
	if (!buf)
		return fail("calloc");
	f = H5Fcreate(argv[3], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0)
		return fail("H5Fcreate");
	space = H5Screate_simple(1, &elems, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (space < 0 || dcpl < 0 || H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0)
		return fail("the dataset's space");
	d = H5Dcreate2(f, "d", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (d < 0)
		return fail("H5Dcreate2");
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		buf[0] = (double)i;
		if (H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
			return fail("H5Dwrite");
	}
	tw = now_ns() - t0;
	buf[0] = -1;
	if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ||
	    buf[0] != (double)(n - 1))
		return fail("reading the last write back");
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(space);
	if (H5Fclose(f) < 0)
		return fail("H5Fclose");
	free(buf);
	printf("%.1f\n", tw / n);
	return 0;
}
