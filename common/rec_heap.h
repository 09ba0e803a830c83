/* SPDX-License-Identifier: MIT */
/* Growth for a record buffer (include/ctrack/record.h) on the heap: realloc, at least doubling.
 * For the analyzer (a BATCH's joined records) and the tests only: the shim never calls malloc and
 * grows its buffer with mmap. */
#ifndef CTRACK_COMMON_REC_HEAP_H
#define CTRACK_COMMON_REC_HEAP_H

#include <stdlib.h>

#include "ctrack/record.h"

static inline int ct_rec_grow_heap(struct ct_rec_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 16;
	while (b->len + need > cap)
		cap *= 2;
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

#endif
