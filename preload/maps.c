/* SPDX-License-Identifier: MIT */
/* The matcher's two hash tables (maps.h): live blocks and alloc infos. Open addressing with linear
 * probing at most half full, keys stored in the slots so a lookup touches one cache line; memory
 * from the arena. One thread at a time (no locks). */
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

int ct_live_init(struct ct_live_map *m, uint64_t cap)
{
	m->slots = ct_arena_map(cap * sizeof(*m->slots));
	m->cap = cap;
	m->count = 0;
	return m->slots ? 0 : -1;
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
		if (ct_live_init(&n, m->cap * 2) == 0) {
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
	uint64_t i = (uint64_t)((struct ct_live_slot *)((char *)val - offsetof(struct ct_live_slot, val)) - m->slots);
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

int ct_info_init(struct ct_info_map *m, uint32_t cap)
{
	m->slots = ct_arena_map(cap * sizeof(*m->slots));
	m->cap = cap;
	m->count = 0;
	return m->slots ? 0 : -1;
}

static uint32_t info_slot(uint64_t size, uint32_t stack, uint32_t cap)
{
	return (uint32_t)hash64(size * 0x9E3779B97F4A7C15ull ^ stack) & (cap - 1);
}

void ct_info_release(struct ct_info_map *m)
{
	ct_arena_unmap(m->slots, m->cap * sizeof(*m->slots));
	*m = (struct ct_info_map){0};
}

static int info_grow(struct ct_info_map *m)
{
	uint32_t cap = m->cap * 2;
	struct ct_info_slot *t = cap ? ct_arena_map(cap * sizeof(*t)) : NULL;
	if (!t)
		return -1;
	for (uint32_t k = 0; k < m->cap; k++) {
		if (!m->slots[k].id1)
			continue;
		uint32_t i = info_slot(m->slots[k].size, m->slots[k].stack, cap);
		while (t[i].id1)
			i = (i + 1) & (cap - 1);
		t[i] = m->slots[k];
	}
	ct_arena_unmap(m->slots, m->cap * sizeof(*t));
	m->slots = t;
	m->cap = cap;
	return 0;
}

uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new)
{
	uint32_t i = info_slot(size, stack, m->cap);
	for (; m->slots[i].id1; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].size == size && m->slots[i].stack == stack) {
			*is_new = 0;
			return m->slots[i].id1 - 1;
		}
	*is_new = 1;
	if ((m->count + 1) * 2 > m->cap) {
		if (info_grow(m) == 0) /* a new table: find the pair's place in it */
			for (i = info_slot(size, stack, m->cap); m->slots[i].id1; i = (i + 1) & (m->cap - 1))
				;
		else if ((m->count + 1) * 8 > m->cap * 7)
			return UINT32_MAX; /* no memory to grow: fuller than this, probes get too long */
	}
	uint32_t id = m->count++;
	m->slots[i] = (struct ct_info_slot){size, stack, id + 1};
	return id;
}
