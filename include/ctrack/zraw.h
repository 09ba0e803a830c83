/* SPDX-License-Identifier: MIT */
/* zstd frames written by hand, of raw (stored) blocks: what a trace is made of when no compressor
 * can be had (no memory for zstd's context, or no zstd at all), and how a NOTE is put at the end of a
 * file the compressor can no longer write. Any zstd decoder reads them (RFC 8878, section 3.1.1):
 *   frame:  | magic 28 b5 2f fd | descriptor 00 | window 38 | blocks... |
 *           descriptor 00: no single segment, no checksum, no dictionary, no content size;
 *           window 38: exponent 7, mantissa 0, a 128 KiB window (a raw block is at most that long)
 *   block:  | 3 bytes little-endian: last (bit 0), type 0 = raw (bits 1-2), size (bits 3-23) | bytes |
 * The last block has bit 0 set (an empty last block ends a frame whose data are all written).
 * Header-only; nothing here allocates or does I/O. */
#ifndef CTRACK_ZRAW_H
#define CTRACK_ZRAW_H

#include <stddef.h>
#include <stdint.h>

#define CT_ZRAW_FRAME_HEADER 6         /* bytes of a frame header */
#define CT_ZRAW_BLOCK_HEADER 3         /* bytes of a block header */
#define CT_ZRAW_BLOCK_MAX (128u << 10) /* largest raw block: the window the frame header declares */

/* Writes a frame header at p; returns CT_ZRAW_FRAME_HEADER. */
static inline size_t ct_zraw_frame(uint8_t *p)
{
	p[0] = 0x28; /* ZSTD_MAGICNUMBER 0xFD2FB528, little-endian */
	p[1] = 0xb5;
	p[2] = 0x2f;
	p[3] = 0xfd;
	p[4] = 0x00;
	p[5] = 0x38;
	return CT_ZRAW_FRAME_HEADER;
}

/* Writes the header of a raw block of n bytes (n <= CT_ZRAW_BLOCK_MAX) at p, the frame's last block
 * when last is set; returns CT_ZRAW_BLOCK_HEADER. */
static inline size_t ct_zraw_block(uint8_t *p, size_t n, int last)
{
	uint32_t v = (uint32_t)n << 3 | (last ? 1u : 0u);
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	return CT_ZRAW_BLOCK_HEADER;
}

#endif
