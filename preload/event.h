/* SPDX-License-Identifier: MIT */
/* The events the program's threads hand to the writer through their rings (their words), and the
 * per-address sequence counters that order events on one address across rings (seq.c). */
#ifndef CTRACK_EVENT_H
#define CTRACK_EVENT_H

#include <stdatomic.h>
#include <stdint.h>

#include "arena.h"

/* Events in a ring: word 0 is (kind << 56 | address); x86_64 user addresses fit in 56 bits.
 * Every event that changes whether an address is live carries that address's sequence number. */
enum ct_event {
	CT_EV_ALLOC = 1,  /* | kind,ptr | size | stack id | seq << 32 |  a block was allocated */
	CT_EV_FREE = 2,   /* | kind,ptr | seq | ra |   about to be freed, by a call that returns to ra */
	CT_EV_RBEGIN = 3, /* | kind,old | seq | ra |   realloc(old, n) starts: old may go away */
	CT_EV_RFAIL = 4,  /* | kind,old | seq |   that realloc failed, old is live again */
	CT_EV_RFREE = 5,  /* | kind,old |         that realloc freed old (n == 0) */
};
#define CT_EV_SHIFT 56
#define CT_EV_PTR(w) ((w) & ((1ull << CT_EV_SHIFT) - 1))
#define CT_EV_KIND(w) ((unsigned)((w) >> CT_EV_SHIFT) & 0x7f)
/* A flag in word 0 of an event that begins a call (ALLOC, FREE, RBEGIN): sampling left out calls of
 * the thread since its previous event in the ring, so the block that event allocated was not freed
 * by the thread's very next call: no temporary, whatever the ring shows. Never set without sampling. */
#define CT_EV_GAP (1ull << 63)

/* Per-address order. Rings are drained one after another, so without help the writer could see
 * thread B's free of p (which ends the block thread C allocated at p after thread A freed it)
 * before A's free. Each address hashes to a counter; every event on the address takes the next
 * number (after the real allocation, before the real free), and the writer applies each
 * counter's events in number order. Coherence of the atomic counter makes the numbers follow
 * the allocator's own order. */
#define CT_SEQ_BITS 16
#define CT_SEQ_BUCKETS (1u << CT_SEQ_BITS)
extern _Atomic uint32_t ct_seq[CT_SEQ_BUCKETS] CT_HIDDEN;

/* Neighbouring addresses share neighbouring counters, so a thread allocating from its own arena
 * keeps taking numbers from cache lines no other core writes (a hash of the whole address sent
 * every event to a random line, bouncing between cores: 28% of a 4-thread profile); the arena's
 * high bits, hashed, place arenas apart in the table. A counter serves 2^CT_SEQ_GRAIN bytes of
 * address space and a cache line of them 4 KiB: a heap of a few MiB keeps its counters within
 * L2 (a free, which hits a block allocated long ago, otherwise waits for its counter's line at
 * the locked add), and a thread's arena stays in its own part of the table instead of wrapping
 * over every other thread's. */
#define CT_SEQ_GRAIN 8
static inline uint32_t ct_seq_bucket(uint64_t p)
{
	uint64_t arena = ((p >> 26) * 0x9E3779B97F4A7C15ull) >> (64 - CT_SEQ_BITS);
	return (uint32_t)((p >> CT_SEQ_GRAIN) + arena) & (CT_SEQ_BUCKETS - 1);
}

/* Asks for p's counter ahead of ct_seq_take, when there is work to do meanwhile. */
static inline void ct_seq_prefetch(uint64_t p)
{
	__builtin_prefetch((const void *)&ct_seq[ct_seq_bucket(p)], 1, 3);
}

static inline uint32_t ct_seq_take(uint64_t p)
{
	return atomic_fetch_add_explicit(&ct_seq[ct_seq_bucket(p)], 1, memory_order_relaxed);
}

/* Words of an event, from its first word. */
static inline unsigned ct_event_words(uint64_t w0)
{
	unsigned kind = CT_EV_KIND(w0);
	return kind == CT_EV_RFAIL ? 2 : kind == CT_EV_RFREE ? 1 : 3;
}
/* Whether the event ends its block: published before the real free, the block may be gone already
 * (the leak scan takes such blocks as reachable until the writer matches the event). */
static inline int ct_event_ends_block(uint64_t w0)
{
	unsigned kind = CT_EV_KIND(w0);
	return kind == CT_EV_FREE || kind == CT_EV_RBEGIN || kind == CT_EV_RFREE;
}
/* Whether the event starts a block (an allocation), or makes one live again (a realloc that failed). */
static inline int ct_event_starts_block(uint64_t w0)
{
	unsigned kind = CT_EV_KIND(w0);
	return kind == CT_EV_ALLOC || kind == CT_EV_RFAIL;
}
/* An event's sequence number; every kind but RFREE has one. */
static inline uint32_t ct_event_seq(const uint64_t *w)
{
	return CT_EV_KIND(w[0]) == CT_EV_ALLOC ? (uint32_t)(w[2] >> 32) : (uint32_t)w[1];
}

#endif
