/* SPDX-License-Identifier: MIT */
/* A leak 100 calls deep, one leak 1 call deep:
 *   deep_leak: malloc(4000) under 100 frames of descend() (> any capture depth), never freed;
 *   shallow_leak: malloc(16) called from main, never freed.
 * 2 allocations, 0 frees, 4016 bytes, leaked 4016 bytes in 2. Exit 0. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *deep_leak(void)
{
	return malloc(4000);
}

NOINLINE static void *shallow_leak(void)
{
	return malloc(16);
}

/* Not a tail call (the build uses -O0 -fno-optimize-sibling-calls): each level keeps a frame. */
NOINLINE static void *descend(int n)
{
	void *p = n ? descend(n - 1) : deep_leak();
	return p;
}

int main(void)
{
	return descend(100) && shallow_leak() ? 0 : 1;
}
