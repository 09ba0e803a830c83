/* SPDX-License-Identifier: MIT */
/* Aggregated traces in the model (see aggregated.h). An AGG_SNAPSHOT is read twice: once to check
 * every field (a damaged one must change nothing, as a cut one), once to apply it, each info as its
 * ALLOC, TEMP, TEMPFREE and FREE records would have (model.c): the same totals, per info figures
 * and value at the peak, the slices' counts at the snapshot's time, the heap's highest since the
 * previous snapshot. */
#include <errno.h>
#include <stdio.h>

#include "aggregated.h"
#include "cursor.h"

int ct_model_aggregate(struct ct_model *m, uint64_t interval_us)
{
	if (!interval_us || m->aggregate_us || m->ninfos || m->t.allocations)
		return -EINVAL;
	m->aggregate_us = interval_us;
	return 0;
}

/* A snapshot as it is read. */
struct snap {
	struct ct_cursor c;
	int unordered;
	uint64_t heap_max, rss, rss_max, n;
};

/* The next id of an increasing list: the previous plus the delta; *first: none before. */
static uint64_t get_id(struct snap *s, uint64_t *prev, int *first)
{
	int64_t d = ct_unzigzag(ct_cur_v(&s->c));
	if (!*first && d <= 0)
		s->unordered = 1;
	*first = 0;
	*prev += (uint64_t)d;
	return *prev;
}

/* -EINVAL, with why: "AGG_SNAPSHOT <what> <id>". */
static int bad(char *why, size_t len, const char *what, uint64_t id)
{
	snprintf(why, len, "AGG_SNAPSHOT %s %llu", what, (unsigned long long)id);
	return -EINVAL;
}

/* One info's entry: allocations a, temporary t, live delta d. */
struct entry {
	uint64_t id, a, t;
	int64_t d;
};

static void get_entry(struct snap *s, struct entry *e, uint64_t *prev, int *first)
{
	e->id = get_id(s, prev, first);
	e->a = ct_cur_v(&s->c);
	e->t = ct_cur_v(&s->c);
	e->d = ct_unzigzag(ct_cur_v(&s->c));
}

/* Checks an entry against the model: 0, or -EINVAL with why. */
static int check_entry(const struct ct_model *m, const struct entry *e, char *why, size_t len)
{
	if (e->id >= m->ninfos)
		return bad(why, len, "names undefined alloc info", e->id);
	const struct ct_info *info = &m->infos[e->id];
	uint64_t frees = e->a - (uint64_t)e->d;
	/* -d in unsigned arithmetic: d may be INT64_MIN (a damaged file; the fuzzer's) */
	if ((e->d > 0 && (uint64_t)e->d > e->a) || (e->d < 0 && 0 - (uint64_t)e->d > info->live))
		return bad(why, len, "frees more blocks than were live of alloc info", e->id);
	if (e->t > frees)
		return bad(why, len, "counts more temporary than freed blocks of alloc info", e->id);
	return 0;
}

/* The whole payload, checked: 0, or -EINVAL with why. */
static int check(const struct ct_model *m, struct snap s, char *why, size_t len)
{
	uint64_t prev = 0;
	int first = 1;
	s.heap_max = ct_cur_v(&s.c), s.rss = ct_cur_v(&s.c), s.rss_max = ct_cur_v(&s.c), s.n = ct_cur_v(&s.c);
	for (uint64_t k = 0; k < s.n && !s.c.shorted; k++) {
		struct entry e;
		get_entry(&s, &e, &prev, &first);
		if (!s.c.shorted && check_entry(m, &e, why, len) < 0)
			return -EINVAL;
	}
	uint64_t peak = ct_cur_v(&s.c);
	if (peak && !s.c.shorted && peak <= m->t.peak)
		return bad(why, len, "gives a peak below the last one, in bytes:", peak);
	if (peak) {
		ct_cur_v(&s.c); /* its time */
		uint64_t np = ct_cur_v(&s.c);
		prev = 0, first = 1;
		for (uint64_t k = 0; k < np && !s.c.shorted; k++) {
			uint64_t id = get_id(&s, &prev, &first);
			ct_cur_v(&s.c);
			if (!s.c.shorted && id >= m->ninfos)
				return bad(why, len, "gives the peak of undefined alloc info", id);
		}
	}
	if (s.c.shorted)
		return snprintf(why, len, "AGG_SNAPSHOT record is shorter than its fields"), -EINVAL;
	if (s.unordered)
		return bad(why, len, "lists its alloc infos out of order, near info", prev);
	return 0;
}

/* The last lower classes of info's blocks go when fewer are live than classified: frees after the
 * scan (late destructors), as model.c's unclassify_one takes them, one by one from the top. */
static void unclassify(struct ct_info *info)
{
	uint64_t sum = 0;
	for (int k = 0; k < CT_CLASSES; k++)
		sum += info->classes[k];
	for (int k = CT_CLASSES - 1; k >= 0 && sum > info->live; k--) {
		uint64_t take = sum - info->live < info->classes[k] ? sum - info->live : info->classes[k];
		info->classes[k] -= take;
		sum -= take;
	}
}

/* Applies one checked entry. 0 or -ENOMEM. */
static int apply_entry(struct ct_model *m, const struct entry *e)
{
	struct ct_info *info = &m->infos[e->id];
	struct ct_slice *sl = ct_model_slice(m, info);
	if (!sl)
		return -ENOMEM;
	uint64_t frees = e->a - (uint64_t)e->d, size = info->size;
	sl->allocations += e->a, sl->frees += frees, sl->temporary += e->t;
	sl->alloc_bytes += e->a * size, sl->free_bytes += frees * size;
	ct_model_touch(m, info);
	info->live += (uint64_t)e->d;
	info->allocations += e->a;
	info->temporary += e->t;
	if (m->classified && e->d < 0)
		unclassify(info);
	m->t.allocations += e->a;
	m->t.frees += frees;
	m->t.temporary += e->t;
	m->t.bytes_allocated += e->a * size;
	m->t.live_allocations += (uint64_t)e->d;
	m->t.current += (uint64_t)e->d * size;
	struct ct_point *pt = &m->series[m->nseries - 1];
	struct ct_slice_total *tot = ct_timeline_total(&m->tl);
	pt->allocations += e->a, pt->temporary += e->t, pt->alloc_bytes += e->a * size;
	tot->allocations += e->a, tot->temporary += e->t, tot->alloc_bytes += e->a * size;
	return 0;
}

/* The heap's highest since the previous snapshot, in the series' point and the heap's slice. */
static void note_heap(struct ct_model *m, uint64_t heap)
{
	struct ct_point *pt = &m->series[m->nseries - 1];
	struct ct_slice_total *tot = ct_timeline_total(&m->tl);
	heap = heap > m->t.current ? heap : m->t.current;
	pt->heap = heap > pt->heap ? heap : pt->heap;
	tot->heap = heap > tot->heap ? heap : tot->heap;
}

/* The new peak: every info's value there is its live count now, but for those listed. */
static void new_peak(struct ct_model *m, struct snap *s, uint64_t peak)
{
	uint64_t at = ct_cur_v(&s->c), np = ct_cur_v(&s->c), prev = 0;
	int first = 1;
	m->t.peak = peak;
	m->t.peak_time_us = at;
	m->peak_version++;
	for (uint64_t k = 0; k < np; k++) {
		struct ct_info *info = &m->infos[get_id(s, &prev, &first)];
		info->peak_live = ct_cur_v(&s->c);
		info->version = m->peak_version;
	}
}

int ct_model_agg_snapshot(struct ct_model *m, const uint8_t *p, const uint8_t *end, char *why, size_t len)
{
	struct snap s = {.c = {.p = p, .end = end}};
	if (!m->aggregate_us)
		return snprintf(why, len, "AGG_SNAPSHOT record in a trace without AGGREGATE"), -EINVAL;
	if (check(m, s, why, len) < 0)
		return -EINVAL;
	s.heap_max = ct_cur_v(&s.c), s.rss = ct_cur_v(&s.c), s.rss_max = ct_cur_v(&s.c), s.n = ct_cur_v(&s.c);
	uint64_t prev = 0;
	int first = 1;
	m->work += s.n;
	for (uint64_t k = 0; k < s.n; k++) {
		struct entry e;
		get_entry(&s, &e, &prev, &first);
		if (apply_entry(m, &e) < 0)
			return -ENOMEM;
	}
	note_heap(m, s.heap_max);
	uint64_t peak = ct_cur_v(&s.c);
	if (peak)
		new_peak(m, &s, peak);
	ct_model_sample(m, s.rss_max > s.rss ? s.rss_max : s.rss);
	return 0;
}

void ct_aggregated_note(char *buf, size_t len, uint64_t interval_us)
{
	snprintf(buf, len,
	         "aggregated: memory over time every %g s (snapshots of the figures, not every event)",
	         (double)interval_us / 1e6);
}
