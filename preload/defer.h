/* SPDX-License-Identifier: MIT */
/* Events a signal handler makes while its thread is reporting another (hooks.c knows them by the
 * guard, CT_GUARD_HOOK): the thread's ring and backtrace buffer are in use, so the handler's hook
 * calls the real function at once, takes the event's sequence number where a reported event would
 * (after the real allocation, before the real free), walks its backtrace into an entry of its own,
 * and leaves the event here; the interrupted report writes it (tracker.c): before its own event
 * when the handler ran before that event took its number, else when the report ends.
 *
 * Why before: the writer applies each counter's events in number order, so every ring must hold
 * its events in the order their numbers were taken, across counters too. A handler's event that
 * took its number before the report's own event, written after it, lets two rings wait for each
 * other: the report's event waits for another thread's event numbered below it, which waits in its
 * ring behind one that waits for the handler's (seen: every ring full, the program stopped for the
 * writer's 2 s stall limit, then events applied out of order and frees unmatched). So each entry
 * records the counter the thread named for its own event's number (tracker.c names it before
 * taking) and that counter's value as the handler saw it: a handler runs whole between two
 * instructions of its thread, so a value not past the own event's number means it ran before.
 *
 * Contract: only the owning thread and its signal handlers touch a thread's buffer. Handlers claim
 * entries (they may nest: a compare-and-swap on the slot's tail), fill them and mark them ready;
 * the writing side (a report of the thread, which no handler of the thread runs above while it
 * runs) takes them in an order that keeps every sequence counter's numbers increasing along the
 * ring, since a ring whose next event must wait for one behind it in the same ring would never
 * move again. No lock, no malloc, errno untouched. */
#ifndef CTRACK_DEFER_H
#define CTRACK_DEFER_H

#include <stdint.h>

#include "rules.h"
#include "threadslot.h"

#define CT_DEFER_ENTRIES 16 /* a power of two: per thread, for one interruption of one report */

enum ct_defer_state { CT_DEFER_EMPTY, CT_DEFER_READY, CT_DEFER_WRITTEN };

struct ct_defer_entry {
	uint64_t w[3]; /* the event as a ring holds it (shim.h); an ALLOC's stack id is 0 here */
	int state;     /* enum ct_defer_state: READY once the handler has filled it */
	int frames;    /* an ALLOC's backtrace: ips[0 .. frames) */
	int truncated;
	/* The counter the thread had named for its own event's number when the handler ran, and that
	 * counter's value then: whether the handler ran before the number was taken (defer.c). */
	uint32_t seen_bucket, seen;
	uintptr_t ips[CT_DEPTH_MAX];
};

/* A thread's entries (its positions are in its slot). Zero-filled is empty. */
struct ct_defer {
	struct ct_defer_entry e[CT_DEFER_ENTRIES];
};

/* Whether the thread has events waiting (ready, or claimed by a handler and abandoned). */
static inline int ct_defer_pending(const struct ct_slot *s)
{
	return atomic_load_explicit(&s->defer.tail, memory_order_relaxed) != s->defer.head;
}

/* Claims n consecutive entries (a realloc's start and end take two): the first one's position,
 * or -1 when the buffer has no room for all n. For signal handlers. */
int64_t ct_defer_claim(struct ct_slot *s, unsigned n) __attribute__((visibility("hidden")));

static inline struct ct_defer_entry *ct_defer_at(struct ct_defer *d, int64_t pos)
{
	return &d->e[(uint32_t)pos & (CT_DEFER_ENTRIES - 1)];
}

/* The handler has filled e: it may be written from now on. */
void ct_defer_ready(struct ct_defer_entry *e) __attribute__((visibility("hidden")));

/* The next ready entry to write before the thread's own event w (words as in a ring, numbered):
 * one whose handler ran before w took its number, the first in claim order or one that must precede
 * it; NULL when none. An RFAIL (a realloc failed: its old block is live again) is preceded only by
 * the entries of its counter numbered below it: the matcher ends a realloc's old block at the next
 * allocation of the thread's stream, so an allocation written between the realloc's start and its
 * failure would end a block that lives on. An RFREE has no number: nothing precedes it. */
struct ct_defer_entry *ct_defer_before(struct ct_slot *s, struct ct_defer *d, const uint64_t *w)
    __attribute__((visibility("hidden")));

/* The next ready entry to write: the first in claim order, or one that must precede it; NULL when
 * all are written. Then the claimed entries no handler filled (it was left with longjmp) are let
 * go, and *abandoned counts them. */
struct ct_defer_entry *ct_defer_next(struct ct_slot *s, struct ct_defer *d, unsigned *abandoned)
    __attribute__((visibility("hidden")));

/* e is in the ring: its place can be claimed again once the entries before it are too. */
void ct_defer_written(struct ct_slot *s, struct ct_defer *d, struct ct_defer_entry *e)
    __attribute__((visibility("hidden")));

#endif
