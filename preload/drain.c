/* SPDX-License-Identifier: MIT */
/* Draining a thread's ring into one lane's stream of the matcher (drain.h): events fetched in
 * order, table slots loaded ahead on large tables, the matcher's event path inlined. */
#include "drain.h"

#include "event.h"

#define PREFETCH_EVENTS 16 /* table slots load 16 events ahead */

/* The event at word t of r into ev; returns its length in words. */
static inline unsigned fetch(const struct ct_ring *r, uint64_t t, uint64_t ev[3])
{
	ev[0] = r->words[t & CT_RING_MASK];
	unsigned n = ct_event_words(ev[0]);
	if (n > 1)
		ev[1] = r->words[(t + 1) & CT_RING_MASK];
	if (n > 2)
		ev[2] = r->words[(t + 2) & CT_RING_MASK];
	return n;
}

/* Prefetches (ct_match_prefetch) for the event at *ahead, if it is published, and moves *ahead
 * past it. */
static void look_ahead(const struct ct_ring *r, const struct ct_drain *d, uint64_t *ahead, uint64_t h)
{
	if (*ahead >= h)
		return;
	uint64_t ev[3];
	*ahead += fetch(r, *ahead, ev);
	ct_match_prefetch(&d->st, ev);
}

/* The loop of ct_drain and ct_drain_run: with run, each event's records are marked in it
 * (epoch.h), and at most limit events are applied. */
static inline __attribute__((always_inline)) int drain_loop(struct ct_ring *r, struct ct_drain *d,
                                                            _Atomic uint64_t *pos, int ordered,
                                                            struct ct_run *run, uint64_t *event,
                                                            uint64_t limit)
{
	uint64_t t = atomic_load_explicit(pos, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	/* UINT64_MAX, the maximum: look_ahead does nothing */
	uint64_t ahead = ct_match_prefetching(&d->st) ? t : UINT64_MAX;
	int n = 0;
	d->blocked = 0;
	for (int i = 0; i < PREFETCH_EVENTS; i++)
		look_ahead(r, d, &ahead, h);
	while (t < h && (uint64_t)n < limit) {
		uint64_t ev[3];
		look_ahead(r, d, &ahead, h);
		unsigned words = fetch(r, t, ev);
		int rc = ct_match_event(&d->st, ev, ordered);
		if (rc == CT_MATCH_BLOCKED) {
			d->blocked = 1;
			break;
		}
		if (run)
			ct_run_mark(run, (*event)++, rc == CT_MATCH_DONE);
		ordered = 1;
		t += words;
		if ((++n & 4095) == 0)
			atomic_store_explicit(pos, t, memory_order_release);
	}
	atomic_store_explicit(pos, t, memory_order_release);
	return n;
}

/* Every call below is inlined (flatten: the matcher's event path, from match.c and maps.c through
 * LTO, except the cold paths marked noinline), so one event costs no call, and no saving and
 * restoring of registers around one: 10-12% fewer instructions per event on the writer than a call
 * to ct_match_event per event (tests/cost/guard). */
__attribute__((flatten)) int ct_drain(struct ct_ring *r, struct ct_drain *d, _Atomic uint64_t *pos,
                                      int ordered)
{
	return drain_loop(r, d, pos, ordered, NULL, NULL, UINT64_MAX);
}

__attribute__((flatten)) int ct_drain_run(struct ct_ring *r, struct ct_drain *d, struct ct_run *run,
                                          uint64_t *event, uint64_t n)
{
	return drain_loop(r, d, &d->pos, 0, run, event, n);
}

__attribute__((flatten)) int ct_drain_order(struct ct_ring *r, struct ct_drain *d, int ordered)
{
	uint64_t t = atomic_load_explicit(&d->pos, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	int n = 0;
	d->blocked = 0;
	while (t < h) {
		uint64_t ev[3];
		unsigned words = fetch(r, t, ev);
		if (ct_match_turn(ev, ordered) == CT_MATCH_BLOCKED) {
			d->blocked = 1;
			break;
		}
		ordered = 1;
		t += words;
		n++;
	}
	atomic_store_explicit(&d->pos, t, memory_order_release);
	return n;
}

void ct_drain_tail(struct ct_ring *r, unsigned lanes)
{
	uint64_t lo = UINT64_MAX;
	for (unsigned i = 0; i < lanes; i++) {
		uint64_t p = atomic_load_explicit(&ct_drain_at(r, i)->pos, memory_order_acquire);
		lo = p < lo ? p : lo;
	}
	uint64_t cur = atomic_load_explicit(&r->tail, memory_order_relaxed);
	while (lo > cur && !atomic_compare_exchange_weak_explicit(&r->tail, &cur, lo, memory_order_release,
	                                                          memory_order_relaxed))
		;
}
