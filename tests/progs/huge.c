/* SPDX-License-Identifier: MIT */
/* Sizes and alignments at the edges: requests that must fail (NULL or an error, and the errno glibc
 * sets), zero sizes, alignments from 16 bytes to 1 MiB for posix_memalign, aligned_alloc and memalign,
 * aligned_alloc blocks through realloc and free, reallocarray overflow, malloc_usable_size.
 * One line per call: its result (null / ok / misaligned), errno, whether malloc_usable_size covers
 * the request: the output
 * must be the same with and without ctrack. With argument "vg" the failing realloc is skipped
 * (valgrind 3.19 counts it as 1 allocation + 1 free). The last line, the program's own figures
 * (valgrind's counting: a realloc of a live block is 1 allocation + 1 free), the same either mode.
 * Output gathered in a static buffer and written at the end (write(1), no stdio streams).
 * Exit 0, 1 if a call misbehaved. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024 * 1024)

static char out[16384];
static size_t used;
static unsigned long long allocs, frees, bytes;
static int bad;
/* volatile: gcc neither warns about the sizes nor about using a block a failed resize kept */
static volatile size_t huge = SIZE_MAX / 2, all = SIZE_MAX;
static void *(*volatile resize)(void *, size_t) = realloc;
static void *(*volatile resize_array)(void *, size_t, size_t) = reallocarray;

/* usable: malloc_usable_size covers the request (its exact value depends on the heap's layout,
 * which address randomization changes from run to run) */
static void line(const char *what, const void *p, size_t align, int usable)
{
	int e = errno;
	const char *state = !p ? "null" : (uintptr_t)p % align ? "MISALIGNED" : "ok";
	int n = snprintf(out + used, sizeof out - used, "%s: %s errno=%d usable=%s\n", what, state, e,
	                 usable ? "yes" : "no");
	if (n > 0 && (size_t)n < sizeof out - used)
		used += (size_t)n;
	if (p && (uintptr_t)p % align)
		bad = 1;
}

/* a block that must exist: counted, every byte written, its usable size printed */
static void *got(const char *what, void *p, size_t n, size_t align)
{
	int usable = p && malloc_usable_size(p) >= n;
	line(what, p, align, usable);
	if (!usable) {
		bad = 1;
		return p;
	}
	memset(p, 0x5a, n);
	allocs++;
	bytes += n;
	return p;
}

static void release(void *p)
{
	int e = errno;
	free(p);
	frees++;
	if (errno != e)
		bad = 1; /* free must leave errno alone */
}

/* a request that must fail: NULL (and glibc's errno, printed) */
static void refused(const char *what, void *p)
{
	line(what, p, 1, 0);
	if (p)
		bad = 1;
	errno = 0;
}

static void must_fail(int vg)
{
	errno = 0;
	refused("malloc(SIZE_MAX/2)", malloc(huge));
	refused("malloc(SIZE_MAX)", malloc(all));
	refused("calloc(SIZE_MAX/2, 4) overflow", calloc(huge, 4));
	refused("calloc(1, SIZE_MAX/2)", calloc(1, huge));
	refused("memalign(4096, SIZE_MAX/2)", memalign(4096, huge));
	refused("aligned_alloc(1 MiB, SIZE_MAX/2)", aligned_alloc(MIB, huge));
	refused("valloc(SIZE_MAX/2)", valloc(huge));
	refused("reallocarray(NULL, SIZE_MAX/2, 4) overflow", reallocarray(NULL, huge, 4));
	void *r = NULL;
	int rc = posix_memalign(&r, 64, huge);
	refused(rc == ENOMEM ? "posix_memalign(64, SIZE_MAX/2) = ENOMEM" : "posix_memalign: not ENOMEM", r);
	char *p = got("malloc(24) kept through failed resizes", malloc(24), 24, 1);
	refused("reallocarray(p, SIZE_MAX/2, 4) overflow", resize_array(p, huge, 4));
	if (!vg)
		refused("realloc(p, SIZE_MAX/2)", resize(p, huge));
	if (p && p[23] != 0x5a)
		bad = 1; /* a failed resize leaves the block as it was */
	release(p);
}

static void zero_sizes(void)
{
	void *q = NULL;
	release(got("malloc(0)", malloc(0), 0, 1));
	release(got("calloc(0, 5)", calloc(0, 5), 0, 1));
	release(got("aligned_alloc(64, 0)", aligned_alloc(64, 0), 0, 64));
	int rc = posix_memalign(&q, 64, 0);
	release(got(rc ? "posix_memalign(64, 0) failed" : "posix_memalign(64, 0)", q, 0, 64));
}

static void alignments(void)
{
	char what[80];
	for (size_t a = 16; a <= MIB; a *= 2) {
		void *q = NULL;
		int rc = posix_memalign(&q, a, 1000);
		snprintf(what, sizeof what, "posix_memalign(%zu, 1000) rc=%d", a, rc);
		release(got(what, q, 1000, a));
		snprintf(what, sizeof what, "aligned_alloc(%zu, %zu)", a, a);
		release(got(what, aligned_alloc(a, a), a, a));
		snprintf(what, sizeof what, "memalign(%zu, 24)", a);
		release(got(what, memalign(a, 24), 24, a));
	}
}

/* an aligned_alloc block grown and shrunk by realloc, then freed: the bytes follow it */
static void aligned_then_realloc(size_t align, size_t n)
{
	char what[80];
	snprintf(what, sizeof what, "aligned_alloc(%zu, %zu)", align, n);
	char *p = got(what, aligned_alloc(align, n), n, align);
	if (!p)
		return;
	char *g = realloc(p, 3 * n);
	snprintf(what, sizeof what, "  realloc to %zu", 3 * n);
	if (got(what, g, 3 * n, 1))
		frees++;
	if (!g || g[n - 1] != 0x5a)
		bad = 1;
	char *s = g ? realloc(g, 100) : NULL;
	if (got("  realloc to 100", s, 100, 1))
		frees++;
	release(s);
}

int main(int argc, char **argv)
{
	int vg = argc > 1 && strcmp(argv[1], "vg") == 0;
	must_fail(vg);
	zero_sizes();
	alignments();
	aligned_then_realloc(4096, 4096);
	aligned_then_realloc(MIB, MIB);
	errno = 4321; /* successful calls leave errno alone */
	release(got("malloc(10) errno kept", malloc(10), 10, 1));
	if (errno != 4321)
		bad = 1;
	int n = snprintf(out + used, sizeof out - used, "allocations=%llu frees=%llu bytes=%llu\n", allocs,
	                 frees, bytes);
	if (n > 0 && (size_t)n < sizeof out - used)
		used += (size_t)n;
	if (write(1, out, used) != (ssize_t)used)
		return 1;
	return bad;
}
