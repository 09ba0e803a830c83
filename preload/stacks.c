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
/* Nodes live in chunks mapped as the trie grows (64 KiB each), never moved: the writer reads nodes
 * below node_count without the lock. A process under `ulimit -d` or `-v` gets only what it uses,
 * and the chunks stay when tracing stops early: they are small. */
#define CHUNK_BITS 12
#define CHUNK_NODES (1u << CHUNK_BITS)
#define CHUNKS (MAX_NODES / CHUNK_NODES)

/* A node in one 16-byte piece: a lookup that finds a slot reads one line to check its key. */
struct node {
	uintptr_t ip;
	uint32_t parent;
};

struct chunk {
	struct node nodes[CHUNK_NODES];
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
	uint64_t paths[CT_DEPTH_MAX]; /* path_step's value at each frame */
} last;

/* A node's hash in the index is its path's (the return addresses from the root to it), not its
 * (parent, ip) key's, though a path and a node are one and the same thing: so the hashes of every
 * frame of a new stack are known before the first lookup, and the index's slots for all of them
 * are asked for at once (prefetched) instead of one cache miss after the other (cc1: 15,000 new
 * stacks of 20-40 frames, the index a few MiB). */
static uint64_t path_seed(uint32_t root)
{
	return 0x9E3779B97F4A7C15ull + root;
}

static inline uint64_t path_step(uint64_t path, uintptr_t ip)
{
	uint64_t h = (path ^ ip) * 0xff51afd7ed558ccdull;
	return h ^ h >> 32;
}

static inline uint32_t hash_of(uint64_t path, uintptr_t ip)
{
#ifdef CT_STACKS_TEST_HASH /* the unit test's: every node of one ip collides, so keys decide */
	(void)path;
	return (uint32_t)ip & 15;
#else
	(void)ip;
	return (uint32_t)path;
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

#define NODE(id) (chunk_of(id)->nodes[(id) & (CHUNK_NODES - 1)])
#define PARENT(id) (NODE(id).parent)
#define IP(id) (NODE(id).ip)

static int same(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	const struct node *x = &NODE(id);
	return x->parent == k->parent && x->ip == k->ip;
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

/* Called with the lock held; h: the node's hash (hash_of). Returns 0 when the trie is full or memory
 * is out. */
static uint32_t child(uint32_t parent, uintptr_t ip, uint32_t h)
{
	if (ct_idx_full(&index_) && grow() < 0)
		return 0;
	struct key k = {parent, ip};
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

/* The node a lookup of hash h will compare first, asked for (lock held): the slots were asked for
 * just before, all at once, and the nodes they name are the lookups' second miss each, which
 * without this came one after the other (cc1: 15,000 re-interns of about 21 frames, most of the
 * program thread's time in the shim spent waiting for them). Reading the slots waits for the slot
 * misses together; the nodes then arrive together too. */
static int any(const void *ctx, uint32_t id)
{
	(void)ctx, (void)id;
	return 1;
}

static inline void prefetch_node(uint32_t h)
{
	const struct ct_idx_slot *s = ct_idx_find(&index_, h, any, NULL); /* the first of hash h */
	if (s->id)
		__builtin_prefetch(&NODE(s->id));
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
	/* Every new frame's path (as far as `last` keeps them), and its slot in the index asked for. */
	uint64_t path = d ? last.paths[d - 1] : path_seed(root);
	int ahead = n < CT_DEPTH_MAX ? n : CT_DEPTH_MAX;
	for (int k = d; k < ahead; k++) {
		last.paths[k] = path = path_step(path, frames[n - 1 - k]);
		__builtin_prefetch(&index_.slots[hash_of(path, frames[n - 1 - k]) & (index_.cap - 1)]);
	}
	for (int k = d; k < ahead; k++)
		prefetch_node(hash_of(last.paths[k], frames[n - 1 - k]));
	for (; d < n; d++) {
		uintptr_t ip = frames[n - 1 - d];
		if (d >= CT_DEPTH_MAX) /* the writer's stacks may be deeper than `last` */
			path = path_step(path, ip);
		node = child(node, ip, hash_of(d < CT_DEPTH_MAX ? last.paths[d] : path, ip));
		if (!node)
			break;
		if (d < CT_DEPTH_MAX) {
			last.ips[d] = ip;
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
