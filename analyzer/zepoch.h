/* SPDX-License-Identifier: MIT */
/* The reader's decoders of the lanes' own streams in ZEPOCH records (ctrack/format.h): a lane's
 * compressed part back to its run of records and its marks. */
#ifndef CT_ANALYZER_ZEPOCH_H
#define CT_ANALYZER_ZEPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "ctrack/record.h"

struct ZSTD_DCtx_s;

/* One decoder per lane, kept from one ZEPOCH record to the next; zero-initialized before the first. */
struct ct_zlanes {
	struct ct_zlane {
		struct ZSTD_DCtx_s *d;
		struct ct_rec_buf part; /* the decompressed part */
		struct ct_rec_buf rows; /* its run, joined back from the columns */
	} lane[CT_EPOCH_LANES_MAX];
};

/* A lane's part of a ZEPOCH record as decoded: its records and its marks (in zl's buffers, until
 * the lane's next part; never NULL, even when empty). */
struct ct_zpart {
	const uint8_t *run, *marks;
	size_t run_len, marks_len;
};

/* Decodes lane's zlen bytes at z, which start a new frame of its stream when fresh, into *out.
 * 0; -ENOMEM; or -EINVAL with what is wrong in why. */
int ct_zlanes_part(struct ct_zlanes *zl, unsigned lane, const uint8_t *z, size_t zlen, int fresh,
                   struct ct_zpart *out, char *why, size_t whylen);
/* The lane whose records [p, ...) lie in, or end at p (a run that ran out), or -1. */
int ct_zlanes_holding(const struct ct_zlanes *zl, const uint8_t *p);
void ct_zlanes_free(struct ct_zlanes *zl);

#endif
