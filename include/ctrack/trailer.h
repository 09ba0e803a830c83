/* SPDX-License-Identifier: MIT */
/* The summary trailer (format.h, "The summary trailer"): a whole trace's figures in a zstd skippable
 * frame at the end of the file, the one encoder (the shim's writer) and the one decoder (the launcher's
 * closing line). Header-only and static inline, like record.h; nothing here allocates or does I/O. */
#ifndef CTRACK_TRAILER_H
#define CTRACK_TRAILER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctrack/format.h"

#define CT_TRAILER_MAGIC 0x184D2A5Cu /* a zstd skippable frame's magic (0x184D2A50..5F): decoders skip it */
#define CT_TRAILER_TAIL 0x314D5343u  /* "CSM1", the file's last four bytes */
#define CT_TRAILER_VERSION 1
#define CT_TRAILER_HEAD 8  /* | magic u32 | frame size u32 | */
#define CT_TRAILER_FOOT 24 /* | file hash u64 | check u64 | length u32 | tail u32 | */
#define CT_TRAILER_MAX 512 /* bytes of a whole trailer, at most */
/* The varints before the classes: version, at, the 8 figures of struct ct_trailer, classified. */
#define CT_TRAILER_FIELDS 11

/* The figures, as a reader's model counts them from the records before the trailer. */
struct ct_trailer {
	uint64_t file_hash; /* ct_file_hash of the file's bytes before the trailer */
	uint64_t allocations, frees, bytes_allocated, temporary, peak;
	uint64_t live_bytes, live_blocks; /* at the end of the trace */
	uint64_t runtime_us;
	int classified; /* the last CLASSES record's totals follow; no event record comes after it */
	uint64_t class_blocks[CT_CLASSES], class_bytes[CT_CLASSES];
};

/* FNV-1a, 64 bits: h moved on over [p, p + n). */
static inline uint64_t ct_trailer_fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- the file hash: what the bytes before the trailer were when the writer wrote them ----
 * 32 bytes at a time in four lanes (xxHash64's round: its primes and rotation), the last few byte by
 * byte: a trace of a gigabyte hashes in a fraction of a second, a reader trusts the trailer only
 * when the file is as written (a program that scribbled on its own trace, a damaged disk). It tells
 * damage, not forgery. */
#define CT_FILE_HASH_P1 0x9E3779B185EBCA87ull
#define CT_FILE_HASH_P2 0xC2B2AE3D27D4EB4Full

struct ct_file_hash {
	uint64_t acc[4], len;
	uint8_t buf[32];
	size_t nbuf;
};

static inline void ct_file_hash_init(struct ct_file_hash *h)
{
	*h = (struct ct_file_hash){
	    {CT_FILE_HASH_P1 + CT_FILE_HASH_P2, CT_FILE_HASH_P2, 0, 0 - CT_FILE_HASH_P1}, 0, {0}, 0};
}

static inline uint64_t ct_file_hash_rotl(uint64_t v, int r)
{
	return v << r | v >> (64 - r);
}

static inline void ct_file_hash_stripe(uint64_t acc[4], const uint8_t *p)
{
	for (int i = 0; i < 4; i++) {
		uint64_t w;
		memcpy(&w, p + 8 * i, 8); /* little-endian, as everything in a trace */
		acc[i] = ct_file_hash_rotl(acc[i] + w * CT_FILE_HASH_P2, 31) * CT_FILE_HASH_P1;
	}
}

static inline void ct_file_hash_add(struct ct_file_hash *h, const uint8_t *p, size_t n)
{
	h->len += n;
	if (h->nbuf) {
		size_t take = n < 32 - h->nbuf ? n : 32 - h->nbuf;
		memcpy(h->buf + h->nbuf, p, take);
		h->nbuf += take, p += take, n -= take;
		if (h->nbuf < 32)
			return;
		ct_file_hash_stripe(h->acc, h->buf);
		h->nbuf = 0;
	}
	uint64_t acc[4] = {h->acc[0], h->acc[1], h->acc[2], h->acc[3]}; /* in registers */
	for (; n >= 32; p += 32, n -= 32)
		ct_file_hash_stripe(acc, p);
	memcpy(h->acc, acc, sizeof(acc));
	memcpy(h->buf, p, n);
	h->nbuf = n;
}

static inline uint64_t ct_file_hash_end(const struct ct_file_hash *h)
{
	uint64_t v = ct_file_hash_rotl(h->acc[0], 1) + ct_file_hash_rotl(h->acc[1], 7) +
	             ct_file_hash_rotl(h->acc[2], 12) + ct_file_hash_rotl(h->acc[3], 18);
	v = ct_trailer_fnv(v ^ h->len * CT_FILE_HASH_P1, h->buf, h->nbuf);
	v ^= v >> 33;
	v *= CT_FILE_HASH_P2;
	return v ^ v >> 29;
}

/* ---- the trailer ---- */

/* FNV-1a, 64 bits, over [p, p + n): what the check field holds of the bytes before it. */
static inline uint64_t ct_trailer_check(const uint8_t *p, size_t n)
{
	return ct_trailer_fnv(0xcbf29ce484222325ull, p, n);
}

/* Encodes t as the trailer whose first byte will be at file offset `at`, into p (CT_TRAILER_MAX
 * bytes); returns its length. */
static inline size_t ct_trailer_encode(uint8_t *p, const struct ct_trailer *t, uint64_t at)
{
	const uint64_t fields[] = {CT_TRAILER_VERSION,
	                           at,
	                           t->allocations,
	                           t->frees,
	                           t->bytes_allocated,
	                           t->temporary,
	                           t->peak,
	                           t->live_bytes,
	                           t->live_blocks,
	                           t->runtime_us,
	                           (uint64_t) !!t->classified};
	_Static_assert(sizeof(fields) / sizeof(fields[0]) == CT_TRAILER_FIELDS, "the decoder's count");
	size_t n = CT_TRAILER_HEAD;
	ct_put_u32(p, CT_TRAILER_MAGIC);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		n += ct_put_varint(p + n, fields[i]);
	for (int k = 0; t->classified && k < CT_CLASSES; k++) {
		n += ct_put_varint(p + n, t->class_blocks[k]);
		n += ct_put_varint(p + n, t->class_bytes[k]);
	}
	ct_put_u32(p + 4, (uint32_t)(n + CT_TRAILER_FOOT - CT_TRAILER_HEAD));
	ct_put_u64(p + n, t->file_hash);
	ct_put_u64(p + n + 8, ct_trailer_check(p, n + 8));
	ct_put_u32(p + n + 16, (uint32_t)(n + CT_TRAILER_FOOT));
	ct_put_u32(p + n + 20, CT_TRAILER_TAIL);
	return n + CT_TRAILER_FOOT;
}

/* The length of the trailer that the file's last CT_TRAILER_FOOT bytes `foot` close, or 0 when they
 * close none. */
static inline size_t ct_trailer_length(const uint8_t foot[CT_TRAILER_FOOT])
{
	uint32_t len = ct_get_u32(foot + 16);
	if (ct_get_u32(foot + 20) != CT_TRAILER_TAIL || len < CT_TRAILER_HEAD + CT_TRAILER_FOOT ||
	    len > CT_TRAILER_MAX)
		return 0;
	return len;
}

/* Decodes the trailer [p, p + n) found at file offset `at` (n from ct_trailer_length) into *t.
 * Returns 0, or -1 when it is none: a wrong magic, size, check or offset (a trailer copied from
 * another file, a file cut and appended to), or a version this reader does not know. Fields after
 * the ones it knows are ignored: a later writer only appends. */
static inline int ct_trailer_decode(const uint8_t *p, size_t n, uint64_t at, struct ct_trailer *t)
{
	if (n < CT_TRAILER_HEAD + CT_TRAILER_FOOT || ct_get_u32(p) != CT_TRAILER_MAGIC ||
	    ct_get_u32(p + 4) != n - CT_TRAILER_HEAD || ct_get_u32(p + n - 8) != n ||
	    ct_get_u32(p + n - 4) != CT_TRAILER_TAIL || ct_get_u64(p + n - 16) != ct_trailer_check(p, n - 16))
		return -1;
	const uint8_t *q = p + CT_TRAILER_HEAD, *end = p + n - CT_TRAILER_FOOT;
	enum { CLASSIFIED = CT_TRAILER_FIELDS - 1 };
	uint64_t v[CT_TRAILER_FIELDS + 2 * CT_CLASSES] = {0};
	size_t want = CT_TRAILER_FIELDS;
	for (size_t i = 0; i < want; i++) {
		int k = ct_get_varint(q, end, &v[i]);
		if (k <= 0)
			return -1;
		q += k;
		if (i == CLASSIFIED && v[CLASSIFIED])
			want += 2 * CT_CLASSES;
	}
	if (v[0] != CT_TRAILER_VERSION || v[1] != at || v[CLASSIFIED] > 1)
		return -1;
	*t = (struct ct_trailer){ct_get_u64(end), v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
	                         (int)v[10],      {0},  {0}};
	for (int k = 0; t->classified && k < CT_CLASSES; k++) {
		t->class_blocks[k] = v[CT_TRAILER_FIELDS + 2 * k];
		t->class_bytes[k] = v[CT_TRAILER_FIELDS + 2 * k + 1];
	}
	return 0;
}

#endif
