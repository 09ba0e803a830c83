/* SPDX-License-Identifier: MIT */
/* realloc's edge cases, in a fixed order; no stdio until every allocation is done.
 * Events (valgrind's counting: realloc of a live block = 1 allocation + 1 free):
 *   a = realloc(NULL, 64)        1 alloc                 64
 *   a = realloc(a, 32)  shrink   1 alloc, 1 free         32
 *   a = realloc(a, 40)  grow within the chunk (glibc: in place)  1 alloc, 1 free   40
 *   a = realloc(a, 1 MiB)  grow, moves (mmap)            1 alloc, 1 free   1048576
 *   a = realloc(a, 200000) shrink an mmapped block       1 alloc, 1 free   200000
 *   realloc(a, 0) -> NULL: frees a                       1 free
 *   z = malloc(0); free(z)        1 alloc, 1 free        0
 *   free(NULL)                    nothing
 *   d = malloc(24); with argument "fail": realloc(d, SIZE_MAX / 2) -> NULL, errno ENOMEM, d intact
 *     (counts nothing; valgrind 3.19 wrongly counts it as 1 alloc + 1 free); free(d)   1 alloc, 1 free  24
 *   leak_realloc: realloc(NULL, 77), leaked   1 alloc    77
 * Totals: 8 allocations, 7 frees, 1248813 bytes; leaked 77 bytes in 1 allocation (either mode).
 * Temporary: 7 (either mode). The rule (heaptrack's): an allocation is temporary when the same
 * thread's very next allocation event frees it; realloc of a live block is two events, the free of
 * the old block, then the allocation of the new one. The thread's events, in order:
 *   alloc 64 | free 64, alloc 32 | free 32, alloc 40 | free 40, alloc 1 MiB | free 1 MiB,
 *   alloc 200000 | free 200000 | alloc 0, free 0 | alloc 24, free 24 | alloc 77
 * Each realloc frees the block made by the event right before it: 64, 32, 40, 1 MiB and 200000 are
 * temporary (5), so are the 0 and the 24 (7); the 77 is never freed. A failed realloc allocates
 * and frees nothing, so it is no event: the 24 stays temporary in the "fail" mode too.
 * Prints "moved: shrink=N grow=N big=N" (1 = the block moved), exit 0, or 1 if a call misbehaved. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int bad;
static volatile size_t huge = SIZE_MAX / 2;

static void expect(int ok)
{
	if (!ok)
		bad = 1;
}

NOINLINE static void leak_realloc(void)
{
	expect(realloc(NULL, 77) != NULL);
}

/* realloc(p, n) that also records whether the block moved. */
static char *resize(char *p, size_t n, int *moved)
{
	char *q = realloc(p, n);
	expect(q != NULL);
	*moved = q != p;
	return q;
}

static void failed_realloc(void)
{
	char *d = malloc(24);
	expect(d != NULL);
	if (!d)
		return;
	memset(d, 7, 24);
	errno = 0;
	expect(realloc(d, huge) == NULL && errno == ENOMEM);
	expect(d[0] == 7 && d[23] == 7);
	free(d);
}

static void put_digit(char *s, int v)
{
	*s = (char)('0' + v);
}

int main(int argc, char **argv)
{
	int shrink, grow, big, ignored;
	char *a = realloc(NULL, 64);
	expect(a != NULL);
	a = resize(a, 32, &shrink);
	a = resize(a, 40, &grow);
	a = resize(a, 1 << 20, &big);
	a = resize(a, 200000, &ignored);
	expect(realloc(a, 0) == NULL);
	char *z = malloc(0);
	expect(z != NULL);
	free(z);
	free(NULL);
	if (argc > 1 && strcmp(argv[1], "fail") == 0) {
		failed_realloc();
	} else {
		char *d = malloc(24);
		expect(d != NULL);
		free(d);
	}
	leak_realloc();
	char msg[] = "moved: shrink=0 grow=0 big=0\n";
	put_digit(msg + 14, shrink);
	put_digit(msg + 21, grow);
	put_digit(msg + 27, big);
	expect(write(1, msg, sizeof(msg) - 1) == (ssize_t)(sizeof(msg) - 1));
	return bad;
}
