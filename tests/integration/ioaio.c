// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Moves exact bytes through Linux AIO (libaio, issue 14), each result
 * checked: ioaio N SHMFILE DISKFILE
 *
 * On each file, created (O_CREAT | O_TRUNC), one io_submit and one
 * io_getevents per iocb:
 *
 *   PWRITE N at 0, PWRITEV 2 x N/2 at N, FSYNC, PREAD N at 0, PREADV 2 x N/2 at N
 *
 * then one io_submit of 4 iocbs reaped by one io_getevents:
 *
 *   PWRITE N at 2N, PWRITE N at 3N, PREAD N at 0, PREAD N at N
 *
 * then 4 io_submits of PWRITE N at 4N .. 7N whose events a second thread,
 * already waiting in io_getevents, reaps (a buffered write completes inside
 * io_submit: the reaper may have it before the submitter's io_submit ends);
 *
 * then one that fails: on SHMFILE, PREAD on a second fd opened O_WRONLY,
 * which io_submit refuses with EBADF; on DISKFILE, PREAD of 4096 bytes at
 * offset 1 on a second fd opened O_DIRECT, whose event says EINVAL.
 *
 * Before them, a PWRITE of 100 bytes into a pipe and a PREAD of them, which
 * count nothing (no file system).
 *
 * ioaio --read FILE reads the whole of FILE in one PREAD iocb.
 *
 * Per file: 8 writes of 8N bytes, 4 reads of 4N bytes, 1 fsync, 1 failed read,
 * 2 opens, 1 create, and no read or write system call. Linked statically
 * (like iowork), so that starting it reads nothing. Exits 1 saying what did
 * not move what it should, 77 when the kernel refuses an AIO context or
 * DISKFILE's file system has no O_DIRECT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define BATCH 4

static size_t n;

/* Submits nr iocbs at once, reaps them with one io_getevents, checks each result. */
static int run(io_context_t ctx, const char *what, struct iocb **iocbs, const long *want, int nr)
{
	struct io_event ev[BATCH];
	int ret;

	ret = io_submit(ctx, nr, iocbs);
	if (ret != nr) {
		fprintf(stderr, "ioaio: %s: io_submit: %d, not %d (%s)\n", what, ret, nr,
			strerror(ret < 0 ? -ret : EIO));
		return -1;
	}
	/* No timeout: libaio then always makes the system call (it may reap from the ring otherwise). */
	ret = io_getevents(ctx, nr, nr, ev, NULL);
	if (ret != nr) {
		fprintf(stderr, "ioaio: %s: io_getevents: %d, not %d\n", what, ret, nr);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		int j = 0;

		while (j < nr && ev[i].obj != iocbs[j])
			j++;
		if (j == nr || (long)ev[i].res != want[j]) {
			fprintf(stderr, "ioaio: %s: iocb %d: %ld, not %ld\n", what, j, (long)ev[i].res,
				j < nr ? want[j] : 0);
			return -1;
		}
	}
	return 0;
}

struct reaper {
	io_context_t ctx;
	struct io_event ev[BATCH];
	int got;
};

static void *reap(void *arg)
{
	struct reaper *r = arg;

	r->got = io_getevents(r->ctx, BATCH, BATCH, r->ev, NULL);
	return NULL;
}

static int one(io_context_t ctx, const char *what, struct iocb *cb, long want)
{
	return run(ctx, what, &cb, &want, 1);
}

static int file_io(io_context_t ctx, const char *path, char *buf, int direct)
{
	struct iocb cb[BATCH], *cbs[BATCH];
	struct iovec v[2] = { { buf, n / 2 }, { buf + n / 2, n / 2 } };
	long want[BATCH] = { (long)n, (long)n, (long)n, (long)n };
	int fd, fd2, ret;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	io_prep_pwrite(&cb[0], fd, buf, n, 0);
	if (one(ctx, "pwrite", &cb[0], (long)n))
		return -1;
	io_prep_pwritev(&cb[0], fd, v, 2, (long long)n);
	if (one(ctx, "pwritev", &cb[0], (long)n))
		return -1;
	io_prep_fsync(&cb[0], fd);
	if (one(ctx, "fsync", &cb[0], 0))
		return -1;
	io_prep_pread(&cb[0], fd, buf, n, 0);
	if (one(ctx, "pread", &cb[0], (long)n))
		return -1;
	io_prep_preadv(&cb[0], fd, v, 2, (long long)n);
	if (one(ctx, "preadv", &cb[0], (long)n))
		return -1;

	/* Two buffers: the batch's reads land apart from what its writes send. */
	io_prep_pwrite(&cb[0], fd, buf, n, 2 * (long long)n);
	io_prep_pwrite(&cb[1], fd, buf, n, 3 * (long long)n);
	io_prep_pread(&cb[2], fd, buf + n, n, 0);
	io_prep_pread(&cb[3], fd, buf + 2 * n, n, (long long)n);
	for (int i = 0; i < BATCH; i++)
		cbs[i] = &cb[i];
	if (run(ctx, "batch", cbs, want, BATCH))
		return -1;

	struct reaper r = { .ctx = ctx };
	pthread_t th;

	if (pthread_create(&th, NULL, reap, &r)) {
		fprintf(stderr, "ioaio: pthread_create failed\n");
		return -1;
	}
	for (int i = 0; i < BATCH; i++) {
		io_prep_pwrite(&cb[i], fd, buf, n, (4 + i) * (long long)n);
		cbs[i] = &cb[i];
		ret = io_submit(ctx, 1, &cbs[i]);
		if (ret != 1) {
			fprintf(stderr, "ioaio: reaped by a thread: io_submit %d, not 1\n", ret);
			return -1;
		}
	}
	pthread_join(th, NULL);
	if (r.got != BATCH) {
		fprintf(stderr, "ioaio: reaper thread: io_getevents %d, not %d\n", r.got, BATCH);
		return -1;
	}
	for (int i = 0; i < BATCH; i++)
		if ((long)r.ev[i].res != (long)n) {
			fprintf(stderr, "ioaio: reaped by a thread: %ld, not %zu\n", (long)r.ev[i].res, n);
			return -1;
		}

	if (direct) {
		/* Misaligned direct I/O: accepted, then completed with EINVAL. */
		fd2 = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd2 < 0 && errno == EINVAL) {
			fprintf(stderr, "ioaio: %s: its file system has no O_DIRECT\n", path);
			return 77;
		}
		if (fd2 < 0) {
			perror(path);
			return -1;
		}
		io_prep_pread(&cb[0], fd2, buf, 4096, 1);
		if (one(ctx, "misaligned O_DIRECT pread", &cb[0], -EINVAL))
			return -1;
	} else {
		/* A read on a write-only fd: io_submit refuses it, no event. */
		fd2 = open(path, O_WRONLY | O_CLOEXEC);
		if (fd2 < 0) {
			perror(path);
			return -1;
		}
		io_prep_pread(&cb[0], fd2, buf, n, 0);
		cbs[0] = &cb[0];
		ret = io_submit(ctx, 1, cbs);
		if (ret != -EBADF) {
			fprintf(stderr, "ioaio: pread on O_WRONLY: io_submit %d, not -EBADF\n", ret);
			return -1;
		}
	}
	close(fd2);
	close(fd);
	return 0;
}

/* A pipe is no file-system I/O: its iocbs count nothing. */
static int pipe_io(io_context_t ctx, char *buf)
{
	struct iocb cb;
	int p[2];

	if (pipe(p)) {
		perror("pipe");
		return -1;
	}
	io_prep_pwrite(&cb, p[1], buf, 100, 0);
	if (one(ctx, "pwrite to a pipe", &cb, 100))
		return -1;
	io_prep_pread(&cb, p[0], buf, 100, 0);
	if (one(ctx, "pread from a pipe", &cb, 100))
		return -1;
	close(p[0]);
	close(p[1]);
	return 0;
}

/* ioaio --read FILE: the whole of FILE in one PREAD iocb (the page-cache view's cold read). */
static int read_whole(io_context_t ctx, const char *path)
{
	struct stat st;
	struct iocb cb;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		fprintf(stderr, "ioaio: %s: cannot open it, or it is empty\n", path);
		return -1;
	}
	if (posix_memalign(&buf, 4096, (size_t)st.st_size)) {
		fprintf(stderr, "ioaio: out of memory\n");
		return -1;
	}
	io_prep_pread(&cb, fd, buf, (size_t)st.st_size, 0);
	if (one(ctx, "pread of the whole file", &cb, (long)st.st_size))
		return -1;
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	io_context_t ctx = 0;
	char *buf;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--read")) {
		ret = io_setup(1, &ctx);
		if (ret) {
			fprintf(stderr, "ioaio: io_setup: %s\n", strerror(-ret));
			return 77;
		}
		ret = read_whole(ctx, argv[2]);
		io_destroy(ctx);
		return ret ? 1 : 0;
	}
	if (argc != 4 || (n = strtoul(argv[1], NULL, 10)) < 4096 || n % 4096) {
		fprintf(stderr, "usage: ioaio N SHMFILE DISKFILE (N a multiple of 4096)\n"
				"       ioaio --read FILE\n");
		return 2;
	}
	/* Aligned for O_DIRECT; three N-byte buffers for the batch. */
	if (posix_memalign((void **)&buf, 4096, 3 * n)) {
		fprintf(stderr, "ioaio: out of memory\n");
		return 1;
	}
	memset(buf, 'a', 3 * n);
	ret = io_setup(BATCH, &ctx);
	if (ret) {
		fprintf(stderr, "ioaio: io_setup: %s\n", strerror(-ret));
		return 77;
	}
	ret = pipe_io(ctx, buf);
	if (!ret)
		ret = file_io(ctx, argv[2], buf, 0);
	if (!ret)
		ret = file_io(ctx, argv[3], buf, 1);
	if (ret)
		return ret == 77 ? 77 : 1;
	io_destroy(ctx);
	free(buf);
	return 0;
}
