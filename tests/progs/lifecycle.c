/* SPDX-License-Identifier: MIT */
/* Runs with tests/progs/lifecycle_lib.c preloaded: allocates 333 bytes and keeps them. With the
 * library: 3 allocations, 666 bytes, 1 free, 555 bytes leaked in 2 blocks. */
#include <stdlib.h>

static void *volatile keep;

int main(void)
{
	keep = malloc(333);
	return 0;
}
