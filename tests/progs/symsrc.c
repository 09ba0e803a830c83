/* SPDX-License-Identifier: MIT */
/* Debug-info sources subject for tests/e2e/test_symsrc.py (built there at -O2 -g, then compressed,
 * reduced to MiniDebugInfo or split off for debuginfod). Run with no arguments it leaks two blocks:
 * 40 bytes from leak_plain (noinline) and 56 bytes from inline_alloc, always_inline into
 * leak_inlined. The LINE: comments mark the lines the frames must name; the asm keeps each call. */
#include <stdlib.h>

__attribute__((noinline)) char *leak_plain(size_t n)
{
	char *p = malloc(n); /* LINE:plain_alloc */
	/* Using the block after the call: malloc is no tail call, its return address stays here. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static inline __attribute__((always_inline)) char *inline_alloc(size_t n)
{
	char *p = malloc(n); /* LINE:inline_alloc */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* n depends on argc, so gcc clones neither function for a constant (leak_plain.constprop.0). */
__attribute__((noinline)) char *leak_inlined(size_t n)
{
	char *p = inline_alloc(n); /* LINE:inline_call */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	(void)argv;
	char *a = leak_plain((size_t)argc * 40); /* LINE:call_plain */
	__asm__ volatile("" : : "r"(a) : "memory");
	char *b = leak_inlined((size_t)argc * 56); /* LINE:call_inlined */
	__asm__ volatile("" : : "r"(b) : "memory");
	return 0;
}
