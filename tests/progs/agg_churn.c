/* SPDX-License-Identifier: MIT */
/* A server's churn in miniature, for aggregated traces (ctrack --aggregate): `agg_churn ROUNDS
 * THREADS` runs ROUNDS rounds on each of THREADS threads (1: the main thread alone). A round makes
 * SITES steps, each at a site s (0..7) and a slot of its RING, chosen by a fixed pseudo-random
 * sequence: one temporary block of 16 + 8 s bytes (malloc, free), and the slot's kept block of
 * 100 + s bytes replaced (free the old one, if any, malloc a new one: not temporary, its block was
 * allocated before). After the rounds a
 * peak: 40 blocks of 4096 bytes at once, freed; then each thread frees its rings and leaks LEAKS
 * blocks of 33 bytes. The main thread calls ctrack_mark("half") after half its rounds and
 * ctrack_mark("done") after them (threads: after joining them).
 * Its own figures, printed on stdout (write(2): no stdio buffer) as
 * "allocations A frees F bytes B temporary T leaked_bytes L leaked_allocations N", per thread:
 *   allocations = ROUNDS * SITES * 2 + 40 + LEAKS, temporary = ROUNDS * SITES,
 *   frees = allocations - LEAKS (the rings are freed), leaked = LEAKS blocks of 33 bytes;
 * the threads' figures add up (glibc's own allocations for a thread come on top: compare those with
 * valgrind). Single-threaded, with ROUNDS >= 100 every slot is filled before the peak: RING kept
 * blocks per site plus the 40, 16 * (8 * 100 + 28) + 40 * 4096 = 177088 bytes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#define NOINLINE __attribute__((noinline))
#define SITES 8
#define RING 16
#define PEAK 40
#define LEAKS 3

struct counts {
	unsigned long long allocations, frees, bytes, temporary;
};

static long rounds;
static struct counts *main_counts;

static NOINLINE void *get(struct counts *c, size_t n)
{
	c->allocations++;
	c->bytes += n;
	return malloc(n);
}

static NOINLINE void put(struct counts *c, void *p)
{
	c->frees += p != NULL;
	free(p);
}

/* One round at site s: a temporary block, and the kept block of slot `slot` replaced. */
static NOINLINE void churn_site(struct counts *c, void **ring, unsigned slot, int s)
{
	void *t = get(c, 16 + 8 * (size_t)s);
	put(c, t);
	c->temporary++;
	put(c, ring[slot]);
	ring[slot] = get(c, 100 + (size_t)s);
}

static NOINLINE void peak(struct counts *c)
{
	void *b[PEAK];
	for (int i = 0; i < PEAK; i++)
		b[i] = get(c, 4096);
	for (int i = 0; i < PEAK; i++)
		put(c, b[i]);
}

static NOINLINE void leak(struct counts *c)
{
	for (int i = 0; i < LEAKS; i++)
		memset(get(c, 33), 0, 33); /* lost: no pointer kept */
}

static void *run(void *arg)
{
	struct counts *c = arg;
	void *ring[SITES][RING] = {{0}};
	unsigned x = 12345; /* a fixed pseudo-random order: the trace of every event compresses less */
	for (long r = 0; r < rounds; r++) {
		if (r == rounds / 2 && c == main_counts)
			ctrack_mark("half");
		for (int k = 0; k < SITES; k++) {
			x = x * 1103515245u + 12345u;
			churn_site(c, ring[(k + (x >> 16)) % SITES], (x >> 20) % RING,
			           (int)((k + (x >> 16)) % SITES));
		}
	}
	peak(c);
	for (int s = 0; s < SITES; s++)
		for (int i = 0; i < RING; i++)
			put(c, ring[s][i]);
	leak(c);
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 1000;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	if (threads < 1 || threads > 16 || rounds < 2)
		return 2;
	struct counts c[16];
	memset(c, 0, sizeof(c));
	pthread_t t[16];
	main_counts = &c[0];
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, run, &c[i]))
			return 3;
	run(&c[0]);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	ctrack_mark("done");
	struct counts sum = {0};
	for (int i = 0; i < threads; i++) {
		sum.allocations += c[i].allocations;
		sum.frees += c[i].frees;
		sum.bytes += c[i].bytes;
		sum.temporary += c[i].temporary;
	}
	char line[256];
	int n = snprintf(line, sizeof(line),
	                 "allocations %llu frees %llu bytes %llu temporary %llu leaked_bytes %d "
	                 "leaked_allocations %d\n",
	                 sum.allocations, sum.frees, sum.bytes, sum.temporary, 33 * LEAKS * threads,
	                 LEAKS * threads);
	return write(1, line, (size_t)n) == n ? 0 : 4;
}
