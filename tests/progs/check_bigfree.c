/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while other threads free large blocks, which glibc gives back to the kernel
 * at once: a check takes the live blocks, then stops the threads; a block freed in between is one
 * the matcher still holds live, and its memory is gone. Two threads allocate and free blocks of
 * BIG_SIZE bytes (above the mmap threshold, fixed by mallopt) in a loop; main loses one block of
 * LEAK_SIZE bytes, checks CHECKS times, and prints:
 *   checks: CHECKS answered LEAK_SIZE, 0 otherwise
 * Reading such a block's chunk header before the stop killed the program within a few hundred
 * checks (SIGSEGV in malloc_usable_size, preload/leakscan.c's set_edges, before 2026-12-07).
 * Untraced, every check answers -1: "checks: 0 answered 100, CHECKS otherwise".
 * `check_bigfree forever` prints "checking" after its first check and checks until it is killed:
 * a program killed in a check must not leave ctrack's tracer holding its threads (the kernel
 * could not reap it, and ctrack waited for it forever, before 2026-12-07). */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"

#define CHECKS 400
#define LEAK_SIZE 100
#define BIG_SIZE (256 << 10)
#define THREADS 2

#include "lose.h"

static atomic_int stop;

static void *big_frees(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		char *volatile p = malloc(BIG_SIZE);
		for (int i = 0; p && i < BIG_SIZE; i += 4096) /* held a while: touched page by page */
			p[i] = 1;
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int forever = argc > 1 && strcmp(argv[1], "forever") == 0;
	mallopt(M_MMAP_THRESHOLD, 128 << 10); /* else glibc raises it to the first block freed */
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, big_frees, NULL) != 0)
			return 1;
	lose();
	int answered = 0;
	for (int i = 0; i < CHECKS || forever; i++) {
		answered += ctrack_check_leaks() == LEAK_SIZE;
		if (forever && i == 0) {
			puts("checking");
			fflush(stdout);
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("checks: %d answered %d, %d otherwise\n", answered, LEAK_SIZE, CHECKS - answered);
	return 0;
}
