/* SPDX-License-Identifier: MIT */
/* Allocates over about 0.6 s, so its trace is written as several flushes (every <= 100 ms):
 * 600 rounds of malloc(100 + round) kept, then a 1 ms sleep; then all 600 are freed.
 * 600 allocations, 600 frees, 60000 + 179700 = 239700 bytes, nothing leaked. No stdio. */
#include <stdlib.h>
#include <time.h>

#define ROUNDS 600

static void *blocks[ROUNDS];

int main(void)
{
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < ROUNDS; i++) {
		if (!(blocks[i] = malloc(100 + (size_t)i)))
			return 1;
		nanosleep(&ms, NULL);
	}
	for (int i = 0; i < ROUNDS; i++)
		free(blocks[i]);
	return 0;
}
