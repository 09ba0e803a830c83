/* SPDX-License-Identifier: MIT */
/* errno under the hooks in threads other than the first (the hooks reach each thread's errno from its
 * thread pointer, hooks.c): THREADS threads each set errno to a value of their own, then make ROUNDS
 * rounds of malloc(16 + round % 64), calloc(2, 24), realloc of the calloc'ed block to 100 bytes, and
 * two frees, checking after every call that errno is still their value; the main thread does the same
 * meanwhile. Calls: 5 * ROUNDS each of malloc, calloc and realloc (of a block, to a larger size), and
 * 5 * ROUNDS * 2 of free; nothing is leaked. Exit status: 0, or 1 when a check failed (named on stderr
 * with write(2)). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 20000

static void complain(const char *what)
{
	write(2, what, strlen(what));
	write(2, "\n", 1);
}

/* One thread's rounds with errno set to `mine`: 0, or -1 at the first check that fails. */
static int rounds(int mine)
{
	errno = mine;
	for (int i = 0; i < ROUNDS; i++) {
		char *a = malloc(16 + (size_t)(i % 64));
		if (!a || errno != mine)
			return complain("malloc changed errno"), -1;
		char *b = calloc(2, 24);
		if (!b || errno != mine)
			return complain("calloc changed errno"), -1;
		char *c = realloc(b, 100);
		if (!c || errno != mine)
			return complain("realloc changed errno"), -1;
		a[0] = c[0] = 1;
		free(a);
		if (errno != mine)
			return complain("free changed errno"), -1;
		free(c);
		if (errno != mine)
			return complain("free changed errno"), -1;
	}
	return 0;
}

static void *worker(void *arg)
{
	return (void *)(long)rounds(1000 + (int)(long)arg);
}

int main(void)
{
	pthread_t t[THREADS];
	int failed = 0;
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return complain("pthread_create failed"), 1;
	failed |= rounds(999);
	for (int i = 0; i < THREADS; i++) {
		void *rc;
		pthread_join(t[i], &rc);
		failed |= rc != NULL;
	}
	return failed ? 1 : 0;
}
