/* SPDX-License-Identifier: MIT */
/* The allocation size histogram (histogram.h), from the model's alloc infos: each info is one size
 * and one stack, with its allocation, temporary and live counts, so the histogram costs one pass
 * over the infos, never over events. */
#include <inttypes.h>

#include "histogram.h"

static int bucket_of(uint64_t size)
{
	return size ? 64 - __builtin_clzll(size) : 0;
}

void ct_histogram_of(const struct ct_model *m, struct ct_histogram *h)
{
	*h = (struct ct_histogram){.first = CT_HIST_BUCKETS, .last = -1};
	for (int k = 0; k < CT_HIST_BUCKETS; k++) {
		h->b[k].lo = k ? UINT64_C(1) << (k - 1) : 0;
		h->b[k].hi = k == 64 ? UINT64_MAX : k ? (UINT64_C(1) << k) - 1 : 0;
	}
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		if (!info->allocations)
			continue;
		int k = bucket_of(info->size);
		struct ct_hist_bucket *b = &h->b[k];
		b->allocations += info->allocations;
		b->bytes += info->allocations * info->size;
		b->temporary += info->temporary;
		b->live += info->live;
		h->first = k < h->first ? k : h->first;
		h->last = k > h->last ? k : h->last;
	}
}

void ct_histogram_text(FILE *out, const struct ct_histogram *h)
{
	uint64_t total = 0;
	char lo[32], hi[32], bytes[32];
	for (int k = h->first; k <= h->last; k++)
		total += h->b[k].allocations;
	fputs("ALLOCATION SIZES:\n\n", out);
	if (!total) {
		fputs("no allocations\n", out);
		return;
	}
	fprintf(out, "%-21s %12s %7s %16s %12s %12s\n", "size", "allocations", "share", "bytes", "temporary",
	        "leaked");
	for (int k = h->first; k <= h->last; k++) {
		const struct ct_hist_bucket *b = &h->b[k];
		char range[48];
		snprintf(lo, sizeof(lo), "%" PRIu64, b->lo);
		snprintf(hi, sizeof(hi), "%" PRIu64, b->hi);
		snprintf(range, sizeof(range), k ? "%s..%s" : "%s", lo, hi);
		snprintf(bytes, sizeof(bytes), "%" PRIu64, b->bytes);
		fprintf(out, "%-21s %12" PRIu64 " %6.1f%% %16s %12" PRIu64 " %12" PRIu64 "\n", range,
		        b->allocations, 100.0 * (double)b->allocations / (double)total, bytes, b->temporary,
		        b->live);
	}
}

void ct_histogram_json(FILE *out, const struct ct_histogram *h)
{
	fputc('[', out);
	for (int k = h->first; k <= h->last; k++) {
		const struct ct_hist_bucket *b = &h->b[k];
		fprintf(
		    out,
		    "%s\n  {\"min_size\": %" PRIu64 ", \"max_size\": %" PRIu64 ", \"allocations\": %" PRIu64
		    ", \"bytes\": %" PRIu64 ", \"temporary\": %" PRIu64 ", \"leaked\": %" PRIu64 "}",
		    k > h->first ? "," : "", b->lo, b->hi, b->allocations, b->bytes, b->temporary, b->live);
	}
	fputs(h->first <= h->last ? "\n]" : "]", out);
}
