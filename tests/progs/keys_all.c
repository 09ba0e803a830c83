/* SPDX-License-Identifier: MIT */
/* A program that takes every pthread key glibc has (it prints how many it got: PTHREAD_KEYS_MAX,
 * 1024, when it runs alone), then runs 64 threads, 4 at a time, each of which allocates, keeps a
 * malloc(32) in the first key (its destructor frees it at the thread's end), and ends. Every block is freed:
 * in use at exit 0 bytes. A tracer must leave all the keys to the program and still see every thread's end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_key_t keys[2048];

static void release(void *p)
{
	free(p);
}

static void *worker(void *arg)
{
	for (int i = 0; i < 100; i++)
		free(malloc(24 + (size_t)i));
	pthread_setspecific(keys[0], malloc(32));
	return arg;
}

int main(void)
{
	int n = 0;
	while (n < 2048 && pthread_key_create(&keys[n], n ? NULL : release) == 0)
		n++;
	printf("%d keys\n", n);
	for (int round = 0; round < 16; round++) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, worker, NULL))
				return 2;
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	return 0;
}
