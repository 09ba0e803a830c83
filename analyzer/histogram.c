/* SPDX-License-Identifier: MIT */
/* The allocation size histogram (histogram.h), from the model's alloc infos: each info is one size
 * and one stack, with its allocation, temporary and live counts, so the histogram costs one pass
 * over the infos, never over events. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "markup.h"
#include "report.h"

int ct_hist_bucket_of(uint64_t size)
{
	return size ? 64 - __builtin_clzll(size) : 0;
}

void ct_histogram_of(const struct ct_model *m, struct ct_histogram *h)
{
	*h = (struct ct_histogram){.first = CT_HIST_BUCKETS, .last = -1};
	for (int k = 0; k < CT_HIST_BUCKETS; k++) {
		for (int t = 0; t < CT_HIST_TOP; t++)
			h->b[k].top[t].stack = CT_HIST_NONE;
		h->b[k].lo = k ? UINT64_C(1) << (k - 1) : 0;
		h->b[k].hi = k == 64 ? UINT64_MAX : k ? (UINT64_C(1) << k) - 1 : 0;
	}
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		if (!info->allocations)
			continue;
		int k = ct_hist_bucket_of(info->size);
		struct ct_hist_bucket *b = &h->b[k];
		b->allocations += info->allocations;
		b->bytes += info->allocations * info->size;
		b->temporary += info->temporary;
		b->live += info->live;
		h->first = k < h->first ? k : h->first;
		h->last = k > h->last ? k : h->last;
	}
}

/* ---- top sites ----
 * A bucket's sites are its allocations' first shown frames (the report's --group site key:
 * function, file and line), so the stacks that reach one place from different callers are one
 * entry, as the text report ranks them. */

/* The first frame a report shows of a stack. */
struct first {
	struct ct_frame f;
	int found;
};

static int take_first(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	struct first *x = ctx;
	x->f = *f;
	x->found = 1;
	return 1; /* stop: one frame is enough */
}

static const struct ct_frame *first_frame(const struct ct_report *r, uint32_t stack, struct first *x)
{
	int truncated = 0;
	x->found = 0;
	ct_report_frames(r, stack, take_first, x, &truncated);
	return x->found ? &x->f : NULL;
}

struct entry {
	uint32_t bucket, stack; /* a stack of the site (the first one met) */
	uint64_t allocations, bytes;
	const char *function, *file; /* the site: the stack's first shown frame (NULL: none) */
	unsigned line;
};

static int by_bucket_stack(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_str(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int by_bucket_site(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	if ((c = cmp_str(x->function, y->function)) || (c = cmp_str(x->file, y->file)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int same_stack(const struct entry *x, const struct entry *y)
{
	return x->bucket == y->bucket && x->stack == y->stack;
}

static int same_site(const struct entry *x, const struct entry *y)
{
	return x->bucket == y->bucket && !cmp_str(x->function, y->function) && !cmp_str(x->file, y->file) &&
	       x->line == y->line;
}

/* Merges the runs of v[0..n) that `same` calls equal into their first entries; returns how many are
 * left. */
static size_t merge(struct entry *v, size_t n, int (*same)(const struct entry *, const struct entry *))
{
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		struct entry sum = v[i];
		for (i++; i < n && same(&v[i], &sum); i++)
			sum.allocations += v[i].allocations, sum.bytes += v[i].bytes;
		v[out++] = sum;
	}
	return out;
}

/* Puts one site's sums into its bucket's top list, if they are among the largest. */
static void rank(struct ct_hist_bucket *b, const struct entry *e)
{
	int t = CT_HIST_TOP;
	while (t > 0 && (b->top[t - 1].stack == CT_HIST_NONE || b->top[t - 1].allocations < e->allocations))
		t--;
	if (t == CT_HIST_TOP)
		return;
	for (int u = CT_HIST_TOP - 1; u > t; u--)
		b->top[u] = b->top[u - 1];
	b->top[t] = (struct ct_hist_site){e->stack, e->allocations, e->bytes};
}

int ct_histogram_sites(const struct ct_report *r, struct ct_histogram *h)
{
	const struct ct_model *m = r->m;
	ct_histogram_of(m, h);
	struct entry *v = malloc((m->ninfos ? m->ninfos : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		if (info->allocations)
			v[n++] = (struct entry){.bucket = (uint32_t)ct_hist_bucket_of(info->size),
			                        .stack = info->stack,
			                        .allocations = info->allocations,
			                        .bytes = info->allocations * info->size};
	}
	qsort(v, n, sizeof(*v), by_bucket_stack); /* a stack's infos of one bucket side by side */
	n = merge(v, n, same_stack);
	for (size_t i = 0; i < n; i++) {
		struct first x;
		const struct ct_frame *f = first_frame(r, v[i].stack, &x);
		v[i].function =
		    f ? f->function : NULL; /* the symbolizer's strings: they outlive the report */
		v[i].file = f ? f->file : NULL;
		v[i].line = f ? f->line : 0;
	}
	qsort(v, n, sizeof(*v), by_bucket_site);
	n = merge(v, n, same_site);
	for (size_t i = 0; i < n; i++)
		rank(&h->b[v[i].bucket], &v[i]);
	free(v);
	return 0;
}

static void text_sites(FILE *out, const struct ct_hist_bucket *b, const struct ct_report *r)
{
	for (int t = 0; t < CT_HIST_TOP && b->top[t].stack != CT_HIST_NONE; t++) {
		struct first x;
		const struct ct_frame *f = first_frame(r, b->top[t].stack, &x);
		char name[512], bytes[64];
		fprintf(out, "    %12" PRIu64 " from %s", b->top[t].allocations,
		        f ? ct_frame_display_name(r, f, name, sizeof(name)) : "??");
		if (f && f->file)
			fprintf(out, " at %s:%u", f->file, f->line);
		fprintf(out, " (%s)\n", ct_fmt_bytes(bytes, sizeof(bytes), b->top[t].bytes));
	}
}

void ct_histogram_text(FILE *out, const struct ct_histogram *h, const struct ct_report *r)
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
		if (r)
			text_sites(out, b, r);
	}
}

static void json_sites(FILE *out, const struct ct_hist_bucket *b, const struct ct_report *r)
{
	fputs(", \"top\": [", out);
	for (int t = 0; t < CT_HIST_TOP && b->top[t].stack != CT_HIST_NONE; t++) {
		struct first x;
		const struct ct_frame *f = first_frame(r, b->top[t].stack, &x);
		fprintf(out,
		        "%s{\"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"frame\": ", t ? ", " : "",
		        b->top[t].allocations, b->top[t].bytes);
		if (f)
			ct_json_frame(out, f, 1);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fputc(']', out);
}

void ct_histogram_json(FILE *out, const struct ct_histogram *h, const struct ct_report *r)
{
	fputc('[', out);
	for (int k = h->first; k <= h->last; k++) {
		const struct ct_hist_bucket *b = &h->b[k];
		fprintf(
		    out,
		    "%s\n  {\"min_size\": %" PRIu64 ", \"max_size\": %" PRIu64 ", \"allocations\": %" PRIu64
		    ", \"bytes\": %" PRIu64 ", \"temporary\": %" PRIu64 ", \"leaked\": %" PRIu64,
		    k > h->first ? "," : "", b->lo, b->hi, b->allocations, b->bytes, b->temporary, b->live);
		if (r)
			json_sites(out, b, r);
		fputc('}', out);
	}
	fputs(h->first <= h->last ? "\n]" : "]", out);
}
