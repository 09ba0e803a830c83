/* SPDX-License-Identifier: MIT */
/* The BATCH record's columns (format.h): the one splitter, for the shim's writer, and the one
 * joiner, for readers, of a run of records into columns and back, byte for byte.
 *
 * A record goes to the columns as follows; a column holds its records' bytes in record order.
 *   TAG   one byte per record: its tag; for ALLOC, FREE and TEMP in the short form, the tag byte
 *         without its low 5 bits (0xa0, 0xc0, 0xe0); RECENT's one byte as it is.
 *   ID0, ID1, ID2  the alloc info id of a short ALLOC, FREE or TEMP: the tag byte's low 5 bits
 *         (the id's low 4 and the flag of the varint) to ID0, the varint's first byte to ID1, the
 *         rest of it to ID2. Ids are the bulk of a trace and nearly random, and each byte
 *         position has its own distribution.
 *   DEFS  the two varints of INFO and FRAME records.
 *   CORE  the varints of the other core records (TIME, TEMPFREE, the long forms).
 *   FRAMED the length and payload of framed records.
 * Header-only and static inline, like record.h; nothing here allocates, locks or uses stdio. */
#ifndef CTRACK_COLUMNS_H
#define CTRACK_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

#include "ctrack/record.h"

enum ct_column { CT_COL_TAG, CT_COL_ID0, CT_COL_ID1, CT_COL_ID2, CT_COL_DEFS, CT_COL_CORE, CT_COL_FRAMED };
#define CT_COLUMNS 7

/* Columns being written (each col[i] has room for as many bytes as the records split) or read
 * (col[i] holds len[i] bytes, pos[i] of them consumed). room: for a writer that appends records
 * straight to the columns (ct_col_short_event, ct_col_recent, ct_col_core1), how many more it may
 * append before it must make room; each adds at most CT_VARINT_MAX bytes to any one column. */
struct ct_columns {
	uint8_t *col[CT_COLUMNS];
	size_t len[CT_COLUMNS];
	size_t pos[CT_COLUMNS];
	size_t room;
};

/* The column of a core record's varints. */
static inline enum ct_column ct_col_of_core(unsigned tag)
{
	return tag == CT_REC_INFO || tag == CT_REC_FRAME ? CT_COL_DEFS : CT_COL_CORE;
}

/* Appends the varint at [p, end) to column k: its length, or 0 if it does not end in time. */
static inline size_t ct_col_put_varint(struct ct_columns *c, enum ct_column k, const uint8_t *p,
                                       const uint8_t *end)
{
	uint8_t *to = c->col[k] + c->len[k];
	for (size_t i = 0; i < CT_VARINT_MAX && p + i < end; i++) {
		to[i] = p[i];
		if (!(p[i] & 0x80)) {
			c->len[k] += i + 1;
			return i + 1;
		}
	}
	return 0;
}

/* Splits the records [p, p + n) into c (lengths zero, each column with room for n bytes).
 * Returns 0, or -1 when the bytes are not whole records that a BATCH may hold (c is then
 * meaningless: write the records as they are). */
static inline int ct_columns_split(const uint8_t *p, size_t n, struct ct_columns *c)
{
	const uint8_t *end = p + n;
	while (p < end) {
		unsigned tag = *p++;
		if (ct_tag_is_short(tag)) {
			if (!(tag & 0x60)) { /* RECENT */
				c->col[CT_COL_TAG][c->len[CT_COL_TAG]++] = (uint8_t)tag;
				continue;
			}
			c->col[CT_COL_TAG][c->len[CT_COL_TAG]++] = (uint8_t)(tag & 0xe0);
			c->col[CT_COL_ID0][c->len[CT_COL_ID0]++] = (uint8_t)(tag & 0x1f);
			if (!(tag & 0x10))
				continue;
			if (p >= end)
				return -1;
			c->col[CT_COL_ID1][c->len[CT_COL_ID1]++] = *p;
			if (!(*p++ & 0x80))
				continue;
			size_t m = ct_col_put_varint(c, CT_COL_ID2, p, end);
			if (!m)
				return -1;
			p += m;
			continue;
		}
		c->col[CT_COL_TAG][c->len[CT_COL_TAG]++] = (uint8_t)tag;
		int fields = ct_core_fields(tag);
		enum ct_column to = ct_col_of_core(tag);
		for (int f = 0; f < fields; f++) {
			size_t m = ct_col_put_varint(c, to, p, end);
			if (!m)
				return -1;
			p += m;
		}
		if (fields)
			continue;
		uint64_t len;
		int k = ct_tag_is_framed(tag) && tag != CT_REC_BATCH ? ct_get_varint(p, end, &len) : -1;
		if (k <= 0 || len > (uint64_t)(end - p - k))
			return -1;
		memcpy(c->col[CT_COL_FRAMED] + c->len[CT_COL_FRAMED], p, (size_t)k + len);
		c->len[CT_COL_FRAMED] += (size_t)k + len;
		p += (size_t)k + len;
	}
	return 0;
}

/* ---- the writer's direct path ----
 * The records the writer makes most, appended to the columns exactly where ct_columns_split would
 * put their bytes, without writing them as records first (the split was a tenth of the writer's
 * instructions, issue 25). Room is the caller's (c->room). */

/* ALLOC, FREE or TEMP of alloc info `info` in the short form (ct_put_short_event). Every length
 * and column is read before the first byte is stored: a byte store may alias them all. */
static inline void ct_col_short_event(struct ct_columns *c, unsigned tag, uint64_t info)
{
	size_t lt = c->len[CT_COL_TAG], l0 = c->len[CT_COL_ID0];
	uint8_t *t = c->col[CT_COL_TAG], *z = c->col[CT_COL_ID0];
	c->len[CT_COL_TAG] = lt + 1;
	c->len[CT_COL_ID0] = l0 + 1;
	t[lt] = (uint8_t)(CT_TAG_SHORT_MIN | tag << 5);
	z[l0] = (uint8_t)((info >= 16 ? 0x10 : 0) | (info & 15));
	if (info < 16)
		return;
	uint64_t v = info >> 4; /* the varint: its first byte to ID1, the rest to ID2 */
	size_t l1 = c->len[CT_COL_ID1];
	uint8_t *o = c->col[CT_COL_ID1];
	c->len[CT_COL_ID1] = l1 + 1;
	o[l1] = (uint8_t)(v >= 0x80 ? v | 0x80 : v);
	if (v >= 0x80)
		c->len[CT_COL_ID2] += ct_put_varint(c->col[CT_COL_ID2] + c->len[CT_COL_ID2], v >> 7);
}

/* RECENT of age 1..CT_RECENT_WINDOW (ct_put_recent). */
static inline void ct_col_recent(struct ct_columns *c, uint32_t age)
{
	c->col[CT_COL_TAG][c->len[CT_COL_TAG]++] = (uint8_t)(CT_TAG_SHORT_MIN | (age - 1));
}

/* A core record of one varint other than INFO and FRAME (TEMPFREE, TIME). */
static inline void ct_col_core1(struct ct_columns *c, unsigned tag, uint64_t v)
{
	c->col[CT_COL_TAG][c->len[CT_COL_TAG]++] = (uint8_t)tag;
	c->len[CT_COL_CORE] += ct_put_varint(c->col[CT_COL_CORE] + c->len[CT_COL_CORE], v);
}

/* A core record of two varints (INFO, FRAME): two appends' worth of room. */
static inline void ct_col_core2(struct ct_columns *c, unsigned tag, uint64_t a, uint64_t b)
{
	enum ct_column k = ct_col_of_core(tag);
	c->col[CT_COL_TAG][c->len[CT_COL_TAG]++] = (uint8_t)tag;
	c->len[k] += ct_put_varint(c->col[k] + c->len[k], a);
	c->len[k] += ct_put_varint(c->col[k] + c->len[k], b);
}

/* Reads the columns' lengths at the start of a BATCH payload [p, end) and points c at the
 * columns. Returns 0, or -1 when they do not fit the payload exactly. */
static inline int ct_columns_open(const uint8_t *p, const uint8_t *end, struct ct_columns *c)
{
	uint64_t total = 0;
	for (int i = 0; i < CT_COLUMNS; i++) {
		uint64_t len;
		int k = ct_get_varint(p, end, &len);
		if (k <= 0 || len > (uint64_t)(end - p))
			return -1;
		p += k;
		c->len[i] = (size_t)len;
		c->pos[i] = 0;
		total += len;
	}
	if (total != (uint64_t)(end - p))
		return -1;
	for (int i = 0; i < CT_COLUMNS; i++) {
		c->col[i] = (uint8_t *)p;
		p += c->len[i];
	}
	return 0;
}

/* The varint at *p (before end), at most max bytes long, copied to *o; both move past it. 0, or -1
 * when the column ends first or the varint is longer. */
static inline int ct_col_copy_varint(const uint8_t **p, const uint8_t *end, uint8_t **o, size_t max)
{
	const uint8_t *q = *p;
	uint8_t *w = *o;
	for (size_t m = 0; m < max && q < end; m++) {
		uint8_t byte = *q++;
		*w++ = byte;
		if (!(byte & 0x80)) {
			*p = q, *o = w;
			return 0;
		}
	}
	return -1;
}

/* Joins the records of the columns c onto b (growing it once: a record never takes more bytes joined
 * than it took in the columns), counting them in *n. Returns 0 when every column is consumed, or -1
 * when the columns are corrupt at record *n (a column ends early, or has bytes left over) or b cannot
 * grow (b->dropped counts it). The columns' positions and cursors stay in locals (a byte store may
 * alias any field), so a record takes a few instructions. */
static inline int ct_columns_join(struct ct_columns *c, struct ct_rec_buf *b, unsigned long long *n)
{
	size_t need = 0;
	const uint8_t *at[CT_COLUMNS], *end[CT_COLUMNS];
	for (int i = 0; i < CT_COLUMNS; i++)
		need += c->len[i] - c->pos[i];
	*n = 0;
	if (!need) /* every column consumed (or none has memory yet) */
		return 0;
	if (!ct_rec_room(b, need))
		return -1;
	for (int i = 0; i < CT_COLUMNS; i++) { /* a column without memory is an empty one */
		at[i] = c->col[i] ? c->col[i] + c->pos[i] : NULL;
		end[i] = c->col[i] ? c->col[i] + c->len[i] : NULL;
	}
	const uint8_t *t = at[CT_COL_TAG], *tend = end[CT_COL_TAG];
	const uint8_t *id0 = at[CT_COL_ID0], *id1 = at[CT_COL_ID1], *id2 = at[CT_COL_ID2];
	uint8_t *o = b->data + b->len, *const start = o;
	unsigned long long count = 0;
	int rc = -1;
	for (; t < tend; t++, count++) {
		unsigned tag = *t;
		if (ct_tag_is_short(tag)) {
			if (!(tag & 0x60)) { /* RECENT */
				*o++ = (uint8_t)tag;
				continue;
			}
			if ((tag & 0x1f) || id0 == end[CT_COL_ID0] || *id0 > 0x1f)
				goto out;
			unsigned low = *id0++;
			*o++ = (uint8_t)(tag | low);
			if (!(low & 0x10))
				continue;
			if (id1 == end[CT_COL_ID1])
				goto out;
			unsigned first = *id1++;
			*o++ = (uint8_t)first;
			if ((first & 0x80) &&
			    ct_col_copy_varint(&id2, end[CT_COL_ID2], &o, CT_VARINT_MAX - 1) < 0)
				goto out;
			continue;
		}
		int fields = ct_core_fields(tag);
		if (fields) {
			enum ct_column from = ct_col_of_core(tag);
			*o++ = (uint8_t)tag;
			for (int f = 0; f < fields; f++)
				if (ct_col_copy_varint(&at[from], end[from], &o, CT_VARINT_MAX) < 0)
					goto out;
			continue;
		}
		const uint8_t *p = at[CT_COL_FRAMED];
		uint64_t len;
		int k = ct_tag_is_framed(tag) && tag != CT_REC_BATCH
		            ? ct_get_varint(p, end[CT_COL_FRAMED], &len)
		            : -1;
		if (k <= 0 || len > (uint64_t)(end[CT_COL_FRAMED] - p) - (uint64_t)k)
			goto out;
		*o++ = (uint8_t)tag;
		memcpy(o, p, (size_t)k + len);
		o += (size_t)k + len;
		at[CT_COL_FRAMED] = p + k + len;
	}
	rc = 0; /* every tag read: every other column must be consumed too */
out:
	at[CT_COL_TAG] = t, at[CT_COL_ID0] = id0, at[CT_COL_ID1] = id1, at[CT_COL_ID2] = id2;
	for (int i = 0; i < CT_COLUMNS; i++) {
		rc |= at[i] != end[i] ? -1 : 0;
		c->pos[i] = c->col[i] ? (size_t)(at[i] - c->col[i]) : 0;
	}
	b->len += (size_t)(o - start);
	*n = count;
	return rc;
}

#endif /* CTRACK_COLUMNS_H */
