/* SPDX-License-Identifier: MIT */
/* The shim's own memory, mapped straight from the kernel: the shim never calls malloc, so its
 * tables are never counted and never interfere with the program's heap. Runs inside hooks. */
#include <errno.h>
#include <sys/mman.h>

#include "shim.h"

void *ct_arena_map(size_t size)
{
	int saved = errno;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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
