/* SPDX-License-Identifier: MIT */
/* A cursor over a framed record's payload, for the reader (reader.c) and the snapshots' reader
 * (aggregated.c): a read past its end marks it short and gives 0. Header-only. */
#ifndef CTRACK_CURSOR_H
#define CTRACK_CURSOR_H

#include <stdint.h>

#include "ctrack/format.h"

struct ct_cursor {
	const uint8_t *p, *end;
	int shorted, nomem; /* nomem: the reader's, a copy that could not be made */
};

static inline uint64_t ct_cur_v(struct ct_cursor *c)
{
	uint64_t v = 0;
	int k = ct_get_varint(c->p, c->end, &v);
	if (k <= 0) {
		c->shorted = 1;
		c->p = c->end;
		return 0;
	}
	c->p += k;
	return v;
}

static inline uint8_t ct_cur_u8(struct ct_cursor *c)
{
	if (c->p >= c->end) {
		c->shorted = 1;
		return 0;
	}
	return *c->p++;
}

#endif
