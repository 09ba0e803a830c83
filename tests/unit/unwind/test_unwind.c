/* SPDX-License-Identifier: MIT */
/* ct_unwind against ct_unwind_slow from varied stacks (plain calls, callee-saved RBP, VLAs, deep
 * recursion, a signal handler, threads, after invalidation); "bench" times both on a warm cache. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "check.h"

#define NOINLINE __attribute__((noinline))

/* A volatile read after each call keeps the compiler from turning calls into jumps or loops. */
static volatile int keep = 1;

static NOINLINE int chain(int depth, int max, enum ctt_expect expect)
{
	if (depth == 0) {
		ctt_check("chain", max, expect);
		return 0;
	}
	int r = chain(depth - 1, max, expect);
	return r + keep;
}

/* Enough values live across the call that RBP becomes a callee-saved register (saved at CFA-k). */
static NOINLINE long heavy(int depth, const long *v)
{
	long a = v[0] * 3, b = v[1] * 5, c = v[2] * 7, d = v[3] * 11, e = v[4] * 13, f = v[5] * 17;
	if (depth == 0)
		ctt_check("heavy", 64, CTT_FAST);
	else
		a += heavy(depth - 1, v);
	return a * b + c * d + e * f + keep;
}

/* A VLA: the frame size is dynamic, so its CFA is RBP-based even with -fomit-frame-pointer. */
static NOINLINE int vla(int depth, int size)
{
	volatile char buf[size];
	buf[0] = (char)depth;
	if (depth == 0)
		ctt_check("vla", 64, CTT_FAST);
	else
		vla(depth - 1, size * 2 + 1);
	return buf[0] + keep;
}

static void on_signal(int sig)
{
	/* The stack crosses __restore_rt, whose CFI is expressions: libunwind must take over. */
	ctt_check("signal", 64, CTT_FALLBACK);
	chain(3, 64, CTT_FALLBACK);
}

static NOINLINE int raise_here(int depth)
{
	if (depth == 0)
		raise(SIGUSR1);
	else
		raise_here(depth - 1);
	return keep;
}

static void scenarios(void)
{
	static const long v[6] = {1, 2, 3, 4, 5, 6};

	chain(1, 64, CTT_FAST);
	chain(6, 64, CTT_FAST);
	chain(6, 3, CTT_FAST);              /* truncated after 3 */
	chain(300, 64, CTT_FAST);           /* deep recursion, truncated */
	chain(300, 400, CTT_FAST);          /* deep recursion, whole */
	heavy(4, v);
	vla(5, 17);
	raise_here(2);
	chain(6, 64, CTT_FAST);             /* the signal left no trace in the cache */
}

static void *thread_main(void *arg)
{
	for (int i = 0; i < 200; i++) {
		scenarios();
		if (i % 50 == 0)
			ctu_invalidate();
	}
	return arg;
}

static int run_threads(int count)
{
	pthread_t t[8];
	for (int i = 0; i < count; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			return -1;
	for (int i = 0; i < count; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static double ns_per_walk(int (*walker)(uintptr_t *, int, int *), long walks, int *frames)
{
	uintptr_t ips[64];
	int truncated;
	struct timespec a, b;

	*frames = walker(ips, 64, &truncated);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < walks; i++)
		walker(ips, 64, &truncated);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / walks;
}

static NOINLINE int bench(int depth)
{
	if (depth > 0)
		return bench(depth - 1) + keep;
	int nf, ns;
	double fast = ns_per_walk(ctu_fast, 1000000, &nf);
	double slow = ns_per_walk(ctu_slow, 200000, &ns);
	printf("bench: %d frames: ct_unwind %.1f ns/walk, ct_unwind_slow (libunwind) %.1f ns/walk, "
	       "%.1fx, fallbacks %lu\n", nf, fast, slow, slow / fast, ctu_fallbacks());
	return nf == ns && fast < slow ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench(3);
	signal(SIGUSR1, on_signal);
	for (int i = 0; i < 3; i++)
		scenarios();
	ctu_invalidate();
	scenarios();
	if (run_threads(4))
		return 1;
	return ctt_report(argv[0]);
}
