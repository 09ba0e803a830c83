/* SPDX-License-Identifier: MIT */
/* The end of the solo sequence numbers (preload/tracker.c): the main thread allocates alone, then a
 * second thread starts while the main thread keeps allocating, and frees the main thread's blocks
 * as they come, through a lock-free queue: both threads take numbers of the same counters at once
 * from the moment the second one starts. Prints its own counts: allocations, frees, bytes (250,000,
 * 250,000 and the sizes' sum, the same in every run). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE 1024
#define STEPS 100000

static void *_Atomic queue[QUEUE];
static _Atomic unsigned long allocs, frees, bytes;

static void *volatile sink; /* every block escapes: no compiler may drop a malloc and its free */

static void *take_one(void *p)
{
	atomic_fetch_add(&allocs, 1);
	sink = p;
	return p;
}

/* Frees the main thread's blocks as they come, each followed by a block of its own, allocated and
 * freed. */
static void *consumer(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < STEPS; i++) {
		void *p;
		while (!(p = atomic_exchange(&queue[i % QUEUE], NULL)))
			;
		free(p);
		char *own = take_one(malloc(24 + i % 200));
		atomic_fetch_add(&bytes, 24 + i % 200);
		memset(own, 1, 8);
		free(own);
		atomic_fetch_add(&frees, 2);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	uint64_t x = 88172645463325252ull;
	for (unsigned long i = 0; i < STEPS / 2; i++) { /* alone: its numbers taken solo */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		char *p = take_one(malloc(16 + x % 512));
		atomic_fetch_add(&bytes, 16 + x % 512);
		memset(p, 3, 16);
		free(p);
		atomic_fetch_add(&frees, 1);
	}
	if (pthread_create(&t, NULL, consumer, NULL))
		return 1;
	for (unsigned long i = 0; i < STEPS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t size = 16 + x % 512;
		void *p = take_one(malloc(size));
		atomic_fetch_add(&bytes, size);
		memset(p, 2, 16);
		while (atomic_load(&queue[i % QUEUE])) /* the consumer's turn: wait for the slot */
			;
		atomic_store(&queue[i % QUEUE], p);
	}
	pthread_join(t, NULL);
	printf("allocations %lu frees %lu bytes %lu\n", atomic_load(&allocs), atomic_load(&frees),
	       atomic_load(&bytes));
	return 0;
}
