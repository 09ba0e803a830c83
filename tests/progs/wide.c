/* A big, wide trace for the HTML report's limits: over a million events from 16384 distinct stacks
 * (a binary tree of calls, 14 levels deep), so the flame graphs have far more frames than a page can hold. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define LEVELS 14
#define PER_LEAF 31 /* temporaries per leaf, plus one leak */

/* Figures: 16384 leaves x (31 + 1) = 524288 allocations, 16384 x 31 = 507904 frees,
 * 16384 x 8 = 131072 bytes leaked in 16384 allocations: 1,032,192 events in all. */
static void *volatile sink;

NOINLINE void leaf(void)
{
	for (int i = 0; i < PER_LEAF; i++) {
		void *p = malloc(16 + (size_t)i);
		sink = p;
		free(p);
	}
	sink = malloc(8);
}

NOINLINE void walk(int level, unsigned bits);

/* Two call sites per level: every path through the tree is its own stack. */
NOINLINE void left(int level, unsigned bits)
{
	walk(level - 1, bits >> 1);
}
NOINLINE void right(int level, unsigned bits)
{
	walk(level - 1, bits >> 1);
}

NOINLINE void walk(int level, unsigned bits)
{
	if (!level) {
		leaf();
		return;
	}
	if (bits & 1)
		right(level, bits);
	else
		left(level, bits);
}

int main(void)
{
	for (unsigned b = 0; b < 1u << LEVELS; b++)
		walk(LEVELS, b);
	return 0;
}
