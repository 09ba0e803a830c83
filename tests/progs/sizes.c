/* SPDX-License-Identifier: MIT */
/* Allocations of known sizes for the size histogram. Each row is allocated into an array, then its
 * blocks are freed in allocation order, except those kept (leaked); no stdio, no other allocation.
 *   size     count  kept   bucket
 *   0          3     0     0 (0 bytes)
 *   1         10     0     1..1
 *   24         7     7     16..31
 *   100        5     0     64..127
 *   5000       2     1     4096..8191
 *   1048576    1     0     1048576..2097151 (calloc; freed as the next event: temporary)
 * Only the last row's block is temporary: every other free follows an allocation of another block.
 * Every block comes from one site, row() at the line marked ALLOC: each bucket's one top site. */
#include <stdlib.h>

static void *kept[8];
static size_t nkept;

static int row(size_t size, int count, int keep, int zeroed)
{
	void *v[16];
	for (int i = 0; i < count; i++)
		if (!(v[i] = zeroed ? calloc(1, size) : malloc(size)) && size) /* LINE ALLOC */
			return 1;
	for (int i = 0; i < count; i++) {
		if (i < count - keep)
			free(v[i]);
		else
			kept[nkept++] = v[i];
	}
	return 0;
}

int main(void)
{
	return row(0, 3, 0, 0) || row(1, 10, 0, 0) || row(24, 7, 7, 0) || row(100, 5, 0, 0) ||
	       row(5000, 2, 1, 0) || row(1048576, 1, 0, 1);
}
