/* SPDX-License-Identifier: MIT */
/* Leaks at three sites for the CI reports (tests/e2e/test_ci.py); with the argument "none", frees
 * everything and leaks nothing. No stdio. The leak sites, largest first:
 *   make_buffer  malloc(100) at LINE BUFFER, called 3 times from main: 300 bytes in 3 blocks
 *   make_table   calloc(8, 16) at LINE TABLE, once: 128 bytes in 1 block
 *   make_name    malloc(24) at LINE NAME, once: 24 bytes in 1 block
 * Leaked: 452 bytes in 5 blocks (5 allocations), all definitely lost: main keeps no pointer to them.
 * With "none": the same 5 allocations, 5 frees. */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *make_buffer(void)
{
	return malloc(100); /* LINE BUFFER */
}

NOINLINE static void *make_table(void)
{
	return calloc(8, 16); /* LINE TABLE */
}

NOINLINE static void *make_name(void)
{
	return malloc(24); /* LINE NAME */
}

int main(int argc, char **argv)
{
	void *v[5];
	for (int i = 0; i < 3; i++)
		v[i] = make_buffer(); /* LINE MAIN_BUFFER */
	v[3] = make_table();
	v[4] = make_name();
	if (argc > 1 && !strcmp(argv[1], "none"))
		for (int i = 0; i < 5; i++)
			free(v[i]);
	return 0;
}
