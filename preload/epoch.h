/* SPDX-License-Identifier: MIT */
/* A lane's run of records in one epoch, marked event by event where each event's records end: its
 * part of a ZEPOCH record (ctrack/format.h, lanezip.h), which a reader merges with the others' by mark. */
#ifndef CTRACK_EPOCH_H
#define CTRACK_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ctrack/record.h"

/* A run and its marks, encoded as they are made (ct_put_zmark). A mark's key is event << 1 |
 * own: the events are numbered in the orderer's order, the same for every lane; own says the
 * records are those of the event's own lane (its address's). Within an event, records of the other
 * lanes come first: the only records a lane writes for an event on another lane's address end what
 * the thread did before it (its held block, a realloc waiting, an odd free), as one lane writes
 * them first. */
struct ct_run {
	struct ct_rec_buf out;   /* the records */
	struct ct_rec_buf marks; /* their marks */
	uint64_t key;            /* the last mark's key (at first, the epoch's start: ct_run_clear) */
	uint64_t marked;         /* out.len at the last mark */
};

/* The records written to run since its last mark belong to event (own: on the lane's address).
 * Without room for the mark, they go with the next one. */
static inline void ct_run_mark(struct ct_run *run, uint64_t event, int own)
{
	if (__builtin_expect(run->out.len == run->marked, 1))
		return;
	uint64_t key = event << 1 | (uint64_t)(own != 0);
	if (!ct_rec_room(&run->marks, CT_ZMARK_MAX))
		return;
	run->marks.len +=
	    ct_put_zmark(run->marks.data + run->marks.len, key - run->key, run->out.len - run->marked);
	run->key = key;
	run->marked = run->out.len;
}

/* Empties run for an epoch that starts at event (its memory kept). */
static inline void ct_run_clear(struct ct_run *run, uint64_t event)
{
	run->out.len = run->marks.len = 0;
	run->out.dropped = run->marks.dropped = 0;
	run->key = event << 1;
	run->marked = 0;
}

#endif
