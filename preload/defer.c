/* SPDX-License-Identifier: MIT */
/* The buffer of events that signal handlers make while their thread reports another (contract in
 * defer.h): claimed by handlers, written by the interrupted report in sequence-number order.
 * Runs in signal handlers and inside malloc: no malloc, no lock, no stdio, errno untouched. */
#include <stdatomic.h>
#include <stddef.h>

#include "defer.h"
#include "shim.h"

int64_t ct_defer_claim(struct ct_slot *s, unsigned n)
{
	uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
	do {
		/* head only moves in the report this handler interrupted, which waits meanwhile */
		if (tail - s->defer.head + n > CT_DEFER_ENTRIES)
			return -1;
	} while (!atomic_compare_exchange_weak_explicit(&s->defer.tail, &tail, tail + n, memory_order_relaxed,
	                                                memory_order_relaxed));
	return tail;
}

void ct_defer_ready(struct ct_defer_entry *e)
{
	atomic_signal_fence(memory_order_seq_cst); /* the words before the mark */
	e->state = CT_DEFER_READY;
}

/* Whether a ready entry's event must be written before an event of counter `bucket` numbered seq. */
static int precedes(const struct ct_defer_entry *e, uint32_t bucket, uint32_t seq)
{
	return e->state == CT_DEFER_READY && CT_EV_KIND(e->w[0]) != CT_EV_RFREE &&
	       ct_seq_bucket(CT_EV_PTR(e->w[0])) == bucket && (int32_t)(ct_event_seq(e->w) - seq) < 0;
}

/* The ready entry with counter `bucket` and the lowest number below seq; NULL when none. Ready
 * entries need not lie in number order: a handler may take its number after another handler,
 * which interrupted it once it had claimed its entry, took one. */
static struct ct_defer_entry *lowest_before(struct ct_slot *s, struct ct_defer *d, uint32_t bucket,
                                            uint32_t seq)
{
	struct ct_defer_entry *best = NULL;
	uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
	for (uint32_t pos = s->defer.head; pos != tail; pos++) {
		struct ct_defer_entry *e = ct_defer_at(d, pos);
		if (precedes(e, bucket, seq) &&
		    (!best || (int32_t)(ct_event_seq(e->w) - ct_event_seq(best->w)) < 0))
			best = e;
	}
	return best;
}

/* The ready entry that must be written before e: of e's counter, numbered below it (the lowest);
 * NULL when none. */
static struct ct_defer_entry *predecessor(struct ct_slot *s, struct ct_defer *d,
                                          const struct ct_defer_entry *e)
{
	if (CT_EV_KIND(e->w[0]) == CT_EV_RFREE)
		return NULL;
	return lowest_before(s, d, ct_seq_bucket(CT_EV_PTR(e->w[0])), ct_event_seq(e->w));
}

/* Whether ready entry e's handler ran before the thread took number seq of counter bucket: it saw
 * another counter named (the thread had not named this one yet), or this one not yet past seq. Its
 * predecessors ran before it, so they pass too. */
static int ran_before(const struct ct_defer_entry *e, uint32_t bucket, uint32_t seq)
{
	return e->seen_bucket != bucket || (int32_t)(e->seen - seq) <= 0;
}

struct ct_defer_entry *ct_defer_before(struct ct_slot *s, struct ct_defer *d, const uint64_t *w)
{
	unsigned kind = CT_EV_KIND(w[0]);
	if (kind == CT_EV_RFREE)
		return NULL;
	uint32_t bucket = ct_seq_bucket(CT_EV_PTR(w[0])), seq = ct_event_seq(w);
	if (kind == CT_EV_RFAIL)
		return lowest_before(s, d, bucket, seq);
	uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
	for (uint32_t pos = s->defer.head; pos != tail; pos++) {
		struct ct_defer_entry *e = ct_defer_at(d, pos);
		if (e->state != CT_DEFER_READY || !ran_before(e, bucket, seq))
			continue;
		struct ct_defer_entry *first = predecessor(s, d, e);
		return first ? first : e;
	}
	return NULL;
}

struct ct_defer_entry *ct_defer_next(struct ct_slot *s, struct ct_defer *d, unsigned *abandoned)
{
	uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
	for (uint32_t pos = s->defer.head; pos != tail; pos++) {
		struct ct_defer_entry *e = ct_defer_at(d, pos);
		if (e->state != CT_DEFER_READY)
			continue;
		struct ct_defer_entry *first = predecessor(s, d, e);
		return first ? first : e;
	}
	/* Nothing ready: what is left was claimed by handlers that never came back to fill it (no
	 * handler of the thread runs above this report, so none is still filling one). */
	*abandoned = 0;
	for (uint32_t pos = s->defer.head; pos != tail; pos++) {
		struct ct_defer_entry *e = ct_defer_at(d, pos);
		*abandoned += e->state == CT_DEFER_EMPTY;
		e->state = CT_DEFER_EMPTY;
	}
	s->defer.head = tail;
	return NULL;
}

void ct_defer_written(struct ct_slot *s, struct ct_defer *d, struct ct_defer_entry *e)
{
	e->state = CT_DEFER_WRITTEN;
	uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
	while (s->defer.head != tail && ct_defer_at(d, s->defer.head)->state == CT_DEFER_WRITTEN) {
		ct_defer_at(d, s->defer.head)->state = CT_DEFER_EMPTY;
		atomic_signal_fence(memory_order_seq_cst); /* emptied before a handler may claim it */
		s->defer.head++;
	}
}
