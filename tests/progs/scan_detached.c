/* SPDX-License-Identifier: MIT */
/* Detached threads alive at exit: 4 threads sleep in a loop until main, which never joins them,
 * sets the flag and returns. They are stopped for the scan and end soon after: every one was
 * scanned, and no report may say otherwise. Each keeps a malloc(64) on its stack (still reachable,
 * 256 bytes in 4 blocks), and main loses a malloc(32) (definitely lost). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile int done;
static void *volatile lost;

static void *worker(void *arg)
{
	void *volatile mine = malloc(64);
	struct timespec ms = {0, 1000000};
	(void)arg;
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
	struct timespec wait = {0, 50000000};
	nanosleep(&wait, NULL); /* every thread has its block */
	lost = malloc(32);
	lost = NULL;
	done = 1;
	return 0;
}
