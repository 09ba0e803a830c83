/* SPDX-License-Identifier: MIT */
/* Per-thread event rings: the only thing the hot path writes to, so threads never share a cache
 * line while allocating. One producer (the thread), one consumer (the writer). Runs inside hooks. */
#include <cpuid.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "shim.h"

static _Atomic(struct ct_ring *) all_rings;

struct ct_ring *ct_ring_list(void)
{
	return atomic_load_explicit(&all_rings, memory_order_acquire);
}

/* A dead ring is reused once the writer has emptied it and marked it free. */
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
	/* The writer has reset the writer-private fields before marking the ring free. */
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
		r->st.has_held = r->st.has_pending = r->st.pending_temp = 0;
		r->announced = r->blocked = 0;
		if (atomic_load(&r->state) != CT_RING_FREE)
			atomic_store(&r->state, CT_RING_DEAD);
	}
}

void ct_ring_push(struct ct_ring *r, const uint64_t *w, unsigned n)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (CT_UNLIKELY(h + n - r->cached_tail > CT_RING_WORDS)) {
		/* Full: the writer is behind. Let it run (it may need this core) until there is room. */
		for (unsigned spins = 0;; spins++) {
			r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
			if (h + n - r->cached_tail <= CT_RING_WORDS)
				break;
			ct_writer_wake();
			if (spins < 8) {
				sched_yield();
			} else {
				struct timespec ts = {0, 50000};
				nanosleep(&ts, NULL);
			}
		}
	}
	/* Ask for the line we write 16 lines from now in exclusive state: the writer has read it since
	 * it was last written, and waiting for that transfer at store time is the ring's main cost. */
	if (CT_LIKELY(r->prefetchw))
		__asm__ volatile("prefetchw %0" ::"m"(r->words[(h + 128) & CT_RING_MASK]));
	for (unsigned i = 0; i < n; i++)
		r->words[(h + i) & CT_RING_MASK] = w[i];
	atomic_store_explicit(&r->head, h + n, memory_order_release);
	/* Half full: make sure the writer is awake before the thread has to wait for it. */
	if (CT_UNLIKELY(((h + n) & (CT_RING_WORDS / 2 - 1)) < n))
		ct_writer_wake();
}
