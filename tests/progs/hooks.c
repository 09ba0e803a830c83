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
 *   malloc(50) (malloc_usable_size checked on it).
 * Totals: 11 allocations, 5 frees, 6122 bytes allocated.
 * With argument "pvalloc" also pvalloc(8192), freed (valgrind 3.19 aborts on pvalloc):
 *   12 allocations, 6 frees, 14314 bytes. Exit status: 0, or 1 when a call misbehaves. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static int bad;

static void expect(int ok)
{
	if (!ok)
		bad = 1;
}

static int aligned(const void *p, size_t align)
{
	return p && (uintptr_t)p % align == 0;
}

NOINLINE static void leak_malloc(void)
{
	expect(malloc(100) != NULL);
}

NOINLINE static void leak_calloc(void)
{
	unsigned char *p = calloc(10, 20);
	expect(p && p[0] == 0 && p[199] == 0);
}

NOINLINE static void leak_realloc(void)
{
	char *p = realloc(NULL, 300);
	expect(p != NULL);
	p = realloc(p, 400);
	expect(p != NULL);
}

NOINLINE static void leak_posix_memalign(void)
{
	void *p = NULL;
	expect(posix_memalign(&p, 64, 128) == 0 && aligned(p, 64));
}

NOINLINE static void leak_memalign(void)
{
	expect(aligned(memalign(32, 96), 32));
}

NOINLINE static void leak_valloc(void)
{
	expect(aligned(valloc(4096), 4096));
}

static void freed_ones(int with_pvalloc)
{
	char *p = reallocarray(NULL, 5, 16);
	expect(p != NULL);
	p = reallocarray(p, 10, 16);
	expect(p != NULL);
	free(p);
	p = aligned_alloc(256, 512);
	expect(aligned(p, 256));
	free(p);
	p = malloc(50);
	expect(p && malloc_usable_size(p) >= 50);
	if (p)
		memset(p, 1, malloc_usable_size(p));
	free(p);
	if (with_pvalloc) {
		p = pvalloc(8192);
		expect(aligned(p, 4096));
		free(p);
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
