/* SPDX-License-Identifier: MIT */
/* The record buffer: records are built here, in the encoding of format.h, before the writer
 * compresses them. It grows (arena memory) and never flushes in the middle of a record. */
#include <string.h>

#include "ctrack/format.h"
#include "shim.h"

int ct_arena_grow(void **p, size_t old_bytes, size_t new_bytes)
{
	void *n = ct_arena_map(new_bytes);
	if (!n)
		return -1;
	if (*p) {
		memcpy(n, *p, old_bytes);
		ct_arena_unmap(*p, old_bytes);
	}
	*p = n;
	return 0;
}

int ct_out_reserve(struct ct_out *o, size_t n)
{
	if (CT_LIKELY(o->len + n <= o->cap))
		return 0;
	size_t cap = o->cap ? o->cap : 1u << 20;
	while (cap < o->len + n)
		cap *= 2;
	if (ct_arena_grow((void **)&o->buf, o->len, cap) < 0)
		return -1;
	o->cap = cap;
	return 0;
}

void ct_out_bytes(struct ct_out *o, const void *p, size_t n)
{
	if (ct_out_reserve(o, n) == 0) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	}
}

void ct_out_varint(struct ct_out *o, uint64_t v)
{
	if (ct_out_reserve(o, CT_VARINT_MAX) == 0)
		o->len += ct_put_varint(o->buf + o->len, v);
}

void ct_out_string(struct ct_out *o, const void *p, size_t n)
{
	ct_out_varint(o, n);
	ct_out_bytes(o, p, n);
}

size_t ct_out_begin_framed(struct ct_out *o, unsigned tag)
{
	uint8_t t = (uint8_t)tag;
	ct_out_bytes(o, &t, 1);
	return o->len;
}

void ct_out_end_framed(struct ct_out *o, size_t at)
{
	uint8_t len[CT_VARINT_MAX];
	size_t payload = o->len - at, k = ct_put_varint(len, payload);
	if (ct_out_reserve(o, k) < 0)
		return;
	memmove(o->buf + at + k, o->buf + at, payload);
	memcpy(o->buf + at, len, k);
	o->len += k;
}
