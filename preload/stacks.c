/* SPDX-License-Identifier: MIT */
/* The stack trie: each distinct backtrace is stored once, as a path of (parent, return address)
 * nodes from the outermost frame in; an event carries only its innermost node's id. Node ids are
 * dense and never change, so the writer streams new nodes as FRAME records in id order.
 * Interning takes one lock, but only on a thread's stack-cache miss (tracker.c). Runs inside hooks. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "ctrack/format.h"
#include "idindex.h"
#include "shim.h"

#define MAX_NODES (1u << 24) /* 16 M distinct frames */
/* Nodes live in chunks mapped as the trie grows (48 KiB each), never moved: the writer reads nodes
 * below node_count without the lock. A process under `ulimit -d` or `-v` gets only what it uses,
 * and the chunks stay when tracing stops early: they are small. */
#define CHUNK_BITS 12
#define CHUNK_NODES (1u << CHUNK_BITS)
#define CHUNKS (MAX_NODES / CHUNK_NODES)

struct chunk {
	uint32_t parents[CHUNK_NODES];
	uintptr_t ips[CHUNK_NODES];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *_Atomic chunks[CHUNKS];
static _Atomic uint32_t node_count; /* published: nodes [0, node_count) are readable */
static struct ct_idx index_;        /* (parent, ip) -> node id; ids are >= CT_STACK_FIRST, never 0 */
/* The path of the stack interned last (lock held): its frames outermost first, the node each one
 * reached, and its root. A stack that a thread's cache missed mostly shares its outer frames with the
 * one interned before it (the same phase of the program): those are found by comparing return
 * addresses, not by a lookup each (cc1: 47,000 interns of 20-40 frames, 1,145 instructions each
 * before, 596 after). Nodes never change, so the path stays true until the index is forgotten
 * (ct_stacks_reset_index). */
static struct {
	int n;
	uint32_t root;
	uintptr_t ips[CT_DEPTH_MAX];
	uint32_t nodes[CT_DEPTH_MAX];
} last;

static uint32_t hash_of(uint32_t parent, uintptr_t ip)
{
#ifdef CT_STACKS_TEST_HASH /* the unit test's: every node of one ip collides, so keys decide */
	(void)parent;
	return (uint32_t)ip & 15;
#else
	uint64_t h = ((uint64_t)ip ^ ((uint64_t)parent << 40) ^ parent) * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 32);
#endif
}

struct key {
	uint32_t parent;
	uintptr_t ip;
};

static struct chunk *chunk_of(uint32_t id)
{
	return atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_relaxed);
}

#define PARENT(id) (chunk_of(id)->parents[(id) & (CHUNK_NODES - 1)])
#define IP(id) (chunk_of(id)->ips[(id) & (CHUNK_NODES - 1)])

static int same(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	return PARENT(id) == k->parent && IP(id) == k->ip;
}

/* The chunk that holds node id, mapped if needed (lock held). NULL when memory is out. */
static struct chunk *chunk_for(uint32_t id)
{
	struct chunk *c = chunk_of(id);
	if (!c && (c = ct_arena_map(sizeof(*c))))
		atomic_store_explicit(&chunks[id >> CHUNK_BITS], c, memory_order_release);
	return c;
}

/* Doubles the index (the first call makes it, 32 KiB). 0, or -1 with the index unchanged. */
static int grow(void)
{
	uint32_t cap = index_.cap ? index_.cap * 2 : 1u << 12;
	struct ct_idx_slot *slots =
	    (index_.cap ? ct_arena_map_populated : ct_arena_map)(cap * sizeof(*slots));
	if (!slots)
		return -1;
	ct_arena_unmap(ct_idx_rehash(&index_, slots, cap), cap / 2 * sizeof(*slots));
	return 0;
}

static int setup(void)
{
	if (!chunk_for(0) || grow() < 0)
		return -1;
	PARENT(CT_STACK_ROOT) = PARENT(CT_STACK_TRUNCATED) = CT_STACK_ROOT;
	atomic_store_explicit(&node_count, CT_STACK_FIRST, memory_order_release);
	return 0;
}

/* Called with the lock held. Returns 0 when the trie is full or memory is out. */
static uint32_t child(uint32_t parent, uintptr_t ip)
{
	if (ct_idx_full(&index_) && grow() < 0)
		return 0;
	struct key k = {parent, ip};
	uint32_t h = hash_of(parent, ip);
	struct ct_idx_slot *s = ct_idx_find(&index_, h, same, &k);
	if (s->id)
		return s->id;
	uint32_t id = atomic_load_explicit(&node_count, memory_order_relaxed);
	if (id >= MAX_NODES || !chunk_for(id))
		return 0;
	PARENT(id) = parent;
	IP(id) = ip;
	ct_idx_put(&index_, s, h, id);
	atomic_store_explicit(&node_count, id + 1, memory_order_release);
	return id;
}

/* Called with the lock held. frames[] is innermost first: depth d is frames[n - 1 - d]. */
static uint32_t intern_locked(const uintptr_t *frames, int n, int truncated)
{
	uint32_t root = truncated ? CT_STACK_TRUNCATED : CT_STACK_ROOT, node = root;
	int d = 0;

	if (!index_.cap && setup() < 0)
		return 0;
	if (last.root == root)
		for (; d < n && d < last.n && last.ips[d] == frames[n - 1 - d]; d++)
			node = last.nodes[d];
	for (; d < n; d++) {
		node = child(node, frames[n - 1 - d]);
		if (!node)
			break;
		if (d < CT_DEPTH_MAX) {
			last.ips[d] = frames[n - 1 - d];
			last.nodes[d] = node;
		}
	}
	last.n = d < CT_DEPTH_MAX ? d : CT_DEPTH_MAX;
	last.root = root;
	return node;
}

uint32_t ct_stacks_intern(const uintptr_t *frames, int n, int truncated)
{
	pthread_mutex_lock(&lock);
	uint32_t node = intern_locked(frames, n, truncated);
	pthread_mutex_unlock(&lock);
	return node;
}

/* A program thread holds the lock for microseconds, unless it died holding it (a fault in the
 * shim): the writer, which must still end the trace then, waits 100 ms at most. */
uint32_t ct_stacks_intern_patient(const uintptr_t *frames, int n, int truncated)
{
	for (int tries = 0; pthread_mutex_trylock(&lock) != 0; tries++) {
		if (tries == 2000)
			return 0;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	uint32_t node = intern_locked(frames, n, truncated);
	pthread_mutex_unlock(&lock);
	return node;
}

uint32_t ct_stacks_count(void)
{
	return atomic_load_explicit(&node_count, memory_order_acquire);
}

void ct_stacks_node(uint32_t id, uint32_t *parent, uintptr_t *ip)
{
	*parent = PARENT(id);
	*ip = IP(id);
}

void ct_stacks_reset_index(void)
{
	pthread_mutex_lock(&lock);
	if (index_.cap)
		memset(index_.slots, 0, index_.cap * sizeof(*index_.slots));
	index_.count = 0;
	last.n = 0;
	pthread_mutex_unlock(&lock);
}

void ct_stacks_lock(void)
{
	pthread_mutex_lock(&lock);
}
void ct_stacks_unlock(void)
{
	pthread_mutex_unlock(&lock);
}
