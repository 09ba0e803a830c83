/* SPDX-License-Identifier: MIT */
/* The shim's own memory, mapped straight from the kernel: the shim never calls malloc, so its
 * tables are never counted and never interfere with the program's heap. Runs inside hooks. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

void *ct_arena_map(size_t size)
{
	int saved = errno;
	void *p =
	    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	errno = saved;
	return p == MAP_FAILED ? NULL : p;
}

void ct_arena_unmap(void *p, size_t size)
{
	int saved = errno;
	if (p)
		munmap(p, size);
	errno = saved;
}

int ct_arena_grow(void **p, size_t old_bytes, size_t new_bytes)
{
	void *n = ct_arena_map(new_bytes);
	if (!n)
		return -1;
	if (*p) {
		memcpy(n, *p, old_bytes);
		ct_arena_unmap(*p, old_bytes);
	}
	*p = n;
	return 0;
}
