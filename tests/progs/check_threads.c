/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() many times over while other threads allocate: each check stops every other
 * thread with a signal and lets them go (leakscan.c). Once, a check found the counts of the one
 * before it and put the signal's default action back before its last thread had taken the signal:
 * SIGRTMAX's default action ended the process. THREADS workers allocate and free in a loop; main loses
 * LOST blocks of LEAK_SIZE bytes, then checks CHECKS times and prints every answer on one line:
 *   checks: 300 300 ... (CHECKS times LOST * LEAK_SIZE) under ctrack, -1 ... without it.
 * Printed with write(2), so stdio allocates nothing. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#define THREADS 4
#define CHECKS 40
#define LOST 3
#define LEAK_SIZE 100

#include "lose.h"

static atomic_int stop;
static void *volatile escape;

static void *work(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		char *p = malloc(64);
		escape = p;
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			return 1;
	for (int i = 0; i < LOST; i++)
		lose();
	static char line[CHECKS * 24 + 16];
	size_t n = (size_t)snprintf(line, sizeof(line), "checks:");
	for (int i = 0; i < CHECKS; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %lld", ctrack_check_leaks());
	n += (size_t)snprintf(line + n, sizeof(line) - n, "\n");
	atomic_store(&stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return write(STDOUT_FILENO, line, n) == (ssize_t)n ? 0 : 1;
}
