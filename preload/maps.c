/* SPDX-License-Identifier: MIT */
/* The matcher's two hash tables (maps.h). Live blocks: open addressing with linear probing at
 * most half full, keys and values in the slots so a lookup touches one cache line, deletion by
 * backward shift (the one table that erases, so not an id index). Alloc infos: an id index over an
 * array of keys. Memory from the arena; one thread at a time (no locks). */
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

static int live_map(struct ct_live_map *m, uint64_t cap, void *(*map)(size_t))
{
	m->slots = map(cap * sizeof(*m->slots));
	m->cap = cap;
	m->count = 0;
	return m->slots ? 0 : -1;
}

int ct_live_init(struct ct_live_map *m, uint64_t cap)
{
	return live_map(m, cap, ct_arena_map);
}

void ct_live_prefetch(const struct ct_live_map *m, uint64_t p)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[hash64(p) & (m->cap - 1)]);
}

uint64_t *ct_live_find(struct ct_live_map *m, uint64_t p)
{
	for (uint64_t i = hash64(p) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == p)
			return &m->slots[i].val;
		if (!m->slots[i].key)
			return NULL;
	}
}

static void put(struct ct_live_map *m, uint64_t p, uint64_t v)
{
	uint64_t i = hash64(p) & (m->cap - 1);
	while (m->slots[i].key)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = (struct ct_live_slot){p, v};
	m->count++;
}

void ct_live_release(struct ct_live_map *m)
{
	ct_arena_unmap(m->slots, m->cap * sizeof(*m->slots));
	*m = (struct ct_live_map){0};
}

/* Room for one more key at most half full: 0, or -1 when the table cannot grow and is too full. */
static int live_room(struct ct_live_map *m)
{
	if ((m->count + 1) * 2 > m->cap) {
		struct ct_live_map n;
		if (live_map(&n, m->cap * 2, ct_arena_map_populated) == 0) { /* filled at once */
			for (uint64_t i = 0; i < m->cap; i++)
				if (m->slots[i].key)
					put(&n, m->slots[i].key, m->slots[i].val);
			ct_live_release(m);
			*m = n;
		} else if ((m->count + 1) * 8 > m->cap * 7) {
			return -1; /* no memory to grow: fuller than this, probes get too long */
		}
	}
	return 0;
}

int ct_live_insert(struct ct_live_map *m, uint64_t p, uint64_t v)
{
	if (live_room(m) < 0)
		return -1;
	put(m, p, v);
	return 0;
}

int ct_live_add(struct ct_live_map *m, uint64_t p, uint64_t v, uint64_t *old)
{
	uint64_t i = hash64(p) & (m->cap - 1);
	for (; m->slots[i].key; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == p) {
			*old = m->slots[i].val;
			m->slots[i].val = v;
			return 1;
		}
	struct ct_live_slot *was = m->slots;
	if (live_room(m) < 0)
		return -1;
	if (CT_UNLIKELY(m->slots != was)) { /* grown: its place in the new table */
		put(m, p, v);
		return 0;
	}
	m->slots[i] = (struct ct_live_slot){p, v};
	m->count++;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void ct_live_erase(struct ct_live_map *m, uint64_t *val)
{
	uint64_t mask = m->cap - 1;
	uint64_t i =
	    (uint64_t)((struct ct_live_slot *)((char *)val - offsetof(struct ct_live_slot, val)) - m->slots);
	for (uint64_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		uint64_t home = hash64(m->slots[j].key) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->count--;
}

/* ---- alloc infos: open addressing, the key in the slot ----
 * A lookup reads one slot, whose key it compares in place: an index of ids over an array of keys
 * made every lookup two dependent cache misses (the slot, then the key it names), the writer's
 * largest stall. The array keeps only what the leak scan asks by id, the size. */

static uint32_t info_hash(uint64_t size, uint32_t stack)
{
#ifdef CT_MAPS_TEST_HASH /* the unit test's: pairs of one size collide, so keys decide */
	(void)stack;
	return (uint32_t)size & 15;
#else
	return (uint32_t)hash64(size * 0x9E3779B97F4A7C15ull ^ stack);
#endif
}

/* The slot of (size, stack), or else the empty slot where it goes (the table is never full). */
static struct ct_info_slot *info_find(const struct ct_info_map *m, uint64_t size, uint32_t stack)
{
	uint32_t mask = m->cap - 1;
	for (uint32_t i = info_hash(size, stack) & mask;; i = (i + 1) & mask) {
		struct ct_info_slot *s = &m->slots[i];
		if (!s->id1 || (s->size == size && s->stack == stack))
			return s;
	}
}

/* Doubles the table and the size array (cap slots hold at most cap / 2 ids). 0, or -1 unchanged. */
static int info_grow(struct ct_info_map *m, uint32_t cap)
{
	/* The first table is filled slowly, a rehashed one at once. */
	struct ct_info_slot *slots = (m->cap ? ct_arena_map_populated : ct_arena_map)(cap * sizeof(*slots));
	void *sizes = m->sizes;
	if (!slots ||
	    ct_arena_grow(&sizes, m->cap / 2 * sizeof(*m->sizes), cap / 2 * sizeof(*m->sizes)) < 0) {
		ct_arena_unmap(slots, cap * sizeof(*slots));
		return -1;
	}
	struct ct_info_map old = *m;
	m->slots = slots;
	m->sizes = sizes;
	m->cap = cap;
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.slots[i].id1)
			*info_find(m, old.slots[i].size, old.slots[i].stack) = old.slots[i];
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
	*m = (struct ct_info_map){0};
}

void ct_info_prefetch(const struct ct_info_map *m, uint64_t size, uint32_t stack)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[info_hash(size, stack) & (m->cap - 1)]);
}

uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new)
{
	struct ct_info_slot *s = info_find(m, size, stack);
	*is_new = !s->id1;
	if (s->id1)
		return s->id1 - 1;
	if ((uint64_t)(m->count + 1) * 2 > m->cap) {
		if (info_grow(m, m->cap * 2) < 0)
			return UINT32_MAX;
		s = info_find(m, size, stack); /* its place in the new table */
	}
	uint32_t id = m->count++;
	m->sizes[id] = size;
	*s = (struct ct_info_slot){size, stack, id + 1};
	return id;
}
