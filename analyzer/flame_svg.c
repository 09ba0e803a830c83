/* SPDX-License-Identifier: MIT */
/* The SVG flame graph: flamegraph.pl's layout (root at the bottom; at the top with --icicle, and a
 * button turns it over), each frame as wide as its subtree's cost, coloured for memory or, with --diff,
 * by growth. Its script zooms, searches (the matched share, as flamegraph.pl) and shows tooltips. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "markup.h"
#include "shortname.h"

/* Pixels: frame height, font size, side margin, the title band above the frames, the details line below. */
enum { FRAME_H = 16, FONT = 12, PAD = 10, TOP = 40, BOTTOM = 30 };
/* flamegraph.pl's average glyph width as a share of the font size: how many characters fit a frame. */
#define GLYPH_W (FONT * 0.59)

static const char *const cost_words[CT_NCOSTS] = {"leaked bytes",    "bytes at the peak",
                                                  "allocations",     "temporary allocations",
                                                  "bytes allocated", "bytes lost (definitely or indirectly)"};
/* data-* attribute of each figure, for the script and the tests. */
static const char *const fig_attrs[CT_NFIGS] = {"leaked",      "leaked-allocs", "peak",
                                                "peak-allocs", "allocations",   "allocated",
                                                "temporary",   "lost",          "lost-allocs"};

struct layout {
	const struct ct_tree *t;
	const struct ct_flame_opts *o;
	enum ct_fig fig;
	uint64_t *value; /* width in cost units: the subtree's sum of self values */
	uint64_t *self;  /* the node's own cost; with --diff the larger of base and new, so gone sites show */
	uint64_t *x;     /* left edge in cost units from the root's */
	double width, scale, min_width; /* scale: pixels per cost unit */
	uint64_t min_value;             /* narrower frames than this (cost units) are not drawn */
	size_t hidden;                  /* frames with a cost left out for being too narrow */
	unsigned depth;                 /* of the deepest drawn frame */
	uint64_t max_delta;             /* --diff: the largest |new - base| of a drawn frame */
	const char *id;
};

static int64_t delta(const struct layout *L, uint32_t i)
{
	return (int64_t)(ct_tree_total(L->t, i, 1)[L->fig] - ct_tree_total(L->t, i, 0)[L->fig]);
}

static int drawn(const struct layout *L, uint32_t i)
{
	return L->value[i] && L->value[i] >= L->min_value;
}

static uint64_t self_value(const struct layout *L, size_t i)
{
	uint64_t base = ct_tree_self(L->t, i, 0)[L->fig], new = ct_tree_self(L->t, i, 1)[L->fig];
	return L->o->diff && new > base ? new : base;
}

/* Widths sum up the subtree (children come after their parents in t->nodes); children are placed
 * left to right from their parent's left edge, in tree order, like flamegraph.pl. */
static void place(struct layout *L)
{
	const struct ct_tree *t = L->t;
	for (size_t i = 0; i < t->n; i++)
		L->value[i] = L->self[i] = self_value(L, i);
	for (size_t i = t->n; i-- > 1;)
		L->value[t->nodes[i].parent] += L->value[i];
	L->scale = L->value[0] ? (L->width - 2 * PAD) / (double)L->value[0] : 0;
	L->min_value = L->scale > 0 ? (uint64_t)(L->min_width / L->scale) : 1;
	if (!L->min_value || (double)L->min_value * L->scale < L->min_width)
		L->min_value++;
	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t x = L->x[i];
		for (uint32_t c = ct_tree_first(t, i); c; c = ct_tree_next(t, c))
			L->x[c] = x, x += L->value[c];
	}
}

/* The deepest drawn frame and the largest change drawn, once min_value is final. */
static void measure(struct layout *L)
{
	for (uint32_t i = 0; i < L->t->n; i++) {
		if (!drawn(L, i))
			continue;
		uint64_t d = (uint64_t)llabs(delta(L, i));
		if (L->t->nodes[i].depth > L->depth)
			L->depth = L->t->nodes[i].depth;
		if (d > L->max_delta)
			L->max_delta = d;
	}
}

static int by_value_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x < y) - (x > y);
}

/* Raises min_value until at most max frames are drawn (ties at the cut go too), and counts the
 * frames with a cost that are left out. */
static int cap_frames(struct layout *L, size_t max)
{
	size_t n = 0;
	uint64_t *v = malloc(L->t->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < L->t->n; i++)
		if (L->value[i])
			v[n++] = L->value[i];
	if (n > max && max) {
		qsort(v, n, sizeof(*v), by_value_desc);
		uint64_t cut = v[max] + 1;
		if (cut > L->min_value)
			L->min_value = cut;
	}
	for (size_t i = 0; i < n; i++)
		L->hidden += v[i] < L->min_value;
	free(v);
	return 0;
}

static int layout_init(struct layout *L, const struct ct_tree *t, const struct ct_flame_opts *o)
{
	*L = (struct layout){.t = t, .o = o, .fig = ct_cost_fig(o->cost), .id = o->id ? o->id : "fg"};
	L->width = o->width > 2 * PAD ? o->width : 1200;
	L->min_width = o->min_width > 0 ? o->min_width : 0.1;
	L->value = calloc(t->n, sizeof(*L->value));
	L->self = calloc(t->n, sizeof(*L->self));
	L->x = calloc(t->n, sizeof(*L->x));
	if (!L->value || !L->self || !L->x)
		return -ENOMEM;
	place(L);
	int rc = cap_frames(L, o->max_frames ? o->max_frames : SIZE_MAX);
	measure(L);
	return rc;
}

static void layout_destroy(struct layout *L)
{
	free(L->value);
	free(L->self);
	free(L->x);
}

static double frame_y(const struct layout *L, unsigned depth)
{
	return TOP + (double)FRAME_H * (L->o->icicle ? depth : L->depth - depth);
}

static void put_plural(FILE *out, uint64_t n, const char *what)
{
	fprintf(out, "%" PRIu64 " %s%s", n, what, n == 1 ? "" : "s");
}

static void put_bytes(FILE *out, uint64_t n)
{
	char buf[64];
	fputs(ct_fmt_bytes(buf, sizeof(buf), n), out);
}

/* A node's figures in words, one line each, every line starting with prefix. */
static void put_figures(FILE *out, const uint64_t *fig, const char *prefix)
{
	fprintf(out, "\n%s", prefix);
	put_bytes(out, fig[CT_FIG_LEAKED_BYTES]);
	fputs(" leaked in ", out);
	put_plural(out, fig[CT_FIG_LEAKED_ALLOCATIONS], "allocation");
	fprintf(out, "\n%s", prefix);
	put_bytes(out, fig[CT_FIG_PEAK_BYTES]);
	fputs(" at the peak in ", out);
	put_plural(out, fig[CT_FIG_PEAK_ALLOCATIONS], "allocation");
	fprintf(out, "\n%s", prefix);
	put_plural(out, fig[CT_FIG_ALLOCATIONS], "allocation");
	fputs(" of ", out);
	put_bytes(out, fig[CT_FIG_BYTES_ALLOCATED]);
	fputs(", ", out);
	put_plural(out, fig[CT_FIG_TEMPORARY], "temporary allocation");
	if (!fig[CT_FIG_LOST_ALLOCATIONS])
		return;
	fprintf(out, "\n%s", prefix);
	put_bytes(out, fig[CT_FIG_LOST_BYTES]);
	fputs(" lost (definitely or indirectly) in ", out);
	put_plural(out, fig[CT_FIG_LOST_ALLOCATIONS], "allocation");
}

static void put_change(FILE *out, const struct layout *L, uint32_t i)
{
	uint64_t base = ct_tree_total(L->t, i, 0)[L->fig], new = ct_tree_total(L->t, i, 1)[L->fig];
	fprintf(out, "\nchange in %s: %+" PRId64, cost_words[L->o->cost], delta(L, i));
	if (!base != !new)
		fputs(base ? " (gone)" : " (new)", out);
}

/* The tooltip: the name alone on the first line (the script reads it back), then where, then figures. */
static void put_title(FILE *out, const struct layout *L, uint32_t i)
{
	const struct ct_tree_node *n = &L->t->nodes[i];
	const struct ct_frame *f = &n->frame;
	ct_xml_text(out, f->function);
	if (f->file) {
		fputs("\nat ", out);
		ct_xml_text(out, f->file);
		if (n->several_lines)
			fputs(" (several lines)", out); /* merged by function */
		else
			fprintf(out, ":%u", f->line);
	}
	if (f->inlined)
		fputs(" (inlined)", out);
	if (f->module) {
		fputs("\nin ", out);
		ct_xml_text(out, f->module);
	}
	if (!L->o->diff) {
		put_figures(out, ct_tree_total(L->t, i, 0), "");
		fprintf(out, "\n%.2f%% of the %s", 100.0 * (double)L->value[i] / (double)L->value[0],
		        cost_words[L->o->cost]);
		return;
	}
	put_figures(out, ct_tree_total(L->t, i, 0), "base: ");
	put_figures(out, ct_tree_total(L->t, i, 1), "new: ");
	put_change(out, L, i);
}

/* A box's label names the function as a person reads it: a C++ name (demangled with its parameter
 * list) in its short form, template arguments as <…>, no parameters nor return type (shortname.h);
 * the title, on hover, keeps the whole name. C and Rust names have no parameter list. Returns full,
 * or the short name in buf. */
static const char *label_of(const struct layout *L, const char *full, char *buf, size_t len)
{
	if (L->o->full_names || !strchr(full, '('))
		return full;
	return ct_short_name(full, buf, len);
}

/* The name, cut with ".." like flamegraph.pl to the characters that fit w pixels (none under 3). */
static void put_label(FILE *out, const char *name, double w)
{
	char buf[512];
	double fit = (w - 3) / GLYPH_W;
	if (fit < 3)
		return;
	size_t chars = fit > sizeof(buf) - 3 ? sizeof(buf) - 3 : (size_t)fit, cut = chars - 2;
	if (strlen(name) <= chars) {
		ct_xml_text(out, name);
		return;
	}
	while (cut && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--; /* not inside a UTF-8 character */
	memcpy(buf, name, cut);
	strcpy(buf + cut, "..");
	ct_xml_text(out, buf);
}

/* flamegraph.pl's "mem" palette (greens to blues), chosen by the function name so that a function
 * keeps its colour across graphs; inlined frames lighter. --diff: red grew, blue shrank. */
static void colour(const struct layout *L, uint32_t i, char *buf, size_t len)
{
	const struct ct_tree_node *n = &L->t->nodes[i];
	if (L->o->diff) {
		int64_t d = delta(L, i);
		int c = L->max_delta ? 255 - (int)(190.0 * (double)llabs(d) / (double)L->max_delta) : 255;
		if (!d)
			snprintf(buf, len, "rgb(230,230,230)");
		else
			snprintf(buf, len, d > 0 ? "rgb(255,%d,%d)" : "rgb(%d,%d,255)", c, c);
		return;
	}
	if (!strcmp(n->frame.function, CT_TREE_TRUNCATED)) {
		snprintf(buf, len, "rgb(200,200,200)");
		return;
	}
	uint64_t h = ct_mix_str(CT_MIX_SEED, n->frame.function);
	double v1 = (double)(h & 0xffff) / 0xffff, v2 = (double)(h >> 16 & 0xffff) / 0xffff;
	int g = 190 + (int)(50 * v2), b = (int)(210 * v1), r = 0;
	if (n->frame.inlined)
		r = 110, g = (g + 255) / 2, b = (b + 255) / 2;
	snprintf(buf, len, "rgb(%d,%d,%d)", r, g, b);
}

static void put_frame(FILE *out, const struct layout *L, uint32_t i)
{
	const struct ct_tree_node *n = &L->t->nodes[i];
	double x = PAD + (double)L->x[i] * L->scale, w = (double)L->value[i] * L->scale;
	double y = frame_y(L, n->depth);
	char fill[32], shortened[512];
	const char *label = label_of(L, n->frame.function, shortened, sizeof(shortened));
	colour(L, i, fill, sizeof(fill));
	fprintf(out, "<g class=\"f%s\" data-id=\"%" PRIu32 "\"", n->frame.inlined ? " inlined" : "", i);
	if (label != n->frame.function && strcmp(label, n->frame.function)) {
		fputs(" data-label=\"", out); /* the script labels zoomed frames with it */
		ct_xml_text(out, label);
		fputc('"', out);
	}
	if (i)
		fprintf(out, " data-parent=\"%" PRIu32 "\"", n->parent);
	fprintf(out, " data-depth=\"%u\" data-cost=\"%" PRIu64 "\" data-self=\"%" PRIu64 "\"", n->depth,
	        L->value[i], L->self[i]);
	/* The title words every figure; a standalone graph also has them for scripts, an embedded one
	 * saves the bytes (the HTML report holds five graphs). */
	for (int f = 0; f < CT_NFIGS && !L->o->embedded; f++)
		fprintf(out, " data-%s=\"%" PRIu64 "\"", fig_attrs[f], ct_tree_total(L->t, i, 0)[f]);
	if (L->o->diff)
		fprintf(out, " data-base=\"%" PRIu64 "\" data-new=\"%" PRIu64 "\" data-delta=\"%" PRId64 "\"",
		        ct_tree_total(L->t, i, 0)[L->fig], ct_tree_total(L->t, i, 1)[L->fig], delta(L, i));
	fputs("><title>", out);
	put_title(out, L, i);
	fprintf(out,
	        "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>", x,
	        y, w, FRAME_H - 1, fill);
	fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + FONT);
	put_label(out, label, w);
	fputs("</text></g>\n", out);
}

static void put_heading(FILE *out, const struct layout *L)
{
	if (L->o->title) {
		ct_xml_text(out, L->o->title);
		return;
	}
	fprintf(out, "%s: %s", L->o->diff ? "Differential flame graph" : "Flame graph",
	        cost_words[L->o->cost]);
	if (L->t->reversed) /* the orientation is the button's: the words hold either way */
		fputs(", reversed (rooted at the allocation sites)", out);
	if (L->hidden)
		fprintf(out, " (%zu narrow frames not drawn)", L->hidden);
	if (L->o->diff)
		fputs(" (red: grew, blue: shrank)", out);
}

/* CSS rules all start with svg.ct-flame: an embedded graph's style applies to its whole HTML page. */
static const char style[] =
    "svg.ct-flame text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
    "svg.ct-flame .title{font-size:17px}\n"
    "svg.ct-flame .f,svg.ct-flame .search,svg.ct-flame .reset,svg.ct-flame .orient{cursor:pointer}\n"
    "svg.ct-flame .f:hover rect{stroke:#000;stroke-width:0.5}\n"
    "svg.ct-flame .f.inlined rect{stroke:#335;stroke-width:0.8;stroke-dasharray:3,2}\n";

static void put_header(FILE *out, const struct layout *L)
{
	double h = TOP + (double)FRAME_H * (L->depth + 1) + BOTTOM;
	if (!L->o->embedded)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(
	    out,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"ct-flame\" id=\"%s\" "
	    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" data-cost-name=\"%s\" data-unit=\"%s\" "
	    "data-reversed=\"%d\" data-diff=\"%d\" data-pad=\"%d\" data-inner=\"%.2f\" "
	    "data-glyph=\"%.2f\" data-icicle=\"%d\" data-top=\"%d\" data-frame-h=\"%d\" data-depth=\"%u\">\n",
	    L->id, L->width, h, L->width, h, ct_cost_name(L->o->cost),
	    ct_cost_is_bytes(L->o->cost) ? "bytes" : "allocations", L->t->reversed, !!L->o->diff, PAD,
	    L->width - 2 * PAD, GLYPH_W, !!L->o->icicle, TOP, FRAME_H, L->depth);
	fprintf(out, "<style>\n%s</style>\n", style);
	fprintf(out,
	        "<defs><linearGradient id=\"%s-bg\" x1=\"0\" x2=\"0\" y1=\"0\" y2=\"1\">"
	        "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#e0e0f0\" offset=\"95%%\"/>"
	        "</linearGradient></defs>\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"url(#%s-bg)\"/>\n",
	        L->id, L->id);
	fprintf(out, "<text class=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">", L->width / 2);
	put_heading(out, L);
	fprintf(out,
	        "</text>\n<text class=\"reset\" x=\"%d\" y=\"24\" style=\"display:none\">Reset zoom</text>\n"
	        "<text class=\"search\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
	        "<text class=\"orient\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">%s</text>\n"
	        "<text class=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n"
	        "<text class=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n",
	        PAD, L->width - PAD, L->width - PAD - 100, L->o->icicle ? "Flame" : "Icicle", PAD, h - 10,
	        L->width - PAD, h - 10);
	if (!L->value[0])
		fprintf(out,
		        "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">Nothing to draw: no %s</text>\n",
		        L->width / 2, TOP + FONT, cost_words[L->o->cost]);
}

static void put_script(FILE *out);

int ct_write_flamegraph(FILE *out, const struct ct_tree *t, const struct ct_flame_opts *o)
{
	struct layout L;
	int rc = layout_init(&L, t, o);
	if (rc) {
		layout_destroy(&L);
		return rc;
	}
	put_header(out, &L);
	fputs("<g class=\"frames\">\n", out);
	/* Index order puts every parent before its children, as the script expects. */
	for (uint32_t i = 0; i < t->n; i++)
		if (drawn(&L, i))
			put_frame(out, &L, i);
	fputs("</g>\n", out);
	if (!o->embedded)
		put_script(out);
	fputs("</svg>\n", out);
	layout_destroy(&L);
	return ferror(out) ? -EIO : 0;
}

/* Written for this report, no library: zoom (click a frame; click the root or "Reset zoom" to undo),
 * search (a regular expression against full and short names; matches in magenta, their share of the
 * total below, as flamegraph.pl; "Reset search" clears), a button turning the graph over (flame:
 * roots at the bottom, icicle: at the top) and the hovered frame's tooltip on the details line.
 * Frames come parents first, linked by data-parent. A standalone graph takes flamegraph.pl's URL
 * parameter s (graph.svg?s=parse_ searches on load) and icicle=1 or 0. In pieces: C compilers need
 * support no string longer than 4095 bytes. */
static const char *const script[] = {
    "(function () {\n"
    "\"use strict\";\n"
    "function lines(g) { return g.querySelector(\"title\").textContent.split(\"\\n\"); }\n"
    "function init(svg) {\n"
    "\tif (svg.getAttribute(\"data-live\")) return;\n"
    "\tsvg.setAttribute(\"data-live\", \"1\");\n"
    "\tvar num = function (a) { return +svg.getAttribute(\"data-\" + a); };\n"
    "\tvar pad = num(\"pad\"), inner = num(\"inner\"), glyph = num(\"glyph\");\n"
    "\tvar top = num(\"top\"), fh = num(\"frame-h\"), maxd = num(\"depth\");\n"
    "\tvar unit = \" \" + svg.getAttribute(\"data-unit\"), term = \"\", all = [], byId = {};\n"
    "\tvar q = function (c) { return svg.querySelector(\".\" + c); };\n"
    "\tvar details = q(\"details\"), matched = q(\"matched\"), reset = q(\"reset\");\n"
    "\tvar finder = q(\"search\"), orient = q(\"orient\");\n"
    "\tvar gs = svg.querySelectorAll(\"g.f\");\n"
    "\tfor (var i = 0; i < gs.length; i++) {\n"
    "\t\tvar g = gs[i], r = g.querySelector(\"rect\"), t = g.querySelector(\"text\");\n"
    "\t\tvar f = {g: g, r: r, t: t, id: g.getAttribute(\"data-id\"),\n"
    "\t\t\tup: g.getAttribute(\"data-parent\"), cost: +g.getAttribute(\"data-cost\"),\n"
    "\t\t\tdepth: +g.getAttribute(\"data-depth\"), dy: +t.getAttribute(\"y\") - +r.getAttribute(\"y\"),\n"
    "\t\t\tx: +r.getAttribute(\"x\"), w: +r.getAttribute(\"width\"), fill: r.getAttribute(\"fill\"),\n"
    "\t\t\tname: lines(g)[0]};\n"
    "\t\tf.label = g.getAttribute(\"data-label\") || f.name;\n"
    "\t\tall.push(f);\n"
    "\t\tbyId[f.id] = f;\n"
    "\t}\n"
    "\tif (!all.length) return;\n"
    "\tvar root = all[0];\n"
    "\tfunction show(f, x, w, on) {\n"
    "\t\tf.g.style.display = on ? \"\" : \"none\";\n"
    "\t\tif (!on) return;\n"
    "\t\tf.r.setAttribute(\"x\", x.toFixed(2));\n"
    "\t\tf.r.setAttribute(\"width\", w.toFixed(2));\n"
    "\t\tf.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
    "\t\tvar n = Math.floor((w - 3) / glyph);\n"
    "\t\tf.t.textContent = n < 3 ? \"\" : f.label.length <= n ? f.label : f.label.slice(0, n - 2) + \"..\";\n"
    "\t}\n",
    "\tfunction zoom(z) {\n"
    "\t\tvar below = {}, chain = {}, k = inner / z.w;\n"
    "\t\tfor (var a = z; a; a = byId[a.up]) chain[a.id] = true;\n"
    "\t\tall.forEach(function (f) {\n"
    "\t\t\tbelow[f.id] = f === z || below[f.up] === true;\n"
    "\t\t\tif (below[f.id]) show(f, pad + (f.x - z.x) * k, f.w * k, true);\n"
    "\t\t\telse show(f, pad, inner, chain[f.id]);\n"
    "\t\t});\n"
    "\t\treset.style.display = z === root ? \"none\" : \"\";\n"
    "\t}\n"
    /* A frame inside a matched one is not counted again: the share is of the total, at most 100%. */
    "\tfunction search(s) {\n"
    "\t\tvar re = null, cover = {}, sum = 0;\n"
    "\t\tterm = s;\n"
    "\t\ttry { re = new RegExp(s); } catch (e) { re = null; }\n"
    "\t\tall.forEach(function (f) {\n"
    "\t\t\tvar test = function (n) { return re ? re.test(n) : n.indexOf(s) >= 0; };\n"
    "\t\t\tvar hit = s !== \"\" && f !== root && (test(f.name) || test(f.label));\n"
    "\t\t\tf.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : f.fill);\n"
    "\t\t\tf.g.setAttribute(\"data-match\", hit ? \"1\" : \"0\");\n"
    "\t\t\tif (hit && !cover[f.up]) sum += f.cost;\n"
    "\t\t\tcover[f.id] = hit || cover[f.up] === true;\n"
    "\t\t});\n"
    "\t\tvar share = root.cost ? 100 * sum / root.cost : 0;\n"
    "\t\tmatched.textContent = s === \"\" ? \" \" : \"Matched: \" + share.toFixed(1) + \"% (\" + sum + unit "
    "+ \")\";\n"
    "\t\tfinder.textContent = s === \"\" ? \"Search\" : \"Reset search\";\n"
    "\t}\n"
    "\tfunction turn(icicle) {\n"
    "\t\tall.forEach(function (f) {\n"
    "\t\t\tvar y = top + fh * (icicle ? f.depth : maxd - f.depth);\n"
    "\t\t\tf.r.setAttribute(\"y\", y);\n"
    "\t\t\tf.t.setAttribute(\"y\", y + f.dy);\n"
    "\t\t});\n"
    "\t\tsvg.setAttribute(\"data-icicle\", icicle ? \"1\" : \"0\");\n"
    "\t\torient.textContent = icicle ? \"Flame\" : \"Icicle\";\n"
    "\t}\n",
    "\tfunction frame(e) {\n"
    "\t\tvar g = e.target.closest ? e.target.closest(\"g.f\") : null;\n"
    "\t\treturn g ? byId[g.getAttribute(\"data-id\")] : null;\n"
    "\t}\n"
    "\tsvg.addEventListener(\"click\", function (e) {\n"
    "\t\tvar f = frame(e), c = e.target.getAttribute(\"class\"), s;\n"
    "\t\tif (f) zoom(f);\n"
    "\t\telse if (c === \"reset\") zoom(root);\n"
    "\t\telse if (c === \"orient\") turn(svg.getAttribute(\"data-icicle\") !== \"1\");\n"
    "\t\telse if (c === \"search\" && term !== \"\") search(\"\");\n"
    "\t\telse if (c === \"search\" && (s = window.prompt(\"Frames to highlight (regular expression):\", "
    "term)) !== null)\n"
    "\t\t\tsearch(s);\n"
    "\t});\n"
    "\tsvg.addEventListener(\"mouseover\", function (e) {\n"
    "\t\tvar f = frame(e);\n"
    "\t\tif (f) details.textContent = lines(f.g).join(\"  |  \");\n"
    "\t});\n"
    "\tsvg.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
    /* Only a graph that is the whole document reads the address: a page's graphs are the page's. */
    "\tif (document.documentElement !== svg || !window.URLSearchParams) return;\n"
    "\tvar p = new URLSearchParams(window.location.search);\n"
    "\tif (p.has(\"icicle\")) turn(p.get(\"icicle\") === \"1\");\n"
    "\tif (p.get(\"s\")) search(p.get(\"s\"));\n"
    "}\n"
    "function start() {\n"
    "\tvar s = document.querySelectorAll(\"svg.ct-flame\");\n"
    "\tfor (var i = 0; i < s.length; i++) init(s[i]);\n"
    "}\n"
    "if (document.readyState === \"loading\") document.addEventListener(\"DOMContentLoaded\", start);\n"
    "else start();\n"
    "})();\n",
};

static void put_script(FILE *out)
{
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++)
		fputs(script[i], out);
	fputs("]]></script>\n", out);
}
