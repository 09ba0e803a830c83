/* SPDX-License-Identifier: MIT */
/* Benchmark workload "prodcons" (scripts/bench): a producer thread allocates OPS blocks of 16..527
 * bytes and hands them to a consumer thread through a queue of QUEUE slots; the consumer keeps the
 * last KEEP blocks it received and frees the oldest: every free is on another thread than its
 * malloc, thousands of events later. Usage: prodcons [OPS [KEEP]]. Exit 0, or 1 on error. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "churn_kernel.h"

#define QUEUE 4096
#define BATCH 256

static void *queue[QUEUE];
static _Atomic long produced, consumed; /* a single-producer, single-consumer ring */
static long ops, keep;

/* Waits a little: spins first (the other thread is usually running on the other core), then yields. */
static void wait_turn(unsigned *spins)
{
	if (++*spins < 1024)
		__builtin_ia32_pause();
	else
		sched_yield(), *spins = 0;
}

static void *producer(void *arg)
{
	uint64_t state = 0x5eed;
	for (long i = 0; i < ops; i++) {
		size_t size = 16 + next_random(&state) % 512;
		char *p = malloc(size);
		if (!p)
			abort();
		p[0] = (char)size;
		unsigned spins = 0;
		while (i - atomic_load_explicit(&consumed, memory_order_acquire) >= QUEUE)
			wait_turn(&spins);
		queue[i % QUEUE] = p;
		atomic_store_explicit(&produced, i + 1, memory_order_release);
	}
	return arg;
}

static void *consumer(void *arg)
{
	void **kept = calloc((size_t)keep, sizeof(*kept));
	if (!kept)
		abort();
	for (long i = 0; i < ops; i++) {
		unsigned spins = 0;
		long want = i + BATCH < ops ? i + BATCH : ops; /* woken for a batch, not for each block */
		if (atomic_load_explicit(&produced, memory_order_acquire) <= i)
			while (atomic_load_explicit(&produced, memory_order_acquire) < want)
				wait_turn(&spins);
		void *p = queue[i % QUEUE];
		atomic_store_explicit(&consumed, i + 1, memory_order_release);
		free(kept[i % keep]);
		kept[i % keep] = p;
	}
	for (long i = 0; i < keep; i++)
		free(kept[i]);
	free(kept);
	return arg;
}

int main(int argc, char **argv)
{
	ops = count_arg(argc, argv, 1, 1000000);
	keep = count_arg(argc, argv, 2, 4096);
	pthread_t p, c;
	if (ops < 0 || keep < 0 || pthread_create(&c, NULL, consumer, NULL) ||
	    pthread_create(&p, NULL, producer, NULL)) {
		fprintf(stderr, "usage: prodcons [OPS [KEEP]]\n");
		return 1;
	}
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	return 0;
}
