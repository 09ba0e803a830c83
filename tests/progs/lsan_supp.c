/* SPDX-License-Identifier: MIT */
/* A program that carries its own leak suppressions, as LeakSanitizer reads them: its
 * __lsan_default_suppressions() suppresses cached_forever's block (64 bytes). real_leak's block
 * (32 bytes) is definitely lost and not suppressed. No stdio. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "# kept for the process's life, by design\nleak:cached_forever\n";
}

static void *volatile sink;

NOINLINE static void cached_forever(void)
{
	sink = malloc(64);
	sink = NULL;
}

NOINLINE static void real_leak(void)
{
	sink = malloc(32);
	sink = NULL;
}

int main(void)
{
	cached_forever();
	real_leak();
	return 0;
}
