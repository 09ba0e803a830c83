/* SPDX-License-Identifier: MIT */
/* Consecutive allocations whose stacks share their outer frames and differ in the middle, for the
 * unwinder's memo and the tracker's hashes of shared outer frames (tests/e2e/test_midpaths.py).
 * 32 paths, c = 0..31: main (LINE CALL) calls route(c), which calls mid_a (LINE ROUTE_A) for
 * c < 16, else mid_b (LINE ROUTE_B); mid_a and mid_b have the same frame, so what lies below them
 * sits at the same addresses either way, and call rec (LINE MID_A, LINE MID_B) with depth
 * (c / 2) % 8: rec calls itself depth times (LINE RECURSE: one return address at 8 depths), then
 * leaf_x for even c, leaf_y for odd c (LINE REC_LEAF), which keeps malloc(24) (LINE LEAF_X,
 * LINE LEAF_Y). So path c reads: leaf, rec at REC_LEAF, depth x rec at RECURSE, mid, route, main.
 * Rounds r = 0..31 visit the 32 paths in a scrambled order, path c only while r <= c: path c
 * leaks c + 1 blocks of 24 bytes. Then a stack that is the outer part of the one before: main calls
 * wrap and malloc in turn through one pointer (LINE POINTER), 16 times each, wrap making
 * malloc(40) (LINE WRAP), main's own call malloc(56). So wrap at WRAP, main at POINTER: 16 blocks,
 * 640 bytes; main at POINTER: 16 blocks, 896 bytes. 560 allocations, no frees, 14208 bytes, all
 * kept in global arrays (still reachable). No stdio. Exit 0, or 1 if a malloc failed. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define PATHS 32
#define BLOCK 24

static void *blocks[PATHS * (PATHS + 1) / 2], *pointed[PATHS];
static int kept, bad;

NOINLINE static void leaf_x(void)
{
	if (!(blocks[kept++] = malloc(BLOCK))) /* LINE LEAF_X */
		bad = 1;
}

NOINLINE static void leaf_y(void)
{
	if (!(blocks[kept++] = malloc(BLOCK))) /* LINE LEAF_Y */
		bad = 1;
}

NOINLINE static void rec(int depth, int leaf)
{
	if (depth > 0) {
		rec(depth - 1, leaf); /* LINE RECURSE */
		return;
	}
	(leaf ? leaf_y : leaf_x)(); /* LINE REC_LEAF */
}

NOINLINE static void mid_a(int c)
{
	rec((c / 2) % 8, c & 1); /* LINE MID_A */
}

NOINLINE static void mid_b(int c)
{
	rec((c / 2) % 8, c & 1); /* LINE MID_B */
}

NOINLINE static void *wrap(size_t size)
{
	return malloc(size - 16); /* LINE WRAP */
}

NOINLINE static void route(int c)
{
	if (c < 16)
		mid_a(c); /* LINE ROUTE_A */
	else
		mid_b(c); /* LINE ROUTE_B */
}

int main(void)
{
	for (int r = 0; r < PATHS; r++)
		for (int i = 0; i < PATHS; i++) {
			int c = (i * 13 + r * 7) % PATHS;
			if (c >= r)
				route(c); /* LINE CALL */
		}
	static void *(*const volatile alloc[2])(size_t) = {wrap, malloc};
	for (int i = 0; i < PATHS; i++)
		if (!(pointed[i] = alloc[i & 1](56))) /* LINE POINTER */
			bad = 1;
	return bad;
}
