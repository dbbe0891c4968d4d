// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iommap: reads a whole file through a mapping, every page touched exactly
 * once, for the exact mmap_read_bytes test (35-mmap-exact.sh, issue 29).
 * Linked statically, so that starting it maps no file but its own binary.
 *
 *   iommap FILE seq|rand shared|private
 *
 * Maps FILE whole (MAP_SHARED or MAP_PRIVATE, read-only), reads one byte of
 * each of its pages, in file order or in a shuffled order (the same every
 * run), then unmaps it. Each page is touched once, so each is mapped into
 * the process once, whatever fault-around or a huge page maps with it: the
 * bytes mapped are the file's size rounded up to pages. Prints the pages
 * touched. Exit 0 when every call did what was asked, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *path)
{
	dprintf(2, "iommap: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

/* xorshift64: a fixed shuffle, without libc's random state. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile const unsigned char *p;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, sum = 0;
	size_t npages, *order;
	struct stat st;
	int fd, flags;

	if (argc != 4 || (strcmp(argv[2], "seq") && strcmp(argv[2], "rand")) ||
	    (strcmp(argv[3], "shared") && strcmp(argv[3], "private"))) {
		dprintf(2, "usage: iommap FILE seq|rand shared|private\n");
		return 2;
	}
	flags = !strcmp(argv[3], "shared") ? MAP_SHARED : MAP_PRIVATE;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return fail("open", argv[1]);
	if (fstat(fd, &st))
		return fail("fstat", argv[1]);
	if (st.st_size <= 0) {
		dprintf(2, "iommap: %s is empty\n", argv[1]);
		return 1;
	}
	npages = ((size_t)st.st_size + (size_t)pg - 1) / (size_t)pg;
	order = malloc(npages * sizeof(*order));
	if (!order)
		return fail("malloc for", argv[1]);
	for (size_t i = 0; i < npages; i++)
		order[i] = i;
	if (!strcmp(argv[2], "rand"))
		for (size_t i = npages - 1; i > 0; i--) {
			size_t j = next(&seed) % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, flags, fd, 0);
	if (p == MAP_FAILED)
		return fail("mmap", argv[1]);
	for (size_t i = 0; i < npages; i++)
		sum += p[order[i] * (size_t)pg];
	if (munmap((void *)p, (size_t)st.st_size))
		return fail("munmap", argv[1]);
	close(fd);
	printf("%zu pages (sum %llu)\n", npages, (unsigned long long)sum);
	return 0;
}
