/* SPDX-License-Identifier: MIT */
/* Reading ahead: a thread that decompresses the trace's next bytes and joins its BATCH records while
 * the reader's thread decodes the ones before, handed over in a ring of a few slots (bounded memory).
 * The thread is the producer, the reader the consumer; what a slot holds is the producer's to say. */
#ifndef CT_ANALYZER_READAHEAD_H
#define CT_ANALYZER_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "ctrack/record.h"

/* The records of one BATCH, joined back from its columns ahead of the reader. */
struct ct_ra_join {
	uint64_t at;            /* the BATCH record's offset in the decompressed trace */
	struct ct_rec_buf rows; /* its records (the buffer passes between the two threads with it) */
	int rc;                 /* what joining it returned */
	unsigned long long n;   /* the records joined before a corrupt one */
};

/* One hand-over: the bytes one decompression call added, the reader's state after it, and the BATCH
 * records those bytes completed, in the order of the trace. */
struct ct_ra_slot {
	struct ct_rec_buf bytes;
	uint64_t bytes_read; /* of the file, so far */
	uint64_t out_block;  /* the offset of the zstd block these bytes came from */
	int mid_frame;       /* the call ended inside a zstd frame */
	int rc;              /* 1 bytes were added; 0 the end of the file or damage; -1 an error */
	struct ct_ra_join *joins;
	size_t njoins, capjoins;
	size_t next; /* the consumer's: the first join it has not taken */
};

/* Fills slot (emptied: no bytes, no joins) with the next bytes; returns slot->rc. The thread stops
 * after a slot whose rc is not 1. */
typedef int (*ct_ra_produce_fn)(void *arg, struct ct_ra_slot *slot);

struct ct_readahead;

/* Starts the thread, which calls produce(arg, slot) for each slot in turn while there is room.
 * NULL when it cannot start (no memory, no thread): the caller then reads on its own. */
struct ct_readahead *ct_readahead_start(ct_ra_produce_fn produce, void *arg);
/* The consumer's next slot, waiting for it; the one it returned before goes back to the producer
 * (its bytes and joins are no longer the consumer's). After a slot whose rc is not 1, never called. */
struct ct_ra_slot *ct_readahead_next(struct ct_readahead *ra);
/* Stops the thread (after its current call) and frees everything. ra may be NULL. */
void ct_readahead_stop(struct ct_readahead *ra);

/* The producer's: a new join at the end of s, at offset at, with an empty buffer to fill; NULL when
 * out of memory. */
struct ct_ra_join *ct_ra_slot_add_join(struct ct_ra_slot *s, uint64_t at);
/* The consumer's: s's join of the BATCH at offset at, or NULL when the producer made none. */
struct ct_ra_join *ct_ra_slot_join_at(struct ct_ra_slot *s, uint64_t at);

#endif
