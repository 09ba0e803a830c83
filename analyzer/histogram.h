/* SPDX-License-Identifier: MIT */
/* The allocation size histogram (histogram.c): allocations by size in power-of-two buckets, with
 * their bytes, temporary allocations and the blocks still live at the end, as heaptrack_print -H
 * and memray stats give them. */
#ifndef CTRACK_HISTOGRAM_H
#define CTRACK_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* Bucket 0 holds allocations of 0 bytes, bucket k (1..64) those of 2^(k-1) to 2^k - 1 bytes. */
#define CT_HIST_BUCKETS 65

struct ct_hist_bucket {
	uint64_t lo, hi;      /* the sizes it holds, both included */
	uint64_t allocations; /* calls that allocated a block of such a size */
	uint64_t bytes;       /* their bytes */
	uint64_t temporary;   /* of them, freed by their thread's next event (TEMP) */
	uint64_t live;        /* of them, live at the end (leaked) */
};

struct ct_histogram {
	struct ct_hist_bucket b[CT_HIST_BUCKETS];
	int first, last; /* the buckets with allocations: [first, last], or first > last when none */
};

/* m's allocations by size. */
void ct_histogram_of(const struct ct_model *m, struct ct_histogram *h);
/* The text table: one line per bucket from the first to the last with allocations. */
void ct_histogram_text(FILE *out, const struct ct_histogram *h);
/* A JSON array of the buckets from the first to the last with allocations. */
void ct_histogram_json(FILE *out, const struct ct_histogram *h);

#endif
