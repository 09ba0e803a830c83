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

#include "churn_kernel.h"

#define MAX_THREADS 64
#define MAX_DEPTH 16

struct worker {
	pthread_t id;
	uint64_t state;
	long ops, slots;
	size_t min, span;
	int err;
};

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

static void *work(void *arg)
{
	struct worker *w = arg;
	w->err = run(w);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS];
	long threads = count_arg(argc, argv, 1, 1), ops = count_arg(argc, argv, 2, 2000000);
	long slots = count_arg(argc, argv, 3, 4096), min = count_arg(argc, argv, 4, 16);
	long span = count_arg(argc, argv, 5, 1024);
	if (threads < 0 || threads > MAX_THREADS || ops < 0 || slots < 0 || min < 0 || span < 0) {
		fprintf(stderr, "usage: live THREADS (1..%d) OPS SLOTS MIN SPAN\n", MAX_THREADS);
		return 1;
	}
	int started = 0, err = 0;
	for (; started < threads && !err; started++) {
		struct worker *w = &workers[started];
		*w = (struct worker){.state = 0x5eed + (uint64_t)started * 7919,
		                     .ops = ops,
		                     .slots = slots,
		                     .min = (size_t)min,
		                     .span = (size_t)span};
		err = -pthread_create(&w->id, NULL, work, w);
	}
	for (int i = 0; i < started - (err != 0); i++) {
		pthread_join(workers[i].id, NULL);
		err = err ? err : workers[i].err;
	}
	if (err) {
		fprintf(stderr, "live: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
