/* SPDX-License-Identifier: MIT */
/* Many distinct stacks from few functions: allocation d (0 <= d < COUNT) is made 2 * LEVELS + 2 calls
 * deep, through step_b at level i when bit i of d is set and step_a when it is not, then leaf; every
 * block stays reachable from keep[] at exit. The backtrace of each allocation therefore spells d in
 * binary, and its size is 16 + d % 7: about 30,000 distinct stack nodes in all. Built at -O0 without
 * sibling calls so that every call keeps its frame. The LINE markers are where each frame's line is. */
#include <stdlib.h>

#define COUNT 3000
#define LEVELS 20
#define NOINLINE __attribute__((noinline))

static void *keep[COUNT];
static void *go(unsigned d, int i);

NOINLINE static void *leaf(unsigned d)
{
	return malloc(16 + d % 7); /* LINE:alloc */
}

NOINLINE static void *step_a(unsigned d, int i)
{
	return go(d, i + 1); /* LINE:a */
}

NOINLINE static void *step_b(unsigned d, int i)
{
	return go(d, i + 1); /* LINE:b */
}

NOINLINE static void *go(unsigned d, int i)
{
	if (i == LEVELS)
		return leaf(d); /* LINE:leaf */
	if (d >> i & 1)
		return step_b(d, i); /* LINE:go_b */
	return step_a(d, i);         /* LINE:go_a */
}

int main(void)
{
	for (unsigned d = 0; d < COUNT; d++)
		keep[d] = go(d, 0); /* LINE:main */
	return keep[COUNT - 1] ? 0 : 1;
}
