/* SPDX-License-Identifier: MIT */
/* Arrays indexed by a dense id (a module's, a frame's) that grow on demand: doubled until the id
 * fits, the new elements zero-filled, so "not worked out yet" is the zero of the element. */
#ifndef CTRACK_GROW_H
#define CTRACK_GROW_H

#include <stdlib.h>
#include <string.h>

/* Makes *v (*n elements of size bytes) hold element id: 0, or -1 with *v and *n as they were (no
 * memory). first: the length of a first array. */
static inline int ct_grow_zeroed(void **v, size_t *n, size_t id, size_t size, size_t first)
{
	if (id < *n)
		return 0;
	size_t cap = *n ? *n : first;
	while (cap <= id)
		cap *= 2;
	char *p = realloc(*v, cap * size);
	if (!p)
		return -1;
	memset(p + *n * size, 0, (cap - *n) * size);
	*v = p, *n = cap;
	return 0;
}

#endif
