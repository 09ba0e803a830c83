/* SPDX-License-Identifier: MIT */
/* The shim's own memory, mapped straight from the kernel: the shim never calls malloc, so its
 * tables are never counted and never interfere with the program's heap. Runs inside hooks. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

/* Every mapping the shim holds, so the leak scan never takes the shim's tables (full of heap
 * addresses) for the program's memory. Appended lock-free; an unmapped one is emptied (lo = 0). */
#define REGISTRY (1u << 16)
static _Atomic uintptr_t reg_lo[REGISTRY], reg_hi[REGISTRY];
static _Atomic size_t reg_n;

static void remember(void *p, size_t size)
{
	size_t i = atomic_fetch_add_explicit(&reg_n, 1, memory_order_relaxed);
	if (i >= REGISTRY)
		return; /* not remembered: the scan may read it (no crash, maybe a block kept reachable) */
	/* the kernel maps whole pages: the rest of the last one is the shim's too */
	atomic_store_explicit(&reg_hi[i], ((uintptr_t)p + size + 4095) & ~(uintptr_t)4095,
	                      memory_order_relaxed);
	atomic_store_explicit(&reg_lo[i], (uintptr_t)p, memory_order_release);
}

static void forget(void *p)
{
	size_t n = atomic_load_explicit(&reg_n, memory_order_acquire);
	for (size_t i = 0; i < n && i < REGISTRY; i++)
		if (atomic_load_explicit(&reg_lo[i], memory_order_relaxed) == (uintptr_t)p) {
			atomic_store_explicit(&reg_lo[i], 0, memory_order_relaxed);
			return;
		}
}

void *ct_arena_map(size_t size)
{
	int saved = errno;
	void *p =
	    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	errno = saved;
	if (p == MAP_FAILED)
		return NULL;
	remember(p, size);
	return p;
}

void ct_arena_unmap(void *p, size_t size)
{
	int saved = errno;
	if (p) {
		forget(p);
		munmap(p, size);
	}
	errno = saved;
}

size_t ct_arena_mappings(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	size_t n = atomic_load_explicit(&reg_n, memory_order_acquire), k = 0;
	for (size_t i = 0; i < n && i < REGISTRY; i++) {
		uintptr_t lo = atomic_load_explicit(&reg_lo[i], memory_order_acquire);
		if (lo) {
			fn(lo, atomic_load_explicit(&reg_hi[i], memory_order_relaxed), arg);
			k++;
		}
	}
	return k;
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
