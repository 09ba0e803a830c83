/* SPDX-License-Identifier: MIT */
/* Benchmark workload "threads" (scripts/bench): 4 threads x 1,000,000 malloc/free pairs each, all running at
 * once, each with its own seed. Usage: threads [THREADS [PAIRS]]. Exit 0, or 1 on error. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "churn_kernel.h"

#define MAX_THREADS 256

struct worker {
	pthread_t id;
	uint64_t seed;
	long pairs;
	int err;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	w->err = run_churn(w->seed, w->pairs);
	return NULL;
}

/* Joins the first n workers; returns the first error any of them met, or 0. */
static int join_all(struct worker *w, int n)
{
	int err = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].id, NULL);
		if (!err)
			err = w[i].err;
	}
	return err;
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS];
	long threads = count_arg(argc, argv, 1, 4);
	long pairs = count_arg(argc, argv, 2, 1000000);
	if (threads < 0 || threads > MAX_THREADS || pairs < 0) {
		fprintf(stderr, "usage: threads [THREADS (1..%d) [PAIRS]]\n", MAX_THREADS);
		return 1;
	}
	int started = 0, err = 0;
	for (; started < threads; started++) {
		struct worker *w = &workers[started];
		w->seed = 0x5eed + (uint64_t)started * 7919;
		w->pairs = pairs;
		err = -pthread_create(&w->id, NULL, work, w);
		if (err)
			break;
	}
	int joined_err = join_all(workers, started);
	if (!err)
		err = joined_err;
	if (err) {
		fprintf(stderr, "threads: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
