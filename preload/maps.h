/* SPDX-License-Identifier: MIT */
/* The matcher's two hash tables: live blocks (address -> alloc info) and alloc infos ((size, stack) ->
 * dense id). Used by one thread at a time (the matcher's), no locks, memory from the arena. */
#ifndef CTRACK_MAPS_H
#define CTRACK_MAPS_H

#include <stdint.h>

/* Live blocks: address -> alloc info id (the matcher's block). A block's slot is one word, the
 * address's bits 3..46 above the info's 20 bits: perl's heap of 800,000 blocks took 32 MiB in
 * slots of two words at most half full, and 16 MiB more while the table doubled. The table is
 * CT_LIVE_SHARDS parts by address hash, each grown alone by half again, so a growth copies a
 * sixteenth of the table and the slots stay 33-50% full. Keys that do not pack (an address above
 * 2^47 or not 8-byte aligned, an info of 2^20 - 1 or more) go to a part of two-word slots. */
#define CT_LIVE_SHARDS_BITS 4
#define CT_LIVE_SHARDS (1 << CT_LIVE_SHARDS_BITS)
struct ct_live_part {
	uint64_t *slots, *last; /* last: the tail's last slot, always empty */
	uint64_t cap, count;    /* cap: home slots (of 1 word, or 2 in the wide part) */
	uint64_t grow_at;       /* the count at which it grows */
};
struct ct_live_map {
	struct ct_live_part part[CT_LIVE_SHARDS];
	struct ct_live_part wide; /* { address, info } slots; mapped on first use */
	uint64_t count;
};
int ct_live_init(struct ct_live_map *m, uint64_t cap); /* room for cap / 2 blocks; 0, or -1 */
void ct_live_release(struct ct_live_map *m);
/* Starts loading what a lookup of p will read first (a hint: no effect on the contents). */
void ct_live_prefetch(const struct ct_live_map *m, uint64_t p);
/* Removes p: 1 with its info in *info, or 0 when p is not there. */
int ct_live_take(struct ct_live_map *m, uint64_t p, uint32_t *info);
/* Inserts p -> info in one probe: 0; or 1 when p was there, its info in *old, now info; or -1 when
 * p is not there and its part is full and cannot grow (nothing inserted). */
int ct_live_add(struct ct_live_map *m, uint64_t p, uint32_t info, uint32_t *old);
/* Calls fn for every block; returns how many. */
uint64_t ct_live_each(const struct ct_live_map *m, void (*fn)(uint64_t p, uint32_t info, void *arg),
                      void *arg);
size_t ct_live_bytes(const struct ct_live_map *m); /* the slots' bytes */
/* For the unit test: the part p is in (the wide part is CT_LIVE_SHARDS), its info and its slot
 * there, or -1 when p is not there; and the slot where p -> info goes in its part when alone. */
int64_t ct_live_slot_of(const struct ct_live_map *m, uint64_t p, int *part, uint32_t *info);
uint64_t ct_live_home(const struct ct_live_map *m, uint64_t p, uint32_t info, int *part);

/* Alloc infos: (size, stack) -> dense id from 0, in order of first sight. */
struct ct_info_slot {
	uint64_t size;
	uint32_t stack;
	uint32_t id1; /* the id + 1; 0: an empty slot */
};
struct ct_info_map {
	struct ct_info_slot *slots; /* cap: a power of two, at most half full */
	uint64_t *sizes;            /* by id: room for cap / 2 */
	uint32_t *stacks;           /* by id, the same */
	uint32_t cap, count;
};
int ct_info_init(struct ct_info_map *m, uint32_t cap);
void ct_info_release(struct ct_info_map *m);
/* The id of (size, stack); *is_new = 1 when this call assigned it. UINT32_MAX when the pair is new
 * and the table is full and cannot grow. */
uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new);
/* The same, with hash = ct_info_hash(size, stack) computed before (by the caller's look-ahead). */
uint32_t ct_info_intern_hashed(struct ct_info_map *m, uint32_t hash, uint64_t size, uint32_t stack,
                               int *is_new);
/* (size, stack)'s hash, which decides where interning it looks first. */
uint32_t ct_info_hash(uint64_t size, uint32_t stack);
/* Starts loading the slot interning the pair of that hash reads first (a hint). */
void ct_info_prefetch(const struct ct_info_map *m, uint32_t hash);

#endif
