/* SPDX-License-Identifier: MIT */
/* Distinct stacks that read the same once folded to function names (tests/e2e/test_folded.py): the
 * folded export must print each such stack once, with the sum of its stacks' figures. Everything
 * leaks; no stdio. Each case, as its folded stack below main, leaked bytes in allocations:
 *   twice          malloc(100) at LINE TWICE_A, and 2 x malloc(60) at LINE TWICE_B: 220 in 3
 *   leaf           called by main at LINE MAIN_LEAF_A and at LINE MAIN_LEAF_B, malloc(48) each:
 *                  96 in 2 (main's frame differs by line)
 *   outer;pick_[i] pick (always inlined, malloc(32) at LINE PICK) inlined into outer at
 *                  LINE OUTER_A and LINE OUTER_B: 64 in 2 (one line, two inlined paths)
 *   one_line       malloc(10) and malloc(20) on one line (LINE ONE_LINE): 30 in 2
 * Leaked: 220 + 96 + 64 + 30 = 410 bytes in 9 allocations; 9 allocations, no frees. Exit 0. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

static void *volatile sink;

NOINLINE static void twice(void)
{
	sink = malloc(100); /* LINE TWICE_A */
	for (int i = 0; i < 2; i++)
		sink = malloc(60); /* LINE TWICE_B */
}

NOINLINE static void leaf(void)
{
	sink = malloc(48); /* LINE LEAF */
}

INLINE void pick(void)
{
	sink = malloc(32); /* LINE PICK */
}

NOINLINE static void outer(void)
{
	pick(); /* LINE OUTER_A */
	pick(); /* LINE OUTER_B */
}

NOINLINE static void one_line(void)
{
	sink = malloc(10);
	sink = malloc(20); /* LINE ONE_LINE */
}

int main(void)
{
	twice();
	leaf(); /* LINE MAIN_LEAF_A */
	leaf(); /* LINE MAIN_LEAF_B */
	outer();
	one_line();
	return 0;
}
