/* SPDX-License-Identifier: MIT */
/* The timeline (timeline.c): each allocation site's activity per time slice, and the whole heap's,
 * kept by the model while it reads (hooks in model.c), so that reports can chart a run and narrow
 * any figure to a stretch of it without going back to the events.
 *
 * Times are in microseconds since the process started (the trace's clock: the last TIME record; an
 * event is at the clock's time). Two resolutions, so that a run with many busy stacks still gets a
 * full chart:
 * - The whole heap's slices are [slice * width_us, (slice + 1) * width_us), a dense array of
 *   CT_TIMELINE_SLICES (struct ct_slice_total, 40 bytes: 40 KiB). The width starts at 1 us and
 *   doubles, neighbouring slices merged (as the model's series halves), only so that the run never
 *   spans more than CT_TIMELINE_SLICES slices. Their counts are added per event (the heap's slice
 *   is in cache: the series' point beside it is updated too).
 * - Each site's slices are site slices: site_width_us = width_us << coarse. coarse starts at 0 and
 *   grows (the site slices merge, the whole heap's stay) when the entries kept over all stacks exceed
 *   the budget ct_timeline_budget(): max(CT_TIMELINE_BUDGET, CT_TIMELINE_PER_STACK * stacks); when
 *   the run outgrows the heap's slices and coarse > 0, coarse shrinks instead of the site slices
 *   merging (their width stays). Each stack keeps only the slices where something happened (sparse,
 *   in time order). An entry is sizeof(struct ct_slice) = 48 bytes, and a stack's array holds at
 *   most twice its entries after a merge: the memory is at most ~4 * 48 bytes * the budget (48 MB
 *   for the default budget of 2^20 entries; 8 per stack beyond 131,072 stacks: ~1.5 KiB per stack;
 *   typical runs far less), plus 64 bytes per stack (its array and its current entry) and 4 per
 *   stack node, whatever the number of events.
 * An event adds to its stack's entry of the current site slice, in a dense array by site (48 bytes
 * each; its alloc info, already in cache, holds the site index): a comparison and two additions;
 * the entry goes to the stack's slices when the stack has an event in a later one. */
#ifndef CTRACK_TIMELINE_H
#define CTRACK_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct ct_model;

#define CT_TIMELINE_SLICES 1024       /* the run spans at most this many slices */
#define CT_TIMELINE_BUDGET (1u << 20) /* entries over all stacks ... */
#define CT_TIMELINE_PER_STACK 8       /* ... or this many per stack, the larger */
#define CT_TIMELINE_NONE UINT32_MAX   /* an entry of no slice */

struct ct_slice {                               /* one stack's activity in one site slice */
	uint32_t slice;                         /* [slice * site_width_us, (slice + 1) * site_width_us) */
	uint64_t allocations, frees, temporary; /* temporary: counted in the slice of its free */
	uint64_t alloc_bytes, free_bytes;
};

struct ct_slice_total {                  /* the whole heap in one time slice */
	uint64_t heap;                   /* the highest heap in use (bytes) during the slice */
	uint64_t rss;                    /* the highest RSS sample in the slice; 0: no sample */
	uint64_t allocations, temporary; /* temporary: counted in the slice of its free */
	uint64_t alloc_bytes;
};

/* One stack's slices: v[0..n), cap allocated. */
struct ct_tl_stack {
	struct ct_slice *v;
	uint32_t n, cap;
};

struct ct_timeline {
	unsigned shift;             /* the whole heap's width_us = 1 << shift */
	unsigned coarse;            /* the sites' width_us = 1 << (shift + coarse) */
	uint32_t cur;               /* the clock's slice: now_us >> shift, < CT_TIMELINE_SLICES */
	uint32_t site_cur;          /* the clock's site slice: cur >> coarse */
	struct ct_tl_stack *stacks; /* by site index (struct ct_info's site), nstacks of them */
	uint32_t nstacks, cap_stacks;
	uint32_t *site_of_node; /* stack node id -> site index + 1 (0: none yet) */
	size_t cap_nodes;
	uint64_t entries;              /* sum of the stacks' n */
	struct ct_slice_total *totals; /* CT_TIMELINE_SLICES, [0, cur] in use, kept while reading */
	struct ct_slice *acc; /* by site: its entry for the latest site slice it had events in, not yet among
	                       * its stack's (slice CT_TIMELINE_NONE: none) */
	uint32_t pending;     /* sites whose acc holds an entry */
	int failed;           /* out of memory once: the slices are incomplete */
	int no_sites;         /* set before reading when no output reads the stacks' slices (only the HTML
	                       * page and massif do): they are not kept, ct_timeline_slices finds none */
};

/* The site slices of stack node `stack` in time order, or NULL with *n = 0 when none. Valid until
 * the model reads another record. */
const struct ct_slice *ct_timeline_slices(const struct ct_model *m, uint32_t stack, size_t *n);
/* The whole heap's slice width in microseconds (a power of two). */
uint64_t ct_timeline_width_us(const struct ct_model *m);
/* The number of whole-heap slices spanning the run: [0, ct_model_runtime_us()] at their width. */
uint32_t ct_timeline_nslices(const struct ct_model *m);
/* The sites' slice width: ct_timeline_width_us() times a power of two (1 unless the budget asked). */
uint64_t ct_timeline_site_width_us(const struct ct_model *m);
/* The number of site slices spanning the run; site slice s covers the heap's slices
 * [s * ratio, (s + 1) * ratio), ratio = site width / width. */
uint32_t ct_timeline_site_nslices(const struct ct_model *m);
/* The whole heap's slices, ct_timeline_nslices() of them. heap carries over slices where nothing
 * happened (the heap in use then). Valid until the model reads another record. */
const struct ct_slice_total *ct_timeline_totals(const struct ct_model *m);
/* The whole heap's slice holding time t (us), clamped to the last one. */
uint32_t ct_timeline_slice_of(const struct ct_model *m, uint64_t t_us);
/* The entry budget now (see above). */
uint64_t ct_timeline_budget(const struct ct_timeline *tl);

/* ---- for model.c ---- */
/* 0 or -ENOMEM. */
int ct_timeline_init(struct ct_timeline *tl);
void ct_timeline_release(struct ct_timeline *tl);
/* The site index of stack node `stack` (made when new): 0 or -ENOMEM, *site set. */
int ct_timeline_site(struct ct_timeline *tl, uint32_t stack, uint32_t *site);
/* The clock moved to m->t.now_us (or to end_us, the END record's, when later): slices in between
 * start at the heap in use; the heap's width doubles when the run outgrows CT_TIMELINE_SLICES (the
 * sites' doubles with it only when it was the same). */
void ct_timeline_time(struct ct_model *m, uint64_t now_us);
/* Site's entry for the current site slice when its current entry is of an earlier one (that one goes
 * to its stack's slices; the sites' width may double to stay within the budget), or NULL when out of memory
 * (then, and after any failure, the timeline is incomplete: the reader stops). */
struct ct_slice *ct_timeline_start(struct ct_model *m, uint32_t site);
/* The current entries go to their stacks' slices (at a widening, and at a query). 0 or -ENOMEM. */
int ct_timeline_flush(struct ct_model *m);

static inline struct ct_slice_total *ct_timeline_total(struct ct_timeline *tl)
{
	return &tl->totals[tl->cur];
}

#endif
