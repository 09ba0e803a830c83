/* SPDX-License-Identifier: MIT */
/* Two phases from many stacks all busy at once, for the HTML report's two resolutions
 * (tests/e2e/test_html_busy.py): STACKS = 4096 distinct stacks (a binary tree of calls, 12 levels
 * deep, as wide.c), every one allocating in every round, so the per-site slices exceed the analyzer's
 * budget and coarsen while the whole heap's keep their resolution. Phase 1: R1 rounds in which each
 * leaf frees its previous block and allocates one of S1 bytes (alloc_a); a hold of GAP_US; every
 * block freed. Then the mark "phase2", a sleep of GAP_US, and phase 2: R2 rounds of the same with S2
 * bytes (alloc_b), the last round's blocks kept (still reachable: a global array holds them); the mark
 * "end", a sleep of GAP_US, and exit. Nothing else allocates (no stdio), so under ctrack:
 *   allocations STACKS * (R1 + R2) = 1,966,080, frees STACKS * (R1 + R2 - 1) = 1,961,984,
 *   bytes allocated STACKS * (R1 * S1 + R2 * S2) = 102,236,160, live at exit STACKS * S2 = 327,680 bytes
 *   in STACKS = 4096 blocks, peak heap STACKS * S2 = 327,680 (each leaf frees before it allocates),
 *   temporary allocations 0 (a block lives through a round of other allocations).
 * The gaps (600 ms) are far wider than a site slice, so a window dragged across a phase snaps to
 * site slices holding that phase alone: the sites' 256 slices at most (4096 busy stacks against the
 * budget) keep a slice under 150 ms as long as the run takes under 38 s, a loaded machine's too.
 * A round ends with a pause of ROUND_US, so that a phase lasts at least 1.4 s however fast the
 * tracer is: every stack then allocates in over 150 slices of at most 8 ms in each phase, over
 * 4096 * 300 (stack, slice) entries in all, past the analyzer's budget of 2^20 (a faster tracer
 * once made the phases short enough to stay under it). */
#include <stdlib.h>
#include <time.h>

#include "ctrack/ctrack.h"

#define LEVELS 12
#define STACKS (1u << LEVELS)
#define R1 240
#define R2 240
#define S1 24
#define S2 80
#define GAP_US 600000
#define ROUND_US 6000
#define NOINLINE __attribute__((noinline))

static void *blocks[STACKS];
static void *(*alloc)(void);

static void pause_us(long us)
{
	struct timespec t = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&t, &t))
		;
}

NOINLINE static void *alloc_a(void)
{
	return malloc(S1);
}

NOINLINE static void *alloc_b(void)
{
	return malloc(S2);
}

NOINLINE static void leaf(unsigned bits)
{
	if (blocks[bits]) /* free(NULL) is no event; skipped all the same */
		free(blocks[bits]);
	blocks[bits] = alloc();
	if (!blocks[bits])
		abort();
}

NOINLINE static void walk(int level, unsigned bits);

/* Two call sites per level: every path through the tree is its own stack. */
NOINLINE static void left(int level, unsigned bits)
{
	walk(level - 1, bits << 1);
}

NOINLINE static void right(int level, unsigned bits)
{
	walk(level - 1, bits << 1 | 1);
}

NOINLINE static void walk(int level, unsigned bits)
{
	if (level == 0) {
		leaf(bits);
		return;
	}
	left(level, bits);
	right(level, bits);
}

int main(void)
{
	alloc = alloc_a;
	for (int r = 0; r < R1; r++) {
		walk(LEVELS, 0);
		pause_us(ROUND_US);
	}
	pause_us(GAP_US);
	for (unsigned i = 0; i < STACKS; i++) {
		free(blocks[i]);
		blocks[i] = NULL;
	}
	ctrack_mark("phase2");
	pause_us(GAP_US);
	alloc = alloc_b;
	for (int r = 0; r < R2; r++) {
		walk(LEVELS, 0);
		pause_us(ROUND_US);
	}
	ctrack_mark("end");
	pause_us(GAP_US);
	return 0;
}
