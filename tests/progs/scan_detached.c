/* SPDX-License-Identifier: MIT */
/* Detached threads alive at exit: 4 threads sleep in a loop until main, which never joins them,
 * sets the flag and returns. They are stopped for the scan and end soon after: every one was
 * scanned, and no report may say otherwise. Each keeps a malloc(64) on its stack (still reachable,
 * 256 bytes in 4 blocks), and main loses a malloc(32) (definitely lost). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static volatile int done;
static void *volatile lost;
static atomic_int ready; /* workers that hold their block */

static void *worker(void *arg)
{
	void *volatile mine = malloc(64);
	struct timespec ms = {0, 1000000};
	(void)arg;
	atomic_fetch_add(&ready, 1);
	while (!done)
		nanosleep(&ms, NULL);
	return (void *)mine;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, NULL))
			return 2;
	}
	/* Every thread has its block (a fixed 50 ms was not always enough on a loaded machine: a worker
	 * that had not run by the exit allocated after the trace ended, and its block was not in it). */
	struct timespec ms = {0, 1000000};
	while (atomic_load(&ready) < 4)
		nanosleep(&ms, NULL);
	lost = malloc(32);
	lost = NULL;
	done = 1;
	return 0;
}
