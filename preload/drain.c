/* SPDX-License-Identifier: MIT */
/* Draining a thread's ring into one lane's stream of the matcher (drain.h): events fetched in
 * order, table slots loaded ahead on large tables, the matcher's event path inlined. */
#include "drain.h"

#include "event.h"

#define AHEAD 16 /* on large tables, events are decoded and their slots loaded 16 events ahead */
#define ALWAYS static inline __attribute__((always_inline))

/* The event at word t of r into ev; returns its length in words. */
ALWAYS unsigned fetch(const struct ct_ring *r, uint64_t t, uint64_t ev[3])
{
	ev[0] = r->words[t & CT_RING_MASK];
	unsigned n = ct_event_words(ev[0]);
	if (n > 1)
		ev[1] = r->words[(t + 1) & CT_RING_MASK];
	if (n > 2)
		ev[2] = r->words[(t + 2) & CT_RING_MASK];
	return n;
}

/* An event decoded ahead: its words, where it starts in the ring and what its hint worked out. */
struct ahead {
	uint64_t ev[3];
	uint64_t at;
	struct ct_match_hint hint;
};

/* The event at word at of r into *a, its table slots starting to load; returns its length. */
ALWAYS unsigned decode(const struct ct_ring *r, const struct ct_drain *d, uint64_t at, unsigned tables,
                       struct ahead *a)
{
	unsigned words = fetch(r, at, a->ev);
	a->at = at;
	ct_match_prefetch(&d->st, a->ev, tables, &a->hint);
	return words;
}

/* After the n-th event applied, which ends at word t: its mark in run (if any), and every 4096
 * events the position, so that the producer gets room in a long drain. */
ALWAYS void applied(struct ct_run *run, uint64_t *event, int rc, _Atomic uint64_t *pos, uint64_t t, int n)
{
	if (run)
		ct_run_mark(run, (*event)++, rc == CT_MATCH_DONE);
	if ((n & 4095) == 0)
		atomic_store_explicit(pos, t, memory_order_release);
}

/* drain_loop's events from *t up to h on small tables: fetched and applied. Returns how many; *t
 * moves past them. */
ALWAYS int apply_each(struct ct_ring *r, struct ct_drain *d, _Atomic uint64_t *pos, uint64_t *t, uint64_t h,
                      int ordered, struct ct_run *run, uint64_t *event, uint64_t limit)
{
	int n = 0;
	while (*t < h && (uint64_t)n < limit) {
		uint64_t ev[3];
		unsigned words = fetch(r, *t, ev);
		int rc = ct_match_event(&d->st, ev, ordered);
		if (rc == CT_MATCH_BLOCKED) {
			d->blocked = 1;
			break;
		}
		ordered = 1;
		*t += words;
		applied(run, event, rc, pos, *t, ++n);
	}
	return n;
}

/* The same on large tables: each event is decoded once, AHEAD events before it is applied, and its
 * slots load meanwhile. q[n .. head) (indices mod AHEAD) are the events decoded and not applied,
 * next the word after them: the position after the events applied is q[n]'s start, or next. */
ALWAYS int apply_ahead(struct ct_ring *r, struct ct_drain *d, _Atomic uint64_t *pos, uint64_t *t, uint64_t h,
                       unsigned tables, int ordered, struct ct_run *run, uint64_t *event, uint64_t limit)
{
	struct ahead q[AHEAD];
	uint64_t next = *t;
	unsigned head = 0, n = 0;
	for (; head < AHEAD && next < h; head++)
		next += decode(r, d, next, tables, &q[head]);
	while (n != head && n < limit) {
		const struct ahead *a = &q[n % AHEAD];
		int rc = ct_match_event_hinted(&d->st, a->ev, &a->hint, ordered);
		if (rc == CT_MATCH_BLOCKED) {
			d->blocked = 1;
			break;
		}
		ordered = 1;
		n++; /* a's slot is free: the next decode may take it */
		if (run)
			ct_run_mark(run, (*event)++, rc == CT_MATCH_DONE);
		if ((n & 4095) == 0)
			atomic_store_explicit(pos, n != head ? q[n % AHEAD].at : next, memory_order_release);
		if (next < h)
			next += decode(r, d, next, tables, &q[head++ % AHEAD]);
	}
	*t = n != head ? q[n % AHEAD].at : next;
	return (int)n;
}

/* The loop of ct_drain and ct_drain_run: with run, each event's records are marked in it
 * (epoch.h), and at most limit events are applied. */
ALWAYS int drain_loop(struct ct_ring *r, struct ct_drain *d, _Atomic uint64_t *pos, int ordered,
                      struct ct_run *run, uint64_t *event, uint64_t limit)
{
	uint64_t t = atomic_load_explicit(pos, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	unsigned tables = ct_match_prefetching(&d->st);
	d->blocked = 0;
	int n = tables ? apply_ahead(r, d, pos, &t, h, tables, ordered, run, event, limit)
	               : apply_each(r, d, pos, &t, h, ordered, run, event, limit);
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
