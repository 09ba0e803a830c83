/* SPDX-License-Identifier: MIT */
/* The live view's sites (livesites.h): the report of the model as it stands (report.c: sites, the
 * wrappers found, groups), ranked by its allocations so that every site with one is listed, then
 * sorted by the view's cost. The report is closed and opened again at each update, all but its
 * symbolizer, which keeps what it resolved. */
#include <errno.h>
#include <stdlib.h>

#include "fold.h"
#include "livesites.h"

const char *ct_live_cost_name(enum ct_live_cost c)
{
	static const char *const names[CT_LIVE_COSTS] = {"live bytes", "allocations", "allocated bytes",
	                                                 "temporary"};
	return c < CT_LIVE_COSTS ? names[c] : "?";
}

int ct_livesites_init(struct ct_livesites *ls)
{
	*ls = (struct ct_livesites){0};
	ls->fold = ct_fold_new();
	return ls->fold ? 0 : -ENOMEM;
}

static uint64_t cost(const struct ct_site *s, enum ct_live_cost c)
{
	switch (c) {
	case CT_LIVE_ALLOCATIONS:
		return s->allocations;
	case CT_LIVE_ALLOCATED:
		return s->bytes_allocated;
	case CT_LIVE_TEMPORARY:
		return s->temporary;
	default:
		return s->leaked_bytes;
	}
}

/* By the cost, then live bytes, allocations and the stack: a total order, so the list stands still
 * between refreshes when nothing changed. */
static int cmp_sites(const struct ct_site *x, const struct ct_site *y, enum ct_live_cost by)
{
	const enum ct_live_cost keys[] = {by, CT_LIVE_BYTES, CT_LIVE_ALLOCATIONS};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (cost(x, keys[k]) != cost(y, keys[k]))
			return cost(x, keys[k]) > cost(y, keys[k]) ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_ranked(const void *a, const void *b, void *arg)
{
	return cmp_sites(*(const struct ct_site *const *)a, *(const struct ct_site *const *)b,
	                 *(const enum ct_live_cost *)arg);
}

static int cmp_callers(const void *a, const void *b, void *arg)
{
	return cmp_sites(a, b, *(const enum ct_live_cost *)arg);
}

/* The report closed but for its symbolizer, returned. */
static struct ct_symbolizer *close_report(struct ct_livesites *ls)
{
	struct ct_symbolizer *sym = ls->r.sym;
	ls->r.sym = NULL;
	if (ls->open)
		ct_report_close(&ls->r);
	free(ls->v);
	ls->v = NULL, ls->n = 0, ls->open = 0;
	return sym;
}

int ct_livesites_update(struct ct_livesites *ls, const char *path, const struct ct_model *m,
                        enum ct_live_cost by)
{
	struct ct_symbolizer *sym = close_report(ls);
	ls->r = (struct ct_report){.top = 10, .fold = ls->fold, .group = CT_GROUP_SITE, .sym = sym};
	ls->open = 1;
	int rc = ct_report_open(&ls->r, path, m, 0);
	long n = rc < 0 ? rc : ct_report_rank(&ls->r, CT_BY_ALLOCATIONS, &ls->v);
	if (n < 0)
		return (int)n;
	ls->n = (size_t)n;
	qsort_r(ls->v, ls->n, sizeof(*ls->v), cmp_ranked, &by);
	return 0;
}

/* A copy of the first frame shown, which ends the walk. */
static int take_first(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	*(struct ct_frame *)ctx = *f;
	return 1;
}

int ct_livesites_first(struct ct_livesites *ls, size_t i, struct ct_frame *f)
{
	*f = (struct ct_frame){0};
	int rc = i < ls->n ? ct_livesites_frames(ls, ls->v[i]->stack, take_first, f) : 0;
	return rc < 0 ? rc : !f->function;
}

int ct_livesites_frames(struct ct_livesites *ls, uint32_t stack, ct_frame_fn fn, void *ctx)
{
	int truncated;
	int rc = ct_report_frames(&ls->r, stack, fn, ctx, &truncated);
	return rc < 0 ? rc : 0;
}

int ct_livesites_callers(struct ct_livesites *ls, size_t i, enum ct_live_cost by, struct ct_callers *c)
{
	*c = (struct ct_callers){0};
	if (i >= ls->n)
		return 0;
	int rc = ct_report_callers(&ls->r, CT_BY_ALLOCATIONS, ls->v[i], c); /* the ranking's entries */
	if (!rc)
		qsort_r(c->v, c->n, sizeof(*c->v), cmp_callers, &by);
	return rc;
}

void ct_livesites_free(struct ct_livesites *ls)
{
	ct_symbolizer_free(close_report(ls));
	ct_fold_free(ls->fold);
	ls->fold = NULL;
}
