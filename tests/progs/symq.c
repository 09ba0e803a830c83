/* SPDX-License-Identifier: MIT */
/* Symbol-quality subject for tests/e2e/test_symbols.py: one leak through an always_inline helper,
 * so an optimized -g build must carry a DW_TAG_inlined_subroutine (with -DNO_INLINE, a noinline
 * one, so it carries none); the asm keeps the call. */
#include <stdlib.h>

#ifdef NO_INLINE /* nothing inlined at all: a -g build without a single inline record */
#define HELPER static __attribute__((noinline))
#else
#define HELPER static inline __attribute__((always_inline))
#endif

HELPER char *helper_alloc(size_t n)
{
	char *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	(void)argv;
	char *p = helper_alloc((size_t)argc * 24);
	__asm__ volatile("" : : "r"(p) : "memory");
	return 0;
}
