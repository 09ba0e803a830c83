/* SPDX-License-Identifier: MIT */
/* lose(): one block of LEAK_SIZE bytes (defined by the including program) lost for good: the only
 * pointer to it, in a volatile local of a frame of its own, cleared. For tests/progs/check_*.c. */
#ifndef CTRACK_TESTS_LOSE_H
#define CTRACK_TESTS_LOSE_H

#include <stdlib.h>

__attribute__((noinline)) static void lose(void)
{
	void *volatile p = malloc(LEAK_SIZE);
	p = NULL;
	(void)p;
}

#endif
