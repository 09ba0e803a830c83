/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() over and over in main while another thread execs: `check_exec N` loses a
 * block, starts a thread that waits a few milliseconds, fails an exec of a missing file, sees main
 * check twice more (else prints "checks stopped after a failed exec" and exits 3), and execs this
 * program again with N - 1; main checks until the exec replaces it. At 0 it prints "generations
 * done" and exits 0. A check that stopped the threads while one of them was in its exec (ptrace
 * refuses to seize a thread then, and the stop fell back to the signal) left its stop signal pending
 * across the exec, and its default action killed the new program (about 1 generation in 8 by the
 * signal, before 2026-12-07). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#define LEAK_SIZE 100

#include "lose.h"

static char *self, next[16];
static atomic_long checks; /* main's checks so far */

/* 1 once main has made two more checks, within 10 s. */
static int checks_go_on(void)
{
	long since = atomic_load(&checks);
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 10000 && atomic_load(&checks) < since + 2; i++)
		nanosleep(&ms, NULL);
	return atomic_load(&checks) >= since + 2;
}

static void *execer(void *arg)
{
	long n = (long)arg;
	struct timespec ts = {0, (3 + n % 5) * 1000000L};
	nanosleep(&ts, NULL);
	snprintf(next, sizeof(next), "%ld", n - 1);
	char *argv[] = {self, next, NULL};
	/* First an exec that fails: main's checks must go on after it (ctrack holds its lock through
	 * an exec, and gives it back when the exec returns). */
	if (execv("/nonexistent/check_exec", argv) == 0 || errno != ENOENT || !checks_go_on()) {
		puts("checks stopped after a failed exec");
		exit(3);
	}
	execv(self, argv);
	perror("execv");
	exit(2);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	if (n <= 0) {
		puts("generations done");
		return 0;
	}
	self = argv[0];
	lose();
	pthread_t t;
	if (pthread_create(&t, NULL, execer, (void *)n) != 0)
		return 1;
	for (;;) {
		ctrack_check_leaks();
		atomic_fetch_add(&checks, 1);
	}
}
