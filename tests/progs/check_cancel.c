/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() in a thread that another cancels: ROUNDS times, a thread checks over and over
 * (a pthread_testcancel() after each check) beside one that allocates and frees, and main cancels
 * both after a few milliseconds and joins them; then main checks once and prints
 *   after ROUNDS cancels: check LEAK_SIZE
 * (-1 without ctrack). A thread cancelled while its check waited for the writer (the wait's
 * nanosleep is a cancellation point) left the writer's request lock held: the next check, and the
 * exit's scan, waited for ever (4 runs of 4 hung before 2026-12-07). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ctrack/ctrack.h"

#define ROUNDS 20
#define LEAK_SIZE 100

#include "lose.h"

static void *checker(void *arg)
{
	(void)arg;
	for (;;) {
		ctrack_check_leaks();
		pthread_testcancel();
	}
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	for (;;) {
		void *volatile p = malloc(64);
		free(p);
		pthread_testcancel();
	}
	return NULL;
}

int main(void)
{
	lose();
	for (int k = 0; k < ROUNDS; k++) {
		pthread_t t, b;
		if (pthread_create(&t, NULL, checker, NULL) != 0 || pthread_create(&b, NULL, busy, NULL) != 0)
			return 1;
		struct timespec ts = {0, 3000000 + k * 700000L}; /* cancelled at different moments */
		nanosleep(&ts, NULL);
		pthread_cancel(t);
		pthread_join(t, NULL);
		pthread_cancel(b);
		pthread_join(b, NULL);
	}
	printf("after %d cancels: check %ld\n", ROUNDS, ctrack_check_leaks());
	return 0;
}
