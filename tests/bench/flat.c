/* SPDX-License-Identifier: MIT */
/* Benchmark workload "mt4" (scripts/bench, issue 25): the event-dense case for a tracer's writer. Each of
 * THREADS threads keeps SLOTS blocks live and replaces a random one per step, every malloc from the same
 * two-frame stack (leaf, called from the thread's loop), sizes MIN..MIN+SPAN-1: a few ns of the program's
 * own work per malloc/free pair, so whatever a tracer does per event dominates. Usage: flat THREADS OPS
 * SLOTS MIN SPAN, OPS malloc/free pairs per thread (the slots are filled first and freed last, within
 * OPS). Exit 0, or 1 on error. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers.h"

/* The second frame of every stack (the first is the thread's loop, run). */
__attribute__((noinline)) static void *leaf(size_t size)
{
	char *p = malloc(size);
	if (p)
		p[0] = 1; /* touch it, as a real program would */
	escape = p;
	return p;
}

static void *one(struct worker *w)
{
	return leaf(w->min + next_random(&w->state) % w->span);
}

/* Fills the slots, replaces a random one per step until OPS pairs are made, frees the rest. */
static int run(struct worker *w)
{
	long slots = w->slots < w->ops ? w->slots : w->ops;
	void **slot = calloc((size_t)slots, sizeof(*slot));
	int err = 0;
	if (!slot)
		return -ENOMEM;
	for (long i = 0; i < slots && !err; i++)
		err = (slot[i] = one(w)) ? 0 : -ENOMEM;
	for (long done = slots; done < w->ops && !err; done++) {
		uint64_t k = next_random(&w->state) % (uint64_t)slots;
		free(slot[k]);
		err = (slot[k] = one(w)) ? 0 : -ENOMEM;
	}
	for (long i = 0; i < slots; i++)
		free(slot[i]);
	free(slot);
	return err;
}

int main(int argc, char **argv)
{
	static const long defaults[5] = {4, 4000000, 1024, 8, 512};
	return workers_main(argc, argv, "flat", defaults);
}
