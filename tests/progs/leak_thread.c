/* SPDX-License-Identifier: MIT */
/* Leak classes with threads: a thread still running at exit keeps a malloc(777) only in a local
 * variable of its stack (still reachable: its stack is a root), and main leaks a malloc(55)
 * (definitely lost). glibc's own per-thread block, the thread's TLS vector, is reached only through
 * an interior pointer from the thread's control block: possibly lost, for memcheck and ctrack. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t ready;
static void *volatile lost;

static void *worker(void *arg)
{
	void *volatile only_here = malloc(777);
	(void)arg;
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return (void *)only_here;
}

int main(void)
{
	pthread_t t;
	pthread_barrier_init(&ready, NULL, 2);
	if (pthread_create(&t, NULL, worker, NULL))
		return 2;
	pthread_barrier_wait(&ready);
	lost = malloc(55);
	lost = NULL;
	return 0;
}
