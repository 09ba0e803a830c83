/* SPDX-License-Identifier: MIT */
/* Backtraces that change from one allocation to the next, as the unwinder's memo of the previous
 * walk sees them (tests/e2e/test_walks.py builds this file at -O2 without frame pointers).
 * ALLOCS allocations (a fixed seed), none freed; each one made under 1..MAX_DEPTH + 1 levels of
 * recursion whose frames take one of three shapes, alternating between two of them level by level:
 *   down_sp     CFA = RSP + k, RBP kept (code without frame pointers);
 *   down_saved  CFA = RSP + k, RBP saved in the frame (a callee-saved register, in use);
 *   down_fp     CFA = RBP + 16, RBP saved (alloca of a varying size);
 * then one of two leaves. The stack of an allocation is, innermost first: leaf_a or leaf_b, the
 * shape of level 0, of level 1, ... of level `depth`, drive, main; level k's shape is `even` for
 * even k, `odd` for odd k. Its size tells its stack: 16 + 8 * (((even * 3 + odd) * (MAX_DEPTH + 1)
 * + depth) * 2 + leaf) (at depth 0 the odd shape takes no part: three sizes share each such stack).
 * Prints one line per size used, "SIZE COUNT": the program's own counts.
 * Exit 0, or 1 when an allocation fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define ALLOCS 30000
#define MAX_DEPTH 7
#define STACKS (3 * 3 * (MAX_DEPTH + 1) * 2)

enum { SP, SAVED, FP };

struct how {
	int even, odd, leaf;
	size_t size;
};

void *volatile escape; /* keeps each level's call a call, not a jump */
static volatile long keep[6] = {1, 2, 3, 4, 5, 6};

static NOINLINE void *leaf_a(size_t size)
{
	char *p = malloc(size);
	if (p)
		p[0] = 1;
	return p;
}

static NOINLINE void *leaf_b(size_t size)
{
	char *p = malloc(size);
	if (p)
		p[size - 1] = 2;
	return p;
}

static void *down(int level, const struct how *h);

static NOINLINE void *down_sp(int level, const struct how *h)
{
	void *p = down(level - 1, h);
	escape = p;
	return p;
}

/* Values live across the call: RBX and RBP hold them, saved in this frame. */
static NOINLINE void *down_saved(int level, const struct how *h)
{
	long a = keep[0], b = keep[1], c = keep[2], d = keep[3], e = keep[4], f = keep[5];
	void *p = down(level - 1, h);
	escape = p;
	keep[0] = a + b + c + d + e + f;
	return p;
}

/* A frame whose size is known only at run time: its CFA is RBP-based. */
static NOINLINE void *down_fp(int level, const struct how *h)
{
	volatile char *pad = __builtin_alloca(16 + 16 * (size_t)(level & 3));
	pad[0] = 1;
	void *p = down(level - 1, h);
	escape = p;
	return p;
}

/* Level `level` of the recursion, or the leaf below level 0 (inlined into each caller). */
static inline __attribute__((always_inline)) void *down(int level, const struct how *h)
{
	if (level < 0)
		return h->leaf ? leaf_b(h->size) : leaf_a(h->size);
	switch (level & 1 ? h->odd : h->even) {
	case SP:
		return down_sp(level, h);
	case SAVED:
		return down_saved(level, h);
	default:
		return down_fp(level, h);
	}
}

static NOINLINE void *drive(int depth, const struct how *h)
{
	void *p = down(depth, h);
	escape = p;
	return p;
}

int main(void)
{
	static long count[STACKS];
	uint64_t state = 25;

	for (int i = 0; i < ALLOCS; i++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		unsigned r = (unsigned)(state >> 33);
		struct how h = {(int)(r % 3), (int)(r / 3 % 3), (int)(r / 9 % 2), 0};
		int depth = (int)(r / 18 % (MAX_DEPTH + 1));
		int stack = ((h.even * 3 + h.odd) * (MAX_DEPTH + 1) + depth) * 2 + h.leaf;
		h.size = 16 + 8 * (size_t)stack;
		if (!drive(depth, &h))
			return 1;
		count[stack]++;
	}
	for (int s = 0; s < STACKS; s++)
		if (count[s])
			printf("%d %ld\n", 16 + 8 * s, count[s]);
	return 0;
}
