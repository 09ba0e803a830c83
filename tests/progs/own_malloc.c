/* SPDX-License-Identifier: MIT */
/* A program with its own allocator, as one that links a static jemalloc or tcmalloc: malloc, free,
 * calloc and realloc defined here over a static arena (and exported, as the linker does for symbols a
 * shared library also defines). It makes 100 allocations of 32 bytes, none of which reaches libc's
 * malloc (nor a preloaded one), frees them, prints "done" and exits 0. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) char arena[1 << 20];
static size_t used;

void *malloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(arena) - used)
		return NULL;
	void *p = arena + used;
	used += n;
	return p;
}

void free(void *p)
{
	(void)p; /* a bump allocator: nothing to give back */
}

void *calloc(size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		return NULL;
	void *p = malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = malloc(n);
	if (p && old) /* blocks only grow in this program's use: copying n bytes stays in the arena */
		memcpy(p, old, n);
	return p;
}

int main(void)
{
	void *v[100];
	for (int i = 0; i < 100; i++)
		v[i] = malloc(32);
	for (int i = 0; i < 100; i++)
		free(v[i]);
	puts("done");
	return 0;
}
