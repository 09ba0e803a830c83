/* SPDX-License-Identifier: MIT */
/* Benchmark workloads "live" and "mtlive" (scripts/bench), shaped like real programs rather than a
 * tracer's best case: each of THREADS threads keeps SLOTS blocks live and replaces a random one per
 * step, so a block is freed thousands of events after its allocation; each allocation is made
 * 1..16 calls deep (a varying depth and one of two leaf functions: many distinct stacks) with a
 * size of MIN..MIN+SPAN-1 bytes. Usage: live THREADS OPS SLOTS MIN SPAN, OPS malloc/free pairs per
 * thread (the slots are filled first and freed last, within OPS). Exit 0, or 1 on error. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers.h"

#define MAX_DEPTH 16

__attribute__((noinline)) static void *leaf_a(size_t size)
{
	char *p = malloc(size);
	if (p)
		p[0] = 1;
	return p;
}

__attribute__((noinline)) static void *leaf_b(size_t size)
{
	char *p = malloc(size);
	if (p)
		p[size - 1] = 2;
	return p;
}

/* depth more calls, then one of the leaves (the choice is the low bit of depth's caller's random). */
__attribute__((noinline)) static void *descend(int depth, size_t size, int leaf)
{
	void *p = depth ? descend(depth - 1, size, leaf) : leaf ? leaf_b(size) : leaf_a(size);
	escape = p; /* no tail call: every level keeps its frame */
	return p;
}

static void *one(struct worker *w)
{
	uint64_t r = next_random(&w->state);
	return descend((int)(r % MAX_DEPTH), w->min + (r >> 8) % w->span, (int)(r >> 40) & 1);
}

static int run(struct worker *w)
{
	void **slot = calloc((size_t)w->slots, sizeof(*slot));
	long done = 0;
	if (!slot)
		return -ENOMEM;
	for (long i = 0; i < w->slots && done < w->ops; i++, done++)
		if (!(slot[i] = one(w)))
			return -ENOMEM;
	for (; done + w->slots < w->ops + w->slots && done < w->ops; done++) {
		uint64_t k = next_random(&w->state) % (uint64_t)w->slots;
		free(slot[k]);
		if (!(slot[k] = one(w)))
			return -ENOMEM;
	}
	for (long i = 0; i < w->slots; i++)
		free(slot[i]);
	free(slot);
	return 0;
}

int main(int argc, char **argv)
{
	static const long defaults[5] = {1, 2000000, 4096, 16, 1024};
	return workers_main(argc, argv, "live", defaults);
}
