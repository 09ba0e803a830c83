/* SPDX-License-Identifier: MIT */
/* Calls every allocation function ctrack hooks, with fixed sizes, and leaks a known set.
 * Each leaking call sits in its own noinline function (its frame 0). No stdio: nothing else allocates.
 *
 * Leaked (6 allocations, 5020 bytes), by function:
 *   leak_malloc          malloc(100)                               100
 *   leak_calloc          calloc(10, 20)                            200
 *   leak_realloc         realloc(NULL, 300) then realloc(p, 400)   400 (the 300 is freed by realloc)
 *   leak_posix_memalign  posix_memalign(64, 128)                   128
 *   leak_memalign        memalign(32, 96)                          96
 *   leak_valloc          valloc(4096)                              4096
 * Freed: reallocarray(NULL, 5, 16) = 80 then reallocarray(p, 10, 16) = 160; aligned_alloc(256, 512);
 *   malloc(50).
 * Totals: 11 allocations, 5 frees, 6122 bytes allocated.
 * With argument "pvalloc" also pvalloc(8192), freed (valgrind 3.19 aborts on pvalloc):
 *   12 allocations, 6 frees, 14314 bytes.
 *
 * Every block any entry point returns is checked (got()): at least the requested size usable
 * (malloc_usable_size), every requested byte written (a memset: a short block corrupts the heap),
 * aligned as asked (malloc, calloc, realloc, reallocarray: _Alignof(max_align_t); valloc, pvalloc:
 * the page size; pvalloc's size rounded up to whole pages); calloc's block zeroed, realloc's keeps
 * the old bytes. A call that misbehaves names itself on stderr (write(2), no stdio) and the exit
 * status is 1; 0 when every call behaved. */
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int bad;

/* Names a call that misbehaved on stderr; the exit status says it too. */
static void complain(const char *what)
{
	char line[128] = "hooks: bad block from ";
	size_t n = strlen(line);
	for (; *what && n < sizeof(line) - 1; what++)
		line[n++] = *what;
	line[n++] = '\n';
	ssize_t written = write(2, line, n);
	(void)written;
	bad = 1;
}

static void expect(int ok, const char *what)
{
	if (!ok)
		complain(what);
}

/* The checks every returned block passes: p is not NULL, is aligned to align, has at least n usable
 * bytes, and every one of the n bytes takes a write (memset to fill). Returns p. */
static void *got(void *p, size_t n, size_t align, int fill, const char *what)
{
	if (!p || (uintptr_t)p % align != 0 || malloc_usable_size(p) < n) {
		complain(what);
		return p;
	}
	memset(p, fill, n);
	return p;
}

/* 1 when the n bytes at p all equal v. */
static int all(const void *p, size_t n, int v)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		if (c[i] != (unsigned char)v)
			return 0;
	return 1;
}

#define FUNDAMENTAL _Alignof(max_align_t)

NOINLINE static void leak_malloc(void)
{
	got(malloc(100), 100, FUNDAMENTAL, 1, "malloc(100)");
}

NOINLINE static void leak_calloc(void)
{
	unsigned char *p = calloc(10, 20);
	expect(p && all(p, 200, 0), "calloc(10, 20): not zeroed");
	got(p, 200, FUNDAMENTAL, 2, "calloc(10, 20)");
}

NOINLINE static void leak_realloc(void)
{
	char *p = got(realloc(NULL, 300), 300, FUNDAMENTAL, 3, "realloc(NULL, 300)");
	p = realloc(p, 400);
	expect(p && all(p, 300, 3), "realloc(p, 400): old bytes lost");
	got(p, 400, FUNDAMENTAL, 4, "realloc(p, 400)");
}

NOINLINE static void leak_posix_memalign(void)
{
	void *p = NULL;
	expect(posix_memalign(&p, 64, 128) == 0, "posix_memalign(64, 128): failed");
	got(p, 128, 64, 5, "posix_memalign(64, 128)");
}

NOINLINE static void leak_memalign(void)
{
	got(memalign(32, 96), 96, 32, 6, "memalign(32, 96)");
}

NOINLINE static void leak_valloc(void)
{
	got(valloc(4096), 4096, (size_t)sysconf(_SC_PAGESIZE), 7, "valloc(4096)");
}

static void freed_ones(int with_pvalloc)
{
	char *p = got(reallocarray(NULL, 5, 16), 80, FUNDAMENTAL, 8, "reallocarray(NULL, 5, 16)");
	p = reallocarray(p, 10, 16);
	expect(p && all(p, 80, 8), "reallocarray(p, 10, 16): old bytes lost");
	free(got(p, 160, FUNDAMENTAL, 9, "reallocarray(p, 10, 16)"));
	free(got(aligned_alloc(256, 512), 512, 256, 10, "aligned_alloc(256, 512)"));
	free(got(malloc(50), 50, FUNDAMENTAL, 11, "malloc(50)"));
	if (with_pvalloc) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		free(got(pvalloc(8192), (8192 + page - 1) / page * page, page, 12, "pvalloc(8192)"));
	}
}

int main(int argc, char **argv)
{
	leak_malloc();
	leak_calloc();
	leak_realloc();
	leak_posix_memalign();
	leak_memalign();
	leak_valloc();
	freed_ones(argc > 1 && strcmp(argv[1], "pvalloc") == 0);
	return bad;
}
