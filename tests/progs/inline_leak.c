/* SPDX-License-Identifier: MIT */
/* One 48-byte leak through two always_inline helpers, built at -O2 -g by tests/e2e/test_inline.py:
 * the LINE: comments mark the lines its frames must name; the escapes keep gcc and clang's calls. */
#include <stdlib.h>

static inline __attribute__((always_inline)) char *inner_alloc(size_t n)
{
	char *p = malloc(n); /* LINE:alloc */
	/* Using the block after the call: malloc is no tail call, its return address stays here. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static inline __attribute__((always_inline)) char *middle_alloc(size_t n)
{
	char *p = inner_alloc(n + 8); /* LINE:inner */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* n depends on argc, so no compiler clones outer for a constant (outer.constprop.0). */
__attribute__((noinline)) char *outer(size_t n)
{
	char *p = middle_alloc(n); /* LINE:middle */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	(void)argv;
	char *p = outer((size_t)argc * 40); /* LINE:outer */
	__asm__ volatile("" : : "r"(p) : "memory");
	return 0;
}
