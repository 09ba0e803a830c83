/* SPDX-License-Identifier: MIT */
/* An index of ids by hash, for the tables whose keys live elsewhere: the shim's stack trie and
 * alloc infos, pprof's strings, functions and locations. Open addressing with linear probing in a
 * power-of-two array kept at most half full; a slot keeps its id's hash, so growing never looks at
 * keys and a probe compares keys only when the hashes are equal. The caller owns the memory (the
 * shim maps it, the analyzer uses calloc): nothing here allocates, locks or touches errno.
 * Header-only, so the caller's key comparison inlines into the probe loop. */
#ifndef CTRACK_IDINDEX_H
#define CTRACK_IDINDEX_H

#include <stddef.h>
#include <stdint.h>

struct ct_idx_slot {
	uint32_t hash;
	uint32_t id; /* 0: an empty slot (the ids a caller stores are never 0) */
};

struct ct_idx {
	struct ct_idx_slot *slots;
	uint32_t cap; /* a power of two, or 0 before the first ct_idx_rehash */
	uint32_t count;
};

/* 1 when one more id would fill the index past half: grow it (ct_idx_rehash) before inserting. */
static inline int ct_idx_full(const struct ct_idx *x)
{
	return ((uint64_t)x->count + 1) * 2 > x->cap;
}

/* The slot of the id with this hash whose key same(ctx, id) accepts, or else the empty slot where
 * that id goes. The index must not be full. */
static inline struct ct_idx_slot *ct_idx_find(const struct ct_idx *x, uint32_t hash,
                                              int (*same)(const void *ctx, uint32_t id), const void *ctx)
{
	uint32_t mask = x->cap - 1;
	for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
		struct ct_idx_slot *s = &x->slots[i];
		if (!s->id || (s->hash == hash && same(ctx, s->id)))
			return s;
	}
}

/* Fills the empty slot s (from ct_idx_find) with id. */
static inline void ct_idx_put(struct ct_idx *x, struct ct_idx_slot *s, uint32_t hash, uint32_t id)
{
	s->hash = hash;
	s->id = id;
	x->count++;
}

/* Moves every id into `slots`, cap zeroed slots (a power of two, more than twice the count), and
 * returns the old array (NULL at first) for the caller to release. */
static inline struct ct_idx_slot *ct_idx_rehash(struct ct_idx *x, struct ct_idx_slot *slots, uint32_t cap)
{
	struct ct_idx_slot *old = x->slots;
	for (uint32_t k = 0; k < x->cap; k++) {
		if (!old[k].id)
			continue;
		uint32_t i = old[k].hash & (cap - 1);
		while (slots[i].id)
			i = (i + 1) & (cap - 1);
		slots[i] = old[k];
	}
	x->slots = slots;
	x->cap = cap;
	return old;
}

#endif
