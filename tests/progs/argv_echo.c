/* SPDX-License-Identifier: MIT */
/* Allocates one block (malloc(16), freed) so there is something to trace, and exits 0; the test
 * checks that the trace holds its argv byte for byte. */
#include <stdlib.h>

int main(void)
{
	void *p = malloc(16);
	free(p);
	return p ? 0 : 1;
}
