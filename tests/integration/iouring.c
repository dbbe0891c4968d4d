// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Moves exact bytes through io_uring (issue 14), one request at a time,
 * each checked: iouring FILE N
 *
 *   WRITE N at 0, WRITEV 2 x N/2 at N, WRITE_FIXED N at 2N, FSYNC,
 *   READ N at 0, READV 2 x N/2 at N, READ_FIXED N at 2N
 *
 * then closes FILE: 3 writes and 3 reads of 3N bytes each, 1 fsync, 7
 * io_uring requests, one open (O_CREAT) and no read or write system call.
 * Exits 1 saying which request did not move what it should.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int run(struct io_uring *ring, const char *what, long want)
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
	if (cqe->res != want) {
		fprintf(stderr, "iouring: %s: %d, not %ld\n", what, cqe->res, want);
		return -1;
	}
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct iovec fixed, v[2];
	size_t n;
	char *buf;
	int fd, ret;

	if (argc != 3 || (n = strtoul(argv[2], NULL, 10)) < 2 || n % 2) {
		fprintf(stderr, "usage: iouring FILE N (N even)\n");
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
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return 0;
}
