/* SPDX-License-Identifier: MIT */
/* The stack trie: each distinct backtrace is stored once, as a path of (parent, return address)
 * nodes from the outermost frame in; an event carries only its innermost node's id. Node ids are
 * dense and never change, so the writer streams new nodes as FRAME records in id order.
 * Interning takes one lock, but only on a thread's stack-cache miss (tracker.c). Runs inside hooks. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "ctrack/format.h"
#include "shim.h"

#define MAX_NODES (1u << 24) /* 16 M distinct frames: 256 MiB reserved, touched as used */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *parents;
static uintptr_t *ips;
static _Atomic uint32_t node_count; /* published: nodes [0, node_count) are readable */
static uint32_t *table;             /* open addressing: node ids, 0 = empty slot */
static uint32_t table_cap;          /* power of two */

static uint32_t slot_of(uint32_t parent, uintptr_t ip, uint32_t cap)
{
	uint64_t h = ((uint64_t)ip ^ ((uint64_t)parent << 40) ^ parent) * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 32) & (cap - 1);
}

static int setup(void)
{
	parents = ct_arena_map(MAX_NODES * sizeof(*parents));
	ips = ct_arena_map(MAX_NODES * sizeof(*ips));
	table_cap = 1u << 16;
	table = ct_arena_map(table_cap * sizeof(*table));
	if (!parents || !ips || !table)
		return -1;
	parents[CT_STACK_ROOT] = parents[CT_STACK_TRUNCATED] = CT_STACK_ROOT;
	atomic_store_explicit(&node_count, CT_STACK_FIRST, memory_order_release);
	return 0;
}

static int grow(void)
{
	uint32_t cap = table_cap * 2;
	uint32_t *t = ct_arena_map(cap * sizeof(*t));
	if (!t)
		return -1;
	for (uint32_t i = 0; i < table_cap; i++) {
		uint32_t id = table[i];
		if (!id)
			continue;
		uint32_t s = slot_of(parents[id], ips[id], cap);
		while (t[s])
			s = (s + 1) & (cap - 1);
		t[s] = id;
	}
	ct_arena_unmap(table, table_cap * sizeof(*table));
	table = t;
	table_cap = cap;
	return 0;
}

/* Called with the lock held. Returns 0 when the trie is full or memory is out. */
static uint32_t child(uint32_t parent, uintptr_t ip)
{
	uint32_t s = slot_of(parent, ip, table_cap);
	for (uint32_t id; (id = table[s]); s = (s + 1) & (table_cap - 1))
		if (parents[id] == parent && ips[id] == ip)
			return id;
	uint32_t id = atomic_load_explicit(&node_count, memory_order_relaxed);
	if (id >= MAX_NODES)
		return 0;
	parents[id] = parent;
	ips[id] = ip;
	table[s] = id;
	atomic_store_explicit(&node_count, id + 1, memory_order_release);
	if ((id + 1) * 2 > table_cap && grow() < 0)
		return 0;
	return id;
}

uint32_t ct_stacks_intern(const uintptr_t *frames, int n, int truncated)
{
	pthread_mutex_lock(&lock);
	uint32_t node = truncated ? CT_STACK_TRUNCATED : CT_STACK_ROOT;
	if (!table && setup() < 0)
		node = 0;
	for (int i = n - 1; i >= 0 && table; i--) {
		node = child(node, frames[i]);
		if (!node)
			break;
	}
	pthread_mutex_unlock(&lock);
	return node;
}

uint32_t ct_stacks_count(void)
{
	return atomic_load_explicit(&node_count, memory_order_acquire);
}

void ct_stacks_node(uint32_t id, uint32_t *parent, uintptr_t *ip)
{
	*parent = parents[id];
	*ip = ips[id];
}

void ct_stacks_reset_index(void)
{
	pthread_mutex_lock(&lock);
	if (table)
		memset(table, 0, table_cap * sizeof(*table));
	pthread_mutex_unlock(&lock);
}

void ct_stacks_lock(void) { pthread_mutex_lock(&lock); }
void ct_stacks_unlock(void) { pthread_mutex_unlock(&lock); }
