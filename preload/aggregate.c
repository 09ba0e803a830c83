/* SPDX-License-Identifier: MIT */
/* Aggregated tracing (see aggregate.h): per alloc info, the figures every report needs, kept as the
 * matcher's records of blocks come, and written as AGG_SNAPSHOT records. Runs on the writer thread:
 * no malloc, no stdio, no locks.
 *
 * The peak is kept lazily, as the analyzer's model keeps it: each new global peak starts an epoch,
 * and an info brings its "blocks live at the peak" up to date only when its live count is about to
 * change (if an epoch began since it was last touched, its live count then is its live count now).
 * So a new peak costs nothing per info, and a snapshot finds every info whose value at the peak
 * differs from its live count among those touched since the last snapshot (a peak after that
 * touched none). */
#include <errno.h>
#include <string.h>

#include "aggregate.h"
#include "match.h"
#include "rules.h"

struct agg_info {
	uint64_t size;
	uint64_t live;          /* blocks live now */
	uint64_t at_peak;       /* blocks live at the last peak, when epoch is the current one */
	uint64_t epoch;         /* the peak epoch at_peak was brought up to date in */
	uint64_t allocs, temps; /* since the last snapshot */
	uint64_t live_snap;     /* live at the last snapshot */
	uint32_t next;          /* the dirty list: the next id + 1, 0 at its end */
	uint8_t dirty, known;   /* in the dirty list; size set */
};

static struct {
	unsigned interval_ms;
	struct agg_info *info; /* by alloc info id, cap of them */
	size_t cap;
	uint32_t dirty;                   /* the ids touched since the last snapshot: the first + 1, 0 none */
	size_t ndirty;                    /* ... how many */
	struct ct_rec_agg_entry *entries; /* a snapshot's lists */
	struct ct_rec_agg_peak *peaks;
	size_t cap_entries, cap_peaks;
	uint64_t heap, heap_max;       /* in use now, and its highest since the last snapshot */
	uint64_t peak, peak_us, epoch; /* the global peak, when, and its epoch */
	int peak_rose;                 /* since the last snapshot */
	uint64_t now_us, rss_max, dropped;
} a;

int ct_agg_setting(const char *value)
{
	unsigned ms;
	a.interval_ms = 0;
	if (!value)
		return 0;
	if (ct_parse_snapshot_ms(value, &ms) < 0) {
		a.interval_ms = CT_SNAPSHOT_MS_DEFAULT; /* aggregating was asked for */
		return -EINVAL;
	}
	a.interval_ms = ms;
	return 0;
}

int ct_agg_set_interval(unsigned ms)
{
	int ok = ms == 0 || (ms >= CT_SNAPSHOT_MS_MIN && ms <= CT_SNAPSHOT_MS_MAX);
	a.interval_ms = ok ? ms : 0;
	return ok ? 0 : -EINVAL;
}

unsigned ct_agg_interval_ms(void)
{
	return a.interval_ms;
}

void ct_agg_release(void)
{
	ct_arena_unmap(a.info, a.cap * sizeof(*a.info));
	ct_arena_unmap(a.entries, a.cap_entries * sizeof(*a.entries));
	ct_arena_unmap(a.peaks, a.cap_peaks * sizeof(*a.peaks));
	unsigned ms = a.interval_ms;
	memset(&a, 0, sizeof(a));
	a.interval_ms = ms;
}

/* Fresh tables: a forked child's figures are not its parent's. */
int ct_agg_reset(void)
{
	ct_agg_release();
	return 0;
}

size_t ct_agg_bytes(void)
{
	return a.cap * sizeof(*a.info) + a.cap_entries * sizeof(*a.entries) + a.cap_peaks * sizeof(*a.peaks);
}

uint64_t ct_agg_dropped(void)
{
	return a.dropped;
}

/* Room for n elements of `each` bytes in the table at *p, of *cap now: doubled from first until
 * they fit. 0, or -1 with the table as it was. */
static int grow(void **p, size_t *cap, size_t n, size_t each, size_t first)
{
	size_t c = *cap ? *cap : first;
	while (c < n)
		c *= 2;
	if (c != *cap && ct_arena_grow(p, *cap * each, c * each) < 0)
		return -1;
	*cap = c;
	return 0;
}

/* Info id, touched: its value at the peak brought up to date before its live count changes, and
 * listed for the next snapshot. NULL when there is no memory for it. */
static struct agg_info *touch(uint32_t id)
{
	if (CT_UNLIKELY(id >= a.cap) &&
	    grow((void **)&a.info, &a.cap, (size_t)id + 1, sizeof(*a.info), 4096) < 0)
		return NULL;
	struct agg_info *i = &a.info[id];
	if (CT_UNLIKELY(!i->known)) {
		i->size = ct_match_info_size(id);
		i->known = 1;
	}
	if (i->epoch != a.epoch) {
		i->at_peak = i->live;
		i->epoch = a.epoch;
	}
	if (!i->dirty) {
		i->dirty = 1;
		i->next = a.dirty;
		a.dirty = id + 1;
		a.ndirty++;
	}
	return i;
}

/* The heap reached heap bytes: the interval's highest, maybe a new peak (a new epoch). */
static int reached(uint64_t heap)
{
	if (heap > a.heap_max)
		a.heap_max = heap;
	if (heap <= a.peak)
		return 0;
	a.peak = heap;
	a.peak_us = a.now_us;
	a.epoch++;
	a.peak_rose = 1;
	return 1;
}

void ct_agg_block(unsigned tag, uint32_t id)
{
	struct agg_info *i = touch(id);
	if (!i) {
		a.dropped++;
		return;
	}
	switch (tag) {
	case CT_REC_ALLOC:
		i->allocs++;
		i->live++;
		a.heap += i->size;
		reached(a.heap);
		break;
	case CT_REC_TEMP: /* allocated and freed at once: live at a peak it makes */
		i->allocs++;
		i->temps++;
		if (reached(a.heap + i->size)) {
			i->at_peak = i->live + 1;
			i->epoch = a.epoch;
		}
		break;
	case CT_REC_TEMPFREE:
		i->temps++;
		/* fall through */
	default: /* FREE, RECENT */
		i->live--;
		a.heap -= i->size;
		break;
	}
}

void ct_agg_clock(uint64_t now_us)
{
	a.now_us = now_us;
}

void ct_agg_rss(uint64_t rss)
{
	if (rss > a.rss_max)
		a.rss_max = rss;
}

/* Sorts v[0 .. n) by info id (a heap sort: no malloc, no recursion), so that the ids are written
 * as small deltas and a reader can tell a repeated one. */
static void sift(struct ct_rec_agg_entry *v, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && v[c + 1].info > v[c].info)
			c++;
		if (v[i].info >= v[c].info)
			return;
		struct ct_rec_agg_entry t = v[i];
		v[i] = v[c];
		v[c] = t;
	}
}

static void sort_entries(struct ct_rec_agg_entry *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(v, i, n);
	for (size_t end = n; end-- > 1;) {
		struct ct_rec_agg_entry t = v[0];
		v[0] = v[end];
		v[end] = t;
		sift(v, 0, end);
	}
}

/* The entries of a snapshot, by id: each info touched since the last one, and those whose blocks
 * live at the peak are not their live blocks now (touched after the peak: the epoch is the current
 * one). */
static void entries(struct ct_rec_agg_snapshot *s)
{
	s->n = s->np = 0;
	for (uint32_t id = a.dirty; id; id = a.info[id - 1].next) {
		const struct agg_info *i = &a.info[id - 1];
		a.entries[s->n++] =
		    (struct ct_rec_agg_entry){id - 1, i->allocs, i->temps, (int64_t)(i->live - i->live_snap)};
	}
	sort_entries(a.entries, s->n);
	for (size_t k = 0; a.peak_rose && k < s->n; k++) {
		const struct agg_info *i = &a.info[a.entries[k].info];
		if (i->epoch == a.epoch && i->at_peak != i->live)
			a.peaks[s->np++] = (struct ct_rec_agg_peak){a.entries[k].info, i->at_peak};
	}
}

/* The snapshot is written: the next one counts from here. */
static void restart(uint64_t rss)
{
	for (uint32_t id = a.dirty; id;) {
		struct agg_info *i = &a.info[id - 1];
		i->allocs = i->temps = 0;
		i->live_snap = i->live;
		i->dirty = 0;
		id = i->next;
	}
	a.dirty = 0;
	a.ndirty = 0;
	a.peak_rose = 0;
	a.heap_max = a.heap;
	a.rss_max = rss;
}

void ct_agg_snapshot(struct ct_rec_buf *out, uint64_t rss)
{
	ct_agg_rss(rss);
	if (grow((void **)&a.entries, &a.cap_entries, a.ndirty, sizeof(*a.entries), 1024) < 0 ||
	    grow((void **)&a.peaks, &a.cap_peaks, a.ndirty, sizeof(*a.peaks), 1024) < 0)
		return; /* the changes wait for the next snapshot */
	struct ct_rec_agg_snapshot s = {.heap_max = a.heap_max,
	                                .rss = rss,
	                                .rss_max = a.rss_max,
	                                .e = a.entries,
	                                .peak = a.peak_rose ? a.peak : 0,
	                                .peak_us = a.peak_us,
	                                .p = a.peaks};
	entries(&s);
	uint64_t dropped = out->dropped;
	ct_rec_agg_snapshot(out, &s);
	if (out->dropped == dropped)
		restart(rss);
}
