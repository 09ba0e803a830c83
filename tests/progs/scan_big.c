/* SPDX-License-Identifier: MIT */
/* A large, pointer-rich heap at exit with all four leak classes, for the leak scan's speed and its
 * two-thread marking (issue 25): `scan_big N [THREADS]` allocates N blocks (a fixed pseudo-random
 * sequence: sizes 16 to 120 bytes mostly, some of 128 to 1023, some of 2 to 8 KiB, one in 4096 of
 * 200,000 bytes, an mmapped chunk), THREADS more threads (0 by default) building their share in
 * their own arenas, joined before exit. Each block's first word is 0 and its other words are
 * pointers or odd numbers above the user address space, so no memcheck heuristic applies. The classes, by
 * construction: still reachable  held by a start pointer from the global table or from a reachable block (and
 *                    the table itself);
 *   possibly lost    held only by an interior pointer (+16) from a reachable block or the table, or
 *                    by a start pointer from a possibly lost block;
 *   definitely lost  the head of a lost tree: nothing points to it;
 *   indirectly lost  a node of a lost tree below its head (a start pointer from its parent).
 * Blocks of every class also point to reachable blocks (start or +16) and possibly lost ones (+16),
 * which changes no class. A slot, once it holds a pointer, is never written again. The program
 * prints its own figures as "own: DB DN IB IN PB PN RB RN" (bytes and blocks of each class, in that
 * order) with write(2): stdio's buffer would be one more block. Its bookkeeping (every block's
 * address) is freed before exit and its stack scrubbed, so no stale word holds a lost block. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define TREE 64 /* nodes of a lost tree at most */
#define MAX_THREADS 8

enum { DEF, IND, POS, REA, CLASSES };

/* What one thread builds, and its bookkeeping: (block, size) pairs of the reachable and possibly
 * lost blocks so far, and the lost tree being built. */
struct part {
	uint64_t seed;
	size_t n;
	uintptr_t *table; /* its share of the table: n / 4 + 4096 slots */
	size_t slots;
	uint64_t bytes[CLASSES], blocks[CLASSES];
	uintptr_t *reach, *poss;
	size_t nreach, nposs;
	uintptr_t *tree[TREE];
	size_t tsize[TREE], ntree;
};

static uintptr_t *volatile table; /* the roots: a reachable block */

static uint64_t next(struct part *p)
{
	p->seed = p->seed * 6364136223846793005ull + 1442695040888963407ull;
	return p->seed >> 17;
}

static size_t pick_size(struct part *p)
{
	uint64_t r = next(p);
	if (r % 4096 == 0)
		return 200000; /* above the mmap threshold: a chunk of its own */
	if (r % 100 < 5)
		return 2048 + (size_t)(r >> 12) % 6144;
	if (r % 100 < 30)
		return 128 + (size_t)(r >> 12) % 896;
	return 16 + 8 * (size_t)((r >> 12) % 14);
}

/* A block of size bytes of class cls: word 0 is 0, the others odd numbers above the user address
 * space (no pointer, not even an interior one) for now. */
static uintptr_t *block(struct part *p, size_t size, int cls)
{
	uintptr_t *b = malloc(size);
	if (!b)
		abort();
	b[0] = 0;
	for (size_t i = 1; i < size / sizeof(*b); i++)
		b[i] = (uintptr_t)(next(p) | 1 | 0xffffull << 48);
	p->bytes[cls] += size;
	p->blocks[cls]++;
	return b;
}

static void keep(uintptr_t *v, size_t *n, uintptr_t *b, size_t size)
{
	v[2 * *n] = (uintptr_t)b;
	v[2 * *n + 1] = size;
	(*n)++;
}

/* A slot holds a pointer once written (an even value, never 0). */
static int taken(uintptr_t w)
{
	return w && !(w & 1);
}

/* Writes value into a free slot (not word 0) of b, of size bytes, tried a few times at random; 0
 * when none was found. */
static int put(struct part *p, uintptr_t *b, size_t size, uintptr_t value)
{
	size_t words = size / sizeof(uintptr_t);
	for (int tries = 0; words > 1 && tries < 4; tries++) {
		size_t s = 1 + (size_t)(next(p) % (words - 1));
		if (!taken(b[s])) {
			b[s] = value;
			return 1;
		}
	}
	return 0;
}

/* Puts value into a free slot of a random block of v (n pairs); 0 when none was found. */
static int put_any(struct part *p, const uintptr_t *v, size_t n, uintptr_t value)
{
	for (int tries = 0; n && tries < 8; tries++) {
		size_t k = (size_t)(next(p) % n);
		if (put(p, (uintptr_t *)v[2 * k], v[2 * k + 1], value))
			return 1;
	}
	return 0;
}

/* Hangs value from a random reachable block (7 times in 8), else from the table. */
static void hang(struct part *p, uintptr_t value)
{
	if (next(p) % 8 && put_any(p, p->reach, p->nreach, value))
		return;
	for (size_t s = (size_t)(next(p) % p->slots), i = 0; i < p->slots; i++, s = (s + 1) % p->slots)
		if (!taken(p->table[s])) {
			p->table[s] = value;
			return;
		}
	abort(); /* the table has room: about one block in 6 hangs from it */
}

/* Points a free slot of b into a random reachable block (its start, or 16 bytes in) or possibly
 * lost one (16 bytes in). */
static void decorate(struct part *p, uintptr_t *b, size_t size)
{
	if (p->nposs && next(p) % 4 == 0) {
		put(p, b, size, p->poss[2 * (next(p) % p->nposs)] + 16);
	} else if (p->nreach) {
		size_t k = (size_t)(next(p) % p->nreach);
		put(p, b, size, p->reach[2 * k] + (next(p) % 2 && p->reach[2 * k + 1] >= 32 ? 16 : 0));
	}
}

/* One step: a reachable block (50 in 100), a possibly lost one (13), or a node of a lost tree. */
static void step(struct part *p)
{
	uint64_t r = next(p) % 100;
	size_t size = pick_size(p);
	if (r < 50) {
		uintptr_t *b = block(p, size, REA);
		hang(p, (uintptr_t)b);
		decorate(p, b, size);
		keep(p->reach, &p->nreach, b, size);
	} else if (r < 63) {
		size = size < 32 ? 32 : size; /* +16 is inside, and not the allocator's next header */
		uintptr_t *b = block(p, size, POS);
		if (r < 60 || !put_any(p, p->poss, p->nposs, (uintptr_t)b))
			hang(p, (uintptr_t)b + 16);
		decorate(p, b, size);
		keep(p->poss, &p->nposs, b, size);
	} else {
		int below = p->ntree && p->ntree < TREE && next(p) % 6;
		uintptr_t *b = block(p, size, below ? IND : DEF);
		if (below) {
			size_t k = (size_t)(next(p) % p->ntree);
			uintptr_t pair[2] = {(uintptr_t)p->tree[k], p->tsize[k]};
			if (!put_any(p, pair, 1, (uintptr_t)b)) { /* its parent is full: a head after all */
				p->bytes[IND] -= size, p->blocks[IND]--;
				p->bytes[DEF] += size, p->blocks[DEF]++;
				below = 0;
			}
		}
		if (!below)
			p->ntree = 0;
		decorate(p, b, size);
		p->tree[p->ntree] = b;
		p->tsize[p->ntree++] = size;
	}
}

static void *build(void *arg)
{
	struct part *p = arg;
	for (size_t i = 0; i < p->n; i++)
		step(p);
	return NULL;
}

/* Overwrites the stack below the caller, where a dead frame may still hold a block's address. */
static NOINLINE void scrub(void)
{
	volatile char pad[16384];
	memset((char *)pad, 0, sizeof(pad));
}

static NOINLINE void print_own(const struct part *parts, int nparts)
{
	uint64_t v[2 * CLASSES] = {0};
	for (int t = 0; t < nparts; t++)
		for (int c = 0; c < CLASSES; c++) {
			v[2 * c] += parts[t].bytes[c];
			v[2 * c + 1] += parts[t].blocks[c];
		}
	char line[256];
	int len = snprintf(line, sizeof(line), "own: %llu %llu %llu %llu %llu %llu %llu %llu\n",
	                   (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
	                   (unsigned long long)v[3], (unsigned long long)v[4], (unsigned long long)v[5],
	                   (unsigned long long)v[6], (unsigned long long)v[7]);
	(void)!write(1, line, (size_t)len);
}

static NOINLINE void run(size_t n, int threads, struct part *parts)
{
	size_t share = n / (size_t)(threads + 1) / 4 + 4096, slots = (size_t)(threads + 1) * share;
	table = calloc(slots, sizeof(uintptr_t));
	if (!table)
		abort();
	pthread_t tid[MAX_THREADS + 1];
	for (int t = 0; t <= threads; t++) {
		struct part *p = &parts[t];
		p->seed = 0x5eed0000u + (uint64_t)t;
		p->n = n / (size_t)(threads + 1);
		p->table = table + (size_t)t * share;
		p->slots = share;
		p->reach = malloc(2 * p->n * sizeof(*p->reach) + 16);
		p->poss = malloc(2 * p->n * sizeof(*p->poss) + 16);
		if (!p->reach || !p->poss)
			abort();
		if (t && pthread_create(&tid[t], NULL, build, p))
			abort();
	}
	build(&parts[0]);
	for (int t = 1; t <= threads; t++)
		pthread_join(tid[t], NULL);
	parts[0].bytes[REA] += slots * sizeof(uintptr_t);
	parts[0].blocks[REA]++;
	for (int t = 0; t <= threads; t++) {
		free(parts[t].reach);
		free(parts[t].poss);
		parts[t].reach = parts[t].poss = NULL;
		memset(parts[t].tree, 0, sizeof(parts[t].tree));
	}
}

int main(int argc, char **argv)
{
	static struct part parts[MAX_THREADS + 1];
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	int threads = argc > 2 ? atoi(argv[2]) : 0;
	if (threads < 0 || threads > MAX_THREADS)
		return 2;
	run(n, threads, parts);
	scrub();
	print_own(parts, threads + 1);
	return 0;
}
