/* SPDX-License-Identifier: MIT */
/* A known number of events, for the analyzer's progress line (tests/e2e/test_progress.py):
 * 1000000 x (p = malloc(16); free(p)): 1000000 allocations, 1000000 frees (2000000 events),
 * 16000000 bytes allocated, all temporary, no leak. No stdio. Exit 0, or 1 if a malloc failed. */
#include <stdlib.h>

#define PAIRS 1000000

static void *volatile sink;

int main(void)
{
	int bad = 0;
	for (int i = 0; i < PAIRS; i++) {
		sink = malloc(16);
		bad |= !sink;
		free(sink);
	}
	return bad;
}
