/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while threads that block every signal hold blocks only in their own stack
 * frames: a stop by signal (where ptrace is refused) leaves them running through each scan, whose
 * reading of their stacks as they are must find those blocks held. A thread waits in nanosleep with
 * its block in a volatile local; with argv[1] "main", main is such a thread too and the checks come
 * from another thread. One block of LEAK_SIZE bytes is lost; CHECKS checks print
 *   checks: CHECKS answered LEAK_SIZE, 0 otherwise
 * Before 2026-12-07 each answered LEAK_SIZE + HELD_SIZE (the running threads' stacks were not read);
 * the wrong answers go to stderr. Without ctrack every check answers -1. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrack/ctrack.h"

#define CHECKS 20
#define LEAK_SIZE 100
#define HELD_SIZE 4000
#define SHOWN 5

#include "lose.h"

static atomic_int stop, holding;

/* Blocks every signal, holds a block in a volatile local until told to stop, then frees it. */
static void hold(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	char *volatile mine = malloc(HELD_SIZE);
	atomic_fetch_add(&holding, 1);
	while (!atomic_load(&stop)) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	free(mine);
}

static void *holder(void *arg)
{
	(void)arg;
	hold();
	return NULL;
}

/* The checks; the count of wrong answers. */
static void *checker(void *arg)
{
	int *wrong = arg;
	while (atomic_load(&holding) < 2)
		sched_yield();
	for (int i = 0; i < CHECKS; i++) {
		long long lost = ctrack_check_leaks();
		if (lost != LEAK_SIZE && (*wrong)++ < SHOWN)
			fprintf(stderr, "check %d answered %lld\n", i, lost);
	}
	atomic_store(&stop, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int main_holds = argc > 1 && !strcmp(argv[1], "main"), wrong = 0;
	pthread_t h, c;
	lose();
	if (pthread_create(&h, NULL, holder, NULL) != 0)
		return 1;
	if (main_holds) { /* main holds, another thread checks */
		if (pthread_create(&c, NULL, checker, &wrong) != 0)
			return 1;
		hold();
		pthread_join(c, NULL);
	} else {
		atomic_fetch_add(&holding, 1);
		checker(&wrong);
	}
	pthread_join(h, NULL);
	printf("checks: %d answered %d, %d otherwise\n", CHECKS - wrong, LEAK_SIZE, wrong);
	return 0;
}
