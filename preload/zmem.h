/* SPDX-License-Identifier: MIT */
/* zstd's memory for the shim's compressors (the trace's stream in output.c, the lanes' in lanezip.c):
 * from the arena, off the program's heap, and known to the leak scan as the shim's. */
#ifndef CT_PRELOAD_ZMEM_H
#define CT_PRELOAD_ZMEM_H

#include <stddef.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem */
#include <zstd.h>

#include "arena.h"

/* A block keeps its mapping's size in front. */
static inline void *ct_zmem_alloc(void *opaque, size_t size)
{
	(void)opaque;
	size_t *p = ct_arena_map(size + 16);
	if (!p)
		return NULL;
	p[0] = size + 16;
	return (char *)p + 16;
}

static inline void ct_zmem_free(void *opaque, void *address)
{
	(void)opaque;
	if (address) {
		size_t *p = (size_t *)((char *)address - 16);
		ct_arena_unmap(p, p[0]);
	}
}

static inline ZSTD_customMem ct_zmem(void)
{
	return (ZSTD_customMem){ct_zmem_alloc, ct_zmem_free, NULL};
}

#endif
