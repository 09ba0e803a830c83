/* SPDX-License-Identifier: MIT */
/* A suppressed leak that holds another block. hold_cache's block (64 bytes) is suppressed by the
 * program's own __lsan_default_suppressions (leak:hold_cache) and holds the only pointer to
 * make_child's block (32 bytes), which no suppression names: memcheck calls the first definitely
 * and the second indirectly lost; LeakSanitizer reports neither (a block reachable from a suppressed
 * one is no leak). With an argument, real_leak also loses 16 bytes, definitely lost and not
 * suppressed, which LeakSanitizer reports alone. No stdio. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:hold_cache\n";
}

static void *volatile sink;

NOINLINE static void *make_child(void)
{
	return malloc(32);
}

NOINLINE static void hold_cache(void *child)
{
	void **cache = malloc(64);
	cache[0] = child;
	sink = cache;
	sink = NULL;
}

NOINLINE static void real_leak(void)
{
	sink = malloc(16);
	sink = NULL;
}

int main(int argc, char **argv)
{
	(void)argv;
	hold_cache(make_child());
	if (argc > 1)
		real_leak();
	return 0;
}
