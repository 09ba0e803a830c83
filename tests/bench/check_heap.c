/* SPDX-License-Identifier: MIT */
/* What one ctrack_check_leaks() costs with a large live heap (docs/benchmarks.md, "A check in a
 * program with a million live blocks"): keeps BLOCKS blocks of 16 to 79 bytes, all reachable, checks
 * 10 times and prints the best check's milliseconds. Usage: ctrack -q -o t.zst check_heap [BLOCKS]
 * (default 1000000). Built by hand: cc -O2 -Iinclude tests/bench/check_heap.c -o check_heap. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ctrack/ctrack.h"

/* Not static: a static array pointer that nothing reads after main's loop loses its store at -O2,
 * and every block is then lost indeed. */
void **blocks;

static double ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	if (n <= 0 || !(blocks = malloc((size_t)n * sizeof(*blocks))))
		return 1;
	for (long i = 0; i < n; i++)
		if (!(blocks[i] = malloc(16 + (size_t)(i & 63))))
			return 1;
	double best = 1e9;
	for (int k = 0; k < 10; k++) {
		struct timespec a;
		clock_gettime(CLOCK_MONOTONIC, &a);
		long lost = ctrack_check_leaks();
		double ms = ms_since(&a);
		if (lost != 0)
			printf("check %d: %ld bytes lost, want 0\n", k, lost);
		best = ms < best ? ms : best;
	}
	printf("best check: %.1f ms for %ld blocks\n", best, n);
	return 0;
}
