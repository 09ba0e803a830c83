/* SPDX-License-Identifier: MIT */
/* No leak, but a block still reachable at exit: the first printf to a pipe or a file makes libc
 * allocate stdout's buffer (its size is the stream's st_blksize, 4096 on a pipe), which stays
 * pointed to until the process ends; everything the program allocates itself (64 bytes) is freed.
 * valgrind: no bytes lost, the buffer "still reachable". */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char *p = malloc(64);
	if (!p)
		return 1;
	printf("hello\n");
	free(p);
	return 0;
}
