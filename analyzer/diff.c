/* SPDX-License-Identifier: MIT */
/* --diff: per backtrace (a tree node with its own figures in either trace), the change from BASE to NEW
 * in leaked bytes, peak bytes and allocations, largest first, as text or JSON (docs/json-schema.md). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "export.h"
#include "markup.h"

enum status { ST_NEW, ST_GONE, ST_CHANGED, ST_SAME };
static const char *const status_names[] = {"new", "gone", "changed", "same"};

/* The figures a site shows, in the order sites are sorted by the size of their change. */
static const struct {
	enum ct_fig fig;
	const char *json;
} site_figs[] = {
    {CT_FIG_LEAKED_BYTES, "leaked_bytes"},
    {CT_FIG_PEAK_BYTES, "peak_bytes"},
    {CT_FIG_ALLOCATIONS, "allocations"},
    {CT_FIG_BYTES_ALLOCATED, "bytes_allocated"},
    {CT_FIG_LEAKED_ALLOCATIONS, "leaked_allocations"},
};
#define NSITE_FIGS (sizeof(site_figs) / sizeof(site_figs[0]))

/* The trace totals the header compares, under report_json.c's summary names. */
static const struct {
	size_t offset;
	const char *json;
} totals[] = {
    {offsetof(struct ct_totals, allocations), "allocations"},
    {offsetof(struct ct_totals, frees), "frees"},
    {offsetof(struct ct_totals, bytes_allocated), "bytes_allocated"},
    {offsetof(struct ct_totals, temporary), "temporary_allocations"},
    {offsetof(struct ct_totals, peak), "peak_heap_bytes"},
    {offsetof(struct ct_totals, current), "leaked_bytes"},
    {offsetof(struct ct_totals, live_allocations), "leaked_allocations"},
};

static uint64_t total(const struct ct_report *r, size_t i)
{
	return *(const uint64_t *)((const char *)&r->m->t + totals[i].offset);
}

struct site {
	uint32_t node;
	uint32_t order; /* position in the tree walk: the last, address-free tie-break */
	enum status status;
};

struct diff {
	FILE *out;
	const struct ct_tree *t;
	const struct ct_report *base, *new;
	struct site *v;
	size_t n;
	size_t counts[4];               /* per status */
	const struct ct_frame **frames; /* one site's frames, innermost first */
};

static uint64_t fig(const struct diff *d, const struct site *s, int set, enum ct_fig f)
{
	return ct_tree_self(d->t, s->node, set)[f];
}

static uint64_t magnitude(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}
static const char *sign(uint64_t from, uint64_t to)
{
	return to < from ? "-" : to > from ? "+" : "";
}

static int has_figures(const uint64_t *f)
{
	for (int i = 0; i < CT_NFIGS; i++)
		if (f[i])
			return 1;
	return 0;
}

static enum status site_status(const uint64_t *base, const uint64_t *new)
{
	if (!has_figures(base))
		return ST_NEW;
	if (!has_figures(new))
		return ST_GONE;
	for (size_t i = 0; i < NSITE_FIGS; i++)
		if (base[site_figs[i].fig] != new[site_figs[i].fig])
			return ST_CHANGED;
	return ST_SAME;
}

/* Sites in tree order (children sorted by frame), so equal changes keep an order that depends neither
 * on addresses nor on which trace came first. The recursion is as deep as the deepest stack. */
static void walk(struct diff *d, uint32_t id)
{
	const uint64_t *base = ct_tree_self(d->t, id, 0), *new = ct_tree_self(d->t, id, 1);
	if (id && (has_figures(base) || has_figures(new))) {
		struct site *s = &d->v[d->n];
		*s = (struct site){.node = id, .order = (uint32_t)d->n, .status = site_status(base, new)};
		d->counts[s->status]++;
		d->n++;
	}
	for (uint32_t c = ct_tree_first(d->t, id); c; c = ct_tree_next(d->t, c))
		walk(d, c);
}

static int by_change(const void *a, const void *b, void *arg)
{
	const struct diff *d = arg;
	const struct site *x = a, *y = b;
	for (size_t i = 0; i < NSITE_FIGS; i++) {
		enum ct_fig f = site_figs[i].fig;
		uint64_t mx = magnitude(fig(d, x, 0, f), fig(d, x, 1, f));
		uint64_t my = magnitude(fig(d, y, 0, f), fig(d, y, 1, f));
		if (mx != my)
			return mx < my ? 1 : -1;
	}
	return (x->order > y->order) - (x->order < y->order);
}

/* A site's frames innermost first: up from the node when the tree is root first, else down to it. */
static size_t site_frames(const struct diff *d, const struct site *s)
{
	size_t n = 0;
	for (uint32_t id = s->node; id; id = d->t->nodes[id].parent)
		d->frames[n++] = &d->t->nodes[id].frame;
	for (size_t i = 0; d->t->reversed && i < n / 2; i++) {
		const struct ct_frame *tmp = d->frames[i];
		d->frames[i] = d->frames[n - 1 - i], d->frames[n - 1 - i] = tmp;
	}
	return n;
}

/* ---- text ---- */

static const char *plural(uint64_t n)
{
	return n == 1 ? "allocation" : "allocations";
}

/* "+96 bytes (480 -> 576)": a change with its sign, then both figures. */
static void put_change(FILE *out, uint64_t from, uint64_t to, const char *unit)
{
	fprintf(out, "%s%" PRIu64 "%s (%" PRIu64 " -> %" PRIu64 ")", sign(from, to), magnitude(from, to),
	        unit, from, to);
}

static void put_trace(FILE *out, const char *label, const struct ct_report *r)
{
	const struct ct_totals *t = &r->m->t;
	fprintf(out,
	        "%s %s: %" PRIu64 " allocations, %" PRIu64 " bytes allocated, peak heap %" PRIu64
	        " bytes, leaked %" PRIu64 " bytes in %" PRIu64 " %s\n",
	        label, r->path, t->allocations, t->bytes_allocated, t->peak, t->current, t->live_allocations,
	        plural(t->live_allocations));
}

static void put_header(const struct diff *d)
{
	const struct ct_totals *b = &d->base->m->t, *n = &d->new->m->t;
	FILE *out = d->out;
	put_trace(out, "base:", d->base);
	put_trace(out, "new: ", d->new);
	fputs("change: leaked ", out);
	put_change(out, b->current, n->current, " bytes");
	fputs(" in ", out);
	put_change(out, b->live_allocations, n->live_allocations, " allocations");
	fputs("\n        peak heap ", out);
	put_change(out, b->peak, n->peak, " bytes");
	fputs("\n        allocations ", out);
	put_change(out, b->allocations, n->allocations, "");
	fputs("\n        bytes allocated ", out);
	put_change(out, b->bytes_allocated, n->bytes_allocated, "");
	fprintf(out, "\n\nSITES: %zu new, %zu gone, %zu changed, %zu unchanged (not shown)\n",
	        d->counts[ST_NEW], d->counts[ST_GONE], d->counts[ST_CHANGED], d->counts[ST_SAME]);
}

static void put_text_frames(const struct diff *d, const struct site *s)
{
	size_t n = site_frames(d, s);
	for (size_t i = 0; i < n; i++) {
		const struct ct_frame *f = d->frames[i];
		fprintf(d->out, "  #%zu %s", i, f->function);
		if (f->file)
			fprintf(d->out, " at %s:%u", f->file, f->line);
		fputs(f->inlined ? " [inlined]\n" : "\n", d->out);
	}
}

static void put_text_site(const struct diff *d, const struct site *s)
{
	FILE *out = d->out;
	uint64_t lb0 = fig(d, s, 0, CT_FIG_LEAKED_BYTES), lb1 = fig(d, s, 1, CT_FIG_LEAKED_BYTES);
	uint64_t la0 = fig(d, s, 0, CT_FIG_LEAKED_ALLOCATIONS), la1 = fig(d, s, 1, CT_FIG_LEAKED_ALLOCATIONS);
	fprintf(
	    out,
	    "\n%s%" PRIu64 " bytes leaked (%" PRIu64 " -> %" PRIu64 ", %" PRIu64 " -> %" PRIu64 " %s), %s\n",
	    sign(lb0, lb1), magnitude(lb0, lb1), lb0, lb1, la0, la1, plural(la1), status_names[s->status]);
	fputs("  peak ", out);
	put_change(out, fig(d, s, 0, CT_FIG_PEAK_BYTES), fig(d, s, 1, CT_FIG_PEAK_BYTES), " bytes");
	fputs(", allocations ", out);
	put_change(out, fig(d, s, 0, CT_FIG_ALLOCATIONS), fig(d, s, 1, CT_FIG_ALLOCATIONS), "");
	fputs(", allocated ", out);
	put_change(out, fig(d, s, 0, CT_FIG_BYTES_ALLOCATED), fig(d, s, 1, CT_FIG_BYTES_ALLOCATED), " bytes");
	fputc('\n', out);
	put_text_frames(d, s);
}

static void put_text(const struct diff *d)
{
	put_header(d);
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].status != ST_SAME)
			put_text_site(d, &d->v[i]);
}

/* ---- JSON ---- */

/* A signed change as a JSON integer, exact whatever the figures. */
static void put_json_change(FILE *out, uint64_t from, uint64_t to)
{
	fprintf(out, "%s%" PRIu64, to < from ? "-" : "", magnitude(from, to));
}

static void put_json_totals(const struct diff *d, const struct ct_report *r)
{
	fputs("{\"trace\": ", d->out);
	ct_json_cstring(d->out, r->path);
	for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++)
		fprintf(d->out, ", \"%s\": %" PRIu64, totals[i].json, total(r, i));
	fputs("}", d->out);
}

static void put_json_change_totals(const struct diff *d)
{
	for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		fprintf(d->out, "%s\"%s\": ", i ? ", " : "{", totals[i].json);
		put_json_change(d->out, total(d->base, i), total(d->new, i));
	}
	fputs("}", d->out);
}

static void put_json_frames(const struct diff *d, const struct site *s)
{
	FILE *out = d->out;
	size_t n = site_frames(d, s);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		ct_json_frame(out, d->frames[i], 0);
	}
}

static void put_json_site(const struct diff *d, const struct site *s)
{
	FILE *out = d->out;
	fprintf(out, "\n  {\"status\": \"%s\"", status_names[s->status]);
	for (size_t i = 0; i < NSITE_FIGS; i++) {
		uint64_t from = fig(d, s, 0, site_figs[i].fig), to = fig(d, s, 1, site_figs[i].fig);
		fprintf(out, ", \"%s\": {\"base\": %" PRIu64 ", \"new\": %" PRIu64 ", \"change\": ",
		        site_figs[i].json, from, to);
		put_json_change(out, from, to);
		fputs("}", out);
	}
	fputs(", \"frames\": [", out);
	put_json_frames(d, s);
	fputs("]}", out);
}

static void put_json(const struct diff *d)
{
	FILE *out = d->out;
	fputs("{\"base\": ", out);
	put_json_totals(d, d->base);
	fputs(",\n\"new\": ", out);
	put_json_totals(d, d->new);
	fputs(",\n\"change\": ", out);
	put_json_change_totals(d);
	fputs(",\n\"sites\": [", out);
	for (size_t i = 0; i < d->n; i++) {
		fputs(i ? "," : "", out);
		put_json_site(d, &d->v[i]);
	}
	fputs(d->n ? "\n]}\n" : "]}\n", out);
}

int ct_write_diff(FILE *out, const struct ct_tree *t, const struct ct_report *base,
                  const struct ct_report *new, int json)
{
	struct diff d = {.out = out, .t = t, .base = base, .new = new};
	d.v = malloc(t->n * sizeof(*d.v));
	d.frames = malloc((t->max_depth + 1) * sizeof(*d.frames));
	if (!d.v || !d.frames) {
		free(d.v);
		free(d.frames);
		return -ENOMEM;
	}
	walk(&d, 0);
	qsort_r(d.v, d.n, sizeof(*d.v), by_change, &d);
	if (json)
		put_json(&d);
	else
		put_text(&d);
	free(d.frames);
	free(d.v);
	return 0;
}
