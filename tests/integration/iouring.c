// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Moves exact bytes through io_uring (issue 14), one request at a time,
 * each checked: iouring FILE N
 *
 *   WRITE N at 0, WRITEV 2 x N/2 at N, WRITE_FIXED N at 2N, FSYNC,
 *   READ N at 0, READV 2 x N/2 at N, READ_FIXED N at 2N
 *
 * and, where the kernel has them (6.15), WRITEV_FIXED and READV_FIXED 2 x N/2
 * at 3N, saying "vfixed" on stdout; then closes FILE: 3 writes and 3 reads
 * of 3N bytes each (4 of 4N with vfixed), 1 fsync, 7 io_uring requests (9),
 * one open (O_CREAT) and no read or write system call.
 *
 * iouring --read FILE: the whole of FILE in one READ request, and no read
 * system call (the page-cache view's cold read of a request completed by
 * an io-wq worker).
 *
 * iouring --meta ABS REL: io_uring's metadata requests, in two existing
 * directories (ABS named by absolute paths, REL by paths relative to a
 * directory fd, then to the working directory) and no file-system system
 * call but chdir(REL), which ioacct does not watch:
 *
 *   ABS: OPENAT ABS/f (O_CREAT | O_EXCL), CLOSE it, STATX ABS/f,
 *        MKDIRAT ABS/d, RENAMEAT ABS/f -> ABS/d/g, UNLINKAT ABS/d/g,
 *        UNLINKAT ABS/d (AT_REMOVEDIR), OPENAT2 ABS/missing (ENOENT)
 *   REL: OPENAT2 REL (O_DIRECTORY) as dfd; relative to it: OPENAT f
 *        (O_CREAT | O_EXCL), CLOSE it, STATX f, MKDIRAT d, OPENAT f into
 *        direct descriptor 0, CLOSE direct descriptor 0 (no file: mount 0);
 *        relative to the cwd REL: RENAMEAT f -> d/g, UNLINKAT d/g, UNLINKAT d
 *        (AT_REMOVEDIR), OPENAT missing (ENOENT); CLOSE dfd
 *
 * that is on ABS's mount 2 opens (1 failed, not found), 1 create, 1 stat,
 * mkdir, rename, unlink and rmdir, 8 requests; on REL's 4 opens (1 failed),
 * 1 create, 1 stat, mkdir, rename, unlink and rmdir, 11 requests; 1 request
 * without a file.
 *
 * Exits 1 saying which request did not do what it should.
 */
#define _GNU_SOURCE /* struct statx */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Submits the one prepared request and waits for it: 0 and its result in *res, or -1 (said). */
static int submit(struct io_uring *ring, const char *what, int *res)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_submit(ring);

	if (ret != 1) {
		fprintf(stderr, "iouring: %s: submit: %s\n", what, strerror(ret < 0 ? -ret : EIO));
		return -1;
	}
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret) {
		fprintf(stderr, "iouring: %s: wait: %s\n", what, strerror(-ret));
		return -1;
	}
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

static int run(struct io_uring *ring, const char *what, long want)
{
	int res;

	if (submit(ring, what, &res))
		return -1;
	if (res != want) {
		fprintf(stderr, "iouring: %s: %d, not %ld\n", what, res, want);
		return -1;
	}
	return 0;
}

/* Runs the prepared request, which must return a descriptor (>= 0): *fd. */
static int run_fd(struct io_uring *ring, const char *what, int *fd)
{
	if (submit(ring, what, fd))
		return -1;
	if (*fd < 0) {
		fprintf(stderr, "iouring: %s: %s\n", what, strerror(-*fd));
		return -1;
	}
	return 0;
}

/* READV_FIXED and WRITEV_FIXED (6.15), newer than liburing 2.3's headers. */
#define OP_READV_FIXED 60
#define OP_WRITEV_FIXED 61

static bool vfixed(struct io_uring *ring)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	bool yes = p && p->last_op >= OP_WRITEV_FIXED &&
		   (p->ops[OP_READV_FIXED].flags & IO_URING_OP_SUPPORTED) &&
		   (p->ops[OP_WRITEV_FIXED].flags & IO_URING_OP_SUPPORTED);

	io_uring_free_probe(p);
	return yes;
}

#define CREATE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)

/* ABS's requests, by absolute paths (see the top). */
static int meta_abs(struct io_uring *ring, const char *dir)
{
	char f[4096], d[4096], g[4096], missing[4096];
	struct open_how how = { .flags = O_RDONLY };
	struct statx stx;
	int fd;

	snprintf(f, sizeof(f), "%s/f", dir);
	snprintf(d, sizeof(d), "%s/d", dir);
	snprintf(g, sizeof(g), "%s/d/g", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	io_uring_prep_openat(io_uring_get_sqe(ring), AT_FDCWD, f, CREATE_FLAGS, 0644);
	if (run_fd(ring, "openat (abs, create)", &fd))
		return -1;
	io_uring_prep_close(io_uring_get_sqe(ring), fd);
	if (run(ring, "close (abs)", 0))
		return -1;
	io_uring_prep_statx(io_uring_get_sqe(ring), AT_FDCWD, f, 0, STATX_BASIC_STATS, &stx);
	if (run(ring, "statx (abs)", 0))
		return -1;
	io_uring_prep_mkdirat(io_uring_get_sqe(ring), AT_FDCWD, d, 0755);
	if (run(ring, "mkdirat (abs)", 0))
		return -1;
	io_uring_prep_renameat(io_uring_get_sqe(ring), AT_FDCWD, f, AT_FDCWD, g, 0);
	if (run(ring, "renameat (abs)", 0))
		return -1;
	io_uring_prep_unlinkat(io_uring_get_sqe(ring), AT_FDCWD, g, 0);
	if (run(ring, "unlinkat (abs)", 0))
		return -1;
	io_uring_prep_unlinkat(io_uring_get_sqe(ring), AT_FDCWD, d, AT_REMOVEDIR);
	if (run(ring, "unlinkat AT_REMOVEDIR (abs)", 0))
		return -1;
	io_uring_prep_openat2(io_uring_get_sqe(ring), AT_FDCWD, missing, &how);
	return run(ring, "openat2 (abs, missing)", -ENOENT);
}

/* REL's requests, by paths relative to a directory fd, then to the cwd (see the top). */
static int meta_rel(struct io_uring *ring, const char *dir)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
	struct statx stx;
	int dfd, fd;

	io_uring_prep_openat2(io_uring_get_sqe(ring), AT_FDCWD, dir, &how);
	if (run_fd(ring, "openat2 (rel, the directory)", &dfd))
		return -1;
	io_uring_prep_openat(io_uring_get_sqe(ring), dfd, "f", CREATE_FLAGS, 0644);
	if (run_fd(ring, "openat (rel, create)", &fd))
		return -1;
	io_uring_prep_close(io_uring_get_sqe(ring), fd);
	if (run(ring, "close (rel)", 0))
		return -1;
	io_uring_prep_statx(io_uring_get_sqe(ring), dfd, "f", 0, STATX_BASIC_STATS, &stx);
	if (run(ring, "statx (rel)", 0))
		return -1;
	io_uring_prep_mkdirat(io_uring_get_sqe(ring), dfd, "d", 0755);
	if (run(ring, "mkdirat (rel)", 0))
		return -1;
	io_uring_prep_openat_direct(io_uring_get_sqe(ring), dfd, "f", O_RDONLY, 0, 0);
	if (run(ring, "openat (rel, direct descriptor)", 0))
		return -1;
	io_uring_prep_close_direct(io_uring_get_sqe(ring), 0);
	if (run(ring, "close (direct descriptor)", 0))
		return -1;
	if (chdir(dir)) {
		perror(dir);
		return -1;
	}
	io_uring_prep_renameat(io_uring_get_sqe(ring), AT_FDCWD, "f", AT_FDCWD, "d/g", 0);
	if (run(ring, "renameat (rel)", 0))
		return -1;
	io_uring_prep_unlinkat(io_uring_get_sqe(ring), AT_FDCWD, "d/g", 0);
	if (run(ring, "unlinkat (rel)", 0))
		return -1;
	io_uring_prep_unlinkat(io_uring_get_sqe(ring), AT_FDCWD, "d", AT_REMOVEDIR);
	if (run(ring, "unlinkat AT_REMOVEDIR (rel)", 0))
		return -1;
	io_uring_prep_openat(io_uring_get_sqe(ring), AT_FDCWD, "missing", O_RDONLY, 0);
	if (run(ring, "openat (rel, missing)", -ENOENT))
		return -1;
	io_uring_prep_close(io_uring_get_sqe(ring), dfd);
	return run(ring, "close (rel, the directory)", 0);
}

static int meta(const char *abs, const char *rel)
{
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret) {
		fprintf(stderr, "iouring: io_uring_queue_init: %s\n", strerror(-ret));
		return 77;
	}
	ret = io_uring_register_files_sparse(&ring, 1);
	if (ret) {
		fprintf(stderr, "iouring: io_uring_register_files_sparse: %s\n", strerror(-ret));
		return 1;
	}
	ret = meta_abs(&ring, abs) || meta_rel(&ring, rel);
	io_uring_queue_exit(&ring);
	return ret ? 1 : 0;
}

/* iouring --read FILE */
static int read_whole(const char *path)
{
	struct io_uring ring;
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0 || !(buf = malloc((size_t)st.st_size))) {
		fprintf(stderr, "iouring: %s: cannot open it, it is empty, or no memory\n", path);
		return 1;
	}
	ret = io_uring_queue_init(2, &ring, 0);
	if (ret) {
		fprintf(stderr, "iouring: io_uring_queue_init: %s\n", strerror(-ret));
		return 77;
	}
	io_uring_prep_read(io_uring_get_sqe(&ring), fd, buf, (unsigned)st.st_size, 0);
	if (run(&ring, "read of the whole file", (long)st.st_size))
		return 1;
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct iovec fixed, v[2];
	size_t n;
	char *buf;
	int fd, ret;

	if (argc == 4 && !strcmp(argv[1], "--meta"))
		return meta(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "--read"))
		return read_whole(argv[2]);
	if (argc != 3 || (n = strtoul(argv[2], NULL, 10)) < 2 || n % 2) {
		fprintf(stderr, "usage: iouring FILE N (N even) | iouring --meta ABS_DIR REL_DIR | iouring --read FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	buf = malloc(n);
	if (fd < 0 || !buf) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 'u', n);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret) {
		fprintf(stderr, "iouring: io_uring_queue_init: %s\n", strerror(-ret));
		return 77;
	}
	fixed = (struct iovec){ buf, n };
	ret = io_uring_register_buffers(&ring, &fixed, 1);
	if (ret) {
		fprintf(stderr, "iouring: io_uring_register_buffers: %s\n", strerror(-ret));
		return 1;
	}
	v[0] = (struct iovec){ buf, n / 2 };
	v[1] = (struct iovec){ buf + n / 2, n / 2 };

	io_uring_prep_write(io_uring_get_sqe(&ring), fd, buf, (unsigned)n, 0);
	if (run(&ring, "write", (long)n))
		return 1;
	io_uring_prep_writev(io_uring_get_sqe(&ring), fd, v, 2, n);
	if (run(&ring, "writev", (long)n))
		return 1;
	io_uring_prep_write_fixed(io_uring_get_sqe(&ring), fd, buf, (unsigned)n, 2 * n, 0);
	if (run(&ring, "write_fixed", (long)n))
		return 1;
	io_uring_prep_fsync(io_uring_get_sqe(&ring), fd, 0);
	if (run(&ring, "fsync", 0))
		return 1;
	io_uring_prep_read(io_uring_get_sqe(&ring), fd, buf, (unsigned)n, 0);
	if (run(&ring, "read", (long)n))
		return 1;
	io_uring_prep_readv(io_uring_get_sqe(&ring), fd, v, 2, n);
	if (run(&ring, "readv", (long)n))
		return 1;
	io_uring_prep_read_fixed(io_uring_get_sqe(&ring), fd, buf, (unsigned)n, 2 * n, 0);
	if (run(&ring, "read_fixed", (long)n))
		return 1;
	if (vfixed(&ring)) {
		/* Two vectors inside the registered buffer 0 (buf_index 0). */
		io_uring_prep_rw(OP_WRITEV_FIXED, io_uring_get_sqe(&ring), fd, v, 2, 3 * n);
		if (run(&ring, "writev_fixed", (long)n))
			return 1;
		io_uring_prep_rw(OP_READV_FIXED, io_uring_get_sqe(&ring), fd, v, 2, 3 * n);
		if (run(&ring, "readv_fixed", (long)n))
			return 1;
		printf("vfixed\n");
	}
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return 0;
}
