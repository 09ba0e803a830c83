/* SPDX-License-Identifier: MIT */
/* One 72-byte leak from a named function, built at -O1 -g with lld and with the default linker by
 * tests/e2e/test_lld.py: both must name leak_here and main at the lines the LINE: comments mark. */
#include <stdlib.h>

__attribute__((noinline)) char *leak_here(size_t n)
{
	char *p = malloc(n); /* LINE:alloc */
	/* Using the block after the call: malloc is no tail call, its return address stays here. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	(void)argv;
	char *p = leak_here((size_t)argc * 72); /* LINE:call */
	__asm__ volatile("" : : "r"(p) : "memory");
	return 0;
}
