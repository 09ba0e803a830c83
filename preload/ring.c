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

enum ct_ring_push_result ct_ring_push(struct ct_ring *r, const uint64_t *w, unsigned n)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (CT_UNLIKELY(h + n - r->cached_tail > CT_RING_WORDS)) {
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (h + n - r->cached_tail > CT_RING_WORDS)
			return CT_RING_FULL;
	}
	/* Ask for the line we write 16 lines from now in exclusive state: the consumer has read it since
	 * it was last written, and waiting for that transfer at store time is the ring's main cost. */
	if (CT_LIKELY(r->prefetchw))
		__asm__ volatile("prefetchw %0" ::"m"(r->words[(h + 128) & CT_RING_MASK]));
	for (unsigned i = 0; i < n; i++)
		r->words[(h + i) & CT_RING_MASK] = w[i];
	atomic_store_explicit(&r->head, h + n, memory_order_release);
	/* Crossed a half of the ring: the consumer should run before the producer has to wait. */
	return CT_UNLIKELY(((h + n) & (CT_RING_WORDS / 2 - 1)) < n) ? CT_RING_NUDGE : CT_RING_OK;
}
