/* SPDX-License-Identifier: MIT */
/* A lane's own zstd stream: each epoch's run, split into columns, and its marks, compressed on the
 * lane's thread into its part of a ZEPOCH record (ctrack/format.h), so the writer only orders. */
#ifndef CT_PRELOAD_LANEZIP_H
#define CT_PRELOAD_LANEZIP_H

#include <stddef.h>
#include <stdint.h>

#include "epoch.h"

struct ZSTD_CCtx_s;

struct ct_lanezip {
	struct ZSTD_CCtx_s *zc;
	struct ct_rec_buf z; /* the compressed part not merged yet (one at most) */
	uint8_t *cols;       /* the columns' memory: CT_COLUMNS x cols_cap bytes */
	size_t cols_cap;
	int fresh;        /* the part in z starts a new frame: a reader starts a new decoder for it */
	uint64_t dropped; /* records of parts that could not be stored, since the last take */
};

/* Makes z's compressor with a window of 2^window_log bytes, its whole workspace now (a lane
 * compresses without asking for more). 0, or -ENOMEM. */
int ct_lanezip_open(struct ct_lanezip *z, int window_log);
/* Appends run's part to z->z: its records by columns, then its marks, flushed so that a reader
 * decodes all of it from these bytes. Nothing for an empty run. A part that cannot be stored (no
 * memory) is dropped and its records counted in z->dropped; the stream stays whole. */
void ct_lanezip_put(struct ct_lanezip *z, const struct ct_run *run);
/* The part was written (or, lost: the next part starts a new frame). Empties z->z. */
void ct_lanezip_taken(struct ct_lanezip *z, int written);
/* The memory z holds. */
size_t ct_lanezip_bytes(const struct ct_lanezip *z);
void ct_lanezip_release(struct ct_lanezip *z);

#endif
