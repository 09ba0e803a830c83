/* SPDX-License-Identifier: MIT */
/* The shim's own memory, mapped straight from the kernel: the shim never calls malloc, so its
 * tables are never counted and never interfere with the program's heap. Runs inside hooks. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "arena.h"

/* Every mapping the shim holds, so the leak scan never takes the shim's tables (full of heap
 * addresses) for the program's memory. Claimed lock-free; an unmapped one is emptied (lo = 0) and
 * claimed again by a later mapping (a program that checks for leaks every minute maps and unmaps
 * the scan's tables each time: appended only, they filled the registry in some thousand checks, and
 * then the scan read its own tables as the program's). The entries live in pages mapped as they
 * fill (64 KiB each), not in the shim's bss: a process under `ulimit -v` pays for what the shim
 * maps, not for room it may never use. */
#define REG_CHUNK_BITS 12
#define REG_CHUNK (1u << REG_CHUNK_BITS)
#define REG_CHUNKS 16
#define REGISTRY (REG_CHUNK * REG_CHUNKS)
#define REG_CLAIMED 1 /* lo of an entry being filled in: empty to readers */

struct reg_entry {
	_Atomic uintptr_t lo, hi;
};
static struct reg_entry *_Atomic reg[REG_CHUNKS];
static _Atomic size_t reg_n; /* entries ever used: the rest are empty */

static void *map_anon(size_t size, int flags)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void remember(void *p, size_t size);

/* Entry i, its chunk mapped (and remembered) on first use; NULL when out of room or memory. */
static struct reg_entry *entry(size_t i)
{
	if (i >= REGISTRY)
		return NULL;
	struct reg_entry *c = atomic_load_explicit(&reg[i >> REG_CHUNK_BITS], memory_order_acquire);
	if (!c) {
		struct reg_entry *fresh = map_anon(REG_CHUNK * sizeof(*fresh), 0), *none = NULL;
		if (!fresh)
			return NULL;
		if (atomic_compare_exchange_strong(&reg[i >> REG_CHUNK_BITS], &none, fresh)) {
			c = fresh;
			remember(fresh, REG_CHUNK * sizeof(*fresh));
		} else { /* another thread mapped it first */
			munmap(fresh, REG_CHUNK * sizeof(*fresh));
			c = none;
		}
	}
	return &c[i & (REG_CHUNK - 1)];
}

/* Entry i when its chunk is mapped, else NULL (never maps). */
static struct reg_entry *existing(size_t i)
{
	struct reg_entry *c = atomic_load_explicit(&reg[i >> REG_CHUNK_BITS], memory_order_acquire);
	return c ? &c[i & (REG_CHUNK - 1)] : NULL;
}

static int claim(struct reg_entry *e)
{
	uintptr_t empty = 0;
	return e && atomic_compare_exchange_strong(&e->lo, &empty, REG_CLAIMED);
}

/* An empty entry, now this thread's (lo = REG_CLAIMED): an emptied one, else one more; NULL when the
 * registry is full. A fresh entry may be claimed by another thread between the count and the
 * claim: then the next one. */
static struct reg_entry *claim_entry(void)
{
	size_t n = atomic_load_explicit(&reg_n, memory_order_acquire);
	for (size_t i = 0; i < n && i < REGISTRY; i++)
		if (claim(existing(i)))
			return existing(i);
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&reg_n, 1, memory_order_acq_rel);
		if (i >= REGISTRY)
			return NULL;
		struct reg_entry *e = entry(i);
		if (claim(e))
			return e;
	}
}

static void remember(void *p, size_t size)
{
	struct reg_entry *e = claim_entry();
	if (!e)
		return; /* not remembered: the scan may read it (no crash, maybe a block kept reachable) */
	/* the kernel maps whole pages: the rest of the last one is the shim's too */
	atomic_store_explicit(&e->hi, ((uintptr_t)p + size + 4095) & ~(uintptr_t)4095, memory_order_relaxed);
	atomic_store_explicit(&e->lo, (uintptr_t)p, memory_order_release);
}

/* Entry i's mapping into *lo, *hi: 1, or 0 when it is empty (or was emptied while read). */
static int read_entry(size_t i, uintptr_t *lo, uintptr_t *hi)
{
	struct reg_entry *e = existing(i);
	if (!e)
		return 0;
	*lo = atomic_load_explicit(&e->lo, memory_order_acquire);
	*hi = atomic_load_explicit(&e->hi, memory_order_acquire);
	return *lo > REG_CLAIMED && atomic_load_explicit(&e->lo, memory_order_acquire) == *lo;
}

static void forget(void *p)
{
	size_t n = atomic_load_explicit(&reg_n, memory_order_acquire);
	for (size_t i = 0; i < n && i < REGISTRY; i++) {
		struct reg_entry *e = existing(i);
		uintptr_t lo = (uintptr_t)p;
		if (e && atomic_compare_exchange_strong(&e->lo, &lo, 0))
			return;
	}
}

static void *map_remembered(size_t size, int flags)
{
	int saved = errno;
	void *p = map_anon(size, flags);
	if (p)
		remember(p, size);
	errno = saved;
	return p;
}

void *ct_arena_map(size_t size)
{
	return map_remembered(size, 0);
}

/* The pages come in one system call: on a VM a page fault costs about 11 us (a loop touching fresh
 * pages), so a table written all over at once (a rehash) would stall the writer for milliseconds,
 * and the program with it once its ring fills. */
void *ct_arena_map_populated(size_t size)
{
	return map_remembered(size, MAP_POPULATE);
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
	uintptr_t lo, hi;
	for (size_t i = 0; i < n && i < REGISTRY; i++)
		if (read_entry(i, &lo, &hi)) {
			fn(lo, hi, arg);
			k++;
		}
	return k;
}

struct overlap {
	uintptr_t lo, hi;
	int found;
};

static void overlaps(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct overlap *o = arg;
	o->found |= lo < o->hi && o->lo < hi;
}

int ct_arena_holds(uintptr_t lo, uintptr_t hi)
{
	struct overlap o = {lo, hi, 0};
	ct_arena_mappings(overlaps, &o);
	return o.found;
}

int ct_arena_grow(void **p, size_t old_size, size_t new_size)
{
	if (!*p) {
		*p = ct_arena_map(new_size);
		return *p ? 0 : -1;
	}
	/* The kernel moves the page tables: nothing is copied, and the pages in use stay in place
	 * instead of faulting in again at a new address. */
	int saved = errno;
	void *n = mremap(*p, old_size, new_size, MREMAP_MAYMOVE);
	if (n == MAP_FAILED) {
		errno = saved;
		return -1;
	}
	forget(*p);
	remember(n, new_size);
	errno = saved;
	*p = n;
	return 0;
}
