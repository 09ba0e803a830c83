/* SPDX-License-Identifier: MIT */
/* Many distinct stacks, met again and again: each of THREADS threads (the main one and THREADS - 1
 * others) makes ROUNDS rounds over STACKS stacks, each round in another order, so that a thread's small
 * stack cache (tracker.c) keeps losing them, the thread grows its big one, and later rounds find
 * them there. Allocation d (0 <= d < STACKS) is made LEVELS + 3 calls deep, through step_b at level i
 * when bit i of d is set and step_a when it is not, then leaf, so its backtrace spells d in binary
 * under the thread's own root function (main or worker); its size is 16 + d % 7. Every block stays
 * reachable at exit. Prints one line per (root, d): "ROOT D ALLOCATIONS BYTES", its own counts. Built
 * at -O0 without sibling calls by test_stack_rounds.py, so that every call keeps its frame. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2
#define ROUNDS 3
#define LEVELS 12
#define STACKS (1u << LEVELS)
#define NOINLINE __attribute__((noinline))

static void *keep[THREADS][ROUNDS][STACKS];
static unsigned long count[THREADS][STACKS], bytes[THREADS][STACKS];
static void *go(unsigned d, int i);

NOINLINE static void *leaf(unsigned d)
{
	return malloc(16 + d % 7);
}

NOINLINE static void *step_a(unsigned d, int i)
{
	return go(d, i + 1);
}

NOINLINE static void *step_b(unsigned d, int i)
{
	return go(d, i + 1);
}

NOINLINE static void *go(unsigned d, int i)
{
	if (i == LEVELS)
		return leaf(d);
	if (d >> i & 1)
		return step_b(d, i);
	return step_a(d, i);
}

/* Thread t's rounds: round r visits d = k * stride mod STACKS for k = 0, 1, ..., an odd stride (so
 * a permutation) that differs from round to round. Returns 0, or 1 when an allocation failed. */
NOINLINE static int rounds(int t)
{
	for (unsigned r = 0; r < ROUNDS; r++) {
		unsigned stride = 2 * r * 97 + 1;
		for (unsigned k = 0; k < STACKS; k++) {
			unsigned d = k * stride % STACKS;
			if (!(keep[t][r][d] = go(d, 0)))
				return 1;
			count[t][d]++;
			bytes[t][d] += 16 + d % 7;
		}
	}
	return 0;
}

NOINLINE static void *worker(void *arg)
{
	return (void *)(long)rounds((int)(long)arg);
}

int main(void)
{
	pthread_t th[THREADS];
	int failed = 0;
	for (long t = 1; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 1;
	failed |= rounds(0);
	for (int t = 1; t < THREADS; t++) {
		void *ret;
		pthread_join(th[t], &ret);
		failed |= ret != NULL;
	}
	for (int t = 0; t < THREADS; t++)
		for (unsigned d = 0; d < STACKS; d++)
			printf("%s %u %lu %lu\n", t ? "worker" : "main", d, count[t][d], bytes[t][d]);
	return failed;
}
