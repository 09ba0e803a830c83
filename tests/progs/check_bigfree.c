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
 * could not reap it, and ctrack waited for it forever, before 2026-12-07).
 * `check_bigfree blocked`: the threads block every signal, so a stop by signal (where ptrace is
 * refused) leaves them running through each scan, and each block they free is in a global, where
 * the scan finds it and reads it while it may be freed: the scan must read nothing it cannot (it
 * killed the program at the first checks before 2026-12-07). Their registers are not read then, so a
 * block they hold there alone counts as lost too (the trace says so): main checks BLOCKED_CHECKS
 * times and prints "checks: BLOCKED_CHECKS found LEAK_SIZE or more, 0 otherwise". */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"

#define CHECKS 400
#define BLOCKED_CHECKS 100
#define LEAK_SIZE 100
#define BIG_SIZE (256 << 10)
#define THREADS 2

#include "lose.h"

static atomic_int stop, blocked;
static char *volatile held[THREADS]; /* each thread's block, kept after it is freed */

static void *big_frees(void *arg)
{
	char *volatile *mine = arg;
	sigset_t all;
	sigfillset(&all);
	if (atomic_load(&blocked))
		pthread_sigmask(SIG_SETMASK, &all, NULL);
	while (!atomic_load(&stop)) {
		char *p = malloc(BIG_SIZE);
		*mine = p;
		for (int i = 0; p && i < BIG_SIZE; i += 4096) /* held a while: touched page by page */
			p[i] = 1;
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int forever = argc > 1 && strcmp(argv[1], "forever") == 0;
	atomic_store(&blocked, argc > 1 && strcmp(argv[1], "blocked") == 0);
	mallopt(M_MMAP_THRESHOLD, 128 << 10); /* else glibc raises it to the first block freed */
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, big_frees, (void *)&held[i]) != 0)
			return 1;
	lose();
	int answered = 0, checks = atomic_load(&blocked) ? BLOCKED_CHECKS : CHECKS;
	for (int i = 0; i < checks || forever; i++) {
		long long lost = ctrack_check_leaks();
		int right = atomic_load(&blocked) ? lost >= LEAK_SIZE : lost == LEAK_SIZE;
		answered += right;
		if (!right) /* said on stderr, for a failing test to show */
			fprintf(stderr, "check %d answered %lld\n", i, lost);
		if (forever && i == 0) {
			puts("checking");
			fflush(stdout);
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf(atomic_load(&blocked) ? "checks: %d found %d or more, %d otherwise\n"
	                             : "checks: %d answered %d, %d otherwise\n",
	       answered, LEAK_SIZE, checks - answered);
	return 0;
}
