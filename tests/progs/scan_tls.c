/* SPDX-License-Identifier: MIT */
/* A joined thread's static TLS: a thread stores a malloc(333) in a __thread variable and ends; main
 * joins it and returns. glibc keeps the dead thread's stack, with its static TLS below its control
 * block, for the next thread, and memcheck reads that TLS: still reachable, 333 bytes in 1 block.
 * A malloc(44) the thread dropped is definitely lost. */
#include <pthread.h>
#include <stdlib.h>

static __thread void *kept;
static void *volatile dropped;

static void *worker(void *arg)
{
	(void)arg;
	kept = malloc(333);
	dropped = malloc(44);
	dropped = NULL;
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		return 2;
	return 0;
}
