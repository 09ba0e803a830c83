/* SPDX-License-Identifier: MIT */
/* Per-thread event rings: the only thing the hot path writes to, so threads never share a cache
 * line while allocating. One producer (the thread), one consumer (the writer), and nothing here
 * knows who consumes: waiting and waking are the caller's (tracker.c). Runs inside hooks. */
#include <cpuid.h>
#include <stdatomic.h>

#include "shim.h"

static _Atomic(struct ct_ring *) all_rings;

struct ct_ring *ct_ring_list(void)
{
	return atomic_load_explicit(&all_rings, memory_order_acquire);
}

/* A dead ring is reused once the consumer has emptied it and marked it free. */
static struct ct_ring *recycle(void)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		int expected = CT_RING_FREE;
		if (atomic_compare_exchange_strong(&r->state, &expected, CT_RING_CLAIMED))
			return r;
	}
	return NULL;
}

struct ct_ring *ct_ring_acquire(pid_t tid)
{
	struct ct_ring *r = recycle();
	if (!r) {
		r = ct_arena_map(sizeof(*r));
		if (!r)
			return NULL;
		r->next = atomic_load_explicit(&all_rings, memory_order_relaxed);
		while (!atomic_compare_exchange_weak(&all_rings, &r->next, r))
			;
	}
	unsigned a, b, c, d;
	r->prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 8)); /* PRFCHW */
	/* The consumer has reset its own state for the ring before marking it free. */
	r->tid = tid;
	r->cached_tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	atomic_store_explicit(&r->inflight, NULL, memory_order_relaxed); /* a thread that died waiting */
	atomic_store_explicit(&r->state, CT_RING_ACTIVE, memory_order_release);
	return r;
}

void ct_ring_release(struct ct_ring *r)
{
	atomic_store_explicit(&r->state, CT_RING_DEAD, memory_order_release);
}

void ct_ring_forget_all(void)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
		atomic_store_explicit(&r->tail, h, memory_order_relaxed);
		r->cached_tail = h;
		if (atomic_load(&r->state) != CT_RING_FREE)
			atomic_store(&r->state, CT_RING_DEAD);
	}
}

int ct_ring_fits(struct ct_ring *r, uint64_t h, unsigned n)
{
	r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	return h + n - r->cached_tail <= CT_RING_WORDS;
}
