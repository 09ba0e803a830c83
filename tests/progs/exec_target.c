/* SPDX-License-Identifier: MIT */
/* The image execer starts: three malloc(333), target_leak's one never freed:
 *   3 allocations, 2 frees, 999 bytes, leaked 333 bytes in 1. Exit 0. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static int target_leak(void)
{
	return malloc(333) != NULL;
}

int main(void)
{
	void *a = malloc(333), *b = malloc(333);
	free(a);
	free(b);
	return a && b && target_leak() ? 0 : 1;
}
