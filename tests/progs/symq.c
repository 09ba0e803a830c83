/* SPDX-License-Identifier: MIT */
/* Symbol-quality subject for tests/e2e/test_symbols.py: one leak through an always_inline helper,
 * so an optimized -g build must carry a DW_TAG_inlined_subroutine; the asm keeps the call. */
#include <stdlib.h>

static inline __attribute__((always_inline)) char *helper_alloc(size_t n)
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
