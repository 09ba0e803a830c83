/* SPDX-License-Identifier: MIT */
/* ZEPOCH parts (zepoch.h): each lane's stream decoded with a zstd decoder of its own, its part split
 * into the run's columns, joined back into records (ctrack/columns.h), and its marks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

#include "ctrack/columns.h"
#include "rec_heap.h"
#include "zepoch.h"

/* A lane's part holds at most an epoch's records (32,768 events): far less than this. A part said
 * to be larger is damage, not a reason to take all the memory there is. */
#define PART_MAX (256 << 20)

/* Where an empty run or empty marks point: never NULL, so that a reader may add their length. */
static const uint8_t none[1];

/* Decompresses zlen bytes at z into l->part (all of what they decode to). 0, or -errno. */
static int inflate_part(struct ct_zlane *l, const uint8_t *z, size_t zlen, int fresh, char *why,
                        size_t whylen)
{
	if (!l->d && !(l->d = ZSTD_createDCtx()))
		return -ENOMEM;
	if (fresh)
		ZSTD_DCtx_reset(l->d, ZSTD_reset_session_only);
	l->part.len = 0;
	l->part.grow = ct_rec_grow_heap;
	ZSTD_inBuffer in = {z, zlen, 0};
	for (;;) {
		if (!ct_rec_room(&l->part, l->part.cap - l->part.len > 4096 ? 1 : 1u << 16))
			return -ENOMEM;
		ZSTD_outBuffer out = {l->part.data + l->part.len, l->part.cap - l->part.len, 0};
		size_t rc = ZSTD_decompressStream(l->d, &out, &in);
		l->part.len += out.pos;
		if (ZSTD_isError(rc)) {
			snprintf(why, whylen, "%s", ZSTD_getErrorName(rc));
			ZSTD_DCtx_reset(l->d, ZSTD_reset_session_only);
			return -EINVAL;
		}
		if (in.pos == in.size && out.pos < out.size) /* all of it: zstd had room to spare */
			return 0;
		if (l->part.len > PART_MAX) {
			snprintf(why, whylen, "its part decompresses to more than %d MiB", PART_MAX >> 20);
			return -EINVAL;
		}
	}
}

/* Splits l->part into the run's columns (a BATCH payload) and the marks, and joins the run. */
static int split_part(struct ct_zlane *l, struct ct_zpart *out, char *why, size_t whylen)
{
	const uint8_t *p = l->part.data, *end = p + l->part.len, *q = p;
	uint64_t cols = 0;
	for (int i = 0; i < CT_COLUMNS; i++) {
		uint64_t len;
		int k = ct_get_varint(q, end, &len);
		if (k <= 0 || len > (uint64_t)(end - q) - (uint64_t)k) {
			snprintf(why, whylen, "its column lengths are cut short or too long");
			return -EINVAL;
		}
		q += k;
		cols += len;
	}
	if (cols > (uint64_t)(end - q)) {
		snprintf(why, whylen, "its columns are longer than its part");
		return -EINVAL;
	}
	struct ct_columns c;
	if (ct_columns_open(p, q + cols, &c) < 0) {
		snprintf(why, whylen, "its column lengths do not add up");
		return -EINVAL;
	}
	l->rows.len = 0;
	l->rows.grow = ct_rec_grow_heap;
	l->rows.dropped = 0;
	unsigned long long n;
	int k = ct_columns_join(&c, &l->rows, &n);
	if (k < 0 && l->rows.dropped)
		return -ENOMEM;
	if (k < 0) {
		snprintf(why, whylen, "its columns are corrupt at its record %llu", n);
		return -EINVAL;
	}
	*out = (struct ct_zpart){l->rows.data, q + cols, l->rows.len, (size_t)(end - q - cols)};
	return 0;
}

int ct_zlanes_part(struct ct_zlanes *zl, unsigned lane, const uint8_t *z, size_t zlen, int fresh,
                   struct ct_zpart *out, char *why, size_t whylen)
{
	struct ct_zlane *l = &zl->lane[lane];
	/* A run, even an empty one, points into its lane's rows, so that a message about a record at its
	 * end says whose it is (ct_zlanes_holding). */
	l->rows.len = 0;
	l->rows.grow = ct_rec_grow_heap;
	if (!ct_rec_room(&l->rows, 1))
		return -ENOMEM;
	*out = (struct ct_zpart){l->rows.data, none, 0, 0};
	if (!zlen)
		return 0;
	int rc = inflate_part(l, z, zlen, fresh, why, whylen);
	return rc < 0 ? rc : split_part(l, out, why, whylen);
}

int ct_zlanes_holding(const struct ct_zlanes *zl, const uint8_t *p)
{
	for (int i = 0; i < CT_EPOCH_LANES_MAX; i++) {
		const struct ct_rec_buf *b = &zl->lane[i].rows;
		if (b->data && p >= b->data && p <= b->data + b->len) /* its end too: a run that ran out */
			return i;
	}
	return -1;
}

void ct_zlanes_free(struct ct_zlanes *zl)
{
	for (int i = 0; i < CT_EPOCH_LANES_MAX; i++) {
		ZSTD_freeDCtx(zl->lane[i].d);
		free(zl->lane[i].part.data);
		free(zl->lane[i].rows.data);
	}
	*zl = (struct ct_zlanes){0};
}
