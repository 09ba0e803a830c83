/* SPDX-License-Identifier: MIT */
/* The matcher's two hash tables: live blocks (address -> block) and alloc infos ((size, stack) ->
 * dense id). Used by one thread at a time (the matcher's), no locks, memory from the arena. */
#ifndef CTRACK_MAPS_H
#define CTRACK_MAPS_H

#include <stdint.h>

/* Live blocks: address -> value (the matcher's block: alloc info id and ALLOC record number). Key
 * 0 marks an empty slot. */
struct ct_live_slot {
	uint64_t key, val;
};
struct ct_live_map {
	struct ct_live_slot *slots;
	uint64_t cap, count; /* cap: a power of two */
};
int ct_live_init(struct ct_live_map *m, uint64_t cap); /* 0, or -1 (no memory) */
void ct_live_release(struct ct_live_map *m);
uint64_t *ct_live_find(struct ct_live_map *m, uint64_t p); /* the value, or NULL */
/* Starts loading what a find or insert of p will read first (a hint: no effect on the contents). */
void ct_live_prefetch(const struct ct_live_map *m, uint64_t p);
/* p not present. 0, or -1 when the table is full and cannot grow (nothing inserted). */
int ct_live_insert(struct ct_live_map *m, uint64_t p, uint64_t v);
void ct_live_erase(struct ct_live_map *m, uint64_t *val); /* val from ct_live_find */
/* Inserts p -> v in one probe: 0; or 1 when p was there, its value in *old, now v; or -1 when p is
 * not there and the table is full and cannot grow (nothing inserted). */
int ct_live_add(struct ct_live_map *m, uint64_t p, uint64_t v, uint64_t *old);

/* Alloc infos: (size, stack) -> dense id from 0, in order of first sight. */
struct ct_info_slot {
	uint64_t size;
	uint32_t stack;
	uint32_t id1; /* the id + 1; 0: an empty slot */
};
struct ct_info_map {
	struct ct_info_slot *slots; /* cap: a power of two, at most half full */
	uint64_t *sizes;            /* by id: room for cap / 2 */
	uint32_t cap, count;
};
int ct_info_init(struct ct_info_map *m, uint32_t cap);
void ct_info_release(struct ct_info_map *m);
/* The id of (size, stack); *is_new = 1 when this call assigned it. UINT32_MAX when the pair is new
 * and the table is full and cannot grow. */
uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new);
/* Starts loading the slot interning (size, stack) reads first (a hint). */
void ct_info_prefetch(const struct ct_info_map *m, uint64_t size, uint32_t stack);

#endif
