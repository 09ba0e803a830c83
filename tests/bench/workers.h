/* SPDX-License-Identifier: MIT */
/* The live-set workloads' harness (live.c, flat.c): THREADS workers, each running the program's
 * run() on its own state, and the command line THREADS OPS SLOTS MIN SPAN with defaults. */
#ifndef CTRACK_BENCH_WORKERS_H
#define CTRACK_BENCH_WORKERS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "churn_kernel.h"

#define MAX_THREADS 64

struct worker {
	pthread_t id;
	uint64_t state;
	long ops, slots;
	size_t min, span;
	int err;
};

/* The program's work: 0 or a negative errno. */
static int run(struct worker *w);

static void *work(void *arg)
{
	struct worker *w = arg;
	w->err = run(w);
	return NULL;
}

/* Parses THREADS OPS SLOTS MIN SPAN (defaults: def[0..4]), runs the workers, joins them. Returns
 * main's status: 0, or 1 with a message naming name. */
static int workers_main(int argc, char **argv, const char *name, const long def[5])
{
	static struct worker workers[MAX_THREADS];
	long threads = count_arg(argc, argv, 1, def[0]), ops = count_arg(argc, argv, 2, def[1]);
	long slots = count_arg(argc, argv, 3, def[2]), min = count_arg(argc, argv, 4, def[3]);
	long span = count_arg(argc, argv, 5, def[4]);
	if (threads < 0 || threads > MAX_THREADS || ops < 0 || slots < 0 || min < 0 || span < 0) {
		fprintf(stderr, "usage: %s THREADS (1..%d) OPS SLOTS MIN SPAN\n", name, MAX_THREADS);
		return 1;
	}
	int started = 0, err = 0;
	for (; started < threads && !err; started++) {
		struct worker *w = &workers[started];
		*w = (struct worker){.state = 0x5eed + (uint64_t)started * 7919,
		                     .ops = ops,
		                     .slots = slots,
		                     .min = (size_t)min,
		                     .span = (size_t)span};
		err = -pthread_create(&w->id, NULL, work, w);
	}
	for (int i = 0; i < started - (err != 0); i++) {
		pthread_join(workers[i].id, NULL);
		err = err ? err : workers[i].err;
	}
	if (err) {
		fprintf(stderr, "%s: %s\n", name, strerror(-err));
		return 1;
	}
	return 0;
}

#endif
