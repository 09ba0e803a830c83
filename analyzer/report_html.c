/* SPDX-License-Identifier: MIT */
/* The HTML report: one self-contained page (inline CSS, SVG and a small script, no URL to load) with the
 * text report's figures, heap and RSS over time, a flame graph per cost, the leaks and the symbol checks. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "export.h"
#include "markup.h"
#include "rules.h"

/* The chart, in SVG user units: plot area inside the margins. */
#define CHART_W 1200.0
#define CHART_H 320.0
#define CHART_LEFT 80.0
#define CHART_RIGHT 24.0
#define CHART_TOP 28.0
#define CHART_BOTTOM 44.0
/* More points than the chart is wide draw nothing more: longer series are merged, keeping maxima. */
#define CHART_MAX_POINTS 2000
/* Leaks listed with their backtraces: a few kilobytes each, so a program leaking from a million
 * places still gives a page a browser opens; the rest are summed up in one line. */
#define MAX_LEAKS 1000

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1260px;padding:0 16px 40px;"
    "color:#1d232a;background:#fff}\n"
    "h1{font-size:22px;margin:18px 0 2px}h2{font-size:18px;margin:26px 0 8px;border-bottom:1px solid #ddd}\n"
    "h3{font-size:15px;margin:12px 0 4px}code{font:13px ui-monospace,monospace}\n"
    ".meta{color:#555;margin:0}.meta code{background:#f3f3f3;padding:0 3px;margin-right:4px}\n"
    ".figures{display:grid;grid-template-columns:repeat(3,1fr);gap:6px}\n"
    ".fig{border:1px solid #e3e3e3;border-radius:4px;padding:4px 8px}\n"
    ".fig .label{color:#666;font-size:12px}.fig .value{font-weight:600}\n"
    "svg.chart{display:block;width:100%;max-width:1200px;height:auto}\n"
    ".chart text{font:12px system-ui,sans-serif;fill:#333}.chart .grid{stroke:#e6e6e6}\n"
    ".chart .axis{stroke:#888}.chart .heap{fill:#f5b97f;stroke:#d9661f;stroke-width:1.5}\n"
    ".chart .rss{fill:none;stroke:#2b6cb0;stroke-width:2}.chart .peak{stroke:#c0392b;stroke-dasharray:4 3}\n"
    ".chart .peak-dot{fill:#c0392b}.chart .peak-label{fill:#c0392b;font-weight:600}\n"
    ".tabs a{display:inline-block;padding:3px 10px;margin-right:4px;border:1px solid #ccc;border-radius:4px;"
    "color:#1d232a;text-decoration:none}.tabs a.on{background:#1d232a;color:#fff}\n"
    ".js .flame.off{display:none}.flame svg{max-width:100%;height:auto}\n"
    "details.leak{border:1px solid #e3e3e3;border-radius:4px;margin:6px 0;padding:4px 8px}\n"
    "details.leak summary{cursor:pointer;font-weight:600}\n"
    "details.err{border:1px solid #e3c4c4;border-left:4px solid #c0392b;border-radius:4px;margin:6px 0;"
    "padding:4px 8px}details.err summary{cursor:pointer;font-weight:600}\n"
    "ol.bt{margin:4px 0;padding-left:36px;font:13px ui-monospace,monospace}\n"
    "p.caller,p.callers{margin:4px 0 0 20px;font-size:13px}p.caller+ol.bt{padding-left:56px}\n"
    ".bt .addr,.bt .mod{color:#777}.bt .loc{color:#0b6e75}.bt .inl{color:#8a5a00}\n"
    "table.symbols{border-collapse:collapse}.symbols th,.symbols td{border:1px solid #ddd;padding:2px 8px;"
    "text-align:left}\n"
    ".symbols tr.bad td{background:#fff4e5}\n"
    "ul.notes{list-style:none;padding:0;margin:10px 0}.note{padding:3px 8px;margin:3px 0;border-radius:4px;"
    "background:#eef4fb}.note.warning{background:#fff4e5;border-left:4px solid #d9661f}\n";

/* Records uncaught errors on <html data-errors>, so a headless browser's DOM dump shows them. */
static const char error_script[] =
    "window.addEventListener('error',function(e){var d=document.documentElement;"
    "d.setAttribute('data-errors',(d.getAttribute('data-errors')||'')+(e.message||'error')+'\\n');});\n";

/* Shows one flame graph at a time (with JS off all are shown, one below the other), and writes the
 * page position of each drawing into data-box, where a DOM dump can read it. */
static const char page_script[] =
    "(function(){\n"
    "var d=document.documentElement;d.className+=' js';\n"
    "var tabs=document.querySelectorAll('#fg-tabs a'),panels=document.querySelectorAll('.flame');\n"
    "function show(c){\n"
    " for(var i=0;i<panels.length;i++)panels[i].classList.toggle('off',panels[i].dataset.cost!==c);\n"
    " for(var j=0;j<tabs.length;j++)tabs[j].classList.toggle('on',tabs[j].dataset.cost===c);\n"
    "}\n"
    "for(var i=0;i<tabs.length;i++)tabs[i].addEventListener('click',function(e){\n"
    " e.preventDefault();show(this.dataset.cost);});\n"
    "if(tabs.length)show(tabs[0].dataset.cost);\n"
    "var boxes=document.querySelectorAll('.box');\n"
    "for(var k=0;k<boxes.length;k++){var b=boxes[k].getBoundingClientRect();\n"
    " boxes[k].setAttribute('data-box',[b.left+scrollX,b.top+scrollY,b.width,b.height].map(Math.round).join('"
    " '));}\n"
    "d.setAttribute('data-ready','1');\n"
    "})();\n";

static const char *const cost_titles[CT_NCOSTS] = {
    [CT_COST_LEAKED] = "Leaked bytes",       [CT_COST_PEAK] = "Bytes at the peak",
    [CT_COST_ALLOCATIONS] = "Allocations",   [CT_COST_TEMPORARY] = "Temporary allocations",
    [CT_COST_ALLOCATED] = "Bytes allocated",
};

static double seconds(uint64_t us)
{
	return (double)us / 1e6;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- header and summary ---- */

static void put_head(FILE *out, const struct ct_report *r)
{
	const struct ct_process *p = &r->m->proc;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ctrack: ",
	      out);
	ct_xml_text(out, p->seen && p->argc ? ct_basename(p->argv[0].data) : ct_basename(r->path));
	fprintf(out, "</title>\n<style>\n%s</style>\n<script>\n%s</script>\n</head>\n<body>\n", style,
	        error_script);
	fputs("<h1>ctrack heap report</h1>\n<p class=\"meta\">trace <code id=\"trace\">", out);
	ct_xml_text(out, r->path);
	if (r->m->damaged)
		fprintf(out, "</code> (damaged near byte %" PRIu64 ": read up to there)", r->m->damaged_at);
	else
		fprintf(out, "</code>%s", r->m->complete ? "" : " (truncated)");
	if (p->seen) {
		/* One <code> per argument: unambiguous without shell quoting. */
		fprintf(out, ", pid %" PRIu64 ", command <span id=\"command\">", p->pid);
		for (size_t i = 0; i < p->argc; i++) {
			fputs("<code>", out);
			ct_xml_text(out, p->argv[i].data);
			fputs("</code>", out);
		}
		fputs("</span>", out);
	}
	fputs("</p>\n<p class=\"meta\">", out);
	if (r->m->ninvalid)
		fputs("<a href=\"#invalid-frees\">invalid frees</a> · ", out);
	if (r->m->crashed)
		fputs("<a href=\"#fatal-signal\">fatal signal</a> · ", out);
	fputs("<a href=\"#chart-section\">memory over time</a> · "
	      "<a href=\"#flames\">flame graphs</a> · <a href=\"#leaks\">leaks</a> · "
	      "<a href=\"#symbols\">symbols</a></p>\n",
	      out);
}

/* The shim's notes (a dropped event, a write error, a clamped setting), above the figures they
 * qualify; nothing when there are none. */
static void put_notes(FILE *out, const struct ct_model *m)
{
	if (!m->nnotes)
		return;
	fputs("<ul class=\"notes\" id=\"notes\">\n", out);
	for (size_t i = 0; i < m->nnotes; i++) {
		const struct ct_note *n = &m->notes[i];
		fprintf(out, "<li class=\"note %s\" data-count=\"%" PRIu64 "\"><b>%s:</b> ",
		        n->warning ? "warning" : "info", n->count, n->warning ? "warning" : "note");
		ct_xml_text(out, n->text.data);
		if (n->count > 1)
			fprintf(out, " (%" PRIu64 " times)", n->count);
		fputs("</li>\n", out);
	}
	fputs("</ul>\n", out);
}

/* One figure: its exact value in data-value, its text as the text report words it. */
static void put_figure(FILE *out, const char *id, const char *label, uint64_t value, const char *text)
{
	fprintf(out,
	        "<div class=\"fig\"><div class=\"label\">%s</div><div class=\"value\" id=\"%s\" "
	        "data-value=\"%" PRIu64 "\">",
	        label, id, value);
	ct_xml_text(out, text);
	fputs("</div></div>\n", out);
}

static void put_summary(FILE *out, const struct ct_report *r)
{
	const struct ct_totals *t = &r->m->t;
	uint64_t run = ct_model_runtime_us(r->m);
	char b[64], s[160];
	fputs("<h2 id=\"summary\">Summary</h2>\n<div class=\"figures\">\n", out);
	snprintf(s, sizeof(s), "%.3f s", seconds(run));
	put_figure(out, "runtime", "runtime", run, s);
	snprintf(s, sizeof(s), "%" PRIu64, t->allocations);
	if (run)
		snprintf(s, sizeof(s), "%" PRIu64 " (%.0f/s)", t->allocations,
		         (double)t->allocations / seconds(run));
	put_figure(out, "allocations", "calls to allocation functions", t->allocations, s);
	snprintf(s, sizeof(s), "%" PRIu64, t->frees);
	put_figure(out, "frees", "frees", t->frees, s);
	put_figure(out, "bytes-allocated", "bytes allocated", t->bytes_allocated,
	           ct_fmt_bytes(b, sizeof(b), t->bytes_allocated));
	snprintf(s, sizeof(s), "%" PRIu64 " (%.1f%% of allocations)", t->temporary,
	         percent(t->temporary, t->allocations));
	put_figure(out, "temporary", "temporary allocations", t->temporary, s);
	snprintf(s, sizeof(s), "%s at %.3f s", ct_fmt_bytes(b, sizeof(b), t->peak), seconds(t->peak_time_us));
	put_figure(out, "peak-heap", "peak heap", t->peak, s);
	put_figure(out, "peak-rss", "peak RSS", t->peak_rss,
	           t->peak_rss ? ct_fmt_bytes(b, sizeof(b), t->peak_rss) : "not sampled");
	put_figure(out, "leaked-bytes", "leaked", t->current, ct_fmt_bytes(b, sizeof(b), t->current));
	snprintf(s, sizeof(s), "%" PRIu64, t->live_allocations);
	put_figure(out, "leaked-allocations", "leaked allocations", t->live_allocations, s);
	if (r->m->classified) {
		static const char *const ids[CT_KINDS] = {"definitely-lost", "indirectly-lost",
		                                          "possibly-lost", "still-reachable", "unscanned"};
		uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
		ct_model_class_totals(r->m, blocks, bytes);
		for (int k = 0; k < CT_KINDS; k++) {
			if (k == CT_KIND_UNSCANNED && !blocks[k])
				continue;
			snprintf(s, sizeof(s), "%s in %" PRIu64 " block%s",
			         ct_fmt_bytes(b, sizeof(b), bytes[k]), blocks[k], blocks[k] == 1 ? "" : "s");
			put_figure(out, ids[k], ct_kind_label(k + 1), bytes[k], s);
		}
	}
	if (t->invalid_frees) {
		snprintf(s, sizeof(s), "%" PRIu64, t->invalid_frees);
		put_figure(out, "invalid-frees-count", "invalid frees", t->invalid_frees, s);
	}
	uint64_t before = ct_model_frees_before_tracing(r->m);
	if (before) {
		snprintf(s, sizeof(s), "%" PRIu64, before);
		put_figure(out, "unmatched-frees", "frees of blocks allocated before tracing", before, s);
	}
	fputs("</div>\n", out);
	if (r->nwrappers) {
		fprintf(
		    out,
		    "<p id=\"wrappers\" data-count=\"%zu\">allocator wrappers folded (their callers are the "
		    "sites; <code>--no-auto-fold</code> shows them):",
		    r->nwrappers);
		for (size_t i = 0; i < r->nwrappers; i++) {
			fputs(i ? ", <code title=\"" : " <code title=\"", out);
			ct_xml_text(out, r->wrappers[i].module);
			fputs("\">", out);
			ct_xml_text(out, r->wrappers[i].function);
			fputs("</code>", out);
		}
		fputs("</p>\n", out);
	}
}

/* ---- memory over time ---- */

struct scale {
	double max, step; /* in the axis unit */
	double unit;      /* bytes or microseconds per axis unit */
	const char *name;
};

/* A round tick step (1, 2 or 5 times a power of ten) giving about five ticks up to max. */
static double tick_step(double max)
{
	double raw = max / 5, mag = 1;
	if (raw <= 0)
		return 1;
	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw)
		mag /= 10;
	return mag * (raw <= mag * 2 ? 2 : raw <= mag * 5 ? 5 : 10);
}

static struct scale byte_scale(uint64_t max)
{
	static const char *const names[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	struct scale s = {.unit = 1, .name = names[0]};
	for (int i = 1; i < 5 && (double)max >= s.unit * 1024 * 2; i++)
		s.unit *= 1024, s.name = names[i];
	s.step = tick_step((double)max / s.unit);
	s.max = s.step * (double)((uint64_t)((double)max / s.unit / s.step) + 1);
	return s;
}

static struct scale time_scale(uint64_t max_us)
{
	struct scale s = {.unit = 1e6, .name = "s"};
	s.step = tick_step((double)max_us / s.unit);
	s.max = s.step * (double)((uint64_t)((double)max_us / s.unit / s.step) + 1);
	return s;
}

struct chart {
	struct scale x, y;
	const struct ct_model *m;
	size_t stride; /* series points merged into one drawn point */
};

static double chart_x(const struct chart *c, uint64_t us)
{
	return CHART_LEFT + (double)us / c->x.unit / c->x.max * (CHART_W - CHART_LEFT - CHART_RIGHT);
}

static double chart_y(const struct chart *c, uint64_t bytes)
{
	return CHART_H - CHART_BOTTOM -
	       (double)bytes / c->y.unit / c->y.max * (CHART_H - CHART_TOP - CHART_BOTTOM);
}

static size_t chart_points(const struct chart *c)
{
	return (c->m->nseries + c->stride - 1) / c->stride;
}

/* Drawn point i: the first merged point's time, the highest heap and RSS among them. */
static struct ct_point chart_point(const struct chart *c, size_t i)
{
	size_t first = i * c->stride, end = first + c->stride;
	struct ct_point p = c->m->series[first];
	for (size_t j = first + 1; j < end && j < c->m->nseries; j++) {
		if (c->m->series[j].heap > p.heap)
			p.heap = c->m->series[j].heap;
		if (c->m->series[j].rss > p.rss)
			p.rss = c->m->series[j].rss;
	}
	return p;
}

static void put_axes(FILE *out, const struct chart *c)
{
	double left = CHART_LEFT, right = CHART_W - CHART_RIGHT, bottom = CHART_H - CHART_BOTTOM;
	for (double v = 0; v <= c->y.max + c->y.step / 2; v += c->y.step) {
		double y = chart_y(c, (uint64_t)(v * c->y.unit));
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", left,
		        y, right, y);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", left - 6, y + 4,
		        v);
	}
	for (double v = 0; v <= c->x.max + c->x.step / 2; v += c->x.step) {
		double x = chart_x(c, (uint64_t)(v * c->x.unit));
		fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
		        bottom, x, bottom + 5);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, bottom + 18,
		        v);
	}
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", left, bottom,
	        right, bottom);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left,
	        CHART_TOP, left, bottom);
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (s)</text>\n",
	        (left + right) / 2, CHART_H - 6);
	fprintf(
	    out,
	    "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">%s</text>\n",
	    (CHART_TOP + bottom) / 2, (CHART_TOP + bottom) / 2, c->y.name);
}

/* The heap as an area down to the time axis. */
static void put_heap(FILE *out, const struct chart *c)
{
	size_t n = chart_points(c);
	fprintf(out, "<path class=\"heap\" d=\"M%.1f %.1f", chart_x(c, c->m->series[0].time_us),
	        chart_y(c, 0));
	for (size_t i = 0; i < n; i++) {
		struct ct_point p = chart_point(c, i);
		fprintf(out, "L%.1f %.1f", chart_x(c, p.time_us), chart_y(c, p.heap));
	}
	fprintf(out, "L%.1f %.1fZ\"><title>heap</title></path>\n", chart_x(c, chart_point(c, n - 1).time_us),
	        chart_y(c, 0));
}

/* RSS as a line, broken where no sample was taken (rss 0). */
static void put_rss(FILE *out, const struct chart *c)
{
	int pen = 0;
	fputs("<path class=\"rss\" d=\"", out);
	for (size_t i = 0, n = chart_points(c); i < n; i++) {
		struct ct_point p = chart_point(c, i);
		if (p.rss)
			fprintf(out, "%c%.1f %.1f", pen ? 'L' : 'M', chart_x(c, p.time_us),
			        chart_y(c, p.rss));
		pen = p.rss != 0;
	}
	fputs("\"><title>RSS</title></path>\n", out);
}

static void put_peak(FILE *out, const struct chart *c)
{
	const struct ct_totals *t = &c->m->t;
	double x = chart_x(c, t->peak_time_us), y = chart_y(c, t->peak);
	int right_half = x > CHART_W / 2;
	char b[64];
	fprintf(out, "<g id=\"chart-peak\" data-bytes=\"%" PRIu64 "\" data-time-us=\"%" PRIu64 "\">", t->peak,
	        t->peak_time_us);
	fprintf(out, "<line class=\"peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, CHART_TOP,
	        x, CHART_H - CHART_BOTTOM);
	fprintf(out, "<circle class=\"peak-dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"/>", x, y);
	fprintf(out,
	        "<text class=\"peak-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">peak %s at %.3f "
	        "s</text></g>\n",
	        x + (right_half ? -8 : 8), CHART_TOP - 10 > y - 10 ? CHART_TOP - 10 : y - 10,
	        right_half ? "end" : "start", ct_fmt_bytes(b, sizeof(b), t->peak), seconds(t->peak_time_us));
}

static void put_legend(FILE *out)
{
	double x = CHART_W - CHART_RIGHT - 150;
	fprintf(out,
	        "<rect class=\"heap\" x=\"%.1f\" y=\"6\" width=\"14\" height=\"10\"/>"
	        "<text x=\"%.1f\" y=\"15\">heap</text>",
	        x, x + 18);
	fprintf(out,
	        "<line class=\"rss\" x1=\"%.1f\" y1=\"11\" x2=\"%.1f\" y2=\"11\"/><text x=\"%.1f\" "
	        "y=\"15\">RSS</text>\n",
	        x + 70, x + 86, x + 90);
}

static void put_chart(FILE *out, const struct ct_model *m)
{
	uint64_t tmax = ct_model_runtime_us(m), ymax = m->t.peak > m->t.peak_rss ? m->t.peak : m->t.peak_rss;
	for (size_t i = 0; i < m->nseries; i++) {
		const struct ct_point *p = &m->series[i];
		tmax = p->time_us > tmax ? p->time_us : tmax;
		ymax = p->heap > ymax ? p->heap : ymax;
		ymax = p->rss > ymax ? p->rss : ymax;
	}
	struct chart c = {.x = time_scale(tmax > m->t.peak_time_us ? tmax : m->t.peak_time_us),
	                  .y = byte_scale(ymax),
	                  .m = m,
	                  .stride = m->nseries > CHART_MAX_POINTS
	                                ? (m->nseries + CHART_MAX_POINTS - 1) / CHART_MAX_POINTS
	                                : 1};
	fputs("<h2 id=\"chart-section\">Memory over time</h2>\n", out);
	if (!m->nseries) {
		fputs("<p id=\"chart\">No samples: the trace holds no allocation.</p>\n", out);
		return;
	}
	fprintf(out,
	        "<svg id=\"chart\" class=\"chart box\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %g "
	        "%g\" "
	        "width=\"%g\" height=\"%g\" role=\"img\" aria-label=\"heap and RSS over time\">\n",
	        CHART_W, CHART_H, CHART_W, CHART_H);
	put_axes(out, &c);
	put_heap(out, &c);
	put_rss(out, &c);
	put_peak(out, &c);
	put_legend(out);
	fputs("</svg>\n", out);
}

/* ---- flame graphs ---- */

static int put_flame(FILE *out, const struct ct_tree *t, enum ct_cost cost)
{
	char id[32];
	snprintf(id, sizeof(id), "fg-%s", ct_cost_name(cost));
	struct ct_flame_opts o = {
	    .cost = cost, .embedded = 1, .id = id, .width = 1200, .min_width = 1, .max_frames = 3000};
	fprintf(out, "<div class=\"flame box\" id=\"flame-%s\" data-cost=\"%s\">\n", ct_cost_name(cost),
	        ct_cost_name(cost));
	int rc = ct_write_flamegraph(out, t, &o);
	fputs("</div>\n", out);
	return rc;
}

static int put_flames(FILE *out, const struct ct_report *r)
{
	struct ct_tree t;
	int rc = ct_tree_build(&t, r, 0);
	if (rc)
		return rc;
	fputs("<h2 id=\"flames\">Flame graphs</h2>\n<p>A frame's width is its cost with everything it calls. "
	      "Click a frame to zoom in, hover for its figures; dashed frames were inlined.</p>\n<nav "
	      "class=\"tabs\" id=\"fg-tabs\">",
	      out);
	for (int c = 0; c < CT_NCOSTS; c++)
		fprintf(out, "<a href=\"#flame-%s\" data-cost=\"%s\">%s</a>", ct_cost_name(c),
		        ct_cost_name(c), cost_titles[c]);
	fputs("</nav>\n", out);
	for (int c = 0; c < CT_NCOSTS && !rc; c++)
		rc = put_flame(out, &t, (enum ct_cost)c);
	ct_tree_destroy(&t);
	if (!rc)
		fprintf(out, "<script>\n%s</script>\n", ct_flame_script);
	return rc;
}

/* ---- leaks ---- */

struct frame_list {
	FILE *out;
	const char *module; /* of the previous frame: a run of frames in one module names it once */
	unsigned from, to;  /* the frames listed: from <= index < to */
};

static int put_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct frame_list *l = ctx;
	FILE *out = l->out;
	if (index < l->from || index >= l->to)
		return 0;
	fprintf(out, "<li value=\"%u\" data-function=\"", index);
	ct_xml_text(out, f->function);
	fputs("\" data-file=\"", out);
	ct_xml_text(out, f->file);
	fprintf(out, "\" data-line=\"%u\" data-inlined=\"%d\"><span class=\"addr\">0x%" PRIx64 "</span> <b>",
	        f->line, f->inlined, f->address);
	ct_xml_text(out, f->function);
	fputs("</b>", out);
	if (f->file) {
		fputs(" at <span class=\"loc\">", out);
		ct_xml_text(out, f->file);
		fprintf(out, ":%u</span>", f->line);
	}
	if (f->module && (!l->module || strcmp(l->module, f->module))) {
		fputs(" <span class=\"mod\" title=\"", out);
		ct_xml_text(out, f->module);
		fputs("\">(", out);
		ct_xml_text(out, ct_basename(f->module));
		fputs(")</span>", out);
	}
	l->module = f->module;
	fputs(f->inlined ? " <span class=\"inl\">[inlined]</span></li>\n" : "</li>\n", out);
	return 0;
}

/* The first r->top leaks open, the others folded: long lists stay readable, none is left out. */
/* "144 bytes in 3 allocations (50.0%)": a part of a leak. */
static void put_part(FILE *out, const char *what, const struct ct_site *part, const struct ct_site *whole)
{
	char b[64];
	fprintf(out,
	        "<p class=\"caller\" data-bytes=\"%" PRIu64 "\" data-allocations=\"%" PRIu64
	        "\">%s%s in %" PRIu64 " allocation%s (%.1f%%)%s</p>\n",
	        part->leaked_bytes, part->leaked_allocations, what,
	        ct_fmt_bytes(b, sizeof(b), part->leaked_bytes), part->leaked_allocations,
	        part->leaked_allocations == 1 ? "" : "s", percent(part->leaked_bytes, whole->leaked_bytes),
	        *what ? "" : ":");
}

/* The first r->top leaks open, the others folded: long lists stay readable, none is left out. A
 * leak of several backtraces lists the frames they share, then the largest under their figures. */
static int put_leak(FILE *out, const struct ct_report *r, const struct ct_site *s, size_t rank)
{
	struct ct_callers c;
	char b[64];
	int truncated = 0, rc = ct_report_callers(r, CT_BY_LEAKED, s, &c);
	if (rc < 0)
		return rc;
	struct frame_list l = {out, NULL, 0, (unsigned)c.common};
	fprintf(out, "<details class=\"leak\" data-bytes=\"%" PRIu64 "\" data-allocations=\"%" PRIu64 "\"",
	        s->leaked_bytes, s->leaked_allocations);
	if (s->kind) /* a classified trace's leaks */
		fprintf(out, " data-kind=\"%s\"", ct_kind_name(s->kind));
	fprintf(out, "%s><summary>#%zu: %s %s in %" PRIu64 " allocation%s</summary>\n<ol class=\"bt\">\n",
	        rank < r->top ? " open" : "", rank + 1, ct_fmt_bytes(b, sizeof(b), s->leaked_bytes),
	        ct_kind_label(s->kind), s->leaked_allocations, s->leaked_allocations == 1 ? "" : "s");
	rc = ct_report_frames(r, c.v[0].stack, put_frame, &l, &truncated);
	if (c.n == 1 && truncated)
		fputs("<li class=\"cut\">... (deeper frames were not captured)</li>\n", out);
	fputs("</ol>\n", out);
	if (c.n > 1)
		fprintf(out, "<p class=\"callers\">from %zu backtraces:</p>\n", c.n);
	const char *module = l.module;
	for (size_t i = 0; c.n > 1 && i < c.n && i < r->callers && !rc; i++) {
		put_part(out, "", &c.v[i], s);
		l = (struct frame_list){out, module, (unsigned)c.common, UINT_MAX};
		fputs("<ol class=\"bt\">\n", out);
		rc = ct_report_frames(r, c.v[i].stack, put_frame, &l, &truncated);
		if (truncated)
			fputs("<li class=\"cut\">... (deeper frames were not captured)</li>\n", out);
		fputs("</ol>\n", out);
	}
	if (c.n > 1 && c.n > r->callers) {
		struct ct_site rest;
		char what[64];
		ct_callers_rest(&c, r->callers, &rest);
		snprintf(what, sizeof(what), "and %zu other backtrace%s: ", c.n - r->callers,
		         c.n - r->callers == 1 ? "" : "s");
		put_part(out, what, &rest, s);
	}
	fputs("</details>\n", out);
	free(c.v);
	return rc < 0 ? rc : 0;
}

static void put_rest(FILE *out, const struct ct_site *const *v, size_t n)
{
	uint64_t bytes = 0, allocations = 0;
	char b[64];
	for (size_t i = 0; i < n; i++)
		bytes += v[i]->leaked_bytes, allocations += v[i]->leaked_allocations;
	fprintf(out,
	        "<p id=\"leak-rest\">%zu more leaks: %s in %" PRIu64
	        " allocations (ctrack-analyze --json lists "
	        "them all).</p>\n",
	        n, ct_fmt_bytes(b, sizeof(b), bytes), allocations);
}

/* ---- invalid frees and the fatal signal ---- */

/* A stack as a list of frames, after a caption (none when empty); a word when it is cut or unknown. */
static int put_stack(FILE *out, const struct ct_report *r, const char *caption, uint32_t stack)
{
	struct frame_list l = {out, NULL, 0, UINT_MAX};
	int truncated = 0, rc = 0;
	if (*caption)
		fprintf(out, "<p class=\"caller\">%s</p>\n", caption);
	fputs("<ol class=\"bt\">\n", out);
	if (stack)
		rc = ct_report_frames(r, stack, put_frame, &l, &truncated);
	if (!stack)
		fputs("<li class=\"cut\">(no backtrace: it could not be recorded)</li>\n", out);
	else if (truncated)
		fputs("<li class=\"cut\">... (deeper frames were not captured)</li>\n", out);
	fputs("</ol>\n", out);
	return rc;
}

static int put_invalid_one(FILE *out, const struct ct_report *r, const struct ct_invalid *v)
{
	char b[64], caption[160];
	fprintf(out,
	        "<details class=\"err\" open data-kind=\"%s\" data-call=\"%s\" data-count=\"%" PRIu64
	        "\"><summary>invalid %s() %s: %" PRIu64 " time%s</summary>\n",
	        ct_invalid_name(v->kind), ct_invalid_call(v->call), v->count, ct_invalid_call(v->call),
	        ct_invalid_label(v->kind), v->count, v->count == 1 ? "" : "s");
	int rc = put_stack(out, r, "", v->stack);
	if (!rc && v->freed)
		rc = put_stack(out, r, "freed before at:", v->freed);
	if (!rc && v->block) {
		const struct ct_info *info = &r->m->infos[v->block - 1];
		snprintf(caption, sizeof(caption),
		         "the block, %s, was allocated at:", ct_fmt_bytes(b, sizeof(b), info->size));
		rc = put_stack(out, r, caption, info->stack);
	}
	fputs("</details>\n", out);
	return rc;
}

/* memcheck's "Invalid free()" errors, the most frequent first; nothing when there are none. */
static int put_invalid(FILE *out, const struct ct_report *r)
{
	const struct ct_invalid **v;
	long n = ct_report_invalid(r, &v);
	if (n <= 0)
		return (int)n;
	fprintf(out,
	        "<h2 id=\"invalid-frees\">Invalid frees</h2>\n<div id=\"invalid-list\" data-count=\"%ld\">\n",
	        n);
	int rc = 0;
	for (long i = 0; i < n && i < MAX_LEAKS && !rc; i++)
		rc = put_invalid_one(out, r, v[i]);
	if (n > MAX_LEAKS || r->m->invalid_others)
		fputs(
		    "<p id=\"invalid-rest\">More invalid frees than shown (ctrack-analyze --json lists those "
		    "kept).</p>\n",
		    out);
	fputs("</div>\n", out);
	free(v);
	return rc;
}

/* The signal the program died of, and where the thread that took it was. */
static int put_crash(FILE *out, const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	if (!m->crashed)
		return 0;
	int sig = m->crash_signal < 256 ? (int)m->crash_signal : 0;
	const char *abbrev = sig ? sigabbrev_np(sig) : NULL, *what = sig ? sigdescr_np(sig) : NULL;
	fprintf(out, "<h2 id=\"fatal-signal\">Fatal signal</h2>\n<p data-signal=\"%" PRIu64 "\">",
	        m->crash_signal);
	if (abbrev)
		fprintf(out, "SIG%s (", abbrev);
	ct_xml_text(out, what ? what : "signal");
	fputs(abbrev ? "), taken at:</p>\n" : ", taken at:</p>\n", out);
	return put_stack(out, r, "", m->crash_stack);
}

static int put_leaks(FILE *out, const struct ct_report *r)
{
	const struct ct_site **v;
	long n = ct_report_rank(r, CT_BY_LEAKED, &v);
	if (n < 0)
		return (int)n;
	fprintf(out, "<h2 id=\"leaks\">Leaks</h2>\n<div id=\"leak-list\" data-count=\"%ld\">\n", n);
	if (!n)
		fputs("<p>No leak: every allocation was freed.</p>\n", out);
	int rc = 0;
	for (long i = 0; i < n && i < MAX_LEAKS && !rc; i++)
		rc = put_leak(out, r, v[i], (size_t)i);
	if (n > MAX_LEAKS)
		put_rest(out, v + MAX_LEAKS, (size_t)(n - MAX_LEAKS));
	fputs("</div>\n", out);
	free(v);
	return rc;
}

/* ---- symbol quality ---- */

static void put_quality(FILE *out, const struct ct_quality *q)
{
	fputs(q->advice ? "<tr class=\"bad\"><td>" : "<tr><td>", out);
	ct_xml_text(out, q->path);
	fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td><td>", q->symbols, q->line_tables ? "yes" : "no",
	        q->inline_info ? "yes" : "no");
	ct_xml_text(out, q->debug_file && strcmp(q->debug_file, q->path) ? q->debug_file : "");
	fputs("</td><td>", out);
	ct_xml_text(out, q->advice ? q->advice : "fine");
	fputs("</td></tr>\n", out);
}

static int put_symbols(FILE *out, const struct ct_report *r)
{
	struct ct_quality_list l = {0};
	int rc = ct_diagnose_model(&l, r->m, r->sym);
	size_t bad = 0;
	for (size_t i = 0; i < l.n; i++)
		bad += l.v[i].advice != NULL;
	fprintf(out, "<h2 id=\"symbols\">Symbols</h2>\n<p id=\"symbol-verdict\" data-problems=\"%zu\">", bad);
	if (bad)
		fprintf(out,
		        "%zu of %zu modules lose information: frames there may lack names, lines or inlined "
		        "functions.</p>\n",
		        bad, l.n);
	else
		fprintf(
		    out,
		    "Every module holding a frame (%zu) has symbols, line tables and inline records.</p>\n",
		    l.n);
	fputs("<table class=\"symbols\"><tr><th>module</th><th>symbols</th><th>line tables</th><th>inline "
	      "info</th>"
	      "<th>debug file</th><th>verdict</th></tr>\n",
	      out);
	for (size_t i = 0; i < l.n; i++)
		put_quality(out, &l.v[i]);
	fputs("</table>\n", out);
	ct_quality_list_free(&l);
	return rc;
}

int ct_write_html(FILE *out, const struct ct_report *r)
{
	put_head(out, r);
	put_notes(out, r->m);
	put_summary(out, r);
	int rc = put_invalid(out, r);
	if (!rc)
		rc = put_crash(out, r);
	put_chart(out, r->m);
	if (!rc)
		rc = put_flames(out, r);
	if (!rc)
		rc = put_leaks(out, r);
	if (!rc)
		rc = put_symbols(out, r);
	if (!rc)
		fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", page_script);
	return rc;
}
