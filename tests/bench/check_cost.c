/* SPDX-License-Identifier: MIT */
/* What one ctrack_check_leaks() costs with THREADS other threads asleep in pause() (docs/benchmarks.md,
 * "Stopping threads for a scan with ptrace"): each check stops them all and lets them go. Prints the
 * milliseconds per check, the mean of 10. Usage: ctrack -q -o t.zst check_cost THREADS (with
 * CTRACK_SCAN_STOP=signal for the signal's stop). Built by hand: cc -O2 -pthread -Iinclude. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	pthread_attr_t small;
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 65536);
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &small, sleeper, NULL) != 0)
			return 1;
	}
	usleep(200000); /* all of them in pause() */
	double t0 = now();
	for (int i = 0; i < 10; i++)
		ctrack_check_leaks();
	printf("%d threads: %.2f ms per check\n", n, (now() - t0) * 100);
	fflush(stdout);
	_exit(0); /* the sleepers never end */
}
