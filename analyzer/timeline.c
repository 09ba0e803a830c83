/* SPDX-License-Identifier: MIT */
/* The timeline: per-site and whole-heap activity per time slice (see timeline.h for the bounds).
 * Invariant: every stack's slices increase and are at most its current entry's (acc: the latest
 * site slice it had events in, not yet among its slices; CT_TIMELINE_NONE when none, and pending
 * counts the others); entries is the sum of the stacks' counts; site_cur == cur >> coarse; a merge
 * (a width doubling) keeps every sum over slices. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "timeline.h"

int ct_timeline_init(struct ct_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->totals = calloc(CT_TIMELINE_SLICES, sizeof(*tl->totals));
	return tl->totals ? 0 : -ENOMEM;
}

void ct_timeline_release(struct ct_timeline *tl)
{
	for (uint32_t i = 0; i < tl->nstacks; i++)
		free(tl->stacks[i].v);
	free(tl->stacks);
	free(tl->site_of_node);
	free(tl->acc);
	free(tl->totals);
	memset(tl, 0, sizeof(*tl));
}

uint64_t ct_timeline_budget(const struct ct_timeline *tl)
{
	uint64_t per = (uint64_t)CT_TIMELINE_PER_STACK * tl->nstacks;
	return per > CT_TIMELINE_BUDGET ? per : CT_TIMELINE_BUDGET;
}

int ct_timeline_site(struct ct_timeline *tl, uint32_t stack, uint32_t *site)
{
	if (stack >= tl->cap_nodes) {
		size_t cap = tl->cap_nodes ? tl->cap_nodes : 64;
		while (cap <= stack)
			cap *= 2;
		uint32_t *v = realloc(tl->site_of_node, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + tl->cap_nodes, 0, (cap - tl->cap_nodes) * sizeof(*v));
		tl->site_of_node = v, tl->cap_nodes = cap;
	}
	if (tl->site_of_node[stack]) {
		*site = tl->site_of_node[stack] - 1;
		return 0;
	}
	if (tl->nstacks == tl->cap_stacks) {
		uint32_t cap = tl->cap_stacks ? 2 * tl->cap_stacks : 64;
		struct ct_tl_stack *v = realloc(tl->stacks, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		tl->stacks = v;
		struct ct_slice *a = realloc(tl->acc, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		tl->acc = a, tl->cap_stacks = cap;
	}
	tl->stacks[tl->nstacks] = (struct ct_tl_stack){0};
	tl->acc[tl->nstacks] = (struct ct_slice){.slice = CT_TIMELINE_NONE};
	*site = tl->nstacks++;
	tl->site_of_node[stack] = *site + 1;
	return 0;
}

static void add_slice(struct ct_slice *to, const struct ct_slice *from)
{
	to->allocations += from->allocations;
	to->frees += from->frees;
	to->temporary += from->temporary;
	to->alloc_bytes += from->alloc_bytes;
	to->free_bytes += from->free_bytes;
}

/* One stack's slices at twice the width: neighbours merged, and the array shrunk when it holds
 * more than four times its entries (so capacity stays within twice the entries a merge leaves). */
static void merge_stack(struct ct_tl_stack *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		struct ct_slice e = s->v[i];
		e.slice >>= 1;
		if (n && s->v[n - 1].slice == e.slice)
			add_slice(&s->v[n - 1], &e);
		else
			s->v[n++] = e;
	}
	s->n = n;
	if (s->cap > 8 && s->cap > 4 * n) {
		uint32_t cap = n > 4 ? 2 * n : 8;
		struct ct_slice *v = realloc(s->v, cap * sizeof(*v));
		if (v) /* a failed shrink keeps the larger block */
			s->v = v, s->cap = cap;
	}
}

/* The whole heap's slices at twice the width: the highest heap and RSS of each pair, the sum of
 * its counts. */
static void merge_totals(struct ct_timeline *tl)
{
	for (uint32_t i = 0; i <= tl->cur; i += 2) {
		struct ct_slice_total t = tl->totals[i];
		if (i + 1 <= tl->cur) {
			const struct ct_slice_total *u = &tl->totals[i + 1];
			t.heap = u->heap > t.heap ? u->heap : t.heap;
			t.rss = u->rss > t.rss ? u->rss : t.rss;
			t.allocations += u->allocations, t.temporary += u->temporary;
			t.alloc_bytes += u->alloc_bytes;
		}
		tl->totals[i / 2] = t;
	}
	uint32_t n = tl->cur / 2 + 1;
	memset(tl->totals + n, 0, (CT_TIMELINE_SLICES - n) * sizeof(*tl->totals));
}

/* Site's current entry goes to the end of its stack's slices (merged with the last one when of
 * the same slice: an entry flushed by a query, then more events). 0 or -ENOMEM. */
static int acc_flush(struct ct_timeline *tl, uint32_t site)
{
	struct ct_slice *a = &tl->acc[site];
	struct ct_tl_stack *s = &tl->stacks[site];
	if (a->slice == CT_TIMELINE_NONE)
		return 0;
	tl->pending--;
	if (s->n && s->v[s->n - 1].slice == a->slice) {
		add_slice(&s->v[s->n - 1], a);
	} else {
		if (s->n == s->cap) {
			uint32_t cap = s->cap ? 2 * s->cap : 4;
			struct ct_slice *v = realloc(s->v, cap * sizeof(*v));
			if (!v) {
				tl->failed = 1;
				return -ENOMEM;
			}
			s->v = v, s->cap = cap;
		}
		s->v[s->n++] = *a;
		tl->entries++;
	}
	*a = (struct ct_slice){.slice = CT_TIMELINE_NONE};
	return 0;
}

int ct_timeline_flush(struct ct_model *m)
{
	struct ct_timeline *tl = &m->tl;
	for (uint32_t i = 0; i < tl->nstacks && tl->pending; i++)
		acc_flush(tl, i);
	return tl->failed ? -ENOMEM : 0;
}

/* The sites' width doubles: the current entries go to the stacks, then neighbouring site slices
 * merge: O(stacks + entries). The caller updates coarse and site_cur. */
static void widen_sites(struct ct_model *m)
{
	struct ct_timeline *tl = &m->tl;
	ct_timeline_flush(m);
	uint64_t entries = 0;
	for (uint32_t i = 0; i < tl->nstacks; i++) {
		merge_stack(&tl->stacks[i]);
		entries += tl->stacks[i].n;
	}
	tl->entries = entries;
}

/* The whole heap's width doubles: O(slices), and O(stacks + entries) when the sites' width was the
 * same (it doubles too; coarser, it stays, coarse one less). It happens O(log(run / 1 us)) times. */
static void widen(struct ct_model *m)
{
	struct ct_timeline *tl = &m->tl;
	if (tl->coarse)
		tl->coarse--;
	else
		widen_sites(m);
	merge_totals(tl);
	tl->cur >>= 1;
	tl->shift++;
	tl->site_cur = tl->cur >> tl->coarse;
}

void ct_timeline_time(struct ct_model *m, uint64_t now_us)
{
	struct ct_timeline *tl = &m->tl;
	while ((now_us >> tl->shift) >= CT_TIMELINE_SLICES)
		widen(m);
	uint32_t to = (uint32_t)(now_us >> tl->shift);
	/* The slices the clock enters start with the heap in use (nothing changed it there yet). */
	for (uint32_t i = tl->cur + 1; i <= to; i++)
		tl->totals[i].heap = m->t.current;
	if (to > tl->cur)
		tl->cur = to, tl->site_cur = to >> tl->coarse;
}

struct ct_slice *ct_timeline_start(struct ct_model *m, uint32_t site)
{
	struct ct_timeline *tl = &m->tl;
	if (tl->no_sites) { /* the entry only counts the current slice, for the free that follows */
		tl->acc[site] = (struct ct_slice){.slice = tl->site_cur};
		return &tl->acc[site];
	}
	if (tl->failed || acc_flush(tl, site) < 0)
		return NULL;
	if (tl->entries > ct_timeline_budget(tl)) {
		/* Down to half the budget, so that the next widening waits for as many new entries as it
		 * costs. It ends: at 4 site slices or fewer, entries <= 4 * stacks <= budget / 2. The whole
		 * heap's slices stay. */
		while (tl->entries > ct_timeline_budget(tl) / 2 && tl->site_cur > 0) {
			widen_sites(m);
			tl->coarse++;
			tl->site_cur = tl->cur >> tl->coarse;
		}
		if (tl->failed)
			return NULL;
	}
	tl->pending++;
	tl->acc[site] = (struct ct_slice){.slice = tl->site_cur};
	return &tl->acc[site];
}

/* Queries see every event: the current entries go to the stacks first. The model is const to its
 * readers; the slices are its cache of the events, brought up to date here. */
static void sync(const struct ct_model *m)
{
	if (m->tl.pending)
		ct_timeline_flush((struct ct_model *)m);
}

/* ---- queries ---- */

const struct ct_slice *ct_timeline_slices(const struct ct_model *m, uint32_t stack, size_t *n)
{
	const struct ct_timeline *tl = &m->tl;
	sync(m);
	*n = 0;
	if (stack >= tl->cap_nodes || !tl->site_of_node[stack])
		return NULL;
	const struct ct_tl_stack *s = &tl->stacks[tl->site_of_node[stack] - 1];
	*n = s->n;
	return s->n ? s->v : NULL;
}

uint64_t ct_timeline_width_us(const struct ct_model *m)
{
	return (uint64_t)1 << m->tl.shift;
}

uint32_t ct_timeline_nslices(const struct ct_model *m)
{
	return m->tl.cur + 1;
}

uint64_t ct_timeline_site_width_us(const struct ct_model *m)
{
	return (uint64_t)1 << (m->tl.shift + m->tl.coarse);
}

uint32_t ct_timeline_site_nslices(const struct ct_model *m)
{
	return m->tl.site_cur + 1;
}

const struct ct_slice_total *ct_timeline_totals(const struct ct_model *m)
{
	return m->tl.totals;
}

uint32_t ct_timeline_slice_of(const struct ct_model *m, uint64_t t_us)
{
	uint64_t s = t_us >> m->tl.shift;
	return s > m->tl.cur ? m->tl.cur : (uint32_t)s;
}
