/* SPDX-License-Identifier: MIT */
/* The matcher's two hash tables (maps.h). Live blocks: open addressing with linear probing at
 * most half full, keys and values in the slots so a lookup touches one cache line, deletion by
 * backward shift (the one table that erases, so not an id index). Alloc infos: an id index over an
 * array of keys. Memory from the arena; one thread at a time (no locks). */
#include <string.h>

#include "maps.h"
#include "shim.h"

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

int ct_live_insert(struct ct_live_map *m, uint64_t p, uint64_t v)
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
	put(m, p, v);
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

/* ---- alloc infos: an id index (common/idindex.h) over an array of keys ---- */

static uint32_t info_hash(uint64_t size, uint32_t stack)
{
#ifdef CT_MAPS_TEST_HASH /* the unit test's: pairs of one size collide, so keys decide */
	(void)stack;
	return (uint32_t)size & 15;
#else
	return (uint32_t)hash64(size * 0x9E3779B97F4A7C15ull ^ stack);
#endif
}

/* Doubles the index and the key array (cap slots hold at most cap / 2 ids). 0, or -1 unchanged. */
static int info_grow(struct ct_info_map *m, uint32_t cap)
{
	/* The first index is filled slowly, a rehashed one at once. */
	struct ct_idx_slot *slots =
	    (m->index.cap ? ct_arena_map_populated : ct_arena_map)(cap * sizeof(*slots));
	void *keys = m->keys;
	if (!slots ||
	    ct_arena_grow(&keys, m->index.cap / 2 * sizeof(*m->keys), cap / 2 * sizeof(*m->keys)) < 0) {
		ct_arena_unmap(slots, cap * sizeof(*slots));
		return -1;
	}
	m->keys = keys;
	ct_arena_unmap(ct_idx_rehash(&m->index, slots, cap), m->index.cap ? cap / 2 * sizeof(*slots) : 0);
	return 0;
}

int ct_info_init(struct ct_info_map *m, uint32_t cap)
{
	*m = (struct ct_info_map){0};
	return info_grow(m, cap);
}

void ct_info_release(struct ct_info_map *m)
{
	ct_arena_unmap(m->index.slots, m->index.cap * sizeof(*m->index.slots));
	ct_arena_unmap(m->keys, m->index.cap / 2 * sizeof(*m->keys));
	*m = (struct ct_info_map){0};
}

struct info_probe {
	const struct ct_info_key *keys;
	uint64_t size;
	uint32_t stack;
};

static int same_info(const void *ctx, uint32_t id1)
{
	const struct info_probe *p = ctx;
	return p->keys[id1 - 1].size == p->size && p->keys[id1 - 1].stack == p->stack;
}

void ct_info_prefetch(const struct ct_info_map *m, uint64_t size, uint32_t stack, int key)
{
	if (!m->index.cap)
		return;
	const struct ct_idx_slot *s = &m->index.slots[info_hash(size, stack) & (m->index.cap - 1)];
	if (!key)
		__builtin_prefetch(s);
	else if (s->id) /* likely the pair itself, whose key is compared */
		__builtin_prefetch(&m->keys[s->id - 1]);
}

uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new)
{
	uint32_t h = info_hash(size, stack);
	struct info_probe probe = {m->keys, size, stack};
	struct ct_idx_slot *s = ct_idx_find(&m->index, h, same_info, &probe);
	*is_new = !s->id;
	if (s->id)
		return s->id - 1;
	if (ct_idx_full(&m->index)) {
		if (info_grow(m, m->index.cap * 2) < 0)
			return UINT32_MAX;
		probe.keys = m->keys; /* its place in the new index */
		s = ct_idx_find(&m->index, h, same_info, &probe);
	}
	uint32_t id = m->index.count;
	m->keys[id] = (struct ct_info_key){size, stack};
	ct_idx_put(&m->index, s, h, id + 1);
	return id;
}
