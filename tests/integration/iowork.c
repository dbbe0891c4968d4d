// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iowork: a workload whose every file-system operation is known, for the
 * integration tests. Linked statically so that starting it opens and reads
 * nothing (no dynamic loader): the counts a test expects are exactly the
 * operations listed on its command line.
 *
 *   iowork OP ARGS [, OP ARGS]...
 *
 *   write  PATH SIZE COUNT   create/truncate PATH, COUNT write()s of SIZE bytes
 *   pwrite PATH SIZE COUNT   create PATH, COUNT pwrite()s of SIZE bytes
 *   writev PATH SIZE COUNT   create/truncate PATH, COUNT writev()s of 2 x SIZE/2 bytes
 *   read   PATH SIZE COUNT   COUNT read()s of SIZE bytes (each must be whole)
 *   pread  PATH SIZE COUNT STRIDE  COUNT pread()s of SIZE bytes at offsets 0, STRIDE,
 *                            2 x STRIDE, ... (each must be whole)
 *   copyrw SRC DST SIZE COUNT    COUNT times: read() SIZE bytes of SRC, write() them to DST
 *                            (created, truncated): two files in turn, call by call
 *   create DIR N             open(O_CREAT|O_EXCL) + close DIR/f0 .. DIR/f<N-1>
 *   mkdir  DIR N             DIR/d0 .. DIR/d<N-1>
 *   unlink DIR N             DIR/f0 ..
 *   rmdir  DIR N             DIR/d0 ..
 *   rename DIR N             DIR/f<i> -> DIR/g<i>
 *   stat   PATH N            N stat()s
 *   stats  DIR N             stat() DIR/f0 .. DIR/f<N-1> (glibc: newfstatat(AT_FDCWD, ...))
 *   statx  DIR N             statx(AT_FDCWD, DIR/f<i>, ...) of each
 *   fstatat DIR N            open DIR (O_DIRECTORY), fstatat(dirfd, "f<i>") of each, close:
 *                            one open and N stats
 *   fstat  DIR N             open DIR/f<i>, newfstatat(fd, "", AT_EMPTY_PATH) (glibc 2.33's
 *                            fstat) and statx(fd, "", AT_EMPTY_PATH), close: N opens, 2N stats
 *   list   DIR N             open DIR (O_DIRECTORY), getdents64 to its end, close: one open;
 *                            it must hold exactly N entries besides . and ..
 *   fsync  PATH N            N fsync()s on PATH opened for writing
 *   seek   PATH N            N lseek()s on PATH (opened for writing, created) to 0 in turn
 *                            SEEK_SET, SEEK_CUR (ftell's), SEEK_END, then one lseek() to
 *                            -1 that must fail with EINVAL: N seeks, N + 1 calls, 1 error
 *   missing DIR N            N opens of DIR/missing<i>, each must fail with ENOENT
 *   nostat DIR N             N stat()s of DIR/missing<i>, each must fail with ENOENT
 *   denied PATH N            N opens of PATH for reading, each must fail with EACCES
 *   rofs   DIR N             N opens of DIR/new<i> with O_CREAT, each must fail with EROFS
 *   exists PATH N            N opens of PATH with O_CREAT|O_EXCL, each must fail with EEXIST
 *   full   PATH SIZE COUNT   open PATH for appending, COUNT write()s of SIZE bytes, each
 *                            must fail with ENOSPC (the file system is full already)
 *   cd     DIR               chdir, so later relative paths start there
 *   sendfile SRC DST SIZE COUNT  COUNT sendfile()s of SIZE bytes from SRC to DST (created,
 *                            truncated); DST "socket": into a socket pair, drained by read()s
 *   splice SRC DST SIZE COUNT    COUNT times: splice() SIZE bytes of SRC into a pipe, then
 *                            splice() them out of the pipe into DST (created, truncated);
 *                            SIZE at most 65536 (a pipe's capacity)
 *   copy   SRC DST SIZE COUNT    COUNT copy_file_range()s of SIZE bytes from SRC to DST
 *                            (created, truncated)
 *   rcopy  SRC DST SIZE COUNT    like copy, with explicit offsets (off_in, off_out), last
 *                            block first: SIZE x (COUNT-1), ..., SIZE, 0; f_pos stays 0
 *   (each of these must move exactly SIZE bytes per call)
 *   xcopy  SRC DST SIZE COUNT    like copy, but each call must fail with EXDEV (SRC and DST
 *                            on file systems of different types)
 *   sleep  SECONDS           nanosleep (decimals allowed)
 *   wait                     block until a byte arrives on standard input
 *   mmapread PATH            map PATH whole (read-only, shared) and touch one byte of
 *                            each page in order; print the sum of those bytes
 *   fadvise PATH ADVICE      posix_fadvise(ADVICE) on PATH whole: normal, random,
 *                            sequential, willneed, dontneed, noreuse
 *   madvise PATH ADVICE      map PATH and madvise(ADVICE) it: normal, random, sequential,
 *                            willneed, dontneed, cold
 *   evict  PATH              fdatasync and posix_fadvise(DONTNEED) PATH: its pages leave
 *                            the page cache (file systems that honour it: ext4, xfs, ...)
 *   tick PATH SIZE COUNT     like write, and print "<start_ns> <end_ns>" (CLOCK_MONOTONIC)
 *                            around each write on standard output
 *   life PATH SIZE           create PATH (O_EXCL), write SIZE bytes in one write(), close
 *                            and unlink it
 *   lives DIR N              life DIR/life1 1000, ..., life DIR/lifeN N x 1000 in turn (a
 *                            freed inode number goes to the next file: issue 36)
 *   paio PATH SIZE           POSIX AIO beside plain calls, each SIZE bytes: pwrite at 0
 *                            and SIZE, aio_write at 2 x SIZE (glibc's thread does it),
 *                            pwrite at 3 x SIZE; then pread at 0 and SIZE, aio_read at
 *                            2 x SIZE, pread at 4 x SIZE (the file made 5 x SIZE long by
 *                            ftruncate between them; issue 38)
 *
 * Standard input and output must be pipes or terminals, not files, so that
 * they do not count as file-system I/O. Exit 0 when every operation did what
 * was asked, 1 otherwise (with a message).
 */
#define _GNU_SOURCE /* splice, copy_file_range */
#include <aio.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static char *buf;
static size_t bufsz;

static int fail(const char *what, const char *path)
{
	dprintf(2, "iowork: %s %s: %s\n", what, path, strerror(errno));
	return -1;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end) {
		dprintf(2, "iowork: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

static void need_buf(size_t n)
{
	if (n <= bufsz)
		return;
	free(buf);
	buf = malloc(n);
	if (!buf) {
		dprintf(2, "iowork: out of memory\n");
		exit(1);
	}
	memset(buf, 'x', n);
	bufsz = n;
}

static unsigned long long mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int op_write(const char *path, size_t size, unsigned long count, int mode)
{
	int flags = O_WRONLY | O_CREAT | (mode == 1 ? 0 : O_TRUNC);
	int fd = open(path, flags, 0644);

	if (fd < 0)
		return fail("open", path);
	need_buf(size);
	for (unsigned long i = 0; i < count; i++) {
		ssize_t n;
		unsigned long long t0 = 0;

		if (mode == 3)
			t0 = mono();
		if (mode == 1) {
			n = pwrite(fd, buf, size, (off_t)(i * size));
		} else if (mode == 2) {
			struct iovec iov[2] = { { buf, size / 2 }, { buf, size - size / 2 } };

			n = writev(fd, iov, 2);
		} else {
			n = write(fd, buf, size);
		}
		if (n != (ssize_t)size) {
			close(fd);
			return fail("short write to", path);
		}
		if (mode == 3)
			dprintf(1, "%llu %llu\n", t0, mono());
	}
	return close(fd) ? fail("close", path) : 0;
}

static int op_read(const char *path, size_t size, unsigned long count)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return fail("open", path);
	need_buf(size);
	for (unsigned long i = 0; i < count; i++) {
		if (read(fd, buf, size) != (ssize_t)size) {
			close(fd);
			return fail("short read from", path);
		}
	}
	return close(fd) ? fail("close", path) : 0;
}

static int op_pread(const char *path, size_t size, unsigned long count, unsigned long stride)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return fail("open", path);
	need_buf(size);
	for (unsigned long i = 0; i < count; i++) {
		if (pread(fd, buf, size, (off_t)(i * stride)) != (ssize_t)size) {
			close(fd);
			return fail("short pread from", path);
		}
	}
	return close(fd) ? fail("close", path) : 0;
}

static int op_copyrw(const char *src, const char *dst, size_t size, unsigned long count)
{
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ret = 0;

	if (in < 0 || out < 0)
		ret = fail("open", in < 0 ? src : dst);
	need_buf(size);
	for (unsigned long i = 0; i < count && !ret; i++)
		if (read(in, buf, size) != (ssize_t)size || write(out, buf, size) != (ssize_t)size)
			ret = fail("short copy to", dst);
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && !ret)
		ret = fail("close", dst);
	return ret;
}

/*
 * sendfile, splice, copy_file_range: COUNT calls (two per round for splice,
 * file -> pipe -> file), each of which must move exactly SIZE bytes.
 */
static int op_pair(const char *op, const char *src, const char *dst, size_t size,
		   unsigned long count)
{
	int in, out, p[2] = { -1, -1 }, ret = -1;
	bool sock = !strcmp(op, "sendfile") && !strcmp(dst, "socket");

	in = open(src, O_RDONLY);
	if (in < 0)
		return fail("open", src);
	if (sock)
		out = socketpair(AF_UNIX, SOCK_STREAM, 0, p) ? -1 : p[0];
	else
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return fail("open", dst);
	}
	if (!strcmp(op, "splice") && pipe(p)) {
		fail("pipe for", dst);
		goto out;
	}
	need_buf(size);
	for (unsigned long i = 0; i < count; i++) {
		ssize_t n;

		if (!strcmp(op, "sendfile")) {
			n = sendfile(out, in, NULL, size);
		} else if (!strcmp(op, "rcopy")) {
			loff_t oi = (loff_t)((count - 1 - i) * size), oo = oi;

			n = copy_file_range(in, &oi, out, &oo, size, 0);
		} else if (!strcmp(op, "copy") || !strcmp(op, "xcopy")) {
			n = copy_file_range(in, NULL, out, NULL, size, 0);
			if (op[0] == 'x') {
				if (n >= 0 || errno != EXDEV) {
					dprintf(2, "iowork: xcopy %s: did not fail with EXDEV\n", src);
					goto out;
				}
				continue;
			}
		} else {
			n = splice(in, NULL, p[1], NULL, size, 0);
			if (n == (ssize_t)size)
				n = splice(p[0], NULL, out, NULL, size, 0);
		}
		if (n != (ssize_t)size) {
			fail(n < 0 ? op : "short transfer by", src);
			goto out;
		}
		/* The socket's other end is drained by read()s: not file-system I/O. */
		for (size_t got = 0; sock && got < size; got += (size_t)n) {
			n = read(p[1], buf, size - got);
			if (n <= 0) {
				fail("read from the socket of", src);
				goto out;
			}
		}
	}
	ret = 0;
out:
	if (p[0] >= 0 && p[0] != out)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	close(in);
	if (close(out) && ret == 0)
		ret = fail("close", dst);
	return ret;
}

static int op_names(const char *op, const char *dir, unsigned long n)
{
	char p[4096], q[4096];

	for (unsigned long i = 0; i < n; i++) {
		int fd;

		if (strcmp(op, "create") == 0) {
			snprintf(p, sizeof(p), "%s/f%lu", dir, i);
			fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd < 0 || close(fd))
				return fail("create", p);
		} else if (strcmp(op, "mkdir") == 0) {
			snprintf(p, sizeof(p), "%s/d%lu", dir, i);
			if (mkdir(p, 0755))
				return fail("mkdir", p);
		} else if (strcmp(op, "unlink") == 0) {
			snprintf(p, sizeof(p), "%s/f%lu", dir, i);
			if (unlink(p))
				return fail("unlink", p);
		} else if (strcmp(op, "rmdir") == 0) {
			snprintf(p, sizeof(p), "%s/d%lu", dir, i);
			if (rmdir(p))
				return fail("rmdir", p);
		} else if (strcmp(op, "rename") == 0) {
			snprintf(p, sizeof(p), "%s/f%lu", dir, i);
			snprintf(q, sizeof(q), "%s/g%lu", dir, i);
			if (rename(p, q))
				return fail("rename", p);
		} else if (strcmp(op, "missing") == 0) {
			snprintf(p, sizeof(p), "%s/missing%lu", dir, i);
			fd = open(p, O_RDONLY);
			if (fd >= 0 || errno != ENOENT) {
				errno = fd >= 0 ? EEXIST : errno;
				return fail("open of missing", p);
			}
		}
	}
	return 0;
}

/* stat(), statx() or fstatat() of each of dir/f0 .. dir/f<n-1>, by path (issue 40). */
static int op_stat_names(const char *op, const char *dir, unsigned long n)
{
	int dfd = -1, ret = 0;
	char p[4096];

	if (!strcmp(op, "fstatat") && (dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return fail("open", dir);
	for (unsigned long i = 0; i < n && !ret; i++) {
		struct statx stx;
		struct stat st;

		if (dfd >= 0) {
			snprintf(p, sizeof(p), "f%lu", i);
			ret = fstatat(dfd, p, &st, 0);
		} else {
			snprintf(p, sizeof(p), "%s/f%lu", dir, i);
			ret = !strcmp(op, "statx") ? statx(AT_FDCWD, p, 0, STATX_BASIC_STATS, &stx) :
						     stat(p, &st);
		}
		if (ret)
			ret = fail(op, p);
	}
	if (dfd >= 0 && close(dfd) && !ret)
		ret = fail("close", dir);
	return ret;
}

/*
 * Each of dir/f0 .. dir/f<n-1> opened and stat'ed by its fd with the empty
 * path, as glibc 2.33 to 2.38 make fstat() (issue 40), then by statx().
 */
static int op_fstat_empty(const char *dir, unsigned long n)
{
	char p[4096];

	for (unsigned long i = 0; i < n; i++) {
		struct statx stx;
		struct stat st;
		int fd;

		snprintf(p, sizeof(p), "%s/f%lu", dir, i);
		fd = open(p, O_RDONLY);
		if (fd < 0)
			return fail("open", p);
		if (syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) ||
		    statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx)) {
			close(fd);
			return fail("fstat", p);
		}
		if (close(fd))
			return fail("close", p);
	}
	return 0;
}

/* One open of dir, its entries read to the end with getdents64: n of them besides . and .. */
static int op_list(const char *dir, unsigned long n)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	unsigned long seen = 0;
	char ents[8192] __attribute__((aligned(8)));
	long got;

	if (fd < 0)
		return fail("open", dir);
	while ((got = syscall(SYS_getdents64, fd, ents, sizeof(ents))) > 0) {
		for (long off = 0; off < got;) {
			const struct dirent64 *d = (const struct dirent64 *)(ents + off);

			seen += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
			off += d->d_reclen;
		}
	}
	if (got < 0) {
		close(fd);
		return fail("getdents64", dir);
	}
	if (close(fd))
		return fail("close", dir);
	if (seen != n) {
		dprintf(2, "iowork: list %s: %lu entries, not %lu\n", dir, seen, n);
		return -1;
	}
	return 0;
}

/* n calls of one kind on `path` that must each fail with `want`. */
static int op_failing(const char *op, const char *path, unsigned long n, int want)
{
	char p[4096];
	struct stat st;

	for (unsigned long i = 0; i < n; i++) {
		int ret;

		if (strcmp(op, "nostat") == 0) {
			snprintf(p, sizeof(p), "%s/missing%lu", path, i);
			ret = stat(p, &st);
		} else if (strcmp(op, "rofs") == 0) {
			snprintf(p, sizeof(p), "%s/new%lu", path, i);
			ret = open(p, O_WRONLY | O_CREAT, 0644);
		} else {
			snprintf(p, sizeof(p), "%s", path);
			ret = open(p, strcmp(op, "exists") == 0 ? O_WRONLY | O_CREAT | O_EXCL : O_RDONLY,
				   0644);
		}
		if (ret >= 0 || errno != want) {
			if (ret >= 0 && strcmp(op, "nostat") != 0)
				close(ret);
			errno = ret >= 0 ? 0 : errno;
			dprintf(2, "iowork: %s %s: %s, not %s\n", op, p,
				ret >= 0 ? "succeeded" : strerror(errno), strerror(want));
			return -1;
		}
	}
	return 0;
}

static int op_full(const char *path, size_t size, unsigned long count)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	if (fd < 0)
		return fail("open", path);
	need_buf(size);
	for (unsigned long i = 0; i < count; i++) {
		if (write(fd, buf, size) >= 0 || errno != ENOSPC) {
			close(fd);
			errno = errno == ENOSPC ? 0 : errno;
			return fail("write to a full file system did not fail with ENOSPC:", path);
		}
	}
	return close(fd) ? fail("close", path) : 0;
}

static int op_stat(const char *path, unsigned long n)
{
	struct stat st;

	for (unsigned long i = 0; i < n; i++)
		if (stat(path, &st))
			return fail("stat", path);
	return 0;
}

static int op_fsync(const char *path, unsigned long n)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	if (fd < 0)
		return fail("open", path);
	for (unsigned long i = 0; i < n; i++)
		if (fsync(fd)) {
			close(fd);
			return fail("fsync", path);
		}
	return close(fd) ? fail("close", path) : 0;
}

static int op_seek(const char *path, unsigned long n)
{
	static const int whence[] = { SEEK_SET, SEEK_CUR, SEEK_END };
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	if (fd < 0)
		return fail("open", path);
	for (unsigned long i = 0; i < n; i++)
		if (lseek(fd, 0, whence[i % 3]) < 0) {
			close(fd);
			return fail("lseek", path);
		}
	if (lseek(fd, -1, SEEK_SET) != -1 || errno != EINVAL) {
		close(fd);
		dprintf(2, "iowork: lseek %s to -1 did not fail with EINVAL\n", path);
		return 1;
	}
	return close(fd) ? fail("close", path) : 0;
}

static int op_sleep(const char *s)
{
	double d = strtod(s, NULL);
	struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 0;
}

static int op_wait(void)
{
	char c;
	ssize_t n;

	while ((n = read(0, &c, 1)) < 0 && errno == EINTR)
		;
	return n == 1 ? 0 : fail("wait on", "standard input");
}

static int op_mmapread(const char *path)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned long sum = 0;
	struct stat st;
	char *m;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return fail("open", path);
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return fail("mmap", path);
	for (off_t o = 0; o < st.st_size; o += pg)
		sum += ((volatile unsigned char *)m)[o];
	dprintf(1, "%lu\n", sum);
	munmap(m, (size_t)st.st_size);
	return close(fd) ? fail("close", path) : 0;
}

static int advice_of(const char *name, bool madv)
{
	static const struct {
		const char *name;
		int fadv, madv;
	} a[] = {
		{ "normal", POSIX_FADV_NORMAL, MADV_NORMAL },
		{ "random", POSIX_FADV_RANDOM, MADV_RANDOM },
		{ "sequential", POSIX_FADV_SEQUENTIAL, MADV_SEQUENTIAL },
		{ "willneed", POSIX_FADV_WILLNEED, MADV_WILLNEED },
		{ "dontneed", POSIX_FADV_DONTNEED, MADV_DONTNEED },
		{ "noreuse", POSIX_FADV_NOREUSE, -1 },
		{ "cold", -1, MADV_COLD },
	};

	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		if (!strcmp(name, a[i].name))
			return madv ? a[i].madv : a[i].fadv;
	return -1;
}

/* fadvise, madvise, evict */
static int op_advise(const char *op, const char *path, const char *name)
{
	bool madv = !strcmp(op, "madvise");
	int advice = name ? advice_of(name, madv) : POSIX_FADV_DONTNEED;
	struct stat st;
	int fd = open(path, O_RDONLY), ret;

	if (advice < 0) {
		dprintf(2, "iowork: unknown advice %s\n", name);
		return 1;
	}
	if (fd < 0 || fstat(fd, &st))
		return fail("open", path);
	if (!name && fdatasync(fd))
		return fail("fdatasync", path);
	if (madv) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED)
			return fail("mmap", path);
		ret = madvise(m, (size_t)st.st_size, advice) ? errno : 0;
		munmap(m, (size_t)st.st_size);
	} else {
		ret = posix_fadvise(fd, 0, 0, advice);
	}
	if (ret) {
		errno = ret;
		return fail(op, path);
	}
	return close(fd) ? fail("close", path) : 0;
}

static int op_life(const char *path, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

	if (fd < 0)
		return fail("open", path);
	need_buf(size);
	if (write(fd, buf, size) != (ssize_t)size)
		return fail("write", path);
	if (close(fd))
		return fail("close", path);
	return unlink(path) ? fail("unlink", path) : 0;
}

static int op_lives(const char *dir, unsigned long n)
{
	char path[4096];

	for (unsigned long i = 1; i <= n; i++) {
		snprintf(path, sizeof(path), "%s/life%lu", dir, i);
		if (op_life(path, i * 1000))
			return -1;
	}
	return 0;
}

/* One POSIX AIO request of size bytes at off, waited for, its result whole. */
static int paio_one(int fd, bool rd, size_t size, off_t off, const char *path)
{
	struct aiocb cb = { .aio_fildes = fd, .aio_buf = buf, .aio_nbytes = size, .aio_offset = off };
	const struct aiocb *list[1] = { &cb };
	int ret = rd ? aio_read(&cb) : aio_write(&cb);

	if (ret)
		return fail(rd ? "aio_read" : "aio_write", path);
	while ((ret = aio_error(&cb)) == EINPROGRESS)
		aio_suspend(list, 1, NULL);
	if (ret) {
		errno = ret;
		return fail(rd ? "aio_read" : "aio_write", path);
	}
	if (aio_return(&cb) != (ssize_t)size) {
		errno = EIO;
		return fail("aio_return", path);
	}
	return 0;
}

static int op_paio(const char *path, size_t size)
{
	static const off_t at[2][4] = { { 0, 1, 2, 3 }, { 0, 1, 2, 4 } };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return fail("open", path);
	need_buf(size);
	for (int rd = 0; rd < 2; rd++) {
		for (int k = 0; k < 4; k++) {
			off_t off = at[rd][k] * (off_t)size;
			ssize_t n;

			if (k == 2) {
				if (paio_one(fd, rd, size, off, path))
					return -1;
				continue;
			}
			n = rd ? pread(fd, buf, size, off) : pwrite(fd, buf, size, off);
			if (n != (ssize_t)size)
				return fail(rd ? "pread" : "pwrite", path);
		}
		/* The reads' last one is at 4 x SIZE: the file has it (zeros; no write). */
		if (!rd && ftruncate(fd, 5 * (off_t)size))
			return fail("ftruncate", path);
	}
	return close(fd) ? fail("close", path) : 0;
}

/* Arguments an op takes, not counting its name. */
static int nargs(const char *op)
{
	static const struct {
		const char *name;
		int n;
	} ops[] = {
		{ "write", 3 }, { "pwrite", 3 }, { "writev", 3 }, { "read", 3 }, { "tick", 3 },
		{ "create", 2 }, { "mkdir", 2 }, { "unlink", 2 }, { "rmdir", 2 }, { "rename", 2 },
		{ "missing", 2 }, { "stat", 2 }, { "fsync", 2 }, { "seek", 2 }, { "sleep", 1 }, { "wait", 0 },
		{ "cd", 1 }, { "nostat", 2 }, { "denied", 2 }, { "rofs", 2 }, { "exists", 2 },
		{ "full", 3 }, { "sendfile", 4 }, { "splice", 4 }, { "copy", 4 }, { "rcopy", 4 },
		{ "xcopy", 4 }, { "pread", 4 }, { "copyrw", 4 }, { "mmapread", 1 }, { "fadvise", 2 }, { "madvise", 2 }, { "evict", 1 },
		{ "life", 2 }, { "lives", 2 }, { "paio", 2 }, { "stats", 2 }, { "statx", 2 },
		{ "fstatat", 2 }, { "fstat", 2 }, { "list", 2 },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i].name) == 0)
			return ops[i].n;
	return -1;
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc) {
		const char *op = argv[i];
		int n = nargs(op), ret;
		char **a = argv + i + 1;

		if (n < 0 || i + n >= argc) {
			dprintf(2, "iowork: bad or incomplete operation '%s'\n", op);
			return 2;
		}
		if (!strcmp(op, "write"))
			ret = op_write(a[0], num(a[1]), num(a[2]), 0);
		else if (!strcmp(op, "pwrite"))
			ret = op_write(a[0], num(a[1]), num(a[2]), 1);
		else if (!strcmp(op, "writev"))
			ret = op_write(a[0], num(a[1]), num(a[2]), 2);
		else if (!strcmp(op, "tick"))
			ret = op_write(a[0], num(a[1]), num(a[2]), 3);
		else if (!strcmp(op, "read"))
			ret = op_read(a[0], num(a[1]), num(a[2]));
		else if (!strcmp(op, "pread"))
			ret = op_pread(a[0], num(a[1]), num(a[2]), num(a[3]));
		else if (!strcmp(op, "copyrw"))
			ret = op_copyrw(a[0], a[1], num(a[2]), num(a[3]));
		else if (!strcmp(op, "stat"))
			ret = op_stat(a[0], num(a[1]));
		else if (!strcmp(op, "fsync"))
			ret = op_fsync(a[0], num(a[1]));
		else if (!strcmp(op, "seek"))
			ret = op_seek(a[0], num(a[1]));
		else if (!strcmp(op, "sleep"))
			ret = op_sleep(a[0]);
		else if (!strcmp(op, "wait"))
			ret = op_wait();
		else if (!strcmp(op, "nostat"))
			ret = op_failing(op, a[0], num(a[1]), ENOENT);
		else if (!strcmp(op, "denied"))
			ret = op_failing(op, a[0], num(a[1]), EACCES);
		else if (!strcmp(op, "rofs"))
			ret = op_failing(op, a[0], num(a[1]), EROFS);
		else if (!strcmp(op, "exists"))
			ret = op_failing(op, a[0], num(a[1]), EEXIST);
		else if (!strcmp(op, "full"))
			ret = op_full(a[0], num(a[1]), num(a[2]));
		else if (!strcmp(op, "sendfile") || !strcmp(op, "splice") || !strcmp(op, "copy") ||
			 !strcmp(op, "rcopy") || !strcmp(op, "xcopy"))
			ret = op_pair(op, a[0], a[1], num(a[2]), num(a[3]));
		else if (!strcmp(op, "mmapread"))
			ret = op_mmapread(a[0]);
		else if (!strcmp(op, "fadvise") || !strcmp(op, "madvise"))
			ret = op_advise(op, a[0], a[1]);
		else if (!strcmp(op, "evict"))
			ret = op_advise(op, a[0], NULL);
		else if (!strcmp(op, "life"))
			ret = op_life(a[0], num(a[1]));
		else if (!strcmp(op, "lives"))
			ret = op_lives(a[0], num(a[1]));
		else if (!strcmp(op, "paio"))
			ret = op_paio(a[0], num(a[1]));
		else if (!strcmp(op, "stats") || !strcmp(op, "statx") || !strcmp(op, "fstatat"))
			ret = op_stat_names(op, a[0], num(a[1]));
		else if (!strcmp(op, "fstat"))
			ret = op_fstat_empty(a[0], num(a[1]));
		else if (!strcmp(op, "list"))
			ret = op_list(a[0], num(a[1]));
		else if (!strcmp(op, "cd"))
			ret = chdir(a[0]) ? fail("chdir", a[0]) : 0;
		else
			ret = op_names(op, a[0], num(a[1]));
		if (ret)
			return 1;
		i += 1 + n;
		if (i < argc && strcmp(argv[i], ",") == 0)
			i++;
	}
	return 0;
}
