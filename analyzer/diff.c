/* SPDX-License-Identifier: MIT */
/* --diff: per site, matched across the two runs as --baseline matches them (baseline.h: the first
 * shown frame's function and source file, never a line, a path's directory or an address, so two
 * checkouts or builds of one program match), the change from BASE to NEW in leaked bytes, peak
 * bytes and allocations, largest first, as text or JSON (docs/json-schema.md). BASE may be a saved
 * JSON report, whose unlisted figures (its peak and allocations lists hold its top sites) are
 * unknown: shown as such, and no reason for a change. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>

#include "export.h"
#include "markup.h"

enum status { ST_NEW, ST_GONE, ST_CHANGED, ST_SAME };
static const char *const status_names[] = {"new", "gone", "changed", "same"};

/* A site's figures, in the order sites are sorted by the size of their change. */
enum fig { F_LEAKED_BYTES, F_PEAK_BYTES, F_ALLOCATIONS, F_BYTES_ALLOCATED, F_LEAKED_BLOCKS, NFIGS };
static const char *const fig_json[NFIGS] = {"leaked_bytes", "peak_bytes", "allocations", "bytes_allocated",
                                            "leaked_allocations"};

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

static uint64_t total(const struct ct_baseline *b, size_t i)
{
	return *(const uint64_t *)((const char *)ct_baseline_totals(b) + totals[i].offset);
}

struct site {
	const struct ct_site_pair *p;
	uint32_t order; /* key order: the last, address-free tie-break */
	enum status status;
};

struct diff {
	FILE *out;
	const struct ct_baseline *base, *new;
	struct site *v;
	size_t n;
	size_t counts[4]; /* per status */
};

/* Figure f of a run's figures; *known is 0 when a JSON report does not list it. */
static uint64_t value(const struct ct_site_figures *s, enum fig f, int *known)
{
	*known = 1;
	switch (f) {
	case F_LEAKED_BYTES:
		return s->leaked_bytes;
	case F_LEAKED_BLOCKS:
		return s->leaked_blocks;
	case F_PEAK_BYTES:
		*known = s->peak_known;
		return s->peak_bytes;
	case F_ALLOCATIONS:
		*known = s->allocations_known;
		return s->allocations;
	default:
		*known = s->allocations_known;
		return s->bytes_allocated;
	}
}

/* The figure of the site in set 0 (base) or 1 (new): a site a run lacks has 0 there. */
static uint64_t fig(const struct site *s, int set, enum fig f, int *known)
{
	int in = set ? s->p->in_new : s->p->in_base;
	uint64_t v = value(set ? &s->p->new : &s->p->base, f, known);
	*known |= !in;
	return in ? v : 0;
}

static uint64_t magnitude(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static const char *sign(uint64_t from, uint64_t to)
{
	return to < from ? "-" : to > from ? "+" : "";
}

/* The change of figure f, 0 when either side is unknown. */
static uint64_t change(const struct site *s, enum fig f)
{
	int k0, k1;
	uint64_t a = fig(s, 0, f, &k0), b = fig(s, 1, f, &k1);
	return k0 && k1 ? magnitude(a, b) : 0;
}

static enum status site_status(const struct site *s)
{
	if (!s->p->in_base)
		return ST_NEW;
	if (!s->p->in_new)
		return ST_GONE;
	for (enum fig f = 0; f < NFIGS; f++)
		if (change(s, f))
			return ST_CHANGED;
	return ST_SAME;
}

static int by_change(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	for (enum fig f = 0; f < NFIGS; f++) {
		uint64_t mx = change(x, f), my = change(y, f);
		if (mx != my)
			return mx < my ? 1 : -1;
	}
	return (x->order > y->order) - (x->order < y->order);
}

/* ---- frames ---- */

/* The site's backtrace: its entry's, new's when it has one, else base's; NULL r when neither run is a
 * report that holds it (a site only a JSON report names). */
static const struct ct_report *site_entry(const struct diff *d, const struct site *s,
                                          const struct ct_site **e, enum ct_rank *by)
{
	const struct ct_report *r = NULL;
	*e = NULL;
	if (s->p->new_entry)
		r = ct_baseline_report(d->new), *e = s->p->new_entry, *by = s->p->new_by;
	else if (s->p->base_entry)
		r = ct_baseline_report(d->base), *e = s->p->base_entry, *by = s->p->base_by;
	return *e ? r : NULL;
}

struct frame_out {
	FILE *out;
	const struct ct_report *r;
	int json;
};

static int put_text_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	const struct frame_out *o = ctx;
	char name[512];
	fprintf(o->out, "  #%u %s", index, ct_frame_display_name(o->r, f, name, sizeof(name)));
	if (f->file)
		fprintf(o->out, " at %s:%u", f->file, f->line);
	fputs(f->inlined ? " [inlined]\n" : "\n", o->out);
	return 0;
}

static int put_json_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	const struct frame_out *o = ctx;
	fputs(index ? ", " : "", o->out);
	ct_json_frame(o->out, f, 0);
	return 0;
}

/* The frames of the site's backtrace; a site only a JSON report names shows its one known frame. */
static int put_frames(const struct diff *d, const struct site *s, int json)
{
	const struct ct_site *e;
	enum ct_rank by;
	const struct ct_report *r = site_entry(d, s, &e, &by);
	struct frame_out o = {d->out, r, json};
	if (r) {
		int truncated;
		return ct_report_frames(r, e->stack, json ? put_json_frame : put_text_frame, &o, &truncated);
	}
	struct ct_frame f = {
	    .function = s->p->function, .file = s->p->file, .line = s->p->file ? s->p->line : 0};
	struct ct_report plain = {.full_names = 0};
	o.r = &plain;
	return json ? put_json_frame(&o, &f, 0) : put_text_frame(&o, &f, 0);
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

/* v, or `unknown` when it is not known. */
static void put_known(FILE *out, int known, uint64_t v, const char *unknown)
{
	if (known)
		fprintf(out, "%" PRIu64, v);
	else
		fputs(unknown, out);
}

/* A site's figure f as put_change puts it, or "? (not listed in BASE -> 576)" when unknown. */
static void put_fig_change(FILE *out, const struct site *s, enum fig f, const char *unit)
{
	int k0, k1;
	uint64_t a = fig(s, 0, f, &k0), b = fig(s, 1, f, &k1);
	if (k0 && k1) {
		put_change(out, a, b, unit);
		return;
	}
	fputs("? (", out);
	put_known(out, k0, a, "not listed");
	fputs(" -> ", out);
	put_known(out, k1, b, "not listed");
	fputs(")", out);
}

static void put_trace(FILE *out, const char *label, const struct ct_baseline *b)
{
	const struct ct_totals *t = ct_baseline_totals(b);
	fprintf(out,
	        "%s %s: %" PRIu64 " allocations, %" PRIu64 " bytes allocated, peak heap %" PRIu64
	        " bytes, leaked %" PRIu64 " bytes in %" PRIu64 " %s\n",
	        label, ct_baseline_path(b), t->allocations, t->bytes_allocated, t->peak, t->current,
	        t->live_allocations, plural(t->live_allocations));
}

static void put_header(const struct diff *d)
{
	const struct ct_totals *b = ct_baseline_totals(d->base), *n = ct_baseline_totals(d->new);
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

static int put_text_site(const struct diff *d, const struct site *s)
{
	FILE *out = d->out;
	int k;
	uint64_t lb0 = fig(s, 0, F_LEAKED_BYTES, &k), lb1 = fig(s, 1, F_LEAKED_BYTES, &k);
	uint64_t la0 = fig(s, 0, F_LEAKED_BLOCKS, &k), la1 = fig(s, 1, F_LEAKED_BLOCKS, &k);
	fprintf(
	    out,
	    "\n%s%" PRIu64 " bytes leaked (%" PRIu64 " -> %" PRIu64 ", %" PRIu64 " -> %" PRIu64 " %s), %s\n",
	    sign(lb0, lb1), magnitude(lb0, lb1), lb0, lb1, la0, la1, plural(la1), status_names[s->status]);
	fputs("  peak ", out);
	put_fig_change(out, s, F_PEAK_BYTES, " bytes");
	fputs(", allocations ", out);
	put_fig_change(out, s, F_ALLOCATIONS, "");
	fputs(", allocated ", out);
	put_fig_change(out, s, F_BYTES_ALLOCATED, " bytes");
	fputc('\n', out);
	return put_frames(d, s, 0);
}

static int put_text(const struct diff *d)
{
	int rc = 0;
	put_header(d);
	for (size_t i = 0; i < d->n && !rc; i++)
		if (d->v[i].status != ST_SAME)
			rc = put_text_site(d, &d->v[i]);
	return rc;
}

/* ---- JSON ---- */

/* A signed change as a JSON integer, exact whatever the figures. */
static void put_json_change(FILE *out, uint64_t from, uint64_t to)
{
	fprintf(out, "%s%" PRIu64, to < from ? "-" : "", magnitude(from, to));
}

static void put_json_totals(const struct diff *d, const struct ct_baseline *b)
{
	fputs("{\"trace\": ", d->out);
	ct_json_cstring(d->out, ct_baseline_path(b));
	for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++)
		fprintf(d->out, ", \"%s\": %" PRIu64, totals[i].json, total(b, i));
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

static int put_json_site(const struct diff *d, const struct site *s)
{
	FILE *out = d->out;
	fprintf(out, "\n  {\"status\": \"%s\"", status_names[s->status]);
	for (enum fig f = 0; f < NFIGS; f++) {
		int k0, k1;
		uint64_t from = fig(s, 0, f, &k0), to = fig(s, 1, f, &k1);
		fprintf(out, ", \"%s\": {\"base\": ", fig_json[f]);
		put_known(out, k0, from, "null");
		fputs(", \"new\": ", out);
		put_known(out, k1, to, "null");
		fputs(", \"change\": ", out);
		if (k0 && k1)
			put_json_change(out, from, to);
		else
			fputs("null", out);
		fputs("}", out);
	}
	fputs(", \"site\": {\"function\": ", out);
	ct_json_cstring(out, s->p->function);
	fputs(", \"file\": ", out);
	ct_json_cstring(out, s->p->file);
	fprintf(out, ", \"line\": %u}, \"frames\": [", s->p->line);
	int rc = put_frames(d, s, 1);
	fputs("]}", out);
	return rc;
}

static int put_json(const struct diff *d)
{
	FILE *out = d->out;
	int rc = 0;
	fputs("{\"base\": ", out);
	put_json_totals(d, d->base);
	fputs(",\n\"new\": ", out);
	put_json_totals(d, d->new);
	fputs(",\n\"change\": ", out);
	put_json_change_totals(d);
	fputs(",\n\"sites\": [", out);
	for (size_t i = 0; i < d->n && !rc; i++) {
		fputs(i ? "," : "", out);
		rc = put_json_site(d, &d->v[i]);
	}
	fputs(d->n ? "\n]}\n" : "]}\n", out);
	return rc;
}

int ct_write_diff(FILE *out, const struct ct_baseline *base, const struct ct_baseline *new, int json)
{
	struct ct_site_pair *pairs;
	long n = ct_baseline_pairs(base, new, &pairs);
	if (n < 0)
		return (int)n;
	struct diff d = {.out = out, .base = base, .new = new};
	d.v = malloc(((size_t)n + 1) * sizeof(*d.v));
	if (!d.v) {
		free(pairs);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		struct site *s = &d.v[d.n];
		*s = (struct site){.p = &pairs[i], .order = (uint32_t)i};
		s->status = site_status(s);
		d.counts[s->status]++;
		d.n++;
	}
	qsort(d.v, d.n, sizeof(*d.v), by_change);
	int rc = json ? put_json(&d) : put_text(&d);
	free(d.v);
	free(pairs);
	return rc;
}
