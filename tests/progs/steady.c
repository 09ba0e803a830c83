/* SPDX-License-Identifier: MIT */
/* Allocates steadily for about half a second, so its trace grows over several flushes (every
 * <= 100 ms): 50 rounds of 2000 blocks of pseudo-random sizes 1..65536 (a fixed xorshift seed),
 * each round's blocks freed by the next round, then a 10 ms sleep. The last round's blocks are
 * kept. 100000 allocations, 98000 frees. No stdio. */
#include <stdlib.h>
#include <time.h>

#define ROUNDS 50
#define PER_ROUND 2000

static void *blocks[PER_ROUND];

int main(void)
{
	unsigned x = 2463534242u;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PER_ROUND; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			free(blocks[i]);
			blocks[i] = malloc(x % 65536 + 1);
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return 0;
}
