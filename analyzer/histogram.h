/* SPDX-License-Identifier: MIT */
/* The allocation size histogram (histogram.c): allocations by size in power-of-two buckets, with
 * their bytes, temporary allocations, the blocks still live at the end and the stacks that made most
 * of them, as heaptrack_print -H and memray stats give them. */
#ifndef CTRACK_HISTOGRAM_H
#define CTRACK_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

struct ct_report;

/* Bucket 0 holds allocations of 0 bytes, bucket k (1..64) those of 2^(k-1) to 2^k - 1 bytes. */
#define CT_HIST_BUCKETS 65
#define CT_HIST_TOP 3 /* sites listed per bucket */
#define CT_HIST_NONE UINT32_MAX

/* One site's allocations in a bucket. */
struct ct_hist_site {
	uint32_t stack; /* a stack node of the site, or CT_HIST_NONE (an unused slot) */
	uint64_t allocations, bytes;
};

struct ct_hist_bucket {
	uint64_t lo, hi;                      /* the sizes it holds, both included */
	uint64_t allocations;                 /* calls that allocated a block of such a size */
	uint64_t bytes;                       /* their bytes */
	uint64_t temporary;                   /* of them, freed by their thread's next event (TEMP) */
	uint64_t live;                        /* of them, live at the end (leaked) */
	struct ct_hist_site top[CT_HIST_TOP]; /* most allocations first (ct_histogram_sites) */
};

struct ct_histogram {
	struct ct_hist_bucket b[CT_HIST_BUCKETS];
	int first, last; /* the buckets with allocations: [first, last], or first > last when none */
};

/* The bucket of an allocation of size bytes. */
int ct_hist_bucket_of(uint64_t size);
/* m's allocations by size (no top stacks). */
void ct_histogram_of(const struct ct_model *m, struct ct_histogram *h);
/* r's model's allocations by size, with each bucket's top sites (by first shown frame, as the text
 * report groups them; a stack of each kept for its frames): two sorts of the infos. 0 or -ENOMEM. */
int ct_histogram_sites(const struct ct_report *r, struct ct_histogram *h);
/* The text table: one line per bucket from the first to the last with allocations, each followed by
 * its top stacks named by their first shown frame (r's names) when r is not NULL. */
void ct_histogram_text(FILE *out, const struct ct_histogram *h, const struct ct_report *r);
/* A JSON array of the buckets from the first to the last with allocations; with r, each with "top":
 * its top stacks, their allocations, bytes and first shown frame. */
void ct_histogram_json(FILE *out, const struct ct_histogram *h, const struct ct_report *r);

#endif
