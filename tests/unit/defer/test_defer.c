/* SPDX-License-Identifier: MIT */
/* preload/defer.c: entries come back so that each sequence counter's numbers increase (whatever
 * order handlers claimed them in), an event of the thread's own comes after the entries whose
 * handlers ran before it took its number (told by what each handler saw of its counter) and before
 * the others, a realloc's failure (RFAIL) after only the entries of its counter numbered below it,
 * a realloc's end (RFREE, no number) after its start; the buffer refuses claims it has no room for,
 * and lets go of entries claimed but never filled. */
#include <stdio.h>
#include <string.h>

#include "defer.h"
#include "shim.h"

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		failures++;
		fprintf(stderr, "FAIL %s\n", what);
	}
}

/* Two addresses of one counter, one of another. */
#define P1 0x10000000ull
#define P2 (P1 + ((uint64_t)CT_SEQ_BUCKETS << CT_SEQ_GRAIN)) /* the table wrapped once */
#define Q (P1 + (1ull << CT_SEQ_GRAIN))                      /* the next counter */
#define R (P1 + (2ull << CT_SEQ_GRAIN))                      /* and the one after */

static struct ct_slot slot;
static struct ct_defer buf;

/* Claims one entry and fills it with an event: kind, address, sequence number. */
static struct ct_defer_entry *add(unsigned kind, uint64_t p, uint32_t seq)
{
	int64_t pos = ct_defer_claim(&slot, 1);
	if (pos < 0)
		return NULL;
	struct ct_defer_entry *e = ct_defer_at(&buf, pos);
	e->w[0] = (uint64_t)kind << CT_EV_SHIFT | p;
	e->w[1] = kind == CT_EV_ALLOC ? 24 : kind == CT_EV_RFREE ? 0 : seq;
	e->w[2] = kind == CT_EV_ALLOC ? (uint64_t)seq << 32 : 0;
	ct_defer_ready(e);
	return e;
}

/* Takes every entry back, in the order given: the entries, as indexes in want[] of the order
 * they were added in (added[]). Returns the count of abandoned entries. */
static unsigned drain(struct ct_defer_entry **added, int n, const int *want, int wanted, const char *what)
{
	struct ct_defer_entry *e;
	unsigned abandoned = 0;
	int got = 0;
	while ((e = ct_defer_next(&slot, &buf, &abandoned))) {
		int index = -1;
		for (int i = 0; i < n; i++)
			if (added[i] == e)
				index = i;
		check(got < wanted && index == want[got], what);
		got++;
		ct_defer_written(&slot, &buf, e);
	}
	check(got == wanted, what);
	check(!ct_defer_pending(&slot), "nothing pending after a drain");
	return abandoned;
}

static void order_of_one_counter(void)
{
	check(ct_seq_bucket(P1) == ct_seq_bucket(P2) && ct_seq_bucket(P1) != ct_seq_bucket(Q),
	      "the test's addresses share a counter, and Q has another");
	/* A handler claimed its entry for P1, then was interrupted by one that took number 3 for P2
	 * before it took 5; Q's is of another counter. */
	struct ct_defer_entry *e[3] = {add(CT_EV_FREE, P1, 5), add(CT_EV_ALLOC, Q, 1),
	                               add(CT_EV_ALLOC, P2, 3)};
	check(ct_defer_pending(&slot), "pending after claims");
	drain(e, 3, (const int[]){2, 0, 1}, 3, "a counter's numbers increase along the ring");
}

/* What e's handler saw of the thread's own event: the counter named for its number, and its value. */
static struct ct_defer_entry *seen(struct ct_defer_entry *e, uint64_t named, uint32_t value)
{
	e->seen_bucket = ct_seq_bucket(named);
	e->seen = value;
	return e;
}

/* The thread's own event, FREE of P2 numbered 4 (P1's counter): before it go the entries whose
 * handlers saw P1's counter not past 4, or another counter named (the thread had not named its own
 * yet), in claim order but for a counter's lower number first; the others after it. */
static void before_an_own_event(void)
{
	struct ct_defer_entry *e[6] = {
	    seen(add(CT_EV_FREE, P1, 5), P1, 5),  /* ran after the own event's number: after */
	    seen(add(CT_EV_ALLOC, Q, 3), P1, 2),  /* before, on another counter */
	    seen(add(CT_EV_ALLOC, P2, 3), P1, 4), /* before, numbered below it on its counter */
	    seen(add(CT_EV_ALLOC, Q, 4), P1, 6),  /* after, on another counter */
	    seen(add(CT_EV_FREE, R, 7), Q, 9),    /* before the thread named its counter */
	    seen(add(CT_EV_FREE, Q, 2), P1, 2),   /* before, nested in Q 3's handler: Q's counter first */
	};
	uint64_t own[2] = {(uint64_t)CT_EV_FREE << CT_EV_SHIFT | P2, 4}; /* numbered 4 */
	const int want[4] = {5, 1, 2, 4};
	for (int i = 0; i < 4; i++) {
		struct ct_defer_entry *first = ct_defer_before(&slot, &buf, own);
		check(first == e[want[i]],
		      "the entries whose handlers ran before the own event's number, in order");
		if (first)
			ct_defer_written(&slot, &buf, first);
	}
	check(!ct_defer_before(&slot, &buf, own), "no entry of a handler that ran after it precedes it");
	uint64_t rfree = (uint64_t)CT_EV_RFREE << CT_EV_SHIFT | P1;
	check(!ct_defer_before(&slot, &buf, &rfree), "nothing precedes an event without a number");
	drain(e, 6, (const int[]){0, 3}, 2, "the rest after the own event, in claim order");
}

/* A realloc that failed (RFAIL of P1, numbered 4): only its counter's entries numbered below it go
 * before it, though other handlers ran before too. */
static void before_a_failed_realloc(void)
{
	struct ct_defer_entry *e[3] = {seen(add(CT_EV_ALLOC, Q, 3), P1, 2),
	                               seen(add(CT_EV_ALLOC, P2, 3), P1, 3),
	                               seen(add(CT_EV_FREE, R, 1), P1, 5)};
	uint64_t rfail[2] = {(uint64_t)CT_EV_RFAIL << CT_EV_SHIFT | P1, 4};
	struct ct_defer_entry *first = ct_defer_before(&slot, &buf, rfail);
	check(first == e[1], "a failed realloc: the entry of its counter numbered below it first");
	ct_defer_written(&slot, &buf, e[1]);
	check(!ct_defer_before(&slot, &buf, rfail), "a failed realloc: no other entry before it");
	drain(e, 3, (const int[]){0, 2}, 2, "a failed realloc: the rest after it");
}

static void numbers_that_wrap(void)
{
	struct ct_defer_entry *e[2] = {add(CT_EV_FREE, P1, 0), add(CT_EV_ALLOC, P2, 0xffffffffu)};
	drain(e, 2, (const int[]){1, 0}, 2, "0xffffffff comes before 0");
}

static void realloc_pair(void)
{
	/* A realloc's two entries, claimed together: its start, then its end (RFREE: no number). */
	int64_t pos = ct_defer_claim(&slot, 2);
	check(pos >= 0, "a pair claimed");
	struct ct_defer_entry *start = ct_defer_at(&buf, pos), *end = ct_defer_at(&buf, pos + 1);
	start->w[0] = (uint64_t)CT_EV_RBEGIN << CT_EV_SHIFT | P1;
	start->w[1] = 9;
	ct_defer_ready(start);
	end->w[0] = (uint64_t)CT_EV_RFREE << CT_EV_SHIFT | P1;
	ct_defer_ready(end);
	struct ct_defer_entry *later = add(CT_EV_ALLOC, P2, 8); /* another counter user, numbered lower */
	struct ct_defer_entry *e[3] = {start, end, later};
	drain(e, 3, (const int[]){2, 0, 1}, 3, "the realloc's end after its start");
}

static void room(void)
{
	struct ct_defer_entry *e[CT_DEFER_ENTRIES];
	int want[CT_DEFER_ENTRIES];
	for (int i = 0; i < CT_DEFER_ENTRIES - 1; i++)
		e[i] = add(CT_EV_ALLOC, Q + 16 * (uint64_t)i, (uint32_t)i), want[i] = i;
	check(ct_defer_claim(&slot, 2) < 0, "no pair where one entry is left");
	e[CT_DEFER_ENTRIES - 1] = add(CT_EV_ALLOC, Q + 16 * (CT_DEFER_ENTRIES - 1), CT_DEFER_ENTRIES - 1);
	want[CT_DEFER_ENTRIES - 1] = CT_DEFER_ENTRIES - 1;
	check(e[CT_DEFER_ENTRIES - 1] && !add(CT_EV_ALLOC, Q, 99), "full after 16");
	/* An entry written out of order frees no room while the first still waits. */
	ct_defer_written(&slot, &buf, e[5]);
	check(ct_defer_claim(&slot, 1) < 0, "still full with the first entry waiting");
	want[5] = 6;
	for (int i = 6; i < CT_DEFER_ENTRIES - 1; i++)
		want[i] = i + 1;
	drain(e, CT_DEFER_ENTRIES, want, CT_DEFER_ENTRIES - 1, "the rest in order");
	check(ct_defer_claim(&slot, 2) >= 0, "room again");
	unsigned abandoned = drain(NULL, 0, NULL, 0, "claimed, never filled");
	check(abandoned == 2, "two entries let go of, counted");
}

static void abandoned_among_ready(void)
{
	struct ct_defer_entry *e[2];
	e[0] = add(CT_EV_FREE, P1, 20);
	check(ct_defer_claim(&slot, 1) >= 0, "a claim left unfilled (its handler jumped away)");
	e[1] = add(CT_EV_FREE, Q, 21);
	unsigned abandoned = drain(e, 2, (const int[]){0, 1}, 2, "the filled ones around it");
	check(abandoned == 1, "the unfilled one counted");
	e[0] = add(CT_EV_FREE, P1, 22);
	check(ct_defer_at(&buf, slot.defer.head) == e[0], "its place is claimed again");
	drain(e, 1, (const int[]){0}, 1, "and written");
}

int main(void)
{
	order_of_one_counter();
	before_an_own_event();
	before_a_failed_realloc();
	numbers_that_wrap();
	realloc_pair();
	room();
	abandoned_among_ready();
	if (failures)
		return 1;
	printf("defer: all passed\n");
	return 0;
}
