/* SPDX-License-Identifier: MIT */
/* A run to hold against a baseline run: `grow OLD [NEW]` loses OLD blocks of 100 bytes at one site
 * (keep_old, LINE OLD) and NEW blocks of 64 bytes at another (keep_new, LINE NEW), and keeps a
 * 4096-byte cache reachable from a global. So `grow 10` against `grow 10` is unchanged, `grow 11`
 * grew by 100 bytes (10%) at keep_old, and `grow 10 1` has a new site leaking 64 bytes. Built with
 * -DPAD, it has one function more before them (the same lines). No stdio. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *volatile cache;

#ifdef PAD /* a rebuild that moves every address below (tests/e2e/test_baseline.py) */
NOINLINE void pad(void)
{
	static volatile int n;
	for (int i = 0; i < 64; i++)
		n += i * n;
}
#endif

NOINLINE static void keep_old(void)
{
	void *volatile p = malloc(100); /* LINE OLD */
	p = NULL;
	(void)p;
}

NOINLINE static void keep_new(void)
{
	void *volatile p = malloc(64); /* LINE NEW */
	p = NULL;
	(void)p;
}

int main(int argc, char **argv)
{
	int old = argc > 1 ? atoi(argv[1]) : 0, new = argc > 2 ? atoi(argv[2]) : 0;
	cache = malloc(4096);
	for (int i = 0; i < old; i++)
		keep_old();
	for (int i = 0; i < new; i++)
		keep_new();
	return 0;
}
