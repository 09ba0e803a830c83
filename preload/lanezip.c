/* SPDX-License-Identifier: MIT */
/* A lane's own zstd stream (lanezip.h): the lane splits its epoch's run into columns and compresses
 * them and its marks itself, so that the writer's work per event is the ordering alone. */
#include <errno.h>
#include <string.h>

#include "ctrack/columns.h"
#include "lanezip.h"
#include "writer.h"
#include "zmem.h"

#define Z_FIRST (64u << 10)
/* A column this long gets a zstd block of its own (ZSTD_e_flush), so that its bytes get their own
 * entropy tables, as a BATCH's columns do (output.c); shorter ones share the next column's block,
 * where a block's header and tables would cost more than they save. */
#define FLUSH_MIN 2048
/* A part's bytes past zstd's bound for its input: the header of a new frame, one block header per
 * flush. */
#define PART_SLACK (256 + 3 * (CT_COLUMNS + 2))

static int z_grow(struct ct_rec_buf *b, size_t need)
{
	return ct_rec_grow_arena(b, need, Z_FIRST);
}

int ct_lanezip_open(struct ct_lanezip *z, int window_log)
{
	if (!z->zc && !(z->zc = ZSTD_createCCtx_advanced(ct_zmem())))
		return -ENOMEM;
	ZSTD_CCtx *zc = z->zc;
	ZSTD_CCtx_reset(zc, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(zc, ZSTD_c_windowLog, window_log);
	/* The trace's own stream checks these bytes: a checksum here would be computed twice. */
	ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 0);
	uint8_t none[1];
	ZSTD_outBuffer out = {none, sizeof(none), 0};
	ZSTD_inBuffer in = {NULL, 0, 0};
	if (ZSTD_isError(ZSTD_compressStream2(zc, &out, &in, ZSTD_e_continue)) || out.pos) {
		ct_lanezip_release(z);
		return -ENOMEM;
	}
	z->z.len = z->z.dropped = 0;
	z->z.grow = z_grow;
	z->fresh = 1; /* the first part starts the stream */
	z->dropped = 0;
	return 0;
}

/* Room for columns of n bytes each (their contents need not be kept): 0, or -1. */
static int cols_room(struct ct_lanezip *z, size_t n)
{
	if (n <= z->cols_cap)
		return 0;
	size_t cap = z->cols_cap ? z->cols_cap : Z_FIRST;
	while (cap < n)
		cap *= 2;
	uint8_t *mem = ct_arena_map(CT_COLUMNS * cap);
	if (!mem)
		return -1;
	ct_arena_unmap(z->cols, CT_COLUMNS * z->cols_cap);
	z->cols = mem;
	z->cols_cap = cap;
	return 0;
}

/* Compresses [p, p + n) into z->z, which has room for all of it (PART_SLACK). 0, or -1. */
static int feed(struct ct_lanezip *z, const void *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {p, n, 0};
	for (;;) {
		ZSTD_outBuffer out = {z->z.data + z->z.len, z->z.cap - z->z.len, 0};
		size_t left = ZSTD_compressStream2(z->zc, &out, &in, mode);
		z->z.len += out.pos;
		if (ZSTD_isError(left))
			return -1;
		if (in.pos == in.size && (mode == ZSTD_e_continue || left == 0))
			return 0;
		if (!out.pos && z->z.len == z->z.cap)
			return -1;
	}
}

/* Compresses run's part into z->z: 0, or how many records were lost (all of them when known, else
 * one per event), the stream as it was or, after an error, to restart (ct_lanezip_taken). */
static uint64_t part(struct ct_lanezip *z, const struct ct_run *run)
{
	size_t n = run->out.len;
	uint64_t guess = run->marks.len / 2 + 1;
	struct ct_columns c = {{0}, {0}, {0}, 0};
	if (z->z.len || cols_room(z, n) < 0) /* z->z.len: a part not taken (a lane that missed a stop) */
		return guess;
	for (int i = 0; i < CT_COLUMNS; i++)
		c.col[i] = z->cols + (size_t)i * z->cols_cap;
	if (ct_columns_split(run->out.data, n, &c) < 0)
		return guess;
	uint8_t head[CT_COLUMNS * CT_VARINT_MAX];
	size_t nh = 0, total = run->marks.len;
	for (int i = 0; i < CT_COLUMNS; i++) {
		nh += ct_put_varint(head + nh, c.len[i]);
		total += c.len[i];
	}
	size_t need = ZSTD_compressBound(total + nh) + PART_SLACK;
	if (z->z.cap < need && z->z.grow(&z->z, need) < 0)
		return c.len[CT_COL_TAG];
	int err = feed(z, head, nh, ZSTD_e_continue);
	for (int i = 0; i < CT_COLUMNS && !err; i++)
		if (c.len[i])
			err = feed(z, c.col[i], c.len[i],
			           c.len[i] >= FLUSH_MIN ? ZSTD_e_flush : ZSTD_e_continue);
	if (!err)
		err = feed(z, run->marks.data, run->marks.len, ZSTD_e_flush);
	if (!err)
		return 0;
	ct_lanezip_taken(z, 0); /* not seen in practice: zstd has its workspace and the bound's room */
	return c.len[CT_COL_TAG];
}

void ct_lanezip_put(struct ct_lanezip *z, const struct ct_run *run)
{
	z->dropped += run->out.dropped;
	if (run->out.len || run->marks.len)
		z->dropped += part(z, run);
}

void ct_lanezip_taken(struct ct_lanezip *z, int written)
{
	if (!written && z->zc) { /* the reader never sees what the stream holds: a new frame next */
		ZSTD_CCtx_reset(z->zc, ZSTD_reset_session_only);
		z->fresh = 1;
	} else if (z->z.len) {
		z->fresh = 0;
	}
	z->z.len = 0;
}

size_t ct_lanezip_bytes(const struct ct_lanezip *z)
{
	return (z->zc ? ZSTD_sizeof_CCtx(z->zc) : 0) + z->z.cap + CT_COLUMNS * z->cols_cap;
}

void ct_lanezip_release(struct ct_lanezip *z)
{
	ZSTD_freeCCtx(z->zc);
	ct_arena_unmap(z->z.data, z->z.cap);
	ct_arena_unmap(z->cols, CT_COLUMNS * z->cols_cap);
	*z = (struct ct_lanezip){0};
}
