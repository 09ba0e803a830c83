/* SPDX-License-Identifier: MIT */
/* Allocates, then replaces itself with argv[1] (argv[1..] as its arguments).
 * Before the exec: exec_leak malloc(111) never freed, malloc(222) freed:
 *   2 allocations, 1 free, 333 bytes; 111 bytes in 1 allocation still live at the exec.
 * Exit status 127 if execv fails. */
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static int exec_leak(void)
{
	return malloc(111) != NULL;
}

int main(int argc, char **argv)
{
	void *p = malloc(222);
	free(p);
	if (argc < 2 || !p || !exec_leak())
		return 2;
	execv(argv[1], argv + 1);
	return 127;
}
