/* SPDX-License-Identifier: MIT */
/* The allocation loop shared by the churn and threads benchmarks (scripts/bench): a ring of live blocks
 * plus short-lived pairs. Deterministic for a given seed, and every malloc is matched by exactly one free. */
#ifndef CT_BENCH_CHURN_KERNEL_H
#define CT_BENCH_CHURN_KERNEL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define RING_BLOCKS 16
#define MAX_BLOCK 4096

/* The compiler may drop a malloc/free pair whose block is never seen; storing it here forbids that. */
static void *volatile escape;

/* xorshift64*: cheap and fixed, so every run (and every tracer) sees the same sizes. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

static void *alloc_random(uint64_t *state)
{
	size_t size = 1 + next_random(state) % MAX_BLOCK;
	char *p = malloc(size);
	if (!p)
		return NULL;
	p[0] = (char)size; /* touch it, as a real program would */
	escape = p;
	return p;
}

static void free_ring(void **ring)
{
	for (int i = 0; i < RING_BLOCKS; i++)
		free(ring[i]);
}

/* Exactly `pairs` malloc/free pairs (pairs >= RING_BLOCKS, pairs - RING_BLOCKS even): the ring is filled,
 * then each step replaces one ring block and does one plain pair, then the ring is freed.
 * Returns 0 or -ENOMEM (or -EINVAL for a count that cannot be met exactly). */
static int run_churn(uint64_t seed, long pairs)
{
	if (pairs < RING_BLOCKS || (pairs - RING_BLOCKS) % 2)
		return -EINVAL;
	void *ring[RING_BLOCKS] = {0};
	uint64_t state = seed | 1; /* xorshift never leaves 0 */
	for (int i = 0; i < RING_BLOCKS; i++) {
		ring[i] = alloc_random(&state);
		if (!ring[i]) {
			free_ring(ring);
			return -ENOMEM;
		}
	}
	for (long step = 0; step < (pairs - RING_BLOCKS) / 2; step++) {
		void **slot = &ring[step % RING_BLOCKS];
		free(*slot);
		*slot = alloc_random(&state);
		void *tmp = alloc_random(&state);
		free(tmp);
		if (!*slot || !tmp) {
			free_ring(ring);
			return -ENOMEM;
		}
	}
	free_ring(ring);
	return 0;
}

/* Parses argv[i] as a positive count, or returns `fallback` when it is absent; -1 when it is malformed. */
static long count_arg(int argc, char **argv, int i, long fallback)
{
	if (i >= argc)
		return fallback;
	char *end;
	errno = 0;
	long n = strtol(argv[i], &end, 10);
	return errno || *end || end == argv[i] || n <= 0 ? -1 : n;
}

#endif
