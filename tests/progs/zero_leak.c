/* SPDX-License-Identifier: MIT */
/* A lost block of no bytes: lose_nothing's malloc(0) block (LINE ZERO) is definitely lost, 0 bytes
 * in 1 block, as memcheck says, and LeakSanitizer fails the run for it. Nothing else is left. No
 * stdio. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

NOINLINE static void lose_nothing(void)
{
	sink = malloc(0); /* LINE ZERO */
	sink = NULL;
}

int main(void)
{
	lose_nothing();
	return 0;
}
