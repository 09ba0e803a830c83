/* SPDX-License-Identifier: MIT */
/* The matcher's two hash tables (maps.h). Live blocks: parts by address hash, each open addressing
 * with linear probing at most half full, key and value packed in one word, deletion by backward
 * shift (the one table that erases). Alloc infos: open addressing over (size, stack) with the sizes
 * by id beside. Memory from the arena; one thread at a time (no locks). */
#include <string.h>

#include "arena.h"
#include "maps.h"

static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* ---- live blocks ----
 * A part's keys have their home among its first cap slots; a probe runs on past them into a tail of
 * TAIL more instead of wrapping to slot 0, so probing and the backward shift need no modular
 * arithmetic. The tail's last slot stays empty (a key that would take it grows the part instead),
 * so every probe ends at an empty slot. */

#define PACK_BITS 20 /* the info's bits in a packed slot; the address's bits 3..46 above them */
#define PACK_INFO_LIMIT ((1u << PACK_BITS) - 1)
#define PACK_SHIFT (PACK_BITS - 3)
#define PACK_ADDRESS_LIMIT (1ull << 47)
#define MIN_PART 16         /* home slots */
#define TAIL 64             /* slots after the home slots */
#define FULL_TENTHS 5       /* a part grows by half again once this full ... */
#define FULL_TENTHS_STUCK 9 /* ... or, when there is no memory to grow, refuses keys past this */
/* Inlined where called, so that each copy knows whether its part is the wide one. */
#define HOT static inline __attribute__((always_inline))

/* Whether t has room for one more key without growing. */
static inline int part_fits(const struct ct_live_part *t, unsigned tenths)
{
	return (t->count + 1) * 10 <= t->cap * tenths;
}

static inline int packs_address(uint64_t p)
{
	return p < PACK_ADDRESS_LIMIT && !(p & 7);
}

/* A slot's words: one when packed, two in the wide part (wide is a constant where it is inlined). */
static inline uint64_t slot_key(const uint64_t *s, int wide)
{
	return wide ? s[0] : s[0] >> PACK_BITS << 3;
}

static inline uint32_t slot_info(const uint64_t *s, int wide)
{
	return wide ? (uint32_t)s[1] : (uint32_t)(s[0] & PACK_INFO_LIMIT);
}

static inline void slot_set(uint64_t *s, uint64_t p, uint32_t info, int wide)
{
	if (wide) {
		s[0] = p;
		s[1] = info;
	} else {
		s[0] = p << PACK_SHIFT | info;
	}
}

static inline uint64_t *slot_at(const struct ct_live_part *t, uint64_t i, int wide)
{
	return t->slots + (wide ? 2 * i : i);
}

static inline uint64_t slot_index(const struct ct_live_part *t, const uint64_t *s, int wide)
{
	return (uint64_t)(s - t->slots) / (wide ? 2 : 1);
}

__extension__ typedef unsigned __int128 u128;

/* An address's hash: Fibonacci hashing, whose high bits spread a heap's evenly spaced blocks
 * evenly; the top CT_LIVE_SHARDS_BITS choose the part, the bits below them the home slot. */
static inline uint64_t live_hash(uint64_t p)
{
	return p * 0x9E3779B97F4A7C15ull;
}

/* A key's home slot: its hash's bits below the part's, scaled to the part's size (any size, not
 * only powers of two). */
static inline uint64_t home_slot(uint64_t h, uint64_t cap)
{
	return (uint64_t)(((u128)(h << CT_LIVE_SHARDS_BITS) * cap) >> 64);
}

static size_t part_bytes(const struct ct_live_part *t, int wide)
{
	return t->slots ? (t->cap + TAIL) * (wide ? 16 : 8) : 0;
}

static int part_map(struct ct_live_part *t, uint64_t cap, int wide, void *(*map)(size_t))
{
	t->slots = map((cap + TAIL) * (wide ? 16 : 8));
	t->cap = t->slots ? cap : 0;
	t->last = t->slots ? slot_at(t, cap + TAIL - 1, wide) : NULL;
	t->grow_at = t->cap * FULL_TENTHS / 10;
	t->count = 0;
	return t->slots ? 0 : -1;
}

static void part_release(struct ct_live_part *t, int wide)
{
	ct_arena_unmap(t->slots, part_bytes(t, wide));
	*t = (struct ct_live_part){0};
}

/* p's slot in t, or else the empty slot where it goes: the tail's last one when there is no room. */
HOT uint64_t *part_probe(const struct ct_live_part *t, uint64_t p, uint64_t h, int wide)
{
	uint64_t *s = slot_at(t, home_slot(h, t->cap), wide);
	while (s[0] && slot_key(s, wide) != p)
		s += wide ? 2 : 1;
	return s;
}

static inline int past_tail(const struct ct_live_part *t, const uint64_t *s)
{
	return s == t->last;
}

/* t by half again (a part that cannot grow keeps taking keys up to FULL_TENTHS_STUCK, unless its
 * tail overflows). 0, or -1 when unchanged. */
#define COLD static __attribute__((noinline, cold)) /* off the hot paths: they stay lean */

COLD int part_grow(struct ct_live_part *t, int wide)
{
	struct ct_live_part n;
	uint64_t cap = t->cap < MIN_PART ? MIN_PART : t->cap + t->cap / 2;
	if (part_map(&n, cap, wide, ct_arena_map_populated) < 0) /* filled at once */
		return -1;
	for (uint64_t i = 0; t->slots && i < t->cap + TAIL; i++) {
		const uint64_t *s = slot_at(t, i, wide);
		if (!s[0])
			continue;
		uint64_t p = slot_key(s, wide);
		uint64_t *to = part_probe(&n, p, live_hash(p), wide);
		if (past_tail(&n, to)) { /* cannot happen unless the hash is broken */
			part_release(&n, wide);
			return -1;
		}
		slot_set(to, p, slot_info(s, wide), wide);
		n.count++;
	}
	part_release(t, wide);
	*t = n;
	return 0;
}

/* Where p (not in t) goes, the part grown first when it is full or p's run reaches the tail's end;
 * NULL when there is no room. */
COLD uint64_t *part_place(struct ct_live_part *t, uint64_t p, uint64_t h, int wide)
{
	if (t->slots && t->count < t->grow_at) {
		uint64_t *s = part_probe(t, p, h, wide);
		if (!past_tail(t, s))
			return s;
	}
	if (part_grow(t, wide) < 0 && !(t->slots && part_fits(t, FULL_TENTHS_STUCK)))
		return NULL;
	uint64_t *s = part_probe(t, p, h, wide);
	return past_tail(t, s) ? NULL : s;
}

/* Backward-shift deletion keeps probe runs intact without tombstones: each key after the hole whose
 * home is at or before the hole moves into it. */
HOT void part_erase(struct ct_live_part *t, uint64_t *hole, int wide)
{
	uint64_t i = slot_index(t, hole, wide);
	for (uint64_t j = i + 1;; j++) {
		uint64_t *s = slot_at(t, j, wide);
		if (!s[0])
			break;
		if (home_slot(live_hash(slot_key(s, wide)), t->cap) <= i) {
			uint64_t *h = slot_at(t, i, wide);
			h[0] = s[0];
			if (wide)
				h[1] = s[1];
			i = j;
		}
	}
	uint64_t *s = slot_at(t, i, wide);
	s[0] = 0;
	if (wide)
		s[1] = 0;
	t->count--;
}

static inline struct ct_live_part *shard_of(const struct ct_live_map *m, uint64_t h)
{
	return (struct ct_live_part *)&m->part[h >> (64 - CT_LIVE_SHARDS_BITS)];
}

int ct_live_init(struct ct_live_map *m, uint64_t cap)
{
	*m = (struct ct_live_map){0};
	uint64_t each = cap / CT_LIVE_SHARDS < MIN_PART ? MIN_PART : cap / CT_LIVE_SHARDS;
	for (int i = 0; i < CT_LIVE_SHARDS; i++)
		if (part_map(&m->part[i], each, 0, ct_arena_map) < 0) {
			ct_live_release(m);
			return -1;
		}
	return 0;
}

void ct_live_release(struct ct_live_map *m)
{
	for (int i = 0; i < CT_LIVE_SHARDS; i++)
		part_release(&m->part[i], 0);
	part_release(&m->wide, 1);
	m->count = 0;
}

void ct_live_prefetch(const struct ct_live_map *m, uint64_t p)
{
	uint64_t h = live_hash(p);
	const struct ct_live_part *t = shard_of(m, h);
	if (t->cap)
		__builtin_prefetch(slot_at(t, home_slot(h, t->cap), 0));
}

COLD int take_wide(struct ct_live_map *m, uint64_t p, uint32_t *info)
{
	if (!m->wide.count)
		return 0;
	uint64_t *s = part_probe(&m->wide, p, live_hash(p), 1);
	if (!s[0])
		return 0;
	*info = slot_info(s, 1);
	part_erase(&m->wide, s, 1);
	m->count--;
	return 1;
}

int ct_live_take(struct ct_live_map *m, uint64_t p, uint32_t *info)
{
	/* An address that does not pack is never found among packed keys (theirs all do): no test. */
	uint64_t h = live_hash(p);
	struct ct_live_part *t = shard_of(m, h);
	uint64_t *s = part_probe(t, p, h, 0);
	if (CT_LIKELY(s[0])) {
		*info = slot_info(s, 0);
		part_erase(t, s, 0);
		m->count--;
		return 1;
	}
	return take_wide(m, p, info);
}

/* The rare keys: p or info does not pack, p may already be in the wide part, or its part grows. */
COLD int add_slow(struct ct_live_map *m, uint64_t p, uint32_t info, uint32_t *old)
{
	int wide = !packs_address(p) || info >= PACK_INFO_LIMIT;
	uint64_t h = live_hash(p);
	struct ct_live_part *t = wide ? &m->wide : shard_of(m, h);
	int was = ct_live_take(m, p, old);
	uint64_t *s = part_place(t, p, h, wide);
	if (!s)
		return -1; /* out of memory: a block taken is lost too (the matcher counts it dropped) */
	slot_set(s, p, info, wide);
	t->count++;
	m->count++;
	return was;
}

int ct_live_add(struct ct_live_map *m, uint64_t p, uint32_t info, uint32_t *old)
{
	if (CT_UNLIKELY(!packs_address(p) | (info >= PACK_INFO_LIMIT) | (m->wide.count != 0)))
		return add_slow(m, p, info, old);
	uint64_t h = live_hash(p);
	struct ct_live_part *t = shard_of(m, h);
	uint64_t *s = part_probe(t, p, h, 0);
	if (s[0]) {
		*old = slot_info(s, 0);
		slot_set(s, p, info, 0);
		return 1;
	}
	if (CT_UNLIKELY(t->count >= t->grow_at || past_tail(t, s)))
		return add_slow(m, p, info, old); /* grows first; a tail call keeps this path lean */
	slot_set(s, p, info, 0);
	t->count++;
	m->count++;
	return 0;
}

static uint64_t part_each(const struct ct_live_part *t, int wide, void (*fn)(uint64_t, uint32_t, void *),
                          void *arg)
{
	uint64_t n = 0;
	for (uint64_t i = 0; t->slots && i < t->cap + TAIL; i++) {
		const uint64_t *s = slot_at(t, i, wide);
		if (s[0]) {
			fn(slot_key(s, wide), slot_info(s, wide), arg);
			n++;
		}
	}
	return n;
}

uint64_t ct_live_each(const struct ct_live_map *m, void (*fn)(uint64_t p, uint32_t info, void *arg),
                      void *arg)
{
	uint64_t n = part_each(&m->wide, 1, fn, arg);
	for (int i = 0; i < CT_LIVE_SHARDS; i++)
		n += part_each(&m->part[i], 0, fn, arg);
	return n;
}

size_t ct_live_bytes(const struct ct_live_map *m)
{
	size_t n = part_bytes(&m->wide, 1);
	for (int i = 0; i < CT_LIVE_SHARDS; i++)
		n += part_bytes(&m->part[i], 0);
	return n;
}

int64_t ct_live_slot_of(const struct ct_live_map *m, uint64_t p, int *part, uint32_t *info)
{
	uint64_t h = live_hash(p);
	for (int i = 0; i <= CT_LIVE_SHARDS; i++) {
		int wide = i == CT_LIVE_SHARDS;
		const struct ct_live_part *t = wide ? &m->wide : &m->part[i];
		if (!t->cap || (!wide && t != shard_of(m, h)))
			continue;
		const uint64_t *s = part_probe(t, p, h, wide);
		if (s[0]) {
			*part = i;
			*info = slot_info(s, wide);
			return (s - t->slots) / (wide ? 2 : 1);
		}
	}
	return -1;
}

uint64_t ct_live_home(const struct ct_live_map *m, uint64_t p, uint32_t info, int *part)
{
	uint64_t h = live_hash(p);
	int wide = !packs_address(p) || info >= PACK_INFO_LIMIT;
	*part = wide ? CT_LIVE_SHARDS : (int)(h >> (64 - CT_LIVE_SHARDS_BITS));
	const struct ct_live_part *t = wide ? &m->wide : &m->part[*part];
	return t->cap ? home_slot(h, t->cap) : 0;
}

/* ---- alloc infos: open addressing, the key in the slot ----
 * A lookup reads one slot, whose key it compares in place: an index of ids over an array of keys
 * made every lookup two dependent cache misses (the slot, then the key it names), the writer's
 * largest stall. The array keeps only what the leak scan asks by id, the size. */

uint32_t ct_info_hash(uint64_t size, uint32_t stack)
{
#ifdef CT_MAPS_TEST_HASH /* the unit test's: pairs of one size collide, so keys decide */
	(void)stack;
	return (uint32_t)size & 15;
#else
	return (uint32_t)hash64(size * 0x9E3779B97F4A7C15ull ^ stack);
#endif
}

/* The slot of (size, stack) of hash h, or else the empty slot where it goes (the table is never
 * full). */
static struct ct_info_slot *info_find(const struct ct_info_map *m, uint32_t h, uint64_t size, uint32_t stack)
{
	uint32_t mask = m->cap - 1;
	for (uint32_t i = h & mask;; i = (i + 1) & mask) {
		struct ct_info_slot *s = &m->slots[i];
		if (!s->id1 || (s->size == size && s->stack == stack))
			return s;
	}
}

/* Doubles the table and the arrays by id (cap slots hold at most cap / 2 ids). 0, or -1 unchanged. */
static int info_grow(struct ct_info_map *m, uint32_t cap)
{
	/* The first table is filled slowly, a rehashed one at once. */
	struct ct_info_slot *slots = (m->cap ? ct_arena_map_populated : ct_arena_map)(cap * sizeof(*slots));
	void *sizes = m->sizes, *stacks = m->stacks;
	if (!slots ||
	    ct_arena_grow(&sizes, m->cap / 2 * sizeof(*m->sizes), cap / 2 * sizeof(*m->sizes)) < 0) {
		ct_arena_unmap(slots, cap * sizeof(*slots));
		return -1;
	}
	m->sizes = sizes; /* grown: kept even if the rest fails */
	if (ct_arena_grow(&stacks, m->cap / 2 * sizeof(*m->stacks), cap / 2 * sizeof(*m->stacks)) < 0) {
		ct_arena_unmap(slots, cap * sizeof(*slots));
		ct_arena_grow(&sizes, cap / 2 * sizeof(*m->sizes), m->cap / 2 * sizeof(*m->sizes));
		m->sizes = sizes;
		return -1;
	}
	struct ct_info_map old = *m;
	m->slots = slots;
	m->stacks = stacks;
	m->cap = cap;
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.slots[i].id1)
			*info_find(m, ct_info_hash(old.slots[i].size, old.slots[i].stack), old.slots[i].size,
			           old.slots[i].stack) = old.slots[i];
	ct_arena_unmap(old.slots, old.cap * sizeof(*old.slots));
	return 0;
}

int ct_info_init(struct ct_info_map *m, uint32_t cap)
{
	*m = (struct ct_info_map){0};
	return info_grow(m, cap);
}

void ct_info_release(struct ct_info_map *m)
{
	ct_arena_unmap(m->slots, m->cap * sizeof(*m->slots));
	ct_arena_unmap(m->sizes, m->cap / 2 * sizeof(*m->sizes));
	ct_arena_unmap(m->stacks, m->cap / 2 * sizeof(*m->stacks));
	*m = (struct ct_info_map){0};
}

void ct_info_prefetch(const struct ct_info_map *m, uint32_t hash)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[hash & (m->cap - 1)]);
}

uint32_t ct_info_intern_hashed(struct ct_info_map *m, uint32_t hash, uint64_t size, uint32_t stack,
                               int *is_new)
{
	struct ct_info_slot *s = info_find(m, hash, size, stack);
	*is_new = !s->id1;
	if (s->id1)
		return s->id1 - 1;
	if ((uint64_t)(m->count + 1) * 2 > m->cap) {
		if (info_grow(m, m->cap * 2) < 0)
			return UINT32_MAX;
		s = info_find(m, hash, size, stack); /* its place in the new table */
	}
	uint32_t id = m->count++;
	m->sizes[id] = size;
	m->stacks[id] = stack;
	*s = (struct ct_info_slot){size, stack, id + 1};
	return id;
}

uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new)
{
	return ct_info_intern_hashed(m, ct_info_hash(size, stack), size, stack, is_new);
}
